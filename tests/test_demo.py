"""The demo (``python -m ndd.demo``): runs, writes a PNG grid of its augmented batch."""

import numpy as np
from PIL import Image

from ndd import demo


def test_grid_image_undoes_the_normalisation_and_tiles_in_rows():
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (5, 6, 7, 3)).astype(np.float64)
    normalized = ((pixels - demo.MEAN) / demo.STD).transpose(0, 3, 1, 2).astype(np.float32)
    grid = np.asarray(demo.grid_image(normalized, columns=2))
    assert grid.shape == (3 * 6 + 2 * 2, 2 * 7 + 2, 3)
    for index in range(5):
        top, left = (index // 2) * 8, (index % 2) * 9
        np.testing.assert_array_equal(grid[top : top + 6, left : left + 7], pixels[index].astype(np.uint8))
    assert (grid[6:8] == 255).all() and (grid[:, 7:9] == 255).all()
    assert (grid[16:, 9:] == 255).all()  # the sixth cell is empty


def test_demo_writes_the_augmented_batch(tmp_path, capsys):
    output = tmp_path / "out" / "grid.png"
    demo.main(["--epochs", "2", "--batch-size", "8", "--output", str(output)])
    printed = capsys.readouterr().out
    assert "images/s" in printed and str(output) in printed
    with Image.open(output) as image:
        assert image.format == "PNG" and image.mode == "RGB"
        assert image.size == (4 * 224 + 3 * 2, 2 * 224 + 2)
        grid = np.asarray(image)
    tiles = [grid[r * 226 : r * 226 + 224, c * 226 : c * 226 + 224] for r in range(2) for c in range(4)]
    # Real photographs: every tile has detail, and random crops make the tiles differ.
    assert all(tile.std() > 5 for tile in tiles)
    assert len({tile.tobytes() for tile in tiles}) == 8


def test_demo_batch_is_normalized_float_chw(tmp_path):
    batch = demo.run(epochs=1, batch_size=8, output=tmp_path / "grid.png", seed=3)
    assert batch.shape == (8, 3, 224, 224) and batch.dtype == np.float32
    # ImageNet-normalised photographs: values within (0 - mean) / std and (255 - mean) / std per channel.
    low = (-demo.MEAN / demo.STD).reshape(3, 1, 1)
    high = ((255 - demo.MEAN) / demo.STD).reshape(3, 1, 1)
    assert (batch >= low - 1e-4).all() and (batch <= high + 1e-4).all()
    assert abs(float(batch.mean())) < 1.5 and 0.5 < float(batch.std()) < 2.0


def test_demo_is_reproducible_from_its_seed(tmp_path):
    first = demo.run(epochs=1, batch_size=8, output=tmp_path / "a.png", seed=5)
    again = demo.run(epochs=1, batch_size=8, output=tmp_path / "b.png", seed=5)
    other = demo.run(epochs=1, batch_size=8, output=tmp_path / "c.png", seed=6)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
