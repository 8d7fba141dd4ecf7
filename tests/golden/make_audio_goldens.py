"""Regenerate the goldens of audio_resample and decoders.audio from the reference.

Run with the reference's interpreter (DALI 2.4.0 dynamic mode, CPU):

    $HOME/dali-ref/bin/python tests/golden/make_audio_goldens.py

Writes ``audio_cases.json`` (one record per call: operator, input names, keyword
arguments, the names of the expected results or the error raised) and
``audio_values.npz`` (the inputs and expected outputs by name). The signals are sums
of sines with a little noise from a fixed seed; the encoded files are 16-bit PCM WAV
written with the standard library's ``wave`` module (the reference's environment
has no soundfile).
"""

import io
import json
import pathlib
import wave

import numpy as np
import nvidia.dali.experimental.dynamic as ndd

HERE = pathlib.Path(__file__).parent
rng = np.random.default_rng(0)
arrays = {}
cases = []


def signal(length, channels=None, periods=(23.0, 7.0)):
    """Sines of the given periods (in samples) plus noise, within -0.9..0.9, float32."""
    t = np.arange(length)[:, None]
    shifts = np.arange(channels or 1)[None, :]
    values = sum(0.4 * np.sin(2 * np.pi * t / p + shifts) for p in periods)
    values = values + rng.normal(0, 0.02, values.shape)
    values = np.clip(values, -0.9, 0.9).astype(np.float32)
    return values if channels else values[:, 0]


def wav_bytes(samples, rate):
    """A 16-bit PCM WAV file of float ``samples`` ([T] or [T, C]) as uint8."""
    frames = samples if samples.ndim == 2 else samples[:, None]
    pcm = np.round(frames * 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as file:
        file.setnchannels(frames.shape[1])
        file.setsampwidth(2)
        file.setframerate(rate)
        file.writeframes(pcm.tobytes())
    return np.frombuffer(buffer.getvalue(), np.uint8)


def add_array(name, value):
    arrays[name] = np.array(value, order="C")
    return name


add_array("mono", signal(200))
add_array("mono_short", signal(90, periods=(11.0,)))
add_array("stereo", signal(200, 2))
add_array("mono_i16", np.round(signal(120) * 30000).astype(np.int16))
add_array("mono_u8", np.round(signal(120) * 120 + 128).astype(np.uint8))
add_array("mono_f32_3d", np.zeros((4, 2, 2), np.float32))
add_array("wav_stereo", wav_bytes(signal(300, 2), 8000))
add_array("wav_mono", wav_bytes(signal(250), 11025))


def build(spec):
    """A reference input: an array name (a Tensor), or a list of names (a Batch)."""
    if isinstance(spec, list):
        return ndd.batch([arrays[n] for n in spec])
    return ndd.tensor(arrays[spec])


def build_kwarg(value):
    if isinstance(value, dict) and "batch" in value:
        return ndd.batch([np.asarray(v, dtype=value["dtype"]) for v in value["batch"]])
    if isinstance(value, str) and value.startswith("dtype:"):
        return getattr(ndd, value[len("dtype:") :])
    return value


def store(result, name):
    if isinstance(result, ndd.Batch):
        return [add_array(f"{name}_{i}", np.asarray(s)) for i, s in enumerate(result)]
    return add_array(name, np.asarray(result))


def record(op, inputs, **kwargs):
    fn = ndd
    for part in op.split("."):
        fn = getattr(fn, part)
    case = {"op": op, "inputs": inputs, "kwargs": kwargs}
    try:
        result = fn(*[build(s) for s in inputs], **{k: build_kwarg(v) for k, v in kwargs.items()})
        outputs = result if isinstance(result, tuple) else (result,)
        case["expected"] = [store(out, f"out{len(cases)}_{i}") for i, out in enumerate(outputs)]
        case["layouts"] = [str(out.layout) if out.layout else "" for out in outputs]
    except Exception as exc:  # noqa: BLE001 - the error itself is the golden
        cause = exc.__cause__ or exc.__context__ or exc
        case["error"] = f"{type(exc).__name__}: {str(cause).splitlines()[0][:300]}"
    cases.append(case)


# audio_resample: ratios, qualities, lengths
for scale in [2.0, 0.37, 1.0, 3.3]:
    record("audio_resample", ["mono"], scale=scale)
for quality in [0.0, 10.0, 77.0, 100.0]:
    record("audio_resample", ["mono"], scale=0.6, quality=quality)
record("audio_resample", ["mono"], in_rate=44100.0, out_rate=16000.0)
record("audio_resample", ["mono"], in_rate=3.0, out_rate=7.5)
record("audio_resample", ["mono"], out_length=500)
record("audio_resample", ["mono"], out_length=0)
record("audio_resample", ["mono"], scale=0.0)
record("audio_resample", ["stereo"], scale=1.5)
record("audio_resample", ["stereo"], out_length=123, quality=0.0)
# audio_resample: types
record("audio_resample", ["mono_i16"], scale=1.7)
record("audio_resample", ["mono_i16"], scale=1.7, dtype="dtype:uint8")
record("audio_resample", ["mono_i16"], scale=1.7, dtype="dtype:float32")
record("audio_resample", ["mono_u8"], scale=0.8)
record("audio_resample", ["mono_u8"], scale=0.8, dtype="dtype:int16")
record("audio_resample", ["mono_u8"], scale=0.8, dtype="dtype:float32")
record("audio_resample", ["mono"], scale=1.2, dtype="dtype:uint16")
record("audio_resample", ["mono"], scale=1.2, dtype="dtype:int32")
record("audio_resample", ["mono"], scale=1.2, dtype="dtype:int8")
# audio_resample: batches and per-sample arguments
record("audio_resample", [["mono", "mono_short"]], scale={"batch": [2.0, 0.5], "dtype": "float32"})
record(
    "audio_resample",
    [["mono", "mono_short"]],
    in_rate={"batch": [16000.0, 44100.0], "dtype": "float32"},
    out_rate={"batch": [22050.0, 8000.0], "dtype": "float32"},
)
record("audio_resample", [["mono", "mono_short"]], out_length={"batch": [50, 200], "dtype": "int64"})
# audio_resample: errors
record("audio_resample", ["mono"])
record("audio_resample", ["mono"], in_rate=2.0)
record("audio_resample", ["mono"], scale=2.0, out_length=10)
record("audio_resample", ["mono"], scale=-1.0)
record("audio_resample", ["mono"], in_rate=0.0, out_rate=1.0)
record("audio_resample", ["mono"], scale=2.0, quality=101.0)
record("audio_resample", ["mono"], scale=2.0, dtype="dtype:float64")
record("audio_resample", ["mono_f32_3d"], scale=2.0)

# decoders.audio
record("decoders.audio", ["wav_stereo"])
record("decoders.audio", ["wav_stereo"], downmix=True)
record("decoders.audio", ["wav_stereo"], dtype="dtype:int16")
record("decoders.audio", ["wav_stereo"], dtype="dtype:int32", downmix=True)
record("decoders.audio", ["wav_stereo"], sample_rate=16000.0)
record("decoders.audio", ["wav_stereo"], sample_rate=5000.0, downmix=True, dtype="dtype:int16")
record("decoders.audio", ["wav_stereo"], sample_rate=22050.0, quality=0.0)
record("decoders.audio", ["wav_mono"], sample_rate=16000.0, downmix=True)
record("decoders.audio", ["wav_mono"], sample_rate=12345.6, dtype="dtype:int32")
record(
    "decoders.audio",
    [["wav_stereo", "wav_mono"]],
    sample_rate={"batch": [16000.0, 8000.0], "dtype": "float32"},
)
record("decoders.audio", ["wav_stereo"], dtype="dtype:uint8")
record("decoders.audio", ["wav_stereo"], sample_rate=16000.0, quality=-1.0)

with open(HERE / "audio_cases.json", "w") as f:
    json.dump({"generator": "make_audio_goldens.py", "cases": cases}, f, indent=1)
np.savez_compressed(HERE / "audio_values.npz", **arrays)
print(f"{len(cases)} cases, {sum(a.nbytes for a in arrays.values())} bytes of arrays")
