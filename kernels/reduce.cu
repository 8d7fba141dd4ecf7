// Reductions of ndd.reductions (ndd/_ops/gpu_reductions.py launches them): sum,
// mean, mean_square, rms, min, max, variance and std_dev over any set of axes of
// every sample of a batch, in one launch.
//
// A sample is seen as its kept dimensions (the output, row-major) and its
// reduced dimensions, each a list of (extent, element stride) after the host
// dropped extent-1 dimensions and merged neighbours of the same kind. The work
// is cut into units: one output element and one chunk of `chunk_len` reduced
// elements. `group` threads (a power of two, at most a warp) share a unit, each
// striding over the chunk, then combine through warp shuffles. With one chunk
// per output (stage 0) the group writes the finished output element; otherwise
// stage 1 writes each chunk's accumulator and stage 2, the same kernel reading
// those accumulators as a sample of shape (outputs, chunks), finishes them.
//
// Accumulators follow the CPU implementation (ndd/_ops/reductions.py):
//   * float results: float64 sums, divided and rooted in float64, rounded once;
//   * integer sums: 64-bit sums that wrap around, as numpy's;
//   * integer means, mean squares and rms: exact 192-bit sums (a square of a
//     64-bit value needs 128 bits), divided rounding toward zero, saturated;
//   * min and max: in the input type, NaN skipped (only an all-NaN slice gives
//     NaN), the type's limits for an empty reduction.
#include "common.cuh"

// Per-sample descriptor: DESC_WORDS int64 words (the layout gpu_reductions.py writes).
#define MAX_DIMS 8
#define D_IN 0          // element offset of the sample's input
#define D_MEAN 1        // element offset of its mean (variance, std_dev)
#define D_OUT 2         // element offset of its output (stage 1: of its accumulators)
#define D_NOUT 3        // output elements
#define D_NRED 4        // reduced elements in this stage
#define D_CHUNKS 5      // chunks per output element
#define D_UNIT_START 6  // index of the sample's first unit in the launch
#define D_COUNT 7       // elements reduced per output (the divisor of a mean)
#define D_NKEPT 8       // kept dimensions
#define D_NREDDIMS 9    // reduced dimensions
#define D_DIMS 10       // kept extents, kept strides, reduced extents, reduced strides
#define DESC_WORDS (D_DIMS + 4 * MAX_DIMS)

typedef unsigned long long u64;
typedef long long i64;

// -- 192-bit two's-complement integers: exact sums of 64-bit values and squares --

struct I192 {
  u64 w0, w1, w2;
};

__device__ inline I192 i192_from_signed(i64 v) {
  u64 ext = v < 0 ? ~0ull : 0ull;
  return I192{(u64)v, ext, ext};
}

__device__ inline I192 i192_from_unsigned(u64 v) { return I192{v, 0ull, 0ull}; }

__device__ inline I192 i192_add(I192 a, I192 b) {
  I192 s;
  s.w0 = a.w0 + b.w0;
  u64 carry = s.w0 < a.w0;
  u64 t = a.w1 + b.w1;
  u64 carry1 = t < a.w1;
  s.w1 = t + carry;
  carry1 += s.w1 < t;
  s.w2 = a.w2 + b.w2 + carry1;
  return s;
}

__device__ inline I192 i192_sub(I192 a, I192 b) {
  I192 not_b{~b.w0, ~b.w1, ~b.w2};
  return i192_add(i192_add(a, not_b), I192{1ull, 0ull, 0ull});
}

__device__ inline bool i192_negative(I192 a) { return (i64)a.w2 < 0; }

__device__ inline I192 i192_negate(I192 a) { return i192_sub(I192{0ull, 0ull, 0ull}, a); }

// Unsigned comparison a < b.
__device__ inline bool u192_less(I192 a, I192 b) {
  if (a.w2 != b.w2) return a.w2 < b.w2;
  if (a.w1 != b.w1) return a.w1 < b.w1;
  return a.w0 < b.w0;
}

__device__ inline I192 u192_shift_right(I192 a, int bits) {  // 0 < bits < 64
  return I192{(a.w0 >> bits) | (a.w1 << (64 - bits)), (a.w1 >> bits) | (a.w2 << (64 - bits)), a.w2 >> bits};
}

__device__ inline u64 u192_bit(I192 a, int i) {
  u64 word = i < 64 ? a.w0 : (i < 128 ? a.w1 : a.w2);
  return (word >> (i & 63)) & 1ull;
}

__device__ inline void u192_set_bit(I192& a, int i) {
  u64 bit = 1ull << (i & 63);
  if (i < 64) a.w0 |= bit;
  else if (i < 128) a.w1 |= bit;
  else a.w2 |= bit;
}

// Index of the highest set bit, -1 for zero.
__device__ inline int u192_top_bit(I192 a) {
  if (a.w2) return 191 - __clzll((i64)a.w2);
  if (a.w1) return 127 - __clzll((i64)a.w1);
  if (a.w0) return 63 - __clzll((i64)a.w0);
  return -1;
}

// floor(a / n), n > 0: long division a bit at a time (once per output element).
__device__ inline I192 u192_divide(I192 a, u64 n) {
  I192 q{0ull, 0ull, 0ull};
  u64 rem = 0;
  for (int i = u192_top_bit(a); i >= 0; --i) {
    u64 top = rem >> 63;  // the remainder exceeds 64 bits for a moment
    rem = (rem << 1) | u192_bit(a, i);
    if (top || rem >= n) {
      rem -= n;
      u192_set_bit(q, i);
    }
  }
  return q;
}

// floor(sqrt(a)), digit by digit.
__device__ inline I192 u192_isqrt(I192 a) {
  I192 res{0ull, 0ull, 0ull};
  int top = u192_top_bit(a);
  if (top < 0) return res;
  I192 bit{0ull, 0ull, 0ull};
  u192_set_bit(bit, top & ~1);
  while (bit.w0 | bit.w1 | bit.w2) {
    I192 trial = i192_add(res, bit);
    if (!u192_less(a, trial)) {
      a = i192_sub(a, trial);
      res = i192_add(u192_shift_right(res, 1), bit);
    } else {
      res = u192_shift_right(res, 1);
    }
    bit = u192_shift_right(bit, 2);
  }
  return res;
}

// -- the output and input types ------------------------------------------------

template <typename T> struct limits;
#define LIMITS(T, SIGNED, LO, HI)                              \
  template <> struct limits<T> {                               \
    static constexpr bool is_signed = SIGNED;                  \
    static constexpr bool is_float = (T)0.5f != (T)0;           \
    __device__ static constexpr T lowest() { return LO; }      \
    __device__ static constexpr T highest() { return HI; }     \
  };
LIMITS(signed char, true, -128, 127)
LIMITS(short, true, -32768, 32767)
LIMITS(int, true, -2147483647 - 1, 2147483647)
LIMITS(long long, true, -9223372036854775807LL - 1, 9223372036854775807LL)
LIMITS(unsigned char, false, 0, 255)
LIMITS(unsigned short, false, 0, 65535)
LIMITS(unsigned int, false, 0u, 4294967295u)
LIMITS(unsigned long long, false, 0ull, 18446744073709551615ull)
LIMITS(float, true, -3.402823466e+38f, 3.402823466e+38f)
#undef LIMITS

// An exact value (sign and magnitude) clipped to the range of integer type Out.
template <typename Out> __device__ inline Out saturate(bool negative, I192 magnitude) {
  if (negative && !(magnitude.w0 | magnitude.w1 | magnitude.w2)) negative = false;
  if (magnitude.w1 | magnitude.w2) return negative ? limits<Out>::lowest() : limits<Out>::highest();
  u64 m = magnitude.w0;
  if (negative) {
    if (!limits<Out>::is_signed) return 0;
    // |lowest| = highest + 1
    if (m > (u64)limits<Out>::highest() + 1ull) return limits<Out>::lowest();
    return (Out)(0ull - m);
  }
  return m > (u64)limits<Out>::highest() ? limits<Out>::highest() : (Out)m;
}

// The warp shuffle of an accumulator (types narrower than 32 bits travel as int).
__device__ inline double shuffle_down(double v, int delta, int width) {
  return __shfl_down_sync(0xffffffffu, v, delta, width);
}
__device__ inline float shuffle_down(float v, int delta, int width) {
  return __shfl_down_sync(0xffffffffu, v, delta, width);
}
__device__ inline u64 shuffle_down(u64 v, int delta, int width) {
  return __shfl_down_sync(0xffffffffu, v, delta, width);
}
__device__ inline i64 shuffle_down(i64 v, int delta, int width) {
  return __shfl_down_sync(0xffffffffu, v, delta, width);
}
__device__ inline unsigned int shuffle_down(unsigned int v, int delta, int width) {
  return __shfl_down_sync(0xffffffffu, v, delta, width);
}
__device__ inline int shuffle_down(int v, int delta, int width) {
  return __shfl_down_sync(0xffffffffu, v, delta, width);
}
__device__ inline short shuffle_down(short v, int delta, int width) {
  return (short)__shfl_down_sync(0xffffffffu, (int)v, delta, width);
}
__device__ inline unsigned short shuffle_down(unsigned short v, int delta, int width) {
  return (unsigned short)__shfl_down_sync(0xffffffffu, (unsigned int)v, delta, width);
}
__device__ inline signed char shuffle_down(signed char v, int delta, int width) {
  return (signed char)__shfl_down_sync(0xffffffffu, (int)v, delta, width);
}
__device__ inline unsigned char shuffle_down(unsigned char v, int delta, int width) {
  return (unsigned char)__shfl_down_sync(0xffffffffu, (unsigned int)v, delta, width);
}
__device__ inline I192 shuffle_down(I192 v, int delta, int width) {
  return I192{shuffle_down(v.w0, delta, width), shuffle_down(v.w1, delta, width),
              shuffle_down(v.w2, delta, width)};
}

// -- the reductions: accumulator, identity, element, combination, result -------
// mode: 0 the accumulator itself, 1 divided by (count - ddof), 2 its square root.

enum Element { PLAIN, SQUARE, DEVIATION };

// Float results: float64 sums.
template <typename In, Element E> struct FloatSum {
  typedef double Acc;
  typedef float Out;
  __device__ static Acc identity() { return 0.0; }
  __device__ static Acc element(In x, double mean) {
    double v = (double)x;
    if (E == PLAIN) return v;
    if (E == DEVIATION) v -= mean;
    return v * v;
  }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
  __device__ static Out finish(Acc a, i64 count, i64 ddof, int mode) {
    if (mode == 0) return (float)a;
    double v = a / (double)(count - ddof);
    return (float)(mode == 2 ? sqrt(v) : v);
  }
};

// Integer sums into an integer type: 64-bit, wrapping around (in unsigned
// arithmetic, where wrapping is defined), then converted modulo the output range.
template <typename In, typename OutT> struct WrappingSum {
  typedef u64 Acc;
  typedef OutT Out;
  __device__ static Acc identity() { return 0ull; }
  __device__ static Acc element(In x, double) {
    return limits<In>::is_signed ? (u64)(i64)x : (u64)x;
  }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
  __device__ static Out finish(Acc a, i64, i64, int) { return (Out)a; }
};

// Integer means, mean squares and rms: exact sums, truncated quotients.
template <typename In, typename OutT, Element E> struct ExactSum {
  typedef I192 Acc;
  typedef OutT Out;
  __device__ static Acc identity() { return I192{0ull, 0ull, 0ull}; }
  __device__ static Acc element(In x, double) {
    if (E == PLAIN) return limits<In>::is_signed ? i192_from_signed((i64)x) : i192_from_unsigned((u64)x);
    u64 m = limits<In>::is_signed ? ((i64)x < 0 ? 0ull - (u64)(i64)x : (u64)(i64)x) : (u64)x;
    return I192{m * m, __umul64hi(m, m), 0ull};
  }
  __device__ static Acc combine(Acc a, Acc b) { return i192_add(a, b); }
  __device__ static Out finish(Acc a, i64 count, i64, int mode) {
    if (count == 0) return 0;  // as the CPU: an empty integer mean is 0
    bool negative = i192_negative(a);
    I192 q = u192_divide(negative ? i192_negate(a) : a, (u64)count);
    if (mode == 2) q = u192_isqrt(q);
    return saturate<Out>(negative, q);
  }
};

// min and max in the input type. The float identity is NaN, which any number
// replaces; an empty reduction gives the type's limit instead.
__device__ inline bool is_nan(float x) { return x != x; }
template <typename T> __device__ inline bool is_nan(T) { return false; }

template <typename In, bool LARGEST> struct Extreme {
  typedef In Acc;
  typedef In Out;
  __device__ static Acc identity() {
    if constexpr (limits<In>::is_float) return (In)__int_as_float(0x7fc00000);
    return LARGEST ? limits<In>::lowest() : limits<In>::highest();
  }
  __device__ static Acc element(In x, double) { return x; }
  __device__ static Acc combine(Acc a, Acc b) {
    if (is_nan(b)) return a;
    if (is_nan(a)) return b;
    return (LARGEST ? b > a : b < a) ? b : a;
  }
  __device__ static Out finish(Acc a, i64 count, i64, int) {
    if (count == 0) return LARGEST ? limits<In>::lowest() : limits<In>::highest();
    return a;
  }
};

// -- the kernel ------------------------------------------------------------------

// Element offset of flat index `index` over `n` dimensions (row-major) of `dims`:
// extents at dims[0..n), strides at dims[MAX_DIMS..MAX_DIMS + n).
__device__ inline i64 dims_offset(const i64* dims, int n, i64 index) {
  if (n == 1) return index * dims[MAX_DIMS];
  i64 offset = 0;
  for (int d = n - 1; d >= 0; --d) {
    i64 extent = dims[d];
    offset += (index % extent) * dims[MAX_DIMS + d];
    index /= extent;
  }
  return offset;
}

// The sample whose units include unit `u` (descriptors are in unit order).
__device__ inline int sample_of(const i64* desc, int num_samples, i64 u) {
  int lo = 0, hi = num_samples - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (desc[mid * DESC_WORDS + D_UNIT_START] <= u) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

template <typename In, typename Op>
__device__ void reduce(const void* input, const float* mean, void* output, const i64* desc, int num_samples,
                       i64 total_units, i64 chunk_len, int group, int stage, int mode, i64 ddof) {
  typedef typename Op::Acc Acc;
  typedef typename Op::Out Out;
  const i64 groups_per_block = blockDim.x / group;
  const int lane = threadIdx.x % group;
  // Every thread of a block runs the same iterations, so that all reach the shuffles.
  const i64 step = (i64)gridDim.x * groups_per_block;
  for (i64 base = blockIdx.x * groups_per_block; base < total_units; base += step) {
    const i64 u = base + threadIdx.x / group;
    const bool active = u < total_units;
    Acc acc = Op::identity();
    const i64* d = desc;
    i64 out_index = 0, chunk = 0;
    if (active) {
      d = desc + (i64)sample_of(desc, num_samples, u) * DESC_WORDS;
      const i64 local = u - d[D_UNIT_START];
      out_index = local % d[D_NOUT];
      chunk = local / d[D_NOUT];
      const i64 start = chunk * chunk_len;
      const i64 end = min(start + chunk_len, d[D_NRED]);
      const i64 kept = dims_offset(d + D_DIMS, (int)d[D_NKEPT], out_index);
      const int reduced_dims = (int)d[D_NREDDIMS];
      const i64* reduced = d + D_DIMS + 2 * MAX_DIMS;
      if (stage == 2) {
        const Acc* in = static_cast<const Acc*>(input) + d[D_IN] + kept;
        for (i64 r = start + lane; r < end; r += group)
          acc = Op::combine(acc, in[dims_offset(reduced, reduced_dims, r)]);
      } else {
        const In* in = static_cast<const In*>(input) + d[D_IN] + kept;
        // The output element's mean (variance and std_dev; the other kernels get none).
        const double mu = mean == nullptr ? 0.0 : (double)mean[d[D_MEAN] + out_index];
        for (i64 r = start + lane; r < end; r += group)
          acc = Op::combine(acc, Op::element(in[dims_offset(reduced, reduced_dims, r)], mu));
      }
    }
    for (int delta = group / 2; delta > 0; delta /= 2)
      acc = Op::combine(acc, shuffle_down(acc, delta, group));
    if (active && lane == 0) {
      if (stage == 1) {
        static_cast<Acc*>(output)[d[D_OUT] + out_index * d[D_CHUNKS] + chunk] = acc;
      } else {
        static_cast<Out*>(output)[d[D_OUT] + out_index] = Op::finish(acc, d[D_COUNT], ddof, mode);
      }
    }
  }
}

#define REDUCE_KERNEL(NAME, IN, ...)                                                                   \
  extern "C" __global__ void NAME(const void* input, const float* mean, void* output, const i64* desc, \
                                  int num_samples, i64 total_units, i64 chunk_len, int group, int stage, \
                                  int mode, i64 ddof) {                                                 \
    reduce<IN, __VA_ARGS__>(input, mean, output, desc, num_samples, total_units, chunk_len, group, stage, \
                            mode, ddof);                                                                \
  }

// Float results, from every input type.
#define FLOAT_KERNELS(TN, T)                                          \
  REDUCE_KERNEL(reduce_float_plain_##TN, T, FloatSum<T, PLAIN>)       \
  REDUCE_KERNEL(reduce_float_square_##TN, T, FloatSum<T, SQUARE>)     \
  REDUCE_KERNEL(reduce_float_deviation_##TN, T, FloatSum<T, DEVIATION>) \
  REDUCE_KERNEL(reduce_min_##TN, T, Extreme<T, false>)                \
  REDUCE_KERNEL(reduce_max_##TN, T, Extreme<T, true>)

// Integer results of integer inputs. WN/W: the 64-bit type of the input's signedness.
#define INTEGER_KERNELS(TN, T, WN, W)                                      \
  FLOAT_KERNELS(TN, T)                                                     \
  REDUCE_KERNEL(reduce_wrap_##TN##_##WN, T, WrappingSum<T, W>)             \
  REDUCE_KERNEL(reduce_exact_plain_##TN##_##TN, T, ExactSum<T, T, PLAIN>)   \
  REDUCE_KERNEL(reduce_exact_square_##TN##_##WN, T, ExactSum<T, W, SQUARE>)

// Narrower integers also have their own type as a sum and rms result.
#define NARROW_INTEGER_KERNELS(TN, T, WN, W)                              \
  INTEGER_KERNELS(TN, T, WN, W)                                           \
  REDUCE_KERNEL(reduce_wrap_##TN##_##TN, T, WrappingSum<T, T>)            \
  REDUCE_KERNEL(reduce_exact_square_##TN##_##TN, T, ExactSum<T, T, SQUARE>)

FLOAT_KERNELS(f32, float)
NARROW_INTEGER_KERNELS(i8, signed char, i64, long long)
NARROW_INTEGER_KERNELS(i16, short, i64, long long)
NARROW_INTEGER_KERNELS(i32, int, i64, long long)
INTEGER_KERNELS(i64, long long, i64, long long)
NARROW_INTEGER_KERNELS(u8, unsigned char, u64, unsigned long long)
NARROW_INTEGER_KERNELS(u16, unsigned short, u64, unsigned long long)
NARROW_INTEGER_KERNELS(u32, unsigned int, u64, unsigned long long)
INTEGER_KERNELS(u64, unsigned long long, u64, unsigned long long)
