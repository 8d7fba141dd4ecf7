// CLAHE (ndd/_ops/gpu_clahe.py launches them): OpenCV's contrast-limited adaptive
// histogram equalization of uint8 planes, as ndd/_cpu/color.pyx computes it
// (tile_histograms, clip_tile_tables, blend_tile_tables), in two launches for a
// whole batch:
//
//   clahe_tables  one block per tile of every plane: the tile's 256-bin histogram
//                 (of the image mirrored without repeating the edge up to whole
//                 tiles), clipped with the excess spread as the CPU spreads it,
//                 and its lookup table, round(cumulative count * scale) in float32
//                 with halves to even. The tables are whole numbers in [0, 255],
//                 so they are stored as bytes: the float the blend reads is the
//                 CPU's.
//   clahe_apply   one thread per pixel: each plane's value blends the tables of the
//                 four nearest tile centres, with the CPU's float32 operations in
//                 the CPU's order, each rounded on its own (NVRTC would contract
//                 a * b + c into a fused multiply-add).
//
// An RGB sample with luma_only is equalized on the L of 8-bit CIE Lab: the table
// pass takes L of each pixel it counts, the apply pass takes L, a and b, blends L
// and goes back to RGB, both with the CPU's fixed-point arithmetic
// (ndd_rgb_to_lab8_base, ndd_lab8_to_rgb_base) on the CPU's own tables, so no Lab
// plane is stored between them. Every intermediate fits int32 for every input
// (the CPU's code wraps where it would not).
#include "common.cuh"

// Threads of a clahe_tables block: one per histogram bin.
#define CLAHE_BINS 256
#define CLAHE_WARPS (CLAHE_BINS / 32)

// Descriptor row of a plane (clahe_tables; offsets in elements):
//   0 offset of the plane's first value (a channel of a sample), 1 height, 2 width,
//   3 pixel stride (the sample's channels), 4 tile height, 5 tile width (of the
//   padded plane), 6 offset of its first table (tiles_x * tiles_y tables of 256
//   bytes, row-major), 7 clip limit in counts (0: none), 8 the table scale (float32
//   bits), 9 1: the plane is the L of an RGB sample.
#define CLAHE_PLANE_ROW 10
// Descriptor row of a sample (clahe_apply): 0 input offset, 1 output offset,
// 2 pixels, 3 height, 4 width, 5 channels, 6 1: luma_only on RGB, 7 offset of the
// first plane's tables (the next channel's follow), 8 and 9 1 / tile height and
// 1 / tile width (float32 bits).
#define CLAHE_SAMPLE_ROW 10

// The Lab tables, one int32 array: a head of CLAHE_LAB_HEAD offsets into it, in
// this order, then the tables (ndd/_ops/color.py builds them).
#define CLAHE_LAB_LINEAR 0     // 256: sRGB code -> linear value in 1/8 units
#define CLAHE_LAB_TO_XYZ 1     // 9: linear RGB -> XYZ / white, 12 fractional bits
#define CLAHE_LAB_F 2          // 3072: Lab's f of XYZ / white, 15 fractional bits
#define CLAHE_LAB_LIGHTNESS 3  // 256 x 2: Y and f(Y) of each 8-bit L
#define CLAHE_LAB_XZ 4         // X / white of f(X), at f (the table's zero, f may be negative)
#define CLAHE_LAB_TO_RGB 5     // 9: XYZ / white -> linear RGB, 12 fractional bits
#define CLAHE_LAB_SRGB 6       // 4096: linear value in 1/4096 units -> sRGB code
#define CLAHE_LAB_HEAD 7

__device__ inline int clahe_clamp_u8(int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }

// The index of padded position i along an axis of `length` values (OpenCV's
// BORDER_REFLECT_101, again and again where the padding is longer than the axis).
__device__ inline long long clahe_reflect(long long i, long long length) {
  if (i < length) return i;
  if (length == 1) return 0;
  const long long period = 2 * (length - 1);
  i %= period;
  return i < length ? i : period - i;
}

__device__ inline int clahe_lab_fy(const int* lab, int r, int g, int b) {
  const int* c = lab + lab[CLAHE_LAB_TO_XYZ];
  return lab[lab[CLAHE_LAB_F] + ((r * c[3] + g * c[4] + b * c[5] + (1 << 11)) >> 12)];
}

// 8-bit L of an sRGB pixel (ndd_rgb_to_lab8_base).
__device__ inline int clahe_lightness(const int* lab, const unsigned char* rgb) {
  const int* linear = lab + lab[CLAHE_LAB_LINEAR];
  const int fy = clahe_lab_fy(lab, linear[rgb[0]], linear[rgb[1]], linear[rgb[2]]);
  return clahe_clamp_u8((296 * fy - 1336935 + (1 << 14)) >> 15);
}

// 8-bit Lab of an sRGB pixel (ndd_rgb_to_lab8_base).
__device__ inline void clahe_rgb_to_lab(const int* lab, const unsigned char* rgb, int* l, int* a, int* bb) {
  const int* linear = lab + lab[CLAHE_LAB_LINEAR];
  const int* c = lab + lab[CLAHE_LAB_TO_XYZ];
  const int* f = lab + lab[CLAHE_LAB_F];
  const int r = linear[rgb[0]], g = linear[rgb[1]], b = linear[rgb[2]];
  const int fx = f[(r * c[0] + g * c[1] + b * c[2] + (1 << 11)) >> 12];
  const int fy = f[(r * c[3] + g * c[4] + b * c[5] + (1 << 11)) >> 12];
  const int fz = f[(r * c[6] + g * c[7] + b * c[8] + (1 << 11)) >> 12];
  *l = clahe_clamp_u8((296 * fy - 1336935 + (1 << 14)) >> 15);
  *a = clahe_clamp_u8((500 * (fx - fy) + (128 << 15) + (1 << 14)) >> 15);
  *bb = clahe_clamp_u8((200 * (fy - fz) + (128 << 15) + (1 << 14)) >> 15);
}

// 8-bit Lab back to sRGB (ndd_lab8_to_rgb_base).
__device__ inline void clahe_lab_to_rgb(const int* lab, int l, int a, int b, unsigned char* rgb) {
  const int* lightness = lab + lab[CLAHE_LAB_LIGHTNESS];
  const int* xz = lab + lab[CLAHE_LAB_XZ];
  const int* m = lab + lab[CLAHE_LAB_TO_RGB];
  const int* srgb = lab + lab[CLAHE_LAB_SRGB];
  const int y = lightness[2 * l], fy = lightness[2 * l + 1];
  const int a_term = ((5 * a * 53687 + (1 << 7)) >> 13) - 4194;
  const int b_term = ((b * 41943 + (1 << 4)) >> 9) - 10484;
  const int x = xz[fy + a_term], z = xz[fy - b_term];
  for (int k = 0; k < 3; ++k) {
    int code = (m[3 * k] * x + m[3 * k + 1] * y + m[3 * k + 2] * z + (1 << 13)) >> 14;
    code = code < 0 ? 0 : (code > 4095 ? 4095 : code);
    rgb[k] = (unsigned char)srgb[code];
  }
}

// Inclusive prefix sum of `v` over the block's CLAHE_BINS threads; `totals` holds
// CLAHE_WARPS values of shared memory, free again when this returns.
__device__ inline unsigned int clahe_block_scan(unsigned int v, unsigned int* totals) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int d = 1; d < 32; d *= 2) {
    const unsigned int before = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += before;
  }
  if (lane == 31) totals[warp] = v;
  __syncthreads();
  for (int w = 0; w < warp; ++w) v += totals[w];
  __syncthreads();
  return v;
}

extern "C" __global__ void __launch_bounds__(CLAHE_BINS)
    clahe_tables(const unsigned char* __restrict__ in, unsigned char* __restrict__ tables,
                 const long long* __restrict__ planes, const int* __restrict__ lab, long long first,
                 int tiles_x, int tiles_y) {
  // Per-warp histograms: fewer threads contend for a bin of a flat tile.
  __shared__ unsigned int counts[CLAHE_WARPS][CLAHE_BINS];
  __shared__ unsigned int totals[CLAHE_WARPS];
  __shared__ unsigned int excess_total;
  const long long block = first + blockIdx.y;
  const long long tiles = (long long)tiles_x * tiles_y;
  const long long* row = planes + (block / tiles) * CLAHE_PLANE_ROW;
  const long long tile = block % tiles;
  const long long height = row[1], width = row[2], stride = row[3];
  const long long tile_h = row[4], tile_w = row[5];
  const long long y0 = tile / tiles_x * tile_h, x0 = tile % tiles_x * tile_w;
  const unsigned char* plane = in + row[0];
  const bool luma = row[9] != 0;
  const int bin = threadIdx.x;
  for (int w = 0; w < CLAHE_WARPS; ++w) counts[w][bin] = 0;
  __syncthreads();
  unsigned int* own = counts[threadIdx.x / 32];
  const unsigned long long area = (unsigned long long)(tile_h * tile_w);
  for (unsigned long long i = threadIdx.x; i < area; i += CLAHE_BINS) {
    const long long y = clahe_reflect(y0 + (long long)(i / tile_w), height);
    const long long x = clahe_reflect(x0 + (long long)(i % tile_w), width);
    const unsigned char* pixel = plane + (y * width + x) * stride;
    atomicAdd(&own[luma ? clahe_lightness(lab, pixel) : *pixel], 1u);
  }
  __syncthreads();
  unsigned int count = 0;
  for (int w = 0; w < CLAHE_WARPS; ++w) count += counts[w][bin];
  const long long limit = row[7];
  if (limit > 0) {
    const unsigned int over = count > limit ? count - (unsigned int)limit : 0u;
    count -= over;
    // The last thread's inclusive sum is the block's total.
    const unsigned int excess_sum = clahe_block_scan(over, totals);
    if (bin == CLAHE_BINS - 1) excess_total = excess_sum;
    __syncthreads();
    const unsigned int excess = excess_total;
    const unsigned int residual = excess % CLAHE_BINS;
    const unsigned int step = residual > 0 ? CLAHE_BINS / residual : CLAHE_BINS;
    count += excess / CLAHE_BINS + (bin % step == 0 && bin / step < residual ? 1u : 0u);
  }
  const unsigned int running = clahe_block_scan(count, totals);
  const float value = rintf(__fmul_rn((float)running, __int_as_float((int)row[8])));
  tables[row[6] + tile * CLAHE_BINS + bin] = (unsigned char)(value < 0.0f ? 0.0f : (value > 255.0f ? 255.0f : value));
}

// One axis of a pixel's blend (the CPU's neighbours()): the tiles before and after
// its position among the tile centres, and the weight of the one after.
struct ClaheAxis {
  long long before, after;
  float weight;
};

__device__ inline ClaheAxis clahe_axis(long long index, float inverse_tile, int tiles) {
  const float position = __fsub_rn(__fmul_rn((float)index, inverse_tile), 0.5f);
  const float below = floorf(position);
  const long long first = (long long)below;
  ClaheAxis axis;
  axis.before = first > 0 ? first : 0;
  axis.after = first + 1 < tiles - 1 ? first + 1 : tiles - 1;
  axis.weight = __fsub_rn(position, below);
  return axis;
}

// The blend of blend_tile_tables: top-left * (1 - wx) + top-right * wx across,
// then top * (1 - wy) + bottom * wy down, rounded with halves to even.
__device__ inline int clahe_blend(const unsigned char* tables, const ClaheAxis& ay, const ClaheAxis& ax,
                                  int tiles_x, int value) {
  const unsigned char* top = tables + ay.before * tiles_x * CLAHE_BINS + value;
  const unsigned char* bottom = tables + ay.after * tiles_x * CLAHE_BINS + value;
  const long long left = ax.before * CLAHE_BINS, right = ax.after * CLAHE_BINS;
  const float wx = ax.weight, wy = ay.weight;
  const float keep_x = __fsub_rn(1.0f, wx), keep_y = __fsub_rn(1.0f, wy);
  const float upper = __fadd_rn(__fmul_rn((float)top[left], keep_x), __fmul_rn((float)top[right], wx));
  const float lower = __fadd_rn(__fmul_rn((float)bottom[left], keep_x), __fmul_rn((float)bottom[right], wx));
  const float blended = rintf(__fadd_rn(__fmul_rn(upper, keep_y), __fmul_rn(lower, wy)));
  return blended < 0.0f ? 0 : (blended > 255.0f ? 255 : (int)blended);
}

extern "C" __global__ void clahe_apply(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                                       const unsigned char* __restrict__ tables, const int* __restrict__ lab,
                                       const long long* __restrict__ samples, int tiles_x, int tiles_y) {
  const long long* row = samples + (unsigned long long)blockIdx.y * CLAHE_SAMPLE_ROW;
  const unsigned long long pixels = (unsigned long long)row[2];
  const long long width = row[4], channels = row[5];
  const bool luma = row[6] != 0;
  const unsigned char* first_table = tables + row[7];
  const long long plane_tables = (long long)tiles_x * tiles_y * CLAHE_BINS;
  const float inverse_h = __int_as_float((int)row[8]), inverse_w = __int_as_float((int)row[9]);
  GRID_STRIDE_LOOP(i, pixels) {
    const ClaheAxis ay = clahe_axis((long long)(i / width), inverse_h, tiles_y);
    const ClaheAxis ax = clahe_axis((long long)(i % width), inverse_w, tiles_x);
    const unsigned char* source = in + row[0] + i * channels;
    unsigned char* target = out + row[1] + i * channels;
    if (luma) {
      int l, a, b;
      clahe_rgb_to_lab(lab, source, &l, &a, &b);
      clahe_lab_to_rgb(lab, clahe_blend(first_table, ay, ax, tiles_x, l), a, b, target);
    } else {
      for (long long c = 0; c < channels; ++c)
        target[c] = (unsigned char)clahe_blend(first_table + c * plane_tables, ay, ax, tiles_x, source[c]);
    }
  }
}
