# cython: language_level=3, boundscheck=False, wraparound=False
"""Table lookups of ``ndd.lookup_table``, without the GIL: each key replaced by its
entry of a dense table, in one pass (numpy's fancy indexing first converts every key
to a 64-bit index)."""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

ctypedef fused key_t:
    uint8_t
    int8_t
    uint16_t
    int16_t
    uint32_t
    int32_t
    uint64_t
    int64_t

# The table's entries as unsigned integers of their size: the lookup copies bits.
ctypedef fused entry_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t


def lookup(const key_t[::1] keys, const entry_t[::1] table, entry_t[::1] out):
    """``out[i] = table[keys[i]]`` where ``0 <= keys[i] < len(table) - 1``, else the last
    entry of ``table`` (the default)."""
    cdef Py_ssize_t i, n = keys.shape[0]
    cdef Py_ssize_t last = table.shape[0] - 1
    if out.shape[0] != n:
        raise ValueError("lookup: the output and the keys differ in length")
    if last < 0:
        raise ValueError("lookup: the table is empty")
    cdef key_t key
    with nogil:
        for i in range(n):
            key = keys[i]
            if key_t is uint8_t or key_t is uint16_t or key_t is uint32_t or key_t is uint64_t:
                out[i] = table[key] if <uint64_t> key < <uint64_t> last else table[last]
            else:
                out[i] = table[key] if 0 <= key < last else table[last]
