# cython: language_level=3, boundscheck=False, wraparound=False
"""Invocations: one operator call with converted inputs and arguments, its run
phase, and the policy (from EvalMode) that decides when the run happens."""

import os
import sys
import threading

from .storage cimport TensorBase, BatchBase, tensor_data, batch_samples, batch_dense, batch_wait

from .._cpu import host_pool
from .._errors import as_runtime_error
from .._eval.mode import EvalMode
from .._eval.context import EvalContext
from .._eval.device import Device

cdef object _CPU_DEVICE = Device.CPU
cdef object _DEFERRED = EvalMode.deferred
cdef object _SYNC_CPU = EvalMode.sync_cpu
cdef object _SYNC_FULL = EvalMode.sync_full
cdef long long _next_seq = 0
cdef str _PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# Below this many bytes of input per batch, spreading samples over threads costs
# more than it saves.
cdef Py_ssize_t PARALLEL_MIN_BYTES = 1 << 18


cdef class PerSample:
    """An argument value that differs per sample (given as a Batch)."""

    def __init__(self, list values):
        self.values = values


cdef class PendingArg:
    """An argument given as a Tensor/Batch whose data is not computed yet; it is
    converted by its ``spec`` in the run phase."""

    def __init__(self, spec, source):
        self.spec = spec
        self.source = source


cdef object _resolve_arg(object op, object value):
    cdef PendingArg pending
    if type(value) is not PendingArg:
        return value
    pending = <PendingArg>value
    src = pending.source
    if isinstance(src, TensorBase):
        return pending.spec.convert(op, tensor_data(<TensorBase>src))
    return PerSample([pending.spec.convert(op, s) for s in batch_samples(<BatchBase>src)])


cpdef list per_sample_args(dict args, Py_ssize_t batch_size):
    """One argument dict per sample (the same dict when nothing varies)."""
    cdef list varying = [name for name, v in args.items() if type(v) is PerSample]
    if not varying:
        return [args] * batch_size
    cdef list result = []
    cdef Py_ssize_t i
    for i in range(batch_size):
        a = dict(args)
        for name in varying:
            a[name] = (<PerSample>args[name]).values[i]
        result.append(a)
    return result


cdef object _run_dense(dense_kernel, tuple inputs, dict args, bint mixed_ok):
    """Run a whole-batch kernel when every input is a Batch stored densely (or,
    for kernels that broadcast Tensors themselves, ``mixed_ok``, any mix) and no
    argument varies per sample; None when that is not possible or the kernel
    declines, so that the caller falls back to the per-sample kernel."""
    if not isinstance(inputs[0], BatchBase) and not mixed_ok:
        return None
    for v in args.values():
        if type(v) is PerSample:
            return None
    cdef list arrays = []
    for x in inputs:
        if x is None:
            arrays.append(None)
        elif isinstance(x, TensorBase):
            if not mixed_ok:
                return None  # a Tensor broadcast to every sample: run per sample
            arrays.append(tensor_data(<TensorBase>x))
        else:
            dense = batch_dense(<BatchBase>x)
            if dense is None:
                return None
            arrays.append(dense)
    return dense_kernel(tuple(arrays), args)


cdef object _make_current = None


cpdef object gpu_context(object ctx, int device_id):
    """The EvalContext whose stream GPU work of ``device_id`` goes on: ``ctx``
    when it is on that device, else the calling thread's default one there."""
    if ctx.device_id == device_id:
        return ctx
    with Device("gpu", device_id):
        return EvalContext.default()


cdef list _execute_gpu(Invocation inv):
    """The run phase on a GPU (the contract is in ``ndd/_ops/schema.py``): the
    device made current on this thread, each GPU input ordered before the
    context's stream (which is noted as its use), then ``op.gpu_kernel``."""
    global _make_current
    if _make_current is None:
        from .._cuda.context import make_current
        _make_current = make_current
    op = inv.op
    cdef int device_id = inv.device.device_id
    ctx = gpu_context(inv.ctx, device_id)
    _make_current(device_id)
    stream = ctx.cuda_stream
    cdef dict args = {name: _resolve_arg(op, v) for name, v in inv.args.items()}
    cdef list data = []
    cdef BatchBase b
    for x in inv.inputs:
        if x is None:
            data.append(None)
        elif isinstance(x, TensorBase):
            d = tensor_data(<TensorBase>x)
            if (<TensorBase>x)._device.device_type == "gpu":
                d.order_before(stream)
            data.append(d)
        else:
            b = <BatchBase>x
            gpu = batch_wait(b)
            if gpu is not None:
                gpu.data.order_before(stream)
                data.append(gpu)
            else:
                data.append(batch_samples(b))
    if inv.check_shapes:
        _check_shapes(inv, args)
    return list(op.gpu_kernel(tuple(data), args, inv.batch_size, ctx))


cdef int _check_shapes(Invocation inv, dict args) except -1:
    """Run ``infer_shape`` for its checks (an input of the wrong number of channels, a
    window outside the image, ...) where the call could not: an input's shape or an
    argument was not known then (a decoder's output, say). The inputs' shapes are
    known once their data is; as at the call, once per distinct (argument dict, shapes)."""
    cdef list ins = list(inv.inputs)
    cdef Py_ssize_t bs = inv.batch_size
    if bs < 0:
        inv.op.infer_shape(sample_shapes(ins, 0), args)
    else:
        infer_each(inv.op.infer_shape, ins, per_sample_args(args, bs), bs)
    return 0


cdef list infer_each(infer_shape, list ins, list sample_args, Py_ssize_t bs):
    """Each sample's output shapes. Samples with the same input shapes and the same
    argument dict (nothing varies per sample: per_sample_args gives one dict) have
    the same output shapes, inferred once: a batch of images of a few sizes costs a
    few inferences, not one per sample."""
    cdef dict known = {}
    cdef list shapes = []
    cdef Py_ssize_t i
    for i in range(bs):
        in_shapes = sample_shapes(ins, i)
        key = (id(sample_args[i]), in_shapes)
        if key in known:
            shapes.append(known[key])
        else:
            try:
                inferred = known[key] = infer_shape(in_shapes, sample_args[i])
            except (ValueError, TypeError, IndexError) as exc:
                _name_the_sample(exc, i, bs)
                raise
            shapes.append(inferred)
    return shapes


cdef _name_the_sample(exc, Py_ssize_t i, Py_ssize_t bs):
    """Add which sample of a batch of several an error of the shape checks is about
    (the checks see one sample's shapes)."""
    if bs > 1 and exc.args and isinstance(exc.args[0], str) and "sample" not in exc.args[0]:
        exc.args = (f"{exc.args[0]} (in sample {i} of the batch)",) + exc.args[1:]


cdef tuple sample_shapes(list ins, Py_ssize_t i):
    """The shapes of sample ``i`` of the inputs ``ins`` (a Tensor's own in every sample)."""
    cdef list shapes = []
    for x in ins:
        if x is None:
            shapes.append(None)
        elif isinstance(x, TensorBase):
            shapes.append((<TensorBase>x)._shape)
        else:
            shapes.append((<BatchBase>x)._shapes[i])
    return tuple(shapes)


cdef list _execute(Invocation inv):
    """The generic run phase: the kernel of one sample, or in batch mode the
    operator's whole-batch kernel, its dense kernel (one call over densely
    stored samples) or its per-sample kernel mapped over the batch (when the
    others decline or are absent)."""
    op = inv.op
    dev = inv.device
    if dev is not _CPU_DEVICE and dev is not None and dev.device_type == "gpu":
        return _execute_gpu(inv)
    cdef dict args = {name: _resolve_arg(op, v) for name, v in inv.args.items()}
    cdef list data = []
    cdef Py_ssize_t nbytes = 0
    for x in inv.inputs:
        if x is None:
            data.append(None)
        elif isinstance(x, TensorBase):
            data.append(tensor_data(<TensorBase>x))
        else:
            samples = batch_samples(<BatchBase>x)
            data.append(samples)
    cdef Py_ssize_t bs = inv.batch_size
    cdef int nout = inv.num_outputs
    if inv.check_shapes:
        _check_shapes(inv, args)
    if bs < 0:
        result = op.kernel(tuple(data), args)
        return [result] if nout == 1 else list(result)
    if bs == 0:  # no samples: nothing for any kernel to do
        return [[] for _ in range(nout)]
    cdef list sample_args = None
    batch_kernel = op.batch_kernel
    if batch_kernel is not None:
        sample_args = per_sample_args(args, bs)
        result = batch_kernel(data, sample_args, bs, inv.ctx)
        if result is not None:
            return result
    dense_kernel = op.dense_kernel
    if dense_kernel is not None:
        result = _run_dense(dense_kernel, inv.inputs, args, op.dense_broadcasts_tensors)
        if result is not None:
            return [result] if nout == 1 else list(result)
    cdef list is_batch = [isinstance(x, BatchBase) for x in inv.inputs]
    if sample_args is None:
        sample_args = per_sample_args(args, bs)
    cdef list sample_inputs = []
    cdef Py_ssize_t i, k
    cdef Py_ssize_t nin = len(data)
    for i in range(bs):
        ins = []
        for k in range(nin):
            d = data[k]
            if is_batch[k]:
                d = d[i]
                nbytes += d.nbytes
            ins.append(d)
        sample_inputs.append(tuple(ins))
    kernel = op.kernel
    if nbytes >= PARALLEL_MIN_BYTES and bs > 1:
        results = inv.ctx.thread_pool.map(lambda i: kernel(sample_inputs[i], sample_args[i]), range(bs))
    else:
        results = [kernel(sample_inputs[i], sample_args[i]) for i in range(bs)]
    if nout == 1:
        return [results]
    return [[r[k] for r in results] for k in range(nout)]


cdef inline Invocation _deferred_producer(object x):
    """The deferred invocation, not run yet, that produces ``x`` (an input or a
    pending argument's source), or None."""
    cdef object producer
    if x is None:
        return None
    if isinstance(x, TensorBase):
        producer = (<TensorBase>x)._inv
    elif isinstance(x, BatchBase):
        producer = (<BatchBase>x)._inv
    else:
        return None
    if producer is None:
        return None
    if (<Invocation>producer).done or not (<Invocation>producer).deferred:
        return None
    return <Invocation>producer


cdef list _deferred_inputs(Invocation inv):
    cdef list found = []
    cdef Invocation producer
    if inv.inputs is not None:
        for x in inv.inputs:
            producer = _deferred_producer(x)
            if producer is not None:
                found.append(producer)
    if inv.args is not None:
        for v in inv.args.values():
            if type(v) is PendingArg:
                producer = _deferred_producer((<PendingArg>v).source)
                if producer is not None:
                    found.append(producer)
    return found


cdef _run_deferred_ancestors(list pending):
    """Run the deferred invocations ``pending`` (an invocation's deferred inputs) and
    those they depend on, inputs before the calls that use them, with an explicit
    stack: reaching them through the kernels' reads of their inputs would nest one C
    call per step of the chain (a running total kept over an epoch is thousands of
    steps deep) and overflow the thread's stack."""
    cdef list stack = [(producer, False) for producer in pending]
    cdef list order = []
    cdef set seen = set()
    cdef Invocation inv
    while stack:
        item = stack.pop()
        inv = <Invocation>item[0]
        if item[1]:  # its inputs are in ``order`` already
            order.append(inv)
            continue
        if id(inv) in seen or inv.done:
            continue
        seen.add(id(inv))
        stack.append((inv, True))
        for producer in _deferred_inputs(inv):
            if id(producer) not in seen:
                stack.append((producer, False))
    for inv in order:
        inv.ensure_run()


cdef class Invocation:
    """One operator call. ``outputs`` holds, per output, an array (sample mode) or
    a list of arrays (batch mode) once ``done``; ``error`` a run-phase exception."""

    def __cinit__(self):
        global _next_seq
        self.batch_size = -1
        self.num_outputs = 1
        self.seq = _next_seq
        _next_seq += 1

    cpdef run(self):
        """Run the kernel(s) now on this thread, recording outputs or the error."""
        cdef list pending = _deferred_inputs(self)
        if pending:
            _run_deferred_ancestors(pending)
        # Arrays the kernels create come from the host pool (see ndd/_cpu/host_pool.pyx).
        previous_allocator = host_pool.activate()
        try:
            execute = self.op.execute
            self.outputs = execute(self) if execute is not None else _execute(self)
        except (KeyboardInterrupt, SystemExit):
            # The user stopped the program, not the operator: nothing is recorded,
            # and a later evaluation runs it again.
            raise
        except BaseException as exc:
            self.error = exc
        finally:
            host_pool.restore(previous_allocator)
        # Inputs and arguments are no longer needed; let their memory go.
        self.inputs = None
        self.args = None
        self.done = True

    def ensure_run(self):
        """Run a deferred invocation (once) or wait for a queued one; no raising."""
        if self.done:
            return
        if self.queued:
            self.ctx.executor.wait(self)
            return
        # One lock per deferred invocation: two threads needing the same result
        # run it once, and evaluating different results never waits on a shared lock.
        if self.run_lock is None:  # never scheduled
            self.run()
            return
        with self.run_lock:
            if not self.done:
                self.run()

    cpdef wait(self):
        """Make sure the invocation has run; re-raise its error, if any."""
        if not self.done:
            self.ensure_run()
        if self.error is not None:
            raise_run_error(self)


def raise_run_error(Invocation inv):
    """Raise the run-phase error of ``inv`` as an exception of the same type (also a
    RuntimeError, as in the reference: ndd/_errors.py) that names the operator and the
    user's call site, chained to the original."""
    err = inv.error
    if getattr(err, "ndd_from_call", False):
        # An input's error, already naming its operator and call: said once, not nested,
        # and without the frames of its earlier raisings (each one would add to them).
        raise err.with_traceback(None)
    when = "deferred evaluation" if inv.deferred else "asynchronous execution"
    where = ""
    if inv.call_site is not None:
        where = f" (called at {inv.call_site[0]}:{inv.call_site[1]})"
    message = f"An error happened during {when} of {inv.op.qualname}{where}: {err}"
    wrapped = _renamed(err, message)
    wrapped.ndd_from_call = True
    raise wrapped from err


cdef object _call_site():
    """(file, line) of the innermost frame outside the ndd package."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return None
    return (frame.f_code.co_filename, frame.f_lineno)


cdef object _renamed(err, str message):
    """``err`` with ``message`` (naming the operator): of its own type, or of the
    nearest base type made from a message alone (numpy's MemoryError needs a shape:
    a MemoryError), a RuntimeError as well. What it carries besides its message (a
    decoder's ``decoded`` and ``failed`` samples) stays with it."""
    for cls in type(err).__mro__:
        if not issubclass(cls, BaseException):
            continue
        try:
            wrapped = as_runtime_error(cls(message))
        except Exception:
            continue
        try:
            wrapped.__dict__.update(vars(err))
        except TypeError:
            pass
        return wrapped
    return RuntimeError(message)


cpdef schedule(Invocation inv, bint external):
    """Apply the current EvalMode: record, queue on the worker, or run now.

    Calls reading memory the user owns (``as_tensor`` of a numpy array, ...)
    run at once whatever the mode, so that the caller may reuse the buffer.
    """
    mode = EvalMode.current()
    ctx = EvalContext.current()
    inv.ctx = ctx
    if external or mode is _SYNC_CPU or mode is _SYNC_FULL:
        inv.run()
        if inv.error is not None:
            err = inv.error
            qualname = inv.op.qualname
            if str(err).startswith(qualname):
                raise err
            raise _renamed(err, f"{qualname}: {err}") from err
        if mode is _SYNC_FULL and inv.device is not None and inv.device.device_type == "gpu":
            gpu_context(ctx, inv.device.device_id).cuda_stream.synchronize()
        return
    inv.call_site = _call_site()
    if mode is _DEFERRED:
        inv.deferred = True
        inv.run_lock = threading.Lock()
        ctx.record_pending(inv)
    else:
        inv.queued = True
        ctx.executor.submit(inv)
