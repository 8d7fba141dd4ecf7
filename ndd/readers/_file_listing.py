"""The dataset of the readers of one file per sample (Numpy, Fits): ``file_root``
scanned with ``file_filter``, a ``file_list``, or ``files``."""

import fnmatch
import os

from .._prepare.args import InvalidArgumentError
from .file import _join

__all__ = ["FilteredFileListing"]


class FilteredFileListing:
    """Mixin of a ``Reader`` whose samples are files, each listed as ``(name, path)``
    (``name`` as given or found, relative to ``file_root``; ``path`` to open).

    The dataset is one of: ``file_root`` alone (its files, then the files of each of
    its immediate sub-folders, each folder in sorted name order, that match
    ``file_filter``), ``file_list`` (a text file of one path per line, relative to
    ``file_root`` or else to the list's folder), or ``files`` (paths relative to
    ``file_root`` when given). The reader declares the arguments ``file_root``,
    ``file_filter``, ``file_list`` and ``files`` and calls
    ``_validate_file_sources`` from its ``_validate_args``."""

    def _validate_file_sources(self, args):
        q = self._qualname
        if args["files"] is not None and args["file_list"] is not None:
            raise InvalidArgumentError(f"{q}: give the files through 'files' or 'file_list', not both")
        if args["files"] is None and args["file_list"] is None and args["file_root"] is None:
            raise InvalidArgumentError(f"{q}: one of 'file_root', 'file_list' or 'files' is required")
        files = args["files"]
        if files is not None:
            if isinstance(files, (str, os.PathLike)):
                files = [files]
            if not isinstance(files, (list, tuple)) or not all(
                isinstance(f, (str, os.PathLike)) for f in files
            ):
                raise InvalidArgumentError(f"{q}: 'files' must be a path or a list of paths, got {files!r}")
            args["files"] = [os.fspath(f) for f in files]

    def _list_samples(self):
        a = self._args
        root = a["file_root"]
        if root is not None and not os.path.isdir(root):
            raise FileNotFoundError(f"{self._qualname}: 'file_root' folder '{root}' does not exist")
        if a["files"] is not None:
            return [(f, _join(root, f)) for f in a["files"]]
        if a["file_list"] is not None:
            return self._read_file_list(a["file_list"], root)
        return self._scan(root, a["file_filter"])

    def _read_file_list(self, list_path, root):
        try:
            with open(list_path, "rb") as fh:
                lines = fh.read().split(b"\n")
        except OSError as exc:
            raise type(exc)(
                f"{self._qualname}: cannot read 'file_list' '{list_path}': {exc.strerror or exc}"
            ) from None
        base = root if root is not None else os.path.dirname(list_path)
        # Each non-empty line is a path as it stands (spaces included, as in the
        # reference); only the line ending is removed.
        paths = [os.fsdecode(line.rstrip(b"\r")) for line in lines]
        return [(p, _join(base, p)) for p in paths if p]

    @staticmethod
    def _scan(root, pattern):
        # The root's own files come first, then those of each immediate sub-folder
        # (deeper ones are not searched), folders and files in sorted name order.
        entries = []
        folders = ["."] + sorted(e.name for e in os.scandir(root) if e.is_dir())
        for folder in folders:
            path = os.path.join(root, folder) if folder != "." else root
            names = sorted(
                e.name for e in os.scandir(path) if e.is_file() and fnmatch.fnmatchcase(e.name, pattern)
            )
            entries += [(f"{folder}/{name}", os.path.join(path, name)) for name in names]
        return entries

    def _dataset_description(self):
        a = self._args
        if a["files"] is not None:
            return "'files' is empty"
        if a["file_list"] is not None:
            return f"'file_list' '{a['file_list']}' lists no files"
        return f"no file in '{a['file_root']}' or its sub-folders matches file_filter {a['file_filter']!r}"

    def _describe(self, entry):
        return entry[0]
