"""GPU gaussian_blur, laplacian and filter (ndd/_ops/gpu_filters.py, kernels/filter.cu),
each compared with its CPU twin on the kernels built for the CPU and on a real GPU
(``any_gpu``). The GPU sums as the CPU's AVX2 path does (a fused multiply-add per tap,
in the CPU's order): equal to the bit on a processor with AVX2 and FMA, within a
rounding elsewhere. What is launched is checked on the recording FakeDriver (``fake``).
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import NUMERIC_TYPES  # noqa: E402

import ndd  # noqa: E402
from ndd._cpu.convolution import taps_fused  # noqa: E402

# The float samples hold infinities on purpose: the CPU's sum of laplacian's partial
# derivatives (numpy) then warns of inf - inf, where the GPU quietly gives NaN too.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in add:RuntimeWarning")

# Every numeric type: the CPU takes them all.
TYPES = NUMERIC_TYPES
# Shapes of a ragged HWC batch, one of them without pixels.
RAGGED = [(9, 12, 3), (14, 7, 3), (0, 5, 3), (5, 16, 3)]
BORDERS = ["reflect_101", "reflect_1001", "reflect", "wrap", "clamp", "constant"]


@pytest.fixture
def fake(fake_with_kernels):
    """The recording FakeDriver (kernels are not run) with the session's kernel build."""
    return fake_with_kernels


def _values(dtype, shape, seed=0):
    """Values spanning the type (integers) or a wide range with NaN and infinities (floats)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values = (rng.standard_normal(shape) * 300).astype(dtype)
    if values.size > 3:
        values.flat[:3] = [np.nan, np.inf, -np.inf]
    return values


def _pairs(gpu_result, cpu_result):
    assert gpu_result.device.device_type == "gpu"
    assert gpu_result.dtype == cpu_result.dtype
    assert gpu_result.layout == cpu_result.layout
    host = gpu_result.cpu()
    if isinstance(cpu_result, ndd.Tensor):
        return [(np.asarray(host), np.asarray(cpu_result))]
    assert host.batch_size == cpu_result.batch_size
    return [(np.asarray(g), np.asarray(c)) for g, c in zip(host, cpu_result, strict=True)]


def _assert_filtered_alike(gpu_result, cpu_result):
    """Equal to the bit where the CPU fuses its multiply-adds as the GPU does; else
    within a rounding of each product (integers: one step of rounding)."""
    for g, c in _pairs(gpu_result, cpu_result):
        assert g.shape == c.shape and g.dtype == c.dtype
        if taps_fused():
            np.testing.assert_array_equal(g, c)
        else:
            np.testing.assert_allclose(g.astype(np.float64), c.astype(np.float64), rtol=1e-5, atol=1)


def _check(op, values, layout, *inputs, **kwargs):
    """``op`` on a GPU Tensor equals ``op`` on the CPU Tensor (other inputs on the host)."""
    _assert_filtered_alike(
        op(ndd.tensor(values, layout=layout).gpu(), *inputs, **kwargs),
        op(ndd.tensor(values, layout=layout), *inputs, **kwargs),
    )


def _check_batch(op, samples, layout, *inputs, **kwargs):
    """``op`` on a GPU Batch equals ``op`` on the CPU Batch (other inputs on the host)."""
    _assert_filtered_alike(
        op(ndd.batch(samples, layout=layout).gpu(), *inputs, **kwargs),
        op(ndd.batch(samples, layout=layout), *inputs, **kwargs),
    )


def _out_types(dtype):
    """The output types the operators allow for ``dtype``: its own, and float32."""
    return [None, ndd.float32] if np.dtype(dtype) != np.float32 else [None]


# -- gaussian_blur -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", TYPES)
def test_gaussian_blur_matches_the_cpu_for_every_type_and_output_type(dtype, any_gpu):
    samples = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    for out in _out_types(dtype):
        _check_batch(ndd.gaussian_blur, samples, "HWC", sigma=[1.5, 0.8], dtype=out)
        _check(ndd.gaussian_blur, samples[0], "HWC", window_size=5, dtype=out)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
def test_gaussian_blur_takes_per_sample_sigma_and_window_size(dtype, any_gpu):
    samples = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    sigma = ndd.batch([np.float32(s) for s in (0.7, 2.5, 1.0, 0.0)])
    window = ndd.batch([np.array(w, np.int32) for w in ([0], [3, 9], [5], [7, 3])])
    _check_batch(ndd.gaussian_blur, samples, "HWC", sigma=sigma, window_size=window)


@pytest.mark.parametrize("dtype", [np.uint8, np.float64])
def test_gaussian_blur_skips_windows_of_one_element_per_sample(dtype, any_gpu):
    # A window of size 1 is no pass at all: the samples take different numbers of passes,
    # and one takes none (it is only converted).
    samples = [_values(dtype, s, i) for i, s in enumerate([(6, 9, 2), (8, 5, 2), (7, 7, 2)])]
    window = ndd.batch([np.array(w, np.int32) for w in ([1, 5], [3, 3], [1, 1])])
    for out in _out_types(dtype):
        _check_batch(ndd.gaussian_blur, samples, "HWC", window_size=window, sigma=1.0, dtype=out)


@pytest.mark.parametrize(
    "layout, shape",
    [
        ("HW", (13, 17)),
        ("HWC", (12, 20, 1)),
        ("CHW", (3, 11, 21)),
        ("FHWC", (3, 9, 10, 2)),
        ("FCHW", (2, 3, 8, 18)),
        ("CFHW", (2, 3, 7, 9)),
        ("DHWC", (6, 8, 9, 2)),
        ("DHW", (5, 7, 20)),
        ("WC", (23, 4)),
    ],
)
def test_gaussian_blur_matches_the_cpu_for_every_layout(layout, shape, any_gpu):
    for dtype in (np.uint8, np.float32):
        values = _values(dtype, shape, 3)
        _check(ndd.gaussian_blur, values, layout, sigma=1.2)
        _check(ndd.gaussian_blur, values, layout, window_size=[3, 7, 5][: len(layout.strip("FC"))])


def test_gaussian_blur_windows_wider_than_the_image_reflect_again(any_gpu):
    values = _values(np.float32, (3, 2, 2), 4)
    _check(ndd.gaussian_blur, values, "HWC", window_size=[11, 9])
    _check(ndd.gaussian_blur, _values(np.uint8, (1, 1, 3)), "HWC", sigma=3.0)


# -- laplacian -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", TYPES)
def test_laplacian_matches_the_cpu_for_every_type_and_output_type(dtype, any_gpu):
    samples = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    for out in _out_types(dtype):
        # A 3x3 window is one 2-D pass; 7x7 the separable passes of both derivatives.
        _check_batch(ndd.laplacian, samples, "HWC", dtype=out)
        _check_batch(ndd.laplacian, samples, "HWC", window_size=7, dtype=out)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(window_size=3),
        dict(window_size=[3, 5]),
        dict(window_size=7, smoothing_size=1),
        dict(window_size=5, smoothing_size=[3, 1]),
        dict(window_size=5, normalized_kernel=True),
        dict(window_size=9, scale=[0.5, 2.0]),
        dict(window_size=31),
    ],
)
def test_laplacian_takes_the_cpus_windows(kwargs, any_gpu):
    for dtype in (np.int16, np.float32):
        _check(ndd.laplacian, _values(dtype, (17, 19, 3), 1), "HWC", **kwargs)


@pytest.mark.parametrize(
    "layout, shape, kwargs",
    [
        ("CHW", (2, 16, 18), dict(window_size=5)),
        ("FHWC", (3, 9, 11, 2), dict()),
        ("DHWC", (6, 7, 8, 2), dict()),
        ("DHW", (5, 9, 6), dict(window_size=[3, 5, 3], smoothing_size=[1, 3, 5])),
        ("WC", (20, 3), dict(window_size=5)),
    ],
)
def test_laplacian_matches_the_cpu_for_every_layout(layout, shape, kwargs, any_gpu):
    for dtype in (np.uint8, np.float32):
        _check(ndd.laplacian, _values(dtype, shape, 2), layout, **kwargs)


def test_laplacian_takes_per_sample_windows_and_scales(any_gpu):
    # One sample takes the 2-D window, the others the separable passes: their steps differ.
    samples = [_values(np.int16, s, i) for i, s in enumerate(RAGGED)]
    window = ndd.batch([np.array(w, np.int32) for w in ([3], [5, 3], [3], [7])])
    scale = ndd.batch([np.array(s, np.float32) for s in ([1.0], [0.25, 3.0], [2.0], [0.5])])
    _check_batch(ndd.laplacian, samples, "HWC", window_size=window, scale=scale)
    _check_batch(ndd.laplacian, samples, "HWC", window_size=window, scale=scale, dtype=ndd.float32)


# -- filter -----------------------------------------------------------------------------------------


def _filter(shape, seed=0, zeros=True):
    """A float32 filter of ``shape``, with a zero tap (the CPU skips those)."""
    weights = np.random.default_rng(seed + 100).normal(0, 1, shape).astype(np.float32)
    if zeros:
        weights.flat[0] = 0
    return weights


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
@pytest.mark.parametrize("border", BORDERS)
def test_filter_matches_the_cpu_for_every_border(border, dtype, any_gpu):
    samples = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    fill = np.array(7.6 if dtype == np.uint8 else -19.25, np.float32)
    for weights, anchor in (((3, 3), [-1]), ((4, 2), [3, 0]), ((7, 9), [2, 6])):
        _check_batch(ndd.filter, samples, "HWC", _filter(weights), fill, border=border, anchor=anchor)


@pytest.mark.parametrize("dtype", TYPES)
def test_filter_matches_the_cpu_for_every_type_and_output_type(dtype, any_gpu):
    samples = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    for out in _out_types(dtype):
        _check_batch(ndd.filter, samples, "HWC", _filter((3, 5)), dtype=out)
        _check_batch(ndd.filter, samples, "HWC", _filter((2, 3)), np.array(3, np.int32), border="constant")


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.int64])
def test_filter_rounds_integer_halves_to_even_as_the_cpu(dtype, any_gpu):
    """Weights of a half and a quarter put many sums on halves: both sides round them to even."""
    values = np.arange(60, dtype=dtype).reshape(5, 12) - (0 if dtype == np.uint8 else 30)
    for weights in (np.array([[0.5]], np.float32), np.full((2, 2), 0.25, np.float32)):
        _check(ndd.filter, values, "HW", weights)
    gpu = np.asarray(ndd.filter(ndd.tensor(values, layout="HW").gpu(), np.array([[0.5]], np.float32)).cpu())
    np.testing.assert_array_equal(gpu, np.rint(values * 0.5).astype(dtype))


@pytest.mark.parametrize(
    "layout, shape, window",
    [
        ("HW", (10, 13), (3, 3)),
        ("CHW", (3, 11, 17), (5, 3)),
        ("FHWC", (3, 8, 9, 2), (3, 4)),
        ("FCHW", (2, 3, 8, 7), (3, 3)),
        ("DHWC", (6, 7, 8, 2), (3, 3, 3)),
        ("DHW", (5, 6, 7), (2, 4, 3)),
    ],
)
@pytest.mark.parametrize("border", ["reflect_101", "wrap", "constant"])
def test_filter_matches_the_cpu_for_every_layout(layout, shape, window, border, any_gpu):
    for dtype in (np.uint8, np.float32):
        values = _values(dtype, shape, 5)
        _check(ndd.filter, values, layout, _filter(window), np.array(9, np.uint8), border=border)


@pytest.mark.parametrize(
    "layout, shape, window", [("HWC", (9, 11, 3), (4, 3)), ("DHWC", (5, 6, 7, 2), (3, 2, 4))]
)
def test_filter_valid_mode_shrinks_the_output(layout, shape, window, any_gpu):
    for dtype in (np.uint8, np.int32, np.float32):
        values = _values(dtype, shape, 6)
        _check(ndd.filter, values, layout, _filter(window), mode="valid")
        _check(ndd.filter, values, layout, _filter(window), mode="valid", dtype=ndd.float32)
    _check(ndd.filter, _values(np.uint8, (3, 11, 3)), "HWC", _filter((3, 3)), mode="valid")


def test_filter_volume_sums_empty_slices_and_nan_weights(any_gpu):
    weights = _filter((3, 3, 3))
    weights[1] = 0
    weights[2, 1, 1] = np.nan
    _check(ndd.filter, _values(np.float32, (5, 6, 7, 1), 7), "DHWC", weights, border="clamp")
    _check(ndd.filter, _values(np.int16, (5, 6, 7, 1), 7), "DHWC", np.zeros((2, 2, 2), np.float32))


def test_filter_takes_per_sample_filters_fill_values_and_anchors(any_gpu):
    samples = [_values(np.uint8, s, i) for i, s in enumerate(RAGGED)]
    filters = ndd.batch([_filter(s, i) for i, s in enumerate([(3, 3), (5, 1), (1, 1), (2, 6)])])
    fills = ndd.batch([np.uint8(v) for v in (0, 110, 3, 255)])
    anchor = ndd.batch([np.array(a, np.int32) for a in ([0, 2], [4, 0], [-1], [1, 5])])
    _check_batch(ndd.filter, samples, "HWC", filters, fills, border="constant", anchor=anchor)
    _check_batch(ndd.filter, samples, "HWC", filters, fills, border="wrap", dtype=ndd.float32)


def test_filter_takes_per_frame_filters_and_fill_values(any_gpu):
    sequence = _values(np.uint8, (3, 7, 8, 2), 8)
    filters = ndd.tensor(np.stack([_filter((3, 3), f) for f in range(3)]), layout="FHW")
    fills = ndd.tensor(np.array([10, 200, 30], np.uint8), layout="F")
    _check(ndd.filter, sequence, "FHWC", filters, border="reflect_1001")
    _check(ndd.filter, sequence, "FHWC", _filter((2, 3)), fills, border="constant")
    # An image with per-frame filters becomes a sequence, one frame per filter.
    _check(ndd.filter, sequence[0], "HWC", filters, fills, border="constant")


# -- what is launched, what is refused ------------------------------------------------------------


def test_each_pass_of_a_ragged_batch_is_one_launch(fake):
    samples = [np.zeros(s, np.uint8) for s in RAGGED]

    def launched(op, *inputs, **kwargs):
        fake.launches.clear()
        op(ndd.batch(samples, layout="HWC").gpu(), *inputs, **kwargs).evaluate()
        filters = [launch for launch in fake.launches if launch.function.startswith("filter_")]
        # One descriptor row per sample with pixels.
        assert all(launch.grid[1] == len(samples) - 1 for launch in filters)
        return [launch.function for launch in filters]

    # Rows into float32, then columns into bytes, for the whole batch at once.
    assert launched(ndd.gaussian_blur, sigma=1.0) == ["filter_u8_to_f32", "filter_f32_to_u8"]
    assert launched(ndd.laplacian) == ["filter_u8_to_u8"]
    # Two partial derivatives of two passes each; the second adds the first's total.
    assert (
        launched(ndd.laplacian, window_size=7, dtype=ndd.float32)
        == ["filter_u8_to_f32", "filter_f32_to_f32"] * 2
    )
    assert launched(ndd.filter, np.ones((3, 3), np.float32), border="wrap") == ["filter_u8_to_u8"]


def test_a_filter_in_gpu_memory_is_refused_at_the_call(fake):
    x = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC").gpu()
    weights = ndd.tensor(np.ones((3, 3), np.float32)).gpu()
    with pytest.raises(NotImplementedError, match="ndd.filter on the GPU: a 'filter' input in GPU memory"):
        ndd.filter(x, weights)


def test_an_input_in_host_memory_is_refused_on_the_gpu(fake):
    x = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")
    with pytest.raises(NotImplementedError, match="ndd.gaussian_blur on the GPU: an input in host memory"):
        ndd.gaussian_blur(x, sigma=1.0, device="gpu")
