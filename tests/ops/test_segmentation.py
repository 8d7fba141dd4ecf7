"""ndd.segmentation.random_mask_pixel, random_object_bbox and select_masks
(ndd/_ops/segmentation.py).

select_masks and the random operators' calls with a single possible outcome are
replayed from the reference goldens (tests/golden/detection_reference.json). The
random choices are checked statistically (chi-square tests with a 1e-6 false-alarm
rate, on seeded RNGs) and the objects against a flood fill written here.
"""

import math
from statistics import NormalDist

import numpy as np
import pytest
from detection_golden import assert_reference_signature, case_id, cases, replay

import ndd
from ndd._cpu import blobs as _cpu_blobs
from ndd._ops.segmentation import connected_blobs

random_object_bbox = ndd.segmentation.random_object_bbox
random_mask_pixel = ndd.segmentation.random_mask_pixel


def chi2_critical(df, false_alarm=1e-6):
    """Upper quantile of the chi-square distribution (Wilson-Hilferty approximation)."""
    z = NormalDist().inv_cdf(1 - false_alarm)
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def assert_frequencies(counts, probabilities):
    counts = np.asarray(counts, np.float64)
    expected = counts.sum() * np.asarray(probabilities, np.float64)
    statistic = np.sum((counts - expected) ** 2 / expected)
    assert statistic < chi2_critical(len(counts) - 1), (counts.tolist(), expected.tolist())


def flood_fill_blobs(labels, foreground):
    """Face-connected blobs of equal labels, found by a plain flood fill:
    a sorted list of (label, start, end)."""
    seen = np.zeros(labels.shape, bool)
    blobs = []
    for seed in zip(*np.nonzero(foreground), strict=True):
        if seen[seed]:
            continue
        seen[seed] = True
        stack, points = [seed], []
        while stack:
            p = stack.pop()
            points.append(p)
            for axis in range(labels.ndim):
                for step in (-1, 1):
                    q = list(p)
                    q[axis] += step
                    q = tuple(q)
                    if 0 <= q[axis] < labels.shape[axis] and foreground[q] and not seen[q]:
                        if labels[q] == labels[p]:
                            seen[q] = True
                            stack.append(q)
        points = np.array(points)
        blobs.append((int(labels[seed]), tuple(points.min(0).tolist()), tuple((points.max(0) + 1).tolist())))
    return sorted(blobs)


def _as_list(result):
    return [np.asarray(r) for r in (result if isinstance(result, tuple) else (result,))]


# -- reference goldens ----------------------------------------------------------------


@pytest.mark.parametrize("case", cases("segmentation.select_masks"), ids=case_id)
def test_select_masks_matches_reference(case):
    replay(case)


@pytest.mark.parametrize("case", cases("segmentation.random_object_bbox"), ids=case_id)
def test_random_object_bbox_matches_reference_when_there_is_one_choice(case):
    replay(case)


@pytest.mark.parametrize("case", cases("segmentation.random_mask_pixel"), ids=case_id)
def test_random_mask_pixel_matches_reference_when_there_is_one_choice(case):
    replay(case)


# -- select_masks -------------------------------------------------------------------


def test_select_masks_keeps_every_polygon_of_a_mask():
    # The reference keeps only the last polygon of a mask with several (a deliberate divergence).
    polygons = np.array([[0, 0, 3], [0, 3, 5], [1, 5, 10]], np.int32)
    vertices = np.arange(20, dtype=np.float32).reshape(10, 2)
    out_polygons, out_vertices = ndd.segmentation.select_masks(
        np.array([1, 0], np.int32), polygons, vertices, reindex_masks=True
    )
    np.testing.assert_array_equal(np.asarray(out_polygons), [[0, 0, 5], [1, 5, 8], [1, 8, 10]])
    np.testing.assert_array_equal(np.asarray(out_vertices), np.concatenate([vertices[5:10], vertices[0:5]]))


def test_select_masks_rejects_vertex_ranges_outside_the_vertices():
    polygons = np.array([[0, 0, 30]], np.int32)
    with pytest.raises(
        ValueError, match=r"ndd.segmentation.select_masks: 'polygons' must hold vertex ranges"
    ):
        np.asarray(ndd.segmentation.select_masks(np.array([0], np.int32), polygons, np.zeros((4, 2)))[0])


def test_select_masks_reads_and_checks_only_the_selected_polygons():
    """As the reference: a broken range of a mask not selected is not read."""
    polygons = np.array([[0, 3, 0], [1, 3, 7]], np.int32)
    vertices = np.arange(20, dtype=np.float32).reshape(10, 2)
    out_polygons, out_vertices = ndd.segmentation.select_masks(np.array([1], np.int32), polygons, vertices)
    np.testing.assert_array_equal(np.asarray(out_polygons), [[1, 0, 4]])
    np.testing.assert_array_equal(np.asarray(out_vertices), vertices[3:7])
    with pytest.raises(ValueError, match="'polygons' must hold vertex ranges"):
        np.asarray(ndd.segmentation.select_masks(np.array([0], np.int32), polygons, vertices)[0])


def _select_masks_model(ids, polygons, vertices, reindex):
    """select_masks by its definition, one mask at a time."""
    out_polygons, pieces, offset = [], [], 0
    for new_id, mask in enumerate(ids.tolist()):
        for mask_id, start, end in polygons.tolist():
            if mask_id == mask:
                out_polygons.append([new_id if reindex else mask, offset, offset + end - start])
                pieces.append(vertices[start:end])
                offset += end - start
    return np.array(out_polygons, np.int32).reshape(-1, 3), np.concatenate(pieces or [vertices[:0]])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("reindex", [False, True])
def test_select_masks_of_interleaved_polygons_match_the_definition(seed, reindex):
    rng = np.random.default_rng(seed)
    num_vertices = 60
    masks = rng.permutation(np.arange(-5, 40))[:12].astype(np.int32)
    starts = rng.integers(0, num_vertices, 30)
    table = np.stack(
        [rng.choice(masks, 30), starts, starts + rng.integers(0, num_vertices - starts + 1)], axis=1
    )
    # The polygon table as a view of a wider array, and vertices of another type and width.
    polygons = np.zeros((30, 5), np.int32)
    polygons[:, 1:4] = table
    polygons = polygons[:, 1:4]
    vertices = rng.integers(-1000, 1000, (num_vertices, 3)).astype(np.int16)
    ids = rng.permutation(np.unique(table[:, 0]))[: 1 + seed].astype(np.int32)
    out_polygons, out_vertices = ndd.segmentation.select_masks(ids, polygons, vertices, reindex_masks=reindex)
    expected_polygons, expected_vertices = _select_masks_model(ids, table, vertices, reindex)
    np.testing.assert_array_equal(np.asarray(out_polygons), expected_polygons, strict=True)
    np.testing.assert_array_equal(np.asarray(out_vertices), expected_vertices, strict=True)


def test_select_masks_names_a_repeated_or_missing_mask():
    polygons = np.array([[4, 0, 1], [7, 1, 2], [2, 0, 2]], np.int32)
    vertices = np.zeros((2, 2), np.float32)
    select = ndd.segmentation.select_masks
    with pytest.raises(ValueError, match="'mask_ids' must not repeat a mask, got 4 twice"):
        np.asarray(select(np.int32([7, 4, 2, 4, 7]), polygons, vertices)[0])
    with pytest.raises(ValueError, match="mask 9 of 'mask_ids' is not in 'polygons'"):
        np.asarray(select(np.int32([7, 9, 5]), polygons, vertices)[0])
    out_polygons, out_vertices = select(np.int32([]), polygons, vertices)
    assert np.asarray(out_polygons).shape == (0, 3) and np.asarray(out_vertices).shape == (0, 2)


# -- connected blobs ----------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1, 1), (17, 23), (6, 7, 8), (40,), (3, 4, 5, 6)])
@pytest.mark.parametrize("density", [0.3, 0.7])
def test_connected_blobs_match_a_flood_fill(shape, density):
    rng = np.random.default_rng(sum(shape))
    labels = rng.integers(1, 4, shape) * (rng.random(shape) < density)
    classes, starts, ends = connected_blobs(labels, labels != 0)
    found = sorted(
        (int(c), tuple(s.tolist()), tuple(e.tolist())) for c, s, e in zip(classes, starts, ends, strict=True)
    )
    assert found == flood_fill_blobs(labels, labels != 0)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("shape", [(1, 1, 7), (9, 31), (5, 6, 40), (2, 3, 4, 25)])
def test_connected_blobs_of_every_label_type_in_the_order_of_their_first_pixels(dtype, shape):
    """Long runs along the last axis (density 0.9, 2 labels) joined along the other axes; the blobs
    come in the order of their first pixel in C order, each with that pixel's label."""
    rng = np.random.default_rng(len(shape))
    labels = (rng.integers(1, 3, shape) * (rng.random(shape) < 0.9)).astype(dtype)
    first, starts, ends = _cpu_blobs.connected_blobs(labels, labels != 0)
    assert np.all(np.diff(first) > 0)
    classes = labels.reshape(-1)[first]
    found = sorted(
        (int(c), tuple(s.tolist()), tuple(e.tolist())) for c, s, e in zip(classes, starts, ends, strict=True)
    )
    assert found == flood_fill_blobs(labels.astype(np.int64), labels != 0)
    # A 0-D mask is one pixel: one blob of no extent, or none.
    for value in (dtype(0), dtype(2)):
        first, starts, ends = _cpu_blobs.connected_blobs(np.array(value), np.array(value != 0))
        assert first.tolist() == ([0] if value else []) and starts.shape == ends.shape == (len(first), 0)


def test_connected_blobs_follow_a_long_winding_path():
    snake = np.zeros((41, 41), np.uint8)
    snake[::2] = 1
    for row in range(1, 41, 2):
        snake[row, 40 if row % 4 == 1 else 0] = 1
    classes, starts, ends = connected_blobs(snake, snake != 0)
    assert classes.tolist() == [1]
    assert starts.tolist() == [[0, 0]] and ends.tolist() == [[41, 41]]


# -- random_object_bbox -------------------------------------------------------------

MASK = np.zeros((6, 8), np.int32)
MASK[1:3, 2:5] = 1
MASK[3, 4] = 1
MASK[5, 0:3] = 1
MASK[4, 6] = 3
# The objects of MASK as (class, start, end).
OBJECTS = {
    (1, (1, 2), (4, 5)),
    (1, (5, 0), (6, 3)),
    (3, (4, 6), (5, 7)),
}


def _draws(count, **kwargs):
    rng = ndd.random.RNG(seed=11)
    out = []
    for _ in range(count):
        box = np.asarray(random_object_bbox(MASK, format="box", rng=rng, **kwargs)).tolist()
        out.append((tuple(box[:2]), tuple(box[2:])))
    return out


def test_random_object_bbox_returns_the_box_of_an_object_in_every_format():
    rng = ndd.random.RNG(seed=3)
    for _ in range(30):
        anchor, shape, label = _as_list(random_object_bbox(MASK, output_class=True, rng=rng))
        assert anchor.dtype == np.int32 and shape.dtype == np.int32 and label.shape == ()
        assert (int(label), tuple(anchor.tolist()), tuple((anchor + shape).tolist())) in OBJECTS
        start, end = _as_list(random_object_bbox(MASK, format="start_end", rng=rng))
        assert any(tuple(start.tolist()) == s and tuple(end.tolist()) == e for _, s, e in OBJECTS)


def test_random_object_bbox_draws_a_class_then_one_of_its_objects():
    draws = _draws(3000)
    counts = [draws.count((s, e)) for _, s, e in sorted(OBJECTS)]
    # Two classes equally likely; class 1 has two objects.
    assert_frequencies(counts, [0.25, 0.25, 0.5])


def test_random_object_bbox_with_ignore_class_draws_objects_equally():
    draws = _draws(3000, ignore_class=True)
    assert_frequencies([draws.count((s, e)) for _, s, e in sorted(OBJECTS)], [1 / 3] * 3)


def test_random_object_bbox_follows_class_weights():
    draws = _draws(3000, class_weights=[3.0, 0.0, 1.0])
    assert_frequencies([draws.count((s, e)) for _, s, e in sorted(OBJECTS)], [0.375, 0.375, 0.25])


def test_random_object_bbox_foreground_prob_gives_the_whole_input_otherwise():
    draws = _draws(3000, foreground_prob=0.3)
    whole = draws.count(((0, 0), (6, 8)))
    assert_frequencies([whole, len(draws) - whole], [0.7, 0.3])


def test_random_object_bbox_k_largest_keeps_the_largest_boxes_of_the_class():
    draws = _draws(200, k_largest=1, classes=[1])
    assert set(draws) == {((1, 2), (4, 5))}


def test_random_object_bbox_batch_samples_are_drawn_independently_and_reproducibly():
    batch = ndd.batch([MASK] * 64)
    first = [
        np.asarray(s).tolist() for s in random_object_bbox(batch, format="box", rng=ndd.random.RNG(seed=5))
    ]
    again = [
        np.asarray(s).tolist() for s in random_object_bbox(batch, format="box", rng=ndd.random.RNG(seed=5))
    ]
    assert first == again
    assert len({tuple(b) for b in first}) == 3


def test_random_object_bbox_cache_gives_the_same_objects():
    rng = ndd.random.RNG(seed=2)
    for _ in range(20):
        anchor, shape = _as_list(random_object_bbox(MASK, cache_objects=True, rng=rng))
        assert any(
            tuple(anchor.tolist()) == s and tuple((anchor + shape).tolist()) == e for _, s, e in OBJECTS
        )


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(background=1, classes=[1, 2]),
        dict(background=1, classes=[2, 1], class_weights=[1.0, 1.0]),
        dict(background=0, classes=[0, 2]),
    ],
)
def test_random_object_bbox_classes_must_not_hold_the_background(kwargs):
    background = kwargs["background"]
    message = (
        rf"ndd.segmentation.random_object_bbox: 'classes' must not hold the background label {background}"
    )
    with pytest.raises(ValueError, match=message):
        np.asarray(random_object_bbox(MASK, format="box", **kwargs))


# Label 1 everywhere but one pixel of 0 and one object each of 2 and 3.
LABELED = np.ones((6, 12), np.int32)
LABELED[0, 0] = 0
LABELED[2, 2:4] = 2
LABELED[4, 6:9] = 3


@pytest.mark.parametrize(
    ("background", "weights", "label"),
    [
        (1, [1.0, 0.0, 0.0], 0),
        (1, [0.0, 1.0, 0.0], 2),
        (1, [0.0, 0.0, 1.0], 3),
        (0, [1.0, 0.0], 1),
        (0, [0.0, 1.0], 2),
        (2, [0.0, 0.0, 1.0], 3),
    ],
)
def test_random_object_bbox_weights_without_classes_are_those_of_the_labels_but_the_background(
    background, weights, label
):
    # As in the reference: the weights go to the labels 0, 1, 2, ... skipping the background.
    rng = ndd.random.RNG(seed=6)
    for _ in range(10):
        *_, chosen = _as_list(
            random_object_bbox(
                LABELED, background=background, class_weights=weights, output_class=True, rng=rng
            )
        )
        assert int(chosen) == label


def test_random_object_bbox_weights_never_choose_the_background_as_a_class():
    # Background 1 everywhere but one object of 2: the weights are those of 0 (absent) and 2.
    mask = np.ones((6, 8), np.int32)
    mask[1:3, 2:5] = 2
    rng = ndd.random.RNG(seed=7)
    for _ in range(30):
        box = np.asarray(
            random_object_bbox(mask, background=1, class_weights=[1.0, 1.0], format="box", rng=rng)
        )
        assert box.tolist() == [1, 2, 3, 5]


def test_random_object_bbox_rejects_a_probability_outside_0_1():
    with pytest.raises(ValueError, match=r"'foreground_prob' must be in \[0, 1\]"):
        np.asarray(random_object_bbox(MASK, foreground_prob=1.5, format="box"))


# -- random_mask_pixel --------------------------------------------------------------


def test_random_mask_pixel_draws_foreground_pixels_uniformly():
    rng = ndd.random.RNG(seed=4)
    batch = ndd.batch([MASK] * 2000)
    pixels = [tuple(np.asarray(p).tolist()) for p in random_mask_pixel(batch, foreground=1, rng=rng)]
    foreground = [tuple(p) for p in np.argwhere(MASK > 0).tolist()]
    assert set(pixels) <= set(foreground)
    assert_frequencies([pixels.count(p) for p in foreground], [1 / len(foreground)] * len(foreground))


def test_random_mask_pixel_draws_any_pixel_without_foreground():
    rng = ndd.random.RNG(seed=6)
    pixels = [
        np.asarray(random_mask_pixel(MASK, foreground=1, value=7, rng=rng)).tolist() for _ in range(500)
    ]
    cells = [p[0] * 8 + p[1] for p in pixels]
    assert min(cells) >= 0 and max(cells) < 48
    assert len(set(cells)) > 30


def test_random_mask_pixel_of_a_bool_mask_takes_any_integer_value():
    # numpy refuses a bool array == an int beyond int64 (OverflowError from the run);
    # no pixel holds such a value, so any pixel is drawn; value=1 draws the True ones.
    mask = np.eye(5, dtype=bool)
    rng = ndd.random.RNG(seed=2)
    beyond = {
        tuple(np.asarray(random_mask_pixel(mask, foreground=1, value=10**30, rng=rng)).tolist())
        for _ in range(200)
    }
    assert len(beyond) > 15
    ones = {
        tuple(np.asarray(random_mask_pixel(mask, foreground=1, value=1, rng=rng)).tolist())
        for _ in range(100)
    }
    assert ones == {(k, k) for k in range(5)}


def test_random_mask_pixel_is_reproducible_per_seed():
    a = [np.asarray(random_mask_pixel(MASK, rng=ndd.random.RNG(seed=9))).tolist() for _ in range(3)]
    assert a[0] == a[1] == a[2]
    assert np.asarray(random_mask_pixel(MASK, rng=ndd.random.RNG(seed=9))).dtype == np.int64


@pytest.mark.parametrize(
    "op", ["segmentation.random_mask_pixel", "segmentation.random_object_bbox", "segmentation.select_masks"]
)
def test_signature_matches_reference(op):
    assert_reference_signature(op)


GPU_CALLS = {
    "segmentation.random_mask_pixel": lambda: random_mask_pixel(MASK, device="gpu"),
    "segmentation.random_object_bbox": lambda: random_object_bbox(MASK, device="gpu"),
    "segmentation.select_masks": lambda: ndd.segmentation.select_masks(
        np.zeros(1, np.int32), np.zeros((1, 3), np.int32), np.zeros((1, 2), np.float32), device="gpu"
    ),
}


@pytest.mark.parametrize(
    "op", ["segmentation.random_mask_pixel", "segmentation.random_object_bbox", "segmentation.select_masks"]
)
def test_gpu_device_needs_a_gpu(op):
    from ndd._cuda import driver

    if driver.device_count() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(driver.GpuUnavailableError, match=r"needs a CUDA GPU"):
        GPU_CALLS[op]()
