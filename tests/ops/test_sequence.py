"""element_extract (ndd/_ops/sequence.py)."""

import numpy as np
import pytest
from golden_cases import golden_tests

import ndd

DTYPES = [np.uint8, np.int16, np.int64, np.float16, np.float32, np.float64, np.bool_]


def _sequence(frames, dtype=np.uint8, frame_shape=(2, 3)):
    return (np.arange(frames * np.prod(frame_shape)) % 7).astype(dtype).reshape((frames, *frame_shape))


test_element_extract_matches_reference_golden, _ = golden_tests(
    "element_extract", errors=(ValueError, TypeError, IndexError)
)


@pytest.mark.parametrize("dtype", DTYPES)
def test_element_extract_one_output_per_index(dtype):
    seq = _sequence(5, dtype)
    outputs = ndd.element_extract(ndd.tensor(seq, layout="FHW"), element_map=[4, 0, 2, 2])
    assert isinstance(outputs, tuple) and len(outputs) == 4
    for out, index in zip(outputs, [4, 0, 2, 2], strict=True):
        assert out.dtype == ndd.dtype(np.dtype(dtype)) and out.layout == "HW" and out.shape == (2, 3)
        np.testing.assert_array_equal(np.asarray(out), seq[index], strict=True)


def test_element_extract_single_index_gives_one_result_not_a_tuple():
    seq = _sequence(3)
    out = ndd.element_extract(ndd.tensor(seq, layout="FHW"), element_map=[1])
    assert isinstance(out, ndd.Tensor)
    np.testing.assert_array_equal(np.asarray(out), seq[1])


def test_element_extract_scalar_element_map():
    seq = _sequence(3)
    np.testing.assert_array_equal(np.asarray(ndd.element_extract(seq, element_map=2)), seq[2])


@pytest.mark.parametrize("layout, expected", [("FHWC", "HWC"), ("FC", "C"), ("FFC", "FC"), (None, None)])
def test_element_extract_drops_the_frame_dimension_from_the_layout(layout, expected):
    ndim = len(layout) if layout else 3
    seq = np.zeros((2,) + (1,) * (ndim - 1), np.float32)
    out = ndd.element_extract(ndd.tensor(seq, layout=layout), element_map=[0])
    assert out.layout == expected and out.shape == seq.shape[1:]


def test_element_extract_ragged_batch():
    sequences = [_sequence(4), _sequence(2, frame_shape=(1, 5)) + 10, _sequence(3, frame_shape=(3, 1))]
    first, second = ndd.element_extract(ndd.batch(sequences, layout="FHW"), element_map=[1, 0])
    for out, index in ((first, 1), (second, 0)):
        assert isinstance(out, ndd.Batch) and out.layout == "HW" and out.dtype == ndd.uint8
        assert out.shape == [s.shape[1:] for s in sequences]
        for got, seq in zip(out, sequences, strict=True):
            np.testing.assert_array_equal(np.asarray(got), seq[index], strict=True)


def test_element_extract_tensor_broadcast_over_batch_size():
    seq = _sequence(3)
    out = ndd.element_extract(ndd.tensor(seq, layout="FHW"), element_map=[2], batch_size=2)
    assert isinstance(out, ndd.Batch) and out.batch_size == 2
    for got in out:
        np.testing.assert_array_equal(np.asarray(got), seq[2])


def test_element_extract_element_map_from_a_tensor():
    seq = _sequence(4)
    element_map = ndd.tensor(np.array([3, 1], np.int32))
    outputs = ndd.element_extract(ndd.tensor(seq, layout="FHW"), element_map=element_map)
    np.testing.assert_array_equal(np.asarray(outputs[0]), seq[3])
    np.testing.assert_array_equal(np.asarray(outputs[1]), seq[1])


def test_element_extract_element_map_from_a_pending_result():
    seq = _sequence(4)
    with ndd.EvalMode.deferred:
        element_map = ndd.tensor(np.array([1, 0], np.int32)) + 1
        outputs = ndd.element_extract(ndd.tensor(seq, layout="FHW"), element_map=element_map)
    assert len(outputs) == 2
    np.testing.assert_array_equal(np.asarray(outputs[0]), seq[2])
    np.testing.assert_array_equal(np.asarray(outputs[1]), seq[1])


def test_element_extract_shapes_are_known_before_running():
    with ndd.EvalMode.deferred:
        out = ndd.element_extract(ndd.batch([_sequence(3), _sequence(2)], layout="FHW"), element_map=[1])
        assert out.shape == [(2, 3), (2, 3)]


@pytest.mark.parametrize(
    "element_map, error, match",
    [
        ([], ValueError, "'element_map' must contain at least one frame index"),
        ([0, -1], ValueError, "'element_map' indices must not be negative, got -1"),
        ([3], IndexError, "'element_map' index 3 is out of range for a sequence of 3 frames"),
        ([1.5], TypeError, "'element_map' must be a list of integers"),
    ],
)
def test_element_extract_bad_element_map(element_map, error, match):
    with pytest.raises(error, match=f"ndd.element_extract: {match}"):
        ndd.element_extract(ndd.tensor(_sequence(3), layout="FHW"), element_map=element_map)


def test_element_extract_index_out_of_range_for_one_sample_of_a_batch():
    sequences = ndd.batch([_sequence(4), _sequence(2)], layout="FHW")
    with pytest.raises(IndexError, match="ndd.element_extract: 'element_map' index 3 .* of 2 frames"):
        ndd.element_extract(sequences, element_map=[3])


def test_element_extract_index_out_of_range_found_when_running():
    with ndd.EvalMode.deferred:
        # Shapes of a permuted batch are not known before running.
        shuffled = ndd.permute_batch(ndd.batch([_sequence(4), _sequence(2)], layout="FHW"), indices=[1, 0])
        out = ndd.element_extract(shuffled, element_map=[3])
    with pytest.raises(IndexError, match="ndd.element_extract.*'element_map' index 3"):
        out.evaluate()


@pytest.mark.parametrize("layout", ["HWF", "C"])
def test_element_extract_requires_a_sequence_layout(layout):
    x = ndd.tensor(np.zeros((2,) * len(layout), np.uint8), layout=layout)
    with pytest.raises(
        ValueError, match=f"ndd.element_extract: the input layout must start with 'F'.*{layout}"
    ):
        ndd.element_extract(x, element_map=[0])


@pytest.mark.parametrize("shape", [(), (4,)])
def test_element_extract_requires_frames_of_data(shape):
    with pytest.raises(ValueError, match="ndd.element_extract: the input must have at least 2 dimensions"):
        ndd.element_extract(np.zeros(shape, np.uint8), element_map=[0])
