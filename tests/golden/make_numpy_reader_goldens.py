"""Record the reference's readers.Numpy behaviour: listing, element types, ROI
rounding and out-of-bounds policies, fill value conversion, per-call ROIs and
the constructor/call signatures.

Run with the reference's interpreter (never with the project's own venv):
    $HOME/dali-ref/bin/python tests/golden/make_numpy_reader_goldens.py
Writes tests/golden/numpy_reader.json. The input files are written to a
temporary folder from the recipes of tests/readers/numpy_dataset.py; only the
reader arguments and what the reference returned are stored:

    {
      "reference_version": "2.4.0",
      "signature": [{"name", "kind", "required"}],      # Numpy.__init__, without self/_backend
      "call_signature": [...],                          # Numpy.__call__, public parameters
      "listing": [{"args", "sources"}],                 # sources: source_info of one epoch, or "error"
      "dtypes": {code: true/false},                     # whether a file of that type is read
      "roi": [{"array", "args", "expected"}],           # expected: {"dtype", "shape", "values"} or "error"
      "fill": [{"type", "fill_value", "expected"}],     # the padded element of a one-element array
      "calls": [{"files", "max_batch_size", "args", "calls": [{"batch_size", "roi", "expected"}]}]
    }

In "calls", a ROI value given as {"batch": [...]} is a Batch of one value per sample.
"""

import inspect
import json
import math
import os
import sys
import tempfile

import numpy as np
import nvidia.dali as dali
import nvidia.dali.experimental.dynamic as ndd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "readers"))
from numpy_dataset import FILL_TYPES, LIST_TEXT, make_listing_tree, write_arrays  # noqa: E402


def described(array):
    array = np.asarray(array)
    values = array.ravel().tolist()
    if array.dtype.kind == "f":
        # JSON has no NaN/Infinity in its standard; keep them as strings.
        values = [v if math.isfinite(v) else repr(v) for v in values]
    return {"dtype": array.dtype.str, "shape": list(array.shape), "values": values}


def outcome(read):
    try:
        return described(read())
    except Exception:  # noqa: BLE001 - any failure of the reference is recorded as "error"
        return "error"


def parameters(function, skip):
    return [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in inspect.signature(function).parameters.values()
        if p.name not in skip
    ]


def listing_cases(root, list_file):
    configs = [
        {},
        {"file_filter": "*.NPY"},
        {"file_filter": "[ab].npy"},
        {"file_filter": "a*"},
        {"file_filter": "*/*.npy"},
        {"file_filter": "*.zzz"},
        {"file_list": list_file},
        {"files": ["b.npy", "sub/c.npy", "C.NPY"]},
        {"files": "a.npy"},
    ]
    cases = []
    for config in configs:
        try:
            reader = ndd.readers.Numpy(file_root=root, **config)
            sources = [
                np.asarray(ndd.get_property(t, key="source_info")).tobytes().decode()
                for (t,) in reader.next_epoch()
            ]
        except Exception:  # noqa: BLE001
            sources = "error"
        stored = dict(config)
        if "file_list" in stored:
            stored["file_list"] = os.path.basename(list_file)
        cases.append({"args": stored, "sources": sources})
    return cases


def dtype_cases(folder):
    arrays = {
        code: np.arange(6).astype(code).reshape(2, 3)
        for code in [
            "u1",
            "u2",
            "u4",
            "u8",
            "i1",
            "i2",
            "i4",
            "i8",
            "f2",
            "f4",
            "f8",
            "b1",
            "c8",
            "c16",
            "S3",
            "U2",
            "M8[s]",
            "m8[s]",
            ">i4",
            ">f8",
        ]
    }
    arrays["object"] = np.array([1, "a"], dtype=object)
    arrays["struct"] = np.zeros(3, dtype=[("a", "i4"), ("b", "f4")])
    arrays["empty"] = np.zeros((0, 3), np.float32)
    result = {}
    for code, array in arrays.items():
        path = os.path.join(folder, "type.npy")
        with open(path, "wb") as fh:
            np.save(fh, array, allow_pickle=True)
        got = outcome(lambda path=path: ndd.readers.Numpy(files=[path])())
        result[code] = got != "error" and got["shape"] == list(array.shape)
    return result


def roi_cases():
    cases = []

    def add(array, **args):
        cases.append({"array": array, "args": args})

    # Absolute coordinates: start/end/shape, defaults, empty and inverted ROIs.
    add("cube", roi_start=[1, 2, 1], roi_end=[3, 5, 4])
    add("cube", roi_start=[1, 2, 1])
    add("cube", roi_end=[3, 5, 4])
    add("cube", roi_start=[1, 2, 1], roi_shape=[2, 2, 2])
    add("cube", roi_shape=[2, 2, 2])
    add("cube", roi_start=[3, 2, 1], roi_end=[3, 5, 4])
    add("cube", roi_start=[3, 2, 1], roi_end=[1, 5, 4])
    add("cube", roi_start=[1, 2, 1], roi_shape=[-1, 2, 2])
    add("cube", roi_start=[1, 2, 1], roi_end=[3, 5, 4], roi_shape=[2, 2, 2])
    add("cube", roi_start=[1, 2, 1], rel_roi_start=[0.1, 0.1, 0.1])
    add("cube", roi_start=[1])
    add("cube", roi_start=[1, 2])
    add("cube", roi_start=[1, 2, 1, 0])
    # Relative and mixed coordinates.
    add("cube", rel_roi_start=[0.2, 0.3, 0.25], rel_roi_end=[0.6, 0.7, 0.75])
    add("cube", rel_roi_start=[0.2, 0.3, 0.25], rel_roi_shape=[0.5, 0.5, 0.5])
    add("cube", rel_roi_start=[0.2, 0.2, 0.2], roi_end=[3, 5, 4])
    add("cube", roi_start=[1, 2, 1], rel_roi_end=[0.5, 0.5, 0.5])
    add("cube", rel_roi_start=[0.2, 0.3, 0.25], rel_roi_end=[0.6, 0.7, 0.75], rel_roi_shape=[0.5, 0.5, 0.5])
    # Rounding of relative coordinates: halves of float32 products (exact for
    # sixteenths of 8, not exact for the others), starts, ends and shapes.
    for k in range(1, 16, 2):
        add("v8", rel_roi_start=[k / 16])
        add("v8", rel_roi_end=[k / 16])
    for name in ("v5", "v10", "v20"):
        for r in (0.7, 0.9, 0.35, 0.45, 0.175, 0.525, 0.65):
            add(name, rel_roi_start=[r])
            add(name, rel_roi_end=[r])
    for name in ("v5", "v10"):
        for s in (0.0, 0.05, 0.1, 0.15, 0.25, 0.35, 0.45):
            for sh in (0.05, 0.1, 0.15, 0.25, 0.35, 0.45, 0.7):
                add(name, rel_roi_start=[s], rel_roi_shape=[sh])
    for start in (0, 1, 3):
        for sh in (0.05, 0.25, 0.35, 0.45, 0.65):
            add("v10", roi_start=[start], rel_roi_shape=[sh])
    for s in (0.05, 0.15, 0.25):
        add("v10", rel_roi_start=[s], roi_shape=[3])
        add("v10", rel_roi_start=[s], roi_end=[7])
    add("v10", rel_roi_shape=[0.35])
    add("v10", rel_roi_start=[0.5], rel_roi_shape=[-0.25])
    add("v10", roi_start=[2], rel_roi_shape=[-0.25])
    add("v10", rel_roi_start=[0.5], rel_roi_end=[0.25])
    add("v10", rel_roi_start=[0.5], rel_roi_end=[0.49])
    # Axes: a subset, negative, in any order, one value for all; bad axes.
    add("cube", roi_axes=[1], roi_start=[2], roi_end=[5])
    add("cube", roi_axes=[2, 0], roi_start=[1, 2], roi_end=[3, 4])
    add("cube", roi_axes=[-1], roi_start=[1], roi_end=[3])
    add("cube", roi_axes=[1, 2], roi_start=[1], roi_end=[3])
    add("cube", roi_axes=[1])
    add("cube", roi_axes=[3], roi_start=[1], roi_end=[3])
    add("cube", roi_axes=[1, 1], roi_start=[1, 1], roi_end=[3, 3])
    add("cube", roi_axes=[-1, 2], roi_start=[1, 1], roi_end=[3, 3])
    add("cube", roi_axes=[0, 2], rel_roi_start=[0.3], rel_roi_shape=[0.5])
    # Out-of-bounds policies.
    for policy in ("error", "trim_to_shape", "pad"):
        for s, e in [
            (-2, 3),
            (-2, 10),
            (6, 10),
            (9, 12),
            (10, 10),
            (-5, -2),
            (-3, 0),
            (8, 8),
            (0, 8),
            (2, 5),
        ]:
            add("v8", roi_start=[s], roi_end=[e], out_of_bounds_policy=policy, fill_value=-7)
        add("cube", roi_start=[-1, 5, 4], roi_end=[2, 9, 7], out_of_bounds_policy=policy, fill_value=-1)
        add("wide", roi_axes=[1], roi_start=[7], roi_shape=[4], out_of_bounds_policy=policy, fill_value=2.5)
        add("plane_f", roi_start=[1, 3], roi_end=[5, 6], out_of_bounds_policy=policy, fill_value=-0.5)
        add("v8", rel_roi_start=[-0.0625], out_of_bounds_policy=policy, fill_value=9)
        add("v8", rel_roi_start=[1.0625], rel_roi_end=[1.5], out_of_bounds_policy=policy, fill_value=9)
    for policy in ("PAD", "Pad", "ERROR", "Trim_to_shape", "bogus"):
        add("v8", roi_start=[6], roi_end=[10], out_of_bounds_policy=policy, fill_value=3)
    # Fortran order and 0-D arrays.
    add("plane_f", roi_start=[1, 1], roi_end=[3, 4])
    add("plane_f", roi_axes=[1], rel_roi_start=[0.4])
    add("scalar")
    add("scalar", roi_start=[0])
    add("scalar", rel_roi_start=[0.5], out_of_bounds_policy="pad")
    add("scalar", roi_axes=[0], roi_start=[0])
    return cases


FILL_VALUES = [
    0.5,
    1.5,
    2.5,
    -0.5,
    -2.5,
    3.49,
    1e20,
    -1e20,
    0.0,
    -0.0,
    0.1,
    128.0,
    255.5,
    65535.6,
    4294967295.5,
    float("inf"),
]


def fill_cases(folder):
    cases = []
    for code in FILL_TYPES:
        path = os.path.join(folder, f"fill_{code}.npy")
        values = FILL_VALUES + ([float("nan")] if code[0] in "fb" else [])
        for value in values:
            got = outcome(
                lambda value=value, path=path: ndd.readers.Numpy(
                    files=[path], roi_start=[1], roi_end=[2], out_of_bounds_policy="pad", fill_value=value
                )()
            )
            stored = value if math.isfinite(value) else repr(value)
            cases.append({"type": code, "fill_value": stored, "expected": got})
    return cases


def call_cases(folder):
    def batch(values):
        return ndd.as_batch(
            [np.asarray(v, np.int32 if isinstance(v[0], int) else np.float32) for v in values]
        )

    scenarios = [
        # sample mode: a new ROI each call (same arguments, as the reference needs)
        {
            "files": ["v8", "cube", "v8"],
            "max_batch_size": None,
            "args": {},
            "calls": [
                {"roi": {"roi_start": [2]}},
                {"roi": {"roi_start": [1, 2, 1]}},
                {"roi": {"roi_start": [5]}},
            ],
        },
        {
            "files": ["v8", "v10"],
            "max_batch_size": None,
            "args": {},
            "calls": [
                {"roi": {"rel_roi_start": [0.5], "rel_roi_shape": [0.25]}},
                {"roi": {"rel_roi_start": [0.25], "rel_roi_shape": [0.45]}},
            ],
        },
        # constructor and call arguments combine
        {
            "files": ["v8"],
            "max_batch_size": None,
            "args": {"roi_start": [1]},
            "calls": [{"roi": {"roi_end": [3]}}, {"roi": {"roi_end": [6]}}],
        },
        {
            "files": ["v8"],
            "max_batch_size": None,
            "args": {"roi_start": [1]},
            "calls": [{"roi": {"roi_start": [2]}}],
        },
        {
            "files": ["v8"],
            "max_batch_size": None,
            "args": {"out_of_bounds_policy": "pad", "fill_value": -1},
            "calls": [{"roi": {"roi_start": [6], "roi_end": [10]}}],
        },
        # batch mode: per-sample Batch and constant values
        {
            "files": ["v8", "v10", "v20"],
            "max_batch_size": 2,
            "args": {},
            "calls": [
                {"batch_size": 2, "roi": {"roi_start": {"batch": [[1], [3]]}}},
                {"batch_size": 2, "roi": {"roi_start": {"batch": [[0], [2]]}}},
            ],
        },
        {
            "files": ["v8", "v10"],
            "max_batch_size": 2,
            "args": {},
            "calls": [{"batch_size": 2, "roi": {"roi_start": [3]}}],
        },
        {
            "files": ["v8", "v10"],
            "max_batch_size": 2,
            "args": {},
            "calls": [{"batch_size": 2, "roi": {"rel_roi_end": {"batch": [[0.5], [0.25]]}}}],
        },
        {
            "files": ["v8", "v10"],
            "max_batch_size": 2,
            "args": {"roi_start": [1]},
            "calls": [{"batch_size": 2, "roi": {"roi_end": {"batch": [[2], [5]]}}}],
        },
    ]
    for scenario in scenarios:
        files = [os.path.join(folder, f"{name}.npy") for name in scenario["files"]]
        reader = ndd.readers.Numpy(scenario["max_batch_size"], files=files, **scenario["args"])
        for call in scenario["calls"]:
            roi = {k: batch(v["batch"]) if isinstance(v, dict) else v for k, v in call["roi"].items()}
            size = call.get("batch_size")

            def read(reader=reader, roi=roi, size=size):
                out = reader(batch_size=size, **roi) if size else reader(**roi)
                return [np.asarray(t) for t in out.tensors] if size else np.asarray(out)

            try:
                got = read()
                call["expected"] = [described(a) for a in got] if size else described(got)
            except Exception:  # noqa: BLE001
                call["expected"] = "error"
    return scenarios


def main():
    out = {
        "reference_version": dali.__version__,
        "signature": parameters(ndd.readers.Numpy.__init__, {"self", "_backend"}),
        "call_signature": parameters(
            ndd.readers.Numpy.__call__, {"self", "_process_params", "_caller_frame"}
        ),
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = make_listing_tree(os.path.join(tmp, "tree"))
        list_file = os.path.join(tmp, "list.txt")
        with open(list_file, "w") as fh:
            fh.write(LIST_TEXT)
        out["listing"] = listing_cases(root, list_file)
        folder = write_arrays(os.path.join(tmp, "arrays"))
        out["dtypes"] = dtype_cases(tmp)
        cases = roi_cases()
        for case in cases:
            path = os.path.join(folder, f"{case['array']}.npy")
            case["expected"] = outcome(
                lambda path=path, args=case["args"]: ndd.readers.Numpy(files=[path], **args)()
            )
        out["roi"] = cases
        out["fill"] = fill_cases(folder)
        out["calls"] = call_cases(folder)
    # One case per line: readable diffs without a line per number.
    lines = []
    for key, value in out.items():
        if isinstance(value, list):
            items = ",\n  ".join(json.dumps(v, separators=(",", ":")) for v in value)
            lines.append(f"{json.dumps(key)}: [\n  {items}\n ]")
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value, separators=(',', ':'))}")
    with open(os.path.join(HERE, "numpy_reader.json"), "w") as fh:
        fh.write("{\n " + ",\n ".join(lines) + "\n}\n")


if __name__ == "__main__":
    main()
