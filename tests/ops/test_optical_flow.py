"""optical_flow (ndd/_ops/optical_flow.py): the vectors recover motions made on a real
photograph (shifted crops and a smooth warp), with the reference's sign convention,
grids, hints and checks. The reference runs on optical-flow hardware only, so there
are no goldens: the truth is the motion the test makes."""

import pathlib
import re
import sys

import numpy as np
import pytest
from PIL import Image

import ndd

cv2 = pytest.importorskip("cv2")

PHOTO = pathlib.Path(ndd.__file__).parent / "_sample_data" / "photos" / "astronaut.jpg"
PRESETS = [0.0, 0.5, 1.0]


@pytest.fixture(scope="module")
def photo():
    return np.asarray(Image.open(PHOTO).convert("RGB"))


def _shifted_crops(photo, offsets, height=200, width=250, top=40, left=30):
    """Frames cut from the photo at (dy, dx) offsets: frame k at pixel p shows the
    photo at p + offsets[k], so frame k is frame k - 1 moved by their difference."""
    return np.stack(
        [photo[top + dy : top + dy + height, left + dx : left + dx + width] for dy, dx in offsets]
    )


def _flow(frames, **kwargs):
    return np.asarray(ndd.optical_flow(ndd.tensor(frames, layout="FHWC"), **kwargs))


def _errors(field, dx, dy):
    return np.hypot(field[..., 0] - dx, field[..., 1] - dy)


def _block_means(dense, grid):
    """Mean of each grid x grid block of a dense field, partial blocks at the far edges."""
    height, width = dense.shape[:2]
    out = np.empty((-(-height // grid), -(-width // grid), 2), np.float64)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = dense[i * grid : (i + 1) * grid, j * grid : (j + 1) * grid].mean(axis=(0, 1))
    return out


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("grid", [1, 2, 4])
def test_a_shift_is_found_with_the_references_sign(photo, preset, grid):
    # Frame 1 shows at p what frame 0 shows at p + (dy, dx) = (3, 5): the vector at p
    # points there, x first.
    frames = _shifted_crops(photo, [(0, 0), (3, 5)])
    field = _flow(frames, preset=preset, output_grid=grid)
    assert field.shape == (1, 50 * 4 // grid, -(-250 // grid), 2) and field.dtype == np.float32
    errors = _errors(field[0], 5, 3)
    assert np.median(errors) < 0.3
    assert np.mean(errors < 1) > 0.8


def test_content_moving_right_points_left(photo):
    # The content moves right by 4 pixels: each pixel of frame 1 came from 4 to its left.
    frames = _shifted_crops(photo, [(0, 4), (0, 0)])
    field = _flow(frames)[0]
    assert np.median(field[..., 0]) == pytest.approx(-4, abs=0.1)
    assert np.median(field[..., 1]) == pytest.approx(0, abs=0.1)


def _vortex(height, width, strength=6.0):
    """A smooth swirl, zero at the centre and fading towards the borders: (dx, dy) per pixel."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    cy, cx = (height - 1) / 2, (width - 1) / 2
    r = np.hypot(x - cx, y - cy) / np.hypot(cx, cy)
    magnitude = strength * np.sin(np.pi * np.clip(r * 1.4, 0, 1)) ** 2
    angle = np.arctan2(y - cy, x - cx)
    return -np.sin(angle) * magnitude, np.cos(angle) * magnitude


# Per preset: the largest mean error, and fractions of vectors more than 1 and 2 pixels
# off (the reference's own test asks its best preset for 1 pixel, 10% and 5%).
WARP_LIMITS = {0.0: (0.3, 0.05, 0.02), 0.5: (0.6, 0.15, 0.02), 1.0: (0.8, 0.3, 0.06)}


def _warp_errors(photo, preset):
    # Frame 1 at p samples frame 0 at p + (dx, dy): the field to find is (dx, dy).
    frame0 = np.ascontiguousarray(photo[100:340, 120:440])
    dx, dy = _vortex(*frame0.shape[:2])
    y, x = np.mgrid[0 : frame0.shape[0], 0 : frame0.shape[1]].astype(np.float32)
    frame1 = cv2.remap(frame0, x + dx.astype(np.float32), y + dy.astype(np.float32), cv2.INTER_LINEAR)
    field = _flow(np.stack([frame0, frame1]), preset=preset)[0]
    truth = _block_means(np.dstack([dx, dy]), 4)
    return np.hypot(*(field - truth).transpose(2, 0, 1))


@pytest.mark.parametrize("preset", PRESETS)
def test_a_smooth_warp_is_followed_within_a_pixel(photo, preset):
    errors = _warp_errors(photo, preset)
    mean, over_1, over_2 = WARP_LIMITS[preset]
    assert np.mean(errors) < mean
    assert np.mean(errors > 1) < over_1
    assert np.mean(errors > 2) < over_2


def test_a_lower_preset_is_more_accurate(photo):
    means = [np.mean(_warp_errors(photo, preset)) for preset in PRESETS]
    assert means == sorted(means)


@pytest.mark.parametrize("size", [(37, 53), (40, 56), (21, 18)])
@pytest.mark.parametrize("grid", [2, 4])
def test_a_coarse_grid_holds_the_means_of_the_dense_fields_blocks(photo, size, grid):
    frames = _shifted_crops(photo, [(0, 0), (1, 2), (3, 1)], *size)
    dense = _flow(frames, output_grid=1)
    coarse = _flow(frames, output_grid=grid)
    assert coarse.shape == (2, -(-size[0] // grid), -(-size[1] // grid), 2)
    for pair in range(2):
        np.testing.assert_allclose(coarse[pair], _block_means(dense[pair], grid), rtol=1e-5, atol=1e-5)


def test_every_pair_of_a_sequence_has_its_field(photo):
    offsets = [(0, 0), (2, 3), (2, -1), (5, 0)]
    field = _flow(_shifted_crops(photo, offsets))
    assert field.shape[0] == 3
    for pair in range(3):
        dy = offsets[pair + 1][0] - offsets[pair][0]
        dx = offsets[pair + 1][1] - offsets[pair][1]
        assert np.median(_errors(field[pair], dx, dy)) < 0.3


def test_colour_orders_and_gray_frames_give_the_same_field(photo):
    frames = _shifted_crops(photo, [(0, 0), (2, 3)])
    rgb = _flow(frames)
    np.testing.assert_array_equal(_flow(frames[..., ::-1].copy(), image_type=ndd.types.BGR), rgb)
    alpha = np.concatenate([frames, np.full(frames.shape[:3] + (1,), 255, np.uint8)], axis=-1)
    np.testing.assert_array_equal(_flow(alpha), rgb)
    gray = np.stack([cv2.cvtColor(np.ascontiguousarray(f), cv2.COLOR_RGB2GRAY) for f in frames])[..., None]
    np.testing.assert_array_equal(_flow(gray, image_type=ndd.types.GRAY), rgb)


def _large_motion(photo):
    # The second pair moves by 60 x 40 pixels, further than DIS finds alone.
    offsets = [(0, 0), (35, 55), (75, 115)]
    return _shifted_crops(photo, offsets, 200, 250), (60, 40)


def test_external_hints_lead_to_a_large_motion(photo):
    frames, (dx, dy) = _large_motion(photo)
    assert np.median(_errors(_flow(frames)[1], dx, dy)) > 10
    grid = 8
    field = np.zeros((2, 25, 32, 2), np.float32)
    field[..., 0], field[..., 1] = dx + 2, dy - 2  # a rough guess
    hinted = np.asarray(
        ndd.optical_flow(
            ndd.tensor(frames, layout="FHWC"), ndd.tensor(field), enable_external_hints=True, hint_grid=grid
        )
    )
    assert np.median(_errors(hinted[1], dx, dy)) < 0.3
    # One field of hints serves every pair.
    one = np.asarray(
        ndd.optical_flow(
            ndd.tensor(frames, layout="FHWC"),
            ndd.tensor(field[0]),
            enable_external_hints=True,
            hint_grid=grid,
        )
    )
    np.testing.assert_array_equal(one, hinted)


def test_temporal_hints_carry_a_motion_from_pair_to_pair(photo):
    frames, (dx, dy) = _large_motion(photo)
    assert np.median(_errors(_flow(frames, enable_temporal_hints=True)[1], dx, dy)) < 0.3


def test_a_second_input_without_external_hints_is_ignored(photo):
    frames = _shifted_crops(photo, [(0, 0), (2, 3)])
    hints = np.full((1, 50, 63, 2), 30, np.float32)
    with_input = ndd.optical_flow(ndd.tensor(frames, layout="FHWC"), ndd.tensor(hints))
    np.testing.assert_array_equal(np.asarray(with_input), _flow(frames))


def test_a_batch_of_sequences_of_different_sizes(photo):
    a = _shifted_crops(photo, [(0, 0), (2, 3), (4, 6)])
    b = _shifted_crops(photo, [(0, 0), (1, 1)], 64, 48)
    out = ndd.optical_flow(ndd.batch([a, b], layout="FHWC"), output_grid=2)
    assert [tuple(s.shape) for s in out] == [(2, 100, 125, 2), (1, 32, 24, 2)]
    for sample, frames in zip(out, [a, b], strict=True):
        np.testing.assert_array_equal(np.asarray(sample), _flow(frames, output_grid=2))


@pytest.mark.parametrize("size", [(2, 3), (1, 40), (40, 5), (15, 15)])
def test_frames_smaller_than_dis_patches_get_a_field(photo, size):
    frames = _shifted_crops(photo, [(0, 0), (0, 1)], *size)
    field = _flow(frames, output_grid=1)
    assert field.shape == (1, *size, 2)
    assert np.all(np.isfinite(field))


def test_empty_frames_give_an_empty_field():
    field = _flow(np.zeros((3, 0, 7, 3), np.uint8), output_grid=2)
    assert field.shape == (2, 0, 4, 2)


def test_the_deprecated_output_format_sets_the_grid(photo):
    frames = _shifted_crops(photo, [(0, 0), (2, 3)])
    np.testing.assert_array_equal(_flow(frames, output_format=2), _flow(frames, output_grid=2))


@pytest.mark.parametrize(
    "frames, kwargs, message",
    [
        (np.zeros((2, 32, 32, 3), np.uint8), {"output_grid": 3}, r"'output_grid' must be 1, 2 or 4, got 3"),
        (np.zeros((2, 32, 32, 3), np.uint8), {"hint_grid": 16}, r"'hint_grid' must be 1, 2, 4 or 8, got 16"),
        (
            np.zeros((2, 32, 32, 3), np.uint8),
            {"preset": 1.5},
            r"'preset' must be between 0.0 and 1.0, got 1.5",
        ),
        (np.zeros((2, 32, 32, 3), np.uint8), {"preset": -0.1}, r"'preset' must be between"),
        (
            np.zeros((2, 32, 32, 3), np.uint8),
            {"image_type": ndd.types.GRAY},
            r"'image_type' GRAY takes 1 channel, got 3",
        ),
        (np.zeros((2, 32, 32, 1), np.uint8), {}, r"'image_type' RGB takes 3 or 4 channels, got 1"),
        (
            np.zeros((2, 32, 32, 3), np.uint8),
            {"image_type": ndd.types.YCbCr},
            r"'image_type' must be RGB, BGR or GRAY, got YCbCr",
        ),
        (np.zeros((2, 32, 32, 3), np.float32), {}, r"the frames must be uint8, got f32"),
        (
            np.zeros((1, 32, 32, 3), np.uint8),
            {},
            r"every sequence needs at least 2 frames, got a one-frame sequence",
        ),
        (
            np.zeros((0, 32, 32, 3), np.uint8),
            {},
            r"every sequence needs at least 2 frames, got an empty sequence",
        ),
        (
            np.zeros((2, 32, 32, 3), np.uint8),
            {"enable_external_hints": True},
            r"'enable_external_hints' needs the hints as the second input \(input_1\)",
        ),
        (
            np.zeros((2, 32, 32, 3), np.uint8),
            {"output_format": 2, "output_grid": 4},
            r"'output_format' is a deprecated alias of 'output_grid'",
        ),
        (np.zeros((2, 32, 32, 3), np.uint8), {"output_format": 2.0}, r"'output_format' must be an int"),
    ],
)
def test_bad_arguments_are_refused_by_name(frames, kwargs, message):
    with pytest.raises((ValueError, TypeError), match=r"ndd\.optical_flow: " + message):
        ndd.optical_flow(ndd.tensor(frames, layout="FHWC"), **kwargs).evaluate()


def test_data_that_is_not_sequences_of_frames_is_refused():
    with pytest.raises(
        ValueError, match=r"ndd\.optical_flow: the input must be sequences of frames \(FHWC\)"
    ):
        ndd.optical_flow(ndd.tensor(np.zeros((32, 32, 3), np.uint8), layout="HWC"))
    with pytest.raises(ValueError, match=r"got 4-D data with layout 'DHWC'"):
        ndd.optical_flow(ndd.tensor(np.zeros((2, 32, 32, 3), np.uint8), layout="DHWC"))


@pytest.mark.parametrize("shape", [(1, 4, 8, 2), (2, 8, 8, 2), (8, 8, 3), (8, 8)])
def test_hints_of_the_wrong_shape_are_refused(shape):
    frames = ndd.tensor(np.zeros((2, 32, 32, 3), np.uint8), layout="FHWC")
    hints = ndd.tensor(np.zeros(shape, np.float32))
    expected = r"must have shape \(1, 8, 8, 2\) \(or \(8, 8, 2\) for every pair\), got " + re.escape(
        str(shape)
    )
    with pytest.raises(
        ValueError,
        match=r"ndd\.optical_flow: the hints \(input_1\) of 2 frames of 32x32 at "
        r"'hint_grid' 4 " + expected,
    ):
        ndd.optical_flow(frames, hints, enable_external_hints=True, hint_grid=4).evaluate()


def test_hints_must_be_float():
    frames = ndd.tensor(np.zeros((2, 32, 32, 3), np.uint8), layout="FHWC")
    with pytest.raises(TypeError, match=r"ndd\.optical_flow: the hints \(input_1\) must be float, got i32"):
        ndd.optical_flow(frames, ndd.tensor(np.zeros((1, 8, 8, 2), np.int32)), enable_external_hints=True)


def test_without_opencv_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cv2", None)
    with pytest.raises(ImportError, match=r"ndd\.optical_flow needs OpenCV.*pip install 'ndd\[opencv\]'"):
        ndd.optical_flow(ndd.tensor(np.zeros((2, 32, 32, 3), np.uint8), layout="FHWC"))


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e300])
def test_hints_that_are_not_finite_float32_are_refused(value):
    # OpenCV's DIS crashes the process on them; 1e300 is infinite as float32.
    frames = ndd.tensor(np.zeros((3, 32, 32, 3), np.uint8), layout="FHWC")
    hints = np.zeros((2, 8, 8, 2))
    hints[1, 3, 4, 0] = value
    with pytest.raises(
        ValueError, match=r"ndd\.optical_flow: the hints \(input_1\) must be finite float32 values"
    ):
        ndd.optical_flow(frames, ndd.tensor(hints), enable_external_hints=True).evaluate()


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("size", [(16, 200), (31, 300), (9, 40), (300, 20), (12, 100)])
def test_short_wide_and_tall_narrow_frames_get_a_field(photo, preset, size):
    # OpenCV's DIS crashes the process on frames lower than a patch at its finest scale
    # (16 rows at the best preset, 32 at the others): they are extended first.
    height, width = size
    frames = np.stack(
        [photo[100 : 100 + height, 50 : 50 + width], photo[100 : 100 + height, 52 : 52 + width]]
    )
    field = _flow(frames, preset=preset, output_grid=1)
    assert field.shape == (1, height, width, 2) and np.all(np.isfinite(field))
    assert np.median(field[..., 0]) == pytest.approx(2, abs=0.5)
