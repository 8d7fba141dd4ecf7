"""Basic indexing: ``tensor[...]`` and ``batch.slice[...]`` (integers, slices with
steps, Ellipsis; no fancy indexing). Results are views of the input."""

import math

import numpy as np

from .. import _types
from .._errors import raise_as_runtime_error
from .._prepare.call import invoke
from .._prepare.invocation import PerSample
from .._prepare.storage import BatchBase, TensorBase, batch_samples
from .gpu_layout import GpuWindow, c_strides
from .schema import Arg, Input, Operator

__all__ = ["subscript"]

_FULL = slice(None)


def _component(c, what):
    """An index component as an int, a slice or Ellipsis. As in the reference, a
    number that is data (a 0-D Tensor, numpy scalar or array, also as slice bounds) is
    rounded to the nearest integer, halves away from zero; a Python float is cut toward
    zero, as ``int()`` does; booleans are 0 and 1."""
    if c is Ellipsis:
        return c
    if isinstance(c, slice):
        bounds = (c.start, c.stop, c.step)
        if all(v is None or type(v) is int for v in bounds):
            return c
        if any(v is Ellipsis or isinstance(v, slice) for v in bounds):
            raise TypeError(f"{what}: slice bounds must be integers or None, got {c}")
        return slice(*(None if v is None else _component(v, what) for v in bounds))
    if isinstance(c, (np.generic, np.ndarray)) and c.ndim == 0 and c.dtype.kind in "biuf":
        return index_value(c.item(), what)  # before float: numpy's float64 is one
    if isinstance(c, (int, float)):
        return _truncated(c, what)
    if isinstance(c, TensorBase):
        if c.ndim == 0 and (c.dtype.is_integer or c.dtype.is_float or c.dtype == _types.bool):
            return index_value(c.item(), what)
        raise TypeError(f"{what}: a Tensor index must be a 0-D number, got {c.dtype} {c.shape}")
    if hasattr(c, "__index__"):
        return c.__index__()
    if c is None:
        raise TypeError(f"{what}: None (newaxis) is not supported; use ndd.expand_dims")
    raise TypeError(f"{what}: only integers, slices and Ellipsis are supported, got {type(c).__name__}")


def _truncated(value, what):
    """A Python number index: a float cut toward zero."""
    if type(value) is float and not math.isfinite(value):
        raise IndexError(f"{what}: index {value} is not a finite number")
    return int(value)


def index_value(value, what):
    """An index given as data (a Tensor's element): a float rounded to the nearest
    integer, halves away from zero."""
    if not isinstance(value, float):
        return int(value)
    if not math.isfinite(value):
        raise IndexError(f"{what}: index {value} is not a finite number")
    magnitude = math.floor(abs(value))
    magnitude += abs(value) - magnitude >= 0.5
    return int(math.copysign(magnitude, value))


def _expand(index, ndim, what):
    """A full-length tuple of ints and slices."""
    index = index if isinstance(index, tuple) else (index,)
    if sum(1 for c in index if c is Ellipsis) > 1:
        raise IndexError(f"{what}: an index can only have a single ellipsis")
    explicit = sum(1 for c in index if c is not Ellipsis)
    if explicit > ndim:
        raise IndexError(f"{what}: too many indices: {explicit} for {ndim} dimensions")
    out = []
    for c in index:
        if c is Ellipsis:
            out += [_FULL] * (ndim - explicit)
        else:
            out.append(c)
    out += [_FULL] * (ndim - len(out))
    return tuple(out)


def _shape_after(index, shape, what):
    out = []
    for d, (c, n) in enumerate(zip(index, shape, strict=True)):
        if isinstance(c, slice):
            out.append(len(range(*c.indices(n))))
        elif not -n <= c < n:
            raise IndexError(f"{what}: index {c} is out of range for axis {d} of length {n}")
    return tuple(out)


def _infer_types(ins, args):
    x = ins[0]
    index = args["index"]
    if type(index) is PerSample:
        index = index.values[0] if index.values else ()
    layout = x._layout
    if layout:
        layout = "".join(ch for ch, c in zip(layout, index, strict=False) if isinstance(c, slice))
    return [(x._dtype, layout)]


def _infer_shape(shapes, args):
    return [_shape_after(args["index"], shapes[0], "ndd indexing")]


def _kernel(arrays, args):
    # Indexing every dimension with an int gives a numpy scalar; keep a 0-D array.
    return np.asarray(arrays[0][args["index"]])


SUBSCRIPT = Operator(
    "_tensor_subscript",
    inputs=[Input("input")],
    args=[Arg("index", "any")],
    infer_types=_infer_types,
    infer_shape=_infer_shape,
    kernel=_kernel,
    doc="Basic indexing of each sample.",
)


def _gpu_window(in_shape, args):
    """The GPU window of ``sample[index]``: integers move the start and drop their
    dimension, slices move it and scale the stride by their step (negative too)."""
    offset, shape, strides = 0, [], []
    for c, n, stride in zip(args["index"], in_shape, c_strides(in_shape), strict=True):
        if isinstance(c, slice):
            start, _, step = c.indices(n)
            shape.append(len(range(*c.indices(n))))
            offset += start * stride
            strides.append(step * stride)
        else:
            offset += (c + n if c < 0 else c) * stride
    return offset, tuple(shape), tuple(strides)


SUBSCRIPT.gpu_kernel = GpuWindow(SUBSCRIPT, _gpu_window)


def _resolve_batch_component(c, batch_size, what):
    """Split a component whose slice bounds are Batches into per-sample components."""
    if isinstance(c, slice) and any(isinstance(v, BatchBase) for v in (c.start, c.stop, c.step)):
        parts = []
        for v in (c.start, c.stop, c.step):
            if isinstance(v, BatchBase):
                if v.batch_size != batch_size:
                    raise ValueError(f"{what}: Inconsistent batch size: {v.batch_size} != {batch_size}")
                parts.append([index_value(s.reshape(-1)[0].item(), what) for s in batch_samples(v)])
            else:
                parts.append([v] * batch_size)
        return [slice(*p) for p in zip(*parts, strict=True)]
    if isinstance(c, BatchBase):
        return [index_value(s.reshape(-1)[0].item(), what) for s in batch_samples(c)]
    return None


def subscript(x, index):
    """``x[index]`` for a Tensor, or the same index on every sample of a Batch. Its
    errors are also RuntimeErrors (``ndd/_errors.py``); an IndexError stays one, which
    ends the iteration over a Tensor's first dimension."""
    try:
        return _subscript(x, index)
    except Exception as exc:  # noqa: BLE001 - converted, not handled
        raise_as_runtime_error(exc)
        raise


def _subscript(x, index):
    what = "Tensor indexing" if isinstance(x, TensorBase) else "Batch.slice"
    raw = index if isinstance(index, tuple) else (index,)
    if isinstance(x, BatchBase):
        per_sample = [_resolve_batch_component(c, x._batch_size, what) for c in raw]
        if any(p is not None for p in per_sample):
            samples = [
                tuple(p[i] if p is not None else c for c, p in zip(raw, per_sample, strict=True))
                for i in range(x._batch_size)
            ]
            ndim = x.ndim
            indices = [_expand(tuple(_component(c, what) for c in s), ndim, what) for s in samples]
            return invoke(SUBSCRIPT, (x,), None, None, {"index": PerSample(indices)})
    components = tuple(_component(c, what) for c in raw)
    ndim = x.ndim
    full = _expand(components, ndim, what)
    if all(c == _FULL for c in full):
        return x
    if isinstance(x, TensorBase) and x._shape is not None:
        _shape_after(full, x._shape, what)  # raise IndexError here, at the call site
    return invoke(SUBSCRIPT, (x,), None, None, {"index": full})
