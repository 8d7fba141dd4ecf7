"""GPU kernels of the creation and lookup operators: ``full``, ``full_like``,
``zeros``, ``ones``, ``zeros_like``, ``ones_like``, ``one_hot``, ``lookup_table``
and ``element_extract``.

They follow the GPU operator contract of ``schema.Operator`` and queue kernels of
``kernels/indexing.cu`` on ``ctx.cuda_stream``. What the kernels store is never
computed on the GPU: fill values, table entries and on/off values are converted on
the host exactly as the CPU operators convert them, and the kernels move their bit
patterns. So the output side of every kernel is an unsigned storage type of the
output's size, which serves every element type (bool and float16 included); only
labels and keys, read as numbers, have kernels per input type.

A batch is one launch: a small int64 descriptor table, uploaded per call, gives
each sample (each sample of each output for ``element_extract``) its offsets and
size, and ``blockIdx.y`` picks the sample. Outputs take the usual batch layout
(``DeviceBatch.layout``). Host data goes to the GPU only where it is an argument
of the call (a fill value, the lookup table); an input to convert must already be
on the GPU, and nothing is copied back to the host.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import math

import numpy as np

from .conversions import c_cast, cast_array
from .gpu_segments import (
    GpuSamples,
    SampleOutputs,
    args_per_sample,
    cuda,
    launch_segments,
    require_gpu_input,
    unsupported,
)
from .gpu_types import STORAGE_TYPES, suffixes

__all__ = [
    "BLOCK",
    "KEY_TYPES",
    "LABEL_TYPES",
    "MODULE",
    "STORAGE_TYPES",
    "GpuConstant",
    "GpuElementExtract",
    "GpuFull",
    "GpuLookupTable",
    "GpuOneHot",
]

MODULE = "indexing"
# Threads per block of every launch here.
BLOCK = 256
# Key types of lookup_table: the integer types the CPU accepts.
KEY_TYPES = suffixes(np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64)
# Label types of one_hot: the numeric types the CPU accepts.
LABEL_TYPES = {**KEY_TYPES, **suffixes(np.float16, np.float32, np.float64)}


def _element_type(op, dtype, what="the output"):
    """The numpy dtype of ``dtype`` (a DType), refusing those without a storage kernel."""
    numpy = dtype.numpy if dtype is not None else None
    if numpy is None or np.dtype(numpy).itemsize not in STORAGE_TYPES:
        raise unsupported(op, f"no kernel for {what} type {dtype}")
    return np.dtype(numpy)


def _bits(value, dtype):
    """The bit pattern of ``value`` (one element of ``dtype``) as an int."""
    return int(np.asarray(value, dtype).reshape(()).view(STORAGE_TYPES[dtype.itemsize][1]))


def _size(shape):
    return math.prod(shape)


def _launch_flat(device_id, name, stream, n, *args):
    if n == 0:
        return
    _, launch, modules, _, _ = cuda()
    kernel = modules.get_function(device_id, MODULE, name)
    kernel.launch(launch.grid_for(n, BLOCK), BLOCK, stream.handle, *args, n)


def _host_samples(data, batch_size):
    """Host data (an array, or a list of them for a Batch) as a list of samples."""
    if isinstance(data, list):
        return data
    return [data] * (1 if batch_size < 0 else batch_size)


def _data_dtype(data):
    """The element type of an input: GPU data, a host array or a host batch (a list)."""
    if isinstance(data, list):
        # An empty batch has no samples to tell; its results hold no elements, and
        # their Batch takes its dtype from the type rule, not from here.
        return np.dtype(data[0].dtype) if data else np.dtype(np.uint8)
    return np.dtype(data.dtype)


def _like_shapes(data, batch_size):
    """The sample shapes of a ``*_like`` input, on the GPU or on the host."""
    if isinstance(data, (list, np.ndarray)):
        return [tuple(s.shape) for s in _host_samples(data, batch_size)]
    return GpuSamples(data, batch_size).shapes


# -- fills: zeros, ones, full and their _like variants ----------------------------------


def _fill_constant(out, value, stream, device_id):
    """Every element of ``out``'s allocation set to ``value``; zero bytes by a memset."""
    bits = _bits(value, out.dtype)
    if out.base.nbytes == 0:
        return
    if bits == 0:
        out.base.clear()
        return
    suffix = STORAGE_TYPES[out.dtype.itemsize][0]
    _launch_flat(device_id, f"fill_{suffix}", stream, out.elements, out.base.ptr, bits)


def _broadcast_desc(src_offsets, fill_shapes, out_offsets, out_shapes):
    """The broadcast kernel's descriptor table and its ndim: sample i of the output
    reads the fill at ``src_offsets[i]``, aligned on the last dimensions."""
    ndim = max((len(s) for s in out_shapes), default=0)
    desc = []
    for src, fill, dst, shape in zip(src_offsets, fill_shapes, out_offsets, out_shapes, strict=True):
        extents = (1,) * (ndim - len(shape)) + tuple(shape)
        fill = (1,) * (ndim - len(fill)) + tuple(fill)
        strides, step = [], 1
        for f in reversed(fill):
            strides.append(step if f != 1 else 0)
            step *= f
        desc += [src, dst, _size(shape), *extents, *reversed(strides)]
    return desc, ndim


def _broadcast_into(out, src_ptr, src_offsets, fill_shapes, stream, device_id):
    desc, ndim = _broadcast_desc(src_offsets, fill_shapes, out.offsets, _out_shapes(out))
    suffix = STORAGE_TYPES[out.dtype.itemsize][0]
    max_n = max((_size(s) for s in _out_shapes(out)), default=0)
    launch_segments(
        device_id,
        MODULE,
        f"broadcast_{suffix}",
        BLOCK,
        stream,
        desc,
        3 + 2 * ndim,
        max_n,
        (src_ptr, out.base.ptr),
        (ndim,),
    )


def _out_shapes(out):
    result = out.result
    return [result.shape] if hasattr(result, "shape") else list(result.shapes)


class GpuConstant:
    """The GPU kernel of ``zeros``/``ones`` (``like`` False: ``dtype`` and ``shape``
    arguments) and ``zeros_like``/``ones_like`` (``like`` True: the input's shapes,
    on the GPU or the host, and its dtype unless ``dtype`` is given): a memset for
    zeros, a fill launch over the whole allocation otherwise."""

    def __init__(self, op, value, like, output_shape=None):
        self.op = op
        self.value = value
        self.like = like
        self.output_shape = output_shape

    def check(self, ins, args):
        """Prepare phase: refuse element types without a storage kernel."""
        dtype = args["dtype"]
        _element_type(self.op, ins[0]._dtype if dtype is None else dtype)

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        if self.like:
            x = inputs[0]
            if args["dtype"] is not None:
                dtype = np.dtype(args["dtype"].numpy)
            else:
                dtype = _data_dtype(x)
            shapes = _like_shapes(x, batch_size)
        else:
            dtype = np.dtype(args["dtype"].numpy)
            sample_args = args_per_sample(args, batch_size)
            shapes = [self.output_shape(a) for a in sample_args]
        out = SampleOutputs(shapes, dtype, batch_size >= 0, device_id, stream)
        _fill_constant(out, self.value, stream, device_id)
        return [out.result]


class GpuFull:
    """The GPU kernel of ``full`` (``like`` False: the fill value's dtype, the
    ``shape`` argument) and ``full_like`` (``like`` True: the first input's dtype
    and shapes, the fill value converted as ``ndd.cast`` does).

    A fill value from the host is converted there and uploaded (one scalar for every
    sample is passed by value instead); one on the GPU is read in place, converted
    into a temporary by ``kernels/elementwise.cu``'s cast kernels where its type
    differs. ``output_shape(args)`` gives ``full``'s shape of one sample and
    ``check_broadcast(op, fill_shape, shape)`` refuses fills that do not broadcast."""

    def __init__(self, op, like, check_broadcast, output_shape=None):
        self.op = op
        self.like = like
        self.check_broadcast = check_broadcast
        self.output_shape = output_shape

    def check(self, ins, args):
        """Prepare phase: refuse element types without a kernel (metadata only)."""
        from .gpu_elementwise import KERNEL_TYPES

        fill = ins[-1]
        target = ins[0]._dtype if self.like else fill._dtype
        dtype = _element_type(self.op, target)
        if self.like and fill._device.device_type == "gpu" and fill._dtype != target:
            source = fill._dtype.numpy
            if source is None or np.dtype(source) not in KERNEL_TYPES or dtype not in KERNEL_TYPES:
                raise unsupported(
                    self.op,
                    f"converting a GPU fill value of type {fill._dtype} to {target} (GPU conversions: "
                    f"{', '.join(str(t) for t in KERNEL_TYPES)}); pass the fill value from the host",
                )

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        fill = inputs[-1]
        if self.like:
            like = inputs[0]
            dtype = _data_dtype(like)
            shapes = _like_shapes(like, batch_size)
        else:
            dtype = _data_dtype(fill)
            sample_args = args_per_sample(args, batch_size)
            shapes = [self.output_shape(a) for a in sample_args]
        if isinstance(fill, (list, np.ndarray)):
            fills = [cast_array(f, dtype) if self.like else f for f in _host_samples(fill, batch_size)]
            for f, shape in zip(fills, shapes, strict=True):
                self.check_broadcast(self.op.qualname, f.shape, shape)
            out = SampleOutputs(shapes, dtype, batch_size >= 0, device_id, stream)
            scalars = {_bits(f, dtype) for f in fills if f.size == 1}
            if all(f.size == 1 for f in fills) and len(scalars) <= 1:
                _fill_constant(out, fills[0] if fills else 0, stream, device_id)
                return [out.result]
            sizes = [f.size for f in fills]
            offsets = np.cumsum([0, *sizes[:-1]]).tolist()
            packed = np.concatenate([np.ascontiguousarray(f, dtype).reshape(-1) for f in fills])
            source = device_array.DeviceArray.from_host(packed, device_id, stream)
            _broadcast_into(out, source.ptr, offsets, [f.shape for f in fills], stream, device_id)
            return [out.result]
        source = GpuSamples(fill, batch_size)
        for fill_shape, shape in zip(source.shapes, shapes, strict=True):
            self.check_broadcast(self.op.qualname, fill_shape, shape)
        # The converted copy stays referenced until the launch that reads it is queued.
        converted = self._converted(fill, dtype, stream, device_id) if source.dtype != dtype else None
        out = SampleOutputs(shapes, dtype, batch_size >= 0, device_id, stream)
        ptr = source.ptr if converted is None else converted.ptr
        _broadcast_into(out, ptr, source.offsets, source.shapes, stream, device_id)
        return [out.result]

    def _converted(self, fill, dtype, stream, device_id):
        """``fill``'s whole allocation cast to ``dtype`` (same element offsets)."""
        from .gpu_elementwise import KERNEL_TYPES

        device_array, launch, modules, _, _ = cuda()
        whole = fill.data if isinstance(fill, device_array.DeviceBatch) else fill
        n = whole.nbytes // fill.dtype.itemsize
        converted = device_array.DeviceArray.empty((n,), dtype, device_id, stream)
        if n:
            name = f"cast_{KERNEL_TYPES[fill.dtype]}_to_{KERNEL_TYPES[dtype]}"
            kernel = modules.get_function(device_id, "elementwise", name)
            kernel.launch(launch.grid_for(n, BLOCK), BLOCK, stream.handle, whole.ptr, converted.ptr, n)
        return converted


# -- one_hot --------------------------------------------------------------------------


class GpuOneHot:
    """The GPU kernel of ``one_hot``: ``one_hot_<label type>_<storage>`` writes every
    output element from the label it belongs to; ``sample_layout(shape, args,
    scalar_label)`` gives the output shape and the elements after the class axis of
    one sample, raising as the CPU does, and ``scalar_labels(args, sizes)`` whether
    samples of those element counts are scalar labels (the CPU's rule)."""

    def __init__(self, op, sample_layout, scalar_labels):
        self.op = op
        self.sample_layout = sample_layout
        self.scalar_labels = scalar_labels

    def check(self, ins, args):
        """Prepare phase: GPU labels of a type with a kernel (metadata only)."""
        x = ins[0]
        require_gpu_input(self.op, x)
        _element_type(self.op, args["dtype"])

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        labels = GpuSamples(inputs[0], batch_size)
        dtype = np.dtype(args["dtype"].numpy)
        num_classes = args["num_classes"]
        scalar_labels = self.scalar_labels(args, [_size(s) for s in labels.shapes])
        layouts = [self.sample_layout(s, args, scalar_labels) for s in labels.shapes]
        out = SampleOutputs([shape for shape, _ in layouts], dtype, batch_size >= 0, device_id, stream)
        desc = []
        for src, dst, (shape, inner) in zip(labels.offsets, out.offsets, layouts, strict=True):
            desc += [src, dst, _size(shape), inner]
        on = c_cast(np.float32(args["on_value"]), dtype)
        off = c_cast(np.float32(args["off_value"]), dtype)
        # numpy compares float labels with num_classes converted to the labels' type.
        with np.errstate(over="ignore"):
            limit = float(labels.dtype.type(num_classes)) if labels.dtype.kind == "f" else 0.0
        name = f"one_hot_{LABEL_TYPES[labels.dtype]}_{STORAGE_TYPES[dtype.itemsize][0]}"
        max_n = max((_size(shape) for shape, _ in layouts), default=0)
        launch_segments(
            device_id,
            MODULE,
            name,
            BLOCK,
            stream,
            desc,
            4,
            max_n,
            (labels.ptr, out.base.ptr),
            (_bits(on, dtype), _bits(off, dtype), num_classes, limit),
        )
        return [out.result]


# -- lookup_table ---------------------------------------------------------------------


class GpuLookupTable:
    """The GPU kernel of ``lookup_table``: the CPU's dense table (``table(args)``:
    converted values, the default last) uploaded once per call, then
    ``lookup_<key type>_<storage>`` over every sample in one launch."""

    def __init__(self, op, table):
        self.op = op
        self.table = table

    def check(self, ins, args):
        """Prepare phase: GPU keys of a type with a kernel (metadata only)."""
        x = ins[0]
        require_gpu_input(self.op, x)
        dtype = x._dtype.numpy
        if dtype is None or np.dtype(dtype) not in KEY_TYPES:
            raise unsupported(self.op, f"no kernel for keys of type {x._dtype}")

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        keys = GpuSamples(inputs[0], batch_size)
        table = self.table(args)
        dtype = table.dtype
        out = SampleOutputs(keys.shapes, dtype, batch_size >= 0, device_id, stream)
        desc = []
        for src, dst, shape in zip(keys.offsets, out.offsets, keys.shapes, strict=True):
            desc += [src, dst, _size(shape)]
        max_n = max((_size(s) for s in keys.shapes), default=0)
        if max_n == 0:
            return [out.result]
        device_table = device_array.DeviceArray.from_host(table, device_id, stream)
        name = f"lookup_{KEY_TYPES[keys.dtype]}_{STORAGE_TYPES[dtype.itemsize][0]}"
        launch_segments(
            device_id,
            MODULE,
            name,
            BLOCK,
            stream,
            desc,
            3,
            max_n,
            (keys.ptr, device_table.ptr, out.base.ptr),
            (table.shape[0] - 1,),
        )
        return [out.result]


# -- element_extract ----------------------------------------------------------------------


class GpuElementExtract:
    """The GPU kernel of ``element_extract``: every output in one allocation, every
    (output, sample) frame copied by one launch of ``copy_<storage>`` as a segment,
    in the widest unit that all offsets and sizes allow.
    ``check_sequence(shape, element_map)`` raises as the CPU does."""

    def __init__(self, op, check_sequence):
        self.op = op
        self.check_sequence = check_sequence

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type the copies can move (metadata only)."""
        x = ins[0]
        require_gpu_input(self.op, x)
        _element_type(self.op, x._dtype, "the input")

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        element_map = list(args["element_map"])
        for shape in source.shapes:
            self.check_sequence(shape, element_map)
        dtype = source.dtype
        itemsize = dtype.itemsize
        frames = [tuple(s[1:]) for s in source.shapes]
        batch = batch_size >= 0
        dense = len(set(frames)) <= 1
        offsets, nbytes = (
            device_array.DeviceBatch.layout(frames, itemsize, dense)
            if batch
            else ([0], _size(frames[0]) * itemsize)
        )
        # Output k starts at k * stride bytes of the shared allocation.
        alignment = device_array.SAMPLE_ALIGNMENT
        stride = -(-nbytes // alignment) * alignment
        memory = device_array.DeviceArray.empty((stride * len(element_map),), np.uint8, device_id, stream)
        segments = []  # (source byte offset, output byte offset, bytes)
        for k, index in enumerate(element_map):
            for src, frame, dst in zip(source.offsets, frames, offsets, strict=True):
                frame_bytes = _size(frame) * itemsize
                segments.append((src * itemsize + index * frame_bytes, k * stride + dst, frame_bytes))
        self._copy(source.ptr, memory.ptr, segments, stream, device_id)
        results = []
        for k in range(len(element_map)):
            if batch:
                data = memory.view(k * stride, (nbytes,))
                results.append(device_array.DeviceBatch(data, offsets, frames, dtype, dense))
            else:
                results.append(memory.view(k * stride, frames[0], dtype))
        return results

    def _copy(self, src_ptr, dst_ptr, segments, stream, device_id):
        moved = [(a, b, n) for a, b, n in segments if n]
        if not moved:
            return
        common = math.gcd(src_ptr, dst_ptr, *(v for segment in moved for v in segment))
        unit = max(size for size in STORAGE_TYPES if common % size == 0)
        desc = [v // unit for segment in moved for v in segment]
        max_n = max(n for _, _, n in moved) // unit
        launch_segments(
            device_id,
            MODULE,
            f"copy_{STORAGE_TYPES[unit][0]}",
            BLOCK,
            stream,
            desc,
            3,
            max_n,
            (src_ptr, dst_ptr),
        )
