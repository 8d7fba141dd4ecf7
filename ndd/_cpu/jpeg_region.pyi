"""Decoding a window of a JPEG with libjpeg-turbo, without the GIL."""

import numpy as np

def decode_window(
    data: np.ndarray, colorspace: str, top: int, left: int, height: int, width: int, fast_idct: bool = False
) -> np.ndarray | None:
    """The window of the stored image as (height, width, channels) uint8 in ``colorspace``
    (RGB, BGR or GRAY; CMYK: the stored samples of a CMYK JPEG), with the fast integer
    IDCT if asked, or None when libjpeg-turbo does not decode it (the caller's other
    decoder decides)."""
