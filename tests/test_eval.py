"""Evaluation engine: modes, contexts, devices, thread pools, streams and errors."""

import os
import subprocess
import sys
import threading
import time
import traceback

import numpy as np
import pytest

import ndd
from ndd._cuda import driver


def has_run(result):
    """Whether the invocation producing ``result`` has run (without waiting for it)."""
    return result._data is not None or result._inv.done


MODES = [ndd.EvalMode.deferred, ndd.EvalMode.eager, ndd.EvalMode.sync_cpu, ndd.EvalMode.sync_full]


def test_eval_mode_members_and_alias():
    assert ndd.EvalMode.default is ndd.EvalMode.eager
    assert list(ndd.EvalMode) == MODES
    # The reference's order of the names, the alias last.
    assert list(ndd.EvalMode.__members__) == ["deferred", "eager", "sync_cpu", "sync_full", "default"]
    assert ndd.EvalMode.deferred < ndd.EvalMode.eager < ndd.EvalMode.sync_cpu < ndd.EvalMode.sync_full


def test_eval_mode_nesting():
    assert ndd.EvalMode.current() is ndd.EvalMode.eager
    with ndd.EvalMode.deferred as entered:
        assert entered is None
        assert ndd.EvalMode.current() is ndd.EvalMode.deferred
        with ndd.EvalMode.sync_cpu:
            assert ndd.EvalMode.current() is ndd.EvalMode.sync_cpu
        assert ndd.EvalMode.current() is ndd.EvalMode.deferred
    assert ndd.EvalMode.current() is ndd.EvalMode.eager


def test_eval_mode_is_thread_local():
    seen = []
    with ndd.EvalMode.sync_cpu:
        worker = threading.Thread(target=lambda: seen.append(ndd.EvalMode.current()))
        worker.start()
        worker.join()
    assert seen == [ndd.EvalMode.eager]


def _pipeline():
    x = ndd.tensor(np.arange(12, dtype=np.uint8).reshape(3, 4), layout="HW")
    y = ndd.cast(x, dtype=ndd.float32) * 0.5 + 1
    b = ndd.batch([np.arange(3), np.arange(5)])
    return y[1:], (b * b) - 1


@pytest.mark.parametrize("mode", MODES)
def test_results_are_identical_in_every_mode(mode):
    with ndd.EvalMode.sync_cpu:
        ref_t, ref_b = _pipeline()
    with mode:
        t, b = _pipeline()
        np.testing.assert_array_equal(np.asarray(t), np.asarray(ref_t))
        for got, want in zip(b, ref_b, strict=True):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert t.layout == "HW" and t.dtype == ndd.float32


def test_metadata_is_known_before_the_run():
    with ndd.EvalMode.deferred:
        x = ndd.tensor(np.zeros((4, 5), np.uint8))
        y = ndd.cast(x, dtype=ndd.float32) + 1
        assert not has_run(y)
        assert (y.dtype, y.shape, y.ndim) == (ndd.float32, (4, 5), 2)
        assert not has_run(y)
        y.evaluate()
        assert has_run(y)


def test_deferred_runs_nothing_until_needed():
    with ndd.EvalMode.deferred:
        x = ndd.tensor([1, 2, 3])
        bad = x // 0  # would fail if it ran
        del bad  # a dropped failing result never raises
        good = x + 1
    np.testing.assert_array_equal(np.asarray(good), [2, 3, 4])


def test_leaving_an_eval_context_evaluates_pending_results():
    ctx = ndd.EvalContext()
    with ctx, ndd.EvalMode.deferred:
        y = ndd.tensor([1, 2]) * 3
        assert not has_run(y)
    assert has_run(y)


def test_eager_runs_on_the_context_worker_thread_in_order():
    x = ndd.tensor(np.arange(4))
    results = [x + i for i in range(50)]
    for i, r in enumerate(results):
        np.testing.assert_array_equal(np.asarray(r), np.arange(4) + i)
    worker = ndd.EvalContext.current().executor.thread
    assert worker is not threading.current_thread() and worker.daemon


def test_eager_error_surfaces_at_use_naming_operator_and_call_site():
    x = ndd.tensor([1, 2])
    y = x // 0  # the failing line
    line = sys._getframe().f_lineno - 1
    with pytest.raises(ZeroDivisionError) as info:
        y.evaluate()
    message = str(info.value)
    assert "An error happened during asynchronous execution" in message
    assert "operator //" in message
    assert f"{os.path.basename(__file__)}:{line}" in message
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    # Every later access raises again, and the context stays usable.
    with pytest.raises(ZeroDivisionError):
        np.asarray(y)
    np.testing.assert_array_equal(np.asarray(x + 1), [2, 3])


@pytest.mark.parametrize("mode", ["eager", "deferred"])
def test_an_inputs_error_is_told_once_naming_the_operator_that_failed(mode):
    with getattr(ndd.EvalMode, mode):
        x = ndd.tensor([1, 2])
        y = x // 0  # the failing line
        line = sys._getframe().f_lineno - 1
        z = (y + 1) * 2
    with pytest.raises(ZeroDivisionError) as info:
        z.evaluate()
    message = str(info.value)
    assert message.count("An error happened during") == 1
    assert "of operator //" in message and f"{os.path.basename(__file__)}:{line}" in message


def test_deferred_error_message():
    with ndd.EvalMode.deferred:
        y = ndd.tensor([1]) % 0
    with pytest.raises(ZeroDivisionError, match="deferred evaluation of operator %"):
        y.evaluate()


def test_an_error_read_many_times_keeps_a_short_traceback():
    # A consumer of a failed result re-raised the same exception object, whose
    # traceback grew by the raising frames at every access.
    with ndd.EvalMode.deferred:
        y = ndd.flip(ndd.tensor([[1]], layout="HW") % 0)
    lengths = []
    for _ in range(30):
        with pytest.raises(ZeroDivisionError) as info:
            y.evaluate()
        lengths.append(len(traceback.extract_tb(info.value.__traceback__)))
    assert lengths[-1] == lengths[1] < 20


def test_an_interrupted_deferred_evaluation_runs_again(monkeypatch):
    # Ctrl-C during an evaluation stops the program, not the operator: nothing is
    # recorded, and the next evaluation runs it (it re-raised KeyboardInterrupt forever).
    from ndd._ops.compose import GRID_MASK

    kernel = GRID_MASK.kernel
    calls = []

    def interrupted_once(arrays, args):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return kernel(arrays, args)

    monkeypatch.setattr(GRID_MASK, "kernel", interrupted_once)
    image = np.full((8, 8, 1), 5, np.uint8)
    with ndd.EvalMode.deferred:
        masked = ndd.grid_mask(ndd.tensor(image, layout="HWC"), tile=4)
        flipped = ndd.flip(masked)
    with pytest.raises(KeyboardInterrupt):
        flipped.evaluate()
    expected = np.asarray(ndd.grid_mask(ndd.tensor(image, layout="HWC"), tile=4))
    np.testing.assert_array_equal(np.asarray(flipped), expected[:, ::-1])
    np.testing.assert_array_equal(np.asarray(masked), expected)


def test_sync_error_raises_at_the_call():
    with ndd.EvalMode.sync_cpu, pytest.raises(ZeroDivisionError, match="operator //"):
        ndd.tensor([1]) // 0


def test_external_memory_runs_synchronously():
    a = np.arange(3)
    y = ndd.as_tensor(a) + 1
    assert has_run(y)  # ran at once: the caller may now reuse `a`
    a[:] = 100
    np.testing.assert_array_equal(np.asarray(y), [1, 2, 3])


def test_prepare_errors_raise_at_the_call_and_name_the_operator():
    with pytest.raises(TypeError, match="ndd.cast"):
        ndd.cast(ndd.tensor([1]), dtype="not-a-type")
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        ndd.cast(ndd.tensor([1]), dtype=ndd.float32, foo=1)
    with pytest.raises(TypeError, match="dtype"):
        ndd.cast(ndd.tensor([1]))
    with pytest.raises(ValueError, match="Inconsistent batch size"):
        ndd.cast(ndd.batch([[1], [2]]), dtype=ndd.float32, batch_size=3)
    with pytest.raises(ValueError, match="Invalid device type: mixed"):
        ndd.cast(ndd.tensor([1]), dtype=ndd.float32, device="mixed")


def test_eval_context_properties_and_nesting():
    default = ndd.EvalContext.default()
    assert ndd.EvalContext.current() is default
    assert default is ndd.EvalContext.default()
    ctx = ndd.EvalContext(num_threads=3)
    assert ctx.num_threads == 3 and ctx.thread_pool.num_threads == 3
    with ctx as entered:
        assert entered is ctx
        assert ndd.EvalContext.current() is ctx
        inner = ndd.EvalContext()
        with inner:
            assert ndd.EvalContext.current() is inner
        with ctx:  # re-entrant
            assert ndd.EvalContext.current() is ctx
    assert ndd.EvalContext.current() is default


def test_eval_context_argument_checks():
    with pytest.raises(ValueError, match="num_threads and thread_pool"):
        ndd.EvalContext(num_threads=2, thread_pool=ndd.ThreadPool(2))
    pool = ndd.ThreadPool(2)
    assert ndd.EvalContext(thread_pool=pool).thread_pool is pool


def test_eval_context_cannot_be_active_in_two_threads():
    ctx = ndd.EvalContext()
    errors = []

    def enter_elsewhere():
        try:
            ctx.__enter__()
        except RuntimeError as exc:
            errors.append(str(exc))

    with ctx:
        t = threading.Thread(target=enter_elsewhere)
        t.start()
        t.join()
    assert errors == ["An EvalContext cannot be active in two threads simultaneously."]


def test_default_context_is_per_thread():
    seen = []
    t = threading.Thread(target=lambda: seen.append(ndd.EvalContext.default()))
    t.start()
    t.join()
    assert seen[0] is not ndd.EvalContext.default()


def test_large_batches_use_the_thread_pool():
    samples = [np.full((256, 256), i, np.float32) for i in range(8)]
    out = ndd.batch(samples) * 2
    for i, s in enumerate(out):
        assert np.asarray(s)[0, 0] == 2 * i


def test_num_threads_defaults_to_affinity_and_can_be_set():
    default = ndd.get_num_threads()
    assert default == len(os.sched_getaffinity(0))
    ndd.set_num_threads(3)
    try:
        assert ndd.get_num_threads() == 3
        assert ndd.EvalContext().num_threads == 3
    finally:
        ndd.set_num_threads(None)
    assert ndd.get_num_threads() == default
    with pytest.raises(TypeError):
        ndd.set_num_threads(2.0)
    with pytest.raises(ValueError):
        ndd.set_num_threads(0)
    for bad in (0, -1):
        with pytest.raises(ValueError, match=f"EvalContext: num_threads must be a positive int, got {bad!r}"):
            ndd.EvalContext(num_threads=bad)
    # Not integers: TypeError, as the reference.
    for bad in (2.0, "2", True):
        with pytest.raises(
            TypeError, match=f"EvalContext: num_threads must be an int, got {type(bad).__name__}"
        ):
            ndd.EvalContext(num_threads=bad)
        with pytest.raises(
            TypeError, match=f"ThreadPool: num_threads must be an int, got {type(bad).__name__}"
        ):
            ndd.ThreadPool(bad)


@pytest.mark.parametrize("count", [np.int64(2), np.int32(2), np.uint8(2)])
def test_thread_counts_may_be_numpy_integers(count):
    assert ndd.EvalContext(num_threads=count).num_threads == 2
    assert type(ndd.ThreadPool(count).num_threads) is int
    ndd.set_num_threads(count)
    try:
        assert ndd.get_num_threads() == 2 and type(ndd.get_num_threads()) is int
    finally:
        ndd.set_num_threads(None)


def test_num_threads_honours_the_environment():
    code = "import ndd; print(ndd.get_num_threads())"
    env = dict(os.environ, DALI_NUM_THREADS="5")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "5"


def test_device_objects():
    cpu = ndd.Device("cpu")
    assert cpu == ndd.Device.CPU and cpu.device_id is None and cpu.device_type == "cpu"
    assert repr(cpu) == "Device(device_type='cpu')"
    assert ndd.device("cpu") == cpu and ndd.device(cpu) is cpu and ndd.device(None) is None
    with pytest.raises(ValueError, match="Invalid device type: mixed"):
        ndd.Device("mixed")
    with pytest.raises(TypeError):
        ndd.device(3)
    assert ndd.Device.type_from_dlpack(1) == "cpu"
    assert ndd.Device.from_dlpack(ndd.tensor([1])) == cpu


def test_streams_without_a_gpu():
    if driver.device_count() > 0:
        pytest.skip("a GPU is present")
    assert ndd.get_current_stream() is None
    assert ndd.get_default_stream() is None
    assert ndd.stream(stream=None) is None
    ndd.set_current_stream(None)
    ndd.set_default_stream(None)
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        ndd.stream()
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        ndd.Device("gpu")
    assert ndd.EvalContext.current().cuda_stream is None


@pytest.mark.parametrize(
    "device, message", [("gpu", "needs a CUDA GPU"), ("gpu:0", "invalid device id 0: there is no CUDA GPU")]
)
def test_an_operator_asked_for_a_gpu_without_one_names_itself(device, message):
    # The error named Device('gpu'), not the call that asked for it.
    if driver.device_count() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(driver.GpuUnavailableError, match=rf"^ndd\.flip with device='{device}'.? {message}"):
        ndd.flip(ndd.tensor(np.zeros((2, 2, 3), np.uint8)), device=device)


def test_a_gpu_id_without_a_gpu_is_also_a_value_error():
    # As the reference: "Invalid device id" is a ValueError (Device('gpu') alone is not).
    if driver.device_count() > 0:
        pytest.skip("a GPU is present")
    for call in (
        lambda: ndd.Device("gpu", 0),
        lambda: ndd.Device("gpu:1"),
        lambda: ndd.EvalContext(device_id=0),
    ):
        with pytest.raises(ValueError, match="invalid device id") as info:
            call()
        assert isinstance(info.value, driver.GpuUnavailableError)
    with pytest.raises(driver.GpuUnavailableError) as info:
        ndd.Device("gpu")
    assert not isinstance(info.value, ValueError)


def test_threads_evaluate_independently():
    results = {}

    def work(k):
        with ndd.EvalMode.eager:
            x = ndd.batch([np.full((3, 3), k, np.int32)] * 4)
            total = ndd.reductions.sum(x * 2 + 1)
            results[k] = [np.asarray(s).item() for s in total]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {k: [9 * (2 * k + 1)] * 4 for k in range(6)}


def test_results_of_one_context_feed_operators_of_another():
    a = ndd.EvalContext()
    b = ndd.EvalContext()
    with a:
        x = ndd.tensor([1, 2, 3]) * 10
    with b:
        y = x + 1
    np.testing.assert_array_equal(np.asarray(y), [11, 21, 31])


def test_an_error_does_not_poison_later_calls_in_eager_mode():
    bad = ndd.tensor([1]) // 0
    good = [ndd.tensor([i]) + 1 for i in range(20)]
    with pytest.raises(ZeroDivisionError):
        bad.evaluate()
    assert [np.asarray(g).item() for g in good] == list(range(1, 21))


def test_deferred_results_consumed_by_an_eager_operator():
    with ndd.EvalMode.deferred:
        x = ndd.tensor(np.arange(4)) * 3
    y = x + 1  # eager: the worker runs the deferred producer first
    np.testing.assert_array_equal(np.asarray(y), np.arange(4) * 3 + 1)


def test_a_deferred_result_needed_by_several_threads_runs_once():
    import time

    from ndd._ops.schema import Input, Operator
    from ndd._prepare.call import invoke

    runs = []

    def slow_increment(arrays, args):
        runs.append(1)
        time.sleep(0.02)  # widen the window in which the threads race
        return arrays[0] + 1

    op = Operator("_slow_increment", inputs=[Input("input")], kernel=slow_increment)
    with ndd.EvalMode.deferred:
        y = invoke(op, (ndd.tensor(np.arange(5)),), None, None, {})
    results = []
    threads = [threading.Thread(target=lambda: results.append(np.asarray(y).tolist())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [[1, 2, 3, 4, 5]] * 4
    assert len(runs) == 1


@pytest.mark.parametrize("num_threads", [1, 2, 3, 8])
def test_thread_pool_map_keeps_the_order_of_items_of_uneven_cost(num_threads):
    pool = ndd.ThreadPool(num_threads)

    def slow_square(x):
        time.sleep(0.002 * (x % 3))
        return x * x

    assert pool.map(slow_square, list(range(25))) == [x * x for x in range(25)]


def test_thread_pool_map_runs_on_the_caller_and_the_workers():
    pool = ndd.ThreadPool(2)
    barrier = threading.Barrier(2, timeout=10)

    def meet(_):
        barrier.wait()  # both threads must hold an item at once
        return threading.current_thread().name

    names = pool.map(meet, [0, 1])
    assert threading.current_thread().name in names
    assert any(name.startswith("ndd-pool") for name in names)


def test_thread_pool_map_raises_the_first_error_after_every_thread_stops():
    pool = ndd.ThreadPool(2)
    finished = []

    def fail_on_seven(x):
        if x == 7:
            raise KeyError("seven")
        time.sleep(0.001)
        finished.append(x)
        return x

    with pytest.raises(KeyError, match="seven"):
        pool.map(fail_on_seven, list(range(20)))
    count = len(finished)
    time.sleep(0.05)
    assert len(finished) == count  # nothing still running after map returned
    assert pool.map(lambda x: x + 1, [1, 2, 3]) == [2, 3, 4]


@pytest.mark.parametrize("device", ["bogus", 5, "gpu:x"])
def test_a_bad_device_names_the_operator_and_the_argument(device):
    with pytest.raises(ValueError, match=r"^ndd\.flip: 'device': "):
        ndd.flip(np.zeros((4, 4, 3), np.uint8), device=device)


def test_a_long_deferred_chain_evaluates_without_nesting():
    # A running total kept over an epoch: each step's input is the step before. The
    # run phase takes the chain in order, without a nested call per step (which
    # overflowed the stack near 10,000 steps, in a thread sooner).
    def running_total(steps, out):
        with ndd.EvalMode.deferred:
            total = ndd.batch([np.zeros(2, np.float32), np.ones(3, np.float32)])
            scale = ndd.tensor(np.float32(1))
            for _ in range(steps):
                total = total + scale
                scale = scale * 1
        out.append([np.asarray(s) for s in total.tensors])

    got = []
    worker = threading.Thread(target=running_total, args=(30_000, got))
    worker.start()
    worker.join()
    np.testing.assert_array_equal(got[0][0], [30_000, 30_000])
    np.testing.assert_array_equal(got[0][1], [30_001] * 3)


def test_the_number_of_dimensions_is_known_without_running():
    # A decoder's output has an unknown shape but a layout: its ndim, and the
    # operators that need it (resize, rotate, hsv, normalize, slicing), do not run
    # the decoder at the call; a bad file raises where its data is read.
    junk = np.frombuffer(b"not an image" * 8, np.uint8)
    with ndd.EvalMode.deferred:
        image = ndd.decoders.image(ndd.tensor(junk))
        images = ndd.decoders.image(ndd.batch([junk, junk]))
        assert (image.ndim, images.ndim) == (3, 3)
        outputs = [
            ndd.resize(image, size=[4, 4]),
            ndd.resize(images, resize_shorter=8),
            ndd.random_resized_crop(images, size=[4, 4]),
            ndd.rotate(image, angle=10),
            ndd.hsv(images, hue=3),
            ndd.normalize(image),
            image[1:3],
        ]
    assert not image._inv.done and not images._inv.done
    for out in outputs:
        with pytest.raises(RuntimeError, match="ndd.decoders.image: cannot decode"):
            out.evaluate()


def test_thread_pool_map_works_on_when_no_thread_can_start():
    # At interpreter shutdown (a daemon thread still running an operator) the pool
    # cannot start threads: the calling thread does the work (it raised a RuntimeError).
    pool = ndd.ThreadPool(3)
    assert pool.map(lambda x: x * 2, list(range(5))) == [0, 2, 4, 6, 8]
    pool._executor.shutdown()
    assert pool.map(lambda x: x * 2, list(range(5))) == [0, 2, 4, 6, 8]
