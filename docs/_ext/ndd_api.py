"""The API reference of ndd, generated from the package itself so that it cannot drift.

Every public name of every namespace the reference defines (``NAMESPACES``) gets one
documentation entry: operators from their schema (``ndd._ops.schema.Operator``: signature,
inputs, arguments with type, default, per-sample or not, CPU/GPU support, and an executed
example from ``operator_examples.py``), everything else through autodoc. Operators are
grouped one page per family (the modules of ``ndd._ops.registry.FAMILIES``); each
namespace page lists its names and links to the operators' family pages.

Sphinx runs ``write_pages`` when the builder starts (``setup`` below); tests/test_docs.py
calls ``collect_entries`` and ``run_example`` to check that nothing is undocumented and
every example runs.
"""

import contextlib
import enum
import importlib
import inspect
import io
import os
import pathlib
import re
import tempfile
import textwrap
import types

# The namespaces of the reference, in its order.
NAMESPACES = (
    "ndd",
    "ndd.readers",
    "ndd.decoders",
    "ndd.random",
    "ndd.math",
    "ndd.transforms",
    "ndd.reductions",
    "ndd.noise",
    "ndd.segmentation",
    "ndd.experimental",
    "ndd.io",
    "ndd.checkpoint",
    "ndd.capture",
    "ndd.pytorch",
)
# Namespaces reached through the ones above (public names of theirs), and ndd.display (pictures
# of images in notebooks), which ndd adds.
SUB_NAMESPACES = (
    "ndd.experimental.decoders",
    "ndd.experimental.readers",
    "ndd.io.file",
    "ndd.pytorch.nodes",
    "ndd.tfrecord",
    "ndd.types",
    "ndd.display",
)

# Page titles of the operator families (keys: the modules of ndd._ops.registry.FAMILIES).
FAMILY_TITLES = {
    "tensor_ops": "Type and shape manipulation",
    "slicing": "Slicing",
    "padding": "Padding",
    "joining": "Joining",
    "creation": "Tensor creation",
    "lookup": "Label and table lookups",
    "sequence": "Sequences",
    "properties": "Metadata as data",
    "batch_ops": "Batch permutation",
    "reductions": "Reductions",
    "random_ops": "Random numbers",
    "decoders": "Decoding and reading files",
    "resize": "Resizing",
    "crop": "Cropping and normalisation",
    "compose": "Composition of images and sequences",
    "filters": "Filters and morphology",
    "boxes": "Bounding boxes and coordinates",
    "segmentation": "Segmentation",
    "random_crops": "Random crop windows",
    "color": "Colour",
    "normalize": "Normalisation",
    "noise": "Noise",
    "transforms": "Affine transforms",
    "warp": "Geometric warps",
    "debug": "Debugging",
    "debayer": "Demosaicing",
    "spectral": "Signal processing and spectra",
    "audio": "Audio decoding and resampling",
    "video": "Video decoding",
    "optical_flow": "Optical flow",
}

_DTYPE_NOTE = "The element type ``{name}`` (a :py:class:`ndd.DType`)."


class Entry:
    """One documented public name: where it lives, what it is and its documentation text."""

    def __init__(self, qualname, kind, obj, doc, page):
        self.qualname = qualname
        self.kind = kind  # operator, class, function, data, module
        self.obj = obj
        self.doc = doc
        self.page = page

    def __repr__(self):
        return f"<Entry {self.qualname} ({self.kind}) on {self.page}>"


def import_namespaces():
    """(importable namespaces by name, names of the reference's namespaces ndd lacks)."""
    found, missing = {}, []
    for name in NAMESPACES + SUB_NAMESPACES:
        try:
            found[name] = importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return found, missing


def public_names(module):
    """The public names of a namespace: its ``__all__``, else what ``dir`` shows without a leading _."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            n
            for n in dir(module)
            if not n.startswith("_") and not isinstance(getattr(module, n), types.ModuleType)
        ]
    return list(names)


def operator_of(obj):
    return getattr(obj, "__ndd_operator__", None)


def family_of(op):
    """The family (module of ndd._ops) that defines an operator."""
    from ndd._ops.registry import FAMILIES

    for family in FAMILIES:
        if op in importlib.import_module(f"ndd._ops.{family}").OPERATORS:
            return family
    raise LookupError(f"{op.qualname} is in no family of ndd._ops.registry.FAMILIES")


def _kind(obj):
    if operator_of(obj) is not None:
        return "operator"
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if inspect.isfunction(obj) or inspect.isbuiltin(obj) or inspect.ismethod(obj):
        return "function"
    return "data"


def _data_doc(namespace, name, obj):
    """Documentation of a constant: what it is, since a value has no docstring of its own."""
    import ndd

    if isinstance(obj, ndd.DType):
        return _DTYPE_NOTE.format(name=name)
    if isinstance(obj, enum.Enum):
        return f"``{type(obj).__name__}.{obj.name}`` (value {obj.value}). {inspect.getdoc(type(obj)) or ''}".strip()
    if namespace == "ndd.tfrecord":
        return f"Feature value type ``{name}`` of :py:func:`ndd.tfrecord.FixedLenFeature` and :py:func:`ndd.tfrecord.VarLenFeature`."
    if name == "DeviceLike":
        return 'What ``device=`` arguments accept: a :py:class:`ndd.Device` or a string such as ``"cpu"`` or ``"gpu:0"``.'
    return ""


def _doc_of(namespace, name, obj, kind):
    if kind == "operator":
        return operator_of(obj).doc.strip()
    if kind == "data":
        return _data_doc(namespace, name, obj)
    if kind == "class" and isinstance(obj, enum.EnumMeta) and not obj.__doc__:
        return ""
    if kind == "function" and name in ("DataType", "ImageType", "InterpType"):
        return (obj.__doc__ or "").strip()
    return (inspect.getdoc(obj) or "").strip()


def collect_entries():
    """Every public name of every namespace, as ``{qualified name: Entry}``."""
    found, _missing = import_namespaces()
    entries = {}
    for namespace, module in found.items():
        for name in public_names(module):
            obj = getattr(module, name)
            kind = _kind(obj)
            if (
                kind == "class"
                and isinstance(obj, type)
                and obj.__module__ == "ndd._types"
                and name
                in (
                    "DataType",
                    "ImageType",
                    "InterpType",
                )
            ):
                kind = "data"
            page = (
                f"api/operators/{family_of(operator_of(obj))}" if kind == "operator" else f"api/{namespace}"
            )
            qualname = f"{namespace}.{name}"
            entries[qualname] = Entry(qualname, kind, obj, _doc_of(namespace, name, obj, kind), page)
    return entries


# --- operator pages ---------------------------------------------------------------------------


def _format_default(value):
    import ndd

    if isinstance(value, ndd.DType):
        return next(
            f"ndd.{n}"
            for n in ndd.__all__
            if isinstance(getattr(ndd, n), ndd.DType) and getattr(ndd, n) == value
        )
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    return repr(value)


class _Shown:
    """A default value as the signature shows it."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def operator_signature(fn):
    """``name(input, /, *, arg=default, ...)`` without annotations, enums shown by name."""
    signature = inspect.signature(fn)
    params = [
        p.replace(
            annotation=p.empty,
            default=p.empty if p.default is p.empty else _Shown(_format_default(p.default)),
        )
        for p in signature.parameters.values()
    ]
    return fn.__name__ + str(signature.replace(parameters=params, return_annotation=signature.empty))


def _cell(text):
    """Text for one cell of a list-table (one line, no stray markup)."""
    return " ".join(str(text).split()) or "\\-"


def _arg_type(arg):
    text = arg.type_doc or arg.kind
    if arg.choices:
        text += " (" + ", ".join(f"``{c!r}``" for c in arg.choices) + ")"
    return text


def operator_devices(op):
    devices = ["CPU"]
    if op.gpu_kernel is not None:
        devices.append("GPU")
    return devices


def render_operator(op, example_output, picture=None):
    """The reStructuredText of one operator; ``picture``: (image path, expression) or None."""
    from ndd._prepare.args import REQUIRED

    fn = getattr(importlib.import_module(op.module), op.name)
    lines = [f".. py:currentmodule:: {op.module}", "", f".. py:function:: {operator_signature(fn)}", ""]
    body = [as_rest(op.doc), ""]
    body += [f"**Devices:** {', '.join(operator_devices(op))}"]
    if op.needs_batch:
        body[-1] += " (batch mode only)"
    body += [""]
    body += [".. list-table::", "   :header-rows: 1", "   :widths: 16 22 14 10 38", ""]
    body += ["   * - Name", "     - Type", "     - Default", "     - Per sample", "     - Description"]
    for inp in op.inputs:
        name = f"\\*{inp.name}" if inp.variadic else inp.name
        body += [
            f"   * - ``{name}``",
            "     - Tensor or Batch (input)",
            f"     - {'None' if inp.optional else 'required'}",
            "     - \\-",
            f"     - {_cell(inp.doc or 'Input to the operator.')}",
        ]
    for arg in op.arg_specs:
        default = "required" if arg.default is REQUIRED else f"``{_format_default(arg.default)}``"
        body += [
            f"   * - ``{arg.name}``",
            f"     - {_cell(_arg_type(arg))}",
            f"     - {default}",
            f"     - {'yes' if arg.per_sample else 'no'}",
            f"     - {_cell(arg.doc)}",
        ]
    code, output = example_output
    body += ["", "**Example**", "", ".. code-block:: python", ""]
    body += ["   " + line if line else "" for line in code.strip().splitlines()]
    if output.strip():
        body += ["", ".. code-block:: text", ""]
        body += ["   " + line if line else "" for line in output.rstrip().splitlines()]
    if picture is not None:
        image, expression = picture
        body += ["", f".. figure:: {image}", f"   :alt: {expression}", "", f"   ``{expression}``"]
    body += [""]
    lines += ["   " + line if line else "" for line in "\n".join(body).splitlines()]
    return "\n".join(lines) + "\n"


def run_example(code, setup_namespace, keep=None):
    """Run an example in a fresh copy of the setup namespace and a scratch directory; its stdout.
    ``keep``, a dict, receives the names the example ends with."""
    namespace = dict(setup_namespace)
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as scratch, contextlib.redirect_stdout(out):
        here = os.getcwd()
        os.chdir(scratch)
        try:
            exec(compile(code, "<example>", "exec"), namespace)  # noqa: S102 - our own examples
        finally:
            os.chdir(here)
    if keep is not None:
        keep.update(namespace)
    return out.getvalue()


def save_picture(expression, namespace, path):
    """Draw the images that ``expression`` gives (in the namespace of an example) as a grid, at
    twice their size so that the small sample images are easy to see."""
    from ndd.display import image_grid

    grid = image_grid(eval(expression, namespace))  # noqa: S307 - our own examples
    grid = grid.resize((grid.width * 2, grid.height * 2), resample=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    grid.save(buffer, format="PNG")
    if not path.exists() or path.read_bytes() != buffer.getvalue():
        path.write_bytes(buffer.getvalue())


def example_setup():
    """The namespace the operator examples start from (``operator_examples.SETUP`` run once)."""
    import operator_examples

    namespace = {}
    exec(compile(operator_examples.SETUP, "<example setup>", "exec"), namespace)  # noqa: S102
    return namespace


def _title(text, underline):
    return [text, underline * len(text), ""]


def write_pages(outdir, warn=print):
    """Write the API pages under ``outdir`` (docs/api); ``warn`` reports undocumented names."""
    import operator_examples

    from ndd._ops.registry import FAMILIES

    outdir = pathlib.Path(outdir)
    (outdir / "operators").mkdir(parents=True, exist_ok=True)
    entries = collect_entries()
    found, missing = import_namespaces()
    for entry in entries.values():
        if not entry.doc and entry.kind != "module":
            warn(f"ndd API reference: {entry.qualname} has no documentation")

    setup = example_setup()
    families = {}
    for entry in entries.values():
        if entry.kind == "operator":
            families.setdefault(entry.page.rsplit("/", 1)[1], {})[entry.qualname] = operator_of(entry.obj)
    written = set()
    for family in FAMILIES:
        ops = families.get(family, {})
        family_module = importlib.import_module(f"ndd._ops.{family}")
        text = [f".. _family-{family}:", ""] + _title(FAMILY_TITLES[family], "=")
        text += [as_rest(inspect.getdoc(family_module) or ""), ""]
        text += [
            "Every operator also takes ``batch_size`` (run in batch mode with that many samples; "
            'inferred from Batch inputs) and ``device`` (``"cpu"`` or ``"gpu"``; inferred from '
            "the inputs when omitted). The examples start from :ref:`the example setup <example-setup>`.",
            "",
        ]
        for qualname, op in sorted(ops.items()):
            code = operator_examples.EXAMPLES.get(qualname)
            namespace = dict(setup)
            if code is None:
                warn(
                    f"ndd API reference: operator {qualname} has no example in docs/_ext/operator_examples.py"
                )
                code, output = "", ""
            else:
                try:
                    output = run_example(code, setup, keep=namespace)
                except Exception as error:  # noqa: BLE001 - reported as a build warning
                    warn(
                        f"ndd API reference: the example of {qualname} fails: {type(error).__name__}: {error}"
                    )
                    output = ""
            picture = None
            expression = operator_examples.PICTURES.get(qualname)
            if expression is not None:
                try:
                    save_picture(expression, namespace, outdir / "operators" / "pictures" / f"{qualname}.png")
                    picture = (f"pictures/{qualname}.png", expression)
                except Exception as error:  # noqa: BLE001 - reported as a build warning
                    warn(
                        f"ndd API reference: the picture of {qualname} fails: {type(error).__name__}: {error}"
                    )
            text += [render_operator(op, (code, output), picture)]
        path = outdir / "operators" / f"{family}.rst"
        _write_if_changed(path, "\n".join(text))
        written.add(path)

    for namespace, module in found.items():
        text = [f".. _namespace-{namespace}:", ""] + _title(f"``{namespace}``", "=")
        text += [f".. py:module:: {namespace}", "", (inspect.getdoc(module) or "").strip(), ""]
        mine = [e for q, e in entries.items() if q.rsplit(".", 1)[0] == namespace]
        ops = [e for e in mine if e.kind == "operator"]
        modules = [e for e in mine if e.kind == "module"]
        others = [e for e in mine if e.kind not in ("operator", "module")]
        if modules:
            text += _title("Namespaces", "-")
            for e in sorted(modules, key=lambda e: e.qualname):
                text += [f"- :doc:`{e.qualname}` - {_first_sentence(e.doc)}"]
            text += [""]
        if ops:
            text += _title("Operators", "-")
            text += [".. list-table::", "   :widths: 30 70", ""]
            for e in sorted(ops, key=lambda e: e.qualname):
                text += [f"   * - :py:func:`{e.qualname}`", f"     - {_cell(_first_sentence(e.doc))}"]
            text += [""]
        if others:
            text += _title("Classes, functions and constants", "-")
            for e in sorted(others, key=lambda e: (e.kind != "class", e.kind != "function", e.qualname)):
                text += _autodoc(e) + [""]
        path = outdir / f"{namespace}.rst"
        _write_if_changed(path, "\n".join(text))
        written.add(path)

    index = _title("API reference", "=") + [
        "Generated from the package: every public name of the reference's namespaces, and one page per "
        "operator family with each operator's signature, arguments and an executed example.",
        "",
    ]
    if missing:
        index += ["Not provided yet: " + ", ".join(f"``{m}``" for m in missing) + ".", ""]
    index += [".. toctree::", "   :caption: Namespaces", "   :maxdepth: 1", ""]
    index += [f"   {n}" for n in found]
    index += ["", ".. toctree::", "   :caption: Operator families", "   :maxdepth: 1", ""]
    index += [f"   operators/{f}" for f in FAMILIES if f in families]
    index += ["", ".. _example-setup:", ""] + _title("Example setup", "-")
    index += ["The operator examples start from these definitions:", "", ".. code-block:: python", ""]
    index += ["   " + line if line else "" for line in operator_examples.SETUP.strip().splitlines()]
    path = outdir / "index.rst"
    _write_if_changed(path, "\n".join(index) + "\n")
    written.add(path)
    for stale in set(outdir.rglob("*.rst")) - written:
        stale.unlink()
    return entries


def as_rest(doc):
    """A docstring written as plain text, made valid reStructuredText: a list that follows its
    introducing line directly gets the blank line reStructuredText needs before it."""
    lines = []
    for line in doc.strip().splitlines():
        previous = lines[-1] if lines else ""
        if line.startswith("- ") and previous.strip() and not previous.startswith(("- ", "  ")):
            lines.append("")
        lines.append(line)
    return "\n".join(lines)


def _first_sentence(doc):
    """The first sentence of a docstring, without a leading ``name``: label."""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    paragraph = re.sub(r"^``[\w.]+``:\s*", "", paragraph)
    sentence = re.split(r"(?<=[\w)\]`])\.\s+(?=[A-Z])", paragraph)[0]
    return sentence.rstrip(".") + "." if sentence else ""


def _documents_its_constructor(cls):
    """Readers: their constructor's docstring lists their arguments (made from their
    specs by ndd.readers), which the class docstring does not repeat."""
    from ndd.readers._base import Reader

    return issubclass(cls, Reader) and cls is not Reader


def _autodoc(entry):
    namespace, name = entry.qualname.rsplit(".", 1)
    if entry.kind == "class":
        lines = [f".. autoclass:: {entry.qualname}", "   :members:"]
        if not issubclass(entry.obj, enum.Enum):  # not the methods of int
            lines += ["   :inherited-members:"]
        if _documents_its_constructor(entry.obj):
            lines += ["   :special-members: __init__"]
        return lines
    if entry.kind == "function":
        return [f".. autofunction:: {entry.qualname}"]
    return [f".. py:data:: {name}", f"   :module: {namespace}", "", textwrap.indent(entry.doc, "   ")]


def _write_if_changed(path, text):
    """Rewrite a page only when it changed, so that Sphinx rebuilds only what did."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text)


def _builder_inited(app):
    from sphinx.util import logging

    logger = logging.getLogger("ndd_api")
    write_pages(pathlib.Path(app.srcdir) / "api", warn=logger.warning)


def setup(app):
    app.connect("builder-inited", _builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
