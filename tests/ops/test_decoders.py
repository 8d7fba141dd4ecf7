"""Image decoders, peek_image_shape, io.file.read and imread: against the
reference's outputs (tests/golden/decoder_cases.json, made by
tests/golden/make_decoder_goldens.py from the images of image_samples.py), Pillow
and numpy.

Exactness: pixels are bit-exact with the reference for RGB, BGR and ANY_DATA of
every format, for GRAY of PNG images and for YCbCr of 8-bit images as uint8. GRAY of
other sources, other YCbCr, and 16-bit images are within 1 of the reference (its
single-precision arithmetic rounds a few halves the other way).
"""

import functools
import io
import itertools
import json
import os
import pathlib
import re
import struct
import zlib

import image_samples
import numpy as np
import PIL
import pytest
from lz4_blocks import lz4_compress
from PIL import Image, ImageOps, TiffImagePlugin

import ndd
from ndd import types
from ndd._cpu.pixels import unfilter_png
from ndd._ops.image_codec import ImageDecodeError

GOLDEN_DIR = pathlib.Path(__file__).parent.parent / "golden"
_SHAPE = (image_samples.HEIGHT, image_samples.WIDTH, 3)


@functools.cache
def _goldens():
    cases = json.loads((GOLDEN_DIR / "decoder_cases.json").read_text(encoding="utf-8"))["cases"]
    with np.load(GOLDEN_DIR / "decoder_values.npz") as npz:
        values = {k: npz[k] for k in npz.files}
    return cases, values


def _kwargs(kwargs):
    out = {}
    for name, value in kwargs.items():
        if name in ("output_type", "image_type"):
            value = getattr(types, value)
        elif name == "dtype":
            value = getattr(types, value)
        elif isinstance(value, dict) and "batch" in value:
            value = ndd.batch([np.array(v, dtype=np.float32) for v in value["batch"]])
        out[name] = value
    return out


def _call(case):
    if "samples" in case:
        data = ndd.batch([image_samples.encoded(s) for s in case["samples"]])
    else:
        data = ndd.tensor(image_samples.encoded(case["sample"]))
    op = case["op"]
    fn = ndd.peek_image_shape if op == "peek_image_shape" else getattr(ndd.decoders, op)
    inputs = [data] + [np.array(p["values"], dtype=p["dtype"]) for p in case.get("positional", [])]
    result = fn(*inputs, **_kwargs(case["kwargs"]))
    if "samples" in case:
        return [np.asarray(x) for x in result]
    return [np.asarray(result)]


def _tolerance(case):
    """Largest difference allowed, in steps of the output type (1/255 of its range;
    for 32-bit types, float32's precision at the top of the range)."""
    kwargs = case["kwargs"]
    names = case.get("samples") or [case["sample"]]
    if kwargs.get("dtype") in ("INT32", "UINT32"):
        # Single-precision scaling, rounded in another order; YCbCr's sums of three
        # products round a few times more.
        return 16 if kwargs.get("output_type") == "YCbCr" else 1
    output_type = kwargs.get("output_type", "RGB")
    if output_type == "YCbCr" and (kwargs.get("dtype", "UINT8") != "UINT8" or any("16" in n for n in names)):
        return 1
    if output_type == "GRAY" and not all(n.startswith("png") and "16" not in n for n in names):
        return 1
    return 0


# Calls the reference fails on and ndd answers; test_reference_failures_ndd_answers
# checks what ndd gives instead.
_REFERENCE_FAILS = {
    ("image", "png_gray_alpha", '{"output_type": "ANY_DATA"}'),
    ("image_slice", "*", '{"end": [20], "start": [4]}'),
}


def _reference_fails(case):
    kwargs = json.dumps(case["kwargs"], sort_keys=True)
    return (case["op"], case.get("sample"), kwargs) in _REFERENCE_FAILS or (
        case["op"],
        "*",
        kwargs,
    ) in _REFERENCE_FAILS


def _golden_cases():
    cases, _ = _goldens()
    return [c for c in cases if c["op"] != "numpy" and not _reference_fails(c)]


def _case_id(case):
    where = case.get("sample") or "+".join(case["samples"])
    return f"{case['id']}-{where}-{json.dumps(case['kwargs'], sort_keys=True)}"


@pytest.mark.parametrize("case", _golden_cases(), ids=_case_id)
def test_matches_reference(case):
    _, values = _goldens()
    if case["expected"] == "error":
        with pytest.raises((RuntimeError, ValueError, TypeError)):
            _call(case)
        return
    got = _call(case)
    keys = [f"{case['id']}/{i}" for i in range(len(got))] if "samples" in case else [case["id"]]
    for key, ours in zip(keys, got, strict=True):
        expected = values[key]
        assert ours.dtype == expected.dtype
        assert ours.shape == expected.shape
        if case["op"] == "peek_image_shape":
            np.testing.assert_array_equal(ours, expected)
            continue
        top = 1.0 if ours.dtype.kind == "f" else np.iinfo(ours.dtype).max
        if ours.dtype.kind == "f" or ours.dtype.itemsize < 4:
            step = max(top / 255, 1) if ours.dtype.kind != "f" else top / 255
        else:
            step = top / 2**23  # float32 precision
        tol = _tolerance(case)
        diff = np.abs(ours.astype(np.float64) - expected.astype(np.float64))
        if ours.dtype == np.float32:
            assert diff.max() <= tol * step + 1e-6
        else:
            assert diff.max() <= tol * step
        if (
            tol == 1
            and ours.dtype == np.uint8
            and "png_rgb16" not in (case.get("samples") or [case["sample"]])
        ):
            # Off-by-one values are rare: rounding of exact halves only.
            assert np.count_nonzero(diff) <= 0.01 * diff.size + 1


def _signature_params(fn):
    import inspect

    return [
        [p.name, p.kind.name, p.default is inspect.Parameter.empty]
        for p in inspect.signature(fn).parameters.values()
    ]


@pytest.mark.parametrize(
    "path", sorted(json.loads((GOLDEN_DIR / "decoder_cases.json").read_text(encoding="utf-8"))["signatures"])
)
def test_signature_matches_reference(path):
    expected = json.loads((GOLDEN_DIR / "decoder_cases.json").read_text(encoding="utf-8"))["signatures"][path]
    fn = ndd
    for part in path.split("."):
        fn = getattr(fn, part)
    assert _signature_params(fn) == expected


def _pil(name):
    return Image.open(io.BytesIO(image_samples.encoded(name).tobytes()))


def test_gray_alpha_any_data_keeps_both_channels():
    # The reference fails on this call; ndd returns the two stored channels.
    out = ndd.decoders.image(ndd.tensor(image_samples.encoded("png_gray_alpha")), output_type=types.ANY_DATA)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(_pil("png_gray_alpha")))


def test_gray_jpeg_any_data_is_one_channel():
    # This call crashes the reference's process; ndd returns the stored gray channel.
    out = ndd.decoders.image(ndd.tensor(image_samples.encoded("jpeg_gray")), output_type=types.ANY_DATA)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(_pil("jpeg_gray"))[:, :, None])


def test_slice_value_for_every_axis():
    # The reference rejects a single start/end value; ndd applies it to both axes, as ndd.slice.
    data = ndd.tensor(image_samples.encoded("png_rgb"))
    one = ndd.decoders.image_slice(data, start=[4], end=[20])
    both = ndd.decoders.image_slice(data, start=[4, 4], end=[20, 20])
    np.testing.assert_array_equal(np.asarray(one), np.asarray(both))


@pytest.mark.parametrize("orientation", image_samples.EXIF_ORIENTATIONS)
def test_exif_orientation_as_pillow_transposes(orientation):
    name = f"jpeg_exif{orientation}"
    out = ndd.decoders.image(ndd.tensor(image_samples.encoded(name)))
    expected = np.asarray(ImageOps.exif_transpose(_pil(name)).convert("RGB"))
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_metadata_known_before_decoding():
    with ndd.EvalMode.deferred:
        out = ndd.decoders.image(ndd.tensor(image_samples.encoded("png_rgb")), dtype=ndd.float32)
        assert out.dtype == ndd.float32
        assert out.layout == "HWC"


def test_batch_of_formats_matches_samples():
    names = ["jpeg_q75_420", "png_rgba", "jpeg_exif6", "webp_lossless", "bmp_rgb", "tiff_gray"]
    out = ndd.decoders.image(ndd.batch([image_samples.encoded(n) for n in names]), output_type=types.BGR)
    assert isinstance(out, ndd.Batch)
    for name, sample in zip(names, out, strict=True):
        single = ndd.decoders.image(ndd.tensor(image_samples.encoded(name)), output_type=types.BGR)
        np.testing.assert_array_equal(np.asarray(sample), np.asarray(single))


def test_batch_decodes_on_the_thread_pool(monkeypatch):
    import threading

    from ndd._ops import image_codec

    threads = set()
    decode = image_codec.decode

    def recording_decode(*args, **kwargs):
        threads.add(threading.get_ident())
        return decode(*args, **kwargs)

    monkeypatch.setattr(image_codec, "decode", recording_decode)
    data = ndd.batch([image_samples.encoded("jpeg_q95_444")] * 16)
    with ndd.EvalContext(num_threads=2):
        out = ndd.decoders.image(data)
        assert len(list(out)) == 16
    assert threading.get_ident() not in threads


@pytest.mark.parametrize(
    "name", ["jpeg_q75_420", "jpeg_progressive", "jpeg_q90_422", "jpeg_exif8", "jpeg_gray"]
)
@pytest.mark.parametrize("pos_y", [0.0, 0.3, 1.0])
def test_crop_decodes_the_window_of_the_whole_image(name, pos_y):
    # JPEG crops stop decoding at the window's bottom row; the pixels are those of
    # the whole image, whose decoding matches the reference.
    data = ndd.tensor(image_samples.encoded(name))
    full = np.asarray(ndd.decoders.image(data))
    crop = np.asarray(ndd.decoders.image_crop(data, crop=(7, 9), crop_pos_x=0.4, crop_pos_y=pos_y))
    y = int(np.floor(np.float32(pos_y) * (full.shape[0] - 7) + 0.5))
    x = int(np.floor(float(np.float32(0.4)) * (full.shape[1] - 9) + 0.5))
    np.testing.assert_array_equal(crop, full[y : y + 7, x : x + 9])


@pytest.mark.parametrize("keep", [0.5, 0.97])
def test_crop_of_a_truncated_jpeg_fails(keep):
    encoded = image_samples.encoded("jpeg_q95_444")
    data = ndd.tensor(encoded[: int(len(encoded) * keep)])
    with pytest.raises(RuntimeError, match="truncated|broken"):
        np.asarray(ndd.decoders.image_crop(data, crop=(20, 9), crop_pos_y=1.0))


# -- JPEGs decoded by simplejpeg, with Pillow as the fallback -------------------------------

_JPEG_SAMPLES = [n for n in image_samples.SAMPLE_NAMES if n.startswith("jpeg_") and n != "jpeg2000_lossless"]
_PHOTOS = sorted((pathlib.Path(ndd.__file__).parent / "_sample_data" / "photos").glob("*.jpg"))
_COLOUR_TYPES = ["RGB", "BGR", "GRAY", "YCbCr", "ANY_DATA"]


def _pillow_only(monkeypatch):
    from ndd._ops import image_codec

    monkeypatch.setattr(image_codec, "_jpeg_pixels", lambda *args: None)


def _no_pillow_pixels(monkeypatch):
    from ndd._ops import image_codec

    def refuse(*args):
        raise AssertionError("Pillow decoded the pixels")

    monkeypatch.setattr(image_codec, "_pixels", refuse)


def _decode_variants(data, output_type, upper_window=True):
    """Whole image, a window in the upper part (Pillow decodes it for a colour JPEG: it
    stops at its bottom row), windows reaching the bottom row."""
    data = ndd.tensor(data)
    kind = getattr(types, output_type)
    windows = [(0.3, 0.0), (0.6, 1.0)] if upper_window else [(0.6, 1.0)]
    out = [ndd.decoders.image(data, output_type=kind)]
    for pos_x, pos_y in windows:
        out.append(
            ndd.decoders.image_crop(data, crop=(7, 9), crop_pos_x=pos_x, crop_pos_y=pos_y, output_type=kind)
        )
    out.append(ndd.decoders.image_slice(data, rel_start=[0.0, 0.5], rel_end=[1.0, 1.0], output_type=kind))
    return [np.asarray(x) for x in out]


@pytest.mark.parametrize("name", ["jpeg_q75_420", "jpeg_progressive", "jpeg_gray", "jpeg_exif2"])
@pytest.mark.parametrize("output_type", _COLOUR_TYPES)
def test_jpeg_is_decoded_by_simplejpeg(monkeypatch, name, output_type):
    upper_window = name == "jpeg_gray"
    expected = _decode_variants(image_samples.encoded(name), output_type, upper_window)
    _no_pillow_pixels(monkeypatch)
    got = _decode_variants(image_samples.encoded(name), output_type, upper_window)
    for ours, theirs in zip(got, expected, strict=True):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name", _JPEG_SAMPLES)
@pytest.mark.parametrize("output_type", _COLOUR_TYPES)
def test_jpeg_simplejpeg_equals_pillow(monkeypatch, name, output_type):
    data = image_samples.encoded(name)
    fast = _decode_variants(data, output_type)
    _pillow_only(monkeypatch)
    slow = _decode_variants(data, output_type)
    for ours, theirs in zip(fast, slow, strict=True):
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("path", _PHOTOS, ids=lambda p: p.name)
@pytest.mark.parametrize("output_type", ["RGB", "GRAY", "ANY_DATA"])
def test_photo_simplejpeg_equals_pillow(path, output_type):
    data = np.frombuffer(path.read_bytes(), np.uint8)
    pil = Image.open(io.BytesIO(data.tobytes()))
    out = np.asarray(ndd.decoders.image(ndd.tensor(data), output_type=getattr(types, output_type)))
    if output_type == "GRAY" and pil.mode == "RGB":
        pil.draft("L", pil.size)  # libjpeg's grayscale output: the stored luma plane
        expected = np.asarray(pil)
    elif output_type == "RGB":
        expected = np.asarray(pil.convert("RGB"))
    else:
        expected = np.asarray(pil)
    np.testing.assert_array_equal(out, expected.reshape(out.shape))


def _spy_on_windows(monkeypatch):
    """Record the windows the cropping decoder decodes; refuse whole-image decoding."""
    from ndd._ops import image_codec

    if image_codec.decode_window is None:
        pytest.skip("ndd._cpu.jpeg_region was not built (no libjpeg-turbo headers)")
    windows, decode_window = [], image_codec.decode_window

    def spy(raw, colorspace, top, left, height, width, fast_idct):
        windows.append((top, left, height, width))
        return decode_window(raw, colorspace, top, left, height, width, fast_idct)

    def refuse(*args, **kwargs):
        raise AssertionError("the whole image was decoded")

    monkeypatch.setattr(image_codec, "decode_window", spy)
    monkeypatch.setattr(image_codec.simplejpeg, "decode_jpeg", refuse)
    _no_pillow_pixels(monkeypatch)
    return windows


@pytest.mark.parametrize("orientation", [1, 3, 6, 8])
@pytest.mark.parametrize("output_type", ["RGB", "BGR", "GRAY"])
def test_crop_windows_are_decoded_alone(monkeypatch, orientation, output_type):
    data = ndd.tensor(image_samples.encoded(f"jpeg_exif{orientation}"))
    kind = getattr(types, output_type)
    whole = np.asarray(ndd.decoders.image(data, output_type=kind))
    windows = _spy_on_windows(monkeypatch)
    crop = np.asarray(
        ndd.decoders.image_crop(data, crop=(7, 9), crop_pos_x=0.25, crop_pos_y=0.8, output_type=kind)
    )
    y, x = round(0.8 * (whole.shape[0] - 7)), round(0.25 * (whole.shape[1] - 9))
    np.testing.assert_array_equal(crop, whole[y : y + 7, x : x + 9])
    # Slice's default axes are (x, y).
    sliced = np.asarray(ndd.decoders.image_slice(data, start=[2, 3], shape=[10, 6], output_type=kind))
    np.testing.assert_array_equal(sliced, whole[3:9, 2:12])
    random = np.asarray(ndd.decoders.image_random_crop(data, output_type=kind, rng=ndd.random.RNG(seed=3)))
    assert random.shape[2] == whole.shape[2]
    # The stored image is turned by the orientation: windows are (y, x, h, w) in it.
    stored = [(7, 9), (6, 10), random.shape[:2]]
    if orientation in (6, 8):
        stored = [(w, h) for h, w in stored]
    assert [window[2:] for window in windows] == [tuple(shape) for shape in stored]


@pytest.mark.parametrize("name", _JPEG_SAMPLES)
@pytest.mark.parametrize("output_type", _COLOUR_TYPES)
def test_windows_are_the_same_without_the_cropping_decoder(monkeypatch, name, output_type):
    from ndd._ops import image_codec

    data = image_samples.encoded(name)
    alone = _decode_variants(data, output_type)
    monkeypatch.setattr(image_codec, "decode_window", None)
    cut = _decode_variants(data, output_type)
    for ours, theirs in zip(alone, cut, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_fast_idct_windows_are_decoded_alone(monkeypatch):
    data = ndd.tensor(image_samples.encoded("jpeg_q90_422"))
    whole = np.asarray(ndd.decoders.image(data, use_fast_idct=True))
    windows = _spy_on_windows(monkeypatch)
    crop = np.asarray(
        ndd.decoders.image_crop(data, crop=(7, 9), crop_pos_x=1.0, crop_pos_y=0.5, use_fast_idct=True)
    )
    y = round(0.5 * (whole.shape[0] - 7))
    np.testing.assert_array_equal(crop, whole[y : y + 7, -9:])
    assert windows == [(y, whole.shape[1] - 9, 7, 9)]


@pytest.mark.parametrize("name", ["sampling_1x2", "sampling_4x2_progressive", "sampling_4x1_restart"])
def test_unusual_chroma_sampling_is_decoded_without_pillow(monkeypatch, name):
    from ndd._ops import image_codec

    if image_codec.decode_window is None:
        pytest.skip("ndd._cpu.jpeg_region was not built (no libjpeg-turbo headers)")
    path = pathlib.Path(__file__).parent / "jpeg_streams" / f"{name}.jpg"
    data = ndd.tensor(np.frombuffer(path.read_bytes(), np.uint8))
    expected = np.asarray(Image.open(path).convert("RGB"))
    _no_pillow_pixels(monkeypatch)
    np.testing.assert_array_equal(np.asarray(ndd.decoders.image(data)), expected)
    # The fast IDCT applies to the whole image as to its windows (Pillow has none).
    fast = np.asarray(ndd.decoders.image(data, use_fast_idct=True))
    assert not np.array_equal(fast, expected)
    window = ndd.decoders.image_slice(data, start=[1, 2], shape=[9, 7], use_fast_idct=True)
    np.testing.assert_array_equal(np.asarray(window), fast[2:9, 1:10])


def test_mpo_decodes_its_first_image(monkeypatch):
    first, second = Image.fromarray(image_samples.pixels()), Image.fromarray(image_samples.pixels(seed=1))
    buf = io.BytesIO()
    first.save(buf, "MPO", save_all=True, append_images=[second], quality=90)
    data = np.frombuffer(buf.getvalue(), np.uint8)
    assert Image.open(io.BytesIO(buf.getvalue())).format == "MPO"
    _no_pillow_pixels(monkeypatch)
    out = np.asarray(ndd.decoders.image(ndd.tensor(data)))
    np.testing.assert_array_equal(out, np.asarray(Image.open(io.BytesIO(buf.getvalue()))))


def _without_adobe_marker(data):
    app14 = data.find(b"\xff\xee")
    return data[:app14] + data[app14 + 2 + int.from_bytes(data[app14 + 2 : app14 + 4], "big") :]


@pytest.mark.parametrize("adobe", [True, False])
@pytest.mark.parametrize("output_type", ["RGB", "GRAY", "ANY_DATA"])
def test_cmyk_jpeg_is_decoded_without_pillow_as_pillow_reads_it(monkeypatch, adobe, output_type):
    from ndd._ops import image_codec

    if image_codec.decode_window is None:
        pytest.skip("ndd._cpu.jpeg_region was not built (no libjpeg-turbo headers)")
    buf = io.BytesIO()
    Image.fromarray(image_samples.pixels(channels=4), "CMYK").save(buf, "JPEG", quality=90)
    data = buf.getvalue() if adobe else _without_adobe_marker(buf.getvalue())
    assert ("adobe" in Image.open(io.BytesIO(data)).info) == adobe
    encoded = ndd.tensor(np.frombuffer(data, np.uint8))
    kind = getattr(types, output_type)
    monkeypatch.setattr(image_codec, "decode_window", None)
    by_pillow = np.asarray(ndd.decoders.image(encoded, output_type=kind))
    monkeypatch.undo()
    _no_pillow_pixels(monkeypatch)
    np.testing.assert_array_equal(np.asarray(ndd.decoders.image(encoded, output_type=kind)), by_pillow)
    crop = ndd.decoders.image_crop(encoded, crop=(7, 9), crop_pos_x=0.3, crop_pos_y=0.8, output_type=kind)
    y, x = round(0.8 * (by_pillow.shape[0] - 7)), round(0.3 * (by_pillow.shape[1] - 9))
    np.testing.assert_array_equal(np.asarray(crop), by_pillow[y : y + 7, x : x + 9])
    # The fast IDCT, which Pillow does not offer, applies.
    assert not np.array_equal(
        np.asarray(ndd.decoders.image(encoded, use_fast_idct=True, output_type=kind)), by_pillow
    )


def test_cmyk_jpeg_rgb_is_the_ink_product():
    buf = io.BytesIO()
    Image.fromarray(image_samples.pixels(channels=4), "CMYK").save(buf, "JPEG", quality=90)
    out = np.asarray(ndd.decoders.image(ndd.tensor(np.frombuffer(buf.getvalue(), np.uint8))))
    # (255 - C)(255 - K) / 255 truncated, as the reference (Pillow's convert rounds).
    stored = np.asarray(Image.open(io.BytesIO(buf.getvalue()))).astype(np.int64)
    expected = (255 - stored[:, :, :3]) * (255 - stored[:, :, 3:]) // 255
    np.testing.assert_array_equal(out, expected)


def test_jpeg_header_is_read_without_pillow(monkeypatch):
    from ndd._ops import image_codec

    data = image_samples.encoded("jpeg_progressive")
    expected = np.asarray(_pil("jpeg_progressive"))

    def refuse(*args, **kwargs):
        raise AssertionError("Pillow opened the file")

    monkeypatch.setattr(image_codec.Image, "open", refuse)
    np.testing.assert_array_equal(np.asarray(ndd.decoders.image(ndd.tensor(data))), expected)
    np.testing.assert_array_equal(np.asarray(ndd.peek_image_shape(ndd.tensor(data))), [23, 31, 3])
    gray = image_samples.encoded("jpeg_gray")
    np.testing.assert_array_equal(
        np.asarray(ndd.peek_image_shape(ndd.tensor(gray), image_type=types.ANY_DATA)), [23, 31, 1]
    )


def test_jpeg_with_an_app1_segment_is_opened_by_pillow():
    from ndd._ops import image_codec

    assert isinstance(image_codec.open_image(image_samples.encoded("jpeg_exif1")), Image.Image)
    assert not isinstance(image_codec.open_image(image_samples.encoded("jpeg_q95_444")), Image.Image)


def test_xmp_orientation_is_applied_as_pillow():
    xmp = (
        b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
        b'<rdf:Description xmlns:tiff="http://ns.adobe.com/tiff/1.0/" tiff:Orientation="6"/>'
        b"</rdf:RDF></x:xmpmeta>"
    )
    buf = io.BytesIO()
    Image.fromarray(image_samples.pixels()).save(buf, "JPEG", quality=90)
    # The XMP packet in its APP1 segment after the SOI marker, written here: Pillow
    # writes one (save's xmp=) only from version 11.
    payload = b"http://ns.adobe.com/xap/1.0/\x00" + xmp
    data = (
        buf.getvalue()[:2] + b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload + buf.getvalue()[2:]
    )
    pil = Image.open(io.BytesIO(data))
    # Pillow reads the orientation of a JPEG's XMP from version 11.2; before, it leaves
    # the image as stored, and so does ndd.
    pillow_reads_it = tuple(int(part) for part in PIL.__version__.split(".")[:2]) >= (11, 2)
    assert pil.getexif().get(0x0112) == (6 if pillow_reads_it else None)
    out = np.asarray(ndd.decoders.image(ndd.tensor(np.frombuffer(data, np.uint8))))
    np.testing.assert_array_equal(out, np.asarray(ImageOps.exif_transpose(pil)))


def _decode_error(data):
    with pytest.raises(RuntimeError, match="ndd.decoders.image: cannot decode") as info:
        np.asarray(ndd.decoders.image(ndd.tensor(data)))
    return str(info.value.__cause__)


@pytest.mark.parametrize("keep", [0.5, 0.97])
def test_truncated_jpeg_fails_with_pillows_message(monkeypatch, keep):
    encoded = image_samples.encoded("jpeg_q90_422")
    data = encoded[: int(len(encoded) * keep)]
    message = _decode_error(data)
    assert "runcated" in message
    _pillow_only(monkeypatch)
    assert _decode_error(data) == message


def test_jpeg_with_damaged_data_decodes_as_pillow():
    # Bytes before a marker: libjpeg warns and goes on; simplejpeg (strict) refuses,
    # so Pillow decodes the image, as before.
    from ndd._ops import image_codec

    encoded = image_samples.encoded("jpeg_q95_444").tobytes()
    scan = encoded.index(b"\xff\xda")
    damaged = np.frombuffer(encoded[:scan] + b"\x00\x11" + encoded[scan:], np.uint8)
    assert image_codec._jpeg_pixels(image_codec.open_image(damaged), None, damaged, types.RGB) is None
    out = np.asarray(ndd.decoders.image(ndd.tensor(damaged)))
    np.testing.assert_array_equal(out, np.asarray(Image.open(io.BytesIO(damaged.tobytes())).convert("RGB")))


def test_crop_given_as_a_computed_tensor():
    size = ndd.random.uniform(range=[5, 6], shape=[2], rng=ndd.random.RNG(seed=1))
    out = ndd.decoders.image_crop(ndd.tensor(_DATA), crop=size)
    assert np.asarray(out).shape == (5, 5, 3)


def test_per_sample_crop_arguments():
    names = ["png_rgb", "jpeg_q95_444"]
    data = ndd.batch([image_samples.encoded(n) for n in names])
    out = ndd.decoders.image_crop(
        data, crop=ndd.batch([np.array([5, 7], np.float32), np.array([9, 4], np.float32)]), crop_pos_x=0.0
    )
    for name, sample, (h, w) in zip(names, out, [(5, 7), (9, 4)], strict=True):
        full = np.asarray(ndd.decoders.image(ndd.tensor(image_samples.encoded(name))))
        y = int(np.floor(0.5 * (full.shape[0] - h) + 0.5))
        np.testing.assert_array_equal(np.asarray(sample), full[y : y + h, :w])


def test_random_crop_is_a_window_of_the_image():
    names = ["png_rgb", "jpeg_exif6", "png_rgba", "bmp_rgb"]
    data = ndd.batch([image_samples.encoded(n) for n in names])
    out = ndd.decoders.image_random_crop(data, rng=ndd.random.RNG(seed=3), random_area=[0.2, 0.5])
    again = ndd.decoders.image_random_crop(data, rng=ndd.random.RNG(seed=3), random_area=[0.2, 0.5])
    for name, sample, repeat in zip(names, out, again, strict=True):
        sample = np.asarray(sample)
        np.testing.assert_array_equal(sample, np.asarray(repeat))
        full = np.asarray(ndd.decoders.image(ndd.tensor(image_samples.encoded(name))))
        h, w = sample.shape[:2]
        assert 0.2 * full.shape[0] * full.shape[1] * 0.8 <= h * w <= 0.5 * full.shape[0] * full.shape[1] * 1.2
        assert 0.75 * 0.9 <= w / h <= 4 / 3 * 1.1
        found = [
            (y, x)
            for y in range(full.shape[0] - h + 1)
            for x in range(full.shape[1] - w + 1)
            if np.array_equal(full[y : y + h, x : x + w], sample)
        ]
        assert found


def _png(height, width):
    buffer = io.BytesIO()
    Image.fromarray(np.zeros((height, width, 3), np.uint8)).save(buffer, format="PNG")
    return np.frombuffer(buffer.getvalue(), np.uint8)


def test_random_crop_fallback_window_keeps_to_the_largest_area():
    # Without attempts, the window is the image scaled down to random_area[1]: 50 x 50.
    out = ndd.decoders.image_random_crop(
        ndd.batch([_png(100, 100)] * 20), num_attempts=0, random_area=[0.1, 0.25], rng=ndd.random.RNG(seed=2)
    )
    assert all(np.asarray(sample).shape == (50, 50, 3) for sample in out)


def test_random_crop_default_ratio_range_holds_4_to_3_windows():
    # The default range is [3/4, 4/3] exactly: the whole 3 x 4 image is a window (the
    # reference takes it in 8% of the draws).
    out = ndd.decoders.image_random_crop(ndd.batch([_png(3, 4)] * 2000), rng=ndd.random.RNG(seed=4))
    assert sum(np.asarray(sample).shape == (3, 4, 3) for sample in out) > 40


def test_random_crop_windows_differ_between_samples():
    data = ndd.batch([image_samples.encoded("png_rgb")] * 8)
    out = ndd.decoders.image_random_crop(data, rng=ndd.random.RNG(seed=5))
    assert len({np.asarray(s).tobytes() for s in out}) > 1


def test_experimental_aliases_decode_alike():
    data = ndd.tensor(image_samples.encoded("jpeg_exif7"))
    np.testing.assert_array_equal(
        np.asarray(ndd.experimental.decoders.image_crop(data, crop=(10, 12))),
        np.asarray(ndd.decoders.image_crop(data, crop=(10, 12))),
    )
    np.testing.assert_array_equal(
        np.asarray(ndd.experimental.peek_image_shape(data)), np.asarray(ndd.peek_image_shape(data))
    )


def _corrupt_batch():
    good = image_samples.encoded("jpeg_q95_444")
    truncated = good[: len(good) // 2]
    return ndd.batch([good, truncated, image_samples.encoded("png_rgb")])


def test_corrupt_sample_error_names_operator_and_sample():
    with pytest.raises(RuntimeError, match=r"ndd.decoders.image.*sample 1") as info:
        ndd.decoders.image(_corrupt_batch()).evaluate()
    cause = info.value.__cause__
    assert isinstance(cause, ImageDecodeError)
    assert cause.failed == (1,)


def test_corrupt_sample_keeps_the_other_samples():
    with pytest.raises(RuntimeError) as info:
        ndd.decoders.image(_corrupt_batch()).evaluate()
    decoded = info.value.__cause__.decoded
    assert decoded[1] is None
    np.testing.assert_array_equal(decoded[0], np.asarray(_pil("jpeg_q95_444")))
    np.testing.assert_array_equal(decoded[2], np.asarray(_pil("png_rgb")))


@pytest.mark.parametrize("adjust_orientation", [True, False])
def test_a_png_with_broken_pixel_data_fails_to_decode(adjust_orientation):
    # Reading a PNG's EXIF loads its pixels; that error was taken for a damaged EXIF
    # block and the half-loaded image returned as decoded.
    pixels = np.random.default_rng(0).integers(0, 256, (48, 64, 3), np.uint8)
    stream = io.BytesIO()
    Image.fromarray(pixels).save(stream, "PNG")
    broken = bytearray(stream.getvalue())
    broken[broken.index(b"IDAT") + 40] ^= 0xFF
    encoded = ndd.tensor(np.frombuffer(bytes(broken), np.uint8))
    with pytest.raises(RuntimeError, match="ndd.decoders.image: cannot decode: the PNG image data is broken"):
        np.asarray(ndd.decoders.image(encoded, adjust_orientation=adjust_orientation))
    # The header is sound: its shape is known, as in the reference.
    assert np.asarray(ndd.peek_image_shape(encoded)).tolist() == [48, 64, 3]


def _png_filter(rows, bpp, kinds):
    """PNG-filtered rows (each with its filter type byte first) of ``rows`` (H, bytes) uint8, row ``y``
    with filter type ``kinds[y % len(kinds)]``, as the standard defines them."""
    rows = rows.astype(np.int32)
    above = np.vstack([np.zeros_like(rows[:1]), rows[:-1]])
    left = np.hstack([np.zeros_like(rows[:, :bpp]), rows[:, :-bpp]])[:, : rows.shape[1]]
    upper_left = np.hstack([np.zeros_like(above[:, :bpp]), above[:, :-bpp]])[:, : rows.shape[1]]
    pa, pb, pc = np.abs(above - upper_left), np.abs(left - upper_left), np.abs(left + above - 2 * upper_left)
    paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, above, upper_left))
    predictors = [0 * rows, left, above, (left + above) // 2, paeth]
    out = b""
    for y in range(rows.shape[0]):
        kind = kinds[y % len(kinds)]
        out += bytes([kind]) + ((rows[y] - predictors[kind][y]) % 256).astype(np.uint8).tobytes()
    return out


def _png_file(pixels, colour, interlace, kinds=(2,), after_pixels=b""):
    """A PNG of ``pixels`` (H, W, C, uint8 or uint16), rows filtered with the filter types ``kinds`` in
    turn (each pass of an interlaced image on its own), ``after_pixels`` (whole chunks) after the image
    data."""

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    passes = [
        (0, 0, 8, 8),
        (4, 0, 8, 8),
        (0, 4, 4, 8),
        (2, 0, 4, 4),
        (0, 2, 2, 4),
        (1, 0, 2, 2),
        (0, 1, 1, 2),
    ]
    images = [pixels[y0::dy, x0::dx] for x0, y0, dx, dy in passes] if interlace else [pixels]
    depth = pixels.dtype.itemsize * 8
    body = b""
    for image in images:
        if image.size == 0:
            continue
        rows = image.astype(">u2" if depth == 16 else np.uint8).reshape(image.shape[0], -1).view(np.uint8)
        body += _png_filter(rows, pixels.shape[2] * depth // 8, kinds)
    height, width = pixels.shape[:2]
    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, interlace)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(body))
        + after_pixels
        + chunk(b"IEND", b"")
    )


def _png16(pixels, colour, interlace):
    """A 16-bit PNG of ``pixels`` (H, W, C uint16), every row "Up"-filtered (the
    difference to the row above in the same pass; a pass's first row has none)."""
    return _png_file(pixels, colour, interlace)


@pytest.mark.parametrize("shape, colour", [((7, 5, 1), 0), ((6, 9, 3), 2), ((9, 13, 4), 6), ((17, 3, 2), 4)])
@pytest.mark.parametrize("interlace", [0, 1])
@pytest.mark.parametrize("kinds", [(0,), (1,), (2,), (3,), (4,), (4, 3, 2, 1, 0, 1, 3)])
def test_8_bit_pngs_of_every_filter_type_are_pillows_pixels(shape, colour, interlace, kinds):
    """ndd inflates and unfilters 8-bit gray, RGB, gray + alpha and RGBA PNGs itself."""
    pixels = np.random.default_rng(sum(shape)).integers(0, 256, shape).astype(np.uint8)
    # Smooth stretches too, where the predictors guess right.
    pixels[: shape[0] // 2] = np.arange(shape[1])[None, :, None] * 3 + np.arange(shape[2])
    data = _png_file(pixels, colour, interlace, kinds)
    pillow = np.asarray(Image.open(io.BytesIO(data)))
    np.testing.assert_array_equal(pillow.reshape(shape), pixels)
    decoded = ndd.decoders.image(ndd.tensor(np.frombuffer(data, np.uint8)), output_type=types.ANY_DATA)
    np.testing.assert_array_equal(np.asarray(decoded), pixels)


@pytest.mark.parametrize("bpp", [1, 2, 3, 4, 6, 8])
def test_unfiltering_png_rows_undoes_every_filter_type(bpp):
    rng = np.random.default_rng(bpp)
    for width in (1, 2, 3, 5, 17, 64):
        rows = rng.integers(0, 256, (12, width * bpp)).astype(np.uint8)
        rows[4:8] = rows[4]  # repeated rows: "Up" and Paeth predict them exactly
        filtered = np.frombuffer(_png_filter(rows, bpp, (0, 1, 2, 3, 4, 4, 3, 2, 1, 0, 4, 2)), np.uint8)
        out = np.empty_like(rows)
        unfilter_png(filtered, out, bpp)
        np.testing.assert_array_equal(out, rows)
    with pytest.raises(ValueError, match="unknown PNG filter type 5"):
        unfilter_png(np.frombuffer(b"\x05\x00\x00", np.uint8), np.empty((1, 2), np.uint8), 1)
    with pytest.raises(ValueError, match="cut short"):
        unfilter_png(np.frombuffer(b"\x00\x00", np.uint8), np.empty((1, 2), np.uint8), 1)


@pytest.mark.parametrize("bpp", [3, 4])
@pytest.mark.parametrize(
    "kinds",
    [(4,), (4, 4, 4, 1), (2, 4, 4, 4, 4, 4, 0, 4, 3), (1, 4)],
    ids=["all Paeth", "runs of 3", "runs of 5 and 1", "single"],
)
def test_paeth_rows_unfiltered_two_at_once_are_exact(bpp, kinds):
    # Consecutive Paeth rows are unfiltered two at a time (pixels.pyx); the lower row's
    # start, the 4-byte loads at a row's end and the first row (zeros above) are the edges.
    rng = np.random.default_rng(bpp * 10 + len(kinds))
    for width in (1, 2, 3, 4, 5, 6, 9, 33, 500):
        for height in (1, 2, 3, 7, 10):
            rows = rng.integers(0, 256, (height, width * bpp)).astype(np.uint8)
            rows[height // 2 :] = (np.arange(width * bpp) * 7 % 256)[None]  # predictable stretches
            rows[-1, ::5] = 255
            filtered = np.frombuffer(_png_filter(rows, bpp, kinds), np.uint8)
            out = np.empty_like(rows)
            unfilter_png(filtered, out, bpp)
            np.testing.assert_array_equal(out, rows, f"{width} x {height}")


def test_a_png_orientation_in_exif_after_its_pixels_is_applied():
    """ndd reads a PNG's pixels itself, and looks for EXIF after them without decoding them."""
    pixels = np.random.default_rng(5).integers(0, 256, (6, 10, 3)).astype(np.uint8)
    exif = Image.Exif()
    exif[0x0112] = 6  # rotated by 90 degrees clockwise for viewing
    body = exif.tobytes()[6:]  # without the "Exif\0\0" prefix, as an eXIf chunk holds it
    after = struct.pack(">I", len(body)) + b"eXIf" + body + struct.pack(">I", zlib.crc32(b"eXIf" + body))
    for chunks, expected in ((after, np.rot90(pixels, -1)), (b"", pixels)):
        encoded = ndd.tensor(np.frombuffer(_png_file(pixels, 2, 0, (4,), chunks), np.uint8))
        np.testing.assert_array_equal(np.asarray(ndd.decoders.image(encoded)), expected)
        assert np.asarray(ndd.peek_image_shape(encoded)).tolist() == list(expected.shape)


@pytest.mark.parametrize("inflate", ["isal", "zlib"])
def test_png_image_data_is_inflated_by_isal_or_zlib(inflate, monkeypatch):
    from ndd._ops import image_codec

    if inflate == "zlib":  # where python-isal has no wheel
        monkeypatch.setattr(image_codec, "_inflate", zlib)
        monkeypatch.setattr(image_codec, "_INFLATE_ERRORS", (zlib.error,))
    else:
        assert image_codec._inflate is pytest.importorskip("isal.isal_zlib")
    for name in ("png_rgb", "png_rgba", "png_gray", "png_gray16", "png_rgb16_filters"):
        encoded = image_samples.encoded(name)
        decoded = np.asarray(
            ndd.decoders.image(ndd.tensor(encoded), output_type=types.ANY_DATA, dtype=ndd.uint16)
        )
        pillow = np.asarray(Image.open(io.BytesIO(encoded.tobytes())))
        if pillow.dtype != np.uint8:  # 16-bit gray; Pillow's 16-bit colour is 8-bit
            np.testing.assert_array_equal(decoded[:, :, 0], pillow, name)
        elif name != "png_rgb16_filters":
            np.testing.assert_array_equal(
                decoded, pillow.reshape(decoded.shape).astype(np.uint16) * 257, name
            )
    broken = image_samples.encoded("png_rgb").copy()
    broken[60:80] = 0  # inside the image data
    with pytest.raises(RuntimeError, match="the PNG image data is broken"):
        ndd.decoders.image(ndd.tensor(broken)).evaluate()


@pytest.mark.parametrize(
    "shape, colour", [((6, 5, 3), 2), ((9, 13, 4), 6), ((17, 3, 2), 4), ((1, 1, 3), 2), ((11, 7, 1), 0)]
)
@pytest.mark.parametrize("interlace", [0, 1])
def test_16_bit_pngs_keep_their_depth_interlaced_or_not(shape, colour, interlace):
    # Pillow reads 16-bit colour PNGs at 8 bits; ndd reads them itself, Adam7 passes
    # included (interlaced ones lost 8 bits, and gray + alpha decoded to 4 channels
    # where peek_image_shape said 2).
    pixels = np.random.default_rng(sum(shape)).integers(0, 65536, shape).astype(np.uint16)
    encoded = ndd.tensor(np.frombuffer(_png16(pixels, colour, interlace), np.uint8))
    decoded = ndd.decoders.image(encoded, dtype=ndd.uint16, output_type=types.ANY_DATA)
    np.testing.assert_array_equal(np.asarray(decoded), pixels)
    assert np.asarray(ndd.peek_image_shape(encoded, image_type=types.ANY_DATA)).tolist() == list(shape)
    if colour == 0:  # 16-bit gray: ndd's own reading gives Pillow's values, which are exact
        np.testing.assert_array_equal(
            np.asarray(Image.open(io.BytesIO(np.asarray(encoded).tobytes()))), pixels[:, :, 0]
        )


def test_gray_of_a_jpeg_pillow_decodes_is_its_stored_luma():
    # A stream with a warning (here extra bytes before the end marker) is decoded by
    # Pillow rather than simplejpeg; GRAY is the stored Y there too, not a gray made
    # from the upsampled RGB (off by up to 8 levels on this image).
    stream = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (32, 48, 3), np.uint8)).save(stream, "JPEG")
    clean = stream.getvalue()
    noisy = clean[:-2] + b"\x00\x01\x02" + clean[-2:]

    def gray(data, **kwargs):
        encoded = ndd.tensor(np.frombuffer(data, np.uint8))
        return np.asarray(ndd.decoders.image(encoded, output_type=types.GRAY, **kwargs))

    np.testing.assert_array_equal(gray(noisy), gray(clean))
    np.testing.assert_array_equal(gray(noisy, adjust_orientation=False), gray(clean))


def test_cmyk_gray_truncates_the_weighted_sum_as_the_reference():
    # The reference's gray of a CMYK JPEG: floor(0.299 R + 0.587 G + 0.114 B) in float32
    # of its RGB (checked on 4,096 random pixels; libpng's rule was 1 level off on 3).
    ink = np.random.default_rng(0).integers(0, 256, (64, 64, 4), np.uint8)
    stream = io.BytesIO()
    Image.fromarray(ink, "CMYK").save(stream, "JPEG", quality=95)
    encoded = ndd.tensor(np.frombuffer(stream.getvalue(), np.uint8))
    rgb = np.asarray(ndd.decoders.image(encoded)).astype(np.float32)
    weights = [np.float32(w) for w in (0.299, 0.587, 0.114)]
    expected = np.floor(rgb[:, :, 0] * weights[0] + rgb[:, :, 1] * weights[1] + rgb[:, :, 2] * weights[2])
    gray = np.asarray(ndd.decoders.image(encoded, output_type=types.GRAY))
    np.testing.assert_array_equal(gray[:, :, 0], expected.astype(np.uint8))
    for r, g, b, level in [(203, 249, 89, 217), (164, 32, 177, 87), (183, 114, 12, 123)]:
        assert (gray[(rgb == [r, g, b]).all(axis=2)] == level).all()


def test_cmyk_tiff_gray_takes_opencvs_rule_as_the_reference():
    # The reference reads CMYK TIFFs with OpenCV (its libtiff decoder refuses them):
    # gray is (4899 R + 9617 G + 1868 B + 2^13) >> 14 of the RGB (checked on 4,096
    # random pixels; libpng's rule, used before, was 1 level off on about half).
    ink = np.random.default_rng(0).integers(0, 256, (64, 64, 4), np.uint8)
    stream = io.BytesIO()
    Image.fromarray(ink, "CMYK").save(stream, "TIFF")
    encoded = ndd.tensor(np.frombuffer(stream.getvalue(), np.uint8))
    rgb = np.asarray(ndd.decoders.image(encoded)).astype(np.int64)
    expected = (4899 * rgb[:, :, 0] + 9617 * rgb[:, :, 1] + 1868 * rgb[:, :, 2] + 8192) >> 14
    gray = np.asarray(ndd.decoders.image(encoded, output_type=types.GRAY))
    np.testing.assert_array_equal(gray[:, :, 0], expected)
    for colour, level in [((17, 7, 86), 19), ((5, 48, 174), 50), ((82, 186, 124), 148)]:
        assert (gray[(rgb == colour).all(axis=2)] == level).all()


@pytest.mark.parametrize("form", ["TIFF", "JPEG"])
def test_cmyk_any_data_is_rgb_and_an_opaque_alpha(form):
    # The reference's ANY_DATA of a CMYK TIFF (and its peek_image_shape of a JPEG, whose
    # decoding with ANY_DATA it fails): 4 channels.
    ink = np.random.default_rng(0).integers(0, 256, (4, 5, 4), np.uint8)
    stream = io.BytesIO()
    Image.fromarray(ink, "CMYK").save(stream, form)
    encoded = ndd.tensor(np.frombuffer(stream.getvalue(), np.uint8))
    any_data = np.asarray(ndd.decoders.image(encoded, output_type=types.ANY_DATA))
    assert any_data.shape == (4, 5, 4) and (any_data[:, :, 3] == 255).all()
    np.testing.assert_array_equal(any_data[:, :, :3], np.asarray(ndd.decoders.image(encoded)))
    assert np.asarray(ndd.peek_image_shape(encoded, image_type=types.ANY_DATA)).tolist() == [4, 5, 4]


@pytest.mark.parametrize(
    "magic, maxval, dtype, expected",
    [
        (b"P6", 100, ndd.uint8, [0, 128, 255]),  # 0, 50 and 100 of 100
        (b"P6", 1000, ndd.uint16, [0, 32768, 65535]),  # 0, 500 and 1000 of 1000
        (b"P6", 65535, ndd.uint16, [0, 500, 65535]),  # at full depth (Pillow reads 8 bits)
        (b"P5", 65535, ndd.uint16, [500]),
        (b"P5", 1000, ndd.uint8, [128]),
    ],
)
def test_pnm_samples_are_scaled_from_their_maximum_value(magic, maxval, dtype, expected):
    values = {100: [0, 50, 100], 1000: [0, 500, 1000], 65535: [0, 500, 65535]}[maxval]
    values = values if magic == b"P6" else values[1:2]
    samples = np.asarray(values, ">u2" if maxval > 255 else np.uint8).tobytes()  # 2 bytes above 255
    encoded = magic + b"\n# made by a test\n1 1\n%d\n" % maxval + samples
    out = np.asarray(ndd.decoders.image(ndd.tensor(np.frombuffer(encoded, np.uint8)), dtype=dtype))
    assert out[0, 0].tolist() == (expected * 3 if magic == b"P5" else expected)


def _reference_gray(rgb, form):
    """The reference's gray of each format's decoder, measured: OpenCV's 14-bit
    weights (BMP, PNM), libtiff's float32 sum with halves up, libpng's 15-bit weights
    (16-bit samples rounded)."""
    if form == "TIFF":
        f = rgb.astype(np.float32)
        weights = np.float32([0.299, 0.587, 0.114])
        return np.floor(
            f[..., 0] * weights[0] + f[..., 1] * weights[1] + f[..., 2] * weights[2] + np.float32(0.5)
        )
    r, g, b = (rgb[..., k].astype(np.int64) for k in range(3))
    if form == "PNG16":
        return (9797 * r + 19234 * g + 3737 * b + 16384) >> 15
    if form in ("WEBP", "JPEG2000"):
        return (9798 * r + 19235 * g + 3735 * b + 16384) >> 15
    return (4899 * r + 9617 * g + 1868 * b + 8192) >> 14


@pytest.mark.parametrize(
    "form", ["BMP", "PPM", "TIFF", "WEBP", "JPEG2000", "PNG16", "PPM16", "TIFF16-turned", "TIFF-turned"]
)
def test_gray_of_colour_images_rounds_as_the_reference_decoders_do(form):
    # A TIFF turned by its orientation is read by the reference with OpenCV, whose
    # rule also holds for 16-bit samples (PNM, turned TIFF): up to 2 levels apart.
    rng = np.random.default_rng(0)
    if form.endswith("-turned"):
        if form == "TIFF16-turned":
            rgb = rng.integers(0, 65536, (16, 16, 3)).astype(np.uint16)
            data, dtype = _tiff16(rgb, orientation=3), ndd.uint16
        else:
            rgb = rng.integers(0, 256, (64, 256, 3), np.uint8)
            exif = Image.Exif()
            exif[0x0112] = 3
            stream = io.BytesIO()
            Image.fromarray(rgb).save(stream, "TIFF", exif=exif)
            data, dtype = stream.getvalue(), ndd.uint8
        encoded = ndd.tensor(np.frombuffer(data, np.uint8))
        gray = np.asarray(ndd.decoders.image(encoded, output_type=types.GRAY, dtype=dtype))[:, :, 0]
        np.testing.assert_array_equal(gray, _reference_gray(rgb, "PPM")[::-1, ::-1])
        kept = ndd.decoders.image(encoded, output_type=types.GRAY, dtype=dtype, adjust_orientation=False)
        np.testing.assert_array_equal(np.asarray(kept)[:, :, 0], _reference_gray(rgb, "TIFF"))
        return
    if form == "PNG16":
        rgb = rng.integers(0, 65536, (16, 16, 3)).astype(np.uint16)
        data, dtype = _png16(rgb, 2, 0), ndd.uint16
    elif form == "PPM16":
        rgb = rng.integers(0, 65536, (16, 16, 3)).astype(np.uint16)
        data, dtype = b"P6 16 16 65535\n" + rgb.astype(">u2").tobytes(), ndd.uint16
    else:
        rgb = rng.integers(0, 256, (64, 256, 3), np.uint8)
        stream = io.BytesIO()
        Image.fromarray(rgb).save(stream, form, **({"lossless": True} if form == "WEBP" else {}))
        data, dtype = stream.getvalue(), ndd.uint8
    encoded = ndd.tensor(np.frombuffer(data, np.uint8))
    np.testing.assert_array_equal(np.asarray(ndd.decoders.image(encoded, dtype=dtype)), rgb)  # lossless
    gray = np.asarray(ndd.decoders.image(encoded, output_type=types.GRAY, dtype=dtype))[:, :, 0]
    np.testing.assert_array_equal(gray, _reference_gray(rgb, form))


def _tiff16(pixels, *, big_endian=False, planar=False, deflate=False, orientation=None, rows_per_strip=None):
    """A gray, RGB or RGBA TIFF of 16-bit ``pixels`` (H, W, C), one strip per plane, or
    strips of ``rows_per_strip`` rows."""
    height, width, channels = pixels.shape
    order = ">" if big_endian else "<"
    planes = [pixels[:, :, k] for k in range(channels)] if planar else [pixels]
    rows = rows_per_strip or height
    strips = [
        plane[top : top + rows].astype(order + "u2").tobytes()
        for plane in planes
        for top in range(0, height, rows)
    ]
    strips = [zlib.compress(strip) for strip in strips] if deflate else strips
    offsets = list(itertools.accumulate([8] + [len(strip) for strip in strips[:-1]]))
    tags = [
        (256, 3, [width]),
        (257, 3, [height]),
        (258, 3, [16] * channels),
        (259, 3, [8 if deflate else 1]),
        (262, 3, [2 if channels >= 3 else 1]),
        (273, 4, offsets),
        (274, 3, [orientation] if orientation else None),
        (277, 3, [channels]),
        (278, 3, [rows]),
        (279, 4, [len(strip) for strip in strips]),
        (284, 3, [2 if planar else 1]),
        (338, 3, [2] if channels == 4 else None),  # unassociated alpha
    ]
    tags = [tag for tag in tags if tag[2] is not None]
    body = b"".join(strips) + b"\0" * (sum(map(len, strips)) % 2)
    ifd_at = 8 + len(body)
    spill_at = ifd_at + 2 + 12 * len(tags) + 4  # values longer than 4 bytes follow the IFD
    entries, spill = b"", b""
    for tag, kind, values in tags:
        packed = struct.pack(order + ("H" if kind == 3 else "I") * len(values), *values)
        if len(packed) > 4:
            field, spill = struct.pack(order + "I", spill_at + len(spill)), spill + packed
        else:
            field = packed.ljust(4, b"\0")
        entries += struct.pack(order + "HHI", tag, kind, len(values)) + field
    head = (b"MM\0*" if big_endian else b"II*\0") + struct.pack(order + "I", ifd_at)
    return head + body + struct.pack(order + "H", len(tags)) + entries + b"\0\0\0\0" + spill


@pytest.mark.parametrize("channels", [3, 4])
@pytest.mark.parametrize(
    "layout",
    [{}, {"big_endian": True}, {"deflate": True}, {"big_endian": True, "deflate": True}, {"planar": True}],
)
def test_16_bit_colour_tiffs_keep_their_depth(channels, layout):
    # Pillow reads them at 8 bits, its high bytes: uint16 lost 8 bits, and uint8
    # truncated where the reference rounds (41743 gave 163, the reference 162).
    # Separate planes were read by Pillow, and are by the reference, as interleaved.
    pixels = np.random.default_rng(channels).integers(0, 65536, (17, 23, channels)).astype(np.uint16)
    pixels[0, 0, 0] = 41743
    encoded = ndd.tensor(np.frombuffer(_tiff16(pixels, **layout), np.uint8))
    deep = np.asarray(ndd.decoders.image(encoded, dtype=ndd.uint16, output_type=types.ANY_DATA))
    np.testing.assert_array_equal(deep, pixels)
    rgb = np.asarray(ndd.decoders.image(encoded))
    np.testing.assert_array_equal(rgb, np.rint(pixels[:, :, :3] / 257))
    turned = np.asarray(
        ndd.decoders.image(
            ndd.tensor(np.frombuffer(_tiff16(pixels, orientation=3, **layout), np.uint8)), dtype=ndd.uint16
        )
    )
    np.testing.assert_array_equal(turned, pixels[::-1, ::-1, :3])


# Uncompressed TIFFs are copied from their strips (image_codec._raw_tiff_pixels), not
# decoded by Pillow: the same values, every output type, window and orientation.
_TIFF_MODES = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}


def _strip_tiff(mode, orientation=None, rows_per_strip=3, deflate=False, predictor=None):
    """(encoded bytes, stored pixels (H, W, C)) of a TIFF of 17 x 23 pixels in ``mode``
    ("I;16" and "I;16B": 16-bit gray, little- and big-endian), in strips of
    ``rows_per_strip`` rows (the last one shorter), Deflate-compressed or not, with a
    predictor or not (Pillow's, but big-endian files and uncompressed 16-bit ones)."""
    rng = np.random.default_rng(len(mode))
    if mode.startswith("I;16"):
        pixels = rng.integers(0, 65536, (17, 23, 1)).astype(np.uint16)
        pixels[:9] = np.arange(23)[None, :, None] * 2851  # a smooth half, as predictors expect
    else:
        pixels = rng.integers(0, 256, (17, 23, _TIFF_MODES[mode])).astype(np.uint8)
        pixels[:9] = (np.arange(23)[:, None] * 11 + np.arange(pixels.shape[2]))[None]
    if mode == "I;16B" or (mode == "I;16" and not deflate):
        data = _tiff16(
            pixels,
            big_endian=mode == "I;16B",
            orientation=orientation,
            rows_per_strip=rows_per_strip,
            deflate=deflate,
        )
        return data, pixels
    info = {278: rows_per_strip}
    if orientation:
        info[274] = orientation
    if predictor:
        info[317] = predictor
    image = Image.fromarray(
        pixels[:, :, 0] if pixels.shape[2] == 1 else pixels, None if mode == "I;16" else mode
    )
    options = {"compression": "tiff_adobe_deflate"} if deflate else {}
    return _save_bytes(image, "TIFF", tiffinfo=info, **options), pixels


def _save_bytes(image, form, **kwargs):
    stream = io.BytesIO()
    image.save(stream, form, **kwargs)
    return stream.getvalue()


_TIFF_CALLS = [
    {},
    {"output_type": types.GRAY},
    {"output_type": types.YCbCr},
    {"output_type": types.ANY_DATA},
    {"output_type": types.ANY_DATA, "dtype": ndd.uint16},
    {"dtype": ndd.float32},
]


def _check_reader(reader, data, pixels, monkeypatch):
    """The image ``data`` read by image_codec's ``reader`` (stored ``pixels``, exactly),
    every output, crop and orientation of it as Pillow's decoding gives them."""
    from ndd._ops import image_codec

    encoded = ndd.tensor(np.frombuffer(data, np.uint8))
    results = []
    read = getattr(image_codec, reader)
    monkeypatch.setattr(image_codec, reader, lambda *a: results.append(read(*a)) or results[-1])
    stored = ndd.decoders.image(
        encoded, output_type=types.ANY_DATA, dtype=pixels.dtype, adjust_orientation=False
    )
    np.testing.assert_array_equal(np.asarray(stored), pixels)
    crop = {"crop": (9, 7), "crop_pos_x": 0.3, "crop_pos_y": 0.6}
    for kwargs in _TIFF_CALLS:
        fast = np.asarray(ndd.decoders.image(encoded, **kwargs))
        cropped = np.asarray(ndd.decoders.image_crop(encoded, **crop, **kwargs))
        with monkeypatch.context() as pillow_only:
            pillow_only.setattr(image_codec, reader, lambda *a: None)
            np.testing.assert_array_equal(
                fast, np.asarray(ndd.decoders.image(encoded, **kwargs)), str(kwargs)
            )
            np.testing.assert_array_equal(
                cropped, np.asarray(ndd.decoders.image_crop(encoded, **crop, **kwargs)), str(kwargs)
            )
    assert results and all(result is not None for result in results)


@pytest.mark.parametrize("mode", ["L", "LA", "RGB", "RGBA", "I;16", "I;16B"])
@pytest.mark.parametrize("orientation", [None, 6])
def test_uncompressed_tiffs_are_copied_from_their_strips(mode, orientation, monkeypatch):
    data, pixels = _strip_tiff(mode, orientation)
    _check_reader("_raw_tiff_pixels", data, pixels, monkeypatch)


@pytest.mark.parametrize("mode", ["L", "LA", "RGB", "RGBA", "I;16", "I;16B"])
@pytest.mark.parametrize("layout", [{}, {"predictor": 2}, {"rows_per_strip": 17, "orientation": 6}])
def test_deflate_tiffs_are_inflated_by_ndd(mode, layout, monkeypatch):
    if mode == "I;16B" and layout.get("predictor"):
        pytest.skip("the test's own TIFF writer has no predictor")
    data, pixels = _strip_tiff(mode, deflate=True, **layout)
    assert Image.open(io.BytesIO(data)).tag_v2[259] in (8, 32946)
    _check_reader("_deflate_tiff_pixels", data, pixels, monkeypatch)


def test_broken_deflate_tiffs_fail_alone():
    data, _ = _strip_tiff("RGB", deflate=True)
    tags = Image.open(io.BytesIO(data)).tag_v2
    start, size = tags[273][-1], tags[279][-1]  # the last strip (Pillow 10 writes one)
    good = image_samples.encoded("png_rgb")
    garbled = data[:start] + b"\xff" * 8 + data[start + 8 :]
    short = zlib.compress(b"\0" * 10).ljust(size, b"\0")  # a stream of 10 bytes in its place
    cut = data[:start] + short + data[start + size :]
    for broken, message in ((garbled, "broken"), (cut, "broken .a strip is cut short")):
        with pytest.raises(RuntimeError, match=rf"sample 1.*{message}") as info:
            ndd.decoders.image(ndd.batch([good, np.frombuffer(broken, np.uint8), good])).evaluate()
        decoded = info.value.__cause__.decoded
        assert decoded[1] is None
        np.testing.assert_array_equal(decoded[2], np.asarray(_pil("png_rgb")))


def _bmp(kind):
    """(encoded bytes, stored pixels (H, W, C)) of a BMP of 17 x 23 pixels (rows of 23
    RGB pixels end in 3 bytes of padding): "rgb" (24-bit), "rgbx" (32-bit, Pillow
    writes the alpha there, which BMP readers leave out), "gray" (a gray palette), or
    "top_down" (24-bit, rows stored from the top: a negative height)."""
    rng = np.random.default_rng(len(kind))
    pixels = rng.integers(0, 256, (17, 23, 4)).astype(np.uint8)
    if kind == "gray":
        return _save_bytes(Image.fromarray(pixels[:, :, 0]), "BMP"), pixels[:, :, :1]
    if kind == "rgbx":
        return _save_bytes(Image.fromarray(pixels, "RGBA"), "BMP"), pixels[:, :, :3]
    data = bytearray(_save_bytes(Image.fromarray(pixels[:, :, :3]), "BMP"))
    if kind == "top_down":
        start = int.from_bytes(data[10:14], "little")
        stride = (23 * 3 + 3) // 4 * 4
        rows = [data[start + r * stride : start + (r + 1) * stride] for r in range(17)]
        data[start:] = b"".join(reversed(rows))
        data[22:26] = (-17).to_bytes(4, "little", signed=True)
    return bytes(data), pixels[:, :, :3]


@pytest.mark.parametrize("kind", ["rgb", "rgbx", "gray", "top_down"])
def test_uncompressed_bmps_are_copied_from_their_rows(kind, monkeypatch):
    data, pixels = _bmp(kind)
    np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(data))).reshape(pixels.shape), pixels)
    _check_reader("_bmp_pixels", data, pixels, monkeypatch)


def test_bmps_of_palettes_are_left_to_pillow_and_cut_ones_fail_alone():
    from ndd._ops import image_codec

    colours = Image.fromarray(np.arange(6, dtype=np.uint8).reshape(2, 3) * 40).convert("P")
    colours.putpalette([255, 0, 0, 0, 255, 0] * 128)
    data = _save_bytes(colours, "BMP")
    encoded = np.frombuffer(data, np.uint8)
    assert image_codec._bmp_pixels(image_codec.open_image(encoded), encoded) is None
    np.testing.assert_array_equal(
        np.asarray(ndd.decoders.image(ndd.tensor(encoded))), np.asarray(colours.convert("RGB"))
    )
    good = image_samples.encoded("png_rgb")
    cut = np.frombuffer(_bmp("rgb")[0][:-40], np.uint8)
    with pytest.raises(RuntimeError, match=r"ndd.decoders.image.*sample 1.*truncated") as info:
        ndd.decoders.image(ndd.batch([good, cut, good])).evaluate()
    decoded = info.value.__cause__.decoded
    assert decoded[1] is None
    np.testing.assert_array_equal(decoded[2], np.asarray(_pil("png_rgb")))


def test_tiffs_copied_from_strips_keep_pillows_exceptions(monkeypatch):
    from ndd._ops import image_codec

    data, _ = _strip_tiff("RGB")
    # Strips of other rawmodes (inverted gray), out of order or of tiles are left to Pillow.
    inverted = Image.open(io.BytesIO(_save_bytes(Image.fromarray(np.zeros((4, 5), np.uint8)), "TIFF")))
    tile = inverted.tile[0]
    changed = (*tuple(tile)[:3], ("L;I", 0, 1))
    inverted.tile = [type(tile)(*changed) if hasattr(tile, "_fields") else changed]  # Pillow 11: _Tile
    assert image_codec._raw_tiff_pixels(inverted, np.zeros(0, np.uint8)) is None
    reordered = Image.open(io.BytesIO(data))
    reordered.tile = reordered.tile[1:]  # rows 0-2 missing
    assert image_codec._raw_tiff_pixels(reordered, np.frombuffer(data, np.uint8)) is None
    # A file cut inside its strips fails alone.
    good = image_samples.encoded("png_rgb")
    with pytest.raises(RuntimeError, match=r"ndd.decoders.image.*sample 1") as info:
        ndd.decoders.image(ndd.batch([good, np.frombuffer(data[:-40], np.uint8), good])).evaluate()
    assert "truncated" in str(info.value)
    decoded = info.value.__cause__.decoded
    assert decoded[1] is None
    np.testing.assert_array_equal(decoded[2], np.asarray(_pil("png_rgb")))


@pytest.mark.parametrize(
    "values, sample_format, kind",
    [(np.arange(12, dtype=np.uint8) + 120, 2, "int8"), (np.arange(12, dtype=np.int32) - 5, None, "int32")],
)
def test_signed_or_32_bit_integer_tiffs_are_refused_but_have_a_shape(values, sample_format, kind):
    # Pillow reads signed bytes as unsigned (-128 gave 128) and clips int32; the
    # reference refuses to decode them, and peek_image_shape gives their shape.
    info = TiffImagePlugin.ImageFileDirectory_v2()
    if sample_format is not None:
        info[339] = sample_format  # SampleFormat: signed integers
    stream = io.BytesIO()
    Image.fromarray(values.reshape(3, 4)).save(stream, "TIFF", tiffinfo=info)
    encoded = ndd.tensor(np.frombuffer(stream.getvalue(), np.uint8))
    assert np.asarray(ndd.peek_image_shape(encoded)).tolist() == [3, 4, 3]
    with pytest.raises(RuntimeError, match=f"cannot decode: TIFF samples of type {kind} are not read"):
        np.asarray(ndd.decoders.image(encoded))


def test_a_tiff_pillow_cannot_read_is_named_a_tiff():
    header = b"II*\0" + struct.pack("<I", 8) + struct.pack("<H", 0) + b"\0" * 4  # no tags at all
    with pytest.raises(
        RuntimeError, match="cannot decode: a TIFF of a sample type or layout it does not read"
    ):
        np.asarray(ndd.decoders.image(ndd.tensor(np.frombuffer(header, np.uint8))))


@pytest.mark.parametrize(
    "alpha, options", [(False, {}), (False, {"lossless": True}), (True, {"lossless": True}), (True, {})]
)
def test_a_truncated_webp_has_a_shape_but_no_pixels(alpha, options):
    # Pillow decodes a WebP as it opens it; the shape comes from the header (VP8, VP8L
    # or VP8X chunk), as in the reference, and decoding says what is wrong.
    pixels = np.random.default_rng(0).integers(0, 256, (30, 40, 4 if alpha else 3), np.uint8)
    stream = io.BytesIO()
    Image.fromarray(pixels).save(stream, "WEBP", **options)
    data = stream.getvalue()
    cut = ndd.tensor(np.frombuffer(data[: len(data) // 2], np.uint8))
    shape = np.asarray(ndd.peek_image_shape(cut, image_type=types.ANY_DATA)).tolist()
    assert shape == [30, 40, 4 if alpha else 3]
    with pytest.raises(RuntimeError, match="cannot decode: the WebP data is broken or truncated"):
        np.asarray(ndd.decoders.image(cut))


def _webp(pixels, **options):
    stream = io.BytesIO()
    Image.fromarray(pixels).save(stream, "WEBP", **options)
    return stream.getvalue()


def _exif(orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif


# Still WebPs are decoded by OpenCV where it is installed (image_codec._opencv_webp_pixels),
# animated ones and those OpenCV reads otherwise by Pillow: the same pixels either way.
_WEBPS = {
    "lossy": lambda p: _webp(p[:, :, :3], quality=90),
    "lossless": lambda p: _webp(p[:, :, :3], lossless=True),
    "alpha lossy": lambda p: _webp(p, quality=60),
    "alpha lossless": lambda p: _webp(p, lossless=True),
    "exif 6": lambda p: _webp(p[:, :, :3], quality=90, exif=_exif(6)),
    "animated": lambda p: _webp(p[:, :, :3], save_all=True, append_images=[Image.fromarray(p[::-1, :, :3])]),
}


def _opencv_decoding():
    """cv2, where ndd decodes with OpenCV (installed, and NDD_DECODE_WITH_OPENCV not 0);
    the test is skipped elsewhere."""
    from ndd._ops import image_codec

    cv2 = image_codec._opencv()
    if cv2 is None:
        pytest.skip("ndd does not decode with OpenCV here (not installed, or NDD_DECODE_WITH_OPENCV=0)")
    return cv2


@pytest.mark.parametrize("kind", list(_WEBPS))
def test_webps_decode_to_pillows_pixels_with_or_without_opencv(kind, monkeypatch):
    cv2 = _opencv_decoding()
    from ndd._ops import image_codec

    smooth = np.add.outer(np.arange(30), np.arange(41)) * 3 % 256
    pixels = np.stack([smooth, smooth[::-1], smooth[:, ::-1], 255 - smooth], axis=-1).astype(np.uint8)
    data = _WEBPS[kind](pixels)
    encoded = ndd.tensor(np.frombuffer(data, np.uint8))
    used = []
    imdecode = cv2.imdecode
    monkeypatch.setattr(cv2, "imdecode", lambda *args: used.append(1) or imdecode(*args))
    calls = [{}, {"output_type": types.ANY_DATA}, {"output_type": types.GRAY}, {"dtype": ndd.float32}]
    results = [np.asarray(ndd.decoders.image(encoded, **kwargs)) for kwargs in calls]
    cropped = np.asarray(ndd.decoders.image_crop(encoded, crop=(11, 13), crop_pos_x=0.8, crop_pos_y=0.2))
    assert bool(used) == (kind != "animated")
    monkeypatch.setattr(image_codec, "_opencv", lambda: None)
    for kwargs, result in zip(calls, results, strict=True):
        np.testing.assert_array_equal(result, np.asarray(ndd.decoders.image(encoded, **kwargs)), str(kwargs))
    pillow = ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("RGB")
    np.testing.assert_array_equal(results[0], np.asarray(pillow))
    crop = np.asarray(ndd.decoders.image_crop(encoded, crop=(11, 13), crop_pos_x=0.8, crop_pos_y=0.2))
    np.testing.assert_array_equal(cropped, crop)


def test_decoding_with_opencv_is_turned_off_by_its_variable(monkeypatch):
    from ndd._ops import image_codec

    monkeypatch.setenv("NDD_DECODE_WITH_OPENCV", "0")
    image_codec._opencv.cache_clear()
    try:
        assert image_codec._opencv() is None
        data = _webp(np.zeros((4, 6, 3), np.uint8), lossless=True)
        assert isinstance(image_codec.open_image(np.frombuffer(data, np.uint8)), Image.Image)
    finally:
        monkeypatch.delenv("NDD_DECODE_WITH_OPENCV")
        image_codec._opencv.cache_clear()


@pytest.mark.parametrize("with_opencv", [True, False], ids=["opencv", "pillow"])
def test_a_broken_webp_that_opencv_cannot_decode_fails_alone(with_opencv, monkeypatch):
    if with_opencv:
        _opencv_decoding()
    else:
        from ndd._ops import image_codec

        monkeypatch.setattr(image_codec, "_opencv", lambda: None)
    pixels = np.random.default_rng(1).integers(0, 256, (30, 40, 3), np.uint8)
    data = _webp(pixels, quality=90)
    broken = np.frombuffer(data[: len(data) * 2 // 3], np.uint8)
    good = np.frombuffer(data, np.uint8)
    with pytest.raises(RuntimeError, match="sample 1.*the WebP data is broken or truncated") as info:
        ndd.decoders.image(ndd.batch([good, broken, good])).evaluate()
    decoded = info.value.__cause__.decoded
    assert decoded[1] is None
    np.testing.assert_array_equal(decoded[2], np.asarray(Image.open(io.BytesIO(data)).convert("RGB")))


def _jp2(mode, **options):
    """(encoded bytes, stored pixels (H, W, C)) of a JPEG 2000 image of 19 x 26 pixels in
    ``mode`` ("I;16": 16-bit gray), lossless unless ``options`` say otherwise."""
    smooth = np.add.outer(np.arange(19) * 5, np.arange(26) * 3) % 256
    pixels = np.stack([smooth, smooth[::-1], 255 - smooth, smooth[:, ::-1]], axis=-1).astype(np.uint8)
    if mode == "I;16":
        pixels = (pixels[:, :, :1].astype(np.uint16) * 257 + 3).astype(np.uint16)
        image = Image.fromarray(pixels[:, :, 0]).convert("I;16")
    else:
        pixels = pixels[:, :, : len(mode)]
        image = Image.fromarray(pixels[:, :, 0] if mode == "L" else pixels, mode)
    return _save_bytes(image, "JPEG2000", **options), pixels


# Plain JP2 files (8-bit gray or RGB, 16-bit gray) are decoded by OpenCV where it is
# installed (image_codec._opencv_jp2_pixels): Pillow's pixels, every output and crop.
@pytest.mark.parametrize("mode", ["L", "RGB", "I;16"])
@pytest.mark.parametrize("options", [{}, {"irreversible": True}, {"tile_size": (16, 16)}], ids=str)
def test_plain_jp2_files_are_decoded_by_opencv(mode, options, monkeypatch):
    _opencv_decoding()
    data, pixels = _jp2(mode, **options)
    if not options:  # lossless
        np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(data))).reshape(pixels.shape), pixels)
    else:
        pixels = np.asarray(Image.open(io.BytesIO(data))).reshape(pixels.shape)
    _check_reader("_opencv_jp2_pixels", data, pixels, monkeypatch)


@pytest.mark.parametrize(
    "mode, options", [("RGBA", {}), ("LA", {}), ("RGB", {"no_jp2": True}), ("L", {"no_jp2": True})], ids=str
)
def test_other_jpeg_2000_files_are_left_to_pillow(mode, options, capfd):
    from ndd._ops import image_codec

    data, pixels = _jp2(mode, **options)
    encoded = np.frombuffer(data, np.uint8)
    assert image_codec._opencv_jp2_pixels(image_codec.open_image(encoded), encoded) is None
    decoded = ndd.decoders.image(ndd.tensor(encoded), output_type=types.ANY_DATA)
    np.testing.assert_array_equal(
        np.asarray(decoded), np.asarray(Image.open(io.BytesIO(data))).reshape(pixels.shape)
    )
    assert capfd.readouterr().err == ""  # OpenCV was not asked (it logs about J2K codestreams)


def test_plain_jp2_headers_are_read_to_the_byte():
    from ndd._ops import image_codec

    data, _ = _jp2("RGB")
    assert image_codec._plain_jp2(data)
    at = data.index(b"colr") + 4  # method 1, precedence, approximation, then the colour space
    assert not image_codec._plain_jp2(data[: at + 3] + (18).to_bytes(4, "big") + data[at + 7 :])  # sYCC
    siz = data.index(b"\xff\x4f\xff\x51") + 6
    offset = data[: siz + 10] + (1).to_bytes(4, "big") + data[siz + 14 :]  # an image offset
    assert not image_codec._plain_jp2(offset)
    halved = bytearray(data)
    halved[siz + 36 + 3 + 1] = 2  # the second component at half the width
    assert not image_codec._plain_jp2(bytes(halved))
    for cut in (len(data) - 30, siz + 20, 40, 11):
        assert not image_codec._plain_jp2(data[:cut])


def test_a_cut_jp2_fails_alone_and_quietly(capfd):
    good = image_samples.encoded("png_rgb")
    data, _ = _jp2("RGB")
    with pytest.raises(RuntimeError, match="ndd.decoders.image.*sample 1") as info:
        ndd.decoders.image(ndd.batch([good, np.frombuffer(data[:-30], np.uint8), good])).evaluate()
    decoded = info.value.__cause__.decoded
    assert decoded[1] is None
    np.testing.assert_array_equal(decoded[2], np.asarray(_pil("png_rgb")))
    assert "OpenJPEG" not in capfd.readouterr().err


def test_a_cmyk_jpeg_without_adobe_marker_holds_the_ink_itself():
    # Adobe's marker says the samples are inverted; without it they are the ink, as
    # the reference reads them: RGB = (255 - C)(255 - K) / 255 of the stored values.
    ink = np.random.default_rng(0).integers(0, 256, (16, 16, 4), np.uint8)
    stream = io.BytesIO()
    Image.fromarray(ink, "CMYK").save(stream, "JPEG", quality=95)
    adobe = stream.getvalue()
    at = adobe.index(b"\xff\xee")
    plain = adobe[:at] + adobe[at + 2 + int.from_bytes(adobe[at + 2 : at + 4], "big") :]
    stored = 255 - np.asarray(Image.open(io.BytesIO(plain))).astype(np.int64)  # Pillow inverts
    rgb = np.asarray(ndd.decoders.image(ndd.tensor(np.frombuffer(plain, np.uint8)))).astype(np.int64)
    np.testing.assert_array_equal(rgb, (255 - stored[:, :, :3]) * (255 - stored[:, :, 3:]) // 255)
    inverted = np.asarray(ndd.decoders.image(ndd.tensor(np.frombuffer(adobe, np.uint8)))).astype(np.int64)
    assert np.abs(inverted - rgb).max() > 100  # the marker matters


def test_float_tiff_samples_are_intensities_from_0_to_1():
    # Reference values: float samples are scaled to the output type (they were
    # converted to 8-bit gray first, which kept only 0 and 1).
    values = np.array([[0.0, 0.25, 0.5], [0.75, 1.0, 0.1]], np.float32)
    stream = io.BytesIO()
    Image.fromarray(values, "F").save(stream, "TIFF")
    encoded = ndd.tensor(np.frombuffer(stream.getvalue(), np.uint8))
    as_float = np.asarray(ndd.decoders.image(encoded, dtype=ndd.float32))
    np.testing.assert_array_equal(as_float, np.repeat(values[:, :, None], 3, axis=2))
    as_bytes = np.asarray(ndd.decoders.image(encoded, output_type=types.GRAY))
    np.testing.assert_array_equal(as_bytes[:, :, 0], [[0, 64, 128], [191, 255, 26]])


@pytest.mark.parametrize(
    "data", [np.arange(100, dtype=np.uint8), np.zeros(0, np.uint8)], ids=["garbage", "empty"]
)
def test_undecodable_tensor_raises_when_used(data):
    out = ndd.decoders.image(ndd.tensor(data))
    with pytest.raises(RuntimeError, match="ndd.decoders.image: cannot decode") as info:
        np.asarray(out)
    assert "BytesIO" not in str(info.value)  # Pillow's stream object means nothing to the user


def test_data_of_no_known_format_is_described_by_its_first_bytes():
    with pytest.raises(
        RuntimeError, match=r"not an image in a format it reads .*: 11 bytes starting b'GIF87xyz'"
    ):
        np.asarray(ndd.decoders.image(ndd.tensor(np.frombuffer(b"GIF87xyz123", np.uint8))))


def test_reader_error_names_the_file_and_the_reader_goes_on(tmp_path):
    folder = tmp_path / "cls"
    folder.mkdir()
    (folder / "a.jpg").write_bytes(image_samples.encoded("jpeg_q95_444").tobytes())
    (folder / "b.jpg").write_bytes(image_samples.encoded("jpeg_q95_444")[:300].tobytes())
    (folder / "c.png").write_bytes(image_samples.encoded("png_rgb").tobytes())
    (folder / "d.png").write_bytes(image_samples.encoded("png_gray").tobytes())
    reader = ndd.readers.File(file_root=str(tmp_path))
    batches = iter(reader.next_epoch(batch_size=2))
    data, _ = next(batches)
    with pytest.raises(RuntimeError, match=r"sample 1, file .*b\.jpg"):
        ndd.decoders.image(data).evaluate()
    data, _ = next(batches)
    shapes = [np.asarray(s).shape for s in ndd.decoders.image(data)]
    assert shapes == [_SHAPE, _SHAPE]


def test_peek_image_shape_of_a_batch():
    names = ["png_rgba", "jpeg_exif8", "png_gray"]
    out = ndd.peek_image_shape(ndd.batch([image_samples.encoded(n) for n in names]), dtype=ndd.int32)
    h, w = image_samples.HEIGHT, image_samples.WIDTH
    assert [np.asarray(s).tolist() for s in out] == [[h, w, 3], [w, h, 3], [h, w, 3]]
    assert out.dtype == ndd.int32


def _png_header(width, height):
    """A PNG of ``width`` x ``height`` RGB pixels without its pixels: its header."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    return np.frombuffer(b"\x89PNG\r\n\x1a\n" + ihdr + chunk(b"IDAT", b"") + chunk(b"IEND", b""), np.uint8)


def test_peek_image_shape_beyond_pillows_decompression_bomb_limit():
    # 10 billion pixels: Pillow refuses to open it, the reference gives its shape.
    shape = ndd.peek_image_shape(_png_header(100_000, 100_000))
    assert np.asarray(shape).tolist() == [100_000, 100_000, 3]
    assert Image.MAX_IMAGE_PIXELS is not None  # the limit is back for the user's Pillow


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint16])
def test_peek_image_shape_wants_bytes(dtype):
    with pytest.raises(
        ValueError, match=r"ndd\.peek_image_shape: the input must be encoded image bytes \(uint8\)"
    ):
        ndd.peek_image_shape(np.frombuffer(image_samples.encoded("png_rgba"), np.uint8).astype(dtype))


def _path(p):
    return np.frombuffer(str(p).encode(), np.uint8)


def test_file_read_gives_the_bytes(tmp_path):
    (tmp_path / "x.bin").write_bytes(b"hello")
    (tmp_path / "y.bin").write_bytes(b"")
    out = ndd.io.file.read(ndd.batch([_path(tmp_path / "x.bin"), _path(tmp_path / "y.bin")]))
    assert [bytes(np.asarray(s)) for s in out] == [b"hello", b""]
    assert out.dtype == ndd.uint8
    single = ndd.io.file.read(ndd.tensor(_path(tmp_path / "x.bin")))
    assert bytes(np.asarray(single)) == b"hello"


def test_file_read_takes_int8_paths_and_reads_them_up_to_a_nul(tmp_path):
    # As the reference: a path is a C string, so a fixed-width numpy bytes array works.
    (tmp_path / "x.bin").write_bytes(b"hello")
    padded = np.array([str(tmp_path / "x.bin").encode()], dtype="S200").view(np.uint8)
    for path in (
        padded,
        _path(tmp_path / "x.bin").view(np.int8),
        np.append(padded[:-5], np.uint8([0, 65, 66, 0, 0])),
    ):
        assert bytes(np.asarray(ndd.io.file.read(ndd.tensor(path)))) == b"hello"
    out = ndd.io.file.read(ndd.batch([padded.view(np.int8), padded.view(np.int8)]))
    assert [bytes(np.asarray(s)) for s in out] == [b"hello", b"hello"]


def test_numpy_takes_int8_file_bytes():
    data = _npy_bytes(np.arange(6, dtype=np.int16))
    out = ndd.decoders.numpy(ndd.batch([data.view(np.int8), data.view(np.int8)]))
    assert [np.asarray(s).tolist() for s in out] == [list(range(6))] * 2
    with pytest.raises(
        ValueError, match=r"ndd.decoders.numpy: the input must be .npy file bytes \(uint8 or int8\)"
    ):
        ndd.decoders.numpy(ndd.tensor(data.view(np.uint16)[: data.size // 2]))


def test_file_read_missing_file_names_it(tmp_path):
    out = ndd.io.file.read(ndd.tensor(_path(tmp_path / "nope.jpg")))
    with pytest.raises(FileNotFoundError, match="nope.jpg"):
        np.asarray(out)


def test_file_read_of_a_folder_names_it_and_any_path_bytes_are_read(tmp_path):
    # "[Errno 21] Is a directory" named no path; a path that is not UTF-8 failed to decode.
    with pytest.raises(
        IsADirectoryError, match=rf"ndd.io.file.read: cannot read file '{tmp_path}': Is a directory"
    ):
        np.asarray(ndd.io.file.read(ndd.tensor(_path(tmp_path))))
    name = os.fsencode(tmp_path) + b"/caf\xe9.bin"
    with open(name, "wb") as fh:
        fh.write(b"latin")
    assert bytes(np.asarray(ndd.io.file.read(ndd.tensor(np.frombuffer(name, np.uint8))))) == b"latin"


def test_imread(tmp_path):
    (tmp_path / "a.png").write_bytes(image_samples.encoded("png_rgba").tobytes())
    (tmp_path / "b.jpg").write_bytes(image_samples.encoded("jpeg_exif6").tobytes())
    one = ndd.imread(str(tmp_path / "a.png"))
    assert isinstance(one, ndd.Tensor)
    np.testing.assert_array_equal(np.asarray(one), np.asarray(_pil("png_rgba").convert("RGB")))
    many = ndd.imread([tmp_path / "a.png", tmp_path / "b.jpg"], output_type=types.GRAY)
    assert isinstance(many, ndd.Batch)
    h, w = image_samples.HEIGHT, image_samples.WIDTH
    assert [np.asarray(s).shape for s in many] == [(h, w, 1), (w, h, 1)]
    paths = ndd.batch([_path(tmp_path / "a.png")])
    assert np.asarray(ndd.imread(paths).select(0)).shape == _SHAPE


def test_imread_rejects_unknown_device_and_arguments(tmp_path):
    with pytest.raises(ValueError, match="'device' must be 'cpu' or 'gpu'"):
        ndd.imread("x.png", device="mixed")
    with pytest.raises(TypeError, match="crop"):
        ndd.imread("x.png", crop=(2, 2))


_DATA = image_samples.encoded("png_rgb")


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: ndd.decoders.image(_DATA, output_type="GRAY"), "'output_type' must be an image type"),
        (lambda: ndd.decoders.image(_DATA, dtype=ndd.float64), "'dtype' must be one of"),
        (lambda: ndd.decoders.image(np.zeros(3, np.float32)), "encoded image bytes"),
        (lambda: ndd.decoders.image_crop(_DATA, crop=(1, 2, 3, 4)), "'crop' must have 2 values"),
        # As the reference: positions outside [0, 1] are refused even where the window fits.
        (
            lambda: ndd.decoders.image_crop(_DATA, crop=(2, 2), crop_pos_x=1.0000001),
            "'crop_pos_x' must be within",
        ),
        (lambda: ndd.decoders.image_crop(_DATA, crop=(2, 2), crop_pos_y=-0.5), "'crop_pos_y' must be within"),
        (lambda: ndd.decoders.image_crop(_DATA, crop=(2, 2), crop_d=2), "'crop_d' must be given together"),
        (lambda: ndd.decoders.image_crop(_DATA, crop_w=3), "must be given together"),
        (lambda: ndd.decoders.image_crop(_DATA, crop=(2, 2), rounding="up"), "'rounding' must be one of"),
        (lambda: ndd.decoders.image_crop(_DATA, crop=(2, 2), crop_h=0), "mutually exclusive"),
        (lambda: ndd.decoders.image_random_crop(_DATA, random_area=[0.5, 0.1]), "'random_area'"),
        (lambda: ndd.decoders.image_random_crop(_DATA, num_attempts=-1), "'num_attempts'"),
        (lambda: ndd.decoders.image_slice(_DATA), "give the window"),
        (lambda: ndd.decoders.image_slice(_DATA, start=[1, 1], rel_start=[0, 0]), "mutually exclusive"),
        (lambda: ndd.decoders.image_slice(_DATA, np.array([1, 1], np.int32)), "given together"),
        (lambda: ndd.decoders.image_slice(_DATA, start=[1, 1], axes=[0, 5]), "'axes' must be distinct"),
        (lambda: ndd.peek_image_shape(_DATA, dtype=ndd.uint8), "'dtype' must be one of"),
        (lambda: ndd.io.file.read(np.zeros(3, np.int32)), "UTF-8 path bytes"),
    ],
)
def test_bad_arguments_fail_at_the_call(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_a_crop_of_three_values_takes_the_last_two():
    # (depth, height, width): an image has no depth, as in the reference.
    whole = np.asarray(ndd.decoders.image(_DATA))
    out = np.asarray(ndd.decoders.image_crop(_DATA, crop=(9, 4, 6), crop_pos_x=0.0, crop_pos_y=0.0))
    np.testing.assert_array_equal(out, whole[:4, :6])


def test_a_bad_window_of_one_sample_names_its_argument_and_the_sample():
    data = ndd.batch([_DATA, _DATA])
    with pytest.raises(RuntimeError) as info:
        np.asarray(
            ndd.decoders.image_crop(data, crop=(2, 2), crop_pos_x=ndd.batch(np.float32([0.5, 1.5]))).tensors[
                1
            ]
        )
    message = str(info.value.__cause__ or info.value)
    assert "ndd.decoders.image_crop: 'crop_pos_x' must be within [0, 1], got 1.5 (sample 1)" in message
    assert "cannot decode" not in message


@pytest.mark.parametrize("count", [1, 3])
def test_slice_inputs_need_one_value_per_axis(count):
    # The reference refuses them; one value is not spread over the axes.
    anchor = np.full(count, 0.25, np.float32)
    with pytest.raises(RuntimeError, match="input 'anchor' must have one value per sliced axis"):
        np.asarray(ndd.decoders.image_slice(_DATA, anchor, np.full(2, 0.5, np.float32)))


def test_image_crop_without_a_window_decodes_the_whole_image():
    # As the reference does.
    whole = np.asarray(ndd.decoders.image(_DATA))
    np.testing.assert_array_equal(np.asarray(ndd.decoders.image_crop(_DATA)), whole)


@pytest.mark.parametrize(
    ("kwargs", "rows", "columns"),
    [
        ({"crop_h": 10, "crop_w": 0}, 10, None),  # a width given as 0 keeps the width, as in the reference
        ({"crop_h": -3, "crop_w": 10}, None, 10),
        ({"crop": (0.5, 10.7)}, None, 10),  # extents truncate; 0 or less keeps the extent
        ({"crop": (0, 0)}, None, None),
    ],
)
def test_image_crop_extents_below_one_keep_the_axis(kwargs, rows, columns):
    whole = np.asarray(ndd.decoders.image(_DATA))
    height, width = whole.shape[:2]
    rows, columns = rows or height, columns or width
    top, left = int((height - rows) / 2 + 0.5), int((width - columns) / 2 + 0.5)
    got = np.asarray(ndd.decoders.image_crop(_DATA, **kwargs))
    np.testing.assert_array_equal(got, whole[top : top + rows, left : left + columns])


@pytest.mark.parametrize("crop", [(image_samples.HEIGHT + 1, 10), (10, image_samples.WIDTH + 1)])
def test_crop_outside_the_image_fails(crop):
    out = ndd.decoders.image_crop(ndd.tensor(_DATA), crop=crop)
    with pytest.raises(RuntimeError, match="does not fit the image"):
        np.asarray(out)


def test_gpu_device_is_refused_at_the_call():
    # Without a GPU: "needs a CUDA GPU"; with one: no GPU decoder in this build yet.
    with pytest.raises(RuntimeError, match="needs a CUDA GPU|no GPU implementation"):
        ndd.decoders.image(_DATA, device="gpu")


def _npy_bytes(array):
    buf = io.BytesIO()
    np.save(buf, array)
    return np.frombuffer(buf.getvalue(), np.uint8)


def _numpy_cases():
    cases, _ = _goldens()
    return [(c, image_samples.npy_recipe(c["array"])) for c in cases if c["op"] == "numpy"]


@pytest.mark.parametrize("case, array", _numpy_cases(), ids=lambda v: v["id"] if isinstance(v, dict) else "")
def test_numpy_matches_reference(case, array):
    _, values = _goldens()
    call = lambda: ndd.decoders.numpy(ndd.tensor(_npy_bytes(array)), **_kwargs(case["kwargs"]))  # noqa: E731
    if array.flags.f_contiguous and array.ndim > 1:
        # The reference fails on Fortran-order files (it transposes them with CUDA);
        # ndd gives the array.
        out = np.asarray(call())
        np.testing.assert_array_equal(out, array)
        assert out.dtype == array.dtype
        return
    if case["expected"] == "error":
        with pytest.raises((ValueError, TypeError, RuntimeError)):
            np.asarray(call())
        return
    expected = values[case["id"]]
    out = call()
    assert out.dtype == ndd.dtype(expected.dtype)
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_numpy_batch_of_shapes_and_one_type():
    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.float32([[2.5]]), np.zeros((0, 4), np.float32)]
    out = ndd.decoders.numpy(ndd.batch([_npy_bytes(a) for a in arrays]))
    assert out.dtype == ndd.float32
    for got, expected in zip(out, arrays, strict=True):
        np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.parametrize("dtype", [None, ndd.float32])
def test_numpy_batch_of_arrays_of_different_ranks_is_refused(dtype):
    data = ndd.batch([_npy_bytes(np.arange(3, dtype=np.int32)), _npy_bytes(np.zeros((2, 2), np.int32))])
    with pytest.raises(
        ValueError, match="ndd.decoders.numpy: .*same number of dimensions; sample 0 has 1, sample 1 has 2"
    ):
        ndd.decoders.numpy(data, dtype=dtype).evaluate()


def test_numpy_of_a_zero_dimensional_array_with_dtype_stays_zero_dimensional():
    out = ndd.decoders.numpy(ndd.tensor(_npy_bytes(np.array(5, np.int16))), dtype=ndd.float32)
    assert out.shape == () and np.asarray(out) == 5.0


def test_numpy_batch_of_several_types_needs_dtype():
    data = ndd.batch([_npy_bytes(np.arange(3, dtype=np.int16)), _npy_bytes(np.ones(2, np.float32))])
    with pytest.raises(ValueError, match="different element types"):
        ndd.decoders.numpy(data)
    out = ndd.decoders.numpy(data, dtype=ndd.float32)
    assert [np.asarray(x).tolist() for x in out] == [[0.0, 1.0, 2.0], [1.0, 1.0]]


def test_numpy_of_a_pending_input_knows_its_type(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(4, dtype=np.uint16))
    data = ndd.io.file.read(ndd.tensor(_path(tmp_path / "a.npy")))
    out = ndd.decoders.numpy(data)
    assert out.dtype == ndd.uint16
    np.testing.assert_array_equal(np.asarray(out), np.arange(4, dtype=np.uint16))


@pytest.mark.parametrize(
    "data", [np.arange(30, dtype=np.uint8), _npy_bytes(np.arange(40, dtype=np.int32))[:100]]
)
def test_numpy_bad_file_is_an_error(data):
    with pytest.raises(ValueError, match="ndd.decoders.numpy"):
        np.asarray(ndd.decoders.numpy(ndd.tensor(data), dtype=ndd.int32))


def _npy_with_header(header, data):
    """A version 1.0 .npy file with the header dict text ``header``, padded as numpy pads."""
    text = header.encode("latin1")
    text += b" " * (63 - (10 + len(text)) % 64) + b"\n"
    return np.frombuffer(b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + data, np.uint8)


@pytest.mark.parametrize(
    "field, message",
    [
        ("'fortran_order': False, 'shape': [2, 3, 4]", "'shape' is not a tuple of sizes"),
        ("'fortran_order': False, 'shape': (24)", "'shape' is not a tuple of sizes"),
        ("'fortran_order': 'yes', 'shape': (24,)", "'fortran_order' is not True or False"),
    ],
)
def test_numpy_header_values_numpy_refuses_are_refused(field, message):
    # numpy refuses these headers too (the list shape was read as a 0-D array).
    data = _npy_with_header("{'descr': '<i4', " + field + ", }", np.arange(24, dtype="<i4").tobytes())
    with pytest.raises(ValueError):
        np.load(io.BytesIO(data.tobytes()))
    with pytest.raises(ValueError, match=f"ndd.decoders.numpy: not a .npy file .*{message}"):
        np.asarray(ndd.decoders.numpy(ndd.tensor(data)))
    ok = _npy_with_header(
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2L, 12L), }", data[-96:].tobytes()
    )
    np.testing.assert_array_equal(
        np.asarray(ndd.decoders.numpy(ndd.tensor(ok))), np.arange(24).reshape(2, 12)
    )


def test_numpy_files_sharing_a_header_give_their_own_data():
    files = [_npy_bytes(np.full((3, 4), v, np.int16)) for v in range(5)]
    for _ in range(2):  # the second time, every header comes from the parsed headers kept
        out = ndd.decoders.numpy(ndd.batch(files))
        assert out.dtype == ndd.int16
        assert [np.asarray(x).tolist() for x in out] == [[[v] * 4] * 3 for v in range(5)]
    # A header longer than those kept, and headers cut short, are parsed each time.
    long_header = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), " + " " * 5000 + "}"
    data = _npy_with_header(long_header, np.int32([7, 8, 9]).tobytes())
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(ndd.decoders.numpy(ndd.tensor(data))), [7, 8, 9])
    for cut in (9, 50, 127):
        with pytest.raises(ValueError, match="ndd.decoders.numpy: not a .npy file .*cut short"):
            np.asarray(ndd.decoders.numpy(ndd.tensor(files[0][:cut])))


def test_inflate_overlapping_match():
    # "a", then 8 bytes copied from 1 back (overlapping), then the 5 literals "bcdef" that
    # end every LZ4 block.
    block = np.frombuffer(b"\x14a\x01\x00\x50bcdef", np.uint8)
    out = ndd.decoders.inflate(ndd.tensor(block), shape=[14])
    assert bytes(np.asarray(out)) == b"a" * 9 + b"bcdef"


def test_inflate_refuses_a_block_that_does_not_end_in_literals():
    # The match reaches into the last 5 bytes of the output, which LZ4 keeps for literals.
    block = np.frombuffer(b"\x14a\x01\x00\x10b", np.uint8)
    with pytest.raises(ValueError, match="ndd.decoders.inflate: chunk 0: the data is not an LZ4 block"):
        np.asarray(ndd.decoders.inflate(ndd.tensor(block), shape=[10]))


def test_inflate_refuses_a_layout_of_another_length_than_the_shape():
    block = ndd.tensor(np.frombuffer(b"\x50hello", np.uint8))
    with pytest.raises(
        ValueError, match=r"ndd.decoders.inflate: 'layout' 'HW' has 2 dimensions, but 'shape' \[5\]"
    ):
        ndd.decoders.inflate(block, shape=[5], layout="HW")
    per_sample = ndd.batch([np.int32([5]), np.int32([1, 5])])
    with pytest.raises(ValueError, match=r"'layout' 'W' has 1 dimensions, but 'shape' \[1, 5\] has 2"):
        ndd.decoders.inflate(ndd.batch([block, block]), shape=per_sample, layout="W")
    assert ndd.decoders.inflate(block, shape=[1, 5], layout="HW").layout == "HW"


def test_inflate_empty_chunk_leaves_zeros():
    out = ndd.decoders.inflate(ndd.tensor(np.zeros(0, np.uint8)), shape=[4])
    np.testing.assert_array_equal(np.asarray(out), np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match="chunk 0 inflates to 0 bytes"):
        np.asarray(ndd.decoders.inflate(ndd.tensor(np.zeros(0, np.uint8)), shape=[4], check_output_size=True))


@pytest.mark.parametrize("dtype", [ndd.uint8, ndd.int16, ndd.float32])
def test_inflate_round_trip(dtype):
    rng = np.random.default_rng(0)
    values = (np.repeat(rng.integers(0, 50, 300), 7) % 13).astype(dtype.numpy).reshape(30, 70)
    packed = lz4_compress(values.tobytes())
    assert packed.size < values.nbytes
    out = ndd.decoders.inflate(ndd.tensor(packed), shape=[30, 70], dtype=dtype, layout="HW")
    assert out.dtype == dtype and out.layout == "HW"
    np.testing.assert_array_equal(np.asarray(out), values)


def test_inflate_chunks_become_a_sequence():
    frames = [np.full((4, 5), k, np.uint8) + np.arange(5, dtype=np.uint8) for k in range(3)]
    packed = [lz4_compress(f.tobytes()) for f in frames]
    sample = np.concatenate(packed)
    sizes = [p.size for p in packed]
    offsets = np.cumsum([0] + sizes[:-1]).tolist()
    for kwargs in (
        {"chunk_sizes": sizes},
        {"chunk_offsets": offsets},
        {"chunk_offsets": offsets, "chunk_sizes": sizes},
    ):
        out = ndd.decoders.inflate(ndd.tensor(sample), shape=[4, 5], layout="HW", **kwargs)
        assert out.layout == "FHW"
        np.testing.assert_array_equal(np.asarray(out), np.stack(frames))


def test_inflate_batch_with_per_sample_shapes():
    arrays = [np.arange(12, dtype=np.uint8), np.arange(20, dtype=np.uint8) % 3]
    data = ndd.batch([lz4_compress(a.tobytes()) for a in arrays])
    shapes = ndd.batch([np.array([3, 4], np.int32), np.array([5, 4], np.int32)])
    out = ndd.decoders.inflate(data, shape=shapes)
    for got, expected, shape in zip(out, arrays, [(3, 4), (5, 4)], strict=True):
        np.testing.assert_array_equal(np.asarray(got), expected.reshape(shape))


def test_inflate_size_checks():
    packed = lz4_compress(bytes(range(40)))
    with pytest.raises(ValueError, match="or inflates to more than the 30 bytes of its output"):
        np.asarray(ndd.decoders.inflate(ndd.tensor(packed), shape=[30]))
    padded = np.asarray(ndd.decoders.inflate(ndd.tensor(packed), shape=[50]))
    np.testing.assert_array_equal(padded, np.concatenate([np.arange(40), np.zeros(10)]).astype(np.uint8))
    with pytest.raises(ValueError, match="inflates to 40 bytes"):
        np.asarray(ndd.decoders.inflate(ndd.tensor(packed), shape=[50], check_output_size=True))
    with pytest.raises(ValueError, match="chunk 0: the data is not an LZ4 block"):
        np.asarray(ndd.decoders.inflate(ndd.tensor(packed[:-3]), shape=[40]))
    with pytest.raises(ValueError, match="'algorithm' must be one of"):
        ndd.decoders.inflate(ndd.tensor(packed), shape=[40], algorithm="ZSTD")


def test_imread_names_the_file_it_cannot_decode(tmp_path):
    bad, good = tmp_path / "bad.jpg", tmp_path / "good.png"
    bad.write_bytes(b"\xff\xd8\xff" + b"x" * 50)
    Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(good)
    with pytest.raises(RuntimeError, match=rf"cannot decode \(file {bad}\)"):
        ndd.imread(str(bad)).evaluate()
    with pytest.raises(RuntimeError, match=rf"cannot decode \(sample 1, file {bad}\)"):
        ndd.imread([str(good), bad]).evaluate()


def test_a_decode_error_without_text_says_what_it_is(monkeypatch):
    from ndd._ops import image_codec

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(image_codec, "decode", exhausted)
    encoded = ndd.tensor(np.frombuffer(image_samples.encoded("png_rgb").tobytes(), np.uint8))
    with pytest.raises(RuntimeError, match=r"ndd.decoders.image: cannot decode: out of memory$"):
        np.asarray(ndd.decoders.image(encoded))


def test_ycbcr_of_8_bit_colours_is_the_references():
    """The reference's YCbCr (tests/golden/make_ycbcr_goldens.py) of the colours where
    single-precision sums round away from the exact value, of those where the exact value
    is closest to a half, and of 1,024 others: equal, not within 1."""
    golden = np.load(GOLDEN_DIR / "ycbcr_values.npz")
    rgb = golden["decoder_in"]
    buf = io.BytesIO()
    Image.fromarray(rgb.reshape(1, -1, 3)).save(buf, format="PNG")
    out = ndd.decoders.image(np.frombuffer(buf.getvalue(), np.uint8), output_type=types.YCbCr)
    np.testing.assert_array_equal(np.asarray(out).reshape(-1, 3), golden["decoder_out"])


def _png_claiming(width, height):
    """A PNG whose header claims ``width`` x ``height`` RGB pixels, with a few bytes of data."""

    def chunk(kind, payload):
        return (
            struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress(bytes(3 * 16))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return np.frombuffer(png, np.uint8)


@pytest.mark.parametrize("mode", [None, ndd.EvalMode.sync_cpu, ndd.EvalMode.deferred])
def test_a_header_claiming_more_pixels_than_memory_holds_fails_its_sample(mode):
    # A damaged size field may claim terabytes of pixels: decoding them had the
    # process killed for lack of memory. The sample fails, naming the size; the
    # error itself (in every mode) carries the other samples, decoded.
    good = image_samples.encoded("png_rgb")
    batch = ndd.batch([_png_claiming(1_000_000, 1_000_000), good])
    with pytest.raises(ImageDecodeError) as info:
        if mode is None:
            ndd.decoders.image(batch).evaluate()
        else:
            with mode:
                ndd.decoders.image(batch).evaluate()
    assert re.search(
        r"ndd.decoders.image: cannot decode \(sample 0\): the image's header says 1000000x1000000 pixels "
        r"\(2794\.0 GiB decoded\), more than half of this machine's memory",
        str(info.value),
    )
    assert info.value.failed == (0,)
    assert info.value.decoded[0] is None
    np.testing.assert_array_equal(info.value.decoded[1], np.asarray(_pil("png_rgb")))


@pytest.mark.parametrize("mode", [None, ndd.EvalMode.sync_cpu])
def test_numpy_batch_with_a_bad_file_keeps_the_other_samples(mode):
    # A damaged header (or data cut short) fails its sample when the batch runs; the
    # error names it and carries the others (the call used to fail for the batch).
    good = [np.arange(6, dtype=np.int16).reshape(2, 3), np.full((1, 3), 7, np.int16)]
    header = _npy_bytes(good[0]).tobytes().replace(b"'shape'", b"'shap\\xf1'")
    cut = _npy_bytes(np.arange(40, dtype=np.int16).reshape(4, 10))[:100]
    batch = ndd.batch([_npy_bytes(good[0]), np.frombuffer(header, np.uint8), cut, _npy_bytes(good[1])])
    with pytest.raises(
        ValueError, match=r"ndd.decoders.numpy: cannot decode \(sample 1\): not a .npy file"
    ) as info:
        if mode is None:
            ndd.decoders.numpy(batch).evaluate()
        else:
            with mode:
                ndd.decoders.numpy(batch)
    error = info.value
    assert isinstance(error, RuntimeError) and error.failed == (1, 2)
    assert "1 more sample(s) failed: [2]" in str(error)
    assert error.decoded[1] is None and error.decoded[2] is None
    np.testing.assert_array_equal(error.decoded[0], good[0])
    np.testing.assert_array_equal(error.decoded[3], good[1])


@pytest.mark.parametrize("name", ["chunk_offsets", "chunk_sizes"])
def test_inflate_refuses_an_empty_chunk_list(name):
    # It was zip()'s "argument 2 is longer than argument 1" (found by fuzzing).
    block = ndd.tensor(np.frombuffer(b"\x50hello", np.uint8))
    with pytest.raises(ValueError, match=f"ndd.decoders.inflate.*'{name}' is empty"):
        np.asarray(ndd.decoders.inflate(block, shape=[5], **{name: []}))
