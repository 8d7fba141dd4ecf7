"""``ndd.dump_image``: a debugging aid that writes images to the working directory.

Each sample is written as a plain-text PPM (``P3``, 3 channels) or PGM (``P2``,
1 channel) named ``<sample index>-<suffix>-0.ppm``, as the reference names them
(sample mode writes index 0), and the input passes through unchanged. The files
are written when the operator runs, which in eager mode is after the call returns.

On the GPU (``device="gpu"``) the samples are copied to the host to be written, as
the reference does, and the output is the input itself: nothing is copied on the
device.
"""

import numpy as np

from .._prepare.args import InvalidArgumentError
from .._types import uint8
from .schema import Arg, Input, Operator, batch_samples_of


def _prepare(ins, args):
    op = DUMP_IMAGE
    if args["input_layout"] != "HWC":
        raise InvalidArgumentError(
            f"{op.qualname}: 'input_layout' must be 'HWC', got {args['input_layout']!r}"
        )
    if ins[0]._dtype is not uint8:
        raise InvalidArgumentError(f"{op.qualname}: the input must be uint8, got {ins[0]._dtype}")
    if ins[0].ndim != 3:
        raise InvalidArgumentError(f"{op.qualname}: expected HWC images (3 dimensions), got {ins[0].ndim}")


def _shape(shapes, args):
    channels = shapes[0][2]
    if channels not in (1, 3):
        raise InvalidArgumentError(f"ndd.dump_image: expected 1 or 3 channels, got {channels}")
    return [shapes[0]]


def _write(index, arr, suffix):
    height, width, channels = arr.shape
    magic = "P3" if channels == 3 else "P2"
    rows = arr.reshape(height, width * channels)
    lines = [f"{magic}\n{width} {height}\n255\n"]
    lines += ["".join(f"{v} " for v in row.tolist()) + "\n" for row in rows]
    with open(f"{index}-{suffix}-0.ppm", "w", encoding="utf-8") as f:
        f.write("".join(lines))


def _kernel(arrays, args):
    _write(0, arrays[0], args["suffix"])
    return arrays[0]


def _batch_kernel(inputs, sample_args, batch_size, ctx):
    samples = batch_samples_of(inputs[0], batch_size)
    for i in range(batch_size):
        _write(i, np.asarray(samples[i]), sample_args[i]["suffix"])
    return [list(samples)]


class _GpuDumpImage:
    """The GPU kernel: the samples copied to the host (one copy of the batch's
    allocation), each written as on the CPU, and the input passed through."""

    def check(self, ins, args):
        from .gpu_segments import require_gpu_input

        require_gpu_input(DUMP_IMAGE, ins[0])

    def __call__(self, inputs, args, batch_size, ctx):
        from .gpu_segments import args_per_sample, cuda

        data = inputs[0]
        device_array = cuda()[0]
        if batch_size < 0:
            _write(0, data.to_host(), args["suffix"])
            return [data]
        if isinstance(data, device_array.DeviceBatch):
            samples, dense = data.to_host()
            samples = list(dense) if samples is None else samples
        else:
            # A Tensor given in batch mode is every sample.
            samples = [data.to_host()] * batch_size
        for i, sample_args in enumerate(args_per_sample(args, batch_size)):
            _write(i, samples[i], sample_args["suffix"])
        return [data]


DUMP_IMAGE = Operator(
    "dump_image",
    inputs=[Input("input", doc="uint8 HWC images with 1 or 3 channels.")],
    args=[
        Arg("input_layout", "layout", "HWC", doc="Layout of the images; only 'HWC' is supported."),
        Arg("suffix", "str", "", doc="Added to the file names: ``<index>-<suffix>-0.ppm``."),
    ],
    prepare_args=_prepare,
    infer_shape=_shape,
    kernel=_kernel,
    batch_kernel=_batch_kernel,
    gpu_kernel=_GpuDumpImage(),
    doc="Write each image to the working directory as a text PPM/PGM file and pass the input through.",
)

OPERATORS = [DUMP_IMAGE]
