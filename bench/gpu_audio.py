"""GPU audio operators one by one, and an ASR front end: ndd against the reference's
dynamic mode, in one run.

The data: a batch of 64 ten-second signals at 16 kHz (a chirp with noise each, made with
numpy in both workers), moved to the GPU once; the spectral operators take what the
previous step of the front end gives (spectrograms: 512-point FFT, windows of 400
samples every 160, ``ft``; also a 400-point FFT; 80-filter mel spectrograms; their
decibels). The front end is ``preemphasis_filter -> spectrogram -> mel_filter_bank ->
to_decibels -> normalize`` (per band). Each call runs in ``sync_full`` mode (it waits
for the GPU), timed by the wall clock; see ``bench/case_timing.py`` for the table.

    python bench/gpu_audio.py [--reference-python ~/dali-ref/bin/python] [--repeats 5]
    python bench/gpu_audio.py --smoke   # ndd alone on the FakeDriver, small data: no GPU needed
"""

import sys

import case_timing

RATE = 16000
NFFT, WINDOW, STEP, NFILTER = 512, 400, 160, 80


def make_inputs():
    """The host signals and what the spectral operators take, as numpy arrays (the same in
    both workers); small ones for ``--smoke``."""
    import numpy as np

    count, seconds = (2, 0.25) if "--smoke" in sys.argv else (64, 10)
    rng = np.random.default_rng(0)
    t = np.arange(int(seconds * RATE)) / RATE
    signals = [
        (
            np.sin(2 * np.pi * (100.0 + 300.0 * k / count + 3000.0 * t / seconds) * t) * 0.5
            + rng.normal(0, 1e-3, t.size)
        ).astype(np.float32)
        for k in range(count)
    ]
    return {"signals": signals}


def _front(ndd, d):
    """The GPU batches of each stage of the front end, made once per worker."""
    if "gpu" not in d:
        signals = ndd.batch(d["signals"]).gpu()
        spectra = ndd.spectrogram(signals, nfft=NFFT, window_length=WINDOW, window_step=STEP)
        mels = ndd.mel_filter_bank(spectra, sample_rate=RATE, nfilter=NFILTER)
        d["gpu"] = {"signals": signals, "spectra": spectra, "mels": mels, "db": ndd.to_decibels(mels)}
        for value in d["gpu"].values():
            value.evaluate()
    return d["gpu"]


def _asr_front_end(ndd, signals):
    emphasized = ndd.preemphasis_filter(signals)
    spectra = ndd.spectrogram(emphasized, nfft=NFFT, window_length=WINDOW, window_step=STEP)
    mels = ndd.to_decibels(ndd.mel_filter_bank(spectra, sample_rate=RATE, nfilter=NFILTER))
    return ndd.normalize(mels, axes=[1])


CASES = {
    "preemphasis_filter": lambda ndd, d: lambda: ndd.preemphasis_filter(_front(ndd, d)["signals"]),
    "spectrogram": lambda ndd, d: (
        lambda: ndd.spectrogram(_front(ndd, d)["signals"], nfft=NFFT, window_length=WINDOW, window_step=STEP)
    ),
    # A 400-point transform (nfft = window_length, torchaudio's default): not a power of two.
    "spectrogram nfft=400": lambda ndd, d: (
        lambda: ndd.spectrogram(
            _front(ndd, d)["signals"], nfft=WINDOW, window_length=WINDOW, window_step=STEP
        )
    ),
    "mel_filter_bank": lambda ndd, d: (
        lambda: ndd.mel_filter_bank(_front(ndd, d)["spectra"], sample_rate=RATE, nfilter=NFILTER)
    ),
    "to_decibels": lambda ndd, d: lambda: ndd.to_decibels(_front(ndd, d)["mels"]),
    "mfcc": lambda ndd, d: lambda: ndd.mfcc(_front(ndd, d)["db"], n_mfcc=40),
    "nonsilent_region": lambda ndd, d: lambda: ndd.nonsilent_region(_front(ndd, d)["signals"]),
    "audio_resample 16k->8k": lambda ndd, d: (
        lambda: ndd.audio_resample(_front(ndd, d)["signals"], in_rate=RATE, out_rate=RATE // 2)
    ),
    "ASR front end": lambda ndd, d: lambda: _asr_front_end(ndd, _front(ndd, d)["signals"]),
}


if __name__ == "__main__":
    case_timing.main(
        __file__,
        __doc__,
        CASES,
        make_inputs,
        "a batch of 64 ten-second 16 kHz signals on the GPU (or their spectra).",
        min_seconds=0.5,
        gpu=True,
    )
