// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// 2011): the counter-based generator of the GPU's random draws (random.cu, and the
// jitter of warp.cu). kernels/build.py pastes this file in place of
// `#include "philox.cuh"`.
#pragma once

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

// The block of four words that counter (c) and key (k0, k1) give.
__device__ inline void philox4x32_10(const unsigned int* counter, unsigned int k0, unsigned int k1,
                                     unsigned int* out) {
  unsigned int c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
  for (int round = 0; round < 10; ++round) {
    const unsigned int hi0 = __umulhi(PHILOX_M0, c0), lo0 = PHILOX_M0 * c0;
    const unsigned int hi1 = __umulhi(PHILOX_M1, c2), lo1 = PHILOX_M1 * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}
