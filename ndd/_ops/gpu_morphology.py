"""GPU kernels of ``experimental.median_blur``, ``experimental.dilate`` and
``experimental.erode``, queued on ``kernels/morphology.cu``.

The CPU's plan, the GPU's pixels. For each sample the operators' own module
(``filters.py``) gives the plan its CPU kernel follows: the sample as (planes,
height, width, inner) elements and, for a median, the window; for dilate and erode,
the index maps of the padded rows and columns (``border_map``, the padding of
``_pad_planes``, with ``iterations`` already folded into the mask as the CPU folds
it). Both operators are selections, so the results equal the CPU's to the bit:

- dilate and erode run the CPU's two separable passes, rows then columns, each one
  launch for the whole batch (a descriptor row per sample), through a buffer of the
  sample's type, taking the window in the CPU's order with numpy's choice between
  equal values and NaNs;
- median_blur is one launch, with the CPU's algorithm for each window
  (``median_window`` in ``ndd/_cpu/convolution.pyx``): Paeth's network for 3x3,
  the CPU's selection network in registers up to 25 values, and beyond that a
  bisection over the bits for integers (any exact selection agrees on them) or, for
  floats, whose NaNs and signed zeros come out where the algorithm puts them, the
  CPU's own network (its exchanges, uploaded) or Hoare selection, on per-thread
  wires in shared memory, or in a scratch buffer when a window is too large for it.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import math

import numpy as np

from .._cpu.convolution import _median_exchanges
from .gpu_filters import TYPES as FILTER_TYPES
from .gpu_segments import (
    MAX_SEGMENTS,
    GpuSamples,
    SampleOutputs,
    ValueTable,
    args_per_sample,
    cuda,
    launch_segments,
    require_gpu_input_of,
)

__all__ = ["MEDIAN_TYPES", "MORPHOLOGY_TYPES", "GpuMedian", "GpuMorphology", "MedianPlan", "MorphologyPlan"]

MODULE = "morphology"
BLOCK = 256
# MORPHOLOGY_ROW, MEDIAN_ROW, the MEDIAN_* methods and MEDIAN_REGISTER_VALUES of
# kernels/morphology.cu.
_PASS_ROW = 8
_MEDIAN_ROW = 11
_REGISTERS = 0
_BISECT = 1
_NETWORK = 2
_SELECT = 3
_REGISTER_VALUES = 25
# NETWORK_MAX_VALUES of ndd/_cpu/convolution.pyx: the largest window the CPU runs
# through a network (other than 8-bit ones, which are integers).
_NETWORK_MAX_VALUES = 1024
# Dynamic shared memory a launch may take without opting in, and the fewest threads
# of a block worth giving it; past that the wires live in a scratch buffer of at
# most about _SCRATCH_BYTES (fewer blocks, each thread taking more elements).
_SHARED_BYTES = 48 * 1024
_MIN_SHARED_THREADS = 32
_SCRATCH_BYTES = 64 << 20

# The CPU's types: every numeric one for dilate and erode, all but float16 for
# median_blur (its compiled kernel has none).
MORPHOLOGY_TYPES = FILTER_TYPES
MEDIAN_TYPES = {t: s for t, s in MORPHOLOGY_TYPES.items() if t != np.float16}


class MorphologyPlan:
    """How dilate or erode reduce one sample: its ``view`` (planes, height, width,
    inner) and the index maps of its padded rows and columns (``border_map``; their
    lengths minus the extents are the mask's height and width minus one)."""

    __slots__ = ("column_map", "row_map", "view")

    def __init__(self, view, row_map, column_map):
        self.view = tuple(view)
        self.row_map = row_map
        self.column_map = column_map


class MedianPlan:
    """How median_blur takes one sample: its ``view`` (planes, height, width, inner)
    and the window's ``rows`` and ``columns`` (odd)."""

    __slots__ = ("columns", "rows", "view")

    def __init__(self, view, rows, columns):
        self.view = tuple(view)
        self.rows = rows
        self.columns = columns


class GpuMorphology:
    """The GPU kernel of dilate (``erode`` False) and erode: ``plan(shape, args)``
    gives a sample's ``MorphologyPlan``."""

    def __init__(self, op, plan, erode):
        self.op = op
        self.plan = plan
        self.kernel = f"{'erode' if erode else 'dilate'}_"

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type with a kernel."""
        require_gpu_input_of(self.op, ins[0], MORPHOLOGY_TYPES)

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        out = SampleOutputs(source.shapes, source.dtype, batch_size >= 0, device_id, stream)
        maps = ValueTable()
        rows_pass, columns_pass = [], []
        between = 0
        largest = 0
        for shape, sample_args, in_offset, out_offset in zip(
            source.shapes, args_per_sample(args, batch_size), source.offsets, out.offsets, strict=True
        ):
            elements = math.prod(shape)
            if not elements:
                continue
            plan = self.plan(shape, sample_args)
            planes, height, width, inner = plan.view
            # Rows: each padded row of a plane reduced along its pixels, into the buffer;
            # columns: the buffer reduced along the rows of each plane, into the output.
            rows_pass += [in_offset, between, elements, planes * height, width, inner]
            rows_pass += [maps.add(plan.column_map), len(plan.column_map) - width + 1]
            columns_pass += [between, out_offset, elements, planes, height, width * inner]
            columns_pass += [maps.add(plan.row_map), len(plan.row_map) - height + 1]
            between += elements
            largest = max(largest, elements)
        if not between:
            return [out.result]
        buffer = device_array.DeviceArray.empty((between,), source.dtype, device_id, stream)
        table = maps.upload(device_id, stream)
        name = self.kernel + MORPHOLOGY_TYPES[source.dtype]
        for desc, reads, writes in (
            (rows_pass, source.ptr, buffer.ptr),
            (columns_pass, buffer.ptr, out.base.ptr),
        ):
            launch_segments(
                device_id,
                MODULE,
                name,
                BLOCK,
                stream,
                desc,
                _PASS_ROW,
                largest,
                (reads, writes),
                (table.ptr,),
            )
        return [out.result]


def _median_method(dtype, count):
    """The kernel's method (MEDIAN_*) for a window of ``count`` values of ``dtype``."""
    if count <= _REGISTER_VALUES:
        return _REGISTERS
    if dtype.kind in "iu":
        return _BISECT
    return _NETWORK if count <= _NETWORK_MAX_VALUES else _SELECT


class GpuMedian:
    """The GPU kernel of median_blur: ``plan(shape, args)`` gives a sample's ``MedianPlan``."""

    def __init__(self, op, plan):
        self.op = op
        self.plan = plan

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type with a kernel."""
        require_gpu_input_of(self.op, ins[0], MEDIAN_TYPES)

    def __call__(self, inputs, args, batch_size, ctx):
        device_array, _, modules, _, _ = cuda()
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        dtype = np.dtype(source.dtype)
        out = SampleOutputs(source.shapes, dtype, batch_size >= 0, device_id, stream)
        exchanges = ValueTable()
        desc = []
        largest = wires = 0
        for shape, sample_args, in_offset, out_offset in zip(
            source.shapes, args_per_sample(args, batch_size), source.offsets, out.offsets, strict=True
        ):
            elements = math.prod(shape)
            if not elements:
                continue
            plan = self.plan(shape, sample_args)
            _, height, width, inner = plan.view
            count = plan.rows * plan.columns
            method = _median_method(dtype, count)
            first = steps = 0
            if method == _NETWORK:
                network = _median_exchanges(count)
                first, steps = exchanges.add(network) // 2, len(network)
            if method in (_NETWORK, _SELECT):
                wires = max(wires, count)
            desc += [in_offset, out_offset, elements, height, width, inner, plan.rows, plan.columns]
            desc += [method, first, steps]
            largest = max(largest, elements)
        if not desc:
            return [out.result]
        segments = len(desc) // _MEDIAN_ROW
        threads, blocks, shared, scratch_threads = _median_launch(wires * dtype.itemsize, largest, segments)
        rows = device_array.DeviceArray.from_host(np.asarray(desc, np.int64), device_id, stream)
        table = exchanges.upload(device_id, stream)
        # The wires of the threads that do not have them in shared memory.
        scratch = None
        if scratch_threads:
            scratch = device_array.DeviceArray.empty((scratch_threads * wires,), dtype, device_id, stream)
        kernel = modules.get_function(device_id, MODULE, f"median_{MEDIAN_TYPES[dtype]}")
        for start in range(0, segments, MAX_SEGMENTS):
            part = min(MAX_SEGMENTS, segments - start)
            kernel.launch(
                (blocks, part),
                threads,
                stream.handle,
                source.ptr,
                out.base.ptr,
                rows.view(start * _MEDIAN_ROW * 8, (part * _MEDIAN_ROW,)).ptr,
                table.ptr,
                0 if scratch is None else scratch.ptr,
                shared_bytes=shared,
            )
        return [out.result]


def _median_launch(wire_bytes, largest, segments):
    """(threads, blocks, shared bytes, threads with wires in the scratch buffer) of a
    median launch whose threads need ``wire_bytes`` of wires each, over samples of at
    most ``largest`` elements and ``segments`` descriptor rows."""
    grid_for = cuda()[1].grid_for
    if not wire_bytes:
        return BLOCK, grid_for(largest, BLOCK), 0, 0
    if wire_bytes * _MIN_SHARED_THREADS <= _SHARED_BYTES:
        threads = min(BLOCK, _SHARED_BYTES // wire_bytes // _MIN_SHARED_THREADS * _MIN_SHARED_THREADS)
        return threads, grid_for(largest, threads), threads * wire_bytes, 0
    # Every thread of a launch has its own wires: fewer blocks, each thread taking
    # more elements, keep the buffer near _SCRATCH_BYTES.
    per_launch = min(segments, MAX_SEGMENTS)
    blocks = max(1, min(grid_for(largest, BLOCK), _SCRATCH_BYTES // (per_launch * BLOCK * wire_bytes)))
    return BLOCK, blocks, 0, blocks * per_launch * BLOCK
