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

// The tiles of one segment. I (the type of the tile arithmetic) is 32-bit when the
// segment has fewer than 2^31 tiles: a 64-bit division costs a GPU dozens of
// instructions, and a tile's place takes three of them.
template <typename T, typename I>
__device__ __forceinline__ void transpose_segment(const long long* __restrict__ row, T (*tile)[TILE + 1],
                                                  unsigned char* out_base, const unsigned char* in_base) {
  const long long A = row[1], B = row[2];
  const T* __restrict__ in = reinterpret_cast<const T*>(in_base + row[3]);
  T* __restrict__ out = reinterpret_cast<T*>(out_base + row[4]);
  const long long sN = row[5], sB = row[6], oN = row[7], oA = row[8];
  const I tiles_a = (I)((A + TILE - 1) / TILE), tiles_b = (I)((B + TILE - 1) / TILE);
  const I per_n = tiles_a * tiles_b;
  const I tiles = (I)row[0] * per_n;
  // The loop bounds depend on the block only, so every thread reaches the barriers.
  for (I t = blockIdx.x; t < tiles; t += gridDim.x) {
    const I n = t / per_n;
    const I r = t - n * per_n;
    const I ta = r / tiles_b;
    const long long a0 = (long long)ta * TILE, b0 = (long long)(r - ta * tiles_b) * TILE;
    // Each tile's corner once in 64 bits; the threads' offsets from it are small.
    const T* __restrict__ tile_in = in + (long long)n * sN + a0 + b0 * sB;
    T* __restrict__ tile_out = out + (long long)n * oN + a0 * oA + b0;
    const int a_left = (int)(A - a0 < TILE ? A - a0 : TILE), b_left = (int)(B - b0 < TILE ? B - b0 : TILE);
    const int x = (int)threadIdx.x;
#pragma unroll
    for (int j = threadIdx.y; j < TILE; j += TILE_ROWS)
      if (x < a_left && j < b_left) tile[j][x] = tile_in[x + j * sB];
    __syncthreads();
#pragma unroll
    for (int j = threadIdx.y; j < TILE; j += TILE_ROWS)
      if (j < a_left && x < b_left) tile_out[j * oA + x] = tile[x][j];
    __syncthreads();
  }
}

template <typename T>
__device__ __forceinline__ void transpose_tiles(const long long* __restrict__ rows, unsigned int count,
                                                unsigned char* out_base, const unsigned char* in_base) {
  // +1 column: the reads of a tile's column hit 32 different banks.
  __shared__ T tile[TILE][TILE + 1];
  for (unsigned int s = blockIdx.y; s < count; s += gridDim.y) {
    const long long* row = rows + (unsigned long long)s * TRANSPOSE_WORDS;
    const long long tiles = row[0] * ((row[1] + TILE - 1) / TILE) * ((row[2] + TILE - 1) / TILE);
    if (tiles <= 0x7fffffffll)
      transpose_segment<T, unsigned int>(row, tile, out_base, in_base);
    else
      transpose_segment<T, unsigned long long>(row, tile, out_base, in_base);
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
