cdef class Arg:
    cdef readonly str name
    cdef readonly str kind
    cdef readonly object default
    cdef readonly bint per_sample
    cdef readonly object choices
    cdef readonly str doc
    cdef readonly str type_doc
    cdef public object converted_default
    cdef readonly bint draws_random
    cdef readonly bint finite
    cdef readonly bint rows
    cdef readonly bint sizes

    cpdef object convert(self, op, object value)
    cdef tuple _convert_list(self, op, object value, bint integer)
    cdef tuple _convert_sizes(self, op, value)
    cdef _fail(self, op, str expected, value)


cpdef object draw_random_key(op, str name, object rng)
