"""Replays the reference goldens of ``tests/golden/make_crop_goldens.py``
(``crop_cases.json`` and ``crop_values.npz``) against ndd."""

import functools
import json
import pathlib

import numpy as np
import pytest

import ndd

GOLDEN_DIR = pathlib.Path(__file__).parent / "golden"


@functools.cache
def _load():
    meta = json.loads((GOLDEN_DIR / "crop_cases.json").read_text(encoding="utf-8"))
    with np.load(GOLDEN_DIR / "crop_values.npz") as npz:
        values = {key: npz[key] for key in npz.files}
    return meta, values


def crop_cases(*ops):
    """The recorded cases of the operators ``ops``, as pytest params named by case."""
    meta, _ = _load()
    return [pytest.param(c, id=f"{c['name']}-{c['op']}") for c in meta["cases"] if c["op"] in ops]


def golden_value(key):
    """A stored array: an input (``input_<name>``) or an expected output."""
    return _load()[1][key]


def _kwargs(raw):
    out = {}
    for key, value in raw.items():
        if isinstance(value, dict) and "per_sample" in value:
            dtype = np.int32 if value.get("int") else np.bool_ if value.get("bool") else np.float32
            out[key] = ndd.batch([np.asarray(v, dtype=dtype) for v in value["per_sample"]])
        elif isinstance(value, dict) and "dtype" in value:
            out[key] = getattr(ndd, value["dtype"])
        else:
            out[key] = value
    return out


def call_case(case):
    """Run the recorded call with ndd; returns the result (Tensor or Batch)."""
    meta, values = _load()
    xs = []
    for name in case["input"].split("+"):
        if name in meta["batches"]:
            spec = meta["batches"][name]
            samples = [values[f"input_{name}_{i}"] for i in range(spec["size"])]
            xs.append(ndd.batch(samples, layout=spec["layout"] or None))
        else:
            xs.append(ndd.as_tensor(values[f"input_{name}"], layout=meta["inputs"][name]["layout"] or None))
    fn = ndd
    for part in case["op"].split("."):
        fn = getattr(fn, part)
    return fn(*xs, **_kwargs(case["kwargs"]))


def _outputs(result, case):
    return [np.asarray(s) for s in result.tensors] if case["batch"] else [np.asarray(result)]


def check_case(case, *, atol_float=None):
    """Replay ``case``: the same error, or outputs equal to the reference's (integers
    exactly, floats to a few units in the last place: the reference's float32
    arithmetic is not reproduced operation for operation)."""
    _, values = _load()
    if case.get("error"):
        with pytest.raises((ValueError, TypeError, IndexError)):
            _outputs(call_case(case), case)
        return
    result = call_case(case)
    outs = _outputs(result, case)
    assert (result.layout or "") == case["layout"]
    expected = [values[key] for key in case["outputs"]]
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected, strict=True):
        assert got.dtype == want.dtype
        assert got.shape == want.shape
        if want.dtype.kind == "f":
            scale = float(np.abs(want.astype(np.float64)).max(initial=1.0))
            atol = atol_float if atol_float is not None else 4 * float(np.finfo(want.dtype).eps) * scale
            np.testing.assert_allclose(got, want, rtol=0, atol=atol)
        else:
            np.testing.assert_array_equal(got, want)
