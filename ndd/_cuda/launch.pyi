from collections.abc import Sequence
from typing import Any

class Signature:
    kernel: str
    kinds: tuple[str, ...]
    def __init__(self, kernel: str, kinds: Sequence[str]) -> None: ...

def launch(
    function: Any,
    signature: Signature,
    grid: int | Sequence[int],
    block: int | Sequence[int],
    stream: Any,
    args: Sequence[Any],
    shared_bytes: int = 0,
) -> None: ...
def grid_for(n: int, block: int = 256, max_blocks: int = 65535) -> int: ...
