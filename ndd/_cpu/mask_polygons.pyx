# cython: language_level=3, boundscheck=False, wraparound=False
"""The polygon selection of ``ndd.segmentation.select_masks``: which rows of the
polygon table the chosen masks keep, in their new order, in one pass over the table
(numpy took a comparison of the whole table per mask)."""

import numpy as np

from libc.stdint cimport int32_t, int64_t


class SelectionError(ValueError):
    """What is wrong with a selection: ``kind`` is "repeat" (``value`` the smallest id given twice),
    "range" (a kept polygon's vertex range is not within the vertices) or "missing" (``value`` the
    first id without polygons)."""

    def __init__(self, kind, value=None):
        super().__init__(kind, value)
        self.kind, self.value = kind, value


cdef Py_ssize_t _rank(const int32_t[::1] sorted_ids, const int64_t[::1] order, int32_t mask) noexcept nogil:
    """The position in ``mask_ids`` of ``mask`` (binary search of the sorted ids), or -1."""
    cdef Py_ssize_t low = 0, high = sorted_ids.shape[0], middle
    while low < high:
        middle = (low + high) // 2
        if sorted_ids[middle] < mask:
            low = middle + 1
        else:
            high = middle
    if low < sorted_ids.shape[0] and sorted_ids[low] == mask:
        return order[low]
    return -1


def select_polygons(const int32_t[::1] mask_ids, const int32_t[:, ::1] polygons, Py_ssize_t vertex_count,
                    bint reindex):
    """``(new_polygons, rows)`` for the masks ``mask_ids`` (int32, without repeats) of the polygon
    table ``polygons`` (rows ``[mask, start, end)``): the kept polygons, mask by mask in the order of
    ``mask_ids`` and each mask's in the table's order, with ranges into the packed vertices, and the
    vertex rows to take for them. Raises SelectionError for a repeated id, a kept polygon whose range is
    not within the vertices, or an id without polygons, checked in that order."""
    cdef Py_ssize_t n_ids = mask_ids.shape[0], n_polygons = polygons.shape[0]
    if polygons.shape[1] != 3:
        raise ValueError("select_polygons: the polygon table must have 3 columns")
    order_array = np.argsort(np.asarray(mask_ids), kind="stable").astype(np.int64)
    cdef const int64_t[::1] order = order_array
    cdef int32_t[::1] sorted_ids = np.asarray(mask_ids)[order_array]
    cdef Py_ssize_t i, j, rank, kept = 0, total = 0, missing = -1
    for i in range(1, n_ids):
        if sorted_ids[i] == sorted_ids[i - 1]:
            raise SelectionError("repeat", int(sorted_ids[i]))
    ranks_array = np.empty(n_polygons, np.int64)
    counts_array = np.zeros(n_ids + 1, np.int64)
    cdef int64_t[::1] ranks = ranks_array, counts = counts_array
    cdef bint bad_range = False
    with nogil:
        for i in range(n_polygons):
            rank = _rank(sorted_ids, order, polygons[i, 0])
            ranks[i] = rank
            if rank >= 0:
                counts[rank + 1] += 1
                kept += 1
                if polygons[i, 1] < 0 or polygons[i, 2] < polygons[i, 1] or polygons[i, 2] > vertex_count:
                    bad_range = True
                else:
                    total += polygons[i, 2] - polygons[i, 1]
        for i in range(n_ids):
            if counts[i + 1] == 0:
                missing = i
                break
    if bad_range:
        raise SelectionError("range")
    if missing >= 0:
        raise SelectionError("missing", int(mask_ids[missing]))
    # counts becomes each mask's first place among the kept polygons.
    for i in range(n_ids):
        counts[i + 1] += counts[i]
    new_polygons_array = np.empty((kept, 3), np.int32)
    rows_array = np.empty(total, np.int64)
    places_array = np.empty(kept, np.int64)
    cdef int32_t[:, ::1] new_polygons = new_polygons_array
    cdef int64_t[::1] rows = rows_array, places = places_array
    cdef int64_t offset = 0
    with nogil:
        for i in range(n_polygons):
            rank = ranks[i]
            if rank >= 0:
                places[counts[rank]] = i
                counts[rank] += 1
        for j in range(kept):
            i = places[j]
            new_polygons[j, 0] = <int32_t> (ranks[i] if reindex else polygons[i, 0])
            new_polygons[j, 1] = <int32_t> offset
            for rank in range(polygons[i, 1], polygons[i, 2]):
                rows[offset] = rank
                offset += 1
            new_polygons[j, 2] = <int32_t> offset
    return new_polygons_array, rows_array
