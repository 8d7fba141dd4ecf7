"""The signal-processing operators (ndd/_ops/spectral.py) against the reference's goldens
(tests/golden/spectral_cases.json, made by tests/golden/make_spectral_goldens.py) and
against the definitions written out independently with numpy; and what we do where the
reference crashes or gives nonsense."""

import case_goldens
import numpy as np
import pytest

import ndd
from ndd._prepare.args import InvalidArgumentError

# Float results may differ from the reference's by float32 roundings in another order
# (numpy's FFT against the reference's, BLAS sums against its loops): we saw at most 5e-7
# of the output's largest magnitude; 2e-6 leaves a margin of 4 without hiding a wrong
# window, bin or filter (those differ by percents).
RELATIVE_TOLERANCE = 2e-6


def _golden():
    return case_goldens.load("spectral")


def _build(spec, layout, arrays):
    if isinstance(spec, list):
        return ndd.batch([arrays[n] for n in spec], layout=layout or None)
    return ndd.tensor(arrays[spec], layout=layout or None)


def _call(case, arrays):
    return case_goldens.call(case, lambda spec: _build(spec, case["layout"], arrays))


def _case_id(case):
    return case_goldens.case_id(case, case["layout"])


_VALUE_CASES, _ERROR_CASES = case_goldens.split(_golden()[0])


def _assert_close(actual, expected):
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    if expected.dtype.kind in "iu":
        np.testing.assert_array_equal(actual, expected)
        return
    scale = float(np.nanmax(np.abs(expected), initial=0)) or 1.0
    np.testing.assert_allclose(actual, expected, rtol=0, atol=RELATIVE_TOLERANCE * scale)


@pytest.mark.parametrize("case", _VALUE_CASES, ids=[_case_id(c) for c in _VALUE_CASES])
def test_matches_reference_golden(case):
    _, arrays = _golden()
    result = _call(case, arrays)
    outputs = result if isinstance(result, tuple) else (result,)
    assert len(outputs) == len(case["expected"])
    for output, expected, layout in zip(outputs, case["expected"], case["expected_layout"], strict=True):
        if isinstance(expected, list):
            assert isinstance(output, ndd.Batch)
            assert output.batch_size == len(expected)
            for sample, name in zip(output, expected, strict=True):
                _assert_close(np.asarray(sample), arrays[name])
        else:
            assert isinstance(output, ndd.Tensor)
            _assert_close(np.asarray(output), arrays[expected])
        assert (output.layout or "") == layout


@pytest.mark.parametrize("case", _ERROR_CASES, ids=[_case_id(c) for c in _ERROR_CASES])
def test_rejects_what_the_reference_rejects(case):
    _, arrays = _golden()
    with pytest.raises(InvalidArgumentError, match=f"ndd.{case['op']}"):
        result = _call(case, arrays)
        for output in result if isinstance(result, tuple) else (result,):
            output.evaluate()


# ------------------------------------------------------------------ independent definitions


def _sine(frequency, rate, n):
    return np.sin(2 * np.pi * frequency / rate * np.arange(n)).astype(np.float32)


def test_spectrogram_of_a_pure_tone_peaks_at_its_bin():
    rate, nfft = 16000, 512
    tone = _sine(1000.0, rate, rate)  # bin 1000 / (16000 / 512) = 32
    spectrum = np.asarray(ndd.spectrogram(ndd.tensor(tone), window_length=400, window_step=160, nfft=nfft))
    assert spectrum.shape == (nfft // 2 + 1, rate // 160 + 1)
    assert np.all(np.argmax(spectrum[:, 2:-2], axis=0) == 32)


def test_spectrogram_is_the_squared_fft_of_hann_windowed_frames():
    rng = np.random.default_rng(0)
    signal = rng.normal(size=300).astype(np.float32)
    length, step = 64, 20
    out = np.asarray(
        ndd.spectrogram(ndd.tensor(signal), window_length=length, window_step=step, nfft=80, layout="tf")
    )
    padded = np.pad(signal.astype(np.float64), length // 2, mode="reflect")
    hann = 0.5 * (1 - np.cos(2 * np.pi * (np.arange(length) + 0.5) / length))
    frames = np.stack([padded[k * step : k * step + length] * hann for k in range(len(signal) // step + 1)])
    expected = np.abs(np.fft.rfft(frames, n=80)) ** 2
    np.testing.assert_allclose(out, expected, rtol=0, atol=RELATIVE_TOLERANCE * expected.max())


@pytest.mark.parametrize(
    ("center", "n", "windows"), [(True, 99, 2), (True, 100, 3), (False, 100, 2), (False, 149, 2)]
)
def test_spectrogram_counts_windows_with_and_without_centering(center, n, windows):
    out = ndd.spectrogram(
        ndd.tensor(np.ones(n, np.float32)), window_length=50, window_step=50, center_windows=center
    )
    assert out.shape == (26, windows)


def test_spectrogram_pads_with_zeros_without_reflect_padding():
    signal = np.ones(8, np.float32)
    window = [1.0] * 8
    out = np.asarray(
        ndd.spectrogram(
            ndd.tensor(signal), window_length=8, window_step=8, window_fn=window, reflect_padding=False
        )
    )
    # Window 0 holds 4 zeros then 4 ones; window 1 the last 4 ones then 4 zeros.
    np.testing.assert_allclose(out[0], [16.0, 16.0])


def test_spectrogram_of_windows_of_one_and_two_samples():
    # The reference fails to plan FFTs of 1 and 2 points; they are plain sums.
    signal = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    one = np.asarray(
        ndd.spectrogram(
            ndd.tensor(signal), window_length=1, window_step=1, window_fn=[1.0], center_windows=False
        )
    )
    np.testing.assert_allclose(one, [signal**2])
    two = np.asarray(
        ndd.spectrogram(
            ndd.tensor(signal), window_length=2, window_step=2, window_fn=[1.0, 1.0], center_windows=False
        )
    )
    np.testing.assert_allclose(two, [[9.0, 49.0], [1.0, 1.0]])


@pytest.mark.parametrize("n", [15, 20, 63])
def test_a_signal_short_of_its_window_by_less_than_a_step_is_one_zero_padded_window(n):
    # As the reference: 20 samples with windows of 64 every 50 give the spectrum of the
    # signal followed by 44 zeros.
    signal = np.linspace(-1, 1, n, dtype=np.float32)
    out = ndd.spectrogram(
        ndd.tensor(signal), window_length=64, window_step=50, nfft=128, center_windows=False
    )
    hann = 0.5 * (1 - np.cos(2 * np.pi * (np.arange(64) + 0.5) / 64))
    expected = np.abs(np.fft.rfft(np.pad(signal, (0, 64 - n)) * hann, n=128)) ** 2
    np.testing.assert_allclose(np.asarray(out)[:, 0], expected, rtol=0, atol=1e-5 * expected.max())
    assert out.shape == (65, 1)


def test_spectrogram_refuses_a_signal_short_of_its_window_by_a_step_or_more():
    # The reference: "Signal is too short".
    with pytest.raises(
        InvalidArgumentError, match="ndd.spectrogram: the signal .* shorter than 'window_length'"
    ):
        ndd.spectrogram(
            ndd.tensor(np.ones(14, np.float32)), window_length=64, window_step=50, center_windows=False
        )


def test_a_short_sample_in_a_batch_keeps_the_others():
    long = np.sin(np.arange(300, dtype=np.float32) / 7)
    short = long[:40]
    batch = ndd.spectrogram(ndd.batch([long, short]), window_length=64, window_step=50, center_windows=False)
    alone = ndd.spectrogram(ndd.tensor(long), window_length=64, window_step=50, center_windows=False)
    np.testing.assert_array_equal(np.asarray(batch.select(0)), np.asarray(alone))
    assert batch.select(1).shape == (33, 1)


def test_spectrogram_of_a_batch_matches_each_sample():
    rng = np.random.default_rng(2)
    signals = [rng.normal(size=n).astype(np.float32) for n in (500, 500, 300)]
    batch = ndd.spectrogram(ndd.batch(signals), window_length=64, window_step=32)
    for sample, signal in zip(batch, signals, strict=True):
        alone = ndd.spectrogram(ndd.tensor(signal), window_length=64, window_step=32)
        np.testing.assert_array_equal(np.asarray(sample), np.asarray(alone))


def test_power_spectrum_is_the_squared_magnitude_of_the_real_fft():
    rng = np.random.default_rng(3)
    data = rng.normal(size=(4, 30)).astype(np.float32)
    expected = np.abs(np.fft.rfft(data.astype(np.float64), n=40, axis=0)) ** 2
    out = np.asarray(ndd.power_spectrum(ndd.tensor(data), axis=0, nfft=40))
    np.testing.assert_allclose(out, expected, rtol=0, atol=RELATIVE_TOLERANCE * expected.max())
    magnitude = np.asarray(ndd.power_spectrum(ndd.tensor(data), power=1))
    np.testing.assert_allclose(magnitude, np.abs(np.fft.rfft(data, axis=1)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("nfft", [7, 12, 20])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_power_spectrum_cuts_or_pads_each_sample_to_nfft(axis, nfft):
    rng = np.random.default_rng(5)
    samples = [rng.normal(size=(12, 12, 12)).astype(np.float32) for _ in range(2)]
    out = ndd.power_spectrum(ndd.batch(samples), axis=axis, nfft=nfft)
    for got, x in zip(out, samples, strict=True):
        expected = np.abs(np.fft.rfft(x.astype(np.float64), n=nfft, axis=axis)) ** 2
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6, atol=1e-6 * expected.max())


def test_power_spectrum_counts_negative_axes_from_the_end():
    # The reference transforms the last axis for any negative axis.
    data = np.random.default_rng(4).normal(size=(6, 10)).astype(np.float32)
    assert ndd.power_spectrum(ndd.tensor(data), axis=-2).shape == (4, 10)


def test_power_spectrum_refuses_an_empty_axis_without_nfft_and_pads_it_with():
    empty = ndd.tensor(np.zeros((3, 0), np.float32))
    with pytest.raises(InvalidArgumentError, match="ndd.power_spectrum: the transformed axis 1 is empty"):
        ndd.power_spectrum(empty)
    np.testing.assert_array_equal(np.asarray(ndd.power_spectrum(empty, nfft=4)), np.zeros((3, 3)))


def _slaney_mel(hz):
    hz = np.asarray(hz, np.float64)
    return np.where(hz >= 1000, 15 + np.log(np.maximum(hz, 1e-9) / 1000) / (np.log(6.4) / 27), hz * 3 / 200)


def _slaney_hz(mel):
    mel = np.asarray(mel, np.float64)
    return np.where(mel >= 15, 1000 * np.exp(np.log(6.4) / 27 * (mel - 15)), mel * 200 / 3)


def _mel_filters(bins, nfilter, rate, low, high, normalize):
    """Triangles between mel points spaced evenly, in float64 (librosa's construction)."""
    points = _slaney_hz(np.linspace(_slaney_mel(low), _slaney_mel(high), nfilter + 2))
    freqs = np.arange(bins) * rate / (2 * (bins - 1))
    lower, centre, upper = points[:-2, None], points[1:-1, None], points[2:, None]
    weights = np.maximum(
        0, np.minimum((freqs - lower) / (centre - lower), (upper - freqs) / (upper - centre))
    )
    return weights * (2 / (upper - lower)) if normalize else weights


@pytest.mark.parametrize("normalize", [True, False])
def test_mel_filters_are_the_triangles_of_librosa(normalize):
    bins = 257
    spectrum = np.eye(bins, dtype=np.float32)
    out = np.asarray(
        ndd.mel_filter_bank(ndd.tensor(spectrum), sample_rate=16000.0, nfilter=40, normalize=normalize)
    )
    expected = _mel_filters(bins, 40, 16000.0, 0.0, 8000.0, normalize)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-5 * expected.max())


def test_unnormalized_mel_filters_peak_at_one_and_overlap_into_a_partition_of_unity():
    out = np.asarray(
        ndd.mel_filter_bank(
            ndd.tensor(np.eye(513, dtype=np.float32)), sample_rate=16000.0, nfilter=20, normalize=False
        )
    )
    assert out.shape == (20, 513)
    assert np.all(out.max(axis=1) > 0.8) and np.all(out <= 1.0)
    # Between the centres of the first and the last filter, the weights of each bin add to 1.
    inside = np.flatnonzero((np.argmax(out[0]) < np.arange(513)) & (np.arange(513) < np.argmax(out[-1])))
    np.testing.assert_allclose(out[:, inside].sum(axis=0), 1.0, atol=1e-6)


def test_mel_filter_bank_finds_the_frequency_axis_in_the_layout():
    spectra = np.random.default_rng(5).uniform(size=(7, 65)).astype(np.float32)
    time_major = np.asarray(
        ndd.mel_filter_bank(ndd.tensor(spectra, layout="tf"), sample_rate=8000.0, nfilter=12)
    )
    freq_major = np.asarray(ndd.mel_filter_bank(ndd.tensor(spectra.T.copy()), sample_rate=8000.0, nfilter=12))
    np.testing.assert_allclose(time_major, freq_major.T, rtol=1e-6, atol=1e-7)


def _dct(values, dct_type, normalize):
    """Wikipedia's DCT types 1 to 4 as explicit cosine sums (orthonormal with normalize)."""
    n = len(values)
    out = np.zeros(n)
    for k in range(n):
        total = 0.0
        for j in range(n):
            if dct_type == 1:
                weight = 0.5 if j in (0, n - 1) else 1.0
                total += weight * values[j] * np.cos(np.pi / (n - 1) * j * k)
            elif dct_type == 2:
                total += values[j] * np.cos(np.pi / n * (j + 0.5) * k)
            elif dct_type == 3:
                weight = (
                    (1 / np.sqrt(n) if normalize else 0.5)
                    if j == 0
                    else (np.sqrt(2 / n) if normalize else 1.0)
                )
                total += weight * values[j] * np.cos(np.pi / n * j * (k + 0.5))
            else:
                total += values[j] * np.cos(np.pi / n * (j + 0.5) * (k + 0.5))
        if normalize and dct_type == 2:
            total *= np.sqrt((1 if k == 0 else 2) / n)
        if normalize and dct_type == 4:
            total *= np.sqrt(2 / n)
        out[k] = total
    return out


@pytest.mark.parametrize(
    ("dct_type", "normalize"),
    [(1, False), (2, False), (2, True), (3, False), (3, True), (4, False), (4, True)],
)
def test_mfcc_is_the_dct_as_an_explicit_cosine_sum(dct_type, normalize):
    mel = np.random.default_rng(6).normal(size=(12, 3)).astype(np.float32)
    out = np.asarray(ndd.mfcc(ndd.tensor(mel), n_mfcc=12, dct_type=dct_type, normalize=normalize))
    expected = np.stack([_dct(mel[:, t].astype(np.float64), dct_type, normalize) for t in range(3)], axis=1)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-5 * np.abs(expected).max())


def test_mfcc_lifter_scales_each_coefficient():
    mel = np.random.default_rng(7).normal(size=(10, 4)).astype(np.float32)
    plain = np.asarray(ndd.mfcc(ndd.tensor(mel), n_mfcc=6))
    liftered = np.asarray(ndd.mfcc(ndd.tensor(mel), n_mfcc=6, lifter=22.0))
    scales = 1 + 22.0 / 2 * np.sin(np.pi * (np.arange(6) + 1) / 22.0)
    np.testing.assert_allclose(liftered, plain * scales[:, None], rtol=1e-6, atol=1e-6)


def test_mfcc_keeps_at_most_the_axis_extent():
    assert ndd.mfcc(ndd.tensor(np.ones((8, 3), np.float32)), n_mfcc=30).shape == (8, 3)
    assert ndd.mfcc(ndd.tensor(np.ones((8, 3), np.float32)), axis=1, n_mfcc=2).shape == (8, 2)


def test_to_decibels_is_ten_log10_of_the_ratio_to_the_maximum():
    power = np.array([[1.0, 0.1], [0.01, 1e-30]], np.float32)
    out = np.asarray(ndd.to_decibels(ndd.tensor(power), cutoff_db=-80.0))
    np.testing.assert_allclose(out, [[0.0, -10.0], [-20.0, -80.0]], atol=1e-4)
    fixed = np.asarray(ndd.to_decibels(ndd.tensor(power), reference=0.1, multiplier=20.0))
    np.testing.assert_allclose(fixed[0], 20 * np.log10(power[0] / 0.1), atol=1e-4)


def test_to_decibels_takes_each_samples_own_maximum():
    batch = ndd.to_decibels(ndd.batch([np.array([1.0, 0.5], np.float32), np.array([4.0, 2.0], np.float32)]))
    for sample in batch:
        np.testing.assert_allclose(np.asarray(sample), [0.0, 10 * np.log10(0.5)], atol=1e-5)


def test_to_decibels_of_zeros_is_the_cutoff():
    out = np.asarray(ndd.to_decibels(ndd.tensor(np.zeros(3, np.float32)), cutoff_db=-60.0))
    np.testing.assert_allclose(out, -60.0, atol=1e-4)


@pytest.mark.parametrize("border", ["zero", "clamp", "reflect"])
def test_preemphasis_is_the_difference_with_the_scaled_previous_sample(border):
    signal = np.array([1.0, 3.0, -2.0, 0.5], np.float32)
    out = np.asarray(ndd.preemphasis_filter(ndd.tensor(signal), preemph_coeff=0.5, border=border))
    before = {"zero": 0.0, "clamp": 1.0, "reflect": 3.0}[border]
    np.testing.assert_allclose(out, [1.0 - 0.5 * before, 2.5, -3.5, 1.5])


def test_preemphasis_takes_a_coefficient_per_sample():
    signal = np.array([2.0, 4.0], np.float32)
    coeffs = ndd.batch([np.float32(0.5), np.float32(1.0)])
    out = ndd.preemphasis_filter(ndd.batch([signal, signal]), preemph_coeff=coeffs, border="zero")
    np.testing.assert_allclose(np.asarray(out.select(0)), [2.0, 3.0])
    np.testing.assert_allclose(np.asarray(out.select(1)), [2.0, 2.0])


def test_preemphasis_filters_each_channel_of_time_major_audio_on_its_own():
    # The reference filters such data as one interleaved signal.
    stereo = np.array([[1.0, 10.0], [2.0, 20.0], [4.0, 40.0]], np.float32)
    out = np.asarray(ndd.preemphasis_filter(ndd.tensor(stereo), preemph_coeff=1.0, border="zero"))
    np.testing.assert_allclose(out, [[1.0, 10.0], [1.0, 10.0], [2.0, 20.0]])
    by_layout = np.asarray(
        ndd.preemphasis_filter(ndd.tensor(stereo.T.copy(), layout="ct"), preemph_coeff=1.0, border="zero")
    )
    np.testing.assert_allclose(by_layout, out.T)


def test_preemphasis_of_empty_and_one_sample_signals():
    # The reference crashes on the first and reads past the signal on the second.
    assert ndd.preemphasis_filter(ndd.tensor(np.zeros(0, np.float32))).shape == (0,)
    one = np.asarray(ndd.preemphasis_filter(ndd.tensor(np.array([2.0], np.float32)), border="reflect"))
    np.testing.assert_allclose(one, [2.0 - 0.97 * 2.0], rtol=1e-6)


def test_preemphasis_rounds_halves_away_from_zero_and_saturates():
    signal = np.array([1, 3, -1, 200], np.int16)
    out = np.asarray(
        ndd.preemphasis_filter(ndd.tensor(signal), preemph_coeff=0.5, border="zero", dtype=ndd.int8)
    )
    np.testing.assert_array_equal(out, [1, 3, -3, 127])  # 1, 2.5, -2.5, 200.5


def _moving_power(signal, window):
    squares = signal.astype(np.float64) ** 2
    return np.convolve(squares, np.ones(window), mode="valid") / window


def test_nonsilent_region_spans_the_windows_above_the_threshold():
    signal = np.zeros(1000, np.int16)
    signal[300:500] = 1000
    begin, length = ndd.nonsilent_region(ndd.tensor(signal), window_length=50, cutoff_db=-40.0)
    power = _moving_power(signal, 50)
    loud = np.flatnonzero(power >= power.max() * 1e-4)
    assert (int(np.asarray(begin)), int(np.asarray(length))) == (loud[0], loud[-1] - loud[0] + 50)
    assert begin.dtype == ndd.int32 and begin.shape == ()


def test_nonsilent_region_of_silence_is_empty():
    # The reference calls a signal of zeros non-silent throughout (0 is not below 0 dB of 0).
    begin, length = ndd.nonsilent_region(
        ndd.tensor(np.zeros(500, np.float32)), window_length=100, reset_interval=-1
    )
    assert (int(np.asarray(begin)), int(np.asarray(length))) == (0, 0)


def test_nonsilent_region_batch_gives_a_scalar_per_sample():
    signals = [np.zeros(300, np.float32), np.zeros(400, np.float32)]
    signals[0][100:150] = 1.0
    signals[1][200:260] = 1.0
    begins, lengths = ndd.nonsilent_region(ndd.batch(signals), window_length=10, reset_interval=-1)
    assert [int(np.asarray(b)) for b in begins] == [91, 191]
    assert [int(np.asarray(n)) for n in lengths] == [68, 78]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"window_length": 0}, "'window_length' must be positive"),
        ({"window_length": 8, "reset_interval": 0}, "'reset_interval' must be -1 or a positive multiple"),
    ],
)
def test_nonsilent_region_refuses_what_the_reference_cannot_run(kwargs, message):
    # The reference returns nonsense for the first and never returns for the second.
    with pytest.raises(InvalidArgumentError, match=f"ndd.nonsilent_region: {message}"):
        ndd.nonsilent_region(ndd.tensor(np.ones(64, np.float32)), **kwargs)


def test_nonsilent_region_of_an_empty_signal_is_empty():
    # The reference gives (0, 0) with a reference_power and crashes without one.
    for kwargs in ({}, {"reference_power": 1.0}):
        begin, length = ndd.nonsilent_region(ndd.tensor(np.zeros(0, np.float32)), **kwargs)
        assert (int(np.asarray(begin)), int(np.asarray(length))) == (0, 0)
    loud = np.ones(100, np.float32)
    begins, lengths = ndd.nonsilent_region(ndd.batch([loud, np.zeros(0, np.float32)]), window_length=8)
    assert [int(np.asarray(b)) for b in begins] == [0, 0]
    assert [int(np.asarray(n)) for n in lengths] == [100, 0]


def test_the_spectral_operators_the_reference_runs_on_the_gpu_have_gpu_kernels():
    # tests/cuda/test_gpu_audio.py compares them with the CPU; power_spectrum is CPU-only,
    # as in the reference.
    gpu = (ndd.spectrogram, ndd.mel_filter_bank, ndd.mfcc, ndd.to_decibels, ndd.preemphasis_filter)
    for op in gpu + (ndd.nonsilent_region, ndd.audio_resample):
        assert op.__ndd_operator__.gpu_kernel is not None
    assert ndd.power_spectrum.__ndd_operator__.gpu_kernel is None


def test_nonsilent_region_with_a_cutoff_beyond_float_range():
    # 10 ** (1e30 / 10) overflowed Python's float power (OverflowError); as in the
    # reference, such a cutoff is infinite: nothing is loud enough (or, negative, all is).
    signal = ndd.tensor(np.sin(np.arange(4000) / 10).astype(np.float32))
    for cutoff, expected in [(1e30, [0, 0]), (-1e30, [0, 4000])]:
        begin, length = ndd.nonsilent_region(signal, cutoff_db=cutoff)
        assert [int(np.asarray(begin)), int(np.asarray(length))] == expected


def test_mfcc_of_an_empty_axis_is_empty_as_in_the_reference():
    # The DCT table divided by the axis's length (ZeroDivisionError).
    out = ndd.mfcc(ndd.tensor(np.ones((0, 7), np.float32)))
    assert np.asarray(out).shape == (0, 7) and np.asarray(out).dtype == np.float32


def test_mel_filter_bank_of_a_spectrogram_without_bins_is_zeros():
    # As the reference: every filter sums nothing (it was a numpy reshape error).
    spectra = ndd.batch([np.zeros((0, 10), np.float32), np.ones((33, 10), np.float32)], layout="ft")
    out = ndd.mel_filter_bank(spectra, nfilter=8, sample_rate=16000.0)
    np.testing.assert_array_equal(np.asarray(out.select(0)), np.zeros((8, 10), np.float32))
    assert out.select(1).shape == (8, 10)


def test_power_spectrum_refuses_an_nfft_whose_work_exceeds_memory():
    # nfft=10**9 filled 24 GB until the process was killed.
    from ndd._memory import physical_memory_bytes

    if physical_memory_bytes() is None:
        pytest.skip("the system does not say how much memory there is")
    with pytest.raises(InvalidArgumentError, match=r"ndd.power_spectrum: 'nfft' 1099511627776 would need"):
        ndd.power_spectrum(ndd.tensor(np.ones(32, np.float32)), nfft=2**40)


@pytest.mark.parametrize("nfft", [0, -1])
def test_spectrogram_refuses_an_nfft_below_the_window(nfft):
    # As the reference ("Window length can't be bigger than the FFT size"); it was taken
    # as the default.
    with pytest.raises(
        InvalidArgumentError,
        match=rf"ndd.spectrogram: 'nfft' must be at least 'window_length' \(64\), got {nfft}",
    ):
        ndd.spectrogram(ndd.tensor(np.ones(400, np.float32)), nfft=nfft, window_length=64, window_step=32)
