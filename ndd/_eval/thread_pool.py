"""``ThreadPool`` for per-sample CPU work, and the process-wide thread count."""

import itertools
import operator
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from .._cpu import host_pool
from .device import Device
from .fork import on_fork_in_child

__all__ = ["ThreadPool", "check_num_threads", "get_num_threads", "set_num_threads"]

_explicit_num_threads = None
_default_num_threads = None
_default_pools = {}
_pools_lock = threading.Lock()


def _new_pools_lock_in_child():
    # The lock may have been held by another thread when the process forked.
    global _pools_lock
    _pools_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_pools_lock_in_child)


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def get_num_threads() -> int:
    """Threads used by default thread pools: the value of ``set_num_threads``,
    else ``DALI_NUM_THREADS``, else the number of CPUs this process may run on."""
    global _default_num_threads
    if _explicit_num_threads is not None:
        return _explicit_num_threads
    if _default_num_threads is None:
        env = os.environ.get("DALI_NUM_THREADS")
        if env:
            try:
                _default_num_threads = int(env)
            except ValueError:
                raise ValueError(f"DALI_NUM_THREADS must be a positive integer, got {env!r}") from None
            if _default_num_threads < 1:
                raise ValueError(f"DALI_NUM_THREADS must be a positive integer, got {env!r}")
        else:
            _default_num_threads = _cpu_count()
    return _default_num_threads


def set_num_threads(n: int | None) -> None:
    """Set the size of default thread pools; ``None`` restores the default.

    Contexts created with an explicit ``num_threads`` or ``thread_pool`` keep theirs;
    default pools are recreated with the new size when next used.
    """
    global _explicit_num_threads
    if n is not None:
        n = _thread_count("set_num_threads", n)
        limit = 100 * _cpu_count()
        if not 0 < n <= limit:
            raise ValueError(f"set_num_threads: the thread count must be in range [1, {limit}], got {n}")
    with _pools_lock:
        _explicit_num_threads = n
        _default_pools.clear()


def default_thread_pool(device_id):
    """The shared pool for ``device_id``, sized by ``get_num_threads()``."""
    num_threads = get_num_threads()
    with _pools_lock:
        pool = _default_pools.get(device_id)
        if pool is None or pool.num_threads != num_threads:
            pool = _default_pools[device_id] = ThreadPool(num_threads, device_id=device_id)
        return pool


def _thread_count(owner: str, num_threads) -> int:
    """``num_threads`` as an int: any integer (numpy's too, as the reference takes them),
    not a bool; TypeError naming ``owner`` for anything else."""
    if isinstance(num_threads, bool) or not hasattr(type(num_threads), "__index__"):
        raise TypeError(f"{owner}: num_threads must be an int, got {type(num_threads).__name__}")
    return operator.index(num_threads)


def check_num_threads(owner: str, num_threads) -> int:
    """``num_threads`` as a positive int; TypeError or ValueError naming ``owner``."""
    num_threads = _thread_count(owner, num_threads)
    if num_threads < 1:
        raise ValueError(f"{owner}: num_threads must be a positive int, got {num_threads!r}")
    return num_threads


class ThreadPool:
    """A pool of worker threads over which CPU operators spread their samples.

    Parameters
    ----------
    num_threads : int, optional
        Number of threads; defaults to ``get_num_threads()``.
    device_id : int, optional
        The GPU the threads are bound to: -1 (the default) for the current device,
        None for no GPU affinity.
    """

    def __init__(self, num_threads: int | None = None, *, device_id: int | None = -1):
        if device_id == -1:
            device_id = Device.current().device_id
        if num_threads is None:
            num_threads = get_num_threads()
        self._num_threads = check_num_threads("ThreadPool", num_threads)
        self._device_id = device_id
        self._executor = None
        self._lock = threading.Lock()
        on_fork_in_child(self)

    @property
    def num_threads(self) -> int:
        """Number of threads, the calling thread included."""
        return self._num_threads

    @property
    def device_id(self) -> int | None:
        """The GPU the threads are bound to (None: no GPU affinity)."""
        return self._device_id

    def map(self, fn, items):
        """``[fn(x) for x in items]``, computed on the pool's threads.

        The calling thread works too, beside ``num_threads - 1`` workers, and each
        takes the next item from a shared counter: one hand-over per thread rather
        than per item, and a slow item (a large image) never leaves a thread idle
        while others remain. The first exception raised is re-raised once every
        thread has stopped.
        """
        count = len(items)
        helpers = min(self._num_threads, count) - 1
        if helpers < 1:
            return [fn(x) for x in items]
        if self._executor is None:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(
                        self._num_threads - 1, thread_name_prefix="ndd-pool", initializer=host_pool.install
                    )
        results = [None] * count
        errors = []
        claim = itertools.count().__next__  # atomic under the GIL

        def work():
            try:
                while not errors:
                    i = claim()
                    if i >= count:
                        return
                    results[i] = fn(items[i])
            except BaseException as exc:
                errors.append(exc)

        futures = []
        try:
            for _ in range(helpers):
                futures.append(self._executor.submit(work))
        except RuntimeError:
            # The interpreter is shutting down (a daemon thread still running an
            # operator): no new threads; the calling thread does the rest.
            pass
        work()
        for future in futures:
            future.result()
        if errors:
            raise errors[0]
        return results

    def _after_fork_in_child(self):
        # The pool's threads did not survive the fork; start new ones on next use.
        self._executor = None
        self._lock = threading.Lock()

    def __repr__(self):
        return f"ThreadPool(num_threads={self._num_threads}, device_id={self._device_id})"
