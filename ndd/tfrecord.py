"""Feature specifications for ``ndd.readers.TFRecord`` (the names of ``nvidia.dali.tfrecord``).

``features`` of the TFRecord reader maps each feature name of the stored
``tf.train.Example`` records to a spec made here::

    from ndd import tfrecord as tfrec

    features = {
        "image/encoded": tfrec.FixedLenFeature([], tfrec.string, ""),
        "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
        "image/object/bbox": tfrec.VarLenFeature([4], tfrec.float32, 0.0),
    }

The reader needs an index file per TFRecord file; ``create_index`` writes one
(the text format of DALI's ``tfrecord2idx`` script: ``offset size`` per record).
"""

import math
import numbers
import os
import struct

__all__ = ["Feature", "FixedLenFeature", "VarLenFeature", "create_index", "float32", "int64", "string"]

# Element types of a feature; the values are the reference's.
int64 = 0
string = 1
float32 = 2

_TYPE_NAMES = {int64: "int64", string: "string", float32: "float32"}

# A record: little-endian uint64 length, its masked CRC (4 bytes), the data, the
# data's masked CRC (4 bytes).
RECORD_HEADER_BYTES = 12
RECORD_FOOTER_BYTES = 4


class Feature:
    """What to extract from one feature of the records; made by ``FixedLenFeature``
    or ``VarLenFeature``.

    Attributes
    ----------
    dtype : int
        ``int64``, ``float32`` or ``string``.
    shape : tuple of int
        The output shape of a fixed-length feature, or the trailing dimensions
        (``partial_shape``) of a variable-length one (empty: 1-D output).
    default_value : int, float or bytes
        The value of a fixed-length feature missing from a record.
    variable_length : bool
        Whether the number of values varies between records.
    """

    __slots__ = ("default_value", "dtype", "shape", "variable_length")

    def __init__(self, dtype: int, shape: tuple, default_value, variable_length: bool):
        self.dtype = dtype
        self.shape = shape
        self.default_value = default_value
        self.variable_length = variable_length

    def __repr__(self):
        kind = "VarLenFeature" if self.variable_length else "FixedLenFeature"
        return f"{kind}({list(self.shape)}, {_TYPE_NAMES[self.dtype]}, {self.default_value!r})"

    def __eq__(self, other):
        if not isinstance(other, Feature):
            return NotImplemented
        return (self.dtype, self.shape, self.default_value, self.variable_length) == (
            other.dtype,
            other.shape,
            other.default_value,
            other.variable_length,
        )

    def __hash__(self):
        return hash((self.dtype, self.shape, self.default_value, self.variable_length))

    @property
    def num_elements(self) -> int:
        """Number of values of a fixed-length numeric feature (1 for a scalar)."""
        return math.prod(self.shape)


def _check_dtype(where, dtype):
    if isinstance(dtype, bool) or not isinstance(dtype, int) or dtype not in _TYPE_NAMES:
        raise TypeError(
            f"ndd.tfrecord.{where}: dtype must be ndd.tfrecord.int64, float32 or string, got {dtype!r}"
        )
    return int(dtype)


def _check_shape(where, name, shape):
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"ndd.tfrecord.{where}: {name} must be a list of ints, got {shape!r}")
    dims = tuple(shape)
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise TypeError(f"ndd.tfrecord.{where}: {name} must be a list of ints, got {shape!r}")
        if d < 0:
            raise ValueError(f"ndd.tfrecord.{where}: {name} must not have negative extents, got {shape!r}")
    return tuple(int(d) for d in dims)


def _check_default(where, dtype, value):
    if dtype == string:
        if isinstance(value, str):
            return value.encode()
        if isinstance(value, bytes):
            return value
        raise TypeError(f"ndd.tfrecord.{where}: the default of a string feature must be str, got {value!r}")
    if dtype == int64:
        if not isinstance(value, numbers.Integral):
            raise TypeError(
                f"ndd.tfrecord.{where}: the default of an int64 feature must be int, got {value!r}"
            )
        return int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"ndd.tfrecord.{where}: the default of a float32 feature must be float, got {value!r}"
        )
    return float(value)


def FixedLenFeature(shape, dtype: int, default_value, /) -> Feature:  # noqa: N802 - the reference's name
    """A feature with the same number of values in every record.

    Parameters
    ----------
    shape : list of int
        Output shape; ``[]`` gives a scalar. The record must hold exactly
        ``prod(shape)`` values. A ``string`` feature holds one value whatever
        the shape, and its output is that string's bytes (uint8, 1-D).
    dtype : int
        ``int64``, ``float32`` or ``string``.
    default_value : int, float or str
        Fills the output when a record lacks the feature.
    """
    dtype = _check_dtype("FixedLenFeature", dtype)
    shape = _check_shape("FixedLenFeature", "shape", shape)
    default_value = _check_default("FixedLenFeature", dtype, default_value)
    return Feature(dtype, shape, default_value, False)


def VarLenFeature(*args) -> Feature:  # noqa: N802 - the reference's name
    """A feature whose number of values varies between records.

    Called as ``VarLenFeature(dtype, default_value)``, the output is 1-D with
    all the values of the record; as ``VarLenFeature(partial_shape, dtype,
    default_value)`` the values are reshaped to ``(-1, *partial_shape)`` (the
    number of values must be a multiple of ``prod(partial_shape)``). A record
    without the feature gives an empty output. ``string`` features are read with
    ``FixedLenFeature`` only (an output holds the bytes of one string).

    Parameters
    ----------
    partial_shape : list of int, optional
        Trailing dimensions of the output.
    dtype : int
        ``int64`` or ``float32``.
    default_value : int or float
        Kept for compatibility; a variable-length output has no default elements.
    """
    if len(args) == 2:
        partial_shape, (dtype, default_value) = (), args
    elif len(args) == 3:
        partial_shape, dtype, default_value = args
    else:
        raise TypeError(
            "ndd.tfrecord.VarLenFeature: expected (dtype, default_value) or "
            f"(partial_shape, dtype, default_value), got {len(args)} arguments"
        )
    dtype = _check_dtype("VarLenFeature", dtype)
    partial_shape = _check_shape("VarLenFeature", "partial_shape", partial_shape)
    default_value = _check_default("VarLenFeature", dtype, default_value)
    return Feature(dtype, partial_shape, default_value, True)


def create_index(tfrecord_path: str | os.PathLike, index_path: str | os.PathLike) -> int:
    """Write the index file of a TFRecord file: one ``offset size`` line per record
    (the format of DALI's ``tfrecord2idx`` script, read by ``ndd.readers.TFRecord``).

    Parameters
    ----------
    tfrecord_path : str or PathLike
        The TFRecord file.
    index_path : str or PathLike
        The index file to (over)write.

    Returns
    -------
    int
        The number of records.

    Raises
    ------
    ValueError
        If the file ends inside a record (naming the record's offset).
    """
    tfrecord_path, index_path = os.fspath(tfrecord_path), os.fspath(index_path)
    file_size = os.path.getsize(tfrecord_path)
    lines = []
    with open(tfrecord_path, "rb") as fh:
        offset = 0
        while offset < file_size:
            header = fh.read(8)
            if len(header) < 8:
                raise ValueError(
                    f"ndd.tfrecord.create_index: '{tfrecord_path}' ends inside the record at offset {offset}"
                )
            (length,) = struct.unpack("<Q", header)
            size = RECORD_HEADER_BYTES + length + RECORD_FOOTER_BYTES
            if offset + size > file_size:
                raise ValueError(
                    f"ndd.tfrecord.create_index: '{tfrecord_path}' ends inside the record at offset "
                    f"{offset} (it needs {size} bytes, {file_size - offset} are left)"
                )
            lines.append(f"{offset} {size}\n")
            offset += size
            fh.seek(offset)
    with open(index_path, "w", encoding="utf-8") as out:
        out.writelines(lines)
    return len(lines)
