"""``readers.Caffe`` and ``readers.Caffe2``: samples stored in LMDB databases,
one serialized protobuf message per key, read in the databases' key order.

The databases are read with the ``lmdb`` package and the messages parsed with
``protobuf``; both are optional dependencies, imported when a reader is built.
The message classes are built from descriptors written below (the field
numbers and types of BVLC Caffe's ``caffe.proto`` and Caffe2's
``caffe2.proto``), so no generated code and no Caffe installation is needed.

liblmdb trusts the pages it reads: a damaged database kills the process that walks
it. So a database is checked when a process first opens it: a data file shorter
than its last page is refused, and its keys are walked first by a probe process
(Python and ``lmdb``, about 25 ms, once per database and process); a database whose
walk fails is refused, naming it, instead of taking this process down.
"""

import functools
import importlib
import os
import subprocess
import sys
import threading
import weakref

import numpy as np

from .._prepare.args import Arg, InvalidArgumentError
from .._types import dtype as to_dtype
from .._types import int32, uint8
from ._base import Reader, path_list
from ._protobuf import message_classes

__all__ = ["Caffe", "Caffe2"]

# caffe2.TensorProto.DataType values (caffe2.proto).
_TENSOR_TYPES = {
    0: "UNDEFINED", 1: "FLOAT", 2: "INT32", 3: "BYTE", 4: "STRING", 5: "BOOL", 6: "UINT8",
    7: "INT8", 8: "UINT16", 9: "INT16", 10: "INT64", 12: "FLOAT16", 13: "DOUBLE",
}  # fmt: skip
_FLOAT, _INT32, _BYTE, _STRING = 1, 2, 3, 4

# Values of Caffe2's ``label_type`` argument.
SINGLE_LABEL, MULTI_LABEL_SPARSE, MULTI_LABEL_DENSE, MULTI_LABEL_WEIGHTED_SPARSE, NO_LABEL = range(5)


def _import(module: str, package: str, reader: str):
    """Import an optional dependency, or raise an ImportError saying what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{reader} needs the '{package}' package: pip install {package} (or pip install 'ndd[readers]')"
        ) from exc


def _message_classes():
    """The ``caffe.Datum`` and ``caffe2.TensorProtos`` message classes (in a descriptor
    pool of their own: see ``_protobuf.message_classes``)."""
    classes = _all_message_classes()
    return classes["caffe.Datum"], classes["caffe2.TensorProtos"]


@functools.cache
def _all_message_classes():
    from google.protobuf import descriptor_pb2

    field = descriptor_pb2.FieldDescriptorProto

    def add_message(file_proto, name, fields):
        # Repeated numbers are declared unpacked: parsing accepts both encodings.
        message = file_proto.message_type.add(name=name)
        for field_name, number, kind, repeated, extra in fields:
            label = field.LABEL_REPEATED if repeated else field.LABEL_OPTIONAL
            message.field.add(name=field_name, number=number, type=kind, label=label, **extra)

    caffe = descriptor_pb2.FileDescriptorProto(name="ndd_caffe.proto", package="caffe", syntax="proto2")
    add_message(
        caffe,
        "Datum",
        [
            ("channels", 1, field.TYPE_INT32, False, {}),
            ("height", 2, field.TYPE_INT32, False, {}),
            ("width", 3, field.TYPE_INT32, False, {}),
            ("data", 4, field.TYPE_BYTES, False, {}),
            ("label", 5, field.TYPE_INT32, False, {}),
            ("float_data", 6, field.TYPE_FLOAT, True, {}),
            ("encoded", 7, field.TYPE_BOOL, False, {"default_value": "false"}),
        ],
    )
    caffe2 = descriptor_pb2.FileDescriptorProto(name="ndd_caffe2.proto", package="caffe2", syntax="proto2")
    # ``data_type`` is an enum in caffe2.proto; an int32 field has the same
    # encoding and keeps values this module does not name readable for errors.
    add_message(
        caffe2,
        "TensorProto",
        [
            ("dims", 1, field.TYPE_INT64, True, {}),
            ("data_type", 2, field.TYPE_INT32, False, {"default_value": str(_FLOAT)}),
            ("float_data", 3, field.TYPE_FLOAT, True, {}),
            ("int32_data", 4, field.TYPE_INT32, True, {}),
            ("byte_data", 5, field.TYPE_BYTES, False, {}),
            ("string_data", 6, field.TYPE_BYTES, True, {}),
            ("name", 7, field.TYPE_STRING, False, {}),
            ("double_data", 9, field.TYPE_DOUBLE, True, {}),
            ("int64_data", 10, field.TYPE_INT64, True, {}),
        ],
    )
    add_message(
        caffe2,
        "TensorProtos",
        [("protos", 1, field.TYPE_MESSAGE, True, {"type_name": ".caffe2.TensorProto"})],
    )
    return message_classes([caffe, caffe2])


# LMDB environments open in this process, by real path, shared by the readers
# (the lmdb package refuses to open one environment twice in a process): real path
# -> [environment, number of readers holding it]. The last reader to go closes it,
# under the lock, so that no open can come between the entry leaving the table and
# the environment closing (the lmdb package closes without the GIL).
_shared_environments = {}
# The process that opened them: a forked child closes the inherited ones before
# opening its own (LMDB handles must not cross fork, and the lmdb package keeps
# counting an inherited environment as open in the child).
_shared_environments_pid = os.getpid()
# Held around every use of the lmdb package here, and across fork: the child
# then inherits no half-done LMDB call, whose internal locks it could never take
# (closing the inherited environments would hang). Reentrant: a reader collected
# by a garbage collection that starts inside a locked block releases its
# environments on that thread.
_lmdb_lock = threading.RLock()
os.register_at_fork(
    before=_lmdb_lock.acquire, after_in_parent=_lmdb_lock.release, after_in_child=_lmdb_lock.release
)


# Walks every key of an LMDB database, as a reader's listing does, in a process of its
# own: liblmdb trusts the pages it reads, and a damaged page kills the process that
# reads it (an assertion's abort, a bus error), which must not be the caller's.
_PROBE = (
    "import sys, lmdb\n"
    "env = lmdb.open(sys.argv[1], readonly=True, lock=False, readahead=False, create=False)\n"
    "with env.begin() as txn:\n"
    "    for _ in txn.cursor().iternext(keys=True, values=False):\n"
    "        pass\n"
)
# (real path, size and modification time of data.mdb) of the databases probed.
_probed = set()


def _check_database(env, path, reader):
    """Refuse a damaged LMDB database before this process walks it: a data file shorter
    than its last page (a copy cut short), or one whose walk kills a probe process."""
    data = os.path.join(path, "data.mdb")
    try:
        status = os.stat(data)
    except OSError:
        return  # lmdb opened it under another name (a file, not a folder): nothing to compare
    end = (env.info()["last_pgno"] + 1) * env.stat()["psize"]
    if status.st_size < end:
        raise ValueError(
            f"{reader}: 'path' LMDB database '{path}' is truncated: data.mdb holds {status.st_size} bytes, "
            f"its last page ends at byte {end}"
        )
    key = (os.path.realpath(data), status.st_size, status.st_mtime_ns)
    if key in _probed or not sys.executable:
        return
    probe = subprocess.run([sys.executable, "-c", _PROBE, path], capture_output=True, text=True)
    if probe.returncode != 0:
        lines = probe.stderr.strip().splitlines()
        if probe.returncode < 0:
            why = f"walking its keys killed a probe process (signal {-probe.returncode})"
        else:
            why = f"walking its keys failed: {lines[-1] if lines else 'exit status ' + str(probe.returncode)}"
        raise ValueError(f"{reader}: 'path' LMDB database '{path}' is damaged: {why}")
    _probed.add(key)


def _open_environment(path, reader, holder):
    """The shared environment of the LMDB folder ``path`` for ``holder`` (a reader,
    named ``reader`` in errors), which keeps it open until it is collected."""
    global _shared_environments_pid
    lmdb = _import("lmdb", "lmdb", reader)
    if not os.path.isdir(path):
        what = "is not a folder" if os.path.exists(path) else "does not exist"
        raise FileNotFoundError(f"{reader}: 'path' LMDB folder '{path}' {what}")
    key = os.path.realpath(path)
    with _lmdb_lock:
        if _shared_environments_pid != os.getpid():
            for inherited, _ in _shared_environments.values():
                inherited.close()
            _shared_environments.clear()
            _shared_environments_pid = os.getpid()
        entry = _shared_environments.get(key)
        if entry is None:
            try:
                env = lmdb.open(path, readonly=True, lock=False, readahead=False, create=False)
            except lmdb.Error as exc:
                raise ValueError(
                    f"{reader}: 'path' '{path}' is not a readable LMDB database: {exc}"
                ) from None
            try:
                _check_database(env, path, reader)
            except BaseException:
                env.close()
                raise
            entry = _shared_environments[key] = [env, 0]
        entry[1] += 1
        weakref.finalize(holder, _release_environment, key, entry)
    return entry[0]


def _release_environment(key, entry):
    with _lmdb_lock:
        entry[1] -= 1
        if entry[1] == 0:
            if _shared_environments.get(key) is entry:
                del _shared_environments[key]
            entry[0].close()  # closing twice (after a fork) is harmless


class _LmdbReader(Reader):
    """Shared part of the LMDB readers: the ``path`` argument, listing the keys
    of every database in order, and fetching one record's value."""

    # The message a record holds, for error messages.
    RECORD_NAME = ""
    # path index -> open lmdb.Environment, opened on first use (and again in a
    # forked child).
    _environments = None

    def _validate_paths(self, args):
        q = self._qualname
        args["path"] = path_list(q, "path", args["path"])
        _import("lmdb", "lmdb", q)
        _import("google.protobuf", "protobuf", q)

    def _environment(self, db):
        if self._environments is None:
            self._environments = {}
        env = self._environments.get(db)
        if env is None:
            env = self._environments[db] = _open_environment(self._args["path"][db], self._qualname, self)
        return env

    def _list_samples(self):
        entries = []
        for db in range(len(self._args["path"])):
            env = self._environment(db)
            with _lmdb_lock, env.begin() as txn:
                entries += [(db, key) for key in txn.cursor().iternext(keys=True, values=False)]
        return entries

    def _dataset_description(self):
        return f"the LMDB database(s) {self._args['path']} hold no records"

    def _describe(self, entry):
        db, key = entry
        return f"{self._args['path'][db]} at key {key.decode('utf-8', 'backslashreplace')}"

    def _message(self, message_class, entry):
        """The record of ``entry`` parsed as ``message_class``."""
        from google.protobuf.message import DecodeError

        db, key = entry
        env = self._environment(db)
        with _lmdb_lock, env.begin() as txn:
            value = txn.get(key)
        if value is None:
            raise OSError(f"{self._qualname}: record '{self._describe(entry)}' is no longer in the database")
        try:
            return message_class.FromString(value)
        except DecodeError as exc:
            raise ValueError(
                f"{self._qualname}: record '{self._describe(entry)}' ({len(value)} bytes) is not a valid "
                f"{self.RECORD_NAME}: {exc}"
            ) from None

    def _after_fork_in_child(self):
        self._environments = None
        super()._after_fork_in_child()


class Caffe(_LmdbReader):
    """Read ``(image, label)`` samples from Caffe LMDB databases.

    Each record is a serialized ``caffe.Datum``; records are read in key order,
    database after database when ``path`` lists several.

    Outputs: the Datum's ``data`` bytes (uint8, 1-D: the encoded image, or the
    raw pixels as stored; ``channels``/``height``/``width`` are not applied),
    unless ``image_available`` is False, and the label (int32, shape ``(1,)``;
    shape ``(0,)`` for a Datum without a label), unless ``label_available`` is
    False.
    """

    ARGS = (
        Arg("image_available", "bool", True, doc="Output the image (the Datum's ``data``)."),
        Arg("label_available", "bool", True, doc="Output the label."),
        Arg(
            "path",
            "any",
            doc="Folder of the LMDB database, or a list of them, read one after the other.",
            type_doc="str or list of str",
        ),
    )
    OUTPUTS = ("image", "label")
    SHUFFLE_AFTER_EPOCH = False
    RECORD_NAME = "caffe.Datum"

    def _validate_args(self, args):
        self._validate_paths(args)
        if not args["image_available"] and not args["label_available"]:
            raise InvalidArgumentError(
                f"{self._qualname}: 'image_available' and 'label_available' are both False; "
                "the reader would have no outputs"
            )

    def _read(self, entry):
        datum_class, _ = _message_classes()
        datum = self._message(datum_class, entry)
        outputs = []
        if self._args["image_available"]:
            outputs.append(np.frombuffer(datum.data, np.uint8).copy())
        if self._args["label_available"]:
            has_label = datum.HasField("label")
            outputs.append(np.array([datum.label] if has_label else [], np.int32))
        return tuple(outputs)

    def _output_types(self):
        a = self._args
        return [(uint8, "")] * a["image_available"] + [(int32, "")] * a["label_available"]


class Caffe2(_LmdbReader):
    """Read samples from Caffe2 LMDB databases.

    Each record is a serialized ``caffe2.TensorProtos`` whose tensors are, in
    this order: the image (if ``image_available``), the label (none for
    ``label_type`` 4, two tensors for 3), ``additional_inputs`` more tensors and
    the bounding box (if ``bbox``). The outputs follow the same order:

    - image: uint8; a ``STRING`` tensor gives its first string (an encoded
      image, 1-D), a ``BYTE`` tensor its bytes shaped ``(H, W, C)`` from its
      dims ``(H, W[, C])``;
    - label, by ``label_type``: 0 the single value, shape ``(1,)``; 1 a
      ``num_labels`` long vector with ones at the listed indices; 2 the values
      as stored; 3 a ``num_labels`` long vector holding the second tensor's
      weights at the first tensor's indices (zeros elsewhere);
    - additional inputs: their values, 1-D;
    - bbox: int32, shape ``(4,)``.

    Labels and additional inputs are float32 for ``FLOAT`` tensors and int32 for
    ``INT32`` ones; each output's type is taken from the first record and every
    record must agree.
    """

    ARGS = (
        Arg("additional_inputs", "int", 0, doc="Number of extra tensors of each record to output."),
        Arg("bbox", "bool", False, doc="Each record ends with a bounding box tensor (4 INT32 values)."),
        Arg("image_available", "bool", True, doc="Each record starts with an image tensor."),
        Arg(
            "label_type",
            "int",
            SINGLE_LABEL,
            doc="How the label is stored: 0 single label, 1 sparse multi-label indices, 2 dense "
            "multi-label values, 3 sparse multi-label indices with weights, 4 no label.",
        ),
        Arg("num_labels", "int", 1, doc="Length of the label vector for the sparse label types (1 and 3)."),
        Arg(
            "path",
            "any",
            doc="Folder of the LMDB database, or a list of them, read one after the other.",
            type_doc="str or list of str",
        ),
    )
    OUTPUTS = ("image", "label", "additional inputs", "bbox")
    SHUFFLE_AFTER_EPOCH = False
    RECORD_NAME = "caffe2.TensorProtos"

    def _validate_args(self, args):
        q = self._qualname
        self._validate_paths(args)
        if not SINGLE_LABEL <= args["label_type"] <= NO_LABEL:
            raise InvalidArgumentError(
                f"{q}: 'label_type' must be 0 (single), 1 (sparse), 2 (dense), 3 (weighted sparse) "
                f"or 4 (no label), got {args['label_type']}"
            )
        if args["num_labels"] < 1:
            raise InvalidArgumentError(f"{q}: 'num_labels' must be at least 1, got {args['num_labels']}")
        if args["additional_inputs"] < 0:
            raise InvalidArgumentError(
                f"{q}: 'additional_inputs' must not be negative, got {args['additional_inputs']}"
            )
        if not self._output_names():
            raise InvalidArgumentError(
                f"{q}: with image_available=False, label_type=4, no additional_inputs and no bbox "
                "the reader would have no outputs"
            )

    def _tensor_roles(self):
        """What each tensor of a record is, in order."""
        args = self._args
        roles = ["image"] if args["image_available"] else []
        label_tensors = {NO_LABEL: [], MULTI_LABEL_WEIGHTED_SPARSE: ["label indices", "label weights"]}
        roles += label_tensors.get(args["label_type"], ["label"])
        roles += [f"additional input {i}" for i in range(args["additional_inputs"])]
        return roles + ["bbox"] * args["bbox"]

    def _list_samples(self):
        entries = super()._list_samples()
        self._types = self._types_of_first_record(entries)
        return entries

    def _types_of_first_record(self, entries):
        """Output types of the first record that can be read; every record must
        agree, so that samples of all records batch together."""
        for entry in entries:
            try:
                return [to_dtype(array.dtype) for array in self._parse(entry)]
            except (OSError, ValueError):
                continue
        # No readable record: every sample raises its own error when taken.
        return [uint8 if name == "image" else int32 for name in self._output_names()]

    def _output_names(self):
        a = self._args
        names = ["image"] * a["image_available"] + ["label"] * (a["label_type"] != NO_LABEL)
        names += [f"additional input {i}" for i in range(a["additional_inputs"])]
        return names + ["bbox"] * a["bbox"]

    def _read(self, entry):
        outputs = self._parse(entry)
        for name, array, expected in zip(self._output_names(), outputs, self._types, strict=True):
            if to_dtype(array.dtype) != expected:
                raise ValueError(
                    f"{self._qualname}: the {name} of record '{self._describe(entry)}' is "
                    f"{to_dtype(array.dtype)}, but the first record's is {expected}; all records "
                    "must store it with the same data type"
                )
        return outputs

    def _parse(self, entry):
        _, protos_class = _message_classes()
        tensors = list(self._message(protos_class, entry).protos)
        roles = self._tensor_roles()
        if len(tensors) != len(roles):
            raise self._error(
                entry, f"holds {len(tensors)} tensors, expected {len(roles)} ({', '.join(roles)})"
            )
        a = self._args
        tensor = dict(zip(roles, tensors, strict=True))
        outputs = []
        if a["image_available"]:
            outputs.append(self._image(tensor["image"], entry))
        if a["label_type"] != NO_LABEL:
            outputs.append(self._label(tensor, entry))
        for i in range(a["additional_inputs"]):
            outputs.append(self._numbers(tensor[f"additional input {i}"], f"additional input {i}", entry))
        if a["bbox"]:
            outputs.append(self._bbox(tensor["bbox"], entry))
        return tuple(outputs)

    def _error(self, entry, message):
        return ValueError(f"{self._qualname}: record '{self._describe(entry)}': {message}")

    def _image(self, tensor, entry):
        kind = tensor.data_type
        if kind == _STRING:
            if not tensor.string_data:
                raise self._error(entry, "the image tensor (STRING) holds no string")
            return np.frombuffer(tensor.string_data[0], np.uint8).copy()
        if kind != _BYTE:
            raise self._error(
                entry, f"the image tensor is {_type_name(kind)}; expected STRING (encoded) or BYTE (raw)"
            )
        dims = list(tensor.dims)
        if len(dims) not in (2, 3) or min(dims) < 0:
            raise self._error(entry, f"a BYTE image needs dims (H, W) or (H, W, C), got {dims}")
        shape = dims if len(dims) == 3 else dims + [1]
        size = int(np.prod(shape))
        if size != len(tensor.byte_data):
            raise self._error(
                entry, f"the image holds {len(tensor.byte_data)} bytes, its dims {dims} need {size}"
            )
        return np.frombuffer(tensor.byte_data, np.uint8).reshape(shape).copy()

    def _numbers(self, tensor, what, entry):
        kind = tensor.data_type
        if kind == _FLOAT:
            return np.array(tensor.float_data, np.float32)
        if kind == _INT32:
            return np.array(tensor.int32_data, np.int32)
        raise self._error(entry, f"the {what} tensor is {_type_name(kind)}; expected FLOAT or INT32")

    def _label(self, tensor, entry):
        label_type, num_labels = self._args["label_type"], self._args["num_labels"]
        if label_type == MULTI_LABEL_WEIGHTED_SPARSE:
            indices = self._indices(self._numbers(tensor["label indices"], "label indices", entry), entry)
            weights = self._numbers(tensor["label weights"], "label weights", entry)
            if len(weights) != len(indices):
                raise self._error(entry, f"{len(indices)} label indices but {len(weights)} label weights")
            label = np.zeros(num_labels, weights.dtype)
            label[indices] = weights
            return label
        values = self._numbers(tensor["label"], "label", entry)
        if label_type == MULTI_LABEL_SPARSE:
            label = np.zeros(num_labels, values.dtype)
            label[self._indices(values, entry)] = 1
            return label
        if label_type == SINGLE_LABEL and values.size != 1:
            raise self._error(entry, f"a single label (label_type 0) must hold one value, got {values.size}")
        return values

    def _indices(self, values, entry):
        """Sparse label indices as integers, checked against ``num_labels``."""
        indices = values.astype(np.int64)
        if not np.array_equal(indices, values):
            raise self._error(entry, f"label indices must be whole numbers, got {values.tolist()}")
        num_labels = self._args["num_labels"]
        outside = indices[(indices < 0) | (indices >= num_labels)]
        if outside.size:
            raise self._error(entry, f"label index {int(outside[0])} is outside [0, num_labels={num_labels})")
        return indices

    def _bbox(self, tensor, entry):
        if tensor.data_type != _INT32 or len(tensor.int32_data) != 4:
            raise self._error(
                entry,
                f"the bbox tensor must hold 4 INT32 values; it is {_type_name(tensor.data_type)} "
                f"with {len(tensor.int32_data)} INT32 values",
            )
        return np.array(tensor.int32_data, np.int32)

    def _output_types(self):
        return [(t, "") for t in self._types]


def _type_name(kind):
    return _TENSOR_TYPES.get(kind, f"of unknown type {kind}")
