"""Conversion of user data (numpy, DLPack, array-interface objects, torch tensors,
Python scalars and nested lists) to numpy arrays with ndd's dtype rules."""

import numpy as np

from . import _types
from ._types import DType

__all__ = ["is_gpu_data", "to_array", "numpy_dtype", "python_values"]

_INT32_MIN = -(2**31)
_INT32_MAX = 2**31 - 1
_UINT32_MAX = 2**32 - 1

_ENUM_DTYPES = {
    "DALIDataType": _types.DataType,
    "DALIImageType": _types.ImageType,
    "DALIInterpType": _types.InterpType,
}


def numpy_dtype(dt: DType) -> np.dtype:
    """The numpy dtype storing elements of ``dt``."""
    if dt.numpy is None:
        raise TypeError(f"{dt} data needs the 'ml_dtypes' package (pip install ml_dtypes)")
    return dt.numpy


# NumPy's limit on dimensions: a list deeper than that (one holding itself, say)
# cannot become an array.
_MAX_DEPTH = 64


def _first_leaf(data):
    for _ in range(_MAX_DEPTH + 1):
        if not (isinstance(data, (list, tuple)) and data):
            return data
        data = data[0]
    raise ValueError(f"nested sequences deeper than {_MAX_DEPTH} levels (does a list hold itself?)")


def _python_array(data):
    """``np.asarray`` of Python numbers or nested lists; TypeError unless they are
    rectangular and hold numbers, OverflowError for integers beyond 64 bits."""
    try:
        arr = np.asarray(data)
    except ValueError:  # ragged
        raise TypeError("nested sequences must be rectangular and hold numbers") from None
    if arr.dtype == object:
        if arr.size and all(type(v) is int for v in arr.flat):
            raise OverflowError(f"Python integer {max(arr.flat, key=abs)} is out of the 64-bit range")
        raise TypeError("nested sequences must be rectangular and hold numbers")
    return arr


def python_values(data, dt):
    """Python numbers or nested lists as an array of DType ``dt``, as the reference
    converts them: a float given for an integer type is truncated, and a value the
    type cannot hold (out of its range, NaN) is refused rather than wrapped."""
    target = numpy_dtype(dt)
    if type(_first_leaf(data)).__name__ in _ENUM_DTYPES:
        data = _map_leaves(data, int)
    arr = _python_array(data)
    if target.kind in "iu" and arr.size:
        if arr.dtype.kind == "f":
            finite = np.isfinite(arr)
            if not finite.all():
                raise ValueError(f"cannot convert {arr[~finite].flat[0]} to {dt}")
            arr = np.asarray(np.trunc(arr))  # of a 0-D array, np.trunc gives a numpy scalar
        lo, hi = int(arr.min()), int(arr.max())
        info = np.iinfo(target)
        if lo < info.min or hi > info.max:
            raise OverflowError(f"{lo if lo < info.min else hi} is out of the range of {dt}")
    with np.errstate(over="ignore"):  # floats beyond the type's range become infinities
        return arr.astype(target)


def _from_python(data):
    """A numpy array from Python scalars / nested lists, with the reference's
    inference: ints -> int32 (uint32 when needed), floats -> float32, bools -> bool.
    Lists of narrower numpy values (uint8, float16, ...) keep their type; only the
    64-bit types Python numbers become are narrowed."""
    leaf = _first_leaf(data)
    enum_dtype = _ENUM_DTYPES.get(type(leaf).__name__)
    if enum_dtype is not None:
        return np.asarray(_map_leaves(data, int), dtype=np.int32), enum_dtype
    arr = _python_array(data)
    kind = arr.dtype.kind
    if kind in "iuf" and arr.dtype.itemsize < 8:
        return arr, None
    if kind == "i" or kind == "u":
        if arr.size == 0:
            return arr.astype(np.int32), None
        lo, hi = int(arr.min()), int(arr.max())
        if lo >= _INT32_MIN and hi <= _INT32_MAX:
            return arr.astype(np.int32), None
        if lo >= 0 and hi <= _UINT32_MAX:
            return arr.astype(np.uint32), None
        raise OverflowError(f"integer value out of the int32/uint32 range: {lo if lo < _INT32_MIN else hi}")
    if kind == "f":
        with np.errstate(over="ignore"):  # beyond float32: infinities, as the reference
            return arr.astype(np.float32), None
    if kind == "b":
        return arr, None
    raise TypeError(f"unsupported element type {arr.dtype}")


def _map_leaves(data, fn):
    if isinstance(data, (list, tuple)):
        return [_map_leaves(x, fn) for x in data]
    return fn(data)


def is_gpu_data(data) -> bool:
    """Whether ``data`` is an array in GPU memory (``__cuda_array_interface__``, or
    DLPack on kDLCUDA / kDLCUDAManaged)."""
    try:
        if hasattr(data, "__cuda_array_interface__"):
            return True
    except RuntimeError:  # a torch tensor that requires grad refuses to export it
        return bool(getattr(data, "is_cuda", False))
    dlpack_device = getattr(data, "__dlpack_device__", None)
    return dlpack_device is not None and hasattr(data, "__dlpack__") and int(dlpack_device()[0]) in (2, 13)


def _refuse_gpu_data(type_name):
    # GPU data is taken before to_array is asked (ndd.as_tensor, the first sample
    # of a batch): here it is mixed with host data.
    from ._cuda import driver

    driver.require_gpu("Wrapping GPU memory")
    raise ValueError(
        f"a {type_name} in GPU memory cannot be mixed with host data; move it with .cpu() or the rest with .gpu()"
    )


def to_array(data):
    """Return ``(array, shares_memory, enum_dtype)`` for tensor-like ``data``.

    ``shares_memory`` is true when the array views the caller's buffer (so the
    caller may mutate it later); ``enum_dtype`` is set for lists of DALI enum values.
    """
    if isinstance(data, np.ndarray):
        if not data.flags.writeable:
            return data.copy(), False, None
        return data, True, None
    if isinstance(data, range):
        data = list(data)  # as the reference takes it: a list of its integers
    if isinstance(data, (bool, int, float, list, tuple)) or isinstance(data, np.generic):
        if isinstance(data, np.generic):
            return np.asarray(data), False, None
        arr, enum_dtype = _from_python(data)
        return arr, False, enum_dtype
    type_name = type(data).__name__
    if type_name in _ENUM_DTYPES:
        return np.asarray(int(data), dtype=np.int32), False, _ENUM_DTYPES[type_name]
    if hasattr(data, "__dlpack_device__") and hasattr(data, "__dlpack__"):
        dev_type, _ = data.__dlpack_device__()
        if int(dev_type) not in (1, 3):
            _refuse_gpu_data(type_name)
        if type(data).__module__.startswith("torch") and getattr(data, "requires_grad", False):
            data = data.detach()
        try:
            return np.from_dlpack(data), True, None
        except BufferError:
            return np.array(data), False, None
        except (TypeError, RuntimeError) as exc:  # numpy has no type for the data ("Unsupported dtype")
            if type_name == "Tensor" and str(getattr(data, "dtype", "")) == "torch.bfloat16":
                raise TypeError(
                    "a bfloat16 torch tensor cannot be read on the CPU: convert it with .float(), "
                    "or make an ndd bfloat16 tensor from float data (needs the 'ml_dtypes' package)"
                ) from None
            raise TypeError(
                f"cannot read a {type_name} of type {getattr(data, 'dtype', '?')}: {exc}"
            ) from None
    if hasattr(data, "__array_interface__") or hasattr(data, "__array__"):
        arr = np.asarray(data)
        return arr, arr.base is not None, None
    if hasattr(data, "__cuda_array_interface__"):
        _refuse_gpu_data(type_name)
    raise TypeError(f"cannot convert {type_name} to a tensor")
