"""GPU data movement (ndd/_ops/gpu_layout.py, kernels/layout.cu): copy, the
reshaping views, transpose, slice, tensor subscripts, pad, cat, stack and
``broadcast_to``, each compared with its CPU twin (exact equality) on the kernels
built for the CPU and on a real GPU (``any_gpu``); what is launched is checked on
the recording FakeDriver (``fake``).
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import install_fake  # noqa: E402

import ndd  # noqa: E402
from ndd._cuda import kernel_files  # noqa: E402
from ndd._cuda.device_array import DeviceArray  # noqa: E402
from ndd._cuda.fake import FakeDriver  # noqa: E402
from ndd._ops import gpu_layout  # noqa: E402

DTYPES = [np.uint8, np.int16, np.float32, np.float64, np.bool_]


@pytest.fixture
def fake(built, monkeypatch):
    """The recording FakeDriver (kernels are not run) with the session's kernel build."""
    monkeypatch.setattr(kernel_files, "KERNELS_DIR", built)
    yield from install_fake(FakeDriver(devices=2))


def _values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return np.asarray((rng.standard_normal(shape) * 1000).astype(dtype))


def _assert_same(gpu_result, cpu_result):
    assert gpu_result.device.device_type == "gpu"
    assert gpu_result.dtype == cpu_result.dtype
    assert gpu_result.layout == cpu_result.layout
    np.testing.assert_array_equal(np.asarray(gpu_result.cpu()), np.asarray(cpu_result))


def _assert_same_batch(gpu_result, cpu_result):
    assert gpu_result.device.device_type == "gpu"
    assert gpu_result.dtype == cpu_result.dtype
    assert gpu_result.layout == cpu_result.layout
    host = gpu_result.cpu()
    assert len(host) == len(cpu_result)
    for g, c in zip(host, cpu_result, strict=True):
        assert g.shape == c.shape
        np.testing.assert_array_equal(np.asarray(g), np.asarray(c))


def _stream():
    return ndd.EvalContext.current().cuda_stream


# -- broadcast_to --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES + [np.complex128])
@pytest.mark.parametrize(
    "shape, target",
    [((3, 1), (3, 5)), ((1, 4), (6, 4)), ((4,), (2, 3, 4)), ((2, 1, 3), (2, 5, 3)), ((), (7,)), ((5,), (5,))],
)
def test_broadcast_to_equals_numpy(shape, target, dtype, any_gpu):
    values = _values(dtype, shape)
    array = DeviceArray.from_host(values, 0, _stream())
    out = gpu_layout.broadcast_to(array, target, _stream(), 0)
    assert out.shape == target and out.dtype == values.dtype
    np.testing.assert_array_equal(out.to_host(), np.broadcast_to(values, target))


def test_broadcast_to_refuses_incompatible_shapes(fake):
    array = DeviceArray.from_host(np.zeros((3, 2), np.float32), 0, _stream())
    with pytest.raises(ValueError, match=r"shape \(3, 2\) to \(3, 4\)"):
        gpu_layout.broadcast_to(array, (3, 4), _stream(), 0)


def test_broadcast_to_is_one_launch_of_the_widest_unit(fake):
    array = DeviceArray.from_host(np.zeros((1, 16), np.uint8), 0, _stream())
    out = gpu_layout.broadcast_to(array, (10, 16), _stream(), 0)
    (launch,) = fake.launches
    # 16 contiguous bytes read 10 times: one 16-byte unit per row.
    assert launch.function == "strided_copy_16"
    assert launch.args[1] == 1
    assert out.shape == (10, 16)
