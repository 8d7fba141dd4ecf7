"""``readers.File``: files from class folders, a list file, or a list of paths."""

import fnmatch
import os
import re

import numpy as np

from .._prepare.args import Arg, InvalidArgumentError
from .._types import int32, uint8
from ._base import Reader, text_lines

# A file_list line with a label: the path, spaces or tabs, the label.
_LIST_LINE = re.compile(r"(.*?)[ \t]+(\S+)")
_LABEL_MAX = 2**31 - 1

__all__ = ["File", "read_file_bytes"]

_DEFAULT_FILTERS = [
    "*.jpg", "*.jpeg", "*.png", "*.bmp", "*.tif", "*.tiff", "*.pnm", "*.ppm", "*.pgm", "*.pbm",
    "*.jp2", "*.webp", "*.flac", "*.ogg", "*.wav",
]  # fmt: skip


def read_file_bytes(path: str, reader: str) -> np.ndarray:
    """The contents of ``path`` as a writable 1-D uint8 array, or an OSError naming
    the reader and the file."""
    try:
        return _read_whole_file(path)
    except OSError as exc:
        raise type(exc)(f"{reader}: cannot read file '{path}': {exc.strerror or exc}") from exc


def _read_whole_file(path):
    # One open, fstat and read into a preallocated array: several times faster
    # than np.fromfile or a Python file object for the small files datasets are
    # made of.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        size = os.fstat(fd).st_size
        data = np.empty(size, np.uint8)
        got = _read_into(fd, data) if size else 0
        view = memoryview(data)
        while got < size:
            n = _read_into(fd, view[got:])
            if not n:
                # The file shrank while being read: return what it holds now.
                return data[:got]
            got += n
        return data
    finally:
        os.close(fd)


if hasattr(os, "readv"):

    def _read_into(fd, buffer):
        return os.readv(fd, [buffer])

else:  # Windows

    def _read_into(fd, buffer):
        chunk = os.read(fd, len(buffer))
        memoryview(buffer).cast("B")[: len(chunk)] = chunk
        return len(chunk)


class File(Reader):
    """Read files whole, with an integer label each.

    The dataset is one of: ``file_root`` alone (each sub-folder is a class,
    labelled 0, 1, ... in sorted name order; its files, in sorted order, that
    match ``file_filters``), ``file_list`` (a text file of ``path label`` lines,
    paths relative to ``file_root`` or else to the list's folder), or ``files``
    with optional ``labels`` (paths relative to ``file_root`` when given).

    Outputs: the file contents (uint8, 1-D) and the label (int32, shape ``(1,)``).
    """

    ARGS = (
        Arg(
            "case_sensitive_filter",
            "bool",
            False,
            doc="Match ``file_filters`` and ``dir_filters`` case-sensitively.",
        ),
        Arg(
            "dir_filters",
            "any",
            None,
            doc="Glob patterns selecting the class folders of ``file_root``.",
            type_doc="str or list of str",
        ),
        Arg(
            "file_filters",
            "any",
            _DEFAULT_FILTERS,
            doc="Glob patterns selecting the files of each class folder.",
            type_doc="str or list of str",
        ),
        Arg("file_list", "str", None, doc="Text file listing ``path label`` per line."),
        Arg("file_root", "str", None, doc="Folder holding the class folders, or the root of relative paths."),
        Arg(
            "files",
            "any",
            None,
            doc="Paths of the files to read (one path or a list).",
            type_doc="str or list of str",
        ),
        Arg(
            "labels",
            "any",
            None,
            doc="One label per entry of ``files`` (default: the file's position).",
            type_doc="list of int",
        ),
    )
    OUTPUTS = ("data", "label")

    def _validate_args(self, args):
        q = self._qualname
        if args["files"] is not None and args["file_list"] is not None:
            raise InvalidArgumentError(f"{q}: give the files through 'files' or 'file_list', not both")
        if args["files"] is None and args["file_list"] is None and args["file_root"] is None:
            raise InvalidArgumentError(f"{q}: one of 'file_root', 'file_list' or 'files' is required")
        if args["labels"] is not None and args["files"] is None:
            raise InvalidArgumentError(f"{q}: 'labels' needs 'files'")
        for key in ("file_filters", "dir_filters"):
            args[key] = _patterns(q, key, args[key])
        if args["files"] is not None:
            files = args["files"]
            if isinstance(files, (str, os.PathLike)):
                files = [files]  # one file, as the reference takes it
            if not isinstance(files, (list, tuple)) or not all(
                isinstance(f, (str, os.PathLike)) for f in files
            ):
                raise InvalidArgumentError(f"{q}: 'files' must be a path or a list of paths, got {files!r}")
            args["files"] = [os.fspath(f) for f in files]
            labels = args["labels"]
            if labels is not None:
                labels = [int(v) for v in np.asarray(labels).reshape(-1)]
                outside = [v for v in labels if not -_LABEL_MAX - 1 <= v <= _LABEL_MAX]
                if outside:
                    raise InvalidArgumentError(
                        f"{q}: 'labels' value {outside[0]} does not fit the int32 label output"
                    )
                if len(labels) != len(args["files"]):
                    raise InvalidArgumentError(
                        f"{q}: Provided {len(labels)} labels for {len(args['files'])} files."
                    )
                args["labels"] = labels

    def _list_samples(self):
        a = self._args
        root = a["file_root"]
        if root is not None and not os.path.isdir(root):
            raise FileNotFoundError(f"{self._qualname}: 'file_root' folder '{root}' does not exist")
        if a["files"] is not None:
            labels = a["labels"] if a["labels"] is not None else range(len(a["files"]))
            return [(f, _join(root, f), label) for f, label in zip(a["files"], labels, strict=True)]
        if a["file_list"] is not None:
            return self._read_file_list(a["file_list"], root)
        return self._scan_folders(root)

    def _read_file_list(self, list_path, root):
        q = self._qualname
        try:
            lines = text_lines(list_path)
        except OSError as exc:
            raise type(exc)(f"{q}: cannot read 'file_list' '{list_path}': {exc.strerror or exc}") from None
        base = root if root is not None else os.path.dirname(list_path)
        entries = []
        for number, line in enumerate(lines, 1):
            line = line.rstrip()
            if not line:
                continue
            # As the reference: the label is the digits after the last spaces or tabs, the
            # path what comes before them (spaces inside it kept).
            fields = _LIST_LINE.fullmatch(line)
            if fields is None:
                # A line holding a path only: the label is its position.
                path, label = line, len(entries)
            else:
                path, label = fields.group(1), fields.group(2)
                if not (label.isascii() and label.isdigit()):
                    raise ValueError(
                        f"{q}: line {number} of 'file_list' '{list_path}' must be 'path label' "
                        f"(a label of digits), got {line!r}"
                    )
                label = int(label)
                if label > _LABEL_MAX:
                    raise ValueError(
                        f"{q}: line {number} of 'file_list' '{list_path}': label {label} does not fit "
                        "the int32 label output"
                    )
            entries.append((path, _join(base, path), label))
        return entries

    def _scan_folders(self, root):
        a = self._args
        sensitive = a["case_sensitive_filter"]
        classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
        if a["dir_filters"] is not None:
            classes = [c for c in classes if _matches(c, a["dir_filters"], sensitive)]
        entries = []
        for label, name in enumerate(classes):
            folder = os.path.join(root, name)
            files = sorted(e.name for e in os.scandir(folder) if e.is_file())
            for f in files:
                if _matches(f, a["file_filters"], sensitive):
                    relative = f"{name}/{f}"
                    entries.append((relative, os.path.join(folder, f), label))
        return entries

    def _dataset_description(self):
        a = self._args
        if a["files"] is not None:
            return "'files' is empty"
        if a["file_list"] is not None:
            return f"'file_list' '{a['file_list']}' lists no files"
        return f"no files in the class folders of '{a['file_root']}' match {a['file_filters']}"

    def _read(self, entry):
        _, path, label = entry
        return read_file_bytes(path, self._qualname), np.array([label], np.int32)

    def _describe(self, entry):
        return entry[0]

    def _output_types(self):
        return [(uint8, ""), (int32, "")]


def _join(root, path):
    return path if root is None else os.path.join(root, path)


def _patterns(qualname, key, value):
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(p, str) for p in value):
        raise InvalidArgumentError(
            f"{qualname}: '{key}' must be a glob pattern or a list of them, got {value!r}"
        )
    return list(value)


def _matches(name, patterns, case_sensitive):
    if case_sensitive:
        return any(fnmatch.fnmatchcase(name, p) for p in patterns)
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, p.lower()) for p in patterns)
