"""experimental.readers.Video: sequences, padding, labels, file lists, frame numbers
and timestamps against the reference's goldens (tests/golden/video_reader_reference.json,
from make_video_reader_goldens.py), frames against PyAV's own decoding, the calls,
batches, state and errors; and where ndd differs from the reference on purpose."""

import json
import pathlib
import warnings

import numpy as np
import pytest
import video_dataset as vd

import ndd
from ndd._prepare.args import InvalidArgumentError

av = pytest.importorskip("av")

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent.parent / "golden" / "video_reader_reference.json").read_text(
        encoding="utf-8"
    )
)
CASES = GOLDEN["cases"]
READ_CASES = sorted(name for name, case in CASES.items() if "error" not in case)
ERROR_CASES = sorted(name for name, case in CASES.items() if "error" in case)
OTHER_CODECS = {"vp8", "mjpeg"}


@pytest.fixture(scope="module")
def dataset_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("videos")
    vd.make_dataset(str(root))
    return root


@pytest.fixture
def dataset(dataset_root, monkeypatch):
    """The dataset folder as the working directory (file list paths are relative)."""
    monkeypatch.chdir(dataset_root)
    return dataset_root


def reader(**kwargs):
    if "image_type" in kwargs:
        kwargs["image_type"] = getattr(ndd.types.DALIImageType, kwargs["image_type"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ndd.experimental.readers.Video(**kwargs)


def epoch(r, batch_size=None):
    return [tuple(np.asarray(t) for t in sample) for sample in r.next_epoch(batch_size=batch_size)]


def pyav_frames(path):
    """Every frame of ``path`` as PyAV decodes it, converted to RGB as the reference's
    decoder does (swscale's bilinear, full chroma interpolation, accurate rounding)."""
    interpolation = 0x2 | 0x2000 | 0x40000  # SWS_BILINEAR | SWS_FULL_CHR_H_INT | SWS_ACCURATE_RND
    with av.open(path) as container:
        return np.stack(
            [
                f.reformat(format="rgb24", interpolation=interpolation, threads=1).to_ndarray()
                for f in container.decode(video=0)
            ]
        )


# -- against the reference ---------------------------------------------------------------


@pytest.mark.parametrize("name", READ_CASES)
def test_the_sequences_match_the_reference(dataset, name):
    case = CASES[name]
    r = reader(**case["kwargs"])
    assert r.get_metadata()["epoch_size"] == case["epoch_size"]
    got = epoch(r)
    assert len(got) == len(case["samples"])
    for sample, expected in zip(got, case["samples"], strict=True):
        outputs = dict(zip(case["outputs"], sample, strict=True))
        assert list(outputs["frames"].shape) == expected["shape"]
        assert outputs["frames"].dtype == np.uint8
        if name not in OTHER_CODECS:
            assert vd.frame_ids(outputs["frames"]) == expected["frames"]
        for key in ("label", "frame_num"):
            if key in outputs:
                assert outputs[key].dtype == np.int32
                assert outputs[key].tolist() == expected[key]
        if "timestamps" in outputs:
            assert outputs["timestamps"].dtype == np.float64
            np.testing.assert_allclose(outputs["timestamps"], expected["timestamps"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("row", GOLDEN["starts"], ids=lambda row: f"{row['video']}-{row['kwargs']}")
def test_which_sequences_a_video_gives_matches_the_reference(dataset, row):
    for pad_mode in ("none", "constant"):
        kwargs = dict(filenames=[row["video"]], pad_mode=pad_mode, enable_frame_num=True, **row["kwargs"])
        if row[pad_mode] is None:
            with pytest.raises(RuntimeError, match="the dataset is empty"):
                reader(**kwargs)
        else:
            assert [int(s[1][0]) for s in epoch(reader(**kwargs))] == row[pad_mode]


def test_a_whole_sequence_needs_stride_times_length_frames_as_in_the_reference(dataset):
    # 11 frames, stride 2, 3 frames: a sequence from frame 6 (6, 8, 10) would fit, but
    # the reference asks start + stride * length <= frames: the last start is 5.
    starts = [
        int(s[1][0])
        for s in epoch(
            reader(filenames=["counts/n11.webm"], sequence_length=3, stride=2, step=1, enable_frame_num=True)
        )
    ]
    assert starts == [0, 1, 2, 3, 4, 5]


ERROR_ARGUMENTS = {
    "no_whole_sequence": "the dataset is empty",
    "labels_count": "'labels'",
    "two_sources": "exactly one of 'filenames', 'file_root' or 'file_list'",
    "no_source": "exactly one of 'filenames', 'file_root' or 'file_list'",
    "bad_pad_mode": "'pad_mode'",
    "fill_value_count": "'fill_value'",
    "fill_value_range": "'fill_value'",
    "bad_frame_num": "'enable_frame_num'",
    "gray": "'image_type'",
    "bad_list_format": "'file_list_format'",
    "missing_file": "the dataset is empty",
}


@pytest.mark.parametrize("name", ERROR_CASES)
def test_what_the_reference_refuses_raises_naming_the_argument(dataset, name):
    assert name in ERROR_ARGUMENTS
    with pytest.raises((InvalidArgumentError, RuntimeError, ValueError)) as info:
        reader(**CASES[name]["kwargs"])
    assert str(info.value).startswith("ndd.experimental.readers.Video: ")
    assert ERROR_ARGUMENTS[name] in str(info.value)


# -- frames ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["clips/v10.webm", "codecs/vp8.webm", "codecs/mjpeg.avi"])
def test_the_frames_are_those_pyav_decodes(dataset, path):
    expected = pyav_frames(path)
    got = epoch(reader(filenames=[path], sequence_length=2, stride=2, step=1, enable_frame_num="sequence"))
    assert got
    for frames, numbers in got:
        np.testing.assert_array_equal(frames, expected[numbers])


def test_the_frames_are_the_video_decoders(dataset):
    from ndd._ops.video import VideoFile

    with VideoFile("codecs/vp8.webm") as video:
        expected = video.read_frames(np.arange(video.frame_count))
    for frames, numbers in epoch(
        reader(filenames=["codecs/vp8.webm"], sequence_length=3, step=2, enable_frame_num="sequence")
    ):
        np.testing.assert_array_equal(frames, expected[numbers])


def test_constant_padding_frames_hold_the_fill_value_per_channel(dataset):
    frames, numbers = epoch(
        reader(
            filenames=["clips/v3.webm"],
            sequence_length=5,
            pad_mode="constant",
            fill_value=[10, 20, 30],
            enable_frame_num="sequence",
        )
    )[0]
    assert numbers.tolist() == [0, 1, 2, -1, -1]
    assert (frames[3:] == np.array([10, 20, 30], np.uint8)).all()


def test_ycbcr_frames_are_the_rgb_frames_converted(dataset):
    # The reference's CPU reader fails with YCbCr; ndd converts its RGB frames (BT.601,
    # studio range, as ndd.color_space_conversion).
    rgb = epoch(reader(filenames=["codecs/vp8.webm"], sequence_length=3))
    ycc = epoch(reader(filenames=["codecs/vp8.webm"], sequence_length=3, image_type="YCbCr"))
    for (a,), (b,) in zip(rgb, ycc, strict=True):
        expected = ndd.color_space_conversion(
            ndd.as_tensor(a),
            image_type=ndd.types.DALIImageType.RGB,
            output_type=ndd.types.DALIImageType.YCbCr,
        )
        np.testing.assert_array_equal(b, np.asarray(expected))


# -- datasets ---------------------------------------------------------------------------------


def test_file_root_labels_its_sub_folders_in_sorted_order(dataset):
    r = reader(file_root="classes", sequence_length=2)
    sources = [
        (bytes(np.asarray(ndd.get_property(s[0], key="source_info"))).decode(), int(np.asarray(s[1])[0]))
        for s in r.next_epoch()
    ]
    assert sources == [
        ("classes/a/x.webm", 0),
        ("classes/a/x.webm", 0),
        ("classes/a/y.webm", 0),
        ("classes/a/y.webm", 0),
        ("classes/b/z.webm", 1),
        ("classes/b/z.webm", 1),
        ("classes/b/z.webm", 1),
    ]


def test_without_labels_there_is_no_label_output(dataset):
    r = reader(filenames="clips/v3.webm", sequence_length=2)
    frames = r()
    assert isinstance(frames, ndd.Tensor) and frames.layout == "FHWC" and frames.shape == (2, 24, 32, 3)


def test_a_file_that_is_not_a_video_is_left_out_with_a_warning(dataset):
    with pytest.warns(UserWarning, match="cannot read video file 'clips/junk.webm'"):
        r = ndd.experimental.readers.Video(filenames=["clips/junk.webm", "clips/v3.webm"], sequence_length=2)
    assert r.get_metadata()["epoch_size"] == 1


def test_an_empty_range_is_left_out_with_a_warning(dataset):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = ndd.experimental.readers.Video(
            file_list="empty_range.txt", file_list_format="frames", sequence_length=2
        )
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert "line 1 of file_list 'empty_range.txt' has start == end" in messages[0]
    assert "empty frame range [6, 2) of video file 'clips/v7.webm'" in messages[1]
    assert r.get_metadata()["epoch_size"] == 1


def test_a_malformed_file_list_line_raises_naming_the_line(dataset, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("clips/v3.webm 1\nclips/v7.webm one\n")
    with pytest.raises(ValueError, match="line 2 of file_list"):
        reader(file_list=str(bad), sequence_length=2)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"filenames": ["clips/v3.webm"], "sequence_length": 0}, "'sequence_length' must be at least 1"),
        ({"filenames": ["clips/v3.webm"], "sequence_length": 2, "stride": 0}, "'stride' must be at least 1"),
        ({"file_root": "classes", "labels": [1], "sequence_length": 2}, "'labels' go with 'filenames'"),
        ({"filenames": ["clips/v3.webm"], "labels": ["a"], "sequence_length": 2}, "'labels' must be"),
        (
            {"filenames": ["clips/v3.webm"], "sequence_length": 2, "file_list_rounding": "up"},
            "'file_list_rounding'",
        ),
    ],
)
def test_bad_arguments_raise_naming_them(dataset, kwargs, message):
    with pytest.raises(InvalidArgumentError, match=message):
        reader(**kwargs)


# -- where ndd differs from the reference on purpose ------------------------------------------


DIFFERENCES = GOLDEN["differences"]


def test_a_file_list_line_with_only_a_start_reads_to_the_end(dataset):
    # The reference gives an empty range (its end defaults to frame 0).
    assert "error" in DIFFERENCES["only_start"]
    got = epoch(reader(**DIFFERENCES["only_start"]["kwargs"]))
    assert [s[2].tolist() for s in got] == [[7, 8]]


def test_a_range_past_the_end_stops_at_the_end_whatever_include_end(dataset):
    # The reference, with file_list_include_end=False, makes up frames 10 ... 19 of a
    # 10-frame video (constant frames numbered as if they existed).
    reference = DIFFERENCES["past_the_end_not_include_end"]["samples"]
    assert reference[2]["frame_num"] == [10, 11, 12, 13]
    got = epoch(reader(**DIFFERENCES["past_the_end_not_include_end"]["kwargs"]))
    assert [s[2].tolist() for s in got] == [[2, 3, 4, 5], [6, 7, 8, 9]]


def test_an_end_time_past_the_video_stops_at_its_end(dataset):
    # The reference finds no frame at or after 5 s and gives an empty range.
    assert "error" in DIFFERENCES["time_past_the_end"]
    got = epoch(reader(**DIFFERENCES["time_past_the_end"]["kwargs"]))
    assert [int(s[2][0]) for s in got] == [7]


# -- calls, batches, state ------------------------------------------------------------------


def test_batches_hold_the_sequences_in_order(dataset):
    r = reader(
        filenames=["clips/v10.webm", "clips/v3.webm"], labels=[5, 7], sequence_length=3, enable_frame_num=True
    )
    frames, labels, first = next(iter(r.next_epoch(batch_size=4)))
    assert frames.layout == "FHWC" and frames.shape == [(3, 24, 32, 3)] * 4
    assert [int(np.asarray(t)[0]) for t in labels.tensors] == [5, 5, 5, 7]
    assert [int(np.asarray(t)[0]) for t in first.tensors] == [0, 3, 6, 0]


def test_the_samples_load_on_threads(dataset):
    assert reader(filenames=["clips/v3.webm"], sequence_length=2)._parallel_loading


def test_pad_mode_at_the_call(dataset):
    r = reader(filenames=["clips/v10.webm"], sequence_length=4, enable_frame_num="sequence")
    # Accepted as in the reference's signature; the sequences are whole (listed
    # without padding), so it changes nothing.
    assert np.asarray(r(pad_mode="constant")[1]).tolist() == [0, 1, 2, 3]
    with pytest.raises(InvalidArgumentError, match="'pad_mode'"):
        r(pad_mode="wrap")
    padded = reader(filenames=["clips/v10.webm"], sequence_length=4, pad_mode="constant")
    with pytest.raises(InvalidArgumentError, match="both to the constructor and to the call"):
        padded(pad_mode="edge")


def test_a_restored_reader_continues_the_stream(dataset):
    kwargs = dict(
        filenames=["clips/v10.webm", "clips/v7.webm"],
        sequence_length=2,
        enable_frame_num=True,
        enable_checkpointing=True,
    )
    r = reader(**kwargs)
    r()
    r()
    state = r.get_state()
    expected = [int(np.asarray(r()[1])[0]) for _ in range(4)]
    restored = reader(**kwargs)
    restored.set_state(state)
    assert [int(np.asarray(restored()[1])[0]) for _ in range(4)] == expected


def test_sharding_splits_the_sequences(dataset):
    shards = [
        [
            int(s[1][0])
            for s in epoch(
                reader(
                    filenames=["clips/v10.webm"],
                    sequence_length=2,
                    num_shards=2,
                    shard_id=k,
                    enable_frame_num=True,
                )
            )
        ]
        for k in range(2)
    ]
    assert shards == [[0, 2], [4, 6, 8]]


def test_a_video_that_breaks_after_listing_fails_only_its_own_sequences(dataset, tmp_path):
    broken = tmp_path / "broken.webm"
    broken.write_bytes((dataset / "clips/v7.webm").read_bytes())
    r = reader(filenames=[str(broken), "clips/v10.webm"], sequence_length=3, enable_frame_num=True)
    broken.write_bytes(b"not a video any more")
    for _ in range(2):
        with pytest.raises(RuntimeError, match="broken.webm"):
            r()
    assert [int(np.asarray(r()[1])[0]) for _ in range(3)] == [0, 3, 6]


def test_timestamps_are_the_correctly_rounded_ticks_times_the_time_base(tmp_path):
    # As the reference: 700 ticks of 1/1000 s are 0.7 (700 * 0.001 is 0.7000000000000001).
    import fractions

    import av

    path = str(tmp_path / "vfr.webm")
    ticks = [0, 40, 80, 100, 160, 200, 300, 340, 380, 400, 440, 520, 560, 600, 640, 700, 740, 780, 800, 840]
    with av.open(path, "w") as container:
        stream = container.add_stream("libvpx-vp9", rate=25)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.codec_context.time_base = stream.time_base = fractions.Fraction(1, 1000)
        for k, tick in enumerate(ticks):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), k * 10, np.uint8), format="rgb24")
            frame.pts, frame.time_base = tick, fractions.Fraction(1, 1000)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    r = ndd.experimental.readers.Video(filenames=[path], sequence_length=5, enable_timestamps=True)
    got = [np.asarray(ts).tolist() for _, ts in r.next_epoch()]
    assert got == [[tick / 1000 for tick in ticks[i : i + 5]] for i in range(0, 20, 5)]
