# cython: language_level=3, boundscheck=False, wraparound=False
"""Prepare phase of elementwise operators (arithmetic, comparisons, ``ndd.math``):
operand conversion, type promotion, broadcasting and layout of the result."""

from .storage cimport TensorBase, BatchBase, would_be_sample_shapes
from .invocation cimport Invocation, schedule
from .call import gpu_device, make_results

from .._errors import raise_as_runtime_error
from .._eval.device import Device

cdef object _CPU = Device.CPU
cdef object _tensor = None
cdef object _as_tensor = None
cdef dict _constants = {}
cdef Py_ssize_t _MAX_CONSTANTS = 1024
cdef object _INT32_MIN = -(2**31), _UINT32_MAX = 2**32 - 1
cdef object _INT64_MIN = -(2**63), _INT64_MAX = 2**63 - 1


def bind(tensor, as_tensor):
    global _tensor, _as_tensor
    _tensor = tensor
    _as_tensor = as_tensor


cdef object _constant(object op, object value):
    """A 0-D tensor for a Python scalar operand: int -> int32 (uint32 above the
    int32 range, then int64, where the reference stops at uint32),
    float -> float32, bool -> bool. Cached, as ``x + 1`` is common."""
    key = (type(value), value)
    t = _constants.get(key)
    if t is None:
        if type(value) is not int or _INT32_MIN <= value <= _UINT32_MAX:
            t = _tensor(value)
        elif _INT64_MIN <= value <= _INT64_MAX:
            t = _tensor(value, dtype="int64")
        else:
            raise OverflowError(
                f"{op.qualname}: the Python integer operand {value} is out of the int64 range"
            )
        if len(_constants) >= _MAX_CONSTANTS:
            _constants.clear()
        if value == value and (value != 0 or type(value) is not float):  # not NaN or -0.0/0.0
            _constants[key] = t
    return t


cpdef tuple broadcast_shapes(tuple a, tuple b):
    """NumPy broadcasting of two shapes; ValueError when they do not match."""
    cdef Py_ssize_t na = len(a), nb = len(b), n = max(na, nb), i
    cdef list out = [0] * n
    for i in range(n):
        da = a[na - n + i] if na - n + i >= 0 else 1
        db = b[nb - n + i] if nb - n + i >= 0 else 1
        if da == db or db == 1:
            out[i] = da
        elif da == 1:
            out[i] = db
        else:
            raise ValueError(f"Can't broadcast shapes {a} and {b}")
    return tuple(out)


cdef tuple _broadcast_all(list shapes):
    cdef tuple result = shapes[0]
    cdef Py_ssize_t i
    for i in range(1, len(shapes)):
        result = broadcast_shapes(result, shapes[i])
    return result


cdef bint _dense_broadcast_ok(list ins):
    """Whether broadcasting the densely stored batches (leading sample dimension)
    with the tensors gives the per-sample result: all batches have one sample
    dimensionality and no tensor has more dimensions."""
    cdef Py_ssize_t batch_ndim = -1, nd
    for x in ins:
        if isinstance(x, BatchBase):
            nd = len((<BatchBase>x)._shapes[0])
            if batch_ndim >= 0 and nd != batch_ndim:
                return False
            batch_ndim = nd
    for x in ins:
        if isinstance(x, TensorBase) and len((<TensorBase>x)._shape) > batch_ndim:
            return False
    return True


cpdef object apply(op, tuple operands):
    """Prepare and schedule an elementwise operator on Tensors, Batches,
    tensor-likes and Python scalars; return a Tensor or a Batch. An error of the
    call is also a RuntimeError, as in the reference (ndd/_errors.py)."""
    try:
        return _apply(op, operands)
    except Exception as exc:
        raise_as_runtime_error(exc)
        raise


cdef object _apply(op, tuple operands):
    cdef list ins = []
    cdef Py_ssize_t bs = -1
    cdef bint external = False, any_gpu = False, shapes_known = True, uniform = True
    cdef TensorBase t
    cdef BatchBase b
    for x in operands:
        if isinstance(x, TensorBase):
            t = <TensorBase>x
        elif isinstance(x, BatchBase):
            b = <BatchBase>x
            if bs >= 0 and b._batch_size != bs:
                raise ValueError(f"{op.qualname}: Inconsistent batch size: {b._batch_size} != {bs}")
            bs = b._batch_size
            external |= b._external
            any_gpu |= b._device is not _CPU
            shapes_known &= b._shapes is not None
            uniform &= b._uniform
            ins.append(b)
            continue
        elif type(x) is int or type(x) is float or type(x) is bool:
            t = _constant(op, x)
        else:
            try:
                t = _as_tensor(x)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"{op.qualname}: unsupported operand {type(x).__name__} ({exc})") from None
        external |= t._external
        any_gpu |= t._device is not _CPU
        shapes_known &= t._shape is not None
        ins.append(t)
    dev = _CPU
    if any_gpu:
        dev = gpu_device(op, None, ins)

    key = tuple([id((<TensorBase>x)._dtype) if isinstance(x, TensorBase) else id((<BatchBase>x)._dtype)
                 for x in ins])
    types = op.type_cache.get(key)
    if types is None:
        types = op.resolve_types(
            [(<TensorBase>x)._dtype if isinstance(x, TensorBase) else (<BatchBase>x)._dtype for x in ins]
        )
        op.type_cache[key] = types
    out_dtype = types[0]
    if dev is not _CPU:
        op.gpu_kernel.check(ins, {"types": types})

    shapes = None
    cdef str layout = ""
    cdef Py_ssize_t nd, i
    for x in ins:
        lay = (<TensorBase>x)._layout if isinstance(x, TensorBase) else (<BatchBase>x)._layout
        if not lay:
            continue
        if not layout:
            layout = lay
            continue
        # Broadcasting aligns trailing dimensions, so named layouts must agree there.
        longer, shorter = (lay, layout) if len(lay) > len(layout) else (layout, lay)
        if not longer.endswith(shorter):
            raise ValueError(f"{op.qualname}: operand layouts {layout!r} and {lay!r} do not match")
        layout = longer
    if shapes_known:
        try:
            if bs < 0:
                shapes = [(_broadcast_all([(<TensorBase>x)._shape for x in ins]),)]
            elif uniform and bs > 0:
                shapes = [(_broadcast_all([(<TensorBase>x)._shape if isinstance(x, TensorBase)
                                           else (<BatchBase>x)._shapes[0] for x in ins]),)] * bs
            else:
                shapes = []
                for i in range(bs):
                    shapes.append((_broadcast_all([(<TensorBase>x)._shape if isinstance(x, TensorBase)
                                                   else (<BatchBase>x)._shapes[i] for x in ins]),))
        except ValueError as exc:
            # A uniform batch fails the same way in every sample: no index to name.
            where = f" (sample {i})" if bs >= 0 and not uniform else ""
            raise ValueError(f"{op.qualname}: {exc}{where}") from None
        if shapes:  # an empty batch keeps its layout
            nd = len(shapes[0][0])
            if nd != len(layout):
                layout = ""
    cdef Invocation inv = Invocation()
    inv.op = op
    inv.inputs = tuple(ins)
    inv.args = {"types": types, "dense": bs > 0 and shapes_known and _dense_broadcast_ok(ins)}
    inv.batch_size = bs
    inv.device = dev
    results = make_results(
        inv, [(out_dtype, layout)], shapes[0] if (shapes is not None and bs < 0) else shapes, dev,
        uniform and shapes is not None
    )
    if bs == 0:
        _empty_sample_shape(results, ins)
    schedule(inv, external)
    return results


cdef void _empty_sample_shape(BatchBase result, list ins) except *:
    """A result of no samples: the broadcast of its operands' would-be sample shapes."""
    shapes = would_be_sample_shapes(ins)
    if shapes is None:
        return
    try:
        result._empty_shape = _broadcast_all(shapes)
    except ValueError:
        pass  # operands that could not meet: the shape stays unknown
