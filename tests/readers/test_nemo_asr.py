"""readers.NemoAsr: outputs against the written signals and the reference's goldens
(tests/golden/nemo_asr_reference.json, from make_nemo_asr_goldens.py), manifest
parsing and filtering, parts of files, orders and sharding, state, errors."""

import inspect
import json
import pathlib
import warnings

import nemo_dataset as nd
import numpy as np
import pytest

import ndd

soundfile = pytest.importorskip("soundfile")

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent.parent / "golden" / "nemo_asr_reference.json").read_text(encoding="utf-8")
)


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    """The recipe's dataset in tmp_path, the working directory (manifest paths are relative)."""
    nd.make_dataset(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def reader(**kwargs):
    kwargs.setdefault("manifest_filepaths", "all.json")
    return ndd.readers.NemoAsr(**kwargs)


def text_of(t):
    return bytes(np.asarray(t)).decode()


def kwargs_of(case):
    kwargs = dict(case)
    if "dtype" in kwargs:
        kwargs["dtype"] = getattr(ndd, kwargs["dtype"])
    return kwargs


def unit(frames):
    """int16 frames as the float32 values libsndfile gives (divided by 2**15)."""
    return frames.astype(np.float32) / np.float32(32768)


# -- signature and outputs ---------------------------------------------------------------


def test_signature_matches_the_reference():
    got = [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in inspect.signature(ndd.readers.NemoAsr).parameters.values()
    ]
    assert got == GOLDEN["signature"]


def test_outputs_are_audio_rate_text_and_index_in_this_order(dataset):
    audio, rate, text, idx = next(iter(reader(read_idxs=True).next_epoch()))
    assert (audio.dtype, audio.shape) == (ndd.float32, (1600,))
    assert (rate.dtype, rate.shape, float(np.asarray(rate))) == (ndd.float32, (), 16000.0)
    assert (text.dtype, text.shape, text_of(text)) == (ndd.uint8, (4,), "zero")
    assert (idx.dtype, idx.shape, np.asarray(idx).tolist()) == (ndd.int64, (1,), [0])


@pytest.mark.parametrize(
    "flags, count",
    [
        ({}, 3),
        ({"read_text": False}, 2),
        ({"read_sample_rate": False, "read_text": False}, 1),
        ({"read_idxs": True}, 4),
    ],
)
def test_the_read_flags_choose_the_outputs(dataset, flags, count):
    outputs = next(iter(reader(**flags).next_epoch()))
    assert len(outputs) == count
    assert outputs[0].shape == (1600,)


def test_a_call_with_the_audio_alone_returns_it_bare(dataset):
    audio = reader(read_sample_rate=False, read_text=False)()
    assert audio.shape == (1600,)


def test_the_audio_is_the_written_signal(dataset):
    for (audio, rate, _), (clip, *_) in zip(reader(downmix=False).next_epoch(), nd.LINES, strict=True):
        np.testing.assert_array_equal(np.asarray(audio), unit(nd.tone(clip)))
        assert float(np.asarray(rate)) == nd.CLIPS[clip][0]


def test_int16_audio_is_the_written_frames_and_int32_scales_them(dataset):
    short = [np.asarray(a) for a, _, _ in reader(downmix=False, dtype=ndd.int16).next_epoch()]
    wide = [np.asarray(a) for a, _, _ in reader(downmix=False, dtype=ndd.int32).next_epoch()]
    for s, w, (clip, *_) in zip(short, wide, nd.LINES, strict=True):
        np.testing.assert_array_equal(s, nd.tone(clip))
        np.testing.assert_array_equal(w, nd.tone(clip).astype(np.int32) << 16)


def test_resampled_audio_has_the_new_length_and_reports_the_new_rate(dataset):
    # The reference reports the file's rate even after resampling (8000 for a4.wav
    # resampled to 16 kHz); ndd reports the rate of the audio it returns.
    audio, rate, _ = list(reader(sample_rate=16000).next_epoch())[4]
    assert (audio.shape, float(np.asarray(rate))) == ((2400,), 16000.0)


def test_downmix_averages_the_channels(dataset):
    audio = list(reader().next_epoch())[6][0]
    frames = unit(nd.tone("stereo.wav"))
    expected = frames[:, 0] * np.float32(0.5) + frames[:, 1] * np.float32(0.5)
    np.testing.assert_array_equal(np.asarray(audio), expected)


def test_the_text_is_the_utf8_bytes_of_the_transcript(dataset):
    texts = [bytes(np.asarray(t)) for _, _, t in reader().next_epoch()]
    assert texts == [text.encode() for *_, text in nd.LINES]


def test_the_source_info_is_the_audio_filepath(dataset):
    # The reference leaves it empty (the path is never stored in its sample).
    audio = reader()()[0]
    assert text_of(ndd.get_property(audio, key="source_info")) == "clips/a0.wav"


@pytest.mark.parametrize("case", [c for c in GOLDEN["samples"] if not c.startswith("parts")])
def test_samples_match_the_reference(dataset, case):
    check_against_golden(GOLDEN["samples"][case])


@pytest.mark.parametrize("case", [c for c in GOLDEN["samples"] if c.startswith("parts")])
def test_parts_of_files_match_the_reference(dataset, case):
    check_against_golden(GOLDEN["samples"][case])


def check_against_golden(case):
    target = case["kwargs"].get("sample_rate")
    expected = case["samples"]
    got = list(reader(read_idxs=True, **kwargs_of(case["kwargs"])).next_epoch())
    assert len(got) == len(expected)
    for (audio, rate, text, idx), want in zip(got, expected, strict=True):
        values = np.asarray(audio)
        assert (text_of(text), int(np.asarray(idx)[0])) == (want["text"], want["idx"])
        assert (list(values.shape), str(values.dtype)) == (want["shape"], want["dtype"])
        # The reference gives the file's rate even after resampling; ndd gives the
        # rate of the audio it returns.
        assert float(np.asarray(rate)) == (target or want["rate"])
        flat = values.reshape(-1)
        tolerance = 2e-6 if target and want["rate"] != target else 0
        np.testing.assert_allclose(flat[:8], want["head"], rtol=0, atol=tolerance)
        np.testing.assert_allclose(flat[-8:] if flat.size else flat, want["tail"], rtol=0, atol=tolerance)


def test_offset_and_duration_select_frames_of_the_file(dataset):
    signal = unit(nd.tone("a5.wav"))[:, 0]
    got = [np.asarray(a) for a, _, _ in reader(manifest_filepaths="parts.json").next_epoch()]
    # middle: offset 0.05 s, 0.1 s long; cut at the end: from 0.25 s, at most 0.2 s;
    # offset only: from 0.3 s to the end; one frame: int(0.0001 * 16000) = 1 frame.
    np.testing.assert_array_equal(got[0], signal[800:2400])
    np.testing.assert_array_equal(got[1], signal[4000:])
    np.testing.assert_array_equal(got[2], signal[4800:])
    np.testing.assert_array_equal(got[3], signal[160:161])
    np.testing.assert_array_equal(got[4], signal[:320])  # a negative offset is 0
    np.testing.assert_array_equal(got[5], signal[1600:])  # a negative duration reaches the end
    assert got[6].shape == (0,)  # zero duration
    np.testing.assert_array_equal(got[7], signal)


def test_a_part_of_a_file_is_resampled_like_a_file_holding_only_that_part(dataset, tmp_path):
    nd.write_wav(tmp_path / "clips" / "middle.wav", nd.tone("a5.wav")[800:2400], 16000)
    nd.write_manifest(tmp_path / "middle.json", [("middle.wav", None, None, "middle")])
    options = {"sample_rate": 11025, "quality": 30}
    part = reader(manifest_filepaths="parts.json", **options)()[0]
    whole = reader(manifest_filepaths="middle.json", **options)()[0]
    np.testing.assert_array_equal(np.asarray(part), np.asarray(whole))


@pytest.mark.parametrize("fmt, subtype", [("FLAC", "PCM_24"), ("WAV", "FLOAT"), ("OGG", "VORBIS")])
def test_other_formats_are_read_whole_and_in_parts_as_libsndfile_reads_them(dataset, fmt, subtype):
    t = np.arange(12000) / 24000
    signal = np.stack([0.3 * np.sin(2 * np.pi * 301.5 * t), 0.2 * np.cos(2 * np.pi * 97.25 * t)], axis=1)
    path = dataset / "clips" / f"other.{fmt.lower()}"
    soundfile.write(path, signal, 24000, format=fmt, subtype=subtype)
    expected, _ = soundfile.read(path, dtype="float32", always_2d=True)
    nd.write_manifest("other.json", [(path.name, None, None, "whole"), (path.name, 0.2, 0.1, "part")])
    whole, part = [
        np.asarray(a) for a, _, _ in reader(manifest_filepaths="other.json", downmix=False).next_epoch()
    ]
    np.testing.assert_array_equal(whole, expected)
    np.testing.assert_array_equal(part, expected[2400:7200])


def test_an_offset_past_the_end_of_the_file_raises_naming_it(dataset):
    nd.write_manifest("past.json", [("a0.wav", None, 0.2, "past"), ("a1.wav", None, None, "next")])
    r = reader(manifest_filepaths="past.json")
    with pytest.raises(
        RuntimeError, match=r"ndd.readers.NemoAsr: cannot decode audio file 'clips/a0.wav': .*past the end"
    ):
        r()
    assert text_of(r()[2]) == "next"


def test_an_offset_at_the_end_of_the_file_gives_empty_audio(dataset):
    nd.write_manifest("end.json", [("a0.wav", None, 0.1, "end")])
    assert reader(manifest_filepaths="end.json")()[0].shape == (0,)


# -- manifests and filtering -----------------------------------------------------------------


@pytest.mark.parametrize("case", list(GOLDEN["filters"]))
def test_filtering_and_indices_match_the_reference(dataset, case):
    want = GOLDEN["filters"][case]
    kwargs = {"read_idxs": True, **want["kwargs"]}
    if "error" in want:
        with pytest.raises(RuntimeError, match="ndd.readers.NemoAsr: the dataset is empty"):
            reader(**kwargs)
        return
    got = list(reader(**kwargs).next_epoch())
    assert [text_of(t) for _, _, t, _ in got] == want["texts"]
    assert [int(np.asarray(i)[0]) for *_, i in got] == want["idxs"]


def test_the_bounds_compare_as_float32_like_the_reference(dataset):
    # float32(0.3) > 0.3: the line lasting 0.3 s is shorter than min_duration=0.3.
    texts = [text_of(t) for _, _, t in reader(min_duration=0.25, max_duration=0.3).next_epoch()]
    assert texts == ["two, été", "three"]
    with pytest.raises(RuntimeError, match="the dataset is empty"):
        reader(min_duration=0.3, max_duration=0.3)


def test_missing_fields_take_their_defaults(dataset):
    nd.write_manifest("bare.json", ['{"audio_filepath": "clips/a1.wav"}'])
    audio, _, text, idx = reader(manifest_filepaths="bare.json", read_idxs=True)()
    assert (audio.shape, text.shape, np.asarray(idx).tolist()) == ((3200,), (0,), [0])


def test_null_fields_are_missing_fields(dataset):
    nd.write_manifest(
        "nulls.json", ['{"audio_filepath": "clips/a1.wav", "duration": null, "offset": null, "text": null}']
    )
    audio, _, text = reader(manifest_filepaths="nulls.json")()
    assert (audio.shape, text.shape) == ((3200,), (0,))


def test_lines_that_are_not_objects_or_name_no_file_are_skipped_with_a_warning(dataset):
    lines = [
        nd.LINES[0],
        "",
        "not json",
        "[1, 2]",
        '{"text": "no path"}',
        '{"audio_filepath": ""}',
        nd.LINES[1],
    ]
    nd.write_manifest("messy.json", lines)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = reader(manifest_filepaths="messy.json", read_idxs=True)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 4
    assert messages[0] == (
        "ndd.readers.NemoAsr: skipping line 3 of manifest 'messy.json', which is not a JSON object: 'not json'"
    )
    assert "line 5 of manifest 'messy.json', which has no 'audio_filepath'" in messages[2]
    got = [(text_of(t), int(np.asarray(i)[0])) for _, _, t, i in r.next_epoch()]
    assert got == [("zero", 0), ("one", 1)]


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"audio_filepath": 5}', "'audio_filepath' must be a string, got 5"),
        ('{"audio_filepath": "clips/a0.wav", "duration": "1.0"}', "'duration' must be a finite number, got '1.0'"),
        ('{"audio_filepath": "clips/a0.wav", "offset": true}', "'offset' must be a finite number, got True"),
        ('{"audio_filepath": "clips/a0.wav", "duration": 1e400}', "'duration' must be a finite number, got inf"),
        ('{"audio_filepath": "clips/a0.wav", "text": 5}', "'text' must be a string, got 5"),
    ],
)  # fmt: skip
def test_a_field_of_the_wrong_type_raises_naming_the_line(dataset, line, message):
    nd.write_manifest("bad.json", [nd.LINES[0], line])
    with pytest.raises(ValueError, match=f"ndd.readers.NemoAsr: line 2 of manifest 'bad.json': {message}"):
        reader(manifest_filepaths="bad.json")


def test_the_text_is_not_parsed_when_not_read(dataset):
    nd.write_manifest("bad.json", ['{"audio_filepath": "clips/a0.wav", "text": 5}'])
    assert reader(manifest_filepaths="bad.json", read_text=False)()[0].shape == (1600,)


def test_a_text_holding_a_zero_byte_is_kept_whole(dataset):
    # The reference cuts the transcript at the zero (a C string).
    nd.write_manifest("zero.json", ['{"audio_filepath": "clips/a0.wav", "text": "a\\u0000b"}'])
    assert bytes(np.asarray(reader(manifest_filepaths="zero.json")()[2])) == b"a\0b"


def test_relative_paths_are_relative_to_the_working_directory(dataset, monkeypatch):
    (dataset / "sub").mkdir()
    monkeypatch.chdir(dataset / "sub")
    r = reader(manifest_filepaths="../all.json")
    with pytest.raises(FileNotFoundError, match=r"ndd.readers.NemoAsr: cannot read file 'clips/a0.wav'"):
        r()


def test_absolute_paths_are_read_as_they_are(dataset):
    nd.write_manifest("abs.json", [f'{{"audio_filepath": "{dataset / "clips" / "a1.wav"}"}}'])
    assert reader(manifest_filepaths="abs.json")()[0].shape == (3200,)


def test_normalize_text_is_deprecated_and_has_no_effect(dataset):
    with pytest.warns(DeprecationWarning, match="'normalize_text' is deprecated"):
        r = reader(normalize_text=True)
    assert text_of(r()[2]) == "zero"


# -- order, sharding, batches, state ------------------------------------------------------------


def texts_of(batch):
    return [text_of(t) for t in batch.tensors]


@pytest.mark.parametrize("case", GOLDEN["orders"], ids=lambda c: f"{c['config']}-{c['batch_size']}")
def test_orders_match_the_reference(dataset, case):
    r = reader(read_sample_rate=False, **case["config"])
    got = []
    for _ in range(len(case["epochs"])):
        if case["batch_size"] is None:
            got.append([[text_of(t)] for _, t in r.next_epoch()])
        else:
            got.append([texts_of(t) for _, t in r.next_epoch(batch_size=case["batch_size"])])
    assert got == case["epochs"]


def test_batches_hold_ragged_audio(dataset):
    audio, rate, text = next(iter(reader().next_epoch(batch_size=4)))
    assert [t.shape for t in audio.tensors] == [(1600,), (3200,), (4800,), (4000,)]
    assert np.asarray(rate).tolist() == [16000.0] * 4
    assert texts_of(text) == ["zero", "one", "two, été", "three"]


def test_shuffled_epochs_are_permutations_of_the_dataset(dataset):
    r = reader(random_shuffle=True, seed=5, initial_fill=3)
    epoch = [text_of(t) for _, _, t in r.next_epoch()]
    assert sorted(epoch) == sorted(text for *_, text in nd.LINES)


def test_metadata_counts_the_kept_lines(dataset):
    meta = reader(max_duration=0.2, num_shards=2, pad_last_batch=True).get_metadata()
    assert (meta["epoch_size"], meta["epoch_size_padded"]) == (4, 4)


@pytest.mark.parametrize(
    "config", [{}, {"random_shuffle": True, "seed": 3, "initial_fill": 4}, {"shuffle_after_epoch": True}]
)
def test_state_restores_the_position(dataset, config):
    full = reader(enable_checkpointing=True, **config)
    for _ in range(5):
        full()
    state = full.get_state()
    rest = [text_of(full()[2]) for _ in range(6)]
    restored = reader(**config)
    restored.set_state(state)
    assert [text_of(restored()[2]) for _ in range(6)] == rest


def train(epochs, stop_at=None, saved=None):
    """Batches of texts of a loop over ``epochs``; with ``stop_at``, stop after that
    many batches and return a checkpoint; with ``saved``, resume from it first."""
    r = reader(num_shards=2, shard_id=1, prefetch_queue_depth=3, random_shuffle=True, seed=4)
    checkpoint = ndd.checkpoint.Checkpoint()
    checkpoint.register(r, "speech")
    start = 0
    if saved is not None:
        text, start = saved
        checkpoint.deserialize(text)
        checkpoint.restore()
    batches = []
    for epoch in range(start, epochs):
        for _, _, text in r.next_epoch(batch_size=2):
            batches.append(texts_of(text))
            if len(batches) == stop_at:
                checkpoint.collect()
                return batches, (checkpoint.serialize(), epoch)
    return batches, None


@pytest.mark.parametrize("stop_at", [1, 2, 4])
def test_a_loop_resumed_from_a_checkpoint_reads_the_same_batches(dataset, stop_at):
    full, _ = train(3)
    first, saved = train(3, stop_at=stop_at)
    rest, _ = train(3, saved=saved)
    assert first + rest == full


def test_lazy_init_reads_the_manifest_at_first_use(dataset):
    r = reader(manifest_filepaths="later.json", lazy_init=True)
    nd.write_manifest("later.json", nd.LINES[:2])
    assert text_of(r()[2]) == "zero"


# -- errors -------------------------------------------------------------------------------------


def test_a_missing_audio_file_raises_naming_it_and_the_reader_goes_on(dataset):
    nd.write_manifest("missing.json", [("nope.wav", None, None, "missing"), nd.LINES[1]])
    r = reader(manifest_filepaths="missing.json")
    with pytest.raises(FileNotFoundError, match=r"ndd.readers.NemoAsr: cannot read file 'clips/nope.wav'"):
        r()
    assert text_of(r()[2]) == "one"


def test_a_corrupt_audio_file_raises_naming_it_and_the_reader_goes_on(dataset):
    (dataset / "clips" / "bad.wav").write_bytes(b"RIFF....WAVEgarbage" * 8)
    nd.write_manifest("corrupt.json", [("bad.wav", None, None, "bad"), nd.LINES[1]])
    r = reader(manifest_filepaths="corrupt.json")
    with pytest.raises(
        RuntimeError, match=r"ndd.readers.NemoAsr: cannot decode audio file 'clips/bad.wav': "
    ):
        r()
    assert text_of(r()[2]) == "one"


def test_a_corrupt_file_in_a_batch_keeps_the_samples_before_it(dataset):
    (dataset / "clips" / "bad.wav").write_bytes(b"not audio")
    nd.write_manifest("corrupt.json", [nd.LINES[0], ("bad.wav", None, None, "bad"), nd.LINES[1], nd.LINES[2]])
    r = reader(manifest_filepaths="corrupt.json")
    with pytest.raises(RuntimeError, match="clips/bad.wav"):
        r(batch_size=2)
    assert texts_of(r(batch_size=2)[2]) == ["zero", "one"]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_resampled_samples_load_on_threads_in_the_order_of_the_manifest(dataset, threads):
    """With a sample_rate the samples of a batch are decoded and resampled on a thread
    pool: each is the file's own resampling, in its place, whatever the thread count."""
    from ndd._ops.audio import decode_audio

    ndd.set_num_threads(threads)
    try:
        audio, rate, text = reader(sample_rate=11025.0)(batch_size=len(nd.LINES))
    finally:
        ndd.set_num_threads(None)
    assert texts_of(text) == [line[3] for line in nd.LINES]
    for sample, line in zip(audio.tensors, nd.LINES, strict=True):
        expected, _ = decode_audio(
            (dataset / "clips" / line[0]).read_bytes(), sample_rate=11025.0, downmix=True
        )
        np.testing.assert_array_equal(np.asarray(sample), expected)


@pytest.mark.parametrize(
    "files, sample_rate, parallel",
    [
        (["a.wav"], 0.0, False),
        (["a.wav"], 8000.0, True),
        (["a.wav", "b.flac"], 0.0, True),
        (["A.WAV"], 0.0, False),
    ],
)
def test_samples_load_on_threads_when_resampling_or_decoding_compressed_audio(
    tmp_path, files, sample_rate, parallel
):
    lines = [json.dumps({"audio_filepath": str(tmp_path / f), "duration": 0.1}) for f in files]
    (tmp_path / "m.json").write_text("\n".join(lines))
    r = ndd.readers.NemoAsr(manifest_filepaths=str(tmp_path / "m.json"), sample_rate=sample_rate)
    assert r._parallel_loading is parallel


def test_a_corrupt_file_among_resampled_ones_raises_in_its_place(dataset):
    (dataset / "clips" / "bad.wav").write_bytes(b"not audio")
    nd.write_manifest("corrupt.json", [nd.LINES[0], nd.LINES[1], ("bad.wav", None, None, "bad"), nd.LINES[2]])
    r = reader(manifest_filepaths="corrupt.json", sample_rate=11025.0)
    ndd.set_num_threads(2)
    try:
        with pytest.raises(RuntimeError, match="clips/bad.wav"):
            r(batch_size=4)
    finally:
        ndd.set_num_threads(None)


def test_a_missing_manifest_raises_at_construction(dataset):
    with pytest.raises(FileNotFoundError, match=r"ndd.readers.NemoAsr: cannot read manifest 'nope.json'"):
        reader(manifest_filepaths=["all.json", "nope.json"])


def test_an_empty_manifest_raises_at_construction(dataset):
    nd.write_manifest("empty.json", [])
    with pytest.raises(
        ValueError,
        match=r"the dataset is empty \(no line of the manifests \['empty.json'\] names an audio file\)",
    ):
        reader(manifest_filepaths="empty.json")


def test_an_empty_dataset_after_filtering_says_so(dataset):
    with pytest.raises(
        ValueError, match=r"names an audio file with a duration within min_duration=0.5, max_duration=0.0"
    ):
        reader(min_duration=0.5)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"manifest_filepaths": []}, "'manifest_filepaths' must be a path or a non-empty list of paths"),
        ({"dtype": ndd.uint8}, "'dtype' must be one of i16, i32, f32, got u8"),
        ({"dtype": ndd.float64}, "'dtype' must be one of i16, i32, f32, got f64"),
        ({"quality": 100.5}, r"'quality' must be in \[0, 100\], got 100.5"),
        ({"quality": -1}, r"'quality' must be in \[0, 100\], got -1.0"),
    ],
)
def test_bad_arguments_raise_naming_them(dataset, kwargs, message):
    with pytest.raises(ValueError, match=f"ndd.readers.NemoAsr: {message}"):
        reader(**kwargs)
