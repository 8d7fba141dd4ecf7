# cython: language_level=3, boundscheck=False, wraparound=False
"""Decompression of LZ4 blocks (the raw block format, without frame headers),
without the GIL; ``decoders.inflate`` uses it on the CPU.

A block is a series of sequences: a token byte (high nibble: literal count, low
nibble: match length - 4; 15 means more length bytes follow, each adding up to
255), the literals, then a 2-byte little-endian offset back into the output and
the match, copied byte by byte because it may overlap what it copies. The last
sequence has literals only.
"""


cdef inline Py_ssize_t _full_length(const unsigned char *src, Py_ssize_t src_len, Py_ssize_t *ip,
                                    Py_ssize_t length) noexcept nogil:
    """A 4-bit length field ``length`` plus the length bytes at ``src[ip[0]]`` that follow
    it when it is 15 (advancing ``ip[0]`` past them); -1 when the input ends first."""
    cdef unsigned int extra
    if length != 15:
        return length
    while True:
        if ip[0] >= src_len:
            return -1
        extra = src[ip[0]]
        ip[0] += 1
        length += extra
        if extra != 255:
            return length


cdef Py_ssize_t _inflate(const unsigned char *src, Py_ssize_t src_len,
                         unsigned char *dst, Py_ssize_t dst_len) noexcept nogil:
    """Bytes written to ``dst``, or a negative code: -1 input cut short, -2 output
    too small, -3 a match reaching before the start of the output."""
    cdef Py_ssize_t ip = 0, op = 0, length, offset, i
    cdef unsigned int token
    while ip < src_len:
        token = src[ip]
        ip += 1
        length = _full_length(src, src_len, &ip, token >> 4)
        if length < 0 or ip + length > src_len:
            return -1
        if op + length > dst_len:
            return -2
        for i in range(length):
            dst[op + i] = src[ip + i]
        ip += length
        op += length
        if ip >= src_len:
            break  # the last sequence: literals only
        if ip + 2 > src_len:
            return -1
        offset = src[ip] | (src[ip + 1] << 8)
        ip += 2
        if offset == 0 or offset > op:
            return -3
        length = _full_length(src, src_len, &ip, token & 15)
        if length < 0:
            return -1
        length += 4
        if op + length > dst_len:
            return -2
        for i in range(length):
            dst[op + i] = dst[op - offset + i]
        op += length
    return op


_ERRORS = {
    -1: "the compressed data is cut short",
    -2: "the data inflates to more bytes than the output holds",
    -3: "the compressed data refers to bytes before the start of the output",
}


def inflate_lz4(const unsigned char[::1] source, unsigned char[::1] target):
    """Decompress the LZ4 block ``source`` into ``target``; return the number of
    bytes written. Raises ValueError for data that is not a valid block or does not
    fit ``target``."""
    cdef Py_ssize_t written
    cdef Py_ssize_t src_len = source.shape[0], dst_len = target.shape[0]
    cdef const unsigned char *src = &source[0] if src_len else NULL
    cdef unsigned char *dst = &target[0] if dst_len else NULL
    with nogil:
        written = _inflate(src, src_len, dst, dst_len)
    if written < 0:
        raise ValueError(_ERRORS[written])
    return written
