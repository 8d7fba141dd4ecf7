"""``ndd.math``: elementwise mathematical functions of Tensors, Batches,
tensor-likes and Python scalars (same type promotion and broadcasting as the
arithmetic operators)."""

from ._ops.arithmetic import MATH_FUNCTIONS, apply

__all__ = sorted(MATH_FUNCTIONS)

_DOCS = {
    "sqrt": "Square root.",
    "rsqrt": "Reciprocal of the square root.",
    "cbrt": "Cube root (real, so negative inputs give negative results).",
    "exp": "Exponential.",
    "log": "Natural logarithm.",
    "log2": "Base-2 logarithm.",
    "log10": "Base-10 logarithm.",
    "sin": "Sine (radians).",
    "cos": "Cosine (radians).",
    "tan": "Tangent (radians).",
    "asin": "Arcsine.",
    "acos": "Arccosine.",
    "atan": "Arctangent.",
    "sinh": "Hyperbolic sine.",
    "cosh": "Hyperbolic cosine.",
    "tanh": "Hyperbolic tangent.",
    "asinh": "Inverse hyperbolic sine.",
    "acosh": "Inverse hyperbolic cosine.",
    "atanh": "Inverse hyperbolic tangent.",
    "floor": "Largest integer not greater than the input (a float result).",
    "ceil": "Smallest integer not less than the input (a float result).",
    "fabs": "Absolute value as a float.",
    "abs": "Absolute value, keeping the input type.",
    "min": "Elementwise minimum of two operands (the common type).",
    "max": "Elementwise maximum of two operands (the common type).",
    "pow": "``base ** exponent`` in the common type.",
    "fpow": "``base ** exponent`` computed in floating point.",
    "atan2": "Arctangent of ``x / y`` using the signs of both to pick the quadrant (as ``numpy.arctan2(x, y)``).",
    "clamp": "``value`` limited to the range [``lo``, ``hi``].",
}


def _make(name):
    op = MATH_FUNCTIONS[name]
    params = ", ".join(op.params)
    namespace = {"_apply": apply, "_op": op}
    exec(f"def {name}({params}):\n    return _apply(_op, ({params},))\n", namespace)  # noqa: S102
    fn = namespace[name]
    fn.__module__ = __name__
    result = (
        "float32 for integer inputs, else the input type"
        if op.result == "float"
        else ("the common type of the operands")
    )
    params_doc = "\n".join(f"{p} : Tensor, Batch, tensor-like or scalar" for p in op.params)
    fn.__doc__ = (
        f"{_DOCS[name]}\n\nParameters\n----------\n{params_doc}\n\n"
        f"Returns\n-------\nTensor or Batch\n    Elementwise result; its type is {result}.\n"
    )
    return fn


for _name in MATH_FUNCTIONS:
    globals()[_name] = _make(_name)
del _name
