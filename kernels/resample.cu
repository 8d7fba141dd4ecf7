// Separable resampling (ndd/_ops/gpu_image.py launches it): the passes of resize,
// random_resized_crop, resize_crop_mirror and tensor_resize. A pass resamples
// one axis: each output element is the weighted sum of the input elements that
// a filter table (indices and weights per output index, made on the host by the
// CPU operator's own code) names along that axis.
//
// A launch runs one pass of every sample of a batch: a descriptor row per sample
// (int64, in device memory, blockIdx.y picks the row) gives its offsets, its
// table and its output extents with the input's strides. The output of a pass
// is contiguous; its input may be a strided window of an image.
//
// The sums are those of the CPU (ndd/_cpu/resample.pyx), so the results agree
// to the bit: over the taps in order from 0, either fused multiply-adds (the
// two-axis passes, as the CPU's vector code sums) or a rounded product added
// with one more rounding (the single-axis passes).
#include "common.cuh"
#include "half.cuh"

// Dimensions a sample may have.
#define RESAMPLE_MAX_DIMS 6

// Descriptor row: 0 input offset, 1 output offset, 2 output elements, 3 dims,
// 4 resampled axis, 5 table offset (of the pass's first output index, in the
// index and weight tables), 6 taps per output index, 7 flags (RESAMPLE_FUSED,
// RESAMPLE_SKIP_ZERO), then per dimension (outermost first): output extent,
// input stride (elements).
#define RESAMPLE_HEAD 8
#define RESAMPLE_ROW (RESAMPLE_HEAD + 2 * RESAMPLE_MAX_DIMS)
#define RESAMPLE_FUSED 1
#define RESAMPLE_SKIP_ZERO 2

__device__ inline float resample_load(const unsigned char* p) { return (float)*p; }
__device__ inline float resample_load(const short* p) { return (float)*p; }
__device__ inline float resample_load(const unsigned short* p) { return (float)*p; }
__device__ inline float resample_load(const float* p) { return *p; }
__device__ inline float resample_load(const ndd_half* p) { return half_bits_to_float(p->bits); }

// Integers saturate, then round half away from zero, in double so that a value
// just below one half (0.49999997f) does not round up.
__device__ inline void resample_store(float* out, float v) { *out = v; }
__device__ inline void resample_store(ndd_half* out, float v) { out->bits = float_to_half_bits(v); }
__device__ inline void resample_store(unsigned char* out, float v) {
  v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
  *out = (unsigned char)((double)v + 0.5);
}
__device__ inline void resample_store(unsigned short* out, float v) {
  v = v < 0.0f ? 0.0f : (v > 65535.0f ? 65535.0f : v);
  *out = (unsigned short)((double)v + 0.5);
}
__device__ inline void resample_store(short* out, float v) {
  v = v < -32768.0f ? -32768.0f : (v > 32767.0f ? 32767.0f : v);
  *out = v >= 0.0f ? (short)((double)v + 0.5) : (short)((double)v - 0.5);
}

template <typename In, typename Out, typename Index>
__device__ inline void resample_element(const In* __restrict__ in, Out* __restrict__ out,
                                        const long long* seg, const int* __restrict__ indices,
                                        const float* __restrict__ weights, Index e) {
  const int dims = (int)seg[3];
  const int axis = (int)seg[4];
  const int taps = (int)seg[6];
  const int flags = (int)seg[7];
  Index rest = e;
  Index j = 0;
  long long at = seg[0];
  for (int d = dims - 1; d >= 0; --d) {
    const Index extent = (Index)seg[RESAMPLE_HEAD + 2 * d];
    const Index k = rest % extent;
    rest /= extent;
    if (d == axis)
      j = k;
    else
      at += (long long)k * seg[RESAMPLE_HEAD + 2 * d + 1];
  }
  const long long axis_stride = seg[RESAMPLE_HEAD + 2 * axis + 1];
  const long long row = seg[5] + (long long)j * taps;
  float sum = 0.0f;
  if (flags & RESAMPLE_FUSED) {
    for (int t = 0; t < taps; ++t) {
      const float w = weights[row + t];
      if (w == 0.0f) continue;
      sum = fmaf(w, resample_load(in + at + indices[row + t] * axis_stride), sum);
    }
  } else {
    const bool skip_zero = (flags & RESAMPLE_SKIP_ZERO) != 0;
    for (int t = 0; t < taps; ++t) {
      const float w = weights[row + t];
      if (skip_zero && w == 0.0f) continue;
      sum = __fadd_rn(sum, __fmul_rn(w, resample_load(in + at + indices[row + t] * axis_stride)));
    }
  }
  resample_store(out + seg[1] + (long long)e, sum);
}

#define RESAMPLE(IN_NAME, IN, OUT_NAME, OUT)                                              \
  extern "C" __global__ void resample_##IN_NAME##_to_##OUT_NAME(                         \
      const IN* __restrict__ in, OUT* __restrict__ out, const long long* __restrict__ rows, \
      const int* __restrict__ indices, const float* __restrict__ weights) {              \
    const long long* seg = rows + (unsigned long long)blockIdx.y * RESAMPLE_ROW;         \
    const unsigned long long n = (unsigned long long)seg[2];                             \
    if (n <= 0x7fffffffull) {                                                            \
      for (unsigned int e = blockIdx.x * blockDim.x + threadIdx.x; e < n;                \
           e += blockDim.x * gridDim.x)                                                  \
        resample_element<IN, OUT, unsigned int>(in, out, seg, indices, weights, e);      \
    } else {                                                                             \
      GRID_STRIDE_LOOP(e, n)                                                             \
      resample_element<IN, OUT, unsigned long long>(in, out, seg, indices, weights, e);  \
    }                                                                                    \
  }

#define RESAMPLE_TO_ALL(IN_NAME, IN)                                                      \
  RESAMPLE(IN_NAME, IN, u8, unsigned char)                                               \
  RESAMPLE(IN_NAME, IN, i16, short)                                                      \
  RESAMPLE(IN_NAME, IN, u16, unsigned short)                                             \
  RESAMPLE(IN_NAME, IN, f32, float)                                                      \
  RESAMPLE(IN_NAME, IN, f16, ndd_half)

RESAMPLE_TO_ALL(u8, unsigned char)
RESAMPLE_TO_ALL(i16, short)
RESAMPLE_TO_ALL(u16, unsigned short)
RESAMPLE_TO_ALL(f32, float)
RESAMPLE_TO_ALL(f16, ndd_half)

// Filter tables made on the GPU: the linear, cubic and triangular tables of
// filter_table (ndd/_cpu/resample.pyx), to the bit. Its arithmetic is IEEE double
// with every operation rounded on its own (no fused multiply-add), as the host's
// is; the Lanczos and Gaussian tables, whose sine and exponential differ between
// the two math libraries, are made on the host. One row per table: 0 the
// table's offset, 1 output indices, 2 taps, 3 input extent, 4 filter kind
// (DALIInterpType), 5 the first pixel read (subtracted from every index), then
// the bits of the doubles lo, scale, widen and support. blockIdx.y picks the
// row; a thread makes one output index's taps.
#define RESAMPLE_TABLE_ROW 10
#define RESAMPLE_LINEAR 1
#define RESAMPLE_CUBIC 2

__device__ inline double resample_filter(int kind, double x) {
  x = fabs(x);
  if (kind == RESAMPLE_CUBIC) {
    if (x < 1.0)
      return __dadd_rn(__dmul_rn(__dmul_rn(__dsub_rn(__dmul_rn(1.5, x), 2.5), x), x), 1.0);
    if (x < 2.0)
      return __dadd_rn(
          __dmul_rn(__dsub_rn(__dmul_rn(__dadd_rn(__dmul_rn(-0.5, x), 2.5), x), 4.0), x), 2.0);
    return 0.0;
  }
  return x < 1.0 ? __dsub_rn(1.0, x) : 0.0;
}

extern "C" __global__ void resample_tables(const long long* __restrict__ rows,
                                           int* __restrict__ indices,
                                           float* __restrict__ weights) {
  const long long* row = rows + (unsigned long long)blockIdx.y * RESAMPLE_TABLE_ROW;
  const long long n = row[1];
  const int taps = (int)row[2];
  const long long last = row[3] - 1;
  const int kind = (int)row[4];
  const long long shift = row[5];
  const double lo = __longlong_as_double(row[6]);
  const double scale = __longlong_as_double(row[7]);
  const double widen = __longlong_as_double(row[8]);
  const double support = __longlong_as_double(row[9]);
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n;
       j += (long long)blockDim.x * gridDim.x) {
    const long long at = row[0] + j * taps;
    const double center = __dadd_rn(lo, __dmul_rn((double)j + 0.5, scale));
    const long long first = (long long)floor(__dsub_rn(__dsub_rn(center, 0.5), support)) + 1;
    double total = 0.0;
    for (int t = 0; t < taps; ++t) {
      const long long k = first + t;
      const double offset = __dsub_rn((double)k + 0.5, center);
      double value = resample_filter(kind, offset / widen);
      if (value != 0.0 && offset >= support) value = 0.0;
      total = __dadd_rn(total, value);
      weights[at + t] = (float)value;
      indices[at + t] = (int)((k < 0 ? 0 : (k > last ? last : k)) - shift);
    }
    if (total != 0.0)
      for (int t = 0; t < taps; ++t) weights[at + t] = (float)((double)weights[at + t] / total);
  }
}
