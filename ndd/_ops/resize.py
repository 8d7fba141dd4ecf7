"""Resizing: resize, random_resized_crop, resize_crop_mirror.

Every operator here resamples a region of the input (the whole image, a random
window, the part of the resized image a crop keeps) to an output size with the
separable filters of ``ndd._cpu.resample``: one pass per spatial axis, planned
there as the GPU's are (``resample_steps``: the window read, the tables, the
reference's order of passes and its rounding of integer outputs), reading the
region straight from the input (a crop window is never copied first).

Output sizes follow the reference's rules: a requested extent of 0 is absent;
``mode`` decides how absent or conflicting extents follow the given ones; the
extents are rounded half up (at least 1), and with ``subpixel_scale`` the input
region shrinks or grows about its centre so that the scale stays the requested
one.

Deliberate divergences from the reference:
- ``interp_type`` sets both filters unless ``min_filter``/``mag_filter`` are
  given with a value other than their default; passing the default value
  explicitly (``min_filter=INTERP_LINEAR``) cannot be told from omitting it.
- ``resize_crop_mirror``'s ``mirror`` bit 1 flips the width in every layout; the
  reference flips the height of CHW images for it.
- ``random_resized_crop`` of an image without pixels gives zeros of ``size``.
- Any numeric input type is resized (the reference takes uint8, int16, uint16,
  float and a few others); types other than uint8, int16, uint16 and float32 are
  computed in float32.
- int16 sums in [-0.5, 0) round to 0; the reference's vector code gives -1 (it
  rounds them to a negative zero, then reads its sign).
"""

import functools
import math

import numpy as np

from .._cpu.resample import (
    ROUND_COLUMNS,
    ROUND_EVEN,
    ROUND_ROWS,
    resample_columns_rows,
    resample_pass,
    resample_rows_columns,
    resample_steps,
    store_rounded,
)
from .._memory import exceeds_half_of_memory
from .._prepare.args import InvalidArgumentError
from .._prepare.invocation import PendingArg, PerSample
from .._types import float32, int32
from ..types import DALIInterpType
from .axes import axes_from_list, axes_from_names
from .conversions import round_half_away
from .gpu_image import GpuResample
from .gpu_segments import once_per_distinct
from .image_layout import image_axes
from .random_ops import CROP_ASPECT_RATIO_DEFAULT, RNG_ARG, _crop_windows, _range_arg
from .schema import Arg, Input, Operator, batch_samples_of

_RESAMPLED_TYPES = (np.uint8, np.int16, np.uint16, np.float32)
_LAYOUTS_DOC = "HWC, CHW, FHWC, FCHW, CFHW (sequences, per frame), DHWC, CDHW, FDHWC, ... (volumes)"


# -- resampling of one region -------------------------------------------------------------


def _pass_view(array, axis):
    """``array`` as a 4-D view (outer, mid, n, inner) resampled along ``n`` = ``axis``,
    with a contiguous innermost axis (copied only when no view has one)."""
    shape = array.shape
    mid = shape[axis - 1] if axis > 0 else 1
    outer = math.prod(shape[: max(axis - 1, 0)])
    inner = math.prod(shape[axis + 1 :])
    view = array.reshape(outer, mid, shape[axis], inner)
    if inner > 1 and view.strides[3] != view.itemsize:
        view = np.ascontiguousarray(view)
    return view


def _rows_and_columns(data, steps, out_dtype, rounding):
    """Both passes at once when the plan resamples two adjacent axes (rows then
    columns, or columns then rows) and the rows they form are contiguous (HWC, CHW,
    FHWC, ... with or without a window), and an integer output rounds as its last
    pass does; else None."""
    (row_axis, row_indices, row_weights), (column_axis, column_indices, column_weights) = sorted(
        steps, key=lambda step: step[0]
    )
    if column_axis != row_axis + 1:
        return None
    rows_first = steps[0][0] == row_axis
    mode, round_axis, first, count = rounding
    if np.dtype(out_dtype).kind in "iu":
        # The columns pass rounds by columns (or all to even), the rows pass by rows.
        fits = mode == ROUND_EVEN or (mode, round_axis) == (ROUND_COLUMNS, column_axis)
        if not (fits if rows_first else (mode, round_axis) == (ROUND_ROWS, row_axis)):
            return None
    shape = data.shape
    outer = math.prod(shape[:row_axis])
    channels = math.prod(shape[column_axis + 1 :])
    # A view for every layout the resize family takes (numpy copies only if none exists).
    view = data.reshape(outer, shape[row_axis], shape[column_axis], channels)
    itemsize = view.itemsize
    if view.strides[2] != channels * itemsize or (channels > 1 and view.strides[3] != itemsize):
        return None
    out_shape = list(shape)
    out_shape[row_axis] = row_indices.shape[0]
    out_shape[column_axis] = column_indices.shape[0]
    out = np.empty(out_shape, out_dtype)
    out_view = out.reshape(outer, out_shape[row_axis], out_shape[column_axis], channels)
    if rows_first:
        regular = (first, count) if mode == ROUND_COLUMNS else (0, -1)
        resample_rows_columns(
            view, out_view, row_indices, row_weights, column_indices, column_weights, *regular
        )
    else:
        resample_columns_rows(view, out_view, column_indices, column_weights, row_indices, row_weights)
    return out


def _separable_passes(data, steps, out_dtype, rounding):
    """One pass per resized axis, in the plan's order, in float32; integer outputs are
    then rounded as the reference's last pass rounds them."""
    for axis, indices, weights in steps:
        shape = list(data.shape)
        shape[axis] = indices.shape[0]
        out = np.empty(shape, np.float32)
        resample_pass(_pass_view(data, axis), _pass_view(out, axis), indices, weights)
        data = out
    out_dtype = np.dtype(out_dtype)
    if out_dtype == data.dtype:
        return data
    if out_dtype.kind not in "iu":
        return data.astype(out_dtype)
    mode, axis, first, count = rounding
    out = np.empty(data.shape, out_dtype)
    store_rounded(
        data.reshape(-1),
        out.reshape(-1),
        mode,
        data.shape[axis],
        math.prod(data.shape[axis + 1 :]),
        first,
        count,
    )
    return out


def resample(image, axes, out_sizes, lo, hi, filters, antialias, out_dtype, nn_columns=None):
    """Resample the region ``[lo[k], hi[k]]`` of ``image`` along each spatial axis
    ``axes[k]`` to ``out_sizes[k]`` pixels, with ``filters`` = (min_filter, mag_filter):
    the first where the axis is scaled down (fewer output pixels than the region's
    extent), else the second.

    Returns a new array of ``out_dtype`` (never a view of ``image``).
    """
    out_dtype = np.dtype(out_dtype)
    plan = resample_steps(image.shape, (tuple(axes), out_sizes, lo, hi, filters, antialias, nn_columns))
    if plan is None:
        # Nothing to sample from: the output (if it has pixels at all) is zeros.
        out_shape = list(image.shape)
        for a, n in zip(axes, out_sizes, strict=True):
            out_shape[a] = n
        return np.zeros(out_shape, out_dtype)
    window, steps, rounding = plan
    # (The Ellipsis keeps a 0-D image an array: image[()] is a numpy scalar.)
    data = image[(*window, ...)]
    if data.dtype.type not in _RESAMPLED_TYPES:
        data = data.astype(np.float32)
    if not steps:
        return data.astype(out_dtype, copy=True)
    direct = out_dtype.type in _RESAMPLED_TYPES
    pass_dtype = out_dtype if direct else np.dtype(np.float32)
    resized = _rows_and_columns(data, steps, pass_dtype, rounding) if len(steps) == 2 else None
    if resized is not None:
        data = resized
    else:
        data = _separable_passes(data, steps, pass_dtype, rounding)
    if data.dtype != out_dtype:
        if out_dtype.kind in "iu":
            # Halves away from zero, as the native kernels round; bounds in double
            # precision (float32 has no int32 maximum: 2**31 - 1 rounds up to 2**31,
            # which the cast would wrap to the minimum).
            info = np.iinfo(out_dtype)
            data = np.clip(round_half_away(data.astype(np.float64)), info.min, info.max)
        data = data.astype(out_dtype)
    return data


# -- output sizes ---------------------------------------------------------------------------


def _f32(value):
    """``value`` rounded to float32 (kept as a Python float): the reference keeps its
    sizes, scales and regions in single precision. One operation on float32 values
    done in double precision and then rounded gives the float32 operation's result."""
    return float(np.float32(value))


def _adjust_sizes(requested, in_sizes, mode, max_size):
    """Output extents (floats) from the requested ones (0: absent) and the input
    region's extents, by the rules of ``mode`` and ``max_size``, in the reference's
    mix of single and double precision. A requested extent of an empty region
    (``roi_start == roi_end``) is kept, as in the reference, but has no scale to lend
    the other axes (in the modes that keep the aspect ratio it takes their scale,
    and stays empty)."""
    ndim = len(requested)
    given = [requested[d] != 0 for d in range(ndim)]
    scalable = [given[d] and in_sizes[d] != 0 for d in range(ndim)]
    scale = [_f32(requested[d] / in_sizes[d]) if in_sizes[d] else 1.0 for d in range(ndim)]
    out = list(requested)
    if not any(given):
        return list(in_sizes)
    pick = max if mode == "not_smaller" else min
    if mode in ("not_larger", "not_smaller") and not any(scalable):
        # No region to take a scale from: one extent for all axes, as the reference.
        extent = pick(abs(requested[d]) for d in range(ndim) if given[d])
        return [math.copysign(extent, requested[d]) if given[d] else extent for d in range(ndim)]
    if mode in ("default", "stretch"):
        mean_scale = 1.0
        if mode == "default" and any(scalable):
            # Absent extents scale by the geometric mean of the given scales.
            mean_scale = math.prod(abs(scale[d]) for d in range(ndim) if scalable[d])
            if sum(scalable) > 1:
                mean_scale = mean_scale ** (1 / sum(scalable))
        for d in range(ndim):
            if not given[d]:
                out[d] = _f32(in_sizes[d] * mean_scale)
        if max_size is not None:
            for d in range(ndim):
                if max_size[d] > 0 and abs(out[d]) > max_size[d]:
                    out[d] = math.copysign(max_size[d], out[d])
        return out
    # not_larger / not_smaller: one scale for all axes, the smallest (largest) given one;
    # an empty region stays empty.
    final = pick(abs(scale[d]) for d in range(ndim) if scalable[d])
    if max_size is not None:
        for d in range(ndim):
            if max_size[d] > 0 and in_sizes[d] > 0:
                final = min(final, max_size[d] / in_sizes[d])
    for d in range(ndim):
        if not scalable[d] or abs(scale[d]) != final:
            out[d] = _f32(math.copysign(final, scale[d]) * in_sizes[d])
    return out


class Geometry:
    """Where one sample's output comes from: per spatial axis, the output extent
    and the input interval ``[lo, hi]`` it covers (``hi < lo`` flips)."""

    __slots__ = ("sizes", "lo", "hi")

    def __init__(self, sizes, lo, hi):
        self.sizes = sizes
        self.lo = lo
        self.hi = hi


_ROUNDINGS = {
    "round": lambda v: math.floor(v + 0.5),
    "truncate": math.floor,
    "ceil": math.ceil,
}


_SMALLEST_SUBPIXEL_SIZE = 0.1


def resize_geometry(
    requested,
    in_extents,
    lo,
    hi,
    *,
    mode="default",
    max_size=None,
    subpixel_scale=True,
    alignment=None,
    rounding="round",
):
    """The output extents and input intervals of a resize.

    ``requested``: one float per resized axis (0: absent, negative: flip);
    ``lo``/``hi``: the input region (the whole extents by default); ``alignment``:
    per axis, the relative point of the region that keeps its place when the
    region is adjusted to a rounded extent (0.5, its centre, by default);
    ``rounding``: ``round`` (half up), ``truncate`` or ``ceil``.
    """
    lo, hi = [_f32(v) for v in lo], [_f32(v) for v in hi]
    requested = [_f32(v) for v in requested]
    if max_size is not None:
        max_size = [_f32(v) for v in max_size]
    in_sizes = [abs(_f32(hi[d] - lo[d])) for d in range(len(requested))]
    adjusted = _adjust_sizes(requested, in_sizes, mode, max_size)
    to_int = _ROUNDINGS[rounding]
    sizes = []
    for d, wanted in enumerate(adjusted):
        if wanted < 0:
            lo[d], hi[d] = hi[d], lo[d]
        wanted = abs(wanted)
        size = max(1, to_int(wanted)) if in_extents[d] > 0 else 0
        if subpixel_scale and wanted > 0 and size != wanted:
            # Keep the requested scale: the region grows or shrinks about its alignment
            # point (its centre by default), in double precision, then rounded to
            # float32 as in the reference. A size below 0.1 scales as 0.1 does.
            adjustment = size / max(wanted, _SMALLEST_SUBPIXEL_SIZE)
            if alignment is None:
                anchor = _f32(lo[d] + hi[d]) * 0.5
                lo[d], hi[d] = (_f32(anchor + (v - anchor) * adjustment) for v in (lo[d], hi[d]))
            else:
                align = _f32(alignment[d])
                anchor = (1 - align) * lo[d] + align * hi[d]
                lo[d], hi[d] = (_f32(anchor + (v - anchor) * adjustment) for v in (lo[d], hi[d]))
        sizes.append(size)
    return Geometry(sizes, lo, hi)


# -- arguments shared by the resize family ----------------------------------------------------


def _interp(name, doc):
    return Arg(
        name,
        "int",
        DALIInterpType.INTERP_LINEAR,
        per_sample=True,
        doc=doc,
        type_doc="DALIInterpType",
    )


INTERP_ARGS = [
    _interp("interp_type", "Filter for scaling up and down (``min_filter``/``mag_filter`` override it)."),
    _interp("mag_filter", "Filter used when scaling up."),
    _interp("min_filter", "Filter used when scaling down."),
]
ANTIALIAS_ARG = Arg(
    "antialias", "bool", True, doc="Widen the filter by the scale when scaling down (not for INTERP_NN)."
)
DTYPE_ARG = Arg(
    "dtype", "dtype", None, doc="Output type: the input's (default) or float32.", type_doc="DType"
)
HINT_ARGS = [
    Arg("minibatch_size", "int", 32, doc="Accepted for compatibility; samples are resized one at a time."),
    Arg("temp_buffer_hint", "int", 0, doc="Accepted for compatibility; ignored on the CPU."),
]
SIZE_ARGS = [
    Arg(
        "max_size",
        "float_list",
        None,
        doc="Limit of the output extents (one, or one per axis).",
        type_doc="float or list of float",
    ),
    Arg(
        "mode",
        "str",
        "default",
        choices=("default", "stretch", "not_larger", "not_smaller"),
        doc="How absent or conflicting extents are sized: ``default`` (absent extents scale by the "
        "mean scale of the given ones), ``stretch`` (absent extents keep their size), ``not_larger`` / "
        "``not_smaller`` (keep the aspect ratio; no extent larger / smaller than requested).",
    ),
    Arg(
        "resize_longer",
        "float",
        0.0,
        per_sample=True,
        doc="Extent of the longer side (keeps the aspect ratio, as ``mode='not_larger'``).",
    ),
    Arg(
        "resize_shorter",
        "float",
        0.0,
        per_sample=True,
        doc="Extent of the shorter side (keeps the aspect ratio, as ``mode='not_smaller'``).",
    ),
    Arg("resize_x", "float", 0.0, per_sample=True, doc="Output width (negative flips)."),
    Arg("resize_y", "float", 0.0, per_sample=True, doc="Output height (negative flips)."),
    Arg("resize_z", "float", 0.0, per_sample=True, doc="Output depth of a volume (negative flips)."),
    Arg(
        "roi_end",
        "float_list",
        None,
        per_sample=True,
        doc="End of the input region, in the order of ``size`` (with ``roi_start``).",
        type_doc="float or list of float",
    ),
    Arg("roi_relative", "bool", False, doc="ROI coordinates are fractions of the input extents."),
    Arg(
        "roi_start",
        "float_list",
        None,
        per_sample=True,
        doc="Start of the input region, in the order of ``size``; start > end flips.",
        type_doc="float or list of float",
    ),
]
SIZE_ARG = Arg(
    "size",
    "float_list",
    None,
    per_sample=True,
    doc="Output extents, one per spatial axis (D, H, W order), or one for all; 0 means absent.",
    type_doc="float or list of float",
)
SUBPIXEL_ARG = Arg(
    "subpixel_scale",
    "bool",
    True,
    doc="Fractional output extents keep the exact scale by adjusting the input region; "
    "otherwise the region maps to the rounded extents.",
)


def _per_axis(qualname, name, values, ndim, context):
    """One value per axis (a single value applies to all); ``context`` ends the error
    message ("layout HWC", "2 resized axes")."""
    if values is None:
        return None
    if len(values) == 1:
        return [values[0]] * ndim
    if len(values) != ndim:
        raise InvalidArgumentError(
            f"{qualname}: '{name}' must have 1 or {ndim} elements for {context}, got {len(values)}"
        )
    return list(values)


def _filters(op, args):
    """Filter kinds for scaling down and up of one sample."""
    kind = args["interp_type"]
    # An omitted min_filter/mag_filter arrives as the schema's default object itself.
    min_kind = args["min_filter"] if args["min_filter"] is not INTERP_ARGS[2].converted_default else kind
    mag_kind = args["mag_filter"] if args["mag_filter"] is not INTERP_ARGS[1].converted_default else kind
    for name, value in (("interp_type", kind), ("min_filter", min_kind), ("mag_filter", mag_kind)):
        if value not in DALIInterpType._value2member_map_:
            raise InvalidArgumentError(f"{op.qualname}: '{name}' must be a DALIInterpType, got {value!r}")
    return int(min_kind), int(mag_kind)


def _size_methods(op, args):
    """Which ways of giving the size the caller used: (resize_x/y/z, size,
    resize_shorter, resize_longer). As in the reference, presence counts, so
    ``resize_shorter=0`` alone is a request that leaves the extents as they are."""
    return (
        op.given(args, "resize_x") or op.given(args, "resize_y") or op.given(args, "resize_z"),
        op.given(args, "size"),
        op.given(args, "resize_shorter"),
        op.given(args, "resize_longer"),
    )


def _check_size_methods(op, args):
    """Exactly one way of giving the size, as the reference demands (``args`` hold
    ``_size_methods``, set by the prepare phase)."""
    separate, size, shorter, longer = args["_size_methods"]
    if separate + size + shorter + longer != 1:
        raise InvalidArgumentError(
            f"{op.qualname}: give the output size in exactly one way: 'size', 'resize_x'/'resize_y'/'resize_z', "
            "'resize_shorter' or 'resize_longer'"
        )
    if (shorter or longer) and args["mode"] != "default":
        raise InvalidArgumentError(
            f"{op.qualname}: 'resize_shorter' and 'resize_longer' cannot be combined with 'mode'"
        )


# Geometries made, by what they depend on (the operator, the sample's shape and axes,
# the size arguments): a call's shape inference and its run, and every batch of an
# epoch of images of a few sizes, make each once. Cleared when full.
_geometries = {}
_MAX_GEOMETRIES = 4096


def _values(value):
    return None if value is None else tuple(value)


def _size_key(op, args):
    """What of ``args`` a Geometry depends on, kept in ``args`` itself: the samples of a
    call that share their argument dict (no argument varies per sample) make it once."""
    key = args.get("_geometry_key")
    if key is None:
        key = args["_geometry_key"] = (
            op.qualname,
            args["_size_methods"],
            _values(args["size"]),
            args["resize_x"],
            args["resize_y"],
            args["resize_z"],
            args["resize_shorter"],
            args["resize_longer"],
            args["mode"],
            _values(args["max_size"]),
            _values(args["roi_start"]),
            _values(args["roi_end"]),
            args["roi_relative"],
            args["subpixel_scale"],
        )
    return key


def sample_geometry(op, args, shape, axes):
    """The Geometry of one sample of ``shape`` with image axes ``axes`` (the Geometry
    may be shared: its lists are not to be changed)."""
    key = (_size_key(op, args), tuple(shape), axes)
    geometry = _geometries.get(key)
    if geometry is None:
        geometry = _sample_geometry(op, args, shape, axes)
        if len(_geometries) >= _MAX_GEOMETRIES:
            _geometries.clear()
        _geometries[key] = geometry
    return geometry


def _sample_geometry(op, args, shape, axes):
    spatial = axes.spatial
    ndim = len(spatial)
    _check_size_methods(op, args)
    extents = [shape[a] for a in spatial]
    mode = args["mode"]
    _, size, shorter, longer = args["_size_methods"]
    if size:
        requested = _per_axis(op.qualname, "size", args["size"], ndim, f"layout {axes.layout}")
    elif shorter or longer:
        requested = [args["resize_shorter"] if shorter else args["resize_longer"]] * ndim
        mode = "not_smaller" if shorter else "not_larger"
    else:
        by_name = {"D": args["resize_z"], "H": args["resize_y"], "W": args["resize_x"]}
        requested = [by_name[axes.layout[a]] for a in spatial]
    max_size = _per_axis(op.qualname, "max_size", args["max_size"], ndim, f"layout {axes.layout}")
    lo, hi = [0.0] * ndim, [float(e) for e in extents]
    if (args["roi_start"] is None) != (args["roi_end"] is None):
        raise InvalidArgumentError(f"{op.qualname}: 'roi_start' and 'roi_end' must be given together")
    if args["roi_start"] is not None:
        lo = _per_axis(op.qualname, "roi_start", args["roi_start"], ndim, f"layout {axes.layout}")
        hi = _per_axis(op.qualname, "roi_end", args["roi_end"], ndim, f"layout {axes.layout}")
        lo, hi = _region(lo, hi, extents, args["roi_relative"])
    return resize_geometry(
        requested, extents, lo, hi, mode=mode, max_size=max_size, subpixel_scale=args["subpixel_scale"]
    )


# A region thinner than this (pixels) is widened to it about its centre, as in the
# reference: a one-pixel-wide sampling of the image there instead of a division by 0.
_THINNEST_REGION = float(np.float32(1e-3))


def _region(starts, ends, extents, relative):
    """The input region from ``roi_start``/``roi_end`` (float32 values, as the
    reference reads them): relative ones scaled by the extents, and one thinner
    than ``_THINNEST_REGION`` widened to it (along a non-empty axis)."""
    lo, hi = [], []
    half = _f32(0.5 * _THINNEST_REGION)
    for start, end, extent in zip(starts, ends, extents, strict=True):
        start, end = _f32(start), _f32(end)
        if relative:
            start, end = start * extent, end * extent
        if extent > 0 and abs(end - start) < _THINNEST_REGION:
            offset = half if start <= end else -half
            start, end = start - offset, end + offset
        lo.append(start)
        hi.append(end)
    return lo, hi


def _output_dtype(op, x, args):
    dtype = args["dtype"]
    if dtype is None:
        return x._dtype
    if dtype != x._dtype and dtype != float32:
        raise InvalidArgumentError(
            f"{op.qualname}: 'dtype' must be the input's type ({x._dtype}) or float32, got {dtype}"
        )
    return dtype


def resample_job(op, axes, geometry, args):
    """The arguments of ``resample`` (after the image, before the output type) that
    carry out ``geometry``: the axes, sizes, interval, filters and antialias."""
    return (
        tuple(axes.spatial),
        geometry.sizes,
        geometry.lo,
        geometry.hi,
        _filters(op, args),
        args["antialias"],
    )


def run_geometry(op, image, axes, geometry, args, out_dtype):
    """Resample one sample by ``geometry`` (per frame of a sequence: the same for all)."""
    return resample(image, *resample_job(op, axes, geometry, args), out_dtype)


def _shape_with(shape, axes, sizes, op=None):
    """``shape`` with ``sizes`` along the spatial axes (checked to fit in memory when
    ``op`` is given)."""
    return _shape_of(tuple(shape), tuple(axes.spatial), tuple(sizes), op)


@functools.lru_cache(maxsize=4096)
def _shape_of(shape, spatial, sizes, op):
    out = list(shape)
    for a, n in zip(spatial, sizes, strict=True):
        out[a] = n
    if op is not None:
        _check_fits(op, out)
    return tuple(out)


def _check_fits(op, shape):
    """Refuse an output that, in the float32 the resampling works in, would fill more than
    half of the machine's memory (a mistyped size would have the process killed)."""
    nbytes = math.prod(shape) * 4
    if exceeds_half_of_memory(nbytes):
        raise InvalidArgumentError(
            f"{op.qualname}: the output would be {tuple(shape)} ({nbytes / 2**30:.0f} GiB as float32), more "
            "than half of this machine's memory; check the size arguments"
        )


# -- resize ------------------------------------------------------------------------------------


def _pending(args):
    """Whether some argument varies per sample or is only known in the run phase."""
    return any(type(v) is PendingArg or type(v) is PerSample for v in args.values())


def _make_resize(name, module):
    def prepare(ins, args):
        x = ins[0]
        args["_axes"] = image_axes(op, x._layout, x.ndim)
        args["_dtype"] = _output_dtype(op, x, args)
        args["_size_methods"] = _size_methods(op, args)
        if not _pending(args):
            _check_size_methods(op, args)

    def types(ins, args):
        # An input without a layout gets the one it is read as (HWC, FHWC, ...), as in the reference.
        out = [(args["_dtype"], args["_axes"].layout)]
        if args["save_attrs"]:
            out.append((int32, ""))
        return out

    def shape(shapes, args):
        geometry = sample_geometry(op, args, shapes[0], args["_axes"])
        out = [_shape_with(shapes[0], args["_axes"], geometry.sizes, op)]
        if args["save_attrs"]:
            out.append((len(geometry.sizes),))
        return out

    def kernel(arrays, args):
        image = arrays[0]
        axes = args["_axes"]
        geometry = sample_geometry(op, args, image.shape, axes)
        out = run_geometry(op, image, axes, geometry, args, args["_dtype"].numpy)
        if args["save_attrs"]:
            return out, np.asarray([image.shape[a] for a in axes.spatial], np.int32)
        return out

    op = Operator(
        name,
        inputs=[Input("input", doc=f"Images, sequences or volumes ({_LAYOUTS_DOC}).")],
        args=[
            ANTIALIAS_ARG,
            DTYPE_ARG,
            Arg("image_type", "any", None, doc="Deprecated and ignored."),
            INTERP_ARGS[0],
            INTERP_ARGS[1],
            SIZE_ARGS[0],
            INTERP_ARGS[2],
            HINT_ARGS[0],
            *SIZE_ARGS[1:],
            Arg("save_attrs", "bool", False, doc="Also return the input's spatial extents (int32)."),
            SIZE_ARG,
            SUBPIXEL_ARG,
            HINT_ARGS[1],
        ],
        prepare_args=prepare,
        infer_types=types,
        infer_shape=shape,
        kernel=kernel,
        module=module,
        doc="Resize images, sequences (per frame) and volumes.\n\n"
        "The output size comes from exactly one of ``size``, ``resize_x``/``resize_y``/``resize_z``, "
        "``resize_shorter`` or ``resize_longer``, with ``mode`` and ``max_size``; ``roi_start``/"
        "``roi_end`` select the input region. ``min_filter`` resamples the axes that shrink, "
        "``mag_filter`` the others.\n\n"
        "The results equal the reference's CPU results to the bit (its filter tables, pass "
        "order, single-precision sums and rounding), but for int16 results in [-0.5, 0), "
        "which round to 0 where the reference gives -1.",
    )
    return op


RESIZE = _make_resize("resize", "ndd")
EXPERIMENTAL_RESIZE = _make_resize("resize", "ndd.experimental")


# -- random_resized_crop ---------------------------------------------------------------------

# Batches at least this large (in input bytes) are resized on the context's thread pool.
_PARALLEL_MIN_BYTES = 1 << 18


def _rrc_prepare(ins, args):
    op = RANDOM_RESIZED_CROP
    x = ins[0]
    axes = image_axes(op, x._layout, x.ndim)
    if axes.depth is not None:
        raise InvalidArgumentError(f"{op.qualname}: volumes are not supported, got layout {axes.layout!r}")
    args["_axes"] = axes
    args["_dtype"] = _output_dtype(op, x, args)
    size = args["size"]
    if len(size) == 1:
        size = size * 2
    if len(size) != 2 or min(size) <= 0:
        raise InvalidArgumentError(
            f"{op.qualname}: 'size' must be one or two positive extents (H, W), got {list(args['size'])}"
        )
    args["_size"] = [int(v) for v in size]
    if args["num_attempts"] < 0:
        raise InvalidArgumentError(
            f"{op.qualname}: 'num_attempts' must be non-negative, got {args['num_attempts']}"
        )
    args["_area"] = _range_arg("random_area", args["random_area"], positive=False, qualname=op.qualname)
    args["_aspect_ratio"] = _range_arg(
        "random_aspect_ratio", args["random_aspect_ratio"], positive=True, qualname=op.qualname
    )


def _rrc_types(ins, args):
    # Data without a layout is labelled with the one it is read as (HWC, FHWC), as in the reference.
    return [(args["_dtype"], args["_axes"].layout)]


def _rrc_shape(shapes, args):
    return [_shape_with(shapes[0], args["_axes"], args["_size"], RANDOM_RESIZED_CROP)]


def _window_geometry(anchor, extent, args):
    """The Geometry that resizes the window (anchor, extent), both (y, x), to ``size``."""
    lo = [float(anchor[0]), float(anchor[1])]
    hi = [float(anchor[0] + extent[0]), float(anchor[1] + extent[1])]
    return Geometry(args["_size"], lo, hi)


def _crop_and_resize(image, anchor, extent, args):
    """Resize the window (anchor, extent), both (y, x), of one sample to ``size``."""
    geometry = _window_geometry(anchor, extent, args)
    return run_geometry(RANDOM_RESIZED_CROP, image, args["_axes"], geometry, args, args["_dtype"].numpy)


def _image_extents(shapes, axes):
    return np.array([[s[axes.height], s[axes.width]] for s in shapes], np.int64).reshape(-1, 2)


def _rrc_kernel(arrays, args):
    image = arrays[0]
    anchor, extent = _crop_windows(
        args["rng"].generator(), _image_extents([image.shape], args["_axes"]), args
    )
    return _crop_and_resize(image, anchor[0], extent[0], args)


def _rrc_batch_kernel(inputs, sample_args, batch_size, ctx):
    if batch_size == 0:
        return [[]]
    data = inputs[0]
    samples = batch_samples_of(data, batch_size)
    first = sample_args[0]
    # All windows come from one generator, in sample order, as random_crop_generator draws them.
    anchor, extent = _crop_windows(
        first["rng"].generator(), _image_extents([s.shape for s in samples], first["_axes"]), first
    )

    def one(i):
        return _crop_and_resize(samples[i], anchor[i], extent[i], sample_args[i])

    if batch_size > 1 and sum(s.nbytes for s in samples) >= _PARALLEL_MIN_BYTES:
        return [ctx.thread_pool.map(one, range(batch_size))]
    return [[one(i) for i in range(batch_size)]]


RANDOM_RESIZED_CROP = Operator(
    "random_resized_crop",
    inputs=[Input("input", doc="Images or sequences (HWC, CHW, FHWC, FCHW, CFHW).")],
    args=[
        ANTIALIAS_ARG,
        DTYPE_ARG,
        INTERP_ARGS[0],
        INTERP_ARGS[1],
        INTERP_ARGS[2],
        HINT_ARGS[0],
        Arg("num_attempts", "int", 10, doc="How many random windows to try before the fallback window."),
        Arg(
            "random_area",
            "float_list",
            [0.08, 1.0],
            doc="``[lo, hi]``: range of the window's area as a fraction of the image area.",
            type_doc="float or list of float",
        ),
        Arg(
            "random_aspect_ratio",
            "float_list",
            CROP_ASPECT_RATIO_DEFAULT,
            doc="``[lo, hi]``: range of the window's aspect ratio (width / height), drawn log-uniformly.",
            type_doc="float or list of float",
        ),
        Arg("size", "int_list", doc="Output extents (H, W), or one for both.", type_doc="int or list of int"),
        HINT_ARGS[1],
        RNG_ARG,
    ],
    prepare_args=_rrc_prepare,
    infer_types=_rrc_types,
    infer_shape=_rrc_shape,
    kernel=_rrc_kernel,
    batch_kernel=_rrc_batch_kernel,
    doc="Crop a random window (random area fraction and aspect ratio) and resize it to ``size``.\n\n"
    "The window is chosen as ``random_crop_generator`` chooses it (the same windows for the same "
    "random key) and resampled directly from the input; all frames of a sequence share a window.",
)


# -- resize_crop_mirror ----------------------------------------------------------------------


def _rcm_prepare(ins, args):
    op = RESIZE_CROP_MIRROR
    x = ins[0]
    args["_axes"] = image_axes(op, x._layout, x.ndim)
    args["_dtype"] = _output_dtype(op, x, args)
    args["_size_methods"] = _size_methods(op, args)
    if not _pending(args):
        _check_size_methods(op, args)


def _crop_extents(op, args, axes):
    """The crop window's extents, one per spatial axis (None: no crop); as in ``crop``,
    presence decides which arguments give the window."""
    ndim = len(axes.spatial)
    names = {"D": "crop_d", "H": "crop_h", "W": "crop_w"}
    given = {letter: op.given(args, name) for letter, name in names.items()}
    if op.given(args, "crop"):
        if any(given.values()):
            raise InvalidArgumentError(
                f"{op.qualname}: 'crop' cannot be combined with 'crop_h'/'crop_w'/'crop_d'"
            )
        return _per_axis(op.qualname, "crop", args["crop"], ndim, f"layout {axes.layout}")
    if given["H"] != given["W"]:
        raise InvalidArgumentError(f"{op.qualname}: 'crop_h' and 'crop_w' must be given together")
    if not any(given.values()):
        return None
    return [args[names[axes.layout[a]]] for a in axes.spatial]


def _rcm_geometry(args, shape):
    """The resize geometry narrowed to the crop window (and flipped by ``mirror``)."""
    op = RESIZE_CROP_MIRROR
    axes = args["_axes"]
    geometry = sample_geometry(op, args, shape, axes)
    crop = _crop_extents(op, args, axes)
    if crop is None:
        crop = list(geometry.sizes)
    positions = {"D": args["crop_pos_z"], "H": args["crop_pos_y"], "W": args["crop_pos_x"]}
    mirror_bits = {"D": 4, "H": 2, "W": 1}
    sizes, lo, hi = [], [], []
    for k, axis in enumerate(axes.spatial):
        name = axes.layout[axis]
        extent = int(crop[k])
        if extent <= 0:  # as crop: the whole (resized) extent
            extent = geometry.sizes[k]
        # As crop: the position in single precision, scaled in double.
        position = float(np.float32(positions[name])) * (geometry.sizes[k] - extent)
        anchor = math.trunc(position) if args["rounding"] == "truncate" else math.floor(abs(position) + 0.5)
        if args["rounding"] != "truncate" and position < 0:
            anchor = -anchor
        # An image without pixels along the axis resizes to none: its window is zeros.
        scale = (geometry.hi[k] - geometry.lo[k]) / geometry.sizes[k] if geometry.sizes[k] else 0.0
        start = geometry.lo[k] + anchor * scale
        end = geometry.lo[k] + (anchor + extent) * scale
        if args["mirror"] & mirror_bits[name]:
            start, end = end, start
        sizes.append(extent)
        lo.append(start)
        hi.append(end)
    return Geometry(sizes, lo, hi)


def _rcm_shape(shapes, args):
    return [_shape_with(shapes[0], args["_axes"], _rcm_geometry(args, shapes[0]).sizes, RESIZE_CROP_MIRROR)]


def _rcm_kernel(arrays, args):
    image = arrays[0]
    geometry = _rcm_geometry(args, image.shape)
    return run_geometry(RESIZE_CROP_MIRROR, image, args["_axes"], geometry, args, args["_dtype"].numpy)


def _crop_extent_arg(name, axis_doc):
    return Arg(
        name,
        "float",
        0.0,
        per_sample=True,
        doc=f"Crop window {axis_doc} (with the other crop_* extents); 0 or less keeps the resized extent.",
    )


def _crop_pos_arg(name, axis_doc):
    return Arg(
        name,
        "float",
        0.5,
        per_sample=True,
        doc=f"Normalised {axis_doc} position of the window: ``pos * (extent - crop_extent)``.",
    )


RESIZE_CROP_MIRROR = Operator(
    "resize_crop_mirror",
    inputs=[Input("input", doc=f"Images, sequences or volumes ({_LAYOUTS_DOC}).")],
    args=[
        ANTIALIAS_ARG,
        Arg(
            "crop",
            "float_list",
            None,
            per_sample=True,
            doc="Crop window extents, one per spatial axis (D, H, W order); truncated, and 0 or less keeps "
            "the resized extent.",
            type_doc="float or list of float",
        ),
        _crop_extent_arg("crop_d", "depth (volumes)"),
        _crop_extent_arg("crop_h", "height"),
        _crop_pos_arg("crop_pos_x", "horizontal"),
        _crop_pos_arg("crop_pos_y", "vertical"),
        _crop_pos_arg("crop_pos_z", "depth"),
        _crop_extent_arg("crop_w", "width"),
        DTYPE_ARG,
        INTERP_ARGS[0],
        INTERP_ARGS[1],
        SIZE_ARGS[0],
        INTERP_ARGS[2],
        HINT_ARGS[0],
        Arg(
            "mirror",
            "int",
            0,
            per_sample=True,
            doc="Flip mask: 1 horizontal, 2 vertical, 4 depthwise (bitwise combinations).",
        ),
        *SIZE_ARGS[1:],
        Arg(
            "rounding",
            "str",
            "round",
            choices=("round", "truncate"),
            doc="How the window's start becomes whole: ``round`` (half away from zero) or ``truncate``.",
        ),
        SIZE_ARG,
        SUBPIXEL_ARG,
        HINT_ARGS[1],
    ],
    prepare_args=_rcm_prepare,
    infer_shape=_rcm_shape,
    infer_types=lambda ins, args: [(args["_dtype"], args["_axes"].layout)],
    kernel=_rcm_kernel,
    doc="Resize, then crop a window of the resized image, then flip it by ``mirror``, in one pass.\n\n"
    "The resize takes the arguments of ``resize``; the window's extents come from ``crop`` (or "
    "``crop_h``/``crop_w``/``crop_d``) and its position from ``crop_pos_*``. Only the pixels of the "
    "window are computed; a window larger than the resized image extends it with the input's borders.",
)


# -- tensor_resize -----------------------------------------------------------------------------


def _tr_axes(args, ndim, layout):
    """The resized dimensions: ``axes``, ``axis_names`` or all of them."""
    qualname = TENSOR_RESIZE.qualname
    if args["axes"] is not None and args["axis_names"] is not None:
        raise InvalidArgumentError(f"{qualname}: 'axes' and 'axis_names' are mutually exclusive")
    if args["axes"] is not None:
        return tuple(axes_from_list(qualname, args["axes"], ndim))
    if args["axis_names"] is not None:
        return tuple(axes_from_names(qualname, args["axis_names"], layout))
    return tuple(range(ndim))


def _tr_prepare(ins, args):
    x = ins[0]
    if x.ndim == 0:
        # As the reference ("Input must be at least 1D").
        raise InvalidArgumentError(
            f"{TENSOR_RESIZE.qualname}: the input must have at least 1 dimension, got 0-D data"
        )
    args["_dims"] = _tr_axes(args, x.ndim, x._layout)
    args["_dtype"] = _output_dtype(TENSOR_RESIZE, x, args)


def _tr_geometry(args, shape):
    """The resized axes (``_Dims``) and their ``Geometry``: the requested axes, then
    any other axis whose extent the mode's common scale changes."""
    qualname = TENSOR_RESIZE.qualname
    dims = args["_dims"]
    count = len(dims)
    described = f"{count} resized axes"
    sizes_given = args["sizes"] is not None and len(args["sizes"]) > 0
    scales_given = args["scales"] is not None and len(args["scales"]) > 0
    if sizes_given == scales_given:
        raise InvalidArgumentError(f"{qualname}: give exactly one of 'sizes' and 'scales'")
    extents = [shape[a] for a in dims]
    if sizes_given:
        requested = _per_axis(qualname, "sizes", args["sizes"], count, described)
    else:
        scales = _per_axis(qualname, "scales", args["scales"], count, described)
        # Scales apply to the whole input's extents, whatever the region (float32 products,
        # as the reference's).
        requested = [_f32(_f32(s) * e) for s, e in zip(scales, extents, strict=True)]
    lo, hi = [0.0] * count, [float(e) for e in extents]
    if (args["roi_start"] is None) != (args["roi_end"] is None):
        raise InvalidArgumentError(f"{qualname}: 'roi_start' and 'roi_end' must be given together")
    if args["roi_start"] is not None:
        lo = _per_axis(qualname, "roi_start", args["roi_start"], count, described)
        hi = _per_axis(qualname, "roi_end", args["roi_end"], count, described)
        lo, hi = _region(lo, hi, extents, args["roi_relative"])
    max_size = _per_axis(qualname, "max_size", args["max_size"], count, described)
    alignment = _per_axis(qualname, "alignment", args["alignment"], count, described)
    # The other axes take part as if asked to keep their extent (scale 1), as in the
    # reference: they set the scale of the "not_larger"/"not_smaller" modes and of
    # the extents left at 0, and are resized when that scale changes them.
    others = [a for a in range(len(shape)) if a not in dims]
    requested += [shape[a] for a in others]
    extents += [shape[a] for a in others]
    lo += [0.0] * len(others)
    hi += [float(shape[a]) for a in others]
    if max_size is not None:
        max_size += [0] * len(others)
    if alignment is not None:
        alignment += [0.5] * len(others)
    geometry = resize_geometry(
        requested,
        extents,
        lo,
        hi,
        mode=args["mode"],
        max_size=max_size,
        subpixel_scale=args["subpixel_scale"],
        alignment=alignment,
        rounding=args["size_rounding"] if scales_given else "round",
    )
    axes = list(dims) + others
    kept = [
        k
        for k in range(len(axes))
        if k < count or (geometry.sizes[k], geometry.lo[k], geometry.hi[k]) != (extents[k], 0.0, extents[k])
    ]
    return _Dims(tuple(axes[k] for k in kept)), Geometry(
        [geometry.sizes[k] for k in kept], [geometry.lo[k] for k in kept], [geometry.hi[k] for k in kept]
    )


def _tr_shape(shapes, args):
    out = list(shapes[0])
    dims, geometry = _tr_geometry(args, shapes[0])
    for a, n in zip(dims.spatial, geometry.sizes, strict=True):
        out[a] = n
    _check_fits(TENSOR_RESIZE, out)
    return [tuple(out)]


def _tr_kernel(arrays, args):
    data = arrays[0]
    dims, geometry = _tr_geometry(args, data.shape)
    job = resample_job(TENSOR_RESIZE, dims, geometry, args)
    return resample(data, *job, args["_dtype"].numpy, nn_columns=_tr_nn_columns(data.shape, dims, geometry))


def _tr_nn_columns(shape, dims, geometry):
    """The axis along which nearest neighbour computes its points as the columns'
    (the others step from one point to the next): as the reference, which rounds
    points that fall on a pixel edge differently in the two ways. With two or more
    axes changed, the innermost of them; with one, that axis if it is the last
    dimension, else none (the reference then resamples it as rows)."""
    changed = [
        a
        for a, n, low, high in zip(dims.spatial, geometry.sizes, geometry.lo, geometry.hi, strict=True)
        if (n, low, high) != (shape[a], 0, shape[a])
    ]
    if len(changed) >= 2 or (changed and changed[0] == len(shape) - 1):
        return max(changed)
    return -1


class _Dims:
    """The resized dimensions in the form run_geometry reads (``.spatial``)."""

    __slots__ = ("spatial",)

    def __init__(self, spatial):
        self.spatial = spatial


TENSOR_RESIZE = Operator(
    "tensor_resize",
    inputs=[Input("input", doc="Data of any dimensionality.")],
    args=[
        Arg(
            "alignment",
            "float_list",
            [0.5],
            per_sample=True,
            doc="Per resized axis, the relative point of the input region (0 start, 0.5 centre, 1 end) "
            "that keeps its place when a fractional output extent is rounded.",
            type_doc="float or list of float",
        ),
        ANTIALIAS_ARG,
        Arg(
            "axes",
            "int_list",
            None,
            doc="Indices of the resized dimensions (negative count from the end); all by default.",
            type_doc="int or list of int",
        ),
        Arg("axis_names", "layout", None, doc="Layout names of the resized dimensions.", type_doc="str"),
        DTYPE_ARG,
        INTERP_ARGS[0],
        INTERP_ARGS[1],
        SIZE_ARGS[0],
        INTERP_ARGS[2],
        HINT_ARGS[0],
        SIZE_ARGS[1],
        *SIZE_ARGS[7:],
        Arg(
            "scales",
            "float_list",
            None,
            per_sample=True,
            doc="Scale factors of the resized axes (exclusive with ``sizes``); the output extent is "
            "the input's times the scale, rounded by ``size_rounding``.",
            type_doc="float or list of float",
        ),
        Arg(
            "size_rounding",
            "str",
            "round",
            choices=("round", "truncate", "ceil"),
            doc="How extents computed from ``scales`` become whole: round (half up), truncate or ceil.",
        ),
        Arg(
            "sizes",
            "float_list",
            None,
            per_sample=True,
            doc="Output extents of the resized axes (exclusive with ``scales``; 0 means absent).",
            type_doc="float or list of float",
        ),
        SUBPIXEL_ARG,
        HINT_ARGS[1],
    ],
    prepare_args=_tr_prepare,
    infer_types=lambda ins, args: [(args["_dtype"], ins[0]._layout)],
    infer_shape=_tr_shape,
    kernel=_tr_kernel,
    doc="Resize data of any dimensionality along chosen axes.\n\n"
    "Output extents come from ``sizes`` (with ``mode`` and ``max_size`` as in ``resize``) or from "
    "``scales``; ``roi_start``/``roi_end`` select the input region of the resized axes.",
)


# -- GPU kernels ---------------------------------------------------------------------------


def _out_dtype(args):
    return args["_dtype"].numpy


def _resize_jobs(op):
    def job(a, shape):
        return resample_job(op, a["_axes"], sample_geometry(op, a, shape, a["_axes"]), a)

    def jobs(shapes, sample_args):
        return once_per_distinct(job, sample_args, shapes)

    return jobs


def _resize_attrs(shapes, sample_args):
    """save_attrs' output: each input's spatial extents."""
    if not sample_args or not sample_args[0]["save_attrs"]:
        return []
    return [
        [
            np.asarray([shape[axis] for axis in a["_axes"].spatial], np.int32)
            for shape, a in zip(shapes, sample_args, strict=True)
        ]
    ]


def _rrc_jobs(shapes, sample_args):
    if not shapes:
        return []
    first = sample_args[0]
    # The windows of all samples from one generator, in sample order, as on the CPU.
    anchor, extent = _crop_windows(first["rng"].generator(), _image_extents(shapes, first["_axes"]), first)
    # resample_job of each window (_window_geometry), with what the samples' shared
    # argument dict gives made once.
    lo = anchor.astype(np.float64).tolist()
    hi = (anchor + extent).astype(np.float64).tolist()
    common = {}
    for a in sample_args:
        if id(a) not in common:
            common[id(a)] = (
                tuple(a["_axes"].spatial),
                a["_size"],
                _filters(RANDOM_RESIZED_CROP, a),
                a["antialias"],
            )
    return [
        (axes, size, lo[i], hi[i], filters, antialias)
        for i, (axes, size, filters, antialias) in enumerate(common[id(a)] for a in sample_args)
    ]


def _rcm_jobs(shapes, sample_args):
    return [
        resample_job(RESIZE_CROP_MIRROR, a["_axes"], _rcm_geometry(a, shape), a)
        for shape, a in zip(shapes, sample_args, strict=True)
    ]


def _tr_jobs(shapes, sample_args):
    jobs = []
    for shape, a in zip(shapes, sample_args, strict=True):
        dims, geometry = _tr_geometry(a, shape)
        # (The GPU's plans take the axes as they are: no dimensions merged.)
        jobs.append(resample_job(TENSOR_RESIZE, dims, geometry, a) + (_tr_nn_columns(shape, dims, geometry),))
    return jobs


for _op in (RESIZE, EXPERIMENTAL_RESIZE):
    _op.gpu_kernel = GpuResample(_op, _resize_jobs(_op), _out_dtype, _resize_attrs)
RANDOM_RESIZED_CROP.gpu_kernel = GpuResample(RANDOM_RESIZED_CROP, _rrc_jobs, _out_dtype)
RESIZE_CROP_MIRROR.gpu_kernel = GpuResample(RESIZE_CROP_MIRROR, _rcm_jobs, _out_dtype)
TENSOR_RESIZE.gpu_kernel = GpuResample(TENSOR_RESIZE, _tr_jobs, _out_dtype)

OPERATORS = [RESIZE, EXPERIMENTAL_RESIZE, RANDOM_RESIZED_CROP, RESIZE_CROP_MIRROR, TENSOR_RESIZE]
