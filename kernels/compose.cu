// Kernels of the compositing operators (ndd/_ops/gpu_compose.py launches them):
// erase and paste fill boxes of their outputs, grid_mask zeroes the pixels under
// its rotated grid.
//
// What the fills store is never computed on: fill values are converted on the
// host as the CPU converts them, and the kernels move their bit patterns, so the
// fills are templated on an unsigned storage type of the element's size.
#include "common.cuh"

// -- fill_boxes: N-D boxes of the output set to fill values ----------------------------
//
// A descriptor row per box (elements): 0 offset of the box's first element,
// 1 elements in the box, 2 dims, 3 the dimension the fill values are laid along
// (-1: one value), 4 offset of the box's fill values in the table, then per
// dimension (outermost first, FILL_MAX_DIMS of them): extent, stride.
#define FILL_MAX_DIMS 6
#define FILL_HEAD 5
#define FILL_ROW (FILL_HEAD + 2 * FILL_MAX_DIMS)

#define FILL_BOXES(TN, T)                                                                \
  extern "C" __global__ void fill_boxes_##TN(T* __restrict__ out,                       \
                                             const long long* __restrict__ rows,        \
                                             const T* __restrict__ fill) {              \
    const long long* seg = rows + (unsigned long long)blockIdx.y * FILL_ROW;            \
    const int dims = (int)seg[2];                                                       \
    const int fill_dim = (int)seg[3];                                                   \
    GRID_STRIDE_LOOP(i, (unsigned long long)seg[1]) {                                   \
      unsigned long long rest = i;                                                      \
      long long at = seg[0];                                                            \
      long long along = 0;                                                              \
      for (int d = dims - 1; d >= 0; --d) {                                             \
        const unsigned long long extent = (unsigned long long)seg[FILL_HEAD + 2 * d];   \
        const long long k = (long long)(rest % extent);                                 \
        rest /= extent;                                                                 \
        at += k * seg[FILL_HEAD + 2 * d + 1];                                           \
        if (d == fill_dim) along = k;                                                   \
      }                                                                                 \
      out[at] = fill[seg[4] + along];                                                   \
    }                                                                                   \
  }

FILL_BOXES(u8, unsigned char)
FILL_BOXES(u16, unsigned short)
FILL_BOXES(u32, unsigned int)
FILL_BOXES(u64, unsigned long long)

// -- grid_mask -------------------------------------------------------------------------
//
// Pixels of (H, W, bytes per pixel) images, copied, with the pixels whose grid
// position falls in a square zeroed: fx = (-shift_x + y * -sin) + x * cos and
// fy = (-shift_y + y * cos) + x * sin (float32, in tiles, each operation rounded),
// masked when both fractional parts are below the ratio (ndd/_cpu/grid_mask.pyx).
// A descriptor row per image plane (a sample, or a channel, frame or slice of one:
// ndd/_ops/gpu_compose.py): 0 input offset, 1 output offset (bytes), 2 height,
// 3 width, 4 bytes per pixel, 5 offset of its parameters (cos, sin, shift_x,
// shift_y, ratio) in the float table.
#define GRID_ROW 6

extern "C" __global__ void grid_mask(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                                     const long long* __restrict__ rows, const float* __restrict__ params) {
  const long long* seg = rows + (unsigned long long)blockIdx.y * GRID_ROW;
  const long long width = seg[3];
  const long long pixel = seg[4];
  const float* p = params + seg[5];
  const float cos_t = p[0], sin_t = p[1], shift_x = p[2], shift_y = p[3], ratio = p[4];
  GRID_STRIDE_LOOP(i, (unsigned long long)(seg[2] * width * pixel)) {
    const long long element = (long long)i;
    const long long position = element / pixel;
    const float y = (float)(position / width);
    const float x = (float)(position % width);
    const float fx = __fadd_rn(__fadd_rn(-shift_x, __fmul_rn(y, -sin_t)), __fmul_rn(x, cos_t));
    const float fy = __fadd_rn(__fadd_rn(-shift_y, __fmul_rn(y, cos_t)), __fmul_rn(x, sin_t));
    const bool masked = __fsub_rn(fx, floorf(fx)) < ratio && __fsub_rn(fy, floorf(fy)) < ratio;
    out[seg[1] + element] = masked ? 0 : in[seg[0] + element];
  }
}
