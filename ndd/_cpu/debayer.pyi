"""Demosaicing of ndd.debayer (OpenCV's bilinear, edge-aware and gray algorithms), without the GIL."""

import numpy as np

BILINEAR: int
EDGE_AWARE: int
GRAY: int

def demosaic(plane: np.ndarray, out: np.ndarray, blue_y: int, blue_x: int, algorithm: int) -> None:
    """Fill the inner pixels of ``out`` (H, W, 3, or 1 for GRAY; the plane's type) from the Bayer ``plane``
    (H, W, uint8 or uint16) whose blue sits at ``(blue_y, blue_x)`` of the tile at the second row and
    column; the outermost rows and columns are left as they are."""
