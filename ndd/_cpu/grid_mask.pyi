import numpy as np

def grid_mask(
    data: np.ndarray, cos_t: float, sin_t: float, shift_x: float, shift_y: float, ratio: float
) -> np.ndarray: ...
