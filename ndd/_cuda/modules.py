"""ndd's kernel modules, loaded once per device, and their kernels ready to launch.

``get_function(device_id, "elementwise", "add_f32")`` loads the module on the
device the first time any of its kernels is asked for (one thread loads it; the
others wait for it), and returns a :class:`Kernel`: the ``CUfunction`` with the
parameter kinds the build manifest declares for it.

Which image loads is ``kernel_files.kernel_image``'s choice for the device's
compute capability and the driver's version (a CUBIN of the device's major
architecture, else PTX the driver can JIT). When there is none, or the driver
refuses it as too new or not for this GPU, the module is compiled with NVRTC for
the exact architecture (``kernel_files.compile_at_runtime``, cached on disk).

The handles belong to one driver and one process: installing another driver
(``driver.use_fake``) or forking starts from an empty cache.
"""

import threading
from dataclasses import dataclass

from . import context, driver, kernel_files
from .launch import Signature, launch

__all__ = ["Kernel", "get_function"]

# Load failures that mean "this image is not for this device or driver": compile instead.
_FALLBACK_ERRORS = frozenset(
    {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "CUDA_ERROR_NO_BINARY_FOR_GPU", "CUDA_ERROR_INVALID_PTX"}
)


@dataclass(frozen=True, eq=False)
class Kernel:
    """A kernel loaded on a device.

    Attributes
    ----------
    name, module
        Kernel and kernel module (file) names.
    device_id
        The device it is loaded on.
    function
        Its ``CUfunction``.
    signature
        Its parameter kinds, from the build manifest.
    """

    name: str
    module: str
    device_id: int
    function: object
    signature: Signature

    def launch(self, grid, block, stream, *args, shared_bytes: int = 0) -> None:
        """Launch on ``stream`` with ``args`` packed by the signature (see ``launch.launch``)."""
        launch(self.function, self.signature, grid, block, stream, args, shared_bytes)


class _Loaded:
    """Modules and kernels loaded through one driver."""

    def __init__(self, api):
        self.api = api
        self.lock = threading.Lock()  # guards module_locks
        self.module_locks = {}  # (device, module) -> the lock its loading holds
        self.modules = {}  # (device, module) -> CUmodule
        self.kernels = {}  # (device, module, kernel) -> Kernel
        self.driver_version = None


def _current() -> _Loaded:
    return context.cached("modules", _Loaded)


def get_function(device_id: int, module_name: str, kernel_name: str) -> Kernel:
    """The kernel ``kernel_name`` of the module ``module_name`` (``kernels/<module>.cu``)
    on device ``device_id``, loading the module the first time.

    Raises
    ------
    KeyError
        When the manifest has no such module or kernel.
    CudaError
        When the driver fails to load the module or find the kernel.
    RuntimeError
        When no shipped image loads and compiling at runtime fails (NVRTC missing).
    GpuUnavailableError
        Without a driver or a device.
    """
    loaded = _current()
    key = (device_id, module_name, kernel_name)
    kernel = loaded.kernels.get(key)
    if kernel is not None:
        return kernel
    params = _declared_params(module_name, kernel_name)
    # Loading needs the device's context current; the caller's is put back after.
    previous = context.current_context()
    context.make_current(device_id)
    try:
        with _module_lock(loaded, device_id, module_name):
            kernel = loaded.kernels.get(key)
            if kernel is None:
                module = loaded.modules.get((device_id, module_name))
                if module is None:
                    module = _load_module(loaded, device_id, module_name, kernel_name)
                    loaded.modules[(device_id, module_name)] = module
                function = driver.check(
                    loaded.api.cuModuleGetFunction(module, kernel_name.encode()),
                    f"kernel {module_name}.{kernel_name} on device {device_id}: cuModuleGetFunction",
                )
                kernel = Kernel(kernel_name, module_name, device_id, function, Signature(kernel_name, params))
                loaded.kernels[key] = kernel
    finally:
        context.restore_context(previous)
    return kernel


def _declared_params(module_name: str, kernel_name: str) -> list:
    modules = kernel_files.manifest()["modules"]
    if module_name not in modules:
        raise KeyError(
            f"kernel {module_name}.{kernel_name}: no kernel module {module_name!r}; shipped: {sorted(modules)}"
        )
    kernels = modules[module_name]["kernels"]
    if kernel_name not in kernels:
        raise KeyError(
            f"kernel module {module_name!r} has no kernel {kernel_name!r}; it has: {sorted(kernels)}"
        )
    return kernels[kernel_name]["params"]


def _module_lock(loaded: _Loaded, device_id: int, module_name: str) -> threading.Lock:
    with loaded.lock:
        return loaded.module_locks.setdefault((device_id, module_name), threading.Lock())


def _load_module(loaded: _Loaded, device_id: int, module_name: str, kernel_name: str):
    """Load a module into the current context (the device's primary one)."""
    api = loaded.api
    if loaded.driver_version is None:
        loaded.driver_version = int(driver.check(api.cuDriverGetVersion(), "cuDriverGetVersion"))
    version = loaded.driver_version
    capability = context.device_properties(device_id).compute_capability
    where = (
        f"kernel {module_name}.{kernel_name} on device {device_id} (compute capability "
        f"{capability[0]}.{capability[1]}, driver {version // 1000}.{version % 1000 // 10})"
    )
    chosen = kernel_files.kernel_image(module_name, capability, version)
    shipped = "no shipped image fits"
    if chosen is not None:
        kind, image = chosen
        result = api.cuModuleLoadData(image)
        if int(result[0]) == 0:
            return result[1]
        if result[0].name not in _FALLBACK_ERRORS:
            driver.check(result, f"{where}: loading the shipped {kind.upper()}")
        shipped = f"the driver refused the shipped {kind.upper()} ({result[0].name})"
    try:
        image = kernel_files.compile_at_runtime(module_name, capability)
    except RuntimeError as error:
        raise RuntimeError(f"{where}: {shipped}, and compiling at runtime failed: {error}") from error
    return driver.check(api.cuModuleLoadData(image), f"{where}: loading the CUBIN compiled at runtime")
