"""Random operators: ``ndd.random.uniform, normal, coin_flip, beta, choice`` and
``ndd.random_crop_generator``.

Each call draws a ``RandomKey`` from its RNG when it is made (the ``rng``
argument, kind ``"rng"``); the kernels derive numpy generators from
``args["rng"]``. A batch whose samples share their shape and arguments is drawn
at once from ``key.generator()``; otherwise each sample draws from
``key.sample_generator(i)``, so that samples may run on any thread. On the GPU
(``device="gpu"``, or a GPU input), the kernels of ``gpu_random`` draw from a
Philox4x32-10 stream per element keyed by the same ``RandomKey``: deterministic
for a given RNG state and advancing the RNG alike, but not the CPU's values (the
reference's GPU values differ from its CPU's too). The reference runs only
uniform, normal and coin_flip on the GPU; beta and choice run there as well here.

Deliberate divergences from the reference, which accepts these and returns
meaningless values or fails when running: an empty ``values``, a ``range``
without exactly two finite numbers ``lo < hi``, ``values`` together with
``range``, a negative ``stddev``, a ``probability`` outside [0, 1], a negative
``random_area`` and a non-positive ``random_aspect_ratio`` are argument errors
at the call. ``choice`` of a scalar with ``batch_size`` draws every sample
independently (the reference repeats one draw). A crop window that
``random_area[0] > 1`` would make larger than the image is clipped to it (the
reference returns it, with an anchor of no meaning).
"""

import math

import numpy as np

from .._cpu.random_windows import choose_windows
from .._prepare.invocation import PendingArg, PerSample
from .._prepare.storage import TensorBase, batch_samples
from .._types import bool as bool_
from .._types import float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64
from .conversions import cast_array
from .gpu_random import GpuChoice, GpuDistribution, GpuUniform
from .schema import Arg, Input, Operator, batch_samples_of

# Below this many output elements per batch, spreading samples over threads costs
# more than it saves.
_PARALLEL_MIN_ELEMENTS = 1 << 16

# The types uniform and normal produce (the reference's set: no float16, bool).
_NUMERIC_DTYPES = (uint8, int8, uint16, int16, uint32, int32, uint64, int64, float32, float64)


# Appended to the operators' documentation.
_GPU_NOTE = (
    "On the GPU the values come from a generator of their own: deterministic for a given "
    "RNG state, with the same distribution, but not the values the CPU draws from that state."
)

RNG_ARG = Arg(
    "rng",
    "rng",
    None,
    doc="The random number generator; the calling thread's default one "
    "(``ndd.random.get_default_rng()``) when omitted. Each call draws 7 values from it.",
    type_doc="ndd.random.RNG",
)

SHAPE_ARG = Arg(
    "shape",
    "int_list",
    None,
    per_sample=True,
    doc="Shape of each sample of the result; by default the shape of ``shape_like``, or a scalar.",
    type_doc="list of int",
)

SHAPE_LIKE = Input(
    "shape_like",
    optional=True,
    doc="A Tensor or Batch whose shape (per sample) the result takes; its data is not used.",
)


def known_values(value):
    """The values of a converted argument that the prepare phase can check: all of
    them, or none when the argument is computed later (they are checked then)."""
    if type(value) is PendingArg:
        return ()
    if type(value) is PerSample:
        return value.values
    return (value,)


def _check_dtype(qualname, dtype, allowed):
    if not any(dtype is t for t in allowed):
        names = ", ".join(str(t) for t in allowed)
        raise TypeError(f"{qualname}: 'dtype' must be one of {names}; got {dtype}")


def _check_shape_args(qualname, like, args):
    """``shape`` and a shape-like input exclude each other; shapes are not negative
    and have one length for all samples."""
    shape = args["shape"]
    if shape is None:
        return
    if like is not None:
        raise ValueError(f"{qualname}: 'shape' cannot be given together with a shape_like input")
    shapes = known_values(shape)
    for s in shapes:
        if any(n < 0 for n in s):
            raise ValueError(f"{qualname}: 'shape' must not have negative extents, got {list(s)}")
    if len({len(s) for s in shapes}) > 1:
        raise ValueError(
            f"{qualname}: 'shape' must have the same length for all samples, got {[list(s) for s in shapes]}"
        )


def _sample_shape(like, args):
    """The output shape of one sample: from ``like`` (an array or a shape) or ``shape``."""
    if like is not None:
        return tuple(like.shape) if isinstance(like, np.ndarray) else tuple(like)
    return tuple(args["shape"] or ())


def _input_sample(data, i):
    """Sample ``i`` of a run-phase input: a list of samples (Batch), an array
    (Tensor, the same for every sample) or None (absent)."""
    return data[i] if isinstance(data, list) else data


def _take(table, picks):
    """``table[picks]`` along the first axis, always an array (numpy gives a scalar
    or a view for a 0-D ``picks``)."""
    return table[picks.reshape(-1)].reshape(picks.shape + table.shape[1:])


def _pick(values, i):
    """Sample ``i`` of values known for every sample, or for all at once (one value)."""
    return values[i] if len(values) > 1 else values[0]


def _check_known(check, names, args):
    """Run ``check`` on the arguments ``names`` of each sample when the prepare phase
    knows them all; otherwise the run phase checks them."""
    values = [known_values(args[name]) for name in names]
    if not names or any(len(v) == 0 for v in values):
        return
    for i in range(max(len(v) for v in values)):
        check({name: _pick(v, i) for name, v in zip(names, values, strict=True)})


def _run_batch(draw, check, inputs, sample_args, batch_size, ctx, sample_shape, data_inputs=()):
    """The batch kernel of a random operator.

    ``draw(generator, inputs, shape, args)`` draws one sample (or, with a leading
    sample dimension in ``shape``, a whole batch); ``check(args)`` validates the
    arguments of a sample; ``sample_shape(inputs, args)`` is a sample's shape
    (without the dimensions ``draw`` adds itself). ``data_inputs`` are the indices
    of the inputs whose data ``draw`` reads (the others only give shapes).
    """
    if batch_size == 0:
        return [[]]
    key = sample_args[0]["rng"]
    per_sample_inputs = [[_input_sample(d, i) for d in inputs] for i in range(batch_size)]
    shapes = [sample_shape(per_sample_inputs[i], sample_args[i]) for i in range(batch_size)]
    # per_sample_args gives every sample the same dict when no argument varies.
    shared_args = sample_args[0] is sample_args[-1]
    for args in sample_args[:1] if shared_args else sample_args:
        check(args)
    if (
        shared_args
        and shapes.count(shapes[0]) == batch_size
        and not any(isinstance(inputs[k], list) for k in data_inputs)
    ):
        # Every sample is drawn alike: one draw for the whole batch, stored densely.
        return [draw(key.generator(), per_sample_inputs[0], (batch_size,) + shapes[0], sample_args[0])]

    def one_sample(i):
        return draw(key.sample_generator(i), per_sample_inputs[i], shapes[i], sample_args[i])

    if sum(math.prod(s) for s in shapes) >= _PARALLEL_MIN_ELEMENTS:
        return [ctx.thread_pool.map(one_sample, range(batch_size))]
    return [[one_sample(i) for i in range(batch_size)]]


def _distribution(
    name,
    *,
    dist_args,
    draw,
    check,
    dtypes,
    default_dtype,
    doc,
    dtype_doc,
    gpu_params,
    gpu_class=GpuDistribution,
):
    """An operator drawing from a distribution: one optional ``shape_like`` input,
    the distribution's arguments ``dist_args`` (checked per sample by ``check``),
    ``dtype``, ``shape`` and ``rng`` (in the reference's keyword order: sorted, rng last).
    On the GPU, kernel ``random_<name>_<type>`` reads ``gpu_params(args)`` for each
    sample (see ``gpu_random``)."""
    qualname = f"ndd.random.{name}"
    dtype_arg = Arg("dtype", "dtype", None, doc=dtype_doc, type_doc="DType")
    args = sorted([*dist_args, dtype_arg, SHAPE_ARG], key=lambda a: a.name) + [RNG_ARG]
    names = [a.name for a in dist_args]

    def prepare_args(ins, args):
        dtype = args["dtype"] or default_dtype
        _check_dtype(qualname, dtype, dtypes)
        args["_dtype"] = dtype.numpy
        _check_shape_args(qualname, ins[0], args)
        _check_known(check, names, args)

    def infer_types(ins, args):
        return [(args["dtype"] or default_dtype, "")]

    def infer_shape(shapes, args):
        return [_sample_shape(shapes[0], args)]

    def kernel(arrays, args):
        check(args)
        return draw(args["rng"].generator(), arrays, _sample_shape(arrays[0], args), args)

    def batch_kernel(inputs, sample_args, batch_size, ctx):
        return _run_batch(
            draw, check, inputs, sample_args, batch_size, ctx, lambda ins, a: _sample_shape(ins[0], a)
        )

    op = Operator(
        name,
        inputs=[SHAPE_LIKE],
        args=args,
        prepare_args=prepare_args,
        infer_types=infer_types,
        infer_shape=infer_shape,
        kernel=kernel,
        batch_kernel=batch_kernel,
        module="ndd.random",
        doc=f"{doc}\n\n{_GPU_NOTE}",
    )
    op.gpu_kernel = gpu_class(op, name, gpu_params, check)
    return op


# -- uniform ------------------------------------------------------------------------


def _check_uniform(args):
    values, value_range = args["values"], args["range"]
    if values is not None:
        if value_range is not None:
            raise ValueError("ndd.random.uniform: 'values' and 'range' cannot both be given")
        if len(values) == 0:
            raise ValueError("ndd.random.uniform: 'values' must not be empty")
        return
    if value_range is None:
        return
    if len(value_range) != 2 or not all(math.isfinite(v) for v in value_range):
        raise ValueError(
            f"ndd.random.uniform: 'range' must be two finite numbers [lo, hi], got {list(value_range)}"
        )
    lo, hi = value_range
    if not lo < hi:
        raise ValueError(f"ndd.random.uniform: 'range' [lo, hi] must have lo < hi, got {list(value_range)}")


def _draw_uniform(generator, inputs, shape, args):
    target = args["_dtype"]
    values = args["values"]
    if values is not None:
        picks = generator.integers(0, len(values), size=shape)
        return cast_array(_take(np.asarray(values, np.float64), picks), target)
    lo, hi = args["range"] or (-1.0, 1.0)
    if target.kind != "f":
        # Integer results round the continuous draws, as the reference does.
        out = generator.random(shape)
        out *= hi - lo
        out += lo
        return cast_array(out, target)
    # float64 draws, rounded to the result type: a float32 result then takes values as fine
    # as float32 is near lo (float32 draws lie on a grid of 2**-24 of the range, and give lo
    # itself once in 2**24 draws).
    out = generator.random(shape)
    out *= hi - lo
    out += lo
    out = out.astype(target, copy=False)
    # Rounding may reach hi; the range is half-open.
    return np.minimum(out, np.nextafter(target.type(hi), target.type(lo)), out=out)


UNIFORM = _distribution(
    "uniform",
    dist_args=[
        Arg(
            "range",
            "float_list",
            None,
            per_sample=True,
            doc="``[lo, hi]``: draw from the half-open interval [lo, hi); ``[-1, 1]`` by default.",
            type_doc="pair of float",
        ),
        Arg(
            "values",
            "float_list",
            None,
            per_sample=True,
            doc="Draw from these values instead, each equally likely (excludes ``range``).",
            type_doc="list of float",
            nonfinite=True,
        ),
    ],
    draw=_draw_uniform,
    check=_check_uniform,
    dtypes=_NUMERIC_DTYPES,
    default_dtype=float32,
    dtype_doc="Element type of the result: float32 (default), float64 or an integer type. "
    "Integer results are the continuous draws rounded to the nearest integer.",
    doc="Random numbers drawn uniformly from a range, or from a set of values.\n\n"
    "Each sample has the shape ``shape``, or that of ``shape_like``, or is a scalar.",
    gpu_params=lambda args: args["range"] or (-1.0, 1.0),
    gpu_class=GpuUniform,
)


# -- normal -------------------------------------------------------------------------


def _check_normal(args):
    stddev = args["stddev"]
    if not stddev >= 0 or not math.isfinite(stddev):
        raise ValueError(f"ndd.random.normal: 'stddev' must be a non-negative finite number, got {stddev}")


def _draw_normal(generator, inputs, shape, args):
    target = args["_dtype"]
    if target == np.float32:
        out = generator.standard_normal(shape, dtype=np.float32)
        out *= args["stddev"]
        out += args["mean"]
        return out
    return cast_array(generator.normal(args["mean"], args["stddev"], shape), target)


NORMAL = _distribution(
    "normal",
    dist_args=[
        Arg("mean", "float", 0.0, per_sample=True, doc="Mean of the distribution."),
        Arg("stddev", "float", 1.0, per_sample=True, doc="Standard deviation (non-negative)."),
    ],
    draw=_draw_normal,
    check=_check_normal,
    dtypes=_NUMERIC_DTYPES,
    default_dtype=float32,
    dtype_doc="Element type of the result: float32 (default), float64 or an integer type "
    "(the draws rounded to the nearest integer, saturated to the type's range).",
    doc="Random numbers from a normal (Gaussian) distribution.\n\n"
    "Each sample has the shape ``shape``, or that of ``shape_like``, or is a scalar.",
    gpu_params=lambda args: (args["mean"], args["stddev"]),
)


# -- coin_flip ----------------------------------------------------------------------


def _check_coin_flip(args):
    probability = args["probability"]
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"ndd.random.coin_flip: 'probability' must be in [0, 1], got {probability}")


def _draw_coin_flip(generator, inputs, shape, args):
    heads = np.less(generator.random(shape), args["probability"], out=np.empty(shape, np.bool_))
    return heads.astype(args["_dtype"], copy=False)


COIN_FLIP = _distribution(
    "coin_flip",
    dist_args=[
        Arg("probability", "float", 0.5, per_sample=True, doc="Probability of a 1, in [0, 1]."),
    ],
    draw=_draw_coin_flip,
    check=_check_coin_flip,
    dtypes=(int32, uint8, bool_),
    default_dtype=int32,
    dtype_doc="Element type of the result: int32 (default), uint8 or bool.",
    doc="Random 0s and 1s (Bernoulli trials): 1 with probability ``probability``.\n\n"
    "Each sample has the shape ``shape``, or that of ``shape_like``, or is a scalar.",
    gpu_params=lambda args: (args["probability"],),
)


# -- beta ---------------------------------------------------------------------------


def _check_beta(args):
    for name in ("alpha", "beta"):
        value = args[name]
        if not value > 0 or not math.isfinite(value):
            raise ValueError(f"ndd.random.beta: '{name}' must be a positive finite number, got {value}")


def _draw_beta(generator, inputs, shape, args):
    return generator.beta(args["alpha"], args["beta"], shape).astype(args["_dtype"], copy=False)


BETA = _distribution(
    "beta",
    dist_args=[
        Arg("alpha", "float", 1.0, per_sample=True, doc="The first shape parameter (positive)."),
        Arg("beta", "float", 1.0, per_sample=True, doc="The second shape parameter (positive)."),
    ],
    draw=_draw_beta,
    check=_check_beta,
    dtypes=(float32, float64),
    default_dtype=float32,
    dtype_doc="Element type of the result: float32 (default) or float64.",
    doc="Random numbers in [0, 1] from a Beta(alpha, beta) distribution.\n\n"
    "Each sample has the shape ``shape``, or that of ``shape_like``, or is a scalar.",
    gpu_params=lambda args: (args["alpha"], args["beta"]),
)


# -- choice -------------------------------------------------------------------------


def _scalar_type_error(dtype):
    return TypeError(
        f"ndd.random.choice: a scalar 'a' must be an integer (the number of choices), got {dtype}"
    )


def _choice_count(a):
    """How many choices the array ``a`` offers: its value when a scalar, else its length."""
    if a.ndim == 0:
        if a.dtype.kind not in "iu":
            raise _scalar_type_error(a.dtype)
        count = int(a)
        if count <= 0:
            raise ValueError(
                f"ndd.random.choice: a scalar 'a' must be positive (the number of choices), got {count}"
            )
        return count
    if a.shape[0] == 0:
        raise ValueError("ndd.random.choice: 'a' must not be empty")
    return a.shape[0]


def _check_p(p, count=None):
    if p is None:
        return
    if count is not None and len(p) != count:
        raise ValueError(
            f"ndd.random.choice: 'p' must have one probability per choice ({count}), got {len(p)}"
        )
    if not all(0.0 <= v <= 1.0 for v in p):
        raise ValueError(f"ndd.random.choice: 'p' must hold probabilities in [0, 1], got {list(p)}")
    if abs(math.fsum(p) - 1.0) > 1e-4:
        raise ValueError(f"ndd.random.choice: 'p' must sum to 1, got {list(p)} (sum {math.fsum(p)})")


def _known_counts(a):
    """The number of choices of each sample of input ``a`` (one for a Tensor) as far
    as the prepare phase knows it: from the shape, or from the data of a scalar
    that is already computed; None where unknown."""
    on_gpu = a._device.device_type == "gpu"  # its data is not the host's to read here
    if isinstance(a, TensorBase):
        shapes, data = [a._shape], None if a._data is None or on_gpu else [a._data]
    else:
        shapes = a._shapes or [None] * a._batch_size
        known = not on_gpu and (a._samples is not None or a._dense is not None)
        data = batch_samples(a) if known else None
    counts = []
    for i, shape in enumerate(shapes):
        if shape is None:
            counts.append(None)
        elif len(shape) > 0:
            if shape[0] == 0:
                raise ValueError("ndd.random.choice: 'a' must not be empty")
            counts.append(shape[0])
        elif not a._dtype.is_integer:
            raise _scalar_type_error(a._dtype)
        else:
            counts.append(None if data is None else _choice_count(data[i]))
    return counts


def _choice_prepare(ins, args):
    a, like = ins
    _check_shape_args("ndd.random.choice", like, args)
    counts = _known_counts(a)
    p_values = known_values(args["p"])
    if counts and p_values:
        for i in range(max(len(counts), len(p_values))):
            _check_p(_pick(p_values, i), _pick(counts, i))


def _sample_ndim(like, shape):
    """Number of dimensions of the samples drawn (before the shape of an element of
    ``a``), or None when the prepare phase does not know it."""
    if like is not None:
        shapes = [like._shape] if isinstance(like, TensorBase) else like._shapes
        return None if not shapes or shapes[0] is None else len(shapes[0])
    if shape is None:
        return 0
    lengths = {len(s) for s in known_values(shape)}
    return lengths.pop() if len(lengths) == 1 else None


def _choice_types(ins, args):
    a, like = ins
    # Samples drawn with a 1-D shape have the dimensions of 'a': they keep its
    # layout, as in the reference (other results have none).
    layout = a._layout if _sample_ndim(like, args["shape"]) == 1 else ""
    return [(a._dtype, layout)]


def _choice_shape(shapes, args):
    a_shape, like = shapes
    return [_sample_shape(like, args) + tuple(a_shape[1:])]


def _draw_choice(generator, inputs, shape, args):
    a = inputs[0]
    count = _choice_count(a)
    p = args["p"]
    _check_p(p, count)
    # ``shape`` may have a leading batch dimension; the rows of 'a' come after it.
    if p is None:
        picks = generator.integers(0, count, size=shape, dtype=a.dtype if a.ndim == 0 else np.int64)
    else:
        cumulative = np.cumsum(np.asarray(p, np.float64))
        # The first choice whose cumulative probability exceeds a uniform draw; the
        # clip guards against rounding in the sum.
        picks = np.asarray(
            np.searchsorted(cumulative, generator.random(shape) * cumulative[-1], side="right")
        )
        np.minimum(picks, count - 1, out=picks)
    if a.ndim == 0:
        return picks.astype(a.dtype, copy=False)
    return _take(a, picks)


def _choice_kernel(arrays, args):
    return _draw_choice(args["rng"].generator(), arrays, _sample_shape(arrays[1], args), args)


def _choice_batch_kernel(inputs, sample_args, batch_size, ctx):
    return _run_batch(
        _draw_choice,
        lambda args: None,
        inputs,
        sample_args,
        batch_size,
        ctx,
        lambda ins, args: _sample_shape(ins[1], args),
        data_inputs=(0,),
    )


CHOICE = Operator(
    "choice",
    inputs=[
        Input(
            "a",
            doc="What to draw from: an integer n (the numbers 0 ... n-1, in its type) or an "
            "array (its elements, or its rows along the first dimension).",
        ),
        SHAPE_LIKE,
    ],
    args=[
        Arg(
            "p",
            "float_list",
            None,
            per_sample=True,
            doc="Probability of each choice (they sum to 1); all equally likely by default.",
            type_doc="list of float",
        ),
        SHAPE_ARG,
        RNG_ARG,
    ],
    prepare_args=_choice_prepare,
    infer_types=_choice_types,
    infer_shape=_choice_shape,
    kernel=_choice_kernel,
    batch_kernel=_choice_batch_kernel,
    module="ndd.random",
    doc="Random choices from a set: ``range(a)`` for an integer ``a``, else the elements of ``a``.\n\n"
    "Each sample of the result has the shape ``shape`` (or that of ``shape_like``, or is a scalar) "
    "followed by the shape of one element of ``a``, and the dtype of ``a``.\n\n" + _GPU_NOTE,
)
CHOICE.gpu_kernel = GpuChoice(CHOICE, _choice_count, _check_p)


# -- random_crop_generator ------------------------------------------------------------

# The default window aspect ratios of random_crop_generator, random_resized_crop and
# decoders.image_random_crop: 3/4 to 4/3 exactly (the reference's schema prints 1.333333,
# but a 4:3 window is in range).
CROP_ASPECT_RATIO_DEFAULT = [0.75, 4 / 3]


def _range_arg(name, values, *, positive, qualname="ndd.random_crop_generator"):
    """A range argument of ``random_crop_generator`` (and of the operators that choose
    windows as it does, named by ``qualname``): one value (a fixed value) or [lo, hi]."""
    if len(values) == 1:
        values = (values[0], values[0])
    if len(values) != 2 or not all(math.isfinite(v) for v in values):
        raise ValueError(f"{qualname}: '{name}' must be one or two finite numbers, got {list(values)}")
    lo, hi = values
    if lo > hi:
        raise ValueError(f"{qualname}: '{name}' [lo, hi] must have lo <= hi, got {list(values)}")
    if (lo <= 0) if positive else (lo < 0):
        kind = "positive" if positive else "non-negative"
        raise ValueError(f"{qualname}: '{name}' must be {kind}, got {list(values)}")
    return lo, hi


def _crop_prepare(ins, args):
    x = ins[0]
    if not x._dtype.is_integer:
        raise TypeError(
            f"ndd.random_crop_generator: the input must be an integer shape (H, W[, C]), got {x._dtype}"
        )
    shapes = [x._shape] if isinstance(x, TensorBase) else (x._shapes or [])
    for shape in shapes:
        if shape is not None and (len(shape) != 1 or shape[0] not in (2, 3)):
            raise ValueError(
                "ndd.random_crop_generator: the input must be a 1-D shape of 2 or 3 values (H, W[, C]), "
                f"got a tensor of shape {tuple(shape)}"
            )
    if args["num_attempts"] < 0:
        raise ValueError(
            f"ndd.random_crop_generator: 'num_attempts' must be non-negative, got {args['num_attempts']}"
        )
    args["_area"] = _range_arg("random_area", args["random_area"], positive=False)
    args["_aspect_ratio"] = _range_arg("random_aspect_ratio", args["random_aspect_ratio"], positive=True)


def _crop_types(ins, args):
    return [(int32, ""), (int32, "")]


def _crop_shape(shapes, args):
    return [(2,), (2,)]


def _crop_windows(generator, extents, args):
    """Anchors and shapes (both (y, x) order, int32, one row per sample) of random
    windows in images of ``extents`` (rows of H, W).

    The reference's rules, in its float32 arithmetic: each attempt draws an area
    fraction uniformly and an aspect ratio (width / height) log-uniformly, rounds
    the window's sides to whole pixels and takes the first window that fits the
    image with its rounded ratio in range. When none does, the window is the
    image brought into the ratio range (the widest ``maxW = trunc(H * hi)`` or
    tallest ``maxH = trunc(W / lo)`` window), both sides scaled down (truncated)
    to stay within ``random_area[1]``. An image too wide (too tall) for any
    window of ``random_area[0]`` gets the ``H x maxW`` (``maxH x W``) window
    without drawing. The anchor is uniform over the positions inside the image.
    """
    if np.any(extents < 0):
        raise ValueError(
            f"ndd.random_crop_generator: the input shape must not be negative, got {extents.tolist()}"
        )
    count = extents.shape[0]
    attempts = args["num_attempts"]
    extents = np.ascontiguousarray(extents, np.int64)
    if count * attempts <= _ATTEMPT_DRAWS:
        area_draw, ratio = _attempt_draws(generator, count, attempts, args)
        return choose_windows(extents, *_bounds(args), area_draw, ratio, generator.random((count, 2)))
    # Too many attempts to draw at once: rounds of attempts for the samples still
    # without a window, the fallback decided in the last one.
    per_round = max(1, _ATTEMPT_DRAWS // count)
    shape = np.empty((count, 2), np.int32)
    todo = np.arange(count)
    while len(todo):
        drawn = min(attempts, per_round)
        attempts -= drawn
        area_draw, ratio = _attempt_draws(generator, len(todo), drawn, args)
        _, shape[todo] = choose_windows(
            extents[todo], *_bounds(args), area_draw, ratio, np.zeros((len(todo), 2)), attempts == 0
        )
        todo = todo[shape[todo, 0] < 0]
    free = np.where((extents == 0).any(axis=1, keepdims=True), 0, extents - shape)
    anchor = np.minimum(np.floor(generator.random((count, 2)) * (free + 1)), free)
    return anchor.astype(np.int32), shape


# How many attempts (over all samples) _crop_windows draws at once.
_ATTEMPT_DRAWS = 1 << 22


def _bounds(args):
    """``random_area`` and ``random_aspect_ratio`` bounds, float32."""
    return (*(np.float32(v) for v in args["_area"]), *(np.float32(v) for v in args["_aspect_ratio"]))


def _attempt_draws(generator, count, attempts, args):
    """Area fractions ([0, 1) draws) and aspect ratios (log-uniform) of ``attempts``
    attempts for each of ``count`` samples (float32, one row per sample)."""
    f32 = np.float32
    if not attempts:
        return np.empty((2, count, 0), f32)
    area_draw, ratio_draw = generator.random((2, count, attempts), dtype=f32)
    ratio_lo, ratio_hi = (f32(v) for v in args["_aspect_ratio"])
    log_lo, log_hi = np.log(ratio_lo), np.log(ratio_hi)
    ratio_draw *= log_hi - log_lo
    ratio_draw += log_lo
    return area_draw, np.exp(ratio_draw)


def _crop_kernel(arrays, args):
    anchor, shape = _crop_windows(args["rng"].generator(), arrays[0][None, :2].astype(np.int64), args)
    return anchor[0], shape[0]


def _crop_batch_kernel(inputs, sample_args, batch_size, ctx):
    if batch_size == 0:
        return [[], []]
    data = inputs[0]
    samples = batch_samples_of(data, batch_size)
    extents = np.stack([s[:2].astype(np.int64) for s in samples])
    anchor, shape = _crop_windows(sample_args[0]["rng"].generator(), extents, sample_args[0])
    return [anchor, shape]


RANDOM_CROP_GENERATOR = Operator(
    "random_crop_generator",
    inputs=[Input("input", doc="The shape of the image to crop: (H, W) or (H, W, C), integers.")],
    args=[
        Arg("num_attempts", "int", 10, doc="How many random windows to try before the fallback window."),
        Arg(
            "random_area",
            "float_list",
            [0.08, 1.0],
            doc="``[lo, hi]``: range of the window's area as a fraction of the image area "
            "(one value: that fraction).",
            type_doc="list of float",
        ),
        Arg(
            "random_aspect_ratio",
            "float_list",
            CROP_ASPECT_RATIO_DEFAULT,
            doc="``[lo, hi]``: range of the window's aspect ratio, width / height, drawn "
            "log-uniformly (one value: that ratio).",
            type_doc="list of float",
        ),
        RNG_ARG,
    ],
    prepare_args=_crop_prepare,
    infer_types=_crop_types,
    infer_shape=_crop_shape,
    kernel=_crop_kernel,
    batch_kernel=_crop_batch_kernel,
    doc="Random crop windows for an image shape, as ``random_resized_crop`` chooses them.\n\n"
    "Returns ``(anchor, shape)``, each two int32 values in (y, x) order: the window's "
    "top-left corner and its (height, width). A window's area fraction is drawn from "
    "``random_area`` and its aspect ratio from ``random_aspect_ratio``, and the window, "
    "rounded to whole pixels, must fit the image with its ratio in range. After "
    "``num_attempts`` windows that do not, the window is the image brought into the ratio "
    "range, scaled down to at most ``random_area[1]`` of its area. Feed the results to "
    "``slice`` or ``crop``.",
)


OPERATORS = [UNIFORM, NORMAL, COIN_FLIP, BETA, CHOICE, RANDOM_CROP_GENERATOR]
