import numpy as np

FOUND: int
NO_CROP: int
BEST_USED: int
NONE_DRAWN: int
BAD_ASPECT_RATIO: int

def search_window(
    generator: np.random.Generator,
    corners: np.ndarray,
    thresholds: np.ndarray,
    num_attempts: int,
    limit: int,
    allow_no_crop: bool,
    overlap: bool,
    require_all: bool,
    prune_threshold: float | None,
    scale_lo: float,
    scale_hi: float,
    pixels: np.ndarray,
    ratios: np.ndarray | None,
    crop_shape: np.ndarray | None,
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray | None, int, float]: ...
def crop_to_window(
    corners: np.ndarray,
    window_start: np.ndarray,
    window_end: np.ndarray,
    prune_threshold: float | None,
    layout_columns: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]: ...
def layout_to_corners(
    boxes: np.ndarray, start_column: np.ndarray, end_column: np.ndarray, end_is_extent: np.ndarray
) -> np.ndarray | None: ...
def corners_to_layout(
    corners: np.ndarray, start_column: np.ndarray, end_column: np.ndarray, end_is_extent: np.ndarray
) -> np.ndarray: ...
