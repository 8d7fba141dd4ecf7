"""Sphinx configuration of the ndd documentation (``make docs``)."""

import pathlib
import shutil
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "ndd"
author = "the ndd authors"
copyright = "2026, the ndd authors"  # noqa: A001 - the name Sphinx reads

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "myst_nb",
    "ndd_api",
]

# The tutorials live in notebooks/ at the top of the repository (without outputs); the build
# copies them here and executes every one (a failing cell fails the build).
TUTORIALS = DOCS / "tutorials"
TUTORIALS.mkdir(exist_ok=True)
for stale in TUTORIALS.glob("*.ipynb"):
    if not (ROOT / "notebooks" / stale.name).exists():
        stale.unlink()
for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
    target = TUTORIALS / notebook.name
    if not target.exists() or target.read_bytes() != notebook.read_bytes():
        shutil.copyfile(notebook, target)

exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store", "jupyter_execute"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

html_theme = "furo"
html_title = "ndd"
html_static_path = []

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

nb_execution_mode = "force"
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"show-inheritance": False}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
python_maximum_signature_line_length = 88
