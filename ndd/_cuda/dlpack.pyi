from typing import Any

DLPACK_MAJOR: int
DLPACK_MINOR: int

def export_capsule(
    owner: Any,
    ptr: int,
    shape: tuple[int, ...],
    dtype: tuple[int, int, int],
    device_type: int,
    device_id: int,
    versioned: bool = False,
    read_only: bool = False,
) -> Any: ...

class Producer:
    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None
    dtype: tuple[int, int, int]
    device: tuple[int, int]
    read_only: bool

def import_capsule(capsule: Any) -> Producer: ...
