"""Per-pixel colour kernels without the GIL."""

import numpy as np

def color_matrix(source: np.ndarray, target: np.ndarray, coeffs: np.ndarray) -> None:
    """``target[p, i] = sum_j coeffs[3 i + j] * source[p, j] + coeffs[9 + i]`` for ``(pixels, 3)``
    contiguous arrays, both uint8 (rounded, saturated) or both float32; ``coeffs`` float32 of 12."""

def equalize_frames(source: np.ndarray, target: np.ndarray) -> None:
    """Histogram-equalize each channel of each frame of contiguous ``(frames, pixels, channels)``
    uint8 data into ``target`` (OpenCV's equalizeHist)."""
