# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""random_bbox_crop's search for one sample: drawing candidate windows, judging
them against the boxes, and cropping the boxes to the window chosen.

The search follows the reference's rules. Each round draws a threshold (or, with
``allow_no_crop``, no crop) and spends ``num_attempts`` attempts, all of them
counting towards ``total_num_attempts`` (checked between rounds). An attempt
draws the window's relative extents, in pixels when an image shape is given;
fixed aspect ratios (min == max) set the extents one from another in a random
order and scale them so the largest is the largest drawn; an attempt whose
ratios are then out of range is spent without a window. The reference goes
through all attempts of a round and ends with its last window that meets the
threshold (the round succeeds when it keeps a box), or else with the best one
judged so far; attempts being alike, the first such window is as likely as the
last, so the round stops there. Extents and ratios are float32, as the
reference's.

The draws go straight to the numpy generator's bit generator: integers as
``Generator.integers`` draws them (Lemire's bounded 32-bit method), and
uniform values from ``Generator.random()`` values, rounded to float32 and
scaled in float32 as the reference's are (the rate of fixed-ratio attempts
that rounding puts out of range depends on it). The windows depend only on the
seed, not on this module.
"""

import numpy as np

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport UINT32_MAX, int64_t, uint32_t, uint64_t
from libc.string cimport memset


cdef extern from "numpy/random/bitgen.h":
    ctypedef struct bitgen_t:
        void* state
        uint64_t (*next_uint64)(void* st) noexcept nogil
        uint32_t (*next_uint32)(void* st) noexcept nogil
        double (*next_double)(void* st) noexcept nogil
        uint64_t (*next_raw)(void* st) noexcept nogil


cdef enum:
    # What search_window reports about its window.
    _FOUND = 1
    _NO_CROP = 2
    _BEST_USED = 0
    _NONE_DRAWN = -1
    _BAD_ASPECT_RATIO = -2

FOUND = _FOUND
NO_CROP = _NO_CROP
BEST_USED = _BEST_USED
NONE_DRAWN = _NONE_DRAWN
BAD_ASPECT_RATIO = _BAD_ASPECT_RATIO


cdef inline uint64_t _bounded(bitgen_t* bitgen, uint64_t rng) noexcept nogil:
    """A value in [0, rng], as numpy's ``random_bounded_uint64`` (not masked)."""
    cdef uint32_t rng_excl, threshold, leftover
    cdef uint64_t m
    if rng == 0:
        return 0
    if rng == UINT32_MAX:
        return bitgen.next_uint32(bitgen.state)
    rng_excl = <uint32_t>rng + 1
    m = <uint64_t>bitgen.next_uint32(bitgen.state) * rng_excl
    leftover = <uint32_t>m
    if leftover < rng_excl:
        threshold = (UINT32_MAX - <uint32_t>rng) % rng_excl
        while leftover < threshold:
            m = <uint64_t>bitgen.next_uint32(bitgen.state) * rng_excl
            leftover = <uint32_t>m
    return m >> 32


cdef inline float _uniform(bitgen_t* bitgen, float low, float span) noexcept nogil:
    """``u * span + low`` in float32 arithmetic, as the reference's float distributions,
    with ``u`` a ``Generator.random()`` value rounded to float32."""
    return <float>bitgen.next_double(bitgen.state) * span + low


cdef bitgen_t* _bitgen_of(generator) except NULL:
    return <bitgen_t*>PyCapsule_GetPointer(generator.bit_generator.capsule, "BitGenerator")


cdef float _judge(const float[:, ::1] box, const float* lo, const float* hi, Py_ssize_t ndim,
                  bint overlap, bint require_all, bint by_center, float prune, bint* keeps) noexcept nogil:
    """The window's score over the boxes (the least metric with ``require_all``, else
    the greatest), and whether it keeps a box."""
    cdef Py_ssize_t nbox = box.shape[0], i, d
    cdef float window = 1, score, inter, volume, metric, a, b, denominator, center
    cdef bint inside
    for d in range(ndim):
        window = window * (hi[d] - lo[d])
    score = 1 if nbox == 0 else (2 if require_all else -1)
    keeps[0] = nbox == 0
    for i in range(nbox):
        inter = 1
        volume = 1
        inside = True
        for d in range(ndim):
            a = box[i, d] if box[i, d] > lo[d] else lo[d]
            b = box[i, ndim + d] if box[i, ndim + d] < hi[d] else hi[d]
            inter = inter * (b - a if b > a else 0)
            volume = volume * (box[i, ndim + d] - box[i, d])
            center = (box[i, d] + box[i, ndim + d]) * 0.5
            # The window is half-open: a center on its far edge is outside.
            if center < lo[d] or center >= hi[d]:
                inside = False
        denominator = volume if overlap else volume + window - inter
        metric = inter / denominator if denominator > 0 else 0
        if require_all:
            if metric < score:
                score = metric
        elif metric > score:
            score = metric
        if not keeps[0]:
            if by_center:
                keeps[0] = inside
            else:
                keeps[0] = inter > 0 and (inter / volume if volume > 0 else 0) >= prune
    return score


cdef struct _Extents:
    # What drawing a window's extents needs (ndim 2 or 3; pairs x/y, then x/z and y/z).
    Py_ssize_t ndim
    float scale_lo
    float scale_span
    float pixels[3]
    float ratio_lo[3]
    float ratio_hi[3]
    # set_from[b][a] > 0: extent b is extent a times it (a fixed ratio).
    float set_from[3][3]
    bint any_fixed


cdef void _prepare_extents(_Extents* e, Py_ssize_t ndim, double scale_lo, double scale_hi,
                           const double* pixels, const double* ratios) noexcept nogil:
    """The settings of ``_draw_extents`` for ``ndim``-D windows of extents in
    [``scale_lo``, ``scale_hi``], ratios ``ratios`` ([min, max] per pair) in ``pixels``."""
    cdef Py_ssize_t a, b, k = 0
    e.ndim = ndim
    e.scale_lo = <float>scale_lo
    e.scale_span = <float>scale_hi - <float>scale_lo
    e.any_fixed = False
    for a in range(ndim):
        e.pixels[a] = <float>pixels[a]
        for b in range(ndim):
            e.set_from[a][b] = 0
    for a in range(ndim):
        for b in range(a + 1, ndim):
            e.ratio_lo[k] = <float>ratios[2 * k]
            e.ratio_hi[k] = <float>ratios[2 * k + 1]
            if e.ratio_lo[k] == e.ratio_hi[k]:
                e.set_from[b][a] = <float>(1.0 / e.ratio_lo[k])
                e.set_from[a][b] = e.ratio_lo[k]
                e.any_fixed = True
            k += 1


cdef bint _draw_extents(bitgen_t* bitgen, const _Extents* e, float* size) noexcept nogil:
    """One window's relative extents; False when its aspect ratios are out of range."""
    cdef Py_ssize_t ndim = e.ndim, i, j, k, a, b
    cdef float extent[3]
    cdef int order[3]
    cdef float largest = 0, new_largest = 0, ratio
    cdef int swap
    for a in range(ndim):
        extent[a] = _uniform(bitgen, e.scale_lo, e.scale_span) * e.pixels[a]
    if e.any_fixed:
        # A random order (Fisher-Yates, swapping with Generator.integers draws); the
        # extents are set from those before them in it, as the pairs come.
        for a in range(ndim):
            order[a] = <int>a
        for i in range(ndim - 1, 0, -1):
            j = <Py_ssize_t>_bounded(bitgen, <uint64_t>i)
            swap = order[i]
            order[i] = order[j]
            order[j] = swap
        for a in range(ndim):
            if extent[a] > largest:
                largest = extent[a]
        for i in range(ndim):
            for j in range(i + 1, ndim):
                a = order[i]
                b = order[j]
                if e.set_from[b][a] > 0:
                    extent[b] = extent[a] * e.set_from[b][a]
        for a in range(ndim):
            if extent[a] > new_largest:
                new_largest = extent[a]
        for a in range(ndim):
            extent[a] = largest * extent[a] / new_largest
    k = 0
    for a in range(ndim):
        for b in range(a + 1, ndim):
            ratio = extent[a] / extent[b]
            if not (ratio >= e.ratio_lo[k] and ratio <= e.ratio_hi[k]):
                return False
            k += 1
    for a in range(ndim):
        size[a] = extent[a] / e.pixels[a]
    return True


def search_window(generator, corners, thresholds, Py_ssize_t num_attempts, Py_ssize_t limit,
                  bint allow_no_crop, bint overlap, bint require_all, prune_threshold,
                  double scale_lo, double scale_hi, pixels, ratios, crop_shape):
    """random_bbox_crop's window for boxes ``corners`` (N, 2D float32: starts then ends).

    Rounds follow one another while fewer than ``limit`` attempts were made: each
    draws a threshold index or (with ``allow_no_crop``) no crop, and spends
    ``num_attempts`` attempts. A window meeting its round's threshold (its score,
    see ``_judge``) ends the round; the search ends when it also keeps a box (its
    center inside, or with ``prune_threshold`` at least that fraction and some of
    it inside). Otherwise the round keeps its best window when that beats the
    window kept before (which a window meeting the threshold always replaces).
    Windows are relative (extents from ``scale_lo``/``scale_hi`` with aspect
    ratios ``ratios``, [min, max] per pair, in ``pixels``, the image extent per
    axis), or with ``crop_shape`` (pixels, float64) whole-pixel anchors in an
    image of ``pixels``.

    Returns ``(status, start, size, anchor, attempts, best_score)``: status FOUND,
    NO_CROP (the whole image), BEST_USED (the attempts ran out: the window kept),
    NONE_DRAWN (they ran out before any window was judged) or BAD_ASPECT_RATIO
    (``ratios`` is None and extents had to be drawn); the window's start and
    extent (float32, relative), the pixel anchor (int64) with ``crop_shape``, the
    attempts made and the score of the window kept.
    """
    cdef bitgen_t* bitgen = _bitgen_of(generator)
    cdef const float[:, ::1] box = np.ascontiguousarray(corners, np.float32)
    cdef const float[::1] levels = np.ascontiguousarray(thresholds, np.float32)
    cdef Py_ssize_t ndim = box.shape[1] // 2
    if ndim not in (2, 3):
        raise ValueError(f"search_window: boxes must be 2-D or 3-D, got {box.shape[1]} coordinates")
    cdef const double[::1] pix = np.ascontiguousarray(pixels, np.float64)
    cdef const double[::1] ratio_view
    cdef const double[::1] crop_view
    cdef const double* crop_ptr = NULL
    cdef bint fixed = crop_shape is not None
    cdef bint have_ratios = ratios is not None
    cdef _Extents extents
    memset(&extents, 0, sizeof(extents))
    if fixed:
        crop_view = np.ascontiguousarray(crop_shape, np.float64)
        crop_ptr = &crop_view[0]
    elif have_ratios:
        ratio_view = np.ascontiguousarray(ratios, np.float64)
        _prepare_extents(&extents, ndim, scale_lo, scale_hi, &pix[0], &ratio_view[0])
    cdef bint by_center = prune_threshold is None
    cdef float prune = 0 if by_center else prune_threshold
    cdef Py_ssize_t nthresholds = levels.shape[0]
    cdef uint64_t choices = nthresholds + (1 if allow_no_crop else 0)
    start_array = np.zeros(ndim, np.float32)
    size_array = np.zeros(ndim, np.float32)
    anchor_array = np.zeros(ndim, np.int64) if fixed else None
    cdef float[::1] out_start = start_array
    cdef float[::1] out_size = size_array
    cdef int64_t[::1] out_anchor
    if fixed:
        out_anchor = anchor_array
    cdef float start[3]
    cdef float size[3]
    cdef float ends[3]
    cdef int64_t anchor[3]
    cdef float round_start[3]
    cdef float round_size[3]
    cdef int64_t round_anchor[3]
    cdef Py_ssize_t attempts = 0, _attempt, d, pick
    cdef int status = _NONE_DRAWN
    cdef bint keeps, met, round_better
    cdef float score, need, kept_score = -1, round_score
    with nogil:
        while attempts < limit:
            pick = <Py_ssize_t>_bounded(bitgen, choices - 1)
            if pick == nthresholds:
                status = _NO_CROP
                for d in range(ndim):
                    out_start[d] = 0
                    out_size[d] = 1
                break
            if not fixed and not have_ratios:
                status = _BAD_ASPECT_RATIO
                break
            need = levels[pick]
            attempts += num_attempts
            met = False
            round_better = False
            round_score = kept_score
            for _attempt in range(num_attempts):
                if fixed:
                    for d in range(ndim):
                        anchor[d] = <int64_t>_bounded(bitgen, <uint64_t>(<int64_t>(pix[d] - crop_ptr[d])))
                        start[d] = <float>(anchor[d] / pix[d])
                        size[d] = <float>(crop_ptr[d] / pix[d])
                else:
                    if not _draw_extents(bitgen, &extents, size):
                        continue
                    for d in range(ndim):
                        start[d] = _uniform(bitgen, 0, 1 - size[d])
                for d in range(ndim):
                    ends[d] = start[d] + size[d]
                score = _judge(box, start, ends, ndim, overlap, require_all, by_center, prune, &keeps)
                if score >= need:
                    met = True
                    break
                if score > round_score:
                    round_better = True
                    round_score = score
                    for d in range(ndim):
                        round_start[d] = start[d]
                        round_size[d] = size[d]
                        round_anchor[d] = anchor[d] if fixed else 0
            if met:
                kept_score = score
            elif round_better:
                kept_score = round_score
                for d in range(ndim):
                    start[d] = round_start[d]
                    size[d] = round_size[d]
                    anchor[d] = round_anchor[d]
            if met or round_better:
                status = _BEST_USED
                for d in range(ndim):
                    out_start[d] = start[d]
                    # The reference gives a window by its corners: the extent is end - start.
                    out_size[d] = (start[d] + size[d]) - start[d]
                    if fixed:
                        out_anchor[d] = anchor[d]
                if met and keeps:
                    status = _FOUND
                    break
    return status, start_array, size_array, anchor_array, attempts, kept_score


def crop_to_window(corners, window_start, window_end, prune_threshold, layout_columns=None):
    """The boxes ``corners`` (N, 2D float32: starts then ends) kept in the window:
    those whose center lies in it, a half-open box (``prune_threshold`` None), or
    with at least that fraction of their volume, and some of it, inside. Returns
    their corners clipped to the window and relative to it (0 to 1, float32), or
    those boxes in the layout that ``layout_columns`` describes (see
    ``layout_to_corners``), and their indices (int32)."""
    cdef const float[:, ::1] box = np.ascontiguousarray(corners, np.float32)
    cdef const float[::1] lo = np.ascontiguousarray(window_start, np.float32)
    cdef const float[::1] hi = np.ascontiguousarray(window_end, np.float32)
    cdef Py_ssize_t nbox = box.shape[0], ndim = box.shape[1] // 2, i, d, kept = 0
    if ndim not in (2, 3):
        raise ValueError(f"crop_to_window: boxes must be 2-D or 3-D, got {box.shape[1]} coordinates")
    cdef bint by_center = prune_threshold is None
    cdef float prune = 0 if by_center else prune_threshold
    cdef float extent[3]
    cdef float a, b, side, inter, volume, center
    cdef bint keep
    mapped_array = np.empty((nbox, 2 * ndim), np.float32)
    indices_array = np.empty(nbox, np.int32)
    cdef float[:, ::1] mapped = mapped_array
    cdef int[::1] indices = indices_array
    cdef int start_column[3]
    cdef int end_column[3]
    cdef bint end_is_extent[3]
    for d in range(ndim):
        if layout_columns is None:
            start_column[d], end_column[d], end_is_extent[d] = d, ndim + d, False
        else:
            start_column[d] = layout_columns[0][d]
            end_column[d] = layout_columns[1][d]
            end_is_extent[d] = layout_columns[2][d]
    with nogil:
        for d in range(ndim):
            extent[d] = hi[d] - lo[d]
        for i in range(nbox):
            keep = True
            inter = 1
            volume = 1
            for d in range(ndim):
                if by_center:
                    center = (box[i, d] + box[i, ndim + d]) * <float>0.5
                    # The window is half-open: a center on its far edge is outside.
                    if not (center >= lo[d] and center < hi[d]):
                        keep = False
                else:
                    # numpy's maximum and minimum: NaN coordinates give a NaN
                    # intersection, so such boxes are never kept.
                    a = box[i, d]
                    a = a if (a > lo[d] or a != a) else lo[d]
                    b = box[i, ndim + d]
                    b = b if (b < hi[d] or b != b) else hi[d]
                    side = b - a
                    inter = inter * (side if (side > 0 or side != side) else 0)
                    volume = volume * (box[i, ndim + d] - box[i, d])
            if not by_center:
                keep = inter > 0 and (inter / volume if volume > 0 else 0) >= prune
            if not keep:
                continue
            for d in range(ndim):
                a = box[i, d] if box[i, d] > lo[d] else lo[d]
                b = box[i, ndim + d] if box[i, ndim + d] < hi[d] else hi[d]
                a = (a - lo[d]) / extent[d]
                b = (b - lo[d]) / extent[d]
                mapped[kept, start_column[d]] = a
                mapped[kept, end_column[d]] = b - a if end_is_extent[d] else b
            indices[kept] = i
            kept += 1
    return mapped_array[:kept], indices_array[:kept]


def layout_to_corners(boxes, const int[::1] start_column, const int[::1] end_column,
                      const unsigned char[::1] end_is_extent):
    """Rows of ``[start..., end...]`` (float32) from ``boxes`` whose axis ``d`` starts in
    column ``start_column[d]`` and ends in ``end_column[d]`` (an extent where
    ``end_is_extent[d]``); None when a box leaves [0, 1] or ends before it starts."""
    cdef const float[:, ::1] box = np.ascontiguousarray(boxes, np.float32)
    cdef Py_ssize_t nbox = box.shape[0], ndim = start_column.shape[0], i, d
    corners_array = np.empty((nbox, 2 * ndim), np.float32)
    cdef float[:, ::1] corners = corners_array
    cdef float start, end
    cdef bint valid = True
    with nogil:
        for i in range(nbox):
            for d in range(ndim):
                start = box[i, start_column[d]]
                end = box[i, end_column[d]]
                if end_is_extent[d]:
                    end = start + end
                corners[i, d] = start
                corners[i, ndim + d] = end
                if start < 0 or end > 1 or end < start:
                    valid = False
    return corners_array if valid else None


def corners_to_layout(corners, const int[::1] start_column, const int[::1] end_column,
                      const unsigned char[::1] end_is_extent):
    """The inverse of ``layout_to_corners``: boxes (float32) in the layout its columns describe."""
    cdef const float[:, ::1] box = np.ascontiguousarray(corners, np.float32)
    cdef Py_ssize_t nbox = box.shape[0], ndim = start_column.shape[0], i, d
    boxes_array = np.empty((nbox, 2 * ndim), np.float32)
    cdef float[:, ::1] boxes = boxes_array
    with nogil:
        for i in range(nbox):
            for d in range(ndim):
                boxes[i, start_column[d]] = box[i, d]
                if end_is_extent[d]:
                    boxes[i, end_column[d]] = box[i, ndim + d] - box[i, d]
                else:
                    boxes[i, end_column[d]] = box[i, ndim + d]
    return boxes_array
