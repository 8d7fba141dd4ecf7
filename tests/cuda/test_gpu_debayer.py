"""GPU debayer (ndd/_ops/gpu_debayer.py, kernels/debayer.cu) compared with its CPU twin
on the kernels built for the CPU and on a real GPU (``any_gpu``). Equality is exact:
both demosaic in integer arithmetic (the gray luma's 32-bit sum included, which the
CPU wraps in int32 and the GPU keeps unsigned, equal after the shift and the
conversion). What is launched and what is refused is checked on the recording
FakeDriver (``fake``).
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import assert_same, check_batch, check_tensor  # noqa: E402

import ndd  # noqa: E402

ALGORITHMS = ["bilinear_ocv", "edgeaware_ocv", "gray_ocv"]
POSITIONS = [[0, 0], [0, 1], [1, 0], [1, 1]]


@pytest.fixture
def fake(fake_with_kernels):
    """The recording FakeDriver (kernels are not run) with the session's kernel build."""
    return fake_with_kernels


def _bayer(dtype, shape, seed=0):
    """Values over the whole range of the type."""
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_debayer_matches_the_cpu_for_every_algorithm_and_pattern(dtype, algorithm, position, any_gpu):
    for shape in ((10, 12), (9, 7)):
        check_tensor(ndd.debayer, _bayer(dtype, shape), "HW", algorithm=algorithm, blue_position=position)


def test_debayer_is_the_bilinear_algorithm_by_default(any_gpu):
    check_tensor(ndd.debayer, _bayer(np.uint8, (8, 6)), "HW", blue_position=[1, 0])


@pytest.mark.parametrize("shape", [(2, 2), (2, 5), (5, 2), (3, 3), (3, 4), (4, 3)])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_debayer_copies_the_borders_of_the_smallest_images_as_the_cpu(shape, algorithm, any_gpu):
    check_tensor(ndd.debayer, _bayer(np.uint16, shape, 3), "HW", algorithm=algorithm, blue_position=[0, 1])


@pytest.mark.parametrize("layout, shape", [("HWC", (9, 10, 1)), ("FHW", (3, 8, 7)), ("FHWC", (2, 6, 9, 1))])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_debayer_takes_channels_and_sequences(layout, shape, algorithm, any_gpu):
    check_tensor(ndd.debayer, _bayer(np.uint8, shape, 1), layout, algorithm=algorithm, blue_position=[1, 1])


def test_debayer_gray_of_bright_16_bit_images_is_exact(any_gpu):
    # The luma's sums reach 65535 * 65536: beyond int32, within 32 unsigned bits.
    bright = np.full((6, 8), 65535, np.uint16)
    out = ndd.debayer(ndd.tensor(bright, layout="HW").gpu(), algorithm="gray_ocv", blue_position=[0, 0])
    np.testing.assert_array_equal(np.asarray(out.cpu()), np.full((6, 8, 1), 65535, np.uint16))
    near_white = (65535 - _bayer(np.uint16, (11, 10), 4) % 300).astype(np.uint16)
    check_tensor(ndd.debayer, near_white, "HW", algorithm="gray_ocv", blue_position=[1, 0])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_debayer_takes_a_pattern_per_sample_of_a_ragged_batch(algorithm, any_gpu):
    shapes = [(8, 10), (5, 7), (2, 2), (12, 3)]
    samples = [_bayer(np.uint16, s, i) for i, s in enumerate(shapes)]
    positions = ndd.batch([np.array(p, np.int32) for p in POSITIONS])
    check_batch(ndd.debayer, samples, "HW", algorithm=algorithm, blue_position=positions)
    check_batch(ndd.debayer, samples, "HW", algorithm=algorithm, blue_position=[0, 1])


def test_debayer_takes_a_batch_with_an_empty_sequence(any_gpu):
    # The CPU fails on a sequence without frames (it stacks no frames), so the other
    # samples are compared with it and the empty one is checked for its shape.
    samples = [_bayer(np.uint8, (2, 6, 8), 1), _bayer(np.uint8, (0, 6, 8), 2), _bayer(np.uint8, (1, 5, 4), 3)]
    out = ndd.debayer(ndd.batch(samples, layout="FHW").gpu(), blue_position=[1, 0])
    assert out.layout == "FHWC"
    host = [np.asarray(t) for t in out.cpu()]
    assert host[1].shape == (0, 6, 8, 3) and host[1].dtype == np.uint8
    for got, sample in zip((host[0], host[2]), (samples[0], samples[2]), strict=True):
        expected = ndd.debayer(ndd.tensor(sample, layout="FHW"), blue_position=[1, 0])
        np.testing.assert_array_equal(got, np.asarray(expected))


def test_debayer_takes_a_pattern_per_frame(any_gpu):
    video = _bayer(np.uint8, (3, 12, 14), 7)
    positions = ndd.per_frame(ndd.as_tensor(np.array([[0, 0], [1, 1], [0, 1]], np.int32)))
    for algorithm in ALGORITHMS:
        assert_same(
            ndd.debayer(
                ndd.as_tensor(video, layout="FHW").gpu(), blue_position=positions, algorithm=algorithm
            ),
            ndd.debayer(ndd.as_tensor(video, layout="FHW"), blue_position=positions, algorithm=algorithm),
        )


# -- what is launched and what is refused ------------------------------------------------------


def test_a_ragged_batch_is_one_launch(fake):
    samples = [np.zeros(s, np.uint8) for s in [(6, 8), (4, 5), (9, 3)]]
    ndd.debayer(ndd.batch(samples, layout="HW").gpu(), blue_position=[0, 0]).evaluate()
    launches = [launch for launch in fake.launches if launch.function.startswith("debayer_")]
    assert [launch.function for launch in launches] == ["debayer_u8"]
    assert launches[0].grid[1] == len(samples)


def test_vng_is_refused_on_the_gpu_at_the_call(fake):
    pytest.importorskip("cv2", minversion="5")
    x = ndd.tensor(np.zeros((4, 6), np.uint8), layout="HW").gpu()
    with pytest.raises(NotImplementedError, match="ndd.debayer on the GPU: 'algorithm' 'vng_ocv'"):
        ndd.debayer(x, blue_position=[0, 0], algorithm="vng_ocv")


def test_a_host_input_is_refused_on_the_gpu(fake):
    with pytest.raises(NotImplementedError, match="ndd.debayer on the GPU: an input in host memory"):
        ndd.debayer(ndd.tensor(np.zeros((4, 4), np.uint8), layout="HW"), blue_position=[0, 0], device="gpu")


def test_a_bad_pattern_per_sample_is_an_error_of_the_run(any_gpu):
    samples = [np.zeros((4, 4), np.uint8)] * 2
    positions = ndd.batch([np.array(p, np.int32) for p in ([0, 0], [2, 0])])
    with pytest.raises(
        ValueError,
        match="'blue_position' must be two values \\(or one for both\\), each 0 or 1, got \\[2, 0\\]",
    ):
        ndd.debayer(ndd.batch(samples, layout="HW").gpu(), blue_position=positions).evaluate()
