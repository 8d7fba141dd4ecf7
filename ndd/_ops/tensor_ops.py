"""Type and shape manipulation: cast, cast_like, copy, reshape, reinterpret,
transpose, squeeze, expand_dims."""

import numpy as np

from .._types import float32
from .schema import Arg, Input, Operator


def _cast_types(ins, args):
    return [(args["dtype"], ins[0]._layout)]


def _same_shape(shapes, args):
    return [shapes[0]]


def _cast_array(arr, dtype):
    """Convert with the reference's rules: floats to integers round half away
    from zero and saturate (NaN gives 0); integers saturate into narrower types."""
    target = dtype.numpy
    if arr.dtype == target:
        return arr.copy()
    if target.kind in "iu":
        info = np.iinfo(target)
        if arr.dtype.kind == "f":
            with np.errstate(invalid="ignore"):
                rounded = np.trunc(arr + np.copysign(np.asarray(0.5, arr.dtype), arr))
                rounded = np.nan_to_num(rounded, nan=0.0)
                clipped = np.clip(rounded, info.min, info.max)
            # Float values near the int64/uint64 limits are not exactly representable;
            # clip in float space and saturate the last step explicitly.
            out = clipped.astype(target)
            if target.itemsize == 8:
                out[rounded >= float(info.max)] = info.max
                out[rounded <= float(info.min)] = info.min
            return out
        if arr.dtype.kind in "iu":
            src = np.iinfo(arr.dtype)
            if src.min < info.min or src.max > info.max:
                return np.clip(arr, max(info.min, src.min), min(info.max, src.max)).astype(target)
        return arr.astype(target)
    if target.kind == "b":
        return arr != 0
    with np.errstate(over="ignore"):
        return arr.astype(target)


def _cast_kernel(arrays, args):
    return _cast_array(arrays[0], args["dtype"])


CAST = Operator(
    "cast",
    inputs=[Input("input")],
    args=[Arg("dtype", "dtype", doc="Output data type.", type_doc="DType")],
    infer_types=_cast_types,
    infer_shape=_same_shape,
    kernel=_cast_kernel,
    doc="Convert the elements to another type.\n\nFloat values are rounded to the nearest integer "
    "(halves away from zero) and saturated to the range of an integer output type; NaN becomes 0.",
)

OPERATORS = [CAST]
