"""A recording stand-in for ``cuda.bindings.driver``, for tests without a GPU.

``FakeDriver`` answers the driver calls ndd makes, with the same signatures and
the same ``(CUresult, values...)`` return tuples, and the enum and handle types of
the real bindings. It keeps enough state to check ndd's bookkeeping without a
GPU: device memory is host memory (copies really copy, so data round trips can be
tested), memory pools count their used and reserved bytes, streams keep the
ordered list of what was queued on them, events remember where they were
recorded, and every kernel launch is kept with its grid, block, stream and the
argument values unpacked by the parameter sizes of the kernel's PTX ``.entry``.
Kernels do not run, unless the driver is given ``host_kernels`` (a
``host_kernels.HostKernels``): then each launch also runs the kernel, built for the
CPU, on the fake's device memory, when it is queued.

Modules load as the driver decides: PTX whose ISA is newer than the fake's
``driver_version`` fails with ``CUDA_ERROR_UNSUPPORTED_PTX_VERSION``, and a CUBIN
(CUDA ELF) only loads on a device of its major compute capability with a minor
one at least its own, else ``CUDA_ERROR_NO_BINARY_FOR_GPU``. A CUBIN's kernels are
the ``.text.<kernel>`` sections of the ELF; their parameters come from ndd's
kernel manifest (a CUBIN keeps them in an attribute section this double does
not parse), so only ndd's own kernels can be loaded from a CUBIN.

Install it with ``ndd._cuda.driver.use_fake(FakeDriver())`` (a context manager).
``fail_next(name, error)`` makes the next call of ``name`` return ``error``.
"""

import ctypes
import re
import threading
from dataclasses import dataclass, field

from cuda.bindings import driver as _real

from . import kernel_files

__all__ = ["FakeDriver", "Launch"]

_SUCCESS = _real.CUresult.CUDA_SUCCESS
# PTX parameter types' sizes in bytes, by their bit counts.
_SIZES = {"8": 1, "16": 2, "32": 4, "64": 8}
_PTX_VERSION = re.compile(r"^\s*\.version\s+(\d+)\.(\d+)", re.MULTILINE)
_CUBIN_SECTION = re.compile(rb"\.text\.(\w+)\x00")
# EI_OSABI of the CUDA ELF ABI that sm_100 and later use: it keeps the SM in bits 8..15
# of e_flags; the earlier ABI (0x33) keeps it in bits 0..7.
_ELFOSABI_CUDA_V2 = 0x41


@dataclass
class Launch:
    """One recorded kernel launch."""

    function: str
    grid: tuple
    block: tuple
    shared_bytes: int
    stream: int
    args: list  # one int per parameter (its bytes read as an unsigned little-endian number)
    param_types: list = field(default_factory=list)  # PTX types, e.g. ["u64", "u64", "u32"]


@dataclass
class _Pool:
    device: int
    used: int = 0
    reserved: int = 0
    used_high: int = 0
    reserved_high: int = 0
    release_threshold: int = 0
    cached: int = 0  # freed bytes the pool keeps for reuse


def _handle(value):
    return 0 if value is None else int(value)


def _stale_bytes(count):
    """The contents of a new allocation: not zeros, since a pool hands out memory that
    held earlier results, so that a kernel that leaves elements unwritten is caught."""
    stale = bytearray(b"\xcd\xab\x7f\xff") * (count // 4 + 1)
    del stale[count:]
    return stale


# Guard bytes around each allocation a host-run kernel reaches (see _run_on_host).
_GUARD = 256
_GUARD_BYTES = bytes((0xA5 + 7 * i) & 0xFF for i in range(_GUARD))


# What every GPU ndd supports (compute capability 7.0 and newer) accepts in a launch:
# threads per block and per block dimension, blocks per grid dimension, and dynamic
# shared memory without the opt-in attribute (ndd never sets it).
_MAX_BLOCK = (1024, 1024, 64)
_MAX_BLOCK_THREADS = 1024
_MAX_GRID = (2**31 - 1, 65535, 65535)
_MAX_DYNAMIC_SHARED = 48 * 1024


def _launch_fits(grid, block, shared_bytes):
    """Whether a real driver would accept a launch of this shape (else INVALID_VALUE)."""
    return (
        all(1 <= b <= m for b, m in zip(block, _MAX_BLOCK, strict=True))
        and block[0] * block[1] * block[2] <= _MAX_BLOCK_THREADS
        and all(1 <= g <= m for g, m in zip(grid, _MAX_GRID, strict=True))
        and 0 <= shared_bytes <= _MAX_DYNAMIC_SHARED
    )


class FakeDriver:
    """See the module docstring.

    Parameters
    ----------
    devices : int
        Number of devices.
    compute_capability : tuple of int
        (major, minor) of every device.
    memory_bytes : int
        Device memory of each device; allocations beyond it fail with
        ``CUDA_ERROR_OUT_OF_MEMORY``.
    driver_version : int
        What ``cuDriverGetVersion`` answers (``12090`` for CUDA 12.9); PTX of a
        newer ISA does not load.
    host_kernels : host_kernels.HostKernels, optional
        Runs every launched kernel on the host (see the module docstring).
    """

    # The bindings' enums and handle types, so that ndd code works unchanged.
    CUresult = _real.CUresult
    CUdevice_attribute = _real.CUdevice_attribute
    CUmemPool_attribute = _real.CUmemPool_attribute
    CUstream_flags = _real.CUstream_flags
    CUevent_flags = _real.CUevent_flags
    CUdevice = _real.CUdevice
    CUcontext = _real.CUcontext
    CUstream = _real.CUstream
    CUevent = _real.CUevent
    CUmemoryPool = _real.CUmemoryPool
    CUmodule = _real.CUmodule
    CUfunction = _real.CUfunction
    CUdeviceptr = _real.CUdeviceptr
    CUmemorytype = _real.CUmemorytype
    CUDA_MEMCPY2D = _real.CUDA_MEMCPY2D
    cuuint64_t = _real.cuuint64_t
    # What cuEventElapsedTime answers between two recorded events, in milliseconds.
    event_elapsed_ms = 1.0

    def __init__(
        self,
        devices=1,
        compute_capability=(8, 0),
        memory_bytes=1 << 30,
        driver_version=12090,
        host_kernels=None,
    ):
        self.devices = devices
        self.host_kernels = host_kernels
        self.driver_version = driver_version
        self.compute_capability = compute_capability
        self.memory_bytes = memory_bytes
        self.initialized = False
        self.calls = []  # names of the driver calls made, in order
        self.launches = []
        self.streams = {}  # handle -> list of ("launch", Launch) / ("copy", ...) / ("event", handle) / ...
        self.events = {}  # handle -> (stream handle, position in that stream's list) once recorded
        self.stream_flags = {}  # stream handle -> the flags it was created with
        self.destroyed = []  # handles of the streams and events destroyed, in order
        self.pools = {d: _Pool(d) for d in range(devices)}
        self.allocations = {}  # address -> (bytearray, device, pool device)
        self.host_allocations = {}  # address -> the ctypes buffer of a page-locked allocation
        self.modules = {}  # handle -> {kernel name: [ptx param types]}
        self.functions = {}  # handle -> (kernel name, [ptx param types])
        self.module_images = {}  # module handle -> the image (bytes or str) it was loaded from
        self._failures = {}
        self._next_handle = 0x1000
        self._next_address = 0x7F0000000000
        self._local = threading.local()
        self._lock = threading.Lock()

    # -- bookkeeping ---------------------------------------------------------------

    def fail_next(self, name, error):
        """Make the next call of ``name`` return ``error`` (a CUresult)."""
        self._failures[name] = error

    def _enter(self, name):
        self.calls.append(name)
        error = self._failures.pop(name, None)
        if error is None and name != "cuInit" and not self.initialized:
            error = _real.CUresult.CUDA_ERROR_NOT_INITIALIZED
        return error

    def _new_handle(self):
        with self._lock:
            self._next_handle += 1
            return self._next_handle

    def _find(self, address):
        """(bytearray, offset) of the allocation holding device ``address``."""
        base, buffer = self._allocation(address)
        return buffer, address - base

    def _allocation(self, address):
        """(base address, bytearray) of the allocation holding device ``address``."""
        # A snapshot: other threads (the async executor, a finaliser) allocate and
        # free while this one looks an address up.
        for base, (buffer, _device, _pool) in list(self.allocations.items()):
            if base <= address < base + max(len(buffer), 1):
                return base, buffer
        raise ValueError(f"FakeDriver: {address:#x} is not device memory")

    def _queue(self, stream, entry):
        self.streams.setdefault(_handle(stream), []).append(entry)

    def _current_device(self):
        return getattr(self._local, "device", 0)

    # -- initialisation and devices ------------------------------------------------

    def cuInit(self, flags):
        error = self._enter("cuInit")
        if error is not None:
            return (error,)
        self.initialized = True
        return (_SUCCESS,)

    def cuDriverGetVersion(self):
        # The real call needs no cuInit either.
        self.calls.append("cuDriverGetVersion")
        error = self._failures.pop("cuDriverGetVersion", None)
        return (error, 0) if error is not None else (_SUCCESS, self.driver_version)

    def cuDeviceGetCount(self):
        error = self._enter("cuDeviceGetCount")
        return (error, 0) if error is not None else (_SUCCESS, self.devices)

    def cuDeviceGet(self, ordinal):
        error = self._enter("cuDeviceGet")
        if error is None and not 0 <= ordinal < self.devices:
            error = _real.CUresult.CUDA_ERROR_INVALID_DEVICE
        return (error, None) if error is not None else (_SUCCESS, _real.CUdevice(ordinal))

    def cuDeviceGetAttribute(self, attrib, dev):
        error = self._enter("cuDeviceGetAttribute")
        if error is not None:
            return (error, 0)
        values = {
            _real.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: self.compute_capability[0],
            _real.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: self.compute_capability[1],
            _real.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 108,
            _real.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: 1024,
            _real.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: 1,
        }
        if attrib not in values:
            return (_real.CUresult.CUDA_ERROR_NOT_SUPPORTED, 0)
        return (_SUCCESS, values[attrib])

    def cuDevicePrimaryCtxRetain(self, dev):
        error = self._enter("cuDevicePrimaryCtxRetain")
        return (error, None) if error is not None else (_SUCCESS, _real.CUcontext(0x100 + int(dev)))

    def cuCtxSetCurrent(self, ctx):
        error = self._enter("cuCtxSetCurrent")
        if error is not None:
            return (error,)
        self._local.device = _handle(ctx) - 0x100
        return (_SUCCESS,)

    def cuCtxGetCurrent(self):
        error = self._enter("cuCtxGetCurrent")
        if error is not None:
            return (error, None)
        device = getattr(self._local, "device", None)
        return (_SUCCESS, _real.CUcontext(0 if device is None else 0x100 + device))

    # -- streams and events ------------------------------------------------------------

    def cuStreamCreate(self, flags):
        error = self._enter("cuStreamCreate")
        if error is not None:
            return (error, None)
        handle = self._new_handle()
        self.streams[handle] = []
        self.stream_flags[handle] = int(flags)
        return (_SUCCESS, _real.CUstream(handle))

    def cuStreamDestroy(self, stream):
        error = self._enter("cuStreamDestroy")
        if error is not None:
            return (error,)
        self.destroyed.append(_handle(stream))
        return (_SUCCESS,)

    def cuStreamSynchronize(self, stream):
        error = self._enter("cuStreamSynchronize")
        if error is not None:
            return (error,)
        self._queue(stream, ("synchronize",))
        self._release_over_threshold()
        return (_SUCCESS,)

    def cuEventCreate(self, flags):
        error = self._enter("cuEventCreate")
        return (error, None) if error is not None else (_SUCCESS, _real.CUevent(self._new_handle()))

    def cuEventDestroy(self, event):
        error = self._enter("cuEventDestroy")
        if error is not None:
            return (error,)
        self.destroyed.append(_handle(event))
        return (_SUCCESS,)

    def cuEventRecord(self, event, stream):
        error = self._enter("cuEventRecord")
        if error is not None:
            return (error,)
        entries = self.streams.setdefault(_handle(stream), [])
        self.events[_handle(event)] = (_handle(stream), len(entries))
        entries.append(("record", _handle(event)))
        return (_SUCCESS,)

    def cuEventQuery(self, event):
        error = self._enter("cuEventQuery")
        if error is not None:
            return (error,)
        # Work runs as it is queued here: a recorded event is always reached.
        return (_SUCCESS,)

    def cuStreamWaitEvent(self, stream, event, flags):
        error = self._enter("cuStreamWaitEvent")
        if error is not None:
            return (error,)
        self._queue(stream, ("wait", _handle(event)))
        return (_SUCCESS,)

    def cuEventSynchronize(self, event):
        error = self._enter("cuEventSynchronize")
        return (error,) if error is not None else (_SUCCESS,)

    def cuEventElapsedTime(self, start, end):
        # Kernels do not run here, so no time passes: the answer is ``event_elapsed_ms``
        # (a class attribute a test may override), once both events were recorded.
        error = self._enter("cuEventElapsedTime")
        if error is None and not (_handle(start) in self.events and _handle(end) in self.events):
            error = _real.CUresult.CUDA_ERROR_INVALID_HANDLE
        return (error, 0.0) if error is not None else (_SUCCESS, self.event_elapsed_ms)

    # -- memory pools and allocations ----------------------------------------------

    def cuDeviceGetDefaultMemPool(self, dev):
        error = self._enter("cuDeviceGetDefaultMemPool")
        return (error, None) if error is not None else (_SUCCESS, _real.CUmemoryPool(0x200 + int(dev)))

    def _pool(self, pool):
        return self.pools[_handle(pool) - 0x200]

    def cuMemPoolSetAttribute(self, pool, attr, value):
        error = self._enter("cuMemPoolSetAttribute")
        if error is not None:
            return (error,)
        state = self._pool(pool)
        attrs = _real.CUmemPool_attribute
        if attr == attrs.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
            state.release_threshold = int(value)
        elif attr == attrs.CU_MEMPOOL_ATTR_USED_MEM_HIGH:
            state.used_high = int(value)
        elif attr == attrs.CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
            state.reserved_high = int(value)
        else:
            return (_real.CUresult.CUDA_ERROR_NOT_SUPPORTED,)
        return (_SUCCESS,)

    def cuMemPoolGetAttribute(self, pool, attr):
        error = self._enter("cuMemPoolGetAttribute")
        if error is not None:
            return (error, 0)
        state = self._pool(pool)
        attrs = _real.CUmemPool_attribute
        values = {
            attrs.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: state.release_threshold,
            attrs.CU_MEMPOOL_ATTR_USED_MEM_CURRENT: state.used,
            attrs.CU_MEMPOOL_ATTR_USED_MEM_HIGH: state.used_high,
            attrs.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: state.reserved,
            attrs.CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: state.reserved_high,
        }
        if attr not in values:
            return (_real.CUresult.CUDA_ERROR_NOT_SUPPORTED, 0)
        return (_SUCCESS, values[attr])

    def cuMemPoolTrimTo(self, pool, min_bytes_to_keep):
        error = self._enter("cuMemPoolTrimTo")
        if error is not None:
            return (error,)
        state = self._pool(pool)
        keep = max(min_bytes_to_keep - state.used, 0)
        if state.cached > keep:
            state.reserved -= state.cached - keep
            state.cached = keep
        return (_SUCCESS,)

    def _release_over_threshold(self):
        # The driver gives cached memory back at synchronisation beyond the threshold.
        for state in self.pools.values():
            excess = state.reserved - max(state.release_threshold, state.used)
            if excess > 0 and state.cached > 0:
                released = min(excess, state.cached)
                state.cached -= released
                state.reserved -= released

    def cuMemAllocFromPoolAsync(self, bytesize, pool, stream):
        error = self._enter("cuMemAllocFromPoolAsync")
        if error is not None:
            return (error, None)
        state = self._pool(pool)
        reuse = min(state.cached, bytesize)
        if state.reserved - reuse + bytesize > self.memory_bytes:
            return (_real.CUresult.CUDA_ERROR_OUT_OF_MEMORY, None)
        state.cached -= reuse
        state.reserved += bytesize - reuse
        state.used += bytesize
        state.used_high = max(state.used_high, state.used)
        state.reserved_high = max(state.reserved_high, state.reserved)
        with self._lock:
            address = self._next_address
            self._next_address += (bytesize + 255) // 256 * 256 + 256
        self.allocations[address] = (_stale_bytes(bytesize), state.device, state.device)
        self._queue(stream, ("alloc", address, bytesize))
        return (_SUCCESS, _real.CUdeviceptr(address))

    def cuMemFreeAsync(self, dptr, stream):
        error = self._enter("cuMemFreeAsync")
        if error is not None:
            return (error,)
        address = _handle(dptr)
        if address not in self.allocations:
            return (_real.CUresult.CUDA_ERROR_INVALID_VALUE,)
        buffer, _device, pool_device = self.allocations.pop(address)
        state = self.pools[pool_device]
        state.used -= len(buffer)
        state.cached += len(buffer)
        self._queue(stream, ("free", address, len(buffer)))
        return (_SUCCESS,)

    # -- copies ----------------------------------------------------------------------------

    def cuMemcpyHtoDAsync(self, dst, src, byte_count, stream):
        error = self._enter("cuMemcpyHtoDAsync")
        if error is not None:
            return (error,)
        buffer, offset = self._find(_handle(dst))
        if isinstance(src, int):
            buffer[offset : offset + byte_count] = ctypes.string_at(src, byte_count)
        else:
            buffer[offset : offset + byte_count] = memoryview(src).cast("B")[:byte_count]
        self._queue(stream, ("copy", "HtoD", _handle(dst), byte_count))
        return (_SUCCESS,)

    def cuMemHostAlloc(self, bytesize, flags):
        error = self._enter("cuMemHostAlloc")
        if error is not None:
            return (error, 0)
        memory = ctypes.create_string_buffer(max(int(bytesize), 1))
        address = ctypes.addressof(memory)
        self.host_allocations[address] = memory
        return (_SUCCESS, address)

    def cuMemFreeHost(self, p):
        error = self._enter("cuMemFreeHost")
        if error is not None:
            return (error,)
        if self.host_allocations.pop(int(p), None) is None:
            return (_real.CUresult.CUDA_ERROR_INVALID_VALUE,)
        return (_SUCCESS,)

    def cuMemcpyDtoHAsync(self, dst, src, byte_count, stream):
        error = self._enter("cuMemcpyDtoHAsync")
        if error is not None:
            return (error,)
        buffer, offset = self._find(_handle(src))
        data = bytes(buffer[offset : offset + byte_count])
        if isinstance(dst, int):
            ctypes.memmove(dst, data, byte_count)
        else:
            memoryview(dst).cast("B")[:byte_count] = data
        self._queue(stream, ("copy", "DtoH", _handle(src), byte_count))
        return (_SUCCESS,)

    def cuMemcpyDtoDAsync(self, dst, src, byte_count, stream):
        error = self._enter("cuMemcpyDtoDAsync")
        if error is not None:
            return (error,)
        source, src_offset = self._find(_handle(src))
        target, dst_offset = self._find(_handle(dst))
        target[dst_offset : dst_offset + byte_count] = source[src_offset : src_offset + byte_count]
        self._queue(stream, ("copy", "DtoD", _handle(dst), byte_count))
        return (_SUCCESS,)

    def cuMemcpy2DAsync(self, copy, stream):
        error = self._enter("cuMemcpy2DAsync")
        if error is not None:
            return (error,)
        host = _real.CUmemorytype.CU_MEMORYTYPE_HOST
        width, height = int(copy.WidthInBytes), int(copy.Height)
        for row in range(height):
            src_at = int(copy.srcXInBytes) + (int(copy.srcY) + row) * int(copy.srcPitch)
            dst_at = int(copy.dstXInBytes) + (int(copy.dstY) + row) * int(copy.dstPitch)
            if copy.srcMemoryType == host:
                data = ctypes.string_at(int(copy.srcHost) + src_at, width)
            else:
                source, offset = self._find(int(copy.srcDevice) + src_at)
                data = bytes(source[offset : offset + width])
            if copy.dstMemoryType == host:
                ctypes.memmove(int(copy.dstHost) + dst_at, data, width)
            else:
                target, offset = self._find(int(copy.dstDevice) + dst_at)
                target[offset : offset + width] = data
        self._queue(stream, ("copy", "2D", int(copy.dstDevice), width * height))
        return (_SUCCESS,)

    def cuMemsetD8Async(self, dst, value, count, stream):
        error = self._enter("cuMemsetD8Async")
        if error is not None:
            return (error,)
        buffer, offset = self._find(_handle(dst))
        buffer[offset : offset + count] = bytes([value & 0xFF]) * count
        self._queue(stream, ("memset", _handle(dst), count))
        return (_SUCCESS,)

    # -- modules and launches --------------------------------------------------------

    def cuModuleLoadData(self, image):
        error = self._enter("cuModuleLoadData")
        if error is not None:
            return (error, None)
        if not isinstance(image, str) and bytes(image[:4]) == b"\x7fELF":
            return self._load_cubin(bytes(image))
        text = bytes(image).decode(errors="replace") if not isinstance(image, str) else image
        kernels = {}
        for name, params in kernel_files.ptx_entries(text).items():
            kernels[name] = params
        if not kernels:
            return (_real.CUresult.CUDA_ERROR_INVALID_IMAGE, None)
        version = _PTX_VERSION.search(text)
        if version is not None and self._ptx_isa_too_new((int(version.group(1)), int(version.group(2)))):
            return (_real.CUresult.CUDA_ERROR_UNSUPPORTED_PTX_VERSION, None)
        handle = self._new_handle()
        self.modules[handle] = kernels
        self.module_images[handle] = image
        return (_SUCCESS, _real.CUmodule(handle))

    def _ptx_isa_too_new(self, isa):
        """Whether this driver cannot JIT PTX of ``isa``; an ISA beyond kernel_files'
        table is taken to need a driver newer than any it lists."""
        table = kernel_files.PTX_ISA_MIN_DRIVER
        if isa in table:
            return table[isa] > self.driver_version
        return isa > max(table) and self.driver_version <= max(table.values())

    def _load_cubin(self, image):
        flags = int.from_bytes(image[48:52], "little")
        sm = (flags >> 8) & 0xFF if image[7] == _ELFOSABI_CUDA_V2 else flags & 0xFF
        major, minor = self.compute_capability
        if sm // 10 != major or sm % 10 > minor:
            return (_real.CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU, None)
        declared = {
            kernel: entry["params"]
            for module in kernel_files.manifest()["modules"].values()
            for kernel, entry in module["kernels"].items()
        }
        kernels = {}
        for name in _CUBIN_SECTION.findall(image):
            name = name.decode()
            if name not in declared:
                raise ValueError(f"FakeDriver: CUBIN kernel {name} is not in ndd's kernel manifest")
            kernels[name] = [kernel_files.PTX_PARAM_TYPE[kind] for kind in declared[name]]
        if not kernels:
            return (_real.CUresult.CUDA_ERROR_INVALID_IMAGE, None)
        handle = self._new_handle()
        self.modules[handle] = kernels
        self.module_images[handle] = image
        return (_SUCCESS, _real.CUmodule(handle))

    def cuModuleUnload(self, module):
        error = self._enter("cuModuleUnload")
        return (error,) if error is not None else (_SUCCESS,)

    def cuModuleGetFunction(self, module, name):
        error = self._enter("cuModuleGetFunction")
        if error is not None:
            return (error, None)
        name = name.decode() if isinstance(name, bytes) else name
        kernels = self.modules.get(_handle(module), {})
        if name not in kernels:
            return (_real.CUresult.CUDA_ERROR_NOT_FOUND, None)
        handle = self._new_handle()
        self.functions[handle] = (name, kernels[name])
        return (_SUCCESS, _real.CUfunction(handle))

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared_bytes, stream, kernel_params, extra):
        error = self._enter("cuLaunchKernel")
        if error is not None:
            return (error,)
        name, types = self.functions[_handle(f)]
        if not _launch_fits((gx, gy, gz), (bx, by, bz), shared_bytes):
            return (_real.CUresult.CUDA_ERROR_INVALID_VALUE,)
        if not isinstance(kernel_params, int):
            raise TypeError("FakeDriver.cuLaunchKernel: kernelParams must be the address of a void* array")
        pointers = (ctypes.c_void_p * len(types)).from_address(kernel_params)
        args = []
        for kind, pointer in zip(types, pointers, strict=True):
            size = _SIZES[re.sub(r"\D", "", kind)]
            args.append(int.from_bytes(ctypes.string_at(pointer, size), "little"))
        launch = Launch(name, (gx, gy, gz), (bx, by, bz), shared_bytes, _handle(stream), args, types)
        self.launches.append(launch)
        self._queue(stream, ("launch", launch))
        if self.host_kernels is not None:
            self._run_on_host(launch, pointers)
        return (_SUCCESS,)

    def _run_on_host(self, launch, pointers):
        # Each allocation a pointer parameter reaches is run in a copy with guard bytes
        # on both sides: a kernel that writes outside its allocation (on a GPU: an
        # illegal address, or another buffer silently overwritten) fails the launch.
        staged = {}
        values = []
        for kind, pointer, value in zip(
            self.host_kernels.params(launch.function), pointers, launch.args, strict=True
        ):
            if kind != "ptr":
                values.append(ctypes.string_at(pointer, kernel_files.PARAM_KINDS[kind]))
                continue
            if value == 0:
                values.append(bytes(8))
                continue
            base, buffer = self._allocation(value)
            if base not in staged:
                staging = bytearray(_GUARD) + buffer + bytearray(_GUARD)
                staging[:_GUARD] = staging[-_GUARD:] = _GUARD_BYTES
                staged[base] = (buffer, staging)
            staging = staged[base][1]
            address = ctypes.addressof((ctypes.c_char * len(staging)).from_buffer(staging))
            values.append((address + _GUARD + value - base).to_bytes(8, "little"))
        self.host_kernels.launch(launch.function, launch.grid, launch.block, launch.shared_bytes, values)
        for base, (buffer, staging) in staged.items():
            size = len(buffer)
            if staging[:_GUARD] != _GUARD_BYTES or staging[_GUARD + size :] != _GUARD_BYTES:
                raise RuntimeError(
                    f"host kernel {launch.function} wrote outside the allocation of {size} bytes at "
                    f"{base:#x} (grid {launch.grid}, block {launch.block}); on a GPU that is an illegal "
                    "address or another buffer overwritten"
                )
            buffer[:] = staging[_GUARD : _GUARD + size]
