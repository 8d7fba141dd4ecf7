"""CUDA streams and events on the driver API.

``wrap_or_create`` turns what ``ndd.Stream`` accepts into a raw handle, its
device and an owner object that keeps it valid: a new non-blocking stream, an
object exposing ``__cuda_stream__``, a PyTorch stream, or a raw integer handle.
A stream ndd creates is destroyed when its owner is collected. That may happen
while work is still queued on it: ``cuStreamDestroy`` returns at once and the
driver releases the stream only after that work completes, so nothing queued is
lost and collection never blocks. A wrapped object is referenced by its owner,
so the library that made it cannot destroy it while ndd uses it.

``Event`` orders work across streams (``record`` on the producer, ``wait`` on
the consumer) without blocking the host.
"""

import weakref

from . import driver
from .context import initialize, make_current, state

__all__ = ["Event", "StreamOwner", "live_streams", "order_after", "synchronize", "wrap_or_create"]


class StreamOwner:
    """Keeps a stream usable: ``source`` is the wrapped object (None for a stream
    ndd created or a raw handle); ``owned`` says whether ndd destroys it."""

    __slots__ = ("handle", "device_id", "source", "owned", "runtime", "__weakref__")

    def __init__(self, handle, device_id, source, owned, runtime):
        self.handle = handle
        self.device_id = device_id
        self.source = source
        self.owned = owned
        self.runtime = runtime

    @property
    def stale(self) -> bool:
        """Whether the stream belongs to another driver or to the parent of a fork."""
        return self.runtime is not state()


def _destroy_stream(runtime, handle):
    if runtime is not state():
        return  # made by another driver or in the parent of a fork: not ours to destroy
    driver.check(runtime.api.cuStreamDestroy(handle), f"destroying CUDA stream {handle:#x}")


def _register(runtime, owner):
    streams = runtime.streams.get(owner.device_id)
    if streams is None:
        streams = runtime.streams.setdefault(owner.device_id, weakref.WeakSet())
    streams.add(owner)


def _default_device():
    from .._eval.device import Device

    return Device.default_device_id("gpu")


def _device_of(obj):
    """The device an existing stream object names, or None when it names none."""
    device_id = getattr(obj, "device_id", None)
    if device_id is not None:
        return int(device_id)
    device = getattr(obj, "device", None)
    if isinstance(device, int):
        return device
    for name in ("index", "id", "device_id"):
        value = getattr(device, name, None)
        if isinstance(value, int):
            return value
    return None


def _handle_of(obj):
    """The raw handle of a stream object or an int (None when it is neither)."""
    if isinstance(obj, bool):
        return None
    if isinstance(obj, int):
        return obj
    protocol = getattr(obj, "__cuda_stream__", None)
    if protocol is not None:
        version, handle = protocol()
        if version != 0:
            raise ValueError(f"ndd.Stream: __cuda_stream__ version {version} is not supported (expected 0)")
        return int(handle)
    handle = getattr(obj, "cuda_stream", None)  # torch.cuda.Stream
    if isinstance(handle, int):
        return handle
    return None


def create(device_id: int) -> StreamOwner:
    """A new non-blocking stream on ``device_id``, destroyed when the owner goes."""
    runtime = initialize("ndd.Stream")
    make_current(device_id)
    flags = int(runtime.api.CUstream_flags.CU_STREAM_NON_BLOCKING)
    handle = int(
        driver.check(runtime.api.cuStreamCreate(flags), f"creating a CUDA stream on device {device_id}")
    )
    owner = StreamOwner(handle, device_id, None, True, runtime)
    weakref.finalize(owner, _destroy_stream, runtime, handle).atexit = False
    _register(runtime, owner)
    return owner


def wrap_or_create(stream, device_id):
    """``(handle, device_id, owner)`` for what ``ndd.Stream(stream=...)`` accepts.

    A raw handle carries no device: it is taken to be on ``device_id``, else on
    the current device.
    """
    from .._eval.stream import Stream

    if stream is Stream.create_new:
        owner = create(_default_device() if device_id is None else device_id)
        return owner.handle, owner.device_id, owner
    if isinstance(stream, Stream):
        if device_id is not None and device_id != stream.device_id:
            raise ValueError(f"ndd.Stream: the stream is on device {stream.device_id}, not {device_id}")
        return stream.handle, stream.device_id, stream._owner
    handle = _handle_of(stream)
    if handle is None:
        raise TypeError(
            f"ndd.Stream: cannot use a {type(stream).__name__} as a CUDA stream; expected an object "
            "with __cuda_stream__, a PyTorch stream or an integer handle"
        )
    named = None if isinstance(stream, int) else _device_of(stream)
    if named is not None and device_id is not None and named != device_id:
        raise ValueError(f"ndd.Stream: the stream {handle:#x} is on device {named}, not {device_id}")
    device = named if named is not None else (_default_device() if device_id is None else device_id)
    runtime = initialize("ndd.Stream")
    owner = StreamOwner(handle, device, None if isinstance(stream, int) else stream, False, runtime)
    _register(runtime, owner)
    return handle, device, owner


def live_streams(device_id: int) -> list:
    """Handles of the streams of ``device_id`` that ndd holds now."""
    streams = state().streams.get(device_id)
    return [] if streams is None else [owner.handle for owner in list(streams)]


def synchronize(handle) -> None:
    """Wait on the host until the work queued on stream ``handle`` completes."""
    runtime = initialize()
    driver.check(runtime.api.cuStreamSynchronize(handle), f"synchronizing CUDA stream {int(handle):#x}")


def _destroy_event(runtime, event):
    if runtime is state():
        driver.check(runtime.api.cuEventDestroy(event), "destroying a CUDA event")


class Event:
    """A CUDA event on a device (timing disabled: it only orders work).

    ``record(stream)`` marks the current end of a stream's work; ``wait(stream)``
    makes another stream wait for that mark without blocking the host;
    ``synchronize()`` blocks the host until it is reached; ``query()`` tells
    whether it is reached. The event is destroyed
    when collected; the driver keeps it alive until pending waits complete.
    """

    __slots__ = ("event", "device_id", "__weakref__")

    def __init__(self, device_id: int):
        runtime = initialize()
        make_current(device_id)
        flags = int(runtime.api.CUevent_flags.CU_EVENT_DISABLE_TIMING)
        self.event = driver.check(
            runtime.api.cuEventCreate(flags), f"creating a CUDA event on device {device_id}"
        )
        self.device_id = device_id
        weakref.finalize(self, _destroy_event, runtime, self.event).atexit = False

    def record(self, stream) -> "Event":
        driver.check(
            state().api.cuEventRecord(self.event, stream), f"recording an event on stream {int(stream):#x}"
        )
        return self

    def wait(self, stream) -> None:
        driver.check(
            state().api.cuStreamWaitEvent(stream, self.event, 0),
            f"making stream {int(stream):#x} wait for an event",
        )

    def synchronize(self) -> None:
        driver.check(state().api.cuEventSynchronize(self.event), "synchronizing a CUDA event")

    def query(self) -> bool:
        """Whether the work before the recorded mark is done (never blocks)."""
        api = state().api
        (result,) = api.cuEventQuery(self.event)
        if result == api.CUresult.CUDA_ERROR_NOT_READY:
            return False
        driver.check((result,), "querying a CUDA event")
        return True


def order_after(consumer, producer, device_id: int) -> None:
    """Make work queued later on stream ``consumer`` wait for the work queued so
    far on stream ``producer`` (no-op when they are the same stream)."""
    if int(consumer) == int(producer):
        return
    Event(device_id).record(producer).wait(consumer)
