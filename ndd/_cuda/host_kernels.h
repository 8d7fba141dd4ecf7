// The CUDA device dialect of kernels/*.cu as host C++, so that a kernel file built
// with g++ runs on the CPU: ndd/_cuda/host_kernels.py includes this before the
// kernel source (g++ -include) and runs the kernels for the FakeDriver, which lets
// CI check their numerics without a GPU.
//
// The execution model is the GPU's, run by one OS thread: the blocks of a launch
// one after another; the threads of a block one after another, or, for a kernel
// file that uses barriers, as fibers (ucontext) that switch at every
// __syncthreads(), so that every thread of the block reaches a barrier before any
// leaves it. __shared__ variables are statics, shared by the threads of the block
// that runs. Atomics are plain read-modify-writes: nothing runs concurrently.
// Warp shuffles exchange through a block-wide barrier, so every thread of the
// block must reach them (no divergence around a shuffle).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <ucontext.h>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __shared__ static

struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
};

// The indices of the thread that runs (set by the launcher before it resumes it).
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;
// Fibers: __syncthreads() yields to the launcher, which resumes it once every other
// thread of the block reached a barrier or finished.
extern "C" void ndd_host_syncthreads();
inline void __syncthreads() { ndd_host_syncthreads(); }
inline void __syncwarp(unsigned int = 0xffffffffu) { ndd_host_syncthreads(); }
inline void __threadfence() {}
constexpr int warpSize = 32;

// Dynamic shared memory (``extern __shared__`` in CUDA): kernels declare it with
// NDD_DYNAMIC_SHARED(type, name), which kernels/common.cuh defines for both sides.
extern "C" void* ndd_host_dynamic_shared();
#define NDD_DYNAMIC_SHARED(T, name) T* name = static_cast<T*>(ndd_host_dynamic_shared())

// -- warp shuffles, through a block-wide exchange -------------------------------------
extern "C" unsigned long long* ndd_host_exchange();
template <typename T> inline T ndd_host_shuffle(T v, unsigned int source_lane_in_block) {
  static_assert(sizeof(T) <= 8, "shuffle of a type wider than 8 bytes");
  unsigned long long* slots = ndd_host_exchange();
  const unsigned int me = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  std::memcpy(&slots[me], &v, sizeof(T));
  __syncthreads();
  T out;
  std::memcpy(&out, &slots[source_lane_in_block], sizeof(T));
  __syncthreads();
  return out;
}
inline unsigned int ndd_host_lane_base(int width) {
  const unsigned int me = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return me - me % width;
}
template <typename T> inline T __shfl_sync(unsigned int, T v, int lane, int width = 32) {
  return ndd_host_shuffle(v, ndd_host_lane_base(width) + (lane % width));
}
template <typename T> inline T __shfl_down_sync(unsigned int, T v, unsigned int delta, int width = 32) {
  const unsigned int base = ndd_host_lane_base(width);
  const unsigned int me = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned int lane = me - base;
  return ndd_host_shuffle(v, lane + delta < (unsigned)width ? me + delta : me);
}
template <typename T> inline T __shfl_up_sync(unsigned int, T v, unsigned int delta, int width = 32) {
  const unsigned int base = ndd_host_lane_base(width);
  const unsigned int me = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return ndd_host_shuffle(v, me - base >= delta ? me - delta : me);
}
template <typename T> inline T __shfl_xor_sync(unsigned int, T v, int mask, int width = 32) {
  const unsigned int base = ndd_host_lane_base(width);
  const unsigned int me = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return ndd_host_shuffle(v, base + (((me - base) ^ mask) % width));
}

// -- atomics: nothing runs concurrently ----------------------------------------------
template <typename T> inline T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
template <typename T> inline T atomicSub(T* p, T v) { T old = *p; *p = old - v; return old; }
template <typename T> inline T atomicMin(T* p, T v) { T old = *p; *p = v < old ? v : old; return old; }
template <typename T> inline T atomicMax(T* p, T v) { T old = *p; *p = v > old ? v : old; return old; }
template <typename T> inline T atomicExch(T* p, T v) { T old = *p; *p = v; return old; }
template <typename T> inline T atomicOr(T* p, T v) { T old = *p; *p = old | v; return old; }
template <typename T> inline T atomicAnd(T* p, T v) { T old = *p; *p = old & v; return old; }
template <typename T> inline T atomicCAS(T* p, T compare, T v) {
  T old = *p;
  if (old == compare) *p = v;
  return old;
}

// -- device functions of CUDA's math library and intrinsics ---------------------------
template <typename A, typename B> inline auto min(A a, B b) -> std::common_type_t<A, B> {
  return b < a ? b : a;
}
template <typename A, typename B> inline auto max(A a, B b) -> std::common_type_t<A, B> {
  return a < b ? b : a;
}
template <typename T> inline T __ldg(const T* p) { return *p; }
inline float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __fdividef(float a, float b) { return a / b; }
// Single roundings (the device never fuses these into a multiply-add; neither does
// the host build, which targets no FMA instructions).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline void sincosf(float x, float* s, float* c) { *s = std::sin(x); *c = std::cos(x); }
inline void sincos(double x, double* s, double* c) { *s = std::sin(x); *c = std::cos(x); }
// Conversions with the rounding named by the suffix (rn: to nearest even, rz: toward zero).
inline int __float2int_rn(float x) { return (int)std::nearbyint(x); }
inline int __float2int_rz(float x) { return (int)x; }
inline unsigned int __float2uint_rn(float x) { return (unsigned int)std::nearbyint(x); }
inline int __double2int_rn(double x) { return (int)std::nearbyint(x); }
inline long long __double2ll_rn(double x) { return (long long)std::nearbyint(x); }
inline float __int2float_rn(int x) { return (float)x; }
inline float __uint2float_rn(unsigned int x) { return (float)x; }
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return (unsigned int)(((unsigned long long)a * b) >> 32);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
}
inline float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
inline int __float_as_int(float f) { int x; std::memcpy(&x, &f, 4); return x; }
inline unsigned int __float_as_uint(float f) { unsigned int x; std::memcpy(&x, &f, 4); return x; }
inline float __uint_as_float(unsigned int x) { float f; std::memcpy(&f, &x, 4); return f; }
inline double __longlong_as_double(long long x) { double d; std::memcpy(&d, &x, 8); return d; }
inline long long __double_as_longlong(double d) { long long x; std::memcpy(&x, &d, 8); return x; }

using std::abs;
using std::ceil;
using std::floor;
using std::fmod;
using std::isinf;
using std::isnan;
using std::round;
using std::sqrt;
using std::trunc;

// -- calling a kernel with the launch's parameter array -------------------------------
// cuLaunchKernel's kernelParams: one pointer per parameter, to its value.
template <typename... A, std::size_t... I>
inline void ndd_host_call(void (*kernel)(A...), void** params, std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(params[I])...);
}
template <typename... A> inline void ndd_host_call(void (*kernel)(A...), void** params) {
  ndd_host_call(kernel, params, std::index_sequence_for<A...>{});
}
