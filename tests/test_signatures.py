"""Public functions and classes have the reference's parameters: names, kinds,
order and which are required (tests/golden/signatures.json). Defaults may differ
in form: the reference shows None for every operator default, ndd the real value,
and passing None means the default in both."""

import inspect
import json
import pathlib

import pytest

import ndd

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "signatures.json").read_text())


def _deprecated(entry):
    args = entry.get("schema", {}).get("arguments", {})
    return {name for name, info in args.items() if info.get("deprecated")}


def _params(fn):
    return [
        (p.name, p.kind.name, p.default is inspect.Parameter.empty)
        for p in inspect.signature(fn).parameters.values()
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]


def _expected(entry):
    deprecated = _deprecated(entry)
    return [
        (p["name"], p["kind"], p["required"]) for p in entry["parameters"] if p["name"] not in deprecated
    ], deprecated


def _resolve(path):
    obj = ndd
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


CASES = [(name, entry) for name, entry in GOLDEN["top"].items()]
CASES += [(f"math.{name}", entry) for name, entry in GOLDEN["math"].items()]
CASES += [(f"reductions.{name}", entry) for name, entry in GOLDEN["reductions"].items()]


@pytest.mark.parametrize("name, entry", CASES, ids=[c[0] for c in CASES])
def test_function_signature_matches_reference(name, entry):
    expected, deprecated = _expected(entry)
    ours = [p for p in _params(_resolve(name)) if p[0] not in deprecated]
    assert ours == expected


@pytest.mark.parametrize("name", sorted(GOLDEN["classes"]))
def test_class_constructor_parameters_match_reference(name):
    expected, _ = _expected(GOLDEN["classes"][name])
    expected = [p for p in expected if p[0] != "self"]
    assert _params(getattr(ndd, name)) == expected
