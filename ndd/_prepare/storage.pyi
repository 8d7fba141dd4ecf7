from typing import Any

import numpy as np

class TensorBase:
    _data: np.ndarray | None
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
