"""The async executor: one worker thread per EvalContext that runs queued
invocations in submission order."""

import queue
import threading

from .fork import on_fork_in_child
from .mode import EvalMode

__all__ = ["AsyncExecutor"]


class AsyncExecutor:
    """Runs ``task.run()`` for submitted tasks on a daemon thread, FIFO.

    Waiting uses one condition shared by all tasks; the worker only touches it
    when someone waits, so a stream of submissions costs one queue put each.
    The thread starts on the first submission, and again in a forked child.
    """

    def __init__(self, name: str):
        self._name = name
        self._queue = queue.SimpleQueue()
        self._cond = threading.Condition(threading.Lock())
        self._waiting = 0
        self._thread = None
        self._start_lock = threading.Lock()
        on_fork_in_child(self)

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    def submit(self, task) -> None:
        if self._thread is None:
            self._start()
        self._queue.put(task)

    def _start(self):
        with self._start_lock:
            if self._thread is None:
                thread = threading.Thread(
                    target=self._work, args=(self._queue,), name=self._name, daemon=True
                )
                thread.start()
                self._thread = thread

    def wait(self, task) -> None:
        """Block until ``task.done`` is true."""
        if task.done:
            return
        with self._cond:
            self._waiting += 1
            try:
                while not task.done:
                    self._cond.wait()
            finally:
                self._waiting -= 1

    def _work(self, tasks):
        # Operators called from a task (none of ours do) run inline.
        EvalMode.sync_cpu.__enter__()
        get = tasks.get
        while True:
            task = get()
            task.run()
            # Not kept while waiting for the next one: it may own memory (a GPU output).
            task = None
            if self._waiting:
                with self._cond:
                    self._cond.notify_all()

    def _after_fork_in_child(self):
        # The worker thread did not survive the fork, and its locks may have been
        # held at that moment: take new ones, and keep the tasks still queued.
        old = self._queue
        self._queue = queue.SimpleQueue()
        while True:
            try:
                self._queue.put(old.get_nowait())
            except queue.Empty:
                break
        self._cond = threading.Condition(threading.Lock())
        self._waiting = 0
        self._start_lock = threading.Lock()
        self._thread = None
        if not self._queue.empty():
            self._start()
