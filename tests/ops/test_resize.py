"""resize, experimental.resize, random_resized_crop, resize_crop_mirror and tensor_resize.

Values and shapes are replayed from the reference's goldens
(``tests/golden/resize_cases.json`` / ``resize_values.npz``, made by
``tests/golden/make_resize_goldens.py``). Output shapes must match exactly; values
within a tolerance, because the reference samples its filters from tables
(weights within about 4e-4 of the exact filter): uint8 within 1 (2 for the
Gaussian filter, whose table is the coarsest), int16 within 16 (5e-4 of full
scale), float32 within 1e-3 of the largest magnitude.
"""

import json
import pathlib
import sys
import warnings

import numpy as np
import pytest

import ndd
from ndd import types

GOLDEN = pathlib.Path(__file__).parent.parent / "golden"
sys.path.insert(0, str(GOLDEN))
from make_resize_goldens import make_input  # noqa: E402

CASES = json.loads((GOLDEN / "resize_cases.json").read_text(encoding="utf-8"))
with np.load(GOLDEN / "resize_values.npz") as _npz:
    VALUES = {key: _npz[key] for key in _npz.files}

# The reference flips CHW images vertically for mirror=1 (the bit meant for the width):
# ndd flips the width, as the argument's documentation says; see test_mirror_flips_width_in_chw.
_DIVERGENT = {
    i
    for i, c in enumerate(CASES["cases"])
    if c["op"] == "resize_crop_mirror" and c["input"] == "u8_chw" and c["kwargs"].get("mirror")
}


def _kwargs(raw):
    out = {}
    for key, value in raw.items():
        if isinstance(value, str) and value.startswith("INTERP_"):
            value = getattr(types, value)
        elif key == "dtype":
            value = ndd.float32
        out[key] = value
    return out


def _degenerate_region(kwargs):
    starts, ends = kwargs.get("roi_start"), kwargs.get("roi_end")
    return starts is not None and any(a == b for a, b in zip(starts, ends, strict=True))


def _tolerance(case, expected):
    """0: the reference's bits; but a zero-width region is widened to 1e-3 of a pixel,
    where the last bits of its ends decide a rounding."""
    return 1 if _degenerate_region(case["kwargs"]) else 0


def _assert_close(actual, expected, tolerance):
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    assert diff.max(initial=0) <= tolerance


VALUE_CASES = [(i, c) for i, c in enumerate(CASES["cases"]) if "error" not in c and i not in _DIVERGENT]
ERROR_CASES = [(i, c) for i, c in enumerate(CASES["cases"]) if "error" in c]


@pytest.mark.parametrize(
    "index, case", VALUE_CASES, ids=[f"{i}-{c['op']}-{c['input']}" for i, c in VALUE_CASES]
)
def test_matches_reference(index, case):
    image, layout = make_input(case["input"])
    op = getattr(ndd, case["op"])
    out = op(ndd.tensor(image, layout=layout or None), **_kwargs(case["kwargs"]))
    expected = VALUES[f"case{index}"]
    assert tuple(out.shape) == tuple(case["shape"])  # the shape known before the run
    _assert_close(np.asarray(out), expected, _tolerance(case, expected))
    assert (out.layout or "") == layout


@pytest.mark.parametrize("index, case", ERROR_CASES, ids=[str(i) for i, _ in ERROR_CASES])
def test_rejects_what_the_reference_rejects(index, case):
    image, layout = make_input(case["input"])
    op = getattr(ndd, case["op"])
    with pytest.raises(ValueError, match=f"ndd.{case['op']}"):
        op(ndd.tensor(image, layout=layout or None), **_kwargs(case["kwargs"]))


@pytest.mark.parametrize("index", range(len(CASES["batch_cases"])))
def test_per_sample_arguments_match_reference(index):
    record = CASES["batch_cases"][index]
    images = [make_input("u8")[0], make_input("u8_odd")[0]]
    kwargs = {}
    for key, value in record["kwargs"].items():
        if not isinstance(value, list):
            kwargs[key] = value
        elif isinstance(value[0], str):
            kwargs[key] = ndd.batch(np.array([getattr(types, v) for v in value], np.int32))
        else:
            kwargs[key] = ndd.batch(np.asarray(value, np.float32))
    out = ndd.resize(ndd.batch(images, layout="HWC"), **kwargs)
    for k in range(2):
        expected = VALUES[f"batch{index}_{k}"]
        assert list(expected.shape) == record["shapes"][k]
        _assert_close(np.asarray(out.select(k)), expected, 1)


def test_experimental_resize_is_resize():
    image = make_input("u8")[0]
    a = ndd.experimental.resize(image, size=[9, 40], interp_type=types.INTERP_CUBIC)
    b = ndd.resize(image, size=[9, 40], interp_type=types.INTERP_CUBIC)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_save_attrs_returns_input_extents():
    image = make_input("u8")[0]
    out, attrs = ndd.resize(
        ndd.tensor(image, layout="HWC"), size=[8, 12], roi_start=[2, 3], roi_end=[10, 10], save_attrs=True
    )
    assert out.shape == (8, 12, 3)
    np.testing.assert_array_equal(np.asarray(attrs), np.array([20, 28], np.int32))


def test_sequence_frames_resize_like_images():
    frames, _ = make_input("u8_seq")
    out = np.asarray(
        ndd.resize(ndd.tensor(frames, layout="FHWC"), size=[7, 9], interp_type=types.INTERP_CUBIC)
    )
    for f in range(frames.shape[0]):
        single = ndd.resize(ndd.tensor(frames[f], layout="HWC"), size=[7, 9], interp_type=types.INTERP_CUBIC)
        np.testing.assert_array_equal(out[f], np.asarray(single))


def test_large_batch_on_thread_pool_matches_samples():
    rng = np.random.default_rng(3)
    images = [rng.integers(0, 256, (200 + 10 * k, 300 - 7 * k, 3), dtype=np.uint8) for k in range(6)]
    out = ndd.resize(ndd.batch(images, layout="HWC"), size=[64, 80])
    for k, image in enumerate(images):
        np.testing.assert_array_equal(np.asarray(out.select(k)), np.asarray(ndd.resize(image, size=[64, 80])))


def test_identity_resize_copies_input():
    image = make_input("u8")[0]
    out = np.asarray(ndd.resize(image, size=[20, 28]))
    np.testing.assert_array_equal(out, image)


def test_mirror_flips_width_in_chw():
    chw = make_input("u8_chw")[0]
    hwc = np.ascontiguousarray(chw.transpose(1, 2, 0))
    kwargs = {"size": [16, 20], "crop": [10, 12], "mirror": 1}
    a = np.asarray(ndd.resize_crop_mirror(ndd.tensor(chw, layout="CHW"), **kwargs))
    b = np.asarray(ndd.resize_crop_mirror(ndd.tensor(hwc, layout="HWC"), **kwargs))
    np.testing.assert_array_equal(a, b.transpose(2, 0, 1))
    unflipped = np.asarray(
        ndd.resize_crop_mirror(ndd.tensor(hwc, layout="HWC"), size=[16, 20], crop=[10, 12])
    )
    np.testing.assert_array_equal(b, unflipped[:, ::-1])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"size": [4, 5], "dtype": ndd.int32}, "'dtype'"),
        ({"size": [4, 5], "roi_start": [1, 1]}, "'roi_start'"),
        ({"size": [4, 5], "mode": "bigger"}, "'mode'"),
        ({"size": [4, 5], "max_size": [1, 2, 3]}, "'max_size'"),
        ({"size": [4, 5], "interp_type": 9}, "'interp_type'"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ndd.resize(make_input("u8")[0], **kwargs)


# -- random_resized_crop -----------------------------------------------------------------------


def _coordinate_image(height, width):
    """float32 HWC image whose channels are the row and column of each pixel."""
    rows, cols = np.meshgrid(
        np.arange(height, dtype=np.float32), np.arange(width, dtype=np.float32), indexing="ij"
    )
    return np.stack([rows, cols], axis=-1)


def test_random_resized_crop_is_resize_of_the_generated_window():
    rng = np.random.default_rng(1)
    samples = [
        rng.integers(0, 256, shape, dtype=np.uint8) for shape in ((375, 500, 3), (300, 500, 3), (375, 200, 3))
    ]
    out = ndd.random_resized_crop(
        ndd.batch(samples, layout="HWC"), size=[224, 224], rng=ndd.random.RNG(seed=5)
    )
    shapes = ndd.batch([np.array(s.shape, np.int32) for s in samples])
    anchors, extents = ndd.random_crop_generator(shapes, rng=ndd.random.RNG(seed=5))
    for k, image in enumerate(samples):
        anchor, extent = np.asarray(anchors.select(k)), np.asarray(extents.select(k))
        expected = ndd.resize(
            image, size=[224, 224], roi_start=anchor.tolist(), roi_end=(anchor + extent).tolist()
        )
        np.testing.assert_array_equal(np.asarray(out.select(k)), np.asarray(expected))


def test_random_resized_crop_windows_follow_area_and_ratio():
    image = _coordinate_image(120, 160)
    rng = ndd.random.RNG(seed=11)
    areas, ratios = [], []
    for _ in range(150):
        out = np.asarray(ndd.random_resized_crop(image, size=[32, 32], interp_type=types.INTERP_NN, rng=rng))
        # Nearest-neighbour samples span the window (to within one output pixel's reach).
        height = out[..., 0].max() - out[..., 0].min() + 1
        width = out[..., 1].max() - out[..., 1].min() + 1
        areas.append(height * width / (120 * 160))
        ratios.append(width / height)
    areas, ratios = np.array(areas), np.array(ratios)
    assert areas.min() >= 0.05 and areas.max() <= 1.0
    assert areas.min() < 0.2 and areas.max() > 0.7  # the whole range is used
    assert ratios.min() > 0.6 and ratios.max() < 1.6


def test_random_resized_crop_same_seed_same_result_and_sequences_share_window():
    frames = make_input("u8_seq")[0]
    a = np.asarray(
        ndd.random_resized_crop(ndd.tensor(frames, layout="FHWC"), size=8, rng=ndd.random.RNG(seed=3))
    )
    b = np.asarray(
        ndd.random_resized_crop(ndd.tensor(frames, layout="FHWC"), size=8, rng=ndd.random.RNG(seed=3))
    )
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3, 8, 8, 3)
    # A constant sequence gives identical frames: one window for all of them.
    same = np.repeat(frames[:1], 3, axis=0)
    c = np.asarray(
        ndd.random_resized_crop(ndd.tensor(same, layout="FHWC"), size=8, rng=ndd.random.RNG(seed=4))
    )
    np.testing.assert_array_equal(c[0], c[1])
    np.testing.assert_array_equal(c[0], c[2])


def test_random_resized_crop_whole_image_window_is_plain_resize():
    image = make_input("u8")[0]
    out = ndd.random_resized_crop(
        image,
        size=[9, 11],
        random_area=[1.0, 1.0],
        random_aspect_ratio=[28 / 20, 28 / 20],
        rng=ndd.random.RNG(seed=0),
    )
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ndd.resize(image, size=[9, 11])))


def test_random_resized_crop_dtype_and_layouts():
    chw = make_input("u8_chw")[0]
    out = ndd.random_resized_crop(
        ndd.tensor(chw, layout="CHW"), size=[8, 6], dtype=ndd.float32, rng=ndd.random.RNG(seed=1)
    )
    assert out.shape == (3, 8, 6) and out.dtype == ndd.float32 and out.layout == "CHW"


@pytest.mark.parametrize(
    "data, layout",
    [
        (np.zeros((6, 8, 3), np.uint8), "HWC"),
        (np.zeros((2, 6, 8, 3), np.uint8), "FHWC"),
        (ndd.batch([np.zeros((6, 8, 3), np.uint8)] * 2), "HWC"),
    ],
    ids=["image", "sequence", "batch"],
)
def test_random_resized_crop_labels_data_without_a_layout_as_it_reads_it(data, layout):
    # As the reference: the layout assumed for data without one is the result's.
    out = ndd.random_resized_crop(data, size=[4, 5], rng=ndd.random.RNG(seed=1))
    assert out.layout == layout


def test_random_resized_crop_default_ratio_range_holds_4_to_3_windows():
    # The default range is [3/4, 4/3] exactly: the whole 3 x 4 image is a window (the
    # reference takes it in 8% of the draws); resized to 3 x 4 it is the image itself.
    image = _coordinate_image(3, 4)
    out = ndd.random_resized_crop(
        ndd.batch([image] * 2000), size=[3, 4], interp_type=types.INTERP_NN, rng=ndd.random.RNG(seed=6)
    )
    assert sum(np.array_equal(np.asarray(sample), image) for sample in out) > 40


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"size": [8, 8, 8]}, "'size'"),
        ({"size": [8, 0]}, "'size'"),
        ({"size": 8, "random_area": [0.5, 0.1]}, "'random_area'"),
        ({"size": 8, "random_aspect_ratio": [0.0, 1.0]}, "'random_aspect_ratio'"),
        ({"size": 8, "num_attempts": -1}, "'num_attempts'"),
    ],
)
def test_random_resized_crop_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=f"ndd.random_resized_crop: {message}"):
        ndd.random_resized_crop(make_input("u8")[0], **kwargs)


def test_random_resized_crop_needs_size():
    with pytest.raises(TypeError):
        ndd.random_resized_crop(make_input("u8")[0])


def test_tensor_resize_bad_axes():
    with pytest.raises(ValueError, match="ndd.tensor_resize: 'axes'"):
        ndd.tensor_resize(np.zeros((4, 5), np.float32), sizes=[2], axes=[2])
    with pytest.raises(ValueError, match="mutually exclusive"):
        ndd.tensor_resize(
            ndd.tensor(np.zeros((4, 5), np.float32), layout="HW"), sizes=[2], axes=[0], axis_names="H"
        )
    with pytest.raises(ValueError, match="ndd.tensor_resize: 'sizes' must have 1 or 2 elements"):
        ndd.tensor_resize(np.zeros((4, 5), np.float32), sizes=[2, 3, 4])
    # 0-D data is refused, as in the reference ("Input must be at least 1D"); its
    # result was a numpy scalar that np.asarray of the output refused.
    for data in (ndd.tensor(np.float32(2.5)), ndd.batch([np.float32(1), np.float32(2)])):
        with pytest.raises(ValueError, match="ndd.tensor_resize: the input must have at least 1 dimension"):
            ndd.tensor_resize(data, sizes=[3])


def _doubled_linearly(values, axis):
    """``values`` twice as long along ``axis``, linear filter, pixel centres at k + 0.5,
    borders repeated: output pixel 2i is 3/4 of pixel i and 1/4 of pixel i - 1, 2i + 1 is
    3/4 of pixel i and 1/4 of pixel i + 1 (exact in floats for small integers)."""
    values = np.moveaxis(values, axis, 0)
    before = np.concatenate([values[:1], values[:-1]])
    after = np.concatenate([values[1:], values[-1:]])
    out = np.empty((2 * values.shape[0], *values.shape[1:]), values.dtype)
    out[0::2] = 0.75 * values + 0.25 * before
    out[1::2] = 0.75 * values + 0.25 * after
    return np.moveaxis(out, 0, axis)


@pytest.mark.parametrize("axes", [[2], [0, 2, 4, 6], [1, 2, 5], [0, 2, 4, 6, 8]])
def test_tensor_resize_of_many_dimensions_along_axes_far_apart(axes):
    # Dimensions that are not resized, between and around the resized ones, any number of them.
    ndim = max(7, axes[-1] + 1)
    shape = [2, 3, 2, 1, 3, 2, 2, 1, 2][:ndim]
    values = np.random.default_rng(4).integers(0, 50, shape).astype(np.float32)
    out = ndd.tensor_resize(values, axes=axes, sizes=[2 * shape[a] for a in axes])
    expected = values
    for a in axes:
        expected = _doubled_linearly(expected, a)
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_empty_images():
    empty = np.zeros((0, 5, 3), np.uint8)
    assert np.asarray(ndd.resize(empty, size=[4, 6])).shape == (0, 6, 3)  # as the reference
    out = np.asarray(ndd.random_resized_crop(empty, size=[4, 6], rng=ndd.random.RNG(seed=1)))
    np.testing.assert_array_equal(out, np.zeros((4, 6, 3), np.uint8))
    # A crop of the (empty) resized image: its window, of zeros (the reference fails).
    out = ndd.resize_crop_mirror(ndd.batch([empty, np.ones((4, 4, 3), np.uint8)]), size=[12, 12], crop=(8, 8))
    np.testing.assert_array_equal(np.asarray(out.select(0)), np.zeros((8, 8, 3), np.uint8))
    np.testing.assert_array_equal(np.asarray(out.select(1)), np.ones((8, 8, 3), np.uint8))


def test_per_sample_roi_in_a_batch_equals_single_calls():
    image = make_input("u8")[0]
    starts = np.array([[0, 0], [2, 2]], np.float32)
    ends = np.array([[10, 10], [8, 20]], np.float32)
    out = ndd.resize(
        ndd.batch([image, image[:10]], layout="HWC"),
        size=[8, 8],
        roi_start=ndd.batch(starts),
        roi_end=ndd.batch(ends),
    )
    for k, sample in enumerate([image, image[:10]]):
        single = ndd.resize(sample, size=[8, 8], roi_start=starts[k].tolist(), roi_end=ends[k].tolist())
        np.testing.assert_array_equal(np.asarray(out.select(k)), np.asarray(single))


def test_volume_mirror_bits_flip_depth_height_width():
    volume = make_input("f32_vol")[0]
    kwargs = {"size": [6, 10, 12], "crop": [4, 6, 8]}
    flipped = np.asarray(ndd.resize_crop_mirror(ndd.tensor(volume, layout="DHWC"), mirror=7, **kwargs))
    plain = np.asarray(ndd.resize_crop_mirror(ndd.tensor(volume, layout="DHWC"), **kwargs))
    np.testing.assert_allclose(flipped, plain[::-1, ::-1, ::-1], atol=1e-5)


@pytest.mark.parametrize("layout", ["FCHW", "CFHW"])
def test_planar_sequences_resize_per_plane(layout):
    frames = make_input("u8_seq")[0]  # FHWC
    planar = np.ascontiguousarray(
        frames.transpose(0, 3, 1, 2) if layout == "FCHW" else frames.transpose(3, 0, 1, 2)
    )
    out = np.asarray(ndd.resize(ndd.tensor(planar, layout=layout), size=[7, 9]))
    expected = np.asarray(ndd.resize(ndd.tensor(frames, layout="FHWC"), size=[7, 9]))
    expected = expected.transpose(0, 3, 1, 2) if layout == "FCHW" else expected.transpose(3, 0, 1, 2)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    ("width", "first", "expected"),
    [
        # The reference's values (DALI 2.4.0) around a 200 peak at column 20 of 41: the
        # Gaussian takes the pixels at the ends of its support, on both sides.
        (31, 14, [3.167, 166.164, 3.167]),
        (11, 4, [1.111, 60.939, 1.111]),
        (37, 17, [3.470, 185.676, 3.470]),
    ],
)
def test_gaussian_reduction_takes_the_pixels_at_the_ends_of_its_support(width, first, expected):
    peak = np.zeros((1, 41, 1), np.uint8)
    peak[0, 20, 0] = 200
    out = ndd.resize(
        ndd.tensor(peak, layout="HWC"),
        size=[1, width],
        interp_type=types.DALIInterpType.INTERP_GAUSSIAN,
        dtype=ndd.float32,
    )
    row = np.asarray(out)[0, :, 0]
    assert np.flatnonzero(row).tolist() == list(range(first, first + 3))
    np.testing.assert_allclose(row[first : first + 3], expected, atol=0.1)  # the reference's table steps


def test_types_resampled_in_float_round_halves_away_and_saturate():
    # int8 and int32 go through float32 passes: halves round away from zero, as the
    # native kernels and the reference's int16 do, and values that float32 rounds up
    # to 2**31 saturate (they wrapped to the int32 minimum).
    halves = ndd.tensor(np.array([-5, -4], np.int8).reshape(1, 2, 1), layout="HWC")
    assert np.asarray(ndd.resize(halves, size=[1, 1])).ravel().tolist() == [-5]
    top = np.array([2**31 - 1, 2**31 - 48, -5, 7], np.int32).reshape(1, 4, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = ndd.resize(ndd.tensor(top, layout="HWC"), size=[1, 8], interp_type=ndd.types.INTERP_NN)
        assert np.asarray(out).ravel().tolist() == [2**31 - 1] * 4 + [-5, -5, 7, 7]


def test_gaussian_support_ends_on_whole_pixels_keep_the_left_one():
    # 17 -> 7 without antialiasing puts output pixel 3 on input pixel 8 exactly, the
    # support's ends on pixels 7 and 9: the reference keeps 7 and leaves 9 out (weights
    # 18 and 982 of 1000 for pixels 7 and 8, measured).
    def weights_of(position):
        impulse = np.zeros((1, 17, 1), np.float32)
        impulse[0, position, 0] = 1000
        image = ndd.tensor(impulse, layout="HWC")
        out = ndd.resize(image, size=[1, 7], interp_type=ndd.types.INTERP_GAUSSIAN, antialias=False)
        return float(np.asarray(out)[0, 3, 0])

    assert [round(weights_of(p)) for p in (7, 8, 9)] == [18, 982, 0]


class _ForeignEnum:
    """An integer enum of another library, as the reference's ``types.INTERP_NN`` (a
    pybind11 enum: ``__index__``, not an ``int``)."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


def test_interp_type_takes_another_librarys_integer_enum():
    image = ndd.tensor(np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3), layout="HWC")
    foreign = ndd.resize(image, size=[3, 5], interp_type=_ForeignEnum(int(ndd.types.INTERP_NN)))
    own = ndd.resize(image, size=[3, 5], interp_type=ndd.types.INTERP_NN)
    np.testing.assert_array_equal(np.asarray(foreign), np.asarray(own))
    rotated = ndd.rotate(image, angle=90.0, interp_type=_ForeignEnum(int(ndd.types.INTERP_NN)))
    np.testing.assert_array_equal(np.asarray(rotated), np.rot90(np.asarray(image)))
    with pytest.raises(ValueError, match="'interp_type' must be an integer"):
        ndd.resize(image, size=[3, 5], interp_type="linear")


@pytest.mark.parametrize("size", [0.02, 0.05])
def test_a_subpixel_size_below_a_tenth_scales_as_a_tenth(size):
    # The reference clamps the scale of a fractional output size at 0.1 (its output for
    # a 60-row column resized to 0.05 rows is 0.49554458, as for 0.1).
    x = ndd.tensor(np.random.default_rng(1).random((60, 1, 1)).astype(np.float32), layout="HWC")
    tenth = np.asarray(ndd.resize(x, size=[0.1, 1]))
    np.testing.assert_array_equal(np.asarray(ndd.resize(x, size=[size, 1])), tenth)
    np.testing.assert_allclose(tenth.ravel(), [0.49554458], rtol=1e-6)
    assert not np.array_equal(np.asarray(ndd.resize(x, size=[0.12, 1])), tenth)


_NN_CASES = json.loads((GOLDEN / "nn_resize_cases.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", _NN_CASES, ids=[f"{c['layout']}-{c['in']}-{c['out']}" for c in _NN_CASES])
def test_nearest_neighbour_takes_the_references_pixels(case):
    """The input pixel of every output pixel, along each axis, as the reference's
    (tests/golden/make_nn_resize_goldens.py): floor((j + 0.5) * in / out) but where the
    point falls on a pixel edge, there as its single-precision sums put it (rows and
    slices adding the step, columns multiplying); one pixel apart there before."""
    layout, in_sizes, out_sizes = case["layout"], case["in"], case["out"]
    grids = np.meshgrid(*[np.arange(n, dtype=np.uint16) for n in in_sizes], indexing="ij")
    image = np.stack(grids, axis=0 if layout == "CHW" else -1)
    out = np.asarray(
        ndd.resize(ndd.tensor(image, layout=layout), size=out_sizes, interp_type=types.INTERP_NN)
    )
    for axis, (n_in, n_out) in enumerate(zip(in_sizes, out_sizes, strict=True)):
        expected = np.minimum(np.floor((np.arange(n_out) + 0.5) * n_in / n_out).astype(int), n_in - 1)
        for j, pixel in case["exceptions"][axis]:
            expected[j] = pixel
        index = [0] * len(in_sizes)
        index[axis] = slice(None)
        line = out[(axis, *index)] if layout == "CHW" else out[(*index, axis)]
        np.testing.assert_array_equal(line, expected, err_msg=f"axis {axis}")


_NN_ROI_CASES = json.loads((GOLDEN / "nn_roi_cases.json").read_text(encoding="utf-8"))
_NN_ROI_VALUES = np.load(GOLDEN / "nn_roi_values.npz")


@pytest.mark.parametrize("index", range(len(_NN_ROI_CASES)))
def test_nearest_neighbour_with_a_region_takes_the_references_pixels(index):
    """With a region inside the image (flipped or not), as the reference's
    (tests/golden/make_nn_roi_goldens.py): the axis resampled after the first counts
    its points from the first pixel it can reach, which its single-precision sums
    round otherwise."""
    case = _NN_ROI_CASES[index]
    (h, w), (oh, ow) = case["in"], case["out"]
    image = np.stack(np.meshgrid(np.arange(h), np.arange(w), indexing="ij"), -1).astype(np.uint16)
    out = np.asarray(
        ndd.resize(
            ndd.tensor(image, layout="HWC"),
            size=[oh, ow],
            interp_type=types.INTERP_NN,
            roi_start=case["roi_start"],
            roi_end=case["roi_end"],
        )
    )
    np.testing.assert_array_equal(out[:, 0, 0], _NN_ROI_VALUES[f"rows{index}"], err_msg="rows")
    np.testing.assert_array_equal(out[0, :, 1], _NN_ROI_VALUES[f"columns{index}"], err_msg="columns")


# Where nearest neighbour reads when a point falls exactly on a pixel edge: 40 -> 30
# along the probed axis puts output 10 on input 14.0. The reference computes the
# points of the innermost changed axis directly (pixel 14) and steps along the others
# (float error: pixel 13), treating a lone changed axis that is not the last dimension
# as rows. Values recorded from the reference (2.4.0): (shape, sizes, axes, expected).
_NN_EDGE_CASES = [
    ((3, 40, 1), [3, 30, 1], None, 13),
    ((3, 40, 1), [3, 30], [0, 1], 13),
    ((40,), [30], None, 14),
    ((5, 40, 3), [7, 30, 3], None, 14),
    ((3, 40, 5), [3, 30, 7], None, 13),
    ((40, 3), [30, 3], None, 13),
    ((3, 40), [3, 30], None, 14),
    ((5, 40, 1, 3), [7, 30, 1, 3], None, 14),
    ((1, 40, 5, 3), [1, 30, 7, 3], None, 13),
]


@pytest.mark.parametrize("shape, sizes, axes, expected", _NN_EDGE_CASES)
def test_tensor_resize_nearest_neighbour_on_a_pixel_edge_reads_as_the_reference(shape, sizes, axes, expected):
    probed = shape.index(40)
    x = np.broadcast_to(
        np.arange(40, dtype=np.float32).reshape([40 if d == probed else 1 for d in range(len(shape))]), shape
    ).copy()
    kwargs = {"axes": axes} if axes is not None else {}
    out = np.asarray(ndd.tensor_resize(ndd.tensor(x), sizes=sizes, interp_type=types.INTERP_NN, **kwargs))
    at = [0] * len(shape)
    at[probed] = 10
    assert out[tuple(at)] == expected


@pytest.mark.parametrize(
    "call",
    [
        lambda x: ndd.resize(x, resize_shorter=2**40),
        lambda x: ndd.experimental.resize(x, size=[1e9, 1e9]),
        lambda x: ndd.tensor_resize(x, sizes=[1e9, 1e9], axes=[0, 1]),
        lambda x: ndd.random_resized_crop(x, size=[10**9, 10**9]),
        lambda x: ndd.resize_crop_mirror(x, resize_shorter=10, crop=[1e9, 1e9]),
    ],
)
def test_an_output_larger_than_memory_is_refused_at_the_call(call):
    # A mistyped size grew memory until the process was killed.
    from ndd._memory import physical_memory_bytes

    if physical_memory_bytes() is None:
        pytest.skip("the system does not say how much memory there is")
    x = ndd.batch([np.zeros((12, 16, 3), np.uint8)] * 2, layout="HWC")
    with pytest.raises(
        ValueError, match=r"^ndd\.[a-z_.]+: the output would be .* more than half of this machine's memory"
    ):
        call(x)
