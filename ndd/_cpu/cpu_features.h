/* Which vector instructions the processor has, asked once per process. The kernels
 * are compiled for the x86-64 baseline, with AVX2 / AVX-512 variants marked by
 * target attributes; these tell which variant may run. Several threads may ask
 * first; they all store the same answer. */
#ifndef NDD_CPU_FEATURES_H
#define NDD_CPU_FEATURES_H

/* NDD_X86_SIMD: whether the x86-64 vector code is compiled (GCC or Clang on x86-64).
 * Elsewhere, and in a portable build (-DNDD_PORTABLE, .ci/portable, which tests on
 * x86-64 the code that other processors run), the plain C loops are. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(NDD_PORTABLE)
#define NDD_X86_SIMD 1
#else
#define NDD_X86_SIMD 0
#endif

#if NDD_X86_SIMD

static int ndd_cpu_avx2 = -1, ndd_cpu_avx2_fma = -1, ndd_cpu_avx512_vbmi = -1;

static inline int ndd_has_avx2(void)
{
    if (ndd_cpu_avx2 < 0) {
        __builtin_cpu_init();
        ndd_cpu_avx2 = __builtin_cpu_supports("avx2");
    }
    return ndd_cpu_avx2;
}

static inline int ndd_has_avx2_fma(void)
{
    if (ndd_cpu_avx2_fma < 0) {
        __builtin_cpu_init();
        ndd_cpu_avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return ndd_cpu_avx2_fma;
}

static inline int ndd_has_avx512_vbmi(void)
{
    if (ndd_cpu_avx512_vbmi < 0) {
        __builtin_cpu_init();
        ndd_cpu_avx512_vbmi = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
    }
    return ndd_cpu_avx512_vbmi;
}

#endif

#endif
