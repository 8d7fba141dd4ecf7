"""Operators that compose images and sequences: erase, paste, multi_paste,
grid_mask, sequence_rearrange and per_frame.

Fractional positions follow the reference: region bounds, canvas sizes and paste
positions are computed in single precision and truncated toward zero.

Deliberate divergences from the reference:
- ``erase`` of an input without a layout and without ``axes`` raises a clear error
  (the reference crashes the process).
- ``grid_mask`` masks the layout's H and W: the channels of a CHW image, the frames
  of FHWC/FCHW sequences and the slices of DHWC volumes each get the same grid. The
  reference takes the first two dimensions as the rows and columns whatever the
  layout (CHW is masked as if it were HWC), and crashes on ``HW`` images. Inputs of
  more than 3 dimensions without H and W in their layout are refused.
"""

import functools
import math

import numpy as np

from .._cpu import grid_mask as _grid_mask
from .._memory import exceeds_half_of_memory
from .._prepare.args import REQUIRED, InvalidArgumentError
from .._types import bool as bool_type
from .._types import uint8
from .axes import INPUT_LAYOUT, record_layout
from .conversions import c_cast, convert_saturating, round_half_away
from .gpu_compose import GpuErase, GpuGridMask, GpuMultiPaste, GpuPaste, GpuRearrange
from .gpu_layout import GpuView
from .image_layout import known_ndim
from .schema import Arg, Input, Operator, batch_samples_of

_f32 = np.float32


@functools.lru_cache(maxsize=256)
def _cast_fill(values, dtype):
    """``c_cast`` of a tuple of fill values (an argument given once for every sample),
    cached, hence read-only."""
    fill = c_cast(values, dtype)
    fill.flags.writeable = False
    return fill


def _channel_fill(op, name, values, layout, shape, dtype):
    """Fill values converted as a C cast does, shaped to broadcast over a sample:
    one value, or one per channel along the layout's C axis."""
    fill = _cast_fill(values, dtype) if type(values) is tuple else c_cast(values, dtype)
    if fill.size == 1:
        return fill.reshape(())
    channel = layout.find("C") if layout else -1
    channels = shape[channel] if channel >= 0 else 0
    if fill.size != channels:
        raise InvalidArgumentError(
            f"{op.qualname}: '{name}' must have 1 value or one per channel ({channels}), got {fill.size}"
        )
    return fill.reshape([-1 if d == channel else 1 for d in range(len(shape))])


# --- erase ---------------------------------------------------------------------------

_ERASE_AXES = Arg(
    "axes",
    "int_list",
    [1, 0],
    doc="Indices of the dimensions the regions refer to; ``axis_names``, when given, comes first.",
    type_doc="list of int",
)


def _erase_axes(args, layout, ndim):
    """The erased dimensions: those of ``axis_names`` when given (it comes before
    ``axes``, as the reference documents), else ``axes`` when given, else every
    dimension of the layout but the channels."""
    names = args["axis_names"]
    if names is None and args["axes"] is not _ERASE_AXES.converted_default:
        axes = []
        for a in args["axes"]:
            if not -ndim <= a < ndim:
                raise InvalidArgumentError(f"ndd.erase: 'axes' has axis {a}, out of range for {ndim}-D input")
            axes.append(a % ndim)
        if not axes:
            raise InvalidArgumentError("ndd.erase: 'axes' is empty; it must name the erased dimensions")
        return axes
    if not layout:
        raise InvalidArgumentError(
            "ndd.erase: the input has no layout to find 'axis_names' in; give the layout or 'axes'"
        )
    if names is None:  # as the reference: every axis but the channels (F, D, H, W)
        return [a for a, ch in enumerate(layout) if ch != "C"]
    if not names:
        raise InvalidArgumentError("ndd.erase: 'axis_names' is empty; it must name the erased dimensions")
    for ch in names:
        if ch not in layout:
            raise InvalidArgumentError(
                f"ndd.erase: 'axis_names' has {ch!r}, which is not in the input layout {layout!r}"
            )
    return [layout.index(ch) for ch in names]


def _erase_regions(args, layout, shape):
    """[(axis, start, end) per erased axis] for every region, clipped to the sample."""
    axes = _erase_axes(args, layout, len(shape))
    anchor, size = list(args["anchor"]), list(args["shape"])
    if not anchor:
        anchor = [0.0] * len(size)  # as the reference: regions start at 0
    if len(anchor) != len(size):
        raise InvalidArgumentError(
            f"ndd.erase: 'anchor' and 'shape' must have as many values, got {len(anchor)} and {len(size)}"
        )
    if not size:
        return []
    if len(size) % len(axes):
        raise InvalidArgumentError(
            f"ndd.erase: 'shape' must have a multiple of {len(axes)} values (one per erased axis), "
            f"got {len(size)}"
        )
    scale_anchor = args["normalized"] or args["normalized_anchor"]
    scale_shape = args["normalized"] or args["normalized_shape"]
    regions = []
    for r in range(len(size) // len(axes)):
        region = []
        for k, axis in enumerate(axes):
            extent = shape[axis]
            start, length = _f32(anchor[r * len(axes) + k]), _f32(size[r * len(axes) + k])
            if scale_anchor:
                start *= _f32(extent)
            if scale_shape:
                length *= _f32(extent)
            if args["centered_anchor"]:
                start -= length / _f32(2)
            lo, hi = int(start), int(start + length)
            region.append((axis, min(max(lo, 0), extent), min(max(hi, 0), extent)))
        regions.append(region)
    return regions


def _erase_prepare(ins, args):
    record_layout(ins, args)
    for name in ("normalized_anchor", "normalized_shape"):
        if args["normalized"] and args[name]:
            raise InvalidArgumentError(
                f"ndd.erase: 'normalized' and '{name}' are mutually exclusive ('normalized' is both)"
            )
    if type(args["fill_value"]) is tuple and not args["fill_value"]:
        args["fill_value"] = (0.0,)  # as the reference: no fill value fills with 0


def _erase_kernel(arrays, args):
    data = arrays[0]
    layout = args[INPUT_LAYOUT]
    regions = _erase_regions(args, layout, data.shape)
    fill = _channel_fill(ERASE, "fill_value", args["fill_value"], layout, data.shape, data.dtype)
    if not regions:
        return data
    out = data.copy()
    for region in regions:
        index = [slice(None)] * data.ndim
        for axis, lo, hi in region:
            index[axis] = slice(lo, hi)
        target = out[tuple(index)]
        target[...] = fill if fill.ndim == 0 else np.broadcast_to(fill, data.shape)[tuple(index)]
    return out


def _erase_shape(shapes, args):
    shape = shapes[0]
    _erase_regions(args, args[INPUT_LAYOUT], shape)
    return [shape]


ERASE = Operator(
    "erase",
    inputs=[Input("input", doc="The data to erase regions of.")],
    args=[
        Arg(
            "anchor",
            "float_list",
            [],
            per_sample=True,
            rows=True,
            doc="Start of each region, one value per erased axis, regions one after another (or one row "
            "per region); 0 for every region when omitted.",
            type_doc="list of float",
        ),
        _ERASE_AXES,
        Arg(
            "axis_names",
            "layout",
            None,
            doc="Layout names of the dimensions the regions refer to; by default every dimension but "
            "the channels ('C'), in layout order: H and W of an image, F or D too of a sequence or "
            "volume.",
            type_doc="str",
        ),
        Arg(
            "centered_anchor",
            "bool",
            False,
            doc="Whether ``anchor`` is the center of each region rather than its start.",
            type_doc="bool",
        ),
        Arg(
            "fill_value",
            "float_list",
            [0.0],
            per_sample=True,
            doc="Value of the erased elements: one, or one per channel (converted as a C cast).",
            type_doc="float or list of float",
            nonfinite=True,
        ),
        Arg(
            "normalized",
            "bool",
            False,
            doc="Whether ``anchor`` and ``shape`` are fractions of the extent.",
            type_doc="bool",
        ),
        Arg(
            "normalized_anchor",
            "bool",
            False,
            doc="Whether ``anchor`` is a fraction of the extent.",
            type_doc="bool",
        ),
        Arg(
            "normalized_shape",
            "bool",
            False,
            doc="Whether ``shape`` is a fraction of the extent.",
            type_doc="bool",
        ),
        Arg(
            "shape",
            "float_list",
            [],
            per_sample=True,
            rows=True,
            doc="Size of each region, one value per erased axis, regions one after another (or one row per "
            "region).",
            type_doc="list of float",
        ),
    ],
    prepare_args=_erase_prepare,
    infer_shape=_erase_shape,
    kernel=_erase_kernel,
    doc="Fill rectangular regions of the data with a value.\n\n"
    "Region bounds are truncated toward zero (start and start + size) and clipped to the data; "
    "without ``anchor`` and ``shape`` nothing is erased.",
)


# --- paste -----------------------------------------------------------------------------


def _paste_types(ins, args):
    x = ins[0]
    if x._dtype != uint8:
        raise InvalidArgumentError(f"ndd.paste: the input must be uint8, got {x._dtype}")
    if x._layout and x._layout != "HWC":
        raise InvalidArgumentError(f"ndd.paste: the input layout must be HWC, got {x._layout!r}")
    n = args["n_channels"]
    if len(args["fill_value"]) not in (1, n):
        raise InvalidArgumentError(
            f"ndd.paste: 'fill_value' must have 1 value or 'n_channels' ({n}), got {len(args['fill_value'])}"
        )
    return [(uint8, "HWC")]


def _paste_plan(args, shape):
    if len(shape) != 3:
        raise InvalidArgumentError(f"ndd.paste: the input must be an HWC image, got shape {tuple(shape)}")
    # The channels are the input's, whatever 'n_channels' says (as in the reference, which
    # then cycles a fill colour of another length through the canvas; ndd refuses it).
    if len(args["fill_value"]) not in (1, shape[2]):
        raise InvalidArgumentError(
            f"ndd.paste: 'fill_value' must have 1 value or one per channel ({shape[2]}), "
            f"got {len(args['fill_value'])}"
        )
    ratio = _f32(args["ratio"])
    if not ratio >= 1:
        raise InvalidArgumentError(f"ndd.paste: 'ratio' must be at least 1, got {args['ratio']}")
    for name in ("paste_x", "paste_y"):
        if not 0 <= args[name] <= 1:
            raise InvalidArgumentError(f"ndd.paste: '{name}' must be within [0, 1], got {args[name]}")
    if not args["min_canvas_size"] >= 0:
        raise InvalidArgumentError(
            f"ndd.paste: 'min_canvas_size' must not be negative, got {args['min_canvas_size']}"
        )
    height, width = shape[0], shape[1]
    low = _f32(args["min_canvas_size"])
    canvas_h = int(max(_f32(height) * ratio, low))
    canvas_w = int(max(_f32(width) * ratio, low))
    top = int(_f32(canvas_h - height) * _f32(args["paste_y"]))
    left = int(_f32(canvas_w - width) * _f32(args["paste_x"]))
    return (canvas_h, canvas_w, shape[2]), top, left


def _paste_shape(shapes, args):
    return [_paste_plan(args, shapes[0])[0]]


def _paste_kernel(arrays, args):
    data = arrays[0]
    out_shape, top, left = _paste_plan(args, data.shape)
    out = np.empty(out_shape, dtype=np.uint8)
    # One canvas row of the fill colour, then only the canvas around the image is filled,
    # row by row (filling every pixel with a 3-value colour is numpy's slow broadcast).
    row = np.empty(out_shape[1:], np.uint8)
    row[...] = c_cast(args["fill_value"], np.dtype(np.uint8))
    height, width = data.shape[:2]
    bottom, right = top + height, left + width
    out[:top] = row
    out[bottom:] = row
    out[top:bottom, :left] = row[:left]
    out[top:bottom, right:] = row[right:]
    out[top:bottom, left:right] = data
    return out


PASTE = Operator(
    "paste",
    inputs=[Input("input", doc="uint8 HWC images.")],
    args=[
        Arg(
            "fill_value",
            "int_list",
            REQUIRED,
            doc="Color of the canvas: one value, or one per channel (converted as a C cast).",
            type_doc="int or list of int",
        ),
        Arg(
            "min_canvas_size",
            "float",
            0.0,
            per_sample=True,
            doc="Smallest height and width of the canvas.",
            type_doc="float",
        ),
        Arg(
            "n_channels",
            "int",
            3,
            doc="The number of values of ``fill_value`` when it has more than one; the channels "
            "are the input's, as in the reference.",
            type_doc="int",
        ),
        Arg(
            "paste_x",
            "float",
            0.5,
            per_sample=True,
            doc="Horizontal position of the image on the canvas: 0 left, 1 right.",
            type_doc="float",
        ),
        Arg(
            "paste_y",
            "float",
            0.5,
            per_sample=True,
            doc="Vertical position of the image on the canvas: 0 top, 1 bottom.",
            type_doc="float",
        ),
        Arg(
            "ratio",
            "float",
            REQUIRED,
            per_sample=True,
            doc="Canvas size over image size (at least 1).",
            type_doc="float",
        ),
    ],
    infer_types=_paste_types,
    infer_shape=_paste_shape,
    kernel=_paste_kernel,
    doc="Place each image on a larger canvas of one color (zoom-out augmentation).\n\n"
    "The canvas is ``ratio`` times the image (at least ``min_canvas_size``), truncated to whole "
    "pixels; the image starts at ``(canvas - image) * paste_y`` rows and ``* paste_x`` columns, "
    "truncated.",
)


# --- grid_mask -------------------------------------------------------------------------


def _grid_mask_types(ins, args):
    x = ins[0]
    return [(x._dtype, x._layout)]


def _grid_planes(layout, shape):
    """(planes, height, width, elements per pixel): the sample seen as ``planes``
    images of (height, width, pixel) masked alike. The rows and columns are the
    layout's H and W, or the first two dimensions of a 2-D or 3-D sample without
    them (HW, HWC); the dimensions before them (channels of CHW, frames, slices)
    make the planes, those after them the pixel."""
    if "H" in layout and "W" in layout:
        rows = layout.index("H")
        if layout.index("W") != rows + 1:
            raise InvalidArgumentError(
                f"ndd.grid_mask: the input's layout must have W right after H, got '{layout}'"
            )
    elif len(shape) in (2, 3):
        rows = 0
    else:
        raise InvalidArgumentError(
            f"ndd.grid_mask: an input of {len(shape)} dimensions needs a layout with H and W "
            f"(HWC, CHW, FHWC, DHWC...), got shape {tuple(shape)} and layout '{layout}'"
        )
    return (
        math.prod(shape[:rows]),
        shape[rows],
        shape[rows + 1],
        math.prod(shape[rows + 2 :]),
    )


def _grid_coefficients(args):
    """(cos, sin, shift_x, shift_y, ratio) of a sample's grid, in tiles (float32)."""
    tile = _grid_tile(args)
    # Grid coordinates in tiles, rotated by 'angle', single precision as in the reference.
    cos_t = _f32(np.cos(_f32(args["angle"]))) / _f32(tile)
    sin_t = _f32(np.sin(_f32(args["angle"]))) / _f32(tile)
    shift_x = _f32(args["shift_x"]) / _f32(tile)
    shift_y = _f32(args["shift_y"]) / _f32(tile)
    return cos_t, sin_t, shift_x, shift_y, _f32(args["ratio"])


def _grid_tile(args):
    tile = args["tile"]
    if tile <= 0:
        raise InvalidArgumentError(f"ndd.grid_mask: 'tile' must be positive, got {tile}")
    return tile


def _grid_mask_shape(shapes, args):
    _grid_planes(args[INPUT_LAYOUT], shapes[0])
    _grid_tile(args)
    return [shapes[0]]


def _grid_mask_kernel(arrays, args):
    data = arrays[0]
    planes, height, width, pixel = _grid_planes(args[INPUT_LAYOUT], data.shape)
    coefficients = _grid_coefficients(args)
    # Channels of CHW, frames of a sequence, slices of a volume: the same grid on each.
    source = data.reshape(planes, height, width, pixel)
    return _grid_mask.grid_mask(source, *coefficients).reshape(data.shape)


GRID_MASK = Operator(
    "grid_mask",
    inputs=[
        Input(
            "input",
            doc="Images (HWC, CHW, ...), sequences (FHWC) or volumes (DHWC): one grid for all frames.",
        )
    ],
    args=[
        Arg(
            "angle", "float", 0.0, per_sample=True, doc="Rotation of the grid, in radians.", type_doc="float"
        ),
        Arg(
            "ratio",
            "float",
            0.5,
            per_sample=True,
            doc="Side of the black squares as a fraction of ``tile``.",
            type_doc="float",
        ),
        Arg("shift_x", "float", 0.0, per_sample=True, doc="Horizontal offset of the grid.", type_doc="float"),
        Arg("shift_y", "float", 0.0, per_sample=True, doc="Vertical offset of the grid.", type_doc="float"),
        Arg("tile", "int", 100, per_sample=True, doc="Period of the grid, in pixels.", type_doc="int"),
    ],
    prepare_args=record_layout,
    infer_types=_grid_mask_types,
    infer_shape=_grid_mask_shape,
    kernel=_grid_mask_kernel,
    doc="GridMask augmentation: set to 0 the pixels of a regular grid of squares.\n\n"
    "A pixel (x, y) is zeroed when both coordinates of its position in the grid, rotated by "
    "``angle`` and shifted by ``shift_x``/``shift_y``, fall in the first ``ratio`` of a tile.",
)


# --- GPU kernels -------------------------------------------------------------------------


def _erase_gpu_fill(args, shape, dtype):
    layout = args[INPUT_LAYOUT]
    fill = _channel_fill(ERASE, "fill_value", args["fill_value"], layout, shape, dtype)
    return fill.reshape(-1), (layout.find("C") if fill.size > 1 else None)


ERASE.gpu_kernel = GpuErase(
    ERASE, lambda args, shape: _erase_regions(args, args[INPUT_LAYOUT], shape), _erase_gpu_fill
)
PASTE.gpu_kernel = GpuPaste(
    PASTE, _paste_plan, lambda args: c_cast(args["fill_value"], np.dtype(np.uint8)).reshape(-1)
)
GRID_MASK.gpu_kernel = GpuGridMask(
    GRID_MASK, lambda args, shape: _grid_planes(args[INPUT_LAYOUT], shape), _grid_coefficients
)


# --- sequence_rearrange ----------------------------------------------------------------


def _rearrange_types(ins, args):
    x = ins[0]
    if x._layout and x._layout[0] != "F":
        raise InvalidArgumentError(
            f"ndd.sequence_rearrange: the input layout must start with 'F' (frames), got {x._layout!r}"
        )
    return [(x._dtype, x._layout)]


def _rearrange_shape(shapes, args):
    shape = shapes[0]
    order = args["new_order"]
    if len(shape) < 2:
        raise InvalidArgumentError(
            f"ndd.sequence_rearrange: the input must have frames of at least 1 dimension, got shape {tuple(shape)}"
        )
    if not order:
        raise InvalidArgumentError("ndd.sequence_rearrange: 'new_order' must not be empty")
    for i, index in enumerate(order):
        if not 0 <= index < shape[0]:
            raise InvalidArgumentError(
                f"ndd.sequence_rearrange: 'new_order'[{i}] must be within [0, {shape[0]}) (the frames of "
                f"the sequence), got {index}"
            )
    return [(len(order), *shape[1:])]


def _rearrange_order(args, shape):
    """The checked frame order of a sample of ``shape``."""
    _rearrange_shape([shape], args)
    return list(args["new_order"])


def _rearrange_kernel(arrays, args):
    data = arrays[0]
    return data[np.asarray(_rearrange_order(args, data.shape), dtype=np.intp)]


SEQUENCE_REARRANGE = Operator(
    "sequence_rearrange",
    inputs=[Input("input", doc="Sequences, frames first (layout starting with F).")],
    args=[
        Arg(
            "new_order",
            "int_list",
            REQUIRED,
            per_sample=True,
            doc="Indices of the input frames that make the output, in order; frames may repeat or be left out.",
            type_doc="list of int",
        )
    ],
    infer_types=_rearrange_types,
    infer_shape=_rearrange_shape,
    kernel=_rearrange_kernel,
    doc="Reorder, repeat or drop the frames of sequences.",
)

SEQUENCE_REARRANGE.gpu_kernel = GpuRearrange(SEQUENCE_REARRANGE, _rearrange_order)


# --- per_frame -------------------------------------------------------------------------


def _per_frame_layout(layout, ndim, replace):
    if ndim == 0:
        raise InvalidArgumentError("ndd.per_frame: a 0-D input cannot be marked as a sequence")
    if not layout:
        return "F" + "*" * (ndim - 1)
    if layout[0] == "F":
        return layout
    if not replace:
        raise InvalidArgumentError(
            f"ndd.per_frame: the input layout must start with 'F' (or pass replace=True), got {layout!r}"
        )
    return "F" + layout[1:]


def _per_frame_types(ins, args):
    x = ins[0]
    ndim = known_ndim(x)
    if ndim is None:
        ndim = len(x._layout)
    return [(x._dtype, _per_frame_layout(x._layout, ndim, args["replace"]))]


PER_FRAME = Operator(
    "per_frame",
    inputs=[Input("input", doc="An argument to mark as given frame by frame.")],
    args=[
        Arg(
            "replace",
            "bool",
            False,
            doc="Replace the first layout name by F when the layout does not start with F (else an error).",
            type_doc="bool",
        )
    ],
    infer_types=_per_frame_types,
    infer_shape=lambda shapes, args: [shapes[0]],
    kernel=lambda arrays, args: arrays[0],
    doc="Mark the outer dimension of the data as frames (layout ``F...``), the way the reference "
    "marks an argument that holds one value per frame of a sequence.\n\n"
    "The data are unchanged; an input without a layout gets ``F`` followed by ``*`` for its "
    "other dimensions.",
)

# The data are unchanged: on the GPU the output is the input's memory.
PER_FRAME.gpu_kernel = GpuView(PER_FRAME, lambda in_shape, shape_values, args: in_shape)


# --- multi_paste -----------------------------------------------------------------------


def _multi_paste_types(ins, args):
    x = ins[0]
    layouts = {y._layout for y in ins if y is not None}
    if len(layouts) > 1:
        raise InvalidArgumentError(
            f"ndd.multi_paste: the inputs must share one layout, got {sorted(layouts)}"
        )
    if x._layout and x._layout != "HWC":
        raise InvalidArgumentError(f"ndd.multi_paste: the input layout must be HWC, got {x._layout!r}")
    ndim = known_ndim(x)
    if ndim is not None and ndim != 3:
        raise InvalidArgumentError(f"ndd.multi_paste: the inputs must be HWC images (3-D), got {ndim}-D data")
    for y in ins[1:]:
        if y is not None and y._dtype != x._dtype:
            raise InvalidArgumentError(
                f"ndd.multi_paste: the inputs must share one type, got {x._dtype} and {y._dtype}"
            )
    if args["in_ids"] is not None and len(ins) > 1:
        raise InvalidArgumentError(
            f"ndd.multi_paste: with 'in_ids' there must be exactly one input, got {len(ins)}"
        )
    for absolute in ("in_anchors", "shapes", "out_anchors"):
        if args[absolute] is not None and args[absolute + "_rel"] is not None:
            raise InvalidArgumentError(
                f"ndd.multi_paste: '{absolute}' and '{absolute}_rel' cannot be given together"
            )
    if args["dtype"] is not None and args["dtype"] == bool_type:
        raise InvalidArgumentError("ndd.multi_paste: 'dtype' must be a numeric type, got bool")
    return [(args["dtype"] or x._dtype, "HWC")]


def _region_table(args, name, count, kind):
    """The (count, 2) values of a per-region argument, or None when not given."""
    value = args[name]
    if value is None:
        return None
    table = np.asarray(value, dtype=np.float64 if kind == "f" else np.int64)
    if table.size == 0 and count == 0:
        return table.reshape(0, 2)
    if table.ndim == 1 and count == 1:
        table = table.reshape(1, -1)
    if table.shape != (count, 2):
        raise InvalidArgumentError(
            f"ndd.multi_paste: '{name}' must have one (y, x) pair per pasted region ({count} x 2), "
            f"got shape {table.shape}"
        )
    return table


def _scaled(table, extents, rounding):
    """Relative (y, x) pairs scaled by ``extents`` in single precision, then made whole."""
    values = table.astype(np.float32) * np.asarray(extents, dtype=np.float32)
    return rounding(values).astype(np.int64)


def _convert_rounding(region, target):
    """Values converted as the reference converts pasted data: floats to integers
    rounded half away from zero, every value saturated at the limits of ``target``."""
    if region.dtype == target:
        return region
    if target.kind in "iu":
        info = np.iinfo(target)
        if region.dtype == np.bool_:
            region = region.view(np.uint8)  # numpy cannot clip bools to integer bounds
        if region.dtype.kind == "f":
            region = round_half_away(region.astype(np.float64))
        return np.clip(region, info.min, info.max).astype(target)
    return convert_saturating(region, target)


def _paste_plan_regions(index, shapes, args, common_size):
    """Where the regions of output sample ``index`` come from and go: ``(out_size,
    channels, [(input, sample, in_y, in_x, height, width, out_y, out_x), ...])`` in
    pasting order, from the inputs' sample shapes (``shapes[input][sample]``)."""
    ids = args["in_ids"]
    if ids is not None:
        batch = shapes[0]
        for i in ids:
            if not 0 <= i < len(batch):
                raise InvalidArgumentError(
                    f"ndd.multi_paste: 'in_ids' must be within [0, {len(batch)}) (the batch size), got {i}"
                )
        sources = [(0, i) for i in ids]
    else:
        sources = [(k, index) for k in range(len(shapes))]
    count = len(sources)
    if args["output_size"] is not None:
        out_size = tuple(args["output_size"])
        if len(out_size) != 2:
            raise InvalidArgumentError(
                f"ndd.multi_paste: 'output_size' must have 2 values (height, width), got {list(out_size)}"
            )
    elif common_size is None:
        raise InvalidArgumentError(
            "ndd.multi_paste: without 'output_size' all the input samples must have the same shape"
        )
    else:
        out_size = common_size
    channels = shapes[0][index][2] if shapes[0] else 0
    pieces = [shapes[k][i] for k, i in sources]
    for piece in pieces:
        if len(piece) != 3 or piece[2] != channels:
            raise InvalidArgumentError(
                f"ndd.multi_paste: the pasted samples must be HWC images with {channels} channels, "
                f"got shape {tuple(piece)}"
            )
    in_sizes = np.array([p[:2] for p in pieces], dtype=np.int64).reshape(count, 2)
    in_anchors = _region_table(args, "in_anchors", count, "i")
    if in_anchors is None:
        rel = _region_table(args, "in_anchors_rel", count, "f")
        in_anchors = np.zeros((count, 2), np.int64) if rel is None else _scaled(rel, in_sizes, np.trunc)
    sizes = _region_table(args, "shapes", count, "i")
    if sizes is None:
        rel = _region_table(args, "shapes_rel", count, "f")
        sizes = in_sizes - in_anchors if rel is None else _scaled(rel, in_sizes, np.ceil)
    out_anchors = _region_table(args, "out_anchors", count, "i")
    if out_anchors is None:
        rel = _region_table(args, "out_anchors_rel", count, "f")
        out_anchors = np.zeros((count, 2), np.int64) if rel is None else _scaled(rel, [out_size], np.trunc)
    regions = []
    for k, (piece, (iy, ix), (h, w), (oy, ox)) in enumerate(
        zip(pieces, in_anchors.tolist(), sizes.tolist(), out_anchors.tolist(), strict=True)
    ):
        if min(iy, ix, h, w) < 0 or iy + h > piece[0] or ix + w > piece[1]:
            raise InvalidArgumentError(
                f"ndd.multi_paste: region {k} (anchor {[int(iy), int(ix)]}, shape {[int(h), int(w)]}) is not "
                f"within its input of shape {tuple(piece[:2])}"
            )
        if oy < 0 or ox < 0 or oy + h > out_size[0] or ox + w > out_size[1]:
            raise InvalidArgumentError(
                f"ndd.multi_paste: region {k} pasted at {[int(oy), int(ox)]} with shape {[int(h), int(w)]} "
                f"is not within the output of size {list(out_size)}"
            )
        regions.append((*sources[k], iy, ix, h, w, oy, ox))
    return out_size, channels, regions


def _paste_regions(index, sources, shapes, args, target, common_size):
    """The output sample ``index``: the regions pasted, in order, onto a zero canvas;
    ``shapes[input][sample]`` are the shapes of ``sources``."""
    out_size, channels, regions = _paste_plan_regions(index, shapes, args, common_size)
    # Each sample's canvas is allocated as it is pasted: a mistyped size would have the
    # process killed.
    if exceeds_half_of_memory(math.prod(out_size) * channels * np.dtype(target).itemsize):
        raise InvalidArgumentError(
            f"ndd.multi_paste: 'output_size' {list(out_size)} with {channels} channels would fill more "
            "than half of this machine's memory"
        )
    out = np.zeros((*out_size, channels), dtype=target)
    for k, i, iy, ix, h, w, oy, ox in regions:
        piece = sources[k][i]
        out[oy : oy + h, ox : ox + w] = _convert_rounding(piece[iy : iy + h, ix : ix + w], target)
    return out


def _multi_paste_batch_kernel(inputs, sample_args, batch_size, ctx):
    sources = [batch_samples_of(x, batch_size) for x in inputs if x is not None]
    shapes = [[s.shape for s in source] for source in sources]
    sizes = {shape[:2] for shape in shapes[0]}
    common_size = sizes.pop() if len(sizes) == 1 else None
    target = sample_args[0]["dtype"].numpy if sample_args and sample_args[0]["dtype"] is not None else None
    outs = []
    for i in range(batch_size):
        kind = target if target is not None else sources[0][i].dtype
        outs.append(_paste_regions(i, sources, shapes, sample_args[i], kind, common_size))
    return [outs]


def _multi_paste_kernel(arrays, args):
    sources = [[a] for a in arrays if a is not None]
    target = args["dtype"].numpy if args["dtype"] is not None else arrays[0].dtype
    shapes = [[source[0].shape] for source in sources]
    return _paste_regions(0, sources, shapes, args, target, arrays[0].shape[:2])


MULTI_PASTE = Operator(
    "multi_paste",
    inputs=[
        Input("input_0", doc="HWC images the regions are taken from."),
        Input("inputs", variadic=True, doc="More batches of HWC images: region k comes from input k."),
    ],
    args=[
        Arg("dtype", "dtype", None, doc="Output type; the input's when omitted.", type_doc="DType"),
        Arg(
            "in_anchors",
            "array",
            None,
            per_sample=True,
            doc="(y, x) start of each region in its input, one row per region; 0 by default.",
            type_doc="array of int",
        ),
        Arg(
            "in_anchors_rel",
            "array",
            None,
            per_sample=True,
            doc="``in_anchors`` as fractions of the input size (truncated).",
            type_doc="array of float",
        ),
        Arg(
            "in_ids",
            "int_list",
            None,
            per_sample=True,
            doc="Indices of the samples of the (single) input batch that the regions come from.",
            type_doc="list of int",
        ),
        Arg(
            "out_anchors",
            "array",
            None,
            per_sample=True,
            doc="(y, x) position of each region in the output; 0 by default.",
            type_doc="array of int",
        ),
        Arg(
            "out_anchors_rel",
            "array",
            None,
            per_sample=True,
            doc="``out_anchors`` as fractions of the output size (truncated).",
            type_doc="array of float",
        ),
        Arg(
            "output_size",
            "int_list",
            None,
            per_sample=True,
            doc="(height, width) of the output; the common size of the input samples by default.",
            type_doc="list of int",
        ),
        Arg(
            "shapes",
            "array",
            None,
            per_sample=True,
            doc="(height, width) of each region; up to the end of its input by default.",
            type_doc="array of int",
        ),
        Arg(
            "shapes_rel",
            "array",
            None,
            per_sample=True,
            doc="``shapes`` as fractions of the input size (rounded up).",
            type_doc="array of float",
        ),
    ],
    infer_types=_multi_paste_types,
    kernel=_multi_paste_kernel,
    batch_kernel=_multi_paste_batch_kernel,
    doc="Paste regions of several images onto new canvases (mosaic, copy-paste augmentation).\n\n"
    "Output sample i is a zero canvas onto which regions are pasted in order: from the samples "
    "``in_ids`` of the input batch, or, without ``in_ids``, from sample i of each input. Pasted "
    "values convert to ``dtype`` rounding half away from zero and saturating. Regions must lie "
    "within their input and the output.",
)

MULTI_PASTE.gpu_kernel = GpuMultiPaste(MULTI_PASTE, _paste_plan_regions)

OPERATORS = [ERASE, PASTE, GRID_MASK, SEQUENCE_REARRANGE, PER_FRAME, MULTI_PASTE]
