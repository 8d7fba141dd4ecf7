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
import math

import numpy as np

from .._types import DType

__all__ = ["GpuReduction"]

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
KERNEL_TYPES = {
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "u8",
    np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64",
    np.dtype(np.float32): "f32",
}

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


@functools.cache
def _cuda():
    """The GPU runtime modules (imported on first GPU use, never by ``import ndd``)."""
    from .._cuda import device_array, modules

    return device_array, modules


class _Sample:
    """One sample's part of a launch: where its data and mean start (elements), its
    shape and its reduced axes."""

    __slots__ = ("in_offset", "mean_offset", "shape", "axes")

    def __init__(self, in_offset, mean_offset, shape, axes):
        self.in_offset = in_offset
        self.mean_offset = mean_offset
        self.shape = shape
        self.axes = axes


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
        """``(kernel name, mode, accumulator dtype)``."""
        float_element, mode, exact_element = _KINDS[self.kind]
        tin = KERNEL_TYPES[in_dtype]
        if self.kind in ("min", "max"):
            return f"reduce_{self.kind}_{tin}", mode, in_dtype
        if out_dtype.kind == "f":
            return f"reduce_float_{float_element}_{tin}", mode, np.dtype(np.float64)
        tout = KERNEL_TYPES[out_dtype]
        if self.kind == "sum":
            return f"reduce_wrap_{tin}_{tout}", mode, np.dtype(np.uint64)
        # The exact kernels' accumulators are three 64-bit words.
        return f"reduce_exact_{exact_element}_{tin}_{tout}", mode, np.dtype((np.uint64, 3))

    # -- the run phase -----------------------------------------------------------

    def __call__(self, inputs, args, batch_size, ctx):
        device_array, _ = _cuda()
        data = inputs[0]
        mean = inputs[1] if len(inputs) > 1 else None
        for name, x in zip(self.op.input_names, inputs, strict=True):
            if not isinstance(x, (device_array.DeviceArray, device_array.DeviceBatch)):
                raise self._unsupported(
                    f"input {name!r} in host memory; move it to the GPU with .gpu() first"
                )
        stream = ctx.cuda_stream
        device_id = ctx.device_id
        in_dtype = data.dtype
        out_dtype = self._out_dtype(in_dtype, args)
        count = len(data) if isinstance(data, device_array.DeviceBatch) else 1
        if mean is not None and isinstance(mean, device_array.DeviceBatch):
            count = len(mean)
        samples = []
        out_shapes = []
        for i in range(count):
            in_offset, shape = self._part(data, i)
            mean_offset = self._part(mean, i)[0] if mean is not None else 0
            axes = self.reduced_axes(args["_axes"], len(shape))
            samples.append(_Sample(in_offset, mean_offset, shape, axes))
            kept = tuple(1 if d in axes else n for d, n in enumerate(shape))
            out_shapes.append(
                kept if args["keep_dims"] else tuple(n for d, n in enumerate(shape) if d not in axes)
            )
        if batch_size < 0:
            out = device_array.DeviceArray.empty(out_shapes[0], out_dtype, device_id, stream)
            out_offsets = [0]
        else:
            dense = len(set(out_shapes)) <= 1
            byte_offsets, total = device_array.DeviceBatch.layout(out_shapes, out_dtype.itemsize, dense)
            out = device_array.DeviceArray.empty((total,), np.uint8, device_id, stream)
            out_offsets = [o // out_dtype.itemsize for o in byte_offsets]
        in_base = data.data if isinstance(data, device_array.DeviceBatch) else data
        mean_base = (
            None if mean is None else (mean.data if isinstance(mean, device_array.DeviceBatch) else mean)
        )
        self._reduce(
            samples, in_base, mean_base, out, out_offsets, in_dtype, out_dtype, args, stream, device_id
        )
        if batch_size < 0:
            return [out]
        return [
            device_array.DeviceBatch(
                out, [o * out_dtype.itemsize for o in out_offsets], out_shapes, out_dtype, dense
            )
        ]

    @staticmethod
    def _part(x, i):
        """``(element offset, shape)`` of sample ``i`` of a DeviceBatch; a DeviceArray
        is every sample."""
        if hasattr(x, "offsets"):
            return x.offsets[i] // x.dtype.itemsize, tuple(x.shapes[i])
        return 0, tuple(x.shape)

    def _reduce(self, samples, data, mean, out, out_offsets, in_dtype, out_dtype, args, stream, device_id):
        name, mode, acc_dtype = self._kernel(in_dtype, out_dtype)
        ddof = int(args.get("ddof") or 0)
        shapes = [self._sample_dims(s) for s in samples]
        outputs = [n_out for n_out, _, _, _ in shapes]
        reduced = [n_red for _, n_red, _, _ in shapes]
        if sum(outputs) == 0:
            return
        # Lanes read neighbouring elements when the innermost dimension is reduced:
        # a group of threads shares each output; otherwise a thread has an output to itself.
        innermost_reduced = any(red and red[-1][1] == 1 for _, _, _, red in shapes)
        group = min(32, _pow2_at_least(max(reduced))) if innermost_reduced else 1
        work = sum(o * max(r, 1) for o, r in zip(outputs, reduced, strict=True))
        chunk_len = max(
            MIN_ELEMENTS_PER_THREAD * group,
            -(-work * group // TARGET_THREADS),
            -(-max(reduced) // MAX_CHUNKS),
        )
        chunks = [max(1, -(-r // chunk_len)) for r in reduced]
        mean_ptr = 0 if mean is None else mean.ptr
        if max(chunks) == 1:
            desc = self._descriptors(samples, shapes, chunks, out_offsets)
            self._launch(
                name, data.ptr, mean_ptr, out.ptr, desc, chunk_len, group, 0, mode, ddof, stream, device_id
            )
            return
        # Two stages: each chunk's accumulator, then their combination per output.
        units = [o * c for o, c in zip(outputs, chunks, strict=True)]
        starts = np.cumsum([0] + units[:-1]).tolist()
        partial = _cuda()[0].DeviceArray.empty((sum(units),), acc_dtype, device_id, stream)
        desc = self._descriptors(samples, shapes, chunks, starts)
        self._launch(
            name, data.ptr, mean_ptr, partial.ptr, desc, chunk_len, group, 1, mode, ddof, stream, device_id
        )
        combine = [_Sample(start, 0, None, None) for start in starts]
        combine_shapes = [
            (o, c, [(o, c)] if o > 1 else [], [(c, 1)] if c > 1 else [])
            for o, c in zip(outputs, chunks, strict=True)
        ]
        desc = self._descriptors(combine, combine_shapes, [1] * len(samples), out_offsets, counts=reduced)
        group = min(32, _pow2_at_least(max(chunks)))
        self._launch(
            name, partial.ptr, 0, out.ptr, desc, max(chunks), group, 2, mode, ddof, stream, device_id
        )

    def _sample_dims(self, sample):
        """``(outputs, reduced elements, kept dims, reduced dims)`` of a sample."""
        shape, axes = sample.shape, sample.axes
        n_out = math.prod(n for d, n in enumerate(shape) if d not in axes)
        n_red = math.prod(shape[d] for d in axes)
        if n_out == 0 or n_red == 0:
            return n_out, n_red, [], []
        kept, reduced = _dims(shape, axes)
        if len(kept) > MAX_DIMS or len(reduced) > MAX_DIMS:
            raise self._unsupported(
                f"a sample of shape {shape} reduced over axes {list(axes)} "
                f"(more than {MAX_DIMS} alternating groups of kept and reduced dimensions)"
            )
        return n_out, n_red, kept, reduced

    @staticmethod
    def _descriptors(samples, shapes, chunks, out_offsets, counts=None):
        """The int64 descriptor rows of one launch (the layout of kernels/reduce.cu)."""
        desc = np.zeros((len(samples), DESC_WORDS), np.int64)
        unit = 0
        for i, (sample, (n_out, n_red, kept, reduced)) in enumerate(zip(samples, shapes, strict=True)):
            row = desc[i]
            row[_D_IN] = sample.in_offset
            row[_D_MEAN] = sample.mean_offset
            row[_D_OUT] = out_offsets[i]
            row[_D_NOUT] = n_out
            row[_D_NRED] = n_red
            row[_D_CHUNKS] = chunks[i]
            row[_D_UNIT_START] = unit
            row[_D_COUNT] = n_red if counts is None else counts[i]
            row[_D_NKEPT] = len(kept)
            row[_D_NREDDIMS] = len(reduced)
            for k, (extent, stride) in enumerate(kept):
                row[_D_DIMS + k] = extent
                row[_D_DIMS + MAX_DIMS + k] = stride
            for k, (extent, stride) in enumerate(reduced):
                row[_D_DIMS + 2 * MAX_DIMS + k] = extent
                row[_D_DIMS + 3 * MAX_DIMS + k] = stride
            unit += n_out * chunks[i]
        return desc, unit

    def _launch(
        self, name, in_ptr, mean_ptr, out_ptr, desc, chunk_len, group, stage, mode, ddof, stream, device_id
    ):
        device_array, modules = _cuda()
        rows, units = desc
        if units == 0:
            return
        table = device_array.DeviceArray.from_host(rows, device_id, stream)
        groups_per_block = BLOCK // group
        grid = min(MAX_BLOCKS, -(-units // groups_per_block))
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
