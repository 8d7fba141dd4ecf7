"""Fixtures of the GPU runtime tests."""

import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import install_fake, load_build  # noqa: E402

from ndd._cuda import kernel_files  # noqa: E402
from ndd._cuda.fake import FakeDriver  # noqa: E402


@pytest.fixture
def fake():
    """A two-device FakeDriver as the driver."""
    yield from install_fake(FakeDriver(devices=2))


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """A folder with every kernel built as ndd ships them (once per test session)."""
    if kernel_files.nvrtc_version() is None:
        pytest.skip("NVRTC is not installed")
    folder = tmp_path_factory.mktemp("kernels")
    load_build().build_all(str(folder))
    return folder
