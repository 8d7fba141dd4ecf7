// Kernels of the image operators (ndd/_ops/gpu_image.py launches them).
//
// crop_mirror_normalize is one pass: each output pixel reads its input pixel
// (through the crop window, mirrored or not, in any layout), normalizes every
// channel, converts and stores it in the output layout, or stores the fill
// values where the window leaves the input and in the added channel of
// pad_output. A batch is one launch: a descriptor row per sample (int64, in
// device memory, blockIdx.y picks the row) places it, and a float table holds
// its per-channel mean, multiplier and fill values.
#include "common.cuh"
#include "half.cuh"

// Output dimensions besides the channel that a sample may have (FDHWC has 4).
#define CMN_MAX_DIMS 5

// Descriptor row of a sample (offsets, strides and extents in elements):
//   0 input offset, 1 output offset, 2 output pixels (the product of the extents
//   below), 3 dims, 4 offset of the sample's parameters in the float table
//   (mean[in channels], multiplier[in channels], fill[out channels]), 5 input
//   channels, 6 output channels, 7 input channel stride, 8 output channel stride,
//   then per output dimension (outermost first, channel excluded): extent, input
//   index of output index 0, input step (1, or -1 mirrored), input extent, input
//   stride, output stride.
#define CMN_HEAD 9
#define CMN_DIM_WORDS 6
#define CMN_ROW (CMN_HEAD + CMN_DIM_WORDS * CMN_MAX_DIMS)

// Stored values as the CPU operator stores them (ndd/_cpu/crop_mirror_normalize.pyx):
// floats as they are, float16 rounded to the nearest even, bytes rounded half
// away from zero and saturated (NaN gives 0).
__device__ inline void cmn_store(float* out, float v) { *out = v; }
__device__ inline void cmn_store(ndd_half* out, float v) { out->bits = float_to_half_bits(v); }
__device__ inline void cmn_store(unsigned char* out, float v) {
  *out = !(v > 0.0f) ? 0 : (v >= 255.0f ? 255 : (unsigned char)roundf(v));
}
__device__ inline void cmn_store(signed char* out, float v) {
  *out = !(v > -128.0f) ? (v < 0.0f ? -128 : 0) : (v >= 127.0f ? 127 : (signed char)roundf(v));
}

__device__ inline float cmn_load(const unsigned char* p) { return (float)*p; }
__device__ inline float cmn_load(const short* p) { return (float)*p; }
__device__ inline float cmn_load(const unsigned short* p) { return (float)*p; }
__device__ inline float cmn_load(const int* p) { return __int2float_rn(*p); }
__device__ inline float cmn_load(const float* p) { return *p; }
__device__ inline float cmn_load(const ndd_half* p) { return half_bits_to_float(p->bits); }

// One output pixel: every channel of it, normalized in the CPU's order of
// operations ((x - mean) * multiplier + shift, each rounded: no fused multiply-add).
template <typename In, typename Out, typename Index>
__device__ inline void cmn_pixel(const In* __restrict__ in, Out* __restrict__ out,
                                 const long long* seg, const float* params, float shift,
                                 Index p) {
  const int dims = (int)seg[3];
  long long in_at = seg[0];
  long long out_at = seg[1];
  bool inside = true;
  for (int d = dims - 1; d >= 0; --d) {
    const long long* dim = seg + CMN_HEAD + CMN_DIM_WORDS * d;
    const Index extent = (Index)dim[0];
    const Index i = p % extent;
    p /= extent;
    const long long index = dim[1] + dim[2] * (long long)i;
    inside = inside && index >= 0 && index < dim[3];
    in_at += index * dim[4];
    out_at += (long long)i * dim[5];
  }
  const int in_channels = (int)seg[5];
  const int out_channels = (int)seg[6];
  const float* mean = params;
  const float* multiplier = params + in_channels;
  const float* fill = params + 2 * in_channels;
  for (int c = 0; c < out_channels; ++c) {
    float v;
    if (inside && c < in_channels) {
      const float x = cmn_load(in + in_at + (long long)c * seg[7]);
      v = __fadd_rn(__fmul_rn(__fsub_rn(x, mean[c]), multiplier[c]), shift);
    } else {
      v = fill[c];
    }
    cmn_store(out + out_at + (long long)c * seg[8], v);
  }
}

#define CMN(IN_NAME, IN, OUT_NAME, OUT)                                                  \
  extern "C" __global__ void crop_mirror_normalize_##IN_NAME##_to_##OUT_NAME(           \
      const IN* __restrict__ in, OUT* __restrict__ out, const long long* __restrict__ rows, \
      const float* __restrict__ params, float shift) {                                  \
    const long long* seg = rows + (unsigned long long)blockIdx.y * CMN_ROW;             \
    const unsigned long long pixels = (unsigned long long)seg[2];                       \
    const float* sample_params = params + seg[4];                                       \
    if (pixels <= 0x7fffffffull) {                                                      \
      for (unsigned int p = blockIdx.x * blockDim.x + threadIdx.x; p < pixels;          \
           p += blockDim.x * gridDim.x)                                                 \
        cmn_pixel<IN, OUT, unsigned int>(in, out, seg, sample_params, shift, p);        \
    } else {                                                                            \
      GRID_STRIDE_LOOP(p, pixels)                                                       \
      cmn_pixel<IN, OUT, unsigned long long>(in, out, seg, sample_params, shift, p);    \
    }                                                                                   \
  }

#define CMN_TO_ALL(IN_NAME, IN)                                                          \
  CMN(IN_NAME, IN, f32, float)                                                          \
  CMN(IN_NAME, IN, f16, ndd_half)                                                       \
  CMN(IN_NAME, IN, u8, unsigned char)                                                   \
  CMN(IN_NAME, IN, i8, signed char)

CMN_TO_ALL(u8, unsigned char)
CMN_TO_ALL(i16, short)
CMN_TO_ALL(u16, unsigned short)
CMN_TO_ALL(i32, int)
CMN_TO_ALL(f32, float)
CMN_TO_ALL(f16, ndd_half)

// -- colour: the brightness/contrast family, the hue/saturation family and
// color_space_conversion ----------------------------------------------------------
//
// A descriptor row per segment (a sample, or a frame of a sequence whose
// arguments change per frame): 0 input offset, 1 output offset, 2 pixels,
// 3 input channels, 4 output channels, 5 offset of the segment's parameters in
// the float table, 6 mode, 7 rounding. Mode COLOR_AFFINE maps every value
// (of any channel count) to value * scale + offset, parameters [scale, offset];
// mode COLOR_MATRIX maps each pixel to sum_j m[c][j] * (x[j] - pre[j]) + post[c],
// summed left to right, parameters [pre[in], m[out][in], post[out]];
// COLOR_MATRIX_REVERSED reads the pixel's channels in reverse order first (a BGR
// pixel through an RGB matrix, summed R, G, B as the CPU sums it). Integer
// results either round halves away from zero (COLOR_HALF_AWAY, the reference's
// cast: saturating, NaN gives 0) or add one half in float and truncate
// (COLOR_HALF_UP, the CPU's colour-matrix pass over bytes).
#define COLOR_ROW 8
#define COLOR_AFFINE 0
#define COLOR_MATRIX 1
#define COLOR_MATRIX_REVERSED 2
#define COLOR_HALF_AWAY 0
#define COLOR_HALF_UP 1
#define COLOR_MAX_CHANNELS 4

__device__ inline float color_load(const unsigned char* p) { return (float)*p; }
__device__ inline float color_load(const short* p) { return (float)*p; }
__device__ inline float color_load(const int* p) { return __int2float_rn(*p); }
__device__ inline float color_load(const float* p) { return *p; }
__device__ inline float color_load(const ndd_half* p) { return half_bits_to_float(p->bits); }

__device__ inline void color_store(float* out, float v, int) { *out = v; }
__device__ inline void color_store(ndd_half* out, float v, int) { out->bits = float_to_half_bits(v); }
__device__ inline void color_store(unsigned char* out, float v, int rounding) {
  if (rounding == COLOR_HALF_UP) {
    v += 0.5f;
    v = v > 0.0f ? v : 0.0f;
    v = v < 255.0f ? v : 255.0f;
    *out = (unsigned char)(int)v;
  } else {
    cmn_store(out, v);
  }
}
__device__ inline void color_store(short* out, float v, int) {
  *out = !(v > -32768.0f) ? (v < 0.0f ? -32768 : 0) : (v >= 32767.0f ? 32767 : (short)roundf(v));
}
__device__ inline void color_store(int* out, float v, int) {
  // 2147483647 is not a float: from 2^31 on the result saturates.
  *out = !(v > -2147483648.0f) ? (v < 0.0f ? (int)0x80000000 : 0)
                               : (v >= 2147483648.0f ? 0x7fffffff : (int)roundf(v));
}

template <typename In, typename Out>
__device__ inline void color_element(const In* __restrict__ in, Out* __restrict__ out,
                                     const long long* seg, const float* params,
                                     unsigned long long i) {
  const int rounding = (int)seg[7];
  if (seg[6] == COLOR_AFFINE) {
    const float v = color_load(in + seg[0] + (long long)i);
    color_store(out + seg[1] + (long long)i, __fadd_rn(__fmul_rn(v, params[0]), params[1]), rounding);
    return;
  }
  const int in_channels = (int)seg[3];
  const int out_channels = (int)seg[4];
  const float* pre = params;
  const float* m = params + in_channels;
  const float* post = m + out_channels * in_channels;
  float x[COLOR_MAX_CHANNELS];
  const In* pixel = in + seg[0] + (long long)i * in_channels;
  const bool reversed = seg[6] == COLOR_MATRIX_REVERSED;
  for (int j = 0; j < in_channels; ++j)
    x[j] = __fsub_rn(color_load(pixel + (reversed ? in_channels - 1 - j : j)), pre[j]);
  Out* target = out + seg[1] + (long long)i * out_channels;
  for (int c = 0; c < out_channels; ++c) {
    const float* row = m + c * in_channels;
    float v = __fmul_rn(row[0], x[0]);
    for (int j = 1; j < in_channels; ++j) v = __fadd_rn(v, __fmul_rn(row[j], x[j]));
    color_store(target + c, __fadd_rn(v, post[c]), rounding);
  }
}

// Elements of a segment: values (affine) or pixels (matrix).
#define COLOR(IN_NAME, IN, OUT_NAME, OUT)                                                  \
  extern "C" __global__ void color_##IN_NAME##_to_##OUT_NAME(                             \
      const IN* __restrict__ in, OUT* __restrict__ out, const long long* __restrict__ rows,  \
      const float* __restrict__ params) {                                                 \
    const long long* seg = rows + (unsigned long long)blockIdx.y * COLOR_ROW;             \
    const unsigned long long n =                                                          \
        (unsigned long long)(seg[6] == COLOR_AFFINE ? seg[2] * seg[3] : seg[2]);          \
    GRID_STRIDE_LOOP(i, n) color_element<IN, OUT>(in, out, seg, params + seg[5], i);      \
  }

#define COLOR_TO_ALL(IN_NAME, IN)                                                          \
  COLOR(IN_NAME, IN, u8, unsigned char)                                                   \
  COLOR(IN_NAME, IN, i16, short)                                                          \
  COLOR(IN_NAME, IN, i32, int)                                                            \
  COLOR(IN_NAME, IN, f32, float)                                                          \
  COLOR(IN_NAME, IN, f16, ndd_half)

COLOR_TO_ALL(u8, unsigned char)
COLOR_TO_ALL(i16, short)
COLOR_TO_ALL(i32, int)
COLOR_TO_ALL(f32, float)
COLOR_TO_ALL(f16, ndd_half)

// -- equalize: the histogram of each plane (a channel of a frame) and its table ----
//
// One block per plane (first + blockIdx.y): a histogram in shared memory, the
// table (as ndd/_cpu/color.pyx's equalize_frames, OpenCV's equalizeHist: a float32
// scale, halves rounded to even), then every value looked up. Descriptor row per
// plane: 0 input offset, 1 output offset, 2 values, 3 dims, then per dimension
// (outermost first, EQUALIZE_MAX_DIMS): extent, stride.
#define EQUALIZE_MAX_DIMS 3
#define EQUALIZE_ROW (4 + 2 * EQUALIZE_MAX_DIMS)

__device__ inline long long equalize_at(const long long* seg, unsigned long long i) {
  long long at = 0;
  for (int d = (int)seg[3] - 1; d >= 0; --d) {
    const unsigned long long extent = (unsigned long long)seg[4 + 2 * d];
    at += (long long)(i % extent) * seg[5 + 2 * d];
    i /= extent;
  }
  return at;
}

extern "C" __global__ void equalize(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                                    const long long* __restrict__ rows, long long first) {
  __shared__ unsigned int counts[256];
  __shared__ unsigned char table[256];
  const long long* seg = rows + (unsigned long long)(first + blockIdx.y) * EQUALIZE_ROW;
  const unsigned long long values = (unsigned long long)seg[2];
  for (int v = threadIdx.x; v < 256; v += blockDim.x) counts[v] = 0;
  __syncthreads();
  for (unsigned long long i = threadIdx.x; i < values; i += blockDim.x)
    atomicAdd(&counts[in[seg[0] + equalize_at(seg, i)]], 1u);
  __syncthreads();
  if (threadIdx.x == 0) {
    int v = 0;
    while (v < 255 && counts[v] == 0) ++v;
    const long long first_count = counts[v];
    const long long total = (long long)values;
    if (total == first_count) {
      for (int k = 0; k < 256; ++k) table[k] = (unsigned char)k;
    } else {
      // 255.0 / count in double, stored as float (the CPU's expression).
      const float scale = (float)(255.0 / (double)(float)(total - first_count));
      long long running = 0;
      for (int k = 0; k < 256; ++k) {
        running += counts[k];
        if (running <= first_count) {
          table[k] = 0;
        } else {
          const float level = rintf(__fmul_rn((float)(running - first_count), scale));
          table[k] = (unsigned char)(level < 255.0f ? level : 255.0f);
        }
      }
    }
  }
  __syncthreads();
  for (unsigned long long i = threadIdx.x; i < values; i += blockDim.x) {
    const long long at = equalize_at(seg, i);
    out[seg[1] + at] = table[in[seg[0] + at]];
  }
}
