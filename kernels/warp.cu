// Geometric warps (ndd/_ops/gpu_warp.py launches them): rotate, warp_affine and
// experimental.warp_perspective (warp_projective_*, warp_volume_*), and the
// distortions water and sphere (warp_mapped_*). Each output pixel is mapped to a
// point of the source, which is sampled there (nearest neighbour, bilinear,
// bicubic or trilinear) with a border rule, exactly as the CPU's kernels in
// ndd/_cpu/warp.pyx do: the same float operations in the same order, each
// rounded on its own (__fmul_rn and friends: NVRTC would contract a * b + c into
// a fused multiply-add), in float, or in double where the CPU's C code promotes
// to double (its literals 0.5 and 5.0 are doubles, and double pixels sum in
// double). Division and sqrtf are IEEE (NVRTC's default --prec-div and
// --prec-sqrt). Kernel-type values only: the Python side converts other types
// before and after with the cast kernels, as the CPU does with numpy.
//
// A batch is one launch: a descriptor row per sample (int64, in device memory,
// blockIdx.y picks the row), a thread per output pixel writing all its channels.
// The 2-D sampling, shared with remap.cu, is in sampling.cuh.
#include "common.cuh"
#include "philox.cuh"
#include "sampling.cuh"

// Descriptor row of a sample (offsets, extents and strides in elements):
//   0 input offset, 1 output offset, 2 output pixels (the product of the output
//   extents below), 3 offset of the per-channel fill values in the float table,
//   4 offset of the transform there (warp_projective: the 3x3 matrix, row-major;
//   warp_volume: the 3x4 one; warp_mapped: see WARP_MAP_*), 5 interpolation
//   (WARP_NN, WARP_LINEAR, WARP_CUBIC), 6 border (WARP_BORDER_*), 7 flags
//   (WARP_PERSPECTIVE, WARP_ROUND_EVEN), 8 map mode (warp_mapped), 9 channels,
//   10 input channel stride, 11 output channel stride, then per dimension
//   (frame, depth, row, column): output extent, input extent, input stride,
//   output stride (extent 1 and strides 0 for a dimension the sample lacks).
#define WARP_HEAD 12
#define WARP_DIM_WORDS 4
#define WARP_ROW (WARP_HEAD + 4 * WARP_DIM_WORDS)

#define WARP_PERSPECTIVE 1
#define WARP_ROUND_EVEN 2

// warp_mapped's modes: a copy (a sample with mask 0); water, whose transform is
// the x displacement of each output row then the y displacement of each output
// column; sphere, whose transform is (centre x, centre y, radius).
#define WARP_MAP_COPY 0
#define WARP_MAP_WATER 1
#define WARP_MAP_SPHERE 2
// jitter: the transform holds the degree, its half, and the four key words (their
// bits) of the call's RandomKey; each output pixel draws its moves from its own
// Philox block (counter: pixel index, frame, sample ^ k3, k2; the sample index
// follows the key words in the transform), a whole number in
// [0, degree) minus the half along x, then along y, from the pixel's centre.
#define WARP_MAP_JITTER 3

// -- 3-D sampling: _sample3 ----------------------------------------------------------

template <typename T>
__device__ inline void warp_sample_3d(const WarpSource<T>& s, T* out, long long out_ks, float sx, float sy,
                                      float sz, int interp, int border, const float* fill) {
  typedef typename warp_acc<T>::type Acc;
  if (!(sx > -WARP_FAR && sx < WARP_FAR && sy > -WARP_FAR && sy < WARP_FAR && sz > -WARP_FAR && sz < WARP_FAR)) {
    warp_far(s, out, out_ks, sx, sy, sz, border, fill, false);
    return;
  }
  if (interp == WARP_NN) {
    warp_write_pixel(
        warp_pixel(s, (long long)floorf(sz), (long long)floorf(sy), (long long)floorf(sx), border), s, out,
        out_ks, fill, false);
    return;
  }
  const float px = (float)((double)sx - 0.5), py = (float)((double)sy - 0.5), pz = (float)((double)sz - 0.5);
  float fx = floorf(px), fy = floorf(py), fz = floorf(pz);
  const long long x0 = (long long)fx, y0 = (long long)fy, z0 = (long long)fz;
  fx = __fsub_rn(px, fx);
  fy = __fsub_rn(py, fy);
  fz = __fsub_rn(pz, fz);
  const T* corners[8];
  float weights[8];
  for (int i = 0; i < 8; ++i) {
    corners[i] = warp_pixel(s, z0 + (i >> 2), y0 + ((i >> 1) & 1), x0 + (i & 1), border);
    float w = (i & 1) ? fx : __fsub_rn(1.0f, fx);
    w = __fmul_rn(w, ((i >> 1) & 1) ? fy : __fsub_rn(1.0f, fy));
    weights[i] = __fmul_rn(w, (i >> 2) ? fz : __fsub_rn(1.0f, fz));
  }
  for (int k = 0; k < s.channels; ++k) {
    float acc = 0.0f;
    for (int i = 0; i < 8; ++i)
      acc = warp_madd(acc, weights[i], corners[i] ? (Acc)corners[i][k * s.channel_stride] : (Acc)fill[k]);
    out[k * out_ks] = warp_convert<T>(acc, false);
  }
}

// -- the kernels ---------------------------------------------------------------------

// Where output pixel p of a sample is: its frame, depth, row and column, the
// frame of the source it reads (extents and strides from the row) and its output.
struct WarpPlace {
  long long frame, z, y, x, out_at;
};

template <typename Index> __device__ inline WarpPlace warp_place(const long long* seg, Index p) {
  WarpPlace place;
  long long index[4];
  long long out_at = seg[1];
  for (int d = 3; d >= 0; --d) {
    const long long* dim = seg + WARP_HEAD + WARP_DIM_WORDS * d;
    const Index extent = (Index)dim[0];
    const Index i = p % extent;
    p /= extent;
    index[d] = (long long)i;
    out_at += (long long)i * dim[3];
  }
  place.frame = index[0];
  place.z = index[1];
  place.y = index[2];
  place.x = index[3];
  place.out_at = out_at;
  return place;
}

template <typename T>
__device__ inline WarpSource<T> warp_source(const T* in, const long long* seg, long long frame) {
  WarpSource<T> s;
  const long long* dims = seg + WARP_HEAD;
  s.data = in + seg[0] + frame * dims[2];
  s.depth = dims[WARP_DIM_WORDS + 1];
  s.rows = dims[2 * WARP_DIM_WORDS + 1];
  s.columns = dims[3 * WARP_DIM_WORDS + 1];
  s.depth_stride = dims[WARP_DIM_WORDS + 2];
  s.row_stride = dims[2 * WARP_DIM_WORDS + 2];
  s.column_stride = dims[3 * WARP_DIM_WORDS + 2];
  s.channel_stride = seg[10];
  s.channels = (int)seg[9];
  return s;
}

// The output pixel's centre, as the CPU's "index + 0.5" (exact below 2**24).
__device__ inline float warp_centre(long long i) { return __fadd_rn((float)i, 0.5f); }

template <typename T>
__device__ inline void warp_projective_pixel(const T* __restrict__ in, T* __restrict__ out,
                                             const long long* seg, const float* table, const WarpPlace& at) {
  const WarpSource<T> s = warp_source(in, seg, at.frame);
  const float* m = table + seg[4];
  const float x = warp_centre(at.x), y = warp_centre(at.y);
  float sx, sy;
  if (!(seg[7] & WARP_PERSPECTIVE)) {
    // _affine_row of ndd/_cpu/warp.pyx: from the row's first point, a step of 256
    // pixels per whole tile, then one pixel at a time (the reference's sums).
    sx = __fadd_rn(__fadd_rn(__fmul_rn(m[0], 0.5f), m[2]), __fmul_rn(m[1], y));
    sy = __fadd_rn(__fadd_rn(__fmul_rn(m[3], 0.5f), m[5]), __fmul_rn(m[4], y));
    const float tile_x = __fmul_rn(256.0f, m[0]), tile_y = __fmul_rn(256.0f, m[3]);
    for (long long t = at.x / 256; t > 0; --t) {
      sx = __fadd_rn(sx, tile_x);
      sy = __fadd_rn(sy, tile_y);
    }
    for (long long i = at.x % 256; i > 0; --i) {
      sx = __fadd_rn(sx, m[0]);
      sy = __fadd_rn(sy, m[3]);
    }
  } else {
    sx = __fadd_rn(__fadd_rn(__fmul_rn(m[0], x), __fmul_rn(m[1], y)), m[2]);
    sy = __fadd_rn(__fadd_rn(__fmul_rn(m[3], x), __fmul_rn(m[4], y)), m[5]);
  }
  if (seg[7] & WARP_PERSPECTIVE) {
    const float w = __fadd_rn(__fadd_rn(__fmul_rn(m[6], x), __fmul_rn(m[7], y)), m[8]);
    if (w == 0.0f) {
      sx = WARP_FAR;
    } else {
      sx = sx / w;
      sy = sy / w;
    }
  }
  warp_sample_2d(s, out + at.out_at, seg[11], sx, sy, (int)seg[5], (int)seg[6], table + seg[3],
                 (seg[7] & WARP_ROUND_EVEN) != 0);
}

template <typename T>
__device__ inline void warp_volume_pixel(const T* __restrict__ in, T* __restrict__ out, const long long* seg,
                                         const float* table, const WarpPlace& at) {
  const WarpSource<T> s = warp_source(in, seg, at.frame);
  const float* m = table + seg[4];
  const float x = warp_centre(at.x), y = warp_centre(at.y), z = warp_centre(at.z);
  float point[3];
  for (int r = 0; r < 3; ++r) {
    const float* row = m + 4 * r;
    point[r] = __fadd_rn(
        __fadd_rn(__fadd_rn(__fmul_rn(row[0], x), __fmul_rn(row[1], y)), __fmul_rn(row[2], z)), row[3]);
  }
  warp_sample_3d(s, out + at.out_at, seg[11], point[0], point[1], point[2], (int)seg[5], (int)seg[6],
                 table + seg[3]);
}

template <typename T>
__device__ inline void warp_mapped_pixel(const T* __restrict__ in, T* __restrict__ out, const long long* seg,
                                         const float* table, const WarpPlace& at) {
  const WarpSource<T> s = warp_source(in, seg, at.frame);
  T* target = out + at.out_at;
  const float* map = table + seg[4];
  const int mode = (int)seg[8];
  if (mode == WARP_MAP_COPY) {
    warp_write_pixel(s.data + at.y * s.row_stride + at.x * s.column_stride, s, target, seg[11], nullptr, false);
    return;
  }
  float sx, sy;
  if (mode == WARP_MAP_JITTER) {
    const unsigned int degree = (unsigned int)map[0];
    const float half = map[1];
    // map[6]: the sample's index in the batch (blockIdx.y restarts in each launch).
    const unsigned int counter[4] = {(unsigned int)(at.y * s.columns + at.x), (unsigned int)at.frame,
                                     __float_as_uint(map[6]) ^ __float_as_uint(map[5]),
                                     __float_as_uint(map[4])};
    unsigned int words[4];
    philox4x32_10(counter, __float_as_uint(map[2]), __float_as_uint(map[3]), words);
    const float move_x = __fsub_rn((float)__umulhi(words[0], degree), half);
    const float move_y = __fsub_rn((float)__umulhi(words[1], degree), half);
    sx = __fadd_rn(warp_centre(at.x), move_x);
    sy = __fadd_rn(warp_centre(at.y), move_y);
  } else if (mode == WARP_MAP_WATER) {
    // ndd/_ops/warp.py's _water_maps: column + its row's wave, row + its column's wave.
    const long long rows = seg[WARP_HEAD + 2 * WARP_DIM_WORDS];
    sx = __fadd_rn((float)at.x, map[at.y]);
    sy = __fadd_rn((float)at.y, map[rows + at.x]);
  } else {
    // sphere_maps of ndd/_cpu/warp.pyx.
    const float mid_x = map[0], mid_y = map[1], radius = map[2];
    const float dx = __fsub_rn(warp_centre(at.x), mid_x), dy = __fsub_rn(warp_centre(at.y), mid_y);
    const float scale = radius > 0.0f ? sqrtf(__fadd_rn(__fmul_rn(dx, dx), __fmul_rn(dy, dy))) / radius : 0.0f;
    sx = __fadd_rn(mid_x, __fmul_rn(scale, dx));
    sy = __fadd_rn(mid_y, __fmul_rn(scale, dy));
  }
  warp_sample_2d(s, target, seg[11], sx, sy, (int)seg[5], (int)seg[6], table + seg[3], false);
}

// Pixel indices decompose in 32 bits when the segment allows (the common case; a
// uniform branch), and the sampling code is inlined once, not once per index width.
#define WARP_KERNEL(KIND, NAME, T)                                                               \
  extern "C" __global__ void warp_##KIND##_##NAME(const T* __restrict__ in, T* __restrict__ out,  \
                                                  const long long* __restrict__ rows,             \
                                                  const float* __restrict__ table) {              \
    const long long* seg = rows + (unsigned long long)blockIdx.y * WARP_ROW;                     \
    const unsigned long long pixels = (unsigned long long)seg[2];                                \
    const bool narrow = pixels <= 0x7fffffffull;                                                 \
    GRID_STRIDE_LOOP(p, pixels) {                                                                \
      const WarpPlace at = narrow ? warp_place<unsigned int>(seg, (unsigned int)p)               \
                                  : warp_place<unsigned long long>(seg, p);                      \
      warp_##KIND##_pixel<T>(in, out, seg, table, at);                                           \
    }                                                                                            \
  }

#define WARP_KERNELS(NAME, T)        \
  WARP_KERNEL(projective, NAME, T)   \
  WARP_KERNEL(volume, NAME, T)       \
  WARP_KERNEL(mapped, NAME, T)

WARP_KERNELS(u8, unsigned char)
WARP_KERNELS(i8, signed char)
WARP_KERNELS(i16, short)
WARP_KERNELS(u16, unsigned short)
WARP_KERNELS(i32, int)
WARP_KERNELS(f32, float)
WARP_KERNELS(f64, double)
