"""Joining inputs: cat (along an existing dimension) and stack (along a new one).

Deliberate divergence from the reference: ``cat`` with ``axis=0`` given
explicitly next to ``axis_name`` uses ``axis_name``; the reference rejects the
pair whatever the value of ``axis``.
"""

import numpy as np

from .axes import INPUT_LAYOUT, record_layout
from .gpu_layout import GpuJoin, c_strides
from .schema import Arg, Input, Operator


def _check_single_char(op, name):
    if name is not None and len(name) != 1:
        raise ValueError(f"{op}: 'axis_name' must be a single character, got {name!r}")


def _common_dtype(op, ins):
    dtype = ins[0]._dtype
    for k, x in enumerate(ins[1:], 1):
        if x._dtype != dtype:
            raise TypeError(
                f"{op}: all inputs must have the same dtype; input 0 is {dtype}, input {k} is {x._dtype}"
            )
    return dtype


def _cat_types(ins, args):
    name = args["axis_name"]
    _check_single_char("ndd.cat", name)
    if name is not None:
        if args["axis"] != 0:
            raise ValueError("ndd.cat: 'axis' and 'axis_name' cannot be used together")
        if name not in ins[0]._layout:
            raise ValueError(
                f"ndd.cat: 'axis_name' {name!r} is not in the layout {ins[0]._layout!r} of input 0"
            )
    return [(_common_dtype("ndd.cat", ins), ins[0]._layout)]


def _same_ndim(op, shapes):
    ndim = len(shapes[0])
    for k, s in enumerate(shapes[1:], 1):
        if len(s) != ndim:
            raise ValueError(
                f"{op}: all inputs must have the same number of dimensions; input 0 has shape "
                f"{tuple(shapes[0])}, input {k} has {tuple(s)}"
            )
    return ndim


def _cat_axis(args, ndim):
    if args["axis_name"] is not None:
        return args[INPUT_LAYOUT].index(args["axis_name"])
    axis = args["axis"]
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"ndd.cat: 'axis' {axis} is out of range for {ndim}-D inputs (accepted: {-ndim}..{ndim - 1})"
        )
    return axis + ndim if axis < 0 else axis


def _cat_out_shape(shapes, args):
    ndim = _same_ndim("ndd.cat", shapes)
    axis = _cat_axis(args, ndim)
    first = shapes[0]
    for k, s in enumerate(shapes[1:], 1):
        if any(a != b for d, (a, b) in enumerate(zip(first, s, strict=True)) if d != axis):
            raise ValueError(
                f"ndd.cat: the inputs may differ only along axis {axis}; input 0 has shape "
                f"{tuple(first)}, input {k} has {tuple(s)}"
            )
    return first[:axis] + (sum(s[axis] for s in shapes),) + first[axis + 1 :]


def _cat_shape(shapes, args):
    return [_cat_out_shape(tuple(tuple(s) for s in shapes), args)]


def _cat_kernel(arrays, args):
    _cat_out_shape(tuple(a.shape for a in arrays), args)
    return np.concatenate(arrays, axis=_cat_axis(args, arrays[0].ndim))


CAT = Operator(
    "cat",
    inputs=[Input("input_0", doc="The first input."), Input("inputs", variadic=True, doc="More inputs.")],
    args=[
        Arg(
            "axis",
            "int",
            0,
            doc="The dimension to join along (negative counts from the end).",
            type_doc="int",
        ),
        Arg(
            "axis_name",
            "str",
            None,
            doc="The layout name of the dimension to join along (instead of ``axis``).",
            type_doc="str",
        ),
    ],
    prepare_args=record_layout,
    infer_types=_cat_types,
    infer_shape=_cat_shape,
    kernel=_cat_kernel,
    doc="Concatenate the inputs along an existing dimension.\n\n"
    "The inputs must have the same dtype and number of dimensions and may differ in "
    "extent only along the joined dimension. The result has the layout of the first input.",
)


def _cat_place(shapes, args):
    """The output shape of a GPU cat and where each input lands in it (element
    offset, element strides): one after another along the axis."""
    out_shape = _cat_out_shape(tuple(tuple(s) for s in shapes), args)
    axis = _cat_axis(args, len(out_shape))
    strides = c_strides(out_shape)
    places, at = [], 0
    for s in shapes:
        places.append((at * strides[axis], strides))
        at += s[axis]
    return out_shape, places


CAT.gpu_kernel = GpuJoin(CAT, _cat_place)
CAT.skip_absent_inputs = True


def _stack_position(axis, ndim):
    if not -ndim <= axis <= ndim:
        raise ValueError(
            f"ndd.stack: 'axis' {axis} is out of range for {ndim}-D inputs (accepted: {-ndim}..{ndim})"
        )
    # Negative positions count from the end of the output: -1 appends the new axis.
    return axis + ndim + 1 if axis < 0 else axis


def _stack_types(ins, args):
    name = args["axis_name"]
    _check_single_char("ndd.stack", name)
    layout = ""
    if name is not None:
        base = ins[0]._layout
        if base:
            pos = _stack_position(args["axis"], len(base))
            layout = base[:pos] + name + base[pos:]
        elif ins[0].ndim == 0:
            layout = name
        else:
            raise ValueError("ndd.stack: 'axis_name' needs input 0 to have a layout (or to be 0-D)")
    return [(_common_dtype("ndd.stack", ins), layout)]


def _stack_out_shape(shapes, args):
    first = tuple(shapes[0])
    for k, s in enumerate(shapes[1:], 1):
        if tuple(s) != first:
            raise ValueError(
                f"ndd.stack: all inputs must have the same shape; input 0 has shape {first}, "
                f"input {k} has {tuple(s)}"
            )
    pos = _stack_position(args["axis"], len(first))
    return first[:pos] + (len(shapes),) + first[pos:]


def _stack_shape(shapes, args):
    return [_stack_out_shape(shapes, args)]


def _stack_kernel(arrays, args):
    shape = _stack_out_shape([a.shape for a in arrays], args)
    return np.stack(arrays, axis=_stack_position(args["axis"], len(shape) - 1))


STACK = Operator(
    "stack",
    inputs=[Input("input_0", doc="The first input."), Input("inputs", variadic=True, doc="More inputs.")],
    args=[
        Arg(
            "axis",
            "int",
            0,
            doc="Position of the new dimension in the output; negative values count from the end, "
            "-1 being the last.",
            type_doc="int",
        ),
        Arg(
            "axis_name",
            "str",
            None,
            doc="Layout name of the new dimension, inserted into the layout of the first input; without "
            "it the result has no layout.",
            type_doc="str",
        ),
    ],
    infer_types=_stack_types,
    infer_shape=_stack_shape,
    kernel=_stack_kernel,
    doc="Join inputs of equal shape and dtype along a new dimension.",
)


def _stack_place(shapes, args):
    """The output shape of a GPU stack and where each input lands in it: input ``k``
    at index ``k`` of the new dimension."""
    out_shape = _stack_out_shape(shapes, args)
    pos = _stack_position(args["axis"], len(out_shape) - 1)
    strides = c_strides(out_shape)
    inner = strides[:pos] + strides[pos + 1 :]
    return out_shape, [(k * strides[pos], inner) for k in range(len(shapes))]


STACK.gpu_kernel = GpuJoin(STACK, _stack_place)
STACK.skip_absent_inputs = True

OPERATORS = [CAT, STACK]
