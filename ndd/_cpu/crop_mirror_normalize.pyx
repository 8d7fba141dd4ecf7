# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The fused pass of crop_mirror_normalize, without the GIL.

The operator hands over the part of the crop window that lies inside the input
and the place it goes to in the output, both as ``(rows, columns, channels)``
views with any strides: the layout change (HWC to CHW, say) is only a choice of
strides, so one loop reads each input element once and writes its normalized
value straight into the output. Mirroring reverses the output columns.
"""

cimport cython
from libc.math cimport roundf

ctypedef fused source_t:
    unsigned char
    short
    unsigned short
    int
    float

ctypedef fused target_t:
    float
    unsigned char
    signed char


cdef inline target_t _convert(float value, target_t *kind) noexcept nogil:
    # Integer outputs round halves away from zero and saturate, as the reference does.
    if target_t is float:
        return value
    elif target_t is cython.uchar:
        if not value > 0:  # NaN too
            return 0
        if value >= 255:
            return 255
        return <unsigned char>roundf(value)
    else:
        if not value > -128:
            return -128 if value < 0 else 0
        if value >= 127:
            return 127
        return <signed char>roundf(value)


def normalize_window(const source_t[:, :, :] source, target_t[:, :, :] target,
                     const float[::1] mean, const float[::1] multiplier, float shift, bint mirror):
    """``target[r, c, k] = convert((source[r, c', k] - mean[k]) * multiplier[k] + shift)``.

    ``c'`` is ``c``, or ``columns - 1 - c`` with ``mirror``. Both views have the
    same shape; ``mean`` and ``multiplier`` have one value per channel. Integer
    targets get the value rounded half away from zero and saturated.
    """
    cdef Py_ssize_t rows = source.shape[0], columns = source.shape[1], channels = source.shape[2]
    if target.shape[0] != rows or target.shape[1] != columns or target.shape[2] != channels:
        raise ValueError("normalize_window: the source and target windows differ in shape")
    if mean.shape[0] != channels or multiplier.shape[0] != channels:
        raise ValueError("normalize_window: 'mean' and 'multiplier' need one value per channel")
    if rows == 0 or columns == 0 or channels == 0:
        return
    # Strides in elements, so the inner loop is plain pointer arithmetic.
    cdef Py_ssize_t s_row = source.strides[0] // sizeof(source_t)
    cdef Py_ssize_t s_col = source.strides[1] // sizeof(source_t)
    cdef Py_ssize_t s_chan = source.strides[2] // sizeof(source_t)
    cdef Py_ssize_t t_row = target.strides[0] // sizeof(target_t)
    cdef Py_ssize_t t_col = target.strides[1] // sizeof(target_t)
    cdef Py_ssize_t t_chan = target.strides[2] // sizeof(target_t)
    cdef const source_t *src_origin = &source[0, 0, 0]
    cdef target_t *dst_origin = &target[0, 0, 0]
    cdef const source_t *src
    cdef target_t *dst
    cdef Py_ssize_t r, k, c, step = t_col
    cdef float m, k_mult, m0, m1, m2, k0, k1, k2
    cdef target_t table[768]
    cdef int v
    with nogil:
        if mirror:
            dst_origin += (columns - 1) * t_col
            step = -t_col
        if source_t is cython.uchar and channels == 3:
            # Bytes have 256 values: normalize them once per channel, then only look up.
            for k in range(3):
                for v in range(256):
                    table[k * 256 + v] = _convert((<float>v - mean[k]) * multiplier[k] + shift, dst_origin)
            for r in range(rows):
                src = src_origin + r * s_row
                dst = dst_origin + r * t_row
                for c in range(columns):
                    dst[c * step] = table[src[c * s_col]]
                    dst[c * step + t_chan] = table[256 + src[c * s_col + s_chan]]
                    dst[c * step + 2 * t_chan] = table[512 + src[c * s_col + 2 * s_chan]]
        elif channels == 3:
            # Three channels (the common case): each pixel is read once, as a unit.
            m0, m1, m2 = mean[0], mean[1], mean[2]
            k0, k1, k2 = multiplier[0], multiplier[1], multiplier[2]
            for r in range(rows):
                src = src_origin + r * s_row
                dst = dst_origin + r * t_row
                for c in range(columns):
                    dst[c * step] = _convert((<float>src[c * s_col] - m0) * k0 + shift, dst)
                    dst[c * step + t_chan] = _convert((<float>src[c * s_col + s_chan] - m1) * k1 + shift, dst)
                    dst[c * step + 2 * t_chan] = _convert(
                        (<float>src[c * s_col + 2 * s_chan] - m2) * k2 + shift, dst)
        else:
            for r in range(rows):
                for k in range(channels):
                    m = mean[k]
                    k_mult = multiplier[k]
                    src = src_origin + r * s_row + k * s_chan
                    dst = dst_origin + r * t_row + k * t_chan
                    if s_col == 1 and step == 1:
                        for c in range(columns):
                            dst[c] = _convert((<float>src[c] - m) * k_mult + shift, dst)
                    else:
                        for c in range(columns):
                            dst[c * step] = _convert((<float>src[c * s_col] - m) * k_mult + shift, dst)
