"""Decoding one encoded image with Pillow, as the reference's CPU decoders do.

What the reference does, and this module matches (see tests/ops/test_decoders.py
and the goldens of tests/golden/make_decoder_goldens.py):

- Pixels are Pillow's (its libjpeg-turbo, libpng, libwebp, libtiff and OpenJPEG),
  bit-exact for every format; 16-bit colour PNGs, which Pillow reads at 8 bits, are
  inflated here (ISA-L's inflate, or zlib's, then the row filters undone in
  ``ndd/_cpu/pixels.pyx``), and so are 8-bit ones, in less time than Pillow.
  Uncompressed TIFFs are copied from their strips, and Deflate-compressed ones
  inflated by ISA-L; the rows of uncompressed BGR and gray BMPs are copied from the
  file. Where OpenCV is installed (the ``opencv`` extra), still WebPs are decoded by
  its libwebp, whose decoding is specified to the bit, in less time than Pillow's;
  simple ones (a VP8 or VP8L chunk alone) are not opened by Pillow at all. Plain JP2
  files (8-bit gray or RGB, 16-bit gray) are decoded by its OpenJPEG, the library
  Pillow uses, in less time. ``NDD_DECODE_WITH_OPENCV=0`` turns that off.
- Colour conversions work on 8- or 16-bit values: gray sources are repeated into 3
  channels, alpha is dropped, BGR reverses RGB. GRAY from colour is
  ``0.299 R + 0.587 G + 0.114 B`` rounded, except for PNG where the reference uses
  libpng's truncating fixed-point formula. YCbCr is ITU-R BT.601 studio range
  (Y in [16, 235]), rounded.
- ``dtype`` scales last, in single precision: the value times the ratio of the
  types' maxima, rounded (uint16 = 8-bit value * 257, uint8 from 16 bits = v / 257,
  int16 = v * 32767 / 255); float32 is value / (2^bits - 1). YCbCr of a type other than
  uint8 is computed in floats (offsets 1/16 and 1/2 instead of 16/255 and 128/255).
- JPEGs (baseline or progressive, gray, 3-component or CMYK/YCCK) are decoded by
  libjpeg-turbo without Pillow, straight into RGB, BGR, gray or the stored ink, with
  the accurate integer IDCT and fancy upsampling: the same libjpeg-turbo code paths
  as Pillow, so the same pixels, in less time. Whole gray and colour images are
  decoded by ``simplejpeg`` (TurboJPEG, without the GIL). A crop window is decoded
  alone (``ndd/_cpu/jpeg_region.pyx``): the rows above it are skipped without their
  IDCT, those below it are not decoded, nor are the columns of blocks beside it, as
  the reference's cropping decoders do; so are the whole images simplejpeg refuses
  (CMYK/YCCK, chroma sampling TurboJPEG has no name for). simplejpeg also reads the
  header of JPEGs without an APP1 segment (no EXIF orientation); Pillow opens the
  others (format, mode, EXIF orientation, and its error messages for files that
  cannot be read); a stream libjpeg warns about (damaged) is decoded by Pillow.
- Where ``jpeg_region`` was not built (no libjpeg-turbo headers), a crop window is
  cut from the whole image simplejpeg decodes (in a reused buffer), unless it ends
  in the upper 85% of a colour image: Pillow decodes that one (see below).
- Pillow decodes JPEG colour images into a numpy buffer and the pixels are packed
  from its 4-byte form without the GIL (Pillow's own ``tobytes`` holds it), so that
  the samples of a batch decode in parallel; a crop window stops the decoding at
  its bottom row. Other Pillow versions fall back to ``numpy.asarray``.
- The EXIF orientation (1-8) is applied after decoding, and crop windows are given
  in the oriented image; the window is cut from the decoded image before any colour
  conversion, so only its pixels are converted and copied.
"""

import functools
import io
import os
import re
import sys
import threading
import zlib

import numpy as np
import simplejpeg
from PIL import Image, UnidentifiedImageError

try:  # ISA-L's inflate (python-isal, a dependency): twice zlib's speed, the same API
    from isal import isal_zlib as _inflate

    _INFLATE_ERRORS = (_inflate.error, zlib.error)
except ImportError:  # a platform it has no wheel for
    _inflate, _INFLATE_ERRORS = zlib, (zlib.error,)

from .._cpu.color import color_matrix
from .._cpu.pixels import copy_three_channels, unfilter_png
from .._errors import SampleDecodeError
from .._memory import exceeds_half_of_memory, physical_memory_bytes
from ..types import DALIImageType

try:
    from .._cpu.jpeg_region import decode_window
except ImportError:  # built without libjpeg-turbo's headers: windows are cut from whole images
    decode_window = None

__all__ = [
    "ImageDecodeError",
    "open_image",
    "orientation",
    "oriented_size",
    "channel_count",
    "decode",
    "to_ycbcr",
]

_ORIENTATION_TAG = 0x0112
# Orientations that swap the height and the width of the stored image.
_TRANSPOSING = (5, 6, 7, 8)

# BT.601 studio-range RGB -> YCbCr, rows Y, Cb, Cr: the weights Kr = 0.299 and
# Kb = 0.114 scaled to Y's 219 and the chroma's 224 levels of 255, rounded to single
# precision (the reference's; 6-digit constants round 1 colour in 10,000 otherwise).
BT601_KR, BT601_KB = 0.299, 0.114
BT601_KG = 1 - BT601_KR - BT601_KB
YCBCR_MATRIX = (
    np.array(
        [
            [BT601_KR, BT601_KG, BT601_KB],
            [-BT601_KR / (2 * (1 - BT601_KB)), -BT601_KG / (2 * (1 - BT601_KB)), 0.5],
            [0.5, -BT601_KG / (2 * (1 - BT601_KR)), -BT601_KB / (2 * (1 - BT601_KR))],
        ]
    )
    * np.array([[219 / 255], [224 / 255], [224 / 255]])
).astype(np.float32)
# The offsets as fractions of the range: 16 and 128 of 256 levels.
_YCBCR_OFFSET = np.array([1 / 16, 1 / 2, 1 / 2], dtype=np.float32)
_GRAY_WEIGHTS = np.array([0.299, 0.587, 0.114], dtype=np.float32)
# libpng's rgb_to_gray weights (x / 32768) for 0.299 and 0.587, blue taking the rest.
_PNG_GRAY_WEIGHTS = (9797, 19234, 3737)
# OpenCV's (x / 16384), which the reference's BMP and PNM gray comes from.
_OPENCV_GRAY_WEIGHTS = (4899, 9617, 1868)
# BT.601's rounded to x / 32768, of the reference's own conversion (WebP, JPEG 2000).
_BT601_GRAY_WEIGHTS = (9798, 19235, 3735)
# The gray rule of each format (see _to_gray). CMYK JPEGs take "truncated"; CMYK TIFFs
# and TIFFs turned by their orientation OpenCV's (the reference reads those with OpenCV).
_GRAY_RULES = {
    "PNG": "libpng",
    "BMP": "opencv",
    "PPM": "opencv",
    "TIFF": "libtiff",
    "WEBP": "bt601",
    "JPEG2000": "bt601",
}


class ImageDecodeError(SampleDecodeError):
    """An encoded image could not be decoded.

    In batch mode, the exception raised from the run phase carries the samples
    that were decoded: ``decoded`` (a list with one array per sample, None for the
    samples that failed) and ``failed`` (the indices of the failed samples).
    """


class _Header:
    """An image known from its header alone: what the decoders need of a Pillow
    image (format, mode, size), without EXIF data."""

    format = None
    info = {}

    def __init__(self, size, mode):
        self.size = size
        self.mode = mode

    def getexif(self):
        return {}


class _JpegHeader(_Header):
    """A JPEG that has no APP1 segment, read by simplejpeg (a tenth of the cost of
    Pillow's header parsing). Without APP1 there is no EXIF block or XMP packet, so
    Pillow would find no orientation either. ``decode`` opens the file with Pillow if
    simplejpeg cannot decode it."""

    format = "JPEG"


# simplejpeg's colour spaces -> Pillow's mode; the others (CMYK, YCCK) are Pillow's.
_JPEG_MODES = {"Gray": "L", "YCbCr": "RGB", "RGB": "RGB"}


def _may_have_app1(raw):
    """Whether a marker segment before the first scan of the JPEG ``raw`` is APP1, or
    the segments cannot be walked simply (then Pillow reads the header)."""
    view = memoryview(raw)
    pos = 2
    while pos + 4 <= len(view):
        if view[pos] != 0xFF:
            return True
        marker = view[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
        elif marker == 0xE1:
            return True
        elif marker == 0xDA:
            return False
        elif marker == 0x01 or 0xD0 <= marker <= 0xD7:  # markers without a length
            pos += 2
        else:
            pos += 2 + (view[pos + 2] << 8 | view[pos + 3])
    return True


def _jpeg_header(raw):
    if raw.size < 4 or raw[0] != 0xFF or raw[1] != 0xD8 or _may_have_app1(raw):
        return None
    try:
        height, width, colorspace, _ = simplejpeg.decode_jpeg_header(raw)
    except Exception:  # Pillow reads it, or says what is wrong
        return None
    mode = _JPEG_MODES.get(colorspace)
    return None if mode is None else _JpegHeader((width, height), mode)


class _WebpHeader(_Header):
    """A WebP file known from its first chunk: its size, and whether it has alpha. It
    stands for a file Pillow cannot open, and, where OpenCV decodes WebP, for a file of
    the simple format (one VP8 or VP8L chunk: no animation, EXIF or ICC profile)."""

    format = "WEBP"


def _webp_header(raw):
    """The ``_WebpHeader`` of a WebP file from its first chunk (VP8, VP8L or VP8X), or
    None when ``raw`` (uint8) is not one or is too short to tell."""
    head = raw[:30].tobytes()
    if len(head) < 30 or head[:4] != b"RIFF" or head[8:12] != b"WEBP":
        return None
    kind = head[12:16]
    if kind == b"VP8 " and head[23:26] == b"\x9d\x01\x2a":
        width = int.from_bytes(head[26:28], "little") & 0x3FFF
        height = int.from_bytes(head[28:30], "little") & 0x3FFF
        alpha = False
    elif kind == b"VP8L" and head[20] == 0x2F:
        bits = int.from_bytes(head[21:25], "little")
        width, height = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        alpha = bool(bits >> 28 & 1)
    elif kind == b"VP8X":
        alpha = bool(head[20] & 0x10)
        width = int.from_bytes(head[24:27], "little") + 1
        height = int.from_bytes(head[27:30], "little") + 1
    else:
        return None
    return _WebpHeader((width, height), "RGBA" if alpha else "RGB")


_PILLOW_LIMIT_LOCK = threading.Lock()


def _open_beyond_pillows_limit(raw):
    """``Image.open`` of an image larger than Pillow's decompression-bomb limit (about
    179 million pixels), which the reference does not have: the limit is lifted for
    the moment of the call."""
    with _PILLOW_LIMIT_LOCK:
        limit = Image.MAX_IMAGE_PIXELS
        Image.MAX_IMAGE_PIXELS = None
        try:
            return Image.open(io.BytesIO(raw))
        finally:
            Image.MAX_IMAGE_PIXELS = limit


_TIFF_SIGNATURES = (b"II*\0", b"MM\0*")


def _integer_tiff_samples(image):
    """The type of a TIFF's integer samples when signed or of 32 bits ("int8",
    "uint32", ...), which Pillow reads as unsigned bytes or clips; None otherwise."""
    bits, formats = image.tag_v2.get(258, (1,)), image.tag_v2.get(339, (1,))
    bits = bits if isinstance(bits, tuple) else (bits,)
    formats = formats if isinstance(formats, tuple) else (formats,)
    signed = 2 in formats
    if 3 in formats or not (signed or 32 in bits):
        return None
    return f"{'int' if signed else 'uint'}{max(bits)}"


def open_image(data):
    """A Pillow image over the encoded bytes ``data`` (a uint8 array), of which only
    the header is read; for most JPEGs, a ``_JpegHeader`` standing for it."""
    raw = np.ascontiguousarray(data).reshape(-1)
    header = _jpeg_header(raw)
    if header is not None:
        return _refuse_if_too_large(header)
    if raw[12:16].tobytes() in (b"VP8 ", b"VP8L") and _opencv() is not None:
        header = _webp_header(raw)  # Pillow's opening takes a tenth of the decoding's time
        if header is not None:
            return _refuse_if_too_large(header)
    try:
        try:
            image = Image.open(io.BytesIO(raw))
        except Image.DecompressionBombError:
            image = _open_beyond_pillows_limit(raw)
    except UnidentifiedImageError:  # Pillow's message names its stream object, not the data
        start = raw[:8].tobytes()
        if start[:4] in _TIFF_SIGNATURES:
            raise ValueError(
                "a TIFF of a sample type or layout it does not read (for example float RGB, 64-bit "
                f"or signed samples): {raw.size} bytes"
            ) from None
        raise ValueError(
            f"not an image in a format it reads (JPEG, PNG, BMP, TIFF, WebP, JPEG 2000, PNM, ...): "
            f"{raw.size} bytes starting {start!r}"
        ) from None
    except OSError as exc:
        header = _webp_header(raw)
        if header is None:
            raise
        # A WebP Pillow cannot open (it decodes at opening: a truncated file): its
        # header still gives the shape, as in the reference; decoding raises the error.
        header.ndd_load_error = ValueError(f"the WebP data is broken or truncated ({exc})")
        return header
    # Pillow opens a 16-bit gray+alpha PNG as 8-bit RGBA; its header says what is
    # stored: 2 channels, as ANY_DATA gives.
    image.ndd_gray_alpha16 = image.format == "PNG" and (_png_header(raw) or (0, 0))[:2] == (16, 4)
    if image.format == "PNG":
        image.ndd_data = raw  # its chunks are walked by ndd (EXIF, pixels)
    if image.format == "TIFF":
        kind = _integer_tiff_samples(image)
        if kind is not None:
            # Pillow reads them as unsigned bytes or clips them: decoding them is refused,
            # as in the reference; their shape stands.
            image.ndd_load_error = ValueError(
                f"TIFF samples of type {kind} are not read (unsigned 8- and 16-bit, and float, are)"
            )
    return _refuse_if_too_large(image)


def _refuse_if_too_large(image):
    """``image``, which ``decode`` refuses if its pixels would not fit in memory (its
    shape stands); such a PNG's EXIF is not read either (Pillow loads the pixels to
    look for it)."""
    error = _memory_error(image)
    if error is not None:
        image.ndd_load_error = error
        image.ndd_too_large = True
    return image


def orientation(image):
    """The EXIF orientation of ``image`` (1 when absent or invalid)."""
    if getattr(image, "ndd_too_large", False) and image.format == "PNG":
        return 1
    if image.format == "PNG" and not _png_exif_needs_loading(image):
        return 1
    try:
        value = image.getexif().get(_ORIENTATION_TAG, 1)
    except Exception as exc:  # a damaged EXIF block does not stop the decoding, as in the reference
        if getattr(image, "format", None) == "PNG":
            # Pillow reads a PNG's eXIf chunk, which may follow the pixels, by loading
            # the image: this was the pixels' error, for ``decode`` to raise (the
            # image is left half loaded). Its header, and so its shape, are sound.
            image.ndd_load_error = exc
        return 1
    return value if isinstance(value, int) and 1 <= value <= 8 else 1


# Chunks after a PNG's pixels in which Pillow finds EXIF data (loading the pixels to read them).
_PNG_EXIF_CHUNKS = (b"eXIf", b"tEXt", b"zTXt", b"iTXt")


def _png_exif_needs_loading(image):
    """Whether Pillow's getexif of PNG ``image`` can find anything: EXIF read at opening,
    or a chunk that may hold some after the pixels, which Pillow reads by decoding them
    all. Without one the orientation is 1, and the pixels are left for ``decode``."""
    info = image.info
    if "exif" in info or "Raw profile type exif" in info:
        return True
    data = getattr(image, "ndd_data", None)
    if data is None:
        return True
    seen_pixels = False
    for kind, _, _ in _png_chunks(data):
        if kind == b"IDAT":
            seen_pixels = True
        elif seen_pixels and kind in _PNG_EXIF_CHUNKS:
            return True
    return False


def _png_chunks(raw):
    """``(kind, start, length)`` of each chunk of the PNG in ``raw`` (uint8), its data
    ``raw[start:start + length]``, up to IEND or to a chunk cut short."""
    size, pos = raw.size, len(_PNG_SIGNATURE)
    while pos + 8 <= size:
        head = raw[pos : pos + 8].tobytes()
        length = int.from_bytes(head[:4], "big")
        kind = head[4:]
        if pos + 8 + length > size:
            return
        yield kind, pos + 8, length
        if kind == b"IEND":
            return
        pos += 12 + length


# A TIFF's ImageWidth and ImageLength tags.
_TIFF_WIDTH_TAG, _TIFF_LENGTH_TAG = 256, 257
# The inverse of each EXIF orientation (a rotation by 90 degrees undoes the one by 270).
_INVERSE_ORIENTATION = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 8, 7: 7, 8: 6}


@functools.cache
def _pillow_orients_tiffs():
    """Whether Pillow applies a TIFF's orientation tag itself when it loads the pixels
    (Pillow 10 and 13 do; 13 also gives the oriented size before loading, 10 only
    after)."""
    exif = Image.Exif()
    exif[_ORIENTATION_TAG] = 6
    stream = io.BytesIO()
    Image.new("L", (3, 2)).save(stream, "TIFF", exif=exif)
    image = Image.open(stream)
    image.load()
    return image.size == (2, 3)


def _pillow_orientation(image):
    """The orientation Pillow applies on loading ``image`` (1: none); read before it loads."""
    if getattr(image, "format", None) != "TIFF" or not _pillow_orients_tiffs():
        return 1
    return orientation(image)


def _stored_size(image):
    """(width, height) of the image as stored, before any orientation."""
    if _pillow_orientation(image) != 1:
        # A TIFF's own width and length tags: Pillow's size is the oriented one, from
        # the opening (Pillow 13) or from the loading of the pixels (Pillow 10).
        tags = image.tag_v2
        return int(tags[_TIFF_WIDTH_TAG]), int(tags[_TIFF_LENGTH_TAG])
    return image.size


def oriented_size(image, orient):
    """(height, width) of ``image`` once oriented."""
    width, height = _stored_size(image)
    return (width, height) if orient in _TRANSPOSING else (height, width)


def _native_channels(image):
    if getattr(image, "ndd_gray_alpha16", False):
        return 2
    mode = image.mode
    if mode in ("L", "I", "I;16", "I;16B", "I;16L", "I;16N", "1", "F"):
        return 1
    if mode in ("LA", "La", "PA"):
        return 4 if mode == "PA" else 2
    if mode in ("RGBA", "RGBa", "CMYK"):
        return 4
    return 3


def channel_count(image, output_type):
    """Channels of the decoded image for ``output_type``."""
    if output_type == DALIImageType.GRAY:
        return 1
    if output_type == DALIImageType.ANY_DATA:
        return _native_channels(image)
    return 3


def _source_box(orient, window, height, width):
    """The box (left, upper, right, lower) of the stored image that holds the
    window (y, x, h, w) of the image oriented with ``orient``; the stored image is
    ``height`` x ``width``."""
    y, x, h, w = window
    corners = []
    for i, j in ((y, x), (y + h - 1, x + w - 1)):
        # (row, column) in the stored image of pixel (i, j) of the oriented one.
        source = {
            1: (i, j),
            2: (i, width - 1 - j),
            3: (height - 1 - i, width - 1 - j),
            4: (height - 1 - i, j),
            5: (j, i),
            6: (height - 1 - j, i),
            7: (height - 1 - j, width - 1 - i),
            8: (j, width - 1 - i),
        }[orient]
        corners.append(source)
    rows = sorted(c[0] for c in corners)
    cols = sorted(c[1] for c in corners)
    return (cols[0], rows[0], cols[1] + 1, rows[1] + 1)


def _orient(array, orient):
    """``array`` (H, W, C) as displayed for EXIF orientation ``orient``."""
    if orient == 1:
        return array
    view = {
        2: lambda a: a[:, ::-1],
        3: lambda a: a[::-1, ::-1],
        4: lambda a: a[::-1],
        5: lambda a: a.swapaxes(0, 1),
        6: lambda a: a[::-1].swapaxes(0, 1),
        7: lambda a: a[::-1, ::-1].swapaxes(0, 1),
        8: lambda a: a[:, ::-1].swapaxes(0, 1),
    }[orient](array)
    return np.ascontiguousarray(view)


_SCRATCH = threading.local()


def _scratch_pixels(height, width):
    """A (height, width, 4) uint8 buffer of this thread, reused between images: a
    fresh one per image would cost its page faults every time."""
    size = height * width * 4
    buffer = getattr(_SCRATCH, "buffer", None)
    if buffer is None or buffer.size < size:
        buffer = np.empty(max(size, 1), np.uint8)
        _SCRATCH.buffer = buffer
    return buffer[:size].reshape(height, width, 4)


def _decode_top_rows(image, data, rows):
    """Decode only the first ``rows`` rows of a JPEG into the scratch buffer (4 bytes
    a pixel): libjpeg decodes rows in order, so the rest need no work.

    Pillow reports stopping early as a broken stream; the decoder writes 255 into the
    fourth byte of every pixel, so a last row still holding the 0s put there first
    tells a real failure from the early stop. A decoder still waiting for data means
    the file is truncated."""
    width, _ = image.size
    buffer = _scratch_pixels(rows, width)
    buffer[rows - 1, :, 3] = 0
    mapped = Image.frombuffer("RGBX", (width, rows), buffer, "raw", "RGBX", 0, 1)
    codec, _, offset, args = tuple(image.tile[0])[:4]
    decoder = Image._getdecoder("RGBX", codec, args, image.decoderconfig)
    try:
        decoder.setimage(mapped.im, (0, 0, width, rows))
        consumed, _ = decoder.decode(np.ascontiguousarray(data).reshape(-1)[offset:].tobytes())
    finally:
        decoder.cleanup()
    if consumed >= 0:
        raise OSError("image file is truncated")
    if not np.all(buffer[rows - 1, :, 3] == 255):
        raise OSError("broken data stream when reading image file")
    return buffer


def _decode_rgb_in_place(image, box, data):
    """Decode a 3-channel JPEG into a numpy buffer of Pillow's own pixel form (4
    bytes a pixel) and pack the channels (of ``box``) without the GIL; for a box
    above the bottom of the image, only the rows down to it are decoded. None when
    this Pillow does not decode into the buffer it is given."""
    if not image.tile or len(image.tile) != 1:
        return None
    width, height = image.size
    if box is not None and 0 < box[3] < height:
        buffer = _decode_top_rows(image, data, box[3])
    else:
        buffer = _scratch_pixels(height, width)
        mapped = Image.frombuffer("RGBX", (width, height), buffer, "raw", "RGBX", 0, 1)
        image._mode = "RGBX"
        image.im = mapped.im
        image.load()
        if image.im is not mapped.im:
            return None
    if box is not None:
        left, upper, right, lower = box
        buffer = buffer[upper:lower, left:right]
    out = np.empty(buffer.shape[:2] + (3,), np.uint8)
    copy_three_channels(buffer[..., :3], out)
    return out


def _check_in_place_decoding():
    """Whether ``_decode_rgb_in_place`` gives Pillow's pixels with this Pillow."""
    reference = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)
    encoded = io.BytesIO()
    Image.fromarray(reference).save(encoded, "JPEG", quality=90)
    try:
        data = np.frombuffer(encoded.getvalue(), np.uint8)
        expected = np.asarray(Image.open(io.BytesIO(encoded.getvalue())))
        whole = _decode_rgb_in_place(Image.open(io.BytesIO(encoded.getvalue())), None, data)
        top = _decode_rgb_in_place(Image.open(io.BytesIO(encoded.getvalue())), (1, 0, 6, 3), data)
    except Exception:  # another Pillow's internals: use its ordinary path
        return False
    return (
        whole is not None
        and top is not None
        and np.array_equal(whole, expected)
        and np.array_equal(top, expected[0:3, 1:6])
    )


_IN_PLACE_JPEG = _check_in_place_decoding()


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# Channels of the PNG colour types ndd unfilters itself: gray, RGB, gray + alpha and
# RGBA, of 8 or 16 bits (Pillow reads 16-bit colour at 8 bits; its 16-bit gray is
# exact, but takes twice the time).
_PNG_CHANNELS = {8: {0: 1, 2: 3, 4: 2, 6: 4}, 16: {0: 1, 2: 3, 4: 2, 6: 4}}


def _png_pixels(image, data):
    """The stored pixels of an 8-bit gray, RGB, gray + alpha or RGBA PNG, or a 16-bit
    RGB, gray + alpha or RGBA one (at full depth), (H, W, C) uint8 or uint16: its
    image data inflated by ISA-L (or zlib) and unfiltered by ndd (Pillow's own unfiltering is
    twice as slow, and it reads 16-bit colour at 8 bits). None for other images,
    which Pillow reads."""
    if image.format != "PNG":
        return None
    raw = np.ascontiguousarray(data).reshape(-1)
    header = _png_header(raw)
    if header is None:
        return None
    depth, colour, interlace = header
    channels = _PNG_CHANNELS.get(depth, {}).get(colour)
    if channels is None or interlace not in (0, 1):
        return None
    compressed = b"".join(
        raw[start : start + length].tobytes() for kind, start, length in _png_chunks(raw) if kind == b"IDAT"
    )
    width, height = image.size
    pixel_bytes = channels * depth // 8
    # Each pass's (x0, y0, dx, dy, columns, lines); an empty pass has no bytes, not even filter types.
    passes = [
        (x0, y0, dx, dy, -(-max(width - x0, 0) // dx), -(-max(height - y0, 0) // dy))
        for x0, y0, dx, dy in ([(0, 0, 1, 1)] if interlace == 0 else _ADAM7)
    ]
    passes = [p for p in passes if p[4] and p[5]]
    # What the rows take, filter bytes included; a stream that inflates to more is not read past it.
    needed = sum(lines * (1 + columns * pixel_bytes) for *_, columns, lines in passes)
    try:
        filtered = np.frombuffer(_inflate.decompressobj().decompress(compressed, needed), np.uint8)
    except _INFLATE_ERRORS as exc:
        raise ValueError(f"the PNG image data is broken ({exc})") from None
    dtype = np.dtype(np.uint8) if depth == 8 else np.dtype(">u2")
    if interlace == 0:
        rows = np.empty((height, width * pixel_bytes), np.uint8)
        unfilter_png(filtered, rows, pixel_bytes)
        pixels = rows.view(dtype).reshape(height, width, channels)
        return pixels if depth == 8 else pixels.astype(np.uint16)
    # Adam7: seven reduced images, one after the other, each filtered on its own.
    pixels = np.empty((height, width, channels), np.uint8 if depth == 8 else np.uint16)
    start = 0
    for x0, y0, dx, dy, columns, lines in passes:
        size = lines * (1 + columns * pixel_bytes)
        rows = np.empty((lines, columns * pixel_bytes), np.uint8)
        unfilter_png(filtered[start : start + size], rows, pixel_bytes)
        start += size
        pixels[y0::dy, x0::dx] = rows.view(dtype).reshape(lines, columns, channels)
    return pixels


# Pillow's rawmodes of 16-bit samples read one byte of each, the high one for the
# file's byte order; the other order reads the low one ("N" is the host's).
_OTHER_BYTE = {"L": "B", "B": "L", "N": "B" if sys.byteorder == "little" else "L"}


def _with_rawmodes(data, rawmodes):
    """The pixels of the image in ``data`` (bytes) decoded with one rawmode per tile."""
    fresh = Image.open(io.BytesIO(data))
    tiles = []
    for tile, rawmode in zip(fresh.tile, rawmodes, strict=True):
        codec, extents, offset, args = tile
        changed = (codec, extents, offset, (rawmode, *args[1:]))
        # Pillow 11 and later keep named tiles (``_Tile``), and its libtiff path reads the names.
        tiles.append(type(tile)(*changed) if hasattr(tile, "_fields") else changed)
    fresh.tile = tiles
    return np.asarray(fresh).astype(np.uint16)


def _tiff16(image, data):
    """The pixels of a 16-bit RGB or RGBA TIFF at full depth, (H, W, C) uint16 (as
    Pillow orients them); None for other images. Pillow reads these at 8 bits, the
    high byte of each sample: a second decoding with the other byte order gives the
    low bytes. Pillow reads separate planes (PlanarConfiguration 2) as 8-bit samples,
    so those get 16-bit rawmodes; compressed ones, which libtiff reads for Pillow at 8
    bits whatever the rawmode, keep 8 bits."""
    if image.format != "TIFF" or image.mode not in ("RGB", "RGBA") or not image.tile:
        return None
    if set(image.tag_v2.get(258, ())) != {16}:
        return None
    raw = np.ascontiguousarray(data).reshape(-1)
    planar = image.tag_v2.get(284, 1) == 2
    order = "B" if raw[:2].tobytes() == b"MM" else "L"
    high = []
    for codec, _, _, args in image.tile:
        rawmode = args[0]
        if not planar and rawmode in (f"{image.mode};16L", f"{image.mode};16B", f"{image.mode};16N"):
            high.append(rawmode)
        elif planar and codec == "raw" and rawmode in ("R", "G", "B", "A"):
            high.append(f"{rawmode};16{order}")
        else:
            return None
    low = [rawmode[:-1] + _OTHER_BYTE[rawmode[-1]] for rawmode in high]
    encoded = raw.tobytes()
    return (_with_rawmodes(encoded, high) << 8) | _with_rawmodes(encoded, low)


@functools.cache
def _opencv():
    """OpenCV (the ``opencv`` extra), imported on the first image it decodes; None when
    it is not installed or ``NDD_DECODE_WITH_OPENCV=0``."""
    if os.environ.get("NDD_DECODE_WITH_OPENCV", "1") == "0":
        return None
    try:
        import cv2
    except ImportError:
        return None
    return cv2


def _opencv_webp_pixels(image, data):
    """The pixels of a still WebP decoded by OpenCV's libwebp, (H, W, 3 or 4) uint8 in
    RGB order, where OpenCV is installed: libwebp's decoding is specified to the bit,
    and OpenCV's build of it takes about 80% of the time of Pillow's (which also decodes
    through its animation API and copies the frame twice). None for other images, when
    OpenCV is absent, or when it reads the file otherwise than Pillow (a channel more
    or less): Pillow decodes those."""
    if getattr(image, "format", None) != "WEBP" or getattr(image, "n_frames", 1) != 1:
        return None
    cv2 = _opencv()
    if cv2 is None:
        return None
    width, height = image.size
    return _opencv_decode(cv2, np.ascontiguousarray(data).reshape(-1), height, width, len(image.mode))


def _opencv_decode(cv2, raw, height, width, channels, dtype=np.uint8):
    """The file ``raw`` (uint8) decoded by OpenCV into (height, width, channels) pixels
    of ``dtype``, in RGB(A) order; None when OpenCV cannot decode it or gives another
    shape or type."""
    # OpenCV 4.11 and later decode 8-bit colour into RGB order; cv2.cvtColor is not
    # used, for it keeps OpenCV's worker threads spinning (a third more CPU time).
    rgb = getattr(cv2, "IMREAD_COLOR_RGB", None) if channels == 3 and dtype == np.uint8 else None
    flags = cv2.IMREAD_UNCHANGED if rgb is None else rgb | cv2.IMREAD_IGNORE_ORIENTATION
    decoded = cv2.imdecode(raw, flags)
    if decoded is None:
        return None
    decoded = decoded.reshape(decoded.shape[:2] + (-1,))
    if decoded.dtype != dtype or decoded.shape != (height, width, channels):
        return None
    if channels < 3 or rgb is not None:
        return decoded
    out = np.empty_like(decoded)
    if channels == 3:
        copy_three_channels(decoded[:, :, ::-1], out)
    else:
        out[:, :, :3] = decoded[:, :, 2::-1]
        out[:, :, 3] = decoded[:, :, 3]
    return out


_JP2_SIGNATURE = b"\x00\x00\x00\x0cjP  \r\n\x87\n"
# Colour spaces of a JP2 'colr' box (enumerated method) by component count: sRGB, gray.
_JP2_COLOUR_SPACES = {3: 16, 1: 17}


def _jp2_boxes(raw, start, end):
    """(type, payload start, payload end) of the boxes of the JP2 file ``raw`` (bytes-like)
    between ``start`` and ``end``; a box running past ``end`` ends the walk with a
    ``None`` type (a truncated file)."""
    pos = start
    while pos + 8 <= end:
        length, kind = int.from_bytes(raw[pos : pos + 4], "big"), raw[pos + 4 : pos + 8]
        header = 8
        if length == 1:
            length, header = int.from_bytes(raw[pos + 8 : pos + 16], "big"), 16
        elif length == 0:
            length = end - pos
        if length < header or pos + length > end:
            yield None, pos, end
            return
        yield kind, pos + header, pos + length
        pos += length


def _plain_jp2(raw):
    """Whether the JP2 file ``raw`` (bytes-like) holds one whole codestream of unsigned 8-bit
    gray or RGB, or 16-bit gray, samples: sRGB or gray by the enumerated colour space,
    components at full resolution, no palette or channel definitions, no image offset.
    OpenCV reads those as Pillow does; it refuses or logs about others (a raw J2K
    codestream, with no colour space, two components, a cut file)."""
    if raw[: len(_JP2_SIGNATURE)] != _JP2_SIGNATURE:
        return False
    components = bits = colour = codestream = None
    for kind, start, end in _jp2_boxes(raw, 0, len(raw)):
        if kind == b"jp2h":
            for sub, at, stop in _jp2_boxes(raw, start, end):
                if sub == b"ihdr" and stop - at >= 14:
                    components, bits = int.from_bytes(raw[at + 8 : at + 10], "big"), raw[at + 10]
                elif sub == b"colr" and stop - at >= 7 and raw[at] == 1:
                    colour = int.from_bytes(raw[at + 3 : at + 7], "big")
                elif sub in (None, b"pclr", b"cdef", b"cmap", b"colr"):
                    return False
        elif kind == b"jp2c":
            codestream = raw[start : min(end, start + 64)]  # SOC and SIZ: 51 bytes for 3 components
            break
        elif kind is None:
            return False
    if (
        codestream is None
        or colour != _JP2_COLOUR_SPACES.get(components)
        or bits not in ((7, 15) if components == 1 else (7,))
        or len(codestream) < 42 + 3 * components
        or codestream[:4] != b"\xff\x4f\xff\x51"
    ):
        return False
    siz = codestream[6:]  # after SOC, the SIZ marker and its length: Rsiz, Xsiz, Ysiz, XOsiz, YOsiz, ...
    offsets = int.from_bytes(siz[10:14], "big"), int.from_bytes(siz[14:18], "big")
    if offsets != (0, 0) or int.from_bytes(siz[34:36], "big") != components:
        return False
    return all(siz[36 + 3 * c : 39 + 3 * c] == bytes((bits, 1, 1)) for c in range(components))


def _opencv_jp2_pixels(image, data):
    """The pixels of a plain JP2 file (``_plain_jp2``: 8-bit gray or RGB, 16-bit gray)
    decoded by OpenCV's OpenJPEG, (H, W, C) uint8 or uint16, where OpenCV is installed:
    the same pixels as Pillow's OpenJPEG in about 80% of the time (Pillow converts the
    samples one by one). None for other images, or when OpenCV is absent or reads the
    file otherwise."""
    if getattr(image, "format", None) != "JPEG2000" or image.mode not in ("L", "RGB", "I;16"):
        return None
    cv2 = _opencv()
    raw = np.ascontiguousarray(data).reshape(-1)
    if cv2 is None or not _plain_jp2(memoryview(raw)):
        return None
    width, height = image.size
    if image.mode == "I;16":
        return _opencv_decode(cv2, raw, height, width, 1, np.uint16)
    return _opencv_decode(cv2, raw, height, width, len(image.mode))


# The rawmodes of uncompressed TIFF samples stored as ndd returns them (chunky, top row
# first, unsigned, unassociated alpha): rawmode -> (numpy type, channels).
_RAW_TIFF = {
    "L": ("u1", 1),
    "LA": ("u1", 2),
    "RGB": ("u1", 3),
    "RGBA": ("u1", 4),
    "I;16": ("<u2", 1),
    "I;16B": (">u2", 1),
    "RGB;16L": ("<u2", 3),
    "RGB;16B": (">u2", 3),
    "RGBA;16L": ("<u2", 4),
    "RGBA;16B": (">u2", 4),
}
_RAW_TIFF["RGB;16N"] = _RAW_TIFF["RGB;16L" if sys.byteorder == "little" else "RGB;16B"]
_RAW_TIFF["RGBA;16N"] = _RAW_TIFF["RGBA;16L" if sys.byteorder == "little" else "RGBA;16B"]


def _raw_tiff_pixels(image, data):
    """The stored pixels (before any orientation) of an uncompressed TIFF whose strips
    hold the samples as they are returned, (H, W, C) uint8 or uint16: copied from the
    file's bytes, where Pillow unpacks them to its own pixel form and numpy packs them
    again (3x the time on a 500x375 RGB image). None for other images."""
    if getattr(image, "format", None) != "TIFF" or not image.tile:
        return None
    rawmode = image.tile[0][3][0]
    kind = _RAW_TIFF.get(rawmode)
    if kind is None or rawmode.split(";")[0] != image.mode.split(";")[0]:
        return None
    tags = image.tag_v2
    width, height = int(tags[_TIFF_WIDTH_TAG]), int(tags[_TIFF_LENGTH_TAG])
    dtype, channels = np.dtype(kind[0]), kind[1]
    row_bytes = width * channels * dtype.itemsize
    strips = sorted((tile[1][1], tile[1][3], tile[2]) for tile in image.tile)
    expected_top = 0
    for tile in image.tile:
        codec, (left, _, right, _), _, args = tuple(tile)[:4]
        if codec != "raw" or tuple(args[:3]) != (rawmode, 0, 1) or (left, right) != (0, width):
            return None  # tiles, rows in other orders or strides: Pillow reads those
    for top, bottom, _ in strips:
        if top != expected_top or bottom <= top:
            return None
        expected_top = bottom
    if expected_top != height:
        return None
    raw = np.ascontiguousarray(data).reshape(-1)
    pixels = np.empty((height, width, channels), dtype.newbyteorder("="))
    for top, bottom, offset in strips:
        size = (bottom - top) * row_bytes
        if offset < 0 or offset + size > raw.size:
            raise OSError("image file is truncated")
        stored = raw[offset : offset + size]
        pixels[top:bottom] = stored.view(dtype).reshape(bottom - top, width, channels)
    return pixels


# Uncompressed BMPs read by ndd: Pillow's rawmode -> (bytes per stored pixel, channels).
# BGR pixels (24-bit, or 32-bit with the fourth byte unused) become RGB; 8-bit gray ones
# (a palette of grays, which Pillow reads as gray) are copied.
_RAW_BMP = {"BGR": (3, 3), "BGRX": (4, 3), "L": (1, 1)}


def _bmp_pixels(image, data):
    """The pixels of an uncompressed BMP of 24- or 32-bit BGR or 8-bit gray pixels,
    (H, W, 3) RGB or (H, W, 1): its rows (stored bottom-up or top-down) copied from the
    file's bytes by one compiled pass, where Pillow unpacks them into its own pixel form
    and numpy packs them again (a tenth of the time on a 500x375 image). None for other
    BMPs (palettes, 16-bit pixels, bit fields with alpha, RLE), which Pillow reads."""
    if getattr(image, "format", None) != "BMP" or len(image.tile) != 1:
        return None
    codec, extents, offset, args = tuple(image.tile[0])[:4]
    rawmode, stride, step = (tuple(args) + (0, 1))[:3]
    kind = _RAW_BMP.get(rawmode)
    width, height = image.size
    if (
        codec != "raw"
        or kind is None
        or image.mode != ("L" if rawmode == "L" else "RGB")
        or tuple(extents) != (0, 0, width, height)
        or step not in (1, -1)
        or stride < width * kind[0]
    ):
        return None
    raw = np.ascontiguousarray(data).reshape(-1)
    if offset < 0 or offset + stride * height > raw.size:
        raise OSError("image file is truncated")
    rows = raw[offset : offset + stride * height].reshape(height, stride)[:, : width * kind[0]]
    rows = rows.reshape(height, width, kind[0])[::step]  # step -1: the last row stored is the top one
    channels = kind[1]
    pixels = np.empty((height, width, channels), np.uint8)
    if channels == 1:
        pixels[:] = rows
    else:
        copy_three_channels(rows[:, :, 2::-1], pixels)
    return pixels


# Deflate-compressed TIFFs read by ndd: Pillow's rawmode (libtiff's, for these) -> channels.
_DEFLATE_TIFF = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4, "I;16": 1, "I;16N": 1, "I;16B": 1, "I;16L": 1}
# Tags: compression, predictor, planar configuration, strip offsets and byte counts,
# rows per strip, bits per sample, fill order, sample format, tile width.
_COMPRESSION, _PREDICTOR, _PLANAR, _STRIP_OFFSETS, _STRIP_BYTES = 259, 317, 284, 273, 279
_ROWS_PER_STRIP, _BITS, _FILL_ORDER, _SAMPLE_FORMAT, _TILE_WIDTH = 278, 258, 266, 339, 322


def _deflate_tiff_pixels(image, data):
    """The stored pixels, (H, W, C), of a TIFF of Deflate-compressed strips (8-bit gray,
    gray+alpha, RGB or RGBA, or 16-bit gray; without a predictor or with horizontal
    differencing): each strip inflated by ISA-L (twice the speed of zlib, which libtiff
    uses for Pillow). None for other images, which Pillow reads."""
    if getattr(image, "format", None) != "TIFF" or len(image.tile) != 1:
        return None
    tile = image.tile[0]
    channels = _DEFLATE_TIFF.get(tile[3][0])
    tags = image.tag_v2
    if (
        channels is None
        or tile[0] != "libtiff"
        or tags.get(_COMPRESSION) not in (8, 32946)
        or tags.get(_PREDICTOR, 1) not in (1, 2)
        or tags.get(_PLANAR, 1) != 1
        or tags.get(_FILL_ORDER, 1) != 1
        or set(tags.get(_SAMPLE_FORMAT, (1,))) != {1}
        or _TILE_WIDTH in tags
    ):
        return None
    bits = set(tags.get(_BITS, ()))
    if bits != ({16} if tile[3][0].startswith("I;16") else {8}) or len(tags.get(_BITS, ())) != channels:
        return None
    width, height = int(tags[_TIFF_WIDTH_TAG]), int(tags[_TIFF_LENGTH_TAG])
    offsets, counts = tags.get(_STRIP_OFFSETS), tags.get(_STRIP_BYTES)
    rows = min(int(tags.get(_ROWS_PER_STRIP, height)), height)
    if (
        not offsets
        or not counts
        or len(offsets) != len(counts)
        or rows < 1
        or len(offsets) != -(-height // rows)
    ):
        return None
    raw = np.ascontiguousarray(data).reshape(-1)
    order = "<" if raw[:2].tobytes() == b"II" else ">"
    dtype = np.dtype(np.uint8) if 8 in bits else np.dtype(order + "u2")
    pixels = np.empty((height, width, channels), dtype.newbyteorder("="))
    row_bytes = width * channels * dtype.itemsize
    for k, (offset, count) in enumerate(zip(offsets, counts, strict=True)):
        top = k * rows
        lines = min(rows, height - top)
        if offset < 0 or offset + count > raw.size:
            raise OSError("image file is truncated")
        try:
            inflated = _inflate.decompressobj().decompress(
                raw[offset : offset + count].tobytes(), lines * row_bytes
            )
        except _INFLATE_ERRORS as exc:
            raise ValueError(f"the TIFF image data is broken ({exc})") from None
        if len(inflated) < lines * row_bytes:
            raise ValueError("the TIFF image data is broken (a strip is cut short)")
        pixels[top : top + lines] = np.frombuffer(inflated, dtype).reshape(lines, width, channels)
    if tags.get(_PREDICTOR, 1) == 2:  # each sample stored as the difference to its left neighbour
        np.cumsum(pixels, axis=1, dtype=pixels.dtype, out=pixels)
    return pixels


def _pnm16(image, data):
    """The pixels of a binary PNM of more than 8 bits (maximum value above 255) as
    (H, W, C) uint16 scaled to 65535 (rounded); None for other images. Pillow reads
    16-bit colour PNMs at 8 bits, and gray ones unscaled."""
    if image.format != "PPM" or not image.tile or image.mode not in ("RGB", "I", "L"):
        return None
    offset = image.tile[0][2]
    raw = np.ascontiguousarray(data).reshape(-1)
    header = re.sub(rb"#[^\n\r]*", b" ", raw[:offset].tobytes()).split()
    if len(header) < 4 or header[0] not in (b"P5", b"P6"):
        return None
    maxval = int(header[3])
    if maxval <= 255:
        return None
    width, height = image.size
    channels = 3 if header[0] == b"P6" else 1
    count = width * height * channels
    samples = raw[offset : offset + 2 * count]
    if samples.size < 2 * count:
        raise ValueError(f"the PNM image is truncated: {samples.size} of {2 * count} bytes of samples")
    values = samples.view(">u2").astype(np.float64).reshape(height, width, channels)
    return np.clip(np.rint(values * (65535 / maxval)), 0, 65535).astype(np.uint16)


# The passes of Adam7 interlacing: first column and row, then the steps between them.
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def _png_header(raw):
    """(bit depth, colour type, interlace method) from a PNG's IHDR chunk, which comes
    first; None when ``raw`` (uint8) does not start so."""
    header = raw[:29].tobytes()
    if len(header) < 29 or not header.startswith(_PNG_SIGNATURE) or header[12:16] != b"IHDR":
        return None
    return header[24], header[25], header[28]


# Pillow's formats of a JPEG stream: MPO files (cameras) start with an ordinary JPEG,
# the image both Pillow and simplejpeg decode.
_JPEG_FORMATS = ("JPEG", "MPO")
# A crop window whose bottom row is above this fraction of the image's height is
# decoded by Pillow, which stops at that row; simplejpeg decodes whole images only,
# faster than Pillow on whole images (break-even measured near 0.9 on 500x375 photos).
_PARTIAL_DECODE = 0.85


def _scratch_bytes(size):
    """A 1-D uint8 buffer of ``size`` bytes of this thread, reused between images."""
    buffer = getattr(_SCRATCH, "jpeg", None)
    if buffer is None or buffer.size < size:
        buffer = np.empty(max(size, 1), np.uint8)
        _SCRATCH.jpeg = buffer
    return buffer[:size]


def _jpeg_pixels(image, box, data, output_type, fast_idct=False):
    """The pixels of a JPEG decoded by libjpeg-turbo without Pillow, (H, W, C) uint8
    (inside ``box``, if given), and whether they are already in ``output_type`` (RGB
    or BGR). A window is decoded alone by ``decode_window``
    (``ndd/_cpu/jpeg_region.pyx``); a whole gray or colour image by simplejpeg, which
    also cuts windows from whole images where that module was not built; CMYK by
    ``_jpeg_ink``. None when they cannot decode the image (Pillow then decodes it, or
    reports why it cannot). ``fast_idct`` selects libjpeg-turbo's fast integer IDCT,
    which Pillow does not offer."""
    if image.format not in _JPEG_FORMATS:
        return None
    if image.mode == "CMYK":
        return _jpeg_ink(image, box, data, fast_idct)
    if image.mode not in ("RGB", "L"):
        return None
    gray = output_type == DALIImageType.GRAY
    if (
        box is not None
        and decode_window is None
        and not fast_idct
        and not gray
        and image.mode == "RGB"
        and _IN_PLACE_JPEG
        and box[3] <= _PARTIAL_DECODE * image.size[1]
    ):
        return None  # Pillow decodes only the rows down to the window: less work
    if gray and image.mode == "RGB":
        colorspace = "GRAY"  # the stored luma, as the reference (not one from upsampled RGB)
    elif image.mode == "L" and output_type not in (DALIImageType.RGB, DALIImageType.BGR):
        colorspace = "GRAY"  # GRAY, ANY_DATA and YCbCr start from the single channel
    elif image.mode == "RGB" and output_type == DALIImageType.BGR:
        colorspace = "BGR"
    else:
        colorspace = "RGB"  # gray sources repeated into 3 channels, as _to_rgb
    raw = np.ascontiguousarray(data).reshape(-1)
    if box is not None and decode_window is not None:
        left, upper, right, lower = box
        values = decode_window(raw, colorspace, upper, left, lower - upper, right - left, fast_idct)
        if values is None:
            return None
    else:
        options = {"colorspace": colorspace, "fastdct": fast_idct, "fastupsample": False, "strict": True}
        try:
            if box is None:
                values = simplejpeg.decode_jpeg(raw, **options)
            else:
                width, height = image.size
                channels = 1 if colorspace == "GRAY" else 3
                buffer = _scratch_bytes(height * width * channels)
                whole = simplejpeg.decode_jpeg(raw, buffer=buffer, **options)
                left, upper, right, lower = box
                # A copy: the window must not share the scratch buffer.
                values = np.array(whole[upper:lower, left:right])
        except Exception:  # any refusal or damage: Pillow's path decides
            if box is not None or decode_window is None:
                return None
            # Chroma sampling TurboJPEG has no name for (3x1, 4x2, mixed): libjpeg decodes
            # the whole image as a window, with the fast IDCT when asked (Pillow has none);
            # a damaged stream it leaves to Pillow too.
            values = decode_window(raw, colorspace, 0, 0, image.size[1], image.size[0], fast_idct)
            if values is None:
                return None
    if values.ndim == 2:
        values = values[:, :, None]
    return values, output_type in (DALIImageType.RGB, DALIImageType.BGR) or gray


def _ink_to_rgba(cmyk):
    """RGB of (H, W, 4) uint8 ink: (255 - C)(255 - K) / 255 truncated, as the reference
    (Pillow's conversion rounds); four channels, as the reference's ANY_DATA gives for a
    CMYK TIFF (and its peek_image_shape for a JPEG, whose decoding it fails): RGB and an
    opaque alpha."""
    cmyk = cmyk.astype(np.uint16)
    ink = (255 - cmyk[:, :, :3]) * (255 - cmyk[:, :, 3:])
    rgba = np.full((*ink.shape[:2], 4), 255, np.uint8)
    rgba[:, :, :3] = ink // 255
    return rgba


def _jpeg_ink(image, box, data, fast_idct):
    """The RGBA (``_ink_to_rgba``) of a CMYK or YCCK JPEG decoded by libjpeg (its
    window alone, with the fast IDCT if asked), and False (not yet in the output type);
    None without the cropping decoder or when libjpeg cannot decode it."""
    if decode_window is None:
        return None
    left, upper, right, lower = box if box is not None else (0, 0, *image.size)
    raw = np.ascontiguousarray(data).reshape(-1)
    stored = decode_window(raw, "CMYK", upper, left, lower - upper, right - left, fast_idct)
    if stored is None:
        return None
    # Adobe's files store the ink inverted; others the ink itself, as the reference reads them.
    return _ink_to_rgba(255 - stored if "adobe" in image.info else stored), False


def _first_reading(readers, image, box, data):
    """The pixels (inside ``box``, if given) of the first of ``readers`` (functions of
    the image and its bytes giving (H, W, C) pixels or None) that reads ``image``; None
    when none does."""
    for read in readers:
        pixels = read(image, data)
        if pixels is not None:
            if box is not None:
                left, upper, right, lower = box
                pixels = pixels[upper:lower, left:right]
            return pixels
    return None


def _pixels(image, box, data):
    """The stored pixels (inside ``box``, if given) as (H, W, C) uint8 or uint16,
    decoded by Pillow; ``data`` are the encoded bytes."""
    mode = image.mode
    deep = _first_reading((_png_pixels, _pnm16, _tiff16), image, box, data)
    if deep is not None:
        return deep
    if _IN_PLACE_JPEG and image.format == "JPEG" and mode == "RGB":
        values = _decode_rgb_in_place(image, box, data)
        if values is not None:
            return values
    if mode.startswith("I;16") or mode == "I":
        image.load()
        region = image.crop(box) if box is not None else image
        values = np.asarray(region)
        if mode == "I":
            values = np.clip(values, 0, 65535)
        return values.astype(np.uint16)[:, :, None]
    if mode == "F":
        # Floating-point samples (a float TIFF) stand for intensities in [0, 1], as in
        # the reference: kept as they are, then scaled to the output type.
        image.load()
        return np.asarray(image.crop(box) if box is not None else image, np.float32)[:, :, None]
    if mode == "CMYK":
        cmyk = np.asarray(image.crop(box) if box is not None else image)
        if image.format in _JPEG_FORMATS and "adobe" not in image.info:
            # Pillow reads every CMYK JPEG as Adobe's inverted ink; without Adobe's
            # marker the samples are the ink itself, as the reference reads them.
            cmyk = 255 - cmyk
        return _ink_to_rgba(cmyk)
    if mode not in ("RGB", "RGBA", "L", "LA"):
        if mode == "P":
            target = "RGB"  # the reference leaves out a palette's transparency (tRNS)
        elif mode == "PA":
            target = "RGBA"
        elif mode == "1":
            target = "L"
        else:
            target = "RGBA" if "A" in image.getbands() else "RGB"
        image = image.convert(target)
    region = image.crop(box) if box is not None else image
    values = np.asarray(region)
    return values if values.ndim == 3 else values[:, :, None]


def _to_rgb(values):
    channels = values.shape[2]
    if channels <= 2:
        return np.repeat(values[:, :, :1], 3, axis=2)
    return values[:, :, :3]


def _fixed_point_gray(rgb, weights, shift, half):
    """``(R wr + G wg + B wb + half) >> shift`` of unsigned ``rgb`` (H, W, 3), (H, W, 1)."""
    r, g, b = (rgb[:, :, k].astype(np.uint64) for k in range(3))
    wr, wg, wb = weights
    return ((r * wr + g * wg + b * wb + half) >> shift).astype(rgb.dtype)[:, :, None]


def _to_gray(values, rule):
    """Gray from RGB by the rule of the library the reference decodes that format
    with: "libpng" (15-bit weights, 8-bit truncated, 16-bit rounded), "opencv" (14-bit
    weights, rounded; BMP, PNM, turned TIFFs), "bt601" (15-bit weights, rounded; WebP,
    JPEG 2000), "libtiff" (float32, summed in order, halves up), "truncated" (the
    same sum, truncated; CMYK JPEGs), or None (float32, to nearest)."""
    if values.shape[2] <= 2:
        return values[:, :, :1]
    rgb = values[:, :, :3]
    if rule == "libpng" and rgb.dtype.kind == "u":
        return _fixed_point_gray(rgb, _PNG_GRAY_WEIGHTS, 15, 0 if rgb.dtype == np.uint8 else 1 << 14)
    if rule == "opencv" and rgb.dtype.kind == "u":
        return _fixed_point_gray(rgb, _OPENCV_GRAY_WEIGHTS, 14, 1 << 13)
    if rule == "bt601" and rgb.dtype == np.uint8:
        return _fixed_point_gray(rgb, _BT601_GRAY_WEIGHTS, 15, 1 << 14)
    if rule in ("libtiff", "truncated") and rgb.dtype == np.uint8:
        f = rgb.astype(np.float32)
        gray = f[:, :, 0] * _GRAY_WEIGHTS[0] + f[:, :, 1] * _GRAY_WEIGHTS[1] + f[:, :, 2] * _GRAY_WEIGHTS[2]
        if rule == "libtiff":
            gray += np.float32(0.5)
        return np.floor(gray).astype(np.uint8)[:, :, None]
    gray = rgb.astype(np.float32) @ _GRAY_WEIGHTS
    return np.rint(gray).astype(rgb.dtype)[:, :, None]


def to_ycbcr(values, dtype):
    """YCbCr as the reference computes it, in single precision: floats from values in
    [0, 1] with offsets 1/16 and 1/2; integers from the values scaled to the type, with
    offsets 1/16 and 1/2 of (maximum + 1) (16 and 128 for uint8), rounded half up. From
    8-bit RGB to uint8 this equals the reference for all 2^24 colours; to float32 it is
    within 2e-7, to uint16 and int16 within 1 (on 0.06% of values)."""
    rgb = _to_rgb(values)
    if dtype.kind == "f":
        normalized = rgb.astype(np.float32) * (np.float32(1) / np.float32(_top(rgb.dtype)))
        return _weighted_rows(normalized, _YCBCR_OFFSET)
    top = _top(dtype)
    # One factor from the source's range to the type's (1 for 8-bit to uint8, 257 to uint16).
    scaled = rgb.astype(np.float32) * np.float32(top / _top(rgb.dtype))
    ycbcr = _weighted_rows(scaled, _YCBCR_OFFSET * np.float32(top + 1))
    # Bounded in double precision: float32 has no int32 maximum (2**31 - 1 rounds up to 2**31).
    return np.clip(np.floor(ycbcr + np.float32(0.5)).astype(np.float64), 0, top).astype(dtype)


def _weighted_rows(rgb, offsets):
    """Each row of YCBCR_MATRIX applied to float32 ``rgb`` (..., 3) plus its offset, by
    the colour-matrix kernel: summed in the order R, G, B, offset in single precision
    (the order decides which side of a half some values fall on)."""
    coeffs = np.concatenate([YCBCR_MATRIX.reshape(-1), offsets, np.zeros(3, np.float32)])
    out = np.empty(rgb.shape, np.float32)
    color_matrix(np.ascontiguousarray(rgb).reshape(-1, 3), out.reshape(-1, 3), coeffs.astype(np.float32))
    return out


def _convert(values, output_type, dtype, gray_rule):
    """The colour conversion; integer values at the source's depth, or floats in [0, 1]."""
    if output_type == DALIImageType.ANY_DATA:
        return values
    if output_type == DALIImageType.GRAY:
        return _to_gray(values, gray_rule)
    if output_type == DALIImageType.YCbCr:
        return to_ycbcr(values, dtype)
    rgb = _to_rgb(values)
    return rgb[:, :, ::-1] if output_type == DALIImageType.BGR else rgb


def _top(dtype):
    """The value that stands for full intensity in ``dtype``."""
    return 1.0 if dtype.kind == "f" else np.iinfo(dtype).max


def _scale(values, dtype):
    """``values`` (uint8, uint16 or floats in [0, 1]) as ``dtype``, scaled to its range."""
    if values.dtype == dtype:
        return np.ascontiguousarray(values)
    if dtype == np.uint16 and values.dtype == np.uint8:
        return values.astype(np.uint16) * np.uint16(257)
    # Single precision, as the reference: times the reciprocal of the source's maximum
    # (127 of uint8 is 0.49803925, one unit in the last place above 127 / 255), then
    # times the target's, so int32 results keep only 24 significant bits.
    scaled = values.astype(np.float32)
    if values.dtype.kind != "f":
        scaled *= np.float32(1) / np.float32(_top(values.dtype))
    scaled *= np.float32(_top(dtype))
    if dtype.kind == "f":
        return scaled.astype(dtype)
    return _saturate(scaled, dtype)


def _saturate(values, dtype):
    """Float ``values`` rounded and saturated to the integer ``dtype``. The bounds are
    applied in double precision: float32 has no int32 or uint32 maximum (2**31 - 1
    rounds up to 2**31, which the cast would wrap)."""
    return np.clip(np.rint(values.astype(np.float64)), 0, _top(dtype)).astype(dtype)


def _memory_error(image):
    """The error of an image whose pixels would fill more than half of the machine's
    memory (None for the others): a damaged header (a size field of a few bytes may
    claim billions of pixels) would otherwise have the process killed for lack of
    memory."""
    width, height = image.size
    # The decoding's own buffer: up to 4 channels of up to 4 bytes (16-bit and
    # float images), the output being no larger.
    wide = image.mode in ("I", "F") or image.mode.startswith("I;16")
    needed = width * height * _native_channels(image) * (4 if wide else 1)
    if not exceeds_half_of_memory(needed):
        return None
    memory = physical_memory_bytes()
    return ValueError(
        f"the image's header says {width}x{height} pixels ({needed / 2**30:.1f} GiB decoded), more "
        f"than half of this machine's memory ({memory / 2**30:.1f} GiB): a damaged header, or an "
        "image too large to decode here"
    )


def decode(image, data, *, output_type, dtype, orient, window=None, fast_idct=False):
    """Decode ``image`` (from ``open_image``) to an (H, W, C) array.

    Parameters
    ----------
    image : PIL.Image.Image
    data : numpy.ndarray
        The encoded bytes ``image`` was opened from.
    output_type : DALIImageType
    dtype : numpy.dtype
        uint8, uint16 or float32.
    orient : int
        EXIF orientation to apply (1: none).
    window : tuple of int, optional
        (y, x, h, w) in the oriented image; the whole image when omitted.
    fast_idct : bool
        Decode JPEGs with libjpeg-turbo's fast integer IDCT (as the reference's
        ``use_fast_idct``): a little faster, a little less accurate.
    """
    failed = getattr(image, "ndd_load_error", None)
    if failed is not None:
        raise failed
    box = None
    if window is not None:
        width, height = _stored_size(image)
        box = _source_box(orient, window, height, width)
        if window[2] == 0 or window[3] == 0:
            channels = channel_count(image, output_type)
            return np.zeros((window[2], window[3], channels), dtype)
    applied = _pillow_orientation(image)
    fast = _jpeg_pixels(image, box, data, output_type, fast_idct)
    if fast is None:
        # Stored pixels, before any orientation, whatever Pillow would apply.
        stored = _first_reading(
            (_bmp_pixels, _raw_tiff_pixels, _deflate_tiff_pixels, _opencv_webp_pixels, _opencv_jp2_pixels),
            image,
            box,
            data,
        )
        fast = None if stored is None else (stored, False)
    if fast is not None:
        values, converted = fast
    elif applied != 1:
        # Back to the stored pixels, which the orientation and the window refer to.
        values, converted = _orient(_pixels(image, None, data), _INVERSE_ORIENTATION[applied]), False
        if box is not None:
            left, upper, right, lower = box
            values = values[upper:lower, left:right]
    else:
        if isinstance(image, _JpegHeader):
            image = Image.open(io.BytesIO(np.ascontiguousarray(data).reshape(-1)))
        elif isinstance(image, _WebpHeader):  # a WebP OpenCV could not decode
            try:
                image = Image.open(io.BytesIO(np.ascontiguousarray(data).reshape(-1)))
            except OSError as exc:
                raise ValueError(f"the WebP data is broken or truncated ({exc})") from None
        if output_type == DALIImageType.GRAY and image.format in _JPEG_FORMATS and image.mode == "RGB":
            # libjpeg gives the stored luma, as the reference and the simplejpeg path do
            # (gray computed from the upsampled RGB differs by a few levels).
            image.draft("L", image.size)
        values, converted = _pixels(image, box, data), False
    if not converted:
        rule = _GRAY_RULES.get(image.format)
        if image.mode == "CMYK":
            rule = "truncated" if image.format in _JPEG_FORMATS else "opencv"
        if rule == "libtiff" and orient != 1:
            rule = "opencv"
        values = _convert(values, output_type, dtype, rule)
    return _scale(_orient(values, orient), dtype)
