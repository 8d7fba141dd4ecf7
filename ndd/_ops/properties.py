"""Metadata as data: get_property."""

import numpy as np

from .._types import uint8
from .schema import Arg, Input, Operator


def _get_property_types(ins, args):
    return [(uint8, "")]


def _property_bytes(x, key):
    """The property of ``x`` as uint8 bytes. Tensors and Batches carry no source
    information yet (readers will attach it), so ``source_info`` is empty."""
    if key == "layout":
        return np.frombuffer(x._layout.encode(), np.uint8)
    return np.zeros(0, np.uint8)


class _GetProperty(Operator):
    """get_property reads metadata (the input layout), which per-sample kernels
    never see, so the operator runs the invocation itself. The input data is not
    needed and not waited for."""

    def execute(self, inv):
        x = inv.inputs[0]
        value = _property_bytes(x, inv.args["key"])
        if inv.batch_size < 0:
            return [value.copy()]
        return [[value.copy() for _ in range(inv.batch_size)]]


GET_PROPERTY = _GetProperty(
    "get_property",
    inputs=[Input("input", doc="Data whose property is read.")],
    args=[
        Arg(
            "key",
            "str",
            choices=("layout", "source_info"),
            doc='``"layout"``: the layout string; ``"source_info"``: the path of the file the '
            "sample was read from (empty for data that does not come from a reader).",
            type_doc="str",
        )
    ],
    infer_types=_get_property_types,
    doc="Return a property of the input as a uint8 tensor of bytes.\n\n"
    "The result is a 1-D uint8 tensor holding the encoded string, one per sample in batch mode.",
)

OPERATORS = [GET_PROPERTY]
