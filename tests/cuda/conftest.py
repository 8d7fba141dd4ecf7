"""Fixtures of the GPU runtime tests."""

import hashlib
import pathlib
import shutil
import tempfile

import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import ROOT, install_fake, load_build  # noqa: E402

from ndd._cuda import kernel_files  # noqa: E402
from ndd._cuda.fake import FakeDriver  # noqa: E402
from ndd._cuda.host_kernels import HostKernels, compiler  # noqa: E402


@pytest.fixture
def fake():
    """A two-device FakeDriver as the driver."""
    yield from install_fake(FakeDriver(devices=2))


@pytest.fixture(scope="session")
def built():
    """A folder with every kernel built as ndd ships them: built once per state of
    kernels/ and of the build's code, and kept in the kernel cache for later sessions."""
    if kernel_files.nvrtc_version() is None:
        pytest.skip("NVRTC is not installed")
    inputs = sorted((ROOT / "kernels").glob("*.cu*")) + [
        ROOT / "kernels" / "build.py",
        ROOT / "ndd" / "_cuda" / "kernel_files.py",
    ]
    digest = hashlib.sha256(repr(kernel_files.nvrtc_version()).encode())
    for path in inputs:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    folder = kernel_files.cache_dir() / "test-builds" / digest.hexdigest()[:20]
    if not (folder / kernel_files.MANIFEST_NAME).exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = pathlib.Path(tempfile.mkdtemp(dir=folder.parent))
        load_build().build_all(str(staging))
        try:
            staging.rename(folder)
        except OSError:  # built meanwhile by another test session
            shutil.rmtree(staging)
    return folder


@pytest.fixture(scope="session")
def host_kernels(built):
    """The session's kernels built for the CPU (see ndd/_cuda/host_kernels.py)."""
    if compiler() is None:
        pytest.skip("no host C++ compiler to build the kernels for the CPU")
    return HostKernels(built)


@pytest.fixture(params=["host", pytest.param("device", marks=pytest.mark.gpu)])
def any_gpu(request, monkeypatch):
    """Runs a test twice: on a FakeDriver whose kernels run on the CPU ("host"), and on
    the real GPU ("device", skipped without one)."""
    if request.param == "device":
        yield request.param
        return
    host = request.getfixturevalue("host_kernels")
    monkeypatch.setattr(kernel_files, "KERNELS_DIR", host.kernels_dir)
    for _ in install_fake(FakeDriver(devices=2, host_kernels=host)):
        yield request.param
