"""Noise operators: ``ndd.noise.gaussian``, ``salt_and_pepper`` and ``shot``.

The output has the input's shape and type. Noisy values are computed in float and
converted as the reference does: integer results round halves away from zero and
saturate. The draws come from the call's ``RandomKey`` (see ``random_ops``): a
Tensor input uses ``key.generator()``, sample ``i`` of a Batch
``key.sample_generator(i)``, so results depend only on the seed and the order of
the calls, not on the threads; they are not the reference's numbers, only the
same distributions.

Behaviours of the reference kept on purpose: ``salt_val``/``pepper_val`` are
converted to the input type with a C cast (300 becomes 44 in uint8); the channel
axis of ``salt_and_pepper`` is the layout's ``C`` (first or last) or the last axis
of data without a layout; ``shot`` with ``factor=0`` gives zeros.
"""

import numpy as np

from .._prepare.args import InvalidArgumentError
from .._types import float32, int8, int16, int32, int64, uint8, uint16
from .conversions import c_cast, cast_array
from .gpu_random import GpuNoise
from .random_ops import RNG_ARG, known_values
from .schema import Arg, Input, Operator, batch_samples_of

_NOISE_TYPES = (uint8, int8, uint16, int16, int32, int64, float32)

# Below this many elements per batch, the thread pool costs more than it saves.
_PARALLEL_MIN_ELEMENTS = 1 << 16


def _to_input_type(values, np_dtype):
    if np_dtype.kind == "f":
        return values.astype(np_dtype, copy=False)
    return cast_array(values, np_dtype)


def _noise_operator(name, args, draw, doc, prepare=None, checks=None):
    """An operator adding noise drawn by ``draw(generator, array, args)`` to each sample;
    ``checks`` maps argument names to functions validating one value: they run at the call
    for the values known then, and ``draw`` checks the values computed later."""
    op = Operator(name, inputs=[Input("input")], args=[*args, RNG_ARG], module="ndd.noise", doc=doc)

    def prepare_args(ins, a):
        dtype = ins[0]._dtype
        if not any(dtype is t for t in _NOISE_TYPES):
            names = ", ".join(str(t) for t in _NOISE_TYPES)
            raise InvalidArgumentError(f"{op.qualname}: the input type must be one of {names}, got {dtype}")
        if prepare is not None:
            prepare(op, ins, a)
        for arg_name, check in (checks or {}).items():
            for value in known_values(a[arg_name]):
                check(value)

    def kernel(arrays, a):
        return draw(a["rng"].generator(), arrays[0], a)

    def batch_kernel(inputs, sample_args, batch_size, ctx):
        samples = batch_samples_of(inputs[0], batch_size)
        key = sample_args[0]["rng"]

        def one(i):
            return draw(key.sample_generator(i), samples[i], sample_args[i])

        if sum(s.size for s in samples) >= _PARALLEL_MIN_ELEMENTS:
            return [ctx.thread_pool.map(one, range(batch_size))]
        return [[one(i) for i in range(batch_size)]]

    op.prepare_args = prepare_args
    op.infer_shape = lambda shapes, a: [shapes[0]]
    op.kernel = kernel
    op.batch_kernel = batch_kernel
    return op


def _float_arg(name, default, doc, nonfinite=False):
    return Arg(name, "float", default, per_sample=True, doc=doc, type_doc="float", nonfinite=nonfinite)


# -- gaussian --------------------------------------------------------------------------------


def _check_stddev(value):
    if value < 0:
        raise InvalidArgumentError(f"ndd.noise.gaussian: 'stddev' must not be negative, got {value}")


def _draw_gaussian(generator, arr, args):
    _check_stddev(args["stddev"])
    noise = generator.standard_normal(arr.shape, dtype=np.float32)
    noise *= np.float32(args["stddev"])
    noise += np.float32(args["mean"])
    if arr.dtype.itemsize >= 4 and arr.dtype != np.float32:
        # 32-bit integers and doubles do not fit float32's 24-bit mantissa: the sum is
        # taken in double precision (int32 values above 2**24 changed with stddev 0).
        return _to_input_type(arr.astype(np.float64) + noise, arr.dtype)
    noise += arr
    return _to_input_type(noise, arr.dtype)


GAUSSIAN = _noise_operator(
    "gaussian",
    [
        _float_arg("mean", 0.0, "Mean of the noise."),
        _float_arg("stddev", 1.0, "Standard deviation of the noise."),
    ],
    _draw_gaussian,
    "Add Gaussian noise; integer results are rounded and saturated to the input type.",
    checks={"stddev": _check_stddev},
)


# -- salt and pepper -------------------------------------------------------------------------


def _prepare_salt_and_pepper(op, ins, args):
    layout, ndim = ins[0]._layout, ins[0].ndim
    if layout and "C" not in layout:
        args["_channel"] = None  # no channels (HW, FHW...): every value is a pixel
        return
    channel = layout.find("C") if layout else ndim - 1
    if ndim and channel not in (0, ndim - 1):
        raise InvalidArgumentError(
            f"{op.qualname}: the channel axis 'C' must be the first or the last axis of the layout "
            f"(data without a layout has channels last), got layout {layout!r}"
        )
    args["_channel"] = channel


def _check_probability(name, value):
    if not 0.0 <= value <= 1.0:
        raise InvalidArgumentError(f"ndd.noise.salt_and_pepper: '{name}' must be in [0, 1], got {value}")


_PROBABILITY_CHECKS = {
    "prob": lambda value: _check_probability("prob", value),
    "salt_vs_pepper": lambda value: _check_probability("salt_vs_pepper", value),
}


def _salt_and_pepper_values(args, target):
    """The salt and pepper values in the input type (C casts, as the reference)."""
    floating = target.kind == "f"
    salt = args["salt_val"]
    pepper = args["pepper_val"]
    if salt is None:
        salt = 1.0 if floating else np.iinfo(target).max
    if pepper is None:
        pepper = -1.0 if floating else np.iinfo(target).min
    return c_cast([salt, pepper], target)


def _draw_salt_and_pepper(generator, arr, args):
    _check_probability("prob", args["prob"])
    _check_probability("salt_vs_pepper", args["salt_vs_pepper"])
    salt, pepper = _salt_and_pepper_values(args, arr.dtype)
    shape = arr.shape
    channel = args["_channel"]
    if arr.ndim and not args["per_channel"] and channel is not None:
        # One draw per pixel, shared by its channels.
        shape = shape[1:] if channel == 0 else shape[:-1]
    draws = generator.random(shape, dtype=np.float32).reshape(-1)
    prob = np.float32(args["prob"])
    salted = np.flatnonzero(draws < prob * np.float32(args["salt_vs_pepper"]))
    peppered = np.flatnonzero(draws < prob)
    out = np.array(arr, copy=True, order="C")
    # Only the few drawn pixels (or values) are written: by index, along the flat pixels
    # (a pixel's channels with it).
    if shape == arr.shape:
        flat = out.reshape(-1)
    elif channel == 0:
        flat = out.reshape(arr.shape[0], -1).T
    else:
        flat = out.reshape(-1, arr.shape[-1])
    flat[peppered] = pepper
    flat[salted] = salt  # salt wins where both are drawn (salt's draws are pepper's too)
    return out


SALT_AND_PEPPER = _noise_operator(
    "salt_and_pepper",
    [
        _float_arg(
            "pepper_val",
            None,
            "Value of pepper; -1 for float input, else the smallest value of the input type.",
            nonfinite=True,
        ),
        Arg(
            "per_channel",
            "bool",
            False,
            doc="Draw the noise for each channel separately instead of once per pixel.",
        ),
        _float_arg("prob", 0.05, "Probability that a value becomes salt or pepper."),
        _float_arg(
            "salt_val",
            None,
            "Value of salt; 1 for float input, else the largest value of the input type.",
            nonfinite=True,
        ),
        _float_arg("salt_vs_pepper", 0.5, "Probability that a corrupted value is salt rather than pepper."),
    ],
    _draw_salt_and_pepper,
    "Replace a fraction ``prob`` of the pixels (or values, with ``per_channel``) with salt or pepper values.",
    prepare=_prepare_salt_and_pepper,
    checks=_PROBABILITY_CHECKS,
)


# -- shot --------------------------------------------------------------------------------


def _draw_shot(generator, arr, args):
    factor = args["factor"]
    if factor == 0:
        # x / 0 is infinite or NaN in the reference, which then gives 0.
        return np.zeros_like(arr)
    rate = np.array(arr, np.float64)  # (an array also for a 0-D input)
    rate /= factor
    np.maximum(rate, 0.0, out=rate)
    # From 1e15 events the noise (sqrt(rate)) is below float32's precision: the rate
    # itself is the value (numpy cannot draw beyond about 1e19). NaN and inf stay.
    exact = rate < _SHOT_NOISELESS_FROM
    events = np.asarray(generator.poisson(np.where(exact, rate, 0.0)), np.float32)
    if not exact.all():
        events[~exact] = rate[~exact]
    events *= np.float32(factor)
    return _to_input_type(events, arr.dtype)


_SHOT_NOISELESS_FROM = 1e15


SHOT = _noise_operator(
    "shot",
    [
        _float_arg(
            "factor",
            # The reference's schema says 20, but its kernel runs with 12 when the
            # argument is not given; 12 is what its users get.
            12.0,
            "Value of one event: ``out = poisson(max(0, in / factor)) * factor``; 12 when not given "
            "(as the reference runs, whose documentation says 20).",
        )
    ],
    _draw_shot,
    "Add shot (Poisson) noise: ``out = poisson(max(0, in / factor)) * factor``; integer results are "
    "rounded and saturated to the input type.",
)

# -- GPU kernels -------------------------------------------------------------------------


def _salt_and_pepper_params(args, shape, dtype):
    salt, pepper = _salt_and_pepper_values(args, dtype)
    prob = np.float32(args["prob"])
    channel = args["_channel"]
    channels = 1 if args["per_channel"] or not shape or channel is None else shape[channel]
    return (prob * np.float32(args["salt_vs_pepper"]), prob, salt, pepper, channels, int(channel != 0))


def _check_salt_and_pepper(args):
    _check_probability("prob", args["prob"])
    _check_probability("salt_vs_pepper", args["salt_vs_pepper"])


GAUSSIAN.gpu_kernel = GpuNoise(
    GAUSSIAN,
    "gaussian",
    lambda args, shape, dtype: (args["mean"], args["stddev"]),
    lambda args: _check_stddev(args["stddev"]),
)
SALT_AND_PEPPER.gpu_kernel = GpuNoise(
    SALT_AND_PEPPER, "salt_and_pepper", _salt_and_pepper_params, _check_salt_and_pepper
)
SHOT.gpu_kernel = GpuNoise(SHOT, "shot", lambda args, shape, dtype: (args["factor"],))

OPERATORS = [GAUSSIAN, SALT_AND_PEPPER, SHOT]
