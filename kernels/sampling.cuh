// How a source image is sampled at a point, as the CPU's kernels in
// ndd/_cpu/warp.pyx sample it: nearest neighbour, bilinear or bicubic, with
// their border rules and their conversion of the sampled float to the element
// type, operation for operation (see kernels/warp.cu for the rounding rules).
// kernels/build.py pastes it in place of `#include "sampling.cuh"`: warp.cu's
// warps and remap.cu's remap share it.
#pragma once

#define WARP_NN 0
#define WARP_LINEAR 1
#define WARP_CUBIC 2

// The border modes of ndd/_ops/warp.py's BORDER_MODES.
#define WARP_BORDER_CONSTANT 0
#define WARP_BORDER_CLAMP 1
#define WARP_BORDER_REFLECT 2
#define WARP_BORDER_REFLECT_101 3
#define WARP_BORDER_WRAP 4

// Points farther than this from the image are outside whatever the border mode.
#define WARP_FAR 1e7f

// -- conversions: the CPU's _convert ------------------------------------------------

template <typename T> struct warp_range;
template <> struct warp_range<unsigned char> { static constexpr long long lo = 0, hi = 255; };
template <> struct warp_range<signed char> { static constexpr long long lo = -128, hi = 127; };
template <> struct warp_range<short> { static constexpr long long lo = -32768, hi = 32767; };
template <> struct warp_range<unsigned short> { static constexpr long long lo = 0, hi = 65535; };
template <> struct warp_range<int> {
  static constexpr long long lo = -2147483647LL - 1, hi = 2147483647LL;
};

// Round to nearest, ties to even, by adding and removing 1.5 * 2**23 (the CPU's _rint).
__device__ inline float warp_rint_shift(float v) {
  return __fsub_rn(__fadd_rn(v, 12582912.0f), 12582912.0f);
}

template <typename T> struct warp_is_float { static constexpr bool value = false; };
template <> struct warp_is_float<float> { static constexpr bool value = true; };
template <> struct warp_is_float<double> { static constexpr bool value = true; };

// A sampled float as the element type: floats as they are; integers saturated
// (NaN gives 0) and rounded half away from zero, or to even with round_even, by
// the CPU's own means (its "value + 0.5" is a double sum).
template <typename T> __device__ inline T warp_convert(float v, bool round_even) {
  if constexpr (warp_is_float<T>::value) {
    return (T)v;
  } else {
    constexpr long long lo = warp_range<T>::lo, hi = warp_range<T>::hi;
    if (!(v > (float)lo)) return v < 0.0f ? (T)lo : (T)0;
    if (v >= (float)hi) return (T)hi;
    if (lo == 0) return round_even ? (T)(long long)warp_rint_shift(v) : (T)(long long)((double)v + 0.5);
    if (round_even) return (T)(long long)rintf(v);
    return v >= 0.0f ? (T)(long long)floorf((float)((double)v + 0.5))
                     : (T)(long long)(-floorf((float)(0.5 - (double)v)));
  }
}

// What weighted sums of taps run in: float, but double for double pixels.
template <typename T> struct warp_acc { typedef float type; };
template <> struct warp_acc<double> { typedef double type; };

// acc + w * v, rounded as the CPU rounds it (in double, back to float, for double v).
__device__ inline float warp_madd(float acc, float w, float v) { return __fadd_rn(acc, __fmul_rn(w, v)); }
__device__ inline float warp_madd(float acc, float w, double v) {
  return (float)__dadd_rn((double)acc, __dmul_rn((double)w, v));
}

// -- the source image ---------------------------------------------------------------

// One frame (or volume) of a sample: its first element, extents and strides.
template <typename T> struct WarpSource {
  const T* data;
  long long depth, rows, columns;
  long long depth_stride, row_stride, column_stride, channel_stride;
  int channels;
};

// The index read for index i of an axis of n pixels; -1 for the fill value.
__device__ inline long long warp_border_index(long long i, long long n, int mode) {
  if (0 <= i && i < n) return i;
  if (mode == WARP_BORDER_CONSTANT) return -1;
  if (mode == WARP_BORDER_CLAMP) return i < 0 ? 0 : n - 1;
  if (mode == WARP_BORDER_WRAP) {
    i %= n;
    return i < 0 ? i + n : i;
  }
  if (mode == WARP_BORDER_REFLECT) {
    const long long period = 2 * n;
    i %= period;
    if (i < 0) i += period;
    return i >= n ? period - 1 - i : i;
  }
  if (n == 1) return 0;
  const long long period = 2 * n - 2;
  i %= period;
  if (i < 0) i += period;
  return i >= n ? period - i : i;
}

// The source pixel at (z, y, x) after the border rule; nullptr for the fill value.
template <typename T>
__device__ inline const T* warp_pixel(const WarpSource<T>& s, long long z, long long y, long long x,
                                      int border) {
  x = warp_border_index(x, s.columns, border);
  y = warp_border_index(y, s.rows, border);
  z = warp_border_index(z, s.depth, border);
  if (x < 0 || y < 0 || z < 0) return nullptr;
  return s.data + z * s.depth_stride + y * s.row_stride + x * s.column_stride;
}

// Copy a source pixel, or write the fill values where pixel is nullptr.
template <typename T>
__device__ inline void warp_write_pixel(const T* pixel, const WarpSource<T>& s, T* out, long long out_ks,
                                        const float* fill, bool round_even) {
  for (int k = 0; k < s.channels; ++k)
    out[k * out_ks] = pixel ? pixel[k * s.channel_stride] : warp_convert<T>(fill[k], round_even);
}

// A point far away (or not a number): the fill, or the nearest corner for the other modes.
template <typename T>
__device__ inline void warp_far(const WarpSource<T>& s, T* out, long long out_ks, float sx, float sy,
                                float sz, int border, const float* fill, bool round_even) {
  const T* pixel = nullptr;
  if (border != WARP_BORDER_CONSTANT) {
    const long long x0 = !(sx > 0.0f) ? 0 : s.columns - 1;
    const long long y0 = !(sy > 0.0f) ? 0 : s.rows - 1;
    const long long z0 = !(sz > 0.0f) ? 0 : s.depth - 1;
    pixel = s.data + z0 * s.depth_stride + y0 * s.row_stride + x0 * s.column_stride;
  }
  warp_write_pixel(pixel, s, out, out_ks, fill, round_even);
}

// -- 2-D sampling: _warp_pixel, _interior_blend, _sample and _sample_cubic -----------

__device__ inline float warp_blend(float v00, float v01, float v10, float v11, float fx, float fy) {
  // The rows weighted by 1 - fx and fx, then blended by fy (the reference's order).
  const float gx = __fsub_rn(1.0f, fx);
  const float top = __fadd_rn(__fmul_rn(v00, gx), __fmul_rn(v01, fx));
  const float bottom = __fadd_rn(__fmul_rn(v10, gx), __fmul_rn(v11, fx));
  return __fadd_rn(top, __fmul_rn(__fsub_rn(bottom, top), fy));
}

template <typename T> __device__ inline float warp_tap(const T* p, long long at, float fill) {
  return p ? (float)p[at] : fill;
}

// Keys' cubic (a = -0.75) at offsets -1, 0, 1, 2 from the tap left of t: the CPU
// evaluates the polynomials in double (its constants are double literals) from
// float products a * x, and stores float weights.
__device__ inline void warp_cubic_weights(float t, float* w) {
  const float a = -0.75f;
  const float x0 = __fadd_rn(1.0f, t), x1 = t, x2 = __fsub_rn(1.0f, t), x3 = __fsub_rn(2.0f, t);
  const double b = (double)a + 2.0, c = (double)a + 3.0;
  w[0] = (float)__dsub_rn(
      __dmul_rn(__dadd_rn(__dmul_rn(__dsub_rn((double)__fmul_rn(a, x0), 5.0 * a), x0), 8.0 * a), x0), 4.0 * a);
  w[1] = (float)__dadd_rn(__dmul_rn(__dmul_rn(__dsub_rn(__dmul_rn(b, x1), c), x1), x1), 1.0);
  w[2] = (float)__dadd_rn(__dmul_rn(__dmul_rn(__dsub_rn(__dmul_rn(b, x2), c), x2), x2), 1.0);
  w[3] = (float)__dsub_rn(
      __dmul_rn(__dadd_rn(__dmul_rn(__dsub_rn((double)__fmul_rn(a, x3), 5.0 * a), x3), 8.0 * a), x3), 4.0 * a);
}

template <typename T>
__device__ inline void warp_sample_cubic(const WarpSource<T>& s, T* out, long long out_ks, float px, float py,
                                         int border, const float* fill, bool round_even) {
  typedef typename warp_acc<T>::type Acc;
  const float fx = floorf(px), fy = floorf(py);
  const long long x0 = (long long)fx - 1, y0 = (long long)fy - 1;
  float wx[4], wy[4];
  warp_cubic_weights(__fsub_rn(px, fx), wx);
  warp_cubic_weights(__fsub_rn(py, fy), wy);
  const T* taps[16];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) taps[i * 4 + j] = warp_pixel(s, 0, y0 + i, x0 + j, border);
  for (int k = 0; k < s.channels; ++k) {
    float acc = 0.0f;
    for (int i = 0; i < 4; ++i) {
      float row_acc = 0.0f;
      for (int j = 0; j < 4; ++j) {
        const T* p = taps[i * 4 + j];
        row_acc = warp_madd(row_acc, wx[j], p ? (Acc)p[k * s.channel_stride] : (Acc)fill[k]);
      }
      acc = __fadd_rn(acc, __fmul_rn(wy[i], row_acc));
    }
    out[k * out_ks] = warp_convert<T>(acc, round_even);
  }
}

// One output pixel from the source sampled at point (sx, sy).
template <typename T>
__device__ inline void warp_sample_2d(const WarpSource<T>& s, T* out, long long out_ks, float sx, float sy,
                                      int interp, int border, const float* fill, bool round_even) {
  const long long ks = s.channel_stride;
  if (interp == WARP_LINEAR) {
    // All four taps inside: the CPU's fast path (its own roundings: float sx - 0.5f).
    const float px = __fsub_rn(sx, 0.5f), py = __fsub_rn(sy, 0.5f);
    if (px >= 0.0f && py >= 0.0f && px < (float)(s.columns - 1) && py < (float)(s.rows - 1)) {
      const long long x0 = (long long)px, y0 = (long long)py;
      const float fx = __fsub_rn(px, (float)x0), fy = __fsub_rn(py, (float)y0);
      const long long cs = s.column_stride, rs = s.row_stride;
      const T* p00 = s.data + y0 * rs + x0 * cs;
      for (int k = 0; k < s.channels; ++k) {
        const long long c = k * ks;
        out[k * out_ks] = warp_convert<T>(
            warp_blend((float)p00[c], (float)p00[cs + c], (float)p00[rs + c], (float)p00[rs + cs + c], fx, fy),
            round_even);
      }
      return;
    }
  }
  if (!(sx > -WARP_FAR && sx < WARP_FAR && sy > -WARP_FAR && sy < WARP_FAR)) {
    warp_far(s, out, out_ks, sx, sy, 0.0f, border, fill, round_even);
    return;
  }
  if (interp == WARP_CUBIC) {
    warp_sample_cubic(s, out, out_ks, (float)((double)sx - 0.5), (float)((double)sy - 0.5), border, fill,
                      round_even);
    return;
  }
  if (interp == WARP_NN) {
    long long x0, y0;
    if (round_even) {
      x0 = (long long)warp_rint_shift(__fsub_rn(sx, 0.5f));
      y0 = (long long)warp_rint_shift(__fsub_rn(sy, 0.5f));
    } else {
      x0 = (long long)floorf(sx);
      y0 = (long long)floorf(sy);
    }
    warp_write_pixel(warp_pixel(s, 0, y0, x0, border), s, out, out_ks, fill, round_even);
    return;
  }
  const float px = (float)((double)sx - 0.5), py = (float)((double)sy - 0.5);
  float fx = floorf(px), fy = floorf(py);
  const long long x0 = (long long)fx, y0 = (long long)fy;
  fx = __fsub_rn(px, fx);
  fy = __fsub_rn(py, fy);
  const T* p00 = warp_pixel(s, 0, y0, x0, border);
  const T* p01 = warp_pixel(s, 0, y0, x0 + 1, border);
  const T* p10 = warp_pixel(s, 0, y0 + 1, x0, border);
  const T* p11 = warp_pixel(s, 0, y0 + 1, x0 + 1, border);
  for (int k = 0; k < s.channels; ++k) {
    const long long c = k * ks;
    out[k * out_ks] = warp_convert<T>(warp_blend(warp_tap(p00, c, fill[k]), warp_tap(p01, c, fill[k]),
                                                 warp_tap(p10, c, fill[k]), warp_tap(p11, c, fill[k]), fx, fy),
                                      round_even);
  }
}
