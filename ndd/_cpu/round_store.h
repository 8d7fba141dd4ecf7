/* Conversions between uint8 pixels and float32 sums, compiled twice on x86-64, for
 * AVX2 and for the baseline; each ndd_* entry point picks the first when the
 * processor has it.
 *
 * ndd_store_u8: saturated to [0, 255], then rounded half up, as
 * (uint8)((double)v + 0.5). Through double on purpose: in float, v + 0.5f rounds
 * 0.49999997 up to 1.0 (resampling's rounding).
 * ndd_store_u8_float_half: the same with the half added in float32, as
 * (uint8)(int)(v + 0.5f) (the convolutions' rounding).
 * ndd_store_u8_even: saturated to [0, 255], then rounded to nearest, halves to even
 * (resampling's rounding where the reference's vector code rounds).
 * ndd_widen_u8: uint8 to float32. */
#ifndef NDD_ROUND_STORE_H
#define NDD_ROUND_STORE_H

#include <stddef.h>
#include <math.h>
#include <stdint.h>

static inline void ndd_store_u8_base(const float *src, uint8_t *dst, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        float v = src[i];
        v = v < 0 ? 0 : v;
        v = v > 255 ? 255 : v;
        dst[i] = (uint8_t)((double)v + 0.5);
    }
}

static inline void ndd_store_u8_float_half_base(const float *src, uint8_t *dst, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        float v = src[i];
        v = v < 0 ? 0 : v;
        v = v > 255 ? 255 : v;
        dst[i] = (uint8_t)(int)(v + 0.5f);
    }
}

static inline void ndd_store_u8_even_base(const float *src, uint8_t *dst, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        float v = src[i];
        v = v < 0 ? 0 : v;
        v = v > 255 ? 255 : v;
        dst[i] = (uint8_t)nearbyintf(v);
    }
}

static inline void ndd_widen_u8_base(const uint8_t *src, float *dst, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) dst[i] = (float)src[i];
}

#include "cpu_features.h"

#if NDD_X86_SIMD
#include <immintrin.h>

__attribute__((target("avx2"))) static void ndd_store_u8_avx2(const float *src, uint8_t *dst, ptrdiff_t n)
{
    const __m256 low = _mm256_setzero_ps(), high = _mm256_set1_ps(255.0f);
    const __m256d half = _mm256_set1_pd(0.5);
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_loadu_ps(src + i), low), high);
        __m128i a = _mm256_cvttpd_epi32(_mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), half));
        __m128i b = _mm256_cvttpd_epi32(_mm256_add_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), half));
        __m128i words = _mm_packs_epi32(a, b);
        _mm_storel_epi64((__m128i *)(dst + i), _mm_packus_epi16(words, words));
    }
    ndd_store_u8_base(src + i, dst + i, n - i);
}

__attribute__((target("avx2"))) static void ndd_store_u8_float_half_avx2(const float *src, uint8_t *dst,
                                                                          ptrdiff_t n)
{
    const __m256 low = _mm256_setzero_ps(), high = _mm256_set1_ps(255.0f), half = _mm256_set1_ps(0.5f);
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_min_ps(_mm256_max_ps(_mm256_loadu_ps(src + i), low), high);
        __m256 b = _mm256_min_ps(_mm256_max_ps(_mm256_loadu_ps(src + i + 8), low), high);
        __m256i ia = _mm256_cvttps_epi32(_mm256_add_ps(a, half));
        __m256i ib = _mm256_cvttps_epi32(_mm256_add_ps(b, half));
        __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(ia, ib), 0xD8);
        __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
        _mm_storeu_si128((__m128i *)(dst + i), bytes);
    }
    ndd_store_u8_float_half_base(src + i, dst + i, n - i);
}

__attribute__((target("avx2"))) static void ndd_store_u8_even_avx2(const float *src, uint8_t *dst, ptrdiff_t n)
{
    const __m256 low = _mm256_setzero_ps(), high = _mm256_set1_ps(255.0f);
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_min_ps(_mm256_max_ps(_mm256_loadu_ps(src + i), low), high);
        __m256 b = _mm256_min_ps(_mm256_max_ps(_mm256_loadu_ps(src + i + 8), low), high);
        /* cvtps rounds by the MXCSR mode: to nearest, halves to even. */
        __m256i ia = _mm256_cvtps_epi32(a);
        __m256i ib = _mm256_cvtps_epi32(b);
        __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(ia, ib), 0xD8);
        __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
        _mm_storeu_si128((__m128i *)(dst + i), bytes);
    }
    ndd_store_u8_even_base(src + i, dst + i, n - i);
}

__attribute__((target("avx2"))) static void ndd_widen_u8_avx2(const uint8_t *src, float *dst, ptrdiff_t n)
{
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i bytes = _mm_loadu_si128((const __m128i *)(src + i));
        _mm256_storeu_ps(dst + i, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes)));
        _mm256_storeu_ps(dst + i + 8, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8))));
    }
    ndd_widen_u8_base(src + i, dst + i, n - i);
}

static void ndd_store_u8(const float *src, uint8_t *dst, ptrdiff_t n)
{
    if (ndd_has_avx2())
        ndd_store_u8_avx2(src, dst, n);
    else
        ndd_store_u8_base(src, dst, n);
}

static void ndd_store_u8_float_half(const float *src, uint8_t *dst, ptrdiff_t n)
{
    if (ndd_has_avx2())
        ndd_store_u8_float_half_avx2(src, dst, n);
    else
        ndd_store_u8_float_half_base(src, dst, n);
}

static void ndd_store_u8_even(const float *src, uint8_t *dst, ptrdiff_t n)
{
    if (ndd_has_avx2())
        ndd_store_u8_even_avx2(src, dst, n);
    else
        ndd_store_u8_even_base(src, dst, n);
}

static void ndd_widen_u8(const uint8_t *src, float *dst, ptrdiff_t n)
{
    if (ndd_has_avx2())
        ndd_widen_u8_avx2(src, dst, n);
    else
        ndd_widen_u8_base(src, dst, n);
}

#else

static void ndd_store_u8(const float *src, uint8_t *dst, ptrdiff_t n) { ndd_store_u8_base(src, dst, n); }
static void ndd_store_u8_float_half(const float *src, uint8_t *dst, ptrdiff_t n)
{
    ndd_store_u8_float_half_base(src, dst, n);
}
static void ndd_widen_u8(const uint8_t *src, float *dst, ptrdiff_t n) { ndd_widen_u8_base(src, dst, n); }
static void ndd_store_u8_even(const float *src, uint8_t *dst, ptrdiff_t n) { ndd_store_u8_even_base(src, dst, n); }

#endif

#endif
