# cython: language_level=3
"""DLPack capsules: export of device memory, and import of a producer's tensor.

``export_capsule`` wraps an address, a shape and a dtype in a ``DLManagedTensor``
(a ``"dltensor"`` capsule) or a ``DLManagedTensorVersioned`` (a
``"dltensor_versioned"`` capsule, DLPack 1.x) whose deleter releases the
reference the capsule holds on the memory's owner. A capsule no consumer took
calls the deleter itself when collected; a consumer renames it (``used_...``)
and calls the deleter when it is done with the memory.

``import_capsule`` does the consumer's part for a capsule another library made:
it reads the tensor's fields, renames the capsule, and returns a ``Producer``
whose collection calls the producer's deleter.
"""

from cpython.pycapsule cimport (
    PyCapsule_GetPointer,
    PyCapsule_IsValid,
    PyCapsule_New,
    PyCapsule_SetName,
)
from cpython.ref cimport Py_DECREF, Py_INCREF, PyObject
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc


cdef extern from *:
    """
    typedef struct { int32_t device_type; int32_t device_id; } NddDLDevice;
    typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } NddDLDataType;
    typedef struct {
        void *data;
        NddDLDevice device;
        int32_t ndim;
        NddDLDataType dtype;
        int64_t *shape;
        int64_t *strides;
        uint64_t byte_offset;
    } NddDLTensor;
    typedef struct NddDLManagedTensor {
        NddDLTensor dl_tensor;
        void *manager_ctx;
        void (*deleter)(struct NddDLManagedTensor *self);
    } NddDLManagedTensor;
    typedef struct { uint32_t major; uint32_t minor; } NddDLPackVersion;
    typedef struct NddDLManagedTensorVersioned {
        NddDLPackVersion version;
        void *manager_ctx;
        void (*deleter)(struct NddDLManagedTensorVersioned *self);
        uint64_t flags;
        NddDLTensor dl_tensor;
    } NddDLManagedTensorVersioned;
    """
    ctypedef struct DLDevice "NddDLDevice":
        int32_t device_type
        int32_t device_id

    ctypedef struct DLDataType "NddDLDataType":
        uint8_t code
        uint8_t bits
        uint16_t lanes

    ctypedef struct DLTensor "NddDLTensor":
        void *data
        DLDevice device
        int32_t ndim
        DLDataType dtype
        int64_t *shape
        int64_t *strides
        uint64_t byte_offset

    ctypedef struct DLManagedTensor "NddDLManagedTensor":
        DLTensor dl_tensor
        void *manager_ctx
        void (*deleter)(DLManagedTensor *) noexcept

    ctypedef struct DLPackVersion "NddDLPackVersion":
        uint32_t major
        uint32_t minor

    ctypedef struct DLManagedTensorVersioned "NddDLManagedTensorVersioned":
        DLPackVersion version
        void *manager_ctx
        void (*deleter)(DLManagedTensorVersioned *) noexcept
        uint64_t flags
        DLTensor dl_tensor


# The DLPack version ndd speaks when the consumer accepts versioned capsules.
DLPACK_MAJOR = 1
DLPACK_MINOR = 0
_FLAG_READ_ONLY = 1


cdef void _delete_managed(DLManagedTensor *managed) noexcept with gil:
    # The shape array lives in the same allocation, after the struct.
    Py_DECREF(<object>managed.manager_ctx)
    free(managed)


cdef void _delete_versioned(DLManagedTensorVersioned *managed) noexcept with gil:
    Py_DECREF(<object>managed.manager_ctx)
    free(managed)


cdef void _destroy_capsule(object capsule) noexcept:
    # Only a capsule no consumer renamed still owns its tensor.
    cdef DLManagedTensor *managed
    if PyCapsule_IsValid(capsule, b"dltensor"):
        managed = <DLManagedTensor *>PyCapsule_GetPointer(capsule, b"dltensor")
        managed.deleter(managed)


cdef void _destroy_versioned_capsule(object capsule) noexcept:
    cdef DLManagedTensorVersioned *managed
    if PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        managed = <DLManagedTensorVersioned *>PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        managed.deleter(managed)


cdef void _fill_tensor(DLTensor *tensor, int64_t *shape_store, size_t ptr, tuple shape,
                       int device_type, int device_id, tuple dtype):
    cdef Py_ssize_t i
    tensor.data = <void *>ptr
    tensor.device.device_type = device_type
    tensor.device.device_id = device_id
    tensor.ndim = len(shape)
    tensor.dtype.code = dtype[0]
    tensor.dtype.bits = dtype[1]
    tensor.dtype.lanes = dtype[2]
    for i in range(len(shape)):
        shape_store[i] = shape[i]
    tensor.shape = shape_store
    tensor.strides = NULL  # C-contiguous
    tensor.byte_offset = 0


def export_capsule(object owner, size_t ptr, tuple shape, tuple dtype, int device_type, int device_id,
                   bint versioned=False, bint read_only=False):
    """A DLPack capsule over ``ptr`` (C-contiguous ``shape``, ``dtype`` as
    ``(code, bits, lanes)``) that keeps ``owner`` alive until its deleter runs."""
    cdef size_t ndim = len(shape)
    cdef DLManagedTensor *managed
    cdef DLManagedTensorVersioned *versioned_tensor
    cdef size_t header
    if versioned:
        header = (sizeof(DLManagedTensorVersioned) + 7) // 8 * 8
        versioned_tensor = <DLManagedTensorVersioned *>malloc(header + ndim * sizeof(int64_t) + 1)
        if versioned_tensor == NULL:
            raise MemoryError("DLPack export: out of host memory")
        versioned_tensor.version.major = DLPACK_MAJOR
        versioned_tensor.version.minor = DLPACK_MINOR
        versioned_tensor.flags = _FLAG_READ_ONLY if read_only else 0
        _fill_tensor(&versioned_tensor.dl_tensor, <int64_t *>(<char *>versioned_tensor + header), ptr,
                     shape, device_type, device_id, dtype)
        Py_INCREF(owner)
        versioned_tensor.manager_ctx = <void *><PyObject *>owner
        versioned_tensor.deleter = _delete_versioned
        return PyCapsule_New(versioned_tensor, b"dltensor_versioned", _destroy_versioned_capsule)
    header = (sizeof(DLManagedTensor) + 7) // 8 * 8
    managed = <DLManagedTensor *>malloc(header + ndim * sizeof(int64_t) + 1)
    if managed == NULL:
        raise MemoryError("DLPack export: out of host memory")
    _fill_tensor(&managed.dl_tensor, <int64_t *>(<char *>managed + header), ptr, shape, device_type,
                 device_id, dtype)
    Py_INCREF(owner)
    managed.manager_ctx = <void *><PyObject *>owner
    managed.deleter = _delete_managed
    return PyCapsule_New(managed, b"dltensor", _destroy_capsule)


cdef class Producer:
    """The memory of an imported DLPack tensor: calls the producer's deleter once
    when collected. ``ptr`` is the data address (byte offset included)."""

    cdef void *_managed
    cdef bint _versioned
    cdef readonly size_t ptr
    cdef readonly tuple shape
    cdef readonly object strides
    cdef readonly tuple dtype
    cdef readonly tuple device
    cdef readonly bint read_only

    def __dealloc__(self):
        cdef DLManagedTensor *managed
        cdef DLManagedTensorVersioned *versioned_tensor
        if self._managed == NULL:
            return
        if self._versioned:
            versioned_tensor = <DLManagedTensorVersioned *>self._managed
            if versioned_tensor.deleter != NULL:
                versioned_tensor.deleter(versioned_tensor)
        else:
            managed = <DLManagedTensor *>self._managed
            if managed.deleter != NULL:
                managed.deleter(managed)
        self._managed = NULL


cdef _read_tensor(Producer producer, DLTensor *tensor):
    cdef int i
    producer.ptr = <size_t>tensor.data + tensor.byte_offset
    producer.shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    if tensor.strides == NULL:
        producer.strides = None
    else:
        producer.strides = tuple(tensor.strides[i] for i in range(tensor.ndim))
    producer.dtype = (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes)
    producer.device = (tensor.device.device_type, tensor.device.device_id)


def import_capsule(object capsule):
    """Take the tensor of a ``"dltensor"`` or ``"dltensor_versioned"`` capsule
    (the capsule is marked used) as a ``Producer``."""
    cdef Producer producer = Producer.__new__(Producer)
    cdef DLManagedTensor *managed
    cdef DLManagedTensorVersioned *versioned_tensor
    if PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        versioned_tensor = <DLManagedTensorVersioned *>PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        if versioned_tensor.version.major != DLPACK_MAJOR:
            raise BufferError(f"DLPack version {versioned_tensor.version.major}.x is not supported")
        _read_tensor(producer, &versioned_tensor.dl_tensor)
        producer.read_only = (versioned_tensor.flags & _FLAG_READ_ONLY) != 0
        PyCapsule_SetName(capsule, b"used_dltensor_versioned")
        producer._managed = versioned_tensor
        producer._versioned = True
        return producer
    if PyCapsule_IsValid(capsule, b"dltensor"):
        managed = <DLManagedTensor *>PyCapsule_GetPointer(capsule, b"dltensor")
        _read_tensor(producer, &managed.dl_tensor)
        producer.read_only = False
        PyCapsule_SetName(capsule, b"used_dltensor")
        producer._managed = managed
        producer._versioned = False
        return producer
    raise BufferError("not an unused DLPack capsule (expected one named 'dltensor' or 'dltensor_versioned')")
