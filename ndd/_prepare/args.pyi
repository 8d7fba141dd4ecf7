from typing import Any

from .philox import RandomKey

REQUIRED: object

class InvalidArgumentError(ValueError, TypeError): ...

class Arg:
    name: str
    kind: str
    default: Any
    per_sample: bool
    choices: tuple[str, ...] | None
    doc: str
    type_doc: str
    converted_default: Any
    draws_random: bool
    finite: bool
    rows: bool
    sizes: bool
    def __init__(
        self,
        name: str,
        kind: str,
        default: Any = ...,
        *,
        per_sample: bool = False,
        choices: Any = None,
        doc: str = "",
        type_doc: str = "",
        nonfinite: bool = False,
        rows: bool = False,
        sizes: bool = False,
    ) -> None: ...
    @property
    def required(self) -> bool: ...
    def convert(self, op: Any, value: Any) -> Any: ...

def draw_random_key(op: Any, name: str, rng: Any) -> RandomKey: ...
