# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Geometric warps without the GIL: each output pixel is mapped to a point of the
source image and the source is sampled there.

Coordinates follow the pixel-centre convention: pixel ``(i, j)`` covers the square
``[j, j + 1) x [i, i + 1)``, so its centre is ``(j + 0.5, i + 0.5)`` (x first). An
output pixel is mapped from its centre; nearest-neighbour sampling takes the source
pixel containing the point (or, with ``round_even``, the pixel whose centre is
nearest, ties to even), bilinear sampling blends the four pixels whose centres
surround it. Source pixels outside the image follow a border mode: a constant
fill value (one per channel), the nearest edge pixel, a reflection or wrapping.

Images are ``(rows, columns, channels)`` views with any strides; source and
output have the same element type (the operators convert around the kernels).
3-channel uint8 images with packed pixels go through AVX2 row kernels (bilinear
and nearest-neighbour sampling) that give the same bits as the per-pixel code.
"""

cimport cython
from libc.math cimport floorf, rintf, sqrtf

import numpy as np

cdef extern from *:
    """
    #include <stddef.h>
    #include <stdint.h>
    #include <string.h>

    /* Rows of 3-channel uint8 pixels (packed, channel stride 1) with AVX2, 8 output
     * pixels at a time. Every float operation is the one the scalar kernels perform,
     * in the same order and in float32 (target "avx2" has no FMA, so nothing is
     * contracted), so results are bit-identical to theirs. A row function marks in
     * done[i] the pixels it wrote; the caller samples the others one by one. */
    #include "cpu_features.h"
    #if NDD_X86_SIMD
    #include <immintrin.h>
    #define NDD_AVX2 __attribute__((target("avx2")))
    /* How far (bytes) ahead of a block's taps the source is fetched: 128 measured best. */
    #define NDD_PREFETCH 128
    #define ndd_warp_has_avx2 ndd_has_avx2

    /* Source points of output pixels 0..n-1 of the row whose centre is at y: (x, y, 1)
     * times the 3x3 matrix m, divided by the third coordinate when perspective (x set
     * far away where that is 0). */
    NDD_AVX2 static void ndd_project_row(const float *m, int perspective, float y, ptrdiff_t n,
                                         float *sx, float *sy)
    {
        const float my0 = m[1] * y, my1 = m[4] * y, my2 = m[7] * y;
        const __m256 m0 = _mm256_set1_ps(m[0]), m2 = _mm256_set1_ps(m[2]), m3 = _mm256_set1_ps(m[3]);
        const __m256 m5 = _mm256_set1_ps(m[5]), m6 = _mm256_set1_ps(m[6]), m8 = _mm256_set1_ps(m[8]);
        const __m256 y0 = _mm256_set1_ps(my0), y1 = _mm256_set1_ps(my1), y2 = _mm256_set1_ps(my2);
        const __m256 centres = _mm256_setr_ps(0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f);
        const __m256 zero = _mm256_setzero_ps(), far = _mm256_set1_ps(1e7f);
        ptrdiff_t i = 0;
        for (; i + 8 <= n; i += 8) {
            __m256 x = _mm256_add_ps(_mm256_set1_ps((float)i), centres);
            __m256 px = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(m0, x), y0), m2);
            __m256 py = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(m3, x), y1), m5);
            if (perspective) {
                __m256 w = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(m6, x), y2), m8);
                __m256 at_infinity = _mm256_cmp_ps(w, zero, _CMP_EQ_OQ);
                px = _mm256_blendv_ps(_mm256_div_ps(px, w), far, at_infinity);
                py = _mm256_blendv_ps(_mm256_div_ps(py, w), py, at_infinity);
            }
            _mm256_storeu_ps(sx + i, px);
            _mm256_storeu_ps(sy + i, py);
        }
        for (; i < n; i++) {
            float x = (float)i + 0.5f;
            float px = m[0] * x + my0 + m[2], py = m[3] * x + my1 + m[5];
            if (perspective) {
                float w = m[6] * x + my2 + m[8];
                if (w == 0) {
                    px = 1e7f;
                } else {
                    px = px / w;
                    py = py / w;
                }
            }
            sx[i] = px;
            sy[i] = py;
        }
    }

    /* The sphere distortion's source points for one row (centre offset dy from mid_y). */
    NDD_AVX2 static void ndd_sphere_row(float *map_x, float *map_y, ptrdiff_t n, float mid_x, float mid_y,
                                        float dy, float radius)
    {
        const __m256 centres = _mm256_setr_ps(0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f);
        const __m256 mx = _mm256_set1_ps(mid_x), my = _mm256_set1_ps(mid_y), r = _mm256_set1_ps(radius);
        const __m256 dyv = _mm256_set1_ps(dy), dy2 = _mm256_set1_ps(dy * dy);
        ptrdiff_t j = 0;
        for (; j + 8 <= n; j += 8) {
            __m256 dx = _mm256_sub_ps(_mm256_add_ps(_mm256_set1_ps((float)j), centres), mx);
            __m256 scale = _mm256_div_ps(_mm256_sqrt_ps(_mm256_add_ps(_mm256_mul_ps(dx, dx), dy2)), r);
            _mm256_storeu_ps(map_x + j, _mm256_add_ps(mx, _mm256_mul_ps(scale, dx)));
            _mm256_storeu_ps(map_y + j, _mm256_add_ps(my, _mm256_mul_ps(scale, dyv)));
        }
        for (; j < n; j++) {
            float dx = ((float)j + 0.5f) - mid_x;
            float scale = __builtin_sqrtf(dx * dx + dy * dy) / radius;
            map_x[j] = mid_x + scale * dx;
            map_y[j] = mid_y + scale * dy;
        }
    }

    /* Write the 8 pixels (0x00BBGGRR words) whose bits are set in lanes. */
    NDD_AVX2 static inline void ndd_store_rgb8(__m256i words, unsigned lanes, uint8_t *out)
    {
        const __m256i pack = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                              0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
        __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(words, pack),
                                                    _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7));
        if (lanes == 0xff) {
            _mm_storeu_si128((__m128i *)out, _mm256_castsi256_si128(bytes));
            _mm_storel_epi64((__m128i *)(out + 16), _mm256_extracti128_si256(bytes, 1));
        } else {
            uint8_t packed[32];
            _mm256_storeu_si256((__m256i *)packed, bytes);
            for (int i = 0; i < 8; i++)
                if (lanes >> i & 1)
                    memcpy(out + 3 * i, packed + 3 * i, 3);
        }
    }

    /* done[j] = bit j of lanes, for j < 8. */
    NDD_AVX2 static inline void ndd_mark_done(unsigned lanes, uint8_t *done)
    {
        __m128i bits = _mm_and_si128(_mm_set1_epi8((char)lanes), _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128,
                                                                               0, 0, 0, 0, 0, 0, 0, 0));
        _mm_storel_epi64((__m128i *)done, _mm_min_epu8(bits, _mm_set1_epi8(1)));
    }

    /* Float values to bytes as _saturate does (values known not NaN): saturated, then rounded
     * to even with the 1.5 * 2**23 shift, or halves up. */
    NDD_AVX2 static inline __m256i ndd_round_u8(__m256 v, int round_even)
    {
        v = _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
        if (round_even) {
            const __m256 shift = _mm256_set1_ps(12582912.0f);
            return _mm256_cvttps_epi32(_mm256_sub_ps(_mm256_add_ps(v, shift), shift));
        }
        /* Halves up through double, as the scalar (long)(value + 0.5): in float, 0.49999997 + 0.5
         * would round to 1. */
        const __m256d dhalf = _mm256_set1_pd(0.5);
        __m256d low = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), dhalf);
        __m256d high = _mm256_add_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), dhalf);
        return _mm256_setr_m128i(_mm256_cvttpd_epi32(low), _mm256_cvttpd_epi32(high));
    }

    NDD_AVX2 static inline __m256 ndd_channel(__m256i words, int k)
    {
        return _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(words, 8 * k), _mm256_set1_epi32(0xff)));
    }

    /* Bilinear sampling of the points (sx, sy) (pixel-centre convention) for the pixels whose
     * four taps are inside the source (rows x columns, row stride rs bytes), as _interior_blend;
     * with has_fill, the points (not far) whose four taps are all outside take the fill pixel. */
    NDD_AVX2 static inline __attribute__((always_inline)) ptrdiff_t ndd_linear_row(
        const uint8_t *src, ptrdiff_t rs, ptrdiff_t rows, ptrdiff_t columns, const float *sx, const float *sy,
        ptrdiff_t n, uint8_t *out, const int round_even, int has_fill, uint32_t fill, uint8_t *done)
    {
        const __m256 half = _mm256_set1_ps(0.5f), zero = _mm256_setzero_ps(), minus1 = _mm256_set1_ps(-1.0f);
        const __m256 one = _mm256_set1_ps(1.0f);
        const __m256 far = _mm256_set1_ps(1e7f), near = _mm256_set1_ps(-1e7f);
        const __m256 last_x = _mm256_set1_ps((float)(columns - 1));
        const __m256 last_y = _mm256_set1_ps((float)(rows - 1));
        const __m256 cols = _mm256_set1_ps((float)columns), rws = _mm256_set1_ps((float)rows);
        const __m256i fills = _mm256_set1_epi32((int)fill);
        const __m256i rsv = _mm256_set1_epi32((int)rs), three = _mm256_set1_epi32(3);
        const int *p00 = (const int *)src, *p01 = (const int *)(src + 2);
        const int *p10 = (const int *)(src + rs), *p11 = (const int *)(src + rs + 2);
        ptrdiff_t i = 0;
        ptrdiff_t written = 0;
        memset(done, 0, n);
        for (; i + 8 <= n; i += 8) {
            __m256 x = _mm256_loadu_ps(sx + i), y = _mm256_loadu_ps(sy + i);
            __m256 px = _mm256_sub_ps(x, half), py = _mm256_sub_ps(y, half);
            __m256 inside = _mm256_and_ps(
                _mm256_and_ps(_mm256_cmp_ps(px, zero, _CMP_GE_OQ), _mm256_cmp_ps(py, zero, _CMP_GE_OQ)),
                _mm256_and_ps(_mm256_cmp_ps(px, last_x, _CMP_LT_OQ), _mm256_cmp_ps(py, last_y, _CMP_LT_OQ)));
            unsigned lanes = (unsigned)_mm256_movemask_ps(inside);
            __m256 filled = _mm256_setzero_ps();
            if (has_fill && lanes != 0xff) {
                /* floor(px) + 1 < 0 or floor(px) >= columns (or the same in y): no tap inside. */
                __m256 near_enough = _mm256_and_ps(
                    _mm256_and_ps(_mm256_cmp_ps(x, near, _CMP_GT_OQ), _mm256_cmp_ps(x, far, _CMP_LT_OQ)),
                    _mm256_and_ps(_mm256_cmp_ps(y, near, _CMP_GT_OQ), _mm256_cmp_ps(y, far, _CMP_LT_OQ)));
                __m256 outside = _mm256_or_ps(
                    _mm256_or_ps(_mm256_cmp_ps(px, minus1, _CMP_LT_OQ), _mm256_cmp_ps(px, cols, _CMP_GE_OQ)),
                    _mm256_or_ps(_mm256_cmp_ps(py, minus1, _CMP_LT_OQ), _mm256_cmp_ps(py, rws, _CMP_GE_OQ)));
                filled = _mm256_and_ps(outside, near_enough);
            }
            unsigned filled_lanes = (unsigned)_mm256_movemask_ps(filled);
            if (!lanes) {
                if (filled_lanes) {
                    ndd_store_rgb8(fills, filled_lanes, out + 3 * i);
                    ndd_mark_done(filled_lanes, done + i);
                    written += __builtin_popcount(filled_lanes);
                }
                continue;
            }
            px = _mm256_and_ps(px, inside);
            py = _mm256_and_ps(py, inside);
            __m256i x0 = _mm256_cvttps_epi32(px), y0 = _mm256_cvttps_epi32(py);
            __m256 fx = _mm256_sub_ps(px, _mm256_cvtepi32_ps(x0));
            __m256 fy = _mm256_sub_ps(py, _mm256_cvtepi32_ps(y0));
            __m256i at = _mm256_add_epi32(_mm256_mullo_epi32(y0, rsv), _mm256_mullo_epi32(x0, three));
            __m256i mask = _mm256_castps_si256(inside), none = _mm256_setzero_si256();
            /* The taps run along two source rows, and the next output rows read the ones below:
             * fetch ahead on four (the hardware prefetchers miss the gathers' streams). */
            const char *ahead = (const char *)src + _mm256_cvtsi256_si32(at) + NDD_PREFETCH;
            _mm_prefetch(ahead, _MM_HINT_T0);
            _mm_prefetch(ahead + rs, _MM_HINT_T0);
            _mm_prefetch(ahead + 2 * rs, _MM_HINT_T0);
            _mm_prefetch(ahead + 3 * rs, _MM_HINT_T0);
            /* Words at p and p + 2 bytes: R G B of the left tap, and (shifted) of the right one. */
            __m256i a = _mm256_mask_i32gather_epi32(none, p00, at, mask, 1);
            __m256i b = _mm256_srli_epi32(_mm256_mask_i32gather_epi32(none, p01, at, mask, 1), 8);
            __m256i c = _mm256_mask_i32gather_epi32(none, p10, at, mask, 1);
            __m256i d = _mm256_srli_epi32(_mm256_mask_i32gather_epi32(none, p11, at, mask, 1), 8);
            __m256i words = _mm256_setzero_si256();
            for (int k = 0; k < 3; k++) {
                __m256 v00 = ndd_channel(a, k), v01 = ndd_channel(b, k);
                __m256 v10 = ndd_channel(c, k), v11 = ndd_channel(d, k);
                __m256 gx = _mm256_sub_ps(one, fx);
                __m256 top = _mm256_add_ps(_mm256_mul_ps(v00, gx), _mm256_mul_ps(v01, fx));
                __m256 bottom = _mm256_add_ps(_mm256_mul_ps(v10, gx), _mm256_mul_ps(v11, fx));
                __m256 v = _mm256_add_ps(top, _mm256_mul_ps(_mm256_sub_ps(bottom, top), fy));
                words = _mm256_or_si256(words, _mm256_slli_epi32(ndd_round_u8(v, round_even), 8 * k));
            }
            words = _mm256_blendv_epi8(words, fills, _mm256_castps_si256(filled));
            lanes |= filled_lanes;
            ndd_store_rgb8(words, lanes, out + 3 * i);
            ndd_mark_done(lanes, done + i);
            written += __builtin_popcount(lanes);
        }
        return n - written;
    }

    NDD_AVX2 static ptrdiff_t ndd_linear_row_rgb8(const uint8_t *src, ptrdiff_t rs, ptrdiff_t rows,
                                                  ptrdiff_t columns, const float *sx, const float *sy,
                                                  ptrdiff_t n, uint8_t *out, int round_even, int has_fill,
                                                  uint32_t fill, uint8_t *done)
    {
        /* Each rounding compiled into its own loop. */
        if (round_even)
            return ndd_linear_row(src, rs, rows, columns, sx, sy, n, out, 1, has_fill, fill, done);
        return ndd_linear_row(src, rs, rows, columns, sx, sy, n, out, 0, has_fill, fill, done);
    }

    /* Nearest-neighbour sampling as _sample: the source pixel containing (sx, sy), or with
     * round_even the one whose centre is nearest; points outside (or far, or NaN) take the
     * fill pixel (0x00BBGGRR) when there is one (constant border), else are left undone. */
    NDD_AVX2 static ptrdiff_t ndd_nearest_row_rgb8(const uint8_t *src, ptrdiff_t rs, ptrdiff_t rows,
                                                   ptrdiff_t columns, const float *sx, const float *sy,
                                                   ptrdiff_t n, uint8_t *out, int round_even, int has_fill,
                                                   uint32_t fill, uint8_t *done)
    {
        const __m256 half = _mm256_set1_ps(0.5f), far = _mm256_set1_ps(1e7f), near = _mm256_set1_ps(-1e7f);
        const __m256 shift = _mm256_set1_ps(12582912.0f);
        const __m256i rsv = _mm256_set1_epi32((int)rs), three = _mm256_set1_epi32(3);
        const __m256i cols = _mm256_set1_epi32((int)columns), rws = _mm256_set1_epi32((int)rows);
        const __m256i minus1 = _mm256_set1_epi32(-1), fills = _mm256_set1_epi32((int)fill);
        const __m256i last_x = _mm256_set1_epi32((int)(columns - 1));
        const __m256i last_y = _mm256_set1_epi32((int)(rows - 1));
        ptrdiff_t i = 0;
        ptrdiff_t written = 0;
        memset(done, 0, n);
        for (; i + 8 <= n; i += 8) {
            __m256 x = _mm256_loadu_ps(sx + i), y = _mm256_loadu_ps(sy + i);
            __m256 near_enough = _mm256_and_ps(
                _mm256_and_ps(_mm256_cmp_ps(x, near, _CMP_GT_OQ), _mm256_cmp_ps(x, far, _CMP_LT_OQ)),
                _mm256_and_ps(_mm256_cmp_ps(y, near, _CMP_GT_OQ), _mm256_cmp_ps(y, far, _CMP_LT_OQ)));
            if (round_even) {
                x = _mm256_sub_ps(_mm256_add_ps(_mm256_sub_ps(x, half), shift), shift);
                y = _mm256_sub_ps(_mm256_add_ps(_mm256_sub_ps(y, half), shift), shift);
            } else {
                x = _mm256_floor_ps(x);
                y = _mm256_floor_ps(y);
            }
            __m256i x0 = _mm256_cvttps_epi32(x), y0 = _mm256_cvttps_epi32(y);
            /* 0 <= x0 < columns and 0 <= y0 < rows, and not the last pixel (its word would
             * read a byte past the source). */
            __m256i inside = _mm256_and_si256(
                _mm256_and_si256(_mm256_cmpgt_epi32(x0, minus1), _mm256_cmpgt_epi32(cols, x0)),
                _mm256_and_si256(_mm256_cmpgt_epi32(y0, minus1), _mm256_cmpgt_epi32(rws, y0)));
            inside = _mm256_and_si256(inside, _mm256_castps_si256(near_enough));
            __m256i last = _mm256_and_si256(_mm256_cmpeq_epi32(x0, last_x), _mm256_cmpeq_epi32(y0, last_y));
            __m256i readable = _mm256_andnot_si256(last, inside);
            __m256i at = _mm256_add_epi32(_mm256_mullo_epi32(y0, rsv), _mm256_mullo_epi32(x0, three));
            at = _mm256_and_si256(at, readable);
            /* As in ndd_linear_row: the gathers' streams need fetching ahead. */
            const char *ahead = (const char *)src + _mm256_cvtsi256_si32(at) + NDD_PREFETCH;
            _mm_prefetch(ahead, _MM_HINT_T0);
            _mm_prefetch(ahead + rs, _MM_HINT_T0);
            _mm_prefetch(ahead + 2 * rs, _MM_HINT_T0);
            _mm_prefetch(ahead + 3 * rs, _MM_HINT_T0);
            __m256i words = _mm256_mask_i32gather_epi32(fills, (const int *)src, at, readable, 1);
            unsigned lanes = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(readable));
            if (has_fill)
                lanes |= ~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(inside)) & 0xff;
            if (!lanes)
                continue;
            ndd_store_rgb8(words, lanes, out + 3 * i);
            ndd_mark_done(lanes, done + i);
            written += __builtin_popcount(lanes);
        }
        return n - written;
    }
    #else
    static int ndd_warp_has_avx2(void) { return 0; }
    #endif

    /* Bilinear blending of the interior points of a row of packed 3-channel float32
     * pixels (pixel stride 3, channel stride 1), one SSE vector per pixel: the points
     * with inside[i] == 1, whose top-left tap is at src + offsets[i]. The float32
     * operations of the scalar blend, in its order (SSE2 has no FMA), so the same bits.
     * The taps right of a pixel are read from one float before them and shifted down,
     * so that no read passes the pixel's last channel. Returns 0 where SSE2 is absent. */
    /* Fetch into the cache the source a little below a tap: where the next output rows
     * will read when the map goes down about one source row per output row (near
     * identities, rotations, moderate scales). A hint: it never faults, and it made a
     * 500x375 float32 perspective warp of an uncached image 1.25 -> 0.77 ms. */
    #define NDD_ROWS_AHEAD 3
    #if defined(__GNUC__)
    static inline void ndd_prefetch_below(const void *tap, ptrdiff_t row_bytes)
    {
        __builtin_prefetch((const char *)tap + NDD_ROWS_AHEAD * row_bytes);
    }
    #else
    static inline void ndd_prefetch_below(const void *tap, ptrdiff_t row_bytes) {}
    #endif

    #if NDD_X86_SIMD
    #include <emmintrin.h>
    static inline __m128 ndd_load_after(const float *p)
    {
        /* p[0..2] in lanes 0..2, read as p[-1..2] */
        return _mm_castsi128_ps(_mm_srli_si128(_mm_castps_si128(_mm_loadu_ps(p - 1)), 4));
    }
    static int ndd_blend_rows_rgbf(const float *src, ptrdiff_t rs, const ptrdiff_t *offsets,
                                   const float *fx, const float *fy, const unsigned char *inside,
                                   ptrdiff_t n, float *out, ptrdiff_t out_cs)
    {
        for (ptrdiff_t i = 0; i < n; i++) {
            if (inside[i] != 1)
                continue;
            const float *p = src + offsets[i];
            const __m128 wx = _mm_set1_ps(fx[i]), gx = _mm_set1_ps(1 - fx[i]), wy = _mm_set1_ps(fy[i]);
            __m128 top = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(p), gx), _mm_mul_ps(ndd_load_after(p + 3), wx));
            __m128 bottom = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(p + rs), gx),
                                       _mm_mul_ps(ndd_load_after(p + rs + 3), wx));
            __m128 value = _mm_add_ps(top, _mm_mul_ps(_mm_sub_ps(bottom, top), wy));
            float *o = out + i * out_cs;
            _mm_storel_pi((__m64 *)o, value);
            _mm_store_ss(o + 2, _mm_movehl_ps(value, value));
        }
        return 1;
    }
    #else
    static int ndd_blend_rows_rgbf(const float *src, ptrdiff_t rs, const ptrdiff_t *offsets,
                                   const float *fx, const float *fy, const unsigned char *inside,
                                   ptrdiff_t n, float *out, ptrdiff_t out_cs)
    {
        return 0;
    }
    #endif
    #if !NDD_X86_SIMD
    static void ndd_project_row(const float *m, int perspective, float y, ptrdiff_t n, float *sx,
                                float *sy) {}
    static void ndd_sphere_row(float *map_x, float *map_y, ptrdiff_t n, float mid_x, float mid_y, float dy,
                               float radius) {}
    static ptrdiff_t ndd_linear_row_rgb8(const uint8_t *src, ptrdiff_t rs, ptrdiff_t rows, ptrdiff_t columns,
                                         const float *sx, const float *sy, ptrdiff_t n, uint8_t *out,
                                         int round_even, int has_fill, uint32_t fill, uint8_t *done)
    {
        return n;
    }
    static ptrdiff_t ndd_nearest_row_rgb8(const uint8_t *src, ptrdiff_t rs, ptrdiff_t rows, ptrdiff_t columns,
                                          const float *sx, const float *sy, ptrdiff_t n, uint8_t *out,
                                          int round_even, int has_fill, uint32_t fill, uint8_t *done)
    {
        return n;
    }
    #endif
    """
    bint ndd_warp_has_avx2() noexcept nogil
    void ndd_project_row(const float *m, bint perspective, float y, Py_ssize_t n, float *sx,
                         float *sy) noexcept nogil
    void ndd_sphere_row(float *map_x, float *map_y, Py_ssize_t n, float mid_x, float mid_y, float dy,
                        float radius) noexcept nogil
    # The row kernels return how many pixels they left to the per-pixel code.
    Py_ssize_t ndd_linear_row_rgb8(const unsigned char *src, Py_ssize_t rs, Py_ssize_t rows,
                                   Py_ssize_t columns, const float *sx, const float *sy, Py_ssize_t n,
                                   unsigned char *out, bint round_even, bint has_fill, unsigned int fill,
                                   unsigned char *done) noexcept nogil
    Py_ssize_t ndd_nearest_row_rgb8(const unsigned char *src, Py_ssize_t rs, Py_ssize_t rows,
                                    Py_ssize_t columns, const float *sx, const float *sy, Py_ssize_t n,
                                    unsigned char *out, bint round_even, bint has_fill, unsigned int fill,
                                    unsigned char *done) noexcept nogil
    void ndd_prefetch_below(const void *tap, Py_ssize_t row_bytes) noexcept nogil
    bint ndd_blend_rows_rgbf(const float *src, Py_ssize_t rs, const Py_ssize_t *offsets, const float *fx,
                             const float *fy, const unsigned char *inside, Py_ssize_t n, float *out,
                             Py_ssize_t out_cs) noexcept nogil

# Border modes (the same numbers as BORDER_MODES in ndd/_ops/warp.py).
cdef enum:
    BORDER_CONSTANT = 0
    BORDER_CLAMP = 1
    BORDER_REFLECT = 2
    BORDER_REFLECT_101 = 3
    BORDER_WRAP = 4

ctypedef fused value_t:
    unsigned char
    signed char
    short
    unsigned short
    int
    float
    double

# Points farther than this from the image are outside whatever the border mode,
# which also keeps float-to-int conversions in range.
cdef float _FAR = 1e7


# 1.5 * 2**23: a float this large has no fraction bits.
cdef float _RINT_SHIFT = 12582912.0


cdef inline float _rint(float value) noexcept nogil:
    # Round to nearest, ties to even (the default rounding mode), for |value| < 2**22,
    # without a libm call: the float sum drops the fraction bits.
    cdef float shifted = value + _RINT_SHIFT
    return shifted - _RINT_SHIFT


cdef inline Py_ssize_t _nearest_index(float point, bint round_even) noexcept nogil:
    """The pixel nearest to ``point`` (pixel-centre convention, |point| below _FAR): the one
    holding it, or the nearest centre with ties to even (the reference's warp_perspective)."""
    if round_even:
        return <Py_ssize_t>_rint(point - <float>0.5)
    return <Py_ssize_t>floorf(point)


cdef inline float _round(float value, bint round_even) noexcept nogil:
    if round_even:
        return rintf(value)
    return floorf(value + 0.5) if value >= 0 else -floorf(0.5 - value)


cdef inline long _saturate(float value, long low, long high, bint round_even) noexcept nogil:
    """``value`` rounded (halves away from zero, or to even) and saturated to ``[low, high]``;
    NaN gives 0. Inlined with constant bounds, so the branches on them fold away."""
    if low == 0 and high <= 65535:
        # Unsigned 8- and 16-bit: clamped without branches (NaN to 0), then rounded; the
        # bounds are whole, so rounding keeps within them.
        value = value if value > 0 else 0
        value = value if value < high else high
        return <long>_rint(value) if round_even else <long>(value + <float>0.5)
    if not value > low:
        return low if value < 0 else 0
    if value >= high:
        return high
    if low == 0:
        # Positive and below 2**16: cheaper than libm's rounding.
        return <long>_rint(value) if round_even else <long>(value + 0.5)
    return <long>_round(value, round_even)


cdef inline value_t _convert(float value, value_t *kind, bint round_even) noexcept nogil:
    # Integer outputs are rounded (halves away from zero, or to even) and saturated.
    if value_t is float or value_t is double:
        return <value_t>value
    elif value_t is cython.uchar:
        return <value_t>_saturate(value, 0, 255, round_even)
    elif value_t is cython.ushort:
        return <value_t>_saturate(value, 0, 65535, round_even)
    elif value_t is cython.schar:
        return <value_t>_saturate(value, -128, 127, round_even)
    elif value_t is short:
        return <value_t>_saturate(value, -32768, 32767, round_even)
    else:
        return <value_t>_saturate(value, -2147483648, 2147483647, round_even)


cdef inline Py_ssize_t _border_index(Py_ssize_t i, Py_ssize_t n, int mode) noexcept nogil:
    """The source index read for index ``i`` of an axis of ``n`` pixels; -1 for the fill value."""
    cdef Py_ssize_t period
    if 0 <= i < n:
        return i
    if mode == BORDER_CONSTANT:
        return -1
    if mode == BORDER_CLAMP:
        return 0 if i < 0 else n - 1
    if mode == BORDER_WRAP:
        i = i % n
        return i + n if i < 0 else i
    if mode == BORDER_REFLECT:
        # ... 2 1 0 | 0 1 2 ... n-1 | n-1 n-2 ...
        period = 2 * n
        i = i % period
        if i < 0:
            i += period
        return period - 1 - i if i >= n else i
    # BORDER_REFLECT_101: ... 2 1 | 0 1 2 ... n-1 | n-2 ...
    if n == 1:
        return 0
    period = 2 * n - 2
    i = i % period
    if i < 0:
        i += period
    return period - i if i >= n else i


cdef struct Image:
    # A (rows, columns, channels) view: its first element and strides in elements.
    char *data
    Py_ssize_t rows, columns, channels
    Py_ssize_t row_stride, column_stride, channel_stride


cdef struct Sampling:
    bint linear
    bint cubic  # bicubic (Keys, a = -0.75, as OpenCV); takes precedence over linear
    bint round_even
    int border
    const float *fill  # one value per channel, for BORDER_CONSTANT


cdef inline void _write_pixel(const value_t *pixel, Py_ssize_t ks, value_t *out, Py_ssize_t out_ks,
                              Py_ssize_t channels, const Sampling *how) noexcept nogil:
    """Copy a source pixel, or write the fill values where ``pixel`` is NULL."""
    cdef Py_ssize_t k
    if pixel == NULL:
        for k in range(channels):
            out[k * out_ks] = _convert(how.fill[k], out, how.round_even)
    else:
        for k in range(channels):
            out[k * out_ks] = pixel[k * ks]


cdef inline const value_t *_pixel(const value_t *src, const Image *s, Py_ssize_t y, Py_ssize_t x,
                                  int border) noexcept nogil:
    """The source pixel at ``(y, x)`` after the border rule; NULL for the fill value."""
    x = _border_index(x, s.columns, border)
    y = _border_index(y, s.rows, border)
    if x < 0 or y < 0:
        return NULL
    return src + y * s.row_stride + x * s.column_stride


cdef inline void _cubic_weights(float t, float *w) noexcept nogil:
    # Keys' cubic convolution with a = -0.75 at offsets -1, 0, 1, 2 from the tap left of t.
    cdef float a = -0.75
    cdef float x0 = 1 + t, x1 = t, x2 = 1 - t, x3 = 2 - t
    w[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a
    w[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1
    w[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1
    w[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a


cdef inline void _sample_cubic(const value_t *src, const Image *s, value_t *out, Py_ssize_t out_ks,
                               float px, float py, const Sampling *how) noexcept nogil:
    """Bicubic sampling at pixel-index coordinates ``(px, py)`` (centres at integers)."""
    cdef float fx = floorf(px), fy = floorf(py), acc, row_acc
    cdef Py_ssize_t x0 = <Py_ssize_t>fx - 1, y0 = <Py_ssize_t>fy - 1, i, j, k
    cdef float wx[4]
    cdef float wy[4]
    cdef const value_t *taps[16]
    _cubic_weights(px - fx, wx)
    _cubic_weights(py - fy, wy)
    for i in range(4):
        for j in range(4):
            taps[i * 4 + j] = _pixel(src, s, y0 + i, x0 + j, how.border)
    for k in range(s.channels):
        acc = 0
        for i in range(4):
            row_acc = 0
            for j in range(4):
                row_acc += wx[j] * (taps[i * 4 + j][k * s.channel_stride] if taps[i * 4 + j] != NULL
                                    else how.fill[k])
            acc += wy[i] * row_acc
        out[k * out_ks] = _convert(acc, out, how.round_even)


cdef inline float _blend(float v00, float v01, float v10, float v11, float fx, float fy) noexcept nogil:
    """Bilinear blend of the taps ``v<row><column>`` at fractions ``fx`` (across) and ``fy``
    (down), in the reference's float32 operations: each row weighted by ``1 - fx`` and
    ``fx``, then the rows blended by ``fy``."""
    cdef float gx = 1 - fx
    cdef float top = v00 * gx + v01 * fx
    cdef float bottom = v10 * gx + v11 * fx
    return top + (bottom - top) * fy


cdef inline bint _interior_blend(const value_t *src, const Image *s, value_t *out, Py_ssize_t out_ks,
                                 float sx, float sy, bint round_even) noexcept nogil:
    """Bilinear sampling when all four taps are inside the source (the common case);
    False, writing nothing, otherwise."""
    cdef float px = sx - <float>0.5, py = sy - <float>0.5
    if not (px >= 0 and py >= 0 and px < s.columns - 1 and py < s.rows - 1):
        return False
    cdef Py_ssize_t x0 = <Py_ssize_t>px, y0 = <Py_ssize_t>py, k
    cdef float fx = px - x0, fy = py - y0
    cdef Py_ssize_t cs = s.column_stride, rs = s.row_stride, ks = s.channel_stride
    cdef const value_t *p00 = src + y0 * rs + x0 * cs
    for k in range(s.channels):
        out[k * out_ks] = _convert(_blend(p00[k * ks], p00[cs + k * ks], p00[rs + k * ks],
                                          p00[rs + cs + k * ks], fx, fy), out, round_even)
    return True


cdef inline void _sample(const value_t *src, const Image *s, value_t *out, Py_ssize_t out_ks,
                         float sx, float sy, const Sampling *how) noexcept nogil:
    """Write one output pixel (``out``, channel stride ``out_ks``) from the source
    sampled at point ``(sx, sy)``. Bilinear sampling here reads every tap through the
    border rule; ``_warp_pixel`` tries the faster ``_interior_blend`` first."""
    cdef Py_ssize_t rows = s.rows, columns = s.columns, channels = s.channels
    cdef Py_ssize_t rs = s.row_stride, cs = s.column_stride, ks = s.channel_stride
    cdef Py_ssize_t k, x0, y0
    cdef float fx, fy, px, py
    cdef const value_t *p00
    cdef const value_t *p01
    cdef const value_t *p10
    cdef const value_t *p11
    if not (sx > -_FAR and sx < _FAR and sy > -_FAR and sy < _FAR):
        # Far away (or not a number): the fill, or the nearest corner for the other modes.
        if how.border == BORDER_CONSTANT:
            _write_pixel(<const value_t *>NULL, ks, out, out_ks, channels, how)
        else:
            x0 = 0 if not sx > 0 else columns - 1
            y0 = 0 if not sy > 0 else rows - 1
            _write_pixel(src + y0 * rs + x0 * cs, ks, out, out_ks, channels, how)
        return
    if how.cubic:
        _sample_cubic(src, s, out, out_ks, sx - 0.5, sy - 0.5, how)
        return
    if not how.linear:
        x0 = _nearest_index(sx, how.round_even)
        y0 = _nearest_index(sy, how.round_even)
        _write_pixel(_pixel(src, s, y0, x0, how.border), ks, out, out_ks, channels, how)
        return
    px = sx - 0.5
    py = sy - 0.5
    fx = floorf(px)
    fy = floorf(py)
    x0 = <Py_ssize_t>fx
    y0 = <Py_ssize_t>fy
    fx = px - fx
    fy = py - fy
    p00 = _pixel(src, s, y0, x0, how.border)
    p01 = _pixel(src, s, y0, x0 + 1, how.border)
    p10 = _pixel(src, s, y0 + 1, x0, how.border)
    p11 = _pixel(src, s, y0 + 1, x0 + 1, how.border)
    for k in range(channels):
        out[k * out_ks] = _convert(_blend(p00[k * ks] if p00 != NULL else how.fill[k],
                                          p01[k * ks] if p01 != NULL else how.fill[k],
                                          p10[k * ks] if p10 != NULL else how.fill[k],
                                          p11[k * ks] if p11 != NULL else how.fill[k], fx, fy),
                                   out, how.round_even)


cdef object _row_taps(Py_ssize_t columns, RowTaps *taps):
    """Point ``taps`` into new scratch arrays for rows of ``columns`` pixels; returns
    what owns them (keep it while ``taps`` is used)."""
    offsets = np.empty(max(columns, 1), np.intp)
    fractions = np.empty((2, max(columns, 1)), np.float32)
    inside = np.empty(max(columns, 1), np.uint8)
    cdef Py_ssize_t[::1] offsets_view = offsets
    cdef float[:, ::1] fractions_view = fractions
    cdef unsigned char[::1] inside_view = inside
    taps.offsets = &offsets_view[0]
    taps.fx = &fractions_view[0, 0]
    taps.fy = &fractions_view[1, 0]
    taps.inside = &inside_view[0]
    return offsets, fractions, inside


cdef Image _image(const value_t[:, :, :] view):
    cdef Image im
    im.data = <char *>&view[0, 0, 0] if view.shape[0] and view.shape[1] and view.shape[2] else NULL
    im.rows = view.shape[0]
    im.columns = view.shape[1]
    im.channels = view.shape[2]
    im.row_stride = view.strides[0] // sizeof(value_t)
    im.column_stride = view.strides[1] // sizeof(value_t)
    im.channel_stride = view.strides[2] // sizeof(value_t)
    return im


cdef Sampling _sampling(Py_ssize_t src_channels, Py_ssize_t dst_channels, bint src_empty,
                        const float[::1] fill, int interp, int border, bint round_even, str name) except *:
    cdef Sampling how
    if src_channels != dst_channels:
        raise ValueError(f"{name}: the source and output differ in channels")
    if not BORDER_CONSTANT <= border <= BORDER_WRAP:
        raise ValueError(f"{name}: unknown border mode {border}")
    if fill.shape[0] < dst_channels:
        raise ValueError(f"{name}: 'fill' needs one value per channel")
    if src_empty:
        # No pixels to repeat or reflect: everything is outside.
        border = BORDER_CONSTANT
    if not 0 <= interp <= 2:
        raise ValueError(f"{name}: unknown interpolation {interp}")
    how.linear = interp == 1
    how.cubic = interp == 2
    how.round_even = round_even
    how.border = border
    how.fill = &fill[0] if fill.shape[0] else NULL
    return how


cdef inline void _warp_pixel(const value_t *src, const Image *s, value_t *out, Py_ssize_t out_ks,
                             float sx, float sy, const Sampling *how, bint fast_linear) noexcept nogil:
    """``_sample``; with ``fast_linear`` (bilinear sampling), interior points take the fast path."""
    if fast_linear and _interior_blend(src, s, out, out_ks, sx, sy, how.round_even):
        return
    _sample(src, s, out, out_ks, sx, sy, how)


cdef struct RowTaps:
    # Scratch of _linear_row, one entry per output pixel of a row: the offset of the
    # top-left tap, the fractions, and whether all four taps are inside the source.
    Py_ssize_t *offsets
    float *fx
    float *fy
    unsigned char *inside


cdef inline void _linear_planes(const value_t *src, const Image *s, value_t *row, Py_ssize_t out_cs,
                                Py_ssize_t out_ks, Py_ssize_t n, const Sampling *how,
                                const RowTaps *taps) noexcept nogil:
    """_linear_row's blending, one channel after another (planar channels)."""
    cdef Py_ssize_t i, k, off, cs = s.column_stride, rs = s.row_stride, ks = s.channel_stride
    cdef float fx, fy
    cdef const value_t *plane
    cdef value_t *out
    for k in range(s.channels):
        plane = src + k * ks
        out = row + k * out_ks
        for i in range(n):
            if taps.inside[i] == 1:
                off = taps.offsets[i]
                fx = taps.fx[i]
                fy = taps.fy[i]
                out[i * out_cs] = _convert(_blend(plane[off], plane[off + cs], plane[off + rs],
                                                  plane[off + rs + cs], fx, fy), out, how.round_even)
            elif taps.inside[i] == 2:
                out[i * out_cs] = _convert(how.fill[k], out, how.round_even)


cdef void _linear_row(const value_t *src, const Image *s, value_t *row, Py_ssize_t out_cs, Py_ssize_t out_ks,
                      const float *sx, const float *sy, Py_ssize_t n, const Sampling *how,
                      const RowTaps *taps) noexcept nogil:
    """Bilinear sampling of one output row (pixel stride ``out_cs``, channel stride
    ``out_ks``) at the points ``(sx, sy)``, any type and layout: the taps of the row's
    interior points are found once, then each channel is blended over the row (planar
    channels are rows of their own); the other points go through ``_sample``. The same
    float32 operations as ``_interior_blend``."""
    cdef Py_ssize_t i, k, x0, y0, off
    cdef Py_ssize_t cs = s.column_stride, rs = s.row_stride, ks = s.channel_stride
    cdef float px, py, last_x = s.columns - 1, last_y = s.rows - 1, fx, fy
    cdef float columns = s.columns, rows = s.rows
    cdef value_t *out
    cdef Py_ssize_t outside = 0
    # Points whose four taps are all the fill give the fill (when it is finite: inf - inf
    # would blend to NaN), written without blending.
    cdef bint fill_only = how.border == BORDER_CONSTANT
    for k in range(s.channels):
        fill_only = fill_only and how.fill[k] - how.fill[k] == 0
    for i in range(n):
        px = sx[i] - <float>0.5
        py = sy[i] - <float>0.5
        if px >= 0 and py >= 0 and px < last_x and py < last_y:
            x0 = <Py_ssize_t>px
            y0 = <Py_ssize_t>py
            taps.offsets[i] = y0 * rs + x0 * cs
            ndd_prefetch_below(src + taps.offsets[i], rs * sizeof(value_t))
            taps.fx[i] = px - x0
            taps.fy[i] = py - y0
            taps.inside[i] = 1
        elif fill_only and (px < -1 or py < -1 or px >= columns or py >= rows):
            # floor(px) + 1 < 0 or floor(px) >= columns (or the same down): no tap inside.
            taps.inside[i] = 2
        else:
            taps.inside[i] = 0
            outside += 1
    if ks == 1 and out_ks == 1:
        # Interleaved channels: each pixel's taps read once, channel after channel.
        if (value_t is float and s.channels == 3 and cs == 3
                and ndd_blend_rows_rgbf(<const float *>src, rs, taps.offsets, taps.fx, taps.fy, taps.inside,
                                        n, <float *>row, out_cs)):
            # The interior points of packed RGB float32, vectorised; the fill-only ones here.
            for i in range(n):
                if taps.inside[i] == 2:
                    out = row + i * out_cs
                    for k in range(3):
                        out[k] = _convert(how.fill[k], out, how.round_even)
        else:
            for i in range(n):
                out = row + i * out_cs
                if taps.inside[i] == 1:
                    off = taps.offsets[i]
                    fx = taps.fx[i]
                    fy = taps.fy[i]
                    if s.channels == 3:
                        # Unrolled for RGB.
                        out[0] = _convert(_blend(src[off], src[off + cs], src[off + rs], src[off + rs + cs],
                                                 fx, fy), out, how.round_even)
                        out[1] = _convert(_blend(src[off + 1], src[off + cs + 1], src[off + rs + 1],
                                                 src[off + rs + cs + 1], fx, fy), out, how.round_even)
                        out[2] = _convert(_blend(src[off + 2], src[off + cs + 2], src[off + rs + 2],
                                                 src[off + rs + cs + 2], fx, fy), out, how.round_even)
                        continue
                    for k in range(s.channels):
                        out[k] = _convert(_blend(src[off + k], src[off + cs + k], src[off + rs + k],
                                                 src[off + rs + cs + k], fx, fy), out, how.round_even)
                elif taps.inside[i] == 2:
                    for k in range(s.channels):
                        out[k] = _convert(how.fill[k], out, how.round_even)
    else:
        _linear_planes(src, s, row, out_cs, out_ks, n, how, taps)
    if outside:
        for i in range(n):
            if not taps.inside[i]:
                _sample(src, s, row + i * out_cs, out_ks, sx[i], sy[i], how)


cdef void _nearest_row(const value_t *src, const Image *s, value_t *row, Py_ssize_t out_cs, Py_ssize_t out_ks,
                       const float *sx, const float *sy, Py_ssize_t n, const Sampling *how,
                       const RowTaps *taps) noexcept nogil:
    """Nearest-neighbour sampling of one output row at the points ``(sx, sy)``, any type
    and layout: the source pixel of each point inside is found once, then its channels
    copied (planar channels plane by plane); points outside take the fill with a constant
    border, and go through ``_sample`` otherwise (and when far away or not a number). The
    same picks as ``_sample``."""
    cdef Py_ssize_t i, k, x0, y0, outside = 0
    cdef Py_ssize_t cs = s.column_stride, rs = s.row_stride, ks = s.channel_stride
    cdef bint constant = how.border == BORDER_CONSTANT
    cdef float x, y
    cdef const value_t *plane
    cdef const value_t *pixel
    cdef value_t *out
    for i in range(n):
        x = sx[i]
        y = sy[i]
        if not (x > -_FAR and x < _FAR and y > -_FAR and y < _FAR):
            taps.inside[i] = 0
            outside += 1
            continue
        x0 = _nearest_index(x, how.round_even)
        y0 = _nearest_index(y, how.round_even)
        if 0 <= x0 < s.columns and 0 <= y0 < s.rows:
            taps.offsets[i] = y0 * rs + x0 * cs
            ndd_prefetch_below(src + taps.offsets[i], rs * sizeof(value_t))
            taps.inside[i] = 1
        elif constant:
            taps.inside[i] = 2
        else:
            taps.inside[i] = 0
            outside += 1
    if ks == 1 and out_ks == 1 and s.channels == 3:
        # Interleaved RGB: the three channels of a pixel copied together.
        for i in range(n):
            out = row + i * out_cs
            if taps.inside[i] == 1:
                pixel = src + taps.offsets[i]
                out[0] = pixel[0]
                out[1] = pixel[1]
                out[2] = pixel[2]
            elif taps.inside[i] == 2:
                for k in range(3):
                    out[k] = _convert(how.fill[k], out, how.round_even)
    else:
        for k in range(s.channels):
            plane = src + k * ks
            out = row + k * out_ks
            for i in range(n):
                if taps.inside[i] == 1:
                    out[i * out_cs] = plane[taps.offsets[i]]
                elif taps.inside[i] == 2:
                    out[i * out_cs] = _convert(how.fill[k], out, how.round_even)
    if outside:
        for i in range(n):
            if not taps.inside[i]:
                _sample(src, s, row + i * out_cs, out_ks, sx[i], sy[i], how)


cdef inline bint _packed_rgb8(const Image *s, const Image *d) noexcept nogil:
    """Whether the AVX2 row kernels can serve: 3-channel pixels packed in the rows of both
    images, source rows in increasing addresses and every source offset within int32."""
    return (s.rows > 0 and s.columns > 0 and s.channels == 3 and s.column_stride == 3
            and s.channel_stride == 1 and d.column_stride == 3 and d.channel_stride == 1
            and s.row_stride >= 3 * s.columns and s.rows * s.row_stride <= 2147483647
            and ndd_warp_has_avx2())


cdef inline unsigned int _fill_word(const Sampling *how) noexcept nogil:
    """The fill pixel of a 3-channel uint8 output as a 0x00BBGGRR word."""
    cdef unsigned int word = 0
    cdef int k
    for k in range(3):
        word |= <unsigned int>_convert(how.fill[k], <unsigned char *>NULL, how.round_even) << (8 * k)
    return word


cdef inline Py_ssize_t _rgb8_row(const Image *s, unsigned char *row, Py_ssize_t columns, const float *sx,
                                 const float *sy, const Sampling *how, unsigned char *done) noexcept nogil:
    """One output row of 3-channel uint8 pixels sampled at the points ``(sx, sy)`` by the AVX2
    kernels; ``done`` marks the pixels they wrote; returns how many others need ``_warp_pixel``."""
    cdef const unsigned char *src = <const unsigned char *>s.data
    cdef bint constant = how.border == BORDER_CONSTANT
    cdef bint blends_to_fill
    if how.linear:
        # Four fill taps blend to the fill itself when it is finite (inf - inf would make a NaN).
        blends_to_fill = constant and (how.fill[0] - how.fill[0] == 0 and how.fill[1] - how.fill[1] == 0
                                       and how.fill[2] - how.fill[2] == 0)
        return ndd_linear_row_rgb8(src, s.row_stride, s.rows, s.columns, sx, sy, columns, row,
                                   how.round_even, blends_to_fill, _fill_word(how) if blends_to_fill else 0,
                                   done)
    return ndd_nearest_row_rgb8(src, s.row_stride, s.rows, s.columns, sx, sy, columns, row, how.round_even,
                                constant, _fill_word(how) if constant else 0, done)


# The affine warps step from one output pixel's source point to the next's, as the
# reference does: it adds the matrix's first column pixel by pixel, starting again from
# an exactly computed point every AFFINE_TILE pixels (which bounds the drift).
cdef enum:
    AFFINE_TILE = 256


cdef void _affine_row(const float *m, float y, Py_ssize_t n, float *sx, float *sy) noexcept nogil:
    """The source points of output pixels 0..n-1 of the row whose centre is at ``y``
    under the affine map ``m`` (2x3, row-major), summed in the reference's float32
    order: ``(m0 * 0.5 + m2) + m1 * y`` for the first, then ``+ m0`` per pixel."""
    cdef float tile_x = (m[0] * <float>0.5 + m[2]) + m[1] * y
    cdef float tile_y = (m[3] * <float>0.5 + m[5]) + m[4] * y
    cdef float step_x = <float>AFFINE_TILE * m[0], step_y = <float>AFFINE_TILE * m[3], px, py
    cdef Py_ssize_t start = 0, i, stop
    while start < n:
        px = tile_x
        py = tile_y
        stop = start + AFFINE_TILE if n - start > AFFINE_TILE else n
        for i in range(start, stop):
            sx[i] = px
            sy[i] = py
            px = px + m[0]
            py = py + m[3]
        tile_x = tile_x + step_x
        tile_y = tile_y + step_y
        start = stop


def warp_projective(const value_t[:, :, :] src, value_t[:, :, :] dst, const double[::1] matrix,
                    bint perspective, int interp, int border, const float[::1] fill, bint round_even):
    """Fill ``dst`` by sampling ``src`` at ``matrix`` applied to each output pixel centre.

    ``matrix`` has 9 values (row-major 3x3, mapping ``(x, y, 1)`` of an output
    pixel centre to the source point, divided by the third coordinate when
    ``perspective``), or 6 for an affine map. ``interp`` is 0 (nearest
    neighbour), 1 (bilinear) or 2 (bicubic); ``border`` is one of the border modes
    (0 constant, 1 clamp, 2 reflect, 3 reflect_101, 4 wrap); ``fill`` has one
    value per channel; ``round_even`` rounds ties to even (integer results and
    nearest-neighbour picks) instead of away from zero.
    """
    if matrix.shape[0] < (9 if perspective else 6):
        raise ValueError("warp_projective: the matrix has too few values")
    cdef Sampling how = _sampling(src.shape[2], dst.shape[2], src.shape[0] == 0 or src.shape[1] == 0, fill,
                                  interp, border, round_even, "warp_projective")
    cdef Py_ssize_t oy, ox, rows = dst.shape[0], columns = dst.shape[1]
    cdef bint fast_linear = how.linear and not how.cubic
    cdef bint nearest = not how.linear and not how.cubic
    cdef float m0 = matrix[0], m1 = matrix[1], m2 = matrix[2]
    cdef float m3 = matrix[3], m4 = matrix[4], m5 = matrix[5]
    cdef float m6 = 0, m7 = 0, m8 = 1
    if perspective:
        m6 = matrix[6]
        m7 = matrix[7]
        m8 = matrix[8]
    cdef float x, y, sx, sy, w
    if rows == 0 or columns == 0 or dst.shape[2] == 0:
        return
    cdef Image s = _image(src)
    cdef Image d = _image(dst)
    cdef value_t *row
    # The points of a row first (vectorised for perspective maps), then the sampling: AVX2
    # for 3-channel uint8 rows.
    cdef bint packed = value_t is cython.uchar and not how.cubic and _packed_rgb8(&s, &d)
    # The vectorised points of perspective rows (the same float32 operations as the loop below).
    cdef bint project = perspective and ndd_warp_has_avx2()
    cdef float m[9]
    cdef float[:, ::1] points
    cdef unsigned char[::1] done
    m[:] = [m0, m1, m2, m3, m4, m5, m6, m7, m8]
    points = np.empty((2, columns), np.float32)
    if packed:
        done = np.empty(columns, np.uint8)
    cdef RowTaps taps
    _scratch = _row_taps(columns, &taps)
    with nogil:
        for oy in range(rows):
            y = oy + 0.5
            row = <value_t *>d.data + oy * d.row_stride
            if not perspective:
                _affine_row(m, y, columns, &points[0, 0], &points[1, 0])
            elif project:
                ndd_project_row(m, perspective, y, columns, &points[0, 0], &points[1, 0])
            if packed:
                if not _rgb8_row(&s, <unsigned char *>row, columns, &points[0, 0], &points[1, 0], &how,
                                 &done[0]):
                    continue
                for ox in range(columns):
                    if not done[ox]:
                        _warp_pixel(<const value_t *>s.data, &s, row + ox * d.column_stride, d.channel_stride,
                                    points[0, ox], points[1, ox], &how, fast_linear)
                continue
            if fast_linear and (not perspective or project):
                _linear_row(<const value_t *>s.data, &s, row, d.column_stride, d.channel_stride,
                            &points[0, 0], &points[1, 0], columns, &how, &taps)
                continue
            if nearest and (not perspective or project):
                _nearest_row(<const value_t *>s.data, &s, row, d.column_stride, d.channel_stride,
                             &points[0, 0], &points[1, 0], columns, &how, &taps)
                continue
            if not perspective or project:
                for ox in range(columns):
                    _warp_pixel(<const value_t *>s.data, &s, row + ox * d.column_stride, d.channel_stride,
                                points[0, ox], points[1, ox], &how, fast_linear)
                continue
            for ox in range(columns):
                x = ox + 0.5
                sx = m0 * x + m1 * y + m2
                sy = m3 * x + m4 * y + m5
                if perspective:
                    w = m6 * x + m7 * y + m8
                    if w == 0:
                        sx = _FAR
                    else:
                        sx = sx / w
                        sy = sy / w
                _warp_pixel(<const value_t *>s.data, &s, row + ox * d.column_stride, d.channel_stride,
                            sx, sy, &how, fast_linear)


def warp_mapped(const value_t[:, :, :] src, value_t[:, :, :] dst, const float[:, :] map_x,
                const float[:, :] map_y, int interp, int border, const float[::1] fill, bint round_even):
    """Fill ``dst`` by sampling ``src`` at the points ``(map_x[i, j], map_y[i, j])`` (in the
    pixel-centre convention) for each output pixel ``(i, j)``; the maps have the
    output's rows and columns. The other arguments as in ``warp_projective``.
    """
    if map_x.shape[0] != dst.shape[0] or map_x.shape[1] != dst.shape[1] or \
            map_y.shape[0] != dst.shape[0] or map_y.shape[1] != dst.shape[1]:
        raise ValueError("warp_mapped: the maps must have the output's rows and columns")
    cdef Sampling how = _sampling(src.shape[2], dst.shape[2], src.shape[0] == 0 or src.shape[1] == 0, fill,
                                  interp, border, round_even, "warp_mapped")
    cdef Py_ssize_t oy, ox, rows = dst.shape[0], columns = dst.shape[1]
    cdef bint fast_linear = how.linear and not how.cubic
    cdef bint nearest = not how.linear and not how.cubic
    if rows == 0 or columns == 0 or dst.shape[2] == 0:
        return
    cdef Image s = _image(src)
    cdef Image d = _image(dst)
    cdef value_t *row
    cdef bint packed = (value_t is cython.uchar and not how.cubic and map_x.strides[1] == sizeof(float)
                        and map_y.strides[1] == sizeof(float) and _packed_rgb8(&s, &d))
    cdef unsigned char[::1] done
    if packed:
        done = np.empty(columns, np.uint8)
    cdef RowTaps taps
    _scratch = _row_taps(columns, &taps)
    cdef bint contiguous_maps = map_x.strides[1] == sizeof(float) and map_y.strides[1] == sizeof(float)
    with nogil:
        for oy in range(rows):
            row = <value_t *>d.data + oy * d.row_stride
            if fast_linear and not packed and contiguous_maps:
                _linear_row(<const value_t *>s.data, &s, row, d.column_stride, d.channel_stride,
                            &map_x[oy, 0], &map_y[oy, 0], columns, &how, &taps)
                continue
            if nearest and not packed and contiguous_maps:
                _nearest_row(<const value_t *>s.data, &s, row, d.column_stride, d.channel_stride,
                             &map_x[oy, 0], &map_y[oy, 0], columns, &how, &taps)
                continue
            if packed:
                if not _rgb8_row(&s, <unsigned char *>row, columns, &map_x[oy, 0], &map_y[oy, 0], &how,
                                 &done[0]):
                    continue
                for ox in range(columns):
                    if not done[ox]:
                        _warp_pixel(<const value_t *>s.data, &s, row + ox * d.column_stride, d.channel_stride,
                                    map_x[oy, ox], map_y[oy, ox], &how, fast_linear)
                continue
            for ox in range(columns):
                _warp_pixel(<const value_t *>s.data, &s, row + ox * d.column_stride, d.channel_stride,
                            map_x[oy, ox], map_y[oy, ox], &how, fast_linear)


cdef struct Volume:
    # A (depth, rows, columns, channels) view: its first element and strides in elements.
    char *data
    Py_ssize_t depth, rows, columns, channels
    Py_ssize_t depth_stride, row_stride, column_stride, channel_stride


cdef Volume _volume(const value_t[:, :, :, :] view):
    cdef Volume v
    cdef bint empty = view.shape[0] == 0 or view.shape[1] == 0 or view.shape[2] == 0 or view.shape[3] == 0
    v.data = NULL if empty else <char *>&view[0, 0, 0, 0]
    v.depth = view.shape[0]
    v.rows = view.shape[1]
    v.columns = view.shape[2]
    v.channels = view.shape[3]
    v.depth_stride = view.strides[0] // sizeof(value_t)
    v.row_stride = view.strides[1] // sizeof(value_t)
    v.column_stride = view.strides[2] // sizeof(value_t)
    v.channel_stride = view.strides[3] // sizeof(value_t)
    return v


cdef inline const value_t *_voxel(const value_t *src, const Volume *s, Py_ssize_t z, Py_ssize_t y,
                                  Py_ssize_t x, int border) noexcept nogil:
    """The source voxel at ``(z, y, x)`` after the border rule; NULL for the fill value."""
    x = _border_index(x, s.columns, border)
    y = _border_index(y, s.rows, border)
    z = _border_index(z, s.depth, border)
    if x < 0 or y < 0 or z < 0:
        return NULL
    return src + z * s.depth_stride + y * s.row_stride + x * s.column_stride


cdef inline void _sample3(const value_t *src, const Volume *s, value_t *out, Py_ssize_t out_ks,
                          float sx, float sy, float sz, const Sampling *how) noexcept nogil:
    """Write one output voxel from the source sampled at point ``(sx, sy, sz)``."""
    cdef Py_ssize_t channels = s.channels, ks = s.channel_stride, k, x0, y0, z0, i
    cdef float fx, fy, fz, px, py, pz, acc, w
    cdef const value_t *corners[8]
    cdef float weights[8]
    if not (sx > -_FAR and sx < _FAR and sy > -_FAR and sy < _FAR and sz > -_FAR and sz < _FAR):
        x0 = 0 if not sx > 0 else s.columns - 1
        y0 = 0 if not sy > 0 else s.rows - 1
        z0 = 0 if not sz > 0 else s.depth - 1
        _write_pixel(_voxel(src, s, z0, y0, x0, how.border) if how.border != BORDER_CONSTANT
                     else <const value_t *>NULL, ks, out, out_ks, channels, how)
        return
    if not how.linear:
        _write_pixel(_voxel(src, s, <Py_ssize_t>floorf(sz), <Py_ssize_t>floorf(sy), <Py_ssize_t>floorf(sx),
                            how.border), ks, out, out_ks, channels, how)
        return
    px = sx - 0.5
    py = sy - 0.5
    pz = sz - 0.5
    fx = floorf(px)
    fy = floorf(py)
    fz = floorf(pz)
    x0 = <Py_ssize_t>fx
    y0 = <Py_ssize_t>fy
    z0 = <Py_ssize_t>fz
    fx = px - fx
    fy = py - fy
    fz = pz - fz
    for i in range(8):
        corners[i] = _voxel(src, s, z0 + (i >> 2), y0 + ((i >> 1) & 1), x0 + (i & 1), how.border)
        w = fx if i & 1 else 1 - fx
        w *= fy if (i >> 1) & 1 else 1 - fy
        w *= fz if i >> 2 else 1 - fz
        weights[i] = w
    for k in range(channels):
        acc = 0
        for i in range(8):
            acc += weights[i] * (corners[i][k * ks] if corners[i] != NULL else how.fill[k])
        out[k * out_ks] = _convert(acc, out, how.round_even)


def warp_affine_3d(const value_t[:, :, :, :] src, value_t[:, :, :, :] dst, const double[::1] matrix,
                   bint linear, int border, const float[::1] fill):
    """Fill the volume ``dst`` (depth, rows, columns, channels) by sampling ``src`` at the point
    that ``matrix`` (12 values, row-major 3x4, acting on ``(x, y, z, 1)``) gives for each
    output voxel centre; trilinear or nearest-neighbour sampling; border and fill as in
    ``warp_projective``; integer results round halves away from zero.
    """
    if matrix.shape[0] < 12:
        raise ValueError("warp_affine_3d: the matrix needs 12 values")
    cdef bint src_empty = src.shape[0] == 0 or src.shape[1] == 0 or src.shape[2] == 0
    cdef Sampling how = _sampling(src.shape[3], dst.shape[3], src_empty, fill, 1 if linear else 0, border,
                                  False, "warp_affine_3d")
    cdef Py_ssize_t oz, oy, ox, depth = dst.shape[0], rows = dst.shape[1], columns = dst.shape[2]
    if depth == 0 or rows == 0 or columns == 0 or dst.shape[3] == 0:
        return
    cdef float m[12]
    cdef int i
    for i in range(12):
        m[i] = matrix[i]
    cdef float x, y, z
    cdef Volume s = _volume(src)
    cdef Volume d = _volume(dst)
    cdef const value_t *sp = <const value_t *>s.data
    cdef value_t *row
    with nogil:
        for oz in range(depth):
            z = oz + 0.5
            for oy in range(rows):
                y = oy + 0.5
                row = <value_t *>d.data + oz * d.depth_stride + oy * d.row_stride
                for ox in range(columns):
                    x = ox + 0.5
                    _sample3(sp, &s, row + ox * d.column_stride, d.channel_stride,
                             m[0] * x + m[1] * y + m[2] * z + m[3],
                             m[4] * x + m[5] * y + m[6] * z + m[7],
                             m[8] * x + m[9] * y + m[10] * z + m[11], &how)


def sphere_maps(float[:, ::1] map_x, float[:, ::1] map_y, float mid_x, float mid_y, float radius):
    """Fill the maps of the sphere distortion: the point of output pixel ``(i, j)`` is its
    centre pushed away from ``(mid_x, mid_y)`` by its distance over ``radius``, in float32."""
    cdef Py_ssize_t i, j, rows = map_x.shape[0], columns = map_x.shape[1]
    cdef float dx, dy, scale
    if map_y.shape[0] != rows or map_y.shape[1] != columns:
        raise ValueError("sphere_maps: the maps differ in shape")
    cdef bint vectorised = radius > 0 and columns > 0 and ndd_warp_has_avx2()
    with nogil:
        for i in range(rows):
            dy = (<float>i + <float>0.5) - mid_y
            if vectorised:
                ndd_sphere_row(&map_x[i, 0], &map_y[i, 0], columns, mid_x, mid_y, dy, radius)
                continue
            for j in range(columns):
                dx = (<float>j + <float>0.5) - mid_x
                scale = sqrtf(dx * dx + dy * dy) / radius if radius > 0 else 0
                map_x[i, j] = mid_x + scale * dx
                map_y[i, j] = mid_y + scale * dy
