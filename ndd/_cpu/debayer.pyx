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


cdef inline int _abs(int v) noexcept nogil:
    return -v if v < 0 else v


cdef inline void _rgb_row(const pixel_t *above, const pixel_t *row, const pixel_t *below, pixel_t *out,
                          Py_ssize_t width, bint colour_at_1, int own, bint edge_aware) noexcept nogil:
    """The inner pixels of one row into RGB ``out`` (the row's first pixel): colour pixels (red on
    a red row, blue on a blue one, at odd ``x`` when ``colour_at_1``) and green ones alternate;
    ``own`` is the channel of the row's colour (0 red, 2 blue)."""
    cdef Py_ssize_t x
    cdef int other = 2 - own, v, left, right, up, down, h, vt, d
    cdef bint colour = colour_at_1
    cdef pixel_t *px
    for x in range(1, width - 1):
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
