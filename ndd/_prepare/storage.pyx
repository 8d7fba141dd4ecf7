# cython: language_level=3, boundscheck=False, wraparound=False, auto_pickle=False
"""Storage-and-metadata bases of Tensor and Batch.

A result's metadata (shape, dtype, layout, device) is set by the prepare phase;
its data arrives when the producing invocation has run. ``tensor_data`` and
``batch_samples`` are the one place that waits for it.
"""

from .invocation cimport Invocation

# The type of GPU batch outputs (ndd._cuda.device_array.DeviceBatch), registered
# by that module when imported: a CPU-only program never imports it.
cdef object _device_batch_type = None


def register_device_batch_type(cls):
    """Make ``cls`` the type of GPU batch data (called by ndd._cuda.device_array)."""
    global _device_batch_type
    _device_batch_type = cls


cdef class TensorBase:
    """Fields of a Tensor. ``_data`` is a numpy array (CPU) or a DeviceArray (GPU)
    once materialised;
    until then ``_inv`` is the producing invocation and ``_out``/``_sample`` say
    which output (and which sample of a batch output) this tensor is."""

    def __cinit__(self):
        self._out = 0
        self._sample = -1
        self._layout = ""


cdef class BatchBase:
    """Fields of a Batch: ``_samples`` is a list of numpy arrays once materialised.

    A batch whose samples share one shape may also be stored densely: ``_dense``
    is then one array with a leading sample dimension and the samples are views
    of it, so operators can process the whole batch in one numpy call.
    ``_uniform`` says all samples have one shape (known at prepare time).

    A GPU batch keeps its samples in one allocation: ``_gpu`` is a DeviceBatch
    (one buffer, per-sample offsets and shapes) and ``_samples`` its per-sample
    DeviceArray views, made when first asked for (``batch_samples``): operators
    take the DeviceBatch itself; ``_dense`` stays None.
    """

    def __cinit__(self):
        self._out = 0
        self._layout = ""


cpdef object tensor_data(TensorBase t):
    """The array of ``t``, waiting for (or running) its invocation if needed."""
    cdef Invocation inv
    if t._data is None:
        if t._inv is None:
            raise RuntimeError("this Tensor was not initialised (its construction failed)")
        inv = <Invocation>t._inv
        inv.wait()
        out = inv.outputs[t._out]
        if t._sample < 0:
            t._data = out
        elif type(out) is list:
            t._data = out[t._sample]
        elif type(out) is _device_batch_type:
            t._data = out.sample(t._sample)
        else:
            # A densely stored batch output; with the ellipsis, a sample of a 1-D one
            # is a 0-D array rather than a numpy scalar.
            t._data = out[t._sample, ...]
        if t._shape is None:
            t._shape = t._data.shape
        t._inv = None
    return t._data


cdef _materialize_batch(BatchBase b):
    cdef Invocation inv
    if b._inv is None:
        raise RuntimeError("this Batch was not initialised (its construction failed)")
    inv = <Invocation>b._inv
    inv.wait()
    out = inv.outputs[b._out]
    if type(out) is list:
        b._samples = out
    elif type(out) is _device_batch_type:
        b._gpu = out
        if b._shapes is None:
            b._shapes = [tuple(s) for s in out.shapes]
    else:
        b._dense = out
    if b._shapes is None:
        b._shapes = [s.shape for s in out]
    b._inv = None


cpdef bint batch_ready(BatchBase b):
    """Whether the data of ``b`` is there (its invocation has run, or it never had one)."""
    return b._samples is not None or b._dense is not None or b._gpu is not None


cpdef object batch_wait(BatchBase b):
    """Wait for the data of ``b`` without making per-sample views of a GPU batch;
    return its DeviceBatch (None for a batch in host memory)."""
    if not batch_ready(b):
        _materialize_batch(b)
    return b._gpu


cpdef list batch_samples(BatchBase b):
    """The list of sample arrays of ``b``, waiting for its invocation if needed."""
    if b._samples is None:
        if not batch_ready(b):
            _materialize_batch(b)
        if b._samples is None and b._gpu is not None:
            b._samples = b._gpu.samples()
        if b._samples is None:
            dense = b._dense
            if dense.ndim == 1:
                # Iterating a 1-D array gives numpy scalars; the samples are 0-D arrays.
                b._samples = [dense[i, ...] for i in range(dense.shape[0])]
            else:
                b._samples = list(dense)
    return b._samples


cpdef object batch_dense(BatchBase b):
    """The samples of ``b`` as one array with a leading sample dimension, or None
    when they are not stored that way (waiting for the invocation if needed)."""
    if not batch_ready(b):
        _materialize_batch(b)
    return b._dense


cpdef object empty_sample_shape(BatchBase b):
    """The shape the samples of ``b``, a Batch of none, would have, as far as it is
    known: that of the array it was made of, or the one the shape rule of the operator
    that made it gave (call.pyx); else extent 1 in each dimension of its layout, or None."""
    if b._dense is not None:
        return b._dense.shape[1:]
    if b._empty_shape is not None:
        return b._empty_shape
    if b._layout:
        return (1,) * len(b._layout)
    return None


cdef list would_be_sample_shapes(list ins):
    """The shapes of one would-be sample of each of the inputs ``ins`` of a call on
    Batches of no samples (a Tensor's own; None for an absent input), or None when a
    Batch's is not known."""
    cdef list shapes = []
    for x in ins:
        if x is None:
            shapes.append(None)
        elif isinstance(x, TensorBase):
            shapes.append((<TensorBase>x)._shape)
        else:
            shape = empty_sample_shape(<BatchBase>x)
            if shape is None:
                return None
            shapes.append(shape)
    return shapes
