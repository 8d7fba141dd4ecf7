"""Reference goldens recorded as a list of calls: ``tests/golden/<name>_cases.json`` (its
"cases": ``op``, a dotted name under ``ndd``; ``inputs``, array names, a list of names
standing for a Batch; ``kwargs``; ``expected`` array names or ``error``) and
``<name>_values.npz`` (the arrays), as ``tests/golden/make_filter_goldens.py`` and its
audio and spectral twins write them.

Test modules under ``tests/`` import it as ``case_goldens`` (``tests/`` is on
``sys.path`` through its ``conftest.py``).
"""

import functools
import json
import pathlib

import numpy as np

import ndd

__all__ = ["load", "split", "call", "case_id"]

GOLDEN_DIR = pathlib.Path(__file__).parent / "golden"


@functools.cache
def load(name):
    """``(cases, arrays)`` of the goldens ``name`` (``"filter"``, ``"audio"`` ...)."""
    with open(GOLDEN_DIR / f"{name}_cases.json", encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    with np.load(GOLDEN_DIR / f"{name}_values.npz") as npz:
        arrays = {key: npz[key] for key in npz.files}
    return cases, arrays


def split(cases):
    """The cases that give values, and those the reference refuses."""
    return [c for c in cases if "error" not in c], [c for c in cases if "error" in c]


def _kwarg(value):
    if isinstance(value, dict) and "batch" in value:
        return ndd.batch([np.asarray(v, dtype=value["dtype"]) for v in value["batch"]])
    if isinstance(value, str) and value.startswith("dtype:"):
        return getattr(ndd, value[len("dtype:") :])
    return value


def call(case, build):
    """Replay ``case``: its inputs made by ``build(spec)`` (a spec is an array name, or a
    list of them for a Batch), its keyword arguments as recorded."""
    fn = ndd
    for part in case["op"].split("."):
        fn = getattr(fn, part)
    inputs = [build(spec) for spec in case["inputs"]]
    return fn(*inputs, **{k: _kwarg(v) for k, v in case["kwargs"].items()})


def case_id(case, *extra):
    """A test id: the operator, the inputs, ``extra`` and the plain keyword arguments."""
    kwargs = ",".join(f"{k}={v}" for k, v in case["kwargs"].items() if not isinstance(v, dict))
    return "-".join([case["op"], "+".join(map(str, case["inputs"])), *map(str, extra), kwargs])
