# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Judging candidate crop windows against boxes (random_bbox_crop's search).

Windows are tried in order and the first one that meets its threshold and keeps
a box wins; the loop stops there. Arithmetic is float32, as in the numpy helpers
of ``ndd/_ops/random_crops.py`` (``crop_metric``, ``kept_boxes``).
"""

import numpy as np


def first_valid_window(corners, starts, ends, wanted, bint overlap, bint require_all, prune_threshold):
    """For boxes ``corners`` (N, 2D: starts then ends) and windows ``starts``/``ends``
    (W, D), float32: the index of the first window whose score (the least IoU, or
    overlap, over the boxes with ``require_all``, else the greatest) is at least
    ``wanted[w]`` and that keeps a box (its center inside, or with
    ``prune_threshold`` at least that fraction and some of it inside); -1 if none.
    Also returns the index and score of the best-scoring window judged.
    """
    cdef const float[:, ::1] box = np.ascontiguousarray(corners, np.float32)
    cdef const float[:, ::1] lo = np.ascontiguousarray(starts, np.float32)
    cdef const float[:, ::1] hi = np.ascontiguousarray(ends, np.float32)
    cdef const float[::1] need = np.ascontiguousarray(wanted, np.float32)
    cdef Py_ssize_t nbox = box.shape[0]
    cdef Py_ssize_t nwin = lo.shape[0]
    cdef Py_ssize_t ndim = lo.shape[1]
    cdef bint by_center = prune_threshold is None
    cdef float prune = 0 if by_center else prune_threshold
    cdef Py_ssize_t w, i, d, found = -1, best = 0
    cdef float best_score = -1, score, inter, volume, window, metric, a, b, denominator, center
    cdef bint keeps, inside
    with nogil:
        for w in range(nwin):
            window = 1
            for d in range(ndim):
                window = window * (hi[w, d] - lo[w, d])
            score = 1 if nbox == 0 else (2 if require_all else -1)
            keeps = nbox == 0
            for i in range(nbox):
                inter = 1
                volume = 1
                inside = True
                for d in range(ndim):
                    a = box[i, d] if box[i, d] > lo[w, d] else lo[w, d]
                    b = box[i, ndim + d] if box[i, ndim + d] < hi[w, d] else hi[w, d]
                    inter = inter * (b - a if b > a else 0)
                    volume = volume * (box[i, ndim + d] - box[i, d])
                    center = (box[i, d] + box[i, ndim + d]) * 0.5
                    if center < lo[w, d] or center > hi[w, d]:
                        inside = False
                denominator = volume if overlap else volume + window - inter
                metric = inter / denominator if denominator > 0 else 0
                if require_all:
                    if metric < score:
                        score = metric
                elif metric > score:
                    score = metric
                if not keeps:
                    if by_center:
                        keeps = inside
                    else:
                        keeps = inter > 0 and (inter / volume if volume > 0 else 0) >= prune
            if score >= need[w] and keeps:
                found = w
                break
            if score > best_score:
                best_score = score
                best = w
    return found, best, best_score
