"""Decoding a window of a JPEG, and a JPEG round trip, with libjpeg-turbo, without the GIL."""

import numpy as np

def decode_window(
    data: np.ndarray, colorspace: str, top: int, left: int, height: int, width: int, fast_idct: bool = False
) -> np.ndarray | None:
    """The window of the stored image as (height, width, channels) uint8 in ``colorspace``
    (RGB, BGR or GRAY; CMYK: the stored samples of a CMYK JPEG), with the fast integer
    IDCT if asked, or None when libjpeg-turbo does not decode it (the caller's other
    decoder decides)."""

def round_trip_rgb(rgb: np.ndarray, quality: int, out: np.ndarray) -> bool:
    """``rgb`` (height, width, 3) uint8 encoded as a baseline 4:2:0 JPEG of ``quality`` (1-100) and
    decoded again into ``out``; False when libjpeg-turbo fails."""
