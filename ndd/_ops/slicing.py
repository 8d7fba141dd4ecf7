"""Windows and joins: slice, pad, cat, stack.

Deliberate divergences from the reference:
- ``slice`` accepts data of any type and dimensionality (the reference rejects
  bool and takes 1 to 4 dimensions) and anchor/shape inputs of any integer or
  float type, each interpreted on its own (the reference takes int32, int64 and
  float32 only, both of the same type); ``dtype`` is limited to uint8, float16
  and float32 as in the reference.
- A one-element list (``start=[2]``, ``shape=[4]``, ``align=[4]``) applies to
  every axis also when given per sample as a Tensor or Batch; the reference
  broadcasts only literal lists written at the call site.
- ``pad`` takes a one-element array as a per-sample ``fill_value`` (the reference
  wants 0-D samples) and pads any dtype and dimensionality (the reference
  rejects float64 and 0-D inputs).
- ``cat`` with ``axis=0`` given explicitly next to ``axis_name`` uses
  ``axis_name``; the reference rejects the pair whatever the value of ``axis``.
"""

import math
import warnings

import numpy as np

from .._types import float16, float32, uint8
from .schema import Arg, Input, Operator

# Kernels need the input layout (to resolve axis names) but only receive arrays and
# arguments: _record_layout, the prepare_args of slice, pad and cat, records it under this key.
_LAYOUT = "_input_layout"


def _record_layout(ins, args):
    args[_LAYOUT] = ins[0]._layout


def _slice_prepare(ins, args):
    """Record the input layout and map the deprecated arguments of ``slice``."""
    _record_layout(ins, args)
    if args["image_type"] is not None:
        warnings.warn("ndd.slice: 'image_type' is deprecated and ignored", DeprecationWarning, stacklevel=3)
    if args["output_dtype"] is not None:
        if args["dtype"] is not None:
            raise ValueError("ndd.slice: 'output_dtype' is a deprecated alias of 'dtype'; pass only 'dtype'")
        warnings.warn(
            "ndd.slice: 'output_dtype' is deprecated; use 'dtype'", DeprecationWarning, stacklevel=3
        )
        args["dtype"] = args["output_dtype"]


def _given(args, arg):
    """Whether the caller chose a value for ``arg``. An omitted (or None) argument
    arrives as the very object ``arg.converted_default``, so identity tells the
    default from an equal value passed explicitly."""
    return args[arg.name] is not arg.converted_default


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


def _axes_from_list(op, axes, ndim):
    return _unique(op, "axes", [_axis_index(op, "axes", a, ndim) for a in axes], axes)


def _axes_from_names(op, names, layout):
    for ch in names:
        if ch not in layout:
            raise ValueError(f"{op}: 'axis_names' has {ch!r}, which is not in the input layout {layout!r}")
    return _unique(op, "axis_names", [layout.index(ch) for ch in names], names)


def _c_cast(values, target):
    """Convert fill values to numpy dtype ``target`` as a C cast does, which is what
    the reference applies to them: floats truncate toward zero and wrap around the
    integer range, NaN gives 0."""
    values = np.asarray(values, dtype=np.float64)
    if target.kind == "b":
        return values != 0
    if target.kind in "iu":
        whole = np.nan_to_num(np.trunc(values), nan=0.0)
        # Wrap through int64, clipping first where even int64 cannot hold the value.
        return np.clip(whole, -(2.0**63), 2.0**63 - 1024).astype(np.int64).astype(target)
    with np.errstate(over="ignore"):
        return values.astype(target)


# -- slice --------------------------------------------------------------------

_SLICE_AXES = Arg(
    "axes",
    "int_list",
    [1, 0],
    per_sample=True,
    doc="Indices of the sliced dimensions (negative counts from the end); exclusive with ``axis_names``.",
    type_doc="list of int",
)
_SLICE_AXIS_NAMES = Arg(
    "axis_names",
    "layout",
    "WH",
    doc="Layout names of the sliced dimensions, used unless ``axes`` is given. An input "
    "without a layout is taken as HW, HWC or DHWC by its dimensionality.",
    type_doc="str",
)
_SLICE_OUTPUT_TYPES = (uint8, float16, float32)
# The layout assumed for naming the dimensions of an input without one.
_DEFAULT_LAYOUTS = {2: "HW", 3: "HWC", 4: "DHWC"}
_STARTS = ("start", "rel_start")
_ENDS = ("end", "rel_end", "shape", "rel_shape")


def _slice_types(ins, args):
    data, anchor, shape_input = ins
    if (anchor is None) != (shape_input is None):
        raise ValueError("ndd.slice: the 'anchor' and 'shape_input' inputs must be given together")
    named = [n for n in _STARTS + _ENDS if args[n] is not None]
    if anchor is not None:
        if named:
            raise ValueError(
                f"ndd.slice: the named arguments {named} cannot be used with the anchor and shape inputs"
            )
        for name, x in (("anchor", anchor), ("shape_input", shape_input)):
            if not (x._dtype.is_integer or x._dtype.is_float):
                raise TypeError(f"ndd.slice: input '{name}' must hold integers or floats, got {x._dtype}")
    elif not named:
        raise ValueError(
            "ndd.slice: give the window as the anchor and shape inputs or with the named arguments "
            "start/rel_start and end/rel_end/shape/rel_shape"
        )
    if args["start"] is not None and args["rel_start"] is not None:
        raise ValueError("ndd.slice: 'start' and 'rel_start' are mutually exclusive")
    ends = [n for n in _ENDS if args[n] is not None]
    if len(ends) > 1:
        raise ValueError(
            f"ndd.slice: 'end', 'rel_end', 'shape' and 'rel_shape' are mutually exclusive, got {ends}"
        )
    if _given(args, _SLICE_AXES) and _given(args, _SLICE_AXIS_NAMES):
        raise ValueError("ndd.slice: 'axes' and 'axis_names' are mutually exclusive")
    dtype = args["dtype"]
    if dtype is not None and dtype not in _SLICE_OUTPUT_TYPES:
        names = ", ".join(str(t) for t in _SLICE_OUTPUT_TYPES)
        raise ValueError(f"ndd.slice: 'dtype' must be one of {names}, got {dtype}")
    return [(dtype or data._dtype, data._layout)]


def _slice_axes(args, ndim):
    if _given(args, _SLICE_AXES):
        return _axes_from_list("ndd.slice", args["axes"], ndim)
    layout = args[_LAYOUT] or _DEFAULT_LAYOUTS.get(ndim, "")
    return _axes_from_names("ndd.slice", args["axis_names"], layout)


def _round_half_away(x):
    """``llround``: the nearest integer, halves away from zero (``x - floor(x)`` is exact)."""
    low = math.floor(x)
    frac = x - low
    return low + 1 if frac > 0.5 or (frac == 0.5 and x > 0) else low


def _relative(value, extent):
    # The reference scales relative named arguments in single precision, which
    # decides ties such as 0.35 * 10 (3.5 in float32, 3.4999999 in float64).
    return float(np.float32(value) * np.float32(extent))


def _named_window(args, axes, in_shape):
    """(start, end) floats per sliced axis from the named arguments."""
    values = {}
    for name in _STARTS + _ENDS:
        v = args[name]
        if v is None or len(v) == 0:  # an empty list means "not given"
            continue
        if len(v) == 1:  # one value applies to every sliced axis
            v = v * len(axes)
        if len(v) != len(axes):
            raise ValueError(
                f"ndd.slice: '{name}' must have 1 value or one per sliced axis ({len(axes)}), got {list(v)}"
            )
        values[name] = v
    window = []
    for i, d in enumerate(axes):
        extent = in_shape[d]
        if "start" in values:
            lo = float(values["start"][i])
        elif "rel_start" in values:
            lo = _relative(values["rel_start"][i], extent)
        else:
            lo = 0.0
        if "shape" in values or "rel_shape" in values:
            size = values["shape"][i] if "shape" in values else _relative(values["rel_shape"][i], extent)
            if size < 0:
                raise ValueError(f"ndd.slice: the slice shape must not be negative, got {size} for axis {d}")
            hi = lo + size
        elif "end" in values:
            hi = float(values["end"][i])
        elif "rel_end" in values:
            hi = _relative(values["rel_end"][i], extent)
        else:
            hi = float(extent)
        window.append((lo, hi))
    return window


def _positional_window(args, axes, in_shape, anchor, shape):
    """(start, end) floats per sliced axis from the anchor and shape inputs; float
    inputs are fractions of the extent when normalized_anchor/normalized_shape say so."""
    anchor = anchor.reshape(-1)
    shape = shape.reshape(-1)
    for name, v in (("anchor", anchor), ("shape_input", shape)):
        if v.size != len(axes):
            raise ValueError(
                f"ndd.slice: input '{name}' must have one value per sliced axis ({len(axes)}), "
                f"got {v.tolist()}"
            )
    scale_anchor = args["normalized_anchor"] and anchor.dtype.kind == "f"
    scale_shape = args["normalized_shape"] and shape.dtype.kind == "f"
    window = []
    for i, d in enumerate(axes):
        extent = in_shape[d]
        lo = float(anchor[i]) * (extent if scale_anchor else 1)
        window.append((lo, lo + float(shape[i]) * (extent if scale_shape else 1)))
    return window


def _slice_bounds(args, in_shape, anchor=None, shape=None):
    """Integer (start, end) for every dimension of the input, after the policy."""
    ndim = len(in_shape)
    axes = _slice_axes(args, ndim)
    if anchor is not None:
        window = _positional_window(args, axes, in_shape, anchor, shape)
    else:
        window = _named_window(args, axes, in_shape)
    policy = args["out_of_bounds_policy"]
    bounds = [(0, n) for n in in_shape]
    for d, (lo, hi) in zip(axes, window, strict=True):
        if hi < lo:
            raise ValueError(f"ndd.slice: the slice of axis {d} ends ({hi}) before it starts ({lo})")
        lo, hi, extent = _round_half_away(lo), _round_half_away(hi), in_shape[d]
        if policy == "trim_to_shape":
            lo, hi = min(max(lo, 0), extent), min(max(hi, 0), extent)
        elif policy == "error" and (lo < 0 or hi > extent):
            raise ValueError(
                f"ndd.slice: the slice [{lo}, {hi}) of axis {d} is out of bounds of the input shape "
                f"{tuple(in_shape)}; pass out_of_bounds_policy='pad' or 'trim_to_shape'"
            )
        bounds[d] = (lo, hi)
    return bounds


def _fill_channel_axis(args, out_shape):
    """The dimension along which several fill values are laid out, None for one value."""
    fill = args["fill_values"]
    if args["out_of_bounds_policy"] != "pad" or len(fill) == 1:
        return None
    layout = args[_LAYOUT] or _DEFAULT_LAYOUTS.get(len(out_shape), "")
    if "C" not in layout:
        raise ValueError(
            f"ndd.slice: {len(fill)} 'fill_values' need a channel dimension ('C') in the layout, "
            f"got {layout!r}"
        )
    channel = layout.index("C")
    if out_shape[channel] != len(fill):
        raise ValueError(
            f"ndd.slice: 'fill_values' has {len(fill)} values for {out_shape[channel]} output channels"
        )
    return channel


def _slice_shape(shapes, args):
    if shapes[1] is not None:  # the window comes from the values of the inputs
        return None
    out_shape = tuple(hi - lo for lo, hi in _slice_bounds(args, shapes[0]))
    _fill_channel_axis(args, out_shape)
    return [out_shape]


def _convert_saturating(arr, target):
    """Convert to numpy dtype ``target`` as the reference's slice does: floats truncate
    toward zero and every value saturates at the limits of the target type (infinities
    included); NaN gives 0 in an integer type."""
    if arr.dtype == target:
        return arr
    if arr.dtype.kind == "b":
        return arr.astype(target)
    if target.kind in "iu":
        info = np.iinfo(target)
        if arr.dtype.kind == "f":
            arr = np.nan_to_num(np.trunc(arr), nan=0.0, posinf=info.max, neginf=info.min)
        return np.clip(arr, info.min, info.max).astype(target)
    limit = float(np.finfo(target).max)
    source = np.finfo(arr.dtype) if arr.dtype.kind == "f" else np.iinfo(arr.dtype)
    if float(source.max) > limit:
        arr = np.clip(arr, -limit, limit)
    return arr.astype(target)


def _slice_kernel(arrays, args):
    data, anchor, shape = arrays
    bounds = _slice_bounds(args, data.shape, anchor, shape)
    target = args["dtype"].numpy if args["dtype"] is not None else data.dtype
    inside = [
        (min(max(lo, 0), n), min(max(hi, 0), n)) for (lo, hi), n in zip(bounds, data.shape, strict=True)
    ]
    # The trailing Ellipsis keeps the region of a 0-D input an array (not a numpy scalar).
    region = _convert_saturating(data[tuple(slice(a, b) for a, b in inside) + (Ellipsis,)], target)
    out_shape = tuple(hi - lo for lo, hi in bounds)
    channel = _fill_channel_axis(args, out_shape)
    if region.shape == out_shape:
        return region
    fill = _c_cast(args["fill_values"], target)
    if channel is not None:
        fill = fill.reshape([-1 if d == channel else 1 for d in range(len(out_shape))])
    out = np.empty(out_shape, dtype=target)
    out[...] = fill
    out[tuple(slice(a - lo, b - lo) for (a, b), (lo, _) in zip(inside, bounds, strict=True))] = region
    return out


SLICE = Operator(
    "slice",
    inputs=[
        Input("data", doc="The data to slice."),
        Input("anchor", optional=True, doc="Start of the window, one value per sliced axis."),
        Input("shape_input", optional=True, doc="Size of the window, one value per sliced axis."),
    ],
    args=[
        _SLICE_AXES,
        _SLICE_AXIS_NAMES,
        Arg(
            "dtype",
            "dtype",
            None,
            doc="Output type: uint8, float16 or float32; the input's when omitted.",
            type_doc="DType",
        ),
        Arg(
            "end",
            "int_list",
            None,
            per_sample=True,
            doc="End of the window (exclusive), in elements.",
            type_doc="list of int",
        ),
        Arg(
            "fill_values",
            "float_list",
            [0.0],
            doc="Value of the padded elements: one, or one per channel.",
            type_doc="list of float",
        ),
        Arg("image_type", "any", None, doc="Deprecated and ignored.", type_doc="ImageType"),
        Arg(
            "normalized_anchor",
            "bool",
            True,
            doc="Whether a float ``anchor`` input is a fraction of the input extent.",
            type_doc="bool",
        ),
        Arg(
            "normalized_shape",
            "bool",
            True,
            doc="Whether a float ``shape_input`` is a fraction of the input extent.",
            type_doc="bool",
        ),
        Arg(
            "out_of_bounds_policy",
            "str",
            "error",
            choices=("error", "pad", "trim_to_shape"),
            doc="What a window reaching outside the input does: ``'error'`` raises, ``'pad'`` fills the "
            "outside with ``fill_values``, ``'trim_to_shape'`` shrinks the window to the input.",
            type_doc="str",
        ),
        Arg("output_dtype", "dtype", None, doc="Deprecated alias of ``dtype``.", type_doc="DType"),
        Arg(
            "rel_end",
            "float_list",
            None,
            per_sample=True,
            doc="End of the window as fractions of the input extent.",
            type_doc="list of float",
        ),
        Arg(
            "rel_shape",
            "float_list",
            None,
            per_sample=True,
            doc="Size of the window as fractions of the input extent.",
            type_doc="list of float",
        ),
        Arg(
            "rel_start",
            "float_list",
            None,
            per_sample=True,
            doc="Start of the window as fractions of the input extent.",
            type_doc="list of float",
        ),
        Arg(
            "shape",
            "int_list",
            None,
            per_sample=True,
            doc="Size of the window, in elements.",
            type_doc="list of int",
        ),
        Arg(
            "start",
            "int_list",
            None,
            per_sample=True,
            doc="Start of the window, in elements.",
            type_doc="list of int",
        ),
    ],
    prepare_args=_slice_prepare,
    infer_types=_slice_types,
    infer_shape=_slice_shape,
    kernel=_slice_kernel,
    doc="Extract a window of the data along some of its axes.\n\n"
    "The window is given either by the ``anchor`` and ``shape_input`` inputs (integers are "
    "element positions, floats are fractions of the extent unless ``normalized_anchor`` / "
    "``normalized_shape`` is False) or by the named arguments: a start (``start`` or "
    "``rel_start``, 0 by default) and an end (``end``, ``rel_end``, ``shape`` or "
    "``rel_shape``, the extent by default). Fractional positions round to the nearest element, "
    "halves away from zero. The values refer to the dimensions listed in ``axes`` or "
    "``axis_names``, in that order; a single value applies to all of them. With ``dtype``, "
    "floats are truncated toward zero and values saturate at the limits of the output type.",
)


# -- pad ----------------------------------------------------------------------


def _pad_types(ins, args):
    if args["axes"] is not None and args["axis_names"] is not None:
        raise ValueError("ndd.pad: 'axes' and 'axis_names' are mutually exclusive")
    x = ins[0]
    return [(x._dtype, x._layout)]


def _per_axis(name, values, count):
    """One value per padded axis: a single value applies to all."""
    if values is None or len(values) == 0:
        return None
    if len(values) == 1:
        return values * count
    if len(values) != count:
        raise ValueError(
            f"ndd.pad: '{name}' must have 1 or {count} values (one per padded axis), got {list(values)}"
        )
    return values


def _pad_plan(args, ndim):
    """The padded axes, their requested extents (None: the batch maximum) and alignments."""
    if args["axes"]:
        axes = _axes_from_list("ndd.pad", args["axes"], ndim)
    elif args["axis_names"]:
        axes = _axes_from_names("ndd.pad", args["axis_names"], args[_LAYOUT])
    else:
        axes = tuple(range(ndim))
    shape = _per_axis("shape", args["shape"], len(axes))
    align = _per_axis("align", args["align"], len(axes))
    if align is not None and min(align) <= 0:
        raise ValueError(f"ndd.pad: 'align' must be positive, got {list(args['align'])}")
    # A non-positive requested extent means "as large as the largest sample".
    extents = [s if s > 0 else None for s in shape] if shape is not None else [None] * len(axes)
    return axes, extents, align


def _padded_shape(in_shape, args, batch_max):
    """The output shape of one sample; ``batch_max`` gives the largest extent of each
    dimension over the batch (None: unknown, so the shape is too where it is needed)."""
    axes, extents, align = _pad_plan(args, len(in_shape))
    out = list(in_shape)
    for k, d in enumerate(axes):
        target = extents[k]
        if target is None:
            if batch_max is None:
                return None
            target = batch_max[d]
        out[d] = max(target, in_shape[d])
        if align is not None:
            out[d] = -(-out[d] // align[k]) * align[k]
    return tuple(out)


def _pad_shape(shapes, args):
    # The batch maximum is unknown here: only explicit extents give the shape now.
    shape = _padded_shape(shapes[0], args, None)
    return None if shape is None else [shape]


def _pad_array(arr, args, batch_max):
    out_shape = _padded_shape(arr.shape, args, batch_max)
    if out_shape == arr.shape:
        return arr
    out = np.empty(out_shape, dtype=arr.dtype)
    out[...] = _c_cast(args["fill_value"], arr.dtype)
    out[tuple(slice(0, n) for n in arr.shape)] = arr
    return out


def _pad_kernel(arrays, args):
    return _pad_array(arrays[0], args, arrays[0].shape)


def _pad_batch_kernel(inputs, sample_args, batch_size, ctx):
    data = inputs[0]
    samples = data if isinstance(data, list) else [data] * batch_size
    batch_max = tuple(max(extents) for extents in zip(*(s.shape for s in samples), strict=True))
    return [[_pad_array(s, a, batch_max) for s, a in zip(samples, sample_args, strict=True)]]


PAD = Operator(
    "pad",
    inputs=[Input("input", doc="The data to pad.")],
    args=[
        Arg(
            "align",
            "int_list",
            None,
            per_sample=True,
            doc="Round the padded extents up to multiples of these values (one, or one per padded axis).",
            type_doc="int or list of int",
        ),
        Arg(
            "axes",
            "int_list",
            None,
            per_sample=True,
            doc="Indices of the padded dimensions; all of them by default.",
            type_doc="list of int",
        ),
        Arg(
            "axis_names",
            "layout",
            None,
            doc="Layout names of the padded dimensions (instead of ``axes``).",
            type_doc="str",
        ),
        Arg(
            "fill_value", "float", 0.0, per_sample=True, doc="Value of the added elements.", type_doc="float"
        ),
        Arg(
            "shape",
            "int_list",
            None,
            per_sample=True,
            doc="Requested extents of the padded axes (one, or one per padded axis); a sample larger than "
            "that keeps its extent, and a value of 0 or less pads to the largest sample of the batch.",
            type_doc="int or list of int",
        ),
    ],
    prepare_args=_record_layout,
    infer_types=_pad_types,
    infer_shape=_pad_shape,
    kernel=_pad_kernel,
    batch_kernel=_pad_batch_kernel,
    doc="Pad the data at the end of some dimensions with a fill value.\n\n"
    "Without ``shape``, each padded dimension grows to the largest extent in the batch (a "
    "single sample is left as is), then to a multiple of ``align``. The fill value is "
    "converted to the input type as a C cast does (truncation, wrap-around).",
)


# -- cat, stack ---------------------------------------------------------------


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
        return args[_LAYOUT].index(args["axis_name"])
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
    prepare_args=_record_layout,
    infer_types=_cat_types,
    infer_shape=_cat_shape,
    kernel=_cat_kernel,
    doc="Concatenate the inputs along an existing dimension.\n\n"
    "The inputs must have the same dtype and number of dimensions and may differ in "
    "extent only along the joined dimension. The result has the layout of the first input.",
)


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

OPERATORS = [SLICE, PAD, CAT, STACK]
