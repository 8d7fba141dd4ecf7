"""The optional dependencies: imported on first use, with an error that says what to
install where one is missing."""

import importlib

__all__ = ["import_optional"]


def import_optional(module: str, needs: str, extra: str):
    """Module ``module``, or an ImportError ``"<needs>: pip install 'ndd[<extra>]'"``, where
    ``needs`` says who needs what (``"ndd.optical_flow needs OpenCV (the
    'opencv-python-headless' package)"``)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{needs}: pip install 'ndd[{extra}]'") from exc
