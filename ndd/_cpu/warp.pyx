# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Geometric warps without the GIL: each output pixel is mapped to a point of the
source image and the source is sampled there.

Coordinates follow the pixel-centre convention: pixel ``(i, j)`` covers the square
``[j, j + 1) x [i, i + 1)``, so its centre is ``(j + 0.5, i + 0.5)`` (x first). An
output pixel is mapped from its centre; nearest-neighbour sampling takes the source
pixel containing the point, bilinear sampling blends the four pixels whose centres
surround it. Source pixels outside the image are either the fill value (constant
border) or the nearest edge pixel (clamped border).

Images are ``(rows, columns, channels)`` views with any strides; source and
output have the same element type (the operators convert around the kernels).
"""

cimport cython
from libc.math cimport floorf, roundf

ctypedef fused value_t:
    unsigned char
    signed char
    short
    unsigned short
    int
    float
    double

# Points farther than this from the image are outside whatever the border mode,
# which also keeps float-to-int conversions in range.
cdef float _FAR = 1e7


cdef inline value_t _convert(float value, value_t *kind) noexcept nogil:
    # Integer outputs round halves away from zero and saturate.
    if value_t is float or value_t is double:
        return <value_t>value
    elif value_t is cython.uchar:
        if not value > 0:
            return 0
        if value >= 255:
            return 255
        return <unsigned char>(<int>(value + 0.5))
    elif value_t is cython.ushort:
        if not value > 0:
            return 0
        if value >= 65535:
            return 65535
        return <unsigned short>(<int>(value + 0.5))
    elif value_t is cython.schar:
        if not value > -128:
            return -128 if value < 0 else 0
        if value >= 127:
            return 127
        return <signed char>roundf(value)
    elif value_t is short:
        if not value > -32768:
            return -32768 if value < 0 else 0
        if value >= 32767:
            return 32767
        return <short>roundf(value)
    else:
        if not value > -2147483648.0:
            return -2147483648 if value < 0 else 0
        if value >= 2147483647.0:
            return 2147483647
        return <int>roundf(value)


cdef inline Py_ssize_t _clamp(Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    if i < 0:
        return 0
    if i >= n:
        return n - 1
    return i


cdef struct Image:
    # A (rows, columns, channels) view: its first element and strides in elements.
    char *data
    Py_ssize_t rows, columns, channels
    Py_ssize_t row_stride, column_stride, channel_stride


cdef inline void _fill_pixel(value_t *out, Py_ssize_t out_ks, Py_ssize_t channels, value_t value) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(channels):
        out[k * out_ks] = value


cdef inline void _sample(const value_t *src, Image *s, value_t *out, Py_ssize_t out_ks,
                         float sx, float sy, bint linear, bint constant, float fill,
                         value_t fill_converted) noexcept nogil:
    """Write one output pixel (``out``, channel stride ``out_ks``) from the source
    sampled at point ``(sx, sy)``."""
    cdef Py_ssize_t rows = s.rows, columns = s.columns, channels = s.channels
    cdef Py_ssize_t rs = s.row_stride, cs = s.column_stride, ks = s.channel_stride
    cdef Py_ssize_t k, x0, y0, x1, y1
    cdef float fx, fy, px, py, v00, v01, v10, v11, top, bottom
    cdef const value_t *p00
    cdef const value_t *p01
    cdef const value_t *p10
    cdef const value_t *p11
    cdef bint in00, in01, in10, in11
    if not (sx > -_FAR and sx < _FAR and sy > -_FAR and sy < _FAR):
        if constant:
            _fill_pixel(out, out_ks, channels, fill_converted)
        else:
            x0 = 0 if sx < 0 else columns - 1
            y0 = 0 if sy < 0 else rows - 1
            p00 = src + y0 * rs + x0 * cs
            for k in range(channels):
                out[k * out_ks] = p00[k * ks]
        return
    if not linear:
        x0 = <Py_ssize_t>floorf(sx)
        y0 = <Py_ssize_t>floorf(sy)
        if x0 < 0 or y0 < 0 or x0 >= columns or y0 >= rows:
            if constant:
                _fill_pixel(out, out_ks, channels, fill_converted)
                return
            x0 = _clamp(x0, columns)
            y0 = _clamp(y0, rows)
        p00 = src + y0 * rs + x0 * cs
        for k in range(channels):
            out[k * out_ks] = p00[k * ks]
        return
    px = sx - 0.5
    py = sy - 0.5
    fx = floorf(px)
    fy = floorf(py)
    x0 = <Py_ssize_t>fx
    y0 = <Py_ssize_t>fy
    fx = px - fx
    fy = py - fy
    x1 = x0 + 1
    y1 = y0 + 1
    if x0 >= 0 and y0 >= 0 and x1 < columns and y1 < rows:
        p00 = src + y0 * rs + x0 * cs
        p01 = p00 + cs
        p10 = p00 + rs
        p11 = p10 + cs
        for k in range(channels):
            v00 = p00[k * ks]
            v01 = p01[k * ks]
            v10 = p10[k * ks]
            v11 = p11[k * ks]
            top = v00 + (v01 - v00) * fx
            bottom = v10 + (v11 - v10) * fx
            out[k * out_ks] = _convert(top + (bottom - top) * fy, &fill_converted)
        return
    if constant:
        in00 = 0 <= x0 < columns and 0 <= y0 < rows
        in01 = 0 <= x1 < columns and 0 <= y0 < rows
        in10 = 0 <= x0 < columns and 0 <= y1 < rows
        in11 = 0 <= x1 < columns and 0 <= y1 < rows
        p00 = src + y0 * rs + x0 * cs
        p01 = p00 + cs
        p10 = p00 + rs
        p11 = p10 + cs
        for k in range(channels):
            v00 = p00[k * ks] if in00 else fill
            v01 = p01[k * ks] if in01 else fill
            v10 = p10[k * ks] if in10 else fill
            v11 = p11[k * ks] if in11 else fill
            top = v00 + (v01 - v00) * fx
            bottom = v10 + (v11 - v10) * fx
            out[k * out_ks] = _convert(top + (bottom - top) * fy, &fill_converted)
        return
    x0 = _clamp(x0, columns)
    x1 = _clamp(x1, columns)
    y0 = _clamp(y0, rows)
    y1 = _clamp(y1, rows)
    p00 = src + y0 * rs + x0 * cs
    p01 = src + y0 * rs + x1 * cs
    p10 = src + y1 * rs + x0 * cs
    p11 = src + y1 * rs + x1 * cs
    for k in range(channels):
        v00 = p00[k * ks]
        v01 = p01[k * ks]
        v10 = p10[k * ks]
        v11 = p11[k * ks]
        top = v00 + (v01 - v00) * fx
        bottom = v10 + (v11 - v10) * fx
        out[k * out_ks] = _convert(top + (bottom - top) * fy, &fill_converted)


cdef Image _image(const value_t[:, :, :] view):
    cdef Image im
    im.data = <char *>&view[0, 0, 0] if view.shape[0] and view.shape[1] and view.shape[2] else NULL
    im.rows = view.shape[0]
    im.columns = view.shape[1]
    im.channels = view.shape[2]
    im.row_stride = view.strides[0] // sizeof(value_t)
    im.column_stride = view.strides[1] // sizeof(value_t)
    im.channel_stride = view.strides[2] // sizeof(value_t)
    return im


def warp_projective(const value_t[:, :, :] src, value_t[:, :, :] dst, const double[::1] matrix,
                    bint perspective, bint linear, bint constant, double fill):
    """Fill ``dst`` by sampling ``src`` at ``matrix`` applied to each output pixel centre.

    ``matrix`` has 9 values (row-major 3x3, mapping ``(x, y, 1)`` of an output
    pixel centre to the source point, divided by the third coordinate when
    ``perspective``), or 6 for an affine map. ``linear`` selects bilinear
    sampling (else nearest neighbour); ``constant`` reads ``fill`` outside the
    source (else the nearest edge pixel). Source and output have the same
    number of channels.
    """
    if src.shape[2] != dst.shape[2]:
        raise ValueError("warp_projective: the source and output differ in channels")
    if matrix.shape[0] < (9 if perspective else 6):
        raise ValueError("warp_projective: the matrix has too few values")
    if src.shape[0] == 0 or src.shape[1] == 0:
        if dst.shape[0] * dst.shape[1] * dst.shape[2] and not constant:
            raise ValueError("warp_projective: an empty source has no edge pixels to repeat")
        constant = True
    cdef Py_ssize_t oy, ox, rows = dst.shape[0], columns = dst.shape[1]
    cdef float m0 = matrix[0], m1 = matrix[1], m2 = matrix[2]
    cdef float m3 = matrix[3], m4 = matrix[4], m5 = matrix[5]
    cdef float m6 = 0, m7 = 0, m8 = 1
    if perspective:
        m6 = matrix[6]
        m7 = matrix[7]
        m8 = matrix[8]
    cdef float fill_f = fill, x, y, sx, sy, w
    cdef value_t fill_converted = _convert(fill_f, &fill_converted)
    if rows == 0 or columns == 0 or dst.shape[2] == 0:
        return
    cdef Image s = _image(src)
    cdef Image d = _image(dst)
    cdef const value_t *sp = <const value_t *>s.data
    cdef value_t *row
    with nogil:
        for oy in range(rows):
            y = oy + 0.5
            row = <value_t *>d.data + oy * d.row_stride
            for ox in range(columns):
                x = ox + 0.5
                sx = m0 * x + m1 * y + m2
                sy = m3 * x + m4 * y + m5
                if perspective:
                    w = m6 * x + m7 * y + m8
                    if w == 0:
                        sx = _FAR
                    else:
                        sx = sx / w
                        sy = sy / w
                _sample(sp, &s, row + ox * d.column_stride, d.channel_stride, sx, sy, linear, constant,
                        fill_f, fill_converted)


def warp_mapped(const value_t[:, :, :] src, value_t[:, :, :] dst, const float[:, :] map_x,
                const float[:, :] map_y, bint linear, bint constant, double fill):
    """Fill ``dst`` by sampling ``src`` at the points ``(map_x[i, j], map_y[i, j])`` (in the
    pixel-centre convention) for each output pixel ``(i, j)``; the maps have the
    output's rows and columns. ``linear``, ``constant`` and ``fill`` as in
    ``warp_projective``.
    """
    if src.shape[2] != dst.shape[2]:
        raise ValueError("warp_mapped: the source and output differ in channels")
    if map_x.shape[0] != dst.shape[0] or map_x.shape[1] != dst.shape[1] or \
            map_y.shape[0] != dst.shape[0] or map_y.shape[1] != dst.shape[1]:
        raise ValueError("warp_mapped: the maps must have the output's rows and columns")
    if src.shape[0] == 0 or src.shape[1] == 0:
        if dst.shape[0] * dst.shape[1] * dst.shape[2] and not constant:
            raise ValueError("warp_mapped: an empty source has no edge pixels to repeat")
        constant = True
    cdef Py_ssize_t oy, ox, rows = dst.shape[0], columns = dst.shape[1]
    cdef float fill_f = fill
    cdef value_t fill_converted = _convert(fill_f, &fill_converted)
    if rows == 0 or columns == 0 or dst.shape[2] == 0:
        return
    cdef Image s = _image(src)
    cdef Image d = _image(dst)
    cdef const value_t *sp = <const value_t *>s.data
    cdef value_t *row
    with nogil:
        for oy in range(rows):
            row = <value_t *>d.data + oy * d.row_stride
            for ox in range(columns):
                _sample(sp, &s, row + ox * d.column_stride, d.channel_stride, map_x[oy, ox], map_y[oy, ox],
                        linear, constant, fill_f, fill_converted)
