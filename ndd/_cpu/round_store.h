/* float32 sums to uint8: saturated to [0, 255], then rounded half up, as
 * (uint8)((double)v + 0.5). The conversion goes through double on purpose: in
 * float, v + 0.5f rounds 0.49999997 up to 1.0. Compiled twice on x86-64, for AVX2
 * and for the baseline; ndd_store_u8 picks the first when the processor has it. */
#ifndef NDD_ROUND_STORE_H
#define NDD_ROUND_STORE_H

#include <stddef.h>
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

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

static int ndd_store_use_avx2 = -1;

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

static void ndd_store_u8(const float *src, uint8_t *dst, ptrdiff_t n)
{
    /* Several threads may get here first; they all store the same answer. */
    if (ndd_store_use_avx2 < 0) {
        __builtin_cpu_init();
        ndd_store_use_avx2 = __builtin_cpu_supports("avx2");
    }
    if (ndd_store_use_avx2)
        ndd_store_u8_avx2(src, dst, n);
    else
        ndd_store_u8_base(src, dst, n);
}

#else

static void ndd_store_u8(const float *src, uint8_t *dst, ptrdiff_t n) { ndd_store_u8_base(src, dst, n); }

#endif

#endif
