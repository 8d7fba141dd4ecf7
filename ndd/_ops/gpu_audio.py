"""GPU kernels of the audio operators ``preemphasis_filter``, ``to_decibels``,
``mel_filter_bank`` and ``mfcc``, queued on ``kernels/audio.cu``.

Each is one launch over the whole batch (a descriptor row per sample), with the
CPU's arithmetic (``spectral.py``):

- ``preemphasis_filter`` converts its input to float32 (float64 for float64 data)
  with the cast kernels, filters along each sample's time axis (the CPU's rule for
  finding it) and converts to ``dtype``: equal to the CPU.
- ``to_decibels`` finds each sample's maximum first when ``reference`` is 0 (a
  block per sample); its logarithm is CUDA's ``log2f``, which may differ from
  numpy's in the last bit.
- ``mel_filter_bank`` adds each filter's weighted bins in the CPU's order (the
  bank is the CPU's, made once per number of bins): equal to the CPU on
  frequency-major spectrograms (the ``ft`` layout), where the CPU adds bin by bin;
  on time-major ones the CPU's matrix product adds in another order.
- ``spectrogram`` cuts and windows the frames as the CPU does (the window's
  float32 products, the signal mirrored or padded with zeros) and sums each bin's
  discrete Fourier transform in float64 (a block per window): the CPU's FFT (numpy's,
  float64) adds in another order, and both round float64 values to float32.
- ``nonsilent_region`` computes the short-term powers as the CPU does (exact int64
  sums for samples of up to 16 bits; float32 running sums in the CPU's runs for the
  others), a thread per run of windows, then a block per sample finds the first and
  last loud windows: equal to the CPU.
- ``audio_resample`` converts to float32 in -1..1 as the CPU does, resamples with
  the CPU's filter table and arithmetic (a thread per output frame: its position,
  taps and sums in the CPU's order) and converts back: equal to the CPU.
- ``mfcc`` multiplies by the CPU's DCT matrix in the order of the transformed axis,
  then by the lifter's scales; the CPU's matrix product (BLAS) adds in another
  order, so the two agree to float32 rounding of the sums.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import functools
import math

import numpy as np

from .gpu_elementwise import cast_flat, output_in, source_in
from .gpu_segments import (
    MAX_SEGMENTS,
    GpuSamples,
    SampleOutputs,
    ValueTable,
    args_per_sample,
    cuda,
    launch_blocks,
    launch_segments,
    once_per_distinct,
    require_gpu_input_of,
)
from .gpu_types import SUFFIXES, WITHOUT_FLOAT16, suffixes

__all__ = [
    "GpuDct",
    "GpuMelFilterBank",
    "GpuNonsilentRegion",
    "GpuResample",
    "GpuPreemphasis",
    "GpuSpectrogram",
    "GpuToDecibels",
    "MODULE",
]

MODULE = "audio"
BLOCK = 256
# The descriptor row widths and block sizes of kernels/audio.cu.
_PREEMPHASIS_ROW = 7
_DECIBELS_ROW = 4
_DECIBELS_THREADS = 256
_MEL_ROW = 9
_DCT_ROW = 8
_SPECTROGRAM_ROW = 7
_NONSILENT_POWER_ROW = 7
_NONSILENT_ROW = 7
_NONSILENT_THREADS = 256
_RESAMPLE_ROW = 6
_SPECTROGRAM_THREADS = 128
# Threads of spectrogram_fft's blocks at most (a butterfly each, nfft / 4 in a pass).
_FFT_THREADS = 256
# Frames of up to this many bytes go to shared memory (the default limit of a block's
# dynamic shared memory); longer windows to a scratch buffer, for at most
# _SCRATCH_BLOCKS blocks of windows per sample.
_SHARED_FRAME_BYTES = 48 * 1024
_SCRATCH_BLOCKS = 256
_MAX_WINDOW_BLOCKS = 4096
# Windows a thread sums one after another where the sums are exact (any runs do).
_EXACT_RUN = 1024
_NONSILENT_TYPES = suffixes(
    np.float32, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64
)
_EXACT_TYPES = frozenset(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16))
# The types resample_unit_<type> reads.
_RESAMPLE_TYPES = suffixes(np.float32, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32)
_BORDERS = {"zero": 0, "clamp": 1, "reflect": 2}
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_PREEMPHASIS_TYPES = tuple(t for t in WITHOUT_FLOAT16 if t != np.dtype(np.bool_))


def _split(shape, axis):
    """(outer, length, inner) of ``shape`` around ``axis``."""
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])


class GpuPreemphasis:
    """The GPU kernel of ``preemphasis_filter`` (see the module docstring);
    ``time_axis(shape, named)`` is the CPU's rule."""

    def __init__(self, op, time_axis):
        self.op = op
        self.time_axis = time_axis

    def check(self, ins, args):
        require_gpu_input_of(self.op, ins[0], _PREEMPHASIS_TYPES)

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        target = np.dtype(args["dtype"].numpy)
        work = _F64 if source.dtype == _F64 else _F32
        out = SampleOutputs(source.shapes, target, batch_size >= 0, device_id, stream)
        keep = []
        src_ptr = source_in(source, work, keep, stream, device_id)
        dst_ptr = output_in(work, out, keep, stream, device_id)
        rows, most = [], 0
        border = _BORDERS[args["border"]]

        def plan(a, shape):
            signal = shape or (1,)
            _, extent, stride = _split(signal, self.time_axis(signal, args["_time_axis"]))
            coeff = np.float64(np.float32(a["preemph_coeff"])).view(np.int64)
            return [math.prod(signal), stride, extent, border, int(coeff)]

        plans = once_per_distinct(plan, args_per_sample(args, batch_size), source.shapes)
        for sample_plan, in_offset, out_offset in zip(plans, source.offsets, out.offsets, strict=True):
            if sample_plan[0]:
                rows += [in_offset, out_offset, *sample_plan]
                most = max(most, sample_plan[0])
        launch_segments(
            device_id,
            MODULE,
            f"preemphasis_{SUFFIXES[work]}",
            BLOCK,
            stream,
            rows,
            _PREEMPHASIS_ROW,
            most,
            (src_ptr, dst_ptr),
        )
        if target != work:
            cast_flat(dst_ptr, work, out.base.ptr, target, out.elements, stream, device_id)
        return [out.result]


class GpuToDecibels:
    """The GPU kernel of ``to_decibels``; ``constants(args)`` is the CPU's
    ``(factor, min_ratio)``."""

    def __init__(self, op, constants):
        self.op = op
        self.constants = constants

    def check(self, ins, args):
        require_gpu_input_of(self.op, ins[0], (_F32,))

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        out = SampleOutputs(source.shapes, _F32, batch_size >= 0, device_id, stream)
        factor, min_ratio = self.constants(args)
        rows, most = [], 0
        for index, (shape, in_offset, out_offset) in enumerate(
            zip(source.shapes, source.offsets, out.offsets, strict=True)
        ):
            n = math.prod(shape)
            rows += [in_offset, out_offset, n, index]
            most = max(most, n)
        count = len(source.shapes)
        reference = np.float32(args["reference"])
        if reference == 0:
            inverse = device_array.DeviceArray.empty((max(count, 1),), _F32, device_id, stream)
            table = device_array.DeviceArray.from_host(np.asarray(rows, np.int64), device_id, stream)
            launch_blocks(
                device_id,
                MODULE,
                "decibels_inverse",
                _DECIBELS_THREADS,
                stream,
                count,
                (source.ptr, table.ptr),
                (inverse.ptr,),
            )
        else:
            with np.errstate(divide="ignore", over="ignore"):
                value = np.float32(1.0) if reference == 1.0 else np.float32(1.0 / np.float64(reference))
            inverse = device_array.DeviceArray.from_host(
                np.full(max(count, 1), value, _F32), device_id, stream
            )
        launch_segments(
            device_id,
            MODULE,
            "to_decibels",
            BLOCK,
            stream,
            rows,
            _DECIBELS_ROW,
            most,
            (source.ptr, out.base.ptr),
            (inverse.ptr, float(factor), float(min_ratio)),
        )
        return [out.result]


def _band_entries(bank, filters):
    """(starts, bins, weights) of a CPU MelBank: filter k's entries are ``starts[k]`` to
    ``starts[k + 1] - 1``, in the order the CPU adds them (the bins' order)."""
    order = np.arange(len(bank.bins))
    parts = []
    for targets, weights in ((bank.lower, bank.lower_weight), (bank.upper, bank.upper_weight)):
        inside = (targets >= 0) & (targets < filters)
        parts.append((targets[inside], order[inside], bank.bins[inside], weights[inside]))
    targets, order, bins, weights = (np.concatenate(column) for column in zip(*parts, strict=True))
    by_filter = np.lexsort((order, targets))
    starts = np.searchsorted(targets[by_filter], np.arange(filters + 1))
    return starts, bins[by_filter], weights[by_filter]


class GpuMelFilterBank:
    """The GPU kernel of ``mel_filter_bank``; ``bank(args, bins)`` is the CPU's MelBank."""

    def __init__(self, op, bank):
        self.op = op
        self.bank = bank

    def check(self, ins, args):
        require_gpu_input_of(self.op, ins[0], (_F32,))

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        axis, filters = args["_axis"], args["nfilter"]
        out_shapes = [shape[:axis] + (filters,) + shape[axis + 1 :] for shape in source.shapes]
        out = SampleOutputs(out_shapes, _F32, batch_size >= 0, device_id, stream)
        indices, weights, entries = ValueTable(np.int64), ValueTable(np.float32), {}
        rows, most = [], 0
        for shape, out_shape, in_offset, out_offset in zip(
            source.shapes, out_shapes, source.offsets, out.offsets, strict=True
        ):
            outer, bins, inner = _split(shape, axis)
            if bins not in entries:
                starts, entry_bins, entry_weights = _band_entries(self.bank(args, bins), filters)
                entries[bins] = (indices.add(starts), indices.add(entry_bins), weights.add(entry_weights))
            rows += [in_offset, out_offset, outer, bins, inner, filters, *entries[bins]]
            most = max(most, math.prod(out_shape))
        if most:
            # The tables live until the launch is queued (then the pool frees them in stream order).
            index_table, weight_table = indices.upload(device_id, stream), weights.upload(device_id, stream)
            launch_segments(
                device_id,
                MODULE,
                "mel_bands",
                BLOCK,
                stream,
                rows,
                _MEL_ROW,
                most,
                (source.ptr, out.base.ptr),
                (index_table.ptr, weight_table.ptr),
            )
        return [out.result]


class GpuDct:
    """The GPU kernel of ``mfcc``; ``matrix(length, count, dct_type, normalize)`` and
    ``lifter_scales(count, lifter)`` are the CPU's."""

    def __init__(self, op, matrix, lifter_scales):
        self.op = op
        self.matrix = matrix
        self.lifter_scales = lifter_scales

    def check(self, ins, args):
        require_gpu_input_of(self.op, ins[0], (_F32,))

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        axis = args["axis"]
        counts = [min(args["n_mfcc"], shape[axis]) for shape in source.shapes]
        out_shapes = [s[:axis] + (c,) + s[axis + 1 :] for s, c in zip(source.shapes, counts, strict=True)]
        out = SampleOutputs(out_shapes, _F32, batch_size >= 0, device_id, stream)
        values, rows, most = ValueTable(np.float32), [], 0
        lifter = float(np.float32(args["lifter"]))
        tables = {}  # (length, count): the offsets of the matrix and the lifter's scales
        for shape, count, out_shape, in_offset, out_offset in zip(
            source.shapes, counts, out_shapes, source.offsets, out.offsets, strict=True
        ):
            outer, length, inner = _split(shape, axis)
            if length == 0:
                continue
            offsets = tables.get((length, count))
            if offsets is None:
                matrix = values.add(self.matrix(length, count, args["dct_type"], args["normalize"]))
                scales = values.add(self.lifter_scales(count, lifter)) if lifter != 0 else -1
                offsets = tables[length, count] = (matrix, scales)
            rows += [in_offset, out_offset, outer, length, inner, count, *offsets]
            most = max(most, math.prod(out_shape))
        if most:
            table = values.upload(device_id, stream)
            launch_segments(
                device_id,
                MODULE,
                "dct_rows",
                BLOCK,
                stream,
                rows,
                _DCT_ROW,
                most,
                (source.ptr, out.base.ptr),
                (table.ptr,),
            )
        return [out.result]


@functools.lru_cache(maxsize=16)
def _twiddles(nfft):
    """cos and sin of 2 pi j / nfft, j < nfft, in float64, one after the other."""
    phase = 2.0 * np.pi * np.arange(nfft) / nfft
    return np.concatenate([np.cos(phase), np.sin(phase)])


# The radices spectrogram_mixed's passes take: 4 and 2 first, then odd primes up to
# SPECTROGRAM_MAX_RADIX (kernels/audio.cu).
_RADICES = (4, 2, 3, 5, 7, 11, 13)


@functools.lru_cache(maxsize=16)
def _mixed_plan(nfft):
    """spectrogram_mixed's plan for ``nfft`` (int32: passes, their radices, then the
    sample of each position), or None when its transform has a prime factor above 13.

    An even nfft is transformed as nfft / 2 complex values, an odd one as nfft."""
    size = nfft // 2 if nfft % 2 == 0 else nfft
    radices, rest = [], size
    for radix in _RADICES:
        while rest % radix == 0:
            radices.append(radix)
            rest //= radix
    if rest != 1 or not radices:
        return None
    # Position p's digits, lowest first, in the radices of the passes, read back as the
    # number whose highest digit is the first pass's: the sample that goes to p.
    positions = np.arange(size)
    order = np.zeros(size, np.int64)
    for radix in radices:
        order = order * radix + positions % radix
        positions //= radix
    return np.concatenate([[len(radices)], radices, order]).astype(np.int32)


class GpuSpectrogram:
    """The GPU kernel of ``spectrogram``; ``shape(shapes, args)`` is the CPU's shape rule."""

    def __init__(self, op, shape):
        self.op = op
        self.shape = shape

    def check(self, ins, args):
        require_gpu_input_of(self.op, ins[0], (_F32,))

    def __call__(self, inputs, args, batch_size, ctx):
        device_array, _, modules, _, _ = cuda()
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        out_shapes = once_per_distinct(
            lambda _, shape: self.shape([shape], args)[0], [args] * len(source.shapes), source.shapes
        )
        out = SampleOutputs(out_shapes, _F32, batch_size >= 0, device_id, stream)
        length, step, nfft = args["window_length"], args["window_step"], args["_nfft"]
        centred, time_major = args["center_windows"], args["layout"] == "tf"
        rows, most = [], 0
        for shape, out_shape, in_offset, out_offset in zip(
            source.shapes, out_shapes, source.offsets, out.offsets, strict=True
        ):
            windows = out_shape[0] if time_major else out_shape[1]
            rows += [in_offset, out_offset, math.prod(shape), windows, length // 2 if centred else 0]
            rows += [int(centred and args["reflect_padding"]), int(time_major)]
            most = max(most, windows)
        if not most:
            return [out.result]
        window = device_array.DeviceArray.from_host(args["_window"], device_id, stream)
        twiddles = device_array.DeviceArray.from_host(_twiddles(nfft), device_id, stream)
        table = device_array.DeviceArray.from_host(np.asarray(rows, np.int64), device_id, stream)
        power_of_two = nfft >= 4 and nfft & (nfft - 1) == 0
        plan = None if power_of_two else _mixed_plan(nfft)
        steps = None
        if power_of_two:
            # A real transform as a half-size complex one: nfft / 2 complex values, a butterfly
            # per thread (nfft / 4 in a pass).
            kernel = modules.get_function(device_id, MODULE, "spectrogram_fft")
            frame_values, threads, last = nfft, min(_FFT_THREADS, max(32, nfft // 4)), nfft.bit_length() - 1
        elif plan is not None:
            # A mixed-radix transform of nfft / 2 complex values (nfft even) or nfft.
            kernel = modules.get_function(device_id, MODULE, "spectrogram_mixed")
            size = len(plan) - 1 - int(plan[0])
            frame_values, threads, last = 2 * size, min(_FFT_THREADS, max(32, size // 2)), nfft
            steps = device_array.DeviceArray.from_host(plan, device_id, stream)
        else:
            kernel = modules.get_function(device_id, MODULE, "spectrogram_dft")
            frame_values, threads, last = length, _SPECTROGRAM_THREADS, nfft
        frame_bytes = frame_values * 8
        blocks = min(most, _MAX_WINDOW_BLOCKS if frame_bytes <= _SHARED_FRAME_BYTES else _SCRATCH_BLOCKS)
        count = len(source.shapes)
        for first in range(0, count, MAX_SEGMENTS):
            segments = min(MAX_SEGMENTS, count - first)
            scratch, shared = None, frame_bytes
            if frame_bytes > _SHARED_FRAME_BYTES:
                scratch = device_array.DeviceArray.empty(
                    (blocks * segments * frame_values,), _F64, device_id, stream
                )
                shared = 0
            kernel.launch(
                (blocks, segments),
                threads,
                stream.handle,
                source.ptr,
                out.base.ptr,
                table.view(first * _SPECTROGRAM_ROW * 8, (segments * _SPECTROGRAM_ROW,)).ptr,
                window.ptr,
                twiddles.ptr,
                *(() if steps is None else (steps.ptr,)),
                0 if scratch is None else scratch.ptr,
                length,
                step,
                last,
                args["power"],
                shared_bytes=shared,
            )
        return [out.result]


def _float_bits(value):
    """The bits of float32 ``value`` as an int (a descriptor entry)."""
    return int(np.float32(value).view(np.int32))


class GpuNonsilentRegion:
    """The GPU kernel of ``nonsilent_region`` (see the module docstring)."""

    def __init__(self, op):
        self.op = op

    def check(self, ins, args):
        require_gpu_input_of(self.op, ins[0], tuple(_NONSILENT_TYPES))

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        count = len(source.shapes)
        batch = batch_size >= 0
        begin = SampleOutputs([()] * count, np.dtype(np.int32), batch, device_id, stream)
        length = SampleOutputs([()] * count, np.dtype(np.int32), batch, device_id, stream)
        exact = source.dtype in _EXACT_TYPES
        reset = args["_reset"]
        with np.errstate(over="ignore"):
            factor = np.float32(np.power(10.0, args["cutoff_db"] / 10.0))
        reference = _float_bits(args["reference_power"])
        power_rows, rows, power_at, most_runs = [], [], 0, 0
        reference_max, factor_bits = int(args["_reference_max"]), _float_bits(factor)
        plans = {}  # per signal length: (windows, window, first run, run, the scale's bits, runs)
        for shape, in_offset, out_offset in zip(source.shapes, source.offsets, begin.offsets, strict=True):
            n = math.prod(shape)
            plan = plans.get(n)
            if plan is None:
                plan = plans[n] = self._plan(n, args["window_length"], exact, reset)
            windows, window, first_run, run, scale_bits, runs = plan
            if windows:
                power_rows += [in_offset, windows, window, first_run, run, power_at, scale_bits]
                most_runs = max(most_runs, runs)
            rows += [power_at, windows, window, out_offset, reference_max, reference, factor_bits]
            power_at += windows
        power = device_array.DeviceArray.empty((max(power_at, 1),), _F32, device_id, stream)
        launch_segments(
            device_id,
            MODULE,
            f"nonsilent_power_{_NONSILENT_TYPES[source.dtype]}",
            BLOCK,
            stream,
            power_rows,
            _NONSILENT_POWER_ROW,
            most_runs,
            (source.ptr, power.ptr),
        )
        table = device_array.DeviceArray.from_host(np.asarray(rows, np.int64), device_id, stream)
        launch_blocks(
            device_id,
            MODULE,
            "nonsilent_region",
            _NONSILENT_THREADS,
            stream,
            count,
            (power.ptr, table.ptr),
            (begin.base.ptr, length.base.ptr),
        )
        return [begin.result, length.result]

    @staticmethod
    def _plan(n, window_length, exact, reset):
        """A signal of ``n`` samples: its windows, their length, the runs of windows the
        power kernel's threads sum (the first one and the others; see the kernel), the
        bits of the float32 1 / window and the number of runs."""
        window = min(window_length, n)
        windows = n - window + 1 if n else 0
        if exact:
            first_run = run = _EXACT_RUN
        elif reset < 1:
            first_run = run = max(windows, 1)
        else:
            first_run, run = max(1, reset - window + 1), reset
        scale = _float_bits(np.float32(1.0) / np.float32(window)) if windows else 0
        runs = 1 if windows <= first_run else 1 + -(-(windows - first_run) // run)
        return windows, window, first_run, run, scale, runs


class GpuResample:
    """The GPU kernel of ``audio_resample``; ``rates(length, args)`` is the CPU's
    ``(in_rate, out_rate, out_length)`` of a sample and ``table(lobes)`` its filter."""

    def __init__(self, op, rates, table):
        self.op = op
        self.rates = rates
        self.table = table

    def _plan(self, args, shape):
        """``(in_rate, out_rate, out_length, the bits of the float64 step)`` of a sample."""
        in_rate, out_rate, out_length = self.rates(shape[0], args)
        return in_rate, out_rate, out_length, int(np.float64(in_rate / out_rate).view(np.int64))

    def check(self, ins, args):
        require_gpu_input_of(self.op, ins[0], tuple(_RESAMPLE_TYPES))

    def __call__(self, inputs, args, batch_size, ctx):
        device_array, launch, modules, _, _ = cuda()
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        target = np.dtype(args["dtype"].numpy) if args["dtype"] is not None else source.dtype
        plans = once_per_distinct(self._plan, args_per_sample(args, batch_size), source.shapes)
        out_shapes = [(plan[2],) + shape[1:] for plan, shape in zip(plans, source.shapes, strict=True)]
        out = SampleOutputs(out_shapes, target, batch_size >= 0, device_id, stream)
        keep = []
        # The input as float32 in -1..1 (0..1 for an unsigned target), as the CPU's _to_unit.
        shift = (
            1
            if target.kind == "u" and source.dtype.kind != "u"
            else (-1 if source.dtype.kind == "u" and target.kind != "u" else 0)
        )
        src_ptr = source.ptr
        if source.dtype != _F32 or shift:
            n = max((o + math.prod(s) for o, s in zip(source.offsets, source.shapes, strict=True)), default=0)
            unit = device_array.DeviceArray.empty((max(n, 1),), _F32, device_id, stream)
            keep.append(unit)
            inverse = (
                1.0 if source.dtype == _F32 else float(np.float32(1 / np.float32(np.iinfo(source.dtype).max)))
            )
            if n:
                kernel = modules.get_function(
                    device_id, MODULE, f"resample_unit_{_RESAMPLE_TYPES[source.dtype]}"
                )
                kernel.launch(
                    launch.grid_for(n, BLOCK), BLOCK, stream.handle, source.ptr, unit.ptr, inverse, shift, n
                )
            src_ptr = unit.ptr
        dst_ptr = output_in(_F32, out, keep, stream, device_id)
        rows, most = [], 0
        for (_, _, out_length, step), shape, in_offset, out_offset in zip(
            plans, source.shapes, source.offsets, out.offsets, strict=True
        ):
            channels = shape[1] if len(shape) == 2 else 1
            if out_length == 0 or channels == 0:
                continue
            rows += [in_offset, out_offset, shape[0], out_length, channels, step]
            most = max(most, out_length)
        if most:
            lobes = args["_lobes"]
            table = device_array.DeviceArray.from_host(self.table(lobes), device_id, stream)
            launch_segments(
                device_id,
                MODULE,
                "resample_sinc",
                BLOCK,
                stream,
                rows,
                _RESAMPLE_ROW,
                most,
                (src_ptr, dst_ptr),
                (table.ptr, lobes),
            )
        if target != _F32:
            # Back from -1..1: times the type's largest value, then the cast's rounding and saturation.
            n = out.elements
            if n:
                factor = float(np.float32(np.iinfo(target).max))
                kernel = modules.get_function(device_id, MODULE, "resample_scale")
                kernel.launch(launch.grid_for(n, BLOCK), BLOCK, stream.handle, dst_ptr, factor, n)
            cast_flat(dst_ptr, _F32, out.base.ptr, target, n, stream, device_id)
        return [out.result]
