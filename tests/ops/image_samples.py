"""Small deterministic test images, encoded with Pillow (and arrays for .npy files).

Shared by the decoder tests and the script that records the reference's decoder
goldens (``tests/golden/make_decoder_goldens.py``, run with the reference's
interpreter): both rebuild exactly the same encoded bytes from these recipes, so the
goldens store only what the reference decoded. Other tests may import it for
ready-made encoded images.

``encoded(name)`` gives the bytes of one named sample; ``SAMPLE_NAMES`` and
``LATER_SAMPLE_NAMES`` list them.
Every recipe depends only on numpy and Pillow with fixed seeds and settings.
"""

import io
import struct
import zlib

import numpy as np
from PIL import Image

__all__ = [
    "HEIGHT",
    "WIDTH",
    "SAMPLE_NAMES",
    "LATER_SAMPLE_NAMES",
    "EXIF_ORIENTATIONS",
    "encoded",
    "pixels",
    "png_rgb16",
    "npy_recipe",
]

# Odd sizes: JPEG's 8x8/16x16 blocks and chroma subsampling do not divide them.
HEIGHT, WIDTH = 23, 31


def pixels(height=HEIGHT, width=WIDTH, channels=3, seed=0):
    """Smooth gradients with a little noise, uint8 (H, W, C)."""
    rng = np.random.default_rng(seed)
    y = np.linspace(0, 1, height)[:, None]
    x = np.linspace(0, 1, width)[None, :]
    planes = [
        40 + 170 * x + 20 * y,
        220 - 160 * y + 10 * x,
        90 + 120 * x * y + 40 * np.sin(6 * x),
        255 - 200 * x * (1 - y),
    ]
    image = np.stack(planes[:channels], axis=-1)
    image += rng.normal(0, 6, image.shape)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def _save(image, fmt, **options):
    buf = io.BytesIO()
    image.save(buf, format=fmt, **options)
    return buf.getvalue()


def _filter_rows(rows, pixel_bytes, kinds):
    """PNG-filter ``rows`` (H, bytes per row, uint8) with filter type ``kinds[y % len]``;
    each row is prefixed with its type byte."""
    out = []
    previous = np.zeros_like(rows[0])
    for y, row in enumerate(rows):
        kind = kinds[y % len(kinds)]
        cur = row.astype(np.int32)
        up = previous.astype(np.int32)
        left = np.concatenate([np.zeros(pixel_bytes, np.int32), cur[:-pixel_bytes]])
        up_left = np.concatenate([np.zeros(pixel_bytes, np.int32), up[:-pixel_bytes]])
        if kind == 0:
            predicted = np.zeros_like(cur)
        elif kind == 1:
            predicted = left
        elif kind == 2:
            predicted = up
        elif kind == 3:
            predicted = (left + up) // 2
        else:
            p = left + up - up_left
            pa, pb, pc = np.abs(p - left), np.abs(p - up), np.abs(p - up_left)
            predicted = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, up_left))
        out.append(bytes([kind]) + ((cur - predicted) % 256).astype(np.uint8).tobytes())
        previous = row
    return b"".join(out)


def png_rgb16(array, filters=(0,)):
    """A 16-bit gray+alpha, RGB or RGBA PNG of ``array`` (uint16, H x W x 2, 3 or 4),
    which Pillow cannot write; rows use the PNG filter types ``filters`` in turn."""
    height, width, channels = array.shape
    rows = np.frombuffer(array.astype(">u2").tobytes(), np.uint8).reshape(height, width * channels * 2)
    raw = _filter_rows(rows, channels * 2, filters)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    colour = {2: 4, 3: 2, 4: 6}[channels]  # PNG colour types: gray+alpha, RGB, RGBA
    header = struct.pack(">IIBBBBB", width, height, 16, colour, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def _rgb():
    return Image.fromarray(pixels())


def _gray():
    return Image.fromarray(pixels(channels=1)[:, :, 0])


def _rgba():
    return Image.fromarray(pixels(channels=4), "RGBA")


def _exif_jpeg(orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation
    return _save(_rgb(), "JPEG", quality=95, subsampling=0, exif=exif.tobytes())


def _noise16(channels):
    """16-bit values over the whole range, so that every way of narrowing them to
    8 bits (dropping the low byte, rounding v / 257) gives a different result."""
    rng = np.random.default_rng(16)
    return rng.integers(0, 65536, (HEIGHT, WIDTH, channels), dtype=np.uint16)


def _gray16():
    return _save(Image.fromarray(_noise16(1)[:, :, 0]), "PNG")


def _rgb16():
    return png_rgb16(_noise16(3))


def _smooth16(channels):
    """16-bit gradients (which the PNG filters predict well) with a little noise."""
    return pixels(channels=channels).astype(np.uint16) * 257 + np.uint16(3) * _noise16(channels) // 8192


EXIF_ORIENTATIONS = tuple(range(1, 9))

_RECIPES = {
    "jpeg_q95_444": lambda: _save(_rgb(), "JPEG", quality=95, subsampling=0),
    "jpeg_q90_422": lambda: _save(_rgb(), "JPEG", quality=90, subsampling=1),
    "jpeg_q75_420": lambda: _save(_rgb(), "JPEG", quality=75, subsampling=2),
    "jpeg_q50_420": lambda: _save(_rgb(), "JPEG", quality=50, subsampling=2),
    "jpeg_progressive": lambda: _save(_rgb(), "JPEG", quality=85, progressive=True),
    "jpeg_gray": lambda: _save(_gray(), "JPEG", quality=90),
    "png_rgb": lambda: _save(_rgb(), "PNG"),
    "png_rgba": lambda: _save(_rgba(), "PNG"),
    "png_gray": lambda: _save(_gray(), "PNG"),
    "png_gray_alpha": lambda: _save(_rgba().convert("LA"), "PNG"),
    "png_palette": lambda: _save(_rgb().quantize(16, dither=Image.Dither.NONE), "PNG"),
    "png_gray16": _gray16,
    "png_rgb16": _rgb16,
    "png_rgb16_filters": lambda: png_rgb16(_smooth16(3), filters=(0, 1, 2, 3, 4)),
    "png_rgba16_filters": lambda: png_rgb16(_smooth16(4), filters=(4, 3, 2, 1, 0)),
    "bmp_rgb": lambda: _save(_rgb(), "BMP"),
    "tiff_rgb": lambda: _save(_rgb(), "TIFF"),
    "tiff_gray": lambda: _save(_gray(), "TIFF"),
    "webp_lossless": lambda: _save(_rgb(), "WEBP", lossless=True),
    "webp_rgba_lossless": lambda: _save(_rgba(), "WEBP", lossless=True),
    "webp_lossy": lambda: _save(_rgb(), "WEBP", quality=80, method=0),
    "jpeg2000_lossless": lambda: _save(_rgb(), "JPEG2000", irreversible=False),
    "ppm_rgb": lambda: _save(_rgb(), "PPM"),
    "pgm_gray": lambda: _save(_gray(), "PPM"),
}
for _orientation in EXIF_ORIENTATIONS:
    _RECIPES[f"jpeg_exif{_orientation}"] = lambda o=_orientation: _exif_jpeg(o)

SAMPLE_NAMES = tuple(_RECIPES)


def _ramp():
    """Every 8-bit value, white included: a 16 x 16 RGB image of 0..255."""
    return Image.fromarray(np.repeat(np.arange(256, dtype=np.uint8).reshape(16, 16, 1), 3, axis=2))


def _gray_alpha16():
    """A 16-bit gray+alpha PNG (Pillow writes none): gray 0, 7, 14, ..., alpha its mirror."""
    gray = (np.arange(HEIGHT * WIDTH, dtype=np.uint32) * 7 % 65536).astype(np.uint16).reshape(HEIGHT, WIDTH)
    return png_rgb16(np.stack([gray, 65535 - gray], axis=-1))


def _tiff_oriented(orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation
    return _save(_rgb(), "TIFF", exif=exif)


def _stripes():
    """Red and blue columns one pixel wide: their luma and the luma of their upsampled
    chroma differ most."""
    columns = np.where(np.arange(WIDTH) % 2 == 0, 0, 1)
    colours = np.array([[255, 0, 0], [0, 0, 255]], np.uint8)
    return Image.fromarray(np.repeat(colours[columns][None], HEIGHT, axis=0))


def _palette_with_transparency():
    image = _rgb().quantize(16, dither=Image.Dither.NONE)
    return _save(image, "PNG", transparency=3)


def _cmyk():
    return _save(Image.fromarray(pixels(channels=4, seed=5), "CMYK"), "JPEG", quality=90)


# Samples added after the first goldens; not in SAMPLE_NAMES, so that the goldens
# recorded over SAMPLE_NAMES keep their case ids.
_LATER_RECIPES = {
    "png_ramp": lambda: _save(_ramp(), "PNG"),
    "png_gray_alpha16": _gray_alpha16,
    "tiff_exif3": lambda: _tiff_oriented(3),
    "tiff_exif6": lambda: _tiff_oriented(6),
    "jpeg_stripes_420": lambda: _save(_stripes(), "JPEG", quality=90, subsampling=2),
    "png_palette_trns": _palette_with_transparency,
    "jpeg_cmyk": _cmyk,
}
LATER_SAMPLE_NAMES = tuple(_LATER_RECIPES)


def encoded(name):
    """The encoded bytes of sample ``name`` as a uint8 numpy array."""
    recipe = _RECIPES.get(name) or _LATER_RECIPES[name]
    return np.frombuffer(recipe(), dtype=np.uint8)


def npy_recipe(name):
    """A small array to save as a .npy file, by name."""
    return {
        "arange_i16_3x4": lambda: np.arange(12, dtype=np.int16).reshape(3, 4) - 5,
        "arange_f64_2x3_fortran": lambda: np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3) / 4),
        "scalar_u8": lambda: np.array(5, np.uint8),
        "bools": lambda: np.array([True, False, True]),
        "arange_f32_2x3": lambda: np.arange(6, dtype=np.float32).reshape(2, 3) * 1.7 - 3,
        "big_endian_i32": lambda: np.arange(6, dtype=">i4"),
    }[name]()
