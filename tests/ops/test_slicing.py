"""slice, pad, cat and stack (ndd/_ops/slicing.py)."""

import warnings

import numpy as np
import pytest
from golden_cases import assert_matches, build_input, build_kwargs, cases_for

import ndd

ALL_TYPES = [
    np.uint8,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
    np.bool_,
]

# Golden cases where ndd deliberately differs (see the docstring of ndd/_ops/slicing.py);
# each behaviour is tested on its own below.
DEVIATIONS = {
    "slice_072": "the reference rejects bool data; ndd slices it "
    "(test_slice_start_and_shape_follow_the_default_axes_w_then_h)",
    "pad_037": "the reference wants 0-D per-sample fill values; ndd also takes one-element arrays "
    "(test_pad_per_sample_fill_value_of_one_element_arrays)",
    "pad_045": "the reference rejects 0-D input; ndd returns it unchanged "
    "(test_pad_zero_dimensional_input_is_unchanged)",
}
GOLDEN_CASES = [case for op in ("slice", "pad", "cat", "stack") for case in cases_for(op)]


def _replay(case):
    inputs = [build_input(spec) for spec in case["inputs"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(ndd, case["op"])(*inputs, **build_kwargs(case["kwargs"])).evaluate()


def _samples(batch):
    return [np.asarray(s) for s in batch]


def _data(shape, dtype=np.int32):
    """Distinct values (0, 1, 2, ...; alternating for bool) of the given shape."""
    values = np.arange(int(np.prod(shape)))
    return (values % 2 if dtype == np.bool_ else values).astype(dtype).reshape(shape)


def test_every_deviating_golden_case_exists():
    assert set(DEVIATIONS) <= {case["id"] for case in GOLDEN_CASES}


@pytest.mark.parametrize("case", GOLDEN_CASES, ids=lambda c: f"{c['id']}: {c['call']}")
def test_matches_reference_golden(case):
    if case["id"] in DEVIATIONS:
        pytest.skip(DEVIATIONS[case["id"]])
    if case["result"]["ok"]:
        assert_matches(_replay(case), case["result"]["value"])
    else:
        with pytest.raises((ValueError, TypeError), match=f"ndd.{case['op']}"):
            _replay(case)


# --------------------------------------------------------------------------- slice: windows


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_slice_start_and_shape_follow_the_default_axes_w_then_h(dtype):
    x = _data((4, 6, 3), dtype)
    out = ndd.slice(ndd.tensor(x, layout="HWC"), start=[2, 1], shape=[3, 2])
    assert out.dtype == ndd.dtype(dtype) and out.layout == "HWC" and out.shape == (2, 3, 3)
    np.testing.assert_array_equal(np.asarray(out), x[1:3, 2:5])


@pytest.mark.parametrize(
    "kwargs, window",
    [
        ({"start": [1, 2], "end": [4, 4]}, np.s_[2:4, 1:4]),
        ({"end": [3, 2]}, np.s_[0:2, 0:3]),
        ({"start": [1, 1]}, np.s_[1:, 1:]),
        ({"shape": [3, 2]}, np.s_[0:2, 0:3]),
        ({"rel_start": [0.5, 0.25], "rel_end": [1.0, 0.75]}, np.s_[1:3, 3:6]),
        ({"rel_start": [0.5, 0.25], "rel_shape": [0.5, 0.5]}, np.s_[1:3, 3:6]),
        ({"rel_start": [0.5, 0.5], "shape": [2, 1]}, np.s_[2:3, 3:5]),
        ({"start": [1, 0], "rel_shape": [0.5, 0.5]}, np.s_[0:2, 1:4]),
        ({"start": [2], "end": [4]}, np.s_[2:4, 2:4]),
        ({"start": [1, 2], "shape": [0, 2]}, np.s_[2:4, 1:1]),
    ],
)
def test_slice_named_arguments(kwargs, window):
    x = _data((4, 6))
    out = ndd.slice(ndd.tensor(x, layout="HW"), **kwargs)
    np.testing.assert_array_equal(np.asarray(out), x[window])
    assert out.shape == x[window].shape


def test_slice_relative_arguments_scale_in_single_precision():
    # 0.35 * 10 is 3.5 in float32 (3.4999999 in float64): the end rounds up to 4.
    x = np.arange(10, dtype=np.float32)
    out = ndd.slice(x, axes=[0], start=[1], rel_end=[0.35])
    np.testing.assert_array_equal(np.asarray(out), [1, 2, 3])
    out = ndd.slice(x, axes=[0], rel_start=[0.35], shape=[1])
    np.testing.assert_array_equal(np.asarray(out), [4])


@pytest.mark.parametrize("anchor_type", [np.float16, np.float32, np.float64])
def test_slice_float_inputs_are_fractions_of_the_extent(anchor_type):
    x = _data((4, 6, 3), np.uint8)
    anchor, shape = np.array([0.5, 0.25], anchor_type), np.array([0.5, 0.5], anchor_type)
    out = ndd.slice(ndd.tensor(x, layout="HWC"), anchor, shape)
    np.testing.assert_array_equal(np.asarray(out), x[1:3, 3:6])


@pytest.mark.parametrize("anchor_type", [np.int8, np.int32, np.int64, np.uint16])
def test_slice_integer_inputs_are_positions_even_when_normalized(anchor_type):
    x = _data((4, 6, 3), np.uint8)
    out = ndd.slice(ndd.tensor(x, layout="HWC"), np.array([1, 2], anchor_type), np.array([3, 2], anchor_type))
    np.testing.assert_array_equal(np.asarray(out), x[2:4, 1:4])


def test_slice_unnormalized_float_inputs_are_positions():
    x = _data((4, 6))
    out = ndd.slice(x, [1.0, 2.0], [3.0, 2.0], normalized_anchor=False, normalized_shape=False)
    np.testing.assert_array_equal(np.asarray(out), x[2:4, 1:4])
    # W: 0.25 * 6 = 1.5 -> 2, end 1.5 + 3 = 4.5 -> 5; H: 0.5 * 4 = 2, end 2.5 -> 3.
    out = ndd.slice(x, [0.25, 0.5], [3.0, 0.5], normalized_anchor=True, normalized_shape=False)
    np.testing.assert_array_equal(np.asarray(out), x[2:3, 2:5])


@pytest.mark.parametrize(
    "anchor, size, expected",
    [
        (0.5, 2.5, [1, 2]),  # start 0.5 -> 1, end 3.0 -> 3
        (1.5, 2.5, [2, 3]),
        (2.5, 2.5, [3, 4]),  # halves round away from zero, not to even
        (1.2, 2.6, [1, 2, 3]),  # start and end round separately: 1.2 -> 1, 3.8 -> 4
        (1.7, 0.2, []),
        (-0.5, 2.0, [-1, 0, 1]),  # -0.5 -> -1 (padded with -1 below)
    ],
)
def test_slice_fractional_positions_round_both_ends_half_away_from_zero(anchor, size, expected):
    x = np.arange(10, dtype=np.float32)
    options = {"normalized_anchor": False, "normalized_shape": False, "out_of_bounds_policy": "pad"}
    out = ndd.slice(x, [anchor], [size], axes=[0], fill_values=[-1], **options)
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_slice_axes_and_axis_names_order_the_values():
    x = _data((4, 6, 3))
    t = ndd.tensor(x, layout="HWC")
    expected = x[1:4, 2:4]
    np.testing.assert_array_equal(np.asarray(ndd.slice(t, start=[1, 2], shape=[3, 2], axes=[0, 1])), expected)
    np.testing.assert_array_equal(
        np.asarray(ndd.slice(t, start=[1, 2], shape=[3, 2], axis_names="HW")), expected
    )
    np.testing.assert_array_equal(np.asarray(ndd.slice(t, start=[1], shape=[2], axes=[-1])), x[:, :, 1:3])
    np.testing.assert_array_equal(
        np.asarray(ndd.slice(t, start=[1], shape=[2], axis_names="C")), x[:, :, 1:3]
    )


def test_slice_default_axis_names_follow_the_layout():
    x = _data((3, 4, 6))
    t = ndd.tensor(x, layout="CHW")
    # By default W and H are looked up in the layout; explicit axes are indices.
    np.testing.assert_array_equal(np.asarray(ndd.slice(t, start=[1, 1], shape=[1, 2])), x[:, 1:3, 1:2])
    np.testing.assert_array_equal(
        np.asarray(ndd.slice(t, start=[1, 1], shape=[1, 2], axes=[1, 0])), x[1:3, 1:2]
    )


@pytest.mark.parametrize(
    "shape, names, window",
    [
        ((4, 6), "W", np.s_[:, 1:2]),
        ((4, 6, 3), "C", np.s_[:, :, 1:2]),
        ((2, 4, 6, 3), "D", np.s_[1:2]),
        ((2, 4, 6, 3), "WH", np.s_[:, 1:2, 1:2]),
    ],
)
def test_slice_input_without_layout_is_named_by_its_dimensionality(shape, names, window):
    x = _data(shape)
    out = ndd.slice(x, start=[1] * len(names), shape=[1] * len(names), axis_names=names)
    np.testing.assert_array_equal(np.asarray(out), x[window])
    assert out.layout is None


def test_slice_any_dimensionality_with_explicit_axes():
    x = _data((2, 3, 2, 3, 2))
    np.testing.assert_array_equal(np.asarray(ndd.slice(x, start=[1], shape=[2], axes=[3])), x[:, :, :, 1:3])
    scalar = ndd.slice(np.float32(5), start=[], shape=[], axes=[])
    assert scalar.shape == () and scalar.item() == 5


# --------------------------------------------------------------------------- slice: out of bounds


def test_slice_out_of_bounds_raises_by_default():
    with pytest.raises(ValueError, match=r"ndd.slice: the slice \[4, 8\) of axis 1 is out of bounds"):
        ndd.slice(_data((4, 6)), start=[4, 2], shape=[4, 3])


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float32, np.float64])
def test_slice_pad_policy_fills_outside(dtype):
    x = _data((4, 6, 3), dtype)
    out = ndd.slice(
        ndd.tensor(x, layout="HWC"), start=[4, -1], shape=[4, 3], out_of_bounds_policy="pad", fill_values=[7]
    )
    expected = np.full((3, 4, 3), 7, dtype)
    expected[1:3, :2] = x[0:2, 4:6]
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert out.dtype == ndd.dtype(dtype)


@pytest.mark.parametrize("layout, channel_axis", [("HWC", 2), ("CHW", 0), (None, 2)])
def test_slice_pad_with_one_fill_value_per_channel(layout, channel_axis):
    x = np.moveaxis(_data((4, 6, 3), np.uint8), 2, channel_axis)
    out = ndd.slice(
        ndd.tensor(x, layout=layout),
        start=[5, 3],
        shape=[2, 2],
        out_of_bounds_policy="pad",
        fill_values=[1, 2, 3],
    )
    out = np.moveaxis(np.asarray(out), channel_axis, 2)
    expected = np.tile(np.uint8([1, 2, 3]), (2, 2, 1))
    expected[0, 0] = np.moveaxis(x, channel_axis, 2)[3, 5]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    "dtype, fill, expected",
    [
        (np.uint8, -1.7, 255),  # truncated to -1, then wrapped
        (np.uint8, 2.5, 2),
        (np.uint8, 300, 44),
        (np.int8, 200, -56),
        (np.float16, 0.3, np.float16(0.3)),
        (np.float32, -1.5, -1.5),
    ],
)
def test_slice_fill_values_convert_like_a_c_cast(dtype, fill, expected):
    out = ndd.slice(
        np.zeros(2, dtype), start=[1], shape=[2], axes=[0], out_of_bounds_policy="pad", fill_values=[fill]
    )
    np.testing.assert_array_equal(np.asarray(out), np.array([0, expected], dtype))


@pytest.mark.parametrize(
    "start, shape, window",
    [
        ([4, 2], [4, 3], np.s_[2:4, 4:6]),
        ([-1, -1], [3, 3], np.s_[0:2, 0:2]),
        ([12, 1], [2, 2], np.s_[1:3, 6:6]),
    ],
)
def test_slice_trim_to_shape_policy_shrinks_the_window(start, shape, window):
    x = _data((4, 6))
    out = ndd.slice(x, start=start, shape=shape, out_of_bounds_policy="trim_to_shape")
    np.testing.assert_array_equal(np.asarray(out), x[window])
    assert out.shape == x[window].shape


# --------------------------------------------------------------------------- slice: dtype


def test_slice_dtype_converts_floats_by_truncation_with_saturation():
    x = np.float32([[0.5, 2.5, 2.7, -0.7, -3.5, 254.6, 255.6, 300.7, np.nan, np.inf, -np.inf]])
    out = ndd.slice(ndd.tensor(x, layout="HW"), start=[0, 0], shape=[11, 1], dtype=ndd.uint8)
    np.testing.assert_array_equal(np.asarray(out), [[0, 2, 2, 0, 0, 254, 255, 255, 0, 255, 0]])


def test_slice_dtype_saturates_at_the_float16_range():
    x = np.float32([[1e6, -1e6, np.inf, 0.1]])
    out = np.asarray(ndd.slice(ndd.tensor(x, layout="HW"), start=[0, 0], shape=[4, 1], dtype=ndd.float16))
    np.testing.assert_array_equal(out, np.float16([[65504, -65504, 65504, 0.1]]))
    ints = np.int32([[1_000_000_000, -5]])
    out = np.asarray(ndd.slice(ndd.tensor(ints, layout="HW"), start=[0, 0], shape=[2, 1], dtype=ndd.float16))
    np.testing.assert_array_equal(out, np.float16([[65504, -5]]))


def test_slice_dtype_to_float32():
    x = _data((4, 6, 3), np.uint8)
    out = ndd.slice(ndd.tensor(x, layout="HWC"), start=[1, 2], shape=[3, 2], dtype=ndd.float32)
    assert out.dtype == ndd.float32
    np.testing.assert_array_equal(np.asarray(out), x[2:4, 1:4].astype(np.float32))


@pytest.mark.parametrize("dtype", [ndd.uint8, ndd.float16, ndd.float32])
@pytest.mark.parametrize("source", ALL_TYPES)
def test_slice_dtype_from_every_input_type(source, dtype):
    x = _data((3, 4), source)
    out = ndd.slice(x, start=[1, 1], dtype=dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), x[1:, 1:].astype(dtype.numpy), strict=True)


@pytest.mark.parametrize("dtype", [ndd.int16, ndd.int32, ndd.float64, ndd.bool])
def test_slice_rejects_other_output_types(dtype):
    with pytest.raises(ValueError, match="ndd.slice: 'dtype' must be one of u8, f16, f32"):
        ndd.slice(_data((4, 6)), start=[0, 0], dtype=dtype)


def test_slice_output_dtype_is_a_deprecated_alias():
    with pytest.warns(DeprecationWarning, match="'output_dtype' is deprecated"):
        out = ndd.slice(_data((4, 6)), start=[0, 0], output_dtype=ndd.float32)
    assert out.dtype == ndd.float32
    np.testing.assert_array_equal(np.asarray(out), _data((4, 6)).astype(np.float32))
    with pytest.raises(ValueError, match="ndd.slice: 'output_dtype' is a deprecated alias of 'dtype'"):
        ndd.slice(_data((4, 6)), start=[0, 0], output_dtype=ndd.float32, dtype=ndd.uint8)


def test_slice_image_type_is_deprecated_and_ignored():
    with pytest.warns(DeprecationWarning, match="'image_type' is deprecated"):
        out = ndd.slice(_data((4, 6)), start=[1, 1], image_type=ndd.types.RGB)
    np.testing.assert_array_equal(np.asarray(out), _data((4, 6))[1:, 1:])


# --------------------------------------------------------------------------- slice: batches


def test_slice_ragged_batch_with_per_sample_start():
    samples = [_data((2, 3)), _data((4, 3)) + 100]
    start = ndd.batch([np.int32([0, 0]), np.int32([1, 2])])
    out = ndd.slice(ndd.batch(samples, layout="HW"), start=start, shape=[2, 1])
    assert out.layout == "HW" and out.shape == [(1, 2), (1, 2)]
    for got, x, window in zip(_samples(out), samples, [np.s_[0:1, 0:2], np.s_[2:3, 1:3]], strict=True):
        np.testing.assert_array_equal(got, x[window])


def test_slice_ragged_batch_with_per_sample_anchor_and_shape_inputs():
    samples = [_data((2, 3)), _data((4, 3)) + 100]
    anchor = ndd.batch([np.float32([0, 0]), np.float32([0.5, 0.5])])
    shape = ndd.batch([np.float32([1, 0.5]), np.float32([0.5, 0.5])])
    out = ndd.slice(ndd.batch(samples, layout="HW"), anchor, shape)
    assert out.shape == [(1, 3), (2, 1)]
    for got, x, window in zip(_samples(out), samples, [np.s_[0:1, 0:3], np.s_[2:4, 2:3]], strict=True):
        np.testing.assert_array_equal(got, x[window])


def test_slice_per_sample_axes():
    x = _data((3, 4, 6))
    out = ndd.slice(ndd.batch([x, x]), start=[1], shape=[2], axes=ndd.batch([np.int32([0]), np.int32([2])]))
    assert out.shape == [(2, 4, 6), (3, 4, 2)]
    np.testing.assert_array_equal(_samples(out)[1], x[:, :, 1:3])


def test_slice_tensor_broadcast_over_batch_size():
    x = _data((4, 6))
    out = ndd.slice(x, start=[1, 1], shape=[2, 2], batch_size=3)
    assert isinstance(out, ndd.Batch) and out.batch_size == 3
    for got in _samples(out):
        np.testing.assert_array_equal(got, x[1:3, 1:3])


# --------------------------------------------------------------------------- slice: errors


@pytest.mark.parametrize(
    "inputs, kwargs, match",
    [
        ((), {}, "give the window as the anchor and shape inputs or with the named arguments"),
        (([0.5, 0.5],), {}, "the 'anchor' and 'shape_input' inputs must be given together"),
        (([0, 0], [1, 1]), {"start": [1, 1]}, r"the named arguments \['start'\] cannot be used with"),
        (([True, False], [True, True]), {}, "input 'anchor' must hold integers or floats"),
        ((), {"start": [1, 1], "rel_start": [0.5, 0.5]}, "'start' and 'rel_start' are mutually exclusive"),
        (
            (),
            {"shape": [1, 1], "end": [3, 3]},
            "'end', 'rel_end', 'shape' and 'rel_shape' are mutually exclusive",
        ),
        ((), {"start": [1, 1], "axes": [0, 1], "axis_names": "HW"}, "'axes' and 'axis_names' are mutually"),
        ((), {"start": [1, 1, 1]}, r"'start' must have 1 value or one per sliced axis \(2\)"),
        ((), {"start": [1], "axes": [2]}, "'axes' has axis 2, out of range for 2-D input"),
        ((), {"start": [1, 1], "axes": [0, -2]}, "'axes' refers to axis 0 more than once"),
        (
            (),
            {"start": [1], "axis_names": "C"},
            "'axis_names' has 'C', which is not in the input layout 'HW'",
        ),
        ((), {"start": [3, 3], "end": [1, 4]}, r"the slice of axis 1 ends \(1.0\) before it starts \(3.0\)"),
        ((), {"start": [1, 1], "shape": [-1, 1]}, "the slice shape must not be negative"),
        (([1, 1], [-1, 1]), {}, "the slice of axis 1 ends"),
        (([0, 0], [1]), {}, r"input 'shape_input' must have one value per sliced axis \(2\)"),
        ((), {"start": [0, 0], "out_of_bounds_policy": "bogus"}, "'out_of_bounds_policy' must be one of"),
        (
            (),
            {"start": [0, 0], "out_of_bounds_policy": "pad", "fill_values": [1, 2]},
            "2 'fill_values' need a channel dimension",
        ),
    ],
)
def test_slice_bad_arguments(inputs, kwargs, match):
    x = ndd.tensor(_data((4, 6)), layout="HW")
    with pytest.raises((ValueError, TypeError), match=f"ndd.slice: {match}"):
        ndd.slice(x, *inputs, **kwargs).evaluate()


def test_slice_fill_values_must_match_the_channels():
    x = ndd.tensor(_data((4, 6, 3)), layout="HWC")
    with pytest.raises(ValueError, match="ndd.slice: 'fill_values' has 2 values for 3 output channels"):
        ndd.slice(x, start=[0, 0], out_of_bounds_policy="pad", fill_values=[1, 2])


# --------------------------------------------------------------------------- pad


def _np_pad(x, shape, fill):
    return np.pad(x, [(0, n - e) for n, e in zip(shape, x.shape, strict=True)], constant_values=fill)


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_pad_to_shape(dtype):
    x = _data((2, 3), dtype)
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
    x = _data((2, 3))
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
    samples = [_data((2, 3)), _data((4, 3)) + 100, _data((1, 3)) + 200]
    out = ndd.pad(ndd.batch(samples, layout="HW"), fill_value=-7, **kwargs)
    assert out.layout == "HW" and out.shape == shapes
    for got, x, shape in zip(_samples(out), samples, shapes, strict=True):
        np.testing.assert_array_equal(got, _np_pad(x, shape, -7))


def test_pad_per_sample_arguments():
    samples = [_data((2, 3)), _data((4, 1))]
    b = ndd.batch(samples)
    out = ndd.pad(b, shape=ndd.batch([np.int32([-1, 5]), np.int32([3, -1])]))
    assert out.shape == [(4, 5), (4, 3)]
    out = ndd.pad(b, align=ndd.batch([np.int32([3, 3]), np.int32([5, 5])]))
    assert out.shape == [(6, 3), (5, 5)]
    # The batch maximum covers all samples, whatever axes each one pads.
    out = ndd.pad(b, axes=ndd.batch([np.int32([0]), np.int32([1])]))
    assert out.shape == [(4, 3), (4, 3)]
    out = ndd.pad(b, fill_value=ndd.batch([np.float32(1), np.float32(2)]))
    for got, x, fill in zip(_samples(out), samples, [1, 2], strict=True):
        np.testing.assert_array_equal(got, _np_pad(x, (4, 3), fill))


def test_pad_per_sample_fill_value_of_one_element_arrays():
    # The reference wants 0-D samples here (golden pad_037); ndd takes one-element arrays too.
    out = ndd.pad(
        ndd.batch([_data((2, 3)), _data((4, 3))]), fill_value=ndd.batch([np.float32([5]), np.float32([6])])
    )
    np.testing.assert_array_equal(_samples(out)[0], _np_pad(_data((2, 3)), (4, 3), 5))


def test_pad_tensor_broadcast_over_batch_size_keeps_its_shape():
    out = ndd.pad(_data((2, 3)), batch_size=2)
    assert out.shape == [(2, 3), (2, 3)]


def test_pad_shapes_in_deferred_mode():
    with ndd.EvalMode.deferred:
        explicit = ndd.pad(ndd.batch([_data((2, 3)), _data((4, 3))]), shape=[5, 5])
        assert explicit.shape == [(5, 5), (5, 5)]
        to_max = ndd.pad(ndd.batch([_data((2, 3)), _data((4, 3))]))
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
        ndd.pad(ndd.tensor(_data((2, 3)), layout="HW"), **kwargs).evaluate()


def test_pad_axis_names_need_a_layout():
    with pytest.raises(
        ValueError, match="ndd.pad: 'axis_names' has 'H', which is not in the input layout ''"
    ):
        ndd.pad(_data((2, 3)), axis_names="H", shape=[3]).evaluate()


# --------------------------------------------------------------------------- cat


@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_cat_values(dtype, axis):
    a, b = _data((2, 3, 4), dtype), _data((2, 3, 4), dtype)[::-1].copy()
    out = ndd.cat(ndd.tensor(a, layout="HWC"), b, axis=axis)
    assert out.dtype == ndd.dtype(dtype) and out.layout == "HWC"
    np.testing.assert_array_equal(np.asarray(out), np.concatenate([a, b], axis=axis))


def test_cat_inputs_may_differ_along_the_axis():
    parts = [_data((2, 3, 4)), _data((2, 1, 4)), _data((2, 0, 4))]
    out = ndd.cat(*parts, axis=1)
    assert out.shape == (2, 4, 4)
    np.testing.assert_array_equal(np.asarray(out), np.concatenate(parts, axis=1))


def test_cat_axis_name_and_the_layout_of_the_first_input():
    a, b = ndd.tensor(_data((2, 3, 4)), layout="HWC"), ndd.tensor(_data((2, 1, 4)), layout="XYZ")
    out = ndd.cat(a, b, axis_name="W")
    assert out.layout == "HWC" and out.shape == (2, 4, 4)
    assert ndd.cat(_data((2, 1, 4)), a.evaluate()[:, :1], axis=1).layout is None


def test_cat_single_input_and_python_lists():
    np.testing.assert_array_equal(np.asarray(ndd.cat(_data((2, 3)))), _data((2, 3)))
    out = ndd.cat(np.int32([1, 2]), [3, 4])
    np.testing.assert_array_equal(np.asarray(out), [1, 2, 3, 4])


def test_cat_ragged_batch_with_a_tensor():
    samples = [_data((2, 3)), _data((4, 3))]
    extra = _data((1, 3)) + 50
    out = ndd.cat(ndd.batch(samples, layout="HW"), extra, axis=0)
    assert isinstance(out, ndd.Batch) and out.shape == [(3, 3), (5, 3)] and out.layout == "HW"
    for got, x in zip(_samples(out), samples, strict=True):
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
    tensors = [ndd.tensor(_data(s), layout="HWC"[: len(s)] if len(s) == 3 else None) for s in inputs]
    with pytest.raises(error, match=f"ndd.cat: {match}"):
        ndd.cat(*tensors, **kwargs).evaluate()


def test_cat_rejects_mixed_dtypes_at_the_call():
    with pytest.raises(
        TypeError, match="ndd.cat: all inputs must have the same dtype; input 0 is i32, input 1 is f32"
    ):
        ndd.cat(_data((2, 3)), _data((2, 3), np.float32))


# --------------------------------------------------------------------------- stack


@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("axis, position", [(0, 0), (1, 1), (3, 3), (-1, 3), (-3, 1)])
def test_stack_values(dtype, axis, position):
    a, b = _data((2, 3, 4), dtype), _data((2, 3, 4), dtype)[::-1].copy()
    out = ndd.stack(ndd.tensor(a, layout="HWC"), b, axis=axis)
    assert out.dtype == ndd.dtype(dtype) and out.layout is None
    np.testing.assert_array_equal(np.asarray(out), np.stack([a, b], axis=position))


@pytest.mark.parametrize("axis, layout", [(0, "NHWC"), (1, "HNWC"), (3, "HWCN"), (-1, "HWCN"), (-2, "HWNC")])
def test_stack_axis_name_inserts_into_the_layout(axis, layout):
    a = ndd.tensor(_data((2, 3, 4)), layout="HWC")
    assert ndd.stack(a, _data((2, 3, 4)), axis=axis, axis_name="N").layout == layout


def test_stack_scalars_and_single_input():
    out = ndd.stack(np.float32(1), np.float32(2), axis_name="N")
    assert out.shape == (2,) and out.layout == "N"
    np.testing.assert_array_equal(np.asarray(out), [1, 2])
    assert ndd.stack(_data((2, 3))).shape == (1, 2, 3)


def test_stack_ragged_batch():
    samples = [_data((2, 3)), _data((4, 3))]
    b = ndd.batch(samples, layout="HW")
    out = ndd.stack(b, b, axis=2, axis_name="C")
    assert out.shape == [(2, 3, 2), (4, 3, 2)] and out.layout == "HWC"
    for got, x in zip(_samples(out), samples, strict=True):
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
        ndd.stack(ndd.tensor(_data((2, 3, 4)), layout="HWC"), _data(second), **kwargs).evaluate()


def test_stack_axis_name_needs_a_layout():
    with pytest.raises(ValueError, match="ndd.stack: 'axis_name' needs input 0 to have a layout"):
        ndd.stack(_data((2, 3)), ndd.tensor(_data((2, 3)), layout="HW"), axis_name="N")


def test_stack_rejects_mixed_dtypes_at_the_call():
    with pytest.raises(TypeError, match="ndd.stack: all inputs must have the same dtype"):
        ndd.stack(_data((2, 3)), _data((2, 3), np.uint8))
