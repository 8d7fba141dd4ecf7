"""ndd.display: image grids of Batches, and pictures of image Batches and Tensors in notebooks."""

import base64
import io

import numpy as np
import pytest
from PIL import Image

import ndd
from ndd.display import image_grid


def _ragged_images():
    rng = np.random.default_rng(0)
    return [rng.integers(0, 256, shape, dtype=np.uint8) for shape in [(4, 5, 3), (6, 3, 3), (2, 2, 3)]]


def test_grid_places_each_image_at_the_top_left_of_its_cell():
    images = _ragged_images()
    grid = np.asarray(image_grid(ndd.batch(images, layout="HWC"), columns=2, gap=1, background=7))
    assert grid.shape == (2 * 6 + 1, 2 * 5 + 1, 3)  # cells as large as the largest image
    for index, image in enumerate(images):
        top, left = (index // 2) * 7, (index % 2) * 6
        np.testing.assert_array_equal(grid[top : top + image.shape[0], left : left + image.shape[1]], image)
    assert (grid[6] == 7).all() and (grid[:, 5] == 7).all()  # the gaps
    assert (grid[7:, 6:] == 7).all()  # the fourth cell is empty


@pytest.mark.parametrize("layout", ["HWC", "CHW"])
def test_grid_undoes_a_normalisation(layout):
    pixels = np.random.default_rng(1).integers(0, 256, (2, 4, 6, 3)).astype(np.float64)
    mean, std = np.array([120.0, 110.0, 100.0]), np.array([60.0, 50.0, 40.0])
    normalized = ((pixels - mean) / std).astype(np.float32)
    if layout == "CHW":
        normalized = normalized.transpose(0, 3, 1, 2)
    grid = np.asarray(image_grid(ndd.batch(list(normalized), layout=layout), mean=mean, std=std, gap=0))
    np.testing.assert_array_equal(grid, np.concatenate(list(pixels), axis=1).astype(np.uint8))


def test_grid_scales_floats_in_0_1_and_draws_gray_in_grey():
    gray = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
    grid = np.asarray(image_grid(ndd.tensor(gray, layout="HW")))
    expected = np.rint(gray * 255).astype(np.uint8)
    for channel in range(3):
        np.testing.assert_array_equal(grid[:, :, channel], expected)


def test_grid_takes_arrays_with_a_sample_dimension_and_lists():
    images = np.zeros((3, 8, 8, 3), np.uint8)
    assert image_grid(images, columns=3, gap=0).size == (24, 8)
    assert image_grid(list(images), columns=1, gap=0).size == (8, 24)


def test_grid_rejects_what_is_not_an_image():
    with pytest.raises(ValueError, match="layout HWC, CHW or HW"):
        image_grid(ndd.batch([np.zeros((2, 3, 4, 5), np.uint8)], layout="DHWC"))
    with pytest.raises(ValueError, match="1, 3 or 4 channels"):
        image_grid(np.zeros((4, 4, 7), np.uint8), layout="HWC")


def _png(data):
    with Image.open(io.BytesIO(data)) as picture:
        return np.asarray(picture.convert("RGB"))


def test_an_image_batch_shows_as_its_grid_in_notebooks():
    images = ndd.batch(_ragged_images(), layout="HWC")
    np.testing.assert_array_equal(_png(images._repr_png_()), np.asarray(image_grid(images)))
    html = images._repr_html_()
    assert "Batch of 3 images" in html and "layout HWC" in html
    encoded = html.split("base64,")[1].split('"')[0]
    assert base64.b64decode(encoded) == images._repr_png_()


def test_an_image_tensor_shows_as_a_picture():
    image = ndd.tensor(_ragged_images()[0], layout="HWC")
    np.testing.assert_array_equal(_png(image._repr_png_()), _ragged_images()[0])
    assert "Tensor: (4, 5, 3)" in image._repr_html_()


@pytest.mark.parametrize(
    "data",
    [
        ndd.tensor(np.arange(5)),
        ndd.batch([np.zeros((2, 3, 4, 5), np.uint8)], layout="DHWC"),
        ndd.tensor(np.zeros((3, 3), np.int64)),
    ],
    ids=["1-D", "volume", "int64"],
)
def test_data_that_is_not_images_shows_as_text(data):
    assert data._repr_png_() is None and data._repr_html_() is None
