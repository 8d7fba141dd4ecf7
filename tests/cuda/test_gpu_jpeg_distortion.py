"""GPU jpeg_compression_distortion (ndd/_ops/gpu_jpeg_distortion.py,
kernels/jpeg_distortion.cu) compared with its CPU twin (Pillow's libjpeg-turbo encoder,
simplejpeg's decoder) on the kernels built for the CPU and on a real GPU (``any_gpu``).
Every lossy step of the round trip is libjpeg-turbo's integer arithmetic, which the
kernels take step for step: the results are equal to the bit, at every quality, for
every size (edge units padded as the encoder pads them, chroma upsampled as the decoder
does at the edges and for images at most 4 pixels wide). What is launched is checked
on the recording FakeDriver (``fake``).
"""

import io
import pathlib

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("cuda.bindings")

from gpu_testing import check_batch, check_tensor  # noqa: E402

import ndd  # noqa: E402
from ndd._ops.gpu_jpeg_distortion import quality_table, quantization_table  # noqa: E402

PHOTOS = pathlib.Path(ndd.__file__).parent / "_sample_data" / "photos"
# Sizes around the 16x16 units, the 8x8 blocks and the 2x2 chroma samples, and those
# whose chroma is at most 2 samples wide (upsampled without the triangle filter).
SIZES = [
    (1, 1),
    (1, 2),
    (2, 1),
    (2, 2),
    (3, 4),
    (4, 5),
    (5, 6),
    (6, 3),
    (7, 13),
    (8, 8),
    (16, 16),
    (17, 33),
    (31, 9),
]


@pytest.fixture
def fake(fake_with_kernels):
    """The recording FakeDriver (kernels are not run) with the session's kernel build."""
    return fake_with_kernels


def _noise(shape, seed):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def _gradient(height, width):
    y, x = np.mgrid[:height, :width]
    return np.stack([(x * 7 + y * 3) % 256, (y * 11) % 256, (x * 5 + 50) % 256], -1).astype(np.uint8)


def _photo(name, height, width):
    return np.ascontiguousarray(np.asarray(Image.open(PHOTOS / name).convert("RGB"))[:height, :width])


def _qualities(values):
    return ndd.batch([np.int32(q) for q in values])


@pytest.mark.parametrize("size", SIZES)
def test_matches_the_cpu_for_every_size(size, any_gpu):
    for quality in (1, 50, 93, 100):
        check_tensor(ndd.jpeg_compression_distortion, _noise((*size, 3), sum(size)), "HWC", quality=quality)
        check_tensor(ndd.jpeg_compression_distortion, _gradient(*size), "HWC", quality=quality)


def test_matches_the_cpu_for_every_quality_given_per_sample(any_gpu):
    # A ragged batch of 100 samples, photographs, gradients and noise, qualities 1 to 100.
    sizes = [(h, w) for h in (9, 23, 40) for w in (5, 18, 33, 47)]
    samples = []
    for i in range(100):
        height, width = sizes[i % len(sizes)]
        kind = i % 3
        if kind == 0:
            samples.append(_photo(["astronaut.jpg", "chelsea.jpg", "coffee.jpg"][i % 3], height, width))
        elif kind == 1:
            samples.append(_gradient(height, width))
        else:
            samples.append(_noise((height, width, 3), i))
    check_batch(ndd.jpeg_compression_distortion, samples, "HWC", quality=_qualities(range(1, 101)))


@pytest.mark.parametrize("quality", [3, 50, 97])
def test_matches_the_cpu_on_photographs(quality, any_gpu):
    samples = [_photo(name, 512, 512) for name in ("astronaut.jpg", "chelsea.jpg", "coffee.jpg")]
    samples.append(_noise((480, 640, 3), quality))
    check_batch(ndd.jpeg_compression_distortion, samples, "HWC", quality=quality)


def test_takes_the_default_quality_and_clamps_others(any_gpu):
    image = _photo("camera.jpg", 37, 45)
    check_tensor(ndd.jpeg_compression_distortion, image, "HWC")
    for quality in (-5, 0, 101, 1000):
        check_tensor(ndd.jpeg_compression_distortion, image, "HWC", quality=quality)


def test_matches_the_cpu_for_sequences(any_gpu):
    sequence = np.stack([_photo("chelsea.jpg", 21, 30), _gradient(21, 30), _noise((21, 30, 3), 1)])
    check_tensor(ndd.jpeg_compression_distortion, sequence, "FHWC", quality=20)
    # Ragged sequences, one of them without frames, each with its quality.
    samples = [sequence, _noise((2, 9, 17, 3), 2), np.zeros((0, 4, 5, 3), np.uint8), sequence[:1, :5, :3]]
    check_batch(ndd.jpeg_compression_distortion, samples, "FHWC", quality=_qualities([5, 75, 40, 100]))


def test_a_tensor_is_every_sample_of_a_batch_with_its_own_quality(any_gpu):
    image = _photo("coffee.jpg", 19, 26)
    gpu = ndd.jpeg_compression_distortion(
        ndd.tensor(image, layout="HWC").gpu(), batch_size=3, quality=_qualities([10, 60, 90])
    )
    assert gpu.batch_size == 3
    for sample, quality in zip(gpu.cpu(), (10, 60, 90), strict=True):
        cpu = ndd.jpeg_compression_distortion(ndd.tensor(image, layout="HWC"), quality=quality)
        np.testing.assert_array_equal(np.asarray(sample), np.asarray(cpu))


# A block whose inverse DCT at quality 1 reaches beyond 512 from the centre: libjpeg-turbo's
# SIMD inverse DCT saturates it, where its C code would wrap it around.
OVERSHOOT = [
    [83, 124, 79, 255, 0, 135, 101, 127],
    [19, 255, 8, 255, 148, 0, 0, 0],
    [255, 255, 0, 170, 255, 234, 0, 255],
    [255, 0, 255, 109, 31, 0, 255, 255],
    [255, 141, 0, 196, 255, 221, 255, 0],
    [255, 228, 0, 74, 112, 255, 255, 175],
    [244, 115, 129, 0, 141, 108, 255, 0],
    [185, 255, 255, 24, 0, 131, 199, 185],
]


def test_the_inverse_dct_saturates_as_libjpeg_turbo(any_gpu):
    image = np.full((16, 16, 3), 128, np.uint8)
    image[:8, :8] = np.array(OVERSHOOT, np.uint8)[..., None]
    check_tensor(ndd.jpeg_compression_distortion, image, "HWC", quality=1)


def test_quantization_tables_are_those_pillow_writes():
    image = Image.fromarray(np.zeros((8, 8, 3), np.uint8))
    for quality in range(1, 101):
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=quality, subsampling=2)
        tables = Image.open(buffer).quantization
        np.testing.assert_array_equal(np.array([tables[0], tables[1]]), quantization_table(quality))


def test_the_reciprocals_divide_with_rounding_half_up():
    magnitudes = np.arange(1 << 15, dtype=np.int64)
    for quality in (1, 10, 50, 90, 100):
        table = quality_table(quality).astype(np.int64).reshape(4, 128)
        for values, reciprocal, correction, shift in table.T:
            divisor = 8 * values
            quotients = ((magnitudes + correction) * reciprocal) >> shift
            np.testing.assert_array_equal(quotients, (magnitudes + divisor // 2) // divisor)


# -- what is launched, what is refused ------------------------------------------------------


def test_a_ragged_batch_is_two_launches_with_a_row_per_frame(fake):
    samples = [np.zeros(s, np.uint8) for s in [(3, 9, 14, 3), (1, 40, 7, 3), (0, 4, 4, 3), (2, 1, 1, 3)]]
    fake.launches.clear()
    ndd.jpeg_compression_distortion(
        ndd.batch(samples, layout="FHWC").gpu(), quality=_qualities([1, 2, 3, 4])
    ).evaluate()
    launches = [launch for launch in fake.launches if launch.function.startswith("jpeg_")]
    assert [launch.function for launch in launches] == ["jpeg_distortion_code", "jpeg_distortion_rgb"]
    assert all(launch.grid[1] == 6 for launch in launches)
    # The largest frame (40x7) has 3 units: one block of 4.
    assert launches[0].grid[0] == 1 and launches[0].block[0] == 256


def test_an_empty_image_is_refused_as_on_the_cpu(any_gpu):
    image = np.zeros((0, 5, 3), np.uint8)
    with pytest.raises(ValueError, match="cannot write empty image"):
        ndd.jpeg_compression_distortion(ndd.tensor(image, layout="HWC")).evaluate()
    with pytest.raises(ValueError, match="cannot write empty image"):
        ndd.jpeg_compression_distortion(ndd.tensor(image, layout="HWC").gpu()).evaluate()


def test_frames_beyond_jpegs_limit_are_refused(fake):
    image = ndd.tensor(np.zeros((1, 65501, 3), np.uint8), layout="HWC").gpu()
    with pytest.raises(ValueError, match="at most 65500 pixels high and wide"):
        ndd.jpeg_compression_distortion(image).evaluate()


def test_an_input_in_host_memory_is_refused_on_the_gpu(fake):
    image = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")
    with pytest.raises(
        NotImplementedError, match="ndd.jpeg_compression_distortion on the GPU: an input in host"
    ):
        ndd.jpeg_compression_distortion(image, device="gpu")
