# cython: language_level=3, boundscheck=False, wraparound=False
"""Moments of whole samples for ``ndd.normalize``, without the GIL: the sum, the sum of
squared deviations from a mean, and the normalising pass itself.

The sums are float64 over float32 terms, as numpy's on float32 data, but in one fixed
order (element ``i`` into partial sum ``i % 8``, the eight combined pairwise) that the
AVX2 path of uint8 data follows too, so every machine gives the same bits.
"""

from libc.math cimport NAN, sqrt

import numpy as np

ctypedef unsigned char uchar

cdef extern from *:
    """
    #include <stddef.h>
    #include <stdint.h>

    /* Sums of squared deviations: (v - mean)^2 in float32, added in float64 into eight
     * partial sums, element i into sum i % 8 (the tail into sum 0), combined pairwise.
     * The AVX2 path keeps the eight sums in two vectors of four: the same additions in
     * the same order, so the same bits. */
    static double ndd_sqdev_combine(const double *s)
    {
        return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    }

    static double ndd_sqdev_u8_base(const uint8_t *src, ptrdiff_t n, float mean)
    {
        double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        ptrdiff_t i = 0;
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) {
                const float d = (float)src[i + k] - mean;
                s[k] += (double)(d * d);
            }
        for (; i < n; i++) {
            const float d = (float)src[i] - mean;
            s[0] += (double)(d * d);
        }
        return ndd_sqdev_combine(s);
    }

    #include "cpu_features.h"

    #if NDD_X86_SIMD
    #include <immintrin.h>

    __attribute__((target("avx2")))
    static double ndd_sqdev_u8_avx2(const uint8_t *src, ptrdiff_t n, float mean)
    {
        const __m256 m = _mm256_set1_ps(mean);
        __m256d low = _mm256_setzero_pd(), high = _mm256_setzero_pd();
        ptrdiff_t i = 0;
        for (; i + 8 <= n; i += 8) {
            const __m128i bytes = _mm_loadl_epi64((const __m128i *)(src + i));
            const __m256 d = _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes)), m);
            const __m256 sq = _mm256_mul_ps(d, d);
            low = _mm256_add_pd(low, _mm256_cvtps_pd(_mm256_castps256_ps128(sq)));
            high = _mm256_add_pd(high, _mm256_cvtps_pd(_mm256_extractf128_ps(sq, 1)));
        }
        double s[8];
        _mm256_storeu_pd(s, low);
        _mm256_storeu_pd(s + 4, high);
        for (; i < n; i++) {
            const float d = (float)src[i] - mean;
            s[0] += (double)(d * d);
        }
        return ndd_sqdev_combine(s);
    }

    static double ndd_sqdev_u8(const uint8_t *src, ptrdiff_t n, float mean)
    {
        return ndd_has_avx2() ? ndd_sqdev_u8_avx2(src, n, mean) : ndd_sqdev_u8_base(src, n, mean);
    }
    #else
    static double ndd_sqdev_u8(const uint8_t *src, ptrdiff_t n, float mean)
    {
        return ndd_sqdev_u8_base(src, n, mean);
    }
    #endif

    static uint64_t ndd_sum_u8(const uint8_t *src, ptrdiff_t n)
    {
        uint64_t total = 0;
        for (ptrdiff_t i = 0; i < n; i++) total += src[i];
        return total;
    }
    """
    double ndd_sqdev_u8(const unsigned char *src, Py_ssize_t n, float mean) nogil
    unsigned long long ndd_sum_u8(const unsigned char *src, Py_ssize_t n) nogil


ctypedef fused moment_t:
    unsigned char
    float


cdef double _float_sums(const float *values, Py_ssize_t n, float mean, bint square) noexcept nogil:
    """The float64 sum of ``v - mean`` (or of its float32 square) over float32 ``values``:
    element ``i`` added into partial sum ``i % 8`` (the tail into sum 0), the eight
    combined pairwise, as ndd_sqdev_combine."""
    cdef double s[8]
    cdef Py_ssize_t i = 0, k
    cdef float d
    for k in range(8):
        s[k] = 0
    while i + 8 <= n:
        for k in range(8):
            d = values[i + k] - mean
            s[k] += <double> (d * d if square else d)
        i += 8
    while i < n:
        d = values[i] - mean
        s[0] += <double> (d * d if square else d)
        i += 1
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))


def sample_sum(const moment_t[::1] values):
    """The sum of ``values`` in float64: exact for uint8; for float32, element ``i`` added
    into partial sum ``i % 8``, the eight combined pairwise."""
    cdef Py_ssize_t n = values.shape[0]
    cdef double total
    if n == 0:
        return 0.0
    with nogil:
        if moment_t is uchar:
            total = <double> ndd_sum_u8(&values[0], n)
        else:
            total = _float_sums(&values[0], n, 0.0, False)
    return total


def squared_deviations(const moment_t[::1] values, float mean):
    """The float64 sum of ``(float32(v) - mean) ** 2``, each square computed in float32 (as
    numpy squares float32 deviations): element ``i`` added into partial sum ``i % 8`` (the
    tail into sum 0), the eight combined pairwise."""
    cdef Py_ssize_t n = values.shape[0]
    cdef double total
    if n == 0:
        return 0.0
    with nogil:
        if moment_t is uchar:
            total = ndd_sqdev_u8(&values[0], n, mean)
        else:
            total = _float_sums(&values[0], n, mean, True)
    return total


def normalize_values(const moment_t[::1] values, float[::1] out, float mean, float factor, float shift):
    """``out[i] = (float32(values[i]) - mean) * factor + shift`` in float32, operation by operation."""
    cdef Py_ssize_t i, n = values.shape[0]
    cdef float d
    if out.shape[0] != n:
        raise ValueError("normalize_values: the output and the values differ in length")
    with nogil:
        for i in range(n):
            d = <float> values[i] - mean
            d = d * factor
            out[i] = d + shift


# Per-channel moments of interleaved data (HWC: the last axis kept). The loops run over a
# period of elements that is a whole number of pixels and of 8 lanes, one partial sum per
# element of the period, so that they vectorise; each channel's partial sums are then added
# in order. uint8 sums are exact; float32 terms are added in float64.

cdef Py_ssize_t _period(Py_ssize_t channels) noexcept nogil:
    cdef Py_ssize_t p = channels
    while p % 8 or p < 32:
        p += channels
    return p


cdef int _check_channels(Py_ssize_t n, Py_ssize_t channels) except -1:
    if channels < 1 or n % channels:
        raise ValueError("the values must be whole pixels of 'channels' elements")
    return 0


def channel_sums(const moment_t[::1] values, Py_ssize_t channels):
    """The float64 sum of each channel of interleaved ``values`` (exact for uint8)."""
    _check_channels(values.shape[0], channels)
    cdef Py_ssize_t n = values.shape[0], period = _period(channels), i = 0, j
    cdef unsigned long long[::1] counts = np.zeros(period, np.uint64)
    cdef double[::1] sums = np.zeros(period, np.float64)
    out = np.zeros(channels, np.float64)
    cdef double[::1] total = out
    with nogil:
        while i + period <= n:
            if moment_t is uchar:
                for j in range(period):
                    counts[j] += values[i + j]
            else:
                for j in range(period):
                    sums[j] += values[i + j]
            i += period
        for j in range(n - i):
            if moment_t is uchar:
                counts[j] += values[i + j]
            else:
                sums[j] += values[i + j]
        for j in range(period):
            total[j % channels] += <double> counts[j] if moment_t is uchar else sums[j]
    return out


ctypedef fused mean_t:
    float
    double


def channel_squared_deviations(const moment_t[::1] values, const mean_t[::1] means):
    """The float64 sum, per channel of interleaved ``values``, of ``(v - mean) ** 2``, each
    deviation and square computed in the means' type: float32 (normalize's arithmetic) or
    float64 (that of ``reductions.std_dev`` and ``variance``)."""
    cdef Py_ssize_t channels = means.shape[0]
    _check_channels(values.shape[0], channels)
    cdef Py_ssize_t n = values.shape[0], period = _period(channels), i = 0, j
    cdef mean_t[::1] tiled = np.tile(np.asarray(means), period // channels)
    cdef double[::1] sums = np.zeros(period, np.float64)
    cdef mean_t d
    out = np.zeros(channels, np.float64)
    cdef double[::1] total = out
    with nogil:
        while i + period <= n:
            for j in range(period):
                d = <mean_t> values[i + j] - tiled[j]
                sums[j] += <double> (d * d)
            i += period
        for j in range(n - i):
            d = <mean_t> values[i + j] - tiled[j]
            sums[j] += <double> (d * d)
        for j in range(period):
            total[j % channels] += sums[j]
    return out


def normalize_channels(const moment_t[::1] values, float[::1] out, const float[::1] means,
                       const float[::1] factors, float shift):
    """``out[i] = (float32(values[i]) - means[c]) * factors[c] + shift`` in float32, operation
    by operation, ``c`` the channel of element ``i`` of interleaved ``values``."""
    cdef Py_ssize_t channels = means.shape[0]
    _check_channels(values.shape[0], channels)
    if out.shape[0] != values.shape[0] or factors.shape[0] != channels:
        raise ValueError("normalize_channels: the output, values, means and factors do not fit")
    cdef Py_ssize_t n = values.shape[0], period = _period(channels), i = 0, j
    cdef float[::1] tiled_means = np.tile(np.asarray(means), period // channels)
    cdef float[::1] tiled_factors = np.tile(np.asarray(factors), period // channels)
    cdef float d
    with nogil:
        while i + period <= n:
            for j in range(period):
                d = <float> values[i + j] - tiled_means[j]
                d = d * tiled_factors[j]
                out[i + j] = d + shift
            i += period
        for j in range(n - i):
            d = <float> values[i + j] - tiled_means[j]
            d = d * tiled_factors[j]
            out[i + j] = d + shift


cdef inline moment_t _extreme_of(moment_t kept, moment_t v, bint largest) noexcept nogil:
    # NaN is skipped (as numpy's fmax/fmin): a NaN kept so far gives way to any value, a NaN
    # value never replaces one.
    if moment_t is float:
        if largest:
            return v if (v > kept or kept != kept) else kept
        return v if (v < kept or kept != kept) else kept
    if largest:
        return v if v > kept else kept
    return v if v < kept else kept


def channel_extremes(const moment_t[::1] values, Py_ssize_t channels, bint largest):
    """The largest (or smallest) element of each channel of interleaved ``values`` (at least
    one pixel); NaN skipped, NaN only for a channel of NaNs."""
    _check_channels(values.shape[0], channels)
    if values.shape[0] == 0:
        raise ValueError("channel_extremes: no values")
    cdef Py_ssize_t n = values.shape[0], period = _period(channels), i, j
    dtype = np.uint8 if moment_t is uchar else np.float32
    # Every partial result starts at the first pixel's value of its channel.
    first = np.asarray(values[:channels])
    cdef moment_t[::1] kept = np.tile(first, period // channels).astype(dtype)
    out = first.astype(dtype)
    cdef moment_t[::1] total = out
    with nogil:
        i = 0
        while i + period <= n:
            for j in range(period):
                kept[j] = _extreme_of(kept[j], values[i + j], largest)
            i += period
        for j in range(n - i):
            kept[j] = _extreme_of(kept[j], values[i + j], largest)
        for j in range(period):
            total[j % channels] = _extreme_of(total[j % channels], kept[j], largest)
    return out


def normalize_per_channel(const moment_t[::1] values, float[::1] out, Py_ssize_t channels, Py_ssize_t ddof,
                          double epsilon, double scale, float shift):
    """normalize of interleaved ``values`` with one mean and deviation per channel into
    float32 ``out``: the float32 mean of each channel's float64 sum, the float64 sum of
    squared float32 deviations over ``count - ddof`` (0 when that is not positive),
    ``1 / sqrt(variance + epsilon)`` (0 where that is 0, NaN where it is negative)
    times ``scale`` rounded to float32, then ``normalize_channels``. The operations of
    ndd.normalize's general path, in one call."""
    _check_channels(values.shape[0], channels)
    if out.shape[0] != values.shape[0]:
        raise ValueError("normalize_per_channel: the output and the values differ in length")
    cdef Py_ssize_t count = values.shape[0] // channels, c, dof = count - ddof
    if count == 0:
        return
    sums = channel_sums(values, channels)
    means = np.empty(channels, np.float32)
    factors = np.empty(channels, np.float32)
    cdef double[::1] total = sums
    cdef float[::1] mean = means
    cdef float[::1] factor = factors
    for c in range(channels):
        mean[c] = <float> (total[c] / count)
    squares = channel_squared_deviations(values, means)
    cdef double[::1] square = squares
    cdef double variance, spread, inverse
    for c in range(channels):
        variance = square[c] / dof if dof > 0 else 0.0
        spread = variance + epsilon
        inverse = 0.0 if spread == 0 else (1.0 / sqrt(spread) if spread > 0 else NAN)
        factor[c] = <float> (inverse * scale)
    normalize_channels(values, out, means, factors, shift)
