"""GPU audio operators (ndd/_ops/gpu_audio.py, kernels/audio.cu): preemphasis_filter,
to_decibels, mel_filter_bank and mfcc, compared with their CPU twins on the kernels built
for the CPU and on a real GPU (``any_gpu``). Exact where the kernels add in the CPU's
order (preemphasis_filter, frequency-major mel_filter_bank); to float32 rounding where
the CPU's matrix product (BLAS) adds in another order, or the logarithms may differ in
the last bit (to_decibels)."""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")


import ndd  # noqa: E402


def _signals(lengths, seed, channels=None, dtype=np.float32):
    rng = np.random.default_rng(seed)
    out = []
    for n in lengths:
        shape = (n,) if channels is None else (n, channels)
        values = rng.normal(0, 0.3, shape)
        if np.dtype(dtype).kind in "iu":
            info = np.iinfo(dtype)
            values = np.clip(values * info.max, info.min, info.max)
        out.append(values.astype(dtype))
    return out


def _same(gpu, cpu, rtol=0.0, atol=0.0):
    gpu_results = gpu if isinstance(gpu, tuple) else (gpu,)
    cpu_results = cpu if isinstance(cpu, tuple) else (cpu,)
    for g_out, c_out in zip(gpu_results, cpu_results, strict=True):
        assert g_out.device.device_type == "gpu"
        assert g_out.layout == c_out.layout
        g_samples = list(g_out.cpu()) if isinstance(g_out, ndd.Batch) else [g_out.cpu()]
        c_samples = list(c_out) if isinstance(c_out, ndd.Batch) else [c_out]
        for g, c in zip(g_samples, c_samples, strict=True):
            g, c = np.asarray(g), np.asarray(c)
            assert g.dtype == c.dtype and g.shape == c.shape
            if rtol or atol:
                np.testing.assert_allclose(g, c, rtol=rtol, atol=atol)
            else:
                np.testing.assert_array_equal(g, c)


def _both(fn, data, **kwargs):
    return fn(data.gpu(), **kwargs), fn(data, **kwargs)


@pytest.mark.parametrize("border", ["zero", "clamp", "reflect"])
@pytest.mark.parametrize(
    "dtype, out_dtype",
    [
        (np.float32, ndd.float32),
        (np.int16, ndd.float32),
        (np.float64, ndd.float64),
        (np.int16, ndd.int16),
        (np.uint8, ndd.int32),
        (np.float32, ndd.uint8),
    ],
)
def test_preemphasis_filter_matches_the_cpu(border, dtype, out_dtype, any_gpu):
    signals = ndd.batch(_signals([300, 1, 0, 77], 1, dtype=dtype))
    coeffs = ndd.batch([np.float32(c) for c in (0.97, 0.5, 0.9, -0.3)])
    _same(*_both(ndd.preemphasis_filter, signals, border=border, dtype=out_dtype, preemph_coeff=coeffs))


@pytest.mark.parametrize("layout, channels", [("tc", 2), ("", 3), ("ct", 2)])
def test_preemphasis_filter_filters_each_channel_along_time(layout, channels, any_gpu):
    samples = _signals([50, 9], 2, channels=channels)
    if layout == "ct":
        samples = [np.ascontiguousarray(s.T) for s in samples]
    data = ndd.batch(samples, layout=layout or None)
    _same(*_both(ndd.preemphasis_filter, data, border="reflect"))
    tensor = ndd.tensor(samples[0], layout=layout or None)
    _same(*_both(ndd.preemphasis_filter, tensor, preemph_coeff=0.5))


def test_preemphasis_filter_of_a_scalar_and_of_one_sample(any_gpu):
    _same(*_both(ndd.preemphasis_filter, ndd.tensor(np.float32(0.25)), border="reflect"))
    _same(*_both(ndd.preemphasis_filter, ndd.tensor(np.array([3.0], np.float32)), border="reflect"))


def _spectra(shapes, seed):
    rng = np.random.default_rng(seed)
    return [(rng.random(shape, dtype=np.float32) ** 4 * 100).astype(np.float32) for shape in shapes]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"reference": 50.0},
        {"reference": 1.0, "multiplier": 20.0},
        {"cutoff_db": -40.0},
        {"cutoff_db": -1e6},
    ],
)
def test_to_decibels_matches_the_cpu(kwargs, any_gpu):
    samples = _spectra([(20, 31), (0, 4), (5, 1)], 3)
    samples[2][1, 0] = np.nan
    samples[2][3, 0] = 0.0
    _same(*_both(ndd.to_decibels, ndd.batch(samples), **kwargs), rtol=1e-6, atol=1e-5)


def test_to_decibels_of_silence_and_of_nan_is_the_cutoff(any_gpu):
    samples = [np.zeros((4, 3), np.float32), np.full((2, 2), np.nan, np.float32)]
    gpu, cpu = _both(ndd.to_decibels, ndd.batch(samples), cutoff_db=-80.0)
    _same(gpu, cpu)
    np.testing.assert_array_equal(np.asarray(gpu.cpu().select(0)), np.full((4, 3), -80.0, np.float32))


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("formula", ["slaney", "htk"])
def test_mel_filter_bank_of_frequency_major_spectrograms_equals_the_cpu(normalize, formula, any_gpu):
    samples = ndd.batch(_spectra([(257, 40), (257, 1), (129, 7), (0, 5)], 4), layout="ft")
    kwargs = dict(nfilter=40, sample_rate=16000.0, normalize=normalize, mel_formula=formula)
    _same(*_both(ndd.mel_filter_bank, samples, **kwargs))
    kwargs.update(freq_low=300.0, freq_high=7000.0)
    _same(*_both(ndd.mel_filter_bank, samples, **kwargs))


def test_mel_filter_bank_of_a_spectrum_and_of_channels(any_gpu):
    _same(*_both(ndd.mel_filter_bank, ndd.tensor(_spectra([(65,)], 5)[0]), nfilter=8, sample_rate=8000.0))
    channels = ndd.batch(_spectra([(2, 129, 11)], 6), layout="cft")
    _same(*_both(ndd.mel_filter_bank, channels, nfilter=20, sample_rate=16000.0))


def test_mel_filter_bank_of_time_major_spectrograms_matches_the_cpu(any_gpu):
    # The CPU's matrix product adds in BLAS's order.
    samples = ndd.batch(_spectra([(30, 257), (3, 257)], 7), layout="tf")
    _same(*_both(ndd.mel_filter_bank, samples, nfilter=64, sample_rate=16000.0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dct_type, normalize", [(1, False), (2, False), (2, True), (3, True), (4, False)])
@pytest.mark.parametrize("lifter", [0.0, 22.0])
def test_mfcc_matches_the_cpu(dct_type, normalize, lifter, any_gpu):
    mels = [10 * np.log10(s + 1e-3).astype(np.float32) for s in _spectra([(40, 25), (40, 1), (13, 6)], 8)]
    kwargs = dict(dct_type=dct_type, normalize=normalize, lifter=lifter, n_mfcc=20)
    _same(*_both(ndd.mfcc, ndd.batch(mels), **kwargs), rtol=1e-5, atol=1e-4)


def test_mfcc_along_another_axis_and_more_coefficients_than_values(any_gpu):
    mels = ndd.batch(_spectra([(7, 12), (7, 3)], 9))
    _same(*_both(ndd.mfcc, mels, axis=1, n_mfcc=30), rtol=1e-5, atol=1e-5)


def test_the_asr_front_end_runs_on_the_gpu(any_gpu):
    # decoders.audio's output moved to the GPU, then the reference's GPU feature pipeline.
    def features(audio):
        emphasized = ndd.preemphasis_filter(audio)
        spectra = ndd.spectrogram(emphasized, nfft=256, window_length=200, window_step=80)
        return ndd.to_decibels(ndd.mel_filter_bank(spectra, sample_rate=16000.0, nfilter=40))

    audio = ndd.batch(_signals([4000, 3000], 10))
    _same(features(audio.gpu()), features(audio), rtol=1e-5, atol=1e-4)


def test_a_host_input_with_device_gpu_is_refused(fake):
    with pytest.raises(NotImplementedError, match=r"ndd\.to_decibels on the GPU: an input in host memory"):
        ndd.to_decibels(ndd.tensor(np.ones(4, np.float32)), device="gpu")


def _close_spectra(gpu, cpu):
    """float64 sums in two orders, each rounded to float32: equal but for the last bit,
    and the noise of values far below the largest."""
    assert gpu.device.device_type == "gpu" and gpu.layout == cpu.layout
    g_samples = list(gpu.cpu()) if isinstance(gpu, ndd.Batch) else [gpu.cpu()]
    c_samples = list(cpu) if isinstance(cpu, ndd.Batch) else [cpu]
    for g, c in zip(g_samples, c_samples, strict=True):
        g, c = np.asarray(g), np.asarray(c)
        assert g.dtype == c.dtype == np.float32 and g.shape == c.shape
        np.testing.assert_allclose(g, c, rtol=2e-7, atol=1e-12 * max(float(np.abs(c).max(initial=0)), 1e-30))


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"layout": "tf", "power": 1},
        {"nfft": 512, "window_length": 400, "window_step": 160},
        {"reflect_padding": False, "window_length": 64, "window_step": 16},
        {"center_windows": False, "window_length": 100, "window_step": 30, "nfft": 128},
        {"window_fn": list(np.hamming(50)), "window_length": 50, "window_step": 20, "nfft": 60},
        # Mixed-radix transforms: of 24 complex values (radices 4, 2, 3); of 400 real
        # values (200 complex: 4, 2, 5, 5), the usual 25 ms window at 16 kHz; of odd
        # sizes (75: 3, 5, 5; 1001: 7, 11, 13, the radices without a kernel of their own);
        # of 286 (143 complex: 11, 13).
        {"window_length": 48, "window_step": 10, "layout": "tf"},
        {"window_length": 400, "window_step": 160},
        {"window_length": 75, "window_step": 31, "power": 1},
        {"window_length": 900, "window_step": 500, "nfft": 1001, "layout": "tf"},
        {"window_length": 250, "window_step": 90, "nfft": 286},
        # Sums of each bin (nfft of a prime factor above 13: 34 = 2 * 17) and a radix-2
        # transform of a long frame.
        {"window_length": 30, "window_step": 9, "nfft": 34},
        {"window_length": 300, "window_step": 77, "nfft": 2048, "power": 1},
        # The smallest transforms of half size (2 and 4 complex values).
        {"window_length": 4, "window_step": 1},
        {"window_length": 3, "window_step": 2, "nfft": 8, "layout": "tf"},
    ],
)
def test_spectrogram_matches_the_cpu(kwargs, any_gpu):
    signals = ndd.batch(_signals([3000, 700, 1], 11)[:2] + [np.zeros(260, np.float32)])
    if kwargs.get("center_windows") is False:
        signals = ndd.batch(_signals([3000, 90], 11))
    _close_spectra(*_both(ndd.spectrogram, signals, **kwargs))


def test_spectrogram_of_short_signals_and_tiny_transforms(any_gpu):
    # A signal shorter than half a window is mirrored several times over.
    for signal in (np.array([0.5], np.float32), _signals([3], 12)[0], _signals([33], 13)[0]):
        tensor = ndd.tensor(signal)
        _close_spectra(*_both(ndd.spectrogram, tensor, window_length=16, window_step=4))
    _close_spectra(*_both(ndd.spectrogram, ndd.tensor(_signals([50], 14)[0]), window_length=2, window_step=1))


def test_spectrogram_of_long_windows_uses_the_scratch_buffer(any_gpu):
    # 8,192 float64 values (64 KiB) are more than a block's shared memory.
    signal = ndd.tensor(_signals([20000], 15)[0])
    _close_spectra(*_both(ndd.spectrogram, signal, window_length=8192, window_step=4096, nfft=8192))


def test_spectrogram_mixed_radix_transform_of_long_windows_uses_the_scratch_buffer(any_gpu):
    # 6,075 = 3^5 * 5^2 complex values: 97 KiB of frame, past a block's shared memory.
    signal = ndd.tensor(_signals([15000], 18)[0])
    _close_spectra(*_both(ndd.spectrogram, signal, window_length=6075, window_step=3000, power=1))


@pytest.mark.parametrize(
    ("nfft", "passes"),
    [(400, [4, 2, 5, 5]), (60, [2, 3, 5]), (1001, [7, 11, 13]), (34, None), (2, None), (1, None)],
)
def test_mixed_radix_plans(nfft, passes):
    from ndd._ops.gpu_audio import _mixed_plan

    plan = _mixed_plan(nfft)
    if passes is None:
        assert plan is None
        return
    assert plan[0] == len(passes) and list(plan[1 : 1 + len(passes)]) == passes
    order = plan[1 + len(passes) :]
    size = nfft // 2 if nfft % 2 == 0 else nfft
    # Every sample goes to one position; the first pass's neighbours are its radix's
    # samples size / radix apart.
    assert sorted(order) == list(range(size))
    assert list(order[: passes[0]]) == [q * (size // passes[0]) for q in range(passes[0])]


def test_spectrogram_kernel_by_nfft(fake_with_kernels):
    signal = ndd.tensor(np.zeros(1000, np.float32)).gpu()

    def launched(nfft):
        fake_with_kernels.launches.clear()
        ndd.spectrogram(signal, window_length=30, window_step=10, nfft=nfft).evaluate()
        (launch,) = fake_with_kernels.launches
        return launch.function, launch.shared_bytes, launch.block[0]

    # Frames of float64 values in shared memory: nfft for the real transforms (half of
    # them real, half imaginary), twice the size of an odd one, window_length for sums.
    assert launched(64) == ("spectrogram_fft", 64 * 8, 32)
    assert launched(400) == ("spectrogram_mixed", 400 * 8, 100)
    assert launched(45) == ("spectrogram_mixed", 90 * 8, 32)
    assert launched(34) == ("spectrogram_dft", 30 * 8, 128)


def test_spectrogram_of_column_and_row_signals(any_gpu):
    column = ndd.tensor(_signals([500], 16)[0].reshape(500, 1))
    row = ndd.tensor(_signals([500], 17)[0].reshape(1, 500))
    for signal in (column, row):
        _close_spectra(*_both(ndd.spectrogram, signal, window_length=64, window_step=32))


def _bursts(length, dtype, seed, noise=1e-4):
    """Quiet (noise of that deviation), a loud burst, quiet again: a signal whose
    non-silent region is inside."""
    rng = np.random.default_rng(seed)
    signal = rng.normal(0, noise, length)
    signal[length // 4 : length // 2] += rng.normal(0, 0.5, length // 2 - length // 4)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        # Around the middle of the type's range; 64-bit types swing by 2**30 at most.
        middle = (int(info.max) + int(info.min)) // 2
        amplitude = min(int(info.max) - middle, 2**30)
        offsets = np.clip(np.round(signal * amplitude), -amplitude, amplitude).astype(np.int64)
        return np.array([min(max(middle + int(v), int(info.min)), int(info.max)) for v in offsets], dtype)
    return signal.astype(dtype)


def _same_regions(gpu, cpu):
    for g_out, c_out in zip(gpu, cpu, strict=True):
        assert g_out.device.device_type == "gpu"
        np.testing.assert_array_equal(np.stack(list(g_out.cpu())), np.stack(list(c_out)))


@pytest.mark.parametrize(
    "dtype", [np.float32, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
)
def test_nonsilent_region_matches_the_cpu(dtype, any_gpu):
    signals = ndd.batch([_bursts(n, dtype, n) for n in (5000, 300, 1, 0, 2048)])
    _same_regions(*_both(ndd.nonsilent_region, signals, window_length=256))
    _same_regions(*_both(ndd.nonsilent_region, signals, window_length=128, cutoff_db=-20.0))


@pytest.mark.parametrize("reset_interval", [-1, 4000, 8000])
def test_nonsilent_region_renews_float_sums_where_the_cpu_does(reset_interval, any_gpu):
    # After a loud passage a long running float32 sum keeps a residue over the zeros that
    # follow: the threshold is low enough to see it, so the renewals decide where the
    # region ends.
    signals = ndd.batch([_bursts(20000, np.float32, seed, noise=0.0) for seed in (1, 2)])
    kwargs = dict(window_length=50, reset_interval=reset_interval, cutoff_db=-120.0)
    _same_regions(*_both(ndd.nonsilent_region, signals, **kwargs))


def test_nonsilent_region_with_a_reference_power_and_silence(any_gpu):
    signals = ndd.batch(
        [_bursts(3000, np.float32, 3), np.zeros(500, np.float32), np.full(9, np.nan, np.float32)]
    )
    _same_regions(*_both(ndd.nonsilent_region, signals, window_length=64))
    _same_regions(
        *_both(ndd.nonsilent_region, signals, window_length=64, reference_power=0.01, cutoff_db=-10.0)
    )
    tensor = ndd.tensor(_bursts(1000, np.int16, 4))
    gpu, cpu = _both(ndd.nonsilent_region, tensor, window_length=32)
    for g, c in zip(gpu, cpu, strict=True):
        assert int(np.asarray(g.cpu())) == int(np.asarray(c))


@pytest.mark.parametrize("quality", [0.0, 50.0, 100.0])
@pytest.mark.parametrize("channels", [None, 2, 3])
def test_audio_resample_matches_the_cpu(quality, channels, any_gpu):
    signals = ndd.batch(_signals([3000, 1, 0, 513], 20, channels=channels))
    kwargs = dict(in_rate=44100.0, out_rate=16000.0, quality=quality)
    _same(*_both(ndd.audio_resample, signals, **kwargs))
    _same(*_both(ndd.audio_resample, signals, scale=2.5, quality=quality))


def test_audio_resample_with_per_sample_rates_and_lengths(any_gpu):
    signals = ndd.batch(_signals([2000, 1000, 700], 21))
    out_rate = ndd.batch([np.float32(r) for r in (8000.0, 22050.0, 16000.0)])
    _same(*_both(ndd.audio_resample, signals, in_rate=16000.0, out_rate=out_rate))
    lengths = ndd.batch([np.int32(n) for n in (300, 4000, 700)])
    _same(*_both(ndd.audio_resample, signals, out_length=lengths))


@pytest.mark.parametrize(
    "dtype, out_dtype",
    [
        (np.int16, None),
        (np.int16, ndd.float32),
        (np.uint8, ndd.int16),
        (np.float32, ndd.uint16),
        (np.int32, ndd.uint8),
        (np.uint16, None),
    ],
)
def test_audio_resample_converts_types_as_the_cpu(dtype, out_dtype, any_gpu):
    signals = ndd.batch(_signals([1500, 400], 22, channels=2, dtype=dtype))
    _same(*_both(ndd.audio_resample, signals, in_rate=48000.0, out_rate=16000.0, dtype=out_dtype))
