"""slice (ndd/_ops/slicing.py)."""

import io
import json
import pathlib

import numpy as np
import pytest
from arrays import ALL_TYPES, numbered, sample_arrays
from golden_cases import golden_tests
from PIL import Image

import ndd

# Golden cases where ndd deliberately differs (see the docstring of ndd/_ops/slicing.py);
# each behaviour is tested on its own below.
DEVIATIONS = {
    "slice_072": "the reference rejects bool data; ndd slices it "
    "(test_slice_start_and_shape_follow_the_default_axes_w_then_h)",
}
test_matches_reference_golden, test_every_deviating_golden_case_exists = golden_tests(
    "slice", deviations=DEVIATIONS, error_names_op=True
)


# --------------------------------------------------------------------------- slice: windows


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_slice_start_and_shape_follow_the_default_axes_w_then_h(dtype):
    x = numbered((4, 6, 3), dtype)
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
    x = numbered((4, 6))
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
    x = numbered((4, 6, 3), np.uint8)
    anchor, shape = np.array([0.5, 0.25], anchor_type), np.array([0.5, 0.5], anchor_type)
    out = ndd.slice(ndd.tensor(x, layout="HWC"), anchor, shape)
    np.testing.assert_array_equal(np.asarray(out), x[1:3, 3:6])


@pytest.mark.parametrize("anchor_type", [np.int8, np.int32, np.int64, np.uint16])
def test_slice_integer_inputs_are_positions_even_when_normalized(anchor_type):
    x = numbered((4, 6, 3), np.uint8)
    out = ndd.slice(ndd.tensor(x, layout="HWC"), np.array([1, 2], anchor_type), np.array([3, 2], anchor_type))
    np.testing.assert_array_equal(np.asarray(out), x[2:4, 1:4])


def test_slice_unnormalized_float_inputs_are_positions():
    x = numbered((4, 6))
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
    x = numbered((4, 6, 3))
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
    x = numbered((3, 4, 6))
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
    x = numbered(shape)
    out = ndd.slice(x, start=[1] * len(names), shape=[1] * len(names), axis_names=names)
    np.testing.assert_array_equal(np.asarray(out), x[window])
    assert out.layout is None


def test_slice_any_dimensionality_with_explicit_axes():
    x = numbered((2, 3, 2, 3, 2))
    np.testing.assert_array_equal(np.asarray(ndd.slice(x, start=[1], shape=[2], axes=[3])), x[:, :, :, 1:3])
    scalar = ndd.slice(np.float32(5), start=[], shape=[], axes=[])
    assert scalar.shape == () and scalar.item() == 5


# --------------------------------------------------------------------------- slice: out of bounds


def test_slice_out_of_bounds_raises_by_default():
    with pytest.raises(ValueError, match=r"ndd.slice: the slice \[4, 8\) of axis 1 is out of bounds"):
        ndd.slice(numbered((4, 6)), start=[4, 2], shape=[4, 3])


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float32, np.float64])
def test_slice_pad_policy_fills_outside(dtype):
    x = numbered((4, 6, 3), dtype)
    out = ndd.slice(
        ndd.tensor(x, layout="HWC"), start=[4, -1], shape=[4, 3], out_of_bounds_policy="pad", fill_values=[7]
    )
    expected = np.full((3, 4, 3), 7, dtype)
    expected[1:3, :2] = x[0:2, 4:6]
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert out.dtype == ndd.dtype(dtype)


@pytest.mark.parametrize("layout, channel_axis", [("HWC", 2), ("CHW", 0), (None, 2)])
def test_slice_pad_with_one_fill_value_per_channel(layout, channel_axis):
    x = np.moveaxis(numbered((4, 6, 3), np.uint8), 2, channel_axis)
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


# The reference's results (DALI 2.4) of slicing [1 2 3 4 5] from -2, 9 long.
_BORDER_CASES = {
    "pad": [0, 0, 1, 2, 3, 4, 5, 0, 0],
    "constant": [0, 0, 1, 2, 3, 4, 5, 0, 0],
    "edge": [1, 1, 1, 2, 3, 4, 5, 5, 5],
    "clamp": [1, 1, 1, 2, 3, 4, 5, 5, 5],
    "reflect": [2, 1, 1, 2, 3, 4, 5, 5, 4],
    "reflect_1001": [2, 1, 1, 2, 3, 4, 5, 5, 4],
    "reflect_101": [3, 2, 1, 2, 3, 4, 5, 4, 3],
    "wrap": [4, 5, 1, 2, 3, 4, 5, 1, 2],
}


@pytest.mark.parametrize("policy", sorted(_BORDER_CASES))
def test_slice_border_policies_as_the_reference(policy):
    # ndd took only 'error', 'pad' and 'trim_to_shape'.
    x = ndd.tensor(np.arange(1, 6, dtype=np.int32))
    out = ndd.slice(x, -2, 9, axes=[0], out_of_bounds_policy=policy, fill_values=0)
    assert np.asarray(out).tolist() == _BORDER_CASES[policy]


def test_slice_border_policies_in_two_dimensions_as_the_reference():
    x = ndd.tensor(np.arange(12, dtype=np.uint8).reshape(3, 4, 1), layout="HWC")
    options = {"axes": [0, 1], "normalized_anchor": False, "normalized_shape": False}
    rows, columns = [2, 1, 0, 0, 1, 2, 2, 1, 0], [1, 0, 0, 1, 2, 3, 3, 2]  # reflect: -3..5, -2..5
    out = np.asarray(ndd.slice(x, [-3, -2], [9, 8], out_of_bounds_policy="reflect", **options))
    np.testing.assert_array_equal(out[:, :, 0], (4 * np.array(rows)[:, None] + np.array(columns)))
    # One element repeats under every policy; windows far outside wrap around many times.
    one = ndd.tensor(np.array([7], np.int32))
    for policy in ("edge", "reflect", "reflect_101", "wrap"):
        assert np.asarray(ndd.slice(one, -2, 5, axes=[0], out_of_bounds_policy=policy)).tolist() == [7] * 5
    far = ndd.slice(ndd.tensor(np.arange(3)), -100, 7, axes=[0], out_of_bounds_policy="wrap")
    assert np.asarray(far).tolist() == [(i - 100) % 3 for i in range(7)]


def test_slice_border_policy_of_an_empty_axis_is_refused():
    out = ndd.slice(ndd.tensor(np.zeros(0, np.int32)), 0, 3, axes=[0], out_of_bounds_policy="edge")
    with pytest.raises(ValueError, match="'edge' has no elements to repeat: axis 0 of the input shape"):
        np.asarray(out)


@pytest.mark.parametrize(
    "start, shape, window",
    [
        ([4, 2], [4, 3], np.s_[2:4, 4:6]),
        ([-1, -1], [3, 3], np.s_[0:2, 0:2]),
        ([12, 1], [2, 2], np.s_[1:3, 6:6]),
    ],
)
def test_slice_trim_to_shape_policy_shrinks_the_window(start, shape, window):
    x = numbered((4, 6))
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
    x = numbered((4, 6, 3), np.uint8)
    out = ndd.slice(ndd.tensor(x, layout="HWC"), start=[1, 2], shape=[3, 2], dtype=ndd.float32)
    assert out.dtype == ndd.float32
    np.testing.assert_array_equal(np.asarray(out), x[2:4, 1:4].astype(np.float32))


@pytest.mark.parametrize("dtype", [ndd.uint8, ndd.float16, ndd.float32])
@pytest.mark.parametrize("source", ALL_TYPES)
def test_slice_dtype_from_every_input_type(source, dtype):
    x = numbered((3, 4), source)
    out = ndd.slice(x, start=[1, 1], dtype=dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), x[1:, 1:].astype(dtype.numpy), strict=True)


@pytest.mark.parametrize("dtype", [ndd.int16, ndd.int32, ndd.float64, ndd.bool])
def test_slice_rejects_other_output_types(dtype):
    with pytest.raises(
        ValueError, match=r"ndd.slice: 'dtype' must be one of u8, f16, f32 or the input's type \(u8\)"
    ):
        ndd.slice(numbered((4, 6), np.uint8), start=[0, 0], dtype=dtype)


@pytest.mark.parametrize("op", ["slice", "crop"])
@pytest.mark.parametrize("source", [np.int16, np.int32, np.uint16, np.float64])
def test_the_input_type_is_an_output_type_of_slice_and_crop(op, source):
    data = numbered((4, 6), source) - 3
    window = {"slice": {"start": [1, 2], "shape": [2, 3], "axes": [0, 1]}, "crop": {"crop": [2, 3]}}[op]
    got = getattr(ndd, op)(ndd.as_tensor(data, layout="HW"), dtype=ndd.dtype(source), **window)
    assert np.asarray(got).dtype == source
    np.testing.assert_array_equal(np.asarray(got), data[1:3, 2:5])


def test_slice_output_dtype_is_a_deprecated_alias():
    with pytest.warns(DeprecationWarning, match="'output_dtype' is deprecated"):
        out = ndd.slice(numbered((4, 6)), start=[0, 0], output_dtype=ndd.float32)
    assert out.dtype == ndd.float32
    np.testing.assert_array_equal(np.asarray(out), numbered((4, 6)).astype(np.float32))
    with pytest.raises(ValueError, match="ndd.slice: 'output_dtype' is a deprecated alias of 'dtype'"):
        ndd.slice(numbered((4, 6)), start=[0, 0], output_dtype=ndd.float32, dtype=ndd.uint8)


def test_slice_image_type_is_deprecated_and_ignored():
    with pytest.warns(DeprecationWarning, match="'image_type' is deprecated"):
        out = ndd.slice(numbered((4, 6)), start=[1, 1], image_type=ndd.types.RGB)
    np.testing.assert_array_equal(np.asarray(out), numbered((4, 6))[1:, 1:])


# --------------------------------------------------------------------------- slice: batches


def test_slice_ragged_batch_with_per_sample_start():
    samples = [numbered((2, 3)), numbered((4, 3)) + 100]
    start = ndd.batch([np.int32([0, 0]), np.int32([1, 2])])
    out = ndd.slice(ndd.batch(samples, layout="HW"), start=start, shape=[2, 1])
    assert out.layout == "HW" and out.shape == [(1, 2), (1, 2)]
    for got, x, window in zip(sample_arrays(out), samples, [np.s_[0:1, 0:2], np.s_[2:3, 1:3]], strict=True):
        np.testing.assert_array_equal(got, x[window])


def test_slice_ragged_batch_with_per_sample_anchor_and_shape_inputs():
    samples = [numbered((2, 3)), numbered((4, 3)) + 100]
    anchor = ndd.batch([np.float32([0, 0]), np.float32([0.5, 0.5])])
    shape = ndd.batch([np.float32([1, 0.5]), np.float32([0.5, 0.5])])
    out = ndd.slice(ndd.batch(samples, layout="HW"), anchor, shape)
    assert out.shape == [(1, 3), (2, 1)]
    for got, x, window in zip(sample_arrays(out), samples, [np.s_[0:1, 0:3], np.s_[2:4, 2:3]], strict=True):
        np.testing.assert_array_equal(got, x[window])


def test_slice_per_sample_axes():
    x = numbered((3, 4, 6))
    out = ndd.slice(ndd.batch([x, x]), start=[1], shape=[2], axes=ndd.batch([np.int32([0]), np.int32([2])]))
    assert out.shape == [(2, 4, 6), (3, 4, 2)]
    np.testing.assert_array_equal(sample_arrays(out)[1], x[:, :, 1:3])


def test_slice_tensor_broadcast_over_batch_size():
    x = numbered((4, 6))
    out = ndd.slice(x, start=[1, 1], shape=[2, 2], batch_size=3)
    assert isinstance(out, ndd.Batch) and out.batch_size == 3
    for got in sample_arrays(out):
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
    x = ndd.tensor(numbered((4, 6)), layout="HW")
    with pytest.raises((ValueError, TypeError), match=f"ndd.slice: {match}"):
        ndd.slice(x, *inputs, **kwargs).evaluate()


def test_slice_fill_values_must_match_the_channels():
    x = ndd.tensor(numbered((4, 6, 3)), layout="HWC")
    with pytest.raises(ValueError, match="ndd.slice: 'fill_values' has 2 values for 3 output channels"):
        ndd.slice(x, start=[0, 0], out_of_bounds_policy="pad", fill_values=[1, 2])


def test_anchor_just_above_minus_half_rounds_to_zero():
    # Exact rounding, halves away from zero: -0.49999999999999994 is not a half.
    data = ndd.tensor(np.arange(3, dtype=np.int32))
    out = ndd.slice(
        data,
        np.array([-0.49999999999999994]),
        np.array([2.0]),
        axes=[0],
        normalized_anchor=False,
        normalized_shape=False,
        out_of_bounds_policy="trim_to_shape",
    )
    np.testing.assert_array_equal(np.asarray(out), [0, 1])


# ------------------------------------------------------- windows from relative arguments

_WINDOW_CASES = json.loads(
    (pathlib.Path(__file__).parent.parent / "golden" / "slice_window_cases.json").read_text(encoding="utf-8")
)


def _window_shape(call):
    try:
        out = call()
        out = out.tensors[0] if isinstance(out, ndd.Batch) else out
        return list(np.asarray(out).shape[:2])
    except RuntimeError:
        return "error"


@pytest.mark.parametrize("case", _WINDOW_CASES, ids=lambda c: f"{c['size']}-{c['kwargs']}")
def test_relative_windows_round_as_the_reference(case):
    # rel_start with rel_shape: the fractions are added, then scaled (0.35 of 50 ends at 17).
    height, width = case["size"]
    plain = ndd.tensor(np.zeros((height, width), np.uint8))
    assert _window_shape(lambda: ndd.slice(plain, axes=[1, 0], **case["kwargs"])) == case["slice"]
    png = io.BytesIO()
    Image.fromarray(np.zeros((height, width, 3), np.uint8)).save(png, "PNG")
    encoded = ndd.tensor(np.frombuffer(png.getvalue(), np.uint8))
    expected = case["image_slice"]
    if expected == "error" and case["slice"] != "error" and 0 in case["slice"]:
        # Deliberate: an empty window decodes to an empty image, as slice gives; the
        # reference's decoder fails on it (nvImageCodec refuses an empty region).
        expected = case["slice"]
    assert _window_shape(lambda: ndd.decoders.image_slice(encoded, **case["kwargs"])) == expected
