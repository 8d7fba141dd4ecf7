"""``readers.Webdataset``: samples made of the files of tar archives that share a name."""

import os
import tarfile

import numpy as np

from .._prepare.args import Arg, InvalidArgumentError
from .._types import NUMERIC_TYPES, uint8
from .._types import dtype as to_dtype
from ._base import Reader, neighbour_runs, path_list, text_lines

__all__ = ["Webdataset"]

_TAR_BLOCK = 512
_BEHAVIORS = ("", "empty", "skip", "error")
# Index format versions (first line of a wds2idx index) -> fields per component:
# v1.1 lists "ext offset size", v1.2 adds the file name.
_INDEX_FIELDS = {"v1.1": 3, "v1.2": 4}


def split_name(name: str) -> tuple[str, str]:
    """``(key, extension)`` of an archive member: the extension is the text after
    the first dot of the file name (folders may hold dots)."""
    slash = name.rfind("/") + 1
    dot = name.find(".", slash)
    if dot < 0:
        return name, ""
    return name[:dot], name[dot + 1 :]


def _extension_folding(case_sensitive):
    """How extensions are normalised before they are compared."""
    return str if case_sensitive else str.lower


class _Component:
    """One file of a sample: where its data lies in the archive."""

    __slots__ = ("ext", "name", "offset", "size", "size_field")

    def __init__(self, ext, offset, size, name):
        self.ext, self.offset, self.size, self.name = ext, offset, size, name
        # The size field of the member's header as Python's tarfile and GNU tar
        # write it (eleven octal digits), compared first when the data is read.
        self.size_field = b"%011o" % size


class Webdataset(Reader):
    """Read samples from WebDataset tar archives.

    The files of an archive whose names agree up to the first dot of the file
    name (``dir/x001.seg.png`` has the key ``dir/x001`` and the extension
    ``seg.png``) and that follow each other form a sample; files whose name
    starts with a dot and entries that are not regular files are left out. Each
    entry of ``ext`` is one output: the first file of the sample (in archive
    order) whose extension is one of the entry's ``;``-separated alternatives.
    The samples come in the order of ``paths``, then archive order.

    Outputs: the file contents as uint8 (1-D), or reinterpreted as ``dtypes``
    (the size must be a multiple of the element size). A sample lacking an
    output's file gives an empty output, or is left out
    (``missing_component_behavior="skip"``), or makes the listing fail
    (``"error"``).

    Index files (``index_paths``, as written by DALI's ``wds2idx``: a
    ``v1.2 <samples>`` line, then ``ext offset size name`` groups per sample)
    spare reading the archives' headers at start; without them the archives are
    scanned. Archives must be uncompressed (their files are read at their
    offsets).
    """

    ARGS = (
        Arg(
            "case_sensitive_extensions",
            "bool",
            True,
            doc="Compare the extensions of ``ext`` with the files' extensions case-sensitively.",
        ),
        Arg(
            "dtypes",
            "any",
            None,
            doc="Element type of each output (default uint8): the file's bytes reinterpreted.",
            type_doc="DType or list of DType",
        ),
        Arg(
            "ext",
            "any",
            doc='Extensions of each output; alternatives separated by ";" (e.g. ``"jpg;png"``).',
            type_doc="str or list of str",
        ),
        Arg(
            "index_paths",
            "any",
            None,
            doc="Index file of each archive (default: scan the archives).",
            type_doc="str or list of str",
        ),
        Arg(
            "missing_component_behavior",
            "str",
            "",
            doc='A sample without a file for an output: ``"empty"`` (or ``""``) gives an empty '
            'output, ``"skip"`` leaves the sample out, ``"error"`` raises.',
        ),
        Arg("paths", "any", doc="The tar archives.", type_doc="str or list of str"),
    )
    OUTPUTS = ("components",)

    def _validate_args(self, args):
        q = self._qualname
        args["paths"] = path_list(q, "paths", args["paths"])
        if args["index_paths"] is not None:
            args["index_paths"] = path_list(q, "index_paths", args["index_paths"])
            if len(args["index_paths"]) != len(args["paths"]):
                raise InvalidArgumentError(
                    f"{q}: 'index_paths' must name one index file per archive: got "
                    f"{len(args['index_paths'])} index files for {len(args['paths'])} archives"
                )
        ext = args["ext"]
        if isinstance(ext, str):
            ext = [ext]
        if not isinstance(ext, (list, tuple)) or not ext or not all(isinstance(e, str) for e in ext):
            raise InvalidArgumentError(
                f"{q}: 'ext' must be a str or a non-empty list of str, got {args['ext']!r}"
            )
        fold = _extension_folding(args["case_sensitive_extensions"])
        args["ext"] = [tuple(fold(alt) for alt in e.split(";")) for e in ext]
        behavior = args["missing_component_behavior"].lower()
        if behavior not in _BEHAVIORS:
            raise InvalidArgumentError(
                f"{q}: 'missing_component_behavior' must be one of 'empty', 'skip', 'error' (or ''), "
                f"got {args['missing_component_behavior']!r}"
            )
        args["missing_component_behavior"] = behavior or "empty"
        args["dtypes"] = self._output_dtypes(args["dtypes"], len(ext))
        # The numpy type each output's bytes are viewed as (None: they stay uint8).
        self._views = [None if dtype is uint8 else dtype.numpy for dtype in args["dtypes"]]

    def _output_dtypes(self, dtypes, count):
        q = self._qualname
        if dtypes is None:
            return [uint8] * count
        listed = list(dtypes) if isinstance(dtypes, (list, tuple)) else [dtypes]
        if len(listed) != count:
            raise InvalidArgumentError(
                f"{q}: 'dtypes' must give one type per 'ext' entry: got {len(listed)} for {count}"
            )
        result = []
        for value in listed:
            try:
                converted = to_dtype(value)
            except (TypeError, ValueError) as exc:
                raise InvalidArgumentError(f"{q}: 'dtypes' entry {value!r} is not a DType ({exc})") from None
            if converted not in NUMERIC_TYPES:
                raise InvalidArgumentError(
                    f"{q}: 'dtypes' entry {converted} is not supported; use a numeric type "
                    f"({', '.join(str(t) for t in NUMERIC_TYPES)})"
                )
            result.append(converted)
        return result

    # -- listing ------------------------------------------------------------------
    def _list_samples(self):
        a = self._args
        indices = a["index_paths"] or [None] * len(a["paths"])
        entries = []
        for path, index in zip(a["paths"], indices, strict=True):
            if not os.path.isfile(path):
                raise FileNotFoundError(f"{self._qualname}: archive '{path}' does not exist")
            samples = self._scan_archive(path) if index is None else self._read_index(path, index)
            for key, components, origin in samples:
                outputs = self._match_outputs(key, components, origin)
                if outputs is not None:
                    entries.append((path, outputs, _span(outputs)))
        return entries

    def _match_outputs(self, key, components, origin):
        """The component of each output (None where missing), or None to skip the sample."""
        a = self._args
        fold = _extension_folding(a["case_sensitive_extensions"])
        outputs = []
        for alternatives, dtype in zip(a["ext"], a["dtypes"], strict=True):
            found = next((c for c in components if fold(c.ext) in alternatives), None)
            if found is None:
                behavior = a["missing_component_behavior"]
                if behavior == "skip":
                    return None
                if behavior == "error":
                    raise ValueError(
                        f"{self._qualname}: sample {key!r} of {origin} has no file with the extension "
                        f"{';'.join(alternatives)!r} (missing_component_behavior='error')"
                    )
            elif found.size % dtype.bytes:
                raise ValueError(
                    f"{self._qualname}: file {found.name!r} of {origin} has {found.size} bytes, not a "
                    f"multiple of the {dtype} element size ({dtype.bytes})"
                )
            outputs.append(found)
        return tuple(outputs)

    def _scan_archive(self, path):
        """The samples of an archive read from its headers: ``(key, components, origin)``."""
        q = self._qualname
        origin = f"archive '{path}'"
        size = os.path.getsize(path)
        samples = []
        try:
            # "r:" refuses compressed archives, whose files cannot be read at an offset.
            with tarfile.open(path, mode="r:") as archive:
                for member in archive:
                    if not member.isreg():
                        continue
                    if member.offset_data + member.size > size:
                        raise tarfile.ReadError(f"'{member.name}' runs past the end of the file")
                    if os.path.basename(member.name).startswith("."):
                        continue
                    key, ext = split_name(member.name)
                    component = _Component(ext, member.offset_data, member.size, member.name)
                    if samples and samples[-1][0] == key:
                        samples[-1][1].append(component)
                    else:
                        samples.append((key, [component], origin))
        except tarfile.TarError as exc:
            raise ValueError(
                f"{q}: '{path}' is not a readable uncompressed tar archive (truncated or corrupted?): {exc}"
            ) from None
        return samples

    def _read_index(self, path, index):
        """The samples an index file lists: ``(key, components, origin)``."""
        q = self._qualname
        try:
            lines = text_lines(index)
        except FileNotFoundError:
            raise FileNotFoundError(f"{q}: index file '{index}' does not exist") from None
        except OSError as exc:
            raise type(exc)(f"{q}: cannot read index file '{index}': {exc.strerror or exc}") from None
        head = lines[0].split() if lines else []
        fields = _INDEX_FIELDS.get(head[0]) if len(head) == 2 else None
        if fields is None or not head[1].isdigit():
            raise ValueError(
                f"{q}: index file '{index}' must start with 'v1.2 <number of samples>' "
                f"(or v1.1), got {lines[0] if lines else ''!r}"
            )
        count = int(head[1])
        if len(lines) - 1 < count:
            raise ValueError(f"{q}: index file '{index}' declares {count} samples but lists {len(lines) - 1}")
        archive_size = os.path.getsize(path)
        samples = []
        # Only the declared number of samples is read, as DALI does.
        for number in range(1, count + 1):
            origin = f"index file '{index}' line {number + 1}"
            tokens = lines[number].split()
            if not tokens or len(tokens) % fields:
                layout = "ext offset size name" if fields == 4 else "ext offset size"
                raise ValueError(f"{q}: {origin} must hold groups of '{layout}', got {lines[number]!r}")
            components = []
            for start in range(0, len(tokens), fields):
                group = tokens[start : start + fields]
                name = group[3] if fields == 4 else ""
                try:
                    offset, size = int(group[1]), int(group[2])
                except ValueError:
                    raise ValueError(
                        f"{q}: {origin}: offset and size must be integers, got {' '.join(group)!r}"
                    ) from None
                if offset < _TAR_BLOCK or offset % _TAR_BLOCK or size < 0 or offset + size > archive_size:
                    raise ValueError(
                        f"{q}: {origin}: file {name or group[0]!r} at offset {offset} with {size} bytes "
                        f"does not lie in archive '{path}' ({archive_size} bytes; offsets are multiples "
                        f"of {_TAR_BLOCK} past a header)"
                    )
                components.append(_Component(group[0], offset, size, name))
            key = split_name(components[0].name)[0] if fields == 4 else f"#{number}"
            samples.append((key, components, origin))
        return samples

    def _dataset_description(self):
        a = self._args
        skipped = (
            " (with missing_component_behavior='skip')" if a["missing_component_behavior"] == "skip" else ""
        )
        return f"no samples in the archives {a['paths']}{skipped}"

    # -- reading --------------------------------------------------------------------
    def _read(self, entry):
        path, outputs, span = entry
        fd, _ = self._descriptor(path, "archive")
        try:
            if span is not None:
                base, length = span
                buffer = _pread(fd, length, base)
                return self._arrays(fd, entry, buffer, np.frombuffer(buffer, np.uint8), base)
            return self._arrays(fd, entry, None, None, 0)
        except OSError as exc:
            raise type(exc)(f"{self._qualname}: cannot read archive '{path}': {exc.strerror or exc}") from exc

    def _arrays(self, fd, entry, buffer, whole, base):
        """The outputs of a sample whose bytes from archive offset ``base`` on are in
        ``buffer`` (``whole``: those bytes as an array; None: each member is read
        alone)."""
        path, outputs, _ = entry
        arrays = []
        views = self._views
        for k, component in enumerate(outputs):
            if component is None:
                arrays.append(np.empty(0, self._args["dtypes"][k].numpy))
                continue
            header = component.offset - _TAR_BLOCK
            if buffer is None:
                data = _pread(fd, _TAR_BLOCK + component.size, header)
                data_bytes, at = np.frombuffer(data, np.uint8), 0
            else:
                data, data_bytes, at = buffer, whole, header - base
            end = at + _TAR_BLOCK + component.size
            # A POSIX header giving the size the index gives (the common case) is
            # checked here; any other header, by _check_member.
            if not (
                len(data) >= end
                and data.startswith(component.size_field, at + 124)
                and data.startswith(b"ustar", at + 257)
            ):
                self._check_member(data, at, path, component)
            array = data_bytes[at + _TAR_BLOCK : end]
            arrays.append(array if views[k] is None else array.view(views[k]))
        return tuple(arrays)

    def _chunk_groups(self, indices):
        """Runs of samples that follow each other in one archive (their members at
        most a header and its padding apart) are read with one read."""
        entries = [self._entries[index] for index in indices]
        spans = [None if span is None else (path, *span) for path, _, span in entries]
        return neighbour_runs(indices, spans, max_gap=2 * _TAR_BLOCK - 1)

    def _load_group(self, indices):
        if len(indices) == 1:
            return [self._load_sample(indices[0])]
        entries = [self._entries[index] for index in indices]
        path = entries[0][0]
        fd, _ = self._descriptor(path, "archive")
        base = entries[0][2][0]
        last = entries[-1][2]
        try:
            buffer = _pread(fd, last[0] + last[1] - base, base)
        except OSError as exc:
            raise type(exc)(f"{self._qualname}: cannot read archive '{path}': {exc.strerror or exc}") from exc
        # The samples' arrays are views of the one buffer.
        whole = np.frombuffer(buffer, np.uint8)
        return [(self._arrays(fd, entry, buffer, whole, base), self._describe(entry)) for entry in entries]

    def _check_member(self, buffer, at, path, component):
        """Raise unless ``buffer`` holds the member's header at ``at`` (any tar format),
        giving its size, and its data after it."""
        if len(buffer) < at + _TAR_BLOCK + component.size:
            raise ValueError(f"{self._where(path, component)}: the archive is truncated")
        size = _tar_member_size(buffer, at)
        if size != component.size:
            if size is None:
                raise ValueError(
                    f"{self._where(path, component)}: no tar header precedes the data; is the index stale?"
                )
            raise ValueError(
                f"{self._where(path, component)}: the index says {component.size} bytes, the archive's "
                f"header {size}; is the index stale?"
            )

    def _where(self, path, component):
        return f"{self._qualname}: '{path}', file {component.name!r} at offset {component.offset}"

    def _describe(self, entry):
        path, outputs, _ = entry
        return tuple(["" if c is None else f"{path}:{c.offset}:{c.name}" for c in outputs])

    def _output_types(self):
        return [(dtype, "") for dtype in self._args["dtypes"]]


def _pread(fd, size, offset):
    """Up to ``size`` bytes at ``offset`` of ``fd`` in a new bytearray (writable, so the
    arrays made over it are)."""
    if not hasattr(os, "preadv"):
        return bytearray(os.pread(fd, size, offset))
    buffer = bytearray(size)
    got = os.preadv(fd, [buffer], offset) if size else 0
    del buffer[got:]  # a short read: the file ends first
    return buffer


def _span(outputs):
    """``(start, length)`` of the bytes that hold a sample's members with their headers,
    read at once; None when they lie far apart (each is then read alone). A sample's
    members usually follow each other in the archive."""
    present = [c for c in outputs if c is not None]
    if not present:
        return None
    first = min(c.offset for c in present) - _TAR_BLOCK
    last = max(c.offset + c.size for c in present)
    needed = sum(_TAR_BLOCK + c.size for c in present)
    return (first, last - first) if last - first <= 2 * needed + 4 * _TAR_BLOCK else None


def _tar_member_size(block, at):
    """The size field of the tar header at ``at`` of ``block`` (bytes), or None when it
    is no header: POSIX and GNU headers say "ustar" at byte 257; others (v7) must have
    a right checksum, tarfile's test."""
    try:
        field = block[at + 124 : at + 136]
        if field[0] & 0x80:  # base-256, for sizes beyond 8 GiB
            size = int.from_bytes(field[1:], "big")
        else:
            size = int(field.split(b"\0", 1)[0].strip() or b"0", 8)
        if block[at + 257 : at + 262] == b"ustar":
            return size
        header = bytes(block[at : at + _TAR_BLOCK])
        stored = int(header[148:156].split(b"\0", 1)[0].strip() or b"0", 8)
    except ValueError:
        return None
    # The checksum counts its own field as eight spaces, the bytes unsigned (or, by
    # some old tars, signed).
    rest = header[:148] + header[156:]
    unsigned = sum(rest) + 256
    if stored == unsigned or stored == unsigned - 256 * sum(b >= 128 for b in rest):
        return size
    return None
