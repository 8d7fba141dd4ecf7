"""Record the parameters of every public function and class of the reference's
dynamic mode (``surface.json``), for ``tests/test_surface.py``.

Run with the reference interpreter:

    $HOME/dali-ref/bin/python tests/golden/make_surface_goldens.py

For each public name (dotted, relative to the module): its kind ("function",
"class" or "value") and, where ``inspect.signature`` can read it, the parameters of the
function or of the class constructor as [name, kind, required]; arguments the
reference's schema marks as deprecated are listed separately.
"""

import inspect
import json
import os
import types

import nvidia.dali.experimental.dynamic as ndd

HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = "nvidia.dali.experimental.dynamic"


def deprecated_arguments(obj):
    schema = getattr(obj, "_schema", None)
    if schema is None:
        return []
    return sorted(a for a in schema.GetArgumentNames() if schema.IsDeprecatedArg(a))


def parameters(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [
        [p.name, p.kind.name, p.default is inspect.Parameter.empty]
        for p in sig.parameters.values()
        if p.name != "self" and p.kind is not inspect.Parameter.VAR_KEYWORD
    ]


def walk(module, prefix, out):
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            if value.__name__.startswith(PREFIX) and prefix.count(".") < 3:
                walk(value, f"{prefix}{name}.", out)
            continue
        if not str(getattr(value, "__module__", "")).startswith("nvidia"):
            continue
        if isinstance(value, type):
            entry = {"kind": "class", "parameters": parameters(value)}
        elif inspect.isfunction(value) or inspect.isbuiltin(value):
            entry = {"kind": "function", "parameters": parameters(value)}
        else:  # a constant (a DType, an enum member)
            out[f"{prefix}{name}"] = {"kind": "value", "parameters": None}
            continue
        deprecated = deprecated_arguments(value)
        if deprecated:
            entry["deprecated"] = deprecated
        out[f"{prefix}{name}"] = entry


def main():
    out = {}
    walk(ndd, "", out)
    result = {"reference_version": __import__("nvidia.dali").dali.__version__, "names": out}
    # One line per name keeps the file small and its diffs readable.
    lines = [f"  {json.dumps(name)}: {json.dumps(out[name])}" for name in sorted(out)]
    with open(os.path.join(HERE, "surface.json"), "w") as fh:
        fh.write('{"reference_version": %s, "names": {\n' % json.dumps(result["reference_version"]))
        fh.write(",\n".join(lines) + "\n}}\n")


if __name__ == "__main__":
    main()
