"""GPU experimental.remap (ndd/_ops/gpu_remap.py, kernels/remap.cu) compared with its CPU
twin on the kernels built for the CPU and on a real GPU (``any_gpu``). Equality is
exact: the kernel adds the pixel origin's offset and samples (kernels/sampling.cuh,
shared with the other warps) rounding every float operation as the CPU's C code
does. What is launched and what is refused is checked on the recording FakeDriver
(``fake``).
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import assert_same, wide_values  # noqa: E402

import ndd  # noqa: E402

NN, LINEAR = ndd.types.INTERP_NN, ndd.types.INTERP_LINEAR
ORIGINS = ["corner", "center"]
# The kernel's own types, and others that go through float32 as on the CPU.
KERNEL_TYPES = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.float32, np.float64]
OTHER_TYPES = [np.float16, np.int64, np.uint32, np.bool_]


@pytest.fixture
def fake(fake_with_kernels):
    """The recording FakeDriver (kernels are not run) with the session's kernel build."""
    return fake_with_kernels


def _maps(rows, columns, source_rows, source_columns, frames=None, seed=0):
    """Map values inside and around a source of the given size: fractions, whole and
    half numbers (ties of the nearest pixel in either origin) and a few far away or
    not a number."""
    rng = np.random.default_rng(seed)
    shape = (rows, columns) if frames is None else (frames, rows, columns)
    maps = []
    for extent in (source_columns, source_rows):
        m = rng.uniform(-3, extent + 3, shape).astype(np.float32)
        ties = rng.random(shape) < 0.3
        m[ties] = np.round(m[ties] * 2) / 2
        maps.append(m)
    if maps[0].size > 20:
        maps[0].flat[[3, 11]] = [np.nan, 3e7]
        maps[1].flat[[7, 19]] = [-np.inf, -2e7]
    return maps


def _remap_both(image, layout, map_x, map_y, **kwargs):
    """remap of a GPU ``image`` (Tensor or list of samples) with the maps as given, and
    of the host one with the maps on the host."""

    def host(value):
        return ndd.as_tensor(value) if isinstance(value, np.ndarray) else value

    def on_host(value):
        if isinstance(value, (ndd.Tensor, ndd.Batch)) and value.device.device_type == "gpu":
            return value.cpu()
        return host(value)

    if isinstance(image, list):
        gpu_image, cpu_image = ndd.batch(image, layout=layout).gpu(), ndd.batch(image, layout=layout)
    else:
        gpu_image, cpu_image = ndd.tensor(image, layout=layout).gpu(), ndd.tensor(image, layout=layout)
    gpu = ndd.experimental.remap(gpu_image, host(map_x), host(map_y), **kwargs)
    cpu = ndd.experimental.remap(cpu_image, on_host(map_x), on_host(map_y), **kwargs)
    return gpu, cpu


def _check(image, layout, map_x, map_y, **kwargs):
    assert_same(*_remap_both(image, layout, map_x, map_y, **kwargs))


@pytest.mark.parametrize("origin", ORIGINS)
@pytest.mark.parametrize("interp", [NN, LINEAR])
@pytest.mark.parametrize("dtype", KERNEL_TYPES)
def test_remap_matches_the_cpu_for_every_kernel_type(dtype, interp, origin, any_gpu):
    image = wide_values(dtype, (11, 14, 3))
    map_x, map_y = _maps(9, 17, 11, 14)
    _check(image, "HWC", map_x, map_y, interp=interp, pixel_origin=origin)


@pytest.mark.parametrize("dtype", OTHER_TYPES)
def test_remap_samples_other_types_in_float32_as_the_cpu(dtype, any_gpu):
    map_x, map_y = _maps(8, 9, 10, 9, seed=1)
    for interp in (NN, LINEAR):
        _check(wide_values(dtype, (10, 9, 2)), "HWC", map_x, map_y, interp=interp)


@pytest.mark.parametrize("origin", ORIGINS)
@pytest.mark.parametrize("interp", [NN, LINEAR])
def test_remap_of_packed_rgb_bytes_matches_the_cpus_vector_rows(interp, origin, any_gpu):
    # 3-channel uint8 rows of at least 8 pixels go through the CPU's AVX2 row kernels.
    image = wide_values(np.uint8, (20, 33, 3), 2)
    map_x, map_y = _maps(21, 40, 20, 33, seed=2)
    _check(image, "HWC", map_x, map_y, interp=interp, pixel_origin=origin)


@pytest.mark.parametrize(
    "layout, shape",
    [("HW", (12, 9)), ("HWC", (10, 8, 1)), ("HWC", (9, 11, 5)), ("FHWC", (3, 8, 11, 2)), ("FHW", (2, 9, 7))],
)
@pytest.mark.parametrize("interp", [NN, LINEAR])
def test_remap_handles_images_without_channels_and_sequences(layout, shape, interp, any_gpu):
    frames = shape[0] if layout.startswith("F") else None
    rows, columns = shape[1:3] if frames else shape[:2]
    map_x, map_y = _maps(7, 13, rows, columns, frames, seed=3)
    _check(wide_values(np.int16, shape), layout, map_x, map_y, interp=interp, pixel_origin="center")
    # Maps with a trailing channel of 1.
    _check(wide_values(np.float32, shape), layout, map_x[..., None], map_y[..., None], interp=interp)


def test_remap_takes_maps_per_sample_of_a_ragged_batch(any_gpu):
    shapes = [(9, 12, 3), (14, 7, 3), (6, 5, 3), (5, 16, 3)]
    samples = [wide_values(np.uint8, s, i) for i, s in enumerate(shapes)]
    maps = [_maps(3 + 2 * i, 10 - i, s[0], s[1], seed=i) for i, s in enumerate(shapes)]
    map_x = ndd.batch([m[0] for m in maps])
    map_y = ndd.batch([m[1] for m in maps])
    for interp in (NN, LINEAR):
        _check(samples, "HWC", map_x, map_y, interp=interp)
        _check(samples, "HWC", map_x.gpu(), map_y.gpu(), interp=interp, pixel_origin="center")


def test_remap_uses_one_map_for_every_sample_of_a_batch(any_gpu):
    samples = [wide_values(np.float32, s, i) for i, s in enumerate([(9, 12, 2), (14, 7, 2), (6, 5, 2)])]
    map_x, map_y = _maps(8, 10, 10, 10, seed=4)
    _check(samples, "HWC", map_x, map_y)
    _check(samples, "HWC", ndd.as_tensor(map_x).gpu(), ndd.as_tensor(map_y).gpu(), interp=NN)


def test_remap_mixes_maps_on_the_gpu_and_on_the_host(any_gpu):
    image = wide_values(np.uint16, (10, 12, 3), 5)
    map_x, map_y = _maps(6, 8, 10, 12, seed=5)
    _check(image, "HWC", ndd.as_tensor(map_x).gpu(), map_y)
    _check(image, "HWC", map_x, ndd.as_tensor(map_y).gpu(), interp=NN)


def test_remap_gives_empty_outputs_and_reads_an_empty_source_as_zeros(any_gpu):
    map_x, map_y = _maps(5, 6, 4, 4, seed=6)
    _check(wide_values(np.uint8, (4, 4, 3)), "HWC", map_x[:0], map_y[:0])
    _check(wide_values(np.float32, (0, 4, 3)), "HWC", map_x, map_y)
    samples = [wide_values(np.int32, (6, 7, 2), 1), wide_values(np.int32, (5, 0, 2), 2)]
    _check(samples, "HWC", ndd.batch([map_x, map_x[:0]]), ndd.batch([map_y, map_y[:0]]))
    _check(samples, "HWC", ndd.batch([map_x[:0], map_x]), ndd.batch([map_y[:0], map_y]), interp=NN)


# -- what is launched and what is refused ------------------------------------------------------


def test_a_ragged_batch_is_one_launch(fake):
    samples = [np.zeros(s, np.uint8) for s in [(9, 12, 3), (14, 7, 3), (6, 5, 3)]]
    maps = [np.zeros((4 + i, 5), np.float32) for i in range(len(samples))]
    out = ndd.experimental.remap(ndd.batch(samples, layout="HWC").gpu(), ndd.batch(maps), ndd.batch(maps))
    out.evaluate()
    launches = [launch for launch in fake.launches if launch.function.startswith("remap_")]
    assert [launch.function for launch in launches] == ["remap_u8"]
    assert launches[0].grid[1] == len(samples)


def test_a_conversion_casts_before_and_after_the_remap(fake):
    x = ndd.tensor(np.zeros((6, 7, 3), np.int64), layout="HWC").gpu()
    m = np.zeros((4, 5), np.float32)
    ndd.experimental.remap(x, m, m).evaluate()
    names = [launch.function for launch in fake.launches if launch.function.startswith(("remap_", "cast_"))]
    assert names == ["cast_i64_to_f32", "remap_f32", "cast_f32_to_i64"]


def test_a_host_input_is_refused_on_the_gpu(fake):
    x = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")
    m = ndd.as_tensor(np.zeros((4, 4), np.float32)).gpu()
    with pytest.raises(
        NotImplementedError, match="ndd.experimental.remap on the GPU: an input in host memory"
    ):
        ndd.experimental.remap(x, m, m)
