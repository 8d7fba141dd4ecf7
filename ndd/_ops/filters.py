"""Convolution filters and morphology: gaussian_blur, laplacian, filter, and
experimental.median_blur, experimental.dilate, experimental.erode.

Every operator works on the spatial axes of a sample (all but the frame ``F`` and
channel ``C`` axes of its layout) and computes in float32, as the reference does;
integer outputs are rounded (halves away from zero; filter's to even, as the reference's
filter on the CPU) and saturated. Borders follow
np.pad's modes: the correlations (gaussian_blur, laplacian, filter on images) read
each row padded on the fly through index maps of the border (``border_map``), so
no padded copy of a sample is made; filter on volumes, median_blur, dilate and
erode pad the sample first (``_pad_planes``). The nogil kernels of
``ndd._cpu.convolution`` then slide the window over the (padded) planes. On the GPU
(``gpu_filters.py``), gaussian_blur, laplacian and filter run the same plan, made
here from the same functions (``_*_gpu_plan``): the windows, border maps, fill
values and passes are the CPU's, only the sums run on the GPU. median_blur, dilate
and erode do the same with ``gpu_morphology.py`` (``_median_gpu_plan``,
``_morphology_gpu_plan``).

Deliberate divergences from the reference:
- ``filter`` runs volumes (three spatial axes) on the CPU too; the reference's CPU
  backend rejects them.
- median_blur, dilate and erode have CPU kernels; the reference has only GPU ones.
  They follow its GPU semantics: ``mask_size``/``window_size`` and ``anchor`` are
  given as (width, height); ``iterations`` widens the mask by ``mask_size - 1``
  per extra iteration; the ``"constant"`` border never wins the minimum or
  maximum (for float dilation the reference pads with the smallest positive
  float, so negative values near a border come out as that float: we pad with
  the lowest value instead); median_blur repeats the edge values.

Per-frame arguments (``ndd.per_frame``): ``sigma``/``window_size``
(gaussian_blur), ``window_size``/``smoothing_size``/``scale`` (laplacian) and
``anchor``/``mask_size`` (dilate, erode), ``anchor`` (filter) are unfolded by
``frames.py``; filter takes per-frame ``filter`` and ``fill_value`` inputs itself
(unfolded with the sequence when its ``anchor`` is per frame too).
"""

import functools
import math

import numpy as np

from .._cpu.convolution import correlate, correlate_bordered, median_window, store_float
from .._memory import exceeds_half_of_memory
from .._prepare.args import InvalidArgumentError
from .._types import float32 as _FLOAT32
from .axes import INPUT_LAYOUT, record_layout
from .conversions import cast_array
from .gpu_filters import (
    READ_INPUT,
    READ_PREVIOUS,
    WRITE_OUTPUT,
    WRITE_TEMPORARY,
    WRITE_TOTAL,
    FilterPlan,
    FilterStep,
    FilterWindow,
    GpuFilter,
)
from .gpu_morphology import GpuMedian, GpuMorphology, MedianPlan, MorphologyPlan
from .schema import Arg, Input, Operator

# Border names of filter (and morphology) -> np.pad modes.
PAD_MODES = {
    "reflect_101": "reflect",  # dcb|abcd|cba: the edge value is not repeated
    "reflect_1001": "symmetric",  # cba|abcd|dcb
    "reflect": "symmetric",
    "wrap": "wrap",
    "clamp": "edge",
    "replicate": "edge",
    "constant": "constant",
}
# Below this many elements per spatial position a window step moves along the rows
# (one long row per plane) rather than between rows, so the inner loop stays long.
_LONG_ROW = 16


def _spatial_axes(op, layout, ndim, *, allow_volumes=True, frames_first=False):
    """(spatial axes, layout) of a sample: every axis but F and C, adjacent to each other.

    ``frames_first``: F must lead and C come first or last after it (filter and the
    image operators); gaussian_blur and laplacian also take layouts such as CFHW.
    """
    if not layout:
        # Without a layout every dimension is a data axis, as in the reference.
        layout = {2: "HW", 3: "DHW"}.get(ndim, "")
        if not layout:
            raise InvalidArgumentError(
                f"{op.qualname}: cannot tell the spatial axes of {ndim}-D data without a layout "
                f"(give a layout such as 'HWC')"
            )
    if len(layout) != ndim:
        raise InvalidArgumentError(
            f"{op.qualname}: the layout {layout!r} does not match the {ndim} dimensions of the input"
        )
    spatial = tuple(i for i, name in enumerate(layout) if name not in "FC")
    if frames_first:
        if "F" in layout and layout.index("F") != 0:
            raise InvalidArgumentError(
                f"{op.qualname}: the frame axis must be the first one, got layout {layout!r}"
            )
        if "C" in layout and layout.index("C") not in (1 if layout.startswith("F") else 0, ndim - 1):
            raise InvalidArgumentError(
                f"{op.qualname}: channels must come first or last (after frames), got layout {layout!r}"
            )
    max_axes = 3 if allow_volumes else 2
    if not 1 <= len(spatial) <= max_axes or spatial != tuple(range(spatial[0], spatial[0] + len(spatial))):
        raise InvalidArgumentError(
            f"{op.qualname}: expected 1 to {max_axes} adjacent spatial axes (frames and channels outside "
            f"them), got layout {layout!r}"
        )
    return spatial, layout


def _output_types(op):
    """Type rule: the input type, or float32 when ``dtype`` asks for it."""

    def infer(ins, args):
        x = ins[0]
        dtype = args["dtype"]
        if dtype is not None and dtype != x._dtype and dtype != _FLOAT32:
            raise InvalidArgumentError(
                f"{op.qualname}: 'dtype' must be the input type ({x._dtype}) or float32, got {dtype}"
            )
        if x._dtype.numpy is None or x._dtype.numpy.kind not in "iuf":
            raise InvalidArgumentError(f"{op.qualname}: expected numeric input, got {x._dtype}")
        return [(x._dtype if dtype is None else dtype, x._layout)]

    return infer


def _per_axis(op, name, values, count):
    """One value per spatial axis: a single value applies to all."""
    values = tuple(values)
    if len(values) == 1:
        return values * count
    if len(values) != count:
        raise InvalidArgumentError(
            f"{op.qualname}: '{name}' must have 1 or {count} values (one per spatial axis), got {list(values)}"
        )
    return values


# Element types the compiled kernels read and write; others go through float32.
_KERNEL_TYPES = frozenset(
    np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32, np.float64)
)


def _kernel_type(dtype):
    """The type the kernels read or write for ``dtype``: itself, or float32."""
    return dtype if dtype in _KERNEL_TYPES else np.dtype(np.float32)


def _kernel_input(x):
    """``x`` in a type the kernels read, C-contiguous (a transposed or strided input is
    copied once)."""
    return np.ascontiguousarray(x, dtype=x.dtype if x.dtype in _KERNEL_TYPES else np.float32)


def _result_type(dtype, args):
    """The output type of an input of ``dtype``: ``dtype`` unless the 'dtype' argument says."""
    return np.dtype(dtype if args["dtype"] is None else args["dtype"].numpy)


@functools.lru_cache(maxsize=64)
def _bounds(dtype):
    """(low, high, integer) arguments of the kernels for an output of ``dtype``."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return float(info.min), float(info.max), True
    return 0.0, 0.0, False


def _store(values, dtype, even=False):
    """float32 ``values`` in ``dtype``: integers rounded (halves away, or to even with
    ``even``) and saturated."""
    if values.dtype == dtype:
        return values
    if dtype not in _KERNEL_TYPES:
        return cast_array(np.rint(values) if even and dtype.kind in "iu" else values, dtype)
    out = np.empty(values.shape, dtype)
    store_float(values.reshape(-1), out.reshape(-1), *_bounds(dtype), even)
    return out


def _correlate_into(padded, out_shape, weights, step, dtype, even=False):
    """Run ``correlate`` into a new array of ``out_shape`` and ``dtype`` (through float32
    for a type the kernel does not write); integers round halves to even with ``even``."""
    kernel_type = _kernel_type(dtype)
    out = np.empty(out_shape, kernel_type)
    correlate(padded, out, weights, step, *_bounds(kernel_type), even)
    return _store(out, dtype, even)


def _border_sources(n, before, after, mode):
    """For np.pad ``mode`` (reflect, symmetric, wrap, edge), the interior index each of
    the ``before`` leading and ``after`` trailing border positions repeats."""
    i = np.concatenate([np.arange(-before, 0), np.arange(n, n + after)])
    if mode == "edge" or n == 1:
        return np.clip(i, 0, n - 1)
    if mode == "wrap":
        return i % n
    period = 2 * n - 2 if mode == "reflect" else 2 * n  # reflect: dcb|abcd; symmetric: cba|abcd
    i = i % period
    return np.where(i < n, i, period - 1 - i + (mode == "reflect"))


def _pad_planes(planes, widths, mode, fill=0.0):
    """``np.pad(planes, widths, mode)`` (constant: with ``fill``), without np.pad's
    general machinery: the interior is copied once into the output, then each axis's
    borders are filled from the output itself, axis after axis, as np.pad does."""
    if all(b == 0 and e == 0 for b, e in widths):
        return planes
    shape = tuple(n + b + e for n, (b, e) in zip(planes.shape, widths, strict=True))
    out = np.empty(shape, planes.dtype)
    out[tuple(slice(b, b + n) for n, (b, _) in zip(planes.shape, widths, strict=True))] = planes
    for axis, ((before, after), n) in enumerate(zip(widths, planes.shape, strict=True)):
        if before == 0 and after == 0:
            continue
        lead = [slice(None)] * out.ndim
        trail = [slice(None)] * out.ndim
        lead[axis] = slice(0, before)
        trail[axis] = slice(before + n, before + n + after)
        if mode == "constant":
            out[tuple(lead)] = fill
            out[tuple(trail)] = fill
            continue
        sources = _border_sources(n, before, after, mode) + before
        out[tuple(lead)] = np.take(out, sources[:before], axis=axis)
        out[tuple(trail)] = np.take(out, sources[before:], axis=axis)
    return out


def _axis_pass(shape, axis, window, anchor, mode):
    """A correlation along ``axis`` of a sample of ``shape``: its (outer, extent, inner)
    view, the float32 weights and the border map of the axis (np.pad ``mode``)."""
    extent = shape[axis]
    size = len(window)
    border = border_map(extent, anchor, size - 1 - anchor, mode)
    view = (math.prod(shape[:axis]), extent, math.prod(shape[axis + 1 :]))
    return view, np.asarray(window, np.float32), border


def _correlate_axis(x, axis, window, anchor, dtype, mode="reflect"):
    """Correlate ``x`` with the 1-D ``window`` along ``axis`` (anchor: the window index over
    the output position) into ``dtype``; borders by np.pad ``mode``, read by the kernel
    as it goes (no padded copy)."""
    shape = x.shape
    (outer, extent, inner), weights, border = _axis_pass(shape, axis, window, anchor, mode)
    size = len(window)
    kernel_type = _kernel_type(dtype)
    if inner >= _LONG_ROW:
        # Rows of ``inner`` elements, the window across them.
        planes = x.reshape(outer, extent, inner)
        out = np.empty((outer, extent, inner), kernel_type)
        args = (weights.reshape(size, 1), inner, border, _NO_BORDER, _NO_BORDER)
    else:
        # Short rows: each plane as one long row, the window along it, ``inner`` apart.
        planes = x.reshape(outer, 1, extent * inner)
        out = np.empty((outer, 1, extent * inner), kernel_type)
        left, right = border[:anchor], border[anchor + extent :]
        args = (weights.reshape(1, size), inner, _ONE_ROW, left, right)
    if out.size:
        correlate_bordered(planes, out, *args, 0.0, *_bounds(kernel_type))
    return _store(out, dtype).reshape(shape)


_NO_BORDER = np.zeros(0, np.intp)
_ONE_ROW = np.zeros(1, np.intp)


def _separable_passes(axes, windows):
    """The passes (axis, window) of a separable correlation: a window of one element 1 is skipped."""
    return [(axis, w) for axis, w in zip(axes, windows, strict=True) if not (len(w) == 1 and w[0] == 1)]


def _separable(x, axes, windows, dtype):
    """``x`` correlated with ``windows[k]`` along ``axes[k]``, centred, with mirrored borders
    (reflect 101), in ``dtype``; the passes between store float32. A window of one element
    1 is skipped."""
    passes = _separable_passes(axes, windows)
    if not passes or x.size == 0:
        return x.astype(dtype)
    x = _kernel_input(x)
    for k, (axis, window) in enumerate(passes):
        step_type = dtype if k == len(passes) - 1 else np.dtype(np.float32)
        x = _correlate_axis(x, axis, window, len(window) // 2, step_type)
    return x


def _separable_steps(shape, passes, last_writes=WRITE_OUTPUT, adds_total=False):
    """The GPU steps of ``_separable`` (its ``passes``) on a sample of ``shape``: the last
    writes ``last_writes`` (and adds the running total with ``adds_total``)."""
    steps = []
    for k, (axis, window) in enumerate(passes):
        view, weights, border = _axis_pass(shape, axis, window, len(window) // 2, "reflect")
        last = k == len(passes) - 1
        steps.append(
            FilterStep(
                [FilterWindow(view, weights, [border])],
                READ_INPUT if k == 0 else READ_PREVIOUS,
                last_writes if last else WRITE_TEMPORARY,
                adds_total and last,
            )
        )
    return steps


# ---------------------------------------------------------------- gaussian_blur


# The largest Gaussian window (a sigma of about 174,000 pixels); a larger one (a sigma
# of 2**31 claimed 96 GiB for its taps) is refused. The reference takes minutes on an
# 8x8 image with a sigma of 10**6.
_GAUSSIAN_MAX_WINDOW = 2**20 + 1


def _gaussian_windows(op, args, spatial_count):
    sigmas = _per_axis(op, "sigma", args["sigma"], spatial_count)
    sizes = _per_axis(op, "window_size", args["window_size"], spatial_count)
    windows = []
    for sigma, size in zip(sigmas, sizes, strict=True):
        if sigma < 0:
            raise InvalidArgumentError(f"{op.qualname}: 'sigma' must not be negative, got {sigma}")
        if size < 0 or (size and size % 2 == 0):
            raise InvalidArgumentError(f"{op.qualname}: 'window_size' must be odd and positive, got {size}")
        if sigma == 0 and size == 0:
            raise InvalidArgumentError(f"{op.qualname}: 'sigma' and 'window_size' must not both be 0")
        given = f"'window_size' {size} is too large:"
        if size == 0:
            size = 2 * math.ceil(3 * sigma) + 1
            given = f"'sigma' {sigma:g} gives a window of {size} taps;"
        if size > _GAUSSIAN_MAX_WINDOW:
            raise InvalidArgumentError(
                f"{op.qualname}: {given} at most {_GAUSSIAN_MAX_WINDOW} taps are supported (sigma up to about "
                f"{(_GAUSSIAN_MAX_WINDOW - 1) // 6})"
            )
        if sigma == 0:
            sigma = ((size - 1) / 2 - 1) * 0.3 + 0.8
        offsets = np.arange(size, dtype=np.float64) - size // 2
        window = np.exp(-(offsets**2) / (2 * sigma * sigma))
        windows.append((window / window.sum()).astype(np.float32))
    return windows


def _gaussian_shape(shapes, args):
    spatial, _ = _spatial_axes(GAUSSIAN_BLUR, args[INPUT_LAYOUT], len(shapes[0]))
    _gaussian_windows(GAUSSIAN_BLUR, args, len(spatial))
    return [shapes[0]]


def _gaussian_kernel(arrays, args):
    x = arrays[0]
    spatial, _ = _spatial_axes(GAUSSIAN_BLUR, args[INPUT_LAYOUT], x.ndim)
    windows = _gaussian_windows(GAUSSIAN_BLUR, args, len(spatial))
    return _separable(x, spatial, windows, _result_type(x.dtype, args))


def _gaussian_gpu_plan(shape, dtype, args, others):
    spatial, _ = _spatial_axes(GAUSSIAN_BLUR, args[INPUT_LAYOUT], len(shape))
    passes = _separable_passes(spatial, _gaussian_windows(GAUSSIAN_BLUR, args, len(spatial)))
    if math.prod(shape) == 0:
        return FilterPlan(shape, [])
    # Without passes the sample is only converted, as _separable does.
    return FilterPlan(shape, _separable_steps(shape, passes) if passes else [FilterStep(None)])


GAUSSIAN_BLUR = Operator(
    "gaussian_blur",
    inputs=[Input("input", doc="Images, sequences or volumes.")],
    args=[
        Arg(
            "dtype", "dtype", None, doc="Output type: the input type (default) or float32.", type_doc="DType"
        ),
        Arg(
            "sigma",
            "float_list",
            [0.0],
            per_sample=True,
            doc="Standard deviation of the Gaussian, one value or one per spatial axis (outermost first); "
            "0 derives it from the window size as ``((window_size - 1) / 2 - 1) * 0.3 + 0.8``.",
            type_doc="float or list of float",
        ),
        Arg(
            "window_size",
            "int_list",
            [0],
            per_sample=True,
            doc="Odd diameter of the kernel, one value or one per spatial axis; 0 derives it from sigma "
            "as ``2 * ceil(3 * sigma) + 1``.",
            type_doc="int or list of int",
        ),
    ],
    prepare_args=record_layout,
    infer_types=None,
    infer_shape=_gaussian_shape,
    kernel=_gaussian_kernel,
    doc="Blur with a separable Gaussian kernel along the spatial axes.\n\n"
    "Frames (``F``) and channels (``C``) are not blurred. Borders mirror the sample without "
    "repeating the edge (reflect 101). The sum runs in float32.",
)
GAUSSIAN_BLUR.infer_types = _output_types(GAUSSIAN_BLUR)


# ---------------------------------------------------------------- laplacian

_MAX_LAPLACIAN_WINDOW = 31


def _binomial(size):
    return np.array([math.comb(size - 1, k) for k in range(size)], np.float64)


def _derivative_window(size):
    """Second derivative [1, -2, 1] smoothed by a binomial window to ``size`` taps."""
    return np.convolve(np.array([1.0, -2.0, 1.0]), _binomial(size - 2))


def _laplacian_plan(op, args, spatial_count):
    """For each partial derivative, its windows (one per spatial axis, the derivative one scaled)."""
    sizes = _per_axis(op, "window_size", args["window_size"], spatial_count)
    smoothing = args["smoothing_size"]
    if smoothing is not None:
        smoothing = _per_axis(op, "smoothing_size", smoothing, spatial_count)
    for size in sizes:
        if not (3 <= size <= _MAX_LAPLACIAN_WINDOW and size % 2 == 1):
            raise InvalidArgumentError(
                f"{op.qualname}: 'window_size' must be odd and between 3 and {_MAX_LAPLACIAN_WINDOW}, got {size}"
            )
    for size in smoothing or ():
        if not (1 <= size <= _MAX_LAPLACIAN_WINDOW and size % 2 == 1):
            raise InvalidArgumentError(
                f"{op.qualname}: 'smoothing_size' must be odd and between 1 and {_MAX_LAPLACIAN_WINDOW}, "
                f"got {size}"
            )
    scale_given = args["scale"] != (1.0,)
    if args["normalized_kernel"] and scale_given:
        raise InvalidArgumentError(f"{op.qualname}: 'scale' cannot be given with normalized_kernel=True")
    scales = _per_axis(op, "scale", args["scale"], spatial_count)
    plan = []
    for k in range(spatial_count):
        # Without smoothing_size the reference smooths across a derivative with windows
        # as wide as that derivative's own window.
        across = [sizes[k]] * spatial_count if smoothing is None else smoothing
        windows = [
            _derivative_window(sizes[k]) if a == k else _binomial(across[a]) for a in range(spatial_count)
        ]
        if args["normalized_kernel"]:
            scale = 2.0 ** (spatial_count + 2 - sum(len(w) for w in windows))
        else:
            scale = scales[k]
        # The factor of the partial derivative goes into its derivative window.
        windows[k] = windows[k] * scale
        plan.append([w.astype(np.float32) for w in windows])
    return plan


# Up to this many non-zero taps a 2-D Laplacian runs as one window instead of
# separable passes (2 partial derivatives x 2 passes, plus a sum).
_DIRECT_LAPLACIAN_TAPS = 25


def _laplacian_window(plan):
    """The 2-D window equal to the sum of the separable partial derivatives of ``plan``."""
    height = max(len(windows[0]) for windows in plan)
    width = max(len(windows[1]) for windows in plan)
    whole = np.zeros((height, width), np.float64)
    for rows, cols in plan:
        top, left = (height - len(rows)) // 2, (width - len(cols)) // 2
        whole[top : top + len(rows), left : left + len(cols)] += np.outer(rows, cols)
    return whole.astype(np.float32)


def _direct_laplacian(plan):
    """The 2-D window of a 2-D Laplacian when one pass with it costs less than the
    separable passes, else None."""
    if len(plan) != 2:
        return None
    whole = _laplacian_window(plan)
    return whole if np.count_nonzero(whole) <= _DIRECT_LAPLACIAN_TAPS else None


def _laplacian_shape(shapes, args):
    spatial, _ = _spatial_axes(LAPLACIAN, args[INPUT_LAYOUT], len(shapes[0]))
    _laplacian_plan(LAPLACIAN, args, len(spatial))
    return [shapes[0]]


def _laplacian_kernel(arrays, args):
    x = arrays[0]
    spatial, _ = _spatial_axes(LAPLACIAN, args[INPUT_LAYOUT], x.ndim)
    plan = _laplacian_plan(LAPLACIAN, args, len(spatial))
    out_type = _result_type(x.dtype, args)
    whole = _direct_laplacian(plan)
    if whole is not None:
        centre = tuple(n // 2 for n in whole.shape)
        return _correlate_window(x, spatial, whole, centre, out_type, "reflect")
    source = _kernel_input(x)
    total = None
    for windows in plan:
        partial = _separable(source, spatial, windows, np.dtype(np.float32))
        total = partial if total is None else np.add(total, partial, out=total)
    return _store(total, out_type)


def _laplacian_gpu_plan(shape, dtype, args, others):
    spatial, _ = _spatial_axes(LAPLACIAN, args[INPUT_LAYOUT], len(shape))
    plan = _laplacian_plan(LAPLACIAN, args, len(spatial))
    if math.prod(shape) == 0:
        return FilterPlan(shape, [])
    whole = _direct_laplacian(plan)
    if whole is not None:
        centre = tuple(n // 2 for n in whole.shape)
        return FilterPlan(shape, [FilterStep([_gpu_window(shape, dtype, spatial, whole, centre, "reflect")])])
    # Each partial derivative's passes; the last pass of each adds the running total of
    # those before it, and the last one stores the sum.
    steps = []
    for k, windows in enumerate(plan):
        last = k == len(plan) - 1
        passes = _separable_passes(spatial, windows)
        steps += _separable_steps(shape, passes, WRITE_OUTPUT if last else WRITE_TOTAL, adds_total=k > 0)
    return FilterPlan(shape, steps)


LAPLACIAN = Operator(
    "laplacian",
    inputs=[Input("input", doc="Images, sequences or volumes.")],
    args=[
        Arg(
            "dtype", "dtype", None, doc="Output type: the input type (default) or float32.", type_doc="DType"
        ),
        Arg(
            "normalized_kernel",
            "bool",
            False,
            doc="Scale each partial derivative by ``2 ** (n + 2 - s)``, with ``n`` the number of spatial axes "
            "and ``s`` the sum of the sizes of its windows; not with ``scale``.",
        ),
        Arg(
            "scale",
            "float_list",
            [1.0],
            per_sample=True,
            doc="Factor of each partial derivative, one value or one per spatial axis.",
            type_doc="float or list of float",
        ),
        Arg(
            "smoothing_size",
            "int_list",
            None,
            per_sample=True,
            doc="Odd sizes (1 to 31) of the binomial smoothing windows along each axis, one value or one "
            "per spatial axis, 1 for no smoothing; by default a derivative is smoothed with windows of its "
            "own ``window_size``.",
            type_doc="int or list of int",
        ),
        Arg(
            "window_size",
            "int_list",
            [3],
            per_sample=True,
            doc="Odd sizes (3 to 31) of the derivative windows, one value or one per spatial axis.",
            type_doc="int or list of int",
        ),
    ],
    prepare_args=record_layout,
    infer_types=None,
    infer_shape=_laplacian_shape,
    kernel=_laplacian_kernel,
    doc="The Laplacian: the sum of the second partial derivatives along the spatial axes.\n\n"
    "Each derivative is a separable convolution: a second-derivative window along its axis "
    "(``[1, -2, 1]`` widened by a binomial window) and binomial smoothing windows along the "
    "others. Borders mirror the sample (reflect 101); the sum runs in float32.",
)
LAPLACIAN.infer_types = _output_types(LAPLACIAN)


# ---------------------------------------------------------------- filter

# "reflect" is accepted as reflect_1001, as the reference does.
_FILTER_BORDERS = ("reflect_101", "reflect_1001", "reflect", "wrap", "clamp", "constant")


def _record_filter_layouts(ins, args):
    layout = ins[0]._layout or ("HW" if ins[0].ndim == 2 else "")
    args[INPUT_LAYOUT] = layout
    args["_filter_layout"] = ins[1]._layout
    args["_fill_value_layout"] = ins[2]._layout if ins[2] is not None else ""
    per_frame_inputs = args["_filter_layout"][:1] == "F" or args["_fill_value_layout"][:1] == "F"
    # Per-frame filters or fill values for a sample without frames make it a sequence,
    # one frame per filter, as in the reference.
    args["_expand_frames"] = per_frame_inputs and layout[:1] != "F"
    if args["_expand_frames"]:
        args[INPUT_LAYOUT] = "F" + layout


def _as_sequence(shape, filter_shape, fill_shape, args):
    """The shape of the sequence a sample becomes when ``_expand_frames``."""
    if args["_filter_layout"][:1] == "F":
        frames = filter_shape[0] if filter_shape else 0
    else:
        frames = fill_shape[0] if fill_shape else 0
    return (frames, *shape)


def _filter_types(ins, args):
    if ins[1] is not None and ins[1]._dtype.numpy is not None and ins[1]._dtype.numpy.kind != "f":
        raise InvalidArgumentError(
            f"ndd.filter: the filter must have a floating-point type, got {ins[1]._dtype}"
        )
    types = _output_types(FILTER)(ins, args)
    # A 2-D input without a layout is filtered as HW but keeps no layout, as in the reference.
    keeps_none = not ins[0]._layout and not args["_expand_frames"]
    return [(types[0][0], ins[0]._layout if keeps_none else args[INPUT_LAYOUT])]


def _per_frame(name, values_shape, args, shape):
    """Whether an input (``filter``, ``fill_value``) holds one value per frame of a sequence:
    its layout starts with F (``ndd.per_frame``) and the data has frames; then checks
    that it has as many as the sample."""
    layout = args[f"_{name}_layout"]
    if not (layout and layout[0] == "F" and args[INPUT_LAYOUT] and args[INPUT_LAYOUT][0] == "F"):
        return False
    if len(values_shape) == 0 or values_shape[0] != shape[0]:
        raise InvalidArgumentError(
            f"ndd.filter: a per-frame '{name}' must have one entry per frame ({shape[0]}), "
            f"got shape {tuple(values_shape)}"
        )
    return True


def _filter_plan(shape, filter_shape, args):
    """(spatial axes, anchors, output shape) of one sample."""
    spatial, _ = _spatial_axes(FILTER, args[INPUT_LAYOUT], len(shape), frames_first=True)
    if _per_frame("filter", filter_shape, args, shape):
        filter_shape = filter_shape[1:]
    if len(spatial) == 1 or len(filter_shape) != len(spatial):
        raise InvalidArgumentError(
            f"ndd.filter: the filter must have as many dimensions as the input has spatial axes "
            f"({len(spatial)}), got a filter of shape {tuple(filter_shape)}"
        )
    if min(filter_shape) < 1:
        raise InvalidArgumentError(
            f"ndd.filter: the filter must not be empty, got shape {tuple(filter_shape)}"
        )
    out_shape = list(shape)
    if args["mode"] == "valid":
        anchors = (0,) * len(spatial)
        for axis, size in zip(spatial, filter_shape, strict=True):
            # An empty sample stays empty; a filter larger than the sample fits nowhere.
            out_shape[axis] = max(shape[axis] - size + 1, 0)
            if size > shape[axis] > 0:
                raise InvalidArgumentError(
                    f"ndd.filter: in 'valid' mode the filter {tuple(filter_shape)} must fit in the sample "
                    f"{tuple(shape)}"
                )
    else:
        anchors = _per_axis(FILTER, "anchor", args["anchor"], len(spatial))
        for anchor, size in zip(anchors, filter_shape, strict=True):
            if not -1 <= anchor < size:
                raise InvalidArgumentError(
                    f"ndd.filter: 'anchor' must lie within the filter (or be -1), got {list(anchors)} for a "
                    f"filter of shape {tuple(filter_shape)}"
                )
        anchors = tuple(size // 2 if a == -1 else a for a, size in zip(anchors, filter_shape, strict=True))
    return spatial, anchors, tuple(out_shape)


def _filter_shape(shapes, args):
    fill = shapes[2]
    if args["_expand_frames"]:
        shapes = (_as_sequence(shapes[0], shapes[1], fill, args), *shapes[1:])
    if fill is not None and not _per_frame("fill_value", fill, args, shapes[0]) and math.prod(fill) != 1:
        raise InvalidArgumentError(f"ndd.filter: 'fill_value' must be a scalar, got shape {tuple(fill)}")
    return [_filter_plan(shapes[0], shapes[1], args)[2]]


def _correlate_window(x, spatial, weights, anchors, out_type, pad_mode, fill=0.0, even=False):
    """``x`` correlated over its (adjacent) ``spatial`` axes with the 2-D or 3-D ``weights``,
    ``anchors`` giving the weight over each output element, into ``out_type`` (integers
    rounded halves away, or to even with ``even``). Borders by np.pad ``pad_mode``; None:
    no padding, the output shrinks ('valid')."""
    first, last = spatial[0], spatial[-1]
    if x.size == 0:
        # Nothing to pad or sum: only the shape changes ('valid' mode).
        shrink = [weights.shape[k] - 1 if pad_mode is None else 0 for k in range(len(spatial))]
        out_spatial = tuple(max(n - d, 0) for n, d in zip(x.shape[first : last + 1], shrink, strict=True))
        return np.empty(x.shape[:first] + out_spatial + x.shape[last + 1 :], out_type)
    outer = math.prod(x.shape[:first])
    inner = math.prod(x.shape[last + 1 :])
    planes = _kernel_input(x).reshape(outer, *x.shape[first : last + 1], inner)
    if pad_mode is not None and len(spatial) == 2:
        # Images: the kernel pads each row as it reads it, so no padded copy is made.
        return _correlate_padding_rows(planes, weights, anchors, pad_mode, fill, out_type, even).reshape(
            x.shape
        )
    if pad_mode is not None:
        widths = [(0, 0)] + [(a, s - 1 - a) for a, s in zip(anchors, weights.shape, strict=True)] + [(0, 0)]
        planes = _pad_planes(planes, widths, pad_mode, fill)
    out_spatial = tuple(n - s + 1 for n, s in zip(planes.shape[1:-1], weights.shape, strict=True))
    out_shape = x.shape[:first] + out_spatial + x.shape[last + 1 :]
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    rows, cols = out_spatial[-2], out_spatial[-1]
    if len(spatial) == 2:
        src = planes.reshape(outer, planes.shape[1], planes.shape[2] * inner)
        out = _correlate_into(src, (outer, rows, cols * inner), weights, inner, out_type, even)
        return out.reshape(out_shape)
    # A volume: a 2-D correlation per output slice and filter slice, summed over the slices.
    out = np.zeros((outer, *out_spatial, inner), np.float32)
    partial = np.empty((outer, rows, cols * inner), np.float32)
    for d in range(out_spatial[0]):
        for k in range(weights.shape[0]):
            slab = np.ascontiguousarray(planes[:, d + k]).reshape(outer, planes.shape[2], -1)
            correlate(slab, partial, weights[k], inner)
            out[:, d] += partial.reshape(outer, rows, cols, inner)
    return _store(out.reshape(out_shape), out_type, even)


@functools.lru_cache(maxsize=256)
def border_map(n, before, after, mode):
    """Source index of each of the ``before + n + after`` padded positions of an axis
    of ``n`` (np.pad ``mode``; -1 where ``constant`` padding puts the fill value).
    Cached (samples of a batch often share their sizes), hence read-only."""
    inside = np.arange(n, dtype=np.intp)
    if mode == "constant":
        border = np.full(before + after, -1, np.intp)
    else:
        border = _border_sources(n, before, after, mode).astype(np.intp)
    out = np.concatenate([border[:before], inside, border[before:]])
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=256)
def _fill_in(dtype, fill):
    """The fill value in type ``dtype``, as assigning it into a padded sample makes it."""
    as_input = np.empty(1, dtype)
    as_input[...] = fill
    return float(as_input[0])


def _gpu_window(shape, dtype, spatial, weights, anchors, pad_mode, fill=0.0):
    """The GPU's ``_correlate_window`` (the same arguments but the sample's ``shape`` and
    ``dtype``) of a sample with elements."""
    first, last = spatial[0], spatial[-1]
    extents = shape[first : last + 1]
    view = (math.prod(shape[:first]), *extents, math.prod(shape[last + 1 :]))
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    volume = len(spatial) == 3
    if pad_mode is None:
        return FilterWindow(view, weights, [np.arange(n) for n in extents], slices=volume)
    maps = [
        border_map(n, a, s - 1 - a, pad_mode) for n, a, s in zip(extents, anchors, weights.shape, strict=True)
    ]
    return FilterWindow(view, weights, maps, _fill_in(_kernel_type(dtype), fill), slices=volume)


def _correlate_padding_rows(planes, weights, anchors, pad_mode, fill, out_type, even=False):
    """``planes`` (outer, rows, cols, inner) correlated with the 2-D ``weights`` over rows
    and cols, padded by ``pad_mode`` as ``_pad_planes`` would pad them (integers rounded
    halves away, or to even with ``even``)."""
    outer, height, width, inner = planes.shape
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    (top, left), (wrows, wcols) = anchors, weights.shape
    rows = border_map(height, top, wrows - 1 - top, pad_mode)
    cols = border_map(width, left, wcols - 1 - left, pad_mode)
    kernel_type = _kernel_type(out_type)
    out = np.empty((outer, height, width * inner), kernel_type)
    correlate_bordered(
        planes.reshape(outer, height, width * inner),
        out,
        weights,
        inner,
        rows,
        cols[:left],
        cols[left + width :],
        _fill_in(planes.dtype, fill),
        *_bounds(kernel_type),
        even,
    )
    return _store(out, out_type, even)


def _sequence_shape(shape, weights, fill, args):
    """The shape of a filter sample, as the sequence it becomes when ``_expand_frames``."""
    if not args["_expand_frames"]:
        return shape
    return _as_sequence(shape, weights.shape, None if fill is None else fill.shape, args)


def _filter_frames(shape, weights, fill, args):
    """For a sample whose filter or fill value is given per frame: the arguments of its
    frames and each frame's (filter, fill value); else None."""
    frame_filters = _per_frame("filter", weights.shape, args, shape)
    frame_fills = fill is not None and _per_frame("fill_value", fill.shape, args, shape)
    if not (frame_filters or frame_fills):
        return None
    frame_args = {
        **args,
        INPUT_LAYOUT: args[INPUT_LAYOUT][1:],
        "_filter_layout": "",
        "_fill_value_layout": "",
        "_expand_frames": False,
    }
    inputs = [
        (weights[f] if frame_filters else weights, fill[f] if frame_fills else fill) for f in range(shape[0])
    ]
    return frame_args, inputs


def _filter_border(args, fill):
    """(np.pad mode, fill value) of filter's borders; mode None in 'valid' mode (no padding)."""
    if args["mode"] == "valid":
        return None, 0.0
    return PAD_MODES[args["border"]], 0.0 if fill is None else np.asarray(fill).reshape(()).item()


def _filter_kernel(arrays, args):
    x, weights, fill = arrays
    if args["_expand_frames"]:
        x = np.broadcast_to(x, _sequence_shape(x.shape, weights, fill, args))
    spatial, anchors, _ = _filter_plan(x.shape, weights.shape, args)
    out_type = _result_type(x.dtype, args)
    frames = _filter_frames(x.shape, weights, fill, args)
    if frames is not None:
        frame_args, frame_inputs = frames
        results = [_filter_kernel([x[f], w, v], frame_args) for f, (w, v) in enumerate(frame_inputs)]
        return (
            np.stack(results)
            if results
            else np.empty(_filter_plan(x.shape, weights.shape, args)[2], out_type)
        )
    pad_mode, value = _filter_border(args, fill)
    # Integer results round halves to even, as the reference's filter does (its blurs and
    # laplacian round them away from zero).
    return _correlate_window(x, spatial, weights, anchors, out_type, pad_mode, value, even=True)


def _filter_gpu_windows(shape, dtype, weights, fill, args, repeated=False):
    """The GPU windows of ``_filter_kernel`` on a sample of ``shape`` and ``dtype``: one,
    or one per frame (``repeated``: every frame reads the sample, broadcast)."""
    spatial, anchors, out_shape = _filter_plan(shape, weights.shape, args)
    frames = _filter_frames(shape, weights, fill, args)
    if frames is not None:
        frame_args, frame_inputs = frames
        in_size = 0 if repeated else math.prod(shape[1:])
        out_size = math.prod(out_shape[1:])
        windows = []
        for f, (w, v) in enumerate(frame_inputs):
            for window in _filter_gpu_windows(shape[1:], dtype, w, v, frame_args):
                window.in_offset += f * in_size
                window.out_offset += f * out_size
                windows.append(window)
        return windows
    if math.prod(shape) == 0:
        return []
    pad_mode, value = _filter_border(args, fill)
    return [_gpu_window(shape, dtype, spatial, weights, anchors, pad_mode, value)]


def _filter_gpu_plan(shape, dtype, args, others):
    weights, fill = others
    shape = _sequence_shape(shape, weights, fill, args)
    windows = _filter_gpu_windows(shape, dtype, weights, fill, args, repeated=args["_expand_frames"])
    return FilterPlan(_filter_plan(shape, weights.shape, args)[2], [FilterStep(windows)])


FILTER = Operator(
    "filter",
    inputs=[
        Input("data", doc="Images, sequences or volumes."),
        Input(
            "filter",
            doc="The float filter: 2-D for images and sequences, 3-D for volumes; for a sequence, one "
            "filter per frame when its layout starts with F (``ndd.per_frame``).",
        ),
        Input(
            "fill_value",
            optional=True,
            doc="Scalar padding value for ``border='constant'`` (0 by default); one per frame of a "
            "sequence when its layout starts with F.",
        ),
    ],
    args=[
        Arg(
            "anchor",
            "int_list",
            [-1],
            per_sample=True,
            doc="Position in the filter that lies over the output element, per filter axis; -1 is the "
            "middle (rounded down). Ignored in 'valid' mode.",
            type_doc="int or list of int",
        ),
        Arg(
            "border",
            "str",
            "reflect_101",
            choices=_FILTER_BORDERS,
            doc="Values beyond the edges: 'reflect_101' (dcb|abcd), 'reflect_1001' (cba|abcd), 'wrap' "
            "(bcd|abcd), 'clamp' (aaa|abcd) or 'constant' (``fill_value``).",
        ),
        Arg(
            "dtype", "dtype", None, doc="Output type: the input type (default) or float32.", type_doc="DType"
        ),
        Arg(
            "mode",
            "str",
            "same",
            choices=("same", "valid"),
            doc="'same': the output has the input's size; 'valid': only positions where the whole filter "
            "lies inside the sample.",
        ),
    ],
    prepare_args=_record_filter_layouts,
    infer_types=_filter_types,
    infer_shape=_filter_shape,
    kernel=_filter_kernel,
    doc="Correlate the spatial axes of each sample with a filter (the filter is not flipped).\n\n"
    "Channels and frames are filtered independently. The products are summed in float32.",
)


# ---------------------------------------------------------------- median_blur, dilate, erode

_MORPHOLOGY_BORDERS = ("constant", "replicate", "reflect", "reflect_101", "wrap")


def _image_planes(op, layout, shape):
    """(planes, height, width, elements per pixel) of an image or sequence sample."""
    spatial, _ = _spatial_axes(op, layout, len(shape), allow_volumes=False, frames_first=True)
    if len(spatial) != 2:
        raise InvalidArgumentError(
            f"{op.qualname}: expected images or sequences of images, got layout {layout!r}"
        )
    h, w = spatial
    return math.prod(shape[:h]), shape[h], shape[w], math.prod(shape[w + 1 :])


def _width_height(op, name, values):
    """A (width, height) pair: one value is used for both."""
    values = tuple(values)
    if len(values) == 1:
        values *= 2
    if len(values) != 2:
        raise InvalidArgumentError(
            f"{op.qualname}: '{name}' must have 2 values (width, height), got {list(values)}"
        )
    return values


def _morphology_window(op, args):
    """(width, height, anchor x, anchor y) of the structuring element after ``iterations``."""
    width, height = _width_height(op, "mask_size", args["mask_size"])
    if width < 1 or height < 1:
        raise InvalidArgumentError(f"{op.qualname}: 'mask_size' must be positive, got {[width, height]}")
    ax, ay = _width_height(op, "anchor", args["anchor"])
    if not (-1 <= ax < width and -1 <= ay < height):
        raise InvalidArgumentError(
            f"{op.qualname}: 'anchor' must lie within the mask (or be -1), got {[ax, ay]} for a mask of "
            f"{[width, height]}"
        )
    ax = width // 2 if ax < 0 else ax
    ay = height // 2 if ay < 0 else ay
    iterations = args["iterations"]
    if iterations < 1:
        raise InvalidArgumentError(f"{op.qualname}: 'iterations' must be at least 1, got {iterations}")
    # Repeating the operation widens the rectangle by (size - 1) per extra pass, as the reference does.
    grow = iterations - 1
    return width + grow * (width - 1), height + grow * (height - 1), ax * iterations, ay * iterations


def _morphology_shape(op):
    def infer(shapes, args):
        _image_planes(op, args[INPUT_LAYOUT], shapes[0])
        _morphology_window(op, args)
        return [shapes[0]]

    return infer


def _extreme(dtype, largest):
    if dtype.kind == "f":
        return np.inf if largest else -np.inf
    info = np.iinfo(dtype)
    return info.max if largest else info.min


def _morphology_padding(op, args):
    """(mask width, mask height, rows' padding, columns' padding, np.pad mode) of a
    sample, each padding a (before, after) pair."""
    mask_w, mask_h, ax, ay = _morphology_window(op, args)
    return mask_w, mask_h, (ay, mask_h - 1 - ay), (ax, mask_w - 1 - ax), PAD_MODES[args["border_mode"]]


def _check_padding_fits(op, name, value, x, planes, height, width, inner, rows, columns):
    """Refuse a window (argument ``name`` of ``value``) whose padded copy of sample ``x``
    (and a second array of its size) would fill more than half of the memory."""
    nbytes = 2 * planes * (height + rows) * (width + columns) * inner * x.itemsize
    if exceeds_half_of_memory(nbytes):
        raise InvalidArgumentError(
            f"{op.qualname}: '{name}' {value} would pad a sample of shape {x.shape} to "
            f"{nbytes / 2**30:.0f} GiB of work, more than half of this machine's memory"
        )


def _morphology_kernel(op, reduce, erode):
    def kernel(arrays, args):
        x = arrays[0]
        if x.size == 0:
            # Nothing to reduce; the borders of an empty axis have no values to reflect or wrap.
            return x.copy()
        planes, height, width, inner = _image_planes(op, args[INPUT_LAYOUT], x.shape)
        mask_w, mask_h, rows_padding, columns_padding, mode = _morphology_padding(op, args)
        _check_padding_fits(
            op, "mask_size", list(args["mask_size"]), x, planes, height, width, inner, mask_h - 1, mask_w - 1
        )
        image = x.reshape(planes, height, width, inner)
        widths = ((0, 0), rows_padding, columns_padding, (0, 0))
        if mode == "constant":
            # The padding never wins: the largest value for erosion, the smallest for dilation.
            padded = _pad_planes(image, widths, "constant", _extreme(x.dtype, erode))
        else:
            padded = _pad_planes(image, widths, mode)
        # A rectangle is separable: reduce along the rows, then along the columns.
        rows = padded[:, :, 0:width].copy()
        for j in range(1, mask_w):
            reduce(rows, padded[:, :, j : j + width], out=rows)
        out = rows[:, 0:height].copy()
        for i in range(1, mask_h):
            reduce(out, rows[:, i : i + height], out=out)
        return out.reshape(x.shape)

    return kernel


def _morphology_gpu_plan(op):
    """The GPU's ``_morphology_kernel``: a sample's planes and the index maps of its
    padded rows and columns (the padding of ``_pad_planes``)."""

    def plan(shape, args):
        view = _image_planes(op, args[INPUT_LAYOUT], shape)
        _, _, rows_padding, columns_padding, mode = _morphology_padding(op, args)
        return MorphologyPlan(
            view, border_map(view[1], *rows_padding, mode), border_map(view[2], *columns_padding, mode)
        )

    return plan


def _morphology_operator(name, reduce, erode, verb):
    op = Operator(
        name,
        module="ndd.experimental",
        inputs=[Input("input", doc="Images (HW, HWC, CHW) or sequences of them (FHWC, FCHW).")],
        args=[
            Arg(
                "anchor",
                "int_list",
                [-1, -1],
                per_sample=True,
                doc="(x, y) position of the output element in the structuring element; -1 is its centre.",
                type_doc="list of int",
            ),
            Arg(
                "border_mode",
                "str",
                "constant",
                choices=_MORPHOLOGY_BORDERS,
                doc="Values beyond the edges: 'constant' (a value that never wins), 'replicate', 'reflect' "
                "(cba|abc), 'reflect_101' (cb|abc) or 'wrap'.",
            ),
            Arg(
                "iterations",
                "int",
                1,
                doc="How many times the operation is applied; each extra time widens the structuring "
                "element by its size minus one.",
            ),
            Arg(
                "mask_size",
                "int_list",
                [3, 3],
                per_sample=True,
                doc="(width, height) of the rectangular structuring element.",
                type_doc="list of int",
            ),
        ],
        prepare_args=record_layout,
        infer_types=None,
        doc=f"Morphological {verb}: each pixel becomes the {'minimum' if erode else 'maximum'} of the "
        "rectangle of the structuring element around it, per channel.",
    )
    op.infer_types = _morphology_types(op)
    op.infer_shape = _morphology_shape(op)
    op.kernel = _morphology_kernel(op, reduce, erode)
    return op


def _morphology_types(op):
    def infer(ins, args):
        x = ins[0]
        if x._dtype.numpy is None or x._dtype.numpy.kind not in "iuf":
            raise InvalidArgumentError(f"{op.qualname}: expected numeric input, got {x._dtype}")
        return [(x._dtype, x._layout)]

    return infer


DILATE = _morphology_operator("dilate", np.maximum, False, "dilation")
ERODE = _morphology_operator("erode", np.minimum, True, "erosion")


def _median_window_size(args):
    width, height = _width_height(MEDIAN_BLUR, "window_size", args["window_size"])
    if width < 1 or height < 1 or width % 2 == 0 or height % 2 == 0:
        raise InvalidArgumentError(
            f"ndd.experimental.median_blur: 'window_size' must be odd and positive, got {[width, height]}"
        )
    return width, height


def _median_shape(shapes, args):
    _image_planes(MEDIAN_BLUR, args[INPUT_LAYOUT], shapes[0])
    _median_window_size(args)
    return [shapes[0]]


def _median_kernel(arrays, args):
    x = arrays[0]
    planes, height, width, inner = _image_planes(MEDIAN_BLUR, args[INPUT_LAYOUT], x.shape)
    win_w, win_h = _median_window_size(args)
    if x.size == 0:
        return x.copy()
    _check_padding_fits(
        MEDIAN_BLUR, "window_size", list(args["window_size"]), x, planes, height, width, inner, win_h, win_w
    )
    widths = ((0, 0), (win_h // 2, win_h // 2), (win_w // 2, win_w // 2), (0, 0))
    # The reference repeats the edge values beyond the border.
    padded = _pad_planes(x.reshape(planes, height, width, inner), widths, "edge")
    padded = padded.reshape(planes, height + win_h - 1, (width + win_w - 1) * inner)
    out = np.empty((planes, height, width * inner), x.dtype)
    median_window(padded, out, win_h, win_w, inner)
    return out.reshape(x.shape)


def _median_gpu_plan(shape, args):
    """The GPU's ``_median_kernel``: a sample's planes and window."""
    width, height = _median_window_size(args)
    return MedianPlan(_image_planes(MEDIAN_BLUR, args[INPUT_LAYOUT], shape), height, width)


MEDIAN_BLUR = Operator(
    "median_blur",
    module="ndd.experimental",
    inputs=[Input("input", doc="Images (HW, HWC, CHW) or sequences of them (FHWC, FCHW).")],
    args=[
        Arg(
            "window_size",
            "int_list",
            [3, 3],
            per_sample=True,
            doc="Odd (width, height) of the window; one value for both.",
            type_doc="int or list of int",
        ),
    ],
    prepare_args=record_layout,
    infer_shape=_median_shape,
    kernel=_median_kernel,
    doc="Median blur: each pixel becomes the median of the window around it, per channel. Beyond the "
    "edges the edge values repeat.",
)


def _median_types(ins, args):
    x = ins[0]
    # The element types of the compiled median kernel.
    if x._dtype.numpy is None or x._dtype.numpy.kind not in "iuf" or x._dtype.numpy == np.float16:
        raise InvalidArgumentError(
            f"ndd.experimental.median_blur: expected integer, float32 or float64 input, got {x._dtype}"
        )
    return [(x._dtype, x._layout)]


MEDIAN_BLUR.infer_types = _median_types

OPERATORS = [GAUSSIAN_BLUR, LAPLACIAN, FILTER, MEDIAN_BLUR, DILATE, ERODE]

# The GPU runs the CPU's plans: the same windows, borders and steps (gpu_filters.py).
GAUSSIAN_BLUR.gpu_kernel = GpuFilter(GAUSSIAN_BLUR, _gaussian_gpu_plan, _result_type)
LAPLACIAN.gpu_kernel = GpuFilter(LAPLACIAN, _laplacian_gpu_plan, _result_type)
FILTER.gpu_kernel = GpuFilter(FILTER, _filter_gpu_plan, _result_type, host_inputs=(1, 2), round_even=True)
MEDIAN_BLUR.gpu_kernel = GpuMedian(MEDIAN_BLUR, _median_gpu_plan)
DILATE.gpu_kernel = GpuMorphology(DILATE, _morphology_gpu_plan(DILATE), erode=False)
ERODE.gpu_kernel = GpuMorphology(ERODE, _morphology_gpu_plan(ERODE), erode=True)

# Arguments the reference takes frame by frame (ndd.per_frame); see frames.py.
GAUSSIAN_BLUR.per_frame_args = ("sigma", "window_size")
LAPLACIAN.per_frame_args = ("scale", "smoothing_size", "window_size")
DILATE.per_frame_args = ERODE.per_frame_args = ("anchor", "mask_size")
FILTER.per_frame_args = ("anchor",)
