// Kernels of the bounding-box operators (ndd/_ops/gpu_boxes.py launches them):
// bb_flip and box_encoder. Boxes are rows of 4 float32; every value is computed
// with the CPU's float32 operations in the CPU's order (ndd/_ops/boxes.py,
// ndd/_cpu/box_matching.pyx), each rounded on its own (no fused multiply-add).
#include "common.cuh"

// -- bb_flip -------------------------------------------------------------------------
//
// Descriptor row per sample: 0 input offset, 1 output offset (floats, from the
// base pointers), 2 boxes, 3 horizontal, 4 vertical, 5 ltrb.
#define BB_FLIP_ROW 6

extern "C" __global__ void bb_flip(const float* __restrict__ in, float* __restrict__ out,
                                   const long long* __restrict__ rows) {
  const long long* seg = rows + (unsigned long long)blockIdx.y * BB_FLIP_ROW;
  const bool horizontal = seg[3] != 0, vertical = seg[4] != 0, ltrb = seg[5] != 0;
  GRID_STRIDE_LOOP(i, (unsigned long long)seg[2]) {
    const float* box = in + seg[0] + 4 * (long long)i;
    float left = box[0], top = box[1], right = box[2], bottom = box[3];
    if (!ltrb) {
      right = __fadd_rn(left, right);
      bottom = __fadd_rn(top, bottom);
    }
    if (horizontal) {
      const float l = __fsub_rn(1.0f, right), r = __fsub_rn(1.0f, left);
      left = l;
      right = r;
    }
    if (vertical) {
      const float t = __fsub_rn(1.0f, bottom), b = __fsub_rn(1.0f, top);
      top = t;
      bottom = b;
    }
    if (!ltrb) {
      right = __fsub_rn(right, left);
      bottom = __fsub_rn(bottom, top);
    }
    float* target = out + seg[1] + 4 * (long long)i;
    target[0] = left;
    target[1] = top;
    target[2] = right;
    target[3] = bottom;
  }
}

// -- box_encoder ---------------------------------------------------------------------
//
// One block per sample (blockIdx.y): its boxes against every anchor. Descriptor
// row (offsets in elements from the base pointers): 0 boxes offset, 1 labels
// offset, 2 boxes, 3 encoded boxes offset, 4 output labels offset, 5 scratch
// offset (anchors).
// Scratch per sample: best IoU and best box per anchor, the match per anchor.
// The anchors (A rows of ltrb) and the box-anchor areas are shared by all samples.
#define BOX_ENCODER_ROW 6
#define BOX_ENCODER_THREADS 256

// fminf/fmaxf as the CPU's selects: the other value when b is NaN.
__device__ inline float box_min(float a, float b) { return (a < b || b != b) ? a : b; }
__device__ inline float box_max(float a, float b) { return (a > b || b != b) ? a : b; }

__device__ inline float box_iou(const float* box, float box_area, const float* anchor, float anchor_area) {
  const float width = __fsub_rn(box_min(box[2], anchor[2]), box_max(box[0], anchor[0]));
  const float height = __fsub_rn(box_min(box[3], anchor[3]), box_max(box[1], anchor[1]));
  const float inter = __fmul_rn(box_max(width, 0.0f), box_max(height, 0.0f));
  const float uni = __fsub_rn(__fadd_rn(box_area, anchor_area), inter);
  return uni > 0.0f ? inter / uni : 0.0f;
}

__device__ inline float box_area_of(const float* b) {
  return __fmul_rn(__fsub_rn(b[2], b[0]), __fsub_rn(b[3], b[1]));
}

// [cx, cy, w, h] of an ltrb box scaled by `scale` (1: not scaled).
__device__ inline void center_form(const float* b, float scale, float* out) {
  const float l = __fmul_rn(b[0], scale), t = __fmul_rn(b[1], scale);
  const float r = __fmul_rn(b[2], scale), bt = __fmul_rn(b[3], scale);
  out[0] = __fmul_rn(__fadd_rn(l, r), 0.5f);
  out[1] = __fmul_rn(__fadd_rn(t, bt), 0.5f);
  out[2] = __fsub_rn(r, l);
  out[3] = __fsub_rn(bt, t);
}

// params: criteria, offset (0/1), scale, means[4], stds[4]
extern "C" __global__ void box_encoder(const float* __restrict__ boxes, const int* __restrict__ labels,
                                       const float* __restrict__ anchors, long long anchor_count,
                                       float* __restrict__ out_boxes, int* __restrict__ out_labels,
                                       float* __restrict__ best_iou, int* __restrict__ best_box,
                                       int* __restrict__ matches, const long long* __restrict__ rows,
                                       const float* __restrict__ params) {
  const long long* seg = rows + (unsigned long long)blockIdx.y * BOX_ENCODER_ROW;
  const float* sample_boxes = boxes + seg[0];
  const int* sample_labels = labels + seg[1];
  const int box_count = (int)seg[2];
  float* iou_of = best_iou + seg[5];
  int* box_of = best_box + seg[5];
  int* match = matches + seg[5];
  const int tid = threadIdx.x;
  const int threads = blockDim.x;
  __shared__ float reduce_iou[BOX_ENCODER_THREADS];
  __shared__ int reduce_anchor[BOX_ENCODER_THREADS];

  // Each anchor's best box: the last of its greatest IoUs, from -1.
  for (long long j = tid; j < anchor_count; j += threads) {
    const float* anchor = anchors + 4 * j;
    const float anchor_area = box_area_of(anchor);
    float best = -1.0f;
    int which = 0;
    for (int i = 0; i < box_count; ++i) {
      const float* box = sample_boxes + 4 * i;
      const float iou = box_iou(box, box_area_of(box), anchor, anchor_area);
      if (iou >= best) {
        best = iou;
        which = i;
      }
    }
    iou_of[j] = best;
    box_of[j] = which;
  }
  __syncthreads();
  const float criteria = params[0];
  for (long long j = tid; j < anchor_count; j += threads) match[j] = iou_of[j] > criteria ? box_of[j] : -1;
  __syncthreads();
  // Each box claims the last anchor of its greatest IoU (NaNs never win; none: the
  // first anchor), later boxes winning an anchor claimed twice.
  for (int i = 0; i < box_count; ++i) {
    const float* box = sample_boxes + 4 * i;
    const float area = box_area_of(box);
    float best = -1.0f;
    int which = -1;
    for (long long j = tid; j < anchor_count; j += threads) {
      const float* anchor = anchors + 4 * j;
      const float iou = box_iou(box, area, anchor, box_area_of(anchor));
      if (iou >= best) {
        best = iou;
        which = (int)j;
      }
    }
    reduce_iou[tid] = best;
    reduce_anchor[tid] = which;
    __syncthreads();
    if (tid == 0) {
      float top = -1.0f;
      int chosen = -1;
      for (int t = 0; t < threads; ++t) {
        const float value = reduce_iou[t];
        if (reduce_anchor[t] >= 0 && (value > top || (value == top && reduce_anchor[t] > chosen))) {
          top = value;
          chosen = reduce_anchor[t];
        }
      }
      match[chosen >= 0 ? chosen : 0] = i;
    }
    __syncthreads();
  }
  const bool offset = params[1] != 0.0f;
  const float scale = params[2];
  const float* means = params + 3;
  const float* stds = params + 7;
  for (long long j = tid; j < anchor_count; j += threads) {
    const int m = match[j];
    float* target = out_boxes + seg[3] + 4 * j;
    out_labels[seg[4] + j] = m >= 0 ? sample_labels[m] : 0;
    float result[4];
    if (!offset) {
      center_form(m >= 0 ? sample_boxes + 4 * m : anchors + 4 * j, 1.0f, result);
    } else if (m < 0) {
      result[0] = result[1] = result[2] = result[3] = 0.0f;
    } else {
      float gt[4], anchor[4];
      center_form(sample_boxes + 4 * m, scale, gt);
      center_form(anchors + 4 * j, scale, anchor);
      result[0] = __fsub_rn(__fsub_rn(gt[0], anchor[0]) / anchor[2], means[0]) / stds[0];
      result[1] = __fsub_rn(__fsub_rn(gt[1], anchor[1]) / anchor[3], means[1]) / stds[1];
      result[2] = __fsub_rn(logf(gt[2] / anchor[2]), means[2]) / stds[2];
      result[3] = __fsub_rn(logf(gt[3] / anchor[3]), means[3]) / stds[3];
    }
    for (int k = 0; k < 4; ++k) target[k] = result[k];
  }
}

// -- coord_flip ----------------------------------------------------------------------
//
// Points of D coordinates (D <= 3). Descriptor row per sample: 0 input offset,
// 1 output offset (floats), 2 points, 3 coordinates per point, then per
// coordinate: whether it flips, and the float bits of its mirror (2 * center).
#define COORD_FLIP_ROW 10

extern "C" __global__ void coord_flip(const float* __restrict__ in, float* __restrict__ out,
                                      const long long* __restrict__ rows) {
  const long long* seg = rows + (unsigned long long)blockIdx.y * COORD_FLIP_ROW;
  const long long dims = seg[3];
  GRID_STRIDE_LOOP(i, (unsigned long long)(seg[2] * dims)) {
    const long long c = (long long)i % dims;
    const float value = in[seg[0] + (long long)i];
    const float mirror = __int_as_float((int)seg[5 + 2 * c]);
    out[seg[1] + (long long)i] = seg[4 + 2 * c] ? __fsub_rn(mirror, value) : value;
  }
}

// -- coord_transform -----------------------------------------------------------------
//
// out[p, i] = T[i] + sum_j x[p, j] * M[i, j], summed from T in the order of j, each
// product and sum rounded in float32 (ndd/_ops/transforms.py). Descriptor row per
// sample: 0 input offset, 1 output offset, 2 points, 3 input components n, 4
// output components m, 5 offset of its matrix in the float table ([M (m x n), T]).
#define COORD_TRANSFORM_ROW 6

__device__ inline float coord_load(const unsigned char* p) { return (float)*p; }
__device__ inline float coord_load(const short* p) { return (float)*p; }
__device__ inline float coord_load(const unsigned short* p) { return (float)*p; }
__device__ inline float coord_load(const int* p) { return __int2float_rn(*p); }
__device__ inline float coord_load(const float* p) { return *p; }


#define COORD_TRANSFORM(IN_NAME, IN, OUT_NAME, OUT, STORE)                                \
  extern "C" __global__ void coord_transform_##IN_NAME##_to_##OUT_NAME(                  \
      const IN* __restrict__ in, OUT* __restrict__ out, const long long* __restrict__ rows, \
      const float* __restrict__ matrices) {                                              \
    const long long* seg = rows + (unsigned long long)blockIdx.y * COORD_TRANSFORM_ROW;  \
    const long long n = seg[3], m = seg[4];                                               \
    const float* matrix = matrices + seg[5];                                             \
    GRID_STRIDE_LOOP(e, (unsigned long long)(seg[2] * m)) {                              \
      const long long point = (long long)e / m, i = (long long)e % m;                    \
      const IN* x = in + seg[0] + point * n;                                             \
      float v = matrix[m * n + i];                                                       \
      for (long long j = 0; j < n; ++j) v = __fadd_rn(v, __fmul_rn(coord_load(x + j), matrix[i * n + j])); \
      out[seg[1] + (long long)e] = STORE;                                                \
    }                                                                                    \
  }

COORD_TRANSFORM(f32, float, f32, float, v)
COORD_TRANSFORM(u8, unsigned char, f32, float, v)
COORD_TRANSFORM(i16, short, f32, float, v)
COORD_TRANSFORM(u16, unsigned short, f32, float, v)
COORD_TRANSFORM(i32, int, f32, float, v)
COORD_TRANSFORM(u8, unsigned char, u8, unsigned char, round_saturate<unsigned char>(v, 0.0f, 255.0f, 255))
COORD_TRANSFORM(i16, short, i16, short, round_saturate<short>(v, -32768.0f, 32767.0f, 32767))
COORD_TRANSFORM(u16, unsigned short, u16, unsigned short, round_saturate<unsigned short>(v, 0.0f, 65535.0f, 65535))
COORD_TRANSFORM(i32, int, i32, int, round_saturate<int>(v, -2147483648.0f, 2147483648.0f, 2147483647))
