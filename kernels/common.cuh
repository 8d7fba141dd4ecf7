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
