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

from .._cpu.resample import RESAMPLE_MAX_DIMS, RESAMPLE_ROW, RESAMPLE_TABLE_ROW, resample_plan
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
RESAMPLE_TYPES = suffixes(np.uint8, np.int16, np.uint16, np.float32, np.float16)
_F32 = np.dtype(np.float32)


class GpuResample:
    """The GPU kernel of the resize family: the separable passes that the CPU's
    ``resample`` makes (same window, tables, order and sums), planned for the whole
    batch in one compiled call (``resample_plan`` of ``ndd/_cpu/resample.pyx``); each
    pass level of a batch is one launch of ``resample_<in>_to_<out>`` per destination
    (the output, or a float32 buffer for the next pass, as on the CPU).

    ``jobs(shapes, sample_args)`` gives, per sample, the arguments of ``resample``
    between the image and the output type (samples of one shape given the same job
    object share their tables); ``out_dtype(args)`` the output's numpy type;
    ``extra(shapes, sample_args)``, when given, host arrays of the further outputs
    (one list per output, one array per sample), copied to the GPU."""

    def __init__(self, op, jobs, out_dtype, extra=None):
        self.op = op
        self.jobs = jobs
        self.out_dtype = out_dtype
        self.extra = extra

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type with a kernel, of few enough dimensions."""
        require_gpu_input_of(self.op, ins[0], RESAMPLE_TYPES, max_ndim=RESAMPLE_MAX_DIMS)

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
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
        indices, weights, fills, size, zeros, levels = resample_plan(
            source.shapes, jobs, source.offsets, out.offsets, device_tables=True
        )
        for i in zeros:
            # An image without pixels along a resized axis gives zeros.
            nbytes = math.prod(out_shapes[i]) * target.itemsize
            out.base.view(out.offsets[i] * target.itemsize, (nbytes,)).clear()
        if not size:
            return results
        tables, weights_ptr = resample_tables(indices, weights, fills, size, device_id, stream)
        reading = (source.ptr, source.dtype)
        keep = []  # each level's buffer, alive until every launch is queued
        for between, rows_out, most_out, rows_between, most_between in levels:
            buffer = None
            if len(rows_between):
                buffer = device_array.DeviceArray.empty((max(between, 1),), _F32, device_id, stream)
                keep.append(buffer)
            for rows, most, writing in (
                (rows_out, most_out, (out.base.ptr, target)),
                (rows_between, most_between, None if buffer is None else (buffer.ptr, _F32)),
            ):
                if len(rows):
                    launch_segments(
                        device_id,
                        _RESAMPLE_MODULE,
                        f"resample_{RESAMPLE_TYPES[np.dtype(reading[1])]}_to_{RESAMPLE_TYPES[writing[1]]}",
                        BLOCK,
                        stream,
                        rows.reshape(-1),
                        RESAMPLE_ROW,
                        most,
                        (reading[0], writing[0]),
                        (tables.ptr, weights_ptr),
                    )
            if buffer is not None:
                reading = (buffer.ptr, _F32)
        return results


def resample_tables(indices, weights, fills, size, device_id, stream):
    """The filter tables of a ``resample_plan`` on the GPU: the indices, then the weights,
    in one allocation, the tables made on the host first, then those the GPU makes.
    Returns the allocation (int32, ``2 * size``) and the weights' address."""
    device_array = cuda()[0]
    tables = device_array.DeviceArray.empty((2 * size,), np.int32, device_id, stream)
    weights_ptr = tables.ptr + 4 * size
    if not len(fills):
        tables.copy_from_host(np.concatenate([indices, weights.view(np.int32)]))
        return tables, weights_ptr
    tables.copy_from_host(indices)
    tables.view(4 * size, weights.shape, np.float32).copy_from_host(weights)
    launch_segments(
        device_id,
        _RESAMPLE_MODULE,
        "resample_tables",
        BLOCK,
        stream,
        fills.reshape(-1),
        RESAMPLE_TABLE_ROW,
        int(fills[:, 1].max()),
        (),
        (tables.ptr, weights_ptr),
    )
    return tables, weights_ptr


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
COLOR_MATRIX_REVERSED = 2
COLOR_HALF_AWAY = 0
COLOR_HALF_UP = 1
COLOR_TYPES = suffixes(np.uint8, np.int16, np.int32, np.float32, np.float16)


class ColorPart:
    """How one part of a sample (all of it, or frame ``frame`` of a sequence) is
    mapped: ``mode`` COLOR_AFFINE with ``params`` [scale, offset], or COLOR_MATRIX
    with [pre (in channels), matrix (out x in, by rows), post (out channels)]
    (COLOR_MATRIX_REVERSED: the same over the pixel's channels in reverse order);
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
