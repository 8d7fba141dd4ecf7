"""Every public name of the reference's dynamic mode exists in ndd with the reference's
parameters (names, kinds, order, which are required), as recorded in
tests/golden/surface.json by tests/golden/make_surface_goldens.py. Defaults may differ
in form (the reference shows None for operator defaults, ndd the real value)."""

import enum
import inspect
import json
import pathlib
import sys

import pytest

import ndd

ROOT = pathlib.Path(__file__).resolve().parents[1]
SURFACE = json.loads((ROOT / "tests" / "golden" / "surface.json").read_text(encoding="utf-8"))["names"]
# The Python the reference ran on when tests/golden/make_surface_goldens.py made the goldens.
GOLDEN_PYTHON = (3, 11)


def _resolve(path):
    obj = ndd
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _public_parameters(obj, deprecated):
    """[name, kind, required] of the parameters a user passes: not ``self``, not
    ``**kwargs``, not the reference's private ``_backend``-like ones, not the
    deprecated arguments (which ndd need not take)."""
    return [
        [p.name, p.kind.name, p.default is inspect.Parameter.empty]
        for p in inspect.signature(obj).parameters.values()
        if p.name != "self"
        and not p.name.startswith("_")
        and p.kind is not inspect.Parameter.VAR_KEYWORD
        and p.name not in deprecated
    ]


NAMES = sorted(SURFACE)


@pytest.mark.parametrize("name", NAMES)
def test_the_reference_name_exists_with_its_kind(name):
    obj = _resolve(name)
    kind = SURFACE[name]["kind"]
    if kind == "class":
        assert isinstance(obj, type)
    elif kind == "function":
        assert callable(obj) and not isinstance(obj, type)


@pytest.mark.parametrize("name", [n for n in NAMES if SURFACE[n]["parameters"] is not None])
def test_the_parameters_match_the_reference(name):
    entry = SURFACE[name]
    deprecated = set(entry.get("deprecated", ()))
    expected = [p for p in entry["parameters"] if not p[0].startswith("_") and p[0] not in deprecated]
    obj = _resolve(name)
    if isinstance(obj, enum.EnumMeta) and sys.version_info[:2] != GOLDEN_PYTHON:
        # An enumeration is called as Python's Enum is, whose parameters change from
        # one Python to the next; elsewhere than on the goldens' Python, ndd's is that.
        expected = _public_parameters(enum.Enum("Probe", "A"), deprecated)
    assert _public_parameters(obj, deprecated) == expected
