# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Demosaicing of ``ndd.debayer`` (the bilinear, edge-aware and gray algorithms of
OpenCV, in its integer arithmetic), without the GIL: the inner pixels of one Bayer
plane in one pass. The outermost rows and columns are left to the caller (they copy
their inner neighbours)."""

from libc.stdint cimport uint8_t, uint16_t, uint32_t

ctypedef fused pixel_t:
    uint8_t
    uint16_t

# BT.601 luma weights with 14 fractional bits (times 4: the sums below are of 4 samples).
cdef enum:
    R_TO_Y = 4899
    G_TO_Y = 9617
    B_TO_Y = 1868

cdef enum Algorithm:
    ALGORITHM_BILINEAR = 0
    ALGORITHM_EDGE_AWARE = 1
    ALGORITHM_GRAY = 2

BILINEAR, EDGE_AWARE, GRAY = ALGORITHM_BILINEAR, ALGORITHM_EDGE_AWARE, ALGORITHM_GRAY


cdef extern from *:
    """
    #include <stddef.h>
    #include <stdint.h>

    #include "cpu_features.h"

    #if NDD_X86_SIMD
    #include <immintrin.h>

    /* 8 pixels of 16-bit lanes from 8 bytes at p. */
    __attribute__((target("avx2")))
    static inline __m128i ndd_bayer_load8(const uint8_t *p)
    {
        return _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)p), _mm_setzero_si128());
    }

    /* The own colour, green and other colour of 8 pixels at x (16-bit lanes); `colour`
     * has all bits set in the lanes of colour pixels. */
    __attribute__((target("avx2")))
    static inline void ndd_bayer_8(const uint8_t *above, const uint8_t *row, const uint8_t *below,
                                   ptrdiff_t x, __m128i colour, int edge_aware,
                                   __m128i *own, __m128i *green, __m128i *other)
    {
        const __m128i one = _mm_set1_epi16(1), two = _mm_set1_epi16(2);
        __m128i v = ndd_bayer_load8(row + x);
        __m128i left = ndd_bayer_load8(row + x - 1), right = ndd_bayer_load8(row + x + 1);
        __m128i up = ndd_bayer_load8(above + x), down = ndd_bayer_load8(below + x);
        __m128i h = _mm_add_epi16(left, right), vt = _mm_add_epi16(up, down);
        __m128i d_above = _mm_add_epi16(ndd_bayer_load8(above + x - 1), ndd_bayer_load8(above + x + 1));
        __m128i d_below = _mm_add_epi16(ndd_bayer_load8(below + x - 1), ndd_bayer_load8(below + x + 1));
        __m128i d = _mm_add_epi16(d_above, d_below);
        __m128i hm = _mm_srli_epi16(_mm_add_epi16(h, one), 1);
        __m128i vm = _mm_srli_epi16(_mm_add_epi16(vt, one), 1);
        __m128i dm = _mm_srli_epi16(_mm_add_epi16(d, two), 2);
        __m128i estimate;
        if (edge_aware) {
            __m128i dy = _mm_sub_epi16(_mm_max_epi16(up, down), _mm_min_epi16(up, down));
            __m128i dx = _mm_sub_epi16(_mm_max_epi16(left, right), _mm_min_epi16(left, right));
            estimate = _mm_blendv_epi8(hm, vm, _mm_cmplt_epi16(dy, dx));
        } else {
            estimate = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(h, vt), two), 2);
        }
        *own = _mm_blendv_epi8(hm, v, colour);
        *other = _mm_blendv_epi8(vm, dm, colour);
        *green = _mm_blendv_epi8(v, estimate, colour);
    }

    /* RGB of the inner pixels of a row of a uint8 Bayer plane, 16 at a time; returns the
     * first x left for the caller (the row's tail). */
    __attribute__((target("avx2")))
    static ptrdiff_t ndd_bayer_rgb_row_u8(const uint8_t *above, const uint8_t *row, const uint8_t *below,
                                          uint8_t *out, ptrdiff_t width, int colour_at_1, int own_channel,
                                          int edge_aware)
    {
        /* Lanes 0, 2, 4... hold the colour pixels when x is odd and colour_at_1, and so on. */
        const __m128i even = _mm_set_epi16(0, -1, 0, -1, 0, -1, 0, -1);
        /* Bytes of three 16-pixel planes R, G, B interleaved into 48: shuffles of each plane
         * into the three output vectors (-1 leaves a zero). */
        const __m128i r0 = _mm_setr_epi8(0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1, 5);
        const __m128i g0 = _mm_setr_epi8(-1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1);
        const __m128i b0 = _mm_setr_epi8(-1, -1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1);
        const __m128i r1 = _mm_setr_epi8(-1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10, -1);
        const __m128i g1 = _mm_setr_epi8(5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10);
        const __m128i b1 = _mm_setr_epi8(-1, 5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1);
        const __m128i r2 = _mm_setr_epi8(-1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1, -1);
        const __m128i g2 = _mm_setr_epi8(-1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1);
        const __m128i b2 = _mm_setr_epi8(10, -1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15);
        ptrdiff_t x = 1;
        for (; x + 16 < width; x += 16) {
            /* x is odd: colour lanes are the even ones when colour_at_1. */
            const __m128i colour = colour_at_1 ? even : _mm_xor_si128(even, _mm_set1_epi16(-1));
            __m128i own_a, green_a, other_a, own_b, green_b, other_b;
            ndd_bayer_8(above, row, below, x, colour, edge_aware, &own_a, &green_a, &other_a);
            ndd_bayer_8(above, row, below, x + 8, colour, edge_aware, &own_b, &green_b, &other_b);
            __m128i own = _mm_packus_epi16(own_a, own_b), green = _mm_packus_epi16(green_a, green_b);
            __m128i other = _mm_packus_epi16(other_a, other_b);
            __m128i red = own_channel == 0 ? own : other, blue = own_channel == 0 ? other : own;
            uint8_t *p = out + 3 * x;
            _mm_storeu_si128((__m128i *)p, _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(red, r0),
                             _mm_shuffle_epi8(green, g0)), _mm_shuffle_epi8(blue, b0)));
            _mm_storeu_si128((__m128i *)(p + 16), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(red, r1),
                             _mm_shuffle_epi8(green, g1)), _mm_shuffle_epi8(blue, b1)));
            _mm_storeu_si128((__m128i *)(p + 32), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(red, r2),
                             _mm_shuffle_epi8(green, g2)), _mm_shuffle_epi8(blue, b2)));
        }
        return x;
    }

    static ptrdiff_t ndd_bayer_rgb_row(const uint8_t *above, const uint8_t *row, const uint8_t *below,
                                       uint8_t *out, ptrdiff_t width, int colour_at_1, int own_channel,
                                       int edge_aware)
    {
        if (!ndd_has_avx2())
            return 1;
        return ndd_bayer_rgb_row_u8(above, row, below, out, width, colour_at_1, own_channel, edge_aware);
    }
    #else
    static ptrdiff_t ndd_bayer_rgb_row(const uint8_t *above, const uint8_t *row, const uint8_t *below,
                                       uint8_t *out, ptrdiff_t width, int colour_at_1, int own_channel,
                                       int edge_aware)
    {
        (void)above; (void)row; (void)below; (void)out; (void)width;
        (void)colour_at_1; (void)own_channel; (void)edge_aware;
        return 1;
    }
    #endif
    """
    Py_ssize_t ndd_bayer_rgb_row(const uint8_t *above, const uint8_t *row, const uint8_t *below, uint8_t *out,
                                 Py_ssize_t width, bint colour_at_1, int own_channel, bint edge_aware) nogil


cdef inline int _abs(int v) noexcept nogil:
    return -v if v < 0 else v


cdef inline void _rgb_row(const pixel_t *above, const pixel_t *row, const pixel_t *below, pixel_t *out,
                          Py_ssize_t width, bint colour_at_1, int own, bint edge_aware) noexcept nogil:
    """The inner pixels of one row into RGB ``out`` (the row's first pixel): colour pixels (red on
    a red row, blue on a blue one, at odd ``x`` when ``colour_at_1``) and green ones alternate;
    ``own`` is the channel of the row's colour (0 red, 2 blue)."""
    cdef Py_ssize_t x, start = 1
    cdef int other = 2 - own, v, left, right, up, down, h, vt, d
    cdef bint colour = colour_at_1
    cdef pixel_t *px
    if pixel_t is uint8_t:
        # 16 pixels at a time where the processor has AVX2; the rest below.
        start = ndd_bayer_rgb_row(above, row, below, out, width, colour_at_1, own, edge_aware)
        colour = colour_at_1 if (start - 1) % 2 == 0 else not colour_at_1
    for x in range(start, width - 1):
        v = row[x]
        left = row[x - 1]
        right = row[x + 1]
        up = above[x]
        down = below[x]
        h = left + right
        vt = up + down
        px = out + 3 * x
        if colour:
            d = above[x - 1] + above[x + 1] + below[x - 1] + below[x + 1]
            px[own] = <pixel_t> v
            px[other] = <pixel_t> ((d + 2) >> 2)
            if edge_aware:
                if _abs(up - down) < _abs(left - right):
                    px[1] = <pixel_t> ((vt + 1) >> 1)
                else:
                    px[1] = <pixel_t> ((h + 1) >> 1)
            else:
                px[1] = <pixel_t> ((h + vt + 2) >> 2)
        else:
            # Green: the row's colour to the sides, the other above and below.
            px[own] = <pixel_t> ((h + 1) >> 1)
            px[other] = <pixel_t> ((vt + 1) >> 1)
            px[1] = <pixel_t> v
        colour = not colour


cdef inline void _gray_row(const pixel_t *above, const pixel_t *row, const pixel_t *below, pixel_t *out,
                           Py_ssize_t width, bint colour_at_1, uint32_t own_weight,
                           uint32_t other_weight) noexcept nogil:
    """The inner pixels of one row into gray ``out``: the luma of the bilinear colours, in 16-bit
    fixed point from the unrounded sums."""
    cdef Py_ssize_t x
    cdef uint32_t v, h, vt, d, total
    cdef bint colour = colour_at_1
    for x in range(1, width - 1):
        v = row[x]
        h = <uint32_t> row[x - 1] + row[x + 1]
        vt = <uint32_t> above[x] + below[x]
        if colour:
            d = <uint32_t> above[x - 1] + above[x + 1] + below[x - 1] + below[x + 1]
            total = 4 * v * own_weight + (h + vt) * G_TO_Y + d * other_weight
        else:
            total = 4 * v * G_TO_Y + 2 * h * own_weight + 2 * vt * other_weight
        out[x] = <pixel_t> ((total + (1 << 15)) >> 16)
        colour = not colour


def demosaic(const pixel_t[:, ::1] plane, pixel_t[:, :, ::1] out, int blue_y, int blue_x, int algorithm):
    """Fill the inner pixels (rows and columns 1 to n - 2) of ``out`` (H, W, 3 RGB, or 1 for
    GRAY) from the Bayer ``plane`` (H, W) whose blue sits at ``(blue_y, blue_x)`` of the 2x2
    tile starting at the second row and column."""
    cdef Py_ssize_t height = plane.shape[0], width = plane.shape[1], y
    cdef Py_ssize_t channels = 1 if algorithm == ALGORITHM_GRAY else 3
    if out.shape[0] != height or out.shape[1] != width or out.shape[2] != channels:
        raise ValueError("demosaic: the output does not fit the plane")
    if algorithm not in (ALGORITHM_BILINEAR, ALGORITHM_EDGE_AWARE, ALGORITHM_GRAY):
        raise ValueError(f"demosaic: unknown algorithm {algorithm}")
    if height < 3 or width < 3:
        return
    cdef bint red_row, colour_at_1
    with nogil:
        for y in range(1, height - 1):
            # Red rows hold red at the columns of blue_x's parity; blue rows blue at the others.
            red_row = (y & 1) == (blue_y & 1)
            colour_at_1 = (1 == (blue_x & 1)) if red_row else (1 != (blue_x & 1))
            if algorithm == ALGORITHM_GRAY:
                _gray_row(&plane[y - 1, 0], &plane[y, 0], &plane[y + 1, 0], &out[y, 0, 0], width, colour_at_1,
                          R_TO_Y if red_row else B_TO_Y, B_TO_Y if red_row else R_TO_Y)
            else:
                _rgb_row(&plane[y - 1, 0], &plane[y, 0], &plane[y + 1, 0], &out[y, 0, 0], width, colour_at_1,
                         0 if red_row else 2, algorithm == ALGORITHM_EDGE_AWARE)
