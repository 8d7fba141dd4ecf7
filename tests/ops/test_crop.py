"""crop, crop_mirror_normalize and flip against the reference goldens
(tests/golden/make_crop_goldens.py), numpy, and their argument checks."""

import numpy as np
import pytest
from crop_goldens import call_case, check_case, crop_cases, golden_value

import ndd

# Cases the reference rejects and ndd accepts on purpose (see ndd/_ops/crop.py).
_ACCEPTED_LAYOUT_HW = {"case45", "case104"}
# A one-value mean/std with several fill values: the reference zeroes all channels but the
# first inside the image; ndd normalizes every channel (test below).
_ONE_MEAN_SEVERAL_FILLS = "case209"


@pytest.mark.parametrize("case", crop_cases("crop", "crop_mirror_normalize", "flip"))
def test_matches_reference_golden(case):
    if case["name"] in _ACCEPTED_LAYOUT_HW:
        pytest.skip("ndd accepts HW images, which the reference rejects")
    if case["name"] == _ONE_MEAN_SEVERAL_FILLS:
        pytest.skip(
            "the reference drops channels 1-2 here; see test_one_mean_broadcasts_with_several_fill_values"
        )
    check_case(case)


def test_one_mean_broadcasts_with_several_fill_values():
    (case,) = [
        c.values[0]
        for c in crop_cases("crop_mirror_normalize")
        if c.values[0]["name"] == _ONE_MEAN_SEVERAL_FILLS
    ]
    got = np.asarray(call_case(case))
    reference = golden_value(case["outputs"][0])
    img = golden_value("input_hwc")
    # Padded rows and channel 0 agree with the reference; the image part is (x - 1) / 2 in every channel.
    np.testing.assert_array_equal(got[:5], reference[:5])
    np.testing.assert_array_equal(got[..., 0], reference[..., 0])
    np.testing.assert_allclose(got[5:25], (img[:, 10:19].astype(np.float32) - 1) / 2, rtol=0, atol=1e-5)


def _image(h=24, w=32, c=3, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h, w, c), dtype=np.uint8)


@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint16", "int32", "float16", "float32"])
@pytest.mark.parametrize("mirror", [0, 1])
def test_crop_mirror_normalize_matches_numpy(dtype, mirror):
    img = _image().astype(dtype)
    mean, std = np.float32([100.0, 110.0, 120.0]), np.float32([50.0, 60.0, 70.0])
    out = ndd.crop_mirror_normalize(
        ndd.as_tensor(img, layout="HWC"), crop=(10, 12), crop_pos_x=0.25, mean=mean, std=std, mirror=mirror
    )
    y, x = round((24 - 10) * 0.5), round((32 - 12) * 0.25)
    window = img[y : y + 10, x : x + 12].astype(np.float32)
    if mirror:
        window = window[:, ::-1]
    expected = ((window - mean) / std).transpose(2, 0, 1)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=0, atol=1e-5)


def test_crop_mirror_normalize_per_sample_mirror_from_coin_flip():
    imgs = [_image(seed=s) for s in range(6)]
    flips = ndd.random.coin_flip(batch_size=6, rng=ndd.random.RNG(seed=3))
    out = ndd.crop_mirror_normalize(
        ndd.batch(imgs, layout="HWC"), mirror=flips, output_layout="HWC", dtype=ndd.uint8
    )
    for img, flag, got in zip(imgs, flips.tensors, out.tensors, strict=True):
        np.testing.assert_array_equal(np.asarray(got), img[:, ::-1] if int(np.asarray(flag)) else img)


def test_crop_mirror_normalize_large_batch_on_the_thread_pool():
    imgs = [_image(64, 64, 3, s) for s in range(40)]  # > 256 KiB: samples run in parallel
    mirror = ndd.batch([np.int32(s % 2) for s in range(40)])
    out = ndd.crop_mirror_normalize(ndd.batch(imgs, layout="HWC"), mirror=mirror, crop=(32, 32), mean=[128.0])
    for s, got in enumerate(out.tensors):
        window = imgs[s][16:48, 16:48].astype(np.float32) - 128
        expected = (window[:, ::-1] if s % 2 else window).transpose(2, 0, 1)
        np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda x: ndd.crop(x, crop=(5,)), "ndd.crop: 'crop' must have 2 values"),
        (lambda x: ndd.crop(x, crop_h=5), "ndd.crop: 'crop_h' and 'crop_w' must be given together"),
        (
            lambda x: ndd.crop(x, crop=(4, 4), crop_h=0),
            "ndd.crop: 'crop' cannot be combined with 'crop_h', 'crop_w' or 'crop_d'",
        ),
        (lambda x: ndd.crop(x, crop=(4, 4), crop_pos_x=1.5), "ndd.crop: 'crop_pos_x' must be within"),
        (lambda x: ndd.crop(x, crop=(40, 4)), "out_of_bounds_policy='pad'"),
        (lambda x: ndd.crop(x, dtype=ndd.int8), "ndd.crop: 'dtype' must be one of"),
        (
            lambda x: ndd.crop_mirror_normalize(x, mean=[1.0, 2.0]),
            "ndd.crop_mirror_normalize: 'mean' must have 1 value or one per channel",
        ),
        (
            lambda x: ndd.crop_mirror_normalize(x, output_layout="HWCX"),
            "ndd.crop_mirror_normalize: 'output_layout' must be a permutation",
        ),
        (lambda x: ndd.crop_mirror_normalize(x, dtype=ndd.int32), "ndd.crop_mirror_normalize: 'dtype'"),
    ],
)
def test_bad_arguments_name_the_operator_and_argument(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        np.asarray(call(ndd.as_tensor(_image(), layout="HWC")))


@pytest.mark.parametrize(
    ("kwargs", "rows", "columns"),
    [
        ({"crop_h": 5, "crop_w": 0}, 5, 12),  # a given width of 0 keeps the width, as in the reference
        ({"crop_h": 5, "crop_w": -3}, 5, 12),
        ({"crop": (0.5, 3.7)}, 10, 3),  # extents truncate; 0 keeps the extent
        ({"crop": (-2, 4)}, 10, 4),
    ],
)
def test_crop_extents_truncate_and_those_below_one_keep_the_axis(kwargs, rows, columns):
    img = _image(10, 12)
    got = np.asarray(ndd.crop(ndd.as_tensor(img, layout="HWC"), **kwargs))
    top, left = int((10 - rows) / 2 + 0.5), int((12 - columns) / 2 + 0.5)  # centred, halves away from 0
    np.testing.assert_array_equal(got, img[top : top + rows, left : left + columns])


def test_flip_is_a_numpy_flip_per_sample():
    imgs = [_image(seed=s) for s in range(3)]
    out = ndd.flip(
        ndd.batch(imgs, layout="HWC"),
        horizontal=ndd.batch([np.int32(v) for v in (0, 1, 1)]),
        vertical=ndd.batch([np.int32(v) for v in (1, 1, 0)]),
    )
    expected = [imgs[0][::-1], imgs[1][::-1, ::-1], imgs[2][:, ::-1]]
    for got, want in zip(out.tensors, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)


_FLIP_SHAPES = {"HWC": (5, 7, 3), "CHW": (3, 5, 7), "FHWC": (2, 5, 7, 4), "DHWC": (3, 5, 7, 2), "HW": (5, 7)}


@pytest.mark.parametrize("layout", list(_FLIP_SHAPES))
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, np.float16])
@pytest.mark.parametrize("flags", [(1, 0, 0), (0, 1, 0), (1, 1, 0), (1, 1, 1), (0, 0, 1), (0, 0, 0)])
def test_flip_equals_numpy_flip(layout, dtype, flags):
    shape = _FLIP_SHAPES[layout]
    data = (np.random.default_rng(1).random(shape) * 1000).astype(dtype)
    horizontal, vertical, depthwise = flags
    out = np.asarray(
        ndd.flip(
            ndd.as_tensor(data, layout=layout), horizontal=horizontal, vertical=vertical, depthwise=depthwise
        )
    )
    axes = []
    if horizontal:
        axes.append(layout.index("W"))
    if vertical:
        axes.append(layout.index("H"))
    if depthwise and "D" in layout:
        axes.append(layout.index("D"))
    expected = np.flip(data, axis=tuple(axes)) if axes else data
    assert out.dtype == data.dtype
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("channels", [1, 3, 4, 5])
def test_flip_of_a_view_and_of_empty_images(channels):
    base = np.random.default_rng(2).integers(0, 255, (6, 16, channels), dtype=np.uint8)
    view = base[1:5, ::2]  # not contiguous
    out = np.asarray(ndd.flip(ndd.as_tensor(view, layout="HWC")))
    np.testing.assert_array_equal(out, view[:, ::-1])
    empty = np.zeros((4, 0, channels), np.uint8)
    assert np.asarray(ndd.flip(ndd.as_tensor(empty, layout="HWC"))).shape == (4, 0, channels)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 6])
def test_reversing_the_items_of_rows_is_numpys_reversal_for_every_length(size):
    """flip's row reversal (3-byte pixels take a vector path, five at a time, with the row's
    ends done one by one; 1-, 2- and 4-byte items whole blocks of 32 bytes, the rest one by
    one): every length, for rows next to each other in one buffer."""
    from ndd._cpu.mirror import reverse_items

    rng = np.random.default_rng(size)
    for count in [*range(0, 70), 95, 96, 97, 500, 501]:
        x = rng.integers(0, 256, (3, count, size), np.uint8)
        out = np.full_like(x, 7)
        reverse_items(x, out)
        np.testing.assert_array_equal(out, x[:, ::-1])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.float64])
def test_flip_of_planar_images_reverses_each_row(dtype):
    x = np.random.default_rng(1).uniform(0, 200, (3, 7, 45)).astype(dtype)
    out = np.asarray(ndd.flip(ndd.tensor(x, layout="CHW"), horizontal=1, vertical=1))
    np.testing.assert_array_equal(out, x[:, ::-1, ::-1])
    out = np.asarray(ndd.flip(ndd.tensor(x, layout="CHW"), horizontal=1, vertical=0))
    np.testing.assert_array_equal(out, x[:, :, ::-1])


def test_flip_and_color_space_conversion_take_5d_data_without_a_layout_as_fdhwc():
    # As the reference: a sequence of volumes.
    volumes = np.random.default_rng(6).integers(0, 256, (2, 3, 4, 5, 3)).astype(np.uint8)
    flipped = ndd.flip(ndd.tensor(volumes), horizontal=1, depthwise=1)
    assert flipped.layout == "FDHWC"
    np.testing.assert_array_equal(np.asarray(flipped), volumes[:, ::-1, :, ::-1])
    converted = ndd.color_space_conversion(
        ndd.tensor(volumes), image_type=ndd.types.RGB, output_type=ndd.types.BGR
    )
    assert converted.layout == "FDHWC"
    np.testing.assert_array_equal(np.asarray(converted), volumes[..., ::-1])


def test_a_depth_crop_of_an_image_without_depth_is_ignored():
    # As in the reference: a third 'crop' value, or 'crop_d', on an HWC image.
    image = ndd.tensor(np.arange(10 * 12 * 3, dtype=np.uint8).reshape(10, 12, 3), layout="HWC")
    plain = np.asarray(ndd.crop(image, crop=[6, 7]))
    np.testing.assert_array_equal(np.asarray(ndd.crop(image, crop=[2, 6, 7])), plain)
    np.testing.assert_array_equal(np.asarray(ndd.crop(image, crop_d=2, crop_h=6, crop_w=7)), plain)
    normalized = ndd.crop_mirror_normalize(image, crop_d=2, crop_h=6, crop_w=7)
    assert np.asarray(normalized).shape == (3, 6, 7)


@pytest.mark.parametrize("layout", ["HWC", "CHW"])
def test_cmn_fill_values_per_input_channel_with_pad_output(layout):
    # The reference's values: the channel pad_output adds takes 0 outside the image too.
    x = ndd.tensor(np.full((2, 2, 3), 100, np.uint8), layout="HWC")
    out = ndd.crop_mirror_normalize(
        x,
        crop=[3, 3],
        out_of_bounds_policy="pad",
        fill_values=[1, 2, 3],
        pad_output=True,
        mean=[1, 1, 1],
        output_layout=layout,
    )
    hwc = np.asarray(out) if layout == "HWC" else np.moveaxis(np.asarray(out), 0, -1)
    assert hwc.shape == (3, 3, 4)
    np.testing.assert_array_equal(hwc[0, 0], [1, 2, 3, 0])
    np.testing.assert_array_equal(hwc[2, 2], [99, 99, 99, 0])
    # Without a per-channel mean or std the reference wants one per output channel.
    for fill in ([1, 2], [1, 2, 3]):
        with pytest.raises(ValueError, match="'fill_values' must have 1 value or one per output channel"):
            ndd.crop_mirror_normalize(
                x, crop=[3, 3], out_of_bounds_policy="pad", fill_values=fill, pad_output=True
            )


@pytest.mark.parametrize(
    "call",
    [
        lambda x, **kw: ndd.crop(x, crop=[2, 2], **kw),
        lambda x, **kw: ndd.crop_mirror_normalize(x, **kw),
    ],
    ids=["crop", "crop_mirror_normalize"],
)
@pytest.mark.parametrize("name", ["dtype", "output_dtype"])
def test_an_unsupported_output_type_names_the_argument_given(call, name):
    image = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")
    with pytest.raises(ValueError, match=f": '{name}' must be one of "):
        call(image, **{name: ndd.bool})
