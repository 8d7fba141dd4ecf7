"""What the GPU operator families whose batches run as *segments* share: a GPU
input seen as samples (a base pointer, element offsets and shapes), the outputs of
a call in one allocation, and the launch of a kernel over a descriptor table with
one row per segment (``blockIdx.y`` picks the row, the x blocks stride over the
row's elements). ``gpu_indexing.py`` and ``gpu_image.py`` build on them.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import functools

import numpy as np

__all__ = [
    "GpuSamples",
    "SampleOutputs",
    "cuda",
    "launch_blocks",
    "launch_segments",
    "require_gpu_input",
    "require_gpu_input_of",
    "args_per_sample",
    "once_per_distinct",
    "unsupported",
]

# The most segments (blockIdx.y) one launch takes.
MAX_SEGMENTS = 65535


@functools.cache
def cuda():
    """The GPU runtime modules (imported on first GPU use, never by ``import ndd``)."""
    from .._cuda import context, device_array, driver, launch, modules

    return device_array, launch, modules, driver, context


def args_per_sample(args, batch_size):
    """One argument dict per sample (``[args]`` in sample mode, ``batch_size`` -1)."""
    if batch_size < 0:
        return [args]
    from .._prepare.invocation import per_sample_args

    return per_sample_args(args, batch_size)


def once_per_distinct(make, sample_args, shapes):
    """``[make(args, shape)]`` for each sample, made once for the samples that share
    their argument dict and shape (``args_per_sample`` gives one dict to every sample
    when no argument varies), so that a batch of a few image sizes costs a few plans."""
    made, result = {}, []
    for args, shape in zip(sample_args, shapes, strict=True):
        key = (id(args), shape)
        value = made.get(key)
        if value is None:
            value = made[key] = make(args, shape)
        result.append(value)
    return result


def unsupported(op, what):
    return NotImplementedError(f"{op.qualname} on the GPU: {what}; the GPU implementation lacks it")


def require_gpu_input(op, x):
    if x._device.device_type != "gpu":
        raise unsupported(op, "an input in host memory; move it to the GPU with .gpu() first")


def require_gpu_input_of(op, x, types, what="input", max_ndim=None):
    """Prepare phase: ``x`` on the GPU, of one of ``types`` (numpy dtypes), of at
    most ``max_ndim`` dimensions when that is known (metadata only)."""
    require_gpu_input(op, x)
    dtype = x._dtype.numpy
    if dtype is None or np.dtype(dtype) not in types:
        names = ", ".join(np.dtype(t).name for t in types)
        raise unsupported(op, f"no kernel for {what} type {x._dtype} (GPU types: {names})")
    if max_ndim is not None:
        from .image_layout import known_ndim

        ndim = known_ndim(x)
        if ndim is not None and ndim > max_ndim:
            raise unsupported(op, f"{what}s of {ndim} dimensions (at most {max_ndim})")


def launch_segments(device_id, module, name, block, stream, desc, width, max_n, before, after=()):
    """Launch kernel ``name`` of ``module`` with ``(*before, desc, *after)`` over the
    segments of the host table ``desc`` (``width`` int64 each; blockIdx.y = segment),
    uploaded here, with enough x blocks of ``block`` threads for ``max_n`` elements."""
    count = len(desc) // width
    if count == 0 or max_n == 0:
        return
    device_array, launch, modules, _, _ = cuda()
    table = device_array.DeviceArray.from_host(np.asarray(desc, np.int64), device_id, stream)
    kernel = modules.get_function(device_id, module, name)
    blocks = launch.grid_for(max_n, block)
    for first in range(0, count, MAX_SEGMENTS):
        segments = min(MAX_SEGMENTS, count - first)
        part = table.view(first * width * 8, (segments * width,))
        kernel.launch((blocks, segments), block, stream.handle, *before, part.ptr, *after)


def launch_blocks(device_id, module, name, threads, stream, count, before, after=()):
    """Launch kernel ``name`` of ``module`` with one block of ``threads`` per item of
    ``count`` (an item is ``first + blockIdx.y``): ``(*before, first, *after)``, in as
    many launches as the grid's y extent needs."""
    if count == 0:
        return
    kernel = cuda()[2].get_function(device_id, module, name)
    for first in range(0, count, MAX_SEGMENTS):
        blocks = min(MAX_SEGMENTS, count - first)
        kernel.launch((1, blocks), threads, stream.handle, *before, first, *after)


class ValueTable:
    """The arrays of a call (index maps, networks, matrices), each distinct one stored
    once, for a launch to upload as one table of ``dtype`` and find by offset."""

    def __init__(self, dtype=np.int32):
        self.dtype = np.dtype(dtype)
        self._parts = []
        self._size = 0
        self._offsets = {}

    def add(self, values) -> int:
        """The offset of ``values`` (flattened) in the table."""
        values = np.ascontiguousarray(values, self.dtype).reshape(-1)
        key = values.tobytes()
        if key not in self._offsets:
            self._offsets[key] = self._size
            self._parts.append(values)
            self._size += values.size
        return self._offsets[key]

    def upload(self, device_id, stream, spare_first=False):
        """Every stored array in one DeviceArray, with a spare zero entry that keeps it
        non-empty: first (every offset then counts one more) or last."""
        spare = [np.zeros(1, self.dtype)]
        values = np.concatenate(spare + self._parts if spare_first else self._parts + spare)
        return cuda()[0].DeviceArray.from_host(values, device_id, stream)


class SampleOutputs:
    """Output memory for samples of ``shapes`` in one allocation: ``result`` (a
    DeviceArray in sample mode, a DeviceBatch in batch mode), ``base`` (its 1-D
    uint8 memory) and each sample's element offset in it."""

    def __init__(self, shapes, dtype, batch, device_id, stream):
        device_array = cuda()[0]
        self.dtype = dtype
        if not batch:
            self.result = device_array.DeviceArray.empty(shapes[0], dtype, device_id, stream)
            self.base = self.result.view(0, (self.result.nbytes,), np.uint8)
            self.offsets = [0]
            return
        dense = len(set(shapes)) <= 1
        byte_offsets, total = device_array.DeviceBatch.layout(shapes, dtype.itemsize, dense)
        self.base = device_array.DeviceArray.empty((total,), np.uint8, device_id, stream)
        self.result = device_array.DeviceBatch(self.base, byte_offsets, list(shapes), dtype, dense)
        self.offsets = [o // dtype.itemsize for o in byte_offsets]

    @property
    def elements(self):
        """Elements of the whole allocation (gaps between samples included)."""
        return self.base.nbytes // self.dtype.itemsize


class GpuSamples:
    """A GPU input as samples: the base pointer, each sample's element offset from
    it and shape (a Tensor given in batch mode is every sample)."""

    def __init__(self, data, batch_size):
        device_array = cuda()[0]
        self.dtype = data.dtype
        if isinstance(data, device_array.DeviceBatch):
            self.ptr = data.data.ptr
            self.offsets = [o // data.dtype.itemsize for o in data.offsets]
            self.shapes = [tuple(s) for s in data.shapes]
        else:
            count = 1 if batch_size < 0 else batch_size
            self.ptr = data.ptr
            self.offsets = [0] * count
            self.shapes = [tuple(data.shape)] * count
