"""decoders.audio and audio_resample: against the reference's goldens
(tests/golden/audio_cases.json, made by tests/golden/make_audio_goldens.py), against
what soundfile reads from files the tests write, and against the signals themselves
(a resampled sine is the same sine)."""

import io
import math
import sys

import case_goldens
import numpy as np
import pytest

import ndd
from ndd._ops.audio import AudioDecodeError, decode_audio
from ndd._prepare.args import InvalidArgumentError

sf = pytest.importorskip("soundfile")


def _golden():
    return case_goldens.load("audio")


def _build(spec, arrays):
    if isinstance(spec, list):
        return ndd.batch([arrays[n] for n in spec])
    return ndd.tensor(arrays[spec])


def _call(case, arrays):
    return case_goldens.call(case, lambda spec: _build(spec, arrays))


def _case_id(case):
    return case_goldens.case_id(case)


_VALUE_CASES, _ERROR_CASES = case_goldens.split(_golden()[0])


def _assert_matches_reference(actual, expected):
    """The resampling kernel repeats the reference's float32 operations in its order, so
    the results are the reference's bits here. The tolerance allows for another C
    library's sinf, which may round a table entry to the neighbouring float: that moves
    a sum of at most 2 * 64 products of samples and filter values below 1 by less than
    1e-6, and an integer result, rounded from it, by at most one step."""
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    if expected.dtype.kind in "iu":
        diff = np.abs(actual.astype(np.int64) - expected.astype(np.int64))
        assert diff.max(initial=0) <= 1
    else:
        np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize("case", _VALUE_CASES, ids=[_case_id(c) for c in _VALUE_CASES])
def test_matches_reference_golden(case):
    _, arrays = _golden()
    result = _call(case, arrays)
    outputs = result if isinstance(result, tuple) else (result,)
    assert len(outputs) == len(case["expected"])
    for out, expected, layout in zip(outputs, case["expected"], case["layouts"], strict=True):
        if isinstance(expected, list):
            assert isinstance(out, ndd.Batch)
            samples = [np.asarray(s) for s in out]
            assert len(samples) == len(expected)
            for sample, name in zip(samples, expected, strict=True):
                _assert_matches_reference(sample, arrays[name])
        else:
            assert isinstance(out, ndd.Tensor)
            _assert_matches_reference(np.asarray(out), arrays[expected])
        assert (out.layout or "") == layout


@pytest.mark.parametrize("case", _ERROR_CASES, ids=[_case_id(c) for c in _ERROR_CASES])
def test_rejects_what_the_reference_rejects(case):
    _, arrays = _golden()
    with pytest.raises(InvalidArgumentError, match=f"ndd.{case['op']}"):
        result = _call(case, arrays)
        np.asarray(result[0] if isinstance(result, tuple) else result)


# ---------------------------------------------------------------- decoding


def _sines(length, rate, channels):
    """Channel c: a sine of 220 * (c + 1) Hz, amplitude 0.5 / (c + 1)."""
    t = np.arange(length) / rate
    return np.stack([0.5 / (c + 1) * np.sin(2 * np.pi * 220 * (c + 1) * t) for c in range(channels)], axis=1)


def _encode(samples, rate, subtype, file_format="WAV"):
    buffer = io.BytesIO()
    sf.write(buffer, samples, rate, subtype=subtype, format=file_format)
    return np.frombuffer(buffer.getvalue(), np.uint8)


def _soundfile_read(encoded, dtype="float32"):
    return sf.read(io.BytesIO(encoded.tobytes()), dtype=dtype, always_2d=True)[0]


# Each format with the error of its samples against the signal written (the
# quantisation step; Vorbis is lossy).
_FORMATS = [
    ("PCM_U8", "WAV", 1 / 128),
    ("PCM_16", "WAV", 1 / 32768),
    ("PCM_24", "WAV", 2**-23),
    ("PCM_32", "WAV", 2**-23),
    ("FLOAT", "WAV", 1e-7),
    ("DOUBLE", "WAV", 1e-7),
    ("PCM_16", "FLAC", 1 / 32768),
    ("PCM_24", "FLAC", 2**-23),
    ("VORBIS", "OGG", 0.05),
]


@pytest.mark.parametrize("subtype, file_format, error", _FORMATS, ids=[f"{f}-{s}" for s, f, _ in _FORMATS])
def test_decodes_what_libsndfile_reads(subtype, file_format, error):
    signal = _sines(2000, 16000, 2)
    encoded = _encode(signal, 16000, subtype, file_format)
    audio, rate = ndd.decoders.audio(ndd.tensor(encoded))
    audio = np.asarray(audio)
    assert audio.dtype == np.float32 and audio.shape == (2000, 2)
    np.testing.assert_array_equal(audio, _soundfile_read(encoded))
    # Vorbis smears the first samples; compare it after them.
    start = 200 if file_format == "OGG" else 0
    np.testing.assert_allclose(audio[start:], signal[start:], rtol=0, atol=error)
    assert np.asarray(rate).dtype == np.float32 and float(np.asarray(rate)) == 16000.0


@pytest.mark.parametrize(
    "dtype, numpy_type", [(ndd.int16, "int16"), (ndd.int32, "int32"), (ndd.float32, "float32")]
)
@pytest.mark.parametrize("subtype", ["PCM_16", "PCM_24", "PCM_U8"])
def test_integer_types_are_libsndfiles_full_range_conversions(dtype, numpy_type, subtype):
    encoded = _encode(_sines(500, 8000, 3), 8000, subtype)
    audio, _ = ndd.decoders.audio(ndd.tensor(encoded), dtype=dtype)
    audio = np.asarray(audio)
    assert audio.dtype == np.dtype(numpy_type)
    np.testing.assert_array_equal(audio, _soundfile_read(encoded, numpy_type))


def test_downmix_averages_the_channels_into_one_dimension():
    encoded = _encode(_sines(700, 8000, 3), 8000, "PCM_24")
    audio, _ = ndd.decoders.audio(ndd.tensor(encoded), downmix=True)
    frames = _soundfile_read(encoded)
    np.testing.assert_allclose(np.asarray(audio), frames.mean(axis=1), rtol=0, atol=1e-7)
    assert np.asarray(audio).shape == (700,)


def test_downmix_to_integers_scales_the_mean_to_the_full_range():
    encoded = _encode(_sines(300, 8000, 2), 8000, "FLOAT")
    audio, _ = ndd.decoders.audio(ndd.tensor(encoded), downmix=True, dtype=ndd.int16)
    mean = _soundfile_read(encoded).mean(axis=1)
    diff = np.abs(np.asarray(audio).astype(np.float64) - np.round(mean * 32767))
    assert np.asarray(audio).dtype == np.int16 and diff.max() <= 1


def test_downmix_of_mono_is_the_samples_in_one_dimension():
    encoded = _encode(_sines(300, 8000, 1), 8000, "PCM_16")
    audio, _ = ndd.decoders.audio(ndd.tensor(encoded), downmix=True, dtype=ndd.int16)
    np.testing.assert_array_equal(np.asarray(audio), _soundfile_read(encoded, "int16")[:, 0])


def test_without_downmix_even_mono_has_a_channel_dimension():
    encoded = _encode(_sines(300, 8000, 1), 8000, "PCM_16")
    assert np.asarray(ndd.decoders.audio(ndd.tensor(encoded))[0]).shape == (300, 1)


@pytest.mark.parametrize("target", [16000.0, 11025.0, 12345.6, 4000.0])
def test_resampling_gives_ceil_of_the_scaled_length_and_the_new_rate(target):
    encoded = _encode(_sines(1000, 8000, 2), 8000, "PCM_16")
    audio, rate = ndd.decoders.audio(ndd.tensor(encoded), sample_rate=target)
    rate32 = float(np.float32(target))
    assert np.asarray(audio).shape == (math.ceil(1000 * rate32 / 8000), 2)
    assert float(np.asarray(rate)) == rate32


@pytest.mark.parametrize("target", [0.0, -3.0, 8000.0])
def test_no_resampling_at_the_files_rate_or_without_a_positive_rate(target):
    encoded = _encode(_sines(400, 8000, 1), 8000, "PCM_16")
    audio, rate = ndd.decoders.audio(ndd.tensor(encoded), sample_rate=target)
    np.testing.assert_array_equal(np.asarray(audio), _soundfile_read(encoded))
    # The reference reports a rate of 0 when sample_rate=0 is passed: we give the file's.
    assert float(np.asarray(rate)) == 8000.0


@pytest.mark.parametrize("channels", [1, 2])
def test_a_resampled_sine_is_the_same_sine_at_the_new_rate(channels):
    encoded = _encode(_sines(44100, 44100, channels), 44100, "FLOAT")
    audio, _ = ndd.decoders.audio(ndd.tensor(encoded), sample_rate=16000.0)
    audio = np.asarray(audio)
    assert audio.shape == (16000, channels)
    expected = _sines(16000, 16000, channels)
    # 16 lobes leave errors far below 1e-3 away from the ends, where the filter is cut.
    np.testing.assert_allclose(audio[50:-50], expected[50:-50], rtol=0, atol=2e-4)


def test_decoding_a_batch_resamples_each_sample_to_its_own_rate():
    files = [
        _encode(_sines(800, 8000, 2), 8000, "PCM_16"),
        _encode(_sines(600, 16000, 1), 16000, "PCM_16", "FLAC"),
    ]
    rates = ndd.batch([np.float32(16000), np.float32(4000)])
    audio, rate = ndd.decoders.audio(ndd.batch(files), sample_rate=rates)
    assert [np.asarray(a).shape for a in audio] == [(1600, 2), (150, 1)]
    assert [float(np.asarray(r)) for r in rate] == [16000.0, 4000.0]
    for sample, encoded, target in zip(audio, files, [16000.0, 4000.0], strict=True):
        alone, _ = ndd.decoders.audio(ndd.tensor(encoded), sample_rate=target)
        np.testing.assert_array_equal(np.asarray(sample), np.asarray(alone))


def test_a_truncated_file_gives_the_samples_it_holds():
    encoded = _encode(_sines(1000, 8000, 1), 8000, "PCM_16")
    audio, _ = ndd.decoders.audio(ndd.tensor(encoded[:1000]))
    # 44 bytes of header, then 2 bytes per sample; the reference gives the same.
    assert np.asarray(audio).shape == (478, 1)


@pytest.mark.parametrize(
    "data", [np.arange(500).astype(np.uint8), np.zeros(0, np.uint8)], ids=["garbage", "empty"]
)
def test_undecodable_data_raises_naming_the_operator(data):
    with pytest.raises(RuntimeError, match=r"ndd\.decoders\.audio: cannot decode audio") as info:
        ndd.decoders.audio(ndd.tensor(data))[0].evaluate()
    assert isinstance(info.value.__cause__, AudioDecodeError)


def test_a_corrupt_file_in_a_batch_names_the_sample_and_keeps_the_others():
    good = _encode(_sines(300, 8000, 1), 8000, "PCM_16")
    batch = ndd.batch([good, good[:30], good])
    with pytest.raises(RuntimeError, match=r"ndd\.decoders\.audio: cannot decode audio \(sample 1\)") as info:
        ndd.decoders.audio(batch)[0].evaluate()
    error = info.value.__cause__
    assert isinstance(error, AudioDecodeError)
    assert error.failed == (1,)
    assert error.decoded[1] is None
    np.testing.assert_array_equal(error.decoded[0][0], _soundfile_read(good))


def test_decode_audio_takes_bytes_or_a_uint8_array():
    encoded = _encode(_sines(300, 22050, 2), 22050, "PCM_16")
    from_array = decode_audio(encoded, sample_rate=16000.0, downmix=True, dtype=ndd.int16)
    from_bytes = decode_audio(encoded.tobytes(), sample_rate=16000.0, downmix=True, dtype=ndd.int16)
    np.testing.assert_array_equal(from_array[0], from_bytes[0])
    assert from_array[1] == from_bytes[1] == 16000.0
    operator_result = ndd.decoders.audio(
        ndd.tensor(encoded), sample_rate=16000.0, downmix=True, dtype=ndd.int16
    )
    np.testing.assert_array_equal(from_array[0], np.asarray(operator_result[0]))


def test_decode_audio_errors_start_with_the_given_name():
    with pytest.raises(AudioDecodeError, match=r"^ndd\.readers\.NemoAsr: cannot decode audio"):
        decode_audio(b"not audio", qualname="ndd.readers.NemoAsr")


def test_without_soundfile_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "soundfile", None)
    encoded = _encode(_sines(100, 8000, 1), 8000, "PCM_16")
    with pytest.raises(ImportError, match=r"ndd\.decoders\.audio: .*pip install 'ndd\[audio\]'"):
        ndd.decoders.audio(ndd.tensor(encoded))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"dtype": ndd.uint8}, "'dtype' must be one of"),
        ({"dtype": ndd.float64}, "'dtype' must be one of"),
        ({"quality": 100.5, "sample_rate": 16000.0}, r"'quality' must be in \[0, 100\], got 100.5"),
    ],
)
def test_decoder_arguments_are_checked(kwargs, message):
    encoded = _encode(_sines(100, 8000, 1), 8000, "PCM_16")
    with pytest.raises(InvalidArgumentError, match=rf"ndd\.decoders\.audio: {message}"):
        ndd.decoders.audio(ndd.tensor(encoded), **kwargs)


@pytest.mark.parametrize(
    "data, message",
    [
        (np.zeros(10, np.int16), "must be encoded audio bytes"),
        (np.zeros((2, 10), np.uint8), "must be 1-D encoded audio bytes"),
    ],
)
def test_decoder_input_must_be_a_byte_string(data, message):
    with pytest.raises(InvalidArgumentError, match=rf"ndd\.decoders\.audio: the input {message}"):
        ndd.decoders.audio(ndd.tensor(data))


# ---------------------------------------------------------------- resampling


def _sine(length, period):
    return np.sin(2 * np.pi * np.arange(length) / period).astype(np.float32)


@pytest.mark.parametrize("scale", [2.0, 0.5, 0.37, 3.3])
def test_resampled_sine_keeps_its_frequency(scale):
    out = np.asarray(ndd.audio_resample(ndd.tensor(_sine(4000, 40.0)), scale=scale))
    assert out.shape == (math.ceil(4000 * float(np.float32(scale))),)
    # The same sine, its period scaled; compared away from the ends.
    expected = np.sin(2 * np.pi * np.arange(len(out)) / (40.0 * float(np.float32(scale))))
    margin = int(40 * scale)
    np.testing.assert_allclose(out[margin:-margin], expected[margin:-margin], rtol=0, atol=1e-3)


@pytest.mark.parametrize("quality, tolerance", [(0.0, 2e-2), (50.0, 1e-4), (100.0, 1e-4)])
def test_higher_quality_filters_are_closer(quality, tolerance):
    out = np.asarray(
        ndd.audio_resample(
            ndd.tensor(_sine(44100, 100.25)), in_rate=44100.0, out_rate=16000.0, quality=quality
        )
    )
    expected = np.sin(2 * np.pi * np.arange(len(out)) * (44100 / 16000) / 100.25)
    assert np.abs(out[200:-200] - expected[200:-200]).max() < tolerance


def test_out_length_gives_that_many_samples_of_the_same_signal():
    x = _sine(1000, 50.0)
    out = np.asarray(ndd.audio_resample(ndd.tensor(x), out_length=1500))
    by_scale = np.asarray(ndd.audio_resample(ndd.tensor(x), in_rate=1000.0, out_rate=1500.0))
    assert out.shape == (1500,)
    np.testing.assert_array_equal(out, by_scale)


def test_channels_are_resampled_independently():
    stereo = np.stack([_sine(500, 20.0), 0.5 * _sine(500, 33.0)], axis=1)
    out = np.asarray(ndd.audio_resample(ndd.tensor(stereo), scale=1.7))
    for c in range(2):
        alone = np.asarray(ndd.audio_resample(ndd.tensor(np.ascontiguousarray(stereo[:, c])), scale=1.7))
        # The reference sums a channel of interleaved audio in another order than a mono
        # signal (one running sum against four), hence the float32 tolerance.
        np.testing.assert_allclose(out[:, c], alone, rtol=0, atol=1e-6)


def test_a_scale_of_one_keeps_the_samples():
    x = _sine(300, 17.0)
    np.testing.assert_allclose(np.asarray(ndd.audio_resample(ndd.tensor(x), scale=1.0)), x, rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    "values, dtype, expected",
    [
        # The reference's documented examples.
        (np.array([-1.0, 1.0], np.float32), ndd.uint8, [0, 255]),
        (np.array([0, 127, 128, 255], np.uint8), ndd.int16, [-32767, -128, 128, 32767]),
        (np.array([0, 65535], np.uint16), ndd.float32, [-1.0, 1.0]),
        (np.array([-32767, 32767], np.int16), ndd.uint16, [0, 65535]),
        (np.array([-0.5, 0.25], np.float32), ndd.int32, [-1073741824, 536870912]),
    ],
)
def test_type_changes_map_the_full_ranges(values, dtype, expected):
    # Each value held long enough for the filter to give it back exactly (up to 1e-7).
    held = np.repeat(values, 40)
    out = np.asarray(ndd.audio_resample(ndd.tensor(held), scale=1.0, dtype=dtype))
    assert out.dtype == dtype.numpy
    np.testing.assert_allclose(out[20::40].astype(np.float64), expected, rtol=1e-6, atol=1)


def test_zero_is_the_half_range_of_an_unsigned_type():
    out = np.asarray(ndd.audio_resample(ndd.tensor(np.zeros(50, np.float32)), scale=1.0, dtype=ndd.uint8))
    assert (out == 128).all()


def test_the_output_type_is_the_inputs_when_omitted_and_the_layout_is_kept():
    out = ndd.audio_resample(ndd.tensor(np.zeros((100, 2), np.int16), layout="tc"), scale=0.5)
    assert out.dtype == ndd.int16 and out.layout == "tc" and out.shape == (50, 2)


@pytest.mark.parametrize(
    "argument, values, lengths",
    [
        ("scale", [2.0, 0.5], [800, 100]),
        ("out_length", [7, 123], [7, 123]),
    ],
)
def test_per_sample_arguments_apply_to_their_sample(argument, values, lengths):
    signals = [_sine(400, 25.0), _sine(200, 10.0)]
    dtype = np.float32 if argument == "scale" else np.int64
    out = ndd.audio_resample(ndd.batch(signals), **{argument: ndd.batch([dtype(v) for v in values])})
    assert [np.asarray(s).shape[0] for s in out] == lengths
    for sample, signal, value in zip(out, signals, values, strict=True):
        alone = ndd.audio_resample(ndd.tensor(signal), **{argument: value})
        np.testing.assert_array_equal(np.asarray(sample), np.asarray(alone))


def test_per_sample_rates_apply_to_their_sample():
    signals = [_sine(441, 25.0), _sine(160, 10.0)]
    out = ndd.audio_resample(
        ndd.batch(signals),
        in_rate=ndd.batch([np.float32(44100), np.float32(16000)]),
        out_rate=ndd.batch([np.float32(16000), np.float32(44100)]),
    )
    assert [np.asarray(s).shape[0] for s in out] == [160, 441]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "give the rates"),
        ({"in_rate": 2.0}, "'in_rate' and 'out_rate' must be given together"),
        ({"out_rate": 2.0}, "'in_rate' and 'out_rate' must be given together"),
        ({"scale": 2.0, "out_length": 3}, "give one of"),
        ({"scale": 2.0, "in_rate": 1.0, "out_rate": 2.0}, "give one of"),
        ({"scale": -1.0}, "'scale' must be non-negative, got -1.0"),
        ({"out_length": -2}, "'out_length' must be non-negative, got -2"),
        ({"in_rate": 0.0, "out_rate": 1.0}, "'in_rate' must be positive, got 0.0"),
        ({"in_rate": 1.0, "out_rate": -1.0}, "'out_rate' must be non-negative, got -1.0"),
        ({"scale": 2.0, "quality": -1.0}, r"'quality' must be in \[0, 100\], got -1.0"),
        ({"scale": 2.0, "dtype": ndd.int64}, "'dtype' must be one of"),
    ],
)
def test_resampling_arguments_are_checked(kwargs, message):
    with pytest.raises(InvalidArgumentError, match=rf"ndd\.audio_resample: {message}"):
        ndd.audio_resample(ndd.tensor(np.zeros(10, np.float32)), **kwargs)


def test_a_bad_per_sample_argument_names_its_sample():
    with pytest.raises(InvalidArgumentError, match=r"'scale' must be non-negative, got -2.0 \(sample 1\)"):
        ndd.audio_resample(
            ndd.batch([np.zeros(10, np.float32)] * 2), scale=ndd.batch([np.float32(1), np.float32(-2)])
        )


def test_an_empty_input_cannot_give_samples():
    with pytest.raises(
        InvalidArgumentError, match=r"ndd\.audio_resample: 'out_length' must be 0 for an empty input"
    ):
        np.asarray(ndd.audio_resample(ndd.tensor(np.zeros(0, np.float32)), out_length=5))
    assert np.asarray(ndd.audio_resample(ndd.tensor(np.zeros(0, np.float32)), scale=2.0)).shape == (0,)


@pytest.mark.parametrize(
    "data, message",
    [
        (np.zeros(10, np.float64), "the input must be one of"),
        (np.zeros(10, np.int64), "the input must be one of"),
        (np.zeros((4, 2, 2), np.float32), r"the input must be 1-D \[T\] or 2-D \[T, C\] audio, got 3-D data"),
    ],
)
def test_resampling_input_is_checked(data, message):
    with pytest.raises(InvalidArgumentError, match=rf"ndd\.audio_resample: {message}"):
        ndd.audio_resample(ndd.tensor(data), scale=2.0)


def test_a_header_claiming_billions_of_frames_fails_its_sample_only():
    # A FLAC whose STREAMINFO claims 2**36 - 1 frames: reading "to the end" allocated
    # them all at once (hundreds of GiB: MemoryError, the batch lost). Frames beyond
    # a few million are read in parts, as many as the data holds.
    good = _encode(_sines(4000, 8000, 1), 8000, "PCM_16", "FLAC")
    raw = bytearray(good.tobytes())
    assert raw[:4] == b"fLaC"
    fields = int.from_bytes(raw[18:26], "big")  # STREAMINFO bytes 10-17: rate, channels, bits, frames
    raw[18:26] = (fields | (1 << 36) - 1).to_bytes(8, "big")
    assert sf.info(io.BytesIO(bytes(raw))).frames == (1 << 36) - 1
    bad = np.frombuffer(bytes(raw), np.uint8)
    with pytest.raises(RuntimeError, match=r"ndd\.decoders\.audio: cannot decode audio \(sample 0\)") as info:
        ndd.decoders.audio(ndd.batch([bad, good]))[0].evaluate()
    error = info.value
    assert isinstance(error, AudioDecodeError) and error.failed == (0,)
    np.testing.assert_array_equal(error.decoded[1][0], _soundfile_read(good))


@pytest.mark.parametrize("kwargs", [{"scale": 1e30}, {"out_length": 2**50}])
def test_audio_resample_refuses_an_output_larger_than_memory(kwargs):
    # A scale of 1e30 raised OverflowError from the allocation (no operator named).
    signal = ndd.tensor(np.zeros((100, 2), np.float32))
    with pytest.raises(ValueError, match=r"ndd\.audio_resample: the output would have \d+ samples"):
        np.asarray(ndd.audio_resample(signal, **kwargs))


# -- 16-bit FLAC through dr_flac (miniaudio) ------------------------------------------


@pytest.fixture
def dr_flac_calls(monkeypatch):
    """The files dr_flac was asked to decode (miniaudio is in the test extra)."""
    miniaudio = pytest.importorskip("miniaudio")
    calls = []
    decode = miniaudio.flac_read_s16

    def counting(data):
        calls.append(len(data))
        return decode(data)

    monkeypatch.setattr(miniaudio, "flac_read_s16", counting)
    return calls


def _without_dr_flac(monkeypatch, call):
    """``call()`` with miniaudio hidden: what libsndfile alone gives."""
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "miniaudio", None)
        return call()


@pytest.mark.parametrize("channels", [1, 2, 5])
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"dtype": ndd.int16},
        {"dtype": ndd.int32},
        {"downmix": True},
        {"sample_rate": 8000.0, "dtype": ndd.int16},
    ],
    ids=["float32", "int16", "int32", "downmix", "resampled"],
)
def test_16_bit_flac_is_decoded_by_dr_flac_into_libsndfiles_samples(
    monkeypatch, dr_flac_calls, channels, kwargs
):
    encoded = _encode(_sines(3000, 22050, channels), 22050, "PCM_16", "FLAC")
    audio, rate = (np.asarray(x) for x in ndd.decoders.audio(ndd.tensor(encoded), **kwargs))
    assert dr_flac_calls == [len(encoded)]
    alone, alone_rate = _without_dr_flac(
        monkeypatch, lambda: [np.asarray(x) for x in ndd.decoders.audio(ndd.tensor(encoded), **kwargs)]
    )
    assert len(dr_flac_calls) == 1
    np.testing.assert_array_equal(audio, alone, strict=True)
    assert rate == alone_rate
    if set(kwargs) <= {"dtype"}:  # the samples as they are: libsndfile's own reading
        numpy_type = {ndd.int16: "int16", ndd.int32: "int32"}.get(kwargs.get("dtype"), "float32")
        np.testing.assert_array_equal(audio, _soundfile_read(encoded, numpy_type), strict=True)


@pytest.mark.parametrize(
    "offset, duration, dr_flac",
    [(0.0, -1.0, True), (0.0, 0.1, True), (0.0, 0.05, False), (0.01, -1.0, False), (0.0, 9.0, True)],
)
def test_flac_parts_from_the_start_use_dr_flac_and_others_libsndfile(
    monkeypatch, dr_flac_calls, offset, duration, dr_flac
):
    # 0.125 s at 16 kHz: from the start and at least half of it goes to dr_flac.
    encoded = _encode(_sines(2000, 16000, 2), 16000, "PCM_16", "FLAC")
    audio, rate = decode_audio(encoded, offset=offset, duration=duration, dtype=ndd.int16)
    assert bool(dr_flac_calls) == dr_flac
    alone, _ = _without_dr_flac(
        monkeypatch, lambda: decode_audio(encoded, offset=offset, duration=duration, dtype=ndd.int16)
    )
    np.testing.assert_array_equal(audio, alone, strict=True)
    assert len(audio) == min(2000 - int(offset * 16000), int(duration * 16000) if duration >= 0 else 2000)


@pytest.mark.parametrize("subtype", ["PCM_24", "PCM_S8"])
def test_flac_of_other_sample_sizes_goes_to_libsndfile(dr_flac_calls, subtype):
    encoded = _encode(_sines(1000, 16000, 1), 16000, subtype, "FLAC")
    audio, _ = ndd.decoders.audio(ndd.tensor(encoded), dtype=ndd.int32)
    assert dr_flac_calls == []
    np.testing.assert_array_equal(np.asarray(audio), _soundfile_read(encoded, "int32"))


def _damaged_flacs():
    good = _encode(
        _sines(20000, 16000, 1) + np.random.default_rng(0).normal(0, 0.01, (20000, 1)),
        16000,
        "PCM_16",
        "FLAC",
    )
    rng = np.random.default_rng(1)
    damaged = [good[: len(good) * k // 4] for k in (1, 2, 3)]
    for _ in range(8):
        flipped = good.copy()
        flipped[rng.integers(200, len(good))] ^= np.uint8(rng.integers(1, 256))
        damaged.append(flipped)
    return damaged


@pytest.mark.parametrize("index", range(11))
def test_a_damaged_flac_gives_what_libsndfile_gives(monkeypatch, dr_flac_calls, index):
    # dr_flac skips frames that fail their checksum and stops at the end of the data:
    # fewer frames than the header says, so libsndfile decodes the file, as before.
    encoded = _damaged_flacs()[index]

    def decode():
        try:
            return np.asarray(ndd.decoders.audio(ndd.tensor(encoded), dtype=ndd.int16)[0])
        except RuntimeError as error:
            return str(error)

    result = decode()
    assert len(dr_flac_calls) == 1
    expected = _without_dr_flac(monkeypatch, decode)
    if isinstance(expected, str):
        assert result == expected
    else:
        np.testing.assert_array_equal(result, expected, strict=True)


def test_a_batch_decoded_by_two_threads_gives_each_file_its_samples():
    files = [_encode(_sines(1500 + 100 * i, 16000, 1 + i % 2), 16000, "PCM_16", "FLAC") for i in range(6)]
    files[3] = _encode(_sines(1200, 16000, 2), 16000, "PCM_16")  # a WAV among them
    threads = ndd.get_num_threads()
    ndd.set_num_threads(2)
    try:
        audio, _ = ndd.decoders.audio(ndd.batch(files), dtype=ndd.int16)
    finally:
        ndd.set_num_threads(threads)
    for sample, encoded in zip(audio, files, strict=True):
        np.testing.assert_array_equal(np.asarray(sample), _soundfile_read(encoded, "int16"))
