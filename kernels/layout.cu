// Data movement (ndd/_ops/gpu_layout.py): strided copies and padded windows of
// N-D arrays. Elements move as raw bytes of 1, 2, 4, 8 or 16 bytes, so one
// kernel per element size serves every dtype; the converting variants (ndd.slice
// with 'dtype') change each element's type on the way.
//
// A launch handles many segments (the samples of a batch, or the inputs of a
// join): blockIdx.y picks the segment, blockIdx.x/threadIdx.x stride over its
// elements. Each segment is described by a row of 64-bit words in a small device
// buffer (layout below, written by gpu_layout.py), so a ragged batch is one launch.
// A row places its segment by byte offsets from the launch's pointer parameters
// (never by addresses: the host build of the kernels only translates parameters);
// extents, starts and strides count elements, strides may be 0 (broadcast) or
// negative (reversed steps). Dimensions are right-aligned: a row of ndim <
// LAYOUT_MAX_DIMS leaves the leading ones unused.
#include "common.cuh"
#include "half.cuh"

#define LAYOUT_MAX_DIMS 6

// Input pointers of one strided-copy launch (the inputs of a join).
#define LAYOUT_MAX_INPUTS 8

// copy row: n, ndim, input (0..LAYOUT_MAX_INPUTS-1), in offset, out offset,
// extents[D], in strides[D], out strides[D]
#define COPY_WORDS (5 + 3 * LAYOUT_MAX_DIMS)
// pad row: n, ndim, in offset, out offset, fill offset, fill dim (-1: one
// value; else the fill value is fill[index along that output dim]), extents[D]
// (of the output), starts[D] (input index of output index 0), in extents[D],
// in strides[D]; the output is C-contiguous. An output element whose input index
// falls outside [0, in extent) in any dimension gets the fill value.
#define PAD_WORDS (6 + 4 * LAYOUT_MAX_DIMS)

struct Bytes16 {
  unsigned long long lo, hi;
};

// What happens to an element on its way: nothing (raw bytes), or the conversion of
// ndd.slice's 'dtype' (ndd/_ops/conversions.py, convert_saturating): floats
// truncate toward zero, every value saturates at the limits of the output type
// (infinities included), NaN gives 0 in an integer type, bools are 0 or 1.
template <typename T> struct Raw {
  static __device__ __forceinline__ T apply(T v) { return v; }
};

template <typename From> struct ToU8 {
  static __device__ __forceinline__ unsigned char apply(From v) {
    if (v != v) return 0;  // NaN (never true for integers)
    // int literals: compared in From's type or a wider one, never wrapped into it
    if (v <= 0) return 0;
    if (v >= 255) return 255;
    return (unsigned char)v;  // truncates a float toward zero
  }
};
template <> struct ToU8<bool> {
  static __device__ __forceinline__ unsigned char apply(bool v) { return v ? 1 : 0; }
};

template <typename From> struct ToF32 {
  // Integers round to the nearest float (the C conversion, as numpy's astype).
  static __device__ __forceinline__ float apply(From v) { return (float)v; }
};
template <> struct ToF32<double> {
  static __device__ __forceinline__ float apply(double v) {
    const double limit = 3.4028234663852886e38;  // the largest float32
    return (float)(v > limit ? limit : (v < -limit ? -limit : v));  // NaN passes through
  }
};
template <> struct ToF32<bool> {
  static __device__ __forceinline__ float apply(bool v) { return v ? 1.0f : 0.0f; }
};

// float16 (its bits): values beyond the largest float16 (65504) saturate there,
// infinities included; NaN stays NaN; the rest rounds to the nearest even.
template <typename From> struct ToF16 {
  // Integers through double, where every integer type below 2^53 is exact; the
  // saturated ones are exact too.
  static __device__ __forceinline__ unsigned short apply(From v) {
    const double d = (double)v;
    return double_to_half_bits(d > 65504.0 ? 65504.0 : (d < -65504.0 ? -65504.0 : d));
  }
};
template <> struct ToF16<float> {
  static __device__ __forceinline__ unsigned short apply(float v) {
    return float_to_half_bits(v > 65504.0f ? 65504.0f : (v < -65504.0f ? -65504.0f : v));
  }
};
template <> struct ToF16<double> {
  static __device__ __forceinline__ unsigned short apply(double v) {
    return double_to_half_bits(v > 65504.0 ? 65504.0 : (v < -65504.0 ? -65504.0 : v));
  }
};
template <> struct ToF16<bool> {
  static __device__ __forceinline__ unsigned short apply(bool v) { return v ? 0x3c00 : 0; }
};

// float16 sources: their value as a float (exact), then as from float.
template <> struct ToU8<ndd_half> {
  static __device__ __forceinline__ unsigned char apply(ndd_half v) {
    return ToU8<float>::apply(half_bits_to_float(v.bits));
  }
};
template <> struct ToF32<ndd_half> {
  static __device__ __forceinline__ float apply(ndd_half v) { return half_bits_to_float(v.bits); }
};
template <> struct ToF16<ndd_half> {
  static __device__ __forceinline__ unsigned short apply(ndd_half v) { return v.bits; }
};

// The flat index i of a segment's elements, as per-dimension indices, walked
// from the innermost dimension; I is 32-bit when the segment is small enough
// (below 2^31 elements, so that the grid stride cannot wrap past 2^32),
// which spares the GPU most of a 64-bit division's cost.
// D, when not 0, is the segment's number of dimensions (row[1]) known at compile
// time: the loops over the dimensions then hold no test and no division for the
// unused ones. With D == 0 the count is read at run time, and a GPU computes the
// divisions of every dimension, used or not (the unrolled loop's tests become
// selects): 2-D pads ran at a quarter of the memory bandwidth that way.
template <typename In, typename Out, typename Move, typename I, int D>
__device__ __forceinline__ void copy_segment(const long long* __restrict__ row,
                                             const unsigned char* in_base,
                                             unsigned char* out_base) {
  const I n = (I)row[0];
  const int first = LAYOUT_MAX_DIMS - (D ? D : (int)row[1]);
  const In* __restrict__ in = reinterpret_cast<const In*>(in_base + row[3]);
  Out* __restrict__ out = reinterpret_cast<Out*>(out_base + row[4]);
  I extent[LAYOUT_MAX_DIMS];
  long long in_stride[LAYOUT_MAX_DIMS], out_stride[LAYOUT_MAX_DIMS];
#pragma unroll
  for (int k = 0; k < LAYOUT_MAX_DIMS; ++k) {
    extent[k] = (I)row[5 + k];
    in_stride[k] = row[5 + LAYOUT_MAX_DIMS + k];
    out_stride[k] = row[5 + 2 * LAYOUT_MAX_DIMS + k];
  }
  // The load phase also places the element in the output (its offset travels with it).
  struct Placed {
    In value;
    long long dst;
  };
  ilp_steps<I>(
      n,
      [&](I i) {
        I rest = i;
        long long src = 0, dst = 0;
#pragma unroll
        for (int k = LAYOUT_MAX_DIMS - 1; k > 0; --k) {
          if (k > first) {
            const I q = rest / extent[k];
            const long long r = (long long)(rest - q * extent[k]);
            src += r * in_stride[k];
            dst += r * out_stride[k];
            rest = q;
          }
        }
        src += (long long)rest * in_stride[first];
        dst += (long long)rest * out_stride[first];
        return Placed{in[src], dst};
      },
      [&](I, Placed v) { out[v.dst] = Move::apply(v.value); });
}

template <typename In, typename Out, typename Move>
__device__ __forceinline__ void strided_copy(const long long* __restrict__ rows, unsigned int count,
                                             unsigned char* out, const unsigned char* const* inputs) {
  for (unsigned int s = blockIdx.y; s < count; s += gridDim.y) {
    const long long* row = rows + (unsigned long long)s * COPY_WORDS;
    const unsigned char* in = inputs[row[2]];
    if (row[0] > 0x7fffffffll)
      copy_segment<In, Out, Move, unsigned long long, 0>(row, in, out);
    else if (row[1] == 1)
      copy_segment<In, Out, Move, unsigned int, 1>(row, in, out);
    else if (row[1] == 2)
      copy_segment<In, Out, Move, unsigned int, 2>(row, in, out);
    else if (row[1] == 3)
      copy_segment<In, Out, Move, unsigned int, 3>(row, in, out);
    else
      copy_segment<In, Out, Move, unsigned int, 0>(row, in, out);
  }
}

template <typename In, typename Out, typename Move, typename I, int D>
__device__ __forceinline__ void pad_segment(const long long* __restrict__ row,
                                            const unsigned char* in_base,
                                            unsigned char* out_base,
                                            const unsigned char* fill_base) {
  const I n = (I)row[0];
  const int first = LAYOUT_MAX_DIMS - (D ? D : (int)row[1]);
  const In* __restrict__ in = reinterpret_cast<const In*>(in_base + row[2]);
  Out* __restrict__ out = reinterpret_cast<Out*>(out_base + row[3]);
  const Out* __restrict__ fill = reinterpret_cast<const Out*>(fill_base + row[4]);
  const int fill_dim = (int)row[5];
  I extent[LAYOUT_MAX_DIMS];
  long long start[LAYOUT_MAX_DIMS], in_extent[LAYOUT_MAX_DIMS], in_stride[LAYOUT_MAX_DIMS];
#pragma unroll
  for (int k = 0; k < LAYOUT_MAX_DIMS; ++k) {
    extent[k] = (I)row[6 + k];
    start[k] = row[6 + LAYOUT_MAX_DIMS + k];
    in_extent[k] = row[6 + 2 * LAYOUT_MAX_DIMS + k];
    in_stride[k] = row[6 + 3 * LAYOUT_MAX_DIMS + k];
  }
  ilp_steps<I>(
      n,
      [&](I i) {
        I rest = i;
        long long src = 0;
        bool inside = true;
        int fill_index = 0;
#pragma unroll
        for (int k = LAYOUT_MAX_DIMS - 1; k >= 0; --k) {
          if (k >= first) {
            const I q = k > first ? rest / extent[k] : 0;
            const long long r = (long long)(rest - q * extent[k]);
            const long long c = start[k] + r;
            inside = inside && c >= 0 && c < in_extent[k];
            src += c * in_stride[k];
            if (k == fill_dim) fill_index = (int)r;
            rest = q;
          }
        }
        return inside ? Move::apply(in[src]) : fill[fill_index];
      },
      [&](I i, Out v) { out[i] = v; });
}

template <typename In, typename Out, typename Move>
__device__ __forceinline__ void padded_copy(const long long* __restrict__ rows, unsigned int count,
                                            unsigned char* out, const unsigned char* in,
                                            const unsigned char* fill) {
  for (unsigned int s = blockIdx.y; s < count; s += gridDim.y) {
    const long long* row = rows + (unsigned long long)s * PAD_WORDS;
    if (row[0] > 0x7fffffffll)
      pad_segment<In, Out, Move, unsigned long long, 0>(row, in, out, fill);
    else if (row[1] == 1)
      pad_segment<In, Out, Move, unsigned int, 1>(row, in, out, fill);
    else if (row[1] == 2)
      pad_segment<In, Out, Move, unsigned int, 2>(row, in, out, fill);
    else if (row[1] == 3)
      pad_segment<In, Out, Move, unsigned int, 3>(row, in, out, fill);
    else
      pad_segment<In, Out, Move, unsigned int, 0>(row, in, out, fill);
  }
}

// item_copy_SIZE(rows, count, out, in): segments of rows of items of any byte width,
// the items of a row possibly reversed (a horizontal flip of RGB pixels, 3 bytes
// each), which the strided copy could move only a byte at a time with a division per
// dimension. Each thread writes SIZE output bytes (one 1- or 4-byte store) and reads
// them byte by byte from their items. Row (ITEM_WORDS words): 0 output bytes, 1 in
// offset (of output byte 0's source), 2 out offset, 3 rows per plane, 4 row bytes
// (of the output, a multiple of SIZE), 5 item bytes, 6 item stride, 7 row stride,
// 8 plane stride (input bytes; negative strides step backwards). The output is
// contiguous.
#define ITEM_WORDS 9

template <typename T, typename I>
__device__ __forceinline__ void item_segment(const long long* __restrict__ row, const unsigned char* in,
                                             unsigned char* out) {
  const I words = (I)(row[0] / (long long)sizeof(T));
  const I rows = (I)row[3], row_bytes = (I)row[4], item = (I)row[5];
  const long long item_stride = row[6], row_stride = row[7], plane_stride = row[8];
  in += row[1];
  T* __restrict__ dst = reinterpret_cast<T*>(out + row[2]);
  ilp_steps<I>(
      words,
      [&](I w) {
        const I b = w * (I)sizeof(T);
        const I line = b / row_bytes;
        const I plane = line / rows;
        const I c = b - line * row_bytes;
        I j = c / item;
        I within = c - j * item;
        const unsigned char* src =
            in + (long long)plane * plane_stride + (long long)(line - plane * rows) * row_stride;
        T value = 0;
#pragma unroll
        for (int k = 0; k < (int)sizeof(T); ++k) {
          value |= (T)src[(long long)j * item_stride + within] << (8 * k);
          if (++within == item) {
            within = 0;
            ++j;
          }
        }
        return value;
      },
      [&](I w, T value) { dst[w] = value; });
}

#define ITEM_KERNEL(SIZE, T)                                                                   \
  extern "C" __global__ void item_copy_##SIZE(const long long* rows, unsigned int count,     \
                                              unsigned char* out, const unsigned char* in) { \
    for (unsigned int s = blockIdx.y; s < count; s += gridDim.y) {                           \
      const long long* row = rows + (unsigned long long)s * ITEM_WORDS;                      \
      if (row[0] > 0x7fffffffll)                                                             \
        item_segment<T, unsigned long long>(row, in, out);                                   \
      else                                                                                   \
        item_segment<T, unsigned int>(row, in, out);                                         \
    }                                                                                        \
  }

ITEM_KERNEL(1, unsigned char)
ITEM_KERNEL(4, unsigned int)

// strided_copy_SIZE(rows, count, out, in0..in7): segment rows read input[row[2]];
// padded_copy_SIZE(rows, count, out, in, fill).
#define LAYOUT_KERNELS(SIZE, T)                                                     \
  extern "C" __global__ void strided_copy_##SIZE(                                   \
      const long long* rows, unsigned int count, unsigned char* out,                \
      const unsigned char* in0, const unsigned char* in1, const unsigned char* in2, \
      const unsigned char* in3, const unsigned char* in4, const unsigned char* in5, \
      const unsigned char* in6, const unsigned char* in7) {                         \
    const unsigned char* inputs[LAYOUT_MAX_INPUTS] = {in0, in1, in2, in3,           \
                                                      in4, in5, in6, in7};          \
    strided_copy<T, T, Raw<T> >(rows, count, out, inputs);                                      \
  }                                                                                 \
  extern "C" __global__ void padded_copy_##SIZE(                                    \
      const long long* rows, unsigned int count, unsigned char* out,                \
      const unsigned char* in, const unsigned char* fill) {                         \
    padded_copy<T, T, Raw<T> >(rows, count, out, in, fill);                                     \
  }

LAYOUT_KERNELS(1, unsigned char)
LAYOUT_KERNELS(2, unsigned short)
LAYOUT_KERNELS(4, unsigned int)
LAYOUT_KERNELS(8, unsigned long long)
LAYOUT_KERNELS(16, Bytes16)

// convert_copy_FROM_to_TO(rows, count, out, in), convert_pad_FROM_to_TO(rows, count,
// out, in, fill): a strided or padded copy of one input converting each element
// (the fill values are of the output type already).
#define CONVERT_KERNELS(FN, FROM, TN, TO, MOVE)                                     \
  extern "C" __global__ void convert_copy_##FN##_to_##TN(                           \
      const long long* rows, unsigned int count, unsigned char* out,                \
      const unsigned char* in) {                                                    \
    const unsigned char* inputs[1] = {in};                                          \
    strided_copy<FROM, TO, MOVE<FROM> >(rows, count, out, inputs);                  \
  }                                                                                 \
  extern "C" __global__ void convert_pad_##FN##_to_##TN(                            \
      const long long* rows, unsigned int count, unsigned char* out,                \
      const unsigned char* in, const unsigned char* fill) {                         \
    padded_copy<FROM, TO, MOVE<FROM> >(rows, count, out, in, fill);                 \
  }

#define CONVERT_FROM(FN, FROM)                          \
  CONVERT_KERNELS(FN, FROM, u8, unsigned char, ToU8)    \
  CONVERT_KERNELS(FN, FROM, f16, unsigned short, ToF16) \
  CONVERT_KERNELS(FN, FROM, f32, float, ToF32)

CONVERT_FROM(bool, bool)
CONVERT_FROM(u8, unsigned char)
CONVERT_FROM(i8, signed char)
CONVERT_FROM(u16, unsigned short)
CONVERT_FROM(i16, short)
CONVERT_FROM(u32, unsigned int)
CONVERT_FROM(i32, int)
CONVERT_FROM(u64, unsigned long long)
CONVERT_FROM(i64, long long)
CONVERT_FROM(f16, ndd_half)
CONVERT_FROM(f32, float)
CONVERT_FROM(f64, double)
