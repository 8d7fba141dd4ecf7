"""The decoders on damaged files: deterministic mutations of small files of every
kind (bits flipped, bytes overwritten in the header, cut short, zeroed, repeated,
inserted, a size field set to 2**31 - 1), each decoded in a batch beside the intact
file. A damaged file either decodes or fails alone: the error names it and carries
the intact sample, decoded as on its own. Nothing may crash the process, allocate
what a damaged size field claims, or raise an error without the operator's name
(all of which a longer run of these mutations found once)."""

import io
import random
import wave

import numpy as np
import pytest
from PIL import Image

import ndd
from ndd._errors import SampleDecodeError

MUTATIONS_PER_FILE = 40
# Pillow warns of the damage it meets (a corrupt EXIF block); that is expected here.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _mutate(data: bytes, rng: random.Random) -> bytes:
    d = bytearray(data)
    kind = rng.randrange(7)
    if kind == 0:
        for _ in range(rng.randint(1, 10)):
            i = rng.randrange(len(d))
            d[i] ^= 1 << rng.randrange(8)
    elif kind == 1:
        d = d[: rng.randrange(len(d))]
    elif kind == 2:
        for _ in range(rng.randint(1, 6)):
            d[rng.randrange(min(len(d), 120))] = rng.randrange(256)
    elif kind == 3:
        i = rng.randrange(len(d))
        j = min(len(d), i + rng.randint(1, 200))
        d[i:j] = bytes(j - i)
    elif kind == 4:
        i = rng.randrange(max(1, len(d) - 4))
        d[i : i + 4] = b"\xff\xff\xff\x7f"
    elif kind == 5:
        i = rng.randrange(len(d))
        j = min(len(d), i + rng.randint(1, 300))
        d[j:j] = d[i:j]
    else:
        i = rng.randrange(len(d))
        d[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return bytes(d)


def _photo():
    rng = np.random.default_rng(0)
    y, x = np.mgrid[:45, :67]
    pixels = np.stack([x * 3, y * 5, (x + y) * 2], axis=-1) + rng.integers(0, 20, (45, 67, 3))
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def _image_files():
    photo = _photo()
    files = {}
    for name, fmt, kwargs in [
        ("jpeg", "JPEG", {"quality": 85}),
        ("progressive_jpeg", "JPEG", {"quality": 85, "progressive": True}),
        ("png", "PNG", {}),
        ("bmp", "BMP", {}),
        ("tiff", "TIFF", {}),
        ("deflate_tiff", "TIFF", {"compression": "tiff_adobe_deflate", "tiffinfo": {278: 8, 317: 2}}),
        ("webp", "WEBP", {}),
        ("lossless_webp", "WEBP", {"lossless": True}),
        ("jpeg2000", "JPEG2000", {}),
    ]:
        stream = io.BytesIO()
        photo.save(stream, fmt, **kwargs)
        files[name] = stream.getvalue()
    return files


def _audio_files():
    sf = pytest.importorskip("soundfile")
    t = np.arange(4000) / 8000
    pcm = (np.sin(2 * np.pi * 300 * t) * 12000).astype("<i2")
    wav = io.BytesIO()
    with wave.open(wav, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(pcm.tobytes())
    flac = io.BytesIO()
    sf.write(flac, pcm, 8000, format="FLAC")
    return {"wav": wav.getvalue(), "flac": flac.getvalue()}


def _video_file():
    av = pytest.importorskip("av")
    stream = io.BytesIO()
    with av.open(stream, "w", format="webm") as out:
        video = out.add_stream("libvpx-vp9", rate=25)
        video.width, video.height, video.pix_fmt = 32, 24, "yuv420p"
        for i in range(4):
            frame = np.full((24, 32, 3), 40 * i, np.uint8)
            for packet in video.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                out.mux(packet)
        for packet in video.encode():
            out.mux(packet)
    return stream.getvalue()


def _npy_file():
    stream = io.BytesIO()
    np.save(stream, np.arange(60, dtype=np.float32).reshape(3, 4, 5))
    return stream.getvalue()


def _decode_beside_intact(decode, good, seed):
    """Decode [damaged, intact]; the intact sample's result, checked against the error."""
    damaged = _mutate(good, random.Random(seed))
    batch = ndd.batch([np.frombuffer(damaged, np.uint8), np.frombuffer(good, np.uint8)])
    try:
        out = decode(batch)
        out = out[0] if isinstance(out, tuple) else out
        return np.asarray(out.select(1))
    except SampleDecodeError as exc:
        assert exc.failed == (0,), str(exc)
        assert "(sample 0)" in str(exc), str(exc)
        intact = exc.decoded[1]
        return np.asarray(intact[0] if isinstance(intact, tuple) else intact)


def _check(decode, good, first_seed):
    alone = decode(ndd.tensor(np.frombuffer(good, np.uint8)))
    expected = np.asarray(alone[0] if isinstance(alone, tuple) else alone)
    for seed in range(first_seed, first_seed + MUTATIONS_PER_FILE):
        np.testing.assert_array_equal(_decode_beside_intact(decode, good, seed), expected)


@pytest.mark.parametrize("name", sorted(_image_files()))
@pytest.mark.parametrize(
    "decode",
    [
        ndd.decoders.image,
        lambda b: ndd.decoders.image_crop(b, crop=(20, 30), crop_pos_x=0.7, crop_pos_y=0.2),
        lambda b: ndd.decoders.image_slice(b, rel_start=[0.25, 0.5], rel_shape=[0.5, 0.25]),
    ],
    ids=["image", "image_crop", "image_slice"],
)
def test_damaged_images_fail_alone(name, decode):
    files = _image_files()
    _check(decode, files[name], first_seed=100 * sorted(files).index(name))


@pytest.mark.parametrize("name", ["wav", "flac"])
def test_damaged_audio_fails_alone(name):
    _check(ndd.decoders.audio, _audio_files()[name], first_seed=7000)


def test_damaged_video_fails_alone():
    _check(ndd.decoders.video, _video_file(), first_seed=8000)


def test_damaged_npy_files_fail_alone():
    # (With dtype: a damaged header may name another element type.)
    _check(lambda b: ndd.decoders.numpy(b, dtype=ndd.float32), _npy_file(), first_seed=9000)
