"""Elementwise operators: Python operators on Tensor/Batch and ``ndd.math``.

Each operator is an ``ElementwiseOp``: a result-type rule, a numpy kernel and
the name of its GPU kernels (``gpu_elementwise.py``, which gives the same values,
except that an integer divisor of 0 or a negative shift count in GPU data gives
numpy's result instead of raising). The prepare phase (type promotion,
broadcasting, layout) is the compiled ``_prepare.elementwise.apply``.

Deliberate divergences from the reference (documented in the user guide):
``//`` and ``%`` use Python's floor semantics for integers and floats, and an
integer divisor of 0 raises ZeroDivisionError; float16 is supported on the CPU;
``rsqrt(0)`` is inf; an integer raised to a negative power is the truncated
exact result (``1 ** -1 == 1``) rather than 0; shifts by the bit width or more
give the exact result and negative shift counts raise ValueError; ``ndd.math.min``
and ``max`` propagate NaN; comparisons are exact across signed and unsigned types
and compare integers with floats as numpy does (in float64 where needed).
"""

import numpy as np

from .._prepare.elementwise import apply
from .._types import bool as bool_dtype
from .gpu_elementwise import gpu_elementwise
from .promotion import float_result, promote_all

__all__ = ["ElementwiseOp", "OPERATORS", "MATH_FUNCTIONS", "apply"]


class ElementwiseOp:
    """One elementwise operator.

    Parameters
    ----------
    name : str
        Expression name (``"add"``); ``qualname`` names it in messages.
    arity : int
    fn : callable
        numpy function of the operand arrays, already converted to the compute type.
    result : str
        ``"promote"`` (the common type), ``"float"`` (float32 unless a float is
        involved), ``"bool"`` (comparisons) or ``"same"`` (unary, keeps the type).
    integer_only : bool
        Bitwise operators: float operands are an error.
    bool_ok : bool
        Whether all-bool operands are accepted.
    gpu : str, optional
        Name of its kernels in ``kernels/elementwise.cu`` (``"add"`` for
        ``add_f32``...); without one the operator runs on the CPU only.
    """

    batch_kernel = None
    # The prepare phase checks that broadcasting Tensor operands against dense
    # batches gives the per-sample result (args["dense"]).
    dense_broadcasts_tensors = True
    execute = None

    def __init__(
        self,
        name,
        qualname,
        arity,
        fn,
        result="promote",
        integer_only=False,
        bool_ok=False,
        params=None,
        gpu=None,
    ):
        self.name = name
        self.qualname = qualname
        self.arity = arity
        self.fn = fn
        self.result = result
        self.integer_only = integer_only
        self.bool_ok = bool_ok
        self.params = params
        self.type_cache = {}
        self.gpu_kernel = None if gpu is None else gpu_elementwise(self, gpu)

    def resolve_types(self, dtypes):
        """``(output DType, numpy compute dtype, numpy output dtype, floating)`` for
        operand types, or TypeError naming the operator; ``floating`` is true when
        the computation is done in a float type."""
        names = ", ".join(str(d) for d in dtypes)
        for dt in dtypes:
            if dt.numpy is None or dt.kind.name == "enum":
                raise TypeError(f"{self.qualname}: operands of type {dt} are not supported")
            if self.integer_only and dt.is_float:
                raise TypeError(f"{self.qualname}: operands must be integers or bool, got {names}")
        if not self.bool_ok and all(dt == bool_dtype for dt in dtypes):
            raise TypeError(f"{self.qualname}: operands cannot all be bool ({names}); use & | ^ for logic")
        common = promote_all(list(dtypes))
        if self.result == "bool":
            # Comparisons stay exact across signed/unsigned types: numpy compares
            # the original operands instead of casting both to the common type.
            return (bool_dtype, None, bool_dtype.numpy, False)
        if self.result == "float":
            common = float_result(common)
        return (common, common.numpy, common.numpy, common.is_float)

    def kernel(self, arrays, args):
        _, compute, out, floating = args["types"]
        if floating:
            # inf and nan are results like any other (as in C); numpy would warn.
            with np.errstate(all="ignore"):
                return self._compute(arrays, compute, out)
        return self._compute(arrays, compute, out)

    def _compute(self, arrays, compute, out):
        if compute is not None:
            arrays = [a if a.dtype == compute else a.astype(compute) for a in arrays]
        # asarray: ufuncs return numpy scalars, not arrays, for 0-D operands.
        return np.asarray(self.fn(*arrays), dtype=out)

    def dense_kernel(self, arrays, args):
        """The whole batch at once when the prepare phase found that broadcasting
        the dense batch arrays is the same as broadcasting each sample."""
        return self.kernel(arrays, args) if args["dense"] else None

    def __call__(self, *operands):
        return apply(self, operands)

    def __repr__(self):
        return f"<ElementwiseOp {self.qualname}>"


def _is_int(a):
    return a.dtype.kind in "iu"


def _floor_divide(a, b):
    if _is_int(b) and not b.all():
        raise ZeroDivisionError("Integer division by zero")
    # MIN // -1 wraps to MIN, as the other integer overflows do.
    with np.errstate(over="ignore"):
        return np.floor_divide(a, b)


def _mod(a, b):
    if _is_int(b) and not b.all():
        raise ZeroDivisionError("Integer modulo by zero")
    return np.mod(a, b)


def _power(a, b):
    if _is_int(a) and b.dtype.kind == "i" and (b < 0).any():
        # The exact result truncated toward zero: 1 stays 1, -1 alternates,
        # any other base gives 0.
        positive = np.power(a, np.maximum(b, 0))
        odd = (b % 2) != 0
        special = np.where(a == 1, 1, np.where(odd, -1, 1))
        return np.where(b >= 0, positive, np.where(np.abs(a) == 1, special, 0)).astype(a.dtype)
    return np.power(a, b)


def _rsqrt(a):
    return np.reciprocal(np.sqrt(a))


def _shift(fn):
    def shift(a, b):
        # numpy gives 0 (or -1) for counts >= the bit width, which is the exact
        # result of shifting; negative counts are an error.
        if b.dtype.kind == "i" and (b < 0).any():
            raise ValueError("negative shift count")
        return fn(a, b)

    return shift


def _op(name, symbol, arity, fn, **kw):
    return ElementwiseOp(name, f"operator {symbol}", arity, fn, **kw)


OPERATORS = {
    "add": _op("add", "+", 2, np.add, gpu="add"),
    "sub": _op("sub", "-", 2, np.subtract, gpu="sub"),
    "mul": _op("mul", "*", 2, np.multiply, bool_ok=True, gpu="mul"),
    "fdiv": _op("fdiv", "/", 2, np.true_divide, result="float", gpu="truediv"),
    "div": _op("div", "//", 2, _floor_divide, gpu="floordiv"),
    "mod": _op("mod", "%", 2, _mod, gpu="mod"),
    "pow": _op("pow", "**", 2, _power, gpu="pow"),
    "bitand": _op("bitand", "&", 2, np.bitwise_and, integer_only=True, bool_ok=True, gpu="bitand"),
    "bitor": _op("bitor", "|", 2, np.bitwise_or, integer_only=True, bool_ok=True, gpu="bitor"),
    "bitxor": _op("bitxor", "^", 2, np.bitwise_xor, integer_only=True, bool_ok=True, gpu="bitxor"),
    "lshift": _op("lshift", "<<", 2, _shift(np.left_shift), integer_only=True, bool_ok=True, gpu="lshift"),
    "rshift": _op("rshift", ">>", 2, _shift(np.right_shift), integer_only=True, bool_ok=True, gpu="rshift"),
    "eq": _op("eq", "==", 2, np.equal, result="bool", bool_ok=True, gpu="eq"),
    "neq": _op("neq", "!=", 2, np.not_equal, result="bool", bool_ok=True, gpu="neq"),
    "lt": _op("lt", "<", 2, np.less, result="bool", bool_ok=True, gpu="lt"),
    "leq": _op("leq", "<=", 2, np.less_equal, result="bool", bool_ok=True, gpu="leq"),
    "gt": _op("gt", ">", 2, np.greater, result="bool", bool_ok=True, gpu="gt"),
    "geq": _op("geq", ">=", 2, np.greater_equal, result="bool", bool_ok=True, gpu="geq"),
    "minus": _op("minus", "-", 1, np.negative, gpu="minus"),
    "bitnot": _op("bitnot", "~", 1, np.invert, integer_only=True, bool_ok=True, gpu="bitnot"),
}


def _math(name, arity, fn, result="promote", params=None, **kw):
    return ElementwiseOp(name, f"ndd.math.{name}", arity, fn, result=result, params=params, **kw)


_FLOAT_UNARY = {
    "sqrt": np.sqrt,
    "rsqrt": None,
    "cbrt": np.cbrt,
    "exp": np.exp,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "floor": np.floor,
    "ceil": np.ceil,
    "fabs": np.fabs,
}

MATH_FUNCTIONS = {
    name: _math(name, 1, _rsqrt if fn is None else fn, result="float", params=("input",), gpu=name)
    for name, fn in _FLOAT_UNARY.items()
}
MATH_FUNCTIONS.update(
    {
        "abs": _math("abs", 1, np.abs, params=("input",), gpu="abs"),
        "min": _math("min", 2, np.minimum, params=("left", "right"), gpu="minimum"),
        "max": _math("max", 2, np.maximum, params=("left", "right"), gpu="maximum"),
        "pow": _math("pow", 2, _power, params=("base", "exponent"), gpu="pow"),
        "fpow": _math("fpow", 2, _power, result="float", params=("base", "exponent"), gpu="pow"),
        # The first argument is the numerator, as np.arctan2(x, y) (reference parameter names).
        "atan2": _math("atan2", 2, np.arctan2, result="float", params=("x", "y"), gpu="atan2"),
        "clamp": _math(
            "clamp",
            3,
            lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
            params=("value", "lo", "hi"),
            gpu="clamp",
        ),
    }
)
