"""Enumerations used as operator arguments (the names of ``nvidia.dali.types``).

Code written for the reference passes ``nvidia.dali.types.FLOAT`` or
``types.INTERP_LINEAR``; ndd accepts those objects, and these enums with the same
member names and integer values, so ``from ndd import types`` is a drop-in.
"""

from enum import Enum, IntEnum

__all__ = ["DALIDataType", "DALIImageType", "DALIInterpType"]


class _NamedIntEnum(IntEnum):
    """An IntEnum printed by name (``DALIDataType.FLOAT``), as the reference's enums
    print; since Python 3.11 an IntEnum prints as its number."""

    __str__ = Enum.__str__

    def __format__(self, spec):
        return format(str(self), spec)


class DALIDataType(_NamedIntEnum):
    """Element type identifiers, numbered as in DALI."""

    NO_TYPE = -1
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    UINT64 = 3
    INT8 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    FLOAT16 = 8
    FLOAT = 9
    FLOAT64 = 10
    BOOL = 11
    STRING = 12
    IMAGE_TYPE = 20
    DATA_TYPE = 21
    INTERP_TYPE = 22


class DALIImageType(_NamedIntEnum):
    """Color spaces of images."""

    RGB = 0
    BGR = 1
    GRAY = 2
    YCbCr = 3
    ANY_DATA = 4


class DALIInterpType(_NamedIntEnum):
    """Interpolation methods."""

    INTERP_NN = 0
    INTERP_LINEAR = 1
    INTERP_CUBIC = 2
    INTERP_LANCZOS3 = 3
    INTERP_TRIANGULAR = 4
    INTERP_GAUSSIAN = 5


# Module-level aliases, as ``nvidia.dali.types.FLOAT`` etc.
globals().update(DALIDataType.__members__)
globals().update(DALIImageType.__members__)
globals().update(DALIInterpType.__members__)
__all__ += list(DALIDataType.__members__) + list(DALIImageType.__members__)
__all__ += list(DALIInterpType.__members__)


def enum_value(value, enum_cls):
    """Convert our enum, the reference's enum object or an int to ``enum_cls``.

    The reference's pybind11 enums are not ``int`` subclasses; they expose the
    value through ``int()`` and their member name through ``.name``.
    """
    if isinstance(value, enum_cls):
        return value
    name = getattr(value, "name", None)
    if name is not None and type(value).__name__ == enum_cls.__name__:
        return enum_cls[name]
    if isinstance(value, int) and not isinstance(value, bool):
        return enum_cls(value)
    raise TypeError(f"expected a {enum_cls.__name__} value, got {value!r}")
