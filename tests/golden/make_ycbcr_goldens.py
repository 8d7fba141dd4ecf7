"""Record the reference's YCbCr conversions of 8-bit values: ``decoders.image(...,
output_type=YCbCr)`` of a PNG holding every one of the 2^24 colours once, and
``color_space_conversion`` between RGB, BGR and YCbCr of the same 2^24 values.

Run with the reference's Python (DALI 2.4.0):

    $HOME/dali-ref/bin/python tests/golden/make_ycbcr_goldens.py

Writes ``ycbcr_values.npz``: for each conversion ``<name>_in`` (N, 3) uint8 values and
``<name>_out`` (N, 3) uint8, the reference's results for them; the names are
``decoder`` and ``RGB_YCbCr``, ``BGR_YCbCr``, ``YCbCr_RGB``, ``YCbCr_BGR``. Kept: every
value where the reference's result is not the nearest integer of the exact BT.601
studio-range value (its single-precision arithmetic lands on the other side of a half),
every value where the exact result is within 0.00002 of a half (where a rule can go
either way), and 1,024 others drawn at random.
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


def _exact(name, values):
    """The exact result of conversion ``name`` of (N, 3) values, in double precision."""
    x = values.astype(np.float64)
    if name.startswith("BGR"):
        x = x[:, ::-1]
    if name.startswith("YCbCr"):
        rgb = (x - OFFSET) @ np.linalg.inv(STUDIO).T
        return rgb[:, ::-1] if name.endswith("BGR") else rgb
    return x @ STUDIO.T + OFFSET


def _kept(name, values, result, rng):
    exact = _exact(name, values)
    other_side = (np.clip(np.floor(exact + 0.5), 0, 255) != result).any(axis=1)
    near_half = (np.abs(exact - np.floor(exact) - 0.5) < 0.00002).any(axis=1)
    keep = other_side | near_half
    keep[rng.choice(len(values), 1024, replace=False)] = True
    print(f"{name}: {int(other_side.sum())} values off the nearest integer, {int(keep.sum())} kept")
    return {f"{name}_in": values[keep], f"{name}_out": result[keep]}


def main():
    rng = np.random.default_rng(0)
    v = np.arange(1 << 24, dtype=np.uint32)
    values = np.stack([(v >> 16) & 255, (v >> 8) & 255, v & 255], -1).astype(np.uint8)
    image = values.reshape(4096, 4096, 3)
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="PNG", compress_level=1)
    data = ndd.as_tensor(np.frombuffer(buf.getvalue(), np.uint8))
    decoded = np.asarray(ndd.decoders.image(data, output_type=types.YCbCr)).reshape(-1, 3)
    record = _kept("decoder", values, decoded, rng)
    for source, target in [("RGB", "YCbCr"), ("BGR", "YCbCr"), ("YCbCr", "RGB"), ("YCbCr", "BGR")]:
        converted = ndd.color_space_conversion(
            ndd.as_tensor(image, layout="HWC"),
            image_type=getattr(types, source),
            output_type=getattr(types, target),
        )
        record.update(_kept(f"{source}_{target}", values, np.asarray(converted).reshape(-1, 3), rng))
    np.savez_compressed(HERE / "ycbcr_values.npz", **record)


if __name__ == "__main__":
    main()
