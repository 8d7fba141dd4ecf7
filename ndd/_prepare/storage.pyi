from typing import Any

import numpy as np

class TensorBase:
    _data: Any
    _inv: Any
    _out: int
    _sample: int
    _shape: tuple[int, ...] | None
    _dtype: Any
    _layout: str
    _device: Any
    _external: bool
    _source_info: str | None

class BatchBase:
    _samples: list[np.ndarray] | None
    _dense: np.ndarray | None
    _gpu: Any
    _inv: Any
    _out: int
    _shapes: list[tuple[int, ...]] | None
    _dtype: Any
    _layout: str
    _device: Any
    _batch_size: int
    _external: bool
    _source_info: list[str] | None

def tensor_data(t: TensorBase) -> np.ndarray: ...
def batch_samples(b: BatchBase) -> list[np.ndarray]: ...
def batch_dense(b: BatchBase) -> np.ndarray | None: ...
def batch_ready(b: BatchBase) -> bool: ...
def batch_wait(b: BatchBase) -> object | None: ...
def register_device_batch_type(cls: type) -> None: ...
