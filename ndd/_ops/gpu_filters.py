"""GPU kernels of ``gaussian_blur``, ``laplacian`` and ``filter``, queued on ``kernels/filter.cu``.

The CPU's plan, the GPU's pixels. For each sample the operator's own module
(``filters.py``) gives a ``FilterPlan``: the steps the CPU takes (the separable
passes of gaussian_blur and laplacian, laplacian's single 2-D window, filter's
window), each a list of ``FilterWindow`` (the whole sample, or one frame with its
own filter and fill value) holding the window, the index maps of its borders (the
CPU's ``border_map``) and the fill value converted as the CPU converts it. Here
they become tables uploaded per call (a descriptor row per window, the index maps,
the non-zero taps and their weights), and step ``k`` of every sample of a batch is
one launch of ``filter_<in>_to_<out>`` (more only where per-sample arguments give
samples steps that read or write different buffers or types).

Results between steps are float32, as on the CPU: two buffers that the passes take
in turn, and a third for laplacian's running sum of its partial derivatives. The
kernels sum in the CPU's order with fused multiply-adds, as the CPU's AVX2 path
does: equal to the bit on a processor with AVX2 and FMA
(``ndd._cpu.convolution.taps_fused()``), within a rounding elsewhere.

``filter``'s filter and fill value must be in host memory: their values make the
taps and the fill value on the host, as on the CPU; GPU ones are refused rather
than copied back. Nothing here touches the driver at import: ``ndd._cuda`` is
imported on first use.
"""

import math

import numpy as np

from .gpu_segments import (
    GpuSamples,
    SampleOutputs,
    ValueTable,
    args_per_sample,
    cuda,
    launch_segments,
    require_gpu_input_of,
    unsupported,
)
from .gpu_types import suffixes

__all__ = [
    "READ_INPUT",
    "READ_PREVIOUS",
    "TYPES",
    "WRITE_OUTPUT",
    "WRITE_TEMPORARY",
    "WRITE_TOTAL",
    "FilterPlan",
    "FilterStep",
    "FilterWindow",
    "GpuFilter",
]

MODULE = "filter"
BLOCK = 256
# FILTER_ROW, the flags and FILTER_TAP_WORDS of kernels/filter.cu.
_ROW = 19
_SUM_SLICES = 1
_ADD_TOTAL = 2
_CONVERT = 4
_ROUND_EVEN = 8
_TAP_WORDS = 4
# Spatial axes a window may have (a row's depth, height and width).
_MAX_AXES = 3
# Every numeric type: the CPU's kernels read and write the same ones, through float32.
TYPES = suffixes(
    np.uint8,
    np.int8,
    np.uint16,
    np.int16,
    np.uint32,
    np.int32,
    np.uint64,
    np.int64,
    np.float16,
    np.float32,
    np.float64,
)
_F32 = np.dtype(np.float32)

# What a step reads: the sample, or the float32 result of the step before.
READ_INPUT = 0
READ_PREVIOUS = 1
# What a step writes: the output, a float32 result for the next step, or the running
# total (laplacian's sum of its partial derivatives).
WRITE_OUTPUT = 0
WRITE_TEMPORARY = 1
WRITE_TOTAL = 2


class FilterWindow:
    """One correlation of a part of a sample: its ``shape`` (outer, 1 to 3 spatial
    extents, inner) starts at element ``in_offset`` of what the step reads, its result
    at ``out_offset`` of what it writes. Output index ``i`` along spatial axis ``k``
    with window index ``j`` reads position ``maps[k][i + j]`` of that axis (-1:
    ``fill``); ``weights`` (float32) has one axis per spatial axis. ``slices``: the
    sums of the leading weight slices are added (volumes)."""

    __slots__ = ("fill", "in_offset", "maps", "out_offset", "shape", "slices", "weights")

    def __init__(self, shape, weights, maps, fill=0.0, slices=False, in_offset=0, out_offset=0):
        self.shape = tuple(shape)
        self.weights = np.asarray(weights, np.float32)
        self.maps = tuple(maps)
        self.fill = fill
        self.slices = slices
        self.in_offset = in_offset
        self.out_offset = out_offset

    @property
    def out_spatial(self):
        return tuple(len(m) - s + 1 for m, s in zip(self.maps, self.weights.shape, strict=True))


class FilterStep:
    """One step of a sample: its ``windows`` (None: the sample converted to the output
    type, without a window), what it ``reads`` and ``writes`` (READ_*, WRITE_*), and
    whether it adds the running total to its sums (``adds_total``)."""

    __slots__ = ("adds_total", "reads", "windows", "writes")

    def __init__(self, windows, reads=READ_INPUT, writes=WRITE_OUTPUT, adds_total=False):
        self.windows = windows
        self.reads = reads
        self.writes = writes
        self.adds_total = adds_total


class FilterPlan:
    """The steps of one sample and the shape of its result."""

    __slots__ = ("out_shape", "steps")

    def __init__(self, out_shape, steps):
        self.out_shape = tuple(out_shape)
        self.steps = steps


class _Tables:
    """The index maps, taps and weights of a call, each distinct one stored once."""

    def __init__(self):
        self.maps = ValueTable()
        self.taps, self.weights = [], []
        self.tap_count = 0
        self.taps_at = {}

    def map(self, values):
        return self.maps.add(values)

    def window_taps(self, weights, slices):
        """(first tap, taps) of ``weights``: its non-zero weights in row-major order, as
        the CPU takes them, each ending its slice (volumes: its leading index) or not."""
        key = (weights.shape, weights.tobytes(), slices)
        if key not in self.taps_at:
            index = np.nonzero(weights)
            taps = np.zeros((len(index[0]), _TAP_WORDS), np.int32)
            if len(taps):
                taps[:, _MAX_AXES - weights.ndim : _MAX_AXES] = np.stack(index, axis=1)
                taps[-1, _MAX_AXES] = 1
                if slices:
                    taps[:-1, _MAX_AXES] = index[0][1:] != index[0][:-1]
            self.taps_at[key] = (self.tap_count, len(taps))
            self.taps.append(taps.reshape(-1))
            self.weights.append(weights[index])
            self.tap_count += len(taps)
        return self.taps_at[key]

    def upload(self, device_id, stream):
        device_array = cuda()[0]

        def table(parts, dtype, width=1):
            values = np.concatenate([np.zeros(width, dtype), *parts]).astype(dtype)
            return device_array.DeviceArray.from_host(values, device_id, stream)

        # A leading spare entry keeps every table non-empty; offsets count from after it.
        return (
            self.maps.upload(device_id, stream, spare_first=True),
            table(self.taps, np.int32, _TAP_WORDS),
            table(self.weights, np.float32),
        )


def _window_row(window, in_offset, out_offset, total_offset, flags, tables):
    """The descriptor row of one window (see kernels/filter.cu) and its output elements."""
    outer, *spatial, inner = window.shape
    pad = _MAX_AXES - len(spatial)
    out_spatial = (1,) * pad + window.out_spatial
    elements = outer * math.prod(out_spatial) * inner
    maps = [tables.map([0]) + 1] * pad + [tables.map(m) + 1 for m in window.maps]
    first, taps = tables.window_taps(window.weights, window.slices)
    if window.slices:
        flags |= _SUM_SLICES
    fill_bits = int(np.float32(window.fill).view(np.int32))
    row = [
        in_offset + window.in_offset,
        out_offset + window.out_offset,
        elements,
        outer,
        *((1,) * pad + tuple(spatial)),
        inner,
        *out_spatial,
        *maps,
        first + 1,
        taps,
        fill_bits,
        flags,
        total_offset + window.out_offset,
    ]
    return row, elements


def _convert_row(in_offset, out_offset, elements):
    return [in_offset, out_offset, elements] + [1] * 8 + [0] * 5 + [0, _CONVERT, 0], elements


def _host_samples(value, count):
    """A host input as one array (or None) per sample: a list (Batch) as it is, an
    array (Tensor) for every sample."""
    if isinstance(value, list):
        return value
    return [value] * count


class GpuFilter:
    """The GPU kernel of gaussian_blur, laplacian and filter. ``plan(shape, dtype, args,
    others)`` gives a sample's ``FilterPlan`` (``others``: its host arrays of the
    inputs ``host_inputs``); ``out_dtype(dtype, args)`` the output's numpy type for an
    input of ``dtype``; ``round_even``: integer results round halves to even (filter)."""

    def __init__(self, op, plan, out_dtype, host_inputs=(), round_even=False):
        self.op = op
        self.plan = plan
        self.out_dtype = out_dtype
        self.host_inputs = host_inputs
        self.round_even = round_even

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type with a kernel, the other inputs on the host."""
        require_gpu_input_of(self.op, ins[0], TYPES)
        for k in self.host_inputs:
            if k < len(ins) and ins[k] is not None and ins[k]._device.device_type == "gpu":
                raise unsupported(
                    self.op,
                    f"a '{self.op.input_names[k]}' input in GPU memory (its values make the taps on the "
                    "host); give it in host memory",
                )

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        count = len(source.shapes)
        sample_args = args_per_sample(args, batch_size)
        others = [_host_samples(inputs[k], count) for k in self.host_inputs]
        plans = [
            self.plan(shape, source.dtype, a, tuple(o[i] for o in others))
            for i, (shape, a) in enumerate(zip(source.shapes, sample_args, strict=True))
        ]
        target = np.dtype(self.out_dtype(source.dtype, args))
        out = SampleOutputs([p.out_shape for p in plans], target, batch_size >= 0, device_id, stream)
        # Each sample's element offset in the float32 buffers between steps.
        sizes = [math.prod(p.out_shape) for p in plans]
        between = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).tolist()
        tables = _Tables()
        launches = []
        for k in range(max((len(p.steps) for p in plans), default=0)):
            groups = {}
            for i, plan in enumerate(plans):
                if k >= len(plan.steps):
                    continue
                step = plan.steps[k]
                if step.reads == READ_INPUT:
                    reads, in_offset = ("input", source.dtype), source.offsets[i]
                else:
                    reads, in_offset = (f"between{(k - 1) % 2}", _F32), between[i]
                if step.writes == WRITE_OUTPUT:
                    writes, out_offset = ("output", target), out.offsets[i]
                elif step.writes == WRITE_TOTAL:
                    writes, out_offset = ("total", _F32), between[i]
                else:
                    writes, out_offset = (f"between{k % 2}", _F32), between[i]
                members = groups.setdefault((reads, writes, "total" if step.adds_total else None), [])
                if step.windows is None:
                    members.append(_convert_row(in_offset, out_offset, sizes[i]))
                    continue
                flags = (_ADD_TOTAL if step.adds_total else 0) | (_ROUND_EVEN if self.round_even else 0)
                for window in step.windows:
                    members.append(_window_row(window, in_offset, out_offset, between[i], flags, tables))
            launches += [(key, members) for key, members in groups.items()]
        launches = [(key, [m for m in members if m[1]]) for key, members in launches]
        launches = [(key, members) for key, members in launches if members]
        if not launches:
            return [out.result]
        buffers = {"input": source.ptr, "output": out.base.ptr, None: 0}
        keep = []
        for name in ("between0", "between1", "total"):
            if any(name in (key[0][0], key[1][0], key[2]) for key, _ in launches):
                keep.append(device_array.DeviceArray.empty((max(between[-1], 1),), _F32, device_id, stream))
                buffers[name] = keep[-1].ptr
        maps, taps, weights = tables.upload(device_id, stream)
        for (reads, writes, totals), members in launches:
            launch_segments(
                device_id,
                MODULE,
                f"filter_{TYPES[reads[1]]}_to_{TYPES[writes[1]]}",
                BLOCK,
                stream,
                [v for row, _ in members for v in row],
                _ROW,
                max(n for _, n in members),
                (buffers[reads[0]], buffers[writes[0]]),
                (buffers[totals], maps.ptr, taps.ptr, weights.ptr),
            )
        return [out.result]
