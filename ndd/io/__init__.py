"""``ndd.io``: reading raw data (``ndd.io.file.read``)."""

from . import file

__all__ = ["file"]
