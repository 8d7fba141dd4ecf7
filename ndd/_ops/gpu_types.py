"""The type suffixes of kernel names in ``kernels/*.cu`` (``add_f32``,
``random_coin_flip_bool``, ``convert_copy_u8_to_f32``): one spelling per numpy type
for every kernel file, and the subsets a family has kernels for."""

import numpy as np

__all__ = ["STORAGE_TYPES", "SUFFIXES", "WITHOUT_FLOAT16", "suffixes"]

SUFFIXES = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "i8",
    np.dtype(np.uint8): "u8",
    np.dtype(np.int16): "i16",
    np.dtype(np.uint16): "u16",
    np.dtype(np.int32): "i32",
    np.dtype(np.uint32): "u32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint64): "u64",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
}


def suffixes(*types) -> dict:
    """``{numpy dtype: suffix}`` of ``types`` (numpy types or dtypes), in that order."""
    return {np.dtype(t): SUFFIXES[np.dtype(t)] for t in types}


# Every type but float16: the families whose kernels have no half-precision variant
# (random numbers, slice's converting copies).
WITHOUT_FLOAT16 = tuple(t for t in SUFFIXES if t != np.float16)

# Element size in bytes -> (kernel suffix, the unsigned type of that size): the kernels
# that move bit patterns (fills, lookups, copies) serve every type of a size.
STORAGE_TYPES = {
    1: ("u8", np.dtype(np.uint8)),
    2: ("u16", np.dtype(np.uint16)),
    4: ("u32", np.dtype(np.uint32)),
    8: ("u64", np.dtype(np.uint64)),
}
