"""erase, paste, grid_mask, sequence_rearrange and per_frame against the reference
goldens (tests/golden/make_crop_goldens.py), numpy, and their argument checks."""

import numpy as np
import pytest
from crop_goldens import check_case, crop_cases

import ndd

# Cases where ndd differs from the reference on purpose (see ndd/_ops/compose.py): the
# reference masks the first two dimensions whatever the layout; ndd masks H and W.
_DIVERGENT = {
    "case165": "ndd masks a CHW image's H and W; the reference masks it as if it were HWC",
    "case166": "ndd masks each frame of FHWC data; the reference masks it as neither FHWC nor HWC",
    "case129": "the goldens' **kwargs reach the reference as Tensor arguments, and it refuses a Tensor 'shape' "
    "without 'anchor'; a list 'shape' in the call's text starts the regions at 0, as ndd does "
    "(test_erase_shape_without_anchor_starts_at_zero)",
}


@pytest.mark.parametrize(
    "case", crop_cases("erase", "paste", "multi_paste", "grid_mask", "sequence_rearrange", "per_frame")
)
def test_matches_reference_golden(case):
    if case["name"] in _DIVERGENT:
        pytest.skip(_DIVERGENT[case["name"]])
    check_case(case)


def _image(h=12, w=16, c=3, seed=0):
    return np.random.default_rng(seed).integers(1, 256, (h, w, c), dtype=np.uint8)


def test_erase_fills_the_regions_and_keeps_the_rest():
    img = _image()
    out = np.asarray(ndd.erase(ndd.as_tensor(img, layout="HWC"), anchor=[2, 3, 8, 10], shape=[3, 4, 9, 9]))
    expected = img.copy()
    expected[2:5, 3:7] = 0
    expected[8:, 10:] = 0
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    "rows",
    [
        lambda a: np.array(a, np.float32),
        lambda a: a,
        lambda a: [np.array(r) for r in a],
        lambda a: ndd.as_tensor(np.array(a, np.float32)),
    ],
    ids=["array", "lists", "list of arrays", "tensor"],
)
def test_erase_regions_may_be_rows(rows):
    """As in the reference, a region per row of a 2-D anchor and shape."""
    img = _image()
    flat = np.asarray(ndd.erase(ndd.as_tensor(img, layout="HWC"), anchor=[2, 3, 8, 10], shape=[3, 4, 9, 9]))
    out = ndd.erase(
        ndd.as_tensor(img, layout="HWC"), anchor=rows([[2, 3], [8, 10]]), shape=rows([[3, 4], [9, 9]])
    )
    np.testing.assert_array_equal(np.asarray(out), flat)
    with pytest.raises(ValueError, match="'anchor' must be a scalar or a 1-D list or rows"):
        ndd.erase(ndd.as_tensor(img, layout="HWC"), anchor=np.zeros((1, 2, 2)), shape=[1, 1])
    with pytest.raises(ValueError, match="'crop' must be a scalar or a 1-D list, got"):
        ndd.crop(ndd.as_tensor(img, layout="HWC"), crop=np.array([[2, 3]]))


def test_paste_places_the_image_on_a_canvas():
    img = _image()
    out = np.asarray(
        ndd.paste(ndd.as_tensor(img, layout="HWC"), ratio=2.0, paste_x=0.25, paste_y=1.0, fill_value=[9])
    )
    assert out.shape == (24, 32, 3)
    np.testing.assert_array_equal(out[12:24, 4:20], img)
    mask = np.ones(out.shape[:2], bool)
    mask[12:24, 4:20] = False
    assert (out[mask] == 9).all()


def test_grid_mask_zeroes_squares_of_the_grid():
    img = _image()
    out = np.asarray(ndd.grid_mask(ndd.as_tensor(img, layout="HWC"), tile=4, ratio=0.5))
    y, x = np.mgrid[0:12, 0:16]
    black = (y % 4 < 2) & (x % 4 < 2)
    np.testing.assert_array_equal(out[black], 0)
    np.testing.assert_array_equal(out[~black], img[~black])


def _grid_squares(height, width, tile, ratio, angle):
    """The grid's squares computed with numpy in float32, as the kernel does."""
    f32 = np.float32
    cos_t = f32(np.cos(f32(angle))) / f32(tile)
    sin_t = f32(np.sin(f32(angle))) / f32(tile)
    y = np.arange(height, dtype=f32)[:, None]
    x = np.arange(width, dtype=f32)[None, :]
    fx = (y * -sin_t) + x * cos_t
    fy = (y * cos_t) + x * sin_t
    return ((fx - np.floor(fx)) < f32(ratio)) & ((fy - np.floor(fy)) < f32(ratio))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
@pytest.mark.parametrize("channels", [None, 1, 4])
def test_grid_mask_rotated_on_any_pixel_size_and_strides(dtype, channels):
    # 37 columns: full 8-pixel blocks and a tail; the mirrored view is not contiguous.
    shape = (29, 37) if channels is None else (29, 37, channels)
    img = np.random.default_rng(1).integers(1, 100, shape).astype(dtype)[:, ::-1]
    out = np.asarray(ndd.grid_mask(ndd.as_tensor(img), tile=7, ratio=0.45, angle=0.7))
    black = _grid_squares(29, 37, 7, 0.45, 0.7)
    assert out.dtype == dtype and black.any() and (~black).any()
    np.testing.assert_array_equal(out[black], 0)
    np.testing.assert_array_equal(out[~black], img[~black])


def test_grid_mask_with_no_square_keeps_the_image():
    img = _image()
    out = np.asarray(ndd.grid_mask(ndd.as_tensor(img, layout="HWC"), tile=4, ratio=0.0))
    np.testing.assert_array_equal(out, img)


def test_sequence_rearrange_per_sample_orders():
    seqs = [np.arange(4 * 2 * 3, dtype=np.float32).reshape(4, 2, 3) + 100 * s for s in range(2)]
    orders = ndd.batch([np.int32([3, 1]), np.int32([0, 0, 2])])
    out = ndd.sequence_rearrange(ndd.batch(seqs, layout="FHW"), new_order=orders)
    np.testing.assert_array_equal(np.asarray(out.tensors[0]), seqs[0][[3, 1]])
    np.testing.assert_array_equal(np.asarray(out.tensors[1]), seqs[1][[0, 0, 2]])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda x: ndd.erase(x, anchor=[1, 2, 3], shape=[2, 3]), "ndd.erase: 'anchor' and 'shape'"),
        (lambda x: ndd.erase(x, anchor=[1, 2], shape=[2, 3], fill_value=[1, 2]), "ndd.erase: 'fill_value'"),
        (lambda x: ndd.paste(x, ratio=0.5, fill_value=[0]), "ndd.paste: 'ratio' must be at least 1"),
        (lambda x: ndd.paste(x, ratio=2, fill_value=[0, 1]), "ndd.paste: 'fill_value'"),
        (
            lambda x: ndd.paste(x, ratio=3, fill_value=[0], paste_x=-0.01),
            r"ndd.paste: 'paste_x' must be within",
        ),
        (
            lambda x: ndd.paste(x, ratio=3, fill_value=[0], paste_y=1.05),
            r"ndd.paste: 'paste_y' must be within",
        ),
        (lambda x: ndd.grid_mask(x, tile=0), "ndd.grid_mask: 'tile' must be positive"),
        (lambda x: ndd.per_frame(x), "ndd.per_frame: the input layout must start with 'F'"),
    ],
)
def test_bad_arguments_name_the_operator_and_argument(call, message):
    with pytest.raises(ValueError, match=message):
        np.asarray(call(ndd.as_tensor(_image(), layout="HWC")))


def test_sequence_rearrange_rejects_frames_out_of_range():
    with pytest.raises(ValueError, match=r"ndd.sequence_rearrange: 'new_order'\[0\] must be within \[0, 4\)"):
        np.asarray(ndd.sequence_rearrange(ndd.as_tensor(np.zeros((4, 2, 2)), layout="FHW"), new_order=[4]))


def test_multi_paste_builds_a_mosaic_from_in_ids():
    imgs = [_image(8, 8, 3, s) for s in range(4)]
    ids = ndd.batch([np.int32([0, 1, 2, 3])] * 4)
    anchors = np.int32([[0, 0], [0, 4], [4, 0], [4, 4]])
    out = ndd.multi_paste(
        ndd.batch(imgs, layout="HWC"), in_ids=ids, shapes=np.int32([[4, 4]] * 4), out_anchors=anchors
    )
    got = np.asarray(out.tensors[0])
    for k, (y, x) in enumerate(anchors):
        np.testing.assert_array_equal(got[y : y + 4, x : x + 4], imgs[k][:4, :4])


def test_multi_paste_refuses_a_bool_output():
    images = ndd.batch([np.zeros((8, 8, 3), np.uint8)] * 2, layout="HWC")
    with pytest.raises(ValueError, match="ndd.multi_paste: 'dtype' must be a numeric type, got bool"):
        ndd.multi_paste(images, in_ids=ndd.batch([np.int32([0])] * 2), output_size=[12, 12], dtype=ndd.bool)


@pytest.mark.parametrize("channels", [1, 2, 4])
def test_paste_takes_images_of_any_channel_count(channels):
    # As the reference: n_channels only counts fill_value's values; the input's channels rule.
    image = np.random.default_rng(channels).integers(0, 256, (3, 4, channels)).astype(np.uint8)
    fill = list(range(10, 10 + channels))
    out = np.asarray(
        ndd.paste(
            ndd.batch([image], layout="HWC"),
            ratio=2,
            paste_x=0.5,
            paste_y=0.5,
            fill_value=fill,
            n_channels=channels,
        ).select(0)
    )
    expected = np.empty((6, 8, channels), np.uint8)
    expected[...] = fill
    expected[1:4, 2:6] = image
    np.testing.assert_array_equal(out, expected)

    # One fill value, n_channels left at 3.
    out = ndd.paste(ndd.batch([image], layout="HWC"), ratio=2, paste_x=0.5, paste_y=0.5, fill_value=[7])
    expected[...] = 7
    expected[1:4, 2:6] = image
    np.testing.assert_array_equal(np.asarray(out.select(0)), expected)


@pytest.mark.parametrize("layout", ["CHW", "FCHW"])
def test_grid_mask_masks_the_rows_and_columns_of_planar_layouts(layout):
    # The reference masks a CHW image as if it were HWC (a grid over C and H); ndd
    # masks H and W, the same grid on every channel.
    rng = np.random.default_rng(3)
    kwargs = {"tile": 7, "ratio": 0.45, "angle": 0.6, "shift_x": 1.5, "shift_y": -2.0}
    interleaved = rng.integers(1, 256, (2, 17, 23, 3)).astype(np.uint8)
    expected = np.stack(
        [np.asarray(ndd.grid_mask(ndd.tensor(f, layout="HWC"), **kwargs)) for f in interleaved]
    )
    if layout == "CHW":
        interleaved, expected = interleaved[0], expected[0]
    planar = np.ascontiguousarray(np.moveaxis(interleaved, -1, -3))
    out = np.asarray(ndd.grid_mask(ndd.tensor(planar, layout=layout), **kwargs))
    np.testing.assert_array_equal(out, np.moveaxis(expected, -1, -3))
    batch = ndd.grid_mask(ndd.batch([planar, planar[..., :9, :5]], layout=layout), **kwargs)
    np.testing.assert_array_equal(np.asarray(batch.select(0)), out)


def test_grid_mask_needs_the_rows_and_columns_together():
    with pytest.raises(
        ValueError, match="ndd.grid_mask: the input's layout must have W right after H, got 'HCW'"
    ):
        ndd.grid_mask(ndd.tensor(np.ones((4, 3, 5), np.uint8), layout="HCW"))
    with pytest.raises(
        ValueError, match="ndd.grid_mask: an input of 4 dimensions needs a layout with H and W"
    ):
        ndd.grid_mask(ndd.tensor(np.ones((2, 4, 3, 5), np.uint8)))


@pytest.mark.parametrize("layout", ["FHWC", "DHWC"])
def test_grid_mask_of_a_sequence_or_volume_masks_every_frame_alike(layout):
    frames = np.random.default_rng(5).integers(1, 256, (3, 20, 24, 3)).astype(np.uint8)
    kwargs = {"tile": 8, "ratio": 0.4, "angle": 0.3, "shift_x": 2.0, "shift_y": 1.0}
    out = np.asarray(ndd.grid_mask(ndd.tensor(frames, layout=layout), **kwargs))
    for frame, masked in zip(frames, out, strict=True):
        np.testing.assert_array_equal(
            masked, np.asarray(ndd.grid_mask(ndd.tensor(frame, layout="HWC"), **kwargs))
        )
    assert 0 < (out == 0).all(-1).mean() < 1  # some pixels masked, not all


@pytest.mark.parametrize("dtype", [ndd.uint64, ndd.int64, ndd.uint8])
def test_multi_paste_of_bools_into_integers_gives_zeros_and_ones(dtype):
    # np.clip of a bool array to uint64's bounds raised OverflowError.
    mask = np.zeros((4, 4, 1), bool)
    mask[1:3, 1:3] = True
    out = ndd.multi_paste(ndd.batch([mask] * 2, layout="HWC"), in_ids=[1, 0], dtype=dtype)
    np.testing.assert_array_equal(np.asarray(out.select(0)), mask.astype(np.dtype(dtype.numpy)))


def test_erase_shape_without_anchor_starts_at_zero():
    img = _image()
    out = np.asarray(ndd.erase(ndd.as_tensor(img, layout="HWC"), shape=[2, 3, 4, 1]))
    expected = img.copy()
    expected[:2, :3] = 0
    expected[:4, :1] = 0
    np.testing.assert_array_equal(out, expected)


def test_erase_axis_names_come_before_axes():
    # As the reference documents and does: axis_names has the higher priority.
    img = _image()
    x = ndd.as_tensor(img, layout="HWC")
    out = np.asarray(ndd.erase(x, anchor=[1, 2], shape=[2, 3], axes=[0, 1], axis_names="WH"))
    expected = img.copy()
    expected[2:5, 1:3] = 0
    np.testing.assert_array_equal(out, expected)
    by_axes = np.asarray(ndd.erase(x, anchor=[1, 2], shape=[2, 3], axes=[0, 1]))
    expected = img.copy()
    expected[1:3, 2:5] = 0
    np.testing.assert_array_equal(by_axes, expected)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(normalized=True, normalized_anchor=True), "'normalized' and 'normalized_anchor' are mutually"),
        (dict(normalized=True, normalized_shape=True), "'normalized' and 'normalized_shape' are mutually"),
        (dict(axis_names=""), "'axis_names' is empty"),
        (dict(axes=[]), "'axes' is empty"),
    ],
)
def test_erase_refuses_conflicting_or_empty_axis_arguments(kwargs, message):
    x = ndd.as_tensor(_image(), layout="HWC")
    with pytest.raises(ValueError, match=f"ndd.erase: {message}"):
        ndd.erase(x, anchor=[0.1, 0.2], shape=[0.5, 0.5], **kwargs).evaluate()


def test_erase_with_no_fill_value_fills_zeros():
    # As the reference: fill_value=[] is 0.
    x = ndd.tensor(np.full((4, 5, 1), 9, np.uint8), layout="HWC")
    out = np.asarray(ndd.erase(x, anchor=[1, 1], shape=[2, 2], fill_value=[]))
    expected = np.full((4, 5, 1), 9, np.uint8)
    expected[1:3, 1:3] = 0
    np.testing.assert_array_equal(out, expected)


def test_paste_refuses_a_negative_min_canvas_size():
    # As the reference; it was taken as no minimum.
    with pytest.raises(ValueError, match="ndd.paste: 'min_canvas_size' must not be negative, got -1.0"):
        ndd.paste(
            ndd.as_tensor(_image(), layout="HWC"), ratio=2.0, fill_value=[0, 0, 0], min_canvas_size=-1.0
        )


def test_multi_paste_refuses_data_that_is_not_hwc_images():
    # It was "tuple index out of range" (found by fuzzing).
    signals = ndd.batch([np.zeros(192, np.float32), np.zeros(160, np.float32)])
    with pytest.raises(
        ValueError, match=r"ndd.multi_paste: the inputs must be HWC images \(3-D\), got 1-D data"
    ):
        ndd.multi_paste(signals, in_ids=[0, 1], output_size=[16, 16])
