/* The inner loop of ndd._cpu.convolution.correlate: one output row of float32 sums
 * acc[t] = sum_k weights[k] * sources[k][t]. The sums of 16 neighbouring elements stay
 * in registers while every tap is added, so the only memory traffic is reading the
 * sources. It is compiled twice on x86-64, for AVX2 with FMA and for the baseline;
 * ndd_taps_<type> picks the first when the processor has those instructions, so the
 * module still runs on processors without them. ndd_taps_plain_<type> sums with a
 * multiply and an add, each rounded, on every processor (AVX2 where it has it). */
#ifndef NDD_CONVOLUTION_TAPS_H
#define NDD_CONVOLUTION_TAPS_H

#include <stddef.h>

#define NDD_TAPS_BLOCK 16

#define NDD_TAPS_PARAMS(T) \
    (float *restrict acc, const T *const *sources, const float *weights, ptrdiff_t taps, ptrdiff_t n)

/* MADD(w, x, s) is w * x + s: fused (fmaf) in the AVX2 builds, two roundings in the
 * baseline. Written out, so that the sums do not depend on whether the compiler contracts
 * (GCC's default -ffp-contract=fast does inside a target("fma") function, -std=c11 does
 * not): the GPU's filter and resample kernels sum in exactly one of these two ways. */
#define NDD_MADD_FUSED(w, x, s) __builtin_fmaf((w), (x), (s))
#define NDD_MADD_PLAIN(w, x, s) ((s) + (w) * (x))

/* The elements past the last whole block: one sum at a time. */
#define NDD_TAPS_TAIL(T, MADD)                                                            \
    for (; t < n; t++) {                                                                  \
        float sum = 0;                                                                    \
        for (k = 0; k < taps; k++) sum = MADD(weights[k], (float)sources[k][t], sum);     \
        acc[t] = sum;                                                                     \
    }

#define NDD_TAPS_BODY(T, MADD)                                                 \
    {                                                                          \
        ptrdiff_t t = 0, k, u;                                                 \
        for (; t + NDD_TAPS_BLOCK <= n; t += NDD_TAPS_BLOCK) {                 \
            float block[NDD_TAPS_BLOCK] = {0};                                 \
            for (k = 0; k < taps; k++) {                                       \
                const T *restrict s = sources[k] + t;                          \
                const float w = weights[k];                                    \
                for (u = 0; u < NDD_TAPS_BLOCK; u++) block[u] = MADD(w, (float)s[u], block[u]); \
            }                                                                  \
            for (u = 0; u < NDD_TAPS_BLOCK; u++) acc[t + u] = block[u];        \
        }                                                                      \
        NDD_TAPS_TAIL(T, MADD)                                                 \
    }

#include "cpu_features.h"

#if NDD_X86_SIMD

#define ndd_taps_avx2_available ndd_has_avx2_fma

#define NDD_DEFINE_TAPS(SUFFIX, T)                                                              \
    __attribute__((target("avx2,fma"))) static void ndd_taps_avx2_##SUFFIX NDD_TAPS_PARAMS(T) \
    NDD_TAPS_BODY(T, NDD_MADD_FUSED)                                                            \
    static void ndd_taps_base_##SUFFIX NDD_TAPS_PARAMS(T) NDD_TAPS_BODY(T, NDD_MADD_PLAIN)      \
    static void ndd_taps_##SUFFIX NDD_TAPS_PARAMS(T)                                            \
    {                                                                                           \
        if (ndd_taps_avx2_available())                                                          \
            ndd_taps_avx2_##SUFFIX(acc, sources, weights, taps, n);                             \
        else                                                                                    \
            ndd_taps_base_##SUFFIX(acc, sources, weights, taps, n);                             \
    }                                                                                           \
    static inline void ndd_taps_plain_##SUFFIX NDD_TAPS_PARAMS(T)                               \
    {                                                                                           \
        ndd_taps_base_##SUFFIX(acc, sources, weights, taps, n);                                 \
    }

#else

#define NDD_DEFINE_TAPS(SUFFIX, T)                                                        \
    static void ndd_taps_##SUFFIX NDD_TAPS_PARAMS(T) NDD_TAPS_BODY(T, NDD_MADD_PLAIN)     \
    static inline void ndd_taps_plain_##SUFFIX NDD_TAPS_PARAMS(T)                         \
    {                                                                                     \
        ndd_taps_##SUFFIX(acc, sources, weights, taps, n);                                \
    }

#endif

#if NDD_X86_SIMD
#include <immintrin.h>

/* uint8 and float32 sources, the common cases: the compiler does not keep the block of
 * sums in registers by itself, so those loops are written out with AVX2 intrinsics,
 * twice: with fused multiply-adds (VMADD_FUSED, the convolutions' sums) and with a
 * multiply and an add each rounded (VMADD_PLAIN, resampling's: the reference's). */
#define NDD_VMADD_FUSED(w, x, s) _mm256_fmadd_ps((w), (x), (s))
#define NDD_VMADD_PLAIN(w, x, s) _mm256_add_ps((s), _mm256_mul_ps((w), (x)))

/* Four independent sums per block hide the latency of the multiply-adds. */
#define NDD_U8_BODY(VMADD, MADD)                                                                 \
    {                                                                                            \
        ptrdiff_t t = 0, k;                                                                      \
        for (; t + 32 <= n; t += 32) {                                                           \
            __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();                           \
            __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();                           \
            for (k = 0; k < taps; k++) {                                                         \
                const __m128i a = _mm_loadu_si128((const __m128i *)(sources[k] + t));            \
                const __m128i b = _mm_loadu_si128((const __m128i *)(sources[k] + t + 16));       \
                const __m256 w = _mm256_set1_ps(weights[k]);                                     \
                s0 = VMADD(w, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(a)), s0);                  \
                s1 = VMADD(w, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(a, 8))), s1); \
                s2 = VMADD(w, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)), s2);                  \
                s3 = VMADD(w, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(b, 8))), s3); \
            }                                                                                    \
            _mm256_storeu_ps(acc + t, s0);                                                       \
            _mm256_storeu_ps(acc + t + 8, s1);                                                   \
            _mm256_storeu_ps(acc + t + 16, s2);                                                  \
            _mm256_storeu_ps(acc + t + 24, s3);                                                  \
        }                                                                                        \
        NDD_TAPS_TAIL(unsigned char, MADD)                                                       \
    }

__attribute__((target("avx2,fma"))) static void ndd_taps_avx2_u8 NDD_TAPS_PARAMS(unsigned char)
NDD_U8_BODY(NDD_VMADD_FUSED, NDD_MADD_FUSED)
__attribute__((target("avx2"))) static void ndd_taps_avx2_plain_u8 NDD_TAPS_PARAMS(unsigned char)
NDD_U8_BODY(NDD_VMADD_PLAIN, NDD_MADD_PLAIN)

static void ndd_taps_base_u8 NDD_TAPS_PARAMS(unsigned char) NDD_TAPS_BODY(unsigned char, NDD_MADD_PLAIN)

static void ndd_taps_u8 NDD_TAPS_PARAMS(unsigned char)
{
    if (ndd_taps_avx2_available())
        ndd_taps_avx2_u8(acc, sources, weights, taps, n);
    else
        ndd_taps_base_u8(acc, sources, weights, taps, n);
}

static void ndd_taps_plain_u8 NDD_TAPS_PARAMS(unsigned char)
{
    if (ndd_has_avx2())
        ndd_taps_avx2_plain_u8(acc, sources, weights, taps, n);
    else
        ndd_taps_base_u8(acc, sources, weights, taps, n);
}
/* Eight independent sums per block of 64 (then four per 32, one per 8) hide the latency
 * of the multiply-adds: a sum waits for its previous multiply-add, and the processor
 * can start two per cycle. Each element's sum is the same sequence of multiply-adds in
 * every loop, so the block size does not change the results. */
#define NDD_F32_SUMS(COUNT, VMADD)                                                       \
    for (; t + 8 * (COUNT) <= n; t += 8 * (COUNT)) {                                     \
        __m256 s[COUNT];                                                                 \
        _Pragma("GCC unroll 8")                                                          \
        for (int u = 0; u < (COUNT); u++) s[u] = _mm256_setzero_ps();                    \
        for (k = 0; k < taps; k++) {                                                     \
            const float *src = sources[k] + t;                                           \
            const __m256 w = _mm256_set1_ps(weights[k]);                                 \
            _Pragma("GCC unroll 8")                                                      \
            for (int u = 0; u < (COUNT); u++)                                            \
                s[u] = VMADD(w, _mm256_loadu_ps(src + 8 * u), s[u]);                     \
        }                                                                                \
        _Pragma("GCC unroll 8")                                                          \
        for (int u = 0; u < (COUNT); u++) _mm256_storeu_ps(acc + t + 8 * u, s[u]);       \
    }

/* The loops over u unroll fully (-O3, constant counts). No optimize("unroll-loops")
 * attribute: GCC 13 then drops the target options and refuses the AVX2 intrinsics
 * ("inlining failed ... target specific option mismatch"). */
#define NDD_F32_BODY(VMADD, MADD)                                            \
    {                                                                        \
        ptrdiff_t t = 0, k;                                                  \
        NDD_F32_SUMS(8, VMADD)                                               \
        NDD_F32_SUMS(4, VMADD)                                               \
        NDD_F32_SUMS(1, VMADD)                                               \
        NDD_TAPS_TAIL(float, MADD)                                           \
    }

__attribute__((target("avx2,fma"))) static void ndd_taps_avx2_f32 NDD_TAPS_PARAMS(float)
NDD_F32_BODY(NDD_VMADD_FUSED, NDD_MADD_FUSED)
__attribute__((target("avx2"))) static void ndd_taps_avx2_plain_f32 NDD_TAPS_PARAMS(float)
NDD_F32_BODY(NDD_VMADD_PLAIN, NDD_MADD_PLAIN)

static void ndd_taps_base_f32 NDD_TAPS_PARAMS(float) NDD_TAPS_BODY(float, NDD_MADD_PLAIN)

static void ndd_taps_f32 NDD_TAPS_PARAMS(float)
{
    if (ndd_taps_avx2_available())
        ndd_taps_avx2_f32(acc, sources, weights, taps, n);
    else
        ndd_taps_base_f32(acc, sources, weights, taps, n);
}

static void ndd_taps_plain_f32 NDD_TAPS_PARAMS(float)
{
    if (ndd_has_avx2())
        ndd_taps_avx2_plain_f32(acc, sources, weights, taps, n);
    else
        ndd_taps_base_f32(acc, sources, weights, taps, n);
}
#else
NDD_DEFINE_TAPS(u8, unsigned char)
NDD_DEFINE_TAPS(f32, float)
#endif
NDD_DEFINE_TAPS(i8, signed char)
NDD_DEFINE_TAPS(u16, unsigned short)
NDD_DEFINE_TAPS(i16, short)
NDD_DEFINE_TAPS(u32, unsigned int)
NDD_DEFINE_TAPS(i32, int)
NDD_DEFINE_TAPS(f64, double)

#endif
