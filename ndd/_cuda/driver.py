"""Driver discovery: whether a CUDA device can be used, and a clear error when not."""

import functools

__all__ = ["GpuUnavailableError", "device_count", "require_gpu"]


class GpuUnavailableError(RuntimeError):
    """Raised on the first GPU use when no usable CUDA device is present."""


@functools.cache
def _probe():
    """Return ``(count, reason)``: the CUDA device count and why it is 0."""
    try:
        from cuda.bindings import driver
    except ImportError:
        return 0, "cuda-python is not installed (pip install 'ndd[gpu]')"
    try:
        (err,) = driver.cuInit(0)
    except Exception as exc:  # the driver library itself may be missing
        return 0, f"the CUDA driver could not be loaded ({exc})"
    if err != driver.CUresult.CUDA_SUCCESS:
        return 0, f"the CUDA driver failed to initialize ({err.name})"
    err, count = driver.cuDeviceGetCount()
    if err != driver.CUresult.CUDA_SUCCESS or count == 0:
        return 0, "no CUDA device was found"
    return count, ""


def device_count() -> int:
    """Number of CUDA devices usable through cuda-python (0 without a GPU)."""
    return _probe()[0]


def require_gpu(what: str) -> None:
    """Raise GpuUnavailableError naming ``what`` when no GPU can be used."""
    count, reason = _probe()
    if count == 0:
        raise GpuUnavailableError(f"{what} needs a CUDA GPU, but {reason}. Use device='cpu'.")
