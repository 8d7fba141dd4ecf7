"""Image operators given data without a layout read it as HWC (3-D) or FHWC (4-D; crop: DHWC)
and label their output so, as the reference does (checked by running it: its
resize, rotate, warp_affine, warp_perspective, water, sphere, resize_crop_mirror,
jpeg_compression_distortion and clahe give HWC / FHWC here, like flip and crop)."""

import numpy as np
import pytest

import ndd

_CALLS = {
    "flip": lambda x: ndd.flip(x, horizontal=1),
    "resize": lambda x: ndd.resize(x, size=(4, 5)),
    "resize_crop_mirror": lambda x: ndd.resize_crop_mirror(x, size=(6, 6), crop=(4, 4)),
    "rotate": lambda x: ndd.rotate(x, angle=30),
    "warp_affine": lambda x: ndd.warp_affine(x, matrix=[1, 0, 0, 0, 1, 0]),
    "warp_perspective": lambda x: ndd.experimental.warp_perspective(x, matrix=[1, 0, 0, 0, 1, 0, 0, 0, 1]),
    "jpeg_compression_distortion": lambda x: ndd.jpeg_compression_distortion(x, quality=50),
    "brightness": lambda x: ndd.brightness(x, brightness=1.5),
}
_IMAGE_ONLY = {
    "crop": lambda x: ndd.crop(x, crop=(4, 4)),
    "water": lambda x: ndd.water(x),
    "sphere": lambda x: ndd.sphere(x),
    "random_resized_crop": lambda x: ndd.random_resized_crop(x, size=(3, 3)),
    "paste": lambda x: ndd.paste(x, ratio=2.0, fill_value=0),
    "clahe": lambda x: ndd.clahe(x, tiles_x=2, tiles_y=2, clip_limit=2.0),
}


@pytest.mark.parametrize("name", sorted({**_CALLS, **_IMAGE_ONLY}))
def test_an_image_without_a_layout_comes_out_as_hwc(name):
    x = ndd.tensor(np.random.default_rng(0).integers(0, 255, (8, 10, 3), dtype=np.uint8))
    assert x.layout is None
    assert {**_CALLS, **_IMAGE_ONLY}[name](x).layout == "HWC"


@pytest.mark.parametrize("name", sorted(_CALLS))
def test_a_sequence_without_a_layout_comes_out_as_fhwc(name):
    x = ndd.tensor(np.random.default_rng(0).integers(0, 255, (2, 8, 10, 3), dtype=np.uint8))
    assert _CALLS[name](x).layout == "FHWC"


def test_crop_reads_4d_data_without_a_layout_as_a_volume():
    # As the reference: DHWC where the others read FHWC; a third crop extent cuts the depth.
    x = ndd.tensor(np.arange(2 * 8 * 10 * 3, dtype=np.int32).reshape(2, 8, 10, 3))
    out = ndd.crop(x, crop=(1, 4, 4), crop_pos_z=0.0, crop_pos_y=0.0, crop_pos_x=0.0)
    assert out.layout == "DHWC"
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x)[:1, :4, :4])


@pytest.mark.parametrize("name", sorted(_CALLS))
def test_a_planar_layout_given_is_kept(name):
    if name in ("jpeg_compression_distortion", "brightness", "water", "sphere", "rotate", "warp_affine"):
        pytest.skip("interleaved channels only")
    x = ndd.tensor(np.zeros((3, 8, 10), np.uint8), layout="CHW")
    assert _CALLS[name](x).layout == "CHW"
