from typing import Any, NoReturn

class PerSample:
    values: list[Any]
    def __init__(self, values: list[Any]) -> None: ...

class PendingArg:
    spec: Any
    source: Any
    def __init__(self, spec: Any, source: Any) -> None: ...

class Invocation:
    op: Any
    inputs: tuple[Any, ...] | None
    args: dict[str, Any] | None
    batch_size: int
    num_outputs: int
    device: Any
    ctx: Any
    outputs: list[Any] | None
    error: BaseException | None
    call_site: tuple[str, int] | None
    done: bool
    queued: bool
    deferred: bool
    seq: int
    def run(self) -> None: ...
    def ensure_run(self) -> None: ...
    def wait(self) -> None: ...

def raise_run_error(inv: Invocation) -> NoReturn: ...
def gpu_context(ctx: Any, device_id: int) -> Any: ...
def per_sample_args(args: dict[str, Any], batch_size: int) -> list[dict[str, Any]]: ...
def schedule(inv: Invocation, external: bool) -> None: ...
