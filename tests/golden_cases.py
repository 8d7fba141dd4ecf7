"""Reads the reference goldens of ``tests/golden/ops_cases.json`` and ``ops_values.npz``
(format described in ``tests/golden/ops_make_goldens.py``) and rebuilds their inputs
as ndd objects, so that operator tests can replay each recorded call.

Test modules under ``tests/`` import it as ``golden_cases`` (``tests/`` is on
``sys.path`` through its ``conftest.py``).
"""

import copy
import functools
import json
import pathlib

import numpy as np

import ndd

__all__ = ["cases_for", "build_input", "build_kwargs", "assert_matches"]

GOLDEN_DIR = pathlib.Path(__file__).parent / "golden"
_DTYPE_KWARGS = ("dtype", "output_dtype")


@functools.cache
def _load():
    with open(GOLDEN_DIR / "ops_cases.json") as f:
        cases = json.load(f)["cases"]
    with np.load(GOLDEN_DIR / "ops_values.npz") as npz:
        arrays = {key: npz[key] for key in npz.files}
    return cases, arrays


def _attach_arrays(obj, arrays):
    """Add ``value`` (for ``array``) and ``values`` (for ``arrays``) to every spec in ``obj``."""
    if isinstance(obj, list):
        for item in obj:
            _attach_arrays(item, arrays)
    elif isinstance(obj, dict):
        for item in obj.values():
            _attach_arrays(item, arrays)
        if isinstance(obj.get("array"), str):
            obj["value"] = arrays[obj["array"]]
        if isinstance(obj.get("arrays"), list):
            obj["values"] = [arrays[key] for key in obj["arrays"]]


def cases_for(op_name):
    """The golden cases of ``op_name`` (``"reshape"``, ``"reductions.sum"``), in file order.

    Each case is the JSON record with the numpy arrays attached to its specs: a spec
    with ``"array"`` gets ``"value"``, one with ``"arrays"`` gets ``"values"``.
    The records are fresh copies; callers may modify them.
    """
    cases, arrays = _load()
    selected = copy.deepcopy([c for c in cases if c["op"] == op_name])
    for case in selected:
        _attach_arrays(case, arrays)
    return selected


def _raw_object(text):
    """The object behind a ``{"kind": "raw"}`` repr (only numpy scalar types occur)."""
    prefix, suffix = "<class 'numpy.", "'>"
    if text.startswith(prefix) and text.endswith(suffix):
        return getattr(np, text[len(prefix) : -len(suffix)])
    raise ValueError(f"cannot rebuild the raw golden value {text!r}")


def build_input(spec):
    """The object the reference was given for a value spec: an ``ndd.Tensor`` or
    ``ndd.Batch`` (with the recorded layout), a numpy array or a Python value."""
    kind = spec["kind"]
    if kind == "tensor":
        return ndd.tensor(spec["value"], layout=spec["layout"])
    if kind == "batch":
        return ndd.batch(list(spec["values"]), layout=spec["layout"])
    if kind == "numpy":
        return spec["value"]
    if kind == "py":
        return spec["value"]
    if kind == "raw":
        return _raw_object(spec["repr"])
    raise ValueError(f"unknown golden input kind {kind!r}")


def _dtype_kwarg(value):
    if isinstance(value, dict) and "raw" in value:
        return value["raw"]
    if isinstance(value, str):
        if value.startswith("types."):
            return ndd.types.DALIDataType[value[len("types.") :]]
        return getattr(ndd, value)
    return build_input(value) if isinstance(value, dict) else value


def build_kwargs(kwargs):
    """The keyword arguments of a golden call; a ``dtype`` given as a name becomes the
    ndd dtype (``"types.INT16"`` the ``DALIDataType``), ``{"raw": x}`` stays ``x``."""
    out = {}
    for name, value in kwargs.items():
        if name in _DTYPE_KWARGS:
            out[name] = _dtype_kwarg(value)
        elif isinstance(value, dict) and "kind" in value:
            out[name] = build_input(value)
        else:
            out[name] = value
    return out


def assert_matches(result, spec):
    """Assert that an ndd result equals a golden value spec: the values exactly (NaN
    equal to NaN), the dtype, the shape(s), the layout and the kind (Tensor/Batch/tuple)."""
    kind = spec["kind"]
    if kind == "tuple":
        assert isinstance(result, tuple), f"expected a tuple, got {type(result).__name__}"
        assert len(result) == len(spec["items"])
        for r, s in zip(result, spec["items"], strict=True):
            assert_matches(r, s)
        return
    expected_dtype = ndd.dtype(spec["dtype"])
    if kind == "tensor":
        assert isinstance(result, ndd.Tensor), f"expected a Tensor, got {type(result).__name__}"
        assert tuple(result.shape) == tuple(spec["shape"])
        np.testing.assert_array_equal(np.asarray(result), spec["value"], strict=True)
    elif kind == "batch":
        assert isinstance(result, ndd.Batch), f"expected a Batch, got {type(result).__name__}"
        assert result.batch_size == len(spec["values"])
        assert [tuple(s) for s in result.shape] == [tuple(s) for s in spec["shapes"]]
        for sample, expected in zip(result, spec["values"], strict=True):
            np.testing.assert_array_equal(np.asarray(sample), expected, strict=True)
    else:
        raise ValueError(f"cannot compare with a golden value of kind {kind!r}")
    assert result.dtype == expected_dtype, f"dtype {result.dtype} != {expected_dtype}"
    assert result.layout == spec["layout"], f"layout {result.layout!r} != {spec['layout']!r}"
