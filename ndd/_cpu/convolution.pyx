# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Correlation and median windows over padded planes, without the GIL.

The operators pad their samples first (border handling is numpy's ``np.pad``),
then view them as ``(planes, rows, row elements)``: a window position is a row
offset and an offset of ``step`` elements along the row, so one loop serves the
separable passes of gaussian_blur and laplacian (one-row or one-column windows)
and the 2-D windows of filter and median_blur, for any channel layout.

Medians: 3x3 windows take Paeth's 19-exchange network; other windows a selection
network (a pruned Batcher sort) run over a chunk of outputs at once, so each exchange
is a vectorised min/max; 8-bit windows of 64 values or more a sliding histogram, and
windows of more than 1024 values of the other types a selection per output.

Sums run in float32 (as the reference's); a result is written in the output type
directly, rounded (halves away from zero) and saturated when that type is an
integer one, so no float32 copy of the sample is made on the way in or out.
"""

import functools

import numpy as np

from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

cdef extern from *:
    """
    #include "convolution_taps.h"
    /* The taps primitive of the source type, picked by the C compiler. */
    #define ndd_taps(acc, sources, weights, taps, n) _Generic((sources), \\
        const unsigned char **: ndd_taps_u8, const signed char **: ndd_taps_i8,    \\
        const unsigned short **: ndd_taps_u16, const short **: ndd_taps_i16,       \\
        const unsigned int **: ndd_taps_u32, const int **: ndd_taps_i32,           \\
        const float **: ndd_taps_f32, const double **: ndd_taps_f64)(acc, sources, weights, taps, n)
    static int ndd_convolution_taps_fused(void)
    {
    #if NDD_X86_SIMD
        return ndd_taps_avx2_available();
    #else
        return 0;
    #endif
    }
    """
    int ndd_convolution_taps_fused() noexcept nogil
    # Variadic here, so that Cython passes each type's pointer to _Generic as it is:
    # ndd_taps(acc, sources, weights, taps, n) with const T **sources.
    void ndd_taps(float *acc, ...) noexcept nogil
    void ndd_taps_f32(float *acc, const float **sources, const float *weights, Py_ssize_t taps,
                      Py_ssize_t n) noexcept nogil


cdef extern from "<math.h>" nogil:
    float nearbyintf(float x)
    double nearbyint(double x)


cdef extern from "round_store.h" nogil:
    void ndd_store_u8_float_half(const float *src, unsigned char *dst, Py_ssize_t n)
    void ndd_store_u8_even(const float *src, unsigned char *dst, Py_ssize_t n)
    void ndd_widen_u8(const unsigned char *src, float *dst, Py_ssize_t n)


ctypedef unsigned char uchar
ctypedef signed char schar
ctypedef unsigned short ushort
ctypedef unsigned int uint

ctypedef fused in_t:
    uchar
    schar
    ushort
    short
    uint
    int
    float
    double

ctypedef fused out_t:
    unsigned char
    signed char
    unsigned short
    short
    unsigned int
    int
    float
    double

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


cdef inline void _store_small(const float *acc, out_t *dst, Py_ssize_t length, float low, float high,
                              bint negatives) noexcept nogil:
    # Clamped to an 8- or 16-bit range, float32 holds every bound exactly. Inlined with a
    # constant ``negatives``; without negatives, adding a half then truncating rounds halves
    # away from zero, and the loop vectorises.
    cdef Py_ssize_t t
    cdef float f, half = 0.5
    for t in range(length):
        f = acc[t]
        f = low if f < low else f
        f = high if f > high else f
        dst[t] = <out_t> <int> (f + (half if not negatives or f >= 0 else -half))


cdef inline void _store_small_even(const float *acc, out_t *dst, Py_ssize_t length, float low,
                                   float high) noexcept nogil:
    # As _store_small, rounding halves to even (the bounds are whole, so rounding after
    # clamping stays within them).
    cdef Py_ssize_t t
    cdef float f
    for t in range(length):
        f = acc[t]
        f = low if f < low else f
        f = high if f > high else f
        dst[t] = <out_t> <int> nearbyintf(f)


cdef inline void _store(const float *acc, out_t *dst, Py_ssize_t length, double low, double high,
                        bint integer, bint even=False) noexcept nogil:
    """Write float32 sums in the output type: rounded (halves away from zero, or to even
    with ``even``) and saturated for integers."""
    cdef Py_ssize_t t
    cdef double v
    if not integer or out_t is float or out_t is double:
        for t in range(length):
            dst[t] = <out_t> acc[t]
    elif out_t is uchar and even and low == 0 and high == 255:
        ndd_store_u8_even(acc, dst, length)
    elif sizeof(out_t) <= 2 and even:
        _store_small_even(acc, dst, length, <float> low, <float> high)
    elif even:
        for t in range(length):
            v = acc[t]
            v = low if v < low else v
            v = high if v > high else v
            dst[t] = <out_t> nearbyint(v)
    elif out_t is uchar and low == 0 and high == 255:
        ndd_store_u8_float_half(acc, dst, length)
    elif sizeof(out_t) <= 2 and low >= 0:
        _store_small(acc, dst, length, <float> low, <float> high, False)
    elif sizeof(out_t) <= 2:
        _store_small(acc, dst, length, <float> low, <float> high, True)
    else:
        # 32-bit bounds are not exact in float32: clamp in double.
        for t in range(length):
            v = acc[t]
            v = low if v < low else v
            v = high if v > high else v
            dst[t] = <out_t> (v + 0.5 if v >= 0 else v - 0.5)


cdef inline void _convert_rows(const in_t[:, :, ::1] padded, Py_ssize_t p, Py_ssize_t y, Py_ssize_t wrows,
                               float[:, ::1] ring) noexcept nogil:
    """Make the ring hold padded rows y .. y + wrows - 1 of plane p as float32 (row r
    at r % wrows): all of them for the plane's first row, else the one new row."""
    cdef Py_ssize_t r, t, n = padded.shape[2]
    cdef const in_t *src
    cdef float *dst
    for r in range(y + wrows - 1 if y > 0 else 0, y + wrows):
        src = &padded[p, r, 0]
        dst = &ring[r % wrows, 0]
        if in_t is uchar:
            ndd_widen_u8(src, dst, n)
        else:
            for t in range(n):
                dst[t] = <float> src[t]


cdef tuple _nonzero_taps(const float[:, ::1] weights, Py_ssize_t step):
    """The non-zero taps of a window, in row-major order: their weights, window rows and
    offsets along the row (``step`` elements a column), each with one spare entry."""
    cdef Py_ssize_t taps = 0, i, j, k = 0
    for i in range(weights.shape[0]):
        for j in range(weights.shape[1]):
            if weights[i, j] != 0:
                taps += 1
    cdef float[::1] tap_weights = np.zeros(taps + 1, np.float32)
    cdef Py_ssize_t[::1] tap_rows = np.zeros(taps + 1, np.intp)
    cdef Py_ssize_t[::1] tap_shifts = np.zeros(taps + 1, np.intp)
    for i in range(weights.shape[0]):
        for j in range(weights.shape[1]):
            if weights[i, j] != 0:
                tap_weights[k] = weights[i, j]
                tap_rows[k] = i
                tap_shifts[k] = j * step
                k += 1
    return tap_weights, tap_rows, tap_shifts


def taps_fused():
    """Whether the correlations sum with fused multiply-adds on this processor (x86-64
    with AVX2 and FMA), as the GPU kernels always do; else each product is rounded."""
    return bool(ndd_convolution_taps_fused())


def correlate(const in_t[:, :, ::1] padded, out_t[:, :, ::1] out, const float[:, ::1] weights,
              Py_ssize_t step, double low=0, double high=0, bint integer=False, bint even=False):
    """``out[p, y, t] = sum(weights[i, j] * padded[p, y + i, t + j * step])``.

    The sum is float32; for an integer ``out`` (``integer=True``) it is rounded
    (halves away from zero, to even with ``even``) and saturated to ``[low, high]``.
    ``padded`` must have ``out``'s rows plus ``weights.shape[0] - 1`` and at least its
    row elements plus ``(weights.shape[1] - 1) * step``.
    """
    cdef Py_ssize_t planes = out.shape[0], rows = out.shape[1], length = out.shape[2]
    cdef Py_ssize_t wrows = weights.shape[0], wcols = weights.shape[1]
    if (padded.shape[0] != planes or padded.shape[1] != rows + wrows - 1
            or padded.shape[2] < length + (wcols - 1) * step):
        raise ValueError("correlate: the padded input does not fit the output and the window")
    if planes == 0 or rows == 0 or length == 0:
        return
    cdef float[::1] tap_weights
    cdef Py_ssize_t[::1] tap_rows, tap_shifts
    tap_weights, tap_rows, tap_shifts = _nonzero_taps(weights, step)
    cdef Py_ssize_t taps = tap_weights.shape[0] - 1, k
    cdef float *acc = <float *> malloc(length * sizeof(float))
    cdef const in_t **sources = <const in_t **> malloc((taps + 1) * sizeof(in_t *))
    if acc == NULL or sources == NULL:
        free(acc)
        free(sources)
        raise MemoryError()
    cdef Py_ssize_t p, y
    # 8- and 16-bit rows read by several taps are converted to float32 once, into a
    # ring of the window's rows, rather than once per tap: the same float values in
    # the same sums, so the results do not change.
    cdef bint convert_rows = (in_t is uchar or in_t is schar or in_t is ushort or in_t is short) and taps > 1
    cdef float *sums
    cdef Py_ssize_t row_elements = padded.shape[2]
    cdef float[:, ::1] ring
    cdef const float **float_sources
    if convert_rows:
        ring = np.empty((wrows, row_elements), np.float32)
        float_sources = <const float **> sources
    try:
        with nogil:
            for p in range(planes):
                for y in range(rows):
                    # float32 results are summed straight into the output row.
                    sums = <float *> &out[p, y, 0] if out_t is float else acc
                    if convert_rows:
                        _convert_rows(padded, p, y, wrows, ring)
                        for k in range(taps):
                            float_sources[k] = &ring[(y + tap_rows[k]) % wrows, 0] + tap_shifts[k]
                        ndd_taps_f32(sums, float_sources, &tap_weights[0], taps, length)
                    else:
                        for k in range(taps):
                            sources[k] = &padded[p, y + tap_rows[k], 0] + tap_shifts[k]
                        ndd_taps(sums, sources, &tap_weights[0], taps, length)
                    if out_t is not float:
                        _store(acc, &out[p, y, 0], length, low, high, integer, even)
    finally:
        free(acc)
        free(sources)


cdef inline void _widen(const in_t *src, float *dst, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t t
    if in_t is uchar:
        ndd_widen_u8(src, dst, n)
    else:
        for t in range(n):
            dst[t] = <float> src[t]


cdef inline void _bordered_row(const in_t[:, :, ::1] planes, Py_ssize_t p, Py_ssize_t source_row,
                               const Py_ssize_t[::1] left, const Py_ssize_t[::1] right, Py_ssize_t step,
                               float fill, float *dst) noexcept nogil:
    """One padded row as float32: ``left`` border pixels, the plane's row, ``right``
    border pixels (each a source pixel of the row, or -1: ``fill``); all ``fill``
    for a source row of -1."""
    cdef Py_ssize_t width = planes.shape[2], nl = left.shape[0], nr = right.shape[0]
    cdef Py_ssize_t j, t, c
    cdef Py_ssize_t total = width + (nl + nr) * step
    if source_row < 0:
        for t in range(total):
            dst[t] = fill
        return
    cdef const in_t *src = &planes[p, source_row, 0]
    for j in range(nl):
        c = left[j]
        if c < 0:
            for t in range(step):
                dst[j * step + t] = fill
        else:
            _widen(src + c * step, dst + j * step, step)
    _widen(src, dst + nl * step, width)
    for j in range(nr):
        c = right[j]
        if c < 0:
            for t in range(step):
                dst[nl * step + width + j * step + t] = fill
        else:
            _widen(src + c * step, dst + nl * step + width + j * step, step)


def correlate_bordered(const in_t[:, :, ::1] planes, out_t[:, :, ::1] out, const float[:, ::1] weights,
                       Py_ssize_t step, const Py_ssize_t[::1] rows, const Py_ssize_t[::1] left,
                       const Py_ssize_t[::1] right, double fill=0, double low=0, double high=0,
                       bint integer=False, bint even=False):
    """``correlate`` of ``planes`` padded on the fly, without a padded copy.

    The padded plane's row ``r`` is source row ``rows[r]``; its pixels (``step``
    elements each) are the ``left`` border pixels, the source row, then the
    ``right`` border pixels, a border pixel being a pixel of the source row. Any
    index -1 stands for ``fill`` (converted to the input type by the caller).
    Rows are converted to float32 once, into a ring of the window's rows.
    """
    cdef Py_ssize_t nplanes = out.shape[0], nrows = out.shape[1], length = out.shape[2]
    cdef Py_ssize_t wrows = weights.shape[0], wcols = weights.shape[1]
    if (planes.shape[0] != nplanes or rows.shape[0] != nrows + wrows - 1 or planes.shape[2] != length
            or left.shape[0] + right.shape[0] != wcols - 1):
        raise ValueError("correlate_bordered: the planes, borders, output and window do not fit")
    if step < 1 or length % step:
        raise ValueError("correlate_bordered: the rows must be whole pixels of 'step' elements")
    cdef Py_ssize_t i, pixels = length // step
    for i in range(rows.shape[0]):
        if not -1 <= rows[i] < planes.shape[1]:
            raise ValueError("correlate_bordered: a row index is out of the planes")
    for i in range(left.shape[0]):
        if not -1 <= left[i] < pixels:
            raise ValueError("correlate_bordered: a border pixel is out of the row")
    for i in range(right.shape[0]):
        if not -1 <= right[i] < pixels:
            raise ValueError("correlate_bordered: a border pixel is out of the row")
    if nplanes == 0 or nrows == 0 or length == 0:
        return
    cdef float[::1] tap_weights
    cdef Py_ssize_t[::1] tap_rows, tap_shifts
    tap_weights, tap_rows, tap_shifts = _nonzero_taps(weights, step)
    cdef Py_ssize_t taps = tap_weights.shape[0] - 1, k
    cdef float[:, ::1] ring = np.empty((wrows, length + (wcols - 1) * step), np.float32)
    cdef float[::1] acc = np.empty(length, np.float32)
    cdef const float **sources = <const float **> malloc((taps + 1) * sizeof(float *))
    if sources == NULL:
        raise MemoryError()
    cdef Py_ssize_t p, y, r
    cdef float fill32 = <float> fill
    cdef float *sums
    try:
        with nogil:
            for p in range(nplanes):
                for y in range(nrows):
                    for r in range(y + wrows - 1 if y > 0 else 0, y + wrows):
                        _bordered_row(planes, p, rows[r], left, right, step, fill32, &ring[r % wrows, 0])
                    for k in range(taps):
                        sources[k] = &ring[(y + tap_rows[k]) % wrows, 0] + tap_shifts[k]
                    # float32 results are summed straight into the output row.
                    sums = <float *> &out[p, y, 0] if out_t is float else &acc[0]
                    if taps:
                        ndd_taps_f32(sums, sources, &tap_weights[0], taps, length)
                    else:
                        memset(sums, 0, length * sizeof(float))
                    if out_t is not float:
                        _store(&acc[0], &out[p, y, 0], length, low, high, integer, even)
    finally:
        free(sources)


def store_float(const float[::1] values, out_t[::1] out, double low=0, double high=0, bint integer=False,
                bint even=False):
    """Write float32 ``values`` into ``out``: rounded (halves away, or to even with
    ``even``) and saturated to ``[low, high]`` for an integer ``out`` (``integer=True``),
    else converted."""
    if out.shape[0] != values.shape[0]:
        raise ValueError("store_float: the output and the values differ in length")
    if values.shape[0] == 0:
        return
    with nogil:
        _store(&values[0], &out[0], values.shape[0], low, high, integer, even)


cdef inline pixel_t _select(pixel_t *values, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """The ``k``-th smallest of ``values`` (partially reordered): Hoare's selection,
    Wirth's formulation. Each scan stops at an element that is not on its side of the
    pivot, so it stays in bounds even with NaNs."""
    cdef Py_ssize_t low = 0, high = n - 1, i, j
    cdef pixel_t pivot, v
    while low < high:
        pivot = values[k]
        i = low
        j = high
        while i <= j:
            while values[i] < pivot:
                i += 1
            while pivot < values[j]:
                j -= 1
            if i <= j:
                v = values[i]
                values[i] = values[j]
                values[j] = v
                i += 1
                j -= 1
        if j < k:
            low = i
        if k < i:
            high = j
    return values[k]


cdef void _median_select_rows(const pixel_t *src, Py_ssize_t stride, pixel_t *dst, Py_ssize_t length,
                              Py_ssize_t step, Py_ssize_t window_rows, Py_ssize_t window_cols,
                              pixel_t *values) noexcept nogil:
    """Medians along an output row: each window gathered into ``values``, then selected."""
    cdef Py_ssize_t t, i, j, k
    cdef Py_ssize_t count = window_rows * window_cols
    cdef const pixel_t *row
    for t in range(length):
        k = 0
        for i in range(window_rows):
            row = src + i * stride + t
            for j in range(window_cols):
                values[k] = row[j * step]
                k += 1
        dst[t] = _select(values, count, count // 2)


cdef inline void _exchange(pixel_t *low, pixel_t *high, Py_ssize_t length) noexcept nogil:
    """Element-wise compare-exchange of two wires: the smaller values in ``low``."""
    cdef Py_ssize_t t
    cdef pixel_t a, b, smaller, larger
    for t in range(length):
        a = low[t]
        b = high[t]
        smaller = a if a < b else b
        larger = b if a < b else a
        low[t] = smaller
        high[t] = larger


cdef void _median_network_rows(const pixel_t *src, Py_ssize_t stride, pixel_t *dst, Py_ssize_t length,
                               Py_ssize_t step, Py_ssize_t window_rows, Py_ssize_t window_cols,
                               const int *pairs, Py_ssize_t exchanges, pixel_t *wires,
                               Py_ssize_t chunk) noexcept nogil:
    """Medians along an output row with a selection network applied to ``chunk``
    outputs at a time: wire ``k`` holds window value ``k`` of each of them, so every
    compare-exchange is a vectorised min/max over two short arrays."""
    cdef Py_ssize_t start = 0, n, i, j, k, e
    while start < length:
        n = min(chunk, length - start)
        k = 0
        for i in range(window_rows):
            for j in range(window_cols):
                memcpy(wires + k * chunk, src + i * stride + start + j * step, n * sizeof(pixel_t))
                k += 1
        for e in range(exchanges):
            _exchange(wires + pairs[2 * e] * chunk, wires + pairs[2 * e + 1] * chunk, n)
        memcpy(dst + start, wires + (k // 2) * chunk, n * sizeof(pixel_t))
        start += chunk


@functools.cache
def _median_exchanges(Py_ssize_t count):
    """The compare-exchanges (low wire, high wire) that bring the median of ``count``
    wires to wire ``count // 2``: Batcher's odd-even merge sort for the next power of
    two, without the exchanges with wires past ``count`` (they would hold +inf and never
    move) and without those the middle wire does not depend on."""
    cdef Py_ssize_t size = 1, p, k, j, i
    while size < count:
        size *= 2
    network = []
    p = 1
    while p < size:
        k = p
        while k >= 1:
            for j in range(k % p, size - k, 2 * k):
                for i in range(min(k, size - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p) and i + j + k < count:
                        network.append((i + j, i + j + k))
            k //= 2
        p *= 2
    needed = {count // 2}
    kept = []
    for low, high in reversed(network):
        if low in needed or high in needed:
            kept.append((low, high))
            needed.update((low, high))
    return kept[::-1]


cdef void _median_histogram_rows(const unsigned char *src, Py_ssize_t stride, unsigned char *dst,
                                 Py_ssize_t length, Py_ssize_t step, Py_ssize_t window_rows,
                                 Py_ssize_t window_cols, int *histograms, int *medians,
                                 int *below) noexcept nogil:
    """8-bit medians along an output row with a sliding histogram (Huang's algorithm):
    one 256-bin histogram per interleaved channel; moving one pixel right removes a
    column of the window and adds one, and the median moves from its previous bin,
    tracked with ``below``, the count of window values under it."""
    cdef Py_ssize_t t, i, j, c = 0
    cdef Py_ssize_t half = window_rows * window_cols // 2
    cdef Py_ssize_t leaving = -step, entering = (window_cols - 1) * step
    cdef int *histogram
    cdef int m, lt, v
    cdef const unsigned char *row
    for t in range(length):
        histogram = histograms + c * 256
        if t < step:
            memset(histogram, 0, 256 * sizeof(int))
            for i in range(window_rows):
                row = src + i * stride + t
                for j in range(window_cols):
                    histogram[row[j * step]] += 1
            m = 0
            lt = 0
        else:
            m = medians[c]
            lt = below[c]
            for i in range(window_rows):
                row = src + i * stride + t
                v = row[leaving]
                histogram[v] -= 1
                lt -= v < m
                v = row[entering]
                histogram[v] += 1
                lt += v < m
        while lt > half:
            m -= 1
            lt -= histogram[m]
        while lt + histogram[m] <= half:
            lt += histogram[m]
            m += 1
        dst[t] = <unsigned char> m
        medians[c] = m
        below[c] = lt
        c += 1
        if c == step:
            c = 0


cdef inline void _sort2(pixel_t *a, pixel_t *b) noexcept nogil:
    cdef pixel_t low = a[0] if a[0] < b[0] else b[0]
    cdef pixel_t high = b[0] if a[0] < b[0] else a[0]
    a[0] = low
    b[0] = high


cdef void _median9_rows(const pixel_t *r0, const pixel_t *r1, const pixel_t *r2, pixel_t *dst,
                        Py_ssize_t length, Py_ssize_t step) noexcept nogil:
    """3x3 medians along a row: a 19-exchange network (Paeth's) per element."""
    cdef Py_ssize_t t
    cdef pixel_t p0, p1, p2, p3, p4, p5, p6, p7, p8
    for t in range(length):
        p0 = r0[t]
        p1 = r0[t + step]
        p2 = r0[t + 2 * step]
        p3 = r1[t]
        p4 = r1[t + step]
        p5 = r1[t + 2 * step]
        p6 = r2[t]
        p7 = r2[t + step]
        p8 = r2[t + 2 * step]
        _sort2(&p1, &p2)
        _sort2(&p4, &p5)
        _sort2(&p7, &p8)
        _sort2(&p0, &p1)
        _sort2(&p3, &p4)
        _sort2(&p6, &p7)
        _sort2(&p1, &p2)
        _sort2(&p4, &p5)
        _sort2(&p7, &p8)
        _sort2(&p0, &p3)
        _sort2(&p5, &p8)
        _sort2(&p4, &p7)
        _sort2(&p3, &p6)
        _sort2(&p1, &p4)
        _sort2(&p2, &p5)
        _sort2(&p4, &p7)
        _sort2(&p4, &p2)
        _sort2(&p6, &p4)
        _sort2(&p4, &p2)
        dst[t] = p4


cdef enum:
    # Measured on 500x375x3 images: below 64 values the network beats the sliding
    # histogram on 8-bit data (5x5: 2.3 against 13 ms); for the other types it beats
    # selection up to 31x31 windows at least, but grows as n log^2 n, selection as n.
    HISTOGRAM_MIN_VALUES = 64
    NETWORK_MAX_VALUES = 1024
    # Bytes of network wires kept at once (L1-sized), and the fewest outputs per pass.
    NETWORK_WIRE_BYTES = 32768
    NETWORK_MIN_CHUNK = 64


def median_window(const pixel_t[:, :, ::1] padded, pixel_t[:, :, ::1] out, Py_ssize_t window_rows,
                  Py_ssize_t window_cols, Py_ssize_t step):
    """``out[p, y, t]`` = the median of ``padded[p, y + i, t + j * step]`` over the
    ``window_rows x window_cols`` window (an odd number of values): the middle one in
    sorted order, whichever kernel the type and window size pick."""
    cdef Py_ssize_t planes = out.shape[0], rows = out.shape[1], length = out.shape[2]
    if (padded.shape[0] != planes or padded.shape[1] != rows + window_rows - 1
            or padded.shape[2] < length + (window_cols - 1) * step):
        raise ValueError("median_window: the padded input does not fit the output and the window")
    cdef Py_ssize_t count = window_rows * window_cols, stride = padded.shape[2]
    cdef Py_ssize_t p, y, e, exchanges, chunk
    if planes == 0 or rows == 0 or length == 0:
        return
    if window_rows == 3 and window_cols == 3:
        with nogil:
            for p in range(planes):
                for y in range(rows):
                    _median9_rows(&padded[p, y, 0], &padded[p, y + 1, 0], &padded[p, y + 2, 0], &out[p, y, 0],
                                  length, step)
        return
    cdef pixel_t *values = NULL
    cdef int *histograms = NULL
    cdef int *pairs = NULL
    if pixel_t is uchar:
        use_network = count < HISTOGRAM_MIN_VALUES
    else:
        use_network = count <= NETWORK_MAX_VALUES
    if use_network:
        network = _median_exchanges(count)
        exchanges = len(network)
        chunk = NETWORK_WIRE_BYTES // (count * <Py_ssize_t> sizeof(pixel_t)) // 32 * 32
        chunk = max(NETWORK_MIN_CHUNK, chunk)
        pairs = <int *> malloc(2 * max(exchanges, 1) * sizeof(int))
        values = <pixel_t *> malloc(count * chunk * sizeof(pixel_t))
        try:
            if pairs == NULL or values == NULL:
                raise MemoryError()
            for e in range(exchanges):
                pairs[2 * e] = network[e][0]
                pairs[2 * e + 1] = network[e][1]
            with nogil:
                for p in range(planes):
                    for y in range(rows):
                        _median_network_rows(&padded[p, y, 0], stride, &out[p, y, 0], length, step,
                                             window_rows, window_cols, pairs, exchanges, values, chunk)
        finally:
            free(pairs)
            free(values)
    elif pixel_t is uchar:
        # One histogram, current median and count under it per interleaved channel.
        histograms = <int *> malloc((256 + 2) * step * sizeof(int))
        if histograms == NULL:
            raise MemoryError()
        try:
            with nogil:
                for p in range(planes):
                    for y in range(rows):
                        _median_histogram_rows(&padded[p, y, 0], stride, &out[p, y, 0], length, step,
                                               window_rows, window_cols, histograms, histograms + 256 * step,
                                               histograms + 257 * step)
        finally:
            free(histograms)
    else:
        values = <pixel_t *> malloc(count * sizeof(pixel_t))
        if values == NULL:
            raise MemoryError()
        try:
            with nogil:
                for p in range(planes):
                    for y in range(rows):
                        _median_select_rows(&padded[p, y, 0], stride, &out[p, y, 0], length, step,
                                            window_rows, window_cols, values)
        finally:
            free(values)
