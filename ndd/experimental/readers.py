"""``ndd.experimental.readers``: the readers the reference marks experimental.

``Video`` reads sequences of frames of video files, decoded on the CPU with FFmpeg
through PyAV (``pip install 'ndd[video]'``). ``Fits`` reads the image HDUs of FITS
files (astronomy images), decoded with astropy (``pip install 'ndd[fits]'``)."""

from ..readers.experimental_video import Video
from ..readers.fits import Fits

__all__ = ["Fits", "Video"]
