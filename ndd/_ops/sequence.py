"""Sequence operators: element_extract."""

from .._prepare.invocation import PendingArg
from .._prepare.storage import tensor_data
from .gpu_indexing import GpuElementExtract
from .schema import Arg, Input, Operator


def _element_map(value):
    """The converted ``element_map``; one given as a Tensor still being computed is
    read now, since the number of outputs depends on it."""
    if type(value) is PendingArg:
        return value.spec.convert(ELEMENT_EXTRACT, tensor_data(value.source))
    return value


def _check_sequence(shape, element_map):
    if len(shape) < 2:
        raise ValueError(
            "ndd.element_extract: the input must have at least 2 dimensions (the frames and the "
            f"frame data), got shape {tuple(shape)}"
        )
    for index in element_map:
        if index >= shape[0]:
            raise IndexError(
                f"ndd.element_extract: 'element_map' index {index} is out of range for a sequence "
                f"of {shape[0]} frames"
            )


def _element_extract_types(ins, args):
    x = ins[0]
    element_map = _element_map(args["element_map"])
    if not element_map:
        raise ValueError("ndd.element_extract: 'element_map' must contain at least one frame index")
    negative = [i for i in element_map if i < 0]
    if negative:
        raise ValueError(
            f"ndd.element_extract: 'element_map' indices must not be negative, got {negative[0]}"
        )
    if x._layout and x._layout[0] != "F":
        raise ValueError(
            f"ndd.element_extract: the input layout must start with 'F' (frames), got {x._layout!r}"
        )
    return [(x._dtype, x._layout[1:])] * len(element_map)


def _element_extract_shape(shapes, args):
    shape, element_map = shapes[0], args["element_map"]
    _check_sequence(shape, element_map)
    return [shape[1:]] * len(element_map)


def _element_extract_kernel(arrays, args):
    sequence, element_map = arrays[0], args["element_map"]
    _check_sequence(sequence.shape, element_map)
    frames = tuple(sequence[i] for i in element_map)
    return frames[0] if len(frames) == 1 else frames


ELEMENT_EXTRACT = Operator(
    "element_extract",
    inputs=[Input("input", doc="Sequences whose outermost dimension indexes the frames.")],
    args=[
        Arg(
            "element_map",
            "int_list",
            doc="Indices of the frames to extract; one output per index.",
            type_doc="list of int",
        )
    ],
    infer_types=_element_extract_types,
    infer_shape=_element_extract_shape,
    kernel=_element_extract_kernel,
    doc="Extract frames of a sequence as separate outputs.\n\n"
    "Output ``k`` holds frame ``element_map[k]`` of each sample, with the frame dimension "
    "removed; its layout is the input layout without the leading ``F``. Several outputs are "
    "returned as a tuple.",
)

ELEMENT_EXTRACT.gpu_kernel = GpuElementExtract(ELEMENT_EXTRACT, _check_sequence)

OPERATORS = [ELEMENT_EXTRACT]
