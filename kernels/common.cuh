// Shared by the kernel files: kernels/build.py pastes it in place of their
// `#include "common.cuh"`, so each shipped kernel source stands alone.
#pragma once

// One thread per element, grid-stride loop so any launch size covers n.
#define GRID_STRIDE_LOOP(i, n)                                                 \
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x +    \
                              threadIdx.x;                                     \
       i < n; i += (unsigned long long)blockDim.x * gridDim.x)

// Elements a thread has in flight per step of ilp_loop.
#define NDD_ILP 4

template <typename I, typename Load, typename Store>
__device__ __forceinline__ void ilp_steps(I n, const Load& load, const Store& store) {
  using V = decltype(load(I(0)));
  const I block = (I)blockDim.x;
  const I step = block * NDD_ILP * (I)gridDim.x;
  for (I base = (I)blockIdx.x * block * NDD_ILP + (I)threadIdx.x; base < n; base += step) {
    V v[NDD_ILP];
#pragma unroll
    for (int k = 0; k < NDD_ILP; ++k) {
      const I i = base + (I)k * block;
      if (i < n) v[k] = load(i);
    }
#pragma unroll
    for (int k = 0; k < NDD_ILP; ++k) {
      const I i = base + (I)k * block;
      if (i < n) store(i, v[k]);
    }
  }
}

// A grid-stride loop over n elements of flat buffers in two phases per step: a
// thread first loads NDD_ILP elements, a block's width apart (coalesced), then
// computes and stores them. One element per thread leaves too few loads in flight
// to fill a GPU's memory bandwidth (about 4 bytes per resident thread). load(i)
// returns what element i needs; store(i, loaded) writes its result. Indices are
// 32-bit below 2^31 elements (then the step cannot wrap past 2^32).
template <typename Load, typename Store>
__device__ __forceinline__ void ilp_loop(unsigned long long n, const Load& load, const Store& store) {
  if (n <= 0x7fffffffull)
    ilp_steps<unsigned int>((unsigned int)n, load, store);
  else
    ilp_steps<unsigned long long>(n, load, store);
}

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
