"""The optional dependencies: imported on first use, with an error that says what to
install where one is missing or too old."""

import importlib
import re

__all__ = ["import_optional", "release", "torch_module"]


def release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version string: ``"17.1.0rc1"`` gives (17, 1, 0)."""
    numbers = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(n) for n in numbers.group(0).split(".")) if numbers else ()


def import_optional(module: str, needs: str, extra: str, minimum: tuple[int, ...] | None = None):
    """Module ``module``, or an ImportError ``"<needs>: pip install 'ndd[<extra>]'"``, where
    ``needs`` says who needs what (``"ndd.optical_flow needs OpenCV (the
    'opencv-python-headless' package)"``). With ``minimum``, a module whose
    ``__version__`` is older is refused the same way, saying which version it is."""
    try:
        found = importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{needs}: pip install 'ndd[{extra}]'") from exc
    version = str(getattr(found, "__version__", ""))
    if minimum is not None and release(version) < minimum:
        wanted = ".".join(map(str, minimum))
        raise ImportError(f"{needs} {wanted} or newer, not {version}: pip install -U 'ndd[{extra}]'")
    return found


# Tensor.torch() and Batch.torch() hand every ndd type but bfloat16 to torch through DLPack:
# torch 2.3 added the unsigned types of 16 to 64 bits and bool's DLPack exchange.
TORCH_MINIMUM = (2, 3)


def torch_module(who: str):
    """torch, for ``who`` (``"Tensor.torch()"``); a RuntimeError, as the reference raises,
    where it is missing or older than the torch extra asks."""
    try:
        return import_optional("torch", f"{who} needs PyTorch", "torch", TORCH_MINIMUM)
    except ImportError as exc:
        raise RuntimeError(str(exc)) from None
