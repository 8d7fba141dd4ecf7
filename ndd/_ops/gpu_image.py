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

from .._prepare.invocation import per_sample_args
from .gpu_layout import c_strides
from .gpu_segments import GpuSamples, SampleOutputs, cuda, launch_segments, require_gpu_input, unsupported
from .gpu_types import suffixes
from .image_layout import known_ndim

__all__ = ["CMN_INPUT_TYPES", "CMN_OUTPUT_TYPES", "GpuCropMirrorNormalize", "MODULE", "WindowPlan"]

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
        x = ins[0]
        require_gpu_input(self.op, x)
        dtype = x._dtype.numpy
        if dtype is None or np.dtype(dtype) not in CMN_INPUT_TYPES:
            raise unsupported(self.op, f"no kernel for input type {x._dtype}")
        ndim = known_ndim(x)
        if ndim is not None and ndim - 1 > _CMN_MAX_DIMS:
            raise unsupported(self.op, f"inputs of {ndim} dimensions (at most {_CMN_MAX_DIMS + 1})")

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        sample_args = [args] if batch_size < 0 else per_sample_args(args, batch_size)
        plans = [self.plan(a, shape) for a, shape in zip(sample_args, source.shapes, strict=True)]
        target = np.dtype(self.out_dtype(args))
        out = SampleOutputs([p.out_shape for p in plans], target, batch_size >= 0, device_id, stream)
        rows, params, params_at = [], [], {}
        max_pixels = 0
        for plan, shape, in_offset, out_offset in zip(
            plans, source.shapes, source.offsets, out.offsets, strict=True
        ):
            block = np.concatenate([plan.mean, plan.multiplier, plan.fill]).astype(np.float32)
            key = block.tobytes()
            if key not in params_at:
                params_at[key] = sum(len(p) for p in params)
                params.append(block)
            row, pixels = _cmn_row(plan, shape, in_offset, out_offset, params_at[key])
            rows += row
            max_pixels = max(max_pixels, pixels)
        if max_pixels == 0:
            return [out.result]
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
