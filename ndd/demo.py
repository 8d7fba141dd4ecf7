"""``python -m ndd.demo``: a small preprocessing job on the bundled sample images.

A ``readers.File`` reads the files (in a seeded random order), Pillow decodes
them (ndd's own decoders come with the image issue), then the batch is
augmented with a seeded random brightness and normalised the way a training
loop would, printing what each step produced and how long it took.
"""

import io
import pathlib
import time

import numpy as np
from PIL import Image

import ndd

SAMPLES = pathlib.Path(__file__).parent / "_sample_data" / "images"


def load_images():
    """One epoch of the sample images: their paths, decoded pixels and labels."""
    files = sorted(str(p) for p in SAMPLES.glob("*.png"))
    reader = ndd.readers.File(files=files, random_shuffle=True, seed=42)
    (encoded, labels) = next(iter(reader.next_epoch(batch_size=len(files))))
    paths = [
        pathlib.Path(bytes(np.asarray(info)).decode())
        for info in ndd.get_property(encoded, key="source_info").tensors
    ]
    pixels = [
        np.asarray(Image.open(io.BytesIO(bytes(np.asarray(t)))).convert("RGB")) for t in encoded.tensors
    ]
    return paths, pixels, labels


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
    paths, arrays, labels = load_images()
    images = ndd.batch(arrays, layout="HWC")
    print(f"read {images.batch_size} images from {SAMPLES} (shuffled, seed 42):")
    for path, shape, label in zip(paths, images.shape, labels.tensors, strict=True):
        print(f"  {path.name:<12} {shape} label {int(np.asarray(label)[0])}")

    start = time.perf_counter()
    brightness = ndd.random.uniform(
        batch_size=images.batch_size, range=[0.8, 1.2], rng=ndd.random.RNG(seed=7)
    )
    print(f"\nrandom brightness per image: {np.round(np.asarray(ndd.as_tensor(brightness)), 3).tolist()}")
    brighter = ndd.cast(
        ndd.math.min(ndd.cast(images, dtype=ndd.float32) * brightness, 255.0), dtype=ndd.uint8
    )
    out = preprocess(brighter)
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

    one_hot = ndd.one_hot(ndd.reshape(labels, shape=[]), num_classes=images.batch_size)
    print(f"\none-hot labels:\n{np.asarray(ndd.as_tensor(one_hot))}")


if __name__ == "__main__":
    main()
