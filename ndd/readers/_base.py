"""The reader base class: constructor arguments, epochs, sharding, prefetching
and state. Each reader format subclasses ``Reader`` and says only how to list
its samples and how to read one."""

import abc
import base64
import collections
import inspect
import json
import os
import threading
import weakref

import numpy as np

from .._errors import as_runtime_error, raise_as_runtime_error
from .._eval.device import Device
from .._eval.fork import on_fork_in_child
from .._eval.thread_pool import ThreadPool, get_num_threads
from .._prepare.args import REQUIRED, Arg, InvalidArgumentError
from ._loader import Loader
from ._loader import exiting as loader_exiting
from ._stream import OrderConfig, SampleOrder

__all__ = ["Reader", "ReaderState", "path_list"]

# Format version of the reader state; states of another version are refused.
STATE_VERSION = 1

# The stop event of a chunk loaded outside a loading thread: never set.
_NEVER = threading.Event()
_MIXED_STYLES = "Cannot mix `samples`, `batches` and `_run`/`__call__` on the same reader."
_INT32_MAX = 2**31 - 1


def _valid_batch_size(value):
    """A batch size is a positive int within int32, as the reference's."""
    return not isinstance(value, bool) and isinstance(value, int) and 1 <= value <= _INT32_MAX


def _common_args(shuffle_after_epoch):
    args = [
        Arg("dont_use_mmap", "bool", False, doc="Read files with ``read()`` instead of memory-mapping."),
        Arg("initial_fill", "int", 1024, doc="Size of the buffer ``random_shuffle`` draws samples from."),
        Arg("lazy_init", "bool", False, doc="List the dataset at first use instead of at construction."),
        Arg("num_shards", "int", 1, doc="Number of parts the dataset is split into (one per process)."),
        Arg(
            "pad_last_batch",
            "bool",
            False,
            doc="Every epoch reads exactly this shard, padded with its last sample to the size of the "
            "largest shard and to whole batches, so that all shards yield the same number of batches.",
        ),
        Arg(
            "prefetch_queue_depth",
            "int",
            1,
            doc="Batches read ahead on the loading thread (at least one more than this is kept).",
        ),
        Arg(
            "random_shuffle",
            "bool",
            False,
            doc="Draw each sample at random from a buffer of ``initial_fill`` upcoming samples of the "
            "shard being read, in a fixed order of the dataset that every process shares (shards stay "
            "disjoint whatever their seeds); with ``pad_last_batch`` the padding repeats the last sample "
            "drawn.",
        ),
        Arg("read_ahead", "bool", False, doc="Accepted for compatibility; reading ahead is always on."),
        Arg("seed", "int", -1, doc="Seed of ``random_shuffle``; -1 draws one from the operating system."),
        Arg("shard_id", "int", 0, doc="Which shard (0 ... num_shards - 1) this reader reads first."),
        Arg("skip_cached_images", "bool", False, doc="Accepted for compatibility; has no effect."),
        Arg(
            "stick_to_shard",
            "bool",
            False,
            doc="Keep reading the same shard every epoch instead of moving to the next one.",
        ),
        Arg("tensor_init_bytes", "int", 1048576, doc="Accepted for compatibility; has no effect."),
    ]
    if shuffle_after_epoch:
        args += [
            Arg(
                "shuffle_after_epoch",
                "bool",
                False,
                doc="Read the dataset in a new random order every epoch; every process of a sharded "
                "job draws the same order, so shards stay disjoint.",
            ),
            Arg(
                "shuffle_after_epoch_seed",
                "int",
                None,
                doc="Seed of the ``shuffle_after_epoch`` order (0 when not given). Must be the same "
                "in every process of a sharded job.",
            ),
        ]
    return args


class ReaderState:
    """An opaque, serialisable snapshot of a reader's position (``str()`` round-trips)."""

    __slots__ = ("_text",)

    def __init__(self, text: str):
        self._text = text

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"ReaderState({self._text!r})"

    def __eq__(self, other):
        if isinstance(other, ReaderState):
            return self._text == other._text
        if isinstance(other, str):
            return self._text == other
        return NotImplemented

    def __hash__(self):
        return hash(self._text)


class Reader(abc.ABC):
    """Base of the reader classes (``ndd.readers.File`` and the others).

    A subclass declares ``ARGS`` (its own constructor arguments, ``Arg`` specs),
    ``OUTPUTS`` (output names, for documentation) and implements:

    - ``_list_samples()``: the dataset, a list of entries (raising clear errors
      for missing or empty sources);
    - ``_read(entry)``: one sample as a tuple of numpy arrays (on the loading
      thread; raise an error naming the file for bad data);
    - ``_output_types()``: ``(DType, layout)`` of each output (or, for readers
      whose element types come from the data, ``_sample_types(arrays)``);
    - ``_describe(entry)``: the sample's source (a path) for ``source_info``, or a
      tuple of one source per output (Webdataset: each output is another file).
    """

    ARGS = ()
    OUTPUTS = ()
    SHUFFLE_AFTER_EPOCH = True
    # Devices the reader can produce data on.
    DEVICES = ("cpu",)
    # The reader's name in its saved states (the class name when None): readers of
    # the same class name in two namespaces keep their states apart.
    STATE_TAG = None
    # Readers whose samples take long to load (they decode) set this: the samples of a
    # chunk then load on a thread pool of get_num_threads() threads.
    _parallel_loading = False
    _arg_specs = ()
    _qualname = "ndd.readers.Reader"
    # The public namespace the class is reached from (its qualname's prefix).
    NAMESPACE = "ndd.readers"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        specs = sorted(list(cls.ARGS) + _common_args(cls.SHUFFLE_AFTER_EPOCH), key=lambda a: a.name)
        cls._arg_specs = tuple(specs) + (Arg("enable_checkpointing", "bool", False),)
        cls._qualname = f"{cls.NAMESPACE}.{cls.__name__}"
        for spec in cls._arg_specs:
            if spec.default is not REQUIRED:
                spec.converted_default = spec.convert(cls, spec.default)
        cls.qualname = cls._qualname
        cls.__init__ = _make_init(cls)

    # -- construction -------------------------------------------------------
    def _setup(self, max_batch_size, name, device, num_inputs, kwargs):
        q = self._qualname
        if max_batch_size is not None:
            if not _valid_batch_size(max_batch_size):
                raise InvalidArgumentError(
                    f"{q}: 'max_batch_size' must be a positive int32, got {max_batch_size!r}"
                )
        if num_inputs not in (None, 0):
            raise InvalidArgumentError(f"{q}: readers take no inputs, got num_inputs={num_inputs!r}")
        device_type = Device(device).device_type if not isinstance(device, Device) else device.device_type
        if device_type not in self.DEVICES:
            raise InvalidArgumentError(f"{q}: 'device' must be one of {list(self.DEVICES)}, got {device!r}")
        self.max_batch_size = max_batch_size
        self.name = name if name is not None else f"Reader_{id(self)}"
        self.device = device_type
        args = {}
        for spec in self._arg_specs:
            value = kwargs.get(spec.name)
            args[spec.name] = spec.converted_default if value is None else spec.convert(self, value)
        self._args = args
        self._validate_common(args)
        self._validate_args(args)
        self._checkpointing = args["enable_checkpointing"]
        seed = args["seed"]
        self._seed = seed if seed != -1 else int.from_bytes(os.urandom(8), "little")
        self._entries = None
        self._style = None
        self._batch_size = None
        self._order = None
        # Epochs whose generator ran to its end: they set the shard, and so the length,
        # of the next one (an epoch left early, even after its last batch, does not
        # move to the next shard), as in the reference.
        self._epoch = 0
        self._epoch_remaining = 0
        # Inside an epoch: its generator has not run to its end yet.
        self._in_epoch = False
        self._resume_epoch = False
        self._ready = collections.deque()
        self._returned = []
        self._taking = threading.Lock()
        self._loader = None
        self._loading_pool = None
        self._started = False
        self._pending_state = None
        # path -> (read-only descriptor, size in bytes), opened on first read and closed
        # with the reader: reads use os.pread, so the loading thread, the caller's thread
        # and forked children share them.
        self._descriptors = {}
        weakref.finalize(self, _close_all, self._descriptors)
        on_fork_in_child(self)
        if not args["lazy_init"]:
            self._ensure_listed()

    def _validate_common(self, args):
        q = self._qualname
        num_shards, shard_id = args["num_shards"], args["shard_id"]
        if num_shards < 1:
            raise InvalidArgumentError(f"{q}: 'num_shards' must be at least 1, got {num_shards}")
        if not 0 <= shard_id < num_shards:
            raise InvalidArgumentError(
                f"{q}: The shard_id={shard_id} is invalid. Must be in range [0..{num_shards - 1}]."
            )
        if args["initial_fill"] < 1:
            raise InvalidArgumentError(f"{q}: 'initial_fill' must be at least 1, got {args['initial_fill']}")
        if args["prefetch_queue_depth"] < 1:
            raise InvalidArgumentError(
                f"{q}: 'prefetch_queue_depth' must be at least 1, got {args['prefetch_queue_depth']}"
            )
        if args.get("shuffle_after_epoch") and args["random_shuffle"]:
            raise InvalidArgumentError(f"{q}: 'shuffle_after_epoch' and 'random_shuffle' cannot both be True")
        if args.get("shuffle_after_epoch") and args["stick_to_shard"]:
            raise InvalidArgumentError(f"{q}: 'shuffle_after_epoch' and 'stick_to_shard' cannot both be True")

    def _validate_args(self, args):  # noqa: B027 - optional hook, nothing to check by default
        """Check and normalise the reader's own arguments (subclasses)."""

    def _ensure_listed(self):
        if self._entries is None:
            try:
                self._entries = self._checked_entries()
            except Exception as exc:
                # A dataset that cannot be listed (a missing folder, a broken index) is
                # also a RuntimeError, as in the reference (ndd/_errors.py).
                raise_as_runtime_error(exc)
                raise
        return self._entries

    def _checked_entries(self):
        entries = self._list_samples()
        if len(entries) == 0:
            raise ValueError(f"{self._qualname}: the dataset is empty ({self._dataset_description()})")
        if len(entries) < self._args["num_shards"]:
            raise ValueError(
                f"{self._qualname}: 'num_shards'={self._args['num_shards']} is more than the "
                f"{len(entries)} samples of the dataset"
            )
        return entries

    def _dataset_description(self):
        return "no samples found"

    # -- what subclasses provide -------------------------------------------
    @abc.abstractmethod
    def _list_samples(self):
        """The dataset: a list of entries, one per sample."""

    @abc.abstractmethod
    def _read(self, entry):
        """One sample as a tuple of numpy arrays (runs on the loading thread)."""

    def _sample_types(self, arrays):
        """``(DType, layout)`` of each output of the sample ``arrays``; readers whose
        element type comes from the data (Numpy) read it from there."""
        return self._output_types()

    def _describe(self, entry):
        return ""

    def _package(self, outputs):
        """The value yielded per sample/batch from the list of outputs."""
        return tuple(outputs)

    def _num_outputs(self):
        """How many outputs each sample has, known before the first read."""
        return len(self._output_types())

    def _load_sample(self, index):
        entry = self._entries[index]
        return self._read(entry), self._describe(entry)

    # -- sample order -------------------------------------------------------
    def _order_config(self):
        a = self._args
        return OrderConfig(
            len(self._ensure_listed()),
            num_shards=a["num_shards"],
            shard_id=a["shard_id"],
            stick_to_shard=a["stick_to_shard"],
            pad_last_batch=a["pad_last_batch"],
            shuffle_after_epoch=a.get("shuffle_after_epoch", False),
            shuffle_after_epoch_seed=a.get("shuffle_after_epoch_seed"),
            random_shuffle=a["random_shuffle"],
            initial_fill=a["initial_fill"],
            seed=a["seed"],
        )

    def _start(self, style, batch_size):
        """Fix the iteration style and batch size at first use; later uses must agree."""
        if self._style is None:
            self._style = style
        elif self._style != style:
            raise RuntimeError(_MIXED_STYLES)
        order_batch = batch_size or 1
        if self._batch_size is None:
            self._batch_size = order_batch
        elif order_batch != self._batch_size:
            raise ValueError(
                f"{self._qualname}: batch_size {order_batch} is different than the max_batch_size "
                f"{self._batch_size} used in the previous call"
            )
        if self._order is None:
            self._order = SampleOrder(self._order_config(), self._batch_size, self._seed)
            if self._pending_state is not None:
                self._apply_state(self._pending_state)
                self._pending_state = None
        self._started = True

    def _check_batch_size(self, batch_size):
        if batch_size is None:
            return
        if not _valid_batch_size(batch_size):
            raise InvalidArgumentError(
                f"{self._qualname}: 'batch_size' must be a positive int32, got {batch_size!r}"
            )
        if self.max_batch_size is not None and batch_size > self.max_batch_size:
            raise ValueError(
                f"{self._qualname}: batch_size {batch_size} is larger than the reader's max_batch_size "
                f"{self.max_batch_size}"
            )

    def _open(self, path, what):
        """A read-only descriptor of the file at ``path`` (the caller closes it); ``what``
        names the file in the error of one that cannot be opened."""
        try:
            return os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError as exc:
            raise type(exc)(f"{self._qualname}: cannot read {what} '{path}': {exc.strerror or exc}") from None

    def _descriptor(self, path, what):
        """(descriptor, size) of the file at ``path``, open while the reader lives;
        ``what`` names the file in the error of one that cannot be opened."""
        opened = self._descriptors.get(path)
        if opened is None:
            fd = self._open(path, what)
            opened = (fd, os.fstat(fd).st_size)
            # Two threads may open the same file at once: one descriptor is kept.
            kept = self._descriptors.setdefault(path, opened)
            if kept is not opened:
                os.close(fd)
            opened = kept
        return opened

    # -- taking samples -------------------------------------------------------
    def _chunk_size(self):
        return self._batch_size if self._batch_size > 1 else 16

    def _next_run(self, limit):
        """The next ``(index, (arrays, source))`` of the stream, or their read errors:
        up to ``limit`` of them, at least one."""
        if self._returned:
            run, self._returned = self._returned[:limit], self._returned[limit:]
            return run
        ready = self._ready
        if not ready:
            if loader_exiting():
                # Past the interpreter's exit (an atexit function reading): the
                # loading thread has stopped; the samples are read here.
                self._restart_loading()
                return [(index, self._load_or_error(index)) for index in self._order.next_indices(limit)]
            if self._loader is None:
                depth = self._args["prefetch_queue_depth"] + 1
                self._loader = Loader(self, self._order.copy(), self._chunk_size(), depth)
            ready.extend(self._loader.get())
        run = [ready.popleft() for _ in range(min(limit, len(ready)))]
        order = self._order
        if order.plain:
            expected = order.next_indices(len(run))
        else:
            expected = []
            try:
                for _ in run:
                    expected.append(order.next_index())
            except BaseException:
                # Interrupted (a KeyboardInterrupt) while stepping the order: the
                # samples it stepped over come next; the rest are read again.
                self._returned = self._matched(run, expected) + self._returned
                raise
        if [index for index, _ in run] != expected:
            # Out of step with the loading thread: an exception stopped an earlier
            # call between taking samples and stepping the order. The consumer's
            # order is the truth: the samples from the first difference on are read
            # here, and the loading thread starts again after them.
            self._restart_loading()
            return self._matched(run, expected)
        return run

    def _matched(self, run, expected):
        """``run``'s samples while their indices are ``expected``'s, then the rest of
        ``expected`` read here."""
        k = 0
        while k < len(expected) and run[k][0] == expected[k]:
            k += 1
        return run[:k] + [(index, self._load_or_error(index)) for index in expected[k:]]

    def _restart_loading(self):
        if self._loader is not None:
            self._loader.stop()
        self._loader = None
        self._ready = collections.deque()

    def _take(self, count):
        """``count`` samples as a list of (index, arrays, source). A sample that
        cannot be read raises here; the samples taken before it in this batch
        are kept for the next call, so only the bad one is skipped."""
        if not self._taking.acquire(blocking=False):
            raise RuntimeError(
                f"{self._qualname}: the reader is being read by another thread; a reader is one "
                "stream, read from one thread at a time (give each thread its own reader)"
            )
        taken = []
        try:
            while len(taken) < count:
                run = self._next_run(count - len(taken))
                bad = next(
                    (k for k, (_, loaded) in enumerate(run) if isinstance(loaded, BaseException)), None
                )
                if bad is None:
                    taken += [(index, arrays, source) for index, (arrays, source) in run]
                    continue
                taken += [(index, arrays, source) for index, (arrays, source) in run[:bad]]
                # The samples after the bad one come next.
                self._returned = run[bad + 1 :] + self._returned
                # A sample that cannot be read is also a RuntimeError (ndd/_errors.py).
                raise as_runtime_error(run[bad][1])
        except BaseException:
            # A bad sample, or an interruption (KeyboardInterrupt): the samples
            # taken so far come first next time.
            self._put_back(taken)
            raise
        finally:
            self._taking.release()
        return taken

    def _put_back(self, taken):
        """Return samples of ``_take`` to the front of the stream (they come next)."""
        self._returned = [(i, (arrays, source)) for i, arrays, source in taken] + self._returned

    def _tensors(self, sample):
        from .._tensor import Tensor

        _, arrays, source = sample
        result = []
        for k, ((dtype, layout), array) in enumerate(zip(self._sample_types(arrays), arrays, strict=True)):
            t = Tensor.__new__(Tensor)
            t._data, t._shape, t._dtype, t._layout = array, array.shape, dtype, layout
            t._device, t._source_info = Device.CPU, source[k] if isinstance(source, tuple) else source
            result.append(t)
        return self._package(result)

    def _batches(self, samples):
        from .._batch import _from_dense, _from_samples

        sources = [s[2] for s in samples]
        result = []
        for k, (dtype, layout) in enumerate(self._sample_types(samples[0][1])):
            arrays = [s[1][k] for s in samples]
            first = arrays[0].shape
            if arrays[0].nbytes < DENSE_SAMPLE_BYTES and all(a.shape == first for a in arrays):
                # One copy into the batch (np.stack adds a view per sample first).
                dense = np.concatenate(arrays).reshape((len(arrays), *first)) if first else np.stack(arrays)
                b = _from_dense(dense, dtype, layout)
            else:
                b = _from_samples(arrays, dtype, layout)
            b._source_info = [s[k] for s in sources] if isinstance(sources[0], tuple) else sources
            result.append(b)
        return self._package(result)

    # -- public API -----------------------------------------------------------
    def next_epoch(self, batch_size=None, ctx=None, capture=False):
        """Iterate over one epoch of this reader's shard.

        Yields tuples of Batches of ``batch_size`` samples (or of the constructor's
        ``max_batch_size``), or tuples of Tensors, one sample at a time, when
        neither is given. The reader is one continuous stream: an epoch whose last
        batch runs past the end of the shard continues into the next samples,
        unless ``pad_last_batch`` is set.

        ``capture=True`` (the reference's capture mode) needs a batch size and a
        reader without checkpointing, as in the reference; the loop then runs as
        written on every iteration and gives the same Batches (see ``ndd.capture``).
        """
        self._check_batch_size(batch_size)
        if batch_size is None:
            batch_size = self.max_batch_size
        if capture:
            if not batch_size:
                raise ValueError(f"{self._qualname}.next_epoch: capture=True requires a non-None batch_size")
            if self._checkpointing:
                raise NotImplementedError(
                    f"{self._qualname}.next_epoch: checkpointing is not supported in capture mode "
                    "(as in the reference)"
                )
        self._start("batches" if batch_size else "samples", batch_size)
        if self._resume_epoch:
            # Restored from a checkpoint taken inside an epoch: finish that epoch.
            self._resume_epoch = False
        else:
            self._epoch_remaining = self._order.epoch_length(self._epoch)
        self._in_epoch = True
        return self._epoch_items(batch_size)

    def _epoch_items(self, batch_size):
        step = batch_size or 1
        while self._epoch_remaining > 0:
            samples = self._take(step)
            self._epoch_remaining -= step
            yield self._batches(samples) if batch_size else self._tensors(samples[0])
        self._epoch += 1
        self._in_epoch = False

    def __call__(self, *, batch_size=None, **per_sample_args):
        """Read the next sample (a tuple of Tensors) or, with ``batch_size``, the next
        batch (a tuple of Batches) of the stream; a reader with one output (or a
        TFRecord reader with one feature) returns that output alone."""
        if per_sample_args:
            raise TypeError(
                f"{type(self).__name__}.__call__() got an unexpected keyword argument "
                f"{next(iter(per_sample_args))!r}"
            )
        samples = self._take_for_call(batch_size)
        result = self._batches(samples) if batch_size else self._tensors(samples[0])
        # As in the reference, a call of a reader with one output returns it bare
        # (iterating an epoch still yields tuples).
        if isinstance(result, (tuple, dict)) and len(result) == 1:
            return next(iter(result.values())) if isinstance(result, dict) else result[0]
        return result

    def _take_for_call(self, batch_size):
        """The samples of one direct call: ``batch_size`` of them, or one."""
        self._check_batch_size(batch_size)
        self._start("call", batch_size)
        return self._take(batch_size or 1)

    def get_metadata(self, batch_size: int | None = None) -> dict:
        """Dataset size and sharding: ``epoch_size``, ``epoch_size_padded``,
        ``number_of_shards``, ``shard_id``, ``pad_last_batch``, ``stick_to_shard``."""
        config = self._order_config()
        a = self._args
        return {
            "epoch_size": config.num_samples,
            "epoch_size_padded": config.epoch_size_padded,
            "number_of_shards": a["num_shards"],
            "shard_id": a["shard_id"],
            "pad_last_batch": int(a["pad_last_batch"]),
            # As the reference reports: shuffling after each epoch keeps each reader on its shard.
            "stick_to_shard": int(bool(a["stick_to_shard"] or a.get("shuffle_after_epoch"))),
        }

    # -- state ------------------------------------------------------------------
    def _enable_checkpointing(self):
        """Called by ``Checkpoint.register``: checkpointing must be on before the first read."""
        if self._started and not self._checkpointing:
            raise RuntimeError(
                f"{self._qualname} '{self.name}': checkpointing must be enabled before the reader is "
                "first used (pass enable_checkpointing=True or register it with the Checkpoint earlier)"
            )
        self._checkpointing = True

    def get_state(self, *, cuda_stream=None) -> ReaderState:
        """A snapshot of the position in the stream, for ``set_state`` on a new reader."""
        if not self._checkpointing:
            raise RuntimeError(
                f"{self._qualname} '{self.name}': get_state needs enable_checkpointing=True "
                "(or registering the reader with a Checkpoint)"
            )
        if self._pending_state is not None:
            return ReaderState(self._pending_state)
        state = {
            "version": STATE_VERSION,
            "reader": self.STATE_TAG or type(self).__name__,
            "config": self._order_config().fingerprint(),
            "seed": self._seed,
        }
        if self._order is not None:
            state.update(
                style=self._style,
                batch_size=self._batch_size,
                epoch=self._epoch,
                epoch_remaining=self._epoch_remaining,
                in_epoch=self._in_epoch,
                order=self._order.get_state(),
                returned=[s[0] for s in self._returned],
            )
        text = json.dumps(state, separators=(",", ":")).encode()
        return ReaderState(base64.b64encode(text).decode())

    def set_state(self, state) -> None:
        """Continue from a snapshot taken by ``get_state`` (before the first read only)."""
        if self._started:
            raise RuntimeError(
                f"{self._qualname} '{self.name}': set_state is only possible before the reader is first used"
            )
        if isinstance(state, ReaderState):
            text = str(state)
        elif isinstance(state, bytes):
            text = state.decode()
        elif isinstance(state, str):
            text = state
        else:
            raise TypeError(
                f"{self._qualname}.set_state: expected a ReaderState or str, got {type(state).__name__}"
            )
        self._decode_state(text)  # reject a bad state now, not at first use
        self._checkpointing = True
        self._pending_state = text

    def _decode_state(self, text):
        q = self._qualname
        try:
            state = json.loads(base64.b64decode(text.encode(), validate=True))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"{q}.set_state: not a reader state ({exc})") from None
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            version = state.get("version") if isinstance(state, dict) else None
            raise ValueError(
                f"{q}.set_state: unsupported state version {version!r} (expected {STATE_VERSION})"
            )
        if state.get("reader") != (self.STATE_TAG or type(self).__name__):
            raise ValueError(f"{q}.set_state: the state belongs to a {state.get('reader')} reader")
        if state.get("config") != self._order_config().fingerprint():
            raise ValueError(
                f"{q}.set_state: the state was saved by a reader with another dataset or sharding "
                "(number of samples, shards, padding or shuffling differ)"
            )
        damage = _state_damage(state, len(self._ensure_listed()))
        if damage:
            raise ValueError(f"{q}.set_state: the state is damaged: {damage}")
        return state

    def _apply_state(self, text):
        state = self._decode_state(text)
        self._seed = state["seed"]
        if "order" not in state:
            # Saved before the first read: only the seed matters.
            self._order = SampleOrder(self._order.config, self._batch_size, self._seed)
            return
        if state["batch_size"] != self._batch_size and self._order.config.pad_last_batch:
            # The padded stream is cut in whole batches of the size it was read in.
            raise ValueError(
                f"{self._qualname}: the state was saved iterating {state['style']} of "
                f"{state['batch_size']}; with pad_last_batch, this reader must read batches of that "
                f"size too, not {self._style} of {self._batch_size}"
            )
        # Another batch size (or sample mode) continues the stream where it was, as in the
        # reference; the epoch in progress ends once its remaining samples are read.
        self._order = SampleOrder(self._order.config, self._batch_size, self._seed)
        self._order.set_state(state["order"])
        self._epoch = state["epoch"]
        self._epoch_remaining = state["epoch_remaining"]
        # A state taken inside an epoch (even after its last batch, before the loop
        # ended) resumes that epoch, so that a restored training loop runs exactly
        # as many batches per epoch as the interrupted one would have.
        self._resume_epoch = state["in_epoch"]
        self._returned = [(i, self._load_or_error(i)) for i in state["returned"]]

    def _load_chunk(self, indices, stop_event=None):
        """``(index, outputs)`` for each of ``indices``, ``outputs`` being the sample or
        the exception raised reading it; its groups (``_chunk_groups``) on the reader's
        thread pool for readers that decode as they read (``_parallel_loading``). Once
        ``stop_event`` is set the chunk is cut short (it is then not used)."""
        stopping = (stop_event or _NEVER).is_set
        if not self._parallel_loading and type(self)._chunk_groups is Reader._chunk_groups:
            # One sample at a time on this thread: the common case, where the loop's own
            # cost counts (small records take a few microseconds each).
            load, loaded = self._load_sample, []
            for index in indices:
                if stopping():
                    break
                try:
                    loaded.append((index, load(index)))
                except Exception as exc:  # noqa: BLE001 - raised when the sample is taken
                    loaded.append((index, exc))
            return loaded
        groups = self._chunk_groups(indices)
        if self._parallel_loading and len(groups) > 1:
            if self._loading_pool is None or self._loading_pool.num_threads != get_num_threads():
                self._loading_pool = ThreadPool(get_num_threads(), device_id=None)
            loaded = self._loading_pool.map(self._load_group_or_errors, groups)
        else:
            loaded = []
            for group in groups:
                if stopping():
                    break
                loaded.append(self._load_group_or_errors(group))
        return list(zip(indices, [outputs for group in loaded for outputs in group], strict=False))

    def _chunk_groups(self, indices):
        """The samples of a chunk in the groups that load together, in order: one
        each, unless neighbouring samples share work (Video: the sequences of a file
        decode in one pass)."""
        return [[index] for index in indices]

    def _load_group(self, indices):
        """``(arrays, source)`` of each sample of a group."""
        return [self._load_sample(index) for index in indices]

    def _load_group_or_errors(self, indices):
        """``_load_group``, or each sample's outputs or error when the group fails."""
        if len(indices) == 1:
            return [self._load_or_error(indices[0])]
        try:
            return self._load_group(indices)
        except Exception:  # noqa: BLE001 - each sample's own error, read one at a time
            return [self._load_or_error(index) for index in indices]

    def _load_or_error(self, index):
        try:
            return self._load_sample(index)
        except Exception as exc:  # noqa: BLE001 - raised when the sample is taken
            return exc

    # -- process and object lifetime -------------------------------------------
    def _after_fork_in_child(self):
        # The loading thread did not survive the fork: start a new one from the
        # consumer's position, dropping samples read ahead by the old one.
        self._loader = None
        self._loading_pool = None
        self._ready = collections.deque()
        self._taking = threading.Lock()

    def __del__(self):
        loader = getattr(self, "_loader", None)
        if loader is not None:
            loader.stop()


def _is_int(value, low=0, high=None) -> bool:
    return type(value) is int and value >= low and (high is None or value < high)


def _state_damage(state, num_samples):
    """What is wrong with the fields of a decoded reader state (a state edited or
    damaged after it was saved), or "" when they hold what ``get_state`` writes."""
    if not isinstance(state.get("seed"), int):
        return "'seed' is not an integer"
    if "order" not in state:
        return ""
    checks = [
        ("style", state.get("style") in ("batches", "samples", "call")),
        ("batch_size", _is_int(state.get("batch_size"), 1)),
        ("epoch", _is_int(state.get("epoch"))),
        ("epoch_remaining", _is_int(state.get("epoch_remaining"))),
        ("in_epoch", type(state.get("in_epoch")) is bool),
        (
            "returned",
            isinstance(state.get("returned"), list)
            and all(_is_int(i, 0, num_samples) for i in state["returned"]),
        ),
    ]
    order = state.get("order")
    checks.append(("order", isinstance(order, dict) and _is_int(order.get("position"))))
    if isinstance(order, dict) and "rng" in order:
        rng = order["rng"]
        buffer = order.get("buffer")
        checks += [
            (
                "order.buffer",
                buffer is None
                or (isinstance(buffer, list) and all(_is_int(i, 0, num_samples) for i in buffer)),
            ),
            ("order.pass_end", _is_int(order.get("pass_end"))),
            ("order.returned", _is_int(order.get("returned"))),
            ("order.last", _is_int(order.get("last"), 0, max(num_samples, 1))),
            (
                "order.rng",
                isinstance(rng, list)
                and len(rng) == 3
                and isinstance(rng[1], list)
                and len(rng[1]) == 625
                and all(_is_int(v, 0, 2**32) for v in rng[1]),
            ),
        ]
    return ", ".join(f"'{name}' is not what a saved state holds" for name, fine in checks if not fine)


# Samples of at least this many bytes stay where they were read (a batch of views of the
# read buffers; equal shapes are stacked only by an operation that needs them together):
# copying them into one array cost more than all the rest of reading them.
DENSE_SAMPLE_BYTES = 16 * 1024
# The most bytes of neighbouring samples read at once (``neighbour_runs``).
RUN_BYTES = 16 << 20


def neighbour_runs(indices, spans, max_gap=0):
    """``indices`` split into runs whose bytes follow each other in one file (at most
    ``max_gap`` bytes apart, ``RUN_BYTES`` of them in all), each to be read with one
    read: small samples cost a system call each otherwise. ``spans`` gives each
    index's ``(path, start, length)``, or None for a sample read alone."""
    runs, run_path, run_end, run_bytes = [], None, 0, 0
    for index, span in zip(indices, spans, strict=True):
        if span is None:
            runs.append([index])
            run_path = None
            continue
        path, start, length = span
        if path == run_path and 0 <= start - run_end <= max_gap and run_bytes + length <= RUN_BYTES:
            runs[-1].append(index)
            run_end, run_bytes = start + length, run_bytes + length
        else:
            runs.append([index])
            run_path, run_end, run_bytes = path, start + length, length
    return runs


def text_lines(path) -> list:
    """The lines of the text file ``path``. Bytes that are not UTF-8 are kept as file
    names keep them (``os.fsdecode``): a listed path is the file's name, and a line
    that should hold numbers is refused, naming it."""
    with open(path, "rb") as fh:
        return os.fsdecode(fh.read()).splitlines()


def path_list(qualname: str, key: str, value) -> list:
    """A path or list of paths argument as a non-empty list of str."""
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    if (
        not isinstance(value, (list, tuple))
        or not value
        or not all(isinstance(p, (str, os.PathLike)) for p in value)
    ):
        raise InvalidArgumentError(
            f"{qualname}: '{key}' must be a path or a non-empty list of paths, got {value!r}"
        )
    return [os.fspath(p) for p in value]


def _make_init(cls):
    specs = cls._arg_specs
    params = [
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("max_batch_size", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
        inspect.Parameter("name", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
        inspect.Parameter("device", inspect.Parameter.POSITIONAL_OR_KEYWORD, default="cpu"),
        inspect.Parameter("num_inputs", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
    ]
    for spec in specs:
        default = inspect.Parameter.empty if spec.default is REQUIRED else spec.default
        params.append(inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, default=default))
    signature = inspect.Signature(params)
    names = {spec.name for spec in specs}
    required = [spec.name for spec in specs if spec.default is REQUIRED]

    def __init__(self, max_batch_size=None, name=None, device="cpu", num_inputs=None, **kwargs):
        for key in kwargs:
            if key not in names:
                raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument '{key}'")
        missing = [n for n in required if kwargs.get(n) is None]
        if missing:
            raise TypeError(
                f"{cls.__name__}.__init__() missing required keyword argument(s): "
                + ", ".join(f"'{n}'" for n in missing)
            )
        self._setup(max_batch_size, name, device, num_inputs, kwargs)

    __init__.__signature__ = signature
    __init__.__qualname__ = f"{cls.__name__}.__init__"
    __init__.__doc__ = _init_doc(cls)
    return __init__


def _init_doc(cls):
    lines = [f"Create a {cls.__name__} reader.", "", "Parameters", "----------"]
    lines += [
        "max_batch_size : int, optional",
        "    Batch size of ``next_epoch()`` when none is given there, and the largest allowed.",
        "name : str, optional",
        "    Name of the reader (``Reader_<id>`` by default).",
        "device : str",
        f"    Where the data is produced: {', '.join(repr(d) for d in cls.DEVICES)}.",
        "num_inputs : None",
        "    Readers take no inputs; accepted for compatibility.",
    ]
    for spec in cls._arg_specs:
        hint = spec.type_doc or spec.kind.replace("_", " ")
        required = "" if spec.default is not REQUIRED else ", required"
        lines.append(f"{spec.name} : {hint}{required}")
        if spec.doc:
            lines.append(f"    {spec.doc}")
    return "\n".join(lines)


def _close_all(descriptors):
    for fd, _ in descriptors.values():
        os.close(fd)
