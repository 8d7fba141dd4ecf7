"""ndd.random_bbox_crop and ndd.roi_random_crop (ndd/_ops/random_crops.py).

The windows are random, so the reference's values cannot be reproduced. The box
cropping is deterministic: for windows the reference chose (recorded in
tests/golden/detection_reference.json with its outputs), ``crop_boxes`` must give
the reference's boxes, labels and indices. The search itself is checked by its
rules: every window ndd returns satisfies the thresholds, scaling and aspect ratio
asked for, and the draws cover the allowed range (chi-square tests with a 1e-6
false-alarm rate, on seeded RNGs).
"""

import math
import warnings
from statistics import NormalDist

import numpy as np
import pytest
from detection_golden import arrays, assert_reference_signature, case_id, cases

import ndd
from ndd._ops.random_crops import crop_boxes, crop_metric, from_corners, to_corners

BOXES = np.array(
    [[0.1, 0.1, 0.3, 0.4], [0.5, 0.5, 0.9, 0.8], [0.2, 0.6, 0.4, 0.95], [0.6, 0.05, 0.7, 0.2]], np.float32
)
LABELS = np.array([1, 2, 3, 4], np.int32)


def chi2_critical(df, false_alarm=1e-6):
    z = NormalDist().inv_cdf(1 - false_alarm)
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def outputs(result):
    return [np.asarray(r) for r in result]


# -- box cropping against the reference's windows -------------------------------------


def _recorded(case):
    recorded = arrays()
    inputs = [recorded[i["tensor"]] for i in case["inputs"]]
    results = [recorded[o["tensor"]] for o in case["outputs"]]
    return inputs, case["kwargs"], results


@pytest.mark.parametrize("case", cases("random_bbox_crop"), ids=case_id)
def test_crop_boxes_matches_reference_for_its_window(case):
    inputs, kwargs, results = _recorded(case)
    boxes = inputs[0]
    ndim = boxes.shape[1] // 2
    layout = kwargs.get("bbox_layout") or ("xyXY" if ndim == 2 else "xyzXYZ")
    anchor, shape = results[0], results[1]
    if "crop_shape" in kwargs:
        order = [(kwargs.get("shape_layout") or "WH").index(c) for c in "WH"]
        extent = np.asarray(kwargs["input_shape"], np.float32)[order]
        # Fixed windows have whole-pixel anchors inside the image.
        assert np.array_equal(anchor, np.round(anchor)) and np.all(anchor + shape <= extent)
        start, size = anchor / extent, shape / extent
    else:
        start, size = anchor, shape
    mapped, indices = crop_boxes(
        to_corners(boxes, layout), start, start + size, kwargs.get("bbox_prune_threshold")
    )
    np.testing.assert_allclose(from_corners(mapped, layout), results[2], rtol=1e-5, atol=2e-6)
    rest = list(results[3:])
    if len(inputs) > 1:
        np.testing.assert_array_equal(inputs[1][indices], rest.pop(0))
    if kwargs.get("output_bbox_indices"):
        np.testing.assert_array_equal(indices, rest.pop(0))
    assert not rest


@pytest.mark.parametrize("case", cases("random_bbox_crop"), ids=case_id)
def test_reference_windows_obey_the_rules_ndd_checks(case):
    # The rules the window search below is tested with hold for the reference's windows too.
    inputs, kwargs, results = _recorded(case)
    if "crop_shape" in kwargs or "scaling" not in kwargs:
        return
    size = results[1]
    lo, hi = kwargs["scaling"]
    whole = np.all(results[0] == 0) and np.all(size == 1)
    if not whole:
        assert np.all(size >= lo - 1e-6) and np.all(size <= hi + 1e-6)
        if "aspect_ratio" in kwargs:
            ratio = size[0] / size[1]
            assert kwargs["aspect_ratio"][0] - 1e-5 <= ratio <= kwargs["aspect_ratio"][1] + 1e-5


# -- the window search --------------------------------------------------------------


def _windows(count, boxes=BOXES, **kwargs):
    rng = ndd.random.RNG(seed=7)
    batch = ndd.batch([boxes] * count)
    anchor, shape, *_ = random_bbox_crop = ndd.random_bbox_crop(batch, rng=rng, **kwargs)
    del random_bbox_crop
    return np.stack([np.asarray(a) for a in anchor]), np.stack([np.asarray(s) for s in shape])


def test_windows_satisfy_the_drawn_iou_threshold_for_all_boxes():
    anchor, shape = _windows(300, thresholds=[0.1, 0.3, 0.5], scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0])
    corners = to_corners(BOXES, "xyXY")
    for a, s in zip(anchor, shape, strict=True):
        if np.all(a == 0) and np.all(s == 1):
            continue
        assert crop_metric(corners, a, a + s, "iou").min() >= 0.1 - 1e-6


def test_windows_with_any_box_above_threshold_and_overlap_metric():
    anchor, shape = _windows(
        300,
        thresholds=[0.7],
        threshold_type="overlap",
        all_boxes_above_threshold=False,
        allow_no_crop=False,
        scaling=[0.3, 0.6],
    )
    corners = to_corners(BOXES, "xyXY")
    for a, s in zip(anchor, shape, strict=True):
        assert crop_metric(corners, a, a + s, "overlap").max() >= 0.7 - 1e-6


def test_windows_keep_at_least_one_box():
    # As the reference's: a window keeping no box is not valid even when it meets the threshold.
    small = np.array([[0.1, 0.1, 0.15, 0.15], [0.8, 0.8, 0.85, 0.86]], np.float32)
    rng = ndd.random.RNG(seed=8)
    _, _, boxes = ndd.random_bbox_crop(
        ndd.batch([small] * 300), scaling=[0.2, 0.3], allow_no_crop=False, rng=rng
    )
    assert all(np.asarray(b).shape[0] >= 1 for b in boxes)


def test_window_extents_are_drawn_independently_then_fit_to_the_ratio():
    # Independent uniform extents kept when their ratio fits: the log-ratio is
    # triangular around 0, as in the reference's windows.
    anchor, shape = _windows(4000, scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0], allow_no_crop=False)
    draws = np.random.default_rng(0).uniform(0.3, 1.0, (400_000, 2))
    ratio = draws[:, 0] / draws[:, 1]
    draws = draws[(ratio >= 0.5) & (ratio <= 2.0)]
    bins = np.linspace(np.log(0.5), np.log(2.0), 7)
    expected = np.histogram(np.log(draws[:, 0] / draws[:, 1]), bins=bins)[0] / len(draws) * len(shape)
    counts = np.histogram(np.log(shape[:, 0] / shape[:, 1]), bins=bins)[0]
    assert np.sum((counts - expected) ** 2 / expected) < chi2_critical(len(counts) - 1)


def test_windows_keep_to_scaling_and_aspect_ratio():
    anchor, shape = _windows(500, scaling=[0.3, 0.8], aspect_ratio=[0.5, 2.0], allow_no_crop=False)
    assert np.all(shape >= 0.3 - 1e-6) and np.all(shape <= 0.8 + 1e-6)
    ratio = shape[:, 0] / shape[:, 1]
    assert np.all(ratio >= 0.5 - 1e-5) and np.all(ratio <= 2.0 + 1e-5)
    assert np.all(anchor >= 0) and np.all(anchor + shape <= 1 + 1e-6)
    # The anchors spread over the free range: the relative position is uniform.
    position = anchor[:, 0] / (1 - shape[:, 0])
    counts, _ = np.histogram(position, bins=5, range=(0, 1))
    expected = len(position) / 5
    assert np.sum((counts - expected) ** 2 / expected) < chi2_critical(4)


def test_six_aspect_ratio_values_with_2d_boxes_use_the_first_range():
    # The reference takes 2 values, or 6 for 3-D boxes; with 2-D boxes it uses the first pair.
    anchor, shape = _windows(
        200, scaling=[0.3, 0.8], aspect_ratio=[0.5, 0.6, 1, 1, 2, 3], allow_no_crop=False
    )
    ratio = shape[:, 0] / shape[:, 1]
    assert np.all(ratio >= 0.5 - 1e-5) and np.all(ratio <= 0.6 + 1e-5)
    with pytest.raises(ValueError, match=r"'aspect_ratio' must be 2 or 6 positive values"):
        ndd.random_bbox_crop(BOXES, aspect_ratio=[0.5, 2, 0.5, 2])
    with pytest.raises(ValueError, match=r"'scaling' must have 2 values, got \[0.3, 1.0, 0.3, 1.0\]"):
        ndd.random_bbox_crop(BOXES, scaling=[0.3, 1, 0.3, 1])


def test_aspect_ratio_is_in_pixels_with_input_shape():
    anchor, shape = _windows(
        200, scaling=[0.2, 0.9], aspect_ratio=[1.0, 1.0], input_shape=[200, 100], allow_no_crop=False
    )
    np.testing.assert_allclose(shape[:, 0] * 200, shape[:, 1] * 100, rtol=1e-5)


def test_default_windows_are_square_relative_to_the_image():
    anchor, shape = _windows(100, scaling=[0.3, 0.9], allow_no_crop=False)
    # The extent is given as end - start, as the reference's: float32 rounding only.
    np.testing.assert_allclose(shape[:, 0], shape[:, 1], rtol=1e-6)


# Tiny boxes 0.1 apart: every window at least 0.3 wide (along each axis) keeps one.
_CENTERS = (np.arange(10) + 0.5) / 10
GRID = np.array([[x - 0.01, y - 0.01, x + 0.01, y + 0.01] for x in _CENTERS for y in _CENTERS], np.float32)
_CENTERS_3D = (np.arange(5) + 0.5) / 5
GRID_3D = np.array(
    [
        [x - 0.01, y - 0.01, z - 0.01, x + 0.01, y + 0.01, z + 0.01]
        for x in _CENTERS_3D
        for y in _CENTERS_3D
        for z in _CENTERS_3D
    ],
    np.float32,
)


def assert_distribution(values, expected_cdf, bins):
    """Chi-square test of ``values`` against a distribution given by its CDF at the bin edges."""
    counts, _ = np.histogram(values, bins=bins)
    expected = np.diff(expected_cdf(bins)) * len(values)
    assert counts.sum() == len(values), "values outside the bins"
    assert np.sum((counts - expected) ** 2 / expected) < chi2_critical(len(counts) - 1), (counts, expected)


def assert_probability(hits, total, p):
    """``hits`` of ``total`` trials succeed with probability ``p`` (within 5.3 standard errors)."""
    assert abs(hits - p * total) < 5.3 * math.sqrt(p * (1 - p) * total), (hits, p * total)


@pytest.mark.parametrize(
    "boxes, ratio, largest",
    [
        (GRID, [1.0, 1.0], 0),
        (GRID, [0.5, 0.5], 1),
        (GRID, [0.25, 0.25], 1),
        (GRID, [3.0, 3.0], 0),
        (GRID_3D, [1.0, 1.0], 0),
    ],
    ids=["square", "ratio-0.5", "ratio-0.25", "ratio-3", "cube"],
)
def test_fixed_aspect_ratio_windows_take_the_largest_extent_drawn(boxes, ratio, largest):
    # Every extent is drawn from 'scaling'; the ratios fix them one from another and
    # the largest becomes the largest drawn: distributed as the maximum of ndim draws.
    ndim = boxes.shape[1] // 2
    aspect = ratio * (1 if ndim == 2 else 3)
    anchor, shape = _windows(4000, boxes, scaling=[0.3, 1.0], aspect_ratio=aspect, allow_no_crop=False)
    np.testing.assert_allclose(shape[:, 0] / shape[:, 1], ratio[0], rtol=1e-6)
    assert np.all(anchor >= 0) and np.all(anchor + shape <= 1 + 1e-6)
    assert_distribution(
        shape[:, largest], lambda x: np.clip((x - 0.3) / 0.7, 0, 1) ** ndim, np.linspace(0.3, 1.0 + 1e-6, 11)
    )


def test_fixed_aspect_ratio_with_input_shape_takes_the_largest_pixel_extent_drawn():
    # In pixels (200 x 100) the window is square, its side the largest drawn in
    # pixels: max(200 u, 100 v). Its relative height may pass 1, as the reference's.
    anchor, shape = _windows(
        4000, GRID, scaling=[0.3, 1.0], aspect_ratio=[1.0, 1.0], input_shape=[200, 100], allow_no_crop=False
    )
    np.testing.assert_allclose(shape[:, 0] * 200, shape[:, 1] * 100, rtol=1e-5)
    draws = np.random.default_rng(0).uniform(0.3, 1.0, (1_000_000, 2)) * [200, 100]
    side = np.sort(draws.max(axis=1) / 200)
    assert_distribution(
        shape[:, 0], lambda x: np.searchsorted(side, x) / len(side), np.linspace(0.3, 1.0 + 1e-6, 11)
    )


def _fit_probability(ratio_range, draws=1_000_000):
    """How often two extents drawn from U(0.3, 1) have a ratio within ``ratio_range``."""
    x, y = np.random.default_rng(1).uniform(0.3, 1.0, (2, draws))
    return np.mean((x / y >= ratio_range[0]) & (x / y <= ratio_range[1]))


def test_attempts_with_extents_out_of_the_aspect_ratio_are_spent():
    # Each round is no crop or threshold 0 (equally likely); its one attempt wins
    # unless the extents miss the ratio range, which spends it: another round.
    anchor, shape = _windows(4000, GRID, scaling=[0.3, 1.0], aspect_ratio=[0.9, 1.1], thresholds=[0.0])
    p_fit = _fit_probability([0.9, 1.1])
    assert_probability(np.sum(np.all(shape == 1, axis=1)), 4000, 1 / (1 + p_fit))


@pytest.mark.parametrize("num_attempts", [1, 5])
def test_a_round_spends_all_its_attempts_whatever_the_total(num_attempts):
    # total_num_attempts is checked between rounds: one round of num_attempts, then an
    # empty window when none of its extents had a ratio in range.
    anchor, shape = _windows(
        4000,
        GRID,
        scaling=[0.3, 1.0],
        aspect_ratio=[0.99, 1.01],
        allow_no_crop=False,
        num_attempts=num_attempts,
        total_num_attempts=1,
        quiet=True,
    )
    empty = np.all(shape == 0, axis=1) & np.all(anchor == 0, axis=1)
    assert_probability(np.sum(empty), 4000, (1 - _fit_probability([0.99, 1.01])) ** num_attempts)


def test_3d_windows_with_some_fixed_aspect_ratios():
    # y / z fixed to 1, x / y and x / z in ranges: in a random order y is set from z or
    # z from y, all scaled so the largest is the largest drawn; then the ranges apply.
    ratios = [(0.5, 2.0), (0.8, 1.25)]
    anchor, shape = _windows(
        4000, GRID_3D, scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0, 0.8, 1.25, 1.0, 1.0], allow_no_crop=False
    )
    np.testing.assert_allclose(shape[:, 1], shape[:, 2], rtol=1e-6)
    for (lo, hi), axis in zip(ratios, [1, 2], strict=True):
        ratio = shape[:, 0] / shape[:, axis]
        assert np.all(ratio >= lo * (1 - 1e-6)) and np.all(ratio <= hi * (1 + 1e-6))
    assert np.all(anchor >= 0) and np.all(anchor + shape <= 1 + 1e-6)
    draws = np.random.default_rng(2).uniform(0.3, 1.0, (1_000_000, 3))
    largest = draws.max(axis=1)
    y_first = np.random.default_rng(3).random(len(draws)) < 0.5
    yz = np.where(y_first, draws[:, 1], draws[:, 2])
    scale = largest / np.maximum(draws[:, 0], yz)
    x, y = draws[:, 0] * scale, yz * scale
    fits = (x / y >= 0.8) & (x / y <= 1.25)  # x / z = x / y, within [0.5, 2] too
    for values, simulated in ((shape[:, 0], np.sort(x[fits])), (shape[:, 1], np.sort(y[fits]))):
        assert_distribution(
            values, lambda v, s=simulated: np.searchsorted(s, v) / len(s), np.linspace(0.3, 1.0 + 1e-6, 11)
        )


def test_a_round_ends_with_its_last_window_meeting_the_threshold():
    # The reference judges every attempt of a round and keeps the last one meeting
    # the threshold (0 here: all of them); the round succeeds if that one keeps the
    # box, so two attempts per round keep the box no more often than one.
    corner = np.array([[0.05, 0.05, 0.15, 0.15]], np.float32)
    _, _, boxes = ndd.random_bbox_crop(
        ndd.batch([corner] * 4000),
        scaling=[0.3, 0.5],
        allow_no_crop=False,
        num_attempts=2,
        total_num_attempts=2,
        quiet=True,
        rng=ndd.random.RNG(seed=12),
    )
    generator = np.random.default_rng(4)
    side = generator.uniform(0.3, 0.5, (1_000_000, 2)).max(axis=1)
    start = generator.random((2, len(side))) * (1 - side)
    keeps = np.all((start <= 0.1) & (0.1 < start + side), axis=0)
    assert_probability(sum(np.asarray(b).shape[0] == 0 for b in boxes), 4000, 1 - keeps.mean())


def test_box_centers_on_the_far_edge_of_the_window_are_outside():
    # The window is half-open: [start, end) along each axis.
    boxes = np.array([[0.5, 0.25, 0.75, 0.5], [0.0, 0.0, 0.25, 0.25]], np.float32)  # centers x 0.625, 0.125
    _, kept = crop_boxes(boxes, np.float32([0.0, 0.0]), np.float32([0.625, 1.0]), None)
    assert kept.tolist() == [1]
    _, kept = crop_boxes(boxes, np.float32([0.625, 0.0]), np.float32([1.0, 1.0]), None)
    assert kept.tolist() == [0]


def test_search_judges_box_centers_on_the_far_edge_as_outside():
    # Windows x in [a/8, (a + 5)/8): at a = 0 the first box's center (5/8) is outside.
    boxes = np.array([[0.5, 0.25, 0.75, 0.5], [0.0, 0.0, 0.25, 0.25]], np.float32)
    anchor, _, _, indices = ndd.random_bbox_crop(
        ndd.batch([boxes] * 64),
        crop_shape=[5, 8],
        input_shape=[8, 8],
        allow_no_crop=False,
        output_bbox_indices=True,
        rng=ndd.random.RNG(seed=1),
    )
    kept = {int(np.asarray(a)[0]): np.asarray(i).tolist() for a, i in zip(anchor, indices, strict=True)}
    assert kept == {0: [1], 1: [0, 1], 2: [0], 3: [0]}


def test_no_crop_keeps_every_box():
    # Not cropping keeps the boxes as they are, even one centered on the far edge,
    # which a window over the whole image leaves out.
    boxes = np.array([[0.2, 0.2, 0.4, 0.4], [1.0, 1.0, 1.0, 1.0], [0.9, 0.9, 1.0, 1.0]], np.float32)
    *_, indices = ndd.random_bbox_crop(
        ndd.batch([boxes] * 200), output_bbox_indices=True, rng=ndd.random.RNG(seed=9)
    )
    assert {tuple(np.asarray(i).tolist()) for i in indices} == {(0, 1, 2), (0, 2)}


def test_allow_no_crop_is_one_more_equally_likely_outcome():
    # Enough attempts that a round of attempts always finds a window keeping a box.
    anchor, shape = _windows(2000, thresholds=[0.0, 0.0, 0.0], scaling=[0.3, 0.5], num_attempts=200)
    whole = np.sum(np.all(shape == 1, axis=1))
    expected = np.array([500.0, 1500.0])
    counts = np.array([whole, 2000 - whole])
    assert np.sum((counts - expected) ** 2 / expected) < chi2_critical(1)


def test_fixed_crop_shape_gives_whole_pixel_anchors_inside_the_image():
    rng = ndd.random.RNG(seed=1)
    batch = ndd.batch([BOXES] * 300)
    anchor, shape, boxes = ndd.random_bbox_crop(batch, crop_shape=[60, 40], input_shape=[100, 120], rng=rng)
    anchor = np.stack([np.asarray(a) for a in anchor])
    assert anchor.dtype == np.float32
    assert np.array_equal(anchor, np.round(anchor))
    assert anchor[:, 0].min() == 0 and anchor[:, 0].max() == 40
    assert anchor[:, 1].min() == 0 and anchor[:, 1].max() == 80
    assert all(np.asarray(s).tolist() == [60.0, 40.0] for s in shape)


def test_best_window_is_used_with_a_warning_when_attempts_run_out():
    with pytest.warns(RuntimeWarning, match=r"no crop window satisfied"):
        result = ndd.random_bbox_crop(
            BOXES,
            thresholds=[0.99],
            allow_no_crop=False,
            scaling=[0.1, 0.2],
            total_num_attempts=5,
            rng=ndd.random.RNG(seed=2),
        )
        outputs(result)


# Relative extents in [0.5, 0.8] have width / height in [0.625, 1.6], never in [1.7, 1.8].
UNFITTING = dict(scaling=[0.5, 0.8], aspect_ratio=[1.7, 1.8])
BOXES_3D = np.array([[0.1, 0.1, 0.1, 0.3, 0.4, 0.5], [0.5, 0.5, 0.2, 0.9, 0.8, 0.7]], np.float32)


@pytest.mark.parametrize("boxes", [BOXES, BOXES_3D], ids=["2d", "3d"])
def test_unfitting_scaling_and_aspect_ratio_give_an_empty_window_when_attempts_run_out(boxes):
    # The reference draws no window at all and keeps the one it started from:
    # anchor and extent 0, no boxes (with a warning).
    ndim = boxes.shape[1] // 2
    with pytest.warns(RuntimeWarning, match=r"fit both 'scaling' and 'aspect_ratio'; using an empty window"):
        anchor, shape, cropped, labels, indices = outputs(
            ndd.random_bbox_crop(
                boxes,
                LABELS[: len(boxes)].reshape(-1, 1),
                scaling=UNFITTING["scaling"],
                aspect_ratio=UNFITTING["aspect_ratio"] * (1 if ndim == 2 else 3),
                allow_no_crop=False,
                total_num_attempts=20,
                output_bbox_indices=True,
                rng=ndd.random.RNG(seed=1),
            )
        )
    np.testing.assert_array_equal(anchor, np.zeros(ndim, np.float32))
    np.testing.assert_array_equal(shape, np.zeros(ndim, np.float32))
    assert cropped.dtype == np.float32 and cropped.shape == (0, 2 * ndim)
    assert labels.dtype == np.int32 and labels.shape == (0, 1)
    assert indices.dtype == np.int32 and indices.shape == (0,)


def test_unfitting_scaling_and_aspect_ratio_give_no_crop_once_a_no_crop_round_comes():
    # Without a limit on the attempts, a no-crop round always comes: the whole image.
    anchor, shape, boxes = ndd.random_bbox_crop(
        ndd.batch([BOXES] * 40), **UNFITTING, rng=ndd.random.RNG(seed=5)
    )
    for a, s, b in zip(anchor, shape, boxes, strict=True):
        np.testing.assert_array_equal(np.asarray(a), [0.0, 0.0])
        np.testing.assert_array_equal(np.asarray(s), [1.0, 1.0])
        np.testing.assert_array_equal(np.asarray(b), BOXES)


def test_unfitting_scaling_and_aspect_ratio_give_no_crop_as_often_as_a_no_crop_round_comes_in_time():
    # 4 attempts of 2 per round: two rounds, each no crop with probability 1/4 (one
    # choice among three thresholds and no crop), as in the reference; quietly.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, shape = _windows(
            500, **UNFITTING, thresholds=[0.1, 0.3, 0.5], num_attempts=2, total_num_attempts=4, quiet=True
        )
    whole = int(np.sum(np.all(shape == 1, axis=1)))
    assert whole + int(np.sum(np.all(shape == 0, axis=1))) == 500
    expected = 500 * np.array([1 - (3 / 4) ** 2, (3 / 4) ** 2])
    counts = np.array([whole, 500 - whole])
    assert np.sum((counts - expected) ** 2 / expected) < chi2_critical(1)


def test_outputs_labels_and_indices_of_the_kept_boxes():
    anchor, shape, boxes, labels, indices = outputs(
        ndd.random_bbox_crop(
            BOXES, LABELS, scaling=[0.4, 0.8], output_bbox_indices=True, rng=ndd.random.RNG(seed=3)
        )
    )
    assert anchor.dtype == shape.dtype == boxes.dtype == np.float32
    assert labels.dtype == indices.dtype == np.int32
    np.testing.assert_array_equal(labels, LABELS[indices])
    expected, kept = crop_boxes(BOXES, anchor, anchor + shape, None)
    np.testing.assert_array_equal(kept, indices)
    np.testing.assert_array_equal(boxes, expected)


def test_same_seed_same_windows():
    a = outputs(ndd.random_bbox_crop(BOXES, scaling=[0.3, 1.0], rng=ndd.random.RNG(seed=4)))
    b = outputs(ndd.random_bbox_crop(BOXES, scaling=[0.3, 1.0], rng=ndd.random.RNG(seed=4)))
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(crop_shape=[10, 10]), r"'input_shape' must be given with 'crop_shape'"),
        (dict(crop_shape=[10, 10], input_shape=[20, 20], scaling=[0.5, 0.5]), r"'scaling' cannot be given"),
        (dict(bbox_layout="xyXZ"), r"'bbox_layout' must name"),
        (dict(thresholds=[]), r"'thresholds' must not be empty"),
        (dict(thresholds=[-0.1]), r"ndd.random_bbox_crop: 'thresholds' must lie in \[0, 1\], got \[-0.1\]"),
        (dict(thresholds=[0.5, 1.5]), r"ndd.random_bbox_crop: 'thresholds' must lie in \[0, 1\]"),
        (dict(threshold_type="area"), r"'threshold_type' must be one of"),
        # Refused at the call even when the first round would keep the whole image.
        (dict(aspect_ratio=[2.0, 0.5]), r"'aspect_ratio' ranges must be finite \[min, max\] with min <= max"),
        (dict(aspect_ratio=[0.5, 2.0, 1.0, 1.0, 3.0, 1.0]), r"'aspect_ratio' ranges must be finite"),
    ],
)
def test_bad_arguments_fail_at_the_call(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ndd.random_bbox_crop(BOXES, **kwargs)


def test_boxes_must_be_float32_and_labels_int32():
    with pytest.raises(TypeError, match=r"ndd.random_bbox_crop: the boxes must be float32"):
        ndd.random_bbox_crop(BOXES.astype(np.float64))
    with pytest.raises(TypeError, match=r"ndd.random_bbox_crop: the labels must be int32"):
        ndd.random_bbox_crop(BOXES, LABELS.astype(np.int64))


# -- roi_random_crop ----------------------------------------------------------------


def _roi_starts(count, **kwargs):
    rng = ndd.random.RNG(seed=5)
    return [tuple(np.asarray(s).tolist()) for s in ndd.roi_random_crop(batch_size=count, rng=rng, **kwargs)]


@pytest.mark.parametrize(
    ("kwargs", "allowed"),
    [
        # A crop larger than the ROI contains it; a smaller one lies inside it.
        (dict(crop_shape=[4, 1], roi_start=[2, 3], roi_end=[5, 4]), {(1, 3), (2, 3)}),
        (dict(crop_shape=[2, 1], roi_start=[2, 3], roi_shape=[3, 1]), {(2, 3), (3, 3)}),
        # in_shape keeps the window inside the data.
        (dict(crop_shape=[4, 1], roi_start=[0, 3], roi_end=[3, 4], in_shape=[5, 6]), {(0, 3)}),
        (
            dict(crop_shape=[2, 1], roi_start=[0, 3], roi_end=[6, 4], in_shape=[6, 6]),
            {(k, 3) for k in range(5)},
        ),
    ],
)
def test_roi_random_crop_draws_every_allowed_start_equally(kwargs, allowed):
    starts = _roi_starts(2000, **kwargs)
    assert set(starts) == allowed
    counts = np.array([starts.count(s) for s in sorted(allowed)], np.float64)
    if len(counts) > 1:
        expected = len(starts) / len(counts)
        assert np.sum((counts - expected) ** 2 / expected) < chi2_critical(len(counts) - 1)


def test_roi_random_crop_takes_the_shape_of_its_input():
    start = np.asarray(
        ndd.roi_random_crop(
            np.zeros((6, 7, 3), np.uint8), crop_shape=[6, 2, 3], roi_start=[0, 0, 0], roi_end=[6, 7, 3]
        )
    )
    assert start.dtype == np.int64
    assert start[0] == 0 and 0 <= start[1] <= 5 and start[2] == 0


def test_roi_random_crop_argument_errors():
    with pytest.raises(ValueError, match=r"exactly one of 'roi_end' and 'roi_shape'"):
        ndd.roi_random_crop(crop_shape=[2, 2], roi_start=[0, 0])
    with pytest.raises(ValueError, match=r"one value per dimension"):
        ndd.roi_random_crop(crop_shape=[2, 2, 1], roi_start=[0, 0], roi_end=[1, 1])
    with pytest.raises(ValueError, match=r"larger than the input"):
        np.asarray(
            ndd.roi_random_crop(crop_shape=[20, 2], roi_start=[0, 0], roi_end=[1, 1], in_shape=[10, 10])
        )


@pytest.mark.parametrize("op", ["random_bbox_crop", "roi_random_crop"])
def test_signature_matches_reference(op):
    assert_reference_signature(op)


GPU_CALLS = {
    "random_bbox_crop": lambda: ndd.random_bbox_crop(BOXES, device="gpu"),
    "roi_random_crop": lambda: ndd.roi_random_crop(crop_shape=[2], roi_start=[0], roi_end=[1], device="gpu"),
}


@pytest.mark.parametrize("op", ["random_bbox_crop", "roi_random_crop"])
def test_gpu_device_needs_a_gpu(op):
    from ndd._cuda import driver

    if driver.device_count() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(driver.GpuUnavailableError, match=r"needs a CUDA GPU"):
        GPU_CALLS[op]()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            dict(crop_shape=[10, 10], roi_start=[40, 30], roi_end=[20, 45]),
            r"the ROI's end \[20, 45\] must not be before its start \[40, 30\]",
        ),
        (
            dict(crop_shape=[200, 10], roi_start=[10, 10], roi_end=[20, 45]),
            r"'crop_shape' \[200, 10\] is larger",
        ),
    ],
)
def test_roi_random_crop_error_of_a_batch_names_the_first_sample_and_counts_the_others(kwargs, message):
    with pytest.raises(ValueError, match=message + r".* \(sample 0 and 3999 other samples\)") as info:
        ndd.roi_random_crop(
            batch_size=4000, in_shape=[100, 100], rng=ndd.random.RNG(seed=1), **kwargs
        ).evaluate()
    assert len(str(info.value)) < 400


def test_roi_random_crop_takes_per_sample_arguments():
    crop = ndd.batch([np.array([2, 2], np.int32), np.array([6, 1], np.int32), np.array([1], np.int32)][:2])
    starts = ndd.roi_random_crop(
        crop_shape=crop, roi_start=[1, 1], roi_end=[5, 5], in_shape=[8, 8], rng=ndd.random.RNG(seed=1)
    )
    first, second = (np.asarray(s) for s in starts)
    assert 1 <= first[0] <= 3 and 1 <= first[1] <= 3
    assert 0 <= second[0] <= 1 and 1 <= second[1] <= 4


def test_roi_random_crop_samples_of_different_dimensions():
    roi = ndd.batch([np.array([1, 1], np.int32), np.array([1, 1, 0], np.int32)])
    crop = ndd.batch([np.array([2, 2], np.int32), np.array([2, 2, 3], np.int32)])
    starts = ndd.roi_random_crop(crop_shape=crop, roi_start=roi, roi_shape=crop, rng=ndd.random.RNG(seed=2))
    assert [np.asarray(s).tolist() for s in starts] == [[1, 1], [1, 1, 0]]


# -- the compiled search draws what numpy's Generator draws ---------------------------

WHOLE = np.array([[0.0, 0.0, 1.0, 1.0]], np.float32)
F32 = np.float32


def _search(generator, **kwargs):
    """search_window with one threshold of 0, no crop excluded (so no round draws a
    choice) and a box that every window keeps: the first window drawn wins."""
    from ndd._cpu.crop_windows import FOUND, search_window

    settings = dict(ratios=np.array([1.0, 1.0]), crop_shape=None, pixels=np.ones(2)) | kwargs
    status, start, size, anchor, attempts, _ = search_window(
        generator, WHOLE, np.zeros(1, np.float32), 1, 100, False, False, True, 0.0, 0.3, 0.9, **settings
    )
    assert status == FOUND
    return start, size, anchor, attempts


def _extents(numpy):
    """Two extents from U(0.3, 0.9) as the search draws them: Generator.random() values
    rounded to float32, scaled in float32."""
    return numpy.random(2).astype(F32) * (F32(0.9) - F32(0.3)) + F32(0.3)


def test_window_extents_and_starts_are_generator_random_draws_in_float32():
    start, size, _, attempts = _search(np.random.Generator(np.random.Philox(15)), ratios=np.array([0.5, 2.0]))
    # Each attempt draws two extents; one whose ratio is out of range is spent.
    numpy = np.random.Generator(np.random.Philox(15))
    spent = 1
    extents = _extents(numpy)
    while not 0.5 <= extents[0] / extents[1] <= 2.0:
        spent += 1
        extents = _extents(numpy)
    assert spent > 1 and attempts == spent
    expected_start = numpy.random(2).astype(F32) * (F32(1) - extents)
    np.testing.assert_array_equal(start, expected_start)
    np.testing.assert_array_equal(size, (expected_start + extents) - expected_start)


def test_fixed_ratio_extents_come_from_a_random_order_of_the_draws():
    start, size, _, _ = _search(np.random.Generator(np.random.Philox(3)))
    # Square windows: the extent first in a random order (Fisher-Yates, an integers
    # draw) sets the other, and both are scaled so the largest is the largest drawn.
    numpy = np.random.Generator(np.random.Philox(3))
    extents = _extents(numpy)
    first = [1, 0][numpy.integers(0, 1, endpoint=True)]
    square = np.full(2, extents[first])
    extents = extents.max() * square / square.max()
    expected_start = numpy.random(2).astype(F32) * (F32(1) - extents)
    np.testing.assert_array_equal(start, expected_start)
    np.testing.assert_array_equal(size, (expected_start + extents) - expected_start)
    np.testing.assert_allclose(size, extents.max(), rtol=1e-6)


def test_fixed_window_anchors_are_generator_integers_draws():
    pixels, crop = np.array([640.0, 480.0]), np.array([300.0, 200.0])
    start, size, anchor, _ = _search(np.random.Generator(np.random.Philox(6)), pixels=pixels, crop_shape=crop)
    numpy = np.random.Generator(np.random.Philox(6))
    expected = numpy.integers(0, (pixels - crop).astype(np.int64), size=2, endpoint=True)
    np.testing.assert_array_equal(anchor, expected)
    expected_start = (expected / pixels).astype(np.float32)
    np.testing.assert_array_equal(start, expected_start)
    np.testing.assert_array_equal(
        size, (expected_start + (crop / pixels).astype(np.float32)) - expected_start
    )


def test_roi_random_crop_of_an_image_with_channels_crops_its_leading_dimensions():
    """An HWC image with an [h, w] crop (the reference's usual call): H and W bound the window."""
    image = np.zeros((50, 60, 3), np.uint8)
    starts = np.stack(
        [
            np.asarray(ndd.roi_random_crop(image, crop_shape=[45, 55], roi_start=[5, 5], roi_end=[20, 30]))
            for _ in range(200)
        ]
    )
    assert starts.shape == (200, 2) and starts.min() >= 0
    assert starts[:, 0].max() <= 5 and starts[:, 1].max() <= 5  # 50 - 45, 60 - 55
    batch = ndd.roi_random_crop(
        ndd.batch([image, image[:48]]), crop_shape=[45, 55], roi_start=[5, 5], roi_end=[20, 30]
    )
    assert [np.asarray(s).shape for s in batch] == [(2,), (2,)]
    with pytest.raises(ValueError, match="'crop_shape' has 2 values but the input has 1 dimensions"):
        ndd.roi_random_crop(np.zeros(50, np.uint8), crop_shape=[10, 10], roi_start=[5, 5], roi_end=[20, 20])


@pytest.mark.parametrize("in_shape", [None, [50, 50]])
def test_roi_random_crop_names_a_reversed_roi(in_shape):
    with pytest.raises(ValueError, match=r"the ROI's end \[10, 10\] must not be before its start \[20, 20\]"):
        np.asarray(
            ndd.roi_random_crop(crop_shape=[10, 10], roi_start=[20, 20], roi_end=[10, 10], in_shape=in_shape)
        )


@pytest.mark.parametrize("attempts", [0, -2])
def test_random_bbox_crop_refuses_no_attempts(attempts):
    """As the reference ("must be greater than zero"); -1, the default, sets no limit."""
    boxes = np.array([[0.1, 0.1, 0.5, 0.5]], np.float32)
    with pytest.raises(ValueError, match=f"'total_num_attempts' must be greater than zero .*got {attempts}"):
        ndd.random_bbox_crop(boxes, total_num_attempts=attempts)
    assert len(ndd.random_bbox_crop(boxes, total_num_attempts=-1)) == 3
