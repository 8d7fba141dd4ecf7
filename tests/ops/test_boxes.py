"""ndd.bb_flip, bbox_paste, box_encoder and coord_flip (ndd/_ops/boxes.py).

Values are replayed from the reference goldens (tests/golden/detection_reference.json):
the kernels compute in float32 in the reference's order, so results are exact.
"""

import numpy as np
import pytest
from detection_golden import assert_reference_signature, case_id, cases, replay

import ndd


@pytest.mark.parametrize("case", cases("bb_flip"), ids=case_id)
def test_bb_flip_matches_reference(case):
    replay(case)


@pytest.mark.parametrize("case", cases("bbox_paste"), ids=case_id)
def test_bbox_paste_matches_reference(case):
    # Within one float32 rounding of the reference: the shift is summed in another order.
    replay(case, atol=2e-7)


@pytest.mark.parametrize("case", cases("coord_flip"), ids=case_id)
def test_coord_flip_matches_reference(case):
    replay(case)


@pytest.mark.parametrize("case", cases("box_encoder"), ids=case_id)
def test_box_encoder_matches_reference(case):
    # Offsets go through a division and a logarithm: within a few float32 roundings.
    replay(case, rtol=3e-6, atol=1e-7)


def test_bbox_paste_rejects_a_ratio_below_one():
    with pytest.raises(ValueError, match=r"ndd.bbox_paste: 'ratio' must be at least 1"):
        np.asarray(ndd.bbox_paste(np.zeros((1, 4), np.float32), ratio=0.5))


@pytest.mark.parametrize("op", [ndd.bb_flip, ndd.bbox_paste])
def test_box_ops_reject_partial_boxes(op):
    kwargs = {"ratio": 2.0} if op is ndd.bbox_paste else {}
    with pytest.raises(ValueError, match=r"boxes of 4 coordinates"):
        op(np.zeros((2, 3), np.float32), **kwargs)


def test_coord_flip_rejects_a_layout_that_does_not_fit_the_points():
    with pytest.raises(
        ValueError, match=r"ndd.coord_flip: 'layout' for 3-D points must name 'xyz', got 'xy' \(no 'z'\)"
    ):
        ndd.coord_flip(np.zeros((2, 3), np.float32), layout="xy")


@pytest.mark.parametrize(
    ("dims", "layout", "expected"), [(1, "y", "'x'"), (2, "yz", "'xy'"), (2, "xz", "'xy'"), (2, "zy", "'xy'")]
)
def test_coord_flip_layout_must_order_the_axes_of_the_points(dims, layout, expected):
    # 1-, 2- and 3-D points live in x, xy and xyz space, as in the reference; an
    # axis left out is an error even when it is not flipped.
    points = np.zeros((2, dims), np.float32)
    message = rf"ndd.coord_flip: 'layout' for {dims}-D points must name {expected}, got '{layout}'"
    with pytest.raises(ValueError, match=message):
        ndd.coord_flip(points, layout=layout, flip_x=0)


@pytest.mark.parametrize(
    ("points", "layout", "flips", "expected"),
    [
        # Any nonzero flip_* flips, as in the reference (per sample too, below).
        ([[0.1, 0.2]], "xy", (0, 2, 0), [[0.1, 0.8]]),
        ([[0.1, 0.2]], "xy", (-1, 0, 0), [[0.9, 0.2]]),
        # A layout may name more axes than the points have; letter k names column k, and an
        # axis past the columns is not flipped (the reference's results).
        ([[0.1, 0.2]], "xyz", (0, 1, 0), [[0.1, 0.8]]),
        ([[0.1, 0.2]], "yxz", (1, 0, 0), [[0.1, 0.8]]),
        ([[0.1, 0.2]], "zyx", (1, 1, 0), [[0.1, 0.8]]),
        ([[0.1]], "yx", (0, 1, 0), [[0.1]]),
        ([[0.1]], "xy", (1, 1, 0), [[0.9]]),
    ],
)
def test_coord_flip_flags_and_longer_layouts_as_the_reference(points, layout, flips, expected):
    fx, fy, fz = flips
    out = ndd.coord_flip(np.array(points, np.float32), layout=layout, flip_x=fx, flip_y=fy, flip_z=fz)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def test_coord_flip_per_sample_flags_take_any_nonzero_value():
    points = ndd.batch([np.array([[0.1, 0.2]], np.float32)] * 2)
    out = ndd.coord_flip(points, flip_x=0, flip_y=ndd.batch([np.int32(2), np.int32(0)]))
    np.testing.assert_allclose([np.asarray(s) for s in out], [[[0.1, 0.8]], [[0.1, 0.2]]], rtol=1e-6)


def test_coord_flip_flips_only_the_chosen_axes_about_their_centers():
    points = np.array([[0.1, 0.2, 0.3]], np.float32)
    out = np.asarray(ndd.coord_flip(points, flip_x=0, flip_y=1, center_y=1.0))
    np.testing.assert_array_equal(out, np.array([[0.1, 1.8, 0.3]], np.float32))


def test_box_encoder_checks_its_arguments_at_the_call():
    boxes = np.zeros((1, 4), np.float32)
    labels = np.zeros(1, np.int32)
    with pytest.raises(ValueError, match=r"ndd.box_encoder: 'anchors' must hold 4 coordinates"):
        ndd.box_encoder(boxes, labels, anchors=[0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"ndd.box_encoder: 'criteria' must be in \[0, 1\]"):
        ndd.box_encoder(boxes, labels, anchors=[0.0, 0.0, 1.0, 1.0], criteria=2.0)
    with pytest.raises(ValueError, match=r"ndd.box_encoder: the labels"):
        ndd.box_encoder(boxes, np.zeros(2, np.int32), anchors=[0.0, 0.0, 1.0, 1.0])


def test_box_encoder_with_offsets_and_no_boxes_gives_zeros():
    boxes, labels = ndd.box_encoder(
        np.zeros((0, 4), np.float32), np.zeros(0, np.int32), anchors=[0.0, 0.0, 0.5, 0.5] * 3, offset=True
    )
    np.testing.assert_array_equal(np.asarray(boxes), np.zeros((3, 4), np.float32))
    np.testing.assert_array_equal(np.asarray(labels), np.zeros(3, np.int32))


@pytest.mark.parametrize("case", cases("bbox_rotate"), ids=case_id)
def test_bbox_rotate_matches_reference(case):
    # float32 in the reference's order of operations: exact, near ties included.
    replay(case)


def test_bbox_rotate_four_quarter_turns_give_the_boxes_back():
    boxes = np.array([[0.1, 0.2, 0.35, 0.5], [0.6, 0.1, 0.9, 0.3]], np.float32)
    shape = [60, 90]
    out = boxes
    for _ in range(4):
        out = np.asarray(ndd.bbox_rotate(out, angle=90.0, input_shape=shape))
        shape = shape[::-1]
    np.testing.assert_allclose(out, boxes, atol=1e-6)


def test_bbox_rotate_removes_labels_with_their_boxes():
    boxes = np.array([[0.0, 0.0, 0.1, 0.1], [0.4, 0.4, 0.6, 0.6]], np.float32)
    labels = np.array([7, 8], np.int32)
    out, kept = ndd.bbox_rotate(boxes, labels, angle=45.0, input_shape=[100, 100], keep_size=True)
    assert np.asarray(kept).tolist() == [8]
    assert np.asarray(out).shape == (1, 4)


@pytest.mark.parametrize("mode", ["fixed", "halfway"])
@pytest.mark.parametrize("angle", [30.0, 60.0, 90.0, 120.0, 150.0, 240.0, 300.0, -60.0])
def test_bbox_rotate_fixed_and_halfway_sizes_follow_the_turned_box(mode, angle):
    # A 20 x 5 pixel box near the center of a 100 x 100 image (the canvas kept):
    # 'fixed' keeps its size, its sides swapped when the rotation is nearer a quarter
    # turn than a half turn; 'halfway' lies halfway to the enclosing box; both are
    # centered on the rotated center.
    box = np.array([[40.0, 45.0, 60.0, 50.0]], np.float32)
    theta = np.radians(angle)
    c, s = np.cos(theta), np.sin(theta)
    cx, cy = 50.0 - 50.0, 47.5 - 50.0
    center = np.array([cx * c + cy * s + 50.0, -cx * s + cy * c + 50.0])
    w, h = 20.0, 5.0
    enclosing = np.array([w * abs(c) + h * abs(s), w * abs(s) + h * abs(c)])
    size = np.array([h, w] if abs(s) > abs(c) else [w, h])
    if mode == "halfway":
        size = (size + enclosing) / 2
    out = np.asarray(
        ndd.bbox_rotate(
            box, angle=angle, input_shape=[100, 100], bbox_normalized=False, keep_size=True, mode=mode
        )
    )
    np.testing.assert_allclose(out[0], np.concatenate([center - size / 2, center + size / 2]), atol=1e-4)


@pytest.mark.parametrize(
    ("mode", "angle"), [("expand", 0.0), ("expand", 90.0), ("fixed", 30.0), ("halfway", 0.0)]
)
def test_bbox_rotate_removes_boxes_without_area_whatever_the_threshold(mode, angle):
    # As the reference: the kept fraction of a box without area is 0 / 0, never kept.
    boxes = np.array([[0.2, 0.2, 0.2, 0.5], [0.3, 0.3, 0.6, 0.6]], np.float32)
    _, kept = ndd.bbox_rotate(
        boxes,
        np.array([1, 2], np.int32),
        angle=angle,
        input_shape=[100, 100],
        mode=mode,
        remove_threshold=0.0,
    )
    assert np.asarray(kept).tolist() == [2]


@pytest.mark.parametrize("angle", [-315.0, -135.0, -45.0, 45.0, 135.0, 225.0, 315.0])
@pytest.mark.parametrize("shape", [(94, 41), (10, 11), (12, 15)])
def test_bbox_rotate_canvas_is_the_one_rotate_makes(angle, shape):
    # The whole image, rotated, is centered on the canvas that rotate gives the image.
    height, width = shape
    canvas = np.asarray(ndd.rotate(np.zeros((height, width, 1), np.uint8), angle=angle)).shape
    whole = np.array([[0.0, 0.0, width, height]], np.float32)
    out = np.asarray(ndd.bbox_rotate(whole, angle=angle, input_shape=[height, width], bbox_normalized=False))
    center = (out[0, :2] + out[0, 2:]) / 2
    np.testing.assert_allclose(center, [canvas[1] / 2, canvas[0] / 2], atol=1e-3)


def test_bbox_rotate_argument_errors():
    boxes = np.zeros((1, 4), np.float32)
    with pytest.raises(ValueError, match=r"ndd.bbox_rotate: 'mode' must be one of"):
        ndd.bbox_rotate(boxes, angle=1.0, input_shape=[4, 4], mode="grow")
    with pytest.raises(ValueError, match=r"'remove_threshold' must be in \[0, 1\)"):
        ndd.bbox_rotate(boxes, angle=1.0, input_shape=[4, 4], remove_threshold=1.0)
    with pytest.raises(ValueError, match=r"'bbox_layout' must be 'xyXY' or 'xyWH'"):
        ndd.bbox_rotate(boxes, angle=1.0, input_shape=[4, 4], bbox_layout="XYxy")
    with pytest.raises(ValueError, match=r"ndd.bbox_rotate: 'keep_size' and 'size' are mutually exclusive"):
        np.asarray(ndd.bbox_rotate(boxes, angle=1.0, input_shape=[4, 4], keep_size=True, size=[6, 6]))


def test_bbox_rotate_input_shape_forms_of_the_reference():
    """Two values fit 'HWC' (H and W are there), fractions are truncated; 'CHW' needs three."""
    boxes = np.array([[0.1, 0.2, 0.4, 0.5]], np.float32)
    expected = np.asarray(ndd.bbox_rotate(boxes, angle=30.0, input_shape=[100, 200]))
    np.testing.assert_allclose(expected, [[0.12374, 0.415, 0.42268, 0.71277]], atol=1e-5)  # the reference's
    for shape, layout in (([100, 200], "HWC"), ([100.5, 200.9], "HW"), ([3, 100, 200], "CHW")):
        out = ndd.bbox_rotate(boxes, angle=30.0, input_shape=shape, shape_layout=layout)
        np.testing.assert_array_equal(np.asarray(out), expected)
    with pytest.raises(
        ValueError, match=r"'input_shape' \[100.0, 200.0\] has no value where 'shape_layout' 'CHW'"
    ):
        np.asarray(ndd.bbox_rotate(boxes, angle=30.0, input_shape=[100, 200], shape_layout="CHW"))


@pytest.mark.parametrize("op", ["bb_flip", "bbox_paste", "bbox_rotate", "box_encoder", "coord_flip"])
def test_signature_matches_reference(op):
    assert_reference_signature(op)


GPU_CALLS = {
    "bb_flip": lambda: ndd.bb_flip(np.zeros((1, 4), np.float32), device="gpu"),
    "bbox_paste": lambda: ndd.bbox_paste(np.zeros((1, 4), np.float32), ratio=2.0, device="gpu"),
    "bbox_rotate": lambda: ndd.bbox_rotate(
        np.zeros((1, 4), np.float32), angle=1.0, input_shape=[4, 4], device="gpu"
    ),
    "box_encoder": lambda: ndd.box_encoder(
        np.zeros((1, 4), np.float32), np.zeros(1, np.int32), anchors=[0.0, 0.0, 1.0, 1.0], device="gpu"
    ),
    "coord_flip": lambda: ndd.coord_flip(np.zeros((1, 2), np.float32), device="gpu"),
}


@pytest.mark.parametrize("op", ["bb_flip", "bbox_paste", "bbox_rotate", "box_encoder", "coord_flip"])
def test_gpu_device_needs_a_gpu(op):
    from ndd._cuda import driver

    if driver.device_count() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(driver.GpuUnavailableError, match=r"needs a CUDA GPU"):
        GPU_CALLS[op]()


def test_bbox_rotate_batch_equals_sample_by_sample_calls():
    rng = np.random.default_rng(3)
    samples = [rng.uniform(0, 0.5, (n, 4)).astype(np.float32) for n in (3, 0, 5)]
    for s in samples:
        s[:, 2:] += s[:, :2]
    labels = [np.arange(len(s), dtype=np.int32) for s in samples]
    angles = [10.0, 45.0, -100.0]
    shapes = [[40, 60], [31, 31], [80, 20]]
    boxes, kept = ndd.bbox_rotate(
        ndd.batch(samples),
        ndd.batch(labels),
        angle=ndd.batch([np.float32(a) for a in angles]),
        input_shape=ndd.batch([np.array(s, np.int32) for s in shapes]),
        keep_size=True,
        remove_threshold=0.5,
    )
    for i in range(3):
        one_boxes, one_kept = ndd.bbox_rotate(
            samples[i],
            labels[i],
            angle=angles[i],
            input_shape=shapes[i],
            keep_size=True,
            remove_threshold=0.5,
        )
        np.testing.assert_array_equal(np.asarray(boxes.select(i)), np.asarray(one_boxes))
        np.testing.assert_array_equal(np.asarray(kept.select(i)), np.asarray(one_kept))


def _matches_by_rule(boxes, anchors, criteria):
    """The matching rule written with numpy on the whole IoU matrix (float32, the
    kernel's order of operations): anchors above ``criteria`` take their best box,
    then each box claims its best anchor; the last of equal overlaps wins."""
    with np.errstate(invalid="ignore", divide="ignore"):
        lt = np.fmax(boxes[:, None, :2], anchors[None, :, :2])
        rb = np.fmin(boxes[:, None, 2:], anchors[None, :, 2:])
        wh = np.fmax(rb - lt, np.float32(0))
        inter = wh[..., 0] * wh[..., 1]
        area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
        anchor_area = (anchors[:, 2] - anchors[:, 0]) * (anchors[:, 3] - anchors[:, 1])
        union = area[:, None] + anchor_area[None, :] - inter
        iou = np.where(union > 0, inter / union, np.float32(0))
    iou = np.where(np.isnan(iou), -np.inf, iou)
    matches = np.full(len(anchors), -1, np.int64)
    last = lambda values, axis: values.shape[axis] - 1 - np.argmax(np.flip(values, axis), axis=axis)  # noqa: E731
    best_box = last(iou, 0)
    matches[iou.max(axis=0) > criteria] = best_box[iou.max(axis=0) > criteria]
    for i, j in enumerate(last(iou, 1)):
        matches[j if np.isfinite(iou[i, j]) else 0] = i
    return matches


@pytest.mark.parametrize("anchors_count", [3, 8, 29])
def test_anchor_matching_keeps_the_last_of_equal_overlaps_and_skips_nan(anchors_count):
    from ndd._cpu.box_matching import match_anchors

    rs = np.random.default_rng(anchors_count)
    # Coordinates on a coarse grid: many equal overlaps, across SIMD lanes and the tail.
    corners = rs.integers(0, 4, (anchors_count + 12, 4)).astype(np.float32) / 3
    corners = np.concatenate(
        [np.minimum(corners[:, :2], corners[:, 2:]), np.maximum(corners[:, :2], corners[:, 2:])], 1
    )
    anchors, boxes = corners[:anchors_count], corners[anchors_count:]
    boxes[3, 1] = np.nan
    anchors[1, 2] = np.nan
    for criteria in (0.0, 0.4):
        np.testing.assert_array_equal(
            match_anchors(boxes, anchors, criteria), _matches_by_rule(boxes, anchors, criteria)
        )


@pytest.mark.parametrize("ltrb", [True, False])
def test_bbox_paste_beyond_one_keeps_the_image_inside_the_canvas(ltrb):
    # As in the reference: a position beyond 1 counts as 1 (the right or bottom edge).
    boxes = np.float32([[0.0, 0.0, 1.0, 1.0], [0.1, 0.2, 0.3, 0.4]])
    beyond = np.asarray(ndd.bbox_paste(boxes, ratio=2.5, paste_x=1.5, paste_y=3.0, ltrb=ltrb))
    edge = np.asarray(ndd.bbox_paste(boxes, ratio=2.5, paste_x=1.0, paste_y=1.0, ltrb=ltrb))
    np.testing.assert_array_equal(beyond, edge)
    np.testing.assert_allclose(edge[0], [0.6, 0.6, 1.0, 1.0] if ltrb else [0.6, 0.6, 0.4, 0.4], rtol=1e-6)


def test_new_box_data_has_no_layout_as_in_the_reference():
    # Outputs made of new rows (encoded, selected, kept after a crop) do not take the
    # inputs' layouts; bb_flip maps the same rows and keeps it.
    boxes = ndd.tensor(np.float32([[0.1, 0.2, 0.5, 0.6]]), layout="NX")
    labels = ndd.tensor(np.int32([1]), layout="N")
    encoded = ndd.box_encoder(boxes, labels, anchors=[0, 0, 0.5, 0.5])
    assert [o.layout for o in encoded] == [None, None]
    cropped = ndd.random_bbox_crop(boxes, labels, rng=ndd.random.RNG(seed=1))
    assert [o.layout for o in cropped] == [None] * 4
    polygons = ndd.tensor(np.int32([[0, 0, 3]]), layout="PX")
    vertices = ndd.tensor(np.float32([[0, 0], [1, 0], [1, 1]]), layout="VX")
    selected = ndd.segmentation.select_masks(np.int32([0]), polygons, vertices)
    assert [o.layout for o in selected] == [None, None]
    assert ndd.bb_flip(boxes).layout == "NX"
    points = np.zeros((5, 2), np.float32)
    per_frame = ndd.coord_transform(points, M=ndd.per_frame(np.ones((4, 2, 2), np.float32)))
    assert per_frame.shape == (4, 5, 2) and per_frame.layout is None
    assert ndd.transforms.translation(offset=ndd.per_frame(np.ones((3, 2), np.float32))).layout == "F**"
