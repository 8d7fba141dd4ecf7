"""ndd.noise.gaussian, salt_and_pepper and shot (ndd/_ops/noise.py): their
distributions, determinism per seed, and the reference's value conversions
(probed with DALI 2.4.0; the draws themselves cannot match the reference's)."""

import numpy as np
import pytest

import ndd

NOISE_TYPES = [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.int64, np.float32]


def _rng(seed=0):
    return ndd.random.RNG(seed=seed)


@pytest.mark.parametrize("dtype", NOISE_TYPES)
def test_gaussian_mean_and_variance(dtype):
    x = np.full((200, 300), 100, dtype)
    out = np.asarray(ndd.noise.gaussian(ndd.tensor(x), mean=2.0, stddev=10.0, rng=_rng()))
    assert out.dtype == dtype and out.shape == x.shape
    assert abs(out.mean() - 102.0) < 0.2
    # Rounding to integers adds 1/12 to the variance.
    assert abs(out.var() - 100.0) < 3.0


def test_gaussian_rounds_half_away_and_saturates():
    x = np.array([0, 100, 255], np.uint8)
    out = ndd.noise.gaussian(ndd.tensor(x), mean=0.5, stddev=0.0, rng=_rng())
    np.testing.assert_array_equal(np.asarray(out), [1, 101, 255])
    out = ndd.noise.gaussian(ndd.tensor(x), mean=-1000.0, stddev=0.0, rng=_rng())
    np.testing.assert_array_equal(np.asarray(out), [0, 0, 0])


def test_same_seed_same_noise_and_calls_differ():
    x = ndd.tensor(np.zeros((50, 60, 3), np.float32), layout="HWC")
    a = np.asarray(ndd.noise.gaussian(x, rng=_rng(5)))
    b = np.asarray(ndd.noise.gaussian(x, rng=_rng(5)))
    np.testing.assert_array_equal(a, b)
    rng = _rng(5)
    c, d = np.asarray(ndd.noise.gaussian(x, rng=rng)), np.asarray(ndd.noise.gaussian(x, rng=rng))
    assert not np.array_equal(c, d)


def test_batch_samples_are_independent_and_per_sample_arguments_apply():
    x = np.zeros((100, 100), np.float32)
    out = ndd.noise.gaussian(ndd.batch([x, x]), stddev=ndd.batch([np.float32(1), np.float32(5)]), rng=_rng())
    s0, s1 = (np.asarray(out.select(i)) for i in range(2))
    assert abs(s0.std() - 1) < 0.05 and abs(s1.std() - 5) < 0.25
    assert not np.array_equal(s0 * 5, s1)


@pytest.mark.parametrize(
    "dtype, salt, pepper", [(np.uint8, 255, 0), (np.int16, 32767, -32768), (np.float32, 1, -1)]
)
def test_salt_and_pepper_proportions_and_default_values(dtype, salt, pepper):
    x = np.full((200, 200, 3), 100, dtype)
    out = np.asarray(
        ndd.noise.salt_and_pepper(ndd.tensor(x, layout="HWC"), prob=0.3, salt_vs_pepper=0.25, rng=_rng())
    )
    assert out.dtype == dtype
    assert set(np.unique(out).tolist()) == {salt, pepper, 100}
    assert abs((out == salt).mean() - 0.075) < 0.01
    assert abs((out == pepper).mean() - 0.225) < 0.01
    # Channels of a pixel share the draw.
    assert np.all((out == out[..., :1]).all(-1))


def test_salt_and_pepper_per_channel_draws_each_value():
    x = np.full((200, 200, 3), 100, np.uint8)
    out = np.asarray(
        ndd.noise.salt_and_pepper(ndd.tensor(x, layout="HWC"), prob=0.3, per_channel=True, rng=_rng())
    )
    assert abs((out != 100).mean() - 0.3) < 0.01
    assert not np.all((out == out[..., :1]).all(-1))


def test_salt_and_pepper_channel_first():
    x = np.full((3, 100, 100), 100, np.uint8)
    out = np.asarray(ndd.noise.salt_and_pepper(ndd.tensor(x, layout="CHW"), prob=0.5, rng=_rng()))
    assert np.all((out == out[:1]).all(0))


def test_salt_and_pepper_values_convert_with_a_c_cast():
    x = np.full((100, 100), 100, np.uint8)
    out = ndd.noise.salt_and_pepper(ndd.tensor(x), prob=0.5, salt_val=300.0, pepper_val=-7.5, rng=_rng())
    assert set(np.unique(np.asarray(out)).tolist()) == {44, 100, 249}


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float32])
def test_shot_noise_is_poisson(dtype):
    x = np.full((300, 300), 60, dtype)
    out = np.asarray(ndd.noise.shot(ndd.tensor(x), factor=3.0, rng=_rng()))
    assert out.dtype == dtype
    # out = 3 * Poisson(20): mean 60, variance 9 * 20.
    assert abs(out.mean() - 60) < 0.2
    assert abs(out.var() - 180) < 6
    assert np.all(out % 3 == 0)


def test_shot_noise_without_a_factor_counts_events_of_12_as_the_reference_runs():
    out = np.asarray(ndd.noise.shot(ndd.tensor(np.full((300, 300), 120, np.float32)), rng=_rng()))
    # 12 * Poisson(10): every value a multiple of 12, mean 120, variance 144 * 10.
    assert np.all(out % 12 == 0)
    assert abs(out.mean() - 120) < 0.5 and abs(out.var() - 1440) < 50


def test_shot_noise_of_huge_rates_nan_inf_and_a_scalar():
    # 1e32 events: the noise (1e16) is below float32's precision; numpy cannot draw it.
    tiny_factor = ndd.noise.shot(ndd.tensor(np.full((2, 3), 200, np.uint8)), factor=1e-30, rng=_rng())
    np.testing.assert_array_equal(np.asarray(tiny_factor), np.full((2, 3), 200, np.uint8))
    x = np.array([1e30, np.nan, np.inf], np.float32)
    np.testing.assert_array_equal(np.asarray(ndd.noise.shot(ndd.tensor(x), factor=1.0, rng=_rng())), x)
    scalar = np.asarray(ndd.noise.shot(ndd.tensor(np.float32(48)), factor=12.0, rng=_rng()))
    assert scalar.shape == () and scalar.dtype == np.float32 and scalar % 12 == 0


def test_shot_negative_input_and_zero_factor():
    x = np.array([-5.0, 0.0, 2.5], np.float32)
    np.testing.assert_array_equal(
        np.asarray(ndd.noise.shot(ndd.tensor(x), factor=2.0, rng=_rng()))[:2], [0, 0]
    )
    np.testing.assert_array_equal(
        np.asarray(ndd.noise.shot(ndd.tensor(x), factor=0.0, rng=_rng())), [0, 0, 0]
    )


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: ndd.noise.gaussian(ndd.tensor(np.zeros(3, np.float64))), "input type"),
        (lambda: ndd.noise.shot(ndd.tensor(np.zeros(3, bool))), "input type"),
        (lambda: ndd.noise.salt_and_pepper(ndd.tensor(np.zeros((2, 3, 2), np.uint8), layout="HCW")), "'C'"),
        (lambda: ndd.noise.salt_and_pepper(ndd.tensor(np.zeros((2, 2), np.uint8)), prob=1.5), "'prob'"),
        (lambda: ndd.noise.gaussian(ndd.tensor(np.zeros(3, np.float32)), stddev=-1.0), "'stddev'"),
        (lambda: ndd.noise.gaussian(ndd.tensor(np.zeros(3, np.float32)), rng=3), "'rng'"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises((ValueError, TypeError), match=message) as info:
        np.asarray(call())
    assert "ndd.noise." in str(info.value)


def test_known_bad_arguments_raise_at_the_call():
    x = ndd.tensor(np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError, match="'stddev'"):
        ndd.noise.gaussian(x, stddev=-1.0)
    batch = ndd.batch([np.zeros((4, 4), np.uint8)] * 2)
    with pytest.raises(ValueError, match="'salt_vs_pepper'"):
        ndd.noise.salt_and_pepper(batch, salt_vs_pepper=ndd.batch([np.float32(0.5), np.float32(2.0)]))


def test_gaussian_noise_on_32_bit_integers_keeps_their_precision():
    # Summed in double precision: int32 values beyond float32's 24-bit mantissa were
    # changed even with stddev 0, and their noise came in steps of 128.
    image = ndd.tensor(np.full((64, 64), 1_000_000_001, np.int32), layout="HW")
    same = np.asarray(ndd.noise.gaussian(image, stddev=0.0, rng=ndd.random.RNG(seed=1)))
    assert np.unique(same).tolist() == [1_000_000_001]
    noisy = np.asarray(ndd.noise.gaussian(image, stddev=10.0, rng=ndd.random.RNG(seed=1))).astype(np.float64)
    assert 9 < noisy.std() < 11 and len(np.unique(noisy)) > 30


@pytest.mark.parametrize("per_channel", [True, False])
def test_salt_and_pepper_of_data_without_channels_draws_every_value(per_channel):
    # A layout without C (HW): each value is a pixel of its own (it was refused).
    image = ndd.tensor(np.full((40, 40), 100, np.uint8), layout="HW")
    out = np.asarray(
        ndd.noise.salt_and_pepper(image, per_channel=per_channel, prob=0.5, rng=ndd.random.RNG(seed=1))
    )
    assert out.shape == (40, 40) and set(np.unique(out).tolist()) == {0, 100, 255}
    assert 0.4 < np.mean(out != 100) < 0.6
