"""Packing of decoded pixels, without the GIL."""

import numpy as np

def pack_three_channels(source: np.ndarray, target: np.ndarray) -> None:
    """``target[y, x, c] = source[y, x, c]`` for c < 3 (uint8, (H, W, 4) -> (H, W, 3))."""
