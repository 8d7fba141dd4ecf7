"""ndd.rotate and ndd.warp_affine against the reference goldens
(tests/golden/warp_reference.json/.npz, made by make_warp_goldens.py), numpy and errors.

Tolerances: output shapes exact; nearest-neighbour results exact; 2-D warp_affine
and rotate exact (the reference's stepped source points, matrices and blend, in
float32); the others (perspective warps, volumes, water): bilinear uint8 within 1,
bilinear float within 1e-3.
"""

import json
import pathlib

import numpy as np
import pytest

import ndd
from ndd._prepare.args import InvalidArgumentError
from ndd.types import DALIInterpType

GOLDEN = pathlib.Path(__file__).parent.parent / "golden"
DATA = json.loads((GOLDEN / "warp_reference.json").read_text(encoding="utf-8"))
with np.load(GOLDEN / "warp_reference.npz") as _npz:
    ARRAYS = {k: _npz[k] for k in _npz.files}
NN = int(DALIInterpType.INTERP_NN)
# Inputs with a layout other than the default for their number of dimensions.
LAYOUTS = {"planar": "CHW", "gray2d": "HW", "seq": "FHWC", "vol": "DHWC"}


def _op(name):
    obj = ndd
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _kwargs(kwargs):
    out = {}
    for k, v in kwargs.items():
        if k == "dtype":
            v = getattr(ndd, v)
        elif k == "matrix" and np.size(v) in (9, 12):
            v = np.asarray(v, np.float32)
        elif k == "interp_type":
            v = DALIInterpType(v)
        elif k == "size" and not float(np.sum(np.mod(v, 1))) == 0:
            # The generator's **kwargs reach the reference as data (its call inspection takes a
            # list it cannot see in the call's text for a tensor argument), whose fractions
            # warp_affine and rotate cut; give them as data here too.
            v = np.asarray(v, np.float32)
        out[k] = v
    return out


def _assert_image(actual, expected, nearest, op="", exact=False):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    if exact:
        np.testing.assert_array_equal(actual, expected)
    elif nearest and op.endswith("warp_perspective"):
        # The perspective division puts some points within float rounding of a pixel
        # boundary, where either neighbour is right: allow 1% of the pixels to differ.
        differ = np.count_nonzero(actual != expected)
        assert differ <= max(3, actual.size // 100), f"{differ} of {actual.size} values differ"
    elif nearest:
        np.testing.assert_array_equal(actual, expected)
    elif expected.dtype == np.int16:
        # The reference interpolates int16 more coarsely (errors up to ~0.5% of the range).
        np.testing.assert_allclose(actual, expected, atol=80)
    elif expected.dtype.kind == "f":
        np.testing.assert_allclose(actual, expected, atol=1e-3, rtol=1e-5)
    else:
        diff = np.abs(actual.astype(np.int64) - expected.astype(np.int64))
        assert diff.max() <= 1, f"max |diff| {diff.max()} at {np.unravel_index(diff.argmax(), diff.shape)}"


def _id(case):
    return f"{case['op']}-{case['input']}-{json.dumps(case['kwargs'])}-{json.dumps(case.get('per_sample'))}"


@pytest.mark.parametrize("case", DATA["cases"], ids=[_id(c) for c in DATA["cases"]])
def test_golden(case):
    fn = _op(case["op"])
    nearest = case["kwargs"].get("interp_type") == NN
    expected = [ARRAYS[k] for k in case["outputs"]]
    kwargs = _kwargs(case["kwargs"])
    inputs = case["input"] if isinstance(case["input"], list) else [case["input"]]
    exact = case["op"] in ("warp_affine", "rotate") and "vol" not in inputs
    if "per_sample" not in case:
        args = [ndd.as_tensor(ARRAYS[f"in_{case['input']}"], layout=LAYOUTS.get(case["input"]))]
        if "mtx" in case:
            args.append(np.asarray(case["mtx"], np.float32))
        _assert_image(fn(*args, **kwargs), expected[0], nearest, case["op"], exact)
        return
    data = ndd.batch([ARRAYS[f"in_{name}"] for name in case["input"]])
    per_sample = {}
    for name, values in case["per_sample"].items():
        samples = [np.asarray(v, np.int32 if name == "mask" else np.float32) for v in values]
        if name == "matrix" and samples[0].size == 6:
            samples = [s.reshape(2, 3) for s in samples]
        per_sample[name] = ndd.batch(samples)
    result = fn(data, **per_sample, **kwargs)
    assert isinstance(result, ndd.Batch)
    actual = [np.asarray(t) for t in result.tensors]
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        _assert_image(a, e, nearest, case["op"], exact)


def test_rotate_output_sizes():
    shape_of = {}
    for h, w, angle, expected in DATA["rotate_sizes"]:
        shape_of.setdefault((h, w), []).append((angle, tuple(expected)))
    mismatches = []
    for (h, w), cases in shape_of.items():
        img = ndd.as_tensor(np.zeros((h, w, 1), np.uint8))
        for angle, expected in cases:
            got = ndd.rotate(img, angle=angle).shape[:2]
            if got != expected:
                mismatches.append((h, w, angle, got, expected))
    assert not mismatches


def test_rotate_volume_output_sizes():
    mismatches = []
    for shape, axis, angle, expected in DATA["rotate_sizes_3d"]:
        vol = ndd.as_tensor(np.zeros((*shape, 1), np.uint8), layout="DHWC")
        got = ndd.rotate(vol, angle=angle, axis=axis).shape[:3]
        if got != tuple(expected):
            mismatches.append((shape, axis, angle, got, expected))
    assert not mismatches


def test_inputs_rebuild_from_recipe():
    # The goldens' inputs are what the generator's recipe makes (so the recipe documents them).
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_warp_goldens", GOLDEN / "make_warp_goldens.py")
    assert spec is not None
    source = (GOLDEN / "make_warp_goldens.py").read_text(encoding="utf-8")
    namespace = {"np": np}
    exec(source[source.index("def images") : source.index("ROT = ")], namespace)  # noqa: S102
    for name, arr in namespace["images"]().items():
        np.testing.assert_array_equal(arr, ARRAYS[f"in_{name}"])


def test_identity_and_integer_shift_are_exact():
    img = ARRAYS["in_rgb"]
    np.testing.assert_array_equal(np.asarray(ndd.warp_affine(img, matrix=[1, 0, 0, 0, 1, 0])), img)
    shifted = np.asarray(ndd.warp_affine(img, matrix=[1, 0, 3, 0, 1, 2], fill_value=0))
    np.testing.assert_array_equal(shifted[:-2, :-3], img[2:, 3:])
    assert not shifted[-2:].any() and not shifted[:, -3:].any()


@pytest.mark.parametrize(
    "nested",
    [[[1, 0.2, 3], [0.1, 1, -2]], ((1, 0.2, 3), (0.1, 1, -2)), np.array([[1, 0.2, 3], [0.1, 1, -2]])],
)
def test_a_nested_affine_matrix_is_the_flat_one(nested):
    img = ARRAYS["in_rgb"]
    flat = np.asarray(ndd.warp_affine(img, matrix=[1, 0.2, 3, 0.1, 1, -2]))
    np.testing.assert_array_equal(np.asarray(ndd.warp_affine(img, matrix=nested)), flat)


def test_a_nested_perspective_matrix_is_the_flat_one():
    img = ARRAYS["in_rgb"]
    rows = [[1, 0.1, 2], [0.05, 0.9, -1], [0.001, 0.002, 1]]
    flat = np.asarray(ndd.experimental.warp_perspective(img, matrix=sum(rows, [])))
    np.testing.assert_array_equal(np.asarray(ndd.experimental.warp_perspective(img, matrix=rows)), flat)


@pytest.mark.parametrize(
    "matrix",
    [
        [[[1]]],
        np.eye(3)[None],
        ndd.batch([np.eye(3, dtype=np.float32)[None]]),
    ],
    ids=["constant-1x1x1", "constant-1x3x3", "per-sample-1x3x3"],
)
def test_a_perspective_matrix_of_more_than_two_dimensions_is_refused(matrix):
    # As the reference: [[[1]]] used to be taken as the one value of every element.
    images = ndd.batch([ARRAYS["in_rgb"]])
    with pytest.raises(ValueError, match=r"warp_perspective: 'matrix' must be 3x3 .*shape \(1, "):
        ndd.experimental.warp_perspective(images, matrix=matrix).evaluate()


def test_a_perspective_matrix_input_of_more_than_two_dimensions_is_refused():
    matrix = ndd.tensor(np.eye(3, dtype=np.float32)[None])
    with pytest.raises(ValueError, match=r"'matrix_input' input must be 3x3, got shape \(1, 3, 3\)"):
        ndd.experimental.warp_perspective(ARRAYS["in_rgb"], matrix).evaluate()


def test_inverse_map_false_inverts_the_matrix():
    img = ARRAYS["in_rgb"]
    forward = np.array([[1.1, 0.2, -2], [-0.1, 0.9, 3], [0, 0, 1]])
    inverse = np.linalg.inv(forward)[:2].reshape(-1).tolist()
    a = np.asarray(ndd.warp_affine(img, matrix=forward[:2].reshape(-1).tolist(), inverse_map=False))
    b = np.asarray(ndd.warp_affine(img, matrix=inverse))
    assert np.abs(a.astype(int) - b.astype(int)).max() <= 1


def test_rotate_90_is_rot90():
    img = ARRAYS["in_rgb"]
    for angle, k in ((90, 1), (180, 2), (270, 3), (-90, 3)):
        out = np.asarray(ndd.rotate(img, angle=angle, interp_type=DALIInterpType.INTERP_NN))
        np.testing.assert_array_equal(out, np.rot90(img, k))


def test_sequence_frames_warp_alike():
    seq = ARRAYS["in_seq"]
    out = np.asarray(ndd.rotate(ndd.as_tensor(seq, layout="FHWC"), angle=33, fill_value=0))
    for f in range(seq.shape[0]):
        np.testing.assert_array_equal(out[f], np.asarray(ndd.rotate(seq[f], angle=33, fill_value=0)))


def test_chw_rejected_and_hw_accepted():
    img = ARRAYS["in_gray"]
    out2d = np.asarray(ndd.rotate(ndd.as_tensor(img[..., 0], layout="HW"), angle=15))
    np.testing.assert_array_equal(out2d, np.asarray(ndd.rotate(img, angle=15))[..., 0])
    with pytest.raises(ValueError, match="ndd.rotate: .*HWC"):
        ndd.rotate(ndd.as_tensor(np.transpose(ARRAYS["in_rgb"], (2, 0, 1)), layout="CHW"), angle=10)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda img: ndd.warp_affine(img), "mtx"),
        (lambda img: ndd.warp_affine(img, matrix=[1, 0, 0, 1]), "6 elements"),
        (
            lambda img: ndd.warp_affine(img, np.eye(2, 3, dtype=np.float32), matrix=[1, 0, 0, 0, 1, 0]),
            "not both",
        ),
        (lambda img: ndd.warp_affine(img, matrix=[1, 0, 0, 0, 1, 0], size=[3]), "'size'"),
        (
            lambda img: ndd.warp_affine(
                img, matrix=[1, 0, 0, 0, 1, 0], interp_type=DALIInterpType.INTERP_CUBIC
            ),
            "interp_type",
        ),
        (lambda img: ndd.warp_affine(img, matrix=[0, 0, 0, 0, 0, 0], inverse_map=False), "invertible"),
        (lambda img: ndd.rotate(img, angle=10, interp_type=DALIInterpType.INTERP_LANCZOS3), "interp_type"),
        (lambda img: ndd.rotate(img, angle=10, size=[1, 2, 3]), "'size'"),
        (lambda img: ndd.rotate(img), "angle"),
    ],
)
def test_errors_name_the_argument(call, message):
    img = ARRAYS["in_rgb"]
    with pytest.raises((ValueError, TypeError), match=message):
        np.asarray(call(img))


# -- experimental.remap and jitter: GPU-only in the reference, tested against numpy -------------


def _bilinear_numpy(img, px, py):
    """Bilinear sampling at pixel-index coordinates (centres at integers), outside reads 0."""
    rows, columns = img.shape[:2]
    x0, y0 = np.floor(px).astype(int), np.floor(py).astype(int)
    fx, fy = (px - x0)[..., None], (py - y0)[..., None]

    def at(y, x):
        inside = (x >= 0) & (y >= 0) & (x < columns) & (y < rows)
        out = np.zeros(px.shape + img.shape[2:], np.float64)
        out[inside] = img[y[inside], x[inside]]
        return out

    top = at(y0, x0) * (1 - fx) + at(y0, x0 + 1) * fx
    bottom = at(y0 + 1, x0) * (1 - fx) + at(y0 + 1, x0 + 1) * fx
    return top * (1 - fy) + bottom * fy


@pytest.mark.parametrize("origin", ["corner", "center"])
def test_remap_matches_numpy_bilinear(origin):
    img = ARRAYS["in_rgb"]
    rng = np.random.default_rng(1)
    map_x = rng.uniform(-3, 30, (11, 17)).astype(np.float32)
    map_y = rng.uniform(-3, 22, (11, 17)).astype(np.float32)
    out = np.asarray(ndd.experimental.remap(img, map_x, map_y, pixel_origin=origin))
    shift = 0.5 if origin == "corner" else 0.0
    expected = _bilinear_numpy(img, map_x.astype(np.float64) - shift, map_y.astype(np.float64) - shift)
    assert out.shape == (11, 17, 3) and out.dtype == np.uint8
    assert np.abs(out.astype(np.float64) - expected).max() <= 0.5 + 1e-3


def test_remap_nearest_and_identity():
    img = ARRAYS["in_rgb"]
    y, x = np.mgrid[0:20, 0:28].astype(np.float32)
    np.testing.assert_array_equal(np.asarray(ndd.experimental.remap(img, x, y, pixel_origin="center")), img)
    np.testing.assert_array_equal(np.asarray(ndd.experimental.remap(img, x + 0.5, y + 0.5)), img)
    nn = DALIInterpType.INTERP_NN
    moved = np.asarray(ndd.experimental.remap(img, x + 2.2, y - 0.9, pixel_origin="center", interp=nn))
    np.testing.assert_array_equal(moved[1:, :-2], img[:-1, 2:])
    assert not moved[0].any() and not moved[:, -2:].any()


def test_remap_sequences_and_batches():
    seq = ARRAYS["in_seq"]
    frames = seq.shape[0]
    y, x = np.mgrid[0:12, 0:16].astype(np.float32)
    map_x = np.stack([x + f for f in range(frames)])
    map_y = np.stack([y] * frames)
    out = np.asarray(
        ndd.experimental.remap(ndd.as_tensor(seq, layout="FHWC"), map_x, map_y, pixel_origin="center")
    )
    for f in range(frames):
        np.testing.assert_array_equal(out[f, :, : 16 - f], seq[f, :, f:])
    batch = ndd.experimental.remap(
        ndd.batch([ARRAYS["in_rgb"], ARRAYS["in_odd"]]),
        ndd.batch([x[:5, :6], x[:3, :4]]),
        ndd.batch([y[:5, :6], y[:3, :4]]),
        pixel_origin="center",
    )
    shapes = [np.asarray(t).shape for t in batch.tensors]
    assert shapes == [(5, 6, 3), (3, 4, 3)]


def test_jitter_moves_pixels_within_the_degree():
    # Unique values (row * 28 + column, in every channel) tell where each output pixel came from.
    img = (np.arange(20 * 28).reshape(20, 28, 1) * np.ones(3, np.int32)).astype(np.int32)
    out = np.asarray(ndd.jitter(img, nDegree=3, fill_value=-1, rng=ndd.random.RNG(seed=5)))
    assert out.shape == img.shape and out.dtype == np.int32
    assert (out[..., 0:1] == out).all()  # the same move for every channel
    values = out[..., 0]
    inside = values >= 0
    rows, columns = np.divmod(values[inside], 28)
    ys, xs = np.nonzero(inside)
    assert np.all(np.abs(rows - ys) <= 1) and np.all(np.abs(columns - xs) <= 1)
    assert (rows != ys).any() and (columns != xs).any()
    # Only pixels near the border can take the fill value.
    ys_fill, xs_fill = np.nonzero(~inside)
    assert np.all((ys_fill == 0) | (ys_fill == 19) | (xs_fill == 0) | (xs_fill == 27))


def test_jitter_is_reproducible_and_masked():
    img = ARRAYS["in_rgb"]
    a = np.asarray(ndd.jitter(img, rng=ndd.random.RNG(seed=3)))
    b = np.asarray(ndd.jitter(img, rng=ndd.random.RNG(seed=3)))
    c = np.asarray(ndd.jitter(img, rng=ndd.random.RNG(seed=4)))
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()
    np.testing.assert_array_equal(np.asarray(ndd.jitter(img, nDegree=1)), img)
    batch = ndd.jitter(
        ndd.batch([img, img]), mask=ndd.batch([np.int32(0), np.int32(1)]), rng=ndd.random.RNG(seed=3)
    )
    first, second = (np.asarray(t) for t in batch.tensors)
    np.testing.assert_array_equal(first, img)
    assert (second != img).any()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda img: ndd.jitter(img, nDegree=0), "nDegree"),
        (lambda img: ndd.jitter(img, interp_type=DALIInterpType.INTERP_CUBIC), "interp_type"),
        (lambda img: ndd.jitter(img, rng=5), "rng"),
        (
            lambda img: ndd.experimental.remap(
                img, np.zeros((3, 4), np.float32), np.zeros((3, 5), np.float32)
            ),
            "mapy",
        ),
        (
            lambda img: ndd.experimental.remap(
                img, np.zeros((3, 4, 2), np.float32), np.zeros((3, 4, 2), np.float32)
            ),
            "mapx",
        ),
        (lambda img: ndd.experimental.remap(img, np.zeros((3, 4)), np.zeros((3, 4))), "float32"),
        (lambda img: ndd.water(img, interp_type=DALIInterpType.INTERP_CUBIC), "interp_type"),
        (lambda img: ndd.experimental.warp_perspective(img, matrix=np.eye(2, dtype=np.float32)), "3x3"),
        (
            lambda img: ndd.experimental.warp_perspective(
                img, matrix=np.eye(3, dtype=np.float32), border_mode="x"
            ),
            "border_mode",
        ),
        (
            lambda img: ndd.experimental.warp_perspective(
                img, matrix=np.eye(3, dtype=np.float32), fill_value=[1, 2]
            ),
            "fill_value",
        ),
    ],
)
def test_more_errors_name_the_argument(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        np.asarray(call(ARRAYS["in_rgb"]))


def _strided_copy(img):
    """``img`` with its pixels 4 values apart: the warp kernels take their per-pixel path for it."""
    wide = np.zeros((*img.shape[:2], 4), img.dtype)
    wide[..., :3] = img
    return wide[..., :3]


_ROW_KERNEL_MATRICES = {
    "perspective": [[0.9, 0.15, -6.0], [-0.1, 1.05, 4.0], [0.004, -0.003, 1.0]],
    # w = x - 10.5 is 0 at the centres of column 10: those points are at infinity.
    "horizon": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, -10.5]],
    "half_pixel_shift": [[1.0, 0.0, 0.5], [0.0, 1.0, -0.5], [0.0, 0.0, 1.0]],
    "mirror": [[-1.0, 0.0, 53.0], [0.0, -1.0, 37.0], [0.0, 0.0, 1.0]],
}


@pytest.mark.parametrize("matrix", list(_ROW_KERNEL_MATRICES), ids=list(_ROW_KERNEL_MATRICES))
@pytest.mark.parametrize("interp", [0, 1], ids=["nearest", "linear"])
@pytest.mark.parametrize("border", [0, 1, 3], ids=["constant", "clamp", "reflect_101"])
@pytest.mark.parametrize("round_even", [False, True])
@pytest.mark.parametrize("fill", [[10.0, 250.5, -3.0], [0.0, np.inf, 7.0]], ids=["finite", "inf"])
def test_packed_rgb_rows_match_the_per_pixel_path(matrix, interp, border, round_even, fill):
    # Packed 3-channel uint8 rows go through the vectorised row kernels (blocks of 8 pixels,
    # the rest per pixel); a strided copy of the same image through the per-pixel code.
    from ndd._cpu.warp import warp_mapped, warp_projective

    rng = np.random.default_rng(7)
    img = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    m = np.asarray(_ROW_KERNEL_MATRICES[matrix], np.float64).reshape(-1)
    fill = np.array(fill, np.float32)
    # A larger output than the source: whole blocks of points with no tap inside.
    packed, strided = np.empty((41, 61, 3), np.uint8), np.empty((41, 61, 3), np.uint8)
    for perspective, values in ((True, m), (False, m[:6].copy())):
        warp_projective(img, packed, values, perspective, interp, border, fill, round_even)
        warp_projective(_strided_copy(img), strided, values, perspective, interp, border, fill, round_even)
        np.testing.assert_array_equal(packed, strided)
    map_x = rng.uniform(-8, 61, (41, 61)).astype(np.float32)
    map_y = rng.uniform(-8, 45, (41, 61)).astype(np.float32)
    map_x[0, :3] = [np.nan, np.inf, -1e9]
    map_y[1, :2] = np.floor(map_y[1, :2])
    warp_mapped(img, packed, map_x, map_y, interp, border, fill, round_even)
    warp_mapped(_strided_copy(img), strided, map_x, map_y, interp, border, fill, round_even)
    np.testing.assert_array_equal(packed, strided)


def test_sphere_maps_match_their_formula():
    from ndd._cpu.warp import sphere_maps

    rows, columns, mid_x, mid_y, radius = 13, 29, np.float32(14.5), np.float32(6.5), np.float32(14)
    map_x, map_y = np.empty((rows, columns), np.float32), np.empty((rows, columns), np.float32)
    sphere_maps(map_x, map_y, mid_x, mid_y, radius)
    dy = (np.arange(rows, dtype=np.float32)[:, None] + np.float32(0.5)) - mid_y
    dx = (np.arange(columns, dtype=np.float32)[None, :] + np.float32(0.5)) - mid_x
    scale = np.sqrt(dx * dx + dy * dy) / radius
    np.testing.assert_array_equal(map_x, mid_x + scale * dx)
    np.testing.assert_array_equal(map_y, np.broadcast_to(mid_y + scale * dy, (rows, columns)))


def test_warp_messages_name_the_interpolation():
    image = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")
    with pytest.raises(
        ValueError, match=r"ndd.rotate: 'interp_type' must be INTERP_NN or INTERP_LINEAR, got INTERP_CUBIC$"
    ):
        ndd.rotate(image, angle=3, interp_type=ndd.types.INTERP_CUBIC)


@pytest.mark.parametrize("matrix", [2.0, [2.0]])
def test_warp_perspective_matrix_of_one_value_is_every_element(matrix):
    """As in the reference: every element 2 maps each output point to (1, 1), the corner shared
    by the first four pixels, so every pixel is their mean (the reference gave 12, 13, 14 here)."""
    img = np.arange(6 * 7 * 3, dtype=np.uint8).reshape(6, 7, 3)
    out = np.asarray(ndd.experimental.warp_perspective(ndd.as_tensor(img, layout="HWC"), matrix=matrix))
    mean = img[:2, :2].reshape(4, 3).mean(axis=0)
    np.testing.assert_array_equal(out, np.broadcast_to(mean, img.shape).astype(np.uint8))
    np.testing.assert_array_equal(out[0, 0], [12, 13, 14])


def test_rotate_takes_and_ignores_an_axis_for_2d_images():
    """The reference accepts 'axis' with a 2-D image and rotates it in its plane."""
    img = ndd.as_tensor(np.arange(6 * 7 * 3, dtype=np.uint8).reshape(6, 7, 3), layout="HWC")
    plain = np.asarray(ndd.rotate(img, angle=30.0))
    for axis in ([0, 0, 1], [1, 0, 0], [1, 0]):
        np.testing.assert_array_equal(np.asarray(ndd.rotate(img, angle=30.0, axis=axis)), plain)
    with pytest.raises(ValueError, match="volumes need the rotation 'axis'"):
        ndd.rotate(ndd.as_tensor(np.zeros((2, 4, 5, 3), np.uint8), layout="DHWC"), angle=30.0)


@pytest.mark.parametrize("fill, expected", [(300.0, 255), (-5.0, 0), (17.6, 17)])
def test_water_fill_values_saturate_to_the_output_type(fill, expected):
    """As its doc says: truncated as a C cast (as the reference), saturated (the reference wraps
    300 to 44 and -5 to 251 in uint8)."""
    image = ndd.tensor(np.full((6, 6, 1), 9, np.uint8), layout="HWC")
    out = np.asarray(ndd.water(image, ampl_x=40.0, ampl_y=40.0, fill_value=fill))
    np.testing.assert_array_equal(out, expected)  # every point lands outside


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
@pytest.mark.parametrize("matrix", ["perspective", "horizon", "mirror"])
@pytest.mark.parametrize("border", [0, 1], ids=["constant", "clamp"])
@pytest.mark.parametrize("interp", [1, 0], ids=["linear", "nearest"])
def test_sampled_rows_agree_across_layouts(dtype, matrix, border, interp):
    # Rows of any layout find each point's taps (or pixel) once, then blend (or copy) the
    # channels: pixel by pixel for interleaved channels (three unrolled), plane by plane
    # for planar ones; points whose taps are all the fill take it. Every layout must give
    # the packed uint8 kernels' values, and numpy's bilinear sampling for floats.
    from ndd._cpu.warp import warp_projective

    rng = np.random.default_rng(11)
    img = rng.integers(0, 256, (37, 53, 3)).astype(dtype)
    m = np.asarray(_ROW_KERNEL_MATRICES[matrix], np.float64).reshape(-1)
    fill = np.array([10.0, 250.0, 3.0], np.float32)
    interleaved = np.empty((41, 61, 3), dtype)
    warp_projective(img, interleaved, m, True, interp, border, fill, False)
    planar_in = np.ascontiguousarray(img.transpose(2, 0, 1))
    planar_out = np.empty((3, 41, 61), dtype)
    warp_projective(
        planar_in.transpose(1, 2, 0), planar_out.transpose(1, 2, 0), m, True, interp, border, fill, False
    )
    np.testing.assert_array_equal(planar_out.transpose(1, 2, 0), interleaved)
    for k in range(3):
        # One channel at a time, and four channels (the generic interleaved loop).
        single = np.empty((41, 61, 1), dtype)
        warp_projective(
            np.ascontiguousarray(img[..., k : k + 1]), single, m, True, interp, border, fill[k : k + 1], False
        )
        np.testing.assert_array_equal(single[..., 0], interleaved[..., k])
    four = np.empty((41, 61, 4), dtype)
    warp_projective(
        np.concatenate([img, img[..., :1]], axis=-1),
        four,
        m,
        True,
        interp,
        border,
        np.append(fill, fill[0]),
        False,
    )
    np.testing.assert_array_equal(four[..., :3], interleaved)
    if dtype == np.uint8:
        strided = np.empty_like(interleaved)
        warp_projective(_strided_copy(img), strided, m, True, interp, border, fill, False)
        np.testing.assert_array_equal(strided, interleaved)
    if dtype == np.float32 and border == 0 and matrix != "horizon" and interp == 1:
        y, x = np.mgrid[0:41, 0:61] + 0.5
        w = m[6] * x + m[7] * y + m[8]
        px = (m[0] * x + m[1] * y + m[2]) / w - 0.5
        py = (m[3] * x + m[4] * y + m[5]) / w - 0.5
        rows, columns = img.shape[:2]
        # Fill is not 0: shift so that numpy's zero outside stands for it.
        expected = _bilinear_numpy(img - fill, px, py) + fill
        far = (px < -1) | (py < -1) | (px > columns) | (py > rows)
        assert far.any() and (~far).any()
        np.testing.assert_allclose(interleaved, expected, atol=2e-3)


@pytest.mark.parametrize("interp", [ndd.types.INTERP_LINEAR, ndd.types.INTERP_NN, ndd.types.INTERP_CUBIC])
@pytest.mark.parametrize("layout", ["CHW", "FCHW"])
def test_warp_perspective_of_planar_rgb_is_the_interleaved_warp(interp, layout):
    # Planar uint8 RGB is interleaved around the packed RGB kernels (bilinear and nearest);
    # every sampling gives the warp of the interleaved image, transposed.
    rng = np.random.default_rng(4)
    frames = rng.integers(0, 256, (2, 29, 41, 3), dtype=np.uint8)
    matrix = np.array(_ROW_KERNEL_MATRICES["perspective"], np.float32)
    kwargs = {"interp_type": interp, "fill_value": [77.0], "size": [33, 37]}
    if layout == "CHW":
        interleaved, planar = frames[0], np.ascontiguousarray(frames[0].transpose(2, 0, 1))
        order = (2, 0, 1)
    else:
        interleaved, planar = frames, np.ascontiguousarray(frames.transpose(0, 3, 1, 2))
        order = (0, 3, 1, 2)
    expected = np.asarray(
        ndd.experimental.warp_perspective(
            ndd.tensor(interleaved, layout=layout.replace("C", "") + "C"), matrix=matrix, **kwargs
        )
    )
    out = np.asarray(
        ndd.experimental.warp_perspective(ndd.tensor(planar, layout=layout), matrix=matrix, **kwargs)
    )
    np.testing.assert_array_equal(out, expected.transpose(order))


@pytest.mark.parametrize("interp", [0, 1], ids=["nearest", "linear"])
@pytest.mark.parametrize("border", [0, 1], ids=["constant", "clamp"])
def test_row_samplers_match_the_per_pixel_path_at_the_edges(interp, border):
    # Points just inside, on and past the edges (a tap at -1 with weight 0 still reads the
    # image: inf * 0 is NaN), far away and not a number: the row samplers (contiguous maps)
    # give what the per-pixel path (strided maps) gives.
    from ndd._cpu.warp import warp_mapped

    src = np.arange(5 * 7 * 2, dtype=np.float32).reshape(5, 7, 2)
    src[:, 0, 0] = np.inf
    src[0, :, 1] = -np.inf
    edges = np.array(
        [-1e9, -2.0, -0.50001, -0.5, -0.49999, 0.0, 0.5, 6.5, 7.0, 7.49999, 7.5, 7.50001, np.nan, 3.3]
    )
    map_x, map_y = np.meshgrid(edges, edges - 0.0)
    map_x, map_y = map_x.astype(np.float32), map_y.astype(np.float32)
    fill = np.array([9.0, -4.0], np.float32)
    rows = np.empty((*map_x.shape, 2), np.float32)
    warp_mapped(src, rows, map_x, map_y, interp, border, fill, False)
    wide_x, wide_y = np.repeat(map_x, 2, axis=1), np.repeat(map_y, 2, axis=1)
    pixels = np.empty_like(rows)
    warp_mapped(src, pixels, wide_x[:, ::2], wide_y[:, ::2], interp, border, fill, False)
    np.testing.assert_array_equal(rows, pixels)


# The reference's output sizes (rows, columns) for a `size` given as a list of constants,
# which it rounds (halves up, at least 1), and as a Tensor, whose values it cuts.
SIZE_CASES = [
    ([40.5, 30.5], (41, 31)),
    ([40.4, 30.6], (40, 31)),
    ([40.9, 30.1], (41, 30)),
    ([0.4, 3.0], (1, 3)),
]


@pytest.mark.parametrize("size, expected", SIZE_CASES)
def test_a_fractional_size_list_is_rounded_and_a_tensor_size_cut(size, expected):
    image = ndd.tensor(np.zeros((37, 53, 3), np.uint8), layout="HWC")
    affine = [0.8, 0.3, 2.0, -0.2, 1.1, 1.5]
    assert ndd.warp_affine(image, matrix=affine, size=size).shape == (*expected, 3)
    assert ndd.rotate(image, angle=20, size=tuple(size)).shape == (*expected, 3)
    as_data = ndd.tensor(np.array(size, np.float32))
    cut = tuple(int(s) for s in size)
    assert ndd.warp_affine(image, matrix=affine, size=as_data).shape == (*cut, 3)
    assert ndd.rotate(image, angle=20, size=as_data).shape == (*cut, 3)
    volume = ndd.tensor(np.zeros((9, 21, 29, 2), np.uint8), layout="DHWC")
    assert ndd.rotate(volume, angle=20, axis=[0, 0, 1], size=[5.5, *size]).shape == (6, *expected, 2)


@pytest.mark.parametrize("size", [[0, 10], [-1.0, 3.0], [float("nan"), 3.0]])
def test_a_size_list_must_be_above_zero(size):
    image = ndd.tensor(np.zeros((8, 8, 3), np.uint8), layout="HWC")
    with pytest.raises(
        InvalidArgumentError, match=r"ndd.warp_affine: 'size' must be a list of sizes above 0"
    ):
        ndd.warp_affine(image, matrix=[1.0, 0, 0, 0, 1, 0], size=size)
    with pytest.raises(InvalidArgumentError, match=r"ndd.rotate: 'size' must be a list of sizes above 0"):
        ndd.rotate(image, angle=10, size=size)
    # As data, 0 is an empty image (the reference's too).
    assert ndd.rotate(image, angle=10, size=np.array([0, 10], np.float32)).shape == (0, 10, 3)
