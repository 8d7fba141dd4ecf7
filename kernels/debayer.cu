// ndd.debayer (ndd/_ops/gpu_debayer.py launches it): the CPU's demosaicing of
// ndd/_ops/debayer.py, in the same integer arithmetic, so the results are equal.
// Each output pixel is computed from the 3x3 neighbourhood of its Bayer sample,
// read across the image's edges as numpy's "reflect" padding reads it (the
// neighbour beyond the edge is the one before it); the outermost rows and
// columns then take the values of their inner neighbours, which here means
// computing them at that neighbour.
//
// - bilinear_ocv: a missing colour is the rounded mean of the 2 or 4 nearest
//   samples of that colour; green the rounded mean of the 4 cross neighbours;
// - edgeaware_ocv: as bilinear, but green at red or blue is the mean of the pair
//   of green neighbours (vertical or horizontal) that differ less, horizontal on
//   a tie;
// - gray_ocv: one channel, the BT.601 luma (14 fractional bits) of the unrounded
//   neighbour sums, (total + 2**15) >> 16. The CPU sums in int32, wrapping, and
//   keeps the low bits of the shifted sum; the total fits in 32 unsigned bits, so
//   an unsigned sum gives the same result.
//
// A batch is one launch: a descriptor row per sample (int64, in device memory,
// blockIdx.y picks the row), a thread per output pixel writing all its channels.
#include "common.cuh"

// Descriptor row of a sample (offsets in elements): 0 input offset, 1 output
// offset, 2 output pixels (frames x height x width), 3 height, 4 width, 5 and 6
// the row and column of blue in the 2x2 tile starting at the second row and
// column (blue_position), 7 algorithm (DEBAYER_*).
#define DEBAYER_ROW 8
#define DEBAYER_BILINEAR 0
#define DEBAYER_EDGEAWARE 1
#define DEBAYER_GRAY 2

// BT.601 luma weights with 14 fractional bits.
#define DEBAYER_R_TO_Y 4899u
#define DEBAYER_G_TO_Y 9617u
#define DEBAYER_B_TO_Y 1868u

// Index i of an axis of n >= 2 samples, one step beyond an edge reflected inside.
__device__ inline long long debayer_reflect(long long i, long long n) {
  return i < 0 ? -i : (i >= n ? 2 * n - 2 - i : i);
}

// Where the value of output index i of an axis of n >= 2 is computed: the outermost
// indices copy their inner neighbours, the last one first (so with n = 2 both end at 1).
__device__ inline long long debayer_inner(long long i, long long n) {
  if (i == n - 1) i = n - 2;
  return i == 0 ? 1 : i;
}

template <typename T, typename Index>
__device__ inline void debayer_pixel(const T* __restrict__ in, T* __restrict__ out, const long long* seg,
                                     Index p) {
  const long long height = seg[3], width = seg[4];
  const Index plane = (Index)(height * width);
  const Index frame = p / plane, at = p % plane;
  const long long y = debayer_inner((long long)(at / (Index)width), height);
  const long long x = debayer_inner((long long)(at % (Index)width), width);
  const T* src = in + seg[0] + (long long)frame * (long long)plane;
  const long long up = debayer_reflect(y - 1, height) * width, middle = y * width;
  const long long down = debayer_reflect(y + 1, height) * width;
  const long long left = debayer_reflect(x - 1, width), right = debayer_reflect(x + 1, width);
  const int value = src[middle + x];
  const int west = src[middle + left], east = src[middle + right];
  const int north = src[up + x], south = src[down + x];
  const int horizontal = west + east, vertical = north + south;
  const int diagonal = src[up + left] + src[up + right] + src[down + left] + src[down + right];
  const int blue_y = (int)seg[5], blue_x = (int)seg[6];
  const int row = (int)(y & 1), column = (int)(x & 1);
  // Red is diagonal to blue in the tile; green rows hold red or blue besides green.
  const bool red_row = row == (blue_y & 1);
  const bool blue = row == ((1 + blue_y) & 1) && column == ((1 + blue_x) & 1);
  const bool red = red_row && column == (blue_x & 1);
  const int algorithm = (int)seg[7];
  if (algorithm == DEBAYER_GRAY) {
    const unsigned int centre = 4u * (unsigned int)value;
    const unsigned int h = (unsigned int)horizontal, v = (unsigned int)vertical;
    const unsigned int cross = h + v, corners = (unsigned int)diagonal;
    unsigned int total;
    if (red) {
      total = centre * DEBAYER_R_TO_Y + cross * DEBAYER_G_TO_Y + corners * DEBAYER_B_TO_Y;
    } else if (blue) {
      total = centre * DEBAYER_B_TO_Y + cross * DEBAYER_G_TO_Y + corners * DEBAYER_R_TO_Y;
    } else if (red_row) {
      total = centre * DEBAYER_G_TO_Y + 2u * h * DEBAYER_R_TO_Y + 2u * v * DEBAYER_B_TO_Y;
    } else {
      total = centre * DEBAYER_G_TO_Y + 2u * h * DEBAYER_B_TO_Y + 2u * v * DEBAYER_R_TO_Y;
    }
    out[seg[1] + (long long)p] = (T)((total + (1u << 15)) >> 16);
    return;
  }
  const int horizontal_mean = (horizontal + 1) >> 1, vertical_mean = (vertical + 1) >> 1;
  const int diagonal_mean = (diagonal + 2) >> 2;
  int green_estimate;
  if (algorithm == DEBAYER_EDGEAWARE) {
    const int dx = abs(west - east), dy = abs(north - south);
    green_estimate = dy < dx ? vertical_mean : horizontal_mean;
  } else {
    green_estimate = (horizontal + vertical + 2) >> 2;
  }
  int r, g, b;
  if (red) {
    r = value;
    g = green_estimate;
    b = diagonal_mean;
  } else if (blue) {
    r = diagonal_mean;
    g = green_estimate;
    b = value;
  } else {
    r = red_row ? horizontal_mean : vertical_mean;
    g = value;
    b = red_row ? vertical_mean : horizontal_mean;
  }
  T* pixel = out + seg[1] + 3 * (long long)p;
  pixel[0] = (T)r;
  pixel[1] = (T)g;
  pixel[2] = (T)b;
}

#define DEBAYER_KERNEL(NAME, T)                                                                     \
  extern "C" __global__ void debayer_##NAME(const T* __restrict__ in, T* __restrict__ out,          \
                                            const long long* __restrict__ rows) {                   \
    const long long* seg = rows + (unsigned long long)blockIdx.y * DEBAYER_ROW;                     \
    const unsigned long long pixels = (unsigned long long)seg[2];                                   \
    if (pixels <= 0x7fffffffull) {                                                                  \
      for (unsigned int p = blockIdx.x * blockDim.x + threadIdx.x; p < pixels;                      \
           p += blockDim.x * gridDim.x)                                                             \
        debayer_pixel<T, unsigned int>(in, out, seg, p);                                            \
    } else {                                                                                        \
      GRID_STRIDE_LOOP(p, pixels)                                                                   \
      debayer_pixel<T, unsigned long long>(in, out, seg, p);                                        \
    }                                                                                               \
  }

DEBAYER_KERNEL(u8, unsigned char)
DEBAYER_KERNEL(u16, unsigned short)
