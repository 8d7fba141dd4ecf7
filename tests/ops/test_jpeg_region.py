"""The cropping JPEG decoder (``ndd/_cpu/jpeg_region.pyx``): a window decoded alone
is the same window cut from the whole image decoded by Pillow, for every chroma
sampling, progressive and arithmetic streams, restart markers, and windows at every
edge; the ink of CMYK streams as stored; streams it does not take come back as None."""

import io
import os
import pathlib

import image_samples
import numpy as np
import pytest
from PIL import Image

if os.path.exists("/usr/include/jpeglib.h"):
    # Where libjpeg-turbo's headers are, the build must not have left the decoder out.
    from ndd._cpu import jpeg_region
else:
    jpeg_region = pytest.importorskip("ndd._cpu.jpeg_region")

STREAMS = pathlib.Path(__file__).parent / "jpeg_streams"


def _pillow_jpeg(image, **options):
    buf = io.BytesIO()
    image.save(buf, "JPEG", quality=90, **options)
    return buf.getvalue()


def _streams():
    small = Image.fromarray(image_samples.pixels(29, 37))
    wide = Image.fromarray(image_samples.pixels(71, 133, seed=2))
    tiny = Image.fromarray(image_samples.pixels(5, 7, seed=3))
    streams = {}
    for name, image in [("small", small), ("wide", wide), ("tiny", tiny)]:
        for sampling in ("4:4:4", "4:2:2", "4:2:0"):
            streams[f"{name}_{sampling}"] = _pillow_jpeg(image, subsampling=sampling)
            streams[f"{name}_{sampling}_progressive"] = _pillow_jpeg(
                image, subsampling=sampling, progressive=True
            )
        streams[f"{name}_gray"] = _pillow_jpeg(image.convert("L"))
    streams["wide_restart"] = _pillow_jpeg(wide, restart_marker_blocks=3)
    for path in sorted(STREAMS.glob("*.jpg")):
        streams[path.stem] = path.read_bytes()
    return streams


_STREAMS = _streams()


def _whole(data, colorspace):
    """The whole image as libjpeg decodes it through Pillow: RGB (gray repeated), BGR,
    or GRAY (the stored luma of a colour image)."""
    image = Image.open(io.BytesIO(data))
    if colorspace == "GRAY":
        if image.mode != "L":
            image.draft("L", image.size)
        return np.asarray(image)[:, :, None]
    rgb = np.asarray(image.convert("RGB"))
    return rgb[:, :, ::-1] if colorspace == "BGR" else rgb


def _windows(height, width, rng):
    """Windows (top, left, height, width): the whole image, its corners, bands along
    every edge, and random ones."""
    windows = [
        (0, 0, height, width),
        (0, 0, 1, 1),
        (height - 1, width - 1, 1, 1),
        (0, width - 1, height, 1),
        (height - 1, 0, 1, width),
        (height // 2, 0, height - height // 2, width),
        (0, width // 3, height, width - width // 3),
    ]
    for _ in range(12):
        h, w = int(rng.integers(1, height + 1)), int(rng.integers(1, width + 1))
        windows.append((int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1)), h, w))
    return windows


@pytest.mark.parametrize("name", sorted(_STREAMS))
@pytest.mark.parametrize("colorspace", ["RGB", "BGR", "GRAY"])
def test_window_equals_the_window_of_the_whole_image(name, colorspace):
    data = _STREAMS[name]
    expected = _whole(data, colorspace)
    raw = np.frombuffer(data, np.uint8)
    height, width = expected.shape[:2]
    for top, left, h, w in _windows(height, width, np.random.default_rng(len(name))):
        got = jpeg_region.decode_window(raw, colorspace, top, left, h, w)
        assert got is not None, (top, left, h, w)
        np.testing.assert_array_equal(
            got, expected[top : top + h, left : left + w], err_msg=str((top, left, h, w))
        )


def test_rows_wider_than_the_first_scratch():
    # 16 rows of 3 x 2000 bytes do not fit the first 64 KiB of scratch: it grows.
    image = Image.fromarray(np.tile(image_samples.pixels(20, 100), (1, 20, 1)))
    data = _pillow_jpeg(image)
    expected = _whole(data, "RGB")
    got = jpeg_region.decode_window(np.frombuffer(data, np.uint8), "RGB", 3, 5, 17, 1990)
    np.testing.assert_array_equal(got, expected[3:20, 5:1995])


@pytest.mark.parametrize(
    "window", [(0, 0, 30, 37), (0, 0, 29, 38), (-1, 0, 5, 5), (0, -1, 5, 5), (0, 0, 0, 5), (0, 0, 5, 0)]
)
def test_window_outside_the_image_is_not_decoded(window):
    raw = np.frombuffer(_STREAMS["small_4:2:0"], np.uint8)
    assert jpeg_region.decode_window(raw, "RGB", *window) is None


@pytest.mark.parametrize("progressive", [False, True])
def test_cmyk_windows_are_the_stored_samples(progressive):
    cmyk = Image.fromarray(image_samples.pixels(29, 37, channels=4), "CMYK")
    data = _pillow_jpeg(cmyk, progressive=progressive)
    # Pillow reads the samples of every CMYK JPEG inverted (Adobe's convention).
    stored = 255 - np.asarray(Image.open(io.BytesIO(data)))
    raw = np.frombuffer(data, np.uint8)
    for top, left, h, w in _windows(29, 37, np.random.default_rng(4)):
        got = jpeg_region.decode_window(raw, "CMYK", top, left, h, w)
        np.testing.assert_array_equal(got, stored[top : top + h, left : left + w])


@pytest.mark.parametrize("colorspace", ["RGB", "BGR", "GRAY"])
def test_cmyk_gives_only_its_ink(colorspace):
    cmyk = Image.fromarray(image_samples.pixels(channels=4), "CMYK")
    raw = np.frombuffer(_pillow_jpeg(cmyk), np.uint8)
    assert jpeg_region.decode_window(raw, colorspace, 0, 0, 5, 5) is None


def test_only_cmyk_gives_ink():
    raw = np.frombuffer(_STREAMS["small_4:2:0"], np.uint8)
    assert jpeg_region.decode_window(raw, "CMYK", 0, 0, 5, 5) is None


@pytest.mark.parametrize("damage", ["truncated", "bytes before a marker", "not a JPEG", "empty"])
def test_damaged_streams_are_left_to_the_other_decoder(damage):
    data = _STREAMS["wide_4:2:0"]
    scan = data.index(b"\xff\xda")
    damaged = {
        "truncated": data[: len(data) // 2],
        # libjpeg only warns here, and would decode the image; the careful decoder decides.
        "bytes before a marker": data[:scan] + b"\x00\x11" + data[scan:],
        "not a JPEG": b"\x89PNG\r\n\x1a\n" + data[8:],
        "empty": b"",
    }[damage]
    raw = np.frombuffer(damaged, np.uint8)
    assert jpeg_region.decode_window(raw, "RGB", 60, 0, 11, 133) is None
