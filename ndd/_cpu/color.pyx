# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Per-pixel colour kernels without the GIL: a 3x3 colour matrix plus offset
(hue, saturation, hsv, color_twist) and histogram equalization.

Both work on contiguous arrays so that one pass reads each pixel once; the
operators (``ndd/_ops/color.py``) keep numpy paths for the other layouts and types.
"""

from libc.math cimport floorf, nearbyintf, powf
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


cdef inline float _lab_inverse_f(float f) noexcept nogil:
    if f > <float>0.206893:
        return f * f * f
    return (f - <float>(16.0 / 116.0)) / <float>7.787


cdef inline unsigned char _encode_srgb(float linear) noexcept nogil:
    cdef float c
    if linear < 0:
        linear = 0
    elif linear > 1:
        linear = 1
    if linear <= <float>0.0031308:
        c = <float>12.92 * linear
    else:
        c = <float>1.055 * powf(linear, <float>(1.0 / 2.4)) - <float>0.055
    c = nearbyintf(c * <float>255.0)
    return <unsigned char>(0 if c < 0 else (255 if c > 255 else c))


# Encoding linear values without a powf per channel: SRGB_STEPS[k] is the smallest
# float32 that _encode_srgb takes to code k (bisection over the float32 values in
# [0, 1]; the encoding is monotonic), and SRGB_START[i] the code of i / 4096, from
# which a few comparisons reach the exact code.
cdef float SRGB_STEPS[257]
cdef unsigned char SRGB_START[4097]


cdef void _find_srgb_steps() noexcept nogil:
    cdef unsigned int lo, hi, mid
    cdef int k, i
    for k in range(1, 256):
        lo = 0
        hi = 0x3F800000  # the bits of 1.0f
        while lo < hi:
            mid = lo + (hi - lo) // 2
            if _encode_srgb((<float *>&mid)[0]) >= k:
                hi = mid
            else:
                lo = mid + 1
        SRGB_STEPS[k] = (<float *>&lo)[0]
    SRGB_STEPS[0] = 0
    SRGB_STEPS[256] = 2  # above any clamped value
    for i in range(4097):
        SRGB_START[i] = _encode_srgb(<float>i / <float>4096)


_find_srgb_steps()


cdef inline unsigned char _encode_srgb_fast(float linear) noexcept nogil:
    cdef int code
    if not linear > 0:  # NaN too
        return 0
    if linear >= 1:
        return 255
    code = SRGB_START[<int>(linear * <float>4096)]
    while SRGB_STEPS[code + 1] <= linear:
        code += 1
    return <unsigned char>code


def lab8_to_rgb(
    const unsigned char[:, ::1] source, unsigned char[:, ::1] target, const float[::1] xyz_to_rgb
):
    """8-bit Lab (L * 255 / 100, a + 128, b + 128) back to 8-bit sRGB in float32; ``xyz_to_rgb``
    (9) maps XYZ / white to linear RGB."""
    cdef Py_ssize_t p, n = source.shape[0]
    cdef float lightness, a, b, y, fy, x, z, lr, lg, lb
    cdef float m[9]
    cdef int k
    for k in range(9):
        m[k] = xyz_to_rgb[k]
    with nogil:
        for p in range(n):
            lightness = source[p, 0] * <float>(100.0 / 255.0)
            a = source[p, 1] - <float>128.0
            b = source[p, 2] - <float>128.0
            if lightness <= 8:
                y = lightness / <float>903.3
                fy = <float>7.787 * y + <float>(16.0 / 116.0)
            else:
                fy = (lightness + <float>16.0) / <float>116.0
                y = fy * fy * fy
            x = _lab_inverse_f(a / <float>500.0 + fy)
            z = _lab_inverse_f(fy - b / <float>200.0)
            lr = m[0] * x + m[1] * y + m[2] * z
            lg = m[3] * x + m[4] * y + m[5] * z
            lb = m[6] * x + m[7] * y + m[8] * z
            target[p, 0] = _encode_srgb_fast(lr)
            target[p, 1] = _encode_srgb_fast(lg)
            target[p, 2] = _encode_srgb_fast(lb)


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
