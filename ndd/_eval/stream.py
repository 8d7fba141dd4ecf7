"""CUDA streams as seen by the API: ``Stream`` and the current/default stream functions.

The CPU side (no stream, clearing streams) works everywhere. Creating or using a
real stream needs the GPU runtime, which raises a clear error when no GPU exists.
"""

import threading

from .._cuda import driver

__all__ = [
    "Stream",
    "stream",
    "set_default_stream",
    "get_default_stream",
    "set_current_stream",
    "get_current_stream",
]

_default_streams = {}
_default_streams_lock = threading.Lock()


class _CreateNew:
    def __repr__(self):
        return "Stream.create_new"


class Stream:
    """A CUDA stream: new (``Stream.create_new``), or wrapping an existing one
    (a Stream, an object with ``__cuda_stream__``, a torch stream, or a raw handle)."""

    create_new = _CreateNew()

    def __init__(self, *, stream=create_new, device_id: int | None = None):
        if stream is None:
            raise ValueError("Stream: stream must not be None")
        driver.require_gpu("ndd.Stream")
        from .._cuda import streams

        self._handle, self._device_id, self._owner = streams.wrap_or_create(stream, device_id)

    @property
    def handle(self) -> int:
        """The CUDA stream handle (``CUstream``) as an int."""
        return self._handle

    @property
    def device_id(self) -> int:
        """The GPU the stream belongs to."""
        return self._device_id

    def __cuda_stream__(self):
        return (0, self._handle)

    def synchronize(self) -> None:
        """Wait until all work queued on the stream has run."""
        from .._cuda import streams

        streams.synchronize(self._handle)

    def __eq__(self, other):
        if not isinstance(other, Stream):
            return NotImplemented
        return self._handle == other._handle and self._device_id == other._device_id

    def __hash__(self):
        return hash((self._handle, self._device_id))

    def __str__(self):
        return f"CUDA stream {self._handle}, device_id={self._device_id}"


def stream(*, stream=Stream.create_new, device_id: int | None = None) -> Stream | None:
    """Get a ``Stream``: a new one, or one wrapping ``stream``; ``None`` gives None."""
    if stream is None:
        return None
    if isinstance(stream, Stream):
        if device_id is not None and device_id != stream.device_id:
            raise ValueError(f"stream(): the stream is on device {stream.device_id}, not {device_id}")
        return stream
    return Stream(stream=stream, device_id=device_id)


def set_default_stream(cuda_stream, /, device_id: int | None = None) -> None:
    """Set the process-wide default stream of a device; ``None`` clears it."""
    key = device_id
    if cuda_stream is not None:
        cuda_stream = stream(stream=cuda_stream, device_id=device_id)
        key = cuda_stream.device_id
    elif key is None and driver.device_count() > 0:
        from .device import Device

        key = Device.default_device_id("gpu")
    with _default_streams_lock:
        if cuda_stream is None:
            _default_streams.pop(key, None)
        else:
            _default_streams[key] = cuda_stream


def get_default_stream(device_id: int | None = None) -> Stream | None:
    """The stream set by ``set_default_stream`` for a device, or None."""
    if device_id is None and driver.device_count() > 0:
        from .device import Device

        device_id = Device.default_device_id("gpu")
    return _default_streams.get(device_id)


def set_current_stream(cuda_stream, /) -> None:
    """Set the stream of the calling thread's default EvalContext; ``None`` resets it."""
    from .context import EvalContext

    EvalContext.default()._set_stream(None if cuda_stream is None else stream(stream=cuda_stream))


def get_current_stream() -> Stream | None:
    """The stream of the calling thread's default EvalContext (None without a GPU)."""
    from .context import EvalContext

    return EvalContext.default().cuda_stream
