"""Python operators on Tensor and Batch: ``+ - * / // % **``, ``& | ^ << >>``,
comparisons and unary ``- + ~ abs``.

Result types are checked against the reference's promotion table
(``tests/golden/arith_promotion.json``), values against exact Python integer
arithmetic and numpy, and the recorded reference values
(``arith_values.json``/``.npz``, described in ``tests/golden/ARITH_NOTES.md``).
Where ndd deliberately follows Python/numpy instead of the reference, the test
asserts ndd's behaviour and says what the reference does.
"""

import operator
import re
import sys

import numpy as np
import pytest
from arrays import assert_result, dtype_name, sample_arrays
from golden_cases import PROMOTION, VALUE_CASES, value_case_tests

import ndd

DTYPES = PROMOTION["dtypes"]
INT_DTYPES = [d for d in DTYPES if d.startswith(("int", "uint"))]
FLOAT_DTYPES = ["float16", "float32", "float64"]

ARITHMETIC = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
}
BITWISE = {
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
}
COMPARISONS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
BINARY = ARITHMETIC | BITWISE | COMPARISONS
# Arithmetic the reference refuses for two bool operands ("cannot be booleans").
BOOL_REJECTED = {"+", "-", "/", "//", "%", "**"}

MODES = [ndd.EvalMode.deferred, ndd.EvalMode.eager, ndd.EvalMode.sync_cpu, ndd.EvalMode.sync_full]


@pytest.fixture(autouse=True)
def _sync_cpu():
    # Most tests run each operator on the calling thread; the tests of evaluation
    # modes enter their own mode inside.
    with ndd.EvalMode.sync_cpu:
        yield


def tensor(values, dtype, layout=None):
    return ndd.tensor(np.array(values, dtype=dtype), layout=layout)


def bits(name):
    return np.dtype(name).itemsize * 8


def error_type(exc):
    """The type of an operator's error as the tables name it: the builtin type that
    ndd's class of the same name derives from (it is also a RuntimeError, as in the
    reference: ndd/_errors.py)."""
    kind = type(exc)
    return kind.__bases__[0] if kind.__module__ == "ndd._errors" else kind


def outcome(fn, *operands):
    """The result dtype name of ``fn(*operands)``, evaluated, or the exception type.
    A result whose data does not have the announced dtype is reported as such."""
    try:
        result = fn(*operands)
        data = np.asarray(result)
    except Exception as exc:  # the type is the outcome
        return error_type(exc)
    name = dtype_name(result.dtype)
    return name if data.dtype == name else f"{name} (data: {data.dtype})"


# ---------------------------------------------------------------------------
# result types
# ---------------------------------------------------------------------------


def promotion_rule_with_float16(op, left, right):
    """The result type where the reference rejects float16 (unsupported on its CPU):
    ndd supports float16 and applies the same rule as to other floats."""
    if op in BITWISE:
        return TypeError
    if op in COMPARISONS:
        return "bool"
    return max((d for d in (left, right) if d.startswith("float")), key=bits)


def expected_dtype(op, left, right):
    """What ndd gives for tensor(left) OP tensor(right): the reference's result; the
    promotion rule where the reference rejects float16; TypeError where it rejects
    two bools or a bitwise operation on floats."""
    ref = PROMOTION["binary"][op][f"{left},{right}"]
    if not ref.startswith("error"):
        return ref
    if "float16" in (left, right):
        return promotion_rule_with_float16(op, left, right)
    # The reference raises RuntimeError for these; ndd raises TypeError at the call.
    assert "cannot be booleans" in ref or "must be of integral type" in ref, ref
    return TypeError


SAMPLES = {d: tensor([True] * 3 if d == "bool" else [1, 2, 3], d) for d in DTYPES}


def test_golden_tables_cover_every_operator():
    assert set(BINARY) | {"math.min", "math.max", "math.pow", "math.fpow", "math.atan2"} == set(
        PROMOTION["binary_ops"]
    )
    assert len(DTYPES) == 12


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_result_dtype_of_every_pair(op):
    fn = BINARY[op]
    mismatches = [
        (left, right, got, want)
        for left in DTYPES
        for right in DTYPES
        if (got := outcome(fn, SAMPLES[left], SAMPLES[right])) != (want := expected_dtype(op, left, right))
    ]
    assert not mismatches, mismatches[:10]


@pytest.mark.parametrize(
    ("left", "right", "want"),
    [
        ("int8", "uint8", "int16"),
        ("int16", "uint16", "int32"),
        ("int32", "uint32", "int64"),
        ("int8", "uint64", "int64"),  # numpy: float64
        ("int64", "uint64", "int64"),
        ("int16", "uint8", "int16"),
        ("uint64", "float32", "float32"),  # numpy: float64
        ("int64", "float16", "float16"),
        ("float16", "float32", "float32"),
        ("bool", "uint8", "uint8"),
        ("bool", "float16", "float16"),
    ],
)
def test_promotion_examples(left, right, want):
    assert dtype_name((SAMPLES[left] + SAMPLES[right]).dtype) == want
    assert dtype_name((SAMPLES[right] + SAMPLES[left]).dtype) == want


@pytest.mark.parametrize(("op", "want"), [("/", "float32"), ("//", "int64"), ("**", "int64")])
def test_int64_with_uint64(op, want):
    # True division of integers is float32 even for 64-bit operands (the reference's rule).
    assert dtype_name(BINARY[op](SAMPLES["int64"], SAMPLES["uint64"]).dtype) == want


@pytest.mark.parametrize("op", sorted(BOOL_REJECTED))
def test_bool_arithmetic_is_rejected(op):
    # Reference: RuntimeError 'Inputs to arithmetic operator `+` cannot be booleans'.
    with pytest.raises(TypeError, match=re.escape(f"operator {op}: operands cannot all be bool")):
        BINARY[op](SAMPLES["bool"], SAMPLES["bool"])


@pytest.mark.parametrize("op", ["*", "&", "|", "^", "<<", ">>", "==", "<"])
def test_bool_logic_and_comparisons_keep_bool(op):
    assert outcome(BINARY[op], SAMPLES["bool"], SAMPLES["bool"]) == "bool"


UNARY = {"-": operator.neg, "+": operator.pos, "abs": abs, "~": operator.invert}


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_result_dtype(op):
    mismatches = []
    for d in DTYPES:
        ref = PROMOTION["unary"][op][d]
        if not ref.startswith("error"):
            want = ref
        elif d == "float16" and op != "~":
            want = "float16"  # Reference: 'Unsupported type: float16'.
        else:
            # Reference: RuntimeError for '-'/abs of bool and '~' of floats.
            want = TypeError
        got = outcome(UNARY[op], SAMPLES[d])
        if got != want:
            mismatches.append((d, got, want))
    assert not mismatches


def test_unary_plus_is_identity():
    t = SAMPLES["float16"]
    assert +t is t


# ---------------------------------------------------------------------------
# Python scalars and other operands
# ---------------------------------------------------------------------------

# The reference's results of numpy scalars on the left were recorded with numpy 2.
NUMPY_2 = int(np.__version__.split(".")[0]) >= 2
SCALARS = {
    "1": 1,
    "-1": -1,
    "3000000000": 3000000000,
    "2.5": 2.5,
    "True": True,
    "np.int64(1)": np.int64(1),
    "np.uint8(1)": np.uint8(1),
    "np.float32(2.5)": np.float32(2.5),
    "np.float64(2.5)": np.float64(2.5),
}
SCALAR_DTYPE = {
    "1": "int32",
    "-1": "int32",
    # Reference: OverflowError 'Integer 3000000000 is out of range for int32.'
    # ndd takes a uint32 operand, as ndd.tensor(3000000000) does in both.
    "3000000000": "uint32",
    "2.5": "float32",
    "True": "bool",
    "np.int64(1)": "int64",
    "np.uint8(1)": "uint8",
    "np.float32(2.5)": "float32",
    "np.float64(2.5)": "float64",
}
PYTHON_SCALARS = ["1", "-1", "3000000000", "2.5", "True"]


def prepared_outcome(fn, *operands):
    """The result dtype name known at the call (nothing runs), or the exception type."""
    with ndd.EvalMode.deferred:
        try:
            return dtype_name(fn(*operands).dtype)
        except Exception as exc:  # the type is the outcome
            return error_type(exc)


def test_scalar_table_covers_the_golden_scalars():
    assert list(SCALARS) == PROMOTION["scalars"]


@pytest.mark.parametrize("op", list(BINARY))
def test_scalar_on_the_right_is_a_0d_tensor_of_fixed_type(op):
    fn = BINARY[op]
    mismatches = []
    for d in DTYPES:
        for spelling, value in SCALARS.items():
            ref = PROMOTION["scalar_right"][op][d][spelling]
            want = expected_dtype(op, d, SCALAR_DTYPE[spelling])
            if not ref.startswith("error"):
                assert ref == want, (d, spelling)  # the golden agrees with the rule
            got = prepared_outcome(fn, SAMPLES[d], value)
            if got != want:
                mismatches.append((d, spelling, got, want))
    assert not mismatches, mismatches[:10]


@pytest.mark.parametrize("op", list(BINARY))
def test_python_scalar_on_the_left_is_a_0d_tensor_of_fixed_type(op):
    fn = BINARY[op]
    mismatches = []
    for d in DTYPES:
        for spelling in PYTHON_SCALARS:
            ref = PROMOTION["scalar_left"][op][d][spelling]
            want = expected_dtype(op, SCALAR_DTYPE[spelling], d)
            if not ref.startswith("error"):
                assert ref == want, (d, spelling)
            got = prepared_outcome(fn, SCALARS[spelling], SAMPLES[d])
            if got != want:
                mismatches.append((d, spelling, got, want))
    assert not mismatches, mismatches[:10]


@pytest.mark.parametrize("op", ["+", "*", "-", "//", "<", "&"])
def test_numpy_scalar_on_the_left_is_computed_by_numpy(op):
    # numpy's operator runs first and converts the Tensor with __array__, as with
    # the reference: the result is a numpy array, not a Tensor.
    for d in DTYPES:
        for spelling in ["np.int64(1)", "np.uint8(1)", "np.float32(2.5)", "np.float64(2.5)"]:
            ref = PROMOTION["scalar_left"][op][d][spelling]
            try:
                result = BINARY[op](SCALARS[spelling], SAMPLES[d])
            except TypeError:
                assert ref.startswith("error: TypeError"), (d, spelling)
                continue
            # numpy's own rule for the scalar and the array (NEP 50 from numpy 2, which
            # the reference's results were recorded with; value-based before).
            assert isinstance(result, np.ndarray)
            assert result.dtype == BINARY[op](SCALARS[spelling], np.asarray(SAMPLES[d])).dtype
            if NUMPY_2:
                assert ref == f"not-a-Tensor: ndarray {result.dtype}", (d, spelling)


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (1, "int32"),
        (-(2**31), "int32"),
        (2**31 - 1, "int32"),
        (2**31, "uint32"),
        (2**32 - 1, "uint32"),
        (2.5, "float32"),
        (True, "bool"),
        (np.int64(1), "int64"),
        (np.uint16(1), "uint16"),
        (np.float64(1), "float64"),
    ],
)
def test_scalar_operand_type(value, want):
    # bool is the weakest type, so bool * x has the type of x.
    t = tensor([True, False], "bool")
    assert dtype_name((t * value).dtype) == want
    if not isinstance(value, np.generic):
        assert dtype_name((value * t).dtype) == want


@pytest.mark.parametrize("value", [2**32, -(2**31) - 1, -(2**40), 2**63 - 1])
def test_int_scalar_beyond_uint32_is_an_int64_operand(value):
    # The reference refuses anything outside int32; ndd takes the uint32 range, then int64.
    t = SAMPLES["int64"]
    got = t + value
    assert dtype_name(got.dtype) == "int64"
    np.testing.assert_array_equal(np.asarray(got), np.array([1, 2, 3], np.int64) + np.int64(value))
    np.testing.assert_array_equal(np.asarray(value - t), np.int64(value) - np.array([1, 2, 3], np.int64))
    assert dtype_name((SAMPLES["float64"] * value).dtype) == "float64"
    assert dtype_name((SAMPLES["int32"] + value).dtype) == "int64"


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**70])
def test_int_scalar_beyond_int64_overflows_naming_the_operator(value):
    for t in (SAMPLES["int64"], SAMPLES["float64"]):
        with pytest.raises(OverflowError, match=r"operator \+: the Python integer operand .* int64 range"):
            t + value
        with pytest.raises(OverflowError, match=r"operator -: "):
            value - t


def test_int_scalar_promotes_small_integer_tensors():
    u8 = tensor([250, 255], "uint8")
    # Not numpy's "weak" scalars: uint8 + 10 is int32 and does not wrap.
    assert_result(u8 + 10, [260, 265], "int32")
    assert_result(10 + u8, [260, 265], "int32")
    assert_result(u8 * -1, [-250, -255], "int32")
    assert_result(u8 + np.uint8(10), [4, 9], "uint8")
    assert_result(u8 + True, [251, 0], "uint8")
    assert_result(tensor([1, 2], "uint32") + 1, [2, 3], "int64")
    assert_result(tensor([1, 2], "int64") * 2.5, [2.5, 5.0], "float32")
    assert_result(tensor([1, 2], "float64") + 2.5, [3.5, 4.5], "float64")
    assert_result(tensor([True, False], "bool") & 1, [1, 0], "int32")
    assert_result(tensor([1, 2], "int32") + 3000000000, [3000000001, 3000000002], "int64")
    assert_result(3000000000 - tensor([1, 2], "uint32"), [2999999999, 2999999998], "uint32")


def test_scalars_on_both_sides_give_the_same_type():
    for d in DTYPES:
        for spelling in PYTHON_SCALARS:
            for op in ("+", "*", "<", "&"):
                left = prepared_outcome(BINARY[op], SCALARS[spelling], SAMPLES[d])
                right = prepared_outcome(BINARY[op], SAMPLES[d], SCALARS[spelling])
                assert left == right, (op, d, spelling)


def test_scalar_operands_of_non_commutative_operators_keep_their_side():
    t = tensor([2, -4, 8], "int32")
    assert_result(1 - t, [-1, 5, -7], "int32")
    assert_result(t - 1, [1, -5, 7], "int32")
    assert_result(1 / t, [0.5, -0.25, 0.125], "float32")
    assert_result(17 // t, [8, -5, 2], "int32")
    assert_result(17 % t, [1, -3, 1], "int32")
    assert_result(2**t, [4, 0, 256], "int32")
    assert_result(1 << tensor([0, 3], "int32"), [1, 8], "int32")
    assert_result(3 < t, [False, False, True], "bool")


def test_list_operands_are_converted_like_ndd_tensor():
    t = tensor([1, 2, 3], "int32")
    assert_result(t + [1, 2, 3], [2, 4, 6], "int32")
    assert_result([1, 2, 3] + t, [2, 4, 6], "int32")
    assert_result((10, 20, 30) - t, [9, 18, 27], "int32")
    assert_result(t + [1.5], [2.5, 3.5, 4.5], "float32")
    assert_result(t * [True], [1, 2, 3], "int32")
    assert_result(t + [[10], [20]], [[11, 12, 13], [21, 22, 23]], "int32")
    assert_result(t < [2, 2, 2], [True, False, False], "bool")


def test_numpy_array_operands_keep_their_dtype():
    t = tensor([1, 2, 3], "int32")
    assert_result(t + np.array([1.5]), [2.5, 3.5, 4.5], "float64")
    assert_result(t + np.array([1, 2, 3], np.uint8), [2, 4, 6], "int32")
    assert_result(t * np.array(2, np.int64), [2, 4, 6], "int64")
    # numpy on the left does the operation itself (Tensor.__array__), as with the reference.
    result = np.array([1.5, 2, 3]) + t
    assert type(result) is np.ndarray
    np.testing.assert_array_equal(result, [2.5, 4, 6])


@pytest.mark.parametrize("mode", MODES)
def test_numpy_operand_is_read_at_the_call(mode):
    # The caller may overwrite the buffer right after the call, in every mode.
    data = np.array([1, 2, 3], np.int32)
    with mode:
        result = tensor([10, 20, 30], "int32") + data
        data[:] = 1000
    assert_result(result, [11, 22, 33], "int32")


@pytest.mark.parametrize("operand", ["a", None, object(), [1, "a"], {"a": 1}])
def test_unsupported_operand_is_a_type_error(operand):
    with pytest.raises(TypeError, match=r"operator \+: unsupported operand"):
        SAMPLES["int32"] + operand
    with pytest.raises(TypeError, match=r"operator \*: unsupported operand"):
        operand * SAMPLES["int32"]


# ---------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------


def _left_values(d):
    if d == "bool":
        return [True, False, True, False, True, True]
    if d.startswith("uint"):
        return [0, 1, 7, 100, 2 ** bits(d) - 1, 2 ** (bits(d) - 1)]
    if d.startswith("int"):
        return [-7, 0, 7, -1, -(2 ** (bits(d) - 1)), 2 ** (bits(d) - 1) - 1]
    return [-7.5, 0.0, 7.5, -0.5, np.nan, 1000.0]


def _right_values(op, d):
    """Operands for the right side: integer divisors are never 0, shift counts are
    0..65 (beyond every bit width), exponents are small."""
    if d == "bool":
        return [True] * 6 if op in ("//", "%") else [True, True, False, True, False, True]
    signed = d.startswith("int")
    if op in ("<<", ">>"):
        return [0, 1, 3, 7, 31, 65]
    if op == "**":
        if d in FLOAT_DTYPES:
            return [0.5, 2.0, -1.0, 3.0, 0.0, 1.5]
        return [0, -1, 2, 3, -2, 9] if signed else [0, 1, 2, 3, 5, 9]
    if signed:
        return [2, -3, -2, 5, -1, 2 ** (bits(d) - 1) - 1]
    if d.startswith("uint"):
        return [3, 1, 2, 5, 2 ** bits(d) - 1, 128]
    return [2.0, -2.0, 0.5, -3.0, 7.0, np.inf]


def int_power(base, exponent):
    if exponent >= 0:
        return base**exponent
    # Reference: any negative exponent gives 0, even for base 1 or -1 (pow_int32_neg_exp).
    # ndd: the exact result truncated toward zero.
    if base == 1:
        return 1
    if base == -1:
        return -1 if exponent % 2 else 1
    return 0


PYTHON_INT_OPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": int_power,
    **BITWISE,
}
NUMPY_FLOAT_OPS = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.true_divide,
    "//": np.floor_divide,
    "%": np.mod,
    "**": np.power,
}


def wrap(values, dtype):
    """Python ints reduced modulo 2**bits into ``dtype`` (bool: nonzero is True)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([bool(v) for v in values])
    low, span = int(np.iinfo(dt).min), 2 ** (8 * dt.itemsize)
    return np.array([(v - low) % span + low for v in values], dtype=dt)


def expected_binary(op, a, b, out):
    """The value of ``a OP b`` for numpy arrays: comparisons exactly (Python compares
    ints and floats exactly), integer results with exact Python arithmetic wrapped
    to the result type, float results with numpy in the result type."""
    out = np.dtype(out)
    if op in COMPARISONS:
        return np.array(
            [COMPARISONS[op](x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)], dtype=bool
        )
    with np.errstate(all="ignore"):
        x, y = a.astype(out), b.astype(out)
        if out.kind in "iub":
            return wrap([PYTHON_INT_OPS[op](p, q) for p, q in zip(x.tolist(), y.tolist(), strict=True)], out)
        return NUMPY_FLOAT_OPS[op](x, y)


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_values_of_every_pair(op):
    fn = BINARY[op]
    mismatches = []
    for left in DTYPES:
        for right in DTYPES:
            want = expected_dtype(op, left, right)
            if want is TypeError:
                continue
            a = np.array(_left_values(left), dtype=left)
            b = np.array(_right_values(op, right), dtype=right)
            result = fn(ndd.tensor(a), ndd.tensor(b))
            data = np.asarray(result)
            expected = expected_binary(op, a, b, want)
            if data.dtype != want or not np.array_equal(data, expected, equal_nan=data.dtype.kind == "f"):
                mismatches.append((left, right, data.tolist(), expected.tolist()))
    assert not mismatches, mismatches[:5]


def expected_unary(op, a):
    if op == "+":
        return a
    if a.dtype.kind == "f":
        return {"-": np.negative, "abs": np.abs}[op](a)
    fn = {"-": operator.neg, "abs": abs, "~": operator.invert}[op]
    if a.dtype.kind == "b":
        return np.array([not v for v in a.tolist()])
    return wrap([fn(v) for v in a.tolist()], a.dtype)


@pytest.mark.parametrize(
    ("op", "d"),
    [
        (op, d)
        for op in UNARY
        for d in DTYPES
        # rejected: see test_unary_result_dtype
        if not (op in ("-", "abs") and d == "bool") and not (op == "~" and d in FLOAT_DTYPES)
    ],
)
def test_unary_values(op, d):
    a = np.array(_left_values(d), dtype=d)
    data = np.asarray(UNARY[op](ndd.tensor(a)))
    assert data.dtype == a.dtype
    np.testing.assert_array_equal(data, expected_unary(op, a))


def test_integer_overflow_wraps():
    assert_result(tensor([250, 255, 128], "uint8") + tensor([10, 1, 128], "uint8"), [4, 0, 0], "uint8")
    assert_result(tensor([0, 5], "uint8") - tensor([1, 10], "uint8"), [255, 251], "uint8")
    assert_result(tensor([2**31 - 1], "int32") + tensor([1], "int32"), [-(2**31)], "int32")
    assert_result(-tensor([-128, 127, 0], "int8"), [-128, -127, 0], "int8")
    assert_result(abs(tensor([-128, -1, 5], "int8")), [-128, 1, 5], "int8")
    assert_result(tensor([-1, 1], "int64") + tensor([2**64 - 1, 1], "uint64"), [-2, 2], "int64")


def test_floor_division_and_modulo_follow_python():
    # Reference: C semantics, -7 // 2 == -3 and -7 % 2 == -1 (floordiv_signs_*, mod_signs_*);
    # for floats '//' is true division (7.5 // 2.0 == 3.75) and '%' is fmod.
    left = [7, -7, 7, -7, 0, 1, -1, 6, -6]
    right = [2, 2, -2, -2, 3, -3, 3, -3, 4]
    for d in ["int8", "int16", "int32", "int64"]:
        assert_result(
            tensor(left, d) // tensor(right, d), [p // q for p, q in zip(left, right, strict=True)], d
        )
        assert_result(
            tensor(left, d) % tensor(right, d), [p % q for p, q in zip(left, right, strict=True)], d
        )
    fleft = [7.5, -7.5, 7.5, -7.5, 5.0, -5.0]
    fright = [2.0, 2.0, -2.0, -2.0, 0.5, 3.0]
    for d in FLOAT_DTYPES:
        assert_result(
            tensor(fleft, d) // tensor(fright, d), [p // q for p, q in zip(fleft, fright, strict=True)], d
        )
        assert_result(
            tensor(fleft, d) % tensor(fright, d), [p % q for p, q in zip(fleft, fright, strict=True)], d
        )
    assert_result(tensor([7, -7], "int32") // 2.5, [2.0, -3.0], "float32")
    assert_result(tensor([7, -7], "int32") % 2.5, [2.0, 0.5], "float32")
    assert_result(-7 // tensor([2, -2, 3], "int32"), [-4, 3, -3], "int32")
    assert_result(-7 % tensor([2, -2, 3], "int32"), [1, -1, 2], "int32")


def test_floor_division_of_the_minimum_by_minus_one_wraps():
    # Reference: SIGFPE (the process dies) for int32 and int64; MIN for int8/int16.
    for d in INT_DTYPES:
        if d.startswith("int"):
            low = -(2 ** (bits(d) - 1))
            assert_result(tensor([low], d) // tensor([-1], d), [low], d)
            assert_result(tensor([low], d) % tensor([-1], d), [0], d)


@pytest.mark.parametrize("d", INT_DTYPES)
@pytest.mark.parametrize(("op", "name"), [("//", "division"), ("%", "modulo")])
def test_integer_division_by_zero_raises(op, name, d):
    # Reference: ValueError 'Integer division by zero.' (raised even if one divisor is 0).
    fn = BINARY[op]
    with pytest.raises(ZeroDivisionError, match=rf"operator {op}: Integer {name} by zero"):
        fn(tensor([5, 6, 7], d), tensor([1, 0, 2], d))
    with pytest.raises(ZeroDivisionError, match=rf"operator {op}"):
        fn(tensor([5, 6], d), 0)
    with pytest.raises(ZeroDivisionError, match=rf"operator {op}"):
        fn(5, tensor([1, 0], d))
    with pytest.raises(ZeroDivisionError, match=rf"operator {op}"):
        fn(tensor([5, 6], d), False)


@pytest.mark.parametrize("d", FLOAT_DTYPES)
def test_float_division_by_zero_gives_inf_and_nan(d):
    a, z = tensor([5.0, -5.0, 0.0], d), tensor([0.0, 0.0, 0.0], d)
    assert_result(a / z, [np.inf, -np.inf, np.nan], d)
    assert_result(a // z, [np.inf, -np.inf, np.nan], d)
    assert_result(a % z, [np.nan, np.nan, np.nan], d)


def test_integer_true_division_by_zero():
    assert_result(
        tensor([5, -5, 0], "int32") / tensor([0, 0, 0], "int32"), [np.inf, -np.inf, np.nan], "float32"
    )
    assert_result(tensor([5, 0], "int32") / 0, [np.inf, np.nan], "float32")


def test_integer_power():
    base = [2, 2, -2, 3, 0, 1, -1, 2, 0]
    exponent = [3, 0, 3, 2, 0, 5, 3, 31, 5]
    assert_result(
        tensor(base, "int32") ** tensor(exponent, "int32"), [8, 1, -8, 9, 1, 1, -1, -(2**31), 0], "int32"
    )
    assert_result(tensor([2, 3, 16], "uint8") ** tensor([8, 5, 2], "uint8"), [0, 243, 0], "uint8")
    assert_result(tensor([2, -2, 3], "int8") ** tensor([7, 7, 5], "int8"), [-128, -128, -13], "int8")
    assert_result(tensor([4, 2], "int32") ** 0.5, [2.0, np.sqrt(np.float32(2))], "float32")


def test_integer_power_with_negative_exponent_is_truncated_exactly():
    # Reference: 0 for every negative exponent, even 1 ** -2 and (-1) ** -1 (pow_int32_neg_exp).
    base = [2, 1, -1, -1, 2, 0, 4, 1]
    exponent = [-1, -2, -1, -2, -2, -1, -1, -(2**31)]
    for d in ["int8", "int16", "int32", "int64"]:
        exp = [max(e, -(2 ** (bits(d) - 1))) for e in exponent]
        assert_result(tensor(base, d) ** tensor(exp, d), [0, 1, -1, 1, 0, 0, 0, 1], d)
    assert_result(tensor([1, 2, -1, 0], "int32") ** -1, [1, 0, -1, 0], "int32")
    # uint8 ** int8 is computed in int16.
    assert_result(tensor([2, 1, 255], "uint8") ** tensor([-1, -3, -1], "int8"), [0, 1, 0], "int16")


def test_float_power_follows_c_pow():
    assert_result(
        tensor([2.0, -8.0, 0.0, -2.0], "float32") ** tensor([-1.0, 1 / 3, -1.0, 0.5], "float32"),
        [0.5, np.nan, np.inf, np.nan],
        "float32",
    )


def test_shifts():
    assert_result(
        tensor([1, 1, 1, 1, 255], "uint8") << tensor([0, 7, 8, 9, 1], "uint8"), [1, 128, 0, 0, 254], "uint8"
    )
    assert_result(tensor([-128, -1, 64, 64], "int8") >> tensor([1, 7, 8, 9], "int8"), [-64, -1, 0, 0], "int8")
    assert_result(tensor([1, 3], "uint8") << 9, [512, 1536], "int32")
    a, b = tensor([True, True, False, False], "bool"), tensor([True, False, True, False], "bool")
    assert_result(a << b, [True, True, False, False], "bool")
    assert_result(a >> b, [False, True, False, False], "bool")


def test_shift_counts_beyond_the_width_give_the_exact_result():
    # Reference: for 32/64-bit operands the count is taken modulo the width
    # (int32 1 << 32 == 1, 3 << 40 == 768, 8 >> 32 == 8, int64 1 << 64 == 1).
    assert_result(
        tensor([1, 1, 1, 1, -1, 3], "int32") << tensor([0, 31, 32, 33, 1, 40], "int32"),
        [1, -(2**31), 0, 0, -2, 0],
        "int32",
    )
    assert_result(
        tensor([-8, -8, 8, -1, 2**30, -8], "int32") >> tensor([1, 31, 32, 40, 33, 0], "int32"),
        [-4, -1, 0, -1, 0, -8],
        "int32",
    )
    assert_result(tensor([1, 1, 1], "int64") << tensor([63, 64, 65], "int64"), [-(2**63), 0, 0], "int64")


@pytest.mark.parametrize("op", ["<<", ">>"])
def test_negative_shift_count_is_an_error(op):
    # Reference: 8 << -1 == 8 >> -1 == 0 (lshift_int32_negshift); Python raises ValueError.
    with pytest.raises(ValueError, match=rf"operator {op}: negative shift count"):
        BINARY[op](tensor([8, 8], "int32"), tensor([1, -2], "int32"))
    with pytest.raises(ValueError, match="negative shift count"):
        BINARY[op](tensor([8, 8], "uint8"), -1)


def test_bool_operators_are_logical():
    a, b = tensor([True, True, False, False], "bool"), tensor([True, False, True, False], "bool")
    assert_result(a & b, [True, False, False, False], "bool")
    assert_result(a | b, [True, True, True, False], "bool")
    assert_result(a ^ b, [False, True, True, False], "bool")
    assert_result(a * b, [True, False, False, False], "bool")
    assert_result(~a, [False, False, True, True], "bool")
    assert_result(a < b, [False, False, True, False], "bool")
    assert_result(a & True, [True, True, False, False], "bool")


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (tensor([-1, 127, 0], "int8"), tensor([255, 127, 0], "uint8")),
        (tensor([-1, 1, 0], "int32"), tensor([4294967295, 1, 0], "uint32")),
        (tensor([-1, 1, 0], "int64"), tensor([2**64 - 1, 1, 0], "uint64")),
        (tensor([-(2**63), -1, 2**63 - 1], "int64"), tensor([2**63, 2**64 - 1, 2**63], "uint64")),
        (tensor([-1, 5, 0], "int16"), tensor([4294967295, 5, 0], "uint32")),
    ],
)
@pytest.mark.parametrize("op", list(COMPARISONS))
def test_signed_unsigned_comparisons_are_exact(left, right, op):
    # As the reference, although int64 + uint64 is computed (and wraps) in int64.
    a, b = np.asarray(left).tolist(), np.asarray(right).tolist()
    assert_result(
        COMPARISONS[op](left, right), [COMPARISONS[op](x, y) for x, y in zip(a, b, strict=True)], "bool"
    )
    assert_result(
        COMPARISONS[op](right, left), [COMPARISONS[op](y, x) for x, y in zip(a, b, strict=True)], "bool"
    )


def test_comparisons_with_out_of_range_scalars():
    u8 = tensor([44, 255, 0], "uint8")
    assert_result(u8 == 300, [False, False, False], "bool")
    assert_result(u8 < -1, [False, False, False], "bool")
    assert_result(u8 > 3000000000, [False, False, False], "bool")
    assert_result(tensor([2, 3], "int32") < 2.5, [True, False], "bool")


def test_comparison_of_int_and_float_is_done_as_numpy_does():
    # Reference: uint64 vs float32 compares in float32, so uint64(16777217) == float32(16777216)
    # (cmp_eq_uint64_float32). numpy (and ndd) compare in float64, where they differ.
    big = tensor([2**64 - 1, 16777217], "uint64")
    f = tensor([1.8446744e19, 16777216.0], "float32")
    assert_result(big == f, [True, False], "bool")
    assert_result(big > f, [False, True], "bool")
    assert_result(tensor([16777217], "int32") == tensor([16777216.0], "float32"), [False], "bool")


def test_nan_comparisons():
    a = tensor([np.nan, 1.0], "float32")
    assert_result(a == a, [False, True], "bool")
    assert_result(a != a, [True, False], "bool")
    assert_result(a < np.inf, [False, True], "bool")


def test_zero_dimensional_operands():
    assert_result(ndd.tensor(3) + ndd.tensor(4), 7, "int32")
    assert_result(ndd.tensor(3) + 1, 4, "int32")
    assert_result(-ndd.tensor(2.5), -2.5, "float32")
    assert_result(ndd.tensor(3) < 4, True, "bool")
    assert_result(ndd.tensor(3) ** 2, 9, "int32")
    assert_result(tensor(1, "uint8") + tensor([1, 2], "int32"), [2, 3], "int32")
    assert_result(tensor(1.5, "float64") + tensor([1, 2], "float32"), [2.5, 3.5], "float64")


def test_float16_arithmetic():
    # Reference: RuntimeError 'Left operand data type not supported, DALIDataType: float16'.
    h = tensor([1.5, -2.0, 60000.0], "float16")
    assert_result(h + h, [3.0, -4.0, np.inf], "float16")
    assert_result(h * tensor([2, 2, 2], "int64"), [3.0, -4.0, np.inf], "float16")
    assert_result(h + 2.5, [4.0, 0.5, 60002.5], "float32")
    assert_result(-h, [-1.5, 2.0, -60000.0], "float16")
    assert_result(h < 0, [False, True, False], "bool")
    assert_result(h + 70000, [np.inf, np.inf, np.inf], "float16")  # int32 70000 does not fit


# ---------------------------------------------------------------------------
# recorded reference values
# ---------------------------------------------------------------------------

# Cases where ndd deliberately differs from the reference: ndd's result (values and
# dtype) or exception; the reference's is in arith_values.json.
DIVERGENT = {
    # '//' and '%' floor (Python/numpy); the reference truncates, and its float '//' is true division.
    **{
        f"floordiv_signs_{d}": ([3, -4, -4, 3, 0, -1, -1, -2, -2], d)
        for d in ("int8", "int16", "int32", "int64")
    },
    **{f"mod_signs_{d}": ([1, 1, -1, -1, 0, -2, 2, 0, 2], d) for d in ("int8", "int16", "int32", "int64")},
    "floordiv_int8_uint8": ([-4, 3, -1], "int16"),
    "mod_int8_uint8": ([1, 1, 72], "int16"),
    "floordiv_int32_scalar_neg": ([-4, 3, 0, -1], "int32"),
    "mod_int32_scalar_neg": ([-1, -1, 0, -1], "int32"),
    "rfloordiv_int32_scalar": ([-4, 3, -3], "int32"),
    "rmod_int32_scalar": ([1, -1, 2], "int32"),
    "floordiv_int32_float_scalar": ([2.0, -3.0], "float32"),
    "mod_int32_float_scalar": ([2.0, 0.5], "float32"),
    "floordiv_float32": ([3.0, -4.0, -4.0, 3.0, 10.0, -2.0], "float32"),
    "mod_float32": ([1.5, 0.5, -0.5, -1.5, 0.0, 1.0], "float32"),
    "floordiv_float64": ([3.0, -4.0, -4.0, 3.0, 10.0, -2.0], "float64"),
    "mod_float64": ([1.5, 0.5, -0.5, -1.5, 0.0, 1.0], "float64"),
    # The reference raises ValueError 'Integer division by zero.'; Python's exception type.
    **{
        name: ZeroDivisionError
        for name in VALUE_CASES
        if name.startswith(("div0_floordiv_int", "div0_floordiv_uint", "div0_mod_int", "div0_mod_uint"))
    },
    # INT_MIN // -1: the reference process dies with SIGFPE; ndd wraps like any overflow.
    "floordiv_int32_min_by_minus1": ([-(2**31)], "int32"),
    "mod_int32_min_by_minus1": ([0], "int32"),
    "floordiv_int64_min_by_minus1": ([-(2**63)], "int64"),
    # Negative integer exponents: the reference gives 0 even for bases 1 and -1.
    "pow_int32_neg_exp": ([0, 1, -1, 1, 0, 0, 0], "int32"),
    "pow_int32_scalar_neg_exp": ([1, 0, -1, 0], "int32"),
    # Shift counts: the reference takes 32/64-bit counts modulo the width and gives 0
    # for negative counts; ndd gives the exact result and raises for negative counts.
    "lshift_int32": ([1, -(2**31), 0, 0, -2, 0], "int32"),
    "rshift_int32": ([-4, -1, 0, -1, 0, -8], "int32"),
    "lshift_int64": ([-(2**63), 0, 0], "int64"),
    "lshift_int32_negshift": ValueError,
    "rshift_int32_negshift": ValueError,
    # numpy compares uint64 with float32 in float64; the reference in float32.
    "cmp_lt_uint64_float32": ([False, False], "bool"),
    "cmp_eq_uint64_float32": ([True, False], "bool"),
    "cmp_gt_uint64_float32": ([False, True], "bool"),
}

ARITHMETIC_CASES = [
    n for n in VALUE_CASES if "expr" in VALUE_CASES[n] and not n.startswith(("cast_", "math_"))
]
test_reference_value_case, test_divergences_refer_to_recorded_cases = value_case_tests(
    ARITHMETIC_CASES, DIVERGENT
)


# ---------------------------------------------------------------------------
# broadcasting, layouts, batches
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "out_shape"),
    [
        ((2, 3), (3,), (2, 3)),
        ((2, 3), (2, 1), (2, 3)),
        ((2, 1), (1, 3), (2, 3)),
        ((), (2, 3), (2, 3)),
        ((2, 3), (), (2, 3)),
        ((3,), (2, 1, 1), (2, 1, 3)),
        ((0,), (1,), (0,)),
        ((4, 0, 2), (1, 2), (4, 0, 2)),
    ],
)
def test_broadcasting(a_shape, b_shape, out_shape):
    a = np.arange(int(np.prod(a_shape)), dtype=np.int32).reshape(a_shape)
    # Scaled before the reshape: numpy 1.x makes a 0-d array times 10 an int64 scalar.
    b = (np.arange(int(np.prod(b_shape)), dtype=np.int16) * 10).reshape(b_shape)
    with ndd.EvalMode.deferred:
        result = ndd.tensor(a) + ndd.tensor(b)
        assert result.shape == out_shape  # known before anything runs
    assert_result(result, a + b, "int32", out_shape)
    assert_result(ndd.tensor(b) - ndd.tensor(a), b - a, "int32", out_shape)


@pytest.mark.parametrize(("a_shape", "b_shape"), [((2, 3), (2,)), ((2, 3), (4, 3)), ((0,), (2,))])
def test_broadcast_mismatch(a_shape, b_shape):
    # Reference: RuntimeError "Can't broadcast shapes: 2 x 3 (d=1, ...) 2 (d=0, ...)".
    a, b = ndd.tensor(np.zeros(a_shape, np.int32)), ndd.tensor(np.zeros(b_shape, np.int32))
    with pytest.raises(ValueError, match="broadcast"):
        a + b
    with pytest.raises(ValueError, match="broadcast"):
        operator.lt(b, a)


def test_broadcast_mismatch_of_batches_names_the_sample_where_it_differs():
    # Uniform batches fail in every sample: no index (it named a garbage one,
    # "sample 94270146893360"); ragged ones name the first sample that fails.
    uniform = ndd.batch([np.zeros(7)] * 2), ndd.batch([np.zeros((2, 3))] * 2)
    with pytest.raises(ValueError, match=r"broadcast shapes \(7,\) and \(2, 3\)$"):
        uniform[0] + uniform[1]
    ragged = ndd.batch([np.zeros(3), np.zeros(7)]), ndd.batch([np.zeros((2, 3))] * 2)
    with pytest.raises(ValueError, match=r"broadcast shapes \(7,\) and \(2, 3\) \(sample 1\)$"):
        ragged[0] + ragged[1]


@pytest.mark.parametrize(
    ("operands", "layout"),
    [
        ((("HW", (2, 3)), (None, (3,))), "HW"),
        (((None, (3,)), ("HW", (2, 3))), "HW"),
        ((("HW", (2, 3)), (None, ())), "HW"),
        ((("HW", (2, 3)), ("HW", (2, 3))), "HW"),
        ((("HW", (2, 3)), ("W", (3,))), "HW"),
        ((("W", (3,)), ("HW", (2, 1))), "HW"),
        ((("HW", (2, 3)), (None, (1, 1, 1))), None),  # the result has more dimensions
        ((("X", (3,)), (None, (2, 3))), None),
        (((None, (2, 3)), (None, (2, 3))), None),
    ],
)
def test_result_layout(operands, layout):
    # The layout of the operand with the most dimensions, dropped when the result has
    # more dimensions than it (checked against the reference).
    tensors = [ndd.tensor(np.ones(shape, np.int32), layout=lay) for lay, shape in operands]
    assert (tensors[0] + tensors[1]).layout == layout
    assert (tensors[0] < tensors[1]).layout == layout


def test_unary_and_scalar_results_keep_the_layout():
    t = ndd.tensor(np.ones((2, 3), np.int32), layout="HW")
    assert (-t).layout == "HW"
    assert (~t).layout == "HW"
    assert abs(t).layout == "HW"
    assert (t * 2.5).layout == "HW"
    assert (1 - t).layout == "HW"


@pytest.mark.parametrize(("a", "b"), [("HW", "WC"), ("X", "HW")])
def test_incompatible_layouts_are_rejected(a, b):
    # Reference: RuntimeError 'Layouts of subexpressions 0 and 1 for arithmetic operation add
    # do not match. They must be equal or one must be a suffix of the other. Got HW and WC.'
    x = ndd.tensor(np.ones((2, 3)[-len(a) :], np.int32), layout=a)
    y = ndd.tensor(np.ones((2, 3)[-len(b) :], np.int32), layout=b)
    with pytest.raises(ValueError, match="layout"):
        x + y


def ragged_batch(dtype="int32", layout="HW"):
    samples = [np.arange(6).reshape(2, 3), np.arange(3).reshape(1, 3) - 5, np.zeros((0, 3))]
    return ndd.batch([s.astype(dtype) for s in samples], layout=layout)


def assert_batch(result, expected_samples, dtype, layout=None):
    assert isinstance(result, ndd.Batch)
    assert result.batch_size == len(expected_samples)
    assert dtype_name(result.dtype) == dtype
    assert result.layout == layout
    assert result.shape == [np.shape(e) for e in expected_samples]
    for sample, expected in zip(result, expected_samples, strict=True):
        assert_result(sample, expected, dtype)


def test_batch_op_batch():
    a, b = ragged_batch(), ragged_batch("int16")
    expected = [x * 2 - y for x, y in zip(sample_arrays(a), sample_arrays(b), strict=True)]
    assert_batch(a * 2 - b, expected, "int32", "HW")
    assert_batch(
        a < b, [x < y for x, y in zip(sample_arrays(a), sample_arrays(b), strict=True)], "bool", "HW"
    )


def test_batch_op_batch_broadcasts_per_sample():
    a = ndd.batch([np.ones((2, 3), np.int32), np.arange(4, dtype=np.int32).reshape(4, 1)])
    b = ndd.batch([np.array([1, 2, 3], np.int32), np.arange(5, dtype=np.int32)])
    assert_batch(a + b, [np.ones((2, 3)) + [1, 2, 3], np.arange(4).reshape(4, 1) + np.arange(5)], "int32")
    c = ndd.batch([np.ones((2,), np.int32), np.ones((5,), np.int32)])
    with pytest.raises(ValueError, match="broadcast"):
        a + c


def test_batch_size_mismatch():
    a = ndd.batch([np.ones(3, np.int32)] * 2)
    b = ndd.batch([np.ones(3, np.int32)] * 3)
    with pytest.raises(ValueError, match="Inconsistent batch size"):
        a + b
    with pytest.raises(ValueError, match=r"operator <: Inconsistent batch size: 3 != 2"):
        operator.lt(a, b)


def test_batch_op_tensor_broadcasts_the_tensor_to_every_sample():
    a = ragged_batch()
    t = tensor([10, 20, 30], "int64")
    assert_batch(a + t, [s + [10, 20, 30] for s in sample_arrays(a)], "int64", "HW")
    assert_batch(t - a, [[10, 20, 30] - s for s in sample_arrays(a)], "int64", "HW")
    with pytest.raises(ValueError, match="broadcast"):
        a + tensor([1, 2], "int32")


def test_batch_op_scalar_and_list():
    a = ragged_batch("uint8")
    assert_batch(a + 1, [s.astype(np.int32) + 1 for s in sample_arrays(a)], "int32", "HW")
    assert_batch(2.5 * a, [2.5 * s.astype(np.float32) for s in sample_arrays(a)], "float32", "HW")
    assert_batch(a & True, [s & 1 for s in sample_arrays(a)], "uint8", "HW")
    assert_batch(a * [1, 0, 2], [s.astype(np.int32) * [1, 0, 2] for s in sample_arrays(a)], "int32", "HW")
    assert_batch(-ragged_batch("int8"), [-s for s in sample_arrays(ragged_batch("int8"))], "int8", "HW")


def test_batch_errors_of_one_sample():
    a = ndd.batch([np.array([1, 2], np.int32), np.array([3, 4], np.int32)])
    b = ndd.batch([np.array([1, 1], np.int32), np.array([1, 0], np.int32)])
    with pytest.raises(ZeroDivisionError, match="operator //"):
        a // b


def test_batch_of_one_and_empty_samples():
    a = ndd.batch([np.zeros((0,), np.float32)])
    assert_batch(a + 1, [np.zeros((0,), np.float32)], "float32")


# ---------------------------------------------------------------------------
# evaluation modes and run-time errors
# ---------------------------------------------------------------------------


def _expressions():
    i = tensor([[7, -7, 3], [0, 100, -128]], "int8")
    u = tensor([3, 250, 7], "uint8")
    f = tensor([[1.5, -2.0, np.nan]], "float32")
    b = ragged_batch()
    chain = (i + u) * 2 - 1
    return [
        chain,
        chain // 3,
        chain % -3,
        u**2,
        -i,
        ~u,
        abs(i),
        i < u,
        f / u,
        f // 0.5,
        f * 2 + i,
        u << tensor([1, 2, 9], "int32"),
        b * b - 1,
        b // 2 + u,
        (b < 3) & (b > -3),
        1 - b,
    ]


def materialise(result):
    """(dtype, layout, data) of each sample (a Tensor is one sample)."""
    tensors = list(result) if isinstance(result, ndd.Batch) else [result]
    return [(t.dtype, t.layout, np.asarray(t)) for t in tensors]


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_gives_the_same_results(mode):
    expected = [materialise(r) for r in _expressions()]
    with mode:
        results = _expressions()
    for result, want in zip(results, expected, strict=True):
        got = materialise(result)
        assert [(dt, layout) for dt, layout, _ in got] == [(dt, layout) for dt, layout, _ in want]
        for (_, _, data), (_, _, want_data) in zip(got, want, strict=True):
            np.testing.assert_array_equal(data, want_data)


def test_bitwise_operator_on_float_is_a_type_error_naming_it():
    # Reference: RuntimeError 'Inputs to bitwise operator `&` must be of integral type.'
    f, i = tensor([1.0], "float32"), tensor([1], "int32")
    for op, fn in BITWISE.items():
        with pytest.raises(TypeError, match=re.escape(f"operator {op}: operands must be integers")):
            fn(f, i)
        with pytest.raises(TypeError, match="integers"):
            fn(i, f)
        with pytest.raises(TypeError, match="integers"):
            fn(i, 1.5)
    with pytest.raises(TypeError, match="operator ~"):
        operator.invert(f)


def test_type_errors_are_raised_at_the_call_in_every_mode():
    for mode in MODES:
        with mode, pytest.raises(TypeError, match="operator &"):
            tensor([1.0], "float64") & 1


@pytest.mark.parametrize(
    ("mode", "when"),
    [(ndd.EvalMode.eager, "asynchronous execution"), (ndd.EvalMode.deferred, "deferred evaluation")],
)
def test_run_error_surfaces_on_evaluate(mode, when):
    with mode:
        result = tensor([1, 2], "int32") // 0
        line = sys._getframe().f_lineno - 1
        assert result.shape == (2,)  # the call itself succeeded
    with pytest.raises(ZeroDivisionError) as info:
        result.evaluate()
    message = str(info.value)
    assert f"An error happened during {when}" in message
    assert "operator //" in message
    assert f"test_arithmetic.py:{line}" in message
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert "Integer division by zero" in str(info.value.__cause__)


def test_run_error_of_a_batch_surfaces_when_its_data_is_used():
    with ndd.EvalMode.eager:
        result = ragged_batch() % ndd.batch([np.array(1), np.array(0), np.array(2)])
        line = sys._getframe().f_lineno - 1
    with pytest.raises(
        ZeroDivisionError, match=rf"asynchronous execution.*operator %.*test_arithmetic.py:{line}"
    ):
        np.asarray(result.tensors[0])


@pytest.mark.parametrize("mode", [ndd.EvalMode.sync_cpu, ndd.EvalMode.sync_full])
def test_run_error_in_sync_mode_raises_at_the_call(mode):
    with mode:
        with pytest.raises(ZeroDivisionError, match="operator //: Integer division by zero") as info:
            tensor([1, 2], "int32") // 0
        assert isinstance(info.value.__cause__, ZeroDivisionError)
        with pytest.raises(ZeroDivisionError, match="operator %"):
            ragged_batch() % 0


@pytest.mark.parametrize("float_type", ["float32", "float64"])
@pytest.mark.parametrize("int_type", ["int8", "int16", "int32", "int64"])
@pytest.mark.parametrize(
    "compare", [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
)
def test_a_float_compared_with_a_signed_integer_compares_the_values(float_type, int_type, compare):
    # The reference's < and >= get these wrong ([-7.5, -3.25] < -3 is False there).
    x = np.array([-7.5, -3.25, -3.0, 0.0, 2.5, 1.0], float_type)
    k = np.array([-3, -2, -3, 1, 1, 1], int_type)
    assert_result(compare(tensor(x, float_type), tensor(k, int_type)), compare(x, k), "bool")
    assert_result(compare(tensor(x, float_type), -3), compare(x, -3), "bool")
    assert_result(compare(tensor(k, int_type), tensor(x, float_type)), compare(k, x), "bool")
