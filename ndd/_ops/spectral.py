"""Signal processing of audio and other 1-D signals: pre-emphasis, spectra and
spectrograms, mel filter banks, cepstral coefficients, decibels and silence detection.

The arithmetic follows the reference's, so that results agree within float32
rounding:

- ``spectrogram`` cuts windows of ``window_length`` samples every ``window_step``
  samples, multiplies them by ``window_fn`` (by default the Hann window
  ``0.5 * (1 - cos(2 * pi * (t + 0.5) / window_length))``), pads each with zeros to
  ``nfft`` and keeps the ``nfft // 2 + 1`` bins of its real FFT (numpy's, in
  float64, rounded to float32). With ``center_windows`` window ``k`` is centred on
  sample ``k * window_step`` (``len // window_step + 1`` windows) and the signal is
  extended by mirroring (``reflect_padding``, numpy's ``reflect``) or with zeros;
  without it only whole windows inside the signal are taken.
- ``mel_filter_bank`` applies triangular filters spaced evenly on the mel scale
  (Slaney's or HTK's formula) between ``freq_low`` and ``freq_high``, their weights
  computed in the reference's precision (the same float32 values); the FFT size is
  ``2 * (bins - 1)``.
- ``mfcc`` is a matrix product with the DCT of ``dct_type`` (1 to 4, as defined
  on Wikipedia; ``normalize`` makes types 2 to 4 orthonormal), keeping
  ``n_mfcc`` coefficients (at most the input's extent), then liftering:
  coefficient ``i`` is scaled by ``1 + lifter / 2 * sin(pi * (i + 1) / lifter)``
  when ``lifter`` is not 0.
- ``to_decibels`` gives ``multiplier * log10(max(10 ** (cutoff_db / multiplier),
  x / reference))``; ``reference=0`` stands for each sample's maximum (NaN
  skipped).
- ``nonsilent_region`` computes the mean square of every window of
  ``window_length`` samples as the reference does (exact sums for 8 and 16-bit
  integers; otherwise float32 running sums, summed afresh every
  ``reset_interval`` windows for float32 data and never for 32 and 64-bit
  integers), finds the first and last windows whose power is at least
  ``reference_power * 10 ** (cutoff_db / 10)`` and returns the first sample of
  the first and the length up to the end of the last (two int32 scalars;
  ``(0, 0)`` when every window is silent).

Where the reference crashes, hangs or gives a nonsensical result we do the sensible
thing, noted in each operator's description: FFT sizes of 1 and 2, empty signals,
negative axes of ``power_spectrum``, a signal of zeros in ``nonsilent_region``,
multi-channel data in ``preemphasis_filter``.
"""

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .._cpu.filter_bank import apply_band_weights
from .._cpu.moving_power import moving_mean_square
from .._memory import exceeds_half_of_memory
from .._prepare.args import InvalidArgumentError
from .._types import bfloat16, float16, float32, int8, int16, int32, int64, uint8, uint16, uint32, uint64
from .._types import bool as bool_type
from .conversions import cast_array
from .gpu_audio import (
    GpuDct,
    GpuMelFilterBank,
    GpuNonsilentRegion,
    GpuPreemphasis,
    GpuSpectrogram,
    GpuToDecibels,
)
from .schema import Arg, Input, Operator

_F32 = np.float32
# float32 is the reference's only floating type for these operators, besides float64
# data for preemphasis_filter.
_NOT_AUDIO_TYPES = (float16, bfloat16, bool_type)


def _only_float32(qualname, x):
    if x._dtype is not float32:
        raise InvalidArgumentError(f"{qualname}: the input must be float32, got {x._dtype}")


def _layout(x):
    return x._layout or ""


# -- preemphasis_filter -------------------------------------------------------------

_PREEMPHASIS = "ndd.preemphasis_filter"


def _preemphasis_prepare(ins, args):
    x = ins[0]
    if x._dtype in _NOT_AUDIO_TYPES:
        raise InvalidArgumentError(f"{_PREEMPHASIS}: the input must be of a numeric type, not {x._dtype}")
    if args["dtype"] in _NOT_AUDIO_TYPES:
        raise InvalidArgumentError(
            f"{_PREEMPHASIS}: 'dtype' must be an integer type, float32 or float64, got {args['dtype']}"
        )
    time_axis = _layout(x).find("t")
    args["_time_axis"] = time_axis if time_axis >= 0 else None


def _preemphasis_types(ins, args):
    return [(args["dtype"], ins[0]._layout)]


def _preemphasis_shape(shapes, args):
    return [tuple(shapes[0])]


def _time_axis(shape, named):
    """The axis a signal runs along: the layout's ``t``, else the only axis longer than
    1, else the first (time-major data such as ``decoders.audio``'s)."""
    if named is not None:
        return named
    long_axes = [i for i, extent in enumerate(shape) if extent > 1]
    return long_axes[0] if len(long_axes) == 1 else 0


def _preemphasis_kernel(arrays, args):
    x = arrays[0]
    out_type = args["dtype"].numpy
    # float64 data is filtered in float64, the rest in float32, with a float32 coefficient.
    work = np.float64 if x.dtype == np.float64 else _F32
    signal = x.astype(work, copy=False).reshape(x.shape or (1,))
    if signal.size == 0:
        return np.empty(x.shape, out_type)
    axis = _time_axis(signal.shape, args["_time_axis"])
    signal = np.moveaxis(signal, axis, 0)
    coeff = work(_F32(args["preemph_coeff"]))
    out = np.empty(signal.shape, work)
    np.multiply(signal[:-1], coeff, out=out[1:])
    np.subtract(signal[1:], out[1:], out=out[1:])
    border = args["border"]
    if border == "zero":
        out[0] = signal[0]
    else:
        # A signal of one sample has no second one to mirror: it is its own border.
        edge = signal[1] if border == "reflect" and len(signal) > 1 else signal[0]
        out[0] = signal[0] - coeff * edge
    out = np.moveaxis(out, 0, axis).reshape(x.shape)
    # Integers: rounded half away from zero and saturated, as the reference converts.
    return out if out.dtype == out_type else cast_array(out, np.dtype(out_type))


PREEMPHASIS_FILTER = Operator(
    "preemphasis_filter",
    inputs=[Input("input", doc="Signals, any numeric type but float16 and bool.")],
    args=[
        Arg(
            "border",
            "str",
            "clamp",
            choices=("zero", "clamp", "reflect"),
            doc="The sample before the first: ``zero`` (0), ``clamp`` (the first sample) or ``reflect`` "
            "(the second sample).",
        ),
        Arg(
            "dtype",
            "dtype",
            float32,
            doc="Output type: float32, float64 or an integer type (rounded to nearest and saturated).",
            type_doc="DType",
        ),
        Arg(
            "preemph_coeff",
            "float",
            0.97,
            per_sample=True,
            doc="The coefficient ``coeff`` of ``y[t] = x[t] - coeff * x[t - 1]`` (float32).",
        ),
    ],
    prepare_args=_preemphasis_prepare,
    infer_types=_preemphasis_types,
    infer_shape=_preemphasis_shape,
    kernel=_preemphasis_kernel,
    doc="Pre-emphasis filter ``y[t] = x[t] - coeff * x[t - 1]``, the sample before the first given by "
    "``border``.\n\n"
    "Computed in float32 (float64 for float64 data), then converted to ``dtype``. Data of more than "
    "one dimension is filtered along its time axis: the layout's ``t``, else the only axis longer "
    "than 1, else the first (as ``decoders.audio`` gives ``[time, channels]``), each channel on its "
    "own; the reference filters such data as one flat signal, mixing the channels of "
    "interleaved audio. An empty signal gives an empty result (the reference crashes), and a "
    "signal of one sample with ``border='reflect'`` uses that sample as its border (the reference "
    "reads past the signal).",
)


# -- power_spectrum ------------------------------------------------------------------

_POWER_SPECTRUM = "ndd.power_spectrum"


def _check_power(qualname, power):
    if power not in (1, 2):
        raise InvalidArgumentError(f"{qualname}: 'power' must be 1 (magnitude) or 2 (power), got {power}")


def _power_prepare(ins, args):
    x = ins[0]
    _only_float32(_POWER_SPECTRUM, x)
    if x.ndim < 1:
        raise InvalidArgumentError(
            f"{_POWER_SPECTRUM}: the input must have at least 1 dimension, got a scalar"
        )
    axis = args["axis"]
    if not -x.ndim <= axis < x.ndim:
        raise InvalidArgumentError(
            f"{_POWER_SPECTRUM}: 'axis' must be in [{-x.ndim}, {x.ndim}) for {x.ndim}-D input, got {axis}"
        )
    args["_axis"] = axis % x.ndim
    _check_power(_POWER_SPECTRUM, args["power"])


def _fft_size(args, length):
    nfft = args["nfft"]
    return nfft if nfft is not None and nfft > 0 else length


def _power_shape(shapes, args):
    shape = list(shapes[0])
    axis = args["_axis"]
    nfft = _fft_size(args, shape[axis])
    if nfft < 1:
        raise InvalidArgumentError(
            f"{_POWER_SPECTRUM}: the transformed axis {axis} is empty; give 'nfft' to transform zeros"
        )
    # The FFT works on float64 signals of nfft and complex128 spectra: refuse a size whose
    # work would fill more than half of the machine's memory (a mistyped nfft would
    # have the process killed).
    work = math.prod(shape) // max(shape[axis], 1) * nfft * 32
    if exceeds_half_of_memory(work):
        raise InvalidArgumentError(
            f"{_POWER_SPECTRUM}: 'nfft' {nfft} would need {work / 2**30:.0f} GiB to transform these "
            "signals, more than half of this machine's memory"
        )
    shape[axis] = nfft // 2 + 1
    return [tuple(shape)]


def _magnitudes(spectrum, power):
    """``re**2 + im**2`` (power 2) or its square root (power 1) of complex bins, in their
    precision."""
    out = np.square(spectrum.real)
    out += np.square(spectrum.imag)
    return np.sqrt(out, out=out) if power == 1 else out


def _power_spectra(x, args, axis):
    nfft = _fft_size(args, x.shape[axis])
    # numpy's float64 FFT is several times faster than its float32 one (and more exact).
    # The signal is cut, or converted into a buffer of zeros of nfft, here: a third
    # faster than rfft's own cutting and padding.
    length = x.shape[axis]
    if nfft <= length:
        signal = x[(slice(None),) * axis + (slice(0, nfft),)].astype(np.float64)
    else:
        signal = np.zeros((*x.shape[:axis], nfft, *x.shape[axis + 1 :]), np.float64)
        signal[(slice(None),) * axis + (slice(0, length),)] = x
    spectrum = np.fft.rfft(signal, axis=axis)
    return _magnitudes(spectrum, args["power"]).astype(_F32)


def _power_kernel(arrays, args):
    return _power_spectra(arrays[0], args, args["_axis"])


def _power_dense(arrays, args):
    return _power_spectra(arrays[0], args, args["_axis"] + 1)


POWER_SPECTRUM = Operator(
    "power_spectrum",
    inputs=[Input("input", doc="float32 signals of at least one dimension.")],
    args=[
        Arg(
            "axis",
            "int",
            -1,
            doc="The axis transformed to the frequency domain (negative counts from the end).",
        ),
        Arg(
            "nfft",
            "int",
            None,
            doc="FFT size: the signal is cut or padded with zeros to it; the axis's extent when omitted "
            "(or not positive). The output has ``nfft // 2 + 1`` bins.",
        ),
        Arg("power", "int", 2, doc="2 for the power ``re**2 + im**2``, 1 for the magnitude."),
    ],
    prepare_args=_power_prepare,
    infer_shape=_power_shape,
    kernel=_power_kernel,
    dense_kernel=_power_dense,
    doc="Power (or magnitude) spectrum of signals along one axis: the non-negative frequencies of "
    "the real FFT.\n\n"
    "FFT sizes of 1 and 2 work (the reference fails to plan them), an empty axis is refused "
    "unless ``nfft`` is given (the reference crashes), and a negative ``axis`` counts from the end "
    "(the reference takes the last axis for every negative one).",
)


# -- spectrogram -----------------------------------------------------------------------

_SPECTROGRAM = "ndd.spectrogram"


def _spectrogram_prepare(ins, args):
    x = ins[0]
    _only_float32(_SPECTROGRAM, x)
    length, step = args["window_length"], args["window_step"]
    if length < 1:
        raise InvalidArgumentError(f"{_SPECTROGRAM}: 'window_length' must be positive, got {length}")
    if step < 1:
        raise InvalidArgumentError(f"{_SPECTROGRAM}: 'window_step' must be positive, got {step}")
    # As the reference: an explicit nfft of 0 or less is not "the default" here.
    nfft = length if args["nfft"] is None else args["nfft"]
    if nfft < length:
        raise InvalidArgumentError(
            f"{_SPECTROGRAM}: 'nfft' must be at least 'window_length' ({length}), got {nfft}"
        )
    # One window's transform works on float64 frames of nfft and complex128 spectra.
    if exceeds_half_of_memory(nfft * 32):
        raise InvalidArgumentError(
            f"{_SPECTROGRAM}: 'nfft' {nfft} would need {nfft * 32 / 2**30:.0f} GiB for one window's "
            "transform, more than half of this machine's memory"
        )
    args["_nfft"] = nfft
    _check_power(_SPECTROGRAM, args["power"])
    window = args["window_fn"]
    if window is not None and len(window) != length:
        raise InvalidArgumentError(
            f"{_SPECTROGRAM}: 'window_fn' must have 'window_length' ({length}) values, got {len(window)}"
        )
    args["_window"] = _hann_window(length) if window is None else _given_window(window)


@lru_cache(maxsize=64)
def _hann_window(length):
    """The reference's Hann window: sampled at the middle of each sample's interval."""
    phase = 2 * np.pi / length * (np.arange(length) + 0.5)
    return (0.5 * (1.0 - np.cos(phase))).astype(_F32)


@lru_cache(maxsize=64)
def _given_window(values):
    return np.asarray(values, _F32)


def _signal_length(shape):
    """The length of a 1-D signal, or of data whose other dimensions all have extent 1;
    None for anything else."""
    long_axes = [extent for extent in shape if extent != 1]
    if len(shape) == 0 or len(long_axes) > 1:
        return None
    return long_axes[0] if long_axes else 1


def _num_windows(n, args):
    if args["center_windows"]:
        return n // args["window_step"] + 1
    # The reference divides rounding toward zero: a signal short of ``window_length`` by
    # less than ``window_step`` gets one window, padded with zeros.
    shortfall = args["window_length"] - n
    if shortfall > 0:
        return 1 - shortfall // args["window_step"]
    return (n - args["window_length"]) // args["window_step"] + 1


def _spectrogram_shape(shapes, args):
    n = _signal_length(shapes[0])
    if n is None:
        raise InvalidArgumentError(
            f"{_SPECTROGRAM}: the input must be one signal (1-D, or one dimension longer than 1), "
            f"got shape {tuple(shapes[0])}"
        )
    if n == 0:
        raise InvalidArgumentError(f"{_SPECTROGRAM}: the signal is empty")
    if not args["center_windows"] and _num_windows(n, args) < 1:
        raise InvalidArgumentError(
            f"{_SPECTROGRAM}: the signal ({n} samples) is shorter than 'window_length' "
            f"({args['window_length']}) by 'window_step' ({args['window_step']}) or more, "
            "and 'center_windows' is False"
        )
    bins, windows = args["_nfft"] // 2 + 1, _num_windows(n, args)
    return [(bins, windows) if args["layout"] == "ft" else (windows, bins)]


def _spectrogram_types(ins, args):
    return [(float32, args["layout"])]


def _mirror(index, n):
    """Indices reflected into [0, n) about the first and last samples (numpy's ``reflect``)."""
    if n == 1:
        return np.zeros_like(index)
    period = 2 * (n - 1)
    index = np.abs(index) % period
    return np.where(index >= n, period - index, index)


def _padded_signals(signals, args, windows):
    """``signals`` (rows) extended so that window ``k`` starts at ``k * window_step``."""
    n = signals.shape[-1]
    length, step = args["window_length"], args["window_step"]
    if not args["center_windows"]:
        if n < length:
            return np.pad(signals, [(0, 0)] * (signals.ndim - 1) + [(0, length - n)])
        return signals
    left = length // 2
    right = max(0, (windows - 1) * step - left + length - n)
    if args["reflect_padding"]:
        before = signals[..., _mirror(np.arange(-left, 0), n)]
        after = signals[..., _mirror(np.arange(n, n + right), n)]
        return np.concatenate([before, signals, after], axis=-1)
    return np.pad(signals, [(0, 0)] * (signals.ndim - 1) + [(left, right)])


# Windows transformed at a time: their buffers stay in the cache. Fewer for long
# transforms, so that a chunk's frames take at most _CHUNK_VALUES values.
_FRAMES_PER_CHUNK = 128
_CHUNK_VALUES = 1 << 22


def _spectrograms(signals, args):
    """float32 spectrograms of equally long float32 signals (rows of ``signals``, 2-D),
    one per row, in the ``layout`` asked for."""
    count, n = signals.shape
    windows = _num_windows(n, args)
    padded = _padded_signals(signals, args, windows)
    length, step, nfft = args["window_length"], args["window_step"], args["_nfft"]
    frames = np.lib.stride_tricks.sliding_window_view(padded, length, axis=-1)
    frames = frames[:, : (windows - 1) * step + 1 : step, :]
    bins = nfft // 2 + 1
    time_major = args["layout"] == "tf"
    out = np.empty((count, windows, bins) if time_major else (count, bins, windows), _F32)
    # The windowed frames (float32 products, as the reference's) padded with zeros to nfft,
    # in float64: numpy's float64 FFT is several times faster than its float32 one.
    per_chunk = max(1, min(windows, _FRAMES_PER_CHUNK, _CHUNK_VALUES // nfft))
    buffer = np.zeros((per_chunk, nfft), np.float64)
    for row in range(count):
        for first in range(0, windows, per_chunk):
            last = min(first + per_chunk, windows)
            chunk = buffer[: last - first]
            np.multiply(frames[row, first:last], args["_window"], out=chunk[:, :length], casting="unsafe")
            power = _magnitudes(np.fft.rfft(chunk, axis=-1), args["power"])
            if time_major:
                out[row, first:last] = power
            else:
                out[row, :, first:last] = power.T
    return out


def _spectrogram_kernel(arrays, args):
    return _spectrograms(arrays[0].reshape(1, -1), args)[0]


def _spectrogram_dense(arrays, args):
    data = arrays[0]
    return _spectrograms(data.reshape(len(data), -1), args)


SPECTROGRAM = Operator(
    "spectrogram",
    inputs=[
        Input(
            "input",
            doc="One float32 signal per sample: shape ``(n,)``, ``(n, 1)`` or ``(1, n)``.",
        )
    ],
    args=[
        Arg(
            "center_windows",
            "bool",
            True,
            doc="Centre window ``k`` on sample ``k * window_step``, padding the signal; otherwise take only "
            "whole windows inside it.",
        ),
        Arg(
            "layout",
            "layout",
            "ft",
            choices=("ft", "tf"),
            doc='Output layout: ``"ft"`` (bins x windows) or ``"tf"`` (windows x bins).',
            type_doc="str",
        ),
        Arg(
            "nfft",
            "int",
            None,
            doc="FFT size, at least ``window_length``; ``window_length`` when omitted. The output has "
            "``nfft // 2 + 1`` bins.",
        ),
        Arg("power", "int", 2, doc="2 for the power ``re**2 + im**2`` of each bin, 1 for its magnitude."),
        Arg(
            "reflect_padding",
            "bool",
            True,
            doc="Pad by mirroring the signal at its ends (else with zeros); only with ``center_windows``.",
        ),
        Arg(
            "window_fn",
            "float_list",
            None,
            doc="The window's ``window_length`` samples; a Hann window when omitted.",
            type_doc="list of float",
        ),
        Arg("window_length", "int", 512, doc="Window size in samples."),
        Arg("window_step", "int", 256, doc="Step between windows in samples."),
    ],
    prepare_args=_spectrogram_prepare,
    infer_types=_spectrogram_types,
    infer_shape=_spectrogram_shape,
    kernel=_spectrogram_kernel,
    dense_kernel=_spectrogram_dense,
    doc="Spectrogram (short-time Fourier transform) of one-channel float32 signals.\n\n"
    "Windows of 1 or 2 samples (FFT sizes of 1 and 2) work; the reference fails to plan their FFT. "
    "Without ``center_windows`` a signal shorter than ``window_length`` by less than "
    "``window_step`` makes one window, padded with zeros at its end (as in the reference); a "
    "shorter one is refused.",
)


# -- mel_filter_bank --------------------------------------------------------------------

_MEL = "ndd.mel_filter_bank"
# Slaney's scale: linear below 1 kHz, logarithmic above; the constants in float32 as the
# reference has them.
_SLANEY_HZ_PER_MEL = _F32(200.0 / 3.0)
_SLANEY_LOG_HZ = _F32(1000.0)
_SLANEY_LOG_MEL = _SLANEY_LOG_HZ / _SLANEY_HZ_PER_MEL
_SLANEY_LOG_STEP = _F32(0.068751777)  # log(6.4) / 27


def _exp(x):
    """float32 exp, correctly rounded (as C's expf is, nearly always)."""
    return _F32(math.exp(float(x)))


def _log(x):
    return _F32(math.log(float(x)))


def _hz_to_mel(hz, htk):
    """The reference's conversions, operation by operation in float32."""
    hz = _F32(hz)
    if htk:
        return _F32(1127.0) * _log(_F32(1.0) + hz / _F32(700.0))
    if hz >= _SLANEY_LOG_HZ:
        return _SLANEY_LOG_MEL + _log(hz / _SLANEY_LOG_HZ) / _SLANEY_LOG_STEP
    return hz / _SLANEY_HZ_PER_MEL


def _mel_to_hz(mel, htk):
    mel = _F32(mel)
    if htk:
        return _F32(700.0) * (_exp(mel / _F32(1127.0)) - _F32(1.0))
    if mel >= _SLANEY_LOG_MEL:
        return _SLANEY_LOG_HZ * _exp(_SLANEY_LOG_STEP * (mel - _SLANEY_LOG_MEL))
    return mel * _SLANEY_HZ_PER_MEL


class MelBank(NamedTuple):
    """Triangular filters over the bins of a spectrum: as a float32 matrix (filters x
    bins), and bin by bin for ``apply_band_weights`` (the bins with a weight, the filter
    below each with its falling weight and the filter above with its rising one; -1 or
    ``nfilter`` where there is none)."""

    matrix: np.ndarray
    bins: np.ndarray
    lower: np.ndarray
    lower_weight: np.ndarray
    upper: np.ndarray
    upper_weight: np.ndarray


@lru_cache(maxsize=32)
def mel_filters(bins, nfilter, sample_rate, freq_low, freq_high, htk, normalize):
    """The MelBank of triangular mel filters for spectra of ``bins`` bins of an FFT of
    ``2 * (bins - 1)`` samples.

    Computed as the reference does: the mel points spaced evenly in float64 from the
    float32 mels of ``freq_low`` and ``freq_high``, each converted to Hz in float32; the
    falling slope ``(f1 - f) / (f1 - f0)`` of each bin in float64, rounded to float32,
    and the rising one its float32 complement. Bins outside ``[freq_low, freq_high]``
    (and above the last filter) get no weight; fewer than 2 bins give zero filters.
    """
    weights = np.zeros((nfilter, bins), _F32)
    nfft = 2 * (bins - 1)
    if nfft <= 0:
        none, no_weights = np.zeros(0, np.int32), np.zeros(0, _F32)
        return MelBank(weights, np.zeros(0, np.int64), none, no_weights, none, no_weights)
    mel_low, mel_high = float(_hz_to_mel(freq_low, htk)), float(_hz_to_mel(freq_high, htk))
    mel_step = (mel_high - mel_low) / (nfilter + 1)
    hz_step = sample_rate / nfft
    first_bin = max(0, math.ceil(freq_low * (1.0 / hz_step)))
    last_bin = min(bins - 1, math.floor(freq_high * (1.0 / hz_step)))
    # The mel points, accumulated in float64; the last is freq_high's own.
    mel_points = [mel_low]
    for _ in range(nfilter):
        mel_points.append(mel_points[-1] + mel_step)
    mel_points.append(mel_high)
    edges = np.array([float(_mel_to_hz(m, htk)) for m in mel_points])
    norms = np.ones(nfilter, _F32)
    if normalize:
        # Each filter's area is 1: 2 / (its width in Hz).
        tops = np.array([float(_mel_to_hz(m + mel_step, htk)) for m in mel_points[1:-1]])
        norms = (2.0 / (tops - edges[:-2])).astype(_F32)
    bin_index = np.arange(first_bin, last_bin + 1)
    freqs = bin_index * hz_step
    interval = np.searchsorted(edges[1:], freqs, side="right")
    inside = interval <= nfilter
    bin_index, freqs, interval = bin_index[inside], freqs[inside], interval[inside]
    upper, lower = edges[1:][interval], edges[:-1][interval]
    falling = ((upper - freqs) * (1.0 / (upper - lower))).astype(_F32)
    rising = _F32(1.0) - falling
    lower, upper = (interval - 1).astype(np.int32), interval.astype(np.int32)
    padded_norms = np.concatenate([[_F32(0)], norms, [_F32(0)]])
    lower_weight = falling * padded_norms[lower + 1]
    upper_weight = rising * padded_norms[upper + 1]
    down, up = lower >= 0, upper < nfilter
    weights[lower[down], bin_index[down]] = lower_weight[down]
    weights[upper[up], bin_index[up]] = upper_weight[up]
    return MelBank(weights, bin_index.astype(np.int64), lower, lower_weight, upper, upper_weight)


def _mel_prepare(ins, args):
    x = ins[0]
    _only_float32(_MEL, x)
    layout = _layout(x)
    if layout:
        axis = layout.find("f")
        if axis < 0:
            raise InvalidArgumentError(f"{_MEL}: the input layout must have an 'f' axis, got {layout!r}")
    elif x.ndim < 1:
        raise InvalidArgumentError(f"{_MEL}: the input must have a frequency axis, got a scalar")
    else:
        axis = max(0, x.ndim - 2)
    args["_axis"] = axis
    if args["nfilter"] < 1:
        raise InvalidArgumentError(f"{_MEL}: 'nfilter' must be positive, got {args['nfilter']}")
    rate = args["sample_rate"]
    if rate <= 0:
        raise InvalidArgumentError(f"{_MEL}: 'sample_rate' must be positive, got {rate}")
    low = args["freq_low"]
    if low < 0:
        raise InvalidArgumentError(f"{_MEL}: 'freq_low' must not be negative, got {low}")
    high = args["freq_high"] if args["freq_high"] > 0 else float(_F32(rate) / _F32(2))
    # As in the reference, up to the sampling rate (bins stop at the Nyquist frequency).
    if not low < high <= rate:
        raise InvalidArgumentError(
            f"{_MEL}: 'freq_high' must be above 'freq_low' ({low}) and at most 'sample_rate' ({rate}), got {high}"
        )
    args["_freq_high"] = high
    if args["mel_formula"] not in ("slaney", "htk"):
        raise InvalidArgumentError(
            f"{_MEL}: 'mel_formula' must be 'slaney' or 'htk', got {args['mel_formula']!r}"
        )


def _mel_shape(shapes, args):
    shape = list(shapes[0])
    shape[args["_axis"]] = args["nfilter"]
    return [tuple(shape)]


def _apply_along(matrix, data, axis):
    """``matrix @ data`` along ``axis`` of ``data`` (float32)."""
    if data.ndim == 1:
        return matrix @ data
    if axis == data.ndim - 2:
        return np.matmul(matrix, data)
    if axis == data.ndim - 1:
        return np.matmul(data, matrix.T)
    moved = np.moveaxis(data, axis, -2)
    return np.ascontiguousarray(np.moveaxis(np.matmul(matrix, moved), -2, axis))


def _mel_bank(args, bins):
    return mel_filters(
        bins,
        args["nfilter"],
        float(_F32(args["sample_rate"])),
        float(_F32(args["freq_low"])),
        float(_F32(args["_freq_high"])),
        args["mel_formula"] == "htk",
        args["normalize"],
    )


def _apply_mel(x, args, axis):
    if x.shape[axis] == 0:
        # No frequency bins: every filter sums nothing, as the reference gives.
        shape = list(x.shape)
        shape[axis] = args["nfilter"]
        return np.zeros(shape, _F32)
    bank = _mel_bank(args, x.shape[axis])
    if axis == x.ndim - 1 and x.ndim > 1:
        # Time-major spectra: one matrix product.
        return np.matmul(x, bank.matrix.T)
    # Frequency-major: bin by bin, each bin feeding its two filters.
    rows = np.ascontiguousarray(np.moveaxis(x, axis, 0).reshape(x.shape[axis], -1))
    out = np.empty((bank.matrix.shape[0], rows.shape[1]), _F32)
    apply_band_weights(rows, out, bank.bins, bank.lower, bank.lower_weight, bank.upper, bank.upper_weight)
    moved_shape = (out.shape[0],) + tuple(np.delete(x.shape, axis))
    return np.ascontiguousarray(np.moveaxis(out.reshape(moved_shape), 0, axis))


def _mel_kernel(arrays, args):
    return _apply_mel(arrays[0], args, args["_axis"])


def _mel_dense(arrays, args):
    return _apply_mel(arrays[0], args, args["_axis"] + 1)


MEL_FILTER_BANK = Operator(
    "mel_filter_bank",
    inputs=[
        Input(
            "input",
            doc="float32 spectrograms; the frequency axis is the layout's ``f``, else the second to last "
            "(the only one of 1-D data).",
        )
    ],
    args=[
        Arg("freq_high", "float", 0.0, doc="Highest frequency in Hz; ``sample_rate / 2`` when not positive."),
        Arg("freq_low", "float", 0.0, doc="Lowest frequency in Hz."),
        Arg(
            "mel_formula",
            "str",
            "slaney",
            doc="``slaney`` (linear below 1 kHz, logarithmic above, as librosa) or ``htk`` "
            "(``2595 * log10(1 + f / 700)``).",
        ),
        Arg("nfilter", "int", 128, doc="Number of mel filters (output extent of the frequency axis)."),
        Arg(
            "normalize",
            "bool",
            True,
            doc="Scale each filter to unit area (else its peak is 1).",
        ),
        Arg("sample_rate", "float", 44100.0, doc="Sampling rate of the signal in Hz."),
    ],
    prepare_args=_mel_prepare,
    infer_shape=_mel_shape,
    kernel=_mel_kernel,
    dense_kernel=_mel_dense,
    doc="Mel spectrogram: a bank of triangular filters spaced evenly on the mel scale applied along "
    "the frequency axis of spectrograms.\n\n"
    "As in the reference, ``freq_high`` may lie above the Nyquist frequency (up to ``sample_rate``): "
    "the filters then extend past the last bin.",
)


# -- mfcc ---------------------------------------------------------------------------------

_MFCC = "ndd.mfcc"


@lru_cache(maxsize=32)
def dct_matrix(length, count, dct_type, normalize):
    """The float32 matrix (count x length) of the DCT of ``dct_type`` (Wikipedia's
    definitions), orthonormal with ``normalize`` (types 2 to 4)."""
    k = np.arange(count)[:, None].astype(np.float64)
    n = np.arange(length)[None, :].astype(np.float64)
    if dct_type == 1:
        table = np.cos(np.pi / (length - 1) * k * n)
        table[:, 0] = 0.5
        table[:, -1] = np.where(k[:, 0] % 2 == 0, 0.5, -0.5)
    elif dct_type == 2:
        table = np.cos(np.pi / length * (n + 0.5) * k)
        if normalize:
            table *= np.sqrt(2.0 / length)
            table[0] = 1.0 / np.sqrt(length)
    elif dct_type == 3:
        table = np.cos(np.pi / length * n * (k + 0.5))
        table[:, 0] = 0.5
        if normalize:
            table[:, 1:] *= np.sqrt(2.0 / length)
            table[:, 0] = 1.0 / np.sqrt(length)
    else:
        table = np.cos(np.pi / length * (n + 0.5) * (k + 0.5))
        if normalize:
            table *= np.sqrt(2.0 / length)
    return table.astype(_F32)


@lru_cache(maxsize=32)
def _lifter_scales(count, lifter):
    i = np.arange(count, dtype=np.float64)
    return (1.0 + lifter / 2.0 * np.sin(np.pi * (i + 1.0) / lifter)).astype(_F32)


def _mfcc_prepare(ins, args):
    x = ins[0]
    _only_float32(_MFCC, x)
    if x.ndim < 2:
        raise InvalidArgumentError(f"{_MFCC}: the input must have at least 2 dimensions, got {x.ndim}")
    axis = args["axis"]
    if not 0 <= axis < x.ndim:
        raise InvalidArgumentError(f"{_MFCC}: 'axis' must be in [0, {x.ndim}), got {axis}")
    if args["n_mfcc"] < 1:
        raise InvalidArgumentError(f"{_MFCC}: 'n_mfcc' must be positive, got {args['n_mfcc']}")
    dct_type = args["dct_type"]
    if dct_type not in (1, 2, 3, 4):
        raise InvalidArgumentError(f"{_MFCC}: 'dct_type' must be 1, 2, 3 or 4, got {dct_type}")
    if dct_type == 1 and args["normalize"]:
        raise InvalidArgumentError(f"{_MFCC}: 'normalize' is not supported with 'dct_type' 1")


def _mfcc_shape(shapes, args):
    shape = list(shapes[0])
    axis = args["axis"]
    if args["dct_type"] == 1 and shape[axis] < 2:
        raise InvalidArgumentError(
            f"{_MFCC}: 'dct_type' 1 needs at least 2 values along axis {axis}, got {shape[axis]}"
        )
    shape[axis] = min(args["n_mfcc"], shape[axis])
    return [tuple(shape)]


def _mfcc_apply(x, args, axis):
    length = x.shape[axis]
    if length == 0:
        # Nothing to transform: no coefficients (the DCT table divided by the length).
        return np.zeros(x.shape, _F32)
    count = min(args["n_mfcc"], length)
    out = _apply_along(dct_matrix(length, count, args["dct_type"], args["normalize"]), x, axis)
    if args["lifter"] != 0:
        scales = _lifter_scales(count, float(_F32(args["lifter"])))
        out *= scales.reshape((count,) + (1,) * (x.ndim - 1 - axis))
    return out


def _mfcc_kernel(arrays, args):
    return _mfcc_apply(arrays[0], args, args["axis"])


def _mfcc_dense(arrays, args):
    return _mfcc_apply(arrays[0], args, args["axis"] + 1)


MFCC = Operator(
    "mfcc",
    inputs=[Input("input", doc="float32 mel spectrograms of at least 2 dimensions.")],
    args=[
        Arg("axis", "int", 0, doc="The axis transformed (not negative): by default the outermost."),
        Arg("dct_type", "int", 2, doc="DCT type: 1, 2, 3 or 4 (Wikipedia's definitions)."),
        Arg(
            "lifter",
            "float",
            0.0,
            doc="Liftering coefficient ``L``: when not 0, coefficient ``i`` is scaled by "
            "``1 + L / 2 * sin(pi * (i + 1) / L)``.",
        ),
        Arg("n_mfcc", "int", 20, doc="Number of coefficients kept (at most the axis's extent)."),
        Arg("normalize", "bool", False, doc="Use the orthonormal DCT (not with ``dct_type`` 1)."),
    ],
    prepare_args=_mfcc_prepare,
    infer_shape=_mfcc_shape,
    kernel=_mfcc_kernel,
    dense_kernel=_mfcc_dense,
    doc="Mel-frequency cepstral coefficients: the DCT of mel spectrograms along ``axis``, optionally "
    "liftered.",
)


# -- to_decibels ---------------------------------------------------------------------------

_DECIBELS = "ndd.to_decibels"
_F32_SMALLEST = np.nextafter(_F32(0), _F32(1))


def _decibels_prepare(ins, args):
    _only_float32(_DECIBELS, ins[0])


def _decibel_constants(args):
    """float32 ``multiplier / log2(10)`` and the smallest ratio, from the arguments."""
    multiplier, cutoff = np.float64(_F32(args["multiplier"])), np.float64(_F32(args["cutoff_db"]))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        min_ratio = _F32(np.power(10.0, np.float64(_F32(cutoff / multiplier))))
    # A ratio that underflows float32 is the smallest one, as in the reference: a zero
    # input gives multiplier * log10(1.4e-45), not minus infinity.
    min_ratio = max(min_ratio, _F32_SMALLEST)
    return _F32(multiplier / np.log2(10.0)), min_ratio


def _to_decibels(x, reference, factor, min_ratio):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inverse = _F32(1.0) if reference == 1.0 else _F32(1.0 / np.float64(reference))
        # fmax: a NaN ratio (0 / 0) gives the cutoff, as the reference's max does.
        ratio = np.fmax(min_ratio, x * inverse)
        return np.asarray(factor * np.log2(ratio), _F32)


def _decibels_kernel(arrays, args):
    x = arrays[0]
    factor, min_ratio = _decibel_constants(args)
    reference = _F32(args["reference"])
    if reference == 0:
        reference = np.fmax.reduce(x, axis=None) if x.size else _F32(1.0)
    return _to_decibels(x, reference, factor, min_ratio)


TO_DECIBELS = Operator(
    "to_decibels",
    inputs=[Input("input", doc="float32 magnitudes or powers, any shape.")],
    args=[
        Arg(
            "cutoff_db",
            "float",
            -200.0,
            doc="Lowest output in dB: ratios below ``10 ** (cutoff_db / multiplier)`` saturate.",
        ),
        Arg("multiplier", "float", 10.0, doc="Factor of the logarithm: 10 for powers, 20 for magnitudes."),
        Arg(
            "reference",
            "float",
            0.0,
            doc="Reference magnitude (0 dB); each sample's maximum (NaN skipped) when 0.",
        ),
    ],
    prepare_args=_decibels_prepare,
    kernel=_decibels_kernel,
    doc="Convert magnitudes to decibels: ``multiplier * log10(max(min_ratio, x / reference))`` with "
    "``min_ratio = 10 ** (cutoff_db / multiplier)``.\n\n"
    "An all-zero sample (reference 0) gives ``cutoff_db`` everywhere, as in the reference. Where "
    "``min_ratio`` underflows float32 (``cutoff_db / multiplier`` below about -45), the smallest "
    "float32 (1.4e-45) takes its place, as in the reference.",
)


# -- nonsilent_region -----------------------------------------------------------------------

_NONSILENT = "ndd.nonsilent_region"
_NONSILENT_TYPES = (float32, int8, uint8, int16, uint16, int32, uint32, int64, uint64)


def _nonsilent_prepare(ins, args):
    x = ins[0]
    if x._dtype not in _NONSILENT_TYPES:
        raise InvalidArgumentError(f"{_NONSILENT}: the input must be float32 or integers, got {x._dtype}")
    if x.ndim != 1:
        raise InvalidArgumentError(f"{_NONSILENT}: the input must be 1-D, got {x.ndim}-D data")
    window = args["window_length"]
    if window < 1:
        raise InvalidArgumentError(f"{_NONSILENT}: 'window_length' must be positive, got {window}")
    reset = args["reset_interval"]
    # Only float32 and wide integers are summed with running float sums that need renewing.
    args["_reset"] = reset if x._dtype is float32 else -1
    if x._dtype is float32 and reset != -1 and (reset < 1 or reset % window):
        raise InvalidArgumentError(
            f"{_NONSILENT}: 'reset_interval' must be -1 or a positive multiple of 'window_length' ({window}), "
            f"got {reset}"
        )
    reference_given = NONSILENT_REGION.given(args, "reference_power")
    if reference_given and args["reference_power"] <= 0:
        raise InvalidArgumentError(
            f"{_NONSILENT}: 'reference_power' must be positive, got {args['reference_power']}"
        )
    args["_reference_max"] = not reference_given


def _nonsilent_types(ins, args):
    return [(int32, ""), (int32, "")]


def _nonsilent_shape(shapes, args):
    return [(), ()]


def _nonsilent_kernel(arrays, args):
    signal = np.ascontiguousarray(arrays[0])
    if len(signal) == 0:
        # As the reference gives with a reference_power (without one it crashes).
        return np.array(0, np.int32), np.array(0, np.int32)
    window = min(args["window_length"], len(signal))
    power = moving_mean_square(signal, window, args["_reset"])
    if args["_reference_max"]:
        reference = power.max()
        if reference <= 0:
            # Silence throughout; the reference calls it all non-silent (0 dB below 0).
            return np.array(0, np.int32), np.array(0, np.int32)
    else:
        reference = _F32(args["reference_power"])
    # (numpy's power: a cutoff beyond float range is infinite, where Python's raised.)
    with np.errstate(over="ignore"):
        threshold = _F32(reference * _F32(np.power(10.0, args["cutoff_db"] / 10.0)))
    loud = np.flatnonzero(power >= threshold)
    if len(loud) == 0:
        return np.array(0, np.int32), np.array(0, np.int32)
    begin, last = int(loud[0]), int(loud[-1])
    return np.array(begin, np.int32), np.array(last - begin + window, np.int32)


NONSILENT_REGION = Operator(
    "nonsilent_region",
    inputs=[Input("input", doc="1-D signals: float32 or integers.")],
    args=[
        Arg(
            "cutoff_db",
            "float",
            -60.0,
            doc="Power in dB relative to ``reference_power`` below which a window is silent.",
        ),
        Arg(
            "reference_power",
            "float",
            0.0,
            doc="Power of 0 dB (positive); the largest short-term power of the signal when omitted.",
        ),
        Arg(
            "reset_interval",
            "int",
            8192,
            doc="For float32 data: the running float32 sum of squares is summed afresh every "
            "``reset_interval`` windows (a multiple of ``window_length``; -1: never). Integer data "
            "ignores it.",
        ),
        Arg(
            "window_length",
            "int",
            2048,
            doc="Samples per window of the short-term power (at most the signal's length is used).",
        ),
    ],
    prepare_args=_nonsilent_prepare,
    infer_types=_nonsilent_types,
    infer_shape=_nonsilent_shape,
    kernel=_nonsilent_kernel,
    doc="The begin and length (two int32 scalars) of the non-silent part of 1-D signals: from the "
    "first to the last window of ``window_length`` samples whose mean square lies at most "
    "``-cutoff_db`` dB below ``reference_power``.\n\n"
    "Returns ``(0, 0)`` when every window is silent, for an empty signal, and for a signal of zeros "
    "(the reference calls it non-silent throughout). A ``window_length`` below 1 and a "
    "``reset_interval`` of 0 are refused (the reference gives nonsense or never returns). Data "
    "wider than 16 bits is summed as the reference sums it, so that the same windows are silent: "
    "a long running float32 sum drifts, and a window after a loud passage may stay above a low "
    "threshold until the sum is renewed, at window ``reset_interval - window_length + 1`` and "
    "then every ``reset_interval`` windows.",
)


# The GPU repeats the CPU's arithmetic with the CPU's tables (gpu_audio.py).
PREEMPHASIS_FILTER.gpu_kernel = GpuPreemphasis(PREEMPHASIS_FILTER, _time_axis)
TO_DECIBELS.gpu_kernel = GpuToDecibels(TO_DECIBELS, _decibel_constants)
MEL_FILTER_BANK.gpu_kernel = GpuMelFilterBank(MEL_FILTER_BANK, _mel_bank)
MFCC.gpu_kernel = GpuDct(MFCC, dct_matrix, _lifter_scales)
SPECTROGRAM.gpu_kernel = GpuSpectrogram(SPECTROGRAM, _spectrogram_shape)
NONSILENT_REGION.gpu_kernel = GpuNonsilentRegion(NONSILENT_REGION)

OPERATORS = [
    MEL_FILTER_BANK,
    MFCC,
    NONSILENT_REGION,
    POWER_SPECTRUM,
    PREEMPHASIS_FILTER,
    SPECTROGRAM,
    TO_DECIBELS,
]
