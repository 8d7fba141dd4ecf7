"""GPU compositing operators (ndd/_ops/gpu_compose.py, kernels/compose.cu): erase,
paste and grid_mask, compared exactly with their CPU twins on the kernels built for
the CPU and on a real GPU (``any_gpu``)."""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import assert_same  # noqa: E402

import ndd  # noqa: E402

RAGGED = [(9, 12, 3), (14, 7, 3), (6, 5, 3), (1, 16, 3)]


@pytest.fixture
def fake(fake_with_kernels):
    """The recording FakeDriver (kernels are not run) with the session's kernel build."""
    return fake_with_kernels


def _images(dtype, shapes, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return [rng.standard_normal(s).astype(dtype) for s in shapes]
    return [rng.integers(1, 100, s).astype(dtype) for s in shapes]


def _check_batch(op, samples, layout, **kwargs):
    assert_same(
        op(ndd.batch(samples, layout=layout).gpu(), **kwargs), op(ndd.batch(samples, layout=layout), **kwargs)
    )


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, np.bool_])
def test_erase_matches_the_cpu(dtype, any_gpu):
    samples = _images(dtype, RAGGED)
    _check_batch(ndd.erase, samples, "HWC", anchor=[2, 1, 5, 4], shape=[3, 4, 10, 2], fill_value=[7])
    _check_batch(
        ndd.erase,
        samples,
        "HWC",
        anchor=[0.25, 0.5],
        shape=[0.5, 0.4],
        normalized=True,
        centered_anchor=True,
        fill_value=[1, 2, 3],
    )
    _check_batch(ndd.erase, samples, "HWC", anchor=[3], shape=[2], axis_names="W")


def test_erase_takes_per_sample_regions(any_gpu):
    samples = _images(np.uint8, RAGGED)
    anchors = ndd.batch([np.array(a, np.float32) for a in ([1, 1], [0, 2], [3, 0], [0, 0])])
    shapes = ndd.batch([np.array(s, np.float32) for s in ([2, 3], [5, 1], [1, 1], [9, 9])])
    _check_batch(ndd.erase, samples, "HWC", anchor=anchors, shape=shapes, fill_value=[200])


def test_erase_of_chw_data_fills_per_channel(any_gpu):
    samples = [np.ascontiguousarray(s.transpose(2, 0, 1)) for s in _images(np.float32, RAGGED)]
    _check_batch(ndd.erase, samples, "CHW", anchor=[1, 2], shape=[4, 4], fill_value=[-1.0, 0.5, 9.0])


def test_paste_matches_the_cpu(any_gpu):
    samples = _images(np.uint8, RAGGED)
    _check_batch(ndd.paste, samples, "HWC", ratio=2.0, fill_value=[10, 20, 30], paste_x=0.2, paste_y=0.9)
    ratio = ndd.batch([np.float32(r) for r in (1.0, 1.5, 3.0, 2.2)])
    _check_batch(ndd.paste, samples, "HWC", ratio=ratio, fill_value=[255], min_canvas_size=20.0)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_grid_mask_matches_the_cpu(dtype, any_gpu):
    samples = _images(dtype, [(40, 50, 3), (33, 21, 3), (16, 16, 3)])
    _check_batch(ndd.grid_mask, samples, "HWC", tile=12, ratio=0.4, angle=0.3, shift_x=5.0, shift_y=-3.0)
    angles = ndd.batch([np.float32(a) for a in (0.0, 1.2, -0.7)])
    _check_batch(ndd.grid_mask, samples, "HWC", tile=9, angle=angles)
    _check_batch(ndd.grid_mask, [s[:, :, 0] for s in samples], "HW", tile=7)


def test_grid_mask_of_planar_images_and_sequences_matches_the_cpu(any_gpu):
    images = _images(np.uint8, [(40, 50, 3), (33, 21, 3), (16, 16, 3)])
    angles = ndd.batch([np.float32(a) for a in (0.0, 1.2, -0.7)])
    planar = [np.ascontiguousarray(s.transpose(2, 0, 1)) for s in images]
    _check_batch(ndd.grid_mask, planar, "CHW", tile=9, ratio=0.4, angle=angles)
    frames = _images(np.int16, [(2, 20, 24, 3), (3, 9, 11, 3), (1, 5, 6, 3)])
    _check_batch(ndd.grid_mask, frames, "FHWC", tile=6, angle=angles, shift_x=2.0)
    planar_frames = [np.ascontiguousarray(f.transpose(0, 3, 1, 2)) for f in frames]
    _check_batch(ndd.grid_mask, planar_frames, "FCHW", tile=6, angle=angles, shift_y=1.0)


def test_erase_fills_every_region_of_a_batch_in_one_launch(fake):
    samples = [np.zeros(s, np.uint8) for s in RAGGED]
    ndd.erase(ndd.batch(samples, layout="HWC").gpu(), anchor=[1, 1, 3, 3], shape=[1, 1, 2, 2]).evaluate()
    fills = [launch for launch in fake.launches if launch.function.startswith("fill_boxes")]
    # Two regions per sample, but the last image has one row: its regions are empty.
    assert len(fills) == 1 and fills[0].grid[1] == 2 * 3


def test_multi_paste_matches_the_cpu(any_gpu):
    samples = _images(np.uint8, [(12, 12, 3)] * 4)
    kwargs = dict(
        in_ids=[2, 0, 1],
        in_anchors=[[0, 0], [3, 4], [1, 1]],
        shapes=[[6, 6], [5, 5], [8, 9]],
        out_anchors=[[0, 0], [4, 4], [2, 1]],
    )
    _check_batch(ndd.multi_paste, samples, "HWC", **kwargs)
    _check_batch(
        ndd.multi_paste,
        samples,
        "HWC",
        in_ids=[3, 3],
        output_size=[30, 30],
        out_anchors_rel=[[0.0, 0.0], [0.5, 0.25]],
    )


def test_multi_paste_of_several_inputs_matches_the_cpu(any_gpu):
    first, second = _images(np.float32, [(7, 9, 3)] * 3), _images(np.float32, [(7, 9, 3)] * 3, seed=1)
    gpu = ndd.multi_paste(
        ndd.batch(first, layout="HWC").gpu(),
        ndd.batch(second, layout="HWC").gpu(),
        out_anchors=[[0, 0], [2, 3]],
        shapes=[[7, 9], [4, 5]],
    )
    cpu = ndd.multi_paste(
        ndd.batch(first, layout="HWC"),
        ndd.batch(second, layout="HWC"),
        out_anchors=[[0, 0], [2, 3]],
        shapes=[[7, 9], [4, 5]],
    )
    assert_same(gpu, cpu)


def test_sequence_rearrange_matches_the_cpu(any_gpu):
    sequences = _images(np.int16, [(4, 3, 5, 2), (6, 2, 2, 2), (2, 7, 1, 3)])
    _check_batch(ndd.sequence_rearrange, sequences, "FHWC", new_order=[1, 0, 1])
    orders = [[3, 2, 1, 0], [5], [0, 0, 1, 1, 0]]
    for sequence, order in zip(sequences, orders, strict=False):
        assert_same(
            ndd.sequence_rearrange(ndd.tensor(sequence, layout="FHWC").gpu(), new_order=order),
            ndd.sequence_rearrange(ndd.tensor(sequence, layout="FHWC"), new_order=order),
        )
