"""The polygon selection of ndd.segmentation.select_masks."""

import numpy as np

class SelectionError(ValueError):
    """``kind``: "repeat" (``value``: the smallest id given twice), "range" (a kept polygon's range is not
    within the vertices) or "missing" (``value``: the first id without polygons)."""

    kind: str
    value: int | None

    def __init__(self, kind: str, value: int | None = None) -> None: ...

def select_polygons(
    mask_ids: np.ndarray, polygons: np.ndarray, vertex_count: int, reindex: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``(new_polygons, rows)``: the polygons of the masks ``mask_ids`` (int32) in the int32 ``(N, 3)`` table
    ``polygons``, mask by mask in the order of ``mask_ids``, with ranges into the packed vertices, and the
    vertex rows to take. Raises SelectionError, checking repeats, then ranges, then missing masks."""
