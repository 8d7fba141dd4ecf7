"""Type promotion of elementwise operators (the reference's rules, see
tests/golden/ARITH_NOTES.md): bool is the weakest type; any float gives the
widest float; same signedness gives the wider type; signed with unsigned gives
the signed type when it is wider, else the signed type of twice the unsigned
width (capped at 64 bits). Python scalars are not "weak": an int is an int32
operand, a float a float32 one."""

from .._types import DType, float32, int16, int32, int64
from .._types import bool as bool_dtype

_SIGNED_BY_BITS = {16: int16, 32: int32, 64: int64}


def promote(a: DType, b: DType) -> DType:
    """The common type of two operand types."""
    if a == b:
        return a
    if a == bool_dtype:
        return b
    if b == bool_dtype:
        return a
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.bits >= b.bits else b
        return a if a.is_float else b
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    signed, unsigned = (a, b) if a.kind is DType.Kind.signed else (b, a)
    if signed.bits > unsigned.bits:
        return signed
    return _SIGNED_BY_BITS[min(2 * unsigned.bits, 64)]


def promote_all(dtypes) -> DType:
    result = dtypes[0]
    for dt in dtypes[1:]:
        result = promote(result, dt)
    return result


def float_result(dt: DType) -> DType:
    """Result of true division and float functions: float32 unless already a float."""
    return dt if dt.is_float else float32
