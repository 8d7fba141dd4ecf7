"""Fixtures of the GPU runtime tests."""

import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import install_fake, load_build  # noqa: E402

from ndd._cuda import kernel_files  # noqa: E402
from ndd._cuda.fake import FakeDriver  # noqa: E402
from ndd._cuda.host_kernels import HostKernels, compiler  # noqa: E402


@pytest.fixture
def fake():
    """A two-device FakeDriver as the driver."""
    yield from install_fake(FakeDriver(devices=2))


@pytest.fixture
def fake_with_kernels(built, monkeypatch):
    """The recording FakeDriver (kernels are not run) with the session's kernel build,
    for tests of what is launched."""
    monkeypatch.setattr(kernel_files, "KERNELS_DIR", built)
    yield from install_fake(FakeDriver(devices=2))


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """A folder with every kernel built as ndd ships them (once per test session; each
    kernel file is compiled only when it changed, through the kernel cache)."""
    if kernel_files.nvrtc_version() is None:
        pytest.skip("NVRTC is not installed")
    folder = tmp_path_factory.mktemp("kernels")
    build = load_build()
    build.build_all(str(folder), cache_dir=build.module_cache_dir())
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
