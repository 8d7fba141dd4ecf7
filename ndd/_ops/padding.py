"""Padding at the end of dimensions: pad.

Deliberate divergences from the reference:
- ``pad`` takes a one-element array as a per-sample ``fill_value`` (the reference
  wants 0-D samples) and pads any dtype and dimensionality (the reference
  rejects float64 and 0-D inputs).
- A one-element ``shape`` or ``align`` applies to every padded axis also when
  given per sample as a Tensor or Batch; the reference broadcasts only literal
  lists written at the call site.
"""

import math

import numpy as np

from .._memory import exceeds_half_of_memory
from .._prepare.args import InvalidArgumentError
from .axes import INPUT_LAYOUT, axes_from_list, axes_from_names, record_layout
from .conversions import c_cast
from .gpu_layout import GpuPad
from .schema import Arg, Input, Operator, batch_samples_of


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
        axes = axes_from_list("ndd.pad", args["axes"], ndim)
    elif args["axis_names"]:
        axes = axes_from_names("ndd.pad", args["axis_names"], args[INPUT_LAYOUT])
    else:
        axes = tuple(range(ndim))
    shape = _per_axis("shape", args["shape"], len(axes))
    align = _per_axis("align", args["align"], len(axes))
    if align is not None and any(a <= 0 for a in align):
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
    nbytes = math.prod(out_shape) * arr.itemsize
    if exceeds_half_of_memory(nbytes):
        raise InvalidArgumentError(
            f"ndd.pad: the padded sample would be {out_shape} ({nbytes / 2**30:.0f} GiB), more than half of "
            "this machine's memory; check 'shape' and 'align'"
        )
    out = np.empty(out_shape, dtype=arr.dtype)
    out[...] = c_cast(args["fill_value"], arr.dtype)
    out[tuple(slice(0, n) for n in arr.shape)] = arr
    return out


def _pad_kernel(arrays, args):
    return _pad_array(arrays[0], args, arrays[0].shape)


def _pad_batch_kernel(inputs, sample_args, batch_size, ctx):
    data = inputs[0]
    samples = batch_samples_of(data, batch_size)
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
            "fill_value",
            "float",
            0.0,
            per_sample=True,
            doc="Value of the added elements.",
            type_doc="float",
            nonfinite=True,
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
    prepare_args=record_layout,
    infer_types=_pad_types,
    infer_shape=_pad_shape,
    kernel=_pad_kernel,
    batch_kernel=_pad_batch_kernel,
    doc="Pad the data at the end of some dimensions with a fill value.\n\n"
    "Without ``shape``, each padded dimension grows to the largest extent in the batch (a "
    "single sample is left as is), then to a multiple of ``align``. The fill value is "
    "converted to the input type as a C cast does (truncation, wrap-around).",
)

PAD.gpu_kernel = GpuPad(PAD, _padded_shape, lambda args, dtype: c_cast(args["fill_value"], dtype).reshape(1))

OPERATORS = [PAD]
