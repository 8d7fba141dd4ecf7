"""Geometric warps without the GIL (pixel-centre convention; see warp.pyx)."""

import numpy as np

def warp_projective(
    src: np.ndarray,
    dst: np.ndarray,
    matrix: np.ndarray,
    perspective: bool,
    interp: int,
    border: int,
    fill: np.ndarray,
    round_even: bool,
) -> None:
    """Fill ``dst`` (rows, columns, channels) by sampling ``src`` (same type and channels) at the
    point that ``matrix`` (float64, 6 affine or 9 projective values, row-major) gives for each output
    pixel centre; ``interp`` 0 nearest neighbour, 1 bilinear, 2 bicubic; ``border`` 0 constant
    (``fill``, float32, one value per channel), 1 clamp, 2 reflect, 3 reflect_101, 4 wrap;
    ``round_even`` rounds ties to even."""

def warp_mapped(
    src: np.ndarray,
    dst: np.ndarray,
    map_x: np.ndarray,
    map_y: np.ndarray,
    interp: int,
    border: int,
    fill: np.ndarray,
    round_even: bool,
) -> None:
    """Fill ``dst`` by sampling ``src`` at the float32 points ``(map_x, map_y)`` given per output
    pixel (pixel-centre convention); the other arguments as in ``warp_projective``."""

def warp_affine_3d(
    src: np.ndarray,
    dst: np.ndarray,
    matrix: np.ndarray,
    linear: bool,
    border: int,
    fill: np.ndarray,
) -> None:
    """Fill the volume ``dst`` (depth, rows, columns, channels) by sampling ``src`` at the point that
    ``matrix`` (float64, 12 values, row-major 3x4 on ``(x, y, z, 1)``) gives for each output voxel
    centre; trilinear or nearest-neighbour sampling; border and fill as in ``warp_projective``."""

def sphere_maps(map_x: np.ndarray, map_y: np.ndarray, mid_x: float, mid_y: float, radius: float) -> None:
    """Fill the float32 (rows, columns) maps of the sphere distortion about ``(mid_x, mid_y)``."""
