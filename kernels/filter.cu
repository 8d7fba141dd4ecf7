// Correlation windows (ndd/_ops/gpu_filters.py launches them): the separable
// passes of gaussian_blur and laplacian, laplacian's single 2-D window, and
// filter's 2-D and 3-D windows, with every border of the CPU.
//
// A part of a sample is seen as (outer, depth, height, width, inner) elements:
// one to three spatial axes (padded with leading axes of 1), the axes before
// them (frames, leading channels) as outer, those after them (channels) as
// inner. Each output element sums the window's non-zero taps, in the order the
// CPU takes them (row-major in the window), each tap reading the input element
// that the index maps of the three axes name for its padded position; -1 in a
// map stands for the fill value (border "constant"). The maps and the taps are
// made on the host by the operator's own module (ndd/_ops/filters.py), so the
// borders are those of the CPU by construction.
//
// A launch runs one step of every sample of a batch: a descriptor row per part
// (int64, in device memory, blockIdx.y picks the row). Passes between steps
// store float32, as the CPU's do.
//
// The sums are those of the CPU (ndd/_cpu/convolution_taps.h, AVX2 path): in
// float32, from 0, one fused multiply-add per tap. A volume's window sums each
// of its leading slices so, then adds the slices' sums in order (one rounding
// each), as the CPU adds its per-slice correlations; laplacian's partial
// derivatives are added in order the same way.
#include "common.cuh"
#include "half.cuh"

// Descriptor row (offsets in elements): 0 input offset, 1 output offset, 2 output
// elements, 3 outer, 4-6 input depth, height, width, 7 inner, 8-10 output depth,
// height, width, 11-13 offsets of the depth, height and width index maps in the
// map table (output index i + tap offset j reads map[i + j]), 14 first tap (in
// the tap and weight tables), 15 taps, 16 fill value (float32 bits), 17 flags,
// 18 offset of the element's running total (FILTER_ADD_TOTAL).
#define FILTER_ROW 19
// Add the sums of the leading window slices (volumes) instead of keeping the last.
#define FILTER_SUM_SLICES 1
// Add the float32 total read at row[18] + element to the sum before storing it.
#define FILTER_ADD_TOTAL 2
// No window: convert each element to the output type (a sample without passes).
#define FILTER_CONVERT 4
// Integer results round halves to even (filter's, as the reference's) instead of away.
#define FILTER_ROUND_EVEN 8
// A tap: depth, height and width offsets in the window, and 1 where it ends a slice.
#define FILTER_TAP_WORDS 4

template <typename A, typename B> struct filter_same {
  static constexpr bool value = false;
};
// Whether results in T are rounded to integers (every output type but the floats).
template <typename T> struct filter_integer {
  static constexpr bool value = true;
};
template <> struct filter_integer<float> {
  static constexpr bool value = false;
};
template <> struct filter_integer<double> {
  static constexpr bool value = false;
};
template <> struct filter_integer<ndd_half> {
  static constexpr bool value = false;
};
template <typename A> struct filter_same<A, A> {
  static constexpr bool value = true;
};

// Inputs as float32, rounded to the nearest as the CPU's C conversions round.
template <typename T> __device__ inline float filter_load(const T* p) { return (float)*p; }
__device__ inline float filter_load(const ndd_half* p) { return half_bits_to_float(p->bits); }

// Stores as the CPU's (ndd/_cpu/convolution.pyx, _store): 8- and 16-bit integers
// are saturated, then a half is added in float32 toward the sign and the result
// truncated; 32-bit ones the same in double; 64-bit ones (converted by
// cast_array on the CPU) rounded half away from zero and saturated; float16
// rounded to the nearest even. NaN gives 0 in integers.
template <typename T>
__device__ inline T filter_narrow(float v, float low, float high) {
  if (v != v) return 0;
  v = v < low ? low : v;
  v = v > high ? high : v;
  return (T)(int)__fadd_rn(v, v >= 0.0f ? 0.5f : -0.5f);
}
template <typename T>
__device__ inline T filter_int32(float f, double low, double high) {
  if (f != f) return 0;
  double v = (double)f;
  v = v < low ? low : v;
  v = v > high ? high : v;
  return (T)(v >= 0.0 ? v + 0.5 : v - 0.5);
}
template <typename T>
__device__ inline T filter_int64(float v, float low, float high, T lowest, T highest) {
  if (v != v) return 0;
  const float r = roundf(v);
  if (r >= high) return highest;
  if (r <= low) return lowest;
  return (T)r;
}

__device__ inline void filter_store(float* out, float v) { *out = v; }
__device__ inline void filter_store(double* out, float v) { *out = (double)v; }
__device__ inline void filter_store(ndd_half* out, float v) { out->bits = float_to_half_bits(v); }
__device__ inline void filter_store(unsigned char* out, float v) {
  *out = filter_narrow<unsigned char>(v, 0.0f, 255.0f);
}
__device__ inline void filter_store(signed char* out, float v) {
  *out = filter_narrow<signed char>(v, -128.0f, 127.0f);
}
__device__ inline void filter_store(unsigned short* out, float v) {
  *out = filter_narrow<unsigned short>(v, 0.0f, 65535.0f);
}
__device__ inline void filter_store(short* out, float v) {
  *out = filter_narrow<short>(v, -32768.0f, 32767.0f);
}
__device__ inline void filter_store(unsigned int* out, float v) {
  *out = filter_int32<unsigned int>(v, 0.0, 4294967295.0);
}
__device__ inline void filter_store(int* out, float v) {
  *out = filter_int32<int>(v, -2147483648.0, 2147483647.0);
}
// The bounds are 2**63 and 2**64 (the integer maxima as float32 round up to them).
__device__ inline void filter_store(long long* out, float v) {
  *out = filter_int64<long long>(v, -9223372036854775808.0f, 9223372036854775808.0f,
                                 -9223372036854775807LL - 1, 9223372036854775807LL);
}
__device__ inline void filter_store(unsigned long long* out, float v) {
  *out = filter_int64<unsigned long long>(v, 0.0f, 18446744073709551616.0f, 0ULL,
                                          18446744073709551615ULL);
}

// A sample without passes is converted as numpy's astype converts it: to its own
// type unchanged, to float32 rounded to the nearest.
template <typename In, typename Out> __device__ inline void filter_convert(const In* in, Out* out) {
  if constexpr (filter_same<In, Out>::value)
    *out = *in;
  else
    filter_store(out, filter_load(in));
}

// ``out`` and ``totals`` are not __restrict__: a step that adds into the running
// totals writes them where it reads them.
template <typename In, typename Out, typename Index>
__device__ inline void filter_element(const In* __restrict__ in, Out* out, const long long* seg,
                                      const float* totals, const int* __restrict__ maps,
                                      const int* __restrict__ taps, const float* __restrict__ weights,
                                      Index e) {
  const long long flags = seg[17];
  if (flags & FILTER_CONVERT) {
    filter_convert(in + seg[0] + (long long)e, out + seg[1] + (long long)e);
    return;
  }
  Index rest = e;
  const Index inner = (Index)seg[7];
  const Index c = rest % inner;
  rest /= inner;
  const Index x = rest % (Index)seg[10];
  rest /= (Index)seg[10];
  const Index y = rest % (Index)seg[9];
  rest /= (Index)seg[9];
  const Index z = rest % (Index)seg[8];
  const Index o = rest / (Index)seg[8];
  const long long depth = seg[4], height = seg[5], width = seg[6];
  const In* part = in + seg[0] + (long long)o * depth * height * width * (long long)inner + (long long)c;
  const int* map_z = maps + seg[11] + (long long)z;
  const int* map_y = maps + seg[12] + (long long)y;
  const int* map_x = maps + seg[13] + (long long)x;
  const int* tap = taps + FILTER_TAP_WORDS * seg[14];
  const float* w = weights + seg[14];
  const long long count = seg[15];
  const float fill = __int_as_float((int)seg[16]);
  const bool sum_slices = (flags & FILTER_SUM_SLICES) != 0;
  float total = 0.0f;
  float sum = 0.0f;
  for (long long t = 0; t < count; ++t, tap += FILTER_TAP_WORDS) {
    const long long zz = map_z[tap[0]];
    const long long yy = map_y[tap[1]];
    const long long xx = map_x[tap[2]];
    const float v = (zz < 0 || yy < 0 || xx < 0)
                        ? fill
                        : filter_load(part + ((zz * height + yy) * width + xx) * (long long)inner);
    sum = fmaf(w[t], v, sum);
    if (tap[3]) {
      total = sum_slices ? __fadd_rn(total, sum) : sum;
      sum = 0.0f;
    }
  }
  if (flags & FILTER_ADD_TOTAL) total = __fadd_rn(totals[seg[18] + (long long)e], total);
  // An integral value passes the stores' rounding unchanged.
  if (filter_integer<Out>::value && (flags & FILTER_ROUND_EVEN)) total = rintf(total);
  filter_store(out + seg[1] + (long long)e, total);
}

#define FILTER(IN_NAME, IN, OUT_NAME, OUT)                                                        \
  extern "C" __global__ void filter_##IN_NAME##_to_##OUT_NAME(                                   \
      const IN* __restrict__ in, OUT* out, const long long* __restrict__ rows, const float* totals, \
      const int* __restrict__ maps, const int* __restrict__ taps,                                 \
      const float* __restrict__ weights) {                                                        \
    const long long* seg = rows + (unsigned long long)blockIdx.y * FILTER_ROW;                   \
    const unsigned long long n = (unsigned long long)seg[2];                                     \
    if (n <= 0x7fffffffull) {                                                                    \
      for (unsigned int e = blockIdx.x * blockDim.x + threadIdx.x; e < n;                        \
           e += blockDim.x * gridDim.x)                                                          \
        filter_element<IN, OUT, unsigned int>(in, out, seg, totals, maps, taps, weights, e);     \
    } else {                                                                                     \
      GRID_STRIDE_LOOP(e, n)                                                                     \
      filter_element<IN, OUT, unsigned long long>(in, out, seg, totals, maps, taps, weights, e); \
    }                                                                                            \
  }

// A type's passes: the whole filter in it, its first pass into float32, its last
// pass from float32.
#define FILTER_TYPE(NAME, T)  \
  FILTER(NAME, T, NAME, T)    \
  FILTER(NAME, T, f32, float) \
  FILTER(f32, float, NAME, T)

FILTER(f32, float, f32, float)
FILTER_TYPE(u8, unsigned char)
FILTER_TYPE(i8, signed char)
FILTER_TYPE(u16, unsigned short)
FILTER_TYPE(i16, short)
FILTER_TYPE(u32, unsigned int)
FILTER_TYPE(i32, int)
FILTER_TYPE(u64, unsigned long long)
FILTER_TYPE(i64, long long)
FILTER_TYPE(f16, ndd_half)
FILTER_TYPE(f64, double)
