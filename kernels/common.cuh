// Shared by the kernel files: kernels/build.py pastes it in place of their
// `#include "common.cuh"`, so each shipped kernel source stands alone.
#pragma once

// One thread per element, grid-stride loop so any launch size covers n.
#define GRID_STRIDE_LOOP(i, n)                                                 \
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x +    \
                              threadIdx.x;                                     \
       i < n; i += (unsigned long long)blockDim.x * gridDim.x)

// Dynamic shared memory (the launch's shared_bytes) as an array of T. The host
// build of the kernels (ndd/_cuda/host_kernels.h) defines its own.
#ifndef NDD_DYNAMIC_SHARED
#define NDD_DYNAMIC_SHARED(T, name)                                            \
  extern __shared__ __align__(16) unsigned char ndd_dynamic_shared_[];         \
  T* name = reinterpret_cast<T*>(ndd_dynamic_shared_)
#endif

// A float converted to an integer type as the reference's cast converts it: halves
// rounded away from zero, saturated (`top`: the first float above the type's range,
// or its largest value when that is a float; `largest`: the type's largest value),
// NaN gives 0.
template <typename T> __device__ inline T round_saturate(float v, float lo, float top, T largest) {
  if (!(v == v)) return 0;
  const float r = roundf(v);
  return r <= lo ? (T)lo : (r >= top ? largest : (T)r);
}
