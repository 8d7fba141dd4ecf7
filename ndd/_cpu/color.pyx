# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Colour kernels without the GIL: a 3x3 colour matrix plus offset (hue, saturation,
hsv, color_twist), grey, histogram equalization, CLAHE's tiles and 8-bit Lab, and
the RGBX copy that jpeg_compression_distortion hands to Pillow.

They work on contiguous arrays so that one pass reads each pixel once; the
operators (``ndd/_ops/color.py``) keep numpy paths for the other layouts and types.
The per-pixel loops that dominate their operators (grey, Lab, RGBX) are C with an
AVX2 path, chosen at run time, that gives the scalar path's bits.
"""

from libc.stdint cimport uint8_t
from libc.string cimport memset

import numpy as np

# float constants: a bare 1.0 or 0.5 is a double in C and would widen the arithmetic.
cdef float ONE = 1.0
# 1.5 * 2**23: see _round_even.
cdef float ROUNDER = 12582912.0

ctypedef unsigned char uchar

ctypedef fused pixel_t:
    uchar
    float


cdef inline float _round_even(float value) noexcept nogil:
    # Halves to even for |value| < 2**22, as nearbyintf, without its call: adding
    # 1.5 * 2**23 leaves no fraction bits and the float32 addition rounds.
    return (value + ROUNDER) - ROUNDER


def color_matrix(const pixel_t[:, ::1] source, pixel_t[:, ::1] target, const float[::1] coeffs):
    """``target[p, i] = sum_j coeffs[3 i + j] * (source[p, j] - coeffs[12 + j]) + coeffs[9 + i]``
    for every pixel ``p`` of 3 channels (uint8 in and out, rounded and saturated, or float32 in
    and out), summed left to right in float32."""
    cdef Py_ssize_t p, n = source.shape[0]
    if source.shape[1] != 3 or target.shape[0] != n or target.shape[1] != 3 or coeffs.shape[0] != 15:
        raise ValueError("color_matrix: expected (n, 3) pixels in and out and 15 coefficients")
    if n == 0:
        return
    if pixel_t is uchar:
        with nogil:
            ndd_matrix(&source[0, 0], &target[0, 0], n, &coeffs[0])
        return
    cdef float r, g, b
    cdef float m0 = coeffs[0], m1 = coeffs[1], m2 = coeffs[2]
    cdef float m3 = coeffs[3], m4 = coeffs[4], m5 = coeffs[5]
    cdef float m6 = coeffs[6], m7 = coeffs[7], m8 = coeffs[8]
    cdef float o0 = coeffs[9], o1 = coeffs[10], o2 = coeffs[11]
    cdef float i0 = coeffs[12], i1 = coeffs[13], i2 = coeffs[14]
    with nogil:
        for p in range(n):
            r = source[p, 0] - i0
            g = source[p, 1] - i1
            b = source[p, 2] - i2
            target[p, 0] = m0 * r + m1 * g + m2 * b + o0
            target[p, 1] = m3 * r + m4 * g + m5 * b + o1
            target[p, 2] = m6 * r + m7 * g + m8 * b + o2


def equalize_frames(const unsigned char[:, :, ::1] source, unsigned char[:, :, ::1] target):
    """Histogram-equalize each channel of each frame of ``(frames, pixels, channels)`` uint8 data
    into ``target``, as OpenCV's equalizeHist (float32 scale, halves to even)."""
    cdef Py_ssize_t frames = source.shape[0], pixels = source.shape[1], channels = source.shape[2]
    cdef Py_ssize_t f, p, c, v, count = pixels * channels
    # Every channel's histogram and table at once: one pass over the pixels for each.
    cdef long long[:, ::1] hist = np.zeros((max(2 * channels, 4), 256), np.int64)
    cdef unsigned char[:, ::1] luts = np.empty((max(channels, 1), 256), np.uint8)
    cdef long long *counts
    cdef unsigned char *lut
    cdef const unsigned char *src
    cdef unsigned char *dst
    cdef long long total, first_count, running
    cdef float scale, level
    if count == 0:
        return
    with nogil:
        for f in range(frames):
            src = &source[f, 0, 0]
            dst = &target[f, 0, 0]
            memset(&hist[0, 0], 0, hist.shape[0] * 256 * sizeof(long long))
            if channels == 3:
                # Two banks, even and odd pixels: neighbours often repeat a value, and
                # increments of one counter would wait on each other.
                p = 0
                while p + 6 <= count:
                    hist[0, src[p]] += 1
                    hist[1, src[p + 1]] += 1
                    hist[2, src[p + 2]] += 1
                    hist[3, src[p + 3]] += 1
                    hist[4, src[p + 4]] += 1
                    hist[5, src[p + 5]] += 1
                    p += 6
                if p < count:
                    hist[0, src[p]] += 1
                    hist[1, src[p + 1]] += 1
                    hist[2, src[p + 2]] += 1
                for v in range(256):
                    hist[0, v] += hist[3, v]
                    hist[1, v] += hist[4, v]
                    hist[2, v] += hist[5, v]
            elif channels == 1:
                # Planes (one channel): four banks, for the same reason.
                p = 0
                while p + 4 <= count:
                    hist[0, src[p]] += 1
                    hist[1, src[p + 1]] += 1
                    hist[2, src[p + 2]] += 1
                    hist[3, src[p + 3]] += 1
                    p += 4
                while p < count:
                    hist[0, src[p]] += 1
                    p += 1
                for v in range(256):
                    hist[0, v] += (hist[1, v] + hist[2, v]) + hist[3, v]
            else:
                for p in range(pixels):
                    for c in range(channels):
                        hist[c, src[p * channels + c]] += 1
            for c in range(channels):
                counts = &hist[c, 0]
                lut = &luts[c, 0]
                v = 0
                while v < 255 and counts[v] == 0:
                    v += 1
                first_count = counts[v]
                total = pixels
                if total == first_count:
                    # One value only: the plane stays as it is.
                    for v in range(256):
                        lut[v] = <unsigned char>v
                else:
                    scale = 255.0 / <float>(total - first_count)
                    running = 0
                    for v in range(256):
                        running += counts[v]
                        if running <= first_count:
                            lut[v] = 0
                        else:
                            level = _round_even(<float>(running - first_count) * scale)
                            lut[v] = <unsigned char>(level if level < 255 else 255)
            if channels == 3:
                for p in range(0, count, 3):
                    dst[p] = luts[0, src[p]]
                    dst[p + 1] = luts[1, src[p + 1]]
                    dst[p + 2] = luts[2, src[p + 2]]
            elif channels == 1:
                lut = &luts[0, 0]
                for p in range(count):
                    dst[p] = lut[src[p]]
            else:
                for p in range(pixels):
                    for c in range(channels):
                        dst[p * channels + c] = luts[c, src[p * channels + c]]


cdef extern from *:
    """
    /* The grey of color_space_conversion: round(w0 r + w1 g + w2 b + offset) in float32,
     * summed left to right, halves up and saturated. v + 0.5 is clamped before it is
     * truncated, which is floor(v + 0.5) wherever that lies in [0, 255] (and 0 for NaN),
     * so the AVX2 path needs no floor instruction and gives the scalar path's bits. AVX2
     * only, not FMA: a fused multiply-add would round differently. */
    #include <stddef.h>
    #include <stdint.h>

    static inline uint8_t ndd_gray_round(float v)
    {
        v += 0.5f;
        v = v > 0.0f ? v : 0.0f;
        v = v < 255.0f ? v : 255.0f;
        return (uint8_t)(int)v;
    }

    static void ndd_gray_base(const uint8_t *src, uint8_t *dst, ptrdiff_t n,
                              float w0, float w1, float w2, float offset)
    {
        for (ptrdiff_t p = 0; p < n; p++)
            dst[p] = ndd_gray_round(w0 * src[3 * p] + w1 * src[3 * p + 1] + w2 * src[3 * p + 2] + offset);
    }

    /* out[i] = round(k[3i] r + k[3i+1] g + k[3i+2] b + k[9+i]) of 3-channel uint8 pixels
     * less the input offsets k[12..14] (r = R - k[12], ...), summed left to right in
     * float32, rounded as ndd_gray_round (hue, saturation, hsv, color_twist and the YCbCr
     * conversions). */
    static void ndd_matrix_base(const uint8_t *src, uint8_t *dst, ptrdiff_t n, const float *k)
    {
        for (ptrdiff_t p = 0; p < n; p++) {
            const float r = src[3 * p] - k[12], g = src[3 * p + 1] - k[13], b = src[3 * p + 2] - k[14];
            for (int c = 0; c < 3; c++)
                dst[3 * p + c] =
                    ndd_gray_round(k[3 * c] * r + k[3 * c + 1] * g + k[3 * c + 2] * b + k[9 + c]);
        }
    }

    #include "cpu_features.h"

    #if NDD_X86_SIMD
    #include <immintrin.h>

    /* 8 RGB pixels (24 bytes; 28 are read) as three float vectors: 4 pixels in each 128-bit
     * lane (12 of the 16 bytes loaded there), each shuffle putting one channel's bytes in
     * the low byte of 32-bit lanes. */
    __attribute__((target("avx2"))) static inline void ndd_load8_rgb(const uint8_t *src, __m256 *r, __m256 *g,
                                                                    __m256 *b)
    {
        const __m256i red = _mm256_setr_epi8(0, -1, -1, -1, 3, -1, -1, -1, 6, -1, -1, -1, 9, -1, -1, -1,
                                             0, -1, -1, -1, 3, -1, -1, -1, 6, -1, -1, -1, 9, -1, -1, -1);
        const __m256i green = _mm256_setr_epi8(1, -1, -1, -1, 4, -1, -1, -1, 7, -1, -1, -1, 10, -1, -1, -1,
                                               1, -1, -1, -1, 4, -1, -1, -1, 7, -1, -1, -1, 10, -1, -1, -1);
        const __m256i blue = _mm256_setr_epi8(2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1,
                                              2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1);
        __m256i bytes = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)src)),
                                                _mm_loadu_si128((const __m128i *)(src + 12)), 1);
        *r = _mm256_cvtepi32_ps(_mm256_shuffle_epi8(bytes, red));
        *g = _mm256_cvtepi32_ps(_mm256_shuffle_epi8(bytes, green));
        *b = _mm256_cvtepi32_ps(_mm256_shuffle_epi8(bytes, blue));
    }

    /* Eight values rounded as ndd_gray_round (v + 0.5 clamped to [0, 255], truncated) into
     * 8 bytes at dst. max returns its second operand for NaN: 0, as the scalar path. */
    __attribute__((target("avx2"))) static inline void ndd_store8_u8(uint8_t *dst, __m256 v)
    {
        v = _mm256_add_ps(v, _mm256_set1_ps(0.5f));
        v = _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
        __m256i ints = _mm256_cvttps_epi32(v);
        __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(ints), _mm256_extracti128_si256(ints, 1));
        _mm_storel_epi64((__m128i *)dst, _mm_packus_epi16(words, words));
    }

    __attribute__((target("avx2"))) static void ndd_gray_avx2(
        const uint8_t *src, uint8_t *dst, ptrdiff_t n, float w0, float w1, float w2, float offset)
    {
        const __m256 m0 = _mm256_set1_ps(w0), m1 = _mm256_set1_ps(w1), m2 = _mm256_set1_ps(w2);
        const __m256 add = _mm256_set1_ps(offset);
        ptrdiff_t p = 0;
        for (; 3 * p + 28 <= 3 * n; p += 8) {
            __m256 r, g, b;
            ndd_load8_rgb(src + 3 * p, &r, &g, &b);
            __m256 v = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(m0, r), _mm256_mul_ps(m1, g)),
                                     _mm256_mul_ps(m2, b));
            ndd_store8_u8(dst + p, _mm256_add_ps(v, add));
        }
        ndd_gray_base(src + 3 * p, dst + p, n - p, w0, w1, w2, offset);
    }

    /* The colour matrix on uint8 pixels (see ndd_matrix_base), 8 pixels a step. */
    __attribute__((target("avx2"))) static void ndd_matrix_avx2(const uint8_t *src, uint8_t *dst, ptrdiff_t n,
                                                                const float *k)
    {
        __m256 m[15];
        for (int i = 0; i < 15; i++) m[i] = _mm256_set1_ps(k[i]);
        uint8_t planes[3][8];
        ptrdiff_t p = 0;
        for (; 3 * p + 28 <= 3 * n; p += 8) {
            __m256 r, g, b;
            ndd_load8_rgb(src + 3 * p, &r, &g, &b);
            r = _mm256_sub_ps(r, m[12]);
            g = _mm256_sub_ps(g, m[13]);
            b = _mm256_sub_ps(b, m[14]);
            for (int c = 0; c < 3; c++) {
                __m256 v = _mm256_add_ps(_mm256_mul_ps(m[3 * c], r), _mm256_mul_ps(m[3 * c + 1], g));
                v = _mm256_add_ps(v, _mm256_mul_ps(m[3 * c + 2], b));
                ndd_store8_u8(planes[c], _mm256_add_ps(v, m[9 + c]));
            }
            for (int q = 0; q < 8; q++) {
                dst[3 * (p + q)] = planes[0][q];
                dst[3 * (p + q) + 1] = planes[1][q];
                dst[3 * (p + q) + 2] = planes[2][q];
            }
        }
        /* GCC leaves out the vzeroupper before this tail call: without it the
         * processor runs the SSE code that follows (here and after return) slowly. */
        _mm256_zeroupper();
        ndd_matrix_base(src + 3 * p, dst + 3 * p, n - p, k);
    }

    static void ndd_matrix(const uint8_t *src, uint8_t *dst, ptrdiff_t n, const float *k)
    {
        if (ndd_has_avx2())
            ndd_matrix_avx2(src, dst, n, k);
        else
            ndd_matrix_base(src, dst, n, k);
    }

    static void ndd_gray(const uint8_t *src, uint8_t *dst, ptrdiff_t n,
                         float w0, float w1, float w2, float offset)
    {
        if (ndd_has_avx2())
            ndd_gray_avx2(src, dst, n, w0, w1, w2, offset);
        else
            ndd_gray_base(src, dst, n, w0, w1, w2, offset);
    }

    #else

    static int ndd_color_has_avx2(void) { return 0; }

    static void ndd_matrix(const uint8_t *src, uint8_t *dst, ptrdiff_t n, const float *k)
    {
        ndd_matrix_base(src, dst, n, k);
    }

    static void ndd_gray(const uint8_t *src, uint8_t *dst, ptrdiff_t n,
                         float w0, float w1, float w2, float offset)
    {
        ndd_gray_base(src, dst, n, w0, w1, w2, offset);
    }

    #endif
    """
    void ndd_gray(
        const unsigned char *src, unsigned char *dst, Py_ssize_t n, float w0, float w1, float w2, float offset
    ) nogil
    void ndd_matrix(const unsigned char *src, unsigned char *dst, Py_ssize_t n, const float *k) nogil


def weighted_channels(
    const unsigned char[:, ::1] source, unsigned char[:, ::1] target, const float[::1] weights, float offset
):
    """``target[p, 0] = round(sum_j weights[j] * source[p, j] + offset)`` (halves up, saturated) for
    uint8 pixels of 3 channels: the grey of color_space_conversion."""
    cdef Py_ssize_t n = source.shape[0]
    if source.shape[1] != 3 or target.shape[0] != n or target.shape[1] != 1:
        raise ValueError(
            f"weighted_channels: expected (n, 3) and (n, 1) arrays, got ({n}, {source.shape[1]}) and "
            f"({target.shape[0]}, {target.shape[1]})"
        )
    if n == 0:
        return
    with nogil:
        ndd_gray(&source[0, 0], &target[0, 0], n, weights[0], weights[1], weights[2], offset)


def tile_histograms(
    const unsigned char[:, ::1] image,
    long long[:, :, ::1] hist,
    const long long[::1] rows,
    const long long[::1] cols,
):
    """Add the 256-bin histogram of every tile to ``hist``, ``(tiles_y, tiles_x, 256)``, of the
    image padded to ``(len(rows), len(cols))``, whole multiples of the tile size: padded pixel
    ``(y, x)`` is ``image[rows[y], cols[x]]``."""
    cdef Py_ssize_t tiles_y = hist.shape[0], tiles_x = hist.shape[1]
    cdef Py_ssize_t tile_h = rows.shape[0] // tiles_y, tile_w = cols.shape[0] // tiles_x
    cdef Py_ssize_t width = image.shape[1], y, tx, x, x0
    cdef const unsigned char *row
    cdef long long *bins
    if rows.shape[0] == 0 or cols.shape[0] == 0:
        return
    with nogil:
        for y in range(tiles_y * tile_h):
            row = &image[rows[y], 0]
            for tx in range(tiles_x):
                bins = &hist[y // tile_h, tx, 0]
                x0 = tx * tile_w
                if x0 + tile_w <= width:
                    # Inside the image: the column map is the identity there.
                    for x in range(x0, x0 + tile_w):
                        bins[row[x]] += 1
                else:
                    for x in range(x0, x0 + tile_w):
                        bins[row[cols[x]]] += 1


def clip_tile_tables(const long long[:, ::1] hist, float[:, ::1] tables, long long limit, float scale):
    """Lookup tables of CLAHE's tiles from their 256-bin histograms ``(tiles, 256)``: each
    histogram clipped at ``limit`` (none when 0) with the excess spread evenly and the remainder
    on every (256 // remainder)-th bin, then ``round(cumulative count * scale)`` in float32
    (halves to even), saturated to [0, 255]."""
    cdef Py_ssize_t tiles = hist.shape[0], t, v
    cdef long long counts[256]
    cdef long long excess, spread, residual, step, running
    cdef float value
    if hist.shape[1] != 256 or tables.shape[0] != tiles or tables.shape[1] != 256:
        raise ValueError("clip_tile_tables: expected (tiles, 256) histograms and tables")
    with nogil:
        for t in range(tiles):
            for v in range(256):
                counts[v] = hist[t, v]
            if limit > 0:
                excess = 0
                for v in range(256):
                    if counts[v] > limit:
                        excess += counts[v] - limit
                        counts[v] = limit
                spread = excess // 256
                residual = excess % 256
                for v in range(256):
                    counts[v] += spread
                if residual > 0:
                    # One more on bins 0, step, 2 step, ... (residual of them, all below 256).
                    step = 256 // residual
                    for v in range(residual):
                        counts[v * step] += 1
            running = 0
            for v in range(256):
                running += counts[v]
                value = _round_even(<float>running * scale)
                tables[t, v] = 0 if value < 0 else (255 if value > 255 else value)


def blend_tile_tables(
    const unsigned char[:, ::1] image,
    unsigned char[:, ::1] target,
    const float[:, :, ::1] tables,
    const long long[::1] rows_above,
    const long long[::1] rows_below,
    const float[::1] row_weights,
    const long long[::1] cols_left,
    const long long[::1] cols_right,
    const float[::1] col_weights,
):
    """CLAHE's last step: each pixel blends the tables of its four nearest tile centres,
    ``(top-left * (1 - wx) + top-right * wx) * (1 - wy) + (...) * wy`` in float32, rounded
    to the nearest integer, halves to even."""
    cdef Py_ssize_t y, x, height = image.shape[0], width = image.shape[1]
    cdef Py_ssize_t left, right
    cdef const unsigned char *pixels
    cdef unsigned char *out
    cdef const float *top_row
    cdef const float *bottom_row
    cdef unsigned char v
    cdef float wx, wy, top, bottom, value
    if height == 0 or width == 0:
        return
    with nogil:
        for y in range(height):
            top_row = &tables[rows_above[y], 0, 0]
            bottom_row = &tables[rows_below[y], 0, 0]
            wy = row_weights[y]
            pixels = &image[y, 0]
            out = &target[y, 0]
            for x in range(width):
                left = cols_left[x] * 256
                right = cols_right[x] * 256
                wx = col_weights[x]
                v = pixels[x]
                top = top_row[left + v] * (ONE - wx) + top_row[right + v] * wx
                bottom = bottom_row[left + v] * (ONE - wx) + bottom_row[right + v] * wx
                value = _round_even(top * (ONE - wy) + bottom * wy)
                out[x] = <unsigned char>(0 if value < 0 else (255 if value > 255 else value))


cdef extern from *:
    """
    /* 8-bit RGB <-> 8-bit Lab in OpenCV's fixed point (the tables and constants are
     * described in rgb_to_lab8 and lab8_to_rgb below). int32 throughout: the module is
     * built with -fwrapv, so C's int arithmetic and AVX2's 32-bit lanes wrap alike. The
     * AVX2 paths take 8 pixels a step with gathers from the same tables; saturating
     * packs (int32 -> int16 -> uint8) are the clamp to [0, 255]. */

    static inline uint8_t ndd_lab_clamp_u8(int v) { return (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v)); }
    static inline int ndd_lab_clamp_code(int v) { return v < 0 ? 0 : (v > 4095 ? 4095 : v); }

    static void ndd_rgb_to_lab8_base(const uint8_t *src, uint8_t *l_out, uint8_t *ab_out, ptrdiff_t n,
                                     const int *linear, const int *c, const int *f)
    {
        for (ptrdiff_t p = 0; p < n; p++) {
            int r = linear[src[3 * p]], g = linear[src[3 * p + 1]], b = linear[src[3 * p + 2]];
            int fx = f[(r * c[0] + g * c[1] + b * c[2] + (1 << 11)) >> 12];
            int fy = f[(r * c[3] + g * c[4] + b * c[5] + (1 << 11)) >> 12];
            int fz = f[(r * c[6] + g * c[7] + b * c[8] + (1 << 11)) >> 12];
            l_out[p] = ndd_lab_clamp_u8((296 * fy - 1336935 + (1 << 14)) >> 15);
            ab_out[2 * p] = ndd_lab_clamp_u8((500 * (fx - fy) + (128 << 15) + (1 << 14)) >> 15);
            ab_out[2 * p + 1] = ndd_lab_clamp_u8((200 * (fy - fz) + (128 << 15) + (1 << 14)) >> 15);
        }
    }

    static void ndd_lab8_to_rgb_base(const uint8_t *l_in, const uint8_t *ab_in, uint8_t *out, ptrdiff_t n,
                                     const int *lightness, const int *xz, const int *m, const int *srgb)
    {
        for (ptrdiff_t p = 0; p < n; p++) {
            int y = lightness[2 * l_in[p]], fy = lightness[2 * l_in[p] + 1];
            /* a * 2**14 / 500 and b * 2**14 / 200 as OpenCV approximates them
             * (the rounding of the last bit decides some results). */
            int a_term = ((5 * ab_in[2 * p] * 53687 + (1 << 7)) >> 13) - 4194;
            int b_term = ((ab_in[2 * p + 1] * 41943 + (1 << 4)) >> 9) - 10484;
            int x = xz[fy + a_term], z = xz[fy - b_term];
            for (int k = 0; k < 3; k++)
                out[3 * p + k] = (uint8_t)srgb[ndd_lab_clamp_code(
                    (m[3 * k] * x + m[3 * k + 1] * y + m[3 * k + 2] * z + (1 << 13)) >> 14)];
        }
    }

    #if NDD_X86_SIMD
    __attribute__((target("avx2"))) static inline __m256i ndd_lab_dot(
        __m256i x, __m256i y, __m256i z, const int *m, int round, int shift)
    {
        __m256i v = _mm256_add_epi32(_mm256_mullo_epi32(x, _mm256_set1_epi32(m[0])),
                                     _mm256_mullo_epi32(y, _mm256_set1_epi32(m[1])));
        v = _mm256_add_epi32(v, _mm256_mullo_epi32(z, _mm256_set1_epi32(m[2])));
        return _mm256_srai_epi32(_mm256_add_epi32(v, _mm256_set1_epi32(round)), shift);
    }

    __attribute__((target("avx2"))) static inline __m128i ndd_lab_words(__m256i v)
    {
        return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    }

    __attribute__((target("avx2"))) static void ndd_rgb_to_lab8_avx2(
        const uint8_t *src, uint8_t *l_out, uint8_t *ab_out, ptrdiff_t n,
        const int *linear, const int *c, const int *f)
    {
        /* Channel bytes to 32-bit lanes, 4 pixels in each 128-bit lane (as ndd_gray_avx2). */
        const __m256i red = _mm256_setr_epi8(0, -1, -1, -1, 3, -1, -1, -1, 6, -1, -1, -1, 9, -1, -1, -1,
                                             0, -1, -1, -1, 3, -1, -1, -1, 6, -1, -1, -1, 9, -1, -1, -1);
        const __m256i green = _mm256_setr_epi8(1, -1, -1, -1, 4, -1, -1, -1, 7, -1, -1, -1, 10, -1, -1, -1,
                                               1, -1, -1, -1, 4, -1, -1, -1, 7, -1, -1, -1, 10, -1, -1, -1);
        const __m256i blue = _mm256_setr_epi8(2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1,
                                              2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1);
        const __m256i l_bias = _mm256_set1_epi32(-1336935 + (1 << 14));
        const __m256i ab_bias = _mm256_set1_epi32((128 << 15) + (1 << 14));
        ptrdiff_t p = 0;
        for (; 3 * p + 28 <= 3 * n; p += 8) {
            __m256i bytes = _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(src + 3 * p))),
                _mm_loadu_si128((const __m128i *)(src + 3 * p + 12)), 1);
            __m256i r = _mm256_i32gather_epi32(linear, _mm256_shuffle_epi8(bytes, red), 4);
            __m256i g = _mm256_i32gather_epi32(linear, _mm256_shuffle_epi8(bytes, green), 4);
            __m256i b = _mm256_i32gather_epi32(linear, _mm256_shuffle_epi8(bytes, blue), 4);
            __m256i fx = _mm256_i32gather_epi32(f, ndd_lab_dot(r, g, b, c, 1 << 11, 12), 4);
            __m256i fy = _mm256_i32gather_epi32(f, ndd_lab_dot(r, g, b, c + 3, 1 << 11, 12), 4);
            __m256i fz = _mm256_i32gather_epi32(f, ndd_lab_dot(r, g, b, c + 6, 1 << 11, 12), 4);
            __m256i l = _mm256_srai_epi32(
                _mm256_add_epi32(_mm256_mullo_epi32(fy, _mm256_set1_epi32(296)), l_bias), 15);
            __m256i a = _mm256_mullo_epi32(_mm256_sub_epi32(fx, fy), _mm256_set1_epi32(500));
            a = _mm256_srai_epi32(_mm256_add_epi32(a, ab_bias), 15);
            __m256i bb = _mm256_mullo_epi32(_mm256_sub_epi32(fy, fz), _mm256_set1_epi32(200));
            bb = _mm256_srai_epi32(_mm256_add_epi32(bb, ab_bias), 15);
            __m128i l_words = ndd_lab_words(l);
            _mm_storel_epi64((__m128i *)(l_out + p), _mm_packus_epi16(l_words, l_words));
            __m128i a_words = ndd_lab_words(a), b_words = ndd_lab_words(bb);
            _mm_storeu_si128((__m128i *)(ab_out + 2 * p),
                             _mm_packus_epi16(_mm_unpacklo_epi16(a_words, b_words),
                                              _mm_unpackhi_epi16(a_words, b_words)));
        }
        /* GCC leaves out the vzeroupper before this tail call: without it the
         * processor runs the SSE code that follows (here and after return) slowly. */
        _mm256_zeroupper();
        ndd_rgb_to_lab8_base(src + 3 * p, l_out + p, ab_out + 2 * p, n - p, linear, c, f);
    }

    __attribute__((target("avx2"))) static void ndd_lab8_to_rgb_avx2(
        const uint8_t *l_in, const uint8_t *ab_in, uint8_t *out, ptrdiff_t n,
        const int *lightness, const int *xz, const int *m, const int *srgb)
    {
        /* a to the low 8 bytes and b to the high 8 of 8 interleaved (a, b) pairs. */
        const __m128i split = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
        /* Each 128-bit lane holds 4 pixels as R | G << 8 | B << 16: their 12 bytes first. */
        const __m256i compact = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                                 0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
        const __m256i low = _mm256_setzero_si256(), high = _mm256_set1_epi32(4095);
        ptrdiff_t p = 0;
        /* The second 16-byte store ends 4 bytes into the next step's pixels (rewritten
         * there): stop before it passes the end. */
        for (; 3 * p + 28 <= 3 * n; p += 8) {
            __m128i levels = _mm_loadl_epi64((const __m128i *)(l_in + p));
            __m256i level2 = _mm256_slli_epi32(_mm256_cvtepu8_epi32(levels), 1);
            __m256i y = _mm256_i32gather_epi32(lightness, level2, 4);
            __m256i fy = _mm256_i32gather_epi32(lightness + 1, level2, 4);
            __m128i ab = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(ab_in + 2 * p)), split);
            __m256i a = _mm256_cvtepu8_epi32(ab), b = _mm256_cvtepu8_epi32(_mm_srli_si128(ab, 8));
            __m256i a_term = _mm256_sub_epi32(
                _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(a, _mm256_set1_epi32(5 * 53687)),
                                                   _mm256_set1_epi32(1 << 7)), 13),
                _mm256_set1_epi32(4194));
            __m256i b_term = _mm256_sub_epi32(
                _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(b, _mm256_set1_epi32(41943)),
                                                   _mm256_set1_epi32(1 << 4)), 9),
                _mm256_set1_epi32(10484));
            __m256i x = _mm256_i32gather_epi32(xz, _mm256_add_epi32(fy, a_term), 4);
            __m256i z = _mm256_i32gather_epi32(xz, _mm256_sub_epi32(fy, b_term), 4);
            __m256i rgb = _mm256_setzero_si256();
            for (int k = 0; k < 3; k++) {
                __m256i code = ndd_lab_dot(x, y, z, m + 3 * k, 1 << 13, 14);
                code = _mm256_min_epi32(_mm256_max_epi32(code, low), high);
                rgb = _mm256_or_si256(rgb, _mm256_slli_epi32(_mm256_i32gather_epi32(srgb, code, 4), 8 * k));
            }
            rgb = _mm256_shuffle_epi8(rgb, compact);
            _mm_storeu_si128((__m128i *)(out + 3 * p), _mm256_castsi256_si128(rgb));
            _mm_storeu_si128((__m128i *)(out + 3 * p + 12), _mm256_extracti128_si256(rgb, 1));
        }
        /* GCC leaves out the vzeroupper before this tail call: without it the
         * processor runs the SSE code that follows (here and after return) slowly. */
        _mm256_zeroupper();
        ndd_lab8_to_rgb_base(l_in + p, ab_in + 2 * p, out + 3 * p, n - p, lightness, xz, m, srgb);
    }

    static void ndd_rgb_to_lab8(const uint8_t *src, uint8_t *l_out, uint8_t *ab_out, ptrdiff_t n,
                                const int *linear, const int *c, const int *f)
    {
        if (ndd_has_avx2())
            ndd_rgb_to_lab8_avx2(src, l_out, ab_out, n, linear, c, f);
        else
            ndd_rgb_to_lab8_base(src, l_out, ab_out, n, linear, c, f);
    }

    static void ndd_lab8_to_rgb(const uint8_t *l_in, const uint8_t *ab_in, uint8_t *out, ptrdiff_t n,
                                const int *lightness, const int *xz, const int *m, const int *srgb)
    {
        if (ndd_has_avx2())
            ndd_lab8_to_rgb_avx2(l_in, ab_in, out, n, lightness, xz, m, srgb);
        else
            ndd_lab8_to_rgb_base(l_in, ab_in, out, n, lightness, xz, m, srgb);
    }

    #else

    #define ndd_rgb_to_lab8 ndd_rgb_to_lab8_base
    #define ndd_lab8_to_rgb ndd_lab8_to_rgb_base

    #endif
    """
    void ndd_rgb_to_lab8(
        const unsigned char *src, unsigned char *l_out, unsigned char *ab_out, Py_ssize_t n,
        const int *linear, const int *c, const int *f
    ) nogil
    void ndd_lab8_to_rgb(
        const unsigned char *l_in, const unsigned char *ab_in, unsigned char *out, Py_ssize_t n,
        const int *lightness, const int *xz, const int *m, const int *srgb
    ) nogil


def rgb_to_lab8(
    const unsigned char[:, ::1] source,
    unsigned char[::1] lightness,
    unsigned char[:, ::1] chroma,
    const int[::1] linear_table,
    const int[::1] xyz_coeffs,
    const int[::1] f_table,
):
    """8-bit RGB to 8-bit Lab in OpenCV's fixed point, L into ``lightness`` ``(pixels,)`` and
    (a, b) into ``chroma`` ``(pixels, 2)``: ``linear_table`` (256) gives linear values in 1/8
    units, ``xyz_coeffs`` (9) XYZ / white with 12 fractional bits, ``f_table`` f(t) with 15
    (indexed by XYZ)."""
    cdef Py_ssize_t n = source.shape[0]
    if source.shape[1] != 3 or lightness.shape[0] != n or chroma.shape[0] != n or chroma.shape[1] != 2:
        raise ValueError("rgb_to_lab8: expected (n, 3) RGB, (n,) lightness and (n, 2) chroma arrays")
    if linear_table.shape[0] != 256 or xyz_coeffs.shape[0] != 9:
        raise ValueError("rgb_to_lab8: expected a linear table of 256 and 9 coefficients")
    if n == 0:
        return
    with nogil:
        ndd_rgb_to_lab8(
            &source[0, 0], &lightness[0], &chroma[0, 0], n, &linear_table[0], &xyz_coeffs[0], &f_table[0]
        )


def lab8_to_rgb(
    const unsigned char[::1] lightness,
    const unsigned char[:, ::1] chroma,
    unsigned char[:, ::1] target,
    const int[:, ::1] lightness_table,
    const int[::1] xz_table,
    int xz_offset,
    const int[::1] xyz_to_rgb,
    const int[::1] srgb_table,
):
    """8-bit Lab (L * 255 / 100 in ``lightness`` ``(pixels,)``, a + 128 and b + 128 in ``chroma``
    ``(pixels, 2)``) back to 8-bit sRGB in OpenCV's fixed point, with 14 fractional bits:
    ``lightness_table`` (256, 2) gives Y and f(Y) of each L, ``xz_table[f + xz_offset]``
    inverts Lab's f (X / white from f(X), Z / white from f(Z)), ``xyz_to_rgb`` (9) maps
    XYZ / white to linear RGB with 12 fractional bits and ``srgb_table`` (4096, int32 for
    the vector gathers) encodes linear values in 1/4096 units."""
    cdef Py_ssize_t n = lightness.shape[0]
    if chroma.shape[0] != n or chroma.shape[1] != 2 or target.shape[0] != n or target.shape[1] != 3:
        raise ValueError("lab8_to_rgb: expected (n,) lightness, (n, 2) chroma and (n, 3) RGB arrays")
    if (
        lightness_table.shape[0] != 256 or lightness_table.shape[1] != 2
        or xyz_to_rgb.shape[0] != 9 or srgb_table.shape[0] != 4096
    ):
        raise ValueError("lab8_to_rgb: expected tables of (256, 2), 9 and 4096 entries")
    if n == 0:
        return
    with nogil:
        ndd_lab8_to_rgb(
            &lightness[0], &chroma[0, 0], &target[0, 0], n, &lightness_table[0, 0], &xz_table[xz_offset],
            &xyz_to_rgb[0], &srgb_table[0]
        )


cdef extern from *:
    """
    /* RGB to RGBX (X = 255), the layout of Pillow's RGB images, so that Pillow can take the
     * pixels without unpacking them. */
    static void ndd_rgbx_base(const uint8_t *src, uint8_t *dst, ptrdiff_t n)
    {
        for (ptrdiff_t p = 0; p < n; p++) {
            dst[4 * p] = src[3 * p];
            dst[4 * p + 1] = src[3 * p + 1];
            dst[4 * p + 2] = src[3 * p + 2];
            dst[4 * p + 3] = 255;
        }
    }

    #if NDD_X86_SIMD
    __attribute__((target("avx2"))) static void ndd_rgbx_avx2(const uint8_t *src, uint8_t *dst, ptrdiff_t n)
    {
        const __m256i spread = _mm256_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1,
                                                0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
        const __m256i opaque = _mm256_set1_epi32((int)0xff000000u);
        ptrdiff_t p = 0;
        for (; 3 * p + 28 <= 3 * n; p += 8) {
            __m256i bytes = _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(src + 3 * p))),
                _mm_loadu_si128((const __m128i *)(src + 3 * p + 12)), 1);
            _mm256_storeu_si256((__m256i *)(dst + 4 * p),
                                _mm256_or_si256(_mm256_shuffle_epi8(bytes, spread), opaque));
        }
        ndd_rgbx_base(src + 3 * p, dst + 4 * p, n - p);
    }

    static void ndd_rgbx(const uint8_t *src, uint8_t *dst, ptrdiff_t n)
    {
        if (ndd_has_avx2())
            ndd_rgbx_avx2(src, dst, n);
        else
            ndd_rgbx_base(src, dst, n);
    }

    #else

    #define ndd_rgbx ndd_rgbx_base

    #endif
    """
    void ndd_rgbx(const unsigned char *src, unsigned char *dst, Py_ssize_t n) nogil


def rgb_to_rgbx(const unsigned char[:, ::1] source, unsigned char[:, ::1] target):
    """``target[p] = (*source[p], 255)`` for uint8 ``(pixels, 3)`` source and ``(pixels, 4)`` target."""
    cdef Py_ssize_t n = source.shape[0]
    if source.shape[1] != 3 or target.shape[0] != n or target.shape[1] != 4:
        raise ValueError("rgb_to_rgbx: expected (n, 3) and (n, 4) arrays")
    if n == 0:
        return
    with nogil:
        ndd_rgbx(&source[0, 0], &target[0, 0], n)


cdef extern from *:
    """
    /* A 256-entry byte table applied to bytes. With AVX-512 VBMI the table sits in four
     * registers: two two-register permutes look up 64 bytes by their low 7 bits, and the
     * top bit picks which. */
    static void ndd_lookup_bytes_base(const uint8_t *src, uint8_t *dst, ptrdiff_t n, const uint8_t *table)
    {
        for (ptrdiff_t i = 0; i < n; i++)
            dst[i] = table[src[i]];
    }

    #if NDD_X86_SIMD

    __attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void ndd_lookup_bytes_vbmi(
        const uint8_t *src, uint8_t *dst, ptrdiff_t n, const uint8_t *table)
    {
        const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
        const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
        ptrdiff_t i = 0;
        for (; i + 64 <= n; i += 64) {
            __m512i index = _mm512_loadu_si512(src + i);
            __m512i low = _mm512_permutex2var_epi8(t0, index, t1);
            __m512i high = _mm512_permutex2var_epi8(t2, index, t3);
            _mm512_storeu_si512(dst + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low, high));
        }
        ndd_lookup_bytes_base(src + i, dst + i, n - i, table);
    }

    static void ndd_lookup_bytes(const uint8_t *src, uint8_t *dst, ptrdiff_t n, const uint8_t *table)
    {
        if (ndd_has_avx512_vbmi())
            ndd_lookup_bytes_vbmi(src, dst, n, table);
        else
            ndd_lookup_bytes_base(src, dst, n, table);
    }

    #else

    #define ndd_lookup_bytes ndd_lookup_bytes_base

    #endif
    """
    void ndd_lookup_bytes(
        const unsigned char *src, unsigned char *dst, Py_ssize_t n, const unsigned char *table
    ) nogil


ctypedef fused table_t:
    uint8_t
    short
    int
    float


def lookup_u8(const unsigned char[::1] source, table_t[::1] target, const table_t[::1] table):
    """``target[i] = table[source[i]]`` for uint8 ``source`` and a 256-entry ``table``."""
    cdef Py_ssize_t i, n = source.shape[0]
    if table.shape[0] != 256 or target.shape[0] != n:
        raise ValueError("lookup_u8: expected a table of 256 entries and a target as long as the source")
    if n == 0:
        return
    with nogil:
        if table_t is uint8_t:
            ndd_lookup_bytes(&source[0], &target[0], n, &table[0])
        else:
            for i in range(n):
                target[i] = table[source[i]]
