"""Moments of whole samples for ndd.normalize, without the GIL."""

import numpy as np

def sample_sum(values: np.ndarray) -> float:
    """The float64 sum of 1-D uint8 or float32 ``values`` (exact for uint8)."""

def squared_deviations(values: np.ndarray, mean: float) -> float:
    """The float64 sum of ``(float32(v) - mean) ** 2``, each square in float32."""

def normalize_values(values: np.ndarray, out: np.ndarray, mean: float, factor: float, shift: float) -> None:
    """``out[i] = (float32(values[i]) - mean) * factor + shift`` in float32 (1-D arrays)."""

def channel_sums(values: np.ndarray, channels: int) -> np.ndarray:
    """The float64 sum of each channel of interleaved 1-D uint8 or float32 ``values`` (exact for uint8)."""

def channel_squared_deviations(values: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Per channel of interleaved ``values``, the float64 sum of ``(v - means[c]) ** 2``, each deviation
    and square computed in the type of ``means`` (float32 or float64)."""

def normalize_channels(
    values: np.ndarray, out: np.ndarray, means: np.ndarray, factors: np.ndarray, shift: float
) -> None:
    """``out[i] = (float32(values[i]) - means[c]) * factors[c] + shift`` in float32, ``c`` the channel of
    element ``i`` of interleaved ``values``."""

def channel_extremes(values: np.ndarray, channels: int, largest: bool) -> np.ndarray:
    """The largest (or smallest) element of each channel of interleaved 1-D uint8 or float32 ``values``;
    NaN skipped (NaN only for a channel of NaNs)."""

def normalize_per_channel(
    values: np.ndarray,
    out: np.ndarray,
    channels: int,
    ddof: int,
    epsilon: float,
    scale: float,
    shift: float,
) -> None:
    """normalize of interleaved 1-D uint8 or float32 ``values`` with one mean and deviation per channel
    into float32 ``out``, in one call (the general path's float32 and float64 operations)."""
