"""Collects the operators of every family module and installs their public
functions into ``ndd`` and its sub-namespaces."""

import importlib
import sys

__all__ = ["FAMILIES", "all_operators", "install_public_operators"]

# Family modules under ndd._ops; each defines OPERATORS, a list of Operator.
FAMILIES = [
    "tensor_ops",
    "slicing",
    "padding",
    "joining",
    "creation",
    "lookup",
    "sequence",
    "properties",
    "batch_ops",
    "reductions",
    "random_ops",
    "decoders",
    "resize",
    "crop",
    "compose",
    "filters",
    "boxes",
    "segmentation",
    "random_crops",
    "color",
    "normalize",
    "noise",
    "transforms",
    "warp",
    "debug",
    "debayer",
    "spectral",
    "audio",
    "video",
    "optical_flow",
]


def all_operators():
    """Every public Operator, in family order."""
    ops = []
    for family in FAMILIES:
        module = importlib.import_module(f"ndd._ops.{family}")
        ops.extend(module.OPERATORS)
    return ops


def install_public_operators(ndd_namespace):
    """Put each operator's generated function into its namespace module."""
    for op in all_operators():
        fn = op.make_function()
        if op.module == "ndd":
            ndd_namespace[op.name] = fn
        else:
            target = sys.modules[op.module]
            setattr(target, op.name, fn)
            target.__all__.append(op.name)
