"""Element types: the ``DType`` class, its constants and conversions.

Every DType knows its numpy counterpart (``DType.numpy``); the CPU backend
stores data as numpy arrays, so conversion is a table lookup.
"""

import builtins
import enum
import re

import numpy as np

from .types import DALIDataType

__all__ = [
    "DType",
    "dtype",
    "type_id",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "bfloat16",
    "bool",
    "DataType",
    "ImageType",
    "InterpType",
]

_DEFAULT_FLOAT_BITS = {8: (4, 3), 16: (5, 10), 32: (8, 23), 64: (11, 52)}


def _bfloat16_numpy():
    # bfloat16 has no numpy type; ml_dtypes (the JAX/TensorFlow package) adds one.
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


class DType:
    """An element type of a Tensor or Batch.

    The module-level constants (``ndd.uint8`` ... ``ndd.float64``, ``ndd.bool``,
    ``ndd.bfloat16`` and the enum types) are the instances users handle; calling
    one converts data: ``ndd.float32([1, 2])`` is ``ndd.tensor([1, 2], dtype=ndd.float32)``.
    """

    class Kind(enum.Enum):
        signed = 1
        unsigned = 2
        float = 3
        bool = 4
        enum = 5

    _by_name: dict = {}
    _by_type_id: dict = {}
    _by_numpy: dict = {}

    def __init__(
        self,
        kind,
        bits,
        exponent_bits=None,
        significand_bits=None,
        bytes=None,
        type_id=None,
        name=None,
        docs=None,
    ):
        self.kind = kind
        self.bits = bits
        if kind is DType.Kind.float and exponent_bits is None:
            exponent_bits, significand_bits = _DEFAULT_FLOAT_BITS[bits]
        self.exponent_bits = exponent_bits
        self.significand_bits = significand_bits
        self.bytes = bytes if bytes is not None else (bits + 7) // 8
        self.type_id = type_id
        self.name = name
        self.__doc__ = docs
        self.numpy = None
        if name is not None:
            DType._by_name[name] = self
        if type_id is not None:
            DType._by_type_id[int(type_id)] = self
        self._key = (kind, bits, exponent_bits, significand_bits)
        if kind is DType.Kind.enum:
            self._key += (type_id,)
        self._hash = hash(self._key)

    def _bind_numpy(self, np_dtype):
        self.numpy = np_dtype
        if np_dtype is not None and self.kind is not DType.Kind.enum:
            DType._by_numpy[np_dtype] = self

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, DType):
            return NotImplemented
        return self._key == other._key

    def __hash__(self):
        return self._hash

    def __str__(self):
        if self.name is not None:
            return self.name
        # A type made from its kind and size is named as the reference names it.
        letter = {DType.Kind.signed: "i", DType.Kind.unsigned: "u", DType.Kind.float: "f"}.get(self.kind)
        if letter is None:
            return repr(self)
        name = f"{letter}{self.bits}"
        if self.kind is DType.Kind.float and _DEFAULT_FLOAT_BITS.get(self.bits) != (
            self.exponent_bits,
            self.significand_bits,
        ):
            name += f"e{self.exponent_bits}m{self.significand_bits}"
        return name

    def __repr__(self):
        text = f"DType(kind={self.kind}, bits={self.bits}"
        if self.kind is DType.Kind.float:
            text += f", exponent_bits={self.exponent_bits}, significand_bits={self.significand_bits}"
        return text + ")"

    def __call__(self, data, device=None, layout=None):
        from ._tensor import tensor

        return tensor(data, dtype=self, device=device, layout=layout)

    @property
    def is_integer(self):
        """True for the signed and unsigned integer types (not bool)."""
        return self.kind is DType.Kind.signed or self.kind is DType.Kind.unsigned

    @property
    def is_float(self):
        """True for the floating-point types."""
        return self.kind is DType.Kind.float

    @staticmethod
    def from_type_id(type_id):
        """The DType of a ``DALIDataType`` value."""
        try:
            return DType._by_type_id[int(type_id)]
        except (KeyError, TypeError):
            raise KeyError(f"no DType for type id {type_id!r}") from None

    @staticmethod
    def from_fw_type(numpy_type):
        """The DType of a numpy dtype (or numpy scalar type), a torch dtype, or Python's
        ``float`` (float32, as in the reference) or ``bool``."""
        if _is_torch_dtype(numpy_type):
            return _from_torch_dtype(numpy_type)
        if numpy_type is float:
            return float32
        if numpy_type is builtins.bool:
            return bool
        if numpy_type is int:
            raise TypeError("Python's int has no DType (its size is not fixed); use ndd.int32 or ndd.int64")
        try:
            return DType._by_numpy[np.dtype(numpy_type)]
        except (KeyError, TypeError):
            raise TypeError(
                f"no ndd DType holds {numpy_type!r} (the types are bool, the integers, the floats and bfloat16)"
            ) from None

    @staticmethod
    def parse(name):
        """The DType named ``name`` (``"u8"``, ``"f32"``, ``"bool"``, ``"f16e5m10"``, ...)."""
        found = DType._by_name.get(name)
        if found is not None:
            return found
        match = _FLOAT_NAME.fullmatch(name) if isinstance(name, str) else None
        if match is None:
            raise ValueError(f"unknown type name {name!r}")
        bits, exponent, significand = (int(g) for g in match.groups())
        made = DType(DType.Kind.float, bits, exponent_bits=exponent, significand_bits=significand)
        return next((t for t in DType._by_name.values() if t == made), made)


# A float type by its sizes: "f16e5m10" is float16 (sign, 5 exponent bits, 10 of significand).
_FLOAT_NAME = re.compile(r"f(\d+)e(\d+)m(\d+)")


def _is_torch_dtype(obj):
    return type(obj).__module__ == "torch" and type(obj).__name__ == "dtype"


def _from_torch_dtype(torch_dtype):
    name = str(torch_dtype).rsplit(".", 1)[-1]
    if name == "bfloat16":
        return bfloat16
    return DType.from_fw_type(np.dtype(name))


_K = DType.Kind
int8 = DType(_K.signed, 8, type_id=DALIDataType.INT8, name="i8")
int16 = DType(_K.signed, 16, type_id=DALIDataType.INT16, name="i16")
int32 = DType(_K.signed, 32, type_id=DALIDataType.INT32, name="i32")
int64 = DType(_K.signed, 64, type_id=DALIDataType.INT64, name="i64")
uint8 = DType(_K.unsigned, 8, type_id=DALIDataType.UINT8, name="u8")
uint16 = DType(_K.unsigned, 16, type_id=DALIDataType.UINT16, name="u16")
uint32 = DType(_K.unsigned, 32, type_id=DALIDataType.UINT32, name="u32")
uint64 = DType(_K.unsigned, 64, type_id=DALIDataType.UINT64, name="u64")
float16 = DType(_K.float, 16, type_id=DALIDataType.FLOAT16, name="f16")
float32 = DType(_K.float, 32, type_id=DALIDataType.FLOAT, name="f32")
float64 = DType(_K.float, 64, type_id=DALIDataType.FLOAT64, name="f64")
bfloat16 = DType(_K.float, 16, exponent_bits=8, significand_bits=7, name="bfloat16")
bool = DType(_K.bool, 8, type_id=DALIDataType.BOOL, name="bool")  # noqa: A001 - public name
DataType = DType(_K.enum, 32, type_id=DALIDataType.DATA_TYPE, name="DataType")
ImageType = DType(_K.enum, 32, type_id=DALIDataType.IMAGE_TYPE, name="ImageType")
InterpType = DType(_K.enum, 32, type_id=DALIDataType.INTERP_TYPE, name="InterpType")

for _dt, _np in [
    (int8, np.int8),
    (int16, np.int16),
    (int32, np.int32),
    (int64, np.int64),
    (uint8, np.uint8),
    (uint16, np.uint16),
    (uint32, np.uint32),
    (uint64, np.uint64),
    (float16, np.float16),
    (float32, np.float32),
    (float64, np.float64),
    (bool, np.bool_),
    (DataType, np.int32),
    (ImageType, np.int32),
    (InterpType, np.int32),
]:
    _dt._bind_numpy(np.dtype(_np))
bfloat16._bind_numpy(_bfloat16_numpy())

NUMERIC_TYPES = (uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, float32, float64)


def dtype(*args):
    """Convert a DTypeLike to a DType.

    Accepts a DType, a ``DALIDataType`` (ours or the reference's) or its integer id, a type name
    (``"u8"``, ``"f32"``, and also numpy names such as ``"float32"``), a numpy
    dtype or scalar type, or a torch dtype. Several arguments construct a new
    DType: ``dtype(DType.Kind.float, 32)``.
    """
    if len(args) != 1:
        return DType(*args)
    (obj,) = args
    if isinstance(obj, DType):
        return obj
    if isinstance(obj, str):
        try:
            return DType.parse(obj)  # ndd's names, and sizes such as "f16e5m10"
        except ValueError:
            pass
        try:
            return DType._by_numpy[np.dtype(obj)]
        except (KeyError, TypeError):
            raise ValueError(f"unknown type name {obj!r}") from None
    if obj is builtins.bool:
        return bool  # the reference takes Python's bool for its BOOL
    if obj is float:
        return float32  # as in the reference
    if obj is int:
        raise ValueError(f"Do not use Python built-in type {obj!r}; use an ndd DType such as ndd.int32")
    if type(obj).__name__ == "DALIDataType":
        return DType.from_type_id(obj)
    if obj is None or type(obj) is int:
        # numpy would read None as float64 and the reference refuses both.
        raise TypeError(f"{obj!r} could not be converted into any known DType")
    return DType.from_fw_type(obj)


def type_id(dtype):  # noqa: F811 - the parameter is named as in the reference
    """The ``DALIDataType`` of a DType (or of a DALIDataType, returned as ours)."""
    if isinstance(dtype, DType):
        if dtype.type_id is None:
            raise ValueError(f"{dtype} has no type id")
        return dtype.type_id
    if type(dtype).__name__ == "DALIDataType":
        return DALIDataType(int(dtype))
    raise ValueError(f"expected a DType or DALIDataType, got {dtype!r}")
