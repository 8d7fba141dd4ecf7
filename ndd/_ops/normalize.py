"""``ndd.normalize``: ``out = scale * (in - mean) / stddev + shift``.

The mean and the standard deviation are computed over the reduced axes of each
sample (or of the whole batch with ``batch=True``) unless given. The statistics
are accumulated in float64 and the output computed in float32; integer results
round halves away from zero and saturate. As in the reference, ``epsilon`` is
added to the variance (to the square of a given ``stddev`` too), and a computed
zero variance plus ``epsilon`` gives ``shift`` (``ddof`` >= the number of reduced
elements makes the variance 0; a negative total gives NaN), as
does a given zero ``stddev`` (the reference's per-element one; its scalar 0 gives
infinities). A constant sample has an exact mean here,
so it gives ``shift``; the reference's float32 mean can be one unit in the last
place off, and some constant samples (60 threes) give ``shift - scale`` there.
"""

import numpy as np

from .._cpu.moments import normalize_per_channel, normalize_values, sample_sum, squared_deviations
from .._prepare.args import InvalidArgumentError
from .._prepare.invocation import PendingArg, PerSample
from .._types import float32, int8, int16, int32, uint8, uint16
from .conversions import cast_array
from .gpu_normalize import GpuNormalize
from .reductions import over_all_but_channels, reduce_over
from .schema import Arg, Input, Operator, batch_samples_of

_INPUT_TYPES = (uint8, int8, uint16, int16, int32, float32)
_OUTPUT_TYPES = (uint8, int8, uint16, int16, int32, float32)
_QUALNAME = "ndd.normalize"


def _check_type(what, dtype, allowed):
    if not any(dtype is t for t in allowed):
        names = ", ".join(str(t) for t in allowed)
        raise InvalidArgumentError(f"{_QUALNAME}: {what} must be one of {names}, got {dtype}")


def _prepare(ins, args):
    x = ins[0]
    _check_type("the input type", x._dtype, _INPUT_TYPES)
    _check_type("'dtype'", args["dtype"], _OUTPUT_TYPES)
    if args["axes"] is not None and args["axis_names"] is not None:
        raise InvalidArgumentError(f"{_QUALNAME}: 'axes' and 'axis_names' cannot both be given")
    ndim = x.ndim
    axes = None
    if args["axis_names"] is not None:
        layout = x._layout
        missing = [a for a in args["axis_names"] if a not in layout]
        if missing:
            raise InvalidArgumentError(
                f"{_QUALNAME}: 'axis_names' {args['axis_names']!r} names axes not in the input layout {layout!r}"
            )
        axes = tuple(layout.index(a) for a in args["axis_names"])
    elif args["axes"] is not None:
        axes = tuple(args["axes"])
        for a in axes:
            if not 0 <= a < ndim:
                raise InvalidArgumentError(
                    f"{_QUALNAME}: 'axes' must be in [0, {ndim}) for {ndim}-D input, got {list(axes)}"
                )
    if axes is not None and not axes:
        raise InvalidArgumentError(f"{_QUALNAME}: 'axes' must name at least one axis")
    if axes is not None and len(set(axes)) != len(axes):
        # The reference gives neither reduction for a repeated axis, but numbers of no meaning.
        name = "axis_names" if args["axis_names"] is not None else "axes"
        raise InvalidArgumentError(f"{_QUALNAME}: '{name}' names an axis twice, got {args[name]!r}")
    args["_axes"] = axes
    if args["batch"]:
        for name in ("mean", "stddev"):
            value = args[name]
            if type(value) is PerSample or type(value) is PendingArg:
                raise InvalidArgumentError(
                    f"{_QUALNAME}: '{name}' cannot vary per sample with batch=True (one value for the batch)"
                )
            if value is not None and np.ndim(value) != 0:
                raise InvalidArgumentError(f"{_QUALNAME}: '{name}' must be a scalar with batch=True")


def _types(ins, args):
    return [(args["dtype"], ins[0]._layout)]


# Input types of the compiled whole-sample and per-channel paths.
_WHOLE_SAMPLE_TYPES = (np.dtype(np.uint8), np.dtype(np.float32))


def _reduced_axes_of(shape, args):
    """The reduced axes of a sample of ``shape``: given, or where a given mean/stddev
    has extent 1, or all of them."""
    if args["_axes"] is not None:
        return args["_axes"]
    for name in ("mean", "stddev"):
        param = args[name]
        if param is not None and np.ndim(param) > 0:
            return tuple(i for i, n in enumerate(np.shape(param)) if n == 1)
    return tuple(range(len(shape)))


def _reduced_axes(arr, args):
    return _reduced_axes_of(arr.shape, args)


def _param_of(shape, args, name):
    """A given mean/stddev as float64, checked against a sample of ``shape``; None if absent."""
    value = args[name]
    if value is None:
        return None
    value = np.asarray(value, dtype=np.float64)
    shape = tuple(shape)
    if value.ndim:
        if value.ndim != len(shape) or any(p not in (1, n) for p, n in zip(value.shape, shape, strict=True)):
            raise InvalidArgumentError(
                f"{_QUALNAME}: '{name}' of shape {value.shape} must have the input's {len(shape)} dimensions, "
                f"each of extent 1 or the input's {shape}"
            )
    return value


def _param(arr, args, name):
    return _param_of(arr.shape, args, name)


def _inverse_stddev(squares, dof, epsilon):
    """``1 / sqrt(variance + epsilon)`` of the variance ``squares / dof``, as the reference
    computes it: no degrees of freedom make the variance 0, a total of 0 gives 0 (the
    output is ``shift``), and a negative one (a negative ``epsilon``) gives NaN."""
    variance = squares / dof if dof > 0 else np.zeros_like(squares)
    total = variance + epsilon
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total == 0, 0.0, 1.0 / np.sqrt(total))


def _finish(x, mean, inv, args):
    factor = (inv * args["scale"]).astype(np.float32)
    out = x.astype(np.float32)
    out -= np.asarray(mean, np.float32)
    out *= factor
    out += np.float32(args["shift"])
    target = args["dtype"].numpy
    return out if target == np.float32 else cast_array(out, target)


def _stats(samples, axes, args, mean):
    """Mean (if not given) and inverse standard deviation over ``axes`` of all
    ``samples`` together."""
    count = sum(int(np.prod([s.shape[a] for a in axes])) for s in samples)
    if mean is None:
        total = sum(reduce_over(np.sum, s, axes, dtype=np.float64) for s in samples)
        mean = total / max(count, 1)
    stddev = args["_stddev"]
    if stddev is not None:
        return mean, _given_inverse(stddev, args["epsilon"])
    squares = sum(reduce_over(np.sum, np.square(s - mean), axes) for s in samples)
    return mean, _inverse_stddev(squares, count - args["ddof"], args["epsilon"])


def _given_inverse(stddev, epsilon):
    """1 / stddev of a given ``stddev``; a zero deviation scales by 0, as the reference
    does for a per-element ``stddev`` and as a computed zero deviation does here (the
    reference gives a scalar 0 infinities)."""
    if epsilon:
        return 1.0 / np.sqrt(np.square(stddev) + epsilon)
    stddev = np.asarray(stddev, np.float64)
    with np.errstate(divide="ignore"):
        return np.where(stddev == 0, 0.0, 1.0 / stddev)


def _whole_sample(arr, args):
    """normalize of a whole uint8 or float32 sample into float32 in compiled passes (the
    common case: per-sample mean and standard deviation); the same operations, in float32,
    as the general path below, with the sums taken in another order."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    count = flat.size
    mean32 = np.float32(sample_sum(flat) / max(count, 1))
    squares = squared_deviations(flat, mean32)
    inv = _inverse_stddev(np.float64(squares), count - args["ddof"], args["epsilon"])
    factor = np.float32(inv * args["scale"])
    out = np.empty(arr.shape, np.float32)
    normalize_values(flat, out.reshape(-1), mean32, factor, np.float32(args["shift"]))
    return out


def _per_channel(arr, args):
    """normalize of a uint8 or float32 sample over all its axes but the last (one mean
    and deviation per channel of HWC data) into float32 in compiled passes; the same
    operations as the general path below, with the sums taken in another order."""
    out = np.empty(arr.shape, np.float32)
    normalize_per_channel(
        np.ascontiguousarray(arr).reshape(-1),
        out.reshape(-1),
        arr.shape[-1],
        args["ddof"],
        args["epsilon"],
        args["scale"],
        np.float32(args["shift"]),
    )
    return out


def _kernel(arrays, args):
    arr = arrays[0]
    axes = _reduced_axes(arr, args)
    mean = _param(arr, args, "mean")
    stddev = _param(arr, args, "stddev")
    if (
        mean is None
        and stddev is None
        and arr.dtype in _WHOLE_SAMPLE_TYPES
        and args["dtype"].numpy == np.float32
        and arr.size
    ):
        if len(axes) == arr.ndim:
            return _whole_sample(arr, args)
        if over_all_but_channels(arr.shape, axes):
            return _per_channel(arr, args)
    count = int(np.prod([arr.shape[a] for a in axes]))
    if mean is None:
        mean = reduce_over(np.sum, arr, axes, dtype=np.float64) / max(count, 1)
    # One float32 array serves for the deviations and becomes the result.
    out = arr.astype(np.float32)
    rows, centre = _as_rows(out, mean)
    rows -= centre
    if stddev is not None:
        inv = _given_inverse(stddev, args["epsilon"])
    else:
        squares = reduce_over(np.sum, np.square(out), axes, dtype=np.float64)
        inv = _inverse_stddev(squares, count - args["ddof"], args["epsilon"])
    rows, factor = _as_rows(out, inv * args["scale"])
    rows *= factor
    out += np.float32(args["shift"])
    target = args["dtype"].numpy
    return out if target == np.float32 else cast_array(out, target)


def _as_rows(values, param):
    """``values`` (C-contiguous) and ``param`` (float32, broadcast against it) as arrays
    that broadcast alike: a parameter varying only along a few innermost axes (one
    value per channel) is tiled along a 2-D view's rows, which numpy broadcasts about
    20 times faster than rows of 3."""
    param = np.asarray(param, np.float32)
    shape = values.shape
    if param.ndim == 0 or param.ndim != values.ndim or param.shape == shape or values.size == 0:
        return values, param
    inner = values.ndim
    while inner > 0 and param.shape[inner - 1] == shape[inner - 1]:
        inner -= 1
    if inner == 0 or any(n != 1 for n in param.shape[:inner]) or param.size > 64:
        return values, param
    return values.reshape(-1, shape[inner - 1] * param.size), np.tile(param.reshape(-1), shape[inner - 1])


def _batch_kernel(inputs, sample_args, batch_size, ctx):
    """Statistics over the whole batch (``batch=True``); per-sample statistics are the
    per-sample kernel's (declined here)."""
    args = sample_args[0]
    if not args["batch"]:
        return None
    samples = batch_samples_of(inputs[0], batch_size)
    if batch_size == 0:
        return [[]]
    axes = _reduced_axes(samples[0], args)
    kept = {tuple(n for i, n in enumerate(s.shape) if i not in axes) for s in samples}
    if len(kept) > 1 or len({s.ndim for s in samples}) > 1:
        raise InvalidArgumentError(
            f"{_QUALNAME}: with batch=True the samples must have equal extents in the axes not reduced, "
            f"got shapes {[s.shape for s in samples]}"
        )
    mean = _param(samples[0], args, "mean")
    args = dict(args, _stddev=_param(samples[0], args, "stddev"))
    mean, inv = _stats(samples, axes, args, mean)
    return [[_finish(s, mean, inv, args) for s in samples]]


def _shape(shapes, args):
    return [shapes[0]]


NORMALIZE = Operator(
    "normalize",
    inputs=[Input("input")],
    args=[
        Arg(
            "axes",
            "int_list",
            None,
            doc="Axes to reduce when computing the statistics; all by default.",
            type_doc="list of int",
        ),
        Arg(
            "axis_names",
            "layout",
            None,
            doc="Axes to reduce, by their names in the input layout.",
            type_doc="str",
        ),
        Arg(
            "batch", "bool", False, doc="Compute the statistics over the whole batch rather than per sample."
        ),
        Arg("ddof", "int", 0, doc="Delta degrees of freedom: the variance divides by ``N - ddof``."),
        Arg(
            "dtype",
            "dtype",
            float32,
            doc="Output type; integer results round and saturate.",
            type_doc="DType",
        ),
        Arg("epsilon", "float", 0.0, doc="Added to the variance before the square root."),
        Arg(
            "mean",
            "array",
            None,
            per_sample=True,
            doc="Mean to subtract: a scalar or an array broadcastable to the sample (extent 1 on reduced "
            "axes); computed when omitted.",
            type_doc="float or array",
        ),
        Arg("scale", "float", 1.0, doc="Multiplier of the normalized values."),
        Arg("shift", "float", 0.0, doc="Added to the scaled values."),
        Arg(
            "stddev",
            "array",
            None,
            per_sample=True,
            doc="Standard deviation to divide by: a scalar or a broadcastable array; computed when omitted.",
            type_doc="float or array",
        ),
    ],
    prepare_args=_prepare,
    infer_types=_types,
    infer_shape=_shape,
    kernel=_kernel,
    batch_kernel=_batch_kernel,
    doc="Normalize data: ``out = scale * (in - mean) / stddev + shift``, with the mean and standard "
    "deviation computed over ``axes`` (per sample, or over the batch) unless given.\n\n"
    "A zero deviation (computed, or given, or a variance plus ``epsilon`` of 0 or less) gives "
    "``shift``: the reference does so for a computed or per-element one, and gives infinities and "
    "NaN for a scalar ``stddev=0``.",
)

NORMALIZE.gpu_kernel = GpuNormalize(NORMALIZE, _reduced_axes_of, _param_of, _given_inverse)

OPERATORS = [NORMALIZE]
