"""GPU kernels of the reductions (``ndd.reductions``): sum, mean, mean_square, rms,
min, max, std_dev and variance, with ``kernels/reduce.cu``.

They follow the GPU operator contract of ``schema.Operator`` and compute what the
CPU kernels of ``reductions.py`` compute, in the same output type and shape:

* float results are float64 sums, divided and rooted in float64 and rounded to
  float32 once, as on the CPU. Only the order of the additions differs (each
  thread adds a strided part, then a tree across threads and chunks), so a result
  may differ from the CPU's by the float64 rounding of the sum before the float32
  rounding: at most one float32 ulp, unless the sum cancels to almost nothing;
* integer sums wrap around in 64 bits, and integer means, mean squares and rms are
  exact (192-bit sums, quotients rounded toward zero, saturated), so integer
  results and min/max equal the CPU's bit for bit.

A whole batch is one launch (two for long reductions: chunk accumulators, then
their combination), every sample described by a row of a small int64 array
uploaded beside the data (``_descriptors``): its offsets, its output and reduced
element counts, and its kept and reduced dimensions as (extent, stride) lists
after dropping extent-1 dimensions and merging neighbours.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import functools
import itertools
import math

import numpy as np

from .._types import DType
from .gpu_types import suffixes

__all__ = ["GpuReduction", "spread_over_nothing"]

MODULE = "reduce"
# Threads per block of every launch.
BLOCK = 256
# The most blocks of a launch (the kernel loops over the units beyond).
MAX_BLOCKS = 65535
# Threads a launch aims for: a reduction is cut into chunks until it has about as many.
TARGET_THREADS = 1 << 16
# Elements each thread reduces at least, per chunk.
MIN_ELEMENTS_PER_THREAD = 16
# The most chunks of one output element (what the second stage combines).
MAX_CHUNKS = 4096
# The descriptor row of kernels/reduce.cu: D_DIMS header words, then kept extents,
# kept strides, reduced extents and reduced strides of MAX_DIMS each.
MAX_DIMS = 8
_D_DIMS = 10
DESC_WORDS = _D_DIMS + 4 * MAX_DIMS
(_D_IN, _D_MEAN, _D_OUT, _D_NOUT, _D_NRED, _D_CHUNKS, _D_UNIT_START, _D_COUNT, _D_NKEPT, _D_NREDDIMS) = range(
    10
)

# numpy dtype -> the type suffix of the kernels.
KERNEL_TYPES = suffixes(
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float32
)

# Finishing modes of the kernels: the accumulator itself, divided by (count - ddof),
# or the square root of that.
_TOTAL, _DIVIDED, _ROOT = 0, 1, 2
# operator name -> (element of the float kernels, mode, element of the exact integer kernels)
_KINDS = {
    "sum": ("plain", _TOTAL, None),
    "mean": ("plain", _DIVIDED, "plain"),
    "mean_square": ("square", _DIVIDED, "square"),
    "rms": ("square", _ROOT, "square"),
    "variance": ("deviation", _DIVIDED, None),
    "std_dev": ("deviation", _ROOT, None),
    "min": (None, _TOTAL, None),
    "max": (None, _TOTAL, None),
}


def spread_over_nothing(axes):
    """Whether a variance or std_dev is asked over no axes (an empty ``axes`` or
    ``axis_names``; not a 0-D input, whose "all axes" are none): it is then 0 whatever
    the mean and ``ddof``, as in the reference."""
    return axes is not None and len(axes) == 0


@functools.cache
def _cuda():
    """The GPU runtime modules (imported on first GPU use, never by ``import ndd``)."""
    from .._cuda import device_array, modules

    return device_array, modules


class _Part:
    """One sample's row of a launch's descriptors: where its input, mean and output
    start (elements), its output and reduced element counts, the count a mean
    divides by, and its kept and reduced dimensions as (extent, stride) lists."""

    __slots__ = (
        "in_offset",
        "mean_offset",
        "out_offset",
        "outputs",
        "reduced",
        "count",
        "kept_dims",
        "reduced_dims",
    )

    def __init__(self, in_offset, mean_offset, out_offset, outputs, reduced, count, kept_dims, reduced_dims):
        self.in_offset = in_offset
        self.mean_offset = mean_offset
        self.out_offset = out_offset
        self.outputs = outputs
        self.reduced = reduced
        self.count = count
        self.kept_dims = kept_dims
        self.reduced_dims = reduced_dims


def _dims(shape, axes):
    """``(kept, reduced)``: lists of (extent, element stride) of a C-contiguous array
    of ``shape``, without extent-1 dimensions, neighbours of one kind merged."""
    kept, reduced = [], []
    stride = 1
    previous = None
    for d in range(len(shape) - 1, -1, -1):
        extent = shape[d]
        if extent != 1:
            group = reduced if d in axes else kept
            if previous is group:
                inner_extent, inner_stride = group[-1]
                group[-1] = (inner_extent * extent, inner_stride)
            else:
                group.append((extent, stride))
            previous = group
        stride *= extent
    return kept[::-1], reduced[::-1]


def _pow2_at_least(n):
    return 1 << max(0, (n - 1).bit_length())


class GpuReduction:
    """The GPU kernel of reduction ``op`` (its name is one of ``_KINDS``).

    ``reduced_axes(axes, ndim)`` gives the sorted axes to reduce (the CPU's rule),
    ``output_type(dtype, requested)`` the output DType (None for min, max and the
    spread operators, whose output types are the input's and float32).
    """

    def __init__(self, op, reduced_axes, output_type=None):
        self.op = op
        self.kind = op.name
        self.reduced_axes = reduced_axes
        self.output_type = output_type

    def _unsupported(self, what):
        return NotImplementedError(f"{self.op.qualname} on the GPU: {what}; the GPU implementation lacks it")

    def check(self, ins, args):
        """Prepare phase: the inputs must be on the GPU (metadata only)."""
        for name, x in zip(self.op.input_names, ins, strict=True):
            if x._device.device_type != "gpu":
                raise self._unsupported(
                    f"input {name!r} in host memory; move it to the GPU with .gpu() first"
                )

    # -- types and kernels -----------------------------------------------------------

    def _out_dtype(self, in_dtype, args):
        if self.kind in ("min", "max"):
            return in_dtype
        if self.kind in ("variance", "std_dev"):
            return np.dtype(np.float32)
        dtype = self.output_type(DType.from_fw_type(in_dtype), args.get("dtype"))
        return np.dtype(dtype.numpy)

    def _kernel(self, in_dtype, out_dtype):
        """``(kernel name, mode, accumulator dtype, accumulator words of that dtype)``."""
        float_element, mode, exact_element = _KINDS[self.kind]
        tin = KERNEL_TYPES[in_dtype]
        if self.kind in ("min", "max"):
            return f"reduce_{self.kind}_{tin}", mode, in_dtype, 1
        if out_dtype.kind == "f":
            return f"reduce_float_{float_element}_{tin}", mode, np.dtype(np.float64), 1
        tout = KERNEL_TYPES[out_dtype]
        if self.kind == "sum":
            return f"reduce_wrap_{tin}_{tout}", mode, np.dtype(np.uint64), 1
        # The exact kernels' accumulators are 192-bit integers.
        return f"reduce_exact_{exact_element}_{tin}_{tout}", mode, np.dtype(np.uint64), 3

    # -- the run phase -----------------------------------------------------------

    def __call__(self, inputs, args, batch_size, ctx):
        device_array, _ = _cuda()
        for name, x in zip(self.op.input_names, inputs, strict=True):
            if not isinstance(x, (device_array.DeviceArray, device_array.DeviceBatch)):
                raise self._unsupported(
                    f"input {name!r} in host memory; move it to the GPU with .gpu() first"
                )
        data = inputs[0]
        mean = inputs[1] if len(inputs) > 1 else None
        stream = ctx.cuda_stream
        device_id = ctx.device_id
        out_dtype = self._out_dtype(data.dtype, args)
        # A Tensor beside a Batch (data or mean) serves every sample.
        count = max(len(x) if isinstance(x, device_array.DeviceBatch) else 1 for x in inputs)
        shapes = [self._sample(data, i)[1] for i in range(count)]
        axes = [self.reduced_axes(args["_axes"], len(shape)) for shape in shapes]
        out_shapes = [
            tuple(1 if d in a else n for d, n in enumerate(shape))
            if args["keep_dims"]
            else tuple(n for d, n in enumerate(shape) if d not in a)
            for shape, a in zip(shapes, axes, strict=True)
        ]
        if batch_size < 0:
            out = device_array.DeviceArray.empty(out_shapes[0], out_dtype, device_id, stream)
            out_offsets = [0]
        else:
            dense = len(set(out_shapes)) <= 1
            byte_offsets, total = device_array.DeviceBatch.layout(out_shapes, out_dtype.itemsize, dense)
            out = device_array.DeviceArray.empty((total,), np.uint8, device_id, stream)
            out_offsets = [o // out_dtype.itemsize for o in byte_offsets]
        parts = [
            self._part(
                self._sample(data, i)[0],
                0 if mean is None else self._sample(mean, i)[0],
                out_offsets[i],
                shapes[i],
                axes[i],
            )
            for i in range(count)
        ]
        if mean is not None and spread_over_nothing(args["_axes"]):
            out.clear()
        else:
            self._reduce(
                parts,
                self._base(data),
                None if mean is None else self._base(mean),
                out,
                data.dtype,
                out_dtype,
                int(args.get("ddof") or 0),
                stream,
                device_id,
            )
        if batch_size < 0:
            return [out]
        byte_offsets = [o * out_dtype.itemsize for o in out_offsets]
        return [device_array.DeviceBatch(out, byte_offsets, out_shapes, out_dtype, dense)]

    @staticmethod
    def _sample(x, i):
        """``(element offset, shape)`` of sample ``i`` of a DeviceBatch; a DeviceArray
        is every sample."""
        if isinstance(x, _cuda()[0].DeviceBatch):
            return x.offsets[i] // x.dtype.itemsize, tuple(x.shapes[i])
        return 0, tuple(x.shape)

    @staticmethod
    def _base(x):
        """The array the element offsets of ``_sample`` count from."""
        return x.data if isinstance(x, _cuda()[0].DeviceBatch) else x

    def _part(self, in_offset, mean_offset, out_offset, shape, axes):
        outputs = math.prod(n for d, n in enumerate(shape) if d not in axes)
        reduced = math.prod(shape[d] for d in axes)
        kept_dims, reduced_dims = _dims(shape, axes) if outputs and reduced else ([], [])
        if len(kept_dims) > MAX_DIMS or len(reduced_dims) > MAX_DIMS:
            raise self._unsupported(
                f"a sample of shape {shape} reduced over axes {list(axes)} "
                f"(more than {MAX_DIMS} separate groups of kept or of reduced dimensions)"
            )
        return _Part(in_offset, mean_offset, out_offset, outputs, reduced, reduced, kept_dims, reduced_dims)

    def _reduce(self, parts, data, mean, out, in_dtype, out_dtype, ddof, stream, device_id):
        name, mode, acc_dtype, acc_words = self._kernel(in_dtype, out_dtype)
        place = (stream, device_id)
        if sum(p.outputs for p in parts) == 0:
            return
        longest = max(p.reduced for p in parts)
        # Lanes read neighbouring elements when the innermost dimension is reduced:
        # a group of threads then shares each output; otherwise a thread has an
        # output to itself and neighbouring threads read neighbouring outputs.
        innermost_reduced = any(p.reduced_dims and p.reduced_dims[-1][1] == 1 for p in parts)
        group = min(32, _pow2_at_least(longest)) if innermost_reduced else 1
        work = sum(p.outputs * max(p.reduced, 1) for p in parts)
        chunk_len = max(
            MIN_ELEMENTS_PER_THREAD * group, -(-work * group // TARGET_THREADS), -(-longest // MAX_CHUNKS)
        )
        chunks = [max(1, -(-p.reduced // chunk_len)) for p in parts]
        mean_ptr = 0 if mean is None else mean.ptr
        if max(chunks) == 1:
            self._launch(
                name, data.ptr, mean_ptr, out.ptr, parts, chunks, chunk_len, group, 0, mode, ddof, place
            )
            return
        # Two stages: the accumulator of each chunk, output-major (the chunks of an
        # output side by side); then their combination, which reads them as a
        # sample of shape (outputs, chunks) whose elements are accumulators.
        *starts, total = itertools.accumulate(
            (p.outputs * c for p, c in zip(parts, chunks, strict=True)), initial=0
        )
        partial = _cuda()[0].DeviceArray.empty((total * acc_words,), acc_dtype, device_id, stream)
        stage1 = [
            _Part(
                p.in_offset, p.mean_offset, start, p.outputs, p.reduced, p.count, p.kept_dims, p.reduced_dims
            )
            for p, start in zip(parts, starts, strict=True)
        ]
        self._launch(
            name, data.ptr, mean_ptr, partial.ptr, stage1, chunks, chunk_len, group, 1, mode, ddof, place
        )
        stage2 = [
            _Part(start, 0, p.out_offset, p.outputs, c, p.count, [(p.outputs, c)], [(c, 1)])
            for p, c, start in zip(parts, chunks, starts, strict=True)
        ]
        group = min(32, _pow2_at_least(max(chunks)))
        self._launch(
            name, partial.ptr, 0, out.ptr, stage2, [1] * len(parts), max(chunks), group, 2, mode, ddof, place
        )

    @staticmethod
    def _descriptors(parts, chunks):
        """The int64 descriptor rows of one launch (the layout of kernels/reduce.cu)
        and the launch's unit count."""
        desc = np.zeros((len(parts), DESC_WORDS), np.int64)
        unit = 0
        for row, part, part_chunks in zip(desc, parts, chunks, strict=True):
            row[:_D_DIMS] = [
                part.in_offset,
                part.mean_offset,
                part.out_offset,
                part.outputs,
                part.reduced,
                part_chunks,
                unit,
                part.count,
                len(part.kept_dims),
                len(part.reduced_dims),
            ]
            for k, (extent, stride) in enumerate(part.kept_dims):
                row[_D_DIMS + k] = extent
                row[_D_DIMS + MAX_DIMS + k] = stride
            for k, (extent, stride) in enumerate(part.reduced_dims):
                row[_D_DIMS + 2 * MAX_DIMS + k] = extent
                row[_D_DIMS + 3 * MAX_DIMS + k] = stride
            unit += part.outputs * part_chunks
        return desc, unit

    def _launch(
        self, name, in_ptr, mean_ptr, out_ptr, parts, chunks, chunk_len, group, stage, mode, ddof, place
    ):
        """Queue one launch of kernel ``name`` over ``parts`` on ``place``, a (stream,
        device id) pair (nothing when the parts have no units)."""
        device_array, modules = _cuda()
        stream, device_id = place
        rows, units = self._descriptors(parts, chunks)
        if units == 0:
            return
        table = device_array.DeviceArray.from_host(rows, device_id, stream)
        grid = min(MAX_BLOCKS, -(-units // (BLOCK // group)))
        kernel = modules.get_function(device_id, MODULE, name)
        kernel.launch(
            grid,
            BLOCK,
            stream.handle,
            in_ptr,
            mean_ptr,
            out_ptr,
            table.ptr,
            len(rows),
            units,
            chunk_len,
            group,
            stage,
            mode,
            ddof,
        )
