"""Process forks. Threads do not survive ``os.fork()``: the child has only the
thread that forked. Objects owning threads register here and drop them in the
child, to start new ones on next use (so ndd works in fork-based worker
processes, such as PyTorch DataLoader workers)."""

import os
import weakref

__all__ = ["on_fork_in_child"]

_owners = weakref.WeakSet()


def on_fork_in_child(owner) -> None:
    """Call ``owner._after_fork_in_child()`` in the child of every later fork."""
    _owners.add(owner)


def _reset_owners():
    for owner in list(_owners):
        owner._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_owners)
