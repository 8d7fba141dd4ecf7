"""cat and stack (ndd/_ops/joining.py)."""

import numpy as np
import pytest
from arrays import ALL_TYPES, numbered, sample_arrays
from golden_cases import golden_tests

import ndd

test_matches_reference_golden, _ = golden_tests("cat", "stack", error_names_op=True)


# --------------------------------------------------------------------------- cat


@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_cat_values(dtype, axis):
    a, b = numbered((2, 3, 4), dtype), numbered((2, 3, 4), dtype)[::-1].copy()
    out = ndd.cat(ndd.tensor(a, layout="HWC"), b, axis=axis)
    assert out.dtype == ndd.dtype(dtype) and out.layout == "HWC"
    np.testing.assert_array_equal(np.asarray(out), np.concatenate([a, b], axis=axis))


def test_cat_inputs_may_differ_along_the_axis():
    parts = [numbered((2, 3, 4)), numbered((2, 1, 4)), numbered((2, 0, 4))]
    out = ndd.cat(*parts, axis=1)
    assert out.shape == (2, 4, 4)
    np.testing.assert_array_equal(np.asarray(out), np.concatenate(parts, axis=1))


def test_cat_axis_name_and_the_layout_of_the_first_input():
    a, b = ndd.tensor(numbered((2, 3, 4)), layout="HWC"), ndd.tensor(numbered((2, 1, 4)), layout="XYZ")
    out = ndd.cat(a, b, axis_name="W")
    assert out.layout == "HWC" and out.shape == (2, 4, 4)
    assert ndd.cat(numbered((2, 1, 4)), a.evaluate()[:, :1], axis=1).layout is None


def test_cat_single_input_and_python_lists():
    np.testing.assert_array_equal(np.asarray(ndd.cat(numbered((2, 3)))), numbered((2, 3)))
    out = ndd.cat(np.int32([1, 2]), [3, 4])
    np.testing.assert_array_equal(np.asarray(out), [1, 2, 3, 4])


def test_cat_ragged_batch_with_a_tensor():
    samples = [numbered((2, 3)), numbered((4, 3))]
    extra = numbered((1, 3)) + 50
    out = ndd.cat(ndd.batch(samples, layout="HW"), extra, axis=0)
    assert isinstance(out, ndd.Batch) and out.shape == [(3, 3), (5, 3)] and out.layout == "HW"
    for got, x in zip(sample_arrays(out), samples, strict=True):
        np.testing.assert_array_equal(got, np.concatenate([x, extra]))


@pytest.mark.parametrize(
    "inputs, kwargs, error, match",
    [
        ([(2, 3, 4), (2, 1, 4)], {}, ValueError, r"the inputs may differ only along axis 0"),
        ([(2, 3, 4), (2, 4)], {"axis": 1}, ValueError, "all inputs must have the same number of dimensions"),
        ([(2, 3, 4), (2, 1, 4)], {"axis": 3}, ValueError, r"'axis' 3 is out of range for 3-D inputs"),
        (
            [(2, 3, 4), (2, 1, 4)],
            {"axis_name": "Q"},
            ValueError,
            "'axis_name' 'Q' is not in the layout 'HWC'",
        ),
        ([(2, 3, 4), (2, 1, 4)], {"axis_name": "HW"}, ValueError, "'axis_name' must be a single character"),
        (
            [(2, 3, 4), (2, 1, 4)],
            {"axis": 1, "axis_name": "W"},
            ValueError,
            "'axis' and 'axis_name' cannot be used together",
        ),
        ([(), ()], {}, ValueError, "'axis' 0 is out of range for 0-D inputs"),
    ],
)
def test_cat_bad_inputs(inputs, kwargs, error, match):
    tensors = [ndd.tensor(numbered(s), layout="HWC"[: len(s)] if len(s) == 3 else None) for s in inputs]
    with pytest.raises(error, match=f"ndd.cat: {match}"):
        ndd.cat(*tensors, **kwargs).evaluate()


def test_cat_rejects_mixed_dtypes_at_the_call():
    with pytest.raises(
        TypeError, match="ndd.cat: all inputs must have the same dtype; input 0 is i32, input 1 is f32"
    ):
        ndd.cat(numbered((2, 3)), numbered((2, 3), np.float32))


# --------------------------------------------------------------------------- stack


@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("axis, position", [(0, 0), (1, 1), (3, 3), (-1, 3), (-3, 1)])
def test_stack_values(dtype, axis, position):
    a, b = numbered((2, 3, 4), dtype), numbered((2, 3, 4), dtype)[::-1].copy()
    out = ndd.stack(ndd.tensor(a, layout="HWC"), b, axis=axis)
    assert out.dtype == ndd.dtype(dtype) and out.layout is None
    np.testing.assert_array_equal(np.asarray(out), np.stack([a, b], axis=position))


@pytest.mark.parametrize("axis, layout", [(0, "NHWC"), (1, "HNWC"), (3, "HWCN"), (-1, "HWCN"), (-2, "HWNC")])
def test_stack_axis_name_inserts_into_the_layout(axis, layout):
    a = ndd.tensor(numbered((2, 3, 4)), layout="HWC")
    assert ndd.stack(a, numbered((2, 3, 4)), axis=axis, axis_name="N").layout == layout


def test_stack_scalars_and_single_input():
    out = ndd.stack(np.float32(1), np.float32(2), axis_name="N")
    assert out.shape == (2,) and out.layout == "N"
    np.testing.assert_array_equal(np.asarray(out), [1, 2])
    assert ndd.stack(numbered((2, 3))).shape == (1, 2, 3)


def test_stack_ragged_batch():
    samples = [numbered((2, 3)), numbered((4, 3))]
    b = ndd.batch(samples, layout="HW")
    out = ndd.stack(b, b, axis=2, axis_name="C")
    assert out.shape == [(2, 3, 2), (4, 3, 2)] and out.layout == "HWC"
    for got, x in zip(sample_arrays(out), samples, strict=True):
        np.testing.assert_array_equal(got, np.stack([x, x], axis=2))


@pytest.mark.parametrize(
    "kwargs, second, match",
    [
        ({}, (2, 1, 4), "all inputs must have the same shape"),
        ({"axis": 4}, (2, 3, 4), r"'axis' 4 is out of range for 3-D inputs \(accepted: -3..3\)"),
        ({"axis": -4}, (2, 3, 4), r"'axis' -4 is out of range"),
        ({"axis_name": "NN"}, (2, 3, 4), "'axis_name' must be a single character"),
    ],
)
def test_stack_bad_inputs(kwargs, second, match):
    with pytest.raises(ValueError, match=f"ndd.stack: {match}"):
        ndd.stack(ndd.tensor(numbered((2, 3, 4)), layout="HWC"), numbered(second), **kwargs).evaluate()


def test_stack_axis_name_needs_a_layout():
    with pytest.raises(ValueError, match="ndd.stack: 'axis_name' needs input 0 to have a layout"):
        ndd.stack(numbered((2, 3)), ndd.tensor(numbered((2, 3)), layout="HW"), axis_name="N")


def test_stack_rejects_mixed_dtypes_at_the_call():
    with pytest.raises(TypeError, match="ndd.stack: all inputs must have the same dtype"):
        ndd.stack(numbered((2, 3)), numbered((2, 3), np.uint8))


# --------------------------------------------------------------------------- None inputs


def test_none_inputs_are_absent_ones():
    """As in the reference, None among cat's and stack's inputs is no input: the others close up."""
    a, b = numbered((2, 3)), numbered((1, 3)) + 10
    np.testing.assert_array_equal(np.asarray(ndd.cat(None, a, None, b)), np.concatenate([a, b]))
    np.testing.assert_array_equal(np.asarray(ndd.stack(a[:1], None, b)), np.stack([a[:1], b]))
    batch = ndd.batch([a, a[:1]], layout="HW")
    out = ndd.cat(batch, None, batch)
    assert out.shape == [(4, 3), (2, 3)] and out.layout == "HW"


@pytest.mark.parametrize("op", [ndd.cat, ndd.stack])
def test_only_none_inputs_are_refused(op):
    with pytest.raises(TypeError, match=rf"{op.__name__}: input 'input_0' is required; got 0 input\(s\)"):
        op(None, None)
