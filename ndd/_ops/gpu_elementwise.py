"""GPU kernels of the elementwise operators (the arithmetic, comparison, bitwise and
shift operators, unary -, ~ and abs, every ``ndd.math`` function) and of ``cast``.

They follow the GPU operator contract of ``schema.Operator``: called in the run
phase with the device current and the inputs ordered before ``ctx.cuda_stream``,
they queue kernels of ``kernels/elementwise.cu`` on that stream and return
outputs allocated there (DeviceArray in sample mode, DeviceBatch in batch mode).
``KERNELS`` says which kernels exist: for each kernel name, the compute types.

The kernels work on flat buffers of one type, so what they can do is:

* operands of the compute type, or cast to it on the GPU first (the promotion):
  the result's type for arithmetic (float32 for an integer operand of a float
  function), the type numpy compares in for comparisons (whose output is bool);
* GPU operands broadcast as numpy does: an operand with fewer elements than the
  result is first broadcast into a temporary (``gpu_layout.broadcast_to``), and
  host scalars are passed by value (``x + 1``);
* a batch as one launch over its whole allocation when every batch operand has
  the same per-sample element offsets and shapes (and no operand is a Tensor),
  else one launch per sample: a GPU Tensor against every sample of a Batch, or
  batches whose samples broadcast against each other.

Everything else (host arrays other than scalars, types without a kernel) raises
NotImplementedError naming the operator: the GPU path never copies data between
the host and the GPU behind the user's back.

The values are the CPU's, with one difference where the CPU raises on the data:
a GPU integer divisor of 0 (``//``, ``%``) gives 0 and a negative shift count in
a GPU operand gives numpy's result (0, or -1 for ``>>`` of a negative value),
since checking would read the data back to the host. A host scalar divisor of 0
or negative shift count raises as on the CPU.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import functools
import math

import numpy as np

from .gpu_types import SUFFIXES

__all__ = [
    "BLOCK",
    "KERNELS",
    "KERNEL_TYPES",
    "MODULE",
    "GpuCast",
    "GpuCastLike",
    "GpuElementwise",
    "GpuCompare",
    "cast_flat",
    "gpu_elementwise",
    "output_in",
    "source_in",
]

MODULE = "elementwise"
# Threads per block of every launch here (grid_for picks the blocks).
BLOCK = 256
# numpy dtype -> the type suffix of the kernels in kernels/elementwise.cu.
KERNEL_TYPES = SUFFIXES
_BOOL = (np.dtype(np.bool_),)
_INTEGER = tuple(t for t in KERNEL_TYPES if t.kind in "iu")
_FLOAT = tuple(t for t in KERNEL_TYPES if t.kind == "f")
_NUMERIC = _INTEGER + _FLOAT
_FLOAT_FUNCTIONS = (
    "sqrt rsqrt cbrt exp log log2 log10 sin cos tan asin acos atan sinh cosh tanh "
    "asinh acosh atanh floor ceil fabs"
).split()
# Kernel name in kernels/elementwise.cu -> the compute types it has kernels for.
KERNELS = {
    **dict.fromkeys(["add", "sub", "minimum", "maximum", "floordiv", "mod", "pow"], _NUMERIC),
    "mul": _BOOL + _NUMERIC,
    "truediv": _FLOAT,
    "atan2": _FLOAT,
    **dict.fromkeys(["bitand", "bitor", "bitxor", "lshift", "rshift", "bitnot"], _BOOL + _INTEGER),
    **dict.fromkeys(["eq", "neq", "lt", "leq", "gt", "geq"], _BOOL + _NUMERIC),
    **dict.fromkeys(["minus", "abs", "clamp"], _NUMERIC),
    **dict.fromkeys(_FLOAT_FUNCTIONS, _FLOAT),
}


def _broadcast_to(array, shape, stream, device_id):
    from .gpu_layout import broadcast_to

    return broadcast_to(array, shape, stream, device_id)


@functools.cache
def _cuda():
    """The GPU runtime modules (imported on first GPU use, never by ``import ndd``)."""
    from .._cuda import device_array, launch, modules

    return device_array, launch, modules


def _supported_names(types=KERNEL_TYPES) -> str:
    return ", ".join(str(t) for t in types)


def _launch(device_id, name, n, stream, *args):
    """Queue kernel ``name`` over ``n`` elements on ``stream`` (nothing for n == 0)."""
    if n == 0:
        return
    _, launch, modules = _cuda()
    kernel = modules.get_function(device_id, MODULE, name)
    kernel.launch(launch.grid_for(n, BLOCK), BLOCK, stream.handle, *args, n)


def cast_flat(src_ptr, src_dtype, out_ptr, out_dtype, n, stream, device_id):
    """Queue the conversion of ``n`` contiguous elements (the reference's ``cast`` rules)."""
    name = f"cast_{KERNEL_TYPES[src_dtype]}_to_{KERNEL_TYPES[out_dtype]}"
    _launch(device_id, name, n, stream, src_ptr, out_ptr)


def source_in(source, work, keep, stream, device_id):
    """The pointer to the samples of ``source`` (a GpuSamples) as ``work`` values: its own,
    or a temporary kept in ``keep`` that the cast kernels convert them into (each sample
    at its element offset)."""
    if source.dtype == work:
        return source.ptr
    n = max((o + math.prod(s) for o, s in zip(source.offsets, source.shapes, strict=True)), default=0)
    converted = _cuda()[0].DeviceArray.empty((max(n, 1),), work, device_id, stream)
    cast_flat(source.ptr, source.dtype, converted.ptr, work, n, stream, device_id)
    keep.append(converted)
    return converted.ptr


def output_in(work, out, keep, stream, device_id):
    """Where a kernel writing ``work`` values puts the samples of ``out`` (a
    SampleOutputs): the output itself, or, when it is of another type, a temporary kept
    in ``keep`` (each sample at its element offset in the output, so that one flat cast
    converts all)."""
    if out.dtype == work:
        return out.base.ptr
    between = _cuda()[0].DeviceArray.empty((max(out.elements, 1),), work, device_id, stream)
    keep.append(between)
    return between.ptr


class _Flat:
    """A GPU operand as a flat array of the compute type: ``array`` (1-D, starting at
    the operand's first element) and, for a batch, each sample's element offset."""

    __slots__ = ("array", "offsets", "shapes")

    def __init__(self, array, offsets, shapes):
        self.array = array
        self.offsets = offsets
        self.shapes = shapes


def _extent(offsets, shapes):
    """Elements from the first one to the end of the last sample."""
    return max((o + int(np.prod(s, dtype=np.int64)) for o, s in zip(offsets, shapes, strict=True)), default=0)


def _as_flat(data, compute, stream, device_id):
    """``data`` (a DeviceArray or DeviceBatch) as a ``_Flat`` of dtype ``compute``;
    converted on the GPU into a temporary when its type differs, as numpy's
    ``astype`` converts (what the CPU kernels do to their operands)."""
    device_array = _cuda()[0]
    if isinstance(data, device_array.DeviceBatch):
        itemsize = data.dtype.itemsize
        offsets = [o // itemsize for o in data.offsets]
        shapes = list(data.shapes)
        n = _extent(offsets, shapes)
        array = data.data.view(0, (n,), data.dtype)
    else:
        offsets, shapes = None, None
        n = data.size
        array = data.reshape((n,))
    if array.dtype != compute:
        if array.dtype.kind in "iu" and compute.kind in "iu" and array.dtype.itemsize == compute.itemsize:
            # uint64 promoted to int64: astype wraps, which is the same bits (cast saturates).
            array = array.view(0, (n,), compute)
        else:
            converted = device_array.DeviceArray.empty((n,), compute, device_id, stream)
            cast_flat(array.ptr, array.dtype, converted.ptr, compute, n, stream, device_id)
            array = converted
    return _Flat(array, offsets, shapes)


def _is_scalar(operand):
    return not hasattr(operand, "ptr")


class GpuElementwise:
    """The GPU kernel of an elementwise operator of one, two or three operands, from
    ``kernels/elementwise.cu``, computing in and returning the result's type:

    * unary: ``<kernel>_<type>(in, out, n)``;
    * binary: ``<kernel>_<type>`` (two arrays), ``<kernel>_scalar_rhs_<type>`` and
      ``<kernel>_scalar_lhs_<type>`` (one operand a host scalar, by value);
    * ternary (clamp): ``<kernel>_<type>`` (three arrays) and
      ``<kernel>_scalar_bounds_<type>`` (the last two scalars); other scalar
      operands are first filled into arrays on the GPU (``fill_scalar_<type>``).

    ``types`` are the compute types it has kernels for; ``check_scalar(compute,
    index, value)`` refuses host scalar operands as the CPU kernel would."""

    def __init__(self, op, kernel, types, check_scalar=None):
        self.op = op
        self.kernel = kernel
        self.types = types
        self.check_scalar = check_scalar

    def _unsupported(self, what):
        return NotImplementedError(f"{self.op.qualname} on the GPU: {what}; the GPU implementation lacks it")

    def _types(self, operand_dtypes, args):
        """``(compute dtype, output dtype)``: both the result's type here."""
        compute = args["types"][1]
        return (None, None) if compute is None else (np.dtype(compute), np.dtype(compute))

    def _no_compute_kernel(self, operand_dtypes, args):
        return f"no kernel for the result type {args['types'][0]} (GPU types: {_supported_names(self.types)})"

    def check(self, ins, args):
        """Prepare phase: reject type combinations without a kernel (metadata only)."""
        operand_dtypes = [np.dtype(x._dtype.numpy) for x in ins]
        compute, _ = self._types(operand_dtypes, args)
        if compute not in self.types:
            raise self._unsupported(self._no_compute_kernel(operand_dtypes, args))
        for x, dtype in zip(ins, operand_dtypes, strict=True):
            if x._device.device_type == "gpu" and dtype not in KERNEL_TYPES:
                raise self._unsupported(
                    f"no kernel for operands of type {x._dtype} (GPU types: {_supported_names()})"
                )

    def __call__(self, inputs, args, batch_size, ctx):
        # A host batch (a list) has no dtype: _scalar refuses it below.
        compute, out = self._types([x.dtype for x in inputs if hasattr(x, "dtype")], args)
        stream = ctx.cuda_stream
        device_id = ctx.device_id
        if batch_size < 0:
            return [self._sample(inputs, compute, out, stream, device_id)]
        return [self._batch(inputs, compute, out, stream, device_id)]

    def _scalar(self, x, index, compute):
        """The value of host operand ``x`` in the compute type (as the CPU converts
        it), as the kernel parameter: float16 as its bits."""
        if not isinstance(x, np.ndarray) or x.size != 1:
            shape = tuple(x.shape) if isinstance(x, np.ndarray) else "a batch"
            raise self._unsupported(
                f"a host operand ({shape}) can only be a scalar; move it to the GPU with .gpu()"
            )
        value = x.reshape(()).astype(compute)
        if self.check_scalar is not None:
            self.check_scalar(compute, index, value.item())
        if compute == np.float16:
            return value.view(np.uint16).item()
        return value.item()

    def _sample(self, inputs, compute, out_dtype, stream, device_id):
        device_array = _cuda()[0]
        shape = np.broadcast_shapes(*[x.shape for x in inputs])
        out = device_array.DeviceArray.empty(shape, out_dtype, device_id, stream)
        self._queue(
            self._flat_operands(inputs, shape, compute, stream, device_id),
            out.ptr,
            out.size,
            stream,
            device_id,
            compute,
        )
        return out

    def _flat_operands(self, inputs, shape, compute, stream, device_id):
        """The operands of one sample of result ``shape`` as kernel arguments: GPU
        arrays flat in the compute type (broadcast first when they are smaller, by a
        strided copy), host scalars by value."""
        device_array = _cuda()[0]
        n = int(np.prod(shape, dtype=np.int64))
        operands = []
        for index, x in enumerate(inputs):
            if isinstance(x, device_array.DeviceArray):
                if x.size != n:
                    x = _broadcast_to(x, tuple(shape), stream, device_id)
                operands.append(_as_flat(x, compute, stream, device_id).array)
            else:
                operands.append(self._scalar(x, index, compute))
        return operands

    def _batch(self, inputs, compute, out_dtype, stream, device_id):
        device_array = _cuda()[0]
        batches = [x for x in inputs if isinstance(x, device_array.DeviceBatch)]
        if not batches:
            raise self._unsupported("a Batch in host memory; move it to the GPU with .gpu()")
        if any(isinstance(x, device_array.DeviceArray) for x in inputs) or any(
            b.shapes != batches[0].shapes for b in batches[1:]
        ):
            return self._batch_by_sample(inputs, compute, out_dtype, stream, device_id)
        flats = []
        for index, x in enumerate(inputs):
            if isinstance(x, device_array.DeviceBatch):
                flats.append(_as_flat(x, compute, stream, device_id))
            else:
                flats.append(self._scalar(x, index, compute))
        batches = [f for f in flats if isinstance(f, _Flat)]
        first = batches[0]
        host_shapes = [x.shape for x in inputs if isinstance(x, np.ndarray)]
        shapes = [tuple(np.broadcast_shapes(s, *host_shapes)) for s in first.shapes]
        sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        operands = [f.array if isinstance(f, _Flat) else f for f in flats]
        if all(b.offsets == first.offsets for b in batches):
            # One launch over every sample: gaps between samples are computed too (harmlessly).
            offsets = first.offsets
            n = _extent(offsets, shapes)
            data = device_array.DeviceArray.empty((n * out_dtype.itemsize,), np.uint8, device_id, stream)
            self._queue(operands, data.ptr, n, stream, device_id, compute)
        else:
            # One launch per sample, into the usual ragged layout.
            byte_offsets, total = device_array.DeviceBatch.layout(shapes, out_dtype.itemsize, False)
            offsets = [o // out_dtype.itemsize for o in byte_offsets]
            data = device_array.DeviceArray.empty((total,), np.uint8, device_id, stream)
            for i, size in enumerate(sizes):
                sample = [
                    op.view(b.offsets[i] * compute.itemsize, (size,)) if isinstance(b, _Flat) else op
                    for op, b in zip(operands, flats, strict=True)
                ]
                out_ptr = data.ptr + offsets[i] * out_dtype.itemsize
                self._queue(sample, out_ptr, size, stream, device_id, compute)
        dense = len(set(shapes)) <= 1 and offsets == [
            k * (sizes[0] if sizes else 0) for k in range(len(shapes))
        ]
        out_offsets = [o * out_dtype.itemsize for o in offsets]
        return device_array.DeviceBatch(data, out_offsets, shapes, out_dtype, dense)

    def _batch_by_sample(self, inputs, compute, out_dtype, stream, device_id):
        """A batch whose operands broadcast differently in each sample (a GPU Tensor
        against a Batch, batches of other sample shapes): one launch per sample, with
        the smaller operands of each sample broadcast first."""
        device_array = _cuda()[0]
        count = len(next(x for x in inputs if isinstance(x, device_array.DeviceBatch)).shapes)
        samples = []
        for i in range(count):
            samples.append(
                [
                    x.data.view(x.offsets[i], x.shapes[i], x.dtype)
                    if isinstance(x, device_array.DeviceBatch)
                    else x
                    for x in inputs
                ]
            )
        shapes = [tuple(np.broadcast_shapes(*[x.shape for x in sample])) for sample in samples]
        byte_offsets, total = device_array.DeviceBatch.layout(shapes, out_dtype.itemsize, False)
        data = device_array.DeviceArray.empty((total,), np.uint8, device_id, stream)
        for sample, shape, offset in zip(samples, shapes, byte_offsets, strict=True):
            operands = self._flat_operands(sample, shape, compute, stream, device_id)
            size = int(np.prod(shape, dtype=np.int64))
            self._queue(operands, data.ptr + offset, size, stream, device_id, compute)
        dense = len(set(shapes)) <= 1 and byte_offsets == [
            k * int(np.prod(shapes[0], dtype=np.int64)) * out_dtype.itemsize for k in range(len(shapes))
        ]
        return device_array.DeviceBatch(data, list(byte_offsets), shapes, out_dtype, dense)

    def _queue(self, operands, out_ptr, n, stream, device_id, compute):
        type_name = KERNEL_TYPES[compute]
        scalar = [_is_scalar(x) for x in operands]
        if len(operands) == 2 and any(scalar):
            a, b = operands
            if scalar[1]:
                _launch(device_id, f"{self.kernel}_scalar_rhs_{type_name}", n, stream, a.ptr, b, out_ptr)
            else:
                _launch(device_id, f"{self.kernel}_scalar_lhs_{type_name}", n, stream, a, b.ptr, out_ptr)
            return
        if scalar == [False, True, True]:
            x, lo, hi = operands
            _launch(device_id, f"{self.kernel}_scalar_bounds_{type_name}", n, stream, x.ptr, lo, hi, out_ptr)
            return
        if any(scalar):
            operands = [
                self._filled(x, n, stream, device_id, compute) if s else x
                for x, s in zip(operands, scalar, strict=True)
            ]
        _launch(device_id, f"{self.kernel}_{type_name}", n, stream, *[x.ptr for x in operands], out_ptr)

    @staticmethod
    def _filled(value, n, stream, device_id, compute):
        """Scalar ``value`` (a kernel parameter) repeated into a GPU array of ``n``."""
        out = _cuda()[0].DeviceArray.empty((n,), compute, device_id, stream)
        _launch(device_id, f"fill_scalar_{KERNEL_TYPES[compute]}", n, stream, value, out.ptr)
        return out


class GpuCompare(GpuElementwise):
    """The GPU kernel of a comparison: the operands are compared in the type numpy
    compares them in (``np.result_type`` of the operand types, as the CPU kernel
    calls the numpy ufunc on the original operands), the output is bool."""

    def _types(self, operand_dtypes, args):
        return np.result_type(*operand_dtypes), np.dtype(np.bool_)

    def _no_compute_kernel(self, operand_dtypes, args):
        names = ", ".join(str(d) for d in operand_dtypes)
        return (
            f"no kernel comparing {names} (they compare in {np.result_type(*operand_dtypes)}; "
            f"GPU types: {_supported_names(self.types)})"
        )


def _nonzero_integer_divisor(message):
    def check(compute, index, value):
        if index == 1 and compute.kind in "iu" and value == 0:
            raise ZeroDivisionError(message)

    return check


def _nonnegative_shift_count(compute, index, value):
    if index == 1 and compute.kind == "i" and value < 0:
        raise ValueError("negative shift count")


# Kernel name -> the check of its host scalar operands: what the CPU kernel raises for
# (on GPU operands the kernels give numpy's values instead, see the module docstring).
_SCALAR_CHECKS = {
    "floordiv": _nonzero_integer_divisor("Integer division by zero"),
    "mod": _nonzero_integer_divisor("Integer modulo by zero"),
    "lshift": _nonnegative_shift_count,
    "rshift": _nonnegative_shift_count,
}


def gpu_elementwise(op, kernel):
    """The GPU kernel of ``ElementwiseOp`` ``op``: ``kernel``'s kernels in
    ``kernels/elementwise.cu``, of the types ``KERNELS`` lists (comparisons give bool)."""
    cls = GpuCompare if op.result == "bool" else GpuElementwise
    return cls(op, kernel, KERNELS[kernel], _SCALAR_CHECKS.get(kernel))


class GpuCast:
    """The GPU kernel of ``ndd.cast``: ``cast_<src>_to_<dst>`` over the whole input
    allocation (a batch keeps its per-sample element offsets)."""

    def __init__(self, op):
        self.op = op

    def _unsupported(self, what):
        return NotImplementedError(f"{self.op.qualname} on the GPU: {what}; the GPU implementation lacks it")

    def _target(self, ins, args):
        """The DType converted to (prepare phase)."""
        return args["dtype"]

    def _target_dtype(self, inputs, args):
        """The numpy type converted to (run phase)."""
        return np.dtype(args["dtype"].numpy)

    def check(self, ins, args):
        """Prepare phase: reject conversions without a kernel (metadata only)."""
        x = ins[0]
        for dtype in (x._dtype, self._target(ins, args)):
            if dtype.numpy is None or np.dtype(dtype.numpy) not in KERNEL_TYPES:
                raise self._unsupported(f"no kernel for {dtype} (GPU types: {_supported_names()})")
        if x._device.device_type != "gpu":
            raise self._unsupported("an input in host memory; move it to the GPU with .gpu() first")

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = _cuda()[0]
        x = inputs[0]
        target = self._target_dtype(inputs, args)
        stream = ctx.cuda_stream
        device_id = ctx.device_id
        if isinstance(x, device_array.DeviceBatch):
            itemsize = x.dtype.itemsize
            offsets = [o // itemsize for o in x.offsets]
            n = _extent(offsets, x.shapes)
            data = device_array.DeviceArray.empty((n * target.itemsize,), np.uint8, device_id, stream)
            cast_flat(x.data.ptr, x.dtype, data.ptr, target, n, stream, device_id)
            out_offsets = [o * target.itemsize for o in offsets]
            return [device_array.DeviceBatch(data, out_offsets, list(x.shapes), target, x.dense)]
        out = device_array.DeviceArray.empty(x.shape, target, device_id, stream)
        cast_flat(x.ptr, x.dtype, out.ptr, target, x.size, stream, device_id)
        return [out]


class GpuCastLike(GpuCast):
    """The GPU kernel of ``ndd.cast_like``: ``cast``'s kernels, to the type of the
    second input (which may be on either device: only its type is read)."""

    def _target(self, ins, args):
        return ins[1]._dtype

    def _target_dtype(self, inputs, args):
        like = inputs[1]
        if isinstance(like, list):  # a host batch: its samples share one type
            # An empty one pairs with an empty input: nothing is converted, and the
            # Batch reports the type its metadata gives.
            return np.dtype(like[0].dtype) if like else inputs[0].dtype
        return np.dtype(like.dtype)
