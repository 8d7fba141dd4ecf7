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
// to the bit: over the taps in order from 0, each a rounded product added with
// one more rounding (as the reference sums; never a fused multiply-add).
#include "common.cuh"
#include "half.cuh"

// Dimensions a sample may have.
#define RESAMPLE_MAX_DIMS 6

// Descriptor row: 0 input offset, 1 output offset, 2 output elements, 3 dims,
// 4 resampled axis, 5 table offset (of the pass's first output index, in the
// index and weight tables), 6 taps per output index, 7 flags (RESAMPLE_FUSED,
// RESAMPLE_SKIP_ZERO), 8 how integer outputs round (RESAMPLE_ROUND_*), 9 the axis
// it follows, 10 and 11 its first regular column and their count (ROUND_COLUMNS),
// then per dimension (outermost first): output extent, input stride (elements).
#define RESAMPLE_HEAD 12
#define RESAMPLE_ROW (RESAMPLE_HEAD + 2 * RESAMPLE_MAX_DIMS)
#define RESAMPLE_FUSED 1
#define RESAMPLE_SKIP_ZERO 2

// How integer outputs round, as the reference's last pass (resample_steps in
// ndd/_cpu/resample.pyx): everything to nearest even; along the rounding axis, the
// regular columns a whole number of vector lanes covers to nearest even and the
// others half away from zero; or, in each run of the elements after the rounding
// axis, those past the last whole group of lanes half away from zero and the others
// to nearest even. The lanes: 16 for 8-bit outputs, 8 for 16-bit ones.
#define RESAMPLE_ROUND_EVEN 0
#define RESAMPLE_ROUND_COLUMNS 1
#define RESAMPLE_ROUND_ROWS 2

__device__ inline float resample_load(const unsigned char* p) { return (float)*p; }
__device__ inline float resample_load(const short* p) { return (float)*p; }
__device__ inline float resample_load(const unsigned short* p) { return (float)*p; }
__device__ inline float resample_load(const float* p) { return *p; }
__device__ inline float resample_load(const ndd_half* p) { return half_bits_to_float(p->bits); }

// Integers saturate, then round half away from zero (in double, so that a value
// just below one half, 0.49999997f, does not round up), or with even to nearest
// even: _store of ndd/_cpu/resample.pyx.
template <typename Out>
__device__ inline void resample_store_integer(Out* out, float v, float low, float high, bool even) {
  v = v < low ? low : (v > high ? high : v);
  *out = even ? (Out)__float2int_rn(v) : (Out)(v >= 0.0f ? (double)v + 0.5 : (double)v - 0.5);
}
__device__ inline void resample_store(float* out, float v, bool) { *out = v; }
__device__ inline void resample_store(ndd_half* out, float v, bool) { out->bits = float_to_half_bits(v); }
__device__ inline void resample_store(unsigned char* out, float v, bool even) {
  resample_store_integer(out, v, 0.0f, 255.0f, even);
}
__device__ inline void resample_store(unsigned short* out, float v, bool even) {
  resample_store_integer(out, v, 0.0f, 65535.0f, even);
}
__device__ inline void resample_store(short* out, float v, bool even) {
  resample_store_integer(out, v, -32768.0f, 32767.0f, even);
}

template <typename Out>
__device__ inline int resample_lanes() { return sizeof(Out) == 1 ? 16 : 8; }

template <typename In, typename Out, typename Index>
__device__ inline void resample_element(const In* __restrict__ in, Out* __restrict__ out,
                                        const long long* seg, const int* __restrict__ indices,
                                        const float* __restrict__ weights, Index e) {
  const int dims = (int)seg[3];
  const int axis = (int)seg[4];
  const int taps = (int)seg[6];
  const int flags = (int)seg[7];
  const int round_mode = (int)seg[8];
  const int round_axis = (int)seg[9];
  Index rest = e;
  Index j = 0;
  Index column = 0;     // the element's index along the rounding axis
  Index run = 1;        // elements after the rounding axis
  long long at = seg[0];
  for (int d = dims - 1; d >= 0; --d) {
    const Index extent = (Index)seg[RESAMPLE_HEAD + 2 * d];
    const Index k = rest % extent;
    rest /= extent;
    if (d == round_axis) column = k;
    if (d > round_axis) run *= extent;
    if (d == axis)
      j = k;
    else
      at += (long long)k * seg[RESAMPLE_HEAD + 2 * d + 1];
  }
  const long long axis_stride = seg[RESAMPLE_HEAD + 2 * axis + 1];
  const long long row = seg[5] + (long long)j * taps;
  // Zero weights are skipped where the CPU skips them (adding 0 * x changes a sum
  // only where x is infinite or NaN).
  const bool skip_zero = (flags & (RESAMPLE_FUSED | RESAMPLE_SKIP_ZERO)) != 0;
  float sum = 0.0f;
  for (int t = 0; t < taps; ++t) {
    const float w = weights[row + t];
    if (skip_zero && w == 0.0f) continue;
    sum = __fadd_rn(sum, __fmul_rn(w, resample_load(in + at + indices[row + t] * axis_stride)));
  }
  bool even = true;
  if (round_mode == RESAMPLE_ROUND_COLUMNS) {
    const long long first = seg[10], count = seg[11];
    const long long stop = first + count - count % resample_lanes<Out>();
    even = (long long)column >= first && (long long)column < stop;
  } else if (round_mode == RESAMPLE_ROUND_ROWS) {
    const Index lanes = (Index)resample_lanes<Out>();
    even = e % run < run - run % lanes;
  }
  resample_store(out + seg[1] + (long long)e, sum, even);
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
// _fill_table (ndd/_cpu/resample.pyx), to the bit. Its arithmetic is IEEE single
// precision with every operation rounded on its own (no fused multiply-add), as the
// host's is; the Lanczos and Gaussian tables, whose sine and exponential differ
// between the two math libraries, are made on the host. A filter is a table of
// samples (the triangle 0, 1, 0, or Catmull-Rom's cubic at 129 points over [-2, 2])
// read between samples by linear interpolation. One row per table: 0 the table's
// offset, 1 output indices, 2 taps, 3 input extent, 4 filter kind (DALIInterpType),
// 5 the first pixel read (subtracted from every index), then the bits of the floats
// lo (the interval's start), step (input pixels per output pixel), anchor (the
// filter's centre, in pixels from its first sample) and the samples per pixel.
// blockIdx.y picks the row; a thread makes one output index's taps.
#define RESAMPLE_TABLE_ROW 10
#define RESAMPLE_CUBIC 2
#define RESAMPLE_CUBIC_COUNT 129

__device__ inline float resample_cubic_sample(int i) {
  // _cubic_window(_table_point(i, 129, 4)) of resample.pyx.
  float x = fabsf(__fdiv_rn(__fmul_rn(4.0f, __fsub_rn((float)i, __fmul_rn(128.0f, 0.5f))), 128.0f));
  if (x >= 2.0f) return 0.0f;
  const float x2 = __fmul_rn(x, x), x3 = __fmul_rn(x2, x);
  if (x > 1.0f)
    return __fadd_rn(
        __fsub_rn(__fadd_rn(__fmul_rn(-0.5f, x3), __fmul_rn(2.5f, x2)), __fmul_rn(4.0f, x)), 2.0f);
  return __fadd_rn(__fsub_rn(__fmul_rn(1.5f, x3), __fmul_rn(2.5f, x2)), 1.0f);
}

__device__ inline float resample_sample(int kind, int i) {
  if (kind == RESAMPLE_CUBIC) return resample_cubic_sample(i);
  return i == 1 ? 1.0f : 0.0f;
}

__device__ inline float resample_filter_at(int kind, float x) {
  // _filter_at of resample.pyx: 0 outside the table.
  const int count = kind == RESAMPLE_CUBIC ? RESAMPLE_CUBIC_COUNT : 3;
  if (!(x > -1.0f) || x >= (float)count) return 0.0f;
  const int x0 = (int)floorf(x);
  const float d = __fsub_rn(x, (float)x0);
  const float f0 = x0 < 0 ? 0.0f : resample_sample(kind, x0);
  const float f1 = x0 + 1 >= count ? 0.0f : resample_sample(kind, x0 + 1);
  return __fadd_rn(f0, __fmul_rn(d, __fsub_rn(f1, f0)));
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
  const float lo = __int_as_float((int)row[6]);
  const float step = __int_as_float((int)row[7]);
  const float anchor = __int_as_float((int)row[8]);
  const float samples = __int_as_float((int)row[9]);
  // _first_point of resample.pyx.
  const float start = __fadd_rn(lo, __fsub_rn(__fsub_rn(__fmul_rn(0.5f, step), 0.5f), anchor));
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n;
       j += (long long)blockDim.x * gridDim.x) {
    const long long at = row[0] + j * taps;
    const float point = __fadd_rn(__fmul_rn((float)j, step), start);
    const long long first = (long long)ceilf(point);
    const float offset = __fsub_rn((float)first, point);
    float total = 0.0f;
    for (int t = 0; t < taps; ++t) {
      const long long k = first + t;
      const float value = resample_filter_at(kind, __fmul_rn(__fadd_rn(offset, (float)t), samples));
      total = __fadd_rn(total, value);
      weights[at + t] = value;
      indices[at + t] = (int)((k < 0 ? 0 : (k > last ? last : k)) - shift);
    }
    if (total != 0.0f)
      for (int t = 0; t < taps; ++t) weights[at + t] = __fdiv_rn(weights[at + t], total);
  }
}
