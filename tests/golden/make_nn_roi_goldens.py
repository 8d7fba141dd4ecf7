"""The input pixels the reference's nearest-neighbour ``resize`` takes with a region of
interest inside the image (flipped or not), per axis.

Run with the reference's Python (DALI 2.4.0):

    $HOME/dali-ref/bin/python tests/golden/make_nn_roi_goldens.py

Images whose two channels are their row and column indices are resized; the first
column of channel 0 and the first row of channel 1 name the pixels taken along each
axis. Writes ``nn_roi_cases.json`` (sizes and regions) and ``nn_roi_values.npz``
(``rows<i>``, ``columns<i>``). Regions reaching past the image are left out: there
the reference reads pixels it should not (a second shift by the region's start, and
past the last column), which ndd does not copy.
"""

import json
import pathlib

import numpy as np
import nvidia.dali.experimental.dynamic as ndd
from nvidia.dali import types

HERE = pathlib.Path(__file__).parent


def main():
    rng = np.random.default_rng(4)
    cases, values = [], {}
    while len(cases) < 150:
        h, w = (int(x) for x in rng.integers(3, 160, 2))
        oh, ow = (int(x) for x in rng.integers(1, 200, 2))
        starts = [float(np.round(rng.uniform(0, h), 2)), float(np.round(rng.uniform(0, w), 2))]
        ends = [float(np.round(rng.uniform(0, h), 2)), float(np.round(rng.uniform(0, w), 2))]
        if abs(starts[0] - ends[0]) < 1 or abs(starts[1] - ends[1]) < 1:
            continue
        image = np.stack(np.meshgrid(np.arange(h), np.arange(w), indexing="ij"), -1).astype(np.uint16)
        out = ndd.resize(
            ndd.as_tensor(image, layout="HWC"),
            size=[oh, ow],
            interp_type=types.INTERP_NN,
            roi_start=starts,
            roi_end=ends,
        )
        out = np.asarray(out)
        values[f"rows{len(cases)}"] = out[:, 0, 0].copy()
        values[f"columns{len(cases)}"] = out[0, :, 1].copy()
        cases.append({"in": [h, w], "out": [oh, ow], "roi_start": starts, "roi_end": ends})
    (HERE / "nn_roi_cases.json").write_text(json.dumps(cases, separators=(",", ":")) + "\n")
    np.savez_compressed(HERE / "nn_roi_values.npz", **values)
    print(f"{len(cases)} cases")


if __name__ == "__main__":
    main()
