"""Goldens of the resize family from the reference (run with the reference's python).

    $HOME/dali-ref/bin/python tests/golden/make_resize_goldens.py

Writes ``resize_cases.json`` (per case: operator, input recipe, keyword arguments,
output shapes or the error) and ``resize_values.npz`` (the outputs, ``case<i>_<k>``
for sample k). Inputs are rebuilt from their recipe by ``make_input`` (the test
imports this module's function), so only outputs are stored.
"""

import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).parent

# Inputs: name -> (shape, dtype, layout, seed).
INPUTS = {
    "u8": ((20, 28, 3), "uint8", "HWC", 0),
    "u8_odd": ((17, 31, 3), "uint8", "HWC", 1),
    "u8_big": ((60, 80, 3), "uint8", "HWC", 2),
    "f32": ((20, 28, 3), "float32", "HWC", 3),
    "i16": ((20, 28, 3), "int16", "HWC", 4),
    "u8_chw": ((3, 20, 28), "uint8", "CHW", 5),
    "u8_gray": ((20, 28, 1), "uint8", "HWC", 6),
    "u8_seq": ((3, 12, 16, 3), "uint8", "FHWC", 7),
    "f32_vol": ((6, 10, 12, 2), "float32", "DHWC", 8),
    "u8_vol": ((6, 10, 12, 2), "uint8", "DHWC", 9),
    "f32_2d": ((10, 14), "float32", "", 10),
    "u8_1d": ((20,), "uint8", "", 11),
    "u8_3d": ((6, 8, 3), "uint8", "HWC", 12),
}


def make_input(name):
    """A smooth gradient with a little noise, deterministic for ``name``."""
    shape, dtype, layout, seed = INPUTS[name]
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.linspace(0, 1, n) for n in shape], indexing="ij")
    smooth = sum((k + 1) * g for k, g in enumerate(grids)) / sum(range(1, len(shape) + 1))
    noisy = smooth + 0.08 * rng.standard_normal(shape)
    if dtype == "uint8":
        return np.clip(noisy * 255, 0, 255).astype(np.uint8), layout
    if dtype == "int16":
        return np.clip(noisy * 20000 - 8000, -32768, 32767).astype(np.int16), layout
    return (noisy * 100 - 20).astype(np.float32), layout


INTERPS = [
    "INTERP_NN",
    "INTERP_LINEAR",
    "INTERP_CUBIC",
    "INTERP_LANCZOS3",
    "INTERP_TRIANGULAR",
    "INTERP_GAUSSIAN",
]


def resize_cases():
    cases = []

    def add(inp, op="resize", **kw):
        cases.append({"op": op, "input": inp, "kwargs": kw})

    # Output size rules.
    for size in (
        [10, 14],
        [8, 12],
        [33, 45],
        [7, 40],
        [10.5, 13.5],
        [10.49, 13.51],
        [0.3, 5],
        15,
        -10,
        [0, 0],
    ):
        add("u8", size=size)
    for kw in (
        {"resize_x": 12},
        {"resize_y": 9},
        {"resize_x": 12, "resize_y": 30},
        {"resize_x": -12},
        {"resize_y": -9, "resize_x": 20},
        {"resize_x": 13.7},
        {"resize_shorter": 10},
        {"resize_shorter": 13.5},
        {"resize_longer": 15},
        {"resize_longer": 15.6},
        {"resize_shorter": 10, "max_size": 12},
        {"resize_shorter": 10, "max_size": [12, 100]},
        {"resize_shorter": 30, "max_size": [100, 35]},
        {"size": [10, 20], "mode": "not_larger"},
        {"size": [10, 20], "mode": "not_smaller"},
        {"size": [10, 20], "mode": "stretch"},
        {"size": [30, 0], "mode": "not_larger"},
        {"size": [30, 0], "mode": "not_smaller"},
        {"size": [30, 0], "mode": "stretch"},
        {"size": [0, 40], "max_size": 30},
        {"size": [0, 40], "max_size": [5, 30]},
        {"size": [0, 40], "max_size": [5, 30], "mode": "stretch"},
        {"size": [50, 0], "max_size": [30, 30], "mode": "not_smaller"},
        {"size": [30, 30], "max_size": [20, 100], "mode": "not_larger"},
        {"size": [10.5, 13.3], "subpixel_scale": False},
        {"size": [10.5, 13.3], "subpixel_scale": True},
        {"resize_x": 13.7, "subpixel_scale": False},
        {"size": [10, 10], "roi_start": [2, 3], "roi_end": [12, 20]},
        {"size": [10, 10], "roi_start": [12, 20], "roi_end": [2, 3]},
        {"size": [12, 12], "roi_start": [0.1, 0.2], "roi_end": [0.9, 0.7], "roi_relative": True},
        {"size": [12, 12], "roi_start": [2.5, 3.25], "roi_end": [15.5, 21.75]},
        {"size": [10, 10], "roi_start": [-2, 3], "roi_end": [25, 30]},
        {"resize_x": 15, "roi_start": [2, 3], "roi_end": [12, 20]},
        {"resize_shorter": 9, "roi_start": [2, 3], "roi_end": [12, 20]},
        {"size": [10.5, 11.5], "roi_start": [2, 3], "roi_end": [12, 20], "subpixel_scale": False},
    ):
        add("u8", **kw)
    add("u8_odd", resize_shorter=8)
    add("u8_odd", resize_longer=8)
    add("u8_odd", size=[9, 0])
    add("u8_odd", size=[0, 9], mode="not_smaller")
    # Filters, down and up, with and without antialias, on several dtypes.
    for inp in ("u8", "f32", "i16", "u8_odd"):
        for interp in INTERPS:
            for size in ([9, 11], [31, 45], [13, 40]):
                add(inp, size=size, interp_type=interp)
            add(inp, size=[9, 11], interp_type=interp, antialias=False)
    add("u8", size=[9, 40], min_filter="INTERP_NN", mag_filter="INTERP_CUBIC")
    add("u8", size=[9, 40], min_filter="INTERP_CUBIC", mag_filter="INTERP_NN")
    add(
        "u8",
        size=[9, 40],
        interp_type="INTERP_LANCZOS3",
        min_filter="INTERP_GAUSSIAN",
        mag_filter="INTERP_NN",
    )
    add("u8_big", size=[7, 9])
    add("u8_big", size=[7, 9], antialias=False)
    add("u8_big", size=[23, 31], interp_type="INTERP_CUBIC")
    add("u8_big", size=[23, 31], interp_type="INTERP_LANCZOS3")
    add("u8", size=[9, 11], dtype="FLOAT")
    add("u8", size=[31, 45], dtype="FLOAT", interp_type="INTERP_CUBIC")
    add("f32", size=[9, 11], dtype="FLOAT")
    # Layouts.
    add("u8_chw", size=[9, 11])
    add("u8_chw", resize_shorter=10)
    add("u8_gray", size=[9, 40], interp_type="INTERP_CUBIC")
    add("u8_seq", size=[7, 9])
    add("u8_seq", resize_x=24, interp_type="INTERP_CUBIC")
    add("f32_vol", size=[4, 5, 7])
    add("f32_vol", size=[9, 15, 20], interp_type="INTERP_CUBIC")
    add("f32_vol", resize_z=3)
    add("f32_vol", resize_z=3, resize_x=5)
    add("u8_vol", resize_shorter=7)
    add("u8_vol", size=[3, 0, 0])
    add("u8_vol", size=[4, 5, 7], roi_start=[1, 2, 3], roi_end=[5, 9, 11])
    # Errors.
    add("u8", resize_x=12, size=[3, 4])
    add("u8", resize_shorter=5, resize_longer=6)
    add("u8", mode="not_larger", resize_shorter=5)
    add("u8", size=[4, 5, 6])
    add("u8")
    # resize_crop_mirror.
    for kw in (
        {"size": [16, 20], "crop": [10, 12]},
        {"size": [16, 20], "crop": [10, 12], "mirror": 1},
        {"resize_shorter": 14, "crop": [9, 9], "crop_pos_x": 0.0, "crop_pos_y": 1.0},
        {"resize_shorter": 14, "crop_h": 9, "crop_w": 11, "crop_pos_x": 0.3, "crop_pos_y": 0.6},
        {"size": [31, 45], "crop": [20, 20], "interp_type": "INTERP_CUBIC", "mirror": 1},
        {"size": [10, 10], "crop": [12, 14]},
        {"size": [16, 20], "crop": [10, 12], "rounding": "truncate", "crop_pos_x": 0.3},
        {"size": [16, 20], "crop": [10, 12], "mirror": 2},
        {"size": [16, 20], "crop": [10, 12], "mirror": 3},
    ):
        add("u8", op="resize_crop_mirror", **kw)
    add("f32", op="resize_crop_mirror", size=[16, 20], crop=[10, 12], mirror=1)
    add("u8_chw", op="resize_crop_mirror", size=[16, 20], crop=[10, 12], mirror=1)
    # tensor_resize.
    for inp, kw in (
        ("f32_2d", {"sizes": [5, 7]}),
        ("f32_2d", {"sizes": [23, 31]}),
        ("f32_2d", {"scales": [0.5, 1.5]}),
        ("f32_2d", {"scales": [0.37, 1.3]}),
        ("f32_2d", {"scales": [0.37, 1.3], "size_rounding": "truncate"}),
        ("f32_2d", {"scales": [0.37, 1.3], "size_rounding": "ceil"}),
        ("f32_2d", {"scales": [0.37, 1.3], "alignment": [0.0, 1.0]}),
        ("f32_2d", {"scales": [0.37, 1.3], "alignment": 0.0}),
        ("f32_2d", {"scales": [0.37, 1.3], "subpixel_scale": False}),
        ("f32_2d", {"sizes": [7.5, 9.3]}),
        ("f32_2d", {"sizes": [7.5, 9.3], "alignment": [0.0, 1.0]}),
        ("f32_2d", {"sizes": [20], "axes": [1]}),
        ("f32_2d", {"sizes": [20], "axes": [-2]}),
        ("f32_2d", {"sizes": [0, 20]}),
        ("f32_2d", {"sizes": [0, 20], "mode": "stretch"}),
        ("f32_2d", {"sizes": [8, 8], "mode": "not_larger"}),
        ("f32_2d", {"sizes": [0, 40], "max_size": 25}),
        ("f32_2d", {"sizes": [6, 6], "roi_start": [1, 2], "roi_end": [9, 12]}),
        ("f32_2d", {"sizes": [6, 6], "roi_start": [0.1, 0.9], "roi_end": [0.9, 0.1], "roi_relative": True}),
        ("f32_2d", {"scales": [2.0, 0.5], "roi_start": [1, 2], "roi_end": [9, 12]}),
        ("f32_2d", {"sizes": [5, 7], "interp_type": "INTERP_CUBIC"}),
        ("f32_2d", {"sizes": [5, 7], "interp_type": "INTERP_NN"}),
        ("u8_1d", {"sizes": [7]}),
        ("u8_1d", {"scales": [2.5]}),
        ("u8_3d", {"sizes": [3, 5], "axes": [0, 1]}),
        ("u8_3d", {"sizes": [3, 5], "axis_names": "HW"}),
        ("u8_3d", {"sizes": [12, 5, 3]}),
        ("u8_3d", {"scales": [0.5], "axes": [1]}),
        ("u8_3d", {"sizes": [3, 5], "axes": [0, 1], "dtype": "FLOAT"}),
        ("f32_2d", {"sizes": [5, 7], "scales": [1, 1]}),
        ("f32_2d", {}),
        # The axes left out keep their extent in the mode's common scale (and are resized by it).
        ("f32_2d", {"sizes": [20], "axes": [1], "mode": "not_smaller"}),
        ("f32_2d", {"sizes": [7], "axes": [1], "mode": "not_larger"}),
        ("u8_3d", {"sizes": [4], "axes": [1], "mode": "not_larger"}),
        ("u8_3d", {"sizes": [3, 16], "axes": [0, 1], "mode": "not_smaller"}),
        ("u8_3d", {"sizes": [12, 0], "axes": [0, 1]}),
        ("u8_3d", {"sizes": [12, 0], "axes": [0, 1], "mode": "stretch"}),
    ):
        add(inp, op="tensor_resize", **kw)
    # Presence, not the value, tells which size arguments were given: a size argument
    # given as 0 leaves its extents as they are, and still counts as the one way.
    for kw in (
        {"resize_shorter": 0},
        {"resize_longer": 0},
        {"resize_x": 0},
        {"resize_x": 0, "resize_y": 0},
        {"resize_x": 0, "resize_y": 9},
        {"resize_shorter": 0, "max_size": 12},
        {"resize_shorter": 0, "size": [10, 10]},
        {"resize_x": 0, "size": [10, 10]},
        {"resize_shorter": 0, "mode": "stretch"},
        {"size": []},
    ):
        add("u8", **kw)
    # An empty region (roi_start == roi_end along an axis) still fills the requested size.
    for kw in (
        {"size": [16, 16], "roi_start": [1, 1], "roi_end": [1, 3]},
        {"size": [6, 7], "roi_start": [1, 1], "roi_end": [1, 1]},
        {"size": [6, 7], "roi_start": [0.5, 0.5], "roi_end": [0.5, 0.5], "roi_relative": True},
        {"size": [6, 7], "roi_start": [1.5, 2.25], "roi_end": [1.5, 2.25]},
        {"resize_x": 6, "roi_start": [1, 1], "roi_end": [1, 3]},
        {"size": [6, 7], "roi_start": [1, 1], "roi_end": [1, 3], "mode": "not_larger"},
        {"size": [6, 7], "roi_start": [1, 1], "roi_end": [1, 1], "mode": "not_larger"},
        {"size": [6, 7], "roi_start": [1, 1], "roi_end": [1, 1], "mode": "not_smaller"},
        {"size": [6, 7], "roi_start": [1, 1], "roi_end": [1, 3], "mode": "stretch"},
        {"size": [6, 7], "roi_start": [3, 1], "roi_end": [3, 9], "interp_type": "INTERP_CUBIC"},
    ):
        add("u8", **kw)
    # resize_crop_mirror's crop extents: truncated; 0 or less keeps the resized extent.
    for kw in (
        {"size": [16, 20], "crop": [0, 10]},
        {"size": [16, 20], "crop": [-5, 10]},
        {"size": [16, 20], "crop": [0.5, 10.7]},
        {"size": [16, 20], "crop_h": 9, "crop_w": 0},
        {"size": [16, 20], "crop_h": -3, "crop_w": 11},
        {"resize_shorter": 0, "crop": [8, 8]},
        {"size": [16, 20], "crop_h": 9},
        {"size": [16, 20], "crop": [8, 8], "crop_h": 0},
    ):
        add("u8", op="resize_crop_mirror", **kw)
    return cases


def run_case(ndd, types, case):
    arr, layout = make_input(case["input"])
    kwargs = {}
    for key, value in case["kwargs"].items():
        if isinstance(value, str) and value.startswith("INTERP_"):
            value = getattr(types, value)
        elif key == "dtype":
            value = getattr(types, value)
        kwargs[key] = value
    fn = getattr(ndd, case["op"])
    out = fn(ndd.tensor(arr, layout=layout or None), **kwargs)
    return np.asarray(ndd.as_tensor(out).cpu())


def main():
    import nvidia.dali.experimental.dynamic as ndd
    from nvidia.dali import types

    cases = resize_cases()
    values = {}
    for i, case in enumerate(cases):
        try:
            out = run_case(ndd, types, case)
        except Exception as error:  # the reference raises lazily; any error is recorded
            case["error"] = type(error).__name__
            continue
        case["shape"] = list(out.shape)
        case["dtype"] = str(out.dtype)
        values[f"case{i}"] = out
    # Per-sample arguments in batch mode.
    arrays = [make_input("u8")[0], make_input("u8_odd")[0]]
    batch_cases = [
        {"size": [[10, 14], [9, 20]]},
        {"resize_shorter": [10.0, 8.0]},
        {"resize_x": [12.0, 0.0], "resize_y": [0.0, 7.0]},
        {"interp_type": ["INTERP_NN", "INTERP_CUBIC"], "resize_shorter": 9.0},
    ]
    batch_records = []
    for j, kw in enumerate(batch_cases):
        kwargs = {}
        for key, value in kw.items():
            if not isinstance(value, list):
                kwargs[key] = value
            elif isinstance(value[0], str):
                kwargs[key] = ndd.batch([getattr(types, v) for v in value])
            else:
                kwargs[key] = ndd.batch(np.asarray(value, np.float32))
        out = ndd.resize(ndd.batch(arrays, layout="HWC"), **kwargs)
        samples = [np.asarray(ndd.as_tensor(s)) for s in out]
        for k, s in enumerate(samples):
            values[f"batch{j}_{k}"] = s
        batch_records.append({"kwargs": kw, "shapes": [list(s.shape) for s in samples]})
    with open(HERE / "resize_cases.json", "w") as f:
        json.dump({"cases": cases, "batch_cases": batch_records}, f, indent=1)
    np.savez_compressed(HERE / "resize_values.npz", **values)
    print(f"{len(cases)} cases, {len(batch_records)} batch cases", file=sys.stderr)


if __name__ == "__main__":
    main()
