"""The random operators on the GPU (ndd/_ops/gpu_random.py, kernels/random.cu).

GPU draws are not the CPU's values for the same RNG state (nor are the
reference's), so these tests compare what must agree: the outputs' metadata
with the CPU's, the RNG's advance, the errors. The values are checked for
determinism, bounds, per-sample arguments, the generator's exact output where
the arithmetic is exact, and their distributions (moments and frequencies on
many draws, with generous bounds: with a fixed seed nothing is left to chance).
Each test taking ``any_gpu`` runs with the kernels built for the CPU and on a GPU.
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import install_fake  # noqa: E402

import ndd  # noqa: E402
from ndd._cuda import kernel_files  # noqa: E402
from ndd._cuda.fake import FakeDriver  # noqa: E402
from ndd._prepare.philox import philox4x32_10  # noqa: E402

UNIFORM_TYPES = [ndd.uint8, ndd.int8, ndd.uint16, ndd.int16, ndd.uint32, ndd.int32]
UNIFORM_TYPES += [ndd.uint64, ndd.int64, ndd.float32, ndd.float64]

# (operator, keyword arguments): every operator, output type and way of giving
# shapes and arguments, for the metadata and determinism tests.
CASES = [
    *[(ndd.random.uniform, {"shape": [7, 3], "dtype": t}) for t in UNIFORM_TYPES],
    *[(ndd.random.normal, {"shape": [5], "dtype": t}) for t in UNIFORM_TYPES],
    *[(ndd.random.coin_flip, {"shape": [4, 2], "dtype": t}) for t in (ndd.int32, ndd.uint8, ndd.bool)],
    *[(ndd.random.beta, {"shape": [6], "dtype": t}) for t in (ndd.float32, ndd.float64)],
    (ndd.random.uniform, {}),
    (ndd.random.uniform, {"values": [1.5, 2, 7], "shape": [9], "dtype": ndd.int16}),
    (ndd.random.uniform, {"range": [3, 4], "batch_size": 3}),
    (ndd.random.normal, {"mean": 5.0, "stddev": 0.5, "shape": [2, 2], "batch_size": 2}),
    (ndd.random.coin_flip, {"probability": 0.25, "batch_size": 4}),
    (ndd.random.beta, {"alpha": 0.5, "beta": 3.0, "shape": [3], "batch_size": 2}),
    (ndd.random.choice, {"a": 5, "shape": [8]}),
    (ndd.random.choice, {"a": np.uint8(200), "shape": [2, 3], "p": None}),
    (ndd.random.choice, {"a": np.int16(4), "shape": [6], "p": [0.1, 0.2, 0.3, 0.4]}),
    (ndd.random.choice, {"a": np.arange(10.0).reshape(5, 2), "shape": [3]}),
    (ndd.random.choice, {"a": np.int64(3), "batch_size": 5}),
]


@pytest.fixture
def fake(built, monkeypatch):
    """A FakeDriver recording launches (not running them) of the session's kernel build."""
    monkeypatch.setattr(kernel_files, "KERNELS_DIR", built)
    yield from install_fake(FakeDriver(devices=1))


def _run(op, kwargs, device, seed=7, rng=None):
    """``op`` called with ``kwargs`` on ``device`` (``a``, when present, is its input)."""
    kwargs = dict(kwargs)
    rng = ndd.random.RNG(seed=seed) if rng is None else rng
    inputs = (kwargs.pop("a"),) if "a" in kwargs else ()
    return op(*inputs, device=device, rng=rng, **kwargs)


def _samples(result):
    """The host arrays of a Tensor (one) or Batch (each sample)."""
    result = result.cpu()
    if isinstance(result, ndd.Batch):
        return [np.asarray(s) for s in result]
    return [np.asarray(result)]


def _values(result):
    return np.concatenate([s.reshape(-1) for s in _samples(result)])


def _case_id(case):
    op, kwargs = case
    return f"{op.__name__}-" + "-".join(f"{k}={v}" for k, v in kwargs.items() if k != "a")


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_outputs_are_those_of_the_cpu_on_the_gpu(case, any_gpu):
    op, kwargs = case
    gpu, cpu = _run(op, kwargs, "gpu"), _run(op, kwargs, None)
    assert gpu.device.device_type == "gpu"
    assert type(gpu) is type(cpu)
    assert gpu.dtype == cpu.dtype
    assert gpu.layout == cpu.layout
    assert [s.shape for s in _samples(gpu)] == [s.shape for s in _samples(cpu)]
    assert [s.dtype for s in _samples(gpu)] == [s.dtype for s in _samples(cpu)]


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_the_same_rng_state_gives_the_same_values(case, any_gpu):
    op, kwargs = case
    first = _samples(_run(op, kwargs, "gpu", seed=3))
    again = _samples(_run(op, kwargs, "gpu", seed=3))
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("op", [ndd.random.uniform, ndd.random.normal, ndd.random.coin_flip, ndd.random.beta])
def test_the_next_call_and_another_seed_give_other_values(op, any_gpu):
    rng = ndd.random.RNG(seed=11)
    first = _values(op(shape=[64], device="gpu", rng=rng))
    second = _values(op(shape=[64], device="gpu", rng=rng))
    other_seed = _values(op(shape=[64], device="gpu", rng=ndd.random.RNG(seed=12)))
    assert not np.array_equal(first, second)
    assert not np.array_equal(first, other_seed)


def test_choice_next_call_gives_other_values(any_gpu):
    rng = ndd.random.RNG(seed=11)
    first = _values(ndd.random.choice(1000, shape=[64], device="gpu", rng=rng))
    second = _values(ndd.random.choice(1000, shape=[64], device="gpu", rng=rng))
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("case", CASES[-6:], ids=[_case_id(c) for c in CASES[-6:]])
def test_a_gpu_call_advances_the_rng_as_a_cpu_call(case, any_gpu):
    op, kwargs = case
    gpu_rng, cpu_rng = ndd.random.RNG(seed=5), ndd.random.RNG(seed=5)
    _run(op, kwargs, "gpu", rng=gpu_rng).evaluate()
    _run(op, kwargs, None, rng=cpu_rng).evaluate()
    assert gpu_rng.get_state() == cpu_rng.get_state()
    assert gpu_rng() == cpu_rng()


def test_the_default_rng_and_set_seed_drive_the_gpu(any_gpu):
    ndd.random.set_seed(123)
    first = _values(ndd.random.normal(shape=[32], device="gpu"))
    second = _values(ndd.random.normal(shape=[32], device="gpu"))
    ndd.random.set_seed(123)
    np.testing.assert_array_equal(_values(ndd.random.normal(shape=[32], device="gpu")), first)
    np.testing.assert_array_equal(_values(ndd.random.normal(shape=[32], device="gpu")), second)


def test_a_restored_rng_state_repeats_the_draws(any_gpu):
    rng = ndd.random.RNG(seed=9)
    ndd.random.uniform(shape=[3], device="gpu", rng=rng).evaluate()
    saved = str(rng.get_state())
    expected = _values(ndd.random.uniform(shape=[50], device="gpu", rng=rng))
    restored = ndd.random.RNG(state=saved)
    np.testing.assert_array_equal(
        _values(ndd.random.uniform(shape=[50], device="gpu", rng=restored)), expected
    )


def test_a_checkpointed_rng_resumes_the_draws(tmp_path, any_gpu):
    rng = ndd.random.RNG(seed=10)
    ndd.random.coin_flip(shape=[5], device="gpu", rng=rng).evaluate()
    ckpt = ndd.checkpoint.Checkpoint()
    ckpt.register(rng, "rng")
    ckpt.collect()
    path = ckpt.save(str(tmp_path / "ckpt.json"))
    expected = _values(ndd.random.beta(alpha=0.5, shape=[50], device="gpu", rng=rng))
    resumed, fresh = ndd.checkpoint.Checkpoint(), ndd.random.RNG(seed=0)
    resumed.load(path)
    resumed.register(fresh, "rng")
    np.testing.assert_array_equal(
        _values(ndd.random.beta(alpha=0.5, shape=[50], device="gpu", rng=fresh)), expected
    )


@pytest.mark.parametrize("mode", ["eager", "deferred", "sync_full"])
def test_values_do_not_depend_on_the_eval_mode(mode, any_gpu):
    expected = _values(ndd.random.normal(shape=[40], batch_size=3, device="gpu", rng=ndd.random.RNG(seed=4)))
    with getattr(ndd.EvalMode, mode):
        result = ndd.random.normal(shape=[40], batch_size=3, device="gpu", rng=ndd.random.RNG(seed=4))
        np.testing.assert_array_equal(_values(result), expected)


def _philox_words(rng_words, sample, element, count):
    """The first ``count`` words of an element's stream, as kernels/random.cu keys it."""
    k0, k1, k2, k3 = rng_words[:4]
    words = []
    block = 0
    while len(words) < count:
        counter = element & 0xFFFFFFFF | block << 32 | (sample ^ k3) << 64 | (k2 ^ element >> 32) << 96
        words += philox4x32_10(k0 | k1 << 32, counter)
        block += 1
    return words[:count]


def test_uniform_float64_is_philox4x32_10_of_the_key_and_element(any_gpu):
    rng = ndd.random.RNG(seed=2024)
    key_words = _drawn_words(rng.clone())
    out = ndd.random.uniform(range=[0, 1], shape=[5], batch_size=3, dtype=ndd.float64, device="gpu", rng=rng)
    for sample, values in enumerate(_samples(out)):
        for element, value in enumerate(values):
            w0, w1 = _philox_words(key_words, sample, element, 2)
            assert value == ((w0 >> 5) * 2.0**26 + (w1 >> 6)) * 2.0**-53


def _drawn_words(rng):
    """The words an operator call draws from ``rng`` (its RandomKey)."""
    return [rng() for _ in range(7)]


# --------------------------------------------------------------------------- launches


@pytest.mark.parametrize(
    "call, kernel",
    [
        (lambda rng, like: ndd.random.uniform(like, rng=rng), "random_uniform_range_f32"),
        (
            lambda rng, like: ndd.random.uniform(like, values=[1, 2], dtype=ndd.uint8, rng=rng),
            "random_uniform_values_u8",
        ),
        (lambda rng, like: ndd.random.normal(like, dtype=ndd.int64, rng=rng), "random_normal_i64"),
        (lambda rng, like: ndd.random.coin_flip(like, dtype=ndd.bool, rng=rng), "random_coin_flip_bool"),
        (lambda rng, like: ndd.random.beta(like, dtype=ndd.float64, rng=rng), "random_beta_f64"),
        (lambda rng, like: ndd.random.choice(np.int32(9), like, rng=rng), "random_choice"),
    ],
)
def test_a_ragged_batch_is_one_launch_keyed_by_the_call(call, kernel, fake):
    rng = ndd.random.RNG(seed=8)
    key_words = _drawn_words(rng.clone())
    like = ndd.batch([np.zeros((2, 3)), np.zeros((0, 3)), np.zeros((70, 5)), np.zeros((1, 1))]).gpu()
    call(rng, like).evaluate()
    (launch,) = fake.launches
    assert launch.function == kernel
    assert launch.grid[1] == 4  # one row of blocks per sample
    assert list(launch.args[-5:]) == [4, *key_words[:4]]  # the sample count, then the key


def test_nothing_is_launched_for_empty_samples(fake):
    ndd.random.normal(shape=[0, 3], batch_size=3, device="gpu", rng=ndd.random.RNG(seed=1)).evaluate()
    assert fake.launches == []


# --------------------------------------------------------------------------- bounds


@pytest.mark.parametrize("dtype", [ndd.float32, ndd.float64])
def test_uniform_floats_lie_in_the_half_open_range(dtype, any_gpu):
    values = _values(
        ndd.random.uniform(
            range=[-2, 3], shape=[20000], dtype=dtype, device="gpu", rng=ndd.random.RNG(seed=1)
        )
    )
    assert values.min() >= -2 and values.max() < 3


def test_uniform_float32_is_the_float64_draw_rounded(any_gpu):
    # As fine as float32 is near lo, as on the CPU and in the reference.
    rng = ndd.random.RNG(seed=2025)
    key_words = _drawn_words(rng.clone())
    out = ndd.random.uniform(range=[0, 1], shape=[4000], device="gpu", rng=rng)
    values = _samples(out)[0] if isinstance(out, ndd.Batch) else _values(out)
    for element in range(50):
        w0, w1 = _philox_words(key_words, 0, element, 2)
        assert values[element] == np.float32(((w0 >> 5) * 2.0**26 + (w1 >> 6)) * 2.0**-53)
    low = values[values < 0.25].astype(np.float64)
    assert np.mean(low * 2**24 % 1 != 0) > 0.75


def test_uniform_float32_stays_below_hi_where_rounding_reaches_it(any_gpu):
    # Half of float32's steps of [1, 1 + 2**-20) round up to hi when scaled.
    hi = 1 + 2.0**-20
    values = _values(
        ndd.random.uniform(range=[1, hi], shape=[5000], device="gpu", rng=ndd.random.RNG(seed=1))
    )
    assert values.min() >= 1 and values.max() < np.float32(hi)


@pytest.mark.parametrize("dtype", [ndd.uint8, ndd.int16, ndd.int32, ndd.uint64, ndd.int64])
def test_uniform_integers_are_the_range_rounded(dtype, any_gpu):
    values = _values(
        ndd.random.uniform(range=[0, 10], shape=[5000], dtype=dtype, device="gpu", rng=ndd.random.RNG(seed=1))
    )
    assert set(values.tolist()) == set(range(11))


def test_uniform_values_come_from_the_set(any_gpu):
    values = _values(
        ndd.random.uniform(
            values=[-1, 0.5, 9], shape=[3000], dtype=ndd.float64, device="gpu", rng=ndd.random.RNG(seed=1)
        )
    )
    assert set(values.tolist()) == {-1, 0.5, 9}


def test_uniform_values_convert_as_cast_does(any_gpu):
    # Round half away from zero and saturate, as ndd.cast: -0.5 -> -1, 2.5 -> 3, 300 -> 127.
    values = _values(
        ndd.random.uniform(
            values=[-0.5, 2.5, 300, -1e30],
            shape=[400],
            dtype=ndd.int8,
            device="gpu",
            rng=ndd.random.RNG(seed=1),
        )
    )
    assert set(values.tolist()) == {-1, 3, 127, -128}


@pytest.mark.parametrize(
    "dtype, mean, expected",
    [
        (ndd.uint8, 1000.0, 255),
        (ndd.uint8, -1000.0, 0),
        (ndd.int16, 1e9, 32767),
        (ndd.int64, -1e30, -(2**63)),
    ],
)
def test_normal_integers_saturate(dtype, mean, expected, any_gpu):
    values = _values(
        ndd.random.normal(mean=mean, shape=[100], dtype=dtype, device="gpu", rng=ndd.random.RNG(seed=1))
    )
    assert (values == expected).all()


def test_coin_flip_certain_outcomes(any_gpu):
    rng = ndd.random.RNG(seed=1)
    assert _values(ndd.random.coin_flip(probability=1.0, shape=[500], device="gpu", rng=rng)).all()
    assert not _values(ndd.random.coin_flip(probability=0.0, shape=[500], device="gpu", rng=rng)).any()


@pytest.mark.parametrize("alpha, beta", [(0.01, 0.02), (1.0, 1.0), (1e4, 1e-3)])
def test_beta_lies_in_the_unit_interval(alpha, beta, any_gpu):
    values = _values(
        ndd.random.beta(
            alpha=alpha, beta=beta, shape=[2000], dtype=ndd.float64, device="gpu", rng=ndd.random.RNG(seed=1)
        )
    )
    assert np.isfinite(values).all() and values.min() >= 0 and values.max() <= 1


# --------------------------------------------------------------------------- per-sample arguments


def test_uniform_per_sample_ranges(any_gpu):
    ranges = ndd.batch([np.float32([0, 1]), np.float32([10, 11]), np.float32([-5, -4])])
    out = ndd.random.uniform(range=ranges, shape=[500], device="gpu", rng=ndd.random.RNG(seed=1))
    for values, (lo, hi) in zip(_samples(out), [(0, 1), (10, 11), (-5, -4)], strict=True):
        assert values.min() >= lo and values.max() < hi and values.max() - values.min() > 0.9


def test_uniform_per_sample_values(any_gpu):
    values = ndd.batch([np.float32([1, 2]), np.float32([10, 11, 12])])
    out = ndd.random.uniform(values=values, shape=[300], device="gpu", rng=ndd.random.RNG(seed=1))
    first, second = _samples(out)
    assert set(first.tolist()) == {1, 2} and set(second.tolist()) == {10, 11, 12}


def test_normal_per_sample_mean_and_stddev(any_gpu):
    out = ndd.random.normal(
        mean=ndd.batch(np.float32([0, 100])),
        stddev=ndd.batch(np.float32([1, 10])),
        shape=[20000],
        device="gpu",
        rng=ndd.random.RNG(seed=1),
    )
    (a, b) = _samples(out)
    assert abs(a.mean()) < 0.05 and abs(a.std() - 1) < 0.05
    assert abs(b.mean() - 100) < 0.5 and abs(b.std() - 10) < 0.5


def test_coin_flip_per_sample_probability(any_gpu):
    out = ndd.random.coin_flip(
        probability=ndd.batch(np.float32([0.2, 0.8])), shape=[20000], device="gpu", rng=ndd.random.RNG(seed=1)
    )
    a, b = _samples(out)
    assert abs(a.mean() - 0.2) < 0.02 and abs(b.mean() - 0.8) < 0.02


def test_beta_per_sample_shapes(any_gpu):
    out = ndd.random.beta(
        alpha=ndd.batch(np.float32([2, 8])),
        beta=ndd.batch(np.float32([8, 2])),
        shape=[20000],
        device="gpu",
        rng=ndd.random.RNG(seed=1),
    )
    a, b = _samples(out)
    assert abs(a.mean() - 0.2) < 0.01 and abs(b.mean() - 0.8) < 0.01


def test_per_sample_shapes_and_a_ragged_shape_like_batch(any_gpu):
    rng = ndd.random.RNG(seed=1)
    shapes = ndd.batch([np.int32([2, 3]), np.int32([0, 1]), np.int32([4, 1])])
    out = ndd.random.uniform(shape=shapes, device="gpu", rng=rng)
    assert [s.shape for s in _samples(out)] == [(2, 3), (0, 1), (4, 1)]
    like = ndd.batch([np.zeros((5,), np.uint8), np.zeros((0,), np.uint8), np.zeros((300,), np.uint8)]).gpu()
    out = ndd.random.normal(like, rng=rng)
    assert out.device.device_type == "gpu"
    assert [s.shape for s in _samples(out)] == [(5,), (0,), (300,)]
    # Samples are independent streams: the shared prefix of two samples differs.
    values = _samples(out)
    assert not np.array_equal(values[0], values[2][:5])


def test_a_shape_like_tensor_gives_every_sample_its_shape(any_gpu):
    like = ndd.tensor(np.zeros((3, 2), np.float32)).gpu()
    out = ndd.random.coin_flip(like, batch_size=4, rng=ndd.random.RNG(seed=1))
    assert [s.shape for s in _samples(out)] == [(3, 2)] * 4


def test_more_samples_than_a_grid_has_rows(any_gpu):
    # The grid's y extent stops at 65535: the kernels loop over the samples beyond.
    out = ndd.random.coin_flip(
        batch_size=70000, probability=1.0, dtype=ndd.uint8, device="gpu", rng=ndd.random.RNG(seed=1)
    )
    assert (_values(out) == 1).all()


def test_an_empty_batch(any_gpu):
    out = ndd.random.uniform(batch_size=0, device="gpu", rng=ndd.random.RNG(seed=1))
    assert out.batch_size == 0 and out.dtype == ndd.float32


# --------------------------------------------------------------------------- distributions

N = 100_000


@pytest.mark.parametrize("dtype", [ndd.float32, ndd.float64])
def test_uniform_moments(dtype, any_gpu):
    values = _values(
        ndd.random.uniform(range=[2, 5], shape=[N], dtype=dtype, device="gpu", rng=ndd.random.RNG(seed=1))
    )
    assert abs(values.mean() - 3.5) < 0.02
    assert abs(values.var() - 0.75) < 0.02
    # Each tenth of the range holds about a tenth of the draws.
    counts = np.histogram(values, bins=10, range=(2, 5))[0]
    assert np.abs(counts / N - 0.1).max() < 0.01


@pytest.mark.parametrize("dtype", [ndd.float32, ndd.float64])
def test_normal_moments(dtype, any_gpu):
    values = _values(
        ndd.random.normal(mean=3, stddev=2, shape=[N], dtype=dtype, device="gpu", rng=ndd.random.RNG(seed=1))
    )
    z = (values.astype(np.float64) - 3) / 2
    assert abs(z.mean()) < 0.02
    assert abs(z.std() - 1) < 0.02
    assert abs(np.mean(z**3)) < 0.05  # symmetric
    assert abs(np.mean(z**4) - 3) < 0.1  # normal tails
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.01


def test_coin_flip_frequency(any_gpu):
    values = _values(
        ndd.random.coin_flip(probability=0.3, shape=[N], device="gpu", rng=ndd.random.RNG(seed=1))
    )
    assert abs(values.mean() - 0.3) < 0.01


@pytest.mark.parametrize("alpha, beta", [(2.0, 5.0), (0.5, 0.5), (0.1, 3.0)])
def test_beta_moments(alpha, beta, any_gpu):
    values = _values(
        ndd.random.beta(
            alpha=alpha,
            beta=beta,
            shape=[N // 2],
            dtype=ndd.float64,
            device="gpu",
            rng=ndd.random.RNG(seed=1),
        )
    )
    mean = alpha / (alpha + beta)
    var = alpha * beta / ((alpha + beta) ** 2 * (alpha + beta + 1))
    assert abs(values.mean() - mean) < 0.01
    assert abs(values.var() - var) < 0.1 * var


def test_uniform_values_frequencies(any_gpu):
    values = _values(
        ndd.random.uniform(values=[1, 2, 3, 4, 5], shape=[N], device="gpu", rng=ndd.random.RNG(seed=1))
    )
    counts = np.bincount(values.astype(np.int64), minlength=6)[1:]
    assert np.abs(counts / N - 0.2).max() < 0.01


@pytest.mark.parametrize("p", [None, [0.1, 0.2, 0.0, 0.3, 0.4]])
def test_choice_frequencies_follow_p(p, any_gpu):
    values = _values(ndd.random.choice(5, shape=[N], p=p, device="gpu", rng=ndd.random.RNG(seed=1)))
    expected = np.full(5, 0.2) if p is None else np.array(p)
    counts = np.bincount(values, minlength=5)
    assert np.abs(counts / N - expected).max() < 0.01
    if p is not None:
        assert counts[2] == 0  # a choice of probability 0 never comes


# --------------------------------------------------------------------------- choice


def test_choice_takes_rows_of_a_gpu_array(any_gpu):
    a = np.arange(40, dtype=np.int16).reshape(10, 2, 2)
    out = ndd.random.choice(ndd.tensor(a, layout="ABC").gpu(), shape=[200], rng=ndd.random.RNG(seed=1))
    values = _values(out).reshape(200, 2, 2)
    assert out.layout == "ABC" and out.dtype == ndd.int16
    rows = values[:, 0, 0] // 4
    np.testing.assert_array_equal(values, a[rows])
    assert set(rows.tolist()) == set(range(10))


def test_choice_from_a_gpu_batch_draws_from_each_sample(any_gpu):
    a = ndd.batch([np.float32([1, 2, 3]), np.float32([10, 20]), np.float32([-7])]).gpu()
    out = ndd.random.choice(a, shape=[100], p=None, rng=ndd.random.RNG(seed=1))
    sets = [set(s.tolist()) for s in _samples(out)]
    assert sets == [{1, 2, 3}, {10, 20}, {-7}]


def test_choice_from_host_data_on_the_gpu(any_gpu):
    a = ndd.batch([np.uint8([5, 6]), np.uint8([7, 8, 9])])
    out = ndd.random.choice(a, shape=[100], device="gpu", rng=ndd.random.RNG(seed=1))
    assert out.device.device_type == "gpu"
    assert [set(s.tolist()) for s in _samples(out)] == [{5, 6}, {7, 8, 9}]


def test_choice_per_sample_p_and_scalars(any_gpu):
    a = ndd.batch([np.int32(3), np.int32(100)])
    p = ndd.batch([np.float32([0, 0, 1]), np.float32(np.eye(100)[42])])
    out = ndd.random.choice(a, shape=[50], p=p, device="gpu", rng=ndd.random.RNG(seed=1))
    first, second = _samples(out)
    assert (first == 2).all() and (second == 42).all() and first.dtype == np.int32


def test_choice_of_a_large_uint64_count(any_gpu):
    values = _values(
        ndd.random.choice(np.uint64(2**63 + 5), shape=[1000], device="gpu", rng=ndd.random.RNG(seed=1))
    )
    assert values.dtype == np.uint64 and values.max() > 2**62


def test_choice_refuses_a_scalar_a_in_gpu_memory(any_gpu):
    with pytest.raises(NotImplementedError, match="ndd.random.choice on the GPU: a scalar 'a'"):
        ndd.random.choice(ndd.tensor(np.int32(5)).gpu(), shape=[3], rng=ndd.random.RNG(seed=1))


# --------------------------------------------------------------------------- errors


def _error(call):
    try:
        call().evaluate()
    except Exception as e:  # noqa: BLE001 - the exception is the result compared
        return type(e), str(e)
    return None


ERROR_CASES = [
    (ndd.random.uniform, {"range": [1, 0]}),
    (ndd.random.uniform, {"range": [0, 1], "values": [1, 2]}),
    (ndd.random.uniform, {"values": []}),
    (ndd.random.uniform, {"dtype": ndd.float16}),
    (ndd.random.uniform, {"shape": [-1]}),
    (ndd.random.normal, {"stddev": -1}),
    (ndd.random.coin_flip, {"probability": 1.5}),
    (ndd.random.coin_flip, {"dtype": ndd.float32}),
    (ndd.random.beta, {"alpha": 0}),
    (ndd.random.beta, {"dtype": ndd.int32}),
    (ndd.random.choice, {"a": 0}),
    (ndd.random.choice, {"a": 3, "p": [0.5, 0.5]}),
    (ndd.random.choice, {"a": 3, "p": [0.1, 0.2, 0.5]}),
    (ndd.random.choice, {"a": np.float32(3)}),
    (ndd.random.choice, {"a": np.zeros((0, 2))}),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[_case_id(c) for c in ERROR_CASES])
def test_bad_arguments_fail_as_on_the_cpu(case, any_gpu):
    op, kwargs = case
    gpu = _error(lambda: _run(op, kwargs, "gpu"))
    assert gpu is not None
    assert gpu == _error(lambda: _run(op, kwargs, None))


def test_arguments_computed_later_fail_as_on_the_cpu(any_gpu):
    def call(device):
        with ndd.EvalMode.deferred:
            bad_range = ndd.reshape(ndd.tensor(np.float32([6, 5])), shape=[2])
            return ndd.random.uniform(range=bad_range, shape=[3], device=device, rng=ndd.random.RNG(seed=1))

    gpu, cpu = _error(lambda: call("gpu")), _error(lambda: call(None))
    assert gpu is not None and gpu[0] is cpu[0] and issubclass(gpu[0], ValueError)
    assert "'range' [lo, hi] must have lo < hi" in gpu[1] and "'range' [lo, hi] must have lo < hi" in cpu[1]
