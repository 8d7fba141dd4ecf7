# cython: language_level=3, boundscheck=False, wraparound=False
"""Packing of decoded pixels and PNG row unfiltering, without the GIL.

Pillow keeps 3-channel images with 4 bytes per pixel; the image decoders let it
decode straight into a numpy buffer of that form and copy the channels they need
here (``copy_three_channels``), instead of Pillow's ``tobytes``, which holds the
GIL. Pillow reads 16-bit colour PNGs at 8 bits; the decoders unfilter their rows
here to keep all 16.
"""


cdef inline unsigned char _paeth(int a, int b, int c) noexcept nogil:
    cdef int p = a + b - c
    cdef int pa = p - a if p > a else a - p
    cdef int pb = p - b if p > b else b - p
    cdef int pc = p - c if p > c else c - p
    if pa <= pb and pa <= pc:
        return <unsigned char>a
    if pb <= pc:
        return <unsigned char>b
    return <unsigned char>c


def unfilter_png(const unsigned char[::1] filtered, unsigned char[:, ::1] rows, int pixel_bytes):
    """Undo the PNG row filters of a non-interlaced image: ``filtered`` holds, per row,
    the filter type byte and the filtered bytes; ``rows`` (height, bytes per row)
    receives the pixel bytes; ``pixel_bytes`` is the bytes of one pixel."""
    cdef Py_ssize_t height = rows.shape[0], stride = rows.shape[1], y, x, src
    cdef int kind, left, up, up_left, bad = -1
    if filtered.shape[0] < height * (stride + 1):
        raise ValueError("the PNG image data is cut short")
    with nogil:
        for y in range(height):
            src = y * (stride + 1)
            kind = filtered[src]
            src += 1
            if kind > 4:
                bad = kind
                break
            for x in range(stride):
                left = rows[y, x - pixel_bytes] if x >= pixel_bytes else 0
                up = rows[y - 1, x] if y > 0 else 0
                up_left = rows[y - 1, x - pixel_bytes] if y > 0 and x >= pixel_bytes else 0
                if kind == 0:
                    rows[y, x] = filtered[src + x]
                elif kind == 1:
                    rows[y, x] = <unsigned char>(filtered[src + x] + left)
                elif kind == 2:
                    rows[y, x] = <unsigned char>(filtered[src + x] + up)
                elif kind == 3:
                    rows[y, x] = <unsigned char>(filtered[src + x] + ((left + up) >> 1))
                else:
                    rows[y, x] = <unsigned char>(filtered[src + x] + _paeth(left, up, up_left))
    if bad >= 0:
        raise ValueError(f"unknown PNG filter type {bad}")


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
