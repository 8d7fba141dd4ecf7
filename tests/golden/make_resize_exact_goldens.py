"""Integer resizes from the reference, for the tests that ndd's equal them to the bit.

Run with the reference's Python (DALI 2.4.0):

    $HOME/dali-ref/bin/python tests/golden/make_resize_exact_goldens.py

Random small images (uint8, uint16 and int16; HWC, CHW, FHWC and DHWC), resized with
the linear, cubic, triangular, Gaussian and Lanczos filters, up and down, with and without
antialiasing, regions of interest and flips. Writes ``resize_exact.json`` (per case:
the input's seed, shape, type and layout, and the keyword arguments) and
``resize_exact.npz`` (``case<i>``: the output). The test rebuilds each input with
``make_input``.
"""

import json
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).parent
FILTERS = ["INTERP_LINEAR", "INTERP_CUBIC", "INTERP_TRIANGULAR", "INTERP_GAUSSIAN", "INTERP_LANCZOS3"]
RANGES = {"uint8": (0, 256), "uint16": (0, 1200), "int16": (-400, 400)}


def make_input(seed, shape, dtype):
    low, high = RANGES[dtype]
    return np.random.default_rng(seed).integers(low, high, shape).astype(dtype)


def _case(rng, index):
    layout = ["HWC", "HWC", "HWC", "CHW", "FHWC", "DHWC"][index % 6]
    dtype = ["uint8", "uint8", "uint16", "int16"][index % 4]
    spatial = 3 if layout == "DHWC" else 2
    sizes = [int(x) for x in rng.integers(2, 9 if spatial == 3 else 30, spatial)]
    channels = int(rng.choice([1, 3, 4]))
    shape = {
        "HWC": [*sizes, channels],
        "CHW": [channels, *sizes],
        "FHWC": [2, *sizes, channels],
        "DHWC": [*sizes, channels],
    }[layout]
    out = []
    for n in sizes:
        scale = float(rng.choice([0.5, 1.0, 2.0, 3.0, rng.uniform(0.3, 2.5)]))
        out.append(max(1, round(n * scale)))
    kwargs = {"size": out, "interp_type": FILTERS[index % len(FILTERS)], "antialias": bool(index % 3)}
    if index % 5 == 1:
        starts, ends = [], []
        for n in sizes:
            a, b = (float(x) for x in np.round(rng.uniform(-1.5, n + 1.5, 2), 2))
            if abs(a - b) < 1:
                b = a + 1.5
            starts.append(a)
            ends.append(b)
        kwargs["roi_start"] = starts
        kwargs["roi_end"] = ends
    return {"seed": 1000 + index, "shape": shape, "dtype": dtype, "layout": layout, "kwargs": kwargs}


def main():
    import nvidia.dali.experimental.dynamic as ndd
    from nvidia.dali import types

    rng = np.random.default_rng(26)
    cases, values = [], {}
    for index in range(150):
        case = _case(rng, index)
        image = make_input(case["seed"], case["shape"], case["dtype"])
        kwargs = dict(case["kwargs"], interp_type=getattr(types, case["kwargs"]["interp_type"]))
        out = ndd.resize(ndd.as_tensor(image, layout=case["layout"]), **kwargs)
        values[f"case{len(cases)}"] = np.asarray(out)
        cases.append(case)
    (HERE / "resize_exact.json").write_text(json.dumps(cases, indent=0) + "\n")
    np.savez_compressed(HERE / "resize_exact.npz", **values)
    print(f"{len(cases)} cases")


if __name__ == "__main__":
    main()
