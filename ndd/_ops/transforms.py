"""Affine transform matrices (``ndd.transforms.translation, scale, rotation, shear,
crop, combine``) and their application to points (``ndd.coord_transform``).

A transform of ``ndim`` dimensions is a float32 matrix ``[ndim, ndim + 1]``: the
linear part followed by the offset column. Given an input matrix, an operator
composes its own transform with it: by default the input is applied first
(``new @ input``), with ``reverse_order=True`` last (``input @ new``). The
arithmetic is done in float32, as the reference does, so that the matrices
match it to the last bit in the usual cases.

Arguments marked with ``ndd.per_frame`` (and inputs with an ``F`` layout) give a
sequence of transforms, one per frame, with layout ``F**``; see ``frames.py``.

Deliberate divergences from the reference: ``coord_transform`` accepts ``M`` and
``MT`` as flat lists when their length fits the input (the reference wants 2-D
arrays); a per-frame ``transforms.crop`` whose box is empty in some frame raises,
where the reference returns a matrix of infinities.
"""

import math

import numpy as np

from .._prepare.args import InvalidArgumentError
from .._prepare.invocation import PendingArg, PerSample
from .._types import float32
from .conversions import cast_array
from .gpu_boxes import GpuCoordTransform
from .schema import Arg, Input, Operator, batch_samples_of

_F32 = np.float32


def _pending(*values):
    return any(type(v) is PendingArg for v in values)


def _known(value):
    """The values of an argument the prepare phase can check (none if computed later)."""
    if type(value) is PendingArg:
        return ()
    if type(value) is PerSample:
        return value.values
    return (value,)


def _matrix_shape_ok(shape):
    return len(shape) == 2 and shape[0] >= 1 and shape[1] == shape[0] + 1


def _homogeneous(m):
    ndim = m.shape[0]
    out = np.zeros((ndim + 1, ndim + 1), _F32)
    out[:ndim] = m
    out[ndim, ndim] = 1
    return out


def _affine(linear, offset):
    ndim = linear.shape[0]
    out = np.empty((ndim, ndim + 1), _F32)
    out[:, :ndim] = linear
    out[:, ndim] = offset
    return out


def _about_center(linear, center):
    """The transform applying ``linear`` around ``center`` (float32 arithmetic)."""
    ndim = linear.shape[0]
    if center is None:
        return _affine(linear, np.zeros(ndim, _F32))
    c = _every_component(center, ndim)
    offset = np.empty(ndim, _F32)
    for i in range(ndim):
        acc = _F32(0)
        for j in range(ndim):
            acc = _F32(acc + _F32(linear[i, j] * c[j]))
        offset[i] = c[i] - acc
    return _affine(linear, offset)


def _every_component(values, n):
    """``values`` as float32, one value spread over ``n`` components (as the reference
    reads a center, scale, axis or T of one value)."""
    v = np.asarray(values, _F32).reshape(-1)
    if v.size == 1 and n > 1:
        v = np.full(n, v[0], _F32)
    return v


def _compose(qualname, made, matrix, reverse):
    """``made`` applied after ``matrix`` (before it with ``reverse``)."""
    if matrix is None:
        return made
    if matrix.shape != made.shape:
        raise InvalidArgumentError(
            f"{qualname}: the input matrix has shape {matrix.shape}, expected {made.shape} "
            f"for a {made.shape[0]}-D transform"
        )
    a, b = (
        (_homogeneous(matrix), _homogeneous(made)) if reverse else (_homogeneous(made), _homogeneous(matrix))
    )
    return _matmul_f32(a, b)[: made.shape[0]]


def _matmul_f32(a, b):
    """A product of small float32 matrices summed in order, in float32."""
    n, k = a.shape
    m = b.shape[1]
    out = np.empty((n, m), _F32)
    for i in range(n):
        for j in range(m):
            acc = _F32(0)
            for t in range(k):
                acc = _F32(acc + _F32(a[i, t] * b[t, j]))
            out[i, j] = acc
    return out


def _transform_op(name, args, dims, build, doc):
    """An operator producing a transform matrix from its arguments.

    ``dims(qualname, args, input_ndim)`` is the dimensionality the arguments ask for
    (None: unknown until the run), given that of the input matrix (None without one);
    ``build(qualname, args, ndim)`` the float32 ``[ndim, ndim + 1]`` matrix.
    """
    qualname = f"ndd.transforms.{name}"

    def types(ins, a):
        x = ins[0] if ins else None
        if x is not None and x._dtype is not float32:
            raise InvalidArgumentError(f"{qualname}: the input matrix must be float32, got {x._dtype}")
        return [(float32, "**")]

    def shape(shapes, a):
        in_shape = shapes[0] if shapes else None
        if in_shape is not None and not _matrix_shape_ok(in_shape):
            raise InvalidArgumentError(
                f"{qualname}: the input must be an affine matrix of shape (ndim, ndim + 1), got {in_shape}"
            )
        ndim = dims(qualname, a, None if in_shape is None else in_shape[0])
        if ndim is None:
            return None if in_shape is None else [tuple(in_shape)]
        if in_shape is not None and in_shape[0] != ndim:
            raise InvalidArgumentError(
                f"{qualname}: the input matrix is {in_shape[0]}-D but the arguments describe a {ndim}-D "
                f"transform"
            )
        return [(ndim, ndim + 1)]

    def kernel(arrays, a):
        matrix = arrays[0] if arrays else None
        ndim = dims(qualname, a, None if matrix is None else matrix.shape[0])
        if ndim is None:
            ndim = matrix.shape[0]
        made = build(qualname, a, ndim)
        return _compose(qualname, made, matrix, a["reverse_order"])

    return Operator(
        name,
        module="ndd.transforms",
        inputs=[
            Input("input", optional=True, doc="A transform matrix to compose with, float32 (ndim, ndim+1).")
        ],
        args=sorted([*args, REVERSE_ORDER], key=lambda a: a.name),
        infer_types=types,
        infer_shape=shape,
        kernel=kernel,
        doc=doc,
    )


REVERSE_ORDER = Arg(
    "reverse_order",
    "bool",
    False,
    doc="Apply the new transform before the input matrix instead of after it.",
    type_doc="bool",
)


def _center_arg(doc="Center of the transform; the origin by default."):
    return Arg("center", "float_list", None, per_sample=True, doc=doc, type_doc="list of float")


def _list_len(qualname, name, value, allowed):
    if _pending(value) or value is None:
        return None
    if len(value) not in allowed:
        raise InvalidArgumentError(
            f"{qualname}: '{name}' must have {' or '.join(map(str, allowed))} elements, "
            f"got {np.asarray(value).tolist()}"
        )
    return len(value)


def _check_center(qualname, a, ndim):
    c = a.get("center")
    if c is None or _pending(c) or ndim is None:
        return
    if len(c) not in (1, ndim):  # one value is every coordinate, as in the reference
        counts = "1 element" if ndim == 1 else f"1 or {ndim} elements"
        raise InvalidArgumentError(
            f"{qualname}: 'center' must have {counts} for a {ndim}-D transform, got {list(c)}"
        )


# -- translation ----------------------------------------------------------------


def _translation_dims(qualname, a, input_ndim=None):
    offset = a["offset"]
    if _pending(offset):
        return None
    if len(offset) == 0:
        raise InvalidArgumentError(f"{qualname}: 'offset' must not be empty")
    return len(offset)


def _translation_build(qualname, a, ndim):
    offset = np.asarray(a["offset"], _F32)
    if offset.size != ndim:
        raise InvalidArgumentError(f"{qualname}: 'offset' must have {ndim} elements, got {offset.tolist()}")
    return _affine(np.eye(ndim, dtype=_F32), offset)


TRANSLATION = _transform_op(
    "translation",
    [Arg("offset", "float_list", per_sample=True, doc="The translation vector.", type_doc="list of float")],
    _translation_dims,
    _translation_build,
    "A translation matrix: shift points by ``offset`` (its length gives the dimensionality).",
)


# -- scale ------------------------------------------------------------------------


def _scale_dims(qualname, a, input_ndim=None):
    """That of ``scale``'s values when there are several, else ``ndim``, else the input
    matrix's, else 1 (one ``scale`` value is every axis's, as in the reference); the
    caller refuses an input matrix of other dimensions."""
    scale, ndim = a["scale"], a["ndim"]
    if ndim is not None and ndim < 1:
        raise InvalidArgumentError(f"{qualname}: 'ndim' must be positive, got {ndim}")
    if _pending(scale):
        return ndim if ndim is not None else input_ndim
    if len(scale) == 0:
        raise InvalidArgumentError(f"{qualname}: 'scale' must not be empty")
    if ndim is not None and len(scale) not in (1, ndim):
        raise InvalidArgumentError(
            f"{qualname}: 'scale' must have 1 or {ndim} (ndim) elements, got {list(scale)}"
        )
    if len(scale) > 1:
        result = len(scale)
    elif ndim is not None:
        result = ndim
    else:
        result = input_ndim if input_ndim is not None else 1
    _check_center(qualname, a, result)
    return result


def _scale_build(qualname, a, ndim):
    scale = _every_component(a["scale"], ndim)
    if scale.size != ndim:
        raise InvalidArgumentError(f"{qualname}: 'scale' must have {ndim} elements, got {scale.tolist()}")
    _check_center(qualname, a, ndim)
    return _about_center(np.diag(scale).astype(_F32), a["center"])


SCALE = _transform_op(
    "scale",
    [
        _center_arg("Center of the scaling; the origin by default."),
        Arg(
            "ndim",
            "int",
            None,
            doc="Dimensionality of the transform, when ``scale`` is one value for all axes.",
            type_doc="int",
        ),
        Arg(
            "scale", "float_list", per_sample=True, doc="Scale factor of each axis.", type_doc="list of float"
        ),
    ],
    _scale_dims,
    _scale_build,
    "A scaling matrix: multiply each coordinate by its factor, about ``center``.",
)


# -- rotation ---------------------------------------------------------------------


def _radians(angle_deg):
    return _F32(math.radians(float(_F32(angle_deg))))


def _rotation_dims(qualname, a, input_ndim=None):
    axis = a["axis"]
    if axis is None:
        ndim = 2
    elif _pending(axis):
        ndim = 3
    else:
        if len(axis) not in (1, 3):  # one value is every component, as in the reference
            raise InvalidArgumentError(f"{qualname}: 'axis' must have 1 or 3 elements, got {list(axis)}")
        if not any(axis):
            raise InvalidArgumentError(f"{qualname}: 'axis' must have a non-zero length, got {list(axis)}")
        ndim = 3
    _check_center(qualname, a, ndim)
    return ndim


def _rotation_build(qualname, a, ndim):
    rad = _radians(a["angle"])
    c, s = _F32(math.cos(rad)), _F32(math.sin(rad))
    if ndim == 2:
        linear = np.array([[c, -s], [s, c]], _F32)
    else:
        axis = _every_component(a["axis"], 3)
        if axis.size != 3:  # a per-sample axis, known only now
            raise InvalidArgumentError(f"{qualname}: 'axis' must have 1 or 3 elements, got {axis.tolist()}")
        norm = _F32(
            math.sqrt(
                float(_F32(_F32(axis[0] * axis[0]) + _F32(axis[1] * axis[1])) + _F32(axis[2] * axis[2]))
            )
        )
        if norm == 0:
            raise InvalidArgumentError(f"{qualname}: 'axis' must have a non-zero length, got {axis.tolist()}")
        x, y, z = (axis / norm).astype(_F32)
        t = _F32(1 - c)
        linear = np.array(
            [
                [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
                [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
                [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
            ],
            _F32,
        )
    return _about_center(linear, a["center"])


ROTATION = _transform_op(
    "rotation",
    [
        Arg(
            "angle",
            "float",
            per_sample=True,
            doc="Rotation angle in degrees (counter-clockwise).",
            type_doc="float",
        ),
        Arg(
            "axis",
            "float_list",
            None,
            per_sample=True,
            doc="Rotation axis of a 3-D transform (need not be normalised; one value is every component); "
            "without it the transform is 2-D.",
            type_doc="list of float",
        ),
        _center_arg("Center of the rotation; the origin by default."),
    ],
    _rotation_dims,
    _rotation_build,
    "A rotation matrix: 2-D by ``angle`` degrees, or 3-D about ``axis``, around ``center``.",
)


# -- shear --------------------------------------------------------------------------


def _float_values(qualname, name, value):
    """``value`` (numbers: the 'array' arguments' conversion refuses anything else) as a
    flat float64 array."""
    return np.asarray(value, np.float64).reshape(-1)


def _shear_dims(qualname, a, input_ndim=None):
    shear, angles = a["shear"], a["angles"]
    if shear is not None and angles is not None:
        raise InvalidArgumentError(f"{qualname}: 'shear' and 'angles' are mutually exclusive")
    if shear is None and angles is None:
        raise InvalidArgumentError(f"{qualname}: one of 'shear' or 'angles' must be given")
    name, value = ("shear", shear) if shear is not None else ("angles", angles)
    if _pending(value):
        return None
    value = _float_values(qualname, name, value)
    n = _list_len(qualname, name, value, (2, 6))
    if name == "angles" and any(not -90 < v < 90 for v in value):
        raise InvalidArgumentError(f"{qualname}: 'angles' must be in the range (-90, 90), got {list(value)}")
    ndim = 2 if n == 2 else 3
    _check_center(qualname, a, ndim)
    return ndim


def _shear_build(qualname, a, ndim):
    if a["shear"] is not None:
        factors = np.asarray(a["shear"], _F32).reshape(-1)
    else:
        factors = np.array([_F32(math.tan(_radians(v))) for v in np.ravel(a["angles"])], _F32)
    if factors.size != (2 if ndim == 2 else 6):
        raise InvalidArgumentError(f"{qualname}: a {ndim}-D shear needs {2 if ndim == 2 else 6} values")
    linear = np.eye(ndim, dtype=_F32)
    off_diagonal = [(i, j) for i in range(ndim) for j in range(ndim) if i != j]
    for (i, j), v in zip(off_diagonal, factors, strict=True):
        linear[i, j] = v
    return _about_center(linear, a["center"])


SHEAR = _transform_op(
    "shear",
    [
        Arg(
            "angles",
            "array",
            None,
            per_sample=True,
            doc="Shear angles in degrees, in (-90, 90): 2 values (2-D) or a 3x2 matrix (3-D); the factors "
            "are their tangents.",
            type_doc="list of float or 3x2 array",
        ),
        _center_arg("Center of the shear; the origin by default."),
        Arg(
            "shear",
            "array",
            None,
            per_sample=True,
            doc="Shear factors: ``[sx, sy]`` (2-D) or ``[[sxy, sxz], [syx, syz], [szx, szy]]`` (3-D).",
            type_doc="list of float or 3x2 array",
        ),
    ],
    _shear_dims,
    _shear_build,
    "A shear matrix from factors or angles, about ``center``.",
)


# -- crop ---------------------------------------------------------------------------

_CROP_ARGS = ("from_end", "from_start", "to_end", "to_start")


def _crop_dims(qualname, a, input_ndim=None):
    values = [a[n] for n in _CROP_ARGS]
    if _pending(*values):
        return None
    lengths = {len(v) for v in values} - {1}
    if len(lengths) > 1:
        raise InvalidArgumentError(
            f"{qualname}: 'from_start', 'from_end', 'to_start' and 'to_end' must have the same number of "
            f"elements (or 1), got {[list(v) for v in values]}"
        )
    return lengths.pop() if lengths else 1


def _crop_build(qualname, a, ndim):
    fe, fs, te, ts = (np.broadcast_to(np.asarray(a[n], _F32), (ndim,)).copy() for n in _CROP_ARGS)
    if a["absolute"]:
        fs, fe = np.minimum(fs, fe), np.maximum(fs, fe)
        ts, te = np.minimum(ts, te), np.maximum(ts, te)
    span = (fe - fs).astype(_F32)
    if np.any(span == 0):
        raise InvalidArgumentError(
            f"{qualname}: the source box is empty along some axis: {fs.tolist()} to {fe.tolist()}"
        )
    scale = ((te - ts) / span).astype(_F32)
    offset = (ts - (fs * scale).astype(_F32)).astype(_F32)
    return _affine(np.diag(scale).astype(_F32), offset)


CROP = _transform_op(
    "crop",
    [
        Arg(
            "absolute",
            "bool",
            False,
            doc="Take each box's corners as given in any order (the smaller one is the start).",
            type_doc="bool",
        ),
        Arg(
            "from_end",
            "float_list",
            [1.0],
            per_sample=True,
            doc="End of the source box.",
            type_doc="list of float",
        ),
        Arg(
            "from_start",
            "float_list",
            [0.0],
            per_sample=True,
            doc="Start of the source box.",
            type_doc="list of float",
        ),
        Arg(
            "to_end",
            "float_list",
            [1.0],
            per_sample=True,
            doc="End of the target box.",
            type_doc="list of float",
        ),
        Arg(
            "to_start",
            "float_list",
            [0.0],
            per_sample=True,
            doc="Start of the target box.",
            type_doc="list of float",
        ),
    ],
    _crop_dims,
    _crop_build,
    "A matrix mapping the box ``[from_start, from_end]`` onto ``[to_start, to_end]`` (one-element "
    "arguments apply to every axis).",
)


# -- combine ------------------------------------------------------------------------


def _combine_types(ins, args):
    for k, x in enumerate(ins):
        if x._dtype is not float32:
            raise InvalidArgumentError(
                f"ndd.transforms.combine: input {k} must be a float32 matrix, got {x._dtype}"
            )
    return [(float32, "**")]


def _combine_shape(shapes, args):
    first = tuple(shapes[0])
    for s in shapes:
        if not _matrix_shape_ok(s) or tuple(s) != first:
            raise InvalidArgumentError(
                "ndd.transforms.combine: the inputs must be affine matrices of one shape (ndim, ndim + 1), "
                f"got {[tuple(x) for x in shapes]}"
            )
    return [first]


def _combine_kernel(arrays, args):
    mats = [_homogeneous(m) for m in arrays]
    if not args["reverse_order"]:
        mats = mats[::-1]
    out = mats[0]
    for m in mats[1:]:
        out = _matmul_f32(out, m)
    return out[: arrays[0].shape[0]]


COMBINE = Operator(
    "combine",
    module="ndd.transforms",
    inputs=[
        Input("input_0", doc="The first transform matrix."),
        Input("input_1", doc="The second transform matrix."),
        Input("inputs", variadic=True, doc="More transform matrices."),
    ],
    args=[
        Arg(
            "reverse_order",
            "bool",
            False,
            doc="Apply the matrices from the last to the first instead of from the first to the last.",
            type_doc="bool",
        )
    ],
    infer_types=_combine_types,
    infer_shape=_combine_shape,
    kernel=_combine_kernel,
    doc="Compose affine transform matrices: by default the first input is applied first.",
)
COMBINE.skip_absent_inputs = True


# -- coord_transform ----------------------------------------------------------------


def _coord_matrix(name, value, ncols_needed, n_in):
    """A converted ``M``/``MT`` argument as a 2-D float32 array, or None."""
    if value is None:
        return None
    m = np.asarray(value, _F32)
    if m.size == 0:  # as the reference; it would map every point to no coordinates
        raise InvalidArgumentError(f"ndd.coord_transform: '{name}' must not be empty")
    if m.ndim > 2:
        raise InvalidArgumentError(
            f"ndd.coord_transform: '{name}' must be a matrix (2-D), got shape {m.shape}"
        )
    if m.ndim == 0 or m.size == 1:
        scalar = _F32(m.reshape(-1)[0])
        eye = np.eye(n_in, dtype=_F32) * scalar
        return eye if ncols_needed == n_in else np.concatenate([eye, np.zeros((n_in, 1), _F32)], axis=1)
    if m.ndim == 1:
        if m.size % ncols_needed:
            raise InvalidArgumentError(
                f"ndd.coord_transform: '{name}' must be a matrix with {ncols_needed} columns, got {m.size} values"
            )
        m = m.reshape(-1, ncols_needed)
    if m.ndim != 2 or m.shape[1] != ncols_needed:
        raise InvalidArgumentError(
            f"ndd.coord_transform: '{name}' must be a matrix with {ncols_needed} columns for "
            f"{n_in}-component vectors, got shape {m.shape}"
        )
    return m


def _coord_plan(args, n_in):
    """(M, T) of one sample as float32 arrays."""
    if args["MT"] is not None:
        if args["M"] is not None or args["T"] is not None:
            raise InvalidArgumentError("ndd.coord_transform: 'MT' cannot be given together with 'M' or 'T'")
        mt = _coord_matrix("MT", args["MT"], n_in + 1, n_in)
        return mt[:, :n_in], mt[:, n_in]
    m = _coord_matrix("M", args["M"], n_in, n_in)
    if m is None:
        m = np.eye(n_in, dtype=_F32)
    t = args["T"]
    rows = m.shape[0]
    if t is None:
        t = np.zeros(rows, _F32)
    else:
        if np.ndim(t) > 1:
            raise InvalidArgumentError(
                f"ndd.coord_transform: 'T' must be a vector (1-D), got shape {np.shape(t)}"
            )
        t = _every_component(t, rows)
        if t.size != rows:
            raise InvalidArgumentError(
                f"ndd.coord_transform: 'T' must have {rows} elements (the rows of M), got {t.tolist()}"
            )
    return m, t


def _coord_types(ins, args):
    x = ins[0]
    dtype = args["dtype"]
    if dtype is not float32 and dtype is not x._dtype:
        raise InvalidArgumentError(
            f"ndd.coord_transform: 'dtype' must be float32 or the input type {x._dtype}, got {dtype}"
        )
    for name in ("M", "T", "MT"):
        for v in _known(args[name]):
            if v is not None and not np.all(np.isfinite(_float_values("ndd.coord_transform", name, v))):
                raise InvalidArgumentError(f"ndd.coord_transform: '{name}' must be finite")
    return [(dtype, x._layout)]


def _coord_shape(shapes, args):
    shape = shapes[0]
    if len(shape) < 2:
        raise InvalidArgumentError(
            f"ndd.coord_transform: the input must have at least 2 dimensions (points x components), got {shape}"
        )
    if _pending(args["M"], args["T"], args["MT"]):
        return None
    m, _ = _coord_plan(args, shape[-1])
    return [(*shape[:-1], m.shape[0])]


def _coord_kernel(arrays, args):
    x = arrays[0]
    n_in = x.shape[-1]
    out = _transform_points(x.reshape(math.prod(x.shape[:-1]), n_in), *_coord_plan(args, n_in))
    out = out.reshape((*x.shape[:-1], out.shape[1]))
    dtype = args["dtype"]
    return out if dtype is float32 else cast_array(out, dtype.numpy)


# Batches of at most this many coordinates in all are transformed together when their samples share
# the arguments (the cost of small samples is numpy's per call); the batch kernel declines the others,
# which go sample by sample.
_JOINED_COORDINATES = 1 << 16


def _coord_batch_kernel(inputs, sample_args, batch_size, ctx):
    samples = batch_samples_of(inputs[0], batch_size)
    # per_sample_args gives every sample the same dict when no argument varies.
    shared = batch_size > 0 and sample_args[0] is sample_args[-1]
    if (
        not shared
        or len({s.shape[-1:] for s in samples}) > 1
        or sum(s.size for s in samples) > _JOINED_COORDINATES
        or any(s.ndim < 2 or s.shape[-1] == 0 for s in samples)
    ):
        return None
    args, n_in = sample_args[0], samples[0].shape[-1]
    m, t = _coord_plan(args, n_in)
    joined = np.concatenate([s.reshape(-1, n_in) for s in samples])
    out = _transform_points(joined, m, t)
    if args["dtype"] is not float32:
        out = cast_array(out, args["dtype"].numpy)
    bounds = np.cumsum([0] + [s.size // max(n_in, 1) for s in samples]).tolist()
    return [
        [out[bounds[i] : bounds[i + 1]].reshape((*s.shape[:-1], m.shape[0])) for i, s in enumerate(samples)]
    ]


def _transform_points(points, m, t):
    """``m @ p + t`` of every row ``p`` of ``points`` (n x n_in), in float32, as the reference sums:
    ``t``, then each component's product in turn."""
    points = points.astype(_F32)
    out = np.empty((points.shape[0], m.shape[0]), _F32)
    out[...] = t
    # Infinite coordinates give what IEEE arithmetic gives (inf * 0 is NaN), silently.
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(points.shape[1]):
            out += points[:, j : j + 1] * m[:, j]
    return out


COORD_TRANSFORM = Operator(
    "coord_transform",
    inputs=[Input("input", doc="Points or vectors, the components along the last axis.")],
    args=[
        Arg(
            "M",
            "array",
            None,
            per_sample=True,
            doc="The matrix (m x n) applied to the n-component vectors; a scalar is that value times the "
            "identity; the identity by default.",
            type_doc="float or 2-D array of float",
        ),
        Arg(
            "MT",
            "array",
            None,
            per_sample=True,
            doc="``M`` and ``T`` as one m x (n+1) block matrix (exclusive with ``M`` and ``T``).",
            type_doc="float or 2-D array of float",
        ),
        Arg("T", "array", None, per_sample=True, doc="The translation (m values).", type_doc="list of float"),
        Arg("dtype", "dtype", float32, doc="Output type: float32 or the input type.", type_doc="DType"),
    ],
    infer_types=_coord_types,
    infer_shape=_coord_shape,
    kernel=_coord_kernel,
    batch_kernel=_coord_batch_kernel,
    doc="Transform points or vectors: ``out = M @ in + T`` along the last axis.",
)

COORD_TRANSFORM.gpu_kernel = GpuCoordTransform(COORD_TRANSFORM, _coord_plan)


OPERATORS = [COMBINE, CROP, ROTATION, SCALE, SHEAR, TRANSLATION, COORD_TRANSFORM]

# Arguments the reference takes frame by frame (ndd.per_frame): a sequence of
# transforms (or of transformed points) comes out, one per frame; see frames.py.
TRANSLATION.per_frame_args = ("offset",)
SCALE.per_frame_args = ("center", "scale")
ROTATION.per_frame_args = ("angle", "axis", "center")
SHEAR.per_frame_args = ("angles", "center", "shear")
CROP.per_frame_args = _CROP_ARGS
COORD_TRANSFORM.per_frame_args = ("M", "MT", "T")
for _op in OPERATORS:
    _op.frames_from_args = True
