"""The driver access layer (ndd/_cuda/driver.py) and its recording fake (ndd/_cuda/fake.py)."""

import ctypes

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from ndd._cuda import driver  # noqa: E402
from ndd._cuda.fake import FakeDriver  # noqa: E402

PTX = """
.version 8.0
.target sm_70
.address_size 64
.visible .entry scale_u8(
    .param .u64 scale_u8_param_0,
    .param .u64 scale_u8_param_1,
    .param .f32 scale_u8_param_2,
    .param .u32 scale_u8_param_3
)
{
    ret;
}
"""


def test_check_returns_values_and_raises_naming_the_call():
    fake = FakeDriver()
    with driver.use_fake(fake):
        assert driver.check(fake.cuInit(0), "cuInit") is None
        assert driver.check(fake.cuDeviceGetCount(), "count") == 1
        fake.fail_next("cuDeviceGet", fake.CUresult.CUDA_ERROR_INVALID_DEVICE)
        with pytest.raises(
            driver.CudaError, match="getting device 0 failed: CUDA_ERROR_INVALID_DEVICE"
        ) as info:
            driver.check(fake.cuDeviceGet(0), "getting device 0")
        assert info.value.code == fake.CUresult.CUDA_ERROR_INVALID_DEVICE


def test_calls_before_cuinit_fail_as_the_driver_does():
    fake = FakeDriver()
    assert fake.cuDeviceGetCount()[0] == fake.CUresult.CUDA_ERROR_NOT_INITIALIZED


def test_device_count_and_require_gpu_follow_the_installed_driver():
    with driver.use_fake(FakeDriver(devices=2)):
        assert driver.device_count() == 2
        driver.require_gpu("a test")
    with driver.use_fake(FakeDriver(devices=0)):
        assert driver.device_count() == 0
        with pytest.raises(driver.GpuUnavailableError, match="a test needs a CUDA GPU, but no CUDA device"):
            driver.require_gpu("a test")


def test_a_failing_cuinit_is_reported_by_name():
    fake = FakeDriver()
    fake.fail_next("cuInit", fake.CUresult.CUDA_ERROR_NO_DEVICE)
    with driver.use_fake(fake):
        with pytest.raises(driver.GpuUnavailableError, match="failed to initialize .CUDA_ERROR_NO_DEVICE"):
            driver.require_gpu("x")


def test_copies_round_trip_through_fake_device_memory():
    fake = FakeDriver()
    fake.cuInit(0)
    pool = driver.check(fake.cuDeviceGetDefaultMemPool(0), "pool")
    stream = driver.check(fake.cuStreamCreate(0), "stream")
    data = np.arange(100, dtype=np.float32)
    ptr = driver.check(fake.cuMemAllocFromPoolAsync(data.nbytes, pool, stream), "alloc")
    driver.check(fake.cuMemcpyHtoDAsync(ptr, data, data.nbytes, stream), "HtoD")
    back = np.zeros_like(data)
    driver.check(fake.cuMemcpyDtoHAsync(back.ctypes.data, int(ptr) + 40, 40, stream), "DtoH")
    np.testing.assert_array_equal(back[:10], data[10:20])
    assert [entry[0] for entry in fake.streams[int(stream)]] == ["alloc", "copy", "copy"]


def test_pool_counts_used_and_reserved_bytes_and_reuses_freed_ones():
    fake = FakeDriver()
    fake.cuInit(0)
    pool = fake.cuDeviceGetDefaultMemPool(0)[1]
    used = fake.CUmemPool_attribute.CU_MEMPOOL_ATTR_USED_MEM_CURRENT
    reserved = fake.CUmemPool_attribute.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT
    threshold = fake.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
    fake.cuMemPoolSetAttribute(pool, threshold, 1 << 20)
    a = fake.cuMemAllocFromPoolAsync(4096, pool, 0)[1]
    fake.cuMemFreeAsync(a, 0)
    assert fake.cuMemPoolGetAttribute(pool, used)[1] == 0
    assert fake.cuMemPoolGetAttribute(pool, reserved)[1] == 4096
    fake.cuMemAllocFromPoolAsync(4096, pool, 0)
    assert fake.cuMemPoolGetAttribute(pool, reserved)[1] == 4096  # reused, not grown
    fake.cuMemPoolTrimTo(pool, 0)
    assert fake.cuMemPoolGetAttribute(pool, reserved)[1] == 4096  # still in use


def test_allocation_beyond_device_memory_fails():
    fake = FakeDriver(memory_bytes=1000)
    fake.cuInit(0)
    pool = fake.cuDeviceGetDefaultMemPool(0)[1]
    assert fake.cuMemAllocFromPoolAsync(2000, pool, 0)[0] == fake.CUresult.CUDA_ERROR_OUT_OF_MEMORY


def test_launch_records_arguments_unpacked_by_the_ptx_signature():
    fake = FakeDriver()
    fake.cuInit(0)
    module = driver.check(fake.cuModuleLoadData(PTX.encode()), "load")
    function = driver.check(fake.cuModuleGetFunction(module, b"scale_u8"), "function")
    values = [
        ctypes.c_uint64(0x7F00_0000_0000),
        ctypes.c_uint64(0x7F00_0000_1000),
        ctypes.c_float(0.5),
        ctypes.c_uint32(1234),
    ]
    pointers = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in values])
    driver.check(
        fake.cuLaunchKernel(function, 3, 1, 1, 256, 1, 1, 0, 7, ctypes.addressof(pointers), 0), "launch"
    )
    (launch,) = fake.launches
    assert launch.function == "scale_u8"
    assert (launch.grid, launch.block, launch.stream) == ((3, 1, 1), (256, 1, 1), 7)
    assert launch.param_types == ["u64", "u64", "f32", "u32"]
    assert launch.args[:2] == [0x7F00_0000_0000, 0x7F00_0000_1000]
    assert launch.args[2] == int.from_bytes(np.float32(0.5).tobytes(), "little")
    assert launch.args[3] == 1234


@pytest.mark.parametrize(
    "grid, block, shared",
    [
        ((1, 1, 1), (1025, 1, 1), 0),  # more than 1024 threads in a block
        ((1, 1, 1), (64, 32, 1), 0),  # 2048 threads
        ((1, 1, 1), (1, 1, 65), 0),  # z beyond 64
        ((1, 65536, 1), (256, 1, 1), 0),  # blockIdx.y beyond 65535
        ((1, 1, 65536), (256, 1, 1), 0),
        ((0, 1, 1), (256, 1, 1), 0),  # an empty grid
        ((1, 1, 1), (256, 1, 1), 48 * 1024 + 1),  # dynamic shared memory beyond 48 KiB
    ],
)
def test_launches_a_gpu_refuses_are_refused(grid, block, shared):
    fake = FakeDriver()
    fake.cuInit(0)
    module = driver.check(fake.cuModuleLoadData(PTX.encode()), "load")
    function = driver.check(fake.cuModuleGetFunction(module, b"scale_u8"), "function")
    values = [ctypes.c_uint64(0), ctypes.c_uint64(0), ctypes.c_float(0.5), ctypes.c_uint32(1)]
    pointers = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in values])
    status = fake.cuLaunchKernel(function, *grid, *block, shared, 0, ctypes.addressof(pointers), 0)
    assert status == (fake.CUresult.CUDA_ERROR_INVALID_VALUE,)
    assert fake.launches == []
    ok = fake.cuLaunchKernel(
        function, 2**31 - 1, 65535, 65535, 1024, 1, 1, 48 * 1024, 0, ctypes.addressof(pointers), 0
    )
    assert ok == (fake.CUresult.CUDA_SUCCESS,)


def test_events_record_their_place_in_a_stream():
    fake = FakeDriver()
    fake.cuInit(0)
    producer = fake.cuStreamCreate(0)[1]
    consumer = fake.cuStreamCreate(0)[1]
    event = fake.cuEventCreate(0)[1]
    fake.cuEventRecord(event, producer)
    fake.cuStreamWaitEvent(consumer, event, 0)
    assert fake.events[int(event)] == (int(producer), 0)
    assert fake.streams[int(consumer)] == [("wait", int(event))]


def test_elapsed_time_needs_both_events_recorded():
    fake = FakeDriver()
    fake.cuInit(0)
    stream = fake.cuStreamCreate(0)[1]
    start = fake.cuEventCreate(0)[1]
    end = fake.cuEventCreate(0)[1]
    fake.cuEventRecord(start, stream)
    assert fake.cuEventElapsedTime(start, end)[0] == FakeDriver.CUresult.CUDA_ERROR_INVALID_HANDLE
    fake.cuEventRecord(end, stream)
    assert driver.check(fake.cuEventElapsedTime(start, end), "cuEventElapsedTime") == fake.event_elapsed_ms


def _driver_calls_in_ndd():
    """The names of the driver calls ndd's sources make (``api.cuXxx(``, ``.cuXxx(``)."""
    import pathlib
    import re

    root = pathlib.Path(driver.__file__).resolve().parent.parent
    calls = set()
    for path in list(root.rglob("*.py")) + list(root.rglob("*.pyx")):
        if path.name == "fake.py":
            continue
        calls |= set(re.findall(r"\.(cu[A-Z]\w*)\(", path.read_text(encoding="utf-8")))
    return calls


def test_every_driver_call_of_ndd_exists_in_cuda_python_and_in_the_fake():
    import cuda.bindings.driver as real

    calls = _driver_calls_in_ndd()
    assert {"cuLaunchKernel", "cuMemAllocFromPoolAsync", "cuStreamWaitEvent"} <= calls
    assert sorted(c for c in calls if not hasattr(real, c)) == []
    assert sorted(c for c in calls if not hasattr(FakeDriver, c)) == []


def test_the_fake_takes_the_arguments_cuda_python_takes():
    """A call that the fake accepts must not be refused by cuda-python for its arity."""
    import inspect

    import cuda.bindings.driver as real

    names = [
        n
        for n in dir(FakeDriver)
        if n.startswith("cu")
        and callable(getattr(FakeDriver, n))
        and not isinstance(getattr(real, n, None), type)
    ]
    assert len(names) > 30
    mismatched = {}
    for name in names:
        fake_params = list(inspect.signature(getattr(FakeDriver, name)).parameters)[1:]
        real_params = list(inspect.signature(getattr(real, name)).parameters)
        if len(fake_params) != len(real_params):
            mismatched[name] = (fake_params, real_params)
    assert mismatched == {}
