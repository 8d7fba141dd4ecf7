"""``ndd.math``: the 29 elementwise functions.

Result types against the reference's table (``tests/golden/arith_promotion.json``),
values against numpy computed in float64 and the recorded reference values
(``arith_values.json``/``.npz``, described in ``tests/golden/ARITH_NOTES.md``).
The helpers are shared with ``test_arithmetic.py``; ``golden_cases.py`` reads the goldens.
"""

import numpy as np
import pytest
from arrays import assert_result, dtype_name, sample_arrays
from golden_cases import PROMOTION, VALUE_CASES, value_case_tests
from test_arithmetic import (
    DTYPES,
    FLOAT_DTYPES,
    MODES,
    SAMPLES,
    SCALAR_DTYPE,
    SCALARS,
    assert_batch,
    bits,
    expected_dtype,
    int_power,
    materialise,
    outcome,
    prepared_outcome,
    ragged_batch,
    tensor,
    wrap,
)

import ndd

FLOAT_FUNCTIONS = {
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
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
UNARY = [*FLOAT_FUNCTIONS, "abs"]
BINARY = ["min", "max", "pow", "fpow", "atan2"]


@pytest.fixture(autouse=True)
def _sync_cpu():
    with ndd.EvalMode.sync_cpu:
        yield


def test_the_29_functions():
    assert sorted(ndd.math.__all__) == sorted([*UNARY, *BINARY, "clamp"])
    assert len(ndd.math.__all__) == 29
    for name in ndd.math.__all__:
        assert callable(getattr(ndd.math, name))
        assert getattr(ndd.math, name).__doc__


# ---------------------------------------------------------------------------
# result types
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", UNARY)
def test_unary_result_dtype(name):
    fn = getattr(ndd.math, name)
    mismatches = []
    for d in DTYPES:
        ref = PROMOTION["unary"][f"math.{name}"][d]
        if not ref.startswith("error"):
            want = ref
        elif d == "float16":
            want = "float16"  # Reference: RuntimeError 'Unsupported type: float16'.
        else:
            assert "cannot be a boolean" in ref
            want = TypeError
        got = outcome(fn, SAMPLES[d])
        if got != want:
            mismatches.append((d, got, want))
    assert not mismatches


@pytest.mark.parametrize("name", BINARY)
def test_binary_result_dtype_of_every_pair(name):
    fn = getattr(ndd.math, name)
    mismatches = [
        (left, right, got, want)
        for left in DTYPES
        for right in DTYPES
        if (got := outcome(fn, SAMPLES[left], SAMPLES[right]))
        != (want := expected_dtype(f"math.{name}", left, right))
    ]
    assert not mismatches, mismatches[:10]


@pytest.mark.parametrize("name", BINARY)
def test_scalar_operands_on_either_side(name):
    # Unlike the operators, numpy scalars on the left follow the same rule (numpy is not involved).
    fn = getattr(ndd.math, name)
    mismatches = []
    for d in DTYPES:
        for spelling, value in SCALARS.items():
            for side, operands, pair in [
                ("scalar_right", (SAMPLES[d], value), (d, SCALAR_DTYPE[spelling])),
                ("scalar_left", (value, SAMPLES[d]), (SCALAR_DTYPE[spelling], d)),
            ]:
                want = expected_dtype(f"math.{name}", *pair)
                ref = PROMOTION[side][f"math.{name}"][d][spelling]
                if not ref.startswith("error"):
                    assert ref == want, (side, d, spelling)
                got = prepared_outcome(fn, *operands)
                if got != want:
                    mismatches.append((side, d, spelling, got, want))
    assert not mismatches, mismatches[:10]


@pytest.mark.parametrize(("kind", "lo", "hi"), [("int", 0, 2), ("float", 0.5, 2.5)])
def test_clamp_result_dtype(kind, lo, hi):
    for d in DTYPES:
        ref = PROMOTION["clamp"][kind][d]
        if d == "float16":
            # Reference: 'Left operand data type not supported'; the rule over the three operands.
            want = "float16" if kind == "int" else "float32"
        else:
            want = ref
        assert outcome(ndd.math.clamp, SAMPLES[d], lo, hi) == want, d


def test_clamp_of_three_bools_is_rejected():
    with pytest.raises(TypeError, match="ndd.math.clamp: operands cannot all be bool"):
        ndd.math.clamp(SAMPLES["bool"], True, False)


@pytest.mark.parametrize("name", [*UNARY, *BINARY])
def test_bool_operands_are_rejected(name):
    # Reference: RuntimeError 'Input to arithmetic operator `sqrt` cannot be a boolean'.
    operands = [SAMPLES["bool"]] * (2 if name in BINARY else 1)
    with pytest.raises(TypeError, match=f"ndd.math.{name}: operands cannot all be bool"):
        getattr(ndd.math, name)(*operands)


# ---------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------


def _inputs(d):
    if d == "bool":
        return [True, False, True, False, True]
    if d in FLOAT_DTYPES:
        return [-2.0, -0.75, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 3.0, np.inf, -np.inf, np.nan]
    if d.startswith("uint"):
        return [0, 1, 2, 9, 2 ** bits(d) - 1]
    return [-3, -1, 0, 1, 2, 9, 2 ** (bits(d) - 1) - 1, -(2 ** (bits(d) - 1))]


def _rtol(d):
    # numpy's float32/float16 functions are accurate to a few ulp of the float64 result.
    return {"float16": 1e-3, "float32": 1e-6, "float64": 1e-14}[d]


@pytest.mark.parametrize("d", [d for d in DTYPES if d != "bool"])  # bool: test_bool_operands_are_rejected
@pytest.mark.parametrize("name", list(FLOAT_FUNCTIONS))
def test_float_function_values(name, d):
    a = np.array(_inputs(d), dtype=d)
    out = d if d in FLOAT_DTYPES else "float32"
    result = getattr(ndd.math, name)(ndd.tensor(a))
    with np.errstate(all="ignore"):
        # The input is converted to the result type first (int32 2**31 - 1 becomes 2**31).
        expected = FLOAT_FUNCTIONS[name](a.astype(out).astype(np.float64)).astype(out)
    data = np.asarray(result)
    assert data.dtype == out == dtype_name(result.dtype)
    np.testing.assert_allclose(data, expected, rtol=_rtol(out), atol=0)
    # Signs of zeros and infinities are exact.
    np.testing.assert_array_equal(np.signbit(data[data == 0]), np.signbit(expected[data == 0]))


def test_rsqrt_of_zero_and_infinity():
    # Reference: rsqrt(0), rsqrt(-0.0) and rsqrt(inf) are all nan (math_rsqrt_float32_edges).
    assert_result(
        ndd.math.rsqrt(tensor([0.0, -0.0, np.inf, 4.0], "float32")), [np.inf, -np.inf, 0.0, 0.5], "float32"
    )
    assert_result(ndd.math.rsqrt(tensor([0, 4], "int32")), [np.inf, 0.5], "float32")


def test_float_function_edge_values():
    # numpy's float32 cbrt is within 2 ulp, not exact: cbrt(27) is 2.9999998 (the reference: 3).
    np.testing.assert_allclose(np.asarray(ndd.math.cbrt(tensor([-8, 27], "int32"))), [-2.0, 3.0], rtol=3e-7)
    assert_result(
        ndd.math.sqrt(tensor([4, 2, -1], "int32")), [2.0, np.sqrt(np.float32(2)), np.nan], "float32"
    )
    assert np.signbit(np.asarray(ndd.math.sqrt(tensor([-0.0], "float32"))))[0]
    assert_result(ndd.math.floor(tensor([-3, 3], "int32")), [-3.0, 3.0], "float32")
    assert_result(ndd.math.ceil(tensor([-1.5, -0.5, 0.5, 2.5], "float64")), [-1.0, -0.0, 1.0, 3.0], "float64")
    assert_result(ndd.math.fabs(tensor([-3, 3], "int8")), [3.0, 3.0], "float32")
    assert_result(ndd.math.log(tensor([0.0, -1.0], "float16")), [-np.inf, np.nan], "float16")


@pytest.mark.parametrize("d", [d for d in DTYPES if d != "bool"])
def test_abs_keeps_the_type(d):
    a = np.array(_inputs(d), dtype=d)
    if d in FLOAT_DTYPES:
        expected = np.abs(a)
    else:
        expected = wrap([abs(v) for v in a.tolist()], d)  # abs(MIN) wraps to MIN
    assert_result(ndd.math.abs(ndd.tensor(a)), expected, d)
    assert_result(abs(ndd.tensor(a)), expected, d)


def _binary_operands(name, left, right):
    a = np.array(_inputs(left), dtype=left)
    b_values = _inputs(right)
    if name in ("pow", "fpow") and right.startswith(("int", "uint")):
        b_values = [0, 1, 2, 3, 5] if right.startswith("uint") else [0, 1, 2, 3, -1, -2, 5, 9]
    b = np.array(b_values, dtype=right)
    n = min(len(a), len(b))
    return a[:n], b[:n]


def _minmax(pick):
    def fn(x, y):
        # NaN propagates, as np.minimum/np.maximum. Reference: 'a if a < b else b'
        # (math_max_float_nan: max(nan, 1) == 1 but max(1, nan) == nan).
        if x != x or y != y:
            return np.nan
        return pick(x, y)

    return fn


PYTHON_BINARY = {"min": _minmax(min), "max": _minmax(max), "pow": int_power}


def expected_binary(name, a, b, out):
    out = np.dtype(out)
    with np.errstate(all="ignore"):
        x, y = a.astype(out), b.astype(out)
        if name == "atan2":
            return np.arctan2(x.astype(np.float64), y.astype(np.float64)).astype(out)
        if name == "fpow" or (name == "pow" and out.kind == "f"):
            return np.power(x, y)
        values = [PYTHON_BINARY[name](p, q) for p, q in zip(x.tolist(), y.tolist(), strict=True)]
    return wrap(values, out) if out.kind in "iu" else np.array(values, dtype=out)


@pytest.mark.parametrize("name", BINARY)
def test_binary_values_of_every_pair(name):
    fn = getattr(ndd.math, name)
    mismatches = []
    for left in DTYPES:
        for right in DTYPES:
            want = expected_dtype(f"math.{name}", left, right)
            if want is TypeError:
                continue
            a, b = _binary_operands(name, left, right)
            data = np.asarray(fn(ndd.tensor(a), ndd.tensor(b)))
            expected = expected_binary(name, a, b, want)
            ok = data.dtype == want and (
                np.allclose(data, expected, rtol=_rtol(want), atol=0, equal_nan=True)
                if data.dtype.kind == "f"
                else np.array_equal(data, expected)
            )
            if not ok:
                mismatches.append((left, right, data.tolist(), expected.tolist()))
    assert not mismatches, mismatches[:5]


def test_bool_operand_with_a_number():
    t = tensor([True, False], "bool")
    assert_result(ndd.math.max(t, tensor([0, 0], "uint8")), [1, 0], "uint8")
    assert_result(ndd.math.pow(tensor([2, 2], "int16"), t), [2, 1], "int16")
    result = ndd.math.atan2(t, 1.0)
    assert dtype_name(result.dtype) == "float32"
    np.testing.assert_allclose(np.asarray(result), [np.pi / 4, 0.0], rtol=3e-7)


def test_min_max_of_mixed_signedness():
    a, b = tensor([-1, 100], "int8"), tensor([255, 50], "uint8")
    assert_result(ndd.math.min(a, b), [-1, 50], "int16")
    assert_result(ndd.math.max(a, b), [255, 100], "int16")


def test_min_max_propagate_nan():
    # Reference: max(nan, 1) == 1 and max(1, nan) == nan (math_max_float_nan); ndd follows numpy.
    a, b = tensor([np.nan, 1.0, 2.0], "float32"), tensor([1.0, np.nan, 3.0], "float32")
    assert_result(ndd.math.max(a, b), [np.nan, np.nan, 3.0], "float32")
    assert_result(ndd.math.min(a, b), [np.nan, np.nan, 2.0], "float32")


def test_pow_and_fpow():
    base, exponent = tensor([2, 2, -2, 4, 1, -1], "int32"), tensor([3, -1, 3, 0, -2, -3], "int32")
    # Reference pow: 0 for every negative exponent (also 1 ** -2 and (-1) ** -3).
    assert_result(ndd.math.pow(base, exponent), [8, 0, -8, 1, 1, -1], "int32")
    assert_result(ndd.math.fpow(base, exponent), [8.0, 0.5, -8.0, 1.0, 1.0, -1.0], "float32")
    assert_result(ndd.math.fpow(tensor([2], "int64"), 0.5), [np.sqrt(np.float32(2))], "float32")
    assert_result(ndd.math.pow(tensor([2.0], "float64"), -1), [0.5], "float64")


def test_atan2_takes_the_numerator_first():
    # As np.arctan2(a, b), although the reference names the parameters (x, y).
    y = tensor([1.0, 1.0, -1.0, -1.0, 0.0, 2.0], "float32")
    x = tensor([2.0, -2.0, 2.0, -2.0, 1.0, 0.0], "float32")
    expected = np.arctan2(np.asarray(y), np.asarray(x))
    np.testing.assert_allclose(np.asarray(ndd.math.atan2(y, x)), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ndd.math.atan2(x=y, y=x)), expected, rtol=1e-6)
    assert_result(ndd.math.atan2(tensor([0, 0], "int32"), tensor([1, -1], "int32")), [0.0, np.pi], "float32")


def test_clamp():
    assert_result(ndd.math.clamp(tensor([-3, 2, 9], "int32"), 0, 5), [0, 2, 5], "int32")
    assert_result(ndd.math.clamp(tensor([0, 2, 3], "uint8"), 0.5, 2.5), [0.5, 2.0, 2.5], "float32")
    assert_result(ndd.math.clamp(tensor([0, 200, 255], "uint8"), -5, 300), [0, 200, 255], "int32")
    assert_result(
        ndd.math.clamp(tensor([np.nan, -1.0, 2.0, 0.5], "float32"), 0.0, 1.0),
        [np.nan, 0.0, 1.0, 0.5],
        "float32",
    )
    # lo > hi: every element becomes hi (min(max(x, lo), hi)).
    assert_result(ndd.math.clamp(tensor([0, 3, 9], "int32"), 5, 1), [1, 1, 1], "int32")
    assert_result(ndd.math.clamp(value=tensor([1.5], "float16"), lo=0, hi=1), [1.0], "float16")


def test_clamp_bounds_broadcast():
    x = tensor([[1, 2, 3], [4, 5, 6]], "int32")
    assert_result(
        ndd.math.clamp(x, tensor([2, 2, 2], "int32"), tensor([[3], [5]], "int32")),
        [[2, 2, 3], [4, 5, 5]],
        "int32",
    )
    assert_result(
        ndd.math.clamp(tensor([-3, 2, 9], "int32"), tensor([0, 0, 0], "int64"), 1), [0, 1, 1], "int64"
    )
    with pytest.raises(ValueError, match="broadcast"):
        ndd.math.clamp(x, tensor([1, 2], "int32"), 3)


def test_scalar_only_arguments_give_0d_tensors():
    assert_result(ndd.math.sqrt(4), 2.0, "float32")
    assert_result(ndd.math.abs(-3), 3, "int32")
    assert_result(ndd.math.max(1, 2.5), 2.5, "float32")
    assert_result(ndd.math.pow(2, 10), 1024, "int32")
    assert_result(ndd.math.clamp(7, 0, 5), 5, "int32")
    assert_result(ndd.math.fabs(np.float64(-1.5)), 1.5, "float64")
    assert_result(ndd.math.sqrt(3000000000), np.float32(np.sqrt(3e9)), "float32")
    assert_result(ndd.math.sqrt(2**40), 2.0**20, "float32")  # beyond uint32: an int64 operand
    with pytest.raises(OverflowError, match="ndd.math.sqrt: the Python integer operand"):
        ndd.math.sqrt(2**63)


def test_list_and_numpy_arguments():
    assert_result(ndd.math.sqrt([4, 9]), [2.0, 3.0], "float32")
    assert_result(ndd.math.max([[1], [5]], np.array([2, 3, 4], np.int16)), [[2, 3, 4], [5, 5, 5]], "int32")
    with pytest.raises(TypeError, match="ndd.math.sqrt: unsupported operand str"):
        ndd.math.sqrt("4")


@pytest.mark.parametrize("d", FLOAT_DTYPES)
def test_results_are_quiet_about_inf_and_nan(d):
    # numpy would warn ("overflow encountered", "invalid value"); ndd returns inf/nan silently.
    with np.errstate(all="raise"):
        assert_result(ndd.math.exp(tensor([1000.0], d)), [np.inf], d)
        assert_result(ndd.math.sqrt(tensor([-1.0], d)), [np.nan], d)
        assert_result(ndd.math.log(tensor([0.0], d)), [-np.inf], d)


# ---------------------------------------------------------------------------
# recorded reference values
# ---------------------------------------------------------------------------

# ndd's results where it differs on purpose (see the tests above); the rest agrees.
DIVERGENT = {
    # Reference: nan for rsqrt(-0.0), rsqrt(0.0) and rsqrt(inf).
    "math_rsqrt_float32_edges": (
        [np.nan, np.nan, -np.inf, np.inf, 2.0, 1.0, 0.5, np.float32(1 / np.sqrt(8)), 0.0, np.nan, np.nan],
        "float32",
    ),
    # Reference: max(nan, 1) == 1 (the first NaN is dropped), max(1, nan) == nan; same for min.
    "math_max_float_nan": ([np.nan, np.nan], "float32"),
    "math_min_float_nan": ([np.nan, np.nan], "float32"),
}


MATH_CASES = [name for name in VALUE_CASES if name.startswith("math_")]
test_reference_value_case, test_divergences_refer_to_recorded_cases = value_case_tests(MATH_CASES, DIVERGENT)


# ---------------------------------------------------------------------------
# layouts, batches, modes
# ---------------------------------------------------------------------------


def test_layout_is_kept():
    t = ndd.tensor(np.ones((2, 3), np.int32), layout="HW")
    assert ndd.math.sqrt(t).layout == "HW"
    assert ndd.math.abs(t).layout == "HW"
    assert ndd.math.max(t, 1).layout == "HW"
    assert ndd.math.clamp(t, 0, ndd.tensor([1, 2, 3])).layout == "HW"
    assert ndd.math.atan2(ndd.tensor([1.0]), t).layout == "HW"


def test_batches():
    a = ragged_batch("int16")
    assert_batch(ndd.math.fabs(a), [np.fabs(s.astype(np.float32)) for s in sample_arrays(a)], "float32", "HW")
    assert_batch(ndd.math.abs(a), [np.abs(s) for s in sample_arrays(a)], "int16", "HW")
    assert_batch(
        ndd.math.max(a, a * 2),
        [np.maximum(s, 2 * s).astype(np.int32) for s in sample_arrays(a)],
        "int32",
        "HW",
    )
    assert_batch(
        ndd.math.min(1, a), [np.minimum(1, s).astype(np.int32) for s in sample_arrays(a)], "int32", "HW"
    )
    bounds = tensor([0, 1, 2], "int16")
    assert_batch(
        ndd.math.clamp(a, bounds, 3),
        [np.clip(s, [0, 1, 2], 3).astype(np.int32) for s in sample_arrays(a)],
        "int32",
        "HW",
    )
    with pytest.raises(ValueError, match="ndd.math.min: Inconsistent batch size"):
        ndd.math.min(a, ndd.batch([np.ones(3, np.int16)]))


def _expressions():
    f = tensor([[0.25, -2.0, np.nan], [4.0, 0.0, 1e3]], "float32")
    i = tensor([[7, -7, 3], [0, 100, -128]], "int8")
    b = ragged_batch()
    return [
        ndd.math.sqrt(f),
        ndd.math.rsqrt(i),
        ndd.math.exp(ndd.math.log(f) * 2),
        ndd.math.atan2(f, i),
        ndd.math.max(f, i),
        ndd.math.pow(i, 2),
        ndd.math.fpow(i, -1),
        ndd.math.clamp(i, -5, 5),
        ndd.math.floor(b / 4),
        ndd.math.min(b, ndd.math.abs(b)),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_gives_the_same_results(mode):
    expected = _expressions()
    with mode:
        results = _expressions()
    for result, want in zip(results, expected, strict=True):
        got, want = materialise(result), materialise(want)
        assert [(dt, layout) for dt, layout, _ in got] == [(dt, layout) for dt, layout, _ in want]
        for (_, _, data), (_, _, want_data) in zip(got, want, strict=True):
            np.testing.assert_array_equal(data, want_data)


def test_keyword_arguments_use_the_reference_names():
    assert_result(ndd.math.sqrt(input=tensor([4], "int32")), [2.0], "float32")
    assert_result(ndd.math.min(left=1, right=tensor([0, 2], "int32")), [0, 1], "int32")
    assert_result(ndd.math.pow(base=2, exponent=tensor([3], "int32")), [8], "int32")
    with pytest.raises(TypeError):
        ndd.math.clamp(tensor([1], "int32"), 0)
