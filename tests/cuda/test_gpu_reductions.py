"""The reductions on the GPU (ndd/_ops/gpu_reductions.py, kernels/reduce.cu) give
what their CPU twins give: the same output type and shape, integer results and
min/max bit for bit, float results within one float32 ulp (the float64 sums are
added in another order on the GPU, which may move the float64 total by a few of
its own ulps before the one rounding to float32).

Every test taking ``any_gpu`` runs on the kernels built for the CPU ("host") and on
a real GPU ("device", skipped without one).
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import install_fake  # noqa: E402

import ndd  # noqa: E402
from ndd._cuda import kernel_files  # noqa: E402
from ndd._cuda.fake import FakeDriver  # noqa: E402
from ndd._ops import gpu_reductions  # noqa: E402

R = ndd.reductions
OPS = ["sum", "mean", "mean_square", "rms", "min", "max"]
SPREAD_OPS = ["std_dev", "variance"]
TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32"]
# Output types a call may ask for (each op accepts some of them for each input type).
REQUESTED = [None, "int64", "uint64", "float32", "same"]
AXES_CASES = [None, [], [0], [1], [2], [-1], [2, 0], [0, 1], [1, 2], [0, 1, 2]]
# One float32 ulp, relative.
FLOAT_RTOL = 2.0**-23


def _values(dtype, shape, seed):
    """Values over the whole range of an integer type (sums wrap, squares need 128
    bits); floats spread over a few orders of magnitude."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dtype)


def _assert_matches(gpu, cpu):
    gpu = np.asarray(gpu.cpu())
    cpu = np.asarray(cpu)
    assert gpu.dtype == cpu.dtype
    assert gpu.shape == cpu.shape
    if cpu.dtype.kind == "f":
        np.testing.assert_allclose(gpu, cpu, rtol=FLOAT_RTOL, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(gpu, cpu)


def _assert_batch_matches(gpu, cpu):
    assert isinstance(gpu, ndd.Batch)
    assert gpu.device.device_type == "gpu"
    for g, c in zip(list(gpu.cpu()), list(cpu), strict=True):
        _assert_matches(g, c)


def _call(op, *inputs, **kwargs):
    """The op's result, or None where the CPU refuses the arguments (a dtype it does
    not offer for this input type)."""
    with np.errstate(all="ignore"):
        try:
            return getattr(R, op)(*inputs, **kwargs)
        except TypeError:
            return None


def _dtype_arg(op, dtype, requested):
    if op in ("min", "max") or requested is None:
        return {}
    return {"dtype": getattr(ndd, dtype if requested == "same" else requested)}


# ----------------------------------------------------------------------------
# Every reduction, type, set of axes and keep_dims, as a tensor and as a ragged batch


@pytest.mark.parametrize("axes", AXES_CASES, ids=str)
@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("op", OPS)
def test_reduction_matches_the_cpu(op, dtype, axes, any_gpu):
    x = _values(dtype, (4, 5, 3), 1)
    samples = [
        _values(dtype, shape, 2 + i) for i, shape in enumerate([(4, 5, 3), (2, 1, 6), (0, 3, 2), (7, 2, 1)])
    ]
    for requested in REQUESTED if op not in ("min", "max") else [None]:
        kwargs = dict(axes=axes, **_dtype_arg(op, dtype, requested))
        for keep_dims in (False, True):
            cpu = _call(op, ndd.tensor(x), keep_dims=keep_dims, **kwargs)
            if cpu is None:
                continue
            _assert_matches(_call(op, ndd.tensor(x).gpu(), keep_dims=keep_dims, **kwargs), cpu)
            gpu = _call(op, ndd.batch(samples).gpu(), keep_dims=keep_dims, **kwargs)
            _assert_batch_matches(gpu, _call(op, ndd.batch(samples), keep_dims=keep_dims, **kwargs))


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64", "uint64", "float32"])
@pytest.mark.parametrize("op", OPS)
def test_long_reductions_take_two_stages(op, dtype, any_gpu):
    # Long enough that an output element is reduced in several chunks, whose
    # accumulators a second launch combines: along the innermost axis (a group of
    # threads per output) and along the outermost one (a thread per output).
    x = _values(dtype, (3, 3000), 3)
    for requested in REQUESTED if op not in ("min", "max") else [None]:
        kwargs = _dtype_arg(op, dtype, requested)
        for data, axes in ((x, [1]), (x.T.copy(), [0]), (x, None)):
            cpu = _call(op, ndd.tensor(data), axes=axes, **kwargs)
            if cpu is not None:
                _assert_matches(_call(op, ndd.tensor(data).gpu(), axes=axes, **kwargs), cpu)


@pytest.mark.parametrize("op", OPS)
def test_axis_names_select_the_axes(op, any_gpu):
    x = _values("int16", (4, 5, 3), 4)
    for names in ("HC", "W", "", "CWH"):
        for keep_dims in (False, True):
            cpu = _call(op, ndd.tensor(x, layout="HWC"), axis_names=names, keep_dims=keep_dims)
            gpu = _call(op, ndd.tensor(x, layout="HWC").gpu(), axis_names=names, keep_dims=keep_dims)
            _assert_matches(gpu, cpu)
            assert gpu.layout == cpu.layout


@pytest.mark.parametrize("op", OPS)
def test_many_dimensions_alternating_kept_and_reduced(op, any_gpu):
    x = _values("int32", (2, 3, 1, 4, 2, 3, 2), 5)
    for axes in ([0, 3, 5], [1, 2, 4, 6], [1, 3]):
        _assert_matches(_call(op, ndd.tensor(x).gpu(), axes=axes), _call(op, ndd.tensor(x), axes=axes))


# ----------------------------------------------------------------------------
# Edge cases


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("op", OPS)
def test_empty_reductions_match_the_cpu(op, dtype, any_gpu):
    # Reducing extent-0 axes gives the identity (0, NaN for a float mean, the type's
    # limits for min and max); an extent-0 kept axis gives an empty output.
    x = np.zeros((3, 0, 2), dtype)
    for requested in REQUESTED if op not in ("min", "max") else [None]:
        kwargs = _dtype_arg(op, dtype, requested)
        for axes in ([1], [0, 1], None, [0], [2]):
            cpu = _call(op, ndd.tensor(x), axes=axes, **kwargs)
            if cpu is not None:
                _assert_matches(_call(op, ndd.tensor(x).gpu(), axes=axes, **kwargs), cpu)


@pytest.mark.parametrize("op", OPS)
def test_zero_dimensional_input(op, any_gpu):
    x = np.array(-7, np.int32)
    for axes in (None, []):
        _assert_matches(_call(op, ndd.tensor(x).gpu(), axes=axes), _call(op, ndd.tensor(x), axes=axes))


@pytest.mark.parametrize("op", OPS)
def test_batch_of_empty_samples(op, any_gpu):
    samples = [np.zeros((0, 3), np.float32), np.zeros((2, 0), np.float32)]
    for axes in ([0], [1], None):
        gpu = _call(op, ndd.batch(samples).gpu(), axes=axes)
        _assert_batch_matches(gpu, _call(op, ndd.batch(samples), axes=axes))


def test_min_and_max_skip_nan_as_the_cpu(any_gpu):
    nan, inf = np.nan, np.inf
    x = np.array(
        [
            [nan, 1.0, -2.0, nan],
            [nan, nan, nan, nan],
            [inf, nan, -inf, 0.0],
            [-0.0, 0.0, nan, 5.0],
        ],
        np.float32,
    )
    long = np.full((2, 2000), np.nan, np.float32)
    long[0, 1234] = 3.5
    for op in ("min", "max"):
        for data, axes in ((x, [1]), (x, [0]), (x, None), (long, [1]), (long.T.copy(), [0])):
            _assert_matches(
                _call(op, ndd.tensor(data).gpu(), axes=axes), _call(op, ndd.tensor(data), axes=axes)
            )


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # the CPU's inf - inf
@pytest.mark.parametrize("op", ["sum", "mean", "mean_square", "rms"])
def test_sums_propagate_nan_and_infinity(op, any_gpu):
    x = np.array(
        [[1.0, np.nan, 2.0], [np.inf, 1.0, 2.0], [np.inf, -np.inf, 0.0], [3e38, 3e38, 0.0]], np.float32
    )
    _assert_matches(_call(op, ndd.tensor(x).gpu(), axes=[1]), _call(op, ndd.tensor(x), axes=[1]))


@pytest.mark.parametrize(
    "values, dtype",
    [
        ([2**63 - 1] * 5 + [-(2**63)] * 3, "int64"),
        ([-(2**63)] * 7, "int64"),
        ([2**64 - 1] * 9, "uint64"),
        ([2**31 - 1, -(2**31), -(2**31)], "int32"),
        ([-7, -8, 0], "int8"),
    ],
)
def test_integer_results_are_exact_at_the_extremes(values, dtype, any_gpu):
    x = np.array(values, dtype)
    for op in ("sum", "mean", "mean_square", "rms"):
        for requested in REQUESTED:
            kwargs = _dtype_arg(op, dtype, requested)
            cpu = _call(op, ndd.tensor(x), **kwargs)
            if cpu is not None:
                _assert_matches(_call(op, ndd.tensor(x).gpu(), **kwargs), cpu)


# ----------------------------------------------------------------------------
# std_dev and variance: data and its mean


@pytest.mark.parametrize("axes", [None, [0], [1], [2], [0, 2], [], [1, 2]], ids=str)
@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("op", SPREAD_OPS)
def test_spread_matches_the_cpu(op, dtype, axes, any_gpu):
    x = _values(dtype, (4, 5, 3), 6)
    samples = [
        _values(dtype, shape, 7 + i) for i, shape in enumerate([(4, 5, 3), (2, 1, 6), (0, 3, 2), (7, 2, 1)])
    ]
    for ddof in (0, 1, 4):
        for keep_dims in (False, True):
            kwargs = dict(axes=axes, ddof=ddof, keep_dims=keep_dims)
            mean = R.mean(ndd.tensor(x), axes=axes, keep_dims=keep_dims)
            cpu = _call(op, ndd.tensor(x), mean, **kwargs)
            _assert_matches(_call(op, ndd.tensor(x).gpu(), mean.gpu(), **kwargs), cpu)
            means = R.mean(ndd.batch(samples), axes=axes)
            gpu = _call(op, ndd.batch(samples).gpu(), means.gpu(), **kwargs)
            _assert_batch_matches(gpu, _call(op, ndd.batch(samples), means, **kwargs))


@pytest.mark.parametrize("op", SPREAD_OPS)
def test_spread_of_a_long_reduction(op, any_gpu):
    x = _values("float32", (3, 3000), 8)
    for data, axes in ((x, [1]), (x.T.copy(), [0])):
        mean = R.mean(ndd.tensor(data), axes=axes)
        _assert_matches(
            _call(op, ndd.tensor(data).gpu(), mean.gpu(), axes=axes),
            _call(op, ndd.tensor(data), mean, axes=axes),
        )


@pytest.mark.parametrize("op", SPREAD_OPS)
def test_spread_with_a_tensor_mean_for_a_batch_and_the_reverse(op, any_gpu):
    samples = [_values("float32", (2, 3), 9), _values("float32", (4, 3), 10)]
    mean = ndd.tensor(np.array([0.5, -1.0, 2.0], np.float32))
    gpu = _call(op, ndd.batch(samples).gpu(), mean.gpu(), axes=[0])
    _assert_batch_matches(gpu, _call(op, ndd.batch(samples), mean, axes=[0]))
    x = samples[0]
    means = ndd.batch([np.array([1.0, 2.0, 3.0], np.float32), np.array([0.0, 0.0, 0.0], np.float32)])
    gpu = _call(op, ndd.tensor(x).gpu(), means.gpu(), axes=[0])
    _assert_batch_matches(gpu, _call(op, ndd.tensor(x), means, axes=[0]))


@pytest.mark.parametrize("op", SPREAD_OPS)
def test_spread_over_no_axes_is_zero_whatever_the_mean(op, any_gpu):
    samples = [_values("int16", (2, 3), 13), _values("int16", (1, 4), 14)]
    means = ndd.batch([np.full((2, 3), 5, np.float32), np.full((1, 4), -2, np.float32)])
    for ddof in (0, 1):
        gpu = _call(op, ndd.batch(samples).gpu(), means.gpu(), axes=[], ddof=ddof)
        assert [np.asarray(g).tolist() for g in gpu.cpu()] == [np.zeros(s.shape).tolist() for s in samples]
        _assert_batch_matches(gpu, _call(op, ndd.batch(samples), means, axes=[], ddof=ddof))


@pytest.mark.parametrize("op", SPREAD_OPS)
def test_spread_mean_in_the_keep_dims_shape(op, any_gpu):
    x = _values("uint16", (4, 5, 3), 11)
    mean = R.mean(ndd.tensor(x), axes=[1], keep_dims=True)
    _assert_matches(
        _call(op, ndd.tensor(x).gpu(), mean.gpu(), axes=[1]), _call(op, ndd.tensor(x), mean, axes=[1])
    )


# ----------------------------------------------------------------------------
# What the GPU path refuses


@pytest.mark.parametrize("op", SPREAD_OPS)
def test_host_mean_for_gpu_data_is_refused(op, any_gpu):
    x = _values("float32", (4, 3), 12)
    mean = R.mean(ndd.tensor(x), axes=[0])
    with pytest.raises(
        NotImplementedError, match=f"ndd.reductions.{op} on the GPU: input 'mean' in host memory"
    ):
        getattr(R, op)(ndd.tensor(x).gpu(), mean, axes=[0])


def test_device_gpu_with_host_data_is_refused(any_gpu):
    with pytest.raises(
        NotImplementedError, match="ndd.reductions.sum on the GPU: input 'input' in host memory"
    ):
        R.sum(ndd.tensor(np.ones(3, np.float32)), device="gpu")


# ----------------------------------------------------------------------------
# What is launched


@pytest.fixture
def recorded(host_kernels, monkeypatch):
    """A FakeDriver that runs the kernels on the CPU and records the launches."""
    monkeypatch.setattr(kernel_files, "KERNELS_DIR", host_kernels.kernels_dir)
    yield from install_fake(FakeDriver(devices=2, host_kernels=host_kernels))


def _launch_summary(fake):
    # (kernel, samples, stage): parameters 4 and 8 of every reduce kernel.
    return [(launch.function, launch.args[4], launch.args[8]) for launch in fake.launches]


def test_a_ragged_batch_is_one_launch(recorded):
    samples = [_values("float32", shape, 13 + i) for i, shape in enumerate([(4, 5), (0, 5), (9, 1), (2, 30)])]
    batch = ndd.batch(samples).gpu()
    recorded.launches.clear()
    with ndd.EvalMode.sync_cpu:
        out = R.mean(batch, axes=[0])
    assert _launch_summary(recorded) == [("reduce_float_plain_f32", 4, 0)]
    _assert_batch_matches(out, R.mean(ndd.batch(samples), axes=[0]))


@pytest.mark.parametrize("axis", [0, 1])
def test_a_long_reduction_is_two_launches(recorded, axis):
    x = _values("int16", (3, 3000) if axis == 1 else (3000, 3), 14)
    data = ndd.tensor(x).gpu()
    recorded.launches.clear()
    with ndd.EvalMode.sync_cpu:
        out = R.mean(data, axes=[axis], dtype=ndd.int16)
    assert _launch_summary(recorded) == [
        ("reduce_exact_plain_i16_i16", 1, 1),
        ("reduce_exact_plain_i16_i16", 1, 2),
    ]
    _assert_matches(out, R.mean(ndd.tensor(x), axes=[axis], dtype=ndd.int16))


@pytest.mark.parametrize(
    "shape, axes, kept, reduced",
    [
        ((4, 5, 3), {1}, [(4, 15), (3, 1)], [(5, 3)]),
        ((4, 1, 5, 3), {0, 2}, [(3, 1)], [(20, 3)]),
        ((4, 5, 3), {0, 1, 2}, [], [(60, 1)]),
        ((4, 5, 3), set(), [(60, 1)], []),
        ((2, 3, 4, 5), {1, 3}, [(2, 60), (4, 5)], [(3, 20), (5, 1)]),
        ((1, 1), {0}, [], []),
    ],
)
def test_dimensions_drop_extent_one_and_merge_neighbours(shape, axes, kept, reduced):
    assert gpu_reductions._dims(shape, axes) == (kept, reduced)
