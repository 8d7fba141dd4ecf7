"""Replays the detection and segmentation goldens (tests/golden/detection_reference.json
and .npz, made by tests/golden/make_detection_goldens.py with the reference).

Test modules import it as ``detection_golden`` (``tests/`` is on ``sys.path``).
"""

import functools
import json
import pathlib

import numpy as np
import pytest

import ndd

GOLDEN_DIR = pathlib.Path(__file__).parent / "golden"

__all__ = ["arrays", "cases", "case_id", "replay", "assert_reference_signature", "function"]


@functools.cache
def _load_json():
    return json.loads((GOLDEN_DIR / "detection_reference.json").read_text(encoding="utf-8"))


@functools.cache
def _load():
    with np.load(GOLDEN_DIR / "detection_reference.npz") as npz:
        arrays = {key: npz[key] for key in npz.files}
    return _load_json()["cases"], arrays


def assert_reference_signature(op):
    """The public function ``op`` has the reference's parameters (names, kinds, order,
    which are required); defaults may differ in form (the reference shows None)."""
    import inspect

    ours = [
        [p.name, p.kind.name, p.default is inspect.Parameter.empty]
        for p in inspect.signature(function(op)).parameters.values()
    ]
    assert ours == _load_json()["signatures"][op]


def arrays():
    """The recorded arrays by key (inputs and outputs of the cases)."""
    return _load()[1]


def cases(op):
    """The recorded cases of ``op`` (such as ``"bb_flip"`` or ``"segmentation.select_masks"``)."""
    return [c for c in _load()[0] if c["op"] == op]


def case_id(case):
    """A short readable test id for a case."""
    kwargs = ",".join(f"{k}={v}" for k, v in case["kwargs"].items() if not isinstance(v, dict))
    kind = "error" if "error" in case else "ok"
    return f"{kind}[{kwargs}]"


def _value(spec, arrays):
    """An ndd input or argument from a recorded spec; numpy arrays for expected values."""
    if isinstance(spec, dict) and "tensor" in spec:
        return arrays[spec["tensor"]]
    if isinstance(spec, dict) and "batch" in spec:
        return ndd.batch([arrays[k] for k in spec["batch"]])
    if isinstance(spec, dict) and "rng" in spec:
        # The reference's draws cannot be reproduced; recorded random cases have one outcome.
        return ndd.random.RNG(seed=0)
    return spec


def function(op):
    """The ndd function named ``op`` (``"segmentation.select_masks"``)."""
    fn = ndd
    for part in op.split("."):
        fn = getattr(fn, part)
    return fn


def _expected(spec, arrays):
    if "tensor" in spec:
        return [arrays[spec["tensor"]]]
    return [arrays[k] for k in spec["batch"]]


def _actual(result):
    if isinstance(result, ndd.Batch):
        return [np.asarray(s) for s in result]
    return [np.asarray(result)]


def replay(case, *, rtol=0.0, atol=0.0):
    """Run ``case`` with ndd and compare with the reference: every output equal in
    dtype and shape and within the tolerances, or an error raised where the
    reference raised one."""
    arrays = _load()[1]
    fn = function(case["op"])
    inputs = [_value(i, arrays) for i in case["inputs"]]
    kwargs = {k: _value(v, arrays) for k, v in case["kwargs"].items()}
    if "error" in case:
        with pytest.raises((ValueError, TypeError, IndexError)):
            result = fn(*inputs, **kwargs)
            for r in result if isinstance(result, tuple) else (result,):
                _actual(r)
        return
    result = fn(*inputs, **kwargs)
    results = result if isinstance(result, tuple) else (result,)
    assert len(results) == len(case["outputs"])
    for got, spec in zip(results, case["outputs"], strict=True):
        want = _expected(spec, arrays)
        got = _actual(got)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
