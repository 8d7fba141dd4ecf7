"""Audio decoding and resampling: ``ndd.decoders.audio`` and ``ndd.audio_resample``.

``decoders.audio`` reads WAV (8-, 16-, 24- and 32-bit integers, 32- and 64-bit
floats), FLAC and OGG (Vorbis, Opus) with libsndfile, through the optional
``soundfile`` package (``pip install 'ndd[audio]'``), imported on the first call. It
gives the samples as ``[T, C]`` (``[T]`` with ``downmix``) and the sampling rate as a
float32 scalar. Whole FLAC files of 16-bit samples (the usual kind) are decoded with
dr_flac where the optional ``miniaudio`` package is installed (it is in the ``audio``
extra): the same samples as libsndfile's, in 60% of its time. The samples of a batch
are decoded and resampled on the context's thread pool.

Resampling uses a windowed sinc: ``sinc(x)`` times a Hann window over ``lobes`` zero
crossings on either side (3 at ``quality`` 0, 16 at 50, 64 at 100), read from a table
of 64 values per lobe with linear interpolation, as the reference does; the kernel
(``ndd/_cpu/sinc_resample.pyx``) follows the reference's float32 arithmetic, so the
results agree with it to a few units in the last place. The filter is not widened
when downsampling, as in the reference: frequencies above the new Nyquist frequency
fold back rather than being removed. The output has ``ceil(T * out_rate / in_rate)``
samples.

Integer samples stand for values in [-1, 1] (signed types: ``v / max``) or [0, 1]
(unsigned types), and converting back multiplies by the type's maximum, rounds half
away from zero and saturates. ``audio_resample`` maps between the two ranges when
only one of its input and output types is unsigned: 0 of a signed or float type is
the half-range of an unsigned one.

Errors: a file that cannot be decoded makes the call fail with ``AudioDecodeError``
(a RuntimeError) naming the operator and the sample; in batch mode the other samples
are still decoded (``decoded`` and ``failed`` of the error, as for images). A
truncated file gives the samples that it holds, as libsndfile reads them.
"""

import importlib
import io
import math
import wave

import numpy as np

from .._cpu import sinc_resample
from .._errors import SampleDecodeError
from .._memory import exceeds_half_of_memory
from .._optional import import_optional
from .._prepare.args import InvalidArgumentError
from .._prepare.invocation import PendingArg
from .._types import dtype as to_dtype
from .._types import float32, int8, int16, int32, uint8, uint16, uint32
from .conversions import cast_array
from .gpu_audio import GpuResample
from .random_ops import known_values
from .schema import Arg, Input, Operator, batch_samples_of

__all__ = ["OPERATORS", "AudioDecodeError", "decode_audio"]

_DECODE = "ndd.decoders.audio"
_RESAMPLE = "ndd.audio_resample"
# Output types of the decoder, and the soundfile type that reads each directly.
_DECODE_DTYPES = {float32: "float32", int16: "int16", int32: "int32"}
_RESAMPLE_DTYPES = (int8, uint8, int16, uint16, int32, uint32, float32)


class AudioDecodeError(SampleDecodeError):
    """Encoded audio could not be decoded.

    In batch mode, the exception raised from the run phase carries the samples that
    were decoded: ``decoded`` (one ``(audio, rate)`` pair per sample, None for the
    samples that failed) and ``failed`` (the indices of the failed samples).
    """


def _import_soundfile(qualname):
    """``soundfile``, or an ImportError saying what to install."""
    needs = f"{qualname}: decoding audio needs libsndfile (the 'soundfile' package)"
    return import_optional("soundfile", needs, "audio")


def lobes_for_quality(qualname, quality):
    """The sinc lobes on each side for ``quality``, which must be in [0, 100]."""
    if not 0 <= quality <= 100:
        raise InvalidArgumentError(f"{qualname}: 'quality' must be in [0, 100], got {quality}")
    return sinc_resample.lobes_for_quality(quality)


def resampled_length(length, in_rate, out_rate):
    """Samples after resampling ``length`` samples from ``in_rate`` to ``out_rate``."""
    return math.ceil(length * out_rate / in_rate)


def _from_unit(values, dtype):
    """float32 ``values`` (-1..1, or 0..1 for an unsigned ``dtype``) as ``dtype``: times
    the type's maximum in float32, rounded half away from zero and saturated."""
    if dtype is float32:
        return values
    scaled = values * np.float32(np.iinfo(dtype.numpy).max)
    return cast_array(scaled, dtype.numpy)


def _to_unit(values):
    """``values`` as float32 in -1..1 (0..1 for unsigned types): divided by the type's
    maximum; float32 as is."""
    if values.dtype == np.float32:
        return values
    return values.astype(np.float32) * np.float32(1 / np.float32(np.iinfo(values.dtype).max))


def _downmix(frames):
    """The mean of the channels of float32 ``frames`` [T, C], in float32 as the
    reference sums it: each channel times ``1/C``, added one after another."""
    weight = np.float32(1) / np.float32(frames.shape[1])
    total = frames[:, 0] * weight
    for c in range(1, frames.shape[1]):
        total += frames[:, c] * weight
    return total


def decode_audio(
    encoded,
    *,
    sample_rate=0.0,
    downmix=False,
    dtype=float32,
    quality=50.0,
    qualname=_DECODE,
    offset=0.0,
    duration=-1.0,
):
    """Decode one audio file as ``ndd.decoders.audio`` does for one sample.

    Parameters
    ----------
    encoded : bytes or numpy.ndarray
        The whole file: bytes or a 1-D uint8 array.
    sample_rate : float
        Resample to this rate (Hz) when positive and not the file's rate.
    downmix : bool
        Average the channels into one; the result is then 1-D.
    dtype : DType
        ``ndd.float32``, ``ndd.int16`` or ``ndd.int32``.
    quality : float
        Resampling quality in [0, 100].
    qualname : str
        The operator named in errors.
    offset, duration : float
        Decode only the part of the file from ``offset`` seconds on, ``duration``
        seconds long (``readers.NemoAsr``'s manifest fields): counted at the file's
        rate and truncated to whole frames, cut at the end of the file; a negative
        ``offset`` is 0 and a negative ``duration`` reaches the end. An offset past
        the end raises AudioDecodeError.

    Returns
    -------
    tuple of (numpy.ndarray, float)
        The samples, ``[T, C]`` (``[T]`` with ``downmix``), and the sampling rate of
        the result, a float32 value.

    Raises
    ------
    AudioDecodeError
        When the data is not a file that libsndfile decodes; the message starts with
        ``qualname``.
    """
    if dtype not in _DECODE_DTYPES:
        raise InvalidArgumentError(
            f"{qualname}: 'dtype' must be one of {', '.join(map(str, _DECODE_DTYPES))}, got {dtype}"
        )
    target = float(np.float32(sample_rate))
    lobes = lobes_for_quality(qualname, quality) if target > 0 else 0
    frames, rate = _read_audio(encoded, target, downmix, dtype, qualname, offset, duration)
    return _finish_audio(frames, rate, target, downmix, dtype, lobes)


# The most frames read at once (the header's count is taken at its word below that).
_FRAMES_AT_ONCE = 1 << 22


def _resamples(target, rate):
    return target > 0 and target != rate


def _read_audio(encoded, target, downmix, dtype, qualname, offset=0.0, duration=-1.0):
    """The frames [T, C] of a file (or of its part ``offset``/``duration``, see
    ``decode_audio``) and its rate: in ``dtype`` when they are the result as they are,
    else in float32 for ``_finish_audio``."""
    soundfile = _import_soundfile(qualname)
    data = encoded if isinstance(encoded, (bytes, bytearray)) else np.ascontiguousarray(encoded).data
    read = _read_pcm16_wav(data, target, downmix, dtype, offset, duration)
    if read is None:
        read = _read_flac16(data, target, downmix, dtype, offset, duration)
    if read is not None:
        return read
    count = 0
    try:
        with soundfile.SoundFile(io.BytesIO(data)) as file:
            rate, total = file.samplerate, file.frames
            start = int(offset * rate) if offset > 0.0 else 0
            count = min(int(duration * rate) if duration >= 0.0 else total, total - start)
            direct = not _resamples(target, rate) and not (downmix and file.channels > 1)
            read_as = _DECODE_DTYPES[dtype] if direct else "float32"
            # libsndfile scales 16-bit samples to float by 2**-15, which is exact: numpy
            # does the same multiplication in a third of the time.
            widen = read_as == "float32" and file.subtype == "PCM_16"
            if count >= 0:
                if start:
                    file.seek(start)
                frames = _read_frames(file, count, "int16" if widen else read_as)
                if widen:
                    frames = np.multiply(frames, np.float32(2**-15), dtype=np.float32)
    except (RuntimeError, ValueError, TypeError, EOFError, MemoryError) as exc:
        reason = getattr(exc, "error_string", None) or str(exc) or type(exc).__name__
        raise AudioDecodeError(f"{qualname}: cannot decode audio: {reason}") from exc
    if rate <= 0:
        raise AudioDecodeError(f"{qualname}: cannot decode audio: the file's sampling rate is {rate}")
    if count < 0:
        raise AudioDecodeError(
            f"{qualname}: cannot decode audio: the offset {offset} s is past the end of the file "
            f"({total / rate:g} s)"
        )
    return frames, rate


def _read_frames(file, count, dtype):
    """``count`` frames [T, C] from the position of the soundfile ``file`` (fewer where
    the data ends first). A count the header gives may be damaged (billions of frames
    in a file of a few kilobytes): beyond ``_FRAMES_AT_ONCE`` they are read in parts,
    so that memory follows the frames the data holds."""
    if count <= _FRAMES_AT_ONCE:
        return file.read(count, dtype=dtype, always_2d=True)
    parts = []
    while count > 0:
        part = file.read(min(count, _FRAMES_AT_ONCE), dtype=dtype, always_2d=True)
        parts.append(part)
        count -= len(part)
        if len(part) < _FRAMES_AT_ONCE:
            break
    return np.concatenate(parts)


def _read_pcm16_wav(data, target, downmix, dtype, offset, duration):
    """What ``_read_audio`` gives for a whole, well-formed 16-bit PCM WAV file (the
    most common kind), read with the standard library's ``wave`` module: the same
    frames as libsndfile's, in a seventh of the time (soundfile costs about 20 us of
    Python per file). None for any other file, or anything unusual about this one
    (truncated data, an offset past the end): libsndfile reads those."""
    try:
        with wave.open(io.BytesIO(data)) as file:
            if file.getsampwidth() != 2 or file.getcomptype() != "NONE":
                return None
            rate, channels, total = file.getframerate(), file.getnchannels(), file.getnframes()
            start = int(offset * rate) if offset > 0.0 else 0
            count = min(int(duration * rate) if duration >= 0.0 else total, total - start)
            if rate <= 0 or count < 0:
                return None
            file.setpos(start)
            raw = file.readframes(count)
    except Exception:  # noqa: BLE001 - whatever wave makes of a bad file, libsndfile says it
        return None
    if len(raw) != count * channels * 2:
        return None
    return _pcm16_frames(np.frombuffer(raw, "<i2").reshape(count, channels), rate, target, downmix, dtype)


def _pcm16_frames(frames, rate, target, downmix, dtype):
    """``_read_audio``'s result for 16-bit samples ``frames`` [T, C] (int16): as
    libsndfile converts them."""
    direct = not _resamples(target, rate) and not (downmix and frames.shape[1] > 1)
    if direct and dtype is int16:
        return (frames if frames.flags.writeable else frames.copy()), rate
    if direct and dtype is int32:
        # libsndfile's int32 samples of 16-bit data: the value in the upper half.
        return frames.astype(np.int32) << 16, rate
    # float32: times 2**-15, exactly libsndfile's scaling.
    return np.multiply(frames, np.float32(2**-15), dtype=np.float32), rate


def _import_miniaudio():
    """``miniaudio`` (dr_flac), or None where it is not installed."""
    try:
        return importlib.import_module("miniaudio")
    except ImportError:
        return None


def _flac16_header(data):
    """(channels, rate, frames) from the STREAMINFO block of a FLAC file of 16-bit
    samples that says how many frames it holds; None for anything else."""
    head = bytes(data[:26])
    # "fLaC", then the first metadata block, which is STREAMINFO (type 0); its fields
    # from byte 18: 20 bits of rate, 3 of channels - 1, 5 of bits - 1, 36 of frames.
    if len(head) < 26 or head[:4] != b"fLaC" or head[4] & 0x7F != 0:
        return None
    bits = ((head[20] & 1) << 4 | head[21] >> 4) + 1
    frames = (head[21] & 0x0F) << 32 | int.from_bytes(head[22:26], "big")
    rate = head[18] << 12 | head[19] << 4 | head[20] >> 4
    if bits != 16 or frames == 0 or rate == 0:
        return None
    return ((head[20] >> 1) & 0x07) + 1, rate, frames


def _read_flac16(data, target, downmix, dtype, offset, duration):
    """What ``_read_audio`` gives for an intact FLAC file of 16-bit samples, read whole
    with dr_flac (the optional ``miniaudio`` package): the same samples as libsndfile's
    libFLAC, in 60% of the time, without the GIL. None where miniaudio is missing, for
    any other file, for a part of the file that does not start at its beginning or
    holds less than half of it (libsndfile decodes only that part), and for a file that
    does not decode to all the frames its header promises (dr_flac drops frames that
    fail their checksum; libsndfile reports them)."""
    header = _flac16_header(data)
    miniaudio = _import_miniaudio() if header is not None else None
    if miniaudio is None:
        return None
    channels, rate, frames = header
    if exceeds_half_of_memory(frames * channels * 2):
        return None  # a damaged count: libsndfile reads as many frames as there are
    start = int(offset * rate) if offset > 0.0 else 0
    count = min(int(duration * rate) if duration >= 0.0 else frames, frames)
    if start != 0 or count * 2 < frames:
        return None
    try:
        decoded = miniaudio.flac_read_s16(miniaudio.ffi.from_buffer(data))
    except miniaudio.DecodeError:
        return None
    if decoded.nchannels != channels or decoded.sample_rate != rate or decoded.num_frames != frames:
        return None
    samples = np.frombuffer(decoded.samples, np.int16).reshape(frames, channels)[:count]
    return _pcm16_frames(samples, rate, target, downmix, dtype)


def _finish_audio(frames, rate, target, downmix, dtype, lobes):
    """Downmix, resample and convert what ``_read_audio`` read; the result and its
    rate as ``decode_audio`` gives them. Resampling runs without the GIL."""
    resample = _resamples(target, rate)
    mix = downmix and frames.shape[1] > 1
    if not resample and not mix:
        return (frames[:, 0] if downmix else frames), float(np.float32(rate))
    signal = _downmix(frames) if mix else frames
    if resample:
        length = resampled_length(len(signal), rate, target)
        signal = sinc_resample.resample(np.ascontiguousarray(signal), length, rate, target, lobes)
        rate = target
    if downmix and signal.ndim == 2:
        signal = signal[:, 0]
    return _from_unit(signal, dtype), float(np.float32(rate))


# -- decoders.audio ------------------------------------------------------------------


def _where(values, bad):
    """' (sample i)' for a per-sample argument, nothing for one value."""
    return f" (sample {bad})" if len(values) > 1 else ""


def _decode_prepare(ins, args):
    data = ins[0]
    if data._dtype not in (uint8, int8):
        raise InvalidArgumentError(
            f"{_DECODE}: the input must be encoded audio bytes (uint8), got {data._dtype}"
        )
    if data.ndim != 1:
        raise InvalidArgumentError(
            f"{_DECODE}: the input must be 1-D encoded audio bytes, got {data.ndim}-D data"
        )
    if args["dtype"] not in _DECODE_DTYPES:
        raise InvalidArgumentError(
            f"{_DECODE}: 'dtype' must be one of {', '.join(map(str, _DECODE_DTYPES))}, got {args['dtype']}"
        )
    lobes_for_quality(_DECODE, args["quality"])
    _import_soundfile(_DECODE)


def _decode_types(ins, args):
    return [(args["dtype"], ""), (float32, "")]


def _decode_kernel(arrays, args):
    audio, rate = decode_audio(
        arrays[0],
        sample_rate=args["sample_rate"],
        downmix=args["downmix"],
        dtype=args["dtype"],
        quality=args["quality"],
    )
    return audio, np.array(rate, np.float32)


def _is_wav(data):
    """Whether ``data`` starts as a RIFF WAVE file."""
    head = bytes(data[:12])
    return head[:4] == b"RIFF" and head[8:12] == b"WAVE"


def _decode_batch(inputs, sample_args, batch_size, ctx):
    """Decode the samples; a file that cannot be decoded does not stop the others.

    WAV files are read on the calling thread: reading them is Python's and holds the
    GIL, so threads would only take turns (a batch of 64 took 1.5 times as long on
    two). The other files (libsndfile and dr_flac decode without the GIL) and every
    resampling (without the GIL too) go to the thread pool."""
    samples = batch_samples_of(inputs[0], batch_size)
    targets = [float(np.float32(a["sample_rate"])) for a in sample_args]

    def read(i):
        args = sample_args[i]
        try:
            return _read_audio(samples[i], targets[i], args["downmix"], args["dtype"], _DECODE)
        except AudioDecodeError as exc:
            return exc

    read_here = {i: read(i) for i in range(batch_size) if _is_wav(samples[i])}

    def decode(i):
        read_audio = read_here[i] if i in read_here else read(i)
        if isinstance(read_audio, AudioDecodeError):
            return read_audio
        args, target = sample_args[i], targets[i]
        lobes = sinc_resample.lobes_for_quality(args["quality"]) if target > 0 else 0
        audio, rate = _finish_audio(*read_audio, target, args["downmix"], args["dtype"], lobes)
        return audio, np.array(rate, np.float32)

    pooled = len(read_here) < batch_size or any(
        not isinstance(r, AudioDecodeError) and _resamples(targets[i], r[1]) for i, r in read_here.items()
    )
    outcomes = (
        ctx.thread_pool.map(decode, range(batch_size)) if pooled else [decode(i) for i in range(batch_size)]
    )
    failed = [i for i, r in enumerate(outcomes) if isinstance(r, AudioDecodeError)]
    if failed:
        first = failed[0]
        reason = str(outcomes[first]).removeprefix(f"{_DECODE}: cannot decode audio: ")
        decoded = [None if i in failed else r for i, r in enumerate(outcomes)]
        raise AudioDecodeError.for_batch(
            f"{_DECODE}: cannot decode audio (sample {first}): {reason}", decoded=decoded, failed=failed
        ) from outcomes[first]
    return [[r[0] for r in outcomes], [r[1] for r in outcomes]]


_QUALITY_DOC = "Resampling quality in [0, 100]: 3 sinc lobes on each side at 0, 16 at 50, 64 at 100."

DECODE_AUDIO = Operator(
    "audio",
    module="ndd.decoders",
    inputs=[Input("input", doc="Encoded audio files (1-D uint8 bytes): WAV, FLAC or OGG.")],
    args=[
        Arg(
            "downmix",
            "bool",
            False,
            doc="Average the channels into one; the audio is then 1-D ``[T]``.",
            type_doc="bool",
        ),
        Arg(
            "dtype",
            "dtype",
            float32,
            doc="Output type: ``float32`` (-1..1), ``int16`` or ``int32`` (the full range of the type). "
            "Without resampling or downmixing, libsndfile converts: it reads float files as "
            "integers without scaling them.",
            type_doc="DType",
        ),
        Arg("quality", "float", 50.0, doc=_QUALITY_DOC, type_doc="float"),
        Arg(
            "sample_rate",
            "float",
            0.0,
            per_sample=True,
            doc="Resample to this rate, in Hz, when positive and not the file's rate.",
            type_doc="float or Tensor/Batch of float",
        ),
    ],
    prepare_args=_decode_prepare,
    infer_types=_decode_types,
    kernel=_decode_kernel,
    batch_kernel=_decode_batch,
    doc="Decode WAV, FLAC and OGG audio, optionally resampled and downmixed; outputs the audio "
    "``[T, C]`` (``[T]`` with ``downmix``) and its sampling rate (a float32 scalar, in Hz).",
)


# -- audio_resample ------------------------------------------------------------------

_RATE_ARGS = ("in_rate", "out_rate", "scale", "out_length")


def _resample_prepare(ins, args):
    x = ins[0]
    if x._dtype not in _RESAMPLE_DTYPES:
        raise InvalidArgumentError(
            f"{_RESAMPLE}: the input must be one of {', '.join(map(str, _RESAMPLE_DTYPES))}, got {x._dtype}"
        )
    if x.ndim not in (1, 2):
        raise InvalidArgumentError(
            f"{_RESAMPLE}: the input must be 1-D [T] or 2-D [T, C] audio, got {x.ndim}-D data"
        )
    out = args["dtype"]
    if out is not None and out not in _RESAMPLE_DTYPES:
        raise InvalidArgumentError(
            f"{_RESAMPLE}: 'dtype' must be one of {', '.join(map(str, _RESAMPLE_DTYPES))}, got {out}"
        )
    given = [name for name in _RATE_ARGS if args[name] is not None]
    if ("in_rate" in given) != ("out_rate" in given):
        raise InvalidArgumentError(f"{_RESAMPLE}: 'in_rate' and 'out_rate' must be given together")
    if len(set(given) - {"out_rate"}) > 1:
        raise InvalidArgumentError(
            f"{_RESAMPLE}: give one of 'in_rate'/'out_rate', 'scale' and 'out_length', got {given}"
        )
    if not given:
        raise InvalidArgumentError(
            f"{_RESAMPLE}: give the rates ('in_rate' and 'out_rate'), 'scale' or 'out_length'"
        )
    args["_lobes"] = lobes_for_quality(_RESAMPLE, args["quality"])
    _check_rates(args)


def _check(args, name, ok, what):
    values = () if args[name] is None else known_values(args[name])
    for i, v in enumerate(values):
        if not ok(v):
            raise InvalidArgumentError(f"{_RESAMPLE}: '{name}' must be {what}, got {v}{_where(values, i)}")


def _check_rates(args):
    _check(args, "in_rate", lambda v: v > 0, "positive")
    _check(args, "out_rate", lambda v: v >= 0, "non-negative")
    _check(args, "scale", lambda v: v >= 0, "non-negative")
    _check(args, "out_length", lambda v: v >= 0, "non-negative")


def _resample_types(ins, args):
    return [(args["dtype"] or ins[0]._dtype, ins[0]._layout)]


def _rates(length, args):
    """(in_rate, out_rate, out_length) of one sample, as the reference takes them: the
    rates as float32 values, ``scale`` as the output rate for an input rate of 1, and
    ``out_length`` with the lengths as the rates."""
    _check_rates(args)
    if args["in_rate"] is not None:
        in_rate, out_rate = float(np.float32(args["in_rate"])), float(np.float32(args["out_rate"]))
    elif args["scale"] is not None:
        in_rate, out_rate = 1.0, float(np.float32(args["scale"]))
    else:
        out_length = int(args["out_length"])
        if length == 0 and out_length != 0:
            raise InvalidArgumentError(
                f"{_RESAMPLE}: 'out_length' must be 0 for an empty input, got {out_length}"
            )
        return float(length or 1), float(out_length or 1), _checked_length(out_length)
    return in_rate, out_rate, _checked_length(resampled_length(length, in_rate, out_rate))


def _checked_length(out_length):
    """``out_length``, unless its float32 samples would fill half of the memory."""
    if exceeds_half_of_memory(4 * out_length):
        raise InvalidArgumentError(
            f"{_RESAMPLE}: the output would have {out_length} samples (a channel), more than half of "
            "this machine's memory holds; check the rates or 'scale'"
        )
    return out_length


def _resample_shape(shapes, args):
    if any(type(args[name]) is PendingArg for name in _RATE_ARGS):
        return None
    shape = tuple(shapes[0])
    return [(_rates(shape[0], args)[2],) + shape[1:]]


def _resample_kernel(arrays, args):
    x = arrays[0]
    target = (args["dtype"] or to_dtype(x.dtype)).numpy
    in_rate, out_rate, out_length = _rates(x.shape[0], args)
    signal = _to_unit(x)
    # Between signed (or float) and unsigned types, 0 is the half-range.
    if target.kind == "u" and x.dtype.kind != "u":
        signal = (signal + np.float32(1)) * np.float32(0.5)
    elif x.dtype.kind == "u" and target.kind != "u":
        signal = signal * np.float32(2) - np.float32(1)
    resampled = sinc_resample.resample(
        np.ascontiguousarray(signal), out_length, in_rate, out_rate, args["_lobes"]
    )
    return _from_unit(resampled, to_dtype(target))


AUDIO_RESAMPLE = Operator(
    "audio_resample",
    inputs=[Input("input", doc="Audio, ``[T]`` or ``[T, C]`` (channels last).")],
    args=[
        Arg(
            "dtype",
            "dtype",
            None,
            doc="Output type; the input's when omitted. Integer values stand for -1..1 (0..1 when "
            "unsigned) of the type's range, and 0 of a signed or float type is the half-range of an unsigned one.",
            type_doc="DType",
        ),
        Arg(
            "in_rate",
            "float",
            None,
            per_sample=True,
            doc="Input sampling rate, positive, in the unit of ``out_rate``; give both or neither.",
            type_doc="float or Tensor/Batch of float",
        ),
        Arg(
            "out_length",
            "int",
            None,
            per_sample=True,
            doc="Output length, in samples: the ratio is this length to the input's.",
            type_doc="int or Tensor/Batch of int",
        ),
        Arg(
            "out_rate",
            "float",
            None,
            per_sample=True,
            doc="Output sampling rate, non-negative, in the unit of ``in_rate``.",
            type_doc="float or Tensor/Batch of float",
        ),
        Arg("quality", "float", 50.0, doc=_QUALITY_DOC, type_doc="float"),
        Arg(
            "scale",
            "float",
            None,
            per_sample=True,
            doc="Output rate over input rate, non-negative: 2 doubles the number of samples.",
            type_doc="float or Tensor/Batch of float",
        ),
    ],
    prepare_args=_resample_prepare,
    infer_types=_resample_types,
    infer_shape=_resample_shape,
    kernel=_resample_kernel,
    doc="Resample audio with a Hann-windowed sinc filter, to a rate ratio given by the rates, ``scale`` "
    "or ``out_length``; the output has ``ceil(T * out_rate / in_rate)`` samples.",
)

# The GPU resamples with the CPU's filter table and arithmetic (gpu_audio.py).
AUDIO_RESAMPLE.gpu_kernel = GpuResample(AUDIO_RESAMPLE, _rates, sinc_resample.filter_table)

OPERATORS = [AUDIO_RESAMPLE, DECODE_AUDIO]
