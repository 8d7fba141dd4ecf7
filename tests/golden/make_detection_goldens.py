"""Regenerate tests/golden/detection_reference.json and .npz with the reference.

Run with the reference's Python (DALI 2.4.0):
``$HOME/dali-ref/bin/python tests/golden/make_detection_goldens.py``.

Each case records an operator name (``"bb_flip"``, ``"segmentation.select_masks"``),
its inputs and keyword arguments and either its outputs or the reference's error.
An array is stored in the npz under a key; in the JSON a value is
``{"tensor": key}`` (a Tensor), ``{"batch": [key, ...]}`` (a Batch) or plain JSON.
``outputs`` lists, per output, ``{"tensor": key}`` or ``{"batch": [...]}``.
"""

import json
import pathlib
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import nvidia.dali.experimental.dynamic as ndd  # noqa: E402

HERE = pathlib.Path(__file__).parent
ARRAYS = {}
CASES = []


def _store(array):
    key = f"a{len(ARRAYS)}"
    ARRAYS[key] = np.asarray(array)
    return key


def _spec(value):
    if isinstance(value, Batch):
        return {"batch": [_store(v) for v in value.samples]}
    if isinstance(value, np.ndarray):
        return {"tensor": _store(value)}
    if isinstance(value, ndd.random.RNG):
        return {"rng": True}
    return value


class Batch:
    """A batch input or argument of a case (built as ndd.batch in the reference)."""

    def __init__(self, samples):
        self.samples = [np.asarray(s) for s in samples]


def _to_ref(value):
    if isinstance(value, Batch):
        return ndd.batch(value.samples)
    return value


def _result_spec(result):
    if isinstance(result, ndd.Batch):
        return {"batch": [_store(np.asarray(t.evaluate().cpu())) for t in result]}
    return {"tensor": _store(np.asarray(result.evaluate().cpu()))}


def case(op, inputs, **kwargs):
    fn = ndd
    for part in op.split("."):
        fn = getattr(fn, part)
    record = {
        "op": op,
        "inputs": [_spec(i) for i in inputs],
        "kwargs": {k: _spec(v) for k, v in kwargs.items()},
    }
    try:
        result = fn(*[_to_ref(i) for i in inputs], **{k: _to_ref(v) for k, v in kwargs.items()})
        results = result if isinstance(result, tuple) else (result,)
        record["outputs"] = [_result_spec(r) for r in results]
    except Exception as exc:  # noqa: BLE001 - the reference's error is the golden
        record["error"] = str(exc).splitlines()[0]
    CASES.append(record)


def boxes_xywh(rng, count):
    xy = rng.uniform(0, 0.7, (count, 2))
    wh = rng.uniform(0.05, 0.3, (count, 2))
    return np.concatenate([xy, wh], axis=1).astype(np.float32)


def boxes_ltrb(rng, count):
    b = boxes_xywh(rng, count)
    b[:, 2:] += b[:, :2]
    return b


def flips_and_pastes(rng):
    b = boxes_xywh(rng, 5)
    lt = boxes_ltrb(rng, 4)
    for ltrb, data in ((False, b), (True, lt)):
        for horizontal in (0, 1):
            for vertical in (0, 1):
                case("bb_flip", [data], ltrb=ltrb, horizontal=horizontal, vertical=vertical)
        case("bb_flip", [data.reshape(-1)], ltrb=ltrb)
        for ratio, px, py in ((2.0, 0.5, 0.5), (1.5, 0.0, 1.0), (3.0, 0.25, 0.8), (1.0, 0.3, 0.3)):
            case("bbox_paste", [data], ltrb=ltrb, ratio=ratio, paste_x=px, paste_y=py)
    case("bb_flip", [np.zeros((0, 4), np.float32)])
    case("bb_flip", [b.astype(np.float64)])
    batch = Batch([b, lt[:2], np.zeros((0, 4), np.float32)])
    case(
        "bb_flip",
        [batch],
        horizontal=Batch([np.int32(1), np.int32(0), np.int32(1)]),
        vertical=Batch([np.int32(1), np.int32(1), np.int32(0)]),
    )
    case(
        "bbox_paste",
        [batch],
        ratio=Batch([np.float32(2), np.float32(1.25), np.float32(4)]),
        paste_x=Batch([np.float32(0.1), np.float32(0.9), np.float32(0.5)]),
        paste_y=0.2,
    )


def coord_flips(rng):
    p2 = rng.uniform(0, 1, (6, 2)).astype(np.float32)
    p3 = rng.uniform(0, 1, (5, 3)).astype(np.float32)
    p1 = rng.uniform(0, 1, (4, 1)).astype(np.float32)
    case("coord_flip", [p2])
    case("coord_flip", [p1])
    case("coord_flip", [p2], layout="yx", flip_x=1, flip_y=1, center_x=0.2, center_y=0.7)
    case("coord_flip", [p3], flip_x=0, flip_y=1, flip_z=1, center_y=0.3, center_z=1.5)
    case("coord_flip", [p3], layout="zxy", flip_x=1, flip_z=1, center_x=0.0)
    case("coord_flip", [p2], layout="x")
    case("coord_flip", [p2.astype(np.float64)])
    case(
        "coord_flip",
        [Batch([p2, p2[:3] * 2])],
        flip_y=Batch([np.int32(1), np.int32(0)]),
        center_x=Batch([np.float32(0.1), np.float32(0.4)]),
    )


def encoders(rng):
    grid = []
    for cy in (0.125, 0.375, 0.625, 0.875):
        for cx in (0.125, 0.375, 0.625, 0.875):
            for half in (0.1, 0.2):
                grid += [cx - half, cy - half, cx + half, cy + half]
    anchors = [round(float(v), 6) for v in grid]
    boxes = boxes_ltrb(rng, 6)
    labels = rng.integers(1, 20, 6).astype(np.int32)
    case("box_encoder", [boxes, labels], anchors=anchors)
    for criteria in (0.0, 0.3, 0.7, 1.0):
        case("box_encoder", [boxes, labels], anchors=anchors, criteria=criteria)
    case("box_encoder", [boxes, labels.reshape(-1, 1)], anchors=anchors, offset=True)
    case(
        "box_encoder",
        [boxes, labels],
        anchors=anchors,
        offset=True,
        means=[0.1, -0.2, 0.3, 0.05],
        stds=[0.1, 0.1, 0.2, 0.2],
        scale=300.0,
    )
    case("box_encoder", [boxes, labels], anchors=anchors, scale=2.0, means=[0.5, 0.5, 0.5, 0.5])
    # Equal boxes and equal overlaps: which box and anchor win a tie.
    same = np.array([[0.0, 0.0, 0.5, 0.5], [0.0, 0.0, 0.5, 0.5], [0.5, 0.5, 1.0, 1.0]], np.float32)
    tied = [0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.5, 0.5, 0.5, 0.5, 1.0, 1.0, 0.25, 0.25, 0.75, 0.75]
    case("box_encoder", [same, np.array([1, 2, 3], np.int32)], anchors=tied)
    case("box_encoder", [same, np.array([1, 2, 3], np.int32)], anchors=tied, criteria=0.1)
    case("box_encoder", [np.zeros((0, 4), np.float32), np.zeros(0, np.int32)], anchors=anchors[:16])
    case(
        "box_encoder",
        [Batch([boxes, boxes[:2]]), Batch([labels, labels[:2]])],
        anchors=anchors,
        offset=True,
    )
    case("box_encoder", [boxes, labels.astype(np.int64)], anchors=anchors)
    case("box_encoder", [boxes, labels], anchors=anchors[:6])
    case("box_encoder", [boxes, labels], anchors=anchors, criteria=1.5)


def select_masks(rng):
    polygons = np.array([[0, 0, 3], [1, 3, 7], [2, 7, 10], [4, 10, 12]], np.int32)
    vertices = rng.uniform(0, 100, (12, 2)).astype(np.float32)
    for ids in ([2, 0], [4], [0, 1, 2, 4], []):
        for reindex in (False, True):
            case(
                "segmentation.select_masks",
                [np.array(ids, np.int32), polygons, vertices],
                reindex_masks=reindex,
            )
    case(
        "segmentation.select_masks",
        [np.array([1], np.int32), polygons, np.ascontiguousarray(vertices.astype(np.int16)[:, :1])],
    )
    case(
        "segmentation.select_masks",
        [np.array([4, 1], np.int32), polygons, rng.uniform(0, 1, (12, 3)).astype(np.float64)],
        reindex_masks=True,
    )
    case(
        "segmentation.select_masks",
        [
            Batch([np.array([0], np.int32), np.array([2, 1], np.int32)]),
            Batch([polygons, polygons[:3]]),
            Batch([vertices, vertices[:10] + 1]),
        ],
    )
    case("segmentation.select_masks", [np.array([5], np.int32), polygons, vertices])
    case("segmentation.select_masks", [np.array([0, 0], np.int32), polygons, vertices])
    case("segmentation.select_masks", [np.array([0], np.int64), polygons, vertices])
    case("segmentation.select_masks", [np.array([0], np.int32), polygons, vertices.reshape(-1)])


def random_segmentation():
    """Calls whose outcome does not depend on the random draws: one candidate only."""
    rng = ndd.random.RNG(seed=0)
    mask = np.zeros((9, 12), np.int32)
    mask[1:4, 2:6] = 2
    mask[3, 6] = 2
    mask[6:8, 0:3] = 5
    mask[8, 11] = 5
    single = np.zeros((5, 7, 4), np.uint8)
    single[1:3, 2:6, 1:4] = 1
    obj = "segmentation.random_object_bbox"
    for fmt in ("anchor_shape", "start_end", "box"):
        case(obj, [single], format=fmt, rng=rng)
        case(obj, [single], format=fmt, output_class=True, rng=rng)
    case(obj, [mask], classes=[2], output_class=True, rng=rng)
    case(obj, [mask], class_weights=[0.0, 0.0, 0.0, 0.0, 1.0], output_class=True, rng=rng)
    case(obj, [mask], k_largest=1, classes=[5], output_class=True, rng=rng)
    case(obj, [mask], k_largest=1, ignore_class=True, rng=rng)
    case(obj, [mask], threshold=[3, 2], output_class=True, rng=rng)
    case(obj, [mask], threshold=3, output_class=True, rng=rng)
    case(obj, [mask], threshold=[4, 4], output_class=True, rng=rng)
    case(obj, [mask], foreground_prob=0.0, output_class=True, rng=rng)
    case(obj, [mask], foreground_prob=0.0, background=7, output_class=True, rng=rng)
    case(obj, [mask], foreground_prob=0.0, classes=[0, 2], output_class=True, rng=rng)
    case(obj, [mask], classes=[3], output_class=True, rng=rng)
    case(obj, [mask.astype(np.bool_)], k_largest=1, output_class=True, rng=rng)
    case(obj, [mask * 0], format="box", output_class=True, rng=rng)
    case(obj, [mask.astype(np.int16)], background=2, k_largest=1, output_class=True, rng=rng)
    case(obj, [mask], ignore_class=True, output_class=True, rng=rng)
    case(obj, [mask], k_largest=0, rng=rng)
    case(obj, [mask], classes=[2, 5], class_weights=[1.0], rng=rng)
    case(obj, [mask], format="xyz", rng=rng)
    case(obj, [mask.astype(np.float32)], rng=rng)
    case(obj, [Batch([single, single * 3])], format="box", output_class=True, rng=rng)
    pixel = "segmentation.random_mask_pixel"
    one = np.zeros((4, 6), np.int32)
    one[2, 5] = 9
    one[1, 1] = 3
    case(pixel, [one], foreground=1, threshold=5.0, rng=rng)
    case(pixel, [one], foreground=1, value=3, rng=rng)
    case(pixel, [one.astype(np.float32)], foreground=1, threshold=8.5, rng=rng)
    case(pixel, [one[None]], foreground=1, threshold=4, rng=rng)
    case(pixel, [one], foreground=1, value=3, threshold=1.0, rng=rng)
    case(pixel, [Batch([one, one.T.copy()])], foreground=1, value=9, rng=rng)


def bbox_crop_windows(rng):
    """random_bbox_crop with random windows: tests crop the boxes to the window the
    reference chose (recorded in its anchor and shape outputs) and compare."""
    ref_rng = ndd.random.RNG(seed=0)
    boxes = boxes_ltrb(rng, 8)
    labels = rng.integers(0, 50, 8).astype(np.int32)
    xywh = boxes_xywh(rng, 8)
    corners3 = np.concatenate([rng.uniform(0, 0.5, (5, 3)), rng.uniform(0.55, 1.0, (5, 3))], axis=1)
    boxes3 = corners3.astype(np.float32)
    variants = [
        ([boxes, labels], dict(scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0], allow_no_crop=False)),
        ([boxes, labels], dict(scaling=[0.3, 0.9], bbox_prune_threshold=0.0, output_bbox_indices=True)),
        ([boxes, labels], dict(scaling=[0.3, 0.9], bbox_prune_threshold=0.4, output_bbox_indices=True)),
        (
            [boxes, labels.reshape(-1, 1)],
            dict(scaling=[0.2, 0.8], aspect_ratio=[0.75, 1.5], allow_no_crop=False),
        ),
        ([xywh, labels], dict(scaling=[0.4, 0.9], bbox_layout="xyWH", output_bbox_indices=True)),
        ([boxes[:, [2, 3, 0, 1]].copy()], dict(scaling=[0.4, 0.9], bbox_layout="XYxy")),
        ([boxes, labels], dict(crop_shape=[60, 40], input_shape=[100, 120], output_bbox_indices=True)),
        ([boxes], dict(crop_shape=[40, 60], input_shape=[120, 100], shape_layout="HW")),
        ([boxes3], dict(scaling=[0.4, 0.9], allow_no_crop=False, output_bbox_indices=True)),
        ([boxes, labels], dict(thresholds=[0.1, 0.5], threshold_type="overlap", scaling=[0.3, 1.0])),
    ]
    for inputs, kwargs in variants:
        for _ in range(6):
            case("random_bbox_crop", inputs, rng=ref_rng, **kwargs)


def rotations(rng):
    boxes = boxes_ltrb(rng, 6)
    labels = rng.integers(0, 50, 6).astype(np.int32)
    xywh = boxes_xywh(rng, 6)
    small = np.array([[0.45, 0.47, 0.5, 0.52]], np.float32)
    for angle in (0.0, 10.0, 30.0, 45.0, 60.0, 90.0, 135.0, 180.0, -30.0, 270.0, 33.3, 89.999, 0.001):
        for shape in ([100, 200], [101, 200], [100, 201], [37, 59]):
            case("bbox_rotate", [small], angle=angle, input_shape=shape)
        case("bbox_rotate", [boxes, labels], angle=angle, input_shape=[60, 80])
        case("bbox_rotate", [boxes, labels], angle=angle, input_shape=[61, 80], keep_size=True)
    for mode in ("fixed", "halfway"):
        for keep in (False, True):
            case("bbox_rotate", [boxes, labels], angle=25.0, input_shape=[60, 80], mode=mode, keep_size=keep)
    for threshold in (0.0, 0.5, 1.0):
        case(
            "bbox_rotate",
            [boxes, labels],
            angle=40.0,
            input_shape=[60, 80],
            keep_size=True,
            remove_threshold=threshold,
        )
    case("bbox_rotate", [xywh, labels.reshape(-1, 1)], angle=20.0, input_shape=[60, 80], bbox_layout="xyWH")
    case("bbox_rotate", [boxes * np.float32(60)], angle=20.0, input_shape=[60, 80], bbox_normalized=False)
    case("bbox_rotate", [boxes], angle=20.0, input_shape=[60, 80, 3])
    case("bbox_rotate", [boxes], angle=20.0, input_shape=[80, 60], shape_layout="WH")
    case("bbox_rotate", [boxes, labels], angle=35.0, input_shape=[60, 80], size=[50, 70])
    case("bbox_rotate", [boxes, labels], angle=35.0, input_shape=[60, 80], size=[50.4, 70.6])
    case(
        "bbox_rotate",
        [Batch([boxes, boxes[:2]]), Batch([labels, labels[:2]])],
        angle=Batch([np.float32(15), np.float32(-50)]),
        input_shape=Batch([np.array([60, 80], np.int32), np.array([33, 47], np.int32)]),
    )
    case("bbox_rotate", [boxes], angle=30.0, input_shape=[60, 80], mode="xx")
    case("bbox_rotate", [boxes.astype(np.float64)], angle=30.0, input_shape=[60, 80])
    case("bbox_rotate", [boxes, labels.astype(np.int64)], angle=30.0, input_shape=[60, 80])


def turned_rotations():
    """bbox_rotate's 'fixed' and 'halfway' boxes when the rotation turns a box on its
    side, the removal of boxes without area, and canvases at odd multiples of 45
    degrees (where the canvas parity and the aspect test are near ties)."""
    wide_tall = np.array([[0.1, 0.4, 0.5, 0.5], [0.6, 0.1, 0.7, 0.5]], np.float32)
    labels = np.array([5, 6], np.int32)
    for angle in (60.0, 90.0, 120.0, 240.0, -60.0, 45.0, -45.0, 135.0, 225.0, 315.0):
        for mode in ("fixed", "halfway"):
            for keep in (False, True):
                case(
                    "bbox_rotate",
                    [wide_tall, labels],
                    angle=angle,
                    input_shape=[100, 100],
                    mode=mode,
                    keep_size=keep,
                )
    pixels = np.array([[10, 20, 50, 30], [5, 5, 100, 95]], np.float32)
    for angle in (30.0, 60.0, 314.9, 46.0):
        for mode in ("fixed", "halfway"):
            case(
                "bbox_rotate",
                [pixels],
                angle=angle,
                input_shape=[100, 140],
                bbox_normalized=False,
                keep_size=True,
                mode=mode,
            )
    case("bbox_rotate", [wide_tall], angle=100.0, input_shape=[60, 80], mode="fixed", bbox_layout="xyWH")
    # No area, and inverted corners.
    odd = np.array(
        [[0.2, 0.2, 0.2, 0.5], [0.3, 0.3, 0.6, 0.6], [0.6, 0.5, 0.4, 0.7], [0.7, 0.7, 0.5, 0.5]], np.float32
    )
    for mode in ("expand", "fixed", "halfway"):
        for angle in (0.0, 30.0, 90.0):
            case(
                "bbox_rotate",
                [odd, np.arange(4, dtype=np.int32)],
                angle=angle,
                input_shape=[100, 100],
                remove_threshold=0.0,
                mode=mode,
            )
    corner = np.array([[1, 1, 2, 2]], np.float32)
    for angle in (-315.0, -135.0, -45.0, 225.0, 315.0):
        for shape in ([94, 41], [10, 11], [12, 15]):
            case("bbox_rotate", [corner], angle=angle, input_shape=shape, bbox_normalized=False)


def coord_flip_layouts():
    """Layouts that leave out an axis the points have."""
    p1 = np.array([[0.25], [0.6]], np.float32)
    p2 = np.array([[0.2, 0.3], [0.7, 0.1]], np.float32)
    case("coord_flip", [p1], layout="y")
    case("coord_flip", [p2], layout="yz")
    case("coord_flip", [p2], layout="yz", flip_x=0)
    case("coord_flip", [p2], layout="xz", flip_y=1)
    case("coord_flip", [p2], layout="zy")


def object_classes_and_background():
    """random_object_bbox's classes against the background label; calls with one outcome."""
    rng = ndd.random.RNG(seed=0)
    obj = "segmentation.random_object_bbox"
    ones = np.ones((6, 8), np.int32)
    ones[1:3, 2:5] = 2
    case(obj, [ones], background=1, classes=[1, 2], rng=rng)
    case(obj, [ones], background=1, classes=[2, 1], class_weights=[1.0, 1.0], rng=rng)
    case(obj, [ones], background=1, class_weights=[1.0, 1.0], output_class=True, rng=rng)
    case(obj, [ones], classes=[0, 2], background=0, rng=rng)
    labels = np.ones((6, 12), np.int32)
    labels[0, 0] = 0
    labels[2, 2:4] = 2
    labels[4, 6:9] = 3
    labels[1, 10] = 4
    for background, weights in (
        (1, [1.0, 0.0, 0.0, 0.0]),
        (1, [0.0, 1.0, 0.0, 0.0]),
        (1, [0.0, 0.0, 0.0, 1.0]),
        (3, [0.0, 0.0, 0.0, 1.0]),
        (-1, [1.0, 0.0]),
        (0, [1.0, 0.0]),
    ):
        case(obj, [labels], background=background, class_weights=weights, output_class=True, rng=rng)


OPERATORS = [
    "bb_flip",
    "bbox_paste",
    "bbox_rotate",
    "box_encoder",
    "coord_flip",
    "random_bbox_crop",
    "roi_random_crop",
    "segmentation.random_mask_pixel",
    "segmentation.random_object_bbox",
    "segmentation.select_masks",
]


def signatures():
    """Each operator's parameters: (name, kind, required), in order."""
    import inspect

    out = {}
    for op in OPERATORS:
        fn = ndd
        for part in op.split("."):
            fn = getattr(fn, part)
        out[op] = [
            [p.name, p.kind.name, p.default is inspect.Parameter.empty]
            for p in inspect.signature(fn).parameters.values()
        ]
    return out


def single_precision_angles():
    """bbox_rotate at angles whose float32 cosine or sine (the C library's cosf and
    sinf, as the reference takes them) is one step from the double-precision value
    rounded to float32."""
    boxes = np.array([[0.1, 0.2, 0.6, 0.7], [0.3, 0.1, 0.9, 0.4]], np.float32)
    for angle in (
        -222.0363,
        193.33224,
        137.76266,
        -56.936596,
        -137.54289,
        -35.252003,
        -152.40385,
        299.02194,
        -108.44326,
        -213.18669,
        30.050179,
        200.02861,
        210.09605,
    ):
        case("bbox_rotate", [boxes], angle=float(np.float32(angle)), input_shape=[300, 400])


def main():
    rng = np.random.default_rng(0)
    flips_and_pastes(rng)
    coord_flips(rng)
    encoders(rng)
    select_masks(rng)
    random_segmentation()
    bbox_crop_windows(rng)
    rotations(rng)
    # Added later: kept last so that the cases above keep their array keys.
    turned_rotations()
    coord_flip_layouts()
    object_classes_and_background()
    single_precision_angles()
    (HERE / "detection_reference.json").write_text(
        json.dumps({"signatures": signatures(), "cases": CASES}, indent=1) + "\n"
    )
    np.savez_compressed(HERE / "detection_reference.npz", **ARRAYS)
    print(f"{len(CASES)} cases, {len(ARRAYS)} arrays")


if __name__ == "__main__":
    main()
