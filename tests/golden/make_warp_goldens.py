"""Regenerate tests/golden/warp_reference.json + warp_reference.npz from the reference DALI.

Run with the reference's Python (``$HOME/dali-ref/bin/python``). The inputs are small
deterministic images (``images()``, rebuilt identically by the tests from the same
recipe and checked against the stored copies). Each case names an operator, an input
image, keyword arguments (lists; ``"per_sample"`` arguments hold one value per sample
of a batch) and the keys of its expected outputs in the npz (one per sample).
``rotate_sizes`` records the reference's rotate output size for many shapes and angles.
"""

import json
import pathlib

import numpy as np
import nvidia.dali.experimental.dynamic as ndd
from nvidia.dali import types

HERE = pathlib.Path(__file__).parent
NN, LINEAR, CUBIC = int(types.INTERP_NN), int(types.INTERP_LINEAR), int(types.INTERP_CUBIC)


def images():
    """The test inputs: smooth gradients plus a little noise."""
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:20, 0:28]
    base = np.stack([xx * 9, yy * 12, (xx + yy) * 5], axis=-1).astype(np.float64)
    rgb = np.clip(base + rng.integers(-6, 7, base.shape), 0, 255).astype(np.uint8)
    small = np.clip(np.mgrid[0:9, 0:12][1][..., None] * 20 + rng.integers(0, 9, (9, 12, 1)), 0, 255).astype(
        np.uint8
    )
    out = {
        "rgb": rgb,
        "gray": small,
        "float": (rgb.astype(np.float32) / 4 - 10.5),
        "seq": np.stack([rgb[:12, :16], 255 - rgb[:12, :16], rgb[8:, 12:]]),
        "odd": rgb[:15, :21],
        "gray2d": small[..., 0],
        "planar": rgb.transpose(2, 0, 1),
        "u16": rgb.astype(np.uint16) * 200,
        "i16": rgb.astype(np.int16) * 100 - 12000,
        "ramp": (np.arange(400) % 256).reshape(10, 40, 1).astype(np.uint8),
        "vol": np.clip(
            np.mgrid[0:6, 0:9, 0:11].sum(0)[..., None] * [9, 5] + rng.integers(0, 5, (6, 9, 11, 2)), 0, 255
        ).astype(np.uint8),
    }
    return {k: np.ascontiguousarray(v) for k, v in out.items()}


ROT = [[0.8660254, -0.5, 6.0], [0.5, 0.8660254, -4.0]]

AFFINE = [
    ("rgb", {"matrix": [1, 0, 0, 0, 1, 0]}),
    ("rgb", {"matrix": [1, 0, 2.5, 0, 1, -1.25]}),
    ("rgb", {"matrix": [1, 0, 2.5, 0, 1, -1.25], "fill_value": 17}),
    ("rgb", {"matrix": [1, 0, 2.5, 0, 1, -1.25], "interp_type": NN}),
    ("rgb", {"matrix": [1, 0, 2.5, 0, 1, -1.25], "interp_type": NN, "fill_value": 200}),
    ("rgb", {"matrix": sum(ROT, [])}),
    ("rgb", {"matrix": sum(ROT, []), "fill_value": 0}),
    ("rgb", {"matrix": sum(ROT, []), "inverse_map": False}),
    ("rgb", {"matrix": sum(ROT, []), "inverse_map": False, "interp_type": NN, "fill_value": 5}),
    ("rgb", {"matrix": [0.7, 0.2, 1, -0.1, 1.3, 2], "size": [14, 33]}),
    ("rgb", {"matrix": [2, 0, 0, 0, 2, 0], "size": [10.4, 13.6]}),
    ("rgb", {"matrix": [0.5, 0, 0, 0, 0.5, 0], "size": [40, 56], "fill_value": 255}),
    ("rgb", {"matrix": [1, 0.3, -3, 0.2, 1, 0], "dtype": "float32"}),
    ("float", {"matrix": sum(ROT, [])}),
    ("float", {"matrix": sum(ROT, []), "dtype": "uint8"}),
    ("float", {"matrix": sum(ROT, []), "fill_value": -3.5, "interp_type": NN}),
    ("gray", {"matrix": [0.9, -0.2, 1.5, 0.25, 1.1, -2]}),
    ("seq", {"matrix": sum(ROT, []), "fill_value": 9}),
    ("odd", {"matrix": [1, 0, 0.5, 0, 1, 0.5], "size": [15, 21]}),
    # Fill values outside the output type's range or fractional: stored in the type first.
    ("rgb", {"matrix": [1, 0, 2.5, 0, 1, -1.25], "fill_value": 300}),
    ("rgb", {"matrix": [1, 0, 2.5, 0, 1, -1.25], "fill_value": -5.5}),
    ("gray", {"matrix": [1, 0, 2.5, 0, 1, -1.25], "fill_value": 100.6}),
    ("i16", {"matrix": [1, 0, 2.5, 0, 1, -1.25], "fill_value": 100.5}),
    ("i16", {"matrix": sum(ROT, []), "fill_value": -40000}),
]

ROTATE = [("rgb", {"angle": a}) for a in (0, 1, 10, 30, 45, 60, 89.5, 90, 135, 180, -30, 270, 333.3)] + [
    ("rgb", {"angle": 30, "interp_type": NN}),
    ("rgb", {"angle": 30, "fill_value": 0}),
    ("rgb", {"angle": 30, "fill_value": 128, "interp_type": NN}),
    ("rgb", {"angle": 45, "keep_size": True}),
    ("rgb", {"angle": 20, "size": [25, 31]}),
    ("rgb", {"angle": 20, "dtype": "float32"}),
    ("float", {"angle": 37}),
    ("float", {"angle": 37, "dtype": "uint8", "fill_value": 1}),
    ("gray", {"angle": 90}),
    ("gray", {"angle": -15, "fill_value": 3}),
    ("seq", {"angle": 25}),
    ("odd", {"angle": 12}),
    ("odd", {"angle": 180}),
    ("rgb", {"angle": 30, "fill_value": 300}),
    ("gray", {"angle": 30, "fill_value": 100.6}),
    ("i16", {"angle": -20, "fill_value": 40000}),
]

H1 = [[1, 0.1, 0.5], [0.05, 1, 0], [0.01, 0.02, 1]]
H2 = [[0.9, -0.2, 3], [0.1, 1.1, -2], [-0.004, 0.003, 1]]
SHIFT = [[1, 0, -2.5], [0, 1, 1.25], [0, 0, 1]]
PERSPECTIVE = (
    [
        ("rgb", {"matrix": H1}),
        ("rgb", {"matrix": H2}),
        ("rgb", {"matrix": H2, "pixel_origin": "center"}),
        ("rgb", {"matrix": H2, "inverse_map": False}),
        ("rgb", {"matrix": H2, "interp_type": NN}),
        ("rgb", {"matrix": H2, "interp_type": NN, "pixel_origin": "center"}),
        ("rgb", {"matrix": [[0.5, 0, 0], [0, 0.5, 0], [0, 0, 1]]}),
        ("rgb", {"matrix": [[0.5, 0, 0], [0, 0.5, 0], [0, 0, 1]], "pixel_origin": "center"}),
        ("rgb", {"matrix": [[0.5, 0, 0], [0, 0.5, 0], [0, 0, 1]], "interp_type": NN}),
        ("rgb", {"matrix": H1, "fill_value": [7, 8, 9]}),
        ("rgb", {"matrix": H1, "fill_value": [200]}),
        ("rgb", {"matrix": H1, "size": [13, 31]}),
    ]
    + [
        ("rgb", {"matrix": SHIFT, "border_mode": mode})
        for mode in ("replicate", "reflect", "reflect_101", "wrap")
    ]
    + [
        ("rgb", {"matrix": [[2.5, 0.3, -20], [0.2, 2.2, -15], [0, 0, 1]], "border_mode": mode})
        for mode in ("reflect", "reflect_101", "wrap")
    ]
    + [
        # Nearest neighbour away from exact ties (which float rounding decides differently).
        (
            "rgb",
            {
                "matrix": [[2.45, 0.31, -19.7], [0.21, 2.17, -15.3], [0, 0, 1]],
                "border_mode": "wrap",
                "interp_type": NN,
            },
        ),
        ("float", {"matrix": H2}),
        ("float", {"matrix": H2, "border_mode": "reflect", "interp_type": NN}),
        ("gray", {"matrix": H2}),
        ("gray2d", {"matrix": H2}),
        ("seq", {"matrix": H2, "fill_value": [1]}),
        ("planar", {"matrix": H2}),
        ("planar", {"matrix": H2, "fill_value": [50], "interp_type": NN}),
        ("u16", {"matrix": H2}),
        ("rgb", {"matrix": H2, "interp_type": CUBIC}),
        ("rgb", {"matrix": [[1, 0, 0.5], [0, 1, 0], [0, 0, 1]], "interp_type": CUBIC}),
        ("rgb", {"matrix": H1, "interp_type": CUBIC, "border_mode": "reflect_101", "pixel_origin": "center"}),
        ("float", {"matrix": H2, "interp_type": CUBIC, "fill_value": [3]}),
        ("i16", {"matrix": H2, "border_mode": "replicate"}),
        ("rgb", {"matrix": H1, "fill_value": [300, -5, 100.6]}),
        ("u16", {"matrix": H2, "fill_value": [70000]}),
        # Fractional sizes round (half away from zero), to at least 1.
        ("rgb", {"matrix": H1, "size": [7.6, 8.5]}),
        ("rgb", {"matrix": H1, "size": [0.4, 3]}),
    ]
)

DISTORTIONS = [
    ("water", "rgb", {}),
    (
        "water",
        "rgb",
        {"ampl_x": 3.5, "ampl_y": -2.25, "freq_x": 0.3, "freq_y": 0.2, "phase_x": 0.5, "phase_y": 1.0},
    ),
    ("water", "rgb", {"ampl_x": 3.5, "ampl_y": 2.25, "freq_x": 0.3, "freq_y": 0.2, "interp_type": LINEAR}),
    ("water", "odd", {"ampl_x": 1.5, "ampl_y": 4, "fill_value": 77}),
    ("water", "float", {"ampl_x": 2.5, "ampl_y": 1, "interp_type": LINEAR, "fill_value": -1}),
    ("water", "gray", {"ampl_x": 1, "ampl_y": 1, "freq_x": 1, "freq_y": 1}),
    ("water", "rgb", {"mask": 0}),
    ("sphere", "rgb", {}),
    ("sphere", "rgb", {"interp_type": LINEAR}),
    ("sphere", "odd", {"fill_value": 200}),
    ("sphere", "odd", {"interp_type": LINEAR}),
    ("sphere", "gray", {}),
    ("sphere", "float", {"interp_type": LINEAR}),
    ("sphere", "rgb", {"mask": 0}),
    # Fractional fills are truncated in an integer type (out-of-range ones diverge: ndd saturates).
    ("water", "gray", {"ampl_x": 3, "ampl_y": 2, "fill_value": 100.6, "interp_type": LINEAR}),
    ("sphere", "odd", {"fill_value": 77.9}),
    # The default frequencies (2 pi / 128) decide where the wave crosses zero.
    ("water", "ramp", {}),
]

LAYOUTS = {"planar": "CHW", "gray2d": "HW", "seq": "FHWC", "vol": "DHWC"}

VOLUMES = [
    ("rotate", {"angle": 90, "axis": [0, 0, 1]}),
    ("rotate", {"angle": 30, "axis": [1, 0, 0]}),
    ("rotate", {"angle": 45, "axis": [0, 1, 0], "interp_type": NN}),
    ("rotate", {"angle": 60, "axis": [1, 1, 1]}),
    ("rotate", {"angle": -20, "axis": [1, 2, 3], "fill_value": 7}),
    ("rotate", {"angle": 20, "axis": [1, 2, 3], "interp_type": NN, "fill_value": 0}),
    ("rotate", {"angle": 33, "axis": [0, 1, 1], "keep_size": True}),
    ("rotate", {"angle": 33, "axis": [0, 1, 1], "size": [5, 8, 12], "dtype": "float32"}),
    ("warp_affine", {"matrix": [[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0]], "fill_value": 99}),
    ("warp_affine", {"matrix": [[1, 0.1, 0, 0.5], [0, 0.9, 0.2, 0.25], [0.1, 0, 1.1, -0.75]]}),
    (
        "warp_affine",
        {
            "matrix": [[1, 0.1, 0, 0.5], [0, 0.9, 0.2, 0.25], [0.1, 0, 1.1, -0.75]],
            "inverse_map": False,
            "fill_value": 3,
            "interp_type": NN,
        },
    ),
    ("warp_affine", {"matrix": [[0.5, 0, 0, 0], [0, 0.5, 0, 0], [0, 0, 0.5, 0]], "size": [9, 12, 15]}),
]

BATCH = [
    ("rotate", ["rgb", "odd", "rgb"], {"angle": [10, -35, 90]}, {}),
    ("rotate", ["rgb", "rgb"], {"angle": [10, 200], "size": [[20, 28], [30, 12]]}, {"fill_value": 0}),
    ("warp_affine", ["rgb", "odd"], {"matrix": [sum(ROT, []), [1, 0, 1.5, 0, 1, 0.5]]}, {}),
    ("warp_affine", ["rgb", "rgb"], {"size": [[10, 10], [21, 5]]}, {"matrix": sum(ROT, []), "fill_value": 3}),
]


def _kw(kwargs):
    out = {}
    for k, v in kwargs.items():
        if k == "dtype":
            v = getattr(ndd, v)
        elif k == "matrix" and np.size(v) in (6, 12):
            v = np.asarray(v, np.float32).reshape(-1, 3 if np.size(v) == 6 else 4)
        elif k == "interp_type":
            v = types.DALIInterpType(v)
        out[k] = v
    return out


def _per_sample_value(name, value):
    value = np.asarray(value, np.float32)
    return value.reshape(2, 3) if name == "matrix" and value.size == 6 else value


def main():
    imgs = images()
    arrays = {f"in_{k}": v for k, v in imgs.items()}
    cases = []

    def record(op, inp, kwargs, outs, **extra):
        keys = []
        for o in outs:
            key = f"out_{len(arrays)}"
            arrays[key] = np.asarray(o)
            keys.append(key)
        cases.append({"op": op, "input": inp, "kwargs": kwargs, "outputs": keys, **extra})

    for inp, kwargs in AFFINE:
        record("warp_affine", inp, kwargs, [ndd.warp_affine(imgs[inp], **_kw(kwargs))])
    for inp, kwargs in PERSPECTIVE:
        x = ndd.as_tensor(imgs[inp], layout=LAYOUTS.get(inp))
        kw = {k: np.asarray(v, np.float32) if k == "matrix" else v for k, v in _kw(kwargs).items()}
        record("experimental.warp_perspective", inp, kwargs, [ndd.experimental.warp_perspective(x, **kw)])
    m = np.asarray(H2, np.float32)
    out = ndd.experimental.warp_perspective(imgs["rgb"], m)
    record("experimental.warp_perspective", "rgb", {}, [out], mtx=m.tolist())
    data = ndd.batch([imgs["rgb"], imgs["odd"]])
    out = ndd.experimental.warp_perspective(
        data, matrix=ndd.batch([np.asarray(h, np.float32) for h in (H1, H2)])
    )
    record(
        "experimental.warp_perspective",
        ["rgb", "odd"],
        {},
        [np.asarray(t) for t in out.evaluate().tensors],
        per_sample={"matrix": [H1, H2]},
    )
    for op, kwargs in VOLUMES:
        kw = {k: np.asarray(v, np.float32) if k == "matrix" else v for k, v in _kw(kwargs).items()}
        record(op, "vol", kwargs, [getattr(ndd, op)(ndd.as_tensor(imgs["vol"], layout="DHWC"), **kw)])
    for op, inp, kwargs in DISTORTIONS:
        record(op, inp, kwargs, [getattr(ndd, op)(imgs[inp], **_kw(kwargs))])
    for op in ("water", "sphere"):
        data = ndd.batch([imgs["rgb"], imgs["odd"], imgs["rgb"]])
        extra = {"ampl_x": 2.0} if op == "water" else {}
        out = getattr(ndd, op)(data, mask=ndd.batch([np.int32(1), np.int32(0), np.int32(1)]), **extra)
        record(
            op,
            ["rgb", "odd", "rgb"],
            extra,
            [np.asarray(t) for t in out.evaluate().tensors],
            per_sample={"mask": [1, 0, 1]},
        )
    for inp, kwargs in ROTATE:
        record("rotate", inp, kwargs, [ndd.rotate(imgs[inp], **_kw(kwargs))])
    # The matrix as an input (a transforms result), per sample in a batch.
    m = np.asarray(ndd.transforms.rotation(angle=25, center=[14, 10]))
    record("warp_affine", "rgb", {}, [ndd.warp_affine(imgs["rgb"], m)], mtx=m.tolist())
    for op, inps, per_sample, kwargs in BATCH:
        data = ndd.batch([imgs[i] for i in inps])
        ps = {k: ndd.batch([_per_sample_value(k, v) for v in vals]) for k, vals in per_sample.items()}
        out = getattr(ndd, op)(data, **ps, **_kw(kwargs))
        record(op, inps, kwargs, [np.asarray(t) for t in out.evaluate().tensors], per_sample=per_sample)
    sizes = []
    for h in (1, 2, 3, 5, 6, 7, 8, 9, 12, 16, 20, 28, 31, 100, 101):
        for w in (1, 2, 5, 6, 8, 11, 28, 99, 100):
            img = np.zeros((h, w, 1), np.uint8)
            for a in (0, 0.001, 0.3, 1, 10, 30, 44.9, 45, 45.1, 60, 89, 90, 91, 135, 180, -30, 270, 300):
                sizes.append(
                    [
                        h,
                        w,
                        a,
                        list(np.asarray(ndd.rotate(img, angle=a, interp_type=types.INTERP_NN)).shape[:2]),
                    ]
                )
    sizes_3d = []
    for shape in ((1, 1, 1), (4, 5, 6), (7, 9, 11), (8, 8, 8), (10, 12, 14), (3, 20, 7)):
        vol = ndd.as_tensor(np.zeros(shape + (1,), np.uint8), layout="DHWC")
        for axis in ([1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1], [1, 2, 3], [-2, 0.5, 1]):
            for a in (0, 10, 30, 45, 60, 90, 135, -70):
                out = np.asarray(ndd.rotate(vol, angle=a, axis=axis, interp_type=types.INTERP_NN)).shape[:3]
                sizes_3d.append([list(shape), axis, a, list(out)])
    (HERE / "warp_reference.json").write_text(
        json.dumps({"cases": cases, "rotate_sizes": sizes, "rotate_sizes_3d": sizes_3d}) + "\n"
    )
    np.savez_compressed(HERE / "warp_reference.npz", **arrays)
    print(len(cases), "cases", len(sizes), "sizes")


if __name__ == "__main__":
    main()
