"""DType objects, constants and conversions."""

import importlib.util

import numpy as np
import pytest

import ndd
from ndd import types

NUMERIC = [
    (ndd.int8, np.int8, "i8"),
    (ndd.int16, np.int16, "i16"),
    (ndd.int32, np.int32, "i32"),
    (ndd.int64, np.int64, "i64"),
    (ndd.uint8, np.uint8, "u8"),
    (ndd.uint16, np.uint16, "u16"),
    (ndd.uint32, np.uint32, "u32"),
    (ndd.uint64, np.uint64, "u64"),
    (ndd.float16, np.float16, "f16"),
    (ndd.float32, np.float32, "f32"),
    (ndd.float64, np.float64, "f64"),
    (ndd.bool, np.bool_, "bool"),
]


@pytest.mark.parametrize("dt, np_type, name", NUMERIC)
def test_constant_names_and_numpy_mapping(dt, np_type, name):
    assert str(dt) == name
    assert dt.name == name
    assert dt.numpy == np.dtype(np_type)
    assert ndd.dtype(np_type) is dt
    assert ndd.dtype(np.dtype(np_type)) is dt
    assert ndd.dtype(name) is dt
    assert ndd.DType.parse(name) is dt
    assert dt.bytes == np.dtype(np_type).itemsize


@pytest.mark.parametrize("dt, np_type, name", NUMERIC)
def test_type_id_round_trip(dt, np_type, name):
    tid = ndd.type_id(dt)
    assert isinstance(tid, types.DALIDataType)
    assert ndd.DType.from_type_id(tid) is dt
    assert ndd.dtype(tid) is dt


def test_type_ids_match_dali_numbering():
    assert ndd.type_id(ndd.uint8) == 0
    assert ndd.type_id(ndd.float32) == types.FLOAT == 9
    assert ndd.type_id(ndd.bool) == 11


def test_float_bits_and_repr():
    assert ndd.float32.exponent_bits == 8 and ndd.float32.significand_bits == 23
    assert ndd.float16.exponent_bits == 5 and ndd.float16.significand_bits == 10
    assert ndd.bfloat16.exponent_bits == 8 and ndd.bfloat16.significand_bits == 7
    assert ndd.int8.exponent_bits is None
    assert repr(ndd.int32) == "DType(kind=Kind.signed, bits=32)"
    assert repr(ndd.float32) == "DType(kind=Kind.float, bits=32, exponent_bits=8, significand_bits=23)"


def test_kinds():
    assert ndd.int16.kind is ndd.DType.Kind.signed
    assert ndd.uint16.kind is ndd.DType.Kind.unsigned
    assert ndd.float64.kind is ndd.DType.Kind.float
    assert ndd.bool.kind is ndd.DType.Kind.bool
    assert ndd.InterpType.kind is ndd.DType.Kind.enum


def test_equality_is_structural_and_hashable():
    assert ndd.DType(ndd.DType.Kind.signed, 32) == ndd.int32
    assert hash(ndd.DType(ndd.DType.Kind.signed, 32)) == hash(ndd.int32)
    assert ndd.int32 != ndd.uint32
    assert ndd.bfloat16 != ndd.float16
    assert ndd.DataType != ndd.ImageType
    assert len({ndd.int32, ndd.int32, ndd.float32}) == 2


def test_dtype_factory_several_args_builds_a_dtype():
    dt = ndd.dtype(ndd.DType.Kind.float, 32)
    assert dt == ndd.float32


def test_python_int_is_rejected():
    with pytest.raises(ValueError, match="built-in"):
        ndd.dtype(int)
    with pytest.raises(TypeError, match="int"):
        ndd.DType.from_fw_type(int)


def test_python_float_is_float32_as_in_the_reference():
    assert ndd.dtype(float) is ndd.float32
    assert ndd.DType.from_fw_type(float) is ndd.float32
    t = ndd.tensor([1, 0], dtype=float)
    assert t.dtype == ndd.float32 and np.asarray(t).tolist() == [1.0, 0.0]
    assert ndd.batch([[1], [2, 3]], dtype=float).dtype == ndd.float32
    assert ndd.cast(ndd.tensor([1, 2]), dtype=float).dtype == ndd.float32


@pytest.mark.parametrize("bad", [None, 3, 9])
def test_none_and_plain_integers_are_not_types(bad):
    # The reference refuses them; numpy would read None as float64, and a plain integer
    # is not a DALIDataType (whose members are accepted).
    with pytest.raises(TypeError, match="could not be converted"):
        ndd.dtype(bad)
    if bad is not None:  # dtype=None means the default
        with pytest.raises(TypeError, match="could not be converted"):
            ndd.tensor([1], dtype=bad)
    assert ndd.dtype(ndd.types.DALIDataType.FLOAT) is ndd.float32


def test_types_made_from_their_sizes_are_named_as_in_the_reference():
    assert str(ndd.dtype(ndd.DType.Kind.float, 32)) == "f32"
    assert str(ndd.DType(ndd.DType.Kind.signed, 24)) == "i24"
    assert str(ndd.DType(ndd.DType.Kind.unsigned, 8)) == "u8"
    assert str(ndd.DType(ndd.DType.Kind.float, 16, exponent_bits=6, significand_bits=9)) == "f16e6m9"
    assert ndd.dtype("f16e5m10") == ndd.float16 and ndd.DType.parse("f32e8m23") is ndd.float32
    assert ndd.dtype("f16e8m7") == ndd.bfloat16


def test_enums_print_their_names_as_in_the_reference():
    T = ndd.types
    assert str(T.DALIDataType.FLOAT) == "DALIDataType.FLOAT" == f"{ndd.float32.type_id}"
    assert str(T.DALIImageType.RGB) == "DALIImageType.RGB"
    assert f"{T.DALIInterpType.INTERP_LINEAR:>30}".strip() == "DALIInterpType.INTERP_LINEAR"
    assert T.DALIDataType.FLOAT == 9 and int(T.DALIImageType.BGR) == 1


def test_python_bool_is_the_bool_type():
    # As the reference, in ndd.dtype and in operators' dtype= keywords.
    assert ndd.dtype(bool) is ndd.bool
    out = ndd.cast(ndd.tensor([0, 2]), dtype=bool)
    assert out.dtype == ndd.bool and np.asarray(out).tolist() == [False, True]
    assert ndd.zeros(shape=[2], dtype=bool).dtype == ndd.bool


def test_unknown_names_are_rejected():
    with pytest.raises(ValueError, match="unknown type name"):
        ndd.dtype("f31")
    with pytest.raises(ValueError):
        ndd.type_id("int32")


def test_calling_a_dtype_converts_data():
    t = ndd.float32([1, 2])
    assert t.dtype == ndd.float32
    np.testing.assert_array_equal(np.asarray(t), np.array([1, 2], np.float32))


def test_enum_types_accept_reference_style_enum_values():
    t = ndd.tensor([types.INTERP_LINEAR, types.INTERP_CUBIC])
    assert t.dtype is ndd.InterpType
    t = ndd.tensor([types.INTERP_LINEAR], dtype=ndd.InterpType)
    assert t.dtype is ndd.InterpType


def test_an_operator_asked_for_bfloat16_data_without_ml_dtypes_fails_at_the_call():
    if importlib.util.find_spec("ml_dtypes") is not None:
        pytest.skip("ml_dtypes is installed: bfloat16 data can be made")
    from ndd._prepare.args import InvalidArgumentError

    x = ndd.tensor(np.array([1.5, 2.0], np.float32))
    with pytest.raises(
        InvalidArgumentError, match=r"ndd.cast: 'dtype'=bfloat16 needs the 'ml_dtypes' package"
    ):
        ndd.cast(x, dtype=ndd.bfloat16)
    with pytest.raises(InvalidArgumentError, match=r"ndd.slice: 'dtype'=bfloat16"):
        ndd.slice(x, start=[0], end=[1], dtype=ndd.bfloat16)
