"""GPU warps (ndd/_ops/gpu_warp.py, kernels/warp.cu): rotate, warp_affine,
experimental.warp_perspective, water and sphere, each compared with its CPU twin
on the kernels built for the CPU and on a real GPU (``any_gpu``). Equality is
exact: the kernels round every float operation as the CPU's C code does, and the
matrices, sizes, water displacements and fill values come from the CPU's own
functions. What is launched is checked on the recording FakeDriver (``fake``).
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import assert_same, check_batch, check_tensor, wide_values  # noqa: E402

import ndd  # noqa: E402

NN, LINEAR, CUBIC = ndd.types.INTERP_NN, ndd.types.INTERP_LINEAR, ndd.types.INTERP_CUBIC
# The kernels' own types, and others that go through float32 as on the CPU.
KERNEL_TYPES = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.float32, np.float64]
OTHER_TYPES = [np.float16, np.int64, np.uint32, np.bool_]
RAGGED = [(9, 12, 3), (14, 7, 3), (6, 5, 3), (5, 16, 3)]
AFFINE = [0.9, 0.3, -1.5, -0.25, 1.1, 2.0]
PERSPECTIVE = [0.9, 0.2, 1.5, -0.1, 1.1, -2.0, 0.01, -0.02, 1.0]


@pytest.fixture
def fake(fake_with_kernels):
    """The recording FakeDriver (kernels are not run) with the session's kernel build."""
    return fake_with_kernels


# -- rotate ----------------------------------------------------------------------------------


@pytest.mark.parametrize("interp", [NN, LINEAR])
@pytest.mark.parametrize("dtype", KERNEL_TYPES)
def test_rotate_matches_the_cpu_for_every_kernel_type(dtype, interp, any_gpu):
    values = wide_values(dtype, (11, 14, 3))
    for kwargs in (dict(angle=30.0), dict(angle=-117.5, fill_value=-20.25), dict(angle=90.0, keep_size=True)):
        check_tensor(ndd.rotate, values, "HWC", interp_type=interp, **kwargs)


@pytest.mark.parametrize("dtype", OTHER_TYPES)
def test_rotate_warps_other_types_in_float32_as_the_cpu(dtype, any_gpu):
    check_tensor(ndd.rotate, wide_values(dtype, (9, 10, 2)), "HWC", angle=21.0, fill_value=0.75)


@pytest.mark.parametrize(
    "source, target",
    [(np.uint8, ndd.float32), (np.float32, ndd.uint8), (np.int16, ndd.float64), (np.uint8, ndd.int16)],
)
def test_rotate_converts_to_the_output_type_as_the_cpu(source, target, any_gpu):
    check_tensor(
        ndd.rotate, wide_values(source, (10, 9, 3)), "HWC", angle=47.0, fill_value=300.5, dtype=target
    )


def test_rotate_takes_an_angle_per_sample_of_a_ragged_batch(any_gpu):
    samples = [wide_values(np.uint8, s, i) for i, s in enumerate(RAGGED)]
    angles = ndd.batch([np.float32(a) for a in (10.0, -45.0, 180.0, 271.0)])
    check_batch(ndd.rotate, samples, "HWC", angle=angles)
    check_batch(ndd.rotate, samples, "HWC", angle=angles, size=[8, 10], fill_value=255.0, interp_type=NN)


@pytest.mark.parametrize("layout, shape", [("HW", (12, 9)), ("FHWC", (3, 8, 11, 2)), ("FHW", (2, 9, 7))])
def test_rotate_handles_images_without_channels_and_sequences(layout, shape, any_gpu):
    check_tensor(ndd.rotate, wide_values(np.float32, shape), layout, angle=35.0)
    check_tensor(
        ndd.rotate, wide_values(np.int16, shape), layout, angle=-60.0, fill_value=5.0, interp_type=NN
    )


@pytest.mark.parametrize("interp", [NN, LINEAR])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64])
def test_rotate_turns_volumes_about_an_axis(dtype, interp, any_gpu):
    values = wide_values(dtype, (6, 7, 9, 2))
    check_tensor(ndd.rotate, values, "DHWC", angle=40.0, axis=[1.0, 2.0, 3.0], interp_type=interp)
    check_tensor(
        ndd.rotate, values, "DHWC", angle=-75.0, axis=[0.0, 0.0, 1.0], fill_value=9.5, interp_type=interp
    )
    check_tensor(ndd.rotate, values[np.newaxis].repeat(2, 0), "FDHWC", angle=20.0, axis=[1.0, 0.0, 0.0])


def test_rotate_takes_an_angle_and_axis_per_volume(any_gpu):
    samples = [wide_values(np.float32, s, i) for i, s in enumerate([(5, 6, 7, 1), (4, 8, 6, 1)])]
    angles = ndd.batch([np.float32(a) for a in (30.0, -50.0)])
    axes = ndd.batch([np.array(a, np.float32) for a in ([0, 1, 0], [1, 1, 0])])
    check_batch(ndd.rotate, samples, "DHWC", angle=angles, axis=axes, fill_value=0.0)


# -- warp_affine -----------------------------------------------------------------------------


@pytest.mark.parametrize("interp", [NN, LINEAR])
@pytest.mark.parametrize("dtype", KERNEL_TYPES)
def test_warp_affine_matches_the_cpu_for_every_kernel_type(dtype, interp, any_gpu):
    values = wide_values(dtype, (12, 10, 3))
    check_tensor(ndd.warp_affine, values, "HWC", matrix=AFFINE, interp_type=interp)
    check_tensor(
        ndd.warp_affine, values, "HWC", matrix=AFFINE, interp_type=interp, fill_value=-3.5, size=[15, 8]
    )
    check_tensor(ndd.warp_affine, values, "HWC", matrix=AFFINE, interp_type=interp, inverse_map=False)


def test_warp_affine_reads_far_and_nonfinite_points_as_the_cpu(any_gpu):
    values = wide_values(np.float32, (8, 9, 2))
    for matrix in ([1e8, 0, 0, 0, 1, 0], [1e30, 1e30, 0, 0, -1e30, 0], [-3e7, 0, 5, 0, 2, 0]):
        check_tensor(ndd.warp_affine, values, "HWC", matrix=matrix)
        check_tensor(ndd.warp_affine, values, "HWC", matrix=matrix, fill_value=4.0, interp_type=NN)


def test_warp_affine_takes_a_matrix_per_sample_as_an_argument_or_a_host_input(any_gpu):
    samples = [wide_values(np.uint8, s, i) for i, s in enumerate(RAGGED)]
    matrices = [
        np.array(AFFINE, np.float32) + np.float32(0.05 * i) * np.array([1, 0, 3, 0, -1, 2], np.float32)
        for i in range(len(samples))
    ]
    check_batch(ndd.warp_affine, samples, "HWC", matrix=ndd.batch(matrices), fill_value=100.0)
    gpu = ndd.warp_affine(
        ndd.batch(samples, layout="HWC").gpu(), ndd.batch([m.reshape(2, 3) for m in matrices])
    )
    cpu = ndd.warp_affine(ndd.batch(samples, layout="HWC"), ndd.batch([m.reshape(2, 3) for m in matrices]))
    assert_same(gpu, cpu)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float32, np.float64])
def test_warp_affine_warps_volumes(dtype, any_gpu):
    matrix = [0.9, 0.1, -0.2, 1.0, -0.1, 1.1, 0.05, -0.5, 0.2, 0.0, 0.8, 1.5]
    values = wide_values(dtype, (5, 8, 7, 2))
    for interp in (NN, LINEAR):
        check_tensor(ndd.warp_affine, values, "DHWC", matrix=matrix, interp_type=interp)
        check_tensor(
            ndd.warp_affine,
            values,
            "DHWC",
            matrix=matrix,
            interp_type=interp,
            fill_value=-1.0,
            size=[4, 9, 6],
        )
    check_tensor(ndd.warp_affine, values[..., 0], "DHW", matrix=matrix, dtype=ndd.float32)


# -- warp_perspective ------------------------------------------------------------------------

BORDERS = ["constant", "replicate", "reflect", "reflect_101", "wrap"]


@pytest.mark.parametrize("border", BORDERS)
@pytest.mark.parametrize("interp", [NN, LINEAR, CUBIC])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
def test_warp_perspective_matches_the_cpu_for_every_filter_and_border(dtype, interp, border, any_gpu):
    values = wide_values(dtype, (11, 13, 3))
    check_tensor(
        ndd.experimental.warp_perspective,
        values,
        "HWC",
        matrix=PERSPECTIVE,
        interp_type=interp,
        border_mode=border,
        fill_value=[7.0, -1.5, 300.0],
        size=[14, 12],
    )


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.float64, np.float16])
def test_warp_perspective_matches_the_cpu_for_the_other_types(dtype, any_gpu):
    values = wide_values(dtype, (10, 9, 2))
    for interp in (NN, LINEAR, CUBIC):
        check_tensor(ndd.experimental.warp_perspective, values, "HWC", matrix=PERSPECTIVE, interp_type=interp)


@pytest.mark.parametrize("layout, shape", [("CHW", (2, 9, 10)), ("FCHW", (2, 3, 8, 9)), ("HW", (9, 8))])
def test_warp_perspective_handles_planar_images(layout, shape, any_gpu):
    check_tensor(
        ndd.experimental.warp_perspective,
        wide_values(np.uint8, shape),
        layout,
        matrix=PERSPECTIVE,
        fill_value=[40.0],
        pixel_origin="center",
        inverse_map=False,
    )


def test_warp_perspective_sends_points_at_infinity_away_as_the_cpu(any_gpu):
    # The third row makes w = 0 along the column x + 0.5 = 4.
    matrix = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.25, 0.0, -1.0]
    for border in ("constant", "replicate"):
        check_tensor(
            ndd.experimental.warp_perspective,
            wide_values(np.float32, (6, 9, 1)),
            "HWC",
            matrix=matrix,
            border_mode=border,
        )


def test_warp_perspective_takes_a_host_matrix_input_per_sample(any_gpu):
    samples = [wide_values(np.uint8, s, i) for i, s in enumerate(RAGGED)]
    matrices = ndd.batch([(np.array(PERSPECTIVE) * (1 + 0.1 * i)).reshape(3, 3) for i in range(len(samples))])
    gpu = ndd.experimental.warp_perspective(
        ndd.batch(samples, layout="HWC").gpu(), matrices, interp_type=CUBIC
    )
    cpu = ndd.experimental.warp_perspective(ndd.batch(samples, layout="HWC"), matrices, interp_type=CUBIC)
    assert_same(gpu, cpu)


# -- water, sphere ---------------------------------------------------------------------------

DISTORTION_TYPES = [np.uint8, np.int16, np.int32, np.float32, np.float64, np.float16]


@pytest.mark.parametrize("interp", [NN, LINEAR])
@pytest.mark.parametrize("dtype", DISTORTION_TYPES)
@pytest.mark.parametrize("op", [ndd.water, ndd.sphere])
def test_distortions_match_the_cpu(op, dtype, interp, any_gpu):
    samples = [wide_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    check_batch(op, samples, "HWC", interp_type=interp, fill_value=-12.5)


def test_water_takes_its_wave_arguments(any_gpu):
    values = wide_values(np.uint8, (16, 20, 3))
    check_tensor(
        ndd.water,
        values,
        "HWC",
        ampl_x=3.5,
        ampl_y=-7.0,
        freq_x=0.3,
        freq_y=0.11,
        phase_x=1.0,
        phase_y=-2.0,
        interp_type=LINEAR,
    )


@pytest.mark.parametrize("op", [ndd.water, ndd.sphere])
def test_distortions_pass_samples_with_mask_0_through(op, any_gpu):
    samples = [wide_values(np.float32, s, i) for i, s in enumerate(RAGGED)]
    mask = ndd.batch([np.int32(m) for m in (1, 0, 0, 1)])
    check_batch(op, samples, "HWC", mask=mask)


@pytest.mark.parametrize("op", [ndd.water, ndd.sphere])
@pytest.mark.parametrize("layout, shape", [("FHWC", (3, 9, 10, 2)), ("HW", (7, 12)), ("FHW", (2, 8, 6))])
def test_distortions_handle_sequences_and_images_without_channels(op, layout, shape, any_gpu):
    check_tensor(op, wide_values(np.uint8, shape), layout, interp_type=LINEAR)


# -- what is launched and what is refused ------------------------------------------------------


@pytest.mark.parametrize(
    "call, name",
    [
        (
            lambda x: ndd.rotate(x, angle=ndd.batch([np.float32(a) for a in (5, 50, 95, 140)])),
            "warp_projective_u8",
        ),
        (lambda x: ndd.warp_affine(x, matrix=AFFINE), "warp_projective_u8"),
        (lambda x: ndd.water(x), "warp_mapped_u8"),
    ],
)
def test_a_ragged_batch_is_one_launch(call, name, fake):
    samples = [np.zeros(s, np.uint8) for s in RAGGED]
    call(ndd.batch(samples, layout="HWC").gpu()).evaluate()
    launches = [launch for launch in fake.launches if launch.function.startswith("warp_")]
    assert [launch.function for launch in launches] == [name]
    assert launches[0].grid[1] == len(samples)


def test_a_conversion_casts_before_and_after_the_warp(fake):
    x = ndd.tensor(np.zeros((6, 7, 3), np.int64), layout="HWC").gpu()
    ndd.rotate(x, angle=10.0).evaluate()
    names = [launch.function for launch in fake.launches if launch.function.startswith(("warp_", "cast_"))]
    assert names == ["cast_i64_to_f32", "warp_projective_f32", "cast_f32_to_i64"]


def test_distortions_refuse_a_type_that_a_pass_through_would_round(fake):
    x = ndd.tensor(np.zeros((4, 4, 3), np.int64), layout="HWC").gpu()
    with pytest.raises(NotImplementedError, match="ndd.water on the GPU: no kernel for input type"):
        ndd.water(x)


def test_a_matrix_input_in_gpu_memory_is_refused_at_the_call(fake):
    x = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC").gpu()
    mtx = ndd.tensor(np.array(AFFINE, np.float32).reshape(2, 3)).gpu()
    with pytest.raises(NotImplementedError, match="ndd.warp_affine on the GPU: a matrix input in GPU memory"):
        ndd.warp_affine(x, mtx)


def test_a_host_input_is_refused_on_the_gpu(fake):
    with pytest.raises(NotImplementedError, match="ndd.rotate on the GPU: an input in host memory"):
        ndd.rotate(ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC"), angle=3.0, device="gpu")


# -- jitter: Philox moves (the CPU's distribution, not its values) ------------------------


def _jitter_gpu(image, layout="HWC", **kwargs):
    out = ndd.jitter(ndd.tensor(image, layout=layout).gpu(), **kwargs)
    assert out.device.device_type == "gpu"
    return np.asarray(out.cpu())


def test_jitter_moves_each_pixel_within_the_degree(any_gpu):
    # Every pixel distinct (its row and column coded in its value), so each output
    # value tells where it came from.
    rows, columns = 40, 50
    image = np.zeros((rows, columns, 2), np.float32)
    image[..., 0] = np.arange(rows)[:, None]
    image[..., 1] = np.arange(columns)[None, :]
    out = _jitter_gpu(image, nDegree=5, fill_value=-1.0, rng=ndd.random.RNG(seed=3))
    inside = out[..., 0] >= 0
    dy = out[..., 0][inside] - np.nonzero(inside)[0]
    dx = out[..., 1][inside] - np.nonzero(inside)[1]
    assert set(np.unique(dy).tolist()) == {-2, -1, 0, 1, 2} == set(np.unique(dx).tolist())
    # Moves along x and y are independent and uniform: 25 pairs, each about 1/25.
    pairs = np.unique(np.stack([dy, dx]), axis=1, return_counts=True)[1]
    assert len(pairs) == 25 and pairs.min() > 0.02 * dy.size
    # Pixels moved in from outside take the fill value.
    assert np.all(out[~inside] == -1.0) and (~inside).any()


def test_jitter_draws_apart_for_samples_of_different_launches(any_gpu, monkeypatch):
    # A batch of more segments than one launch takes (65,535) is split into launches;
    # the draws were keyed by blockIdx.y, so sample i + 65535 repeated sample i.
    if any_gpu == "device":
        pytest.skip("the launch size is patched on the host kernels only")
    from ndd._ops import gpu_segments

    monkeypatch.setattr(gpu_segments, "MAX_SEGMENTS", 2)
    image = np.arange(20 * 30, dtype=np.float32).reshape(20, 30, 1)
    out = ndd.jitter(ndd.batch([image] * 4, layout="HWC").gpu(), nDegree=5, rng=ndd.random.RNG(seed=1)).cpu()
    results = [np.asarray(s) for s in out]
    assert not np.array_equal(results[0], results[2]) and not np.array_equal(results[1], results[3])


def test_jitter_repeats_for_a_seed_and_copies_masked_samples(any_gpu):
    rng = np.random.default_rng(0)
    samples = [rng.integers(0, 255, (20, 30, 3)).astype(np.uint8) for _ in range(3)]
    batch = ndd.batch(samples, layout="HWC").gpu()
    mask = ndd.batch([np.int32(m) for m in (1, 0, 1)])
    first = ndd.jitter(batch, mask=mask, rng=ndd.random.RNG(seed=8)).cpu()
    again = ndd.jitter(batch, mask=mask, rng=ndd.random.RNG(seed=8)).cpu()
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(np.asarray(first.select(1)), samples[1])
    assert not np.array_equal(np.asarray(first.select(0)), samples[0])
