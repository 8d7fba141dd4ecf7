"""``EvalMode``: when the run phase of an operator call happens."""

import enum
import threading

__all__ = ["EvalMode"]

_tls = threading.local()


def _mode_stack():
    stack = _tls.__dict__.get("stack")
    if stack is None:
        # Every thread starts in the default mode; a new thread does not inherit
        # its parent's mode (as in the reference).
        stack = _tls.stack = [EvalMode.eager]
    return stack


class EvalMode(enum.Enum):
    """How eagerly operator calls are evaluated, in increasing synchronicity.

    ``deferred``
        Record the call; run it only when a result is needed.
    ``eager`` (also ``default``)
        Validate at once and queue the run on the context's worker thread.
    ``sync_cpu``
        Run on the calling thread before returning.
    ``sync_full``
        As ``sync_cpu``, then wait for the context's CUDA stream.

    Use a member as a context manager to change the mode of the current thread::

        with ndd.EvalMode.sync_cpu:
            ...
    """

    deferred = 1
    eager = 2
    sync_cpu = 3
    sync_full = 4
    default = 2  # an alias of eager, listed last as in the reference

    @staticmethod
    def current() -> "EvalMode":
        """The mode in force on the calling thread."""
        return _mode_stack()[-1]

    def __enter__(self):
        _mode_stack().append(self)

    def __exit__(self, *exc_info):
        _mode_stack().pop()

    def __lt__(self, other):
        if not isinstance(other, EvalMode):
            return NotImplemented
        return self.value < other.value

    def __le__(self, other):
        if not isinstance(other, EvalMode):
            return NotImplemented
        return self.value <= other.value

    def __gt__(self, other):
        if not isinstance(other, EvalMode):
            return NotImplemented
        return self.value > other.value

    def __ge__(self, other):
        if not isinstance(other, EvalMode):
            return NotImplemented
        return self.value >= other.value
