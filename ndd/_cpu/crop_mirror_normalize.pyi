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

def sample_sum(values: np.ndarray) -> float:
    """The float64 sum of 1-D uint8 or float32 ``values`` (exact for uint8)."""

def squared_deviations(values: np.ndarray, mean: float) -> float:
    """The float64 sum of ``(float32(v) - mean) ** 2``, each square in float32."""

def normalize_values(values: np.ndarray, out: np.ndarray, mean: float, factor: float, shift: float) -> None:
    """``out[i] = (float32(values[i]) - mean) * factor + shift`` in float32 (1-D arrays)."""
