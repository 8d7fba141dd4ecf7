"""``ndd.debayer``: demosaicing of single-channel Bayer images into RGB, with the
CPU algorithms of the reference (OpenCV's):

- ``bilinear_ocv`` (default): the missing colours are the rounded means of the
  nearest samples of that colour (2 or 4 of them);
- ``edgeaware_ocv``: as bilinear, except that green at a red or blue sample is the
  mean of the pair of green neighbours (vertical or horizontal) that differ less,
  the horizontal pair on a tie;
- ``gray_ocv``: one channel, the BT.601 luma of the bilinear colours in 16-bit
  fixed point, computed from the unrounded neighbour sums;
- ``vng_ocv``: OpenCV's variable-number-of-gradients demosaicing, run by OpenCV
  itself (the optional ``opencv-python-headless`` package, 5 or newer: ``pip install
  'ndd[opencv]'``), imported only when this algorithm is asked for. As in the
  reference, it takes uint8 images of even height and width only.

The outermost rows and columns copy their inner neighbours, as OpenCV does.

``blue_position`` ``(y, x)`` is where blue sits in the 2x2 tile that starts at the
second row and column (OpenCV's convention): ``(0, 0)`` is BGGR, ``(1, 1)`` RGGB.
"""

import numpy as np

from .._cpu.debayer import BILINEAR, EDGE_AWARE, GRAY, demosaic
from .._optional import import_optional
from .._prepare.args import InvalidArgumentError
from .._types import uint8, uint16
from .gpu_debayer import GpuDebayer
from .schema import Arg, Input, Operator

_QUALNAME = "ndd.debayer"
_ALGORITHMS = ("bilinear_ocv", "edgeaware_ocv", "vng_ocv", "gray_ocv")
# BT.601 luma weights with 14 fractional bits.
_R_TO_Y, _G_TO_Y, _B_TO_Y = 4899, 9617, 1868
# OpenCV names a Bayer pattern by the 2x2 tile at the second row and column, as
# blue_position does.
_VNG_CODES = {
    (0, 0): "COLOR_BayerBG2RGB_VNG",
    (0, 1): "COLOR_BayerGB2RGB_VNG",
    (1, 0): "COLOR_BayerGR2RGB_VNG",
    (1, 1): "COLOR_BayerRG2RGB_VNG",
}


# OpenCV 4's VNG gives other colours than OpenCV 5's, which the reference's match (and
# which are the closer to the colours of a mosaicked image).
_VNG_OPENCV = (5,)


def _import_opencv():
    needs = f"{_QUALNAME}: 'algorithm' 'vng_ocv' needs OpenCV (the 'opencv-python-headless' package)"
    return import_optional("cv2", needs, "opencv", minimum=_VNG_OPENCV)


def _layout(ins):
    return ins[0]._layout or {2: "HW", 3: "HWC", 4: "FHWC"}.get(ins[0].ndim, "")


def _prepare(ins, args):
    x = ins[0]
    if x._dtype is not uint8 and x._dtype is not uint16:
        raise InvalidArgumentError(f"{_QUALNAME}: the input must be uint8 or uint16, got {x._dtype}")
    layout = _layout(ins)
    if layout not in ("HW", "HWC", "FHW", "FHWC") or len(layout) != x.ndim:
        raise InvalidArgumentError(
            f"{_QUALNAME}: expected HW, HWC, FHW or FHWC data, got {x.ndim}-D data with layout {x._layout!r}"
        )
    algorithm = (args["algorithm"] or "bilinear_ocv").lower()  # any case, as the reference
    if algorithm == "default":  # the reference's name of its CPU default
        algorithm = "bilinear_ocv"
    if algorithm not in _ALGORITHMS:
        raise InvalidArgumentError(
            f"{_QUALNAME}: 'algorithm' must be one of {list(_ALGORITHMS)}, got {algorithm!r}"
        )
    if algorithm == "vng_ocv":
        if x._dtype is not uint8:
            raise InvalidArgumentError(
                f"{_QUALNAME}: 'algorithm' 'vng_ocv' takes uint8 input only, got {x._dtype}"
            )
        _import_opencv()
    args["_algorithm"] = algorithm
    args["_frames"] = layout.startswith("F")


def _types(ins, args):
    layout = _layout(ins)
    out_layout = "FHWC" if layout.startswith("F") else "HWC"
    return [(ins[0]._dtype, out_layout)]


def _check_blue_position(position):
    """``blue_position`` as ``(y, x)``; one value is both, as the reference takes it."""
    position = tuple(position)
    if len(position) == 1:
        position *= 2
    if len(position) != 2 or any(v not in (0, 1) for v in position):
        raise InvalidArgumentError(
            f"{_QUALNAME}: 'blue_position' must be two values (or one for both), each 0 or 1, "
            f"got {list(position)}"
        )
    return position


def _shape(shapes, args):
    shape = tuple(shapes[0])
    spatial = shape[1:] if args["_frames"] else shape
    if len(spatial) == 3 and spatial[2] != 1:
        raise InvalidArgumentError(f"{_QUALNAME}: expected one channel, got {spatial[2]}")
    if spatial[0] < 2 or spatial[1] < 2:
        raise InvalidArgumentError(
            f"{_QUALNAME}: the images must be at least 2x2, got {spatial[0]}x{spatial[1]}"
        )
    if args["_algorithm"] == "vng_ocv" and (spatial[0] % 2 or spatial[1] % 2):
        raise InvalidArgumentError(
            f"{_QUALNAME}: 'algorithm' 'vng_ocv' needs an even height and width, got {spatial[0]}x{spatial[1]}"
        )
    channels = 1 if args["_algorithm"] == "gray_ocv" else 3
    return [shape[:1] + spatial[:2] + (channels,) if args["_frames"] else spatial[:2] + (channels,)]


def _copy_borders(out):
    """The outermost rows and columns take the values of their inner neighbours."""
    out[0] = out[1]
    out[-1] = out[-2]
    out[:, 0] = out[:, 1]
    out[:, -1] = out[:, -2]
    return out


def _demosaic(plane, blue_y, blue_x, algorithm):
    height, width = plane.shape
    padded = np.pad(plane.astype(np.int32), 1, mode="reflect")

    def near(dy, dx):
        return padded[1 + dy : 1 + dy + height, 1 + dx : 1 + dx + width]

    value = near(0, 0)
    horizontal = near(0, -1) + near(0, 1)
    vertical = near(-1, 0) + near(1, 0)
    diagonal = near(-1, -1) + near(-1, 1) + near(1, -1) + near(1, 1)
    rows = (np.arange(height) % 2)[:, None]
    cols = (np.arange(width) % 2)[None, :]
    # Red is diagonal to blue in the tile; green rows hold red or blue besides green.
    blue = (rows == (1 + blue_y) % 2) & (cols == (1 + blue_x) % 2)
    red = (rows == blue_y % 2) & (cols == blue_x % 2)
    green = ~(blue | red)
    red_row = rows == blue_y % 2
    if algorithm == "gray_ocv":
        cross = horizontal + vertical
        at_red = 4 * value * _R_TO_Y + cross * _G_TO_Y + diagonal * _B_TO_Y
        at_blue = 4 * value * _B_TO_Y + cross * _G_TO_Y + diagonal * _R_TO_Y
        at_green_red_row = 4 * value * _G_TO_Y + 2 * horizontal * _R_TO_Y + 2 * vertical * _B_TO_Y
        at_green_blue_row = 4 * value * _G_TO_Y + 2 * horizontal * _B_TO_Y + 2 * vertical * _R_TO_Y
        total = np.where(
            red, at_red, np.where(blue, at_blue, np.where(red_row, at_green_red_row, at_green_blue_row))
        )
        return _copy_borders(((total + (1 << 15)) >> 16)[..., None])
    horizontal_mean = (horizontal + 1) >> 1
    vertical_mean = (vertical + 1) >> 1
    diagonal_mean = (diagonal + 2) >> 2
    if algorithm == "edgeaware_ocv":
        dx = np.abs(near(0, -1) - near(0, 1))
        dy = np.abs(near(-1, 0) - near(1, 0))
        green_estimate = np.where(dy < dx, vertical_mean, horizontal_mean)
    else:
        green_estimate = (horizontal + vertical + 2) >> 2
    r = np.where(red, value, np.where(blue, diagonal_mean, np.where(red_row, horizontal_mean, vertical_mean)))
    b = np.where(blue, value, np.where(red, diagonal_mean, np.where(red_row, vertical_mean, horizontal_mean)))
    g = np.where(green, value, green_estimate)
    return _copy_borders(np.stack([r, g, b], axis=-1))


# The compiled demosaicing of each algorithm but VNG (OpenCV's own).
_COMPILED = {"bilinear_ocv": BILINEAR, "edgeaware_ocv": EDGE_AWARE, "gray_ocv": GRAY}


def _kernel(arrays, args):
    arr = arrays[0]
    position = _check_blue_position(args["blue_position"])
    frames = arr if args["_frames"] else arr[None]
    if len(frames) == 0:
        return np.empty(arr.shape[:3] + (3,), arr.dtype)
    algorithm = args["_algorithm"]
    if algorithm == "vng_ocv":
        cv2 = _import_opencv()
        code = getattr(cv2, _VNG_CODES[position])
        out = [cv2.cvtColor(np.ascontiguousarray(f.reshape(f.shape[:2])), code) for f in frames]
        return np.stack(out) if args["_frames"] else out[0]
    height, width = frames.shape[1:3]
    if height < 3 or width < 3:
        # No inner pixels: every one is a border, interpolated from the reflected edges.
        result = np.stack([_demosaic(f.reshape(f.shape[:2]), *position, algorithm) for f in frames])
        result = result.astype(arr.dtype)
    else:
        result = np.empty((len(frames), height, width, 1 if algorithm == "gray_ocv" else 3), arr.dtype)
        for frame, out in zip(frames, result, strict=True):
            plane = np.ascontiguousarray(frame.reshape(height, width))
            demosaic(plane, out, *position, _COMPILED[algorithm])
            _copy_borders(out)
    return result if args["_frames"] else result[0]


def _prepare_all(ins, args):
    _prepare(ins, args)
    position = args["blue_position"]
    if isinstance(position, tuple):
        _check_blue_position(position)


DEBAYER = Operator(
    "debayer",
    inputs=[Input("input", doc="Bayer images, one channel: HW, HWC, FHW or FHWC, uint8 or uint16.")],
    args=[
        Arg(
            "algorithm",
            "str",
            None,
            doc="``bilinear_ocv`` (default; also ``default``), ``edgeaware_ocv``, ``gray_ocv`` (one-channel "
            "result) or ``vng_ocv`` (uint8, even sizes; needs OpenCV: ``pip install 'ndd[opencv]'``); in any "
            "case.",
            type_doc="str",
        ),
        Arg(
            "blue_position",
            "int_list",
            per_sample=True,
            doc="``(y, x)`` of blue in the 2x2 Bayer tile starting at the second row and column: "
            "(0, 0) BGGR, (0, 1) GBRG, (1, 0) GRBG, (1, 1) RGGB; one value is both.",
            type_doc="list of int",
        ),
    ],
    prepare_args=_prepare_all,
    infer_types=_types,
    infer_shape=_shape,
    kernel=_kernel,
    doc="Demosaic single-channel Bayer images into RGB (OpenCV's bilinear, edge-aware, VNG or gray algorithms)."
    "\n\nImages 2 pixels high or wide are interpolated like larger ones; the reference (OpenCV) gives "
    "zeros for them with the bilinear, edge-aware and gray algorithms.",
)

# The GPU runs the CPU's algorithms in the same integer arithmetic (gpu_debayer.py).
DEBAYER.gpu_kernel = GpuDebayer(DEBAYER, _shape, _check_blue_position)

OPERATORS = [DEBAYER]

# The reference takes the pattern frame by frame (ndd.per_frame); see frames.py.
DEBAYER.per_frame_args = ("blue_position",)
