cdef class PerSample:
    cdef public list values


cdef class PendingArg:
    cdef public object spec
    cdef public object source


cdef class Invocation:
    cdef public object op
    cdef public tuple inputs
    cdef public dict args
    cdef public Py_ssize_t batch_size
    cdef public int num_outputs
    cdef public object device
    cdef public object ctx
    cdef public list outputs
    cdef public object error
    cdef public object call_site
    cdef public bint done
    cdef public bint queued
    cdef public bint deferred
    cdef public bint check_shapes  # infer_shape's checks wait for the inputs' shapes
    cdef public long long seq
    cdef object run_lock
    cdef object __weakref__

    cpdef run(self)
    cpdef wait(self)


cpdef list per_sample_args(dict args, Py_ssize_t batch_size)
cdef list infer_each(infer_shape, list ins, list sample_args, Py_ssize_t bs)
cdef tuple sample_shapes(list ins, Py_ssize_t i)
cpdef schedule(Invocation inv, bint external)
