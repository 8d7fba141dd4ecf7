"""Steady state of the GPU memory pool: many small GPU operations leave the pool's used
memory where it started and reserve nothing more after the first iterations (on the
host-run FakeDriver and on a real GPU)."""

import gc

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

import ndd  # noqa: E402

ITERATIONS = 10_000


@pytest.mark.parametrize("mode", [ndd.EvalMode.eager, ndd.EvalMode.sync_full])
def test_ten_thousand_small_operations_return_pool_memory_to_its_start(mode, any_gpu):
    a = ndd.tensor(np.arange(64, dtype=np.float32)).gpu()
    b = ndd.batch([np.full((3, 5), i, np.int16) for i in range(4)]).gpu()
    ctx = ndd.EvalContext.current()
    with mode:
        warm = ((a * 2.0 + a) < 50.0, ndd.cast(b, dtype=ndd.float32) - 1.0)
        warm[0].evaluate(), warm[1].evaluate()
        del warm
        ctx.cuda_stream.synchronize()
        gc.collect()
        start = ndd.gpu_memory_stats(0)
        last = None
        for i in range(ITERATIONS // 4):
            x = (a * float(i) + a) < 50.0
            y = ndd.cast(b, dtype=ndd.float32) - 1.0
            x.evaluate(), y.evaluate()
            last = (x, y)
        expected_x = (np.arange(64, dtype=np.float32) * float(i) + np.arange(64, dtype=np.float32)) < 50.0
        np.testing.assert_array_equal(np.asarray(last[0].cpu()), expected_x)
        del x, y, last
        ctx.cuda_stream.synchronize()
    gc.collect()
    end = ndd.gpu_memory_stats(0)
    assert end["used"] == start["used"]
    # Everything after the warm-up iteration came from memory the pool already held.
    assert end["reserved"] <= start["reserved"] + 4 * 64 * 8
