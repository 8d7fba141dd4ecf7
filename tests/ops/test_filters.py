"""gaussian_blur, laplacian and filter against the reference's goldens
(tests/golden/filter_cases.json, made by tests/golden/make_filter_goldens.py) and
against kernels written out independently with numpy; median_blur, dilate and
erode (GPU-only in the reference) against numpy window reductions."""

import functools
import inspect
import json
import pathlib

import numpy as np
import pytest

import ndd
from ndd._prepare.args import InvalidArgumentError

GOLDEN_DIR = pathlib.Path(__file__).parent.parent / "golden"
_LAYOUTS = {"hwc": "HWC", "hw": "HW", "chw": "CHW", "fhwc": "FHWC", "dhwc": "DHWC", "small": "HWC"}


@functools.cache
def _golden():
    with open(GOLDEN_DIR / "filter_cases.json") as f:
        cases = json.load(f)["cases"]
    with np.load(GOLDEN_DIR / "filter_values.npz") as npz:
        arrays = {key: npz[key] for key in npz.files}
    return cases, arrays


def _layout(name):
    if name.startswith("fhwc"):
        return "FHWC"
    if name.startswith("f"):  # filters and fill values
        return ""
    return _LAYOUTS[name.split("_")[0]]


def _build(spec, arrays):
    if isinstance(spec, list):
        return ndd.batch([arrays[n] for n in spec], layout=_layout(spec[0]))
    return ndd.tensor(arrays[spec], layout=_layout(spec))


def _kwarg(value):
    if isinstance(value, dict) and "batch" in value:
        return ndd.batch([np.asarray(v, dtype=value["dtype"]) for v in value["batch"]])
    if isinstance(value, str) and value.startswith("dtype:"):
        return getattr(ndd, value[len("dtype:") :])
    return value


def _call(case, arrays):
    fn = ndd
    for part in case["op"].split("."):
        fn = getattr(fn, part)
    inputs = [_build(s, arrays) for s in case["inputs"]]
    return fn(*inputs, **{k: _kwarg(v) for k, v in case["kwargs"].items()})


def _case_id(case):
    kwargs = ",".join(f"{k}={v}" for k, v in case["kwargs"].items() if not isinstance(v, dict))
    return f"{case['op']}-{'+'.join(map(str, case['inputs']))}-{kwargs}"


_CASES = _golden()[0]
_VALUE_CASES = [c for c in _CASES if "error" not in c]
_ERROR_CASES = [c for c in _CASES if "error" in c]


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
