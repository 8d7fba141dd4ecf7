// Kernels of the creation and lookup operators: full, full_like, zeros, ones and
// their _like variants (fills, broadcasts), element_extract (copies), one_hot and
// lookup_table (ndd/_ops/gpu_indexing.py launches them).
//
// What these kernels move is never computed on: a fill value, a table entry or an
// on/off value is the bit pattern of the output type, converted on the host the
// way the CPU operator converts it. So the outputs are templated on an unsigned
// storage type of the output's size (u8, u16, u32, u64), which serves every
// element type of that size (bool, float16, ...); only the labels and keys that
// are read as numbers have kernels per input type.
//
// A batch runs in one launch: a small descriptor table (int64, in device memory)
// gives each segment (a sample, or a sample of one output) its element offsets
// and size, relative to the base pointers passed to the kernel; blockIdx.y picks
// the segment and the x blocks stride over its elements.
#include "common.cuh"

// The elements of segment blockIdx.y, for a descriptor table of `width` int64 per
// segment whose entry `n_at` is the segment's element count.
#define SEGMENT_LOOP(i, desc, width, n_at)                                     \
  const long long* seg = (desc) + (unsigned long long)blockIdx.y * (width);    \
  GRID_STRIDE_LOOP(i, (unsigned long long)seg[n_at])

// -- fill: every element of out[0, n) set to `value` ------------------------------

#define FILL(TN, T)                                                            \
  extern "C" __global__ void fill_##TN(T* __restrict__ out, T value,           \
                                       unsigned long long n) {                 \
    GRID_STRIDE_LOOP(i, n) { out[i] = value; }                                 \
  }

// -- broadcast: out segments filled from (possibly broadcast) source arrays -------
//
// Descriptor per segment: [src offset, dst offset, n, extents[ndim], src strides[ndim]]
// (elements). Element i of the segment has the coordinates of i in `extents` (C
// order); it reads the source at the dot product with `strides`, 0 along the
// dimensions the source is broadcast in.

#define BROADCAST(TN, T)                                                       \
  extern "C" __global__ void broadcast_##TN(const T* __restrict__ src,         \
                                            T* __restrict__ dst,               \
                                            const long long* __restrict__ desc,\
                                            int ndim) {                        \
    SEGMENT_LOOP(i, desc, 3 + 2 * ndim, 2) {                                   \
      const long long* extents = seg + 3;                                      \
      const long long* strides = seg + 3 + ndim;                               \
      unsigned long long rest = i;                                             \
      long long at = seg[0];                                                   \
      for (int d = ndim - 1; d >= 0; --d) {                                    \
        unsigned long long extent = (unsigned long long)extents[d];            \
        at += (long long)(rest % extent) * strides[d];                         \
        rest /= extent;                                                        \
      }                                                                        \
      dst[seg[1] + (long long)i] = src[at];                                    \
    }                                                                          \
  }

// -- copy: segments copied as they are (element_extract's frames) -----------------
//
// Descriptor per segment: [src offset, dst offset, n] (elements).

#define COPY(TN, T)                                                            \
  extern "C" __global__ void copy_##TN(const T* __restrict__ src,              \
                                       T* __restrict__ dst,                    \
                                       const long long* __restrict__ desc) {   \
    SEGMENT_LOOP(i, desc, 3, 2) { dst[seg[1] + (long long)i] = src[seg[0] + (long long)i]; } \
  }

#define STORAGE_KERNELS(TN, T) FILL(TN, T) BROADCAST(TN, T) COPY(TN, T)

STORAGE_KERNELS(u8, unsigned char)
STORAGE_KERNELS(u16, unsigned short)
STORAGE_KERNELS(u32, unsigned int)
STORAGE_KERNELS(u64, unsigned long long)

// -- labels and keys as integers ---------------------------------------------------

// float16 labels, read as their bits (no half type is needed anywhere else).
struct half_bits {
  unsigned short bits;
};

// The value of a finite float16 (exact in double); NaN and infinities are not
// asked for (the callers test the exponent first).
__device__ inline double half_value(unsigned short h) {
  int exponent = (h >> 10) & 0x1f;
  int mantissa = h & 0x3ff;
  double magnitude = exponent == 0 ? ldexp((double)mantissa, -24)
                                   : ldexp((double)(mantissa | 0x400), exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

// Which kind of number a label type is (NVRTC has no <type_traits> here).
template <typename T> struct number_kind { static constexpr int value = 0; };  // unsigned
template <> struct number_kind<signed char> { static constexpr int value = 1; };
template <> struct number_kind<short> { static constexpr int value = 1; };
template <> struct number_kind<int> { static constexpr int value = 1; };
template <> struct number_kind<long long> { static constexpr int value = 1; };
template <> struct number_kind<float> { static constexpr int value = 2; };
template <> struct number_kind<double> { static constexpr int value = 2; };

// one_hot's class of label x: x itself (truncated toward zero for floats) when it
// is in [0, num_classes), else -1. Floats compare with `limit`, num_classes
// converted to the label's type on the host (numpy compares in that type).
template <typename T>
__device__ inline long long label_class(T x, long long num_classes, double limit) {
  if constexpr (number_kind<T>::value == 2) {
    double t = trunc((double)x);
    return (t >= 0 && t < limit) ? (long long)t : -1;  // false for NaN
  } else if constexpr (number_kind<T>::value == 1) {
    return (x >= 0 && (long long)x < num_classes) ? (long long)x : -1;
  } else {
    return (unsigned long long)x < (unsigned long long)num_classes ? (long long)x : -1;
  }
}

template <>
__device__ inline long long label_class<half_bits>(half_bits x, long long num_classes,
                                                   double limit) {
  if (((x.bits >> 10) & 0x1f) == 0x1f) return -1;  // NaN, infinities
  double t = trunc(half_value(x.bits));
  return (t >= 0 && t < limit) ? (long long)t : -1;
}

// -- one_hot ------------------------------------------------------------------------
//
// Descriptor per sample: [input offset, output offset, output elements, inner]
// (elements), inner being the number of input elements after the class axis. The
// output's element i sits at (outer o, class c, inner j): it is `on` when the
// class of input element o * inner + j is c, else `off`.

// The input element of output element i: (i / inner / num_classes) * inner + i % inner,
// and its class (i / inner) % num_classes; in 32 bits where the sample allows (64-bit
// division is several times slower on a GPU).
template <typename U>
__device__ inline unsigned long long one_hot_source(U i, U inner, U num_classes, long long* c) {
  U rest = i / inner;
  *c = (long long)(rest % num_classes);
  return (unsigned long long)((rest / num_classes) * inner + i % inner);
}

#define ONE_HOT(IN, I, TN, T)                                                  \
  extern "C" __global__ void one_hot_##IN##_##TN(                              \
      const I* __restrict__ in, T* __restrict__ out,                           \
      const long long* __restrict__ desc, T on, T off, long long num_classes,  \
      double limit) {                                                          \
    SEGMENT_LOOP(i, desc, 4, 2) {                                              \
      unsigned long long inner = (unsigned long long)seg[3];                   \
      long long c;                                                             \
      unsigned long long at =                                                  \
          seg[2] <= 0xffffffffLL                                               \
              ? one_hot_source<unsigned int>((unsigned int)i, (unsigned int)inner, \
                                             (unsigned int)num_classes, &c)    \
              : one_hot_source<unsigned long long>(i, inner,                   \
                                                   (unsigned long long)num_classes, &c); \
      I x = in[seg[0] + (long long)at];                                        \
      out[seg[1] + (long long)i] = label_class<I>(x, num_classes, limit) == c ? on : off; \
    }                                                                          \
  }

// -- lookup_table ---------------------------------------------------------------------
//
// Descriptor per sample: [input offset, output offset, elements] (elements).
// out = table[key] for keys in [0, default_index), table[default_index] (the
// default value) for every other key.

#define LOOKUP(IN, I, TN, T)                                                   \
  extern "C" __global__ void lookup_##IN##_##TN(                               \
      const I* __restrict__ in, const T* __restrict__ table,                   \
      T* __restrict__ out, const long long* __restrict__ desc,                 \
      long long default_index) {                                               \
    SEGMENT_LOOP(i, desc, 3, 2) {                                              \
      long long key = label_class<I>(in[seg[0] + (long long)i], default_index, 0.0); \
      out[seg[1] + (long long)i] = table[key < 0 ? default_index : key];       \
    }                                                                          \
  }

#define FOR_STORAGE(KERNEL, IN, I)         \
  KERNEL(IN, I, u8, unsigned char)         \
  KERNEL(IN, I, u16, unsigned short)       \
  KERNEL(IN, I, u32, unsigned int)         \
  KERNEL(IN, I, u64, unsigned long long)

#define FOR_INTEGER_INPUTS(KERNEL)                         \
  FOR_STORAGE(KERNEL, u8, unsigned char)                   \
  FOR_STORAGE(KERNEL, u16, unsigned short)                 \
  FOR_STORAGE(KERNEL, u32, unsigned int)                   \
  FOR_STORAGE(KERNEL, u64, unsigned long long)             \
  FOR_STORAGE(KERNEL, i8, signed char)                     \
  FOR_STORAGE(KERNEL, i16, short)                          \
  FOR_STORAGE(KERNEL, i32, int)                            \
  FOR_STORAGE(KERNEL, i64, long long)

FOR_INTEGER_INPUTS(ONE_HOT)
FOR_STORAGE(ONE_HOT, f16, half_bits)
FOR_STORAGE(ONE_HOT, f32, float)
FOR_STORAGE(ONE_HOT, f64, double)

FOR_INTEGER_INPUTS(LOOKUP)
