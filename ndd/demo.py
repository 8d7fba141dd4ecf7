"""``python -m ndd.demo``: the augmentation loop of an image classifier, on bundled photographs.

A ``readers.File`` reads the JPEG photographs in ``ndd/_sample_data/photos`` (public-domain and CC0
pictures, see ``SOURCES.md`` there) in a seeded random order; every batch goes through

    decoders.image -> random_resized_crop(224x224) -> flip(horizontal=coin flip)
    -> crop_mirror_normalize(float32, CHW, ImageNet mean and std)

for a few epochs. The demo prints the images per second of each epoch and writes the last augmented batch
(normalisation undone) as a PNG grid, at the path it prints.

    python -m ndd.demo [--epochs 5] [--batch-size 16] [--output demo_output/augmented_batch.png]
"""

import argparse
import pathlib
import time

import numpy as np
from PIL import Image

import ndd
from ndd.display import image_grid

PHOTOS = pathlib.Path(__file__).parent / "_sample_data" / "photos"
CROP_SIZE = 224
MEAN = np.array([0.485, 0.456, 0.406]) * 255
STD = np.array([0.229, 0.224, 0.225]) * 255
# The photographs are few: the file list repeats them so that an epoch holds a few batches
# (7 photographs x 16 = 112 files, 7 full batches of 16).
REPEATS_PER_EPOCH = 16


def photo_files():
    """The bundled photographs, each listed ``REPEATS_PER_EPOCH`` times."""
    return sorted(str(p) for p in PHOTOS.glob("*.jpg")) * REPEATS_PER_EPOCH


def augment(encoded: ndd.Batch, rng: ndd.random.RNG) -> ndd.Batch:
    """Encoded JPEGs -> float32 CHW 224x224 images: random crop and scale, random mirror, normalisation."""
    images = ndd.decoders.image(encoded)
    cropped = ndd.random_resized_crop(images, size=[CROP_SIZE, CROP_SIZE], rng=rng)
    mirror = ndd.random.coin_flip(batch_size=encoded.batch_size, probability=0.5, rng=rng)
    flipped = ndd.flip(cropped, horizontal=mirror)
    return ndd.crop_mirror_normalize(
        flipped, dtype=ndd.float32, output_layout="CHW", mean=MEAN.tolist(), std=STD.tolist()
    )


def grid_image(batch: np.ndarray, columns: int = 4) -> Image.Image:
    """Normalised float NCHW images -> one RGB picture of them side by side (2-pixel gaps)."""
    return image_grid(batch, columns=columns, layout="CHW", mean=MEAN, std=STD)


def run(epochs: int, batch_size: int, output: pathlib.Path, seed: int = 42) -> np.ndarray:
    """Run the augmentation loop, write the grid of the last batch to ``output``; return that batch."""
    files = photo_files()
    reader = ndd.readers.File(files=files, random_shuffle=True, seed=seed)
    rng = ndd.random.RNG(seed=seed)
    print(
        f"{len(files) // REPEATS_PER_EPOCH} photographs from {PHOTOS}, each {REPEATS_PER_EPOCH} times per epoch"
    )
    print(
        "decoders.image -> random_resized_crop(224x224) -> flip(coin) -> "
        "crop_mirror_normalize(float32, CHW, ImageNet mean/std)"
    )
    last = None
    total_images, total_seconds = 0, 0.0
    for epoch in range(epochs):
        start = time.perf_counter()
        images = 0
        for encoded, _labels in reader.next_epoch(batch_size=batch_size):
            last = np.asarray(ndd.as_tensor(augment(encoded, rng)))
            images += last.shape[0]
        seconds = time.perf_counter() - start
        print(f"epoch {epoch}: {images} images in {seconds * 1e3:.0f} ms, {images / seconds:.0f} images/s")
        if epoch > 0 or epochs == 1:  # the first epoch also starts threads and fills caches
            total_images, total_seconds = total_images + images, total_seconds + seconds
    print(
        f"last batch: shape {last.shape} dtype {last.dtype}, mean {last.mean():.3f}, std {last.std():.3f} "
        "(ImageNet-normalised)"
    )
    print(f"throughput: {total_images / total_seconds:.0f} images/s ({ndd.get_num_threads()} threads)")
    output.parent.mkdir(parents=True, exist_ok=True)
    grid_image(last).save(output)
    print(f"wrote the augmented batch as a grid to {output.resolve()}")
    return last


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--output", type=pathlib.Path, default=pathlib.Path("demo_output/augmented_batch.png")
    )
    args = parser.parse_args(argv)
    run(args.epochs, args.batch_size, args.output, args.seed)


if __name__ == "__main__":
    main()
