# cython: language_level=3
"""Operator argument specs and their conversion to canonical Python values.

Each schema argument has a kind; ``Arg.convert`` turns what the user gave
(Python values, numpy arrays, the data of a Tensor argument) into the value the
kernels see, or raises naming the operator and the argument.
"""

import operator

import numpy as np

from libc.math cimport floor, isfinite

from .philox cimport Philox

from .._types import dtype as to_dtype

REQUIRED = object()


class InvalidArgumentError(ValueError, TypeError, RuntimeError):
    """An operator argument of the wrong type or value. It is a ValueError and a
    TypeError (what Python code expects), and a RuntimeError (what the reference
    raises for every failure of an operator)."""


cdef frozenset KINDS = frozenset(
    ["int", "float", "bool", "str", "dtype", "layout", "int_list", "float_list", "array", "any", "rng"]
)


cdef str _describe(value):
    if isinstance(value, np.ndarray):
        return f"array of {value.dtype} with shape {value.shape}"
    return f"{type(value).__name__} {value!r}"


cdef object _scalar(object value):
    """Unwrap 0-D / 1-element arrays and numpy scalars into Python scalars."""
    if isinstance(value, np.ndarray):
        if value.size != 1:
            return value
        return value.reshape(()).item()
    if isinstance(value, np.generic):
        return value.item()
    return value


cdef class Arg:
    """One keyword argument of an operator.

    Parameters
    ----------
    name : str
        The keyword.
    kind : str
        How values are converted: int, float, bool, str, dtype, layout,
        int_list, float_list, array, any, or rng: an ``ndd.random.RNG`` from
        which every call draws a ``RandomKey`` (see ``draw_random_key``).
    default : object
        Default value; ``REQUIRED`` for a mandatory keyword.
    per_sample : bool
        Whether a Tensor/Batch may be given (one value per sample).
    choices : tuple of str, optional
        Allowed values of a ``str`` argument.
    doc : str
        Description for the generated docstring.
    nonfinite : bool
        Whether a float or float_list argument takes NaN and infinities (a fill
        value, say); by default they are refused at the call.
    rows : bool
        Whether an int_list or float_list argument may also be given as rows (a 2-D
        array or a list of lists), read one row after another (erase's regions).
    sizes : bool
        Whether a float_list given as constants (a list or tuple, not a Tensor or an
        array) holds output sizes, each above 0 and rounded to the nearest integer
        (halves up), at least 1, as the reference reads warp_affine's and rotate's
        ``size``; values given as data are left to the operator.
    """

    def __init__(self, name, kind, default=REQUIRED, *, per_sample=False, choices=None, doc="",
                 type_doc="", nonfinite=False, rows=False, sizes=False):
        if kind not in KINDS:
            raise ValueError(f"unknown argument kind {kind!r}")
        if kind == "rng" and (per_sample or default is not None):
            raise ValueError(f"argument {name!r} of kind 'rng' must default to None and not be per sample")
        self.name = name
        self.kind = kind
        self.default = default
        self.per_sample = per_sample
        self.choices = tuple(choices) if choices is not None else None
        self.doc = doc
        self.type_doc = type_doc
        self.converted_default = None
        self.draws_random = kind == "rng"
        self.finite = not nonfinite
        self.rows = rows
        self.sizes = sizes

    @property
    def required(self):
        return self.default is REQUIRED

    def __repr__(self):
        return f"Arg({self.name!r}, {self.kind!r})"

    cpdef object convert(self, op, object value):
        """Return the canonical value of ``value`` or raise naming ``op`` and the argument."""
        if value is None:
            return None
        kind = self.kind
        if kind == "any":
            return value
        if kind == "array":
            try:
                array = np.asarray(value)
            except ValueError:  # a ragged list: rows of different lengths
                self._fail(op, "a list of numbers or a rectangular list of lists", value)
            if array.dtype.kind not in "biuf":
                self._fail(op, "numbers (one, a list or an array of them)", value)
            return array
        if kind == "int":
            value = _scalar(value)
            if isinstance(value, bool):  # as in the reference: flip(horizontal=True) is 1
                return int(value)
            if not isinstance(value, int):
                if isinstance(value, float) and value.is_integer():
                    return int(value)
                if hasattr(type(value), "__index__") and not isinstance(value, np.ndarray):
                    # An integer enum of another library: the reference's types.INTERP_LINEAR.
                    return operator.index(value)
                self._fail(op, "an integer", value)
            return value
        if kind == "float":
            value = _scalar(value)
            if isinstance(value, (int, float)):
                value = float(value)
                if self.finite and not isfinite(value):
                    self._fail(op, "a finite number", value)
                return value
            self._fail(op, "a number", value)
        if kind == "bool":
            value = _scalar(value)
            if isinstance(value, (bool, int)):
                return bool(value)
            self._fail(op, "a bool", value)
        if kind == "str" or kind == "layout":
            if isinstance(value, np.ndarray) and value.dtype == np.uint8:
                value = value.tobytes().decode()
            if not isinstance(value, str):
                self._fail(op, "a string", value)
            if self.choices is not None and value not in self.choices:
                raise InvalidArgumentError(
                    f"{op.qualname}: '{self.name}' must be one of {list(self.choices)}, got {value!r}"
                )
            return value
        if kind == "dtype":
            try:
                converted = to_dtype(value)
            except (TypeError, ValueError, KeyError) as exc:
                raise InvalidArgumentError(
                    f"{op.qualname}: '{self.name}' must be a DType, got {value!r}"
                ) from exc
            if converted.numpy is None:
                # bfloat16 without ml_dtypes: no numpy type can hold the result.
                raise InvalidArgumentError(
                    f"{op.qualname}: '{self.name}'={converted} needs the 'ml_dtypes' package "
                    "(pip install ml_dtypes) to hold the data"
                )
            return converted
        if kind == "int_list" or kind == "float_list":
            return self._convert_list(op, value, kind == "int_list")
        if kind == "rng":
            return draw_random_key(op, self.name, value)
        raise AssertionError(kind)

    cdef tuple _convert_list(self, op, object value, bint integer):
        if self.rows and isinstance(value, (list, tuple)) and value and all(
            isinstance(row, (list, tuple, np.ndarray)) for row in value
        ):
            value = [v for row in value for v in (row.tolist() if isinstance(row, np.ndarray) else row)]
        if isinstance(value, np.ndarray):
            if value.ndim > 2 or (value.ndim == 2 and not self.rows):
                self._fail(op, "a scalar or a 1-D list" + (" or rows" if self.rows else ""), value)
            if integer and value.dtype.kind == "f":
                if not np.all(np.mod(value, 1) == 0):
                    self._fail(op, "integers", value)
            value = value.reshape(-1).tolist()
        elif isinstance(value, np.generic):
            value = [value.item()]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            value = [value]
        elif not isinstance(value, (list, tuple)):
            self._fail(op, "a list of numbers", value)
        elif self.sizes:
            return self._convert_sizes(op, value)
        out = []
        for v in value:
            v = _scalar(v)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                self._fail(op, "a list of numbers", value)
            if integer:
                if isinstance(v, float):
                    if not v.is_integer():
                        self._fail(op, "a list of integers", value)
                    v = int(v)
            else:
                v = float(v)
                if self.finite and not isfinite(v):
                    self._fail(op, "a list of finite numbers", value)
            out.append(v)
        return tuple(out)

    cdef tuple _convert_sizes(self, op, value):
        out = []
        for v in value:
            v = _scalar(v)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                self._fail(op, "a list of numbers", value)
            if not v > 0 or not isfinite(v):
                self._fail(op, "a list of sizes above 0", value)
            out.append(float(max(1, floor(v + 0.5))))
        return tuple(out)

    cdef _fail(self, op, str expected, value):
        raise InvalidArgumentError(f"{op.qualname}: '{self.name}' must be {expected}, got {_describe(value)}")


cpdef object draw_random_key(op, str name, object rng):
    """Draw the words of one call of ``op`` from ``rng`` (argument ``name``).

    Called in the prepare phase, on the caller's thread, so that the run phase
    (whenever and wherever it happens) only reads the drawn words.
    """
    if not isinstance(rng, Philox):
        raise InvalidArgumentError(
            f"{op.qualname}: '{name}' must be an ndd.random.RNG or None, got {_describe(rng)}"
        )
    return (<Philox>rng).draw_key()
