"""ndd.normalize (ndd/_ops/normalize.py) against reference goldens
(tests/golden/make_normalize_goldens.py) and numpy."""

import numpy as np
import pytest
from color_goldens import case_id, load, replay

import ndd

CASES, ARRAYS = load("normalize")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_matches_reference(case):
    outs, expected = replay(case, ARRAYS)
    for out, exp in zip(outs, expected, strict=True):
        assert out.dtype == exp.dtype and out.shape == exp.shape
        if exp.dtype.kind == "f":
            np.testing.assert_allclose(out, exp, rtol=1e-5, atol=2e-5)
        else:
            # Halves may round either way after float32 arithmetic.
            assert np.abs(out.astype(np.int64) - exp).max(initial=0) <= 1


def _x():
    return np.random.default_rng(3).normal(2.0, 3.0, (5, 6, 3)).astype(np.float32)


def test_default_normalizes_over_all_axes():
    x = _x()
    out = np.asarray(ndd.normalize(ndd.tensor(x, layout="HWC")))
    np.testing.assert_allclose(out, (x - x.mean()) / x.std(), atol=1e-5)


def test_scalar_mean_and_stddev():
    x = _x()
    out = np.asarray(ndd.normalize(ndd.tensor(x, layout="HWC"), mean=1.0, stddev=2.0, scale=3.0, shift=0.5))
    np.testing.assert_allclose(out, 3.0 * (x - 1.0) / 2.0 + 0.5, atol=1e-5)


def test_numpy_scalar_mean_and_stddev_are_scalars():
    # The reference's dynamic mode fails on 0-D arrays at run time; ndd takes them as numbers.
    x = _x()
    out = np.asarray(ndd.normalize(ndd.tensor(x, layout="HWC"), mean=np.float32(1.0), stddev=np.float64(2.0)))
    np.testing.assert_allclose(out, (x - 1.0) / 2.0, atol=1e-5)


def test_scalar_mean_and_stddev_with_axes_are_the_same_scalars():
    # Given axes change nothing once both moments are given (the reference refuses them).
    x = _x()
    with_axes = ndd.normalize(ndd.tensor(x, layout="HWC"), mean=1.0, stddev=2.0, axes=[0, 1])
    np.testing.assert_allclose(np.asarray(with_axes), (x - 1.0) / 2.0, atol=1e-5)


def test_given_mean_is_used_for_the_deviation():
    x = _x()
    out = np.asarray(ndd.normalize(ndd.tensor(x, layout="HWC"), mean=1.0))
    np.testing.assert_allclose(out, (x - 1.0) / np.sqrt(np.mean((x - 1.0) ** 2)), atol=1e-5)


def test_constant_input_gives_shift():
    out = ndd.normalize(ndd.tensor(np.full((3, 4), 7, np.uint8)), scale=2.0, shift=1.5)
    np.testing.assert_array_equal(np.asarray(out), 1.5)


def test_a_given_zero_stddev_gives_shift():
    # As the reference for a per-element stddev ([[0, -28.5, -28.5], ...] there) and for a
    # computed zero deviation; the reference gives a scalar 0 infinities.
    x = np.arange(60, dtype=np.uint8).reshape(4, 5, 3)
    stddev = np.array([[[0, 1, 2]]], np.float32)
    with np.errstate(all="raise"):
        out = np.asarray(
            ndd.normalize(ndd.tensor(x, layout="HWC"), axes=[0, 1], stddev=stddev, scale=2.0, shift=5.0)
        )
    mean = x.mean(axis=(0, 1), keepdims=True)
    np.testing.assert_allclose(
        out[..., 1:], 2.0 * (x[..., 1:] - mean[..., 1:]) / stddev[..., 1:] + 5.0, atol=1e-4
    )
    np.testing.assert_array_equal(out[..., 0], 5.0)
    scalar = ndd.normalize(ndd.tensor(x, layout="HWC"), stddev=0.0, mean=3.0, shift=5.0)
    np.testing.assert_array_equal(np.asarray(scalar), 5.0)


def test_batch_statistics_span_the_samples():
    a, b = _x(), _x()[:2] * 2 + 1
    out = ndd.normalize(ndd.batch([a, b], layout="HWC"), batch=True, axis_names="HW")
    both = np.concatenate([a.reshape(-1, 3), b.reshape(-1, 3)])
    mean, std = both.mean(0), both.std(0)
    np.testing.assert_allclose(np.asarray(out.select(1)), (b - mean) / std, atol=1e-5)
    assert out.layout == "HWC"


def test_integer_output_rounds_half_away_and_saturates():
    x = np.array([[0.5, 1.5, -2.5, 400.0]], np.float32)
    out = ndd.normalize(ndd.tensor(x), mean=0.0, stddev=1.0, dtype=ndd.uint8)
    np.testing.assert_array_equal(np.asarray(out), [[1, 2, 0, 255]])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"axes": [0], "axis_names": "H"}, "'axes' and 'axis_names'"),
        ({"axes": [3]}, "'axes'"),
        ({"axes": []}, "'axes'"),
        ({"axis_names": "D"}, "'axis_names'"),
        ({"axes": [1, 1]}, "'axes' names an axis twice"),
        ({"axis_names": "HWH"}, "'axis_names' names an axis twice"),
        ({"dtype": ndd.float64}, "'dtype'"),
        ({"mean": np.zeros((2, 2, 3))}, "'mean'"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message) as info:
        np.asarray(ndd.normalize(ndd.tensor(_x(), layout="HWC"), **kwargs))
    assert "ndd.normalize" in str(info.value)


def test_unsupported_input_type():
    with pytest.raises(TypeError, match="ndd.normalize: the input type"):
        ndd.normalize(ndd.tensor(np.zeros((2, 2), np.float64)))


def test_batch_mode_rejects_per_sample_mean():
    data = ndd.batch([_x(), _x()], layout="HWC")
    with pytest.raises(ValueError, match="'mean'"):
        ndd.normalize(data, batch=True, mean=ndd.batch([np.float32(1), np.float32(2)]))


def _partial_sums(terms):
    """Element i added into partial sum i % 8 in order (the tail into sum 0), then the eight
    combined pairwise: the summation order of ndd._cpu.crop_mirror_normalize's kernels."""
    terms = np.asarray(terms, np.float64)
    main = len(terms) // 8 * 8
    s = [float(np.cumsum(terms[k:main:8])[-1]) if main else 0.0 for k in range(8)]
    for value in terms[main:]:
        s[0] += value
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))


@pytest.mark.parametrize("count", [0, 1, 7, 8, 9, 23, 1000, 4099])
def test_the_whole_sample_moments_follow_their_summation_order_exactly(count):
    """normalize's compiled whole-sample path: the uint8 sum is exact, the float32 sum and the
    squared deviations (each square in float32) follow one fixed order, in the vector path and
    in the scalar one alike."""
    from ndd._cpu.moments import normalize_values, sample_sum, squared_deviations

    rng = np.random.default_rng(count)
    pixels = rng.integers(0, 256, count).astype(np.uint8)
    floats = (rng.standard_normal(count) * 300).astype(np.float32)
    assert sample_sum(pixels) == float(pixels.sum(dtype=np.int64))
    assert sample_sum(floats) == _partial_sums(floats)
    for values in (pixels, floats):
        mean = np.float32(97.3)
        deviations = values.astype(np.float32) - mean
        assert squared_deviations(values, mean) == _partial_sums(deviations * deviations)
        out = np.empty(count, np.float32)
        normalize_values(values, out, mean, np.float32(0.0173), np.float32(5.5))
        np.testing.assert_array_equal(out, deviations * np.float32(0.0173) + np.float32(5.5))


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_normalize_per_channel_of_an_image_matches_numpy(dtype):
    # Per-channel parameters are tiled along rows (numpy broadcasts rows of 3 slowly).
    x = np.random.default_rng(0).uniform(0, 255, (48, 64, 3)).astype(dtype)
    out = np.asarray(ndd.normalize(ndd.tensor(x, layout="HWC"), axes=[0, 1], scale=2.0, shift=1.0))
    wide = x.astype(np.float64)
    mean, std = wide.mean(axis=(0, 1)), wide.std(axis=(0, 1))
    np.testing.assert_allclose(out, (wide - mean) / std * 2.0 + 1.0, rtol=1e-5, atol=1e-5)
    given = np.asarray(
        ndd.normalize(
            ndd.tensor(x, layout="HWC"), mean=np.float32([[[1, 2, 3]]]), stddev=np.float32([[[2, 4, 8]]])
        )
    )
    np.testing.assert_allclose(given, (wide - [1, 2, 3]) / [2, 4, 8], rtol=1e-6)


@pytest.mark.parametrize("channels", [1, 3, 4, 5, 7, 64])
@pytest.mark.parametrize("pixels", [0, 1, 5, 33, 1001])
def test_the_per_channel_moments_are_exact_over_each_channel(channels, pixels):
    """normalize's compiled per-channel passes over interleaved data: with whole values and a
    mean of quarters every sum is exact, whatever its order, so they equal numpy's to the bit
    (tails shorter than the kernels' period included)."""
    from ndd._cpu.moments import channel_squared_deviations, channel_sums, normalize_channels

    rng = np.random.default_rng(channels * 1000 + pixels)
    image = rng.integers(0, 256, (pixels, channels)).astype(np.uint8)
    for values in (image, image.astype(np.float32) - 100):
        flat = values.reshape(-1)
        np.testing.assert_array_equal(channel_sums(flat, channels), values.astype(np.float64).sum(axis=0))
        means = (rng.integers(-400, 400, channels) / 4).astype(np.float32)
        deviations = values.astype(np.float32) - means
        np.testing.assert_array_equal(
            channel_squared_deviations(flat, means), (deviations * deviations).astype(np.float64).sum(axis=0)
        )
        factors = rng.uniform(0.01, 2, channels).astype(np.float32)
        out = np.empty(flat.shape, np.float32)
        normalize_channels(flat, out, means, factors, np.float32(-3.5))
        np.testing.assert_array_equal(out.reshape(values.shape), deviations * factors + np.float32(-3.5))
    with pytest.raises(ValueError, match="whole pixels"):
        channel_sums(np.zeros(channels * 2 + 1, np.uint8), channels + 1 if channels > 1 else 2)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("layout, axes", [("HWC", [0, 1]), ("FHWC", [0, 1, 2]), ("HWC", [1, 0])])
def test_normalize_per_channel_follows_the_float32_steps(dtype, layout, axes):
    """The per-channel path does the general path's float32 steps: mean and deviation per
    channel, then (x - mean) * (scale / deviation) + shift, each rounded to float32."""
    shape = (30, 41, 3) if layout == "HWC" else (2, 9, 11, 4)
    x = np.random.default_rng(2).integers(0, 256, shape).astype(dtype)
    out = np.asarray(ndd.normalize(ndd.tensor(x, layout=layout), axes=axes, scale=3.0, shift=0.5, ddof=1))
    rows = x.reshape(-1, shape[-1]).astype(np.float32)
    mean = (rows.astype(np.float64).sum(axis=0) / len(rows)).astype(np.float32)
    deviations = rows - mean
    variance = (deviations * deviations).astype(np.float64).sum(axis=0) / (len(rows) - 1)
    factor = (3.0 / np.sqrt(variance)).astype(np.float32)
    np.testing.assert_array_equal(out.reshape(rows.shape), deviations * factor + np.float32(0.5))


@pytest.mark.parametrize("ddof", [0, 1, 12, 13])
@pytest.mark.parametrize("epsilon", [0.0, 0.5])
def test_normalize_per_channel_path_agrees_with_the_general_path(ddof, epsilon):
    """The compiled per-channel path (uint8) and the general one (int16, the same values):
    the same means, deviations over count - ddof (0 when that is not positive, as in the
    reference: the shift, or the deviation from the mean over sqrt(epsilon)), epsilon and
    scale, for 12 pixels a channel."""
    x = np.random.default_rng(ddof).integers(0, 9, (3, 4, 3)).astype(np.uint8)
    x[..., 2] = 7  # a constant channel: deviation 0
    kwargs = {"axes": [0, 1], "ddof": ddof, "epsilon": epsilon, "scale": 2.5, "shift": -1.0}
    fast = np.asarray(ndd.normalize(ndd.tensor(x, layout="HWC"), **kwargs))
    general = np.asarray(ndd.normalize(ndd.tensor(x.astype(np.int16), layout="HWC"), **kwargs))
    np.testing.assert_array_equal(fast, general)
    if ddof >= 12:
        mean = x.mean(axis=(0, 1), dtype=np.float64).astype(np.float32)
        expected = (
            (x - mean) * np.float32(2.5 / np.sqrt(epsilon)) - 1.0 if epsilon else np.full(x.shape, -1.0)
        )
        np.testing.assert_allclose(fast, expected, rtol=1e-6, atol=1e-5)
    assert np.all(fast[..., 2] == -1.0)
