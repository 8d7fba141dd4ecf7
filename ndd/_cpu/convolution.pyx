# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Correlation and median windows over padded planes, without the GIL.

The operators pad their samples first (border handling is numpy's ``np.pad``),
then view them as ``(planes, rows, row elements)``: a window position is a row
offset and an offset of ``step`` elements along the row, so one loop serves the
separable passes of gaussian_blur and laplacian (one-row or one-column windows)
and the 2-D windows of filter and median_blur, for any channel layout.
"""

from libc.stdlib cimport free, malloc
from libc.string cimport memset

ctypedef fused pixel_t:
    unsigned char
    signed char
    unsigned short
    short
    unsigned int
    int
    unsigned long long
    long long
    float
    double


def correlate(const float[:, :, ::1] padded, float[:, :, ::1] out, const float[:, ::1] weights,
              Py_ssize_t step):
    """``out[p, y, t] = sum(weights[i, j] * padded[p, y + i, t + j * step])``, in float32.

    ``padded`` must have ``out``'s rows plus ``weights.shape[0] - 1`` and its row
    elements plus ``(weights.shape[1] - 1) * step``.
    """
    cdef Py_ssize_t planes = out.shape[0], rows = out.shape[1], length = out.shape[2]
    cdef Py_ssize_t wrows = weights.shape[0], wcols = weights.shape[1]
    if (padded.shape[0] != planes or padded.shape[1] != rows + wrows - 1
            or padded.shape[2] < length + (wcols - 1) * step):
        raise ValueError("correlate: the padded input does not fit the output and the window")
    cdef Py_ssize_t p, y, i, j, t, shift
    cdef float w
    cdef float *dst
    cdef const float *src
    with nogil:
        for p in range(planes):
            for y in range(rows):
                dst = &out[p, y, 0]
                memset(dst, 0, length * sizeof(float))
                for i in range(wrows):
                    src = &padded[p, y + i, 0]
                    for j in range(wcols):
                        w = weights[i, j]
                        if w == 0:
                            continue
                        shift = j * step
                        for t in range(length):
                            dst[t] += w * src[t + shift]


cdef inline void _insertion_sort(pixel_t *values, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t a, b
    cdef pixel_t v
    for a in range(1, n):
        v = values[a]
        b = a - 1
        while b >= 0 and values[b] > v:
            values[b + 1] = values[b]
            b -= 1
        values[b + 1] = v


def median_window(const pixel_t[:, :, ::1] padded, pixel_t[:, :, ::1] out, Py_ssize_t window_rows,
                  Py_ssize_t window_cols, Py_ssize_t step):
    """``out[p, y, t]`` = the median of ``padded[p, y + i, t + j * step]`` over the
    ``window_rows x window_cols`` window (an odd number of values)."""
    cdef Py_ssize_t planes = out.shape[0], rows = out.shape[1], length = out.shape[2]
    if (padded.shape[0] != planes or padded.shape[1] != rows + window_rows - 1
            or padded.shape[2] < length + (window_cols - 1) * step):
        raise ValueError("median_window: the padded input does not fit the output and the window")
    cdef Py_ssize_t count = window_rows * window_cols
    cdef Py_ssize_t p, y, i, j, t, k
    cdef pixel_t *values = <pixel_t *> malloc(count * sizeof(pixel_t))
    if values == NULL:
        raise MemoryError()
    try:
        with nogil:
            for p in range(planes):
                for y in range(rows):
                    for t in range(length):
                        k = 0
                        for i in range(window_rows):
                            for j in range(window_cols):
                                values[k] = padded[p, y + i, t + j * step]
                                k += 1
                        _insertion_sort(values, count)
                        out[p, y, t] = values[count // 2]
    finally:
        free(values)
