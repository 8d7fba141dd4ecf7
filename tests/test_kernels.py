"""Every CUDA kernel compiles to PTX with NVRTC (needs the nvrtc wheel, not a GPU)."""

import glob
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load_build():
    spec = importlib.util.spec_from_file_location("kernel_build", ROOT / "kernels" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_kernel_compiles_to_ptx(tmp_path):
    build = _load_build()
    if build._nvrtc() is None:
        pytest.skip("NVRTC is not installed (pip install cuda-python nvidia-cuda-nvrtc-cu12)")
    written = build.build_all(str(tmp_path), cache_dir=build.module_cache_dir())
    sources = glob.glob(str(ROOT / "kernels" / "*.cu"))
    assert len(written) == len(sources) > 0
    for path in written:
        text = pathlib.Path(path).read_text(encoding="utf-8")
        assert ".entry" in text and ".target" in text


def test_elementwise_kernel_exports_one_entry_per_op_and_type(tmp_path):
    build = _load_build()
    if build._nvrtc() is None:
        pytest.skip("NVRTC is not installed")
    ptx = build.compile_to_ptx(build._nvrtc(), str(ROOT / "kernels" / "elementwise.cu"))
    for op in ("add", "sub", "mul", "minimum", "maximum"):
        for suffix in ("u8", "i16", "i32", "i64", "f32", "f64"):
            assert f".entry {op}_{suffix}(" in ptx
