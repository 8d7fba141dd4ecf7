"""GPU bounding-box operators (ndd/_ops/gpu_boxes.py, kernels/boxes.cu): bb_flip and
box_encoder, compared with their CPU twins on the kernels built for the CPU and on a
real GPU (``any_gpu``). Exact: the kernels repeat the CPU's float32 operations in
its order, except the logarithm of box_encoder's offsets (numpy's float32 log and
CUDA's logf may differ in the last bit)."""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")


import ndd  # noqa: E402


@pytest.fixture
def fake(fake_with_kernels):
    """The recording FakeDriver (kernels are not run) with the session's kernel build."""
    return fake_with_kernels


def _boxes(count, seed):
    """ltrb boxes inside [0, 1], some degenerate."""
    rng = np.random.default_rng(seed)
    corners = rng.random((count, 2, 2), dtype=np.float32)
    boxes = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1)
    if count > 2:
        boxes[1, 2] = boxes[1, 0]  # no width
    return boxes.astype(np.float32)


def _anchors(side=8):
    """A grid of square anchors of two sizes (ltrb, flattened)."""
    centers = (np.arange(side, dtype=np.float32) + 0.5) / side
    anchors = []
    for size in (0.15, 0.4):
        for cy in centers:
            for cx in centers:
                anchors.append([cx - size / 2, cy - size / 2, cx + size / 2, cy + size / 2])
    return np.clip(np.array(anchors, np.float32), 0, 1).reshape(-1).tolist()


def _same(gpu, cpu, rtol=0.0):
    assert gpu.device.device_type == "gpu"
    for g, c in zip(gpu.cpu(), cpu, strict=True):
        g, c = np.asarray(g), np.asarray(c)
        assert g.dtype == c.dtype and g.shape == c.shape
        if rtol:
            np.testing.assert_allclose(g, c, rtol=rtol)
        else:
            np.testing.assert_array_equal(g, c)


@pytest.mark.parametrize("ltrb", [True, False])
def test_bb_flip_matches_the_cpu(ltrb, any_gpu):
    samples = [_boxes(n, n) for n in (5, 0, 9)]
    horizontal = ndd.batch([np.int32(v) for v in (1, 0, 1)])
    vertical = ndd.batch([np.int32(v) for v in (0, 1, 1)])
    kwargs = dict(ltrb=ltrb, horizontal=horizontal, vertical=vertical)
    _same(ndd.bb_flip(ndd.batch(samples).gpu(), **kwargs), ndd.bb_flip(ndd.batch(samples), **kwargs))


@pytest.mark.parametrize("offset", [False, True])
def test_box_encoder_matches_the_cpu(offset, any_gpu):
    boxes = [_boxes(n, 10 + n) for n in (4, 1, 0, 7)]
    labels = [np.arange(1, len(b) + 1, dtype=np.int32) for b in boxes]
    kwargs = dict(anchors=_anchors(), criteria=0.3, offset=offset)
    if offset:
        kwargs.update(scale=2.0, means=[0.1, 0.0, -0.1, 0.2], stds=[0.1, 0.1, 0.2, 0.2])
    gpu_boxes, gpu_labels = ndd.box_encoder(ndd.batch(boxes).gpu(), ndd.batch(labels).gpu(), **kwargs)
    cpu_boxes, cpu_labels = ndd.box_encoder(ndd.batch(boxes), ndd.batch(labels), **kwargs)
    _same(gpu_labels, cpu_labels)
    # The offsets' logarithms may differ in the last bit between numpy and CUDA.
    _same(gpu_boxes, cpu_boxes, rtol=1e-6 if offset else 0.0)


def test_box_encoder_claims_anchors_in_box_order_as_on_the_cpu(any_gpu):
    # Two identical boxes: both prefer the same anchor; the later box takes it.
    box = np.array([[0.1, 0.1, 0.3, 0.3]], np.float32)
    boxes = np.concatenate([box, box, _boxes(3, 3)])
    labels = np.array([7, 8, 1, 2, 3], np.int32)
    kwargs = dict(anchors=_anchors(), criteria=0.9)
    gpu = ndd.box_encoder(ndd.tensor(boxes).gpu(), ndd.tensor(labels).gpu(), **kwargs)
    cpu = ndd.box_encoder(ndd.tensor(boxes), ndd.tensor(labels), **kwargs)
    for g, c in zip(gpu, cpu, strict=True):
        np.testing.assert_array_equal(np.asarray(g.cpu()), np.asarray(c))
    assert 8 in np.asarray(cpu[1]).tolist() and 7 not in np.asarray(cpu[1]).tolist()


def test_box_encoder_runs_a_block_per_sample_in_one_launch(fake):
    boxes = [_boxes(n, n) for n in (3, 5)]
    labels = [np.zeros(len(b), np.int32) for b in boxes]
    ndd.box_encoder(ndd.batch(boxes).gpu(), ndd.batch(labels).gpu(), anchors=_anchors())[0].evaluate()
    launches = [launch for launch in fake.launches if launch.function == "box_encoder"]
    assert len(launches) == 1 and launches[0].grid[:2] == (1, 2) and launches[0].block[0] == 256


def test_box_encoder_refuses_labels_in_host_memory_at_the_call(fake):
    with pytest.raises(NotImplementedError, match="ndd.box_encoder on the GPU: an input in host memory"):
        ndd.box_encoder(ndd.tensor(_boxes(2, 0)).gpu(), ndd.tensor(np.zeros(2, np.int32)), anchors=_anchors())


@pytest.mark.parametrize("dims, layout", [(1, ""), (2, "xy"), (2, "yx"), (3, "zyx")])
def test_coord_flip_matches_the_cpu(dims, layout, any_gpu):
    rng = np.random.default_rng(dims)
    samples = [rng.random((n, dims), dtype=np.float32) for n in (6, 0, 11)]
    flip_x = ndd.batch([np.int32(v) for v in (1, 0, 1)])
    kwargs = dict(layout=layout, flip_x=flip_x, flip_y=1, center_x=0.25, center_y=0.7)
    if dims == 3:
        kwargs.update(flip_z=1, center_z=0.1)
    _same(ndd.coord_flip(ndd.batch(samples).gpu(), **kwargs), ndd.coord_flip(ndd.batch(samples), **kwargs))


@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int16, np.int32])
def test_coord_transform_matches_the_cpu(dtype, any_gpu):
    rng = np.random.default_rng(3)
    samples = [(rng.random((n, 2)) * 100).astype(dtype) for n in (5, 0, 8)]
    matrices = ndd.batch([np.array([[1.5, -0.2], [0.3, 2.0], [1.0, 1.0]], np.float32)] * 3)
    for kwargs in (
        dict(M=matrices, T=[0.5, -1.0, 3.0]),
        dict(MT=[[0.7, 0.1, 10.0], [-0.2, 1.1, -4.0]]),
        dict(M=2.0),
    ):
        _same(
            ndd.coord_transform(ndd.batch(samples).gpu(), **kwargs),
            ndd.coord_transform(ndd.batch(samples), **kwargs),
        )
    # The input's own type: rounded and saturated.
    cpu = ndd.coord_transform(ndd.batch(samples), M=3.0, T=[-50.0, 9.5])
    kwargs = dict(M=3.0, T=[-50.0, 9.5], dtype=cpu.dtype if dtype == np.float32 else ndd.batch(samples).dtype)
    _same(
        ndd.coord_transform(ndd.batch(samples).gpu(), **kwargs),
        ndd.coord_transform(ndd.batch(samples), **kwargs),
    )
