"""``ndd.checkpoint``: save the position of readers and random generators, and resume from it.

A :class:`Checkpoint` keeps stateful objects under names.  Any object with a
``get_state()`` method and a ``set_state(state)`` method can be registered;
in ndd these are the readers (``ndd.readers.*``) and ``ndd.random.RNG``.
A state is stored as ``str(state)`` together with ``type(obj).__qualname__``,
so a saved checkpoint is plain JSON (format version 2, the same layout as
DALI's dynamic mode)::

    {"version": 2, "states": {"reader": {"state": "...", "type": "File"},
                              "rng": {"state": "Philox_...", "type": "RNG"}}}
"""

from __future__ import annotations

import glob
import json
import os
import re
import secrets
import string
from typing import Any, NamedTuple

from ._eval.context import EvalContext

__all__ = ["Checkpoint", "current"]

_FORMAT_VERSION = 2

# Keys of objects registered without a name; users may not pick such names, so
# the anonymous numbering (by registration order) can never collide.
_ANONYMOUS_PREFIX = "__op_"

_WHERE = "ndd.checkpoint.Checkpoint"


class _Entry(NamedTuple):
    """A stored state and the ``__qualname__`` of the class it belongs to (None: unchecked)."""

    state: Any
    type_name: str | None


class _FilePattern:
    """A checkpoint file name with at most one ``{seq}`` field, e.g. ``"ck/ckpt_{seq:04d}.json"``.

    The format spec of ``{seq}`` must write the number in plain decimal digits
    (``""``, ``"d"``, ``"04d"``...), so that the number can be read back from
    the names of existing files.
    """

    def __init__(self, filename: str | os.PathLike, method: str):
        text = os.fspath(filename) if isinstance(filename, os.PathLike) else filename
        if not isinstance(text, str):
            raise TypeError(f"{_WHERE}.{method}: 'filename' must be a str or a path, got {filename!r}")
        # Normalised because glob reports matches normalised ("a//b" as "a/b"),
        # and their numbers are read by matching the pattern against them.
        self.text = os.path.normpath(text)
        where = f"{_WHERE}.{method}: file name pattern {self.text!r}"
        try:
            fields = list(string.Formatter().parse(self.text))
        except ValueError as e:
            raise ValueError(f"{where} is not a valid format string ({e})") from None
        before, after = [], []
        self.spec = None
        for literal, field, spec, conversion in fields:
            (before if self.spec is None else after).append(literal)
            if field is None:
                continue
            if field != "seq":
                raise ValueError(f"{where} has the field {{{field}}}; only {{seq}} is supported")
            if self.spec is not None:
                raise ValueError(f"{where} has {{seq}} more than once")
            if conversion is not None:
                raise ValueError(f"{where}: {{seq}} does not take a conversion (!{conversion})")
            _check_decimal_spec(spec, where)
            self.spec = spec
        self.prefix = "".join(before)
        self.suffix = "".join(after)

    @property
    def has_seq(self) -> bool:
        return self.spec is not None

    def path(self, seq: int) -> str:
        """The file name for sequence number ``seq`` (the pattern itself if it has no ``{seq}``)."""
        if not self.has_seq:
            return self.prefix
        return f"{self.prefix}{format(seq, self.spec)}{self.suffix}"

    def existing(self) -> list[tuple[int, str]]:
        """``(seq, path)`` of every existing file (or folder) whose name fits the pattern."""
        number = re.compile(re.escape(self.prefix) + "([0-9]+)" + re.escape(self.suffix))
        found = []
        for path in glob.iglob(glob.escape(self.prefix) + "*" + glob.escape(self.suffix)):
            match = number.fullmatch(path)
            if match is not None:
                found.append((int(match.group(1)), path))
        return found


def _check_decimal_spec(spec: str, where: str) -> None:
    for probe in (0, 7, 1234567):
        try:
            text = format(probe, spec)
        except ValueError:
            text = None
        if text is None or not re.fullmatch("[0-9]+", text) or int(text) != probe:
            raise ValueError(
                f"{where}: the format spec {spec!r} of {{seq}} must write the number in plain "
                "decimal digits (e.g. {seq} or {seq:04d})"
            )


def _write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see either the old file or the complete new one."""
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    # A hidden, uniquely named neighbour: never matched by a {seq} scan, never
    # shared by two concurrent writers, and on the same file system, which
    # makes os.replace an atomic rename.
    temporary = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(4)}.tmp")
    file = open(temporary, "x", encoding="utf-8")  # outside the try: never remove another writer's file
    try:
        with file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _type_name(op_type: type | str | None, method: str) -> str | None:
    if op_type is None or isinstance(op_type, str):
        return op_type
    if isinstance(op_type, type):
        return op_type.__qualname__
    raise TypeError(f"{_WHERE}.{method}: 'op_type' must be a class or its __qualname__, got {op_type!r}")


class Checkpoint:
    """The states of a chosen set of readers and random generators, under names.

    Register the stateful objects with :meth:`register`, take a snapshot of
    their states with :meth:`collect` and write it with :meth:`save`.  To
    resume, :meth:`load` the file into a new ``Checkpoint`` and register fresh
    objects under the same names (or in the same order, for anonymous
    registrations): each receives its saved state as it is registered.

    Examples
    --------
    >>> ckpt = ndd.checkpoint.Checkpoint()
    >>> ckpt.register(reader, "reader")
    'reader'
    >>> ckpt.register(rng, "rng")
    'rng'
    >>> ckpt.collect()
    >>> ckpt.save("checkpoints/ckpt_{seq:04d}.json")
    'checkpoints/ckpt_0000.json'

    and later, in a new process:

    >>> ckpt = ndd.checkpoint.Checkpoint()
    >>> ckpt.load("checkpoints/ckpt_{seq:04d}.json")
    'checkpoints/ckpt_0000.json'
    >>> ckpt.register(new_reader, "reader")  # continues where `reader` was
    'reader'
    """

    def __init__(self):
        self.clear()

    # -- housekeeping ---------------------------------------------------------

    def clear(self) -> None:
        """Forget every registered object and stored state; the checkpoint is as new."""
        self._objects: dict[str, Any] = {}
        self._key_of: dict[int, str] = {}  # id(object) -> key; the objects are kept alive by _objects
        self._states: dict[str, _Entry] = {}
        self._pending: set[str] = set()  # keys whose stored state is not yet given to the object
        self._complete = False
        self._loaded = False
        self._next_seq: dict[str, int] = {}  # file name pattern -> next sequence number to save

    @property
    def is_complete(self) -> bool:
        """True when the states come from :meth:`collect` (every registered object has one)."""
        return self._complete

    @property
    def is_loaded(self) -> bool:
        """True when the states come from :meth:`load` or :meth:`deserialize`."""
        return self._loaded

    @property
    def names(self) -> tuple[str, ...]:
        """The keys of the registered objects, in registration order."""
        return tuple(self._objects)

    def __len__(self) -> int:
        return len(self._objects)

    def __contains__(self, name) -> bool:
        return str(name) in self._objects

    def __repr__(self) -> str:
        return f"Checkpoint(names={self.names!r}, is_complete={self._complete}, is_loaded={self._loaded})"

    # -- registration and single states -----------------------------------------

    def register(self, op: Any, name: str | None = None) -> str:
        """Add a reader or random generator to the checkpoint.

        Parameters
        ----------
        op : reader or ndd.random.RNG
            Any object with ``get_state()`` and ``set_state(state)`` methods.  A
            reader gets checkpointing enabled; a reader that has already started
            without ``enable_checkpointing=True`` cannot be registered.
        name : str, optional
            The key to store ``op`` under.  Without a name, an object already
            registered keeps its key, and a new one gets ``"__op_<n>"`` where
            ``n`` is the number of objects registered before it (so a resumed
            run must register in the same order).  Names starting with
            ``"__op_"`` are reserved.  Registering under a taken name replaces
            the object there, which must be of the same class.

        Returns
        -------
        str
            The key of ``op``.

        Raises
        ------
        TypeError
            ``op`` lacks ``get_state``/``set_state``; ``name`` is not a string;
            the object under ``name`` (or the stored state) is of another class.
        ValueError
            ``name`` is empty or starts with ``"__op_"``.
        RuntimeError
            ``op`` is registered under another key; a new key after
            :meth:`collect` (call :meth:`clear` first); a reader that started
            without checkpointing.
        KeyError
            After :meth:`load`, a new key the loaded file has no state for.

        Notes
        -----
        A stored state not yet given to an object (after :meth:`load`,
        :meth:`deserialize` or :meth:`set_state`) is applied to ``op`` at once.
        A registration that fails changes nothing in the checkpoint.
        """
        if not (callable(getattr(op, "get_state", None)) and callable(getattr(op, "set_state", None))):
            raise TypeError(
                f"{_WHERE}.register: 'op' must have get_state() and set_state(state) methods "
                f"(a reader or an ndd.random.RNG), got {type(op).__name__}"
            )
        old_key = self._key_of.get(id(op))
        if name is None:
            key = old_key if old_key is not None else f"{_ANONYMOUS_PREFIX}{len(self._objects)}"
        else:
            self._check_name(name)
            key = name
            if old_key is not None and old_key != key:
                raise RuntimeError(
                    f"{_WHERE}.register: this {type(op).__qualname__} is already registered as "
                    f"{old_key!r}; it cannot also be registered as {key!r}"
                )
        replaced = self._objects.get(key)
        if replaced is not None and type(replaced) is not type(op):
            raise TypeError(
                f"{_WHERE}.register: {key!r} holds a {type(replaced).__qualname__}; it cannot be "
                f"replaced with a {type(op).__qualname__}"
            )
        if replaced is None:
            self._check_new_key(key, anonymous=name is None)

        enable_checkpointing = getattr(op, "_enable_checkpointing", None)
        if enable_checkpointing is not None:
            enable_checkpointing()
        if key in self._pending:
            self._apply(key, op)

        if replaced is not None:
            del self._key_of[id(replaced)]
        self._objects[key] = op
        self._key_of[id(op)] = key
        return key

    def _check_name(self, name) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{_WHERE}.register: 'name' must be a str or None, got {type(name).__name__}")
        if not name:
            raise ValueError(f"{_WHERE}.register: 'name' must not be empty")
        if name.startswith(_ANONYMOUS_PREFIX):
            raise ValueError(
                f"{_WHERE}.register: name {name!r} starts with {_ANONYMOUS_PREFIX!r}, which is "
                "reserved for objects registered without a name"
            )

    def _check_new_key(self, key: str, anonymous: bool) -> None:
        if self._complete:
            raise RuntimeError(
                f"{_WHERE}.register: cannot add {key!r} to a checkpoint that was collected; "
                "call clear() first"
            )
        if self._loaded and key not in self._states:
            hint = (
                " (objects registered without a name are numbered in registration order: "
                "register them in the same order as when saving, or give them names)"
                if anonymous
                else ""
            )
            raise KeyError(f"{_WHERE}.register: the loaded checkpoint has no state for {key!r}{hint}")

    def _apply(self, key: str, op: Any) -> None:
        """Give ``op`` the pending state stored under ``key``."""
        entry = self._states[key]
        if entry.type_name is not None and entry.type_name != type(op).__qualname__:
            raise TypeError(
                f"{_WHERE}: the state of {key!r} belongs to a {entry.type_name}, but the object "
                f"registered there is a {type(op).__qualname__}"
            )
        op.set_state(entry.state)
        self._pending.discard(key)

    def get_state(self, name):
        """The stored state of the object registered as ``name``.

        Parameters
        ----------
        name : str
            A registered key.

        Returns
        -------
        object or None
            The state from :meth:`collect` or :meth:`set_state` (a string after
            :meth:`load`); None if there is none yet.

        Raises
        ------
        KeyError
            Nothing is registered as ``name``.
        """
        key = str(name)
        if key not in self._objects:
            raise KeyError(f"{_WHERE}.get_state: nothing is registered as {key!r}")
        entry = self._states.get(key)
        return None if entry is None else entry.state

    def set_state(self, name: str, value: Any, op_type: type | str | None = None) -> None:
        """Store a state for ``name``, to be given to its object on registration or :meth:`restore`.

        Parameters
        ----------
        name : str
            The key; it need not be registered yet.
        value : object
            Anything the object's ``set_state`` accepts (e.g. an RNG state string).
        op_type : type or str, optional
            The class (or its ``__qualname__``) the state belongs to; checked
            when the state is applied.

        Raises
        ------
        KeyError
            After :meth:`collect`, ``name`` is not registered.
        TypeError
            ``op_type`` is neither a class nor a string.
        """
        key = str(name)
        if self._complete and key not in self._objects:
            raise KeyError(f"{_WHERE}.set_state: the checkpoint was collected and has no object {key!r}")
        self._states[key] = _Entry(value, _type_name(op_type, "set_state"))
        self._pending.add(key)

    # -- collect and restore ---------------------------------------------------

    def collect(self) -> None:
        """Take the current state of every registered object.

        Afterwards :attr:`is_complete` is True and :attr:`is_loaded` False.  If
        an object's ``get_state`` fails, the stored states stay as they were.

        Raises
        ------
        RuntimeError
            A stored state has no registered object (e.g. a loaded file holds
            more objects than were registered).
        """
        self._check_no_orphan_states("collect")
        states = {key: _Entry(op.get_state(), type(op).__qualname__) for key, op in self._objects.items()}
        self._states = states
        self._pending.clear()
        self._complete = True
        self._loaded = False

    def restore(self) -> None:
        """Give every registered object its pending stored state.

        Registration already applies a pending state; this is for states set
        after registration with :meth:`set_state`.  Does nothing when no
        state is stored.

        Raises
        ------
        RuntimeError
            The stored states and the registered objects do not match one to one.
        """
        if not self._states:
            return
        self._check_no_orphan_states("restore")
        missing = [key for key in self._objects if key not in self._states]
        if missing:
            raise RuntimeError(f"{_WHERE}.restore: no stored state for the registered {missing}")
        for key, op in self._objects.items():
            if key in self._pending:
                self._apply(key, op)

    def _check_no_orphan_states(self, method: str) -> None:
        orphans = [key for key in self._states if key not in self._objects]
        if orphans:
            raise RuntimeError(
                f"{_WHERE}.{method}: stored states {orphans} have no registered object; "
                "register them (or clear() the checkpoint)"
            )

    # -- text and files ----------------------------------------------------------

    def serialize(self) -> str:
        """The stored states as JSON text (format version 2).

        Raises
        ------
        RuntimeError
            No state is stored (call :meth:`collect` first).
        """
        if not self._states:
            raise RuntimeError(f"{_WHERE}.serialize: the checkpoint holds no state; call collect() first")
        states = {
            key: {"state": str(entry.state), "type": entry.type_name} for key, entry in self._states.items()
        }
        return json.dumps({"version": _FORMAT_VERSION, "states": states})

    def deserialize(self, data: str | bytes) -> None:
        """Replace the stored states with those in ``data`` (text from :meth:`serialize`).

        Every state becomes pending: it is given to its object when that object
        is registered, or by :meth:`restore`.  Afterwards :attr:`is_loaded` is
        True and :attr:`is_complete` False.

        Raises
        ------
        ValueError
            ``data`` is not a checkpoint of format version 2.
        """
        self._read(data, f"{_WHERE}.deserialize: the data")

    def _read(self, data: str | bytes, source: str) -> None:
        if not isinstance(data, (str, bytes, bytearray)):
            raise TypeError(f"{source} must be str or bytes, got {type(data).__name__}")
        try:
            payload = json.loads(data)
        except ValueError as e:
            raise ValueError(f"{source} is not valid JSON ({e})") from None
        if not isinstance(payload, dict):
            raise ValueError(f"{source} is not a checkpoint: expected a JSON object")
        if "version" not in payload:
            raise ValueError(f"{source} is not a checkpoint: it has no 'version'")
        version = payload["version"]
        # Exactly the int 2: a file that says 2.0, "2" or true was not written by a checkpoint
        # (the reference lets 2.0 through).
        if type(version) is not int or version != _FORMAT_VERSION:
            raise ValueError(
                f"{source} has checkpoint format version {json.dumps(version)}; "
                f"this ndd reads version {_FORMAT_VERSION}"
            )
        states = payload.get("states")
        if not isinstance(states, dict):
            raise ValueError(f"{source} is not a checkpoint: 'states' must be a JSON object")
        entries = {}
        for key, item in states.items():
            if not isinstance(item, dict) or not isinstance(item.get("state"), str):
                raise ValueError(f"{source}: the entry {key!r} must be an object with a string 'state'")
            type_name = item.get("type")
            if type_name is not None and not isinstance(type_name, str):
                raise ValueError(f"{source}: the 'type' of {key!r} must be a string, got {type_name!r}")
            entries[key] = _Entry(item["state"], type_name)
        self._states = entries
        self._pending = set(entries)
        self._complete = False
        self._loaded = True

    def save(self, filename: str | os.PathLike) -> str:
        """Write the stored states to a file.

        Parameters
        ----------
        filename : str or os.PathLike
            A path, optionally with one ``{seq}`` field (with an optional format
            spec, e.g. ``"ckpt/ckpt_{seq:04d}.json"``) that receives the next
            free sequence number: one more than the highest among the existing
            files and the earlier saves of this checkpoint.  Without ``{seq}`` the
            file is replaced.  Missing directories are created.

        Returns
        -------
        str
            The path written.

        Raises
        ------
        RuntimeError
            No state is stored.
        ValueError
            ``filename`` has another field than ``{seq}``, ``{seq}`` twice, or a
            format spec that does not write decimal digits.

        Notes
        -----
        The text goes to a temporary file in the same directory that is then
        renamed over the target, so the file is always either absent, the old
        one or complete; a failure leaves nothing behind.
        """
        pattern = _FilePattern(filename, "save")
        text = self.serialize()
        seq = 0
        if pattern.has_seq:
            seq = max([self._next_seq.get(pattern.text, 0)] + [found + 1 for found, _ in pattern.existing()])
        path = pattern.path(seq)
        _write_atomically(path, text)
        if pattern.has_seq:
            self._next_seq[pattern.text] = seq + 1
        return path

    def load(self, filename: str | os.PathLike) -> str:
        """Read the stored states from a file written by :meth:`save`.

        Parameters
        ----------
        filename : str or os.PathLike
            A path, or a pattern with ``{seq}`` as given to :meth:`save`: the
            existing file with the highest sequence number is read.

        Returns
        -------
        str
            The path read.

        Raises
        ------
        FileNotFoundError
            No file matches ``filename``.
        ValueError
            The file is not a checkpoint of format version 2.

        Notes
        -----
        As with :meth:`deserialize`, every state becomes pending and is given to
        its object on registration.  A later :meth:`save` with the same pattern
        continues the numbering after the file read.
        """
        pattern = _FilePattern(filename, "load")
        if pattern.has_seq:
            found = pattern.existing()
            if not found:
                raise FileNotFoundError(f"{_WHERE}.load: no checkpoint file matches {pattern.text!r}")
            seq, path = max(found)
        else:
            seq, path = 0, pattern.text
            if not os.path.isfile(path):
                raise FileNotFoundError(f"{_WHERE}.load: checkpoint file {path!r} does not exist")
        with open(path, "rb") as f:
            data = f.read()
        self._read(data, f"{_WHERE}.load: {path!r}")
        if pattern.has_seq:
            self._next_seq[pattern.text] = seq + 1
        return path


def current() -> Checkpoint:
    """The checkpoint of the current evaluation context (``ndd.EvalContext.current().checkpoint``).

    Each :class:`ndd.EvalContext` owns one; the default context of a thread
    lives as long as the thread, so :meth:`Checkpoint.clear` it before reusing
    it for another pipeline.
    """
    return EvalContext.current().checkpoint
