"""Moments of whole samples for ndd.normalize, without the GIL."""

import numpy as np

def sample_sum(values: np.ndarray) -> float:
    """The float64 sum of 1-D uint8 or float32 ``values`` (exact for uint8)."""

def squared_deviations(values: np.ndarray, mean: float) -> float:
    """The float64 sum of ``(float32(v) - mean) ** 2``, each square in float32."""

def normalize_values(values: np.ndarray, out: np.ndarray, mean: float, factor: float, shift: float) -> None:
    """``out[i] = (float32(values[i]) - mean) * factor + shift`` in float32 (1-D arrays)."""
