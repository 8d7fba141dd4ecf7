"""The CUDA driver as ndd reaches it: which bindings, whether a device can be
used, and one way of turning driver errors into exceptions.

Every driver call in ndd goes through ``api()``: cuda-python's
``cuda.bindings.driver`` (12.x or 13.x), or the recording ``FakeDriver`` a test
installs with ``use_fake``. ``import ndd`` touches neither; the first GPU use
initialises the driver (``cuInit``) and, without a driver or a device, raises
``GpuUnavailableError`` saying which.
"""

import contextlib
import os
import threading

__all__ = [
    "CudaError",
    "GpuUnavailableError",
    "InvalidGpuIdError",
    "api",
    "check",
    "device_count",
    "require_gpu",
    "reset_probe",
    "use_fake",
]

_fake = None
# cuInit once, even when several threads make their first GPU call together.
_probe_lock = threading.Lock()
_probe_result = None


class GpuUnavailableError(RuntimeError):
    """Raised on the first GPU use when no usable CUDA device is present."""


class InvalidGpuIdError(GpuUnavailableError, ValueError):
    """A GPU device id (``device_id``) given where no CUDA device is present: a
    ValueError, as the reference's invalid device id is, and a GpuUnavailableError."""

    def __init__(self, message, device_id):
        super().__init__(message)
        self.device_id = device_id


class CudaError(RuntimeError):
    """A CUDA driver call failed; ``code`` is its CUresult."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


def api():
    """The driver bindings in use (the fake one while ``use_fake`` is active)."""
    if _fake is not None:
        return _fake
    if _bindings is None:
        return _import_bindings()
    return _bindings


# cuda.bindings.driver once imported (every operator call asks for it a dozen times,
# and an import statement costs as much as the rest of api()).
_bindings = None


def _import_bindings():
    global _bindings
    from cuda.bindings import driver

    _bindings = driver
    return driver


def check(result, what):
    """The values of a driver call's ``(CUresult, values...)`` tuple: None for none,
    the value for one, a tuple for more; raises CudaError naming ``what`` on failure."""
    error = result[0]
    if int(error) != 0:
        name = getattr(error, "name", str(error))
        raise CudaError(f"{what} failed: {name}", error)
    if len(result) == 1:
        return None
    if len(result) == 2:
        return result[1]
    return result[1:]


@contextlib.contextmanager
def use_fake(fake):
    """Make ``fake`` (a ``FakeDriver``) the driver for the duration of the block."""
    global _fake
    previous = _fake
    _fake = fake
    reset_probe()
    try:
        yield fake
    finally:
        _fake = previous
        reset_probe()


def _probe():
    """Return ``(count, reason)``: the CUDA device count and why it is 0 (probed once)."""
    global _probe_result
    with _probe_lock:
        if _probe_result is None:
            _probe_result = _first_probe()
        return _probe_result


def reset_probe():
    """Forget the probe's answer (another driver installed, or a forked child)."""
    global _probe_result
    with _probe_lock:
        _probe_result = None


def _new_probe_lock_in_child():
    # Another thread may have held the lock when the process forked.
    global _probe_lock
    _probe_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_probe_lock_in_child)


def _first_probe():
    try:
        driver = api()
    except ImportError:
        return 0, "cuda-python is not installed (pip install 'ndd[gpu]')"
    try:
        (err,) = driver.cuInit(0)
    except Exception as exc:  # the driver library itself may be missing
        return 0, f"no CUDA driver was found ({exc})"
    if int(err) != 0:
        return 0, f"the CUDA driver failed to initialize ({err.name})"
    err, count = driver.cuDeviceGetCount()
    if int(err) != 0 or count == 0:
        return 0, "no CUDA device was found"
    return count, ""


def device_count() -> int:
    """Number of CUDA devices usable through cuda-python (0 without a GPU)."""
    return _probe()[0]


def require_gpu(what: str, device_id=None) -> None:
    """Raise GpuUnavailableError naming ``what`` when no GPU can be used (an
    InvalidGpuIdError when ``device_id`` names one)."""
    count, reason = _probe()
    if count == 0:
        if device_id is not None:
            raise InvalidGpuIdError(
                f"{what}: invalid device id {device_id}: there is no CUDA GPU ({reason}). Use device='cpu'.",
                device_id,
            )
        raise GpuUnavailableError(f"{what} needs a CUDA GPU, but {reason}. Use device='cpu'.")
