"""ndd in child processes: forked children (whose parent's worker threads did
not survive the fork) and spawned ones."""

import multiprocessing

import numpy as np
import pytest

import ndd


def _work(results):
    """Eager operators, the async executor and the thread pool in one go."""
    big = ndd.batch([np.full((256, 256), i, np.float32) for i in range(8)])  # uses the thread pool
    ragged = ndd.batch([np.arange(4), np.arange(6)])
    out = ndd.reductions.sum(big * 2), ndd.reductions.sum(ragged + 1)
    results.put(([float(np.asarray(s)) for s in out[0]], [int(np.asarray(s)) for s in out[1]]))


EXPECTED = ([2.0 * i * 256 * 256 for i in range(8)], [10, 21])


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_operators_work_in_child_processes(method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"{method} is not available here")
    # Start the parent's worker thread and thread pool first: a forked child inherits
    # them without their threads.
    results = multiprocessing.get_context(method).SimpleQueue()
    _work(results)
    assert results.get() == EXPECTED
    child = multiprocessing.get_context(method).Process(target=_work, args=(results,))
    child.start()
    child.join(timeout=120)
    if child.is_alive():
        child.kill()
        pytest.fail(f"the {method} child hung")
    assert child.exitcode == 0
    assert results.get() == EXPECTED
