"""cast, cast_like, copy, reshape, reinterpret, transpose, squeeze and expand_dims:
values against numpy, layouts, batches and per-sample arguments, errors, and the
reference goldens of tests/golden."""

import numpy as np
import pytest
from arrays import FLOAT_TYPES, INT_TYPES, sample_arrays
from golden_cases import VALUE_ARRAYS, VALUE_CASES, golden_tests

import ndd

SOME_TYPES = [np.uint8, np.int16, np.int64, np.float32, np.float64, np.bool_]


def ndd_type(np_type):
    return ndd.dtype(np.dtype(np_type))


def arange(shape, np_type=np.int32):
    return (np.arange(int(np.prod(shape))) % 7).astype(np_type).reshape(shape)


# -- reference goldens ----------------------------------------------------------

OPS = ["cast", "cast_like", "copy", "reshape", "reinterpret", "transpose", "squeeze", "expand_dims"]
_SRC_DIMS_NDIM = (
    "the reference rejects src_dims that change the number of dimensions (its dimensionality check "
    "disagrees with the operator); ndd reshapes (test_reshape_src_dims)"
)
_LIST_FROM_VARIABLE = (
    "the reference drops a per-sample list argument held in a variable (or given as a Tensor) "
    "and reports it missing; ndd uses it"
)
_NAN_TO_INT = "NaN to a 32/64-bit integer is INT_MIN there, 0 here (test_cast_nan_gives_zero)"
# Golden cases recording a reference bug that ndd does not copy; the correct
# behaviour is asserted by the named tests.
REFERENCE_BUGS = {
    "cast_003": _NAN_TO_INT,
    "cast_033": _NAN_TO_INT,
    "cast_013": "the reference rejects dtype names; ndd accepts them (test_cast_accepts_dtype_spellings)",
    "cast_014": "the reference rejects numpy types as dtype; ndd accepts them (test_cast_accepts_dtype_spellings)",
    "cast_018": "the reference ignores a batch_size contradicting the Batch input; ndd raises "
    "(test_cast_batch_size_must_agree)",
    "reshape_016": _SRC_DIMS_NDIM,
    "reshape_018": _SRC_DIMS_NDIM,
    "reshape_043": _LIST_FROM_VARIABLE,
    "transpose_016": "the reference fails on a Tensor for a plain argument; ndd uses its value",
    "squeeze_003": "the reference silently ignores negative axes; ndd counts them from the end (test_squeeze)",
    "squeeze_019": "the reference silently ignores negative axes; ndd counts them from the end (test_squeeze)",
    "squeeze_009": "the reference silently ignores out-of-range axes; ndd raises "
    "(test_squeeze_errors_at_the_call_site)",
    "reshape_044": _LIST_FROM_VARIABLE,
    "squeeze_016": _LIST_FROM_VARIABLE,
    "squeeze_017": _LIST_FROM_VARIABLE,
    "squeeze_018": _LIST_FROM_VARIABLE,
}
# The reference raises RuntimeError for most bad calls (or crashed, for
# reinterpret_015); ndd raises ValueError, TypeError or IndexError.
test_matches_reference_golden, test_every_skipped_golden_case_exists = golden_tests(
    *OPS, deviations=REFERENCE_BUGS, errors=(ValueError, TypeError, IndexError, RuntimeError)
)


@pytest.mark.parametrize(
    "name", [name for name, rec in VALUE_CASES.items() if name.startswith("cast_") and "out" in rec]
)
def test_cast_matches_reference_values(name):
    source = VALUE_ARRAYS[f"{name}.in0"]
    expected = VALUE_ARRAYS[f"{name}.out"].copy()
    if expected.dtype.kind in "iu" and source.dtype.kind == "f":
        # By design NaN gives 0 for every integer type (the reference: INT_MIN, 2**63 ...).
        expected[np.isnan(source)] = 0
    out = ndd.cast(ndd.tensor(source), dtype=ndd_type(expected.dtype))
    np.testing.assert_array_equal(np.asarray(out), expected, strict=True)


# -- cast -------------------------------------------------------------------------


@pytest.mark.parametrize("src", FLOAT_TYPES)
@pytest.mark.parametrize("dst", INT_TYPES)
def test_cast_rounds_half_away_from_zero(src, dst):
    x = np.array([-2.5, -1.5, -0.5, -0.25, 0.25, 0.5, 1.5, 2.5, 3.75], src)
    expected = [-3, -2, -1, 0, 0, 1, 2, 3, 4]
    if np.dtype(dst).kind == "u":
        expected = [max(v, 0) for v in expected]
    out = ndd.cast(ndd.tensor(x), dtype=ndd_type(dst))
    np.testing.assert_array_equal(np.asarray(out), np.array(expected, dst), strict=True)


@pytest.mark.parametrize(
    "src, dst, value, expected",
    [
        # Adding 0.5 and truncating would round these wrongly.
        (np.float32, np.int32, 8388609.0, 8388609),
        (np.float32, np.int32, 0.49999997, 0),
        (np.float64, np.int64, 0.49999999999999994, 0),
        (np.float64, np.int64, 4503599627370497.0, 4503599627370497),
        (np.float64, np.uint32, 4294967295.5, 4294967295),
        (np.float64, np.uint64, 1.8e19, 18000000000000000000),
    ],
)
def test_cast_rounding_is_exact_near_precision_limits(src, dst, value, expected):
    out = ndd.cast(ndd.tensor(np.array([value], src)), dtype=ndd_type(dst))
    assert np.asarray(out).tolist() == [expected]


@pytest.mark.parametrize("src", FLOAT_TYPES)
@pytest.mark.parametrize("dst", INT_TYPES)
def test_cast_saturates_floats(src, dst):
    info = np.iinfo(dst)
    with np.errstate(over="ignore"):
        x = np.array([np.inf, -np.inf, 1e30, -1e30, 65504.0, -65504.0], src)
    expected = [info.max, info.min, info.max, info.min, min(65504, info.max), max(-65504, info.min)]
    out = ndd.cast(ndd.tensor(x), dtype=ndd_type(dst))
    assert np.asarray(out).tolist() == expected


@pytest.mark.parametrize("src", FLOAT_TYPES)
@pytest.mark.parametrize("dst", INT_TYPES)
def test_cast_nan_gives_zero(src, dst):
    # A deliberate difference: the reference gives INT_MIN for int32/int64 and 2**63 for uint64.
    out = ndd.cast(ndd.tensor(np.array([np.nan, 1.0, -np.nan], src)), dtype=ndd_type(dst))
    assert np.asarray(out).tolist() == [0, 1, 0]


@pytest.mark.parametrize("src", INT_TYPES)
@pytest.mark.parametrize("dst", INT_TYPES)
def test_cast_integers_saturate(src, dst):
    src_info, dst_info = np.iinfo(src), np.iinfo(dst)
    python_values = [src_info.min, src_info.min + 1, -1, 0, 1, 127, 128, 255, 256, 70000, src_info.max]
    python_values = [v for v in python_values if src_info.min <= v <= src_info.max]
    expected = [min(max(v, dst_info.min), dst_info.max) for v in python_values]
    out = ndd.cast(ndd.tensor(np.array(python_values, src)), dtype=ndd_type(dst))
    assert np.asarray(out).dtype == np.dtype(dst)
    assert np.asarray(out).tolist() == expected


@pytest.mark.parametrize("src", FLOAT_TYPES)
def test_cast_float_to_bool_rounds_first(src):
    # As the reference: True where the value rounds to a nonzero integer, and for NaN.
    x = np.array([0.0, -0.0, 0.3, -0.49, 0.5, -0.5, 2.0, np.nan, np.inf], src)
    out = ndd.cast(ndd.tensor(x), dtype=ndd.bool)
    assert np.asarray(out).tolist() == [False, False, False, False, True, True, True, True, True]


@pytest.mark.parametrize("src", INT_TYPES)
def test_cast_integer_to_bool_is_nonzero(src):
    x = np.array([0, 1, 2, np.iinfo(src).max, np.iinfo(src).min], src)
    out = ndd.cast(ndd.tensor(x), dtype=ndd.bool)
    np.testing.assert_array_equal(np.asarray(out), x != 0, strict=True)


@pytest.mark.parametrize("src", [np.int64, np.float64])
def test_cast_to_narrower_float_overflows_to_infinity(src):
    x = np.array([70000, -70000, 3], src)
    out = ndd.cast(ndd.tensor(x), dtype=ndd.float16)
    assert np.asarray(out).tolist() == [np.inf, -np.inf, 3.0]


@pytest.mark.parametrize("src", [np.float32, np.int64, np.bool_])
@pytest.mark.parametrize("dst", [np.int8, np.uint32, np.float16, np.bool_])
def test_cast_of_a_0d_tensor(src, dst):
    x = np.array(-2.5 if np.dtype(src).kind == "f" else 1, src)
    out = ndd.cast(ndd.tensor(x), dtype=ndd_type(dst))
    expected = ndd.cast(ndd.tensor(x.reshape(1)), dtype=ndd_type(dst))
    assert out.shape == ()
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected).reshape(()), strict=True)


@pytest.mark.parametrize("dst", SOME_TYPES)
def test_cast_batch_keeps_ragged_shapes_and_layout(dst):
    samples = [arange((2, 3), np.float32), arange((4, 3), np.float32)]
    out = ndd.cast(ndd.batch(samples, layout="HW"), dtype=ndd_type(dst))
    assert out.dtype == ndd_type(dst) and out.layout == "HW"
    assert out.shape == [(2, 3), (4, 3)]
    for got, sample in zip(sample_arrays(out), samples, strict=True):
        np.testing.assert_array_equal(got, sample.astype(dst), strict=True)


@pytest.mark.parametrize("dtype", ["uint8", "u8", np.uint8, ndd.types.DALIDataType.UINT8, ndd.uint8])
def test_cast_accepts_dtype_spellings(dtype):
    out = ndd.cast(ndd.tensor(np.array([1.5, 300.0], np.float32)), dtype=dtype)
    assert out.dtype == ndd.uint8
    assert np.asarray(out).tolist() == [2, 255]


def test_cast_rejects_unknown_dtype():
    with pytest.raises(ValueError, match=r"ndd\.cast: 'dtype'"):
        ndd.cast(ndd.tensor([1, 2]), dtype="foo")


def test_cast_batch_size_must_agree():
    b = ndd.batch([np.zeros(2), np.zeros(3)])
    with pytest.raises(
        ValueError, match=r"ndd\.cast: Inconsistent batch size: 3 != 2 \('batch_size' gives 3, "
    ):
        ndd.cast(b, dtype=ndd.float32, batch_size=3)
    # The input or argument that disagrees is named.
    images = ndd.batch([np.zeros((4, 4, 3), np.uint8)] * 2, layout="HWC")
    with pytest.raises(
        ValueError, match=r"\(argument 'brightness' gives 3, the inputs and arguments before it 2\)"
    ):
        ndd.brightness(images, brightness=ndd.batch([np.float32(1)] * 3))
    with pytest.raises(ValueError, match=r"\(input 'inputs' gives 3, "):
        ndd.cat(images, ndd.batch([np.zeros((4, 4, 3), np.uint8)] * 3))


# -- cast_like, copy ----------------------------------------------------------------


@pytest.mark.parametrize("like", SOME_TYPES)
def test_cast_like_takes_the_type_of_the_second_input(like):
    x = np.array([[-1.5, 0.4], [2.5, 300.0]], np.float32)
    out = ndd.cast_like(ndd.tensor(x, layout="HW"), ndd.tensor(np.zeros((), like)))
    expected = ndd.cast(ndd.tensor(x), dtype=ndd_type(like))
    assert out.dtype == ndd_type(like) and out.layout == "HW" and out.shape == (2, 2)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected), strict=True)


def test_cast_like_batch_with_batch():
    xs = ndd.batch([np.array([1.6, -2.5]), np.array([7.0])])
    likes = ndd.batch([np.zeros(5, np.int8), np.zeros(1, np.int8)])
    out = ndd.cast_like(xs, likes)
    assert out.dtype == ndd.int8
    assert [v.tolist() for v in sample_arrays(out)] == [[2, -3], [7]]


def test_cast_like_batch_sizes_must_agree():
    with pytest.raises(ValueError, match=r"ndd\.cast_like: Inconsistent batch size"):
        ndd.cast_like(ndd.batch([np.zeros(2)] * 2), ndd.batch([np.zeros(2, np.uint8)] * 3))


@pytest.mark.parametrize("np_type", SOME_TYPES)
def test_copy_copies(np_type):
    src = ndd.tensor(arange((2, 3, 4), np_type), layout="HWC")
    out = ndd.copy(src)
    assert out.dtype == src.dtype and out.layout == "HWC" and out.shape == (2, 3, 4)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(src), strict=True)
    assert not np.shares_memory(np.asarray(out), np.asarray(src))


def test_copy_batch():
    samples = [arange((2, 3)), arange((1, 3))]
    out = ndd.copy(ndd.batch(samples, layout="HW"))
    assert out.layout == "HW"
    for got, sample in zip(sample_arrays(out), samples, strict=True):
        np.testing.assert_array_equal(got, sample, strict=True)


# -- reshape ------------------------------------------------------------------------


@pytest.mark.parametrize("np_type", SOME_TYPES)
@pytest.mark.parametrize(
    "shape, expected_shape, layout",
    [
        ([4, 6], (4, 6), None),
        ([-1], (24,), None),
        ([6, -1], (6, 4), None),
        ([3, -1, 4], (3, 2, 4), "HWC"),  # same number of dimensions: the layout is kept
        ([2, 3, 4, 1, 1], (2, 3, 4, 1, 1), None),
    ],
)
def test_reshape_shape(np_type, shape, expected_shape, layout):
    x = arange((2, 3, 4), np_type)
    out = ndd.reshape(ndd.tensor(x, layout="HWC"), shape=shape)
    assert out.shape == expected_shape and out.layout == layout and out.dtype == ndd_type(np_type)
    np.testing.assert_array_equal(np.asarray(out), x.reshape(expected_shape), strict=True)


def test_reshape_returns_a_view():
    src = ndd.tensor(arange((2, 3, 4)))
    assert np.shares_memory(np.asarray(ndd.reshape(src, shape=[-1])), np.asarray(src))


@pytest.mark.parametrize(
    "layout, expected",
    [("XYZ", "XYZ"), ("", None)],
)
def test_reshape_layout_only(layout, expected):
    out = ndd.reshape(ndd.tensor(arange((2, 3, 4)), layout="HWC"), layout=layout)
    assert out.layout == expected and out.shape == (2, 3, 4)


def test_reshape_layout_with_new_shape():
    out = ndd.reshape(ndd.tensor(arange((2, 3, 4)), layout="HWC"), shape=[6, 4], layout="AB")
    assert out.layout == "AB" and out.shape == (6, 4)


@pytest.mark.parametrize(
    "in_shape, rel_shape, expected",
    [
        ((2, 3, 4), [0.5, 2, 1], (1, 6, 4)),
        ((3, 8), [0.5, -1], (2, 12)),  # 1.5 rounds half away from zero
        ((5, 4), [0.7, -1], (4, 5)),
        ((3, 8), [-1, 0.5], (6, 4)),
    ],
)
def test_reshape_rel_shape(in_shape, rel_shape, expected):
    x = arange(in_shape)
    out = ndd.reshape(ndd.tensor(x), rel_shape=rel_shape)
    assert out.shape == expected
    np.testing.assert_array_equal(np.asarray(out), x.reshape(expected), strict=True)


@pytest.mark.parametrize(
    "in_shape, src_dims, expected_shape, layout",
    [
        ((2, 3, 4), [2, 0, 1], (4, 2, 3), "HWC"),
        ((2, 3, 4), [0, -1, 1, 2], (2, 1, 3, 4), None),
        ((2, 1, 4), [0, 2], (2, 4), None),
        ((1, 3), [1], (3,), None),
    ],
)
def test_reshape_src_dims(in_shape, src_dims, expected_shape, layout):
    x = arange(in_shape)
    out = ndd.reshape(ndd.tensor(x, layout="HWC"[: len(in_shape)]), src_dims=src_dims)
    assert out.shape == expected_shape and out.layout == layout
    np.testing.assert_array_equal(np.asarray(out), x.reshape(expected_shape), strict=True)


def test_reshape_src_dims_with_rel_shape_scales_the_selected_dims():
    x = arange((2, 3, 4))
    out = ndd.reshape(ndd.tensor(x), src_dims=[2, 0, 1], rel_shape=[0.5, 2, 1])
    assert out.shape == (2, 4, 3)


def test_reshape_shape_wins_over_src_dims():
    out = ndd.reshape(ndd.tensor(arange((2, 3, 4))), shape=[4, 6], src_dims=[0, 1])
    assert out.shape == (4, 6)


@pytest.mark.parametrize(
    "shape_input",
    [ndd.tensor(np.array([4, 6], np.int32)), ndd.tensor(np.array([4, -1], np.int64)), [4, 6]],
)
def test_reshape_shape_input(shape_input):
    x = arange((2, 3, 4))
    out = ndd.reshape(ndd.tensor(x, layout="HWC"), shape_input)
    assert out.shape == (4, 6) and out.layout is None
    np.testing.assert_array_equal(np.asarray(out), x.reshape(4, 6), strict=True)


def test_reshape_per_sample_shape_input_and_argument():
    samples = [arange((2, 3)), arange((4, 3))]
    data = ndd.batch(samples, layout="HW")
    by_input = ndd.reshape(data, ndd.batch([np.array([3, 2]), np.array([6, 2])]))
    by_arg = ndd.reshape(data, shape=ndd.batch([np.array([-1, 3]), np.array([3, 4])]))
    assert by_input.shape == [(3, 2), (6, 2)] and by_input.layout == "HW"
    assert by_arg.shape == [(2, 3), (3, 4)]
    for got, sample in zip(sample_arrays(by_arg), samples, strict=True):
        np.testing.assert_array_equal(got, sample.reshape(got.shape), strict=True)


def test_reshape_with_pending_shape_argument_and_input():
    x = arange((2, 3, 4))
    with ndd.EvalMode.deferred:
        shape = ndd.cast(ndd.tensor([4.0, 6.0]), dtype=ndd.int32)
        by_arg = ndd.reshape(ndd.tensor(x, layout="HWC"), shape=shape)
        by_input = ndd.reshape(ndd.tensor(x, layout="HWC"), shape)
        # The shape of by_input is only known by running; transpose still needs its rank.
        transposed = ndd.transpose(by_input)
    assert by_arg.layout is None and by_arg.shape == (4, 6)
    np.testing.assert_array_equal(np.asarray(transposed), x.reshape(4, 6).T, strict=True)


def test_reshape_batch_ragged():
    samples = [arange((2, 3)), arange((4, 3))]
    out = ndd.reshape(ndd.batch(samples, layout="HW"), rel_shape=[0.5, 2])
    assert out.shape == [(1, 6), (2, 6)] and out.layout == "HW"
    for got, sample in zip(sample_arrays(out), samples, strict=True):
        np.testing.assert_array_equal(got, sample.reshape(got.shape), strict=True)


def test_reshape_tensor_broadcast_with_batch_size():
    out = ndd.reshape(ndd.tensor(arange((2, 3))), shape=[3, 2], batch_size=2)
    assert isinstance(out, ndd.Batch) and out.shape == [(3, 2), (3, 2)]


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({}, ValueError, r"ndd\.reshape would do nothing"),
        ({"shape": [5, 5]}, ValueError, r"ndd\.reshape: the output must occupy as many bytes"),
        ({"shape": [5, -1]}, ValueError, r"ndd\.reshape: the output must occupy as many bytes"),
        ({"shape": [-1, -1]}, ValueError, r"ndd\.reshape: only one extent"),
        ({"shape": [4, 6], "rel_shape": [1, 1]}, ValueError, r"ndd\.reshape: shape and rel_shape"),
        ({"shape": [6, 4], "layout": "ABC"}, ValueError, r"ndd\.reshape: 'layout' 'ABC'"),
        ({"src_dims": [0, 3]}, IndexError, r"ndd\.reshape: 'src_dims' entries"),
        ({"src_dims": [1, 2]}, ValueError, r"ndd\.reshape: 'src_dims' \(1, 2\)"),
        ({"src_dims": [0, 1], "rel_shape": [1]}, ValueError, r"ndd\.reshape: 'rel_shape' and 'src_dims'"),
        ({"rel_shape": [1, 1, 1, 1]}, ValueError, r"ndd\.reshape: 'rel_shape' has 4 entries"),
        ({"shape": "abc"}, ValueError, r"ndd\.reshape: 'shape'"),
    ],
)
def test_reshape_errors_at_the_call_site(kwargs, error, match):
    with ndd.EvalMode.deferred, pytest.raises(error, match=match):
        ndd.reshape(ndd.tensor(arange((2, 3, 4)), layout="HWC"), **kwargs)


def test_reshape_shape_input_errors():
    x = ndd.tensor(arange((2, 3, 4)))
    with pytest.raises(ValueError, match=r"ndd\.reshape: the shape input and shape are mutually exclusive"):
        ndd.reshape(x, [4, 6], shape=[4, 6])
    with pytest.raises(TypeError, match=r"ndd\.reshape: the shape input must have an integer type"):
        ndd.reshape(x, np.array([4.0, 6.0]))
    with pytest.raises(ValueError, match=r"ndd\.reshape: the shape input must be 1-D"):
        ndd.reshape(x, np.array([[4, 6]]))
    with pytest.raises(ValueError, match=r"ndd\.reshape: the output must occupy"):
        ndd.reshape(x, [5, 5]).evaluate()


def test_reshape_error_in_one_sample_of_a_batch():
    data = ndd.batch([arange((2, 3)), arange((4, 3))])
    with pytest.raises(ValueError, match=r"ndd\.reshape: .*input shape \(4, 3\)"):
        ndd.reshape(data, shape=[3, 2])


# -- reinterpret ------------------------------------------------------------------


@pytest.mark.parametrize("src", [np.uint8, np.int16, np.float32, np.float64])
@pytest.mark.parametrize("dst", [np.uint8, np.int16, np.int32, np.float32, np.uint64])
def test_reinterpret_dtype_scales_the_innermost_extent(src, dst):
    x = arange((3, 8), src) * 3
    out = ndd.reinterpret(ndd.tensor(x, layout="HW"), dtype=ndd_type(dst))
    expected = x.view(dst)
    assert out.dtype == ndd_type(dst) and out.layout == "HW" and out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected, strict=True)


def test_reinterpret_does_not_convert_values():
    out = ndd.reinterpret(ndd.tensor(np.array([1.0, -2.0], np.float32)), dtype=ndd.int32)
    assert np.asarray(out).tolist() == [0x3F800000, -0x40000000]


@pytest.mark.parametrize(
    "kwargs, expected_shape",
    [
        ({"dtype": ndd.int32, "shape": [2]}, (2,)),
        ({"dtype": ndd.int32, "shape": [-1]}, (2,)),
        ({"dtype": ndd.int16, "rel_shape": [1, 0.5]}, (2, 2)),
        ({"dtype": ndd.int16, "rel_shape": [1, -1]}, (2, 2)),
        ({"dtype": ndd.int16, "src_dims": [1, 0]}, (4, 1)),
        ({"shape": [4, 2]}, (4, 2)),
    ],
)
def test_reinterpret_with_shape(kwargs, expected_shape):
    x = np.arange(8, dtype=np.uint8).reshape(2, 4)
    out = ndd.reinterpret(ndd.tensor(x), **kwargs)
    expected = x.reshape(-1).view(out.dtype.numpy).reshape(expected_shape)
    assert out.shape == expected_shape
    np.testing.assert_array_equal(np.asarray(out), expected, strict=True)


def test_reinterpret_of_a_non_contiguous_input_reads_its_logical_order():
    x = np.arange(8, dtype=np.uint8).reshape(2, 4)
    transposed = ndd.transpose(ndd.tensor(x))
    out = ndd.reinterpret(transposed, dtype=ndd.uint16)
    np.testing.assert_array_equal(np.asarray(out), np.ascontiguousarray(x.T).view(np.uint16), strict=True)


def test_reinterpret_scalar_with_shape():
    out = ndd.reinterpret(ndd.tensor(np.array(0x01020304, np.int32)), dtype=ndd.uint8, shape=[4])
    np.testing.assert_array_equal(np.asarray(out), np.array(0x01020304, np.int32).reshape(1).view(np.uint8))


def test_reinterpret_batch():
    samples = [arange((2, 3)), arange((4, 3))]
    out = ndd.reinterpret(ndd.batch(samples, layout="HW"), dtype=ndd.uint8)
    assert out.shape == [(2, 12), (4, 12)] and out.layout == "HW"
    for got, sample in zip(sample_arrays(out), samples, strict=True):
        np.testing.assert_array_equal(got, sample.view(np.uint8), strict=True)


@pytest.mark.parametrize(
    "x, kwargs, match",
    [
        (np.zeros((2, 3), np.uint8), {"dtype": ndd.int32}, r"ndd\.reinterpret: the innermost dimension"),
        (np.zeros((), np.int32), {"dtype": ndd.uint8}, r"ndd\.reinterpret: a 0-D input"),
        (
            np.zeros((2, 4), np.uint8),
            {"dtype": ndd.int32, "shape": [3]},
            r"ndd\.reinterpret: the output must",
        ),
        (np.zeros((2, 4), np.uint8), {}, r"ndd\.reinterpret would do nothing: give .* or dtype"),
    ],
)
def test_reinterpret_errors(x, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ndd.reinterpret(ndd.tensor(x), **kwargs)


# -- transpose ------------------------------------------------------------------


@pytest.mark.parametrize("np_type", SOME_TYPES)
@pytest.mark.parametrize(
    "perm, layout", [([2, 0, 1], "CHW"), ([0, 1, 2], "HWC"), ([1, 2, 0], "WCH"), (None, "CWH")]
)
def test_transpose(np_type, perm, layout):
    x = arange((2, 3, 4), np_type)
    out = ndd.transpose(ndd.tensor(x, layout="HWC"), perm=perm)
    expected = np.transpose(x, perm)
    assert out.shape == expected.shape and out.layout == layout and out.dtype == ndd_type(np_type)
    np.testing.assert_array_equal(np.asarray(out), expected, strict=True)


def test_transpose_returns_a_view():
    src = ndd.tensor(arange((2, 3)))
    assert np.shares_memory(np.asarray(ndd.transpose(src, perm=[1, 0])), np.asarray(src))


@pytest.mark.parametrize(
    "kwargs, layout",
    [
        ({"transpose_layout": False}, "HWC"),
        ({"output_layout": "XYZ"}, "XYZ"),
        ({"output_layout": "XYZ", "transpose_layout": False}, "XYZ"),
    ],
)
def test_transpose_layout_options(kwargs, layout):
    out = ndd.transpose(ndd.tensor(arange((2, 3, 4)), layout="HWC"), perm=[2, 0, 1], **kwargs)
    assert out.layout == layout and out.shape == (4, 2, 3)


@pytest.mark.parametrize("shape", [(), (5,)])
def test_transpose_of_0d_and_1d(shape):
    x = arange(shape)
    out = ndd.transpose(ndd.tensor(x))
    np.testing.assert_array_equal(np.asarray(out), x, strict=True)


def test_transpose_batch():
    samples = [arange((2, 3)), arange((4, 3))]
    out = ndd.transpose(ndd.batch(samples, layout="HW"), perm=[1, 0])
    assert out.shape == [(3, 2), (3, 4)] and out.layout == "WH"
    for got, sample in zip(sample_arrays(out), samples, strict=True):
        np.testing.assert_array_equal(got, sample.T, strict=True)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"perm": [0, 1]}, r"ndd\.transpose: 'perm' has 2 entries"),
        ({"perm": [0, 0, 1]}, r"ndd\.transpose: 'perm' must be a permutation"),
        ({"perm": [2, 0, 3]}, r"ndd\.transpose: 'perm' must be a permutation"),
        ({"perm": [-1, 0, 1]}, r"ndd\.transpose: 'perm' must be a permutation"),
        ({"output_layout": ""}, r"ndd\.transpose: 'output_layout' must not be empty"),
        ({"output_layout": "XY"}, r"ndd\.transpose: 'output_layout' 'XY'"),
    ],
)
@pytest.mark.parametrize("layout", ["HWC", None])
def test_transpose_errors_at_the_call_site(kwargs, match, layout):
    with ndd.EvalMode.deferred, pytest.raises(ValueError, match=match):
        ndd.transpose(ndd.tensor(arange((2, 3, 4)), layout=layout), **kwargs)


# -- squeeze ----------------------------------------------------------------------


@pytest.mark.parametrize("np_type", SOME_TYPES)
@pytest.mark.parametrize(
    "kwargs, shape, layout",
    [
        ({"axes": [1]}, (2, 3, 1), "HWY"),
        ({"axes": [3, 1]}, (2, 3), "HW"),
        ({"axes": [-1]}, (2, 1, 3), "HXW"),
        ({"axes": []}, (2, 1, 3, 1), "HXWY"),
        ({"axis_names": "X"}, (2, 3, 1), "HWY"),
        ({"axis_names": "YX"}, (2, 3), "HW"),
    ],
)
def test_squeeze(np_type, kwargs, shape, layout):
    x = arange((2, 1, 3, 1), np_type)
    out = ndd.squeeze(ndd.tensor(x, layout="HXWY"), **kwargs)
    assert out.shape == shape and out.layout == layout and out.dtype == ndd_type(np_type)
    np.testing.assert_array_equal(np.asarray(out), x.reshape(shape), strict=True)


def test_squeeze_returns_a_view():
    src = ndd.tensor(arange((1, 3)))
    assert np.shares_memory(np.asarray(ndd.squeeze(src, axes=[0])), np.asarray(src))


def test_squeeze_to_a_scalar():
    out = ndd.squeeze(ndd.tensor(np.array([[7]]), layout="AB"), axes=[0, 1])
    assert out.shape == () and out.layout is None and out.item() == 7


def test_squeeze_of_an_empty_extent_when_nothing_is_lost():
    out = ndd.squeeze(ndd.tensor(np.zeros((0, 0), np.int32), layout="AB"), axes=[0])
    assert out.shape == (0,) and out.layout == "B"
    with pytest.raises(ValueError, match=r"ndd\.squeeze: dimension 0 .* has extent 0"):
        ndd.squeeze(ndd.tensor(np.zeros((0, 3), np.int32)), axes=[0])


def test_squeeze_batch_with_per_sample_axes():
    samples = [arange((1, 2, 1)), arange((1, 5, 1))]
    data = ndd.batch(samples)
    out = ndd.squeeze(data, axes=ndd.batch([np.array([0]), np.array([2])]))
    assert out.shape == [(2, 1), (1, 5)]
    for got, sample in zip(sample_arrays(out), samples, strict=True):
        np.testing.assert_array_equal(got, sample.reshape(got.shape), strict=True)


def test_squeeze_with_pending_per_sample_axes():
    data = ndd.batch([arange((1, 2, 1)), arange((1, 5, 1))], layout="ABC")
    with ndd.EvalMode.deferred:
        axes = ndd.cast(ndd.batch([np.array([0.0, 2.0]), np.array([2.0, 0.0])]), dtype=ndd.int32)
        out = ndd.squeeze(data, axes=axes)
    assert out.layout == "B" and out.shape == [(2,), (5,)]


def test_squeeze_per_sample_axes_must_agree_with_the_layout():
    data = ndd.batch([arange((1, 2, 1)), arange((1, 5, 1))], layout="ABC")
    with pytest.raises(ValueError, match=r"ndd\.squeeze: per-sample 'axes' must remove the same"):
        ndd.squeeze(data, axes=ndd.batch([np.array([0]), np.array([2])]))
    out = ndd.squeeze(data, axes=ndd.batch([np.array([0, 2]), np.array([2, -3])]))
    assert out.layout == "B" and out.shape == [(2,), (5,)]


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({}, ValueError, r"ndd\.squeeze: give exactly one of 'axes' and 'axis_names'"),
        ({"axes": [1], "axis_names": "Y"}, ValueError, r"ndd\.squeeze: give exactly one"),
        ({"axes": [0]}, ValueError, r"ndd\.squeeze: dimension 0 of shape \(2, 1, 3, 1\) has extent 2"),
        ({"axes": [4]}, IndexError, r"ndd\.squeeze: 'axes' entry 4 is out of range"),
        ({"axes": [1, -3]}, ValueError, r"ndd\.squeeze: 'axes' names a dimension twice"),
        ({"axis_names": "Q"}, ValueError, r"ndd\.squeeze: 'axis_names' 'Q' is not in the input layout"),
        ({"axis_names": "XX"}, ValueError, r"ndd\.squeeze: 'axis_names' names a dimension twice"),
    ],
)
def test_squeeze_errors_at_the_call_site(kwargs, error, match):
    with ndd.EvalMode.deferred, pytest.raises(error, match=match):
        ndd.squeeze(ndd.tensor(arange((2, 1, 3, 1)), layout="HXWY"), **kwargs)


# -- expand_dims ------------------------------------------------------------------


@pytest.mark.parametrize("np_type", SOME_TYPES)
@pytest.mark.parametrize(
    "axes, names, shape, layout",
    [
        ([0], "", (1, 2, 3), None),
        ([0], "N", (1, 2, 3), "NHW"),
        ([1], "X", (2, 1, 3), "HXW"),
        ([2], "C", (2, 3, 1), "HWC"),
        ([0, 3], "AB", (1, 2, 3, 1), "AHWB"),
        ([3, 0], "AB", (1, 2, 3, 1), "BHWA"),  # names follow the order of the axes
    ],
)
def test_expand_dims(np_type, axes, names, shape, layout):
    x = arange((2, 3), np_type)
    out = ndd.expand_dims(ndd.tensor(x, layout="HW"), axes=axes, new_axis_names=names)
    assert out.shape == shape and out.layout == layout and out.dtype == ndd_type(np_type)
    np.testing.assert_array_equal(np.asarray(out), np.expand_dims(x, tuple(axes)), strict=True)


def test_expand_dims_returns_a_view():
    src = ndd.tensor(arange((2, 3)))
    assert np.shares_memory(np.asarray(ndd.expand_dims(src, axes=[0])), np.asarray(src))


def test_expand_dims_of_a_scalar_may_name_the_new_axes():
    out = ndd.expand_dims(ndd.tensor(np.int32(5)), axes=[0, 1], new_axis_names="AB")
    assert out.shape == (1, 1) and out.layout == "AB"


def test_expand_dims_batch():
    samples = [arange((2, 3)), arange((4, 3))]
    out = ndd.expand_dims(ndd.batch(samples, layout="HW"), axes=[0], new_axis_names="N")
    assert out.shape == [(1, 2, 3), (1, 4, 3)] and out.layout == "NHW"


@pytest.mark.parametrize(
    "kwargs, layout, error, match",
    [
        ({"axes": [-1]}, "HW", ValueError, r"ndd\.expand_dims: 'axes' must not be negative"),
        ({"axes": [3]}, "HW", IndexError, r"ndd\.expand_dims: 'axes' entry 3 is out of range"),
        ({"axes": [0, 0]}, "HW", ValueError, r"ndd\.expand_dims: 'axes' names a position twice"),
        ({"axes": [0, 1], "new_axis_names": "A"}, "HW", ValueError, r"ndd\.expand_dims: 'new_axis_names'"),
        ({"axes": [1], "new_axis_names": "X"}, None, ValueError, r"needs an input with a layout"),
    ],
)
def test_expand_dims_errors_at_the_call_site(kwargs, layout, error, match):
    with ndd.EvalMode.deferred, pytest.raises(error, match=match):
        ndd.expand_dims(ndd.tensor(arange((2, 3)), layout=layout), **kwargs)


def test_expand_dims_requires_axes():
    with pytest.raises(TypeError, match="axes"):
        ndd.expand_dims(ndd.tensor(arange((2, 3))))


@pytest.mark.parametrize("rel_shape", [[float("inf"), 1.0], [float("nan"), 1.0]])
def test_reshape_rejects_non_finite_relative_shape(rel_shape):
    x = ndd.tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="ndd.reshape: 'rel_shape' must be a list of finite numbers"):
        ndd.reshape(x, rel_shape=rel_shape)
