"""Reversing the order of the items of rows (a horizontal flip of HWC images), without the GIL."""

import numpy as np

def reverse_items(source: np.ndarray, target: np.ndarray) -> None:
    """``target[r, i] = source[r, count - 1 - i]`` for uint8 (rows, count, item bytes) arrays of one shape."""
