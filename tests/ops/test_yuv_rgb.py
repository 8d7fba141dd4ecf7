"""yuv420p frames to RGB (ndd/_cpu/yuv_rgb.pyx) give swscale's bytes, as
``decoders.video`` calls it, for every size, colorspace, range and chroma siting;
and ``decoders.video`` takes that path only where it does."""

import io

import numpy as np
import pytest

import ndd
from ndd._cpu import yuv_rgb
from ndd._ops.video import _SITING_TRIALS, VideoFile

av = pytest.importorskip("av")

# swscale's SWS_BILINEAR | SWS_FULL_CHR_H_INT | SWS_ACCURATE_RND (PyAV 17 has no names for the last two).
SWSCALE = 0x2 | 0x2000 | 0x40000
# Values where the arithmetic turns: the range ends, the chroma centre, the extremes.
EDGES = np.array([0, 1, 15, 16, 17, 127, 128, 129, 234, 235, 236, 239, 240, 241, 254, 255], np.uint8)
# AVColorSpace x AVColorRange as frames carry them (unspecified, limited, full).
COLORS = [(cs, cr) for cs in sorted(yuv_rgb.COLORSPACES) for cr in sorted(yuv_rgb.COLOR_RANGES)]


def _swscale(frame):
    return (
        av.video.reformatter.VideoReformatter()
        .reformat(frame, format="rgb24", interpolation=SWSCALE, threads=1)
        .to_ndarray()
    )


def _frame(y, u, v, colorspace=2, color_range=0, fmt="yuv420p"):
    height, width = y.shape
    frame = av.VideoFrame(width, height, fmt)
    for plane, values in zip(frame.planes, (y, u, v), strict=True):
        rows = np.frombuffer(plane, np.uint8).reshape(-1, plane.line_size)
        rows[: values.shape[0], : values.shape[1]] = values
    frame.colorspace, frame.color_range = colorspace, color_range
    return frame


def _planes(rng, width, height, kind):
    shapes = [(height, width), ((height + 1) // 2, (width + 1) // 2), ((height + 1) // 2, (width + 1) // 2)]
    if kind == "edges":
        return [rng.choice(EDGES, shape) for shape in shapes]
    if kind == "checker":  # 0/255: the largest steps for the interpolation
        return [(rng.integers(0, 2, shape) * 255).astype(np.uint8) for shape in shapes]
    return [rng.integers(0, 256, shape, dtype=np.uint8) for shape in shapes]


def _convert(y, u, v, colors, siting=0, baseline=False):
    out = np.empty((*y.shape, 3), np.uint8)
    yuv_rgb.yuv420p_to_rgb(y, u, v, out, *colors, siting, baseline)
    return out


SIZES = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 3), (2, 3), (3, 5), (7, 5), (17, 9), (9, 17), (160, 120), (161, 121),
         (161, 119), (160, 121), (641, 359)]  # fmt: skip


@pytest.mark.parametrize("baseline", [False, True], ids=["best", "baseline"])
@pytest.mark.parametrize("kind", ["random", "edges", "checker"])
@pytest.mark.parametrize("width, height", SIZES)
def test_frames_convert_as_swscale_converts_them(width, height, kind, baseline):
    rng = np.random.default_rng(width * 1000 + height)
    for colors in [(2, 0), (1, 1), (5, 2)]:
        y, u, v = _planes(rng, width, height, kind)
        expected = _swscale(_frame(y, u, v, *colors))
        np.testing.assert_array_equal(_convert(y, u, v, colors, baseline=baseline), expected)


@pytest.mark.parametrize("colorspace, color_range", COLORS)
def test_every_value_of_every_colorspace_and_range(colorspace, color_range):
    # Every (U, V) pair on a 256x256 chroma plane of constant 2x2 blocks, under luma
    # running through every value: the matrix and its wrap-around at the extremes.
    u, v = np.meshgrid(np.arange(256, dtype=np.uint8), np.arange(256, dtype=np.uint8))
    y = (np.arange(512 * 512) % 256).astype(np.uint8).reshape(512, 512)
    expected = _swscale(_frame(y, u, v, colorspace, color_range))
    np.testing.assert_array_equal(_convert(y, u, v, (colorspace, color_range)), expected)


def test_full_range_frames_of_the_jpeg_format_are_full_range():
    rng = np.random.default_rng(3)
    y, u, v = _planes(rng, 33, 17, "random")
    expected = _swscale(_frame(y, u, v, 2, 0, fmt="yuvj420p"))
    np.testing.assert_array_equal(_convert(y, u, v, (2, yuv_rgb.FULL_RANGE)), expected)


def test_planes_with_padded_rows_and_a_padded_output():
    rng = np.random.default_rng(4)
    y, u, v = (np.ascontiguousarray(np.pad(p, ((0, 0), (0, 13)))) for p in _planes(rng, 41, 23, "random"))
    expected = _swscale(_frame(y[:, :41], u[:, :21], v[:, :21]))
    out = np.zeros((23, 50, 3), np.uint8)
    yuv_rgb.yuv420p_to_rgb(y[:, :41], u[:, :21], v[:, :21], out[:, :41], 2, 0, 0)
    np.testing.assert_array_equal(out[:, :41], expected)
    assert not out[:, 41:].any()


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda y, u, v, out: yuv_rgb.yuv420p_to_rgb(y, u, v, out, 3, 0, 0), "colorspace 3"),
        (lambda y, u, v, out: yuv_rgb.yuv420p_to_rgb(y, u, v, out, 2, 5, 0), "range 5"),
        (lambda y, u, v, out: yuv_rgb.yuv420p_to_rgb(y, u[:1], v, out, 2, 0, 0), "chroma planes must be"),
        (lambda y, u, v, out: yuv_rgb.yuv420p_to_rgb(y, u, v, out[:1], 2, 0, 0), "'out' must be"),
    ],
)
def test_what_it_does_not_convert_is_refused(call, match):
    y, u, v = _planes(np.random.default_rng(5), 8, 6, "random")
    with pytest.raises(ValueError, match=match):
        call(y, u, v, np.empty((6, 8, 3), np.uint8))


# ---------------------------------------------------------------- decoded videos


def _video(codec, width, height, count=6, container="webm", pix_fmt="yuv420p", params=None, flat=False):
    buffer = io.BytesIO()
    rng = np.random.default_rng(width + height)
    with av.open(buffer, "w", format=container) as out:
        stream = out.add_stream(codec, rate=25)
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        if params:
            stream.options = {"x264-params": params}
        for i in range(count):
            yy, xx = np.mgrid[:height, :width]
            rgb = np.stack([(xx * 5 + i * 9) % 256, (yy * 3 + xx) % 256, (xx * 2 + yy * 7 + i) % 256], -1)
            rgb = np.clip(rgb + rng.integers(-30, 31, rgb.shape), 0, 255).astype(np.uint8)
            if flat:  # grey: the chroma is flat
                rgb[...] = rgb[..., :1]
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return np.frombuffer(buffer.getvalue(), np.uint8)


def _swscale_frames(data):
    with av.open(io.BytesIO(data.tobytes())) as container:
        return np.stack([_swscale(frame) for frame in container.decode(video=0)])


def _encoder(name):
    try:
        av.codec.Codec(name, "w")
    except Exception:  # noqa: BLE001 - PyAV builds without the encoder
        pytest.skip(f"PyAV has no {name} encoder")


@pytest.mark.parametrize(
    "codec, container, width, height, params, siting",
    [
        ("libvpx-vp9", "webm", 160, 120, None, 0),
        ("libvpx-vp9", "webm", 161, 121, None, 0),
        ("libvpx", "webm", 33, 17, None, 0),
        # H.264 decoders tag their frames' chroma siting: left unless the stream says.
        ("libx264", "mp4", 96, 54, None, 1),
        ("libx264", "mp4", 96, 54, "chromaloc=2", 3),
        ("libx264", "mp4", 96, 54, "chromaloc=5", 6),
    ],
)
def test_a_video_learns_its_chroma_siting_and_gives_swscales_frames(
    codec, container, width, height, params, siting
):
    _encoder(codec)
    data = _video(codec, width, height, container=container, params=params)
    with VideoFile(data, "test") as video:
        frames = video.read_frames(np.arange(video.frame_count))
        assert video._siting == siting
    np.testing.assert_array_equal(frames, _swscale_frames(data))
    np.testing.assert_array_equal(np.asarray(ndd.decoders.video(data)), frames)


def test_a_video_of_flat_chroma_stays_with_swscale():
    # Grey frames: every siting gives swscale's bytes, so none is learned.
    data = _video("libvpx-vp9", 32, 24, count=8, flat=True)
    with VideoFile(data, "test") as video:
        frames = video.read_frames(np.arange(video.frame_count))
        assert video._siting is None and video._siting_trials == 0
    assert len(frames) > _SITING_TRIALS
    np.testing.assert_array_equal(frames, _swscale_frames(data))


def test_frames_other_than_8_bit_progressive_4_2_0_stay_with_swscale():
    data = _video("libvpx-vp9", 32, 24, pix_fmt="yuv444p")
    with VideoFile(data, "test") as video:
        frames = video.read_frames(np.arange(video.frame_count))
        assert video._siting is None and video._siting_trials == _SITING_TRIALS
    np.testing.assert_array_equal(frames, _swscale_frames(data))


class _Plane(bytes):
    """A frame plane as PyAV gives it: its bytes, line size and extents."""


class _Format:
    name = "yuv420p"


class _Frame:
    format, interlaced_frame, colorspace, color_range, side_data = _Format(), False, 2, 0, ()

    def __init__(self, planes):
        self.planes = planes


def _plane(size, line_size, height, width):
    plane = _Plane(size)
    plane.line_size, plane.height, plane.width = line_size, height, width
    return plane


@pytest.mark.parametrize(
    "luma",
    [
        _plane(16 * 4 - 1, 16, 4, 8),  # shorter than its rows
        _plane(16 * 4, -16, 4, 8),  # stored bottom-up
    ],
    ids=["short", "bottom-up"],
)
def test_planes_the_conversion_cannot_read_stay_with_swscale(luma):
    from ndd._ops.video import _yuv420p

    chroma = [_plane(16 * 2, 16, 2, 4) for _ in range(2)]
    assert _yuv420p(_Frame([luma, *chroma])) is None
    planes, colors = _yuv420p(_Frame([_plane(16 * 4, 16, 4, 8), *chroma]))
    assert [p.shape for p in planes] == [(4, 8), (2, 4), (2, 4)] and colors == (2, 0)


class _Type:
    def __init__(self, name):
        self.name = name


class _SideData:
    def __init__(self, name):
        self.type = _Type(name)


@pytest.mark.parametrize("listed", [_SideData, _Type], ids=["objects (PyAV 18)", "types (PyAV 19)"])
def test_frames_with_hdr_side_data_stay_with_swscale(listed):
    from ndd._ops.video import _yuv420p

    planes = [_plane(16 * 4, 16, 4, 8), _plane(16 * 2, 16, 2, 4), _plane(16 * 2, 16, 2, 4)]
    frame = _Frame(planes)
    frame.side_data = [listed("SEI_UNREGISTERED")]
    assert _yuv420p(frame) is not None
    for name in ("MASTERING_DISPLAY_METADATA", "DYNAMIC_HDR_PLUS"):
        frame.side_data = [listed("SEI_UNREGISTERED"), listed(name)]
        assert _yuv420p(frame) is None


@pytest.fixture
def fresh_sitings(monkeypatch):
    """No siting learned yet in this process; counts the frames swscale converts."""
    from ndd._ops import video as video_module

    monkeypatch.setattr(video_module, "_learned_sitings", {})
    converted = []
    to_rgb = VideoFile._to_rgb
    monkeypatch.setattr(VideoFile, "_to_rgb", lambda self, frame: converted.append(1) or to_rgb(self, frame))
    return converted


def test_a_video_opened_again_takes_the_siting_learned_before(fresh_sitings):
    data = _video("libvpx-vp9", 160, 120, count=8)
    with VideoFile(data, "test") as first:
        frames = first.read_frames(np.arange(first.frame_count))
    assert first._siting == 0 and len(fresh_sitings) == 1
    fresh_sitings.clear()
    with VideoFile(data.copy(), "test") as again:
        assert again._siting == 0 and again._siting_trials == 0
        np.testing.assert_array_equal(again.read_frames(np.arange(again.frame_count)), frames)
    assert fresh_sitings == []  # swscale converted nothing
    np.testing.assert_array_equal(frames, _swscale_frames(data))


def test_videos_of_different_sitings_keep_their_own(fresh_sitings):
    _encoder("libx264")
    left = _video("libx264", 96, 54, container="mp4")
    bottom = _video("libx264", 96, 54, container="mp4", params="chromaloc=5")
    for data, siting in [(left, 1), (bottom, 6), (left, 1), (bottom, 6)]:
        with VideoFile(data, "test") as video:
            frames = video.read_frames(np.arange(video.frame_count))
            assert video._siting == siting
        np.testing.assert_array_equal(frames, _swscale_frames(data))


def test_a_video_file_rewritten_with_another_video_learns_again(fresh_sitings, tmp_path):
    _encoder("libx264")
    path = tmp_path / "clip.mp4"
    path.write_bytes(_video("libx264", 96, 54, container="mp4").tobytes())
    with VideoFile(path, "test") as video:
        video.read_frames([0])
        assert video._siting == 1
    with VideoFile(path, "test") as video:
        assert video._siting == 1 and video._siting_trials == 0
    other = _video("libx264", 96, 54, count=7, container="mp4", params="chromaloc=2")
    path.write_bytes(other.tobytes())
    with VideoFile(path, "test") as video:
        assert video._siting is None
        frames = video.read_frames(np.arange(video.frame_count))
        assert video._siting == 3
    np.testing.assert_array_equal(frames, _swscale_frames(other))
