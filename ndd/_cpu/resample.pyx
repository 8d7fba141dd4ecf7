# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Separable resampling: filter tables for one axis and one resampling pass.

An image is resized one spatial axis at a time. For each axis, ``filter_table``
lists, per output pixel, the input pixels it reads (indices clamped to the
image, so the border pixel repeats) and their normalised weights; ``resample_pass``
applies such a table along the middle axis of a 4-D view ``(outer, mid, n, inner)``
of the data, reading any strided view whose innermost axis is contiguous and
writing with rounding and saturation when the output is an integer type.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport M_PI, ceil, exp, fabs, floor, sin
from libc.stdint cimport int16_t, int32_t, uint8_t, uint16_t
from libc.stdlib cimport free, malloc

cnp.import_array()

# Filter kinds, numbered as DALIInterpType.
cdef enum:
    _NN = 0
    _LINEAR = 1
    _CUBIC = 2
    _LANCZOS3 = 3
    _TRIANGULAR = 4
    _GAUSSIAN = 5

FILTER_NN = _NN
FILTER_LINEAR = _LINEAR
FILTER_CUBIC = _CUBIC
FILTER_LANCZOS3 = _LANCZOS3
FILTER_TRIANGULAR = _TRIANGULAR
FILTER_GAUSSIAN = _GAUSSIAN

ctypedef fused src_t:
    uint8_t
    int16_t
    uint16_t
    float

ctypedef fused dst_t:
    uint8_t
    int16_t
    uint16_t
    float


cdef inline double _sinc(double x) noexcept nogil:
    if x == 0:
        return 1.0
    x *= M_PI
    return sin(x) / x


cdef inline double _filter_value(int kind, double x) noexcept nogil:
    """The filter at ``x`` (in filter units: input pixels divided by the widening)."""
    x = fabs(x)
    if kind == _CUBIC:
        # Catmull-Rom (Keys' cubic with a = -0.5).
        if x < 1:
            return (1.5 * x - 2.5) * x * x + 1
        if x < 2:
            return ((-0.5 * x + 2.5) * x - 4) * x + 2
        return 0.0
    if kind == _LANCZOS3:
        return _sinc(x) * _sinc(x / 3) if x < 3 else 0.0
    if kind == _GAUSSIAN:
        # The reference's Gaussian: exp(-4 x^2) cut at |x| = 1.
        return exp(-4 * x * x) if x < 1 else 0.0
    return 1 - x if x < 1 else 0.0


cdef inline double _filter_radius(int kind) noexcept nogil:
    if kind == _CUBIC:
        return 2.0
    if kind == _LANCZOS3:
        return 3.0
    return 1.0


def filter_table(double lo, double hi, Py_ssize_t out_size, Py_ssize_t in_size, int kind, bint antialias):
    """Indices (int32) and weights (float32), both ``(out_size, taps)``, of the
    input pixels each output pixel reads along one axis.

    The output covers the input interval ``[lo, hi]`` (pixel k spans [k, k + 1];
    ``hi < lo`` flips); output pixel j samples at ``lo + (j + 0.5) * scale``.
    Nearest neighbour takes the pixel under that point; the other filters are
    centred there and, with ``antialias`` when scaling down, widened by the
    scale. Indices are clamped to ``[0, in_size)``.
    """
    cdef double scale = (hi - lo) / out_size if out_size > 0 else 1.0
    cdef double widen = 1.0
    if antialias and kind != _NN and fabs(scale) > 1:
        widen = fabs(scale)
    cdef double support = _filter_radius(kind) * widen
    cdef Py_ssize_t taps = 1 if kind == _NN else <Py_ssize_t>ceil(2 * support) + 1
    indices_arr = np.zeros((out_size, taps), np.int32)
    weights_arr = np.zeros((out_size, taps), np.float32)
    cdef int32_t[:, ::1] indices = indices_arr
    cdef float[:, ::1] weights = weights_arr
    cdef Py_ssize_t j, t, k, first, last = in_size - 1
    cdef double center, total, value
    with nogil:
        for j in range(out_size):
            center = lo + (j + 0.5) * scale
            if kind == _NN:
                # A sampling point computed as exactly on a pixel edge (up to rounding)
                # takes the pixel after it.
                k = <Py_ssize_t>floor(center + 1e-6)
                indices[j, 0] = <int32_t>(0 if k < 0 else (last if k > last else k))
                weights[j, 0] = 1
                continue
            # Pixels whose centre (k + 0.5) is strictly inside the support.
            first = <Py_ssize_t>floor(center - 0.5 - support) + 1
            total = 0
            for t in range(taps):
                k = first + t
                value = _filter_value(kind, (k + 0.5 - center) / widen)
                if value != 0 and (k + 0.5 - center) >= support:
                    value = 0
                total += value
                weights[j, t] = <float>value
                indices[j, t] = <int32_t>(0 if k < 0 else (last if k > last else k))
            if total != 0:
                for t in range(taps):
                    weights[j, t] = <float>(weights[j, t] / total)
    return indices_arr, weights_arr


def axis_table(double lo, double hi, Py_ssize_t out_size, Py_ssize_t in_size, int kind, bint antialias):
    """``filter_table`` with what a resampling needs to know of it, in one call:
    ``(first, stop, indices, weights, identity)``. The pixels read are
    ``[first, stop)`` (both 0 for an empty table), ``indices`` count from ``first``,
    and ``identity`` says that the table copies ``[first, stop)`` as it is (one tap
    of weight 1 per output pixel, in order)."""
    indices_arr, weights_arr = filter_table(lo, hi, out_size, in_size, kind, antialias)
    cdef int32_t[:, ::1] indices = indices_arr
    cdef float[:, ::1] weights = weights_arr
    cdef Py_ssize_t j, t, n = indices.shape[0], taps = indices.shape[1]
    cdef int32_t first = 0, last = -1
    cdef bint identity = taps == 1
    if n * taps == 0:
        return 0, 0, indices_arr, weights_arr, identity
    with nogil:
        first = indices[0, 0]
        last = first
        for j in range(n):
            for t in range(taps):
                if indices[j, t] < first:
                    first = indices[j, t]
                if indices[j, t] > last:
                    last = indices[j, t]
        for j in range(n):
            for t in range(taps):
                indices[j, t] -= first
        if identity:
            for j in range(n):
                if indices[j, 0] != j or weights[j, 0] != 1:
                    identity = False
                    break
    return first, last + 1, indices_arr, weights_arr, identity


cdef inline dst_t _store(float value, dst_t* kind_tag) noexcept nogil:
    # Integers saturate, then round half away from zero (without a call to floor);
    # kind_tag only selects the type.
    if dst_t is float:
        return value
    elif dst_t is uint8_t:
        value = 0 if value < 0 else (255 if value > 255 else value)
        return <uint8_t>(value + 0.5)
    elif dst_t is uint16_t:
        value = 0 if value < 0 else (65535 if value > 65535 else value)
        return <uint16_t>(value + 0.5)
    else:
        value = -32768 if value < -32768 else (32767 if value > 32767 else value)
        return <int16_t>(value + 0.5) if value >= 0 else <int16_t>(value - 0.5)


cdef inline void _resample_planes(const src_t* base, const Py_ssize_t* src_strides, dst_t* out,
                                  const Py_ssize_t* dst_strides, Py_ssize_t outer, Py_ssize_t mid,
                                  Py_ssize_t n_out, Py_ssize_t inner, const int32_t* indices,
                                  Py_ssize_t index_stride, const float* weights, Py_ssize_t weight_stride,
                                  Py_ssize_t taps, float* sums, bint skip_zero) noexcept nogil:
    # The loops of resample_pass, summing ``inner`` values at a time into ``sums``. Strides
    # are in bytes, except those of the rows of ``indices`` and ``weights`` (in elements).
    # Inlined with a constant ``inner`` or ``skip_zero``, the tests on them fold
    # away (and three sums stay in registers).
    cdef Py_ssize_t a, b, j, t, i
    cdef float wt
    cdef const char* plane
    cdef const src_t* row
    cdef dst_t* out_row
    for a in range(outer):
        for b in range(mid):
            plane = <const char*>base + a * src_strides[0] + b * src_strides[1]
            for j in range(n_out):
                for i in range(inner):
                    sums[i] = 0
                for t in range(taps):
                    wt = weights[j * weight_stride + t]
                    if skip_zero and wt == 0:
                        continue
                    row = <const src_t*>(plane + indices[j * index_stride + t] * src_strides[2])
                    for i in range(inner):
                        sums[i] += wt * row[i]
                out_row = <dst_t*>(<char*>out + a * dst_strides[0] + b * dst_strides[1]
                                   + j * dst_strides[2])
                for i in range(inner):
                    out_row[i] = _store(sums[i], out_row)


def resample_pass(const src_t[:, :, :, :] src, dst_t[:, :, :, ::1] dst, const int32_t[:, ::1] indices,
                  const float[:, ::1] weights):
    """``dst[a, b, j, i] = sum_t weights[j, t] * src[a, b, indices[j, t], i]``.

    ``src`` may be any strided view whose last axis is contiguous (or of extent 1);
    ``dst`` has ``indices.shape[0]`` rows along its third axis. Runs without the GIL.
    """
    cdef Py_ssize_t outer = src.shape[0], mid = src.shape[1], inner = src.shape[3]
    cdef Py_ssize_t n_out = indices.shape[0], taps = indices.shape[1]
    cdef float small[8]
    if dst.shape[0] != outer or dst.shape[1] != mid or dst.shape[2] != n_out or dst.shape[3] != inner:
        raise ValueError("resample_pass: the output shape does not match the input and the table")
    if outer * mid * n_out * inner == 0:
        return
    if inner > 1 and src.strides[3] != sizeof(src_t):
        raise ValueError("resample_pass: the last axis of the input must be contiguous")
    if weights.shape[0] != n_out or weights.shape[1] != taps:
        raise ValueError("resample_pass: the indices and weights differ in shape")
    cdef Py_ssize_t index_stride = indices.strides[0] // sizeof(int32_t)
    cdef Py_ssize_t weight_stride = weights.strides[0] // sizeof(float)
    cdef float* sums = small
    if inner >= 8:
        sums = <float*>malloc(inner * sizeof(float))
        if sums == NULL:
            raise MemoryError()
    cdef const src_t* first = &src[0, 0, 0, 0]
    cdef dst_t* out = &dst[0, 0, 0, 0]
    cdef const int32_t* index_rows = &indices[0, 0]
    cdef const float* weight_rows = &weights[0, 0]
    with nogil:
        if inner >= 8:
            # Rows of many values: whole rows at a time (vectorisable), zero weights skipped.
            _resample_planes(first, src.strides, out, dst.strides, outer, mid, n_out, inner,
                             index_rows, index_stride, weight_rows, weight_stride, taps, sums, True)
            free(sums)
        elif inner == 3:
            # Interleaved RGB.
            _resample_planes(first, src.strides, out, dst.strides, outer, mid, n_out, 3,
                             index_rows, index_stride, weight_rows, weight_stride, taps, sums, False)
        else:
            _resample_planes(first, src.strides, out, dst.strides, outer, mid, n_out, inner,
                             index_rows, index_stride, weight_rows, weight_stride, taps, sums, False)


cdef extern from "convolution_taps.h" nogil:
    """
    static int ndd_two_axis_sums_fused(void)
    {
    #if defined(__GNUC__) && defined(__x86_64__)
        return ndd_taps_avx2_available();
    #else
        return 0;
    #endif
    }
    """
    int ndd_two_axis_sums_fused()
    void ndd_taps_u8(float *acc, const uint8_t **sources, const float *weights, Py_ssize_t taps, Py_ssize_t n)
    void ndd_taps_i16(float *acc, const int16_t **sources, const float *weights, Py_ssize_t taps,
                      Py_ssize_t n)
    void ndd_taps_u16(float *acc, const uint16_t **sources, const float *weights, Py_ssize_t taps,
                      Py_ssize_t n)
    void ndd_taps_f32(float *acc, const float **sources, const float *weights, Py_ssize_t taps, Py_ssize_t n)


cdef inline void _weighted_rows(float *acc, const src_t **rows, const float *weights, Py_ssize_t taps,
                                Py_ssize_t n) noexcept nogil:
    """acc[i] = sum_k weights[k] * rows[k][i] for i < n (AVX2 where the processor has it)."""
    if src_t is uint8_t:
        ndd_taps_u8(acc, rows, weights, taps, n)
    elif src_t is int16_t:
        ndd_taps_i16(acc, rows, weights, taps, n)
    elif src_t is uint16_t:
        ndd_taps_u16(acc, rows, weights, taps, n)
    else:
        ndd_taps_f32(acc, rows, weights, taps, n)


cdef inline Py_ssize_t _nonzero_taps(const float *weight_row, const int32_t *index_row, Py_ssize_t taps,
                                     const char *base, Py_ssize_t stride, const char **rows,
                                     float *weights) noexcept nogil:
    """The taps of one output pixel with a weight: their rows' addresses and weights."""
    cdef Py_ssize_t t, n = 0
    for t in range(taps):
        if weight_row[t] != 0:
            rows[n] = base + index_row[t] * stride
            weights[n] = weight_row[t]
            n += 1
    return n


# Rows (then columns) resampled together before their results are transposed, so
# that each transposed write fills BLOCK * channels neighbouring values.
cdef enum:
    BLOCK = 8


ctypedef fused moved_t:
    uint8_t
    int16_t
    uint16_t
    float


cdef inline void _transpose_block(const moved_t *block, Py_ssize_t block_stride, Py_ssize_t count,
                                  Py_ssize_t pixels, Py_ssize_t channels, moved_t *out,
                                  Py_ssize_t out_stride) noexcept nogil:
    """out[x * out_stride + b * channels + c] = block[b * block_stride + x * channels + c]
    for ``count`` rows b of ``pixels`` pixels. One, three and four channels are
    written out, so that the compiler does not call memcpy for every pixel."""
    cdef Py_ssize_t x, b, c
    cdef const moved_t *src
    cdef moved_t *dst
    for x in range(pixels):
        dst = out + x * out_stride
        src = block + x * channels
        if channels == 3:
            for b in range(count):
                dst[3 * b] = src[b * block_stride]
                dst[3 * b + 1] = src[b * block_stride + 1]
                dst[3 * b + 2] = src[b * block_stride + 2]
        elif channels == 1:
            for b in range(count):
                dst[b] = src[b * block_stride]
        elif channels == 4:
            for b in range(count):
                dst[4 * b] = src[b * block_stride]
                dst[4 * b + 1] = src[b * block_stride + 1]
                dst[4 * b + 2] = src[b * block_stride + 2]
                dst[4 * b + 3] = src[b * block_stride + 3]
        else:
            for b in range(count):
                for c in range(channels):
                    dst[b * channels + c] = src[b * block_stride + c]


cdef extern from "round_store.h" nogil:
    void ndd_store_u8(const float *src, uint8_t *dst, Py_ssize_t n)


cdef inline void _store_row(const float *src, dst_t *out, Py_ssize_t n) noexcept nogil:
    """out[i] = _store(src[i]) over a contiguous row (AVX2 for uint8)."""
    cdef Py_ssize_t i
    cdef float value
    if dst_t is uint8_t:
        ndd_store_u8(src, out, n)
    elif dst_t is uint16_t:
        for i in range(n):
            value = src[i]
            value = 0 if value < 0 else value
            value = 65535 if value > 65535 else value
            out[i] = <uint16_t>(<double>value + 0.5)
    else:
        for i in range(n):
            out[i] = _store(src[i], out)


cdef inline void _store_transposed_block(const float *block, Py_ssize_t block_stride, Py_ssize_t count,
                                         Py_ssize_t pixels, Py_ssize_t channels, dst_t *out,
                                         Py_ssize_t out_stride, dst_t *converted) noexcept nogil:
    """As _transpose_block, converting to the output type (rounded and saturated):
    each of the ``count`` rows is converted into ``converted`` first (pixels *
    channels values a row), then the values are moved to their transposed places."""
    cdef Py_ssize_t b
    cdef Py_ssize_t row_len = pixels * channels
    for b in range(count):
        _store_row(block + b * block_stride, converted + b * row_len, row_len)
    _transpose_block(<const dst_t *>converted, row_len, count, pixels, channels, out, out_stride)


def two_axis_sums_fused():
    """Whether ``resample_rows_columns`` sums with fused multiply-adds on this
    processor (x86-64 with AVX2 and FMA), as the GPU kernels always do."""
    return bool(ndd_two_axis_sums_fused())


def resample_rows_columns(const src_t[:, :, :, :] src, dst_t[:, :, :, ::1] dst,
                          const int32_t[:, ::1] row_indices, const float[:, ::1] row_weights,
                          const int32_t[:, ::1] column_indices, const float[:, ::1] column_weights):
    """Both passes of a 2-D resize of ``src`` (outer, H, W, C) into ``dst``
    (outer, out_H, out_W, C), with whole-row accumulations in both.

    The vertical pass sums input rows (W * C contiguous values) and stores its result
    transposed, column-major (W, out_H, C); the horizontal pass then sums those
    columns as rows too, and stores the result transposed back. Interleaved
    channels never need a per-pixel gather, and both sums run over long contiguous
    rows in vector registers. Each row of ``src`` must be contiguous (W * C values).
    Runs without the GIL.
    """
    cdef Py_ssize_t outer = src.shape[0], in_w = src.shape[2], channels = src.shape[3]
    cdef Py_ssize_t out_h = row_indices.shape[0], out_w = column_indices.shape[0]
    cdef Py_ssize_t row_taps = row_indices.shape[1], column_taps = column_indices.shape[1]
    cdef Py_ssize_t row_len = in_w * channels, column_len = out_h * channels
    cdef Py_ssize_t a, r, j, b, n, first, count, most_taps
    cdef float* sums
    cdef float* columns
    cdef dst_t* converted
    cdef float* tap_weights
    cdef const char** tap_rows
    cdef const char* plane
    cdef dst_t* out_pixel
    if (dst.shape[0] != outer or dst.shape[1] != out_h or dst.shape[2] != out_w
            or dst.shape[3] != channels):
        raise ValueError("resample_rows_columns: the output shape does not match the input and the tables")
    if outer * out_h * out_w * channels * in_w * src.shape[1] == 0:
        return
    if (channels > 1 and src.strides[3] != sizeof(src_t)) or src.strides[2] != channels * sizeof(src_t):
        raise ValueError("resample_rows_columns: each input row must be contiguous")
    cdef const char* base = <const char*>&src[0, 0, 0, 0]
    cdef Py_ssize_t stride_a = src.strides[0], stride_row = src.strides[1]
    most_taps = row_taps if row_taps > column_taps else column_taps
    # The transposed intermediate (850 KB for a 316x316 RGB window) is a NumPy array,
    # so that it comes from the host pool: a fresh malloc that large is a fresh mmap,
    # whose pages the kernel faults in and zeroes on every call.
    cdef float[::1] columns_buffer = np.empty(in_w * column_len, np.float32)
    columns = &columns_buffer[0]
    with nogil:
        sums = <float*>malloc(BLOCK * (row_len if row_len > column_len else column_len) * sizeof(float))
        converted = <dst_t*>malloc(BLOCK * column_len * sizeof(dst_t))
        tap_rows = <const char**>malloc(most_taps * sizeof(char*))
        tap_weights = <float*>malloc(most_taps * sizeof(float))
        for a in range(outer):
            plane = base + a * stride_a
            for first in range(0, out_h, 8):  # BLOCK (range needs a literal step)
                count = BLOCK if out_h - first > BLOCK else out_h - first
                for b in range(count):
                    r = first + b
                    n = _nonzero_taps(&row_weights[r, 0], &row_indices[r, 0], row_taps, plane, stride_row,
                                      tap_rows, tap_weights)
                    _weighted_rows(sums + b * row_len, <const src_t**>tap_rows, tap_weights, n, row_len)
                _transpose_block(sums, row_len, count, in_w, channels, columns + first * channels,
                                 column_len)
            for first in range(0, out_w, 8):  # BLOCK
                count = BLOCK if out_w - first > BLOCK else out_w - first
                for b in range(count):
                    j = first + b
                    n = _nonzero_taps(&column_weights[j, 0], &column_indices[j, 0], column_taps,
                                      <const char*>columns, column_len * sizeof(float), tap_rows, tap_weights)
                    ndd_taps_f32(sums + b * column_len, <const float**>tap_rows, tap_weights, n, column_len)
                out_pixel = &dst[a, 0, first, 0]
                _store_transposed_block(sums, column_len, count, out_h, channels, out_pixel,
                                        out_w * channels, converted)
        free(tap_weights)
        free(tap_rows)
        free(converted)
        free(sums)
