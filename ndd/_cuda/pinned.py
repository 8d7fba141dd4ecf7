"""Page-locked (pinned) host memory for the arrays that copies from the GPU fill.

A copy into pageable memory goes through the driver's staging buffers; into
page-locked memory the GPU writes directly, several times faster for the large
copies a training step makes (a batch of 256 CHW float32 images is 154 MB). Such
memory is slow to allocate, so freed blocks are kept for reuse, in size classes
(steps of 1/8 of a power of two), up to ``IDLE_LIMIT`` idle bytes.

``empty(shape, dtype, device_id)`` gives a NumPy array over a block, or None for
an array under ``MIN_BYTES`` (the host pool serves those well) or when the driver
has no page-locked memory to give; the block goes back to the cache when the
array and every view of it are gone. A block made before a fork is never reused
or freed in the child (its driver state is not the child's).
"""

import ctypes
import threading
import weakref

import numpy as np

from .context import cached, make_current, state

__all__ = ["IDLE_LIMIT", "MIN_BYTES", "empty", "idle_bytes", "release"]

# Arrays smaller than this come from the host pool.
MIN_BYTES = 1 << 20
# The most bytes of freed blocks kept for reuse.
IDLE_LIMIT = 512 << 20
# The cache's name among the driver state's caches (context.cached).
_CACHE = "pinned_host_blocks"


class _Block:
    __slots__ = ("ptr", "size", "cache")

    def __init__(self, ptr, size, cache):
        self.ptr = ptr
        self.size = size
        self.cache = cache


class _Cache:
    """The idle blocks of one driver state, by size class."""

    def __init__(self, api):
        self.api = api
        self.lock = threading.Lock()
        self.free = {}
        self.idle = 0


def _size_class(nbytes):
    """``nbytes`` rounded up to the next of 8 steps per power of two."""
    step = max(1 << max(nbytes.bit_length() - 4, 0), 4096)
    return -(-nbytes // step) * step


def _cache():
    return cached(_CACHE, _Cache)


def _take(cache, size):
    with cache.lock:
        blocks = cache.free.get(size)
        if blocks:
            cache.idle -= size
            return blocks.pop()
    return None


def _give_back(block):
    cache = block.cache
    current = state()
    if current.caches.get(_CACHE) is not cache:
        return  # made for another driver state (before a fork): not ours to reuse or free
    with cache.lock:
        if cache.idle + block.size <= IDLE_LIMIT:
            cache.free.setdefault(block.size, []).append(block)
            cache.idle += block.size
            return
    _free(block)


def _free(block):
    (result,) = block.cache.api.cuMemFreeHost(block.ptr)
    del result  # freeing at shutdown or after a context error is best effort


def empty(shape, dtype, device_id):
    """An uninitialised array of ``shape`` and ``dtype`` in page-locked memory, or None
    (a small array, or no page-locked memory to be had)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < MIN_BYTES:
        return None
    cache = _cache()
    size = _size_class(nbytes)
    block = _take(cache, size)
    if block is None:
        make_current(device_id)
        result, ptr = cache.api.cuMemHostAlloc(size, 0)
        if result != cache.api.CUresult.CUDA_SUCCESS or not ptr:
            # Page-locked memory is a limited resource: the caller falls back to pageable.
            return None
        block = _Block(int(ptr), size, cache)
    memory = (ctypes.c_char * nbytes).from_address(block.ptr)
    weakref.finalize(memory, _give_back, block).atexit = False
    return np.frombuffer(memory, np.uint8).view(dtype).reshape(shape)


def idle_bytes() -> int:
    """Bytes of page-locked blocks kept for reuse."""
    return _cache().idle


def release() -> None:
    """Free the page-locked blocks kept for reuse."""
    cache = _cache()
    with cache.lock:
        blocks = [b for bs in cache.free.values() for b in bs]
        cache.free.clear()
        cache.idle = 0
    for block in blocks:
        _free(block)
