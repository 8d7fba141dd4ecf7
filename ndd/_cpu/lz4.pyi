"""Decompression of LZ4 blocks, without the GIL."""

import numpy as np

def inflate_lz4(source: np.ndarray, target: np.ndarray) -> int:
    """Decompress the LZ4 block ``source`` (uint8) into ``target`` (uint8); the bytes written."""
