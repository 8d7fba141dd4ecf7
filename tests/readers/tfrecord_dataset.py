"""A small TFRecord dataset made deterministically, for the TFRecord reader tests
and for the golden script that reads the same files with the reference.

The files are written by hand-made encoders (the protobuf wire format of
``tf.train.Example`` and the TFRecord framing with a table-driven CRC-32C), so
the tests do not check ndd's parser against itself. Plain Python only: the
module is imported by the project's tests and by the reference interpreter.
"""

import os
import struct

__all__ = [
    "EXAMPLES",
    "FILES",
    "crc32c",
    "encode_example",
    "feature_specs",
    "missing_feature_specs",
    "frame_record",
    "masked_crc",
    "write_dataset",
    "write_index",
    "write_tfrecord",
]

_CRC_TABLE = []
for _byte in range(256):
    _value = _byte
    for _ in range(8):
        _value = (_value >> 1) ^ 0x82F63B78 if _value & 1 else _value >> 1
    _CRC_TABLE.append(_value)


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of ``data``."""
    value = 0xFFFFFFFF
    for byte in data:
        value = _CRC_TABLE[(value ^ byte) & 0xFF] ^ (value >> 8)
    return value ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    """The CRC as TFRecord stores it: rotated right by 15 bits plus a constant."""
    value = crc32c(data)
    return (((value >> 15) | (value << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 values are written as 10-byte varints
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _feature(kind: str, values) -> bytes:
    if kind == "bytes":
        inner = b"".join(_field(1, v) for v in values)
        return _field(1, inner)
    if kind == "float":
        return _field(2, _field(1, struct.pack(f"<{len(values)}f", *values)) if values else b"")
    if kind == "int64":
        return _field(3, _field(1, b"".join(_varint(v) for v in values)) if values else b"")
    if kind == "int64_unpacked":
        # proto2-style repeated field: one tag per value (parsers must accept it too).
        return _field(3, b"".join(_varint(1 << 3 | 0) + _varint(v) for v in values))
    raise ValueError(kind)


def encode_example(features: dict) -> bytes:
    """A serialized ``tf.train.Example``; ``features`` maps a name to
    ``(kind, values)`` with kind ``"bytes"``, ``"float"``, ``"int64"`` or
    ``"int64_unpacked"``."""
    entries = b""
    for name, (kind, values) in features.items():
        entry = _field(1, name.encode()) + _field(2, _feature(kind, values))
        entries += _field(1, entry)
    return _field(1, entries)


def frame_record(data: bytes) -> bytes:
    """One TFRecord: length, masked CRC of the length, data, masked CRC of the data."""
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))


def write_tfrecord(path: str, payloads) -> list:
    """Write framed records; returns each record's ``(offset, size)``."""
    spans = []
    with open(path, "wb") as fh:
        for data in payloads:
            record = frame_record(data)
            spans.append((fh.tell(), len(record)))
            fh.write(record)
    return spans


def write_index(path: str, spans) -> None:
    """An index file as DALI's ``tfrecord2idx`` writes it: ``offset size`` lines."""
    with open(path, "w", encoding="utf-8") as fh:
        for offset, size in spans:
            fh.write(f"{offset} {size}\n")


def _example(file_number: int, record: int) -> dict:
    """The features of one record; some records leave out optional features."""
    n = file_number * 10 + record
    features = {
        "label": ("int64", [n - 3]),
        "image": ("bytes", [bytes((n * 7 + k) % 256 for k in range(5 + 3 * record))]),
        "shape": ("int64", [n, n + 1, -n]),
        "matrix": ("float", [n + 0.5, -n - 0.25, n * 1.5, 0.125]),
        "count": ("int64", [record]),
        "boxes": ("float", [0.1 * (n + k) for k in range(2 * (record % 3))]),
        "pairs": ("float", [0.1 * (n + k) for k in range(2 * (record % 3))]),
        "tokens": ("int64_unpacked" if record % 2 else "int64", list(range(n, n + record + 1))),
        "words": ("bytes", [b"w%d" % k for k in range(record % 3)]),
        "name": ("bytes", [b"record-%d-%d" % (file_number, record)]),
        "name_1": ("bytes", [b"n%d" % n]),
    }
    if record % 2 == 1:
        features["weight"] = ("float", [0.5 * n])
    return features


# File name -> number of records.
FILES = {"first.tfrecord": 4, "second.tfrecord": 3}

EXAMPLES = {
    name: [_example(number, r) for r in range(count)] for number, (name, count) in enumerate(FILES.items())
}


def feature_specs(tfrec) -> dict:
    """The ``features`` argument reading every feature that all records hold, built
    with ``tfrec`` (``nvidia.dali.tfrecord`` or ``ndd.tfrecord``)."""
    return {
        "label": tfrec.FixedLenFeature([], tfrec.int64, -1),
        "count": tfrec.FixedLenFeature([1], tfrec.int64, -1),
        "image": tfrec.FixedLenFeature([], tfrec.string, ""),
        "shape": tfrec.FixedLenFeature([3], tfrec.int64, 0),
        "matrix": tfrec.FixedLenFeature([2, 2], tfrec.float32, 0.0),
        "boxes": tfrec.VarLenFeature(tfrec.float32, -1.0),
        "pairs": tfrec.VarLenFeature([2], tfrec.float32, 0.0),
        "tokens": tfrec.VarLenFeature(tfrec.int64, 0),
        "name": tfrec.FixedLenFeature((), tfrec.string, ""),
        "name_1": tfrec.FixedLenFeature([1], tfrec.string, ""),
    }


def missing_feature_specs(tfrec) -> dict:
    """Features some or all records lack ("weight" is in the odd records only).
    The reference returns uninitialised memory for them, so they are not part of
    the goldens."""
    return {
        "weight": tfrec.FixedLenFeature([1], tfrec.float32, 7.5),
        "absent": tfrec.FixedLenFeature([2, 2], tfrec.int64, 3),
        "absent_text": tfrec.FixedLenFeature([], tfrec.string, "none"),
        "absent_list": tfrec.VarLenFeature(tfrec.int64, 3),
        "absent_pairs": tfrec.VarLenFeature([2], tfrec.float32, 0.0),
    }


def write_dataset(folder: str) -> tuple:
    """Write the dataset's TFRecord files and their indices into ``folder``;
    returns ``(tfrecord paths, index paths)``."""
    paths, indices = [], []
    for name, examples in EXAMPLES.items():
        path = os.path.join(folder, name)
        spans = write_tfrecord(path, [encode_example(e) for e in examples])
        index = path + ".idx"
        write_index(index, spans)
        paths.append(path)
        indices.append(index)
    return paths, indices
