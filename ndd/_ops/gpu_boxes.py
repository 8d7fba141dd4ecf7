"""GPU kernels of the box and point operators ``bb_flip``, ``box_encoder``,
``coord_flip`` and ``coord_transform``, queued on ``kernels/boxes.cu``.

``bb_flip`` is one launch per batch over every box. ``box_encoder`` runs one block
per sample: each anchor finds its best box, each box claims its best anchor
(a block-wide reduction per box, in box order, so that later boxes win an anchor
claimed twice, as on the CPU), then every anchor is encoded. The anchors are
uploaded once per call and shared by the samples; the per-anchor matching state
lives in a scratch allocation from the pool.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import numpy as np

from .gpu_segments import (
    GpuSamples,
    SampleOutputs,
    args_per_sample,
    cuda,
    launch_segments,
    require_gpu_input_of,
)
from .gpu_types import suffixes

__all__ = ["COORD_TYPES", "GpuBbFlip", "GpuBoxEncoder", "GpuCoordFlip", "GpuCoordTransform", "MODULE"]

MODULE = "boxes"
BLOCK = 256
# BB_FLIP_ROW, BOX_ENCODER_ROW and BOX_ENCODER_THREADS of kernels/boxes.cu.
_BB_FLIP_ROW = 6
_BOX_ENCODER_ROW = 6
_BOX_ENCODER_THREADS = 256
_F32 = np.dtype(np.float32)
_I32 = np.dtype(np.int32)


def _require(op, x, dtype, what):
    require_gpu_input_of(op, x, (dtype,), what)


class GpuBbFlip:
    """The GPU kernel of ``bb_flip``: every box of every sample in one launch."""

    def __init__(self, op):
        self.op = op

    def check(self, ins, args):
        _require(self.op, ins[0], _F32, "boxes")

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        sample_args = args_per_sample(args, batch_size)
        out = SampleOutputs(source.shapes, _F32, batch_size >= 0, device_id, stream)
        rows, most = [], 0
        for shape, a, in_offset, out_offset in zip(
            source.shapes, sample_args, source.offsets, out.offsets, strict=True
        ):
            count = int(np.prod(shape)) // 4
            rows += [in_offset, out_offset, count, int(a["horizontal"] != 0), int(a["vertical"] != 0)]
            rows.append(int(bool(args["ltrb"])))
            most = max(most, count)
        launch_segments(
            device_id, MODULE, "bb_flip", BLOCK, stream, rows, _BB_FLIP_ROW, most, (source.ptr, out.base.ptr)
        )
        return [out.result]


class GpuBoxEncoder:
    """The GPU kernel of ``box_encoder``: one block per sample (see the module docstring)."""

    def __init__(self, op):
        self.op = op

    def check(self, ins, args):
        _require(self.op, ins[0], _F32, "boxes (input_0)")
        _require(self.op, ins[1], _I32, "labels (input_1)")

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        boxes = GpuSamples(inputs[0], batch_size)
        labels = GpuSamples(inputs[1], batch_size)
        anchors = np.ascontiguousarray(args["_anchors"], np.float32)
        count = len(anchors)
        samples = len(boxes.shapes)
        encoded = SampleOutputs([(count, 4)] * samples, _F32, batch_size >= 0, device_id, stream)
        out_labels = SampleOutputs([(count,)] * samples, _I32, batch_size >= 0, device_id, stream)
        if samples == 0:
            return [encoded.result, out_labels.result]
        scratch = max(samples * count, 1)
        best_iou = device_array.DeviceArray.empty((scratch,), _F32, device_id, stream)
        best_box = device_array.DeviceArray.empty((scratch,), _I32, device_id, stream)
        matches = device_array.DeviceArray.empty((scratch,), _I32, device_id, stream)
        table = device_array.DeviceArray.from_host(anchors.reshape(-1), device_id, stream)
        params = np.array(
            [args["criteria"], float(bool(args["offset"])), args["scale"], *args["means"], *args["stds"]],
            np.float32,
        )
        device_params = device_array.DeviceArray.from_host(params, device_id, stream)
        rows = []
        for i, (shape, box_offset, label_offset) in enumerate(
            zip(boxes.shapes, boxes.offsets, labels.offsets, strict=True)
        ):
            rows += [box_offset, label_offset, shape[0], encoded.offsets[i], out_labels.offsets[i], i * count]
        launch_segments(
            device_id,
            MODULE,
            "box_encoder",
            _BOX_ENCODER_THREADS,
            stream,
            rows,
            _BOX_ENCODER_ROW,
            1,
            (
                boxes.ptr,
                labels.ptr,
                table.ptr,
                count,
                encoded.base.ptr,
                out_labels.base.ptr,
                best_iou.ptr,
                best_box.ptr,
                matches.ptr,
            ),
            (device_params.ptr,),
        )
        return [encoded.result, out_labels.result]


_COORD_FLIP_ROW = 10


class GpuCoordFlip:
    """The GPU kernel of ``coord_flip``: every coordinate of every sample in one
    launch. ``flips(args, dims)`` gives, per coordinate of a point, whether it flips
    and its mirror ``2 * center`` (float32), as on the CPU."""

    def __init__(self, op, flips):
        self.op = op
        self.flips = flips

    def check(self, ins, args):
        _require(self.op, ins[0], _F32, "points")

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        sample_args = args_per_sample(args, batch_size)
        out = SampleOutputs(source.shapes, _F32, batch_size >= 0, device_id, stream)
        rows, most = [], 0
        for shape, a, in_offset, out_offset in zip(
            source.shapes, sample_args, source.offsets, out.offsets, strict=True
        ):
            points, dims = shape
            row = [in_offset, out_offset, points, dims]
            for flip, mirror in self.flips(a, dims):
                row += [int(flip), int(np.float32(mirror).view(np.int32))]
            rows += row + [0, 0] * (3 - dims)
            most = max(most, points * dims)
        launch_segments(
            device_id,
            MODULE,
            "coord_flip",
            BLOCK,
            stream,
            rows,
            _COORD_FLIP_ROW,
            most,
            (source.ptr, out.base.ptr),
        )
        return [out.result]


_COORD_TRANSFORM_ROW = 6
COORD_TYPES = suffixes(np.uint8, np.int16, np.uint16, np.int32, np.float32)


class GpuCoordTransform:
    """The GPU kernel of ``coord_transform``: every output component of every point
    of every sample in one launch. ``plan(args, n)`` is the CPU's (M, T) of a sample
    of n-component points (float32)."""

    def __init__(self, op, plan):
        self.op = op
        self.plan = plan

    def check(self, ins, args):
        require_gpu_input_of(self.op, ins[0], COORD_TYPES)

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        sample_args = args_per_sample(args, batch_size)
        target = np.dtype(args["dtype"].numpy)
        plans = [self.plan(a, shape[-1]) for a, shape in zip(sample_args, source.shapes, strict=True)]
        out_shapes = [(*shape[:-1], m.shape[0]) for shape, (m, _) in zip(source.shapes, plans, strict=True)]
        out = SampleOutputs(out_shapes, target, batch_size >= 0, device_id, stream)
        rows, tables, at, most = [], [], 0, 0
        for shape, (m, t), in_offset, out_offset in zip(
            source.shapes, plans, source.offsets, out.offsets, strict=True
        ):
            points = int(np.prod(shape[:-1]))
            rows += [in_offset, out_offset, points, shape[-1], m.shape[0], at]
            tables.append(np.concatenate([np.asarray(m, np.float32).reshape(-1), np.asarray(t, np.float32)]))
            at += tables[-1].size
            most = max(most, points * m.shape[0])
        if most:
            table = device_array.DeviceArray.from_host(np.concatenate(tables), device_id, stream)
            launch_segments(
                device_id,
                MODULE,
                f"coord_transform_{COORD_TYPES[source.dtype]}_to_{COORD_TYPES[target]}",
                BLOCK,
                stream,
                rows,
                _COORD_TRANSFORM_ROW,
                most,
                (source.ptr, out.base.ptr),
                (table.ptr,),
            )
        return [out.result]
