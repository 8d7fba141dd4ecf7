"""GPU ndd.normalize (ndd/_ops/gpu_normalize.py, kernels/normalize.cu) compared with
its CPU twin on the kernels built for the CPU and on a real GPU (``any_gpu``). The
statistics are float64 sums in another order than numpy's, so floats agree within
a few float32 roundings and integers within one step; given statistics make the
results exact."""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

import ndd  # noqa: E402

SHAPES = [(9, 12, 3), (14, 7, 3), (6, 5, 3)]


def _samples(dtype, shapes=SHAPES, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return [(rng.standard_normal(s) * 30 + 7).astype(dtype) for s in shapes]
    info = np.iinfo(dtype)
    return [
        rng.integers(max(info.min, -500), min(info.max, 500), s, endpoint=True).astype(dtype) for s in shapes
    ]


def _close(gpu, cpu, exact=False):
    assert gpu.device.device_type == "gpu" and gpu.dtype == cpu.dtype
    for g, c in zip(gpu.cpu(), cpu, strict=True):
        g, c = np.asarray(g), np.asarray(c)
        assert g.shape == c.shape
        if exact:
            np.testing.assert_array_equal(g, c)
        elif g.dtype.kind == "f":
            np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-5)
        else:
            assert np.abs(g.astype(np.int64) - c.astype(np.int64)).max() <= 1


def _check(samples, layout="HWC", exact=False, **kwargs):
    _close(
        ndd.normalize(ndd.batch(samples, layout=layout).gpu(), **kwargs),
        ndd.normalize(ndd.batch(samples, layout=layout), **kwargs),
        exact,
    )


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32])
def test_normalize_over_whole_samples_matches_the_cpu(dtype, any_gpu):
    _check(_samples(dtype))
    _check(_samples(dtype), scale=64.0, shift=128.0, dtype=ndd.uint8)


@pytest.mark.parametrize(
    "kwargs", [dict(axes=[0, 1]), dict(axis_names="HW", ddof=1), dict(axes=[2], epsilon=0.5)]
)
def test_normalize_over_some_axes_matches_the_cpu(kwargs, any_gpu):
    _check(_samples(np.float32), **kwargs)
    _check(_samples(np.uint8), dtype=ndd.int16, scale=100.0, **kwargs)


def test_normalize_over_the_batch_matches_the_cpu(any_gpu):
    _check(_samples(np.float32), batch=True, axes=[0, 1])
    _check(_samples(np.int16), batch=True, scale=2.0, shift=1.0)


def test_normalize_with_given_statistics_is_exact(any_gpu):
    samples = _samples(np.float32)
    _check(samples, exact=True, mean=5.0, stddev=2.0)
    mean = np.array([[[1.0, 2.0, 3.0]]], np.float32)
    stddev = np.array([[[0.5, 1.0, 4.0]]], np.float32)
    _check(samples, exact=True, mean=mean, stddev=stddev, epsilon=0.25)
    per_sample = ndd.batch([np.float32(v) for v in (1.0, 2.0, 3.0)])
    _check(samples, mean=per_sample)


def test_a_sample_without_spread_gives_the_shift(any_gpu):
    _check([np.full((4, 4, 3), 9.0, np.float32)], shift=3.0, exact=True)
