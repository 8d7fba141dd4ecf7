"""ndd.reductions: sum, mean, mean_square, rms, min, max, std_dev and variance.

Expected values come from numpy (computed in float64 or with exact integers) and
from the reference goldens. Where ndd deliberately differs from the reference the
test says so: ndd accumulates in a wide type, so it has none of the reference's
overflow or float32 rounding, it rejects a ``mean`` whose shape does not fit the
result (the reference reads past its end), and ``min``/``max`` of a slice holding
only infinities or only NaN give that value rather than the largest finite float.
"""

import inspect

import numpy as np
import pytest
from golden_cases import call, cases_for, golden_tests

import ndd

R = ndd.reductions
OPS = ["sum", "mean", "mean_square", "rms", "min", "max"]
SPREAD_OPS = ["std_dev", "variance"]
SUPPORTED = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32"]
UNSUPPORTED = ["bool", "float16", "float64"]
ALL_TYPES = UNSUPPORTED + SUPPORTED

# Output types accepted by the reference for each input type, the default first
# (probed for every pair of the 12 numeric types).
SUM_TYPES = {
    "int8": ["int64", "int8", "float32"],
    "int16": ["int64", "int16", "float32"],
    "int32": ["int64", "int32", "float32"],
    "int64": ["int64"],
    "uint8": ["uint64", "uint8", "float32"],
    "uint16": ["uint64", "uint16", "float32"],
    "uint32": ["uint64", "uint32", "float32"],
    "uint64": ["uint64"],
    "float32": ["float32"],
}
MEAN_TYPES = {t: ["float32"] if t == "float32" else ["float32", t] for t in SUPPORTED}
MEAN_SQUARE_TYPES = {
    t: ["float32"] if t == "float32" else ["float32", "int64" if t.startswith("int") else "uint64"]
    for t in SUPPORTED
}
OUTPUT_TYPES = {
    "sum": SUM_TYPES,
    "mean": MEAN_TYPES,
    "rms": MEAN_TYPES,
    "mean_square": MEAN_SQUARE_TYPES,
    "min": {t: [t] for t in SUPPORTED},
    "max": {t: [t] for t in SUPPORTED},
}

# (axes, axis_names) of a (2, 3, 4) "HWC" input, and the reduced axes they mean.
AXES_CASES = [
    ({}, (0, 1, 2)),
    ({"axes": 0}, (0,)),
    ({"axes": [1]}, (1,)),
    ({"axes": [-1]}, (2,)),
    ({"axes": [2, 0]}, (0, 2)),
    ({"axes": []}, ()),
    ({"axis_names": "HC"}, (0, 2)),
    ({"axis_names": "W"}, (1,)),
]
AXES_IDS = ["all", "int", "one", "negative", "unsorted", "none", "names_HC", "names_W"]


def _data(dtype, shape=(2, 3, 4), seed=0):
    """Random values spread over the type's range (limited for floats so that
    float32 sums stay finite)."""
    rng = np.random.default_rng(seed)
    if dtype == "float32":
        return rng.uniform(-100, 100, shape).astype(np.float32)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _expected(op, x, axes, keep_dims, out):
    """numpy's answer in float64 (or the integer accumulator), converted to ``out``."""
    if op in ("min", "max"):
        return getattr(np, op)(x, axis=axes, keepdims=keep_dims).astype(out)
    if op == "sum" and out.kind in "iu":
        wide = np.int64 if x.dtype.kind == "i" else np.uint64
        return np.sum(x.astype(wide), axis=axes, keepdims=keep_dims).astype(out)
    wide = x.astype(np.float64)
    values = {
        "sum": lambda: np.sum(wide, axis=axes, keepdims=keep_dims),
        "mean": lambda: np.mean(wide, axis=axes, keepdims=keep_dims),
        "mean_square": lambda: np.mean(wide * wide, axis=axes, keepdims=keep_dims),
        "rms": lambda: np.sqrt(np.mean(wide * wide, axis=axes, keepdims=keep_dims)),
    }[op]()
    return np.asarray(values).astype(out)


def _assert_values(actual, expected):
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(actual, expected, rtol=1e-6, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def _reduce(op, x, **kwargs):
    return getattr(R, op)(x, **kwargs)


# ----------------------------------------------------------------------------
# Values, types, shapes and layouts against numpy


@pytest.mark.parametrize("keep_dims", [False, True], ids=["drop", "keep"])
@pytest.mark.parametrize("axis_kwargs, axes", AXES_CASES, ids=AXES_IDS)
@pytest.mark.parametrize("dtype", SUPPORTED)
@pytest.mark.parametrize("op", OPS)
def test_reduction_matches_numpy(op, dtype, axis_kwargs, axes, keep_dims):
    x = _data(dtype)
    result = _reduce(op, ndd.tensor(x, layout="HWC"), keep_dims=keep_dims, **axis_kwargs)
    out = np.dtype(OUTPUT_TYPES[op][dtype][0])
    _assert_values(result, _expected(op, x, axes, keep_dims, out))
    kept = "HWC" if keep_dims else "".join(c for d, c in enumerate("HWC") if d not in axes)
    assert result.layout == (kept or None)
    assert result.dtype == ndd.dtype(out)


@pytest.mark.parametrize(
    "shape, axes", [((48, 64, 3), (0, 1)), ((6, 40, 30, 2), (0, 1, 2)), ((50, 90, 4), (0,))]
)
@pytest.mark.parametrize("dtype", ["uint8", "int32", "float32"])
@pytest.mark.parametrize("op", OPS)
def test_reduction_into_a_few_inner_elements_matches_numpy(op, dtype, shape, axes):
    # Per-channel statistics of images reduce one channel at a time (numpy's own
    # reduction over the outer axes was 7 to 20 times slower); the values do not change.
    x = _data(dtype, shape)
    result = _reduce(op, ndd.tensor(x), axes=list(axes))
    _assert_values(result, _expected(op, x, axes, False, np.dtype(OUTPUT_TYPES[op][dtype][0])))


@pytest.mark.parametrize("channels", [1, 3, 5, 64])
def test_per_channel_sum_and_mean_of_uint8_images_are_exact(channels):
    """Sums over all the axes but the channels (the compiled per-channel sums) are exact
    for uint8, and the mean is that sum divided once, rounded to float32."""
    x = np.random.default_rng(channels).integers(0, 256, (70, 61, channels)).astype(np.uint8)
    exact = x.reshape(-1, channels).sum(axis=0, dtype=np.int64)
    data = ndd.tensor(x, layout="HWC")
    np.testing.assert_array_equal(
        np.asarray(ndd.reductions.sum(data, axis_names="HW", dtype=ndd.float32)), exact
    )
    mean = np.asarray(ndd.reductions.mean(data, axis_names="WH"))
    np.testing.assert_array_equal(mean, (exact / (70 * 61)).astype(np.float32))
    # The integer outputs: the exact sum, in uint64 by default, wrapped around in uint8.
    total = ndd.reductions.sum(data, axis_names="HW")
    assert total.dtype == ndd.uint64
    np.testing.assert_array_equal(np.asarray(total), exact.astype(np.uint64))
    np.testing.assert_array_equal(
        np.asarray(ndd.reductions.sum(data, axis_names="HW", dtype=ndd.uint8)), (exact % 256).astype(np.uint8)
    )


@pytest.mark.parametrize("channels, axes", [(1, (0, 1, 2)), (3, (0, 1)), (3, (0, 1, 2)), (64, (0, 1))])
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
@pytest.mark.parametrize("op", SPREAD_OPS)
def test_spread_of_large_images_per_channel_and_whole_matches_float64(op, dtype, channels, axes):
    """The compiled pass of std_dev and variance (large uint8 or float32 data over all the axes, or all but
    the channels) computes in float64 as the general path does, with the given mean (here not the data's)."""
    rng = np.random.default_rng(channels)
    x = rng.uniform(0, 255, (70, 61, channels)).astype(dtype)
    x[3, 5, 0] = 0 if dtype == "uint8" else 1e6  # an outlier far from the mean
    mean = np.asarray(ndd.reductions.mean(ndd.tensor(x), axes=list(axes)))
    mean = (mean + np.float32(1.5)).astype(np.float32)
    for ddof in (0, 1):
        result = getattr(R, op)(ndd.tensor(x), ndd.tensor(mean), axes=list(axes), ddof=ddof)
        _assert_values(result, _spread_of_given_mean(op, x, mean, axes, ddof))
    # NaN in the data or the mean reaches only its channel.
    if dtype == "float32" and len(axes) == 2 and channels > 1:
        x[0, 0, 1] = np.nan
        result = np.asarray(R.variance(ndd.tensor(x), ndd.tensor(mean), axes=list(axes)))
        assert np.isnan(result[1]) and not np.isnan(np.delete(result, 1)).any()


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("channels", [1, 3, 5, 64])
def test_per_channel_min_and_max_skip_nan(dtype, channels):
    """The compiled per-channel extremes (all axes but the channels, uint8 and float32):
    exact, NaN skipped, NaN only for a channel that holds nothing else."""
    rng = np.random.default_rng(channels)
    x = rng.uniform(-50, 300, (70, 61, channels)).astype(dtype)
    if dtype == np.float32:
        x[3, 4, 0] = np.nan
        x[0, 0, channels - 1] = np.nan  # the first pixel, where the kernel's partial results start
        x[10, 20, channels // 2] = 1e6
        if channels > 1:
            x[..., 1] = np.nan
    data = ndd.tensor(x, layout="HWC")
    rows = x.reshape(-1, channels)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(
            np.asarray(ndd.reductions.max(data, axis_names="HW")), np.fmax.reduce(rows)
        )
        np.testing.assert_array_equal(np.asarray(ndd.reductions.min(data, axes=[1, 0])), np.fmin.reduce(rows))


@pytest.mark.parametrize("dtype", SUPPORTED)
@pytest.mark.parametrize("op", OPS)
def test_default_output_type(op, dtype):
    result = _reduce(op, ndd.tensor(_data(dtype, (2, 3))))
    assert result.dtype == ndd.dtype(OUTPUT_TYPES[op][dtype][0])
    assert np.asarray(result).dtype == np.dtype(OUTPUT_TYPES[op][dtype][0])


@pytest.mark.parametrize("requested", ALL_TYPES)
@pytest.mark.parametrize("dtype", SUPPORTED)
@pytest.mark.parametrize("op", ["sum", "mean", "mean_square", "rms"])
def test_dtype_argument_follows_the_reference_table(op, dtype, requested):
    x = ndd.tensor(_data(dtype, (2, 3)))
    if requested in OUTPUT_TYPES[op][dtype]:
        result = _reduce(op, x, dtype=getattr(ndd, requested))
        assert result.dtype == getattr(ndd, requested)
        assert np.asarray(result).dtype == np.dtype(requested)
    else:
        with pytest.raises(TypeError, match=rf"ndd\.reductions\.{op}: 'dtype' .* not supported for"):
            _reduce(op, x, dtype=getattr(ndd, requested))


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "uint16"])
def test_sum_to_float32_is_the_exact_total(dtype):
    x = _data(dtype, (5, 7))
    result = R.sum(ndd.tensor(x), axes=[1], dtype=ndd.float32)
    expected = np.sum(x.astype(np.int64), axis=1).astype(np.float32)
    _assert_values(result, expected)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint16", "uint32"])
def test_sum_in_the_input_type_wraps_around(dtype):
    x = _data(dtype, (4, 6), seed=3)
    result = R.sum(ndd.tensor(x), axes=[0], dtype=getattr(ndd, dtype))
    # numpy's own sum in a narrow type wraps the same way.
    _assert_values(result, np.sum(x, axis=0, dtype=dtype))


def test_sum_uint8_in_uint8_wraps_like_the_reference():
    result = R.sum(ndd.tensor(np.full(4, 200, np.uint8)), dtype=ndd.uint8)
    assert np.asarray(result) == 32


def test_sum_of_int32_does_not_overflow():
    x = np.full(4, 2**31 - 1, np.int32)
    assert np.asarray(R.sum(ndd.tensor(x))) == 4 * (2**31 - 1)


def test_sum_of_float32_accumulates_in_float64():
    # The reference accumulates in float32 and returns 0 here.
    x = np.float32([1e8, 1, -1e8])
    assert np.asarray(R.sum(ndd.tensor(x))) == 1.0


def test_sum_of_int32_to_float32_is_rounded_once():
    # The reference adds in float32 (16777216 + 1 == 16777216) and returns 16777216.
    x = np.int32([2**24 + 1, 1])
    assert np.asarray(R.sum(ndd.tensor(x), dtype=ndd.float32)) == np.float32(2**24 + 2)


@pytest.mark.parametrize(
    "values, dtype, expected",
    [
        ([1, 2], "int32", 1),
        ([-1, -2], "int32", -1),
        ([1, 2, 2], "uint8", 1),
        ([-1, -2, -2], "int32", -1),
        ([7, 7, 6], "int8", 6),
        ([-7, -7, -6], "int8", -6),
    ],
)
def test_integer_mean_rounds_toward_zero(values, dtype, expected):
    result = R.mean(ndd.tensor(np.array(values, dtype)), dtype=getattr(ndd, dtype))
    assert result.dtype == getattr(ndd, dtype)
    assert np.asarray(result) == expected


@pytest.mark.parametrize(
    "values, dtype",
    [
        ([2**31 - 1, 2**31 - 1], "int32"),
        ([200, 200, 200], "uint8"),
        ([100, 100, 100], "int8"),
        ([2**62, 2**62, 3], "int64"),
        ([2**64 - 1, 2**64 - 1], "uint64"),
    ],
)
def test_integer_mean_does_not_overflow(values, dtype):
    # The reference sums in the output type and returns -1, 29, 14, a negative value and 2**63.
    x = np.array(values, dtype)
    expected = sum(int(v) for v in values) // len(values)
    assert int(np.asarray(R.mean(ndd.tensor(x), dtype=getattr(ndd, dtype)))) == expected


def test_float_mean_of_int64_is_correctly_rounded():
    x = np.int64([2**62, 2**62, 3])
    assert np.asarray(R.mean(ndd.tensor(x))) == np.float32((2**63 + 3) / 3)


@pytest.mark.parametrize(
    "values, dtype, requested, expected",
    [
        ([1, 2], "int32", "int64", 2),
        ([1, 2, 2], "int32", "int64", 3),
        ([-1, -2], "int8", "int64", 2),
        ([255, 255, 1], "uint8", "uint64", 43350),
        ([2**31 - 1, 2**31 - 1], "int32", "int64", (2**31 - 1) ** 2),
        ([2**40, 2**40], "int64", "int64", 2**63 - 1),
        ([2**63, 2**63], "uint64", "uint64", 2**64 - 1),
    ],
)
def test_integer_mean_square_is_exact_then_saturated(values, dtype, requested, expected):
    # The reference squares in the output type: 2**80 wraps to 0 there.
    x = np.array(values, dtype)
    result = R.mean_square(ndd.tensor(x), dtype=getattr(ndd, requested))
    assert result.dtype == getattr(ndd, requested)
    assert int(np.asarray(result)) == expected


def test_float_mean_square_of_large_int64_does_not_wrap():
    x = np.int64([2**40, 2**40])
    assert np.asarray(R.mean_square(ndd.tensor(x))) == np.float32(2.0**80)


@pytest.mark.parametrize(
    "values, dtype, expected",
    [
        ([0, 0, 0, 7], "int32", 3),
        ([0] * 9 + [9], "int32", 2),
        ([1, 2], "int32", 1),
        ([100, 100], "int8", 100),
        ([-128, -128], "int8", 127),
        ([255, 255], "uint8", 255),
        ([2**63 - 1, -(2**63)], "int64", 2**63 - 1),
        ([2**64 - 1, 2**64 - 1], "uint64", 2**64 - 1),
    ],
)
def test_integer_rms_is_the_floor_of_the_exact_root(values, dtype, expected):
    # The reference squares in the output type (int8: 100 * 100 wraps, rms 4).
    # 128 does not fit in int8 and saturates.
    result = R.rms(ndd.tensor(np.array(values, dtype)), dtype=getattr(ndd, dtype))
    assert int(np.asarray(result)) == expected


def test_float_rms_does_not_overflow_float32():
    # The reference squares in float32 and returns inf.
    x = np.float32([1e20, 1e20])
    np.testing.assert_allclose(np.asarray(R.rms(ndd.tensor(x))), np.float32(1e20), rtol=1e-6)


def test_mean_square_beyond_float32_is_inf():
    x = np.float32([1e20, 1e20])
    assert np.asarray(R.mean_square(ndd.tensor(x))) == np.inf


# ----------------------------------------------------------------------------
# Empty reductions, NaN and infinities


def test_empty_reductions_sum_mean_rms():
    x = ndd.tensor(np.zeros((0, 3), np.float32))
    _assert_values(R.sum(x, axes=[0]), np.zeros(3, np.float32))
    _assert_values(R.mean(x, axes=[0]), np.full(3, np.nan, np.float32))
    _assert_values(R.mean_square(x), np.float32(np.nan))
    _assert_values(R.rms(x, axes=[0], keep_dims=True), np.full((1, 3), np.nan, np.float32))


@pytest.mark.parametrize("dtype", SUPPORTED)
def test_empty_min_and_max_give_the_type_limits(dtype):
    x = ndd.tensor(np.zeros((0, 2), dtype))
    info = np.finfo(dtype) if dtype == "float32" else np.iinfo(dtype)
    _assert_values(R.min(x, axes=[0]), np.full(2, info.max, dtype))
    _assert_values(R.max(x, axes=[0]), np.full(2, info.min, dtype))


@pytest.mark.parametrize("op", ["mean", "rms"])
@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64", "uint64"])
def test_empty_integer_mean_and_rms_are_zero(op, dtype):
    # The reference converts 0/0 and gives the type's minimum or 2**63.
    x = ndd.tensor(np.zeros(0, dtype))
    _assert_values(_reduce(op, x, dtype=getattr(ndd, dtype)), np.zeros((), dtype))


def test_reduction_over_an_empty_output_is_empty():
    x = ndd.tensor(np.zeros((0, 3), np.int32))
    for op in OPS:
        assert _reduce(op, x, axes=[1]).shape == (0,)
        assert np.asarray(_reduce(op, x, axes=[1])).shape == (0,)


@pytest.mark.parametrize(
    "values, expected_min, expected_max",
    [
        ([1, np.nan, 0], 0, 1),
        ([np.nan, 1, 0], 0, 1),
        ([1, 0, np.nan], 0, 1),
        ([np.nan, np.nan], np.nan, np.nan),
        ([-np.inf, 1], -np.inf, 1),
        ([np.inf], np.inf, np.inf),
        ([-np.inf], -np.inf, -np.inf),
    ],
)
def test_min_and_max_skip_nan(values, expected_min, expected_max):
    # The reference skips NaN too, but starts from the largest finite float32, so
    # an all-NaN or all-infinite slice gives +-3.4e38 there.
    x = ndd.tensor(np.float32(values))
    _assert_values(R.min(x), np.float32(expected_min))
    _assert_values(R.max(x), np.float32(expected_max))


def test_sum_propagates_nan():
    assert np.isnan(np.asarray(R.sum(ndd.tensor(np.float32([1, np.nan])))))


# ----------------------------------------------------------------------------
# Shapes, layouts and special inputs


@pytest.mark.parametrize("op", OPS)
def test_zero_dimensional_input(op):
    x = ndd.tensor(np.int32(5))
    for kwargs in ({}, {"axes": []}, {"keep_dims": True}):
        result = _reduce(op, x, **kwargs)
        assert result.shape == ()
        assert np.asarray(result).shape == ()
        assert float(np.asarray(result)) == {"mean_square": 25.0}.get(op, 5.0)


@pytest.mark.parametrize("op", OPS)
def test_keep_dims_keeps_layout_and_extent_one_axes(op):
    x = ndd.tensor(_data("int32"), layout="HWC")
    result = _reduce(op, x, axes=[0, 2], keep_dims=True)
    assert result.shape == (1, 3, 1)
    assert result.layout == "HWC"
    assert np.asarray(result).shape == (1, 3, 1)


def test_input_without_layout_gives_result_without_layout():
    x = ndd.tensor(_data("float32"))
    assert R.mean(x, axes=[1]).layout is None
    assert R.mean(x, axes=[1], keep_dims=True).layout is None


def test_axis_names_order_does_not_matter():
    x = ndd.tensor(_data("int16"), layout="HWC")
    _assert_values(R.sum(x, axis_names="CH"), np.asarray(R.sum(x, axis_names="HC")))
    assert R.sum(x, axis_names="CH").layout == "W"


def test_empty_axis_names_reduce_nothing():
    x = _data("uint8")
    result = R.max(ndd.tensor(x, layout="HWC"), axis_names="")
    _assert_values(result, x)
    assert result.layout == "HWC"


def test_shape_is_known_before_the_run():
    x = ndd.tensor(_data("float32"), layout="HWC")
    with ndd.EvalMode.deferred:
        result = R.rms(x, axis_names="W", keep_dims=True)
        assert result.shape == (2, 1, 4)
        assert result.dtype == ndd.float32
        assert result.layout == "HWC"
    _assert_values(result, _expected("rms", _data("float32"), (1,), True, np.dtype(np.float32)))


def test_none_means_the_default():
    x = ndd.tensor(_data("int32"), layout="HWC")
    result = R.sum(x, axes=None, axis_names=None, dtype=None, keep_dims=None)
    _assert_values(result, np.asarray(R.sum(x)))
    assert result.dtype == ndd.int64


@pytest.mark.parametrize("op", OPS + SPREAD_OPS)
def test_signature_shows_real_defaults(op):
    params = inspect.signature(getattr(R, op)).parameters
    assert params["axes"].default is None
    assert params["axis_names"].default is None
    assert params["keep_dims"].default is False
    if op in SPREAD_OPS:
        assert params["ddof"].default == 0
        assert "dtype" not in params


# ----------------------------------------------------------------------------
# Batch mode


@pytest.mark.parametrize("dtype", ["uint8", "int32", "float32"])
@pytest.mark.parametrize("op", OPS)
def test_batch_reduces_each_ragged_sample(op, dtype):
    samples = [_data(dtype, (2, 3), seed=1), _data(dtype, (4, 3), seed=2), _data(dtype, (1, 3), seed=3)]
    batch = ndd.batch(samples, layout="HW")
    result = _reduce(op, batch, axis_names="H")
    out = np.dtype(OUTPUT_TYPES[op][dtype][0])
    assert isinstance(result, ndd.Batch)
    assert result.batch_size == 3
    assert result.layout == "W"
    assert result.shape == [(3,), (3,), (3,)]
    for sample, x in zip(result, samples, strict=True):
        _assert_values(sample, _expected(op, x, (0,), False, out))


def test_batch_full_reduction_gives_one_scalar_per_sample():
    samples = [np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(12, dtype=np.int32).reshape(4, 3)]
    result = R.sum(ndd.batch(samples, layout="HW"))
    assert result.shape == [(), ()]
    assert result.layout is None
    assert [int(np.asarray(s)) for s in result] == [15, 66]


def test_batch_size_broadcasts_a_tensor():
    result = R.max(ndd.tensor(np.int32([3, 9, 1])), batch_size=2)
    assert isinstance(result, ndd.Batch)
    assert [int(np.asarray(s)) for s in result] == [9, 9]


def test_axes_cannot_vary_per_sample():
    batch = ndd.batch([np.zeros((2, 3), np.float32)] * 2)
    with pytest.raises(ValueError, match=r"ndd\.reductions\.sum: 'axes' must be the same for all samples"):
        R.sum(batch, axes=ndd.batch([np.int32([0]), np.int32([1])]))


def test_axis_out_of_range_in_one_sample_of_a_batch():
    batch = ndd.batch([np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32)])
    with pytest.raises(IndexError, match=r"ndd\.reductions\.min: 'axes' value 2 is out of range"):
        R.min(batch, axes=[2])


# ----------------------------------------------------------------------------
# std_dev and variance


def _numpy_spread(op, x, axes, ddof, keep_dims):
    fn = np.std if op == "std_dev" else np.var
    return fn(x.astype(np.float64), axis=axes, ddof=ddof, keepdims=keep_dims).astype(np.float32)


def _spread_of_given_mean(op, x, mean, axes, ddof):
    """The definition with a given mean: sum((x - mean)**2) / (N - ddof), in float64;
    0 over no axes (the reference's rule)."""
    if not axes:
        return np.zeros(x.shape, np.float32)
    kept = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
    deviation = x.astype(np.float64) - np.asarray(mean).astype(np.float64).reshape(kept)
    n = np.prod([x.shape[d] for d in axes])
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = np.sum(deviation**2, axis=axes) / (n - ddof)
        return (np.sqrt(variance) if op == "std_dev" else variance).astype(np.float32)


@pytest.mark.parametrize("ddof", [0, 1, 2])
@pytest.mark.parametrize("axis_kwargs, axes", AXES_CASES, ids=AXES_IDS)
@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "uint64", "float32"])
@pytest.mark.parametrize("op", SPREAD_OPS)
def test_spread_matches_numpy(op, dtype, axis_kwargs, axes, ddof):
    x = _data(dtype)
    data = ndd.tensor(x, layout="HWC")
    mean = R.mean(data, **axis_kwargs)
    result = getattr(R, op)(data, mean, ddof=ddof, **axis_kwargs)
    assert result.dtype == ndd.float32
    assert result.layout == ("".join(c for d, c in enumerate("HWC") if d not in axes) or None)
    _assert_values(result, _spread_of_given_mean(op, x, mean, axes, ddof))


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("op", SPREAD_OPS)
def test_spread_with_the_mean_from_reductions_mean_is_numpys(op, ddof):
    x = _data("float32", (6, 5, 4))
    data = ndd.tensor(x)
    result = getattr(R, op)(data, R.mean(data, axes=[0, 1]), axes=[0, 1], ddof=ddof)
    _assert_values(result, _numpy_spread(op, x, (0, 1), ddof, False))


@pytest.mark.parametrize("op", SPREAD_OPS)
def test_spread_keep_dims(op):
    x = _data("float32")
    data = ndd.tensor(x, layout="HWC")
    mean = R.mean(data, axes=[0, 2], keep_dims=True)
    result = getattr(R, op)(data, mean, axes=[0, 2], keep_dims=True)
    assert result.layout == "HWC"
    _assert_values(result, _numpy_spread(op, x, (0, 2), 0, True))


@pytest.mark.parametrize("mean_shape", [(3,), (1, 3, 1), (3, 1), (1, 3)])
def test_mean_may_have_the_reduced_or_keep_dims_shape(mean_shape):
    x = _data("float32")
    mean = x.astype(np.float64).mean(axis=(0, 2)).astype(np.float32).reshape(mean_shape)
    result = R.variance(ndd.tensor(x, layout="HWC"), ndd.tensor(mean), axes=[0, 2])
    _assert_values(result, _numpy_spread("variance", x, (0, 2), 0, False))


@pytest.mark.parametrize("mean_shape", [(), (1,), (1, 1, 1)])
def test_scalar_mean_for_a_full_reduction(mean_shape):
    x = _data("int32")
    mean = np.full(mean_shape, x.astype(np.float64).mean(), np.float32)
    result = R.std_dev(ndd.tensor(x), ndd.tensor(mean))
    _assert_values(result, _numpy_spread("std_dev", x, None, 0, False))


def test_spread_uses_the_given_mean():
    x = np.float32([1, 2, 3, 4])
    result = R.variance(ndd.tensor(x), ndd.tensor(np.float32(0)))
    _assert_values(result, np.float32(np.mean(x.astype(np.float64) ** 2)))


@pytest.mark.parametrize(
    "ddof, variance, std_dev", [(4, np.inf, np.inf), (5, -30.0, np.nan), (-1, 6.0, np.sqrt(6.0))]
)
def test_spread_divides_by_n_minus_ddof(ddof, variance, std_dev):
    # As the reference: N - ddof is not clamped (numpy would give inf for any ddof >= N).
    data, mean = ndd.tensor(np.float32([1, 2, 3, 4])), ndd.tensor(np.float32(0))
    _assert_values(R.variance(data, mean, ddof=ddof), np.float32(variance))
    _assert_values(R.std_dev(data, mean, ddof=ddof), np.float32(std_dev))


@pytest.mark.parametrize("ddof", [-1, 0, 1, 2])
@pytest.mark.parametrize("op", ["variance", "std_dev"])
def test_spread_over_no_axes_is_zero_whatever_the_mean(op, ddof):
    # As the reference: nothing reduced is no spread, even from a mean that is not the data's.
    x = np.array([[1, 2, 4], [8, 16, 32]], np.uint8)
    mean = ndd.tensor(np.float32([[0, -1, 7], [3, 3, 3]]))
    for kwargs in (dict(axes=[]), dict(axis_names="")):
        result = getattr(R, op)(ndd.tensor(x, layout="HW"), mean, ddof=ddof, **kwargs)
        _assert_values(result, np.zeros((2, 3), np.float32))
    # A 0-D input has no axes either, but reducing "all" of them is the formula: 0 / (1 - ddof).
    scalar = getattr(R, op)(ndd.tensor(np.float32(3)), ndd.tensor(np.float32(3)), ddof=ddof)
    with np.errstate(invalid="ignore", divide="ignore"):
        _assert_values(scalar, np.float32(np.float64(0) / (1 - ddof)))


def test_spread_of_uint64_is_computed_in_float64():
    # The reference subtracts in float32 and returns 0 here.
    x = np.uint64([2**63, 2**63 + 2048])
    result = R.std_dev(ndd.tensor(x), ndd.tensor(np.float32(2**63)))
    _assert_values(result, np.float32(2048 / np.sqrt(2)))


def test_spread_of_empty_data_is_nan():
    x = ndd.tensor(np.zeros(0, np.float32))
    assert np.isnan(np.asarray(R.variance(x, ndd.tensor(np.float32(0)))))
    assert np.isnan(np.asarray(R.std_dev(x, ndd.tensor(np.float32(0)))))


def test_spread_batch_with_per_sample_means():
    samples = [np.float32([1, 2, 3]), np.float32([4, 6])]
    means = [np.float32(2), np.float32(5)]
    result = R.variance(ndd.batch(samples), ndd.batch(means))
    assert result.shape == [(), ()]
    np.testing.assert_allclose([float(np.asarray(s)) for s in result], [2 / 3, 1.0], rtol=1e-6)


def test_spread_batch_data_with_one_tensor_mean():
    samples = [np.float32([1, 2, 3]), np.float32([4, 6])]
    result = R.variance(ndd.batch(samples), ndd.tensor(np.float32(2)))
    np.testing.assert_allclose([float(np.asarray(s)) for s in result], [2 / 3, 10.0], rtol=1e-6)


def test_spread_tensor_data_with_a_batch_of_means():
    result = R.std_dev(ndd.tensor(np.float32([1, 3])), ndd.batch([np.float32(2), np.float32(0)]))
    np.testing.assert_allclose([float(np.asarray(s)) for s in result], [1.0, np.sqrt(5)], rtol=1e-6)


def test_spread_of_ragged_batch_with_ragged_means():
    samples = [_data("uint8", (2, 3), seed=5), _data("uint8", (5, 3), seed=6)]
    batch = ndd.batch(samples, layout="HW")
    mean = R.mean(batch, axis_names="H")
    result = R.std_dev(batch, mean, axis_names="H", ddof=1)
    assert result.layout == "W"
    for sample, x in zip(result, samples, strict=True):
        _assert_values(sample, _numpy_spread("std_dev", x, (0,), 1, False))


# ----------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("dtype", UNSUPPORTED)
@pytest.mark.parametrize("op", OPS)
def test_unsupported_input_type(op, dtype):
    x = ndd.tensor(np.zeros((2, 3), dtype))
    with pytest.raises(TypeError, match=rf"ndd\.reductions\.{op}: input of type .* is not supported"):
        _reduce(op, x)


@pytest.mark.parametrize("dtype", UNSUPPORTED)
@pytest.mark.parametrize("op", SPREAD_OPS)
def test_spread_unsupported_data_type(op, dtype):
    x = ndd.tensor(np.zeros((2, 3), dtype))
    with pytest.raises(TypeError, match=rf"ndd\.reductions\.{op}: input 'data' of type .* is not supported"):
        getattr(R, op)(x, ndd.tensor(np.float32(0)))


@pytest.mark.parametrize("mean_dtype", ["float64", "float16", "int32"])
@pytest.mark.parametrize("op", SPREAD_OPS)
def test_spread_mean_must_be_float32(op, mean_dtype):
    x = ndd.tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match=rf"ndd\.reductions\.{op}: input 'mean' must be f32"):
        getattr(R, op)(x, ndd.tensor(np.zeros((), mean_dtype)))


@pytest.mark.parametrize("mean_shape", [(2,), (4, 3), (12,), (2, 3, 4), ()])
@pytest.mark.parametrize("op", SPREAD_OPS)
def test_spread_mean_of_the_wrong_shape(op, mean_shape):
    # The reference reads the mean as a flat buffer and runs past its end when it is too small.
    x = ndd.tensor(np.zeros((2, 3, 4), np.float32))
    mean = ndd.tensor(np.zeros(mean_shape, np.float32))
    with pytest.raises(ValueError, match=rf"ndd\.reductions\.{op}: input 'mean' must have shape \(3, 4\)"):
        getattr(R, op)(x, mean, axes=[0])


@pytest.mark.parametrize("axes", [[3], [-4], 3, [0, 5]])
@pytest.mark.parametrize("op", OPS)
def test_axis_out_of_range(op, axes):
    x = ndd.tensor(np.zeros((2, 3, 4), np.int32))
    with pytest.raises(IndexError, match=rf"ndd\.reductions\.{op}: 'axes' value -?\d is out of range"):
        _reduce(op, x, axes=axes)


@pytest.mark.parametrize("op", OPS)
def test_axis_of_a_zero_dimensional_input(op):
    with pytest.raises(IndexError, match=rf"ndd\.reductions\.{op}: 'axes' value 0 is out of range"):
        _reduce(op, ndd.tensor(np.int32(1)), axes=[0])


@pytest.mark.parametrize("axes", [[0, 0], [0, -3]])
def test_duplicate_axes(axes):
    x = ndd.tensor(np.zeros((2, 3, 4), np.int32))
    with pytest.raises(ValueError, match=r"ndd\.reductions\.sum: 'axes' names axis 0 more than once"):
        R.sum(x, axes=axes)


def test_duplicate_axis_names():
    x = ndd.tensor(np.zeros((2, 3, 4), np.int32), layout="HWC")
    with pytest.raises(ValueError, match=r"ndd\.reductions\.mean: 'axis_names' has 'H' more than once"):
        R.mean(x, axis_names="HH")


@pytest.mark.parametrize("op", OPS)
def test_unknown_axis_name(op):
    x = ndd.tensor(np.zeros((2, 3, 4), np.int32), layout="HWC")
    with pytest.raises(ValueError, match=rf"ndd\.reductions\.{op}: 'axis_names' has 'Q', which is not in"):
        _reduce(op, x, axis_names="Q")


def test_axis_names_need_a_layout():
    x = ndd.tensor(np.zeros((2, 3), np.int32))
    with pytest.raises(
        ValueError, match=r"ndd\.reductions\.rms: 'axis_names' has 'H', but the input has no layout"
    ):
        R.rms(x, axis_names="H")


@pytest.mark.parametrize("op", OPS + SPREAD_OPS)
def test_axes_and_axis_names_are_exclusive(op):
    x = ndd.tensor(np.zeros((2, 3), np.float32), layout="HW")
    inputs = (x, ndd.tensor(np.zeros(3, np.float32))) if op in SPREAD_OPS else (x,)
    with pytest.raises(
        ValueError, match=rf"ndd\.reductions\.{op}: 'axes' and 'axis_names' are mutually exclusive"
    ):
        getattr(R, op)(*inputs, axes=[0], axis_names="H")


def test_axes_must_be_integers():
    x = ndd.tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"ndd\.reductions\.sum: 'axes' must be"):
        R.sum(x, axes=[0.5])


def test_unknown_dtype_name():
    x = ndd.tensor(np.zeros((2, 3), np.int32))
    with pytest.raises(ValueError, match=r"ndd\.reductions\.sum: 'dtype' must be a DType"):
        R.sum(x, dtype="foo")


@pytest.mark.parametrize("op", ["min", "max", "std_dev", "variance"])
def test_no_dtype_argument(op):
    x = ndd.tensor(np.zeros((2, 3), np.float32))
    inputs = (x, ndd.tensor(np.float32(0))) if op in SPREAD_OPS else (x,)
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtype'"):
        getattr(R, op)(*inputs, dtype=ndd.float32)


# ----------------------------------------------------------------------------
# The reference goldens

# Golden cases where ndd raises instead of reproducing the reference's result: the
# mean has 2 elements for 3 results and the reference reads past its end.
WRONG_MEAN_SHAPE = {"reductions.std_dev_014", "reductions.variance_014"}

# ndd raises TypeError for unsupported types and ValueError for bad axis names,
# where the reference raises RuntimeError.
ERROR_TYPES = {
    "RuntimeError": (TypeError, ValueError),
    "IndexError": (IndexError,),
    "TypeError": (TypeError,),
    "ValueError": (ValueError,),
}


def _assert_golden_value(result, spec):
    assert result.dtype == ndd.dtype(spec["dtype"])
    assert result.layout == spec["layout"]
    if spec["kind"] == "batch":
        assert isinstance(result, ndd.Batch)
        assert [tuple(s) for s in result.shape] == [tuple(s) for s in spec["shapes"]]
        pairs = zip(result, spec["values"], strict=True)
    else:
        assert isinstance(result, ndd.Tensor)
        assert tuple(result.shape) == tuple(spec["shape"])
        pairs = [(result, spec["value"])]
    for sample, expected in pairs:
        _assert_values(sample, np.asarray(expected))


def _check_wrong_mean_shape(case):
    with pytest.raises(ValueError, match="input 'mean' must have shape"):
        call(case)


GOLDEN_OPS = [f"reductions.{op}" for op in OPS + SPREAD_OPS]
test_golden, _ = golden_tests(
    *GOLDEN_OPS,
    checks=dict.fromkeys(WRONG_MEAN_SHAPE, _check_wrong_mean_shape),
    errors=ERROR_TYPES,
    errors_at_call=True,
    compare=_assert_golden_value,
)


def test_golden_cases_cover_every_operator():
    assert all(cases_for(op) for op in GOLDEN_OPS)
