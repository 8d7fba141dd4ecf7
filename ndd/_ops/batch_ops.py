"""Operators that mix the samples of a batch: permute_batch, batch_permutation."""

import numpy as np

from .._prepare.invocation import PendingArg, PerSample, per_sample_args
from .._prepare.storage import BatchBase
from .._types import int32
from .gpu_layout import GpuPick
from .random_ops import RNG_ARG
from .schema import Arg, Input, Operator, batch_samples_of, same_as_input

# ---------------------------------------------------------------------------
# permute_batch


def _sample_index(value, i, batch_size):
    """The input sample that output sample ``i`` takes; ``value`` is the indices
    argument for that sample: one index, or the whole list of ``batch_size``."""
    _check_index_values(value)
    if value.ndim == 0:
        index = value
    elif value.ndim == 1 and value.shape[0] == batch_size:
        index = value[i]
    else:
        raise ValueError(
            f"ndd.permute_batch: 'indices' must be one index per sample or a list of {batch_size} "
            f"indices (the batch size), got {value.tolist()}"
        )
    index = int(index)
    if not 0 <= index < batch_size:
        raise IndexError(
            f"ndd.permute_batch: 'indices' value {index} is out of range for a batch of {batch_size} samples"
        )
    return index


def _check_index_values(value):
    if value.dtype.kind in "iu":
        return
    if value.dtype.kind == "f" and np.all(np.mod(value, 1) == 0):
        return
    raise TypeError(
        f"ndd.permute_batch: 'indices' must hold integers, got {value.dtype} values {value.tolist()}"
    )


def _permutation(values, batch_size):
    """The input sample index of every output sample; ``values`` holds the indices
    argument of each sample."""
    return [_sample_index(v, i, batch_size) for i, v in enumerate(values)]


def _permute_types(ins, args):
    indices, x = args["indices"], ins[0]
    if type(indices) is PendingArg:
        return same_as_input(ins, args)
    per_sample = type(indices) is PerSample
    if isinstance(x, BatchBase):
        # The batch size is known: check the indices at the call rather than when running.
        batch_size = x._batch_size
        _permutation(indices.values if per_sample else [indices] * batch_size, batch_size)
    else:
        for value in indices.values if per_sample else [indices]:
            _check_index_values(value)
    return same_as_input(ins, args)


def _permute_kernel(arrays, args):
    # Sample mode: a batch of one sample, which index 0 selects.
    _sample_index(args["indices"], 0, 1)
    return arrays[0]


def _permute_batch_kernel(inputs, sample_args, batch_size, ctx):
    data = inputs[0]
    samples = batch_samples_of(data, batch_size)
    order = _permutation([a["indices"] for a in sample_args], batch_size)
    return [[samples[j] for j in order]]


def _gpu_order(args, batch_size):
    """The checked order of a call's samples (sample mode, ``batch_size`` -1: index 0
    of a batch of one)."""
    if batch_size < 0:
        return [_sample_index(args["indices"], 0, 1)]
    return _permutation([a["indices"] for a in per_sample_args(args, batch_size)], batch_size)


PERMUTE_BATCH = Operator(
    "permute_batch",
    inputs=[Input("input", doc="The batch to reorder.")],
    args=[
        Arg(
            "indices",
            "array",
            per_sample=True,
            doc="For each output sample, the index of the input sample it takes: a list of "
            "``batch_size`` indices, or a Batch of scalar indices. Indices may repeat.",
            type_doc="list of int",
        )
    ],
    infer_types=_permute_types,
    kernel=_permute_kernel,
    batch_kernel=_permute_batch_kernel,
    doc="Reorder the samples of a batch.\n\n"
    "Output sample ``i`` is input sample ``indices[i]``. Samples may be repeated or left out; "
    "the output has as many samples as the batch.",
)

PERMUTE_BATCH.gpu_kernel = GpuPick(PERMUTE_BATCH, _gpu_order)


# ---------------------------------------------------------------------------
# batch_permutation


def _single_cycle(generator, n):
    """A permutation of 0..n-1 that is one cycle through every index (so without
    fixed points), uniformly drawn: the reference draws these only, not the other
    derangements (for 4 samples, 6 of the 9). A random order of the indices read as
    a cycle: each index goes to the next one in it."""
    order = generator.permutation(n)
    out = np.empty(n, np.int64)
    out[order] = np.roll(order, -1)
    return out


def _random_order(generator, n, allow_repetitions, no_fixed_points):
    if n < 2:
        # With one sample, index 0 is the only choice, fixed point or not.
        return np.zeros(n, np.int64)
    if allow_repetitions and no_fixed_points:
        draws = generator.integers(0, n - 1, size=n)
        return draws + (draws >= np.arange(n))
    if allow_repetitions:
        return generator.integers(0, n, size=n)
    if no_fixed_points:
        return _single_cycle(generator, n)
    return generator.permutation(n)


def _batch_permutation_types(ins, args):
    return [(int32, "")]


def _scalar_shape(shapes, args):
    return [()]


def _batch_permutation_kernel(inputs, sample_args, batch_size, ctx):
    if batch_size == 0:
        return [[]]
    args = sample_args[0]
    generator = args["rng"].generator()
    order = _random_order(generator, batch_size, args["allow_repetitions"], args["no_fixed_points"])
    return [order.astype(np.int32)]


BATCH_PERMUTATION = Operator(
    "batch_permutation",
    args=[
        Arg(
            "allow_repetitions",
            "bool",
            False,
            doc="Draw each index independently, so that indices may repeat and some may be missing.",
        ),
        Arg("no_fixed_points", "bool", False, doc="Never give sample ``i`` the index ``i``."),
        RNG_ARG,
    ],
    infer_types=_batch_permutation_types,
    infer_shape=_scalar_shape,
    batch_kernel=_batch_permutation_kernel,
    needs_batch=True,
    doc="Draw a random permutation of the sample indices 0 ... batch_size - 1.\n\n"
    "Each sample of the result is an int32 scalar; feed the batch to ``permute_batch`` as "
    "``indices``. ``batch_size`` is required.",
)

OPERATORS = [PERMUTE_BATCH, BATCH_PERMUTATION]
