"""``ndd.decoders.video``: decoding of encoded videos (a container file's bytes:
WebM, MP4, MKV, AVI ...) into ``FHWC`` uint8 RGB frames, with FFmpeg through PyAV
(the optional ``av`` package, ``pip install 'ndd[video]'``), imported on first use.

Codecs: every one FFmpeg decodes (H.264, HEVC, VP8, VP9, AV1, MPEG-4, MJPEG ...).
The reference's CPU decoder takes VP8, VP9 and MJPEG only (H.264, HEVC and AV1 need
its GPU decoder).

Frames are numbered in presentation order. The packets of the video stream are
indexed when a video is opened (demuxing, no decoding), and the frames asked for are
decoded from the key frame before the first of them, forward; a jump over a key
frame seeks again, so a few frames near the end do not cost decoding the whole
video, and a frame asked for twice is decoded once.

Colours: frames are converted to RGB as FFmpeg's swscale converts them with
bilinear, full horizontal chroma interpolation and accurate rounding. This gives
the reference's CPU pixels bit for bit on every VP8 and VP9 video we compared (4:2:0
and 4:4:4, odd and even sizes, BT.601 limited range); swscale's default conversion
(PyAV's ``to_ndarray(format="rgb24")``) repeats chroma samples at even sizes and
differs by up to about 100 levels there. swscale runs that conversion in scalar C
(70 µs for a 160x120 frame, 10 ms at 1280x720), so 8-bit progressive 4:2:0 frames
go through ``ndd/_cpu/yuv_rgb.pyx`` instead, which gives the same bytes 4 to 16
times faster. Their chroma siting decides the filters, and PyAV does not say it:
the first frames of a video are converted by swscale, and the one siting that
gives the same bytes converts the rest (a video where none or several do stays
with swscale). The siting learned is remembered for the process, so a video
opened again (the next call, the next epoch) converts every frame this way.

Frame selection and padding are the reference's (its pipeline API's: its dynamic
mode refuses every string ``pad_mode``, a bug not copied).

``affine`` and ``build_index`` are accepted and change nothing: there are no
decoding threads to pin, and the packet index is always built (it costs a demuxing
pass, a few percent of decoding).

Errors: a sample that cannot be decoded (corrupt, truncated, no video stream) makes
the call fail with ``VideoDecodeError`` (a RuntimeError) naming the operator and the
sample; in batch mode the other samples are still decoded and the error (the
``__cause__`` of the exception raised when the result is used) holds them in
``decoded``, with None for the samples in ``failed``.
"""

import hashlib
import io
import os
from bisect import bisect_right

import numpy as np

from .._cpu import yuv_rgb
from .._errors import SampleDecodeError
from .._memory import exceeds_half_of_memory
from .._optional import import_optional, release
from .._prepare.args import InvalidArgumentError
from .._types import uint8
from .schema import Arg, Input, Operator, batch_samples_of

__all__ = ["OPERATORS", "PAD_MODES", "VideoDecodeError", "VideoFile", "padded_index"]

_QUALNAME = "ndd.decoders.video"


class VideoDecodeError(SampleDecodeError):
    """Encoded data that is not a video FFmpeg can decode (corrupt, truncated, no
    video stream), or a frame of it that cannot be decoded.

    In batch mode, the exception raised from the run phase carries the samples that
    were decoded: ``decoded`` (one array per sample, None for the samples that
    failed) and ``failed`` (the indices of the failed samples).
    """


# The first PyAV whose reformatter takes a thread count (see VideoFile._to_rgb).
_AV_MINIMUM = (17,)
# swscale's flags for the reference's conversion: SWS_BILINEAR | SWS_FULL_CHR_H_INT |
# SWS_ACCURATE_RND, FFmpeg's stable values. PyAV names the last two only from 18 on,
# and takes the number from 17 on.
_SWS_EXACT = 0x2 | 0x2000 | 0x40000


def import_av(qualname=_QUALNAME):
    """PyAV's ``av`` module, or an ImportError saying what to install."""
    return import_optional(
        "av", f"{qualname}: decoding video needs FFmpeg through PyAV (the 'av' package)", "video", _AV_MINIMUM
    )


def _reason(exc):
    text = str(exc).strip()
    return text if text else type(exc).__name__


class VideoFile:
    """A video opened with PyAV from encoded bytes (``bytes`` or a 1-D uint8 array)
    or a file path.

    The first video stream's packets are indexed when the file is opened (demuxing
    only, nothing is decoded): frame ``i`` is the ``i``-th frame in presentation
    order, and frames are decoded from the key frame before the first one asked for.

    Parameters
    ----------
    source : bytes, numpy.ndarray or path-like
        The container's bytes, or the path of a file.
    qualname : str
        The name error messages start with.

    Raises
    ------
    VideoDecodeError
        The data cannot be opened as a video, or has no video frames.
    """

    def __init__(self, source, qualname=_QUALNAME):
        self._av = import_av(qualname)
        self.qualname = qualname
        if isinstance(source, (str, os.PathLike)):
            self._source = os.fspath(source)
        elif isinstance(source, (bytes, bytearray, memoryview)):
            self._source = bytes(source)
        else:
            self._source = np.ascontiguousarray(source, dtype=np.uint8).reshape(-1).tobytes()
        self._container = None
        self._reformatter = None
        # The chroma siting of the video's frames, once swscale's conversion of one
        # of them told it (see _learn_siting), or learned by an earlier VideoFile of
        # the same video.
        self._identity = _identity(self._source)
        self._siting = _learned_sitings.get(self._identity)
        self._sitings_left = yuv_rgb.CHROMA_LOCATIONS
        self._siting_trials = 0 if self._siting is not None else _SITING_TRIALS
        try:
            self._open()
            self._index()
        except self._av.error.FFmpegError as exc:
            self.close()
            raise VideoDecodeError(f"{qualname}: not a video that can be decoded: {_reason(exc)}") from exc
        except VideoDecodeError:
            self.close()
            raise

    def _open(self):
        source = self._source if isinstance(self._source, str) else io.BytesIO(self._source)
        # Metadata that is not UTF-8 (tags written in another encoding) does not stop
        # the frames from decoding: PyAV 19 decodes it with surrogate escapes, earlier
        # ones raise unless told to replace it.
        options = {} if release(self._av.__version__) >= (19,) else {"metadata_errors": "replace"}
        self._container = self._av.open(source, mode="r", **options)
        if not self._container.streams.video:
            raise VideoDecodeError(f"{self.qualname}: the data holds no video stream")
        self._stream = self._container.streams.video[0]
        if self._stream.codec_context is None:
            raise VideoDecodeError(
                f"{self.qualname}: not a video that can be decoded: FFmpeg has no decoder for its video "
                "stream (a damaged or unknown codec)"
            )
        # One decoding thread per video: batches decode their videos in parallel on
        # the context's thread pool already.
        self._stream.codec_context.thread_count = 1

    def _index(self):
        stream = self._stream
        pts, keys = [], []
        timed = True
        for packet in self._container.demux(stream):
            if packet.size == 0:  # the demuxer's end-of-stream marker
                continue
            if packet.pts is None:
                timed = False
            pts.append(packet.pts)
            keys.append(packet.is_keyframe)
        packet = None
        # Without timestamps the frames are numbered as the decoder gives them, and
        # every read decodes from the start.
        self._timed = timed
        if timed:
            order = np.argsort(np.asarray(pts, dtype=np.int64), kind="stable")
            self._pts = [pts[i] for i in order]
            self._position = {p: i for i, p in enumerate(self._pts)}
            self._keys = [i for i, src in enumerate(order) if keys[src]] or [0]
            self.frame_count = len(self._position)
        else:
            self._pts = None
            self._keys = [0]
            self.frame_count = sum(1 for _ in self._decode_from_start())
        if self.frame_count == 0:
            raise VideoDecodeError(f"{self.qualname}: the video has no frames")
        # Counting the frames of a raw stream reopened the container: its old stream
        # (and the last packet read from it) are gone, and must not be touched.
        stream = self._stream
        context = stream.codec_context
        self.height = int(context.height)
        self.width = int(context.width)
        self.time_base = float(stream.time_base) if stream.time_base else 0.0
        # The time base as a fraction: a timestamp is the correctly rounded pts * num / den.
        base = stream.time_base
        self._time_base_ratio = (base.numerator, base.denominator) if base else (0, 1)
        rate = stream.average_rate or stream.guessed_rate or stream.base_rate
        self.frame_rate = float(rate) if rate else 0.0

    def _decode_from_start(self):
        # Reopened rather than sought: raw streams (H.264 Annex B, say) cannot seek.
        self._container.close()
        self._open()
        return self._container.decode(self._stream)

    def _to_rgb(self, frame):
        # swscale's default (bilinear) takes a fast path for even sizes that
        # repeats chroma samples; full chroma interpolation with accurate rounding
        # interpolates them, as the reference's decoder does, for every size.
        # One reformatter per video keeps swscale's context (its filters are costly
        # to set up) from frame to frame.
        if self._reformatter is None:
            self._reformatter = self._av.video.reformatter.VideoReformatter()
        # One swscale thread: a context with slice threads hangs when it is freed in a
        # forked child (its threads were not forked), and batches convert their videos
        # in parallel already.
        rgb = self._reformatter.reformat(
            frame,
            format="rgb24",
            interpolation=_SWS_EXACT,
            threads=1,
        )
        return rgb.to_ndarray()

    def _check_indices(self, indices):
        indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        bad = indices[(indices < 0) | (indices >= self.frame_count)]
        if bad.size:
            raise IndexError(
                f"{self.qualname}: frame {int(bad[0])} is out of range for a video of {self.frame_count} frames"
            )
        return indices

    def read_frames(self, indices, out=None, rows=None):
        """The frames at ``indices`` (any order, repeats allowed): a uint8 array
        ``(len(indices), height, width, 3)`` of RGB, or, given ``out`` (and the rows of
        ``out`` the frames go to, ``rows``), written there. Each frame is decoded and
        converted once, into its first row."""
        indices = self._check_indices(indices)
        if out is None:
            out = np.empty((len(indices), self.height, self.width, 3), np.uint8)
        targets = {}
        for row, i in zip(range(len(indices)) if rows is None else rows, indices.tolist(), strict=True):
            targets.setdefault(i, []).append(row)

        def store(position, frame):
            first, *others = targets[position]
            self._convert_into(frame, out[first])
            for row in others:
                out[row] = out[first]

        try:
            self._decode_wanted(sorted(targets), store)
        except self._av.error.FFmpegError as exc:
            raise VideoDecodeError(f"{self.qualname}: the video cannot be decoded: {_reason(exc)}") from exc
        return out

    def _decode_wanted(self, wanted, store):
        done = set()
        if self._timed:
            self._decode_seeking(wanted, store, done)
        missing = [i for i in wanted if i not in done]
        if missing:
            # A seek that lands after its frame, or frames without timestamps: decode
            # everything from the start, counting frames.
            needed = set(missing)
            for position, frame in enumerate(self._decode_from_start()):
                if position > missing[-1]:
                    break
                if position in needed and position not in done:
                    store(position, frame)
                    done.add(position)
            missing = [i for i in missing if i not in done]
        if missing:
            raise VideoDecodeError(f"{self.qualname}: frame {missing[0]} of the video cannot be decoded")

    def _convert_into(self, frame, dest):
        """Write the RGB of decoded ``frame`` into ``dest`` (height, width, 3)."""
        if (frame.height, frame.width) != (self.height, self.width):
            raise VideoDecodeError(
                f"{self.qualname}: the frame size changes within the video, from "
                f"{self.height}x{self.width} to {frame.height}x{frame.width}"
            )
        yuv = _yuv420p(frame)
        if yuv is not None and self._siting is not None:
            planes, colors = yuv
            yuv_rgb.yuv420p_to_rgb(*planes, dest, *colors, self._siting)
            return
        dest[...] = self._to_rgb(frame)
        if yuv is not None and self._siting_trials:
            self._learn_siting(*yuv, dest)

    def _learn_siting(self, planes, colors, rgb):
        """Keep the chroma sitings whose conversion of ``planes`` gives swscale's
        ``rgb``: one left is the video's. A frame of flat chroma may not tell them
        apart; after _SITING_TRIALS such frames, or none matching, swscale goes on."""
        self._siting_trials -= 1
        trial = np.empty_like(rgb)
        matching = []
        for siting in self._sitings_left:
            try:
                yuv_rgb.yuv420p_to_rgb(*planes, trial, *colors, siting)
            except ValueError:  # a frame size whose filters swscale rounds otherwise
                matching = []
                break
            if np.array_equal(trial, rgb):
                matching.append(siting)
        self._sitings_left = tuple(matching)
        if len(matching) == 1:
            self._siting = matching[0]
            _remember_siting(self._identity, self._siting)
        elif not matching:
            self._siting_trials = 0

    def _key_before(self, index):
        return self._keys[max(bisect_right(self._keys, index) - 1, 0)]

    def _decode_seeking(self, wanted, store, done):
        pending = 0  # wanted[pending] is the next frame to get
        while pending < len(wanted):
            key = self._key_before(wanted[pending])
            self._container.seek(self._pts[key], stream=self._stream, backward=True)
            last = -1
            for frame in self._container.decode(self._stream):
                position = self._position.get(frame.pts)
                if position is None:
                    continue
                last = position
                if position == wanted[pending]:
                    store(position, frame)
                    done.add(position)
                    pending += 1
                    if pending == len(wanted):
                        return
                if position > wanted[pending]:
                    return  # lost to the seek: decoded from the start instead
                # Past a key frame, seeking to the next wanted frame's key frame skips
                # the frames in between.
                if self._key_before(wanted[pending]) > max(last + 1, key):
                    break
            else:
                return

    def timestamps(self, indices):
        """Presentation times in seconds (the stream's timestamps times its time
        base) of the frames at ``indices``: float64."""
        indices = self._check_indices(indices)
        if not self._timed:
            rate = self.frame_rate or 1.0
            return indices.astype(np.float64) / rate
        numerator, denominator = self._time_base_ratio
        pts = np.asarray(self._pts, dtype=np.float64)[indices]
        # As the reference: 700 ticks of 1/1000 s are 0.7, where 700 * 0.001 is 0.7000000000000001.
        return pts * numerator / denominator

    def close(self):
        """Release FFmpeg's resources (the object cannot read afterwards)."""
        if self._container is not None:
            self._container.close()
            self._container = None
        self._reformatter = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


# -- decoders.video -------------------------------------------------------------------

# pad_mode names; the aliases name the same padding.
PAD_MODES = {
    "none": "none",
    "constant": "constant",
    "edge": "edge",
    "repeat": "edge",
    "reflect_1001": "reflect_1001",
    "symmetric": "reflect_1001",
    "reflect_101": "reflect_101",
    "reflect": "reflect_101",
}
_RANGE_ARGS = ("start_frame", "sequence_length", "stride", "end_frame")


def _where(index):
    return "" if index is None else f" (sample {index})"


def padded_index(position, count, pad_mode):
    """The frame shown at ``position`` of a video of ``count`` frames, or -1 for a
    frame of ``fill_value``."""
    if 0 <= position < count:
        return position
    if pad_mode == "constant":
        return -1
    if pad_mode == "edge":
        return min(max(position, 0), count - 1)
    if pad_mode == "reflect_1001":  # ABC -> ABCCBA: the edge frame repeats
        period = 2 * count
        position %= period
        return position if position < count else period - 1 - position
    if count == 1:  # reflect_101: ABC -> ABCBA
        return 0
    period = 2 * count - 2
    position %= period
    return position if position < count else period - position


def frame_selection(count, args, index=None, qualname=_QUALNAME, frame_bytes=0):
    """The frames of one sample of ``decoders.video`` (``args`` holds its
    arguments): frame indices in output order, -1 for a frame of ``fill_value``.
    ``count`` is the video's number of frames; ``index`` the sample's (for errors);
    ``frame_bytes`` the size of one output frame, by which a selection too large for
    the memory is refused before it is listed."""
    pad_mode = PAD_MODES.get(args["pad_mode"])
    if pad_mode is None:
        raise InvalidArgumentError(
            f"{qualname}: 'pad_mode' must be one of {list(PAD_MODES)}, got {args['pad_mode']!r}{_where(index)}"
        )
    if args["frames"] is not None:
        wanted = [int(f) for f in args["frames"]]
        if pad_mode == "none" and any(not 0 <= f < count for f in wanted):
            bad = next(f for f in wanted if not 0 <= f < count)
            raise InvalidArgumentError(
                f"{qualname}: 'frames' holds frame {bad}, outside the video's {count} frames{_where(index)}; "
                "give a 'pad_mode' other than 'none' to pad"
            )
        _refuse_oversized(len(wanted), frame_bytes, args, index, qualname)
        return [padded_index(f, count, pad_mode) for f in wanted]
    start = 0 if args["start_frame"] is None else args["start_frame"]
    stride = 1 if args["stride"] is None else args["stride"]
    if stride <= 0:
        raise InvalidArgumentError(f"{qualname}: 'stride' must be positive, got {stride}{_where(index)}")
    if start >= count:
        raise InvalidArgumentError(
            f"{qualname}: 'start_frame' must be less than the video's {count} frames, got {start}{_where(index)}"
        )
    if args["sequence_length"] is not None:
        length = args["sequence_length"]
        if length < 0:
            raise InvalidArgumentError(
                f"{qualname}: 'sequence_length' must not be negative, got {length}{_where(index)}"
            )
    else:
        end = count if args["end_frame"] is None else args["end_frame"]
        if end <= start:
            raise InvalidArgumentError(
                f"{qualname}: 'end_frame' must be greater than 'start_frame' ({start}), got {end}{_where(index)}"
            )
        length = (end - start + stride - 1) // stride
    if pad_mode == "none":
        # As in the reference: a range running past the end is cut short, one
        # starting before the first frame is an error.
        if start < 0:
            raise InvalidArgumentError(
                f"{qualname}: 'start_frame' {start} is before the first frame and 'pad_mode' is 'none'"
                f"{_where(index)}"
            )
        length = min(length, (count - start + stride - 1) // stride)
    _refuse_oversized(length, frame_bytes, args, index, qualname)
    return [padded_index(start + i * stride, count, pad_mode) for i in range(length)]


def _refuse_oversized(length, frame_bytes, args, index, qualname):
    """Refuses a selection of ``length`` frames of ``frame_bytes`` each that would fill
    more than half of the memory, naming the argument that sets its length."""
    if not exceeds_half_of_memory(length * frame_bytes):
        return
    given = [name for name in ("frames", "sequence_length", "end_frame") if args[name] is not None]
    source = f"'{given[0]}' asks for" if given else "the video has"
    raise InvalidArgumentError(
        f"{qualname}: {source} {length} frames of {frame_bytes} bytes{_where(index)}, more than half of "
        "this machine's memory"
    )


# Frames of a video converted by swscale to learn its chroma siting (see VideoFile._learn_siting).
_SITING_TRIALS = 3
# The sitings learned in this process, by video (see _identity): each call of
# decoders.video opens its videos anew, and learning costs a swscale conversion and
# six trial ones (0.3 ms for a 160x120 video, an eighth of decoding a few frames).
_learned_sitings = {}
_MOST_LEARNED = 4096
# Bytes from each end of an encoded video that tell videos apart: a container's
# headers and its first and last frames.
_IDENTITY_BYTES = 1 << 16


def _identity(source):
    """What identifies a video for the sitings learned: a file's path, size and
    modification time, or the length of encoded bytes and a digest of their two ends
    (two different videos with the same length and the same first and last 64 KiB
    do not occur)."""
    if isinstance(source, str):
        try:
            status = os.stat(source)
        except OSError:
            return None
        return ("file", os.path.realpath(source), status.st_size, status.st_mtime_ns)
    ends = (
        source if len(source) <= 2 * _IDENTITY_BYTES else source[:_IDENTITY_BYTES] + source[-_IDENTITY_BYTES:]
    )
    return ("bytes", len(source), hashlib.blake2b(ends, digest_size=16).digest())


def _remember_siting(identity, siting):
    if identity is None:
        return
    if len(_learned_sitings) >= _MOST_LEARNED:
        _learned_sitings.pop(next(iter(_learned_sitings)))  # the oldest
    _learned_sitings[identity] = siting


# Side data under which swscale may map colours (HDR): such frames stay with swscale.
_HDR_SIDE_DATA = frozenset(("MASTERING_DISPLAY_METADATA", "DYNAMIC_HDR_PLUS"))


def _yuv420p(frame):
    """``((y, u, v), (colorspace, color_range))`` of a PyAV frame that ``yuv_rgb`` converts
    as swscale does (8-bit, 4:2:0, progressive, a colorspace and range it knows, no
    HDR side data); None for any other frame."""
    name = frame.format.name
    # swscale converts the two fields of an interlaced frame apart.
    if name not in ("yuv420p", "yuvj420p") or frame.interlaced_frame:
        return None
    color_range = yuv_rgb.FULL_RANGE if name == "yuvj420p" else frame.color_range
    if not yuv_rgb.supported(frame.colorspace, color_range):
        return None
    # PyAV 19 lists the side data by type, earlier ones as objects that have a type.
    if any(getattr(getattr(data, "type", data), "name", None) in _HDR_SIDE_DATA for data in frame.side_data):
        return None
    planes = []
    for plane in frame.planes[:3]:
        data = np.frombuffer(plane, np.uint8)
        # A plane stored bottom-up (a negative line size) or shorter than its rows.
        if plane.line_size < plane.width or data.size < plane.line_size * plane.height:
            return None
        planes.append(data[: plane.line_size * plane.height].reshape(plane.height, -1)[:, : plane.width])
    return planes, (frame.colorspace, color_range)


def _fill_frame(fill_value, height, width, index):
    values = np.asarray(fill_value, dtype=np.int64)
    if values.size not in (1, 3):
        raise InvalidArgumentError(
            f"{_QUALNAME}: 'fill_value' must have 1 value or one per channel (3), got {values.size}{_where(index)}"
        )
    return np.broadcast_to(values.astype(np.uint8), (height, width, 3))


def decode_video(data, args, index=None):
    """The frames of one encoded video chosen by the arguments of ``decoders.video``
    in ``args``: uint8 ``(F, H, W, 3)``."""
    with VideoFile(data, _QUALNAME) as video:
        chosen = frame_selection(video.frame_count, args, index, frame_bytes=video.height * video.width * 3)
        out = np.empty((len(chosen), video.height, video.width, 3), np.uint8)
        rows = [row for row, i in enumerate(chosen) if i >= 0]
        if len(rows) < len(chosen):
            out[np.asarray(chosen) < 0] = _fill_frame(args["fill_value"], video.height, video.width, index)
        if rows:
            video.read_frames([chosen[row] for row in rows], out, rows)
        return out


def _failure(exc, index):
    text = _reason(exc)
    if text.startswith(_QUALNAME):
        text = text[len(_QUALNAME) :].lstrip(": ")
    return f"{_QUALNAME}: cannot decode{_where(index)}: {text}"


def _video_prepare(ins, args):
    data = ins[0]
    if data._dtype is not uint8:
        raise InvalidArgumentError(
            f"{_QUALNAME}: the input must be encoded video bytes (uint8), got {data._dtype}"
        )
    if data.ndim != 1:
        raise InvalidArgumentError(
            f"{_QUALNAME}: the input must be 1-D encoded video bytes, got {data.ndim}-D data"
        )
    if args["frames"] is not None:
        others = [name for name in _RANGE_ARGS if args[name] is not None]
        if others:
            raise InvalidArgumentError(
                f"{_QUALNAME}: 'frames' cannot be given with {', '.join(repr(n) for n in others)}"
            )
    if args["sequence_length"] is not None and args["end_frame"] is not None:
        raise InvalidArgumentError(f"{_QUALNAME}: 'sequence_length' and 'end_frame' cannot be given together")
    fill = args["fill_value"]
    if fill is not None:
        if len(fill) not in (1, 3):
            raise InvalidArgumentError(
                f"{_QUALNAME}: 'fill_value' must have 1 value or one per channel (3), got {len(fill)}"
            )
        if any(not 0 <= v <= 255 for v in fill):
            raise InvalidArgumentError(f"{_QUALNAME}: 'fill_value' must be in [0, 255], got {list(fill)}")
    import_av(_QUALNAME)


def _video_types(ins, args):
    return [(uint8, "FHWC")]


def _video_kernel(arrays, args):
    try:
        return decode_video(arrays[0], args)
    except (VideoDecodeError, IndexError) as exc:
        raise VideoDecodeError(_failure(exc, None)) from exc


def _video_batch(inputs, sample_args, batch_size, ctx):
    """Decode the samples on the thread pool (FFmpeg decodes without the GIL); a
    video that cannot be decoded does not stop the others."""
    samples = batch_samples_of(inputs[0], batch_size)

    def one(i):
        try:
            return decode_video(samples[i], sample_args[i], i), None
        except (VideoDecodeError, InvalidArgumentError, IndexError) as exc:
            return None, exc

    results = ctx.thread_pool.map(one, range(batch_size))
    failed = [i for i, (_, exc) in enumerate(results) if exc is not None]
    if failed:
        first = failed[0]
        exc = results[first][1]
        if isinstance(exc, InvalidArgumentError) and len(failed) == batch_size:
            raise exc
        message = str(exc) if isinstance(exc, InvalidArgumentError) else _failure(exc, first)
        raise VideoDecodeError.for_batch(message, decoded=[r for r, _ in results], failed=failed) from exc
    return [[r for r, _ in results]]


def _selection_arg(name, doc):
    return Arg(name, "int", None, per_sample=True, doc=doc, type_doc="int or Tensor/Batch of int")


DECODE_VIDEO = Operator(
    "video",
    module="ndd.decoders",
    inputs=[Input("encoded", doc="Encoded videos: the bytes of a container file (1-D uint8).")],
    args=[
        Arg(
            "affine",
            "bool",
            True,
            doc="Accepted for compatibility: the reference pins its GPU decoder's threads to CPU cores. "
            "No effect here.",
            type_doc="bool",
        ),
        Arg(
            "build_index",
            "bool",
            True,
            doc="Accepted for compatibility: the packets are always indexed when a video is opened "
            "(demuxing only), which is what lets frames be reached by seeking.",
            type_doc="bool",
        ),
        _selection_arg(
            "end_frame",
            "Frame after the last one taken (exclusive; default: the number of frames). "
            "Not with ``frames`` or ``sequence_length``.",
        ),
        Arg(
            "fill_value",
            "int_list",
            [0],
            doc="The value of padding frames with ``pad_mode='constant'``: one value for every channel "
            "or one per channel (R, G, B), each in [0, 255].",
            type_doc="int or list of int",
        ),
        Arg(
            "frames",
            "int_list",
            None,
            per_sample=True,
            doc="The frames to take, in any order, repeats allowed. Indices outside the video are padded "
            "as ``pad_mode`` says. Not with ``start_frame``, ``end_frame``, ``sequence_length`` or ``stride``.",
            type_doc="int or list of int or Tensor/Batch of int",
        ),
        Arg(
            "pad_mode",
            "str",
            "constant",
            per_sample=True,
            doc="What takes the place of frames outside the video: ``'none'`` (a range is cut at the "
            "end of the video; frames before it, or outside it in ``frames``, are an error), ``'constant'`` (frames of ``fill_value``), ``'edge'`` or "
            "``'repeat'`` (the nearest frame: ABC -> ABCCC), ``'reflect_1001'`` or ``'symmetric'`` "
            "(ABC -> ABCCBA), ``'reflect_101'`` or ``'reflect'`` (ABC -> ABCBA).",
            type_doc="str or Tensor/Batch of str",
        ),
        _selection_arg(
            "sequence_length",
            "The number of frames to take from ``start_frame`` every ``stride`` frames. Not with ``frames`` "
            "or ``end_frame``.",
        ),
        _selection_arg("start_frame", "The first frame to take (default 0). Not with ``frames``."),
        _selection_arg("stride", "The step between frames taken (default 1), positive. Not with ``frames``."),
    ],
    prepare_args=_video_prepare,
    infer_types=_video_types,
    kernel=_video_kernel,
    batch_kernel=_video_batch,
    doc="Decode encoded videos into sequences of RGB frames, ``(F, H, W, 3)`` uint8."
    "\n\nWithout selection arguments every frame is decoded. ``frames`` picks frames by index; "
    "``start_frame``, ``stride`` and ``end_frame`` or ``sequence_length`` pick a range. Frames past the "
    "end of the video are padded as ``pad_mode`` says. Any codec FFmpeg decodes is taken (H.264, HEVC, "
    "VP8, VP9, AV1, MPEG-4, MJPEG ...); the reference's CPU decoder takes VP8, VP9 and MJPEG only. "
    "Needs PyAV: ``pip install 'ndd[video]'``.",
)

OPERATORS = [DECODE_VIDEO]
