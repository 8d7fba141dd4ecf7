"""Packing of decoded pixels and PNG row unfiltering, without the GIL."""

import numpy as np

def unfilter_png(filtered: np.ndarray, rows: np.ndarray, pixel_bytes: int) -> None:
    """Undo the PNG row filters of a non-interlaced image into ``rows`` (height, bytes per row)."""

def copy_three_channels(source: np.ndarray, target: np.ndarray) -> None:
    """``target[y, x, c] = source[y, x, c]`` for c < 3, (H, W, 3) uint8 views with any strides."""
