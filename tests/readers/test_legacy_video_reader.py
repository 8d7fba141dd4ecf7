"""readers.Video and readers.VideoResize (the reference's older, GPU-only video readers)
decoded on the CPU: which sequences a video gives and how the ones at its end are
padded, labels, file lists, frame numbers and timestamps as the reference's
documentation and source say; frames against PyAV's own decoding and, for
VideoResize, against ndd.resize; types, devices, states and errors. No reference
output can be produced here (the reference reads these on the GPU only)."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import video_dataset as vd

import ndd
from ndd._cuda import driver
from ndd._prepare.args import InvalidArgumentError

av = pytest.importorskip("av")


@pytest.fixture(scope="module")
def dataset_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("legacy_videos")
    vd.make_dataset(str(root))
    write_vfr_video(str(root / "vfr.webm"))
    return root


@pytest.fixture
def dataset(dataset_root, monkeypatch):
    """The dataset folder as the working directory (file list paths are relative)."""
    monkeypatch.chdir(dataset_root)
    return dataset_root


def write_vfr_video(path):
    """Six frames shown at 0, 40, 80, 200, 240 and 280 ms: a variable frame rate."""
    with av.open(path, "w") as container:
        stream = container.add_stream("libvpx-vp9", rate=vd.RATE)
        stream.width, stream.height, stream.pix_fmt = vd.WIDTH, vd.HEIGHT, "yuv420p"
        stream.codec_context.time_base = Fraction(1, 1000)
        for i, pts in enumerate((0, 40, 80, 200, 240, 280)):
            frame = av.VideoFrame.from_ndarray(vd.frame_pixels(i), format="rgb24")
            frame.pts, frame.time_base = pts, Fraction(1, 1000)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def video(**kwargs):
    return ndd.readers.Video(**kwargs)


def epoch(r, batch_size=None):
    return [tuple(np.asarray(t) for t in sample) for sample in r.next_epoch(batch_size=batch_size)]


def pyav_frames(path):
    """Every frame of ``path`` as PyAV decodes it, converted to RGB as ndd's decoder does."""
    interpolation = 0x2 | 0x2000 | 0x40000  # SWS_BILINEAR | SWS_FULL_CHR_H_INT | SWS_ACCURATE_RND
    with av.open(path) as container:
        return np.stack(
            [
                f.reformat(format="rgb24", interpolation=interpolation, threads=1).to_ndarray()
                for f in container.decode(video=0)
            ]
        )


def pyav_times(path):
    with av.open(path) as container:
        return [float(f.pts * f.time_base) for f in container.decode(video=0)]


def documented_sequences(frames, length, stride, step, pad):
    """The frame numbers of each sequence of a video of ``frames`` frames, -1 for a
    padding frame, by the reference's documented rule (written out independently)."""
    out = []
    start = 0
    while start < frames:
        positions = [start + stride * k for k in range(length)]
        if positions[-1] >= frames and not pad:
            break
        out.append([p if p < frames else -1 for p in positions])
        start += step
    return out


# -- sequences ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "length, stride, step",
    [(3, 1, -1), (3, 2, -1), (3, 2, 1), (2, 3, 4), (4, 1, 3), (1, 1, -1), (5, 2, 2)],
)
@pytest.mark.parametrize("pad", [False, True])
def test_the_sequences_of_a_video_follow_the_documented_rule(dataset, length, stride, step, pad):
    r = video(
        filenames=["counts/n11.webm"],
        labels=[0],
        sequence_length=length,
        stride=stride,
        step=step,
        pad_sequences=pad,
        enable_frame_num="sequence",
    )
    expected = documented_sequences(11, length, stride, stride * length if step < 0 else step, pad)
    assert [s[2].tolist() for s in epoch(r)] == expected


def test_a_whole_sequence_needs_its_last_frame_in_the_video(dataset):
    # 11 frames, stride 2, 3 frames: the sequence (6, 8, 10) is whole here, while
    # experimental.readers.Video asks start + stride * length <= frames.
    r = video(
        filenames=["counts/n11.webm"], labels=[0], sequence_length=3, stride=2, step=1, enable_frame_num=True
    )
    assert [int(s[2][0]) for s in epoch(r)] == [0, 1, 2, 3, 4, 5, 6]


def test_padded_frames_are_zeros_with_frame_number_and_timestamp_minus_one(dataset):
    r = video(
        filenames=["clips/v7.webm"],
        labels=[3],
        sequence_length=4,
        pad_sequences=True,
        enable_frame_num="sequence",
        enable_timestamps=True,
    )
    samples = epoch(r)
    last = samples[-1]
    assert last[2].tolist() == [4, 5, 6, -1]
    assert not last[0][3].any()
    np.testing.assert_array_equal(last[0][:3], pyav_frames("clips/v7.webm")[4:7])
    np.testing.assert_allclose(last[3], [0.16, 0.2, 0.24, -1.0], rtol=0, atol=1e-9)


def test_without_pad_sequences_the_dataset_without_a_whole_sequence_is_an_error(dataset):
    with pytest.raises(RuntimeError, match=r"^ndd\.readers\.Video: .*the dataset is empty"):
        video(filenames=["clips/v3.webm"], sequence_length=4)


def test_the_frames_are_pyavs(dataset):
    r = video(filenames=["clips/v10.webm", "codecs/vp8.webm"], sequence_length=3, stride=2, step=1)
    got = epoch(r)
    ten, vp8 = pyav_frames("clips/v10.webm"), pyav_frames("codecs/vp8.webm")
    expected = [ten[s : s + 5 : 2] for s in range(6)] + [vp8[s : s + 5 : 2] for s in range(5)]
    assert len(got) == len(expected)
    for (frames,), want in zip(got, expected, strict=True):
        assert frames.dtype == np.uint8
        np.testing.assert_array_equal(frames, want)


def test_the_timestamps_are_the_frames_presentation_times(dataset):
    r = video(filenames=["clips/v10.webm"], labels=[0], sequence_length=3, stride=3, enable_timestamps=True)
    times = pyav_times("clips/v10.webm")
    got = epoch(r)
    assert [s[2].tolist() for s in got] == [times[0:9:3]]
    assert got[0][2].dtype == np.float64


def test_scalar_frame_num_is_the_first_frame(dataset):
    r = video(filenames=["clips/v10.webm"], labels=[0], sequence_length=2, step=3, enable_frame_num="scalar")
    samples = epoch(r)
    assert [s[2].tolist() for s in samples] == [[0], [3], [6]]
    assert samples[0][2].dtype == np.int32


# -- labels and sources ------------------------------------------------------------------------


def test_without_labels_the_frames_are_the_only_output(dataset):
    r = video(filenames=["clips/v10.webm"], sequence_length=5)
    assert all(len(s) == 1 for s in epoch(r))
    assert (
        video(filenames=["clips/v10.webm"], sequence_length=5)(batch_size=2).shape
        == [(5, vd.HEIGHT, vd.WIDTH, 3)] * 2
    )


def test_labels_give_each_file_its_label(dataset):
    r = video(filenames=["clips/v10.webm", "clips/v7.webm"], labels=[7, 9], sequence_length=5)
    assert [int(s[1][0]) for s in epoch(r)] == [7, 7, 9]


def test_an_empty_list_of_labels_numbers_the_files(dataset):
    r = video(filenames=["clips/v10.webm", "clips/v7.webm"], labels=[], sequence_length=5)
    samples = epoch(r)
    assert [int(s[1][0]) for s in samples] == [0, 0, 1]
    assert samples[0][1].dtype == np.int32


def test_file_root_labels_the_sub_folders_in_sorted_order(dataset):
    r = video(file_root="classes", sequence_length=3)
    got = [
        (int(np.asarray(s[1])[0]), bytes(np.asarray(ndd.get_property(s[0], key="source_info"))).decode())
        for s in r.next_epoch()
    ]
    names = [(label, path.replace("\\", "/").split("classes/")[-1]) for label, path in got]
    assert names == [(0, "a/x.webm"), (0, "a/y.webm"), (1, "b/z.webm"), (1, "b/z.webm")]


def test_a_file_that_is_not_a_video_is_an_error_naming_it(dataset):
    with pytest.raises(Exception, match=r"^ndd\.readers\.Video: cannot read video file 'clips/junk\.webm'"):
        video(filenames=["clips/v10.webm", "clips/junk.webm"], sequence_length=2)


# -- file lists ----------------------------------------------------------------------------------


def list_reader(tmp_path, lines, **kwargs):
    path = tmp_path / "list.txt"
    path.write_text("\n".join(lines) + "\n")
    return video(file_list=str(path), enable_frame_num="sequence", **kwargs)


def frame_numbers(r):
    return [s[2].tolist() for s in epoch(r)]


@pytest.mark.parametrize("start, end", [(0.1, 0.3), (0.05, 0.29), (0.12, 0.37)])
@pytest.mark.parametrize("preceding", [False, True])
def test_file_list_times_become_frames_by_the_frame_rate(dataset, tmp_path, start, end, preceding):
    # 25 frames per second; the times are read in single precision, as in the reference:
    # ceil(start * fps) and floor(end * fps), floor and ceil with the preceding frame.
    start32, end32 = float(np.float32(start)) * 25, float(np.float32(end)) * 25
    first, last = (
        (math.floor(start32), math.ceil(end32)) if preceding else (math.ceil(start32), math.floor(end32))
    )
    r = list_reader(
        tmp_path,
        [f"{dataset}/clips/v10.webm 4 {start} {end}"],
        sequence_length=1,
        file_list_include_preceding_frame=preceding,
    )
    samples = epoch(r)
    assert [s[2].tolist() for s in samples] == [[f] for f in range(first, last)]
    assert {int(s[1][0]) for s in samples} == {4}


def test_file_list_frame_numbers_round_the_start_up_and_the_end_down(dataset, tmp_path):
    r = list_reader(tmp_path, ["clips/v10.webm 1 2.5 7.5"], sequence_length=1, file_list_frame_num=True)
    assert frame_numbers(r) == [[3], [4], [5], [6]]


def test_file_list_negative_values_count_from_the_end(dataset, tmp_path):
    r = list_reader(tmp_path, ["clips/v10.webm 1 -4 -1"], sequence_length=1, file_list_frame_num=True)
    assert frame_numbers(r) == [[6], [7], [8]]


def test_file_list_end_zero_or_absent_is_the_end_of_the_video(dataset, tmp_path):
    lines = ["clips/v10.webm 1 6 0", "clips/v7.webm 2 5", "clips/v3.webm 3"]
    r = list_reader(tmp_path, lines, sequence_length=1, file_list_frame_num=True)
    assert frame_numbers(r) == [[6], [7], [8], [9], [5], [6], [0], [1], [2]]


def test_a_file_list_line_with_start_equal_to_end_is_left_out_with_a_warning(dataset, tmp_path):
    with pytest.warns(UserWarning, match=r"ndd\.readers\.Video: line 1 .* start == end"):
        r = list_reader(tmp_path, ["clips/v10.webm 1 4 4", "clips/v3.webm 2"], sequence_length=3)
    assert [int(s[1][0]) for s in epoch(r)] == [2]


@pytest.mark.parametrize(
    "line, message",
    [
        ("clips/v10.webm 1 2 20", r"'file_list' range \[2, 20\) .* outside its 10 frames"),
        ("clips/v10.webm 1 7 2", r"'file_list' range .* starts after its end"),
        ("clips/v10.webm -1", r"label on line 1 .* must be >= 0"),
        ("clips/v10.webm one", r"line 1 of file_list .* must be 'path label \[start \[end\]\]'"),
    ],
)
def test_a_bad_file_list_line_is_an_error_naming_the_reader(dataset, tmp_path, line, message):
    with pytest.raises(ValueError, match=r"^ndd\.readers\.Video: (the )?" + message):
        list_reader(tmp_path, [line], sequence_length=1, file_list_frame_num=True)


# -- types and colour ------------------------------------------------------------------------------


@pytest.mark.parametrize("normalized, scale", [(False, 1.0), (True, 1 / 255)])
def test_float_frames_are_the_uint8_frames_scaled(dataset, normalized, scale):
    kwargs = dict(filenames=["clips/v10.webm"], sequence_length=4, pad_sequences=True)
    expected = epoch(video(**kwargs))
    got = epoch(video(dtype=ndd.float32, normalized=normalized, **kwargs))
    for (frames,), (want,) in zip(got, expected, strict=True):
        assert frames.dtype == np.float32
        np.testing.assert_allclose(frames, want.astype(np.float32) * np.float32(scale), rtol=1e-6)


def test_ycbcr_frames_are_the_rgb_frames_converted(dataset):
    kwargs = dict(filenames=["codecs/vp8.webm"], sequence_length=3)
    rgb = epoch(video(**kwargs))
    ycbcr = epoch(video(image_type=ndd.types.DALIImageType.YCbCr, **kwargs))
    for (got,), (frames,) in zip(ycbcr, rgb, strict=True):
        expected = np.asarray(
            ndd.color_space_conversion(
                frames, image_type=ndd.types.DALIImageType.RGB, output_type=ndd.types.DALIImageType.YCbCr
            )
        )
        np.testing.assert_array_equal(got, expected)


def test_additional_decode_surfaces_is_accepted_and_changes_nothing(dataset):
    kwargs = dict(filenames=["clips/v7.webm"], sequence_length=3)
    for (a,), (b,) in zip(
        epoch(video(**kwargs)), epoch(video(additional_decode_surfaces=8, **kwargs)), strict=True
    ):
        np.testing.assert_array_equal(a, b)


# -- variable frame rate ---------------------------------------------------------------------------------


def test_a_variable_frame_rate_video_is_refused(dataset):
    with pytest.raises(
        Exception, match=r"^ndd\.readers\.Video: cannot read video file 'vfr\.webm': .*skip_vfr_check"
    ):
        video(filenames=["vfr.webm"], sequence_length=2)


def test_skip_vfr_check_reads_a_variable_frame_rate_video(dataset):
    r = video(
        filenames=["vfr.webm"], labels=[0], sequence_length=2, skip_vfr_check=True, enable_timestamps=True
    )
    assert [s[2].tolist() for s in epoch(r)] == [[0.0, 0.04], [0.08, 0.2], [0.24, 0.28]]


# -- errors -----------------------------------------------------------------------------------------------

ARGUMENT_ERRORS = [
    (
        dict(filenames=["clips/v10.webm"], file_root="classes"),
        "exactly one of 'filenames', 'file_root' or 'file_list'",
    ),
    (dict(), "exactly one of 'filenames', 'file_root' or 'file_list'"),
    (dict(file_root="classes", labels=[1]), "'labels' go with 'filenames'"),
    (dict(filenames=["clips/v10.webm"], labels=[1, 2]), "'labels' must have one label per file"),
    (dict(filenames=["clips/v10.webm"], enable_frame_num=True), "'enable_frame_num' needs 'file_list'"),
    (dict(file_root="classes", enable_timestamps=True), "'enable_timestamps' needs 'file_list'"),
    (dict(filenames=["clips/v10.webm"], enable_frame_num="all"), "'enable_frame_num' must be"),
    (dict(filenames=["clips/v10.webm"], dtype=ndd.int16), "'dtype' must be uint8 or float32"),
    (dict(filenames=["clips/v10.webm"], channels=1), "'channels' must be 3"),
    (dict(filenames=["clips/v10.webm"], step=0), "'step' must not be 0"),
    (dict(filenames=["clips/v10.webm"], stride=0), "'stride' must be at least 1"),
    (
        dict(filenames=["clips/v10.webm"], image_type=ndd.types.DALIImageType.GRAY),
        "'image_type' must be RGB or YCbCr",
    ),
]


@pytest.mark.parametrize("kwargs, message", ARGUMENT_ERRORS, ids=lambda v: str(v)[:40])
def test_a_bad_argument_raises_naming_the_reader_and_the_argument(dataset, kwargs, message):
    kwargs.setdefault("sequence_length", 2)
    with pytest.raises(InvalidArgumentError) as info:
        video(**kwargs)
    assert str(info.value).startswith("ndd.readers.Video: ")
    assert message in str(info.value)


# -- devices and state -----------------------------------------------------------------------------


def test_gpu_device_needs_a_gpu(dataset):
    if driver.device_count() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(driver.GpuUnavailableError, match=r"needs a CUDA GPU"):
        video(filenames=["clips/v10.webm"], sequence_length=2, device="gpu")


@pytest.mark.gpu
@pytest.mark.parametrize("cls, extra", [("Video", {}), ("VideoResize", {"size": [12, 16]})])
def test_gpu_outputs_are_the_cpu_outputs_on_the_gpu(dataset, cls, extra):
    kwargs = dict(filenames=["clips/v10.webm"], labels=[2], sequence_length=3, **extra)
    reader_class = getattr(ndd.readers, cls)
    on_gpu = reader_class(device="gpu", **kwargs).next_epoch(batch_size=2)
    on_cpu = reader_class(**kwargs).next_epoch(batch_size=2)
    for gpu_batch, cpu_batch in zip(on_gpu, on_cpu, strict=True):
        for g, c in zip(gpu_batch, cpu_batch, strict=True):
            assert g.device.device_type == "gpu"
            np.testing.assert_array_equal(np.asarray(g.cpu()), np.asarray(c))


def test_a_state_resumes_the_stream(dataset):
    kwargs = dict(
        filenames=["clips/v10.webm", "clips/v7.webm"], labels=[], sequence_length=2, enable_checkpointing=True
    )
    first = video(**kwargs)
    first(batch_size=2)
    state = first.get_state()
    rest = [np.asarray(first(batch_size=2)[1]).tolist() for _ in range(3)]
    second = video(**kwargs)
    second.set_state(state)
    assert [np.asarray(second(batch_size=2)[1]).tolist() for _ in range(3)] == rest


def test_states_are_not_shared_with_experimental_readers_video(dataset):
    kwargs = dict(filenames=["clips/v10.webm"], sequence_length=2, enable_checkpointing=True)
    legacy_state = video(**kwargs).get_state()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        experimental = ndd.experimental.readers.Video(**kwargs)
    with pytest.raises(ValueError, match="belongs to a readers.Video reader"):
        experimental.set_state(legacy_state)
    with pytest.raises(ValueError, match="belongs to a Video reader"):
        video(**kwargs).set_state(experimental.get_state())


# -- VideoResize ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "resize_args",
    [
        dict(size=[12, 16]),
        dict(resize_x=20, mode="stretch"),
        dict(resize_shorter=12, interp_type=ndd.types.DALIInterpType.INTERP_CUBIC),
        dict(size=[30, 40], antialias=False, mag_filter=ndd.types.DALIInterpType.INTERP_NN),
        dict(size=[8, 8], roi_start=[0.25, 0.25], roi_end=[0.75, 0.75], roi_relative=True),
    ],
    ids=lambda v: ",".join(v),
)
def test_video_resize_resizes_every_frame_as_ndd_resize(dataset, resize_args):
    kwargs = dict(filenames=["clips/v10.webm", "codecs/vp8.webm"], labels=[], sequence_length=3, stride=2)
    plain = epoch(video(**kwargs))
    resized = epoch(ndd.readers.VideoResize(**kwargs, **resize_args))
    assert len(resized) == len(plain)
    for got, (frames, label) in zip(resized, plain, strict=True):
        expected = np.asarray(ndd.resize(ndd.as_tensor(frames, layout="FHWC"), **resize_args))
        assert got[0].dtype == np.uint8
        np.testing.assert_array_equal(got[0], expected)
        assert got[1].tolist() == label.tolist()


def test_video_resize_of_float_frames_resizes_the_normalized_frames(dataset):
    kwargs = dict(filenames=["clips/v10.webm"], sequence_length=3, dtype=ndd.float32, normalized=True)
    plain = epoch(video(**kwargs))
    resized = epoch(ndd.readers.VideoResize(size=[10, 14], **kwargs))
    for (got,), (frames,) in zip(resized, plain, strict=True):
        expected = np.asarray(ndd.resize(ndd.as_tensor(frames, layout="FHWC"), size=[10, 14]))
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, expected)


def test_video_resize_pads_before_resizing(dataset):
    r = ndd.readers.VideoResize(
        filenames=["clips/v7.webm"],
        labels=[0],
        sequence_length=4,
        pad_sequences=True,
        size=[6, 8],
        enable_frame_num="sequence",
    )
    last = epoch(r)[-1]
    assert last[0].shape == (4, 6, 8, 3)
    assert last[2].tolist() == [4, 5, 6, -1]
    assert not last[0][3].any()


def test_video_resize_bad_resize_argument_names_the_reader(dataset):
    with pytest.raises(
        InvalidArgumentError, match=r"^ndd\.readers\.VideoResize: 'size' must have 1 or 2 elements"
    ):
        ndd.readers.VideoResize(filenames=["clips/v10.webm"], sequence_length=2, size=[1, 2, 3])


def test_video_resize_states_are_tagged_apart(dataset):
    kwargs = dict(filenames=["clips/v10.webm"], sequence_length=2, enable_checkpointing=True)
    state = ndd.readers.VideoResize(size=[8, 8], **kwargs).get_state()
    with pytest.raises(ValueError, match="belongs to a readers.VideoResize reader"):
        video(**kwargs).set_state(state)


def test_video_resize_takes_per_sequence_sizes_from_the_call(dataset):
    kwargs = dict(filenames=["clips/v10.webm"], sequence_length=2)
    plain = video(**kwargs)(batch_size=2)
    sizes = ndd.as_batch([np.array([4, 4], np.float32), np.array([6, 8], np.float32)])
    got = ndd.readers.VideoResize(**kwargs, mode="stretch")(batch_size=2, size=sizes)
    expected = ndd.resize(plain, size=sizes, mode="stretch")
    assert got.shape == [(2, 4, 4, 3), (2, 6, 8, 3)]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


def test_video_resize_refuses_an_argument_given_to_the_constructor_and_the_call(dataset):
    r = ndd.readers.VideoResize(filenames=["clips/v10.webm"], sequence_length=2, size=[4, 4])
    with pytest.raises(ValueError, match=r"^ndd\.readers\.VideoResize: 'size' cannot be given both"):
        r(size=[3, 3])


def test_video_resize_needs_an_output_size(dataset):
    r = ndd.readers.VideoResize(filenames=["clips/v10.webm"], sequence_length=2)
    with pytest.raises(InvalidArgumentError, match=r"^ndd\.readers\.VideoResize: give the output size"):
        r()


def test_video_resize_call_takes_only_the_resize_arguments(dataset):
    r = ndd.readers.VideoResize(filenames=["clips/v10.webm"], sequence_length=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'mode'"):
        r(mode="stretch", size=[4, 4])
