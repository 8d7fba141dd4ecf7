"""GPU kernels of the compositing operators ``erase``, ``paste`` and ``grid_mask``,
queued on ``kernels/compose.cu`` (and the strided copy of ``kernels/layout.cu``).

- ``erase``: a copy of the input, then one launch filling every region of every
  sample (each region an N-D box with its fill values).
- ``paste``: the canvas around each image filled (four bands per sample, one
  launch), then the images copied into their windows (one strided-copy launch).
- ``grid_mask``: one launch over every pixel of the batch, copying or zeroing it.
- ``multi_paste``: a zero canvas, then the k-th regions of all samples in one
  strided-copy launch per k, in pasting order.
- ``sequence_rearrange``: every output frame a segment of one strided-copy launch.

The regions, canvases, fill values and grid coefficients come from the operators'
own module (the CPU's code); fill values are converted there as on the CPU and
moved here as bit patterns.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import math

import numpy as np

from .gpu_layout import GpuCopy, Segment, c_strides, strided_copy
from .gpu_segments import (
    GpuSamples,
    SampleOutputs,
    args_per_sample,
    cuda,
    launch_segments,
    require_gpu_input,
    unsupported,
)
from .gpu_types import STORAGE_TYPES

__all__ = ["GpuErase", "GpuGridMask", "GpuMultiPaste", "GpuPaste", "GpuRearrange", "MODULE"]

MODULE = "compose"
BLOCK = 256
# FILL_MAX_DIMS, FILL_HEAD and GRID_ROW of kernels/compose.cu.
_FILL_MAX_DIMS = 6
_FILL_HEAD = 5
_FILL_ROW = _FILL_HEAD + 2 * _FILL_MAX_DIMS
_GRID_ROW = 6


class _Boxes:
    """Boxes to fill, as descriptor rows, with their fill values in one table."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.rows, self.fills, self.at, self.most = [], [], 0, 0

    def add(self, offset, extents, strides, fill, fill_dim):
        """The box of ``extents`` at element ``offset`` with element ``strides``; ``fill``
        (1-D, of the element type) laid along dimension ``fill_dim`` (None: one value)."""
        count = math.prod(extents)
        if count == 0:
            return
        fill = np.ascontiguousarray(fill, self.dtype).reshape(-1)
        self.rows += [offset, count, len(extents), -1 if fill_dim is None else fill_dim, self.at]
        for extent, stride in zip(extents, strides, strict=True):
            self.rows += [extent, stride]
        self.rows += [0, 0] * (_FILL_MAX_DIMS - len(extents))
        self.fills.append(fill.view(STORAGE_TYPES[self.dtype.itemsize][1]))
        self.at += fill.size
        self.most = max(self.most, count)

    def launch(self, out_ptr, device_id, stream):
        if not self.rows:
            return
        device_array = cuda()[0]
        table = device_array.DeviceArray.from_host(np.concatenate(self.fills), device_id, stream)
        suffix = STORAGE_TYPES[self.dtype.itemsize][0]
        launch_segments(
            device_id,
            MODULE,
            f"fill_boxes_{suffix}",
            BLOCK,
            stream,
            self.rows,
            _FILL_ROW,
            self.most,
            (out_ptr,),
            (table.ptr,),
        )


def _check_storage(op, x):
    require_gpu_input(op, x)
    dtype = x._dtype.numpy
    if dtype is None or np.dtype(dtype).itemsize not in STORAGE_TYPES:
        raise unsupported(op, f"no kernel for elements of type {x._dtype}")


class GpuErase:
    """The GPU kernel of ``erase``. ``regions(args, shape)`` gives a sample's
    regions ([(axis, start, end)] each) and ``fill(args, shape, dtype)`` its fill
    values (converted) with the dimension they are laid along (None for one)."""

    def __init__(self, op, regions, fill):
        self.op = op
        self.regions = regions
        self.fill = fill
        self._copy = GpuCopy(op)

    def check(self, ins, args):
        _check_storage(self.op, ins[0])

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        (result,) = self._copy(inputs, args, batch_size, ctx)
        out = GpuSamples(result, batch_size)
        boxes = _Boxes(out.dtype)
        for shape, offset, a in zip(out.shapes, out.offsets, args_per_sample(args, batch_size), strict=True):
            fill, fill_dim = self.fill(a, shape, out.dtype)
            strides = c_strides(shape)
            for region in self.regions(a, shape):
                extents, start = list(shape), offset
                for axis, lo, hi in region:
                    extents[axis] = hi - lo
                    start += lo * strides[axis]
                boxes.add(start, extents, strides, fill, fill_dim)
        boxes.launch(out.ptr, device_id, stream)
        return [result]


class GpuPaste:
    """The GPU kernel of ``paste``. ``plan(args, shape)`` gives a sample's canvas
    shape and the image's top and left; ``fill(args)`` the canvas colour (uint8)."""

    def __init__(self, op, plan, fill):
        self.op = op
        self.plan = plan
        self.fill = fill

    def check(self, ins, args):
        _check_storage(self.op, ins[0])

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        sample_args = args_per_sample(args, batch_size)
        plans = [self.plan(a, shape) for a, shape in zip(sample_args, source.shapes, strict=True)]
        out = SampleOutputs([p[0] for p in plans], source.dtype, batch_size >= 0, device_id, stream)
        boxes = _Boxes(source.dtype)
        segments = []
        itemsize = source.dtype.itemsize
        for (canvas, top, left), shape, a, in_offset, out_offset in zip(
            plans, source.shapes, sample_args, source.offsets, out.offsets, strict=True
        ):
            fill = self.fill(a)
            fill_dim = 2 if fill.size > 1 else None
            height, width, channels = shape
            strides = c_strides(canvas)
            bottom, right = top + height, left + width
            # The bands around the image: above, below, left of it and right of it.
            boxes.add(out_offset, [top, canvas[1], channels], strides, fill, fill_dim)
            boxes.add(
                out_offset + bottom * strides[0],
                [canvas[0] - bottom, canvas[1], channels],
                strides,
                fill,
                fill_dim,
            )
            boxes.add(out_offset + top * strides[0], [height, left, channels], strides, fill, fill_dim)
            boxes.add(
                out_offset + top * strides[0] + right * strides[1],
                [height, canvas[1] - right, channels],
                strides,
                fill,
                fill_dim,
            )
            if height * width * channels:
                segments.append(
                    Segment(
                        source.ptr + in_offset * itemsize,
                        out.base.ptr + (out_offset + top * strides[0] + left * strides[1]) * itemsize,
                        shape,
                        c_strides(shape),
                        strides,
                    )
                )
        boxes.launch(out.base.ptr, device_id, stream)
        if segments:
            strided_copy(self.op, segments, itemsize, out.base.ptr, [source.ptr], stream, device_id)
        return [out.result]


class GpuGridMask:
    """The GPU kernel of ``grid_mask``. ``planes(args, shape)`` gives how a sample
    splits into (planes, height, width, elements per pixel) images masked alike,
    ``coefficients(args)`` its grid's (cos, sin, shift_x, shift_y, ratio) in tiles,
    float32, both as on the CPU. A descriptor row per plane."""

    def __init__(self, op, planes, coefficients):
        self.op = op
        self.planes = planes
        self.coefficients = coefficients

    def check(self, ins, args):
        require_gpu_input(self.op, ins[0])

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        out = SampleOutputs(source.shapes, source.dtype, batch_size >= 0, device_id, stream)
        itemsize = source.dtype.itemsize
        rows, params, most = [], [], 0
        for k, (shape, a, in_offset, out_offset) in enumerate(
            zip(source.shapes, args_per_sample(args, batch_size), source.offsets, out.offsets, strict=True)
        ):
            params += list(self.coefficients(a))
            planes, height, width, pixel = self.planes(a, shape)
            plane_bytes = height * width * pixel * itemsize
            for p in range(planes if plane_bytes else 0):
                at = p * plane_bytes
                rows += [in_offset * itemsize + at, out_offset * itemsize + at, height, width]
                rows += [pixel * itemsize, 5 * k]
            most = max(most, plane_bytes)
        if most:
            table = device_array.DeviceArray.from_host(np.asarray(params, np.float32), device_id, stream)
            launch_segments(
                device_id,
                MODULE,
                "grid_mask",
                BLOCK,
                stream,
                rows,
                _GRID_ROW,
                most,
                (source.ptr, out.base.ptr),
                (table.ptr,),
            )
        return [out.result]


class GpuMultiPaste:
    """The GPU kernel of ``multi_paste``: a zero canvas per sample, then the regions
    copied in their pasting order (one strided-copy launch for the k-th region of
    every sample, so that a later region covers an earlier one as on the CPU).
    ``plan(index, shapes, args, common_size)`` is the CPU's plan of the regions."""

    def __init__(self, op, plan):
        self.op = op
        self.plan = plan

    def check(self, ins, args):
        for x in ins:
            if x is not None:
                require_gpu_input(self.op, x)
        dtype = args["dtype"]
        if dtype is not None and dtype != ins[0]._dtype:
            raise unsupported(self.op, f"converting the pasted data to 'dtype' {dtype}")

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        sources = [GpuSamples(x, batch_size) for x in inputs if x is not None]
        shapes = [s.shapes for s in sources]
        sizes = {shape[:2] for shape in shapes[0]}
        common_size = sizes.pop() if len(sizes) == 1 else None
        count = len(shapes[0])
        sample_args = args_per_sample(args, batch_size)
        plans = [self.plan(i, shapes, sample_args[i], common_size) for i in range(count)]
        out_shapes = [(*out_size, channels) for out_size, channels, _ in plans]
        dtype = sources[0].dtype
        out = SampleOutputs(out_shapes, dtype, batch_size >= 0, device_id, stream)
        out.base.clear()
        itemsize = dtype.itemsize
        for k in range(max((len(regions) for _, _, regions in plans), default=0)):
            segments = []
            for (_, _, regions), out_shape, out_offset in zip(plans, out_shapes, out.offsets, strict=True):
                if k >= len(regions):
                    continue
                source, sample, iy, ix, h, w, oy, ox = regions[k]
                piece = shapes[source][sample]
                in_strides, out_strides = c_strides(piece), c_strides(out_shape)
                if h * w * piece[2] == 0:
                    continue
                in_at = sources[source].offsets[sample] + iy * in_strides[0] + ix * in_strides[1]
                out_at = out_offset + oy * out_strides[0] + ox * out_strides[1]
                segments.append(
                    Segment(
                        sources[source].ptr + in_at * itemsize,
                        out.base.ptr + out_at * itemsize,
                        (h, w, piece[2]),
                        in_strides,
                        out_strides,
                        source,
                    )
                )
            if segments:
                strided_copy(
                    self.op, segments, itemsize, out.base.ptr, [s.ptr for s in sources], stream, device_id
                )
        return [out.result]


class GpuRearrange:
    """The GPU kernel of ``sequence_rearrange``: every output frame of every sample a
    segment of one strided-copy launch. ``order(args, shape)`` is the CPU's check and
    the sample's frame order."""

    def __init__(self, op, order):
        self.op = op
        self.order = order

    def check(self, ins, args):
        require_gpu_input(self.op, ins[0])

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        orders = [
            self.order(a, shape)
            for a, shape in zip(args_per_sample(args, batch_size), source.shapes, strict=True)
        ]
        out_shapes = [(len(order), *shape[1:]) for order, shape in zip(orders, source.shapes, strict=True)]
        out = SampleOutputs(out_shapes, source.dtype, batch_size >= 0, device_id, stream)
        itemsize = source.dtype.itemsize
        segments = []
        for order, shape, in_offset, out_offset in zip(
            orders, source.shapes, source.offsets, out.offsets, strict=True
        ):
            frame = math.prod(shape[1:])
            if frame == 0:
                continue
            for j, index in enumerate(order):
                segments.append(
                    Segment(
                        source.ptr + (in_offset + index * frame) * itemsize,
                        out.base.ptr + (out_offset + j * frame) * itemsize,
                        (frame,),
                        (1,),
                        (1,),
                    )
                )
        if segments:
            strided_copy(self.op, segments, itemsize, out.base.ptr, [source.ptr], stream, device_id)
        return [out.result]
