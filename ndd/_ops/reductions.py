"""Reductions over the axes of each sample (``ndd.reductions``): sum, mean,
mean_square, rms, min, max, std_dev and variance.

Supported inputs are the integer types and float32, as in the reference. Results
are computed in a wide type (float64, or exact integers) and converted once, so
they do not suffer from the overflow and float32 rounding of the reference's
accumulators; every such difference is listed in the tests.
"""

import functools
import math

import numpy as np

from .._cpu.moments import channel_extremes, channel_squared_deviations, channel_sums
from .._types import DType, float32, int8, int16, int32, int64, uint8, uint16, uint32, uint64
from .gpu_reductions import GpuReduction, spread_over_nothing
from .schema import Arg, Input, Operator

_MODULE = "ndd.reductions"
_SUPPORTED = (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32)
_SUPPORTED_NAMES = ", ".join(str(t) for t in _SUPPORTED)


# ----------------------------------------------------------------------------
# Output types: for each operator, the allowed output types of an input type,
# the default first.


def _wide(dt):
    return int64 if dt.kind is DType.Kind.signed else uint64


def _sum_outputs(dt):
    if dt.is_float:
        return (float32,)
    wide = _wide(dt)
    return (wide,) if dt == wide else (wide, dt, float32)


def _mean_outputs(dt):
    return (float32,) if dt.is_float else (float32, dt)


def _mean_square_outputs(dt):
    return (float32,) if dt.is_float else (float32, _wide(dt))


def _same_output(dt):
    return (dt,)


def _check_input_type(qualname, dt, what="input"):
    if dt not in _SUPPORTED:
        raise TypeError(f"{qualname}: {what} of type {dt} is not supported (supported: {_SUPPORTED_NAMES})")


def _output_type(qualname, dt, requested, outputs):
    allowed = outputs(dt)
    if requested is None:
        return allowed[0]
    if requested not in allowed:
        names = ", ".join(str(t) for t in allowed)
        raise TypeError(
            f"{qualname}: 'dtype' {requested} is not supported for {dt} input (expected one of {names})"
        )
    return requested


# ----------------------------------------------------------------------------
# Axes and shapes


def _reduced_axes(qualname, axes, ndim):
    """The sorted, non-negative axes to reduce; ``None`` means all of them."""
    if axes is None:
        return tuple(range(ndim))
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise IndexError(
                f"{qualname}: 'axes' value {a} is out of range for a {ndim}-D input (expected {-ndim}..{ndim - 1})"
            )
        a %= ndim
        if a in out:
            raise ValueError(f"{qualname}: 'axes' names axis {a} more than once")
        out.append(a)
    return tuple(sorted(out))


def _kept_shape(shape, axes):
    return tuple(1 if d in axes else n for d, n in enumerate(shape))


def _output_shape(shape, axes, keep_dims):
    if keep_dims:
        return _kept_shape(shape, axes)
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _resolve_axes(qualname, ins, args):
    """prepare_args of the reductions: store the axes to reduce in ``args["_axes"]``,
    ``axes`` itself or the indices of ``axis_names`` in the input layout (which
    only the prepare phase sees). The layout and shape rules and the kernel then
    work with indices alone."""
    names = args["axis_names"]
    if names is None:
        args["_axes"] = args["axes"]
        return
    if args["axes"] is not None:
        raise ValueError(f"{qualname}: 'axes' and 'axis_names' are mutually exclusive")
    layout = ins[0]._layout
    axes = []
    for name in names:
        if name not in layout:
            why = f"which is not in the input layout {layout!r}" if layout else "but the input has no layout"
            raise ValueError(f"{qualname}: 'axis_names' has {name!r}, {why}")
        if names.count(name) > 1:
            raise ValueError(f"{qualname}: 'axis_names' has {name!r} more than once")
        axes.append(layout.index(name))
    args["_axes"] = tuple(axes)


def _output_layout(qualname, layout, args):
    if not layout or args["keep_dims"]:
        return layout
    axes = _reduced_axes(qualname, args["_axes"], len(layout))
    return "".join(c for d, c in enumerate(layout) if d not in axes)


# ----------------------------------------------------------------------------
# Numerics. Every function below returns an array with the reduced axes kept
# (extent 1); the kernel reshapes it to the output shape.


# numpy reduces slowly over outer axes into a few kept inner elements (per-channel
# statistics of HWC images: 7 to 20 times slower than reducing each channel alone).
_FEW_KEPT = 64
_SMALL = 4096


def reduce_over(reduce, values, axes, **kwargs):
    """``reduce(values, axis=axes, keepdims=True, **kwargs)`` (``reduce``: ``np.sum``
    or a ufunc's ``reduce``); when the innermost axis is kept with few elements, one
    strided reduction per kept element."""
    kept = [d for d in range(values.ndim) if d not in axes]
    kept_shape = tuple(values.shape[d] for d in kept)
    if (
        not axes
        or not kept
        or kept[-1] != values.ndim - 1
        or values.size < _SMALL
        or math.prod(kept_shape) > _FEW_KEPT
    ):
        return reduce(values, axis=axes, keepdims=True, **kwargs)
    moved = values.transpose(kept + [d for d in range(values.ndim) if d in axes])
    parts = [np.asarray(reduce(moved[index], axis=None, **kwargs)) for index in np.ndindex(*kept_shape)]
    return np.stack(parts).reshape(_kept_shape(values.shape, axes))


def _to_float32(values):
    with np.errstate(over="ignore"):
        return np.asarray(values).astype(np.float32)


# Types of the compiled per-channel sums (one sum per element of the last axis).
_CHANNEL_TYPES = (np.dtype(np.uint8), np.dtype(np.float32))


def over_all_but_channels(shape, axes):
    """Whether ``axes`` are all the axes of ``shape`` but a last one of 1 to 64 elements
    (the channels of HWC images): what the compiled per-channel passes reduce over."""
    return len(shape) >= 2 and 0 < shape[-1] <= _FEW_KEPT and sorted(axes) == list(range(len(shape) - 1))


def _per_channel(values, axes):
    """Whether the compiled per-channel passes take C-contiguous ``values`` reduced over
    ``axes``: ``over_all_but_channels``, in a type they take and large enough to pay."""
    return (
        values.dtype in _CHANNEL_TYPES
        and values.size >= _SMALL
        and values.flags.c_contiguous
        and over_all_but_channels(values.shape, axes)
    )


def _float_sum(values, axes):
    if _per_channel(values, axes):
        sums = channel_sums(values.reshape(-1), values.shape[-1])
        return sums.reshape(_kept_shape(values.shape, axes))
    return reduce_over(np.sum, values, axes, dtype=np.float64)


def _float_mean(values, axes, n):
    with np.errstate(invalid="ignore", divide="ignore"):
        return _float_sum(values, axes) / n


def _integer_total(x, axes, n, power):
    """The exact sum of ``x ** power`` over ``axes``: in int64/uint64 when that
    cannot overflow (judged from the type's range, then from the data), else in
    Python integers."""
    acc = np.dtype(np.int64 if x.dtype.kind == "i" else np.uint64)
    limit = 2**63 if acc.kind == "i" else 2**64
    info = np.iinfo(x.dtype)
    bound = max(-int(info.min), int(info.max))
    if x.size and bound**power * n >= limit:
        bound = max(-int(x.min()), int(x.max()))
    if bound**power * n >= limit:
        x = x.astype(object)
        acc = None
    values = x if power == 1 else np.square(x, dtype=acc)
    return reduce_over(np.sum, values, axes, dtype=acc)


def _truncated_quotient(total, n):
    """``total / n`` rounded toward zero (as the reference's integer results), exact."""
    total = total.astype(object)
    if n == 0:
        return total * 0
    quotient = np.abs(total) // n
    return np.where(total < 0, -quotient, quotient)


def _saturate(values, out):
    info = np.iinfo(out)
    return np.clip(values, int(info.min), int(info.max)).astype(out)


def _sum(x, axes, n, out):
    if out.kind == "f":
        return _to_float32(_float_sum(x, axes))
    # Like numpy's sum with an integer dtype: wraps around when the total does not fit.
    acc = np.int64 if x.dtype.kind == "i" else np.uint64
    if x.dtype == np.uint8 and _per_channel(x, axes):
        # The compiled float64 sums of uint8 channels are exact (below 2**53 for any array that fits
        # in memory).
        return _float_sum(x, axes).astype(acc).astype(out)
    return reduce_over(np.sum, x, axes, dtype=acc).astype(out)


def _mean(x, axes, n, out):
    if out.kind == "f":
        return _to_float32(_float_mean(x, axes, n))
    return _truncated_quotient(_integer_total(x, axes, n, 1), n).astype(out)


def _float_mean_square(x, axes, n):
    with np.errstate(invalid="ignore", divide="ignore"):
        return _float_sum(np.square(x, dtype=np.float64), axes) / n


def _mean_square(x, axes, n, out):
    if out.kind == "f":
        return _to_float32(_float_mean_square(x, axes, n))
    return _saturate(_truncated_quotient(_integer_total(x, axes, n, 2), n), out)


_isqrt = np.frompyfunc(math.isqrt, 1, 1)


def _rms(x, axes, n, out):
    if out.kind == "f":
        return _to_float32(np.sqrt(_float_mean_square(x, axes, n)))
    # floor(sqrt(floor(s / n))) == floor(sqrt(s / n)): exact integer arithmetic throughout.
    return _saturate(_isqrt(_truncated_quotient(_integer_total(x, axes, n, 2), n)), out)


def _extreme(x, axes, n, *, largest):
    if n == 0:
        # The reference gives the identity of the reduction: the type's limits
        # (for float32 the largest finite values, not infinities).
        info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
        return np.full(_kept_shape(x.shape, axes), info.min if largest else info.max, x.dtype)
    if _per_channel(x, axes):
        return channel_extremes(x.reshape(-1), x.shape[-1], largest).reshape(_kept_shape(x.shape, axes))
    if x.dtype.kind == "f":
        # NaN is skipped (as by the reference); only an all-NaN slice gives NaN.
        reduce = np.fmax.reduce if largest else np.fmin.reduce
    else:
        reduce = np.maximum.reduce if largest else np.minimum.reduce
    return np.asarray(reduce_over(reduce, x, axes))


def _min(x, axes, n, out):
    return _extreme(x, axes, n, largest=False)


def _max(x, axes, n, out):
    return _extreme(x, axes, n, largest=True)


# ----------------------------------------------------------------------------
# Operators taking one input: sum, mean, mean_square, rms, min, max

_AXES_DOC = "Axes to reduce; negative values count from the end. All axes when omitted."
_AXIS_NAMES_DOC = "Axes to reduce, named by letters of the input layout. Excludes ``axes``."
_KEEP_DIMS_DOC = "Keep the reduced axes with extent 1 (and the input layout)."


def _common_args(extra):
    return [
        Arg("axes", "int_list", None, doc=_AXES_DOC, type_doc="int or list of int"),
        Arg("axis_names", "layout", None, doc=_AXIS_NAMES_DOC, type_doc="str"),
        *extra,
        Arg("keep_dims", "bool", False, doc=_KEEP_DIMS_DOC, type_doc="bool"),
    ]


def _reduction(name, compute, outputs, *, dtype_doc=None, doc):
    qualname = f"{_MODULE}.{name}"
    extra = []
    if dtype_doc is not None:
        extra.append(Arg("dtype", "dtype", None, doc=dtype_doc, type_doc="DType"))

    def infer_types(ins, args):
        x = ins[0]
        _check_input_type(qualname, x._dtype)
        out = _output_type(qualname, x._dtype, args.get("dtype"), outputs)
        return [(out, _output_layout(qualname, x._layout, args))]

    def infer_shape(shapes, args):
        shape = shapes[0]
        return [_output_shape(shape, _reduced_axes(qualname, args["_axes"], len(shape)), args["keep_dims"])]

    def kernel(arrays, args):
        x = arrays[0]
        axes = _reduced_axes(qualname, args["_axes"], x.ndim)
        out = _output_type(qualname, DType.from_fw_type(x.dtype), args.get("dtype"), outputs).numpy
        n = math.prod(x.shape[d] for d in axes)
        # numpy gives a scalar, not an array, when a 0-D input is "reduced" over no axes.
        result = np.asarray(compute(x, axes, n, out))
        return result.reshape(_output_shape(x.shape, axes, args["keep_dims"]))

    op = Operator(
        name,
        inputs=[Input("input", doc="Data to reduce.")],
        args=_common_args(extra),
        prepare_args=functools.partial(_resolve_axes, qualname),
        infer_types=infer_types,
        infer_shape=infer_shape,
        kernel=kernel,
        module=_MODULE,
        doc=doc,
    )
    op.gpu_kernel = GpuReduction(
        op,
        functools.partial(_reduced_axes, qualname),
        lambda dt, requested: _output_type(qualname, dt, requested, outputs),
    )
    return op


_INT_RESULT_DOC = "An integer result is rounded toward zero."

SUM = _reduction(
    "sum",
    _sum,
    _sum_outputs,
    dtype_doc="Output type: int64 (signed input), uint64 (unsigned input) or float32 (float32 input) by "
    "default; the input type itself, or float32 for integers narrower than 64 bits, may be asked for. "
    "An integer sum wraps around when it does not fit.",
    doc="Sum of the elements over the given axes.",
)
MEAN = _reduction(
    "mean",
    _mean,
    _mean_outputs,
    dtype_doc=f"Output type: float32 by default; an integer input may ask for its own type. {_INT_RESULT_DOC}",
    doc="Arithmetic mean over the given axes (NaN for an empty float reduction).",
)
MEAN_SQUARE = _reduction(
    "mean_square",
    _mean_square,
    _mean_square_outputs,
    dtype_doc="Output type: float32 by default; an integer input may ask for int64 (signed) or uint64 "
    f"(unsigned). {_INT_RESULT_DOC}",
    doc="Mean of the squared elements over the given axes.",
)
RMS = _reduction(
    "rms",
    _rms,
    _mean_outputs,
    dtype_doc=f"Output type: float32 by default; an integer input may ask for its own type. {_INT_RESULT_DOC}",
    doc="Root mean square of the elements over the given axes.",
)
MIN = _reduction(
    "min",
    _min,
    _same_output,
    doc="Smallest element over the given axes, in the input type.\n\n"
    "NaN values are skipped. An empty reduction gives the largest value of the type.",
)
MAX = _reduction(
    "max",
    _max,
    _same_output,
    doc="Largest element over the given axes, in the input type.\n\n"
    "NaN values are skipped. An empty reduction gives the lowest value of the type.",
)


# ----------------------------------------------------------------------------
# std_dev and variance: data and a precomputed mean


def _check_mean_shape(qualname, mean_shape, data_shape, axes):
    """The mean has one element per output element: the reduced shape, with
    extent-1 dimensions added or left out (so the keep_dims shape is accepted)."""
    reduced = _output_shape(data_shape, axes, False)
    if tuple(n for n in mean_shape if n != 1) != tuple(n for n in reduced if n != 1):
        raise ValueError(
            f"{qualname}: input 'mean' must have shape {reduced} or {_kept_shape(data_shape, axes)} "
            f"for this data and these axes, got {tuple(mean_shape)}"
        )


def _squared_deviations(x, mean, axes):
    """The float64 sum of ``(x - mean) ** 2`` over ``axes``, the reduced axes kept. Over every
    axis, or every axis but a few channels, of large uint8 or float32 data: one compiled pass,
    without the float64 copies."""
    if x.dtype in _CHANNEL_TYPES and x.size >= _SMALL and x.flags.c_contiguous:
        channels = x.shape[-1] if over_all_but_channels(x.shape, axes) else 1 if len(axes) == x.ndim else 0
        if channels:
            sums = channel_squared_deviations(x.reshape(-1), mean.reshape(-1).astype(np.float64))
            return sums.reshape(_kept_shape(x.shape, axes))
    deviation = x.astype(np.float64) - mean.reshape(_kept_shape(x.shape, axes)).astype(np.float64)
    return _float_sum(np.square(deviation), axes)


def _variance(x, mean, axes, n, ddof):
    # n - ddof may be zero or negative: the result is then inf, NaN or negative, as in the reference.
    with np.errstate(invalid="ignore", divide="ignore"):
        return _squared_deviations(x, mean, axes) / (n - ddof)


def _spread(name, finish, doc):
    qualname = f"{_MODULE}.{name}"

    def infer_types(ins, args):
        data, mean = ins
        _check_input_type(qualname, data._dtype, "input 'data'")
        if mean._dtype != float32:
            raise TypeError(f"{qualname}: input 'mean' must be f32, got {mean._dtype}")
        return [(float32, _output_layout(qualname, data._layout, args))]

    def infer_shape(shapes, args):
        shape, mean_shape = shapes
        axes = _reduced_axes(qualname, args["_axes"], len(shape))
        _check_mean_shape(qualname, mean_shape, shape, axes)
        return [_output_shape(shape, axes, args["keep_dims"])]

    def kernel(arrays, args):
        x, mean = arrays
        axes = _reduced_axes(qualname, args["_axes"], x.ndim)
        _check_mean_shape(qualname, mean.shape, x.shape, axes)
        if spread_over_nothing(args["_axes"]):
            return np.zeros(x.shape, np.float32)
        n = math.prod(x.shape[d] for d in axes)
        result = _to_float32(finish(_variance(x, mean, axes, n, args["ddof"])))
        return result.reshape(_output_shape(x.shape, axes, args["keep_dims"]))

    op = Operator(
        name,
        inputs=[
            Input("data", doc="Data to reduce."),
            Input("mean", doc="Mean of ``data`` over the same axes (float32), as from ``mean``."),
        ],
        args=_common_args(
            [Arg("ddof", "int", 0, doc="Delta degrees of freedom: the divisor is N - ddof.", type_doc="int")]
        ),
        prepare_args=functools.partial(_resolve_axes, qualname),
        infer_types=infer_types,
        infer_shape=infer_shape,
        kernel=kernel,
        module=_MODULE,
        doc=doc,
    )
    op.gpu_kernel = GpuReduction(op, functools.partial(_reduced_axes, qualname))
    return op


def _sqrt(values):
    with np.errstate(invalid="ignore"):
        return np.sqrt(values)


STD_DEV = _spread(
    "std_dev",
    _sqrt,
    "Standard deviation over the given axes, from the data and its precomputed mean.\n\n"
    "The result is float32; ``mean`` has the reduced shape (or the keep_dims shape).",
)
VARIANCE = _spread(
    "variance",
    lambda values: values,
    "Variance over the given axes, from the data and its precomputed mean.\n\n"
    "The result is float32; ``mean`` has the reduced shape (or the keep_dims shape).",
)

OPERATORS = [MAX, MEAN, MEAN_SQUARE, MIN, RMS, STD_DEV, SUM, VARIANCE]
