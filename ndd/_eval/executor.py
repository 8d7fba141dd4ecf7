"""The async executor: one worker thread per EvalContext that runs queued
invocations in submission order."""

import queue
import threading

from .mode import EvalMode

__all__ = ["AsyncExecutor"]


class AsyncExecutor:
    """Runs ``task.run()`` for submitted tasks on a daemon thread, FIFO.

    Waiting uses one condition shared by all tasks; the worker only touches it
    when someone waits, so a stream of submissions costs one queue put each.
    """

    def __init__(self, name: str):
        self._queue = queue.SimpleQueue()
        self._cond = threading.Condition(threading.Lock())
        self._waiting = 0
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._thread.start()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def submit(self, task) -> None:
        self._queue.put(task)

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

    def _work(self):
        # Operators called from a task (none of ours do) run inline.
        EvalMode.sync_cpu.__enter__()
        get = self._queue.get
        while True:
            task = get()
            task.run()
            if self._waiting:
                with self._cond:
                    self._cond.notify_all()
