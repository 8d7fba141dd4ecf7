"""``experimental.readers.Video``: sequences of frames of video files, decoded on
the CPU with FFmpeg (PyAV)."""

import math
import os

import numpy as np

from .._ops.video import PAD_MODES, VideoDecodeError, VideoFile, padded_index
from .._prepare.args import Arg, InvalidArgumentError
from .._prepare.storage import BatchBase, TensorBase, batch_samples, tensor_data
from .._types import uint8
from ..types import DALIImageType
from ._base import path_list
from ._video_sequences import (
    FILENAMES_ARG,
    IMAGE_TYPE_ARG,
    SEQUENCE_LENGTH_ARG,
    STRIDE_ARG,
    Span,
    VideoSequenceReader,
    frame_num_mode,
    gather_frames,
    image_type,
    to_ycbcr_frames,
)

__all__ = ["Video"]

_LIST_FORMATS = ("frames", "timestamps")
# file_list_rounding -> (round the start down, round the end down)
_ROUNDINGS = {
    "start_down_end_up": (True, False),
    "start_up_end_down": (False, True),
    "all_up": (False, False),
    "all_down": (True, True),
}


class Video(VideoSequenceReader):
    """Read sequences of frames from video files (VP8, VP9 and MJPEG as the
    reference's CPU decoder; ndd decodes whatever FFmpeg does), decoded with
    FFmpeg through PyAV (``pip install 'ndd[video]'``).

    The videos are one of: ``filenames`` (with optional ``labels``, one per file),
    ``file_root`` (each sub-folder is a class, labelled 0, 1, ... in sorted name
    order, empty ones included; every file directly in it, in sorted order; files
    directly in ``file_root`` and deeper folders are left out) or ``file_list``
    (a text file of ``path label [start [end]]`` lines; relative paths are
    relative to the working directory, as in the reference). A file that cannot
    be opened or decoded is left out with a warning, as in the reference.

    Each video (or its ``file_list`` range of frames ``[start, end)``) gives
    sequences of ``sequence_length`` frames, ``stride`` frames apart, starting
    every ``step`` frames (``step`` <= 0: ``stride * sequence_length``, one after
    the other) from its first frame. As in the reference, a sequence is whole when
    ``start + stride * sequence_length <= end`` (its last frame is then at most
    ``end - stride``); with ``pad_mode`` other than ``'none'``, the next start
    within the range gives one more sequence, whose frames past the range are
    padded: ``'constant'`` with ``fill_value`` (frame number and timestamp -1),
    ``'edge'`` by the last frame, ``'reflect_1001'`` and ``'reflect_101'`` by the
    range's frames reflected at its end (with or without repeating the last one).
    With ``uniform_sample``, each video gives one sequence of ``sequence_length``
    frames spread evenly over it: ``floor(linspace(start, end - 1, sequence_length)
    + 0.5)``, frames repeating when the video is shorter (``stride``, ``step`` and
    ``pad_mode`` do not apply). The dataset is these sequences, file after file.

    In a ``file_list``, ``start`` and ``end`` are frame numbers
    (``file_list_format='frames'``; a negative one counts from the end; a
    fraction rounds as ``file_list_rounding`` says) or times in seconds
    (``'timestamps'``: a start rounded down is the last frame shown at or before
    it, rounded up the first one at or after it; the same for the end, which is
    exclusive). The reference reads the times in single precision and truncates
    them to the stream's time base (0.08 s is then just before a frame at 0.08 s),
    and so does ndd. A line without ``start`` and ``end`` is the whole video, one
    without ``end`` runs to the end of the video; a range reaching past the end
    stops there; an empty range leaves the line out with a warning.

    Outputs, in this order: the frames (uint8, ``FHWC``, RGB or, with
    ``image_type=YCbCr``, BT.601 studio-range YCbCr computed from the RGB frames);
    the label (int32, shape ``(1,)``; with ``labels``, ``file_root`` or
    ``file_list``); with ``enable_frame_num``, the number of the first frame
    (``'scalar'`` or True: int32, shape ``(1,)``) or of each frame (``'sequence'``:
    int32, shape ``(F,)``, -1 for a constant padding frame); with
    ``enable_timestamps``, each frame's time in seconds (float64, shape ``(F,)``,
    -1 for a constant padding frame). The frames' ``source_info`` is the file's path.
    """

    NAMESPACE = "ndd.experimental.readers"
    ARGS = (
        Arg(
            "enable_frame_num",
            "any",
            "none",
            doc="Add the output of frame numbers: 'none' (or False), 'scalar' (or True: the first "
            "frame's) or 'sequence' (each frame's, -1 for a constant padding frame).",
            type_doc="str or bool",
        ),
        Arg(
            "enable_timestamps",
            "bool",
            False,
            doc="Add the output of each frame's presentation time in seconds (-1 for a constant "
            "padding frame).",
        ),
        Arg("file_list", "str", None, doc="Text file of ``path label [start [end]]`` lines."),
        Arg(
            "file_list_format",
            "str",
            "timestamps",
            choices=_LIST_FORMATS,
            doc="What ``start`` and ``end`` of a ``file_list`` line are: 'frames' (frame numbers, "
            "negative ones from the end) or 'timestamps' (seconds).",
        ),
        Arg(
            "file_list_include_end",
            "bool",
            True,
            doc="Accepted as in the reference, whose ``end`` is exclusive either way (True there "
            "also stops a range at the end of the video, which ndd always does).",
        ),
        Arg(
            "file_list_rounding",
            "str",
            "start_down_end_up",
            choices=tuple(_ROUNDINGS),
            doc="How a ``file_list`` range between frames is rounded: 'start_down_end_up', "
            "'start_up_end_down', 'all_up' or 'all_down'.",
        ),
        Arg(
            "file_root",
            "str",
            None,
            doc="Folder whose sub-folders are the classes, each holding video files.",
        ),
        FILENAMES_ARG,
        Arg(
            "fill_value",
            "int_list",
            (0,),
            doc="Value of a constant padding frame in [0, 255]: one for every channel or one per "
            "channel (3).",
        ),
        IMAGE_TYPE_ARG,
        Arg(
            "labels",
            "any",
            None,
            doc="One label per file of ``filenames`` (an int for one file); without it there is "
            "no label output.",
            type_doc="int or list of int",
        ),
        Arg(
            "pad_mode",
            "str",
            "none",
            doc="How a sequence reaching past the end of its video is completed: 'none' (it is "
            "left out), 'constant', 'edge' (or 'repeat'), 'reflect_1001' (or 'symmetric') or "
            "'reflect_101' (or 'reflect').",
        ),
        SEQUENCE_LENGTH_ARG,
        Arg(
            "step",
            "int",
            -1,
            doc="Frames between the starts of consecutive sequences; <= 0: ``stride * sequence_length``.",
        ),
        STRIDE_ARG,
        Arg(
            "uniform_sample",
            "bool",
            False,
            doc="One sequence per video, of frames spread evenly over it (``stride``, ``step`` and "
            "``pad_mode`` do not apply).",
        ),
    )
    OUTPUTS = ("frames", "label", "frame_num", "timestamps")

    def _validate_args(self, args):
        q = self._qualname
        sources = [k for k in ("filenames", "file_root", "file_list") if args[k] is not None]
        if len(sources) != 1:
            raise InvalidArgumentError(
                f"{q}: give exactly one of 'filenames', 'file_root' or 'file_list', got "
                f"{sources or 'none of them'}"
            )
        if args["filenames"] is not None:
            args["filenames"] = path_list(q, "filenames", args["filenames"])
        labels = args["labels"]
        if labels is not None:
            if args["filenames"] is None:
                raise InvalidArgumentError(f"{q}: 'labels' go with 'filenames' (one label per file)")
            labels = [labels] if isinstance(labels, int) else labels
            if not isinstance(labels, (list, tuple)) or not all(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in labels
            ):
                raise InvalidArgumentError(f"{q}: 'labels' must be an int or a list of ints, got {labels!r}")
            if len(labels) != len(args["filenames"]):
                raise InvalidArgumentError(
                    f"{q}: 'labels' must have one label per file of 'filenames' ({len(args['filenames'])}), "
                    f"got {len(labels)}"
                )
            args["labels"] = [int(v) for v in labels]
        for name in ("sequence_length", "stride"):
            if args[name] < 1:
                raise InvalidArgumentError(f"{q}: '{name}' must be at least 1, got {args[name]}")
        if args["step"] <= 0:
            args["step"] = args["stride"] * args["sequence_length"]
        args["enable_frame_num"] = frame_num_mode(q, args["enable_frame_num"])
        args["pad_mode"] = self._pad_mode(args["pad_mode"])
        fill = args["fill_value"]
        if len(fill) not in (1, 3):
            raise InvalidArgumentError(
                f"{q}: 'fill_value' must have 1 value or one per channel (3), got {len(fill)}"
            )
        if any(not 0 <= v <= 255 for v in fill):
            raise InvalidArgumentError(f"{q}: 'fill_value' must be in [0, 255], got {list(fill)}")
        args["image_type"] = image_type(q, args["image_type"])
        self._has_labels = args["labels"] is not None or args["filenames"] is None
        self._start_decoding()

    def _pad_mode(self, value):
        mode = PAD_MODES.get(value) if isinstance(value, str) else None
        if mode is None:
            raise InvalidArgumentError(
                f"{self._qualname}: 'pad_mode' must be one of {list(PAD_MODES)}, got {value!r}"
            )
        return mode

    # -- listing -------------------------------------------------------------------
    def _list_samples(self):
        entries = []
        for path, label, bounds in self._files():
            span = self._span(path, label, bounds)
            if span is not None:
                entries.extend(self._sequences(span))
        return entries

    def _files(self):
        """``(path, label, bounds)`` of each listed video; ``bounds`` is the file
        list's ``(start, end)`` (None where not given) or None."""
        a = self._args
        if a["filenames"] is not None:
            labels = a["labels"] or [-1] * len(a["filenames"])
            return [(p, label, None) for p, label in zip(a["filenames"], labels, strict=True)]
        if a["file_root"] is not None:
            return [(p, label, None) for p, label in self._class_folders(a["file_root"], _files_in)]
        return self._file_list(a["file_list"])

    def _file_list(self, list_path):
        lines = self._file_list_lines(list_path, float, non_negative_labels=False)
        return [(path, label, None if first is None else (first, end)) for path, label, first, end in lines]

    def _span(self, path, label, bounds):
        """The file's frames to read, or None (with a warning) for a file that
        cannot be read or an empty range."""
        try:
            with VideoFile(path, self._qualname) as video:
                count = video.frame_count
                frame_bytes = video.height * video.width * 3
                first, end = (0, count) if bounds is None else self._range(video, bounds)
        except (OSError, VideoDecodeError) as exc:
            self._warn(f"cannot read video file '{path}', skipping it: {exc}")
            return None
        first, end = max(first, 0), min(end, count)
        if first >= end:
            self._warn(f"empty frame range [{first}, {end}) of video file '{path}'; skipping it")
            return None
        return Span(path, label, first, end, frame_bytes)

    def _range(self, video, bounds):
        """The frames ``[first, end)`` of a file list's ``(start, end)``."""
        start, end = bounds
        count = video.frame_count
        start_down, end_down = _ROUNDINGS[self._args["file_list_rounding"]]
        if self._args["file_list_format"] == "frames":
            start = start + count if start < 0 else start
            first = math.floor(start) if start_down else math.ceil(start)
            if end is None:
                return first, count
            end = end + count if end < 0 else end
            return first, math.floor(end) if end_down else math.ceil(end)
        # Times: seconds read in single precision and truncated to the time base, as
        # the reference does; the frames' presentation times in the same units.
        shown = np.rint(video.timestamps(np.arange(count)) / video.time_base).astype(np.int64)

        def frame_at(seconds, down):
            tick = int(float(np.float32(seconds)) / video.time_base)
            if down:
                return max(int(np.searchsorted(shown, tick, side="right")) - 1, 0)
            return int(np.searchsorted(shown, tick, side="left"))

        first = frame_at(start, start_down)
        return first, count if end is None else frame_at(end, end_down)

    def _sequences(self, span):
        """The dataset entries of one span: ``(span, first frame)`` per sequence."""
        a = self._args
        if a["uniform_sample"]:
            return [(span, span.first)]
        stride, length, step = a["stride"], a["sequence_length"], a["step"]
        starts = list(range(span.first, span.end - stride * length + 1, step))
        following = starts[-1] + step if starts else span.first
        if a["pad_mode"] != "none" and following < span.end:
            starts.append(following)
        return [(span, start) for start in starts]

    def _dataset_description(self):
        a = self._args
        source = next(f"{k}={a[k]!r}" for k in ("filenames", "file_root", "file_list") if a[k] is not None)
        return (
            f"no sequence of {a['sequence_length']} frames (stride {a['stride']}) in the videos of {source}"
        )

    # -- reading ---------------------------------------------------------------------
    def _frame_positions(self, span, start):
        """The frame numbers of a sequence, -1 for a frame of ``fill_value``."""
        a = self._args
        length = a["sequence_length"]
        if a["uniform_sample"]:
            spread = np.linspace(span.first, span.end - 1, length)
            return np.floor(spread + 0.5).astype(np.int64)
        positions = start + a["stride"] * np.arange(length, dtype=np.int64)
        count = span.end - span.first
        return np.array(
            [
                p if p < span.end else _padded(p - span.first, count, a["pad_mode"], span.first)
                for p in positions
            ],
            np.int64,
        )

    def _outputs(self, span, start, positions, decoded, times, wanted):
        """One sequence's outputs from the ``decoded`` frames (and their ``times``)
        at the frame numbers ``wanted``."""
        a = self._args
        frames, shown, rows = gather_frames(positions, decoded, wanted, np.asarray(a["fill_value"], np.uint8))
        if a["image_type"] is DALIImageType.YCbCr:
            frames = to_ycbcr_frames(frames)
        return (frames, *self._sequence_details(span, start, positions, shown, times, rows))

    def _output_types(self):
        return [(uint8, "FHWC"), *self._sequence_detail_types()]

    # -- calling ------------------------------------------------------------------
    def __call__(self, *, batch_size=None, pad_mode=None):
        """Read the next sequence (a tuple of Tensors, or the frames alone when they
        are the only output) or, with ``batch_size``, the next batch of them.

        Parameters
        ----------
        batch_size : int, optional
            Number of sequences to read as one Batch (at most ``max_batch_size``).
        pad_mode : str, optional
            Accepted as in the reference, when not given to the constructor: the
            sequences are listed with the constructor's ``pad_mode`` ('none'), so
            they are whole and nothing is padded.
        """
        if pad_mode is not None:
            if self._args["pad_mode"] != "none":
                raise InvalidArgumentError(
                    f"{self._qualname}: 'pad_mode' cannot be given both to the constructor and to the call"
                )
            values = batch_samples(pad_mode) if isinstance(pad_mode, BatchBase) else [pad_mode]
            for value in values:
                self._pad_mode(_text(value))
        return super().__call__(batch_size=batch_size)


def _files_in(folder):
    """The files directly in a class folder, in sorted order."""
    return sorted(e.name for e in os.scandir(folder) if e.is_file())


def _text(value):
    """A string argument given as a str or a Tensor of its UTF-8 bytes."""
    if isinstance(value, TensorBase):
        value = np.asarray(tensor_data(value))
    if isinstance(value, np.ndarray) and value.dtype == np.uint8:
        return value.tobytes().decode()
    return value


def _padded(offset, count, pad_mode, first):
    """The frame shown at ``offset`` frames from the start of a range of ``count``
    frames starting at ``first``, or -1 for a frame of ``fill_value``."""
    position = padded_index(offset, count, pad_mode)
    return position if position < 0 else position + first
