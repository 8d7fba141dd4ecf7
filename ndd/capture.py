"""``ndd.capture``: capture mode's helpers.

In the reference, ``reader.next_epoch(batch_size=N, capture=True)`` and
``ExternalSource.captured(N)`` trace the operators of the loop body on the first
iteration and replay them as a prefetching pipeline afterwards; the results equal
those of the plain loop. ndd accepts the same calls and runs the loop body as
written on every iteration (its operators already run asynchronously on the
thread pool in the default eager mode), so the results are the same and nothing
is traced, held constant or replayed.
"""

from typing import TypeVar

__all__ = ["invariant"]

_T = TypeVar("_T")


def invariant(value: _T) -> _T:
    """Mark ``value`` as not changing between the iterations of a capture-mode loop.

    The reference uses the mark to keep a non-literal value (a module global, say)
    in its captured pipeline. ndd captures nothing, so every value is used as it is
    at each iteration: ``value`` itself is returned (the reference returns a
    transparent proxy of it).

    Parameters
    ----------
    value : any
        Any Python value.

    Returns
    -------
    The same object.

    Examples
    --------
    >>> ndd.capture.invariant(3.0) + 1
    4.0
    """
    return value
