"""Device memory: stream-ordered allocations from each device's default pool.

ndd allocates with ``cuMemAllocFromPoolAsync`` from the driver's default memory
pool of the device and frees with ``cuMemFreeAsync`` on the stream that last
used the memory. The pool's release threshold is raised to the maximum, so the
driver keeps freed memory cached instead of returning it at every
synchronisation: once the first iterations of a loop have reserved what they
need, later iterations take everything from the cache and nothing from the OS.
``release_unused`` gives the cache back on request.

The driver's pool was chosen over a caching allocator of ndd's own because it
reuses memory across streams by stream order on its own and shares the cache
with other users of the default pool; whether a caching allocator would be
faster has not been measured (no GPU was available when this was written).
"""

import weakref

from . import driver
from .context import device_properties, initialize, make_current, state
from .streams import live_streams, synchronize

__all__ = [
    "DeviceBuffer",
    "allocate",
    "gpu_memory_stats",
    "memory_stats",
    "release_gpu_memory",
    "release_unused",
]

_UINT64_MAX = (1 << 64) - 1


def _handle(stream) -> int:
    """The raw handle of an ``ndd.Stream``, a ``StreamOwner`` or an int."""
    return int(stream) if isinstance(stream, int) else int(stream.handle)


def _pool(device_id: int):
    """The default memory pool of ``device_id``, set up to keep freed memory."""
    runtime = initialize()
    pool = runtime.pools.get(device_id)
    if pool is None:
        if not device_properties(device_id).memory_pools_supported:
            raise driver.CudaError(f"device {device_id} does not support stream-ordered memory pools")
        api = runtime.api
        device = driver.check(api.cuDeviceGet(device_id), f"cuDeviceGet({device_id})")
        pool = driver.check(
            api.cuDeviceGetDefaultMemPool(device), f"getting the memory pool of device {device_id}"
        )
        threshold = api.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
        driver.check(
            api.cuMemPoolSetAttribute(pool, threshold, api.cuuint64_t(_UINT64_MAX)),
            f"setting the release threshold of the memory pool of device {device_id}",
        )
        runtime.pools[device_id] = pool
    return pool


def _free(runtime, ptr, last_use):
    if runtime is not state():
        return  # allocated through another driver or in the parent of a fork
    stream = last_use[0]
    driver.check(runtime.api.cuMemFreeAsync(ptr, _handle(stream)), f"freeing device memory at {ptr:#x}")


class DeviceBuffer:
    """``nbytes`` of memory on device ``device_id`` at address ``ptr``.

    The memory goes back to the pool when the buffer is closed or collected,
    freed in order on ``stream``: the stream of its last use. Whoever queues work
    reading or writing the buffer on another stream calls ``record_use`` with
    that stream (after ordering it after the buffer's previous stream).
    """

    __slots__ = ("ptr", "nbytes", "device_id", "_last_use", "_finalizer", "__weakref__")

    def __init__(self, nbytes: int, stream, device_id: int):
        runtime = initialize()
        pool = runtime.pools.get(device_id)
        if pool is None:
            pool = _pool(device_id)
        make_current(device_id)
        self.nbytes = nbytes
        self.device_id = device_id
        # The stream object itself is kept (not only its handle) so that a stream
        # ndd created is not destroyed before the free queued on it.
        self._last_use = [stream]
        if nbytes == 0:
            self.ptr = 0
            self._finalizer = None
            return
        try:
            ptr = driver.check(
                runtime.api.cuMemAllocFromPoolAsync(nbytes, pool, _handle(stream)),
                f"allocating {nbytes} bytes on device {device_id}",
            )
        except driver.CudaError as error:
            stats = memory_stats(device_id)
            raise driver.CudaError(
                f"{error} (the pool holds {stats['reserved']} bytes, {stats['used']} in use)", error.code
            ) from None
        self.ptr = int(ptr)
        self._finalizer = weakref.finalize(self, _free, runtime, self.ptr, self._last_use)
        self._finalizer.atexit = False

    @property
    def stream(self):
        """The stream of the buffer's last use, on which it will be freed."""
        return self._last_use[0]

    @stream.setter
    def stream(self, stream) -> None:
        self._last_use[0] = stream

    def record_use(self, stream) -> None:
        """Note that work on ``stream`` uses the buffer (it is freed there)."""
        self._last_use[0] = stream

    def close(self) -> None:
        """Free the memory now (in order on the buffer's stream)."""
        if self._finalizer is not None:
            self._finalizer()

    @property
    def closed(self) -> bool:
        return self._finalizer is None or not self._finalizer.alive

    def __repr__(self):
        return f"DeviceBuffer(ptr={self.ptr:#x}, nbytes={self.nbytes}, device_id={self.device_id})"


def allocate(nbytes: int, stream, device_id: int) -> DeviceBuffer:
    """A new ``DeviceBuffer`` allocated in order on ``stream``."""
    return DeviceBuffer(nbytes, stream, device_id)


def memory_stats(device_id: int) -> dict:
    """Bytes of the device's pool: ``used`` by live allocations, ``reserved`` from
    the driver (used plus cached), and the high-water marks of both."""
    runtime = state()
    pool = _pool(device_id)
    attribute = runtime.api.CUmemPool_attribute
    names = {
        "used": attribute.CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
        "reserved": attribute.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
        "used_high": attribute.CU_MEMPOOL_ATTR_USED_MEM_HIGH,
        "reserved_high": attribute.CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
    }
    return {
        name: int(driver.check(runtime.api.cuMemPoolGetAttribute(pool, attr), f"reading {name} memory"))
        for name, attr in names.items()
    }


def release_unused(device_id: int) -> None:
    """Return the pool's cached memory to the driver, after the streams ndd holds
    on the device have finished (so that their queued frees count as done)."""
    runtime = state()
    pool = _pool(device_id)
    for handle in live_streams(device_id):
        synchronize(handle)
    driver.check(runtime.api.cuMemPoolTrimTo(pool, 0), f"trimming the memory pool of device {device_id}")


def _device_or_current(what: str, device_id):
    driver.require_gpu(what)
    if device_id is None:
        from .._eval.device import Device

        device_id = Device.default_device_id("gpu")
    return device_id


def gpu_memory_stats(device_id: int | None = None) -> dict:
    """Memory statistics of ndd's GPU memory pool.

    Parameters
    ----------
    device_id : int, optional
        The GPU; defaults to the current device.

    Returns
    -------
    dict
        ``used``: bytes in live allocations; ``reserved``: bytes the pool holds
        from the driver (used plus cached for reuse); ``used_high`` and
        ``reserved_high``: their highest values so far.

    Raises
    ------
    GpuUnavailableError
        Without a usable CUDA GPU.
    """
    return memory_stats(_device_or_current("ndd.gpu_memory_stats", device_id))


def release_gpu_memory(device_id: int | None = None) -> None:
    """Give the GPU memory that ndd's pool caches but does not use back to the driver,
    and the page-locked host memory it keeps for copies from the GPU.

    Waits for the work queued on the streams ndd holds on the device first. Later
    allocations get memory from the driver again, so call this between phases of
    a program (after training, before evaluation), not every iteration.

    Parameters
    ----------
    device_id : int, optional
        The GPU; defaults to the current device.

    Raises
    ------
    GpuUnavailableError
        Without a usable CUDA GPU.
    """
    release_unused(_device_or_current("ndd.release_gpu_memory", device_id))
    from . import pinned

    pinned.release()
