"""Replays the goldens of tests/golden/make_color_goldens.py (and the scripts that
reuse its format: make_normalize_goldens.py, make_noise_goldens.py)."""

import json
import pathlib

import numpy as np

import ndd

GOLDEN = pathlib.Path(__file__).parent.parent / "golden"


def load(name):
    """(cases, arrays) of ``<name>_cases.json`` / ``<name>_values.npz``."""
    cases = json.loads((GOLDEN / f"{name}_cases.json").read_text(encoding="utf-8"))["cases"]
    with np.load(GOLDEN / f"{name}_values.npz") as npz:
        arrays = {k: npz[k] for k in npz.files}
    return cases, arrays


def build_kwargs(record, arrays):
    kwargs = {}
    for name, value in record.items():
        if isinstance(value, dict) and "per_frame" in value:
            kwargs[name] = ndd.tensor(np.array(value["per_frame"], np.float32), layout="F")
        elif isinstance(value, dict) and "per_sample_ints" in value:
            kwargs[name] = ndd.batch([np.array(v, np.int32) for v in value["per_sample_ints"]])
        elif isinstance(value, dict) and "per_sample" in value:
            values = value["per_sample"]
            kind = np.int32 if all(isinstance(v, int) for v in values) else np.float32
            kwargs[name] = ndd.batch([kind(v) for v in values])
        elif isinstance(value, dict) and "per_sample_arrays" in value:
            kwargs[name] = ndd.batch([arrays[k] for k in value["per_sample_arrays"]])
        elif isinstance(value, dict) and "array" in value:
            kwargs[name] = ndd.tensor(arrays[value["array"]])
        elif isinstance(value, dict) and "dtype" in value:
            kwargs[name] = getattr(ndd, value["dtype"])
        elif isinstance(value, dict) and "image_type" in value:
            kwargs[name] = getattr(ndd.types, value["image_type"])
        else:
            kwargs[name] = value
    return kwargs


def replay(case, arrays):
    """Run the recorded call with ndd: (outputs, expected outputs), lists of arrays."""
    fn = ndd
    for part in case["op"].split("."):
        fn = getattr(fn, part)
    samples = [arrays[k] for k in case["inputs"]]
    if case["batch"]:
        data = ndd.batch(samples, layout=case["layout"])
    else:
        data = ndd.tensor(samples[0], layout=case["layout"])
    result = fn(data, **build_kwargs(case["kwargs"], arrays))
    assert result.layout == case.get("out_layout", case["layout"])
    outs = [np.asarray(s) for s in result] if case["batch"] else [np.asarray(result)]
    return outs, [arrays[k] for k in case["outputs"]]


def case_id(case):
    return f"{case['op']}-{case['inputs'][0]}-{'-'.join(sorted(case['kwargs']))}"
