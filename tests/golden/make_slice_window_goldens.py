"""Record the windows the reference's ``slice`` and ``decoders.image_slice`` take
from relative arguments: the shapes of their outputs for start/rel_start with
rel_shape over a grid of fractions and image sizes (their rounding of ``rel_shape``
after ``rel_start``, which scales the sum of the fractions, is the behaviour under test).

Run with the reference's Python (DALI 2.4.0):

    $HOME/dali-ref/bin/python tests/golden/make_slice_window_goldens.py

Writes ``slice_window_cases.json``: one record per call with the image size, the
arguments (x, y order: the default axes) and the output's (height, width), or
``"error"`` when the reference refused the window.
"""

import io
import json
import pathlib

import numpy as np
import nvidia.dali.experimental.dynamic as ndd
from PIL import Image

HERE = pathlib.Path(__file__).parent
FRACTIONS = [0.0, 0.05, 0.1, 0.123, 0.15, 0.21, 0.25, 0.3, 0.333, 0.35, 0.45, 0.5, 0.55, 0.65, 0.7, 0.85]
SIZES = [(30, 50), (10, 10), (33, 47), (7, 5), (20, 14)]


def _shape(call):
    try:
        out = call()
        out = out.tensors[0] if hasattr(out, "tensors") else out
        return list(np.asarray(out).shape[:2])
    except Exception:  # noqa: BLE001 - a refused window is recorded as such
        return "error"


def main():
    rng = np.random.default_rng(0)
    cases = []
    for height, width in SIZES:
        png = io.BytesIO()
        Image.fromarray(np.zeros((height, width, 3), np.uint8)).save(png, "PNG")
        encoded = ndd.batch([np.frombuffer(png.getvalue(), np.uint8)])
        plain = ndd.tensor(np.zeros((height, width), np.uint8))
        for _ in range(40):
            rel_shape = [float(rng.choice(FRACTIONS)), float(rng.choice(FRACTIONS))]
            if rng.random() < 0.5:
                start = {"rel_start": [float(rng.choice(FRACTIONS)), float(rng.choice(FRACTIONS))]}
            else:
                start = {"start": [int(rng.integers(0, width // 3 + 1)), int(rng.integers(0, height // 3 + 1))]}
            kwargs = {**start, "rel_shape": rel_shape}
            cases.append(
                {
                    "size": [height, width],
                    "kwargs": kwargs,
                    "image_slice": _shape(lambda: ndd.decoders.image_slice(encoded, **kwargs)),
                    "slice": _shape(lambda: ndd.slice(plain, axes=[1, 0], **kwargs)),
                }
            )
    (HERE / "slice_window_cases.json").write_text(json.dumps(cases, indent=0) + "\n")
    print(f"{len(cases)} cases")


if __name__ == "__main__":
    main()
