# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Per-pixel colour kernels without the GIL: a 3x3 colour matrix plus offset
(hue, saturation, hsv, color_twist) and histogram equalization.

Both work on contiguous arrays so that one pass reads each pixel once; the
operators (``ndd/_ops/color.py``) keep numpy paths for the other layouts and types.
"""

from libc.math cimport floorf, nearbyintf
from libc.string cimport memset

ctypedef fused pixel_t:
    unsigned char
    float


cdef inline unsigned char _to_u8(float value) noexcept nogil:
    # Round halves away from zero and saturate (values below zero give 0).
    if not value > 0:  # NaN too
        return 0
    if value >= 254.5:
        return 255
    return <unsigned char>floorf(value + 0.5)


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
