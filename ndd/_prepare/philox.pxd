from libc.stdint cimport uint32_t, uint64_t

cdef enum:
    _KEY_WORDS = 7


cdef class RandomKey:
    cdef uint32_t _words[_KEY_WORDS]

    cdef object _bit_generator(self, uint64_t stream)


cdef class Philox:
    cdef uint64_t _key
    cdef uint64_t _counter_lo
    cdef uint64_t _counter_hi
    cdef int _phase
    cdef uint32_t _block[4]
    cdef bint _block_valid

    cdef void _set(self, uint64_t key, uint64_t counter_hi, uint64_t counter_lo, int phase) noexcept
    cdef uint32_t _next(self) noexcept
    cdef RandomKey draw_key(self)
