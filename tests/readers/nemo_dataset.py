"""Small NeMo ASR datasets (WAV files + manifests) for the reader tests and goldens.

The WAV files are written with the standard library's ``wave`` module, so that the
test venv and the reference venv (``tests/golden/make_nemo_asr_goldens.py``)
write identical bytes. Each clip is a sine of its own frequency, chosen so that
no clip holds a whole number of periods (an offset into it changes the samples).
Manifest paths are relative to the dataset folder: run with it as the working
directory.
"""

import json
import os
import wave

import numpy as np

# name -> (rate, seconds, frequency, channels)
CLIPS = {
    "a0.wav": (16000, 0.10, 443.0, 1),
    "a1.wav": (16000, 0.20, 557.0, 1),
    "a2.wav": (16000, 0.30, 661.0, 1),
    "a3.wav": (16000, 0.25, 773.0, 1),
    "a4.wav": (8000, 0.15, 331.0, 1),
    "a5.wav": (16000, 0.35, 997.0, 1),
    "stereo.wav": (8000, 0.20, 311.0, 2),
}

# (clip, duration, offset, text); None leaves the field out.
LINES = [
    ("a0.wav", 0.10, None, "zero"),
    ("a1.wav", 0.20, None, "one"),
    ("a2.wav", 0.30, None, "two, été"),
    ("a3.wav", 0.25, None, "three"),
    ("a4.wav", 0.15, None, "four"),
    ("a5.wav", 0.35, None, "five"),
    ("stereo.wav", 0.20, None, "stereo"),
]

# Lines reading part of a clip: (clip, duration, offset, text).
PART_LINES = [
    ("a5.wav", 0.1, 0.05, "middle"),
    ("a5.wav", 0.2, 0.25, "cut at the end"),
    ("a5.wav", None, 0.3, "offset only"),
    ("a5.wav", 0.0001, 0.01, "one frame"),
    ("a5.wav", 0.02, -0.5, "negative offset"),
    ("a5.wav", -1.0, 0.1, "negative duration"),
    ("a5.wav", 0.0, None, "zero duration"),
    ("a5.wav", 1.5, None, "longer than the file"),
    ("stereo.wav", 0.05, 0.0312, "stereo part"),
]


def tone(name: str) -> np.ndarray:
    """The int16 frames of clip ``name``, shape ``(frames, channels)``: channel c
    is the sine at (c + 1) / channels of half full scale."""
    rate, seconds, frequency, channels = CLIPS[name]
    t = np.arange(round(rate * seconds)) / rate
    sine = 0.5 * np.sin(2 * np.pi * frequency * t)
    columns = [sine * (c + 1) / channels for c in range(channels)]
    return np.round(np.stack(columns, axis=1) * 32767).astype(np.int16)


def write_wav(path, frames: np.ndarray, rate: int) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(frames.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(frames.astype("<i2").tobytes())


def manifest_line(clip, duration, offset, text) -> str:
    record = {"audio_filepath": f"clips/{clip}"}
    if duration is not None:
        record["duration"] = duration
    if offset is not None:
        record["offset"] = offset
    if text is not None:
        record["text"] = text
    return json.dumps(record, ensure_ascii=False)


def write_manifest(path, lines) -> str:
    """A manifest of ``lines`` (tuples as in LINES, or raw strings)."""
    with open(path, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write((line if isinstance(line, str) else manifest_line(*line)) + "\n")
    return str(path)


def make_dataset(folder) -> None:
    """Write the clips under ``folder/clips`` and the manifests ``all.json`` (LINES),
    ``parts.json`` (PART_LINES), ``first.json`` and ``second.json`` (LINES split in two)."""
    os.makedirs(os.path.join(folder, "clips"), exist_ok=True)
    for name, (rate, *_) in CLIPS.items():
        write_wav(os.path.join(folder, "clips", name), tone(name), rate)
    write_manifest(os.path.join(folder, "all.json"), LINES)
    write_manifest(os.path.join(folder, "parts.json"), PART_LINES)
    write_manifest(os.path.join(folder, "first.json"), LINES[:3])
    write_manifest(os.path.join(folder, "second.json"), LINES[3:])
