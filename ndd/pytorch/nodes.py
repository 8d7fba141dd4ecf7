"""ndd readers and operators as ``torchdata.nodes`` graphs.

Three nodes make a PyTorch input pipeline out of ndd::

    import pathlib

    import torchdata.nodes as tn
    from ndd.pytorch import nodes

    photos = sorted(str(p) for p in (pathlib.Path(ndd.__file__).parent / "_sample_data" / "photos").glob("*.jpg"))

    def augment(encoded):
        images = ndd.decoders.image(encoded)
        return ndd.crop_mirror_normalize(ndd.resize(images, size=(224, 224)), dtype=ndd.float32)

    source = nodes.Reader(ndd.readers.File, batch_size=4, files=photos)
    loader = tn.Loader(nodes.ToTorch(nodes.DictMapper(source, augment)))
    for images, labels in loader:  # torch.Tensors
        print(images.shape, labels.shape)  # torch.Size([4, 3, 224, 224]) torch.Size([4, 1])

``Reader`` yields one dict of outputs per batch, ``DictMapper`` applies a
function to one entry of each dict, and ``ToTorch`` turns each dict into a tuple
of ``torch.Tensor``.  torchdata may pull a node from a thread of its own
(``Prefetcher``, ``ParallelMapper``): each node's ``next()`` runs with the ndd
device, and the torch CUDA device, that were current when it was ``reset()``.

Unlike the reference, the nodes can be checkpointed: ``Loader.state_dict()``
holds the reader's position (``ndd.readers`` checkpointing, on by default here),
and ``Loader.load_state_dict`` resumes from it with a new reader of the same
arguments.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import torch
import torchdata.nodes as tn

from .._batch import Batch
from .._eval.device import Device
from .._tensor import Tensor
from ..readers._base import Reader as _ReaderBase

__all__ = ["DictMapper", "Reader", "ToTorch"]


class _DeviceBoundNode(tn.BaseNode):
    """A node whose ``next()`` runs with the devices that were current at ``reset()``.

    Subclasses implement ``_reset(initial_state)`` and ``_next()``.
    """

    def __init__(self):
        super().__init__()
        self._ndd_device = None
        self._torch_device = None

    def reset(self, initial_state: dict | None = None):
        super().reset(initial_state)
        current = Device.current()
        self._ndd_device = current if current.device_type == "gpu" else None
        cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
        self._torch_device = torch.cuda.current_device() if cuda else None
        self._reset(initial_state)

    def next(self):
        with contextlib.ExitStack() as stack:
            if self._ndd_device is not None:
                stack.enter_context(self._ndd_device)
            if self._torch_device is not None:
                stack.enter_context(torch.cuda.device(self._torch_device))
            return self._next()


def _check_source(where: str, source) -> None:
    if not isinstance(source, tn.BaseNode):
        raise TypeError(f"{where}: 'source' must be a torchdata.nodes.BaseNode, got {type(source).__name__}")


def _source_state(where: str, initial_state: dict | None):
    """The source's part of a state saved by ``get_state`` (None: start from the beginning)."""
    if initial_state is None:
        return None
    if not isinstance(initial_state, dict) or "source" not in initial_state:
        raise ValueError(f"{where}.reset: not a state of this node: {initial_state!r}")
    return initial_state["source"]


class _OneSourceNode(_DeviceBoundNode):
    """A node over one ``source`` node, whose state is the source's."""

    _WHERE = ""

    def __init__(self, source: tn.BaseNode):
        super().__init__()
        _check_source(self._WHERE, source)
        self.source = source

    def _reset(self, initial_state):
        self.source.reset(_source_state(self._WHERE, initial_state))

    def get_state(self) -> dict:
        return {"source": self.source.state_dict()}


class Reader(_DeviceBoundNode):
    """An ndd reader as a node: one dict of outputs per batch (or per sample).

    Each ``reset()`` starts the reader's next epoch; ``reset(state)`` with a state
    from ``get_state`` constructs a new reader and continues where that state
    was taken.

    Parameters
    ----------
    reader_type : type
        A reader class, e.g. ``ndd.readers.File``; the node constructs it with
        ``reader_kwargs``.
    batch_size : int or None
        Samples per item (also the reader's ``max_batch_size`` unless given);
        None yields one sample (a dict of Tensors) at a time.
    output_names : iterable of str, optional
        The keys of the dicts, one per output of the reader. Readers with two
        outputs default to ``("data", "label")``; readers that name their
        outputs themselves (``TFRecord``: its features) default to their names.
    **reader_kwargs
        Arguments of the reader. ``enable_checkpointing`` defaults to True, so
        that ``get_state`` (``Loader.state_dict``) works.
    """

    _WHERE = "ndd.pytorch.nodes.Reader"

    def __init__(
        self,
        reader_type: type,
        *,
        batch_size: int | None,
        output_names: Iterable[str] | None = None,
        **reader_kwargs: Any,
    ):
        super().__init__()
        if not (isinstance(reader_type, type) and issubclass(reader_type, _ReaderBase)):
            raise TypeError(
                f"{self._WHERE}: 'reader_type' must be a reader class such as ndd.readers.File, "
                f"got {reader_type!r}"
            )
        if batch_size is not None and reader_kwargs.get("max_batch_size") is None:
            reader_kwargs["max_batch_size"] = batch_size
        if reader_kwargs.get("enable_checkpointing") is None:
            reader_kwargs["enable_checkpointing"] = True
        self._reader_type = reader_type
        self._reader_kwargs = reader_kwargs
        self._reader = reader_type(**reader_kwargs)
        self._batch_size = batch_size
        self._epoch = None
        self._output_names = self._names(output_names)

    def _names(self, output_names):
        reader = self._reader
        count = reader._num_outputs()
        names_itself = type(reader)._package is not _ReaderBase._package
        if output_names is None:
            if names_itself:
                return None
            if count == 2:
                return ("data", "label")
            raise ValueError(
                f"{self._WHERE}: {self._reader_type.__qualname__} has {count} output(s); "
                f"give 'output_names' ({count} name(s)), only two-output readers default to "
                "('data', 'label')"
            )
        if isinstance(output_names, str):
            raise TypeError(f"{self._WHERE}: 'output_names' must be an iterable of str, not one str")
        names = tuple(output_names)
        if not all(isinstance(n, str) for n in names):
            raise TypeError(f"{self._WHERE}: 'output_names' must be str, got {names!r}")
        if len(names) != count:
            raise ValueError(
                f"{self._WHERE}: {len(names)} output name(s) {names!r} for the {count} output(s) "
                f"of {self._reader_type.__qualname__}"
            )
        if len(set(names)) != len(names):
            raise ValueError(f"{self._WHERE}: 'output_names' repeats a name: {names!r}")
        return names

    def _reset(self, initial_state):
        if initial_state is not None:
            text = initial_state.get("reader") if isinstance(initial_state, dict) else None
            if text is None:
                raise ValueError(
                    f"{self._WHERE}.reset: the state holds no reader position ({initial_state!r}); "
                    "it was saved from a reader constructed with enable_checkpointing=False"
                )
            reader = self._reader_type(**self._reader_kwargs)
            reader.set_state(text)
            self._reader = reader
        self._epoch = self._reader.next_epoch(batch_size=self._batch_size)

    def _next(self):
        outputs = next(self._epoch)
        if isinstance(outputs, dict):
            if self._output_names is None:
                return outputs
            outputs = tuple(outputs.values())
        return dict(zip(self._output_names, outputs, strict=True))

    def get_state(self) -> dict:
        """``{"reader": <the reader's state>}``, or ``{}`` for a reader without checkpointing."""
        if not self._reader._checkpointing:
            return {}
        return {"reader": str(self._reader.get_state())}

    def get_metadata(self) -> dict:
        """The reader's ``get_metadata()`` for this node's batch size."""
        return self._reader.get_metadata(self._batch_size)


class DictMapper(_OneSourceNode):
    """Applies ``map_fn`` to the entry ``key`` of each dict from ``source``; the other entries pass."""

    _WHERE = "ndd.pytorch.nodes.DictMapper"

    def __init__(self, source: tn.BaseNode, map_fn: Callable, key: str = "data"):
        super().__init__(source)
        if not callable(map_fn):
            raise TypeError(f"{self._WHERE}: 'map_fn' must be callable, got {type(map_fn).__name__}")
        self.map_fn = map_fn
        self.key = key

    def _next(self):
        item = next(self.source)
        if not isinstance(item, dict) or self.key not in item:
            keys = list(item) if isinstance(item, dict) else type(item).__name__
            raise KeyError(f"{self._WHERE}: the source's item has no entry {self.key!r} (it has {keys})")
        out = dict(item)
        out[self.key] = self.map_fn(item[self.key])
        return out


class ToTorch(_OneSourceNode):
    """Turns each dict from ``source`` into a tuple of ``torch.Tensor``, in the dict's order.

    ndd Tensors and Batches are converted with ``.torch()`` (without a copy where
    their memory allows). When any entry is on a GPU, the CPU entries are copied
    to that GPU, so that a model gets all its inputs on one device; entries on
    two different GPUs are an error. The conversion runs on ``output_stream``
    (default: torch's current stream when the node is made, when CUDA is
    available), to which ndd orders its GPU work.
    """

    _WHERE = "ndd.pytorch.nodes.ToTorch"

    def __init__(self, source: tn.BaseNode, output_stream=None):
        super().__init__(source)
        if output_stream is None and torch.cuda.is_available():
            output_stream = torch.cuda.current_stream()
        self.output_stream = output_stream

    def _next(self):
        item = next(self.source)
        if not isinstance(item, dict):
            raise TypeError(f"{self._WHERE}: the source must yield dicts, got {type(item).__name__}")
        gpus = {key: _gpu_id(value) for key, value in item.items()}
        ids = {i for i in gpus.values() if i is not None}
        if len(ids) > 1:
            where = {k: f"gpu:{i}" for k, i in gpus.items() if i is not None}
            raise ValueError(f"{self._WHERE}: all GPU entries must be on one GPU, got {where}")
        target = torch.device("cuda", ids.pop()) if ids else None
        stream = torch.cuda.stream(self.output_stream) if self.output_stream is not None else None
        with stream if stream is not None else contextlib.nullcontext():
            out = []
            for key, value in item.items():
                t = _to_torch(self._WHERE, key, value)
                if target is not None and gpus[key] is None:
                    t = t.to(target)
                out.append(t)
        return tuple(out)


def _gpu_id(value):
    """The GPU index of an entry, None for host data."""
    if isinstance(value, (Tensor, Batch)):
        dev = value.device
        return dev.device_id if dev.device_type == "gpu" else None
    if isinstance(value, torch.Tensor) and value.is_cuda:
        return value.device.index
    return None


def _to_torch(where, key, value):
    if isinstance(value, (Tensor, Batch)):
        return value.torch()
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value)
    raise TypeError(
        f"{where}: entry {key!r} is a {type(value).__name__}; expected an ndd Tensor or Batch, "
        "a torch.Tensor or a numpy array"
    )
