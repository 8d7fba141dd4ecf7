"""``readers.Video`` and ``readers.VideoResize``: the reference's older video
readers (GPU-only there), decoded on the CPU with FFmpeg (PyAV); with
``device="gpu"`` their outputs are moved to the GPU."""

import math
import os

import numpy as np

from .._ops.resize import ANTIALIAS_ARG, HINT_ARGS, INTERP_ARGS, SIZE_ARG, SIZE_ARGS, SUBPIXEL_ARG
from .._ops.video import VideoDecodeError, VideoFile
from .._prepare.args import Arg, InvalidArgumentError
from .._types import float32, uint8
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

__all__ = ["Video", "VideoResize"]

_SOURCES = ("filenames", "file_root", "file_list")
_ZERO = np.uint8(0)


class Video(VideoSequenceReader):
    """Read sequences of frames from video files, decoded on the CPU with FFmpeg
    through PyAV (``pip install 'ndd[video]'``); every codec FFmpeg decodes is
    read (the reference's NVDEC reads H.264, HEVC, MPEG-4, VP8, VP9 and MJPEG).
    ``device="gpu"`` gives the same outputs on the GPU.

    The videos are one of: ``filenames`` (with ``labels``: one per file, or an
    empty list for the labels 0, 1, ...), ``file_root`` (each sub-folder is a
    class, labelled 0, 1, ... in sorted name order; the files directly in it, in
    sorted path order) or ``file_list`` (a text file of
    ``path label [start [end]]`` lines, ``label`` >= 0; relative paths are
    relative to the working directory). A file that cannot be opened as a video
    is an error, as in the reference (``experimental.readers.Video`` skips it).

    Each video (or its ``file_list`` range of frames ``[start, end)``) gives
    sequences of ``sequence_length`` frames, ``stride`` frames apart, starting
    every ``step`` frames (``step`` < 0: ``stride * sequence_length``) from its
    first frame. These rules are the older readers', not
    ``experimental.readers.Video``'s:

    - a sequence is whole when its last frame is in the range:
      ``start + stride * (sequence_length - 1) < end``;
    - with ``pad_sequences``, every further start in the range gives a sequence
      too, whose frames past the range are zeros (frame number and timestamp -1);
      without it they are left out (there is no other padding);
    - in a ``file_list``, ``start`` and ``end`` are times in seconds (read in
      single precision), translated with the video's average frame rate:
      ``ceil(start * fps)`` and ``floor(end * fps)``, or ``floor`` and ``ceil``
      with ``file_list_include_preceding_frame``; with ``file_list_frame_num``
      they are frame numbers, a fractional start rounded up and end rounded down.
      A negative value counts from the end of the video; an ``end`` of 0 (or none)
      is the end of the video; a line whose ``start`` equals its ``end`` is left
      out with a warning; a range that starts after its end or reaches past the
      video is an error.

    Unless ``skip_vfr_check``, a video whose frames are not evenly spaced in time
    (variable frame rate) is refused, as in the reference. The number of frames
    of a video is the number of frames it holds (the reference computes it from
    the stream's duration and frame rate, which agree for constant frame rates).

    Outputs, in this order: the frames (``FHWC``, uint8, or float32 with
    ``dtype=types.FLOAT``: 0 ... 255, or 0 ... 1 with ``normalized``; RGB or, with
    ``image_type=YCbCr``, BT.601 studio-range YCbCr); the label (int32, shape
    ``(1,)``; with ``labels``, ``file_root`` or ``file_list``); with
    ``enable_frame_num``, the number of the first frame (``'scalar'`` or True:
    int32, shape ``(1,)``) or of each frame (``'sequence'``: int32, shape
    ``(F,)``, -1 for a padding frame); with ``enable_timestamps``, each frame's
    time in seconds (float64, shape ``(F,)``, -1 for a padding frame). Frame
    numbers and timestamps need ``file_list`` or ``filenames`` with ``labels``, as
    in the reference. The frames' ``source_info`` is the file's path.

    Saved states are tagged ``readers.Video`` (those of ``experimental.readers.Video``
    are not accepted, nor the other way round).
    """

    DEVICES = ("cpu", "gpu")
    STATE_TAG = "readers.Video"
    ARGS = (
        Arg(
            "additional_decode_surfaces",
            "int",
            2,
            doc="Accepted for compatibility (NVDEC's decode surfaces); no effect on the CPU.",
        ),
        Arg("channels", "int", 3, doc="Channels of the frames: 3, as in the reference."),
        Arg(
            "dtype",
            "dtype",
            uint8,
            doc="Type of the frames: uint8 or float32 (see ``normalized``).",
            type_doc="DType",
        ),
        Arg(
            "enable_frame_num",
            "any",
            "none",
            doc="Add the output of frame numbers: 'none' (or False), 'scalar' (or True: the first "
            "frame's) or 'sequence' (each frame's, -1 for a padding frame).",
            type_doc="str or bool",
        ),
        Arg(
            "enable_timestamps",
            "bool",
            False,
            doc="Add the output of each frame's presentation time in seconds (-1 for a padding frame).",
        ),
        Arg("file_list", "str", "", doc="Text file of ``path label [start [end]]`` lines."),
        Arg(
            "file_list_frame_num",
            "bool",
            False,
            doc="``start`` and ``end`` of a ``file_list`` line are frame numbers, not seconds.",
        ),
        Arg(
            "file_list_include_preceding_frame",
            "bool",
            False,
            doc="Translate ``file_list`` times to frames as ``floor(start * fps)`` and "
            "``ceil(end * fps)`` instead of ``ceil`` and ``floor``.",
        ),
        Arg(
            "file_root", "str", "", doc="Folder whose sub-folders are the classes, each holding video files."
        ),
        FILENAMES_ARG,
        IMAGE_TYPE_ARG,
        Arg(
            "labels",
            "any",
            None,
            doc="One label per file of ``filenames``, or an empty list for 0, 1, ...; without it "
            "there is no label output.",
            type_doc="int or list of int",
        ),
        Arg("normalized", "bool", False, doc="Float frames in [0, 1] instead of [0, 255]."),
        Arg(
            "pad_sequences",
            "bool",
            False,
            doc="Also read the sequences that reach past the end of a video, their missing frames "
            "zeros (frame number and timestamp -1).",
        ),
        SEQUENCE_LENGTH_ARG,
        Arg(
            "skip_vfr_check",
            "bool",
            False,
            doc="Read videos whose frames are not evenly spaced in time instead of refusing them.",
        ),
        Arg(
            "step",
            "int",
            -1,
            doc="Frames between the starts of consecutive sequences; < 0: ``stride * sequence_length``.",
        ),
        STRIDE_ARG,
    )
    OUTPUTS = ("frames", "label", "frame_num", "timestamps")

    def _validate_args(self, args):
        q = self._qualname
        given = [k for k in _SOURCES if args[k]]
        if len(given) != 1:
            raise InvalidArgumentError(
                f"{q}: give exactly one of 'filenames', 'file_root' or 'file_list', got "
                f"{given or 'none of them'}"
            )
        if args["filenames"]:
            args["filenames"] = path_list(q, "filenames", args["filenames"])
        self._check_labels(args)
        for name in ("sequence_length", "stride"):
            if args[name] < 1:
                raise InvalidArgumentError(f"{q}: '{name}' must be at least 1, got {args[name]}")
        if args["step"] == 0:
            raise InvalidArgumentError(f"{q}: 'step' must not be 0 (< 0: stride * sequence_length)")
        if args["step"] < 0:
            args["step"] = args["stride"] * args["sequence_length"]
        if args["channels"] != 3:
            raise InvalidArgumentError(f"{q}: 'channels' must be 3, got {args['channels']}")
        if args["dtype"] not in (uint8, float32):
            raise InvalidArgumentError(f"{q}: 'dtype' must be uint8 or float32, got {args['dtype']}")
        args["enable_frame_num"] = frame_num_mode(q, args["enable_frame_num"])
        args["image_type"] = image_type(q, args["image_type"])
        self._has_labels = args["labels"] is not None or not args["filenames"]
        frame_info = bool(args["file_list"]) or (args["labels"] is not None)
        for name, wanted in (
            ("enable_frame_num", args["enable_frame_num"] != "none"),
            ("enable_timestamps", args["enable_timestamps"]),
        ):
            if wanted and not frame_info:
                raise InvalidArgumentError(
                    f"{q}: '{name}' needs 'file_list', or 'filenames' with 'labels', as in the reference"
                )
        self._start_decoding()

    def _check_labels(self, args):
        q = self._qualname
        labels = args["labels"]
        if labels is None:
            return
        if not args["filenames"]:
            raise InvalidArgumentError(f"{q}: 'labels' go with 'filenames' (one label per file)")
        labels = (
            [labels] if isinstance(labels, (int, np.integer)) and not isinstance(labels, bool) else labels
        )
        if not isinstance(labels, (list, tuple)) or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in labels
        ):
            raise InvalidArgumentError(f"{q}: 'labels' must be an int or a list of ints, got {labels!r}")
        count = len(args["filenames"])
        if not labels:
            labels = range(count)
        if len(labels) != count:
            raise InvalidArgumentError(
                f"{q}: 'labels' must have one label per file of 'filenames' ({count}) or none, "
                f"got {len(labels)}"
            )
        args["labels"] = [int(v) for v in labels]

    # -- listing -------------------------------------------------------------------
    def _list_samples(self):
        entries = []
        for path, label, bounds in self._files():
            entries.extend(self._sequences(self._span(path, label, bounds)))
        return entries

    def _files(self):
        """``(path, label, bounds)`` of each listed video; ``bounds`` is the file
        list's ``(start, end)`` (0 where not given) or None."""
        a = self._args
        if a["filenames"]:
            labels = a["labels"] or [0] * len(a["filenames"])
            return [(p, label, None) for p, label in zip(a["filenames"], labels, strict=True)]
        if a["file_root"]:
            files = self._class_folders(a["file_root"], _files_in)
            return [(p, label, None) for p, label in sorted(files)]
        return self._file_list(a["file_list"])

    def _file_list(self, list_path):
        # The bounds in single precision, as the reference reads them; 0 where absent.
        lines = self._file_list_lines(list_path, lambda v: float(np.float32(v)), non_negative_labels=True)
        return [(path, label, (first or 0.0, end or 0.0)) for path, label, first, end in lines]

    def _span(self, path, label, bounds):
        """The file's frames to read; errors name the file."""
        q = self._qualname
        try:
            with VideoFile(path, q) as video:
                count = video.frame_count
                frame_bytes = video.height * video.width * 3
                if not self._args["skip_vfr_check"]:
                    self._check_frame_rate(video, path)
                first, end = (0, count) if bounds is None else self._range(video, bounds)
        except (OSError, VideoDecodeError) as exc:
            reason = str(exc).removeprefix(f"{q}: ")
            raise type(exc)(f"{q}: cannot read video file '{path}': {reason}") from None
        if first > end:
            raise ValueError(
                f"{q}: the 'file_list' range of video file '{path}' starts after its end: [{first}, {end})"
            )
        if first < 0 or end > count:
            raise ValueError(
                f"{q}: the 'file_list' range [{first}, {end}) of video file '{path}' is outside its {count} frames"
            )
        return Span(path, label, first, end, frame_bytes)

    def _check_frame_rate(self, video, path):
        count = video.frame_count
        if count < 2 or not video.frame_rate:
            return
        gaps = np.diff(video.timestamps(np.arange(count)))
        # One tick of the time base is the precision of a presentation time.
        if np.any(np.abs(gaps - 1.0 / video.frame_rate) > video.time_base + 1e-9):
            raise VideoDecodeError(
                f"{self._qualname}: the frames are not evenly spaced in time (a variable frame rate); "
                "skip_vfr_check=True reads it anyway"
            )

    def _range(self, video, bounds):
        """The frames ``[first, end)`` of a file list's ``(start, end)``."""
        start, end = bounds
        count = video.frame_count
        if start == 0 and end == 0:
            return 0, count
        a = self._args
        if a["file_list_frame_num"]:
            first, last = math.ceil(start), math.floor(end)
        else:
            fps = video.frame_rate
            down = a["file_list_include_preceding_frame"]
            first = math.floor(start * fps) if down else math.ceil(start * fps)
            last = math.ceil(end * fps) if down else math.floor(end * fps)
        first = first + count if start < 0 else first
        last = last + count if end <= 0 else last
        return first, last

    def _sequences(self, span):
        """The dataset entries of one span: ``(span, first frame)`` per sequence."""
        a = self._args
        stride, length, step = a["stride"], a["sequence_length"], a["step"]
        last_whole = span.end - stride * (length - 1)
        starts = range(span.first, span.end if a["pad_sequences"] else last_whole, step)
        return [(span, start) for start in starts]

    def _dataset_description(self):
        a = self._args
        source = next(f"{k}={a[k]!r}" for k in _SOURCES if a[k])
        return (
            f"no sequence of {a['sequence_length']} frames (stride {a['stride']}) in the videos of {source}"
        )

    # -- reading ---------------------------------------------------------------------
    def _frame_positions(self, span, start):
        """The frame numbers of a sequence, -1 past the end of its range."""
        a = self._args
        positions = start + a["stride"] * np.arange(a["sequence_length"], dtype=np.int64)
        positions[positions >= span.end] = -1
        return positions

    def _outputs(self, span, start, positions, decoded, times, wanted):
        """One sequence's outputs from the ``decoded`` frames (and their ``times``)
        at the frame numbers ``wanted``."""
        a = self._args
        frames, shown, rows = gather_frames(positions, decoded, wanted, _ZERO)
        if a["image_type"] is DALIImageType.YCbCr:
            frames = to_ycbcr_frames(frames)
            frames[~shown] = 0
        if a["dtype"] == float32:
            frames = frames.astype(np.float32)
            if a["normalized"]:
                frames *= np.float32(1 / 255)
        return (frames, *self._sequence_details(span, start, positions, shown, times, rows))

    def _output_types(self):
        return [(self._args["dtype"], "FHWC"), *self._sequence_detail_types()]

    def _package(self, outputs):
        if self.device == "gpu":
            return tuple(output.gpu() for output in outputs)
        return tuple(outputs)


def _copy(spec):
    """A reader's own copy of a resize argument (the reader converts its defaults)."""
    return Arg(spec.name, spec.kind, spec.default, choices=spec.choices, doc=spec.doc, type_doc=spec.type_doc)


_RESIZE_ARGS = tuple(
    _copy(s) for s in (ANTIALIAS_ARG, *INTERP_ARGS, *HINT_ARGS, *SIZE_ARGS, SIZE_ARG, SUBPIXEL_ARG)
)
# The resize arguments that only tune the reference's GPU kernels.
_HINTS = {spec.name for spec in HINT_ARGS}
# The resize arguments a call may give (per sample with a Batch), as in the reference.
_SIZE_METHODS = {"size", "resize_x", "resize_y", "resize_z", "resize_shorter", "resize_longer"}
_CALL_ARGS = tuple(spec.name for spec in (*INTERP_ARGS, *SIZE_ARGS, SIZE_ARG) if spec.per_sample)


class VideoResize(Video):
    """Read sequences of frames from video files as ``readers.Video`` does (see
    there: the same sequences, outputs and rules), each frame resized as
    ``ndd.resize`` resizes an ``FHWC`` sequence, with the same arguments
    (``size``, ``resize_x``/``resize_y``, ``resize_shorter``/``resize_longer``,
    ``mode``, ``max_size``, ``roi_start``/``roi_end``, the filters and
    ``antialias``). Frames of ``dtype=types.FLOAT`` are converted (and normalized)
    before they are resized, as in the reference.

    The output size, the region and the filters may be given to the constructor
    (for every sequence) or to each call (``reader(batch_size=4, size=...)``; a
    Batch gives one value per sequence), not to both. The resizing runs when the
    sequences are handed out, on the caller's evaluation context.

    Saved states are tagged ``readers.VideoResize``.
    """

    STATE_TAG = "readers.VideoResize"
    ARGS = Video.ARGS + _RESIZE_ARGS

    def _validate_args(self, args):
        super()._validate_args(args)
        defaults = {spec.name: spec.converted_default for spec in _RESIZE_ARGS}
        # Only the arguments given: a call may give the others.
        self._resize_args = {
            name: args[name] for name in defaults if name not in _HINTS and args[name] != defaults[name]
        }
        self._call_resize_args = {}
        if set(self._resize_args) & _SIZE_METHODS:
            # Bad resize arguments raise now, on a small sequence.
            self._resize(np.zeros((1, 2, 2, 3), args["dtype"].numpy))

    def _resize(self, frames):
        import ndd

        if isinstance(frames, np.ndarray):
            frames = ndd.as_tensor(frames, layout="FHWC")
        try:
            return ndd.resize(frames, **self._resize_args, **self._call_resize_args)
        except InvalidArgumentError as exc:
            raise InvalidArgumentError(str(exc).replace("ndd.resize:", f"{self._qualname}:")) from None

    def _package(self, outputs):
        outputs = list(outputs)
        resized = self._resize(outputs[0])
        # The frames still come from their files.
        resized._source_info = outputs[0]._source_info
        outputs[0] = resized
        return super()._package(outputs)

    def __call__(self, *, batch_size=None, **resize_args):
        """Read the next sequence (a tuple of Tensors, or the frames alone when they
        are the only output) or, with ``batch_size``, the next batch of them.

        Parameters
        ----------
        batch_size : int, optional
            Number of sequences to read as one Batch (at most ``max_batch_size``).
        interp_type, mag_filter, min_filter, resize_longer, resize_shorter, resize_x, resize_y, resize_z, roi_end, roi_start, size : optional
            Resize arguments not given to the constructor, as ``ndd.resize`` takes
            them (a Batch: one value per sequence).
        """
        for name in resize_args:
            if name not in _CALL_ARGS:
                raise TypeError(f"VideoResize.__call__() got an unexpected keyword argument {name!r}")
            if name in self._resize_args:
                raise ValueError(
                    f"{self._qualname}: '{name}' cannot be given both to the constructor and to the call"
                )
        self._call_resize_args = {k: v for k, v in resize_args.items() if v is not None}
        try:
            return super().__call__(batch_size=batch_size)
        finally:
            self._call_resize_args = {}


def _files_in(folder):
    """The regular files (or links) directly in a class folder."""
    return [e.name for e in os.scandir(folder) if e.is_file()]
