"""Tensor creation: full, full_like, zeros, ones, zeros_like, ones_like.

Deliberate divergences from the reference:
- ``full`` without ``shape`` gives a scalar only from a scalar fill value; a
  larger fill value raises, as it cannot be broadcast to a scalar (the
  reference silently keeps its first element).
- ``zeros``/``ones``/``*_like`` accept every form of ``dtype`` that
  ``ndd.dtype`` does (the reference rejects strings such as ``"float32"``).
"""

import numpy as np

from .._prepare.invocation import PerSample
from .._types import int32
from .conversions import cast_array
from .gpu_indexing import GpuConstant, GpuFull
from .schema import Arg, Input, Operator, same_as_input


def _output_shape(op, args):
    """The requested shape of one sample, checked against the layout."""
    shape = tuple(args["shape"] or ())
    if any(n < 0 for n in shape):
        raise ValueError(f"{op}: 'shape' must not have negative extents, got {list(shape)}")
    layout = args["layout"]
    if layout and len(layout) != len(shape):
        raise ValueError(
            f"{op}: 'layout' {layout!r} has {len(layout)} dimensions but 'shape' {list(shape)} "
            f"has {len(shape)}"
        )
    return shape


def _check_sample_ndim(op, args):
    """The samples of a batch share their number of dimensions: a per-sample
    ``shape`` must have the same length for all."""
    shape = args["shape"]
    if type(shape) is PerSample:
        lengths = sorted({len(s or ()) for s in shape.values})
        if len(lengths) > 1:
            raise ValueError(
                f"{op}: 'shape' must have the same length for all samples, got lengths {lengths}"
            )


def _check_broadcast(op, fill_shape, shape):
    """A fill value of ``fill_shape`` must broadcast to ``shape`` as in numpy, without
    growing it (the fill value aligns with the last dimensions)."""
    fill_shape = tuple(fill_shape)
    if len(fill_shape) > len(shape) or any(
        f not in (1, n) for f, n in zip(reversed(fill_shape), reversed(shape), strict=False)
    ):
        raise ValueError(
            f"{op}: the fill value of shape {fill_shape} cannot be broadcast to the shape {shape}"
        )


def _broadcast_fill(op, fill, shape):
    """``fill`` repeated to ``shape``."""
    _check_broadcast(op, fill.shape, shape)
    out = np.empty(shape, dtype=fill.dtype)
    out[...] = fill
    return out


# -- full, full_like ----------------------------------------------------------


def _full_types(ins, args):
    _check_sample_ndim("ndd.full", args)
    return [(ins[0]._dtype, args["layout"] or "")]


def _full_shape(shapes, args):
    shape = _output_shape("ndd.full", args)
    _check_broadcast("ndd.full", shapes[0], shape)
    return [shape]


def _full_kernel(arrays, args):
    return _broadcast_fill("ndd.full", arrays[0], _output_shape("ndd.full", args))


# Shared by the operators that create a tensor of a given shape.
LAYOUT_ARG = Arg("layout", "layout", None, doc="Layout of the result.", type_doc="str")
SHAPE_ARG = Arg(
    "shape",
    "int_list",
    None,
    per_sample=True,
    doc="Shape of the result; a scalar when omitted.",
    type_doc="list of int",
)


FULL = Operator(
    "full",
    inputs=[Input("fill_value", doc="The value to repeat; its dtype is the dtype of the result.")],
    args=[LAYOUT_ARG, SHAPE_ARG],
    infer_types=_full_types,
    infer_shape=_full_shape,
    kernel=_full_kernel,
    doc="A tensor of the given shape filled with a value.\n\n"
    "A non-scalar fill value is broadcast to ``shape`` as numpy does (aligned on the last dimension).",
)
FULL.gpu_kernel = GpuFull(
    FULL,
    like=False,
    check_broadcast=_check_broadcast,
    output_shape=lambda args: _output_shape("ndd.full", args),
)


def _full_like_shape(shapes, args):
    like, fill = shapes
    _check_broadcast("ndd.full_like", fill, tuple(like))
    return [tuple(like)]


def _full_like_kernel(arrays, args):
    like, fill = arrays
    return _broadcast_fill("ndd.full_like", cast_array(fill, like.dtype), like.shape)


FULL_LIKE = Operator(
    "full_like",
    inputs=[
        Input("data_like", doc="The tensor whose shape, dtype and layout the result takes."),
        Input("fill_value", doc="The value to repeat."),
    ],
    infer_types=same_as_input,
    infer_shape=_full_like_shape,
    kernel=_full_like_kernel,
    doc="A tensor like ``data_like`` (shape, dtype and layout) filled with a value.\n\n"
    "The fill value is converted as ``ndd.cast`` does and broadcast to the shape as numpy does.",
)
FULL_LIKE.gpu_kernel = GpuFull(FULL_LIKE, like=True, check_broadcast=_check_broadcast)


# -- zeros, ones, zeros_like, ones_like -----------------------------------------


def _constant(name, value):
    qualname = f"ndd.{name}"

    def type_rule(ins, args):
        _check_sample_ndim(qualname, args)
        return [(args["dtype"], args["layout"] or "")]

    def shape_rule(shapes, args):
        return [_output_shape(qualname, args)]

    def kernel(arrays, args):
        return np.full(_output_shape(qualname, args), value, dtype=args["dtype"].numpy)

    op = Operator(
        name,
        args=[
            Arg("dtype", "dtype", int32, doc="Element type of the result.", type_doc="DType"),
            LAYOUT_ARG,
            SHAPE_ARG,
        ],
        infer_types=type_rule,
        infer_shape=shape_rule,
        kernel=kernel,
        doc=f"A tensor of the given shape and dtype filled with {value}s.",
    )
    op.gpu_kernel = GpuConstant(
        op, value, like=False, output_shape=lambda args: _output_shape(qualname, args)
    )
    return op


def _like_types(ins, args):
    x = ins[0]
    return [(args["dtype"] or x._dtype, x._layout)]


def _like_shape(shapes, args):
    return [tuple(shapes[0])]


def _constant_like(name, value):
    def kernel(arrays, args):
        dtype = args["dtype"].numpy if args["dtype"] is not None else arrays[0].dtype
        return np.full(arrays[0].shape, value, dtype=dtype)

    op = Operator(
        name,
        inputs=[Input("data_like", doc="The tensor whose shape and layout (and dtype) the result takes.")],
        args=[
            Arg(
                "dtype",
                "dtype",
                None,
                doc="Element type of the result; that of ``data_like`` when omitted.",
                type_doc="DType",
            ),
        ],
        infer_types=_like_types,
        infer_shape=_like_shape,
        kernel=kernel,
        doc=f"A tensor with the shape and layout of ``data_like`` filled with {value}s.",
    )
    op.gpu_kernel = GpuConstant(op, value, like=True)
    return op


OPERATORS = [
    FULL,
    FULL_LIKE,
    _constant("zeros", 0),
    _constant("ones", 1),
    _constant_like("zeros_like", 0),
    _constant_like("ones_like", 1),
]
