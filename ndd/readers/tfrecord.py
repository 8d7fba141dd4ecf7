"""``readers.TFRecord``: ``tf.train.Example`` records of TFRecord files, located by index files."""

import functools
import mmap
import os
import struct

import numpy as np

from .. import tfrecord as tfrec
from .._prepare.args import Arg, InvalidArgumentError
from .._types import float32, int64, uint8
from ._base import Reader, neighbour_runs, path_list, text_lines
from ._protobuf import message_classes

__all__ = ["TFRecord"]

# A record's framing: its length and the length's checksum, then the data's checksum.
_HEADER, _FOOTER = struct.Struct("<QI"), struct.Struct("<I")

_OUTPUT_TYPES = {tfrec.int64: int64, tfrec.float32: float32, tfrec.string: uint8}
_NUMPY_TYPES = {tfrec.int64: np.int64, tfrec.float32: np.float32}
# Which member of the Feature message holds values of each element type.
_VALUE_LISTS = {tfrec.int64: "int64_list", tfrec.float32: "float_list", tfrec.string: "bytes_list"}
_LIST_TYPES = {"int64_list": "int64", "float_list": "float32", "bytes_list": "string"}


def example_message_class():
    """The ``tf.train.Example`` message class, built from a descriptor written here
    (no generated code and no TensorFlow needed, only the ``protobuf`` package)."""
    return _message_classes()["ndd.tf.Example"]


@functools.cache
def _message_classes():
    try:
        from google.protobuf import descriptor_pb2
    except ImportError:
        raise ImportError(
            "ndd.readers.TFRecord needs the 'protobuf' package to parse the records: pip install protobuf"
        ) from None
    field = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="ndd/tf_example.proto", package="ndd.tf", syntax="proto3")

    def message(name, fields, nested=(), oneof=None):
        msg = proto.message_type.add(name=name)
        for field_name, number, label, type_, type_name in fields:
            f = msg.field.add(name=field_name, number=number, label=label, type=type_)
            if type_name:
                f.type_name = type_name
            if oneof is not None:
                f.oneof_index = 0
        if oneof is not None:
            msg.oneof_decl.add(name=oneof)
        for nested_name, nested_fields in nested:
            entry = msg.nested_type.add(name=nested_name)
            entry.options.map_entry = True
            for field_name, number, label, type_, type_name in nested_fields:
                f = entry.field.add(name=field_name, number=number, label=label, type=type_)
                if type_name:
                    f.type_name = type_name
        return msg

    repeated, optional = field.LABEL_REPEATED, field.LABEL_OPTIONAL
    message("BytesList", [("value", 1, repeated, field.TYPE_BYTES, None)])
    message("FloatList", [("value", 1, repeated, field.TYPE_FLOAT, None)])
    message("Int64List", [("value", 1, repeated, field.TYPE_INT64, None)])
    message(
        "Feature",
        [
            ("bytes_list", 1, optional, field.TYPE_MESSAGE, ".ndd.tf.BytesList"),
            ("float_list", 2, optional, field.TYPE_MESSAGE, ".ndd.tf.FloatList"),
            ("int64_list", 3, optional, field.TYPE_MESSAGE, ".ndd.tf.Int64List"),
        ],
        oneof="kind",
    )
    message(
        "Features",
        [("feature", 1, repeated, field.TYPE_MESSAGE, ".ndd.tf.Features.FeatureEntry")],
        nested=[
            (
                "FeatureEntry",
                [
                    ("key", 1, optional, field.TYPE_STRING, None),
                    ("value", 2, optional, field.TYPE_MESSAGE, ".ndd.tf.Feature"),
                ],
            )
        ],
    )
    message("Example", [("features", 1, optional, field.TYPE_MESSAGE, ".ndd.tf.Features")])
    # A private pool: the names never clash with TensorFlow's own classes.
    return message_classes([proto])


@functools.cache
def _crc32c():
    """The CRC-32C function of ``google-crc32c``, or None where it is not installed
    (records are then read without checking their checksums)."""
    try:
        import google_crc32c
    except ImportError:
        return None
    return google_crc32c.value


def _masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


class TFRecord(Reader):
    """Read ``tf.train.Example`` records from TFRecord files.

    Each record is one sample, a dict with an entry per key of ``features``
    (Tensors in sample mode, Batches in batch mode). The records are located by
    the index files (``offset size`` per line, one file per TFRecord file, made
    by ``ndd.tfrecord.create_index`` or DALI's ``tfrecord2idx``); the samples
    come in file order, then index order.

    Outputs: int64 features as int64, float32 as float32, string features as the
    bytes of the string (uint8, 1-D). A fixed-length feature has its spec's shape
    (``[]``: a scalar) and its default value where a record lacks it; a
    variable-length one is 1-D (or ``(-1, *partial_shape)``) and empty where a
    record lacks it. When ``google-crc32c`` is installed the records' checksums
    are verified; a corrupted, truncated or unparsable record, or a feature of
    another type or size than its spec, raises when its sample is taken (naming
    the file and the record's offset) and the other samples still come.
    """

    ARGS = (
        Arg(
            "features",
            "any",
            doc="Feature name -> ``ndd.tfrecord.FixedLenFeature(...)`` or ``VarLenFeature(...)``.",
            type_doc="dict of str to ndd.tfrecord.Feature",
        ),
        Arg(
            "index_path",
            "any",
            doc="Index file of each TFRecord file (``offset size`` per record).",
            type_doc="str or list of str",
        ),
        Arg("path", "any", doc="The TFRecord files.", type_doc="str or list of str"),
        Arg(
            "use_o_direct",
            "bool",
            False,
            doc="Accepted for compatibility (needs ``dont_use_mmap=True``); files are read through the "
            "page cache.",
        ),
    )
    OUTPUTS = ("features",)

    def _validate_args(self, args):
        q = self._qualname
        features = args["features"]
        if not isinstance(features, dict) or not features:
            raise InvalidArgumentError(
                f"{q}: 'features' must be a non-empty dict of feature name -> ndd.tfrecord feature, "
                f"got {features!r}"
            )
        for name, spec in features.items():
            if not isinstance(name, str):
                raise InvalidArgumentError(f"{q}: 'features' keys must be feature names (str), got {name!r}")
            if not isinstance(spec, tfrec.Feature):
                raise InvalidArgumentError(
                    f"{q}: 'features'[{name!r}] must be made by ndd.tfrecord.FixedLenFeature or "
                    f"VarLenFeature, got {spec!r}"
                )
            if spec.dtype == tfrec.string and spec.variable_length:
                raise InvalidArgumentError(
                    f"{q}: 'features'[{name!r}]: a string feature is read with FixedLenFeature "
                    "(its output holds the bytes of one string), not VarLenFeature"
                )
            if spec.dtype == tfrec.string and spec.num_elements != 1:
                raise InvalidArgumentError(
                    f"{q}: 'features'[{name!r}]: a string feature holds one string, so its shape must "
                    f"be [] or [1], got {list(spec.shape)}"
                )
        args["features"] = dict(features)
        args["path"] = path_list(q, "path", args["path"])
        args["index_path"] = path_list(q, "index_path", args["index_path"])
        if len(args["path"]) != len(args["index_path"]):
            raise InvalidArgumentError(
                f"{q}: 'index_path' must name one index file per TFRecord file: got "
                f"{len(args['index_path'])} index files for {len(args['path'])} files"
            )
        if args["use_o_direct"] and not args["dont_use_mmap"]:
            raise InvalidArgumentError(f"{q}: 'use_o_direct' needs 'dont_use_mmap'=True")
        example_message_class()  # a missing protobuf package fails here, not at the first sample
        self._extractors = [(name, _extractor(name, spec)) for name, spec in args["features"].items()]
        self._maps = {}  # path -> (read-only mapping, size), see _bytes

    def _list_samples(self):
        q = self._qualname
        entries = []
        for path, index in zip(self._args["path"], self._args["index_path"], strict=True):
            if not os.path.isfile(path):
                raise FileNotFoundError(f"{q}: TFRecord file '{path}' does not exist")
            entries += [(path, offset, size) for offset, size in _read_index(q, index)]
        return entries

    def _dataset_description(self):
        return f"the index files {self._args['index_path']} list no records"

    def _describe(self, entry):
        path, offset, _ = entry
        return f"{path} at index {offset}"

    def _output_types(self):
        return [(_OUTPUT_TYPES[spec.dtype], "") for spec in self._args["features"].values()]

    def _package(self, outputs):
        return dict(zip(self._args["features"], outputs, strict=True))

    def _read(self, entry):
        path, offset, size = entry
        buffer, origin, file_size = self._bytes(path, offset, offset + size)
        return self._parse(entry, buffer, offset - origin, file_size)

    def _bytes(self, path, start, end):
        """``(buffer, origin, file size)``: bytes ``start`` to ``end`` of the file at
        ``path`` are those of ``buffer`` from ``start - origin`` on. The file is
        memory-mapped, as the reference reads it (mapped once and kept while the reader
        lives: a record is then copied once, out of the page cache), or read with
        ``pread`` under ``dont_use_mmap``."""
        if self._args["dont_use_mmap"]:
            fd, file_size = self._descriptor(path, "TFRecord file")
            try:
                return os.pread(fd, end - start, start), start, file_size
            except OSError as exc:
                raise self._read_error(path, start, exc) from exc
        mapped = self._maps.get(path)
        if mapped is None:
            mapped = self._maps.setdefault(path, self._map(path))
        return mapped[0], 0, mapped[1]

    def _map(self, path):
        """``(mapping, size)`` of the file at ``path`` (an empty file maps to b"")."""
        fd = self._open(path, "TFRecord file")
        try:
            size = os.fstat(fd).st_size
            return (mmap.mmap(fd, size, access=mmap.ACCESS_READ) if size else b""), size
        except OSError as exc:
            raise self._read_error(path, 0, exc) from exc
        finally:
            os.close(fd)

    def _chunk_groups(self, indices):
        """Runs of records that follow each other in one file are read together (with one
        read under dont_use_mmap)."""
        return neighbour_runs(indices, [self._entries[index] for index in indices])

    def _load_group(self, indices):
        if len(indices) == 1:
            return [self._load_sample(indices[0])]
        entries = [self._entries[index] for index in indices]
        path, base, _ = entries[0]
        _, last, last_size = entries[-1]
        buffer, origin, file_size = self._bytes(path, base, last + last_size)
        return [
            (
                self._parse(entry, buffer, entry[1] - origin, file_size),
                self._describe(entry),
            )
            for entry in entries
        ]

    def _parse(self, entry, buffer, at, file_size):
        """The outputs of the record ``entry``, whose bytes are those of ``buffer``
        from ``at`` on."""
        path, offset, size = entry
        try:
            data = _check_record(buffer, at, offset, size, file_size)
            example = example_message_class()()
            try:
                example.ParseFromString(data)
            except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError, whatever its module
                raise _RecordError(f"not a tf.train.Example ({exc})") from None
            stored = example.features.feature
            return tuple([extract(stored.get(name)) for name, extract in self._extractors])
        except _RecordError as exc:
            raise ValueError(f"{self._qualname}: '{path}', record at offset {offset}: {exc}") from None

    def _read_error(self, path, offset, exc):
        where = f"{self._qualname}: '{path}', record at offset {offset}"
        return type(exc)(f"{where}: cannot read the file: {exc.strerror or exc}")


class _RecordError(ValueError):
    """What is wrong with one record; ``_read`` names the record (built only then)."""


def _read_index(qualname, index):
    try:
        lines = text_lines(index)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{qualname}: index file '{index}' does not exist (make one with ndd.tfrecord.create_index)"
        ) from None
    except OSError as exc:
        raise type(exc)(f"{qualname}: cannot read index file '{index}': {exc.strerror or exc}") from None
    spans = []
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        try:
            offset, size = (int(f) for f in fields)
            if offset < 0 or size < 0:
                raise ValueError
        except ValueError:
            raise ValueError(
                f"{qualname}: line {number} of index file '{index}' must be 'offset size' "
                f"(two non-negative integers), got {line!r}"
            ) from None
        spans.append((offset, size))
    return spans


def _check_record(buffer, at, offset, size, file_size):
    """The data of one record (``size`` bytes read at ``offset`` of a file of
    ``file_size``, which are those of ``buffer`` from ``at`` on), checked against its
    framing and checksums."""
    header_bytes, footer_bytes = tfrec.RECORD_HEADER_BYTES, tfrec.RECORD_FOOTER_BYTES
    if offset >= file_size:
        raise _RecordError(f"the index points past the end of the file ({file_size} bytes)")
    got = len(buffer) - at
    if got < size:
        raise _RecordError(
            f"the record is truncated (the index says {size} bytes, the file ends after {got})"
        )
    if size < header_bytes + footer_bytes:
        raise _RecordError(f"the index gives the record {size} bytes, too few for a TFRecord record")
    length, length_crc = _HEADER.unpack_from(buffer, at)
    crc32c = _crc32c()
    if crc32c is not None and _masked(crc32c(buffer[at : at + 8])) != length_crc:
        raise _RecordError("corrupted record (the checksum of its length does not match)")
    needed = header_bytes + length + footer_bytes
    if needed != size:
        raise _RecordError(
            f"the index says the record has {size} bytes, the record says {needed} "
            "(is the index file made for this TFRecord file?)"
        )
    start = at + header_bytes
    # The one copy of the data (the checksum needs bytes), taken from the run's buffer.
    data = buffer[start : start + length]
    if crc32c is not None:
        (data_crc,) = _FOOTER.unpack_from(buffer, start + length)
        if _masked(crc32c(data)) != data_crc:
            raise _RecordError("corrupted record (the checksum of its data does not match)")
    return data


def _extractor(name, spec):
    """The function giving a feature's output array from the record's Feature
    message (None where the record lacks it), for the spec ``spec``."""
    list_name = _VALUE_LISTS[spec.dtype]
    shape, count = spec.shape, spec.num_elements
    string = spec.dtype == tfrec.string
    numpy_type = None if string else _NUMPY_TYPES[spec.dtype]
    flat = tuple(shape) == (count,)  # the values' own 1-D shape: no reshape

    def missing():
        if spec.variable_length:
            return np.empty((0, *shape), numpy_type)
        if string:
            return np.frombuffer(bytearray(spec.default_value), np.uint8)
        return np.full(shape, spec.default_value, numpy_type)

    def extract(feature):
        if feature is None or not feature.HasField(list_name):
            kind = feature.WhichOneof("kind") if feature is not None else None
            if kind is None:
                return missing()
            raise _RecordError(
                f"feature {name!r} holds {_LIST_TYPES[kind]} values, its spec asks for {_LIST_TYPES[list_name]}"
            )
        values = getattr(feature, list_name).value
        if string:
            if len(values) != 1:
                raise _RecordError(f"feature {name!r} holds {len(values)} strings, its spec reads one")
            return np.frombuffer(bytearray(values[0]), np.uint8)
        array = np.fromiter(values, numpy_type, len(values))
        if spec.variable_length:
            if count == 0 or array.size % count:
                raise _RecordError(
                    f"feature {name!r} has {array.size} values, not a multiple of partial_shape {list(shape)}"
                )
            return array.reshape(-1, *shape)
        if array.size != count:
            raise _RecordError(
                f"feature {name!r} has {array.size} values, FixedLenFeature({list(shape)}) needs {count}"
            )
        return array if flat else array.reshape(shape)

    return extract
