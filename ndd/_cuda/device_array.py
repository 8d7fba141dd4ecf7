"""GPU data of Tensors and Batches, transfers, and zero-copy interop.

A ``DeviceArray`` is a C-contiguous n-dimensional array in device memory: an
owner that keeps the memory valid (a ``DeviceBuffer`` from ndd's pool, or the
foreign object it was imported from), a byte offset into it, a shape, a numpy
dtype, the device and the stream whose work produces its contents. A
``DeviceBatch`` is the samples of a GPU Batch in one allocation, each at its own
byte offset with its own shape, so that one kernel launch can process them all.

Every copy is queued on the stream of the calling thread's ``EvalContext`` for
the device, after the work of the data's producing stream (an event orders the
two). Device-to-host copies synchronise that stream before numpy sees the data.

Exports follow the protocols' stream rules: ``__cuda_array_interface__`` names
the producing stream (CAI v3), and ``__dlpack__(stream=s)`` makes the
consumer's stream ``s`` wait for it. Imports of foreign GPU arrays (CAI first,
then DLPack on kDLCUDA) copy nothing: they keep the foreign object alive and make
ndd's stream wait for the producer's.
"""

import numpy as np

from .._cpu import host_pool
from .._prepare.storage import register_device_batch_type
from . import driver, pinned
from .context import make_current, state
from .memory import DeviceBuffer
from .streams import _device_of, order_after, synchronize

__all__ = [
    "DeviceArray",
    "DeviceBatch",
    "current_stream",
    "from_foreign",
]

KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_MANAGED = 13
# DLPack type codes.
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT, _DL_COMPLEX, _DL_BOOL = 0, 1, 2, 4, 5, 6
_DL_CODES = {"i": _DL_INT, "u": _DL_UINT, "f": _DL_FLOAT, "c": _DL_COMPLEX, "b": _DL_BOOL}
# CU_STREAM_LEGACY: what the protocols' "1" names, and what a DLPack consumer
# passing stream=None means.
_LEGACY_STREAM = 1
# Samples of a ragged batch start at multiples of this many bytes (the alignment
# of the pool's allocations), so kernels may use vector loads on any sample.
SAMPLE_ALIGNMENT = 256


def _handle(stream) -> int:
    return int(stream) if isinstance(stream, int) else int(stream.handle)


def _dl_dtype(dtype: np.dtype) -> tuple:
    """``(code, bits, lanes)`` of a numpy dtype."""
    if dtype.name == "bfloat16":
        return (_DL_BFLOAT, 16, 1)
    code = _DL_CODES.get(dtype.kind)
    if code is None:
        raise BufferError(f"DLPack export: dtype {dtype} has no DLPack type")
    return (code, dtype.itemsize * 8, 1)


def _numpy_dtype(code: int, bits: int, lanes: int) -> np.dtype:
    if lanes != 1:
        raise BufferError(f"DLPack import: vector types (lanes={lanes}) are not supported")
    if code == _DL_BFLOAT and bits == 16:
        from .._types import bfloat16

        return np.dtype(bfloat16.numpy)
    kinds = {_DL_INT: "i", _DL_UINT: "u", _DL_FLOAT: "f", _DL_COMPLEX: "c", _DL_BOOL: "b"}
    if code not in kinds or bits % 8:
        raise BufferError(f"DLPack import: type code {code} with {bits} bits is not supported")
    return np.dtype(f"{kinds[code]}{bits // 8}") if code != _DL_BOOL else np.dtype(np.bool_)


def _c_strides(shape, itemsize):
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _is_c_contiguous(shape, strides, itemsize) -> bool:
    if strides is None:
        return True
    # Strides of dimensions of extent 1 (and of empty arrays) do not matter.
    if any(n == 0 for n in shape):
        return True
    expected = _c_strides(shape, itemsize)
    return all(n == 1 or s == e for n, s, e in zip(shape, strides, expected, strict=True))


def current_stream(device_id: int):
    """The stream ndd queues work on for ``device_id``: the current EvalContext's
    when it is on that device, else this thread's default context's there."""
    from .._eval.context import EvalContext
    from .._eval.device import Device

    ctx = EvalContext.current()
    if ctx.device_id == device_id:
        stream = ctx.cuda_stream
        if stream is not None:
            return stream
    with Device("gpu", device_id):
        return EvalContext.default().cuda_stream


def _c_order(array: np.ndarray) -> np.ndarray:
    # Unlike np.ascontiguousarray, keeps 0-d arrays 0-d.
    return array if array.flags.c_contiguous else array.copy(order="C")


def _nbytes(shape, itemsize) -> int:
    n = itemsize
    for extent in shape:
        n *= extent
    return n


class DeviceArray:
    """A C-contiguous array in GPU memory (see the module docstring).

    Parameters
    ----------
    owner : DeviceBuffer or object
        Keeps the memory valid while the array (or an export of it) lives.
    ptr : int
        Address of the first element (``offset`` already added).
    shape : tuple of int
    dtype : numpy.dtype
    device_id : int
    stream : Stream or int
        The stream whose queued work writes the contents.
    offset : int
        Byte offset of ``ptr`` from the start of ``owner``'s memory.
    """

    __slots__ = ("owner", "ptr", "offset", "shape", "dtype", "device_id", "stream", "__weakref__")

    def __init__(self, owner, ptr, shape, dtype, device_id, stream, offset=0):
        self.owner = owner
        self.ptr = int(ptr)
        self.offset = offset
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.device_id = device_id
        self.stream = stream

    # -- construction ------------------------------------------------------------

    @staticmethod
    def empty(shape, dtype, device_id: int, stream=None) -> "DeviceArray":
        """An uninitialised array allocated in order on ``stream`` (default: the
        current stream of the device)."""
        if stream is None:
            stream = current_stream(device_id)
        dtype = np.dtype(dtype)
        buffer = DeviceBuffer(_nbytes(shape, dtype.itemsize), stream, device_id)
        return DeviceArray(buffer, buffer.ptr, shape, dtype, device_id, stream)

    @staticmethod
    def from_host(array: np.ndarray, device_id: int, stream=None) -> "DeviceArray":
        """A copy of host ``array`` on ``device_id``, queued on ``stream``."""
        array = _c_order(array)
        out = DeviceArray.empty(array.shape, array.dtype, device_id, stream)
        out.copy_from_host(array)
        return out

    def copy_from_host(self, array: np.ndarray) -> None:
        """Queue a copy of host ``array`` (C-contiguous, ``nbytes`` bytes) into this array."""
        nbytes = array.nbytes
        if nbytes:
            api = state().api
            # A pageable source is staged before the call returns; a pinned one is
            # read later, so the caller keeps it alive until the stream gets there.
            driver.check(
                api.cuMemcpyHtoDAsync(self.ptr, array.ctypes.data, nbytes, _handle(self.stream)),
                f"copying {nbytes} bytes to device {self.device_id}",
            )

    def clear(self) -> None:
        """Queue the zeroing of every byte of this array on its stream."""
        nbytes = self.nbytes
        if nbytes:
            driver.check(
                state().api.cuMemsetD8Async(self.ptr, 0, nbytes, _handle(self.stream)),
                f"clearing {nbytes} bytes on device {self.device_id}",
            )

    # -- metadata ------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return _nbytes(self.shape, 1)

    @property
    def nbytes(self) -> int:
        return _nbytes(self.shape, self.dtype.itemsize)

    @property
    def strides(self) -> tuple:
        """Byte strides (C order)."""
        return _c_strides(self.shape, self.dtype.itemsize)

    @property
    def stream_handle(self) -> int:
        return _handle(self.stream)

    def view(self, byte_offset: int, shape, dtype=None) -> "DeviceArray":
        """An array over this one's memory from ``byte_offset`` (sharing the owner)."""
        return DeviceArray(
            self.owner,
            self.ptr + byte_offset,
            shape,
            self.dtype if dtype is None else dtype,
            self.device_id,
            self.stream,
            self.offset + byte_offset,
        )

    def reshape(self, shape) -> "DeviceArray":
        if _nbytes(shape, 1) != self.size:
            raise ValueError(f"cannot reshape a device array of shape {self.shape} into {tuple(shape)}")
        return self.view(0, shape)

    # -- streams -------------------------------------------------------------------

    def order_before(self, stream) -> None:
        """Make work queued later on ``stream`` see this array's contents, and note
        that the memory is used there (it is freed in order on that stream)."""
        handle = _handle(stream)
        producer = self.stream_handle
        if handle != producer:
            make_current(self.device_id)  # the event that orders them is made on this device
            order_after(handle, producer, self.device_id)
        if isinstance(self.owner, DeviceBuffer):
            self.owner.record_use(stream)

    # -- copies --------------------------------------------------------------------

    def to_host(self, out: np.ndarray | None = None) -> np.ndarray:
        """The contents as a numpy array (waits for the copy to complete)."""
        if out is None:
            # A large array in page-locked memory, which the GPU writes directly; a small
            # one (or one without page-locked memory to be had) from ndd's host pool,
            # whose pages are mapped already rather than faulted in by the copy.
            out = pinned.empty(self.shape, self.dtype, self.device_id)
        if out is None:
            previous = host_pool.activate()
            try:
                out = np.empty(self.shape, self.dtype)
            finally:
                host_pool.restore(previous)
        stream = current_stream(self.device_id)
        self.order_before(stream)
        nbytes = self.nbytes
        if nbytes:
            driver.check(
                state().api.cuMemcpyDtoHAsync(out.ctypes.data, self.ptr, nbytes, _handle(stream)),
                f"copying {nbytes} bytes from device {self.device_id}",
            )
        synchronize(_handle(stream))
        return out

    def copy(self, device_id: int | None = None) -> "DeviceArray":
        """A copy in a new allocation (on ``device_id``, this device by default)."""
        device_id = self.device_id if device_id is None else device_id
        stream = current_stream(device_id)
        out = DeviceArray.empty(self.shape, self.dtype, device_id, stream)
        self.order_before(stream)
        make_current(device_id)  # the copy is queued on a stream of the target device
        nbytes = self.nbytes
        if nbytes:
            driver.check(
                state().api.cuMemcpyDtoDAsync(out.ptr, self.ptr, nbytes, _handle(stream)),
                f"copying {nbytes} bytes on device {self.device_id}",
            )
        return out

    # -- exports -------------------------------------------------------------------

    @property
    def __cuda_array_interface__(self) -> dict:
        handle = self.stream_handle
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "strides": None,
            "version": 3,
            # 0 is not allowed: the legacy default stream is spelled 1.
            "stream": handle if handle != 0 else _LEGACY_STREAM,
        }

    def __dlpack_device__(self) -> tuple:
        return (KDL_CUDA, self.device_id)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        from . import dlpack

        if dl_device is not None and tuple(int(v) for v in dl_device) != (KDL_CUDA, self.device_id):
            raise BufferError(
                f"DLPack export: the data is on GPU {self.device_id}; dl_device={tuple(dl_device)} "
                "would need a copy across devices (use .cpu() or .gpu(index))"
            )
        if stream is not None and not isinstance(stream, int):
            raise TypeError(f"__dlpack__: stream must be an int or None, got {type(stream).__name__}")
        if stream == 0:
            raise ValueError("__dlpack__: stream=0 is ambiguous; pass 1 for the legacy default stream")
        source = self.copy() if copy else self
        if stream != -1:
            consumer = _LEGACY_STREAM if stream is None else stream
            make_current(self.device_id)
            order_after(consumer, source.stream_handle, self.device_id)
        versioned = max_version is not None and tuple(max_version)[0] >= dlpack.DLPACK_MAJOR
        return dlpack.export_capsule(
            source, source.ptr, source.shape, _dl_dtype(source.dtype), KDL_CUDA, self.device_id, versioned
        )

    def __repr__(self):
        return (
            f"DeviceArray(ptr={self.ptr:#x}, shape={self.shape}, dtype={self.dtype}, "
            f"device_id={self.device_id}, stream={self.stream_handle:#x})"
        )


class DeviceBatch:
    """The samples of a GPU batch in one allocation ``data`` (a 1-D uint8
    DeviceArray): sample ``i`` has ``shapes[i]`` and starts ``offsets[i]`` bytes
    into it. ``dense`` says the samples share one shape and follow each other
    without gaps (the whole is then one array with a leading sample dimension)."""

    __slots__ = ("data", "offsets", "shapes", "dtype", "dense")

    def __init__(self, data, offsets, shapes, dtype, dense):
        self.data = data
        self.offsets = offsets
        self.shapes = shapes
        self.dtype = np.dtype(dtype)
        self.dense = dense

    def __len__(self):
        return len(self.shapes)

    @property
    def device_id(self) -> int:
        return self.data.device_id

    def sample(self, i: int) -> DeviceArray:
        return self.data.view(self.offsets[i], self.shapes[i], self.dtype)

    def samples(self) -> list:
        return [self.sample(i) for i in range(len(self.shapes))]

    def as_array(self) -> DeviceArray | None:
        """The samples as one array with a leading sample dimension (None unless dense)."""
        if not self.dense or not self.shapes:
            return None
        return self.data.view(0, (len(self.shapes),) + tuple(self.shapes[0]), self.dtype)

    def pick(self, indices) -> "DeviceBatch":
        """The samples at ``indices`` (a list of ints), sharing this batch's allocation."""
        offsets = [self.offsets[i] for i in indices]
        shapes = [self.shapes[i] for i in indices]
        step = _nbytes(shapes[0], self.dtype.itemsize) if shapes else 0
        dense = len(set(shapes)) <= 1 and offsets == [k * step for k in range(len(offsets))]
        return DeviceBatch(self.data, offsets, shapes, self.dtype, dense)

    def copy(self, device_id: int | None = None) -> "DeviceBatch":
        """A copy in a new allocation (on ``device_id``, this device by default)."""
        return DeviceBatch(self.data.copy(device_id), self.offsets, self.shapes, self.dtype, self.dense)

    def unstack(self) -> "DeviceBatch":
        """The slices of every sample along its first dimension, in order, as the
        samples of one batch sharing this batch's allocation (nothing is copied)."""
        offsets, shapes = [], []
        for offset, shape in zip(self.offsets, self.shapes, strict=True):
            step = _nbytes(shape[1:], self.dtype.itemsize)
            offsets += [offset + k * step for k in range(shape[0])]
            shapes += [tuple(shape[1:])] * shape[0]
        step = _nbytes(shapes[0], self.dtype.itemsize) if shapes else 0
        dense = len(set(shapes)) <= 1 and offsets == [k * step for k in range(len(offsets))]
        return DeviceBatch(self.data, offsets, shapes, self.dtype, dense)

    def stack_runs(self, counts) -> "DeviceBatch":
        """Runs of consecutive samples (``counts`` of them each, in order) stacked, a
        run becoming one sample with a leading dimension of its length. A run whose
        samples share a shape and follow each other without gaps is a view; the
        others are gathered into a new allocation, a copy per sample."""
        runs, start = [], 0
        for count in counts:
            runs.append(range(start, start + count))
            start += count
        shapes = []
        for run in runs:
            frame = {tuple(self.shapes[k]) for k in run}
            if len(frame) > 1:
                raise ValueError(f"cannot stack samples of shapes {sorted(frame)} into one")
            shapes.append((len(run),) + (frame.pop() if run else ()))
        itemsize = self.dtype.itemsize

        def contiguous(run):
            step = _nbytes(self.shapes[run[0]], itemsize) if run else 0
            return all(self.offsets[k] == self.offsets[run[0]] + (k - run[0]) * step for k in run)

        if all(contiguous(run) for run in runs):
            offsets = [self.offsets[run[0]] if run else 0 for run in runs]
            step = _nbytes(shapes[0], itemsize) if shapes else 0
            dense = len(set(shapes)) <= 1 and offsets == [k * step for k in range(len(offsets))]
            return DeviceBatch(self.data, offsets, shapes, self.dtype, dense)
        dense = len(set(shapes)) <= 1
        offsets, total = DeviceBatch.layout(shapes, itemsize, dense)
        device_id = self.device_id
        stream = current_stream(device_id)
        data = DeviceArray.empty((total,), np.uint8, device_id, stream)
        self.data.order_before(stream)
        api = state().api
        for run, offset in zip(runs, offsets, strict=True):
            for k in run:
                nbytes = _nbytes(self.shapes[k], itemsize)
                if nbytes:
                    driver.check(
                        api.cuMemcpyDtoDAsync(
                            data.ptr + offset, self.data.ptr + self.offsets[k], nbytes, _handle(stream)
                        ),
                        f"copying {nbytes} bytes on device {device_id}",
                    )
                offset += nbytes
        return DeviceBatch(data, offsets, shapes, self.dtype, dense)

    @staticmethod
    def layout(shapes, itemsize, dense):
        """``(offsets, total bytes)`` of samples of ``shapes`` in one allocation:
        back to back when ``dense``, else each at a multiple of SAMPLE_ALIGNMENT."""
        offsets = []
        total = 0
        for shape in shapes:
            if not dense:
                total = (total + SAMPLE_ALIGNMENT - 1) // SAMPLE_ALIGNMENT * SAMPLE_ALIGNMENT
            offsets.append(total)
            total += _nbytes(shape, itemsize)
        return offsets, total

    @staticmethod
    def from_host(samples, dtype, device_id: int, dense_array=None) -> "DeviceBatch":
        """Copies of host ``samples`` in one allocation. ``dense_array`` (the
        samples stacked, C-contiguous) is copied with one call."""
        dtype = np.dtype(dtype)
        shapes = [tuple(s.shape) for s in samples]
        dense = dense_array is not None or len(set(shapes)) <= 1
        offsets, total = DeviceBatch.layout(shapes, dtype.itemsize, dense)
        stream = current_stream(device_id)
        data = DeviceArray.empty((total,), np.uint8, device_id, stream)
        if dense_array is not None:
            data.view(0, (dense_array.nbytes,), np.uint8).copy_from_host(_c_order(dense_array))
        else:
            for sample, offset in zip(samples, offsets, strict=True):
                sample = _c_order(sample)
                data.view(offset, (sample.nbytes,), np.uint8).copy_from_host(sample)
        return DeviceBatch(data, offsets, shapes, dtype, dense)

    @staticmethod
    def from_device(arrays, dtype, device_id: int) -> "DeviceBatch":
        """Copies of the DeviceArrays ``arrays`` gathered into one allocation."""
        dtype = np.dtype(dtype)
        shapes = [a.shape for a in arrays]
        dense = len(set(shapes)) <= 1
        offsets, total = DeviceBatch.layout(shapes, dtype.itemsize, dense)
        stream = current_stream(device_id)
        data = DeviceArray.empty((total,), np.uint8, device_id, stream)
        api = state().api
        for array, offset in zip(arrays, offsets, strict=True):
            if array.device_id != device_id:
                raise ValueError(
                    f"Batch: all samples must be on one device; found gpu:{array.device_id} and gpu:{device_id}"
                )
            array.order_before(stream)
            if array.nbytes:
                driver.check(
                    api.cuMemcpyDtoDAsync(data.ptr + offset, array.ptr, array.nbytes, _handle(stream)),
                    f"copying {array.nbytes} bytes on device {device_id}",
                )
        return DeviceBatch(data, offsets, shapes, dtype, dense)

    @staticmethod
    def wrap(array: DeviceArray) -> "DeviceBatch":
        """The batch whose samples are ``array``'s slices along its first dimension (no copy)."""
        count, sample_shape = array.shape[0], array.shape[1:]
        step = _nbytes(sample_shape, array.dtype.itemsize)
        data = array.view(0, (array.nbytes,), np.uint8)
        return DeviceBatch(data, [i * step for i in range(count)], [sample_shape] * count, array.dtype, True)

    def to_host(self):
        """``(samples, dense)``: host copies of the samples, views of one buffer
        (``dense`` is the stacked array when the batch is dense, else None)."""
        host = self.data.to_host()
        itemsize = self.dtype.itemsize
        if self.dense and self.shapes:
            count = len(self.shapes)
            nbytes = _nbytes(self.shapes[0], itemsize)
            whole = host[: count * nbytes].view(self.dtype).reshape((count,) + tuple(self.shapes[0]))
            return None, whole
        samples = [
            host[offset : offset + _nbytes(shape, itemsize)].view(self.dtype).reshape(shape)
            for offset, shape in zip(self.offsets, self.shapes, strict=True)
        ]
        return samples, None


# -- imports -------------------------------------------------------------------------


def _foreign_device(obj):
    dlpack_device = getattr(obj, "__dlpack_device__", None)
    if dlpack_device is not None:
        return int(dlpack_device()[1])
    named = _device_of(obj)
    if named is not None:
        return named
    from .._eval.device import Device

    return Device.default_device_id("gpu")


def _from_cai(obj, what):
    cai = obj.__cuda_array_interface__
    version = cai.get("version", 0)
    if version < 2:
        raise TypeError(f"{what}: __cuda_array_interface__ version {version} is not supported (need 2 or 3)")
    if cai.get("mask") is not None:
        raise TypeError(f"{what}: masked __cuda_array_interface__ arrays are not supported")
    shape = tuple(int(n) for n in cai["shape"])
    dtype = np.dtype(cai["typestr"])
    if not _is_c_contiguous(shape, cai.get("strides"), dtype.itemsize):
        raise ValueError(
            f"{what}: the GPU array is not C-contiguous (strides {tuple(cai['strides'])}); make it "
            "contiguous first (e.g. .contiguous() in PyTorch, cupy.ascontiguousarray)"
        )
    ptr = int(cai["data"][0])
    device_id = _foreign_device(obj)
    driver.require_gpu(what)
    stream = current_stream(device_id)
    producer = cai.get("stream") if version >= 3 else None
    if producer == 0:
        raise ValueError(f"{what}: __cuda_array_interface__ stream 0 is not allowed by the protocol")
    if producer is not None:
        make_current(device_id)
        order_after(_handle(stream), int(producer), device_id)
    return DeviceArray(obj, ptr, shape, dtype, device_id, stream)


def _from_dlpack(obj, what):
    from . import dlpack

    device_id = int(obj.__dlpack_device__()[1])
    driver.require_gpu(what)
    stream = current_stream(device_id)
    handle = _handle(stream)
    consumer = handle if handle != 0 else _LEGACY_STREAM
    try:
        capsule = obj.__dlpack__(stream=consumer, max_version=(dlpack.DLPACK_MAJOR, dlpack.DLPACK_MINOR))
    except TypeError:  # a producer from before DLPack 1.0 (no max_version)
        capsule = obj.__dlpack__(stream=consumer)
    producer = dlpack.import_capsule(capsule)
    if producer.device[0] not in (KDL_CUDA, KDL_CUDA_MANAGED):
        raise BufferError(f"{what}: __dlpack__ gave memory of device type {producer.device[0]}")
    dtype = _numpy_dtype(*producer.dtype)
    if not _is_c_contiguous(
        producer.shape,
        producer.strides and tuple(s * dtype.itemsize for s in producer.strides),
        dtype.itemsize,
    ):
        raise ValueError(f"{what}: the GPU array is not C-contiguous (element strides {producer.strides})")
    # The Producer releases the foreign tensor when the last view of it goes; the
    # object is kept too, for whoever asks what the data came from.
    return DeviceArray((producer, obj), producer.ptr, producer.shape, dtype, producer.device[1], stream)


def from_foreign(obj, what: str = "ndd.as_tensor") -> DeviceArray:
    """A DeviceArray over the GPU memory of ``obj`` (no copy), ordered after the
    producer's stream. ``what`` names the caller in errors."""
    if isinstance(obj, DeviceArray):
        return obj
    if type(obj).__module__.startswith("torch") and getattr(obj, "requires_grad", False):
        obj = obj.detach()  # torch exports no tensor that requires grad
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cai(obj, what)
    return _from_dlpack(obj, what)


register_device_batch_type(DeviceBatch)
