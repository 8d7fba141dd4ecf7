"""Correlation and median windows over padded planes, without the GIL."""

import numpy as np

def correlate(padded: np.ndarray, out: np.ndarray, weights: np.ndarray, step: int) -> None:
    """``out[p, y, t] = sum(weights[i, j] * padded[p, y + i, t + j * step])`` (float32 arrays)."""

def median_window(padded: np.ndarray, out: np.ndarray, window_rows: int, window_cols: int, step: int) -> None:
    """``out[p, y, t]`` = median of ``padded[p, y + i, t + j * step]`` over the window."""
