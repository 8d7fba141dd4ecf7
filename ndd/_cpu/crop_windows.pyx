# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""random_bbox_crop's search for one sample: drawing candidate windows, judging
them against the boxes, and cropping the boxes to the window chosen.

Windows are tried in order and the first one that meets its threshold and keeps
a box wins. Arithmetic is float32 where the numpy helpers of
``ndd/_ops/random_crops.py`` (``crop_metric``) use float32, and float64 where
numpy's ``Generator`` does.

The draws go straight to the numpy generator's bit generator and reproduce,
value for value and in the same order, what ``Generator.integers`` (Lemire's
bounded 32-bit method), ``Generator.uniform`` (``low + (high - low) * u``) and
their array forms would draw: the windows depend only on the seed, not on this
module.
"""

import numpy as np

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport UINT32_MAX, int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc


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
    _BEST_USED = 0
    _NO_FITTING_SIZE = -1
    _BAD_ASPECT_RATIO = -2
    # Draws of a window's extents before 'scaling' and 'aspect_ratio' are declared incompatible.
    _SIZE_TRIES = 10000
    # Rounds (a threshold each, or no crop) drawn together.
    _ROUNDS_AT_ONCE = 8

FOUND = _FOUND
BEST_USED = _BEST_USED
NO_FITTING_SIZE = _NO_FITTING_SIZE
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


cdef inline double _uniform(bitgen_t* bitgen, double low, double span) noexcept nogil:
    return low + span * bitgen.next_double(bitgen.state)


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
            if center < lo[d] or center > hi[d]:
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


cdef int _window_sizes(bitgen_t* bitgen, Py_ssize_t count, Py_ssize_t ndim, double scale_lo,
                       double scale_hi, const double* pixels, const double* ratios,
                       float* sizes) noexcept nogil:
    """``count`` window extents (rows of ``ndim``, relative to the image) within the
    scaling range whose aspect ratios (in ``pixels``) lie within ``ratios`` ([min, max]
    for x/y, then x/z and y/z). The extents are drawn independently and redrawn until
    their ratios fit; fixed ratios instead fix the later extents from the first.
    Returns 0, or -1 when no draw fits."""
    cdef Py_ssize_t npairs = 1 if ndim == 2 else 3
    cdef int pair_a[3]
    cdef int pair_b[3]
    pair_a[:] = [0, 0, 1]
    pair_b[:] = [1, 2, 2]
    cdef double span = scale_hi - scale_lo, first, ratio
    cdef double draw[3]
    cdef Py_ssize_t k, b, _row, rows, found = 0, _try, p
    cdef bint fits
    if ratios[0] == ratios[1] and (ndim == 2 or ratios[2] == ratios[3]):
        for k in range(count):
            first = _uniform(bitgen, scale_lo, span)
            sizes[k * ndim] = <float>first
            for b in range(1, ndim):
                sizes[k * ndim + b] = <float>(first * pixels[0] / pixels[b] / ratios[2 * (b - 1)])
        return 0
    for _try in range(_SIZE_TRIES):
        # Every row of a try is drawn, fitting or not, as a block of 2 * count + 8.
        rows = 2 * count + 8
        for _row in range(rows):
            for b in range(ndim):
                draw[b] = _uniform(bitgen, scale_lo, span)
            if found >= count:
                continue
            fits = True
            for p in range(npairs):
                ratio = (draw[pair_a[p]] * pixels[pair_a[p]]) / (draw[pair_b[p]] * pixels[pair_b[p]])
                if not (ratio >= ratios[2 * p] and ratio <= ratios[2 * p + 1]):
                    fits = False
            if fits:
                for b in range(ndim):
                    sizes[found * ndim + b] = <float>draw[b]
                found += 1
        if found >= count:
            return 0
    return -1


def search_window(generator, corners, thresholds, Py_ssize_t num_attempts, Py_ssize_t limit,
                  bint allow_no_crop, bint overlap, bint require_all, prune_threshold,
                  double scale_lo, double scale_hi, pixels, ratios, crop_shape):
    """random_bbox_crop's window for boxes ``corners`` (N, 2D float32: starts then ends).

    Rounds are drawn ``_ROUNDS_AT_ONCE`` at a time, each a threshold index or (with
    ``allow_no_crop``) no crop; a round tries ``num_attempts`` windows, at most
    ``limit`` in all. A window wins when its score (see ``_judge``) reaches its
    round's threshold and it keeps a box (its center inside, or with
    ``prune_threshold`` at least that fraction and some of it inside); a no-crop
    round that comes before gives the whole image. Windows are relative (extents
    from ``scale_lo``/``scale_hi`` with aspect ratios ``ratios`` in ``pixels``, the
    image extent per axis), or with ``crop_shape`` (pixels, float64) whole-pixel
    anchors in an image of ``pixels``.

    Returns ``(status, start, size, anchor, attempts, best_score)``: status FOUND,
    BEST_USED (the attempts ran out: the best window judged), NO_FITTING_SIZE or
    BAD_ASPECT_RATIO (``ratios`` is None and extents had to be drawn); the window's
    start and extent (float32, relative), the pixel anchor (int64) with
    ``crop_shape``, the attempts made and the best score.
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
    cdef const double* ratio_ptr = NULL
    cdef const double* crop_ptr = NULL
    cdef bint fixed = crop_shape is not None
    if fixed:
        crop_view = np.ascontiguousarray(crop_shape, np.float64)
        crop_ptr = &crop_view[0]
    elif ratios is not None:
        ratio_view = np.ascontiguousarray(ratios, np.float64)
        ratio_ptr = &ratio_view[0]
    cdef bint by_center = prune_threshold is None
    cdef float prune = 0 if by_center else prune_threshold
    cdef Py_ssize_t nthresholds = levels.shape[0]
    cdef uint64_t choices = nthresholds + (1 if allow_no_crop else 0)
    start_array = np.empty(ndim, np.float32)
    size_array = np.empty(ndim, np.float32)
    anchor_array = np.empty(ndim, np.int64) if fixed else None
    cdef float[::1] out_start = start_array
    cdef float[::1] out_size = size_array
    cdef int64_t[::1] out_anchor
    if fixed:
        out_anchor = anchor_array
    cdef Py_ssize_t capacity = _ROUNDS_AT_ONCE * num_attempts
    cdef float* sizes = <float*>malloc(capacity * ndim * sizeof(float))
    cdef float* starts = <float*>malloc(capacity * ndim * sizeof(float))
    cdef int64_t* anchors = <int64_t*>malloc(capacity * ndim * sizeof(int64_t))
    if sizes == NULL or starts == NULL or anchors == NULL:
        free(sizes)
        free(starts)
        free(anchors)
        raise MemoryError()
    cdef int picks[_ROUNDS_AT_ONCE]
    cdef float ends[3]
    cdef float best_start[3]
    cdef float best_size[3]
    cdef int64_t best_anchor[3]
    cdef Py_ssize_t attempts = 0, rounds, count, k, d, r, found = -1
    cdef int status = _BEST_USED
    cdef bint no_crop, keeps, have_best = False
    cdef float score, need, best_score = 0, window_best_score
    cdef Py_ssize_t window_best
    cdef double low, high, free_pixels
    try:
        with nogil:
            while attempts < limit:
                rounds = _ROUNDS_AT_ONCE
                no_crop = False
                for r in range(_ROUNDS_AT_ONCE):
                    picks[r] = <int>_bounded(bitgen, choices - 1)
                for r in range(_ROUNDS_AT_ONCE):
                    if picks[r] == nthresholds:
                        rounds = r
                        no_crop = True
                        break
                count = rounds * num_attempts
                if count > limit - attempts:
                    count = limit - attempts
                if count:
                    if fixed:
                        for k in range(count * ndim):
                            d = k % ndim
                            free_pixels = pix[d] - crop_ptr[d]
                            anchors[k] = <int64_t>_bounded(bitgen, <uint64_t>(<int64_t>free_pixels))
                            starts[k] = <float>(anchors[k] / pix[d])
                            sizes[k] = <float>(crop_ptr[d] / pix[d])
                    else:
                        if ratio_ptr == NULL:
                            status = _BAD_ASPECT_RATIO
                            break
                        if _window_sizes(bitgen, count, ndim, scale_lo, scale_hi, &pix[0], ratio_ptr, sizes):
                            status = _NO_FITTING_SIZE
                            break
                        for k in range(count * ndim):
                            low = <float>(1 - sizes[k])
                            high = low
                            if low > 0:
                                low = 0
                            else:
                                high = 0
                            starts[k] = <float>_uniform(bitgen, low, high - low)
                    window_best = 0
                    window_best_score = -1
                    for k in range(count):
                        for d in range(ndim):
                            ends[d] = starts[k * ndim + d] + sizes[k * ndim + d]
                        score = _judge(box, &starts[k * ndim], ends, ndim, overlap, require_all,
                                       by_center, prune, &keeps)
                        need = levels[picks[k // num_attempts]]
                        if score >= need and keeps:
                            found = k
                            break
                        if score > window_best_score:
                            window_best_score = score
                            window_best = k
                    if found >= 0:
                        attempts += found + 1
                        status = _FOUND
                        for d in range(ndim):
                            out_start[d] = starts[found * ndim + d]
                            out_size[d] = sizes[found * ndim + d]
                            if fixed:
                                out_anchor[d] = anchors[found * ndim + d]
                        break
                    attempts += count
                    if not have_best or window_best_score > best_score:
                        have_best = True
                        best_score = window_best_score
                        for d in range(ndim):
                            best_start[d] = starts[window_best * ndim + d]
                            best_size[d] = sizes[window_best * ndim + d]
                            best_anchor[d] = anchors[window_best * ndim + d] if fixed else 0
                if no_crop and attempts < limit:
                    status = _FOUND
                    for d in range(ndim):
                        out_start[d] = 0
                        out_size[d] = 1
                    break
            if status == _BEST_USED:
                for d in range(ndim):
                    out_start[d] = best_start[d]
                    out_size[d] = best_size[d]
                    if fixed:
                        out_anchor[d] = best_anchor[d]
    finally:
        free(sizes)
        free(starts)
        free(anchors)
    return status, start_array, size_array, anchor_array, attempts, best_score


def crop_to_window(corners, window_start, window_end, prune_threshold, layout_columns=None):
    """The boxes ``corners`` (N, 2D float32: starts then ends) kept in the window:
    those whose center lies in it (``prune_threshold`` None), or with at least that
    fraction of their volume, and some of it, inside. Returns their corners clipped
    to the window and relative to it (0 to 1, float32), or those boxes in the layout
    that ``layout_columns`` describes (see ``layout_to_corners``), and their indices
    (int32)."""
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
                    if not (center >= lo[d] and center <= hi[d]):
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
