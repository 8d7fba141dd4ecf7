"""one_hot and lookup_table (ndd/_ops/lookup.py)."""

import numpy as np
import pytest
from arrays import FLOAT_TYPES, INT_TYPES, sample_arrays
from golden_cases import golden_tests

import ndd

OUT_TYPES = [ndd.float32, ndd.float64, ndd.float16, ndd.int8, ndd.int32, ndd.int64, ndd.uint8, ndd.uint64]


def _one_hot_reference(labels, num_classes, on=1.0, off=0.0, dtype=np.float32):
    """One-hot rows built from the identity matrix; labels outside the classes give off rows."""
    labels = np.asarray(labels)
    table = np.where(np.eye(num_classes + 1, num_classes, dtype=bool), on, off).astype(dtype)
    table[num_classes] = off
    index = np.where((labels >= 0) & (labels < num_classes), labels, num_classes).astype(np.intp)
    return table[index]


# --------------------------------------------------------------------------- one_hot


# The reference rejects float16 labels and outputs; ndd supports them
# (test_one_hot_truncates_float_labels_toward_zero and test_one_hot_output_dtype_and_values
# cover float16).
_ONE_HOT_FLOAT16 = dict.fromkeys(
    ["one_hot_035", "one_hot_048"], "the reference rejects float16; ndd supports it"
)
test_one_hot_matches_reference_golden, _ = golden_tests(
    "one_hot", deviations=_ONE_HOT_FLOAT16, errors=(ValueError, TypeError, IndexError)
)


@pytest.mark.parametrize("label_type", INT_TYPES)
def test_one_hot_of_integer_labels(label_type):
    labels = np.array([[0, 3, 1], [2, 2, 0]], label_type)
    out = ndd.one_hot(labels, num_classes=4)
    assert out.dtype == ndd.float32 and out.shape == (2, 3, 4)
    np.testing.assert_array_equal(np.asarray(out), _one_hot_reference(labels, 4), strict=True)


@pytest.mark.parametrize("label_type", FLOAT_TYPES)
def test_one_hot_truncates_float_labels_toward_zero(label_type):
    labels = np.array([0.9, 1.5, 2.99, -0.5, -1.0, 3.0, np.nan, np.inf], label_type)
    out = np.asarray(ndd.one_hot(labels, num_classes=3))
    np.testing.assert_array_equal(out, _one_hot_reference([0, 1, 2, 0, -1, 3, -1, -1], 3), strict=True)


def test_one_hot_labels_outside_the_classes_select_nothing():
    labels = np.array([-1, 3, 2**32 + 1, -(2**40)], np.int64)
    out = np.asarray(ndd.one_hot(labels, num_classes=3))
    # The reference wraps 64-bit labels to 32 bits (2**32 + 1 selects class 1); we do not.
    np.testing.assert_array_equal(out, np.zeros((4, 3), np.float32))


@pytest.mark.parametrize("dtype", OUT_TYPES)
def test_one_hot_output_dtype_and_values(dtype):
    out = ndd.one_hot(np.array([2, 0], np.int32), num_classes=3, dtype=dtype, on_value=7, off_value=3)
    assert out.dtype == dtype
    expected = _one_hot_reference([2, 0], 3, on=7, off=3, dtype=dtype.numpy)
    np.testing.assert_array_equal(np.asarray(out), expected, strict=True)


@pytest.mark.parametrize(
    "dtype, on_value, off_value, on_expected, off_expected",
    [
        (ndd.uint8, -1, 0, 255, 0),
        (ndd.uint8, 300, -2, 44, 254),
        (ndd.int8, 200, -1.5, -56, -1),
        (ndd.int32, 2.7, -2.7, 2, -2),
        (ndd.uint32, -1, 0, 2**32 - 1, 0),
        (ndd.int64, 1e10, -3e9, 10**10, -3 * 10**9),
        (ndd.float64, 0.1, 0, float(np.float32(0.1)), 0.0),
    ],
)
def test_one_hot_converts_on_off_values_like_a_c_cast(dtype, on_value, off_value, on_expected, off_expected):
    out = np.asarray(
        ndd.one_hot(np.int32(1), num_classes=2, dtype=dtype, on_value=on_value, off_value=off_value)
    )
    np.testing.assert_array_equal(out, np.array([off_expected, on_expected], dtype.numpy), strict=True)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_one_hot_axis_places_the_class_dimension(axis):
    labels = np.array([[1, 0, 2], [2, 2, 0]], np.int32)
    out = ndd.one_hot(labels, num_classes=3, axis=axis)
    expected = np.moveaxis(_one_hot_reference(labels, 3), -1, 2 if axis == -1 else axis)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected, strict=True)


@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (1, 1, 1)])
def test_one_hot_single_label_gives_a_vector(shape):
    out = ndd.one_hot(np.full(shape, 2, np.int32), num_classes=4)
    assert out.shape == (4,)
    np.testing.assert_array_equal(np.asarray(out), [0, 0, 1, 0])


def test_one_hot_single_label_with_explicit_axis_keeps_its_dimensions():
    assert ndd.one_hot(np.int32([1]), num_classes=3, axis=0).shape == (3, 1)
    assert ndd.one_hot(np.int32([1]), num_classes=3, axis=1).shape == (1, 3)
    assert ndd.one_hot(np.int32(1), num_classes=3, axis=0).shape == (3,)


def test_one_hot_batch_of_single_labels_gives_vectors():
    labels = ndd.batch([np.int32([2]), np.int32([0]), np.int32([1])])
    out = ndd.one_hot(labels, num_classes=3)
    assert isinstance(out, ndd.Batch) and out.shape == [(3,)] * 3
    np.testing.assert_array_equal(np.stack(sample_arrays(out)), np.eye(3, dtype=np.float32)[[2, 0, 1]])


def test_one_hot_batch_mixing_single_and_several_labels_keeps_dimensions():
    out = ndd.one_hot(ndd.batch([np.int32([1]), np.int32([0, 2])]), num_classes=3)
    assert out.shape == [(1, 3), (2, 3)]
    expected = [_one_hot_reference([1], 3), _one_hot_reference([0, 2], 3)]
    for got, want in zip(sample_arrays(out), expected, strict=True):
        np.testing.assert_array_equal(got, want, strict=True)


def test_one_hot_ragged_batch():
    samples = [np.array([[1, 2], [0, 0], [2, 1]], np.uint8), np.array([[2, 1]], np.uint8)]
    out = ndd.one_hot(ndd.batch(samples, layout="HW"), num_classes=3, axis=1, axis_name="C")
    assert out.layout == "HCW" and out.shape == [(3, 3, 2), (1, 3, 2)]
    for got, sample in zip(sample_arrays(out), samples, strict=True):
        np.testing.assert_array_equal(got, np.moveaxis(_one_hot_reference(sample, 3), -1, 1), strict=True)


def test_one_hot_tensor_broadcast_over_batch_size():
    out = ndd.one_hot(np.int32([1, 0]), num_classes=2, batch_size=3)
    assert isinstance(out, ndd.Batch) and out.batch_size == 3
    for got in sample_arrays(out):
        np.testing.assert_array_equal(got, [[0, 1], [1, 0]])


@pytest.mark.parametrize(
    "shape, layout, axis, expected",
    [
        ((3,), "W", -1, "WC"),
        ((3,), "W", 0, "CW"),
        ((2, 3), "HW", 1, "HCW"),
        ((1,), "W", -1, "WC"),
        ((1,), "W", None, "C"),
        ((1,), "W", 0, "CW"),
        ((1,), None, None, "C"),
        ((), None, -1, "C"),
        ((1, 1), "HW", -1, "HWC"),
        ((1, 1), "HW", None, "C"),
    ],
)
def test_one_hot_axis_name_sets_the_layout(shape, layout, axis, expected):
    x = ndd.tensor(np.zeros(shape, np.int32), layout=layout)
    # As in the reference: a single label with a given axis keeps its dimensions.
    out = ndd.one_hot(x, num_classes=2, axis=axis, axis_name="C")
    assert out.layout == expected
    assert len(out.shape) == len(expected)


def test_one_hot_drops_the_layout_without_axis_name():
    x = ndd.tensor(np.zeros((2, 3), np.int32), layout="HW")
    assert ndd.one_hot(x, num_classes=2).layout is None


def test_one_hot_axis_name_for_labels_whose_shapes_are_not_known_in_advance():
    labels = ndd.batch([np.int32([1]), np.int32([2])], layout="W")
    with ndd.EvalMode.deferred:
        # permute_batch cannot tell the output shapes before running.
        shuffled = ndd.permute_batch(labels, indices=[1, 0])
        out = ndd.one_hot(shuffled, num_classes=3, axis_name="C")
    assert out.layout == "C"
    np.testing.assert_array_equal(np.stack(sample_arrays(out)), np.eye(3, dtype=np.float32)[[2, 1]])


def test_one_hot_rejects_bool_labels():
    with pytest.raises(TypeError, match="ndd.one_hot: the input .* got bool"):
        ndd.one_hot(np.array([True, False]), num_classes=2)


@pytest.mark.parametrize("dtype", [ndd.bool, ndd.bfloat16])
def test_one_hot_rejects_non_numeric_output(dtype):
    with pytest.raises(TypeError, match="ndd.one_hot: 'dtype'"):
        ndd.one_hot(np.int32([0]), num_classes=2, dtype=dtype)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_classes": -1}, "'num_classes' must not be negative"),
        ({"num_classes": 2, "axis": -2}, "'axis'"),
        ({"num_classes": 2, "axis": 3}, r"'axis' must be in the range \[-1, 2\]"),
        ({"num_classes": 2, "axis_name": "CD"}, "'axis_name' must be a single character"),
        ({"num_classes": 2, "axis_name": ""}, "'axis_name' must be a single character"),
        ({"num_classes": 2, "axis_name": "C"}, "'axis_name' needs an input with a layout"),
        ({"num_classes": 2.5}, "'num_classes'"),
    ],
)
def test_one_hot_bad_arguments(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=f"ndd.one_hot: {match}"):
        ndd.one_hot(np.zeros((2, 3), np.int32), **kwargs).evaluate()


def test_one_hot_axis_out_of_range_in_batch_of_single_labels():
    labels = ndd.batch([np.int32([1]), np.int32([0])])
    with pytest.raises(ValueError, match=r"ndd.one_hot.*'axis' must be in the range \[-1, 1\]"):
        ndd.one_hot(labels, num_classes=2, axis=2).evaluate()


def test_one_hot_zero_classes():
    out = ndd.one_hot(np.int32([1, 0, 2]))
    assert out.shape == (3, 0)
    assert np.asarray(out).shape == (3, 0)


# --------------------------------------------------------------------------- lookup_table


def _lookup_reference(keys, values, default, x, dtype=np.float32):
    table = dict(zip(keys, np.float32(values), strict=True))
    return np.array([table.get(int(k), np.float32(default)) for k in np.ravel(x)], dtype).reshape(np.shape(x))


test_lookup_table_matches_reference_golden, _ = golden_tests(
    "lookup_table", deprecated_kwargs=["output_dtype"]
)


@pytest.mark.parametrize("key_type", INT_TYPES)
def test_lookup_table_values_by_key(key_type):
    x = np.array([[0, 5, 7], [1, 9, 5]], key_type)
    keys, values = [5, 1, 7, 100], [0.5, -2.0, 3.25, 9.0]
    out = ndd.lookup_table(x, keys=keys, values=values, default_value=-1)
    assert out.dtype == ndd.float32 and out.shape == x.shape
    np.testing.assert_array_equal(np.asarray(out), _lookup_reference(keys, values, -1, x), strict=True)


@pytest.mark.parametrize("key_type", [np.int8, np.int32, np.int64])
def test_lookup_table_negative_and_large_inputs_get_the_default(key_type):
    info = np.iinfo(key_type)
    x = np.array([info.min, -1, 0, info.max], key_type)
    out = ndd.lookup_table(x, keys=[0, 65535], values=[1.0, 2.0], default_value=7.5)
    expected = [7.5, 7.5, 1.0, 2.0 if info.max == 65535 else 7.5]
    np.testing.assert_array_equal(np.asarray(out), np.float32(expected), strict=True)


@pytest.mark.parametrize("key_type", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_lookup_table_unsigned_keys_past_the_table_get_the_default(key_type):
    x = np.array([0, 3, 4, 200, np.iinfo(key_type).max], key_type)
    out = ndd.lookup_table(x, keys=[0, 3], values=[1.0, 2.0], default_value=7.5)
    np.testing.assert_array_equal(np.asarray(out), np.float32([1.0, 2.0, 7.5, 7.5, 7.5]), strict=True)


def test_lookup_table_of_strided_views_and_whole_uint16_range():
    x = np.random.default_rng(0).integers(0, 65536, (40, 30), dtype=np.uint16)
    keys = list(range(0, 65536, 3))
    values = [float(k % 251) - 100.0 for k in keys]
    for view in (x, x.T, x[::2, 1::3]):
        out = ndd.lookup_table(view, keys=keys, values=values, default_value=0.25, dtype=ndd.int16)
        np.testing.assert_array_equal(
            np.asarray(out), _lookup_reference(keys, values, 0.25, view).astype(np.int16), strict=True
        )


@pytest.mark.parametrize(
    "dtype, values, default, expected",
    [
        (ndd.int32, [10.7, -20.2, 30.5, -0.5], 0, [11, -20, 31, -1, 0]),
        (ndd.uint8, [10.0, -20.5, 300.7, 0.5], 1000, [10, 0, 255, 1, 255]),
        (ndd.int8, [10.5, -20.5, 300.7, 127.4], -1000, [11, -21, 127, 127, -128]),
        (ndd.int64, [1.0, 2.0, 3.0, 4.0], 1e30, [1, 2, 3, 4, 2**63 - 1]),
        (ndd.float16, [10.5, -20.5, 300.7, 0.1], 0, np.float16([10.5, -20.5, 300.75, 0.1, 0])),
        (ndd.float64, [0.1, 2.0, 3.0, 4.0], 0.2, np.float64(np.float32([0.1, 2.0, 3.0, 4.0, 0.2]))),
        (ndd.bool, [0.0, 2.0, -1.0, 0.7], 0, [False, True, True, True, False]),
    ],
)
def test_lookup_table_output_dtype_rounds_and_saturates(dtype, values, default, expected):
    out = ndd.lookup_table(
        np.int32([0, 1, 2, 3, 4]), keys=[0, 1, 2, 3], values=values, default_value=default, dtype=dtype
    )
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), np.array(expected, dtype.numpy), strict=True)


def test_lookup_table_last_duplicate_key_wins():
    out = ndd.lookup_table(np.int32([1, 2]), keys=[1, 2, 1], values=[10.0, 20.0, 30.0])
    np.testing.assert_array_equal(np.asarray(out), np.float32([30, 20]))


def test_lookup_table_without_keys_gives_the_default():
    out = ndd.lookup_table(np.int32([[0, 1], [2, 3]]), default_value=4.5)
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 2), 4.5, np.float32), strict=True)


def test_lookup_table_keeps_the_layout():
    x = ndd.tensor(np.zeros((2, 3), np.int16), layout="HW")
    assert ndd.lookup_table(x, keys=[0], values=[1.0]).layout == "HW"


def test_lookup_table_ragged_batch():
    samples = [np.array([[0, 100], [101, 5]], np.int32), np.array([[100, 100, 0]], np.int32)]
    keys, values = [0, 100, 101], [10.0, 20.0, 30.0]
    out = ndd.lookup_table(ndd.batch(samples, layout="HW"), keys=keys, values=values, default_value=0.5)
    assert isinstance(out, ndd.Batch) and out.layout == "HW" and out.shape == [(2, 2), (1, 3)]
    for got, sample in zip(sample_arrays(out), samples, strict=True):
        np.testing.assert_array_equal(got, _lookup_reference(keys, values, 0.5, sample), strict=True)


def test_lookup_table_scalar_input_gives_a_scalar():
    out = ndd.lookup_table(np.int32(2), keys=[2], values=[3.5])
    assert out.shape == ()
    assert np.asarray(out) == np.float32(3.5)


def test_lookup_table_output_dtype_is_a_deprecated_alias():
    with pytest.warns(DeprecationWarning, match="'output_dtype'"):
        out = ndd.lookup_table(np.int32([0, 1]), keys=[0], values=[2.0], output_dtype=ndd.int16)
    assert out.dtype == ndd.int16
    np.testing.assert_array_equal(np.asarray(out), np.int16([2, 0]), strict=True)


def test_lookup_table_rejects_two_different_dtypes():
    with pytest.raises(ValueError, match="ndd.lookup_table: give 'dtype' or .*'output_dtype'"):
        ndd.lookup_table(np.int32([0]), dtype=ndd.int32, output_dtype=ndd.int16)


@pytest.mark.parametrize("input_type", [np.float32, np.float64, np.bool_])
def test_lookup_table_rejects_non_integer_input(input_type):
    with pytest.raises(TypeError, match="ndd.lookup_table: the input must be of an integer type"):
        ndd.lookup_table(np.zeros(2, input_type), keys=[0], values=[1.0])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"keys": [-1], "values": [1.0]}, r"'keys' must be in the range \[0, 65535\], got -1"),
        ({"keys": [65536], "values": [1.0]}, r"'keys' must be in the range \[0, 65535\], got 65536"),
        ({"keys": [0, 1], "values": [1.0]}, "'keys' and 'values' must have the same length, got 2 and 1"),
        ({"keys": [0.5], "values": [1.0]}, "'keys' must be a list of integers"),
        ({"keys": [0], "values": ["a"]}, "'values' must be a list of numbers"),
        # bfloat16: refused by lookup_table, or earlier when ml_dtypes cannot hold its data
        ({"dtype": ndd.bfloat16}, "'dtype'(=bfloat16 needs the 'ml_dtypes'| must be a numeric type or bool)"),
    ],
)
def test_lookup_table_bad_arguments(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=f"ndd.lookup_table: {match}"):
        ndd.lookup_table(np.int32([0, 1]), **kwargs)


@pytest.mark.parametrize(
    "on_value, expected",
    [(float("nan"), 0), (float("inf"), np.iinfo(np.int64).max), (-float("inf"), np.iinfo(np.int64).min)],
)
def test_one_hot_non_finite_on_value_converts_like_slice_fill_values(on_value, expected):
    out = ndd.one_hot(np.array([1], np.int32), num_classes=2, on_value=on_value, dtype=ndd.int64)
    np.testing.assert_array_equal(np.asarray(out), [0, expected])


@pytest.mark.parametrize(
    ("labels", "kwargs", "shapes"),
    [
        # The reference's shapes: a single label is a scalar one only when axis is omitted.
        ([[3]], {}, [(5,)]),
        ([[[3]]], {}, [(5,)]),
        ([[3]], {"axis": -1}, [(1, 5)]),
        ([[[3]]], {"axis": -1}, [(1, 1, 5)]),
        ([[3]], {"axis": 0}, [(5, 1)]),
        ([3], {"axis": -1}, [(5,)]),
        ([[3], [1]], {}, [(5,), (5,)]),
        ([[3], [1]], {"axis": -1}, [(1, 5), (1, 5)]),
        ([[3], [1, 2]], {}, [(1, 5), (2, 5)]),
    ],
)
def test_single_labels_are_scalar_labels_only_without_an_axis(labels, kwargs, shapes):
    samples = [np.array(s, np.int32) for s in labels]
    if len(samples) == 1:
        out = ndd.one_hot(samples[0], num_classes=5, **kwargs)
        assert out.shape == shapes[0]
        np.testing.assert_array_equal(
            np.asarray(out).reshape(-1, 5).argmax(axis=-1)
            if kwargs.get("axis", -1) == -1
            else np.asarray(out).reshape(5, -1).argmax(axis=0),
            np.array(labels[0]).reshape(-1),
        )
    else:
        out = ndd.one_hot(ndd.batch(samples), num_classes=5, **kwargs)
        assert [tuple(s.shape) for s in out] == shapes
