"""ndd: DALI's dynamic mode, light to install and fast.

Operators are plain Python functions on Tensors and Batches, evaluated
asynchronously; every public name follows ``nvidia.dali.experimental.dynamic``.
"""

from . import tfrecord, types  # tfrecord: feature specs of readers.TFRecord
from ._batch import Batch, as_batch, batch
from ._cuda.memory import gpu_memory_stats, release_gpu_memory
from ._eval.context import EvalContext
from ._eval.device import Device, device
from ._eval.mode import EvalMode
from ._eval.stream import (
    Stream,
    get_current_stream,
    get_default_stream,
    set_current_stream,
    set_default_stream,
    stream,
)
from ._eval.thread_pool import ThreadPool, get_num_threads, set_num_threads
from ._ops import operators as _operators
from ._prepare import call as _call
from ._prepare import elementwise as _elementwise
from ._tensor import Tensor, as_tensor, tensor
from ._types import (
    DataType,
    DType,
    ImageType,
    InterpType,
    bfloat16,
    bool,
    dtype,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    type_id,
    uint8,
    uint16,
    uint32,
    uint64,
)

_call.bind(Tensor, Batch, as_tensor)
_elementwise.bind(tensor, as_tensor)
_operators.install(Tensor)
_operators.install(Batch)

from . import (  # noqa: E402 - the operator modules need the bindings above
    capture,
    checkpoint,
    decoders,
    experimental,
    io,
    math,
    noise,
    random,
    readers,
    reductions,
    segmentation,
    transforms,
)
from ._external_source import ExternalSource  # noqa: E402 - calls operators, needs the bindings above
from ._ops.registry import all_operators as all_public_operators  # noqa: E402
from ._ops.registry import install_public_operators  # noqa: E402

install_public_operators(globals())
from ._imread import imread  # noqa: E402 - reads and decodes through the installed operators

DeviceLike = Device | str
__version__ = "0.1.0"

__all__ = [
    "Batch",
    "DType",
    "DataType",
    "Device",
    "DeviceLike",
    "EvalContext",
    "EvalMode",
    "ExternalSource",
    "ImageType",
    "InterpType",
    "Stream",
    "Tensor",
    "ThreadPool",
    "as_batch",
    "as_tensor",
    "batch",
    "bfloat16",
    "bool",
    "capture",
    "checkpoint",
    "decoders",
    "device",
    "dtype",
    "experimental",
    "float16",
    "float32",
    "float64",
    "get_current_stream",
    "get_default_stream",
    "get_num_threads",
    "gpu_memory_stats",
    "imread",
    "int8",
    "int16",
    "int32",
    "int64",
    "io",
    "math",
    "noise",
    "random",
    "readers",
    "release_gpu_memory",
    "reductions",
    "segmentation",
    "set_current_stream",
    "set_default_stream",
    "set_num_threads",
    "stream",
    "tensor",
    "tfrecord",
    "transforms",
    "type_id",
    "types",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
] + [op.name for op in all_public_operators() if op.module == "ndd"]


def __getattr__(name):
    # ndd.pytorch imports torch and torchdata: load it on first use, not with ndd.
    if name == "pytorch":
        import importlib

        return importlib.import_module(".pytorch", __name__)
    raise AttributeError(f"module 'ndd' has no attribute {name!r}")


def __dir__():
    # The lazily loaded ndd.pytorch is listed as the reference lists it.
    return sorted({*globals(), "pytorch"})
