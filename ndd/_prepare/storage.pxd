cdef class TensorBase:
    cdef public object _data
    cdef public object _inv
    cdef public int _out
    cdef public Py_ssize_t _sample
    cdef public object _shape
    cdef public object _dtype
    cdef public str _layout
    cdef public object _device
    cdef public bint _external
    # The file a reader took the sample from (str), or None.
    cdef public object _source_info


cdef class BatchBase:
    cdef public list _samples
    cdef public object _dense
    # A GPU batch's DeviceBatch (one allocation for all samples), else None.
    cdef public object _gpu
    cdef public bint _uniform
    cdef public object _inv
    cdef public int _out
    cdef public object _shapes
    cdef public object _dtype
    cdef public str _layout
    cdef public object _device
    cdef public Py_ssize_t _batch_size
    cdef public bint _external
    # One source (str) per sample when a reader produced the batch, else None.
    cdef public list _source_info
    # A Batch of no samples: the shape its samples would have (from the array it was
    # made of, or the shape rule of the operator that made it), or None: not known.
    cdef public object _empty_shape


cpdef object tensor_data(TensorBase t)
cpdef list batch_samples(BatchBase b)
cpdef object batch_dense(BatchBase b)
cpdef bint batch_ready(BatchBase b)
cpdef object batch_wait(BatchBase b)
cpdef object empty_sample_shape(BatchBase b)
cdef list would_be_sample_shapes(list ins)
