"""The GPU runtime: driver initialisation, contexts, streams, events and the memory
pool (ndd/_cuda/context.py, streams.py, memory.py) and their public faces.

Most tests run on the recording FakeDriver (no GPU needed); the ``gpu``-marked
ones repeat the essentials with the real driver.
"""

import gc
import os
import subprocess
import sys
import threading
import types
import weakref

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

import ndd  # noqa: E402
from ndd._cuda import context, driver, memory, streams  # noqa: E402
from ndd._cuda.fake import FakeDriver  # noqa: E402
from ndd._prepare.invocation import Invocation, schedule  # noqa: E402

NON_BLOCKING = int(FakeDriver.CUstream_flags.CU_STREAM_NON_BLOCKING)


def _current_device(fake):
    """The device whose context the fake says is current on the calling thread."""
    handle = int(driver.check(fake.cuCtxGetCurrent(), "current"))
    return None if handle == 0 else handle - 0x100


# -- initialisation and contexts ---------------------------------------------------


def test_cpu_objects_make_no_driver_call(fake):
    ndd.Device("cpu")
    ndd.device("cpu")
    x = ndd.tensor(np.arange(6, dtype=np.int32), device="cpu")
    ndd.batch([np.zeros(3)], device="cpu")
    assert x.device == ndd.Device("cpu")
    assert fake.calls == []


def test_import_ndd_makes_no_driver_call():
    script = (
        "import cuda.bindings.driver as d\n"
        "calls = []\n"
        "for name in dir(d):\n"
        "    if name.startswith('cu') and callable(getattr(d, name)):\n"
        "        setattr(d, name, lambda *a, _n=name: calls.append(_n))\n"
        "import ndd\n"
        "print(calls)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_driver_is_initialised_once_by_racing_threads(fake):
    barrier = threading.Barrier(8)

    def start():
        barrier.wait()
        context.initialize()

    threads = [threading.Thread(target=start) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fake.calls.count("cuInit") == 1
    assert context.state().device_count == 2


def test_first_gpu_use_initialises_lazily(fake):
    assert fake.calls == []
    ndd.stream(device_id=0)
    assert fake.calls[0] == "cuInit"


def test_one_primary_context_per_device_retained_once(fake):
    first = [context.primary_context(d) for d in (0, 1)]
    again = [context.primary_context(d) for d in (0, 1)]
    assert [int(c) for c in first] == [int(c) for c in again]
    assert int(first[0]) != int(first[1])
    assert fake.calls.count("cuDevicePrimaryCtxRetain") == 2


def test_make_current_is_per_thread_and_skipped_when_current(fake):
    context.make_current(1)
    context.make_current(1)
    assert fake.calls.count("cuCtxSetCurrent") == 1
    seen = []

    def other():
        seen.append(_current_device(fake))
        context.make_current(0)
        seen.append(_current_device(fake))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [None, 0]
    assert _current_device(fake) == 1
    assert fake.calls.count("cuCtxSetCurrent") == 2


def test_device_block_makes_its_context_current_and_restores(fake):
    context.make_current(0)
    with ndd.Device("gpu", device_id=1):
        assert _current_device(fake) == 1
        assert ndd.Device.current() == ndd.Device("gpu:1")
    assert _current_device(fake) == 0


def test_device_properties_are_read_once(fake):
    fake.compute_capability = (9, 0)
    props = context.device_properties(1)
    assert props.compute_capability == (9, 0)
    assert props.sm_count == 108
    assert props.memory_pools_supported
    count = fake.calls.count("cuDeviceGetAttribute")
    assert context.device_properties(1) is props
    assert fake.calls.count("cuDeviceGetAttribute") == count


def test_invalid_device_id_is_a_value_error(fake):
    with pytest.raises(ValueError, match=r"Invalid device id 2. Must be in range \[0..1\]"):
        context.make_current(2)


def test_failing_context_retain_names_the_device(fake):
    fake.fail_next("cuDevicePrimaryCtxRetain", fake.CUresult.CUDA_ERROR_OUT_OF_MEMORY)
    with pytest.raises(
        driver.CudaError, match="primary context of device 1 failed: CUDA_ERROR_OUT_OF_MEMORY"
    ):
        context.make_current(1)


# -- streams and events ----------------------------------------------------------------


def test_new_stream_is_non_blocking_on_the_requested_device(fake):
    s = ndd.stream(device_id=1)
    assert s.device_id == 1
    assert fake.stream_flags[s.handle] == NON_BLOCKING
    assert s.__cuda_stream__() == (0, s.handle)
    assert fake.calls[fake.calls.index("cuStreamCreate") - 1] == "cuCtxSetCurrent"
    assert _current_device(fake) == 1


def test_new_stream_defaults_to_the_current_device(fake):
    with ndd.Device("gpu", device_id=1):
        assert ndd.stream().device_id == 1
    assert ndd.stream().device_id == 0


def test_created_stream_is_destroyed_when_its_last_user_goes(fake):
    s = ndd.stream(device_id=0)
    handle = s.handle
    wrapper = ndd.stream(stream=s)  # the same object
    ctx = ndd.EvalContext(device_id=0, cuda_stream=s)
    del s, wrapper
    gc.collect()
    assert handle not in fake.destroyed  # the context still uses it
    assert ctx.cuda_stream.handle == handle
    del ctx
    gc.collect()
    assert fake.destroyed == [handle]


class CudaStreamProtocol:
    def __init__(self, handle, device_id=None):
        self.handle = handle
        if device_id is not None:
            self.device_id = device_id

    def __cuda_stream__(self):
        return (0, self.handle)


class TorchLikeStream:
    """What ndd reads of a torch.cuda.Stream: ``cuda_stream`` and ``device.index``."""

    def __init__(self, handle, index):
        self.cuda_stream = handle
        self.device = types.SimpleNamespace(type="cuda", index=index)


def test_wraps_an_object_with_cuda_stream_protocol(fake):
    obj = CudaStreamProtocol(0xABC)
    s = ndd.stream(stream=obj)
    assert (s.handle, s.device_id) == (0xABC, 0)
    assert ndd.stream(stream=CudaStreamProtocol(0xABD, device_id=1)).device_id == 1
    assert ndd.stream(stream=CudaStreamProtocol(0xABE), device_id=1).device_id == 1
    ref = weakref.ref(obj)
    del obj
    gc.collect()
    assert ref() is not None  # kept alive by the wrapper
    del s
    gc.collect()
    assert ref() is None
    assert "cuStreamDestroy" not in fake.calls  # not ndd's to destroy


def test_wraps_a_torch_stream_on_its_device(fake):
    s = ndd.stream(stream=TorchLikeStream(0x5150, index=1))
    assert (s.handle, s.device_id) == (0x5150, 1)
    with pytest.raises(ValueError, match="is on device 1, not 0"):
        ndd.stream(stream=TorchLikeStream(0x5150, index=1), device_id=0)


def test_wraps_a_raw_handle_on_the_given_or_current_device(fake):
    assert (ndd.stream(stream=0x42).handle, ndd.stream(stream=0x42).device_id) == (0x42, 0)
    assert ndd.stream(stream=0x42, device_id=1).device_id == 1
    with ndd.Device("gpu:1"):
        assert ndd.stream(stream=0x42).device_id == 1
    assert ndd.stream(stream=0x42) == ndd.stream(stream=0x42)
    assert "cuStreamCreate" not in fake.calls


def test_rejects_what_is_not_a_stream(fake):
    with pytest.raises(TypeError, match="cannot use a str as a CUDA stream"):
        ndd.stream(stream="s")
    with pytest.raises(ValueError, match="__cuda_stream__ version 3"):
        ndd.stream(stream=types.SimpleNamespace(__cuda_stream__=lambda: (3, 1)))


def test_synchronize_waits_on_that_stream(fake):
    s = ndd.stream(device_id=0)
    s.synchronize()
    assert fake.streams[s.handle] == [("synchronize",)]


def test_event_orders_a_consumer_after_a_producer(fake):
    producer, consumer = ndd.stream(device_id=0), ndd.stream(device_id=0)
    streams.order_after(consumer.handle, producer.handle, 0)
    ((_, event),) = fake.streams[consumer.handle]
    assert fake.streams[consumer.handle] == [("wait", event)]
    assert fake.events[event] == (producer.handle, 0)
    calls = len(fake.calls)
    streams.order_after(producer.handle, producer.handle, 0)
    assert len(fake.calls) == calls


# -- current and default streams, EvalContext ------------------------------------------


def test_default_context_stream_precedence(fake):
    own = ndd.get_current_stream()
    assert own.device_id == 0 and own is ndd.get_current_stream()
    default, current = ndd.stream(device_id=0), ndd.stream(device_id=0)
    ndd.set_default_stream(default)
    assert ndd.get_default_stream() is default
    assert ndd.get_current_stream() is default
    ndd.set_current_stream(current)
    assert ndd.get_current_stream() is current
    ndd.set_current_stream(None)
    assert ndd.get_current_stream() is default
    ndd.set_default_stream(None)
    assert ndd.get_current_stream() not in (default, current)


def test_current_stream_is_per_thread_default_stream_per_process(fake):
    default, current = ndd.stream(device_id=0), ndd.stream(device_id=0)
    ndd.set_default_stream(default)
    ndd.set_current_stream(current)
    seen = []
    t = threading.Thread(target=lambda: seen.append(ndd.get_current_stream()))
    t.start()
    t.join()
    assert seen == [default]
    assert ndd.get_current_stream() is current


def test_each_thread_default_context_gets_its_own_stream(fake):
    seen = []
    t = threading.Thread(target=lambda: seen.append(ndd.get_current_stream()))
    t.start()
    t.join()
    assert seen[0] != ndd.get_current_stream()


def test_eval_context_on_device_1_uses_a_stream_on_device_1(fake):
    ctx = ndd.EvalContext(device_id=1)
    assert ctx.cuda_stream.device_id == 1
    with ndd.Device("gpu:1"):
        assert ctx.cuda_stream is ndd.get_current_stream()  # took the current stream
    with ctx:
        assert _current_device(fake) == 1
        assert ndd.Device.current().device_id == 1


def test_eval_context_takes_the_current_stream_when_created(fake):
    chosen = ndd.stream(device_id=0)
    ndd.set_current_stream(chosen)
    ctx = ndd.EvalContext(device_id=0)
    ndd.set_current_stream(None)
    assert ctx.cuda_stream is chosen
    given = ndd.stream(device_id=0)
    assert ndd.EvalContext(device_id=0, cuda_stream=given.handle).cuda_stream == given


def test_sync_full_synchronises_the_context_stream_after_a_gpu_invocation(fake):
    ran = []
    inv = Invocation()
    inv.op = types.SimpleNamespace(qualname="test.gpu_op", execute=lambda inv: ran.append(1) or [None])
    inv.inputs, inv.args = (), {}
    inv.device = ndd.Device("gpu", device_id=1)
    with ndd.EvalContext(device_id=1) as ctx, ndd.EvalMode.sync_full:
        schedule(inv, False)
        handle = ctx.cuda_stream.handle
    assert ran == [1]
    assert fake.streams[handle] == [("synchronize",)]


# -- memory pool ---------------------------------------------------------------------------


def test_pool_keeps_freed_memory_cached(fake):
    s = ndd.stream(device_id=0)
    buffers = [memory.DeviceBuffer(n, s, 0) for n in (1000, 2000, 3000)]
    assert fake.pools[0].release_threshold == 2**64 - 1
    assert memory.memory_stats(0) == {
        "used": 6000,
        "reserved": 6000,
        "used_high": 6000,
        "reserved_high": 6000,
    }
    buffers[1].close()
    assert buffers[1].closed and not buffers[0].closed
    s.synchronize()  # the driver would release cached memory here below the threshold
    assert memory.memory_stats(0) == {
        "used": 4000,
        "reserved": 6000,
        "used_high": 6000,
        "reserved_high": 6000,
    }
    assert [entry[0] for entry in fake.streams[s.handle]] == ["alloc"] * 3 + ["free", "synchronize"]


def test_steady_state_allocates_nothing_new(fake):
    s = ndd.stream(device_id=0)
    reserved = []
    for _ in range(1000):
        a = memory.DeviceBuffer(1 << 20, s, 0)
        b = memory.DeviceBuffer(3 << 10, s, 0)
        a.close()
        b.close()
        reserved.append(memory.memory_stats(0)["reserved"])
    assert reserved[0] == (1 << 20) + (3 << 10)
    assert set(reserved) == {reserved[0]}
    assert memory.memory_stats(0)["used"] == 0


def test_buffer_is_freed_on_the_stream_of_its_last_use(fake):
    first, last = ndd.stream(device_id=0), ndd.stream(device_id=0)
    buffer = memory.DeviceBuffer(256, first, 0)
    ptr = buffer.ptr
    buffer.record_use(last)
    last_handle = last.handle
    del last  # the buffer keeps its stream alive until the free is queued
    gc.collect()
    assert last_handle not in fake.destroyed
    del buffer
    gc.collect()
    assert fake.streams[last_handle][-1] == ("free", ptr, 256)
    assert last_handle in fake.destroyed
    assert [e[0] for e in fake.streams[first.handle]] == ["alloc"]


def test_zero_bytes_allocate_nothing(fake):
    buffer = memory.DeviceBuffer(0, ndd.stream(device_id=0), 0)
    assert buffer.ptr == 0 and buffer.closed
    assert "cuMemAllocFromPoolAsync" not in fake.calls


def test_release_gpu_memory_trims_reserved_to_used(fake):
    s = ndd.stream(device_id=1)
    kept = memory.DeviceBuffer(1000, s, 1)
    memory.DeviceBuffer(5000, s, 1).close()
    assert ndd.gpu_memory_stats(1)["reserved"] == 6000
    ndd.release_gpu_memory(1)
    stats = ndd.gpu_memory_stats(1)
    assert stats["reserved"] == stats["used"] == 1000
    assert fake.streams[s.handle][-1] == ("synchronize",)  # the free completed first
    assert fake.pools[0].reserved == 0 and kept.ptr


def test_public_memory_functions_default_to_the_current_device(fake):
    memory.DeviceBuffer(512, ndd.stream(device_id=1), 1)  # freed at once, cached
    with ndd.Device("gpu:1"):
        assert ndd.gpu_memory_stats()["reserved"] == 512
    assert ndd.gpu_memory_stats()["reserved"] == 0


def test_out_of_memory_names_size_and_device():
    with driver.use_fake(FakeDriver(devices=1, memory_bytes=4096)):
        s = streams.create(0)
        memory.DeviceBuffer(1024, s, 0)
        with pytest.raises(
            driver.CudaError, match=r"allocating 8192 bytes on device 0 failed: CUDA_ERROR_OUT_OF_MEMORY"
        ):
            memory.DeviceBuffer(8192, s, 0)


def test_memory_functions_without_gpu_raise_gpu_unavailable():
    with driver.use_fake(FakeDriver(devices=0)):
        with pytest.raises(driver.GpuUnavailableError, match="ndd.gpu_memory_stats needs a CUDA GPU"):
            ndd.gpu_memory_stats()
        with pytest.raises(driver.GpuUnavailableError, match="ndd.release_gpu_memory needs a CUDA GPU"):
            ndd.release_gpu_memory(0)


# -- fork -------------------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_initialises_again_and_leaves_parent_streams_alone(fake):
    parent_stream = ndd.stream(device_id=0)
    own = ndd.get_current_stream()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, never return into pytest
        try:
            before = len(fake.calls)
            child_stream = ndd.stream(device_id=0)
            fresh_own = ndd.get_current_stream()
            del parent_stream
            gc.collect()
            calls = fake.calls[before:]
            report = [
                calls.count("cuInit"),
                calls.count("cuDevicePrimaryCtxRetain"),
                "cuStreamDestroy" in calls,
                fresh_own.handle != own.handle,
                child_stream.device_id,
            ]
            os.write(write, repr(report).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        report = pipe.read()
    os.waitpid(pid, 0)
    assert report == repr([1, 1, False, True, 0])
    assert fake.calls.count("cuInit") == 1  # the parent's state is untouched
    assert parent_stream.handle in fake.streams


# -- the fake's additions ---------------------------------------------------------------------


def test_fake_records_stream_flags_and_destroyed_handles():
    fake = FakeDriver()
    fake.cuInit(0)
    stream = fake.cuStreamCreate(NON_BLOCKING)[1]
    event = fake.cuEventCreate(0)[1]
    fake.cuStreamDestroy(stream)
    fake.cuEventDestroy(event)
    assert fake.stream_flags == {int(stream): NON_BLOCKING}
    assert fake.destroyed == [int(stream), int(event)]


# -- the same on a real GPU -----------------------------------------------------------------------


@pytest.mark.gpu
def test_gpu_contexts_and_properties():
    context.make_current(0)
    props = context.device_properties(0)
    assert props.compute_capability >= (7, 0) and props.sm_count > 0
    with ndd.Device("gpu", device_id=0):
        assert int(context.current_context()) == int(context.primary_context(0))


@pytest.mark.gpu
def test_gpu_streams_and_events():
    producer, consumer = ndd.stream(), ndd.stream()
    assert producer.handle != consumer.handle
    streams.order_after(consumer.handle, producer.handle, producer.device_id)
    consumer.synchronize()
    assert ndd.stream(stream=producer.handle, device_id=producer.device_id) == producer
    ctx = ndd.EvalContext(device_id=0)
    assert ctx.cuda_stream.device_id == 0


@pytest.mark.gpu
def test_gpu_torch_stream_is_wrapped():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    ts = torch.cuda.Stream(device=0)
    s = ndd.stream(stream=ts)
    assert (s.handle, s.device_id) == (ts.cuda_stream, 0)
    s.synchronize()


@pytest.mark.gpu
def test_gpu_pool_steady_state_and_release():
    s = ndd.stream(device_id=0)
    s.synchronize()
    memory.DeviceBuffer(1 << 20, s, 0).close()
    s.synchronize()
    start = ndd.gpu_memory_stats(0)
    for _ in range(1000):
        memory.DeviceBuffer(1 << 20, s, 0).close()
    s.synchronize()
    stats = ndd.gpu_memory_stats(0)
    assert stats["reserved"] == start["reserved"] and stats["used"] == start["used"]
    ndd.release_gpu_memory(0)
    assert ndd.gpu_memory_stats(0)["reserved"] <= stats["used"] + (1 << 21)


@pytest.mark.gpu
def test_gpu_out_of_memory_names_size_and_device():
    s = ndd.stream(device_id=0)
    with pytest.raises(
        driver.CudaError, match=r"allocating \d+ bytes on device 0 failed: CUDA_ERROR_OUT_OF_MEMORY"
    ):
        memory.DeviceBuffer(1 << 50, s, 0)
