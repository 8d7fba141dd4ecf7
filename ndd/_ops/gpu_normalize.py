"""The GPU kernel of ``ndd.normalize``, queued on ``kernels/normalize.cu``.

Three launches per call, each over the whole batch:

1. ``normalize_mean_<in>``: one block per statistic (a mean over the reduced axes
   of one sample, or of every sample with ``batch=True``) sums its elements in
   float64; skipped when ``mean`` is given (its values are uploaded instead).
2. ``normalize_factor_<in>``: the same blocks sum the squares of the float32
   deviations from the float32 mean, in float64, and turn the variance into the
   float32 factor ``scale / sqrt(variance + epsilon)``; a given ``stddev`` gives
   the factors on the host (the CPU's own function) and only the means are
   converted.
3. ``normalize_apply_<in>_to_<out>``: every element, ``(x - mean) * factor + shift``
   in float32, converted as on the CPU.

The sums run in another order than numpy's, so the statistics can differ from the
CPU's in their last bits (the results then by a float32 rounding). The reduced
axes, the given statistics' shapes and their checks are the operator's own
functions (``normalize.py``).

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import functools
import math

import numpy as np

from .._prepare.args import InvalidArgumentError
from .gpu_layout import c_strides
from .gpu_segments import (
    GpuSamples,
    SampleOutputs,
    args_per_sample,
    cuda,
    launch_blocks,
    launch_segments,
    once_per_distinct,
    require_gpu_input_of,
    unsupported,
)
from .gpu_types import suffixes

__all__ = ["GpuNormalize", "MODULE"]

MODULE = "normalize"
BLOCK = 256
# NORMALIZE_MAX_DIMS, NORMALIZE_THREADS, STAT_ROW, PART_ROW and APPLY_ROW of kernels/normalize.cu.
_MAX_DIMS = 6
_THREADS = 256
_STAT_ROW = 3
_PART_ROW = 3 + 2 * _MAX_DIMS
_APPLY_ROW = 5 + 2 * _MAX_DIMS
TYPES = suffixes(np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32)


def _part(offset, shape, strides, axes):
    """A part row: the reduced elements of one statistic in one sample."""
    extents = [shape[a] for a in axes]
    row = [offset, math.prod(extents), len(axes)]
    for a in axes:
        row += [shape[a], strides[a]]
    return row + [0, 0] * (_MAX_DIMS - len(axes))


@functools.lru_cache(maxsize=256)
def _parts_of(shape, axes, stat_shape):
    """The part rows (read-only, one per statistic) of a sample of ``shape`` at element
    offset 0, and the elements each part reduces."""
    count = math.prod(stat_shape)
    strides = c_strides(shape)
    parts = np.empty((count, _PART_ROW), np.int64)
    parts[:] = _part(0, shape, strides, axes)
    # The element index of every statistic's first element: the kept axes' indices.
    grid = np.indices(stat_shape, dtype=np.int64).reshape(len(stat_shape), count)
    parts[:, 0] = sum(
        (grid[d] * strides[d] for d in range(len(shape)) if d not in axes), np.zeros(count, np.int64)
    )
    parts.flags.writeable = False
    return parts, math.prod(shape[a] for a in axes)


@functools.lru_cache(maxsize=256)
def _apply_dims(shape, stat_shape):
    """The (extent, statistics' stride) words of an apply row, padded to _MAX_DIMS."""
    stat_strides = [0 if n == 1 else s for n, s in zip(stat_shape, c_strides(stat_shape), strict=True)]
    words = []
    for extent, stride in zip(shape, stat_strides, strict=True):
        words += [extent, stride]
    return tuple(words + [0, 0] * (_MAX_DIMS - len(shape)))


class _Statistics:
    """The statistics of a call: rows of statistics and parts (int64 arrays), and per
    sample the offset of its first statistic and the statistics' shape."""

    def __init__(self):
        self._parts, self._rows = [], []
        self.count = 0
        self._part_count = 0

    def add(self, members, stat_shape, axes):
        """Statistics of ``stat_shape`` over ``members`` [(element offset, shape)] together;
        the first one's index. Statistic s's parts are the ``len(members)`` rows from
        s * len(members) of those this call adds."""
        first, count = self.count, math.prod(stat_shape)
        laid = [(offset, _parts_of(tuple(shape), axes, stat_shape)) for offset, shape in members]
        if len(laid) == 1:
            offset, (parts, total) = laid[0]
            parts = parts.copy()
            parts[:, 0] += offset
        else:
            parts = np.stack([p for _, (p, _) in laid], axis=1)
            parts[:, :, 0] += np.array([offset for offset, _ in laid], np.int64)
            total = sum(t for _, (_, t) in laid)
        self._parts.append(parts.reshape(-1))
        self._rows.append((self._part_count, count, len(members), total))
        self._part_count += count * len(members)
        self.count += count
        return first

    @property
    def parts(self):
        return np.concatenate(self._parts) if self._parts else np.zeros(0, np.int64)

    @property
    def rows(self):
        """Per statistic: its first part, its parts and the elements they reduce."""
        if not self._rows:
            return np.zeros(0, np.int64)
        start, count, members, total = np.array(self._rows, np.int64).T
        rows = np.empty((int(count.sum()), 3), np.int64)
        within = np.arange(len(rows), dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
        rows[:, 0] = np.repeat(start, count) + within * np.repeat(members, count)
        rows[:, 1] = np.repeat(members, count)
        rows[:, 2] = np.repeat(total, count)
        return rows.reshape(-1)


class GpuNormalize:
    """The GPU kernel of ``normalize`` (see the module docstring). ``reduced_axes(shape,
    args)`` and ``param(shape, args, name)`` are the CPU's; ``given_inverse(stddev,
    epsilon)`` the CPU's inverse of a given standard deviation."""

    def __init__(self, op, reduced_axes, param, given_inverse):
        self.op = op
        self.reduced_axes = reduced_axes
        self.param = param
        self.given_inverse = given_inverse

    def check(self, ins, args):
        """Prepare phase: a GPU input of a type with a kernel."""
        require_gpu_input_of(self.op, ins[0], TYPES)

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        sample_args = args_per_sample(args, batch_size)
        target = np.dtype(args["dtype"].numpy)
        out = SampleOutputs(source.shapes, target, batch_size >= 0, device_id, stream)
        if not source.shapes or max(math.prod(s) for s in source.shapes) == 0:
            return [out.result]
        stats = _Statistics()
        plans = []  # per sample: (first statistic, statistics' shape, axes)
        given_means, given_factors = [], []
        groups = (
            [list(range(len(source.shapes)))] if args["batch"] else [[i] for i in range(len(source.shapes))]
        )
        group_plans = once_per_distinct(
            lambda a, shape: self._plan(shape, a, args["epsilon"]),
            [sample_args[group[0]] for group in groups],
            [source.shapes[group[0]] for group in groups],
        )
        for group, (axes, stat_shape, given_mean, given_factor) in zip(groups, group_plans, strict=True):
            shape = source.shapes[group[0]]
            if args["batch"]:
                for i in group:
                    kept = tuple(n for d, n in enumerate(source.shapes[i]) if d not in axes)
                    if len(source.shapes[i]) != len(shape) or kept != tuple(
                        n for d, n in enumerate(shape) if d not in axes
                    ):
                        raise InvalidArgumentError(
                            f"{self.op.qualname}: with batch=True the samples must have equal extents in the "
                            f"axes not reduced, got shapes {source.shapes}"
                        )
            first = stats.add([(source.offsets[i], source.shapes[i]) for i in group], stat_shape, axes)
            for i in group:
                plans.append((i, first, stat_shape))
            given_means.append(given_mean)
            given_factors.append(given_factor)
        if any(m is not None for m in given_means) != all(m is not None for m in given_means) or any(
            f is not None for f in given_factors
        ) != all(f is not None for f in given_factors):
            raise unsupported(self.op, "'mean' or 'stddev' given for some samples only")
        rows = device_array.DeviceArray.from_host(stats.rows, device_id, stream)
        parts = device_array.DeviceArray.from_host(stats.parts, device_id, stream)
        suffix = TYPES[source.dtype]
        if given_means[0] is not None:
            means = device_array.DeviceArray.from_host(
                np.concatenate(given_means).astype(np.float64), device_id, stream
            )
        else:
            means = device_array.DeviceArray.empty((stats.count,), np.float64, device_id, stream)
            launch_blocks(
                device_id,
                MODULE,
                f"normalize_mean_{suffix}",
                _THREADS,
                stream,
                stats.count,
                (source.ptr, parts.ptr, means.ptr, rows.ptr),
            )
        factors_given = None
        if given_factors[0] is not None:
            factors_given = device_array.DeviceArray.from_host(
                np.concatenate(given_factors), device_id, stream
            )
        means32 = device_array.DeviceArray.empty((stats.count,), np.float32, device_id, stream)
        factors = device_array.DeviceArray.empty((stats.count,), np.float32, device_id, stream)
        launch_blocks(
            device_id,
            MODULE,
            f"normalize_factor_{suffix}",
            _THREADS,
            stream,
            stats.count,
            (
                source.ptr,
                parts.ptr,
                means.ptr,
                0 if factors_given is None else factors_given.ptr,
                means32.ptr,
                factors.ptr,
                rows.ptr,
            ),
            (int(args["ddof"]), float(args["epsilon"]), float(args["scale"])),
        )
        apply_rows, most = [], 0
        for i, first, stat_shape in plans:
            shape = source.shapes[i]
            apply_rows += [source.offsets[i], out.offsets[i], math.prod(shape), len(shape), first]
            apply_rows += _apply_dims(shape, stat_shape)
            most = max(most, math.prod(shape))
        launch_segments(
            device_id,
            MODULE,
            f"normalize_apply_{suffix}_to_{TYPES[target]}",
            BLOCK,
            stream,
            apply_rows,
            _APPLY_ROW,
            most,
            (source.ptr, out.base.ptr, means32.ptr, factors.ptr),
            (float(np.float32(args["shift"])),),
        )
        return [out.result]

    def _plan(self, shape, a, epsilon):
        """``(reduced axes, statistics' shape, given means, given factors)`` of a sample
        of ``shape`` with arguments ``a`` (the given ones None where not given)."""
        axes = tuple(self.reduced_axes(shape, a))
        stat_shape = tuple(1 if d in axes else n for d, n in enumerate(shape))
        mean = self.param(shape, a, "mean")
        stddev = self.param(shape, a, "stddev")
        given_mean = None if mean is None else self._broadcast(mean, stat_shape, "mean")
        given_factor = None
        if stddev is not None:
            inverse = self.given_inverse(self._broadcast(stddev, stat_shape, "stddev"), epsilon)
            given_factor = (
                (np.asarray(inverse) * a["scale"]).astype(np.float32).reshape(math.prod(stat_shape))
            )
        return axes, stat_shape, given_mean, given_factor

    def _broadcast(self, value, stat_shape, name):
        try:
            return np.broadcast_to(np.asarray(value, np.float64), stat_shape).reshape(-1)
        except ValueError:
            raise unsupported(
                self.op, f"a '{name}' of shape {np.shape(value)} that varies along reduced axes"
            ) from None
