"""ndd.random.uniform, normal, coin_flip, beta, choice and ndd.random_crop_generator
(ndd/_ops/random_ops.py).

Values are random, so they are checked statistically against the distribution:
moments within 5 standard errors, ranges, and chi-square tests whose critical
values have a 1e-6 false-alarm rate (every RNG here is seeded, so the tests are
deterministic as well). Result metadata is checked against the reference
(tests/golden/random_reference.json).
"""

import json
import math
import pathlib
from statistics import NormalDist

import numpy as np
import pytest
from arrays import sample_arrays

import ndd

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent.parent / "golden" / "random_reference.json").read_text(encoding="utf-8")
)
N = 50_000


def rng(seed=0):
    return ndd.random.RNG(seed=seed)


def chi2_critical(df, false_alarm=1e-6):
    """Upper quantile of the chi-square distribution (Wilson-Hilferty approximation)."""
    z = NormalDist().inv_cdf(1 - false_alarm)
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def assert_frequencies(values, categories, probabilities):
    """The values fall into ``categories`` with the given probabilities (chi-square test)."""
    values = np.asarray(values).ravel()
    counts = np.array([np.sum(values == c) for c in categories])
    assert counts.sum() == values.size, "values outside the categories"
    expected = np.asarray(probabilities, np.float64) * values.size
    statistic = np.sum((counts - expected) ** 2 / expected)
    assert statistic < chi2_critical(len(categories) - 1), (counts, expected)


def assert_mean(values, mean, variance):
    values = np.asarray(values, np.float64).ravel()
    assert abs(values.mean() - mean) < 5 * math.sqrt(variance / values.size), values.mean()


def assert_variance(values, variance, fourth_moment):
    """Sample variance against the true one; ``fourth_moment`` is the central fourth moment."""
    values = np.asarray(values, np.float64).ravel()
    standard_error = math.sqrt((fourth_moment - variance**2) / values.size)
    assert abs(values.var() - variance) < 5 * standard_error, values.var()


def assert_uniform_on(values, lo, hi, bins=20):
    values = np.asarray(values, np.float64).ravel()
    assert values.min() >= lo and values.max() < hi
    counts, _ = np.histogram(values, bins=bins, range=(lo, hi))
    expected = values.size / bins
    assert np.sum((counts - expected) ** 2 / expected) < chi2_critical(bins - 1), counts
    assert_mean(values, (lo + hi) / 2, (hi - lo) ** 2 / 12)


# --------------------------------------------------------------------------- reference metadata


def t(array, layout=None):
    return ndd.tensor(np.asarray(array), layout=layout)


def b(arrays, layout=None):
    return ndd.batch([np.asarray(a) for a in arrays], layout=layout)


def _describe(result):
    def name(dtype):
        return np.dtype(dtype.numpy).name

    if isinstance(result, tuple):
        return {"kind": "tuple", "items": [_describe(r) for r in result]}
    if isinstance(result, ndd.Batch):
        shapes = [list(s.shape) for s in sample_arrays(result)]
        return {
            "kind": "batch",
            "dtype": name(result.dtype),
            "layout": result.layout,
            "batch_size": result.batch_size,
            "shapes": shapes,
        }
    return {
        "kind": "tensor",
        "dtype": name(result.dtype),
        "layout": result.layout,
        "shape": list(np.asarray(result).shape),
    }


@pytest.mark.parametrize("case", GOLDEN["metadata"], ids=lambda c: c["call"])
def test_result_metadata_matches_the_reference(case):
    scope = {"R": rng(5), "np": np, "ndd": ndd, "t": t, "b": b}
    expected = case["result"]
    if not expected["ok"]:
        with pytest.raises({"ValueError": ValueError, "TypeError": TypeError}[expected["error_type"]]):
            eval(case["call"], scope)  # noqa: S307 - expressions recorded by the golden script
        return
    result = eval(case["call"], scope)  # noqa: S307
    assert _describe(result) == expected["value"]


def test_metadata_is_known_before_the_run():
    with ndd.EvalMode.deferred:
        x = ndd.random.uniform(shape=ndd.batch([np.int32([2, 3]), np.int32([4, 1])]), rng=rng())
        assert x.shape == [(2, 3), (4, 1)] and x.dtype == ndd.float32
        c = ndd.random.choice(np.int32([[1, 2, 3]] * 4), shape=[5], rng=rng())
        assert c.shape == (5, 3) and c.dtype == ndd.int32


# --------------------------------------------------------------------------- uniform


def test_uniform_default_range():
    assert_uniform_on(ndd.random.uniform(shape=[N], rng=rng()), -1.0, 1.0)


@pytest.mark.parametrize("dtype", [ndd.float32, ndd.float64])
def test_uniform_range_and_dtype(dtype):
    out = ndd.random.uniform(shape=[N], range=[5, 6.5], dtype=dtype, rng=rng(1))
    assert out.dtype == dtype and np.asarray(out).dtype == dtype.numpy
    assert_uniform_on(out, 5.0, 6.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform_range_is_half_open(dtype):
    # hi is the next representable value above lo: only lo may come out.
    lo = dtype(1.0)
    hi = float(np.nextafter(lo, dtype(2)))
    out = np.asarray(ndd.random.uniform(shape=[1000], range=[1.0, hi], dtype=ndd.dtype(dtype), rng=rng()))
    assert np.all(out == lo)


def test_uniform_float32_is_as_fine_as_float32_near_the_low_end():
    # As the reference: draws near 0 are not confined to a grid of 2**-24 (84% of those
    # below 0.25 are off it, as float64 draws rounded to float32 give).
    u = np.asarray(ndd.random.uniform(range=[0, 1], shape=[200000]))
    low = u[u < 0.25].astype(np.float64)
    assert 0.75 < np.mean(low * 2**24 % 1 != 0) < 0.9
    assert u.min() >= 0 and u.max() < 1


def test_uniform_integer_dtype_rounds_the_continuous_draws():
    # Rounding [0, 3) draws: 0 and 3 come from half-width intervals.
    out = ndd.random.uniform(shape=[N], range=[0, 3], dtype=ndd.int32, rng=rng(2))
    assert np.asarray(out).dtype == np.int32
    assert_frequencies(out, [0, 1, 2, 3], [1 / 6, 1 / 3, 1 / 3, 1 / 6])


def test_uniform_values():
    out = np.asarray(ndd.random.uniform(shape=[N], values=[1, 2.5, 7], rng=rng(3)))
    assert out.dtype == np.float32
    assert_frequencies(out, [1, 2.5, 7], [1 / 3] * 3)


def test_uniform_values_convert_to_the_dtype_as_cast_does():
    # As the reference: rounded, then saturated (-1 -> 0, 2.7 -> 3, 300 -> 255).
    out = ndd.random.uniform(shape=[N], values=[-1, 2.7, 300], dtype=ndd.uint8, rng=rng(4))
    assert_frequencies(out, [0, 3, 255], [1 / 3] * 3)


def test_uniform_per_sample_range():
    ranges = ndd.batch([np.float32([0, 1]), np.float32([10, 11]), np.float32([-5, -4])])
    out = ndd.random.uniform(range=ranges, shape=[N // 4], rng=rng(5))
    for sample, lo in zip(sample_arrays(out), [0, 10, -5], strict=True):
        assert_uniform_on(sample, lo, lo + 1)


def test_uniform_per_sample_values():
    values = ndd.batch([np.float32([1, 2]), np.float32([10, 11, 12])])
    out = ndd.random.uniform(values=values, shape=[3000], rng=rng(6))
    first, second = sample_arrays(out)
    assert_frequencies(first, [1, 2], [0.5, 0.5])
    assert_frequencies(second, [10, 11, 12], [1 / 3] * 3)


def test_uniform_batch_samples_are_independent():
    out = np.stack(sample_arrays(ndd.random.uniform(batch_size=N // 10, shape=[10], rng=rng(7))))
    assert_uniform_on(out, -1, 1)
    # Neighbouring samples are uncorrelated: correlation within 5 standard errors of 0.
    correlation = np.corrcoef(out[:-1].ravel(), out[1:].ravel())[0, 1]
    assert abs(correlation) < 5 / math.sqrt(out[1:].size)


def test_uniform_ragged_batch_samples_are_independent():
    like = ndd.batch([np.zeros(n) for n in (4000, 4001, 4002)])
    samples = sample_arrays(ndd.random.uniform(like, rng=rng(8)))
    assert [s.shape for s in samples] == [(4000,), (4001,), (4002,)]
    for s in samples:
        assert_uniform_on(s, -1, 1, bins=10)
    assert abs(np.corrcoef(samples[0], samples[1][:4000])[0, 1]) < 5 / math.sqrt(4000)


def test_uniform_shape_like_batch_of_one_shape():
    like = ndd.batch([np.zeros((100, 10), np.uint8)] * 50)
    samples = np.stack(sample_arrays(ndd.random.uniform(like, rng=rng(9))))
    assert samples.shape == (50, 100, 10) and samples.dtype == np.float32
    assert_uniform_on(samples, -1, 1)
    assert abs(np.corrcoef(samples[0].ravel(), samples[1].ravel())[0, 1]) < 5 / math.sqrt(1000)


def test_uniform_shape_like_tensor_with_batch_size():
    out = ndd.random.uniform(np.zeros((2, 3)), batch_size=3, rng=rng())
    assert out.shape == [(2, 3)] * 3


def test_uniform_empty_batch_and_empty_shape():
    assert ndd.random.uniform(batch_size=0, rng=rng()).batch_size == 0
    assert np.asarray(ndd.random.uniform(shape=[0, 4], rng=rng())).shape == (0, 4)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"range": [6, 5]}, ValueError, r"'range' \[lo, hi\] must have lo < hi, got \[6.0, 5.0\]"),
        ({"range": [5, 5]}, ValueError, r"'range' \[lo, hi\] must have lo < hi"),
        ({"range": [5]}, ValueError, r"'range' must be two finite numbers \[lo, hi\], got \[5.0\]"),
        ({"range": [1, 2, 3]}, ValueError, "'range' must be two finite numbers"),
        ({"range": [0, float("inf")]}, ValueError, "'range' must be a list of finite numbers"),
        ({"range": [0, float("nan")]}, ValueError, "'range' must be a list of finite numbers"),
        ({"values": []}, ValueError, "'values' must not be empty"),
        ({"values": [1, 2], "range": [0, 1]}, ValueError, "'values' and 'range' cannot both be given"),
        ({"shape": [-1]}, ValueError, r"'shape' must not have negative extents, got \[-1\]"),
        ({"shape": [2.5]}, ValueError, "'shape' must be a list of integers"),
        ({"dtype": ndd.float16}, TypeError, "'dtype' must be one of u8, .*f64; got f16"),
        ({"dtype": ndd.bool}, TypeError, "'dtype' must be one of"),
        (
            {"range": b([np.float32([0, 1]), np.float32([1, 0])])},
            ValueError,
            r"'range' \[lo, hi\] must have lo < hi, got \[1.0, 0.0\]",
        ),
    ],
)
def test_uniform_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=f"ndd.random.uniform: {match}"):
        ndd.random.uniform(rng=rng(), **kwargs)


def test_uniform_shape_and_shape_like_exclude_each_other():
    with pytest.raises(ValueError, match="'shape' cannot be given together with a shape_like input"):
        ndd.random.uniform(np.zeros(3), shape=[3], rng=rng())


def test_uniform_per_sample_shapes_must_have_one_length():
    with pytest.raises(ValueError, match="'shape' must have the same length for all samples"):
        ndd.random.uniform(shape=b([np.int32([1]), np.int32([2, 2])]), rng=rng())


def test_uniform_argument_computed_later_is_checked_when_running():
    with ndd.EvalMode.deferred:
        bad_range = ndd.reshape(ndd.tensor(np.float32([6, 5])), shape=[2])
        out = ndd.random.uniform(range=bad_range, shape=[3], rng=rng())
    with pytest.raises(ValueError, match="ndd.random.uniform.*'range' \\[lo, hi\\] must have lo < hi"):
        out.evaluate()


# --------------------------------------------------------------------------- normal


@pytest.mark.parametrize("dtype", [ndd.float32, ndd.float64])
def test_normal_moments(dtype):
    out = np.asarray(ndd.random.normal(shape=[N], mean=10, stddev=2, dtype=dtype, rng=rng(10)))
    assert out.dtype == dtype.numpy
    assert_mean(out, 10, 4)
    assert_variance(out, 4, 3 * 16)
    # About 68.27% within one standard deviation (a binomial count).
    inside = np.mean(np.abs(out - 10) < 2)
    assert abs(inside - 0.6827) < 5 * math.sqrt(0.6827 * 0.3173 / N)


def test_normal_integer_dtype_rounds_and_saturates():
    out = np.asarray(ndd.random.normal(shape=[N], mean=5, stddev=3, dtype=ndd.int32, rng=rng(11)))
    assert out.dtype == np.int32
    assert_mean(out, 5, 9 + 1 / 12)
    clipped = np.asarray(ndd.random.normal(shape=[N], mean=5, stddev=30, dtype=ndd.uint8, rng=rng(12)))
    # Negative draws (about 43%) saturate at 0.
    assert clipped.min() == 0 and abs(np.mean(clipped == 0) - NormalDist(5, 30).cdf(-0.5)) < 0.02


def test_normal_zero_stddev_gives_the_mean():
    np.testing.assert_array_equal(
        ndd.random.normal(shape=[5], mean=3, stddev=0, rng=rng()), np.full(5, 3, np.float32)
    )


def test_normal_per_sample_mean_and_stddev():
    out = ndd.random.normal(
        mean=ndd.batch(np.float32([0, 100])),
        stddev=ndd.batch(np.float32([1, 10])),
        shape=[N // 2],
        rng=rng(13),
    )
    for sample, (mean, stddev) in zip(sample_arrays(out), [(0, 1), (100, 10)], strict=True):
        assert_mean(sample, mean, stddev**2)
        assert_variance(sample, stddev**2, 3 * stddev**4)


@pytest.mark.parametrize("stddev", [-1.0, float("nan"), float("inf")])
def test_normal_bad_stddev(stddev):
    # NaN and inf are refused by every float argument, negative values by normal's own check.
    with pytest.raises(
        ValueError, match="ndd.random.normal: 'stddev' must be a (non-negative )?finite number"
    ):
        ndd.random.normal(stddev=stddev, rng=rng())


# --------------------------------------------------------------------------- coin_flip


@pytest.mark.parametrize("probability", [0.5, 0.1, 0.93])
def test_coin_flip_frequencies(probability):
    out = np.asarray(ndd.random.coin_flip(shape=[N], probability=probability, rng=rng(20)))
    assert out.dtype == np.int32
    assert_frequencies(out, [0, 1], [1 - probability, probability])


@pytest.mark.parametrize("probability, value", [(0.0, 0), (1.0, 1)])
def test_coin_flip_certain_outcomes(probability, value):
    assert np.all(np.asarray(ndd.random.coin_flip(shape=[1000], probability=probability, rng=rng())) == value)


@pytest.mark.parametrize("dtype", [ndd.int32, ndd.uint8, ndd.bool])
def test_coin_flip_dtypes(dtype):
    out = np.asarray(ndd.random.coin_flip(shape=[N], dtype=dtype, rng=rng(21)))
    assert out.dtype == dtype.numpy
    assert_frequencies(out.astype(np.int32), [0, 1], [0.5, 0.5])


def test_coin_flip_per_sample_probability():
    out = ndd.random.coin_flip(probability=ndd.batch(np.float32([0.2, 0.8])), shape=[N // 2], rng=rng(22))
    for sample, p in zip(sample_arrays(out), [0.2, 0.8], strict=True):
        assert_frequencies(sample, [0, 1], [1 - p, p])


def test_coin_flip_mirror_flags_for_a_batch():
    flags = ndd.random.coin_flip(batch_size=4000, rng=rng(23))
    assert flags.shape == [()] * 4000 and flags.dtype == ndd.int32
    assert_frequencies([int(s) for s in sample_arrays(flags)], [0, 1], [0.5, 0.5])


@pytest.mark.parametrize("probability", [-0.5, 1.5, float("nan")])
def test_coin_flip_bad_probability(probability):
    with pytest.raises(
        ValueError, match=r"ndd.random.coin_flip: 'probability' must be (in \[0, 1\]|a finite number)"
    ):
        ndd.random.coin_flip(probability=probability, rng=rng())


@pytest.mark.parametrize("dtype", [ndd.float32, ndd.int64, ndd.int8])
def test_coin_flip_bad_dtype(dtype):
    with pytest.raises(TypeError, match="ndd.random.coin_flip: 'dtype' must be one of i32, u8, bool"):
        ndd.random.coin_flip(dtype=dtype, rng=rng())


# --------------------------------------------------------------------------- beta


@pytest.mark.parametrize("alpha, beta", [(1.0, 1.0), (2.0, 5.0), (0.5, 0.5)])
def test_beta_moments(alpha, beta):
    out = np.asarray(ndd.random.beta(shape=[N], alpha=alpha, beta=beta, rng=rng(30)))
    assert out.dtype == np.float32 and out.min() >= 0 and out.max() <= 1
    total = alpha + beta
    mean = alpha / total
    variance = alpha * beta / (total**2 * (total + 1))
    assert_mean(out, mean, variance)
    # Beta's fourth central moment is bounded by its variance (values in [0, 1]): use 1/16 as the bound.
    assert abs(out.var() - variance) < 5 * math.sqrt(1 / 16 / N)


def test_beta_float64_and_per_sample_parameters():
    out = ndd.random.beta(
        alpha=ndd.batch(np.float32([2, 8])),
        beta=ndd.batch(np.float32([8, 2])),
        dtype=ndd.float64,
        shape=[N // 2],
        rng=rng(31),
    )
    first, second = sample_arrays(out)
    assert first.dtype == np.float64
    assert_mean(first, 0.2, 16 / 1100)
    assert_mean(second, 0.8, 16 / 1100)


def test_beta_small_parameters_stay_in_the_unit_interval():
    out = np.asarray(ndd.random.beta(shape=[N], alpha=0.01, beta=0.01, rng=rng(32)))
    assert not np.any(np.isnan(out)) and out.min() >= 0 and out.max() <= 1


@pytest.mark.parametrize("name, value", [("alpha", 0), ("alpha", -1), ("beta", 0), ("beta", float("inf"))])
def test_beta_bad_parameters(name, value):
    with pytest.raises(ValueError, match=f"ndd.random.beta: '{name}' must be a (positive )?finite number"):
        ndd.random.beta(rng=rng(), **{name: value})


def test_beta_bad_dtype():
    with pytest.raises(TypeError, match="ndd.random.beta: 'dtype' must be one of f32, f64; got i32"):
        ndd.random.beta(dtype=ndd.int32, rng=rng())


# --------------------------------------------------------------------------- choice


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int8])
def test_choice_of_an_integer_is_range_in_its_type(dtype):
    out = np.asarray(ndd.random.choice(dtype(5), shape=[N], rng=rng(40)))
    assert out.dtype == dtype
    assert_frequencies(out, range(5), [0.2] * 5)


def test_choice_with_probabilities():
    out = ndd.random.choice(4, p=[0.1, 0.2, 0.7, 0.0], shape=[N], rng=rng(41))
    values = np.asarray(out)
    assert not np.any(values == 3)
    assert_frequencies(values, [0, 1, 2], [0.1, 0.2, 0.7])


@pytest.mark.parametrize(
    "a", [np.float32([1.5, 2.5, -3]), np.bool_([True, False]), np.int64([10, 20, 30, 40])], ids=str
)
def test_choice_of_elements(a):
    out = np.asarray(ndd.random.choice(a, shape=[N], rng=rng(42)))
    assert out.dtype == a.dtype
    assert_frequencies(out, a, [1 / a.size] * a.size)


def test_choice_of_rows():
    a = np.int32([[1, 2], [3, 4], [5, 6]])
    out = np.asarray(ndd.random.choice(ndd.tensor(a, layout="AB"), shape=[N], rng=rng(43)))
    assert out.shape == (N, 2)
    row_index = (out[:, 0] - 1) // 2
    np.testing.assert_array_equal(out, a[row_index])
    assert_frequencies(row_index, range(3), [1 / 3] * 3)


def test_choice_per_sample_a_and_p():
    a = ndd.batch([np.int32(3), np.int32(100)])
    out = sample_arrays(ndd.random.choice(a, shape=[N // 2], rng=rng(44)))
    assert_frequencies(out[0], range(3), [1 / 3] * 3)
    assert out[1].min() >= 0 and out[1].max() < 100
    assert_mean(out[1], 49.5, (100**2 - 1) / 12)
    p = ndd.batch([np.float32([1, 0]), np.float32([0, 1])])
    assert [int(s) for s in sample_arrays(ndd.random.choice(2, p=p, rng=rng()))] == [0, 1]


def test_choice_of_one_integer_draws_each_sample_of_a_batch():
    # The reference repeats one draw for every sample.
    samples = [int(s) for s in sample_arrays(ndd.random.choice(1000, batch_size=50, rng=rng(45)))]
    assert len(set(samples)) > 40


@pytest.mark.parametrize(
    "a, kwargs, error, match",
    [
        (0, {}, ValueError, "a scalar 'a' must be positive"),
        (-3, {}, ValueError, "a scalar 'a' must be positive"),
        (np.int32([]), {}, ValueError, "'a' must not be empty"),
        (2.5, {}, TypeError, "a scalar 'a' must be an integer .*, got f32"),
        (True, {}, TypeError, "a scalar 'a' must be an integer"),
        (3, {"p": [0.5, 0.5]}, ValueError, r"'p' must have one probability per choice \(3\), got 2"),
        (3, {"p": [-0.5, 0.5, 1.0]}, ValueError, r"'p' must hold probabilities in \[0, 1\]"),
        (3, {"p": [0.1, 0.2, 0.5]}, ValueError, "'p' must sum to 1"),
        (
            np.int32([1, 2]),
            {"p": [0.2, 0.3, 0.5]},
            ValueError,
            r"'p' must have one probability per choice \(2\)",
        ),
        (b([np.int32(2), np.int32(3)]), {"p": [0.5, 0.5]}, ValueError, r"'p' must have one .* \(3\), got 2"),
    ],
)
def test_choice_bad_arguments(a, kwargs, error, match):
    with pytest.raises(error, match=f"ndd.random.choice: {match}"):
        ndd.random.choice(a, rng=rng(), **kwargs)


def test_choice_count_computed_later_is_checked_when_running():
    with ndd.EvalMode.deferred:
        count = ndd.reshape(ndd.tensor(np.int32([0])), shape=[])
        out = ndd.random.choice(count, shape=[2], rng=rng())
    with pytest.raises(ValueError, match="ndd.random.choice.*a scalar 'a' must be positive"):
        out.evaluate()


def test_choice_shape_and_shape_like_exclude_each_other():
    with pytest.raises(
        ValueError, match="ndd.random.choice: 'shape' cannot be given together with a shape_like"
    ):
        ndd.random.choice(4, np.zeros((2, 3)), shape=[2], rng=rng())


# --------------------------------------------------------------------------- random_crop_generator


def _windows(extents, count, **kwargs):
    """``count`` windows for an image of ``extents`` (H, W): anchors and shapes, (count, 2) each."""
    shapes = ndd.batch([np.int64(extents)] * count)
    anchor, shape = ndd.random_crop_generator(shapes, rng=rng(50), **kwargs)
    return np.stack(sample_arrays(anchor)), np.stack(sample_arrays(shape))


def test_random_crop_windows_lie_inside_the_image():
    anchor, shape = _windows([100, 200], 4000)
    assert anchor.dtype == np.int32 and shape.dtype == np.int32
    assert np.all(anchor >= 0) and np.all(shape >= 1)
    assert np.all(anchor + shape <= [100, 200])


@pytest.mark.parametrize(
    "extents, area, ratio, fallback",
    [
        ([100, 200], [0.08, 1.0], [0.75, 4 / 3], [100, 133]),
        ([300, 300], [0.3, 0.5], [0.5, 2.0], [300, 300]),
        ([64, 48], [0.1, 0.2], [1, 1], [48, 48]),
        # Only heights divisible by 3 have a width of ratio 4/3: some windows fall back
        # (225 x 300, scaled down to the largest area: 183 x 244).
        ([300, 300], [0.1, 0.5], [4 / 3, 4 / 3], [183, 244]),
    ],
)
def test_random_crop_area_and_aspect_ratio_within_their_ranges(extents, area, ratio, fallback):
    anchor, shape = _windows(extents, 2000, random_area=area, random_aspect_ratio=ratio)
    assert np.all(anchor + shape <= extents)
    h, w = shape[:, 0].astype(np.float64), shape[:, 1].astype(np.float64)
    assert np.all(w / h >= ratio[0] * (1 - 1e-9)) and np.all(w / h <= ratio[1] * (1 + 1e-9))
    drawn = np.any(shape != fallback, axis=1)
    assert drawn.mean() > 0.9
    # Rounding each side to whole pixels moves the area by up to half a pixel per side
    # (the width may move further to keep the ratio in range: allow one pixel).
    h, w = h[drawn], w[drawn]
    area_fraction = h * w / (extents[0] * extents[1])
    area_slack = (h + w + 1) / (extents[0] * extents[1])
    assert np.all(area_fraction >= area[0] - area_slack) and np.all(area_fraction <= area[1] + area_slack)


def test_random_crop_area_is_spread_over_its_range():
    # Every window fits a 200x200 image for these ranges: the area fraction is uniform.
    _, shape = _windows([200, 200], 4000, random_area=[0.2, 0.6], random_aspect_ratio=[0.9, 1.1])
    fraction = shape[:, 0] * shape[:, 1] / 40000
    counts, _ = np.histogram(fraction, bins=8, range=(0.2, 0.6))
    assert np.sum((counts - 500) ** 2 / 500) < chi2_critical(7), counts


def test_random_crop_anchor_is_uniform_over_the_free_positions():
    anchor, shape = _windows([100, 100], 4000, random_area=[0.25, 0.25], random_aspect_ratio=[1, 1])
    np.testing.assert_array_equal(shape, np.full((4000, 2), 50))
    assert_frequencies(anchor[:, 0] // 17, range(3), [17 / 51, 17 / 51, 17 / 51])
    assert anchor.min() == 0 and anchor.max() == 50


@pytest.mark.parametrize(
    "extents, area, ratio, expected_shape",
    [
        ([100, 200], [0.9, 0.9], [10, 10], [20, 200]),  # too wide a ratio: full width
        ([100, 200], [0.9, 0.9], [0.1, 0.1], [100, 10]),  # too narrow: full height
        ([100, 200], [1.0, 1.0], [1, 1], [100, 100]),
        ([100, 200], [1.0, 1.0], [2, 2], [100, 200]),  # the image itself fits
    ],
)
def test_random_crop_falls_back_to_the_largest_window_of_an_allowed_ratio(
    extents, area, ratio, expected_shape
):
    anchor, shape = _windows(extents, 200, random_area=area, random_aspect_ratio=ratio)
    np.testing.assert_array_equal(shape, np.tile(expected_shape, (200, 1)))
    assert np.all(anchor + shape <= extents)


@pytest.mark.parametrize(
    "extents, kwargs, expected_shape",
    [
        # The image, scaled down (both sides truncated) to random_area[1] of its area.
        ([100, 100], dict(random_area=[0.1, 0.25]), [50, 50]),
        ([100, 100], dict(random_area=[0.5, 0.6], random_aspect_ratio=[0.25, 4.0]), [77, 77]),
        ([100, 120], dict(random_area=[0.0, 0.0]), [1, 1]),
        # The image brought into the ratio range first (maxH = trunc(W / 2) = 50), then scaled.
        ([100, 100], dict(random_area=[0.1, 0.25], random_aspect_ratio=[2.0, 3.0]), [35, 70]),
    ],
)
def test_random_crop_fallback_window_keeps_to_the_largest_area(extents, kwargs, expected_shape):
    _, shape = _windows(extents, 50, num_attempts=0, **kwargs)
    np.testing.assert_array_equal(shape, np.tile(expected_shape, (50, 1)))


def test_random_crop_windows_keep_to_the_largest_area_when_the_attempts_fail():
    # One attempt, often too elongated to fit: the fallback is 77 x 77, never the image.
    extents = [100, 100]
    _, shape = _windows(extents, 4000, num_attempts=1, random_area=[0.5, 0.6], random_aspect_ratio=[0.25, 4])
    h, w = shape[:, 0].astype(np.float64), shape[:, 1].astype(np.float64)
    assert np.sum(np.all(shape == 77, axis=1)) > 1000
    # Rounding each side to whole pixels moves the area by up to half a pixel per side.
    assert np.all(h * w <= 0.6 * 100 * 100 + (h + w + 1) / 2 + 0.25)


@pytest.mark.parametrize("extents, expected_shape", [([50, 300], [50, 66]), ([300, 50], [66, 50])])
def test_random_crop_window_of_an_elongated_image_truncates_to_the_ratio_range(extents, expected_shape):
    # No window of 90% of the area has a ratio within [3/4, 4/3]: the image's height
    # (width) with the width (height) of ratio 4/3 truncated, 66 = trunc(50 * 4/3).
    _, shape = _windows(extents, 20, random_area=[0.9, 1.0])
    np.testing.assert_array_equal(shape, np.tile(expected_shape, (20, 1)))


def test_random_crop_default_ratio_range_holds_4_to_3_windows():
    # The default range is [3/4, 4/3] exactly: the whole 3 x 4 image is a window
    # (the reference gives it in 8% of the draws).
    _, shape = _windows([3, 4], 4000)
    assert np.sum(np.all(shape == [3, 4], axis=1)) > 100


def test_random_crop_attempts_whose_rounded_ratio_leaves_the_range_fail():
    # A quarter of 100 x 150 (3750 pixels): an attempt is the rounding of both sides
    # of a window of that area, taken only if its rounded ratio is in range; the
    # width is never adjusted to bring the ratio back (71 x 54 is no such rounding).
    _, shape = _windows([100, 150], 6000, random_area=[0.25])
    h, w = shape[:, 0].astype(np.float64), shape[:, 1].astype(np.float64)
    assert np.all(w / h >= np.float32(0.75)) and np.all(w / h <= 4 / 3)
    assert np.all((h - 0.5) * (w - 0.5) <= 3750 + 1e-3) and np.all((h + 0.5) * (w + 0.5) >= 3750 - 1e-3)


def test_random_crop_failed_attempts_fall_back_as_often_as_rounding_fails():
    # Ratio 2 exactly: an attempt fits only when round(sqrt(2 A)) is twice
    # round(sqrt(A / 2)) and fits 200 x 200; else, with one attempt, the window
    # falls back to 100 x 200 (which a fitting attempt may also be).
    _, shape = _windows([200, 200], 4000, num_attempts=1, random_aspect_ratio=[2.0])
    area = np.random.default_rng(3).uniform(0.08, 1.0, 1_000_000) * 40000
    w = np.floor(np.sqrt(area * 2) + 0.5)
    h = np.floor(np.sqrt(area / 2) + 0.5)
    fits = (w <= 200) & (w == 2 * h)
    p = np.mean(~fits | ((w == 200) & (h == 100)))
    count = np.sum(np.all(shape == [100, 200], axis=1))
    assert abs(count - p * 4000) < 5.3 * math.sqrt(p * (1 - p) * 4000), (count, p * 4000)


def test_random_crop_without_attempts_uses_the_fallback():
    _, shape = _windows([100, 200], 10, num_attempts=0)
    np.testing.assert_array_equal(shape, np.tile([100, 133], (10, 1)))


def test_random_crop_single_values_fix_area_and_ratio():
    _, shape = _windows([100, 100], 100, random_area=[0.36], random_aspect_ratio=[1])
    np.testing.assert_array_equal(shape, np.full((100, 2), 60))


def test_random_crop_input_forms():
    anchor, shape = ndd.random_crop_generator(np.uint8([50, 60, 3]), rng=rng())
    assert isinstance(anchor, ndd.Tensor) and anchor.shape == (2,) and shape.shape == (2,)
    assert np.all(np.asarray(anchor) + np.asarray(shape) <= [50, 60])
    anchor, shape = ndd.random_crop_generator(ndd.batch([np.int32([10, 20]), np.int32([30, 40])]), rng=rng())
    assert anchor.batch_size == 2 and shape.shape == [(2,), (2,)]
    assert np.all(np.stack(sample_arrays(anchor)) + np.stack(sample_arrays(shape)) <= [[10, 20], [30, 40]])


def test_random_crop_of_an_empty_image_is_empty():
    anchor, shape = ndd.random_crop_generator(np.int64([0, 200]), rng=rng())
    assert np.asarray(anchor).tolist() == [0, 0] and np.asarray(shape).tolist() == [0, 0]


def _windows_by_the_rules(generator, extents, area, ratio, attempts):
    """random_crop_generator's rules, in float32 numpy arrays, from the draws of
    ``generator`` in the operator's order: attempts (area fractions, then log ratios),
    then anchors."""
    f32 = np.float32
    count = extents.shape[0]
    height, width = extents[:, 0].astype(f32), extents[:, 1].astype(f32)
    area_lo, area_hi = f32(area[0]), f32(area[1])
    ratio_lo, ratio_hi = f32(ratio[0]), f32(ratio[1])
    image_area = height * width
    min_area = image_area * area_lo

    def whole(side):
        return np.maximum(np.minimum(np.trunc(side), f32(1 << 30)), 1)

    def round_half_up(x):
        return np.floor(x) + (x - np.floor(x) >= 0.5)

    max_w, max_h = whole(height * ratio_hi), whole(width * (f32(1) / ratio_lo))
    too_wide = height * max_w < min_area
    too_tall = ~too_wide & (width * max_h < min_area)
    empty = image_area == 0
    h = np.where(too_tall, np.minimum(max_h, height), height)
    w = np.where(too_wide, np.minimum(max_w, width), width)
    fallback = ~(too_wide | too_tall | empty)
    if attempts:
        area_draw, ratio_draw = generator.random((2, count, attempts), dtype=f32)
        target = (area_draw * (area_hi - area_lo) + area_lo) * image_area[:, None]
        log_lo, log_hi = np.log(ratio_lo), np.log(ratio_hi)
        drawn_ratio = np.exp(ratio_draw * (log_hi - log_lo) + log_lo)
        attempt_w = np.maximum(round_half_up(np.sqrt(target * drawn_ratio)), 1)
        attempt_h = np.maximum(round_half_up(np.sqrt(target / drawn_ratio)), 1)
        fits = (attempt_w <= width[:, None]) & (attempt_h <= height[:, None])
        fits &= (attempt_w / attempt_h >= ratio_lo) & (attempt_w / attempt_h <= ratio_hi)
        for i in np.flatnonzero(fallback & fits.any(axis=1)):
            first = np.argmax(fits[i])
            h[i], w[i] = attempt_h[i, first], attempt_w[i, first]
            fallback[i] = False
    for i in np.flatnonzero(fallback):
        fallback_h = max_h[i] if width[i] / height[i] < ratio_lo else height[i]
        fallback_w = max_w[i] if width[i] / height[i] > ratio_hi else width[i]
        shrink = np.sqrt(np.minimum(f32(1), area_hi * width[i] * height[i] / (fallback_h * fallback_w)))
        h[i], w[i] = (
            np.maximum(np.trunc(fallback_h * shrink), 1),
            np.maximum(np.trunc(fallback_w * shrink), 1),
        )
    h[empty], w[empty] = 0, 0
    free = np.where(empty[:, None], 0, np.stack([height - h, width - w], axis=1).astype(np.int64))
    anchor = np.minimum(np.floor(generator.random((count, 2)) * (free + 1)), free)
    return anchor.astype(np.int32), np.stack([h, w], axis=1).astype(np.int32)


@pytest.mark.parametrize("seed", range(40))
def test_random_crop_windows_follow_the_rules_draw_for_draw(seed):
    from ndd._ops.random_ops import _crop_windows

    rng_ = np.random.default_rng(seed)
    # Small images put windows on the image's edges and halves of pixels often.
    extents = rng_.integers(0, 12 if seed % 2 else 3000, (int(rng_.integers(1, 40)), 2))
    extents[rng_.random(len(extents)) < 0.1, rng_.integers(0, 2)] = rng_.integers(0, 4)
    area = sorted(rng_.choice([0.0, 0.08, 0.5, 1.0, 1.5, 1e30, rng_.uniform(0, 2)], 2))
    ratio = sorted(rng_.choice([0.75, 4 / 3, 1.0, 1e-30, 10.0, 1e30, rng_.uniform(0.01, 5)], 2))
    attempts = int(rng_.choice([0, 1, 10, 100]))
    args = {"_area": tuple(area), "_aspect_ratio": tuple(ratio), "num_attempts": attempts}
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        expected = _windows_by_the_rules(np.random.default_rng(seed), extents, area, ratio, attempts)
    anchor, shape = _crop_windows(np.random.default_rng(seed), extents, args)
    np.testing.assert_array_equal(shape, expected[1])
    np.testing.assert_array_equal(anchor, expected[0])


def test_random_crop_windows_feed_slice():
    image = np.arange(100 * 200, dtype=np.int32).reshape(100, 200)
    anchor, shape = ndd.random_crop_generator(np.int64(image.shape), rng=rng(51))
    y, x = np.asarray(anchor)
    h, w = np.asarray(shape)
    crop = ndd.slice(ndd.tensor(image, layout="HW"), anchor, shape, axis_names="HW")
    np.testing.assert_array_equal(crop, image[y : y + h, x : x + w])


@pytest.mark.parametrize(
    "shape_input, kwargs, error, match",
    [
        (np.float32([100, 200]), {}, TypeError, "the input must be an integer shape"),
        (
            np.int64([100]),
            {},
            ValueError,
            r"the input must be a 1-D shape of 2 or 3 values .*got a tensor of shape \(1,\)",
        ),
        (np.int64([[100, 200]]), {}, ValueError, "the input must be a 1-D shape of 2 or 3 values"),
        (
            np.int64([100, 200]),
            {"random_area": [0.9, 0.1]},
            ValueError,
            r"'random_area' \[lo, hi\] must have lo <= hi",
        ),
        (
            np.int64([100, 200]),
            {"random_area": [-0.1, 0.5]},
            ValueError,
            "'random_area' must be non-negative",
        ),
        (
            np.int64([100, 200]),
            {"random_area": [0.1, 0.2, 0.3]},
            ValueError,
            "'random_area' must be one or two",
        ),
        (
            np.int64([100, 200]),
            {"random_aspect_ratio": [2, 1]},
            ValueError,
            r"'random_aspect_ratio' \[lo, hi\] must have lo <= hi",
        ),
        (
            np.int64([100, 200]),
            {"random_aspect_ratio": [0, 1]},
            ValueError,
            "'random_aspect_ratio' must be positive",
        ),
        (np.int64([100, 200]), {"num_attempts": -1}, ValueError, "'num_attempts' must be non-negative"),
    ],
)
def test_random_crop_bad_arguments(shape_input, kwargs, error, match):
    with pytest.raises(error, match=f"ndd.random_crop_generator: {match}"):
        ndd.random_crop_generator(shape_input, rng=rng(), **kwargs)


def test_random_crop_negative_extent_fails_when_running():
    with ndd.EvalMode.deferred:
        shape = ndd.reshape(ndd.tensor(np.int64([-5, 200])), shape=[2])
        anchor, _ = ndd.random_crop_generator(shape, rng=rng())
    with pytest.raises(ValueError, match="ndd.random_crop_generator.*the input shape must not be negative"):
        anchor.evaluate()


def _first_fit_fallback_probability(attempts):
    """P(the window is 100 x 200) in a 200 x 200 image with ratio 2 after ``attempts``
    attempts: the first fitting attempt is 100 x 200, or none fits (see above)."""
    area = np.random.default_rng(3).uniform(0.08, 1.0, 1_000_000) * 40000
    w = np.floor(np.sqrt(area * 2) + 0.5)
    h = np.floor(np.sqrt(area / 2) + 0.5)
    fits = (w <= 200) & (w == 2 * h)
    other = np.mean(fits & ~((w == 200) & (h == 100)))
    missed = np.mean(~fits)
    return 1 - other * sum(missed**k for k in range(attempts))


@pytest.mark.parametrize("budget", [None, 7])
def test_random_crop_attempts_drawn_in_rounds_are_each_tried(monkeypatch, budget):
    # With a budget of 7 draws, 4000 samples draw one attempt per round: three rounds.
    from ndd._ops import random_ops

    if budget is not None:
        monkeypatch.setattr(random_ops, "_ATTEMPT_DRAWS", budget)
    anchor, shape = _windows([200, 200], 4000, num_attempts=3, random_aspect_ratio=[2.0])
    p = _first_fit_fallback_probability(3)
    count = np.sum(np.all(shape == [100, 200], axis=1))
    assert abs(count - p * 4000) < 5.3 * math.sqrt(p * (1 - p) * 4000), (count, p * 4000)
    assert np.all(anchor >= 0) and np.all(anchor + shape <= [200, 200])
    # The 100 x 200 windows are anchored anywhere in rows 0..100, at column 0.
    full_width = np.all(shape == [100, 200], axis=1)
    assert np.all(anchor[full_width, 1] == 0)
    assert anchor[full_width, 0].min() == 0 and anchor[full_width, 0].max() == 100


def test_random_crop_with_more_attempts_than_memory_holds():
    # 10**12 attempts per sample are never all drawn: each sample stops at its first fit.
    anchor, shape = _windows([100, 200], 8, num_attempts=10**12)
    assert np.all(shape >= 1) and np.all(anchor + shape <= [100, 200])
    area = shape[:, 0] * shape[:, 1] / 20000
    assert np.all(area >= 0.08 - 0.02) and np.all(area <= 1.0)


def test_random_resized_crop_with_more_attempts_than_memory_holds():
    image = np.arange(60 * 80 * 3, dtype=np.uint8).reshape(60, 80, 3)
    out = ndd.random_resized_crop(image, size=[16, 16], num_attempts=10**12, rng=rng(4))
    assert np.asarray(out).shape == (16, 16, 3)
