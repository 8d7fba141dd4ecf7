"""Small Caffe and Caffe2 LMDB databases for the reader tests and goldens.

The values are written with a protobuf wire-format encoder of our own (a few
lines below), not with the ``protobuf`` library the readers parse them with,
so a wrong field number or type on the reading side cannot cancel out. The
recipe is plain arithmetic (no random generator), so that the test venv and
the reference venv (``tests/golden/make_caffe_goldens.py``) build identical
databases.
"""

import os
import struct

import numpy as np

# Protobuf wire types.
_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5

# caffe2.TensorProto.DataType values.
FLOAT, INT32, BYTE, STRING = 1, 2, 3, 4

# Caffe2 label types (the reader's ``label_type`` argument).
SINGLE_LABEL, MULTI_LABEL_SPARSE, MULTI_LABEL_DENSE, MULTI_LABEL_WEIGHTED_SPARSE, NO_LABEL = range(5)


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int32/int64 are sent as 10-byte two's complement
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _key(field: int, wire_type: int) -> bytes:
    return _varint(field << 3 | wire_type)


def _int_field(field: int, value: int) -> bytes:
    return _key(field, _VARINT) + _varint(value)


def _bytes_field(field: int, value: bytes) -> bytes:
    return _key(field, _BYTES) + _varint(len(value)) + value


def _packed(field: int, payload: bytes) -> bytes:
    return _bytes_field(field, payload) if payload else b""


def image_bytes(index: int, size: int) -> bytes:
    """``size`` deterministic bytes for sample ``index``."""
    return bytes((index * 37 + k * 11 + 5) % 256 for k in range(size))


# -- Caffe ------------------------------------------------------------------------


def encode_datum(
    *,
    channels: int | None = None,
    height: int | None = None,
    width: int | None = None,
    data: bytes | None = None,
    label: int | None = None,
    float_data: list[float] = (),
    encoded: bool | None = None,
) -> bytes:
    """A serialized ``caffe.Datum`` (fields 1-7 of BVLC caffe.proto)."""
    out = b""
    for field, value in ((1, channels), (2, height), (3, width)):
        if value is not None:
            out += _int_field(field, value)
    if data is not None:
        out += _bytes_field(4, data)
    if label is not None:
        out += _int_field(5, label)
    for value in float_data:  # unpacked, as caffe.proto declares it
        out += _key(6, _FIXED32) + struct.pack("<f", value)
    if encoded is not None:
        out += _int_field(7, int(encoded))
    return out


def caffe_samples() -> list[dict]:
    """The Caffe database: raw HWC images of varying size and encoded ones."""
    samples = []
    for i in range(7):
        label = [3, 0, 7, -2, 1000, 5, 2][i]
        if i % 3 == 2:
            samples.append(dict(data=image_bytes(i, 20 + i), label=label, encoded=True))
        else:
            h, w, c = 2 + i % 2, 3 + i, 3 if i % 2 == 0 else 1
            samples.append(dict(channels=c, height=h, width=w, data=image_bytes(i, h * w * c), label=label))
    return samples


def caffe_keys(count: int) -> list[bytes]:
    """Keys that sort differently as bytes than in writing order, to check the
    reader follows LMDB's key order."""
    return [f"{(i * 5) % count:08d}_{i}".encode() for i in range(count)]


# -- Caffe2 -----------------------------------------------------------------------


def encode_tensor(
    *,
    dims: list[int] = (),
    data_type: int | None = None,
    float_data: list[float] = (),
    int32_data: list[int] = (),
    byte_data: bytes | None = None,
    string_data: list[bytes] = (),
) -> bytes:
    """A serialized ``caffe2.TensorProto`` (field numbers of caffe2.proto)."""
    out = b"".join(_int_field(1, d) for d in dims)  # int64 dims, unpacked (not declared packed)
    if data_type is not None:
        out += _int_field(2, data_type)
    out += _packed(3, b"".join(struct.pack("<f", v) for v in float_data))
    out += _packed(4, b"".join(_varint(v) for v in int32_data))
    if byte_data is not None:
        out += _bytes_field(5, byte_data)
    for s in string_data:
        out += _bytes_field(6, s)
    return out


def encode_tensor_protos(tensors: list[bytes]) -> bytes:
    """A serialized ``caffe2.TensorProtos`` holding the given serialized tensors."""
    return b"".join(_bytes_field(1, t) for t in tensors)


def write_lmdb(path, records: list[tuple[bytes, bytes]]) -> None:
    """Write ``(key, value)`` records into a new LMDB environment (a folder)."""
    import lmdb

    os.makedirs(path, exist_ok=True)
    env = lmdb.open(str(path), map_size=1 << 24)
    with env.begin(write=True) as txn:
        for key, value in records:
            txn.put(key, value)
    env.close()


def write_caffe_db(path, samples: list[dict] | None = None) -> list[bytes]:
    """Write a Caffe database; returns the keys in LMDB (sorted) order."""
    samples = caffe_samples() if samples is None else samples
    keys = caffe_keys(len(samples))
    write_lmdb(path, [(k, encode_datum(**s)) for k, s in zip(keys, samples, strict=True)])
    return sorted(keys)


def _ints(*values):
    return encode_tensor(dims=[len(values)], data_type=INT32, int32_data=list(values))


def _floats(*values):
    return encode_tensor(dims=[len(values)], data_type=FLOAT, float_data=list(values))


def _encoded_image(index):
    return encode_tensor(data_type=STRING, string_data=[image_bytes(index, 6 + index)])


def _raw_image(index, dims):
    size = int(np.prod(dims))
    return encode_tensor(dims=dims, data_type=BYTE, byte_data=image_bytes(index, size))


def caffe2_cases() -> dict[str, tuple[dict, list[bytes]]]:
    """Caffe2 databases the reference reads: name -> (reader arguments, record values).

    Each database is written with keys ``0000``, ``0001``, ... in record order.
    """
    encoded = [_encoded_image(i) for i in range(4)]
    return {
        "single_int_labels": ({}, [encode_tensor_protos([encoded[i], _ints(10 - 3 * i)]) for i in range(4)]),
        "single_float_labels": (
            {},
            [encode_tensor_protos([encoded[i], _floats(0.25 * i - 1)]) for i in range(3)],
        ),
        "raw_images": (
            {},
            [
                encode_tensor_protos([_raw_image(0, [2, 3, 3]), _ints(1)]),
                encode_tensor_protos([_raw_image(1, [3, 2]), _ints(2)]),
                encode_tensor_protos([_raw_image(2, [1, 4, 1]), _ints(3)]),
            ],
        ),
        "first_string_of_several": (
            {},
            [
                encode_tensor_protos(
                    [encode_tensor(data_type=STRING, string_data=[b"first", b"second"]), _ints(4)]
                )
            ],
        ),
        "dense_float_labels": (
            {"label_type": MULTI_LABEL_DENSE, "num_labels": 3},
            [encode_tensor_protos([encoded[i], _floats(i, 0.5, -i)]) for i in range(3)],
        ),
        "dense_int_labels": (
            {"label_type": MULTI_LABEL_DENSE, "num_labels": 2},
            [encode_tensor_protos([encoded[i], _ints(i, 7)]) for i in range(2)],
        ),
        "additional_inputs": (
            {"additional_inputs": 2},
            [
                encode_tensor_protos(
                    [
                        encoded[i],
                        _ints(i),
                        encode_tensor(dims=[2, 2], data_type=FLOAT, float_data=[i, 1.5, 2.5, -i]),
                        _ints(*range(i + 1)),
                    ]
                )
                for i in range(3)
            ],
        ),
        "bbox": (
            {"bbox": True},
            [encode_tensor_protos([encoded[i], _ints(i), _ints(i, 2 * i, 10, 20 + i)]) for i in range(2)],
        ),
        "additional_inputs_and_bbox": (
            {"additional_inputs": 1, "bbox": True},
            [encode_tensor_protos([encoded[0], _floats(3.5), _floats(1.0, 2.0), _ints(5, 6, 7, 8)])],
        ),
        "no_label_with_additional_input": (
            {"label_type": NO_LABEL, "additional_inputs": 1},
            [encode_tensor_protos([encoded[i], _floats(i + 0.5)]) for i in range(2)],
        ),
    }


def write_caffe2_db(path, records: list[bytes]) -> None:
    write_lmdb(path, [(f"{i:04d}".encode(), value) for i, value in enumerate(records)])
