// JPEG compression artifacts (ndd/_ops/gpu_jpeg_distortion.py launches these): the
// lossy steps of a baseline 4:2:0 JPEG round trip as libjpeg-turbo takes them for
// the CPU operator (Pillow's encoder, simplejpeg's decoder), without the entropy
// coding between them, which is lossless. Every step is libjpeg-turbo's integer
// arithmetic (IJG code; the functions matched are named below), so the results
// equal the CPU's to the bit.
//
// jpeg_distortion_code: the encoder and the decoder up to the component planes.
// One block of JPEG_THREADS threads takes JPEG_MCUS minimum coded units (16x16
// pixels: four luminance blocks and one block of each chroma component) at a time
// in shared memory: colour conversion and 2x2 chroma downsampling (a thread per
// 2x2 pixels), then per 8x8 block the forward DCT, quantisation, dequantisation
// and inverse DCT (a thread per row or column). It stores the decoded Y plane
// (height x width) and the decoded Cb and Cr planes (ceil(height / 2) x
// ceil(width / 2)) of each frame in a temporary.
//
// jpeg_distortion_rgb: the decoder's chroma upsampling and colour conversion,
// which read chroma samples of neighbouring units (a thread per two pixels of a
// row, which share their nearest chroma sample).
//
// A batch is one launch of each: a descriptor row per frame (int64, in device
// memory, blockIdx.y picks the row).
//
// Integers are 32-bit, as in libjpeg-turbo's SIMD paths, which the CPU runs.
#include "common.cuh"

// Minimum coded units per block of jpeg_distortion_code, and its threads: 64 per
// unit (its 2x2 pixel groups; 48 of them then take the rows or columns of its six
// 8x8 blocks).
#define JPEG_MCUS 4
#define JPEG_THREADS (64 * JPEG_MCUS)
#define JPEG_LINES (48 * JPEG_MCUS)
// Blocks resident per multiprocessor that the compiler keeps registers for: five
// fit its 48 registers a thread (sm_70 to sm_90) without spilling, where left to
// itself it takes 64 to 80 and leaves room for three or four.
#define JPEG_MIN_BLOCKS 5
// An 8x8 block in shared memory: rows of 9 words, so that the threads of a warp
// taking one row (or one column) each read distinct banks.
#define JPEG_PITCH 9
#define JPEG_BLOCK (8 * JPEG_PITCH)
#define JPEG_UNIT (6 * JPEG_BLOCK)

// Descriptor row of jpeg_distortion_code: 0 input offset of the frame (HWC bytes),
// 1 offset of its planes in the temporary (Y, then Cb, then Cr), 2 height,
// 3 width, 4 offset of its quality's table (ints), 5 units per row of units,
// 6 units. A quality's table: the quantisation values of the luminance then
// the chrominance blocks (64 each, in natural order), then the reciprocals,
// corrections and shifts that jcdctmgr.c's compute_reciprocal derives from
// eight times each (JPEG_TABLE words per part).
#define JPEG_CODE_ROW 7
#define JPEG_TABLE 128
// Descriptor row of jpeg_distortion_rgb: 0 offset of the frame's planes, 1 output
// offset of the frame (HWC bytes), 2 height, 3 width.
#define JPEG_RGB_ROW 4

// jfdctint.c and jidctint.c (LL&M integer DCT): constants scaled by 2**13, and two
// more bits kept between the passes.
#define JPEG_CONST_BITS 13
#define JPEG_PASS1_BITS 2
#define JPEG_FIX_0_298631336 2446
#define JPEG_FIX_0_390180644 3196
#define JPEG_FIX_0_541196100 4433
#define JPEG_FIX_0_765366865 6270
#define JPEG_FIX_0_899976223 7373
#define JPEG_FIX_1_175875602 9633
#define JPEG_FIX_1_501321110 12299
#define JPEG_FIX_1_847759065 15137
#define JPEG_FIX_1_961570560 16069
#define JPEG_FIX_2_053119869 16819
#define JPEG_FIX_2_562915447 20995
#define JPEG_FIX_3_072711026 25172

__device__ inline unsigned char jpeg_clamp(int v) {
  return (unsigned char)(v < 0 ? 0 : (v > 255 ? 255 : v));
}

// Division by 2**n rounding halves up (libjpeg's DESCALE).
__device__ inline int jpeg_descale(int x, int n) { return (x + (1 << (n - 1))) >> n; }

// jccolor.c rgb_ycc_convert: the weights FIX(0.29900), FIX(0.58700), FIX(0.11400),
// FIX(0.16874), FIX(0.33126), FIX(0.5), FIX(0.41869), FIX(0.08131) in 16-bit fixed
// point; Y rounded half up, Cb and Cr with ONE_HALF - 1, so that they stay below 256.
__device__ inline void jpeg_ycc(const unsigned char* p, int& y, int& cb, int& cr) {
  const int r = p[0], g = p[1], b = p[2];
  y = (19595 * r + 38470 * g + 7471 * b + 32768) >> 16;
  cb = (-11059 * r - 21709 * g + 32768 * b + (128 << 16) + 32767) >> 16;
  cr = (32768 * r - 27439 * g - 5329 * b + (128 << 16) + 32767) >> 16;
}

// jfdctint.c jpeg_fdct_islow, one 1-D pass: rows first (keeping PASS1_BITS more),
// then columns (removing them and the transform's scale of 8 along the column).
template <bool ROWS> __device__ inline void jpeg_fdct_1d(int (&v)[8]) {
  const int tmp0 = v[0] + v[7], tmp7 = v[0] - v[7];
  const int tmp1 = v[1] + v[6], tmp6 = v[1] - v[6];
  const int tmp2 = v[2] + v[5], tmp5 = v[2] - v[5];
  const int tmp3 = v[3] + v[4], tmp4 = v[3] - v[4];
  const int tmp10 = tmp0 + tmp3, tmp13 = tmp0 - tmp3;
  const int tmp11 = tmp1 + tmp2, tmp12 = tmp1 - tmp2;
  const int shift = ROWS ? JPEG_CONST_BITS - JPEG_PASS1_BITS : JPEG_CONST_BITS + JPEG_PASS1_BITS;
  if (ROWS) {
    v[0] = (tmp10 + tmp11) * (1 << JPEG_PASS1_BITS);
    v[4] = (tmp10 - tmp11) * (1 << JPEG_PASS1_BITS);
  } else {
    v[0] = jpeg_descale(tmp10 + tmp11, JPEG_PASS1_BITS);
    v[4] = jpeg_descale(tmp10 - tmp11, JPEG_PASS1_BITS);
  }
  const int even = (tmp12 + tmp13) * JPEG_FIX_0_541196100;
  v[2] = jpeg_descale(even + tmp13 * JPEG_FIX_0_765366865, shift);
  v[6] = jpeg_descale(even - tmp12 * JPEG_FIX_1_847759065, shift);
  const int z5 = (tmp4 + tmp5 + tmp6 + tmp7) * JPEG_FIX_1_175875602;
  const int z1 = (tmp4 + tmp7) * -JPEG_FIX_0_899976223;
  const int z2 = (tmp5 + tmp6) * -JPEG_FIX_2_562915447;
  const int z3 = (tmp4 + tmp6) * -JPEG_FIX_1_961570560 + z5;
  const int z4 = (tmp5 + tmp7) * -JPEG_FIX_0_390180644 + z5;
  v[7] = jpeg_descale(tmp4 * JPEG_FIX_0_298631336 + z1 + z3, shift);
  v[5] = jpeg_descale(tmp5 * JPEG_FIX_2_053119869 + z2 + z4, shift);
  v[3] = jpeg_descale(tmp6 * JPEG_FIX_3_072711026 + z2 + z3, shift);
  v[1] = jpeg_descale(tmp7 * JPEG_FIX_1_501321110 + z1 + z4, shift);
}

// jidctint.c jpeg_idct_islow, one 1-D pass: columns first (keeping PASS1_BITS
// more), then rows (removing them and the scale of 8).
template <bool COLUMNS> __device__ inline void jpeg_idct_1d(int (&v)[8]) {
  const int even = (v[2] + v[6]) * JPEG_FIX_0_541196100;
  const int tmp2 = even - v[6] * JPEG_FIX_1_847759065;
  const int tmp3 = even + v[2] * JPEG_FIX_0_765366865;
  const int tmp0 = (v[0] + v[4]) * (1 << JPEG_CONST_BITS);
  const int tmp1 = (v[0] - v[4]) * (1 << JPEG_CONST_BITS);
  const int tmp10 = tmp0 + tmp3, tmp13 = tmp0 - tmp3;
  const int tmp11 = tmp1 + tmp2, tmp12 = tmp1 - tmp2;
  const int z5 = (v[7] + v[5] + v[3] + v[1]) * JPEG_FIX_1_175875602;
  const int z1 = (v[7] + v[1]) * -JPEG_FIX_0_899976223;
  const int z2 = (v[5] + v[3]) * -JPEG_FIX_2_562915447;
  const int z3 = (v[7] + v[3]) * -JPEG_FIX_1_961570560 + z5;
  const int z4 = (v[5] + v[1]) * -JPEG_FIX_0_390180644 + z5;
  const int odd0 = v[7] * JPEG_FIX_0_298631336 + z1 + z3;
  const int odd1 = v[5] * JPEG_FIX_2_053119869 + z2 + z4;
  const int odd2 = v[3] * JPEG_FIX_3_072711026 + z2 + z3;
  const int odd3 = v[1] * JPEG_FIX_1_501321110 + z1 + z4;
  const int shift = COLUMNS ? JPEG_CONST_BITS - JPEG_PASS1_BITS : JPEG_CONST_BITS + JPEG_PASS1_BITS + 3;
  v[0] = jpeg_descale(tmp10 + odd3, shift);
  v[7] = jpeg_descale(tmp10 - odd3, shift);
  v[1] = jpeg_descale(tmp11 + odd2, shift);
  v[6] = jpeg_descale(tmp11 - odd2, shift);
  v[2] = jpeg_descale(tmp12 + odd1, shift);
  v[5] = jpeg_descale(tmp12 - odd1, shift);
  v[3] = jpeg_descale(tmp13 + odd0, shift);
  v[4] = jpeg_descale(tmp13 - odd0, shift);
}

// jcdctmgr.c quantize: the magnitude plus the correction, times the reciprocal,
// shifted (equal to rounding |x| / (8 * q) half up), the sign restored; then
// jddctmgr.c's dequantisation, the quotient times q.
__device__ inline int jpeg_requantize(int x, const int* table, int at) {
  const unsigned int magnitude = (unsigned int)(x < 0 ? -x : x);
  const unsigned int reciprocal = (unsigned int)table[JPEG_TABLE + at];
  const unsigned int correction = (unsigned int)table[2 * JPEG_TABLE + at];
  const int quotient = (int)(((magnitude + correction) * reciprocal) >> table[3 * JPEG_TABLE + at]);
  return (x < 0 ? -quotient : quotient) * table[at];
}

// The inverse DCT's range limiting: the level shift back and a clamp to 0..255, as
// libjpeg-turbo's SIMD IDCTs saturate (its C code wraps values beyond +-512 instead;
// they never come out of an encoded image but at the lowest qualities).
__device__ inline unsigned char jpeg_sample(int v) { return jpeg_clamp(v + 128); }

// Stores the decoded row of one block: its samples inside the plane's extents.
__device__ inline void jpeg_store_row(unsigned char* plane, int height, int width, int y, int x,
                                      const int (&v)[8]) {
  if (y >= height) return;
  unsigned char* row = plane + (long long)y * width;
  for (int j = 0; j < 8 && x + j < width; ++j) row[x + j] = jpeg_sample(v[j]);
}

extern "C" __global__ void __launch_bounds__(JPEG_THREADS, JPEG_MIN_BLOCKS)
    jpeg_distortion_code(const unsigned char* __restrict__ in, unsigned char* __restrict__ planes,
                         const long long* __restrict__ rows, const int* __restrict__ tables) {
  // Per unit its six blocks: Y top-left, top-right, bottom-left, bottom-right, Cb, Cr.
  __shared__ int units[JPEG_MCUS * JPEG_UNIT];
  // The frame's quality's table, copied to shared memory (the loop's first barrier
  // orders the copy before any use): read from global memory, the compiler keeps a
  // thread's 32 words of it in registers across the units.
  __shared__ int table[4 * JPEG_TABLE];
  const long long* seg = rows + (unsigned long long)blockIdx.y * JPEG_CODE_ROW;
  for (int k = threadIdx.x; k < 4 * JPEG_TABLE; k += blockDim.x) table[k] = tables[seg[4] + k];
  const unsigned char* frame = in + seg[0];
  // Frames are at most 65500 pixels high and wide (libjpeg's limit, checked by the
  // launcher): coordinates fit in 32 bits, offsets in a plane need 64.
  const int height = (int)seg[2], width = (int)seg[3];
  const int chroma_height = (height + 1) / 2, chroma_width = (width + 1) / 2;
  const int unit_columns = (int)seg[5], count = (int)seg[6];
  unsigned char* luma = planes + seg[1];
  unsigned char* chroma = luma + (long long)height * width;
  const long long chroma_size = (long long)chroma_height * chroma_width;

  // The thread's 2x2 pixel group in its unit (colour conversion), and its line
  // (row or column) of one of the unit's blocks (the DCTs).
  const int unit = threadIdx.x >> 6, gy = (threadIdx.x >> 3) & 7, gx = threadIdx.x & 7;
  const bool has_line = threadIdx.x < JPEG_LINES;
  const int line_unit = has_line ? threadIdx.x / 48 : 0;
  const int block = (threadIdx.x % 48) >> 3, line = threadIdx.x & 7;
  const int groups = (count + JPEG_MCUS - 1) / JPEG_MCUS;
  for (int group = blockIdx.x; group < groups; group += gridDim.x) {
    const int first = group * JPEG_MCUS;
    if (first + unit < count) {
      // Chroma sample (cy, cx) of the component, over 2x2 pixels. Both components are
      // expanded as jcsample.c expand_right_edge and jcprepct.c expand_bottom_edge do:
      // the last column replicated up to whole units, the last row to an even count
      // before downsampling and the last chroma row after it; the luminance with its
      // last row and column replicated.
      const int cy = (first + unit) / unit_columns * 8 + gy;
      const int cx = (first + unit) % unit_columns * 8 + gx;
      const int x0 = min(2 * cx, width - 1), x1 = min(2 * cx + 1, width - 1);
      const unsigned char* row0 = frame + 3LL * min(2 * cy, height - 1) * width;
      const unsigned char* row1 = frame + 3LL * min(2 * cy + 1, height - 1) * width;
      int y[4], cb[4], cr[4];
      jpeg_ycc(row0 + 3 * x0, y[0], cb[0], cr[0]);
      jpeg_ycc(row0 + 3 * x1, y[1], cb[1], cr[1]);
      jpeg_ycc(row1 + 3 * x0, y[2], cb[2], cr[2]);
      jpeg_ycc(row1 + 3 * x1, y[3], cb[3], cr[3]);
      int* u = units + unit * JPEG_UNIT;
      int* luma_at =
          u + ((gy >> 2) * 2 + (gx >> 2)) * JPEG_BLOCK + 2 * (gy & 3) * JPEG_PITCH + 2 * (gx & 3);
      // jcdctmgr.c convsamp's level shift.
      luma_at[0] = y[0] - 128;
      luma_at[1] = y[1] - 128;
      luma_at[JPEG_PITCH] = y[2] - 128;
      luma_at[JPEG_PITCH + 1] = y[3] - 128;
      if (cy >= chroma_height) {
        // A chroma row below the component: the last real one again.
        const unsigned char* last0 = frame + 3LL * (2 * chroma_height - 2) * width;
        const unsigned char* last1 = frame + 3LL * min(2 * chroma_height - 1, height - 1) * width;
        jpeg_ycc(last0 + 3 * x0, y[0], cb[0], cr[0]);
        jpeg_ycc(last0 + 3 * x1, y[1], cb[1], cr[1]);
        jpeg_ycc(last1 + 3 * x0, y[2], cb[2], cr[2]);
        jpeg_ycc(last1 + 3 * x1, y[3], cb[3], cr[3]);
      }
      // jcsample.c h2v2_downsample: the bias alternates 1, 2 along a row.
      const int bias = 1 + (gx & 1);
      u[4 * JPEG_BLOCK + gy * JPEG_PITCH + gx] = ((cb[0] + cb[1] + cb[2] + cb[3] + bias) >> 2) - 128;
      u[5 * JPEG_BLOCK + gy * JPEG_PITCH + gx] = ((cr[0] + cr[1] + cr[2] + cr[3] + bias) >> 2) - 128;
    }
    __syncthreads();
    const bool active = has_line && first + line_unit < count;
    int* block_at = units + line_unit * JPEG_UNIT + block * JPEG_BLOCK;
    int v[8];
    if (active) {
      int* row = block_at + line * JPEG_PITCH;
      for (int j = 0; j < 8; ++j) v[j] = row[j];
      jpeg_fdct_1d<true>(v);
      for (int j = 0; j < 8; ++j) row[j] = v[j];
    }
    __syncthreads();
    if (active) {
      // A column: the forward DCT's second pass, the coefficients quantised and
      // dequantised, and the inverse DCT's first pass.
      int* column = block_at + line;
      for (int j = 0; j < 8; ++j) v[j] = column[j * JPEG_PITCH];
      jpeg_fdct_1d<false>(v);
      const int part = block < 4 ? 0 : 64;
      for (int j = 0; j < 8; ++j) v[j] = jpeg_requantize(v[j], table, part + j * 8 + line);
      jpeg_idct_1d<true>(v);
      for (int j = 0; j < 8; ++j) column[j * JPEG_PITCH] = v[j];
    }
    __syncthreads();
    if (active) {
      const int* row = block_at + line * JPEG_PITCH;
      for (int j = 0; j < 8; ++j) v[j] = row[j];
      jpeg_idct_1d<false>(v);
      const int at = first + line_unit;
      const int unit_y = at / unit_columns, unit_x = at % unit_columns;
      if (block < 4)
        jpeg_store_row(luma, height, width, unit_y * 16 + (block >> 1) * 8 + line,
                       unit_x * 16 + (block & 1) * 8, v);
      else
        jpeg_store_row(chroma + (block - 4) * chroma_size, chroma_height, chroma_width,
                       unit_y * 8 + line, unit_x * 8, v);
    }
    __syncthreads();
  }
}

// jdcolor.c ycc_rgb_convert: FIX(1.40200), FIX(0.34414), FIX(0.71414), FIX(1.77200)
// in 16-bit fixed point, each channel clamped to 0..255.
__device__ inline void jpeg_rgb(int y, int cb, int cr, unsigned char* out) {
  cb -= 128;
  cr -= 128;
  out[0] = jpeg_clamp(y + ((91881 * cr + 32768) >> 16));
  out[1] = jpeg_clamp(y + ((-22554 * cb + 32768 - 46802 * cr) >> 16));
  out[2] = jpeg_clamp(y + ((116130 * cb + 32768) >> 16));
}

// The chroma of pixels 2j and 2j + 1 of a row: jdsample.c h2v2_fancy_upsample (a
// triangle filter, 3/4 of the nearer sample and 1/4 of the further one along each
// axis, rounded with 8 and 7 in turn; `near` is the nearest chroma row, `far` the
// one above or below it), or h2v2_upsample (the nearest sample) where the
// component is at most 2 samples wide, as jinit_upsampler chooses.
__device__ inline void jpeg_upsample(const unsigned char* near, const unsigned char* far, unsigned int j,
                                     unsigned int width, int& left, int& right) {
  if (width <= 2) {
    left = right = near[j];
    return;
  }
  // The samples beyond the first and last columns are those columns again, as the
  // function's special cases for them compute.
  const unsigned int before = j > 0 ? j - 1 : 0, after = j + 1 < width ? j + 1 : j;
  const int here = 3 * near[j] + far[j];
  left = (3 * here + 3 * near[before] + far[before] + 8) >> 4;
  right = (3 * here + 3 * near[after] + far[after] + 7) >> 4;
}

extern "C" __global__ void jpeg_distortion_rgb(const unsigned char* __restrict__ planes,
                                               unsigned char* __restrict__ out,
                                               const long long* __restrict__ rows) {
  const long long* seg = rows + (unsigned long long)blockIdx.y * JPEG_RGB_ROW;
  const long long height = seg[2], width = seg[3];
  const unsigned int chroma_height = (unsigned int)((height + 1) / 2);
  const unsigned int chroma_width = (unsigned int)((width + 1) / 2);
  const unsigned char* luma = planes + seg[0];
  const unsigned char* cb = luma + height * width;
  const unsigned char* cr = cb + (long long)chroma_height * chroma_width;
  unsigned char* frame = out + seg[1];
  // Frames are at most 65500 pixels high and wide (libjpeg's limit, checked by the
  // launcher), so the pairs of a frame count in 32 bits.
  const unsigned int pairs = (unsigned int)height * chroma_width;
  for (unsigned int e = blockIdx.x * blockDim.x + threadIdx.x; e < pairs; e += blockDim.x * gridDim.x) {
    const unsigned int y = e / chroma_width, j = e % chroma_width;
    // jdmainct.c's context rows: above the first chroma row and below the last, the
    // row itself.
    const unsigned int i = y >> 1;
    const unsigned int other = (y & 1) ? (i + 1 < chroma_height ? i + 1 : i) : (i > 0 ? i - 1 : 0);
    int cb0, cb1, cr0, cr1;
    jpeg_upsample(cb + (long long)i * chroma_width, cb + (long long)other * chroma_width, j, chroma_width,
                  cb0, cb1);
    jpeg_upsample(cr + (long long)i * chroma_width, cr + (long long)other * chroma_width, j, chroma_width,
                  cr0, cr1);
    const long long x = 2 * (long long)j, at = (long long)y * width + x;
    jpeg_rgb(luma[at], cb0, cr0, frame + 3 * at);
    if (x + 1 < width) jpeg_rgb(luma[at + 1], cb1, cr1, frame + 3 * at + 3);
  }
}
