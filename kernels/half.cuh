// float16 by hand, for the kernel files that store it: NVRTC has no cuda_fp16.h
// without the CUDA toolkit headers. kernels/build.py pastes this file in place of
// `#include "half.cuh"`.
#pragma once

// A float16 in memory. Scalar float16 kernel parameters are its bits (unsigned short).
struct ndd_half {
  unsigned short bits;
};

__device__ inline float half_bits_to_float(unsigned short h) {
  const unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
  const unsigned int exponent = (h >> 10) & 0x1fu;
  const unsigned int mantissa = h & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2**-24, exact in float.
    const float magnitude = (float)mantissa * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return __uint_as_float(sign | 0x7f800000u | (mantissa << 13));
  return __uint_as_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// Round to nearest even; beyond the float16 range (from 65520 on) to an infinity.
__device__ inline unsigned short float_to_half_bits(float f) {
  const unsigned int x = __float_as_uint(f);
  const unsigned int sign = (x >> 16) & 0x8000u;
  const unsigned int magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return (unsigned short)(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);
  if (magnitude >= 0x38800000u) {
    // Normal: rebias the exponent (127 -> 15), round away the low 13 bits.
    unsigned int m = magnitude - 0x38000000u;
    m += 0xfffu + ((m >> 13) & 1u);
    return (unsigned short)(sign | (m >> 13));
  }
  // Subnormal or zero: the multiple of 2**-24 nearest (scaling by 2**24 is exact).
  return (unsigned short)(sign | (unsigned int)rintf(__uint_as_float(magnitude) * 16777216.0f));
}

// Directly from double (not through float, which could round twice).
__device__ inline unsigned short double_to_half_bits(double d) {
  const unsigned long long x = (unsigned long long)__double_as_longlong(d);
  const unsigned int sign = (unsigned int)(x >> 48) & 0x8000u;
  const unsigned long long magnitude = x & 0x7fffffffffffffffULL;
  if (magnitude > 0x7ff0000000000000ULL)
    return (unsigned short)(sign | 0x7e00u | (unsigned int)((magnitude >> 42) & 0x3ffu));
  if (magnitude >= 0x40effe0000000000ULL) return (unsigned short)(sign | 0x7c00u);
  if (magnitude >= 0x3f10000000000000ULL) {
    unsigned long long m = magnitude - 0x3f00000000000000ULL;
    m += 0x1ffffffffffULL + ((m >> 42) & 1u);
    return (unsigned short)(sign | (unsigned int)(m >> 42));
  }
  return (unsigned short)(sign | (unsigned int)rint(__longlong_as_double((long long)magnitude) * 16777216.0));
}

