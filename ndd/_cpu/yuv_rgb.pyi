"""8-bit yuv420p frames to RGB, with the bytes of FFmpeg's swscale as
``decoders.video`` calls it."""

import numpy as np

COLORSPACES: frozenset[int]
COLOR_RANGES: frozenset[int]
FULL_RANGE: int
CHROMA_LOCATIONS: tuple[int, ...]

def tables(width: int, height: int, chroma_location: int) -> object:
    """The filters of frames of ``width`` x ``height`` with ``chroma_location``."""

def supported(colorspace: int, color_range: int) -> bool:
    """Whether frames of this colorspace and range are converted here as swscale does."""

def yuv420p_to_rgb(
    y: np.ndarray,
    u: np.ndarray,
    v: np.ndarray,
    out: np.ndarray,
    colorspace: int,
    color_range: int,
    chroma_location: int,
    baseline: bool = False,
) -> None:
    """Convert a frame's planes into ``out`` (H x W x 3 uint8)."""
