"""``python -m ndd.demo``: a small preprocessing job on the bundled sample images.

The images are read with Pillow (ndd's own decoders come with the image issue),
then batched and normalised the way a training loop would, printing what each
step produced and how long the whole batch took.
"""

import pathlib
import time

import numpy as np
from PIL import Image

import ndd

SAMPLES = pathlib.Path(__file__).parent / "_sample_data" / "images"


def load_images():
    paths = sorted(SAMPLES.glob("*.png"))
    return paths, [np.asarray(Image.open(p).convert("RGB")) for p in paths]


def preprocess(images: ndd.Batch) -> ndd.Batch:
    """uint8 HWC images -> float32 CHW, each channel normalised per image, all
    padded to the largest image."""
    pixels = ndd.cast(images, dtype=ndd.float32) / 255
    mean = ndd.reductions.mean(pixels, axis_names="HW", keep_dims=True)
    std = ndd.reductions.std_dev(pixels, mean, axis_names="HW", keep_dims=True)
    normalized = (pixels - mean) / ndd.math.max(std, 1e-6)
    padded = ndd.pad(normalized, fill_value=0.0)
    return ndd.transpose(padded, perm=[2, 0, 1])


def main():
    paths, arrays = load_images()
    images = ndd.batch(arrays, layout="HWC")
    print(f"loaded {images.batch_size} images from {SAMPLES}:")
    for path, shape in zip(paths, images.shape, strict=True):
        print(f"  {path.name:<12} {shape}")

    start = time.perf_counter()
    out = preprocess(images)
    print(f"\nprepared (metadata known before the run): dtype={out.dtype} layout={out.layout}")
    stacked = ndd.as_tensor(out)  # waits for the asynchronous work
    elapsed = (time.perf_counter() - start) * 1e3
    print(f"stacked batch: shape={stacked.shape} dtype={stacked.dtype} in {elapsed:.1f} ms")

    flat = ndd.reshape(out, shape=[3, -1])
    per_channel_mean = ndd.reductions.mean(flat, axes=1)
    per_channel_std = ndd.reductions.std_dev(flat, ndd.reductions.mean(flat, axes=1, keep_dims=True), axes=1)
    print("\nper-image channel statistics after normalisation (padding included):")
    for path, m, s in zip(paths, per_channel_mean, per_channel_std, strict=True):
        print(f"  {path.name:<12} mean={np.round(np.asarray(m), 3)} std={np.round(np.asarray(s), 3)}")

    labels = ndd.tensor(np.arange(images.batch_size, dtype=np.int32) % 3)
    print(f"\none-hot labels:\n{np.asarray(ndd.one_hot(labels, num_classes=3))}")


if __name__ == "__main__":
    main()
