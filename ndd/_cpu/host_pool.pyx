# cython: boundscheck=False, wraparound=False
"""A caching host allocator for the arrays operators create.

A batch of decoded 500x375 images is 36 MB of fresh arrays; glibc serves blocks
that large with a new ``mmap`` each and returns them with ``munmap`` when freed,
so every batch pays for page faults and for the kernel zeroing the pages: 0.3 ms
of a 0.9 ms JPEG decode on our machines. This module keeps freed blocks of
64 KiB and more in size classes (steps of 1/8 of a power of two) and hands them
out again, up to a limit of idle bytes (512 MiB, or ``$NDD_HOST_POOL_MB``); smaller
blocks go to ``malloc``.

It is installed as NumPy's data allocator (``PyDataMem_SetHandler``) on the
threads that run operators: for the duration of an invocation on the calling
thread (``activate``/``restore``), and for good on the workers of ndd's thread
pools (``install``). Arrays keep the allocator that made them, so they may be
freed on any thread; a lock guards the free lists.
"""

import os
import warnings

from cpython.pycapsule cimport PyCapsule_New
from cpython.pythread cimport (
    PyThread_acquire_lock,
    PyThread_allocate_lock,
    PyThread_release_lock,
    PyThread_type_lock,
    WAIT_LOCK,
)
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset, strncpy

cimport numpy as cnp

cnp.import_array()


cdef extern from "stdlib.h" nogil:
    int posix_memalign(void **memptr, size_t alignment, size_t size)


cdef extern from "numpy/ndarraytypes.h":
    ctypedef struct PyDataMemAllocator:
        void *ctx
        void *(*malloc)(void *ctx, size_t size) noexcept nogil
        void *(*calloc)(void *ctx, size_t nelem, size_t elsize) noexcept nogil
        void *(*realloc)(void *ctx, void *ptr, size_t new_size) noexcept nogil
        void (*free)(void *ctx, void *ptr, size_t size) noexcept nogil

    ctypedef struct PyDataMem_Handler:
        char name[127]
        uint8_t version
        PyDataMemAllocator allocator


cdef extern from "numpy/arrayobject.h":
    object PyDataMem_SetHandler(object handler)


# Blocks below this size go to malloc: glibc serves them from its heaps quickly.
cdef size_t POOLED_MIN = 64 * 1024
# The pooled block's bookkeeping sits in front of it; 64 bytes keep the data
# cache-line aligned for vector kernels.
cdef size_t LARGE_HEADER = 64
cdef size_t SMALL_HEADER = 16
cdef int64_t SMALL_TAG = -1
# 8 size classes per power of two from 64 KiB to 2**63 bytes.
cdef enum:
    NUM_CLASSES = 8 * 48

cdef void *free_lists[NUM_CLASSES]
cdef size_t idle_bytes = 0
cdef size_t idle_limit = 512 * 1024 * 1024


def _limit_from_environment():
    """``NDD_HOST_POOL_MB``: the limit on idle bytes, in MiB (0: no caching)."""
    global idle_limit
    value = os.environ.get("NDD_HOST_POOL_MB")
    if value is None:
        return
    try:
        megabytes = int(value)
        if megabytes < 0:
            raise ValueError
    except ValueError:
        warnings.warn(
            f"NDD_HOST_POOL_MB must be a non-negative integer (MiB), got {value!r}; keeping 512",
            RuntimeWarning,
            stacklevel=2,
        )
        return
    idle_limit = <size_t>megabytes * 1024 * 1024


_limit_from_environment()
cdef PyThread_type_lock lists_lock = PyThread_allocate_lock()
cdef PyDataMem_Handler handler


cdef extern from *:
    int __builtin_clzll(unsigned long long) nogil


cdef inline int size_class(size_t size) noexcept nogil:
    """The class of a pooled request of ``size`` bytes (at least POOLED_MIN)."""
    cdef int power = 63 - __builtin_clzll(size)  # size >= 2**power
    cdef size_t step = (<size_t>1) << (power - 3)
    cdef size_t steps = (size + step - 1) // step  # 8..16
    return (power - 16) * 8 + <int>(steps - 8)


cdef inline size_t class_bytes_of(int cls) noexcept nogil:
    """The block size of class ``cls``: (8 + cls % 8) steps of 2**(cls // 8 + 13)."""
    return (<size_t>(8 + cls % 8)) << (cls // 8 + 13)


# Header words before a block, counted back from the pointer handed out.
cdef inline int64_t *tag_of(void *ptr) noexcept nogil:
    return (<int64_t *>ptr) - 1  # the size class, or SMALL_TAG


cdef inline size_t *requested_of(void *ptr) noexcept nogil:
    return (<size_t *>ptr) - 2  # the bytes asked for (kept for realloc)


cdef inline void **next_of(void *ptr) noexcept nogil:
    return <void **>ptr  # an idle block links to the next one of its class


cdef void *pool_malloc(void *ctx, size_t size) noexcept nogil:
    global idle_bytes
    cdef int cls
    cdef void *raw
    cdef void *block
    if size < POOLED_MIN:
        raw = malloc(size + SMALL_HEADER)
        if raw == NULL:
            return NULL
        block = <char *>raw + SMALL_HEADER
        tag_of(block)[0] = SMALL_TAG
        requested_of(block)[0] = size
        return block
    cls = size_class(size)
    PyThread_acquire_lock(lists_lock, WAIT_LOCK)
    block = free_lists[cls]
    if block != NULL:
        free_lists[cls] = next_of(block)[0]
        idle_bytes -= class_bytes_of(cls)
    PyThread_release_lock(lists_lock)
    if block == NULL:
        if posix_memalign(&raw, LARGE_HEADER, class_bytes_of(cls) + LARGE_HEADER) != 0:
            return NULL
        block = <char *>raw + LARGE_HEADER
        tag_of(block)[0] = cls
    requested_of(block)[0] = size
    return block


cdef void pool_free(void *ctx, void *block, size_t size) noexcept nogil:
    global idle_bytes
    cdef int64_t cls
    cdef size_t class_bytes
    if block == NULL:
        return
    cls = tag_of(block)[0]
    if cls == SMALL_TAG:
        free(<char *>block - SMALL_HEADER)
        return
    class_bytes = class_bytes_of(<int>cls)
    PyThread_acquire_lock(lists_lock, WAIT_LOCK)
    if idle_bytes + class_bytes <= idle_limit:
        next_of(block)[0] = free_lists[cls]
        free_lists[cls] = block
        idle_bytes += class_bytes
        block = NULL
    PyThread_release_lock(lists_lock)
    if block != NULL:
        free(<char *>block - LARGE_HEADER)


cdef void *pool_calloc(void *ctx, size_t nelem, size_t elsize) noexcept nogil:
    cdef size_t size
    cdef void *block
    if elsize != 0 and nelem > (<size_t>-1) // elsize:
        return NULL
    size = nelem * elsize
    block = pool_malloc(ctx, size)
    if block != NULL:
        memset(block, 0, size)
    return block


cdef void *pool_realloc(void *ctx, void *block, size_t new_size) noexcept nogil:
    cdef void *moved
    cdef size_t old_size
    if block == NULL:
        return pool_malloc(ctx, new_size)
    old_size = requested_of(block)[0]
    moved = pool_malloc(ctx, new_size)
    if moved == NULL:
        return NULL
    memcpy(moved, block, old_size if old_size < new_size else new_size)
    pool_free(ctx, block, old_size)
    return moved


strncpy(handler.name, b"ndd_host_pool", 127)
handler.version = 1
handler.allocator.ctx = NULL
handler.allocator.malloc = pool_malloc
handler.allocator.calloc = pool_calloc
handler.allocator.realloc = pool_realloc
handler.allocator.free = pool_free

# NumPy looks the handler up in a capsule of this name; arrays hold a reference
# to it, and the module keeps it for the process's lifetime.
_HANDLER = PyCapsule_New(<void *>&handler, b"mem_handler", NULL)


def activate():
    """Make the pool NumPy's allocator in this thread's context; returns the
    allocator it replaces, for ``restore``."""
    return PyDataMem_SetHandler(_HANDLER)


def restore(previous):
    """Put back the allocator ``activate`` returned."""
    PyDataMem_SetHandler(previous)


def install():
    """Make the pool NumPy's allocator in this thread's context for good (worker threads)."""
    PyDataMem_SetHandler(_HANDLER)


def set_idle_limit(size_t limit):
    """Keep at most ``limit`` bytes of freed blocks for reuse (releasing the excess now)."""
    global idle_limit
    idle_limit = limit
    _release(limit)


def idle_limit_bytes():
    """The current limit on idle bytes kept for reuse."""
    return idle_limit


def idle():
    """Bytes of freed blocks currently kept for reuse."""
    return idle_bytes


def release():
    """Return every idle block to the system."""
    _release(0)


cdef void _release(size_t keep) noexcept nogil:
    global idle_bytes
    cdef int cls
    cdef void *block
    PyThread_acquire_lock(lists_lock, WAIT_LOCK)
    for cls in range(NUM_CLASSES - 1, -1, -1):
        while idle_bytes > keep and free_lists[cls] != NULL:
            block = free_lists[cls]
            free_lists[cls] = next_of(block)[0]
            idle_bytes -= class_bytes_of(cls)
            free(<char *>block - LARGE_HEADER)
    PyThread_release_lock(lists_lock)


def _after_fork_in_child():
    """A new lock: another thread may have held the old one when the process forked."""
    global lists_lock
    lists_lock = PyThread_allocate_lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
