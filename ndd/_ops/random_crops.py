"""Random crop windows constrained by boxes or a region: random_bbox_crop, roi_random_crop.

``random_bbox_crop`` draws windows until one overlaps the boxes as asked, then
crops the boxes to it. The box arithmetic (``crop_boxes``) is deterministic and
tested against windows the reference chose; the window search
(``ndd/_cpu/crop_windows.pyx``) draws from the call's RNG, so its values differ
from the reference's but obey the same rules and have the same distributions.

An attempt whose extents miss the aspect-ratio range is spent, as in the
reference: when ``scaling`` and ``aspect_ratio`` exclude each other every
attempt fails, and the result is no crop if a no-crop round
(``allow_no_crop``) comes before the attempts run out, and otherwise an empty
window (anchor and extent 0) with no boxes, with a warning. With
``input_shape`` and no ``crop_shape``, extents and aspect ratios are in pixels
and a fixed ratio may give a window reaching out of the image, as the
reference's do.

Deliberate divergences from the reference:
- Without ``total_num_attempts`` the reference may search forever when no window
  can satisfy the thresholds; here the search stops after 100000 attempts and
  uses the best window found (the empty window when none could be drawn), with
  the same warning as ``total_num_attempts``.
- ``roi_random_crop`` reports a ROI outside ``in_shape`` or a crop larger than
  ``in_shape`` at the call when the arguments are known then.
"""

import math
import warnings

import numpy as np

from .._cpu import crop_windows as _crop_windows
from .._types import float32, int32, int64
from .random_ops import RNG_ARG, known_values
from .schema import REQUIRED, Arg, Input, Operator

_UNBOUNDED_ATTEMPTS = 100_000


def _sample_data(data, i):
    return data[i] if isinstance(data, list) else data


def _run_per_sample(one_sample, inputs, sample_args, batch_size, output_count):
    outputs = [[] for _ in range(output_count)]
    for i in range(batch_size):
        args = sample_args[i]
        result = one_sample(args["rng"].sample_generator(i), [_sample_data(d, i) for d in inputs], args)
        for k, value in enumerate(result if isinstance(result, tuple) else (result,)):
            outputs[k].append(value)
    return outputs


# -- roi_random_crop ----------------------------------------------------------------

_ROI = "ndd.roi_random_crop"


def _roi_prepare(ins, args):
    if ins[0] is not None and args["in_shape"] is not None:
        raise ValueError(f"{_ROI}: 'in_shape' cannot be given together with an input")
    if (args["roi_end"] is None) == (args["roi_shape"] is None):
        raise ValueError(f"{_ROI}: give exactly one of 'roi_end' and 'roi_shape'")
    names = ("crop_shape", "roi_start", "roi_end", "roi_shape", "in_shape")
    known = [known_values(args[name]) for name in names if args[name] is not None]
    known = [values for values in known if values]
    for i in range(max((len(values) for values in known), default=0)):
        lengths = {len(values[i] if len(values) > 1 else values[0]) for values in known}
        if len(lengths) > 1:
            raise ValueError(
                f"{_ROI}: 'crop_shape', 'roi_start', 'roi_end'/'roi_shape' and 'in_shape' must have "
                f"one value per dimension, got lengths {sorted(lengths)}"
            )


def _roi_types(ins, args):
    return [(int64, "")]


def _roi_shape(shapes, args):
    return [(len(known_values(args["crop_shape"])[0]),)] if known_values(args["crop_shape"]) else None


def _where_in_batch(bad):
    """Which samples a per-sample error is about: nothing for one sample, else the
    first bad one and how many more there are (a batch may hold thousands)."""
    if bad.size == 1:
        return ""
    others = int(np.count_nonzero(bad)) - 1
    more = f" and {others} other sample{'s' if others > 1 else ''}" if others else ""
    return f" (sample {int(np.argmax(bad))}{more})"


def _refuse(bad, message):
    """Raise ValueError(``message(i)``, i the first sample where ``bad``, and which samples
    are bad) when any is."""
    if np.any(bad):
        i = np.unravel_index(np.argmax(bad), bad.shape)
        raise ValueError(message(i) + _where_in_batch(bad))


def roi_crop_range(crop, roi_start, roi_end, in_shape):
    """The lowest and highest crop start per dimension: the crop holds the ROI when
    it is larger and lies inside it otherwise, and stays inside ``in_shape`` (if given).
    The arguments are one request (one value per dimension) or rows of them."""
    crop = np.asarray(crop, np.int64)
    start = np.asarray(roi_start, np.int64)
    end = np.asarray(roi_end, np.int64)
    _refuse(
        np.any(start > end, axis=-1),
        lambda i: f"{_ROI}: the ROI's end {end[i].tolist()} must not be before its start {start[i].tolist()}",
    )
    lo = np.where(crop >= end - start, end - crop, start)
    hi = np.where(crop >= end - start, start, end - crop)
    if in_shape is not None:
        limit = np.asarray(in_shape, np.int64)
        _refuse(
            np.any(crop > limit, axis=-1),
            lambda i: f"{_ROI}: 'crop_shape' {crop[i].tolist()} is larger than the input {limit[i].tolist()}",
        )
        _refuse(
            np.any((start < 0) | (end > limit), axis=-1),
            lambda i: (
                f"{_ROI}: the ROI [{start[i].tolist()}, {end[i].tolist()}) must lie within the input "
                f"{limit[i].tolist()}"
            ),
        )
        lo = np.clip(lo, 0, limit - crop)
        hi = np.clip(hi, 0, limit - crop)
    return lo, hi


def _roi_request(data, args):
    """One sample's crop shape, ROI start and end, and the data shape (or None)."""
    crop = args["crop_shape"]
    start = args["roi_start"]
    end = args["roi_end"]
    if end is None:
        if len(args["roi_shape"]) != len(start):
            raise ValueError(f"{_ROI}: 'roi_shape' and 'roi_start' must have one value per dimension")
        end = tuple(s + n for s, n in zip(start, args["roi_shape"], strict=True))
    in_shape = args["in_shape"] if data is None else data.shape
    if data is not None and len(in_shape) > len(crop):
        # The leading dimensions are cropped (an HWC image with an [h, w] crop), as in the reference.
        in_shape = in_shape[: len(crop)]
    if in_shape is not None and len(in_shape) != len(crop):
        raise ValueError(
            f"{_ROI}: 'crop_shape' has {len(crop)} values but the input has {len(in_shape)} dimensions"
        )
    if len({len(crop), len(start), len(end)}) != 1:
        raise ValueError(
            f"{_ROI}: 'crop_shape', 'roi_start' and the ROI end must have one value per dimension"
        )
    if any(c < 0 for c in crop):
        raise ValueError(f"{_ROI}: 'crop_shape' must not be negative, got {list(crop)}")
    return crop, start, end, in_shape


def _roi_starts(generator, requests):
    """Crop starts (int64 rows) for requests of one dimensionality, drawn at once."""
    columns = list(zip(*requests, strict=True))
    limits = columns[3]
    in_shape = None if limits[0] is None else np.asarray(limits, np.int64)
    lo, hi = roi_crop_range(np.asarray(columns[0]), np.asarray(columns[1]), np.asarray(columns[2]), in_shape)
    offset = np.floor(generator.random(lo.shape) * (hi - lo + 1)).astype(np.int64)
    return lo + np.minimum(offset, hi - lo)


def _roi_kernel(arrays, args):
    return _roi_starts(args["rng"].generator(), [_roi_request(arrays[0], args)])[0]


def _roi_batch(inputs, sample_args, batch_size, ctx):
    if batch_size == 0:
        return [[]]
    requests = [_roi_request(_sample_data(inputs[0], i), sample_args[i]) for i in range(batch_size)]
    if len({len(r[0]) for r in requests}) == 1 and len({r[3] is None for r in requests}) == 1:
        return [_roi_starts(sample_args[0]["rng"].generator(), requests)]
    # Samples of different dimensionality: each drawn on its own.
    return [[_roi_starts(sample_args[i]["rng"].sample_generator(i), [r])[0] for i, r in enumerate(requests)]]


def _roi_list_arg(name, required, doc):
    return Arg(
        name,
        "int_list",
        REQUIRED if required else None,
        per_sample=True,
        doc=doc,
        type_doc="list of int",
    )


ROI_RANDOM_CROP = Operator(
    "roi_random_crop",
    inputs=[
        Input("input", optional=True, doc="Data to crop (only its shape is used); or give ``in_shape``.")
    ],
    args=[
        _roi_list_arg("crop_shape", True, "The crop window's extent per dimension."),
        _roi_list_arg("in_shape", False, "The shape of the data; the window stays inside it."),
        _roi_list_arg("roi_end", False, "The ROI's end (exclusive) per dimension; excludes ``roi_shape``."),
        _roi_list_arg("roi_shape", False, "The ROI's extent per dimension; excludes ``roi_end``."),
        _roi_list_arg("roi_start", True, "The ROI's start per dimension."),
        RNG_ARG,
    ],
    prepare_args=_roi_prepare,
    infer_types=_roi_types,
    infer_shape=_roi_shape,
    kernel=_roi_kernel,
    batch_kernel=_roi_batch,
    doc="A random start (int64, per dimension) for a crop window of ``crop_shape`` that covers "
    "as much of a region of interest as it can.\n\n"
    "A window larger than the ROI contains it; a smaller one lies inside it. With an input or "
    "``in_shape`` the window also stays inside the data. The start is uniform over the "
    "positions allowed.",
)


# -- random_bbox_crop ---------------------------------------------------------------

_BBOX = "ndd.random_bbox_crop"
_START = "xyz"
_END = "XYZ"
_EXTENT = "WHD"


def _bbox_layout(args, ndim):
    layout = args["bbox_layout"]
    if layout is None:
        if not args["ltrb"]:
            return "xyWH" if ndim == 2 else "xyzWHD"
        return "xyXY" if ndim == 2 else "xyzXYZ"
    expected = set(_START[:ndim])
    starts = {c for c in layout if c in _START}
    others = {c.lower() if c in _END else "xyz"[_EXTENT.index(c)] for c in layout if c in _END + _EXTENT}
    if len(layout) != 2 * ndim or starts != expected or others != expected or len(set(layout)) != len(layout):
        raise ValueError(
            f"{_BBOX}: 'bbox_layout' must name the start and the end or extent of each of the {ndim} "
            f"dimensions (such as {'xyXY' if ndim == 2 else 'xyzXYZ'}), got {layout!r}"
        )
    return layout


def _layout_columns(layout):
    """Per axis (x, y[, z]): the column of its start, the column of its end or extent,
    and whether that is an extent (uint8) - the form the crop_windows kernels take."""
    ndim = len(layout) // 2
    start = np.array([layout.index(c) for c in _START[:ndim]], np.int32)
    end = np.array(
        [layout.index(e if e in layout else w) for e, w in zip(_END[:ndim], _EXTENT, strict=False)], np.int32
    )
    extent = np.array([e not in layout for e in _END[:ndim]], np.uint8)
    return start, end, extent


def to_corners(boxes, layout):
    """Rows of ``[start..., end...]`` (x, y[, z] order) from boxes in ``layout``;
    None when a box leaves [0, 1] or ends before it starts."""
    return _crop_windows.layout_to_corners(boxes, *_layout_columns(layout))


def from_corners(corners, layout):
    """Boxes in ``layout`` from rows of ``[start..., end...]``."""
    return _crop_windows.corners_to_layout(corners, *_layout_columns(layout))


def _overlaps(corners, window_start, window_end):
    """Intersection volume of each box with each window, and each box's volume
    (float32). Windows are rows of ``window_start``/``window_end`` (any leading
    dimensions, or one window); the result has the windows' leading dimensions
    followed by the boxes."""
    ndim = corners.shape[1] // 2
    window_start = np.asarray(window_start)[..., None, :]
    window_end = np.asarray(window_end)[..., None, :]
    lo = np.maximum(corners[:, :ndim], window_start)
    hi = np.minimum(corners[:, ndim:], window_end)
    inter = np.prod(np.maximum(hi - lo, np.float32(0)), axis=-1, dtype=np.float32)
    volume = np.prod(corners[:, ndim:] - corners[:, :ndim], axis=1, dtype=np.float32)
    return inter, volume


def crop_metric(corners, window_start, window_end, threshold_type):
    """IoU of each box with the window(s), or the fraction of each box inside ("overlap")."""
    inter, volume = _overlaps(corners, window_start, window_end)
    if threshold_type == "overlap":
        denominator = np.broadcast_to(volume, inter.shape)
    else:
        extent = np.asarray(window_end) - np.asarray(window_start)
        window = np.prod(extent, axis=-1, dtype=np.float32)[..., None]
        denominator = volume + window - inter
    # Empty boxes (and windows) overlap nothing.
    return np.divide(inter, denominator, out=np.zeros(inter.shape, np.float32), where=denominator > 0)


def crop_boxes(corners, window_start, window_end, prune_threshold):
    """The boxes kept in one window, clipped to it and expressed relative to it (0
    to 1, float32), and their indices (int32). A window keeps the boxes whose center
    lies in it, a half-open box [start, end) (``prune_threshold`` None), or with at
    least that fraction of their volume, and some of it, inside."""
    return _crop_windows.crop_to_window(corners, window_start, window_end, prune_threshold)


def _axis_order(args, ndim, name):
    """Indices reordering ``crop_shape``/``input_shape`` (in ``shape_layout``) to x, y[, z]."""
    layout = args["shape_layout"] or _EXTENT[:ndim]
    if sorted(layout) != sorted(_EXTENT[:ndim]):
        raise ValueError(
            f"{_BBOX}: 'shape_layout' must order {_EXTENT[:ndim]!r} for {ndim}-D boxes, got {layout!r}"
        )
    return [layout.index(c) for c in _EXTENT[:ndim]]


def _ranges(name, values, pairs):
    """``pairs`` ranges [lo, hi] from a flat list of 2 (repeated) or 2 * pairs values."""
    values = list(values)
    if len(values) == 2:
        values = values * pairs
    if len(values) != 2 * pairs:
        counts = "2" if pairs == 1 else f"2 or {2 * pairs}"
        raise ValueError(f"{_BBOX}: '{name}' must have {counts} values, got {values}")
    ranges = [(values[2 * k], values[2 * k + 1]) for k in range(pairs)]
    for lo, hi in ranges:
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise ValueError(
                f"{_BBOX}: '{name}' ranges must be finite [min, max] with min <= max, got {values}"
            )
    return ranges


def _bbox_prepare(ins, args):
    boxes, labels = ins
    if boxes._dtype is not float32:
        raise TypeError(f"{_BBOX}: the boxes must be float32, got {boxes._dtype}")
    if labels is not None and labels._dtype is not int32:
        raise TypeError(f"{_BBOX}: the labels must be int32, got {labels._dtype}")
    if args["total_num_attempts"] == 0 or args["total_num_attempts"] < -1:
        raise ValueError(
            f"{_BBOX}: 'total_num_attempts' must be greater than zero (or -1: no limit), "
            f"got {args['total_num_attempts']}"
        )
    if args["ltrb"] is not None and args["bbox_layout"] is not None:
        raise ValueError(f"{_BBOX}: 'ltrb' is a deprecated form of 'bbox_layout'; give only 'bbox_layout'")
    if args["ltrb"] is not None:
        warnings.warn(
            f"{_BBOX}: 'ltrb' is deprecated; use bbox_layout='xyXY' (ltrb=True) or 'xyWH' (ltrb=False)",
            DeprecationWarning,
            stacklevel=3,
        )
    else:
        args["ltrb"] = True
    if args["crop_shape"] is not None:
        if args["input_shape"] is None:
            raise ValueError(f"{_BBOX}: 'input_shape' must be given with 'crop_shape'")
        for name in ("scaling", "aspect_ratio"):
            if args[name] is not None:
                raise ValueError(f"{_BBOX}: '{name}' cannot be given together with 'crop_shape'")
    scaling = args["scaling"] or (1.0, 1.0)
    args["_scaling"] = _ranges("scaling", scaling, 1)[0]
    if args["_scaling"][0] < 0:
        raise ValueError(f"{_BBOX}: 'scaling' must not be negative, got {list(scaling)}")
    aspect = args["aspect_ratio"] or (1.0, 1.0)
    if len(aspect) not in (2, 6) or min(aspect) <= 0:
        raise ValueError(f"{_BBOX}: 'aspect_ratio' must be 2 or 6 positive values, got {list(aspect)}")
    # Each range is checked at the call, as the reference does, not when a window is
    # first drawn (a first round without a crop would pass a reversed range).
    _ranges("aspect_ratio", aspect, len(aspect) // 2)
    args["_aspect"] = tuple(aspect)
    thresholds = args["thresholds"]
    if len(thresholds) == 0:
        raise ValueError(f"{_BBOX}: 'thresholds' must not be empty")
    if not all(0.0 <= t <= 1.0 for t in thresholds):
        raise ValueError(f"{_BBOX}: 'thresholds' must lie in [0, 1], got {list(thresholds)}")
    if args["num_attempts"] < 1:
        raise ValueError(f"{_BBOX}: 'num_attempts' must be at least 1, got {args['num_attempts']}")
    prune = args["bbox_prune_threshold"]
    if prune is not None and not 0.0 <= prune <= 1.0:
        raise ValueError(f"{_BBOX}: 'bbox_prune_threshold' must be in [0, 1], got {prune}")


def _bbox_types(ins, args):
    # The kept boxes and labels are new data: no layout, as in the reference.
    types = [(float32, ""), (float32, ""), (float32, "")]
    if ins[1] is not None:
        types.append((int32, ""))
    if args["output_bbox_indices"]:
        types.append((int32, ""))
    return types


def _bbox_shape(shapes, args):
    boxes, labels = shapes
    if len(boxes) != 2 or boxes[1] not in (4, 6):
        raise ValueError(f"{_BBOX}: the boxes must have shape (N, 4) or (N, 6), got {tuple(boxes)}")
    if labels is not None and (
        labels[:1] != boxes[:1] or len(labels) > 2 or (len(labels) == 2 and labels[1] != 1)
    ):
        raise ValueError(
            f"{_BBOX}: the labels must have shape ({boxes[0]},) or ({boxes[0]}, 1), got {tuple(labels)}"
        )
    _bbox_layout(args, boxes[1] // 2)
    return None


class _BBoxPlan:
    """What random_bbox_crop's samples of ``ndim``-D boxes share: the arguments that
    are not per sample, in the form the kernels take. Argument errors are kept and
    raised where the search meets them, after the boxes are checked."""

    def __init__(self, args, ndim):
        self.ndim = ndim
        self.layout = _bbox_layout(args, ndim)
        self.columns = _layout_columns(self.layout)
        self.order = self.order_error = None
        try:
            self.order = _axis_order(args, ndim, "shape_layout")
        except ValueError as error:
            self.order_error = error
        self.ratios = self.ratios_error = None
        try:
            pairs = 1 if ndim == 2 else 3
            # Six values with 2-D boxes: the first range counts, as in the reference.
            aspect = args["_aspect"][:2] if pairs == 1 else args["_aspect"]
            self.ratios = np.asarray(_ranges("aspect_ratio", aspect, pairs), np.float64).ravel()
        except ValueError as error:
            self.ratios_error = error
        self.thresholds = np.asarray(args["thresholds"], np.float32)
        total = args["total_num_attempts"]
        self.limit = total if total > 0 else _UNBOUNDED_ATTEMPTS
        self.search = (
            args["num_attempts"],
            self.limit,
            args["allow_no_crop"],
            args["threshold_type"] == "overlap",
            args["all_boxes_above_threshold"],
            args["bbox_prune_threshold"],
            *args["_scaling"],
        )
        self.ones = np.ones(ndim)


def _shapes(args, plan):
    """The sample's image and fixed window extents in pixels (x, y[, z] order, float64), or None."""
    ndim = plan.ndim
    input_shape = crop_shape = None
    if args["input_shape"] is not None:
        if len(args["input_shape"]) != ndim:
            raise ValueError(
                f"{_BBOX}: 'input_shape' must have {ndim} values, got {list(args['input_shape'])}"
            )
        input_shape = np.asarray(args["input_shape"], np.float64)[plan.order]
    if args["crop_shape"] is not None:
        if len(args["crop_shape"]) != ndim:
            raise ValueError(f"{_BBOX}: 'crop_shape' must have {ndim} values, got {list(args['crop_shape'])}")
        crop_shape = np.asarray(args["crop_shape"], np.float64)[plan.order]
        if np.any(crop_shape > input_shape) or np.any(crop_shape <= 0):
            raise ValueError(
                f"{_BBOX}: 'crop_shape' {list(args['crop_shape'])} must be positive and fit "
                f"'input_shape' {list(args['input_shape'])}"
            )
    return input_shape, crop_shape


def _empty_window_outputs(boxes, labels, args):
    """What the reference returns when its attempts ran out before any window was
    drawn: a window of anchor and extent 0 that keeps no box."""
    ndim = boxes.shape[1] // 2
    kept = np.zeros(0, np.int32)
    outputs = [np.zeros(ndim, np.float32), np.zeros(ndim, np.float32), np.zeros((0, 2 * ndim), np.float32)]
    if labels is not None:
        outputs.append(np.ascontiguousarray(labels[kept]))
    if args["output_bbox_indices"]:
        outputs.append(kept)
    return tuple(outputs)


def _random_bbox_crop(generator, arrays, args, plans):
    boxes = np.asarray(arrays[0], np.float32)
    labels = arrays[1]
    ndim = boxes.shape[1] // 2
    plan = plans.get(ndim)
    if plan is None:
        plan = plans[ndim] = _BBoxPlan(args, ndim)
    corners = _crop_windows.layout_to_corners(boxes, *plan.columns)
    if corners is None:
        raise ValueError(
            f"{_BBOX}: the boxes must lie within [0, 1] with start <= end, in layout {plan.layout!r}"
        )
    if plan.order_error is not None:
        raise plan.order_error
    input_shape, crop_shape = (
        (None, None) if args["input_shape"] is None and args["crop_shape"] is None else _shapes(args, plan)
    )
    num_attempts, limit, allow_no_crop, *search = plan.search
    status, start, size, anchor, attempts, best_score = _crop_windows.search_window(
        generator,
        corners,
        plan.thresholds,
        num_attempts,
        limit,
        allow_no_crop and crop_shape is None,
        *search,
        plan.ones if input_shape is None else input_shape,
        plan.ratios,
        crop_shape,
    )
    if status == _crop_windows.BAD_ASPECT_RATIO:
        raise plan.ratios_error
    if status == _crop_windows.NONE_DRAWN:
        if not args["quiet"]:
            warnings.warn(
                f"{_BBOX}: none of the {attempts} windows drawn fit both 'scaling' and 'aspect_ratio'; "
                "using an empty window (no boxes)",
                RuntimeWarning,
                stacklevel=2,
            )
        return _empty_window_outputs(boxes, labels, args)
    if status == _crop_windows.BEST_USED and not args["quiet"]:
        warnings.warn(
            f"{_BBOX}: no crop window satisfied the thresholds and kept a box in {attempts} attempts; "
            f"using the best one (metric {best_score:.4g})",
            RuntimeWarning,
            stacklevel=2,
        )
    if status == _crop_windows.NO_CROP:
        # Not cropping keeps every box as it is, wherever its center lies.
        cropped = _crop_windows.corners_to_layout(corners, *plan.columns)
        indices = np.arange(len(corners), dtype=np.int32)
    else:
        cropped, indices = _crop_windows.crop_to_window(
            corners, start, start + size, args["bbox_prune_threshold"], plan.columns
        )
    if crop_shape is not None:
        start, size = anchor.astype(np.float32), crop_shape.astype(np.float32)
    outputs = [start, size, cropped]
    if labels is not None:
        outputs.append(np.ascontiguousarray(labels[indices]))
    if args["output_bbox_indices"]:
        outputs.append(indices)
    return tuple(outputs)


def _bbox_batch(inputs, sample_args, batch_size, ctx):
    count = 3 + (inputs[1] is not None) + bool(sample_args[0]["output_bbox_indices"]) if batch_size else 5
    plans = {}
    return _run_per_sample(
        lambda generator, arrays, args: _random_bbox_crop(generator, arrays, args, plans),
        inputs,
        sample_args,
        batch_size,
        count,
    )


RANDOM_BBOX_CROP = Operator(
    "random_bbox_crop",
    inputs=[
        Input("boxes", doc="Boxes: float32 (N, 4) or (N, 6), relative coordinates in ``bbox_layout``."),
        Input("labels", optional=True, doc="Their labels: int32 (N,) or (N, 1)."),
    ],
    args=[
        Arg(
            "all_boxes_above_threshold",
            "bool",
            True,
            doc="A window must overlap every box as ``thresholds`` asks (else: at least one box).",
        ),
        Arg("allow_no_crop", "bool", True, doc="Not cropping is one more equally likely outcome."),
        Arg(
            "aspect_ratio",
            "float_list",
            None,
            doc="``[min, max]`` of the window's width / height ([1, 1] by default); for 3-D boxes "
            "also six values, for x/y, x/z and y/z. Relative to the image unless ``input_shape``.",
            type_doc="list of float",
        ),
        Arg(
            "bbox_layout",
            "layout",
            None,
            doc="Meaning of the box coordinates: x, y, z (start), X, Y, Z (end), W, H, D (extent); "
            "'xyXY' or 'xyzXYZ' by default.",
            type_doc="str",
        ),
        Arg(
            "bbox_prune_threshold",
            "float",
            None,
            doc="Keep boxes with at least this fraction of their area in the window; by default "
            "boxes whose center is in the window.",
        ),
        Arg(
            "crop_shape",
            "int_list",
            None,
            per_sample=True,
            doc="A fixed window extent in pixels (in ``shape_layout`` order; needs ``input_shape``).",
            type_doc="list of int",
        ),
        Arg(
            "input_shape",
            "int_list",
            None,
            per_sample=True,
            doc="The image extent in pixels, in ``shape_layout`` order.",
            type_doc="list of int",
        ),
        Arg("ltrb", "bool", None, doc="Deprecated: True means bbox_layout 'xyXY', False 'xyWH'."),
        Arg(
            "num_attempts",
            "int",
            1,
            doc="Windows tried for one drawn threshold before another threshold is drawn.",
        ),
        Arg(
            "output_bbox_indices",
            "bool",
            False,
            doc="Add an output: the indices (int32) of the kept boxes in the input.",
        ),
        Arg(
            "quiet", "bool", False, doc="Do not warn when the best window is used after the attempts ran out."
        ),
        Arg(
            "scaling",
            "float_list",
            None,
            doc="``[min, max]`` of the window extent relative to the image ([1, 1] by default).",
            type_doc="list of float",
        ),
        Arg(
            "shape_layout",
            "layout",
            None,
            doc="Order of ``crop_shape`` and ``input_shape``: 'WH' or 'WHD' by default.",
            type_doc="str",
        ),
        Arg(
            "threshold_type",
            "str",
            "iou",
            choices=("iou", "overlap"),
            doc="'iou': thresholds bound the IoU of box and window; 'overlap': the fraction of the box inside.",
        ),
        Arg(
            "thresholds",
            "float_list",
            [0.0],
            doc="Minimum overlaps; each round of attempts draws one.",
            type_doc="list of float",
        ),
        Arg(
            "total_num_attempts",
            "int",
            -1,
            doc="Stop after this many windows and use the best one, or an empty window with no boxes "
            "when none could be drawn (-1: keep searching).",
        ),
        RNG_ARG,
    ],
    prepare_args=_bbox_prepare,
    infer_types=_bbox_types,
    infer_shape=_bbox_shape,
    kernel=lambda arrays, args: _random_bbox_crop(args["rng"].generator(), arrays, args, {}),
    batch_kernel=_bbox_batch,
    doc="A random crop window that overlaps the boxes as asked, and the boxes cropped to it (SSD).\n\n"
    "Returns ``(anchor, shape, boxes[, labels][, bbox_indices])``: the window's start and extent "
    "in x, y[, z] order (float32; relative, or pixels with ``crop_shape``), the kept boxes clipped "
    "to the window and relative to it (in ``bbox_layout``), their labels and their indices.",
)


OPERATORS = [RANDOM_BBOX_CROP, ROI_RANDOM_CROP]
