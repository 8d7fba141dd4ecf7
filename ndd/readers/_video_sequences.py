"""What the video readers (``readers.Video``, ``readers.VideoResize`` and
``experimental.readers.Video``) share: the videos of a ``file_root``, argument
checks, and the loading of the sequences of one file in one decoding pass, on the
loading threads, each keeping its last video open."""

import abc
import os
import threading
import warnings

import numpy as np

from .._ops.image_codec import to_ycbcr
from .._ops.video import VideoDecodeError, VideoFile
from .._prepare.args import Arg, InvalidArgumentError
from .._types import float64, int32
from ..types import DALIImageType, enum_value
from ._base import Reader, text_lines

__all__ = ["Span", "VideoSequenceReader", "frame_num_mode", "gather_frames", "image_type", "to_ycbcr_frames"]

_FRAME_NUM = {"none": "none", "scalar": "scalar", "sequence": "sequence", False: "none", True: "scalar"}
# Bytes of frames a chunk of sequences read ahead may hold.
_READ_AHEAD_BYTES = 64 << 20


# Arguments both video readers take with the same meaning.
FILENAMES_ARG = Arg(
    "filenames",
    "any",
    None,
    doc="Paths of the video files (one path or a list).",
    type_doc="str or list of str",
)
IMAGE_TYPE_ARG = Arg(
    "image_type",
    "any",
    DALIImageType.RGB,
    doc="Colour space of the frames: RGB or YCbCr.",
    type_doc="DALIImageType",
)
SEQUENCE_LENGTH_ARG = Arg("sequence_length", "int", doc="Frames per sequence.")
STRIDE_ARG = Arg("stride", "int", 1, doc="Frames between consecutive frames of a sequence.")


class Span:
    """One file's part of the dataset: frames ``[first, end)``, with its label and
    the size of a frame in bytes."""

    __slots__ = ("path", "label", "first", "end", "frame_bytes")

    def __init__(self, path, label, first, end, frame_bytes):
        self.path = path
        self.label = label
        self.first = first
        self.end = end
        self.frame_bytes = frame_bytes


def frame_num_mode(qualname, value):
    """'none', 'scalar' or 'sequence' from an ``enable_frame_num`` value."""
    if not isinstance(value, (str, bool)) or value not in _FRAME_NUM:
        raise InvalidArgumentError(
            f"{qualname}: 'enable_frame_num' must be 'none', 'scalar', 'sequence', False or True, got {value!r}"
        )
    return _FRAME_NUM[value]


def image_type(qualname, value):
    """The DALIImageType of an ``image_type`` value: RGB or YCbCr."""
    try:
        converted = enum_value(value, DALIImageType)
    except (TypeError, ValueError):
        converted = None
    if converted not in (DALIImageType.RGB, DALIImageType.YCbCr):
        raise InvalidArgumentError(f"{qualname}: 'image_type' must be RGB or YCbCr, got {value!r}")
    return converted


def to_ycbcr_frames(frames):
    """BT.601 studio-range YCbCr of uint8 RGB frames (FHWC)."""
    # The conversion takes images: the frames stacked as one tall image.
    height = frames.shape[1]
    tall = frames.reshape((-1,) + frames.shape[2:])
    return to_ycbcr(tall, np.dtype(np.uint8)).reshape((-1, height) + frames.shape[2:])


def gather_frames(positions, decoded, wanted, fill):
    """A sequence's frames: those at ``positions`` from the ``decoded`` frames (at
    the sorted frame numbers ``wanted``), ``fill`` where a position is -1. Also
    says which frames are shown and their rows in ``decoded``."""
    shown = positions >= 0
    rows = np.searchsorted(wanted, positions[shown])
    if len(rows) == len(positions):  # no padding: one copy of the rows
        return np.take(decoded, rows, axis=0), shown, rows
    frames = np.empty((len(positions),) + decoded.shape[1:], np.uint8)
    frames[shown] = decoded[rows]
    frames[~shown] = fill
    return frames, shown, rows


class VideoSequenceReader(Reader):
    """Base of the video readers. Its entries are ``(Span, first frame)``, one per
    sequence; a subclass lists them (``_list_samples``), says which frames a
    sequence shows (``_frame_positions``: frame numbers, -1 for a padding frame)
    and builds its outputs (``_outputs``)."""

    SHUFFLE_AFTER_EPOCH = False
    # Decoding runs in FFmpeg, without the GIL: the samples of a chunk load on threads.
    _parallel_loading = True

    def _start_decoding(self):
        # The video each loading thread read last, kept open for the next sequence.
        self._open_videos = threading.local()

    def _class_folders(self, root, files_in):
        """``(path, label)`` of the videos of the sub-folders of ``root``, labelled
        0, 1, ... in sorted name order; ``files_in(folder)`` lists a folder's files."""
        try:
            folders = sorted(e.name for e in os.scandir(root) if e.is_dir())
        except OSError as exc:
            raise type(exc)(
                f"{self._qualname}: cannot list file_root '{root}': {exc.strerror or exc}"
            ) from None
        files = []
        for label, folder in enumerate(folders):
            folder_path = os.path.join(root, folder)
            files += [(os.path.join(folder_path, name), label) for name in files_in(folder_path)]
        return files

    def _warn(self, message):
        warnings.warn(f"{self._qualname}: {message}", stacklevel=3)

    def _file_list_lines(self, list_path, parse_bound, *, non_negative_labels):
        """``(path, label, start, end)`` of each line ``path label [start [end]]`` of a
        ``file_list``, the bounds read by ``parse_bound`` (None where a line has none);
        a line whose start equals its end is left out with a warning."""
        q = self._qualname
        try:
            lines = text_lines(list_path)
        except OSError as exc:
            raise type(exc)(f"{q}: cannot read file_list '{list_path}': {exc.strerror or exc}") from None
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if not fields:
                continue
            try:
                if not 2 <= len(fields) <= 4:
                    raise ValueError
                label = int(fields[1])
                bounds = [parse_bound(v) for v in fields[2:]] + [None] * (4 - len(fields))
            except ValueError:
                raise ValueError(
                    f"{q}: line {number} of file_list '{list_path}' must be 'path label [start [end]]', "
                    f"got {line!r}"
                ) from None
            if non_negative_labels and label < 0:
                raise ValueError(
                    f"{q}: the label on line {number} of file_list '{list_path}' must be >= 0, got {label}"
                )
            if len(fields) == 4 and bounds[0] == bounds[1]:
                self._warn(f"line {number} of file_list '{list_path}' has start == end; skipping it")
                continue
            yield fields[0], label, bounds[0], bounds[1]

    def _describe(self, entry):
        return entry[0].path

    def _video(self, path):
        """The video at ``path``, kept open on this thread for the next sequence."""
        opened = getattr(self._open_videos, "video", None)
        if opened is not None and opened[0] == path:
            return opened[1]
        if opened is not None:
            opened[1].close()
            self._open_videos.video = None
        video = VideoFile(path, self._qualname)
        self._open_videos.video = (path, video)
        return video

    def _chunk_size(self):
        # Chunks of several batches put the sequences of more files on the loading
        # threads at once (those of one file decode together, on one thread): 16
        # videos of 60 frames 160x120, 8 frames per sequence, batches of 8 read in
        # 151 ms per epoch in chunks of 8 sequences, 95 ms in chunks of 32. The
        # read-ahead stays within _READ_AHEAD_BYTES.
        size = super()._chunk_size()
        sequence_bytes = self._entries[0][0].frame_bytes * self._args["sequence_length"]
        return max(size, min(4 * size, _READ_AHEAD_BYTES // sequence_bytes))

    def _chunk_groups(self, indices):
        # The neighbouring sequences of one file load together: their frames decode in
        # one pass (from the key frame before the first), not one pass per sequence.
        groups = []
        for index in indices:
            if groups and self._entries[groups[-1][-1]][0] is self._entries[index][0]:
                groups[-1].append(index)
            else:
                groups.append([index])
        return groups

    def _load_group(self, indices):
        entries = [self._entries[index] for index in indices]
        return [
            (arrays, entry[0].path)
            for arrays, entry in zip(self._read_sequences(entries), entries, strict=True)
        ]

    def _read(self, entry):
        return self._read_sequences([entry])[0]

    def _read_sequences(self, entries):
        """The outputs of sequences of one file (``entries``), its frames decoded once."""
        span = entries[0][0]
        positions = [self._frame_positions(span, start) for _, start in entries]
        wanted = np.unique(np.concatenate(positions))
        wanted = wanted[wanted >= 0]
        try:
            video = self._video(span.path)
            decoded = video.read_frames(wanted)
            times = video.timestamps(wanted) if self._args["enable_timestamps"] else None
        except VideoDecodeError as exc:
            reason = str(exc).removeprefix(f"{self._qualname}: ")
            raise VideoDecodeError(
                f"{self._qualname}: cannot decode video file '{span.path}': {reason}"
            ) from None
        return [
            self._outputs(span, start, frames, decoded, times, wanted)
            for (_, start), frames in zip(entries, positions, strict=True)
        ]

    def _sequence_details(self, span, start, positions, shown, times, rows):
        """The outputs after the frames, as the arguments ask for them: the label; the
        first frame number (``"scalar"``) or every one (``"sequence"``); the timestamps
        (``times[rows]`` for the frames ``shown``, -1 for padding frames)."""
        a = self._args
        details = []
        if self._has_labels:
            details.append(np.array([span.label], np.int32))
        if a["enable_frame_num"] == "scalar":
            details.append(np.array([start], np.int32))
        elif a["enable_frame_num"] == "sequence":
            details.append(positions.astype(np.int32))
        if a["enable_timestamps"]:
            stamps = np.full(len(positions), -1.0)
            stamps[shown] = times[rows]
            details.append(stamps)
        return details

    def _sequence_detail_types(self):
        """``(dtype, layout)`` of the outputs of ``_sequence_details``."""
        a = self._args
        types = [(int32, "")] if self._has_labels else []
        if a["enable_frame_num"] != "none":
            types.append((int32, ""))
        if a["enable_timestamps"]:
            types.append((float64, ""))
        return types

    @abc.abstractmethod
    def _frame_positions(self, span, start):
        """The frame numbers the sequence starting at ``start`` shows (-1: padding)."""

    @abc.abstractmethod
    def _outputs(self, span, start, positions, decoded, times, wanted):
        """The sample's outputs from its decoded frames."""
