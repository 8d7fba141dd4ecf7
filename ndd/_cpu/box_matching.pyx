# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""SSD anchor matching: which ground-truth box each anchor is matched to.

IoUs are computed in float32, in the same order of operations as the numpy
reference implementation in ``ndd/_ops/boxes.py`` (``box_iou``), box by box,
without storing the IoU matrix and without the GIL.
"""

import numpy as np

from libc.math cimport fmaxf, fminf
from libc.stdint cimport int64_t


def match_anchors(boxes, anchors, float criteria):
    """For (N, 4) ltrb ``boxes`` and (A, 4) ltrb ``anchors`` (float32): the index of
    the box matched to each anchor, -1 for none (int64, length A).

    An anchor takes the box it overlaps most when that IoU exceeds ``criteria``;
    then every box claims the anchor it overlaps most, later boxes winning an
    anchor claimed twice. Of equal overlaps the last wins.
    """
    cdef const float[:, ::1] box = np.ascontiguousarray(boxes, np.float32)
    # The anchors' coordinates as separate contiguous columns: the inner loop
    # runs over anchors.
    columns = np.ascontiguousarray(np.asarray(anchors, np.float32).T)
    cdef const float[::1] a_left = columns[0]
    cdef const float[::1] a_top = columns[1]
    cdef const float[::1] a_right = columns[2]
    cdef const float[::1] a_bottom = columns[3]
    cdef Py_ssize_t nbox = box.shape[0]
    cdef Py_ssize_t nanchor = a_left.shape[0]
    matches_array = np.full(nanchor, -1, np.int64)
    cdef int64_t[::1] matches = matches_array
    cdef float[::1] best_iou = np.full(nanchor, -1.0, np.float32)
    cdef int64_t[::1] best_box = np.zeros(nanchor, np.int64)
    cdef int64_t[::1] best_anchor = np.zeros(max(nbox, 1), np.int64)
    cdef float[::1] anchor_area = np.empty(nanchor, np.float32)
    cdef Py_ssize_t i, j
    cdef float bl, bt, br, bb, width, height, inter, union, iou, area, box_best
    if nbox == 0:
        return matches_array
    with nogil:
        for j in range(nanchor):
            anchor_area[j] = (a_right[j] - a_left[j]) * (a_bottom[j] - a_top[j])
        for i in range(nbox):
            bl = box[i, 0]
            bt = box[i, 1]
            br = box[i, 2]
            bb = box[i, 3]
            area = (br - bl) * (bb - bt)
            box_best = -1.0
            for j in range(nanchor):
                width = fminf(br, a_right[j]) - fmaxf(bl, a_left[j])
                height = fminf(bb, a_bottom[j]) - fmaxf(bt, a_top[j])
                inter = fmaxf(width, 0) * fmaxf(height, 0)
                union = area + anchor_area[j] - inter
                iou = inter / union if union > 0 else 0
                if iou >= best_iou[j]:
                    best_iou[j] = iou
                    best_box[j] = i
                if iou >= box_best:
                    box_best = iou
                    best_anchor[i] = j
        for j in range(nanchor):
            if best_iou[j] > criteria:
                matches[j] = best_box[j]
        for i in range(nbox):
            matches[best_anchor[i]] = i
    return matches_array
