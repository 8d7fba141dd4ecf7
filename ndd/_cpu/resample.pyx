# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Separable resampling: filter tables for one axis and one resampling pass.

An image is resized one spatial axis at a time. For each axis, a filter table
lists, per output pixel, the input pixels it reads (indices clamped to the
image, so the border pixel repeats) and their normalised weights; ``resample_pass``
applies such a table along the middle axis of a 4-D view ``(outer, mid, n, inner)``
of the data, reading any strided view whose innermost axis is contiguous and
writing with rounding and saturation when the output is an integer type.

One plan serves both devices: ``resample_steps`` gives the CPU an image's window
(the pixels some output reads), tables and pass order (the fewest multiply-adds);
``resample_plan`` makes the same for a whole batch in one call for the GPU, with
the descriptor rows of ``kernels/resample.cu``, leaving the tables whose double
arithmetic the GPU reproduces to the bit (linear, cubic, triangular) to the
``resample_tables`` kernel.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport M_PI, ceil, exp, fabs, floor, fmin, sin
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy

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

# How far past the end of its support (relative) the Gaussian still takes a pixel: the
# reference takes those a scale like 41/31 puts at the end, which double rounding
# puts a few units in the last place inside or outside. A pixel exactly at the right
# end is left out (see _fill_table).
cdef double _GAUSSIAN_REACH = 1e-6

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
        # The reference's Gaussian: exp(-4 x^2) cut after |x| = 1.
        return exp(-4 * x * x) if x <= 1 else 0.0
    return 1 - x if x < 1 else 0.0


cdef inline double _filter_radius(int kind) noexcept nogil:
    if kind == _CUBIC:
        return 2.0
    if kind == _LANCZOS3:
        return 3.0
    return 1.0


cdef inline Py_ssize_t _table_taps(double lo, double hi, Py_ssize_t out_size, int kind, bint antialias,
                                   double* scale, double* widen, double* support) noexcept nogil:
    """The taps of a filter table, with its sampling step, widening and support."""
    scale[0] = (hi - lo) / out_size if out_size > 0 else 1.0
    widen[0] = 1.0
    if antialias and kind != _NN and fabs(scale[0]) > 1:
        widen[0] = fabs(scale[0])
    support[0] = _filter_radius(kind) * widen[0]
    return 1 if kind == _NN else <Py_ssize_t>ceil(2 * support[0]) + 1


cdef void _fill_table(double lo, double hi, double scale, double widen, double support, Py_ssize_t out_size,
                      Py_ssize_t in_size, int kind, Py_ssize_t taps, int32_t* indices,
                      float* weights, bint stepped) noexcept nogil:
    """The indices and weights, ``out_size`` rows of ``taps``, of the input pixels each
    output pixel reads along one axis.

    The output covers the input interval ``[lo, hi]`` (pixel k spans [k, k + 1];
    ``hi < lo`` flips); output pixel j samples at ``lo + (j + 0.5) * scale``.
    Nearest neighbour takes the pixel under that point, computed in single precision
    as the reference does (which decides the pixel when the point falls on an edge):
    with ``stepped`` (the outer axes: rows, slices) by adding the step to the previous
    point, else (the columns) as ``(j + 0.5) * step + lo``. The other filters are
    centred there and, with antialiasing when scaling down, widened by ``widen``.
    Indices are clamped to ``[0, in_size)``, so the border pixel repeats.
    """
    cdef Py_ssize_t j, t, k, first, last = in_size - 1
    cdef double center, total, value, offset, reach
    cdef int32_t* index_row
    cdef float* weight_row
    cdef float lo32 = <float>lo, step32 = (<float>hi - lo32) / <float>out_size, point
    if kind == _NN:
        point = lo32 + <float>0.5 * step32
        for j in range(out_size):
            if not stepped:
                point = (<float>j + <float>0.5) * step32 + lo32
            k = <Py_ssize_t>floor(point)
            indices[j] = <int32_t>(0 if k < 0 else (last if k > last else k))
            weights[j] = 1
            point = point + step32
        return
    for j in range(out_size):
        center = lo + (j + 0.5) * scale
        index_row = indices + j * taps
        weight_row = weights + j * taps
        # Pixels whose centre (k + 0.5) is strictly inside the support; the Gaussian,
        # not 0 at the ends of its support, also takes the pixels there (to rounding),
        # as the reference does (the other filters are 0 there).
        if kind == _GAUSSIAN:
            reach = support * (1 + _GAUSSIAN_REACH)
            first = <Py_ssize_t>ceil(center - 0.5 - reach)
        else:
            reach = support
            first = <Py_ssize_t>floor(center - 0.5 - support) + 1
        total = 0
        for t in range(taps):
            k = first + t
            offset = k + 0.5 - center
            value = _filter_value(kind, fmin(fabs(offset), support) / widen)
            if value != 0 and (fabs(offset) > reach or fabs(offset) == reach and kind != _GAUSSIAN):
                value = 0
            elif kind == _GAUSSIAN and offset == support:
                # A pixel exactly at the right end of the support (no rounding on the
                # way there: 17 -> 7 puts the centres on whole pixels) is left out, and
                # the one exactly at the left end kept, as in the reference.
                value = 0
            total += value
            weight_row[t] = <float>value
            index_row[t] = <int32_t>(0 if k < 0 else (last if k > last else k))
        if total != 0:
            for t in range(taps):
                weight_row[t] = <float>(weight_row[t] / total)


cdef bint _rebase_table(int32_t* indices, const float* weights, Py_ssize_t n, Py_ssize_t taps,
                        int32_t* first_out, int32_t* stop_out) noexcept nogil:
    """Count a table's indices from the first pixel it reads; ``[first, stop)`` are the
    pixels read (both 0 for an empty table). True when the table copies them as they
    are (one tap of weight 1 per output pixel, in order)."""
    cdef Py_ssize_t j
    cdef int32_t first, last
    cdef bint identity = taps == 1
    first_out[0] = 0
    stop_out[0] = 0
    if n * taps == 0:
        return identity
    first = indices[0]
    last = first
    for j in range(n * taps):
        if indices[j] < first:
            first = indices[j]
        if indices[j] > last:
            last = indices[j]
    for j in range(n * taps):
        indices[j] -= first
    if identity:
        for j in range(n):
            if indices[j] != j or weights[j] != 1:
                identity = False
                break
    first_out[0] = first
    stop_out[0] = last + 1
    return identity


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


# -- the plan of an image, and the GPU's of a batch -------------------------------------------

# RESAMPLE_MAX_DIMS, RESAMPLE_HEAD, RESAMPLE_FUSED and RESAMPLE_SKIP_ZERO of kernels/resample.cu.
cdef enum:
    _MAX_DIMS = 6
    _HEAD = 8
    _ROW = _HEAD + 2 * _MAX_DIMS
    _FUSED = 1
    _SKIP_ZERO = 2

# RESAMPLE_TABLE_ROW of kernels/resample.cu: a filter table the GPU makes.
cdef enum:
    _TABLE_ROW = 10

# The dimensions a plan holds (the CPU's, after its neighbouring dimensions that are not
# resized are joined; the GPU's rows take _MAX_DIMS).
cdef enum:
    _PLAN_DIMS = 16

RESAMPLE_MAX_DIMS = _MAX_DIMS
RESAMPLE_ROW = _ROW
RESAMPLE_TABLE_ROW = _TABLE_ROW


cdef union _Bits:
    double value
    int64_t bits


cdef struct _Pass:
    int axis
    int flags
    bint device_table  # table_at counts from the first table the GPU makes
    Py_ssize_t table_at
    Py_ssize_t taps
    Py_ssize_t size
    Py_ssize_t out_shape[_PLAN_DIMS]


cdef struct _Plan:
    int passes  # -1: an image without pixels along a resized axis (its output is zeros)
    int ndim
    bint converts_only  # no axis changes: the one pass, of an identity table, converts the window
    Py_ssize_t window_at  # the window's first element, counted from the sample's
    Py_ssize_t shape[_PLAN_DIMS]
    Py_ssize_t starts[_PLAN_DIMS]  # the window, per dimension
    Py_ssize_t extents[_PLAN_DIMS]
    _Pass steps[_PLAN_DIMS]


cdef struct _Tables:
    int32_t* indices
    float* weights
    Py_ssize_t size
    Py_ssize_t capacity
    # The tables the GPU makes (device_tables): their rows, and their entries in all.
    int64_t* fills
    Py_ssize_t fill_count
    Py_ssize_t fill_capacity
    Py_ssize_t device_size


cdef void _empty_tables(_Tables* tables) noexcept nogil:
    tables.indices = NULL
    tables.weights = NULL
    tables.size = 0
    tables.capacity = 0
    tables.fills = NULL
    tables.fill_count = 0
    tables.fill_capacity = 0
    tables.device_size = 0


cdef void _free_tables(_Tables* tables) noexcept nogil:
    free(tables.indices)
    free(tables.weights)
    free(tables.fills)


cdef int _add_fill(_Tables* tables, Py_ssize_t out_size, Py_ssize_t taps, Py_ssize_t in_size, int kind,
                   int32_t first, double lo, double scale, double widen, double support) except -1:
    """A row of a table for the GPU to make (see resample_tables in kernels/resample.cu)."""
    cdef void* grown
    cdef int64_t* row
    cdef _Bits bits
    if tables.fill_count == tables.fill_capacity:
        tables.fill_capacity = tables.fill_capacity * 2 if tables.fill_capacity else 64
        grown = realloc(tables.fills, tables.fill_capacity * _TABLE_ROW * sizeof(int64_t))
        if grown == NULL:
            raise MemoryError()
        tables.fills = <int64_t*>grown
    row = tables.fills + tables.fill_count * _TABLE_ROW
    row[0] = tables.device_size
    row[1] = out_size
    row[2] = taps
    row[3] = in_size
    row[4] = kind
    row[5] = first
    bits.value = lo
    row[6] = bits.bits
    bits.value = scale
    row[7] = bits.bits
    bits.value = widen
    row[8] = bits.bits
    bits.value = support
    row[9] = bits.bits
    tables.fill_count += 1
    tables.device_size += out_size * taps
    return 0


cdef inline Py_ssize_t _first_tap(double lo, double scale, double support, Py_ssize_t j) noexcept nogil:
    """The first input pixel (unclamped) of output pixel ``j``'s taps, as _fill_table has it."""
    return <Py_ssize_t>floor(lo + (j + 0.5) * scale - 0.5 - support) + 1


cdef void _table_span(double lo, double scale, double support, Py_ssize_t out_size, Py_ssize_t in_size,
                      Py_ssize_t taps, int32_t* first, int32_t* stop) noexcept nogil:
    """The pixels ``[first, stop)`` that a filter table (not nearest neighbour) reads,
    without making it: the sampling points move one way along the output, so the
    extreme taps are those of its first and last pixels."""
    cdef Py_ssize_t a = _first_tap(lo, scale, support, 0)
    cdef Py_ssize_t b = _first_tap(lo, scale, support, out_size - 1)
    cdef Py_ssize_t low = a if a < b else b, high = (b if a < b else a) + taps - 1, last = in_size - 1
    first[0] = <int32_t>(0 if low < 0 else (last if low > last else low))
    stop[0] = <int32_t>(0 if high < 0 else (last if high > last else high)) + 1


cdef int _reserve(_Tables* tables, Py_ssize_t more) except -1:
    cdef Py_ssize_t capacity = tables.capacity
    cdef void* grown
    if tables.size + more <= capacity:
        return 0
    while capacity < tables.size + more:
        capacity = capacity * 2 if capacity else 4096
    grown = realloc(tables.indices, capacity * sizeof(int32_t))
    if grown == NULL:
        raise MemoryError()
    tables.indices = <int32_t*>grown
    grown = realloc(tables.weights, capacity * sizeof(float))
    if grown == NULL:
        raise MemoryError()
    tables.weights = <float*>grown
    tables.capacity = capacity
    return 0


cdef bint _next_order(int* order, int m) noexcept nogil:
    """The next permutation of ``order[:m]`` in lexicographic order (itertools.permutations'
    order of positions); False after the last."""
    cdef int i = m - 2, j, swap
    while i >= 0 and order[i] >= order[i + 1]:
        i -= 1
    if i < 0:
        return False
    j = m - 1
    while order[j] <= order[i]:
        j -= 1
    swap = order[i]
    order[i] = order[j]
    order[j] = swap
    j = m - 1
    i += 1
    while i < j:
        swap = order[i]
        order[i] = order[j]
        order[j] = swap
        i += 1
        j -= 1
    return True


cdef inline Py_ssize_t _product(const Py_ssize_t* values, int first, int stop) noexcept nogil:
    cdef Py_ssize_t result = 1
    cdef int d
    for d in range(first, stop):
        result *= values[d]
    return result


cdef int _make_plan(_Plan* plan, tuple shape, tuple job, _Tables* tables, bint device_tables) except -1:
    """One image's resampling (``resample``'s window, tables, pass order and sums), its
    tables appended to ``tables`` (with ``device_tables``, those the GPU can make
    to the bit are left to it)."""
    axes, sizes, lo, hi, filters, antialias = job
    cdef int min_kind = filters[0], mag_kind = filters[1]
    cdef int ndim = len(shape), naxes = len(axes), k, d, m = 0, t, axis, best_found
    cdef Py_ssize_t* starts = plan.starts
    cdef Py_ssize_t* extents = plan.extents
    cdef Py_ssize_t in_shape[_PLAN_DIMS]
    cdef int table_axis[_PLAN_DIMS]
    cdef bint table_device[_PLAN_DIMS]
    cdef Py_ssize_t table_at[_PLAN_DIMS]
    cdef Py_ssize_t table_taps[_PLAN_DIMS]
    cdef Py_ssize_t table_rows[_PLAN_DIMS]
    cdef int order[_PLAN_DIMS]
    cdef int best[_PLAN_DIMS]
    cdef Py_ssize_t out_size, taps, at, stride, cost, best_cost = 0
    cdef double low, high, scale, widen, support
    cdef int kind
    cdef int32_t first, stop
    cdef bint aa = bool(antialias), identity, fused
    cdef _Pass* step
    if ndim > _PLAN_DIMS or naxes > ndim:
        raise ValueError(f"resampling of {ndim} dimensions along {naxes} axes (at most {_PLAN_DIMS})")
    plan.ndim = ndim
    plan.converts_only = False
    plan.window_at = 0
    for d in range(ndim):
        plan.shape[d] = shape[d]
        starts[d] = 0
        extents[d] = plan.shape[d]
    for k in range(naxes):
        if plan.shape[<int>axes[k]] == 0:
            plan.passes = -1
            return 0
    # The innermost axis resampled (the columns): nearest neighbour computes its points
    # there otherwise than along the others (see _fill_table).
    cdef int last_axis = max(axes) if naxes else -1
    for k in range(naxes):
        axis = axes[k]
        out_size = int(sizes[k])
        low = float(lo[k])
        high = float(hi[k])
        # Scaling down (fewer output pixels than the region's extent) takes min_filter.
        kind = min_kind if out_size < fabs(high - low) else mag_kind
        taps = _table_taps(low, high, out_size, kind, aa, &scale, &widen, &support)
        if device_tables and out_size * taps and (kind == _LINEAR or kind == _CUBIC or kind == _TRIANGULAR):
            # Three taps or more: never an identity.
            _table_span(low, scale, support, out_size, plan.shape[axis], taps, &first, &stop)
            starts[axis] = first
            extents[axis] = stop - first
            table_axis[m] = axis
            table_device[m] = True
            table_at[m] = tables.device_size
            table_taps[m] = taps
            table_rows[m] = out_size
            _add_fill(tables, out_size, taps, plan.shape[axis], kind, first, low, scale, widen, support)
            m += 1
            continue
        _reserve(tables, out_size * taps)
        at = tables.size
        if out_size * taps:
            _fill_table(low, high, scale, widen, support, out_size, plan.shape[axis], kind, taps,
                        tables.indices + at, tables.weights + at, axis != last_axis)
        identity = _rebase_table(tables.indices + at, tables.weights + at, out_size, taps, &first, &stop)
        if out_size * taps:
            # Only the pixels some output reads are visited: the region, plus the filter's reach.
            starts[axis] = first
            extents[axis] = stop - first
        if not identity:
            table_axis[m] = axis
            table_device[m] = False
            table_at[m] = at
            table_taps[m] = taps
            table_rows[m] = out_size
            tables.size += out_size * taps
            m += 1
    fused = m == 2 and (table_axis[0] - table_axis[1] == 1 or table_axis[1] - table_axis[0] == 1)
    if fused:
        # Two neighbouring axes: rows, then columns, every sum fused and without zero taps.
        best[0] = 0 if table_axis[0] < table_axis[1] else 1
        best[1] = 1 - best[0]
    elif m:
        # The order of least work: the fewest taps summed over all passes.
        for t in range(m):
            order[t] = t
        best_found = False
        while True:
            for d in range(ndim):
                in_shape[d] = extents[d]
            cost = 0
            for t in range(m):
                in_shape[table_axis[order[t]]] = table_rows[order[t]]
                cost += _product(in_shape, 0, ndim) * table_taps[order[t]]
            if not best_found or cost < best_cost:
                best_found = True
                best_cost = cost
                for t in range(m):
                    best[t] = order[t]
            if not _next_order(order, m):
                break
    else:
        # Nothing to resample: one pass of an identity table converts the window.
        plan.converts_only = True
        axis = axes[0]
        out_size = extents[axis]
        _reserve(tables, out_size)
        at = tables.size
        for k in range(out_size):
            tables.indices[at + k] = <int32_t>k
            tables.weights[at + k] = 1
        tables.size += out_size
        table_axis[0] = axis
        table_device[0] = False
        table_at[0] = at
        table_taps[0] = 1
        table_rows[0] = out_size
        best[0] = 0
        m = 1
    for d in range(ndim):
        in_shape[d] = extents[d]
    for t in range(m):
        step = &plan.steps[t]
        step.axis = table_axis[best[t]]
        step.table_at = table_at[best[t]]
        step.device_table = table_device[best[t]]
        step.taps = table_taps[best[t]]
        step.flags = 0
        if fused:
            step.flags = _FUSED | _SKIP_ZERO
        elif _product(in_shape, step.axis + 1, ndim) >= 8:
            step.flags = _SKIP_ZERO
        in_shape[step.axis] = table_rows[best[t]]
        for d in range(ndim):
            step.out_shape[d] = in_shape[d]
        step.size = _product(in_shape, 0, ndim)
    plan.passes = m
    plan.window_at = 0
    stride = 1
    for d in range(ndim - 1, -1, -1):
        plan.window_at += starts[d] * stride
        stride *= plan.shape[d]
    return 0


cdef void _fill_row(int64_t* row, const _Plan* plan, int k, Py_ssize_t in_at,
                    Py_ssize_t out_at) noexcept nogil:
    """The descriptor row of pass ``k`` of one sample (see kernels/resample.cu)."""
    cdef const _Pass* step = &plan.steps[k]
    cdef const Py_ssize_t* read_shape = plan.shape
    cdef Py_ssize_t stride = 1
    cdef int d, ndim = plan.ndim
    if k:
        read_shape = plan.steps[k - 1].out_shape
    row[0] = in_at
    row[1] = out_at
    row[2] = step.size
    row[3] = ndim
    row[4] = step.axis
    row[5] = step.table_at
    row[6] = step.taps
    row[7] = step.flags
    for d in range(ndim - 1, -1, -1):
        row[_HEAD + 2 * d] = step.out_shape[d]
        row[_HEAD + 2 * d + 1] = stride
        stride *= read_shape[d]
    for d in range(_HEAD + 2 * ndim, _ROW):
        row[d] = 0


def resample_plan(list shapes, list jobs, in_offsets, out_offsets, bint device_tables=False):
    """The GPU's resampling of a batch, made as ``resample`` makes each image's (same
    windows, tables, pass order and sums): samples of ``shapes`` by ``jobs`` (per
    sample, ``resample``'s arguments between the image and the output type), each read
    at its element offset ``in_offsets[i]`` and written at ``out_offsets[i]``. Samples
    of one shape with the same job object share their tables.

    Returns ``(indices, weights, fills, size, zeros, levels)``. The tables of every
    pass (int32 indices and float32 weights, one offset for both) take ``size``
    entries: the first ones made here (``indices`` and ``weights``), the rest left
    to the GPU with ``device_tables`` (``fills``: a row of RESAMPLE_TABLE_ROW int64
    per table, for ``resample_tables``). ``zeros`` lists the samples whose output is
    zeros (no pixel along a resized axis). Per pass level ``(between, rows_out, most_out, rows_between,
    most_between)``: the float32 elements that level writes for the next, the rows
    (int64, RESAMPLE_ROW each) of the samples it finishes (written at their output
    offsets) and of those it does not (written at offsets into the level's buffer),
    each with its most elements per row. Level k reads the input (k = 0) or the
    buffer of level k - 1.
    """
    cdef Py_ssize_t n = len(shapes), i, count = 0, o, b, between
    cdef int k, most_passes = 0, passes
    cdef _Tables tables
    cdef _Plan* plans = NULL
    cdef int* plan_of = NULL
    cdef int64_t* reading = NULL
    cdef int64_t* writing = NULL
    cdef int64_t* swap
    cdef const _Plan* plan
    cdef int64_t[:, ::1] rows_out
    cdef int64_t[:, ::1] rows_between
    cdef int64_t most_out, most_between
    cdef int64_t[::1] ins = np.ascontiguousarray(in_offsets, np.int64)
    cdef int64_t[::1] outs = np.ascontiguousarray(out_offsets, np.int64)
    if len(jobs) != n or ins.shape[0] != n or outs.shape[0] != n:
        raise ValueError("resample_plan: one shape, job and offsets per sample")
    cdef int s
    _empty_tables(&tables)
    made = {}
    zeros = []
    levels = []
    try:
        plans = <_Plan*>malloc(max(n, 1) * sizeof(_Plan))
        plan_of = <int*>malloc(max(n, 1) * sizeof(int))
        reading = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        writing = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        if plans == NULL or plan_of == NULL or reading == NULL or writing == NULL:
            raise MemoryError()
        for i in range(n):
            shape = shapes[i]
            job = jobs[i]
            key = (shape, id(job))
            found = made.get(key)
            if found is None:
                if len(shape) > _MAX_DIMS:
                    raise ValueError(f"resample_plan: {len(shape)} dimensions (at most {_MAX_DIMS})")
                _make_plan(&plans[count], shape, job, &tables, device_tables)
                made[key] = found = count
                count += 1
            plan_of[i] = found
            passes = plans[plan_of[i]].passes
            if passes < 0:
                zeros.append(i)
            most_passes = max(most_passes, passes)
            reading[i] = ins[i] + plans[plan_of[i]].window_at
        # The GPU's tables follow those made here.
        for i in range(count):
            for s in range(max(plans[i].passes, 0)):
                if plans[i].steps[s].device_table:
                    plans[i].steps[s].table_at += tables.size
        for i in range(tables.fill_count):
            tables.fills[i * _TABLE_ROW] += tables.size
        fills = np.empty((tables.fill_count, _TABLE_ROW), np.int64)
        if tables.fill_count:
            memcpy(cnp.PyArray_DATA(fills), tables.fills, tables.fill_count * _TABLE_ROW * sizeof(int64_t))
        indices = np.empty(tables.size, np.int32)
        weights = np.empty(tables.size, np.float32)
        if tables.size:
            memcpy(cnp.PyArray_DATA(indices), tables.indices, tables.size * sizeof(int32_t))
            memcpy(cnp.PyArray_DATA(weights), tables.weights, tables.size * sizeof(float))
        for k in range(most_passes):
            o = b = 0
            for i in range(n):
                passes = plans[plan_of[i]].passes
                if passes == k + 1:
                    o += 1
                elif passes > k + 1:
                    b += 1
            out_arr = np.empty((o, _ROW), np.int64)
            between_arr = np.empty((b, _ROW), np.int64)
            rows_out = out_arr
            rows_between = between_arr
            o = b = between = 0
            most_out = most_between = 0
            with nogil:
                for i in range(n):
                    plan = &plans[plan_of[i]]
                    if plan.passes <= k:
                        continue
                    if plan.passes == k + 1:
                        _fill_row(&rows_out[o, 0], plan, k, reading[i], outs[i])
                        most_out = max(most_out, plan.steps[k].size)
                        o += 1
                    else:
                        _fill_row(&rows_between[b, 0], plan, k, reading[i], between)
                        writing[i] = between
                        between += plan.steps[k].size
                        most_between = max(most_between, plan.steps[k].size)
                        b += 1
            swap = reading
            reading = writing
            writing = swap
            levels.append((between, out_arr, most_out, between_arr, most_between))
    finally:
        free(plans)
        free(plan_of)
        free(reading)
        free(writing)
        _free_tables(&tables)
    return indices, weights, fills, tables.size + tables.device_size, zeros, levels


def resample_steps(tuple shape, tuple job):
    """``resample``'s plan of one image of ``shape`` on the CPU, the one
    ``resample_plan`` makes for the GPU: ``(window, steps)``, the slice of each
    dimension that the resampling reads, and its passes in order, each
    ``(axis, indices, weights)`` with tables of (output pixels, taps) whose indices
    count from the window's start. ``steps`` is empty when no axis changes (the
    window is only converted); the result is None when the image has no pixels
    along a resized axis (its output is zeros). ``job`` is ``resample``'s arguments
    between the image and the output type.

    Neighbouring dimensions that are not resized are planned as one, so any number
    of them is taken."""
    axes, sizes, lo, hi, filters, antialias = job
    cdef Py_ssize_t ndim = len(shape), d, k, taps, rows, at
    cdef bint resized, previous_resized = True
    cdef _Plan plan
    cdef _Tables tables
    cdef const _Pass* step
    if not axes:
        return (slice(None),) * ndim, []
    dimension_of = [0] * ndim  # each dimension's in the plan
    resized_dims = set(axes)
    planned = []
    for d in range(ndim):
        resized = d in resized_dims
        if resized or previous_resized or not planned:
            planned.append(shape[d])
        else:
            planned[len(planned) - 1] *= shape[d]  # (no negative indices: wraparound is off)
        dimension_of[d] = len(planned) - 1
        previous_resized = resized
    planned_axes = []
    for a in axes:
        planned_axes.append(dimension_of[a])
    planned_axes = tuple(planned_axes)
    _empty_tables(&tables)
    try:
        _make_plan(&plan, tuple(planned), (planned_axes, sizes, lo, hi, filters, antialias), &tables, False)
        if plan.passes < 0:
            return None
        window = []
        for d in range(ndim):
            if d in resized_dims:
                k = dimension_of[d]
                window.append(slice(plan.starts[k], plan.starts[k] + plan.extents[k]))
            else:
                window.append(slice(None))
        steps = []
        if not plan.converts_only:
            for k in range(plan.passes):
                step = &plan.steps[k]
                taps = step.taps
                rows = step.out_shape[step.axis]
                at = step.table_at
                indices = np.empty((rows, taps), np.int32)
                weights = np.empty((rows, taps), np.float32)
                if rows * taps:
                    memcpy(cnp.PyArray_DATA(indices), tables.indices + at, rows * taps * sizeof(int32_t))
                    memcpy(cnp.PyArray_DATA(weights), tables.weights + at, rows * taps * sizeof(float))
                steps.append((axes[planned_axes.index(step.axis)], indices, weights))
        return tuple(window), steps
    finally:
        _free_tables(&tables)
