"""``ndd.optical_flow``: dense motion between consecutive frames of ``FHWC`` uint8
sequences, one vector field for each pair of frames.

The reference runs this operator on NVIDIA's optical-flow hardware only (it has no
CPU implementation). ndd computes it on the CPU with OpenCV's DIS optical flow
(Kroeger et al., "Fast Optical Flow using Dense Inverse Search", 2016), from the
optional ``opencv-python-headless`` package (``pip install 'ndd[opencv]'``),
imported on first use. The vectors are estimates, as the hardware's are; they are
not the hardware's numbers.

The convention is the reference's: the vector at pixel ``p`` of frame ``i`` points
to where that content was in frame ``i - 1``, in pixels of the input, so that
``frame[i][p] ~ frame[i - 1][p + flow[i - 1][p]]`` (x first, then y). A field at an
``output_grid`` of ``g`` holds one vector per ``g x g`` block, the mean of the
block's vectors (blocks at the right and bottom edges may be smaller); its
vectors stay in input pixels.

Colour frames are compared by their BT.601 luma. ``preset`` picks DIS's preset
the way the reference picks the hardware's speed level: below 0.375 the slowest
and best (DIS's MEDIUM), below 0.75 the middle one (FAST), up to 1.0 the fastest
(ULTRAFAST).

Hints start the search from a given field, which lets it find displacements too
large for it to find alone: ``enable_temporal_hints`` starts each pair after the
first from the previous pair's field; ``enable_external_hints`` takes the fields
from the second input, at a grid of ``hint_grid``: ``(F - 1, ceil(H / hint_grid),
ceil(W / hint_grid), 2)`` float, one per pair, or ``(ceil(H / hint_grid),
ceil(W / hint_grid), 2)`` for every pair. External hints come first where both are on.
Without ``enable_external_hints`` a second input is ignored, as in the reference.

Frames too small for DIS's patches at its finest scale (under 16 pixels high or wide
at the best preset, 32 at the others; OpenCV's DIS crashes on such frames) are
extended by repeating their last row and column; the field is computed on the
extended frames and cut back to the frame.
"""

import numpy as np

from .._optional import import_optional
from .._prepare.args import InvalidArgumentError
from .._types import float32, uint8
from ..types import DALIImageType
from .schema import Arg, Input, OmittedInt, Operator

_QUALNAME = "ndd.optical_flow"
_OUTPUT_GRIDS = (1, 2, 4)
_HINT_GRIDS = (1, 2, 4, 8)
# The hardware's speed levels by preset (the reference's thresholds), as DIS's
# preset names: the best and slowest first.
_PRESETS = ((0.375, "DISOPTICAL_FLOW_PRESET_MEDIUM"), (0.75, "DISOPTICAL_FLOW_PRESET_FAST"))
_FASTEST = "DISOPTICAL_FLOW_PRESET_ULTRAFAST"
_CHANNELS = {DALIImageType.RGB: (3, 4), DALIImageType.BGR: (3, 4), DALIImageType.GRAY: (1,)}
_TO_GRAY = {
    (DALIImageType.RGB, 3): "COLOR_RGB2GRAY",
    (DALIImageType.RGB, 4): "COLOR_RGBA2GRAY",
    (DALIImageType.BGR, 3): "COLOR_BGR2GRAY",
    (DALIImageType.BGR, 4): "COLOR_BGRA2GRAY",
}


def _import_opencv():
    return import_optional(
        "cv2", f"{_QUALNAME} needs OpenCV (the 'opencv-python-headless' package)", "opencv"
    )


def _image_type(value):
    if value is None:
        return DALIImageType.RGB
    try:
        image_type = DALIImageType(int(value))
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"{_QUALNAME}: 'image_type' must be an image type such as ndd.types.RGB, got {value!r}"
        ) from None
    if image_type not in _CHANNELS:
        raise InvalidArgumentError(
            f"{_QUALNAME}: 'image_type' must be RGB, BGR or GRAY, got {image_type.name}"
        )
    return image_type


def _grid(args, name, allowed):
    value = args[name]
    if value not in allowed:
        choices = ", ".join(str(v) for v in allowed[:-1]) + f" or {allowed[-1]}"
        raise InvalidArgumentError(f"{_QUALNAME}: '{name}' must be {choices}, got {value}")
    return value


def _output_grid(args):
    """``output_grid``, or its deprecated alias ``output_format`` when only that is given."""
    alias = args["output_format"]
    if alias is not None:
        if isinstance(alias, bool) or not isinstance(alias, (int, np.integer)):
            raise InvalidArgumentError(f"{_QUALNAME}: 'output_format' must be an int, got {alias!r}")
        alias = int(alias)
        if OPTICAL_FLOW.given(args, "output_grid") and alias != args["output_grid"]:
            raise InvalidArgumentError(
                f"{_QUALNAME}: 'output_format' is a deprecated alias of 'output_grid'; pass one"
            )
        args["output_grid"] = alias
    return _grid(args, "output_grid", _OUTPUT_GRIDS)


def _preset_name(preset):
    if not 0.0 <= preset <= 1.0:
        raise InvalidArgumentError(f"{_QUALNAME}: 'preset' must be between 0.0 and 1.0, got {preset}")
    return next((name for limit, name in _PRESETS if preset < limit), _FASTEST)


def _prepare(ins, args):
    frames = ins[0]
    if frames._dtype is not uint8:
        raise InvalidArgumentError(f"{_QUALNAME}: the frames must be uint8, got {frames._dtype}")
    if frames.ndim != 4 or (frames._layout and frames._layout != "FHWC"):
        raise InvalidArgumentError(
            f"{_QUALNAME}: the input must be sequences of frames (FHWC), got {frames.ndim}-D data"
            + (f" with layout {frames._layout!r}" if frames._layout else "")
        )
    args["_image_type"] = _image_type(args["image_type"])
    args["_grid"] = _output_grid(args)
    args["_hint_grid"] = _grid(args, "hint_grid", _HINT_GRIDS)
    args["_preset"] = _preset_name(args["preset"])
    external = args["enable_external_hints"]
    if external:
        hints = ins[1] if len(ins) > 1 else None
        if hints is None:
            raise InvalidArgumentError(
                f"{_QUALNAME}: 'enable_external_hints' needs the hints as the second input (input_1)"
            )
        if not hints._dtype.is_float:
            raise InvalidArgumentError(f"{_QUALNAME}: the hints (input_1) must be float, got {hints._dtype}")
    args["_external"] = external
    _import_opencv()


def _types(ins, args):
    return [(float32, "FHWC")]


def _cells(size, grid):
    return -(-size // grid)


def _check_hints(shape, frames_shape, args):
    count, height, width = frames_shape[0], frames_shape[1], frames_shape[2]
    grid = args["_hint_grid"]
    field = (_cells(height, grid), _cells(width, grid), 2)
    shape = tuple(shape)
    if shape != field and shape != (count - 1,) + field:
        raise InvalidArgumentError(
            f"{_QUALNAME}: the hints (input_1) of {count} frames of {height}x{width} at 'hint_grid' {grid} "
            f"must have shape {(count - 1,) + field} (or {field} for every pair), got {shape}"
        )


def _shape(shapes, args):
    frames = tuple(shapes[0])
    count, height, width, channels = frames
    if count < 2:
        what = "a one-frame" if count == 1 else "an empty"
        raise ValueError(f"{_QUALNAME}: every sequence needs at least 2 frames, got {what} sequence")
    allowed = _CHANNELS[args["_image_type"]]
    if channels not in allowed:
        expected = " or ".join(str(c) for c in allowed) + (" channel" if allowed == (1,) else " channels")
        raise InvalidArgumentError(
            f"{_QUALNAME}: 'image_type' {args['_image_type'].name} takes {expected}, got {channels}"
        )
    if args["_external"]:
        _check_hints(shapes[1], frames, args)
    grid = args["_grid"]
    return [(count - 1, _cells(height, grid), _cells(width, grid), 2)]


def _smallest_side(dis):
    """The fewest rows and columns DIS takes: a patch at its finest scale."""
    return dis.getPatchSize() << dis.getFinestScale()


def _luma(cv2, frame, image_type, smallest):
    """One frame as a contiguous uint8 plane, padded up to ``smallest`` rows and columns."""
    if image_type is DALIImageType.GRAY:
        plane = np.ascontiguousarray(frame[..., 0])
    else:
        plane = cv2.cvtColor(np.ascontiguousarray(frame), getattr(cv2, _TO_GRAY[image_type, frame.shape[2]]))
    height, width = plane.shape
    if height < smallest or width < smallest:
        plane = np.pad(plane, ((0, max(0, smallest - height)), (0, max(0, smallest - width))), mode="edge")
    return plane


def _dense(field, grid, shape):
    """A field at ``grid`` spread over every pixel of a plane of ``shape``."""
    if grid > 1:
        field = np.repeat(np.repeat(field, grid, axis=0), grid, axis=1)
    dense = np.empty(shape + (2,), np.float32)
    rows, cols = min(shape[0], field.shape[0]), min(shape[1], field.shape[1])
    dense[:rows, :cols] = field[:rows, :cols]
    # The padding that extends a small frame takes its edge vectors.
    dense[rows:, :cols] = dense[rows - 1 : rows, :cols]
    dense[:, cols:] = dense[:, cols - 1 : cols]
    return dense


def _block_means(flow, grid):
    """The mean vector of each ``grid x grid`` block (smaller blocks at the far edges)."""
    if grid == 1:
        return flow
    height, width = flow.shape[:2]
    row_starts, col_starts = np.arange(0, height, grid), np.arange(0, width, grid)
    sums = np.add.reduceat(np.add.reduceat(flow, row_starts, axis=0), col_starts, axis=1)
    rows = np.minimum(grid, height - row_starts).astype(np.float32)
    cols = np.minimum(grid, width - col_starts).astype(np.float32)
    return sums / (rows[:, None, None] * cols[None, :, None])


def _finite_hints(hints):
    """The hints as float32, refused where any is not a finite float32 (OpenCV's DIS
    crashes on them)."""
    with np.errstate(over="ignore"):
        hints = np.asarray(hints, np.float32)
    if not np.isfinite(hints).all():
        raise ValueError(
            f"{_QUALNAME}: the hints (input_1) must be finite float32 values, got NaN or infinity"
        )
    return hints


def _kernel(arrays, args):
    cv2 = _import_opencv()
    frames = arrays[0]
    count, height, width = frames.shape[:3]
    grid = args["_grid"]
    out = np.zeros((count - 1, _cells(height, grid), _cells(width, grid), 2), np.float32)
    if height == 0 or width == 0:
        return out
    hints = _finite_hints(arrays[1]) if args["_external"] else None
    if hints is not None and hints.ndim == 3:
        hints = [hints] * (count - 1)
    dis = cv2.DISOpticalFlow_create(getattr(cv2, args["_preset"]))
    smallest = _smallest_side(dis)
    previous = _luma(cv2, frames[0], args["_image_type"], smallest)
    flow = None
    for i in range(1, count):
        current = _luma(cv2, frames[i], args["_image_type"], smallest)
        if hints is not None:
            start = _dense(hints[i - 1], args["_hint_grid"], current.shape)
        elif args["enable_temporal_hints"] and flow is not None:
            start = flow.copy()
        else:
            start = None
        # DIS gives the vectors on the grid of its first image, pointing into the second.
        flow = dis.calc(current, previous, start)
        out[i - 1] = _block_means(flow[:height, :width], grid)
        previous = current
    return out


OPTICAL_FLOW = Operator(
    "optical_flow",
    inputs=[
        Input("input_0", doc="Sequences of frames: FHWC, uint8, at least 2 frames each."),
        Input(
            "input_1",
            optional=True,
            doc="With ``enable_external_hints``: the hint fields, float, ``(F - 1, ceil(H / hint_grid), "
            "ceil(W / hint_grid), 2)`` or one field for every pair; ignored otherwise.",
        ),
    ],
    args=[
        Arg(
            "enable_external_hints",
            "bool",
            False,
            doc="Start each pair's search from the hint field given as the second input.",
        ),
        Arg(
            "enable_temporal_hints",
            "bool",
            False,
            doc="Start each pair's search, after the first, from the previous pair's field.",
        ),
        Arg("hint_grid", "int", 4, doc="Pixels per hint vector in each dimension: 1, 2, 4 or 8."),
        Arg(
            "image_type",
            "any",
            None,
            doc="Colour space of the frames: RGB (default) or BGR, 3 or 4 channels, or GRAY, 1 channel.",
            type_doc="DALIImageType",
        ),
        Arg("output_format", "any", None, doc="Deprecated alias of ``output_grid``.", type_doc="int"),
        Arg(
            "output_grid", "int", OmittedInt(4), doc="Pixels per output vector in each dimension: 1, 2 or 4."
        ),
        Arg(
            "preset",
            "float",
            0.0,
            doc="Speed against quality, 0.0 to 1.0: below 0.375 the best (slowest), below 0.75 medium, "
            "else the fastest.",
        ),
    ],
    prepare_args=_prepare,
    infer_types=_types,
    infer_shape=_shape,
    kernel=_kernel,
    doc="Dense optical flow between consecutive frames: ``(F - 1, ceil(H / output_grid), "
    "ceil(W / output_grid), 2)`` float32 vectors (x, y) in input pixels, from each frame back to the "
    "frame before it.\n\nComputed on the CPU with OpenCV's DIS optical flow (``pip install "
    "'ndd[opencv]'``); the reference runs this operator on NVIDIA's optical-flow hardware only, whose "
    "vectors differ from these as any two estimates do.",
)

OPERATORS = [OPTICAL_FLOW]
