# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""grid_mask's kernel: which pixels of a row fall in the squares of the rotated grid,
and the image copied with those pixels zeroed.

A pixel (x, y) is masked when both fractional parts of its grid position,
``fx = (-shift_x + y * -sin) + x * cos`` and ``fy = (-shift_y + y * cos) + x * sin``
(float32, in tiles), are below ``ratio``: the same float32 operations, in the same
order, as the numpy expression in ``ndd/_ops/compose.py``. Multiplications and
additions stay separate (intrinsics, and no FMA in the targets compiled for), so
the mask is exactly numpy's.
"""

import numpy as np

from libc.stdint cimport uint8_t
from libc.string cimport memcpy, memset


cdef extern from *:
    """
    #include <math.h>
    #include <stddef.h>

    static void ndd_grid_row_base(float fx0, float fy0, float cos_t, float sin_t, float ratio,
                                  ptrdiff_t start, ptrdiff_t width, unsigned char *mask)
    {
        for (ptrdiff_t x = start; x < width; x++) {
            float fx = fx0 + (float)x * cos_t;
            float fy = fy0 + (float)x * sin_t;
            mask[x] = (fx - floorf(fx)) < ratio && (fy - floorf(fy)) < ratio;
        }
    }

    #include "cpu_features.h"

    #if NDD_X86_SIMD
    #include <immintrin.h>

    __attribute__((target("avx2"))) static void ndd_grid_row_avx2(
        float fx0, float fy0, float cos_t, float sin_t, float ratio, ptrdiff_t width, unsigned char *mask)
    {
        const __m256 ax = _mm256_set1_ps(fx0), ay = _mm256_set1_ps(fy0);
        const __m256 c = _mm256_set1_ps(cos_t), s = _mm256_set1_ps(sin_t), r = _mm256_set1_ps(ratio);
        const __m256 step = _mm256_set1_ps(8.0f);
        __m256 xs = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
        ptrdiff_t x = 0;
        /* Column indices stay exact in float32 below 2**24. */
        for (; x + 8 <= width && x + 8 <= (1 << 24); x += 8) {
            __m256 fx = _mm256_add_ps(ax, _mm256_mul_ps(xs, c));
            __m256 fy = _mm256_add_ps(ay, _mm256_mul_ps(xs, s));
            __m256 in_x = _mm256_cmp_ps(_mm256_sub_ps(fx, _mm256_floor_ps(fx)), r, _CMP_LT_OQ);
            __m256 in_y = _mm256_cmp_ps(_mm256_sub_ps(fy, _mm256_floor_ps(fy)), r, _CMP_LT_OQ);
            int bits = _mm256_movemask_ps(_mm256_and_ps(in_x, in_y));
            for (int k = 0; k < 8; k++)
                mask[x + k] = (bits >> k) & 1;
            xs = _mm256_add_ps(xs, step);
        }
        ndd_grid_row_base(fx0, fy0, cos_t, sin_t, ratio, x, width, mask);
    }

    static void ndd_grid_row(float fx0, float fy0, float cos_t, float sin_t, float ratio, ptrdiff_t width,
                             unsigned char *mask)
    {
        if (ndd_has_avx2())
            ndd_grid_row_avx2(fx0, fy0, cos_t, sin_t, ratio, width, mask);
        else
            ndd_grid_row_base(fx0, fy0, cos_t, sin_t, ratio, 0, width, mask);
    }

    #else

    static void ndd_grid_row(float fx0, float fy0, float cos_t, float sin_t, float ratio, ptrdiff_t width,
                             unsigned char *mask)
    {
        ndd_grid_row_base(fx0, fy0, cos_t, sin_t, ratio, 0, width, mask);
    }

    #endif
    """
    void ndd_grid_row(float fx0, float fy0, float cos_t, float sin_t, float ratio, Py_ssize_t width,
                      unsigned char* mask) noexcept nogil


def grid_mask(data, float cos_t, float sin_t, float shift_x, float shift_y, float ratio):
    """``data`` (H, W[, C], any dtype; or (planes, H, W, C): channels of CHW, frames,
    slices, masked alike) with the pixels in the grid's squares set to 0 (all bytes
    zero), as a new C-contiguous array; ``data`` itself when no pixel is masked.
    ``cos_t``, ``sin_t``, ``shift_x`` and ``shift_y`` are in tiles."""
    source_array = np.ascontiguousarray(data)
    cdef Py_ssize_t planes = source_array.shape[0] if source_array.ndim == 4 else 1
    cdef Py_ssize_t first = 1 if source_array.ndim == 4 else 0
    cdef Py_ssize_t height = source_array.shape[first], width = source_array.shape[first + 1]
    cdef Py_ssize_t pixel = source_array.itemsize * (
        source_array.shape[first + 2] if source_array.ndim == first + 3 else 1
    )
    out_array = np.empty_like(source_array)
    mask_array = np.empty(width, np.uint8)
    keep_array = np.empty(width, np.uint8)
    cdef const uint8_t[::1] source = source_array.reshape(-1).view(np.uint8)
    cdef uint8_t[::1] out = out_array.reshape(-1).view(np.uint8)
    cdef unsigned char[::1] mask = mask_array
    cdef uint8_t[::1] keep = keep_array
    cdef Py_ssize_t y, x, i, p, run, start, row = width * pixel, plane = height * width * pixel
    cdef float fy_row
    cdef unsigned char masked, any_masked = 0
    if planes == 0 or height == 0 or row == 0:
        return data
    with nogil:
        for y in range(height):
            fy_row = <float>y
            ndd_grid_row(-shift_x + fy_row * -sin_t, -shift_y + fy_row * cos_t, cos_t, sin_t, ratio, width,
                         &mask[0])
            masked = 0
            for x in range(width):
                masked |= mask[x]
            any_masked |= masked
            if pixel == 1:
                # One byte a pixel (planes of uint8): each byte ANDed with 0xff where its
                # pixel stays, 0 where masked, which vectorises.
                for x in range(width):
                    keep[x] = <uint8_t> (mask[x] - 1)
            for p in range(planes):
                start = p * plane + y * row
                if masked and pixel == 1:
                    for i in range(row):
                        out[start + i] = source[start + i] & keep[i]
                    continue
                memcpy(&out[start], &source[start], row)
                if not masked:
                    continue
                # Wider pixels: the row copied, then each run of masked pixels zeroed.
                x = 0
                while x < width:
                    if not mask[x]:
                        x += 1
                        continue
                    run = x
                    while run < width and mask[run]:
                        run += 1
                    memset(&out[start + x * pixel], 0, (run - x) * pixel)
                    x = run
    return out_array if any_masked else data
