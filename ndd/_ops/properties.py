"""Metadata as data: get_property."""

import numpy as np

from .._types import uint8
from .schema import Arg, Input, Operator


def _get_property_types(ins, args):
    return [(uint8, "")]


def _text_bytes(text):
    return np.frombuffer((text or "").encode(), np.uint8).copy()


def _property_values(x, key, batch_size):
    """The property of ``x`` as uint8 bytes: one array, or one per sample when
    ``batch_size`` >= 0. Source information is the path a reader attached to the
    sample; data that does not come from a reader has none (empty bytes)."""
    if key == "layout":
        texts = x._layout
    else:
        texts = x._source_info
    if batch_size < 0:
        return _text_bytes(texts)
    if not isinstance(texts, list):
        texts = [texts] * batch_size
    return [_text_bytes(t) for t in texts]


def _on_gpu(values, device_id, batch_size):
    """The property's bytes copied to GPU ``device_id`` (a DeviceArray, or a DeviceBatch
    in batch mode), as the reference's GPU operator gives them."""
    from .._cuda.context import make_current
    from .._cuda.device_array import DeviceArray, DeviceBatch

    make_current(device_id)
    if batch_size < 0:
        return DeviceArray.from_host(values, device_id)
    return DeviceBatch.from_host(values, np.uint8, device_id)


class _GetProperty(Operator):
    """get_property reads metadata (the input layout), which per-sample kernels
    never see, so the operator runs the invocation itself, on either device. The
    input data is not needed and not waited for."""

    def execute(self, inv):
        values = _property_values(inv.inputs[0], inv.args["key"], inv.batch_size)
        device = inv.device
        if device is not None and device.device_type == "gpu":
            return [_on_gpu(values, device.device_id, inv.batch_size)]
        return [values]


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
