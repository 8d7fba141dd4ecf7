"""``Batch``: a list of samples sharing dtype, dimensionality and layout."""

import numpy as np

from . import _types
from ._convert import is_gpu_data, numpy_dtype, python_values, to_array
from ._eval.device import Device
from ._eval.device import device as to_device
from ._eval.mode import EvalMode
from ._optional import torch_module
from ._prepare.storage import (
    BatchBase,
    TensorBase,
    batch_dense,
    batch_ready,
    batch_samples,
    batch_wait,
    empty_sample_shape,
    tensor_data,
)
from ._tensor import (
    _HOST_TYPES,
    _PYTHON_TYPES,
    ResultMetadata,
    Tensor,
    _check_layout,
    _on_gpu,
    _stack_batch,
    convert_values,
)
from ._types import DType

__all__ = ["Batch", "batch", "as_batch"]


_CPU = Device.CPU


def _sample_array(x, index, dt=None, will_copy=False):
    """The array, DType and layout of sample ``index`` given as ``x``; Python numbers
    are made of DType ``dt`` when it is given. With ``will_copy`` (the batch copies its
    samples) a read-only numpy array is taken as it is, not copied first."""
    if will_copy and type(x) is np.ndarray:
        return x, DType.from_fw_type(x.dtype), ""
    if x is None:
        raise TypeError(f"Batch: sample {index} is None")
    if isinstance(x, TensorBase):
        if x._device is not _CPU and x._device.device_type != "cpu":
            raise ValueError(f"Batch: sample {index} is on {x._device} while sample 0 is in host memory")
        return tensor_data(x), x._dtype, x._layout
    if isinstance(x, BatchBase):
        raise TypeError(f"Batch: sample {index} is a Batch; samples must be tensor-like")
    if dt is not None and isinstance(x, _PYTHON_TYPES):
        return python_values(x, dt), dt, ""
    arr, _, enum_dt = to_array(x)
    return arr, enum_dt if enum_dt is not None else DType.from_fw_type(arr.dtype), ""


def _is_gpu_sample(x) -> bool:
    if isinstance(x, TensorBase):
        return x._device is not _CPU and x._device.device_type != "cpu"
    return not isinstance(x, _HOST_TYPES) and is_gpu_data(x)


def _has_gpu_source(tensors) -> bool:
    if isinstance(tensors, (list, tuple)):
        # The first sample decides; the host path refuses GPU samples after it.
        return bool(tensors) and _is_gpu_sample(tensors[0])
    if isinstance(tensors, BatchBase):
        return tensors._device is not _CPU and tensors._device.device_type != "cpu"
    return _is_gpu_sample(tensors)


def _init_batch(b, tensors, dtype, device, layout, copy):
    if device is not None:
        dev = to_device(device)
        if dev.device_type != "cpu" or _has_gpu_source(tensors):
            return _init_device_batch(b, tensors, dtype, dev, layout, copy)
    elif _has_gpu_source(tensors):
        return _init_device_batch(b, tensors, dtype, None, layout, copy)
    dt = _types.dtype(dtype) if dtype is not None else None
    whole = None  # the samples as one array with a leading sample dimension, when given so
    # Whether the samples are memory the caller owns (and may overwrite), rather
    # than data ndd computed.
    external = True
    if isinstance(tensors, BatchBase):
        whole = batch_dense(tensors)
        samples = list(batch_samples(tensors))
        src_dt, src_layout = tensors._dtype, tensors._layout
        external = tensors._external
    elif (
        isinstance(tensors, TensorBase)
        or not isinstance(tensors, (list, tuple))
        and (
            hasattr(tensors, "__array__") or hasattr(tensors, "__dlpack__") or isinstance(tensors, np.ndarray)
        )
    ):
        if isinstance(tensors, TensorBase):
            whole, src_dt, src_layout = tensor_data(tensors), tensors._dtype, tensors._layout[1:]
            external = tensors._external
        else:
            whole, src_dt, src_layout = _sample_array(tensors, 0, will_copy=copy)
        if whole.ndim == 0:
            raise ValueError("Cannot create a batch from a scalar")
        samples = list(whole)
    else:
        if isinstance(tensors, (str, bytes)) or not hasattr(tensors, "__iter__"):
            raise TypeError(f"Cannot create a batch from {type(tensors).__name__}")
        samples, src_dt, src_layout = [], None, ""
        external = False
        for i, x in enumerate(tensors):
            external |= not isinstance(x, TensorBase) or x._external
            arr, sdt, slayout = _sample_array(x, i, dt, will_copy=copy)
            if src_dt is None:
                src_dt, src_layout = sdt, slayout
            elif samples and arr.ndim != samples[0].ndim:
                raise ValueError(
                    f"Batch: all samples must have the same number of dimensions; sample 0 has "
                    f"{samples[0].ndim}, sample {i} has {arr.ndim}"
                )
            elif sdt != src_dt:
                # Converted as data given with dtype= is (the reference rounds and saturates).
                arr = convert_values(arr, src_dt)
            samples.append(arr)
        if src_dt is None:
            if dt is None:
                raise ValueError("Element type must be specified if the list is empty")
            src_dt = dt
    shapes = [s.shape for s in samples]
    uniform = len(set(shapes)) <= 1
    converted = dt is not None and dt != src_dt
    if not converted:
        dt = src_dt
    if uniform and samples and (copy or converted):
        # One copy into dense storage: later operators can process the batch in one call.
        dense = whole if whole is not None else np.stack(samples)
        b._dense = convert_values(dense, dt) if converted else (dense.copy() if whole is not None else dense)
        b._samples = None
    elif converted:
        b._samples = [convert_values(s, dt) for s in samples]
    else:
        b._samples = [s.copy() for s in samples] if copy else samples
        b._dense = whole
    if layout is None:
        layout = src_layout
    if samples:
        ndim = len(shapes[0])
    else:
        # No samples: the shape they would have, from the array or Batch given.
        if whole is not None:
            b._empty_shape = whole.shape[1:]
        elif isinstance(tensors, BatchBase):
            b._empty_shape = empty_sample_shape(tensors)
        ndim = len(b._empty_shape) if b._empty_shape is not None else len(layout or "")
    b._shapes = shapes
    b._uniform = uniform
    b._dtype = dt
    b._layout = _check_layout(layout, ndim)
    b._device = Device.CPU
    b._batch_size = len(samples)
    b._external = external and not copy and not converted
    return b


def _gpu_source(tensors):
    """``(DeviceBatch, dtype, layout, external, copied)`` of a batch-like whose
    data is on a GPU."""
    from ._cuda.device_array import DeviceBatch, from_foreign

    if isinstance(tensors, BatchBase):
        batch_wait(tensors)
        return tensors._gpu, tensors._dtype, tensors._layout, tensors._external, False
    if not isinstance(tensors, (list, tuple)):
        if isinstance(tensors, TensorBase):
            whole, src_dt, src_layout = tensor_data(tensors), tensors._dtype, tensors._layout[1:]
            external = tensors._external
        else:
            whole = from_foreign(tensors, "ndd.batch")
            src_dt, src_layout, external = DType.from_fw_type(whole.dtype), "", True
        if whole.ndim == 0:
            raise ValueError("Cannot create a batch from a scalar")
        return DeviceBatch.wrap(whole), src_dt, src_layout, external, False
    arrays, src_dt, src_layout = [], None, ""
    for i, x in enumerate(tensors):
        if isinstance(x, TensorBase) and _on_gpu(x):
            arr, sdt, slayout = tensor_data(x), x._dtype, x._layout
        elif _is_gpu_sample(x):
            arr = from_foreign(x, "ndd.batch")
            sdt, slayout = DType.from_fw_type(arr.dtype), ""
        else:
            raise ValueError(f"Batch: sample {i} is in host memory while others are on a GPU")
        if src_dt is None:
            src_dt, src_layout = sdt, slayout
        elif arr.ndim != arrays[0].ndim:
            raise ValueError(
                f"Batch: all samples must have the same number of dimensions; sample 0 has "
                f"{arrays[0].ndim}, sample {i} has {arr.ndim}"
            )
        elif sdt != src_dt:
            raise TypeError(
                f"Batch: GPU samples must share one dtype; sample 0 is {src_dt}, sample {i} is {sdt}"
            )
        arrays.append(arr)
    gathered = DeviceBatch.from_device(arrays, numpy_dtype(src_dt), arrays[0].device_id)
    return gathered, src_dt, src_layout, False, True


def _init_device_batch(b, tensors, dtype, dev, layout, copy):
    """``_init_batch`` where the source or the target is a GPU: the samples end in
    one allocation (a DeviceBatch) on a GPU target."""
    from ._cuda.device_array import DeviceBatch

    dt = _types.dtype(dtype) if dtype is not None else None
    if _has_gpu_source(tensors):
        data, src_dt, src_layout, external, copied = _gpu_source(tensors)
        if dev is None:
            dev = Device("gpu", data.device_id)
    else:
        host = Batch.__new__(Batch)
        _init_batch(host, tensors, dtype, None, layout, copy=False)
        dense = batch_dense(host)
        samples = batch_samples(host)
        data = DeviceBatch.from_host(samples, numpy_dtype(host._dtype), dev.device_id, dense)
        src_dt, src_layout, external, copied = host._dtype, host._layout, False, True
    if layout is None:
        layout = src_layout
    if dt is None or dt == src_dt:
        dt = src_dt
        converted = False
    else:
        converted = True
    if dev.device_type == "cpu" or converted:
        samples, dense = data.to_host()
        if converted:
            # Conversions run on the host until the GPU cast kernel exists (issue 5).
            if dense is not None:
                dense = convert_values(dense, dt)
            else:
                samples = [convert_values(s, dt) for s in samples]
        if dev.device_type == "cpu":
            b._dense, b._samples, b._gpu = dense, samples, None
            _set_batch_metadata(b, dt, layout, Device.CPU)
            return b
        data = DeviceBatch.from_host(
            samples if samples is not None else list(dense), numpy_dtype(dt), dev.device_id, dense
        )
        copied = True
    if data.device_id != dev.device_id:
        data = data.copy(dev.device_id)
    elif copy and not copied:
        data = data.copy()
    b._gpu, b._samples, b._dense = data, None, None
    b._external = external and not copy and not copied
    _set_batch_metadata(b, dt, layout, dev)
    return b


def _set_batch_metadata(b, dt, layout, dev):
    if b._gpu is not None:
        shapes = [tuple(s) for s in b._gpu.shapes]
    else:
        shapes = [s.shape for s in (b._samples if b._samples is not None else batch_samples(b))]
    b._shapes = shapes
    b._uniform = len(set(shapes)) <= 1
    b._dtype = dt
    b._layout = _check_layout(layout, len(shapes[0]) if shapes else len(layout or ""))
    b._device = dev
    b._batch_size = len(shapes)


class _TensorList:
    """Indexable view of a batch's samples: ``batch.tensors[i]`` is a Tensor."""

    def __init__(self, batch, indices=None):
        self._batch = batch
        self._indices = list(range(batch.batch_size)) if indices is None else indices

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return _TensorList(self._batch, self._indices[index])
        if isinstance(index, (list, tuple)):
            return _TensorList(self._batch, [self._indices[i] for i in index])
        return self._batch.select(self._indices[index])

    def __iter__(self):
        for i in self._indices:
            yield self._batch.select(i)

    def select(self, sample_range):
        return self._batch.select(sample_range)

    def tolist(self):
        return [self._batch.select(i) for i in self._indices]

    def as_batch(self, copy=False):
        selected = self._batch.select(self._indices)
        return batch(selected) if copy else selected


class _BatchSlicer:
    """``batch.slice[...]``: the same index applied to every sample."""

    def __init__(self, batch):
        self._batch = batch

    def __getitem__(self, index):
        from ._ops.indexing import subscript

        return subscript(self._batch, index)


class Batch(BatchBase, ResultMetadata):
    """A batch of samples (Tensors) with one dtype, dimensionality and layout;
    shapes may differ. Operators given a Batch return a Batch.

    Not subscriptable: use ``select(i)``, ``tensors[i]``, ``slice[...]`` or iterate.
    """

    __slots__ = ()
    __hash__ = None
    _FIELDS = (
        "_samples",
        "_dense",
        "_gpu",
        "_uniform",
        "_inv",
        "_out",
        "_shapes",
        "_dtype",
        "_layout",
        "_device",
        "_batch_size",
        "_external",
        "_source_info",
        "_empty_shape",
    )

    def __init__(
        self, tensors=None, dtype=None, device=None, layout=None, invocation_result=None, copy=False
    ):
        if tensors is None:
            tensors = []
        _init_batch(self, tensors, dtype, device, layout, copy)

    @staticmethod
    def broadcast(sample, batch_size: int, device=None, dtype=None) -> "Batch":
        """A batch of ``batch_size`` copies of ``sample``."""
        if isinstance(batch_size, float) and batch_size.is_integer():
            batch_size = int(batch_size)  # as the reference takes 2.0
        if isinstance(batch_size, bool) or not hasattr(batch_size, "__index__") or batch_size < 0:
            raise ValueError(
                f"Batch.broadcast: 'batch_size' must be a non-negative integer, got {batch_size!r}"
            )
        batch_size = int(batch_size)
        t = sample if isinstance(sample, TensorBase) else Tensor(sample, dtype=dtype, device=device)
        dt = t._dtype if dtype is None else _types.dtype(dtype)
        if _on_gpu(t):
            return batch([t] * batch_size, dtype=dt, layout=t._layout or None)
        arr = tensor_data(t)
        if dt != t._dtype:
            arr = convert_values(arr, dt)
        b = as_batch([arr] * batch_size, dtype=dt, layout=t._layout or None)
        b._empty_shape = arr.shape
        b._external = t._external and dtype is None
        return b

    # -- metadata ---------------------------------------------------------
    @property
    def batch_size(self) -> int:
        """Number of samples."""
        return self._batch_size

    @property
    def shape(self) -> list:
        """Per-sample shapes, a list of tuples."""
        if self._shapes is None:
            batch_wait(self)
            if self._shapes is None:
                batch_samples(self)
        return list(self._shapes)

    @property
    def ndim(self) -> int:
        """Number of dimensions of each sample (they all have the same; known without
        running the operator that makes the data when the batch has a layout)."""
        if self._shapes is None and self._layout:
            return len(self._layout)
        shapes = self.shape
        if shapes:
            return len(shapes[0])
        if self._layout:
            return len(self._layout)
        # No samples: what they would have (see empty_sample_shape).
        shape = empty_sample_shape(self)
        return 0 if shape is None else len(shape)

    @property
    def tensors(self) -> _TensorList:
        """The samples as a sequence of ``Tensor``: ``batch.tensors[i]``, ``len(batch.tensors)``."""
        return _TensorList(self)

    @property
    def slice(self) -> _BatchSlicer:
        """Index every sample alike: ``batch.slice[1:3, ::2]`` (see ``Tensor`` indexing)."""
        return _BatchSlicer(self)

    # -- evaluation and transfer ------------------------------------------
    def evaluate(self) -> "Batch":
        """Run the work that produces this batch, if not done yet, and return the batch."""
        batch_wait(self)
        return self

    def to_device(self, device, force_copy: bool = False) -> "Batch":
        """The batch on ``device`` (``"cpu"``, ``"gpu"``, ``"gpu:1"`` or an ``ndd.Device``); itself when already there, unless ``force_copy``."""
        dev = to_device(device)
        if dev == self._device and not force_copy:
            return self
        if dev.device_type == "cpu" and not _on_gpu(self):
            return batch(self)
        return batch(self, device=dev)

    def select(self, sample_range):
        """Sample ``i`` as a Tensor, or a Batch of the samples picked by a slice or a list."""
        if sample_range is Ellipsis:
            return self
        if isinstance(sample_range, slice):
            return self.select(list(range(self._batch_size))[sample_range])
        if isinstance(sample_range, (list, tuple)):
            gpu = batch_wait(self)
            indices = [self._check_index(i) for i in sample_range]
            if gpu is not None:
                picked = _from_device_batch(gpu.pick(indices), self._dtype, self._layout, self._device)
            else:
                samples = batch_samples(self)
                picked = _from_samples([samples[i] for i in indices], self._dtype, self._layout)
            if not indices:
                picked._empty_shape = self._shapes[0] if self._shapes else empty_sample_shape(self)
            picked._external = self._external
            if self._source_info is not None:
                picked._source_info = [self._source_info[i] for i in indices]
            return picked
        i = self._check_index(sample_range)
        t = Tensor.__new__(Tensor)
        t._dtype, t._layout, t._device = self._dtype, self._layout, self._device
        t._external = self._external
        if self._source_info is not None:
            t._source_info = self._source_info[i]
        if batch_ready(self):
            t._data = self._gpu.sample(i) if self._gpu is not None else batch_samples(self)[i]
            t._shape = t._data.shape
        else:
            t._inv, t._out, t._sample = self._inv, self._out, i
            t._shape = self._shapes[i] if self._shapes is not None else None
        return t

    def _check_index(self, i):
        if isinstance(i, TensorBase):
            i = int(i.item())
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"Batch.select: sample index must be an int, got {type(i).__name__}")
        i = int(i)
        if not -self._batch_size <= i < self._batch_size:
            raise IndexError(f"Batch.select: index {i} out of range for a batch of {self._batch_size}")
        return i % self._batch_size

    def torch(self, copy: bool | None = None, pad: bool = False):
        """The batch as one ``torch.Tensor`` with a leading sample dimension."""
        torch = torch_module("Batch.torch()")
        dense = batch_dense(self)
        if dense is not None:
            return torch.from_numpy(dense.copy() if copy else dense)
        if self._gpu is not None:
            whole = self._gpu.as_array()
            if whole is not None:
                return torch.from_dlpack(whole.copy() if copy else whole)
        if copy is False:
            raise ValueError("Batch.torch(copy=False): the samples are not stored in one contiguous buffer")
        stacked = _stack_batch(self, pad)
        if self._gpu is not None:
            from ._cuda.device_array import DeviceArray

            return torch.from_dlpack(DeviceArray.from_host(stacked, self._gpu.device_id))
        return torch.from_numpy(stacked)

    # -- Python protocols -------------------------------------------------
    def __iter__(self):
        for i in range(self._batch_size):
            yield self.select(i)

    def __getitem__(self, index):
        raise TypeError(
            "'Batch' object is not subscriptable: use batch.select(i) for sample i, "
            "or batch.slice[...] to index every sample"
        )

    def __repr__(self):
        if batch_wait(self) is not None:
            host_samples, dense = self._gpu.to_host()
            samples = host_samples if host_samples is not None else list(dense)
        else:
            samples = batch_samples(self)
        # As the reference prints it: numpy's summaries (two items at each end), and
        # samples apart by one line less than their dimensions, as numpy's nested rows.
        bodies = [np.array2string(s, prefix="    ", edgeitems=2) for s in samples]
        apart = ",\n" + "\n" * max(max((s.ndim for s in samples), default=1) - 1, 0) + "    "
        lines = ["Batch(", "    [" + apart.join(bodies) + "],", f"    dtype={self._dtype},"]
        if self._layout:
            lines.append(f'    layout="{self._layout}",')
        lines.append(f'    device="{self._device}",')
        lines.append(f"    num_samples={self._batch_size},")
        lines.append(f"    shape={[tuple(s.shape) for s in samples]})")
        return "\n".join(lines)

    __str__ = __repr__

    def _repr_png_(self):
        """Jupyter: an image Batch (HWC, CHW or HW; uint8 or float) shows as a picture."""
        from .display import repr_png

        return repr_png(self)

    def _repr_html_(self):
        from .display import repr_html

        return repr_html(self)


def _from_samples(samples, dt, layout):
    b = Batch.__new__(Batch)
    b._samples = samples
    b._shapes = [s.shape for s in samples]
    b._uniform = len(set(b._shapes)) <= 1
    b._dtype, b._layout, b._device = dt, layout, Device.CPU
    b._batch_size = len(samples)
    return b


def _from_device_batch(data, dt, layout, dev):
    """A GPU Batch over the DeviceBatch ``data`` (not copied)."""
    b = Batch.__new__(Batch)
    b._gpu, b._samples = data, None
    _set_batch_metadata(b, dt, layout, dev)
    return b


def _from_dense(array, dt, layout):
    """A Batch stored densely in ``array`` (leading dimension = samples), not copied."""
    b = Batch.__new__(Batch)
    b._dense = array
    b._shapes = [array.shape[1:]] * array.shape[0]
    b._uniform = True
    b._dtype, b._layout, b._device = dt, layout, Device.CPU
    b._batch_size = array.shape[0]
    return b


def as_batch(tensors, dtype=None, device=None, layout=None) -> Batch:
    """A Batch over ``tensors`` without copying when possible.

    ``tensors`` may be a Batch, a list of tensor-likes (one per sample), or one
    tensor-like whose first dimension indexes the samples. A Batch that needs no
    change is returned itself, as in the reference.
    """
    if isinstance(tensors, Batch) and dtype is None and device is None and layout is None:
        return tensors
    b = Batch.__new__(Batch)
    _init_batch(b, tensors, dtype, device, layout, copy=False)
    return b


def batch(tensors, dtype=None, device=None, layout=None) -> Batch:
    """A Batch holding copies of ``tensors`` (see ``as_batch``)."""
    b = Batch.__new__(Batch)
    _init_batch(b, tensors, dtype, device, layout, copy=True)
    if EvalMode.current().value > 2:
        batch_samples(b)
    return b
