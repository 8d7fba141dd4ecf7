"""Fixed-size windows of images: crop, crop_mirror_normalize and flip.

The crop window follows the reference: its size is the requested size truncated
to whole elements (a size of 0 or less keeps the whole extent), its start is
``(extent - size) * crop_pos`` rounded half away from zero (``rounding='round'``)
or toward zero (``'truncate'``). The third crop extent (``crop_d`` or a third
``crop`` value) applies to the depth axis D, or to the frames F of a sequence.

Deliberate divergences from the reference:
- ``crop`` and ``flip`` take any layout with H and W (``HW`` included); the reference
  lists the layouts it accepts.
- ``crop_mirror_normalize`` broadcasts a one-value ``mean``/``std`` over the channels
  also when the window is padded with several ``fill_values``; the reference then
  leaves all channels but the first at 0 in the part inside the image.
"""

import functools
import math

import numpy as np

from .._cpu.crop_mirror_normalize import normalize_window
from .._cpu.mirror import reverse_items
from .._prepare.args import InvalidArgumentError
from .._types import float16, float32, int8, uint8
from .axes import INPUT_LAYOUT, record_layout
from .conversions import c_cast, convert_saturating, round_half_away
from .gpu_image import GpuCropMirrorNormalize, WindowPlan
from .gpu_layout import GpuSlice, GpuWindow, c_strides
from .image_layout import image_axes, known_ndim
from .schema import Arg, Input, Operator, batch_samples_of
from .slicing import check_window_dtype

_f32 = np.float32


@functools.lru_cache(maxsize=256)
def _image_layout(op, layout, ndim, five_dims="", four_dims="FHWC"):
    """The layout of an image sample: its own, or the usual one for its dimensions."""
    return image_axes(op, layout, ndim, four_dims=four_dims, five_dims=five_dims).layout


def _output_layout(op, x, five_dims="", four_dims="FHWC"):
    if x._layout:
        return x._layout
    ndim = known_ndim(x)
    return _image_layout(op, "", ndim, five_dims, four_dims) if ndim is not None else ""


# The reference's crop reads 4-D data without a layout as a volume (DHWC), where flip,
# crop_mirror_normalize and the resampling operators read a sequence (FHWC).
_CROP_FOUR_DIMS = "DHWC"


# --- the crop window -----------------------------------------------------------------


def _crop_axes(layout, count):
    """The cropped axes of ``layout``, outermost first, for ``count`` crop extents
    (3: the depth, D or else F, then H and W)."""
    h, w = layout.index("H"), layout.index("W")
    if count == 2:
        return (h, w)
    depth = layout.find("D")
    return (depth if depth >= 0 else layout.find("F"), h, w)


def _crop_sizes(op, args):
    """The requested crop extents, outermost first; an extent that truncates to 0 or
    less keeps the whole extent of its axis. As in the reference, presence decides which
    arguments give the window: ``crop_w=0`` counts as a width."""
    h_given, w_given, d_given = (op.given(args, name) for name in ("crop_h", "crop_w", "crop_d"))
    if op.given(args, "crop"):
        if h_given or w_given or d_given:
            raise InvalidArgumentError(
                f"{op.qualname}: 'crop' cannot be combined with 'crop_h', 'crop_w' or 'crop_d'"
            )
        crop = args["crop"]
        if len(crop) not in (2, 3):
            raise InvalidArgumentError(
                f"{op.qualname}: 'crop' must have 2 values (height, width) or 3 (depth, height, width), "
                f"got {list(crop)}"
            )
        return list(crop)
    if h_given != w_given:
        raise InvalidArgumentError(f"{op.qualname}: 'crop_h' and 'crop_w' must be given together")
    sizes = [args["crop_h"], args["crop_w"]]
    if d_given:
        sizes.insert(0, args["crop_d"])
    return sizes


_POSITION_NAMES = {2: ("crop_pos_y", "crop_pos_x"), 3: ("crop_pos_z", "crop_pos_y", "crop_pos_x")}


def check_crop_position(qualname, name, value):
    """Refuse a relative crop position outside [0, 1], as the reference does even where
    the window would fit (crop, crop_mirror_normalize, decoders.image_crop)."""
    if not 0.0 <= value <= 1.0:
        raise InvalidArgumentError(f"{qualname}: '{name}' must be within [0, 1], got {value}")


def _crop_window(op, args, layout, shape):
    """[(axis, start, size)] of the cropped axes, before the out-of-bounds policy."""
    sizes = _crop_sizes(op, args)
    if len(sizes) == 3 and "D" not in layout and "F" not in layout:
        sizes = sizes[1:]  # a depth the data does not have is ignored, as in the reference
    axes = _crop_axes(layout, len(sizes))
    truncate = args["rounding"] == "truncate"
    window = []
    for axis, size, pos_name in zip(axes, sizes, _POSITION_NAMES[len(sizes)], strict=True):
        pos = args[pos_name]
        check_crop_position(op.qualname, pos_name, pos)
        extent = shape[axis]
        size = int(size)
        if size <= 0:
            size = extent
        # The reference takes the position in single precision and scales it in double:
        # 0.06 * 25 is 1.4999..., which rounds to 1.
        start = float(_f32(pos)) * (extent - size)
        start = int(start) if truncate else round_half_away(start)
        window.append((axis, start, size))
    return window


def _crop_bounds(op, args, layout, shape):
    """Integer (start, end) of every dimension of the sample, after the policy."""
    bounds = [(0, n) for n in shape]
    policy = args["out_of_bounds_policy"]
    for axis, start, size in _crop_window(op, args, layout, shape):
        end, extent = start + size, shape[axis]
        if policy == "trim_to_shape":
            start, end = min(max(start, 0), extent), min(max(end, 0), extent)
        elif policy == "error" and (start < 0 or end > extent):
            raise ValueError(
                f"{op.qualname}: the crop window [{start}, {end}) of axis {layout[axis]!r} is out of bounds "
                f"of the input shape {tuple(shape)}; pass out_of_bounds_policy='pad' or 'trim_to_shape'"
            )
        bounds[axis] = (start, end)
    return bounds


def _inside(bounds, shape):
    return [(min(max(lo, 0), n), min(max(hi, 0), n)) for (lo, hi), n in zip(bounds, shape, strict=True)]


# --- crop ------------------------------------------------------------------------------


def _crop_types(ins, args):
    op = CROP
    dtype, name = args["dtype"], "dtype"
    if args["output_dtype"] is not None:
        if dtype is not None:
            raise InvalidArgumentError("ndd.crop: 'output_dtype' is a deprecated alias of 'dtype'; pass one")
        dtype = args["dtype"] = args["output_dtype"]
        name = "output_dtype"
    x = ins[0]
    check_window_dtype("ndd.crop", dtype, x._dtype, name)
    return [(dtype or x._dtype, _output_layout(op, x, four_dims=_CROP_FOUR_DIMS))]


def _fill_shape(op, args, layout, out_shape, count):
    """The shape that lays ``count`` fill values along the channel axis (None for one)."""
    if count == 1:
        return None
    channel = layout.find("C")
    if channel < 0 or out_shape[channel] != count:
        channels = out_shape[channel] if channel >= 0 else 0
        raise InvalidArgumentError(
            f"{op.qualname}: 'fill_values' must have 1 value or one per channel ({channels}), got {count}"
        )
    return [-1 if d == channel else 1 for d in range(len(out_shape))]


def _crop_shape(shapes, args):
    shape = shapes[0]
    layout = _image_layout(CROP, args[INPUT_LAYOUT], len(shape), four_dims=_CROP_FOUR_DIMS)
    out_shape = tuple(hi - lo for lo, hi in _crop_bounds(CROP, args, layout, shape))
    if args["out_of_bounds_policy"] == "pad":
        _fill_shape(CROP, args, layout, out_shape, len(args["fill_values"]))
    return [out_shape]


def _crop_kernel(arrays, args):
    data = arrays[0]
    layout = _image_layout(CROP, args[INPUT_LAYOUT], data.ndim, four_dims=_CROP_FOUR_DIMS)
    bounds = _crop_bounds(CROP, args, layout, data.shape)
    inside = _inside(bounds, data.shape)
    target = args["dtype"].numpy if args["dtype"] is not None else data.dtype
    region = data[tuple(slice(a, b) for a, b in inside)]
    out_shape = tuple(hi - lo for lo, hi in bounds)
    if region.shape == out_shape:
        return convert_saturating(region, target)
    # A padded window converts its data as a C cast does (wrapping), as the reference does.
    region = region if region.dtype == target else c_cast(region, target)
    # Fill values convert as a C cast does (wrapping), unlike the data, as in the reference.
    fill = c_cast(args["fill_values"], target)
    fill_shape = _fill_shape(CROP, args, layout, out_shape, fill.size)
    out = np.empty(out_shape, dtype=target)
    out[...] = fill if fill_shape is None else fill.reshape(fill_shape)
    out[tuple(slice(a - lo, b - lo) for (a, b), (lo, _) in zip(inside, bounds, strict=True))] = region
    return out


def _window_args(default_dtype):
    """The window arguments shared by crop and crop_mirror_normalize, by name."""
    return {
        "crop": Arg(
            "crop",
            "float_list",
            None,
            per_sample=True,
            doc="Size of the window: (height, width) or (depth, height, width); exclusive with "
            "``crop_h``/``crop_w``/``crop_d``. A size of 0 or less keeps the whole extent.",
            type_doc="list of float",
        ),
        "crop_d": Arg(
            "crop_d",
            "float",
            0.0,
            per_sample=True,
            doc="Depth of the window (the D axis, or the frames of a sequence); 0 keeps all.",
            type_doc="float",
        ),
        "crop_h": Arg(
            "crop_h",
            "float",
            0.0,
            per_sample=True,
            doc="Height of the window; 0 keeps all.",
            type_doc="float",
        ),
        "crop_pos_x": Arg(
            "crop_pos_x",
            "float",
            0.5,
            per_sample=True,
            doc="Horizontal position of the window: 0 is the left edge, 1 the right one.",
            type_doc="float",
        ),
        "crop_pos_y": Arg(
            "crop_pos_y",
            "float",
            0.5,
            per_sample=True,
            doc="Vertical position of the window: 0 is the top, 1 the bottom.",
            type_doc="float",
        ),
        "crop_pos_z": Arg(
            "crop_pos_z",
            "float",
            0.5,
            per_sample=True,
            doc="Position of the window along the depth (or frame) axis, from 0 to 1.",
            type_doc="float",
        ),
        "crop_w": Arg(
            "crop_w", "float", 0.0, per_sample=True, doc="Width of the window; 0 keeps all.", type_doc="float"
        ),
        "dtype": Arg("dtype", "dtype", default_dtype, doc="Output type.", type_doc="DType"),
        "fill_values": Arg(
            "fill_values",
            "float_list",
            [0.0],
            doc="Value of the padded elements with out_of_bounds_policy='pad': one, or one per channel.",
            type_doc="list of float",
            nonfinite=True,
        ),
        "image_type": Arg("image_type", "any", None, doc="Deprecated and ignored.", type_doc="ImageType"),
        "out_of_bounds_policy": Arg(
            "out_of_bounds_policy",
            "str",
            "error",
            choices=("error", "pad", "trim_to_shape"),
            doc="A window reaching outside the input: ``'error'`` raises, ``'pad'`` fills the outside with "
            "``fill_values``, ``'trim_to_shape'`` shrinks the window to the input.",
            type_doc="str",
        ),
        "output_dtype": Arg(
            "output_dtype", "dtype", None, doc="Deprecated alias of ``dtype``.", type_doc="DType"
        ),
        "rounding": Arg(
            "rounding",
            "str",
            "round",
            choices=("round", "truncate"),
            doc="How the window start is made whole: ``'round'`` (halves away from zero) or "
            "``'truncate'`` (toward zero).",
            type_doc="str",
        ),
    }


_CROP_ARGS = _window_args(None)

CROP = Operator(
    "crop",
    inputs=[Input("input", doc="Images (HWC, CHW), sequences (FHWC, ...) or volumes (DHWC, ...).")],
    args=[
        _CROP_ARGS[name]
        for name in (
            "crop",
            "crop_d",
            "crop_h",
            "crop_pos_x",
            "crop_pos_y",
            "crop_pos_z",
            "crop_w",
            "dtype",
            "fill_values",
            "image_type",
            "out_of_bounds_policy",
            "output_dtype",
            "rounding",
        )
    ],
    prepare_args=record_layout,
    infer_types=_crop_types,
    infer_shape=_crop_shape,
    kernel=_crop_kernel,
    doc="Cut a window of a fixed size out of each image, at a relative position.\n\n"
    "The window is ``crop`` (or ``crop_h``, ``crop_w`` and ``crop_d``) large and starts at "
    "``(extent - size) * crop_pos`` along each cropped axis. With ``dtype``, floats are truncated "
    "toward zero and values saturate at the limits of the output type.",
)


# --- crop_mirror_normalize -------------------------------------------------------------

_CMN_OUTPUT_TYPES = (float32, float16, uint8, int8)
_CMN_KERNEL_SOURCES = {np.dtype(t) for t in ("uint8", "int16", "uint16", "int32", "float32")}
_CMN_INPUT_TYPES = tuple(sorted(t.name for t in _CMN_KERNEL_SOURCES)) + ("float16",)


def _cmn_layouts(op, args, layout, ndim):
    """(input layout, output layout) of a sample; the output one may have a channel added."""
    return _cmn_layouts_of(op, layout, ndim, args["output_layout"])


@functools.lru_cache(maxsize=256)
def _cmn_layouts_of(op, layout, ndim, output_layout):
    layout = _image_layout(op, layout, ndim)
    if "C" not in layout:
        raise InvalidArgumentError(
            f"{op.qualname}: the input layout must have a channel axis C, got {layout!r}"
        )
    out_layout = output_layout or layout
    if sorted(out_layout) != sorted(layout):
        raise InvalidArgumentError(
            f"{op.qualname}: 'output_layout' must be a permutation of the input layout {layout!r}, "
            f"got {out_layout!r}"
        )
    return layout, out_layout


def _cmn_types(ins, args):
    op = CROP_MIRROR_NORMALIZE
    name = "dtype"
    if args["output_dtype"] is not None:
        if args["dtype"] is not _CMN_DTYPE.converted_default:
            raise InvalidArgumentError(
                f"{op.qualname}: 'output_dtype' is a deprecated alias of 'dtype'; pass one"
            )
        args["dtype"] = args["output_dtype"]
        name = "output_dtype"
    dtype = args["dtype"]
    if dtype not in _CMN_OUTPUT_TYPES:
        names = ", ".join(str(t) for t in _CMN_OUTPUT_TYPES)
        raise InvalidArgumentError(f"{op.qualname}: '{name}' must be one of {names}, got {dtype}")
    x = ins[0]
    if x._dtype.numpy.name not in _CMN_INPUT_TYPES:
        raise InvalidArgumentError(
            f"{op.qualname}: the input type must be one of {', '.join(_CMN_INPUT_TYPES)}, got {x._dtype}"
        )
    out_layout = args["output_layout"]
    ndim = known_ndim(x)
    if ndim is not None:
        out_layout = _cmn_layouts(op, args, x._layout, ndim)[1]
    return [(dtype, out_layout)]


def _check_per_channel(op, args, name, channels):
    count = len(args[name])
    if count not in (1, channels):
        raise InvalidArgumentError(
            f"{op.qualname}: '{name}' must have 1 value or one per channel ({channels}), got {count}"
        )


def _padded_channels(channels):
    """The channel count pad_output gives: the next power of two (as the reference
    does), so 3 channels become 4 and 5 become 8; 1, 2 and 4 stay as they are."""
    return channels if channels <= 1 else 1 << (channels - 1).bit_length()


def _cmn_plan(args, layout_in, shape):
    """What one sample needs: the layouts, the window bounds and the output shape."""
    op = CROP_MIRROR_NORMALIZE
    layout, out_layout = _cmn_layouts(op, args, layout_in, len(shape))
    bounds = _crop_bounds(op, args, layout, shape)
    channel = layout.index("C")
    channels = shape[channel]
    extents = [hi - lo for lo, hi in bounds]
    out_channels = _padded_channels(channels) if args["pad_output"] else channels
    extents[channel] = out_channels
    out_shape = tuple([extents[layout.index(a)] for a in out_layout])
    _check_per_channel(op, args, "mean", channels)
    _check_per_channel(op, args, "std", channels)
    fill = args["fill_values"]
    # As in the reference: with a per-channel mean or std, one fill value per input channel
    # (the channels pad_output adds take 0); otherwise one per output channel.
    per_channel = channels > 1 and (len(args["mean"]) == channels or len(args["std"]) == channels)
    allowed = (1, out_channels, channels) if per_channel else (1, out_channels)
    if args["out_of_bounds_policy"] == "pad" and len(fill) not in allowed:
        raise InvalidArgumentError(
            f"{op.qualname}: 'fill_values' must have 1 value or one per output channel ({out_channels}), "
            f"got {len(fill)}"
        )
    return layout, out_layout, bounds, out_shape


def _cmn_shape(shapes, args):
    return [_cmn_recipe(_recipe_key(args, shapes[0])).out_shape]


def _saturate(values, target):
    """Fill values converted as the output values are: rounded half away, saturated."""
    values = np.asarray(values, dtype=np.float32)
    if target.kind in "iu":
        info = np.iinfo(target)
        values = np.clip(round_half_away(values), info.min, info.max)
    return values.astype(target)


# The arguments that decide where the window lies and what the output looks like.
_RECIPE_ARGS = (
    "crop",
    "crop_d",
    "crop_h",
    "crop_w",
    "crop_pos_x",
    "crop_pos_y",
    "crop_pos_z",
    "rounding",
    "out_of_bounds_policy",
    "pad_output",
    "output_layout",
    "fill_values",
    "dtype",
)


def _recipe_key(args, shape):
    return (args[INPUT_LAYOUT], tuple(shape), len(args["mean"]), len(args["std"])) + tuple(
        [args[name] for name in _RECIPE_ARGS]
    )


class _Recipe:
    """How one sample configuration is computed: shapes, views and fill, worked out
    once per distinct configuration (a batch usually has one) rather than per sample."""

    __slots__ = ("out_shape", "work_type", "to_input_order", "fill", "source", "dest", "plane_order")


@functools.lru_cache(maxsize=512)
def _cmn_recipe(key):
    layout_in, shape = key[0], key[1]
    args = dict(zip(_RECIPE_ARGS, key[4:], strict=True))
    args["mean"], args["std"] = (0.0,) * key[2], (0.0,) * key[3]
    layout, out_layout, bounds, out_shape = _cmn_plan(args, layout_in, shape)
    recipe = _Recipe()
    recipe.out_shape = out_shape
    target = args["dtype"].numpy
    # float16 results are computed in float32 and rounded once at the end.
    recipe.work_type = np.dtype(np.float32) if target == np.float16 else target
    channel = layout.index("C")
    channels = shape[channel]
    inside = _inside(bounds, shape)
    padding = args["out_of_bounds_policy"] == "pad"
    partial = any(a != lo or b != hi for (lo, hi), (a, b) in zip(bounds, inside, strict=True))
    # The output seen with the input's axis order, channels included.
    recipe.to_input_order = tuple(out_layout.index(a) for a in layout)
    recipe.fill = None
    if args["pad_output"] or (padding and partial):
        # Without padding only the added channels show the fill, and it is 0.
        fill = list(args["fill_values"]) if padding else [0.0]
        out_channels = out_shape[out_layout.index("C")]
        # One value per input channel: the channels pad_output adds take 0, as in the reference.
        values = fill * out_channels if len(fill) == 1 else fill + [0.0] * (out_channels - len(fill))
        recipe.fill = _saturate(values, recipe.work_type).reshape(
            [-1 if d == channel else 1 for d in range(len(shape))]
        )
    # The mirrored window maps input column x to output column (width - 1 - (x - start)).
    w_axis = layout.index("W")
    recipe.source = []
    recipe.dest = []
    for mirror in (False, True):
        region_index = []
        target_index = []
        for d, ((lo, hi), (a, b)) in enumerate(zip(bounds, inside, strict=True)):
            if d == channel:
                region_index.append(slice(None))
                target_index.append(slice(0, channels))
            elif d == w_axis and mirror:
                region_index.append(slice(a, b))
                target_index.append(slice(hi - b, hi - a))
            else:
                region_index.append(slice(a, b))
                target_index.append(slice(a - lo, b - lo))
        recipe.source.append(tuple(region_index))
        recipe.dest.append(tuple(target_index))
    empty = any(b <= a for a, b in inside)
    recipe.plane_order = (
        None
        if empty
        else (tuple([layout.index(a) for a in layout if a not in "HWC"] + [layout.index(a) for a in "HWC"]))
    )
    return recipe


@functools.lru_cache(maxsize=512)
def _normalization(mean, std, scale, channels):
    """Per-channel mean and multiplier (scale / std) as float32 arrays, shared read-only."""
    mean_values = np.full(channels, mean[0], np.float32) if len(mean) == 1 else np.array(mean, np.float32)
    std_values = np.full(channels, std[0], np.float32) if len(std) == 1 else np.array(std, np.float32)
    with np.errstate(divide="ignore"):
        multiplier = _f32(scale) / std_values
    mean_values.flags.writeable = False
    multiplier.flags.writeable = False
    return mean_values, multiplier


def _cmn_kernel(arrays, args):
    data = arrays[0]
    recipe = _cmn_recipe(_recipe_key(args, data.shape))
    out = np.empty(recipe.out_shape, dtype=recipe.work_type)
    _cmn_into(data, args, recipe, out)
    target = args["dtype"].numpy
    return out if out.dtype == target else out.astype(target)


def _cmn_into(data, args, recipe, out):
    """Write the result of one sample into ``out`` (of the work type)."""
    out_view = out.transpose(recipe.to_input_order)
    if recipe.fill is not None:
        out_view[...] = recipe.fill
    if recipe.plane_order is None:
        return
    if data.dtype not in _CMN_KERNEL_SOURCES:
        data = data.astype(np.float32)
    mirror = 1 if args["mirror"] else 0
    source = data[recipe.source[mirror]].transpose(recipe.plane_order)
    dest = out_view[recipe.dest[mirror]].transpose(recipe.plane_order)
    mean, multiplier = _normalization(
        args["mean"], args["std"], args["scale"], data.shape[recipe.plane_order[-1]]
    )
    if source.ndim == 3:
        normalize_window(source, dest, mean, multiplier, args["shift"], mirror)
    else:
        for index in np.ndindex(*source.shape[:-3]):
            normalize_window(source[index], dest[index], mean, multiplier, args["shift"], mirror)


# Below this many input bytes per batch the thread pool costs more than it saves
# (the value the per-sample path of the call machinery uses).
_PARALLEL_MIN_BYTES = 1 << 18


def _cmn_batch_kernel(inputs, sample_args, batch_size, ctx):
    """A batch whose samples all give one output shape is written into one dense
    array: one allocation, reused by the allocator from batch to batch, instead of
    fresh pages for every sample."""
    data = inputs[0]
    samples = batch_samples_of(data, batch_size)
    recipes = [_cmn_recipe(_recipe_key(a, x.shape)) for x, a in zip(samples, sample_args, strict=True)]
    shapes = {recipe.out_shape for recipe in recipes}
    target = sample_args[0]["dtype"].numpy if batch_size else None
    if len(shapes) == 1 and batch_size and recipes[0].work_type == target:
        out = np.empty((batch_size, *shapes.pop()), dtype=target)

        def run(i):
            _cmn_into(samples[i], sample_args[i], recipes[i], out[i])

    else:
        out = [None] * batch_size

        def run(i):
            out[i] = _cmn_kernel((samples[i],), sample_args[i])

    if batch_size > 1 and sum(x.nbytes for x in samples) >= _PARALLEL_MIN_BYTES:
        ctx.thread_pool.map(run, range(batch_size))
    else:
        for i in range(batch_size):
            run(i)
    return [out]


def _cmn_window_plan(args, shape):
    """A sample's ``WindowPlan`` for the GPU kernel, from the CPU's recipe."""
    layout, out_layout = _cmn_layouts(CROP_MIRROR_NORMALIZE, args, args[INPUT_LAYOUT], len(shape))
    recipe = _cmn_recipe(_recipe_key(args, shape))
    bounds = _crop_bounds(CROP_MIRROR_NORMALIZE, args, layout, shape)
    channels = shape[layout.index("C")]
    mean, multiplier = _normalization(args["mean"], args["std"], args["scale"], channels)
    out_channels = recipe.out_shape[out_layout.index("C")]
    fill = np.zeros(out_channels, np.float32) if recipe.fill is None else recipe.fill.reshape(-1)
    return WindowPlan(
        layout, out_layout, bounds, bool(args["mirror"]), recipe.out_shape, mean, multiplier, fill
    )


_CMN_WINDOW_ARGS = _window_args(float32)
_CMN_DTYPE = Arg(
    "dtype", "dtype", float32, doc="Output type: float32, float16, uint8 or int8.", type_doc="DType"
)

CROP_MIRROR_NORMALIZE = Operator(
    "crop_mirror_normalize",
    inputs=[Input("input", doc="Images (HWC, CHW), sequences (FHWC, ...) or volumes (DHWC, ...).")],
    args=[
        _CMN_WINDOW_ARGS["crop"],
        _CMN_WINDOW_ARGS["crop_d"],
        _CMN_WINDOW_ARGS["crop_h"],
        _CMN_WINDOW_ARGS["crop_pos_x"],
        _CMN_WINDOW_ARGS["crop_pos_y"],
        _CMN_WINDOW_ARGS["crop_pos_z"],
        _CMN_WINDOW_ARGS["crop_w"],
        _CMN_DTYPE,
        _CMN_WINDOW_ARGS["fill_values"],
        _CMN_WINDOW_ARGS["image_type"],
        Arg(
            "mean",
            "float_list",
            [0.0],
            per_sample=True,
            doc="Subtracted from each channel: one value, or one per channel.",
            type_doc="float or list of float",
        ),
        Arg(
            "mirror",
            "int",
            0,
            per_sample=True,
            doc="Nonzero mirrors the window horizontally (e.g. from ``ndd.random.coin_flip``).",
            type_doc="int",
        ),
        _CMN_WINDOW_ARGS["out_of_bounds_policy"],
        _CMN_WINDOW_ARGS["output_dtype"],
        Arg(
            "output_layout",
            "layout",
            "CHW",
            doc="Layout of the output, a permutation of the input layout.",
            type_doc="str",
        ),
        Arg(
            "pad_output",
            "bool",
            False,
            doc="Pad the channels to the next power of two (3 to 4, 5 to 8): the added channels hold "
            "the fill values with out_of_bounds_policy='pad', else 0.",
            type_doc="bool",
        ),
        _CMN_WINDOW_ARGS["rounding"],
        Arg("scale", "float", 1.0, doc="Multiplies the normalized values.", type_doc="float"),
        Arg("shift", "float", 0.0, doc="Added to the scaled values.", type_doc="float"),
        Arg(
            "std",
            "float_list",
            [1.0],
            per_sample=True,
            doc="Divides each channel after the mean is subtracted: one value, or one per channel.",
            type_doc="float or list of float",
        ),
    ],
    prepare_args=record_layout,
    infer_types=_cmn_types,
    infer_shape=_cmn_shape,
    kernel=_cmn_kernel,
    batch_kernel=_cmn_batch_kernel,
    doc="Crop, mirror, normalize and change the layout of images in one pass.\n\n"
    "Each output value is ``(x - mean) / std * scale + shift`` for the element ``x`` of the crop "
    "window (see ``crop``), mirrored horizontally where ``mirror`` is nonzero, laid out as "
    "``output_layout``. Integer outputs are rounded half away from zero and saturated. Padded "
    "elements take ``fill_values`` as they are, without normalization.",
)


# --- flip ------------------------------------------------------------------------------


def _flip_types(ins, args):
    x = ins[0]
    return [(x._dtype, _output_layout(FLIP, x, five_dims="FDHWC"))]


def _mirror_width(data, axis):
    """``data`` reversed along ``axis`` (HWC's or CHW's W): the elements after the axis
    move as one item (e.g. a pixel), copied in C; numpy copies a reversed view one
    element at a time, about 6x as slow for 3 channels and 2.5x for planar uint8."""
    data = np.ascontiguousarray(data)
    out = np.empty_like(data)
    count = data.shape[axis]
    item_bytes = data.itemsize * math.prod(data.shape[axis + 1 :])
    rows = math.prod(data.shape[:axis])
    if data.size:
        reverse_items(
            data.reshape(-1).view(np.uint8).reshape(rows, count, item_bytes),
            out.reshape(-1).view(np.uint8).reshape(rows, count, item_bytes),
        )
    return out


def _flip_kernel(arrays, args):
    data = arrays[0]
    axes = image_axes(FLIP, args[INPUT_LAYOUT], data.ndim, four_dims="FHWC", five_dims="FDHWC")
    index = [slice(None)] * data.ndim
    flipped = False
    if args["horizontal"] and axes.width is not None:
        data = _mirror_width(data, axes.width)
    for name, axis in (("vertical", axes.height), ("depthwise", axes.depth)):
        if args[name] and axis is not None:
            index[axis] = slice(None, None, -1)  # whole rows or planes move: numpy copies them in blocks
            flipped = True
    return np.ascontiguousarray(data[tuple(index)]) if flipped else data


FLIP = Operator(
    "flip",
    inputs=[Input("input", doc="Images (HWC, CHW), sequences (FHWC, ...) or volumes (DHWC, ...).")],
    args=[
        Arg(
            "depthwise",
            "int",
            0,
            per_sample=True,
            doc="Nonzero flips along the depth axis D.",
            type_doc="int",
        ),
        Arg("horizontal", "int", 1, per_sample=True, doc="Nonzero flips along the width W.", type_doc="int"),
        Arg("vertical", "int", 0, per_sample=True, doc="Nonzero flips along the height H.", type_doc="int"),
    ],
    prepare_args=record_layout,
    infer_types=_flip_types,
    infer_shape=lambda shapes, args: [shapes[0]],
    kernel=_flip_kernel,
    doc="Mirror images horizontally, vertically and/or in depth.\n\n"
    "The flags may differ per sample (e.g. from ``ndd.random.coin_flip``).",
)


def _flip_window(in_shape, args):
    """The GPU window of a flip: the flipped axes read backwards from their last index."""
    return _flipped(
        tuple(in_shape),
        args[INPUT_LAYOUT],
        bool(args["horizontal"]),
        bool(args["vertical"]),
        bool(args["depthwise"]),
    )


@functools.lru_cache(maxsize=256)
def _flipped(in_shape, layout, horizontal, vertical, depthwise):
    # Remembered: a batch's samples are a few shapes, each flipped one of a few ways.
    axes = image_axes(FLIP, layout, len(in_shape), four_dims="FHWC", five_dims="FDHWC")
    strides = list(c_strides(in_shape))
    offset = 0
    for flip, axis in ((horizontal, axes.width), (vertical, axes.height), (depthwise, axes.depth)):
        if flip and axis is not None and in_shape[axis] > 0:
            offset += (in_shape[axis] - 1) * strides[axis]
            strides[axis] = -strides[axis]
    return offset, in_shape, tuple(strides)


# Conversions that keep every value of the input type: crop converts a padded window
# as a C cast does (wrapping) and a window inside the input saturating, and the two
# agree for these, so the GPU's saturating padded copy matches the CPU.
_EXACT_CONVERSIONS = {
    np.dtype(np.float32): {np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.float16)},
    np.dtype(np.float16): {np.dtype(np.uint8), np.dtype(np.int8)},
}


class _GpuCrop(GpuSlice):
    """``ndd.slice``'s GPU kernel with crop's window and fill values."""

    def check(self, ins, args):
        super().check(ins, args)
        dtype, source = args["dtype"], ins[0]._dtype
        if args["out_of_bounds_policy"] != "pad" or dtype is None or dtype == source:
            return
        if np.dtype(source.numpy) not in _EXACT_CONVERSIONS.get(np.dtype(dtype.numpy), ()):
            raise self._unsupported(
                f"converting a padded window of type {source} to 'dtype' {dtype} (GPU: only conversions "
                "that keep every value, such as uint8 to float32)"
            )


def _crop_gpu_bounds(args, in_shape, anchor=None, shape=None):
    layout = _image_layout(CROP, args[INPUT_LAYOUT], len(in_shape), four_dims=_CROP_FOUR_DIMS)
    return _crop_bounds(CROP, args, layout, in_shape)


def _crop_gpu_fill(args, out_shape, dtype):
    """The fill values of a padded GPU crop (as a C cast converts them) and the output
    dimension they are laid along (the channel's, or None for one value)."""
    fill = c_cast(args["fill_values"], dtype).reshape(-1)
    if fill.size == 1:
        return fill, None
    layout = _image_layout(CROP, args[INPUT_LAYOUT], len(out_shape), four_dims=_CROP_FOUR_DIMS)
    _fill_shape(CROP, args, layout, out_shape, fill.size)
    return fill, layout.index("C")


CROP.gpu_kernel = _GpuCrop(CROP, _crop_gpu_bounds, _crop_gpu_fill)
FLIP.gpu_kernel = GpuWindow(FLIP, _flip_window)
CROP_MIRROR_NORMALIZE.gpu_kernel = GpuCropMirrorNormalize(
    CROP_MIRROR_NORMALIZE, _cmn_window_plan, lambda args: args["dtype"].numpy
)

OPERATORS = [CROP, CROP_MIRROR_NORMALIZE, FLIP]
