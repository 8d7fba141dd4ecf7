# cython: language_level=3, boundscheck=False, wraparound=False
"""The operator call path (steps 1-5 of DESIGN.md): inputs, batch size, device,
arguments, output metadata, then an Invocation handed to the scheduler."""

from .storage cimport TensorBase, BatchBase, batch_ready, batch_samples, would_be_sample_shapes
from .invocation cimport (
    Invocation, PerSample, PendingArg, infer_each, per_sample_args, sample_shapes, schedule
)
from .args cimport Arg, draw_random_key
from .args import REQUIRED, InvalidArgumentError

from .._errors import raise_as_runtime_error
from .._memory import physical_memory_bytes
from .._eval.device import Device, device as to_device
from .._cuda import driver

cdef object _CPU = Device.CPU
cdef object _Tensor = None
cdef object _Batch = None
cdef object _as_tensor = None
cdef object _get_default_rng = None


def bind(tensor_cls, batch_cls, as_tensor):
    """Tell the call path which classes to build results from (set at import)."""
    global _Tensor, _Batch, _as_tensor
    _Tensor = tensor_cls
    _Batch = batch_cls
    _as_tensor = as_tensor


cdef Py_ssize_t _merge_batch_size(op, Py_ssize_t current, Py_ssize_t new, object what) except -2:
    """The batch size of the call so far (``current``; -1 for none yet) and of ``new``
    samples agree. ``what`` gives ``new``, named in the error only (this runs for every
    Batch of every call): the index of a positional input, an argument's ``Arg``, or a str."""
    if current >= 0 and new != current:
        if isinstance(what, Arg):
            what = f"argument '{(<Arg>what).name}'"
        elif not isinstance(what, str):
            names = op.input_names
            what = f"input '{names[min(<Py_ssize_t>what, len(names) - 1)]}'"
        raise ValueError(
            f"{op.qualname}: Inconsistent batch size: {new} != {current} ({what} gives {new}, "
            f"the inputs and arguments before it {current})"
        )
    return new


cdef object _resolve_device(op, object requested, list ins):
    if requested is not None:
        if isinstance(requested, str) and requested == "mixed":
            raise ValueError(f"{op.qualname}: Invalid device type: mixed (use device='gpu')")
        try:
            dev = to_device(requested)
        except driver.GpuUnavailableError as exc:
            # The same error, naming the operator rather than Device('gpu').
            driver.require_gpu(f"{op.qualname} with device={requested!r}", getattr(exc, "device_id", None))
            raise
        except (TypeError, ValueError) as exc:
            raise InvalidArgumentError(f"{op.qualname}: 'device': {exc}") from exc
        if dev.device_type == "gpu":
            return gpu_device(op, dev)
        return dev
    return gpu_device(op, None, ins)


cpdef object gpu_device(op, object requested, list ins=None):
    """The GPU an operator call runs on: ``requested``, else the one device of the
    GPU inputs ``ins`` (another GPU among them is an error), else the current one.
    Raises without a GPU, and NotImplementedError when ``op`` has no GPU kernel."""
    driver.require_gpu(f"{op.qualname} with device='gpu'")
    dev = requested
    if ins is not None:
        for x in ins:
            if x is None:
                continue
            d = (<TensorBase>x)._device if isinstance(x, TensorBase) else (<BatchBase>x)._device
            if d is _CPU or d.device_type != "gpu":
                continue
            if dev is None:
                dev = d
            elif d != dev:
                raise ValueError(f"{op.qualname}: the inputs are on different GPUs ({dev} and {d})")
    # An operator that runs its invocations itself (``execute``) runs them on either device.
    if op.gpu_kernel is None and op.execute is None:
        raise NotImplementedError(
            f"{op.qualname} has no GPU implementation in this build of ndd: call it on the CPU "
            "(device='cpu', with inputs in host memory: .cpu()) and move its result with .gpu()"
        )
    return dev if dev is not None else Device("gpu")


cdef object _default_rng():
    """The calling thread's default RNG (``ndd.random`` is imported after this module)."""
    global _get_default_rng
    if _get_default_rng is None:
        from ..random import get_default_rng
        _get_default_rng = get_default_rng
    return _get_default_rng()


cdef object _REQUIRED = REQUIRED


cdef _check_absent_input(op, Py_ssize_t index):
    """Input ``index`` was given as None: refuse it unless the schema makes it optional."""
    named = [i for i in op.inputs if not i.variadic]
    spec = named[index] if index < len(named) else next(i for i in op.inputs if i.variadic)
    if spec.variadic or not spec.optional:
        raise TypeError(f"{op.qualname}: input '{spec.name}' is required, got None")


cdef object _convert_input(op, Py_ssize_t index, object value):
    try:
        return _as_tensor(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{op.qualname}: input '{op.input_names[index]}' must be tensor-like, got "
            f"{type(value).__name__} ({exc})"
        ) from None


cdef object _convert_arg(op, Arg spec, object value, Py_ssize_t* batch_size):
    """Convert one argument; Batch values become PerSample (or PendingArg). An
    argument on a GPU is read on the host, as the reference reads argument inputs."""
    cdef TensorBase t
    cdef BatchBase b
    if isinstance(value, TensorBase) and (<TensorBase>value)._device.device_type == "gpu":
        value = value.cpu()
    elif isinstance(value, BatchBase) and (<BatchBase>value)._device.device_type == "gpu":
        value = value.cpu()
    if isinstance(value, (TensorBase, BatchBase)):
        _refuse_frames(op, spec, value)
    if isinstance(value, TensorBase):
        t = <TensorBase>value
        if t._data is None:
            return PendingArg(spec, t)
        return spec.convert(op, t._data)
    if isinstance(value, BatchBase):
        b = <BatchBase>value
        if not spec.per_sample:
            raise InvalidArgumentError(
                f"{op.qualname}: '{spec.name}' must be the same for all samples; a Batch is not accepted"
            )
        batch_size[0] = _merge_batch_size(op, batch_size[0], b._batch_size, spec)
        if not batch_ready(b):
            return PendingArg(spec, b)
        return PerSample([spec.convert(op, s) for s in batch_samples(b)])
    return spec.convert(op, value)


cdef void _refuse_frames(op, Arg spec, object value) except *:
    """A value marked with ndd.per_frame (a layout starting with 'F') for an argument
    that takes none: refused at the call, saying so (its values would otherwise fail
    later as 'not a number')."""
    layout = (<TensorBase>value)._layout if isinstance(value, TensorBase) else (<BatchBase>value)._layout
    if layout and layout[0] == "F" and spec.name not in op.per_frame_args:
        raise InvalidArgumentError(
            f"{op.qualname}: '{spec.name}' cannot be given per frame (ndd.per_frame); "
            "it takes one value per sample"
        )


# Half of the memory this process may use, in bytes (0: unknown; -1: not read yet).
cdef double _half_memory = -1


cdef double _elements(object shape) except -1:
    """The number of elements of ``shape`` (a double: products of mistyped sizes
    overflow 64 bits)."""
    cdef double n = 1
    for d in shape:
        n *= <double>d
    return n


cdef double _input_bytes(tuple inputs):
    """The bytes the inputs hold, as far as their shapes are known."""
    cdef double total = 0
    cdef TensorBase t
    cdef BatchBase b
    for x in inputs:
        if isinstance(x, TensorBase):
            t = <TensorBase>x
            if t._shape is not None:
                total += _elements(t._shape) * t._dtype.bytes
        elif isinstance(x, BatchBase):
            b = <BatchBase>x
            if b._shapes is not None:
                for shape in b._shapes:
                    total += _elements(shape) * b._dtype.bytes
    return total


cdef void _check_output_size(Invocation inv, Py_ssize_t k, object dtype, object shapes, Py_ssize_t bs,
                             bint uniform) except *:
    """Refuse output ``k`` when its samples (``shapes``: the output shapes of the
    Tensor, or of each sample) would fill more than half of the memory, and more
    than the inputs hold: a mistyped size argument would have the process killed.
    (An output no larger than its inputs, a view or a copy of data already held,
    is not what a size argument asked for.)"""
    global _half_memory
    if _half_memory < 0:
        memory = physical_memory_bytes()
        _half_memory = 0 if memory is None else memory // 2
    if _half_memory == 0:
        return
    cdef double total = 0
    if bs < 0:
        shape = shapes[k]
        if shape is None:
            return
        total = _elements(shape)
    elif uniform:
        shape = shapes[0][k]
        total = _elements(shape) * bs
    else:
        for sample in shapes:
            total += _elements(sample[k])
    total *= dtype.bytes
    if total <= _half_memory or total <= _input_bytes(inv.inputs):
        return
    if bs < 0 or uniform:
        what = f"{tuple(shape)} {dtype}" if bs < 0 else f"{bs} samples of {tuple(shape)} {dtype}"
    else:
        largest = max([sample[k] for sample in shapes], key=_elements)
        what = f"{bs} samples of {dtype}, the largest {tuple(largest)}"
    output = f"output {k}" if len(shapes[0] if bs >= 0 else shapes) > 1 else "the output"
    raise InvalidArgumentError(
        f"{inv.op.qualname}: {output} would be {what}: {_size_text(total)}, more than half of this "
        f"machine's memory ({_size_text(_half_memory)}); check the arguments that size it"
    )


cdef str _size_text(double nbytes):
    if nbytes < 2.0**40:
        return f"{nbytes / 2**30:.1f} GiB"
    return f"{nbytes / 2**40:.3g} TiB"


cpdef object make_results(Invocation inv, list types, object shapes, object dev, bint uniform=False):
    """Tensor or Batch objects (a tuple when several) for the outputs of ``inv``;
    ``uniform``: every sample of a batch output has the same shape. An output too
    large for the memory is refused (InvalidArgumentError)."""
    cdef TensorBase t
    cdef BatchBase b
    cdef list results = []
    cdef int k
    for k in range(len(types)):
        dtype, layout = types[k]
        if shapes is not None and inv.batch_size != 0:
            _check_output_size(inv, k, dtype, shapes, inv.batch_size, uniform)
        if inv.batch_size < 0:
            t = _Tensor.__new__(_Tensor)
            t._inv = inv
            t._out = k
            t._dtype = dtype
            t._layout = layout
            t._device = dev
            if shapes is not None:
                t._shape = shapes[k]
            results.append(t)
        else:
            b = _Batch.__new__(_Batch)
            b._inv = inv
            b._out = k
            b._dtype = dtype
            b._layout = layout
            b._device = dev
            b._batch_size = inv.batch_size
            if shapes is not None:
                b._shapes = [s[k] for s in shapes]
                b._uniform = uniform
            results.append(b)
    if len(results) == 1:
        return results[0]
    return tuple(results)


cpdef object invoke(op, tuple inputs, object batch_size, object device, dict kwargs):
    """Prepare one call of ``op`` and schedule its run; return its result(s).

    ``inputs`` are the positional inputs in schema order (None for an absent
    optional one); ``kwargs`` maps every schema argument name to its value. An
    error of the call is also a RuntimeError, as in the reference (ndd/_errors.py).
    """
    try:
        return _invoke(op, inputs, batch_size, device, kwargs)
    except Exception as exc:
        raise_as_runtime_error(exc)
        raise


cdef object _invoke(op, tuple inputs, object batch_size, object device, dict kwargs):
    cdef list ins = []
    cdef Py_ssize_t bs = -1
    cdef bint external = False
    cdef bint any_gpu = False
    cdef bint shapes_known = True
    cdef Py_ssize_t k = 0
    cdef TensorBase t
    cdef BatchBase b
    for x in inputs:
        if x is None:
            _check_absent_input(op, k)
            ins.append(None)
            k += 1
            continue
        if isinstance(x, TensorBase):
            t = <TensorBase>x
        elif isinstance(x, BatchBase):
            b = <BatchBase>x
            bs = _merge_batch_size(op, bs, b._batch_size, k)
            external |= b._external
            any_gpu |= b._device is not _CPU and b._device.device_type == "gpu"
            shapes_known &= b._shapes is not None
            ins.append(b)
            k += 1
            continue
        else:
            t = _convert_input(op, k, x)
        external |= t._external
        any_gpu |= t._device is not _CPU and t._device.device_type == "gpu"
        shapes_known &= t._shape is not None
        ins.append(t)
        k += 1

    cdef dict args = {}
    cdef list random_sources = []
    cdef Arg spec
    for spec in op.arg_specs:
        value = kwargs[spec.name]
        if spec.draws_random:
            # Drawn once the call is known to be valid (below).
            random_sources.append((spec.name, _default_rng() if value is None else value))
            continue
        if value is None or value is spec.default:
            # None means "the default", as in the reference's signatures.
            if value is None and spec.default is _REQUIRED:
                raise TypeError(f"{op.qualname}: missing required argument '{spec.name}' (got None)")
            args[spec.name] = spec.converted_default
            continue
        converted = _convert_arg(op, spec, value, &bs)
        if type(converted) is PendingArg:
            shapes_known = False
        args[spec.name] = converted

    if batch_size is not None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 0:
            raise InvalidArgumentError(
                f"{op.qualname}: 'batch_size' must be a non-negative int, got {batch_size!r}"
            )
        bs = _merge_batch_size(op, bs, batch_size, "'batch_size'")
    if bs < 0 and op.needs_batch:
        raise ValueError(f"{op.qualname} needs a batch: pass batch_size or a Batch input")

    dev = _CPU if device is None and not any_gpu else _resolve_device(op, device, ins)
    prepare_args = op.prepare_args
    if prepare_args is not None:
        prepare_args(ins, args)
    types = op.infer_types(ins, args)

    shapes = None
    cdef bint uniform = False
    infer_shape = op.infer_shape
    if shapes_known and infer_shape is not None:
        if bs < 0:
            shapes = infer_shape(tuple([None if x is None else (<TensorBase>x)._shape for x in ins]), args)
        elif bs > 0 and _all_uniform(ins, args):
            # Same input shapes and arguments for every sample: infer once.
            inferred = infer_shape(sample_shapes(ins, 0), args)
            if inferred is not None:
                shapes = [inferred] * bs
                uniform = True
        else:
            sample_args = per_sample_args(args, bs)
            shapes = infer_each(infer_shape, ins, sample_args, bs)
            if None in shapes:
                shapes = None
    if dev is not _CPU and dev.device_type == "gpu":
        # After the checks the CPU makes too: a wrong argument is named as on the CPU,
        # whatever the GPU kernel lacks.
        check = getattr(op.gpu_kernel, "check", None)
        if check is not None:
            check(ins, args)

    # Every call draws from its RNG now, the default one included: the run phase then
    # gives the same result in every EvalMode and on any thread. A call that failed
    # above draws nothing.
    for name, rng in random_sources:
        args[name] = draw_random_key(op, name, rng)

    cdef Invocation inv = Invocation()
    inv.op = op
    inv.inputs = tuple(ins)
    inv.args = args
    inv.batch_size = bs
    inv.num_outputs = len(types)
    inv.device = dev
    inv.check_shapes = not shapes_known and infer_shape is not None
    results = make_results(inv, types, shapes, dev, uniform)
    if bs == 0 and infer_shape is not None:
        _empty_sample_dims(infer_shape, ins, args, results)
    schedule(inv, external)
    return results


cdef void _empty_sample_dims(infer_shape, list ins, dict args, results) except *:
    """Give the outputs of a call on a Batch of no samples the shape their samples would
    have (so their number of dimensions, as the reference reports it): the shape rule's
    answer for the inputs' would-be samples (nothing, where the rule refuses them)."""
    cdef BatchBase b
    proxies = would_be_sample_shapes(ins)
    if proxies is None:
        return
    try:
        shapes = infer_shape(tuple(proxies), args)
    except Exception:  # noqa: BLE001 - a rule that needs real samples: the shape stays unknown
        return
    if shapes is None:
        return
    outputs = results if type(results) is tuple else (results,)
    for b, shape in zip(outputs, shapes):
        b._empty_shape = tuple(shape)


cdef bint _all_uniform(list ins, dict args):
    """Whether every Batch input has one shape for all samples and no argument
    varies per sample."""
    for x in ins:
        if isinstance(x, BatchBase) and not (<BatchBase>x)._uniform:
            return False
    for v in args.values():
        if type(v) is PerSample or type(v) is PendingArg:
            return False
    return True
