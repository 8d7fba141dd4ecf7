"""The reference's resampling weights, read off its float32 output.

Run with the reference's Python (DALI 2.4.0):

    $HOME/dali-ref/bin/python tests/golden/make_resample_weight_goldens.py

An identity matrix (rows: input columns) resized along its columns only gives, in
row r of the (transposed) float32 output, the weight of input column r in every
output column: the filter table as the reference builds it. The rows keep their
size, so the row pass copies them: linear, cubic and triangular weights are exactly 0
and 1 between whole pixels; the Lanczos and Gaussian cases scale the columns down,
with nearest neighbour (``mag_filter``) for the rows. Regions of interest are given
to the first three only (the reference shifts a region by its start a second time
where it combines one with a nearest-neighbour pass). Writes ``resample_weights.json`` (the
cases) and ``resample_weights.npz`` (``case<i>``: output columns x input columns).
"""

import json
import pathlib

import numpy as np
import nvidia.dali.experimental.dynamic as ndd
from nvidia.dali import types

HERE = pathlib.Path(__file__).parent
FILTERS = ["INTERP_LINEAR", "INTERP_CUBIC", "INTERP_TRIANGULAR", "INTERP_LANCZOS3", "INTERP_GAUSSIAN"]
EXACT = ["INTERP_LINEAR", "INTERP_CUBIC", "INTERP_TRIANGULAR"]


def weights(n_in, n_out, interp, antialias, roi):
    image = np.eye(n_in, dtype=np.float32)[:, :, None]
    kwargs = {"antialias": antialias, "dtype": types.FLOAT}
    if interp in EXACT:
        kwargs["interp_type"] = getattr(types, interp)
    else:
        kwargs["min_filter"] = getattr(types, interp)
        kwargs["mag_filter"] = types.INTERP_NN
    if roi:
        kwargs["roi_start"] = [0.0, roi[0]]
        kwargs["roi_end"] = [float(n_in), roi[1]]
    out = ndd.resize(ndd.as_tensor(image, layout="HWC"), size=[n_in, n_out], **kwargs)
    return np.asarray(out)[:, :, 0].T.copy()


def main():
    rng = np.random.default_rng(7)
    cases, values = [], {}
    for i in range(120):
        interp = FILTERS[i % len(FILTERS)]
        n_in = int(rng.integers(2, 48))
        n_out = int(rng.integers(1, 64))
        roi = None
        if i % 3 == 2 and interp in EXACT:
            a, b = (float(x) for x in np.round(rng.uniform(-3, n_in + 3, 2), 2))
            roi = [a, b] if abs(a - b) > 0.5 else None
        up = n_out >= (abs(roi[1] - roi[0]) if roi else n_in)
        if up and interp not in EXACT:
            continue  # the row pass would blur the identity
        antialias = bool(i % 4)
        values[f"case{len(cases)}"] = weights(n_in, n_out, interp, antialias, roi)
        cases.append({"n_in": n_in, "n_out": n_out, "interp": interp, "antialias": antialias, "roi": roi})
    (HERE / "resample_weights.json").write_text(json.dumps(cases, indent=0) + "\n")
    np.savez_compressed(HERE / "resample_weights.npz", **values)
    print(f"{len(cases)} cases")


if __name__ == "__main__":
    main()
