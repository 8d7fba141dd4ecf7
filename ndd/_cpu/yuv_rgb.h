/* yuv420p -> rgb24 rows, with the integer arithmetic of swscale's
 * BILINEAR | FULL_CHR_H_INT | ACCURATE_RND conversion (yuv_rgb.pyx builds the
 * tables and says which step reproduces what).
 *
 * Plain C loops that the compiler vectorises: the x86-64 baseline (SSE2), and an
 * AVX2 copy of the same code (a target attribute) where the processor has it. All
 * integer arithmetic, so both give the same bytes. */
#ifndef NDD_YUV_RGB_H
#define NDD_YUV_RGB_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"

typedef struct {
    int width, height, chroma_width;
    /* Horizontal chroma filter, chroma_width -> width samples, weights summing to
     * 1 << 14. Either any taps (two_taps 0):
     *   out[x] = sum_j src[min(tap_start[x] + j, chroma_width - 1)] * tap_weights[x * taps + j]
     * or two adjacent ones (two_taps 1):
     *   out[x] = src[pair_start[x]] * weight0[x] + src[pair_start[x] + 1] * weight1[x]. */
    int two_taps;
    const int32_t *tap_start;
    const int32_t *tap_weights;
    int taps;
    const int32_t *pair_start;
    const int32_t *weight0;
    const int32_t *weight1;
    /* Runs of output pairs whose sources advance by one chroma sample a pair, where
     * the loop vectorises: (first x, pairs, source of even x, source of odd x). */
    int num_runs;
    const int32_t *runs;
    /* Vertical chroma filter, per output row y: chroma rows rows[2y], rows[2y + 1]
     * with weights row_weights[2y], row_weights[2y + 1] (summing to 1 << 12). */
    const int32_t *rows;
    const int32_t *row_weights;
    /* The matrix: luma offset and scale, and the chroma terms of R, G and B. */
    int32_t y_offset, y_scale, v_to_r, v_to_g, u_to_g, u_to_b;
} ndd_yuv_tables;

static inline int32_t ndd_yuv_min15(int32_t v) { return v < 32767 ? v : 32767; }

/* One chroma row scaled to the frame's width: 15-bit samples. Loop indices are
 * ptrdiff_t: int arithmetic such as 2 * j under -fwrapv keeps gcc from vectorising. */
static inline void ndd_yuv_scale_any(const ndd_yuv_tables *t, const uint8_t *restrict src,
                                     int32_t *restrict dst)
{
    for (ptrdiff_t x = 0; x < t->width; x++) {
        int32_t sum = 0;
        for (int j = 0; j < t->taps; j++) {
            int at = t->tap_start[x] + j;
            if (at >= t->chroma_width)  /* only taps of weight 0 reach past the edge */
                at = t->chroma_width - 1;
            sum += (int32_t)src[at] * t->tap_weights[x * t->taps + j];
        }
        dst[x] = ndd_yuv_min15(sum >> 7);
    }
}

static inline void ndd_yuv_scale_pairs(const ndd_yuv_tables *t, const uint8_t *restrict src,
                                       int32_t *restrict dst, ptrdiff_t x0, ptrdiff_t x1)
{
    for (ptrdiff_t x = x0; x < x1; x++) {
        const uint8_t *s = src + t->pair_start[x];
        dst[x] = ndd_yuv_min15(((int32_t)s[0] * t->weight0[x] + (int32_t)s[1] * t->weight1[x]) >> 7);
    }
}

/* A run: d[2j] from even[j], even[j + 1]; d[2j + 1] from odd[j], odd[j + 1]. */
static inline void ndd_yuv_scale_run(const uint8_t *restrict even, const uint8_t *restrict odd,
                                     const int32_t *restrict w0, const int32_t *restrict w1,
                                     int32_t *restrict d, ptrdiff_t pairs)
{
    for (ptrdiff_t j = 0; j < pairs; j++) {
        int32_t a = ((int32_t)even[j] * w0[2 * j] + (int32_t)even[j + 1] * w1[2 * j]) >> 7;
        int32_t b = ((int32_t)odd[j] * w0[2 * j + 1] + (int32_t)odd[j + 1] * w1[2 * j + 1]) >> 7;
        d[2 * j] = ndd_yuv_min15(a);
        d[2 * j + 1] = ndd_yuv_min15(b);
    }
}

static inline void ndd_yuv_scale_row(const ndd_yuv_tables *t, const uint8_t *src, int32_t *dst)
{
    if (!t->two_taps) {
        ndd_yuv_scale_any(t, src, dst);
        return;
    }
    ptrdiff_t x = 0;
    for (int k = 0; k < t->num_runs; k++) {
        const int32_t *run = t->runs + 4 * k;
        const ptrdiff_t first = run[0], pairs = run[1];
        ndd_yuv_scale_pairs(t, src, dst, x, first);
        ndd_yuv_scale_run(src + run[2], src + run[3], t->weight0 + first, t->weight1 + first, dst + first,
                          pairs);
        x = first + 2 * pairs;
    }
    ndd_yuv_scale_pairs(t, src, dst, x, t->width);
}

/* swscale's final clip of a 30-bit value to 8 bits. */
static inline int32_t ndd_yuv_clip8(int32_t v)
{
    v >>= 22;
    return v < 0 ? 0 : (v > 255 ? 255 : v);
}

/* One output pixel: the vertical chroma blend, then the matrix. swscale adds in
 * unsigned 32-bit arithmetic: a sum above 2^31 - 1 wraps to a negative value and
 * clips to 0 (B of Y = U = 255 in limited range is 0). */
#define NDD_YUV_PIXEL(x)                                                                 \
    int32_t U = (u0[x] * w0 + u1[x] * w1 - (128 << 19)) >> 10;                           \
    int32_t V = (v0[x] * w0 + v1[x] * w1 - (128 << 19)) >> 10;                           \
    uint32_t Y = (uint32_t)((((int32_t)luma[x] << 9) - t->y_offset) * t->y_scale + (1 << 21)); \
    int32_t R = ndd_yuv_clip8((int32_t)(Y + (uint32_t)(V * t->v_to_r)));                 \
    int32_t G = ndd_yuv_clip8((int32_t)(Y + (uint32_t)(V * t->v_to_g) + (uint32_t)(U * t->u_to_g))); \
    int32_t B = ndd_yuv_clip8((int32_t)(Y + (uint32_t)(U * t->u_to_b)));

#define NDD_YUV_ROW_ARGS                                                                 \
    const ndd_yuv_tables *t, const uint8_t *restrict luma, const int32_t *restrict u0,   \
    const int32_t *restrict u1, const int32_t *restrict v0, const int32_t *restrict v1,  \
    int32_t w0, int32_t w1, uint8_t *restrict out, uint32_t *restrict packed

/* With byte shuffles (AVX2) the interleaved store vectorises. */
static inline void ndd_yuv_row_interleaved(NDD_YUV_ROW_ARGS)
{
    (void)packed;
    for (ptrdiff_t x = 0; x < t->width; x++) {
        NDD_YUV_PIXEL(x)
        out[3 * x] = (uint8_t)R;
        out[3 * x + 1] = (uint8_t)G;
        out[3 * x + 2] = (uint8_t)B;
    }
}

/* SSE2 has no byte shuffle: pack the pixels as 0x00BBGGRR (vectorised), then store
 * 4 bytes a pixel, each store overlapping the next pixel's first byte. */
static inline void ndd_yuv_row_packed(NDD_YUV_ROW_ARGS)
{
    for (ptrdiff_t x = 0; x < t->width; x++) {
        NDD_YUV_PIXEL(x)
        packed[x] = (uint32_t)R | (uint32_t)G << 8 | (uint32_t)B << 16;
    }
    ptrdiff_t x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; x + 1 < t->width; x++)
        memcpy(out + 3 * x, packed + x, 4);
#endif
    for (; x < t->width; x++) {
        out[3 * x] = (uint8_t)packed[x];
        out[3 * x + 1] = (uint8_t)(packed[x] >> 8);
        out[3 * x + 2] = (uint8_t)(packed[x] >> 16);
    }
}

/* The frame. `work` holds 5 * width int32: per chroma plane two rows scaled to the
 * width (chroma row r in slot r & 1, so that the two output rows sharing it scale it
 * once), and one row of packed pixels. */
#define NDD_YUV_FRAME_BODY(ROW)                                                          \
    const ptrdiff_t width = t->width;                                                    \
    int32_t *u_rows = work, *v_rows = work + 2 * width;                                  \
    uint32_t *packed = (uint32_t *)(work + 4 * width);                                   \
    int held[2] = {-1, -1};                                                              \
    for (int row = 0; row < t->height; row++) {                                          \
        const int r0 = t->rows[2 * row], r1 = t->rows[2 * row + 1];                      \
        for (int k = 0; k < 2; k++) {                                                    \
            const int r = k ? r1 : r0;                                                   \
            if (held[r & 1] != r) {                                                      \
                ndd_yuv_scale_row(t, u + r * u_stride, u_rows + (r & 1) * width);        \
                ndd_yuv_scale_row(t, v + r * v_stride, v_rows + (r & 1) * width);        \
                held[r & 1] = r;                                                         \
            }                                                                            \
        }                                                                                \
        ROW(t, y + row * y_stride, u_rows + (r0 & 1) * width, u_rows + (r1 & 1) * width, \
            v_rows + (r0 & 1) * width, v_rows + (r1 & 1) * width, t->row_weights[2 * row], \
            t->row_weights[2 * row + 1], out + row * out_stride, packed);                \
    }

#define NDD_YUV_FRAME_ARGS                                                               \
    const ndd_yuv_tables *t, const uint8_t *y, ptrdiff_t y_stride, const uint8_t *u,     \
    ptrdiff_t u_stride, const uint8_t *v, ptrdiff_t v_stride, uint8_t *out,              \
    ptrdiff_t out_stride, int32_t *work

static void ndd_yuv_frame_sse2(NDD_YUV_FRAME_ARGS) { NDD_YUV_FRAME_BODY(ndd_yuv_row_packed) }

#if NDD_X86_SIMD
__attribute__((target("avx2")))
static void ndd_yuv_frame_avx2(NDD_YUV_FRAME_ARGS) { NDD_YUV_FRAME_BODY(ndd_yuv_row_interleaved) }
#endif

/* Convert a frame: 0 when done, -1 when out of memory. `baseline` runs the SSE2
 * code even where AVX2 is there (for tests). */
static int ndd_yuv_to_rgb(const ndd_yuv_tables *t, const uint8_t *y, ptrdiff_t y_stride,
                          const uint8_t *u, ptrdiff_t u_stride, const uint8_t *v, ptrdiff_t v_stride,
                          uint8_t *out, ptrdiff_t out_stride, int baseline)
{
    int32_t *work = (int32_t *)malloc(sizeof(int32_t) * 5 * (size_t)t->width);
    if (!work)
        return -1;
#if NDD_X86_SIMD
    if (!baseline && ndd_has_avx2())
        ndd_yuv_frame_avx2(t, y, y_stride, u, u_stride, v, v_stride, out, out_stride, work);
    else
#endif
        ndd_yuv_frame_sse2(t, y, y_stride, u, u_stride, v, v_stride, out, out_stride, work);
    (void)baseline;
    free(work);
    return 0;
}

#endif
