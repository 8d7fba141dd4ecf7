from collections.abc import Sequence

import numpy as np

FILTER_NN: int
FILTER_LINEAR: int
FILTER_CUBIC: int
FILTER_LANCZOS3: int
FILTER_TRIANGULAR: int
FILTER_GAUSSIAN: int
RESAMPLE_MAX_DIMS: int
RESAMPLE_HEAD: int
RESAMPLE_ROW: int
RESAMPLE_TABLE_ROW: int
ROUND_EVEN: int
ROUND_COLUMNS: int
ROUND_ROWS: int

def resample_pass(src: np.ndarray, dst: np.ndarray, indices: np.ndarray, weights: np.ndarray) -> None: ...
def resample_rows_columns(
    src: np.ndarray,
    dst: np.ndarray,
    row_indices: np.ndarray,
    row_weights: np.ndarray,
    column_indices: np.ndarray,
    column_weights: np.ndarray,
    regular_first: int = 0,
    regular_count: int = -1,
) -> None: ...
def resample_columns_rows(
    src: np.ndarray,
    dst: np.ndarray,
    column_indices: np.ndarray,
    column_weights: np.ndarray,
    row_indices: np.ndarray,
    row_weights: np.ndarray,
) -> None: ...
def store_rounded(
    src: np.ndarray, dst: np.ndarray, mode: int, columns: int, inner: int, first: int = 0, count: int = 0
) -> None: ...
def resample_plan(
    shapes: list[tuple[int, ...]],
    jobs: list[tuple],
    in_offsets: Sequence[int],
    out_offsets: Sequence[int],
    device_tables: bool = False,
) -> tuple[
    np.ndarray, np.ndarray, np.ndarray, int, list[int], list[tuple[int, np.ndarray, int, np.ndarray, int]]
]: ...
def resample_steps(
    shape: tuple[int, ...], job: tuple
) -> tuple[tuple[slice, ...], list[tuple[int, np.ndarray, np.ndarray]], tuple[int, int, int, int]] | None: ...
