"""The async executor: one worker thread per EvalContext that runs queued
invocations in submission order."""

import atexit
import collections
import queue
import threading
import time
import weakref

from .fork import on_fork_in_child
from .mode import EvalMode

__all__ = ["AsyncExecutor"]

# Put on a worker's queue when its executor is gone: the thread ends.
_STOP = object()
# How long the interpreter's exit waits for the worker threads to run what is queued.
_EXIT_WAIT_SECONDS = 5.0
# The executors whose thread may still run; set once the interpreter exits.
_LIVE = weakref.WeakSet()
_exiting = False


class _Worker:
    """What an executor shares with its thread: the queue, the condition waiters
    sleep on, how many are waiting, and the tasks submitted and not yet run, in
    order (``unfinished``: those in the queue, the one being run, and one the
    thread is taking from the queue). The thread holds this, never the executor,
    so that an executor nobody uses any more (a context left, a thread's default
    context when the thread ends) is freed and stops its thread."""

    __slots__ = ("tasks", "cond", "waiting", "unfinished")

    def __init__(self, tasks=()):
        self.tasks = queue.SimpleQueue()
        self.unfinished = collections.deque()
        for task in tasks:
            self.unfinished.append(task)
            self.tasks.put(task)
        self.cond = threading.Condition(threading.Lock())
        self.waiting = 0


def _work(worker):
    # Operators called from a task (none of ours do) run inline.
    EvalMode.sync_cpu.__enter__()
    get = worker.tasks.get
    finished = worker.unfinished.popleft
    while True:
        task = get()
        if task is _STOP:
            return
        task.run()
        finished()
        # Not kept while waiting for the next one: it may own memory (a GPU output),
        # and it holds its context, which holds the executor.
        task = None
        if worker.waiting:
            with worker.cond:
                worker.cond.notify_all()


class AsyncExecutor:
    """Runs ``task.run()`` for submitted tasks on a daemon thread, FIFO.

    Waiting uses one condition shared by all tasks; the worker only touches it
    when someone waits, so a stream of submissions costs one queue put each.
    The thread starts on the first submission or wait, and again in a forked
    child; it ends when the executor is freed.
    """

    def __init__(self, name: str):
        self._name = name
        self._worker = _Worker()
        self._thread = None
        self._stop = None
        self._start_lock = threading.Lock()
        on_fork_in_child(self)

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    def submit(self, task) -> None:
        if _exiting:
            self._run_inline(task)
            return
        if self._thread is None:
            self._start()
        worker = self._worker
        worker.unfinished.append(task)
        worker.tasks.put(task)

    def _run_inline(self, task):
        """Past the interpreter's exit (an atexit function calling operators): the
        worker has stopped, or stops once it has run what was queued before; then
        the task runs on the calling thread."""
        if self._thread is not None:
            self._thread.join()
        unfinished = self._worker.unfinished
        while unfinished:  # tasks queued before a fork, whose thread never started here
            unfinished.popleft().run()
        task.run()

    def _start(self):
        if _exiting:
            self._run_inline(_NOTHING)
            return
        with self._start_lock:
            if self._thread is None:
                worker = self._worker
                thread = threading.Thread(target=_work, args=(worker,), name=self._name, daemon=True)
                thread.start()
                self._thread = thread
                _LIVE.add(self)
                self._stop = weakref.finalize(self, worker.tasks.put, _STOP)

    def wait(self, task) -> None:
        """Block until ``task.done`` is true."""
        if task.done:
            return
        if self._thread is None:
            self._start()  # in a forked child: the tasks carried over from the parent
        worker = self._worker
        with worker.cond:
            worker.waiting += 1
            try:
                while not task.done:
                    worker.cond.wait()
            finally:
                worker.waiting -= 1

    def _after_fork_in_child(self):
        # The worker thread did not survive the fork, and its locks may have been
        # held at that moment: take new ones. The tasks not finished run on a new
        # thread: the one the old thread was running (or had just taken from the
        # queue, before it could note it) first, then those still queued.
        tasks = []
        for task in self._worker.unfinished:
            if task.done:
                continue
            if task.outputs is not None or task.error is not None:
                task.done = True  # forked between its last steps: it has its results
            else:
                tasks.append(task)
        if self._stop is not None:
            self._stop.detach()
            self._stop = None
        self._worker = _Worker(tasks)
        self._start_lock = threading.Lock()
        # The new thread starts on the next submission or wait, once every object
        # owning threads has dropped its own (a task may use the thread pool).
        self._thread = None


class _Nothing:
    """A task that does nothing (``_start`` past the exit runs what is queued)."""

    def run(self):
        pass


_NOTHING = _Nothing()


@atexit.register
def _stop_at_exit():
    """Let the worker threads run what is queued and stop, before the interpreter
    finalizes: a daemon thread still inside a library then is ended by
    ``pthread_exit`` as it takes the GIL back, which aborts the process when a C++
    frame is below it. Operators called later (from other atexit functions) run on
    the calling thread."""
    global _exiting
    _exiting = True
    executors = [e for e in list(_LIVE) if e._thread is not None]
    for executor in executors:
        executor._worker.tasks.put(_STOP)
    deadline = time.monotonic() + _EXIT_WAIT_SECONDS
    for executor in executors:
        executor._thread.join(max(0.0, deadline - time.monotonic()))
