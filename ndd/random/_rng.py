"""``ndd.random.RNG`` (a seeded Philox4x32-10 stream), its state object, and the
default RNG of each thread."""

from __future__ import annotations

import operator
import os
import re
import secrets
import threading
from typing import Any, final

from .._prepare.philox import Philox

__all__ = ["RNG", "RNGState", "get_default_rng", "set_seed"]

_MASK64 = (1 << 64) - 1

# "Philox_<key>_<counter high 64 bits>:<counter low 64 bits>_<phase>", hexadecimal
# in upper case, as the reference writes it (checkpoints carry it between the two).
_STATE_PATTERN = re.compile(r"Philox_([0-9A-F]{16})_([0-9A-F]{16}):([0-9A-F]{16})_([0-3])")


def _seed_value(seed: Any) -> int:
    """The 64-bit key of ``seed``: an integer, reduced modulo 2**64 (so -1 is 2**64 - 1)."""
    try:
        return operator.index(seed) & _MASK64
    except TypeError:
        raise TypeError(
            f"ndd.random.RNG: 'seed' must be an integer, got {type(seed).__name__} {seed!r}"
        ) from None


@final
class RNGState:
    """A snapshot of an RNG's position: its key, block counter and phase.

    ``str(state)`` gives the state string (``Philox_<key>_<counter>_<phase>``)
    that ``RNG(state=...)``, ``RNG.set_state`` and ``RNGState.parse`` accept.
    States are immutable and compare equal when they describe the same position.
    """

    __slots__ = ("_key", "_counter_hi", "_counter_lo", "_phase")

    def __init__(self, key: int, counter_hi: int, counter_lo: int, phase: int):
        self._key = key
        self._counter_hi = counter_hi
        self._counter_lo = counter_lo
        self._phase = phase

    @classmethod
    def parse(cls, text: str) -> RNGState:
        """The state written as ``text`` (the form ``str(state)`` gives).

        Raises
        ------
        TypeError
            ``text`` is not a string.
        ValueError
            ``text`` is not a Philox state string.
        """
        if not isinstance(text, str):
            raise TypeError(
                f"ndd.random.RNG: a state must be an RNGState or its string, got {type(text).__name__} {text!r}"
            )
        match = _STATE_PATTERN.fullmatch(text)
        if match is None:
            raise ValueError(
                "ndd.random.RNG: invalid state string "
                f"{text!r}; expected 'Philox_<16 hex digits>_<16 hex digits>:<16 hex digits>_<phase 0-3>'"
            )
        key, counter_hi, counter_lo, phase = match.groups()
        return cls(int(key, 16), int(counter_hi, 16), int(counter_lo, 16), int(phase))

    def _fields(self):
        return (self._key, self._counter_hi, self._counter_lo, self._phase)

    def __str__(self):
        return f"Philox_{self._key:016X}_{self._counter_hi:016X}:{self._counter_lo:016X}_{self._phase}"

    def __repr__(self):
        return f"RNGState({str(self)!r})"

    def __eq__(self, other):
        if not isinstance(other, RNGState):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self):
        return hash(self._fields())

    def __reduce__(self):
        return (RNGState.parse, (str(self),))


@final
class RNG(Philox):
    """A random number generator for the random operators (Philox4x32-10).

    Give it to an operator as ``rng=``: each call draws a few values from it,
    so that the same seed gives the same results whatever the evaluation mode,
    thread or process. Calling it draws one 32-bit value.

    Parameters
    ----------
    seed : int, optional
        The seed, reduced to 64 bits (modulo 2**64). A random seed when omitted.
    state : RNGState or str, optional
        Start from this state (from ``get_state()`` or its string) instead of a seed.

    Raises
    ------
    ValueError
        Both ``seed`` and ``state`` are given, or ``state`` is not a valid state.

    Examples
    --------
    >>> rng = ndd.random.RNG(seed=1234)
    >>> noise = ndd.random.normal(shape=[4], rng=rng)
    """

    def __init__(self, seed: int | None = None, state: RNGState | str | None = None):
        if seed is not None and state is not None:
            raise ValueError("ndd.random.RNG: cannot specify both 'seed' and 'state'")
        if state is not None:
            self.set_state(state)
        else:
            self.seed = secrets.randbits(64) if seed is None else seed

    def __call__(self) -> int:
        """Draw the next value: an int in [0, 2**32)."""
        return self._draw()

    @property
    def seed(self):
        """Assigning a seed restarts the sequence from that seed (the property is write-only)."""
        raise AttributeError("ndd.random.RNG: 'seed' is write-only; read 'state' to save the generator")

    @seed.setter
    def seed(self, value: int) -> None:
        self._set_position(_seed_value(value), 0, 0, 0)

    @property
    def state(self) -> RNGState:
        """The current state (see ``get_state``); assigning one moves the generator there."""
        return self.get_state()

    @state.setter
    def state(self, value: RNGState | str) -> None:
        self.set_state(value)

    def get_state(self, *, cuda_stream: Any = None) -> RNGState:
        """The current state, for ``set_state`` or ``RNG(state=...)``.

        ``str()`` of it is a string that ``set_state`` also accepts (checkpoints
        store it). ``cuda_stream`` is accepted for the checkpoint interface and not
        used: the state lives on the host.
        """
        return RNGState(*self._position())

    def set_state(self, value: RNGState | str) -> None:
        """Move the generator to a state from ``get_state()``, or its string."""
        if not isinstance(value, RNGState):
            value = RNGState.parse(value)
        self._set_position(*value._fields())

    def advance(self, n: int) -> None:
        """Skip ``n`` draws, as ``n`` calls would, in constant time.

        Raises
        ------
        ValueError
            ``n`` is negative.
        """
        n = operator.index(n)
        if n < 0:
            raise ValueError(f"ndd.random.RNG.advance: 'n' must be non-negative, got {n}")
        self._skip(n)

    def clone(self) -> RNG:
        """An independent RNG at the same state: it draws the same sequence as this one."""
        return RNG(state=self.get_state())

    def __repr__(self):
        return f"RNG(state={str(self.get_state())!r})"

    def __reduce__(self):
        return (RNG, (None, str(self.get_state())))


_thread_local = threading.local()


def get_default_rng() -> RNG:
    """The calling thread's default RNG, used by random operators without ``rng=``.

    Each thread has its own, created on first use with a random seed. A forked
    child process (a DataLoader worker, say) draws a new random seed for it unless
    ``set_seed`` chose one, so that workers do not repeat each other's draws; call
    ``set_seed`` in each worker (e.g. from ``worker_init_fn``) for reproducible
    draws that differ per worker.
    """
    rng = getattr(_thread_local, "rng", None)
    if rng is None:
        rng = _thread_local.rng = RNG()
    return rng


def _reseed_in_forked_child():
    if getattr(_thread_local, "rng", None) is not None and not getattr(_thread_local, "user_seeded", False):
        _thread_local.rng = RNG()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reseed_in_forked_child)


def set_seed(seed: int) -> None:
    """Reseed the calling thread's default RNG (other threads keep theirs).

    Parameters
    ----------
    seed : int
        The seed, reduced to 64 bits.
    """
    get_default_rng().seed = seed
    _thread_local.user_seeded = True
