"""``ndd.experimental.readers``: the readers the reference marks experimental.

``Video`` reads sequences of frames of video files, decoded on the CPU with FFmpeg
through PyAV (``pip install 'ndd[video]'``)."""

from ..readers.experimental_video import Video

__all__ = ["Video"]
