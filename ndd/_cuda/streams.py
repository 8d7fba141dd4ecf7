"""CUDA stream handles. The GPU runtime (issue #5) implements these with cuda-python;
until it lands, reaching this module means a GPU exists but is not yet supported."""

from .driver import GpuUnavailableError


def _not_yet():
    raise GpuUnavailableError("CUDA streams are not supported by this build of ndd yet; use device='cpu'.")


def wrap_or_create(stream, device_id):
    _not_yet()


def synchronize(handle):
    _not_yet()
