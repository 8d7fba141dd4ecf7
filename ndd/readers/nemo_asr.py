"""``readers.NemoAsr``: speech and transcripts listed by NVIDIA NeMo ASR manifests."""

import json
import math
import warnings

import numpy as np

from .._ops.audio import AudioDecodeError, decode_audio, lobes_for_quality
from .._prepare.args import Arg, InvalidArgumentError
from .._types import float32, int16, int32, int64, uint8
from ._base import Reader, path_list
from .file import read_file_bytes

__all__ = ["NemoAsr"]

_AUDIO_TYPES = (int16, int32, float32)


class _Entry:
    """One kept line of a manifest."""

    __slots__ = ("path", "duration", "offset", "text", "index")

    def __init__(self, path, duration, offset, text, index):
        self.path = path
        self.duration = duration
        self.offset = offset
        self.text = text
        self.index = index


class NemoAsr(Reader):
    """Read speech recordings and their transcripts from NeMo ASR manifests.

    A manifest is a text file of one JSON object per line:

    .. code-block:: json

        {"audio_filepath": "clips/a.wav", "duration": 3.45, "text": "hello world"}
        {"audio_filepath": "clips/a.wav", "offset": 3.45, "duration": 1.5, "text": "same file, later"}

    Only ``audio_filepath`` is required; relative paths are relative to the
    current working directory (as in the reference), not to the manifest.
    ``offset`` and ``duration`` (seconds) select part of the file: the frames
    from ``int(offset * rate)`` on, ``int(duration * rate)`` of them, cut at the
    end of the file (a missing or negative ``offset`` is 0, a missing or
    negative ``duration`` reads to the end). A missing ``text`` is an empty
    transcript. The dataset is the kept lines of every manifest, in order: a line
    that is not a JSON object, or has no ``audio_filepath``, is skipped with a
    warning (a blank line silently), and ``min_duration``/``max_duration`` (when positive) leave out the
    lines whose ``duration`` is outside them. A field of the wrong type (a text
    that is not a string, say) raises.

    Outputs, in this order: the audio (decoded as ``ndd.decoders.audio`` does:
    ``(length,)``, or ``(length, channels)`` without ``downmix``, resampled to
    ``sample_rate`` when given, of type ``dtype``); when ``read_sample_rate``, the
    sample rate of that audio (float32, a scalar); when ``read_text``, the
    transcript as UTF-8 bytes (uint8, 1-D, no terminating zero); when
    ``read_idxs``, the line's index (int64, shape ``(1,)``): its position among
    the kept lines of its own manifest, counted from 0 in each manifest, as in the
    reference. The audio's ``source_info`` is its ``audio_filepath``.
    """

    ARGS = (
        Arg("downmix", "bool", True, doc="Average the channels into one (the audio is then 1-D)."),
        Arg(
            "dtype",
            "dtype",
            float32,
            doc="Type of the audio: float32 (in [-1, 1]), int16 or int32 (full-scale integers).",
            type_doc="DType",
        ),
        Arg(
            "manifest_filepaths",
            "any",
            doc="Manifest file, or a list of them (read one after another).",
            type_doc="str or list of str",
        ),
        Arg(
            "max_duration",
            "float",
            0.0,
            doc="When positive, leave out the lines whose ``duration`` is longer (seconds).",
        ),
        Arg(
            "min_duration",
            "float",
            0.0,
            doc="When positive, leave out the lines whose ``duration`` is shorter (seconds); lines "
            "without a ``duration`` are then left out too.",
        ),
        Arg(
            "normalize_text",
            "bool",
            None,
            doc="Deprecated, as in the reference: accepted with a warning and has no effect.",
        ),
        Arg(
            "quality",
            "float",
            50.0,
            doc="Resampling quality from 0 (3 lobes of the sinc filter) to 100 (64 lobes).",
        ),
        Arg("read_idxs", "bool", False, doc="Add the output of each line's index in its manifest."),
        Arg("read_sample_rate", "bool", True, doc="Add the output of the audio's sample rate."),
        Arg("read_text", "bool", True, doc="Add the output of the transcript."),
        Arg(
            "sample_rate",
            "float",
            -1.0,
            doc="When positive, resample the audio to this rate (Hz); otherwise keep the file's rate.",
        ),
    )
    OUTPUTS = ("audio", "sample_rate", "text", "idxs")

    def _validate_args(self, args):
        q = self._qualname
        args["manifest_filepaths"] = path_list(q, "manifest_filepaths", args["manifest_filepaths"])
        if args["dtype"] not in _AUDIO_TYPES:
            raise InvalidArgumentError(
                f"{q}: 'dtype' must be one of {', '.join(str(t) for t in _AUDIO_TYPES)}, got {args['dtype']}"
            )
        lobes_for_quality(q, args["quality"])
        if args["normalize_text"] is not None:
            warnings.warn(
                f"{q}: 'normalize_text' is deprecated and has no effect", DeprecationWarning, stacklevel=4
            )

    # -- listing -------------------------------------------------------------------
    def _list_samples(self):
        a = self._args
        # The reference compares durations with the bounds as float32 (a line lasting
        # exactly min_duration=0.3 s is left out: float32(0.3) > 0.3); so do we, to
        # keep the same lines.
        low, high = float(np.float32(a["min_duration"])), float(np.float32(a["max_duration"]))
        entries = []
        for manifest in a["manifest_filepaths"]:
            kept = 0
            for entry in self._parse_manifest(manifest):
                if (high > 0.0 and entry.duration > high) or (low > 0.0 and entry.duration < low):
                    continue
                # The index counts the kept lines of this manifest (as the reference).
                entry.index = kept
                kept += 1
                entries.append(entry)
        # Resampling, and decoding compressed audio (FLAC, Vorbis, ...), run without the
        # GIL: spread them over threads (bench/readers.py, 22.05 to 16 kHz: 1.05x -> 1.6x
        # the reference; FLAC at its rate 204 -> 175 us per second of audio). Reading a
        # WAV file is mostly Python work under the GIL, which threads only contend for
        # (0.59x -> 0.35x): those stay on the loading thread.
        self._parallel_loading = a["sample_rate"] > 0 or any(
            not e.path.lower().endswith(".wav") for e in entries
        )
        return entries

    def _parse_manifest(self, manifest):
        q = self._qualname
        try:
            with open(manifest, "rb") as fh:
                lines = fh.read().split(b"\n")
        except OSError as exc:
            raise type(exc)(f"{q}: cannot read manifest '{manifest}': {exc.strerror or exc}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if not isinstance(record, dict):
                self._skip(manifest, number, "is not a JSON object", line)
                continue
            path = self._field(record, "audio_filepath", str, "", manifest, number)
            if not path:
                self._skip(manifest, number, "has no 'audio_filepath'", line)
                continue
            duration = self._field(record, "duration", float, -1.0, manifest, number)
            offset = self._field(record, "offset", float, 0.0, manifest, number)
            text = self._field(record, "text", str, "", manifest, number) if self._args["read_text"] else ""
            yield _Entry(path, duration, offset, text, -1)

    def _skip(self, manifest, number, problem, line):
        shown = line.decode("utf-8", "replace")
        warnings.warn(
            f"{self._qualname}: skipping line {number} of manifest '{manifest}', which {problem}: {shown!r}",
            stacklevel=2,
        )

    def _field(self, record, key, kind, default, manifest, number):
        value = record.get(key)
        if value is None:
            return default
        if kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            expected = "a finite number"
        else:
            ok = isinstance(value, str)
            expected = "a string"
        if not ok:
            raise ValueError(
                f"{self._qualname}: line {number} of manifest '{manifest}': '{key}' must be {expected}, "
                f"got {value!r}"
            )
        return kind(value)

    def _dataset_description(self):
        a = self._args
        bounds = ""
        if a["min_duration"] > 0 or a["max_duration"] > 0:
            bounds = (
                f" with a duration within min_duration={a['min_duration']}, max_duration={a['max_duration']}"
            )
        return f"no line of the manifests {a['manifest_filepaths']} names an audio file{bounds}"

    def _describe(self, entry):
        return entry.path

    # -- reading ---------------------------------------------------------------------
    def _read(self, entry):
        a = self._args
        audio, rate = self._decode(entry)
        outputs = [audio]
        if a["read_sample_rate"]:
            outputs.append(np.array(rate, np.float32))
        if a["read_text"]:
            outputs.append(np.frombuffer(entry.text.encode(), np.uint8).copy())
        if a["read_idxs"]:
            outputs.append(np.array([entry.index], np.int64))
        return tuple(outputs)

    def _decode(self, entry):
        q = self._qualname
        a = self._args
        options = {
            "sample_rate": max(a["sample_rate"], 0.0),
            "downmix": a["downmix"],
            "dtype": a["dtype"],
            "quality": a["quality"],
            "qualname": q,
        }
        encoded = read_file_bytes(entry.path, q)
        try:
            return decode_audio(encoded, offset=entry.offset, duration=entry.duration, **options)
        except AudioDecodeError as exc:
            reason = str(exc).removeprefix(f"{q}: cannot decode audio: ")
            raise AudioDecodeError(f"{q}: cannot decode audio file '{entry.path}': {reason}") from None

    def _output_types(self):
        a = self._args
        types = [(a["dtype"], "")]
        if a["read_sample_rate"]:
            types.append((float32, ""))
        if a["read_text"]:
            types.append((uint8, ""))
        if a["read_idxs"]:
            types.append((int64, ""))
        return types
