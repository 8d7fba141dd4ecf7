"""Sparse filter banks for ndd.mel_filter_bank, without the GIL."""

import numpy as np

def apply_band_weights(
    spectrum: np.ndarray,
    out: np.ndarray,
    bins: np.ndarray,
    lower: np.ndarray,
    lower_weight: np.ndarray,
    upper: np.ndarray,
    upper_weight: np.ndarray,
) -> None:
    """``out[f] = sum of weight * spectrum[b]`` over the bins of filter ``f``, for float32
    frequency-major ``spectrum`` (bins x columns) and ``out`` (filters x columns): bin
    ``bins[i]`` (int64) feeds filter ``lower[i]`` and ``upper[i]`` (int32; outside ``out``:
    none) with float32 ``lower_weight[i]`` and ``upper_weight[i]``, added in the order given."""
