"""LZ4 blocks (the raw block format) to test ``decoders.inflate`` with, on the CPU and the GPU."""

import lz4.block
import numpy as np


def lz4_compress(data):
    """``data`` as one raw LZ4 block (no size header, as nvCOMP and the reference take
    it), 1-D uint8."""
    return np.frombuffer(lz4.block.compress(bytes(data), store_size=False), np.uint8)
