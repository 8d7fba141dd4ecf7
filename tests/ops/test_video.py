"""decoders.video: frame selection, padding and pixels against the reference's
goldens (tests/golden/video_cases.json, made by tests/golden/make_video_goldens.py),
codecs the reference's CPU decoder lacks against PyAV's own reading, seeking,
corrupt data and argument errors."""

import functools
import gc
import io
import json
import os
import pathlib
import signal
import sys
import time

import numpy as np
import pytest

import ndd
from ndd._ops.video import VideoDecodeError, VideoFile, import_av
from ndd._optional import release
from ndd._prepare.args import InvalidArgumentError

av = pytest.importorskip("av")

GOLDEN_DIR = pathlib.Path(__file__).parent.parent / "golden"
QUALNAME = "ndd.decoders.video"
# swscale's SWS_BILINEAR | SWS_FULL_CHR_H_INT | SWS_ACCURATE_RND (PyAV 17 has no names for the last two).
SWS_EXACT = 0x2 | 0x2000 | 0x40000


@functools.cache
def _golden():
    with open(GOLDEN_DIR / "video_cases.json", encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    with np.load(GOLDEN_DIR / "video_values.npz") as npz:
        arrays = {key: npz[key] for key in npz.files}
    return cases, arrays


def _case_id(case):
    return ",".join(f"{k}={v}" for k, v in case["kwargs"].items()) or "all"


_CASES = _golden()[0]
_VALUE_CASES = [c for c in _CASES if "error" not in c]
_ERROR_CASES = [c for c in _CASES if "error" in c]
_VIDEOS = sorted(n for n in _golden()[1] if not n.endswith("_frames"))


def _pattern(i, height, width):
    y, x = np.mgrid[:height, :width]
    rgb = np.stack([(x * 7 + i * 13) % 256, (y * 11 + i * 5) % 256, ((x + y) * 3 + i * 29) % 256], -1)
    return rgb.astype(np.uint8)


def _encode(codec, count, *, width=32, height=24, pix_fmt="yuv420p", gop=5, container="webm"):
    """A moving colour pattern of ``count`` frames, a key frame every ``gop``."""
    buffer = io.BytesIO()
    with av.open(buffer, "w", format=container) as out:
        stream = out.add_stream(codec, rate=25)
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        stream.codec_context.gop_size = gop
        for i in range(count):
            for packet in stream.encode(
                av.VideoFrame.from_ndarray(_pattern(i, height, width), format="rgb24")
            ):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return np.frombuffer(buffer.getvalue(), np.uint8)


def _pyav_frames(data):
    """Every frame as PyAV reads it, converted as the operator converts. One swscale
    thread: PyAV 19 keeps a converter per thread, and one with slice threads hangs the
    child of a later fork from another thread, which frees it."""
    with av.open(io.BytesIO(data.tobytes())) as container:
        return np.stack(
            [
                f.reformat(format="rgb24", interpolation=SWS_EXACT, threads=1).to_ndarray()
                for f in container.decode(video=0)
            ]
        )


# ---------------------------------------------------------------- reference goldens


@pytest.mark.parametrize("name", _VIDEOS)
def test_pixels_are_the_references(name):
    """VP9 (4:2:0 at even and odd sizes, 4:4:4) and VP8: every bit as the reference."""
    _, arrays = _golden()
    out = ndd.decoders.video(ndd.tensor(arrays[name]))
    assert out.layout == "FHWC"
    np.testing.assert_array_equal(np.asarray(out), arrays[f"{name}_frames"])


@pytest.mark.parametrize("case", _VALUE_CASES, ids=[_case_id(c) for c in _VALUE_CASES])
def test_frame_selection_matches_reference(case):
    _, arrays = _golden()
    frames = arrays[f"{case['video']}_frames"]
    out = np.asarray(ndd.decoders.video(ndd.tensor(arrays[case["video"]]), **case["kwargs"]))
    assert out.shape == (len(case["frames"]),) + frames.shape[1:]
    for got, index in zip(out, case["frames"], strict=True):
        expected = frames[index] if index >= 0 else np.broadcast_to(np.uint8(case["fill"]), frames.shape[1:])
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("case", _ERROR_CASES, ids=[_case_id(c) for c in _ERROR_CASES])
def test_rejects_what_the_reference_rejects(case):
    _, arrays = _golden()
    with pytest.raises(InvalidArgumentError, match=QUALNAME):
        np.asarray(ndd.decoders.video(ndd.tensor(arrays[case["video"]]), **case["kwargs"]))


# ---------------------------------------------------------------- codecs


@pytest.mark.parametrize(
    "codec, container",
    [("libx264", "mp4"), ("mpeg4", "mp4"), ("libvpx-vp9", "webm"), ("libvpx", "webm")],
)
def test_decodes_like_pyav(codec, container):
    """H.264 (with B-frames: decode order differs from presentation order) and
    MPEG-4, which the reference's CPU decoder refuses, as PyAV reads them."""
    try:
        data = _encode(codec, 12, container=container)
    except av.error.FFmpegError:
        pytest.skip(f"this FFmpeg has no {codec} encoder")
    out = np.asarray(ndd.decoders.video(ndd.tensor(data)))
    np.testing.assert_array_equal(out, _pyav_frames(data))


def test_raw_stream_without_timestamps():
    """An H.264 elementary stream has no timestamps and cannot seek: frames are
    counted as decoded, from the start."""
    try:
        data = _encode("libx264", 10, container="h264")
    except av.error.FFmpegError:
        pytest.skip("this FFmpeg has no libx264 encoder")
    every = _pyav_frames(data)
    with VideoFile(data) as video:
        assert video.frame_count == 10
        np.testing.assert_array_equal(video.read_frames([9, 2, 5, 2]), every[[9, 2, 5, 2]])


def test_a_raw_stream_reopened_to_count_its_frames_keeps_its_properties():
    """Counting a raw stream's frames reopens it; its properties come from the new
    stream (reading the closed one's was a use after free that crashed now and then)."""
    try:
        data = _encode("libx264", 4, container="h264")
    except av.error.FFmpegError:
        pytest.skip("this FFmpeg has no libx264 encoder")
    for _ in range(100):
        with VideoFile(data) as video:
            assert (video.frame_count, video.height, video.width) == (4, 24, 32)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_video_read_before_a_fork_is_released_in_the_child():
    """A worker process forked from one that converted frames frees the converter it
    inherited without waiting for threads that were not forked (it hung there)."""
    video = VideoFile(_encode("libvpx-vp9", 3))
    video.read_frames([0])
    pid = os.fork()
    if pid == 0:  # the child: release the parent's video, and leave
        try:
            video.close()
            gc.collect()
        finally:
            os._exit(0)
    for _ in range(200):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung releasing the video")
    assert os.waitstatus_to_exitcode(status) == 0
    video.close()


def test_pixels_are_close_to_the_encoded_pattern():
    data = _encode("libvpx-vp9", 3, width=64, height=48)
    out = np.asarray(ndd.decoders.video(ndd.tensor(data), frames=[0]))[0].astype(int)
    assert np.abs(out - _pattern(0, 48, 64)).mean() < 12


# ---------------------------------------------------------------- VideoFile


def test_video_file_properties():
    data = _encode("libvpx-vp9", 10, width=33, height=25)
    with VideoFile(data) as video:
        assert (video.frame_count, video.height, video.width) == (10, 25, 33)
        assert video.frame_rate == 25.0
        np.testing.assert_allclose(video.timestamps([0, 3, 9]), [0.0, 0.12, 0.36])


def test_video_file_reads_frames_in_any_order_with_repeats():
    data = (
        _encode("libx264", 20, container="mp4") if "libx264" in av.codecs_available else _encode("mpeg4", 20)
    )
    every = _pyav_frames(data)
    with VideoFile(data.tobytes()) as video:
        indices = [19, 3, 3, 0, 12, 7, 19]
        np.testing.assert_array_equal(video.read_frames(indices), every[indices])


def test_video_file_opens_paths(tmp_path):
    path = tmp_path / "clip.webm"
    path.write_bytes(_encode("libvpx", 4).tobytes())
    with VideoFile(path) as video:
        assert video.read_frames([3]).shape == (1, 24, 32, 3)


def test_video_file_refuses_frames_out_of_range():
    with VideoFile(_encode("libvpx", 4)) as video, pytest.raises(IndexError, match="frame 4"):
        video.read_frames([1, 4])


class _CountingContainer:
    """A PyAV container that counts the frames it decodes."""

    def __init__(self, container):
        self._container = container
        self.decoded = 0

    def __getattr__(self, name):
        return getattr(self._container, name)

    def decode(self, *args, **kwargs):
        for frame in self._container.decode(*args, **kwargs):
            self.decoded += 1
            yield frame


def test_frames_near_the_end_are_reached_by_seeking():
    data = _encode("libvpx-vp9", 40, gop=5)
    every = _pyav_frames(data)
    with VideoFile(data) as video:
        counting = video._container = _CountingContainer(video._container)
        np.testing.assert_array_equal(video.read_frames([38, 36, 38]), every[[38, 36, 38]])
        # From the key frame 35: frames 35 to 38.
        assert counting.decoded == 4


def test_far_apart_frames_skip_the_frames_between():
    data = _encode("libvpx-vp9", 40, gop=5)
    every = _pyav_frames(data)
    with VideoFile(data) as video:
        counting = video._container = _CountingContainer(video._container)
        np.testing.assert_array_equal(video.read_frames([2, 31]), every[[2, 31]])
        assert counting.decoded == 3 + 2  # 0..2, then 30..31


# ---------------------------------------------------------------- batches and errors


def test_batch_with_per_sample_arguments():
    a, b = _encode("libvpx", 6), _encode("libvpx-vp9", 9, width=33, height=25)
    out = ndd.decoders.video(
        ndd.batch([a, b]),
        start_frame=ndd.batch([np.int32(1), np.int32(5)]),
        sequence_length=ndd.batch([np.int32(2), np.int32(6)]),
    )
    first, second = (np.asarray(s) for s in out)
    np.testing.assert_array_equal(first, _pyav_frames(a)[[1, 2]])
    expected = np.concatenate([_pyav_frames(b)[5:9], np.zeros((2, 25, 33, 3), np.uint8)])
    np.testing.assert_array_equal(second, expected)


def test_per_sample_frames():
    data = _encode("libvpx", 6)
    out = ndd.decoders.video(ndd.batch([data, data]), frames=ndd.batch([np.array([5, 0]), np.array([2])]))
    every = _pyav_frames(data)
    np.testing.assert_array_equal(np.asarray(out.select(0)), every[[5, 0]])
    np.testing.assert_array_equal(np.asarray(out.select(1)), every[[2]])


@pytest.mark.parametrize("data", [b"not a video at all" * 8, None], ids=["garbage", "truncated"])
def test_undecodable_sample_names_operator_and_sample(data):
    good = _encode("libvpx", 4)
    bad = np.frombuffer(data, np.uint8) if data is not None else good[:60]
    with pytest.raises(VideoDecodeError, match=rf"{QUALNAME}: cannot decode \(sample 1\)") as info:
        np.asarray(ndd.decoders.video(ndd.batch([good, bad])).select(0))
    error = info.value.__cause__ or info.value
    assert error.failed == (1,)
    np.testing.assert_array_equal(error.decoded[0], _pyav_frames(good))
    assert error.decoded[1] is None


def test_a_stream_without_a_decoder_names_its_sample():
    # A damaged codec id: FFmpeg opens the stream but has no decoder for it (the
    # operator failed with AttributeError, losing the batch).
    good = _encode("libvpx-vp9", 4)
    raw = good.tobytes()
    assert raw.count(b"V_VP9") == 1
    bad = np.frombuffer(raw.replace(b"V_VP9", b"V_QQ9"), np.uint8)
    with pytest.raises(
        VideoDecodeError, match=rf"{QUALNAME}: cannot decode \(sample 1\): .*no decoder"
    ) as info:
        np.asarray(ndd.decoders.video(ndd.batch([good, bad])).select(0))
    assert info.value.failed == (1,)
    np.testing.assert_array_equal(info.value.decoded[0], _pyav_frames(good))


def test_metadata_that_is_not_utf8_does_not_stop_the_frames():
    # A tag in another encoding (here one byte of the encoder's name) makes the opening
    # of PyAV before 19 raise UnicodeDecodeError.
    good = _encode("libvpx-vp9", 4)
    raw = good.tobytes()
    tag = raw.rindex(b"Lavf")
    bad = np.frombuffer(raw[: tag + 1] + b"\xb1" + raw[tag + 2 :], np.uint8)
    if release(av.__version__) < (19,):
        with pytest.raises(UnicodeDecodeError):
            av.open(io.BytesIO(bad.tobytes()))
    np.testing.assert_array_equal(np.asarray(ndd.decoders.video(ndd.tensor(bad))), _pyav_frames(good))


def test_undecodable_tensor_raises():
    with pytest.raises(VideoDecodeError, match=f"{QUALNAME}: cannot decode"):
        np.asarray(ndd.decoders.video(ndd.tensor(np.zeros(100, np.uint8))))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"frames": [1], "sequence_length": 2}, "'frames' cannot be given with 'sequence_length'"),
        ({"end_frame": 3, "sequence_length": 2}, "'sequence_length' and 'end_frame'"),
        ({"fill_value": [1, 2]}, "'fill_value' must have 1 value or one per channel"),
        ({"fill_value": 256}, r"'fill_value' must be in \[0, 255\]"),
        ({"stride": 0}, "'stride' must be positive, got 0"),
        ({"sequence_length": -1}, "'sequence_length' must not be negative"),
        ({"pad_mode": "wrap"}, "'pad_mode' must be one of"),
        ({"start_frame": 4}, "'start_frame' must be less than the video's 4 frames, got 4"),
    ],
)
def test_argument_errors(kwargs, message):
    data = ndd.tensor(_encode("libvpx", 4))
    with pytest.raises(InvalidArgumentError, match=f"{QUALNAME}: {message}"):
        np.asarray(ndd.decoders.video(data, **kwargs))


def test_a_selection_larger_than_the_memory_is_refused_before_it_is_listed():
    data = ndd.tensor(_encode("libvpx", 4))
    start = time.perf_counter()
    with pytest.raises(
        InvalidArgumentError, match=f"{QUALNAME}: 'sequence_length' asks for 1000000000 frames"
    ):
        np.asarray(ndd.decoders.video(data, sequence_length=10**9, pad_mode="edge"))
    with pytest.raises(
        InvalidArgumentError, match=f"{QUALNAME}: 'end_frame' asks for 9223372036854775807 frames"
    ):
        np.asarray(ndd.decoders.video(data, end_frame=2**63 - 1, pad_mode="constant"))
    # Without padding the range stops at the last frame, however long it is.
    frames = np.asarray(
        ndd.decoders.video(data, start_frame=1, sequence_length=10**9, stride=2, pad_mode="none")
    )
    np.testing.assert_array_equal(frames, np.asarray(ndd.decoders.video(data))[1::2])
    assert time.perf_counter() - start < 30  # listing 10**9 frames took minutes and tens of GB


def test_a_frame_list_larger_than_the_memory_is_refused(monkeypatch):
    from ndd import _memory

    monkeypatch.setattr(_memory, "physical_memory_bytes", lambda: 2 * 32 * 24 * 3 * 2)
    data = ndd.tensor(_encode("libvpx", 4))
    assert np.asarray(ndd.decoders.video(data, frames=[3, 0])).shape == (2, 24, 32, 3)
    with pytest.raises(InvalidArgumentError, match=f"{QUALNAME}: 'frames' asks for 3 frames of 2304 bytes"):
        np.asarray(ndd.decoders.video(data, frames=[3, 0, 1]))
    with pytest.raises(InvalidArgumentError, match=f"{QUALNAME}: the video has 4 frames of 2304 bytes"):
        np.asarray(ndd.decoders.video(data))


@pytest.mark.parametrize(
    "data, message",
    [(np.zeros(8, np.float32), "must be encoded video bytes"), (np.zeros((2, 4), np.uint8), "must be 1-D")],
)
def test_input_errors(data, message):
    with pytest.raises(InvalidArgumentError, match=f"{QUALNAME}: the input {message}"):
        ndd.decoders.video(ndd.tensor(data))


def test_a_pyav_older_than_17_says_what_to_install(monkeypatch):
    monkeypatch.setattr(av, "__version__", "16.0.1")
    with pytest.raises(
        ImportError, match=r"ndd.decoders.video: .* 17 or newer, not 16.0.1: pip install -U 'ndd\[video\]'"
    ):
        np.asarray(ndd.decoders.video(ndd.tensor(_encode("libvpx", 2))))
    assert release("17.0.0rc1") == (17, 0, 0) and release("19.0.2") > (17,) > release("16.0.1")


def test_missing_pyav_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "av", None)
    with pytest.raises(ImportError, match=r"ndd.decoders.video: .*pip install 'ndd\[video\]'"):
        import_av()
