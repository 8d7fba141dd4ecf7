"""The fused pass of crop_mirror_normalize, without the GIL."""

import numpy as np

def normalize_window(
    source: np.ndarray,
    target: np.ndarray,
    mean: np.ndarray,
    multiplier: np.ndarray,
    shift: float,
    mirror: bool,
) -> None:
    """``target[r, c, k] = convert((source[r, c', k] - mean[k]) * multiplier[k] + shift)`` where ``c'``
    is ``c`` or, with ``mirror``, ``columns - 1 - c``; both are ``(rows, columns, channels)`` views
    (uint8, int16, uint16, int32 or float32 source; float32, uint8 or int8 target)."""
