// Elementwise arithmetic and conversion on flat, contiguous buffers (the prepare
// phase has already promoted the operands to one type and checked that they have
// as many elements as the result; a scalar operand is passed by value).
#include "common.cuh"

// NAME_T(a, b, out, n): both operands arrays; NAME_scalar_rhs_T: b is a scalar;
// NAME_scalar_lhs_T: a is a scalar. Operands are of type T, the output of type R
// (T for arithmetic, bool for comparisons).
#define ELEMENTWISE_BINARY(OP, TN, T, R, EXPR)                                 \
  extern "C" __global__ void OP##_##TN(const T* __restrict__ a,                \
                                       const T* __restrict__ b,                \
                                       R* __restrict__ out,                    \
                                       unsigned long long n) {                 \
    GRID_STRIDE_LOOP(i, n) {                                                   \
      T x = a[i];                                                              \
      T y = b[i];                                                              \
      out[i] = (EXPR);                                                         \
    }                                                                          \
  }                                                                            \
  extern "C" __global__ void OP##_scalar_rhs_##TN(const T* __restrict__ a, T y,\
                                                  R* __restrict__ out,         \
                                                  unsigned long long n) {      \
    GRID_STRIDE_LOOP(i, n) {                                                   \
      T x = a[i];                                                              \
      out[i] = (EXPR);                                                         \
    }                                                                          \
  }                                                                            \
  extern "C" __global__ void OP##_scalar_lhs_##TN(T x, const T* __restrict__ b,\
                                                  R* __restrict__ out,         \
                                                  unsigned long long n) {      \
    GRID_STRIDE_LOOP(i, n) {                                                   \
      T y = b[i];                                                              \
      out[i] = (EXPR);                                                         \
    }                                                                          \
  }

#define ELEMENTWISE_INTEGER_TYPES(NAME, EXPR)                       \
  ELEMENTWISE_BINARY(NAME, u8, unsigned char, unsigned char, EXPR)  \
  ELEMENTWISE_BINARY(NAME, i16, short, short, EXPR)                 \
  ELEMENTWISE_BINARY(NAME, i32, int, int, EXPR)                     \
  ELEMENTWISE_BINARY(NAME, i64, long long, long long, EXPR)

#define ELEMENTWISE_ALL_TYPES(NAME, EXPR)              \
  ELEMENTWISE_INTEGER_TYPES(NAME, EXPR)                \
  ELEMENTWISE_BINARY(NAME, f32, float, float, EXPR)    \
  ELEMENTWISE_BINARY(NAME, f64, double, double, EXPR)

#define COMPARISON_ALL_TYPES(NAME, EXPR)                   \
  ELEMENTWISE_BINARY(NAME, u8, unsigned char, bool, EXPR)  \
  ELEMENTWISE_BINARY(NAME, i16, short, bool, EXPR)         \
  ELEMENTWISE_BINARY(NAME, i32, int, bool, EXPR)           \
  ELEMENTWISE_BINARY(NAME, i64, long long, bool, EXPR)     \
  ELEMENTWISE_BINARY(NAME, f32, float, bool, EXPR)         \
  ELEMENTWISE_BINARY(NAME, f64, double, bool, EXPR)

ELEMENTWISE_ALL_TYPES(add, x + y)
ELEMENTWISE_ALL_TYPES(sub, x - y)
ELEMENTWISE_ALL_TYPES(mul, x * y)
// NaN propagates from either operand, as numpy's minimum/maximum (x != x only for NaN).
ELEMENTWISE_ALL_TYPES(minimum, (x != x || x < y) ? x : y)
ELEMENTWISE_ALL_TYPES(maximum, (x != x || x > y) ? x : y)

// Comparisons run in the type numpy compares the operands in (exact for the
// integer pairs here; ints with floats in float64 where needed); NaN compares
// unequal to everything, as in numpy.
COMPARISON_ALL_TYPES(eq, x == y)
COMPARISON_ALL_TYPES(neq, x != y)
COMPARISON_ALL_TYPES(lt, x < y)
COMPARISON_ALL_TYPES(leq, x <= y)
COMPARISON_ALL_TYPES(gt, x > y)
COMPARISON_ALL_TYPES(geq, x >= y)

ELEMENTWISE_INTEGER_TYPES(bitand, x & y)
ELEMENTWISE_INTEGER_TYPES(bitor, x | y)
ELEMENTWISE_INTEGER_TYPES(bitxor, x ^ y)

// -- cast: the rules of ndd.cast (ndd/_ops/conversions.py, cast_array) --------
// Floats to integers round half away from zero and saturate, NaN gives 0;
// integers saturate into narrower integer types; float64 to float32 rounds to
// nearest, beyond the float32 range to an infinity (as the reference).

template <typename T> struct type_range;
template <> struct type_range<unsigned char> {
  static constexpr bool is_float = false;
  static constexpr long long lo = 0, hi = 255;
};
template <> struct type_range<short> {
  static constexpr bool is_float = false;
  static constexpr long long lo = -32768, hi = 32767;
};
template <> struct type_range<int> {
  static constexpr bool is_float = false;
  static constexpr long long lo = -2147483647LL - 1, hi = 2147483647LL;
};
template <> struct type_range<long long> {
  static constexpr bool is_float = false;
  static constexpr long long lo = -9223372036854775807LL - 1, hi = 9223372036854775807LL;
};
template <> struct type_range<float> {
  static constexpr bool is_float = true;
};
template <> struct type_range<double> {
  static constexpr bool is_float = true;
};

__device__ inline float round_half_away(float x) { return roundf(x); }
__device__ inline double round_half_away(double x) { return round(x); }

template <typename D, typename S> __device__ inline D convert(S x) {
  if constexpr (type_range<S>::is_float && type_range<D>::is_float) {
    return (D)x;
  } else if constexpr (type_range<S>::is_float) {
    if (x != x) return 0;
    S r = round_half_away(x);
    // (S)hi may round up past the integer maximum (2**31 - 1 in float32): any
    // value at or above it saturates.
    if (r >= (S)type_range<D>::hi) return (D)type_range<D>::hi;
    if (r <= (S)type_range<D>::lo) return (D)type_range<D>::lo;
    return (D)r;
  } else if constexpr (type_range<D>::is_float) {
    return (D)x;
  } else {
    long long v = x;
    v = v < type_range<D>::lo ? type_range<D>::lo : (v > type_range<D>::hi ? type_range<D>::hi : v);
    return (D)v;
  }
}

#define CAST(SN, S, DN, D)                                                     \
  extern "C" __global__ void cast_##SN##_to_##DN(                              \
      const S* __restrict__ in, D* __restrict__ out, unsigned long long n) {   \
    GRID_STRIDE_LOOP(i, n) { out[i] = convert<D, S>(in[i]); }                  \
  }

#define CAST_FROM(SN, S)                   \
  CAST(SN, S, u8, unsigned char)           \
  CAST(SN, S, i16, short)                  \
  CAST(SN, S, i32, int)                    \
  CAST(SN, S, i64, long long)              \
  CAST(SN, S, f32, float)                  \
  CAST(SN, S, f64, double)

CAST_FROM(u8, unsigned char)
CAST_FROM(i16, short)
CAST_FROM(i32, int)
CAST_FROM(i64, long long)
CAST_FROM(f32, float)
CAST_FROM(f64, double)
