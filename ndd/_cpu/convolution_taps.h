/* The inner loop of ndd._cpu.convolution.correlate: one sweep over a row adding up
 * to four weighted taps to the float32 sums. It is compiled twice on x86-64, for
 * AVX2 with FMA (twice as fast) and for the baseline; ndd_taps_<type> picks the
 * first when the processor has those instructions, so the module still runs on
 * processors without them. */
#ifndef NDD_CONVOLUTION_TAPS_H
#define NDD_CONVOLUTION_TAPS_H

#include <stddef.h>

#define NDD_TAPS_BODY(T)                                                                        \
    {                                                                                           \
        ptrdiff_t t;                                                                            \
        if (count == 4) {                                                                       \
            if (init)                                                                           \
                for (t = 0; t < n; t++)                                                         \
                    acc[t] = w0 * (float)s0[t] + w1 * (float)s1[t] + w2 * (float)s2[t]          \
                             + w3 * (float)s3[t];                                               \
            else                                                                                \
                for (t = 0; t < n; t++)                                                         \
                    acc[t] += w0 * (float)s0[t] + w1 * (float)s1[t] + w2 * (float)s2[t]         \
                              + w3 * (float)s3[t];                                              \
        } else if (count == 2) {                                                                \
            if (init)                                                                           \
                for (t = 0; t < n; t++) acc[t] = w0 * (float)s0[t] + w1 * (float)s1[t];         \
            else                                                                                \
                for (t = 0; t < n; t++) acc[t] += w0 * (float)s0[t] + w1 * (float)s1[t];        \
        } else {                                                                                \
            if (init)                                                                           \
                for (t = 0; t < n; t++) acc[t] = w0 * (float)s0[t];                             \
            else                                                                                \
                for (t = 0; t < n; t++) acc[t] += w0 * (float)s0[t];                            \
        }                                                                                       \
    }

#define NDD_TAPS_PARAMS(T)                                                                      \
    (float *restrict acc, const T *restrict s0, const T *restrict s1, const T *restrict s2,     \
     const T *restrict s3, float w0, float w1, float w2, float w3, ptrdiff_t n, int count,      \
     int init)

#if defined(__GNUC__) && defined(__x86_64__)

static int ndd_taps_use_avx2 = -1;

static int ndd_taps_avx2_available(void)
{
    if (ndd_taps_use_avx2 < 0) {
        __builtin_cpu_init();
        ndd_taps_use_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return ndd_taps_use_avx2;
}

#define NDD_DEFINE_TAPS(SUFFIX, T)                                                              \
    __attribute__((target("arch=haswell"))) static void ndd_taps_avx2_##SUFFIX NDD_TAPS_PARAMS(T) \
    NDD_TAPS_BODY(T)                                                                            \
    static void ndd_taps_base_##SUFFIX NDD_TAPS_PARAMS(T) NDD_TAPS_BODY(T)                      \
    static void ndd_taps_##SUFFIX NDD_TAPS_PARAMS(T)                                            \
    {                                                                                           \
        if (ndd_taps_avx2_available())                                                          \
            ndd_taps_avx2_##SUFFIX(acc, s0, s1, s2, s3, w0, w1, w2, w3, n, count, init);        \
        else                                                                                    \
            ndd_taps_base_##SUFFIX(acc, s0, s1, s2, s3, w0, w1, w2, w3, n, count, init);        \
    }

#else

#define NDD_DEFINE_TAPS(SUFFIX, T) static void ndd_taps_##SUFFIX NDD_TAPS_PARAMS(T) NDD_TAPS_BODY(T)

#endif

NDD_DEFINE_TAPS(u8, unsigned char)
NDD_DEFINE_TAPS(i8, signed char)
NDD_DEFINE_TAPS(u16, unsigned short)
NDD_DEFINE_TAPS(i16, short)
NDD_DEFINE_TAPS(u32, unsigned int)
NDD_DEFINE_TAPS(i32, int)
NDD_DEFINE_TAPS(f32, float)
NDD_DEFINE_TAPS(f64, double)

#endif
