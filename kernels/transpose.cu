// Tiled transposes for ndd/_ops/gpu_layout.py: the strided copies whose output's
// innermost dimension is read with a large stride, while another dimension is
// contiguous in the input (HWC <-> CHW, matrix transposes). A block moves 32 x 32
// tiles through shared memory so that both the reads and the writes of a warp are
// coalesced; the generic strided copy (layout.cu) would read one element per
// 32-byte sector.
//
// Segments as in layout.cu: blockIdx.y picks a row of the table, blockIdx.x walks
// its tiles. A row: N, A, B, in offset, out offset (bytes from the pointer
// parameters), in stride of n, in stride of b, out stride of n, out stride of a
// (elements); element (n, a, b) moves from in[n*sN + a + b*sB] to
// out[n*oN + a*oA + b].
#include "common.cuh"

#define TILE 32
#define TILE_ROWS 8
#define TRANSPOSE_WORDS 9

struct TransposeBytes16 {
  unsigned long long lo, hi;
};

template <typename T>
__device__ __forceinline__ void transpose_tiles(const long long* __restrict__ rows, unsigned int count,
                                                unsigned char* out_base, const unsigned char* in_base) {
  // +1 column: the reads of a tile's column hit 32 different banks.
  __shared__ T tile[TILE][TILE + 1];
  for (unsigned int s = blockIdx.y; s < count; s += gridDim.y) {
    const long long* row = rows + (unsigned long long)s * TRANSPOSE_WORDS;
    const long long N = row[0], A = row[1], B = row[2];
    const T* __restrict__ in = reinterpret_cast<const T*>(in_base + row[3]);
    T* __restrict__ out = reinterpret_cast<T*>(out_base + row[4]);
    const long long sN = row[5], sB = row[6], oN = row[7], oA = row[8];
    const long long tiles_a = (A + TILE - 1) / TILE, tiles_b = (B + TILE - 1) / TILE;
    const long long tiles = N * tiles_a * tiles_b;
    // The loop bounds depend on the block only, so every thread reaches the barriers.
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
      const long long n = t / (tiles_a * tiles_b);
      const long long r = t - n * tiles_a * tiles_b;
      const long long a0 = (r / tiles_b) * TILE, b0 = (r % tiles_b) * TILE;
      const long long a = a0 + threadIdx.x;
      for (int j = threadIdx.y; j < TILE; j += TILE_ROWS) {
        const long long b = b0 + j;
        if (a < A && b < B) tile[j][threadIdx.x] = in[n * sN + a + b * sB];
      }
      __syncthreads();
      const long long b = b0 + threadIdx.x;
      for (int j = threadIdx.y; j < TILE; j += TILE_ROWS) {
        const long long a2 = a0 + j;
        if (a2 < A && b < B) out[n * oN + a2 * oA + b] = tile[threadIdx.x][j];
      }
      __syncthreads();
    }
  }
}

#define TRANSPOSE_KERNEL(SIZE, T)                                                        \
  extern "C" __global__ void transpose_tiles_##SIZE(const long long* rows, unsigned int count, \
                                                    unsigned char* out, const unsigned char* in) { \
    transpose_tiles<T>(rows, count, out, in);                                            \
  }

TRANSPOSE_KERNEL(1, unsigned char)
TRANSPOSE_KERNEL(2, unsigned short)
TRANSPOSE_KERNEL(4, unsigned int)
TRANSPOSE_KERNEL(8, unsigned long long)
TRANSPOSE_KERNEL(16, TransposeBytes16)
