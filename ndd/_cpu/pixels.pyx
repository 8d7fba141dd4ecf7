# cython: language_level=3, boundscheck=False, wraparound=False
"""Packing of decoded pixels, without the GIL.

Pillow keeps 3-channel images with 4 bytes per pixel; the image decoders let it
decode straight into a numpy buffer of that form and pack the channels they need
here, instead of Pillow's ``tobytes``, which holds the GIL.
"""


def pack_three_channels(const unsigned char[:, :, :] source, unsigned char[:, :, ::1] target):
    """``target[y, x, c] = source[y, x, c]`` for c < 3; ``source`` has 4 channels,
    ``target`` 3 and the same height and width (rows may be views with any stride)."""
    cdef Py_ssize_t rows = target.shape[0], cols = target.shape[1], y, x
    if source.shape[0] != rows or source.shape[1] != cols or source.shape[2] != 4 or target.shape[2] != 3:
        raise ValueError("pack_three_channels: expected (H, W, 4) -> (H, W, 3) of one size")
    with nogil:
        for y in range(rows):
            for x in range(cols):
                target[y, x, 0] = source[y, x, 0]
                target[y, x, 1] = source[y, x, 1]
                target[y, x, 2] = source[y, x, 2]
