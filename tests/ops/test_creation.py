"""full, full_like, zeros, ones, zeros_like, ones_like (ndd/_ops/creation.py)."""

import numpy as np
import pytest
from arrays import ALL_TYPES, sample_arrays
from golden_cases import golden_tests

import ndd

OPS = ["full", "full_like", "zeros", "ones", "zeros_like", "ones_like"]

# Golden cases where ndd deliberately differs (see the docstring of ndd/_ops/creation.py);
# each behaviour is tested on its own below.
DEVIATIONS = {
    "full_010": "the reference keeps the first element of a non-scalar fill value without shape; "
    "ndd raises (test_full_bad_arguments)",
    "zeros_016": "the reference rejects dtype names; ndd accepts them (test_constant_accepts_dtype_names)",
    "ones_016": "the reference rejects dtype names; ndd accepts them (test_constant_accepts_dtype_names)",
}


test_matches_reference_golden, test_every_deviating_golden_case_exists = golden_tests(
    *OPS, deviations=DEVIATIONS, error_names_op=True
)


# --------------------------------------------------------------------------- zeros, ones


@pytest.mark.parametrize("op, value", [(ndd.zeros, 0), (ndd.ones, 1)])
@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_constant_values_and_dtype(op, value, dtype):
    out = op(shape=[2, 3], dtype=ndd.dtype(dtype))
    assert isinstance(out, ndd.Tensor) and out.dtype == ndd.dtype(dtype) and out.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), value, dtype), strict=True)


@pytest.mark.parametrize("op", [ndd.zeros, ndd.ones])
def test_constant_default_dtype_is_int32(op):
    assert op(shape=[2]).dtype == ndd.int32


@pytest.mark.parametrize(
    "shape, expected",
    [(None, ()), ([], ()), (2, (2,)), ((2, 3), (2, 3)), ([0, 2], (0, 2)), (np.int64([2, 3]), (2, 3))],
)
def test_constant_shape_forms(shape, expected):
    out = ndd.ones(shape=shape)
    assert out.shape == expected
    np.testing.assert_array_equal(np.asarray(out), np.ones(expected, np.int32))


def test_constant_shape_from_a_tensor():
    assert ndd.zeros(shape=ndd.tensor(np.int64([2, 3]))).shape == (2, 3)


def test_constant_layout():
    assert ndd.zeros(shape=[2, 3], layout="HW").layout == "HW"
    assert ndd.zeros(shape=[2, 3]).layout is None
    assert ndd.zeros(layout="").layout is None


@pytest.mark.parametrize("op", [ndd.zeros, ndd.ones])
def test_constant_batch_size(op):
    out = op(shape=[2], batch_size=3, dtype=ndd.float32)
    assert isinstance(out, ndd.Batch) and out.batch_size == 3 and out.shape == [(2,)] * 3


def test_constant_per_sample_shape():
    out = ndd.ones(shape=ndd.batch([np.int32([1, 2]), np.int32([3, 0])]), layout="HW")
    assert out.shape == [(1, 2), (3, 0)] and out.layout == "HW"
    np.testing.assert_array_equal(sample_arrays(out)[0], np.ones((1, 2), np.int32))


def test_constant_accepts_dtype_names():
    # The reference rejects strings here (golden zeros_016); ndd.dtype accepts them.
    assert ndd.zeros(shape=[2], dtype="float32").dtype == ndd.float32
    assert ndd.ones(shape=[2], dtype=np.uint8).dtype == ndd.uint8


@pytest.mark.parametrize("op", ["zeros", "ones"])
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"shape": [2, -1]}, r"'shape' must not have negative extents, got \[2, -1\]"),
        ({"shape": [2, 3], "layout": "HWC"}, "'layout' 'HWC' has 3 dimensions but 'shape' \\[2, 3\\] has 2"),
        ({"layout": "X"}, "'layout' 'X' has 1 dimensions but 'shape' \\[\\] has 0"),
        ({"shape": [2.5]}, "'shape' must be a list of integers"),
        (
            {"shape": ndd.batch([np.int32([1]), np.int32([2, 3])])},
            "'shape' must have the same length for all samples",
        ),
        ({"dtype": "nonsense"}, "'dtype' must be a DType"),
    ],
)
def test_constant_bad_arguments(op, kwargs, match):
    with pytest.raises((ValueError, TypeError), match=f"ndd.{op}: {match}"):
        getattr(ndd, op)(**kwargs).evaluate()


# --------------------------------------------------------------------------- zeros_like, ones_like


@pytest.mark.parametrize("op, value", [(ndd.zeros_like, 0), (ndd.ones_like, 1)])
@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_like_takes_shape_dtype_and_layout(op, value, dtype):
    x = ndd.tensor(np.full((2, 3, 4), 7, dtype), layout="HWC")
    out = op(x)
    assert out.dtype == ndd.dtype(dtype) and out.layout == "HWC"
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 3, 4), value, dtype), strict=True)


@pytest.mark.parametrize("op, value", [(ndd.zeros_like, 0), (ndd.ones_like, 1)])
@pytest.mark.parametrize("dtype", [ndd.float32, ndd.bool, ndd.uint64])
def test_like_with_dtype(op, value, dtype):
    out = op(np.zeros((2, 3), np.int32), dtype=dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), value, dtype.numpy), strict=True)


def test_like_ragged_batch():
    b = ndd.batch([np.zeros((2, 3), np.int16), np.zeros((4, 3), np.int16)], layout="HW")
    out = ndd.ones_like(b)
    assert isinstance(out, ndd.Batch) and out.shape == [(2, 3), (4, 3)] and out.layout == "HW"
    for got, shape in zip(sample_arrays(out), [(2, 3), (4, 3)], strict=True):
        np.testing.assert_array_equal(got, np.ones(shape, np.int16), strict=True)


def test_like_scalar():
    out = ndd.zeros_like(np.float64(3))
    assert out.shape == () and out.dtype == ndd.float64 and out.item() == 0


# --------------------------------------------------------------------------- full


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_full_takes_the_dtype_of_the_fill_value(dtype):
    fill = np.array(1, dtype)
    out = ndd.full(fill, shape=[2, 3])
    assert out.dtype == ndd.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), fill), strict=True)


@pytest.mark.parametrize("fill, dtype", [(3, np.int32), (3.5, np.float32), (True, np.bool_)])
def test_full_python_scalars(fill, dtype):
    np.testing.assert_array_equal(np.asarray(ndd.full(fill, shape=[2])), np.full(2, fill, dtype), strict=True)


@pytest.mark.parametrize(
    "fill, shape",
    [
        (np.int32([1, 2, 3]), (2, 3)),
        (np.int32([[1], [2]]), (2, 3)),
        (np.int32([[1, 2, 3]]), (4, 3)),
        (np.int32([1, 2]), (2, 0, 2)),
    ],
)
def test_full_broadcasts_like_numpy(fill, shape):
    out = ndd.full(fill, shape=shape)
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(fill, shape), strict=True)


def test_full_without_shape_gives_a_scalar():
    out = ndd.full(np.float32(2.5))
    assert out.shape == () and out.item() == 2.5


def test_full_layout():
    assert ndd.full(np.float32(1), shape=[2, 3], layout="HW").layout == "HW"
    assert ndd.full(np.float32(1), shape=[2, 3]).layout is None


def test_full_batch_of_fill_values_and_per_sample_shapes():
    fill = ndd.batch([np.int32(1), np.int32(2)])
    out = ndd.full(fill, shape=ndd.batch([np.int32([2]), np.int32([3])]))
    assert out.shape == [(2,), (3,)]
    np.testing.assert_array_equal(sample_arrays(out)[1], [2, 2, 2])
    out = ndd.full(np.float32(4), shape=[2], batch_size=3)
    assert out.shape == [(2,)] * 3 and out.dtype == ndd.float32


@pytest.mark.parametrize(
    "fill, kwargs, match",
    [
        (
            np.int32([1, 2, 3]),
            {"shape": [3, 2]},
            r"the fill value of shape \(3,\) cannot be broadcast to the shape",
        ),
        (np.int32([1, 2, 3]), {}, r"the fill value of shape \(3,\) cannot be broadcast to the shape \(\)"),
        (np.float32(1), {"shape": [-1, 2]}, "'shape' must not have negative extents"),
        (np.float32(1), {"shape": [2, 3], "layout": "HWC"}, "'layout' 'HWC' has 3 dimensions"),
    ],
)
def test_full_bad_arguments(fill, kwargs, match):
    with pytest.raises(ValueError, match=f"ndd.full: {match}"):
        ndd.full(fill, **kwargs).evaluate()


# --------------------------------------------------------------------------- full_like


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_full_like_takes_the_dtype_of_the_data(dtype):
    x = ndd.tensor(np.zeros((2, 3), dtype), layout="HW")
    out = ndd.full_like(x, np.float32(1))
    assert out.dtype == ndd.dtype(dtype) and out.layout == "HW"
    np.testing.assert_array_equal(np.asarray(out), np.ones((2, 3), dtype), strict=True)


@pytest.mark.parametrize(
    "dtype, fill, expected",
    [
        (np.int32, 2.5, 3),  # halves round away from zero
        (np.int32, -2.5, -3),
        (np.int32, 3.7, 4),
        (np.uint8, -1.5, 0),  # saturated
        (np.uint8, 300.0, 255),
        (np.uint8, np.nan, 0),
        (np.bool_, 0.3, False),
        (np.bool_, 0.5, True),
        (np.float16, 70000.0, np.inf),
    ],
)
def test_full_like_converts_the_fill_value_like_cast(dtype, fill, expected):
    out = ndd.full_like(np.zeros(2, dtype), np.float32(fill))
    np.testing.assert_array_equal(np.asarray(out), np.full(2, expected, dtype), strict=True)


def test_full_like_broadcasts_the_fill_value():
    out = ndd.full_like(np.zeros((2, 3, 4), np.int32), np.int32([1, 2, 3, 4]))
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(np.int32([1, 2, 3, 4]), (2, 3, 4)))
    with pytest.raises(
        ValueError, match=r"ndd.full_like: the fill value of shape \(2,\) cannot be broadcast"
    ):
        ndd.full_like(np.zeros((2, 3), np.int32), np.int32([1, 2])).evaluate()


def test_full_like_ragged_batch_with_one_fill_per_sample():
    b = ndd.batch([np.zeros((2, 3), np.int32), np.zeros((4, 3), np.int32)], layout="HW")
    out = ndd.full_like(b, ndd.batch([np.float32(1), np.float32(2)]))
    assert out.shape == [(2, 3), (4, 3)] and out.layout == "HW" and out.dtype == ndd.int32
    for got, shape, fill in zip(sample_arrays(out), [(2, 3), (4, 3)], [1, 2], strict=True):
        np.testing.assert_array_equal(got, np.full(shape, fill, np.int32), strict=True)
