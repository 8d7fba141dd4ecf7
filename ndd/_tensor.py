"""``Tensor``: one sample (an n-dimensional array), possibly still being computed."""

import numpy as np

from . import _types
from ._convert import is_gpu_data, numpy_dtype, python_values, to_array
from ._eval.device import Device
from ._eval.device import device as to_device
from ._eval.mode import EvalMode
from ._ops.conversions import cast_array
from ._optional import torch_module
from ._prepare.storage import BatchBase, TensorBase, batch_dense, batch_samples, batch_wait, tensor_data
from ._types import DType

__all__ = ["Tensor", "tensor", "as_tensor"]


def _check_layout(layout, ndim, what="A non-empty layout"):
    if layout is None or layout == "":
        return ""
    if not isinstance(layout, str):
        raise TypeError(f"layout must be a string, got {type(layout).__name__}")
    if len(layout) != ndim:
        raise ValueError(
            f"{what} must have the same number of dimensions as the data: "
            f"layout {layout!r} has {len(layout)}, the data has {ndim}"
        )
    return layout


def _require_cpu(dev, what):
    if dev.device_type != "cpu":
        from ._cuda import driver

        driver.require_gpu(what)
        raise RuntimeError(f"{what}: GPU tensors are not supported by this build of ndd yet")


def _on_gpu(x) -> bool:
    return x._device.device_type == "gpu"


def _to_host(arr):
    """``arr`` (a numpy array or a DeviceArray) in host memory."""
    return arr if isinstance(arr, np.ndarray) else arr.to_host()


def _place(arr, dev):
    """``(array, moved)``: ``arr`` (numpy or DeviceArray) on ``dev``, and whether
    it was copied to get there."""
    if dev.device_type == "cpu":
        if isinstance(arr, np.ndarray):
            return arr, False
        return arr.to_host(), True
    from ._cuda.device_array import DeviceArray

    if isinstance(arr, np.ndarray):
        return DeviceArray.from_host(arr, dev.device_id), True
    if arr.device_id != dev.device_id:
        return arr.copy(dev.device_id), True
    return arr, False


def _fill(t, arr, dt, layout, dev, external):
    t._data = arr
    t._shape = arr.shape
    t._dtype = dt
    t._layout = _check_layout(layout, arr.ndim)
    t._device = dev
    t._external = external


def _stack_batch(b, pad):
    dense = batch_dense(b)
    if dense is not None:
        return dense
    if batch_wait(b) is not None:
        whole = b._gpu.as_array()
        if whole is not None:
            return whole
        # Ragged GPU samples are padded on the host until a GPU pad kernel exists (issue 5).
        samples = b._gpu.to_host()[0]
    else:
        samples = batch_samples(b)
    if not samples:
        raise ValueError("Cannot stack an empty batch into a tensor")
    shapes = {s.shape for s in samples}
    if len(shapes) == 1:
        return np.stack(samples)
    if not pad:
        raise ValueError(
            f"Cannot stack samples of different shapes {sorted(shapes)} into one tensor; pass pad=True"
        )
    ndim = samples[0].ndim
    full = tuple(max(s.shape[d] for s in samples) for d in range(ndim))
    out = np.zeros((len(samples),) + full, dtype=samples[0].dtype)
    for i, s in enumerate(samples):
        out[(i,) + tuple(slice(0, n) for n in s.shape)] = s
    return out


class ResultMetadata:
    """Metadata properties and device moves shared by Tensor and Batch."""

    __slots__ = ()

    @property
    def dtype(self) -> DType:
        """The element type (``ndd.DType``)."""
        return self._dtype

    @property
    def layout(self) -> str | None:
        """Names of the dimensions (e.g. ``"HWC"``), or None."""
        return self._layout or None

    @property
    def device(self) -> Device:
        """Where the data is (``ndd.Device``: CPU or a GPU)."""
        return self._device

    def cpu(self):
        """This data in host memory (self when already there)."""
        return self.to_device(Device.CPU)

    def gpu(self, index: int | None = None):
        """This data on GPU ``index`` (the current one by default)."""
        return self.to_device(Device("gpu", index))

    # -- copies and pickling ----------------------------------------------
    def __copy__(self):
        """Another object over the same data (or the same pending result)."""
        other = type(self).__new__(type(self))
        for name in self._FIELDS:
            value = getattr(self, name)
            setattr(other, name, list(value) if type(value) is list else value)
        return other

    def __deepcopy__(self, memo):
        """A copy of the data, on the same device."""
        from . import _batch

        return tensor(self) if isinstance(self, Tensor) else _batch.batch(self)

    def __reduce__(self):
        """Pickled as its host data, dtype and layout (a GPU result must move to the
        CPU first: the process that loads it may have no GPU)."""
        if self._device.device_type != "cpu":
            raise TypeError(
                f"a GPU {type(self).__name__} cannot be pickled; move it to the CPU with .cpu() first"
            )
        if isinstance(self, Tensor):
            data = np.asarray(self)
        else:
            data = [np.asarray(t) for t in self.tensors]
        return _unpickle, (type(self).__name__, data, str(self._dtype), self._layout or None)


def _unpickle(kind, data, dtype_name, layout):
    from . import _batch

    dtype = DType.parse(dtype_name)
    return (
        tensor(data, dtype=dtype, layout=layout)
        if kind == "Tensor"
        else _batch.batch(data, dtype=dtype, layout=layout)
    )


class Tensor(TensorBase, ResultMetadata):
    """A single sample: an n-dimensional array with a dtype, a layout and a device.

    Results of operators are Tensors whose metadata is known at once and whose data
    is computed asynchronously; reading the data (``np.asarray``, ``.torch()``,
    ``.item()``, printing) waits for it. Create tensors with ``ndd.tensor`` (copy)
    or ``ndd.as_tensor`` (no copy when possible).
    """

    __slots__ = ()
    __hash__ = None  # == is elementwise
    _FIELDS = (
        "_data",
        "_inv",
        "_out",
        "_sample",
        "_shape",
        "_dtype",
        "_layout",
        "_device",
        "_external",
        "_source_info",
    )

    def __init__(
        self,
        data=None,
        dtype=None,
        device=None,
        layout=None,
        batch=None,
        index_in_batch=None,
        invocation_result=None,
        copy=False,
    ):
        if batch is not None:
            src = batch.select(index_in_batch)
            data = src
        if data is None:
            raise ValueError("Tensor: data must be given")
        as_tensor_into(self, data, dtype, device, layout, copy=copy)

    # -- metadata ---------------------------------------------------------
    @property
    def shape(self) -> tuple:
        """The shape (a tuple of ints)."""
        if self._shape is None:
            tensor_data(self)
        return self._shape

    @property
    def ndim(self) -> int:
        """Number of dimensions (known without running the operator that makes the
        data when it has a layout)."""
        if self._shape is None and self._layout:
            return len(self._layout)
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._dtype.bytes

    @property
    def nbytes(self) -> int:
        """Bytes of the data: ``size * itemsize``."""
        return self.size * self._dtype.bytes

    # -- evaluation and transfer ------------------------------------------
    def evaluate(self) -> "Tensor":
        """Wait until the data is computed (raising a run-phase error); return self."""
        tensor_data(self)
        return self

    def to_device(self, device, force_copy: bool = False) -> "Tensor":
        """This tensor on ``device``: self if already there (unless ``force_copy``)."""
        dev = to_device(device)
        if dev == self._device and not force_copy:
            return self
        if dev.device_type == "cpu" and not _on_gpu(self):
            return tensor(self)
        return tensor(self, device=dev)

    def item(self):
        """The only element as a Python scalar."""
        arr = _to_host(tensor_data(self))
        if arr.size != 1:
            raise ValueError(f"Tensor has {arr.size} elements, expected 1")
        return arr.reshape(()).item()

    def torch(self, copy: bool = False):
        """A ``torch.Tensor`` sharing this tensor's memory (a copy if ``copy``)."""
        torch = torch_module("Tensor.torch()")
        t = torch.from_dlpack(self)
        return t.clone() if copy else t

    # -- array protocols --------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        if self._device.device_type != "cpu":
            raise TypeError("Cannot convert a GPU tensor to numpy. Use .cpu() first.")
        arr = tensor_data(self)
        if not isinstance(arr, np.ndarray):
            arr = np.asarray(arr)  # a numpy scalar an operator gave for a 0-D result
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        if copy:
            return arr.copy()
        return arr

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if _on_gpu(self):
            return tensor_data(self).__dlpack__(
                stream=stream, max_version=max_version, dl_device=dl_device, copy=copy
            )
        arr = np.asarray(self)
        if not arr.flags.writeable:
            arr = arr.copy()
        kwargs = {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if copy is not None:
            kwargs["copy"] = copy
        return arr.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        if self._device.device_type == "cpu":
            return (1, 0)
        return (2, self._device.device_id)

    @property
    def __cuda_array_interface__(self):
        if not _on_gpu(self):
            raise AttributeError("__cuda_array_interface__ is only available for GPU tensors")
        return tensor_data(self).__cuda_array_interface__

    # -- Python protocols -------------------------------------------------
    def __len__(self):
        # The reference has no __len__, so iterating a Tensor never ends there;
        # ndd iterates over the first dimension like numpy.
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        # The reference always returns True; ndd follows numpy.
        arr = np.asarray(self)
        if arr.size != 1:
            raise ValueError(
                f"The truth value of a tensor with {arr.size} elements is ambiguous; use ndd.reductions"
            )
        return bool(arr.reshape(()))

    def __int__(self):
        return int(self.item())

    def __float__(self):
        return float(self.item())

    def __getitem__(self, index):
        """Basic indexing, as numpy's: integers, slices with steps and Ellipsis; an
        integer drops its dimension (and its layout letter). Integers may be given as
        0-D Tensors; a float Tensor or numpy float is rounded to the nearest integer
        (halves away from zero) and a Python float cut toward zero, as the reference
        does. The result is a view."""
        from ._ops.indexing import subscript

        return subscript(self, index)

    def __repr__(self):
        arr = _to_host(tensor_data(self))
        body = (
            np.array2string(arr, prefix="    ", edgeitems=2) if arr.dtype.kind != "V" else str(arr.tolist())
        )
        lines = ["Tensor(", f"    {body},", f"    dtype={self._dtype},"]
        if self._layout:
            lines.append(f'    layout="{self._layout}",')
        lines.append(f'    device="{self._device}",')
        lines.append(f"    shape={tuple(arr.shape)})")
        return "\n".join(lines)

    __str__ = __repr__

    def _repr_png_(self):
        """Jupyter: an image Tensor (HWC, CHW or HW; uint8 or float) shows as a picture."""
        from .display import repr_png

        return repr_png(self)

    def _repr_html_(self):
        from .display import repr_html

        return repr_html(self)


def convert_values(arr, dt):
    """Array ``arr`` converted to DType ``dt`` as the reference converts data given
    with ``dtype=``: with the rules of ``cast`` (round half away from zero,
    saturate). Python numbers are converted by ``python_values`` instead."""
    return cast_array(arr, numpy_dtype(dt))


def as_tensor_into(t, data, dtype=None, device=None, layout=None, pad=False, copy=False):
    """Initialise Tensor ``t`` from tensor-like ``data`` (shared by the constructor
    and the factories)."""
    dt = _types.dtype(dtype) if dtype is not None else None
    dev = to_device(device) if device is not None else None
    # The GPU data source's device, or the target when it is a GPU: None while
    # both are the host.
    gpu = dev if dev is not None and dev.device_type != "cpu" else None
    if isinstance(data, TensorBase):
        src_dev = data._device
        if dt is None and not copy and data._data is None and (dev is None or dev == src_dev):
            # Share the pending result: the new tensor waits on the same invocation.
            t._inv, t._out, t._sample = data._inv, data._out, data._sample
            t._shape, t._dtype, t._device = data._shape, data._dtype, src_dev
            t._layout = data._layout if layout is None else _check_layout(layout, len(data.shape))
            t._external = data._external
            return t
        arr = tensor_data(data)
        base_dt = data._dtype
        external = data._external
        if layout is None:
            layout = data._layout
        if gpu is None and src_dev.device_type != "cpu":
            gpu = src_dev
    elif isinstance(data, BatchBase):
        arr = _stack_batch(data, pad)
        base_dt = data._dtype
        external = False
        if layout is None and (data._layout or arr.ndim == 1):
            layout = "N" + (data._layout or "")  # as the reference: the samples' layout behind N
        if gpu is None and data._device.device_type != "cpu":
            gpu = data._device
    elif not isinstance(data, _HOST_TYPES) and is_gpu_data(data):
        from ._cuda.device_array import from_foreign

        arr = from_foreign(data)
        base_dt = DType.from_fw_type(arr.dtype)
        external = True
        if gpu is None:
            gpu = Device("gpu", arr.device_id)
    elif dt is not None and isinstance(data, _PYTHON_TYPES):
        arr, external, base_dt = python_values(data, dt), False, dt
    else:
        arr, external, enum_dt = to_array(data)
        base_dt = enum_dt if enum_dt is not None else DType.from_fw_type(arr.dtype)
    if gpu is not None:
        target = dev if dev is not None else gpu
        return _device_tensor_into(t, arr, base_dt, dt, target, layout, copy, external)
    if dt is not None and dt != base_dt:
        arr = convert_values(arr, dt)
        external = False
    else:
        dt = base_dt
        if copy:
            arr = arr.copy()
            external = False
    _fill(t, arr, dt, layout, Device.CPU, external)
    return t


def _device_tensor_into(t, arr, base_dt, dt, dev, layout, copy, external):
    """The part of ``as_tensor_into`` where the source or the target is a GPU."""
    if dt is not None and dt != base_dt:
        # Conversions run on the host until the GPU cast kernel exists (issue 5).
        host = convert_values(_to_host(arr), dt)
        arr, external = host, False
    else:
        dt = base_dt
    arr, moved = _place(arr, dev)
    if moved:
        external = False
    elif copy:
        arr = arr.copy()
        external = False
    _fill(t, arr, dt, layout, dev, external)
    return t


# Data that is never in GPU memory: no protocol attributes to look up.
_HOST_TYPES = (np.ndarray, np.generic, bool, int, float, list, tuple)
# Python data, converted to a requested type by python_values.
_PYTHON_TYPES = (bool, int, float, list, tuple)


def as_tensor(data, dtype=None, device=None, layout=None, pad=False) -> Tensor:
    """Wrap ``data`` as a Tensor without copying when possible.

    ``data`` may be a numpy array, an object with ``__dlpack__`` or
    ``__array_interface__``, a torch tensor, a Python scalar or nested list, a
    Tensor (a new Tensor sharing its storage is returned) or a Batch (stacked into
    one tensor; samples of different shapes need ``pad=True``).
    """
    t = Tensor.__new__(Tensor)
    as_tensor_into(t, data, dtype, device, layout, pad=pad)
    if EvalMode.current().value > 2:
        tensor_data(t)
    return t


def tensor(data, dtype=None, device=None, layout=None, pad=False) -> Tensor:
    """A Tensor holding a copy of ``data`` (see ``as_tensor`` for what ``data`` may be)."""
    t = Tensor.__new__(Tensor)
    as_tensor_into(t, data, dtype, device, layout, pad=pad, copy=True)
    return t
