"""ndd in child processes: forked children (whose parent's worker threads did
not survive the fork) and spawned ones."""

import gc
import multiprocessing
import pathlib
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import ndd
from ndd._eval.executor import AsyncExecutor


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


def _send_results(results):
    """A child returning ndd results as they are: a Tensor and a Batch, pickled."""
    image = ndd.flip(ndd.tensor(np.arange(12, dtype=np.uint8).reshape(2, 2, 3), layout="HWC"), horizontal=1)
    results.put((image, ndd.batch([np.ones(3, np.float32), np.zeros(2, np.float32)])))


def test_a_spawned_child_returns_tensors_and_batches():
    context = multiprocessing.get_context("spawn")
    results = context.SimpleQueue()
    child = context.Process(target=_send_results, args=(results,))
    child.start()
    image, batch = results.get()
    child.join(timeout=120)
    assert child.exitcode == 0
    assert image.layout == "HWC" and image.dtype == ndd.uint8
    np.testing.assert_array_equal(np.asarray(image), np.arange(12, dtype=np.uint8).reshape(2, 2, 3)[:, ::-1])
    assert [np.asarray(s).tolist() for s in batch.tensors] == [[1.0, 1.0, 1.0], [0.0, 0.0]]


_FORK_WHILE_RUNNING = """
import os, sys
import numpy as np
import ndd

images = ndd.batch([np.full((1000, 1000, 3), 9, np.uint8)] * 8, layout="HWC")
images.evaluate()
running = ndd.resize(images, size=[900, 900])  # eager: on the worker thread when we fork
queued = ndd.flip(running)
pid = os.fork()
if pid == 0:
    ok = np.asarray(queued.select(7))[5, 5, 0] == 9 and np.asarray(running.select(0)).shape == (900, 900, 3)
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_a_fork_while_an_eager_operator_runs_finishes_it_in_the_child():
    # The task the parent's worker was running when the process forked is run again
    # in the child (it hung there, waiting for a thread that does not exist).
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("fork is not available here")
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", _FORK_WHILE_RUNNING], timeout=120, capture_output=True)
        assert done.returncode == 0, done.stderr.decode()


def test_worker_threads_end_with_their_contexts():
    # A context's worker thread ends when the context is freed: contexts made per
    # step, and the default contexts of short-lived threads, left one thread each.
    def eval_threads():
        return [t for t in threading.enumerate() if t.name.startswith("ndd-eval-")]

    before = len(eval_threads())
    for _ in range(40):
        with ndd.EvalContext():
            np.asarray(ndd.tensor([1.0]) * 2)
    for _ in range(20):
        thread = threading.Thread(target=lambda: np.asarray(ndd.tensor([1.0]) * 2))
        thread.start()
        thread.join()
    gc.collect()
    deadline = time.monotonic() + 30
    while len(eval_threads()) > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(eval_threads()) <= before


PHOTOS = pathlib.Path(ndd.__file__).parent / "_sample_data" / "photos"
_AT_EXIT = """
import atexit, sys
import numpy as np

def late():
    # Registered before ndd is imported: runs after ndd's exit hooks, which have
    # stopped the worker threads; eager operators then run on this thread.
    import threading
    import ndd
    workers = [t for t in threading.enumerate() if t.name.startswith(("ndd-eval-", "ndd-reader-"))]
    print("late", len(workers), int(np.asarray(ndd.reductions.sum(ndd.tensor(np.arange(5)) * 2))), flush=True)
    names = [bytes(np.asarray(ndd.get_property(reader()[0], key="source_info"))).decode() for _ in range(20)]
    print("read", *[name.rsplit("/", 1)[-1] for name in names], flush=True)

atexit.register(late)
import ndd
ndd.set_num_threads(2)
big = ndd.batch([np.full((512, 512), i, np.float32) for i in range(16)])
queued = [ndd.reductions.sum(big * k) for k in range(20)]  # still running when the script ends
import glob
reader = ndd.readers.File(files=sorted(glob.glob(sys.argv[1] + "/*.jpg")))
reader()  # its loading thread reads ahead
print("queued", flush=True)
"""


def test_eager_operators_queued_at_exit_run_and_the_process_ends_cleanly():
    # At exit the worker threads run what is queued and stop before the interpreter
    # finalizes (a daemon thread inside a library then could abort the process);
    # operators called by later atexit functions still work.
    out = subprocess.run(
        [sys.executable, "-c", _AT_EXIT, str(PHOTOS)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    # Twenty samples after the first: past what the loading thread read ahead.
    photos = sorted(p.name for p in PHOTOS.glob("*.jpg"))
    read = [photos[(1 + i) % len(photos)] for i in range(20)]
    assert out.stdout.split() == ["queued", "late", "0", "20", "read", *read]
    assert out.stderr == ""


class _Task:
    """A task as the executor sees one: run() records the order of the runs."""

    def __init__(self, log, name):
        self.log, self.name = log, name
        self.done, self.outputs, self.error = False, None, None

    def run(self):
        self.log.append(self.name)
        self.outputs = []
        self.done = True


def test_a_task_the_worker_took_from_the_queue_as_the_process_forked_runs_in_the_child():
    # Python 3.13's queue hands an item to the waiting worker thread before that
    # thread runs again: a fork in between left the task in neither the queue nor the
    # thread's hands, and the child waited for it forever.
    log = []
    executor = AsyncExecutor("ndd-test-fork")
    taken, queued, finished = _Task(log, "taken"), _Task(log, "queued"), _Task(log, "finished")
    finished.done = True
    # The worker's state at the fork: "finished" ran (its removal not yet noted),
    # "taken" left the queue, "queued" is still in it.
    executor._worker.unfinished.extend([finished, taken, queued])
    executor._worker.tasks.put(queued)
    executor._after_fork_in_child()
    waiter = threading.Thread(target=executor.wait, args=(queued,), daemon=True)
    waiter.start()
    waiter.join(30)
    assert not waiter.is_alive() and log == ["taken", "queued"]
