# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Kernel launch through ``cuLaunchKernel``, with argument packing written once.

A :class:`Signature` holds a kernel's parameter kinds as the build manifest
declares them (``ptr``, ``bool``, ``i8`` ... ``u64``, ``f32``, ``f64``; see
``kernel_files.PARAM_KINDS``), checked and encoded once per kernel. :func:`launch`
converts each Python argument to its kind's C type, range-checked, stores it at
its natural alignment in a buffer on the C stack, builds the ``void*`` array the
driver reads the parameters through, and passes that array's address as an int:
cuda-python's ``cuLaunchKernel`` takes an int ``kernelParams`` as a ready
``void**`` (``_HelperKernelParams`` in ``cuda/bindings/_lib/utils.pxi``, 12.x and
13.x), and the driver copies the values during the call, so the stack buffers
may go away when it returns.
"""

import numpy as np

from libc.math cimport fabs, isfinite
from libc.stdint cimport int64_t, uint8_t, uint64_t, uintptr_t
from libc.string cimport memcpy

from ndd._cuda.driver import api, check

cdef enum:
    # More parameters than any ndd kernel declares; every kind fits in 8 bytes.
    MAX_PARAMS = 128

cdef enum:  # parameter kinds, indexes of the tables below
    K_PTR, K_BOOL, K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64, K_F32, K_F64

_KINDS = {
    "ptr": K_PTR,
    "bool": K_BOOL,
    "i8": K_I8,
    "u8": K_U8,
    "i16": K_I16,
    "u16": K_U16,
    "i32": K_I32,
    "u32": K_U32,
    "i64": K_I64,
    "u64": K_U64,
    "f32": K_F32,
    "f64": K_F64,
}
cdef int[12] _SIZE = [8, 1, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8]
# Bounds of the integer kinds below 64 bits, indexed by kind.
cdef int64_t[12] _LOW = [0, 0, -128, 0, -32768, 0, -2147483648, 0, 0, 0, 0, 0]
cdef int64_t[12] _HIGH = [0, 1, 127, 255, 32767, 65535, 2147483647, 4294967295, 0, 0, 0, 0]
cdef double _F32_MAX = 3.4028234663852886e38


cdef class Signature:
    """The parameter kinds of one kernel, checked once.

    Parameters
    ----------
    kernel
        Kernel name, used in error messages.
    kinds
        One kind per parameter, in order (``"ptr"``, ``"u64"``, ...).
    """

    cdef readonly str kernel
    cdef readonly tuple kinds
    cdef Py_ssize_t count
    cdef uint8_t[MAX_PARAMS] codes

    def __init__(self, str kernel, kinds):
        kinds = tuple(kinds)
        if len(kinds) > MAX_PARAMS:
            raise ValueError(
                f"kernel {kernel}: {len(kinds)} parameters, more than the {MAX_PARAMS} supported"
            )
        for index, kind in enumerate(kinds):
            code = _KINDS.get(kind)
            if code is None:
                raise ValueError(
                    f"kernel {kernel}: parameter {index} has unknown kind {kind!r}; known: {sorted(_KINDS)}"
                )
            self.codes[index] = code
        self.kernel = kernel
        self.kinds = kinds
        self.count = len(kinds)

    def __repr__(self):
        return f"Signature({self.kernel!r}, {list(self.kinds)!r})"


cdef str _describe(Signature signature, Py_ssize_t index):
    return f"kernel {signature.kernel}: parameter {index} ({signature.kinds[index]})"


cdef uint64_t _address(object value, Signature signature, Py_ssize_t index) except? 0:
    """The device address an argument for a ``ptr`` parameter stands for."""
    if type(value) is int:
        if value < 0 or value > 0xFFFFFFFFFFFFFFFF:
            raise OverflowError(f"{_describe(signature, index)}: address {value:#x} is not a 64-bit address")
        return value
    if value is None:
        return 0
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        return _address(interface["data"][0], signature, index)
    pointer = getattr(value, "ptr", None)
    if pointer is not None:
        return _address(int(pointer), signature, index)
    if hasattr(value, "getPtr"):  # a cuda.bindings CUdeviceptr
        return _address(int(value), signature, index)
    if hasattr(value, "__index__"):  # a numpy integer
        return _address(value.__index__(), signature, index)
    raise TypeError(
        f"{_describe(signature, index)}: expected a device address (an int, an object with "
        f"__cuda_array_interface__ or .ptr, or a CUdeviceptr), got {type(value).__name__}"
    )


cdef object _integer(object value, Signature signature, Py_ssize_t index):
    if type(value) is int:
        return value
    if isinstance(value, (float, np.floating)):
        raise TypeError(
            f"{_describe(signature, index)}: expected an integer, got {type(value).__name__} {value}"
        )
    try:
        return value.__index__()
    except (AttributeError, TypeError):
        raise TypeError(
            f"{_describe(signature, index)}: expected an integer, got {type(value).__name__}"
        ) from None


cdef void _out_of_range(object value, Signature signature, Py_ssize_t index) except *:
    cdef int kind = signature.codes[index]
    if kind == K_I64:
        low, high = -0x8000000000000000, 0x7FFFFFFFFFFFFFFF
    elif kind == K_U64:
        low, high = 0, 0xFFFFFFFFFFFFFFFF
    else:
        low, high = _LOW[kind], _HIGH[kind]
    raise OverflowError(f"{_describe(signature, index)}: {value} is out of range [{low}, {high}]")


cdef void _pack(char* target, int kind, object value, Signature signature, Py_ssize_t index) except *:
    """Store ``value`` at ``target`` as a ``kind``."""
    cdef int64_t signed_value = 0
    cdef uint64_t unsigned_value = 0
    cdef double real
    cdef float single
    if kind == K_PTR:
        if isinstance(value, (bool, float, np.bool_, np.floating)):
            raise TypeError(
                f"{_describe(signature, index)}: expected a device address, "
                f"got {type(value).__name__} {value}"
            )
        unsigned_value = _address(value, signature, index)
        memcpy(target, &unsigned_value, 8)
    elif kind == K_BOOL:
        if not isinstance(value, (bool, np.bool_)):
            value = _integer(value, signature, index)
            if value != 0 and value != 1:
                raise TypeError(f"{_describe(signature, index)}: expected a bool (or 0 or 1), got {value!r}")
        target[0] = 1 if value else 0
    elif kind == K_F32 or kind == K_F64:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__float__"):
            raise TypeError(
                f"{_describe(signature, index)}: expected a real number, got {type(value).__name__}"
            )
        try:
            real = value
        except OverflowError:
            raise OverflowError(
                f"{_describe(signature, index)}: {value!r} does not fit in a float64"
            ) from None
        if kind == K_F64:
            memcpy(target, &real, 8)
        else:
            if isfinite(real) and fabs(real) > _F32_MAX:
                raise OverflowError(f"{_describe(signature, index)}: {value!r} does not fit in a float32")
            single = <float>real
            memcpy(target, &single, 4)
    elif kind == K_U64:
        value = _integer(value, signature, index)
        try:
            unsigned_value = value
        except OverflowError:
            _out_of_range(value, signature, index)
        memcpy(target, &unsigned_value, 8)
    else:
        value = _integer(value, signature, index)
        try:
            signed_value = value
        except OverflowError:
            _out_of_range(value, signature, index)
        if kind != K_I64 and (signed_value < _LOW[kind] or signed_value > _HIGH[kind]):
            _out_of_range(value, signature, index)
        # Little-endian hosts: the low bytes of the 64-bit value are the narrower one.
        memcpy(target, &signed_value, _SIZE[kind])


cdef void _dimensions(object shape, str what, Signature signature, unsigned int* out) except *:
    """``shape`` (an int or 1 to 3 ints) as x, y, z, each at least 1."""
    cdef Py_ssize_t axis
    out[0] = out[1] = out[2] = 1
    if type(shape) is int and 1 <= shape <= 0xFFFFFFFF:
        out[0] = shape
        return
    if not isinstance(shape, (tuple, list)):
        shape = (shape,)
    if not 1 <= len(shape) <= 3:
        raise ValueError(f"kernel {signature.kernel}: {what} must have 1 to 3 dimensions, got {shape!r}")
    for axis in range(len(shape)):
        extent = shape[axis]
        if type(extent) is not int and (
            isinstance(extent, (bool, float, np.floating)) or not hasattr(extent, "__index__")
        ):
            raise TypeError(f"kernel {signature.kernel}: {what} {tuple(shape)!r} must be integers")
        if not 1 <= extent <= 0xFFFFFFFF:
            raise ValueError(
                f"kernel {signature.kernel}: {what} {tuple(shape)!r} must be positive 32-bit sizes"
            )
        out[axis] = extent


def launch(function, Signature signature, grid, block, stream, args, unsigned int shared_bytes=0):
    """Launch a kernel with ``cuLaunchKernel``.

    Parameters
    ----------
    function
        The kernel (a ``CUfunction``).
    signature
        Its parameter kinds (:class:`Signature`).
    grid, block
        Blocks in the grid and threads in a block: an int or 1 to 3 ints.
    stream
        The stream to launch on (``CUstream``, int handle or None for the legacy default).
    args
        One value per parameter: an int address, an object with
        ``__cuda_array_interface__`` or ``.ptr``, or a ``CUdeviceptr`` for ``ptr``;
        an integer in range for ``i8`` ... ``u64``; a bool (or 0/1) for ``bool``; a
        real number for ``f32``/``f64``.
    shared_bytes
        Dynamic shared memory per block.

    Raises
    ------
    TypeError, OverflowError, ValueError
        For a wrong number of arguments, an argument of the wrong type or out of its
        kind's range, or a bad grid or block, naming the kernel and the parameter.
    CudaError
        When the driver refuses the launch.
    """
    cdef uint64_t[MAX_PARAMS] storage
    cdef void* pointers[MAX_PARAMS]
    cdef char* base = <char*>storage
    cdef Py_ssize_t offset = 0
    cdef Py_ssize_t index, size
    cdef int kind
    cdef unsigned int[3] grid_xyz
    cdef unsigned int[3] block_xyz
    if len(args) != signature.count:
        raise TypeError(
            f"kernel {signature.kernel} takes {signature.count} arguments "
            f"({', '.join(signature.kinds)}), got {len(args)}"
        )
    for index in range(signature.count):
        kind = signature.codes[index]
        size = _SIZE[kind]
        offset = (offset + size - 1) & ~(size - 1)
        _pack(base + offset, kind, args[index], signature, index)
        pointers[index] = base + offset
        offset += size
    _dimensions(grid, "grid", signature, grid_xyz)
    _dimensions(block, "block", signature, block_xyz)
    result = api().cuLaunchKernel(
        function,
        grid_xyz[0],
        grid_xyz[1],
        grid_xyz[2],
        block_xyz[0],
        block_xyz[1],
        block_xyz[2],
        shared_bytes,
        stream,
        <uintptr_t>&pointers[0],
        0,
    )
    if int(result[0]) != 0:
        check(result, f"launching kernel {signature.kernel}")


def grid_for(Py_ssize_t n, unsigned int block=256, unsigned int max_blocks=65535):
    """Blocks for a 1-D grid-stride kernel over ``n`` elements.

    Enough blocks of ``block`` threads for one element per thread, at most
    ``max_blocks`` (the kernel's loop covers the rest) and at least 1, so the
    launch is valid even for ``n == 0``.
    """
    if n < 0:
        raise ValueError(f"grid_for: n must be non-negative, got {n}")
    if block == 0 or max_blocks == 0:
        raise ValueError("grid_for: block and max_blocks must be positive")
    cdef Py_ssize_t blocks = (n + block - 1) // block
    return int(min(max(blocks, 1), max_blocks))
