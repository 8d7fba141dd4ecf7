"""The compiled kernels leave the processor's vector state clean.

A function that uses 256- or 512-bit registers must clear their upper halves (vzeroupper)
before it returns or jumps to code compiled for SSE; otherwise that code, and
everything after it in the process, runs slowly (three times slower here, for
every kernel that follows). GCC inserts the instruction itself, except before
some tail calls: the AVX2 colour kernels once lacked it.
"""

import pathlib
import re
import shutil
import subprocess

import pytest

import ndd

_MODULES = sorted((pathlib.Path(ndd.__file__).parent / "_cpu").glob("*.so"))


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs objdump (binutils)")
@pytest.mark.parametrize("module", _MODULES, ids=[m.name.split(".")[0] for m in _MODULES])
def test_functions_using_wide_registers_clear_their_upper_halves(module):
    listing = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(module)], capture_output=True, text=True, check=True
    ).stdout
    dirty = []
    for name, body in re.findall(r"^[0-9a-f]+ <([^>]+)>:\n(.*?)(?=^[0-9a-f]+ <|\Z)", listing, re.M | re.S):
        if ("%ymm" in body or "%zmm" in body) and "vzeroupper" not in body:
            dirty.append(name)
    assert not dirty, f"{module.name}: functions using ymm or zmm registers without vzeroupper: {dirty}"
