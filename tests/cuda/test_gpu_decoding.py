"""GPU image decoding (ndd/_ops/gpu_decoding.py) through nvImageCodec, compared
with the CPU decoders.

On the host run (``decoding`` = "host") nvImageCodec decodes with its CPU codecs
(libjpeg-turbo, libpng, ...), which give the CPU decoders' pixels exactly, and the
FakeDriver takes the copies into the batch; this proves the mapping of results to
samples, the windows, the errors and the copies. On a real GPU ("device") nvJPEG
decodes: its IDCT and upsampling differ from libjpeg-turbo's by a few levels.
"""

import io
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")
nvimgcodec = pytest.importorskip("nvidia.nvimgcodec")

from PIL import Image  # noqa: E402

import ndd  # noqa: E402
from ndd._ops import gpu_decoding  # noqa: E402
from ndd._ops.image_codec import ImageDecodeError  # noqa: E402

PHOTOS = Path(ndd.__file__).parent / "_sample_data" / "photos"


def photo_paths():
    return sorted(PHOTOS.glob("*.jpg"))


@pytest.fixture
def decoding(any_gpu, monkeypatch):
    """nvImageCodec with its CPU codecs only on the host run, all of them on a GPU."""
    if any_gpu == "host":
        monkeypatch.setattr(
            gpu_decoding,
            "make_decoder",
            lambda device_id: nvimgcodec.Decoder(
                device_id=nvimgcodec.NVIMGCODEC_DEVICE_CPU_ONLY,
                backends=[nvimgcodec.Backend(nvimgcodec.BackendKind.CPU_ONLY)],
            ),
        )
    monkeypatch.setattr(gpu_decoding, "_decoders", {})
    monkeypatch.setattr(gpu_decoding, "_spare", {})
    yield any_gpu


def _encoded(paths):
    return [np.fromfile(p, np.uint8) for p in paths]


def _png(array):
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return np.frombuffer(buffer.getvalue(), np.uint8)


def _jpeg_with_orientation(array, orientation):
    buffer = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = orientation
    Image.fromarray(array).save(buffer, format="JPEG", quality=92, exif=exif.tobytes())
    return np.frombuffer(buffer.getvalue(), np.uint8)


def _assert_decoded_alike(gpu_batch, cpu_batch, decoding):
    assert gpu_batch.device.device_type == "gpu"
    assert gpu_batch.dtype == cpu_batch.dtype and gpu_batch.layout == cpu_batch.layout == "HWC"
    for g, c in zip(gpu_batch.cpu(), cpu_batch, strict=True):
        g, c = np.asarray(g), np.asarray(c)
        assert g.shape == c.shape
        if decoding == "host":
            np.testing.assert_array_equal(g, c)
        else:
            # nvJPEG against libjpeg-turbo: a few levels apart at most, equal on average.
            difference = np.abs(g.astype(np.int16) - c.astype(np.int16))
            assert difference.max() <= 8 and difference.mean() < 1.0


@pytest.mark.parametrize("output_type", [ndd.types.RGB, ndd.types.BGR, ndd.types.GRAY, ndd.types.ANY_DATA])
def test_decoding_a_batch_of_photographs_matches_the_cpu(output_type, decoding):
    encoded = _encoded(photo_paths()[:4])
    gpu = ndd.decoders.image(ndd.batch(encoded), device="gpu", output_type=output_type)
    cpu = ndd.decoders.image(ndd.batch(encoded), output_type=output_type)
    _assert_decoded_alike(gpu, cpu, decoding)


def test_decoding_pngs_with_and_without_alpha_matches_the_cpu(decoding):
    rng = np.random.default_rng(0)
    encoded = [
        _png(rng.integers(0, 256, (13, 17, 3), dtype=np.uint8)),
        _png(rng.integers(0, 256, (9, 5, 4), dtype=np.uint8)),
    ]
    for output_type in (ndd.types.RGB, ndd.types.ANY_DATA):
        gpu = ndd.decoders.image(ndd.batch(encoded), device="gpu", output_type=output_type)
        cpu = ndd.decoders.image(ndd.batch(encoded), output_type=output_type)
        _assert_decoded_alike(gpu, cpu, "host")


@pytest.mark.parametrize("adjust", [True, False])
def test_the_exif_orientation_is_applied_as_on_the_cpu(adjust, decoding):
    rng = np.random.default_rng(1)
    picture = np.repeat(np.repeat(rng.integers(0, 256, (6, 10, 3), dtype=np.uint8), 8, 0), 8, 1)
    encoded = [_jpeg_with_orientation(picture, o) for o in (1, 3, 6, 8)]
    gpu = ndd.decoders.image(ndd.batch(encoded), device="gpu", adjust_orientation=adjust)
    cpu = ndd.decoders.image(ndd.batch(encoded), adjust_orientation=adjust)
    _assert_decoded_alike(gpu, cpu, decoding)


def test_crop_decoders_keep_the_cpus_windows(decoding):
    encoded = _encoded(photo_paths()[:3])
    kwargs = dict(crop=(64, 96), crop_pos_x=0.25, crop_pos_y=0.8)
    _assert_decoded_alike(
        ndd.decoders.image_crop(ndd.batch(encoded), device="gpu", **kwargs),
        ndd.decoders.image_crop(ndd.batch(encoded), **kwargs),
        decoding,
    )
    _assert_decoded_alike(
        ndd.decoders.image_random_crop(ndd.batch(encoded), device="gpu", rng=ndd.random.RNG(seed=5)),
        ndd.decoders.image_random_crop(ndd.batch(encoded), rng=ndd.random.RNG(seed=5)),
        decoding,
    )
    single = ndd.tensor(encoded[0])
    gpu = ndd.decoders.image_crop(single, device="gpu", **kwargs)
    cpu = ndd.decoders.image_crop(single, **kwargs)
    assert gpu.device.device_type == "gpu" and gpu.shape == cpu.shape == (64, 96, 3)
    if decoding == "host":
        np.testing.assert_array_equal(np.asarray(gpu.cpu()), np.asarray(cpu))


def test_image_slice_keeps_the_cpus_windows(decoding):
    encoded = _encoded(photo_paths()[:3])
    _assert_decoded_alike(
        ndd.decoders.image_slice(ndd.batch(encoded), device="gpu", start=[10, 20], shape=[50, 40]),
        ndd.decoders.image_slice(ndd.batch(encoded), start=[10, 20], shape=[50, 40]),
        decoding,
    )
    anchor = ndd.batch([np.array([0.1, 0.2], np.float32)] * 3)
    shape = ndd.batch([np.array([0.5, 0.25], np.float32)] * 3)
    _assert_decoded_alike(
        ndd.decoders.image_slice(ndd.batch(encoded), anchor, shape, device="gpu"),
        ndd.decoders.image_slice(ndd.batch(encoded), anchor, shape),
        decoding,
    )


def test_a_corrupt_sample_names_itself_and_keeps_the_others(decoding):
    good = _encoded(photo_paths()[:2])
    corrupt = np.frombuffer(b"\xff\xd8\xff\xe0 not a jpeg at all", np.uint8)
    result = ndd.decoders.image(ndd.batch([good[0], corrupt, good[1]]), device="gpu")
    with pytest.raises(ImageDecodeError, match=r"ndd.decoders.image: cannot decode \(sample 1\)") as info:
        result.evaluate()
    error = info.value if info.value.failed else info.value.__cause__
    assert error.failed == (1,)
    assert error.decoded[1] is None
    cpu = ndd.decoders.image(ndd.batch(good))
    for decoded, expected in zip([error.decoded[0], error.decoded[2]], cpu, strict=True):
        assert tuple(decoded.shape) == np.asarray(expected).shape


def test_outputs_the_gpu_path_lacks_are_refused_at_the_call(fake):
    encoded = ndd.batch(_encoded(photo_paths()[:1]))
    with pytest.raises(NotImplementedError, match=r"ndd.decoders.image on the GPU: 'dtype' f32"):
        ndd.decoders.image(encoded, device="gpu", dtype=ndd.float32)
    with pytest.raises(NotImplementedError, match=r"ndd.decoders.image on the GPU: 'output_type' YCbCr"):
        ndd.decoders.image(encoded, device="gpu", output_type=ndd.types.YCbCr)


def _training_step(encoded, device, seed):
    images = ndd.decoders.image(encoded, device=device)
    cropped = ndd.random_resized_crop(images, size=[56, 56], rng=ndd.random.RNG(seed=seed))
    coin = ndd.random.coin_flip(batch_size=encoded.batch_size, rng=ndd.random.RNG(seed=seed + 1))
    flipped = ndd.flip(cropped, horizontal=coin)
    return ndd.crop_mirror_normalize(
        flipped, dtype=ndd.float32, output_layout="CHW", mean=[124.0, 116.0, 104.0], std=[58.0, 57.0, 57.0]
    )


def _validation_step(encoded, device):
    resized = ndd.resize(ndd.decoders.image(encoded, device=device), resize_shorter=64)
    return ndd.crop_mirror_normalize(resized, crop=[56, 56], dtype=ndd.float16, output_layout="CHW")


def test_the_training_and_validation_pipelines_run_on_the_gpu_as_on_the_cpu(decoding):
    encoded = ndd.batch(_encoded(photo_paths()[:3]))
    # The training step divides by std (about 57); the validation step keeps pixel levels.
    for gpu, cpu, levels_per_unit in (
        (_training_step(encoded, "gpu", 7), _training_step(encoded, "cpu", 7), 57.0),
        (_validation_step(encoded, "gpu"), _validation_step(encoded, "cpu"), 1.0),
    ):
        assert gpu.device.device_type == "gpu"
        gpu_values, cpu_values = np.asarray(ndd.as_tensor(gpu).cpu()), np.asarray(ndd.as_tensor(cpu))
        assert gpu_values.shape == cpu_values.shape and gpu_values.dtype == cpu_values.dtype
        if decoding == "host":
            np.testing.assert_array_equal(gpu_values, cpu_values)
        else:
            # nvJPEG against libjpeg-turbo, as _assert_decoded_alike: a few levels apart at
            # most, equal on average (an H200 gave up to 2 levels on 29% of the values).
            levels = np.abs(gpu_values.astype(np.float32) - cpu_values.astype(np.float32)) * levels_per_unit
            assert levels.max() <= 8.5 and levels.mean() < 1.0


@pytest.mark.gpu
def test_the_training_step_feeds_a_cuda_model_without_a_copy():
    """The tutorial's loop on a GPU: decoded and augmented there, handed to PyTorch as
    the batch's own GPU memory."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    encoded = ndd.batch(_encoded(photo_paths()[:3]))
    batch = ndd.as_tensor(_training_step(encoded, "gpu", 7))
    inputs = batch.torch()
    assert inputs.is_cuda and tuple(inputs.shape) == (3, 3, 56, 56)
    assert inputs.data_ptr() == batch.__cuda_array_interface__["data"][0]
    model = torch.nn.Conv2d(3, 4, 3).cuda()
    assert model(inputs).is_cuda


def test_a_batch_is_decoded_into_the_images_of_an_earlier_one(decoding):
    # Once the copies out of a batch's decoded images are done, the next batch of as
    # many images decodes into them (nvImageCodec reuses their buffers), whatever
    # their sizes; a larger batch than the spares gets new images.
    paths = photo_paths()
    given = []
    real_decoder = gpu_decoding._decoder

    class Spy:
        def __init__(self, decoder):
            self.decoder = decoder

        def decode(self, streams, images=None, **kwargs):
            given.append(images)
            return self.decoder.decode(streams, images=images, **kwargs)

    spies = {}

    def spying(device_id):
        decoder = real_decoder(device_id)
        return spies.setdefault(id(decoder), Spy(decoder))

    gpu_decoding._decoder = spying
    try:
        batches = [paths[:3], paths[1:4][::-1], [paths[0], *paths[2:4]], paths[:4]]
        for files in batches:
            encoded = ndd.batch(_encoded(files))
            gpu = ndd.decoders.image(encoded, device="gpu")
            _assert_decoded_alike(gpu, ndd.decoders.image(encoded), decoding)
            ndd.get_current_stream().synchronize()
    finally:
        gpu_decoding._decoder = real_decoder
    assert given[0] is None and given[3] is None  # nothing spare yet; too few spares
    assert len(given[1]) == 3 and len(given[2]) == 3


def test_decoding_runs_on_the_decoders_own_stream_that_the_callers_then_waits_for(decoding):
    # nvImageCodec waits on the host for the stream it decodes on: given the caller's,
    # each batch would wait for the GPU work of the batch before. It gets its own;
    # the caller's stream waits (on the GPU) for the decoded images, before the copy.
    if decoding != "host":
        pytest.skip("what is queued where is seen on the FakeDriver")
    from ndd._cuda import driver

    fake = driver.api()
    given = []
    real_decoder = gpu_decoding._decoder

    class Spy:
        def __init__(self, decoder):
            self.decoder = decoder

        def decode(self, streams, cuda_stream=0, **kwargs):
            given.append(cuda_stream)
            return self.decoder.decode(streams, cuda_stream=cuda_stream, **kwargs)

    spy = {}
    gpu_decoding._decoder = lambda device_id: spy.setdefault(0, Spy(real_decoder(device_id)))
    try:
        encoded = ndd.batch(_encoded(photo_paths()[:2]))
        caller = int(ndd.get_current_stream().handle)
        fake.calls.clear()
        gpu = ndd.decoders.image(encoded, device="gpu").evaluate()
    finally:
        gpu_decoding._decoder = real_decoder
    decode_stream = given[0]
    assert decode_stream not in (0, caller)
    record = max(i for i, (kind, _) in enumerate(fake.streams[decode_stream]) if kind == "record")
    event = fake.streams[decode_stream][record][1]
    assert ("wait", event) in fake.streams[caller]
    # (The CPU codecs leave their images in host memory: copied one by one.)
    first_copy = next(i for i, name in enumerate(fake.calls) if name in ("cuLaunchKernel", "cuMemcpy2DAsync"))
    assert fake.calls.index("cuStreamWaitEvent") < first_copy
    _assert_decoded_alike(gpu, ndd.decoders.image(encoded), decoding)
