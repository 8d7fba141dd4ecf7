"""The documentation is complete and its code runs: every public name of the reference's
namespaces has a documentation entry, every operator an argument table and an example that
runs, every Python block of docs/*.md runs, and the tutorial notebooks are committed without
outputs (the docs build executes them)."""

import doctest
import importlib
import inspect
import json
import os
import pathlib
import re
import sys
import textwrap

import numpy
import pytest

import ndd

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import ndd_api  # noqa: E402 - docs/_ext is not a package
import operator_examples  # noqa: E402

OPERATORS = {op.qualname: op for op in ndd.all_public_operators()}


@pytest.fixture(scope="module")
def entries():
    return ndd_api.collect_entries()


@pytest.fixture(scope="module")
def example_namespace():
    return ndd_api.example_setup()


@pytest.mark.parametrize("namespace", ndd_api.NAMESPACES + ndd_api.SUB_NAMESPACES)
def test_every_public_name_has_a_documentation_entry(namespace, entries):
    try:
        module = importlib.import_module(namespace)
    except ImportError as exc:  # ndd.pytorch.nodes without torchdata installed
        pytest.skip(f"{namespace} cannot be imported here: {exc}")
    undocumented = [
        f"{namespace}.{name}"
        for name in ndd_api.public_names(module)
        if f"{namespace}.{name}" not in entries or not entries[f"{namespace}.{name}"].doc
    ]
    assert not undocumented, f"public names without documentation: {undocumented}"


def test_every_operator_is_on_its_family_page(entries):
    pages = {entries[q].page for q in OPERATORS}
    assert pages == {f"api/operators/{f}" for f in ndd_api.FAMILY_TITLES}
    assert set(ndd_api.FAMILY_TITLES) == set(importlib.import_module("ndd._ops.registry").FAMILIES)


@pytest.mark.parametrize("qualname", sorted(OPERATORS))
def test_every_operator_argument_is_described(qualname):
    op = OPERATORS[qualname]
    assert op.doc.strip()
    assert [a.name for a in op.arg_specs if not a.doc.strip()] == []


# The modules of ndd's optional extras: an example that needs a missing one is skipped.
OPTIONAL_MODULES = {"av", "cv2", "soundfile", "miniaudio", "pycocotools", "torch", "astropy", "lmdb"}


def _missing_optional_module(error):
    """The optional module whose absence raised ``error`` (or caused it), else None."""
    while error is not None:
        if isinstance(error, ModuleNotFoundError) and (error.name or "").split(".")[0] in OPTIONAL_MODULES:
            return error.name
        error = error.__cause__ or error.__context__
    return None


@pytest.mark.parametrize("qualname", sorted(OPERATORS))
def test_the_operator_example_runs(qualname, example_namespace):
    assert qualname in operator_examples.EXAMPLES, (
        f"{qualname} has no example in docs/_ext/operator_examples.py"
    )
    if ".torch()" in operator_examples.EXAMPLES[qualname]:
        pytest.importorskip("torch")
    try:
        output = ndd_api.run_example(operator_examples.EXAMPLES[qualname], example_namespace)
    except ImportError as exc:
        missing = _missing_optional_module(exc)
        if missing is None:
            raise
        pytest.skip(f"the example needs {missing}, an optional package")
    assert output.strip()


def test_no_example_names_a_missing_operator():
    assert set(operator_examples.EXAMPLES) - set(OPERATORS) == set()


def test_the_operator_page_lists_every_argument_with_its_properties():
    op = OPERATORS["ndd.resize"]
    text = ndd_api.render_operator(op, ("print(1)", "1"))
    assert ".. py:function:: resize(input, /, *, batch_size=None, device=None, antialias=True," in text
    assert "interp_type=DALIInterpType.INTERP_LINEAR" in text
    for arg in op.arg_specs:
        assert f"``{arg.name}``" in text
    assert "**Devices:** CPU" in text
    cast = ndd_api.render_operator(OPERATORS["ndd.cast"], ("print(1)", "1"))
    assert "**Devices:** CPU, GPU" in cast


def python_blocks(markdown):
    """The executed code of a MyST page: ```python fences and ```{code-cell} cells, in order.
    Pipeline-mode code shown for comparison is written as ```{code-block} and is not run."""
    pattern = r"^```(?:python|\{code-cell\}[ \t]*(?:python3?|ipython3?)?)[ \t]*\n(.*?)^```"
    blocks = re.findall(pattern, markdown, flags=re.S | re.M)
    return [re.sub(r"^:\w[\w-]*:.*\n", "", block, flags=re.M) for block in blocks]


DOC_PAGES = sorted(p for p in DOCS.glob("*.md") if python_blocks(p.read_text(encoding="utf-8")))


@pytest.mark.parametrize("page", DOC_PAGES, ids=[p.name for p in DOC_PAGES])
def test_the_python_blocks_of_the_page_run(page, tmp_path, capsys):
    if ".torch()" in page.read_text(encoding="utf-8"):
        pytest.importorskip("torch")
    namespace = {"__name__": "__docs__"}
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        for block in python_blocks(page.read_text(encoding="utf-8")):
            exec(compile(block, str(page), "exec"), namespace)  # noqa: S102 - the docs' own code
    finally:
        os.chdir(here)


def test_the_migration_guide_runs_code():
    assert python_blocks((DOCS / "migration.md").read_text(encoding="utf-8"))


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebooks_are_committed_without_outputs(notebook):
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    with_outputs = [
        i for i, c in enumerate(cells) if c["cell_type"] == "code" and (c["outputs"] or c["execution_count"])
    ]
    assert with_outputs == [], (
        f"{notebook.name}: cells {with_outputs} have outputs (the docs build makes them)"
    )


def test_the_readme_links_to_the_docs_and_every_tutorial():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/_build/html/index.html" in readme and "docs/migration.md" in readme
    missing = [n.name for n in NOTEBOOKS if f"(notebooks/{n.name})" not in readme]
    assert NOTEBOOKS and missing == []


def _documented_modules():
    """The modules whose docstrings the API reference shows: the namespaces, and where their
    classes and functions are defined."""
    entries = ndd_api.collect_entries()
    modules = {importlib.import_module(n) for n in ndd_api.import_namespaces()[0]}
    modules |= {inspect.getmodule(e.obj) for e in entries.values() if e.kind in ("class", "function")}
    return sorted(
        (m for m in modules if m is not None and m.__name__.startswith("ndd")), key=lambda m: m.__name__
    )


def _doctest_namespace():
    """What docstring examples may use without defining it: ndd, numpy, and a reader and a
    generator to checkpoint (``reader``, ``new_reader``, ``rng``)."""
    photos = sorted(
        str(p) for p in (pathlib.Path(ndd.__file__).parent / "_sample_data" / "photos").glob("*.jpg")
    )
    return {
        "ndd": ndd,
        "np": numpy,
        "reader": ndd.readers.File(files=photos, random_shuffle=True, seed=1),
        "new_reader": ndd.readers.File(files=photos, random_shuffle=True, seed=1),
        "rng": ndd.random.RNG(seed=1),
    }


@pytest.mark.parametrize("module", _documented_modules(), ids=lambda m: m.__name__)
def test_the_docstring_examples_run(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(module, globs=_doctest_namespace()):
        runner.run(test)
    assert runner.failures == 0, (
        f"{runner.failures} docstring example(s) of {module.__name__} fail (see the output)"
    )


def _literal_blocks(doc):
    """The indented blocks after a line ending in ``::`` (reStructuredText literal blocks)."""
    blocks, lines = [], (doc or "").splitlines()
    for index, line in enumerate(lines):
        if line.rstrip().endswith("::"):
            block = []
            for following in lines[index + 1 :]:
                if following.strip() and not following.startswith((" ", "\t")):
                    break
                block.append(following)
            blocks.append(textwrap.dedent("\n".join(block)).strip())
    return [b for b in blocks if b]


def test_the_code_blocks_of_docstrings_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    docs = []
    for module in _documented_modules():
        docs.append(inspect.getdoc(module))
        for value in vars(module).values():
            if (inspect.isclass(value) or inspect.isfunction(value)) and value.__module__.startswith("ndd"):
                docs.append(inspect.getdoc(value))
                if inspect.isclass(value):
                    docs += [inspect.getdoc(m) for m in vars(value).values() if inspect.isfunction(m)]
    blocks = [b for doc in docs for b in _literal_blocks(doc)]
    assert blocks
    for block in blocks:
        exec(compile(block, "<docstring>", "exec"), {"ndd": ndd, "np": numpy})  # noqa: S102


@pytest.mark.parametrize("qualname", sorted(operator_examples.PICTURES))
def test_the_operator_picture_draws(qualname, example_namespace, tmp_path):
    namespace = {}
    ndd_api.run_example(operator_examples.EXAMPLES[qualname], example_namespace, keep=namespace)
    ndd_api.save_picture(operator_examples.PICTURES[qualname], namespace, tmp_path / "picture.png")
    assert (tmp_path / "picture.png").stat().st_size > 0
