"""The README's example runs as written."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "README.md has no python example"
    if any(".torch()" in block for block in blocks):
        pytest.importorskip("torch")
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})  # noqa: S102
    out = capsys.readouterr().out
    assert "CHW" in out
