"""LZ4 blocks (the raw block format) to test ``decoders.inflate`` with, on the CPU and the GPU."""

import numpy as np


def lz4_sequence(out, literals, offset=None, match=0):
    """Append one LZ4 sequence: ``literals``, then (unless last) a match of ``match``
    bytes ``offset`` back."""
    lit_len = len(literals)
    extra_match = match - 4 if offset is not None else 0
    out.append((min(lit_len, 15) << 4) | min(extra_match, 15))
    for value in (lit_len,) if lit_len >= 15 else ():
        rest = value - 15
        while rest >= 255:
            out.append(255)
            rest -= 255
        out.append(rest)
    out += literals
    if offset is not None:
        out += offset.to_bytes(2, "little")
        if extra_match >= 15:
            rest = extra_match - 15
            while rest >= 255:
                out.append(255)
                rest -= 255
            out.append(rest)


def lz4_compress(data):
    """A greedy LZ4 block compressor (matches of 4+ bytes found through a dict),
    written from the format description, to make test inputs."""
    out, table, anchor, i, n = bytearray(), {}, 0, 0, len(data)
    while i + 12 <= n:
        key = data[i : i + 4]
        candidate = table.get(key)
        table[key] = i
        if candidate is not None and i - candidate <= 65535:
            length = 4
            while i + length < n - 5 and data[candidate + length] == data[i + length]:
                length += 1
            lz4_sequence(out, data[anchor:i], i - candidate, length)
            i += length
            anchor = i
        else:
            i += 1
    lz4_sequence(out, data[anchor:])
    return np.frombuffer(bytes(out), np.uint8)
