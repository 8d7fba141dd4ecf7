"""GPU kernels of the random operators ``ndd.random.uniform``, ``normal``,
``coin_flip``, ``beta`` and ``choice`` (``kernels/random.cu``).

They follow the GPU operator contract of ``schema.Operator``. Like the CPU path,
a call draws its ``RandomKey`` from its RNG when it is made (so a GPU call
advances the RNG as a CPU call does, and checkpoints of the RNG work alike);
the kernels key a counter-based generator (Philox4x32-10, one stream per
element) with the key's first four words. The values are therefore
deterministic for a given RNG state, independent of the launch shape and the
evaluation mode, but they are not the CPU's values for the same state (neither
are the reference's): only their distribution is the same.

A batch is drawn in one launch (samples along the grid's y), with its per-sample
arguments, sizes and output offsets uploaded as small arrays. ``choice`` reads
``a`` on the GPU, or uploads it when it is host data; a scalar ``a`` (the number
of choices) in GPU memory is refused, because its value is needed on the host to
check ``p`` against it.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import functools
import math

import numpy as np

from .._prepare.storage import TensorBase
from .gpu_segments import args_per_sample, require_gpu_input_of
from .gpu_types import WITHOUT_FLOAT16, suffixes

__all__ = ["GpuChoice", "GpuDistribution", "GpuUniform"]

MODULE = "random"
# Threads per block of every launch here.
BLOCK = 256
# The samples a launch walks along y; the kernels loop over more.
_MAX_GRID_Y = 65535
# Blocks in a launch at most (x times y): enough to fill any GPU.
_MAX_BLOCKS = 1 << 16
# numpy dtype -> the type suffix of the kernels in kernels/random.cu.
KERNEL_TYPES = suffixes(*WITHOUT_FLOAT16)
# kernels/random.cu's random_choice: fields per sample, and the "no p" marker.
_CHOICE_FIELDS = 6
_CHOICE_NO_P = (1 << 64) - 1


@functools.cache
def _cuda():
    """The GPU runtime modules (imported on first GPU use, never by ``import ndd``)."""
    from .._cuda import device_array, launch, modules

    return device_array, launch, modules


def _key_words(key):
    """The four words of the call's RandomKey that key the kernels' generator."""
    return key.words[:4]


def _check_all(check, sample_args):
    """``check`` each distinct argument dict (shared dicts once), in sample order."""
    seen = set()
    for a in sample_args:
        if id(a) not in seen:
            seen.add(id(a))
            check(a)


def _like_shape(like, i):
    """The shape of sample ``i`` of a shape-like input, None when absent."""
    if like is None:
        return None
    if isinstance(like, list):  # a host batch
        return like[i].shape
    shapes = getattr(like, "shapes", None)  # a DeviceBatch
    return like.shape if shapes is None else shapes[i]


def _shape(qualname, like_shape, args):
    """A sample's shape: that of the shape-like input, else ``shape``, else a scalar."""
    if like_shape is not None:
        return tuple(like_shape)
    shape = tuple(args["shape"] or ())
    if any(n < 0 for n in shape):
        raise ValueError(f"{qualname}: 'shape' must not have negative extents, got {list(shape)}")
    return shape


def _upload(array, device_id, stream):
    """A device copy of host ``array``, queued on ``stream`` (the host copy may go:
    pageable memory is staged before the call returns)."""
    device_array = _cuda()[0]
    return device_array.DeviceArray.from_host(np.ascontiguousarray(array), device_id, stream)


def _upload_tables(tables, device_id, stream):
    """The small per-call tables (arrays of 8-byte types) in one upload:
    ``(buffer, addresses)``, the buffer to keep referenced until the launch is queued."""
    parts = [np.ascontiguousarray(t).reshape(-1).view(np.uint8) for t in tables]
    buffer = _upload(np.concatenate(parts), device_id, stream)
    starts = np.cumsum([0] + [part.nbytes for part in parts[:-1]]).tolist()
    return buffer, [buffer.ptr + start for start in starts]


class _Output:
    """The output of a call: a DeviceArray (sample mode) or a DeviceBatch (batch
    mode, dense when the samples share a shape), and each sample's byte offset."""

    def __init__(self, shapes, dtype, batch_mode, device_id, stream):
        device_array = _cuda()[0]
        self.dtype = np.dtype(dtype)
        if not batch_mode:
            self.result = device_array.DeviceArray.empty(shapes[0], self.dtype, device_id, stream)
            self.ptr = self.result.ptr
            self.offsets = [0]
            return
        dense = len(set(shapes)) <= 1
        self.offsets, total = device_array.DeviceBatch.layout(shapes, self.dtype.itemsize, dense)
        data = device_array.DeviceArray.empty((total,), np.uint8, device_id, stream)
        self.ptr = data.ptr
        self.result = device_array.DeviceBatch(data, self.offsets, list(shapes), self.dtype, dense)


def _launch(kernel, sizes, stream, device_id, *args):
    """Queue ``kernel`` over samples of ``sizes`` work items (not all empty)."""
    _, launch, modules = _cuda()
    grid_y = min(len(sizes), _MAX_GRID_Y)
    grid_x = launch.grid_for(max(sizes), BLOCK, max(1, _MAX_BLOCKS // grid_y))
    function = modules.get_function(device_id, MODULE, kernel)
    function.launch((grid_x, grid_y), BLOCK, stream.handle, *args)


class GpuDistribution:
    """The GPU kernel of a distribution operator: ``random_<kernel>_<type>`` of
    ``kernels/random.cu``, with ``params(args)`` (floats) for each sample.

    Parameters
    ----------
    op : Operator
        The operator (its qualname names it in errors).
    kernel : str
        The kernel's name between ``random_`` and the type suffix.
    params : callable(args) -> tuple of float
        A sample's distribution parameters, as the kernel reads them.
    check : callable(args)
        The CPU path's validation of a sample's arguments (the same errors).
    """

    def __init__(self, op, kernel, params, check):
        self.op = op
        self.kernel = kernel
        self.params = params
        self.check_args = check

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        sample_args = args_per_sample(args, batch_size)
        if not sample_args:
            return [_Output([], args["_dtype"], True, device_id, stream).result]
        _check_all(self.check_args, sample_args)
        shapes = [_shape(self.op.qualname, _like_shape(inputs[0], i), a) for i, a in enumerate(sample_args)]
        out = _Output(shapes, args["_dtype"], batch_size >= 0, device_id, stream)
        itemsize = out.dtype.itemsize
        sizes = [math.prod(s) for s in shapes]
        if max(sizes) == 0:
            return [out.result]
        layout = np.array([[o // itemsize, n] for o, n in zip(out.offsets, sizes, strict=True)], np.uint64)
        name, tables = self._tables(sample_args)
        # The upload stays referenced until the launch is queued (its memory is then
        # freed in order on the stream).
        uploaded, addresses = _upload_tables([layout, *tables], device_id, stream)
        _launch(
            f"random_{name}_{KERNEL_TYPES[out.dtype]}",
            sizes,
            stream,
            device_id,
            *addresses,
            out.ptr,
            len(sizes),
            *_key_words(args["rng"]),
        )
        return [out.result]

    def _tables(self, sample_args):
        """The kernel's name (less prefix and type) and the host tables it reads
        between the layout and the output."""
        return self.kernel, [np.array([self.params(a) for a in sample_args], np.float64)]


class GpuUniform(GpuDistribution):
    """``ndd.random.uniform``: a range (``random_uniform_range_<type>``) or, with
    ``values``, a set of values (``random_uniform_values_<type>``: each sample's
    span of one table of the values)."""

    def _tables(self, sample_args):
        if sample_args[0]["values"] is None:
            return "uniform_range", super()._tables(sample_args)[1]
        spans, table = [], []
        for a in sample_args:
            spans.append((len(table), len(a["values"])))
            table.extend(a["values"])
        return "uniform_values", [np.array(spans, np.uint64), np.array(table, np.float64)]


class GpuChoice:
    """The GPU kernel of ``ndd.random.choice`` (``random_choice``): one pick per
    thread, copying the picked row of ``a`` (or, for a scalar ``a``, writing the
    picked index in ``a``'s type).

    Parameters
    ----------
    op : Operator
    count : callable(array) -> int
        The CPU path's number of choices of a sample of ``a`` (with its errors):
        its value for a host scalar, its length for an array in either memory.
    check_p : callable(p, count)
        The CPU path's validation of ``p`` against the number of choices.
    """

    def __init__(self, op, count, check_p):
        self.op = op
        self.count = count
        self.check_p = check_p

    def _unsupported(self, what):
        return NotImplementedError(f"{self.op.qualname} on the GPU: {what}; the GPU implementation lacks it")

    def _scalar_on_gpu(self):
        return self._unsupported(
            "a scalar 'a' (the number of choices) in GPU memory, whose value the host must know; "
            "pass it as a host integer"
        )

    def check(self, ins, args):
        """Prepare phase: refuse a scalar ``a`` in GPU memory (metadata only)."""
        a = ins[0]
        if a._device.device_type != "gpu":
            return
        shapes = [a._shape] if isinstance(a, TensorBase) else (a._shapes or [])
        if any(shape is not None and len(shape) == 0 for shape in shapes):
            raise self._scalar_on_gpu()

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = _cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        a, like = inputs
        sample_args = args_per_sample(args, batch_size)
        count = len(sample_args)
        if count == 0:
            # No data to take a dtype from (the Batch has it from the prepare phase).
            return [_Output([], getattr(a, "dtype", np.uint8), True, device_id, stream).result]
        a_samples, source, source_offsets = self._sources(a, count, device_id, stream)
        dtype = a_samples[0].dtype
        shapes, fields, cumulative = [], [], []
        for i, (sample, sargs) in enumerate(zip(a_samples, sample_args, strict=True)):
            if sample.ndim == 0 and isinstance(sample, device_array.DeviceArray):
                raise self._scalar_on_gpu()
            choices = self.count(sample)
            p = sargs["p"]
            self.check_p(p, choices)
            shape = _shape(self.op.qualname, _like_shape(like, i), sargs)
            row_shape = tuple(sample.shape[1:])
            shapes.append(shape + row_shape)
            p_start = _CHOICE_NO_P
            if p is not None:
                p_start = len(cumulative)
                cumulative.extend(np.cumsum(np.asarray(p, np.float64)))
            row_bytes = math.prod(row_shape) * dtype.itemsize
            fields.append([0, math.prod(shape), source_offsets[i], row_bytes, choices, p_start])
        out = _Output(shapes, dtype, batch_size >= 0, device_id, stream)
        if max(f[1] for f in fields) == 0:
            return [out.result]
        for f, offset in zip(fields, out.offsets, strict=True):
            f[0] = offset
        # The upload stays referenced until the launch is queued.
        uploaded, (picks, table) = _upload_tables(
            # A placeholder when no sample has p: the address stays inside the buffer.
            [np.array(fields, np.uint64), np.array(cumulative or [0.0], np.float64)],
            device_id,
            stream,
        )
        _launch(
            "random_choice",
            [f[1] for f in fields],
            stream,
            device_id,
            picks,
            table,
            0 if source is None else source.ptr,
            out.ptr,
            count,
            *_key_words(args["rng"]),
        )
        return [out.result]

    def _sources(self, a, count, device_id, stream):
        """``(samples, source, offsets)``: each sample's ``a`` (an array with shape
        and dtype), the device array holding them (None when every ``a`` is a
        scalar) and each one's byte offset in it. Host arrays are uploaded."""
        device_array = _cuda()[0]
        if isinstance(a, device_array.DeviceBatch):
            return a.samples(), a.data, list(a.offsets)
        if isinstance(a, device_array.DeviceArray):
            return [a] * count, a, [0] * count
        samples = a if isinstance(a, list) else [a] * count
        if all(s.ndim == 0 for s in samples):
            return samples, None, [0] * count
        if isinstance(a, list):
            offsets = np.cumsum([0] + [s.nbytes for s in samples[:-1]]).tolist()
            data = np.concatenate([np.ascontiguousarray(s).reshape(-1).view(np.uint8) for s in samples])
            return samples, _upload(data, device_id, stream), offsets
        data = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
        return samples, _upload(data, device_id, stream), [0] * count


# -- noise ------------------------------------------------------------------------------

# NOISE_PARAMS of kernels/random.cu, and the input types with noise kernels.
_NOISE_PARAMS = 6
NOISE_TYPES = suffixes(np.uint8, np.int8, np.uint16, np.int16, np.int32, np.int64, np.float32)


class GpuNoise:
    """The GPU kernel of a noise operator: ``noise_<kernel>_<type>`` of
    ``kernels/random.cu`` over every sample in one launch, keyed by the call's
    RandomKey as the random operators are (the CPU's distributions, not its values).

    ``params(args, shape, dtype)`` gives a sample's parameters as the kernel reads
    them (at most NOISE_PARAMS floats); ``check(args)`` is the CPU's validation."""

    def __init__(self, op, kernel, params, check=None):
        self.op = op
        self.kernel = kernel
        self.params = params
        self.check_args = check

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type with a kernel."""
        require_gpu_input_of(self.op, ins[0], NOISE_TYPES)

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        data = inputs[0]
        sample_args = args_per_sample(args, batch_size)
        if self.check_args is not None:
            _check_all(self.check_args, sample_args)
        dtype = np.dtype(data.dtype)
        itemsize = dtype.itemsize
        if batch_size < 0:
            shapes, in_offsets, in_ptr = [tuple(data.shape)], [0], data.ptr
        else:
            shapes = [tuple(s) for s in data.shapes]
            in_offsets, in_ptr = [o // itemsize for o in data.offsets], data.data.ptr
        out = _Output(shapes, dtype, batch_size >= 0, device_id, stream)
        sizes = [math.prod(s) for s in shapes]
        if not sizes or max(sizes) == 0:
            return [out.result]
        layout = np.array([[o // itemsize, n] for o, n in zip(out.offsets, sizes, strict=True)], np.uint64)
        params = np.zeros((len(shapes), _NOISE_PARAMS), np.float64)
        for k, (a, shape) in enumerate(zip(sample_args, shapes, strict=True)):
            values = self.params(a, shape, dtype)
            params[k, : len(values)] = values
        uploaded, addresses = _upload_tables(
            [layout, np.array(in_offsets, np.uint64), params], device_id, stream
        )
        _launch(
            f"noise_{self.kernel}_{NOISE_TYPES[dtype]}",
            sizes,
            stream,
            device_id,
            *addresses,
            in_ptr,
            out.ptr,
            len(sizes),
            *_key_words(args["rng"]),
        )
        return [out.result]
