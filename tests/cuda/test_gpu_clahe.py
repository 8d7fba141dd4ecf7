"""GPU CLAHE (ndd/_ops/gpu_clahe.py, kernels/clahe.cu) compared with its CPU twin on
the kernels built for the CPU and on a real GPU (``any_gpu``). Equality is exact:
the tiles, clip limits, table scales and Lab tables come from the CPU's own
functions, the histograms, clipping and Lab conversions are integer arithmetic, and
the table values and the blend are the CPU's float32 operations in its order, each
rounded on its own. What is launched is checked on the recording FakeDriver
(``fake``).
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import check_batch, check_tensor  # noqa: E402

import ndd  # noqa: E402
from ndd._ops import gpu_segments  # noqa: E402

# (tiles_x, tiles_y): one tile, uneven grids, and a grid finer than the small images.
GRIDS = [(1, 1), (3, 2), (4, 4), (8, 8)]
# No clipping, a limit of one count (all the excess redistributed), OpenCV's usual 2
# and a limit above every count.
CLIP_LIMITS = [0.0, 0.3, 2.0, 400.0]
# Odd, even, thinner than the grid, one pixel wide.
SHAPES = [(37, 29), (32, 48), (5, 3), (1, 7)]


@pytest.fixture
def fake(fake_with_kernels):
    """The recording FakeDriver (kernels are not run) with the session's kernel build."""
    return fake_with_kernels


def _image(height, width, channels, seed=0):
    """Contrast to equalize: a narrow band of levels across a gradient, with bright
    specks (tall bins to clip), plus some of every level."""
    rng = np.random.default_rng(seed)
    ramp = np.linspace(40, 160, width)[None, :, None] + np.linspace(0, 30, height)[:, None, None]
    image = ramp + rng.integers(-8, 9, (height, width, channels))
    image[rng.random((height, width)) < 0.05] = 250
    spots = rng.random(image.shape) < 0.03
    image[spots] = rng.integers(0, 256, np.count_nonzero(spots))
    return np.clip(image, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("clip_limit", CLIP_LIMITS)
@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("channels, luma_only", [(1, True), (3, True), (3, False)])
def test_clahe_matches_the_cpu(channels, luma_only, grid, clip_limit, any_gpu):
    tiles_x, tiles_y = grid
    for shape in SHAPES:
        check_tensor(
            ndd.clahe,
            _image(*shape, channels),
            "HWC",
            tiles_x=tiles_x,
            tiles_y=tiles_y,
            clip_limit=clip_limit,
            luma_only=luma_only,
        )


def test_clahe_converts_every_colour_to_lab_and_back_as_the_cpu(any_gpu):
    # Every colour of a 64-level cube (and the extremes) through the Lab pass.
    levels = np.append(np.arange(0, 256, 4), 255).astype(np.uint8)
    cube = np.stack(np.meshgrid(levels, levels, levels, indexing="ij"), axis=-1).reshape(65 * 65, 65, 3)
    for clip_limit in (0.0, 1.5):
        check_tensor(ndd.clahe, cube, "HWC", tiles_x=5, tiles_y=7, clip_limit=clip_limit)


@pytest.mark.parametrize("luma_only", [True, False])
def test_clahe_takes_a_ragged_batch_with_an_empty_image(luma_only, any_gpu):
    shapes = [(21, 30, 3), (9, 5, 3), (0, 4, 3), (16, 16, 1), (3, 40, 3), (8, 0, 1)]
    samples = [_image(h, w, c, seed=i) for i, (h, w, c) in enumerate(shapes)]
    check_batch(ndd.clahe, samples, "HWC", tiles_x=4, tiles_y=3, clip_limit=2.5, luma_only=luma_only)


def test_clahe_ignores_the_bin_count_as_the_cpu(any_gpu):
    for bins in (256, 128, 1):
        check_tensor(ndd.clahe, _image(24, 31, 3), "HWC", tiles_x=2, tiles_y=3, clip_limit=1.0, bins=bins)


def test_clahe_runs_a_tensor_as_every_sample_of_a_batch(any_gpu):
    image = _image(13, 17, 3)
    kwargs = dict(tiles_x=2, tiles_y=2, clip_limit=3.0)
    gpu = ndd.clahe(ndd.tensor(image, layout="HWC").gpu(), batch_size=3, **kwargs)
    cpu = np.asarray(ndd.clahe(ndd.tensor(image, layout="HWC"), **kwargs))
    assert gpu.batch_size == 3
    for sample in gpu.cpu():
        np.testing.assert_array_equal(np.asarray(sample), cpu)


def test_clahe_splits_more_tiles_and_samples_than_a_grid_takes(monkeypatch, any_gpu):
    # A grid's y extent of 5 blocks: 3 samples x 6 tiles are 4 table launches, the
    # 3 samples 1 apply launch, and each block still finds its plane and tile.
    monkeypatch.setattr(gpu_segments, "MAX_SEGMENTS", 5)
    samples = [_image(10, 12, 1, seed=i) for i in range(3)]
    check_batch(ndd.clahe, samples, "HWC", tiles_x=3, tiles_y=2, clip_limit=1.0)


def test_a_ragged_batch_is_one_launch_of_each_pass(fake):
    samples = [np.zeros(s, np.uint8) for s in [(9, 12, 3), (14, 7, 3), (0, 5, 3), (5, 16, 3)]]
    ndd.clahe(ndd.batch(samples, layout="HWC").gpu(), tiles_x=2, tiles_y=3, clip_limit=2.0).evaluate()
    launches = [launch for launch in fake.launches if launch.function.startswith("clahe_")]
    assert [launch.function for launch in launches] == ["clahe_tables", "clahe_apply"]
    # A block per tile of the three non-empty images; their pixels by rows.
    assert launches[0].grid[1] == 3 * 6
    assert launches[1].grid[1] == 3


def test_a_host_input_is_refused_on_the_gpu(fake):
    with pytest.raises(NotImplementedError, match="ndd.clahe on the GPU: an input in host memory"):
        x = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")
        ndd.clahe(x, tiles_x=2, tiles_y=2, clip_limit=2.0, device="gpu")
