import numpy as np

def first_valid_window(
    corners: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    wanted: np.ndarray,
    overlap: bool,
    require_all: bool,
    prune_threshold: float | None,
) -> tuple[int, int, float]: ...
