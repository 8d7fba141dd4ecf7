// Kernels of the audio operators (ndd/_ops/gpu_audio.py launches them):
// preemphasis_filter, to_decibels, mel_filter_bank and mfcc. Each value is computed
// with the CPU's operations in the CPU's order (ndd/_ops/spectral.py,
// ndd/_cpu/filter_bank.pyx), each rounded on its own (no fused multiply-add).
#include "common.cuh"

// -- preemphasis_filter -------------------------------------------------------------
//
// Descriptor row per sample: 0 input offset, 1 output offset (elements, from the base
// pointers), 2 elements, 3 stride of the time axis, 4 its extent, 5 border (0 zero,
// 1 clamp, 2 reflect), 6 the coefficient (the bits of a double).
#define PREEMPHASIS_ROW 7
#define PREEMPHASIS_ZERO 0
#define PREEMPHASIS_REFLECT 2

__device__ inline float preemphasis_step(float x, float coeff, float before) {
  return __fsub_rn(x, __fmul_rn(before, coeff));
}
__device__ inline double preemphasis_step(double x, double coeff, double before) {
  return __dsub_rn(x, __dmul_rn(before, coeff));
}

#define PREEMPHASIS(TN, T)                                                                       \
  extern "C" __global__ void preemphasis_##TN(const T* __restrict__ in, T* __restrict__ out,     \
                                              const long long* __restrict__ rows) {             \
    const long long* seg = rows + (unsigned long long)blockIdx.y * PREEMPHASIS_ROW;             \
    const unsigned long long stride = (unsigned long long)seg[3], extent = (unsigned long long)seg[4]; \
    const int border = (int)seg[5];                                                              \
    const T coeff = (T)__longlong_as_double(seg[6]);                                             \
    const T* x = in + seg[0];                                                                    \
    T* y = out + seg[1];                                                                         \
    GRID_STRIDE_LOOP(i, (unsigned long long)seg[2]) {                                            \
      T before;                                                                                  \
      if ((i / stride) % extent != 0) {                                                          \
        before = x[i - stride];                                                                  \
      } else if (border == PREEMPHASIS_ZERO) {                                                   \
        y[i] = x[i];                                                                             \
        continue;                                                                                \
      } else {                                                                                   \
        /* A signal of one sample has no second one to mirror: it is its own border. */          \
        before = border == PREEMPHASIS_REFLECT && extent > 1 ? x[i + stride] : x[i];             \
      }                                                                                          \
      y[i] = preemphasis_step(x[i], coeff, before);                                              \
    }                                                                                            \
  }

PREEMPHASIS(f32, float)
PREEMPHASIS(f64, double)

// -- to_decibels ---------------------------------------------------------------------
//
// Descriptor row per sample: 0 input offset, 1 output offset, 2 elements, 3 the
// sample's entry in `inverse`.
#define DECIBELS_ROW 4
#define DECIBELS_THREADS 256

// inverse[first + blockIdx.y] = 1 / (the sample's largest value, NaN skipped), as the
// CPU computes it: the float64 reciprocal of the float32 maximum, rounded to float32;
// 1 for an empty sample or a maximum of 1.
extern "C" __global__ void decibels_inverse(const float* __restrict__ in, const long long* __restrict__ rows,
                                            long long first, float* __restrict__ inverse) {
  __shared__ float shared[DECIBELS_THREADS];
  const long long sample = first + blockIdx.y;
  const long long* seg = rows + sample * DECIBELS_ROW;
  const float* x = in + seg[0];
  const long long n = seg[2];
  float largest = __int_as_float(0x7fc00000);  // NaN: fmaxf takes any number over it
  for (long long i = threadIdx.x; i < n; i += blockDim.x) largest = fmaxf(largest, x[i]);
  shared[threadIdx.x] = largest;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if ((int)threadIdx.x < half) shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const float reference = n == 0 ? 1.0f : shared[0];
    inverse[seg[3]] = reference == 1.0f ? 1.0f : (float)(1.0 / (double)reference);
  }
}

// out = factor * log2(max(min_ratio, x * inverse)), factor = multiplier / log2(10);
// a NaN ratio gives min_ratio, as numpy's fmax.
extern "C" __global__ void to_decibels(const float* __restrict__ in, float* __restrict__ out,
                                       const long long* __restrict__ rows, const float* __restrict__ inverse,
                                       float factor, float min_ratio) {
  const long long* seg = rows + (unsigned long long)blockIdx.y * DECIBELS_ROW;
  const float scale = inverse[seg[3]];
  const float* x = in + seg[0];
  float* y = out + seg[1];
  GRID_STRIDE_LOOP(i, (unsigned long long)seg[2]) {
    y[i] = __fmul_rn(factor, log2f(fmaxf(min_ratio, __fmul_rn(x[i], scale))));
  }
}

// -- mel_filter_bank and mfcc --------------------------------------------------------
//
// A sample is (outer, length, inner) around the axis transformed; output element
// (o, k, i) is a sum over that axis of weights times input values, added in the
// CPU's order, each product and sum rounded on its own, starting from 0.
//
// mel_bands: filter k sums the entries starts[k] .. starts[k + 1] - 1 of (bins,
// weights), in the order the CPU adds them (the order of the bins). Descriptor row:
// 0 input offset, 1 output offset, 2 outer, 3 length (bins), 4 inner, 5 filters,
// 6 starts offset, 7 bins offset (in `indices`), 8 weights offset (in `weights`).
#define MEL_ROW 9

// y[j] = value(o, k, i) for every element j of a mel_bands or dct_rows row: outer
// index o, coefficient k (of `count`), inner index i, divided in j's type: ilp_loop
// gives 32-bit indices to rows of fewer than 2^31 elements, where a 64-bit division
// would cost a GPU dozens of instructions.
template <typename Value>
__device__ inline void audio_rows(long long outer, long long count, long long inner, float* y, const Value& value) {
  ilp_loop(
      (unsigned long long)(outer * count * inner),
      [&](auto j) {
        using I = decltype(j);
        const I rest = j / (I)inner, o = rest / (I)count;
        return value((long long)o, (long long)(rest - o * (I)count), (long long)(j - rest * (I)inner));
      },
      [&](auto j, float v) { y[j] = v; });
}

extern "C" __global__ void mel_bands(const float* __restrict__ in, float* __restrict__ out,
                                     const long long* __restrict__ rows, const long long* __restrict__ indices,
                                     const float* __restrict__ weights) {
  const long long* seg = rows + (unsigned long long)blockIdx.y * MEL_ROW;
  const long long length = seg[3], inner = seg[4], filters = seg[5];
  const long long* starts = indices + seg[6];
  const long long* bins = indices + seg[7];
  const float* w = weights + seg[8];
  const float* base = in + seg[0];
  audio_rows(seg[2], filters, inner, out + seg[1], [&](long long o, long long k, long long i) {
    const float* x = base + o * length * inner + i;
    float sum = 0.0f;
    for (long long e = starts[k]; e < starts[k + 1]; ++e) sum = __fadd_rn(sum, __fmul_rn(w[e], x[bins[e] * inner]));
    return sum;
  });
}

// dct_rows: coefficient k is the sum over n of matrix[k][n] * x[n], then, with a
// lifter, times scales[k]. Descriptor row: 0 input offset, 1 output offset, 2 outer,
// 3 length, 4 inner, 5 coefficients, 6 matrix offset, 7 scales offset (-1: none),
// both in `values`.
#define DCT_ROW 8

extern "C" __global__ void dct_rows(const float* __restrict__ in, float* __restrict__ out,
                                    const long long* __restrict__ rows, const float* __restrict__ values) {
  const long long* seg = rows + (unsigned long long)blockIdx.y * DCT_ROW;
  const long long length = seg[3], inner = seg[4], count = seg[5];
  const float* base = in + seg[0];
  const float* scales = seg[7] >= 0 ? values + seg[7] : nullptr;
  audio_rows(seg[2], count, inner, out + seg[1], [&](long long o, long long k, long long i) {
    const float* x = base + o * length * inner + i;
    const float* m = values + seg[6] + k * length;
    float sum = 0.0f;
    for (long long n = 0; n < length; ++n) sum = __fadd_rn(sum, __fmul_rn(m[n], x[n * inner]));
    if (scales) sum = __fmul_rn(sum, scales[k]);
    return sum;
  });
}

// -- spectrogram ---------------------------------------------------------------------
//
// Three kernels, by nfft: spectrogram_fft for a power of two, spectrogram_mixed for
// a transform of radices up to 13, spectrogram_dft for the others (a prime factor
// above 13). Each takes one window per block at a time (blockIdx.x strides over the
// windows, blockIdx.y is the sample): the block writes the window's frame (each sample
// times the window value in float32, as the CPU multiplies them, widened to float64;
// the signal extended by mirroring or with zeros). In spectrogram_dft each thread then
// sums the discrete Fourier
// transform of a bin in float64 from the twiddle table (cos and sin of 2 pi j / nfft,
// the CPU's float64 values), the frame's zeros up to nfft left out, and writes
// re^2 + im^2 or its square root, rounded to float32. The CPU's FFT (numpy's, in
// float64) adds in another order; both are float64 sums rounded to float32.
//
// Descriptor row per sample: 0 input offset, 1 output offset, 2 signal length,
// 3 windows, 4 padding before the first sample, 5 mirror (1) or zeros (0),
// 6 time-major output (1) or frequency-major (0).
// The frame (`length` values) is in dynamic shared memory, or, when `scratch` is not
// null, in the scratch at (blockIdx.y * gridDim.x + blockIdx.x) * length.
#define SPECTROGRAM_ROW 7

__device__ inline long long spectrogram_mirror(long long p, long long n) {
  if (n == 1) return 0;
  const long long period = 2 * (n - 1);
  p = (p < 0 ? -p : p) % period;
  return p >= n ? period - p : p;
}

// Value t of the frame of the window that starts at signal index `start`: the sample
// times the window's value in float32, widened; 0 past `length`, and outside the
// signal unless it is mirrored there.
__device__ inline double spectrogram_sample(const float* __restrict__ x, const float* __restrict__ window,
                                            long long t, long long start, long long n, long long length,
                                            bool mirror) {
  if (t >= length) return 0.0;
  long long p = start + t;
  const bool inside = p >= 0 && p < n;
  if (!inside && !mirror) return 0.0;
  if (!inside) p = spectrogram_mirror(p, n);
  return (double)__fmul_rn(x[p], window[t]);
}

// A block's frame of `values` float64: in dynamic shared memory, or in its part of
// `scratch` where that is given.
__device__ inline double* spectrogram_frame(double* scratch, long long values) {
  if (scratch) return scratch + ((long long)blockIdx.y * gridDim.x + blockIdx.x) * values;
  NDD_DYNAMIC_SHARED(double, shared);
  return shared;
}

// The block's sample (blockIdx.y), from its descriptor row.
struct SpectrogramSignal {
  const float* x;
  float* out;
  long long n, windows, before;
  bool mirror, time_major;

  // Value t of window w's frame.
  __device__ double sample(const float* __restrict__ window, long long w, long long t, long long step,
                           long long length) const {
    return spectrogram_sample(x, window, t, w * step - before, n, length, mirror);
  }

  // Bin k (of `bins`) of window w: re^2 + im^2, or its square root, in float32.
  __device__ void store(long long w, long long k, long long bins, double re, double im, int power) const {
    double value = re * re + im * im;
    if (power == 1) value = sqrt(value);
    out[time_major ? w * bins + k : k * windows + w] = (float)value;
  }
};

__device__ inline SpectrogramSignal spectrogram_signal(const float* in, float* out, const long long* rows) {
  const long long* seg = rows + (unsigned long long)blockIdx.y * SPECTROGRAM_ROW;
  return SpectrogramSignal{in + seg[0], out + seg[1], seg[2], seg[3], seg[4], seg[5] != 0, seg[6] != 0};
}

// Bin k of a real frame of 2 * half values, from the transform Z (re, im) of the
// half-size complex frame whose values are its even samples (real parts) and odd ones
// (imaginary parts): E + W^k O, E and O the transforms of the even and odd samples,
// from Z[a] = E + iO and conj(Z[c]) = E - iO, a = k mod half and c = (half - k) mod half.
__device__ inline void spectrogram_real_bin(const double* re, const double* im, int k, int a, int c,
                                            const double* __restrict__ cosines,
                                            const double* __restrict__ sines, double& xr, double& xi) {
  const double zr = re[a], zi = im[a], cr = re[c], ci = im[c];
  const double er = 0.5 * (zr + cr), ei = 0.5 * (zi - ci);
  const double orr = 0.5 * (zi + ci), oi = -0.5 * (zr - cr);
  const double wr = cosines[k], wi = -sines[k];
  xr = er + (wr * orr - wi * oi);
  xi = ei + (wr * oi + wi * orr);
}

extern "C" __global__ void spectrogram_dft(const float* __restrict__ in, float* __restrict__ out,
                                           const long long* __restrict__ rows, const float* __restrict__ window,
                                           const double* __restrict__ twiddles, double* scratch,
                                           long long length, long long step, long long nfft, int power) {
  const SpectrogramSignal signal = spectrogram_signal(in, out, rows);
  const long long bins = nfft / 2 + 1;
  double* frame = spectrogram_frame(scratch, length);
  const double* cosines = twiddles;
  const double* sines = twiddles + nfft;
  for (long long w = blockIdx.x; w < signal.windows; w += gridDim.x) {
    for (long long t = threadIdx.x; t < length; t += blockDim.x) frame[t] = signal.sample(window, w, t, step, length);
    __syncthreads();
    for (long long k = threadIdx.x; k < bins; k += blockDim.x) {
      double re = 0.0, im = 0.0;
      long long j = 0;
      for (long long t = 0; t < length; ++t) {
        re += frame[t] * cosines[j];
        im -= frame[t] * sines[j];
        j += k;
        if (j >= nfft) j -= nfft;
      }
      signal.store(w, k, bins, re, im, power);
    }
    __syncthreads();
  }
}

// spectrogram_fft: the same spectrogram for an nfft of a power of two (4 and up), by a
// real transform in float64: the frame's nfft real values (zeros past `length`) taken
// as nfft / 2 complex ones (even samples real, odd ones imaginary) in bit-reversed
// order, log2(nfft) - 1 passes of radix-2 butterflies (a thread each, twiddles from the
// same table), then each bin k of the real transform from bins k and nfft / 2 - k of
// that one, and its re^2 + im^2 (or the square root) rounded to float32: nfft log nfft
// work per window instead of the sums' length * nfft. The half-size transform's real
// and imaginary parts (nfft float64) are in dynamic shared memory or, with `scratch`,
// at (blockIdx.y * gridDim.x + blockIdx.x) * nfft of the scratch.
extern "C" __global__ void spectrogram_fft(const float* __restrict__ in, float* __restrict__ out,
                                           const long long* __restrict__ rows, const float* __restrict__ window,
                                           const double* __restrict__ twiddles, double* scratch,
                                           long long length, long long step, int log2n, int power) {
  const SpectrogramSignal signal = spectrogram_signal(in, out, rows);
  const int nfft = 1 << log2n, half = nfft >> 1, log2half = log2n - 1;
  double* re = spectrogram_frame(scratch, nfft);
  double* im = re + half;
  const double* cosines = twiddles;
  const double* sines = twiddles + nfft;
  for (long long w = blockIdx.x; w < signal.windows; w += gridDim.x) {
    for (int m = threadIdx.x; m < half; m += blockDim.x) {
      const int r = (int)(__brev((unsigned int)m) >> (32 - log2half));
      re[r] = signal.sample(window, w, 2 * m, step, length);
      im[r] = signal.sample(window, w, 2 * m + 1, step, length);
    }
    __syncthreads();
    for (int s = 0; s < log2half; ++s) {
      // Butterflies of span 2^s: b's pair is (i, i + 2^s), its twiddle e^(-2 pi i j / 2^(s+1)).
      for (int b = threadIdx.x; b < (half >> 1); b += blockDim.x) {
        const int j = b & ((1 << s) - 1);
        const int i = ((b >> s) << (s + 1)) + j;
        const int k = i + (1 << s);
        const int tw = j << (log2n - s - 1);
        const double wr = cosines[tw], wi = -sines[tw];
        const double tr = wr * re[k] - wi * im[k];
        const double ti = wr * im[k] + wi * re[k];
        re[k] = re[i] - tr;
        im[k] = im[i] - ti;
        re[i] += tr;
        im[i] += ti;
      }
      __syncthreads();
    }
    for (int k = threadIdx.x; k <= half; k += blockDim.x) {
      double xr, xi;
      spectrogram_real_bin(re, im, k, k & (half - 1), (half - k) & (half - 1), cosines, sines, xr, xi);
      signal.store(w, k, half + 1, xr, xi, power);
    }
    __syncthreads();
  }
}

// spectrogram_mixed: the same spectrogram for an nfft that is not a power of two but
// whose transform factors into radices of at most SPECTROGRAM_MAX_RADIX. An even nfft
// is transformed as nfft / 2 complex values, then split into its bins as
// spectrogram_fft does; an odd one as nfft complex values of zero imaginary part.
// The transform is a mixed-radix one in place: `plan` holds the number of passes, the
// radix of each (the first pass combines neighbours), then, for each of the `size`
// positions, the sample that goes there (the mixed-radix digits reversed). A pass of
// radix r after passes of product L makes transforms of L * r values, each from r of
// L values: its butterfly j of a group reads the r values L apart, turns value q by
// e^(-2 pi i q j / (L r)), and writes their r-point transform back in their places.
// The frame's real and imaginary parts (2 * size float64) are in dynamic shared memory
// or, with `scratch`, at (blockIdx.y * gridDim.x + blockIdx.x) * 2 * size of it.
#define SPECTROGRAM_MAX_RADIX 16

// One butterfly of radix R (a constant R keeps its values in registers; R = 0 takes
// `r`). `turn` is nfft / (L r): the twiddle table's step for a turn of 1 / (L r).
template <int R>
__device__ inline void spectrogram_butterfly(double* re, double* im, int at, int span, int j, int r, int turn,
                                             const double* __restrict__ cosines, const double* __restrict__ sines,
                                             int nfft) {
  const int radix = R ? R : r;
  double ar[R ? R : SPECTROGRAM_MAX_RADIX], ai[R ? R : SPECTROGRAM_MAX_RADIX];
#pragma unroll
  for (int q = 0; q < radix; ++q) {
    const double xr = re[at + q * span], xi = im[at + q * span];
    const int t = q * j * turn;
    const double wr = cosines[t], wi = -sines[t];
    ar[q] = wr * xr - wi * xi;
    ai[q] = wr * xi + wi * xr;
  }
  const int unit = nfft / radix;  // the table's step for a turn of 1 / r
#pragma unroll
  for (int p = 0; p < radix; ++p) {
    double sr = ar[0], si = ai[0];
    int t = 0;
#pragma unroll
    for (int q = 1; q < radix; ++q) {
      t += p * unit;
      if (t >= nfft) t -= nfft;
      const double wr = cosines[t], wi = -sines[t];
      sr += wr * ar[q] - wi * ai[q];
      si += wr * ai[q] + wi * ar[q];
    }
    re[at + p * span] = sr;
    im[at + p * span] = si;
  }
}

extern "C" __global__ void spectrogram_mixed(const float* __restrict__ in, float* __restrict__ out,
                                             const long long* __restrict__ rows, const float* __restrict__ window,
                                             const double* __restrict__ twiddles, const int* __restrict__ plan,
                                             double* scratch, long long length, long long step, int nfft,
                                             int power) {
  const SpectrogramSignal signal = spectrogram_signal(in, out, rows);
  const bool pairs = (nfft & 1) == 0;
  const int size = pairs ? nfft >> 1 : nfft, bins = nfft / 2 + 1, passes = plan[0];
  const int* radices = plan + 1;
  const int* order = plan + 1 + passes;
  double* re = spectrogram_frame(scratch, 2LL * size);
  double* im = re + size;
  const double* cosines = twiddles;
  const double* sines = twiddles + nfft;
  for (long long w = blockIdx.x; w < signal.windows; w += gridDim.x) {
    for (int m = threadIdx.x; m < size; m += blockDim.x) {
      const long long t = order[m];
      re[m] = signal.sample(window, w, pairs ? 2 * t : t, step, length);
      im[m] = pairs ? signal.sample(window, w, 2 * t + 1, step, length) : 0.0;
    }
    __syncthreads();
    int span = 1;
    for (int s = 0; s < passes; ++s) {
      const int r = radices[s], turn = nfft / (span * r);
      for (int b = threadIdx.x; b < size / r; b += blockDim.x) {
        const int j = b % span, at = (b - j) * r + j;
        switch (r) {
          case 2: spectrogram_butterfly<2>(re, im, at, span, j, r, turn, cosines, sines, nfft); break;
          case 3: spectrogram_butterfly<3>(re, im, at, span, j, r, turn, cosines, sines, nfft); break;
          case 4: spectrogram_butterfly<4>(re, im, at, span, j, r, turn, cosines, sines, nfft); break;
          case 5: spectrogram_butterfly<5>(re, im, at, span, j, r, turn, cosines, sines, nfft); break;
          default: spectrogram_butterfly<0>(re, im, at, span, j, r, turn, cosines, sines, nfft);
        }
      }
      span *= r;
      __syncthreads();
    }
    for (int k = threadIdx.x; k < bins; k += blockDim.x) {
      double xr, xi;
      if (pairs) {
        spectrogram_real_bin(re, im, k, k % size, (size - k) % size, cosines, sines, xr, xi);
      } else {
        xr = re[k];
        xi = im[k];
      }
      signal.store(w, k, bins, xr, xi, power);
    }
    __syncthreads();
  }
}

// -- nonsilent_region ----------------------------------------------------------------
//
// nonsilent_power_<type>: the mean square of every window of a signal, as the CPU
// computes it (ndd/_cpu/moving_power.pyx). A thread per run of windows: the run's
// first window summed afresh, each next one by adding the square of the sample that
// enters and subtracting the one that leaves. Samples of up to 16 bits are summed
// exactly in int64 (any runs give the same values); the others in float32, in the
// CPU's runs (the first one shorter, then every reset interval). Descriptor row per
// sample: 0 input offset, 1 windows, 2 window length, 3 first run, 4 run, 5 power
// offset (in `power`), 6 the bits of the float32 1 / window.
#define NONSILENT_POWER_ROW 7

__device__ inline float nonsilent_square(float v) { return __fmul_rn(v, v); }

// The loads of NONSILENT_CHUNK windows are issued before their sums: a thread's sums
// are a chain of dependent additions, and one load at a time would leave each step
// waiting for its sample.
#define NONSILENT_CHUNK 16

// A run's sums: from `start` to `stop` (exclusive) of the windows, in float32 as the
// CPU adds them (S float) or exactly in int64 (S long long).
template <typename T, typename S> __device__ inline S nonsilent_sq(T v) {
  if (sizeof(S) == sizeof(float)) return (S)nonsilent_square((float)v);
  return (S)((long long)v * (long long)v);
}
__device__ inline float nonsilent_add(float a, float b) { return __fadd_rn(a, b); }
__device__ inline long long nonsilent_add(long long a, long long b) { return a + b; }
__device__ inline float nonsilent_step(float total, float leaving, float entering) {
  return __fadd_rn(__fsub_rn(total, leaving), entering);
}
__device__ inline long long nonsilent_step(long long total, long long leaving, long long entering) {
  return total + (entering - leaving);
}

template <typename T, typename S>
__device__ inline void nonsilent_run(const T* __restrict__ x, float* __restrict__ out, long long start,
                                     long long stop, long long window, float scale) {
  S total = 0;
  long long k = 0;
  for (; k + NONSILENT_CHUNK <= window; k += NONSILENT_CHUNK) {
    S v[NONSILENT_CHUNK];
#pragma unroll
    for (int c = 0; c < NONSILENT_CHUNK; ++c) v[c] = nonsilent_sq<T, S>(x[start + k + c]);
#pragma unroll
    for (int c = 0; c < NONSILENT_CHUNK; ++c) total = nonsilent_add(total, v[c]);
  }
  for (; k < window; ++k) total = nonsilent_add(total, nonsilent_sq<T, S>(x[start + k]));
  out[start] = __fmul_rn((float)total, scale);
  long long i = start + 1;
  for (; i + NONSILENT_CHUNK <= stop; i += NONSILENT_CHUNK) {
    S entering[NONSILENT_CHUNK], leaving[NONSILENT_CHUNK];
#pragma unroll
    for (int c = 0; c < NONSILENT_CHUNK; ++c) {
      entering[c] = nonsilent_sq<T, S>(x[i + c + window - 1]);
      leaving[c] = nonsilent_sq<T, S>(x[i + c - 1]);
    }
#pragma unroll
    for (int c = 0; c < NONSILENT_CHUNK; ++c) {
      total = nonsilent_step(total, leaving[c], entering[c]);
      out[i + c] = __fmul_rn((float)total, scale);
    }
  }
  for (; i < stop; ++i) {
    total = nonsilent_step(total, nonsilent_sq<T, S>(x[i - 1]), nonsilent_sq<T, S>(x[i + window - 1]));
    out[i] = __fmul_rn((float)total, scale);
  }
}

#define NONSILENT_POWER(TN, T, EXACT)                                                                \
  extern "C" __global__ void nonsilent_power_##TN(const T* __restrict__ in, float* __restrict__ power, \
                                                  const long long* __restrict__ rows) {              \
    const long long* seg = rows + (unsigned long long)blockIdx.y * NONSILENT_POWER_ROW;             \
    const long long count = seg[1], window = seg[2], first_run = seg[3], run = seg[4];               \
    const float scale = __int_as_float((int)seg[6]);                                                 \
    const T* x = in + seg[0];                                                                        \
    float* out = power + seg[5];                                                                     \
    const unsigned long long runs =                                                                  \
        count <= first_run ? 1 : 1 + (unsigned long long)((count - first_run + run - 1) / run);      \
    GRID_STRIDE_LOOP(r, runs) {                                                                      \
      const long long start = r == 0 ? 0 : first_run + (long long)(r - 1) * run;                     \
      const long long stop = min(count, r == 0 ? first_run : start + run);                           \
      if (EXACT)                                                                                     \
        nonsilent_run<T, long long>(x, out, start, stop, window, scale);                             \
      else                                                                                           \
        nonsilent_run<T, float>(x, out, start, stop, window, scale);                                 \
    }                                                                                                \
  }

NONSILENT_POWER(f32, float, false)
NONSILENT_POWER(i8, signed char, true)
NONSILENT_POWER(u8, unsigned char, true)
NONSILENT_POWER(i16, short, true)
NONSILENT_POWER(u16, unsigned short, true)
NONSILENT_POWER(i32, int, false)
NONSILENT_POWER(u32, unsigned int, false)
NONSILENT_POWER(i64, long long, false)
NONSILENT_POWER(u64, unsigned long long, false)

// nonsilent_region: a block per sample (first + blockIdx.y) finds the first and last
// window whose power is at least the threshold: reference * factor, the reference
// being the largest power (NaN propagated, as numpy's max) or the given one.
// Outputs the first window's start and the length up to the end of the last window,
// or (0, 0): no window loud enough, or a largest power that is not above 0.
// Descriptor row per sample: 0 power offset, 1 windows, 2 window length, 3 output
// offset (in `begin` and `length`), 4 reference is the largest power (1) or given (0),
// 5 the bits of the float32 given reference, 6 the bits of the float32 factor.
#define NONSILENT_ROW 7
#define NONSILENT_THREADS 256

__device__ inline float nonsilent_max(float a, float b) { return (a > b || a != a) ? a : b; }

extern "C" __global__ void nonsilent_region(const float* __restrict__ power, const long long* __restrict__ rows,
                                            long long first, int* __restrict__ begin, int* __restrict__ length) {
  __shared__ float largest[NONSILENT_THREADS];
  __shared__ long long lowest[NONSILENT_THREADS];
  __shared__ long long highest[NONSILENT_THREADS];
  const long long* seg = rows + (first + blockIdx.y) * NONSILENT_ROW;
  const float* p = power + seg[0];
  const long long count = seg[1];
  float reference = __int_as_float((int)seg[5]);
  if (seg[4]) {
    float m = -__int_as_float(0x7f800000);  // -inf
    for (long long i = threadIdx.x; i < count; i += blockDim.x) m = nonsilent_max(m, p[i]);
    largest[threadIdx.x] = m;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
      if ((int)threadIdx.x < half) largest[threadIdx.x] = nonsilent_max(largest[threadIdx.x], largest[threadIdx.x + half]);
      __syncthreads();
    }
    reference = largest[0];
  }
  const bool silent = seg[4] && reference <= 0.0f;
  const float threshold = __fmul_rn(reference, __int_as_float((int)seg[6]));
  long long low = count, high = -1;
  if (!silent) {
    for (long long i = threadIdx.x; i < count; i += blockDim.x) {
      if (p[i] >= threshold) {
        low = min(low, i);
        high = max(high, i);
      }
    }
  }
  lowest[threadIdx.x] = low;
  highest[threadIdx.x] = high;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if ((int)threadIdx.x < half) {
      lowest[threadIdx.x] = min(lowest[threadIdx.x], lowest[threadIdx.x + half]);
      highest[threadIdx.x] = max(highest[threadIdx.x], highest[threadIdx.x + half]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const bool loud = highest[0] >= 0;
    begin[seg[3]] = loud ? (int)lowest[0] : 0;
    length[seg[3]] = loud ? (int)(highest[0] - lowest[0] + seg[2]) : 0;
  }
}

// -- audio_resample ------------------------------------------------------------------
//
// The CPU's windowed-sinc resampling (ndd/_cpu/sinc_resample.pyx), a thread per
// output frame: its position (blocks of 256 outputs, each block's first from a float64
// product, the others by adding the float32 step), the input samples it reaches, the
// filter read from the table by linear interpolation, and the sums in the CPU's order
// (one channel: four interleaved partial sums, then the rest one by one; more
// channels: each channel's products added one by one). `table` is the CPU's table
// for `lobes`, its entry 0 and last entry the zeros on either side.
//
// Descriptor row per sample: 0 input offset, 1 output offset (floats), 2 input frames,
// 3 output frames, 4 channels, 5 the step (the bits of a double: in_rate / out_rate).
#define RESAMPLE_ROW 6
#define RESAMPLE_PER_UNIT 32.0f

__device__ inline float resample_filter_at(const float* table, float centre, float x) {
  const float at = __fadd_rn(__fmul_rn(x, RESAMPLE_PER_UNIT), centre);
  const int k = (int)at;
  const float frac = __fsub_rn(at, (float)k);
  return __fadd_rn(table[k], __fmul_rn(frac, __fsub_rn(table[k + 1], table[k])));
}

extern "C" __global__ void resample_sinc(const float* __restrict__ in, float* __restrict__ out,
                                         const long long* __restrict__ rows, const float* __restrict__ table,
                                         int lobes) {
  const long long* seg = rows + (unsigned long long)blockIdx.y * RESAMPLE_ROW;
  const long long n_in = seg[2], channels = seg[4];
  const double step = __longlong_as_double(seg[5]);
  const float fstep = (float)step, centre = (float)(32 * lobes + 1);
  GRID_STRIDE_LOOP(o, (unsigned long long)seg[3]) {
    float* dst = out + seg[1] + (long long)o * channels;
    if (n_in == 0) {
      for (long long c = 0; c < channels; ++c) dst[c] = 0.0f;
      continue;
    }
    const long long block = (long long)o - (long long)o % 256;
    const double start = (double)block * step;
    const long long base = (long long)floor(start);
    float pos = (float)(start - (double)base);
    for (long long k = block; k < (long long)o; ++k) pos = __fadd_rn(pos, fstep);
    const int centre_tap = (int)ceilf(pos);
    int i = centre_tap - lobes, last = centre_tap + lobes;
    if (last + base > n_in) last = (int)(n_in - base);
    if (i + base < 0) i = (int)(-base);
    const float* src = in + seg[0] + base * channels;
    if (channels == 1) {
      float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      float x[4];
      for (int lane = 0; lane < 4; ++lane) x[lane] = __fsub_rn((float)(i + lane), pos);
      for (; i + 3 < last; i += 4) {
        for (int lane = 0; lane < 4; ++lane) {
          s[lane] = __fadd_rn(s[lane], __fmul_rn(src[i + lane], resample_filter_at(table, centre, x[lane])));
          x[lane] = __fadd_rn(x[lane], 4.0f);
        }
      }
      float sum = __fadd_rn(__fadd_rn(s[0], s[2]), __fadd_rn(s[1], s[3]));
      float at = __fsub_rn((float)i, pos);
      for (; i < last; ++i, at = __fadd_rn(at, 1.0f))
        sum = __fadd_rn(sum, __fmul_rn(src[i], resample_filter_at(table, centre, at)));
      dst[0] = sum;
    } else {
      for (long long c = 0; c < channels; ++c) {
        float sum = 0.0f, at = __fsub_rn((float)i, pos);
        for (int k = i; k < last; ++k, at = __fadd_rn(at, 1.0f))
          sum = __fadd_rn(sum, __fmul_rn(src[(long long)k * channels + c], resample_filter_at(table, centre, at)));
        dst[c] = sum;
      }
    }
  }
}

// The audio_resample conversions around the resampling, in float32 as the CPU does
// them: resample_unit_<type> gives in -1..1 (0..1 for unsigned types) from the type's
// values (times the float32 1 / largest), shifted between the signed and unsigned
// ranges when `shift` is 1 (to unsigned: (v + 1) * 0.5) or -1 (from unsigned: v * 2 - 1);
// resample_scale multiplies by the output type's largest value before the cast.
#define RESAMPLE_UNIT(TN, T)                                                                            \
  extern "C" __global__ void resample_unit_##TN(const T* __restrict__ in, float* __restrict__ out,     \
                                                float inverse, int shift, unsigned long long n) {     \
    GRID_STRIDE_LOOP(i, n) {                                                                          \
      float v = (float)in[i];                                                                         \
      if (inverse != 1.0f) v = __fmul_rn(v, inverse);                                                 \
      if (shift > 0) v = __fmul_rn(__fadd_rn(v, 1.0f), 0.5f);                                         \
      if (shift < 0) v = __fsub_rn(__fmul_rn(v, 2.0f), 1.0f);                                         \
      out[i] = v;                                                                                     \
    }                                                                                                 \
  }

RESAMPLE_UNIT(f32, float)
RESAMPLE_UNIT(i8, signed char)
RESAMPLE_UNIT(u8, unsigned char)
RESAMPLE_UNIT(i16, short)
RESAMPLE_UNIT(u16, unsigned short)
RESAMPLE_UNIT(i32, int)
RESAMPLE_UNIT(u32, unsigned int)

extern "C" __global__ void resample_scale(float* __restrict__ values, float factor, unsigned long long n) {
  GRID_STRIDE_LOOP(i, n) { values[i] = __fmul_rn(values[i], factor); }
}
