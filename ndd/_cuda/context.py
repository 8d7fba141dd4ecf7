"""Driver initialisation and the primary context of each device.

The driver is initialised on first GPU use, once (under a lock, so that two
threads starting together do not race). Each device has one primary context,
retained once for the life of the process and shared with every other library
that uses the runtime API (PyTorch, CuPy), so their pointers and streams are
valid in ndd and the other way round. ``make_current`` makes a device's context
current on the calling thread.

Everything cached here lives in one ``RuntimeState``: a fresh one replaces it in
a forked child (a child must not reuse its parent's contexts, streams or pool
handles) and when a test installs another driver with ``driver.use_fake``.
Objects that release driver resources when collected (streams, buffers, events)
keep the state they were made in and do nothing once it is stale.
"""

import threading
from dataclasses import dataclass, field
from typing import NamedTuple

from .._eval.fork import on_fork_in_child
from . import driver

__all__ = ["DeviceProperties", "RuntimeState", "device_properties", "initialize", "make_current", "state"]


class DeviceProperties(NamedTuple):
    """What ndd needs to know about a device to choose kernels and launch shapes."""

    compute_capability: tuple
    sm_count: int
    max_threads_per_block: int
    memory_pools_supported: bool


@dataclass(eq=False)
class RuntimeState:
    """The driver objects ndd holds for one driver and one process."""

    api: object
    initialized: bool = False
    device_count: int = 0
    contexts: dict = field(default_factory=dict)  # device id -> CUcontext (retained)
    properties: dict = field(default_factory=dict)  # device id -> DeviceProperties
    pools: dict = field(default_factory=dict)  # device id -> CUmemoryPool (see memory.py)
    streams: dict = field(default_factory=dict)  # device id -> WeakSet of live streams (see streams.py)
    caches: dict = field(default_factory=dict)  # other modules' per-driver caches (see cached())


_lock = threading.RLock()
_state = None


def state() -> RuntimeState:
    """The state for the driver now in use (a new one after a fork or a driver switch)."""
    global _state
    api = driver.api()
    current = _state
    if current is None or current.api is not api:
        with _lock:
            if _state is None or _state.api is not api:
                _state = RuntimeState(api)
            current = _state
    return current


def cached(name: str, factory):
    """The object ``factory(api)`` made once for the driver now in use and kept under
    ``name`` (the kernel modules of modules.py): a fork or another driver starts anew."""
    current = state()
    value = current.caches.get(name)
    if value is None:
        with _lock:
            value = current.caches.get(name)
            if value is None:
                value = current.caches[name] = factory(current.api)
    return value


def initialize(what: str = "the GPU runtime") -> RuntimeState:
    """Initialise the driver (once) and return the state; raises GpuUnavailableError
    naming ``what`` without a driver or a device."""
    current = state()
    if not current.initialized:
        with _lock:
            if not current.initialized:
                # driver.require_gpu runs cuInit and counts the devices, once per driver.
                driver.require_gpu(what)
                current.device_count = driver.device_count()
                current.initialized = True
    return current


def _check_device(current: RuntimeState, device_id: int) -> None:
    if not isinstance(device_id, int) or not 0 <= device_id < current.device_count:
        raise ValueError(f"Invalid device id {device_id}. Must be in range [0..{current.device_count - 1}].")


def primary_context(device_id: int):
    """The primary context of ``device_id`` (a CUcontext), retained on first use."""
    current = initialize()
    context = current.contexts.get(device_id)
    if context is None:
        _check_device(current, device_id)
        with _lock:
            context = current.contexts.get(device_id)
            if context is None:
                api = current.api
                device = driver.check(api.cuDeviceGet(device_id), f"cuDeviceGet({device_id})")
                context = driver.check(
                    api.cuDevicePrimaryCtxRetain(device),
                    f"retaining the primary context of device {device_id}",
                )
                current.contexts[device_id] = context
    return context


def make_current(device_id: int) -> None:
    """Make the primary context of ``device_id`` current on the calling thread.

    The thread's current context is asked for rather than remembered, because
    other libraries in the process (PyTorch, CuPy) change it too.
    """
    context = primary_context(device_id)
    api = state().api
    active = driver.check(api.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if active is not None and int(active) == int(context):
        return
    driver.check(api.cuCtxSetCurrent(context), f"making device {device_id} current")


def current_context():
    """The context current on the calling thread (a CUcontext, 0 when none)."""
    current = initialize()
    return driver.check(current.api.cuCtxGetCurrent(), "cuCtxGetCurrent")


def restore_context(context) -> None:
    """Make ``context`` (from ``current_context``) current again."""
    driver.check(state().api.cuCtxSetCurrent(context), "restoring the current context")


def device_properties(device_id: int) -> DeviceProperties:
    """Compute capability, SM count and limits of a device (queried once)."""
    current = initialize()
    properties = current.properties.get(device_id)
    if properties is None:
        _check_device(current, device_id)
        api = current.api
        device = driver.check(api.cuDeviceGet(device_id), f"cuDeviceGet({device_id})")
        attribute = api.CUdevice_attribute

        def query(name):
            what = f"reading {name} of device {device_id}"
            return int(driver.check(api.cuDeviceGetAttribute(getattr(attribute, name), device), what))

        properties = DeviceProperties(
            compute_capability=(
                query("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"),
                query("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"),
            ),
            sm_count=query("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
            max_threads_per_block=query("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
            memory_pools_supported=bool(query("CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED")),
        )
        current.properties[device_id] = properties
    return properties


class _ForkReset:
    """Drops the parent's driver state in a forked child: the child initialises
    the driver again on its first GPU use."""

    def _after_fork_in_child(self):
        global _state, _lock
        _lock = threading.RLock()  # the parent may have held it while forking
        _state = None
        driver.reset_probe()


_fork_reset = _ForkReset()
on_fork_in_child(_fork_reset)
