"""Geometric warps of images: ``ndd.rotate``, ``ndd.warp_affine``, ``ndd.jitter``,
``ndd.experimental.warp_perspective``, ``ndd.experimental.remap`` and the distortions ``ndd.water`` and
``ndd.sphere`` (per-pixel maps sampled by the same kernel).

Coordinates follow the pixel-centre convention (see ``ndd/_cpu/warp.pyx``): an
affine matrix maps the centre ``(x + 0.5, y + 0.5)`` of an output pixel, x first,
to a point of the source (``inverse_map=True``, the default), or a source point
to the output (``inverse_map=False``, inverted here). Without ``fill_value`` the
source edge pixels repeat outside the image; with it, the outside is that value.
Integer outputs are rounded half away from zero and saturated.

2-D ``warp_affine`` and ``rotate`` give the reference's bits: its rotation matrix in
float32, its source points (the first of a row computed, the next ones stepped by
the matrix's first column, restarting every 256 pixels) and its bilinear blend.
Perspective warps and volumes can still differ from it in the last bits.

Samples are 2-D images with channels last (``HWC``) or sequences of them
(``FHWC``, every frame warped alike); ``rotate`` and ``warp_affine`` also take
volumes (``DHWC``, ``FDHWC``: 3x4 matrices on ``(x, y, z)``, rotation about ``axis``); ``experimental.warp_perspective`` also takes
planar ``CHW``/``FCHW``. Deliberate divergences from the reference:
images without a channel axis (``HW``, ``FHW``, ``DHW``) are accepted too; ``jitter`` and ``experimental.remap`` run on the CPU as
well (the reference has GPU kernels only), ``jitter`` with offsets drawn from ``rng``.

On the GPU (``gpu_warp.py``, ``kernels/warp.cu``), ``rotate``, ``warp_affine``,
``experimental.warp_perspective``, ``water``, ``sphere`` and ``jitter`` sample as the CPU
kernels do, from the same per-sample plans (``WarpPlan``: sizes, matrices, fill values,
types; the water displacements), so that both give the same bits; ``experimental.remap``
shares their sampling code (``gpu_remap.py``, ``kernels/remap.cu``).
"""

import functools
import math

import numpy as np

from .._cpu.pixels import copy_three_channels
from .._cpu.warp import sphere_maps, warp_affine_3d, warp_mapped, warp_projective
from .._prepare.args import InvalidArgumentError
from .._prepare.invocation import PendingArg
from ..types import DALIInterpType
from .axes import INPUT_LAYOUT, record_layout
from .conversions import cast_array, round_half_away
from .gpu_remap import GpuRemap
from .gpu_warp import MAP_JITTER, MAP_SPHERE, MAP_WATER, GpuDistortion, GpuWarp, MapPlan
from .image_layout import image_axes
from .random_ops import RNG_ARG
from .schema import Arg, Input, Operator, batch_samples_of

# Element types the kernels work in directly; others go through float32.
_KERNEL_TYPES = (np.uint8, np.int8, np.int16, np.uint16, np.int32, np.float32, np.float64)
_SUPPORTED_INTERP = (DALIInterpType.INTERP_NN, DALIInterpType.INTERP_LINEAR)


def _pending(*values):
    return any(type(v) is PendingArg for v in values)


def _image_axes(op, x_layout, ndim, planar=False, volume=False):
    """The axes of an image or sequence; ``planar`` allows CHW and FCHW, ``volume`` DHWC,
    FDHWC (and DHW, FDHW)."""
    axes = image_axes(op, x_layout, ndim, four_dims="FHWC")
    allowed = ("HW", "HWC", "FHW", "FHWC") + (("CHW", "FCHW") if planar else ())
    allowed += ("DHW", "DHWC", "FDHW", "FDHWC") if volume else ()
    if axes.layout not in allowed:
        raise InvalidArgumentError(
            f"{op.qualname}: expected the layout {' or '.join(allowed)}, got {axes.layout!r}"
        )
    return axes


def _output_dtype(op, ins, args):
    dtype = args["dtype"]
    old = args.get("output_dtype")
    if dtype is not None and old is not None and dtype is not old:
        raise InvalidArgumentError(f"{op.qualname}: 'dtype' and 'output_dtype' disagree: {dtype} and {old}")
    return dtype or old or ins[0]._dtype


def _check_interp(op, args):
    _check_interp_kind(op.qualname, "interp_type", args["interp_type"])


def _check_interp_kind(qualname, name, kind):
    if kind not in _SUPPORTED_INTERP:
        raise InvalidArgumentError(
            f"{qualname}: '{name}' must be INTERP_NN or INTERP_LINEAR, got {getattr(kind, 'name', kind)}"
        )


def _size_arg(op, size, spatial=2, rounded=False):
    """A ``size`` argument as (rows, columns), or (depth, rows, columns) for volumes
    (``spatial`` 3); None when not given. Fractions are cut toward zero, or with
    ``rounded`` (warp_perspective, as in the reference) rounded half away from zero
    to at least 1."""
    if size is None or len(size) == 0:
        return None
    if len(size) != spatial:
        names = "height, width" if spatial == 2 else "depth, height, width"
        raise InvalidArgumentError(
            f"{op.qualname}: 'size' must have {spatial} elements ({names}), got {list(size)}"
        )
    if min(size) < 0:
        raise InvalidArgumentError(f"{op.qualname}: 'size' must not be negative, got {list(size)}")
    if rounded:
        return tuple(max(1, math.floor(s + 0.5)) for s in size)
    # rotate and warp_affine: a constant list is rounded when converted (Arg sizes=True);
    # what is left are a Tensor's values, which the reference truncates.
    return tuple(int(s) for s in size)


def _frames(arr, axes):
    """``arr`` as a (frames, rows, columns, channels) view (any layout of image_axes)."""
    view = arr
    order = [axes.frame, axes.height, axes.width, axes.channel]
    if axes.channel is None:
        view = view[..., np.newaxis]
        order[3] = view.ndim - 1
    if axes.frame is None:
        view = view[np.newaxis]
        order = [0] + [a + 1 for a in order[1:]]
    return view.transpose(order)


def _volumes(arr, axes):
    """``arr`` as a (frames, depth, rows, columns, channels) view."""
    view = arr if axes.channel is not None else arr[..., np.newaxis]
    return view if axes.frame is not None else view[np.newaxis]


# Border modes of the kernels, by name (warp_perspective's border_mode).
BORDER_MODES = {"constant": 0, "replicate": 1, "reflect": 2, "reflect_101": 3, "wrap": 4}
_CLAMP = BORDER_MODES["replicate"]


def kernel_type(source, target):
    """The element type the kernels warp a ``source`` sample to a ``target`` one in: their
    own types as they are (converted first to a float target), others through float32."""
    source, target = np.dtype(source), np.dtype(target)
    if target.type in _KERNEL_TYPES and (source == target or target.kind == "f"):
        return target
    return np.dtype(np.float32)


def _channel_fills(fill, channels):
    """``fill`` (None, a number or one per channel) as one float32 per channel."""
    if fill is None:
        return np.zeros(channels, np.float32)
    return np.ascontiguousarray(np.broadcast_to(np.asarray(fill, np.float32), (channels,)))


def _output_fills(fill, channels, out_dtype, round_even):
    """``WarpPlan.fills``."""
    fills = _channel_fills(fill, channels)
    if out_dtype.kind in "iu":
        info = np.iinfo(out_dtype)
        if not round_even:
            fills = round_half_away(fills)
        fills = np.clip(fills, info.min, info.max).astype(np.float32)
    return fills


@functools.lru_cache(maxsize=256)
def _cached_output_fills(fill, channels, out_dtype, round_even):
    fills = _output_fills(fill, channels, out_dtype, round_even)
    fills.flags.writeable = False
    return fills


class WarpPlan:
    """How one sample is warped, everything but the pass over the pixels (which
    ``warp_sample`` makes on the CPU and ``gpu_warp.GpuWarp`` on the GPU): its
    ``axes``, the output's spatial ``out_extents``, the ``matrix`` from output pixel
    centres to source points (float64: 6 or 9 values, or 12 for volumes),
    ``perspective``, ``interp`` (0 nearest neighbour, 1 bilinear or trilinear, 2
    bicubic), ``fill`` (None, a number or one per channel), the ``border`` mode (by
    default the fill outside the source when there is one, else the edges
    repeated), ``round_even`` (ties to even, instead of away from zero) and the
    output type ``out_dtype``."""

    __slots__ = (
        "axes",
        "border",
        "fill",
        "interp",
        "matrix",
        "out_dtype",
        "out_extents",
        "perspective",
        "round_even",
    )

    def __init__(
        self,
        axes,
        out_extents,
        matrix,
        *,
        out_dtype,
        perspective=False,
        interp=0,
        fill=None,
        border=None,
        round_even=False,
    ):
        self.axes = axes
        self.out_extents = tuple(out_extents)
        self.matrix = np.ascontiguousarray(matrix, np.float64).reshape(-1)
        self.out_dtype = np.dtype(out_dtype)
        self.perspective = perspective
        self.interp = interp
        self.fill = fill
        if border is None:
            border = BORDER_MODES["constant"] if fill is not None else _CLAMP
        self.border = border
        self.round_even = round_even

    def fills(self, channels):
        """The fill values, one float32 per channel, as an integer output type holds
        them: the reference stores the fill in that type before it blends it with the
        image, rounding it (halves away from zero) and saturating it in warp_affine
        and rotate, only saturating it in warp_perspective."""
        fill = self.fill
        if fill is None or type(fill) in (float, int, tuple):
            # An argument given once for every sample: converted once.
            return _cached_output_fills(fill, channels, self.out_dtype, self.round_even)
        return _output_fills(fill, channels, self.out_dtype, self.round_even)

    def out_shape(self, shape):
        """The output shape of a sample of ``shape``."""
        out = list(shape)
        for axis, extent in zip(self.axes.spatial, self.out_extents, strict=True):
            out[axis] = extent
        return tuple(out)


def warp_sample(arr, plan):
    """Warp every frame of one sample as ``plan`` (a ``WarpPlan``) says."""
    axes = plan.axes
    target = plan.out_dtype
    work_type = kernel_type(arr.dtype, target)
    work_in = arr if arr.dtype == work_type else arr.astype(work_type)
    out = np.empty(plan.out_shape(arr.shape), work_type)
    m = plan.matrix
    if axes.depth is not None:
        src_vols, dst_vols = _volumes(work_in, axes), _volumes(out, axes)
        fills = plan.fills(src_vols.shape[4])
        for f in range(src_vols.shape[0]):
            warp_affine_3d(src_vols[f], dst_vols[f], m, plan.interp == 1, plan.border, fills)
        return out if work_type == target else cast_array(out, target)
    src_frames, dst_frames = _frames(work_in, axes), _frames(out, axes)
    fills = plan.fills(src_frames.shape[3])
    # Planar RGB uint8 (CHW) is interleaved around the warp, for the packed RGB kernels.
    planar_rgb = (
        work_type == np.uint8
        and src_frames.shape[3] == 3
        and src_frames.strides[3] != 1
        and plan.interp in (0, 1)
        and src_frames[0].size
        and dst_frames[0].size
    )
    if planar_rgb:
        packed_in = np.empty(src_frames.shape[1:], np.uint8)
        packed_out = np.empty(dst_frames.shape[1:], np.uint8)
    for f in range(src_frames.shape[0]):
        source, destination = src_frames[f], dst_frames[f]
        if planar_rgb:
            copy_three_channels(source, packed_in)
            source, destination = packed_in, packed_out
        warp_projective(
            source,
            destination,
            m,
            plan.perspective,
            plan.interp,
            plan.border,
            fills,
            plan.round_even,
        )
        if planar_rgb:
            copy_three_channels(packed_out, dst_frames[f])
    return out if work_type == target else cast_array(out, target)


# -- warp_affine ---------------------------------------------------------------------------


def _affine_matrix(op, value, inverse_map, spatial=2):
    m = np.asarray(value, np.float64).reshape(-1)
    size = spatial * (spatial + 1)
    if m.size != size:
        raise InvalidArgumentError(
            f"{op.qualname}: the matrix must have {size} elements ({spatial}x{spatial + 1}), got {m.size}"
        )
    m = m.reshape(spatial, spatial + 1)
    if not np.all(np.isfinite(m)):
        raise InvalidArgumentError(f"{op.qualname}: the matrix must be finite, got {m.tolist()}")
    if not inverse_map:
        full = np.vstack([m, np.eye(1, spatial + 1, spatial)])
        if abs(np.linalg.det(full)) < 1e-12:
            raise InvalidArgumentError(f"{op.qualname}: the matrix is not invertible: {m.tolist()}")
        m = np.linalg.inv(full)[:spatial]
    return m


def _matrix_given(matrix):
    """Whether a ``matrix`` argument was given (a pending or per-sample one counts)."""
    if matrix is None:
        return False
    if isinstance(matrix, np.ndarray):
        return matrix.size > 0
    return True


def _warp_affine_prepare(ins, args):
    op = WARP_AFFINE
    given = _matrix_given(args["matrix"])
    if ins[1] is not None and given:
        raise InvalidArgumentError(
            "ndd.warp_affine: give the matrix either as the 'mtx' input or as the 'matrix' argument, not both"
        )
    if ins[1] is None and not given:
        raise InvalidArgumentError("ndd.warp_affine: a transform is needed: the 'mtx' input or 'matrix'")
    _check_interp(op, args)


def _warp_affine_types(ins, args):
    op = WARP_AFFINE
    x = ins[0]
    axes = _image_axes(op, x._layout, x.ndim, volume=True)
    if ins[1] is not None and ins[1]._dtype.numpy is not None and np.dtype(ins[1]._dtype.numpy).kind != "f":
        raise InvalidArgumentError(f"ndd.warp_affine: the 'mtx' input must be float, got {ins[1]._dtype}")
    return [(_output_dtype(op, ins, args), axes.layout)]


def _warp_affine_shape(shapes, args):
    op = WARP_AFFINE
    shape = shapes[0]
    axes = _image_axes(op, args[INPUT_LAYOUT], len(shape), volume=True)
    spatial = len(axes.spatial)
    need = spatial * (spatial + 1)
    if shapes[1] is not None and int(np.prod(shapes[1])) != need:
        raise InvalidArgumentError(
            f"ndd.warp_affine: the 'mtx' input must be a {spatial}x{spatial + 1} matrix, got shape {shapes[1]}"
        )
    matrix = args["matrix"]
    if not _pending(matrix) and matrix is not None and np.size(matrix) not in (0, need):
        raise InvalidArgumentError(
            f"ndd.warp_affine: 'matrix' must have {need} elements ({spatial}x{spatial + 1}), got {np.size(matrix)}"
        )
    if _pending(args["size"]):
        return None
    size = _size_arg(op, args["size"], spatial)
    out = list(shape)
    if size is not None:
        for axis, extent in zip(axes.spatial, size, strict=True):
            out[axis] = extent
    return [tuple(out)]


def _warp_affine_prepare_all(ins, args):
    record_layout(ins, args)
    _warp_affine_prepare(ins, args)


def _warp_affine_plan(shape, dtype, mtx, args):
    """The ``WarpPlan`` of a sample of ``shape`` and ``dtype`` (``mtx``: its matrix input or None)."""
    op = WARP_AFFINE
    axes = _image_axes(op, args[INPUT_LAYOUT], len(shape), volume=True)
    spatial = len(axes.spatial)
    matrix = _affine_matrix(op, mtx if mtx is not None else args["matrix"], args["inverse_map"], spatial)
    size = _size_arg(op, args["size"], spatial) or tuple(shape[a] for a in axes.spatial)
    return WarpPlan(
        axes,
        size,
        matrix,
        interp=int(args["interp_type"] == DALIInterpType.INTERP_LINEAR),
        fill=args["fill_value"],
        out_dtype=_run_output_dtype(op, dtype, args),
    )


def _warp_affine_kernel(arrays, args):
    x, mtx = arrays
    return warp_sample(x, _warp_affine_plan(x.shape, x.dtype, mtx, args))


class _DTypeOf:
    """The dtype of a run-phase array where a prepare-phase rule expects an input object."""

    def __init__(self, dtype):
        from .._types import dtype as to_dtype

        self._dtype = to_dtype(dtype)


def _run_output_dtype(op, dtype, args):
    """The numpy output type of a sample of numpy type ``dtype`` (the run phase's ``_output_dtype``)."""
    return _output_dtype(op, [_DTypeOf(dtype)], args).numpy


_DTYPE_ARGS = [
    Arg("dtype", "dtype", None, doc="Output type; the input's by default.", type_doc="DType"),
    Arg(
        "fill_value",
        "float",
        None,
        doc="Value of the output pixels mapped outside the source; without it the source's edge "
        "pixels repeat.",
        type_doc="float",
        nonfinite=True,
    ),
    Arg(
        "interp_type",
        "int",
        DALIInterpType.INTERP_LINEAR,
        doc="INTERP_NN or INTERP_LINEAR.",
        type_doc="DALIInterpType",
    ),
]
_OUTPUT_DTYPE = Arg("output_dtype", "dtype", None, doc="Deprecated name of ``dtype``.", type_doc="DType")
_SIZE = Arg(
    "size",
    "float_list",
    [],
    per_sample=True,
    sizes=True,
    doc="Output size (height, width; depth first for volumes); the input's by default. A list of "
    "numbers is rounded to the nearest integers (each above 0, at least 1); a Tensor's or Batch's "
    "values are cut toward zero (0 gives an empty image), as in the reference.",
    type_doc="list of float",
)

WARP_AFFINE = Operator(
    "warp_affine",
    inputs=[
        Input("data", doc="Images (HWC), sequences of images (FHWC) or volumes (DHWC, FDHWC)."),
        Input(
            "mtx",
            optional=True,
            doc="The 2x3 (3x4 for volumes) float matrix per sample (instead of ``matrix``).",
        ),
    ],
    args=[
        *_DTYPE_ARGS,
        Arg(
            "inverse_map",
            "bool",
            True,
            doc="The matrix maps output points to the source (True) or source points to the output (False).",
            type_doc="bool",
        ),
        Arg(
            "matrix",
            "array",
            [],
            per_sample=True,
            doc="The 2x3 affine matrix (3x4 for volumes), row-major, in the pixel-centre convention.",
            type_doc="list of float",
        ),
        _OUTPUT_DTYPE,
        _SIZE,
    ],
    prepare_args=_warp_affine_prepare_all,
    infer_types=_warp_affine_types,
    infer_shape=_warp_affine_shape,
    kernel=_warp_affine_kernel,
    doc="Warp images with an affine transform.\n\nEach output pixel centre is mapped by the matrix to a "
    "point of the source, sampled with nearest-neighbour or bilinear interpolation.",
)


# -- rotate -----------------------------------------------------------------------------


def _angle_radians(angle):
    return float(np.float32(math.radians(float(np.float32(angle)))))


def rotated_size(height, width, angle):
    """The smallest canvas holding an image of ``height x width`` rotated by ``angle``
    degrees, each side with the parity of the input side it mostly comes from (so
    the centres of input and output pixels stay aligned)."""
    rad = _angle_radians(angle)
    c, s = abs(math.cos(rad)), abs(math.sin(rad))
    eps = 1e-2
    out_w = math.ceil(width * c + height * s - eps)
    out_h = math.ceil(height * c + width * s - eps)
    if s <= c:
        out_w += (out_w ^ width) & 1
        out_h += (out_h ^ height) & 1
    else:
        out_w += (out_w ^ height) & 1
        out_h += (out_h ^ width) & 1
    return max(out_h, 0), max(out_w, 0)


def rotation_3d(axis, angle):
    """The (x, y, z) rotation matrix by ``angle`` degrees about ``axis`` (right-handed), in
    double precision (which decides the reference's size rounding at exact ties)."""
    rad = math.radians(float(angle))
    c, s = math.cos(rad), math.sin(rad)
    a = np.asarray(axis, np.float64)
    x, y, z = a / np.linalg.norm(a)
    t = 1 - c
    return np.array(
        [
            [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
        ]
    )


def rotated_size_3d(extents_dhw, axis, angle):
    """The smallest box holding a volume of ``extents_dhw`` rotated about ``axis``; each side
    keeps the parity of the input side it mostly comes from."""
    r = np.abs(rotation_3d(axis, angle))
    in_xyz = np.array(extents_dhw[::-1], np.float64)
    out_xyz = []
    for i in range(3):
        extent = math.ceil(float(r[i] @ in_xyz) - 1e-2)
        # Near ties keep the side's own parity, as the reference's do.
        source = i if r[i, i] >= r[i].max() - 1e-9 else int(np.argmax(r[i]))
        extent += (extent ^ int(in_xyz[source])) & 1
        out_xyz.append(max(extent, 0))
    return tuple(out_xyz[::-1])


def _check_axis(axis):
    if axis is None or _pending(axis):
        return
    if len(axis) != 3 or not any(axis):
        raise InvalidArgumentError(f"ndd.rotate: 'axis' must be 3 numbers, not all zero, got {list(axis)}")


def _rotate_output_hw(op, in_extents, args):
    volume = len(in_extents) == 3
    size = _size_arg(op, args["size"], len(in_extents))
    if size is not None:
        return size
    if args["keep_size"]:
        return tuple(in_extents)
    if volume:
        _check_axis(args["axis"])
        return rotated_size_3d(in_extents, args["axis"], args["angle"])
    return rotated_size(in_extents[0], in_extents[1], args["angle"])


def _rotate_common_size(frame_args, frame_shapes, frame_layout):
    """The frames of a sequence rotated by per-frame angles share one output size:
    the largest extent of each frame's own rotated size, as the reference."""
    first = frame_args[0] if frame_args else {}
    if not frame_args or first["size"] not in (None, []) or first["keep_size"]:
        return {}
    specs = {spec.name: spec for spec in ROTATE.arg_specs}
    extents = []
    for args, shape in zip(frame_args, frame_shapes, strict=True):
        converted = {
            name: specs[name].convert(ROTATE, args[name]) for name in ("angle", "axis", "size", "keep_size")
        }
        axes = _image_axes(ROTATE, frame_layout, len(shape), volume=True)
        extents.append(_rotate_output_hw(ROTATE, tuple(shape[a] for a in axes.spatial), converted))
    common = [max(sizes) for sizes in zip(*extents, strict=True)]
    return {"size": [common] * len(frame_args)}


def _rotate_prepare(ins, args):
    record_layout(ins, args)
    _check_interp(ROTATE, args)


def _rotate_types(ins, args):
    x = ins[0]
    axes = _image_axes(ROTATE, x._layout, x.ndim, volume=True)
    axis = args["axis"]
    given = axis is not None and (_pending(axis) or type(axis) is not tuple or len(axis) > 0)
    # An 'axis' of a 2-D image is not read (the reference takes and ignores it too).
    if axes.depth is not None and not given:
        raise InvalidArgumentError("ndd.rotate: volumes need the rotation 'axis'")
    return [(_output_dtype(ROTATE, ins, args), axes.layout)]


def _rotate_shape(shapes, args):
    shape = shapes[0]
    axes = _image_axes(ROTATE, args[INPUT_LAYOUT], len(shape), volume=True)
    if axes.depth is not None:
        _check_axis(args["axis"])
    if _pending(args["angle"], args["size"], args["axis"]):
        return None
    out = list(shape)
    extents = _rotate_output_hw(ROTATE, tuple(shape[a] for a in axes.spatial), args)
    for axis, extent in zip(axes.spatial, extents, strict=True):
        out[axis] = extent
    return [tuple(out)]


def rotation_matrix(in_hw, out_hw, angle):
    """The map from output pixel centres to source points of a rotation by ``angle``
    degrees (counter-clockwise as displayed) about the image centres, in float32 as
    the reference composes it: a move of the output centre to the origin, the
    rotation, a move to the input centre."""
    f32 = np.float32
    rad = -f32(f32(-f32(angle)) * f32(math.pi / 180))
    c, s = f32(math.cos(rad)), f32(math.sin(rad))
    ocx, ocy = f32(out_hw[1]) * f32(0.5), f32(out_hw[0]) * f32(0.5)
    icx, icy = f32(in_hw[1]) * f32(0.5), f32(in_hw[0]) * f32(0.5)
    # source = R(-angle) (out - out_centre) + in_centre, with y pointing down; each
    # translation summed as the reference's matrix product does.
    return np.array(
        [
            [c, -s, (c * -ocx + -s * -ocy) + icx],
            [s, c, (s * -ocx + c * -ocy) + icy],
        ],
        np.float32,
    )


def rotation_matrix_3d(in_dhw, out_dhw, axis, angle):
    """The map from output voxel centres to source points, (x, y, z) order, 3x4."""
    r_inverse = rotation_3d(axis, angle).T
    out_centre = np.array(out_dhw[::-1], np.float64) * 0.5
    in_centre = np.array(in_dhw[::-1], np.float64) * 0.5
    return np.hstack([r_inverse, (in_centre - r_inverse @ out_centre)[:, None]])


def _rotate_plan(shape, dtype, _matrix, args):
    """The ``WarpPlan`` of a sample of ``shape`` and ``dtype``."""
    axes = _image_axes(ROTATE, args[INPUT_LAYOUT], len(shape), volume=True)
    in_extents = tuple(shape[a] for a in axes.spatial)
    out_extents = _rotate_output_hw(ROTATE, in_extents, args)
    if axes.depth is not None:
        matrix = rotation_matrix_3d(in_extents, out_extents, args["axis"], args["angle"])
    else:
        matrix = rotation_matrix(in_extents, out_extents, args["angle"])
    return WarpPlan(
        axes,
        out_extents,
        matrix,
        interp=int(args["interp_type"] == DALIInterpType.INTERP_LINEAR),
        fill=args["fill_value"],
        out_dtype=_run_output_dtype(ROTATE, dtype, args),
    )


def _rotate_kernel(arrays, args):
    x = arrays[0]
    return warp_sample(x, _rotate_plan(x.shape, x.dtype, None, args))


ROTATE = Operator(
    "rotate",
    inputs=[Input("input", doc="Images (HWC), sequences of images (FHWC) or volumes (DHWC, FDHWC).")],
    args=[
        Arg(
            "angle",
            "float",
            per_sample=True,
            doc="Rotation angle in degrees, counter-clockwise as displayed.",
            type_doc="float",
        ),
        Arg(
            "axis",
            "float_list",
            None,
            per_sample=True,
            doc="Rotation axis (x, y, z) of volumes; the rotation is right-handed about it. Not read for "
            "2-D images (rotated in their plane).",
            type_doc="list of float",
        ),
        *_DTYPE_ARGS,
        Arg(
            "keep_size",
            "bool",
            False,
            doc="Keep the input's size; by default the canvas grows to hold the whole rotated image.",
            type_doc="bool",
        ),
        _OUTPUT_DTYPE,
        _SIZE,
    ],
    prepare_args=_rotate_prepare,
    infer_types=_rotate_types,
    infer_shape=_rotate_shape,
    kernel=_rotate_kernel,
    doc="Rotate images by an angle about their centre.\n\nWithout ``size`` or ``keep_size`` the output is "
    "the smallest canvas holding the rotated image (each side keeping the parity of the input side it "
    "mostly comes from).",
)


# -- experimental.warp_perspective ---------------------------------------------------


def _perspective_matrix(value, inverse_map, origin):
    """The 3x3 map from output pixel centres to source points (pixel-centre convention)."""
    m = np.asarray(value, np.float64)
    if m.ndim > 2:
        raise InvalidArgumentError(
            f"{WARP_PERSPECTIVE.qualname}: the matrix must be 3x3, got shape {m.shape}"
        )
    m = m.reshape(-1)
    if m.size == 1:  # one value is every element, as in the reference
        m = np.full(9, m[0])
    if m.size != 9:
        raise InvalidArgumentError(
            f"{WARP_PERSPECTIVE.qualname}: the matrix must be 3x3, got {m.size} values"
        )
    m = m.reshape(3, 3)
    if not np.all(np.isfinite(m)):
        raise InvalidArgumentError(
            f"{WARP_PERSPECTIVE.qualname}: the matrix must be finite, got {m.tolist()}"
        )
    if not inverse_map:
        if abs(np.linalg.det(m)) < 1e-12:
            raise InvalidArgumentError(
                f"{WARP_PERSPECTIVE.qualname}: the matrix is not invertible: {m.tolist()}"
            )
        m = np.linalg.inv(m)
    if origin == "center":
        # Pixel centres at integer coordinates: shift into and out of that convention.
        to_center = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1]])
        from_center = np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]])
        m = from_center @ m @ to_center
    return m


def _perspective_prepare(ins, args):
    record_layout(ins, args)
    given = _matrix_given(args["matrix"])
    if ins[1] is not None and given:
        raise InvalidArgumentError(
            f"{WARP_PERSPECTIVE.qualname}: give the matrix either as the 'matrix_input' input or as the 'matrix' "
            "argument, not both"
        )
    if ins[1] is None and not given:
        raise InvalidArgumentError(
            f"{WARP_PERSPECTIVE.qualname}: a transform is needed: the 'matrix_input' input or 'matrix'"
        )
    kind = args["interp_type"]
    if kind not in (*_SUPPORTED_INTERP, DALIInterpType.INTERP_CUBIC):
        raise InvalidArgumentError(
            f"{WARP_PERSPECTIVE.qualname}: 'interp_type' must be INTERP_NN, INTERP_LINEAR or INTERP_CUBIC, "
            f"got {kind!r}"
        )


def _perspective_types(ins, args):
    x = ins[0]
    axes = _image_axes(WARP_PERSPECTIVE, x._layout, x.ndim, planar=True)
    fill = args["fill_value"]
    if fill and len(fill) > 1 and axes.channel is not None and axes.channel < axes.height:
        raise InvalidArgumentError(
            f"{WARP_PERSPECTIVE.qualname}: 'fill_value' must be one value for planar layouts ({axes.layout}), "
            f"got {list(fill)}"
        )
    return [(x._dtype, axes.layout)]


def _perspective_shape(shapes, args):
    shape = shapes[0]
    axes = _image_axes(WARP_PERSPECTIVE, args[INPUT_LAYOUT], len(shape), planar=True)
    if shapes[1] is not None and (int(np.prod(shapes[1])) != 9 or len(shapes[1]) > 2):
        raise InvalidArgumentError(
            f"{WARP_PERSPECTIVE.qualname}: the 'matrix_input' input must be 3x3, got shape {shapes[1]}"
        )
    matrix = args["matrix"]
    if (
        not _pending(matrix)
        and matrix is not None
        and (np.size(matrix) not in (0, 1, 9) or np.ndim(matrix) > 2)
    ):
        raise InvalidArgumentError(
            f"{WARP_PERSPECTIVE.qualname}: 'matrix' must be 3x3 (9 elements) or one value for all, got "
            f"shape {np.shape(matrix)}"
        )
    fill = args["fill_value"]
    channels = shape[axes.channel] if axes.channel is not None else 1
    if fill and len(fill) not in (1, channels):
        raise InvalidArgumentError(
            f"{WARP_PERSPECTIVE.qualname}: 'fill_value' must have 1 or {channels} (channels) values, got {list(fill)}"
        )
    if _pending(args["size"]):
        return None
    size = _size_arg(WARP_PERSPECTIVE, args["size"], rounded=True)
    out = list(shape)
    if size is not None:
        out[axes.height], out[axes.width] = size
    return [tuple(out)]


_PERSPECTIVE_INTERP = {
    DALIInterpType.INTERP_NN: 0,
    DALIInterpType.INTERP_LINEAR: 1,
    DALIInterpType.INTERP_CUBIC: 2,
}


@functools.lru_cache(maxsize=256)
def _cached_perspective_matrix(data, shape, inverse_map, origin):
    """``_perspective_matrix`` of the float64 matrix of bytes ``data`` and ``shape``; cached,
    hence read-only."""
    matrix = _perspective_matrix(np.frombuffer(data, np.float64).reshape(shape), inverse_map, origin)
    matrix.flags.writeable = False
    return matrix


def _perspective_plan(shape, dtype, given, args):
    """The ``WarpPlan`` of a sample of ``shape`` and ``dtype`` (``given``: its matrix input or None)."""
    axes = _image_axes(WARP_PERSPECTIVE, args[INPUT_LAYOUT], len(shape), planar=True)
    values = np.asarray(given if given is not None else args["matrix"], np.float64)
    # Samples often share their matrix: the map is worked out once for each one.
    matrix = _cached_perspective_matrix(
        values.tobytes(), values.shape, args["inverse_map"], args["pixel_origin"]
    )
    size = _size_arg(WARP_PERSPECTIVE, args["size"], rounded=True) or (shape[axes.height], shape[axes.width])
    fill = args["fill_value"]
    return WarpPlan(
        axes,
        size,
        matrix,
        perspective=True,
        interp=_PERSPECTIVE_INTERP[args["interp_type"]],
        fill=fill if fill else 0.0,
        out_dtype=dtype,
        border=BORDER_MODES[args["border_mode"]],
        round_even=True,
    )


def _perspective_kernel(arrays, args):
    x, given = arrays
    return warp_sample(x, _perspective_plan(x.shape, x.dtype, given, args))


WARP_PERSPECTIVE = Operator(
    "warp_perspective",
    module="ndd.experimental",
    inputs=[
        Input("input", doc="Images (HW, HWC, CHW) or sequences of them (FHWC, FCHW)."),
        Input("matrix_input", optional=True, doc="The 3x3 float matrix per sample (instead of ``matrix``)."),
    ],
    args=[
        Arg(
            "border_mode",
            "str",
            "constant",
            choices=tuple(BORDER_MODES),
            doc="What is read outside the source: the fill value (constant), the edge pixel (replicate), a "
            "mirror image with (reflect) or without (reflect_101) the edge pixel repeated, or the opposite "
            "side (wrap).",
            type_doc="str",
        ),
        Arg(
            "fill_value",
            "float_list",
            [],
            doc="Value outside the source for the constant border: one, or one per channel; 0 by default.",
            type_doc="float or list of float",
            nonfinite=True,
        ),
        Arg(
            "interp_type",
            "int",
            DALIInterpType.INTERP_LINEAR,
            doc="INTERP_NN, INTERP_LINEAR or INTERP_CUBIC (Keys' cubic, a = -0.75, as OpenCV).",
            type_doc="DALIInterpType",
        ),
        Arg(
            "inverse_map",
            "bool",
            True,
            doc="The matrix maps output points to the source (True) or source points to the output (False).",
            type_doc="bool",
        ),
        Arg(
            "matrix",
            "array",
            [],
            per_sample=True,
            doc="The 3x3 perspective matrix (homography) acting on ``(x, y, 1)``; one value is every element.",
            type_doc="3x3 array of float",
        ),
        Arg(
            "pixel_origin",
            "str",
            "corner",
            choices=("corner", "center"),
            doc="Where (0, 0) is: the top-left corner of the first pixel (corner) or its centre (center, as in "
            "OpenCV).",
            type_doc="str",
        ),
        Arg(
            "size",
            "float_list",
            [],
            per_sample=True,
            doc="Output size (height, width), rounded to the nearest integers, each at least 1; the "
            "input's by default.",
            type_doc="list of float",
        ),
    ],
    prepare_args=_perspective_prepare,
    infer_types=_perspective_types,
    infer_shape=_perspective_shape,
    kernel=_perspective_kernel,
    doc="Warp images with a perspective transform (a 3x3 homography), like OpenCV's warpPerspective.\n\n"
    "Integer results round ties to even, and nearest-neighbour sampling takes the pixel whose centre is "
    "nearest (ties to even).",
)


# -- water, sphere ----------------------------------------------------------------------


def _distortion_types(op):
    def types(ins, args):
        x = ins[0]
        axes = _image_axes(op(), x._layout, x.ndim)
        _check_interp(op(), args)
        return [(x._dtype, axes.layout)]

    return types


def _water_waves(rows, columns, args):
    """The displacements of the water distortion (float32): along x, one per row, and
    along y, one per column."""
    f32 = np.float32
    y = np.arange(rows, dtype=np.float32)
    x = np.arange(columns, dtype=np.float32)
    wave_x = f32(args["ampl_x"]) * np.sin(f32(args["freq_x"]) * y + f32(args["phase_x"]))
    wave_y = f32(args["ampl_y"]) * np.cos(f32(args["freq_y"]) * x + f32(args["phase_y"]))
    return wave_x.astype(np.float32, copy=False), wave_y.astype(np.float32, copy=False)


def _water_maps(rows, columns, args):
    wave_x, wave_y = _water_waves(rows, columns, args)
    # The x displacement depends on the row only and the y displacement on the column only.
    map_x = np.arange(columns, dtype=np.float32)[None, :] + wave_x[:, None]
    map_y = np.arange(rows, dtype=np.float32)[:, None] + wave_y[None, :]
    return map_x, map_y


def _sphere_geometry(rows, columns):
    """The sphere distortion's centre (x, y) and radius: the centre at half the extents,
    the radius half the larger side rounded down (as the reference)."""
    return columns / 2, rows / 2, max(columns // 2, rows // 2)


def _water_transform(rows, columns, args):
    return np.concatenate(_water_waves(rows, columns, args))


def _sphere_transform(rows, columns, args):
    # float32, as sphere_maps takes them.
    return np.asarray(_sphere_geometry(rows, columns), np.float32)


def _sphere_maps(rows, columns, args):
    map_x = np.empty((rows, columns), np.float32)
    map_y = np.empty((rows, columns), np.float32)
    sphere_maps(map_x, map_y, *_sphere_geometry(rows, columns))
    return map_x, map_y


def _distortion_fills(args, channels, dtype):
    """The fill values of water, sphere and jitter, one float32 per channel, as an integer
    ``dtype`` holds them. The reference converts the fill as a C cast: truncated
    toward zero, as here, but wrapping around the type's range (300 is 44 in uint8),
    where ndd saturates (255)."""
    fill = np.float32(args["fill_value"])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        fill = np.clip(np.trunc(fill), info.min, info.max)
    return np.full(channels, fill, np.float32)


def _distortion_gpu_plan(op, mode, transform):
    """The ``MapPlan`` of a sample (``plan(shape, dtype, args)``) for the GPU kernel of
    ``op()``: ``transform(rows, columns, args)`` gives its map parameters (float32) for
    ``mode``."""

    def plan(shape, dtype, args):
        axes = _image_axes(op(), args[INPUT_LAYOUT], len(shape))
        channels = shape[axes.channel] if axes.channel is not None else 1
        interp = int(args["interp_type"] == DALIInterpType.INTERP_LINEAR)
        fills = _distortion_fills(args, channels, dtype)
        if not args["mask"]:
            return MapPlan(axes, None, None, fills, interp)
        return MapPlan(axes, mode, transform(shape[axes.height], shape[axes.width], args), fills, interp)

    return plan


def _distortion_kernel(op, maps):
    def kernel(arrays, args):
        x = arrays[0]
        if not args["mask"]:
            return x
        axes = _image_axes(op(), args[INPUT_LAYOUT], x.ndim)
        rows, columns = x.shape[axes.height], x.shape[axes.width]
        map_x, map_y = maps(rows, columns, args)
        target = x.dtype
        work = x if target.type in _KERNEL_TYPES else x.astype(np.float32)
        out = np.empty(work.shape, work.dtype)
        src_frames, dst_frames = _frames(work, axes), _frames(out, axes)
        fills = _distortion_fills(args, src_frames.shape[3], target)
        linear = args["interp_type"] == DALIInterpType.INTERP_LINEAR
        for f in range(src_frames.shape[0]):
            warp_mapped(
                src_frames[f], dst_frames[f], map_x, map_y, linear, BORDER_MODES["constant"], fills, False
            )
        return out if out.dtype == target else cast_array(out, target)

    return kernel


def _distortion_args(*extra):
    return [
        *extra,
        Arg(
            "fill_value",
            "float",
            0.0,
            doc="Value of the output pixels mapped outside the source, converted as a C cast (17.6 is 17 "
            "in uint8) and saturated to the output type (the reference wraps it: 300 is 44 in uint8).",
            type_doc="float",
            nonfinite=True,
        ),
        Arg(
            "interp_type",
            "int",
            DALIInterpType.INTERP_NN,
            doc="INTERP_NN or INTERP_LINEAR.",
            type_doc="DALIInterpType",
        ),
        Arg(
            "mask",
            "int",
            1,
            per_sample=True,
            doc="Apply the distortion (1) or pass the sample through unchanged (0).",
            type_doc="int",
        ),
    ]


def _float_arg(name, default, doc):
    return Arg(name, "float", default, doc=doc, type_doc="float")


WATER = Operator(
    "water",
    inputs=[Input("input", doc="Images (HWC).")],
    args=sorted(
        _distortion_args(
            _float_arg("ampl_x", 10.0, "Amplitude of the wave along x, in pixels."),
            _float_arg("ampl_y", 10.0, "Amplitude of the wave along y, in pixels."),
            # 2 pi / 128, which the reference's schema prints as 0.049087.
            _float_arg("freq_x", 2 * math.pi / 128, "Frequency of the wave along x (radians per row)."),
            _float_arg("freq_y", 2 * math.pi / 128, "Frequency of the wave along y (radians per column)."),
            _float_arg("phase_x", 0.0, "Phase of the wave along x, in radians."),
            _float_arg("phase_y", 0.0, "Phase of the wave along y, in radians."),
        ),
        key=lambda a: a.name,
    ),
    prepare_args=record_layout,
    infer_types=_distortion_types(lambda: WATER),
    infer_shape=lambda shapes, args: [shapes[0]],
    kernel=_distortion_kernel(lambda: WATER, _water_maps),
    doc="Water-ripple distortion: output pixel ``(x, y)`` reads the source at "
    "``(x + ampl_x * sin(freq_x * y + phase_x), y + ampl_y * cos(freq_y * x + phase_y))``.",
)

SPHERE = Operator(
    "sphere",
    inputs=[Input("input", doc="Images (HWC).")],
    args=_distortion_args(),
    prepare_args=record_layout,
    infer_types=_distortion_types(lambda: SPHERE),
    infer_shape=lambda shapes, args: [shapes[0]],
    kernel=_distortion_kernel(lambda: SPHERE, _sphere_maps),
    doc="Spherical (bulging) distortion: each output pixel reads the source farther from the centre by "
    "its distance from the centre over half the larger side.",
)


# -- experimental.remap -------------------------------------------------------------------


def _map_hw(op, shape, name, frames):
    """The (H, W) of a map: (H, W) or (H, W, 1) for an image, (F, H, W) or (F, H, W, 1) for a
    sequence of F frames."""
    dims = tuple(shape)
    lead = 0 if frames is None else 1
    if len(dims) == lead + 3 and dims[-1] == 1:
        dims = dims[:-1]
    if len(dims) != lead + 2 or (frames is not None and dims[0] != frames):
        expected = "(H, W) or (H, W, 1)" if frames is None else f"({frames}, H, W) or ({frames}, H, W, 1)"
        raise InvalidArgumentError(
            f"{op.qualname}: '{name}' must have the shape {expected}, got {tuple(shape)}"
        )
    return dims[-2:]


def _remap_types(ins, args):
    op = REMAP
    x = ins[0]
    axes = _image_axes(op, x._layout, x.ndim)
    for name, m in (("mapx", ins[1]), ("mapy", ins[2])):
        if m._dtype.numpy is None or np.dtype(m._dtype.numpy) != np.float32:
            raise InvalidArgumentError(f"{op.qualname}: '{name}' must be float32, got {m._dtype}")
    _check_interp_kind(op.qualname, "interp", args["interp"])
    return [(x._dtype, axes.layout)]


def _remap_shape(shapes, args):
    op = REMAP
    shape, sx, sy = shapes
    axes = _image_axes(op, args[INPUT_LAYOUT], len(shape))
    frames = shape[axes.frame] if axes.frame is not None else None
    hw_x = _map_hw(op, sx, "mapx", frames)
    _map_hw(op, sy, "mapy", frames)
    if tuple(sx) != tuple(sy):
        raise InvalidArgumentError(
            f"{op.qualname}: 'mapx' and 'mapy' differ in shape: {tuple(sx)} and {tuple(sy)}"
        )
    out = list(shape)
    out[axes.height], out[axes.width] = hw_x
    return [tuple(out)]


def _remap_kernel(arrays, args):
    op = REMAP
    x, map_x, map_y = arrays
    axes = _image_axes(op, args[INPUT_LAYOUT], x.ndim)
    frames = x.shape[axes.frame] if axes.frame is not None else None
    rows, columns = _map_hw(op, map_x.shape, "mapx", frames)
    # 'center': the maps give pixel indices (centres at integers); the kernel wants
    # centre-convention points (centres at +0.5).
    offset = np.float32(0.5 if args["pixel_origin"] == "center" else 0.0)
    map_shape = (frames or 1, rows, columns)
    mx = np.asarray(map_x, np.float32).reshape(map_shape) + offset
    my = np.asarray(map_y, np.float32).reshape(map_shape) + offset
    out_shape = list(x.shape)
    out_shape[axes.height], out_shape[axes.width] = rows, columns
    work = x if x.dtype.type in _KERNEL_TYPES else x.astype(np.float32)
    out = np.empty(out_shape, work.dtype)
    src_frames, dst_frames = _frames(work, axes), _frames(out, axes)
    fills = np.zeros(src_frames.shape[3], np.float32)
    linear = args["interp"] == DALIInterpType.INTERP_LINEAR
    for f in range(src_frames.shape[0]):
        warp_mapped(src_frames[f], dst_frames[f], mx[f], my[f], linear, BORDER_MODES["constant"], fills, True)
    return out if out.dtype == x.dtype else cast_array(out, x.dtype)


REMAP = Operator(
    "remap",
    module="ndd.experimental",
    inputs=[
        Input("input", doc="Images (HWC) or sequences of images (FHWC)."),
        Input(
            "mapx",
            doc="float32 x coordinate in the source of each output pixel: (H, W), or (F, H, W) for sequences.",
        ),
        Input("mapy", doc="float32 y coordinate in the source of each output pixel, shaped like ``mapx``."),
    ],
    args=[
        Arg(
            "interp",
            "int",
            DALIInterpType.INTERP_LINEAR,
            doc="INTERP_NN or INTERP_LINEAR.",
            type_doc="DALIInterpType",
        ),
        Arg(
            "pixel_origin",
            "str",
            "corner",
            choices=("corner", "center"),
            doc="Whether the map coordinates put (0, 0) at the top-left corner of the first pixel (corner) or at "
            "its centre (center, as OpenCV's remap).",
            type_doc="str",
        ),
    ],
    prepare_args=record_layout,
    infer_types=_remap_types,
    infer_shape=_remap_shape,
    kernel=_remap_kernel,
    doc="Remap images: ``output[y, x] = input(mapy[y, x], mapx[y, x])`` sampled with nearest-neighbour or "
    "bilinear interpolation; outside the source reads 0. The output has the maps' height and width.\n\n"
    "The reference has only a GPU implementation; this one follows its documentation (ties rounded to even, "
    "as its sibling warp_perspective does).",
)


# -- jitter ----------------------------------------------------------------------------------


def _jitter_prepare(ins, args):
    record_layout(ins, args)
    if args["nDegree"] < 1:
        raise InvalidArgumentError(f"{JITTER.qualname}: 'nDegree' must be at least 1, got {args['nDegree']}")


def _jitter_draw(generator, x, args):
    if not args["mask"]:
        return x
    axes = _image_axes(JITTER, args[INPUT_LAYOUT], x.ndim)
    work = x if x.dtype.type in _KERNEL_TYPES else x.astype(np.float32)
    out = np.empty(work.shape, work.dtype)
    src_frames, dst_frames = _frames(work, axes), _frames(out, axes)
    frames, rows, columns = src_frames.shape[:3]
    degree = args["nDegree"]
    half = degree // 2
    # Integer moves in [-nDegree/2, nDegree/2], then the centre of the source pixel.
    base_y, base_x = np.mgrid[0:rows, 0:columns].astype(np.float32) + np.float32(0.5)
    fills = _distortion_fills(args, src_frames.shape[3], x.dtype)
    linear = args["interp_type"] == DALIInterpType.INTERP_LINEAR
    for f in range(frames):
        moves = generator.integers(0, degree, size=(2, rows, columns)).astype(np.float32) - np.float32(half)
        warp_mapped(
            src_frames[f],
            dst_frames[f],
            base_x + moves[0],
            base_y + moves[1],
            linear,
            BORDER_MODES["constant"],
            fills,
            False,
        )
    return out if out.dtype == x.dtype else cast_array(out, x.dtype)


def _jitter_types(ins, args):
    x = ins[0]
    _image_axes(JITTER, x._layout, x.ndim)
    if args["interp_type"] not in _SUPPORTED_INTERP:
        raise InvalidArgumentError(
            f"{JITTER.qualname}: 'interp_type' must be INTERP_NN or INTERP_LINEAR, got {args['interp_type']!r}"
        )
    return [(x._dtype, x._layout)]


def _jitter_kernel(arrays, args):
    return _jitter_draw(args["rng"].generator(), arrays[0], args)


def _jitter_batch_kernel(inputs, sample_args, batch_size, ctx):
    samples = batch_samples_of(inputs[0], batch_size)
    key = sample_args[0]["rng"]

    def one(i):
        return _jitter_draw(key.sample_generator(i), samples[i], sample_args[i])

    if sum(s.nbytes for s in samples) >= (1 << 18):
        return [ctx.thread_pool.map(one, range(batch_size))]
    return [[one(i) for i in range(batch_size)]]


JITTER = Operator(
    "jitter",
    inputs=[Input("input", doc="Images (HWC) or sequences of images (FHWC).")],
    args=[
        Arg(
            "fill_value",
            "float",
            0.0,
            doc="Value of the pixels moved in from outside the image.",
            type_doc="float",
            nonfinite=True,
        ),
        Arg(
            "interp_type",
            "int",
            DALIInterpType.INTERP_NN,
            doc="INTERP_NN or INTERP_LINEAR.",
            type_doc="DALIInterpType",
        ),
        Arg(
            "mask",
            "int",
            1,
            per_sample=True,
            doc="Apply the jitter (1) or pass the sample through unchanged (0).",
            type_doc="int",
        ),
        Arg(
            "nDegree",
            "int",
            2,
            doc="Each pixel comes from a random whole-pixel offset in ``[-nDegree // 2, nDegree - 1 - nDegree // 2]`` "
            "along each axis.",
            type_doc="int",
        ),
        RNG_ARG,
    ],
    prepare_args=_jitter_prepare,
    infer_types=_jitter_types,
    infer_shape=lambda shapes, args: [shapes[0]],
    kernel=_jitter_kernel,
    batch_kernel=_jitter_batch_kernel,
    doc="Move every pixel by a random whole number of pixels along x and y (independently per pixel).\n\n"
    "The reference has only a GPU implementation; this one draws its offsets from ``rng`` (so its values "
    "differ from the reference's).",
)


# The GPU kernels take each sample's plan from the functions the CPU kernels use.
WARP_AFFINE.gpu_kernel = GpuWarp(
    WARP_AFFINE,
    _warp_affine_plan,
    lambda args, dtype: _run_output_dtype(WARP_AFFINE, dtype, args),
    kernel_type,
)
ROTATE.gpu_kernel = GpuWarp(
    ROTATE, _rotate_plan, lambda args, dtype: _run_output_dtype(ROTATE, dtype, args), kernel_type
)
WARP_PERSPECTIVE.gpu_kernel = GpuWarp(
    WARP_PERSPECTIVE, _perspective_plan, lambda args, dtype: dtype, kernel_type
)
WATER.gpu_kernel = GpuDistortion(
    WATER, _distortion_gpu_plan(lambda: WATER, MAP_WATER, _water_transform), kernel_type
)
SPHERE.gpu_kernel = GpuDistortion(
    SPHERE, _distortion_gpu_plan(lambda: SPHERE, MAP_SPHERE, _sphere_transform), kernel_type
)


def _jitter_transform(rows, columns, args):
    """The GPU's jitter parameters: the degree, its half, and the key words (as float bits)
    of the call's RandomKey, which the kernel's Philox draws key (the CPU's distribution)."""
    degree = args["nDegree"]
    words = np.asarray(args["rng"].words[:4], np.uint32).view(np.float32)
    return np.concatenate([np.array([degree, degree // 2], np.float32), words])


JITTER.gpu_kernel = GpuDistortion(
    JITTER, _distortion_gpu_plan(lambda: JITTER, MAP_JITTER, _jitter_transform), kernel_type
)
REMAP.gpu_kernel = GpuRemap(REMAP, _image_axes, _remap_shape, kernel_type)


OPERATORS = [JITTER, ROTATE, SPHERE, WARP_AFFINE, WARP_PERSPECTIVE, WATER, REMAP]

# Arguments the reference takes frame by frame (ndd.per_frame); see frames.py.
ROTATE.per_frame_args = ("angle", "axis")
ROTATE.frame_common_args = _rotate_common_size
WARP_AFFINE.per_frame_args = WARP_PERSPECTIVE.per_frame_args = ("matrix",)
