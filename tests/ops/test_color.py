"""Colour operators (ndd/_ops/color.py) against the reference goldens
(tests/golden/make_color_goldens.py) and independent numpy formulas."""

import pathlib
import sys
import warnings

import numpy as np
import pytest
from color_goldens import case_id, load, replay
from PIL import Image

import ndd
from ndd._ops import color as color_ops

CASES, ARRAYS = load("color")


def _assert_close(out, expected):
    assert out.dtype == expected.dtype and out.shape == expected.shape
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    else:
        # float32 sums may land on the other side of a rounding half.
        diff = np.abs(out.astype(np.int64) - expected.astype(np.int64))
        assert diff.max(initial=0) <= 1, f"max diff {diff.max()}"
        assert np.count_nonzero(diff) <= max(2, diff.size // 50)


@pytest.mark.parametrize(
    "case",
    [
        c
        for c in CASES
        if c["op"]
        not in ("color_space_conversion", "equalize", "jpeg_compression_distortion", "clahe", "debayer")
    ],
    ids=case_id,
)
def test_value_operators_match_reference(case):
    outs, expected = replay(case, ARRAYS)
    for out, exp in zip(outs, expected, strict=True):
        _assert_close(out, exp)


@pytest.mark.parametrize("case", [c for c in CASES if c["op"] == "color_space_conversion"], ids=case_id)
def test_color_space_conversion_matches_reference(case):
    outs, expected = replay(case, ARRAYS)
    for out, exp in zip(outs, expected, strict=True):
        _assert_close(out, exp)


def _is_vng(case):
    return case["op"] == "debayer" and case["kwargs"].get("algorithm") == "vng_ocv"


@pytest.mark.parametrize(
    "case",
    [
        c
        for c in CASES
        if c["op"] in ("equalize", "jpeg_compression_distortion", "debayer") and not _is_vng(c)
    ],
    ids=case_id,
)
def test_integer_algorithms_match_reference_exactly(case):
    outs, expected = replay(case, ARRAYS)
    for out, exp in zip(outs, expected, strict=True):
        np.testing.assert_array_equal(out, exp)


@pytest.mark.parametrize("case", [c for c in CASES if _is_vng(c)], ids=case_id)
def test_debayer_vng_matches_reference_exactly(case):
    # The reference runs OpenCV's VNG, and so does ndd (the optional 'opencv' extra).
    pytest.importorskip("cv2", minversion="5")
    outs, expected = replay(case, ARRAYS)
    for out, exp in zip(outs, expected, strict=True):
        np.testing.assert_array_equal(out, exp)


def test_debayer_vng_refuses_opencv_4(monkeypatch):
    # OpenCV 4's VNG gives other colours (the 4.11 wheel: 471 of 504 values of a golden case).
    cv2 = pytest.importorskip("cv2")
    monkeypatch.setattr(cv2, "__version__", "4.11.0")
    bayer = ndd.tensor(np.zeros((4, 6), np.uint8), layout="HW")
    with pytest.raises(
        ImportError,
        match=r"ndd\.debayer: 'algorithm' 'vng_ocv' needs OpenCV .* 5 or newer, not 4\.11\.0: "
        r"pip install -U 'ndd\[opencv\]'",
    ):
        ndd.debayer(bayer, blue_position=[0, 0], algorithm="vng_ocv")


def test_debayer_vng_without_opencv_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cv2", None)
    bayer = ndd.tensor(np.zeros((4, 6), np.uint8), layout="HW")
    with pytest.raises(
        ImportError, match=r"ndd\.debayer: 'algorithm' 'vng_ocv'.*pip install 'ndd\[opencv\]'"
    ):
        ndd.debayer(bayer, blue_position=[0, 0], algorithm="vng_ocv")
    # The other algorithms never need OpenCV.
    assert np.asarray(ndd.debayer(bayer, blue_position=[0, 0], algorithm="edgeaware_ocv")).shape == (4, 6, 3)


@pytest.mark.parametrize(
    "bayer, message",
    [
        (np.zeros((4, 6), np.uint16), "takes uint8 input only"),
        (np.zeros((5, 6), np.uint8), "needs an even height and width, got 5x6"),
        (np.zeros((4, 7), np.uint8), "needs an even height and width, got 4x7"),
    ],
)
def test_debayer_vng_rejects_what_the_reference_rejects(bayer, message):
    pytest.importorskip("cv2", minversion="5")
    with pytest.raises(ValueError, match=f"ndd.debayer: 'algorithm' 'vng_ocv' {message}"):
        np.asarray(ndd.debayer(ndd.tensor(bayer, layout="HW"), blue_position=[1, 1], algorithm="vng_ocv"))


def test_rgb_to_8_bit_lab_is_opencvs_for_every_colour():
    # CLAHE of colour images goes through 8-bit Lab in OpenCV's fixed point; its tables
    # are built so that no processor's float32 cube root changes them.
    cv2 = pytest.importorskip("cv2")
    levels = np.arange(256, dtype=np.uint8)
    rgb = np.stack(np.meshgrid(levels, levels, levels, indexing="ij"), -1).reshape(-1, 3)
    expected = cv2.cvtColor(rgb.reshape(4096, 4096, 3), cv2.COLOR_RGB2Lab).reshape(-1, 3)
    lightness, chroma = color_ops._rgb_to_lab_planes(rgb)
    np.testing.assert_array_equal(lightness, expected[:, 0])
    np.testing.assert_array_equal(chroma, expected[:, 1:])


@pytest.mark.parametrize("case", [c for c in CASES if c["op"] == "clahe"], ids=case_id)
def test_clahe_matches_reference_exactly(case):
    # RGB with luma_only goes to 8-bit Lab and back in OpenCV's fixed point, as the reference does.
    outs, expected = replay(case, ARRAYS)
    for out, exp in zip(outs, expected, strict=True):
        np.testing.assert_array_equal(out, exp)


def test_clahe_without_clipping_on_one_tile_is_equalization_of_the_cdf():
    x = np.repeat(np.arange(0, 200, 20, dtype=np.uint8), 10).reshape(10, 10, 1)
    out = np.asarray(ndd.clahe(ndd.tensor(x, layout="HWC"), tiles_x=1, tiles_y=1, clip_limit=1000.0))
    # One tile: every pixel takes round(255 * cdf / area) of its value.
    expected = np.rint(np.arange(10, 110, 10, dtype=np.float32) * (np.float32(255) / np.float32(100)))
    np.testing.assert_array_equal(np.unique(out), expected.astype(np.uint8))


@pytest.mark.parametrize("pixels", [1, 7, 8, 9, 10, 11, 17, 64 * 64 + 5])
def test_clahe_lab_conversions_take_every_pixel_alike(pixels):
    # The Lab kernels run 8 pixels a step (AVX2) and the rest one by one: each pixel on its own
    # (a 1-pixel call never takes the vector path) must give what it gives among the others.
    from ndd._ops.color import _lab_planes_to_rgb, _rgb_to_lab_planes

    rng = np.random.default_rng(pixels)
    rgb = rng.integers(0, 256, (pixels, 3), dtype=np.uint8)
    lightness, chroma = _rgb_to_lab_planes(rgb)
    alone = [_rgb_to_lab_planes(rgb[p : p + 1]) for p in range(pixels)]
    np.testing.assert_array_equal(lightness, np.concatenate([a[0] for a in alone]))
    np.testing.assert_array_equal(chroma, np.concatenate([a[1] for a in alone]))
    lab = rng.integers(0, 256, (pixels, 3), dtype=np.uint8)
    back = _lab_planes_to_rgb(lab[:, 0].copy(), lab[:, 1:].copy())
    alone = [_lab_planes_to_rgb(lab[p : p + 1, 0].copy(), lab[p : p + 1, 1:].copy()) for p in range(pixels)]
    np.testing.assert_array_equal(back, np.concatenate(alone))


@pytest.mark.parametrize("clip_limit", [0.0, 0.5, 3.0])
def test_clahe_tables_clip_and_redistribute_as_opencv(clip_limit):
    # One tile of 16 x 16 = 256 pixels, so the clip limit is max(int(clip_limit), 1) counts; the
    # expected table follows the rule in ndd/_ops/color.py with plain numpy.
    x = np.random.default_rng(1).integers(100, 110, (16, 16, 1), dtype=np.uint8)
    out = np.asarray(ndd.clahe(ndd.tensor(x, layout="HWC"), tiles_x=1, tiles_y=1, clip_limit=clip_limit))
    hist = np.bincount(x.reshape(-1), minlength=256)
    if clip_limit > 0:
        limit = max(int(clip_limit), 1)
        excess = int(np.maximum(hist - limit, 0).sum())
        hist = np.minimum(hist, limit) + excess // 256
        step = 256 // max(excess % 256, 1)
        bins = np.arange(256)
        hist += (bins % step == 0) & (bins // step < excess % 256)
    table = np.rint(np.cumsum(hist).astype(np.float32) * (np.float32(255) / np.float32(256)))
    np.testing.assert_array_equal(out, table.astype(np.uint8)[x])


@pytest.mark.parametrize("shape", [(8, 0, 1), (0, 5, 3), (0, 0, 1)])
def test_clahe_of_an_empty_image_is_empty_without_warnings(shape):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = ndd.clahe(
            ndd.tensor(np.zeros(shape, np.uint8), layout="HWC"), tiles_x=3, tiles_y=3, clip_limit=2.0
        )
        assert np.asarray(out).shape == shape


@pytest.mark.parametrize("width", [1, 3, 7, 8, 9, 10, 17])
def test_jpeg_compression_distortion_is_pillows_round_trip_for_every_width(width):
    # Widths around the 8-pixel steps of the RGB -> RGBX kernel that hands the image to Pillow,
    # and a sequence (decoded frame by frame into one array); expected: Pillow encoding and decoding.
    import io

    from PIL import Image

    video = np.random.default_rng(width).integers(0, 256, (2, 5, width, 3), dtype=np.uint8)
    expected = []
    for frame in video:
        encoded = io.BytesIO()
        Image.fromarray(frame).save(encoded, format="JPEG", quality=40, subsampling=2)
        with Image.open(encoded) as decoded:
            expected.append(np.asarray(decoded.convert("RGB")))
    out = ndd.jpeg_compression_distortion(ndd.tensor(video, layout="FHWC"), quality=40)
    np.testing.assert_array_equal(np.asarray(out), np.stack(expected))


@pytest.mark.parametrize("algorithm", ["bilinear_ocv", "edgeaware_ocv", "gray_ocv"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_debayer_compiled_demosaicing_is_the_integer_formulas(algorithm, dtype):
    """The compiled pass gives the numpy formulas of ndd/_ops/debayer.py (OpenCV's arithmetic) at every
    pattern, odd and even sizes (uint8 rows 16 pixels at a time with AVX2, and their tails), the whole range of
    the type (uint16 gray sums pass 2**31)."""
    from ndd._ops.debayer import _demosaic

    rng = np.random.default_rng(7)
    top = np.iinfo(dtype).max
    for height, width in [(3, 3), (5, 8), (8, 7), (33, 50), (4, 70), (6, 129)]:
        bayer = rng.integers(0, top, (height, width), dtype=dtype, endpoint=True)
        bayer[: height // 2, : width // 2] = top  # saturated corner
        for position in [(0, 0), (0, 1), (1, 0), (1, 1)]:
            out = np.asarray(
                ndd.debayer(ndd.tensor(bayer, layout="HW"), blue_position=list(position), algorithm=algorithm)
            )
            expected = _demosaic(bayer, *position, algorithm).astype(dtype)
            np.testing.assert_array_equal(out, expected, strict=True)
    frames = rng.integers(0, top, (3, 6, 9, 1), dtype=dtype, endpoint=True)
    out = np.asarray(
        ndd.debayer(ndd.tensor(frames, layout="FHWC"), blue_position=[1, 0], algorithm=algorithm)
    )
    for frame, got in zip(frames, out, strict=True):
        np.testing.assert_array_equal(
            got, _demosaic(frame[:, :, 0], 1, 0, algorithm).astype(dtype), strict=True
        )


def test_debayer_bilinear_interior_is_the_mean_of_the_neighbours():
    rng = np.random.default_rng(5)
    bayer = rng.integers(0, 256, (6, 8), dtype=np.uint8)
    out = np.asarray(ndd.debayer(ndd.tensor(bayer, layout="HW"), blue_position=[1, 1]))
    b = bayer.astype(int)
    # RGGB names the tile from the second row and column: (1, 1) red, (2, 2) blue, (2, 3) green on a blue row.
    assert out[2, 2, 2] == b[2, 2] and out[3, 3, 0] == b[3, 3]
    assert out[2, 2, 1] == (b[1, 2] + b[3, 2] + b[2, 1] + b[2, 3] + 2) >> 2
    assert out[2, 2, 0] == (b[1, 1] + b[1, 3] + b[3, 1] + b[3, 3] + 2) >> 2
    assert out[2, 3, 2] == (b[2, 2] + b[2, 4] + 1) >> 1 and out[2, 3, 0] == (b[1, 3] + b[3, 3] + 1) >> 1
    np.testing.assert_array_equal(out[0], out[1])
    np.testing.assert_array_equal(out[:, -1], out[:, -2])


@pytest.mark.parametrize("shape, layout", [((5, 6), "HW"), ((5, 6, 1), "HWC"), ((5, 6, 3), "HWC")])
def test_equalize_gives_data_without_a_layout_the_one_it_reads_it_as(shape, layout):
    out = ndd.equalize(ndd.tensor(np.arange(np.prod(shape), dtype=np.uint8).reshape(shape)))
    assert out.layout == layout


def test_equalize_spreads_a_narrow_histogram_over_the_full_range():
    x = np.repeat(np.arange(100, 110, dtype=np.uint8), 10).reshape(10, 10)
    out = np.asarray(ndd.equalize(ndd.tensor(x, layout="HW")))
    # Ten equally frequent values: cdf steps of 10 over 100 pixels.
    np.testing.assert_array_equal(
        np.unique(out),
        np.rint(np.arange(0, 100, 10, dtype=np.float32) * (np.float32(255) / np.float32(90))).astype(
            np.uint8
        ),
    )


def _equalize_plane(plane):
    # OpenCV's equalizeHist: the first used value goes to 0, the others to
    # round(255 * (cdf - cdf[first]) / (pixels - cdf[first])) with a float32 scale.
    hist = np.bincount(plane.reshape(-1), minlength=256)
    first_count = hist[np.flatnonzero(hist)[0]]
    if first_count == plane.size:
        return plane
    scale = np.float32(255.0 / np.float64(np.float32(plane.size - first_count)))
    levels = np.rint((np.cumsum(hist) - first_count).astype(np.float32) * scale)
    return np.clip(levels, 0, 255).astype(np.uint8)[plane]


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
@pytest.mark.parametrize("width", [1, 2, 5, 8])
def test_equalize_is_opencvs_per_channel_for_any_channel_count(channels, width):
    # Three channels take the kernel's two-bank histogram (pixel pairs, then an odd one left over).
    x = np.random.default_rng(width).integers(40, 90, (3, width, channels), dtype=np.uint8)
    out = np.asarray(ndd.equalize(ndd.tensor(x, layout="HWC")))
    expected = np.stack([_equalize_plane(x[..., c]) for c in range(channels)], axis=-1)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("layout, shape", [("CHW", (3, 5, 7)), ("CHW", (2, 4, 4)), ("FCHW", (2, 3, 3, 5))])
def test_equalize_of_planar_data_is_opencvs_per_plane(layout, shape):
    # Planes are equalized where they lie (one channel each, a four-bank histogram).
    x = np.random.default_rng(len(shape)).integers(40, 90, shape, dtype=np.uint8)
    out = np.asarray(ndd.equalize(ndd.tensor(x, layout=layout)))
    planes = x.reshape(-1, shape[-2], shape[-1])
    expected = np.stack([_equalize_plane(plane) for plane in planes]).reshape(shape)
    np.testing.assert_array_equal(out, expected)


def test_brightness_contrast_formula_uint8():
    x = np.arange(256, dtype=np.uint8).reshape(16, 16, 1)
    out = ndd.brightness_contrast(
        ndd.tensor(x, layout="HWC"), brightness=1.2, brightness_shift=0.1, contrast=0.5
    )
    expected = 0.1 * 255 + 1.2 * (128 + 0.5 * (x.astype(np.float64) - 128))
    np.testing.assert_array_equal(np.asarray(out), np.clip(np.floor(expected + 0.5), 0, 255).astype(np.uint8))


@pytest.mark.parametrize("pixels", [1, 21, 22, 43, 100])
@pytest.mark.parametrize("dtype", [ndd.uint8, ndd.int16, ndd.float32])
def test_brightness_of_uint8_is_the_formula_for_every_length(pixels, dtype):
    # 3 * pixels bytes around the 64-byte steps of the uint8 table lookup (AVX-512 VBMI where the
    # processor has it), and the other result types' lookups.
    x = np.random.default_rng(pixels).integers(0, 256, (1, pixels, 3), dtype=np.uint8)
    out = np.asarray(ndd.brightness(ndd.tensor(x, layout="HWC"), brightness=0.7, dtype=dtype))
    values = x.astype(np.float32) * np.float32(0.7)
    if dtype is ndd.float32:
        np.testing.assert_array_equal(out, values)
    else:
        np.testing.assert_array_equal(out, np.floor(values + np.float32(0.5)).astype(out.dtype))


@pytest.mark.parametrize("pixels", [1, 7, 8, 9, 100])
def test_brightness_contrast_of_float32_is_the_float32_formula(pixels):
    # float32 to float32 in one pass: x * (brightness * contrast) + offset, each operation
    # rounded to float32, with offset = shift + brightness * (center - contrast * center).
    x = np.random.default_rng(pixels).normal(0.5, 2.0, (2, pixels, 3)).astype(np.float32)
    x[0, 0, 0] = -0.0
    out = np.asarray(
        ndd.brightness_contrast(
            ndd.tensor(x, layout="HWC"),
            brightness=1.3,
            brightness_shift=0.1,
            contrast=0.7,
            contrast_center=0.25,
        )
    )
    f32 = np.float32
    offset = f32(0.1) * f32(1.0) + f32(1.3) * (f32(0.25) - f32(0.7) * f32(0.25))
    np.testing.assert_array_equal(out, x * (f32(1.3) * f32(0.7)) + offset)


@pytest.mark.parametrize(
    "dtype, center", [(np.uint8, 128), (np.int16, 2**14), (np.int32, 2**30), (np.float32, 0.5)]
)
def test_zero_contrast_gives_half_of_the_input_range(dtype, center):
    x = np.zeros((2, 2, 3), dtype)
    out = np.asarray(ndd.contrast(ndd.tensor(x, layout="HWC"), contrast=0.0))
    assert out.dtype == dtype and np.all(out == center)


def test_brightness_shift_uses_the_output_range():
    x = np.zeros((1, 1, 3), np.float32)
    out = ndd.brightness(ndd.tensor(x, layout="HWC"), brightness_shift=0.5, dtype=ndd.uint8)
    np.testing.assert_array_equal(np.asarray(out), 128)
    out = ndd.brightness(
        ndd.tensor(x.astype(np.int16), layout="HWC"), brightness_shift=0.5, dtype=ndd.float32
    )
    np.testing.assert_array_equal(np.asarray(out), 0.5)


def test_integer_results_round_halves_away_from_zero():
    x = np.array([[[0.5, 1.5, 2.5], [-0.5, -1.5, -2.5]]], np.float32)
    out = ndd.brightness(ndd.tensor(x, layout="HWC"), dtype=ndd.int16)
    np.testing.assert_array_equal(np.asarray(out), [[[1, 2, 3], [-1, -2, -3]]])
    out = ndd.brightness(ndd.tensor(x * 300, layout="HWC"), dtype=ndd.uint8)
    np.testing.assert_array_equal(np.asarray(out), [[[150, 255, 255], [0, 0, 0]]])


def test_hue_of_grey_is_unchanged_and_full_turn_is_identity():
    grey = np.full((4, 4, 3), 77, np.uint8)
    np.testing.assert_array_equal(np.asarray(ndd.hue(ndd.tensor(grey, layout="HWC"), hue=123.0)), grey)
    rng = np.random.default_rng(0)
    x = rng.random((4, 5, 3), dtype=np.float32)
    out = ndd.hue(ndd.tensor(x, layout="HWC"), hue=360.0)
    np.testing.assert_allclose(np.asarray(out), x, atol=1e-5)


def test_zero_saturation_gives_luma():
    rng = np.random.default_rng(1)
    x = rng.random((4, 5, 3), dtype=np.float32)
    out = np.asarray(ndd.saturation(ndd.tensor(x, layout="HWC"), saturation=0.0))
    luma = x @ np.array([0.299, 0.587, 0.114], np.float32)
    # The matrix goes back through the exact inverse of the 3-decimal YIQ matrix.
    np.testing.assert_allclose(out, np.repeat(luma[..., None], 3, -1), atol=3e-3)


def test_hsv_defaults_to_uint8_output():
    x = np.linspace(0, 1, 36, dtype=np.float32).reshape(3, 4, 3)
    out = ndd.hsv(ndd.tensor(x, layout="HWC"))
    assert out.dtype == ndd.uint8
    np.testing.assert_array_equal(np.asarray(out), np.floor(x + 0.5).astype(np.uint8))


def test_color_space_conversion_gray_to_rgb_repeats_the_channel():
    g = np.arange(12, dtype=np.uint8).reshape(3, 4, 1)
    out = ndd.color_space_conversion(
        ndd.tensor(g, layout="HWC"), image_type=ndd.types.GRAY, output_type=ndd.types.RGB
    )
    assert out.shape == (3, 4, 3)
    np.testing.assert_array_equal(np.asarray(out), np.repeat(g, 3, -1))


def _gray_fixed_point(rgb):
    # The reference's luma (checked on 40,000 random pixels): BT.601 in 15-bit fixed point.
    r, g, b = (rgb[..., c].astype(np.int64) for c in range(3))
    return ((9798 * r + 19235 * g + 3735 * b + 16384) >> 15).astype(np.uint8)[..., None]


@pytest.mark.parametrize("source", ["RGB", "BGR"])
@pytest.mark.parametrize("width", [1, 2, 3, 7, 8, 9, 10, 11, 16, 17, 33])
def test_color_space_conversion_to_gray_is_the_fixed_point_luma_for_every_width(source, width):
    # Widths around the vectorized kernel's 8-pixel steps and its stop before the end.
    rgb = np.random.default_rng(width).integers(0, 256, (3, width, 3), dtype=np.uint8)
    image = rgb if source == "RGB" else rgb[..., ::-1].copy()
    out = ndd.color_space_conversion(
        ndd.tensor(image, layout="HWC"), image_type=getattr(ndd.types, source), output_type=ndd.types.GRAY
    )
    np.testing.assert_array_equal(np.asarray(out), _gray_fixed_point(rgb))


@pytest.mark.parametrize("source", ["RGB", "BGR"])
def test_color_space_conversion_to_gray_rounds_as_the_fixed_point_luma_where_floats_would_not(source):
    # A float32 sum with the weights 0.299, 0.587, 0.114 gives 99, 59 and 182 for these
    # (the reference: 98, 58, 183); about 1 pixel in 800 of a random image is such a one.
    rgb = np.concatenate(
        [
            np.array([[[35, 109, 211], [25, 71, 82], [165, 222, 25]]], np.uint8),
            np.random.default_rng(7).integers(0, 256, (1, 4000, 3), dtype=np.uint8),
        ],
        axis=1,
    )
    image = rgb if source == "RGB" else rgb[..., ::-1].copy()
    out = ndd.color_space_conversion(
        ndd.tensor(image, layout="HWC"), image_type=getattr(ndd.types, source), output_type=ndd.types.GRAY
    )
    assert np.asarray(out)[0, :3, 0].tolist() == [98, 58, 183]
    np.testing.assert_array_equal(np.asarray(out), _gray_fixed_point(rgb))


def test_color_space_conversion_to_gray_of_a_sequence_and_of_halves():
    # Every grey level (which stays as it is: the weights sum to 1), and a frame of mixed values.
    levels = np.arange(256, dtype=np.uint8)
    video = np.stack([np.stack([levels] * 3, -1)[None], np.stack([levels, levels[::-1], levels], -1)[None]])
    out = ndd.color_space_conversion(
        ndd.tensor(video, layout="FHWC"), image_type=ndd.types.RGB, output_type=ndd.types.GRAY
    )
    assert out.shape == (2, 1, 256, 1)
    np.testing.assert_array_equal(np.asarray(out), _gray_fixed_point(video))


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda t: ndd.brightness(ndd.tensor(np.zeros((2, 2, 3), np.uint16)), brightness=2.0),
            "input type",
        ),
        (lambda t: ndd.brightness(t, dtype=ndd.float64), "'dtype'"),
        (lambda t: ndd.hue(ndd.tensor(np.zeros((2, 2, 4), np.uint8), layout="HWC"), hue=1.0), "3 channels"),
        (
            lambda t: ndd.hue(ndd.tensor(np.zeros((3, 2, 2), np.uint8), layout="CHW"), hue=1.0),
            "layout among",
        ),
        (lambda t: ndd.hue(t, image_type=ndd.types.YCbCr), "'image_type' must be RGB or BGR"),
        (
            lambda t: ndd.color_space_conversion(t, image_type=ndd.types.RGB, output_type=ndd.types.RGB),
            "itself",
        ),
        (
            lambda t: ndd.color_space_conversion(t, image_type=ndd.types.GRAY, output_type=ndd.types.RGB),
            "channel",
        ),
        (
            lambda t: ndd.color_space_conversion(
                ndd.tensor(np.zeros((2, 2, 3), np.float32), layout="HWC"),
                image_type=ndd.types.RGB,
                output_type=ndd.types.GRAY,
            ),
            "uint8",
        ),
        (
            lambda t: ndd.color_space_conversion(t, image_type="RGB", output_type=ndd.types.GRAY),
            "'image_type'",
        ),
    ],
)
def test_bad_input_names_the_operator_and_argument(call, message):
    t = ndd.tensor(np.zeros((2, 2, 3), np.uint8), layout="HWC")
    with pytest.raises((ValueError, TypeError), match=message) as info:
        np.asarray(call(t))
    assert "ndd." in str(info.value)


@pytest.mark.parametrize("op", [ndd.brightness, ndd.hue])
def test_layouts_follow_the_reference(op):
    video = op(ndd.tensor(np.zeros((2, 3, 4, 3), np.uint8)))
    assert video.layout == "FHWC"
    with pytest.raises(ValueError, match="layout among"):
        op(ndd.tensor(np.zeros((3, 4), np.uint8)))
    with pytest.raises(ValueError, match="layout among"):
        op(ndd.tensor(np.zeros((3, 4, 3), np.uint8), layout="XYZ"))


def test_per_frame_arguments_need_a_sequence_of_that_many_frames():
    video = ndd.tensor(np.full((2, 3, 4, 3), 100, np.uint8), layout="FHWC")
    out = ndd.brightness(video, brightness=np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(np.asarray(out)[:, 0, 0, 0], [100, 200])
    with pytest.raises(ValueError, match="'brightness'"):
        ndd.brightness(ndd.tensor(np.zeros((3, 4, 3), np.uint8)), brightness=np.array([1.0, 2.0]))
    with pytest.raises(
        ValueError, match="ndd.brightness: 'brightness' has 3 values for a sequence of 2 frames"
    ):
        np.asarray(ndd.brightness(video, brightness=np.array([1.0, 2.0, 3.0], np.float32)))


def test_gpu_device_needs_a_gpu():
    t = ndd.tensor(np.zeros((2, 2, 3), np.uint8), layout="HWC")
    with pytest.raises(Exception, match="GPU"):
        ndd.brightness(t, device="gpu")


@pytest.mark.parametrize("count", [0, 1, 7, 8, 9, 31, 1000])
def test_the_colour_matrix_kernel_is_the_float32_sum_rounded_halves_up(count):
    """color_matrix (hue, saturation, hsv, color_twist, YCbCr) on uint8 pixels: its vector path
    and its scalar tail both give round(((m0 r' + m1 g') + m2 b') + o) in float32, exactly, with
    r' = r - i0 (the input offsets)."""
    from ndd._cpu.color import color_matrix

    rng = np.random.default_rng(count)
    pixels = rng.integers(0, 256, (count, 3), np.uint8)
    if count >= 4:
        pixels[:4] = [[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 0, 255]]
    for scale in (1.0, 60.0, 300.0):
        coeffs = (rng.normal(0, 1, 15) * scale).astype(np.float32)
        out = np.empty_like(pixels)
        color_matrix(pixels, out, coeffs)
        f = pixels.astype(np.float32) - coeffs[12:]
        m, o = coeffs[:9].reshape(3, 3), coeffs[9:12]
        sums = ((f[:, :1] * m[:, 0] + f[:, 1:2] * m[:, 1]) + f[:, 2:] * m[:, 2]) + o
        expected = np.clip(np.floor(sums + np.float32(0.5)), 0, 255).astype(np.uint8)
        np.testing.assert_array_equal(out, expected)


def test_debayer_of_a_sequence_without_frames_is_empty():
    frames = ndd.tensor(np.zeros((0, 6, 8), np.uint8), layout="FHW")
    out = ndd.debayer(frames, blue_position=[0, 0])
    assert np.asarray(out).shape == (0, 6, 8, 3)


def _png(pixels):
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return np.frombuffer(out.getvalue(), np.uint8)


@pytest.mark.parametrize("mode", [ndd.EvalMode.eager, ndd.EvalMode.deferred, ndd.EvalMode.sync_cpu])
def test_shape_checks_wait_for_a_decoders_output(mode):
    # A decoder's output shape is known only once it has run: the operators' checks of it
    # run then, before their kernels, instead of giving wrong pixels or a numpy error.
    gray = np.arange(16 * 24, dtype=np.uint8).reshape(16, 24)
    rgb = np.stack([gray, gray[::-1], 255 - gray], axis=-1)
    with mode:
        decoded_gray = ndd.decoders.image(_png(gray), output_type=ndd.types.DALIImageType.GRAY)
        with pytest.raises(ValueError, match=r"ndd\.hue: expected 3 channels \(RGB\), got 1"):
            ndd.hue(decoded_gray, hue=30).evaluate()
        batch = ndd.decoders.image(
            ndd.as_batch([_png(rgb), _png(gray)]), output_type=ndd.types.DALIImageType.ANY_DATA
        )
        with pytest.raises(ValueError, match=r"ndd\.saturation: expected 3 channels \(RGB\), got 1"):
            ndd.saturation(batch, saturation=0.5).evaluate()
        with pytest.raises(
            ValueError, match=r"ndd\.color_space_conversion: a GRAY input must have 1 channel"
        ):
            ndd.color_space_conversion(
                ndd.decoders.image(_png(rgb)),
                image_type=ndd.types.DALIImageType.GRAY,
                output_type=ndd.types.DALIImageType.RGB,
            ).evaluate()
        # A valid decoded input runs as a known one does.
        decoded = ndd.decoders.image(_png(rgb))
        np.testing.assert_array_equal(
            np.asarray(ndd.hue(decoded, hue=30)),
            np.asarray(ndd.hue(ndd.as_tensor(rgb, layout="HWC"), hue=30)),
        )


@pytest.mark.parametrize(
    "call",
    [
        lambda x, **kw: ndd.hue(x, hue=40, **kw),
        lambda x, **kw: ndd.saturation(x, saturation=0.3, **kw),
        lambda x, **kw: ndd.color_twist(x, hue=-25, saturation=1.4, brightness=1.1, contrast=0.8, **kw),
    ],
    ids=["hue", "saturation", "color_twist"],
)
def test_bgr_images_change_as_their_rgb_twins(call):
    # The reference takes image_type=BGR and computes as for RGB; ndd reverses the channels.
    rgb = np.random.default_rng(8).integers(0, 256, (6, 7, 3)).astype(np.uint8)
    expected = np.asarray(call(ndd.tensor(rgb, layout="HWC")))[..., ::-1]
    bgr = ndd.tensor(np.ascontiguousarray(rgb[..., ::-1]), layout="HWC")
    np.testing.assert_array_equal(np.asarray(call(bgr, image_type=ndd.types.BGR)), expected)


def test_debayer_takes_the_references_name_default():
    bayer = np.random.default_rng(3).integers(0, 256, (8, 10)).astype(np.uint8)
    images = ndd.batch([bayer], layout="HW")
    default = ndd.debayer(images, blue_position=[0, 0], algorithm="default")
    bilinear = ndd.debayer(images, blue_position=[0, 0], algorithm="bilinear_ocv")
    np.testing.assert_array_equal(np.asarray(default.select(0)), np.asarray(bilinear.select(0)))


@pytest.mark.parametrize("value", [0, 1])
def test_debayer_takes_one_blue_position_for_both_and_algorithm_names_in_any_case(value):
    # As the reference: blue_position=0 is BGGR, 1 is RGGB (checked against OpenCV there).
    bayer = np.random.default_rng(4).integers(0, 256, (8, 10)).astype(np.uint8)
    x = ndd.tensor(bayer, layout="HW")
    both = np.asarray(ndd.debayer(x, blue_position=[value, value]))
    for position in (value, [value]):
        np.testing.assert_array_equal(np.asarray(ndd.debayer(x, blue_position=position)), both)
    upper = ndd.debayer(x, blue_position=[value, value], algorithm="BILINEAR_OCV")
    np.testing.assert_array_equal(np.asarray(upper), both)
    edge = ndd.debayer(x, blue_position=[0, 1], algorithm="EdgeAware_Ocv")
    np.testing.assert_array_equal(
        np.asarray(edge), np.asarray(ndd.debayer(x, blue_position=[0, 1], algorithm="edgeaware_ocv"))
    )


# The reference's first six values (nvidia-dali-cuda120 2.4.0) for the float16 image below.
_F16_REFERENCE = {
    "hue": [0.779, 0.6997, 0.3882, 0.2063, 0.3337, 0.0645],
    "saturation": [0.7695, 0.6636, 0.5996, 0.2676, 0.2854, 0.1525],
    "color_twist": [0.781, 0.7417, 0.5884, 0.288, 0.3513, 0.2184],
}
_F16_CALLS = {
    "hue": lambda x: ndd.hue(x, hue=30),
    "saturation": lambda x: ndd.saturation(x, saturation=0.5),
    "color_twist": lambda x: ndd.color_twist(x, hue=30, saturation=0.5, brightness=1.1, contrast=0.9),
}


@pytest.mark.parametrize("name", sorted(_F16_CALLS))
def test_hue_family_takes_float16_as_float32_rounded(name):
    image = (np.random.default_rng(0).integers(0, 256, (4, 5, 3)) / 255).astype(np.float16)
    out = np.asarray(_F16_CALLS[name](ndd.tensor(image, layout="HWC")))
    assert out.dtype == np.float16
    wide = np.asarray(_F16_CALLS[name](ndd.tensor(image.astype(np.float32), layout="HWC")))
    np.testing.assert_allclose(out.astype(np.float32), wide, atol=1e-3, rtol=0)
    np.testing.assert_allclose(out.ravel()[:6], np.float16(_F16_REFERENCE[name]), atol=1e-3, rtol=0)


def test_brightness_refuses_float16_as_the_reference():
    with pytest.raises(ValueError, match="ndd.brightness: the input type must be one of"):
        ndd.brightness(ndd.tensor(np.zeros((2, 2, 3), np.float16), layout="HWC"), brightness=2.0)


@pytest.mark.parametrize("shape", [(1,), (1, 1)])
@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("brightness", {"brightness": 2.0}),
        ("contrast", {"contrast": 1.5}),
        ("brightness_contrast", {"brightness": 1.5, "contrast": 0.5}),
        ("hue", {"hue": 30.0}),
        ("saturation", {"saturation": 0.5}),
        ("hsv", {"value": 1.5}),
        ("color_twist", {"saturation": 0.5}),
    ],
)
def test_an_array_of_one_value_is_a_number(shape, name, kwargs):
    # As the reference: ndd.tensor([2.0]) or np.array([[2.0]]) for brightness=2.0.
    x = ndd.tensor(np.random.default_rng(0).integers(0, 256, (4, 5, 3), dtype=np.uint8), layout="HWC")
    op = getattr(ndd, name)
    expected = np.asarray(op(x, **kwargs))
    arrays = {k: np.full(shape, v, np.float32) for k, v in kwargs.items()}
    np.testing.assert_array_equal(np.asarray(op(x, **arrays)), expected)
    tensors = {k: ndd.tensor(v) for k, v in arrays.items()}
    np.testing.assert_array_equal(np.asarray(op(x, **tensors)), expected)


@pytest.mark.parametrize("conversion", ["RGB_YCbCr", "BGR_YCbCr", "YCbCr_RGB", "YCbCr_BGR"])
def test_ycbcr_conversions_are_the_references_for_every_value(conversion):
    """The reference's results (tests/golden/make_ycbcr_goldens.py) where its single-precision
    sums round away from the exact value, where the exact value is closest to a half, and 1,024
    others: equal (they are, for all 2^24 values, with the rounded weights the decoders use)."""
    import pathlib

    golden = np.load(pathlib.Path(__file__).parent.parent / "golden" / "ycbcr_values.npz")
    source, target = conversion.split("_")
    values = golden[f"{conversion}_in"]
    out = ndd.color_space_conversion(
        ndd.tensor(values.reshape(1, -1, 3), layout="HWC"),
        image_type=getattr(ndd.types, source),
        output_type=getattr(ndd.types, target),
    )
    np.testing.assert_array_equal(np.asarray(out).reshape(-1, 3), golden[f"{conversion}_out"])


@pytest.mark.parametrize("quality", [1, 2, 10, 24, 25, 26, 50, 75, 90, 99, 100])
def test_jpeg_round_trip_in_one_call_is_pillows_encoder_and_simplejpegs_decoder(quality):
    # jpeg_compression_distortion encodes and decodes with libjpeg-turbo in one compiled
    # call where ndd was built with it; the pixels are those of Pillow's encoder (4:2:0)
    # and simplejpeg's decoder, which the reference's goldens match.
    jpeg_region = pytest.importorskip("ndd._cpu.jpeg_region")
    from ndd._ops.color import _pillow_round_trip

    rng = np.random.default_rng(quality)
    photo = np.asarray(
        Image.open(pathlib.Path(ndd.__file__).parent / "_sample_data" / "photos" / "astronaut.jpg")
    )
    for image in (photo, rng.integers(0, 256, (17, 31, 3), dtype=np.uint8), photo[:9, :1]):
        image = np.ascontiguousarray(image)
        out = np.empty_like(image)
        assert jpeg_region.round_trip_rgb(image, quality, out)
        np.testing.assert_array_equal(out, _pillow_round_trip(image, quality))


@pytest.mark.parametrize("shape", [(5, 5, 0), (0, 5, 3), (5, 0, 1)])
def test_equalize_of_an_image_without_pixels_or_channels_is_empty(shape):
    out = ndd.equalize(ndd.batch([np.zeros(shape, np.uint8)], layout="HWC"))
    assert np.asarray(out.select(0)).shape == shape
