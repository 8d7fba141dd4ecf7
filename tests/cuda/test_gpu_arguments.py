"""Arguments given as GPU Tensors or Batches are read on the host, as the reference
reads argument inputs: the results equal those of the same arguments on the CPU."""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

import ndd  # noqa: E402
from ndd._prepare.args import InvalidArgumentError  # noqa: E402


def test_a_per_sample_gpu_batch_argument_is_read_on_the_host(any_gpu):
    ranges = [np.array([0, 1], np.float32), np.array([5, 6], np.float32)]
    on_gpu = ndd.random.uniform(batch_size=2, range=ndd.batch(ranges).gpu(), rng=ndd.random.RNG(seed=3))
    on_cpu = ndd.random.uniform(batch_size=2, range=ndd.batch(ranges), rng=ndd.random.RNG(seed=3))
    for g, c in zip(on_gpu, on_cpu, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(c))
    assert 5 <= float(np.asarray(on_gpu.select(1))) < 6


def test_a_gpu_tensor_argument_is_read_on_the_host(any_gpu):
    image = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    flipped = ndd.flip(ndd.tensor(image, layout="HWC"), horizontal=ndd.tensor(np.int32(1)).gpu())
    np.testing.assert_array_equal(np.asarray(flipped), image[:, ::-1])


def test_a_wrong_argument_is_named_before_what_the_gpu_lacks(fake):
    # resize has no int8 kernel on the GPU; the wrong 'size' was reported as that.
    volume = ndd.tensor(np.zeros((3, 4, 5, 3), np.int8), layout="DHWC")
    for x in (volume, volume.gpu()):
        with pytest.raises(InvalidArgumentError, match="'size' must have 1 or 3 elements for layout DHWC"):
            ndd.resize(x, size=[1, 40])
    with pytest.raises(NotImplementedError, match="GPU"):
        ndd.resize(volume.gpu(), size=[1, 40, 4])


def test_an_operator_without_gpu_kernel_says_how_to_run_it(fake):
    frames = ndd.tensor(np.zeros((2, 32, 32, 3), np.uint8), layout="FHWC")
    with pytest.raises(
        NotImplementedError,
        match=r"ndd\.optical_flow has no GPU implementation in this build of ndd: call it on the CPU "
        r"\(device='cpu', with inputs in host memory: \.cpu\(\)\) and move its result with \.gpu\(\)",
    ):
        ndd.optical_flow(frames.gpu())


@pytest.mark.parametrize("key, expected", [("layout", b"HWC"), ("source_info", b"")])
def test_get_property_of_gpu_data_gives_its_bytes_on_the_gpu(key, expected, any_gpu):
    image = ndd.tensor(np.zeros((2, 3, 3), np.uint8), layout="HWC")
    out = ndd.get_property(image.gpu(), key=key)
    assert out.device.device_type == "gpu" and out.dtype == ndd.uint8
    assert np.asarray(out.cpu()).tobytes() == expected
    batch = ndd.batch([np.zeros((2, 3), np.float32), np.zeros((4, 1), np.float32)], layout="HW").gpu()
    result = ndd.get_property(batch, key=key)
    assert result.device.device_type == "gpu"
    assert [np.asarray(s).tobytes() for s in result.cpu()] == [expected.replace(b"HWC", b"HW")] * 2
