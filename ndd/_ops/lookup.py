"""Label and table lookups: one_hot, lookup_table."""

import functools
import warnings

import numpy as np

from .._cpu.lookup import lookup
from .._prepare.storage import TensorBase, batch_samples, tensor_data
from .._types import NUMERIC_TYPES, float32
from .._types import bool as bool_
from .conversions import c_cast, cast_array
from .gpu_indexing import GpuLookupTable, GpuOneHot
from .schema import Arg, Input, OmittedInt, Operator, batch_samples_of

# Keys of lookup_table index a dense table; the reference caps them at this value.
MAX_LOOKUP_KEY = 65535


# ---------------------------------------------------------------------------
# one_hot


def _check_axis(axis, ndim):
    if not -1 <= axis <= ndim:
        raise ValueError(
            f"ndd.one_hot: 'axis' must be in the range [-1, {ndim}] for a {ndim}-D input, got {axis}"
        )


def _known_sample_shapes(x):
    """The shapes of the samples of ``x`` (one shape for a Tensor), waiting for the
    data only when the producer could not tell them in advance."""
    if isinstance(x, TensorBase):
        return [x._shape if x._shape is not None else tensor_data(x).shape]
    if x._shapes is None:
        return [s.shape for s in batch_samples(x)]
    return list(x._shapes)


def _one_hot_layout(x, args):
    axis_name = args["axis_name"]
    if axis_name is None:
        return ""
    if len(axis_name) != 1:
        raise ValueError(f"ndd.one_hot: 'axis_name' must be a single character, got {axis_name!r}")
    axis = args["axis"]
    shapes = _known_sample_shapes(x)
    if _scalar_labels(args, [np.prod(s) for s in shapes]) or (shapes and len(shapes[0]) == 0):
        return axis_name
    ndim = len(shapes[0]) if shapes else len(x._layout)
    _check_axis(axis, ndim)
    if len(x._layout) != ndim:
        raise ValueError(
            f"ndd.one_hot: 'axis_name' needs an input with a layout of {ndim} dimension(s), got {x._layout!r}"
        )
    position = ndim if axis == -1 else axis
    return x._layout[:position] + axis_name + x._layout[position:]


def _one_hot_types(ins, args):
    x = ins[0]
    if x._dtype not in NUMERIC_TYPES:
        raise TypeError(f"ndd.one_hot: the input must hold integer or floating-point labels, got {x._dtype}")
    dtype = args["dtype"]
    if dtype not in NUMERIC_TYPES:
        raise TypeError(f"ndd.one_hot: 'dtype' must be a numeric type other than bool, got {dtype}")
    if args["num_classes"] < 0:
        raise ValueError(f"ndd.one_hot: 'num_classes' must not be negative, got {args['num_classes']}")
    if args["axis"] < -1:
        raise ValueError(f"ndd.one_hot: 'axis' must be -1 or a dimension index, got {args['axis']}")
    return [(dtype, _one_hot_layout(x, args))]


def _one_hot_shape(shapes, args):
    shape, axis, num_classes = shapes[0], args["axis"], args["num_classes"]
    if not ONE_HOT.given(args, "axis") and len(shape) > 0 and np.prod(shape) == 1:
        # A single-element sample is a scalar label only when the whole batch is;
        # one sample's shape cannot tell.
        return None
    if len(shape) == 0:
        _check_axis(axis, 0)
        return [(num_classes,)]
    _check_axis(axis, len(shape))
    position = len(shape) if axis == -1 else axis
    return [shape[:position] + (num_classes,) + shape[position:]]


def _one_hot_sample(x, args, scalar_label):
    num_classes, axis = args["num_classes"], args["axis"]
    limit = num_classes
    if x.dtype.kind == "f":
        x = np.trunc(x)
        # Float labels compare with num_classes in their type (made so here: numpy 1.x
        # would compare a float16 label with 2049 in float32); beyond a float16's range
        # it is infinity (every finite label is below it), which is no cause for a warning.
        with np.errstate(over="ignore"):
            limit = x.dtype.type(num_classes)
    valid = np.flatnonzero((x >= 0) & (x < limit))
    on, off = _on_off_values(args["on_value"], args["off_value"], args["dtype"])
    out = np.full((x.size, num_classes), off, args["dtype"].numpy)
    out[valid, x.reshape(-1)[valid].astype(np.intp)] = on
    out = out.reshape((*x.shape, num_classes))
    if scalar_label:
        return out.reshape(num_classes)
    _check_axis(axis, x.ndim)
    if axis == -1:
        return out
    return np.ascontiguousarray(np.moveaxis(out, -1, axis))


@functools.lru_cache(maxsize=64)
def _on_off_values(on_value, off_value, dtype):
    """The on and off values in ``dtype``: the reference holds them in float32 and converts them
    with a C cast."""
    return c_cast(np.float32(on_value), dtype.numpy), c_cast(np.float32(off_value), dtype.numpy)


def _one_hot_sample_layout(shape, args, scalar_label):
    """``(output shape, input elements after the class axis)`` of one sample, for
    the GPU kernel; raises as ``_one_hot_sample`` does."""
    num_classes, axis = args["num_classes"], args["axis"]
    if scalar_label:
        return (num_classes,), 1
    _check_axis(axis, len(shape))
    position = len(shape) if axis == -1 else axis
    return shape[:position] + (num_classes,) + shape[position:], int(
        np.prod(shape[position:], dtype=np.int64)
    )


def _scalar_labels(args, sizes):
    """As in the reference: single-element samples are scalar labels (one class
    dimension replaces theirs) when all are, and ``axis`` is not given."""
    return not ONE_HOT.given(args, "axis") and all(size == 1 for size in sizes)


def _one_hot_kernel(arrays, args):
    x = arrays[0]
    return _one_hot_sample(x, args, _scalar_labels(args, [x.size]))


def _one_hot_batch_kernel(inputs, sample_args, batch_size, ctx):
    samples = batch_samples_of(inputs[0], batch_size)
    scalar_labels = _scalar_labels(sample_args[0], [s.size for s in samples]) if samples else False
    return [[_one_hot_sample(s, a, scalar_labels) for s, a in zip(samples, sample_args, strict=True)]]


ONE_HOT = Operator(
    "one_hot",
    inputs=[Input("input", doc="Class labels, of an integer or floating-point type.")],
    args=[
        Arg(
            "axis",
            "int",
            OmittedInt(-1),
            doc="Where the new class dimension goes; -1 appends it as the last dimension.",
        ),
        Arg(
            "axis_name",
            "str",
            None,
            doc="One-character layout name of the new dimension; without it the output has no layout.",
            type_doc="str",
        ),
        Arg("dtype", "dtype", float32, doc="Output data type.", type_doc="DType"),
        Arg("num_classes", "int", 0, doc="Number of classes, the extent of the new dimension."),
        Arg("off_value", "float", 0.0, doc="Value of the classes a label does not select.", nonfinite=True),
        Arg("on_value", "float", 1.0, doc="Value of the class a label selects.", nonfinite=True),
    ],
    infer_types=_one_hot_types,
    infer_shape=_one_hot_shape,
    kernel=_one_hot_kernel,
    batch_kernel=_one_hot_batch_kernel,
    doc="Encode class labels as one-hot vectors.\n\n"
    "Each label selects one of ``num_classes`` positions along a new dimension, set to "
    "``on_value``; the other positions get ``off_value``. Floating-point labels are "
    "truncated toward zero; labels outside ``[0, num_classes)`` select nothing. When every "
    "sample holds a single label (shape ``()``, ``(1,)``, ``(1, 1)``...) and ``axis`` is not "
    "given, each output sample has the shape ``(num_classes,)``, as in the reference. On and off values are converted "
    "like a C cast: to float32, then truncated and wrapped for an integer ``dtype``.",
)
ONE_HOT.gpu_kernel = GpuOneHot(ONE_HOT, _one_hot_sample_layout, _scalar_labels)


# ---------------------------------------------------------------------------
# lookup_table


def _lookup_dtype(args):
    dtype, deprecated = args["dtype"], args["output_dtype"]
    if deprecated is None:
        return dtype
    if dtype != float32 and dtype != deprecated:
        raise ValueError(
            "ndd.lookup_table: give 'dtype' or its deprecated alias 'output_dtype', not both "
            f"(got {dtype} and {deprecated})"
        )
    return deprecated


def _lookup_types(ins, args):
    x = ins[0]
    if not x._dtype.is_integer:
        raise TypeError(f"ndd.lookup_table: the input must be of an integer type, got {x._dtype}")
    dtype = _lookup_dtype(args)
    if args["output_dtype"] is not None:
        # Frames: this function, the generated public function, the caller.
        warnings.warn(
            "ndd.lookup_table: 'output_dtype' is a deprecated alias of 'dtype'; use 'dtype'",
            DeprecationWarning,
            stacklevel=3,
        )
    if dtype not in NUMERIC_TYPES and dtype != bool_:
        raise TypeError(f"ndd.lookup_table: 'dtype' must be a numeric type or bool, got {dtype}")
    keys, values = args["keys"], args["values"]
    if len(keys) != len(values):
        raise ValueError(
            f"ndd.lookup_table: 'keys' and 'values' must have the same length, got {len(keys)} and {len(values)}"
        )
    bad = [k for k in keys if not 0 <= k <= MAX_LOOKUP_KEY]
    if bad:
        raise ValueError(f"ndd.lookup_table: 'keys' must be in the range [0, {MAX_LOOKUP_KEY}], got {bad[0]}")
    return [(dtype, x._layout)]


def _same_shape(shapes, args):
    return [shapes[0]]


@functools.lru_cache(maxsize=16)
def _lookup_table(keys, values, default_value, dtype):
    """The dense table: entry k is the value of key k; one more entry at the end,
    the default, serves every label outside the keys. Later duplicates win."""
    mapping = dict(zip(keys, values, strict=True))
    size = max(mapping, default=-1) + 1
    table = np.full(size + 1, default_value, np.float32)
    table[list(mapping)] = list(mapping.values())
    # Values pass through float32 and convert with rounding and saturation, as in the reference.
    table = cast_array(table, dtype.numpy)
    table.flags.writeable = False
    return table


def _lookup_kernel(arrays, args):
    x = np.asarray(arrays[0], order="C")  # (ascontiguousarray would make a 0-D array 1-D)
    table = _lookup_table(args["keys"], args["values"], args["default_value"], _lookup_dtype(args))
    out = np.empty(x.shape, table.dtype)
    # The compiled lookup copies the entries' bits, as unsigned integers of their size.
    bits = np.dtype(f"u{table.dtype.itemsize}")
    lookup(x.reshape(-1), table.view(bits), out.reshape(-1).view(bits))
    return out


LOOKUP_TABLE = Operator(
    "lookup_table",
    inputs=[Input("input", doc="Integer keys to look up.")],
    args=[
        Arg("default_value", "float", 0.0, doc="Value of the keys that are not in ``keys``.", nonfinite=True),
        Arg("dtype", "dtype", float32, doc="Output data type.", type_doc="DType"),
        Arg("keys", "int_list", (), doc="Keys of the table, integers in [0, 65535].", type_doc="list of int"),
        Arg(
            "output_dtype",
            "dtype",
            None,
            doc="Deprecated alias of ``dtype``.",
            type_doc="DType",
        ),
        Arg(
            "values",
            "float_list",
            (),
            doc="Values of the keys, in the order of ``keys``.",
            type_doc="list of float",
            nonfinite=True,
        ),
    ],
    infer_types=_lookup_types,
    infer_shape=_same_shape,
    kernel=_lookup_kernel,
    doc="Replace each key by its value in a table.\n\n"
    "Element ``k`` of the output is ``values[i]`` where ``keys[i] == k``, or "
    "``default_value`` when ``k`` is not a key. Values are converted to float32 and then to "
    "``dtype`` with rounding (halves away from zero) and saturation. When a key repeats, "
    "its last value wins.",
)

LOOKUP_TABLE.gpu_kernel = GpuLookupTable(
    LOOKUP_TABLE,
    lambda args: _lookup_table(args["keys"], args["values"], args["default_value"], _lookup_dtype(args)),
)

OPERATORS = [ONE_HOT, LOOKUP_TABLE]
