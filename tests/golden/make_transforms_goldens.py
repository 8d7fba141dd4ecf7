"""Regenerate tests/golden/transforms_reference.json from the reference DALI.

Run with the reference's Python (``$HOME/dali-ref/bin/python``). Each case records
an operator (``transforms.rotation``, ``coord_transform``, ...), its input (a
matrix or points, or none), its keyword arguments and the reference's output;
``batch`` cases give per-sample inputs and arguments as lists, one entry per sample
(arguments under ``per_sample``), and record one output per sample.
Float32 values are stored as JSON numbers (exact round trip through float64).
"""

import json
import pathlib

import numpy as np
import nvidia.dali.experimental.dynamic as ndd

OUT = pathlib.Path(__file__).parent / "transforms_reference.json"


def _op(name):
    obj = ndd
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _np(x):
    return np.asarray(x.evaluate() if hasattr(x, "evaluate") else x)


ROT30 = np.array([[0.8660254, -0.5, 1.0], [0.5, 0.8660254, 2.0]], np.float32)
M3 = np.array([[1, 0.5, 0, 1], [0, 2, 0.25, -1], [0.1, 0, 1, 3]], np.float32)
PTS2 = np.array([[1, 2], [3, 4], [5, 6.5], [-2.25, 0.125]], np.float32)
PTS3 = np.array([[1, 2, 3], [-1, 0.5, 2.25]], np.float32)

SAMPLE_CASES = [
    ("transforms.translation", None, {"offset": [1, 2]}),
    ("transforms.translation", None, {"offset": [1.5, -2, 3.25]}),
    ("transforms.translation", ROT30, {"offset": [3, -4]}),
    ("transforms.translation", ROT30, {"offset": [3, -4], "reverse_order": True}),
    ("transforms.scale", None, {"scale": [2, 3]}),
    ("transforms.scale", None, {"scale": [2, 3], "center": [1, 1.5]}),
    ("transforms.scale", None, {"scale": [2, 3, 4]}),
    ("transforms.scale", None, {"scale": [2], "ndim": 3}),
    ("transforms.scale", None, {"scale": [0.5, 1.5, 2.5], "center": [1, 2, 3]}),
    ("transforms.scale", ROT30, {"scale": [2, 0.5]}),
    ("transforms.scale", ROT30, {"scale": [2, 0.5], "reverse_order": True, "center": [3, 1]}),
    ("transforms.rotation", None, {"angle": 90}),
    ("transforms.rotation", None, {"angle": 30}),
    ("transforms.rotation", None, {"angle": -77.5}),
    ("transforms.rotation", None, {"angle": 180}),
    ("transforms.rotation", None, {"angle": 12.5, "center": [10, 14]}),
    ("transforms.rotation", None, {"angle": 30, "axis": [0, 0, 1]}),
    ("transforms.rotation", None, {"angle": 30, "axis": [1, 1, 1], "center": [1, 2, 3]}),
    ("transforms.rotation", None, {"angle": -45, "axis": [0.2, -1, 0.5]}),
    ("transforms.rotation", M3, {"angle": 60, "axis": [1, 0, 0]}),
    ("transforms.rotation", ROT30, {"angle": 45}),
    ("transforms.rotation", ROT30, {"angle": 45, "reverse_order": True}),
    ("transforms.shear", None, {"shear": [0.1, 0.2]}),
    ("transforms.shear", None, {"shear": [0.1, 0.2], "center": [3, 4]}),
    ("transforms.shear", None, {"angles": [10, 20]}),
    ("transforms.shear", None, {"angles": [-30, 45], "center": [2, 1]}),
    ("transforms.shear", None, {"shear": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]}),
    ("transforms.shear", None, {"angles": [[5, 10], [15, 20], [25, 30]], "center": [1, 2, 3]}),
    ("transforms.shear", ROT30, {"shear": [0.3, -0.2]}),
    ("transforms.crop", None, {}),
    ("transforms.crop", None, {"from_start": [0, 0], "from_end": [10, 20]}),
    (
        "transforms.crop",
        None,
        {"from_start": [1, 2, 3], "from_end": [4, 6, 8], "to_start": [0, 0, 0], "to_end": [1, 2, 3]},
    ),
    ("transforms.crop", None, {"from_start": [4, 2], "from_end": [1, 6], "absolute": True}),
    (
        "transforms.crop",
        None,
        {"from_start": [4, 2], "from_end": [1, 6], "to_start": [3, 0], "to_end": [0, 5], "absolute": True},
    ),
    (
        "transforms.crop",
        None,
        {"from_start": [0.25], "from_end": [0.75], "to_start": [1, 2], "to_end": [3, 5]},
    ),
    ("transforms.crop", ROT30, {"from_start": [0, 0], "from_end": [2, 4]}),
    ("coord_transform", PTS2, {}),
    ("coord_transform", PTS2, {"M": 2.0}),
    ("coord_transform", PTS2, {"M": [[1, 2], [3, 4]]}),
    ("coord_transform", PTS2, {"M": [[1, 2], [3, 4], [0.5, -1]], "T": [1, 2, 3]}),
    ("coord_transform", PTS2, {"T": [1, 2]}),
    ("coord_transform", PTS2, {"MT": 2.0}),
    ("coord_transform", PTS2, {"MT": ROT30}),
    ("coord_transform", PTS3, {"MT": M3}),
    ("coord_transform", PTS3, {"M": [[1, 0, 2]], "T": [0.5]}),
]

COMBINE_CASES = [
    ([[0, 1], [1, 2]], ROT30, False),
]

BATCH_CASES = [
    ("transforms.rotation", None, {"angle": [10, 45, -120]}, {}),
    ("transforms.rotation", None, {"angle": [10, 45], "center": [[1, 2], [3, 4]]}, {}),
    ("transforms.rotation", None, {"angle": [10, 45], "axis": [[1, 0, 0], [0, 1, 1]]}, {}),
    (
        "transforms.translation",
        [ROT30, np.ascontiguousarray(M3[:2, :3])],
        {"offset": [[1, 2], [-3, 0.5]]},
        {},
    ),
    ("transforms.scale", [ROT30, ROT30 * 2], {"scale": [[2, 3], [0.5, 0.25]]}, {"reverse_order": True}),
    ("transforms.shear", None, {"shear": [[0.1, 0.2], [0.3, 0.4]]}, {"center": [1, 1]}),
    ("transforms.crop", None, {"from_end": [[10, 20], [5, 6]]}, {"to_start": [1, 1]}),
    ("coord_transform", [PTS2, PTS2[:2] * 2], {"MT": [ROT30, np.ascontiguousarray(M3[:2, :3])]}, {}),
]


def _to_arg(v):
    return np.asarray(v, np.float32) if isinstance(v, list) and v and isinstance(v[0], list) else v


def main():
    cases = []
    for op, x, kwargs in SAMPLE_CASES:
        args = (ndd.as_tensor(x),) if x is not None else ()
        out = _np(_op(op)(*args, **{k: _to_arg(v) for k, v in kwargs.items()}))
        cases.append(
            {
                "op": op,
                "batch": False,
                "input": None if x is None else x.tolist(),
                "kwargs": kwargs,
                "expected": out.tolist(),
            }
        )
    a = ndd.transforms.translation(offset=[1, 2])
    b = ndd.transforms.rotation(angle=30)
    c = ndd.transforms.scale(scale=[2, 3])
    mats = [_np(m) for m in (a, b, c)]
    for rev in (False, True):
        out = _np(ndd.transforms.combine(a, b, c, reverse_order=rev))
        cases.append(
            {
                "op": "transforms.combine",
                "batch": False,
                "inputs": [m.tolist() for m in mats],
                "kwargs": {"reverse_order": rev},
                "expected": out.tolist(),
            }
        )
        out = _np(ndd.transforms.combine(a, b, reverse_order=rev))
        cases.append(
            {
                "op": "transforms.combine",
                "batch": False,
                "inputs": [m.tolist() for m in mats[:2]],
                "kwargs": {"reverse_order": rev},
                "expected": out.tolist(),
            }
        )
    for op, xs, per_sample, kwargs in BATCH_CASES:
        n = len(next(iter(per_sample.values())))
        args = (ndd.batch([np.asarray(x, np.float32) for x in xs]),) if xs is not None else ()
        batch_kwargs = {
            k: ndd.batch([np.asarray(v, np.float32) for v in vals]) for k, vals in per_sample.items()
        }
        out = _op(op)(*args, batch_size=None if xs is not None else n, **batch_kwargs, **kwargs)
        expected = [np.asarray(s).tolist() for s in out.evaluate().tensors]
        cases.append(
            {
                "op": op,
                "batch": True,
                "input": None if xs is None else [np.asarray(x).tolist() for x in xs],
                "per_sample": per_sample,
                "kwargs": kwargs,
                "expected": expected,
            }
        )
    OUT.write_text(json.dumps({"cases": cases}, default=lambda o: o.tolist()) + "\n")
    print(f"{len(cases)} cases -> {OUT}")


if __name__ == "__main__":
    main()
