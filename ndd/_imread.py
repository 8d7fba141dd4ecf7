"""``ndd.imread``: read image files and decode them in one call."""

import os

import numpy as np

from . import decoders, io
from ._batch import Batch, batch
from ._tensor import Tensor, tensor

__all__ = ["imread"]

_DECODER_ARGS = (
    "adjust_orientation",
    "affine",
    "cache_batch_copy",
    "cache_debug",
    "cache_size",
    "cache_threshold",
    "cache_type",
    "device_memory_padding",
    "device_memory_padding_jpeg2k",
    "dtype",
    "host_memory_padding",
    "host_memory_padding_jpeg2k",
    "hw_decoder_load",
    "hybrid_huffman_threshold",
    "jpeg_fancy_upsampling",
    "memory_stats",
    "output_type",
    "preallocate_height_hint",
    "preallocate_width_hint",
    "split_stages",
    "use_chunk_allocator",
    "use_fast_idct",
)


def _path_bytes(path):
    if isinstance(path, (str, os.PathLike)):
        return np.frombuffer(os.fsencode(path), np.uint8).copy()
    raise TypeError(f"ndd.imread: a path must be a str or os.PathLike, got {type(path).__name__}")


def _as_paths(filepaths):
    """A Tensor (one path) or Batch (several) of UTF-8 path bytes."""
    if isinstance(filepaths, (Tensor, Batch)):
        return filepaths
    if isinstance(filepaths, (list, tuple)):
        return batch([_path_bytes(p) for p in filepaths])
    return tensor(_path_bytes(filepaths))


def imread(filepaths, /, *, device="cpu", **decoder_args):
    """Read image files and decode them: ``ndd.io.file.read`` then ``ndd.decoders.image``.

    Parameters
    ----------
    filepaths : str, os.PathLike, list or tuple of them, Tensor or Batch
        One path (the result is a Tensor), a list or tuple of paths (a Batch), or
        uint8 tensors holding UTF-8 path bytes.
    device : str
        ``"cpu"`` or ``"gpu"``: where the images are decoded.
    **decoder_args
        Any keyword argument of ``ndd.decoders.image`` (``output_type``, ``dtype``,
        ``adjust_orientation``, ...).

    Returns
    -------
    Tensor or Batch
        The decoded images, HWC.
    """
    if device not in ("cpu", "gpu"):
        raise ValueError(f"ndd.imread: 'device' must be 'cpu' or 'gpu', got {device!r}")
    unknown = sorted(set(decoder_args) - set(_DECODER_ARGS))
    if unknown:
        raise TypeError(f"imread() got an unexpected keyword argument {unknown[0]!r}")
    data = io.file.read(_as_paths(filepaths))
    # The decoders name the file of a sample they cannot decode, as for a reader's.
    if isinstance(filepaths, (str, os.PathLike)):
        data._source_info = os.fspath(filepaths)
    elif isinstance(filepaths, (list, tuple)):
        data._source_info = [os.fspath(p) for p in filepaths]
    return decoders.image(data, device=device, **decoder_args)


def _signature():
    """The reference's signature: every decoder argument as a keyword defaulting to None."""
    import inspect

    params = [
        inspect.Parameter("filepaths", inspect.Parameter.POSITIONAL_ONLY),
        inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default="cpu"),
    ]
    params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None) for n in _DECODER_ARGS]
    return inspect.Signature(params)


imread.__signature__ = _signature()
