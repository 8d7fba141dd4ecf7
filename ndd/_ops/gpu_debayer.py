"""GPU kernel of ``ndd.debayer``, queued on ``kernels/debayer.cu``.

The operator's own module (``ndd/_ops/debayer.py``) settles everything but the pass
over the pixels: the algorithm and whether the samples are sequences (its prepare
phase), each sample's output shape (its shape rule, which also checks the sizes) and
the check of a per-sample ``blue_position``. The kernel then demosaics as the CPU's
numpy code does, in the same integer arithmetic, so that the results are equal:
``bilinear_ocv``, ``edgeaware_ocv`` and ``gray_ocv``. ``vng_ocv`` is OpenCV's own code
on the CPU and is refused on the GPU.

A batch is one launch: one descriptor row per sample (its offsets, frames, height,
width, blue position and algorithm), a thread per output pixel. Every supported
layout (HW, HWC, FHW, FHWC, one channel) is a stack of contiguous planes, so the row
needs no strides.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import numpy as np

from .gpu_segments import (
    GpuSamples,
    SampleOutputs,
    args_per_sample,
    launch_segments,
    require_gpu_input_of,
    unsupported,
)
from .gpu_types import suffixes

__all__ = ["GpuDebayer"]

MODULE = "debayer"
BLOCK = 256
TYPES = suffixes(np.uint8, np.uint16)
# DEBAYER_ROW and the algorithms of kernels/debayer.cu.
_ROW = 8
_ALGORITHMS = {"bilinear_ocv": 0, "edgeaware_ocv": 1, "gray_ocv": 2}


class GpuDebayer:
    """The GPU kernel of ``debayer``: ``debayer_<type>`` over every sample in one launch.
    ``out_shape(shapes, args)`` gives a sample's output shape from its input shape (the
    CPU's shape rule), ``check_blue_position(position)`` checks a sample's pattern and
    gives it as ``(y, x)``."""

    def __init__(self, op, out_shape, check_blue_position):
        self.op = op
        self.out_shape = out_shape
        self.check_blue_position = check_blue_position

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type with a kernel, an algorithm the kernel has."""
        require_gpu_input_of(self.op, ins[0], TYPES)
        if args["_algorithm"] not in _ALGORITHMS:
            raise unsupported(
                self.op,
                f"'algorithm' {args['_algorithm']!r} (OpenCV's code, on the CPU only; the GPU has "
                f"{', '.join(_ALGORITHMS)})",
            )

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        sample_args = args_per_sample(args, batch_size)
        out_shapes = [
            tuple(self.out_shape((shape,), a)[0]) for shape, a in zip(source.shapes, sample_args, strict=True)
        ]
        out = SampleOutputs(out_shapes, np.dtype(source.dtype), batch_size >= 0, device_id, stream)
        rows, most = [], 0
        for shape, a, in_offset, out_offset in zip(
            source.shapes, sample_args, source.offsets, out.offsets, strict=True
        ):
            position = self.check_blue_position(a["blue_position"])
            frames, height, width = (shape[0], *shape[1:3]) if a["_frames"] else (1, *shape[:2])
            pixels = frames * height * width
            rows += [
                in_offset,
                out_offset,
                pixels,
                height,
                width,
                *(int(v) for v in position),
                _ALGORITHMS[a["_algorithm"]],
            ]
            most = max(most, pixels)
        launch_segments(
            device_id,
            MODULE,
            f"debayer_{TYPES[source.dtype]}",
            BLOCK,
            stream,
            rows,
            _ROW,
            most,
            (source.ptr, out.base.ptr),
        )
        return [out.result]
