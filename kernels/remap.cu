// experimental.remap (ndd/_ops/gpu_remap.py launches it). Each output pixel
// reads its source point from the maps: (mapx, mapy) of that pixel plus 0.5 for
// pixel_origin "center" (one float32 sum each, as the CPU's numpy sum), then
// samples the source there as the CPU's warp_mapped (ndd/_cpu/warp.pyx) does,
// with sampling.cuh: nearest neighbour or bilinear, the fill value 0 outside the
// source, ties rounded to even (the picked pixel and integer results). Kernel-type
// values only: the Python side converts other types before and after with the
// cast kernels, as the CPU does with numpy.
//
// A batch is one launch: a descriptor row per sample (int64, in device memory,
// blockIdx.y picks the row), a thread per output pixel writing all its channels.
#include "common.cuh"
#include "sampling.cuh"

// Descriptor row of a sample (offsets, extents and strides in elements):
//   0 input offset, 1 output offset, 2 output pixels (frames x rows x columns),
//   3 offset of its mapx values, 4 offset of its mapy values (each map holds the
//   output pixels' values in that order), 5 interpolation (WARP_NN, WARP_LINEAR),
//   6 REMAP_CENTER or 0, 7 channels, 8 input channel stride, 9 output channel
//   stride, then per dimension (frame, row, column): output extent, input extent,
//   input stride, output stride (extent 1 and strides 0 for a sample without frames).
#define REMAP_HEAD 10
#define REMAP_DIM_WORDS 4
#define REMAP_ROW (REMAP_HEAD + 3 * REMAP_DIM_WORDS)
// The maps put pixel centres at whole numbers: 0.5 is added to reach the
// pixel-centre convention of the sampling.
#define REMAP_CENTER 1

template <typename T, typename Index>
__device__ inline void remap_pixel(const T* __restrict__ in, T* __restrict__ out, const long long* seg,
                                   const float* __restrict__ map_x, const float* __restrict__ map_y,
                                   const float* fill, Index p) {
  long long index[3];
  long long out_at = seg[1];
  Index rest = p;
  for (int d = 2; d >= 0; --d) {
    const long long* dim = seg + REMAP_HEAD + REMAP_DIM_WORDS * d;
    const Index extent = (Index)dim[0];
    index[d] = (long long)(rest % extent);
    rest /= extent;
    out_at += index[d] * dim[3];
  }
  const long long* frame = seg + REMAP_HEAD;
  const long long* row = frame + REMAP_DIM_WORDS;
  const long long* column = row + REMAP_DIM_WORDS;
  WarpSource<T> s;
  s.data = in + seg[0] + index[0] * frame[2];
  s.depth = 1;
  s.rows = row[1];
  s.columns = column[1];
  s.depth_stride = 0;
  s.row_stride = row[2];
  s.column_stride = column[2];
  s.channel_stride = seg[8];
  s.channels = (int)seg[7];
  // The CPU adds 0.0 for "corner" too: the same sum keeps -0.0 and NaN alike.
  const float offset = seg[6] == REMAP_CENTER ? 0.5f : 0.0f;
  const float sx = __fadd_rn(map_x[seg[3] + (long long)p], offset);
  const float sy = __fadd_rn(map_y[seg[4] + (long long)p], offset);
  warp_sample_2d(s, out + out_at, seg[9], sx, sy, (int)seg[5], WARP_BORDER_CONSTANT, fill, true);
}

// fill: one value per channel (zeros), for the taps outside the source.
#define REMAP_KERNEL(NAME, T)                                                                      \
  extern "C" __global__ void remap_##NAME(const T* __restrict__ in, T* __restrict__ out,           \
                                          const long long* __restrict__ rows,                      \
                                          const float* __restrict__ map_x,                         \
                                          const float* __restrict__ map_y,                         \
                                          const float* __restrict__ fill) {                        \
    const long long* seg = rows + (unsigned long long)blockIdx.y * REMAP_ROW;                      \
    const unsigned long long pixels = (unsigned long long)seg[2];                                  \
    if (pixels <= 0x7fffffffull) {                                                                 \
      for (unsigned int p = blockIdx.x * blockDim.x + threadIdx.x; p < pixels;                     \
           p += blockDim.x * gridDim.x)                                                            \
        remap_pixel<T, unsigned int>(in, out, seg, map_x, map_y, fill, p);                         \
    } else {                                                                                       \
      GRID_STRIDE_LOOP(p, pixels)                                                                  \
      remap_pixel<T, unsigned long long>(in, out, seg, map_x, map_y, fill, p);                     \
    }                                                                                              \
  }

REMAP_KERNEL(u8, unsigned char)
REMAP_KERNEL(i8, signed char)
REMAP_KERNEL(i16, short)
REMAP_KERNEL(u16, unsigned short)
REMAP_KERNEL(i32, int)
REMAP_KERNEL(f32, float)
REMAP_KERNEL(f64, double)
