"""Windowed-sinc resampling of audio for ndd.audio_resample and ndd.decoders.audio, without the GIL."""

import numpy as np

def lobes_for_quality(quality: float) -> int:
    """The sinc lobes on each side for ``quality`` in [0, 100]: 3 at 0, 16 at 50, 64 at 100."""

def filter_table(lobes: int) -> np.ndarray:
    """The float32 filter table of ``lobes`` lobes that ``resample`` reads (a zero entry on either side)."""

def resample(signal: np.ndarray, out_length: int, in_rate: float, out_rate: float, lobes: int) -> np.ndarray:
    """Resample float32 ``signal`` (``[T]`` or ``[T, C]``, C-contiguous) from ``in_rate`` to ``out_rate``
    into a new float32 array of ``out_length`` samples per channel."""
