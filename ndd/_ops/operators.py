"""Python operator methods (``+``, ``<``, ``~`` ...) shared by Tensor and Batch."""

from .arithmetic import MATH_FUNCTIONS, OPERATORS, apply

_BINARY = {
    "add": "add",
    "sub": "sub",
    "mul": "mul",
    "truediv": "fdiv",
    "floordiv": "div",
    "mod": "mod",
    "pow": "pow",
    "and": "bitand",
    "or": "bitor",
    "xor": "bitxor",
    "lshift": "lshift",
    "rshift": "rshift",
}
_COMPARISONS = {"eq": "eq", "ne": "neq", "lt": "lt", "le": "leq", "gt": "gt", "ge": "geq"}


def _binary(op):
    def method(self, other):
        return apply(op, (self, other))

    return method


def _reflected(op):
    def method(self, other):
        return apply(op, (other, self))

    return method


def _unary(op):
    def method(self):
        return apply(op, (self,))

    return method


def _pos(self):
    return self


def install(cls):
    """Add the operator methods to ``cls``."""
    for dunder, name in _BINARY.items():
        setattr(cls, f"__{dunder}__", _binary(OPERATORS[name]))
        setattr(cls, f"__r{dunder}__", _reflected(OPERATORS[name]))
    for dunder, name in _COMPARISONS.items():
        setattr(cls, f"__{dunder}__", _binary(OPERATORS[name]))
    cls.__neg__ = _unary(OPERATORS["minus"])
    cls.__invert__ = _unary(OPERATORS["bitnot"])
    cls.__abs__ = _unary(MATH_FUNCTIONS["abs"])
    cls.__pos__ = _pos
    cls.__hash__ = None
