"""Page-locked host memory for copies from the GPU (ndd/_cuda/pinned.py): large arrays
land in cached page-locked blocks that come back for reuse when the array and its views
are gone; small ones, and any when the driver has none to give, in pageable memory."""

import gc

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from cuda.bindings.driver import CUresult  # noqa: E402

import ndd  # noqa: E402
from ndd._cuda import pinned  # noqa: E402


@pytest.fixture
def fresh(fake):
    """The two-device FakeDriver, with nothing cached in page-locked blocks."""
    pinned.release()
    yield fake
    gc.collect()
    pinned.release()


def _in_pinned_block(fake, array):
    address = array.ctypes.data
    return any(base <= address < base + len(buffer) for base, buffer in fake.host_allocations.items())


def _large(seed=0):
    return np.random.default_rng(seed).random((300, 1000), dtype=np.float32)  # 1.2 MB


def test_a_large_copy_from_the_gpu_lands_in_page_locked_memory_and_its_block_is_reused(fresh):
    values = _large()
    x = ndd.tensor(values).gpu()
    host = np.asarray(x.cpu())
    np.testing.assert_array_equal(host, values)
    assert _in_pinned_block(fresh, host)
    assert fresh.calls.count("cuMemHostAlloc") == 1
    del host
    gc.collect()
    assert pinned.idle_bytes() >= values.nbytes
    again = np.asarray(ndd.tensor(values + 1.0).gpu().cpu())
    np.testing.assert_array_equal(again, values + 1.0)
    assert fresh.calls.count("cuMemHostAlloc") == 1  # the same block, taken from the cache
    assert pinned.idle_bytes() == 0


def test_a_view_keeps_its_block_from_being_reused(fresh):
    x = ndd.tensor(_large()).gpu()
    host = np.asarray(x.cpu())
    row = host[5]
    del host
    gc.collect()
    assert pinned.idle_bytes() == 0
    other = np.asarray(ndd.tensor(_large(1)).gpu().cpu())
    assert fresh.calls.count("cuMemHostAlloc") == 2
    np.testing.assert_array_equal(row, _large()[5])
    np.testing.assert_array_equal(other, _large(1))


def test_small_copies_and_a_driver_without_page_locked_memory_use_pageable_memory(fresh):
    small = np.arange(1000, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(ndd.tensor(small).gpu().cpu()), small)
    assert "cuMemHostAlloc" not in fresh.calls
    fresh.fail_next("cuMemHostAlloc", CUresult.CUDA_ERROR_OUT_OF_MEMORY)
    values = _large()
    host = np.asarray(ndd.tensor(values).gpu().cpu())
    np.testing.assert_array_equal(host, values)
    assert not _in_pinned_block(fresh, host)


def test_blocks_beyond_the_idle_limit_are_freed_and_release_frees_the_rest(fresh, monkeypatch):
    monkeypatch.setattr(pinned, "IDLE_LIMIT", 3 << 20)  # two blocks of 1.25 MiB
    arrays = [np.asarray(ndd.tensor(_large(i)).gpu().cpu()) for i in range(3)]
    assert len(fresh.host_allocations) == 3
    del arrays
    gc.collect()
    # Two blocks fit under the limit; the third is freed.
    assert fresh.calls.count("cuMemFreeHost") == 1 and len(fresh.host_allocations) == 2
    assert pinned.idle_bytes() == 2 * pinned._size_class(_large().nbytes)
    pinned.release()
    assert pinned.idle_bytes() == 0 and not fresh.host_allocations


def test_release_gpu_memory_frees_the_idle_page_locked_blocks_too(fresh):
    host = np.asarray(ndd.tensor(_large()).gpu().cpu())
    del host
    gc.collect()
    assert pinned.idle_bytes() > 0
    ndd.release_gpu_memory(0)
    assert pinned.idle_bytes() == 0 and not fresh.host_allocations


@pytest.mark.gpu
def test_on_a_gpu_a_large_copy_back_is_page_locked_and_a_small_one_is_not():
    from ndd._cuda import driver

    api = driver.api()
    values = _large(2)
    host = np.asarray(ndd.tensor(values).gpu().cpu())
    np.testing.assert_array_equal(host, values)
    # The driver knows the flags of the page-locked memory it allocated, and of no other.
    assert api.cuMemHostGetFlags(host.ctypes.data)[0] == CUresult.CUDA_SUCCESS
    small = np.asarray(ndd.tensor(values[:10]).gpu().cpu())
    np.testing.assert_array_equal(small, values[:10])
    assert api.cuMemHostGetFlags(small.ctypes.data)[0] != CUresult.CUDA_SUCCESS
