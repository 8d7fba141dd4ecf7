"""Reads the reference goldens and replays them.

The operator goldens, ``tests/golden/ops_cases.json`` and ``ops_values.npz`` (format
described in ``tests/golden/ops_make_goldens.py``): their inputs are rebuilt as ndd
objects, so that operator tests can replay each recorded call; ``golden_tests`` makes
the tests that replay every case of some operators.

The arithmetic goldens, ``arith_promotion.json`` and ``arith_values.json``/``.npz``
(described in ``tests/golden/ARITH_NOTES.md``): ``value_case_tests`` makes the tests
that replay recorded expressions.

Test modules under ``tests/`` import it as ``golden_cases`` (``tests/`` is on
``sys.path`` through its ``conftest.py``).
"""

import contextlib
import copy
import functools
import json
import pathlib
import warnings
from collections.abc import Mapping

import numpy as np
import pytest
from arrays import assert_result, dtype_name

import ndd

__all__ = [
    "cases_for",
    "build_input",
    "build_kwargs",
    "assert_matches",
    "call",
    "replay",
    "golden_tests",
    "PROMOTION",
    "VALUE_CASES",
    "VALUE_ARRAYS",
    "value_case_tests",
]

GOLDEN_DIR = pathlib.Path(__file__).parent / "golden"
_DTYPE_KWARGS = ("dtype", "output_dtype")


@functools.cache
def _load():
    with open(GOLDEN_DIR / "ops_cases.json", encoding="utf-8") as f:
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


# --------------------------------------------------------------------------- replaying operator goldens


def _operator(name):
    """``ndd.reshape`` for ``"reshape"``, ``ndd.reductions.sum`` for ``"reductions.sum"``."""
    fn = ndd
    for part in name.split("."):
        fn = getattr(fn, part)
    return fn


@contextlib.contextmanager
def _deprecations_silenced(quiet):
    if not quiet:
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def call(case, *, quiet=True):
    """Call the operator of a golden case on its rebuilt inputs and keyword arguments;
    the result is not evaluated. DeprecationWarning is silenced unless ``quiet`` is false."""
    inputs = [build_input(spec) for spec in case["inputs"]]
    kwargs = build_kwargs(case["kwargs"])
    with _deprecations_silenced(quiet):
        return _operator(case["op"])(*inputs, **kwargs)


def replay(case, *, quiet=True):
    """``call(case)`` with every result evaluated (each item of a tuple of results)."""
    with _deprecations_silenced(quiet):
        result = call(case, quiet=False)
        for item in result if isinstance(result, tuple) else (result,):
            item.evaluate()
    return result


def _case_id(case):
    return f"{case['id']}: {case['call']}"


def golden_tests(
    *ops,
    deviations=None,
    checks=None,
    errors=(ValueError, TypeError),
    error_names_op=False,
    errors_at_call=False,
    compare=assert_matches,
    deprecated_kwargs=(),
):
    """The golden tests of operators, for a test module to assign to test names::

        test_matches_reference_golden, test_every_deviating_golden_case_exists = golden_tests(
            "pad", deviations=DEVIATIONS
        )

    The first test replays every recorded case of ``ops`` (in file order): where the
    reference succeeded, ``compare(result, expected_value_spec)`` (by default
    ``assert_matches``, exact); where it raised, ndd must raise one of ``errors``.
    The second asserts that every case id named in ``deviations`` and ``checks`` is a
    recorded case of ``ops``. A module that needs only the first discards the second.

    deviations: ``{case id: reason}``, cases where ndd deliberately differs from the
        reference and tests its behaviour elsewhere; skipped with the reason.
    checks: ``{case id: check(case)}``, cases where ndd deliberately differs, each
        asserted by its function instead.
    errors: the exception types that count as raising, as a tuple, or as a mapping
        from the reference's ``error_type`` ("RuntimeError") to a tuple.
    error_names_op: the error message must name the operator ("ndd.pad").
    errors_at_call: the error must come from the call itself, before any evaluation.
    deprecated_kwargs: names of deprecated keyword arguments: a successful call given
        one must warn with DeprecationWarning (and no DeprecationWarning is silenced).

    Cases recorded by a script rather than a call (``"call": "custom"``) are skipped.
    """
    cases = [case for op in ops for case in cases_for(op)]
    deviations = dict(deviations or {})
    checks = dict(checks or {})
    quiet = not deprecated_kwargs

    @pytest.mark.parametrize("case", cases, ids=_case_id)
    def test_matches_reference_golden(case):
        if case["id"] in deviations:
            pytest.skip(deviations[case["id"]])
        if case["call"] == "custom":
            # e.g. reshape_046: the reference reports a bad shape when the result is
            # used; ndd raises at the call site (test_reshape_errors_at_the_call_site).
            pytest.skip(f"a scripted probe, not a call to replay: {case['note']}")
        if case["id"] in checks:
            checks[case["id"]](case)
            return
        expected = case["result"]
        if expected["ok"]:
            deprecated = any(name in case["kwargs"] for name in deprecated_kwargs)
            with pytest.warns(DeprecationWarning) if deprecated else contextlib.nullcontext():
                compare(replay(case, quiet=quiet), expected["value"])
            return
        raised = errors[expected["error_type"]] if isinstance(errors, Mapping) else errors
        with pytest.raises(raised, match=f"ndd.{case['op']}" if error_names_op else None):
            if errors_at_call:
                call(case, quiet=quiet)
            else:
                replay(case, quiet=quiet)

    def test_every_deviating_golden_case_exists():
        assert set(deviations) | set(checks) <= {case["id"] for case in cases}

    return test_matches_reference_golden, test_every_deviating_golden_case_exists


# --------------------------------------------------------------------------- arithmetic goldens

PROMOTION = json.loads((GOLDEN_DIR / "arith_promotion.json").read_text(encoding="utf-8"))
VALUE_CASES = json.loads((GOLDEN_DIR / "arith_values.json").read_text(encoding="utf-8"))
with np.load(GOLDEN_DIR / "arith_values.npz") as _npz:
    VALUE_ARRAYS = {key: _npz[key] for key in _npz.files}

# Reference error -> the exception ndd raises for it.
VALUE_ERROR_TYPES = {
    "cannot be booleans": TypeError,  # reference: RuntimeError
    "cannot be a boolean": TypeError,  # reference: RuntimeError
    "Can't broadcast shapes": ValueError,  # reference: RuntimeError
}


def run_value_case(name):
    """Evaluate a recorded expression on the recorded inputs (named a, b or a, lo, hi)."""
    entry = VALUE_CASES[name]
    if "code" in entry:  # run in a child process by the recorder, as it may kill the reference
        return eval(entry["code"], {"ndd": ndd, "np": np})
    expr = entry["expr"].split(" (")[0].strip()
    expr = expr.replace(" lt ", " < ").replace(" eq ", " == ").replace(" gt ", " > ")
    names = ["a", "lo", "hi"] if " lo" in expr else ["a", "b"]
    inputs = {names[i]: ndd.tensor(VALUE_ARRAYS[f"{name}.in{i}"]) for i in range(len(entry["inputs"]))}
    return eval(expr, {"ndd": ndd, "np": np}, inputs)


def check_value_case(name, divergent):
    """Replay a recorded expression: ndd gives the reference's result, or the one in
    ``divergent`` (values and dtype, or an exception type)."""
    entry = VALUE_CASES[name]
    want = divergent.get(name)
    if want is None and "error" in entry:
        want = next(exc for text, exc in VALUE_ERROR_TYPES.items() if text in entry["error"])
    if want is None and "stdout" in entry:  # "<values> <reference dtype name>"
        values, ref_dtype = entry["stdout"].rsplit(" ", 1)
        want = (json.loads(values), dtype_name(ndd.DType.parse(ref_dtype)))
    if isinstance(want, type):
        with pytest.raises(want):
            np.asarray(run_value_case(name))
    elif want is not None:
        assert_result(run_value_case(name), *want)
    else:
        result = run_value_case(name)
        expected = VALUE_ARRAYS[f"{name}.out"]
        data = np.asarray(result)
        assert dtype_name(result.dtype) == entry["out_dtype"] == data.dtype
        assert data.shape == expected.shape == result.shape
        if data.dtype.kind == "f":
            # The reference's transcendental functions may differ from numpy's by an ulp or two.
            np.testing.assert_allclose(data, expected, rtol=4 * np.finfo(data.dtype).eps, atol=0)
        else:
            np.testing.assert_array_equal(data, expected)


def value_case_tests(names, divergent):
    """The tests of recorded expressions, for a test module to assign to test names::

        test_reference_value_case, test_divergences_refer_to_recorded_cases = value_case_tests(
            MATH_CASES, DIVERGENT
        )

    The first replays each named case (``check_value_case``); the second asserts that
    every case named in ``divergent`` is one of them.
    """
    names = list(names)

    @pytest.mark.parametrize("name", names)
    def test_reference_value_case(name):
        check_value_case(name, divergent)

    def test_divergences_refer_to_recorded_cases():
        assert set(divergent) <= set(names)

    return test_reference_value_case, test_divergences_refer_to_recorded_cases
