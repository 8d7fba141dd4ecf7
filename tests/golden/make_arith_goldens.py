"""Regenerate the arithmetic golden files from the REFERENCE implementation.

Run with the reference interpreter (never with the project's own venv):

    $HOME/dali-ref/bin/python tests/golden/make_arith_goldens.py

Only observed behaviour is recorded; nothing here is part of the package.

Outputs (next to this script)
-----------------------------
arith_promotion.json
    Result dtype (numpy-style name, e.g. "uint8", "float32", "bool") of each
    probed expression, or the string
        "error: <ExceptionType>: <message>"
    where <message> is str(exc) with runs of whitespace collapsed to a single
    space, truncated to 120 characters.  Layout:

    {
      "dtypes":  [12 dtype names],
      "binary_ops": [op names],
      "binary":  {op: {"<L>,<R>": result}},        # tensor(L) OP tensor(R)
      "scalars": [scalar spellings],               # e.g. "1", "2.5", "True",
                                                   # "np.float32(2.5)"
      "scalar_right": {op: {dtype: {scalar: result}}},   # tensor OP scalar
      "scalar_left":  {op: {dtype: {scalar: result}}},   # scalar OP tensor
      "unary":   {op: {dtype: result}},           # "-", "+", "abs", "~", and
                                                  # "math.<fn>" for ndd.math fns
      "clamp":   {"int": {dtype: result},          # clamp(t, 0, 2)
                  "float": {dtype: result}},       # clamp(t, 0.5, 2.5)
      "tensor_ctor": {python-literal: dtype}       # ndd.tensor(<literal>).dtype
    }

    Binary op names: the Python operators "+ - * / // % ** & | ^ << >> == !=
    < <= > >=" and "math.min", "math.max", "math.pow", "math.fpow",
    "math.atan2" (called as fn(lhs, rhs)).  Tensor inputs are 1-D, values
    [1, 2, 3] (bool: all True, so that no divisor is 0).
    Expressions whose result is not an ndd Tensor (a numpy scalar on the
    left: numpy performs the operation itself) are recorded as
        "not-a-Tensor: <type> <numpy dtype>".

arith_values.npz + arith_values.json
    Exact values for tricky cases.  For case <name> the npz holds
    "<name>.in0", "<name>.in1", ... (inputs, numpy arrays with their dtypes)
    and "<name>.out" (the output, when there was no error).  The JSON index
    maps <name> to {"expr", "inputs" (dtype+list), "out_dtype", "out" (list;
    nan/inf spelled as strings) or "error", plus optional "note"}.
    Cases that crash the reference process (e.g. SIGFPE) are run in a child
    process and recorded as "error": "crash: <signal>" (or, if they survive,
    "stdout": "<values> <ref dtype name>").
    Special index entries: "atan2_order" (which np.arctan2 argument order
    ndd.math.atan2 matches) and "_error_messages" (full, untruncated text of
    selected error messages: {key: {"code", "type", "message"}}, or the
    result when the expression did not fail).
"""

import json
import math
import operator
import os
import signal
import subprocess
import sys

import numpy as np
import nvidia.dali.experimental.dynamic as ndd

HERE = os.path.dirname(os.path.abspath(__file__))

DTYPES = [
    "bool", "uint8", "uint16", "uint32", "uint64",
    "int8", "int16", "int32", "int64",
    "float16", "float32", "float64",
]

# reference DType.name -> numpy-style name
_REF2NP = {
    "bool": "bool",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "f16": "float16", "f32": "float32", "f64": "float64",
    "bfloat16": "bfloat16",
}

BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul,
    "/": operator.truediv, "//": operator.floordiv, "%": operator.mod,
    "**": operator.pow,
    "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "<<": operator.lshift, ">>": operator.rshift,
    "==": operator.eq, "!=": operator.ne,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "math.min": lambda a, b: ndd.math.min(a, b),
    "math.max": lambda a, b: ndd.math.max(a, b),
    "math.pow": lambda a, b: ndd.math.pow(a, b),
    "math.fpow": lambda a, b: ndd.math.fpow(a, b),
    "math.atan2": lambda a, b: ndd.math.atan2(a, b),
}

SCALARS = {
    "1": 1, "-1": -1, "3000000000": 3000000000, "2.5": 2.5, "True": True,
    # a few numpy scalars too (not required, but cheap and informative)
    "np.int64(1)": np.int64(1), "np.uint8(1)": np.uint8(1),
    "np.float32(2.5)": np.float32(2.5), "np.float64(2.5)": np.float64(2.5),
}

MATH_UNARY = [
    "sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10",
    "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
    "floor", "ceil", "fabs", "abs",
]

UNARY = {
    "-": operator.neg, "+": operator.pos, "abs": abs, "~": operator.invert,
}
for _fn in MATH_UNARY:
    UNARY["math." + _fn] = (lambda f: (lambda t: f(t)))(getattr(ndd.math, _fn))


def np_name(dtype):
    return _REF2NP.get(dtype.name, dtype.name)


def err_str(exc):
    msg = " ".join(str(exc).split())
    return "error: %s: %s" % (type(exc).__name__, msg[:120])


def make(values, dtype):
    return ndd.tensor(np.array(values, dtype=dtype))


def sample(dtype):
    return make([True, True, True] if dtype == "bool" else [1, 2, 3], dtype)


def result_dtype(fn, *args):
    """Apply fn, force evaluation, return numpy-style dtype name or error."""
    try:
        r = fn(*args)
        if not isinstance(r, ndd.Tensor):
            # e.g. numpy scalar on the left: numpy handles the op itself
            return "not-a-Tensor: %s %s" % (type(r).__name__, r.dtype)
        np.asarray(r)  # make sure the kernel really ran
        return np_name(r.dtype)
    except Exception as e:  # noqa: BLE001 - we record whatever happens
        return err_str(e)


# --------------------------------------------------------------------------
# promotion tables
# --------------------------------------------------------------------------


def promotion_tables():
    out = {"dtypes": DTYPES, "binary_ops": list(BINARY),
           "scalars": list(SCALARS)}

    tensors = {d: sample(d) for d in DTYPES}

    out["binary"] = {
        op: {"%s,%s" % (l, r): result_dtype(fn, tensors[l], tensors[r])
             for l in DTYPES for r in DTYPES}
        for op, fn in BINARY.items()
    }
    out["scalar_right"] = {
        op: {d: {s: result_dtype(fn, tensors[d], v) for s, v in SCALARS.items()}
             for d in DTYPES}
        for op, fn in BINARY.items()
    }
    out["scalar_left"] = {
        op: {d: {s: result_dtype(fn, v, tensors[d]) for s, v in SCALARS.items()}
             for d in DTYPES}
        for op, fn in BINARY.items()
    }
    out["unary"] = {
        op: {d: result_dtype(fn, tensors[d]) for d in DTYPES}
        for op, fn in UNARY.items()
    }
    out["clamp"] = {
        "int": {d: result_dtype(ndd.math.clamp, tensors[d], 0, 2)
                for d in DTYPES},
        "float": {d: result_dtype(ndd.math.clamp, tensors[d], 0.5, 2.5)
                  for d in DTYPES},
    }
    ctor = {}
    for lit in ["1", "1.0", "True", "[1, 2]", "[1.0, 2.0]", "[True, False]",
                "[1, 2.5]", "[3000000000]", "np.array([1, 2])",
                "np.array([1.0])", "np.int64(1)", "np.float64(1.0)"]:
        try:
            ctor[lit] = np_name(ndd.tensor(eval(lit)).dtype)
        except Exception as e:  # noqa: BLE001
            ctor[lit] = err_str(e)
    out["tensor_ctor"] = ctor
    return out


# --------------------------------------------------------------------------
# exact values
# --------------------------------------------------------------------------

F32_EDGE = [-1.5, -0.5, 0.5, 1.5, 2.5, 254.6, 255.5, 300.7, -300.0,
            math.nan, math.inf, -math.inf]
INT_DTYPES = ["uint8", "uint16", "uint32", "uint64",
              "int8", "int16", "int32", "int64"]


def _jsonable(arr):
    def conv(x):
        if isinstance(x, float) and not math.isfinite(x):
            return str(x)
        return x
    lst = np.asarray(arr).tolist()
    if isinstance(lst, list):
        def rec(v):
            return [rec(i) for i in v] if isinstance(v, list) else conv(v)
        return rec(lst)
    return conv(lst)


class ValueRecorder:
    def __init__(self):
        self.arrays = {}
        self.index = {}

    def case(self, name, expr, fn, *inputs, note=None):
        """inputs: numpy arrays (wrapped in ndd tensors) or python scalars."""
        assert name not in self.index, name
        entry = {"expr": expr, "inputs": []}
        args = []
        for i, x in enumerate(inputs):
            if isinstance(x, np.ndarray):
                self.arrays["%s.in%d" % (name, i)] = x
                entry["inputs"].append(
                    {"dtype": str(x.dtype), "shape": list(x.shape),
                     "value": _jsonable(x)})
                args.append(ndd.tensor(x))
            else:
                entry["inputs"].append({"python": repr(x)})
                args.append(x)
        try:
            r = fn(*args)
            out = np.asarray(r)
            if not isinstance(r, ndd.Tensor):
                entry["not_a_tensor"] = type(r).__name__
            entry["out_dtype"] = np_name(r.dtype)
            entry["out_shape"] = list(out.shape)
            entry["out"] = _jsonable(out)
            self.arrays[name + ".out"] = out
        except Exception as e:  # noqa: BLE001
            entry["error"] = err_str(e)
        if note:
            entry["note"] = note
        self.index[name] = entry

    def crash_case(self, name, expr, code, note=None):
        """Run `code` in a child reference interpreter (it may kill itself)."""
        prog = ("import numpy as np\n"
                "import nvidia.dali.experimental.dynamic as ndd\n"
                "with ndd.EvalMode.sync_cpu:\n"
                "    r = %s\n"
                "    print(repr(np.asarray(r).tolist()), r.dtype.name)\n" % code)
        p = subprocess.run([sys.executable, "-c", prog],
                           capture_output=True, text=True, timeout=120)
        entry = {"expr": expr, "code": code}
        if p.returncode < 0:
            entry["error"] = "crash: " + signal.Signals(-p.returncode).name
        elif p.returncode != 0:
            last = (p.stderr.strip().splitlines() or ["?"])[-1]
            entry["error"] = "error: " + " ".join(last.split())[:140]
        else:
            entry["stdout"] = p.stdout.strip()
        if note:
            entry["note"] = note
        self.index[name] = entry


def A(values, dtype):
    return np.array(values, dtype=dtype)


def value_cases():
    rec = ValueRecorder()
    add, sub, mul = operator.add, operator.sub, operator.mul
    fdiv, mod, tdiv = operator.floordiv, operator.mod, operator.truediv

    # integer // and % with signs ----------------------------------------
    num = [7, -7, 7, -7, 0, 1, -1, 6, -6]
    den = [2, 2, -2, -2, 3, -3, 3, -3, 4]
    for dt in ["int32", "int8", "int64", "int16"]:
        rec.case("floordiv_signs_" + dt, "a // b", fdiv, A(num, dt), A(den, dt))
        rec.case("mod_signs_" + dt, "a % b", mod, A(num, dt), A(den, dt))
    rec.case("floordiv_uint8", "a // b", fdiv,
             A([7, 200, 255, 0], "uint8"), A([2, 3, 16, 5], "uint8"))
    rec.case("mod_uint8", "a % b", mod,
             A([7, 200, 255, 0], "uint8"), A([2, 3, 16, 5], "uint8"))
    rec.case("floordiv_int8_uint8", "a // b  (int8 // uint8)", fdiv,
             A([-7, 7, -128], "int8"), A([2, 2, 200], "uint8"))
    rec.case("mod_int8_uint8", "a % b  (int8 % uint8)", mod,
             A([-7, 7, -128], "int8"), A([2, 2, 200], "uint8"))
    rec.case("floordiv_int32_scalar_neg", "a // -2", lambda a: a // -2,
             A([7, -7, 0, 1], "int32"))
    rec.case("mod_int32_scalar_neg", "a % -2", lambda a: a % -2,
             A([7, -7, 0, 1], "int32"))
    rec.case("rfloordiv_int32_scalar", "-7 // a", lambda a: -7 // a,
             A([2, -2, 3], "int32"))
    rec.case("rmod_int32_scalar", "-7 % a", lambda a: -7 % a,
             A([2, -2, 3], "int32"))
    fnum = [7.5, -7.5, 7.5, -7.5, 5.0, -5.0]
    fden = [2.0, 2.0, -2.0, -2.0, 0.5, 3.0]
    rec.case("floordiv_int32_float_scalar", "a // 2.5", lambda a: a // 2.5,
             A([7, -7], "int32"))
    rec.case("mod_int32_float_scalar", "a % 2.5", lambda a: a % 2.5,
             A([7, -7], "int32"))
    rec.case("floordiv_float32", "a // b", fdiv, A(fnum, "float32"), A(fden, "float32"))
    rec.case("mod_float32", "a % b", mod, A(fnum, "float32"), A(fden, "float32"))
    rec.case("floordiv_float64", "a // b", fdiv, A(fnum, "float64"), A(fden, "float64"))
    rec.case("mod_float64", "a % b", mod, A(fnum, "float64"), A(fden, "float64"))

    # division by zero ---------------------------------------------------
    for dt in ["int32", "int8", "uint8", "int64"]:
        n = [5, 0, 1] if dt == "uint8" else [5, -5, 0]
        z = A([0, 0, 0], dt)
        rec.case("div0_floordiv_" + dt, "a // b (b == 0)", fdiv, A(n, dt), z)
        rec.case("div0_mod_" + dt, "a % b (b == 0)", mod, A(n, dt), z)
        rec.case("div0_truediv_" + dt, "a / b (b == 0)", tdiv, A(n, dt), z)
    rec.case("div0_floordiv_int32_partial", "a // b (one zero in b)", fdiv,
             A([5, 6, 7], "int32"), A([1, 0, 2], "int32"))
    rec.case("div0_floordiv_int32_scalar0", "a // 0", lambda a: a // 0,
             A([5, 6], "int32"))
    rec.case("div0_mod_int32_scalar0", "a % 0", lambda a: a % 0,
             A([5, 6], "int32"))
    for dt in ["float32", "float64"]:
        n = A([5.0, -5.0, 0.0], dt)
        z = A([0.0, 0.0, 0.0], dt)
        rec.case("div0_truediv_" + dt, "a / b (b == 0)", tdiv, n, z)
        rec.case("div0_floordiv_" + dt, "a // b (b == 0)", fdiv, n, z)
        rec.case("div0_mod_" + dt, "a % b (b == 0)", mod, n, z)
    rec.crash_case(
        "floordiv_int32_min_by_minus1", "INT32_MIN // -1",
        "ndd.tensor(np.array([-2**31], np.int32)) // "
        "ndd.tensor(np.array([-1], np.int32))")
    rec.crash_case(
        "mod_int32_min_by_minus1", "INT32_MIN % -1",
        "ndd.tensor(np.array([-2**31], np.int32)) % "
        "ndd.tensor(np.array([-1], np.int32))")
    rec.crash_case(
        "floordiv_int64_min_by_minus1", "INT64_MIN // -1",
        "ndd.tensor(np.array([-2**63], np.int64)) // "
        "ndd.tensor(np.array([-1], np.int64))")
    rec.crash_case(
        "floordiv_int16_min_by_minus1", "INT16_MIN // -1",
        "ndd.tensor(np.array([-2**15], np.int16)) // "
        "ndd.tensor(np.array([-1], np.int16))")
    rec.crash_case(
        "floordiv_int8_min_by_minus1", "INT8_MIN // -1",
        "ndd.tensor(np.array([-128], np.int8)) // "
        "ndd.tensor(np.array([-1], np.int8))")

    # true division on ints ----------------------------------------------
    for dt in ["int32", "uint8", "int64", "int8"]:
        a = [7, 1, 0, 100] if dt == "uint8" else [7, -7, 1, 100]
        rec.case("truediv_" + dt, "a / b", tdiv, A(a, dt), A([2, 3, 3, 7], dt))
    rec.case("truediv_int64_big", "a / b", tdiv,
             A([2**53 + 1, 2**62], "int64"), A([1, 3], "int64"))
    rec.case("truediv_int32_scalar", "a / 2", lambda a: a / 2, A([7, -7], "int32"))
    rec.case("rtruediv_int32_scalar", "1 / a", lambda a: 1 / a, A([3, -4], "int32"))

    # ** on ints -----------------------------------------------------------
    rec.case("pow_int32", "a ** b", operator.pow,
             A([2, 2, -2, 3, 0, 1, -1, 2, 0], "int32"),
             A([3, 0, 3, 2, 0, 5, 3, 31, 5], "int32"))
    rec.case("pow_int32_neg_exp", "a ** b", operator.pow,
             A([2, 1, -1, -1, 2, 0, 4], "int32"),
             A([-1, -2, -1, -2, -2, -1, -1], "int32"))
    rec.case("pow_int32_scalar_neg_exp", "a ** -1", lambda a: a ** -1,
             A([1, 2, -1, 0], "int32"))
    rec.case("pow_uint8_overflow", "a ** b", operator.pow,
             A([2, 3, 16], "uint8"), A([8, 5, 2], "uint8"))
    rec.case("pow_int8_overflow", "a ** b", operator.pow,
             A([2, -2, 3], "int8"), A([7, 7, 5], "int8"))
    rec.case("pow_int32_float_scalar", "a ** 0.5", lambda a: a ** 0.5,
             A([4, 2], "int32"))
    rec.case("math_pow_int32", "ndd.math.pow(a, b)", ndd.math.pow,
             A([2, 2, -2], "int32"), A([3, -1, 3], "int32"))
    rec.case("math_fpow_int32", "ndd.math.fpow(a, b)", ndd.math.fpow,
             A([2, 2, -2, 4], "int32"), A([3, -1, 3, 0], "int32"))
    rec.case("pow_float32", "a ** b", operator.pow,
             A([2.0, -8.0, 0.0, -2.0], "float32"),
             A([-1.0, 1.0 / 3, -1.0, 0.5], "float32"))

    # wrap-around ----------------------------------------------------------
    rec.case("add_uint8_wrap", "a + b", add, A([250, 255, 128], "uint8"), A([10, 1, 128], "uint8"))
    rec.case("mul_uint8_wrap", "a * b", mul, A([16, 255, 200], "uint8"), A([16, 2, 3], "uint8"))
    rec.case("sub_uint8_wrap", "a - b", sub, A([0, 5], "uint8"), A([1, 10], "uint8"))
    rec.case("add_int8_wrap", "a + b", add, A([127, -128], "int8"), A([1, -1], "int8"))
    rec.case("neg_int8_min", "-a", operator.neg, A([-128, 127, 0], "int8"))
    rec.case("neg_uint8", "-a", operator.neg, A([0, 1, 255], "uint8"))
    rec.case("abs_int8_min", "abs(a)", abs, A([-128, -1, 5], "int8"))
    rec.case("add_uint8_scalar_wrap", "a + 10", lambda a: a + 10, A([250, 255], "uint8"))
    rec.case("add_uint8_scalar_300", "a + 300", lambda a: a + 300, A([250, 1], "uint8"))
    rec.case("mul_uint8_scalar_neg1", "a * -1", lambda a: a * -1, A([1, 255], "uint8"))
    rec.case("add_uint8_np_uint8_scalar", "a + np.uint8(10)",
             lambda a: a + np.uint8(10), A([250, 255], "uint8"))
    rec.case("add_int32_wrap", "a + b", add, A([2**31 - 1], "int32"), A([1], "int32"))

    # shifts -----------------------------------------------------------------
    rec.case("lshift_uint8", "a << b", operator.lshift,
             A([1, 1, 1, 1, 255], "uint8"), A([0, 7, 8, 9, 1], "uint8"))
    rec.case("lshift_int32", "a << b", operator.lshift,
             A([1, 1, 1, 1, -1, 3], "int32"), A([0, 31, 32, 33, 1, 40], "int32"))
    rec.case("rshift_int32", "a >> b", operator.rshift,
             A([-8, -8, 8, -1, 2**30, -8], "int32"), A([1, 31, 32, 40, 33, 0], "int32"))
    rec.case("rshift_int8", "a >> b", operator.rshift,
             A([-128, -1, 64, 64], "int8"), A([1, 7, 8, 9], "int8"))
    rec.case("lshift_int32_negshift", "a << b", operator.lshift,
             A([8, 8], "int32"), A([-1, -2], "int32"))
    rec.case("rshift_int32_negshift", "a >> b", operator.rshift,
             A([8, 8], "int32"), A([-1, -2], "int32"))
    rec.case("lshift_uint8_scalar", "a << 9", lambda a: a << 9, A([1, 3], "uint8"))
    rec.case("lshift_int64", "a << b", operator.lshift,
             A([1, 1, 1], "int64"), A([63, 64, 65], "int64"))

    # bool ops -----------------------------------------------------------
    ba = A([True, True, False, False], "bool")
    bb = A([True, False, True, False], "bool")
    for op, fn in [("&", operator.and_), ("|", operator.or_), ("^", operator.xor),
                   ("+", add), ("-", sub), ("*", mul), ("==", operator.eq),
                   ("<", operator.lt), ("/", tdiv)]:
        rec.case("bool_%s" % {"&": "and", "|": "or", "^": "xor", "+": "add",
                              "-": "sub", "*": "mul", "==": "eq", "<": "lt",
                              "/": "truediv"}[op],
                 "a %s b" % op, fn, ba, bb)
    rec.case("bool_invert", "~a", operator.invert, A([True, False], "bool"))
    rec.case("bool_neg", "-a", operator.neg, A([True, False], "bool"))
    rec.case("bool_and_int_scalar", "a & 1", lambda a: a & 1, A([True, False], "bool"))
    rec.case("bool_and_true", "a & True", lambda a: a & True, A([True, False], "bool"))
    rec.case("invert_uint8", "~a", operator.invert, A([0, 1, 255], "uint8"))
    rec.case("invert_int8", "~a", operator.invert, A([0, 1, -128], "int8"))
    rec.case("and_int8_uint8", "a & b", operator.and_,
             A([-1, -128], "int8"), A([255, 255], "uint8"))

    # mixed-sign comparisons ---------------------------------------------
    cmp_ops = [("lt", operator.lt), ("eq", operator.eq), ("gt", operator.gt)]
    pairs = [
        ("int8_uint8", A([-1, 127], "int8"), A([255, 127], "uint8")),
        ("int32_uint32", A([-1, 1], "int32"), A([4294967295, 1], "uint32")),
        ("int64_uint64", A([-1, 1], "int64"), A([2**64 - 1, 1], "uint64")),
        ("int16_uint32", A([-1, 5], "int16"), A([4294967295, 5], "uint32")),
        ("uint64_float32", A([2**64 - 1, 16777217], "uint64"),
         A([1.8446744e19, 16777216.0], "float32")),
    ]
    for pname, l, r in pairs:
        for oname, fn in cmp_ops:
            rec.case("cmp_%s_%s" % (oname, pname), "a %s b" % oname, fn, l, r)
    for oname, fn in cmp_ops:
        rec.case("cmp_%s_int64_uint64_wrap" % oname, "a %s b" % oname, fn,
                 A([-2**63, -1, 2**63 - 1], "int64"),
                 A([2**63, 2**64 - 1, 2**63], "uint64"))
    rec.case("add_int64_uint64", "a + b", add,
             A([-1, 1], "int64"), A([2**64 - 1, 1], "uint64"))
    rec.case("add_int32_uint32", "a + b", add,
             A([-1, 1], "int32"), A([4294967295, 1], "uint32"))
    rec.case("cmp_lt_int32_scalar_float", "a < 2.5", lambda a: a < 2.5,
             A([2, 3], "int32"))
    rec.case("cmp_lt_uint8_scalar_neg", "a < -1", lambda a: a < -1,
             A([0, 255], "uint8"))
    rec.case("cmp_eq_uint8_scalar_300", "a == 300", lambda a: a == 300,
             A([44, 255], "uint8"))

    # math functions on float32 edges ----------------------------------------
    edge = A([-4.0, -1.0, -0.0, 0.0, 0.25, 1.0, 4.0, 8.0, math.inf, -math.inf,
              math.nan], "float32")
    for fn in MATH_UNARY:
        rec.case("math_%s_float32_edges" % fn, "ndd.math.%s(a)" % fn,
                 getattr(ndd.math, fn), edge)
    rec.case("math_sqrt_int32", "ndd.math.sqrt(a)", ndd.math.sqrt, A([4, 2, -1], "int32"))
    rec.case("math_cbrt_int32", "ndd.math.cbrt(a)", ndd.math.cbrt, A([-8, 27], "int32"))
    rec.case("math_abs_int32", "ndd.math.abs(a)", ndd.math.abs, A([-3, 3], "int32"))
    rec.case("math_fabs_int32", "ndd.math.fabs(a)", ndd.math.fabs, A([-3, 3], "int32"))
    rec.case("math_floor_int32", "ndd.math.floor(a)", ndd.math.floor, A([-3, 3], "int32"))
    rec.case("math_floor_float32", "ndd.math.floor(a)", ndd.math.floor,
             A([-1.5, -0.5, 0.5, 1.5, 2.5], "float32"))
    rec.case("math_ceil_float32", "ndd.math.ceil(a)", ndd.math.ceil,
             A([-1.5, -0.5, 0.5, 1.5, 2.5], "float32"))
    ax = A([1.0, 1.0, -1.0, -1.0, 0.0, 2.0], "float32")
    ay = A([2.0, -2.0, 2.0, -2.0, 1.0, 0.0], "float32")
    rec.case("math_atan2_float32", "ndd.math.atan2(a, b)", ndd.math.atan2, ax, ay)
    rec.index["math_atan2_float32"]["note"] = "see atan2_order"
    rec.case("math_atan2_int32", "ndd.math.atan2(a, b)", ndd.math.atan2,
             A([1, -1], "int32"), A([2, 2], "int32"))
    rec.case("math_min_int8_uint8", "ndd.math.min(a, b)", ndd.math.min,
             A([-1, 100], "int8"), A([255, 50], "uint8"))
    rec.case("math_max_float_nan", "ndd.math.max(a, b)", ndd.math.max,
             A([math.nan, 1.0], "float32"), A([1.0, math.nan], "float32"))
    rec.case("math_min_float_nan", "ndd.math.min(a, b)", ndd.math.min,
             A([math.nan, 1.0], "float32"), A([1.0, math.nan], "float32"))
    rec.case("math_clamp_int32", "ndd.math.clamp(a, 0, 5)",
             lambda a: ndd.math.clamp(a, 0, 5), A([-3, 2, 9], "int32"))
    rec.case("math_clamp_uint8_float", "ndd.math.clamp(a, 0.5, 2.5)",
             lambda a: ndd.math.clamp(a, 0.5, 2.5), A([0, 2, 3], "uint8"))
    rec.case("math_clamp_uint8_neg_lo", "ndd.math.clamp(a, -5, 300)",
             lambda a: ndd.math.clamp(a, -5, 300), A([0, 200, 255], "uint8"))
    rec.case("math_clamp_float32_nan", "ndd.math.clamp(a, 0.0, 1.0)",
             lambda a: ndd.math.clamp(a, 0.0, 1.0),
             A([math.nan, -1.0, 2.0, 0.5], "float32"))
    rec.case("math_clamp_tensor_bounds", "ndd.math.clamp(a, lo, hi)",
             ndd.math.clamp, A([-3, 2, 9], "int32"), A([0, 0, 0], "int32"),
             A([1, 1, 1], "int32"))
    rec.case("math_clamp_lo_gt_hi", "ndd.math.clamp(a, 5, 1)",
             lambda a: ndd.math.clamp(a, 5, 1), A([0, 3, 9], "int32"))

    # casts ------------------------------------------------------------
    fsrc = A(F32_EDGE, "float32")
    for dt in INT_DTYPES + ["bool", "float16"]:
        rec.case("cast_float32_to_" + dt, "ndd.cast(a, dtype=%s)" % dt,
                 lambda a, dt=dt: ndd.cast(a, dtype=getattr(ndd, dt)), fsrc)
    fbig = A([1e9, 3e9, 5e9, -3e9, 1.8e19, 2e19, 9.3e18, -9.3e18, 4294967295.5,
              4294967296.0], "float64")
    for dt in INT_DTYPES:
        rec.case("cast_float64_big_to_" + dt, "ndd.cast(a, dtype=%s)" % dt,
                 lambda a, dt=dt: ndd.cast(a, dtype=getattr(ndd, dt)), fbig)
    isrc = A([-1, 0, 1, 70000, 2**31 - 1, -2**31, 255, 256, -129], "int32")
    for dt in ["uint8", "int8", "uint16", "int16", "uint32", "uint64", "int64",
               "float16", "float32", "bool"]:
        rec.case("cast_int32_to_" + dt, "ndd.cast(a, dtype=%s)" % dt,
                 lambda a, dt=dt: ndd.cast(a, dtype=getattr(ndd, dt)), isrc)
    usrc = A([0, 1, 127, 128, 255], "uint8")
    rec.case("cast_uint8_to_int8", "ndd.cast(a, dtype=int8)",
             lambda a: ndd.cast(a, dtype=ndd.int8), usrc)
    rec.case("cast_uint64_to_int64", "ndd.cast(a, dtype=int64)",
             lambda a: ndd.cast(a, dtype=ndd.int64), A([2**64 - 1, 2**63, 5], "uint64"))
    rec.case("cast_int64_to_uint32", "ndd.cast(a, dtype=uint32)",
             lambda a: ndd.cast(a, dtype=ndd.uint32), A([-1, 2**32, 2**33 + 5, 7], "int64"))
    rec.case("cast_int64_to_float32", "ndd.cast(a, dtype=float32)",
             lambda a: ndd.cast(a, dtype=ndd.float32), A([2**24 + 1, 2**63 - 1], "int64"))
    rec.case("cast_float64_huge_to_float32", "ndd.cast(a, dtype=float32)",
             lambda a: ndd.cast(a, dtype=ndd.float32),
             A([1e39, -1e39, 1e300, 3.4028235e38, 3.4028236e38, 1e-50,
                0.1, math.nan], "float64"))
    rec.case("cast_float32_to_float64", "ndd.cast(a, dtype=float64)",
             lambda a: ndd.cast(a, dtype=ndd.float64), A([0.1, 1e38], "float32"))
    rec.case("cast_bool_to_float32", "ndd.cast(a, dtype=float32)",
             lambda a: ndd.cast(a, dtype=ndd.float32), A([True, False], "bool"))
    rec.case("cast_int32_to_bool_neg", "ndd.cast(a, dtype=bool)",
             lambda a: ndd.cast(a, dtype=ndd.bool), A([-2, 0, 2], "int32"))
    rec.case("cast_float16_to_float32", "ndd.cast(a, dtype=float32)",
             lambda a: ndd.cast(a, dtype=ndd.float32), A([1.5, -2.0], "float16"))
    rec.case("cast_dtype_as_string", "ndd.cast(a, dtype='uint8')",
             lambda a: ndd.cast(a, dtype="uint8"), A([1.5, 300.0], "float32"))
    rec.case("cast_dtype_as_numpy", "ndd.cast(a, dtype=np.uint8)",
             lambda a: ndd.cast(a, dtype=np.uint8), A([1.5, 300.0], "float32"))

    # broadcasting ------------------------------------------------------
    m23 = A([[1, 2, 3], [4, 5, 6]], "int32")
    rec.case("bcast_2x3_3", "a + b", add, m23, A([10, 20, 30], "int32"))
    rec.case("bcast_2x3_2x1", "a + b", add, m23, A([[10], [20]], "int32"))
    rec.case("bcast_2x1_1x3", "a + b", add, A([[1], [2]], "int32"), A([[10, 20, 30]], "int32"))
    rec.case("bcast_0d_2x3", "a + b", add, A(100, "int32"), m23)
    rec.case("bcast_2x3_0d", "a + b", add, m23, A(100, "int32"))
    rec.case("bcast_0d_uint8_int32_promotion", "a + b (0-D uint8 + int32)",
             add, A(1, "uint8"), A([1, 2], "int32"))
    rec.case("bcast_0d_int32_uint8_promotion", "a + b (0-D int32 + uint8)",
             add, A(1, "int32"), A([1, 2], "uint8"))
    rec.case("bcast_0d_float64_float32", "a + b (0-D float64 + float32)",
             add, A(1.5, "float64"), A([1, 2], "float32"))
    rec.case("bcast_3_2x3x1", "a + b", add, A([1, 2, 3], "int32"),
             A([[[10]], [[20]]], "int32"))
    rec.case("bcast_mismatch_2x3_2", "a + b", add, m23, A([1, 2], "int32"))
    rec.case("bcast_mismatch_2x3_4x3", "a + b", add, m23, A(np.zeros((4, 3)), "int32"))
    rec.case("bcast_empty_0_1", "a + b", add, A(np.zeros((0,)), "int32"), A([5], "int32"))
    rec.case("bcast_clamp_2x3_bounds3", "ndd.math.clamp(a, lo, hi)", ndd.math.clamp,
             m23, A([2, 2, 2], "int32"), A([[3], [5]], "int32"))

    # atan2 argument order ------------------------------------------------
    out = rec.arrays["math_atan2_float32.out"]
    rec.index["atan2_order"] = {
        "matches_np_arctan2_a_b": bool(np.allclose(out, np.arctan2(ax, ay))),
        "matches_np_arctan2_b_a": bool(np.allclose(out, np.arctan2(ay, ax))),
        "note": "ndd.math.atan2(a, b) compared with np.arctan2",
    }
    return rec


# --------------------------------------------------------------------------
# error messages quoted in ARITH_NOTES.md
# --------------------------------------------------------------------------


def error_messages():
    probes = {
        "broadcast_mismatch":
            "ndd.tensor(np.zeros((2, 3), np.int32)) + ndd.tensor(np.zeros((2,), np.int32))",
        "int32_plus_float16":
            "ndd.tensor([1]) + ndd.tensor(np.array([1], np.float16))",
        "float16_plus_int32":
            "ndd.tensor(np.array([1], np.float16)) + ndd.tensor([1])",
        "neg_float16": "-ndd.tensor(np.array([1], np.float16))",
        "bool_plus_bool":
            "ndd.tensor([True]) + ndd.tensor([False])",
        "neg_bool": "-ndd.tensor([True])",
        "tensor_plus_float_list": "ndd.tensor([1]) + [1.5]",
        "tensor_plus_ndarray_f64": "ndd.tensor([1]) + np.array([1.5])",
        "cast_bad_dtype": "ndd.cast(ndd.tensor([1]), dtype='foo')",
        "cast_bad_dtype_obj": "ndd.cast(ndd.tensor([1]), dtype=object)",
        "tensor_plus_str": "ndd.tensor([1]) + 'a'",
        "tensor_plus_list": "ndd.tensor([1]) + [1, 2]",
        "tensor_plus_ndarray": "ndd.tensor([1]) + np.array([1, 2], np.int32)",
        "int_scalar_overflow": "ndd.tensor([1]) + 3000000000",
        "bitwise_float": "ndd.tensor([1.0]) & ndd.tensor([1.0])",
        "shift_float": "ndd.tensor([1.0]) << ndd.tensor([1])",
        "invert_float": "~ndd.tensor([1.0])",
        "int_div_by_zero": "ndd.tensor([1]) // 0",
        "tensor_bool": "bool(ndd.tensor([1, 2]))",
    }
    out = {}
    for k, code in probes.items():
        try:
            r = eval(code)
            if hasattr(r, "dtype"):
                np.asarray(r)
                out[k] = {"code": code, "result_dtype": np_name(r.dtype),
                          "value": _jsonable(np.asarray(r))}
            else:
                out[k] = {"code": code, "result": repr(r)}
        except Exception as e:  # noqa: BLE001
            out[k] = {"code": code, "type": type(e).__name__, "message": str(e)}
    return out


def main():
    np.seterr(all="ignore")  # numpy-scalar-on-the-left cases compute in numpy
    with ndd.EvalMode.sync_cpu:
        prom = promotion_tables()
        rec = value_cases()
        rec.index["_error_messages"] = error_messages()

    with open(os.path.join(HERE, "arith_promotion.json"), "w") as f:
        json.dump(prom, f, indent=1, sort_keys=False)
        f.write("\n")
    np.savez(os.path.join(HERE, "arith_values.npz"), **rec.arrays)
    with open(os.path.join(HERE, "arith_values.json"), "w") as f:
        json.dump(rec.index, f, indent=1)
        f.write("\n")
    print("wrote arith_promotion.json, arith_values.npz/.json (%d cases)"
          % len(rec.index))


if __name__ == "__main__":
    main()
