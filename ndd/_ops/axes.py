"""Axis arguments shared by slice, pad and cat: dimensions chosen by index or by
layout name, and the input layout their kernels resolve names with."""

# Kernels need the input layout (to resolve axis names) but only receive arrays and
# arguments: record_layout, a prepare_args hook, records it under this key.
INPUT_LAYOUT = "_input_layout"


def record_layout(ins, args):
    """prepare_args of slice, pad and cat: keep the layout of input 0 in ``args``
    under ``INPUT_LAYOUT``."""
    args[INPUT_LAYOUT] = ins[0]._layout


def _axis_index(op, name, axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op}: '{name}' has axis {axis}, out of range for {ndim}-D input")
    return axis + ndim if axis < 0 else axis


def _unique(op, name, indices, given):
    seen = set()
    for i in indices:
        if i in seen:
            raise ValueError(f"{op}: '{name}' refers to axis {i} more than once, got {given!r}")
        seen.add(i)
    return tuple(indices)


def axes_from_list(op, axes, ndim):
    """The dimensions of a ``ndim``-D input given by index in argument ``axes`` of
    operator ``op`` (negative ones count from the end), checked and non-negative."""
    return _unique(op, "axes", [_axis_index(op, "axes", a, ndim) for a in axes], axes)


def axes_from_names(op, names, layout):
    """The dimensions given by their names in ``layout`` in argument ``axis_names``
    of operator ``op``, in the order of ``names``."""
    for ch in names:
        if ch not in layout:
            raise ValueError(f"{op}: 'axis_names' has {ch!r}, which is not in the input layout {layout!r}")
    return _unique(op, "axis_names", [layout.index(ch) for ch in names], names)
