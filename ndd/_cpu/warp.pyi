"""Geometric warps without the GIL (pixel-centre convention; see warp.pyx)."""

import numpy as np

def warp_projective(
    src: np.ndarray,
    dst: np.ndarray,
    matrix: np.ndarray,
    perspective: bool,
    linear: bool,
    constant: bool,
    fill: float,
) -> None:
    """Fill ``dst`` (rows, columns, channels) by sampling ``src`` (same type and channels) at the
    point that ``matrix`` (float64, 6 affine or 9 projective values, row-major) gives for each output
    pixel centre; bilinear or nearest-neighbour sampling, constant ``fill`` or clamped border."""

def warp_mapped(
    src: np.ndarray,
    dst: np.ndarray,
    map_x: np.ndarray,
    map_y: np.ndarray,
    linear: bool,
    constant: bool,
    fill: float,
) -> None:
    """Fill ``dst`` by sampling ``src`` at the float32 points ``(map_x, map_y)`` given per output
    pixel (pixel-centre convention)."""
