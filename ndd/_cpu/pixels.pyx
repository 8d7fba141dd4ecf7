# cython: language_level=3, boundscheck=False, wraparound=False
"""Packing of decoded pixels and PNG row unfiltering, without the GIL.

Pillow keeps 3-channel images with 4 bytes per pixel; the image decoders let it
decode straight into a numpy buffer of that form and copy the channels they need
here (``copy_three_channels``), instead of Pillow's ``tobytes``, which holds the
GIL. The decoders unfilter the rows of 8-bit PNGs here (twice as fast as Pillow,
Paeth rows in SSE2, two rows at once) and of 16-bit colour ones (Pillow reads them at 8 bits).
"""


cdef extern from *:
    """
    #include <stddef.h>
    #include <stdint.h>
    #include <stdlib.h>
    #include <string.h>
    #include "cpu_features.h"
    #if NDD_X86_SIMD
    #include <emmintrin.h>
    #endif

    /* PNG row unfiltering, one row of `stride` bytes at a time, one loop per filter
     * type. `up` is the previous row (NULL for the first, which sees zeros above). */

    static inline uint8_t ndd_paeth(int a, int b, int c)
    {
        /* The predictor nearest to a + b - c; ties go to a, then b (as the standard says). */
        int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
        if (pb < pa) { pa = pb; a = b; }
        return (uint8_t)(pc < pa ? c : a);
    }

    #if NDD_X86_SIMD
    static inline __m128i ndd_abs_epi16(__m128i v)
    {
        __m128i negative = _mm_cmpgt_epi16(_mm_setzero_si128(), v);
        return _mm_sub_epi16(_mm_xor_si128(v, negative), negative);
    }

    /* f + the Paeth predictor of left a, above b and above-left c, lane by lane (16-bit
     * lanes holding bytes), modulo 256. */
    static inline __m128i ndd_paeth_sse2(__m128i a, __m128i b, __m128i c, __m128i f)
    {
        __m128i pa = ndd_abs_epi16(_mm_sub_epi16(b, c));
        __m128i pb = ndd_abs_epi16(_mm_sub_epi16(a, c));
        __m128i pc = ndd_abs_epi16(_mm_sub_epi16(_mm_add_epi16(a, b), _mm_add_epi16(c, c)));
        __m128i take_b = _mm_cmplt_epi16(pb, pa);
        __m128i best = _mm_or_si128(_mm_and_si128(take_b, pb), _mm_andnot_si128(take_b, pa));
        __m128i pick = _mm_or_si128(_mm_and_si128(take_b, b), _mm_andnot_si128(take_b, a));
        __m128i take_c = _mm_cmplt_epi16(pc, best);
        pick = _mm_or_si128(_mm_and_si128(take_c, c), _mm_andnot_si128(take_c, pick));
        return _mm_and_si128(_mm_add_epi16(f, pick), _mm_set1_epi16(0xff));
    }

    /* Paeth of pixels of 3 or 4 bytes, one pixel at a time in 16-bit lanes (the left
     * pixel of each is the one just decoded). */
    static void ndd_paeth_rows_sse2(uint8_t *row, const uint8_t *filtered, const uint8_t *up,
                                    ptrdiff_t stride, int bpp)
    {
        const __m128i zero = _mm_setzero_si128();
        __m128i a = zero, c = zero;
        ptrdiff_t x = 0;
        for (; x + 4 <= stride; x += bpp) {
            uint32_t bits_b, bits_f;
            memcpy(&bits_b, up + x, 4);
            memcpy(&bits_f, filtered + x, 4);
            __m128i b = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)bits_b), zero);
            __m128i f = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)bits_f), zero);
            a = ndd_paeth_sse2(a, b, c, f);
            uint32_t out = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(a, zero));
            memcpy(row + x, &out, (size_t)bpp);
            c = b;
        }
        for (; x < stride; x++) {
            int left = x >= bpp ? row[x - bpp] : 0, upper_left = x >= bpp ? up[x - bpp] : 0;
            row[x] = (uint8_t)(filtered[x] + ndd_paeth(left, up[x], upper_left));
        }
    }

    /* Paeth of two rows at once, `row0` (above it: `up`) and `row1` (below it): a pixel's
     * chain of dependent operations is long and one row leaves the processor idle, so
     * the 16-bit lanes 0-3 take pixel t of the upper row and lanes 4-7 pixel t - 1 of the
     * lower one, which needs only the upper row's pixels up to t - 1. The lower row's
     * above pixel is then the upper row's result of the step before, and both rows'
     * above-left pixels are the step before's above pixels. At the first step the lower
     * row's lanes see only zeros and give zeros: its left and above-left pixels at the
     * next one. The pixels whose 4-byte load would pass the row's end are finished one
     * at a time. */
    static void ndd_paeth_two_rows_sse2(uint8_t *row0, uint8_t *row1, const uint8_t *f0,
                                        const uint8_t *f1, const uint8_t *up, ptrdiff_t stride,
                                        int bpp)
    {
        const __m128i zero = _mm_setzero_si128();
        __m128i a = zero, b = zero;
        ptrdiff_t t = 0;
        for (; t * bpp + 4 <= stride; t++) {
            uint32_t bits_b, bits_f0, bits_f1 = 0;
            memcpy(&bits_b, up + t * bpp, 4);
            memcpy(&bits_f0, f0 + t * bpp, 4);
            if (t > 0) memcpy(&bits_f1, f1 + (t - 1) * bpp, 4);
            const __m128i c = b;
            /* above: the upper row's pixel t, and the upper row's result of the step before */
            b = _mm_unpacklo_epi64(_mm_unpacklo_epi8(_mm_cvtsi32_si128((int)bits_b), zero), a);
            const __m128i f = _mm_unpacklo_epi64(_mm_unpacklo_epi8(_mm_cvtsi32_si128((int)bits_f0), zero),
                                                 _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)bits_f1), zero));
            a = ndd_paeth_sse2(a, b, c, f);
            const __m128i bytes = _mm_packus_epi16(a, zero);
            uint32_t out0 = (uint32_t)_mm_cvtsi128_si32(bytes);
            memcpy(row0 + t * bpp, &out0, (size_t)bpp);
            if (t > 0) {
                uint32_t out1 = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(bytes, 4));
                memcpy(row1 + (t - 1) * bpp, &out1, (size_t)bpp);
            }
        }
        ptrdiff_t x;
        for (x = t * bpp; x < stride; x++) {
            int left = x >= bpp ? row0[x - bpp] : 0, upper_left = x >= bpp ? up[x - bpp] : 0;
            row0[x] = (uint8_t)(f0[x] + ndd_paeth(left, up[x], upper_left));
        }
        for (x = t > 0 ? (t - 1) * bpp : 0; x < stride; x++) {
            int left = x >= bpp ? row1[x - bpp] : 0, upper_left = x >= bpp ? row0[x - bpp] : 0;
            row1[x] = (uint8_t)(f1[x] + ndd_paeth(left, row0[x], upper_left));
        }
    }
    #endif

    /* Returns 0, or the unknown filter type + 1. */
    static int ndd_unfilter_rows(const uint8_t *filtered, uint8_t *rows, ptrdiff_t height,
                                 ptrdiff_t stride, int bpp)
    {
        for (ptrdiff_t y = 0; y < height; y++) {
            const uint8_t *src = filtered + y * (stride + 1);
            const int kind = src[0];
            src++;
            uint8_t *row = rows + y * stride;
            const uint8_t *up = y > 0 ? row - stride : NULL;
            ptrdiff_t x;
            switch (kind) {
            case 0:
                memcpy(row, src, (size_t)stride);
                break;
            case 1:
                for (x = 0; x < stride && x < bpp; x++) row[x] = src[x];
                for (; x < stride; x++) row[x] = (uint8_t)(src[x] + row[x - bpp]);
                break;
            case 2:
                if (up == NULL) memcpy(row, src, (size_t)stride);
                else for (x = 0; x < stride; x++) row[x] = (uint8_t)(src[x] + up[x]);
                break;
            case 3:
                if (up == NULL) {
                    for (x = 0; x < stride && x < bpp; x++) row[x] = src[x];
                    for (; x < stride; x++) row[x] = (uint8_t)(src[x] + (row[x - bpp] >> 1));
                } else {
                    for (x = 0; x < stride && x < bpp; x++) row[x] = (uint8_t)(src[x] + (up[x] >> 1));
                    for (; x < stride; x++) row[x] = (uint8_t)(src[x] + ((row[x - bpp] + up[x]) >> 1));
                }
                break;
            case 4:
                if (up == NULL) {
                    /* Above is zeros: the predictor is the left byte. */
                    for (x = 0; x < stride && x < bpp; x++) row[x] = src[x];
                    for (; x < stride; x++) row[x] = (uint8_t)(src[x] + row[x - bpp]);
                    break;
                }
    #if NDD_X86_SIMD
                if ((bpp == 3 || bpp == 4) && y + 1 < height && src[stride] == 4) {
                    /* the next row is Paeth too: both at once */
                    ndd_paeth_two_rows_sse2(row, row + stride, src, src + stride + 1, up, stride, bpp);
                    y++;
                    break;
                }
                if (bpp == 3 || bpp == 4) {
                    ndd_paeth_rows_sse2(row, src, up, stride, bpp);
                    break;
                }
    #endif
                for (x = 0; x < stride && x < bpp; x++) row[x] = (uint8_t)(src[x] + up[x]);
                for (; x < stride; x++)
                    row[x] = (uint8_t)(src[x] + ndd_paeth(row[x - bpp], up[x], up[x - bpp]));
                break;
            default:
                return kind + 1;
            }
        }
        return 0;
    }
    """
    int ndd_unfilter_rows(const unsigned char *filtered, unsigned char *rows, Py_ssize_t height,
                          Py_ssize_t stride, int bpp) nogil


def unfilter_png(const unsigned char[::1] filtered, unsigned char[:, ::1] rows, int pixel_bytes):
    """Undo the PNG row filters of a non-interlaced image: ``filtered`` holds, per row,
    the filter type byte and the filtered bytes; ``rows`` (height, bytes per row)
    receives the pixel bytes; ``pixel_bytes`` is the bytes of one pixel (1 for
    pixels of less than a byte)."""
    cdef Py_ssize_t height = rows.shape[0], stride = rows.shape[1]
    cdef int bad
    if filtered.shape[0] < height * (stride + 1):
        raise ValueError("the PNG image data is cut short")
    if pixel_bytes < 1:
        raise ValueError("unfilter_png: a pixel has at least one byte")
    if height == 0 or stride == 0:
        return
    with nogil:
        bad = ndd_unfilter_rows(&filtered[0], &rows[0, 0], height, stride, pixel_bytes)
    if bad:
        raise ValueError(f"unknown PNG filter type {bad - 1}")


def copy_three_channels(const unsigned char[:, :, :] source, unsigned char[:, :, :] target):
    """``target[y, x, c] = source[y, x, c]`` for c < 3, both (H, W, 3) views with any strides:
    Pillow's RGBX pixels packed (the first 3 channels of a 4-channel view), planar pixels
    interleaved, or interleaved ones made planar (a warp of a CHW image runs on the packed
    RGB kernels in between)."""
    cdef Py_ssize_t rows = target.shape[0], cols = target.shape[1], y, x
    cdef Py_ssize_t sp, sc, tp, tc
    cdef const unsigned char *src
    cdef unsigned char *dst
    if source.shape[0] != rows or source.shape[1] != cols or source.shape[2] != 3 or target.shape[2] != 3:
        raise ValueError("copy_three_channels: expected (H, W, 3) source and target of one size")
    if rows == 0 or cols == 0:
        return
    sp, sc = source.strides[1], source.strides[2]
    tp, tc = target.strides[1], target.strides[2]
    with nogil:
        for y in range(rows):
            src = &source[y, 0, 0]
            dst = &target[y, 0, 0]
            for x in range(cols):
                dst[x * tp] = src[x * sp]
                dst[x * tp + tc] = src[x * sp + sc]
                dst[x * tp + 2 * tc] = src[x * sp + 2 * sc]
