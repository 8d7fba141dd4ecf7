// Elementwise arithmetic on flat, contiguous buffers of one type (the prepare
// phase has already promoted and broadcast the operands to that type).
// One thread per element, grid-stride loop so any launch size covers n.

#define ELEMENTWISE_BINARY(NAME, T, EXPR)                                          \
  extern "C" __global__ void NAME(const T* __restrict__ a,                         \
                                  const T* __restrict__ b, T* __restrict__ out,    \
                                  unsigned long long n) {                          \
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x +      \
                                threadIdx.x;                                       \
         i < n; i += (unsigned long long)blockDim.x * gridDim.x) {                 \
      T x = a[i];                                                                  \
      T y = b[i];                                                                  \
      out[i] = (EXPR);                                                             \
    }                                                                              \
  }

#define ELEMENTWISE_ALL_TYPES(NAME, EXPR)                          \
  ELEMENTWISE_BINARY(NAME##_u8, unsigned char, EXPR)               \
  ELEMENTWISE_BINARY(NAME##_i16, short, EXPR)                      \
  ELEMENTWISE_BINARY(NAME##_i32, int, EXPR)                        \
  ELEMENTWISE_BINARY(NAME##_i64, long long, EXPR)                  \
  ELEMENTWISE_BINARY(NAME##_f32, float, EXPR)                      \
  ELEMENTWISE_BINARY(NAME##_f64, double, EXPR)

ELEMENTWISE_ALL_TYPES(add, x + y)
ELEMENTWISE_ALL_TYPES(sub, x - y)
ELEMENTWISE_ALL_TYPES(mul, x * y)
ELEMENTWISE_ALL_TYPES(minimum, x < y ? x : y)
ELEMENTWISE_ALL_TYPES(maximum, x > y ? x : y)
