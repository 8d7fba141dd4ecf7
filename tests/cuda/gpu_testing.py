"""Helpers of the GPU runtime tests: the kernel build script, NVRTC, the fake driver."""

import gc
import importlib.util
import pathlib

import numpy as np
import pytest

import ndd
from ndd._cuda import driver, kernel_files
from ndd._eval import context as eval_context

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Every numeric type (the CPU's filters and morphology take them all).
NUMERIC_TYPES = [
    np.uint8,
    np.int8,
    np.uint16,
    np.int16,
    np.uint32,
    np.int32,
    np.uint64,
    np.int64,
    np.float16,
    np.float32,
    np.float64,
]

needs_nvrtc = pytest.mark.skipif(
    kernel_files.nvrtc_version() is None,
    reason="NVRTC is not installed (pip install cuda-python nvidia-cuda-nvrtc-cu12)",
)


def skip_unless_nvrtc_compiles_for(capability):
    """Skip the calling test where the installed NVRTC cannot compile for the GPU of
    ``capability`` (NVRTC 12.1, which torch 2.3's CUDA build pins, has no sm_100)."""
    sm = capability[0] * 10 + capability[1]
    if sm not in kernel_files._supported_archs():
        major, minor = kernel_files.nvrtc_version()
        pytest.skip(f"NVRTC {major}.{minor} here cannot compile for sm_{sm}")


def load_build():
    """kernels/build.py as a module (it is not part of the ndd package)."""
    spec = importlib.util.spec_from_file_location("kernel_build", ROOT / "kernels" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    return build


def forget_thread_defaults():
    """Drop the calling thread's default contexts: they hold streams of the driver in use."""
    eval_context._tls.__dict__.pop("implicit", None)
    eval_context._tls.__dict__.pop("defaults", None)


def install_fake(fake_driver):
    """Generator for a fixture: ``fake_driver`` installed, with clean per-thread state
    before and after."""
    with driver.use_fake(fake_driver) as installed:
        forget_thread_defaults()
        try:
            yield installed
        finally:
            for device_id in range(fake_driver.devices):
                ndd.set_default_stream(None, device_id=device_id)
            forget_thread_defaults()
            gc.collect()


def _bits(array):
    """``array`` as unsigned integers of its width, so that -0.0 and NaN signs count."""
    array = np.ascontiguousarray(array)
    return array.view(f"u{array.dtype.itemsize}")


def assert_same(gpu_result, cpu_result, bits=False):
    """A GPU result (Tensor or Batch) equals its CPU twin: on the GPU, of the same type,
    layout and shapes, every value equal (with ``bits``, every bit: zeros' and NaNs'
    signs too)."""
    assert gpu_result.device.device_type == "gpu"
    assert gpu_result.dtype == cpu_result.dtype
    assert gpu_result.layout == cpu_result.layout
    host = gpu_result.cpu()
    if isinstance(cpu_result, ndd.Batch):
        assert host.batch_size == cpu_result.batch_size
        pairs = list(zip(host, cpu_result, strict=True))
    else:
        pairs = [(host, cpu_result)]
    for g, c in pairs:
        g, c = np.asarray(g), np.asarray(c)
        assert g.shape == c.shape
        if bits:
            assert g.dtype == c.dtype
            g, c = _bits(g), _bits(c)
        np.testing.assert_array_equal(g, c)


def check_tensor(op, values, layout, **kwargs):
    """``op`` on a GPU Tensor of ``values`` equals ``op`` on the CPU Tensor."""
    assert_same(
        op(ndd.tensor(values, layout=layout).gpu(), **kwargs), op(ndd.tensor(values, layout=layout), **kwargs)
    )


def check_batch(op, samples, layout, **kwargs):
    """``op`` on a GPU Batch of ``samples`` equals ``op`` on the CPU Batch."""
    assert_same(
        op(ndd.batch(samples, layout=layout).gpu(), **kwargs), op(ndd.batch(samples, layout=layout), **kwargs)
    )


def wide_values(dtype, shape, seed=0):
    """Values spanning much of the type (saturating blends), with NaN and infinities
    among the float ones."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -70000), min(info.max, 70000), shape, dtype=dtype, endpoint=True)
    values = (rng.standard_normal(shape) * 300).astype(dtype)
    if values.size > 40:
        values.flat[[5, 17, 33]] = [np.nan, np.inf, -np.inf]
    return values
