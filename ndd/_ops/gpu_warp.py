"""GPU kernels of the geometric warps, queued on ``kernels/warp.cu``: ``rotate``,
``warp_affine`` and ``experimental.warp_perspective`` (``GpuWarp``), ``water`` and
``sphere`` (``GpuDistortion``).

The operator's own module (``ndd/_ops/warp.py``) works out everything but the pass
over the pixels, with the functions its CPU kernels use: a sample's ``WarpPlan``
(output extents, the matrix from output pixel centres to source points, the
interpolation, border and fill values, the output type), or a distortion's
``MapPlan`` (the water displacements, computed by numpy as on the CPU, or the
sphere's centre and radius). The kernels then sample as ``ndd/_cpu/warp.pyx``
does, operation for operation, so that the results equal the CPU's to the bit.

A batch is one launch: one descriptor row per sample (its offsets, extents and
strides, with frames and depth as dimensions, so sequences and volumes are a
sample like any other) and a float table with each sample's matrix or map
parameters and fill values, both uploaded per call. The kernels exist for the
CPU kernels' own types; a warp from or to another type runs, as on the CPU, in
float32 between two passes of ``elementwise.cu``'s cast kernels.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import math

import numpy as np

from .gpu_elementwise import cast_flat, output_in, source_in
from .gpu_layout import c_strides
from .gpu_segments import (
    GpuSamples,
    SampleOutputs,
    ValueTable,
    args_per_sample,
    launch_segments,
    require_gpu_input,
    unsupported,
)
from .gpu_types import SUFFIXES

__all__ = ["MAP_JITTER", "MAP_SPHERE", "MAP_WATER", "MODULE", "GpuDistortion", "GpuWarp", "MapPlan"]

MODULE = "warp"
# Threads per block of every launch here.
BLOCK = 256
# WARP_HEAD, WARP_DIM_WORDS, the flags and the map modes of kernels/warp.cu.
_HEAD = 12
_DIM_WORDS = 4
_ROW = _HEAD + 4 * _DIM_WORDS
_PERSPECTIVE = 1
_ROUND_EVEN = 2
_MAP_COPY = 0
MAP_WATER = 1
MAP_SPHERE = 2
MAP_JITTER = 3
_CONSTANT = 0
# Types whose samples a distortion passes through (mask 0) unchanged, the kernels'
# own or converted to float32 and back exactly.
_DISTORTION_TYPES = tuple(
    np.dtype(t)
    for t in (np.bool_, np.uint8, np.int8, np.int16, np.uint16, np.int32, np.float16, np.float32, np.float64)
)


class MapPlan:
    """How a distortion warps one sample: its ``axes``, ``mode`` (MAP_WATER: the
    ``transform`` holds the x displacement of each row, then the y displacement
    of each column; MAP_SPHERE: the centre x, y and the radius; MAP_JITTER: the
    degree, its half and the call's key words as float bits (the kernel also gets the
    sample's index, as float bits, after them); None for a sample
    passed through unchanged), the per-channel ``fills`` (float32) and ``interp``
    (0 nearest neighbour, 1 bilinear)."""

    __slots__ = ("axes", "fills", "interp", "mode", "transform")

    def __init__(self, axes, mode, transform, fills, interp):
        self.axes = axes
        self.mode = mode
        self.transform = transform
        self.fills = fills
        self.interp = interp


def _dims(axes, shape, out_shape):
    """The four dimension groups of a descriptor row (frame, depth, row, column):
    output extent, input extent, input stride, output stride."""
    in_strides, out_strides = c_strides(shape), c_strides(out_shape)
    words = []
    for axis in (axes.frame, axes.depth, axes.height, axes.width):
        if axis is None:
            words += [1, 1, 0, 0]
        else:
            words += [out_shape[axis], shape[axis], in_strides[axis], out_strides[axis]]
    return words


def _row(axes, shape, out_shape, offsets, table_at, interp, border, flags, mode):
    """The descriptor row of one sample (see kernels/warp.cu) and its output pixels."""
    channel = axes.channel
    channels = shape[channel] if channel is not None else 1
    in_ks = c_strides(shape)[channel] if channel is not None else 0
    out_ks = c_strides(out_shape)[channel] if channel is not None else 0
    pixels = math.prod(out_shape) // channels if channels else 0
    head = [offsets[0], offsets[1], pixels, table_at[0], table_at[1], interp, border, flags, mode, channels]
    return head + [in_ks, out_ks] + _dims(axes, shape, out_shape), pixels


def _run(kernel, source, out_shapes, target, work, batch, ctx, rows_of):
    """The common run: the source converted to ``work`` when it is not of that type,
    the outputs allocated (in ``work``, then converted to ``target``), the descriptor
    rows made by ``rows_of(out_offsets, table)`` and one launch of ``warp_<kernel>``."""
    stream, device_id = ctx.cuda_stream, ctx.device_id
    out = SampleOutputs(out_shapes, target, batch, device_id, stream)
    # The temporaries live until every kernel that uses them is queued (then the pool
    # frees them in stream order).
    keep = []
    src_ptr = source_in(source, work, keep, stream, device_id)
    dst_ptr = output_in(work, out, keep, stream, device_id)
    table = ValueTable(np.float32)
    rows, most = rows_of(out.offsets, table)
    if most:
        uploaded = table.upload(device_id, stream)
        launch_segments(
            device_id,
            MODULE,
            f"warp_{kernel}_{SUFFIXES[work]}",
            BLOCK,
            stream,
            rows,
            _ROW,
            most,
            (src_ptr, dst_ptr),
            (uploaded.ptr,),
        )
    if work != target:
        cast_flat(dst_ptr, work, out.base.ptr, target, out.elements, stream, device_id)
    return out.result


def _host_samples(value, count):
    """A host input as one array (or None) per sample: a list (Batch) as it is, an
    array (Tensor) for every sample."""
    if isinstance(value, list):
        return value
    return [value] * count


class GpuWarp:
    """The GPU kernel of ``rotate``, ``warp_affine`` and ``warp_perspective``:
    ``warp_projective_<type>`` (2-D, affine or perspective) or ``warp_volume_<type>``
    over every sample in one launch. ``plan(shape, dtype, matrix, args)`` gives a
    sample's ``WarpPlan`` (``matrix``: its host matrix input, or None);
    ``out_dtype(args, dtype)`` the output's numpy type for input type ``dtype``;
    ``kernel_type(source, target)`` the type the kernels warp in. A matrix input
    must be in host memory (the plan inverts and checks it there)."""

    def __init__(self, op, plan, out_dtype, kernel_type):
        self.op = op
        self.plan = plan
        self.out_dtype = out_dtype
        self.kernel_type = kernel_type

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type with a cast kernel, a host matrix input."""
        x = ins[0]
        require_gpu_input(self.op, x)
        dtype = x._dtype.numpy
        if dtype is None or np.dtype(dtype) not in SUFFIXES:
            raise unsupported(self.op, f"no kernel for input type {x._dtype}")
        target = self.out_dtype(args, np.dtype(dtype))
        if target is None or np.dtype(target) not in SUFFIXES:
            raise unsupported(self.op, f"no kernel for output type {target}")
        matrix = ins[1] if len(ins) > 1 else None
        if matrix is not None and matrix._device.device_type == "gpu":
            raise unsupported(
                self.op, "a matrix input in GPU memory; give it in host memory or as the 'matrix' argument"
            )

    def __call__(self, inputs, args, batch_size, ctx):
        source = GpuSamples(inputs[0], batch_size)
        count = len(source.shapes)
        sample_args = args_per_sample(args, batch_size)
        matrices = _host_samples(inputs[1] if len(inputs) > 1 else None, count)
        plans = [
            self.plan(shape, source.dtype, m, a)
            for shape, m, a in zip(source.shapes, matrices, sample_args, strict=True)
        ]
        target = np.dtype(self.out_dtype(args, source.dtype))
        work = self.kernel_type(source.dtype, target)
        out_shapes = [p.out_shape(s) for p, s in zip(plans, source.shapes, strict=True)]
        volume = bool(plans) and plans[0].axes.depth is not None

        def rows_of(out_offsets, table):
            rows, most = [], 0
            for plan, shape, out_shape, in_offset, out_offset in zip(
                plans, source.shapes, out_shapes, source.offsets, out_offsets, strict=True
            ):
                channels = shape[plan.axes.channel] if plan.axes.channel is not None else 1
                fills_at = table.add(plan.fills(channels))
                matrix = plan.matrix
                if not volume and matrix.size == 6:
                    matrix = np.concatenate([matrix, [0.0, 0.0, 1.0]])
                # float32, as the CPU's kernels hold the matrix.
                matrix_at = table.add(matrix.astype(np.float32))
                source_empty = any(shape[a] == 0 for a in plan.axes.spatial)
                # Without source pixels everything is outside: the fill (as the CPU).
                border = _CONSTANT if source_empty else plan.border
                flags = (_PERSPECTIVE if plan.perspective else 0) | (_ROUND_EVEN if plan.round_even else 0)
                row, pixels = _row(
                    plan.axes,
                    shape,
                    out_shape,
                    (in_offset, out_offset),
                    (fills_at, matrix_at),
                    plan.interp,
                    border,
                    flags,
                    0,
                )
                rows += row
                most = max(most, pixels)
            return rows, most

        kernel = "volume" if volume else "projective"
        return [_run(kernel, source, out_shapes, target, work, batch_size >= 0, ctx, rows_of)]


class GpuDistortion:
    """The GPU kernel of ``water``, ``sphere`` and ``jitter``: ``warp_mapped_<type>`` over every
    sample in one launch, the map of each output pixel computed there from the
    sample's ``MapPlan`` (``plan(shape, dtype, args)``) as the CPU computes it; a sample
    with mask 0 is copied. ``kernel_type(source, target)`` gives the type the
    kernels warp in."""

    def __init__(self, op, plan, kernel_type):
        self.op = op
        self.plan = plan
        self.kernel_type = kernel_type

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type that a pass-through keeps exact."""
        x = ins[0]
        require_gpu_input(self.op, x)
        dtype = x._dtype.numpy
        if dtype is None or np.dtype(dtype) not in _DISTORTION_TYPES:
            names = ", ".join(t.name for t in _DISTORTION_TYPES)
            raise unsupported(self.op, f"no kernel for input type {x._dtype} (GPU types: {names})")

    def __call__(self, inputs, args, batch_size, ctx):
        source = GpuSamples(inputs[0], batch_size)
        sample_args = args_per_sample(args, batch_size)
        target = np.dtype(source.dtype)
        plans = [self.plan(shape, target, a) for shape, a in zip(source.shapes, sample_args, strict=True)]

        def rows_of(out_offsets, table):
            rows, most = [], 0
            for index, (plan, shape, in_offset, out_offset) in enumerate(
                zip(plans, source.shapes, source.offsets, out_offsets, strict=True)
            ):
                fills_at = table.add(plan.fills)
                transform = plan.transform
                if plan.mode == MAP_JITTER:
                    # The sample's index keys its draws (as float bits): a launch's
                    # blockIdx.y starts again every MAX_SEGMENTS samples.
                    transform = np.append(transform, np.array([index], np.uint32).view(np.float32))
                transform_at = table.add(transform) if plan.mode is not None else 0
                mode = _MAP_COPY if plan.mode is None else plan.mode
                row, pixels = _row(
                    plan.axes,
                    shape,
                    shape,
                    (in_offset, out_offset),
                    (fills_at, transform_at),
                    plan.interp,
                    _CONSTANT,
                    0,
                    mode,
                )
                rows += row
                most = max(most, pixels)
            return rows, most

        work = self.kernel_type(target, target)
        return [_run("mapped", source, source.shapes, target, work, batch_size >= 0, ctx, rows_of)]
