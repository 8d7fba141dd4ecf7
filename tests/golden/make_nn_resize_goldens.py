"""Record which input pixel the reference's nearest-neighbour ``resize`` takes for each
output pixel, along each axis, over random sizes (HWC images, CHW images and DHWC
volumes whose values are their own coordinates).

Run with the reference's Python (DALI 2.4.0):

    $HOME/dali-ref/bin/python tests/golden/make_nn_resize_goldens.py

Writes ``nn_resize_cases.json``: per case the layout, the input and output sizes and, per
resized axis, the output pixels where the reference's pixel is not
``floor((j + 0.5) * in / out)`` (the exact rule), as ``[j, pixel]`` pairs: where the
sampling point falls on a pixel edge, its single-precision arithmetic decides.
"""

import json
import pathlib

import numpy as np
import nvidia.dali.experimental.dynamic as ndd
from nvidia.dali import types

HERE = pathlib.Path(__file__).parent


def _exceptions(source, n_in):
    n_out = len(source)
    exact = np.minimum(np.floor((np.arange(n_out) + 0.5) * n_in / n_out).astype(int), n_in - 1)
    return [[int(j), int(source[j])] for j in np.flatnonzero(exact != source)]


def _case(layout, in_sizes, out_sizes):
    channels = len(in_sizes)
    shape = (*in_sizes, channels) if layout != "CHW" else (channels, *in_sizes)
    image = np.zeros(shape, np.uint16)
    for axis, n in enumerate(in_sizes):
        values = np.arange(n).reshape([-1 if d == axis else 1 for d in range(len(in_sizes))])
        if layout == "CHW":
            image[axis] = values
        else:
            image[..., axis] = values
    out = np.asarray(
        ndd.resize(ndd.as_tensor(image, layout=layout), size=list(out_sizes), interp_type=types.INTERP_NN)
    )
    exceptions = []
    for axis, n in enumerate(in_sizes):
        index = [0] * len(in_sizes)
        index[axis] = slice(None)
        line = out[(axis, *index)] if layout == "CHW" else out[(*index, axis)]
        exceptions.append(_exceptions(np.asarray(line), n))
    return {"layout": layout, "in": list(in_sizes), "out": list(out_sizes), "exceptions": exceptions}


def main():
    rng = np.random.default_rng(1)
    cases = [_case("HWC", (480, 640), (500, 600)), _case("HWC", (333, 500), (500, 600))]
    for _ in range(200):
        cases.append(_case("HWC", tuple(int(x) for x in rng.integers(1, 700, 2)), tuple(int(x) for x in rng.integers(1, 700, 2))))
    for _ in range(40):
        cases.append(_case("CHW", tuple(int(x) for x in rng.integers(3, 300, 2)), tuple(int(x) for x in rng.integers(1, 400, 2))))
    for _ in range(40):
        cases.append(_case("DHWC", tuple(int(x) for x in rng.integers(3, 60, 3)), tuple(int(x) for x in rng.integers(1, 90, 3))))
    (HERE / "nn_resize_cases.json").write_text(json.dumps(cases, separators=(",", ":")) + "\n")
    print(f"{len(cases)} cases, {sum(bool(e) for c in cases for e in c['exceptions'])} axes with exceptions")


if __name__ == "__main__":
    main()
