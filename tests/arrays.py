"""Small array helpers shared by the test modules: type lists, test data, and the
samples of a batch as numpy arrays.

Test modules under ``tests/`` import it as ``arrays`` (``tests/`` is on ``sys.path``
through its ``conftest.py``).
"""

import numpy as np

import ndd

__all__ = [
    "ALL_TYPES",
    "INT_TYPES",
    "FLOAT_TYPES",
    "numbered",
    "sample_arrays",
    "dtype_name",
    "assert_result",
]

INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT_TYPES = [np.float16, np.float32, np.float64]
# The types the operator tests run each operator with.
ALL_TYPES = [
    np.uint8,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
    np.bool_,
]


def numbered(shape, dtype=np.int32):
    """Distinct values (0, 1, 2, ...; alternating for bool) of the given shape."""
    values = np.arange(int(np.prod(shape)))
    return (values % 2 if dtype == np.bool_ else values).astype(dtype).reshape(shape)


def sample_arrays(batch):
    """The samples of a batch as numpy arrays."""
    return [np.asarray(s) for s in batch]


def dtype_name(dt):
    """numpy-style name ("uint8") of an ndd DType, as used by the golden files."""
    return np.dtype(dt.numpy).name


def assert_result(result, values, dtype, shape=None):
    """``result`` is an ndd Tensor of type ``dtype`` (a numpy-style name) holding ``values``."""
    assert isinstance(result, ndd.Tensor)
    assert dtype_name(result.dtype) == dtype
    data = np.asarray(result)
    assert data.dtype == dtype
    expected = np.array(values, dtype=dtype)
    assert result.shape == (expected.shape if shape is None else shape)
    np.testing.assert_array_equal(data, expected)
