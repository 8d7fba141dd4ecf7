"""Regions of interest of ``readers.Numpy``: from the ROI arguments to the part of
an array to copy out, with the reference's rounding and out-of-bounds policies."""

import math
import typing

import numpy as np

__all__ = [
    "ROI_ARGS",
    "POLICIES",
    "Region",
    "exclusive_roi_error",
    "roi_region",
    "extract",
    "fill_for",
]

ROI_ARGS = ("roi_start", "rel_roi_start", "roi_end", "rel_roi_end", "roi_shape", "rel_roi_shape")
_END_ARGS = ("roi_end", "rel_roi_end", "roi_shape", "rel_roi_shape")
POLICIES = ("error", "trim_to_shape", "pad")


class Region(typing.NamedTuple):
    """What to copy out of an array: the in-bounds box ``start``..``stop`` of the
    source, into an output of ``out_shape`` at ``out_start`` (the rest is fill)."""

    start: tuple
    stop: tuple
    out_shape: tuple
    out_start: tuple


def exclusive_roi_error(names) -> str | None:
    """Why the ROI arguments ``names`` cannot be given together, or None."""
    if "roi_start" in names and "rel_roi_start" in names:
        return "'roi_start' and 'rel_roi_start' are mutually exclusive"
    ends = [n for n in _END_ARGS if n in names]
    if len(ends) > 1:
        return f"{', '.join(repr(n) for n in ends)} are mutually exclusive (give at most one of {list(_END_ARGS)})"
    return None


def roi_region(roi: dict, axes: tuple, policy: str, shape: tuple) -> Region | None:
    """The region of an array of ``shape`` selected by ``roi`` (ROI argument name ->
    tuple of values), or None for the whole array.

    ``axes`` are the axes the values refer to (all, in order, when empty); one
    value is used for every axis. Raises ValueError for bad values and, with the
    'error' policy, for a region reaching outside the array.
    """
    anchor, size = _window(roi, axes, shape)
    if policy == "error":
        for a, n, extent in zip(anchor, size, shape, strict=True):
            if not (0 <= a <= extent and 0 <= a + n <= extent):
                raise ValueError(
                    f"the region of interest (start {anchor}, shape {size}) reaches outside the array of "
                    f"shape {tuple(shape)}; out_of_bounds_policy 'trim_to_shape' or 'pad' would read it"
                )
    start = tuple(min(max(a, 0), extent) for a, extent in zip(anchor, shape, strict=True))
    stop = tuple(
        max(min(max(a + n, 0), extent), lo)
        for a, n, extent, lo in zip(anchor, size, shape, start, strict=True)
    )
    if policy == "pad":
        region = Region(start, stop, tuple(size), tuple(lo - a for lo, a in zip(start, anchor, strict=True)))
    else:
        region = Region(
            start, stop, tuple(hi - lo for lo, hi in zip(start, stop, strict=True)), (0,) * len(shape)
        )
    if region.out_shape == tuple(shape) and not any(start) and not any(region.out_start):
        return None
    return region


def _window(roi, axes, shape):
    """``(anchor, size)`` per dimension, rounded as the reference rounds them."""
    ndim = len(shape)
    axes = _normalized_axes(axes, ndim)
    values = {name: _per_axis(name, v, len(axes)) for name, v in roi.items()}
    anchor, size = [0] * ndim, list(shape)
    for i, axis in enumerate(axes):
        extent = shape[axis]
        start = 0
        if "roi_start" in values:
            start = values["roi_start"][i]
        elif "rel_roi_start" in values:
            start = _scaled(values["rel_roi_start"][i], extent)
        if "roi_end" in values:
            end = values["roi_end"][i]
        elif "rel_roi_end" in values:
            end = _scaled(values["rel_roi_end"][i], extent)
        elif "roi_shape" in values:
            if values["roi_shape"][i] < 0:
                raise ValueError(f"'roi_shape' must not be negative, got {values['roi_shape'][i]}")
            end = start + values["roi_shape"][i]
        elif "rel_roi_shape" in values:
            relative = _float32(values["rel_roi_shape"][i])
            if relative < 0:
                raise ValueError(f"'rel_roi_shape' must not be negative, got {relative:g}")
            if "rel_roi_start" in values:
                # Both relative: summed before scaling, in double precision, as the
                # reference does, so that the end is rounded from one product.
                end = (_float32(values["rel_roi_start"][i]) + relative) * extent
            else:
                end = start + _scaled(relative, extent)
        else:
            end = extent
        if end < start:
            raise ValueError(
                f"the region of interest ends before it starts on axis {axis} ({start:g} > {end:g})"
            )
        anchor[axis] = _round_half_away(start)
        size[axis] = _round_half_away(end) - anchor[axis]
    return anchor, size


def _normalized_axes(axes, ndim):
    if not axes:
        return list(range(ndim))
    result = []
    for axis in axes:
        if not -ndim <= axis < ndim:
            raise ValueError(
                f"'roi_axes' value {axis} is out of range for a {ndim}-D array "
                f"(expected {-ndim} ... {ndim - 1})"
            )
        axis %= ndim
        if axis in result:
            raise ValueError(f"'roi_axes' {list(axes)} names axis {axis} twice")
        result.append(axis)
    return result


def _per_axis(name, values, count):
    if len(values) == 1:
        return values * count
    if len(values) != count:
        raise ValueError(f"'{name}' has {len(values)} values; expected 1 or {count} (one per ROI axis)")
    return values


def _float32(value):
    return float(np.float32(value))


def _scaled(relative, extent):
    # The reference multiplies a float32 fraction by the extent in float32.
    return float(np.float32(relative) * np.float32(extent))


def _round_half_away(value):
    if isinstance(value, int):
        return value
    return math.floor(value + 0.5) if value >= 0 else -math.floor(0.5 - value)


def fill_for(dtype: np.dtype, fill_value: float):
    """``fill_value`` as an element of ``dtype``, converted as the reference does:
    through float32, integers rounded half away from zero and saturated, NaN as 0
    (the reference's value for NaN depends on the type and the processor)."""
    value = _float32(fill_value)
    if dtype.kind == "f":
        with np.errstate(over="ignore"):
            return np.float32(value).astype(dtype)
    if dtype.kind == "b":
        return not abs(value) < 0.5  # the rounded value is non-zero; NaN is True
    if math.isnan(value):
        return 0
    info = np.iinfo(dtype)
    if value >= info.max:
        return info.max
    if value <= info.min:
        return info.min
    return _round_half_away(value)


def extract(source: np.ndarray, origin: tuple, region: Region | None, fill_value: float) -> np.ndarray:
    """A new C-ordered array with the ``region`` of an array (None: all of it), of
    which ``source`` holds the part from ``origin`` on; never a view of
    ``source`` (which may be a memory map)."""
    if region is None:
        return _owned(source)
    window = tuple(slice(lo - o, hi - o) for lo, hi, o in zip(region.start, region.stop, origin, strict=True))
    part = source[window]
    sizes = tuple(hi - lo for lo, hi in zip(region.start, region.stop, strict=True))
    if sizes == region.out_shape:
        return np.array(part, order="C")
    out = np.full(region.out_shape, fill_for(source.dtype, fill_value), source.dtype)
    out[tuple(slice(s, s + n) for s, n in zip(region.out_start, sizes, strict=True))] = part
    return out


def _owned(array):
    if isinstance(array, np.memmap):
        return np.array(array, order="C")
    return np.asarray(array, order="C")  # (ascontiguousarray would make 0-D arrays 1-D)
