"""Bounding boxes and point coordinates: bb_flip, bbox_paste, bbox_rotate, box_encoder, coord_flip.

Boxes are rows of four float32 values in normalized coordinates, either
``[x, y, w, h]`` (xywh) or ``[left, top, right, bottom]`` (ltrb). The kernels
compute in float32 in the order the reference does, so that results match it
bit for bit (xywh boxes pass through ltrb: a width becomes ``(x + w) - x``).

Deliberate divergences from the reference:
- ``bb_flip`` and ``bbox_paste`` reject inputs whose element count is not a
  multiple of 4 (the reference reads past the data); ``bbox_paste`` rejects a
  ``ratio`` below 1, which the reference documents as invalid but accepts.
"""

import ctypes
import ctypes.util
import functools
import math

import numpy as np

from .._cpu import box_matching as _box_matching
from .._types import float32, int32
from .gpu_boxes import GpuBbFlip, GpuBoxEncoder, GpuCoordFlip
from .schema import Arg, Input, Operator
from .warp import rotated_size

_ONE = np.float32(1.0)
_HALF = np.float32(0.5)


def _require_float32(qualname, x, what="the input"):
    if x._dtype is not float32:
        raise TypeError(f"{qualname}: {what} must be float32, got {x._dtype}")


def _require_boxes(qualname, shapes):
    size = int(np.prod(shapes[0]))
    if size % 4:
        raise ValueError(
            f"{qualname}: the input must hold boxes of 4 coordinates, got a shape {tuple(shapes[0])} "
            f"with {size} elements"
        )


def _box_rows(array):
    """The boxes of a sample as float32 rows of 4 (a view when possible)."""
    return np.asarray(array, np.float32).reshape(-1, 4)


# -- bb_flip ------------------------------------------------------------------------


def _bb_flip_prepare(ins, args):
    _require_float32("ndd.bb_flip", ins[0])


def _same_shape_boxes(qualname):
    def infer_shape(shapes, args):
        _require_boxes(qualname, shapes)
        return [shapes[0]]

    return infer_shape


def _bb_flip_kernel(arrays, args):
    horizontal = args["horizontal"] != 0
    vertical = args["vertical"] != 0
    boxes = _box_rows(arrays[0])
    left, top, c2, c3 = boxes.T
    if args["ltrb"]:
        right, bottom = c2, c3
    else:
        right, bottom = left + c2, top + c3
    if horizontal:
        left, right = _ONE - right, _ONE - left
    if vertical:
        top, bottom = _ONE - bottom, _ONE - top
    if not args["ltrb"]:
        right, bottom = right - left, bottom - top
    return np.stack([left, top, right, bottom], axis=1).reshape(arrays[0].shape)


BB_FLIP = Operator(
    "bb_flip",
    inputs=[Input("input", doc="Boxes: float32, 4 coordinates per box (e.g. shape (N, 4)).")],
    args=[
        Arg(
            "horizontal",
            "int",
            1,
            per_sample=True,
            doc="Mirror the boxes left to right (any non-zero value).",
        ),
        Arg("ltrb", "bool", False, doc="Boxes are ``[l, t, r, b]``; ``[x, y, w, h]`` otherwise."),
        Arg(
            "vertical", "int", 0, per_sample=True, doc="Mirror the boxes top to bottom (any non-zero value)."
        ),
    ],
    prepare_args=_bb_flip_prepare,
    infer_shape=_same_shape_boxes("ndd.bb_flip"),
    kernel=_bb_flip_kernel,
    doc="Mirror normalized bounding boxes horizontally and/or vertically.\n\n"
    "A coordinate ``v`` becomes ``1 - v`` (the box's edges swap), as when the image is flipped "
    "with ``flip``.",
)


# -- bbox_paste ---------------------------------------------------------------------


def _bbox_paste_prepare(ins, args):
    _require_float32("ndd.bbox_paste", ins[0])


def _bbox_paste_kernel(arrays, args):
    ratio = args["ratio"]
    if not ratio >= 1:
        raise ValueError(f"ndd.bbox_paste: 'ratio' must be at least 1, got {ratio}")
    scale = np.float32(1.0 / ratio)
    margin = _ONE - scale
    shift_x = np.float32(args["paste_x"]) * margin
    shift_y = np.float32(args["paste_y"]) * margin
    # As in the reference, a position beyond 1 keeps the image's frame inside the canvas.
    if scale + shift_x > _ONE:
        shift_x = _ONE - scale
    if scale + shift_y > _ONE:
        shift_y = _ONE - scale
    boxes = _box_rows(arrays[0])
    out = boxes * scale
    out[:, 0] += shift_x
    out[:, 1] += shift_y
    if args["ltrb"]:
        out[:, 2] += shift_x
        out[:, 3] += shift_y
    return out.reshape(arrays[0].shape)


BBOX_PASTE = Operator(
    "bbox_paste",
    inputs=[Input("input", doc="Boxes: float32, 4 coordinates per box (e.g. shape (N, 4)).")],
    args=[
        Arg("ltrb", "bool", False, doc="Boxes are ``[l, t, r, b]``; ``[x, y, w, h]`` otherwise."),
        Arg(
            "paste_x",
            "float",
            0.5,
            per_sample=True,
            doc="Horizontal position of the pasted image in the canvas: 0 left, 1 right.",
        ),
        Arg(
            "paste_y",
            "float",
            0.5,
            per_sample=True,
            doc="Vertical position of the pasted image in the canvas: 0 top, 1 bottom.",
        ),
        Arg(
            "ratio",
            "float",
            per_sample=True,
            doc="Canvas size / image size (at least 1).",
        ),
    ],
    prepare_args=_bbox_paste_prepare,
    infer_shape=_same_shape_boxes("ndd.bbox_paste"),
    kernel=_bbox_paste_kernel,
    doc="Map normalized boxes into the frame of a canvas the image was pasted into, as ``paste`` "
    "does with the image.\n\n"
    "Coordinates shrink by ``1 / ratio`` and shift by ``paste_x * (1 - 1 / ratio)`` "
    "(``paste_y`` vertically).",
)


# -- coord_flip ---------------------------------------------------------------------

_COORD_AXES = "xyz"


def _coord_layout(qualname, layout, ndim_points):
    """The column of each coordinate: letter k of ``layout`` names column k. As in the
    reference, 1-, 2- and 3-D points live in x, xy and xyz space, and the layout must
    name those axes (a layout such as 'yz' for 2-D points is refused rather than read as
    a plane); it may name more ('xyz' for 2-D points), and an axis it puts past the
    point's columns is not flipped."""
    if not layout:
        layout = _COORD_AXES[:ndim_points]
    if set(layout) - set(_COORD_AXES) or len(set(layout)) != len(layout):
        raise ValueError(f"{qualname}: 'layout' must be made of distinct 'x', 'y', 'z', got {layout!r}")
    missing = [axis for axis in _COORD_AXES[:ndim_points] if axis not in layout]
    if missing:
        raise ValueError(
            f"{qualname}: 'layout' for {ndim_points}-D points must name {_COORD_AXES[:ndim_points]!r}, "
            f"got {layout!r} (no {' or '.join(map(repr, missing))})"
        )
    return layout


def _coord_flip_prepare(ins, args):
    _require_float32("ndd.coord_flip", ins[0])


def _coord_flip_shape(shapes, args):
    shape = shapes[0]
    if len(shape) != 2 or not 1 <= shape[1] <= 3:
        raise ValueError(
            f"ndd.coord_flip: the input must be points of shape (N, 1), (N, 2) or (N, 3), got {tuple(shape)}"
        )
    _coord_layout("ndd.coord_flip", args["layout"], shape[1])
    return [shape]


def _coord_flips(args, dims):
    """Per column of a point: whether it flips (a nonzero ``flip_<axis>``, as in the
    reference), and its mirror 2 * center (float32)."""
    layout = _coord_layout("ndd.coord_flip", args["layout"], dims)
    flips = [(False, np.float32(0.0))] * dims
    for axis in _COORD_AXES[:dims]:
        column = layout.index(axis)
        if column < dims:
            flips[column] = (args[f"flip_{axis}"] != 0, np.float32(2.0) * np.float32(args[f"center_{axis}"]))
    return flips


def _coord_flip_kernel(arrays, args):
    points = arrays[0]
    out = points.copy()
    for column, (flip, mirror) in enumerate(_coord_flips(args, points.shape[1])):
        if flip:
            np.subtract(mirror, points[:, column], out=out[:, column])
    return out


def _center_arg(axis):
    return Arg(
        f"center_{axis}",
        "float",
        0.5,
        per_sample=True,
        doc=f"The {axis} coordinate of the mirror: a flipped {axis} becomes ``2 * center_{axis} - {axis}``.",
    )


def _flip_arg(axis, default):
    return Arg(
        f"flip_{axis}", "int", default, per_sample=True, doc=f"Mirror the {axis} coordinates (0 or 1)."
    )


COORD_FLIP = Operator(
    "coord_flip",
    inputs=[Input("input", doc="Points: float32 of shape (N, D), D = 1, 2 or 3 coordinates.")],
    args=[
        _center_arg("x"),
        _center_arg("y"),
        _center_arg("z"),
        _flip_arg("x", 1),
        _flip_arg("y", 0),
        _flip_arg("z", 0),
        Arg(
            "layout",
            "layout",
            "",
            doc="Order of the coordinates of a point: an ordering of 'x', 'xy' or 'xyz' (by their "
            "count), such as 'yx' or 'zyx'; that order when empty.",
            type_doc="str",
        ),
    ],
    prepare_args=_coord_flip_prepare,
    infer_shape=_coord_flip_shape,
    kernel=_coord_flip_kernel,
    doc="Mirror point coordinates (normalized) about a center along the chosen axes.",
)


# -- box_encoder --------------------------------------------------------------------


def _encoder_prepare(ins, args):
    _require_float32("ndd.box_encoder", ins[0], "the boxes (input_0)")
    if ins[1]._dtype is not int32:
        raise TypeError(f"ndd.box_encoder: the labels (input_1) must be int32, got {ins[1]._dtype}")
    anchors = args["anchors"]
    if len(anchors) == 0 or len(anchors) % 4:
        raise ValueError(
            f"ndd.box_encoder: 'anchors' must hold 4 coordinates (ltrb) per anchor, got {len(anchors)} values"
        )
    if not 0.0 <= args["criteria"] <= 1.0:
        raise ValueError(f"ndd.box_encoder: 'criteria' must be in [0, 1], got {args['criteria']}")
    for name in ("means", "stds"):
        if len(args[name]) != 4:
            raise ValueError(f"ndd.box_encoder: '{name}' must have 4 values, got {list(args[name])}")
    if any(s == 0 for s in args["stds"]):
        raise ValueError(f"ndd.box_encoder: 'stds' must not be zero, got {list(args['stds'])}")
    args["_anchors"] = np.asarray(anchors, np.float32).reshape(-1, 4)


def _encoder_types(ins, args):
    # The encoded boxes and labels are new data: no layout, as in the reference.
    return [(float32, ""), (int32, "")]


def _encoder_shape(shapes, args):
    boxes, labels = shapes
    if len(boxes) != 2 or boxes[1] != 4:
        raise ValueError(f"ndd.box_encoder: the boxes (input_0) must have shape (N, 4), got {tuple(boxes)}")
    count = int(np.prod(labels))
    if len(labels) not in (1, 2) or (len(labels) == 2 and labels[1] != 1) or count != boxes[0]:
        raise ValueError(
            f"ndd.box_encoder: the labels (input_1) must have shape ({boxes[0]},) or ({boxes[0]}, 1) "
            f"to match the boxes, got {tuple(labels)}"
        )
    anchors = len(args["_anchors"])
    return [(anchors, 4), (anchors,)]


def _center_form(ltrb):
    """Rows of ``[cx, cy, w, h]`` from rows of ``[l, t, r, b]`` (float32)."""
    width = ltrb[:, 2] - ltrb[:, 0]
    height = ltrb[:, 3] - ltrb[:, 1]
    return np.stack(
        [(ltrb[:, 0] + ltrb[:, 2]) * _HALF, (ltrb[:, 1] + ltrb[:, 3]) * _HALF, width, height], axis=1
    )


def _box_encoder_kernel(arrays, args):
    boxes = np.asarray(arrays[0], np.float32)
    labels = arrays[1].reshape(-1)
    anchors = args["_anchors"]
    matches = _box_matching.match_anchors(boxes, anchors, args["criteria"])
    matched = matches >= 0
    out_labels = np.zeros(len(anchors), np.int32)
    out_labels[matched] = labels[matches[matched]]
    if not args["offset"]:
        out = _center_form(anchors)
        out[matched] = _center_form(boxes[matches[matched]])
        return out, out_labels
    scale = np.float32(args["scale"])
    means = np.asarray(args["means"], np.float32)
    stds = np.asarray(args["stds"], np.float32)
    gt = _center_form(boxes[matches[matched]] * scale)
    anchor = _center_form(anchors[matched] * scale)
    encoded = np.empty_like(gt)
    # Degenerate boxes or anchors give infinite offsets, as in the reference, without warnings.
    with np.errstate(divide="ignore", invalid="ignore"):
        encoded[:, :2] = (gt[:, :2] - anchor[:, :2]) / anchor[:, 2:]
        encoded[:, 2:] = np.log(gt[:, 2:] / anchor[:, 2:])
    out = np.zeros((len(anchors), 4), np.float32)
    out[matched] = (encoded - means) / stds
    return out, out_labels


# Box-anchor pairs in a batch above which samples are matched on the thread pool
# (the matching loop releases the GIL).
_PARALLEL_MIN_PAIRS = 1 << 17


def _box_encoder_batch(inputs, sample_args, batch_size, ctx):
    def one(i):
        return _box_encoder_kernel((_sample(inputs[0], i), _sample(inputs[1], i)), sample_args[i])

    pairs = (
        sum(len(_sample(inputs[0], i)) for i in range(batch_size)) * len(sample_args[0]["_anchors"])
        if batch_size
        else 0
    )
    results = (
        list(ctx.thread_pool.map(one, range(batch_size)))
        if pairs >= _PARALLEL_MIN_PAIRS
        else [one(i) for i in range(batch_size)]
    )
    return [[r[0] for r in results], [r[1] for r in results]]


BOX_ENCODER = Operator(
    "box_encoder",
    inputs=[
        Input("input_0", doc="Ground-truth boxes: float32 (N, 4), ltrb, normalized."),
        Input("input_1", doc="Their labels: int32 (N,) or (N, 1)."),
    ],
    args=[
        Arg(
            "anchors",
            "float_list",
            doc="The anchor boxes, flattened: 4 ltrb coordinates per anchor.",
            type_doc="list of float",
        ),
        Arg(
            "criteria",
            "float",
            0.5,
            doc="An anchor matches the box it overlaps most when their IoU exceeds this (in [0, 1]).",
        ),
        Arg(
            "means",
            "float_list",
            [0.0, 0.0, 0.0, 0.0],
            doc="With ``offset``: subtracted from the encoded [x, y, w, h] offsets.",
            type_doc="list of 4 float",
        ),
        Arg(
            "offset",
            "bool",
            False,
            doc="Encode matched boxes as offsets from their anchor (SSD); unmatched anchors get zeros.",
        ),
        Arg("scale", "float", 1.0, doc="With ``offset``: boxes and anchors are scaled by this first."),
        Arg(
            "stds",
            "float_list",
            [1.0, 1.0, 1.0, 1.0],
            doc="With ``offset``: the encoded offsets are divided by these (after ``means``).",
            type_doc="list of 4 float",
        ),
    ],
    prepare_args=_encoder_prepare,
    infer_types=_encoder_types,
    infer_shape=_encoder_shape,
    kernel=_box_encoder_kernel,
    batch_kernel=_box_encoder_batch,
    doc="Match ground-truth boxes to a fixed set of anchors (SSD) and encode them.\n\n"
    "Returns ``(boxes, labels)`` with one row per anchor. Every box claims the anchor it "
    "overlaps most; every other anchor takes the box it overlaps most if their IoU exceeds "
    "``criteria``. A matched anchor gets its box in ``[cx, cy, w, h]`` form (or, with "
    "``offset``, the offsets ``((cx - acx) / aw, (cy - acy) / ah, log(w / aw), log(h / ah))`` "
    "less ``means``, divided by ``stds``) and its label; an unmatched one gets itself in "
    "``[cx, cy, w, h]`` form (zeros with ``offset``) and label 0.",
)


# -- bbox_rotate --------------------------------------------------------------------

_ROTATE = "ndd.bbox_rotate"


def _rotate_prepare(ins, args):
    boxes, labels = ins
    _require_float32(_ROTATE, boxes, "the boxes")
    if labels is not None and labels._dtype is not int32:
        raise TypeError(f"{_ROTATE}: the labels must be int32, got {labels._dtype}")
    if args["bbox_layout"] not in ("xyXY", "xyWH"):
        raise ValueError(f"{_ROTATE}: 'bbox_layout' must be 'xyXY' or 'xyWH', got {args['bbox_layout']!r}")
    layout = args["shape_layout"]
    if "H" not in layout or "W" not in layout:
        raise ValueError(f"{_ROTATE}: 'shape_layout' must contain H and W, got {layout!r}")
    # 1 is rejected as in the reference (which documents [0, 1] but checks [0, 1)).
    if not 0.0 <= args["remove_threshold"] < 1.0:
        raise ValueError(f"{_ROTATE}: 'remove_threshold' must be in [0, 1), got {args['remove_threshold']}")


def _rotate_types(ins, args):
    types = [(float32, ins[0]._layout)]
    if ins[1] is not None:
        types.append((int32, ins[1]._layout))
    return types


def _rotate_shape(shapes, args):
    boxes, labels = shapes
    if len(boxes) != 2 or boxes[1] != 4:
        raise ValueError(f"{_ROTATE}: the boxes must have shape (N, 4), got {tuple(boxes)}")
    if labels is not None and (
        labels[:1] != boxes[:1] or len(labels) > 2 or (len(labels) == 2 and labels[1] != 1)
    ):
        raise ValueError(
            f"{_ROTATE}: the labels must have shape ({boxes[0]},) or ({boxes[0]}, 1), got {tuple(labels)}"
        )
    return None


def _rotation_geometry(args):
    """One sample's image (height, width), cosine and sine of the angle and canvas
    (height, width), all float32 as the reference computes them: the angle is
    converted to radians in float32 before its cosine and sine are taken."""
    shape, size = args["input_shape"], args["size"]
    return _geometry(
        args["shape_layout"],
        tuple(float(v) for v in shape),
        float(args["angle"]),
        tuple(float(v) for v in size) if size is not None else None,
        bool(args["keep_size"]),
    )


@functools.lru_cache(maxsize=1024)
def _geometry(layout, shape, angle, size, keep_size):
    """``_rotation_geometry`` of arguments made hashable (a dataset's samples share a few)."""
    # As the reference: the values where the layout puts H and W must be there (an input
    # shape of 2 values fits 'HWC'), and fractional values are truncated.
    if len(shape) <= max(layout.index("H"), layout.index("W")):
        raise ValueError(
            f"{_ROTATE}: 'input_shape' {list(shape)} has no value where 'shape_layout' {layout!r} puts H or W"
        )
    height = np.float32(math.trunc(shape[layout.index("H")]))
    width = np.float32(math.trunc(shape[layout.index("W")]))
    theta = float(np.float32(angle) * np.float32(math.pi / 180))
    if size and keep_size:
        raise ValueError(f"{_ROTATE}: 'keep_size' and 'size' are mutually exclusive")
    if size:
        if len(size) != 2:
            raise ValueError(f"{_ROTATE}: 'size' must be the canvas (height, width), got {list(size)}")
        # Fractional sizes are truncated, as the reference does.
        out_h, out_w = (np.float32(math.trunc(v)) for v in size)
    elif keep_size:
        out_h, out_w = height, width
    else:
        # The canvas rotate makes, whose parity rule decides ties at odd multiples of
        # 45 degrees as the reference's bbox_rotate does too.
        rotated = rotated_size(int(height), int(width), angle)
        out_h, out_w = (np.float32(v) for v in rotated)
    return height, width, _cosf(theta), _sinf(theta), out_h, out_w


def _libm_float_function(name):
    """The C library's single-precision ``name`` (cosf, sinf), or None without one."""
    try:
        function = getattr(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"), name)
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_float
    function.argtypes = [ctypes.c_float]
    return function


_LIBM_COSF = _libm_float_function("cosf")
_LIBM_SINF = _libm_float_function("sinf")


def _cosf(theta):
    """cos of a float32 angle as the reference takes it, with the C library's cosf: the
    double-precision cosine rounded to float32 differs from it by one step at about 2%
    of angles. Without a C library to ask, that rounded cosine."""
    return np.float32(_LIBM_COSF(theta) if _LIBM_COSF is not None else math.cos(theta))


def _sinf(theta):
    """sin of a float32 angle, as ``_cosf``."""
    return np.float32(_LIBM_SINF(theta) if _LIBM_SINF is not None else math.sin(theta))


def _rotate_rows(boxes, geometry, args):
    """Rotate boxes (float32 rows); ``geometry`` holds ``_rotation_geometry``'s values,
    each a number or a column with one value per box. Returns the rotated boxes and
    which are kept.

    Everything is float32 in the reference's order of operations, so that near-ties
    (the aspect test below at odd multiples of 45 degrees, the removal threshold) are
    decided as the reference decides them."""
    height, width, cos, sin, out_h, out_w = (np.asarray(v, np.float32) for v in geometry)
    left, top, right, bottom = boxes.T
    if args["bbox_layout"] == "xyWH":
        right, bottom = left + right, top + bottom
    # The box's sides relative to the image center, in pixels.
    if args["bbox_normalized"]:
        x0, x1 = (left - _HALF) * width, (right - _HALF) * width
        y0, y1 = (top - _HALF) * height, (bottom - _HALF) * height
    else:
        x0, x1 = left - width / np.float32(2), right - width / np.float32(2)
        y0, y1 = top - height / np.float32(2), bottom - height / np.float32(2)
    box_w, box_h = x1 - x0, y1 - y0
    # The four corners rotated counter-clockwise on screen (y points down), then placed
    # around the canvas center; one column per corner (numpy's reductions along rows of
    # four were most of the time).
    half_w, half_h = out_w / np.float32(2), out_h / np.float32(2)
    x0_cos, x1_cos, y0_sin, y1_sin = x0 * cos, x1 * cos, y0 * sin, y1 * sin
    x0_sin, x1_sin, y0_cos, y1_cos = x0 * sin, x1 * sin, y0 * cos, y1 * cos
    rx = [
        (x0_cos + y0_sin) + half_w,
        (x1_cos + y0_sin) + half_w,
        (x0_cos + y1_sin) + half_w,
        (x1_cos + y1_sin) + half_w,
    ]
    ry = [
        (y0_cos - x0_sin) + half_h,
        (y0_cos - x1_sin) + half_h,
        (y1_cos - x0_sin) + half_h,
        (y1_cos - x1_sin) + half_h,
    ]
    lo_x = np.minimum(np.minimum(rx[0], rx[1]), np.minimum(rx[2], rx[3]))
    hi_x = np.maximum(np.maximum(rx[0], rx[1]), np.maximum(rx[2], rx[3]))
    lo_y = np.minimum(np.minimum(ry[0], ry[1]), np.minimum(ry[2], ry[3]))
    hi_y = np.maximum(np.maximum(ry[0], ry[1]), np.maximum(ry[2], ry[3]))
    mode = args["mode"]
    if mode != "expand":
        # 'fixed' shrinks the enclosing box about its center to the box's own size,
        # 'halfway' by half as much. The box's sides are swapped first when the
        # rotation turned it on its side (the enclosing box's wider side is not the
        # box's), which is what the reference tests.
        encl_w, encl_h = hi_x - lo_x, hi_y - lo_y
        turned = (box_w < box_h) ^ (encl_w < encl_h)
        shrink_x = (encl_w - np.where(turned, box_h, box_w)) * _HALF
        shrink_y = (encl_h - np.where(turned, box_w, box_h)) * _HALF
        if mode == "halfway":
            shrink_x, shrink_y = shrink_x * _HALF, shrink_y * _HALF
        lo_x, hi_x = lo_x + shrink_x, hi_x - shrink_x
        lo_y, hi_y = lo_y + shrink_y, hi_y - shrink_y
    area = (hi_x - lo_x) * (hi_y - lo_y)
    zero = np.float32(0)
    lo_x, hi_x = np.clip(lo_x, zero, out_w), np.clip(hi_x, zero, out_w)
    lo_y, hi_y = np.clip(lo_y, zero, out_h), np.clip(hi_y, zero, out_h)
    inside = (hi_x - lo_x) * (hi_y - lo_y)
    # The kept fraction of the area, as a quotient: a box of no area (0 / 0) is
    # removed whatever the threshold, as in the reference.
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = inside / area >= np.float32(args["remove_threshold"])
    out = np.stack([lo_x, lo_y, hi_x, hi_y], axis=1)
    if args["bbox_layout"] == "xyWH":
        out[:, 2:] -= out[:, :2]
    if args["bbox_normalized"]:
        # Scaled by the reciprocals, as the reference does (not divided); an output
        # size of 0 gives infinities, as there.
        with np.errstate(divide="ignore", invalid="ignore"):
            out *= np.stack([_ONE / out_w, _ONE / out_h, _ONE / out_w, _ONE / out_h], axis=-1)
    return out, keep


def _bbox_rotate_kernel(arrays, args):
    boxes = np.asarray(arrays[0], np.float32).reshape(-1, 4)
    out, keep = _rotate_rows(boxes, _rotation_geometry(args), args)
    if arrays[1] is None:
        return out[keep]
    return out[keep], np.ascontiguousarray(arrays[1][keep])


def _bbox_rotate_batch(inputs, sample_args, batch_size, ctx):
    """All samples' boxes rotated together, each row with its sample's geometry."""
    has_labels = inputs[1] is not None
    if batch_size == 0:
        return [[], []] if has_labels else [[]]
    boxes = [np.asarray(_sample(inputs[0], i), np.float32).reshape(-1, 4) for i in range(batch_size)]
    counts = [len(b) for b in boxes]
    geometry = np.array([_rotation_geometry(sample_args[i]) for i in range(batch_size)])
    rows = np.repeat(geometry, counts, axis=0)
    out, keep = _rotate_rows(np.concatenate(boxes), tuple(rows.T), sample_args[0])
    bounds = np.cumsum([0, *counts])
    kept_boxes, kept_labels = [], []
    for i in range(batch_size):
        part = keep[bounds[i] : bounds[i + 1]]
        kept_boxes.append(out[bounds[i] : bounds[i + 1]][part])
        if has_labels:
            kept_labels.append(np.ascontiguousarray(_sample(inputs[1], i)[part]))
    return [kept_boxes, kept_labels] if has_labels else [kept_boxes]


def _sample(data, i):
    return data[i] if isinstance(data, list) else data


BBOX_ROTATE = Operator(
    "bbox_rotate",
    inputs=[
        Input("bboxes", doc="Boxes: float32 (N, 4) in ``bbox_layout``."),
        Input("labels", optional=True, doc="Their labels: int32 (N,) or (N, 1); removed with their boxes."),
    ],
    args=[
        Arg(
            "angle",
            "float",
            per_sample=True,
            doc="Rotation angle in degrees, counter-clockwise, as ``rotate``.",
        ),
        Arg(
            "bbox_layout",
            "layout",
            "xyXY",
            doc="'xyXY' (corners) or 'xyWH' (corner and size).",
            type_doc="str",
        ),
        Arg("bbox_normalized", "bool", True, doc="Boxes are relative to the image (0 to 1); else pixels."),
        Arg(
            "input_shape",
            "float_list",
            per_sample=True,
            doc="Shape of the image the boxes belong to, in ``shape_layout`` order (extra dimensions ignored; "
            "fractions truncated).",
            type_doc="list of int",
        ),
        Arg(
            "keep_size",
            "bool",
            False,
            doc="The rotated image keeps the input's size (as ``rotate``'s ``keep_size``).",
        ),
        Arg(
            "mode",
            "str",
            "expand",
            choices=("expand", "halfway", "fixed"),
            doc="'expand': the box enclosing the rotated box; 'fixed': the box's own size about its "
            "rotated center, width and height swapped when the rotation turned the box on its side "
            "(the enclosing box's longer side is not the box's); 'halfway': a size halfway between "
            "the two.",
        ),
        Arg(
            "remove_threshold",
            "float",
            0.1,
            doc="Boxes with less than this fraction of their area inside the canvas are removed (in [0, 1)).",
        ),
        Arg(
            "shape_layout",
            "layout",
            "HW",
            doc="Layout of ``input_shape`` (must contain H and W).",
            type_doc="str",
        ),
        Arg(
            "size",
            "float_list",
            [],
            per_sample=True,
            doc="The canvas (height, width) given to ``rotate``, if any.",
            type_doc="list of float",
        ),
    ],
    prepare_args=_rotate_prepare,
    infer_types=_rotate_types,
    infer_shape=_rotate_shape,
    kernel=_bbox_rotate_kernel,
    batch_kernel=_bbox_rotate_batch,
    doc="Rotate boxes with their image, as ``rotate`` turns the image (call it with the same angle, "
    "``keep_size`` and ``size``).\n\n"
    "Returns the boxes (and the labels, when given) in the rotated image's frame, clipped to it; "
    "boxes mostly outside it are removed (``remove_threshold``).",
)


OPERATORS = [BB_FLIP, BBOX_PASTE, BBOX_ROTATE, BOX_ENCODER, COORD_FLIP]

BB_FLIP.gpu_kernel = GpuBbFlip(BB_FLIP)
BOX_ENCODER.gpu_kernel = GpuBoxEncoder(BOX_ENCODER)
COORD_FLIP.gpu_kernel = GpuCoordFlip(COORD_FLIP, _coord_flips)
