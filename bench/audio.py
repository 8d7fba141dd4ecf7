"""CPU audio operators one by one: ndd against the reference, in one run.

The data: a batch of 8 one-second signals at 16 kHz (a chirp with noise, deterministic) and one
ten-second signal; the same 8 at 44.1 kHz, mono and stereo, for resampling to 16 kHz; 16-bit WAV
files of the 16 kHz signals and of the 44.1 kHz stereo ones, and 16-bit FLAC files of the 16 kHz
signals and of eight ten-second ones, for decoding; plus what the spectral operators take instead of raw audio, computed once with
numpy so that both implementations get the same numbers: their spectrograms (512-point FFT, windows
of 400 samples every 160, "ft"), 80-filter mel spectrograms of those, and the mel spectrograms in dB.
Both implementations run in ``sync_cpu`` mode with ``set_num_threads(1)``.

How the cases are timed and the table printed: ``bench/case_timing.py``.

To time another operator, add a row to ``CASES``: its name, and a function of (ndd, data) returning the
call to time; ``data`` is what ``make_inputs`` returns.

    python bench/audio.py [--reference-python ~/dali-ref/bin/python] [--repeats 5] [--cases spectrogram,mfcc]
"""

import case_timing

RATE = 16000
CD_RATE = 44100
BATCH_SIZE = 8
LONG_SECONDS = 10
NFFT, WINDOW, STEP, NFILTER = 512, 400, 160, 80


def _chirp(seconds, seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    tone = np.sin(2 * np.pi * (100.0 + 3000.0 * t / seconds) * t) * 0.5
    # Half a second of quiet at each end, for nonsilent_region.
    fade = np.clip(np.minimum(t, t[-1] - t) * 4 - 1, 0, 1)
    return (tone * fade + rng.normal(0, 1e-3, t.size)).astype(np.float32)


def _spectrogram(signal):
    """Power spectrogram (bins x windows, Hann, reflect-padded and centred), in numpy."""
    import numpy as np

    padded = np.pad(signal, WINDOW // 2, mode="reflect")
    count = len(signal) // STEP + 1
    frames = np.lib.stride_tricks.sliding_window_view(padded, WINDOW)[::STEP][:count]
    hann = 0.5 * (1 - np.cos(2 * np.pi * (np.arange(WINDOW) + 0.5) / WINDOW))
    return np.ascontiguousarray((np.abs(np.fft.rfft(frames * hann, NFFT)) ** 2).T.astype(np.float32))


def _mel(spectrogram):
    import numpy as np

    rng = np.random.default_rng(0)
    filters = rng.uniform(0, 1e-3, (NFILTER, spectrogram.shape[0])).astype(np.float32)
    return filters @ spectrogram


def _wav(signal, rate):
    """A 16-bit PCM WAV file of ``signal`` (float32 in -1..1, [T] or [T, C]), as uint8 bytes;
    written with the standard library, so that both workers make the same files."""
    import io
    import wave

    import numpy as np

    frames = signal.reshape(len(signal), -1)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as file:
        file.setnchannels(frames.shape[1])
        file.setsampwidth(2)
        file.setframerate(rate)
        file.writeframes(np.round(frames * 32767).astype("<i2").tobytes())
    return np.frombuffer(buffer.getvalue(), np.uint8)


def _flac(signal, rate):
    """A 16-bit FLAC file of ``signal``, as uint8 bytes (libsndfile's encoder, through soundfile:
    both workers' venvs have the same soundfile wheel, so the same files)."""
    import io

    import numpy as np
    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, signal, rate, format="FLAC", subtype="PCM_16")
    return np.frombuffer(buffer.getvalue(), np.uint8)


def make_inputs():
    """The numpy inputs every case draws on (the same in both workers)."""
    import numpy as np

    signals = [_chirp(1, seed) for seed in range(BATCH_SIZE)]
    # CD-rate audio, mono and stereo, to resample to 16 kHz.
    cd = [
        np.interp(np.arange(CD_RATE) / CD_RATE, np.arange(RATE) / RATE, s).astype(np.float32) for s in signals
    ]
    stereo = [np.stack([s, s[::-1]], axis=1) for s in cd]
    long_signal = _chirp(LONG_SECONDS, 100)
    spectrograms = [_spectrogram(s) for s in signals]
    long_spectrogram = _spectrogram(long_signal)
    mels = [_mel(s) for s in spectrograms]
    long_mel = _mel(long_spectrogram)
    to_db = lambda m: (10 * np.log10(np.maximum(m, 1e-10))).astype(np.float32)  # noqa: E731
    return {
        "wavs": [_wav(s, RATE) for s in signals],
        "flacs": [_flac(s, RATE) for s in signals],
        "long_flacs": [_flac(_chirp(LONG_SECONDS, seed), RATE) for seed in range(BATCH_SIZE)],
        "cd_wavs": [_wav(s, CD_RATE) for s in stereo],
        "cd": cd,
        "cd_stereo": stereo,
        "signals": signals,
        "long_signal": long_signal,
        "spectrograms": spectrograms,
        "long_spectrogram": long_spectrogram,
        "mels": mels,
        "long_mel": long_mel,
        "mels_db": [to_db(m) for m in mels],
        "long_mel_db": to_db(long_mel),
    }


def _batch(ndd, arrays, layout=None):
    return ndd.batch(arrays, layout=layout)


# The timed calls: name -> function of (ndd, data) returning a call of no arguments. "8x1s" runs on the
# batch of 8 one-second signals (or what is derived from them), "10s" on the single long signal.
CASES = {
    "decoders.audio 8x1s": lambda ndd, d: lambda: ndd.decoders.audio(_batch(ndd, d["wavs"])),
    "decoders.audio 8x1s FLAC": lambda ndd, d: lambda: ndd.decoders.audio(_batch(ndd, d["flacs"])),
    "decoders.audio 8x10s FLAC int16": lambda ndd, d: (
        lambda: ndd.decoders.audio(_batch(ndd, d["long_flacs"]), dtype=ndd.int16)
    ),
    "decoders.audio 8x1s 44.1k stereo->16k mono": lambda ndd, d: (
        lambda: ndd.decoders.audio(_batch(ndd, d["cd_wavs"]), sample_rate=RATE, downmix=True)
    ),
    "audio_resample 8x1s 44.1k->16k": lambda ndd, d: (
        lambda: ndd.audio_resample(_batch(ndd, d["cd"]), in_rate=CD_RATE, out_rate=RATE)
    ),
    "audio_resample 8x1s stereo 44.1k->16k": lambda ndd, d: (
        lambda: ndd.audio_resample(_batch(ndd, d["cd_stereo"]), in_rate=CD_RATE, out_rate=RATE)
    ),
    "preemphasis_filter 8x1s": lambda ndd, d: lambda: ndd.preemphasis_filter(_batch(ndd, d["signals"])),
    "preemphasis_filter 10s": lambda ndd, d: lambda: ndd.preemphasis_filter(ndd.tensor(d["long_signal"])),
    "power_spectrum 8x1s": lambda ndd, d: (
        lambda: ndd.power_spectrum(_batch(ndd, [s.reshape(100, RATE // 100) for s in d["signals"]]), nfft=256)
    ),
    "spectrogram 8x1s": lambda ndd, d: (
        lambda: ndd.spectrogram(_batch(ndd, d["signals"]), nfft=NFFT, window_length=WINDOW, window_step=STEP)
    ),
    "spectrogram 10s": lambda ndd, d: (
        lambda: ndd.spectrogram(
            ndd.tensor(d["long_signal"]), nfft=NFFT, window_length=WINDOW, window_step=STEP
        )
    ),
    "mel_filter_bank 8x1s": lambda ndd, d: (
        lambda: ndd.mel_filter_bank(_batch(ndd, d["spectrograms"], "ft"), sample_rate=RATE, nfilter=NFILTER)
    ),
    "mel_filter_bank 10s": lambda ndd, d: (
        lambda: ndd.mel_filter_bank(
            ndd.tensor(d["long_spectrogram"], layout="ft"), sample_rate=RATE, nfilter=NFILTER
        )
    ),
    "to_decibels 8x1s": lambda ndd, d: lambda: ndd.to_decibels(_batch(ndd, d["mels"]), cutoff_db=-80.0),
    "to_decibels 10s": lambda ndd, d: lambda: ndd.to_decibels(ndd.tensor(d["long_mel"]), cutoff_db=-80.0),
    "mfcc 8x1s": lambda ndd, d: lambda: ndd.mfcc(_batch(ndd, d["mels_db"]), n_mfcc=40, normalize=True),
    "mfcc 10s": lambda ndd, d: lambda: ndd.mfcc(ndd.tensor(d["long_mel_db"]), n_mfcc=40, normalize=True),
    "nonsilent_region 8x1s": lambda ndd, d: lambda: ndd.nonsilent_region(_batch(ndd, d["signals"])),
    "nonsilent_region 10s": lambda ndd, d: lambda: ndd.nonsilent_region(ndd.tensor(d["long_signal"])),
}


if __name__ == "__main__":
    case_timing.main(
        __file__,
        __doc__,
        CASES,
        make_inputs,
        f"8x1s: a batch of {BATCH_SIZE} one-second {RATE // 1000} kHz signals (or their spectra), "
        "10s: one ten-second signal.",
    )
