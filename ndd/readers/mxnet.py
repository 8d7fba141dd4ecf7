"""``readers.MXNet``: images and labels from MXNet RecordIO files (``.rec``)
and their index (``.idx``).

The format is read here rather than through a library: RecordIO has no
maintained standalone package (it lives inside MXNet, which is retired), and it
is small. A ``.rec`` file is a sequence of records; each record is

- the magic number ``0xCED7230A`` (uint32, little-endian),
- one uint32 word: a continuation flag in the top 3 bits and the payload length
  in the low 29 bits,
- the payload, padded with zeros to a multiple of 4 bytes.

A payload containing the magic number at a 4-byte boundary is stored split
there into parts (flag 1 = first, 2 = middle, 3 = last; 0 = not split), and the
magic number is put back between the parts when reading. An image record's
payload starts with a 24-byte header (``flag`` uint32, ``label`` float32, two
uint64 ids); with ``flag > 0`` the header's label is replaced by ``flag``
float32 labels that follow it; the rest is the encoded image.

The ``.idx`` file holds one ``position offset`` line per record: the byte
offset of the record in the ``.rec`` files taken one after the other.
"""

import bisect
import itertools
import os
import struct

import numpy as np

from .._prepare.args import Arg, InvalidArgumentError
from .._types import float32, uint8
from ._base import Reader, path_list, text_lines

__all__ = ["MXNet"]

MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", MAGIC)
_PART_HEAD = struct.Struct("<II")  # magic, continuation flag << 29 | length
_LENGTH_MASK = (1 << 29) - 1
_WHOLE, _FIRST, _MIDDLE, _LAST = range(4)
_IMAGE_HEADER = struct.Struct("<IfQQ")  # label count flag, label, id, id2


class MXNet(Reader):
    """Read ``(image, label)`` samples from MXNet RecordIO files.

    The records are the ones the index lists, in the order of their offsets
    (the index's own numbering is not used).

    Outputs: the encoded image (uint8, 1-D) and the labels (float32, shape
    ``(1,)``, or ``(flag,)`` for records that store ``flag`` labels).

    With ``shuffle_after_epoch`` every epoch reads the records in a new random
    order; the reference implementation instead shuffles the order of whole
    ``.rec`` files and keeps the records of each file in sequence.
    """

    ARGS = (
        Arg(
            "index_path",
            "any",
            doc="The index (.idx) file: ``position offset`` lines, the offset counted in bytes "
            "over the .rec files taken one after the other.",
            type_doc="str or list of one str",
        ),
        Arg("path", "any", doc="RecordIO (.rec) file, or a list of them.", type_doc="str or list of str"),
    )
    OUTPUTS = ("image", "label")

    def _validate_args(self, args):
        q = self._qualname
        args["path"] = path_list(q, "path", args["path"])
        index = path_list(q, "index_path", args["index_path"])
        if len(index) != 1:
            raise InvalidArgumentError(
                f"{q}: 'index_path' must name one index file, got {len(index)}: {index}"
            )
        args["index_path"] = index[0]

    def _list_samples(self):
        q = self._qualname
        sizes = []
        for path in self._args["path"]:
            try:
                sizes.append(os.path.getsize(path))
            except OSError as exc:
                raise type(exc)(f"{q}: cannot read RecordIO file '{path}': {exc.strerror or exc}") from None
        starts = list(itertools.accumulate([0] + sizes))
        entries = []
        for offset in sorted(self._index_offsets(starts[-1])):
            # The file holding this offset: the last one starting at or before it.
            file = bisect.bisect_right(starts, offset) - 1
            entries.append((file, offset - starts[file]))
        return entries

    def _index_offsets(self, total_size):
        """The offset of each record the index lists, in the index's order."""
        q, index = self._qualname, self._args["index_path"]
        try:
            lines = text_lines(index)
        except OSError as exc:
            raise type(exc)(f"{q}: cannot read 'index_path' '{index}': {exc.strerror or exc}") from None
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 2 or not all(f.isdigit() for f in fields):
                raise ValueError(
                    f"{q}: line {number} of index '{index}' must be 'position offset', got {line!r}"
                )
            offset = int(fields[1])
            if offset >= total_size:
                raise ValueError(
                    f"{q}: line {number} of index '{index}' gives offset {offset}, past the end of "
                    f"the RecordIO files ({total_size} bytes)"
                )
            yield offset

    def _dataset_description(self):
        return f"the index '{self._args['index_path']}' lists no records"

    def _describe(self, entry):
        file, offset = entry
        return f"{self._args['path'][file]} at index {offset}"

    def _read(self, entry):
        payload = self._payload(entry)
        if len(payload) < _IMAGE_HEADER.size:
            raise self._error(
                entry, f"the payload has {len(payload)} bytes, less than the {_IMAGE_HEADER.size}-byte header"
            )
        flag, label, _, _ = _IMAGE_HEADER.unpack_from(payload)
        start = _IMAGE_HEADER.size + 4 * flag
        if flag == 0:
            labels = np.array([label], np.float32)
        elif start > len(payload):
            raise self._error(
                entry, f"the header announces {flag} labels, the payload has {len(payload)} bytes"
            )
        else:
            labels = np.frombuffer(payload, "<f4", count=flag, offset=_IMAGE_HEADER.size).astype(np.float32)
        return np.frombuffer(payload, np.uint8, offset=start).copy(), labels

    def _payload(self, entry):
        """The record's payload, its parts joined by the magic number they were split at."""
        fd, _ = self._descriptor(self._args["path"][entry[0]], "RecordIO file")
        position = entry[1]
        parts = []
        while True:
            head = os.pread(fd, _PART_HEAD.size, position)
            if len(head) < _PART_HEAD.size:
                raise self._error(entry, f"the file ends inside the record header at byte {position}")
            magic, word = _PART_HEAD.unpack(head)
            if magic != MAGIC:
                raise self._error(
                    entry, f"wrong magic number 0x{magic:08x} at byte {position} (not a record)"
                )
            flag, length = word >> 29, word & _LENGTH_MASK
            starts_record = flag in (_WHOLE, _FIRST)
            if starts_record != (not parts):
                where = "continues a record" if flag in (_MIDDLE, _LAST) else "starts a new record"
                raise self._error(entry, f"the part at byte {position} {where} (continuation flag {flag})")
            data = os.pread(fd, length, position + _PART_HEAD.size)
            if len(data) < length:
                raise self._error(
                    entry,
                    f"truncated: the part at byte {position} needs {length} bytes, the file has {len(data)} left",
                )
            parts.append(data)
            position += _PART_HEAD.size + length + (-length % 4)
            if flag in (_WHOLE, _LAST):
                return _MAGIC_BYTES.join(parts)

    def _error(self, entry, message):
        return ValueError(f"{self._qualname}: record '{self._describe(entry)}': {message}")

    def _output_types(self):
        return [(uint8, ""), (float32, "")]
