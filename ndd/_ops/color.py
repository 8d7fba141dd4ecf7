"""Colour operators: ``brightness``, ``contrast``, ``brightness_contrast``, ``hue``,
``saturation``, ``hsv``, ``color_twist``, ``color_space_conversion``, ``equalize``
and ``jpeg_compression_distortion`` (Pillow's libjpeg encoder, which gives the reference's
results bit for bit with 4:2:0 subsampling, and simplejpeg's decoder).

Every value operator computes in float32 and converts to an integer result by
rounding halves away from zero and saturating, as the reference does. The
brightness/contrast family is one affine map per sample,

    out = brightness_shift * output_range + brightness * (center + contrast * (in - center))

where ``output_range`` is 1 for float results and the largest value of an integer
result type, and ``center`` (``contrast_center`` when not given) is half of the
input type's positive range (128 for uint8, 2**14 for int16, 0.5 for float).
uint8 images go through a 256-entry lookup table built with that map.

The numeric arguments of both families may give one value per frame of a
sequence: marked with ``ndd.per_frame`` (unfolded by ``frames.py``, as in the
reference), or, beyond the reference, as a plain 1-D array of one value per frame.

The hue/saturation family is a 3x3 matrix in RGB space: the colour is taken to
YIQ, where the hue turns the (I, Q) plane and the saturation scales it, and back
with the exact inverse of the YIQ matrix (the reference's construction).
``color_twist`` adds the brightness/contrast map on top. Their ``image_type`` is RGB
or BGR, which takes the same map on reversed channels: the reference takes BGR,
GRAY or YCbCr there and computes as for RGB (wrong colours for BGR), and with 1 or
4 channels returns garbage or crashes; ndd refuses GRAY and YCbCr at the call.
"""

import fractions
import functools
import io
import math

import numpy as np
import simplejpeg
from PIL import Image

from .._cpu.color import (
    blend_tile_tables,
    clip_tile_tables,
    color_matrix,
    equalize_frames,
    lab8_to_rgb,
    lookup_u8,
    rgb_to_lab8,
    rgb_to_rgbx,
    tile_histograms,
    weighted_channels,
)
from .._cpu.moments import normalize_values

try:
    from .._cpu.jpeg_region import round_trip_rgb as _round_trip_rgb
except ImportError:  # built without libjpeg-turbo's headers
    _round_trip_rgb = None
from .._memory import exceeds_half_of_memory
from .._prepare.args import InvalidArgumentError
from .._types import float16, float32, int16, int32, uint8
from ..types import DALIImageType
from .conversions import cast_array
from .gpu_clahe import GpuClahe
from .gpu_image import (
    COLOR_AFFINE,
    COLOR_HALF_UP,
    COLOR_MATRIX,
    COLOR_MATRIX_REVERSED,
    ColorPart,
    GpuColor,
    GpuEqualize,
)
from .gpu_jpeg_distortion import GpuJpegDistortion
from .image_codec import BT601_KB, BT601_KG, BT601_KR, YCBCR_MATRIX
from .image_layout import image_axes
from .random_ops import known_values
from .schema import Arg, Input, Operator

# The element types the reference's colour operators read and write.
_VALUE_TYPES = (uint8, int16, int32, float32)
# The hue/saturation family also takes float16, computed in float32 (as the reference).
_HSV_TYPES = (*_VALUE_TYPES, float16)

# RGB -> YIQ (NTSC), as the reference builds its hue/saturation matrices.
_RGB_TO_YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])


def _exact_inverse(matrix):
    """The inverse of a 3x3 float64 matrix, each entry correctly rounded (computed in
    fractions): LAPACK's inverse differs in last bits from one processor to another."""
    (a, b, c), (d, e, f), (g, h, i) = [[fractions.Fraction(v) for v in row] for row in matrix.tolist()]
    cofactors = [
        [e * i - f * h, c * h - b * i, b * f - c * e],
        [f * g - d * i, a * i - c * g, c * d - a * f],
        [d * h - e * g, b * g - a * h, a * e - b * d],
    ]
    determinant = a * cofactors[0][0] + b * cofactors[1][0] + c * cofactors[2][0]
    return np.array([[float(v / determinant) for v in row] for row in cofactors])


_YIQ_TO_RGB = _exact_inverse(_RGB_TO_YIQ)


def _check_value_type(op, what, dtype, types=_VALUE_TYPES):
    if not any(dtype is t for t in types):
        names = ", ".join(str(t) for t in types)
        raise InvalidArgumentError(f"{op.qualname}: {what} must be one of {names}, got {dtype}")


def _output_dtype(ins, args):
    return args["dtype"] if args["dtype"] is not None else ins[0]._dtype


def _half_range(np_dtype):
    """The default contrast center of an input type: half its positive range."""
    if np_dtype.kind == "f":
        return 0.5
    return float((int(np.iinfo(np_dtype).max) + 1) // 2)


def _output_range(np_dtype):
    if np_dtype.kind == "f":
        return 1.0
    return float(np.iinfo(np_dtype).max)


def _to_output(values, np_dtype):
    """float32 values -> the result type (round half away and saturate for integers)."""
    if np_dtype.kind == "f":
        return values.astype(np_dtype, copy=False)
    return cast_array(values, np_dtype)


def _affine_coefficients(args, in_type, out_type):
    """(scale, offset) of ``out = in * scale + offset`` for one sample."""
    brightness = args.get("brightness", 1.0)
    shift = args.get("brightness_shift", 0.0)
    contrast = args.get("contrast", 1.0)
    center = args.get("contrast_center")
    if center is None:
        center = _half_range(in_type)
    # float32 throughout, as the reference: a float64 offset rounded once differs
    # by a few units for int32 results.
    f32 = np.float32
    brightness, contrast, center = f32(brightness), f32(contrast), f32(center)
    scale = brightness * contrast
    offset = f32(shift) * f32(_output_range(out_type)) + brightness * (center - contrast * center)
    return scale, offset


@functools.lru_cache(maxsize=256)
def _affine_table(scale, offset, out_type):
    """``out = in * scale + offset`` of every uint8 value (float32 ``scale`` and ``offset``),
    in ``out_type``; cached (samples often share their coefficients), hence read-only."""
    table = _to_output(np.arange(256, dtype=np.float32) * scale + offset, out_type)
    table.flags.writeable = False
    return table


def _apply_affine(arr, scale, offset, out_type):
    if arr.dtype == np.uint8:
        # 256 values to compute instead of one per pixel.
        table = _affine_table(scale, offset, np.dtype(out_type))
        out = np.empty(arr.shape, table.dtype)
        lookup_u8(np.ascontiguousarray(arr).reshape(-1), out.reshape(-1), table)
        return out
    if arr.dtype == np.float32 and out_type == np.float32:
        # One pass: (v - 0) * scale + offset is v * scale + offset, the same float32 operations.
        out = np.empty(arr.shape, np.float32)
        normalize_values(np.ascontiguousarray(arr).reshape(-1), out.reshape(-1), 0.0, scale, offset)
        return out
    values = arr.astype(np.float32)
    values *= scale
    values += offset
    return _to_output(values, out_type)


# The layouts the reference's colour operators take; data without a layout is HWC
# (3-D), FHWC (4-D) or FDHWC (5-D), and the result carries that layout.
_CHANNELS_LAST = ("HWC", "FHWC", "DHWC")


def channels_last_layout(op, x, allowed=_CHANNELS_LAST):
    """The layout of input ``x`` (inferred from its dimensions when it has none), checked
    against ``allowed``."""
    layout = x._layout or {3: "HWC", 4: "FHWC", 5: "FDHWC"}.get(x.ndim, "")
    if layout not in allowed or len(layout) != x.ndim:
        raise InvalidArgumentError(
            f"{op.qualname}: expected a layout among {', '.join(allowed)}, got {x.ndim}-D data "
            f"with layout {x._layout!r}"
        )
    return layout


def _prepare_value_op(op, ins, args, types=_VALUE_TYPES):
    _check_value_type(op, "the input type", ins[0]._dtype, types)
    out = _output_dtype(ins, args)
    _check_value_type(op, "'dtype'", out, types)
    args["_out"] = out.numpy
    args["_layout"] = channels_last_layout(op, ins[0])


def _types(ins, args):
    return [(_output_dtype(ins, args), args["_layout"])]


def _same_shape(shapes, args):
    return [shapes[0]]


def _check_three_channels_of(qualname):
    def infer_shape(shapes, args):
        shape = shapes[0]
        if shape[-1] != 3:
            raise InvalidArgumentError(f"{qualname}: expected 3 channels (RGB), got {shape[-1]}")
        return [shape]

    return infer_shape


def _check_three_channels(op):
    return _check_three_channels_of(op.qualname)


# -- brightness / contrast -----------------------------------------------------------------


def _brightness_kernel(arrays, args):
    arr = arrays[0]
    scale, offset = _affine_coefficients(args, arr.dtype, args["_out"])
    return _apply_affine(arr, scale, offset, args["_out"])


def _float_arg(name, default, doc):
    # Kind "array": a number, or (for sequences) one number per frame.
    return Arg(name, "array", default, per_sample=True, doc=doc, type_doc="float or one float per frame")


def _check_number_args(op, ins, args, layout):
    """Numeric arguments are finite numbers (an array of one value is one, as in the
    reference), or 1-D (one value per frame) for FHWC input."""
    for spec in op.arg_specs:
        if spec.kind != "array":
            continue
        for value in known_values(args[spec.name]):
            if value is None:
                continue
            if value.dtype.kind not in "biuf" or (
                value.size != 1 and (value.ndim > 1 or (value.ndim == 1 and not layout.startswith("F")))
            ):
                raise InvalidArgumentError(
                    f"{op.qualname}: '{spec.name}' must be a number (or one number per frame of a sequence), "
                    f"got {value.dtype} array of shape {value.shape}"
                )
            if value.dtype.kind == "f" and not np.isfinite(value).all():
                raise InvalidArgumentError(
                    f"{op.qualname}: '{spec.name}' must be finite, got {value.tolist()}"
                )


def frame_parts(args, shape, qualname):
    """The parts of a sample that share scalar arguments: ``[(None, args)]``, or one
    ``(frame, args)`` per frame of a sequence when an argument has one value per frame."""
    frame_args = [
        n
        for n, v in args.items()
        if isinstance(v, np.ndarray) and v.ndim == 1 and v.size != 1 and not n.startswith("_")
    ]
    # One value, whatever its array's shape ((1,), (1, 1)), is a number for every frame.
    scalars = {
        n: float(v.reshape(())) if isinstance(v, np.ndarray) and v.size == 1 and not n.startswith("_") else v
        for n, v in args.items()
    }
    if not frame_args:
        return [(None, scalars)]
    frames = shape[0]
    for name in frame_args:
        if len(args[name]) != frames:
            raise InvalidArgumentError(
                f"{qualname}: '{name}' has {len(args[name])} values for a sequence of {frames} frames"
            )
    return [(f, {**scalars, **{n: float(args[n][f]) for n in frame_args}}) for f in range(frames)]


def _per_frame(kernel, qualname):
    """Run ``kernel`` frame by frame when an argument has one value per frame."""

    def run(arrays, args):
        arr = arrays[0]
        parts = frame_parts(args, arr.shape, qualname)
        if parts[0][0] is None:
            return kernel([arr], parts[0][1])
        return np.stack([kernel([arr[f]], frame_args) for f, frame_args in parts])

    return run


_BRIGHTNESS = _float_arg("brightness", 1.0, "Brightness multiplier.")
_BRIGHTNESS_SHIFT = _float_arg(
    "brightness_shift",
    0.0,
    "Added brightness, in units of the output range (1.0 is the largest value of an integer output type).",
)
_CONTRAST = _float_arg("contrast", 1.0, "Contrast multiplier; 0 gives a uniform grey (the contrast center).")
_CONTRAST_CENTER = _float_arg(
    "contrast_center",
    None,
    "The value contrast leaves unchanged; half of the input type's positive range when omitted "
    "(128 for uint8, 0.5 for float).",
)
_DTYPE = Arg("dtype", "dtype", None, doc="Output type; the input type when omitted.", type_doc="DType")
_IMAGE_TYPE = Arg(
    "image_type",
    "any",
    None,
    doc="Colour space of the input and the output: RGB or BGR.",
    type_doc="DALIImageType",
)


def _value_operator(name, args, doc, *, needs_rgb=False, kernel=_brightness_kernel, types=_VALUE_TYPES):
    op = Operator(name, inputs=[Input("input", doc="Images (HWC, FHWC or DHWC).")], args=args, doc=doc)

    def prepare_args(ins, a):
        _prepare_value_op(op, ins, a, types)
        _check_number_args(op, ins, a, a["_layout"])
        if "image_type" in a:
            image_type = _image_type(op, "image_type", a["image_type"], DALIImageType.RGB)
            if image_type not in (DALIImageType.RGB, DALIImageType.BGR):
                raise InvalidArgumentError(
                    f"{op.qualname}: 'image_type' must be RGB or BGR, got {image_type.name}"
                )
            a["_bgr"] = image_type is DALIImageType.BGR

    op.prepare_args = prepare_args
    op.infer_types = _types
    op.infer_shape = _check_three_channels(op) if needs_rgb else _same_shape
    op.kernel = _per_frame(kernel, op.qualname)
    return op


BRIGHTNESS = _value_operator(
    "brightness",
    [_BRIGHTNESS, _BRIGHTNESS_SHIFT, _DTYPE],
    "Adjust the brightness of images: ``out = brightness_shift * output_range + brightness * in``.",
)
CONTRAST = _value_operator(
    "contrast",
    [_CONTRAST, _CONTRAST_CENTER, _DTYPE],
    "Adjust the contrast of images: ``out = center + contrast * (in - center)``.",
)
BRIGHTNESS_CONTRAST = _value_operator(
    "brightness_contrast",
    [_BRIGHTNESS, _BRIGHTNESS_SHIFT, _CONTRAST, _CONTRAST_CENTER, _DTYPE],
    "Adjust brightness and contrast of images: "
    "``out = brightness_shift * output_range + brightness * (center + contrast * (in - center))``, "
    "where ``output_range`` is 1 for float outputs and the largest value of integer ones.",
)


# -- hue / saturation / value ---------------------------------------------------------------


def _image_type(op, name, value, default):
    """A DALIImageType from an ndd or reference enum member, or an int."""
    if value is None:
        return default
    try:
        return DALIImageType(int(value))
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"{op.qualname}: '{name}' must be an image type such as ndd.types.RGB, got {value!r}"
        ) from None


def _hsv_matrix(hue, saturation, value):
    """The RGB -> RGB matrix that turns the hue by ``hue`` degrees and scales the
    saturation and the value (float64)."""
    angle = math.radians(hue)
    c, s = math.cos(angle), math.sin(angle)
    yiq = np.array(
        [
            [value, 0.0, 0.0],
            [0.0, value * saturation * c, value * saturation * s],
            [0.0, -value * saturation * s, value * saturation * c],
        ]
    )
    return _YIQ_TO_RGB @ yiq @ _RGB_TO_YIQ


def _apply_matrix(arr, matrix, offset, out_type, pre=(0.0, 0.0, 0.0)):
    """``out[..., i] = sum_j matrix[i, j] * (in[..., j] - pre[j]) + offset[i]`` in float32
    (``offset``: one value, or one per output channel)."""
    offsets = np.broadcast_to(np.asarray(offset, np.float64), (3,))
    if arr.dtype == out_type and arr.dtype in (np.uint8, np.float32):
        # The common cases in one compiled pass.
        coeffs = np.concatenate([np.asarray(matrix).reshape(-1), offsets, pre]).astype(np.float32)
        out = np.empty(arr.shape, arr.dtype)
        color_matrix(np.ascontiguousarray(arr).reshape(-1, 3), out.reshape(-1, 3), coeffs)
        return out
    # Products and sums one at a time in float32, in the GPU kernel's order (a BLAS
    # product sums in its own order: a last bit apart, then 1 apart in int16).
    pixels = arr.reshape(-1, 3).astype(np.float32) - np.asarray(pre, np.float32)
    weights, offsets = np.asarray(matrix, np.float32), offsets.astype(np.float32)
    result = np.empty_like(pixels)
    for c in range(3):
        row = pixels[:, 0] * weights[c, 0]
        row += pixels[:, 1] * weights[c, 1]
        row += pixels[:, 2] * weights[c, 2]
        row += offsets[c]
        result[:, c] = row
    return _to_output(result, out_type).reshape(arr.shape)


def _hsv_coefficients(args, in_type):
    """(RGB matrix, offset) of the hue/saturation family for one sample or frame."""
    matrix = _hsv_matrix(args.get("hue", 0.0), args.get("saturation", 1.0), args.get("value", 1.0))
    if args.get("_bgr"):
        # The RGB map between two channel reversals: rows and columns reversed.
        matrix = matrix[::-1, ::-1]
    offset = 0.0
    if "contrast" in args:
        # color_twist centers the contrast of every integer type at 128 (the
        # reference's choice; brightness_contrast uses half the type's range).
        center = 0.5 if in_type.kind == "f" else 128.0
        scale, offset = _affine_coefficients(dict(args, contrast_center=center), in_type, args["_out"])
        matrix = matrix * float(scale)
    return matrix, float(offset)


def _hsv_kernel(arrays, args):
    arr = arrays[0]
    matrix, offset = _hsv_coefficients(args, arr.dtype)
    return _apply_matrix(arr, matrix, offset, args["_out"])


_HUE = _float_arg("hue", 0.0, "Hue change, in degrees.")
_SATURATION = _float_arg("saturation", 1.0, "Saturation multiplier (0 gives grey).")

HUE = _value_operator(
    "hue",
    [_DTYPE, _HUE, _IMAGE_TYPE],
    "Turn the hue of RGB images by an angle in degrees (a rotation of the colour around the grey axis "
    "in YIQ space).",
    needs_rgb=True,
    kernel=_hsv_kernel,
    types=_HSV_TYPES,
)
SATURATION = _value_operator(
    "saturation",
    [_DTYPE, _IMAGE_TYPE, _SATURATION],
    "Scale the saturation of RGB images (the chroma in YIQ space).",
    needs_rgb=True,
    kernel=_hsv_kernel,
    types=_HSV_TYPES,
)
HSV = _value_operator(
    "hsv",
    [
        Arg("dtype", "dtype", uint8, doc="Output type.", type_doc="DType"),
        _HUE,
        _SATURATION,
        _float_arg("value", 1.0, "Value (brightness) multiplier."),
    ],
    "Adjust hue (degrees added), saturation and value (multipliers) of RGB images, as a linear "
    "transform in RGB space through YIQ.",
    needs_rgb=True,
    kernel=_hsv_kernel,
    types=_HSV_TYPES,
)
COLOR_TWIST = _value_operator(
    "color_twist",
    [_BRIGHTNESS, _CONTRAST, _DTYPE, _HUE, _IMAGE_TYPE, _SATURATION],
    "Adjust hue, saturation, brightness and contrast of RGB images in one pass: the hue/saturation "
    "matrix, then ``brightness * (center + contrast * (x - center))`` with the center at 0.5 for "
    "float input and 128 for integer input.",
    needs_rgb=True,
    kernel=_hsv_kernel,
    types=_HSV_TYPES,
)


# -- color_space_conversion -----------------------------------------------------------------

# RGB -> YCbCr (ITU-R BT.601, studio range), per 8-bit value: the decoders' single-precision
# weights. YCbCr -> RGB: its inverse written from the same Kr, Kb (not the inverse of the
# rounded matrix), applied to Y - 16, Cb - 128, Cr - 128. Both, summed in float32 in channel
# order and rounded half up, equal the reference for every one of the 2^24 values.
_RGB_TO_YCBCR = YCBCR_MATRIX.astype(np.float64)
_YCBCR_OFFSET = np.array([16.0, 128.0, 128.0])
_YCBCR_TO_RGB = np.array(
    [
        [1.0, 0.0, 2 * (1 - BT601_KR)],
        [1.0, -2 * (1 - BT601_KB) * BT601_KB / BT601_KG, -2 * (1 - BT601_KR) * BT601_KR / BT601_KG],
        [1.0, 2 * (1 - BT601_KB), 0.0],
    ]
) * np.array([255 / 219, 255 / 224, 255 / 224])
# BT.601 luma in 15-bit fixed point, as the reference: (9798 R + 19235 G + 3735 B + 2^14) >> 15.
# The float32 weighted sum of uint8 values with these weights is exact (23 significant
# bits), so the kernels' float32 sum rounded half up gives those integers.
_GRAY_WEIGHTS = np.array([9798.0, 19235.0, 3735.0]) / 32768.0
_CHANNELS = {
    DALIImageType.RGB: 3,
    DALIImageType.BGR: 3,
    DALIImageType.YCbCr: 3,
    DALIImageType.GRAY: 1,
}


def _round_u8(values):
    return np.clip(np.floor(values + 0.5), 0, 255).astype(np.uint8)


def _csc_kernel(arrays, args):
    arr = arrays[0]
    source, target = args["_image_type"], args["_output_type"]
    if source is DALIImageType.GRAY:
        gray = arr[..., 0]
        if target is DALIImageType.YCbCr:
            y = _round_u8(gray.astype(np.float32) * np.float32(219.0 / 255.0) + np.float32(16.0))
            return np.stack([y, np.full_like(y, 128), np.full_like(y, 128)], axis=-1)
        return np.repeat(arr, 3, axis=-1)
    if source is DALIImageType.YCbCr:
        if target is DALIImageType.GRAY:
            centered = arr[..., :1].astype(np.float32) - np.float32(_YCBCR_OFFSET[0])
            return _round_u8(centered * np.float32(255.0 / 219.0))
        # rgb = M (ycc - offset), in one compiled pass.
        matrix = _YCBCR_TO_RGB if target is DALIImageType.RGB else _YCBCR_TO_RGB[::-1]
        return _apply_matrix(arr, matrix, 0.0, np.dtype(np.uint8), pre=_YCBCR_OFFSET)
    if target is DALIImageType.BGR or target is DALIImageType.RGB:
        return np.ascontiguousarray(arr[..., ::-1])
    if target is DALIImageType.GRAY:
        out = np.empty(arr.shape[:-1] + (1,), np.uint8)
        weights = _GRAY_WEIGHTS[::-1] if source is DALIImageType.BGR else _GRAY_WEIGHTS
        weighted_channels(arr.reshape(-1, 3), out.reshape(-1, 1), weights.astype(np.float32), 0.0)
        return out
    # YCbCr: the matrix plus the offsets, in one compiled pass, over RGB (BGR reordered first:
    # the sums run R, G, B, as the reference's, which rounds 1 in 100,000 values otherwise).
    if source is DALIImageType.BGR:
        arr = np.ascontiguousarray(arr[..., ::-1])
    return _apply_matrix(arr, _RGB_TO_YCBCR, _YCBCR_OFFSET, np.dtype(np.uint8))


def _csc_prepare(ins, args):
    op = COLOR_SPACE_CONVERSION
    source = _image_type(op, "image_type", args["image_type"], None)
    target = _image_type(op, "output_type", args["output_type"], None)
    for name, value in (("image_type", source), ("output_type", target)):
        if value not in _CHANNELS:
            raise InvalidArgumentError(
                f"{op.qualname}: '{name}' must be RGB, BGR, GRAY or YCbCr, got {value.name}"
            )
    if source is target:
        raise InvalidArgumentError(
            f"{op.qualname}: converting {source.name} to itself is not supported (as in the reference)"
        )
    if ins[0]._dtype is not uint8:
        raise InvalidArgumentError(f"{op.qualname}: the input must be uint8, got {ins[0]._dtype}")
    args["_layout"] = channels_last_layout(op, ins[0], ("HWC", "FHWC", "DHWC", "FDHWC"))
    args["_image_type"], args["_output_type"] = source, target


def _csc_shape(shapes, args):
    shape = shapes[0]
    expected = _CHANNELS[args["_image_type"]]
    if shape[-1] != expected:
        raise InvalidArgumentError(
            f"ndd.color_space_conversion: a {args['_image_type'].name} input must have {expected} "
            f"channel(s), got {shape[-1]}"
        )
    return [tuple(shape[:-1]) + (_CHANNELS[args["_output_type"]],)]


COLOR_SPACE_CONVERSION = Operator(
    "color_space_conversion",
    inputs=[Input("input", doc="uint8 images with channels last (HWC, FHWC, DHWC, FDHWC).")],
    args=[
        Arg(
            "image_type",
            "any",
            doc="Colour space of the input: RGB, BGR, GRAY or YCbCr.",
            type_doc="DALIImageType",
        ),
        Arg(
            "output_type",
            "any",
            doc="Colour space of the output: RGB, BGR, GRAY or YCbCr.",
            type_doc="DALIImageType",
        ),
    ],
    prepare_args=_csc_prepare,
    infer_types=lambda ins, args: [(uint8, args["_layout"])],
    infer_shape=_csc_shape,
    kernel=_csc_kernel,
    doc="Convert uint8 images between the RGB, BGR, GRAY and YCbCr (BT.601, studio range) colour spaces.",
)


# -- GPU kernels ---------------------------------------------------------------------------


def _affine_parts(op):
    def parts(args, shape, in_type):
        return [
            ColorPart(frame, COLOR_AFFINE, _affine_coefficients(a, in_type, a["_out"]))
            for frame, a in frame_parts(args, shape, op.qualname)
        ]

    return parts


def _matrix_params(matrix, pre, post):
    return np.concatenate([np.ravel(pre), np.ravel(matrix), np.ravel(post)]).astype(np.float32)


def _hsv_parts(op):
    def parts(args, shape, in_type):
        result = []
        # _apply_matrix's rounding: halves up over bytes (its compiled pass), else the cast's.
        rounding = COLOR_HALF_UP if in_type == np.uint8 and args["_out"] == np.uint8 else 0
        for frame, a in frame_parts(args, shape, op.qualname):
            matrix, offset = _hsv_coefficients(a, in_type)
            result.append(
                ColorPart(
                    frame, COLOR_MATRIX, _matrix_params(matrix, np.zeros(3), np.full(3, offset)), rounding
                )
            )
        return result

    return parts


def _csc_matrix(source, target):
    """``_csc_kernel``'s conversion as (matrix (out x in channels), pre, post), computed
    per pixel as ``sum_j m[c][j] * (x[j] - pre[j]) + post[c]``, rounded half up."""
    rgb_like = (DALIImageType.RGB, DALIImageType.BGR)
    if source is DALIImageType.GRAY:
        if target is DALIImageType.YCbCr:
            return np.array([[219.0 / 255.0], [0.0], [0.0]]), np.zeros(1), np.array([16.0, 128.0, 128.0])
        return np.ones((3, 1)), np.zeros(1), np.zeros(3)
    if source is DALIImageType.YCbCr:
        if target is DALIImageType.GRAY:
            return np.array([[255.0 / 219.0, 0.0, 0.0]]), np.array([_YCBCR_OFFSET[0], 0.0, 0.0]), np.zeros(1)
        matrix = _YCBCR_TO_RGB if target is DALIImageType.RGB else _YCBCR_TO_RGB[::-1]
        return matrix, _YCBCR_OFFSET, np.zeros(3)
    if target in rgb_like:
        return np.eye(3)[::-1], np.zeros(3), np.zeros(3)
    if target is DALIImageType.GRAY:
        weights = _GRAY_WEIGHTS[::-1] if source is DALIImageType.BGR else _GRAY_WEIGHTS
        return weights.reshape(1, 3), np.zeros(3), np.zeros(1)
    # BGR: the RGB matrix over the channels reversed (_csc_parts), summed R, G, B as on the CPU.
    return _RGB_TO_YCBCR, np.zeros(3), _YCBCR_OFFSET


def _csc_parts(args, shape, in_type):
    source, target = args["_image_type"], args["_output_type"]
    matrix, pre, post = _csc_matrix(source, target)
    mode = COLOR_MATRIX
    if source is DALIImageType.BGR and target is DALIImageType.YCbCr:
        mode = COLOR_MATRIX_REVERSED
    return [ColorPart(None, mode, _matrix_params(matrix, pre, post), COLOR_HALF_UP, matrix.shape[0])]


def _out_type(args):
    return args["_out"]


for _op in (BRIGHTNESS, BRIGHTNESS_CONTRAST, CONTRAST):
    _op.gpu_kernel = GpuColor(_op, _affine_parts(_op), _out_type)
for _op in (COLOR_TWIST, HSV, HUE, SATURATION):
    _op.gpu_kernel = GpuColor(_op, _hsv_parts(_op), _out_type)
COLOR_SPACE_CONVERSION.gpu_kernel = GpuColor(COLOR_SPACE_CONVERSION, _csc_parts, lambda args: np.uint8)


OPERATORS = [
    BRIGHTNESS,
    BRIGHTNESS_CONTRAST,
    COLOR_SPACE_CONVERSION,
    COLOR_TWIST,
    CONTRAST,
    HSV,
    HUE,
    SATURATION,
]
# Arguments marked with ndd.per_frame are unfolded by frames.py (which also lets
# one value serve every frame); a plain 1-D array on a sequence is split by _per_frame.
for _op in (BRIGHTNESS, BRIGHTNESS_CONTRAST, COLOR_TWIST, CONTRAST, HSV, HUE, SATURATION):
    _op.per_frame_args = tuple(spec.name for spec in _op.arg_specs if spec.kind == "array")


# -- equalize --------------------------------------------------------------------------------


def _equalize_prepare(ins, args):
    op = EQUALIZE
    if ins[0]._dtype is not uint8:
        raise InvalidArgumentError(f"{op.qualname}: the input must be uint8, got {ins[0]._dtype}")
    axes = image_axes(op, ins[0]._layout, ins[0].ndim, four_dims="FHWC")
    if axes.depth is not None:
        raise InvalidArgumentError(f"{op.qualname}: volumes are not supported, got layout {axes.layout!r}")
    args["_frame"], args["_channel"], args["_layout"] = axes.frame, axes.channel, axes.layout


def _equalize_types(ins, args):
    # An input without a layout gets the one it is read as (HW, HWC, FHWC), as in the reference.
    return [(uint8, args["_layout"])]


def _equalize_kernel(arrays, args):
    arr = arrays[0]
    if arr.size == 0:
        return arr.copy()  # no pixels, or no channels: nothing to equalize
    frame, channel = args["_frame"], args["_channel"]
    if channel is not None and channel < arr.ndim - 1 and (frame is None or frame < channel):
        # Planar (CHW, FCHW): each channel of each frame is a plane of its own, equalized
        # in place of a frame of one channel.
        source = np.ascontiguousarray(arr).reshape(-1, math.prod(arr.shape[channel + 1 :]), 1)
        target = np.empty_like(source)
        equalize_frames(source, target)
        return target.reshape(arr.shape)
    # Frames first and channels last, as (frames, pixels, channels) for the kernel.
    order = [a for a in (frame,) if a is not None]
    order += [a for a in range(arr.ndim) if a not in (frame, channel)]
    order += [channel] if channel is not None else []
    moved = arr.transpose(order)
    frames = arr.shape[frame] if frame is not None else 1
    channels = arr.shape[channel] if channel is not None else 1
    source = np.ascontiguousarray(moved).reshape(frames, -1, channels)
    target = np.empty_like(source)
    equalize_frames(source, target)
    return np.ascontiguousarray(target.reshape(moved.shape).transpose(np.argsort(order)))


EQUALIZE = Operator(
    "equalize",
    inputs=[Input("input", doc="uint8 images or videos (HW, HWC, CHW, FHW, FHWC, FCHW).")],
    prepare_args=_equalize_prepare,
    infer_types=_equalize_types,
    infer_shape=_same_shape,
    kernel=_equalize_kernel,
    doc="Histogram-equalize uint8 images, each channel (and frame) on its own.",
)

EQUALIZE.gpu_kernel = GpuEqualize(EQUALIZE, lambda args: (args["_frame"], args["_channel"]))

OPERATORS.append(EQUALIZE)


# -- jpeg_compression_distortion ------------------------------------------------------------


def _jpeg_prepare(ins, args):
    op = JPEG_COMPRESSION_DISTORTION
    if ins[0]._dtype is not uint8:
        raise InvalidArgumentError(f"{op.qualname}: the input must be uint8, got {ins[0]._dtype}")
    layout = ins[0]._layout or {3: "HWC", 4: "FHWC"}.get(ins[0].ndim, "")
    if layout not in ("HWC", "FHWC") or len(layout) != ins[0].ndim:
        raise InvalidArgumentError(
            f"{op.qualname}: expected HWC images or FHWC sequences, got {ins[0].ndim}-D data with layout "
            f"{ins[0]._layout!r}"
        )
    args["_layout"] = layout


def _jpeg_round_trip(frame, quality, out=None):
    """Encode ``frame`` and decode it again (into ``out`` when given): with libjpeg-turbo
    in one compiled call where ndd was built with it (``jpeg_region``), else through
    Pillow's encoder and simplejpeg; the same pixels (tests/ops/test_color.py)."""
    if _round_trip_rgb is not None and frame.size:  # Pillow refuses an empty image, as the reference
        target = np.empty(frame.shape, np.uint8) if out is None else out
        if _round_trip_rgb(np.ascontiguousarray(frame), quality, target):
            return target
    return _pillow_round_trip(frame, quality, out)


def _pillow_round_trip(frame, quality, out=None):
    """Encode ``frame`` with Pillow and decode it with simplejpeg (into ``out`` when given)."""
    height, width = frame.shape[:2]
    # Pillow keeps RGB as RGBX: given that layout, it maps the pixels instead of unpacking them.
    rgbx = np.empty((height, width, 4), np.uint8)
    rgb_to_rgbx(np.ascontiguousarray(frame).reshape(-1, 3), rgbx.reshape(-1, 4))
    image = Image.frombuffer("RGBX", (width, height), rgbx, "raw", "RGBX", 0, 1)
    buffer = io.BytesIO()
    # 4:2:0 chroma subsampling, as the reference's encoder. The encoder stays Pillow's: simplejpeg's
    # (TurboJPEG) gives other coefficients than Pillow's and the reference's for qualities below 100.
    # An RGBX image is encoded as its RGB (the same bytes as Image.fromarray(frame) gives).
    image.save(buffer, format="JPEG", quality=quality, subsampling=2)
    # Decoding is the same libjpeg-turbo path in both (checked pixel for pixel), and simplejpeg
    # writes RGB straight into a numpy array, where Pillow goes through its RGBX image and bytes.
    return simplejpeg.decode_jpeg(buffer.getbuffer(), colorspace="RGB", buffer=out)


def _jpeg_quality(args):
    """A sample's quality, clamped to 1..100."""
    return min(max(int(args["quality"]), 1), 100)


def _jpeg_kernel(arrays, args):
    arr = arrays[0]
    quality = _jpeg_quality(args)
    if arr.ndim == 3:
        return _jpeg_round_trip(arr, quality)
    out = np.empty(arr.shape, np.uint8)
    for frame, target in zip(arr, out, strict=True):
        _jpeg_round_trip(frame, quality, target)
    return out


JPEG_COMPRESSION_DISTORTION = Operator(
    "jpeg_compression_distortion",
    inputs=[Input("input", doc="uint8 RGB images (HWC) or sequences (FHWC).")],
    args=[
        Arg(
            "quality",
            "int",
            50,
            per_sample=True,
            doc="JPEG quality, 1 (worst) to 100 (best); values outside are clamped.",
        )
    ],
    prepare_args=_jpeg_prepare,
    # An input without a layout gets the one it is read as (HWC, FHWC), as in the reference.
    infer_types=lambda ins, args: [(ins[0]._dtype, args["_layout"])],
    infer_shape=_check_three_channels_of("ndd.jpeg_compression_distortion"),
    kernel=_jpeg_kernel,
    doc="Add JPEG compression artifacts: encode each image (4:2:0) at ``quality`` and decode it again.",
)

JPEG_COMPRESSION_DISTORTION.gpu_kernel = GpuJpegDistortion(JPEG_COMPRESSION_DISTORTION, _jpeg_quality)

OPERATORS.append(JPEG_COMPRESSION_DISTORTION)


# -- clahe -------------------------------------------------------------------------------------
#
# OpenCV's CLAHE, which the reference runs on the CPU: the image is padded (mirrored
# without repeating the edge) to a whole number of tiles when it does not divide
# evenly (then by a remainder-based amount on both axes, a whole extra tile where an
# axis did divide), each tile's 256-bin histogram is clipped at
# max(int(clip_limit * tile_area / 256), 1) with the excess spread evenly and the
# remainder on every (256 // remainder)-th bin, and each pixel blends the lookup
# tables of its four nearest tile centres in float32, rounding halves to even.


def _clahe_tiles(height, width, tiles_x, tiles_y, clip_limit):
    """CLAHE's tiles of a ``(height, width)`` plane: the padded height and width (whole
    tiles), the clip limit in counts (0: none) and the float32 scale from cumulative
    counts to table values. The GPU kernel (gpu_clahe.py) plans its tiles with it too."""
    if height % tiles_y or width % tiles_x:
        height += tiles_y - height % tiles_y
        width += tiles_x - width % tiles_x
    area = (height // tiles_y) * (width // tiles_x)
    limit = max(int(clip_limit * area / 256), 1) if clip_limit > 0 else 0
    return height, width, limit, np.float32(255.0) / np.float32(area)


def _clahe_luts(plane, tiles_x, tiles_y, clip_limit):
    height, width = plane.shape
    padded_h, padded_w, limit, scale = _clahe_tiles(height, width, tiles_x, tiles_y, clip_limit)
    if (padded_h, padded_w) != (height, width):
        # Padded by index maps, not by a copy of the image.
        rows, cols = _reflect_index(padded_h, height), _reflect_index(padded_w, width)
    else:
        rows, cols = np.arange(height), np.arange(width)
    hist = np.zeros((tiles_y, tiles_x, 256), np.int64)
    tile_histograms(plane, hist, rows, cols)
    luts = np.empty((tiles_y, tiles_x, 256), np.float32)
    clip_tile_tables(hist.reshape(-1, 256), luts.reshape(-1, 256), limit, scale)
    return luts, padded_h // tiles_y, padded_w // tiles_x


def _clahe_plane(plane, tiles_x, tiles_y, clip_limit):
    """CLAHE of a contiguous uint8 plane, ``(height, width)``."""
    height, width = plane.shape
    if plane.size == 0:
        # No pixel to count: the padding's index maps would point outside the plane.
        return np.empty((height, width), np.uint8)
    luts, tile_h, tile_w = _clahe_luts(plane, tiles_x, tiles_y, clip_limit)
    out = np.empty((height, width), np.uint8)
    blend_tile_tables(
        plane,
        out,
        luts,
        *_clahe_neighbours(height, tile_h, tiles_y),
        *_clahe_neighbours(width, tile_w, tiles_x),
    )
    return out


@functools.lru_cache(maxsize=64)
def _clahe_neighbours(size, tile, tiles):
    """For each pixel along an axis of ``size``: the tiles whose centres lie before and
    after it, and the float32 weight of the second. Cached, hence read-only."""
    f32 = np.float32
    pos = np.arange(size, dtype=f32) * (f32(1.0) / f32(tile)) - f32(0.5)
    first = np.floor(pos).astype(np.int64)
    weight = (pos - first).astype(f32)
    maps = np.maximum(first, 0), np.minimum(first + 1, tiles - 1), weight
    for array in maps:
        array.flags.writeable = False
    return maps


def _reflect_index(size, length):
    """Indices of a mirror padding without repeating the edge (also where the pad is longer than
    the image)."""
    if length == 1:
        return np.zeros(size, np.int64)
    period = 2 * (length - 1)
    index = np.arange(size) % period
    return np.where(index < length, index, period - index)


# sRGB (D65) <-> CIE Lab, with 8-bit Lab as OpenCV stores it (L * 255 / 100, a + 128, b + 128).
_RGB_TO_XYZ = np.array(
    [[0.412453, 0.357580, 0.180423], [0.212671, 0.715160, 0.072169], [0.019334, 0.119193, 0.950227]]
)
_WHITE = np.array([0.950456, 1.0, 1.088754])
_LAB_EPSILON = 0.008856


def _srgb_to_linear(c):
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab_f(t):
    # The cube root in float64, rounded to t's type (correctly rounded): numpy's float32
    # cube root differs in its last bit from one processor to another.
    root = np.cbrt(t.astype(np.float64)).astype(t.dtype)
    return np.where(t > _LAB_EPSILON, root, 7.787 * t + 16.0 / 116.0)


# RGB -> 8-bit Lab in OpenCV's fixed point (the reference's numbers, which float
# arithmetic misses by up to 2 in dark colours): linear values in 1/8 units from a
# table, XYZ / white with 12 fractional bits, f(t) from a table with 15; the kernel
# (ndd/_cpu/color.pyx) then takes L = 116 f(Y) - 16 on 0..255 as 296 f(Y) - 16 * 255 / 100.
_LAB_XYZ_BITS, _LAB_F_BITS = 12, 15
_LINEAR_TABLE = np.rint(
    np.float32(255 * 8)
    * _srgb_to_linear((np.arange(256, dtype=np.float32) / np.float32(255)).astype(np.float64))
).astype(np.int32)
_XYZ_COEFFS = np.rint(_RGB_TO_XYZ * ((1 << _LAB_XYZ_BITS) / _WHITE)[:, None]).astype(np.int32).reshape(-1)
_F_TABLE = np.rint(
    np.float32(1 << _LAB_F_BITS) * _lab_f(np.arange(3 * 1024, dtype=np.float32) * np.float32(1.0 / (255 * 8)))
).astype(np.int32)
# OpenCV's float32 cube root of 324 / 2040 is one unit in the last place below the
# correctly rounded 0.5415497, whose 2^15 multiple is 17745.5 exactly: OpenCV's table,
# and so the reference's Lab, has 17745 there. With this entry every one of the 2^24
# 8-bit colours converts as OpenCV converts it (tests/ops/test_color.py); each other
# entry is the correctly rounded one. (numpy's float32 cube root, which this table was
# made with before, gave 17745 on x86-64 but 17746 on aarch64, and 9455 at entry 49
# there, so ndd's CLAHE of colour images missed the reference by up to 5 levels.)
_F_TABLE[324] = 17745
# Back from Lab, OpenCV's fixed point too (14 fractional bits; float arithmetic
# misses its result by 1 in about 5% of the values): Y and f(Y) of each L from a
# table, f(X) and f(Z) from the a/b offsets, X and Z from an inverse-f table, linear
# RGB with 12-bit coefficients and the sRGB code from a table in 1/4096 steps. The
# tables are built in float32 where OpenCV builds them in (soft) float32.
_LAB_BASE = 1 << 14
# XYZ -> linear sRGB as published with 6 decimals (not quite the inverse of _RGB_TO_XYZ).
_SRGB_FROM_XYZ = np.array(
    [[3.240479, -1.53715, -0.498535], [-0.969256, 1.875991, 0.041556], [0.055648, -0.204043, 1.057311]]
)
_XYZ_TO_RGB = np.rint(_SRGB_FROM_XYZ * ((1 << _LAB_XYZ_BITS) * _WHITE)[None, :]).astype(np.int32).reshape(-1)


def _lightness_table():
    f32 = np.float32
    table = np.empty((256, 2), np.int32)
    for level in range(256):
        if level <= 20:  # L <= 8: the linear part of f
            y = f32(level * _LAB_BASE * 180) / f32(17 * 29**3)
            fy = f32(_LAB_BASE) * (f32(16) / f32(116) + f32(level * 5) / f32(3 * 17 * 29))
        else:
            fy = f32(level * 100 * _LAB_BASE) / f32(255 * 116) + f32(16 * _LAB_BASE) / f32(116)
            y = fy * fy * fy / f32(_LAB_BASE * _LAB_BASE)
        table[level] = np.rint(y), np.rint(fy)
    return table


def _xz_table():
    """X / white (or Z / white) of f(X) (or f(Z)) = f for every f of 8-bit Lab, in
    [-_XZ_OFFSET, 2.25 * _LAB_BASE - _XZ_OFFSET): (f - 16/116) * 108/841 up to f = 6/29
    (dividing as C does, towards zero), f cubed above."""
    f = np.arange(-_XZ_OFFSET, _LAB_BASE * 9 // 4 - _XZ_OFFSET, dtype=np.int64)
    linear = np.sign(f) * (np.abs(f) * 108 // 841) - (_LAB_BASE * 16 // 116) * 108 // 841
    return np.where(f <= 3390, linear, f * f // _LAB_BASE * f // _LAB_BASE).astype(np.int32)


def _srgb_table():
    """The sRGB code of each linear value in 1/4096 steps."""
    linear = np.arange(1 << 12, dtype=np.float64) / (1 << 12)
    encoded = np.where(linear <= 0.0031308, linear * 12.92, linear ** (1 / 2.4) * 1.055 - 0.055)
    # int32 (of uint8 values): the AVX2 kernel gathers 32-bit entries.
    return np.rint(np.float32(255) * encoded.astype(np.float32)).astype(np.uint8).astype(np.int32)


_XZ_OFFSET = 8145
_XZ_TABLE = _xz_table()
_LIGHTNESS_TABLE = _lightness_table()
_SRGB_TABLE = _srgb_table()


def _rgb_to_lab_planes(rgb):
    """8-bit Lab of ``(pixels, 3)`` RGB: L ``(pixels,)`` apart, for CLAHE, and (a, b) ``(pixels, 2)``."""
    lightness = np.empty(len(rgb), np.uint8)
    chroma = np.empty((len(rgb), 2), np.uint8)
    rgb_to_lab8(rgb, lightness, chroma, _LINEAR_TABLE, _XYZ_COEFFS, _F_TABLE)
    return lightness, chroma


def _lab_planes_to_rgb(lightness, chroma):
    rgb = np.empty((len(lightness), 3), np.uint8)
    lab8_to_rgb(lightness, chroma, rgb, _LIGHTNESS_TABLE, _XZ_TABLE, _XZ_OFFSET, _XYZ_TO_RGB, _SRGB_TABLE)
    return rgb


def _clahe_prepare(ins, args):
    op = CLAHE
    if ins[0]._dtype is not uint8:
        raise InvalidArgumentError(f"{op.qualname}: the input must be uint8, got {ins[0]._dtype}")
    if ins[0].ndim != 3 or ins[0]._layout not in ("", "HWC"):
        raise InvalidArgumentError(
            f"{op.qualname}: expected HWC images, got {ins[0].ndim}-D data with layout {ins[0]._layout!r}"
        )
    for name in ("tiles_x", "tiles_y"):
        if args[name] < 1:
            raise InvalidArgumentError(f"{op.qualname}: '{name}' must be at least 1, got {args[name]}")
    # Each tile has a 256-bin int64 histogram and a float32 table, whatever the image size.
    tiles = args["tiles_x"] * args["tiles_y"]
    if exceeds_half_of_memory(tiles * 256 * 12):
        raise InvalidArgumentError(
            f"{op.qualname}: 'tiles_x' {args['tiles_x']} by 'tiles_y' {args['tiles_y']} is {tiles} tiles, "
            "whose tables would fill more than half of this machine's memory"
        )
    bins = args["bins"]
    if bins < 1 or bins & (bins - 1):
        raise InvalidArgumentError(f"{op.qualname}: 'bins' must be a power of 2, got {bins}")


def _clahe_shape(shapes, args):
    shape = shapes[0]
    if shape[2] not in (1, 3):
        raise InvalidArgumentError(f"ndd.clahe: expected 1 or 3 channels, got {shape[2]}")
    return [shape]


def _clahe_kernel(arrays, args):
    arr = arrays[0]
    tiles = (args["tiles_x"], args["tiles_y"], args["clip_limit"])
    height, width = arr.shape[:2]
    if arr.shape[2] == 1:
        return _clahe_plane(np.ascontiguousarray(arr).reshape(height, width), *tiles)[..., None]
    if args["luma_only"]:
        lightness, chroma = _rgb_to_lab_planes(np.ascontiguousarray(arr).reshape(-1, 3))
        lightness = _clahe_plane(lightness.reshape(height, width), *tiles)
        return _lab_planes_to_rgb(lightness.reshape(-1), chroma).reshape(arr.shape)
    return np.stack([_clahe_plane(np.ascontiguousarray(arr[..., c]), *tiles) for c in range(3)], axis=-1)


CLAHE = Operator(
    "clahe",
    inputs=[Input("input", doc="uint8 HWC images with 1 or 3 (RGB) channels.")],
    args=[
        Arg("bins", "int", 256, doc="Histogram bins; a power of 2 (the histograms of uint8 data have 256)."),
        Arg(
            "clip_limit",
            "float",
            doc="Clip limit relative to the mean bin count, ``clip_limit * area / 256``.",
        ),
        Arg(
            "luma_only",
            "bool",
            True,
            doc="For RGB images, equalize the lightness (L of CIE Lab) only; else every channel.",
        ),
        Arg("tiles_x", "int", doc="Number of tiles across the width."),
        Arg("tiles_y", "int", doc="Number of tiles down the height."),
    ],
    prepare_args=_clahe_prepare,
    # HWC data without a layout comes out labelled HWC, as in the reference.
    infer_types=lambda ins, args: [(ins[0]._dtype, "HWC")],
    infer_shape=_clahe_shape,
    kernel=_clahe_kernel,
    doc="Contrast-limited adaptive histogram equalization of uint8 images, as OpenCV's CLAHE: per tile "
    "clipped histograms whose lookup tables are blended bilinearly between tile centres.",
)

OPERATORS.append(CLAHE)
CLAHE.gpu_kernel = GpuClahe(
    CLAHE,
    _clahe_tiles,
    rgb_to_lab=(_LINEAR_TABLE, _XYZ_COEFFS, _F_TABLE),
    lab_to_rgb=(_LIGHTNESS_TABLE, _XZ_TABLE, _XZ_OFFSET, _XYZ_TO_RGB, _SRGB_TABLE),
)
