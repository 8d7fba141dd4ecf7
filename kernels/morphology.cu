// Median blur, dilation and erosion (ndd/_ops/gpu_morphology.py launches them),
// equal to the CPU's (ndd/_ops/filters.py, ndd/_cpu/convolution.pyx) to the bit.
//
// A sample is seen as (planes, height, width, inner) elements: frames and leading
// channels are planes, trailing channels inner. A launch runs one pass of every
// sample of a batch: a descriptor row per sample (int64, in device memory,
// blockIdx.y picks the row), one thread per output element.
//
// Dilation and erosion: a rectangle is separable, so, as on the CPU, a pass along
// the rows reduces the sample into a buffer of its type and a pass along the
// columns reduces that into the output. A pass reads through the index map of its
// axis, the CPU's own (filters.py, _border_map: output index i with window index j
// reads map[i + j]; -1 is the constant border, a value that never wins), and takes
// the window in the CPU's order with numpy's maximum or minimum, whose choice
// between equal values (+0 and -0) and among NaNs this file copies.
//
// Medians take the CPU's algorithm for each window, so that floats agree where
// algorithms differ (NaNs, the sign of a zero median):
// - 3x3 windows: Paeth's 19-exchange network, in registers;
// - other windows of at most MEDIAN_REGISTER_VALUES values: the CPU's selection
//   network (a pruned Batcher sort: convolution.pyx's _median_exchanges, which
//   median_network_make repeats at compile time), in registers;
// - larger integer windows: a bisection over the bits of the value (any exact
//   selection gives the CPU's result on integers);
// - larger float windows: the CPU's network (its exchanges uploaded; up to 1024
//   values) or its Hoare selection (more), on "wires": one array of the window per
//   thread, in dynamic shared memory, or in a scratch buffer in device memory for
//   windows too large for that (the launch's scratch argument is then not null).
#include "common.cuh"
#include "half.cuh"

// -- dilation and erosion -------------------------------------------------------------

// Descriptor row of a pass (offsets in elements): 0 input offset, 1 output offset,
// 2 output elements, 3 outer, 4 extent of the axis reduced, 5 inner, 6 offset of
// the axis's index map in the map table, 7 window size.
#define MORPHOLOGY_ROW 8

// The lowest and highest values of a type: what the constant border holds.
template <typename T> struct morphology_limits;
#define MORPHOLOGY_LIMITS(T, LOWEST, HIGHEST)                  \
  template <> struct morphology_limits<T> {                    \
    static __device__ inline T lowest() { return LOWEST; }     \
    static __device__ inline T highest() { return HIGHEST; }   \
  };
MORPHOLOGY_LIMITS(unsigned char, 0, 255)
MORPHOLOGY_LIMITS(signed char, -128, 127)
MORPHOLOGY_LIMITS(unsigned short, 0, 65535)
MORPHOLOGY_LIMITS(short, -32768, 32767)
MORPHOLOGY_LIMITS(unsigned int, 0u, 4294967295u)
MORPHOLOGY_LIMITS(int, -2147483647 - 1, 2147483647)
MORPHOLOGY_LIMITS(unsigned long long, 0ull, 18446744073709551615ull)
MORPHOLOGY_LIMITS(long long, -9223372036854775807ll - 1, 9223372036854775807ll)
MORPHOLOGY_LIMITS(ndd_half, ndd_half{0xfc00u}, ndd_half{0x7c00u})
MORPHOLOGY_LIMITS(float, __int_as_float((int)0xff800000u), __int_as_float(0x7f800000))
MORPHOLOGY_LIMITS(double, __longlong_as_double((long long)0xfff0000000000000ull),
                  __longlong_as_double(0x7ff0000000000000ll))

// numpy's maximum(acc, v) (MIN: minimum), as its x86 loops compute it: a NaN in
// acc, else one in v, is the result; of equal values (+0 and -0 included) float32
// and float64 give v.
template <bool MIN, typename T> __device__ inline T morphology_pick(T acc, T v) {
  if (acc != acc) return acc;
  return (MIN ? acc < v : acc > v) ? acc : v;
}
// float16 (numpy's scalar loop, comparing as floats): of equal values, acc.
template <bool MIN> __device__ inline ndd_half morphology_pick(ndd_half acc, ndd_half v) {
  const float a = half_bits_to_float(acc.bits);
  const float b = half_bits_to_float(v.bits);
  if (a != a) return acc;
  return (MIN ? a <= b : a >= b) ? acc : v;
}

template <typename T, bool MIN, typename Index>
__device__ inline void morphology_element(const T* __restrict__ in, T* __restrict__ out,
                                          const long long* seg, const int* __restrict__ maps,
                                          Index e) {
  const Index inner = (Index)seg[5];
  const Index extent = (Index)seg[4];
  const Index r = e % inner;
  const Index rest = e / inner;
  const Index i = rest % extent;
  const Index o = rest / extent;
  const T* line = in + seg[0] + (long long)o * extent * inner + (long long)r;
  const int* map = maps + seg[6] + (long long)i;
  const int size = (int)seg[7];
  const T fill = MIN ? morphology_limits<T>::highest() : morphology_limits<T>::lowest();
  int source = map[0];
  T acc = source < 0 ? fill : line[(long long)source * inner];
  for (int j = 1; j < size; ++j) {
    source = map[j];
    acc = morphology_pick<MIN>(acc, source < 0 ? fill : line[(long long)source * inner]);
  }
  out[seg[1] + (long long)e] = acc;
}

#define MORPHOLOGY(OP, MIN, NAME, T)                                                          \
  extern "C" __global__ void OP##_##NAME(const T* __restrict__ in, T* __restrict__ out,     \
                                         const long long* __restrict__ rows,                 \
                                         const int* __restrict__ maps) {                     \
    const long long* seg = rows + (unsigned long long)blockIdx.y * MORPHOLOGY_ROW;          \
    const unsigned long long n = (unsigned long long)seg[2];                                \
    if (n <= 0x7fffffffull) {                                                               \
      for (unsigned int e = blockIdx.x * blockDim.x + threadIdx.x; e < n;                   \
           e += blockDim.x * gridDim.x)                                                     \
        morphology_element<T, MIN, unsigned int>(in, out, seg, maps, e);                    \
    } else {                                                                                \
      GRID_STRIDE_LOOP(e, n)                                                                \
      morphology_element<T, MIN, unsigned long long>(in, out, seg, maps, e);                \
    }                                                                                       \
  }

// -- median blur ------------------------------------------------------------------------

// Descriptor row of a median (offsets in elements): 0 input offset, 1 output offset,
// 2 output elements, 3 height, 4 width, 5 inner, 6 window rows, 7 window columns,
// 8 method (MEDIAN_*), 9 first exchange in the exchange table (MEDIAN_NETWORK),
// 10 exchanges.
#define MEDIAN_ROW 11
#define MEDIAN_REGISTERS 0
#define MEDIAN_BISECT 1
#define MEDIAN_NETWORK 2
#define MEDIAN_SELECT 3
// The largest window whose network runs in registers.
#define MEDIAN_REGISTER_VALUES 25

template <typename T> constexpr bool median_is_float = (T)0.5 != (T)0;

// The window of one output element; beyond the edges the edge values repeat.
template <typename T> struct median_window {
  const T* plane;
  long long height, width, inner, top, left;

  __device__ inline const T* row(int i) const {
    long long y = top + i;
    y = y < 0 ? 0 : (y >= height ? height - 1 : y);
    return plane + y * width * inner;
  }
  __device__ inline T at(const T* row, int j) const {
    long long x = left + j;
    x = x < 0 ? 0 : (x >= width ? width - 1 : x);
    return row[x * inner];
  }
};

// The CPU's compare-exchange: a NaN, or a value equal to the other, swaps.
template <typename T> __device__ inline void median_sort2(T& a, T& b) {
  const T low = a < b ? a : b;
  const T high = a < b ? b : a;
  a = low;
  b = high;
}

// convolution.pyx's _median_exchanges(count), in the same order, for count up to 32:
// Batcher's odd-even merge sort of the next power of two, without the exchanges with
// wires past count and those the middle wire does not depend on.
struct median_network {
  int size;
  unsigned char low[256], high[256];
};
constexpr median_network median_network_make(int count) {
  median_network all{}, kept{};
  int size = 1;
  while (size < count) size *= 2;
  for (int p = 1; p < size; p *= 2)
    for (int k = p; k >= 1; k /= 2)
      for (int j = k % p; j < size - k; j += 2 * k)
        for (int i = 0; i < k && i < size - j - k; ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p) && i + j + k < count) {
            all.low[all.size] = (unsigned char)(i + j);
            all.high[all.size] = (unsigned char)(i + j + k);
            ++all.size;
          }
  // Walk back from the middle wire, keeping what it depends on; then in order.
  bool needed[32] = {};
  bool keep[256] = {};
  needed[count / 2] = true;
  for (int e = all.size - 1; e >= 0; --e)
    if (needed[all.low[e]] || needed[all.high[e]]) {
      needed[all.low[e]] = needed[all.high[e]] = true;
      keep[e] = true;
    }
  for (int e = 0; e < all.size; ++e)
    if (keep[e]) {
      kept.low[kept.size] = all.low[e];
      kept.high[kept.size] = all.high[e];
      ++kept.size;
    }
  return kept;
}
template <int COUNT> struct median_network_of {
  static constexpr median_network value = median_network_make(COUNT);
};

// The exchanges from E on, each on registers named at compile time.
template <int COUNT, int E, typename T> __device__ inline void median_exchanges(T* v) {
  if constexpr (E < median_network_of<COUNT>::value.size) {
    constexpr int low = median_network_of<COUNT>::value.low[E];
    constexpr int high = median_network_of<COUNT>::value.high[E];
    median_sort2(v[low], v[high]);
    median_exchanges<COUNT, E + 1>(v);
  }
}

// A window of COUNT values (row-major, wire k = i * columns + j) through its network.
template <int COUNT, typename T>
__device__ inline T median_registers(const median_window<T>& w, int columns) {
  T v[COUNT];
  int i = 0, j = 0;
  const T* row = w.row(0);
#pragma unroll
  for (int k = 0; k < COUNT; ++k) {
    v[k] = w.at(row, j);
    if (++j == columns && k + 1 < COUNT) {
      j = 0;
      row = w.row(++i);
    }
  }
  median_exchanges<COUNT, 0>(v);
  return v[COUNT / 2];
}

// 3x3: the CPU's _median9_rows.
template <typename T> __device__ inline T median_paeth(const median_window<T>& w) {
  const T* r0 = w.row(0);
  const T* r1 = w.row(1);
  const T* r2 = w.row(2);
  T p0 = w.at(r0, 0), p1 = w.at(r0, 1), p2 = w.at(r0, 2);
  T p3 = w.at(r1, 0), p4 = w.at(r1, 1), p5 = w.at(r1, 2);
  T p6 = w.at(r2, 0), p7 = w.at(r2, 1), p8 = w.at(r2, 2);
  median_sort2(p1, p2);
  median_sort2(p4, p5);
  median_sort2(p7, p8);
  median_sort2(p0, p1);
  median_sort2(p3, p4);
  median_sort2(p6, p7);
  median_sort2(p1, p2);
  median_sort2(p4, p5);
  median_sort2(p7, p8);
  median_sort2(p0, p3);
  median_sort2(p5, p8);
  median_sort2(p4, p7);
  median_sort2(p3, p6);
  median_sort2(p1, p4);
  median_sort2(p2, p5);
  median_sort2(p4, p7);
  median_sort2(p4, p2);
  median_sort2(p6, p4);
  median_sort2(p4, p2);
  return p4;
}

#define MEDIAN_SMALL(COUNT) \
  case COUNT:               \
    return median_registers<COUNT>(w, columns);

// Windows of MEDIAN_REGISTER_VALUES or fewer (an odd count: the sides are odd).
template <typename T> __device__ inline T median_small(const median_window<T>& w, int rows, int columns) {
  if (rows == 3 && columns == 3) return median_paeth(w);
  switch (rows * columns) {
    MEDIAN_SMALL(1)
    MEDIAN_SMALL(3)
    MEDIAN_SMALL(5)
    MEDIAN_SMALL(7)
    MEDIAN_SMALL(9)
    MEDIAN_SMALL(11)
    MEDIAN_SMALL(13)
    MEDIAN_SMALL(15)
    MEDIAN_SMALL(17)
    MEDIAN_SMALL(19)
    MEDIAN_SMALL(21)
    MEDIAN_SMALL(23)
    default:  // MEDIAN_REGISTER_VALUES
      return median_registers<25>(w, columns);
  }
}

template <int SIZE> struct median_unsigned;
template <> struct median_unsigned<1> { using type = unsigned char; };
template <> struct median_unsigned<2> { using type = unsigned short; };
template <> struct median_unsigned<4> { using type = unsigned int; };
template <> struct median_unsigned<8> { using type = unsigned long long; };

// Integers: the middle value found bit by bit, from the top, in the order of the
// values (the sign bit of signed types flipped): the largest t with at most
// count / 2 values below it.
template <typename T>
__device__ inline T median_bisect(const median_window<T>& w, int rows, int columns) {
  using U = typename median_unsigned<sizeof(T)>::type;
  constexpr int bits = 8 * sizeof(T);
  constexpr U flip = (T)-1 < (T)0 ? (U)((U)1 << (bits - 1)) : (U)0;
  const int middle = rows * columns / 2;
  U prefix = 0;
  for (int b = bits - 1; b >= 0; --b) {
    const U trial = (U)(prefix | (U)((U)1 << b));
    int below = 0;
    for (int i = 0; i < rows; ++i) {
      const T* row = w.row(i);
      for (int j = 0; j < columns; ++j) below += (U)((U)w.at(row, j) ^ flip) < trial;
    }
    if (below <= middle) prefix = trial;
  }
  return (T)(U)(prefix ^ flip);
}

// The CPU's _select: Hoare's selection, Wirth's formulation, on wires ``stride`` apart.
template <typename T> __device__ inline T median_select(T* v, long long stride, long long n, long long k) {
  long long low = 0, high = n - 1;
  while (low < high) {
    const T pivot = v[k * stride];
    long long i = low, j = high;
    while (i <= j) {
      while (v[i * stride] < pivot) ++i;
      while (pivot < v[j * stride]) --j;
      if (i <= j) {
        const T t = v[i * stride];
        v[i * stride] = v[j * stride];
        v[j * stride] = t;
        ++i;
        --j;
      }
    }
    if (j < k) low = i;
    if (k < i) high = j;
  }
  return v[k * stride];
}

// Larger float windows: the values on the thread's wires, then the CPU's network
// (its exchanges, uploaded) or its selection.
template <typename T>
__device__ inline T median_wires(const median_window<T>& w, int rows, int columns, const long long* seg,
                                 const int* __restrict__ exchanges, T* wires, long long stride) {
  long long k = 0;
  for (int i = 0; i < rows; ++i) {
    const T* row = w.row(i);
    for (int j = 0; j < columns; ++j, ++k) wires[k * stride] = w.at(row, j);
  }
  const long long middle = k / 2;
  if (seg[8] == MEDIAN_SELECT) return median_select(wires, stride, k, middle);
  const int* pair = exchanges + 2 * seg[9];
  for (long long e = 0; e < seg[10]; ++e, pair += 2) median_sort2(wires[pair[0] * stride], wires[pair[1] * stride]);
  return wires[middle * stride];
}

// The window of output element e of a sample.
template <typename T, typename Index>
__device__ inline median_window<T> median_window_at(const T* in, const long long* seg, Index e) {
  const Index inner = (Index)seg[5];
  const Index width = (Index)seg[4];
  const Index height = (Index)seg[3];
  const Index c = e % inner;
  Index rest = e / inner;
  const Index x = rest % width;
  rest /= width;
  const Index y = rest % height;
  const Index p = rest / height;
  return median_window<T>{in + seg[0] + (long long)p * height * width * inner + (long long)c,
                          (long long)height,
                          (long long)width,
                          (long long)inner,
                          (long long)y - seg[6] / 2,
                          (long long)x - seg[7] / 2};
}

template <typename T>
__device__ inline T median_of(const median_window<T>& w, const long long* seg, const int* __restrict__ exchanges,
                              T* wires, long long stride) {
  const int rows = (int)seg[6], columns = (int)seg[7];
  if (seg[8] == MEDIAN_REGISTERS) return median_small(w, rows, columns);
  if constexpr (median_is_float<T>)
    return median_wires(w, rows, columns, seg, exchanges, wires, stride);
  else
    return median_bisect(w, rows, columns);
}

// One loop for every sample size (the window's code once): the element's position
// is worked out in 32 bits where the sample allows it.
#define MEDIAN(NAME, T)                                                                               \
  extern "C" __global__ void median_##NAME(const T* __restrict__ in, T* __restrict__ out,           \
                                           const long long* __restrict__ rows,                       \
                                           const int* __restrict__ exchanges, T* scratch) {          \
    const long long* seg = rows + (unsigned long long)blockIdx.y * MEDIAN_ROW;                      \
    T* wires;                                                                                        \
    long long stride;                                                                                \
    if (scratch) {                                                                                   \
      stride = (long long)gridDim.x * gridDim.y * blockDim.x;                                        \
      wires = scratch + ((long long)blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x; \
    } else {                                                                                         \
      NDD_DYNAMIC_SHARED(T, shared);                                                                 \
      stride = blockDim.x;                                                                           \
      wires = shared + threadIdx.x;                                                                  \
    }                                                                                                \
    const unsigned long long n = (unsigned long long)seg[2];                                        \
    const bool narrow = n <= 0x7fffffffull;                                                         \
    GRID_STRIDE_LOOP(e, n) {                                                                         \
      const median_window<T> w = narrow ? median_window_at<T, unsigned int>(in, seg, (unsigned int)e) \
                                        : median_window_at<T, unsigned long long>(in, seg, e);      \
      out[seg[1] + (long long)e] = median_of(w, seg, exchanges, wires, stride);                      \
    }                                                                                                \
  }

#define MORPHOLOGY_TYPE(NAME, T)     \
  MORPHOLOGY(dilate, false, NAME, T) \
  MORPHOLOGY(erode, true, NAME, T)   \
  MEDIAN(NAME, T)

MORPHOLOGY_TYPE(u8, unsigned char)
MORPHOLOGY_TYPE(i8, signed char)
MORPHOLOGY_TYPE(u16, unsigned short)
MORPHOLOGY_TYPE(i16, short)
MORPHOLOGY_TYPE(u32, unsigned int)
MORPHOLOGY_TYPE(i32, int)
MORPHOLOGY_TYPE(u64, unsigned long long)
MORPHOLOGY_TYPE(i64, long long)
MORPHOLOGY_TYPE(f32, float)
MORPHOLOGY_TYPE(f64, double)
// median_blur takes no float16.
MORPHOLOGY(dilate, false, f16, ndd_half)
MORPHOLOGY(erode, true, f16, ndd_half)
