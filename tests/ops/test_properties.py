"""get_property (ndd/_ops/properties.py)."""

import numpy as np
import pytest
from golden_cases import golden_tests

import ndd

test_get_property_matches_reference_golden, _ = golden_tests("get_property")


def _text(tensor):
    return np.asarray(tensor).tobytes().decode()


@pytest.mark.parametrize("layout", ["HWC", "FHWC", "W", "CHW"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float32, np.bool_])
def test_get_property_layout_as_bytes(layout, dtype):
    x = ndd.tensor(np.zeros((1,) * len(layout), dtype), layout=layout)
    out = ndd.get_property(x, key="layout")
    assert out.dtype == ndd.uint8 and out.layout is None
    np.testing.assert_array_equal(np.asarray(out), np.frombuffer(layout.encode(), np.uint8), strict=True)
    assert _text(out) == layout


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_get_property_layout_of_data_without_layout_is_empty(shape):
    out = ndd.get_property(np.zeros(shape, np.float32), key="layout")
    assert out.shape == (0,) and out.dtype == ndd.uint8


def test_get_property_layout_of_a_batch():
    x = ndd.batch([np.zeros((2, 3), np.int16), np.zeros((4, 1), np.int16)], layout="HW")
    out = ndd.get_property(x, key="layout")
    assert isinstance(out, ndd.Batch) and out.batch_size == 2 and out.dtype == ndd.uint8
    assert [_text(s) for s in out] == ["HW", "HW"]


def test_get_property_of_a_tensor_over_batch_size():
    out = ndd.get_property(ndd.tensor(np.zeros((2, 2)), layout="HW"), key="layout", batch_size=3)
    assert isinstance(out, ndd.Batch) and [_text(s) for s in out] == ["HW"] * 3


def test_get_property_samples_do_not_share_memory():
    out = ndd.get_property(ndd.batch([np.zeros(2), np.zeros(2)], layout="W"), key="layout")
    first, second = (np.asarray(s) for s in out)
    assert not np.shares_memory(first, second)


def test_get_property_layout_of_a_pending_result():
    with ndd.EvalMode.deferred:
        frame = ndd.element_extract(ndd.tensor(np.zeros((2, 3, 4)), layout="FHW"), element_map=[1])
        out = ndd.get_property(frame, key="layout")
    assert _text(out) == "HW"


@pytest.mark.parametrize(
    "x",
    [
        ndd.tensor(np.zeros((2, 3), np.uint8), layout="HW"),
        ndd.batch([np.zeros(2, np.uint8), np.zeros(3, np.uint8)], layout="W"),
    ],
    ids=["tensor", "batch"],
)
def test_get_property_source_info_is_empty_for_data_not_from_a_reader(x):
    out = ndd.get_property(x, key="source_info")
    samples = [out] if isinstance(out, ndd.Tensor) else list(out)
    for sample in samples:
        assert sample.dtype == ndd.uint8 and np.asarray(sample).shape == (0,)


@pytest.mark.parametrize("key", ["foo", "Layout", b"layout", 1])
def test_get_property_rejects_unknown_keys(key):
    with pytest.raises((ValueError, TypeError), match="ndd.get_property: 'key' must be"):
        ndd.get_property(np.zeros(2), key=key)


def test_get_property_requires_a_key():
    with pytest.raises(TypeError, match="key"):
        ndd.get_property(np.zeros(2))
