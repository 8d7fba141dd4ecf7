# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Windowed-sinc resampling of audio for ``ndd.audio_resample`` and
``ndd.decoders.audio``, without the GIL.

The filter is ``sinc(x) * hann(x)`` over ``lobes`` zero crossings on either side of
the output position, read from a table of 64 entries per lobe with linear
interpolation between entries, as the reference reads it. The positions, the filter
reads and the sums follow the reference's float32 arithmetic step by step (the
input position advances in float32 within blocks of 256 outputs and restarts from a
float64 product at each block; a mono sum runs in four interleaved float32 partial
sums), so the results are the reference's, bit for bit.

Speed comes from two things that leave every operation as it is:

- Most positions have few enough fractional bits that every input sample's offset
  from them is exact in float32. The samples then fall on table entries 64 apart
  at one common fraction, so the filter is read from a copy of the table stored by
  phase (entries ``r, r + 32, r + 64, ...`` side by side, with their differences),
  with contiguous vector loads instead of a lookup per sample.
- With AVX2, eight products at a time are added into the four partial sums, the
  first four then the last four: the reference's additions, in its order.
"""

from libc.math cimport cos, fabsf, M_PI, sinf

import numpy as np

cdef extern from *:
    """
    #include <math.h>
    #include <stdint.h>

    /* Entries per unit of x in the table (64 per lobe of two units). */
    #define NDD_PER_UNIT 32

    typedef struct {
        const float *table;   /* the filter, 64 * lobes + 1 entries, a zero on either side */
        const float *values;  /* by phase r < 32: table[r + 32 m], m < stride */
        const float *slopes;  /* by phase: table[r + 32 m + 1] - table[r + 32 m] */
        int stride;
        int lobes;
        float centre;         /* the table index of x = 0 */
        float exact_scale;    /* positions that are whole multiples of 1 / exact_scale
                               * have exact float32 offsets from every sample they reach */
    } ndd_filter;

    /* The filter at x (in input samples from the output position): linear
     * interpolation between the table entries around x * 32 + centre, which is never
     * negative. */
    static inline float ndd_filter_at(const ndd_filter *f, float x)
    {
        const float at = x * (float)NDD_PER_UNIT + f->centre;
        const int k = (int)at;
        const float frac = at - (float)k;
        return f->table[k] + frac * (f->table[k + 1] - f->table[k]);
    }

    /* Input samples [first, last) of the block at base that the output at pos reaches:
     * from `lobes` before pos to less than `lobes` after it (the reference's bounds;
     * the filter is all but zero at both ends, but which samples are summed decides
     * the order of the additions). */
    static inline void ndd_taps(float pos, int lobes, int64_t base, int64_t n_in, int *first, int *last)
    {
        const int i0 = (int)ceilf(pos) - lobes;
        int i1 = (int)ceilf(pos) + lobes;
        if (i1 + base > n_in)
            i1 = (int)(n_in - base);
        *first = i0 + base < 0 ? (int)(-base) : i0;
        *last = i1;
    }

    static inline int ndd_offsets_exact(const ndd_filter *f, float pos)
    {
        const float scaled = pos * f->exact_scale;
        return scaled == truncf(scaled);
    }

    /* Where the filter at x = i - pos and at the following whole offsets lies in the
     * tables by phase, and the common fraction (exact offsets only). */
    static inline void ndd_phase(
        const ndd_filter *f, float x, const float **values, const float **slopes, float *frac)
    {
        const float at = x * (float)NDD_PER_UNIT + f->centre;
        const int k = (int)at;
        const ptrdiff_t offset = (ptrdiff_t)(k % NDD_PER_UNIT) * f->stride + k / NDD_PER_UNIT;
        *frac = at - (float)k;
        *values = f->values + offset;
        *slopes = f->slopes + offset;
    }

    /* The filtered sum of src[i], i in [i, i1), once the groups of four are summed
     * (s holds the four partial sums): combined pairwise, then the other samples one
     * by one, as the reference adds them. */
    static inline float ndd_finish(
        const ndd_filter *f, const float *s, const float *src, int i, int i1, float pos)
    {
        float sum = (s[0] + s[2]) + (s[1] + s[3]);
        float x = (float)i - pos;
        for (; i < i1; i++, x += 1.0f)
            sum += src[i] * ndd_filter_at(f, x);
        return sum;
    }

    /* One mono output as the reference sums it: four interleaved partial sums over
     * groups of four samples (the offsets of a group are those of the previous one
     * plus 4), then ndd_finish. */
    static float ndd_dot_base(const ndd_filter *f, const float *src, int i, int i1, float pos)
    {
        float s[4] = {0, 0, 0, 0};
        if (ndd_offsets_exact(f, pos)) {
            const float *v, *d;
            float frac;
            ndd_phase(f, (float)i - pos, &v, &d, &frac);
            for (int j = 0; i + 3 < i1; i += 4, j += 4)
                for (int lane = 0; lane < 4; lane++)
                    s[lane] = s[lane] + src[i + lane] * (v[j + lane] + frac * d[j + lane]);
        } else {
            float x[4] = {(float)i - pos, (float)(i + 1) - pos, (float)(i + 2) - pos, (float)(i + 3) - pos};
            for (; i + 3 < i1; i += 4)
                for (int lane = 0; lane < 4; lane++) {
                    s[lane] = s[lane] + src[i + lane] * ndd_filter_at(f, x[lane]);
                    x[lane] += 4.0f;
                }
        }
        return ndd_finish(f, s, src, i, i1, pos);
    }

    /* The filter at n offsets from x, each the previous one plus 1 (the reference's
     * multi-channel loop steps them so). */
    static void ndd_weights_base(const ndd_filter *f, float *w, int n, float x, float pos)
    {
        if (ndd_offsets_exact(f, pos)) {
            const float *v, *d;
            float frac;
            ndd_phase(f, x, &v, &d, &frac);
            for (int k = 0; k < n; k++)
                w[k] = v[k] + frac * d[k];
            return;
        }
        for (int k = 0; k < n; k++, x += 1.0f)
            w[k] = ndd_filter_at(f, x);
    }

    #include "cpu_features.h"

    #if NDD_X86_SIMD
    #include <immintrin.h>

    /* The filter at eight offsets: ndd_filter_at lane by lane, the table read by
     * gathers. */
    __attribute__((target("avx2")))
    static inline __m256 ndd_filter8(const ndd_filter *f, __m256 x)
    {
        const __m256 at = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps((float)NDD_PER_UNIT)),
                                        _mm256_set1_ps(f->centre));
        const __m256i k = _mm256_cvttps_epi32(at);
        const __m256 frac = _mm256_sub_ps(at, _mm256_cvtepi32_ps(k));
        const __m256 lo = _mm256_i32gather_ps(f->table, k, 4);
        const __m256 hi = _mm256_i32gather_ps(f->table + 1, k, 4);
        return _mm256_add_ps(lo, _mm256_mul_ps(frac, _mm256_sub_ps(hi, lo)));
    }

    /* ndd_dot_base eight samples at a time: the products of two groups of four at
     * once, added into the partial sums first group first. */
    __attribute__((target("avx2")))
    static float ndd_dot_avx2(const ndd_filter *f, const float *src, int i, int i1, float pos)
    {
        __m128 acc = _mm_setzero_ps();
        if (ndd_offsets_exact(f, pos)) {
            const float *v, *d;
            float frac;
            ndd_phase(f, (float)i - pos, &v, &d, &frac);
            const __m256 vfrac = _mm256_set1_ps(frac);
            int j = 0;
            for (; i + 7 < i1; i += 8, j += 8) {
                const __m256 w = _mm256_add_ps(_mm256_loadu_ps(v + j),
                                               _mm256_mul_ps(vfrac, _mm256_loadu_ps(d + j)));
                const __m256 p = _mm256_mul_ps(_mm256_loadu_ps(src + i), w);
                acc = _mm_add_ps(acc, _mm256_castps256_ps128(p));
                acc = _mm_add_ps(acc, _mm256_extractf128_ps(p, 1));
            }
            if (i + 3 < i1) {
                const __m128 w = _mm_add_ps(_mm_loadu_ps(v + j),
                                            _mm_mul_ps(_mm256_castps256_ps128(vfrac), _mm_loadu_ps(d + j)));
                acc = _mm_add_ps(acc, _mm_mul_ps(_mm_loadu_ps(src + i), w));
                i += 4;
            }
        } else {
            const __m128 four = _mm_set1_ps(4.0f);
            __m128 x_lo = _mm_setr_ps((float)i - pos, (float)(i + 1) - pos, (float)(i + 2) - pos,
                                      (float)(i + 3) - pos);
            for (; i + 7 < i1; i += 8) {
                const __m128 x_hi = _mm_add_ps(x_lo, four);
                const __m256 w = ndd_filter8(f, _mm256_set_m128(x_hi, x_lo));
                const __m256 p = _mm256_mul_ps(_mm256_loadu_ps(src + i), w);
                acc = _mm_add_ps(acc, _mm256_castps256_ps128(p));
                acc = _mm_add_ps(acc, _mm256_extractf128_ps(p, 1));
                x_lo = _mm_add_ps(x_hi, four);
            }
            if (i + 3 < i1) {
                const __m256 w = ndd_filter8(f, _mm256_castps128_ps256(x_lo));
                acc = _mm_add_ps(acc, _mm_mul_ps(_mm_loadu_ps(src + i), _mm256_castps256_ps128(w)));
                i += 4;
            }
        }
        float s[4];
        _mm_storeu_ps(s, acc);
        return ndd_finish(f, s, src, i, i1, pos);
    }

    __attribute__((target("avx2")))
    static void ndd_weights_avx2(const ndd_filter *f, float *w, int n, float x, float pos)
    {
        if (ndd_offsets_exact(f, pos)) {
            ndd_weights_base(f, w, n, x, pos);  /* contiguous: vectorised as it is */
            return;
        }
        int k = 0;
        for (; k + 8 <= n; k += 8) {
            float xs[8];
            for (int j = 0; j < 8; j++, x += 1.0f)
                xs[j] = x;
            _mm256_storeu_ps(w + k, ndd_filter8(f, _mm256_loadu_ps(xs)));
        }
        for (; k < n; k++, x += 1.0f)
            w[k] = ndd_filter_at(f, x);
    }

    typedef float (*ndd_dot_fn)(const ndd_filter *, const float *, int, int, float);
    typedef void (*ndd_weights_fn)(const ndd_filter *, float *, int, float, float);

    static ndd_dot_fn ndd_pick_dot(void)
    {
        return ndd_has_avx2() ? ndd_dot_avx2 : ndd_dot_base;
    }

    static ndd_weights_fn ndd_pick_weights(void)
    {
        return ndd_has_avx2() ? ndd_weights_avx2 : ndd_weights_base;
    }
    #else
    typedef float (*ndd_dot_fn)(const ndd_filter *, const float *, int, int, float);
    typedef void (*ndd_weights_fn)(const ndd_filter *, float *, int, float, float);

    static ndd_dot_fn ndd_pick_dot(void) { return ndd_dot_base; }
    static ndd_weights_fn ndd_pick_weights(void) { return ndd_weights_base; }
    #endif

    /* The output positions: in blocks of 256 outputs, the first from a float64
     * product, the others by adding the float32 step (the reference's). */
    #define NDD_FOR_EACH_OUTPUT(...)                                                     \\
        for (int64_t block = 0; block < n_out; block += 256) {                          \\
            const int64_t end = block + 256 < n_out ? block + 256 : n_out;              \\
            const double start = (double)block * step;                                  \\
            const int64_t base = (int64_t)floor(start);                                 \\
            float pos = (float)(start - (double)base);                                  \\
            for (int64_t o = block; o < end; o++, pos += fstep) {                       \\
                int i, i1;                                                              \\
                ndd_taps(pos, f->lobes, base, n_in, &i, &i1);                           \\
                __VA_ARGS__                                                             \\
            }                                                                           \\
        }

    static void ndd_resample_mono(
        const ndd_filter *f, float *out, int64_t n_out, const float *in, int64_t n_in, double step)
    {
        const float fstep = (float)step;
        const ndd_dot_fn dot = ndd_pick_dot();
        NDD_FOR_EACH_OUTPUT(
            out[o] = dot(f, in + base, i, i1, pos);
        )
    }

    /* Interleaved channels: the filter once per input sample, a sum per channel, the
     * samples added one by one. `w` holds 2 * lobes floats. */
    static void ndd_resample_channels(
        const ndd_filter *f, float *out, int64_t n_out, const float *in, int64_t n_in, int channels,
        double step, float *w)
    {
        const float fstep = (float)step;
        const ndd_weights_fn weights = ndd_pick_weights();
        NDD_FOR_EACH_OUTPUT(
            float *dst = out + o * channels;
            const int n = i1 - i;
            if (n > 0)
                weights(f, w, n, (float)i - pos, pos);
            const float *s = in + (base + i) * channels;
            if (channels == 2) {  /* stereo: the two sums in registers */
                float left = 0, right = 0;
                for (int k = 0; k < n; k++, s += 2) {
                    left = left + s[0] * w[k];
                    right = right + s[1] * w[k];
                }
                dst[0] = left;
                dst[1] = right;
            } else {
                for (int c = 0; c < channels; c++) {
                    float sum = 0;
                    for (int k = 0; k < n; k++)
                        sum = sum + s[(ptrdiff_t)k * channels + c] * w[k];
                    dst[c] = sum;
                }
            }
        )
    }
    """
    ctypedef struct ndd_filter:
        const float *table
        const float *values
        const float *slopes
        int stride
        int lobes
        float centre
        float exact_scale

    void ndd_resample_mono(
        const ndd_filter *f, float *out, Py_ssize_t n_out, const float *inp, Py_ssize_t n_in, double step
    ) nogil
    void ndd_resample_channels(
        const ndd_filter *f, float *out, Py_ssize_t n_out, const float *inp, Py_ssize_t n_in, int channels,
        double step, float *w
    ) nogil

# (table, values by phase, slopes by phase) by number of lobes; they do not depend
# on the ratio.
_FILTERS = {}


def lobes_for_quality(double quality):
    """The number of sinc lobes on each side for ``quality`` in [0, 100]: 3 at 0, 16
    at 50, 64 at 100 (a quadratic, rounded half away from zero)."""
    cdef double lobes = 0.007 * quality * quality - 0.09 * quality + 3
    return int(lobes + 0.5)


cdef object _filter_table(int lobes):
    """``64 * lobes + 1`` samples of the Hann-windowed sinc from ``-lobes`` to
    ``lobes``, with a zero entry on either side (reads at the very ends interpolate
    towards it)."""
    cdef int size = 64 * lobes + 1
    cdef int middle = (size - 1) // 2
    cdef float step = 2.0 * lobes / (size - 1)
    cdef float envelope_step = 2.0 / size
    cdef float x, y, angle, sinc
    cdef float[::1] values
    cdef int k
    table = np.zeros(size + 2, np.float32)
    values = table
    for k in range(size):
        x = (k - middle) * step
        y = (k - middle) * envelope_step
        # The reference's precision: the sinc in float32 (the angle rounded from
        # float64), the window in float64, their product rounded to float32.
        angle = <double>x * M_PI
        sinc = 1.0 if fabsf(angle) < 1e-8 else sinf(angle) / angle
        values[k + 1] = <double>sinc * (0.5 * (1 + cos(<double>y * M_PI)))
    return table


cdef tuple _filter(int lobes):
    """The table and its copies by phase (cached)."""
    cached = _FILTERS.get(lobes)
    if cached is not None:
        return cached
    table = _filter_table(lobes)
    # Phase r holds entries r, r + 32, r + 64, ...; past the end of the table, zeros
    # (never read: the offsets stop at the filter's ends).
    stride = 2 * lobes + 2
    padded = np.zeros(32 * (stride + 1) + 1, np.float32)
    padded[: len(table)] = table
    index = np.arange(32)[:, None] + 32 * np.arange(stride)[None, :]
    values = np.ascontiguousarray(padded[index])
    slopes = np.ascontiguousarray(padded[index + 1] - padded[index])
    cached = (table, values, slopes)
    _FILTERS[lobes] = cached
    return cached


def filter_table(int lobes):
    """The filter of ``lobes`` lobes as ``resample`` reads it: ``64 * lobes + 1`` float32
    samples with a zero entry on either side, the entry of x = 0 at ``32 * lobes + 1``
    (the GPU's kernel reads the same table)."""
    return _filter(lobes)[0]


def resample(signal, Py_ssize_t out_length, double in_rate, double out_rate, int lobes):
    """Resample ``signal`` (float32, ``[T]`` or ``[T, C]`` C-contiguous) from ``in_rate``
    to ``out_rate`` into a new float32 array of ``out_length`` samples (per channel)."""
    table, values, slopes = _filter(lobes)
    cdef float[::1] table_view = table
    cdef float[:, ::1] values_view = values
    cdef float[:, ::1] slopes_view = slopes
    cdef ndd_filter f
    f.table = &table_view[0]
    f.values = &values_view[0, 0]
    f.slopes = &slopes_view[0, 0]
    f.stride = values.shape[1]
    f.lobes = lobes
    f.centre = 32 * lobes + 1
    # Offsets up to 2 * lobes + 8 from a position that is a whole multiple of 2**-m are
    # exact in float32's 24 bits when 2 * lobes + 8 <= 2**(24 - m).
    f.exact_scale = 2.0 ** (24 - (2 * lobes + 7).bit_length())
    cdef int channels = 1 if signal.ndim == 1 else signal.shape[1]
    cdef Py_ssize_t n_in = signal.shape[0]
    out = np.empty((out_length,) + signal.shape[1:], np.float32)
    if out.size == 0:
        return out
    if n_in == 0:
        out.fill(0)
        return out
    cdef const float[::1] src = signal.reshape(-1)
    cdef float[::1] dst = out.reshape(-1)
    cdef float[::1] scratch = np.empty(2 * lobes, np.float32)
    cdef double step = in_rate / out_rate
    with nogil:
        if channels == 1:
            ndd_resample_mono(&f, &dst[0], out_length, &src[0], n_in, step)
        else:
            ndd_resample_channels(&f, &dst[0], out_length, &src[0], n_in, channels, step, &scratch[0])
    return out
