"""gaussian_blur, laplacian and filter against the reference's goldens
(tests/golden/filter_cases.json, made by tests/golden/make_filter_goldens.py) and
against kernels written out independently with numpy; median_blur, dilate and
erode (GPU-only in the reference) against numpy window reductions."""

import inspect

import case_goldens
import numpy as np
import pytest

import ndd
from ndd._prepare.args import InvalidArgumentError

_LAYOUTS = {
    "cfhw": "CFHW",
    "hwc": "HWC",
    "hw": "HW",
    "chw": "CHW",
    "fhwc": "FHWC",
    "dhwc": "DHWC",
    "small": "HWC",
}


def _golden():
    return case_goldens.load("filter")


def _layout(name, arrays):
    if name.startswith("pf_"):  # per-frame filters and fill values (a leading F)
        return "FHW"[: arrays[name].ndim]
    if name.startswith("fhwc"):
        return "FHWC"
    if name.startswith("f"):  # filters and fill values
        return ""
    return _LAYOUTS[name.split("_")[0]]


def _build(spec, arrays):
    if isinstance(spec, list):
        return ndd.batch([arrays[n] for n in spec], layout=_layout(spec[0], arrays))
    return ndd.tensor(arrays[spec], layout=_layout(spec, arrays))


def _call(case, arrays):
    return case_goldens.call(case, lambda spec: _build(spec, arrays))


def _case_id(case):
    return case_goldens.case_id(case)


_VALUE_CASES, _ERROR_CASES = case_goldens.split(_golden()[0])


def _assert_close(actual, expected):
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    if expected.dtype.kind in "iu":
        # float32 sums in another order may round an integer result the other way.
        diff = np.abs(actual.astype(np.int64) - expected.astype(np.int64))
        assert diff.max(initial=0) <= 1
        assert np.mean(diff > 0) < 0.01, "more than 1% of the values differ"
    else:
        scale = max(1.0, float(np.abs(expected).max(initial=0)))
        np.testing.assert_allclose(actual, expected, rtol=0, atol=2e-6 * scale)


@pytest.mark.parametrize("case", _VALUE_CASES, ids=[_case_id(c) for c in _VALUE_CASES])
def test_matches_reference_golden(case):
    _, arrays = _golden()
    result = _call(case, arrays)
    if isinstance(case["expected"], list):
        assert isinstance(result, ndd.Batch)
        assert result.batch_size == len(case["expected"])
        for sample, name in zip(result, case["expected"], strict=True):
            _assert_close(np.asarray(sample), arrays[name])
    else:
        assert isinstance(result, ndd.Tensor)
        _assert_close(np.asarray(result), arrays[case["expected"]])
    assert result.layout == case["layout"]


@pytest.mark.parametrize("case", _ERROR_CASES, ids=[_case_id(c) for c in _ERROR_CASES])
def test_rejects_what_the_reference_rejects(case):
    _, arrays = _golden()
    with pytest.raises(InvalidArgumentError, match=f"ndd.{case['op']}"):
        np.asarray(_call(case, arrays))


# ---------------------------------------------------------------- independent kernels


def _gaussian_1d(sigma, size):
    x = np.arange(size) - size // 2
    g = np.exp(-(x**2) / (2 * sigma**2))
    return g / g.sum()


@pytest.mark.parametrize("layout", [None, "HW"])
def test_filter_keeps_the_layout_of_two_dimensional_data_or_its_absence(layout):
    image = np.arange(30, dtype=np.float32).reshape(5, 6)
    out = ndd.filter(ndd.tensor(image, layout=layout), np.ones((3, 3), np.float32))
    assert out.layout == layout


def test_gaussian_blur_of_an_impulse_is_the_outer_product_of_gaussian_windows():
    image = np.zeros((15, 17), np.float32)
    image[7, 8] = 1
    out = np.asarray(ndd.gaussian_blur(ndd.tensor(image, layout="HW"), sigma=[1.0, 0.5]))
    rows, cols = _gaussian_1d(1.0, 7), _gaussian_1d(0.5, 5)
    expected = np.zeros_like(image)
    expected[4:11, 6:11] = np.outer(rows, cols)
    np.testing.assert_allclose(out, expected, atol=1e-7)


def test_gaussian_blur_sigma_from_window_size():
    image = np.zeros((1, 11), np.float32)
    image[0, 5] = 1
    out = np.asarray(ndd.gaussian_blur(ndd.tensor(image, layout="HW"), window_size=[1, 7]))
    np.testing.assert_allclose(out[0, 2:9], _gaussian_1d((3 - 1) * 0.3 + 0.8, 7), atol=1e-7)


def test_gaussian_blur_keeps_channels_and_frames_apart():
    rng = np.random.default_rng(1)
    seq = rng.integers(0, 256, (2, 8, 9, 3), dtype=np.uint8)
    out = np.asarray(ndd.gaussian_blur(ndd.tensor(seq, layout="FHWC"), sigma=1.0))
    for f in range(2):
        for c in range(3):
            plane = np.asarray(
                ndd.gaussian_blur(ndd.tensor(np.ascontiguousarray(seq[f, :, :, c]), layout="HW"), sigma=1.0)
            )
            np.testing.assert_array_equal(out[f, :, :, c], plane)


def _laplacian_reference(image):
    """The 3x3 Laplacian (reflect-101 borders) written out: [1,-2,1] x [1,2,1] both ways."""
    p = np.pad(image.astype(np.float64), 1, mode="reflect")
    d2y = p[:-2] - 2 * p[1:-1] + p[2:]
    d2x = p[:, :-2] - 2 * p[:, 1:-1] + p[:, 2:]
    sy = d2y[:, :-2] + 2 * d2y[:, 1:-1] + d2y[:, 2:]
    sx = d2x[:-2] + 2 * d2x[1:-1] + d2x[2:]
    return sy + sx


def test_laplacian_matches_the_written_out_3x3_kernel():
    rng = np.random.default_rng(2)
    image = rng.normal(0, 1, (12, 14)).astype(np.float32)
    out = np.asarray(ndd.laplacian(ndd.tensor(image, layout="HW")))
    np.testing.assert_allclose(out, _laplacian_reference(image), atol=1e-4)


def test_laplacian_of_a_quadratic_is_constant_inside():
    y, x = np.mgrid[0:12, 0:12].astype(np.float32)
    image = 3 * x**2 + y**2
    out = np.asarray(ndd.laplacian(ndd.tensor(image, layout="HW"), smoothing_size=1))
    np.testing.assert_allclose(out[1:-1, 1:-1], 2 * 3 + 2 * 1, atol=1e-3)


def test_laplacian_saturates_integer_output():
    image = np.zeros((5, 5), np.uint8)
    image[2, 2] = 200
    out = np.asarray(ndd.laplacian(ndd.tensor(image, layout="HW")))
    assert out[2, 2] == 0  # -1600 saturates to 0
    assert out[1, 1] == 255  # 400 saturates to 255


def _correlate_reference(image, weights, anchor, mode, fill=0.0):
    r, s = weights.shape
    widths = ((anchor[0], r - 1 - anchor[0]), (anchor[1], s - 1 - anchor[1]))
    if mode == "constant":
        p = np.pad(image.astype(np.float64), widths, mode="constant", constant_values=fill)
    else:
        p = np.pad(image.astype(np.float64), widths, mode=mode)
    out = np.zeros(image.shape)
    for i in range(r):
        for j in range(s):
            out += weights[i, j] * p[i : i + image.shape[0], j : j + image.shape[1]]
    return out


@pytest.mark.parametrize(
    "border, pad_mode",
    [("reflect_101", "reflect"), ("reflect_1001", "symmetric"), ("wrap", "wrap"), ("clamp", "edge")],
)
def test_filter_is_a_correlation_with_the_border(border, pad_mode):
    rng = np.random.default_rng(3)
    image = rng.normal(0, 1, (9, 11)).astype(np.float32)
    weights = rng.normal(0, 1, (4, 3)).astype(np.float32)
    out = np.asarray(ndd.filter(ndd.tensor(image, layout="HW"), weights, anchor=[1, 2], border=border))
    np.testing.assert_allclose(out, _correlate_reference(image, weights, (1, 2), pad_mode), atol=1e-5)


def test_filter_constant_border_uses_fill_value():
    rng = np.random.default_rng(4)
    image = rng.integers(0, 200, (7, 8, 1), dtype=np.uint8)
    weights = np.full((3, 3), 1 / 9, np.float32)
    out = np.asarray(
        ndd.filter(
            ndd.tensor(image, layout="HWC"), weights, np.uint8(90), border="constant", dtype=ndd.float32
        )
    )
    expected = _correlate_reference(image[:, :, 0], weights, (1, 1), "constant", 90.0)
    np.testing.assert_allclose(out[:, :, 0], expected, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32])
def test_filter_rounds_integer_halves_to_even(dtype):
    """As the reference's filter (on the CPU): 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2;
    a 2x2 box of quarters lands on halves often (14% of pixels of random uint8 images)."""
    values = np.arange(9, dtype=dtype).reshape(1, 9) - (4 if dtype != np.uint8 else 0)
    out = np.asarray(ndd.filter(ndd.tensor(values, layout="HW"), np.array([[0.5]], np.float32)))
    np.testing.assert_array_equal(out, np.rint(values * 0.5).astype(dtype))
    if dtype == np.uint8:
        assert out.ravel().tolist() == [0, 0, 1, 2, 2, 2, 3, 4, 4]  # the reference's
    image = np.random.default_rng(0).integers(0, 200, (20, 20), dtype=dtype)
    box = np.full((2, 2), 0.25, np.float32)
    sums = _correlate_reference(image.astype(np.float32), box, (1, 1), "reflect")  # the default anchor
    out = np.asarray(ndd.filter(ndd.tensor(image, layout="HW"), box))
    np.testing.assert_array_equal(out, np.rint(sums).astype(dtype))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.int64])
@pytest.mark.parametrize("mode", ["same", "valid"])
def test_filter_rounds_halves_to_even_and_saturates_in_every_integer_type(dtype, mode):
    """The kernels round and saturate while they store (whole rows of colour images, so
    the vector code runs): halves go to even, sums past the type's range saturate."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(7)
    low, high = max(info.min, -1000), min(info.max, 1000)
    image = rng.integers(low, high, (13, 45, 3), dtype=dtype, endpoint=True)
    image[:4, :6] = info.max
    image[6:10, :6] = info.min
    # Quarters and halves: every sum is exact in float32, many end in .5. The weights add
    # up to 3: over the blocks of extremes the sums saturate.
    weights = np.array([[0.25, -0.5, 0.75], [1.5, 0.5, -0.25], [0.25, 0.5, 0.0]], np.float32)
    out = np.asarray(ndd.filter(ndd.tensor(image, layout="HWC"), weights, mode=mode))
    wide = image.astype(np.float64)
    padded = wide if mode == "valid" else np.pad(wide, ((1, 1), (1, 1), (0, 0)), mode="reflect")
    rows, cols = padded.shape[0] - 2, padded.shape[1] - 2
    sums = sum(weights[i, j] * padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))
    sums = sums.astype(np.float32).astype(np.float64)  # the float32 sum of a 32-bit value is rounded
    expected = np.clip(np.rint(sums), info.min, info.max)
    assert out.dtype == dtype
    if dtype in (np.uint8, np.int8, np.uint16, np.int16):
        np.testing.assert_array_equal(out, expected.astype(dtype))
        assert np.any(sums != np.rint(sums)) and np.any(np.abs(sums - np.trunc(sums)) == 0.5)
    else:
        # 32- and 64-bit values are not exact in float32; away from the ends of the range
        # the rounding of the float32 sum decides.
        inside = np.abs(expected) < 2**20
        np.testing.assert_array_equal(out[inside], expected[inside].astype(dtype))
    top, bottom = (slice(0, 2), slice(6, 8)) if mode == "valid" else (slice(1, 3), slice(7, 9))
    left = slice(0, 4) if mode == "valid" else slice(1, 5)
    assert np.all(out[top, left] == info.max) and np.all(out[bottom, left] == info.min)


def test_filter_rounds_halves_to_even_in_volumes():
    volume = np.arange(2 * 4 * 5, dtype=np.int16).reshape(2, 4, 5) - 20
    weights = np.full((2, 1, 1), 0.25, np.float32)
    out = np.asarray(ndd.filter(ndd.tensor(volume, layout="DHW"), weights, mode="valid"))
    expected = np.rint((volume[:1].astype(np.float64) + volume[1:]) * 0.25)
    np.testing.assert_array_equal(out, expected.astype(np.int16))


def test_filter_volume_matches_a_3d_correlation():
    rng = np.random.default_rng(5)
    volume = rng.normal(0, 1, (5, 6, 7, 2)).astype(np.float32)
    weights = rng.normal(0, 1, (3, 2, 3)).astype(np.float32)
    out = np.asarray(ndd.filter(ndd.tensor(volume, layout="DHWC"), weights, mode="valid"))
    expected = np.zeros((3, 5, 5, 2))
    for a, b, c in np.ndindex(weights.shape):
        expected += weights[a, b, c] * volume[a : a + 3, b : b + 5, c : c + 5]
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_filter_shape_is_known_before_the_run():
    x = ndd.tensor(np.zeros((10, 12, 3), np.uint8), layout="HWC")
    assert ndd.filter(x, np.ones((3, 5), np.float32), mode="valid").shape == (8, 8, 3)


def test_filter_rejects_integer_filters():
    x = ndd.tensor(np.zeros((10, 12), np.uint8), layout="HW")
    with pytest.raises(InvalidArgumentError, match="ndd.filter: the filter must have a floating-point type"):
        ndd.filter(x, np.ones((3, 3), np.int32))


@pytest.mark.parametrize("op", [ndd.gaussian_blur, ndd.laplacian])
def test_batch_per_sample_arguments_apply_to_their_sample(op):
    rng = np.random.default_rng(6)
    samples = [
        rng.integers(0, 256, (10, 12, 3), dtype=np.uint8),
        rng.integers(0, 256, (7, 9, 3), dtype=np.uint8),
    ]
    sizes = [3, 5]
    out = op(ndd.batch(samples, layout="HWC"), window_size=ndd.batch([np.int32(s) for s in sizes]))
    for sample, size, got in zip(samples, sizes, out, strict=True):
        alone = op(ndd.tensor(sample, layout="HWC"), window_size=size)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(alone))


# ---------------------------------------------------------------- signatures and devices


_SIGNATURES = {
    "gaussian_blur": ["input", "batch_size", "device", "dtype", "sigma", "window_size"],
    "laplacian": [
        "input",
        "batch_size",
        "device",
        "dtype",
        "normalized_kernel",
        "scale",
        "smoothing_size",
        "window_size",
    ],
    "filter": ["data", "filter", "fill_value", "batch_size", "device", "anchor", "border", "dtype", "mode"],
}


@pytest.mark.parametrize("name", sorted(_SIGNATURES))
def test_signature_has_the_reference_parameters(name):
    params = inspect.signature(getattr(ndd, name)).parameters
    assert sorted(params) == sorted(_SIGNATURES[name])
    first = _SIGNATURES[name][0]
    assert params[first].kind is inspect.Parameter.POSITIONAL_ONLY


def test_gpu_device_needs_a_gpu():
    from ndd._cuda import driver

    if driver.device_count() > 0:
        pytest.skip("a GPU is present")
    x = ndd.tensor(np.zeros((4, 4), np.float32), layout="HW")
    with pytest.raises(Exception, match="(?i)gpu"):
        ndd.gaussian_blur(x, sigma=1.0, device="gpu")


# ---------------------------------------------------------------- median_blur, dilate, erode


def _windows(image, width, height, ax, ay, pad_mode, fill=None):
    """Every (height x width) window of an HW(C) image, anchored at (ax, ay): shape (H, W, [C,] h, w)."""
    widths = [(ay, height - 1 - ay), (ax, width - 1 - ax)] + [(0, 0)] * (image.ndim - 2)
    if pad_mode == "constant":
        padded = np.pad(image, widths, mode="constant", constant_values=fill)
    else:
        padded = np.pad(image, widths, mode=pad_mode)
    return np.lib.stride_tricks.sliding_window_view(padded, (height, width), axis=(0, 1))


_IMAGE = np.random.default_rng(7).integers(0, 256, (11, 13, 3), dtype=np.uint8)


@pytest.mark.parametrize(
    "mask, anchor", [([3, 3], [-1, -1]), ([5, 3], [-1, -1]), ([4, 2], [0, 1]), ([1, 6], [0, 5])]
)
@pytest.mark.parametrize("which", ["dilate", "erode"])
def test_morphology_is_the_window_extreme(which, mask, anchor):
    op = getattr(ndd.experimental, which)
    out = np.asarray(op(ndd.tensor(_IMAGE, layout="HWC"), mask_size=mask, anchor=anchor))
    ax = mask[0] // 2 if anchor[0] < 0 else anchor[0]
    ay = mask[1] // 2 if anchor[1] < 0 else anchor[1]
    fill = 0 if which == "dilate" else 255
    win = _windows(_IMAGE, mask[0], mask[1], ax, ay, "constant", fill)
    expected = win.max(axis=(-2, -1)) if which == "dilate" else win.min(axis=(-2, -1))
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    "border, pad_mode",
    [("replicate", "edge"), ("reflect", "symmetric"), ("reflect_101", "reflect"), ("wrap", "wrap")],
)
def test_morphology_border_modes(border, pad_mode):
    out = np.asarray(
        ndd.experimental.erode(ndd.tensor(_IMAGE, layout="HWC"), mask_size=[5, 5], border_mode=border)
    )
    expected = _windows(_IMAGE, 5, 5, 2, 2, pad_mode).min(axis=(-2, -1))
    np.testing.assert_array_equal(out, expected)


def test_morphology_iterations_repeat_the_operation():
    x = ndd.tensor(_IMAGE, layout="HWC")
    twice = ndd.experimental.dilate(ndd.experimental.dilate(x, mask_size=[3, 5]), mask_size=[3, 5])
    np.testing.assert_array_equal(
        np.asarray(ndd.experimental.dilate(x, mask_size=[3, 5], iterations=2)), np.asarray(twice)
    )


def test_float_dilation_of_negative_values_ignores_the_border():
    image = -np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    out = np.asarray(ndd.experimental.dilate(ndd.tensor(image, layout="HW")))
    expected = _windows(image, 3, 3, 1, 1, "constant", -np.inf).max(axis=(-2, -1))
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("layout", ["CHW", "FHWC"])
def test_morphology_and_median_treat_planes_apart(layout):
    rng = np.random.default_rng(8)
    data = rng.integers(0, 1000, (2, 9, 10) if layout == "CHW" else (2, 9, 10, 3), dtype=np.uint16)
    for op in (ndd.experimental.dilate, ndd.experimental.median_blur):
        out = np.asarray(op(ndd.tensor(data, layout=layout)))
        for k in range(2):
            alone = np.asarray(op(ndd.tensor(np.ascontiguousarray(data[k]), layout=layout[1:])))
            np.testing.assert_array_equal(out[k], alone)


def _median_sample(layout, dtype):
    """A sample of ``layout`` spanning most of ``dtype`` (negatives too where it has them)."""
    rng = np.random.default_rng(9)
    shape = {"HW": (11, 13), "HWC": (11, 13, 3), "FHWC": (2, 11, 13, 3)}[layout]
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) * 1000).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _numpy_median_blur(image, width, height):
    """np.median over every window of the edge-padded frame(s)."""
    if image.ndim == 4:
        return np.stack([_numpy_median_blur(frame, width, height) for frame in image])
    windows = _windows(image, width, height, width // 2, height // 2, "edge")
    # An odd number of values: the median is one of them, exact in the sample's type.
    return np.median(windows, axis=(-2, -1)).astype(image.dtype)


# 3x3 has its own network; 8-bit windows of 64 values and more take the sliding histogram,
# smaller ones (and other types' up to 1024 values) a selection network; 35x31 (1085 values)
# selects for the other types.
@pytest.mark.parametrize(
    "window", [[3, 3], [5, 3], [1, 7], [7, 1], [5, 5], [7, 7], [9, 9], [11, 7], [35, 31]]
)
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32])
@pytest.mark.parametrize("layout", ["HWC", "HW", "FHWC"])
def test_median_blur_is_the_window_median(window, dtype, layout):
    image = _median_sample(layout, dtype)
    out = np.asarray(ndd.experimental.median_blur(ndd.tensor(image, layout=layout), window_size=window))
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, _numpy_median_blur(image, *window))


def test_median_blur_of_few_distinct_values():
    # Ties everywhere: the sliding histogram's median stays in place or moves by whole bins.
    image = np.random.default_rng(10).integers(0, 3, (40, 37, 3), dtype=np.uint8) * 100
    out = np.asarray(ndd.experimental.median_blur(ndd.tensor(image, layout="HWC"), window_size=[9, 11]))
    np.testing.assert_array_equal(out, _numpy_median_blur(image, 9, 11))


def test_morphology_per_sample_mask_size():
    samples = [_IMAGE, _IMAGE[:7, :9]]
    out = ndd.experimental.erode(
        ndd.batch(samples, layout="HWC"), mask_size=ndd.batch([np.int32([3, 3]), np.int32([5, 1])])
    )
    for sample, mask, got in zip(samples, [[3, 3], [5, 1]], out, strict=True):
        alone = ndd.experimental.erode(ndd.tensor(sample, layout="HWC"), mask_size=mask)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(alone))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: ndd.experimental.median_blur(x, window_size=[4, 3]), "'window_size' must be odd"),
        (lambda x: ndd.experimental.dilate(x, mask_size=[3, 3, 3]), "'mask_size' must have 2 values"),
        (lambda x: ndd.experimental.erode(x, anchor=[3, 0]), "'anchor' must lie within the mask"),
        (lambda x: ndd.experimental.erode(x, iterations=0), "'iterations' must be at least 1"),
        (lambda x: ndd.experimental.dilate(x, border_mode="mirror"), "'border_mode' must be one of"),
    ],
)
def test_morphology_and_median_reject_bad_arguments(call, message):
    with pytest.raises(InvalidArgumentError, match=message):
        call(ndd.tensor(_IMAGE, layout="HWC"))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"sigma": 2.0**31}, r"'sigma' 2.14748e\+09 gives a window of 12884901889 taps; at most 1048577"),
        ({"window_size": 2**21 + 1}, "'window_size' 2097153 is too large: at most 1048577 taps"),
    ],
)
def test_gaussian_blur_refuses_a_window_beyond_a_million_taps(kwargs, message):
    # A sigma of 2**31 claimed 96 GiB for its window (MemoryError, without the
    # operator's name); the largest window is still accepted.
    with pytest.raises(InvalidArgumentError, match=f"ndd.gaussian_blur: {message}"):
        ndd.gaussian_blur(ndd.tensor(_IMAGE, layout="HWC"), **kwargs)
    flat = np.full((4, 5, 1), 9, np.uint8)
    out = ndd.gaussian_blur(ndd.tensor(flat, layout="HWC"), window_size=2**20 + 1)
    np.testing.assert_array_equal(np.asarray(out), flat)


def test_morphology_rejects_volumes():
    with pytest.raises(InvalidArgumentError, match="ndd.experimental.dilate"):
        ndd.experimental.dilate(ndd.tensor(np.zeros((4, 5, 6, 1), np.uint8), layout="DHWC"))


_EXPERIMENTAL_SIGNATURES = {
    "dilate": ["input", "batch_size", "device", "anchor", "border_mode", "iterations", "mask_size"],
    "erode": ["input", "batch_size", "device", "anchor", "border_mode", "iterations", "mask_size"],
    "median_blur": ["input", "batch_size", "device", "window_size"],
}


@pytest.mark.parametrize("name", sorted(_EXPERIMENTAL_SIGNATURES))
def test_experimental_signature_has_the_reference_parameters(name):
    params = inspect.signature(getattr(ndd.experimental, name)).parameters
    assert sorted(params) == sorted(_EXPERIMENTAL_SIGNATURES[name])
    assert params["input"].kind is inspect.Parameter.POSITIONAL_ONLY


@pytest.mark.parametrize(
    "call",
    [
        lambda x: ndd.gaussian_blur(x, sigma=1.0),
        lambda x: ndd.laplacian(x),
        lambda x: ndd.filter(x, np.ones((3, 3), np.float32)),
        lambda x: ndd.experimental.median_blur(x),
        lambda x: ndd.experimental.erode(x),
    ],
)
def test_empty_samples_give_empty_results(call):
    out = np.asarray(call(ndd.tensor(np.zeros((0, 5, 3), np.uint8), layout="HWC")))
    assert out.shape == (0, 5, 3) and out.dtype == np.uint8


def test_filter_valid_mode_of_an_empty_sample_shrinks_its_shape():
    x = ndd.tensor(np.zeros((0, 5, 3), np.uint8), layout="HWC")
    assert np.asarray(ndd.filter(x, np.ones((1, 3), np.float32), mode="valid")).shape == (0, 3, 3)


@pytest.mark.parametrize("filter_shape", [(4, 2), (2, 4), (4, 4)])
def test_filter_valid_mode_refuses_a_filter_larger_than_the_sample(filter_shape):
    # One larger gave an empty result; the reference refuses it.
    x = ndd.tensor(np.ones((3, 3, 1), np.float32), layout="HWC")
    with pytest.raises(ValueError, match=r"ndd.filter: in 'valid' mode the filter .* must fit in the sample"):
        ndd.filter(x, np.ones(filter_shape, np.float32), mode="valid")
    fits = ndd.filter(x, np.ones((3, 3), np.float32), mode="valid")
    np.testing.assert_array_equal(np.asarray(fits), np.full((1, 1, 1), 9, np.float32))


def test_filter_one_filter_and_per_sample_fill_values_for_a_batch():
    samples = [np.full((5, 6, 1), 10, np.uint8), np.full((4, 4, 1), 20, np.uint8)]
    box = np.full((3, 3), 1 / 9, np.float32)
    fills = ndd.batch([np.uint8(0), np.uint8(110)])
    out = ndd.filter(ndd.batch(samples, layout="HWC"), box, fills, border="constant")
    for sample, fill, got in zip(samples, [0, 110], out, strict=True):
        expected = _correlate_reference(sample[:, :, 0], box, (1, 1), "constant", fill)
        np.testing.assert_array_equal(np.asarray(got)[:, :, 0], np.floor(expected + 0.5).astype(np.uint8))


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "wrap", "edge", "constant"])
@pytest.mark.parametrize("shape", [(1, 5, 7, 3), (2, 1, 4, 1), (1, 3, 1, 2), (1, 2, 2, 3)])
def test_border_padding_is_numpy_pad(mode, shape):
    from ndd._ops.filters import _pad_planes

    x = np.random.default_rng(0).integers(0, 255, shape).astype(np.uint8)
    for widths in [[(0, 0), (2, 1), (0, 3), (0, 0)], [(0, 0), (13, 9), (7, 11), (0, 0)], [(0, 0)] * 4]:
        if mode == "constant":
            expected = np.pad(x, widths, mode=mode, constant_values=7)
        else:
            expected = np.pad(x, widths, mode=mode)
        np.testing.assert_array_equal(_pad_planes(x, widths, mode, 7), expected)


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "wrap", "edge", "constant"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
def test_padding_rows_on_the_fly_equals_correlating_the_padded_sample(mode, dtype):
    """Images are padded row by row inside the kernel; the result must be exactly that of
    np.pad followed by the plain correlation (which volumes still use)."""
    from ndd._cpu.convolution import correlate
    from ndd._ops.filters import _correlate_padding_rows

    rng = np.random.default_rng(11)
    for shape, window, anchor in [
        ((1, 6, 9, 3), (3, 3), (1, 1)),
        ((2, 5, 4, 1), (4, 2), (3, 0)),
        ((1, 2, 3, 2), (7, 9), (2, 6)),  # a window larger than the image
        ((1, 1, 1, 1), (1, 5), (0, 4)),
    ]:
        planes = (rng.normal(0, 60, shape) + 100).astype(dtype)
        weights = rng.normal(0, 1, window).astype(np.float32)
        weights[0, 0] = 0  # a tap that is skipped
        widths = [
            (0, 0),
            (anchor[0], window[0] - 1 - anchor[0]),
            (anchor[1], window[1] - 1 - anchor[1]),
            (0, 0),
        ]
        kwargs = {"constant_values": 17} if mode == "constant" else {}
        padded = np.pad(planes, widths, mode=mode, **kwargs)
        outer, height, width, inner = shape
        expected = np.empty((outer, height, width * inner), dtype)
        bounds = (float(np.iinfo(dtype).min), float(np.iinfo(dtype).max), True) if dtype != np.float32 else ()
        correlate(padded.reshape(outer, padded.shape[1], -1), expected, weights, inner, *bounds)
        got = _correlate_padding_rows(planes, weights, anchor, mode, 17, np.dtype(dtype))
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("op", [ndd.experimental.dilate, ndd.experimental.erode])
@pytest.mark.parametrize(
    "shape, border", [((0, 5, 3), "reflect_101"), ((4, 0, 3), "wrap"), ((0, 0, 1), "constant")]
)
def test_morphology_of_an_empty_image_is_empty(op, shape, border):
    out = op(
        ndd.tensor(np.zeros(shape, np.uint8), layout="HWC"),
        mask_size=[4, 2],
        anchor=[3, 0],
        border_mode=border,
    )
    assert np.asarray(out).shape == shape


@pytest.mark.parametrize(
    "call",
    [
        lambda x: ndd.gaussian_blur(x, sigma=1.0),
        lambda x: ndd.laplacian(x),
        lambda x: ndd.filter(x, np.array([[0, 1, 0], [1, -3, 2], [0, 1, 0]], np.float32)),
        lambda x: ndd.experimental.median_blur(x),
    ],
    ids=["gaussian_blur", "laplacian", "filter", "median_blur"],
)
def test_filters_read_transposed_and_strided_inputs(call):
    values = np.random.default_rng(2).integers(0, 256, (18, 16)).astype(np.uint8)
    expected = np.asarray(call(np.ascontiguousarray(values.T)))
    # A numpy view, and a transpose made by ndd.
    np.testing.assert_array_equal(np.asarray(call(values.T)), expected)
    transposed = ndd.transpose(ndd.tensor(values, layout="HW"), perm=[1, 0])
    np.testing.assert_array_equal(np.asarray(call(transposed)), expected)
    np.testing.assert_array_equal(np.asarray(call(values[:, ::2])), np.asarray(call(values[:, ::2].copy())))


def test_filter_anchor_per_frame_is_each_frame_with_its_anchor():
    """As the reference (it documents per-frame anchors and gave these pixels): with a per-frame
    filter and fill value too, each frame is filtered with its own."""
    seq = np.arange(2 * 4 * 5, dtype=np.uint8).reshape(2, 4, 5, 1) * 3
    anchors = np.array([[0, 0], [2, 1]], np.int32)
    filters = np.stack([np.ones((3, 3), np.float32) / 9, np.eye(3, dtype=np.float32)])
    fills = np.array([7, 9], np.uint8)
    out = np.asarray(
        ndd.filter(
            ndd.tensor(seq, layout="FHWC"),
            np.ones((3, 3), np.float32) / 9,
            anchor=ndd.per_frame(ndd.tensor(anchors)),
        )
    )
    assert out[0, 0, :, 0].tolist() == [18, 21, 24, 25, 24]  # the reference's
    out = np.asarray(
        ndd.filter(
            ndd.tensor(seq, layout="FHWC"),
            ndd.per_frame(ndd.tensor(filters)),
            ndd.per_frame(ndd.tensor(fills)),
            border="constant",
            anchor=ndd.per_frame(ndd.tensor(anchors)),
        )
    )
    for f in range(2):
        alone = ndd.filter(
            ndd.tensor(seq[f], layout="HWC"),
            filters[f],
            fills[f],
            border="constant",
            anchor=anchors[f].tolist(),
        )
        np.testing.assert_array_equal(out[f], np.asarray(alone))
    assert out[0, 0, :, 0].tolist() == [18, 21, 24, 19, 14]  # the reference's
