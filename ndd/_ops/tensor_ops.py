"""Type and shape manipulation: cast, cast_like, copy, reshape, reinterpret,
transpose, squeeze, expand_dims.

Reshaping operators return views of their input where numpy can (inputs are
never written to); only ``copy`` always copies.

Deliberate divergences from the reference:
- ``cast`` of NaN to an integer type gives 0 for every integer type (the
  reference gives the hardware conversion result for 32- and 64-bit types).
- ``reshape``/``reinterpret`` accept ``src_dims`` that change the number of
  dimensions (the reference fails a dimensionality check).
- ``squeeze`` counts negative ``axes`` from the end and rejects out-of-range
  ones (the reference silently ignores both).
"""

import math

import numpy as np

from .._prepare.invocation import PendingArg, PerSample
from .._prepare.storage import TensorBase, batch_samples, tensor_data
from .conversions import cast_array, round_half_away
from .gpu_elementwise import GpuCast, GpuCastLike
from .gpu_layout import GpuCopy, GpuView, GpuWindow, c_strides
from .schema import Arg, Input, Operator

# Some type rules add derived entries, named with a leading underscore, to the argument
# dict: infer_shape and the kernels receive that dict but not the input types or layouts.

# -- helpers ------------------------------------------------------------------


def _ndim(x):
    """Dimensionality of an input from its metadata (a layout names every
    dimension); only an input of unknown shape and no layout is waited for."""
    if x._layout:
        return len(x._layout)
    return x.ndim


def _sample_values(op, value):
    """The values of an argument for all samples: ``[value]`` when it is the same
    for all, one per sample for a Batch argument (computed now if pending)."""
    if type(value) is PerSample:
        return value.values
    if type(value) is PendingArg:
        src = value.source
        if isinstance(src, TensorBase):
            return [value.spec.convert(op, tensor_data(src))]
        return [value.spec.convert(op, s) for s in batch_samples(src)]
    return [value]


def _one_length(op, name, value):
    """The common length of a list argument over the samples, None if not given."""
    lengths = {len(v) for v in _sample_values(op, value) if v is not None}
    if len(lengths) > 1:
        raise ValueError(
            f"{op.qualname}: '{name}' must have the same length for all samples, got lengths {sorted(lengths)}"
        )
    return lengths.pop() if lengths else None


# -- cast, cast_like, copy ----------------------------------------------------


def _cast_types(ins, args):
    return [(args["dtype"], ins[0]._layout)]


def _same_shape(shapes, args):
    return [shapes[0]]


def _cast_kernel(arrays, args):
    return cast_array(arrays[0], args["dtype"].numpy)


CAST = Operator(
    "cast",
    inputs=[Input("input")],
    args=[Arg("dtype", "dtype", doc="Output data type.", type_doc="DType")],
    infer_types=_cast_types,
    infer_shape=_same_shape,
    kernel=_cast_kernel,
    dense_kernel=_cast_kernel,
    doc="Convert the elements to another type.\n\nFloat values are rounded to the nearest integer "
    "(halves away from zero) and saturated to the range of an integer output type; NaN becomes 0. "
    "Integers saturate when the output type is narrower. A float becomes True when it rounds to a "
    "nonzero integer (or is NaN).",
)
CAST.gpu_kernel = GpuCast(CAST)


def _cast_like_types(ins, args):
    return [(ins[1]._dtype, ins[0]._layout)]


def _cast_like_kernel(arrays, args):
    return cast_array(arrays[0], arrays[1].dtype)


CAST_LIKE = Operator(
    "cast_like",
    inputs=[Input("input_0", doc="Data to convert."), Input("input_1", doc="Data whose type is used.")],
    infer_types=_cast_like_types,
    infer_shape=_same_shape,
    kernel=_cast_like_kernel,
    dense_kernel=_cast_like_kernel,
    doc="Convert the elements of the first input to the type of the second.\n\n"
    "The conversion follows the rules of ``cast``; only the type of ``input_1`` matters.",
)
CAST_LIKE.gpu_kernel = GpuCastLike(CAST_LIKE)


def _copy_kernel(arrays, args):
    return arrays[0].copy()


COPY = Operator(
    "copy",
    inputs=[Input("input")],
    infer_shape=_same_shape,
    kernel=_copy_kernel,
    dense_kernel=_copy_kernel,
    doc="Copy the data into new memory, keeping the shape, type and layout.",
)
COPY.gpu_kernel = GpuCopy(COPY)


# -- reshape, reinterpret -----------------------------------------------------


def _byte_error(op, in_shape, in_bytes, shape, out_itemsize):
    return ValueError(
        f"{op.qualname}: the output must occupy as many bytes as the input: input shape "
        f"{tuple(in_shape)} has {in_bytes} bytes, requested shape {tuple(shape)} of "
        f"{out_itemsize}-byte elements"
    )


def _source_extents(op, in_shape, src_dims):
    """The input extents the output dimensions are made of (``src_dims`` applied)."""
    if src_dims is None:
        return list(in_shape)
    ndim = len(in_shape)
    for d in src_dims:
        if not -1 <= d < ndim:
            raise IndexError(
                f"{op.qualname}: 'src_dims' entries must be -1 or in 0..{ndim - 1} for a {ndim}-D input, got {d}"
            )
    return [in_shape[d] if d >= 0 else 1 for d in src_dims]


def _requested_extents(op, source, shape_values, args):
    """The output extents asked for (a negative one is to be inferred), or None
    when neither a shape input, ``shape`` nor ``rel_shape`` is given."""
    if shape_values is not None:
        return list(shape_values)
    if args["shape"] is not None:
        return list(args["shape"])
    rel_shape = args["rel_shape"]
    if rel_shape is None:
        return None
    if args["src_dims"] is not None and len(rel_shape) != len(source):
        raise ValueError(
            f"{op.qualname}: 'rel_shape' and 'src_dims' must have the same length, got "
            f"{len(rel_shape)} and {len(source)}"
        )
    if not all(math.isfinite(r) for r in rel_shape):
        raise ValueError(f"{op.qualname}: 'rel_shape' must hold finite numbers, got {tuple(rel_shape)}")
    if len(rel_shape) > len(source):
        raise ValueError(
            f"{op.qualname}: 'rel_shape' has {len(rel_shape)} entries but the input has {len(source)} dimensions"
        )
    # Relative extents are single precision in the reference; products round half away from zero.
    extents = round_half_away(
        np.array(rel_shape, np.float32) * np.array(source[: len(rel_shape)], np.float32)
    )
    return [-1 if r < 0 else int(e) for r, e in zip(rel_shape, extents, strict=True)]


_reshape_cache = {}
_RESHAPE_CACHE_SIZE = 256


def _reshaped(op, in_shape, itemsizes, shape_values, args):
    """The output shape of one sample, validated. ``itemsizes`` are the input and
    output element sizes in bytes; ``shape_values`` the sample's shape input.

    Memoised: the prepare phase and the kernel ask the same question, and a
    training loop asks it for every batch."""
    key = (
        op,
        tuple(in_shape),
        itemsizes,
        None if shape_values is None else tuple(shape_values),
        args["shape"],
        args["rel_shape"],
        args["src_dims"],
    )
    shape = _reshape_cache.get(key)
    if shape is None:
        shape = _compute_reshaped(op, in_shape, itemsizes, shape_values, args)
        if len(_reshape_cache) >= _RESHAPE_CACHE_SIZE:
            _reshape_cache.clear()
        _reshape_cache[key] = shape
    return shape


def _compute_reshaped(op, in_shape, itemsizes, shape_values, args):
    in_itemsize, out_itemsize = itemsizes
    source = _source_extents(op, in_shape, args["src_dims"])
    requested = _requested_extents(op, source, shape_values, args)
    if requested is None:
        if math.prod(source) != math.prod(in_shape):
            raise ValueError(
                f"{op.qualname}: 'src_dims' {args['src_dims']} make shape {tuple(source)} of "
                f"{math.prod(source)} elements from input shape {tuple(in_shape)} of {math.prod(in_shape)}"
            )
        if in_itemsize != out_itemsize:
            # Without a new shape, the innermost extent absorbs the change of element size.
            if not source:
                raise ValueError(f"{op.qualname}: a 0-D input cannot change its element size without 'shape'")
            if (source[-1] * in_itemsize) % out_itemsize:
                raise ValueError(
                    f"{op.qualname}: the innermost dimension of shape {tuple(source)} ({in_itemsize}-byte "
                    f"elements) does not split into {out_itemsize}-byte elements; give 'shape'"
                )
            source[-1] = source[-1] * in_itemsize // out_itemsize
        return tuple(source)
    in_bytes = math.prod(in_shape) * in_itemsize
    inferred = [d for d, e in enumerate(requested) if e < 0]
    if len(inferred) > 1:
        raise ValueError(f"{op.qualname}: only one extent can be negative (inferred), got {tuple(requested)}")
    if inferred:
        (w,) = inferred
        requested[w] = 1
        rest_bytes = math.prod(requested) * out_itemsize
        requested[w] = -1
        if rest_bytes == 0 or in_bytes % rest_bytes:
            raise _byte_error(op, in_shape, in_bytes, requested, out_itemsize)
        requested[w] = in_bytes // rest_bytes
    if math.prod(requested) * out_itemsize != in_bytes:
        raise _byte_error(op, in_shape, in_bytes, requested, out_itemsize)
    return tuple(requested)


def _shape_input_length(op, x):
    """The output dimensionality set by a shape input (a 1-D integer tensor per sample)."""
    if not x._dtype.is_integer:
        raise TypeError(f"{op.qualname}: the shape input must have an integer type, got {x._dtype}")
    shapes = [x.shape] if isinstance(x, TensorBase) else x.shape
    if any(len(s) != 1 for s in shapes):
        raise ValueError(f"{op.qualname}: the shape input must be 1-D, one extent per output dimension")
    lengths = {s[0] for s in shapes}
    if len(lengths) > 1:
        raise ValueError(f"{op.qualname}: the shape input must have the same length for all samples")
    return lengths.pop() if lengths else 0


def _shape_prepare(ins, args):
    """prepare_args of reshape and reinterpret: the input and output element sizes,
    which the shape rule and the kernel compare bytes with."""
    x, new_dtype = ins[0], args.get("dtype")
    dtype = x._dtype if new_dtype is None else new_dtype
    args["_itemsizes"] = (x._dtype.bytes, dtype.bytes)


def _shape_types(op, ins, args):
    x, shape_input = ins
    given = [name for name in ("shape", "rel_shape") if args[name] is not None]
    if shape_input is not None:
        given.insert(0, "the shape input")
    if len(given) > 1:
        raise ValueError(f"{op.qualname}: {' and '.join(given)} are mutually exclusive")
    new_dtype = args.get("dtype")
    if not given and args["src_dims"] is None and args["layout"] is None and new_dtype is None:
        what = "shape, rel_shape, src_dims or layout" + (" or dtype" if op is REINTERPRET else "")
        raise ValueError(f"{op.qualname} would do nothing: give {what}")
    dtype = x._dtype if new_dtype is None else new_dtype

    if shape_input is not None:
        out_ndim = _shape_input_length(op, shape_input)
    else:
        out_ndim = None
        for name in ("shape", "rel_shape", "src_dims"):
            value = args[name]
            # A constant list (a tuple here) is the common case: its length is the answer.
            out_ndim = len(value) if type(value) is tuple else _one_length(op, name, value)
            if out_ndim is not None:
                break
        else:
            out_ndim = _ndim(x)
    layout = args["layout"]
    if layout is None:
        layout = x._layout if len(x._layout) == out_ndim else ""
    elif layout and len(layout) != out_ndim:
        raise ValueError(
            f"{op.qualname}: 'layout' {layout!r} has {len(layout)} dimensions but the output has {out_ndim}"
        )
    return [(dtype, layout)]


def _shape_of(op, shapes, args):
    if shapes[1] is not None:
        return None  # the values of the shape input are only known when running
    return [_reshaped(op, shapes[0], args["_itemsizes"], None, args)]


def _new_shape(op, arrays, args):
    arr, shape_input = arrays
    values = None if shape_input is None else shape_input.reshape(-1).tolist()
    return _reshaped(op, arr.shape, args["_itemsizes"], values, args)


def _reshape_types(ins, args):
    return _shape_types(RESHAPE, ins, args)


def _reshape_shape(shapes, args):
    return _shape_of(RESHAPE, shapes, args)


def _reshape_kernel(arrays, args):
    return arrays[0].reshape(_new_shape(RESHAPE, arrays, args))


def _reinterpret_types(ins, args):
    return _shape_types(REINTERPRET, ins, args)


def _reinterpret_shape(shapes, args):
    return _shape_of(REINTERPRET, shapes, args)


def _reshape_dense(arrays, args):
    arr, shape_input = arrays
    if shape_input is not None:
        return None  # the new shape may differ per sample
    sample_shape = _reshaped(RESHAPE, arr.shape[1:], args["_itemsizes"], None, args)
    return arr.reshape((arr.shape[0],) + sample_shape)


def _reinterpret_kernel(arrays, args):
    arr = arrays[0]
    out_type = arr.dtype if args["dtype"] is None else args["dtype"].numpy
    flat = np.ascontiguousarray(arr).reshape(-1)
    return flat.view(out_type).reshape(_new_shape(REINTERPRET, arrays, args))


_SHAPE_ARGS = [
    Arg(
        "layout",
        "layout",
        None,
        doc="Layout of the output. When omitted, the input's layout is kept if the number of "
        'dimensions is unchanged and dropped otherwise; ``""`` drops it.',
        type_doc="str",
    ),
    Arg(
        "rel_shape",
        "float_list",
        None,
        per_sample=True,
        doc="Output shape as multiples of the input extents (of the ``src_dims`` extents when given); "
        "one entry may be negative to infer it.",
        type_doc="list of float",
    ),
    Arg(
        "shape",
        "int_list",
        None,
        per_sample=True,
        doc="Output shape; one extent may be negative (-1) to infer it from the size.",
        type_doc="list of int",
    ),
    Arg(
        "src_dims",
        "int_list",
        None,
        per_sample=True,
        doc="Input dimensions that make up the output, in order; -1 inserts a dimension of extent 1. "
        "Dimensions left out must have extent 1. Ignored for the extents when ``shape`` is given.",
        type_doc="list of int",
    ),
]

_SHAPE_INPUTS = [
    Input("data", doc="Data to reshape."),
    Input(
        "shape_input", optional=True, doc="Output shape as a 1-D integer tensor per sample; like ``shape``."
    ),
]

RESHAPE = Operator(
    "reshape",
    inputs=_SHAPE_INPUTS,
    args=_SHAPE_ARGS,
    prepare_args=_shape_prepare,
    infer_types=_reshape_types,
    infer_shape=_reshape_shape,
    kernel=_reshape_kernel,
    dense_kernel=_reshape_dense,
    doc="Give the data another shape and/or layout without moving it.\n\n"
    "The new shape comes from ``shape_input``, ``shape`` or ``rel_shape`` (at most one of them), "
    "else from ``src_dims``; the number of elements must not change.",
)

REINTERPRET = Operator(
    "reinterpret",
    inputs=_SHAPE_INPUTS,
    args=[
        Arg(
            "dtype",
            "dtype",
            None,
            doc="Type the raw bytes are read as; the input's type when omitted. Without a new shape "
            "the innermost extent is scaled by the ratio of the element sizes.",
            type_doc="DType",
        ),
        *_SHAPE_ARGS,
    ],
    prepare_args=_shape_prepare,
    infer_types=_reinterpret_types,
    infer_shape=_reinterpret_shape,
    kernel=_reinterpret_kernel,
    doc="Read the raw bytes of the data as another type, shape and/or layout.\n\n"
    "No value is converted: the output occupies exactly the bytes of the input. The shape "
    "arguments work as in ``reshape``, with sizes compared in bytes.",
)


def _reshape_gpu_shape(in_shape, shape_values, args):
    return _reshaped(RESHAPE, in_shape, args["_itemsizes"], shape_values, args)


def _reinterpret_gpu_shape(in_shape, shape_values, args):
    return _reshaped(REINTERPRET, in_shape, args["_itemsizes"], shape_values, args)


def _reinterpret_gpu_dtype(dtype, args):
    return dtype if args["dtype"] is None else args["dtype"].numpy


# On the GPU the new shape is a view of the same memory, as numpy's on the CPU.
RESHAPE.gpu_kernel = GpuView(RESHAPE, _reshape_gpu_shape)
REINTERPRET.gpu_kernel = GpuView(REINTERPRET, _reinterpret_gpu_shape, _reinterpret_gpu_dtype)


# -- transpose ----------------------------------------------------------------


def _permutation(perm, ndim):
    if perm is None:
        return tuple(range(ndim - 1, -1, -1))
    if len(perm) != ndim:
        raise ValueError(f"ndd.transpose: 'perm' has {len(perm)} entries but the input has {ndim} dimensions")
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"ndd.transpose: 'perm' must be a permutation of 0..{ndim - 1}, got {perm}")
    return perm


def _transpose_types(ins, args):
    x = ins[0]
    ndim = _ndim(x)
    perm = _permutation(args["perm"], ndim)
    layout = args["output_layout"]
    if layout is not None:
        if not layout:
            raise ValueError("ndd.transpose: 'output_layout' must not be empty; omit it to keep the layout")
        if len(layout) != ndim:
            raise ValueError(
                f"ndd.transpose: 'output_layout' {layout!r} must have {ndim} dimensions, like the input"
            )
    elif args["transpose_layout"] and x._layout:
        layout = "".join(x._layout[p] for p in perm)
    else:
        layout = x._layout
    return [(x._dtype, layout)]


def _transpose_shape(shapes, args):
    shape = shapes[0]
    return [tuple(shape[p] for p in _permutation(args["perm"], len(shape)))]


def _transpose_kernel(arrays, args):
    arr = arrays[0]
    return arr.transpose(_permutation(args["perm"], arr.ndim))


def _transpose_dense(arrays, args):
    arr = arrays[0]
    return arr.transpose((0,) + tuple(p + 1 for p in _permutation(args["perm"], arr.ndim - 1)))


TRANSPOSE = Operator(
    "transpose",
    inputs=[Input("input")],
    args=[
        Arg(
            "output_layout",
            "layout",
            None,
            doc="Layout of the output (not empty); overrides ``transpose_layout``.",
            type_doc="str",
        ),
        Arg(
            "perm",
            "int_list",
            None,
            doc="Output dimension ``i`` is input dimension ``perm[i]``; reverses the dimensions when omitted.",
            type_doc="list of int",
        ),
        Arg(
            "transpose_layout",
            "bool",
            True,
            doc="Permute the layout's names with the dimensions; when False the layout is kept as is.",
        ),
    ],
    infer_types=_transpose_types,
    infer_shape=_transpose_shape,
    kernel=_transpose_kernel,
    dense_kernel=_transpose_dense,
    doc="Permute the dimensions of the data.\n\nThe output is a view of the input where possible.",
)


def _transpose_window(in_shape, args):
    """The GPU window of a transposed sample: the input's strides permuted."""
    perm = _permutation(args["perm"], len(in_shape))
    strides = c_strides(in_shape)
    return 0, tuple(in_shape[p] for p in perm), tuple(strides[p] for p in perm)


TRANSPOSE.gpu_kernel = GpuWindow(TRANSPOSE, _transpose_window)


# -- squeeze, expand_dims -------------------------------------------------------


def _squeeze_axes(axes, ndim):
    """Normalised axes to remove (negative ones count from the end), validated."""
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise IndexError(f"ndd.squeeze: 'axes' entry {a} is out of range for a {ndim}-D input")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"ndd.squeeze: 'axes' names a dimension twice: {tuple(axes)}")
    return out


def _squeeze_names(names, layout):
    if len(set(names)) != len(names):
        raise ValueError(f"ndd.squeeze: 'axis_names' names a dimension twice: {names!r}")
    missing = [n for n in names if n not in layout]
    if missing:
        raise ValueError(f"ndd.squeeze: 'axis_names' {missing[0]!r} is not in the input layout {layout!r}")
    return [layout.index(n) for n in names]


def _squeeze_prepare(ins, args):
    """prepare_args of squeeze: the indices of ``axis_names`` in the input layout."""
    names = args["axis_names"]
    if (args["axes"] is None) == (names is None):
        raise ValueError("ndd.squeeze: give exactly one of 'axes' and 'axis_names'")
    if names is not None:
        args["_named_axes"] = _squeeze_names(names, ins[0]._layout)


def _squeeze_types(ins, args):
    x = ins[0]
    if args["axis_names"] is not None:
        removed = [args["_named_axes"]]
    else:
        ndim = _ndim(x)
        removed = [_squeeze_axes(a, ndim) for a in _sample_values(SQUEEZE, args["axes"])]
        if len({len(r) for r in removed}) > 1:
            raise ValueError("ndd.squeeze: 'axes' must remove as many dimensions from every sample")
    layouts = {"".join(c for d, c in enumerate(x._layout) if d not in r) for r in removed}
    if len(layouts) > 1:
        raise ValueError(
            f"ndd.squeeze: per-sample 'axes' must remove the same dimensions of layout {x._layout!r}"
        )
    return [(x._dtype, layouts.pop())]


def _squeezed(shape, args):
    if args["axis_names"] is not None:
        removed = args["_named_axes"]
    else:
        removed = _squeeze_axes(args["axes"], len(shape))
    out = tuple(n for d, n in enumerate(shape) if d not in removed)
    # A non-unit extent can only go when the data is empty before and after.
    if any(shape[d] != 1 for d in removed) and not (math.prod(shape) == 0 == math.prod(out)):
        bad = next(d for d in removed if shape[d] != 1)
        raise ValueError(
            f"ndd.squeeze: dimension {bad} of shape {tuple(shape)} has extent {shape[bad]}, not 1"
        )
    return out


def _squeeze_shape(shapes, args):
    return [_squeezed(shapes[0], args)]


def _squeeze_kernel(arrays, args):
    arr = arrays[0]
    return arr.reshape(_squeezed(arr.shape, args))


def _squeeze_dense(arrays, args):
    arr = arrays[0]
    return arr.reshape(arr.shape[:1] + tuple(_squeezed(arr.shape[1:], args)))


SQUEEZE = Operator(
    "squeeze",
    inputs=[Input("data")],
    args=[
        Arg(
            "axes",
            "int_list",
            None,
            per_sample=True,
            doc="Indices of the dimensions to remove (negative ones count from the end).",
            type_doc="list of int",
        ),
        Arg("axis_names", "layout", None, doc="Layout names of the dimensions to remove.", type_doc="str"),
    ],
    prepare_args=_squeeze_prepare,
    infer_types=_squeeze_types,
    infer_shape=_squeeze_shape,
    kernel=_squeeze_kernel,
    dense_kernel=_squeeze_dense,
    doc="Remove dimensions of extent 1.\n\nGive the dimensions by index (``axes``) or by layout name "
    "(``axis_names``), not both. The output is a view of the input.",
)
SQUEEZE.gpu_kernel = GpuView(SQUEEZE, lambda in_shape, _, args: _squeezed(in_shape, args))


def _expand_check(axes, names, in_ndim, in_layout):
    out_ndim = in_ndim + len(axes)
    for a in axes:
        if a < 0:
            raise ValueError(f"ndd.expand_dims: 'axes' must not be negative, got {a}")
        if a >= out_ndim:
            raise IndexError(f"ndd.expand_dims: 'axes' entry {a} is out of range for a {out_ndim}-D output")
    if len(set(axes)) != len(axes):
        raise ValueError(f"ndd.expand_dims: 'axes' names a position twice: {tuple(axes)}")
    if names:
        if len(names) != len(axes):
            raise ValueError(
                f"ndd.expand_dims: 'new_axis_names' {names!r} must have one name per entry of 'axes' "
                f"({len(axes)})"
            )
        if in_ndim and not in_layout:
            raise ValueError("ndd.expand_dims: 'new_axis_names' needs an input with a layout")


def _expand_types(ins, args):
    x = ins[0]
    axes, names = args["axes"], args["new_axis_names"]
    _expand_check(axes, names, _ndim(x), x._layout)
    layout = ""
    if names:
        by_axis = dict(zip(axes, names, strict=True))
        rest = iter(x._layout)
        layout = "".join(
            by_axis[d] if d in by_axis else next(rest) for d in range(len(x._layout) + len(axes))
        )
    return [(x._dtype, layout)]


def _expanded(shape, axes):
    rest = iter(shape)
    return tuple(1 if d in axes else next(rest) for d in range(len(shape) + len(axes)))


def _expand_shape(shapes, args):
    return [_expanded(shapes[0], args["axes"])]


def _expand_kernel(arrays, args):
    arr = arrays[0]
    return arr.reshape(_expanded(arr.shape, args["axes"]))


def _expand_dense(arrays, args):
    arr = arrays[0]
    return arr.reshape(arr.shape[:1] + tuple(_expanded(arr.shape[1:], args["axes"])))


EXPAND_DIMS = Operator(
    "expand_dims",
    inputs=[Input("data")],
    args=[
        Arg(
            "axes",
            "int_list",
            doc="Positions of the new dimensions in the output (non-negative, each below the output's "
            "number of dimensions).",
            type_doc="list of int",
        ),
        Arg(
            "new_axis_names",
            "layout",
            "",
            doc="Layout names of the new dimensions, one per entry of ``axes``; needs an input with a "
            "layout. Without names the output has no layout.",
            type_doc="str",
        ),
    ],
    infer_types=_expand_types,
    infer_shape=_expand_shape,
    kernel=_expand_kernel,
    dense_kernel=_expand_dense,
    doc="Insert dimensions of extent 1.\n\nThe output is a view of the input.",
)
EXPAND_DIMS.gpu_kernel = GpuView(EXPAND_DIMS, lambda in_shape, _, args: _expanded(in_shape, args["axes"]))

OPERATORS = [CAST, CAST_LIKE, COPY, RESHAPE, REINTERPRET, TRANSPOSE, SQUEEZE, EXPAND_DIMS]
