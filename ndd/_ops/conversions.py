"""Element type conversions with the reference's rules.

The reference converts values in several ways depending on the operator; each
function here matches one of them, and every operator family imports it from
here rather than keeping its own copy:

- ``round_half_away``: rounding to the nearest integer, halves away from zero
  (``llround``);
- ``c_cast``: a C cast of scalar arguments (truncate, then wrap);
- ``convert_saturating``: truncate, then saturate (``slice`` with ``dtype``);
- ``cast_array``: round half away, then saturate (``ndd.cast``).
"""

import functools
import math

import numpy as np


def round_half_away(x, out=None):
    """Round to the nearest integer, halves away from zero, as ``llround`` does
    (numpy's ``round`` goes to even instead).

    Used by ``slice`` (fractional window positions, one float at a time),
    ``reshape``/``reinterpret`` (extents from ``rel_shape``) and ``cast_array``.

    Parameters
    ----------
    x : float or numpy.ndarray
        A float, or an array of floating-point values at least 1-D.
    out : numpy.ndarray, optional
        For an array ``x``: where to write the result, of the shape and type of
        ``x``; may be ``x`` itself. A new array when omitted.

    Returns
    -------
    int or numpy.ndarray
        For a float, an int (OverflowError for an infinity, ValueError for NaN, as
        ``int()``); for an array, whole numbers of its type, infinities and NaN kept.
    """
    # Both forms split x by truncation into its integer part and a fraction, which is
    # exact, as is twice the fraction; truncating that gives the step: -1, 0 or 1.
    # (Splitting with floor is not exact for negative x: -0.49999999999999994 would
    # give a fraction of 0.5 and round to -1.)
    if isinstance(x, float):  # math is much faster than numpy on one value
        whole = math.trunc(x)
        return whole + math.trunc((x - whole) * 2)
    whole = np.trunc(x)
    with np.errstate(invalid="ignore"):
        step = np.subtract(x, whole, out=out)  # NaN where x is infinite
    step *= 2
    np.trunc(step, out=step)
    # fmax drops the NaN of an infinite x; whole stays infinite with any finite step.
    np.fmax(step, -1, out=step)
    step += whole
    return step


def c_cast(values, target):
    """Convert scalar argument values to numpy dtype ``target`` as a C cast does.

    Floats truncate toward zero and wrap around the range of an integer type
    (300 becomes 44 in uint8, -1 becomes 255); a bool is whether the value is
    nonzero. Where the C cast is undefined, the result is fixed: NaN gives 0, and
    values beyond the int64 range saturate at its limits before wrapping.

    Used by ``slice`` (``fill_values``), ``pad`` (``fill_value``) and ``one_hot``
    (``on_value``/``off_value``, which the reference makes float32 first: the
    caller does that).

    Parameters
    ----------
    values : float, sequence of float or numpy.ndarray
        The values to convert, read as float64.
    target : numpy.dtype
        The type to convert to.

    Returns
    -------
    numpy.ndarray
        ``values`` of type ``target``, with their shape.
    """
    values = np.asarray(values, dtype=np.float64)
    if target.kind == "b":
        return values != 0
    if target.kind in "iu":
        whole = np.nan_to_num(np.trunc(values), nan=0.0)
        # Wrap through int64, saturating first where even int64 cannot hold the
        # value (2**63 - 1 is not a float64: clip below it, then set the limit).
        as_int64 = np.clip(whole, -(2.0**63), 2.0**63 - 1024).astype(np.int64)
        as_int64 = np.where(whole >= 2.0**63, np.iinfo(np.int64).max, as_int64)
        return as_int64.astype(target)
    with np.errstate(over="ignore"):
        return values.astype(target)


def convert_saturating(arr, target):
    """Convert to numpy dtype ``target`` as the reference's ``slice`` does with
    ``dtype``: floats truncate toward zero and every value saturates at the limits
    of the target type (infinities included); NaN gives 0 in an integer type.

    Parameters
    ----------
    arr : numpy.ndarray
        The data to convert; returned as is when it already has type ``target``.
    target : numpy.dtype
        The type to convert to.

    Returns
    -------
    numpy.ndarray
    """
    if arr.dtype == target:
        return arr
    if arr.dtype.kind == "b":
        return arr.astype(target)
    if target.kind in "iu":
        info = np.iinfo(target)
        if arr.dtype.kind == "f":
            arr = np.nan_to_num(np.trunc(arr), nan=0.0, posinf=info.max, neginf=info.min)
        return np.clip(arr, info.min, info.max).astype(target)
    limit = float(np.finfo(target).max)
    source = np.finfo(arr.dtype) if arr.dtype.kind == "f" else np.iinfo(arr.dtype)
    if float(source.max) > limit:
        arr = np.clip(arr, -limit, limit)
    return arr.astype(target)


@functools.cache
def _float_bounds(float_type, int_type):
    """The smallest and largest values of ``float_type`` within the range of ``int_type``."""
    info = np.iinfo(int_type)
    zero = float_type.type(0)
    with np.errstate(over="ignore"):
        lo, hi = np.array([info.min, info.max]).astype(float_type)
    if float(hi) > info.max:
        hi = np.nextafter(hi, zero)
    if float(lo) < info.min:
        lo = np.nextafter(lo, zero)
    return lo, hi


def _float_to_int(arr, target):
    """Round half away from zero and saturate into integer type ``target``; NaN gives 0."""
    info = np.iinfo(target)
    lo, hi = _float_bounds(arr.dtype, target)
    # The bounds are whole numbers, so rounding after clipping stays within them.
    clipped = np.clip(arr, lo, hi)
    rounded = round_half_away(clipped, out=clipped)
    nan = np.isnan(rounded)
    if nan.any():
        rounded[nan] = 0
    out = rounded.astype(target)
    # Where the integer bound is not a float of the source type (2**31 - 1 in float32),
    # values beyond the clipping bound are beyond the integer bound.
    if float(hi) != info.max:
        np.putmask(out, arr > hi, info.max)
    if float(lo) != info.min:
        np.putmask(out, arr < lo, info.min)
    return out


def cast_array(arr, target):
    """Convert to numpy dtype ``target`` with the rules of the reference's ``cast``:
    floats to integers (and to bool) round half away from zero and saturate, NaN
    gives 0; integers saturate into narrower integer types.

    Used by ``cast``/``cast_like``, ``full_like`` (the fill value) and
    ``lookup_table`` (the table values).

    Parameters
    ----------
    arr : numpy.ndarray
        The data to convert; not modified.
    target : numpy.dtype
        The type to convert to.

    Returns
    -------
    numpy.ndarray
        A new array (a copy even when ``arr`` already has type ``target``).
    """
    if arr.ndim == 0:
        # numpy returns scalars, not arrays, from operations on 0-D arrays.
        return cast_array(arr.reshape(1), target).reshape(())
    if arr.dtype == target:
        return arr.copy()
    src_float = arr.dtype.kind == "f"
    if target.kind == "b":
        if src_float:
            # Rounds like the integer conversion: 0.3 -> False, -0.5 -> True, NaN -> True.
            return ~(np.abs(arr) < 0.5)
        return arr != 0
    if target.kind in "iu":
        if src_float:
            return _float_to_int(arr, target)
        if arr.dtype.kind in "iu":
            info, src = np.iinfo(target), np.iinfo(arr.dtype)
            if src.min < info.min or src.max > info.max:
                return np.clip(arr, max(info.min, src.min), min(info.max, src.max)).astype(target)
    with np.errstate(over="ignore"):
        return arr.astype(target)
