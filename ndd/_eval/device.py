"""``Device``: where data lives and operators run."""

import threading

from .._cuda import driver

__all__ = ["Device", "device"]

_tls = threading.local()


class Device:
    """A CPU or a CUDA device: ``Device("cpu")``, ``Device("gpu")``, ``Device("gpu:1")``.

    ``"cuda"`` is accepted as a synonym of ``"gpu"`` (so torch device names work).
    Used as a context manager, a device becomes the calling thread's current one
    (for a GPU, its CUDA context becomes current too, until the block ends).
    """

    __slots__ = ("device_type", "device_id", "_hash")

    CPU: "Device"

    def __init__(self, name: str, device_id: int | None = None):
        if not isinstance(name, str):
            raise TypeError(f"Device name must be a string, got {type(name).__name__}")
        dev_type, _, id_text = name.partition(":")
        if dev_type == "cuda":
            dev_type = "gpu"
        if dev_type not in ("cpu", "gpu"):
            raise ValueError(f"Invalid device type: {dev_type}")
        if id_text:
            if device_id is not None:
                raise ValueError(f"Device id given twice: in {name!r} and as device_id={device_id}")
            try:
                device_id = int(id_text)
            except ValueError:
                raise ValueError(f"Invalid device id in {name!r}") from None
        if dev_type == "cpu":
            device_id = None
        else:
            driver.require_gpu(f"Device({name!r})", device_id)
            if device_id is None:
                device_id = Device.default_device_id("gpu")
            count = driver.device_count()
            if not 0 <= device_id < count:
                raise ValueError(f"Invalid device id {device_id}. Must be in range [0..{count - 1}].")
        self.device_type = dev_type
        self.device_id = device_id
        self._hash = hash((dev_type, device_id))

    def __str__(self):
        return self.device_type if self.device_id is None else f"{self.device_type}:{self.device_id}"

    def __repr__(self):
        if self.device_id is None:
            return f"Device(device_type='{self.device_type}')"
        return f"Device(device_type='{self.device_type}', device_id={self.device_id})"

    def __eq__(self, other):
        if not isinstance(other, Device):
            return NotImplemented
        return self.device_type == other.device_type and self.device_id == other.device_id

    def __hash__(self):
        return self._hash

    def __enter__(self):
        # A GPU device also makes its primary context current on this thread, so
        # that driver calls made inside the block (by ndd or the caller) use it;
        # the context current before is restored on exit.
        saved = None
        if self.device_type == "gpu":
            from .._cuda import context

            saved = context.current_context()
            context.make_current(self.device_id)
        _device_stack().append(self)
        _saved_contexts().append(saved)

    def __exit__(self, *exc_info):
        _device_stack().pop()
        saved = _saved_contexts().pop()
        if saved is not None:
            from .._cuda import context

            context.restore_context(saved)

    @staticmethod
    def default_device_id(device_type: str) -> int | None:
        """The id used when none is given: None for the CPU, the current GPU otherwise."""
        if device_type == "cpu":
            return None
        for dev in reversed(_device_stack()):
            if dev.device_type == "gpu":
                return dev.device_id
        return 0

    @staticmethod
    def type_from_dlpack(dev_type: int) -> str:
        """Map a DLPack device type code to ``"cpu"`` or ``"gpu"``."""
        if dev_type in (1, 3):  # kDLCPU, kDLCUDAHost
            return "cpu"
        if dev_type in (2, 13):  # kDLCUDA, kDLCUDAManaged
            return "gpu"
        raise ValueError(f"Unsupported DLPack device type: {dev_type}")

    @staticmethod
    def from_dlpack(dlpack_device) -> "Device":
        """The device of an object exposing ``__dlpack_device__``."""
        dev_type, dev_id = dlpack_device.__dlpack_device__()
        name = Device.type_from_dlpack(int(dev_type))
        return Device.CPU if name == "cpu" else Device(name, int(dev_id))

    @staticmethod
    def current() -> "Device":
        """The calling thread's current device: the innermost ``with Device``,
        else the GPU when one is present, else the CPU."""
        stack = _device_stack()
        if stack:
            return stack[-1]
        if driver.device_count() > 0:
            return Device("gpu", 0)
        return Device.CPU


def device_stack_active() -> bool:
    """Whether a ``with Device`` is active on the calling thread."""
    return bool(_tls.__dict__.get("stack"))


def _device_stack():
    stack = getattr(_tls, "stack", None)
    if stack is None:
        stack = _tls.stack = []
    return stack


def _saved_contexts():
    saved = getattr(_tls, "saved_contexts", None)
    if saved is None:
        saved = _tls.saved_contexts = []
    return saved


Device.CPU = Device("cpu")


def device(obj, id: int | None = None) -> Device | None:  # noqa: A002 - reference name
    """Convert a DeviceLike (Device, ``"cpu"``/``"gpu:0"``/``"cuda"``, torch.device) to a Device."""
    if obj is None:
        return None
    if isinstance(obj, Device):
        if id is not None:
            raise ValueError("device(): an id cannot be given with a Device object")
        return obj
    if isinstance(obj, str):
        if obj == "cpu" and id is None:
            return Device.CPU
        return Device(obj, id)
    if type(obj).__name__ == "device" and hasattr(obj, "type") and hasattr(obj, "index"):
        name = "gpu" if obj.type == "cuda" else obj.type
        return Device(name, obj.index if id is None else id)
    raise TypeError(f"Cannot convert {type(obj).__name__} to a Device")
