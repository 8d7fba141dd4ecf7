"""Every public name of the reference's dynamic mode exists in ndd with the reference's
parameters (names, kinds, order, which are required), as recorded in
tests/golden/surface.json by tests/golden/make_surface_goldens.py. Defaults may differ
in form (the reference shows None for operator defaults, ndd the real value).

The few names ndd does not provide yet are listed in NOT_PROVIDED with the reason; the
README names them under "Not yet", and a test fails as soon as one of them appears, so
that the list (and the README) is kept true."""

import inspect
import json
import pathlib

import pytest

import ndd

ROOT = pathlib.Path(__file__).resolve().parents[1]
SURFACE = json.loads((ROOT / "tests" / "golden" / "surface.json").read_text())["names"]

# optical_flow runs on NVIDIA's optical flow hardware only (the reference has no CPU
# implementation).
NOT_PROVIDED = {
    "optical_flow": "optical flow hardware",
}


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


PROVIDED = sorted(name for name in SURFACE if name not in NOT_PROVIDED)


@pytest.mark.parametrize("name", PROVIDED)
def test_the_reference_name_exists_with_its_kind(name):
    obj = _resolve(name)
    kind = SURFACE[name]["kind"]
    if kind == "class":
        assert isinstance(obj, type)
    elif kind == "function":
        assert callable(obj) and not isinstance(obj, type)


@pytest.mark.parametrize("name", [n for n in PROVIDED if SURFACE[n]["parameters"] is not None])
def test_the_parameters_match_the_reference(name):
    entry = SURFACE[name]
    deprecated = set(entry.get("deprecated", ()))
    expected = [p for p in entry["parameters"] if not p[0].startswith("_") and p[0] not in deprecated]
    assert _public_parameters(_resolve(name), deprecated) == expected


@pytest.mark.parametrize("name", sorted(NOT_PROVIDED))
def test_a_name_not_provided_is_absent_and_named_in_the_readme(name):
    with pytest.raises(AttributeError):
        _resolve(name)
    readme = (ROOT / "README.md").read_text()
    assert f"`{name}`" in readme or f"`{name.rsplit('.', 1)[-1]}`" in readme
