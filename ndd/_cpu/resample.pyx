# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Separable resampling: filter tables for one axis and one resampling pass.

An image is resized one spatial axis at a time. For each axis, a filter table
lists, per output pixel, the input pixels it reads (indices clamped to the
image, so the border pixel repeats) and their normalised weights; ``resample_pass``
applies such a table along the middle axis of a 4-D view ``(outer, mid, n, inner)``
of the data, reading any strided view whose innermost axis is contiguous and
writing with rounding and saturation when the output is an integer type.

The tables, the pass order and the sums are the reference's, in the same
single-precision arithmetic (filters sampled into tables, each product and sum
rounded on its own), so that float32 outputs equal the reference's to the bit.

One plan serves both devices: ``resample_steps`` gives the CPU an image's window
(the pixels some output reads), tables and pass order; ``resample_plan`` makes the
same for a whole batch in one call for the GPU, with the descriptor rows of
``kernels/resample.cu``, leaving the tables whose arithmetic the GPU reproduces to
the bit (linear, cubic, triangular) to the ``resample_tables`` kernel.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport M_PI, M_SQRT2, ceilf, expf, fabsf, floorf, fmaxf, nearbyintf, sinf
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


# The filters other than nearest neighbour are tables, sampled evenly over the
# filter's extent and read between samples by linear interpolation, in float32
# throughout: the reference's construction, whose roundings decide the last bits of
# the weights and so which way outputs near a half round. Each table spans
# ``count - 1`` steps; stretched over ``support`` input pixels it is read every
# ``step = (count - 1) / support`` entries per pixel.
cdef enum:
    _TRIANGLE_COUNT = 3
    _GAUSS_COUNT = 65
    _CUBIC_COUNT = 129
    _LANCZOS_COUNT = 193  # 32 samples per pixel over [-3, 3]

cdef float _TRIANGLE_VALUES[_TRIANGLE_COUNT]
cdef float _GAUSS_VALUES[_GAUSS_COUNT]
cdef float _CUBIC_VALUES[_CUBIC_COUNT]
cdef float _LANCZOS_VALUES[_LANCZOS_COUNT]


cdef inline float _cubic_window(float x) noexcept nogil:
    # Catmull-Rom (Keys' cubic with a = -0.5), evaluated as the GPU's resample_tables does.
    cdef float x2, x3
    x = fabsf(x)
    if x >= 2:
        return 0
    x2 = x * x
    x3 = x2 * x
    if x > 1:
        return <float>-0.5 * x3 + <float>2.5 * x2 - <float>4 * x + <float>2
    return <float>1.5 * x3 - <float>2.5 * x2 + <float>1


cdef inline float _sinc(float x) noexcept nogil:
    if x == 0:
        return 1
    x = <float>(x * M_PI)  # the product in double precision, as the reference's
    return sinf(x) / x


cdef inline float _table_point(int i, int count, float extent) noexcept nogil:
    """Where sample ``i`` of a table over ``[-extent / 2, extent / 2]`` lies."""
    return extent * (<float>i - <float>(count - 1) * <float>0.5) / <float>(count - 1)


cdef void _sample_filters() noexcept nogil:
    cdef int i
    cdef float x
    _TRIANGLE_VALUES[0] = 0
    _TRIANGLE_VALUES[1] = 1
    _TRIANGLE_VALUES[2] = 0
    for i in range(_GAUSS_COUNT):
        # exp(-x^2) over [-2, 2]: the table's ends are where it falls to e^-4.
        x = _table_point(i, _GAUSS_COUNT, 4)
        _GAUSS_VALUES[i] = expf(-x * x)
    for i in range(_CUBIC_COUNT):
        _CUBIC_VALUES[i] = _cubic_window(_table_point(i, _CUBIC_COUNT, 4))
    for i in range(_LANCZOS_COUNT):
        x = _table_point(i, _LANCZOS_COUNT, 6)
        _LANCZOS_VALUES[i] = _sinc(x) * _sinc(x / 3) if fabsf(x) < 3 else 0


_sample_filters()


cdef struct _Filter:
    const float* values
    int count
    float anchor  # the filter's centre, in input pixels from its first table entry
    float step  # table entries per input pixel
    Py_ssize_t taps  # input pixels an output pixel reads


cdef inline void _stretch(_Filter* filter, float support) noexcept nogil:
    """Spread the table over ``support`` input pixels (its centre stays its centre)."""
    cdef float old_step = filter.step
    filter.step = <float>(filter.count - 1) / support
    filter.anchor = filter.anchor * old_step / filter.step


cdef _Filter _make_filter(int kind, bint antialias, float extent, Py_ssize_t out_size) noexcept nogil:
    """The filter of ``kind`` (not nearest neighbour) resampling an input interval of
    ``extent`` pixels to ``out_size``: with antialiasing when scaling down, widened by
    the scale (``extent / out_size``), as the reference does."""
    cdef _Filter filter
    cdef bint widen = antialias and out_size < extent
    cdef float ratio = extent / <float>out_size if widen else 1
    filter.step = 1
    if kind == _CUBIC:
        filter.values = _CUBIC_VALUES
        filter.count = _CUBIC_COUNT
    elif kind == _LANCZOS3:
        filter.values = _LANCZOS_VALUES
        filter.count = _LANCZOS_COUNT
    elif kind == _GAUSSIAN:
        filter.values = _GAUSS_VALUES
        filter.count = _GAUSS_COUNT
    else:
        filter.values = _TRIANGLE_VALUES
        filter.count = _TRIANGLE_COUNT
    filter.anchor = <float>(filter.count - 1) * <float>0.5
    if kind == _CUBIC:
        _stretch(&filter, 2 * fmaxf(2, 2 * ratio))
    elif kind == _LANCZOS3:
        _stretch(&filter, 2 * fmaxf(3, 3 * extent / <float>out_size if widen else 3))
    elif kind == _GAUSSIAN:
        # A Gaussian of sigma = radius / (2 sqrt 2), its table four sigmas wide each way.
        _stretch(&filter, fmaxf(1, <float>(4 * M_SQRT2) * <float>(<double>(ratio * <float>0.5) / M_SQRT2)))
    else:
        # Linear and triangular: the triangle of radius 1, widened as the others.
        _stretch(&filter, fmaxf(1, 2 * ratio))
    filter.taps = <Py_ssize_t>ceilf(<float>(filter.count - 1) / filter.step)
    return filter


cdef inline float _filter_at(const _Filter* filter, float x) noexcept nogil:
    """The table at (fractional) entry ``x``; 0 outside it."""
    cdef int x0
    cdef float d, f0, f1
    if not (x > -1):
        return 0
    if x >= filter.count:
        return 0
    x0 = <int>floorf(x)
    d = x - <float>x0
    f0 = 0 if x0 < 0 else filter.values[x0]
    f1 = 0 if x0 + 1 >= filter.count else filter.values[x0 + 1]
    return f0 + d * (f1 - f0)


cdef inline float _first_point(float lo, float step, const _Filter* filter) noexcept nogil:
    """The input position (in pixels) of the first table entry of output pixel 0;
    output pixel j's is ``j * step`` further."""
    return lo + (<float>0.5 * step - <float>0.5 - filter.anchor)


cdef void _fill_table(float lo32, float step32, Py_ssize_t out_size, Py_ssize_t in_size, int kind,
                      const _Filter* filter, int32_t* indices, float* weights, bint stepped) noexcept nogil:
    """The indices and weights, ``out_size`` rows of ``filter.taps`` (1 for nearest
    neighbour), of the input pixels each output pixel reads along one axis.

    Output pixel j samples the input at ``lo + (j + 0.5) * step`` (pixel k spans
    [k, k + 1]; a negative step flips), in single precision as the reference computes
    it. Nearest neighbour takes the pixel under that point (which its rounding
    decides when the point falls on an edge): with ``stepped`` (the outer axes: rows,
    slices) by adding the step to the previous point, else (the columns) as
    ``(j + 0.5) * step + lo``. The other filters read from the first pixel at or after
    the filter's start, one tap per pixel, and normalise their weights to sum to 1.
    Indices are clamped to ``[0, in_size)``, so the border pixel repeats.
    """
    cdef Py_ssize_t j, t, k, first, taps, last = in_size - 1
    cdef int32_t* index_row
    cdef float* weight_row
    cdef float point, start, offset, total
    if kind == _NN:
        point = lo32 + <float>0.5 * step32
        for j in range(out_size):
            if not stepped:
                point = (<float>j + <float>0.5) * step32 + lo32
            k = <Py_ssize_t>floorf(point)
            indices[j] = <int32_t>(0 if k < 0 else (last if k > last else k))
            weights[j] = 1
            point = point + step32
        return
    taps = filter.taps
    start = _first_point(lo32, step32, filter)
    for j in range(out_size):
        index_row = indices + j * taps
        weight_row = weights + j * taps
        point = <float>j * step32 + start
        first = <Py_ssize_t>ceilf(point)
        offset = <float>first - point
        total = 0
        for t in range(taps):
            weight_row[t] = _filter_at(filter, (offset + <float>t) * filter.step)
            total = total + weight_row[t]
            k = first + t
            index_row[t] = <int32_t>(0 if k < 0 else (last if k > last else k))
        if total != 0:
            for t in range(taps):
                weight_row[t] = weight_row[t] / total


cdef inline dst_t _store(float value, dst_t* kind_tag, bint even=False) noexcept nogil:
    # Integers saturate, then round half away from zero (without a call to floor), or
    # with ``even`` to nearest even; kind_tag only selects the type.
    if dst_t is float:
        return value
    if dst_t is uint8_t:
        value = 0 if value < 0 else (255 if value > 255 else value)
    elif dst_t is uint16_t:
        value = 0 if value < 0 else (65535 if value > 65535 else value)
    else:
        value = -32768 if value < -32768 else (32767 if value > 32767 else value)
    if even:
        return <dst_t>nearbyintf(value)
    return <dst_t>(value + 0.5) if value >= 0 else <dst_t>(value - 0.5)


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
    # Sums with a multiply and an add each rounded, as the reference's resampling sums.
    void ndd_taps_plain_u8(float *acc, const uint8_t **sources, const float *weights, Py_ssize_t taps,
                           Py_ssize_t n)
    void ndd_taps_plain_i16(float *acc, const int16_t **sources, const float *weights, Py_ssize_t taps,
                            Py_ssize_t n)
    void ndd_taps_plain_u16(float *acc, const uint16_t **sources, const float *weights, Py_ssize_t taps,
                            Py_ssize_t n)
    void ndd_taps_plain_f32(float *acc, const float **sources, const float *weights, Py_ssize_t taps,
                            Py_ssize_t n)


cdef inline void _weighted_rows(float *acc, const src_t **rows, const float *weights, Py_ssize_t taps,
                                Py_ssize_t n) noexcept nogil:
    """acc[i] = sum_k weights[k] * rows[k][i] for i < n, summed in the order of the taps
    (AVX2 where the processor has it)."""
    if src_t is uint8_t:
        ndd_taps_plain_u8(acc, rows, weights, taps, n)
    elif src_t is int16_t:
        ndd_taps_plain_i16(acc, rows, weights, taps, n)
    elif src_t is uint16_t:
        ndd_taps_plain_u16(acc, rows, weights, taps, n)
    else:
        ndd_taps_plain_f32(acc, rows, weights, taps, n)


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

# Input rows that resample_columns_rows transposes and resamples together.
cdef enum:
    COLUMN_BLOCK = 32


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
    void ndd_store_u8_even(const float *src, uint8_t *dst, Py_ssize_t n)


cdef inline void _transpose_rows(const char *first_row, Py_ssize_t row_stride, Py_ssize_t count,
                                 Py_ssize_t pixels, Py_ssize_t channels, float *out,
                                 src_t *kind_tag) noexcept nogil:
    """out[x * count * channels + b * channels + c] = row b's pixel x, channel c, as
    float32, for ``count`` rows ``row_stride`` bytes apart (``kind_tag`` only selects
    the type)."""
    cdef Py_ssize_t x, b, c, stride = count * channels
    cdef const src_t *src
    cdef float *dst
    for b in range(count):
        src = <const src_t *>(first_row + b * row_stride)
        dst = out + b * channels
        if channels == 3:
            for x in range(pixels):
                dst[x * stride] = src[3 * x]
                dst[x * stride + 1] = src[3 * x + 1]
                dst[x * stride + 2] = src[3 * x + 2]
        elif channels == 1:
            for x in range(pixels):
                dst[x * stride] = src[x]
        else:
            for x in range(pixels):
                for c in range(channels):
                    dst[x * stride + c] = src[x * channels + c]


cdef inline void _store_row(const float *src, dst_t *out, Py_ssize_t n, bint even=False) noexcept nogil:
    """out[i] = _store(src[i], even) over a contiguous row (AVX2 for uint8)."""
    cdef Py_ssize_t i
    if dst_t is uint8_t:
        if even:
            ndd_store_u8_even(src, out, n)
        else:
            ndd_store_u8(src, out, n)
    else:
        for i in range(n):
            out[i] = _store(src[i], out, even)


cdef inline Py_ssize_t _lanes(dst_t *kind_tag) noexcept nogil:
    """The elements the reference's vector code rounds at a time, for the output type."""
    if dst_t is uint8_t:
        return _ROUND_LANES_8
    return _ROUND_LANES_16


cdef inline void _store_row_of_rows(const float *src, dst_t *out, Py_ssize_t n) noexcept nogil:
    """A row of a pass the reference ends with along rows (ROUND_ROWS): to nearest even
    but for the elements past the last whole group of vector lanes, half away from zero."""
    cdef Py_ssize_t rest = n % _lanes(out)
    _store_row(src, out, n - rest, True)
    _store_row(src + n - rest, out + n - rest, rest)


cdef inline void _store_transposed_block(const float *block, Py_ssize_t block_stride, Py_ssize_t count,
                                         Py_ssize_t pixels, Py_ssize_t channels, dst_t *out,
                                         Py_ssize_t out_stride, dst_t *converted, Py_ssize_t first_column,
                                         Py_ssize_t even_first, Py_ssize_t even_stop) noexcept nogil:
    """As _transpose_block, converting to the output type (rounded and saturated):
    each of the ``count`` rows is converted into ``converted`` first (pixels *
    channels values a row), then the values are moved to their transposed places.
    Row b is output column ``first_column + b``; the columns in ``[even_first,
    even_stop)`` round halves to even, the others away from zero (ROUND_COLUMNS)."""
    cdef Py_ssize_t b, column
    cdef Py_ssize_t row_len = pixels * channels
    for b in range(count):
        column = first_column + b
        if even_first <= column < even_stop:
            _store_row(block + b * block_stride, converted + b * row_len, row_len, True)
        else:
            _store_row(block + b * block_stride, converted + b * row_len, row_len)
    _transpose_block(<const dst_t *>converted, row_len, count, pixels, channels, out, out_stride)


def store_rounded(const float[::1] src, dst_t[::1] dst, int mode, Py_ssize_t columns, Py_ssize_t inner,
                  Py_ssize_t first=0, Py_ssize_t count=0):
    """Convert float32 resampling results (a C-ordered array, flattened) to an integer
    output as the reference's last pass rounds them (``resample_steps``'s rounding):
    ``inner`` elements per step along the rounding axis, ``columns`` steps along it;
    with ROUND_COLUMNS the regular columns are ``[first, first + count)``. Runs
    without the GIL."""
    cdef Py_ssize_t n = src.shape[0], at, run, even_at, even_len
    if dst.shape[0] != n:
        raise ValueError("store_rounded: the input and the output differ in size")
    if n == 0:
        return
    if inner <= 0 or columns <= 0 or n % (inner * columns):
        raise ValueError("store_rounded: the runs do not divide the elements")
    cdef const float* values = &src[0]
    cdef dst_t* out = &dst[0]
    with nogil:
        at = 0
        if mode == _ROUND_ROWS:
            while at < n:
                _store_row_of_rows(values + at, out + at, inner)
                at += inner
        elif mode == _ROUND_COLUMNS:
            run = columns * inner
            even_at = first * inner
            even_len = (count - count % _lanes(out)) * inner
            while at < n:
                _store_row(values + at, out + at, even_at)
                _store_row(values + at + even_at, out + at + even_at, even_len, True)
                _store_row(values + at + even_at + even_len, out + at + even_at + even_len,
                           run - even_at - even_len)
                at += run
        else:
            _store_row(values, out, n, True)


cdef bint _two_axis_work(const src_t[:, :, :, :] src, dst_t[:, :, :, ::1] dst, Py_ssize_t out_h,
                         Py_ssize_t out_w, str name) except -1:
    """Check the arguments of a two-axis resize (``name``): False when there is
    nothing to write."""
    cdef Py_ssize_t outer = src.shape[0], channels = src.shape[3]
    if dst.shape[0] != outer or dst.shape[1] != out_h or dst.shape[2] != out_w or dst.shape[3] != channels:
        raise ValueError(f"{name}: the output shape does not match the input and the tables")
    if outer * out_h * out_w * channels * src.shape[1] * src.shape[2] == 0:
        return False
    if (channels > 1 and src.strides[3] != sizeof(src_t)) or src.strides[2] != channels * sizeof(src_t):
        raise ValueError(f"{name}: each input row must be contiguous")
    return True


def resample_rows_columns(const src_t[:, :, :, :] src, dst_t[:, :, :, ::1] dst,
                          const int32_t[:, ::1] row_indices, const float[:, ::1] row_weights,
                          const int32_t[:, ::1] column_indices, const float[:, ::1] column_weights,
                          Py_ssize_t regular_first=0, Py_ssize_t regular_count=-1):
    """Both passes of a 2-D resize of ``src`` (outer, H, W, C) into ``dst``
    (outer, out_H, out_W, C), with whole-row accumulations in both.

    The vertical pass sums input rows (W * C contiguous values) and stores its result
    transposed, column-major (W, out_H, C); the horizontal pass then sums those
    columns as rows too, and stores the result transposed back. Interleaved
    channels never need a per-pixel gather, and both sums run over long contiguous
    rows in vector registers. Each row of ``src`` must be contiguous (W * C values).
    Integer outputs round as the reference's last pass along columns does
    (ROUND_COLUMNS, with the regular columns ``[regular_first, regular_first +
    regular_count)``; a count of -1: every column to nearest even). Runs without the
    GIL.
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
    if not _two_axis_work(src, dst, out_h, out_w, "resample_rows_columns"):
        return
    cdef const char* base = <const char*>&src[0, 0, 0, 0]
    cdef Py_ssize_t stride_a = src.strides[0], stride_row = src.strides[1]
    most_taps = row_taps if row_taps > column_taps else column_taps
    cdef Py_ssize_t even_first = 0, even_stop = out_w
    if regular_count >= 0:
        even_first = regular_first
        even_stop = regular_first + regular_count - regular_count % _lanes(<dst_t*>NULL)
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
                    ndd_taps_plain_f32(sums + b * column_len, <const float**>tap_rows, tap_weights, n,
                                       column_len)
                out_pixel = &dst[a, 0, first, 0]
                _store_transposed_block(sums, column_len, count, out_h, channels, out_pixel,
                                        out_w * channels, converted, first, even_first, even_stop)
        free(tap_weights)
        free(tap_rows)
        free(converted)
        free(sums)


def resample_columns_rows(const src_t[:, :, :, :] src, dst_t[:, :, :, ::1] dst,
                          const int32_t[:, ::1] column_indices, const float[:, ::1] column_weights,
                          const int32_t[:, ::1] row_indices, const float[:, ::1] row_weights):
    """Both passes of a 2-D resize of ``src`` (outer, H, W, C) into ``dst``
    (outer, out_H, out_W, C), columns first, with whole-row accumulations in both:
    the mirror of ``resample_rows_columns``.

    Each block of COLUMN_BLOCK input rows is stored transposed as float32,
    column-major (W, rows, C); the horizontal pass sums those columns as rows and
    stores its result transposed back, row-major (H, out_W, C); the vertical pass
    then sums whole rows of it into the output, rounding integers as the reference's
    last pass along rows does (ROUND_ROWS). Each row of ``src`` must be contiguous
    (W * C values). Runs without the GIL.
    """
    cdef Py_ssize_t outer = src.shape[0], in_h = src.shape[1], in_w = src.shape[2], channels = src.shape[3]
    cdef Py_ssize_t out_h = row_indices.shape[0], out_w = column_indices.shape[0]
    cdef Py_ssize_t row_taps = row_indices.shape[1], column_taps = column_indices.shape[1]
    cdef Py_ssize_t row_len = in_w * channels, out_len = out_w * channels, block_len
    cdef Py_ssize_t a, i, j, n, first, count, most_taps
    cdef float* sums
    cdef float* columns
    cdef float* between
    cdef float* tap_weights
    cdef const char** tap_rows
    cdef const char* plane
    if not _two_axis_work(src, dst, out_h, out_w, "resample_columns_rows"):
        return
    cdef const char* base = <const char*>&src[0, 0, 0, 0]
    cdef Py_ssize_t stride_a = src.strides[0], stride_row = src.strides[1]
    most_taps = row_taps if row_taps > column_taps else column_taps
    # The intermediate (H, out_W, C) comes from the host pool (see resample_rows_columns).
    cdef float[::1] between_buffer = np.empty(in_h * out_len, np.float32)
    between = &between_buffer[0]
    with nogil:
        sums = <float*>malloc(COLUMN_BLOCK * out_len * sizeof(float))
        columns = <float*>malloc(COLUMN_BLOCK * row_len * sizeof(float))
        tap_rows = <const char**>malloc(most_taps * sizeof(char*))
        tap_weights = <float*>malloc(most_taps * sizeof(float))
        for a in range(outer):
            plane = base + a * stride_a
            for first in range(0, in_h, 32):  # COLUMN_BLOCK (range needs a literal step)
                count = COLUMN_BLOCK if in_h - first > COLUMN_BLOCK else in_h - first
                block_len = count * channels
                _transpose_rows(plane + first * stride_row, stride_row, count, in_w, channels, columns,
                                <src_t*>NULL)
                for j in range(out_w):
                    n = _nonzero_taps(&column_weights[j, 0], &column_indices[j, 0], column_taps,
                                      <const char*>columns, block_len * sizeof(float), tap_rows, tap_weights)
                    ndd_taps_plain_f32(sums + j * block_len, <const float**>tap_rows, tap_weights, n,
                                       block_len)
                _transpose_block(sums, block_len, out_w, count, channels, between + first * out_len, out_len)
            for i in range(out_h):
                n = _nonzero_taps(&row_weights[i, 0], &row_indices[i, 0], row_taps, <const char*>between,
                                  out_len * sizeof(float), tap_rows, tap_weights)
                ndd_taps_plain_f32(sums, <const float**>tap_rows, tap_weights, n, out_len)
                _store_row_of_rows(sums, &dst[a, i, 0, 0], out_len)
        free(tap_weights)
        free(tap_rows)
        free(columns)
        free(sums)


# -- the plan of an image, and the GPU's of a batch -------------------------------------------

# RESAMPLE_MAX_DIMS, RESAMPLE_HEAD, RESAMPLE_FUSED and RESAMPLE_SKIP_ZERO of kernels/resample.cu.
cdef enum:
    _MAX_DIMS = 6
    _HEAD = 12
    _ROW = _HEAD + 2 * _MAX_DIMS
    _FUSED = 1
    _SKIP_ZERO = 2

# How integer outputs round, as the reference's last pass does (RESAMPLE_ROUND_* of
# kernels/resample.cu): everything to nearest even (ROUND_EVEN); the regular columns
# its vector code covers to nearest even and the others half away from zero
# (ROUND_COLUMNS); or the end of each row its vector code leaves over half away
# from zero (ROUND_ROWS). The vector code covers ROUND_LANES_8 elements at a time for
# 8-bit outputs, ROUND_LANES_16 for 16-bit ones.
cdef enum:
    _ROUND_EVEN = 0
    _ROUND_COLUMNS = 1
    _ROUND_ROWS = 2
    _ROUND_LANES_8 = 16
    _ROUND_LANES_16 = 8

ROUND_EVEN = _ROUND_EVEN
ROUND_COLUMNS = _ROUND_COLUMNS
ROUND_ROWS = _ROUND_ROWS

# RESAMPLE_TABLE_ROW of kernels/resample.cu: a filter table the GPU makes.
cdef enum:
    _TABLE_ROW = 10

# The dimensions a plan holds (the CPU's, after its neighbouring dimensions that are not
# resized are joined; the GPU's rows take _MAX_DIMS).
cdef enum:
    _PLAN_DIMS = 16

RESAMPLE_MAX_DIMS = _MAX_DIMS
RESAMPLE_HEAD = _HEAD
RESAMPLE_ROW = _ROW
RESAMPLE_TABLE_ROW = _TABLE_ROW


cdef union _Bits:
    float value
    int32_t bits


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
    # How integer outputs round (see resample_steps): the rule, the axis of the
    # reference's last pass and, for columns, its regular ones.
    int round_mode
    int round_axis
    Py_ssize_t round_first
    Py_ssize_t round_count
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


cdef int _add_fill(_Tables* tables, Py_ssize_t out_size, Py_ssize_t in_size, int kind, int32_t first,
                   float lo, float step, const _Filter* filter) except -1:
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
    row[2] = filter.taps
    row[3] = in_size
    row[4] = kind
    row[5] = first
    bits.value = lo
    row[6] = bits.bits
    bits.value = step
    row[7] = bits.bits
    bits.value = filter.anchor
    row[8] = bits.bits
    bits.value = filter.step
    row[9] = bits.bits
    tables.fill_count += 1
    tables.device_size += out_size * filter.taps
    return 0


cdef void _table_span(float lo, float step, const _Filter* filter, Py_ssize_t out_size,
                      Py_ssize_t in_size, int32_t* first, int32_t* stop) noexcept nogil:
    """The pixels ``[first, stop)`` that a filter table (not nearest neighbour) reads,
    without making it: the sampling points move one way along the output, so the
    extreme taps are those of its first and last pixels (computed as _fill_table does)."""
    cdef float start = _first_point(lo, step, filter)
    cdef Py_ssize_t a = <Py_ssize_t>ceilf(start)
    cdef Py_ssize_t b = <Py_ssize_t>ceilf(<float>(out_size - 1) * step + start)
    cdef Py_ssize_t low = a if a < b else b, high = (b if a < b else a) + filter.taps - 1, last = in_size - 1
    first[0] = <int32_t>(0 if low < 0 else (last if low > last else low))
    stop[0] = <int32_t>(0 if high < 0 else (last if high > last else high)) + 1


cdef void _regular_span(float lo, float step, const _Filter* filter, Py_ssize_t out_size,
                        Py_ssize_t in_size, Py_ssize_t* first, Py_ssize_t* count) noexcept nogil:
    """The output pixels ``[first, first + count)`` between the leading ones whose first
    tap lies before the input and the trailing ones whose last tap lies past it (the
    reference's "regular" columns, which it rounds as its vector code does)."""
    cdef float start = _first_point(lo, step, filter)
    cdef Py_ssize_t low = 0, high = out_size - 1
    while low < out_size and <Py_ssize_t>ceilf(<float>low * step + start) < 0:
        low += 1
    while high >= 0 and <Py_ssize_t>ceilf(<float>high * step + start) + filter.taps > in_size:
        high -= 1
    first[0] = low
    count[0] = high - low + 1 if high >= low else 0


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


cdef void _reference_order(int n, const Py_ssize_t* extents, const Py_ssize_t* sizes,
                           const Py_ssize_t* taps, int* order) noexcept nogil:
    """The order of the passes over ``n`` axes (given innermost first: columns, rows,
    slices) that the reference picks, which decides the sums' roundings: the least
    cost, in float32, of writing each pass's output (3 per element) and of its
    multiply-adds (taps per element, weighted 1.4 for columns, 1 for rows, 1.2 for
    the others), trying the orders in lexicographic order and keeping the first of
    equal costs. ``extents`` are the input pixels read, ``sizes`` the output's."""
    cdef int trial[_PLAN_DIMS]
    cdef Py_ssize_t current[_PLAN_DIMS]
    cdef Py_ssize_t volume
    cdef float cost, best = 0, weight
    cdef bint found = False
    cdef int p, a, d
    for p in range(n):
        trial[p] = p
        order[p] = p
    while True:
        for d in range(n):
            current[d] = extents[d]
        cost = 0
        for p in range(n):
            a = trial[p]
            current[a] = sizes[a]
            volume = 1
            for d in range(n):
                volume *= current[d]
            weight = <float>1.4 if a == 0 else (<float>1 if a == 1 else <float>1.2)
            cost = cost + (weight * <float>(taps[a] * volume) + <float>volume * <float>3)
        if not found or cost < best:
            found = True
            best = cost
            for p in range(n):
                order[p] = trial[p]
        if not _next_order(trial, n):
            break


cdef bint _rebase_table(int32_t* indices, const float* weights, Py_ssize_t n, Py_ssize_t taps,
                        int32_t* first_out, int32_t* stop_out) noexcept nogil:
    """Count a table's indices from the first pixel it reads; ``[first, stop)`` are the
    pixels read (both 0 for an empty table). True when the table copies them as they
    are: ``n`` pixels read, output pixel j taking pixel j with weight 1 (its other
    taps, if any, weigh 0)."""
    cdef Py_ssize_t j, t
    cdef int32_t first, last
    cdef bint identity = True
    first_out[0] = 0
    stop_out[0] = 0
    if n * taps == 0:
        return taps == 1
    first = indices[0]
    last = first
    for j in range(n * taps):
        if indices[j] < first:
            first = indices[j]
        if indices[j] > last:
            last = indices[j]
    for j in range(n * taps):
        indices[j] -= first
    identity = last + 1 - first == n
    for j in range(n):
        if not identity:
            break
        for t in range(taps):
            if weights[j * taps + t] != 0 and (weights[j * taps + t] != 1 or indices[j * taps + t] != j):
                identity = False
                break
    first_out[0] = first
    stop_out[0] = last + 1
    return identity


cdef int _make_plan(_Plan* plan, tuple shape, tuple job, _Tables* tables, bint device_tables) except -1:
    """One image's resampling (``resample``'s window, tables, pass order and sums), its
    tables appended to ``tables`` (with ``device_tables``, those the GPU can make
    to the bit are left to it).

    The passes run in the order the reference picks. As in the reference, each axis
    but the first resampled counts its sampling points from the first pixel its
    filter can reach (``roi_lo``), which changes their single-precision roundings."""
    axes, sizes, lo, hi, filters, antialias = job[:6]
    cdef int min_kind = filters[0], mag_kind = filters[1]
    cdef int ndim = len(shape), naxes = len(axes), k, d, m = 0, t, axis
    cdef Py_ssize_t* starts = plan.starts
    cdef Py_ssize_t* extents = plan.extents
    cdef Py_ssize_t in_shape[_PLAN_DIMS]
    cdef int table_axis[_PLAN_DIMS]
    cdef bint table_device[_PLAN_DIMS]
    cdef Py_ssize_t table_at[_PLAN_DIMS]
    cdef Py_ssize_t table_taps[_PLAN_DIMS]
    cdef Py_ssize_t table_rows[_PLAN_DIMS]
    cdef int kinds[_PLAN_DIMS]
    cdef _Filter axis_filters[_PLAN_DIMS]
    cdef float lows[_PLAN_DIMS]
    cdef float steps_of[_PLAN_DIMS]
    cdef Py_ssize_t roi_lo[_PLAN_DIMS]
    cdef Py_ssize_t roi_hi[_PLAN_DIMS]
    # Per axis, innermost first (the reference's order of axes).
    cdef int inner_first[_PLAN_DIMS]
    cdef Py_ssize_t read_extent[_PLAN_DIMS]
    cdef Py_ssize_t order_sizes[_PLAN_DIMS]
    cdef Py_ssize_t order_taps[_PLAN_DIMS]
    # Per axis, in the order of ``axes``.
    cdef Py_ssize_t out_sizes[_PLAN_DIMS]
    cdef Py_ssize_t axis_taps[_PLAN_DIMS]
    cdef int passes[_PLAN_DIMS]
    # Per axis, as its pass reads it: from ``shifts[k]`` on (roi_lo[k] after the first
    # pass, as the reference; else 0), ``reaches[k]`` pixels, the region from ``origins[k]``.
    cdef float origins[_PLAN_DIMS]
    cdef Py_ssize_t shifts[_PLAN_DIMS]
    cdef Py_ssize_t reaches[_PLAN_DIMS]
    cdef Py_ssize_t out_size, taps, at, stride, in_size, shift
    cdef float low, high, a, b, anchor
    cdef int kind
    cdef _Filter filter
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
    # The axis whose nearest-neighbour points are computed as the columns' (see
    # _fill_table): the innermost resampled one, unless the job names another (-1:
    # none; tensor_resize, see ndd/_ops/resize.py), as an axis of ``shape``.
    cdef int nn_columns = last_axis
    if len(job) > 6 and job[6] is not None:
        nn_columns = job[6]
    for k in range(naxes):
        axis = axes[k]
        in_size = plan.shape[axis]
        out_sizes[k] = int(sizes[k])
        low = <float>lo[k]
        high = <float>hi[k]
        lows[k] = low
        steps_of[k] = (high - low) / <float>out_sizes[k] if out_sizes[k] else 0
        # Scaling down (fewer output pixels than the region's extent) takes min_filter.
        kinds[k] = min_kind if out_sizes[k] < fabsf(high - low) else mag_kind
        axis_taps[k] = 1
        anchor = 0
        if kinds[k] != _NN:
            axis_filters[k] = _make_filter(kinds[k], aa, fabsf(high - low), out_sizes[k])
            axis_taps[k] = axis_filters[k].taps
            anchor = axis_filters[k].anchor
        # The pixels the filter can reach: the region, widened by its support.
        a = low if low <= high else high
        b = high if low <= high else low
        roi_lo[k] = max(0, min(in_size, <Py_ssize_t>floorf(a - anchor)))
        roi_hi[k] = max(0, min(in_size, <Py_ssize_t>ceilf(b - anchor + <float>axis_taps[k])))
        inner_first[k] = 0
        for t in range(naxes):
            if axes[t] > axis:
                inner_first[k] += 1
    for k in range(naxes):
        read_extent[inner_first[k]] = roi_hi[k] - roi_lo[k]
        order_sizes[inner_first[k]] = out_sizes[k]
        order_taps[inner_first[k]] = axis_taps[k]
    _reference_order(naxes, read_extent, order_sizes, order_taps, passes)
    # passes[] holds innermost-first numbers; make them indices into axes.
    for t in range(naxes):
        for k in range(naxes):
            if inner_first[k] == passes[t]:
                passes[t] = k
                break
        k = passes[t]
        shifts[k] = roi_lo[k] if t > 0 else 0
        origins[k] = lows[k] - <float>shifts[k] if t > 0 else lows[k]
        reaches[k] = roi_hi[k] - roi_lo[k] if t > 0 else plan.shape[axes[k]]
    # The reference rounds integer outputs as its last pass (even one that leaves
    # the values as they are) does.
    k = passes[naxes - 1]
    plan.round_axis = axes[k]
    plan.round_mode = _ROUND_EVEN
    plan.round_first = 0
    plan.round_count = 0
    if kinds[k] != _NN and axes[k] == last_axis:
        plan.round_mode = _ROUND_COLUMNS
        _regular_span(origins[k], steps_of[k], &axis_filters[k], out_sizes[k], reaches[k], &plan.round_first,
                      &plan.round_count)
    elif kinds[k] != _NN:
        plan.round_mode = _ROUND_ROWS
    for t in range(naxes):
        k = passes[t]
        axis = axes[k]
        kind = kinds[k]
        out_size = out_sizes[k]
        filter = axis_filters[k]
        taps = axis_taps[k]
        low = origins[k]
        in_size = reaches[k]
        shift = shifts[k]
        if (device_tables and out_size * taps and in_size and fabsf(steps_of[k]) != 1
                and (kind == _LINEAR or kind == _CUBIC or kind == _TRIANGULAR)):
            # Not a step of one pixel: never an identity (those tables are made here,
            # where an identity is found and its pass left out).
            _table_span(low, steps_of[k], &filter, out_size, in_size, &first, &stop)
            starts[axis] = first + shift
            extents[axis] = stop - first
            table_axis[m] = axis
            table_device[m] = True
            table_at[m] = tables.device_size
            table_taps[m] = taps
            table_rows[m] = out_size
            _add_fill(tables, out_size, in_size, kind, first, low, steps_of[k], &filter)
            m += 1
            continue
        _reserve(tables, out_size * taps)
        at = tables.size
        if out_size * taps and in_size:
            _fill_table(low, steps_of[k], out_size, in_size, kind, &filter, tables.indices + at,
                        tables.weights + at, axis != nn_columns)
        elif out_size * taps:
            # No pixel in reach (a region outside the image): the nearest border pixel.
            _fill_table(lows[k], steps_of[k], out_size, plan.shape[axis], kind, &filter, tables.indices + at,
                        tables.weights + at, axis != nn_columns)
            shift = 0
        identity = _rebase_table(tables.indices + at, tables.weights + at, out_size, taps, &first, &stop)
        if out_size * taps:
            # Only the pixels some output reads are visited: the region, plus the filter's reach.
            starts[axis] = first + shift
            extents[axis] = stop - first
        if not identity:
            table_axis[m] = axis
            table_device[m] = False
            table_at[m] = at
            table_taps[m] = taps
            table_rows[m] = out_size
            tables.size += out_size * taps
            m += 1
    # Two neighbouring axes, rows then columns: every sum over whole rows, fused.
    fused = m == 2 and table_axis[0] + 1 == table_axis[1]
    if not m:
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
        m = 1
    for d in range(ndim):
        in_shape[d] = extents[d]
    for t in range(m):
        step = &plan.steps[t]
        step.axis = table_axis[t]
        step.table_at = table_at[t]
        step.device_table = table_device[t]
        step.taps = table_taps[t]
        step.flags = 0
        if fused:
            step.flags = _FUSED | _SKIP_ZERO
        elif _product(in_shape, step.axis + 1, ndim) >= 8:
            step.flags = _SKIP_ZERO
        in_shape[step.axis] = table_rows[t]
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
    row[8] = plan.round_mode
    row[9] = plan.round_axis
    row[10] = plan.round_first
    row[11] = plan.round_count
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
    ``resample_plan`` makes for the GPU: ``(window, steps, rounding)``, the slice of
    each dimension that the resampling reads, its passes in order, each
    ``(axis, indices, weights)`` with tables of (output pixels, taps) whose indices
    count from the window's start, and how integer outputs round: ``(mode, axis,
    first, count)``, with mode ROUND_EVEN (to nearest even), ROUND_COLUMNS (along
    ``axis``, the innermost: output pixels ``first`` on, in whole groups of the
    vector lanes out of ``count``, to nearest even, the others half away from
    zero) or ROUND_ROWS (the elements of each run of those after ``axis`` that a
    whole number of vector lanes leaves over half away from zero, the others to
    nearest even). ``steps`` is empty when no axis changes (the window is only
    converted); the result is None when the image has no pixels along a resized
    axis (its output is zeros). ``job`` is ``resample``'s arguments between the
    image and the output type.

    Neighbouring dimensions that are not resized are planned as one, so any number
    of them is taken."""
    axes, sizes, lo, hi, filters, antialias = job[:6]
    nn_columns = job[6] if len(job) > 6 else None
    cdef Py_ssize_t ndim = len(shape), d, k, taps, rows, at
    cdef bint resized, previous_resized = True
    cdef _Plan plan
    cdef _Tables tables
    cdef const _Pass* step
    if not axes:
        return (slice(None),) * ndim, [], (_ROUND_EVEN, 0, 0, 0)
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
        if nn_columns is not None:
            nn_columns = dimension_of[nn_columns] if nn_columns in resized_dims else -1
        planned_job = (planned_axes, sizes, lo, hi, filters, antialias, nn_columns)
        _make_plan(&plan, tuple(planned), planned_job, &tables, False)
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
        rounding = (plan.round_mode, axes[planned_axes.index(plan.round_axis)], plan.round_first,
                    plan.round_count)
        return tuple(window), steps, rounding
    finally:
        _free_tables(&tables)
