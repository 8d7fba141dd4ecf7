"""GPU image operators (ndd/_ops/gpu_image.py, kernels/image.cu, and the layout
kernels for crop and flip), each compared with its CPU twin on the kernels built
for the CPU and on a real GPU (``any_gpu``): exact equality, since the GPU kernels
round as the CPU does (no fused multiply-add). What is launched is checked on the
recording FakeDriver (``fake``).
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import assert_same, check_batch, check_tensor  # noqa: E402

import ndd  # noqa: E402

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
# Shapes of a ragged HWC batch, and one with an empty image (for the padded windows).
RAGGED = [(9, 12, 3), (14, 7, 3), (6, 5, 3), (5, 16, 3)]
WITH_EMPTY = [(9, 12, 3), (14, 7, 3), (0, 5, 3), (5, 16, 3)]
CMN_INPUTS = [np.uint8, np.int16, np.uint16, np.int32, np.float32, np.float16]
CMN_OUTPUTS = [ndd.float32, ndd.float16, ndd.uint8, ndd.int8]


@pytest.fixture
def fake(fake_with_kernels):
    """The recording FakeDriver (kernels are not run) with the session's kernel build."""
    return fake_with_kernels


def _values(dtype, shape, seed=0):
    """Values spanning the type, with NaN and infinities among the float ones."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, dtype=dtype, endpoint=True)
    values = (rng.standard_normal(shape) * 300).astype(dtype)
    if values.size > 3:
        values.flat[:3] = [np.nan, np.inf, -np.inf]
    return values


# -- crop_mirror_normalize ---------------------------------------------------------------


@pytest.mark.parametrize("target", CMN_OUTPUTS)
@pytest.mark.parametrize("dtype", CMN_INPUTS)
def test_crop_mirror_normalize_matches_the_cpu_for_every_type(dtype, target, any_gpu):
    values = _values(dtype, (12, 10, 3))
    check_tensor(ndd.crop_mirror_normalize, values, "HWC", crop=(6, 5), mean=MEAN, std=STD, dtype=target)
    check_tensor(
        ndd.crop_mirror_normalize,
        values,
        "HWC",
        crop=(6, 5),
        crop_pos_x=1.0,
        mirror=1,
        mean=[10.0],
        std=[0.5],
        scale=3.0,
        shift=-20.0,
        dtype=target,
    )


@pytest.mark.parametrize("output_layout", ["CHW", "HWC", "WHC", "CWH"])
def test_crop_mirror_normalize_lays_out_a_ragged_batch_in_one_launch(output_layout, any_gpu):
    samples = [_values(np.uint8, s, i) for i, s in enumerate(RAGGED)]
    mirror = ndd.batch([np.int32(m) for m in (1, 0, 1, 1)])
    check_batch(
        ndd.crop_mirror_normalize,
        samples,
        "HWC",
        crop=(4, 5),
        crop_pos_x=0.3,
        crop_pos_y=0.7,
        mirror=mirror,
        mean=MEAN,
        std=STD,
        output_layout=output_layout,
    )


def test_crop_mirror_normalize_takes_per_sample_means_and_std(any_gpu):
    samples = [_values(np.float32, (6, 6, 3), i) for i in range(3)]
    mean = ndd.batch(
        [np.array([1.0, 2.0, 3.0], np.float32), np.array([0.0], np.float32), np.array([5.0] * 3)]
    )
    std = ndd.batch([np.array([2.0], np.float32), np.array([1.0, 4.0, 8.0], np.float32), np.array([0.0])])
    check_batch(ndd.crop_mirror_normalize, samples, "HWC", mean=mean, std=std, dtype=ndd.float16)


@pytest.mark.parametrize("target", [ndd.float32, ndd.uint8])
def test_crop_mirror_normalize_pads_outside_the_input_and_adds_a_channel(target, any_gpu):
    samples = [_values(np.uint8, s, i) for i, s in enumerate(WITH_EMPTY)]
    common = dict(crop=(11, 14), crop_pos_x=0.8, crop_pos_y=0.1, mean=MEAN, std=STD, dtype=target)
    check_batch(
        ndd.crop_mirror_normalize,
        samples,
        "HWC",
        out_of_bounds_policy="pad",
        fill_values=[300.0, -4.5, 7.5],
        mirror=1,
        **common,
    )
    check_batch(
        ndd.crop_mirror_normalize,
        samples,
        "HWC",
        out_of_bounds_policy="pad",
        fill_values=[2.5],
        pad_output=True,
        **common,
    )
    check_batch(ndd.crop_mirror_normalize, samples, "HWC", out_of_bounds_policy="trim_to_shape", **common)
    check_batch(ndd.crop_mirror_normalize, samples, "HWC", pad_output=True, mean=MEAN, std=STD)


@pytest.mark.parametrize(
    "layout, shape, crop, output_layout",
    [
        ("CHW", (3, 9, 11), (5, 6), "HWC"),
        ("FHWC", (4, 8, 9, 3), (5, 5), "FCHW"),
        ("DHWC", (6, 8, 9, 2), (3, 5, 5), "CDHW"),
        ("HWC", (7, 9, 1), (4, 4), "CHW"),
    ],
)
def test_crop_mirror_normalize_handles_other_layouts(layout, shape, crop, output_layout, any_gpu):
    check_tensor(
        ndd.crop_mirror_normalize,
        _values(np.int16, shape),
        layout,
        crop=crop,
        crop_pos_x=0.6,
        mirror=1,
        mean=[3.0],
        std=[7.0],
        output_layout=output_layout,
        out_of_bounds_policy="pad",
    )


def test_crop_mirror_normalize_runs_a_ragged_batch_as_one_launch(fake):
    samples = [np.zeros(s, np.uint8) for s in RAGGED]
    ndd.crop_mirror_normalize(
        ndd.batch(samples, layout="HWC").gpu(), crop=(4, 4), mean=MEAN, std=STD
    ).evaluate()
    launches = [launch for launch in fake.launches if launch.function.startswith("crop_mirror_normalize")]
    assert [launch.function for launch in launches] == ["crop_mirror_normalize_u8_to_f32"]
    assert launches[0].grid[1] == len(samples)


def test_crop_mirror_normalize_refuses_host_input_on_the_gpu(fake):
    with pytest.raises(
        NotImplementedError, match="crop_mirror_normalize on the GPU: an input in host memory"
    ):
        ndd.crop_mirror_normalize(ndd.tensor(np.zeros((4, 4, 3), np.uint8)), device="gpu")


# -- flip ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64])
def test_flip_matches_the_cpu(dtype, any_gpu):
    values = _values(dtype, (7, 9, 3))
    for horizontal, vertical in ((1, 0), (0, 1), (1, 1), (0, 0)):
        check_tensor(ndd.flip, values, "HWC", horizontal=horizontal, vertical=vertical)
        check_tensor(ndd.flip, np.ascontiguousarray(values.transpose(2, 0, 1)), "CHW", horizontal=horizontal)
    check_tensor(ndd.flip, _values(dtype, (3, 4, 5, 2)), "DHWC", depthwise=1, horizontal=0)
    check_tensor(ndd.flip, _values(dtype, (3, 4, 5, 2)), "FHWC", vertical=1)


def test_flip_takes_per_sample_flags(any_gpu):
    samples = [_values(np.uint8, s, i) for i, s in enumerate(RAGGED)]
    flags = ndd.batch([np.int32(f) for f in (1, 0, 1, 0)])
    check_batch(ndd.flip, samples, "HWC", horizontal=flags, vertical=ndd.batch([np.int32(1)] * 4))


def test_flip_moves_pixels_of_any_width_as_items(any_gpu, monkeypatch):
    # Rows of 24 and 36 bytes (4-byte output words), 15 (bytes one by one), a sample left
    # as it is among flipped ones, and planes of rows (a sequence flipped both ways).
    from ndd._ops import gpu_layout

    launched = []
    item_copy = gpu_layout._item_copy
    monkeypatch.setattr(gpu_layout, "_item_copy", lambda *a: launched.append(1) or item_copy(*a))
    for widths in ((8, 12, 8), (5, 5, 5)):
        samples = [_values(np.uint8, (6, w, 3), i) for i, w in enumerate(widths)]
        flags = ndd.batch([np.int32(f) for f in (1, 0, 1)])
        check_batch(ndd.flip, samples, "HWC", horizontal=flags)
    check_tensor(ndd.flip, _values(np.uint8, (3, 4, 8, 3)), "FHWC", horizontal=1, vertical=1)
    check_tensor(ndd.flip, _values(np.uint8, (3, 5, 8)), "CHW", horizontal=1, vertical=1)
    assert len(launched) == 4


# -- crop --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
def test_crop_matches_the_cpu(dtype, any_gpu):
    samples = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    check_batch(ndd.crop, samples, "HWC", crop=(4, 4), crop_pos_x=0.2, crop_pos_y=0.9)
    check_batch(
        ndd.crop, samples, "HWC", crop=(10, 13), out_of_bounds_policy="pad", fill_values=[1.0, 2.0, 3.0]
    )
    check_batch(ndd.crop, samples, "HWC", crop=(10, 13), out_of_bounds_policy="trim_to_shape")
    check_tensor(ndd.crop, _values(dtype, (3, 9, 8)), "CHW", crop_h=5, crop_w=5, dtype=ndd.uint8)
    check_tensor(ndd.crop, _values(dtype, (6, 7, 8, 2)), "DHWC", crop=(3, 4, 4), crop_pos_z=0.5)


def test_crop_converts_padded_uint8_windows_to_float(any_gpu):
    samples = [_values(np.uint8, s, i) for i, s in enumerate(WITH_EMPTY)]
    for target in (ndd.float32, ndd.float16):
        check_batch(ndd.crop, samples, "HWC", crop=(10, 13), out_of_bounds_policy="pad", dtype=target)


def test_crop_refuses_a_padded_conversion_that_could_wrap_on_the_gpu(fake):
    x = ndd.tensor(np.zeros((4, 4, 3), np.float32), layout="HWC").gpu()
    with pytest.raises(NotImplementedError, match="ndd.crop on the GPU: converting a padded window"):
        ndd.crop(x, crop=(6, 6), out_of_bounds_policy="pad", dtype=ndd.uint8)


# -- the resize family ------------------------------------------------------------------------

INTERP_TYPES = [
    ndd.types.INTERP_NN,
    ndd.types.INTERP_LINEAR,
    ndd.types.INTERP_CUBIC,
    ndd.types.INTERP_LANCZOS3,
    ndd.types.INTERP_TRIANGULAR,
    ndd.types.INTERP_GAUSSIAN,
]
RESIZE_TYPES = [np.uint8, np.int16, np.uint16, np.float32, np.float16]


def _assert_resampled_alike(gpu_result, cpu_result):
    """The GPU sums and rounds as the CPU does: equal to the bit."""
    assert_same(gpu_result, cpu_result)


def _images(dtype, shapes):
    rng = np.random.default_rng(5)
    if np.dtype(dtype).kind == "f":
        return [(rng.standard_normal(s) * 100).astype(dtype) for s in shapes]
    info = np.iinfo(dtype)
    return [
        rng.integers(max(info.min, -2000), min(info.max, 2000), s, dtype=dtype, endpoint=True) for s in shapes
    ]


@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("interp", INTERP_TYPES)
def test_resize_matches_the_cpu_for_every_filter(interp, antialias, any_gpu):
    samples = _images(np.uint8, [(23, 31, 3), (40, 17, 3), (9, 9, 3)])
    for size in ([11, 14], [57, 45], [30, 8]):
        cpu = ndd.resize(ndd.batch(samples, layout="HWC"), size=size, interp_type=interp, antialias=antialias)
        gpu = ndd.resize(
            ndd.batch(samples, layout="HWC").gpu(), size=size, interp_type=interp, antialias=antialias
        )
        _assert_resampled_alike(gpu, cpu)


@pytest.mark.parametrize("dtype", RESIZE_TYPES)
def test_resize_matches_the_cpu_for_every_type(dtype, any_gpu):
    samples = _images(dtype, [(20, 26, 3), (31, 12, 3)])
    for kwargs in (dict(size=[13, 40]), dict(resize_shorter=16, dtype=ndd.float32), dict(size=[20, 26])):
        cpu = ndd.resize(ndd.batch(samples, layout="HWC"), **kwargs)
        gpu = ndd.resize(ndd.batch(samples, layout="HWC").gpu(), **kwargs)
        _assert_resampled_alike(gpu, cpu)


@pytest.mark.parametrize(
    "layout, shape, kwargs",
    [
        ("CHW", (3, 21, 30), dict(size=[10, 44], interp_type=ndd.types.INTERP_CUBIC)),
        ("FHWC", (3, 12, 15, 2), dict(size=[7, 20])),
        ("DHWC", (9, 12, 15, 1), dict(size=[5, 20, 8], interp_type=ndd.types.INTERP_LANCZOS3)),
        ("HWC", (18, 24, 3), dict(resize_x=10)),
        ("HWC", (18, 24, 3), dict(resize_y=30, resize_x=24)),
        ("HWC", (18, 24, 3), dict(size=[9, 9], roi_start=[15.5, 2.0], roi_end=[3.0, 20.5])),
        ("HWC", (18, 24, 3), dict(size=[9, 9], roi_start=[0.1, 0.2], roi_end=[0.7, 0.9], roi_relative=True)),
        ("HWC", (18, 24, 3), dict(size=[-9, 12])),
        ("HWC", (18, 24, 3), dict(resize_longer=13, max_size=[10, 100], subpixel_scale=False)),
    ],
)
def test_resize_matches_the_cpu_for_layouts_regions_and_flips(layout, shape, kwargs, any_gpu):
    (image,) = _images(np.float32, [shape])
    cpu = ndd.resize(ndd.tensor(image, layout=layout), **kwargs)
    gpu = ndd.resize(ndd.tensor(image, layout=layout).gpu(), **kwargs)
    _assert_resampled_alike(gpu, cpu)


def test_resize_of_an_empty_image_saves_the_input_extents(any_gpu):
    samples = _images(np.uint8, [(0, 7, 3), (6, 7, 3)])
    cpu, cpu_attrs = ndd.resize(ndd.batch(samples, layout="HWC"), size=[4, 5], save_attrs=True)
    gpu, gpu_attrs = ndd.resize(ndd.batch(samples, layout="HWC").gpu(), size=[4, 5], save_attrs=True)
    _assert_resampled_alike(gpu, cpu)
    assert_same(gpu_attrs, cpu_attrs)


def test_random_resized_crop_matches_the_cpu_with_the_same_generator(any_gpu):
    samples = _images(np.uint8, [(40, 52, 3), (33, 29, 3), (64, 48, 3)])
    cpu = ndd.random_resized_crop(ndd.batch(samples, layout="HWC"), size=[24, 20], rng=ndd.random.RNG(seed=9))
    gpu = ndd.random_resized_crop(
        ndd.batch(samples, layout="HWC").gpu(), size=[24, 20], rng=ndd.random.RNG(seed=9)
    )
    _assert_resampled_alike(gpu, cpu)
    with_empty = [np.zeros((0, 5, 3), np.uint8), *samples]
    _assert_resampled_alike(
        ndd.random_resized_crop(
            ndd.batch(with_empty, layout="HWC").gpu(), size=8, rng=ndd.random.RNG(seed=4)
        ),
        ndd.random_resized_crop(ndd.batch(with_empty, layout="HWC"), size=8, rng=ndd.random.RNG(seed=4)),
    )
    single = ndd.tensor(samples[0], layout="HWC")
    _assert_resampled_alike(
        ndd.random_resized_crop(single.gpu(), size=16, rng=ndd.random.RNG(seed=2)),
        ndd.random_resized_crop(single, size=16, rng=ndd.random.RNG(seed=2)),
    )


def test_random_resized_crop_filters_each_window_by_its_own_scale(any_gpu):
    # Windows smaller than the output along an axis are magnified (mag_filter), larger
    # ones reduced (min_filter), axis by axis and sample by sample; one sample reads
    # its interpolation from a per-sample argument.
    samples = _images(np.uint8, [(40, 52, 3), (20, 90, 3), (64, 18, 3), (31, 31, 3), (50, 50, 3)])
    kwargs = dict(
        size=[28, 26],
        min_filter=ndd.types.INTERP_LINEAR,
        mag_filter=ndd.types.INTERP_CUBIC,
        random_area=[0.1, 1.0],
    )
    for seed in (1, 5, 11):
        cpu = ndd.random_resized_crop(
            ndd.batch(samples, layout="HWC"), rng=ndd.random.RNG(seed=seed), **kwargs
        )
        gpu = ndd.random_resized_crop(
            ndd.batch(samples, layout="HWC").gpu(), rng=ndd.random.RNG(seed=seed), **kwargs
        )
        _assert_resampled_alike(gpu, cpu)
    mag = ndd.batch([np.array(int(v), np.int32) for v in ndd.types.DALIInterpType][:5])
    cpu = ndd.random_resized_crop(
        ndd.batch(samples, layout="HWC"), size=[30, 34], mag_filter=mag, rng=ndd.random.RNG(seed=3)
    )
    gpu = ndd.random_resized_crop(
        ndd.batch(samples, layout="HWC").gpu(), size=[30, 34], mag_filter=mag, rng=ndd.random.RNG(seed=3)
    )
    _assert_resampled_alike(gpu, cpu)


def test_resize_crop_mirror_and_tensor_resize_match_the_cpu(any_gpu):
    samples = _images(np.int16, [(30, 36, 3), (25, 40, 3)])
    kwargs = dict(size=[20, 24], crop=[12, 14], crop_pos_x=0.8, mirror=1)
    _assert_resampled_alike(
        ndd.resize_crop_mirror(ndd.batch(samples, layout="HWC").gpu(), **kwargs),
        ndd.resize_crop_mirror(ndd.batch(samples, layout="HWC"), **kwargs),
    )
    volume = _images(np.float32, [(6, 10, 14)])[0]
    for kwargs in (dict(sizes=[3, 20, 7]), dict(scales=[0.5, 1.5], axes=[1, 2], size_rounding="ceil")):
        _assert_resampled_alike(
            ndd.tensor_resize(ndd.tensor(volume).gpu(), **kwargs),
            ndd.tensor_resize(ndd.tensor(volume), **kwargs),
        )


def test_resize_runs_each_pass_of_a_batch_as_one_launch(fake):
    samples = [np.zeros(s, np.uint8) for s in RAGGED]
    ndd.resize(ndd.batch(samples, layout="HWC").gpu(), size=[8, 8]).evaluate()
    names = [launch.function for launch in fake.launches if launch.function.startswith("resample")]
    # The linear filter tables, then rows into float32 and columns into bytes, for the
    # four samples at once.
    assert names == ["resample_tables", "resample_u8_to_f32", "resample_f32_to_u8"]


def _random_jobs(rng, count):
    """Shapes and ``resample`` jobs of 2-D and 3-D samples: any filter, region, flip and
    scale, with antialiasing or without."""
    shapes, jobs = [], []
    for _ in range(count):
        shape = tuple(int(n) for n in rng.integers(1, 60, 3))
        axes = (0, 1) if rng.random() < 0.5 else (0, 1, 2)
        lo, hi = [], []
        for a in axes:
            ends = rng.uniform(-4, shape[a] + 4, 2)
            if rng.random() < 0.3:
                ends = [0.0, float(shape[a])]
            lo.append(float(ends[0]))
            hi.append(float(ends[1]))
        sizes = [int(rng.integers(1, 90)) for _ in axes]
        filters = (int(rng.integers(0, 6)), int(rng.integers(0, 6)))  # min_filter, mag_filter
        shapes.append(shape)
        jobs.append((axes, sizes, lo, hi, filters, bool(rng.random() < 0.7)))
    return shapes, jobs


def test_filter_tables_made_on_the_gpu_are_the_hosts_to_the_bit(any_gpu):
    from ndd._cpu.resample import RESAMPLE_HEAD, resample_plan
    from ndd._cuda.device_array import current_stream
    from ndd._ops.gpu_image import resample_tables

    shapes, jobs = _random_jobs(np.random.default_rng(3), 300)
    offsets = [0] * len(shapes)
    host = resample_plan(shapes, jobs, offsets, offsets)
    split = resample_plan(shapes, jobs, offsets, offsets, device_tables=True)
    assert len(host[2]) == 0 and len(split[2]) > 100  # the linear, cubic and triangular tables
    assert host[3] == split[3]
    stream = current_stream(0)
    tables, _ = resample_tables(*split[:4], 0, stream)
    made = tables.to_host()
    size = split[3]
    indices, weights = made[:size], made[size:].view(np.float32)
    checked = 0
    for level_host, level_split in zip(host[5], split[5], strict=True):
        assert level_host[0] == level_split[0]  # the same buffers between passes
        for rows_host, rows_split in ((level_host[1], level_split[1]), (level_host[3], level_split[3])):
            assert rows_host.shape == rows_split.shape
            for row_host, row_split in zip(rows_host, rows_split, strict=True):
                # Every field but where the table is, and the same table there.
                assert np.array_equal(np.delete(row_host, 5), np.delete(row_split, 5))
                n = int(
                    row_host[RESAMPLE_HEAD + 2 * row_host[4]] * row_host[6]
                )  # output extent along the axis, times taps
                a, b = int(row_host[5]), int(row_split[5])
                np.testing.assert_array_equal(indices[b : b + n], host[0][a : a + n])
                np.testing.assert_array_equal(
                    weights[b : b + n].view(np.int32), host[1][a : a + n].view(np.int32)
                )
                checked += 1
    assert checked > 300


def test_resize_refuses_an_input_type_without_a_kernel(fake):
    x = ndd.tensor(np.zeros((4, 4, 3), np.int32), layout="HWC").gpu()
    with pytest.raises(NotImplementedError, match="ndd.resize on the GPU: no kernel for input type"):
        ndd.resize(x, size=[2, 2])


# -- colour --------------------------------------------------------------------------------------

COLOR_TYPES = [ndd.uint8, ndd.int16, ndd.int32, ndd.float32]


def _color_images(dtype, shapes, seed=3):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return [rng.random(s, dtype=np.float32) for s in shapes]
    high = {1: 255, 2: 4000, 4: 70000}[dtype.itemsize]
    return [rng.integers(0, high, s, endpoint=True).astype(dtype) for s in shapes]


@pytest.mark.parametrize("out_type", COLOR_TYPES)
@pytest.mark.parametrize("in_type", COLOR_TYPES)
def test_brightness_contrast_matches_the_cpu(in_type, out_type, any_gpu):
    samples = _color_images(in_type.numpy, [(5, 7, 3), (4, 6, 1), (0, 3, 3)])
    brightness = ndd.batch([np.float32(b) for b in (1.5, 0.25, 2.0)])
    for op, kwargs in (
        (ndd.brightness_contrast, dict(brightness=brightness, brightness_shift=0.1, contrast=1.7)),
        (ndd.brightness, dict(brightness=0.6, brightness_shift=-0.05)),
        (ndd.contrast, dict(contrast=3.0, contrast_center=40.0)),
    ):
        check_batch(op, samples, "HWC", dtype=out_type, **kwargs)


@pytest.mark.parametrize("op", [ndd.hue, ndd.saturation, ndd.hsv, ndd.color_twist])
def test_hue_saturation_family_matches_the_cpu_on_bytes_and_floats(op, any_gpu):
    kwargs = {
        ndd.hue: dict(hue=ndd.batch([np.float32(h) for h in (30.0, -75.0)])),
        ndd.saturation: dict(saturation=0.4),
        ndd.hsv: dict(hue=12.0, saturation=1.6, value=0.9),
        ndd.color_twist: dict(hue=45.0, saturation=0.5, brightness=1.2, contrast=0.8),
    }[op]
    for dtype in (np.uint8, np.float32):
        samples = _color_images(dtype, [(6, 5, 3), (3, 9, 3)])
        # hsv's output type is uint8 unless asked otherwise.
        out = dict(dtype=ndd.uint8 if dtype == np.uint8 else ndd.float32) if op is ndd.hsv else {}
        check_batch(op, samples, "HWC", **kwargs, **out)


@pytest.mark.parametrize("out_type", [ndd.uint8, ndd.int16, ndd.int32, ndd.float16, ndd.float32])
@pytest.mark.parametrize("in_type", [np.uint8, np.int16, np.int32, np.float16, np.float32])
def test_hue_saturation_family_converts_types_as_the_cpu(in_type, out_type, any_gpu):
    # The CPU sums the products in the kernel's order (numpy's matrix product, in its
    # own order, was 1 apart in int16 and a float32 step apart in int32); float16 in
    # and out has a kernel (an output of float16 raised KeyError at run time).
    samples = [
        s.astype(in_type)
        for s in _color_images(in_type if in_type != np.float16 else np.float32, [(6, 5, 3), (3, 9, 3)])
    ]
    check_batch(ndd.color_twist, samples, "HWC", hue=20.0, saturation=1.3, contrast=1.2, dtype=out_type)
    check_batch(ndd.hsv, samples, "HWC", hue=-40.0, value=0.7, dtype=out_type)


def test_colour_arguments_per_frame_match_the_cpu(any_gpu):
    (frames,) = _color_images(np.uint8, [(3, 4, 5, 3)])
    check_tensor(ndd.brightness, frames, "FHWC", brightness=np.array([0.5, 1.0, 1.5], np.float32))
    check_tensor(ndd.hue, frames, "FHWC", hue=np.array([10.0, 20.0, 30.0], np.float32))


def test_arguments_marked_per_frame_match_plain_per_frame_arrays(any_gpu):
    frames = _color_images(np.uint8, [(3, 4, 5, 3)])[0]
    hues = np.array([10.0, 20.0, 30.0], np.float32)
    x = ndd.tensor(frames, layout="FHWC")
    assert_same(ndd.hue(x.gpu(), hue=ndd.per_frame(hues)), ndd.hue(x, hue=hues))


@pytest.mark.parametrize(
    "image_type, output_type",
    [(a, b) for a in ("RGB", "BGR", "GRAY", "YCbCr") for b in ("RGB", "BGR", "GRAY", "YCbCr") if a != b],
)
def test_color_space_conversion_matches_the_cpu(image_type, output_type, any_gpu):
    channels = 1 if image_type == "GRAY" else 3
    samples = _color_images(np.uint8, [(7, 9, channels), (2, 3, channels)])
    kwargs = dict(image_type=getattr(ndd.types, image_type), output_type=getattr(ndd.types, output_type))
    check_batch(ndd.color_space_conversion, samples, "HWC", **kwargs)


@pytest.mark.parametrize(
    "layout, shape", [("HWC", (30, 40, 3)), ("CHW", (2, 25, 20)), ("HW", (17, 33)), ("FHWC", (3, 12, 10, 3))]
)
def test_equalize_matches_the_cpu(layout, shape, any_gpu):
    rng = np.random.default_rng(len(shape))
    # A narrow range of levels, so that the tables stretch them (and one flat plane).
    samples = [rng.integers(60, 120, shape).astype(np.uint8), np.full(shape, 7, np.uint8)]
    check_batch(ndd.equalize, samples, layout)


def test_shape_checks_of_a_gpu_operator_wait_for_what_the_call_did_not_know(any_gpu):
    # An argument still to be computed at the call (a deferred random draw): hue's
    # "3 channels" check runs before its kernel would read three channels of one.
    gray = ndd.batch([np.zeros((8, 12, 1), np.uint8)] * 2, layout="HWC").gpu()
    with ndd.EvalMode.deferred:
        out = ndd.hue(gray, hue=ndd.random.uniform(range=[0, 30], batch_size=2))
        with pytest.raises(
            ValueError, match=r"deferred evaluation of ndd\.hue.*expected 3 channels \(RGB\), got 1"
        ):
            out.evaluate()


def test_bgr_to_ycbcr_sums_red_green_blue_as_the_cpu(any_gpu):
    """The GPU reads a BGR pixel's channels in reverse and sums R, G, B through the RGB
    matrix, as the CPU does: colours where the other order lands on the other side of
    a half give the CPU's values."""
    from ndd._ops.color import _RGB_TO_YCBCR, _YCBCR_OFFSET

    rgb = np.random.default_rng(11).integers(0, 256, (1 << 18, 3)).astype(np.float32)
    m, offset = _RGB_TO_YCBCR.astype(np.float32), np.float32(_YCBCR_OFFSET)
    in_order = rgb[:, :1] * m[:, 0] + rgb[:, 1:2] * m[:, 1] + rgb[:, 2:] * m[:, 2] + offset
    reversed_order = rgb[:, 2:] * m[:, 2] + rgb[:, 1:2] * m[:, 1] + rgb[:, :1] * m[:, 0] + offset
    differ = np.any(
        np.floor(in_order + np.float32(0.5)) != np.floor(reversed_order + np.float32(0.5)), axis=1
    )
    assert differ.sum() >= 1
    bgr = rgb[differ][:, ::-1].astype(np.uint8).reshape(1, -1, 3)
    check_batch(
        ndd.color_space_conversion, [bgr], "HWC", image_type=ndd.types.BGR, output_type=ndd.types.YCbCr
    )
