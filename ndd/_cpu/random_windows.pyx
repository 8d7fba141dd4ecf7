# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The windows of random_crop_generator (and of random_resized_crop and
decoders.image_random_crop), chosen from draws already made.

The rules are the reference's, in its float32 arithmetic (``_crop_windows`` in
``ndd/_ops/random_ops.py`` documents them and makes the draws). One loop over the
samples: the decoders choose one window per image, where numpy's dozens of calls
on one-element arrays cost a quarter of the decoding.
"""

import numpy as np

from libc.math cimport floor, floorf, fminf, fmaxf, sqrtf, truncf
from libc.stdint cimport int64_t

# Window sides are capped here (ratios near 0 or float32's limit give sides beyond
# any image, or infinite ones).
cdef float _MAX_SIDE = <float>(1 << 30)


cdef inline float _whole_side(float length) noexcept nogil:
    """A window side of ``length`` pixels truncated to whole pixels, at least 1."""
    return fmaxf(fminf(truncf(length), _MAX_SIDE), 1.0)


cdef inline float _round_half_up(float x) noexcept nogil:
    """``roundf`` for non-negative values: halves go up."""
    cdef float whole = floorf(x)
    return whole + 1.0 if x - whole >= 0.5 else whole


def choose_windows(const int64_t[:, ::1] extents, float area_lo, float area_hi, float ratio_lo,
                   float ratio_hi, const float[:, ::1] area_draw, const float[:, ::1] ratio,
                   const double[:, ::1] anchor_draw, bint final=True):
    """Anchors and shapes ((count, 2) int32, (y, x) order) of windows in images of
    ``extents`` (rows of H, W): each sample's first attempt that fits (``area_draw``:
    uniform [0, 1) draws, ``ratio``: the aspect ratios drawn, one row of attempts per
    sample), else its fallback window; the anchor from ``anchor_draw`` ([0, 1), one
    per axis). Unless ``final`` (more attempts are to be drawn), a sample whose
    attempts all failed gets no fallback: its shape and anchor rows are -1."""
    cdef Py_ssize_t count = extents.shape[0], attempts = area_draw.shape[1], i, a
    anchor = np.empty((count, 2), np.int32)
    shape = np.empty((count, 2), np.int32)
    cdef int[:, ::1] anchor_out = anchor, shape_out = shape
    cdef float height, width, image_area, min_area, max_w, max_h, h, w, target, attempt_w, attempt_h
    cdef float rounded_ratio, image_ratio, fallback_h, fallback_w, shrink
    cdef float area_span = area_hi - area_lo
    cdef bint too_wide, too_tall, empty, fallback
    cdef int64_t free_y, free_x
    with nogil:
        for i in range(count):
            # Sides are whole numbers in float32 (exact below 2**24 pixels), so that its
            # products round as the reference's integer products converted to float do.
            height = <float>extents[i, 0]
            width = <float>extents[i, 1]
            image_area = height * width
            min_area = image_area * area_lo
            max_w = _whole_side(height * ratio_hi)
            max_h = _whole_side(width * (<float>1.0 / ratio_lo))
            too_wide = height * max_w < min_area
            too_tall = not too_wide and width * max_h < min_area
            empty = image_area == 0
            # A window larger than the image (random_area[0] > 1) is clipped to it.
            h = fminf(max_h, height) if too_tall else height
            w = fminf(max_w, width) if too_wide else width
            fallback = not (too_wide or too_tall or empty)
            if fallback:
                for a in range(attempts):
                    target = area_draw[i, a] * area_span
                    target = target + area_lo
                    target = target * image_area
                    attempt_w = fmaxf(_round_half_up(sqrtf(target * ratio[i, a])), 1.0)
                    attempt_h = fmaxf(_round_half_up(sqrtf(target / ratio[i, a])), 1.0)
                    # The reference judges the rounded window, ratio included.
                    rounded_ratio = attempt_w / attempt_h
                    if (attempt_w <= width and attempt_h <= height
                            and rounded_ratio >= ratio_lo and rounded_ratio <= ratio_hi):
                        h = attempt_h
                        w = attempt_w
                        fallback = False
                        break
            if fallback and not final:
                anchor_out[i, 0] = anchor_out[i, 1] = shape_out[i, 0] = shape_out[i, 1] = -1
                continue
            if fallback:
                image_ratio = width / height
                fallback_h = max_h if image_ratio < ratio_lo else height
                fallback_w = max_w if image_ratio > ratio_hi else width
                shrink = sqrtf(fminf(1.0, (area_hi * width * height) / (fallback_h * fallback_w)))
                h = fmaxf(truncf(fallback_h * shrink), 1.0)
                w = fmaxf(truncf(fallback_w * shrink), 1.0)
            if empty:
                h = 0
                w = 0
                free_y = 0
                free_x = 0
            else:
                free_y = extents[i, 0] - <int64_t>h
                free_x = extents[i, 1] - <int64_t>w
            # Uniform over the positions inside the image.
            anchor_out[i, 0] = <int>min(<int64_t>floor(anchor_draw[i, 0] * <double>(free_y + 1)), free_y)
            anchor_out[i, 1] = <int>min(<int64_t>floor(anchor_draw[i, 1] * <double>(free_x + 1)), free_x)
            shape_out[i, 0] = <int>h
            shape_out[i, 1] = <int>w
    return anchor, shape
