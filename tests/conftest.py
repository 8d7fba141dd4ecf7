"""Shared test configuration: GPU tests are skipped cleanly without a GPU."""

import gc

import pytest

from ndd._cuda import driver


def pytest_collection_modifyitems(config, items):
    if driver.device_count() > 0:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_collection_finish(session):
    # The objects of the collected modules live for the whole run: keep them out of the
    # collections that tests and fixtures ask for (install_fake collects after every test).
    gc.freeze()
