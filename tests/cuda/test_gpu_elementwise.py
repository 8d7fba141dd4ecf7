"""GPU elementwise operators against their CPU twins: /, //, %, **, <<, >>, unary -,
~, abs, every ``ndd.math`` function, and +, -, *, min, max, comparisons, bitwise
operators and ``cast`` for every type with a kernel (bool, the integers, float16,
float32, float64) (ndd/_ops/gpu_elementwise.py, kernels/elementwise.cu).

Each test runs on the kernels built for the CPU and on a real GPU (``any_gpu``) and
compares tensor-tensor, tensor-scalar, scalar-tensor and ragged-batch results with
the CPU's: exactly, except for transcendental float functions, which may differ
in the last bits between math libraries.
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import install_fake  # noqa: E402

import ndd  # noqa: E402
from ndd._cuda import kernel_files  # noqa: E402
from ndd._cuda.fake import FakeDriver  # noqa: E402
from ndd._ops.gpu_elementwise import KERNEL_TYPES, KERNELS  # noqa: E402

TYPES = {name: dtype for dtype, name in KERNEL_TYPES.items()}
INTEGER = [name for name, dtype in TYPES.items() if dtype.kind in "iu"]
FLOAT = [name for name, dtype in TYPES.items() if dtype.kind == "f"]
NUMERIC = INTEGER + FLOAT
# Relative tolerance of transcendental functions per result type: a few units in
# the last place (for float16, computed in float32 and rounded, one unit).
TOLERANCE = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 4e-6, np.dtype(np.float64): 1e-13}

# name -> (the operator as a function of two operands, the types it accepts, whether exact)
BINARY = {
    "add": (lambda a, b: a + b, NUMERIC, True),
    "sub": (lambda a, b: a - b, NUMERIC, True),
    "mul": (lambda a, b: a * b, ["bool", *NUMERIC], True),
    "min": (ndd.math.min, NUMERIC, True),
    "max": (ndd.math.max, NUMERIC, True),
    "truediv": (lambda a, b: a / b, NUMERIC, True),
    "floordiv": (lambda a, b: a // b, NUMERIC, True),
    "mod": (lambda a, b: a % b, NUMERIC, True),
    "pow": (lambda a, b: a**b, NUMERIC, False),
    "math.pow": (ndd.math.pow, NUMERIC, False),
    "fpow": (ndd.math.fpow, NUMERIC, False),
    "atan2": (ndd.math.atan2, NUMERIC, False),
    "bitand": (lambda a, b: a & b, ["bool", *INTEGER], True),
    "bitor": (lambda a, b: a | b, ["bool", *INTEGER], True),
    "bitxor": (lambda a, b: a ^ b, ["bool", *INTEGER], True),
    "lshift": (lambda a, b: a << b, ["bool", *INTEGER], True),
    "rshift": (lambda a, b: a >> b, ["bool", *INTEGER], True),
    "eq": (lambda a, b: a == b, list(TYPES), True),
    "neq": (lambda a, b: a != b, list(TYPES), True),
    "lt": (lambda a, b: a < b, list(TYPES), True),
    "leq": (lambda a, b: a <= b, list(TYPES), True),
    "gt": (lambda a, b: a > b, list(TYPES), True),
    "geq": (lambda a, b: a >= b, list(TYPES), True),
}
BINARY_CASES = [(op, type_name) for op, (_, types, _) in BINARY.items() for type_name in types]

_EXACT_FUNCTIONS = ["sqrt", "rsqrt", "floor", "ceil", "fabs"]
_TRANSCENDENTAL = (
    "cbrt exp log log2 log10 sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh".split()
)
# name -> (the operator as a function of one operand, the types it accepts, whether exact)
UNARY = {
    "minus": (lambda a: -a, NUMERIC, True),
    "plus": (lambda a: +a, list(TYPES), True),
    "bitnot": (lambda a: ~a, ["bool", *INTEGER], True),
    "abs": (ndd.math.abs, NUMERIC, True),
    "builtin abs": (abs, NUMERIC, True),
    **{name: (getattr(ndd.math, name), NUMERIC, True) for name in _EXACT_FUNCTIONS},
    **{name: (getattr(ndd.math, name), NUMERIC, False) for name in _TRANSCENDENTAL},
}
UNARY_CASES = [(op, type_name) for op, (_, types, _) in UNARY.items() for type_name in types]

RAGGED_SHAPES = [(5, 7), (0, 3), (30, 10), (1, 1)]


def _values(op, dtype, shape, seed, divisor=False):
    """Random values of ``dtype`` with the edge cases of ``op`` among them."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if op in ("lshift", "rshift") and divisor:
            # Counts up to past the bit width; the CPU refuses negative ones.
            values = rng.integers(0, info.bits + 3, shape).astype(dtype)
        elif op in ("pow", "math.pow") and divisor:
            values = rng.integers(max(info.min, -3), 70, shape).astype(dtype)
        else:
            values = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
            edges = [info.min, info.max, 0, 1, -1, 7, -7, 2] if info.min else [0, info.max, 1, 7, 2]
            values.flat[: min(n, len(edges))] = np.array(edges[:n]).astype(dtype)
        if divisor and op in ("floordiv", "mod"):
            values[values == 0] = 3  # the CPU raises for an integer divisor of 0
            if info.min and n >= 2:
                values.flat[:2] = [-1, -1]  # MIN // -1 wraps, MIN % -1 is 0
        return values
    scale = 3.0 if op not in ("add", "sub", "mul", "min", "max") else 1000.0
    values = (rng.standard_normal(shape) * scale).astype(dtype)
    edges = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 7.0, 1e30, 1e-30]
    if divisor:
        edges = [3.0, -3.0, np.inf, -np.inf, 0.0, -0.0, np.nan, 0.5, 2.0, -7.0, 1e-30, 1e30]
    if op in ("pow", "math.pow", "fpow", "atan2"):
        # numpy's vectorised float functions disagree with C's on some infinite operands.
        edges = [e for e in edges if not np.isinf(e)]
    values.flat[: min(n, len(edges))] = np.array(edges[:n]).astype(dtype)
    return values


def _assert_same(gpu_result, cpu_result, exact=True):
    assert gpu_result.dtype == cpu_result.dtype
    assert gpu_result.shape == cpu_result.shape
    g, c = np.asarray(gpu_result.cpu()), np.asarray(cpu_result)
    if exact or g.dtype.kind != "f":
        np.testing.assert_array_equal(g, c)
    else:
        tol = TOLERANCE[g.dtype]
        np.testing.assert_allclose(g, c, rtol=tol, atol=tol)


def _assert_batches_same(gpu_batch, cpu_batch, exact=True):
    for g, c in zip(gpu_batch.cpu(), cpu_batch, strict=True):
        _assert_same(g, c, exact)


@pytest.mark.parametrize("op, type_name", BINARY_CASES)
def test_gpu_binary_op_matches_the_cpu(op, type_name, any_gpu):
    fn, _, exact = BINARY[op]
    dtype = TYPES[type_name]
    a, b = _values(op, dtype, (33, 65), 1), _values(op, dtype, (33, 65), 2, divisor=True)
    with np.errstate(all="ignore"):
        _assert_same(fn(ndd.tensor(a).gpu(), ndd.tensor(b).gpu()), fn(ndd.tensor(a), ndd.tensor(b)), exact)
        for scalar in (b.flat[7], b.flat[8]):
            s = ndd.tensor(np.array(scalar, dtype))
            _assert_same(fn(ndd.tensor(a).gpu(), s), fn(ndd.tensor(a), s), exact)
        s = ndd.tensor(np.array(a.flat[9], dtype))
        _assert_same(fn(s, ndd.tensor(b).gpu()), fn(s, ndd.tensor(b)), exact)
        xs = [_values(op, dtype, s, 3 + i) for i, s in enumerate(RAGGED_SHAPES)]
        ys = [_values(op, dtype, s, 9 + i, divisor=True) for i, s in enumerate(RAGGED_SHAPES)]
        _assert_batches_same(
            fn(ndd.batch(xs).gpu(), ndd.batch(ys).gpu()), fn(ndd.batch(xs), ndd.batch(ys)), exact
        )
        s = ndd.tensor(np.array(b.flat[7], dtype))
        _assert_batches_same(fn(ndd.batch(xs).gpu(), s), fn(ndd.batch(xs), s), exact)


@pytest.mark.parametrize("op", ["truediv", "floordiv", "mod", "pow", "fpow", "atan2", "lshift", "rshift"])
@pytest.mark.parametrize("left, right", [(np.uint8, np.int8), (np.int16, np.float16), (np.uint64, np.int64)])
def test_gpu_binary_op_promotes_as_the_cpu(op, left, right, any_gpu):
    fn, _, exact = BINARY[op]
    if op in ("lshift", "rshift") and np.dtype(right).kind == "f":
        pytest.skip("shifts take integers only")
    a, b = _values(op, left, (200,), 1), _values(op, right, (200,), 2, divisor=True)
    if op in ("floordiv", "mod", "lshift", "rshift", "pow") and np.dtype(right).kind == "i":
        b = np.abs(b.astype(np.int64)).clip(1, 60).astype(right)
    with np.errstate(all="ignore"):
        _assert_same(fn(ndd.tensor(a).gpu(), ndd.tensor(b).gpu()), fn(ndd.tensor(a), ndd.tensor(b)), exact)
        # A Python scalar is an int32 (float32) operand.
        _assert_same(fn(ndd.tensor(a).gpu(), 3), fn(ndd.tensor(a), 3), exact)
        if op not in ("lshift", "rshift"):
            _assert_same(fn(ndd.tensor(a).gpu(), 2.5), fn(ndd.tensor(a), 2.5), exact)


@pytest.mark.parametrize("op, type_name", UNARY_CASES)
def test_gpu_unary_op_matches_the_cpu(op, type_name, any_gpu):
    fn, _, exact = UNARY[op]
    dtype = TYPES[type_name]
    a = _values(op, dtype, (33, 65), 1)
    with np.errstate(all="ignore"):
        _assert_same(fn(ndd.tensor(a).gpu()), fn(ndd.tensor(a)), exact)
        xs = [_values(op, dtype, s, 3 + i) for i, s in enumerate(RAGGED_SHAPES)]
        _assert_batches_same(fn(ndd.batch(xs).gpu()), fn(ndd.batch(xs)), exact)


def _on(device, value):
    """A numpy array as a Tensor on ``device``; host Tensors (the scalars) as they are."""
    if isinstance(value, np.ndarray):
        return ndd.tensor(value).gpu() if device == "gpu" else ndd.tensor(value)
    return value


@pytest.mark.parametrize("type_name", NUMERIC)
def test_gpu_clamp_matches_the_cpu_with_any_operands_on_the_host(type_name, any_gpu):
    dtype = TYPES[type_name]
    x, lo, hi = (_values("clamp", dtype, (40, 3), seed) for seed in (1, 2, 3))
    x_s, lo_s, hi_s = (ndd.tensor(np.array(x.flat[i], dtype)) for i in (5, 10, 20))
    for operands in [(x, lo_s, hi_s), (x, lo, hi), (x, lo, hi_s), (x, lo_s, hi), (x_s, lo, hi)]:
        _assert_same(
            ndd.math.clamp(*[_on("gpu", v) for v in operands]),
            ndd.math.clamp(*[_on("cpu", v) for v in operands]),
        )
    xs = [_values("clamp", dtype, s, 3 + i) for i, s in enumerate(RAGGED_SHAPES)]
    _assert_batches_same(
        ndd.math.clamp(ndd.batch(xs).gpu(), lo_s, hi_s), ndd.math.clamp(ndd.batch(xs), lo_s, hi_s)
    )
    los = [_values("clamp", dtype, s, 9 + i) for i, s in enumerate(RAGGED_SHAPES)]
    _assert_batches_same(
        ndd.math.clamp(ndd.batch(xs).gpu(), ndd.batch(los).gpu(), hi_s),
        ndd.math.clamp(ndd.batch(xs), ndd.batch(los), hi_s),
    )


@pytest.mark.parametrize("target", list(TYPES))
@pytest.mark.parametrize("source", list(TYPES))
def test_gpu_cast_matches_the_cpu(source, target, any_gpu):
    values = _values("cast", TYPES[source], (1000,), 5)
    if values.dtype.kind == "f":
        edges = [0.5, -0.5, 1.5, 2.5, -2.5, 254.5, 255.5, -0.4, 32767.5, 65504, 65519, 65520, 2**31 - 1]
        edges += [2**31, -(2**31) - 1, 2**63, 2**64, 1e300, -1e300, 6e-8, 3e-8, 2.9802322387695312e-08]
        edges += [1e-5, 6.1e-5, 0.00006103515625, 1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-11 + 2**-40]
        with np.errstate(all="ignore"):
            values[12 : 12 + len(edges)] = np.array(edges).astype(values.dtype)
    _assert_same(
        ndd.cast(ndd.tensor(values).gpu(), dtype=TYPES[target]),
        ndd.cast(ndd.tensor(values), dtype=TYPES[target]),
    )
    batch = [values[:10], values[10:500], values[500:]]
    _assert_batches_same(
        ndd.cast(ndd.batch(batch).gpu(), dtype=TYPES[target]), ndd.cast(ndd.batch(batch), dtype=TYPES[target])
    )


def test_every_float16_value_converts_as_numpy(any_gpu):
    halves = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    as_float = ndd.cast(ndd.tensor(halves).gpu(), dtype=ndd.float32)
    np.testing.assert_array_equal(np.asarray(as_float.cpu()), halves.astype(np.float32))
    # Every float16 and the points halfway between neighbours, from float32 and float64.
    wide = halves.astype(np.float64)
    finite = np.sort(wide[np.isfinite(wide)])
    between = np.concatenate([finite, (finite[1:] + finite[:-1]) / 2, [65519.99, 65520.0, 1e5, np.nan]])
    for dtype in (np.float32, np.float64):
        values = between.astype(dtype)
        back = ndd.cast(ndd.tensor(values).gpu(), dtype=ndd.float16)
        np.testing.assert_array_equal(np.asarray(back.cpu()), values.astype(np.float16))


# -- edge behaviour -------------------------------------------------------------------


@pytest.mark.parametrize("type_name", ["i8", "i32", "i64", "u16", "u64"])
@pytest.mark.parametrize("op", ["floordiv", "mod"])
def test_a_gpu_integer_divisor_of_zero_gives_zero_as_numpy(op, type_name, any_gpu):
    # The CPU raises; the GPU does not read its data back to check (module docstring).
    fn = BINARY[op][0]
    dtype = TYPES[type_name]
    a = np.array([5, 0, 7, 9], dtype)
    b = np.array([0, 0, 2, 0], dtype)
    expected = (
        np.floor_divide(a, np.where(b == 0, 1, b)) if op == "floordiv" else np.mod(a, np.where(b == 0, 1, b))
    )
    expected[b == 0] = 0
    result = fn(ndd.tensor(a).gpu(), ndd.tensor(b).gpu())
    np.testing.assert_array_equal(np.asarray(result.cpu()), expected)


@pytest.mark.parametrize(
    "op, message", [("floordiv", "Integer division by zero"), ("mod", "Integer modulo by zero")]
)
def test_a_host_scalar_integer_divisor_of_zero_raises_as_on_the_cpu(op, message, any_gpu):
    fn = BINARY[op][0]
    x = ndd.tensor(np.arange(4, dtype=np.int32))
    for operand in (x, x.gpu()):
        with pytest.raises(ZeroDivisionError, match=message):
            fn(operand, 0).evaluate()


def test_a_host_scalar_float_divisor_of_zero_gives_infinities_and_nan(any_gpu):
    x = np.array([1.0, -1.0, 0.0, np.nan], np.float32)
    for fn in (BINARY["truediv"][0], BINARY["floordiv"][0], BINARY["mod"][0]):
        with np.errstate(all="ignore"):
            _assert_same(fn(ndd.tensor(x).gpu(), 0.0), fn(ndd.tensor(x), 0.0))
    _assert_same(ndd.tensor(np.array([1, 0], np.int32)).gpu() / 0, ndd.tensor(np.array([1, 0], np.int32)) / 0)


@pytest.mark.parametrize("op", ["lshift", "rshift"])
def test_a_negative_host_shift_count_raises_as_on_the_cpu(op, any_gpu):
    fn = BINARY[op][0]
    x = ndd.tensor(np.arange(4, dtype=np.int32))
    for operand in (x, x.gpu()):
        with pytest.raises(ValueError, match="negative shift count"):
            fn(operand, -1).evaluate()


@pytest.mark.parametrize("type_name", ["i8", "i16", "i32", "i64"])
def test_negative_gpu_shift_counts_give_numpys_results(type_name, any_gpu):
    dtype = TYPES[type_name]
    a = np.array([5, -5, 5, -5], dtype)
    b = np.array([-1, -1, -100, 1], dtype)
    left = ndd.tensor(a).gpu() << ndd.tensor(b).gpu()
    right = ndd.tensor(a).gpu() >> ndd.tensor(b).gpu()
    np.testing.assert_array_equal(np.asarray(left.cpu()), np.left_shift(a, b))
    np.testing.assert_array_equal(np.asarray(right.cpu()), np.right_shift(a, b))


def test_integer_powers_with_negative_exponents_are_truncated_as_on_the_cpu(any_gpu):
    base = np.array([1, -1, -1, 2, -2, 0, 5, 3], np.int32)
    exponent = np.array([-3, -3, -2, -1, -1, 3, 0, 19], np.int32)
    _assert_same(
        ndd.tensor(base).gpu() ** ndd.tensor(exponent).gpu(), ndd.tensor(base) ** ndd.tensor(exponent)
    )
    _assert_same(ndd.tensor(base).gpu() ** -1, ndd.tensor(base) ** -1)


# -- broadcasting ----------------------------------------------------------------------------------

R = np.random.default_rng(11)


def _ints(*shape):
    return R.integers(1, 9, shape).astype(np.int32)


def _floats(*shape):
    return R.standard_normal(shape).astype(np.float32)


# (the call, its operands: arrays become Tensors, lists of arrays Batches)
BROADCASTS = {
    "column // row": (lambda a, b: a // b, [_ints(3, 1), _ints(1, 4)]),
    "atan2 of a matrix and a row": (ndd.math.atan2, [_floats(2, 1), _floats(2)]),
    "tensor + ragged batch": (
        lambda a, b: a + b,
        [_floats(4), [_floats(2, 4), _floats(3, 4), _floats(0, 4)]],
    ),
    "ragged batch * tensor column": (lambda a, b: a * b, [[_floats(2, 3), _floats(5, 3)], _floats(3)]),
    "batches broadcast per sample": (
        lambda a, b: a - b,
        [[_ints(2, 1), _ints(1, 3)], [_ints(1, 5), _ints(4, 3)]],
    ),
    "batch << batch of single values": (lambda a, b: a << b, [[_ints(3), _ints(5)], [_ints(1), _ints(1)]]),
    "clamp of a batch with tensor bounds": (
        ndd.math.clamp,
        [[_floats(2, 3), _floats(1, 3)], _floats(3) - 1, 0.5],
    ),
    "comparison of a batch with a tensor": (lambda a, b: a < b, [[_floats(2, 2), _floats(3, 2)], _floats(2)]),
}


def _operand(value, gpu):
    if isinstance(value, list):
        batch = ndd.batch(value)
        return batch.gpu() if gpu else batch
    if isinstance(value, np.ndarray):
        tensor = ndd.tensor(value)
        return tensor.gpu() if gpu else tensor
    return value


@pytest.mark.parametrize("case", BROADCASTS)
def test_broadcasting_operands_match_the_cpu(case, any_gpu):
    call, operands = BROADCASTS[case]
    gpu = call(*[_operand(x, True) for x in operands])
    cpu = call(*[_operand(x, False) for x in operands])
    exact = case != "atan2 of a matrix and a row"
    if isinstance(cpu, ndd.Batch):
        assert gpu.shape == cpu.shape and gpu.dtype == cpu.dtype
        _assert_batches_same(gpu, cpu, exact)
    else:
        _assert_same(gpu, cpu, exact)


def test_a_tensor_against_a_batch_launches_once_per_sample(fake):
    a = ndd.tensor(_floats(4)).gpu()
    b = ndd.batch([_floats(2, 4), _floats(3, 4)]).gpu()
    before = len(fake.launches)
    (a + b).evaluate()
    names = [launch.function for launch in fake.launches[before:]]
    assert names.count("add_f32") == 2


def test_a_host_array_operand_is_refused_naming_the_operator(any_gpu):
    out = ndd.tensor(np.ones(3, np.int32)).gpu() % ndd.tensor(np.ones(3, np.int32))
    with pytest.raises(NotImplementedError, match=r"operator % .*only be a scalar.*lacks it"):
        out.evaluate()


def test_every_elementwise_operator_has_a_gpu_kernel():
    from ndd._ops.arithmetic import MATH_FUNCTIONS, OPERATORS

    missing = [op.qualname for op in [*OPERATORS.values(), *MATH_FUNCTIONS.values()] if op.gpu_kernel is None]
    assert missing == []


# -- what is launched (recording FakeDriver: the kernels do not run) ---------------------


@pytest.fixture
def fake(built, monkeypatch):
    """A FakeDriver that records launches of the kernels built for the test session."""
    monkeypatch.setattr(kernel_files, "KERNELS_DIR", built)
    yield from install_fake(FakeDriver(devices=2))


def _launched(fake, make):
    make(lambda a: ndd.tensor(a).gpu()).evaluate()
    return [launch.function for launch in fake.launches]


@pytest.mark.parametrize(
    "make, kernels",
    [
        (lambda g: g(np.ones(3, np.int32)) // 2, ["floordiv_scalar_rhs_i32"]),
        (lambda g: 2 % g(np.ones(3, np.int16)), ["cast_i16_to_i32", "mod_scalar_lhs_i32"]),
        (
            lambda g: g(np.ones(3, np.uint8)) / g(np.ones(3, np.uint8)),
            ["cast_u8_to_f32"] * 2 + ["truediv_f32"],
        ),
        (lambda g: g(np.ones(3, np.uint16)) << g(np.ones(3, np.uint16)), ["lshift_u16"]),
        (lambda g: ~g(np.ones(3, np.bool_)), ["bitnot_bool"]),
        (lambda g: -g(np.ones(3, np.int8)), ["minus_i8"]),
        (lambda g: ndd.math.sqrt(g(np.ones(3, np.int32))), ["cast_i32_to_f32", "sqrt_f32"]),
        (lambda g: ndd.math.exp(g(np.ones(3, np.float16))), ["exp_f16"]),
        # uint64 promoted to int64 wraps as numpy's astype: the same bits, no conversion.
        (lambda g: g(np.ones(3, np.uint64)) + g(np.ones(3, np.int64)), ["add_i64"]),
        (lambda g: ndd.math.clamp(g(np.ones(3, np.float32)), 0.0, 1.0), ["clamp_scalar_bounds_f32"]),
        (
            lambda g: ndd.math.clamp(g(np.ones(3, np.float32)), g(np.zeros(3, np.float32)), 1.0),
            ["fill_scalar_f32", "clamp_f32"],
        ),
    ],
)
def test_each_operator_launches_its_kernel_of_the_compute_type(fake, make, kernels):
    assert _launched(fake, make) == kernels


def test_a_float16_scalar_is_passed_as_its_bits(fake):
    x = ndd.tensor(np.ones(3, np.float16)).gpu()
    (x * ndd.tensor(np.float16(1.5))).evaluate()
    (launch,) = fake.launches
    assert launch.function == "mul_scalar_rhs_f16"
    assert launch.args[1] == 0x3E00  # float16 1.5
    assert launch.param_types[1] == "u16"


def test_every_kernel_of_the_table_is_built(built):
    built_kernels = kernel_files.manifest(built)["modules"]["elementwise"]["kernels"]
    expected = [f"{name}_{KERNEL_TYPES[dtype]}" for name, types in KERNELS.items() for dtype in types]
    assert [name for name in expected if name not in built_kernels] == []


@pytest.mark.parametrize("like_on_gpu", [True, False])
@pytest.mark.parametrize("target", [np.uint8, np.int16, np.float32, np.float64, np.float16])
def test_cast_like_matches_the_cpu(target, like_on_gpu, any_gpu):
    values = (np.random.default_rng(3).standard_normal((5, 7)) * 300).astype(np.float32)
    like = ndd.tensor(np.zeros(2, target))
    gpu_like = like.gpu() if like_on_gpu else like
    _assert_same(ndd.cast_like(ndd.tensor(values).gpu(), gpu_like), ndd.cast_like(ndd.tensor(values), like))
    samples = [values, values[:2, :3].copy()]
    like_batch = ndd.batch([np.zeros(1, target)] * 2)
    gpu_like_batch = like_batch.gpu() if like_on_gpu else like_batch
    _assert_batches_same(
        ndd.cast_like(ndd.batch(samples).gpu(), gpu_like_batch), ndd.cast_like(ndd.batch(samples), like_batch)
    )


@pytest.mark.parametrize(
    "call, dtype",
    [
        (lambda b: b + 1, "i32"),
        (lambda b: -b, "i32"),
        (lambda b: b < 1, "bool"),
        (lambda b: ndd.math.sqrt(b), "f32"),
        (lambda b: ndd.cast(b, dtype=ndd.uint8), "u8"),
        (lambda b: ndd.flip(b, horizontal=1), "i32"),
    ],
)
def test_operators_on_an_empty_gpu_batch_give_an_empty_gpu_batch(call, dtype, any_gpu):
    out = call(ndd.batch([], dtype=ndd.int32, layout="HW", device="gpu"))
    out.evaluate()
    assert out.batch_size == 0
    assert str(out.dtype) == dtype
    assert out.device.device_type == "gpu"
    assert out.cpu().shape == []
