"""``EvalContext``: the per-thread owner of the device, stream, thread pool and
async executor that operator calls use."""

import threading
import weakref
from typing import TYPE_CHECKING

from .device import Device, device_stack_active
from .executor import AsyncExecutor
from .thread_pool import ThreadPool, check_num_threads, default_thread_pool

if TYPE_CHECKING:
    from ..checkpoint import Checkpoint

__all__ = ["EvalContext"]

_tls = threading.local()


def _context_stack():
    stack = getattr(_tls, "stack", None)
    if stack is None:
        stack = _tls.stack = []
    return stack


class EvalContext:
    """Where and with what resources operators run.

    Parameters
    ----------
    num_threads : int, optional
        Size of a thread pool owned by this context (exclusive with ``thread_pool``).
    device_id : int, optional
        GPU the context uses; defaults to the current device (None without a GPU).
    cuda_stream : optional
        Anything ``ndd.stream()`` accepts; defaults to the current stream of the
        context's device when the context is created (see ``cuda_stream``).
    thread_pool : ThreadPool, optional
        A pool to use instead of the default one.

    Notes
    -----
    ``with ctx:`` makes the context (and, for a GPU context, its device) current
    on the calling thread; leaving the outermost ``with`` evaluates every pending
    result recorded in it.
    """

    # Passed as cuda_stream by default(): the context follows set_current_stream /
    # set_default_stream instead of taking the current stream once.
    _FOLLOW_CURRENT = object()

    def __init__(self, *, num_threads=None, device_id=None, cuda_stream=None, thread_pool=None):
        if num_threads is not None and thread_pool is not None:
            raise ValueError("EvalContext: num_threads and thread_pool cannot both be given")
        if device_id is None:
            device_id = Device.current().device_id
        if thread_pool is not None and thread_pool.device_id != device_id:
            raise ValueError(
                f"EvalContext: thread_pool is bound to device {thread_pool.device_id}, "
                f"the context to device {device_id}"
            )
        if num_threads is not None:
            num_threads = check_num_threads("EvalContext", num_threads)
        self._device_id = device_id
        self._own_pool = (
            ThreadPool(num_threads, device_id=device_id) if num_threads is not None else thread_pool
        )
        self._stream = None
        self._own_stream = None
        if cuda_stream is EvalContext._FOLLOW_CURRENT:
            pass
        elif cuda_stream is not None:
            from .stream import stream

            self._stream = stream(stream=cuda_stream, device_id=device_id)
        elif device_id is not None:
            from .stream import get_current_stream

            with Device("gpu", device_id):
                self._stream = get_current_stream()
        self._executor = None
        self._executor_lock = threading.Lock()
        self._pending = weakref.WeakSet()
        self._owner_thread = None
        self._depth = 0
        self._checkpoint = None

    @property
    def device_id(self):
        """The GPU the context's work runs on (None without one)."""
        return self._device_id

    @property
    def thread_pool(self) -> ThreadPool:
        """The ``ThreadPool`` that runs the context's CPU work."""
        return self._own_pool if self._own_pool is not None else default_thread_pool(self._device_id)

    @property
    def num_threads(self) -> int:
        """Number of threads of the context's thread pool."""
        return self.thread_pool.num_threads

    @property
    def cuda_stream(self):
        """The stream GPU operators of this context run on (None for the CPU).

        A context created without ``cuda_stream`` took the current stream of its
        device. A thread's default context follows, in this order: the stream
        given to ``set_current_stream``, the device's ``set_default_stream``, and
        a stream of its own, created on first use.
        """
        if self._stream is not None:
            return self._stream
        if self._device_id is None:
            return None
        from .stream import get_default_stream, stream

        default = get_default_stream(self._device_id)
        if default is not None:
            return default
        own = self._own_stream
        # A stream made before a fork (or for another driver) is not valid here.
        if own is None or own._owner.stale:
            with self._executor_lock:
                if self._own_stream is own:
                    self._own_stream = stream(device_id=self._device_id)
        return self._own_stream

    @property
    def checkpoint(self) -> "Checkpoint":
        """The ``ndd.checkpoint.Checkpoint`` of this context, created on first use.

        A context that is reused (the default one of a thread, say) keeps its
        checkpoint: ``clear()`` it before using it for another pipeline.
        """
        if self._checkpoint is None:
            # One-off lazy creations, like the executor's: they can share its lock.
            with self._executor_lock:
                if self._checkpoint is None:
                    from ..checkpoint import Checkpoint  # ndd.checkpoint imports this module

                    self._checkpoint = Checkpoint()
        return self._checkpoint

    def _set_stream(self, cuda_stream):
        self._stream = cuda_stream

    @property
    def executor(self) -> AsyncExecutor:
        """The worker thread of this context, started on first use."""
        if self._executor is None:
            with self._executor_lock:
                if self._executor is None:
                    self._executor = AsyncExecutor(f"ndd-eval-{id(self):x}")
        return self._executor

    def record_pending(self, invocation) -> None:
        """Remember a deferred invocation so that ``evaluate_all`` can run it."""
        self._pending.add(invocation)

    def evaluate_all(self) -> None:
        """Run every deferred invocation recorded here whose results are still referenced."""
        pending = sorted(self._pending, key=lambda inv: inv.seq)
        self._pending = weakref.WeakSet()
        for inv in pending:
            inv.ensure_run()

    def cached_results(self, invocation):
        """Reserved for result caching; ndd does not cache results."""
        return None

    def cache_results(self, invocation, results) -> None:
        """Reserved for result caching; ndd does not cache results."""

    def __enter__(self):
        me = threading.get_ident()
        if self._owner_thread is not None and self._owner_thread != me:
            raise RuntimeError("An EvalContext cannot be active in two threads simultaneously.")
        self._owner_thread = me
        self._depth += 1
        if self._device_id is not None:
            Device("gpu", self._device_id).__enter__()
        _context_stack().append(self)
        return self

    def __exit__(self, *exc_info):
        _context_stack().pop()
        self._depth -= 1
        try:
            if self._depth == 0:
                self._owner_thread = None
                if exc_info[0] is None:
                    self.evaluate_all()
        finally:
            if self._device_id is not None:
                Device("gpu", self._device_id).__exit__(*exc_info)

    @staticmethod
    def current() -> "EvalContext":
        """The innermost context entered on this thread, else ``default()``."""
        state = _tls.__dict__
        stack = state.get("stack")
        if stack:
            return stack[-1]
        # Every operator call asks for the context: keep the default one of the
        # default device at hand while no ``with Device`` is active.
        if not device_stack_active():
            ctx = state.get("implicit")
            if ctx is None:
                ctx = state["implicit"] = EvalContext.default()
            return ctx
        return EvalContext.default()

    @staticmethod
    def default() -> "EvalContext":
        """This thread's default context for the current device, created on first use."""
        defaults = getattr(_tls, "defaults", None)
        if defaults is None:
            defaults = _tls.defaults = {}
        device_id = Device.current().device_id
        ctx = defaults.get(device_id)
        if ctx is None:
            ctx = defaults[device_id] = EvalContext(
                device_id=device_id, cuda_stream=EvalContext._FOLLOW_CURRENT
            )
        return ctx

    def __repr__(self):
        return f"EvalContext(device_id={self._device_id}, num_threads={self.num_threads})"
