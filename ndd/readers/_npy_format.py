"""The ``.npy`` file format: the header, and the data mapped or read from it.

Only the arrays the reference reads are accepted: little-endian (or
byte-order-free) booleans, integers and 16/32/64-bit floats, C or Fortran
order, any number of dimensions (0-D included). Everything else is refused
with an error naming the file, before any data is touched.
"""

import functools
import io
import os
import re
import typing

import numpy as np

from .file import read_file_bytes

__all__ = ["NpyHeader", "read_npy_header", "read_npy_file", "map_npy_data", "read_npy_data"]

_MAGIC = b"\x93NUMPY"
# Format version -> (bytes of the header length field, header text encoding).
_VERSIONS = {1: (2, "latin1"), 2: (4, "latin1"), 3: (4, "utf8")}
_HEADER_KEYS = {"descr", "fortran_order", "shape"}
_SUPPORTED = "bool, int8 ... int64, uint8 ... uint64, float16, float32, float64"


class NpyHeader(typing.NamedTuple):
    """What a ``.npy`` header says about the array that follows it."""

    shape: tuple
    dtype: np.dtype
    fortran_order: bool
    data_offset: int

    @property
    def slow_axis(self) -> int:
        """The axis whose index varies slowest in the file (0 in C order)."""
        return len(self.shape) - 1 if self.fortran_order else 0

    @property
    def order(self) -> str:
        return "F" if self.fortran_order else "C"


class _FormatError(Exception):
    """Why a file is not a ``.npy`` file (completed with its name by the caller)."""


class _UnsupportedArray(Exception):
    """Why a valid ``.npy`` file cannot be read (completed with its name by the caller)."""


def read_npy_header(path: str, reader: str) -> NpyHeader:
    """Parse and check the header of ``path``.

    Raises OSError (unreadable file) or ValueError (not a ``.npy`` file, an
    element type the reader does not support, or less data than the header
    describes), each naming ``reader`` and the file.
    """
    try:
        with open(path, "rb") as fh:
            header = _parse_checked(fh, path, reader)
            file_size = os.fstat(fh.fileno()).st_size
    except OSError as exc:
        raise type(exc)(f"{reader}: cannot read file '{path}': {exc.strerror or exc}") from exc
    _check_size(header, file_size, path, reader)
    return header


def read_npy_file(path: str, reader: str, headers: dict) -> np.ndarray:
    """The whole array of ``path``, read with one ``read`` (no memory map: the
    array is copied out anyway). ``headers`` caches parsed headers, with their
    data size, by their bytes, since the files of a dataset mostly share one.
    Errors as ``read_npy_header``."""
    data = read_file_bytes(path, reader)
    prefix_length = len(_MAGIC) + 2
    prefix = data[:prefix_length].tobytes()
    version = _VERSIONS.get(prefix[-2]) if len(prefix) == prefix_length else None
    if not prefix.startswith(_MAGIC) or version is None:
        _parse_checked(io.BytesIO(prefix), path, reader)  # raises the format error
    length_end = prefix_length + version[0]
    end = length_end + int.from_bytes(data[prefix_length:length_end].tobytes(), "little")
    key = data[:end].tobytes()
    cached = headers.get(key)
    if cached is None:
        header = _parse_checked(io.BytesIO(key), path, reader)
        cached = headers[key] = (header, _data_bytes(header))
    header, nbytes = cached
    if data.size - header.data_offset < nbytes:
        _check_size(header, data.size, path, reader)
    array = (
        data[header.data_offset : header.data_offset + nbytes]
        .view(header.dtype)
        .reshape(header.shape, order=header.order)
    )
    # Outputs are C-ordered whatever the file's order.
    return array.copy(order="C") if header.fortran_order else array


def _data_bytes(header):
    return int(np.prod(header.shape, dtype=np.int64)) * header.dtype.itemsize


def _parse_checked(fh, path, reader) -> NpyHeader:
    try:
        header = _parse_header(fh)
    except _FormatError as exc:
        raise ValueError(f"{reader}: '{path}' is not a valid .npy file: {exc}") from None
    except _UnsupportedArray as exc:
        raise ValueError(f"{reader}: '{path}' {exc}") from None
    dtype = header.dtype
    if dtype.fields is not None or dtype.subdtype is not None:
        raise ValueError(f"{reader}: '{path}' holds a structured array, which is not supported")
    if dtype.kind not in "biuf" or (dtype.kind == "f" and dtype.itemsize > 8):
        raise ValueError(
            f"{reader}: '{path}' holds elements of type {dtype}, which is not supported "
            f"(supported: {_SUPPORTED})"
        )
    if not dtype.isnative:
        raise ValueError(f"{reader}: '{path}' holds big-endian data ({dtype.str}), which is not supported")
    return header


def _check_size(header, file_size, path, reader):
    data_bytes = _data_bytes(header)
    if file_size - header.data_offset < data_bytes:
        raise ValueError(
            f"{reader}: '{path}' is truncated: its header describes {data_bytes} bytes of data, "
            f"the file holds {max(file_size - header.data_offset, 0)}"
        )


# Headers up to this length are kept, parsed, by header_of: the files of a dataset mostly
# share a few headers (one shape and type), and parsing one costs tens of microseconds.
_CACHED_HEADER_BYTES = 4096


def header_of(data: np.ndarray) -> NpyHeader:
    """The header of the ``.npy`` file held by 1-D byte array ``data``, parsed as
    ``_parse_header`` does (and raising as it does); a header met before comes from a cache."""
    prefix = data[:12].tobytes()
    version = _VERSIONS.get(prefix[6]) if len(prefix) > 6 and prefix.startswith(_MAGIC) else None
    if version is not None and len(prefix) >= 8 + version[0]:
        end = 8 + version[0] + int.from_bytes(prefix[8 : 8 + version[0]], "little")
        if end <= min(data.size, _CACHED_HEADER_BYTES):
            return _cached_header(data[:end].tobytes())
    return _parse_header(io.BytesIO(data))


@functools.lru_cache(maxsize=256)
def _cached_header(raw: bytes) -> NpyHeader:
    return _parse_header(io.BytesIO(raw))


def _parse_header(fh) -> NpyHeader:
    prefix = fh.read(len(_MAGIC) + 2)
    if len(prefix) < len(_MAGIC) + 2 or not prefix.startswith(_MAGIC):
        raise _FormatError("it does not start with the .npy magic string")
    major, minor = prefix[-2], prefix[-1]
    if major not in _VERSIONS:
        raise _FormatError(f"unknown format version {major}.{minor}")
    length_bytes, encoding = _VERSIONS[major]
    length_field = fh.read(length_bytes)
    if len(length_field) < length_bytes:
        raise _FormatError("the header is cut short")
    length = int.from_bytes(length_field, "little")
    raw = fh.read(length)
    if len(raw) < length:
        raise _FormatError("the header is cut short")
    try:
        fields = _header_fields(raw.decode(encoding))
    except UnicodeDecodeError:
        fields = None
    if fields is not None and fields.get("descr") == "[":
        raise _UnsupportedArray("holds a structured array, which is not supported")
    if fields is None or set(fields) != _HEADER_KEYS:
        raise _FormatError(f"the header is not a dict of {sorted(_HEADER_KEYS)}: {raw[:80]!r}")
    descr, order, shape_text = fields["descr"], fields["fortran_order"], fields["shape"]
    # What numpy's own reader requires of the values: a type string, a bool, a tuple of sizes.
    if descr[:1] not in ("'", '"'):
        raise _FormatError(f"the header's 'descr' is not a type string: {descr!r}")
    if order not in ("True", "False"):
        raise _FormatError(f"the header's 'fortran_order' is not True or False: {order!r}")
    sizes = re.findall(r"\d+", shape_text)
    if not shape_text.startswith("(") or (len(sizes) == 1 and "," not in shape_text):
        raise _FormatError(f"the header's 'shape' is not a tuple of sizes: {shape_text!r}")
    try:
        dtype = np.dtype(descr[1:-1])
    except (TypeError, ValueError):
        raise _FormatError(f"unknown element type {descr}") from None
    shape = tuple(int(size) for size in sizes)
    return NpyHeader(shape, dtype, order == "True", len(prefix) + length_bytes + length)


# One "'key': value," of a header: a quoted string, True/False, a tuple of sizes,
# or the opening bracket of a structured type's field list.
_HEADER_ITEM = re.compile(
    r"""\s*(?:'([^']*)'|"([^"]*)")\s*:\s*"""
    r"""('[^']*'|"[^"]*"|True|False|\((?:\s*\d+L?\s*,)*\s*(?:\d+L?\s*)?\)|\[)"""
)
_ITEM_END = re.compile(r"\s*(?:,|$)")


def _header_fields(text):
    """The raw value text of each key of a header dict, or None if it is not one.

    Parsed by hand rather than with ``ast.literal_eval``: the loading threads read
    headers, and CPython 3.11's AST state is shared between threads (an
    ``ast`` call racing another thread's can raise SystemError there).
    """
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    body, pos, fields = text[1:-1], 0, {}
    while body[pos:].strip():
        match = _HEADER_ITEM.match(body, pos)
        if match is None:
            return None
        key, value = match.group(1) or match.group(2), match.group(3)
        fields[key] = value
        if value == "[":
            break  # a structured type: what follows is its field list
        end = _ITEM_END.match(body, match.end())
        if end is None:
            return None
        pos = end.end()
    return fields


def map_npy_data(path: str, header: NpyHeader, reader: str) -> np.ndarray:
    """The array of ``path`` memory-mapped read-only (nothing is read yet)."""
    if 0 in header.shape:
        # A file without data cannot be mapped; there is nothing to read either.
        return np.empty(header.shape, header.dtype)
    try:
        return np.memmap(
            path,
            dtype=header.dtype,
            mode="r",
            offset=header.data_offset,
            shape=header.shape,
            order=header.order,
        )
    except OSError as exc:
        raise type(exc)(f"{reader}: cannot map file '{path}': {exc.strerror or exc}") from exc


def read_npy_data(path: str, header: NpyHeader, slow_range: tuple | None, reader: str) -> np.ndarray:
    """The array of ``path`` read into memory, restricted along its slowest axis to
    ``slow_range`` = ``(start, stop)`` (in bounds) when given: only those bytes
    are read."""
    shape = list(header.shape)
    offset = header.data_offset
    if slow_range is not None and shape:
        axis = header.slow_axis
        start, stop = slow_range
        # Elements from one index of the slow axis to the next.
        stride = int(np.prod(shape[:axis] + shape[axis + 1 :], dtype=np.int64))
        offset += start * stride * header.dtype.itemsize
        shape[axis] = stop - start
    count = int(np.prod(shape, dtype=np.int64))
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = np.fromfile(fh, dtype=header.dtype, count=count)
    except OSError as exc:
        raise type(exc)(f"{reader}: cannot read file '{path}': {exc.strerror or exc}") from exc
    if data.size < count:
        # The file shrank after its header was checked.
        raise ValueError(f"{reader}: '{path}' is truncated: read {data.size} of {count} elements")
    return data.reshape(shape, order=header.order)
