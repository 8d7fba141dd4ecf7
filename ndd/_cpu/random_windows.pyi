"""The windows of random_crop_generator (and of random_resized_crop and
decoders.image_random_crop), chosen from draws already made."""

import numpy as np

def choose_windows(
    extents: np.ndarray,
    area_lo: float,
    area_hi: float,
    ratio_lo: float,
    ratio_hi: float,
    area_draw: np.ndarray,
    ratio: np.ndarray,
    anchor_draw: np.ndarray,
    final: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Anchors and shapes ((count, 2) int32, (y, x) order) of windows in images of
    ``extents`` (rows of H, W), from the draws of ``_crop_windows``; unless
    ``final``, rows of -1 for samples whose attempts all failed."""
