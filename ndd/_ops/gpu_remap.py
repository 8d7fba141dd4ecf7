"""GPU kernel of ``ndd.experimental.remap``, queued on ``kernels/remap.cu``.

The operator's own module (``ndd/_ops/warp.py``) gives what is not the pass over the
pixels, with the functions its CPU kernel uses: a sample's axes (``_image_axes``) and
its output shape (``_remap_shape``, which also checks the maps' shapes against the
sample's frames and each other). The kernel then reads each output pixel's source
point from the maps, adds 0.5 for ``pixel_origin="center"`` as the CPU does, and
samples the source there with ``kernels/sampling.cuh``, the sampling of the other
warps, operation for operation as ``ndd/_cpu/warp.pyx``'s ``warp_mapped``: the results
equal the CPU's to the bit.

The maps may be on the GPU, used where they are, or in host memory, uploaded with the
call (a map Tensor serves every sample of a batch, as on the CPU). A batch is one
launch: one descriptor row per sample (its offsets in the input, output and maps,
extents and strides, frames as a dimension). The kernels exist for the CPU kernel's
own types; a sample of another type is remapped, as on the CPU, in float32 between two
passes of ``elementwise.cu``'s cast kernels.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import math

import numpy as np

from ..types import DALIInterpType
from .axes import INPUT_LAYOUT
from .gpu_elementwise import cast_flat, output_in, source_in
from .gpu_layout import c_strides
from .gpu_segments import (
    GpuSamples,
    SampleOutputs,
    args_per_sample,
    cuda,
    launch_segments,
    require_gpu_input,
    unsupported,
)
from .gpu_types import SUFFIXES

__all__ = ["GpuRemap"]

MODULE = "remap"
BLOCK = 256
# REMAP_ROW, REMAP_DIM_WORDS and the flag REMAP_CENTER of kernels/remap.cu; WARP_NN
# and WARP_LINEAR of kernels/sampling.cuh.
_HEAD = 10
_DIM_WORDS = 4
_ROW = _HEAD + 3 * _DIM_WORDS
_CENTER = 1
_NN = 0
_LINEAR = 1


class _Maps:
    """A map input as the kernel reads it: a device pointer, each sample's element
    offset from it and shape. A host map is uploaded (``keep`` holds the copy until
    the launch is queued)."""

    def __init__(self, value, batch_size, count, device_id, stream, keep):
        device_array = cuda()[0]
        if isinstance(value, (device_array.DeviceArray, device_array.DeviceBatch)):
            samples = GpuSamples(value, batch_size)
            self.ptr, self.offsets, self.shapes = samples.ptr, samples.offsets, samples.shapes
            return
        arrays = [np.asarray(v) for v in value] if isinstance(value, list) else [np.asarray(value)]
        flat = [np.ascontiguousarray(a, np.float32).reshape(-1) for a in arrays]
        starts = np.concatenate([[0], np.cumsum([f.size for f in flat], dtype=np.int64)]).tolist()
        # At least one element: an allocation of none has no address to pass.
        uploaded = device_array.DeviceArray.from_host(
            np.concatenate([*flat, np.zeros(1, np.float32)]), device_id, stream
        )
        keep.append(uploaded)
        self.ptr = uploaded.ptr
        if isinstance(value, list):
            self.offsets, self.shapes = starts[:-1], [a.shape for a in arrays]
        else:
            self.offsets, self.shapes = [0] * count, [arrays[0].shape] * count


def _row(axes, shape, out_shape, offsets, interp, center):
    """The descriptor row of one sample (see kernels/remap.cu) and its output pixels."""
    channel = axes.channel
    channels = shape[channel] if channel is not None else 1
    in_strides, out_strides = c_strides(shape), c_strides(out_shape)
    in_ks = in_strides[channel] if channel is not None else 0
    out_ks = out_strides[channel] if channel is not None else 0
    pixels = math.prod(out_shape) // channels if channels else 0
    row = [offsets[0], offsets[1], pixels, offsets[2], offsets[3], interp, _CENTER if center else 0]
    row += [channels, in_ks, out_ks]
    for axis in (axes.frame, axes.height, axes.width):
        if axis is None:
            row += [1, 1, 0, 0]
        else:
            row += [out_shape[axis], shape[axis], in_strides[axis], out_strides[axis]]
    return row, pixels, channels


class GpuRemap:
    """The GPU kernel of ``experimental.remap``: ``remap_<type>`` over every sample in
    one launch. ``image_axes(op, layout, ndim)`` gives a sample's axes and
    ``remap_shape(shapes, args)`` its output shape from the shapes of the input and
    the maps (both the CPU's functions); ``kernel_type(source, target)`` the type the
    kernels remap in."""

    def __init__(self, op, image_axes, remap_shape, kernel_type):
        self.op = op
        self.image_axes = image_axes
        self.remap_shape = remap_shape
        self.kernel_type = kernel_type

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type with a cast kernel (the maps may be
        anywhere: host ones are uploaded)."""
        x = ins[0]
        require_gpu_input(self.op, x)
        dtype = x._dtype.numpy
        if dtype is None or np.dtype(dtype) not in SUFFIXES:
            raise unsupported(self.op, f"no kernel for input type {x._dtype}")

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        count = len(source.shapes)
        sample_args = args_per_sample(args, batch_size)
        # The temporaries live until every kernel that uses them is queued (then the
        # pool frees them in stream order).
        keep = []
        map_x, map_y = (_Maps(inputs[k], batch_size, count, device_id, stream, keep) for k in (1, 2))
        out_shapes = [
            tuple(self.remap_shape((shape, sx, sy), a)[0])
            for shape, sx, sy, a in zip(source.shapes, map_x.shapes, map_y.shapes, sample_args, strict=True)
        ]
        target = np.dtype(source.dtype)
        work = np.dtype(self.kernel_type(target, target))
        out = SampleOutputs(out_shapes, target, batch_size >= 0, device_id, stream)
        src_ptr = source_in(source, work, keep, stream, device_id)
        dst_ptr = output_in(work, out, keep, stream, device_id)
        rows, most, widest = [], 0, 1
        for i, (shape, out_shape, a) in enumerate(zip(source.shapes, out_shapes, sample_args, strict=True)):
            axes = self.image_axes(self.op, a[INPUT_LAYOUT], len(shape))
            offsets = (source.offsets[i], out.offsets[i], map_x.offsets[i], map_y.offsets[i])
            interp = _LINEAR if a["interp"] == DALIInterpType.INTERP_LINEAR else _NN
            row, pixels, channels = _row(
                axes, shape, out_shape, offsets, interp, a["pixel_origin"] == "center"
            )
            rows += row
            most = max(most, pixels)
            widest = max(widest, channels)
        if most:
            # remap reads 0 outside the source, in every channel.
            fill = device_array.DeviceArray.from_host(np.zeros(widest, np.float32), device_id, stream)
            launch_segments(
                device_id,
                MODULE,
                f"remap_{SUFFIXES[work]}",
                BLOCK,
                stream,
                rows,
                _ROW,
                most,
                (src_ptr, dst_ptr),
                (map_x.ptr, map_y.ptr, fill.ptr),
            )
        if work != target:
            cast_flat(dst_ptr, work, out.base.ptr, target, out.elements, stream, device_id)
        return [out.result]
