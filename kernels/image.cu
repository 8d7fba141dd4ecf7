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
