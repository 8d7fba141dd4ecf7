// ndd.normalize (ndd/_ops/gpu_normalize.py launches these): the statistics over
// the reduced axes, then out = (x - mean) * factor + shift, as the CPU computes
// them (ndd/_ops/normalize.py): sums in float64, each deviation and its square in
// float32, the result in float32 converted to the output type.
//
// A statistic (a mean and a factor) covers the reduced elements of one or more
// parts (a sample's, or, with batch=True, every sample's). One block per
// statistic (first + blockIdx.y) sums them: its threads stride over the elements, then
// reduce in shared memory.
#include "common.cuh"

#define NORMALIZE_MAX_DIMS 6
#define NORMALIZE_THREADS 256
// Statistic row: 0 first part, 1 parts, 2 elements in all its parts.
#define STAT_ROW 3
// Part row: 0 input offset (elements), 1 elements, 2 dims, then per reduced
// dimension (outermost first): extent, stride.
#define PART_ROW (3 + 2 * NORMALIZE_MAX_DIMS)
// Apply row: 0 input offset, 1 output offset, 2 elements, 3 dims, 4 statistics
// offset, then per dimension: extent, statistics stride (0 along reduced axes).
#define APPLY_ROW (5 + 2 * NORMALIZE_MAX_DIMS)

template <typename T> __device__ inline float normalize_load(const T* p) { return (float)*p; }
__device__ inline float normalize_load(const int* p) { return __int2float_rn(*p); }

// The element `i` of a statistic's parts (in part order, each in C order).
__device__ inline long long part_element(const long long* parts, long long first, long long count,
                                         unsigned long long i) {
  for (long long k = first; k < first + count; ++k) {
    const long long* part = parts + k * PART_ROW;
    if (i < (unsigned long long)part[1]) {
      long long at = part[0];
      unsigned long long rest = i;
      for (int d = (int)part[2] - 1; d >= 0; --d) {
        const unsigned long long extent = (unsigned long long)part[3 + 2 * d];
        at += (long long)(rest % extent) * part[3 + 2 * d + 1];
        rest /= extent;
      }
      return at;
    }
    i -= (unsigned long long)part[1];
  }
  return -1;
}

__device__ inline double block_sum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if ((int)threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();
  return total;
}

// means[s] = the mean of statistic s's elements.
#define NORMALIZE_MEAN(TN, T)                                                              \
  extern "C" __global__ void normalize_mean_##TN(const T* __restrict__ in,                 \
                                                 const long long* __restrict__ parts,       \
                                                 double* __restrict__ means,                \
                                                 const long long* __restrict__ rows,        \
                                                 long long first) {                         \
    __shared__ double shared[NORMALIZE_THREADS];                                          \
    const unsigned long long stat = first + blockIdx.y;                                   \
    const long long* seg = rows + stat * STAT_ROW;                                        \
    double sum = 0.0;                                                                     \
    for (unsigned long long i = threadIdx.x; i < (unsigned long long)seg[2]; i += blockDim.x) \
      sum += (double)normalize_load(in + part_element(parts, seg[0], seg[1], i));         \
    const double total = block_sum(sum, shared);                                          \
    if (threadIdx.x == 0) means[stat] = total / (double)(seg[2] > 0 ? seg[2] : 1);        \
  }

// factors[s] = float32(scale / sqrt(variance + epsilon)) of statistic s's elements
// about float32(means[s]) (the variance is 0 where the degrees of freedom are none;
// the factor is 0 where the variance plus epsilon is 0, NaN where it is negative), or
// given_factors[s] when those are given, and means32[s] = float32(means[s]).
#define NORMALIZE_FACTOR(TN, T)                                                            \
  extern "C" __global__ void normalize_factor_##TN(                                        \
      const T* __restrict__ in, const long long* __restrict__ parts,                      \
      const double* __restrict__ means, const float* __restrict__ given_factors,          \
      float* __restrict__ means32, float* __restrict__ factors,                           \
      const long long* __restrict__ rows, long long first, long long ddof, double epsilon, \
      double scale) {                                                                     \
    __shared__ double shared[NORMALIZE_THREADS];                                          \
    const unsigned long long stat = first + blockIdx.y;                                   \
    const long long* seg = rows + stat * STAT_ROW;                                        \
    const float mean = (float)means[stat];                                                \
    if (given_factors != nullptr) {                                                       \
      if (threadIdx.x == 0) {                                                             \
        means32[stat] = mean;                                                             \
        factors[stat] = given_factors[stat];                                              \
      }                                                                                   \
      return;                                                                             \
    }                                                                                     \
    double sum = 0.0;                                                                     \
    for (unsigned long long i = threadIdx.x; i < (unsigned long long)seg[2]; i += blockDim.x) { \
      const float d = __fsub_rn(normalize_load(in + part_element(parts, seg[0], seg[1], i)), mean); \
      sum += (double)__fmul_rn(d, d);                                                     \
    }                                                                                     \
    const double squares = block_sum(sum, shared);                                        \
    if (threadIdx.x == 0) {                                                               \
      const long long dof = seg[2] - ddof;                                                \
      const double total = (dof > 0 ? squares / (double)dof : 0.0) + epsilon;            \
      const double inv = total == 0.0 ? 0.0 : 1.0 / sqrt(total);                          \
      means32[stat] = mean;                                                               \
      factors[stat] = (float)(inv * scale);                                               \
    }                                                                                     \
  }

#define NORMALIZE_STATS(TN, T) NORMALIZE_MEAN(TN, T) NORMALIZE_FACTOR(TN, T)

NORMALIZE_STATS(u8, unsigned char)
NORMALIZE_STATS(i8, signed char)
NORMALIZE_STATS(u16, unsigned short)
NORMALIZE_STATS(i16, short)
NORMALIZE_STATS(i32, int)
NORMALIZE_STATS(f32, float)

// Integer results round halves away from zero and saturate (NaN gives 0).
#define NORMALIZE_APPLY(IN_NAME, IN, OUT_NAME, OUT, STORE)                                 \
  extern "C" __global__ void normalize_apply_##IN_NAME##_to_##OUT_NAME(                    \
      const IN* __restrict__ in, OUT* __restrict__ out, const float* __restrict__ means32, \
      const float* __restrict__ factors, const long long* __restrict__ rows, float shift) { \
    const long long* seg = rows + (unsigned long long)blockIdx.y * APPLY_ROW;             \
    const int dims = (int)seg[3];                                                         \
    GRID_STRIDE_LOOP(i, (unsigned long long)seg[2]) {                                     \
      unsigned long long rest = i;                                                        \
      long long stat = seg[4];                                                            \
      for (int d = dims - 1; d >= 0; --d) {                                               \
        const unsigned long long extent = (unsigned long long)seg[5 + 2 * d];             \
        stat += (long long)(rest % extent) * seg[5 + 2 * d + 1];                          \
        rest /= extent;                                                                   \
      }                                                                                   \
      const float x = normalize_load(in + seg[0] + (long long)i);                        \
      const float v = __fadd_rn(__fmul_rn(__fsub_rn(x, means32[stat]), factors[stat]), shift); \
      out[seg[1] + (long long)i] = STORE;                                                 \
    }                                                                                     \
  }

#define NORMALIZE_APPLY_TO_ALL(IN_NAME, IN)                                                              \
  NORMALIZE_APPLY(IN_NAME, IN, f32, float, v)                                                            \
  NORMALIZE_APPLY(IN_NAME, IN, u8, unsigned char, round_saturate<unsigned char>(v, 0.0f, 255.0f, 255))  \
  NORMALIZE_APPLY(IN_NAME, IN, i8, signed char, round_saturate<signed char>(v, -128.0f, 127.0f, 127))   \
  NORMALIZE_APPLY(IN_NAME, IN, u16, unsigned short,                                                      \
                  round_saturate<unsigned short>(v, 0.0f, 65535.0f, 65535))                             \
  NORMALIZE_APPLY(IN_NAME, IN, i16, short, round_saturate<short>(v, -32768.0f, 32767.0f, 32767))        \
  NORMALIZE_APPLY(IN_NAME, IN, i32, int, round_saturate<int>(v, -2147483648.0f, 2147483648.0f, 2147483647))

NORMALIZE_APPLY_TO_ALL(u8, unsigned char)
NORMALIZE_APPLY_TO_ALL(i8, signed char)
NORMALIZE_APPLY_TO_ALL(u16, unsigned short)
NORMALIZE_APPLY_TO_ALL(i16, short)
NORMALIZE_APPLY_TO_ALL(i32, int)
NORMALIZE_APPLY_TO_ALL(f32, float)
