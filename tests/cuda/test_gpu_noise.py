"""GPU noise operators (ndd.noise.gaussian, salt_and_pepper, shot: kernels/random.cu,
ndd/_ops/gpu_random.py). Like the GPU random operators they draw from Philox keyed
by the call's RandomKey: the CPU's distributions, not its values. So these tests
check what is exact (unchanged values, salt and pepper values, types, shapes,
determinism for a seed) and the distributions' moments on many values, on the
kernels built for the CPU and on a real GPU (``any_gpu``)."""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

import ndd  # noqa: E402


def _gpu_values(result):
    assert result.device.device_type == "gpu"
    host = result.cpu()
    return [np.asarray(s) for s in host] if isinstance(host, ndd.Batch) else np.asarray(host)


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.int32])
def test_gaussian_noise_has_the_mean_and_deviation_asked_for(dtype, any_gpu):
    base = np.full((200, 250), 1000, dtype)
    out = _gpu_values(
        ndd.noise.gaussian(ndd.tensor(base).gpu(), mean=3.0, stddev=20.0, rng=ndd.random.RNG(seed=1))
    )
    noise = out.astype(np.float64) - 1000
    assert out.dtype == dtype
    assert abs(noise.mean() - 3.0) < 0.3 and abs(noise.std() - 20.0) < 0.3
    if dtype != np.float32:
        # Integer results are whole numbers rounded from float noise: every value occurs.
        assert len(np.unique(out)) > 100


def test_gaussian_noise_saturates_bytes_and_repeats_for_a_seed(any_gpu):
    base = ndd.batch([np.full((64, 64, 3), 250, np.uint8), np.full((10, 20, 3), 5, np.uint8)]).gpu()
    first = _gpu_values(ndd.noise.gaussian(base, stddev=30.0, rng=ndd.random.RNG(seed=4)))
    again = _gpu_values(ndd.noise.gaussian(base, stddev=30.0, rng=ndd.random.RNG(seed=4)))
    other = _gpu_values(ndd.noise.gaussian(base, stddev=30.0, rng=ndd.random.RNG(seed=5)))
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], other[0])
    assert first[0].max() == 255 and first[1].min() == 0


@pytest.mark.parametrize("per_channel", [False, True])
def test_salt_and_pepper_replaces_the_fraction_asked_for(per_channel, any_gpu):
    image = np.full((120, 150, 3), 100, np.uint8)
    out = _gpu_values(
        ndd.noise.salt_and_pepper(
            ndd.tensor(image, layout="HWC").gpu(),
            prob=0.2,
            salt_vs_pepper=0.25,
            per_channel=per_channel,
            rng=ndd.random.RNG(seed=2),
        )
    )
    assert set(np.unique(out).tolist()) <= {0, 100, 255}
    units = out.reshape(-1) if per_channel else out.reshape(-1, 3)
    if not per_channel:
        # A pixel's channels share its draw.
        assert np.all(units == units[:, :1])
        units = units[:, 0]
    assert abs((units != 100).mean() - 0.2) < 0.01
    assert abs((units == 255).mean() - 0.05) < 0.006


def test_salt_and_pepper_follows_a_leading_channel_axis(any_gpu):
    image = np.full((3, 80, 90), 7.0, np.float32)
    out = _gpu_values(
        ndd.noise.salt_and_pepper(
            ndd.tensor(image, layout="CHW").gpu(),
            prob=0.5,
            salt_val=2.0,
            pepper_val=-2.0,
            rng=ndd.random.RNG(seed=3),
        )
    )
    assert set(np.unique(out).tolist()) <= {-2.0, 2.0, 7.0}
    assert np.all(out == out[:1]) and abs((out[0] != 7.0).mean() - 0.5) < 0.02


@pytest.mark.parametrize("rate", [3.0, 40.0])
def test_shot_noise_counts_poisson_events(rate, any_gpu):
    factor = 2.0
    base = np.full((200, 200), rate * factor, np.float32)
    out = _gpu_values(ndd.noise.shot(ndd.tensor(base).gpu(), factor=factor, rng=ndd.random.RNG(seed=6)))
    events = out / factor
    np.testing.assert_array_equal(events, np.round(events))
    assert abs(events.mean() - rate) < 0.05 * rate and abs(events.var() - rate) < 0.1 * rate


def test_shot_noise_with_factor_zero_gives_zeros(any_gpu):
    out = _gpu_values(ndd.noise.shot(ndd.tensor(np.full((5, 5), 9, np.int16)).gpu(), factor=0.0))
    np.testing.assert_array_equal(out, np.zeros((5, 5), np.int16))


def test_noise_arguments_are_checked_at_the_call_on_the_gpu(any_gpu):
    x = ndd.tensor(np.zeros((4, 4), np.float32)).gpu()
    with pytest.raises(ValueError, match="'stddev' must not be negative"):
        ndd.noise.gaussian(x, stddev=-1.0).evaluate()
