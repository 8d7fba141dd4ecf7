"""NaN and infinities in float arguments: refused at the call, naming the operator and
the argument, except where they are values to write (fill values, lookup values). And
fractional numbers for integer arguments, which the reference truncates or rounds
depending on their Python type."""

import numpy as np
import pytest

import ndd

NAN, INF = float("nan"), float("inf")
_IMAGE = np.zeros((6, 8, 3), np.uint8)


def _image():
    return ndd.tensor(_IMAGE, layout="HWC")


@pytest.mark.parametrize(
    "call, qualname, argument",
    [
        (lambda: ndd.resize(_image(), size=[NAN, 8]), "ndd.resize", "size"),
        (lambda: ndd.resize(_image(), resize_x=INF), "ndd.resize", "resize_x"),
        (lambda: ndd.crop(_image(), crop=(INF, 4)), "ndd.crop", "crop"),
        (lambda: ndd.rotate(_image(), angle=NAN), "ndd.rotate", "angle"),
        (lambda: ndd.gaussian_blur(_image(), sigma=INF), "ndd.gaussian_blur", "sigma"),
        (lambda: ndd.slice(_image(), rel_start=[NAN, 0], rel_end=[1, 1]), "ndd.slice", "rel_start"),
        (lambda: ndd.tensor_resize(_image(), scales=[NAN, 1, 1]), "ndd.tensor_resize", "scales"),
        (lambda: ndd.clahe(_image(), tiles_x=2, tiles_y=2, clip_limit=INF), "ndd.clahe", "clip_limit"),
        (lambda: ndd.noise.shot(_image(), factor=NAN), "ndd.noise.shot", "factor"),
        (lambda: ndd.hue(_image(), hue=INF), "ndd.hue", "hue"),
        (lambda: ndd.brightness(_image(), brightness=NAN), "ndd.brightness", "brightness"),
        (lambda: ndd.transforms.rotation(angle=INF), "ndd.transforms.rotation", "angle"),
        # A per-sample value, from a Batch.
        (
            lambda: ndd.rotate(ndd.batch([_IMAGE] * 2, layout="HWC"), angle=ndd.batch(np.float32([1, NAN]))),
            "ndd.rotate",
            "angle",
        ),
    ],
)
def test_a_non_finite_float_argument_is_refused_at_the_call(call, qualname, argument):
    with pytest.raises(ValueError, match=rf"^{qualname}: '{argument}' must be (a |a list of )?finite"):
        call()


def test_fill_values_may_be_nan_or_infinite():
    x = np.ones((2, 2), np.float32)
    padded = np.asarray(ndd.pad(ndd.tensor(x), shape=[3, 3], fill_value=NAN))
    assert np.isnan(padded[2]).all() and np.isnan(padded[:, 2]).all() and (padded[:2, :2] == 1).all()
    cropped = np.asarray(
        ndd.crop(ndd.tensor(x, layout="HW"), crop=(3, 3), out_of_bounds_policy="pad", fill_values=[INF])
    )
    assert np.isinf(cropped).sum() == 5 and (cropped[np.isfinite(cropped)] == 1).all()


@pytest.mark.parametrize("value", [1.5, np.float32(50.5), np.float64(0.25)])
def test_a_fractional_number_for_an_integer_argument_is_refused_at_the_call(value):
    with pytest.raises(ValueError, match="ndd.jpeg_compression_distortion: 'quality' must be an integer"):
        ndd.jpeg_compression_distortion(_image(), quality=value)


def test_a_whole_float_for_an_integer_argument_is_that_integer():
    image = np.random.default_rng(0).integers(0, 256, (16, 16, 3), dtype=np.uint8)
    whole = ndd.jpeg_compression_distortion(ndd.tensor(image, layout="HWC"), quality=np.float32(40.0))
    exact = ndd.jpeg_compression_distortion(ndd.tensor(image, layout="HWC"), quality=40)
    np.testing.assert_array_equal(np.asarray(whole), np.asarray(exact))
    assert not np.array_equal(np.asarray(exact), image)


@pytest.mark.parametrize("wrap", [np.asarray, ndd.as_tensor], ids=["array", "tensor"])
def test_several_values_for_an_integer_argument_are_refused_naming_it(wrap):
    boxes = np.array([[0.1, 0.2, 0.5, 0.6]], np.float32)
    with pytest.raises(ValueError, match=r"ndd.bb_flip: 'horizontal' must be an integer, got array of int64"):
        ndd.bb_flip(boxes, horizontal=wrap(np.array([0, 1], np.int64)))
    np.testing.assert_allclose(
        np.asarray(ndd.bb_flip(boxes, horizontal=wrap(np.array([1])))), [[0.4, 0.2, 0.5, 0.6]]
    )
