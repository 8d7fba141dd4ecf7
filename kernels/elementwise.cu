// Elementwise arithmetic, math functions and conversion on flat, contiguous
// buffers (the prepare phase has already promoted the operands to one type and
// checked that they have as many elements as the result; a scalar operand is
// passed by value).
//
// Every operator is a functor (op_add ...) applied by a few kernel templates;
// the macros at the end stamp out one extern "C" kernel per operator and type,
// named <op>_<type> (ndd/_ops/gpu_elementwise.py holds the table of which).
// The results are numpy's (the CPU implementation calls numpy ufuncs): integer
// arithmetic wraps, // and % follow Python's floor semantics, float16 computes
// in float32 and rounds once to float16, as numpy's float16 loops do.
#include "common.cuh"

#include "half.cuh"

// -- storage types and the types they compute in ---------------------------------------

// num<S>: C, the type an element of storage type S computes in; P, the type of a
// scalar kernel parameter of type S; load/store/param convert.
template <typename S> struct num {
  using C = S;
  using P = S;
  __device__ static C load(S v) { return v; }
  __device__ static C param(P v) { return v; }
  template <typename V> __device__ static S store(V v) { return (S)v; }
};
template <> struct num<ndd_half> {
  using C = float;
  using P = unsigned short;
  __device__ static C load(ndd_half v) { return half_bits_to_float(v.bits); }
  __device__ static C param(P v) { return half_bits_to_float(v); }
  __device__ static ndd_half store(float v) { return ndd_half{float_to_half_bits(v)}; }
};

template <typename C> struct traits {
  static constexpr bool is_float = false;
  static constexpr bool is_bool = false;
  static constexpr bool is_signed = (C)-1 < (C)0;
  static constexpr unsigned long long bits = sizeof(C) * 8;
};
template <> struct traits<bool> {
  static constexpr bool is_float = false;
  static constexpr bool is_bool = true;
  static constexpr bool is_signed = false;
  static constexpr unsigned long long bits = 8;
};
template <> struct traits<float> {
  static constexpr bool is_float = true;
  static constexpr bool is_bool = false;
  static constexpr bool is_signed = true;
};
template <> struct traits<double> {
  static constexpr bool is_float = true;
  static constexpr bool is_bool = false;
  static constexpr bool is_signed = true;
};

// The C library's float and double functions under one overloaded name.
#define MATH_FUNCTION_1(NAME)                                                  \
  __device__ inline float m_##NAME(float x) { return NAME##f(x); }             \
  __device__ inline double m_##NAME(double x) { return NAME(x); }
#define MATH_FUNCTION_2(NAME)                                                  \
  __device__ inline float m_##NAME(float x, float y) { return NAME##f(x, y); } \
  __device__ inline double m_##NAME(double x, double y) { return NAME(x, y); }

MATH_FUNCTION_1(sqrt)
MATH_FUNCTION_1(cbrt)
MATH_FUNCTION_1(exp)
MATH_FUNCTION_1(log)
MATH_FUNCTION_1(log2)
MATH_FUNCTION_1(log10)
MATH_FUNCTION_1(sin)
MATH_FUNCTION_1(cos)
MATH_FUNCTION_1(tan)
MATH_FUNCTION_1(asin)
MATH_FUNCTION_1(acos)
MATH_FUNCTION_1(atan)
MATH_FUNCTION_1(sinh)
MATH_FUNCTION_1(cosh)
MATH_FUNCTION_1(tanh)
MATH_FUNCTION_1(asinh)
MATH_FUNCTION_1(acosh)
MATH_FUNCTION_1(atanh)
MATH_FUNCTION_1(floor)
MATH_FUNCTION_1(ceil)
MATH_FUNCTION_1(fabs)
MATH_FUNCTION_2(fmod)
MATH_FUNCTION_2(pow)
MATH_FUNCTION_2(atan2)
MATH_FUNCTION_2(copysign)

// -- binary operators -----------------------------------------------------------------
// apply(x, y) on values of the compute type C; the result is stored into the output
// type (wrapping for integers).

struct op_add {
  template <typename C> __device__ static C apply(C x, C y) { return (C)(x + y); }
};
struct op_sub {
  template <typename C> __device__ static C apply(C x, C y) { return (C)(x - y); }
};
struct op_mul {
  template <typename C> __device__ static C apply(C x, C y) { return (C)(x * y); }
};
// NaN propagates from either operand, as numpy's minimum/maximum (x != x only for NaN).
struct op_minimum {
  template <typename C> __device__ static C apply(C x, C y) { return (x != x || x < y) ? x : y; }
};
struct op_maximum {
  template <typename C> __device__ static C apply(C x, C y) { return (x != x || x > y) ? x : y; }
};
struct op_truediv {
  template <typename C> __device__ static C apply(C x, C y) { return x / y; }
};

// Python's divmod of floats as numpy computes it: the quotient from (a - fmod(a, b)) / b
// snapped to a whole number, the remainder with the divisor's sign; b == 0 gives a / b
// and fmod(a, b).
template <typename C> __device__ inline C float_divmod(C a, C b, C* remainder) {
  C mod = m_fmod(a, b);
  if (b == (C)0) {
    *remainder = mod;
    return a / b;
  }
  C div = (a - mod) / b;
  if (mod != (C)0) {
    if ((b < (C)0) != (mod < (C)0)) {
      mod += b;
      div -= (C)1;
    }
  } else {
    mod = m_copysign((C)0, b);
  }
  C floordiv;
  if (div != (C)0) {
    floordiv = m_floor(div);
    if (div - floordiv > (C)0.5) floordiv += (C)1;
  } else {
    floordiv = m_copysign((C)0, a / b);
  }
  *remainder = mod;
  return floordiv;
}

// Integer // and % by 0 give 0 (numpy's result; the CPU raises, see gpu_elementwise.py);
// MIN // -1 wraps to MIN and MIN % -1 is 0, without the trap of the hardware division.
struct op_floordiv {
  template <typename C> __device__ static C apply(C a, C b) {
    if constexpr (traits<C>::is_float) {
      if (b == (C)0) return a / b;
      C remainder;
      return float_divmod(a, b, &remainder);
    } else {
      if (b == 0) return 0;
      if constexpr (traits<C>::is_signed) {
        if (b == (C)-1) return (C)(0ULL - (unsigned long long)a);
        C q = (C)(a / b);
        if ((C)(a % b) != 0 && ((a < 0) != (b < 0))) --q;
        return q;
      } else {
        return (C)(a / b);
      }
    }
  }
};
struct op_mod {
  template <typename C> __device__ static C apply(C a, C b) {
    if constexpr (traits<C>::is_float) {
      if (b == (C)0) return m_fmod(a, b);
      C remainder;
      float_divmod(a, b, &remainder);
      return remainder;
    } else {
      if (b == 0) return 0;
      if constexpr (traits<C>::is_signed) {
        if (b == (C)-1) return 0;
        C r = (C)(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = (C)(r + b);
        return r;
      } else {
        return (C)(a % b);
      }
    }
  }
};

// Integers: exponentiation by squaring, wrapping; a negative exponent gives the exact
// result truncated toward zero (1 for 1, +-1 for -1, else 0), as the CPU does.
struct op_pow {
  template <typename C> __device__ static C apply(C a, C b) {
    if constexpr (traits<C>::is_float) {
      return m_pow(a, b);
    } else {
      if constexpr (traits<C>::is_signed) {
        if (b < 0) return a == 1 ? (C)1 : (a == (C)-1 ? ((b & 1) ? (C)-1 : (C)1) : (C)0);
      }
      unsigned long long base = (unsigned long long)a, result = 1, e = (unsigned long long)b;
      while (e) {
        if (e & 1u) result *= base;
        base *= base;
        e >>= 1;
      }
      return (C)result;
    }
  }
};
struct op_atan2 {
  template <typename C> __device__ static C apply(C x, C y) { return m_atan2(x, y); }
};

// Shifts as numpy's: a count of the bit width or more (or negative, read as unsigned)
// shifts everything out (>> of a negative value leaves -1).
struct op_lshift {
  template <typename C> __device__ static C apply(C a, C b) {
    if ((unsigned long long)b >= traits<C>::bits) return 0;
    return (C)((unsigned long long)a << (unsigned long long)b);
  }
};
struct op_rshift {
  template <typename C> __device__ static C apply(C a, C b) {
    if constexpr (traits<C>::is_signed) {
      if ((unsigned long long)b >= traits<C>::bits) return a < 0 ? (C)-1 : (C)0;
      return (C)((long long)a >> (long long)b);
    } else {
      if ((unsigned long long)b >= traits<C>::bits) return 0;
      return (C)((unsigned long long)a >> (unsigned long long)b);
    }
  }
};
struct op_bitand {
  template <typename C> __device__ static C apply(C x, C y) { return (C)(x & y); }
};
struct op_bitor {
  template <typename C> __device__ static C apply(C x, C y) { return (C)(x | y); }
};
struct op_bitxor {
  template <typename C> __device__ static C apply(C x, C y) { return (C)(x ^ y); }
};

// Comparisons run in the type numpy compares the operands in; NaN compares unequal
// to everything, as in numpy.
struct op_eq {
  template <typename C> __device__ static bool apply(C x, C y) { return x == y; }
};
struct op_neq {
  template <typename C> __device__ static bool apply(C x, C y) { return x != y; }
};
struct op_lt {
  template <typename C> __device__ static bool apply(C x, C y) { return x < y; }
};
struct op_leq {
  template <typename C> __device__ static bool apply(C x, C y) { return x <= y; }
};
struct op_gt {
  template <typename C> __device__ static bool apply(C x, C y) { return x > y; }
};
struct op_geq {
  template <typename C> __device__ static bool apply(C x, C y) { return x >= y; }
};

// -- unary operators and functions ----------------------------------------------------
// apply<S>(x): S is the storage type, for functions that round in between as numpy does.

struct op_minus {
  template <typename S, typename C> __device__ static C apply(C x) {
    if constexpr (traits<C>::is_float) return -x;
    else return (C)(0ULL - (unsigned long long)x);
  }
};
struct op_abs {
  template <typename S, typename C> __device__ static C apply(C x) {
    if constexpr (traits<C>::is_float) return m_fabs(x);
    else if constexpr (traits<C>::is_signed) return x < 0 ? (C)(0ULL - (unsigned long long)x) : x;
    else return x;
  }
};
struct op_bitnot {
  template <typename S, typename C> __device__ static C apply(C x) {
    if constexpr (traits<C>::is_bool) return !x;  // numpy's ~ of bool is logical not
    else return (C)~x;
  }
};
// numpy's reciprocal of numpy's sqrt: the square root is rounded to the storage type first.
struct op_rsqrt {
  template <typename S, typename C> __device__ static C apply(C x) {
    return (C)1 / num<S>::load(num<S>::store(m_sqrt(x)));
  }
};

#define FUNCTION_FUNCTOR(NAME)                                                 \
  struct op_##NAME {                                                           \
    template <typename S, typename C> __device__ static C apply(C x) {         \
      return m_##NAME(x);                                                      \
    }                                                                          \
  };
FUNCTION_FUNCTOR(sqrt)
FUNCTION_FUNCTOR(cbrt)
FUNCTION_FUNCTOR(exp)
FUNCTION_FUNCTOR(log)
FUNCTION_FUNCTOR(log2)
FUNCTION_FUNCTOR(log10)
FUNCTION_FUNCTOR(sin)
FUNCTION_FUNCTOR(cos)
FUNCTION_FUNCTOR(tan)
FUNCTION_FUNCTOR(asin)
FUNCTION_FUNCTOR(acos)
FUNCTION_FUNCTOR(atan)
FUNCTION_FUNCTOR(sinh)
FUNCTION_FUNCTOR(cosh)
FUNCTION_FUNCTOR(tanh)
FUNCTION_FUNCTOR(asinh)
FUNCTION_FUNCTOR(acosh)
FUNCTION_FUNCTOR(atanh)
FUNCTION_FUNCTOR(floor)
FUNCTION_FUNCTOR(ceil)
FUNCTION_FUNCTOR(fabs)

// -- kernels --------------------------------------------------------------------------

// The elements of two or three operands, loaded together (ilp_loop).
template <typename S> struct two {
  S x, y;
};
template <typename S> struct three {
  S x, y, z;
};

// NAME_T(a, b, out, n): both operands arrays; NAME_scalar_rhs_T: b is a scalar;
// NAME_scalar_lhs_T: a is a scalar. Operands are of storage type S, the output of
// type R (S, or bool for comparisons).
#define BINARY_KERNELS(NAME, OP, TN, S, R)                                               \
  extern "C" __global__ void NAME##_##TN(const S* __restrict__ a, const S* __restrict__ b, \
                                         R* __restrict__ out, unsigned long long n) {     \
    ilp_loop(                                                                            \
        n, [&](auto i) { return two<S>{a[i], b[i]}; },                                  \
        [&](auto i, two<S> v) {                                                         \
          out[i] = num<R>::store(OP::apply(num<S>::load(v.x), num<S>::load(v.y)));       \
        });                                                                              \
  }                                                                                      \
  extern "C" __global__ void NAME##_scalar_rhs_##TN(                                     \
      const S* __restrict__ a, num<S>::P b, R* __restrict__ out, unsigned long long n) { \
    const num<S>::C y = num<S>::param(b);                                                \
    ilp_loop(                                                                            \
        n, [&](auto i) { return a[i]; },                                                 \
        [&](auto i, S v) { out[i] = num<R>::store(OP::apply(num<S>::load(v), y)); });    \
  }                                                                                      \
  extern "C" __global__ void NAME##_scalar_lhs_##TN(                                     \
      num<S>::P a, const S* __restrict__ b, R* __restrict__ out, unsigned long long n) { \
    const num<S>::C x = num<S>::param(a);                                                \
    ilp_loop(                                                                            \
        n, [&](auto i) { return b[i]; },                                                 \
        [&](auto i, S v) { out[i] = num<R>::store(OP::apply(x, num<S>::load(v))); });    \
  }

#define ARITHMETIC(NAME, TN, S) BINARY_KERNELS(NAME, op_##NAME, TN, S, S)
#define COMPARISON(NAME, TN, S) BINARY_KERNELS(NAME, op_##NAME, TN, S, bool)

#define UNARY_KERNEL(NAME, TN, S)                                                       \
  extern "C" __global__ void NAME##_##TN(const S* __restrict__ in, S* __restrict__ out, \
                                         unsigned long long n) {                        \
    ilp_loop(                                                                           \
        n, [&](auto i) { return in[i]; },                                               \
        [&](auto i, S v) { out[i] = num<S>::store(op_##NAME::apply<S>(num<S>::load(v))); }); \
  }

// clamp(x, lo, hi) = min(max(x, lo), hi): with three arrays, or with scalar bounds.
#define CLAMP_KERNELS(NAME, TN, S)                                                         \
  extern "C" __global__ void NAME##_##TN(const S* __restrict__ x, const S* __restrict__ lo, \
                                         const S* __restrict__ hi, S* __restrict__ out,     \
                                         unsigned long long n) {                            \
    ilp_loop(                                                                               \
        n, [&](auto i) { return three<S>{x[i], lo[i], hi[i]}; },                            \
        [&](auto i, three<S> v) {                                                           \
          out[i] = num<S>::store(op_minimum::apply(                                         \
              op_maximum::apply(num<S>::load(v.x), num<S>::load(v.y)), num<S>::load(v.z))); \
        });                                                                                 \
  }                                                                                         \
  extern "C" __global__ void NAME##_scalar_bounds_##TN(const S* __restrict__ x, num<S>::P lo, \
                                                       num<S>::P hi, S* __restrict__ out,   \
                                                       unsigned long long n) {              \
    const num<S>::C low = num<S>::param(lo), high = num<S>::param(hi);                      \
    ilp_loop(                                                                               \
        n, [&](auto i) { return x[i]; },                                                    \
        [&](auto i, S v) {                                                                  \
          out[i] = num<S>::store(op_minimum::apply(op_maximum::apply(num<S>::load(v), low), high)); \
        });                                                                                 \
  }

// fill_scalar_T(value, out, n): a scalar operand as an array, for operand
// combinations without a kernel of their own.
#define FILL_KERNEL(NAME, TN, S)                                                         \
  extern "C" __global__ void NAME##_##TN(num<S>::P value, S* __restrict__ out,           \
                                         unsigned long long n) {                         \
    const S v = num<S>::store(num<S>::param(value));                                     \
    ilp_loop(                                                                            \
        n, [&](auto i) { return v; }, [&](auto i, S w) { out[i] = w; });                 \
  }

// The type lists: X(NAME, type suffix, storage type).
#define INTEGER_TYPES(X, NAME)         \
  X(NAME, i8, signed char)             \
  X(NAME, u8, unsigned char)           \
  X(NAME, i16, short)                  \
  X(NAME, u16, unsigned short)         \
  X(NAME, i32, int)                    \
  X(NAME, u32, unsigned int)           \
  X(NAME, i64, long long)              \
  X(NAME, u64, unsigned long long)
#define FLOAT_TYPES(X, NAME) \
  X(NAME, f16, ndd_half)     \
  X(NAME, f32, float)        \
  X(NAME, f64, double)
#define NUMERIC_TYPES(X, NAME) INTEGER_TYPES(X, NAME) FLOAT_TYPES(X, NAME)
#define BOOL_TYPE(X, NAME) X(NAME, bool, bool)

NUMERIC_TYPES(ARITHMETIC, add)
NUMERIC_TYPES(ARITHMETIC, sub)
NUMERIC_TYPES(ARITHMETIC, mul)
BOOL_TYPE(ARITHMETIC, mul)
NUMERIC_TYPES(ARITHMETIC, minimum)
NUMERIC_TYPES(ARITHMETIC, maximum)
FLOAT_TYPES(ARITHMETIC, truediv)
NUMERIC_TYPES(ARITHMETIC, floordiv)
NUMERIC_TYPES(ARITHMETIC, mod)
NUMERIC_TYPES(ARITHMETIC, pow)
FLOAT_TYPES(ARITHMETIC, atan2)

BOOL_TYPE(ARITHMETIC, bitand)
INTEGER_TYPES(ARITHMETIC, bitand)
BOOL_TYPE(ARITHMETIC, bitor)
INTEGER_TYPES(ARITHMETIC, bitor)
BOOL_TYPE(ARITHMETIC, bitxor)
INTEGER_TYPES(ARITHMETIC, bitxor)
BOOL_TYPE(ARITHMETIC, lshift)
INTEGER_TYPES(ARITHMETIC, lshift)
BOOL_TYPE(ARITHMETIC, rshift)
INTEGER_TYPES(ARITHMETIC, rshift)

#define COMPARISON_ALL_TYPES(NAME) BOOL_TYPE(COMPARISON, NAME) NUMERIC_TYPES(COMPARISON, NAME)
COMPARISON_ALL_TYPES(eq)
COMPARISON_ALL_TYPES(neq)
COMPARISON_ALL_TYPES(lt)
COMPARISON_ALL_TYPES(leq)
COMPARISON_ALL_TYPES(gt)
COMPARISON_ALL_TYPES(geq)

NUMERIC_TYPES(UNARY_KERNEL, minus)
NUMERIC_TYPES(UNARY_KERNEL, abs)
BOOL_TYPE(UNARY_KERNEL, bitnot)
INTEGER_TYPES(UNARY_KERNEL, bitnot)
FLOAT_TYPES(UNARY_KERNEL, sqrt)
FLOAT_TYPES(UNARY_KERNEL, rsqrt)
FLOAT_TYPES(UNARY_KERNEL, cbrt)
FLOAT_TYPES(UNARY_KERNEL, exp)
FLOAT_TYPES(UNARY_KERNEL, log)
FLOAT_TYPES(UNARY_KERNEL, log2)
FLOAT_TYPES(UNARY_KERNEL, log10)
FLOAT_TYPES(UNARY_KERNEL, sin)
FLOAT_TYPES(UNARY_KERNEL, cos)
FLOAT_TYPES(UNARY_KERNEL, tan)
FLOAT_TYPES(UNARY_KERNEL, asin)
FLOAT_TYPES(UNARY_KERNEL, acos)
FLOAT_TYPES(UNARY_KERNEL, atan)
FLOAT_TYPES(UNARY_KERNEL, sinh)
FLOAT_TYPES(UNARY_KERNEL, cosh)
FLOAT_TYPES(UNARY_KERNEL, tanh)
FLOAT_TYPES(UNARY_KERNEL, asinh)
FLOAT_TYPES(UNARY_KERNEL, acosh)
FLOAT_TYPES(UNARY_KERNEL, atanh)
FLOAT_TYPES(UNARY_KERNEL, floor)
FLOAT_TYPES(UNARY_KERNEL, ceil)
FLOAT_TYPES(UNARY_KERNEL, fabs)

NUMERIC_TYPES(CLAMP_KERNELS, clamp)
NUMERIC_TYPES(FILL_KERNEL, fill_scalar)

// -- cast: the rules of ndd.cast (ndd/_ops/conversions.py, cast_array) ----------------
// Floats to integers round half away from zero and saturate, NaN gives 0; floats to
// bool are true unless they round to 0 (NaN is true); integers saturate into narrower
// integer types; to a narrower float, round to nearest, beyond its range to an
// infinity (as the reference). float16 converts through float (exactly), except
// double to float16, which rounds once.

template <typename T> struct int_range;
#define INT_RANGE(T, LO, HI)                                                   \
  template <> struct int_range<T> {                                            \
    static constexpr long long lo = LO;                                        \
    static constexpr unsigned long long hi = HI;                               \
  };
INT_RANGE(signed char, -128, 127)
INT_RANGE(unsigned char, 0, 255)
INT_RANGE(short, -32768, 32767)
INT_RANGE(unsigned short, 0, 65535)
INT_RANGE(int, -2147483647LL - 1, 2147483647ULL)
INT_RANGE(unsigned int, 0, 4294967295ULL)
INT_RANGE(long long, -9223372036854775807LL - 1, 9223372036854775807ULL)
INT_RANGE(unsigned long long, 0, 18446744073709551615ULL)

__device__ inline float round_half_away(float x) { return roundf(x); }
__device__ inline double round_half_away(double x) { return round(x); }

// A float or double (F) to integer type D.
template <typename D, typename F> __device__ inline D float_to_integer(F x) {
  if (x != x) return 0;
  F r = round_half_away(x);
  // (F)hi may round up past the integer maximum (2**31 - 1 in float32): any value
  // at or above it saturates.
  if (r >= (F)int_range<D>::hi) return (D)int_range<D>::hi;
  if (r <= (F)int_range<D>::lo) return (D)int_range<D>::lo;
  return (D)r;
}

template <typename D, typename S> __device__ inline D integer_to_integer(S x) {
  if constexpr (traits<S>::is_signed) {
    if (x < 0) return (long long)x < int_range<D>::lo ? (D)int_range<D>::lo : (D)x;
  }
  return (unsigned long long)x > int_range<D>::hi ? (D)int_range<D>::hi : (D)x;
}

// Between the compute types (bool, integers, float, double).
template <typename D, typename S> __device__ inline D convert_value(S x) {
  if constexpr (traits<D>::is_bool) {
    if constexpr (traits<S>::is_float) return !(m_fabs(x) < (S)0.5);
    else return x != 0;
  } else if constexpr (traits<S>::is_bool) {
    return (D)(x ? 1 : 0);
  } else if constexpr (traits<D>::is_float) {
    return (D)x;
  } else if constexpr (traits<S>::is_float) {
    return float_to_integer<D>(x);
  } else {
    return integer_to_integer<D>(x);
  }
}

template <typename D, typename S> struct converter {
  __device__ static D apply(S x) { return convert_value<D>(x); }
};
template <typename S> struct converter<ndd_half, S> {
  __device__ static ndd_half apply(S x) { return ndd_half{float_to_half_bits(convert_value<float>(x))}; }
};
template <> struct converter<ndd_half, double> {
  __device__ static ndd_half apply(double x) { return ndd_half{double_to_half_bits(x)}; }
};
template <typename D> struct converter<D, ndd_half> {
  __device__ static D apply(ndd_half x) { return convert_value<D>(half_bits_to_float(x.bits)); }
};
template <> struct converter<ndd_half, ndd_half> {
  __device__ static ndd_half apply(ndd_half x) { return x; }
};

#define CAST(SN, S, DN, D)                                                     \
  extern "C" __global__ void cast_##SN##_to_##DN(                              \
      const S* __restrict__ in, D* __restrict__ out, unsigned long long n) {   \
    ilp_loop(                                                                  \
        n, [&](auto i) { return in[i]; },                                      \
        [&](auto i, S v) { out[i] = converter<D, S>::apply(v); });             \
  }

#define CAST_FROM(SN, S)               \
  CAST(SN, S, bool, bool)              \
  CAST(SN, S, i8, signed char)         \
  CAST(SN, S, u8, unsigned char)       \
  CAST(SN, S, i16, short)              \
  CAST(SN, S, u16, unsigned short)     \
  CAST(SN, S, i32, int)                \
  CAST(SN, S, u32, unsigned int)       \
  CAST(SN, S, i64, long long)          \
  CAST(SN, S, u64, unsigned long long) \
  CAST(SN, S, f16, ndd_half)           \
  CAST(SN, S, f32, float)              \
  CAST(SN, S, f64, double)

CAST_FROM(bool, bool)
CAST_FROM(i8, signed char)
CAST_FROM(u8, unsigned char)
CAST_FROM(i16, short)
CAST_FROM(u16, unsigned short)
CAST_FROM(i32, int)
CAST_FROM(u32, unsigned int)
CAST_FROM(i64, long long)
CAST_FROM(u64, unsigned long long)
CAST_FROM(f16, ndd_half)
CAST_FROM(f32, float)
CAST_FROM(f64, double)
