"""The short-term power of a signal for ndd.nonsilent_region, without the GIL."""

import numpy as np

def moving_mean_square(values: np.ndarray, window: int, reset_interval: int) -> np.ndarray:
    """The float32 mean square of each of the ``len(values) - window + 1`` windows of ``window``
    samples of 1-D float32 or integer ``values``; the float32 running sum of types wider than
    16 bits restarts every ``reset_interval`` windows (-1: never)."""
