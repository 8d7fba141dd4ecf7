"""GPU data in Tensor and Batch (ndd/_cuda/device_array.py, dlpack.pyx): transfers,
the one-allocation batch layout, and zero-copy exports and imports.

Most tests run on the recording FakeDriver, whose device memory is host memory
(copies really copy), so round trips check values; the ``gpu``-marked ones repeat
the interop with PyTorch, CuPy and a real driver.
"""

import ctypes
import gc
import sys
import types
import weakref

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

import ndd  # noqa: E402
from ndd._cuda import device_array, dlpack, driver  # noqa: E402
from ndd._cuda.device_array import SAMPLE_ALIGNMENT, DeviceArray  # noqa: E402
from ndd._prepare.invocation import Invocation  # noqa: E402
from ndd._prepare.storage import batch_samples  # noqa: E402

DTYPES = [
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.float16,
    np.float32,
    np.float64,
    np.bool_,
]
if ndd.bfloat16.numpy is not None:
    DTYPES.append(ndd.bfloat16.numpy)


def _values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return (rng.standard_normal(shape) * 100).astype(dtype)


def _stream_handle(device_id=0):
    return int(device_array.current_stream(device_id).handle)


def _waits_on(fake, consumer, producer):
    """Whether stream ``consumer`` waits for an event recorded on ``producer``."""
    return any(
        entry[0] == "wait" and fake.events[entry[1]][0] == producer
        for entry in fake.streams.get(consumer, [])
    )


def _used(fake, device_id=0):
    return fake.pools[device_id].used


# -- transfers --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_tensor_round_trip_keeps_values_and_metadata(fake, dtype):
    values = _values(dtype, (3, 5, 2))
    t = ndd.tensor(values, layout="HWC")
    g = t.gpu()
    assert g.device == ndd.Device("gpu", 0)
    assert (g.shape, g.dtype, g.layout) == ((3, 5, 2), t.dtype, "HWC")
    back = g.cpu()
    assert back.device == ndd.Device("cpu")
    np.testing.assert_array_equal(np.asarray(back), values)
    assert np.asarray(back).dtype == values.dtype


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_ragged_batch_round_trip_keeps_every_sample(fake, dtype):
    samples = [_values(dtype, shape, seed) for seed, shape in enumerate([(2, 3), (5, 1), (0, 4), (7, 7)])]
    g = ndd.batch(samples, layout="HW").gpu()
    assert g.device == ndd.Device("gpu", 0)
    assert g.shape == [(2, 3), (5, 1), (0, 4), (7, 7)] and g.layout == "HW"
    back = g.cpu()
    for sample, expected in zip(back, samples, strict=True):
        np.testing.assert_array_equal(np.asarray(sample), expected)


def test_scalars_stay_zero_dimensional(fake):
    g = ndd.tensor(np.float32(3.5)).gpu()
    assert g.shape == () and g.item() == 3.5
    assert np.asarray(g.cpu()).shape == ()
    b = ndd.batch([np.int64(1), np.int64(-2)]).gpu()
    assert b.shape == [(), ()]
    assert [np.asarray(s).shape for s in b.cpu()] == [(), ()]
    assert [np.asarray(s).item() for s in b.cpu()] == [1, -2]


def test_non_contiguous_host_data_is_copied_in_order(fake):
    values = np.arange(24, dtype=np.int32).reshape(4, 6)
    np.testing.assert_array_equal(np.asarray(ndd.tensor(values.T).gpu().cpu()), values.T)
    samples = [values[:, ::2], values[1:3, 1:]]
    for got, expected in zip(ndd.as_batch(samples).gpu().cpu(), samples, strict=True):
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_gpu_index_places_data_on_that_device(fake):
    values = np.arange(24, dtype=np.int16).reshape(4, 6)
    g = ndd.tensor(values).gpu(1)
    assert g.device == ndd.Device("gpu", 1) and g._data.device_id == 1
    assert fake.allocations[g._data.ptr][1] == 1
    np.testing.assert_array_equal(np.asarray(g.cpu()), values)


def test_move_between_gpus_copies_device_to_device(fake):
    values = np.arange(10, dtype=np.float32)
    g0 = ndd.tensor(values).gpu(0)
    fake.calls.clear()
    g1 = g0.gpu(1)
    assert g1._data.ptr != g0._data.ptr and "cuMemcpyDtoDAsync" in fake.calls
    assert "cuMemcpyHtoDAsync" not in fake.calls
    np.testing.assert_array_equal(np.asarray(g1.cpu()), values)


def test_copy_between_gpus_is_queued_with_the_target_device_current(fake):
    g0 = ndd.tensor(np.arange(4, dtype=np.uint8)).gpu(0)
    devices = []
    copy = fake.cuMemcpyDtoDAsync

    def recording(dst, src, count, stream):
        devices.append(fake._current_device())
        return copy(dst, src, count, stream)

    fake.cuMemcpyDtoDAsync = recording
    g0.gpu(1)
    assert devices == [1]


def test_gpu_of_gpu_data_is_self_unless_forced(fake):
    g = ndd.tensor(np.ones(4, np.uint8)).gpu()
    assert g.gpu() is g and g.to_device("gpu:0") is g
    copy = g.to_device("gpu:0", force_copy=True)
    assert copy._data.ptr != g._data.ptr
    np.testing.assert_array_equal(np.asarray(copy.cpu()), np.ones(4, np.uint8))


def test_copies_run_on_the_context_stream_and_cpu_synchronises(fake):
    g = ndd.tensor(np.arange(6, dtype=np.uint8)).gpu()
    stream = _stream_handle()
    assert g._data.stream_handle == stream
    assert ("copy", "HtoD", g._data.ptr, 6) in fake.streams[stream]
    g.cpu()
    entries = fake.streams[stream]
    assert entries[-2] == ("copy", "DtoH", g._data.ptr, 6)
    assert entries[-1] == ("synchronize",)


def test_explicit_eval_context_stream_is_used(fake):
    own = ndd.stream(device_id=0)
    with ndd.EvalContext(device_id=0, cuda_stream=own):
        g = ndd.tensor(np.arange(3, dtype=np.int32)).gpu()
    assert g._data.stream_handle == own.handle
    assert ("copy", "HtoD", g._data.ptr, 12) in fake.streams[own.handle]


def test_tensor_and_batch_factories_accept_a_gpu_device(fake):
    values = np.arange(8, dtype=np.uint8)
    t = ndd.tensor(values, device="gpu")
    b = ndd.batch([values, values[:3]], device="gpu:1")
    assert t.device == ndd.Device("gpu", 0) and b.device == ndd.Device("gpu", 1)
    np.testing.assert_array_equal(np.asarray(t.cpu()), values)
    np.testing.assert_array_equal(np.asarray(b.cpu().select(1)), values[:3])


def test_dtype_conversion_of_gpu_data_matches_the_cpu(fake):
    values = np.array([-1.5, 0.5, 2.5, 300.0], np.float32)
    expected = np.asarray(ndd.tensor(values, dtype=ndd.uint8))
    g = ndd.tensor(ndd.tensor(values).gpu(), dtype=ndd.uint8)
    assert g.device == ndd.Device("gpu", 0) and g.dtype == ndd.uint8
    np.testing.assert_array_equal(np.asarray(g.cpu()), expected)


def test_gpu_tensor_to_numpy_asks_for_cpu(fake):
    g = ndd.tensor(np.zeros(3)).gpu()
    with pytest.raises(TypeError, match=r"\.cpu\(\)"):
        np.asarray(g)


def test_item_of_a_gpu_tensor_copies_the_value_back(fake):
    assert ndd.tensor(np.array([7], np.int32)).gpu().item() == 7


def test_cpu_tensor_has_no_cuda_array_interface():
    with pytest.raises(AttributeError):
        ndd.tensor(np.zeros(2)).__cuda_array_interface__  # noqa: B018


def test_gpu_without_a_gpu_is_a_clear_error():
    if driver.device_count() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(driver.GpuUnavailableError, match="CUDA GPU"):
        ndd.tensor(np.zeros(2)).gpu()


# -- the batch layout: one allocation ------------------------------------------------


def test_ragged_batch_is_one_allocation_with_aligned_offsets(fake):
    shapes = [(3, 5), (1, 1), (17, 2), (4, 4), (2, 9)]
    samples = [_values(np.float32, s, i) for i, s in enumerate(shapes)]
    host = ndd.batch(samples)
    fake.calls.clear()
    g = host.gpu()
    assert fake.calls.count("cuMemAllocFromPoolAsync") == 1
    data = g._gpu
    assert [s.ptr - data.data.ptr for s in batch_samples(g)] == data.offsets
    ends = [o + int(np.prod(s)) * 4 for o, s in zip(data.offsets, shapes, strict=True)]
    assert all(o % SAMPLE_ALIGNMENT == 0 for o in data.offsets)
    assert all(end <= nxt for end, nxt in zip(ends, data.offsets[1:], strict=False))
    assert ends[-1] <= data.data.nbytes == fake.pools[0].used
    assert not data.dense and data.as_array() is None


def test_uniform_batch_is_dense_and_copied_in_one_call(fake):
    values = _values(np.uint8, (6, 4, 3))
    host = ndd.batch(values)
    fake.calls.clear()
    g = host.gpu()
    assert fake.calls.count("cuMemAllocFromPoolAsync") == 1
    assert fake.calls.count("cuMemcpyHtoDAsync") == 1
    assert g._gpu.offsets == [i * 12 for i in range(6)]
    whole = g._gpu.as_array()
    assert whole.shape == (6, 4, 3) and whole.ptr == g._gpu.data.ptr
    np.testing.assert_array_equal(whole.to_host(), values)


def test_batch_back_to_cpu_is_one_copy(fake):
    g = ndd.batch([np.ones((2, 2), np.int32), np.zeros((3,) * 2, np.int32)]).gpu()
    fake.calls.clear()
    g.cpu()
    assert fake.calls.count("cuMemcpyDtoHAsync") == 1


def test_samples_of_a_gpu_batch_view_its_allocation(fake):
    g = ndd.batch([np.full((2,), i, np.int64) for i in range(4)]).gpu()
    fake.calls.clear()
    one = g.select(2)
    picked = g.select([3, 0])
    assert "cuMemAllocFromPoolAsync" not in fake.calls
    assert one.device == g.device and one._data.ptr == g._gpu.data.ptr + 2 * 16
    assert picked._gpu.data is g._gpu.data and picked._gpu.offsets == [48, 0]
    np.testing.assert_array_equal(np.asarray(one.cpu()), [2, 2])
    assert [np.asarray(s)[0] for s in picked.cpu()] == [3, 0]


def _pending(output, device):
    """An invocation of a stand-in GPU operator whose one output is ``output``."""
    inv = Invocation()
    inv.op = types.SimpleNamespace(qualname="test.gpu_op", execute=lambda inv: [output])
    inv.inputs, inv.args = (), {}
    inv.device = device
    return inv


def test_pending_results_take_a_gpu_batch_output_when_it_is_ready(fake):
    samples = [np.arange(3, dtype=np.uint8), np.arange(5, dtype=np.uint8) * 2]
    output = ndd.batch(samples).gpu()._gpu
    device = ndd.Device("gpu", 0)
    inv = _pending(output, device)
    b = ndd.Batch.__new__(ndd.Batch)
    b._inv, b._out, b._dtype, b._device, b._batch_size = inv, 0, ndd.uint8, device, 2
    t = ndd.Tensor.__new__(ndd.Tensor)
    t._inv, t._out, t._sample, t._dtype, t._device = inv, 0, 1, ndd.uint8, device
    assert b.shape == [(3,), (5,)]
    # The per-sample views are made when asked for, not with the data.
    assert b._gpu is output and b._samples is None
    assert [s.ptr for s in batch_samples(b)] == [s.ptr for s in output.samples()]
    assert t.shape == (5,) and t._data.ptr == output.data.ptr + output.offsets[1]
    np.testing.assert_array_equal(np.asarray(t.cpu()), samples[1])
    for got, expected in zip(b.cpu(), samples, strict=True):
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_batch_of_gpu_tensors_gathers_into_one_allocation(fake):
    tensors = [ndd.tensor(np.full((i + 1,), i, np.uint16)).gpu() for i in range(3)]
    fake.calls.clear()
    b = ndd.batch(tensors)
    assert b.device == ndd.Device("gpu", 0)
    assert fake.calls.count("cuMemAllocFromPoolAsync") == 1
    assert fake.calls.count("cuMemcpyDtoDAsync") == 3
    for i, sample in enumerate(b.cpu()):
        np.testing.assert_array_equal(np.asarray(sample), np.full((i + 1,), i, np.uint16))


def test_broadcast_of_a_gpu_sample_is_one_allocation(fake):
    sample = ndd.tensor(np.arange(6, dtype=np.int32).reshape(2, 3), layout="HW").gpu()
    fake.calls.clear()
    b = ndd.Batch.broadcast(sample, 4)
    assert b.device == sample.device and b.layout == "HW" and b.batch_size == 4
    assert fake.calls.count("cuMemAllocFromPoolAsync") == 1
    for got in b.cpu():
        np.testing.assert_array_equal(np.asarray(got), np.arange(6).reshape(2, 3))


def test_as_tensor_of_a_dense_gpu_batch_shares_it(fake):
    g = ndd.batch(_values(np.float32, (3, 2, 2))).gpu()
    t = ndd.as_tensor(g)
    assert t.shape == (3, 2, 2) and t._data.ptr == g._gpu.data.ptr


def test_memory_returns_to_the_pool_when_data_is_dropped(fake):
    ndd.tensor(np.zeros(1)).gpu()  # the pool is set up
    gc.collect()
    start = _used(fake)
    t = ndd.tensor(np.zeros((64, 64), np.float32)).gpu()
    b = ndd.batch([np.zeros((5, 7)), np.zeros((9,) * 2)]).gpu()
    picked = b.select([1])
    assert _used(fake) > start
    del t, b
    gc.collect()
    assert _used(fake) > start  # the picked sample keeps the batch's allocation
    del picked
    gc.collect()
    assert _used(fake) == start


# -- __cuda_array_interface__ -----------------------------------------------------------


def test_cuda_array_interface_names_pointer_shape_type_and_stream(fake):
    g = ndd.tensor(np.zeros((4, 3), np.float16)).gpu()
    cai = g.__cuda_array_interface__
    assert cai == {
        "shape": (4, 3),
        "typestr": "<f2",
        "data": (g._data.ptr, False),
        "strides": None,
        "version": 3,
        "stream": _stream_handle(),
    }
    assert g._data.ptr in fake.allocations


def test_cuda_array_interface_spells_the_null_stream_as_legacy(fake):
    g = ndd.tensor(np.zeros(2, np.uint8)).gpu()
    on_null = DeviceArray(g._data.owner, g._data.ptr, (2,), np.uint8, 0, 0)
    assert on_null.__cuda_array_interface__["stream"] == 1


# -- DLPack export ------------------------------------------------------------------------


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    pass


_DLManagedTensor._fields_ = [
    ("dl_tensor", _DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))),
]


class _DLManagedTensorVersioned(ctypes.Structure):
    pass


_DLManagedTensorVersioned._fields_ = [
    ("major", ctypes.c_uint32),
    ("minor", ctypes.c_uint32),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", _DLTensor),
]

_capsule_get = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get.restype = ctypes.c_void_p
_capsule_get.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_rename = ctypes.pythonapi.PyCapsule_SetName
_capsule_rename.argtypes = [ctypes.py_object, ctypes.c_char_p]


# The names a consumer gives the capsules it used: PyCapsule_SetName keeps the pointer,
# so they live as long as the module (a temporary b"used_" + name was read after it was
# freed, when the capsule was destroyed; AddressSanitizer found it).
_USED_NAMES = {b"dltensor": b"used_dltensor", b"dltensor_versioned": b"used_dltensor_versioned"}


def _consume(capsule, name=b"dltensor", struct=_DLManagedTensor):
    """What a consumer does: read the tensor, rename the capsule; returns the struct."""
    managed = struct.from_address(_capsule_get(capsule, name))
    assert _capsule_rename(capsule, _USED_NAMES[name]) == 0
    return managed


def _fields(tensor):
    return {
        "data": tensor.data,
        "device": (tensor.device.device_type, tensor.device.device_id),
        "shape": [tensor.shape[i] for i in range(tensor.ndim)],
        "dtype": (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes),
        "strides": bool(tensor.strides),
        "byte_offset": tensor.byte_offset,
    }


@pytest.mark.parametrize(
    ("dtype", "code", "bits"),
    [(np.uint8, 1, 8), (np.int32, 0, 32), (np.float16, 2, 16), (np.float64, 2, 64), (np.bool_, 6, 8)],
)
def test_dlpack_capsule_describes_the_device_memory(fake, dtype, code, bits):
    g = ndd.tensor(np.zeros((2, 3, 4), dtype)).gpu(1)
    capsule = g.__dlpack__(stream=-1)
    managed = _consume(capsule)
    assert _fields(managed.dl_tensor) == {
        "data": g._data.ptr,
        "device": (2, 1),
        "shape": [2, 3, 4],
        "dtype": (code, bits, 1),
        "strides": False,
        "byte_offset": 0,
    }
    assert g.__dlpack_device__() == (2, 1)
    managed.deleter(ctypes.pointer(managed))


def test_dlpack_deleter_releases_the_reference_exactly_once(fake):
    g = ndd.tensor(np.arange(4, dtype=np.float32)).gpu()
    array = g._data
    before = sys.getrefcount(array)
    capsule = array.__dlpack__(stream=-1)
    assert sys.getrefcount(array) == before + 1
    managed = _consume(capsule)
    managed.deleter(ctypes.pointer(managed))
    assert sys.getrefcount(array) == before
    del capsule  # a used capsule must not call the deleter again
    gc.collect()
    assert sys.getrefcount(array) == before


def test_unconsumed_capsule_releases_the_memory_when_dropped(fake):
    g = ndd.tensor(np.zeros(100, np.uint8)).gpu()
    gc.collect()
    start = _used(fake) - 100
    capsule = g.__dlpack__(stream=-1)
    del g
    gc.collect()
    assert _used(fake) == start + 100  # the capsule keeps it
    del capsule
    gc.collect()
    assert _used(fake) == start


def test_versioned_capsule_for_dlpack_1_consumers(fake):
    g = ndd.tensor(np.zeros((5,), np.int64)).gpu()
    capsule = g.__dlpack__(stream=-1, max_version=(1, 2))
    managed = _consume(capsule, b"dltensor_versioned", _DLManagedTensorVersioned)
    assert (managed.major, managed.minor, managed.flags) == (1, 0, 0)
    assert _fields(managed.dl_tensor)["data"] == g._data.ptr
    assert _fields(managed.dl_tensor)["shape"] == [5]
    managed.deleter(ctypes.pointer(managed))


def test_dlpack_consumer_stream_waits_for_the_producer(fake):
    g = ndd.tensor(np.zeros(4, np.uint8)).gpu()
    producer = g._data.stream_handle
    consumer = ndd.stream(device_id=0).handle
    g.__dlpack__(stream=consumer)
    assert _waits_on(fake, consumer, producer)
    g.__dlpack__()  # no stream: the consumer uses the legacy default stream
    assert _waits_on(fake, 1, producer)


def test_dlpack_stream_minus_one_orders_nothing(fake):
    g = ndd.tensor(np.zeros(4, np.uint8)).gpu()
    fake.calls.clear()
    g.__dlpack__(stream=-1)
    assert "cuStreamWaitEvent" not in fake.calls


def test_dlpack_rejects_stream_zero_and_another_device(fake):
    g = ndd.tensor(np.zeros(4, np.uint8)).gpu()
    with pytest.raises(ValueError, match="stream=0"):
        g.__dlpack__(stream=0)
    with pytest.raises(BufferError, match="GPU 0"):
        g.__dlpack__(dl_device=(1, 0))


def test_dlpack_copy_exports_new_memory(fake):
    g = ndd.tensor(np.arange(3, dtype=np.uint8)).gpu()
    managed = _consume(g.__dlpack__(stream=-1, copy=True))
    assert managed.dl_tensor.data != g._data.ptr
    buffer, offset = fake._find(managed.dl_tensor.data)
    assert bytes(buffer[offset : offset + 3]) == b"\x00\x01\x02"
    managed.deleter(ctypes.pointer(managed))


# -- imports of foreign GPU arrays ------------------------------------------------------------


class _ForeignCAI:
    """A foreign GPU array: memory the 'other library' allocated, written on its stream."""

    def __init__(self, fake, values, stream, strides=None, device_id=0):
        self.ptr = int(
            driver.check(fake.cuMemAllocFromPoolAsync(values.nbytes, 0x200 + device_id, stream), "a")
        )
        buffer, _ = fake._find(self.ptr)
        buffer[:] = values.tobytes()
        self.values = values
        self.stream = stream
        self.strides = strides
        self.device = device_id

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.values.shape,
            "typestr": self.values.dtype.str,
            "data": (self.ptr, False),
            "strides": self.strides,
            "version": 3,
            "stream": self.stream,
        }


def _foreign_stream(fake):
    return int(driver.check(fake.cuStreamCreate(0), "stream"))


def test_import_of_cai_array_shares_memory_and_waits_on_its_stream(fake):
    ndd.tensor(np.zeros(1)).gpu()  # initialised
    values = _values(np.int32, (3, 4))
    theirs = _foreign_stream(fake)
    foreign = _ForeignCAI(fake, values, theirs)
    fake.calls.clear()
    t = ndd.as_tensor(foreign)
    assert t._data.ptr == foreign.ptr and t.device == ndd.Device("gpu", 0)
    assert (t.shape, t.dtype) == ((3, 4), ndd.int32)
    assert not {"cuMemAllocFromPoolAsync", "cuMemcpyDtoDAsync", "cuMemcpyHtoDAsync"} & set(fake.calls)
    assert _waits_on(fake, _stream_handle(), theirs)
    np.testing.assert_array_equal(np.asarray(t.cpu()), values)


def test_import_keeps_the_foreign_owner_alive(fake):
    ndd.tensor(np.zeros(1)).gpu()
    foreign = _ForeignCAI(fake, np.zeros(4, np.uint8), None)
    alive = weakref.ref(foreign)
    t = ndd.as_tensor(foreign)
    del foreign
    gc.collect()
    assert alive() is not None
    del t
    gc.collect()
    assert alive() is None


def test_import_without_producer_stream_orders_nothing(fake):
    ndd.tensor(np.zeros(1)).gpu()
    foreign = _ForeignCAI(fake, np.zeros(4, np.uint8), None)
    fake.calls.clear()
    ndd.as_tensor(foreign)
    assert "cuStreamWaitEvent" not in fake.calls


def test_import_rejects_strided_and_stream_zero_arrays(fake):
    ndd.tensor(np.zeros(1)).gpu()
    strided = _ForeignCAI(fake, np.zeros((2, 3), np.float32), None, strides=(4, 8))
    with pytest.raises(ValueError, match="not C-contiguous"):
        ndd.as_tensor(strided)
    zero = _ForeignCAI(fake, np.zeros(3, np.uint8), 0)
    with pytest.raises(ValueError, match="stream 0"):
        ndd.as_tensor(zero)


def test_import_honours_explicit_c_strides(fake):
    ndd.tensor(np.zeros(1)).gpu()
    values = _values(np.float32, (2, 3))
    foreign = _ForeignCAI(fake, values, None, strides=(12, 4))
    np.testing.assert_array_equal(np.asarray(ndd.as_tensor(foreign).cpu()), values)


def test_as_batch_of_a_foreign_array_wraps_it(fake):
    ndd.tensor(np.zeros(1)).gpu()
    values = _values(np.uint8, (4, 2, 3))
    foreign = _ForeignCAI(fake, values, None)
    fake.calls.clear()
    b = ndd.as_batch(foreign)
    assert "cuMemAllocFromPoolAsync" not in fake.calls
    assert b.batch_size == 4 and b._gpu.data.ptr == foreign.ptr and b._gpu.offsets == [0, 6, 12, 18]
    for sample, expected in zip(b.cpu(), values, strict=True):
        np.testing.assert_array_equal(np.asarray(sample), expected)


def test_batch_of_foreign_arrays_is_copied_into_one_allocation(fake):
    ndd.tensor(np.zeros(1)).gpu()
    parts = [_ForeignCAI(fake, _values(np.float64, (i + 2,), i), None) for i in range(3)]
    fake.calls.clear()
    b = ndd.batch(parts)
    assert fake.calls.count("cuMemAllocFromPoolAsync") == 1
    for sample, part in zip(b.cpu(), parts, strict=True):
        np.testing.assert_array_equal(np.asarray(sample), part.values)


class _GradTensor:
    """Stands for a torch CUDA tensor that requires grad: no CAI until detached."""

    __module__ = "torch"
    requires_grad = True
    is_cuda = True

    def __init__(self, detached):
        self.detached = detached

    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad")

    def detach(self):
        return self.detached


def test_import_of_a_tensor_requiring_grad_uses_its_detached_view(fake):
    ndd.tensor(np.zeros(1)).gpu()
    values = _values(np.float32, (4,))
    foreign = _ForeignCAI(fake, values, None)
    t = ndd.as_tensor(_GradTensor(foreign))
    assert t._data.ptr == foreign.ptr
    np.testing.assert_array_equal(np.asarray(t.cpu()), values)


def test_batch_mixing_host_and_gpu_samples_is_refused(fake):
    ndd.tensor(np.zeros(1)).gpu()
    host = np.zeros(3, np.float32)
    gpu = ndd.tensor(host).gpu()
    foreign = _ForeignCAI(fake, host, None)
    with pytest.raises(ValueError, match="sample 1 is in host memory"):
        ndd.batch([gpu, host])
    with pytest.raises(ValueError, match="sample 1 is on gpu:0 while sample 0 is in host memory"):
        ndd.batch([host, gpu])
    with pytest.raises(ValueError, match="_ForeignCAI in GPU memory cannot be mixed with host data"):
        ndd.batch([host, foreign])


class _ForeignDLPack:
    """A foreign GPU array that speaks only DLPack (here: ndd's own export)."""

    def __init__(self, array):
        self.array = array
        self.streams = []

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None):
        self.streams.append(stream)
        return self.array.__dlpack__(stream=stream, max_version=max_version)


@pytest.mark.parametrize("max_version", [True, False])
def test_import_over_dlpack_shares_memory_and_releases_it(fake, max_version):
    values = _values(np.int16, (2, 5))
    array = ndd.tensor(values).gpu()._data
    producer = _ForeignDLPack(array)
    if not max_version:
        # A pre-1.0 producer: no max_version keyword.
        producer.__dlpack__ = lambda stream=None: array.__dlpack__(stream=stream)
    before = sys.getrefcount(array)
    t = ndd.as_tensor(producer)
    assert t._data.ptr == array.ptr and t.shape == (2, 5) and t.dtype == ndd.int16
    assert sys.getrefcount(array) == before + 1  # held by the capsule's tensor
    if max_version:
        assert producer.streams == [_stream_handle()]
    np.testing.assert_array_equal(np.asarray(t.cpu()), values)
    del t
    gc.collect()
    assert sys.getrefcount(array) == before


def test_import_capsule_rejects_a_used_capsule(fake):
    capsule = ndd.tensor(np.zeros(2)).gpu().__dlpack__(stream=-1)
    producer = dlpack.import_capsule(capsule)
    with pytest.raises(BufferError, match="unused DLPack capsule"):
        dlpack.import_capsule(capsule)
    del producer


# -- the same with real libraries on a GPU ----------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_gpu_round_trip(dtype, any_gpu):
    values = _values(dtype, (31, 17))
    np.testing.assert_array_equal(np.asarray(ndd.tensor(values).gpu().cpu()), values)
    samples = [values, values[:3, :5].copy()]
    for sample, expected in zip(ndd.batch(samples).gpu().cpu(), samples, strict=True):
        np.testing.assert_array_equal(np.asarray(sample), expected)


def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    return torch


@pytest.mark.gpu
def test_gpu_torch_shares_memory_both_ways():
    torch = _torch_cuda()
    g = ndd.tensor(np.arange(12, dtype=np.float32).reshape(3, 4)).gpu()
    view = g.torch()
    assert view.is_cuda and view.data_ptr() == g._data.ptr
    np.testing.assert_array_equal(view.cpu().numpy(), np.arange(12, dtype=np.float32).reshape(3, 4))
    source = torch.arange(6, device="cuda", dtype=torch.int32) * 3
    t = ndd.as_tensor(source)
    assert t._data.ptr == source.data_ptr() and t.device == ndd.Device("gpu", 0)
    np.testing.assert_array_equal(np.asarray(t.cpu()), source.cpu().numpy())
    ragged = ndd.batch([source, source[:2]])
    assert ragged.device == ndd.Device("gpu", 0)
    np.testing.assert_array_equal(np.asarray(ragged.cpu().select(1)), source[:2].cpu().numpy())
    grad = torch.ones(3, device="cuda", requires_grad=True)
    assert ndd.as_tensor(grad)._data.ptr == grad.data_ptr()
    dense = ndd.as_batch(source.reshape(2, 3))
    assert dense.torch().data_ptr() == source.data_ptr()


@pytest.mark.gpu
def test_gpu_cupy_shares_memory_both_ways():
    cupy = pytest.importorskip("cupy")
    g = ndd.tensor(np.arange(5, dtype=np.uint8)).gpu()
    view = cupy.asarray(g)
    assert view.data.ptr == g._data.ptr
    np.testing.assert_array_equal(cupy.asnumpy(view), np.arange(5, dtype=np.uint8))
    source = cupy.arange(7, dtype=cupy.float64)
    t = ndd.as_tensor(source)
    assert t._data.ptr == source.data.ptr
    np.testing.assert_array_equal(np.asarray(t.cpu()), cupy.asnumpy(source))
