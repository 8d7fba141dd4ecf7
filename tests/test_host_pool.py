"""The caching host allocator behind the arrays operators create (ndd/_cpu/host_pool.pyx)."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import ndd
from ndd._cpu import host_pool
from ndd._eval.thread_pool import ThreadPool

try:
    from numpy._core.multiarray import get_handler_name as handler_name
except ImportError:  # NumPy 1.x
    from numpy.core.multiarray import get_handler_name as handler_name

POOL = "ndd_host_pool"


@pytest.fixture
def pooled():
    """The pool as this thread's NumPy allocator, with no idle blocks to start with."""
    host_pool.release()
    previous = host_pool.activate()
    yield
    host_pool.restore(previous)
    host_pool.release()


def test_operator_outputs_come_from_the_pool():
    out = ndd.as_tensor(np.arange(200_000, dtype=np.float32)) + 1
    array = np.asarray(out.evaluate())
    assert handler_name(array) == POOL
    np.testing.assert_array_equal(array, np.arange(200_000, dtype=np.float32) + 1)


def test_user_arrays_keep_numpy_allocator():
    ndd.as_tensor(np.zeros(10)).evaluate()
    assert handler_name(np.empty(100_000)) != POOL


def test_thread_pool_workers_allocate_from_the_pool():
    pool = ThreadPool(2)
    names = pool.map(lambda n: handler_name(np.empty(n)), [100_000, 200_000, 300_000])
    assert names == [POOL] * 3


@pytest.mark.usefixtures("pooled")
def test_a_freed_block_is_reused_for_a_request_of_its_size_class():
    first = np.empty(600_000, np.uint8)
    address = first.ctypes.data
    del first
    assert host_pool.idle() >= 600_000
    # 590,000 bytes round up to the same class (9/8 of 512 KiB).
    second = np.empty(590_000, np.uint8)
    assert second.ctypes.data == address
    assert host_pool.idle() == 0


@pytest.mark.usefixtures("pooled")
def test_pooled_blocks_are_aligned_to_cache_lines():
    arrays = [np.empty(n, np.uint8) for n in (70_000, 300_001, 1 << 20)]
    assert all(a.ctypes.data % 64 == 0 for a in arrays)


@pytest.mark.usefixtures("pooled")
def test_zeros_from_a_reused_block_are_zero():
    dirty = np.full(500_000, 7, np.uint8)
    del dirty
    clean = np.zeros(500_000, np.uint8)
    assert not clean.any()


@pytest.mark.parametrize(
    "old, new", [(1000, 200_000), (200_000, 1000), (100_000, 400_000), (400_000, 100_000)]
)
@pytest.mark.usefixtures("pooled")
def test_resize_in_place_keeps_the_leading_values(old, new):
    array = np.arange(old, dtype=np.uint8)
    array.resize(new, refcheck=False)
    kept = min(old, new)
    np.testing.assert_array_equal(array[:kept], np.arange(kept, dtype=np.uint8))
    if new > old:
        assert not array[old:].any()


@pytest.mark.usefixtures("pooled")
def test_arrays_may_be_freed_on_another_thread():
    arrays = [np.ones(100_000 + 4096 * i) for i in range(32)]
    thread = threading.Thread(target=arrays.clear)
    thread.start()
    thread.join()
    assert host_pool.idle() >= 32 * 800_000


@pytest.mark.usefixtures("pooled")
def test_idle_bytes_stay_under_the_limit():
    limit = host_pool.idle_limit_bytes()
    try:
        host_pool.set_idle_limit(3 << 20)
        arrays = [np.empty(1 << 20, np.uint8) for _ in range(6)]
        del arrays
        assert host_pool.idle() == 3 << 20
        host_pool.set_idle_limit(1 << 20)
        assert host_pool.idle() == 1 << 20
    finally:
        host_pool.set_idle_limit(limit)


@pytest.mark.usefixtures("pooled")
def test_release_returns_every_idle_block():
    blocks = [np.empty(1 << 20) for _ in range(4)]
    del blocks
    assert host_pool.idle() > 0
    host_pool.release()
    assert host_pool.idle() == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.usefixtures("pooled")
def test_a_forked_child_allocates_while_a_thread_held_the_lock():
    blocks = [np.empty(1 << 18) for _ in range(8)]
    stop = threading.Event()

    def churn():
        while not stop.is_set():
            previous = host_pool.activate()
            np.empty(1 << 18)
            host_pool.restore(previous)

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        pid = os.fork()
        if pid == 0:
            previous = host_pool.activate()
            ok = handler_name(np.ones(1 << 18)) == POOL
            host_pool.restore(previous)
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
    finally:
        stop.set()
        thread.join()
    del blocks
    assert os.waitstatus_to_exitcode(status) == 0


def test_the_idle_limit_comes_from_the_environment():
    code = "from ndd._cpu import host_pool; print(host_pool.idle_limit_bytes())"

    def limit(value):
        env = dict(os.environ, NDD_HOST_POOL_MB=value)
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
        )
        return int(done.stdout), done.stderr

    assert limit("64") == (64 << 20, "")
    assert limit("0")[0] == 0
    default, warning = limit("lots")
    assert default == 512 << 20 and "NDD_HOST_POOL_MB must be a non-negative integer" in warning
