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


cdef extern from *:
    """
    /* The grey of color_space_conversion: round(w0 r + w1 g + w2 b + offset) in float32,
     * summed left to right, halves up and saturated. v + 0.5 is clamped before it is
     * truncated, which is floor(v + 0.5) wherever that lies in [0, 255] (and 0 for NaN),
     * so the AVX2 path needs no floor instruction and gives the scalar path's bits. AVX2
     * only, not FMA: a fused multiply-add would round differently. */
    #include <stddef.h>
    #include <stdint.h>

    static inline uint8_t ndd_gray_round(float v)
    {
        v += 0.5f;
        v = v > 0.0f ? v : 0.0f;
        v = v < 255.0f ? v : 255.0f;
        return (uint8_t)(int)v;
    }

    static void ndd_gray_base(const uint8_t *src, uint8_t *dst, ptrdiff_t n,
                              float w0, float w1, float w2, float offset)
    {
        for (ptrdiff_t p = 0; p < n; p++)
            dst[p] = ndd_gray_round(w0 * src[3 * p] + w1 * src[3 * p + 1] + w2 * src[3 * p + 2] + offset);
    }

    #if defined(__GNUC__) && defined(__x86_64__)
    #include <immintrin.h>

    static int ndd_gray_use_avx2 = -1;

    __attribute__((target("avx2"))) static void ndd_gray_avx2(
        const uint8_t *src, uint8_t *dst, ptrdiff_t n, float w0, float w1, float w2, float offset)
    {
        /* 8 pixels a step, 4 in each 128-bit lane (12 of the 16 bytes loaded there);
         * each shuffle puts one channel's bytes in the low byte of 32-bit lanes. */
        const __m256i red = _mm256_setr_epi8(0, -1, -1, -1, 3, -1, -1, -1, 6, -1, -1, -1, 9, -1, -1, -1,
                                             0, -1, -1, -1, 3, -1, -1, -1, 6, -1, -1, -1, 9, -1, -1, -1);
        const __m256i green = _mm256_setr_epi8(1, -1, -1, -1, 4, -1, -1, -1, 7, -1, -1, -1, 10, -1, -1, -1,
                                               1, -1, -1, -1, 4, -1, -1, -1, 7, -1, -1, -1, 10, -1, -1, -1);
        const __m256i blue = _mm256_setr_epi8(2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1,
                                              2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1);
        const __m256 m0 = _mm256_set1_ps(w0), m1 = _mm256_set1_ps(w1), m2 = _mm256_set1_ps(w2);
        const __m256 add = _mm256_set1_ps(offset), half = _mm256_set1_ps(0.5f);
        const __m256 low = _mm256_setzero_ps(), high = _mm256_set1_ps(255.0f);
        ptrdiff_t p = 0;
        /* The second load reads 16 bytes from pixel p + 4: stop before it passes the end. */
        for (; 3 * p + 28 <= 3 * n; p += 8) {
            __m256i bytes = _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(src + 3 * p))),
                _mm_loadu_si128((const __m128i *)(src + 3 * p + 12)), 1);
            __m256 r = _mm256_cvtepi32_ps(_mm256_shuffle_epi8(bytes, red));
            __m256 g = _mm256_cvtepi32_ps(_mm256_shuffle_epi8(bytes, green));
            __m256 b = _mm256_cvtepi32_ps(_mm256_shuffle_epi8(bytes, blue));
            __m256 v = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(m0, r), _mm256_mul_ps(m1, g)),
                                     _mm256_mul_ps(m2, b));
            v = _mm256_add_ps(_mm256_add_ps(v, add), half);
            /* max returns its second operand for NaN: 0, as the scalar path. */
            v = _mm256_min_ps(_mm256_max_ps(v, low), high);
            __m256i ints = _mm256_cvttps_epi32(v);
            __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(ints), _mm256_extracti128_si256(ints, 1));
            _mm_storel_epi64((__m128i *)(dst + p), _mm_packus_epi16(words, words));
        }
        ndd_gray_base(src + 3 * p, dst + p, n - p, w0, w1, w2, offset);
    }

    static void ndd_gray(const uint8_t *src, uint8_t *dst, ptrdiff_t n,
                         float w0, float w1, float w2, float offset)
    {
        /* Several threads may get here first; they all store the same answer. */
        if (ndd_gray_use_avx2 < 0) {
            __builtin_cpu_init();
            ndd_gray_use_avx2 = __builtin_cpu_supports("avx2");
        }
        if (ndd_gray_use_avx2)
            ndd_gray_avx2(src, dst, n, w0, w1, w2, offset);
        else
            ndd_gray_base(src, dst, n, w0, w1, w2, offset);
    }

    #else

    static void ndd_gray(const uint8_t *src, uint8_t *dst, ptrdiff_t n,
                         float w0, float w1, float w2, float offset)
    {
        ndd_gray_base(src, dst, n, w0, w1, w2, offset);
    }

    #endif
    """
    void ndd_gray(
        const unsigned char *src, unsigned char *dst, Py_ssize_t n, float w0, float w1, float w2, float offset
    ) nogil


def weighted_channels(
    const unsigned char[:, ::1] source, unsigned char[:, ::1] target, const float[::1] weights, float offset
):
    """``target[p, 0] = round(sum_j weights[j] * source[p, j] + offset)`` (halves up, saturated) for
    uint8 pixels of 3 channels: the grey of color_space_conversion."""
    cdef Py_ssize_t n = source.shape[0]
    if source.shape[1] != 3 or target.shape[0] != n or target.shape[1] != 1:
        raise ValueError(
            f"weighted_channels: expected (n, 3) and (n, 1) arrays, got ({n}, {source.shape[1]}) and "
            f"({target.shape[0]}, {target.shape[1]})"
        )
    if n == 0:
        return
    with nogil:
        ndd_gray(&source[0, 0], &target[0, 0], n, weights[0], weights[1], weights[2], offset)


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
