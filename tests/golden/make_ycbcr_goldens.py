"""Record the reference's YCbCr of 8-bit RGB images: ``decoders.image(...,
output_type=YCbCr)`` of a PNG holding every one of the 2^24 colours once.

Run with the reference's Python (DALI 2.4.0):

    $HOME/dali-ref/bin/python tests/golden/make_ycbcr_goldens.py

Writes ``ycbcr_values.npz``: ``rgb`` (N, 3) uint8 colours and ``ycbcr`` (N, 3) uint8,
the reference's values for them. Kept: every colour where the reference's value is not
the nearest integer of the exact BT.601 studio-range value (its single-precision
arithmetic lands on the other side of a half), every colour where the exact value is
within 0.00002 of a half (where a rule can go either way), and 4,096 others drawn at random.
"""

import io
import pathlib

import numpy as np
import nvidia.dali.experimental.dynamic as ndd
from nvidia.dali import types
from PIL import Image

HERE = pathlib.Path(__file__).parent
# BT.601 studio range, exact: Y in [16, 235], Cb and Cr in [16, 240].
KR, KB = 0.299, 0.114
KG = 1 - KR - KB
FULL = np.array(
    [
        [KR, KG, KB],
        [-KR / (2 * (1 - KB)), -KG / (2 * (1 - KB)), 0.5],
        [0.5, -KG / (2 * (1 - KR)), -KB / (2 * (1 - KR))],
    ]
)
STUDIO = FULL * np.array([[219 / 255], [224 / 255], [224 / 255]])
OFFSET = np.array([16.0, 128.0, 128.0])


def main():
    v = np.arange(1 << 24, dtype=np.uint32)
    rgb = np.stack([(v >> 16) & 255, (v >> 8) & 255, v & 255], -1).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(rgb.reshape(4096, 4096, 3)).save(buf, format="PNG", compress_level=1)
    data = ndd.as_tensor(np.frombuffer(buf.getvalue(), np.uint8))
    ycbcr = np.asarray(ndd.decoders.image(data, output_type=types.YCbCr)).reshape(-1, 3)
    exact = rgb.astype(np.float64) @ STUDIO.T + OFFSET
    other_side = (np.floor(exact + 0.5) != ycbcr).any(axis=1)
    near_half = (np.abs(exact - np.floor(exact) - 0.5) < 0.00002).any(axis=1)
    keep = other_side | near_half
    keep[np.random.default_rng(0).choice(len(rgb), 4096, replace=False)] = True
    np.savez_compressed(HERE / "ycbcr_values.npz", rgb=rgb[keep], ycbcr=ycbcr[keep])
    print(f"{int(other_side.sum())} colours off the nearest integer, {int(keep.sum())} kept")


if __name__ == "__main__":
    main()
