// The random operators (ndd.random.uniform, normal, coin_flip, beta, choice) on
// the GPU. Every element draws from its own Philox4x32-10 stream, so that the
// result depends only on the call's key, never on the launch shape:
//
//   key     = (k0, k1)
//   counter = (element index (low 32 bits), block number within the element's
//              stream, sample index ^ k3, k2 ^ element index (high 32 bits))
//
// k0..k3 are the first words of the RandomKey the call drew from its ndd RNG
// (ndd/_ops/gpu_random.py). Each kernel covers a whole batch in one launch:
// blockIdx.y walks the samples, x the elements of a sample. `layout` holds two
// values per sample: the element offset of its output and its element count.
#include "common.cuh"
#include "philox.cuh"

// The words of one element's stream, in order, four per Philox block.
struct ElementStream {
  unsigned int key0, key1;
  unsigned int counter[4];
  unsigned int block[4];
  int used;

  __device__ ElementStream(unsigned int k0, unsigned int k1, unsigned int k2, unsigned int k3,
                           unsigned int sample, unsigned long long element) {
    key0 = k0;
    key1 = k1;
    counter[0] = (unsigned int)element;
    counter[1] = 0;
    counter[2] = sample ^ k3;
    counter[3] = k2 ^ (unsigned int)(element >> 32);
    used = 4;
  }

  __device__ void refill() {
    philox4x32_10(counter, key0, key1, block);
    counter[1] += 1;
    used = 0;
  }

  __device__ unsigned int next() {
    if (used == 4) refill();
    return block[used++];
  }

  __device__ unsigned long long next64() {
    const unsigned long long lo = next();
    return lo | (unsigned long long)next() << 32;
  }

  // [0, 1) with 24 random bits (every float32 step of [0.5, 1)).
  __device__ float uniform_f32() { return (next() >> 8) * 0x1.0p-24f; }

  // [0, 1) with 53 random bits.
  __device__ double uniform_f64() {
    const unsigned long long hi = next() >> 5, lo = next() >> 6;
    return (hi * 67108864.0 + lo) * 0x1.0p-53;
  }

  // (0, 1]: safe under a logarithm.
  __device__ double uniform_open_f64() { return 1.0 - uniform_f64(); }

  // Box-Muller: one standard normal value from two uniforms (the sine half unused,
  // so that each element's value depends on its own stream only).
  __device__ float normal_f32() {
    const float u = __uint2float_rn(next()) * 0x1.0p-32f + 0x1.0p-33f;  // (0, 1]
    const float angle = uniform_f32() * 6.28318530717958647692f;
    return sqrtf(-2.0f * logf(u)) * cosf(angle);
  }

  __device__ double normal_f64() {
    const double u = uniform_open_f64();
    const double angle = uniform_f64() * 6.28318530717958647692;
    return sqrt(-2.0 * log(u)) * cos(angle);
  }

  // log of a Gamma(shape, 1) value (Marsaglia & Tsang, "A simple method for
  // generating gamma variables", 2000). Shapes below 1 draw Gamma(shape + 1) and
  // scale by u^(1/shape); logarithms keep tiny values from underflowing to 0.
  __device__ double log_gamma_variate(double shape) {
    double boost = 0.0;
    if (shape < 1.0) {
      boost = log(uniform_open_f64()) / shape;
      shape += 1.0;
    }
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / sqrt(9.0 * d);
    for (;;) {
      const double x = normal_f64();
      double v = 1.0 + c * x;
      if (v <= 0.0) continue;
      v = v * v * v;
      const double u = uniform_open_f64();
      const double x2 = x * x;
      if (u < 1.0 - 0.0331 * x2 * x2 || log(u) < 0.5 * x2 + d * (1.0 - v + log(v)))
        return log(d) + log(v) + boost;
    }
  }
};

// -- conversion of a double draw to the output type: the rules of ndd.cast ------
// (round half away from zero, saturate, NaN gives 0; float64 to float32 rounds to
// nearest).

template <typename T> constexpr bool is_float = false;
template <> constexpr bool is_float<float> = true;
template <> constexpr bool is_float<double> = true;

// Each integer type's range as doubles, and its largest value. As doubles, the
// largest 64-bit integers round up to 2**64 and 2**63: a value at or past them
// saturates.
template <typename T> struct IntegerRange;
#define INTEGER_RANGE(T, LO, HI, MAX)                                          \
  template <> struct IntegerRange<T> {                                         \
    static constexpr double lo = LO, hi = HI;                                  \
    static constexpr T max = MAX;                                              \
  };
INTEGER_RANGE(unsigned char, 0.0, 255.0, 255)
INTEGER_RANGE(signed char, -128.0, 127.0, 127)
INTEGER_RANGE(unsigned short, 0.0, 65535.0, 65535)
INTEGER_RANGE(short, -32768.0, 32767.0, 32767)
INTEGER_RANGE(unsigned int, 0.0, 4294967295.0, 4294967295u)
INTEGER_RANGE(int, -2147483648.0, 2147483647.0, 2147483647)
INTEGER_RANGE(unsigned long long, 0.0, 18446744073709551616.0, 18446744073709551615ull)
INTEGER_RANGE(long long, -9223372036854775808.0, 9223372036854775808.0, 9223372036854775807ll)

template <typename T> __device__ inline T convert_draw(double x) {
  if constexpr (is_float<T>) {
    return (T)x;
  } else {
    if (x != x) return 0;
    const double r = round(x);
    if (r >= IntegerRange<T>::hi) return IntegerRange<T>::max;
    if (r <= IntegerRange<T>::lo) return (T)IntegerRange<T>::lo;
    return (T)r;
  }
}

// The loops of every kernel: the samples along y, a sample's elements along x.
#define FOR_EACH_ELEMENT(layout, batch, sample, i, n, base)                    \
  for (unsigned int sample = blockIdx.y; sample < batch; sample += gridDim.y)  \
    for (unsigned long long base = layout[2 * sample], n = layout[2 * sample + 1], \
                            i = blockIdx.x * (unsigned long long)blockDim.x +  \
                                threadIdx.x;                                   \
         i < n; i += (unsigned long long)blockDim.x * gridDim.x)

#define KEY_PARAMS unsigned int k0, unsigned int k1, unsigned int k2, unsigned int k3

// -- uniform ---------------------------------------------------------------------

// params: lo, hi per sample. Every type scales a 53-bit draw; float32 results round
// it (as fine as float32 is near lo, as on the CPU) and stay below hi (rounding could
// reach it); integer types convert it.
template <typename T> __device__ inline T uniform_value(ElementStream& s, double lo, double hi) {
  if constexpr (is_float<T> && sizeof(T) == 4) {
    const float below_hi = nextafterf((float)hi, (float)lo);
    const float value = (float)(s.uniform_f64() * (hi - lo) + lo);
    return value < below_hi ? value : below_hi;
  } else if constexpr (is_float<T>) {
    const double below_hi = nextafter(hi, lo);
    const double value = s.uniform_f64() * (hi - lo) + lo;
    return value < below_hi ? value : below_hi;
  } else {
    return convert_draw<T>(s.uniform_f64() * (hi - lo) + lo);
  }
}

// random_uniform_values: `spans` holds the first index and the count of each
// sample's values in `table`; every value is equally likely (a 32-bit
// multiply-shift picks the index).
#define RANDOM_UNIFORM(TN, T)                                                  \
  extern "C" __global__ void random_uniform_range_##TN(                        \
      const unsigned long long* __restrict__ layout,                           \
      const double* __restrict__ params, T* __restrict__ out,                  \
      unsigned int batch, KEY_PARAMS) {                                        \
    FOR_EACH_ELEMENT(layout, batch, sample, i, n, base) {                      \
      ElementStream s(k0, k1, k2, k3, sample, i);                              \
      out[base + i] = uniform_value<T>(s, params[2 * sample], params[2 * sample + 1]); \
    }                                                                          \
  }                                                                            \
  extern "C" __global__ void random_uniform_values_##TN(                       \
      const unsigned long long* __restrict__ layout,                           \
      const unsigned long long* __restrict__ spans,                            \
      const double* __restrict__ table, T* __restrict__ out,                   \
      unsigned int batch, KEY_PARAMS) {                                        \
    FOR_EACH_ELEMENT(layout, batch, sample, i, n, base) {                      \
      ElementStream s(k0, k1, k2, k3, sample, i);                              \
      const unsigned int pick = __umulhi(s.next(), (unsigned int)spans[2 * sample + 1]); \
      out[base + i] = convert_draw<T>(table[spans[2 * sample] + pick]);     \
    }                                                                          \
  }

// -- normal ----------------------------------------------------------------------

// params: mean, stddev per sample; float32 in float32, the rest in double.
template <typename T> __device__ inline T normal_value(ElementStream& s, double mean, double stddev) {
  if constexpr (is_float<T> && sizeof(T) == 4) {
    return s.normal_f32() * (float)stddev + (float)mean;
  } else {
    return convert_draw<T>(mean + stddev * s.normal_f64());
  }
}

#define RANDOM_NORMAL(TN, T)                                                   \
  extern "C" __global__ void random_normal_##TN(                               \
      const unsigned long long* __restrict__ layout,                           \
      const double* __restrict__ params, T* __restrict__ out,                  \
      unsigned int batch, KEY_PARAMS) {                                        \
    FOR_EACH_ELEMENT(layout, batch, sample, i, n, base) {                      \
      ElementStream s(k0, k1, k2, k3, sample, i);                              \
      out[base + i] = normal_value<T>(s, params[2 * sample], params[2 * sample + 1]); \
    }                                                                          \
  }

#define RANDOM_NUMERIC_TYPES(MACRO)  \
  MACRO(u8, unsigned char)           \
  MACRO(i8, signed char)             \
  MACRO(u16, unsigned short)         \
  MACRO(i16, short)                  \
  MACRO(u32, unsigned int)           \
  MACRO(i32, int)                    \
  MACRO(u64, unsigned long long)     \
  MACRO(i64, long long)              \
  MACRO(f32, float)                  \
  MACRO(f64, double)

RANDOM_NUMERIC_TYPES(RANDOM_UNIFORM)
RANDOM_NUMERIC_TYPES(RANDOM_NORMAL)

// -- coin_flip -------------------------------------------------------------------

// params: the probability of a 1 per sample, compared with a 53-bit draw in [0, 1).
#define RANDOM_COIN_FLIP(TN, T)                                                \
  extern "C" __global__ void random_coin_flip_##TN(                            \
      const unsigned long long* __restrict__ layout,                           \
      const double* __restrict__ params, T* __restrict__ out,                  \
      unsigned int batch, KEY_PARAMS) {                                        \
    FOR_EACH_ELEMENT(layout, batch, sample, i, n, base) {                      \
      ElementStream s(k0, k1, k2, k3, sample, i);                              \
      out[base + i] = s.uniform_f64() < params[sample] ? 1 : 0;                \
    }                                                                          \
  }

RANDOM_COIN_FLIP(i32, int)
RANDOM_COIN_FLIP(u8, unsigned char)
RANDOM_COIN_FLIP(bool, bool)

// -- beta ------------------------------------------------------------------------

// params: alpha, beta per sample. X / (X + Y) for X ~ Gamma(alpha), Y ~ Gamma(beta),
// from their logarithms.
#define RANDOM_BETA(TN, T)                                                     \
  extern "C" __global__ void random_beta_##TN(                                 \
      const unsigned long long* __restrict__ layout,                           \
      const double* __restrict__ params, T* __restrict__ out,                  \
      unsigned int batch, KEY_PARAMS) {                                        \
    FOR_EACH_ELEMENT(layout, batch, sample, i, n, base) {                      \
      ElementStream s(k0, k1, k2, k3, sample, i);                              \
      const double log_x = s.log_gamma_variate(params[2 * sample]);            \
      const double log_y = s.log_gamma_variate(params[2 * sample + 1]);        \
      out[base + i] = (T)(1.0 / (1.0 + exp(log_y - log_x)));                   \
    }                                                                          \
  }

RANDOM_BETA(f32, float)
RANDOM_BETA(f64, double)

// -- choice ----------------------------------------------------------------------

// One pick per thread. `picks` has CHOICE_FIELDS values per sample: the output's
// byte offset, the number of picks, the byte offset of the sample's `a` in `source`,
// the bytes of one row of `a`, the number of choices, the index of the sample's
// cumulative probabilities in `cumulative` (CHOICE_NO_P when all are equally
// likely). Without a source (a scalar `a`), a pick writes its own index in the
// row's bytes: the low bytes of the little-endian 64-bit index, as `a`'s integer
// type holds it (the index is below `a`, so it fits).
#define CHOICE_FIELDS 6
#define CHOICE_NO_P 0xFFFFFFFFFFFFFFFFull

extern "C" __global__ void random_choice(const unsigned long long* __restrict__ picks,
                                         const double* __restrict__ cumulative,
                                         const unsigned char* __restrict__ source,
                                         unsigned char* __restrict__ out, unsigned int batch,
                                         KEY_PARAMS) {
  for (unsigned int sample = blockIdx.y; sample < batch; sample += gridDim.y) {
    const unsigned long long* f = picks + CHOICE_FIELDS * sample;
    const unsigned long long out_offset = f[0], n = f[1], source_offset = f[2], row_bytes = f[3],
                             count = f[4], p_start = f[5];
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)blockDim.x * gridDim.x) {
      ElementStream s(k0, k1, k2, k3, sample, i);
      unsigned long long pick;
      if (p_start == CHOICE_NO_P) {
        pick = __umul64hi(s.next64(), count);
      } else {
        // The first choice whose cumulative probability exceeds a uniform draw
        // scaled to the total (numpy's searchsorted, side="right").
        const double* c = cumulative + p_start;
        const double x = s.uniform_f64() * c[count - 1];
        unsigned long long lo = 0, hi = count;
        while (lo < hi) {
          const unsigned long long mid = lo + (hi - lo) / 2;
          if (c[mid] > x) hi = mid; else lo = mid + 1;
        }
        pick = lo < count ? lo : count - 1;
      }
      unsigned char* target = out + out_offset + i * row_bytes;
      if (source == nullptr) {
        for (unsigned long long b = 0; b < row_bytes; ++b) target[b] = (unsigned char)(pick >> (8 * b));
      } else {
        const unsigned char* row = source + source_offset + pick * row_bytes;
        for (unsigned long long b = 0; b < row_bytes; ++b) target[b] = row[b];
      }
    }
  }
}

// -- noise (ndd.noise.gaussian, salt_and_pepper, shot) ----------------------------
//
// The input's values with noise, converted back to the input's type as the CPU
// converts them (integers rounded half away from zero and saturated). `layout`
// holds the output's element offset and element count per sample, `in_layout`
// the input's element offset; params has NOISE_PARAMS values per sample.
#define NOISE_PARAMS 6

template <typename T> __device__ inline double noise_value(T x) { return (double)x; }

// The parameters of every noise kernel.
#define NOISE_KERNEL(NAME, TN, T)                                              \
  extern "C" __global__ void noise_##NAME##_##TN(                              \
      const unsigned long long* __restrict__ layout,                           \
      const unsigned long long* __restrict__ in_layout,                        \
      const double* __restrict__ params, const T* __restrict__ in,             \
      T* __restrict__ out, unsigned int batch, KEY_PARAMS)

// gaussian: params mean, stddev; each value plus an N(mean, stddev) draw in float32.
#define NOISE_GAUSSIAN(TN, T)                                                  \
  NOISE_KERNEL(gaussian, TN, T) {                                             \
    FOR_EACH_ELEMENT(layout, batch, sample, i, n, base) {                      \
      ElementStream s(k0, k1, k2, k3, sample, i);                              \
      const double* p = params + NOISE_PARAMS * sample;                        \
      const float noise = s.normal_f32() * (float)p[1] + (float)p[0];          \
      const double value = (double)noise + noise_value(in[in_layout[sample] + i]); \
      out[base + i] = is_float<T> ? (T)(float)value : convert_draw<T>((float)value); \
    }                                                                          \
  }

// salt_and_pepper: params salt threshold (prob * salt_vs_pepper), prob, salt and
// pepper (already of the type), channels per pixel, channel axis (0: first, 1:
// last; one draw per value when channels is 1). One draw per pixel: below the salt
// threshold the pixel becomes salt, else below prob pepper, else it is kept.
#define NOISE_SALT_AND_PEPPER(TN, T)                                           \
  NOISE_KERNEL(salt_and_pepper, TN, T) {                                      \
    FOR_EACH_ELEMENT(layout, batch, sample, i, n, base) {                      \
      const double* p = params + NOISE_PARAMS * sample;                        \
      const unsigned long long channels = (unsigned long long)p[4];            \
      const unsigned long long pixels = n / channels;                          \
      if (i >= pixels) continue;                                               \
      ElementStream s(k0, k1, k2, k3, sample, i);                              \
      const float draw = s.uniform_f32();                                      \
      const bool salt = draw < (float)p[0], pepper = draw < (float)p[1];       \
      const bool last = p[5] != 0.0;                                           \
      for (unsigned long long c = 0; c < channels; ++c) {                      \
        const unsigned long long at = last ? i * channels + c : c * pixels + i; \
        out[base + at] = salt ? convert_draw<T>(p[2]) : (pepper ? convert_draw<T>(p[3]) : in[in_layout[sample] + at]); \
      }                                                                        \
    }                                                                          \
  }

// A Poisson(rate) count: the product of uniforms below 10 (Knuth), else the
// transformed rejection with squeeze of Hormann ("The transformed rejection method
// for generating Poisson random variables", 1993), as numpy does.
__device__ inline double poisson_count(ElementStream& s, double rate) {
  if (!(rate > 0.0)) return 0.0;
  if (rate < 10.0) {
    const double limit = exp(-rate);
    double product = s.uniform_open_f64();
    double count = 0.0;
    while (product > limit) {
      product *= s.uniform_open_f64();
      count += 1.0;
    }
    return count;
  }
  const double slam = sqrt(rate), loglam = log(rate);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    const double u = s.uniform_f64() - 0.5, v = s.uniform_f64();
    const double us = 0.5 - fabs(u);
    const double k = floor((2.0 * a / us + b) * u + rate + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -rate + k * loglam - lgamma(k + 1.0)) return k;
  }
}

// shot: params factor; poisson(max(0, x / factor)) * factor (0 when factor is 0).
#define NOISE_SHOT(TN, T)                                                      \
  NOISE_KERNEL(shot, TN, T) {                                                 \
    FOR_EACH_ELEMENT(layout, batch, sample, i, n, base) {                      \
      ElementStream s(k0, k1, k2, k3, sample, i);                              \
      const double factor = params[NOISE_PARAMS * sample];                     \
      float value = 0.0f;                                                      \
      if (factor != 0.0) {                                                     \
        const double rate = noise_value(in[in_layout[sample] + i]) / factor;    \
        value = (float)poisson_count(s, rate > 0.0 ? rate : 0.0) * (float)factor; \
      }                                                                        \
      out[base + i] = is_float<T> ? (T)value : convert_draw<T>(value);         \
    }                                                                          \
  }

#define NOISE_KERNELS(TN, T) NOISE_GAUSSIAN(TN, T) NOISE_SALT_AND_PEPPER(TN, T) NOISE_SHOT(TN, T)

NOISE_KERNELS(u8, unsigned char)
NOISE_KERNELS(i8, signed char)
NOISE_KERNELS(u16, unsigned short)
NOISE_KERNELS(i16, short)
NOISE_KERNELS(i32, int)
NOISE_KERNELS(i64, long long)
NOISE_KERNELS(f32, float)
