"""Windows of the data: slice.

Deliberate divergences from the reference:
- ``slice`` accepts data of any type and dimensionality (the reference rejects
  bool and takes 1 to 4 dimensions) and anchor/shape inputs of any integer or
  float type, each interpreted on its own (the reference takes int32, int64 and
  float32 only, both of the same type); ``dtype`` is limited to uint8, float16
  and float32 as in the reference.
- A one-element list (``start=[2]``, ``shape=[4]``) applies to every axis also
  when given per sample as a Tensor or Batch; the reference broadcasts only
  literal lists written at the call site.
"""

import functools
import warnings

import numpy as np

from .._prepare.args import InvalidArgumentError
from .._types import float16, float32, uint8
from .axes import INPUT_LAYOUT, axes_from_list, axes_from_names, record_layout
from .conversions import c_cast, convert_saturating, round_half_away
from .filters import PAD_MODES, border_map
from .gpu_layout import GpuSlice
from .schema import Arg, Input, Operator

# The policies that fill the outside of the input with its own elements, and the
# names each is also known by ("pad" is also "constant").
_BORDERS = ("edge", "reflect", "reflect_101", "wrap")
_POLICY_NAMES = {"constant": "pad", "clamp": "edge", "reflect_1001": "reflect"}


def _slice_prepare(ins, args):
    """Record the input layout, name the policy by its main name and map the
    deprecated arguments of ``slice``."""
    record_layout(ins, args)
    policy = args["out_of_bounds_policy"]
    args["out_of_bounds_policy"] = _POLICY_NAMES.get(policy, policy)
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
    check_window_dtype("ndd.slice", dtype, data._dtype)
    return [(dtype or data._dtype, data._layout)]


def check_window_dtype(qualname, dtype, source, name="dtype"):
    """Refuse a ``dtype`` (given as argument ``name``) that ``slice`` and ``crop`` do not
    convert a window of type ``source`` to: any type may stay as it is; the conversions
    are to these."""
    if dtype is not None and dtype not in _SLICE_OUTPUT_TYPES and dtype != source:
        names = ", ".join(str(t) for t in _SLICE_OUTPUT_TYPES)
        raise InvalidArgumentError(
            f"{qualname}: '{name}' must be one of {names} or the input's type ({source}), got {dtype}"
        )


def _slice_axes(args, ndim):
    if _given(args, _SLICE_AXES):
        return axes_from_list("ndd.slice", args["axes"], ndim)
    layout = args[INPUT_LAYOUT] or _DEFAULT_LAYOUTS.get(ndim, "")
    return axes_from_names("ndd.slice", args["axis_names"], layout)


def _relative(value, extent):
    # The reference scales relative named arguments in single precision, which
    # decides ties such as 0.35 * 10 (3.5 in float32, 3.4999999 in float64).
    return float(np.float32(value) * np.float32(extent))


def named_window(args, axes, in_shape, qualname="ndd.slice"):
    """(start, end) floats per sliced axis (``axes``, dimensions of ``in_shape``) from
    the named arguments start/rel_start and end/rel_end/shape/rel_shape, one value or
    one per axis; the errors name ``qualname``."""
    values = {}
    for name in _STARTS + _ENDS:
        v = args[name]
        if v is None or len(v) == 0:  # an empty list means "not given"
            continue
        if len(v) == 1:  # one value applies to every sliced axis
            v = v * len(axes)
        if len(v) != len(axes):
            raise InvalidArgumentError(
                f"{qualname}: '{name}' must have 1 value or one per sliced axis ({len(axes)}), got {list(v)}"
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
            if "shape" in values:
                size = values["shape"][i]
                hi = lo + size
            elif "rel_start" in values:
                # Both relative: the reference adds the fractions (in double) and then
                # scales: 0.35 of 50 from 0 ends at 17, where 0 + float32(17.5) gives 18.
                size = values["rel_shape"][i]
                hi = (float(np.float32(values["rel_start"][i])) + float(np.float32(size))) * extent
            else:
                size = _relative(values["rel_shape"][i], extent)
                hi = lo + size
            if size < 0:
                raise InvalidArgumentError(
                    f"{qualname}: the slice shape must not be negative, got {size} for axis {d}"
                )
        elif "end" in values:
            hi = float(values["end"][i])
        elif "rel_end" in values:
            hi = _relative(values["rel_end"][i], extent)
        else:
            hi = float(extent)
        window.append((lo, hi))
    return window


def positional_window(args, axes, in_shape, anchor, shape, qualname="ndd.slice"):
    """(start, end) floats per sliced axis from the anchor and shape inputs, one value
    per axis; float inputs are fractions of the extent when normalized_anchor /
    normalized_shape say so. The errors name ``qualname``."""
    anchor = anchor.reshape(-1)
    shape = shape.reshape(-1)
    for name, v in (("anchor", anchor), ("shape_input", shape)):
        if v.size != len(axes):
            raise InvalidArgumentError(
                f"{qualname}: input '{name}' must have one value per sliced axis ({len(axes)}), "
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
        window = positional_window(args, axes, in_shape, anchor, shape)
    else:
        window = named_window(args, axes, in_shape)
    policy = args["out_of_bounds_policy"]
    bounds = [(0, n) for n in in_shape]
    for d, (lo, hi) in zip(axes, window, strict=True):
        if hi < lo:
            raise ValueError(f"ndd.slice: the slice of axis {d} ends ({hi}) before it starts ({lo})")
        lo, hi, extent = round_half_away(lo), round_half_away(hi), in_shape[d]
        if policy == "trim_to_shape":
            lo, hi = min(max(lo, 0), extent), min(max(hi, 0), extent)
        elif policy == "error" and (lo < 0 or hi > extent):
            raise ValueError(
                f"ndd.slice: the slice [{lo}, {hi}) of axis {d} is out of bounds of the input shape "
                f"{tuple(in_shape)}; pass out_of_bounds_policy='pad' or 'trim_to_shape'"
            )
        elif policy in _BORDERS and extent == 0 and hi > lo:
            raise ValueError(
                f"ndd.slice: out_of_bounds_policy={policy!r} has no elements to repeat: axis {d} of "
                f"the input shape {tuple(in_shape)} is empty"
            )
        bounds[d] = (lo, hi)
    return bounds


def border_indices(lo, hi, extent, policy):
    """The input index each position ``lo .. hi - 1`` of an axis of ``extent``
    elements reads under a border ``policy`` (int64 array, read-only): filter's
    padding maps, whose np.pad names these policies have (``edge`` is np.pad's own)."""
    before, after = max(0, -lo), max(0, hi - extent)
    return border_map(extent, before, after, PAD_MODES.get(policy, policy))[lo + before : hi + before]


def _fill_channel_axis(args, out_shape):
    """The dimension along which several fill values are laid out, None for one value."""
    fill = args["fill_values"]
    if args["out_of_bounds_policy"] != "pad" or len(fill) == 1:
        return None
    layout = args[INPUT_LAYOUT] or _DEFAULT_LAYOUTS.get(len(out_shape), "")
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


def _slice_kernel(arrays, args):
    data, anchor, shape = arrays
    bounds = _slice_bounds(args, data.shape, anchor, shape)
    target = args["dtype"].numpy if args["dtype"] is not None else data.dtype
    inside = [
        (min(max(lo, 0), n), min(max(hi, 0), n)) for (lo, hi), n in zip(bounds, data.shape, strict=True)
    ]
    # The trailing Ellipsis keeps the region of a 0-D input an array (not a numpy scalar).
    policy = args["out_of_bounds_policy"]
    if policy in _BORDERS and any(lo < 0 or hi > n for (lo, hi), n in zip(bounds, data.shape, strict=True)):
        indices = [border_indices(lo, hi, n, policy) for (lo, hi), n in zip(bounds, data.shape, strict=True)]
        return convert_saturating(data[np.ix_(*indices)], target)
    region = convert_saturating(data[tuple(slice(a, b) for a, b in inside) + (Ellipsis,)], target)
    out_shape = tuple(hi - lo for lo, hi in bounds)
    channel = _fill_channel_axis(args, out_shape)
    if region.shape == out_shape:
        return region
    fill = c_cast(args["fill_values"], target)
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
            nonfinite=True,
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
            choices=(
                "error",
                "pad",
                "constant",
                "edge",
                "clamp",
                "reflect",
                "reflect_1001",
                "reflect_101",
                "wrap",
                "trim_to_shape",
            ),
            doc="What a window reaching outside the input does: ``'error'`` raises; ``'pad'`` (or "
            "``'constant'``) fills the outside with ``fill_values``; ``'edge'`` (or ``'clamp'``) repeats "
            "the edge elements; ``'reflect'`` (or ``'reflect_1001'``) mirrors the input, edge elements "
            "included (``1 0 | 0 1 2``); ``'reflect_101'`` mirrors it about the edge elements "
            "(``2 1 | 0 1 2``); ``'wrap'`` repeats the input; ``'trim_to_shape'`` shrinks the window "
            "to the input.",
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


def _gpu_fill(args, out_shape, dtype):
    """The fill values of a padded GPU slice and the output dimension they are laid along."""
    channel = _fill_channel_axis(args, out_shape)
    fill = c_cast(args["fill_values"], dtype).reshape(-1)
    return (fill if channel is not None else fill[:1]), channel


def _gpu_border(args):
    """Under a border policy, ``border_indices`` for it; None under the others."""
    policy = args["out_of_bounds_policy"]
    return functools.partial(border_indices, policy=policy) if policy in _BORDERS else None


SLICE.gpu_kernel = GpuSlice(SLICE, _slice_bounds, _gpu_fill, _gpu_border)

OPERATORS = [SLICE]
