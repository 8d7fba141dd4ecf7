"""pad (ndd/_ops/padding.py)."""

import numpy as np
import pytest
from arrays import ALL_TYPES, numbered, sample_arrays
from golden_cases import golden_tests

import ndd

# Golden cases where ndd deliberately differs (see the docstring of ndd/_ops/padding.py);
# each behaviour is tested on its own below.
DEVIATIONS = {
    "pad_037": "the reference wants 0-D per-sample fill values; ndd also takes one-element arrays "
    "(test_pad_per_sample_fill_value_of_one_element_arrays)",
    "pad_045": "the reference rejects 0-D input; ndd returns it unchanged "
    "(test_pad_zero_dimensional_input_is_unchanged)",
}
test_matches_reference_golden, test_every_deviating_golden_case_exists = golden_tests(
    "pad", deviations=DEVIATIONS, error_names_op=True
)


def _np_pad(x, shape, fill):
    return np.pad(x, [(0, n - e) for n, e in zip(shape, x.shape, strict=True)], constant_values=fill)


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_pad_to_shape(dtype):
    x = numbered((2, 3), dtype)
    out = ndd.pad(ndd.tensor(x, layout="HW"), shape=[4, 5], fill_value=1)
    assert out.dtype == ndd.dtype(dtype) and out.layout == "HW" and out.shape == (4, 5)
    np.testing.assert_array_equal(np.asarray(out), _np_pad(x, (4, 5), 1))


@pytest.mark.parametrize(
    "kwargs, shape",
    [
        ({}, (2, 3)),
        ({"shape": [4, -1]}, (4, 3)),
        ({"shape": [0, 5]}, (2, 5)),
        ({"shape": [1, 2]}, (2, 3)),  # never smaller than the input
        ({"shape": [4]}, (4, 4)),  # one value for all padded axes
        ({"shape": 4}, (4, 4)),
        ({"axes": [1], "shape": [5]}, (2, 5)),
        ({"axes": [-2], "shape": [5]}, (5, 3)),
        ({"axis_names": "W", "shape": [5]}, (2, 5)),
        ({"axis_names": "WH", "shape": [5, 4]}, (4, 5)),
        ({"align": 4}, (4, 4)),
        ({"align": [4], "axes": [1]}, (2, 4)),
        ({"align": [3, 2]}, (3, 4)),
        ({"shape": [5, 5], "align": [4, 4]}, (8, 8)),
    ],
)
def test_pad_sample_shapes(kwargs, shape):
    x = numbered((2, 3))
    out = ndd.pad(ndd.tensor(x, layout="HW"), **kwargs)
    assert out.shape == shape
    np.testing.assert_array_equal(np.asarray(out), _np_pad(x, shape, 0))


@pytest.mark.parametrize(
    "dtype, fill, expected",
    [
        (np.int32, -1.5, -1),
        (np.uint8, -1, 255),
        (np.uint8, 300, 44),
        (np.int8, -200.7, 56),
        (np.uint16, -1.2, 65535),
        (np.bool_, 0.5, True),
        (np.float16, 0.3, np.float16(0.3)),
        (np.float64, 0.1, 0.1),
    ],
)
def test_pad_fill_value_converts_like_a_c_cast(dtype, fill, expected):
    out = ndd.pad(np.zeros(1, dtype), shape=[2], fill_value=fill)
    np.testing.assert_array_equal(np.asarray(out), np.array([0, expected], dtype))


@pytest.mark.parametrize(
    "kwargs, shapes",
    [
        ({}, [(4, 3)] * 3),
        ({"axes": [0]}, [(4, 3)] * 3),
        ({"axes": [1]}, [(2, 3), (4, 3), (1, 3)]),
        ({"shape": [-1, 5]}, [(4, 5)] * 3),
        ({"shape": [6, -1]}, [(6, 3)] * 3),
        ({"shape": [3, 3]}, [(3, 3), (4, 3), (3, 3)]),
        ({"align": [3], "axes": [0]}, [(6, 3)] * 3),
        ({"align": [4, 4]}, [(4, 4)] * 3),
    ],
)
def test_pad_ragged_batch_to_the_largest_sample(kwargs, shapes):
    samples = [numbered((2, 3)), numbered((4, 3)) + 100, numbered((1, 3)) + 200]
    out = ndd.pad(ndd.batch(samples, layout="HW"), fill_value=-7, **kwargs)
    assert out.layout == "HW" and out.shape == shapes
    for got, x, shape in zip(sample_arrays(out), samples, shapes, strict=True):
        np.testing.assert_array_equal(got, _np_pad(x, shape, -7))


def test_pad_per_sample_arguments():
    samples = [numbered((2, 3)), numbered((4, 1))]
    b = ndd.batch(samples)
    out = ndd.pad(b, shape=ndd.batch([np.int32([-1, 5]), np.int32([3, -1])]))
    assert out.shape == [(4, 5), (4, 3)]
    out = ndd.pad(b, align=ndd.batch([np.int32([3, 3]), np.int32([5, 5])]))
    assert out.shape == [(6, 3), (5, 5)]
    # The batch maximum covers all samples, whatever axes each one pads.
    out = ndd.pad(b, axes=ndd.batch([np.int32([0]), np.int32([1])]))
    assert out.shape == [(4, 3), (4, 3)]
    out = ndd.pad(b, fill_value=ndd.batch([np.float32(1), np.float32(2)]))
    for got, x, fill in zip(sample_arrays(out), samples, [1, 2], strict=True):
        np.testing.assert_array_equal(got, _np_pad(x, (4, 3), fill))


def test_pad_per_sample_fill_value_of_one_element_arrays():
    # The reference wants 0-D samples here (golden pad_037); ndd takes one-element arrays too.
    out = ndd.pad(
        ndd.batch([numbered((2, 3)), numbered((4, 3))]),
        fill_value=ndd.batch([np.float32([5]), np.float32([6])]),
    )
    np.testing.assert_array_equal(sample_arrays(out)[0], _np_pad(numbered((2, 3)), (4, 3), 5))


def test_pad_tensor_broadcast_over_batch_size_keeps_its_shape():
    out = ndd.pad(numbered((2, 3)), batch_size=2)
    assert out.shape == [(2, 3), (2, 3)]


def test_pad_shapes_in_deferred_mode():
    with ndd.EvalMode.deferred:
        explicit = ndd.pad(ndd.batch([numbered((2, 3)), numbered((4, 3))]), shape=[5, 5])
        assert explicit.shape == [(5, 5), (5, 5)]
        to_max = ndd.pad(ndd.batch([numbered((2, 3)), numbered((4, 3))]))
        assert to_max.shape == [(4, 3), (4, 3)]


def test_pad_zero_dimensional_input_is_unchanged():
    out = ndd.pad(np.float32(3))
    assert out.shape == () and out.item() == 3


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"axes": [1], "axis_names": "W"}, "'axes' and 'axis_names' are mutually exclusive"),
        ({"axes": [2]}, "'axes' has axis 2, out of range for 2-D input"),
        ({"axes": [0, -2]}, "'axes' refers to axis 0 more than once"),
        ({"axis_names": "C"}, "'axis_names' has 'C', which is not in the input layout 'HW'"),
        ({"shape": [1, 2, 3]}, r"'shape' must have 1 or 2 values"),
        ({"align": [0, 4]}, "'align' must be positive"),
    ],
)
def test_pad_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=f"ndd.pad: {match}"):
        ndd.pad(ndd.tensor(numbered((2, 3)), layout="HW"), **kwargs).evaluate()


def test_pad_axis_names_need_a_layout():
    with pytest.raises(
        ValueError, match="ndd.pad: 'axis_names' has 'H', which is not in the input layout ''"
    ):
        ndd.pad(numbered((2, 3)), axis_names="H", shape=[3]).evaluate()


def test_padding_a_scalar_pads_nothing():
    # No axis to pad: 'align' and 'shape' have no entry to apply (min() of the empty
    # alignments failed with a bare ValueError).
    out = ndd.pad(ndd.tensor(np.float32(3)), align=4, shape=[2])
    assert np.asarray(out).shape == () and float(np.asarray(out)) == 3.0


@pytest.mark.parametrize("shape", [(3, 4, 5), (0, 4, 2), (2, 0, 3), (1, 1, 1)])
@pytest.mark.parametrize("axes", [[0], [1], [2], [0, 2], [0, 1, 2]])
def test_pad_writes_the_data_and_fills_the_rest(shape, axes):
    """Each padded region is filled once, the data copied once: the same as filling everything first."""
    x = np.arange(1, np.prod(shape) + 1, dtype=np.int16).reshape(shape)
    targets = [shape[a] + 2 + a for a in axes]
    out = np.asarray(ndd.pad(x, axes=axes, shape=targets, fill_value=-7))
    expected_shape = list(shape)
    for a, t in zip(axes, targets, strict=True):
        expected_shape[a] = t
    expected = np.full(expected_shape, -7, np.int16)
    expected[tuple(slice(0, n) for n in shape)] = x
    np.testing.assert_array_equal(out, expected, strict=True)
    # A batch large enough to be padded on the thread pool, to its largest extents.
    samples = [np.full((200, 300 + 7 * i, 3), i + 1, np.uint8) for i in range(4)]
    padded = ndd.pad(ndd.batch(samples), fill_value=9)
    for got, sample in zip(padded, samples, strict=True):
        got = np.asarray(got)
        assert got.shape == (200, 321, 3)
        np.testing.assert_array_equal(got[:, : sample.shape[1]], sample)
        assert (got[:, sample.shape[1] :] == 9).all()
