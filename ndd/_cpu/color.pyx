# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Per-pixel colour kernels without the GIL: a 3x3 colour matrix plus offset
(hue, saturation, hsv, color_twist) and histogram equalization.

Both work on contiguous arrays so that one pass reads each pixel once; the
operators (``ndd/_ops/color.py``) keep numpy paths for the other layouts and types.
"""

from libc.math cimport floorf, nearbyintf
from libc.string cimport memset

# float constants: a bare 1.0 or 0.5 is a double in C and would widen the arithmetic.
cdef float HALF = 0.5
cdef float ONE = 1.0

ctypedef fused pixel_t:
    unsigned char
    float


cdef inline unsigned char _to_u8(float value) noexcept nogil:
    # Round halves away from zero and saturate (values below zero give 0).
    if not value > 0:  # NaN too
        return 0
    if value >= 254.5:
        return 255
    return <unsigned char>floorf(value + HALF)


def color_matrix(const pixel_t[:, ::1] source, pixel_t[:, ::1] target, const float[::1] coeffs):
    """``target[p, i] = sum_j coeffs[3 i + j] * source[p, j] + coeffs[9 + i]`` for every pixel ``p``
    of 3 channels (uint8 in and out, rounded and saturated, or float32 in and out)."""
    cdef Py_ssize_t p, n = source.shape[0]
    cdef float r, g, b
    cdef float m0 = coeffs[0], m1 = coeffs[1], m2 = coeffs[2]
    cdef float m3 = coeffs[3], m4 = coeffs[4], m5 = coeffs[5]
    cdef float m6 = coeffs[6], m7 = coeffs[7], m8 = coeffs[8]
    cdef float o0 = coeffs[9], o1 = coeffs[10], o2 = coeffs[11]
    with nogil:
        for p in range(n):
            r = source[p, 0]
            g = source[p, 1]
            b = source[p, 2]
            if pixel_t is float:
                target[p, 0] = m0 * r + m1 * g + m2 * b + o0
                target[p, 1] = m3 * r + m4 * g + m5 * b + o1
                target[p, 2] = m6 * r + m7 * g + m8 * b + o2
            else:
                target[p, 0] = _to_u8(m0 * r + m1 * g + m2 * b + o0)
                target[p, 1] = _to_u8(m3 * r + m4 * g + m5 * b + o1)
                target[p, 2] = _to_u8(m6 * r + m7 * g + m8 * b + o2)


def equalize_frames(const unsigned char[:, :, ::1] source, unsigned char[:, :, ::1] target):
    """Histogram-equalize each channel of each frame of ``(frames, pixels, channels)`` uint8 data
    into ``target``, as OpenCV's equalizeHist (float32 scale, halves to even)."""
    cdef Py_ssize_t frames = source.shape[0], pixels = source.shape[1], channels = source.shape[2]
    cdef Py_ssize_t f, p, c, v
    cdef long long hist[256]
    cdef unsigned char lut[256]
    cdef long long total, first_count, running
    cdef float scale, level
    with nogil:
        for f in range(frames):
            for c in range(channels):
                memset(hist, 0, sizeof(hist))
                for p in range(pixels):
                    hist[source[f, p, c]] += 1
                v = 0
                while v < 255 and hist[v] == 0:
                    v += 1
                first_count = hist[v]
                total = pixels
                if total == first_count:
                    # One value only: the plane stays as it is.
                    for v in range(256):
                        lut[v] = <unsigned char>v
                else:
                    scale = 255.0 / <float>(total - first_count)
                    running = 0
                    for v in range(256):
                        running += hist[v]
                        if running <= first_count:
                            lut[v] = 0
                        else:
                            level = nearbyintf(<float>(running - first_count) * scale)
                            lut[v] = <unsigned char>(level if level < 255 else 255)
                for p in range(pixels):
                    target[f, p, c] = lut[source[f, p, c]]


def weighted_channels(
    const unsigned char[:, ::1] source, unsigned char[:, ::1] target, const float[::1] weights, float offset
):
    """``target[p, 0] = round(sum_j weights[j] * source[p, j] + offset)`` (halves up, saturated) for
    uint8 pixels of 3 channels: the grey of color_space_conversion."""
    cdef Py_ssize_t p, n = source.shape[0]
    cdef float w0 = weights[0], w1 = weights[1], w2 = weights[2]
    with nogil:
        for p in range(n):
            target[p, 0] = _to_u8(w0 * source[p, 0] + w1 * source[p, 1] + w2 * source[p, 2] + offset)


def tile_histograms(const unsigned char[:, ::1] image, long long[:, :, ::1] hist):
    """Add the 256-bin histogram of every tile of ``image`` (whose height and width are whole
    multiples of the tile size) to ``hist``, ``(tiles_y, tiles_x, 256)``."""
    cdef Py_ssize_t tiles_y = hist.shape[0], tiles_x = hist.shape[1]
    cdef Py_ssize_t tile_h = image.shape[0] // tiles_y, tile_w = image.shape[1] // tiles_x
    cdef Py_ssize_t y, x
    with nogil:
        for y in range(tiles_y * tile_h):
            for x in range(tiles_x * tile_w):
                hist[y // tile_h, x // tile_w, image[y, x]] += 1


def blend_tile_tables(
    const unsigned char[:, ::1] image,
    unsigned char[:, ::1] target,
    const float[:, :, ::1] tables,
    const long long[::1] rows_above,
    const long long[::1] rows_below,
    const float[::1] row_weights,
    const long long[::1] cols_left,
    const long long[::1] cols_right,
    const float[::1] col_weights,
):
    """CLAHE's last step: each pixel blends the tables of its four nearest tile centres,
    ``(top-left * (1 - wx) + top-right * wx) * (1 - wy) + (...) * wy`` in float32, rounded
    to the nearest integer, halves to even."""
    cdef Py_ssize_t y, x, height = image.shape[0], width = image.shape[1]
    cdef Py_ssize_t t, b, left, right
    cdef unsigned char v
    cdef float wx, wy, top, bottom, value
    with nogil:
        for y in range(height):
            t = rows_above[y]
            b = rows_below[y]
            wy = row_weights[y]
            for x in range(width):
                left = cols_left[x]
                right = cols_right[x]
                wx = col_weights[x]
                v = image[y, x]
                top = tables[t, left, v] * (ONE - wx) + tables[t, right, v] * wx
                bottom = tables[b, left, v] * (ONE - wx) + tables[b, right, v] * wx
                value = nearbyintf(top * (ONE - wy) + bottom * wy)
                target[y, x] = <unsigned char>(0 if value < 0 else (255 if value > 255 else value))


def rgb_to_lab8(
    const unsigned char[:, ::1] source,
    unsigned char[:, ::1] target,
    const int[::1] linear_table,
    const int[::1] xyz_coeffs,
    const int[::1] f_table,
):
    """8-bit RGB to 8-bit Lab in OpenCV's fixed point: ``linear_table`` (256) gives linear
    values in 1/8 units, ``xyz_coeffs`` (9) XYZ / white with 12 fractional bits, ``f_table``
    f(t) with 15 (indexed by XYZ)."""
    cdef Py_ssize_t p, n = source.shape[0]
    cdef long long r, g, b, fx, fy, fz, v
    cdef long long c[9]
    cdef int k
    for k in range(9):
        c[k] = xyz_coeffs[k]
    with nogil:
        for p in range(n):
            r = linear_table[source[p, 0]]
            g = linear_table[source[p, 1]]
            b = linear_table[source[p, 2]]
            fx = f_table[(r * c[0] + g * c[1] + b * c[2] + (1 << 11)) >> 12]
            fy = f_table[(r * c[3] + g * c[4] + b * c[5] + (1 << 11)) >> 12]
            fz = f_table[(r * c[6] + g * c[7] + b * c[8] + (1 << 11)) >> 12]
            v = (296 * fy - 1336935 + (1 << 14)) >> 15
            target[p, 0] = <unsigned char>(0 if v < 0 else (255 if v > 255 else v))
            v = (500 * (fx - fy) + (128 << 15) + (1 << 14)) >> 15
            target[p, 1] = <unsigned char>(0 if v < 0 else (255 if v > 255 else v))
            v = (200 * (fy - fz) + (128 << 15) + (1 << 14)) >> 15
            target[p, 2] = <unsigned char>(0 if v < 0 else (255 if v > 255 else v))


def lab8_to_rgb(
    const unsigned char[:, ::1] source,
    unsigned char[:, ::1] target,
    const int[:, ::1] lightness_table,
    const int[::1] xz_table,
    int xz_offset,
    const int[::1] xyz_to_rgb,
    const unsigned char[::1] srgb_table,
):
    """8-bit Lab (L * 255 / 100, a + 128, b + 128) back to 8-bit sRGB in OpenCV's fixed point,
    with 14 fractional bits: ``lightness_table`` (256, 2) gives Y and f(Y) of each L,
    ``xz_table[f + xz_offset]`` inverts Lab's f (X / white from f(X), Z / white from f(Z)),
    ``xyz_to_rgb`` (9) maps XYZ / white to linear RGB with 12 fractional bits and
    ``srgb_table`` (4096) encodes linear values in 1/4096 units."""
    cdef Py_ssize_t p, n = source.shape[0]
    cdef int y, fy, x, z, a_term, b_term, v, k
    cdef int m[9]
    for k in range(9):
        m[k] = xyz_to_rgb[k]
    with nogil:
        for p in range(n):
            y = lightness_table[source[p, 0], 0]
            fy = lightness_table[source[p, 0], 1]
            # a * 2**14 / 500 and b * 2**14 / 200 as OpenCV approximates them
            # (the rounding of the last bit decides some results).
            a_term = ((5 * source[p, 1] * 53687 + (1 << 7)) >> 13) - 4194
            b_term = ((source[p, 2] * 41943 + (1 << 4)) >> 9) - 10484
            x = xz_table[fy + a_term + xz_offset]
            z = xz_table[fy - b_term + xz_offset]
            for k in range(3):
                v = (m[3 * k] * x + m[3 * k + 1] * y + m[3 * k + 2] * z + (1 << 13)) >> 14
                target[p, k] = srgb_table[0 if v < 0 else (4095 if v > 4095 else v)]


ctypedef fused table_t:
    unsigned char
    short
    int
    float


def lookup_u8(const unsigned char[::1] source, table_t[::1] target, const table_t[::1] table):
    """``target[i] = table[source[i]]`` for uint8 ``source`` and a 256-entry ``table``."""
    cdef Py_ssize_t i, n = source.shape[0]
    with nogil:
        for i in range(n):
            target[i] = table[source[i]]
