# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The Philox4x32-10 counter-based generator behind ``ndd.random.RNG``, and the
keys that operator calls draw from it.

Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
SC 2011) turns a 128-bit counter and a 64-bit key into four 32-bit words. A
generator is a key (the seed), the counter of its current block and how many
words of that block it has used (the phase, 0 to 3); the words of a block are
used in order, then the counter goes up by one (modulo 2**128).

Random operators draw ``KEY_WORDS`` words per call in the prepare phase (on the
caller's thread, in call order) and keep them in a ``RandomKey``; their run phase
derives numpy generators from that key. Results therefore depend only on the RNG
and the order of the calls, never on when or on which thread the run happens.
"""

from libc.stdint cimport uint32_t, uint64_t

import numpy as np
from numpy.random.bit_generator import ISeedSequence

# How many words each operator call draws (the reference draws as many, so that
# interleaved ``rng()`` calls see the same sequence in both); see philox.pxd.
KEY_WORDS = _KEY_WORDS

cdef uint32_t _M0 = 0xD2511F53
cdef uint32_t _M1 = 0xCD9E8D57
cdef uint32_t _W0 = 0x9E3779B9
cdef uint32_t _W1 = 0xBB67AE85
cdef object _MASK64 = (1 << 64) - 1
# A generator position, counted in words, wraps at 2**128 blocks of 4 words.
cdef object _POSITIONS = 1 << 130


cdef inline void _philox_block(uint64_t key, uint64_t counter_lo, uint64_t counter_hi,
                               uint32_t* out) noexcept nogil:
    """The four words of block ``counter`` under ``key``: ten rounds, with the key
    bumped by the Weyl constants between rounds."""
    cdef uint32_t c0 = <uint32_t>counter_lo
    cdef uint32_t c1 = <uint32_t>(counter_lo >> 32)
    cdef uint32_t c2 = <uint32_t>counter_hi
    cdef uint32_t c3 = <uint32_t>(counter_hi >> 32)
    cdef uint32_t k0 = <uint32_t>key
    cdef uint32_t k1 = <uint32_t>(key >> 32)
    cdef uint64_t p0, p1
    cdef int i
    for i in range(10):
        if i > 0:
            k0 += _W0
            k1 += _W1
        p0 = <uint64_t>_M0 * c0
        p1 = <uint64_t>_M1 * c2
        c0 = <uint32_t>(p1 >> 32) ^ c1 ^ k0
        c2 = <uint32_t>(p0 >> 32) ^ c3 ^ k1
        c1 = <uint32_t>p1
        c3 = <uint32_t>p0
    out[0] = c0
    out[1] = c1
    out[2] = c2
    out[3] = c3


def philox4x32_10(key, counter):
    """The four 32-bit words of one Philox4x32-10 block.

    Parameters
    ----------
    key : int
        The 64-bit key (word 0 is its low half).
    counter : int
        The 128-bit counter (word 0 is its lowest 32 bits).

    Returns
    -------
    tuple of int
    """
    cdef uint32_t out[4]
    _philox_block(key & _MASK64, counter & _MASK64, (counter >> 64) & _MASK64, out)
    return (out[0], out[1], out[2], out[3])


cdef class Philox:
    """A Philox4x32-10 stream: key, block counter and phase.

    The engine of ``ndd.random.RNG``, which adds the public interface (seeding,
    state strings, cloning); drawing is here so that the call path can draw an
    operator's key without going through Python.
    """

    def __cinit__(self, *args, **kwargs):
        self._key = 0
        self._counter_lo = 0
        self._counter_hi = 0
        self._phase = 0
        self._block_valid = False

    cdef void _set(self, uint64_t key, uint64_t counter_hi, uint64_t counter_lo, int phase) noexcept:
        self._key = key
        self._counter_hi = counter_hi
        self._counter_lo = counter_lo
        self._phase = phase
        self._block_valid = False

    cdef uint32_t _next(self) noexcept:
        if not self._block_valid:
            _philox_block(self._key, self._counter_lo, self._counter_hi, self._block)
            self._block_valid = True
        cdef uint32_t word = self._block[self._phase]
        self._phase += 1
        if self._phase == 4:
            self._phase = 0
            self._block_valid = False
            self._counter_lo += 1
            if self._counter_lo == 0:
                self._counter_hi += 1
        return word

    cdef RandomKey draw_key(self):
        """``KEY_WORDS`` words for one operator call."""
        cdef RandomKey key = RandomKey.__new__(RandomKey)
        cdef int i
        for i in range(_KEY_WORDS):
            key._words[i] = self._next()
        return key

    def _draw(self):
        """The next 32-bit word, as an int in [0, 2**32)."""
        return self._next()

    def _position(self):
        """(key, counter_hi, counter_lo, phase): the state as integers."""
        return (self._key, self._counter_hi, self._counter_lo, self._phase)

    def _set_position(self, key, counter_hi, counter_lo, phase):
        if not 0 <= phase < 4:
            raise ValueError(f"Philox phase must be 0 to 3, got {phase}")
        self._set(key & _MASK64, counter_hi & _MASK64, counter_lo & _MASK64, phase)

    def _skip(self, n):
        """Move ``n`` (a non-negative int) words ahead without drawing them."""
        cdef object counter = (<object>self._counter_hi) << 64 | (<object>self._counter_lo)
        position = (counter << 2 | self._phase) + n
        position %= _POSITIONS
        block = position >> 2
        self._set(self._key, block >> 64, block & _MASK64, position & 3)


cdef class RandomKey:
    """The ``KEY_WORDS`` words one operator call drew from its RNG.

    The run phase derives numpy generators from them: ``generator()`` for work
    done in one sequence (a whole batch, in sample order), ``sample_generator(i)``
    for per-sample work that may run on any thread in any order. Both are keyed
    by all the words, and distinct sample indices give independent streams.
    """

    @property
    def words(self):
        """The drawn words, in drawing order."""
        return tuple([self._words[i] for i in range(_KEY_WORDS)])

    cdef object _bit_generator(self, uint64_t stream):
        # numpy's Philox (4x64) takes a 128-bit key and a 256-bit counter. The key
        # is words 0-3; the counter's bits 64-159 hold words 4-6 and bits 160-223
        # the stream (0 for the whole call, 1 + i for sample i). The low 64 bits
        # count the blocks of one stream and start at 0, so streams never overlap.
        cdef uint32_t* w = self._words
        counter = np.array(
            [0, w[4] | <uint64_t>w[5] << 32, w[6] | (stream & 0xFFFFFFFF) << 32, stream >> 32], np.uint64
        )
        key = np.array([w[0], w[1], w[2], w[3]], np.uint32)
        return np.random.Philox(_KeyMaterial(key), counter=counter)

    def generator(self):
        """A numpy Generator for the whole call."""
        return np.random.Generator(self._bit_generator(0))

    def sample_generator(self, Py_ssize_t index):
        """A numpy Generator for sample ``index`` alone."""
        if index < 0:
            raise ValueError(f"sample index must be non-negative, got {index}")
        return np.random.Generator(self._bit_generator(index + 1))

    def __repr__(self):
        return f"RandomKey({', '.join(f'{w:#010x}' for w in self.words)})"


class _KeyMaterial(ISeedSequence):
    """Gives numpy's Philox its key from a seed sequence's interface.

    Passing ``key=`` instead makes numpy also gather entropy from the operating
    system for a seed it then ignores, which costs more than the rest of making
    the generator; numpy takes the key of a seeded Philox from ``generate_state``.
    """

    __slots__ = ("_words",)

    def __init__(self, words):
        self._words = words

    def generate_state(self, n_words, dtype=np.uint32):
        state = self._words.view(dtype)
        if n_words > state.shape[0]:
            raise ValueError(f"a random key holds {self._words.nbytes} bytes of state, not {n_words} {dtype}")
        return state[:n_words]
