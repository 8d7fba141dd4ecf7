"""Image decoding and reading files: ``ndd.decoders.image``, ``image_crop``,
``image_random_crop``, ``image_slice`` (and their deprecated aliases in
``ndd.experimental.decoders``), ``ndd.peek_image_shape`` (and
``ndd.experimental.peek_image_shape``), ``ndd.decoders.numpy``, ``ndd.decoders.inflate`` and ``ndd.io.file.read``.

Images are decoded by ``image_codec.py`` (JPEGs with libjpeg-turbo: whole images
by simplejpeg, windows by ``ndd/_cpu/jpeg_region.pyx``; PNGs inflated by ISA-L, or
zlib, and unfiltered by ndd; uncompressed TIFFs copied from their strips and
Deflate-compressed ones inflated the same way; the rows of uncompressed BGR and gray
BMPs copied from the file; still WebPs by OpenCV's libwebp, and JP2 files of 8-bit
gray or RGB or 16-bit gray by OpenCV's OpenJPEG, where the ``opencv`` extra is
installed, which ``NDD_DECODE_WITH_OPENCV=0`` turns off; everything else, and the
files these refuse, with Pillow), one sample per task on the context's thread pool;
the decoders release the GIL. The pixels are Pillow's in every case. The crop
decoders decode only the window of a JPEG, as the reference does: rows above it are
skipped without their inverse DCT, rows below it and the blocks beside it are not
decoded, and the pixels are those of a whole decode. Other formats are decoded whole and the window is cut out before colours
are converted, so only its pixels are converted and copied.

Errors: a sample that cannot be decoded (corrupt, truncated, unknown format) makes
the call fail with ``ImageDecodeError`` (a RuntimeError) naming the operator, the
sample's index in the batch and, for data from a reader, its file. In batch mode the
other samples are still decoded: the error (the ``__cause__`` of the exception
raised when the result is used) holds them in ``decoded``, with None for the
samples in ``failed``. The reference loses the whole batch.

Arguments of the reference's GPU decoder (memory paddings, hardware decoder load,
caches, hints, ``jpeg_fancy_upsampling``, ``affine``) are accepted and have no
effect on the CPU; ``use_fast_idct`` selects libjpeg-turbo's fast IDCT, as the
reference's CPU decoder does.
"""

import math
import os

import lz4.block
import numpy as np

from .._errors import SampleDecodeError
from .._prepare.args import InvalidArgumentError
from .._prepare.invocation import PendingArg, PerSample
from .._prepare.storage import TensorBase, batch_samples, tensor_data
from .._types import dtype as to_dtype
from .._types import float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64
from ..readers._npy_format import _FormatError, _UnsupportedArray, header_of
from ..readers.file import read_file_bytes
from ..types import DALIImageType, enum_value
from . import image_codec
from .conversions import cast_array, round_half_away
from .crop import check_crop_position
from .gpu_decoding import GpuImageDecoder
from .gpu_inflate import GpuInflate
from .image_codec import ImageDecodeError
from .random_ops import CROP_ASPECT_RATIO_DEFAULT, RNG_ARG, _crop_windows
from .schema import Arg, Input, Operator, batch_samples_of, given
from .slicing import named_window, positional_window

__all__ = ["OPERATORS", "ImageDecodeError"]

# The types the reference decodes to and gives shapes in.
_OUTPUT_DTYPES = (uint8, int8, uint16, int16, uint32, int32, float32)
_SHAPE_DTYPES = (int32, uint32, int64, uint64, float32, float64)
_SOURCES = "_sources"


def _no_effect(name, kind, default, doc="Accepted for compatibility; no effect on the CPU."):
    return Arg(name, kind, default, doc=doc, type_doc=kind)


# The reference's decoder arguments that only tune its GPU decoder.
_GPU_TUNING = [
    _no_effect("affine", "bool", True),
    _no_effect("device_memory_padding", "int", 16777216),
    _no_effect("device_memory_padding_jpeg2k", "int", 0),
    _no_effect("host_memory_padding", "int", 8388608),
    _no_effect("host_memory_padding_jpeg2k", "int", 0),
    _no_effect("hw_decoder_load", "float", 0.65),
    _no_effect("hybrid_huffman_threshold", "int", 1000000),
    _no_effect(
        "jpeg_fancy_upsampling",
        "bool",
        False,
        doc="Accepted for compatibility; JPEG chroma is always upsampled as Pillow (libjpeg-turbo) does, "
        "which is what the reference's CPU decoder gives.",
    ),
    _no_effect("memory_stats", "bool", False, doc="Deprecated; no effect."),
    _no_effect("preallocate_height_hint", "int", 0),
    _no_effect("preallocate_width_hint", "int", 0),
    _no_effect("split_stages", "bool", False, doc="Deprecated; no effect."),
    _no_effect("use_chunk_allocator", "bool", False, doc="Deprecated; no effect."),
    Arg(
        "use_fast_idct",
        "bool",
        False,
        doc="Decode JPEGs with libjpeg-turbo's fast integer IDCT instead of the accurate one: "
        "a few percent faster, values off by a few levels.",
        type_doc="bool",
    ),
]
_CACHE_ARGS = [
    _no_effect("cache_batch_copy", "bool", True),
    _no_effect("cache_debug", "bool", False),
    _no_effect("cache_size", "int", 0),
    _no_effect("cache_threshold", "int", 0),
    _no_effect("cache_type", "str", ""),
]
_DECODE_ARGS = [
    Arg(
        "adjust_orientation",
        "bool",
        True,
        doc="Apply the EXIF orientation of the image (rotations and mirrorings).",
        type_doc="bool",
    ),
    Arg(
        "dtype",
        "dtype",
        uint8,
        doc="Output type: uint8, int8, uint16, int16, uint32, int32 or float32. Values are scaled "
        "to the type's range (float32: [0, 1]).",
        type_doc="DType",
    ),
    Arg(
        "output_type",
        "any",
        DALIImageType.RGB,
        doc="Colour space of the output (``ndd.types``): RGB, BGR, GRAY (one channel), YCbCr "
        "(ITU-R BT.601) or ANY_DATA (the channels stored in the file).",
        type_doc="DALIImageType",
    ),
]


def _signature_order(args):
    """Keyword arguments in the reference's order: by name, ``rng`` last."""
    return sorted(args, key=lambda a: (a.name == "rng", a.name))


def _require_encoded_bytes(op_name, data):
    """Encoded images are bytes: a uint8 (or int8) input."""
    if not data._dtype.is_integer or data._dtype.bits != 8:
        raise InvalidArgumentError(
            f"{op_name}: the input must be encoded image bytes (uint8), got {data._dtype}"
        )


def _decode_prepare(op_name):
    def prepare(ins, args):
        _require_encoded_bytes(op_name, ins[0])
        try:
            args["output_type"] = enum_value(args["output_type"], DALIImageType)
        except (TypeError, ValueError) as exc:
            raise InvalidArgumentError(
                f"{op_name}: 'output_type' must be an image type such as ndd.types.RGB, "
                f"got {args['output_type']!r}"
            ) from exc
        if args["dtype"] not in _OUTPUT_DTYPES:
            raise InvalidArgumentError(
                f"{op_name}: 'dtype' must be one of {', '.join(map(str, _OUTPUT_DTYPES))}, got {args['dtype']}"
            )
        args[_SOURCES] = ins[0]._source_info

    return prepare


def _image_types(ins, args):
    return [(args["dtype"], "HWC")]


def _describe_source(args, index):
    """' (sample 3, file a/b.jpg)' for error messages."""
    parts = []
    if index is not None:
        parts.append(f"sample {index}")
    sources = args.get(_SOURCES)
    if isinstance(sources, list):
        sources = sources[index] if index is not None and index < len(sources) else None
    if sources:
        parts.append(f"file {sources}")
    return f" ({', '.join(parts)})" if parts else ""


def _reason(exc):
    """What went wrong, for a message: an exception's text, or its kind when it has
    none (a MemoryError of a huge image has no text)."""
    text = str(exc)
    return text if text else ("out of memory" if isinstance(exc, MemoryError) else type(exc).__name__)


def _failure(qualname, exc, source):
    """The message of a sample that failed: its window's arguments (their error names
    the operator), or its decoding."""
    if isinstance(exc, InvalidArgumentError):
        return f"{_reason(exc)}{source}"
    return f"{qualname}: cannot decode{source}: {_reason(exc)}"


def _run_samples(qualname, decode_one, inputs, sample_args, batch_size, ctx):
    """Decode every sample on the thread pool; collect the failures so that one bad
    image does not discard the others."""
    data = inputs[0]
    samples = batch_samples_of(data, batch_size)

    def one(i):
        try:
            return decode_one(samples[i], sample_args[i], i), None
        except Exception as exc:  # any decoder failure is reported per sample
            return None, exc

    results = ctx.thread_pool.map(one, range(batch_size))
    failed = [i for i, (_, exc) in enumerate(results) if exc is not None]
    if failed:
        first = failed[0]
        exc = results[first][1]
        raise ImageDecodeError.for_batch(
            _failure(qualname, exc, _describe_source(sample_args[first], first)),
            decoded=[r for r, _ in results],
            failed=failed,
        ) from exc
    return [[r for r, _ in results]]


def _sample_kernel(qualname, decode_one):
    def kernel(arrays, args):
        try:
            return decode_one(arrays[0], args, None)
        except Exception as exc:
            raise ImageDecodeError(_failure(qualname, exc, _describe_source(args, None))) from exc

    return kernel


def _decoder(name, module, *, extra_args, window, inputs=None, prepare_extra=None, doc, cache_args=False):
    """An image decoder operator. ``window(qualname, (H, W), data, args, index)`` gives
    the (y, x, h, w) window to decode in the oriented image of ``data`` (sample
    ``index`` of the batch, None in sample mode); without it the whole image is decoded."""
    qualname = f"{module}.{name}"
    base_prepare = _decode_prepare(qualname)

    def prepare(ins, args):
        base_prepare(ins, args)
        if prepare_extra is not None:
            prepare_extra(qualname, ins, args)

    def decode_one(data, args, index):
        image = image_codec.open_image(data)
        orient = image_codec.orientation(image) if args["adjust_orientation"] else 1
        region = None
        if window is not None:
            size = image_codec.oriented_size(image, orient)
            region = window(qualname, size, data, args, index)
        return image_codec.decode(
            image,
            data,
            output_type=args["output_type"],
            dtype=args["dtype"].numpy,
            orient=orient,
            window=region,
            fast_idct=args["use_fast_idct"],
        )

    def batch_kernel(inputs, sample_args, batch_size, ctx):
        return _run_samples(qualname, decode_one, inputs, sample_args, batch_size, ctx)

    args = _DECODE_ARGS + _GPU_TUNING + (_CACHE_ARGS if cache_args else []) + extra_args
    op = Operator(
        name,
        module=module,
        inputs=inputs or [Input("input", doc="Encoded images (uint8 bytes of a file).")],
        args=_signature_order(args),
        prepare_args=prepare,
        infer_types=_image_types,
        kernel=_sample_kernel(qualname, decode_one),
        batch_kernel=batch_kernel,
        doc=doc,
    )
    op.gpu_kernel = GpuImageDecoder(op, window, _describe_source)
    return op


# -- image_crop ------------------------------------------------------------------------


def _anchor(position, free, rounding):
    """The window's start for a relative ``position`` with ``free`` pixels to spare.
    The reference takes the position in single precision: 0.7 * 25 is 17.4999..."""
    value = float(np.float32(position)) * free
    if rounding == "truncate":
        return math.floor(value)
    return math.floor(value + 0.5)


def _crop_prepare(qualname, ins, args):
    crop = args["crop"]
    if isinstance(crop, tuple):
        _crop_extents(qualname, crop)
    # As in the reference, presence counts: crop_w=0 is a width (the whole one).
    given_w = given(args, _CROP_SPECS["crop_w"])
    given_h = given(args, _CROP_SPECS["crop_h"])
    if crop is not None and (given_w or given_h):
        raise InvalidArgumentError(f"{qualname}: 'crop' and 'crop_w'/'crop_h' are mutually exclusive")
    if crop is None and given_w != given_h:
        raise InvalidArgumentError(f"{qualname}: 'crop_w' and 'crop_h' must be given together")
    if given(args, _CROP_SPECS["crop_d"]) and not (given_w and given_h):
        raise InvalidArgumentError(f"{qualname}: 'crop_d' must be given together with 'crop_w' and 'crop_h'")
    for name in ("crop_pos_x", "crop_pos_y"):
        if type(args[name]) is float:
            check_crop_position(qualname, name, args[name])


def _crop_extents(qualname, crop):
    """(height, width) of ``crop``: 2 values, or 3 (a volume's depth first, which an
    image does not have: ignored, as in the reference)."""
    if len(crop) not in (2, 3):
        raise InvalidArgumentError(
            f"{qualname}: 'crop' must have 2 values (height, width) or 3 (depth, height, width), got {list(crop)}"
        )
    return crop[-2], crop[-1]


def _crop_window(qualname, size, data, args, index):
    height, width = size
    crop = args["crop"]
    if crop is not None:
        crop_h, crop_w = _crop_extents(qualname, crop)
    elif given(args, _CROP_SPECS["crop_h"]):
        crop_h, crop_w = args["crop_h"], args["crop_w"]
    else:
        return None  # no window given: the whole image, as the reference decodes it
    for name in ("crop_pos_x", "crop_pos_y"):
        check_crop_position(qualname, name, args[name])
    # The window's size is truncated whatever 'rounding' says, as in the reference;
    # an extent of 0 or less keeps the image's.
    h, w = int(crop_h), int(crop_w)
    h = h if h > 0 else height
    w = w if w > 0 else width
    y = _anchor(args["crop_pos_y"], height - h, args["rounding"])
    x = _anchor(args["crop_pos_x"], width - w, args["rounding"])
    if y < 0 or x < 0 or y + h > height or x + w > width:
        raise InvalidArgumentError(
            f"{qualname}: the crop window [{y}..{y + h}, {x}..{x + w}] (rows, columns) does not fit the "
            f"image of {height} x {width}"
        )
    return (y, x, h, w)


_CROP_ARGS = [
    Arg(
        "crop",
        "float_list",
        None,
        per_sample=True,
        doc="Window size (height, width); truncated to whole pixels, and 0 or less keeps the image's.",
        type_doc="list of float",
    ),
    Arg("crop_d", "float", 0.0, per_sample=True, doc="Window depth; volumes only, unused for images."),
    Arg(
        "crop_h",
        "float",
        0.0,
        per_sample=True,
        doc="Window height (with ``crop_w``), instead of ``crop``; 0 or less keeps the image's.",
    ),
    Arg(
        "crop_pos_x",
        "float",
        0.5,
        per_sample=True,
        doc="Horizontal position of the window: 0 is the left edge, 1 the right one.",
    ),
    Arg(
        "crop_pos_y",
        "float",
        0.5,
        per_sample=True,
        doc="Vertical position of the window: 0 is the top edge, 1 the bottom one.",
    ),
    Arg("crop_pos_z", "float", 0.5, per_sample=True, doc="Depth position; volumes only, unused for images."),
    Arg(
        "crop_w",
        "float",
        0.0,
        per_sample=True,
        doc="Window width (with ``crop_h``), instead of ``crop``; 0 or less keeps the image's.",
    ),
    Arg(
        "rounding",
        "str",
        "round",
        choices=("round", "truncate"),
        doc="How the window's position is brought to whole pixels: ``'round'`` (halves up) or "
        "``'truncate'``.",
    ),
]

_CROP_SPECS = {arg.name: arg for arg in _CROP_ARGS}


# -- image_random_crop -----------------------------------------------------------------


def _range(qualname, name, values, *, positive):
    if len(values) == 1:
        values = (values[0], values[0])
    if len(values) != 2 or not all(math.isfinite(v) for v in values) or values[0] > values[1]:
        raise InvalidArgumentError(f"{qualname}: '{name}' must be one value or [lo, hi], got {list(values)}")
    if (values[0] <= 0) if positive else (values[0] < 0):
        kind = "positive" if positive else "non-negative"
        raise InvalidArgumentError(f"{qualname}: '{name}' must be {kind}, got {list(values)}")
    return tuple(values)


def _random_crop_prepare(qualname, ins, args):
    if args["num_attempts"] < 0:
        raise InvalidArgumentError(
            f"{qualname}: 'num_attempts' must be non-negative, got {args['num_attempts']}"
        )
    args["_area"] = _range(qualname, "random_area", args["random_area"], positive=False)
    args["_aspect_ratio"] = _range(
        qualname, "random_aspect_ratio", args["random_aspect_ratio"], positive=True
    )


def _random_window(qualname, size, data, args, index):
    key = args["rng"]
    generator = key.generator() if index is None else key.sample_generator(index)
    anchor, shape = _crop_windows(generator, np.array([size], np.int64), args)
    return (int(anchor[0, 0]), int(anchor[0, 1]), int(shape[0, 0]), int(shape[0, 1]))


_RANDOM_CROP_ARGS = [
    Arg("num_attempts", "int", 10, doc="How many random windows to try before the fallback window."),
    Arg(
        "random_area",
        "float_list",
        [0.08, 1.0],
        doc="``[lo, hi]``: range of the window's area as a fraction of the image's.",
        type_doc="list of float",
    ),
    Arg(
        "random_aspect_ratio",
        "float_list",
        CROP_ASPECT_RATIO_DEFAULT,
        doc="``[lo, hi]``: range of the window's aspect ratio (width / height), drawn log-uniformly.",
        type_doc="list of float",
    ),
    RNG_ARG,
]


# -- image_slice -----------------------------------------------------------------------

_SLICE_STARTS = ("start", "rel_start")
_SLICE_ENDS = ("end", "rel_end", "shape", "rel_shape")


def _slice_prepare(qualname, ins, args):
    anchor, shape_input = ins[1], ins[2]
    if (anchor is None) != (shape_input is None):
        raise InvalidArgumentError(f"{qualname}: the anchor and shape inputs must be given together")
    named = [n for n in _SLICE_STARTS + _SLICE_ENDS if args[n] is not None]
    if anchor is not None and named:
        raise InvalidArgumentError(
            f"{qualname}: the named arguments {named} cannot be used with the anchor and shape inputs"
        )
    if anchor is None and not named:
        raise InvalidArgumentError(
            f"{qualname}: give the window as the anchor and shape inputs or with start/rel_start and "
            "end/rel_end/shape/rel_shape"
        )
    if args["start"] is not None and args["rel_start"] is not None:
        raise InvalidArgumentError(f"{qualname}: 'start' and 'rel_start' are mutually exclusive")
    ends = [n for n in _SLICE_ENDS if args[n] is not None]
    if len(ends) > 1:
        raise InvalidArgumentError(
            f"{qualname}: 'end', 'rel_end', 'shape' and 'rel_shape' are mutually exclusive, got {ends}"
        )
    axes = args["axes"]
    names = args["axis_names"]
    if isinstance(axes, tuple):
        try:
            _slice_axes(axes, names)
        except ValueError as exc:
            raise InvalidArgumentError(f"{qualname}: {exc}") from None


def _slice_axes(axes, axis_names):
    """Indices into (H, W) of the sliced dimensions, in the order of the values. As in
    the reference, the window is over the image's rows and columns only: axes count
    in 2 dimensions (-1 is W) and 'C' is no axis name."""
    if axes is not None and list(axes) != [1, 0]:
        chosen = [a + 2 if a < 0 else a for a in axes]
        if any(not 0 <= a < 2 for a in chosen) or len(set(chosen)) != len(chosen):
            raise ValueError(
                f"'axes' must be distinct dimensions of the (H, W) image (0, 1, -2 or -1), got {list(axes)}"
            )
        return chosen
    chosen = ["HW".index(c) if c in "HW" else -1 for c in axis_names]
    if -1 in chosen or len(set(chosen)) != len(chosen):
        raise ValueError(f"'axis_names' must name distinct dimensions of 'HW', got {axis_names!r}")
    return chosen


def _slice_window(qualname, size, data, args, index):
    axes = _slice_axes(args["axes"], args["axis_names"])
    if args.get("_anchor") is not None:
        window = positional_window(
            args, axes, size, np.asarray(args["_anchor"]), np.asarray(args["_shape_input"]), qualname
        )
    else:
        window = named_window(args, axes, size, qualname)
    start, end = [0, 0], list(size)
    for d, (lo, hi) in zip(axes, window, strict=True):
        if hi < lo:
            raise InvalidArgumentError(
                f"{qualname}: the slice of axis {'HW'[d]} ends ({hi}) before it starts ({lo})"
            )
        start[d], end[d] = round_half_away(lo), round_half_away(hi)
    y0, x0, y1, x1 = start[0], start[1], end[0], end[1]
    if y0 < 0 or x0 < 0 or y1 > size[0] or x1 > size[1] or y1 < y0 or x1 < x0:
        raise InvalidArgumentError(
            f"{qualname}: the slice [{y0}..{y1}, {x0}..{x1}] (rows, columns) does not fit the image "
            f"of {size[0]} x {size[1]}"
        )
    return (y0, x0, y1 - y0, x1 - x0)


_SLICE_ARGS = [
    Arg(
        "axes",
        "int_list",
        [1, 0],
        per_sample=True,
        doc="Dimensions of the (H, W) image that the window values refer to, in their order "
        "(negative ones count from W: -1 is W); the default [1, 0] means (x, y). Used instead of "
        "``axis_names`` when given.",
        type_doc="list of int",
    ),
    Arg(
        "axis_names",
        "layout",
        "WH",
        doc="Names of the dimensions the window values refer to, in their order.",
        type_doc="str",
    ),
    Arg("end", "int_list", None, per_sample=True, doc="End of the window (exclusive), in pixels."),
    Arg(
        "normalized_anchor",
        "bool",
        True,
        doc="Whether a float ``anchor`` input is a fraction of the image size.",
    ),
    Arg(
        "normalized_shape",
        "bool",
        True,
        doc="Whether a float ``shape_input`` is a fraction of the image size.",
    ),
    Arg("rel_end", "float_list", None, per_sample=True, doc="End of the window as fractions of the size."),
    Arg("rel_shape", "float_list", None, per_sample=True, doc="Window size as fractions of the size."),
    Arg(
        "rel_start", "float_list", None, per_sample=True, doc="Start of the window as fractions of the size."
    ),
    Arg("shape", "int_list", None, per_sample=True, doc="Window size, in pixels."),
    Arg("start", "int_list", None, per_sample=True, doc="Start of the window, in pixels."),
]

_SLICE_INPUTS = {
    "ndd.decoders": ["data", "anchor", "shape_input"],
    "ndd.experimental.decoders": ["input_0", "input_1", "input_2"],
}


def _slice_operator(module):
    data_name, anchor_name, shape_name = _SLICE_INPUTS[module]
    op = _decoder(
        "image_slice",
        module,
        inputs=[
            Input(data_name, doc="Encoded images (uint8 bytes of a file)."),
            Input(anchor_name, optional=True, doc="Start of the window, one value per sliced dimension."),
            Input(shape_name, optional=True, doc="Size of the window, one value per sliced dimension."),
        ],
        extra_args=_SLICE_ARGS,
        window=_slice_window,
        prepare_extra=_slice_prepare,
        doc="Decode a window of images, given like ``ndd.slice`` does.\n\n"
        "The window comes from the anchor and shape inputs (integers are pixels; floats are "
        "fractions of the size unless ``normalized_anchor``/``normalized_shape`` is False) or "
        "from the named arguments ``start``/``rel_start`` and ``end``/``rel_end``/``shape``/"
        "``rel_shape``. By default the values are (x, y) pairs (``axis_names='WH'``). Positions "
        "are rounded to the nearest pixel, halves away from zero; a window outside the image is "
        "an error. The window is in the image as displayed (after the EXIF orientation).",
    )
    # The anchor and shape inputs are values the window is computed from: pass them
    # to the per-sample work as arguments.
    kernel, batch_kernel = op.kernel, op.batch_kernel

    def with_window_inputs(arrays, args):
        args = dict(args, _anchor=arrays[1], _shape_input=arrays[2])
        return kernel(arrays[:1], args)

    def batch_with_window_inputs(inputs, sample_args, batch_size, ctx):
        return batch_kernel(inputs[:1], window_args(inputs, sample_args), batch_size, ctx)

    def window_args(inputs, sample_args):
        anchors, shapes = inputs[1], inputs[2]
        return [
            dict(
                a,
                _anchor=anchors[i] if isinstance(anchors, list) else anchors,
                _shape_input=shapes[i] if isinstance(shapes, list) else shapes,
            )
            for i, a in enumerate(sample_args)
        ]

    op.kernel = with_window_inputs
    op.batch_kernel = batch_with_window_inputs
    op.gpu_kernel = GpuImageDecoder(op, _slice_window, _describe_source, window_args)
    return op


# -- peek_image_shape --------------------------------------------------------------------


def _peek_prepare(op_name):
    def prepare(ins, args):
        _require_encoded_bytes(op_name, ins[0])
        try:
            args["image_type"] = enum_value(args["image_type"], DALIImageType)
        except (TypeError, ValueError) as exc:
            raise InvalidArgumentError(
                f"{op_name}: 'image_type' must be an image type such as ndd.types.RGB, "
                f"got {args['image_type']!r}"
            ) from exc
        if args["dtype"] not in _SHAPE_DTYPES:
            raise InvalidArgumentError(
                f"{op_name}: 'dtype' must be one of {', '.join(map(str, _SHAPE_DTYPES))}, got {args['dtype']}"
            )
        args[_SOURCES] = ins[0]._source_info

    return prepare


def _peek_operator(module):
    qualname = f"{module}.peek_image_shape"

    def peek_one(data, args, index):
        image = image_codec.open_image(data)
        orient = image_codec.orientation(image) if args["adjust_orientation"] else 1
        height, width = image_codec.oriented_size(image, orient)
        channels = image_codec.channel_count(image, args["image_type"])
        return np.array([height, width, channels], dtype=args["dtype"].numpy)

    def batch_kernel(inputs, sample_args, batch_size, ctx):
        return _run_samples(qualname, peek_one, inputs, sample_args, batch_size, ctx)

    return Operator(
        "peek_image_shape",
        module=module,
        inputs=[Input("input", doc="Encoded images (uint8 bytes of a file).")],
        args=[
            Arg(
                "adjust_orientation",
                "bool",
                True,
                doc="Give the shape of the image as displayed (EXIF orientation applied).",
            ),
            Arg(
                "dtype",
                "dtype",
                int64,
                doc="Type of the result: int32, uint32, int64, uint64, float32 or float64.",
                type_doc="DType",
            ),
            Arg(
                "image_type",
                "any",
                DALIImageType.RGB,
                doc="Colour space the channel count is given for (GRAY: 1, ANY_DATA: the file's).",
                type_doc="DALIImageType",
            ),
        ],
        prepare_args=_peek_prepare(qualname),
        infer_types=lambda ins, args: [(args["dtype"], "")],
        infer_shape=lambda shapes, args: [(3,)],
        kernel=_sample_kernel(qualname, peek_one),
        batch_kernel=batch_kernel,
        doc="The shape (height, width, channels) of encoded images, read from their headers "
        "without decoding them.",
    )


# -- io.file.read --------------------------------------------------------------------------


# The types of tensors of bytes (paths, files) that the reference takes.
_BYTE_TYPES = (uint8, int8)


def _read_prepare(ins, args):
    x = ins[0]
    if x._dtype not in _BYTE_TYPES:
        raise InvalidArgumentError(
            f"ndd.io.file.read: 'filepaths' must be uint8 (or int8) tensors of UTF-8 path bytes, got {x._dtype}"
        )


def _read_file(path_bytes):
    # The path's bytes as the file system takes them (any bytes, not only UTF-8), up to
    # the first NUL, as a C string (a fixed-width numpy 'S' array pads with NULs).
    raw = np.ascontiguousarray(path_bytes).reshape(-1).tobytes().split(b"\0", 1)[0]
    return read_file_bytes(os.fsdecode(raw), "ndd.io.file.read")


def _read_kernel(arrays, args):
    return _read_file(arrays[0])


def _read_batch_kernel(inputs, sample_args, batch_size, ctx):
    data = inputs[0]
    samples = batch_samples_of(data, batch_size)
    return [ctx.thread_pool.map(lambda i: _read_file(samples[i]), range(batch_size))]


FILE_READ = Operator(
    "read",
    module="ndd.io.file",
    inputs=[
        Input("filepaths", doc="Paths of the files, as uint8 (or int8) tensors of UTF-8 bytes, up to a NUL.")
    ],
    args=[
        Arg("dont_use_mmap", "bool", False, doc="Accepted for compatibility; files are always read."),
        Arg(
            "use_o_direct", "bool", False, doc="Accepted for compatibility; files are read through the cache."
        ),
    ],
    prepare_args=_read_prepare,
    infer_types=lambda ins, args: [(uint8, "")],
    kernel=_read_kernel,
    batch_kernel=_read_batch_kernel,
    doc="Read whole files into 1-D uint8 tensors.\n\n"
    "Each path is a uint8 tensor holding the UTF-8 bytes of the path, e.g. "
    '``ndd.tensor(np.frombuffer(b"photo.jpg", np.uint8))``. A file that cannot be read '
    "is an error when the result is used.",
)


# -- decoders.numpy ------------------------------------------------------------------------


class NumpyDecodeError(SampleDecodeError, ValueError):
    """Contents of a batch's .npy files that could not be decoded (see
    ``SampleDecodeError``: ``decoded`` holds the arrays of the other samples)."""


# The element types of the .npy files the reference decodes.
_NPY_KINDS = "biuf"


def _npy_header(data):
    """The header of the .npy file in ``data`` (uint8 bytes), checked."""
    try:
        header = header_of(np.ascontiguousarray(data).reshape(-1))
    except (_FormatError, _UnsupportedArray) as exc:
        raise ValueError(f"not a .npy file that can be decoded: {exc}") from None
    dtype = header.dtype
    if dtype.kind not in _NPY_KINDS or dtype.itemsize > 8 or dtype.byteorder == ">":
        raise ValueError(
            f"the .npy file holds {dtype.str} elements; supported are little-endian bool, "
            "integers and 16/32/64-bit floats"
        )
    return header


def _numpy_prepare(ins, args):
    data = ins[0]
    if data._dtype not in _BYTE_TYPES:
        raise InvalidArgumentError(
            f"ndd.decoders.numpy: the input must be .npy file bytes (uint8 or int8), got {data._dtype}"
        )
    if args["dtype"] is not None:
        return
    # The element type is in the files' headers: read them now (waiting for the data
    # if it is still being computed), so that the result's dtype is known at once.
    single = isinstance(data, TensorBase)
    samples = [tensor_data(data)] if single else batch_samples(data)
    types = set()
    for sample in samples:
        try:
            types.add(_npy_header(sample).dtype.newbyteorder("="))
        except ValueError as exc:
            if single:
                raise InvalidArgumentError(f"ndd.decoders.numpy: {exc}") from None
            # A file of a batch that cannot be decoded fails its sample when the
            # batch runs; the others are decoded.
    if len(types) > 1:
        raise InvalidArgumentError(
            f"ndd.decoders.numpy: the samples hold different element types {sorted(t.str for t in types)}; "
            "pass 'dtype' to convert them to one"
        )
    args["_file_dtype"] = to_dtype(types.pop()) if types else uint8


def _numpy_types(ins, args):
    return [(args["dtype"] or args["_file_dtype"], "")]


def _decode_npy(data, args):
    header = _npy_header(data)
    count = math.prod(header.shape)
    start = header.data_offset
    raw = np.ascontiguousarray(data).reshape(-1)[start : start + count * header.dtype.itemsize]
    if raw.size < count * header.dtype.itemsize:
        raise ValueError(f"the .npy data is cut short: {raw.size} of {count * header.dtype.itemsize} bytes")
    values = raw.view(header.dtype.newbyteorder("=")).reshape(header.shape, order=header.order)
    target = (args["dtype"] or args["_file_dtype"]).numpy
    if values.dtype == target:
        return np.array(values, order="C")
    # As ``cast``: floats round half away from zero, values saturate. (asarray keeps a
    # 0-D array 0-D, where ascontiguousarray would make it 1-D.)
    return np.asarray(cast_array(values, target), order="C")


def _numpy_kernel(arrays, args):
    try:
        return _decode_npy(arrays[0], args)
    except ValueError as exc:
        raise ValueError(f"ndd.decoders.numpy: {exc}") from exc


def _numpy_batch_kernel(inputs, sample_args, batch_size, ctx):
    """The samples decoded on the thread pool; a batch needs them all of one rank."""
    data = inputs[0]
    samples = batch_samples_of(data, batch_size)

    def one(i):
        try:
            return _decode_npy(samples[i], sample_args[i]), None
        except ValueError as exc:
            return None, exc

    results = ctx.thread_pool.map(one, range(batch_size))
    arrays = [array for array, _ in results]
    failed = [i for i, (_, exc) in enumerate(results) if exc is not None]
    if failed:
        first = failed[0]
        raise NumpyDecodeError.for_batch(
            f"ndd.decoders.numpy: cannot decode (sample {first}): {results[first][1]}",
            decoded=arrays,
            failed=failed,
        ) from results[first][1]
    ranks = [a.ndim for a in arrays]
    if len(set(ranks)) > 1:
        other = next(i for i, r in enumerate(ranks) if r != ranks[0])
        raise ValueError(
            f"ndd.decoders.numpy: the arrays of a batch must have the same number of dimensions; "
            f"sample 0 has {ranks[0]}, sample {other} has {ranks[other]}"
        )
    return [arrays]


NUMPY = Operator(
    "numpy",
    module="ndd.decoders",
    inputs=[Input("data", doc="Contents of .npy files, as uint8 tensors.")],
    args=[
        Arg(
            "dtype",
            "dtype",
            None,
            doc="Type to convert the arrays to, with ``cast``'s rules; by default the type stored in "
            "the files (then every sample of a batch must store the same type).",
            type_doc="DType",
        )
    ],
    prepare_args=_numpy_prepare,
    infer_types=_numpy_types,
    kernel=_numpy_kernel,
    batch_kernel=_numpy_batch_kernel,
    doc="Decode the contents of .npy files into arrays.\n\n"
    "Little-endian bool, integer and float arrays of any shape, C or Fortran order, are "
    "accepted. Without ``dtype``, the headers are read in the call (waiting for the input "
    "if it is being computed) so that the result's type is known at once. A file of a batch "
    "that cannot be decoded fails when the batch runs: the error names its sample and carries "
    "the other samples' arrays (``decoded``, ``failed``).",
)


# -- decoders.inflate -----------------------------------------------------------------------

_CHUNK_ARGS = ("chunk_offsets", "chunk_sizes")


def _inflate_prepare(ins, args):
    if ins[0]._dtype != uint8:
        raise InvalidArgumentError(
            f"ndd.decoders.inflate: the input must be compressed bytes (uint8), got {ins[0]._dtype}"
        )
    shape = args["shape"]
    if type(shape) is not PerSample and shape is not None and any(d < 0 for d in shape):
        raise InvalidArgumentError(f"ndd.decoders.inflate: 'shape' must not be negative, got {list(shape)}")
    layout = args["layout"]
    shapes = shape.values if type(shape) is PerSample else [shape]
    for one in shapes:
        if layout and one is not None and type(one) is not PendingArg and len(one) != len(layout):
            raise InvalidArgumentError(
                f"ndd.decoders.inflate: 'layout' {layout!r} has {len(layout)} dimensions, but 'shape' "
                f"{list(one)} has {len(one)}"
            )


def _inflate_types(ins, args):
    layout = args["layout"]
    chunked = any(args[name] is not None for name in _CHUNK_ARGS)
    if chunked and layout:
        layout = args["sequence_axis_name"] + layout
    return [(args["dtype"], layout)]


def _chunks(args, size):
    """(offset, size) of each compressed chunk of a sample of ``size`` bytes, or None
    for a sample that is one chunk."""
    offsets, sizes = args["chunk_offsets"], args["chunk_sizes"]
    if offsets is None and sizes is None:
        return None
    for name, values in (("chunk_offsets", offsets), ("chunk_sizes", sizes)):
        if values is not None and not len(values):
            raise ValueError(f"'{name}' is empty; give one value per chunk (or leave it out)")
    if offsets is None:
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64).tolist()
    if sizes is None:
        sizes = [b - a for a, b in zip(offsets, list(offsets[1:]) + [size], strict=True)]
    if len(offsets) != len(sizes):
        raise ValueError(
            f"'chunk_offsets' and 'chunk_sizes' must have one value per chunk, got {len(offsets)} and {len(sizes)}"
        )
    for offset, length in zip(offsets, sizes, strict=True):
        if offset < 0 or length < 0 or offset + length > size:
            raise ValueError(f"the chunk of {length} bytes at {offset} lies outside the {size} input bytes")
    return list(zip(offsets, sizes, strict=True))


def inflate_lz4_block(packed, target):
    """Inflate the raw LZ4 block ``packed`` (1-D uint8) into the front of ``target`` (1-D
    uint8, left as it is past the inflated bytes); return the number of bytes written.

    The ``lz4`` library's block decoder does the work (without the GIL); it holds blocks
    to the format's end rules (the last 5 bytes are literals), as every LZ4 encoder
    writes them. No bytes at all inflate to nothing, as the empty block does.

    Raises
    ------
    ValueError
        For data that is not an LZ4 block or inflates to more bytes than ``target`` holds.
    """
    if packed.size == 0:
        return 0
    try:
        inflated = lz4.block.decompress(packed, uncompressed_size=target.size)
    except lz4.block.LZ4BlockError:
        raise ValueError(
            f"the data is not an LZ4 block, or inflates to more than the {target.size} bytes of its output"
        ) from None
    target[: len(inflated)] = np.frombuffer(inflated, np.uint8)
    return len(inflated)


def _inflate_kernel(arrays, args):
    source = np.ascontiguousarray(arrays[0]).reshape(-1)
    shape = tuple(args["shape"])
    dtype = args["dtype"].numpy
    chunk_bytes = math.prod(shape) * np.dtype(dtype).itemsize
    chunks = _chunks(args, source.size)
    count = 1 if chunks is None else len(chunks)
    out = np.zeros(count * chunk_bytes, np.uint8)
    for k, (offset, length) in enumerate(chunks or [(0, source.size)]):
        target = out[k * chunk_bytes : (k + 1) * chunk_bytes]
        try:
            written = inflate_lz4_block(source[offset : offset + length], target)
        except ValueError as exc:
            raise ValueError(f"ndd.decoders.inflate: chunk {k}: {exc}") from None
        if args["check_output_size"] and written != chunk_bytes:
            raise ValueError(
                f"ndd.decoders.inflate: chunk {k} inflates to {written} bytes, the output chunk holds {chunk_bytes}"
            )
    values = out.view(dtype)
    return values.reshape(shape if chunks is None else (count,) + shape)


def _inflate_batch_kernel(inputs, sample_args, batch_size, ctx):
    data = inputs[0]
    samples = batch_samples_of(data, batch_size)
    return [ctx.thread_pool.map(lambda i: _inflate_kernel((samples[i],), sample_args[i]), range(batch_size))]


INFLATE = Operator(
    "inflate",
    module="ndd.decoders",
    inputs=[Input("input", doc="Compressed data, 1-D uint8.")],
    args=[
        Arg(
            "algorithm",
            "str",
            "LZ4",
            choices=("LZ4",),
            doc="The compression: ``'LZ4'`` (raw LZ4 blocks, without frame headers).",
        ),
        Arg(
            "check_output_size",
            "bool",
            False,
            doc="Fail when a chunk inflates to fewer bytes than its output holds (the rest is "
            "zeros otherwise). Data that inflates to more bytes is always an error.",
        ),
        Arg(
            "chunk_offsets",
            "int_list",
            None,
            per_sample=True,
            doc="Where each compressed chunk of a sample starts (by default right after the previous one).",
            type_doc="list of int",
        ),
        Arg(
            "chunk_sizes",
            "int_list",
            None,
            per_sample=True,
            doc="Compressed size of each chunk (by default up to the next offset or the end).",
            type_doc="list of int",
        ),
        Arg("dtype", "dtype", uint8, doc="Type of the inflated data.", type_doc="DType"),
        Arg("layout", "layout", "", doc="Layout of one inflated chunk.", type_doc="str"),
        Arg(
            "sequence_axis_name",
            "layout",
            "F",
            doc="Name of the outer axis added for samples of several chunks (used with ``layout``).",
            type_doc="str",
        ),
        Arg(
            "shape",
            "int_list",
            per_sample=True,
            doc="Shape of one inflated chunk.",
            type_doc="list of int",
        ),
    ],
    prepare_args=_inflate_prepare,
    infer_types=_inflate_types,
    kernel=_inflate_kernel,
    batch_kernel=_inflate_batch_kernel,
    doc="Decompress data compressed with LZ4 into tensors of a given shape and type.\n\n"
    "A sample is one compressed chunk, or several (given by ``chunk_offsets`` and/or "
    "``chunk_sizes``) that inflate to the same ``shape``; their results are stacked along a "
    "new outer axis named ``sequence_axis_name``. The reference runs this on the GPU only; "
    "ndd runs it on the CPU too; on the GPU it decodes through nvCOMP, from compressed bytes in "
    "host or GPU memory.",
)

INFLATE.gpu_kernel = GpuInflate(INFLATE, _chunks)


# -- the operators -----------------------------------------------------------------------------


def _image_operators(module, deprecated):
    note = " Deprecated alias of ``ndd.decoders.{}``." if deprecated else ""
    return [
        _decoder(
            "image",
            module,
            extra_args=[],
            window=None,
            cache_args=True,
            doc="Decode JPEG, PNG, BMP, TIFF, WebP, JPEG 2000 and PNM images to HWC arrays."
            + note.format("image")
            + "\n\nA gray image gives 3 equal channels unless ``output_type`` is GRAY or ANY_DATA; "
            "alpha is dropped unless it is ANY_DATA. The EXIF orientation is applied unless "
            "``adjust_orientation`` is False.",
        ),
        _decoder(
            "image_crop",
            module,
            extra_args=_CROP_ARGS,
            window=_crop_window,
            prepare_extra=_crop_prepare,
            doc="Decode a fixed-size window of images." + note.format("image_crop") + "\n\n"
            "The window has the size ``crop`` (or ``crop_h`` x ``crop_w``) and its top-left corner "
            "at ``crop_pos_y * (H - h)``, ``crop_pos_x * (W - w)``. It must lie inside the image "
            "as displayed (after the EXIF orientation).",
        ),
        _decoder(
            "image_random_crop",
            module,
            extra_args=_RANDOM_CROP_ARGS,
            window=_random_window,
            prepare_extra=_random_crop_prepare,
            doc="Decode a random window of images, chosen as ``random_crop_generator`` does."
            + note.format("image_random_crop")
            + "\n\nEach sample gets its own window, whose area fraction is drawn from "
            "``random_area`` and its aspect ratio from ``random_aspect_ratio``.",
        ),
        _slice_operator(module),
    ]


OPERATORS = (
    _image_operators("ndd.decoders", deprecated=False)
    + _image_operators("ndd.experimental.decoders", deprecated=True)
    + [_peek_operator("ndd"), _peek_operator("ndd.experimental"), FILE_READ, NUMPY, INFLATE]
)
