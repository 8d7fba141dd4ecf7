# cython: language_level=3, boundscheck=False, wraparound=False
"""Decoding a window of a JPEG with libjpeg-turbo, without the GIL.

The cropping decoders need a small part of most images: rows above the window are
skipped without their IDCT, rows below it are never decoded, and only the columns of
blocks that hold it are (see ``jpeg_region.h``). The pixels are those of a whole
decode cut to the window. ``round_trip_rgb`` encodes and decodes an image in one call
for jpeg_compression_distortion. Built only where libjpeg's headers are found; the image
decoders decode whole images without it, jpeg_compression_distortion goes through Pillow.
"""

import threading

import numpy as np

cdef extern from "jpeg_region.h" nogil:
    int NDD_JPEG_RGB, NDD_JPEG_BGR, NDD_JPEG_GRAY, NDD_JPEG_CMYK, NDD_JPEG_DONE, NDD_JPEG_SCRATCH
    int ndd_jpeg_decode_window(const unsigned char *data, size_t size, int space, int fast_idct,
                               int top, int left, int height, int width, unsigned char *out,
                               unsigned char *scratch, size_t *scratch_size)
    int ndd_jpeg_encode_rgb(const unsigned char *rgb, int width, int height, int quality,
                            unsigned char **buffer, unsigned long *size)

from libc.stdlib cimport free

_SPACES = {"RGB": NDD_JPEG_RGB, "BGR": NDD_JPEG_BGR, "GRAY": NDD_JPEG_GRAY, "CMYK": NDD_JPEG_CMYK}
_CHANNELS = {"RGB": 3, "BGR": 3, "GRAY": 1, "CMYK": 4}
# Each thread's rows of decoded columns, kept between images.
_SCRATCH = threading.local()


def decode_window(const unsigned char[::1] data, str colorspace, int top, int left, int height, int width,
                  bint fast_idct=False):
    """The window (``top``, ``left``, ``height``, ``width``) of the stored image, as
    (height, width, channels) uint8 in ``colorspace``: RGB, BGR or GRAY of a gray or
    3-component JPEG, or CMYK (the stored samples) of a CMYK or YCCK one. None for
    any other stream, a window that is empty or outside the image, or any error or
    warning libjpeg reports (the caller's other decoder then decides).
    ``fast_idct``: libjpeg-turbo's fast integer IDCT instead of the accurate one."""
    cdef int space = _SPACES[colorspace]
    cdef int result
    cdef size_t scratch_size
    cdef unsigned char[::1] scratch
    if height <= 0 or width <= 0 or data.shape[0] == 0:
        return None
    out = np.empty((height, width, _CHANNELS[colorspace]), np.uint8)
    cdef unsigned char[:, :, ::1] pixels = out
    while True:
        scratch = getattr(_SCRATCH, "rows", None)
        if scratch is None:
            scratch = _SCRATCH.rows = np.empty(1 << 16, np.uint8)
        scratch_size = scratch.shape[0]
        with nogil:
            result = ndd_jpeg_decode_window(
                &data[0], data.shape[0], space, fast_idct, top, left, height, width, &pixels[0, 0, 0],
                &scratch[0], &scratch_size
            )
        if result != NDD_JPEG_SCRATCH:
            return out if result == NDD_JPEG_DONE else None
        _SCRATCH.rows = np.empty(scratch_size, np.uint8)


def round_trip_rgb(const unsigned char[:, :, ::1] rgb, int quality, unsigned char[:, :, ::1] out):
    """``rgb`` (height, width, 3) encoded as a baseline 4:2:0 JPEG of ``quality`` (1-100)
    and decoded again into ``out`` (the same shape), as jpeg_compression_distortion
    does. False, with ``out`` unspecified, when libjpeg fails."""
    cdef int height = rgb.shape[0], width = rgb.shape[1], result
    cdef unsigned char *buffer = NULL
    cdef unsigned long size = 0
    cdef size_t no_scratch = 0
    if rgb.shape[2] != 3 or out.shape[0] != height or out.shape[1] != width or out.shape[2] != 3:
        raise ValueError("round_trip_rgb: expected (height, width, 3) pixels and an output of that shape")
    if not 1 <= quality <= 100:
        raise ValueError(f"round_trip_rgb: the quality must be in [1, 100], got {quality}")
    if height == 0 or width == 0:
        return True
    with nogil:
        result = ndd_jpeg_encode_rgb(&rgb[0, 0, 0], width, height, quality, &buffer, &size)
        if result == NDD_JPEG_DONE:
            # The whole image: rows go straight to the output, no scratch.
            result = ndd_jpeg_decode_window(buffer, size, NDD_JPEG_RGB, False, 0, 0, height, width,
                                            &out[0, 0, 0], NULL, &no_scratch)
        free(buffer)
    return result == NDD_JPEG_DONE
