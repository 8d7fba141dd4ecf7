"""Correlation and median windows over padded planes, without the GIL."""

import numpy as np

def taps_fused() -> bool:
    """Whether the correlations sum with fused multiply-adds on this processor (x86-64 with AVX2 and
    FMA), as the GPU kernels always do."""

def correlate(
    padded: np.ndarray,
    out: np.ndarray,
    weights: np.ndarray,
    step: int,
    low: float = 0,
    high: float = 0,
    integer: bool = False,
    even: bool = False,
) -> None:
    """``out[p, y, t] = sum(weights[i, j] * padded[p, y + i, t + j * step])``, summed in float32;
    rounded (halves away, or to even with ``even``) and saturated to ``[low, high]`` for an
    integer ``out``."""

def correlate_bordered(
    planes: np.ndarray,
    out: np.ndarray,
    weights: np.ndarray,
    step: int,
    rows: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    fill: float = 0,
    low: float = 0,
    high: float = 0,
    integer: bool = False,
    even: bool = False,
) -> None:
    """``correlate`` of ``planes`` padded on the fly: padded row r is source row ``rows[r]``, its
    border pixels the source pixels ``left`` and ``right`` (-1: ``fill``)."""

def store_float(
    values: np.ndarray,
    out: np.ndarray,
    low: float = 0,
    high: float = 0,
    integer: bool = False,
    even: bool = False,
) -> None:
    """Write float32 ``values`` into ``out`` (1-D), rounded (halves away, or to even with ``even``)
    and saturated for an integer ``out``."""

def median_window(padded: np.ndarray, out: np.ndarray, window_rows: int, window_cols: int, step: int) -> None:
    """``out[p, y, t]`` = median of ``padded[p, y + i, t + j * step]`` over the window."""
