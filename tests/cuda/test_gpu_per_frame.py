"""Arguments given frame by frame (ndd.per_frame, ndd/_ops/frames.py) on the GPU: the
calls of tests/golden/per_frame_cases.py with their sequences on the GPU give the CPU's
results, on the kernels built for the CPU and on a real GPU (``any_gpu``). The frames
are views of the input's memory, and a dense result is stacked back without a copy."""

import os
import sys

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import assert_same  # noqa: E402

import ndd  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
from per_frame_cases import CASES, VIDEO  # noqa: E402


class _OnTheGpu:
    """ndd, with the data the cases give a layout of two or more dimensions (their
    sequences and points) on the GPU; the per-frame arguments stay on the host."""

    def __getattr__(self, name):
        return getattr(ndd, name)

    @staticmethod
    def as_tensor(data, layout=None, **kwargs):
        tensor = ndd.as_tensor(data, layout=layout, **kwargs)
        return tensor.gpu() if layout and len(layout) > 1 else tensor

    @staticmethod
    def batch(samples, layout=None, **kwargs):
        result = ndd.batch(samples, layout=layout, **kwargs)
        return result.gpu() if layout and len(layout) > 1 else result


# The cases with an input of two or more dimensions: not the transforms, which build
# their sequences from their arguments, nor coord_transform_m_t, whose points have none.
GPU_CASES = sorted(
    name
    for name in CASES
    if not name.startswith(("translation", "rotation", "scale", "shear", "crop", "combine"))
    and name != "coord_transform_m_t"
)


@pytest.mark.parametrize("name", GPU_CASES)
def test_per_frame_arguments_on_the_gpu_give_the_cpus_results(name, any_gpu):
    assert_same(CASES[name](_OnTheGpu()), CASES[name](ndd))


def _device_copies(fake, call):
    """The device-to-device copies ``call()`` makes on the recording FakeDriver."""
    before = fake.calls.count("cuMemcpyDtoDAsync")
    call().evaluate()
    return fake.calls.count("cuMemcpyDtoDAsync") - before


def test_a_dense_result_is_stacked_back_without_a_copy(fake_with_kernels):
    video = ndd.as_tensor(VIDEO, layout="FHWC").gpu()
    brightness = ndd.per_frame(ndd.as_tensor(np.float32([0.5, 1.0, 1.5])))
    assert _device_copies(fake_with_kernels, lambda: ndd.brightness(video, brightness=brightness)) == 0


def test_a_ragged_result_is_gathered_a_copy_per_frame(fake_with_kernels):
    videos = ndd.batch([VIDEO, VIDEO[:2, :9, :11]], layout="FHWC").gpu()
    angles = ndd.batch([np.float32([5, 10, 15]), np.float32([40, 80])], layout="F")
    assert _device_copies(fake_with_kernels, lambda: ndd.rotate(videos, angle=angles)) == 5


def test_ragged_results_are_gathered_into_sequences(any_gpu):
    videos = [VIDEO, VIDEO[:2, :9, :11]]
    angles = ndd.batch([np.float32([5, 10, 15]), np.float32([40, 80])], layout="F")
    assert_same(
        ndd.rotate(ndd.batch(videos, layout="FHWC").gpu(), angle=angles),
        ndd.rotate(ndd.batch(videos, layout="FHWC"), angle=angles),
    )


def test_a_sequence_tensor_in_batch_mode_is_every_sample(any_gpu):
    angles = ndd.batch([np.float32([5, 10, 15]), np.float32([-30])], layout="F")
    video = ndd.as_tensor(VIDEO, layout="FHWC")
    assert_same(ndd.rotate(video.gpu(), angle=angles), ndd.rotate(video, angle=angles))
