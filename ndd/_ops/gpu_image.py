"""GPU kernels of the image operators, queued on ``kernels/image.cu``.

``crop_mirror_normalize`` is one launch per batch of the fused kernel: each
sample is a descriptor row (its window as per-dimension starts, steps and input
extents, in the output's axis order) and a block of per-channel parameters (mean,
multiplier, fill values) in a float table, both uploaded per call. The window,
the layouts and the parameters come from the operator's own module, so the CPU
and GPU share everything but the pass over the pixels.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import math

import numpy as np

from .gpu_layout import c_strides
from .gpu_segments import (
    GpuSamples,
    SampleOutputs,
    args_per_sample,
    cuda,
    launch_blocks,
    launch_segments,
    once_per_distinct,
    require_gpu_input_of,
)
from .gpu_types import suffixes

__all__ = [
    "CMN_INPUT_TYPES",
    "CMN_OUTPUT_TYPES",
    "ColorPart",
    "GpuColor",
    "GpuCropMirrorNormalize",
    "GpuEqualize",
    "GpuResample",
    "MODULE",
    "WindowPlan",
]

MODULE = "image"
# Threads per block of every launch here.
BLOCK = 256
# CMN_MAX_DIMS, CMN_HEAD and CMN_DIM_WORDS of kernels/image.cu.
_CMN_MAX_DIMS = 5
_CMN_HEAD = 9
_CMN_DIM_WORDS = 6
_CMN_ROW = _CMN_HEAD + _CMN_DIM_WORDS * _CMN_MAX_DIMS
CMN_INPUT_TYPES = suffixes(np.uint8, np.int16, np.uint16, np.int32, np.float32, np.float16)
CMN_OUTPUT_TYPES = suffixes(np.float32, np.float16, np.uint8, np.int8)


class WindowPlan:
    """What the fused kernel needs of one sample, worked out by the operator's module:
    the input and output layouts, the window (``bounds``: (start, end) per input
    axis, reaching outside the input where it is padded), whether it is mirrored
    along W, the output shape, the per-input-channel ``mean`` and ``multiplier``
    and the per-output-channel ``fill`` values (float32, already rounded and
    saturated as the output stores them)."""

    __slots__ = ("bounds", "fill", "layout", "mean", "mirror", "multiplier", "out_layout", "out_shape")

    def __init__(self, layout, out_layout, bounds, mirror, out_shape, mean, multiplier, fill):
        self.layout = layout
        self.out_layout = out_layout
        self.bounds = bounds
        self.mirror = mirror
        self.out_shape = out_shape
        self.mean = mean
        self.multiplier = multiplier
        self.fill = fill


def _cmn_row(plan, shape, in_offset, out_offset, params_offset):
    """The descriptor row of one sample (see kernels/image.cu)."""
    layout, out_layout = plan.layout, plan.out_layout
    in_strides, out_strides = c_strides(shape), c_strides(plan.out_shape)
    dims = []
    for k, name in enumerate(out_layout):
        if name == "C":
            continue
        axis = layout.index(name)
        lo, hi = plan.bounds[axis]
        start, step = (hi - 1, -1) if plan.mirror and name == "W" else (lo, 1)
        dims += [hi - lo, start, step, shape[axis], in_strides[axis], out_strides[k]]
    ndim = len(dims) // _CMN_DIM_WORDS
    pixels = math.prod(dims[0::_CMN_DIM_WORDS])
    channel, out_channel = layout.index("C"), out_layout.index("C")
    head = [
        in_offset,
        out_offset,
        pixels,
        ndim,
        params_offset,
        shape[channel],
        plan.out_shape[out_channel],
        in_strides[channel],
        out_strides[out_channel],
    ]
    return head + dims + [0] * (_CMN_DIM_WORDS * (_CMN_MAX_DIMS - ndim)), pixels


class GpuCropMirrorNormalize:
    """The GPU kernel of ``crop_mirror_normalize``: ``crop_mirror_normalize_<in>_to_<out>``
    over every sample in one launch. ``plan(args, shape)`` gives a sample's
    ``WindowPlan``; ``out_dtype(args)`` the output's numpy type."""

    def __init__(self, op, plan, out_dtype):
        self.op = op
        self.plan = plan
        self.out_dtype = out_dtype

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type with a kernel, of few enough dimensions."""
        require_gpu_input_of(self.op, ins[0], CMN_INPUT_TYPES, max_ndim=_CMN_MAX_DIMS + 1)

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        sample_args = args_per_sample(args, batch_size)
        # Samples that share their plan share their row too: each is made once per call.
        plans = once_per_distinct(self.plan, sample_args, source.shapes)
        target = np.dtype(self.out_dtype(args))
        out = SampleOutputs([p.out_shape for p in plans], target, batch_size >= 0, device_id, stream)
        params, params_at, row_of = [], {}, {}
        templates = []
        max_pixels = 0
        for plan, shape in zip(plans, source.shapes, strict=True):
            key = (id(plan), shape)
            made = row_of.get(key)
            if made is None:
                block = np.concatenate([plan.mean, plan.multiplier, plan.fill]).astype(np.float32)
                values = block.tobytes()
                if values not in params_at:
                    params_at[values] = sum(len(p) for p in params)
                    params.append(block)
                row, pixels = _cmn_row(plan, shape, 0, 0, params_at[values])
                made = row_of[key] = (np.array(row, np.int64), pixels)
            templates.append(made[0])
            max_pixels = max(max_pixels, made[1])
        if max_pixels == 0:
            return [out.result]
        rows = np.array(templates)
        rows[:, 0] = source.offsets
        rows[:, 1] = out.offsets
        rows = rows.reshape(-1)
        table = device_array.DeviceArray.from_host(np.concatenate(params), device_id, stream)
        name = f"crop_mirror_normalize_{CMN_INPUT_TYPES[source.dtype]}_to_{CMN_OUTPUT_TYPES[target]}"
        launch_segments(
            device_id,
            MODULE,
            name,
            BLOCK,
            stream,
            rows,
            _CMN_ROW,
            max_pixels,
            (source.ptr, out.base.ptr),
            (table.ptr, float(args["shift"])),
        )
        return [out.result]


# -- resampling ------------------------------------------------------------------------------

_RESAMPLE_MODULE = "resample"
# RESAMPLE_MAX_DIMS, RESAMPLE_HEAD, RESAMPLE_FUSED and RESAMPLE_SKIP_ZERO of kernels/resample.cu.
_RESAMPLE_MAX_DIMS = 6
_RESAMPLE_HEAD = 8
_RESAMPLE_ROW = _RESAMPLE_HEAD + 2 * _RESAMPLE_MAX_DIMS
_RESAMPLE_FUSED = 1
_RESAMPLE_SKIP_ZERO = 2
RESAMPLE_TYPES = suffixes(np.uint8, np.int16, np.uint16, np.float32, np.float16)
_F32 = np.dtype(np.float32)


def _resample_row(step, in_offset, in_strides, out_offset, table_offset):
    """The descriptor row of one pass of one sample (see kernels/resample.cu)."""
    flags = (_RESAMPLE_FUSED if step.fused else 0) | (_RESAMPLE_SKIP_ZERO if step.skip_zero else 0)
    ndim = len(step.out_shape)
    head = [
        in_offset,
        out_offset,
        math.prod(step.out_shape),
        ndim,
        step.axis,
        table_offset,
        step.indices.shape[1],
        flags,
    ]
    dims = [v for extent, stride in zip(step.out_shape, in_strides, strict=True) for v in (extent, stride)]
    return head + dims + [0] * (2 * (_RESAMPLE_MAX_DIMS - ndim))


class _Buffer:
    """Where a pass reads or writes: a base pointer, its element type, and each
    sample's element offset (and strides, for reading) from it."""

    __slots__ = ("dtype", "offsets", "ptr", "strides")

    def __init__(self, ptr, dtype, offsets, strides=None):
        self.ptr = ptr
        self.dtype = dtype
        self.offsets = offsets
        self.strides = strides


class GpuResample:
    """The GPU kernel of the resize family: the separable passes that the CPU's
    ``resample`` makes (``resize.resample_passes``: same window, tables, order and
    sums), each pass of a whole batch one launch of ``resample_<in>_to_<out>``;
    intermediate results are float32, as on the CPU.

    ``jobs(shapes, sample_args)`` gives, per sample, the arguments of ``resample``
    between the image and the output type; ``out_dtype(args)`` the output's numpy
    type; ``extra(shapes, sample_args)``, when given, host arrays of the further
    outputs (one list per output, one array per sample), copied to the GPU."""

    def __init__(self, op, jobs, out_dtype, passes, extra=None):
        self.op = op
        self.jobs = jobs
        self.out_dtype = out_dtype
        self.passes = passes
        self.extra = extra

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type with a kernel, of few enough dimensions."""
        require_gpu_input_of(self.op, ins[0], RESAMPLE_TYPES, max_ndim=_RESAMPLE_MAX_DIMS)

    def __call__(self, inputs, args, batch_size, ctx):
        _, _, _, driver, context = cuda()
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        sample_args = args_per_sample(args, batch_size)
        jobs = self.jobs(source.shapes, sample_args)
        target = np.dtype(self.out_dtype(args))
        out_shapes = []
        for shape, (axes, sizes, *_) in zip(source.shapes, jobs, strict=True):
            out_shape = list(shape)
            for axis, size in zip(axes, sizes, strict=True):
                out_shape[axis] = size
            out_shapes.append(tuple(out_shape))
        out = SampleOutputs(out_shapes, target, batch_size >= 0, device_id, stream)
        results = [out.result]
        if self.extra is not None:
            results += [
                _upload_samples(v, batch_size, device_id, stream)
                for v in self.extra(source.shapes, sample_args)
            ]
        # Samples of one shape resampled alike (a validation batch's images of one size)
        # share their plan: each is made once per call.
        plan_of = {}
        plans = []
        for shape, job in zip(source.shapes, jobs, strict=True):
            key = (shape, *(tuple(v) if isinstance(v, (list, tuple, np.ndarray)) else v for v in job))
            plan = plan_of.get(key)
            if plan is None:
                plan = plan_of[key] = self.passes(shape, *job)
            plans.append(plan)
        for plan, offset, shape in zip(plans, out.offsets, out_shapes, strict=True):
            nbytes = math.prod(shape) * target.itemsize
            if plan is None and nbytes:
                # An image without pixels along a resized axis gives zeros.
                driver.check(
                    context.state().api.cuMemsetD8Async(
                        out.base.ptr + offset * target.itemsize, 0, nbytes, stream.handle
                    ),
                    f"clearing {nbytes} bytes on device {device_id}",
                )
        self._run_passes(plans, source, out, target, device_id, stream)
        return results

    def _run_passes(self, steps, source, out, target, device_id, stream):
        """Launch every pass of every sample (``steps``: their plans): pass k of all samples together."""
        device_array = cuda()[0]
        indices, weights, table_offsets, stored = [], [], [], {}
        at = 0
        for plan in steps:
            # A plan that samples share is stored once.
            offsets = stored.get(id(plan))
            if offsets is None:
                offsets = stored[id(plan)] = []
                for step in [] if plan is None else plan[2]:
                    indices.append(step.indices.reshape(-1))
                    weights.append(step.weights.reshape(-1))
                    offsets.append(at)
                    at += step.indices.size
            table_offsets.append(offsets)
        if at == 0:
            return
        index_table = device_array.DeviceArray.from_host(
            np.concatenate(indices).astype(np.int32), device_id, stream
        )
        weight_table = device_array.DeviceArray.from_host(
            np.concatenate(weights).astype(np.float32), device_id, stream
        )
        # The first pass reads each sample's window of the input.
        reads = []
        for plan, offset, shape in zip(steps, source.offsets, source.shapes, strict=True):
            if plan is None:
                reads.append(None)
                continue
            strides = c_strides(shape)
            reads.append((offset + sum(s * t for s, t in zip(plan[0], strides, strict=True)), strides))
        reading = _Buffer(source.ptr, source.dtype, reads)
        keep = []
        for k in range(max((len(p[2]) for p in steps if p is not None), default=0)):
            last = [p is not None and len(p[2]) == k + 1 for p in steps]
            temporary = [p is not None and len(p[2]) > k + 1 for p in steps]
            sizes = [math.prod(p[2][k].out_shape) if t else 0 for p, t in zip(steps, temporary, strict=True)]
            between = None
            if any(temporary):
                between = device_array.DeviceArray.empty((max(sum(sizes), 1),), _F32, device_id, stream)
                keep.append(between)
            starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
            groups = {}
            next_reads = [None] * len(steps)
            for i, plan in enumerate(steps):
                if plan is None or len(plan[2]) <= k:
                    continue
                step = plan[2][k]
                in_offset, in_strides = reading.offsets[i]
                if last[i]:
                    write = (out.base.ptr, target, out.offsets[i])
                else:
                    write = (between.ptr, _F32, starts[i])
                    next_reads[i] = (starts[i], c_strides(step.out_shape))
                key = (reading.ptr, reading.dtype, write[0], write[1])
                groups.setdefault(key, []).append(
                    (
                        _resample_row(step, in_offset, in_strides, write[2], table_offsets[i][k]),
                        math.prod(step.out_shape),
                    )
                )
            for (in_ptr, in_dtype, out_ptr, out_dtype), members in groups.items():
                rows = [v for row, _ in members for v in row]
                launch_segments(
                    device_id,
                    _RESAMPLE_MODULE,
                    f"resample_{RESAMPLE_TYPES[np.dtype(in_dtype)]}_to_{RESAMPLE_TYPES[np.dtype(out_dtype)]}",
                    BLOCK,
                    stream,
                    rows,
                    _RESAMPLE_ROW,
                    max(n for _, n in members),
                    (in_ptr, out_ptr),
                    (index_table.ptr, weight_table.ptr),
                )
            if between is not None:
                reading = _Buffer(between.ptr, _F32, next_reads)


def _upload_samples(values, batch_size, device_id, stream):
    """Host arrays (one per sample) as a GPU Tensor (sample mode) or Batch."""
    device_array = cuda()[0]
    if batch_size < 0:
        return device_array.DeviceArray.from_host(values[0], device_id, stream)
    return device_array.DeviceBatch.from_host(values, values[0].dtype if values else np.int32, device_id)


# -- colour ----------------------------------------------------------------------------------

# COLOR_ROW, the modes and roundings of kernels/image.cu.
_COLOR_ROW = 8
COLOR_AFFINE = 0
COLOR_MATRIX = 1
COLOR_HALF_AWAY = 0
COLOR_HALF_UP = 1
COLOR_TYPES = suffixes(np.uint8, np.int16, np.int32, np.float32)


class ColorPart:
    """How one part of a sample (all of it, or frame ``frame`` of a sequence) is
    mapped: ``mode`` COLOR_AFFINE with ``params`` [scale, offset], or COLOR_MATRIX
    with [pre (in channels), matrix (out x in, by rows), post (out channels)];
    ``rounding`` of integer results COLOR_HALF_AWAY or COLOR_HALF_UP."""

    __slots__ = ("frame", "mode", "out_channels", "params", "rounding")

    def __init__(self, frame, mode, params, rounding=COLOR_HALF_AWAY, out_channels=None):
        self.frame = frame
        self.mode = mode
        self.params = np.asarray(params, np.float32).reshape(-1)
        self.rounding = rounding
        self.out_channels = out_channels


class GpuColor:
    """The GPU kernel of the colour operators: ``color_<in>_to_<out>`` over every
    part of every sample in one launch. ``parts(args, shape, in_dtype)`` gives a
    sample's ``ColorPart`` list (the operator's own coefficients); ``out_dtype(args)``
    the output's numpy type."""

    def __init__(self, op, parts, out_dtype):
        self.op = op
        self.parts = parts
        self.out_dtype = out_dtype

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type with a kernel."""
        require_gpu_input_of(self.op, ins[0], COLOR_TYPES)

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        sample_args = args_per_sample(args, batch_size)
        target = np.dtype(self.out_dtype(args))
        sample_parts = [
            self.parts(a, shape, source.dtype) for a, shape in zip(sample_args, source.shapes, strict=True)
        ]
        out_shapes = []
        for shape, parts in zip(source.shapes, sample_parts, strict=True):
            channels = parts[0].out_channels if parts and parts[0].out_channels is not None else shape[-1]
            out_shapes.append(tuple(shape[:-1]) + (channels,))
        out = SampleOutputs(out_shapes, target, batch_size >= 0, device_id, stream)
        rows, params, params_at = [], [], {}
        at, most = 0, 0
        for shape, out_shape, parts, in_offset, out_offset in zip(
            source.shapes, out_shapes, sample_parts, source.offsets, out.offsets, strict=True
        ):
            in_channels, out_channels = shape[-1], out_shape[-1]
            pixels = math.prod(shape[:-1])
            if parts[0].frame is not None:
                pixels //= max(shape[0], 1)
            for part in parts:
                key = part.params.tobytes()
                if key not in params_at:
                    params_at[key] = at
                    params.append(part.params)
                    at += part.params.size
                frame = part.frame or 0
                rows += [
                    in_offset + frame * pixels * in_channels,
                    out_offset + frame * pixels * out_channels,
                    pixels,
                    in_channels,
                    out_channels,
                    params_at[key],
                    part.mode,
                    part.rounding,
                ]
                most = max(most, pixels * in_channels if part.mode == COLOR_AFFINE else pixels)
        if most == 0:
            return [out.result]
        table = device_array.DeviceArray.from_host(np.concatenate(params), device_id, stream)
        launch_segments(
            device_id,
            MODULE,
            f"color_{COLOR_TYPES[source.dtype]}_to_{COLOR_TYPES[target]}",
            BLOCK,
            stream,
            rows,
            _COLOR_ROW,
            most,
            (source.ptr, out.base.ptr),
            (table.ptr,),
        )
        return [out.result]


# -- equalize --------------------------------------------------------------------------------

# EQUALIZE_MAX_DIMS and EQUALIZE_ROW of kernels/image.cu.
_EQUALIZE_MAX_DIMS = 3
_EQUALIZE_ROW = 4 + 2 * _EQUALIZE_MAX_DIMS


class GpuEqualize:
    """The GPU kernel of ``equalize``: one block per plane (a channel of a frame of a
    sample) builds its histogram and table and looks up its values.
    ``axes(args)`` gives a sample's (frame axis, channel axis), None where absent."""

    def __init__(self, op, axes):
        self.op = op
        self.axes = axes

    def check(self, ins, args):
        """Prepare phase: uint8 input on the GPU."""
        require_gpu_input_of(self.op, ins[0], (np.dtype(np.uint8),))

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        out = SampleOutputs(source.shapes, source.dtype, batch_size >= 0, device_id, stream)
        frame, channel = self.axes(args)
        rows = []
        for shape, in_offset, out_offset in zip(source.shapes, source.offsets, out.offsets, strict=True):
            strides = c_strides(shape)
            pixel_axes = [d for d in range(len(shape)) if d not in (frame, channel)]
            values = math.prod(shape[d] for d in pixel_axes)
            if values == 0:
                continue
            dims = []
            for d in pixel_axes:
                dims += [shape[d], strides[d]]
            dims += [0, 0] * (_EQUALIZE_MAX_DIMS - len(pixel_axes))
            for f in range(shape[frame] if frame is not None else 1):
                for c in range(shape[channel] if channel is not None else 1):
                    at = (f * strides[frame] if frame is not None else 0) + (
                        c * strides[channel] if channel is not None else 0
                    )
                    rows += [in_offset + at, out_offset + at, values, len(pixel_axes), *dims]
        planes = len(rows) // _EQUALIZE_ROW
        if planes == 0:
            return [out.result]
        table = device_array.DeviceArray.from_host(np.asarray(rows, np.int64), device_id, stream)
        launch_blocks(
            device_id, MODULE, "equalize", BLOCK, stream, planes, (source.ptr, out.base.ptr, table.ptr)
        )
        return [out.result]
