"""Segmentation helpers (``ndd.segmentation``): random_mask_pixel, random_object_bbox,
select_masks.

Objects are the connected blobs of equal labels, pixels being connected through
their faces (4-connectivity in 2-D, 6 in 3-D), as in the reference. The blobs
are found with a compiled union-find (``ndd/_cpu/blobs.pyx``); scipy is not needed.

Deliberate divergences from the reference:
- ``select_masks`` keeps every polygon of a selected mask (the reference keeps
  only the last polygon of each mask), in the order of ``mask_ids``.
- ``random_mask_pixel`` of an empty mask gives zeros (the reference returns
  undefined values, and crashes for a scalar).
- ``random_object_bbox`` accepts inputs of any integer type and bool (the
  reference takes uint8, int8, int16, uint16, int32, uint32 and bool) and rejects a
  ``foreground_prob`` outside [0, 1] (the reference accepts it).
"""

import collections
import hashlib
import itertools
import math
import threading

import numpy as np

from .._cpu import blobs as _cpu_blobs
from .._cpu.mask_polygons import SelectionError, select_polygons
from .._types import bool as bool_
from .._types import int32, int64
from .random_ops import RNG_ARG
from .schema import Arg, Input, Operator


def _sample_data(data, i):
    return data[i] if isinstance(data, list) else data


def _per_sample_batch(one_sample, output_count):
    """A batch kernel running ``one_sample(generator, arrays, args)`` for each sample,
    each drawing from its own generator so that samples are independent of the order."""

    def batch_kernel(inputs, sample_args, batch_size, ctx):
        outputs = [[] for _ in range(output_count)]
        for i in range(batch_size):
            args = sample_args[i]
            result = one_sample(args["rng"].sample_generator(i), [_sample_data(d, i) for d in inputs], args)
            for k, value in enumerate(result if isinstance(result, tuple) else (result,)):
                outputs[k].append(value)
        return outputs

    return batch_kernel


def _tensor_kernel(one_sample):
    def kernel(arrays, args):
        return one_sample(args["rng"].generator(), arrays, args)

    return kernel


# -- random_mask_pixel --------------------------------------------------------------


def _mask_pixel_prepare(ins, args):
    if args["value"] is not None and args["threshold"] is not None:
        raise ValueError("ndd.segmentation.random_mask_pixel: 'value' and 'threshold' cannot both be given")


def _mask_pixel_types(ins, args):
    return [(int64, "")]


def _mask_pixel_shape(shapes, args):
    return [(len(shapes[0]),)]


def _random_mask_pixel(generator, arrays, args):
    mask = np.asarray(arrays[0])
    if args["foreground"]:
        if args["value"] is not None:
            # (A bool mask compared as bytes: numpy refuses a bool == int beyond int64.)
            foreground = (mask.view(np.uint8) if mask.dtype == np.bool_ else mask) == args["value"]
        else:
            foreground = mask > (args["threshold"] or 0.0)
        flat = np.flatnonzero(foreground)
        if flat.size:
            index = flat[generator.integers(0, flat.size)]
            return np.array(np.unravel_index(index, mask.shape), np.int64)
    if mask.size == 0:
        return np.zeros(mask.ndim, np.int64)
    index = generator.integers(0, mask.size)
    return np.array(np.unravel_index(index, mask.shape), np.int64)


RANDOM_MASK_PIXEL = Operator(
    "random_mask_pixel",
    inputs=[Input("input", doc="The mask, of any shape.")],
    args=[
        Arg(
            "foreground",
            "int",
            None,
            per_sample=True,
            doc="Non-zero: draw from the foreground pixels; 0 (default): from all pixels.",
        ),
        Arg(
            "threshold",
            "float",
            None,
            per_sample=True,
            doc="Pixels above this value (0 by default) are foreground; excludes ``value``.",
        ),
        Arg(
            "value",
            "int",
            None,
            per_sample=True,
            doc="Pixels equal to this value are foreground (integer masks); excludes ``threshold``.",
        ),
        RNG_ARG,
    ],
    prepare_args=_mask_pixel_prepare,
    infer_types=_mask_pixel_types,
    infer_shape=_mask_pixel_shape,
    kernel=_tensor_kernel(_random_mask_pixel),
    batch_kernel=_per_sample_batch(_random_mask_pixel, 1),
    module="ndd.segmentation",
    doc="The coordinates (int64, one per dimension) of a pixel drawn uniformly from a mask.\n\n"
    "With ``foreground``, only foreground pixels are drawn, if the mask has any; otherwise any pixel.",
)


# -- connected blobs ----------------------------------------------------------------


def connected_blobs(labels, foreground):
    """The face-connected blobs of equal values among the ``foreground`` pixels of
    ``labels`` (an N-D integer array).

    Returns ``(classes, starts, ends)``: the label of each blob and the start and
    one-past-end coordinates of its bounding box (int64 rows), blobs ordered by
    their first pixel in C order.
    """
    first, starts, ends = _cpu_blobs.connected_blobs(labels, foreground)
    return labels.reshape(-1)[first], starts, ends


_CACHE_LIMIT = 256
_blob_cache = collections.OrderedDict()
_blob_cache_lock = threading.Lock()


def _blobs(mask, foreground, cache):
    """``connected_blobs`` of a mask, remembered by a hash of its data when ``cache``."""
    if not cache:
        return connected_blobs(mask, foreground)
    digest = hashlib.blake2b(np.ascontiguousarray(mask).data, digest_size=32)
    digest.update(np.packbits(foreground).tobytes())
    key = (digest.digest(), mask.shape, mask.dtype.str)
    with _blob_cache_lock:
        hit = _blob_cache.get(key)
        if hit is not None:
            _blob_cache.move_to_end(key)
            return hit
    blobs = connected_blobs(mask, foreground)
    with _blob_cache_lock:
        _blob_cache[key] = blobs
        while len(_blob_cache) > _CACHE_LIMIT:
            _blob_cache.popitem(last=False)
    return blobs


# -- random_object_bbox -------------------------------------------------------------

_FORMATS = ("anchor_shape", "start_end", "box")
_QUALNAME = "ndd.segmentation.random_object_bbox"


def _object_prepare(ins, args):
    x = ins[0]
    if not (x._dtype.is_integer or x._dtype is bool_):
        raise TypeError(f"{_QUALNAME}: the input must be a mask of integer labels, got {x._dtype}")
    if args["ignore_class"] and (
        args["classes"] is not None or args["class_weights"] is not None or args["output_class"]
    ):
        raise ValueError(
            f"{_QUALNAME}: 'classes', 'class_weights' and 'output_class' cannot be used with 'ignore_class'"
        )
    if args["k_largest"] is not None and args["k_largest"] < 1:
        raise ValueError(f"{_QUALNAME}: 'k_largest' must be at least 1, got {args['k_largest']}")


def _object_types(ins, args):
    count = 1 if args["format"] == "box" else 2
    return [(int32, "")] * count + ([(int32, "")] if args["output_class"] else [])


def _object_shape(shapes, args):
    ndim = len(shapes[0])
    boxes = [(2 * ndim,)] if args["format"] == "box" else [(ndim,), (ndim,)]
    threshold = args["threshold"]
    if isinstance(threshold, tuple) and len(threshold) not in (1, ndim):
        raise ValueError(
            f"{_QUALNAME}: 'threshold' must have 1 or {ndim} values (one per dimension), got {list(threshold)}"
        )
    return boxes + ([()] if args["output_class"] else [])


def _class_setup(args):
    """The foreground classes (None: all labels but the background), their weights
    (None: equal) and the background label of a sample."""
    classes = args["classes"]
    weights = args["class_weights"]
    if weights is not None:
        if classes is not None and len(classes) != len(weights):
            raise ValueError(
                f"{_QUALNAME}: 'classes' and 'class_weights' must have the same length, "
                f"got {len(classes)} and {len(weights)}"
            )
        if any(w < 0 or not math.isfinite(w) for w in weights):
            raise ValueError(
                f"{_QUALNAME}: 'class_weights' must be finite and non-negative, got {list(weights)}"
            )
    background = args["background"]
    if background is None:
        background = 0 if classes is None or 0 not in classes else min(classes) - 1
    if classes is not None and background in classes:
        raise ValueError(
            f"{_QUALNAME}: 'classes' must not hold the background label {background} "
            f"(see 'background'), got {list(classes)}"
        )
    if classes is None and weights is not None:
        # Weights without classes are those of the labels 0, 1, 2, ... less the
        # background, as in the reference (1, 2, ... for the default background).
        labels = (label for label in itertools.count() if label != background)
        classes = tuple(itertools.islice(labels, len(weights)))
    return classes, weights, background


def _whole(mask):
    return np.zeros(mask.ndim, np.int64), np.array(mask.shape, np.int64)


def _pick_object(generator, mask, args):
    """The start and end of the chosen box and its class (the background when the
    box is the whole input)."""
    classes, weights, background = _class_setup(args)
    probability = args["foreground_prob"]
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"{_QUALNAME}: 'foreground_prob' must be in [0, 1], got {probability}")
    if mask.dtype == np.bool_:
        mask = mask.view(np.uint8)
    if generator.random() >= probability or mask.size == 0:
        return (*_whole(mask), background)
    if classes is None:
        foreground = mask != background
    else:
        foreground = np.isin(mask, np.asarray(classes))
    blob_classes, starts, ends = _blobs(mask, foreground, args["cache_objects"])
    threshold = args["threshold"]
    if threshold is not None and len(blob_classes):
        big = np.all(ends - starts >= np.asarray(threshold, np.int64), axis=1)
        blob_classes, starts, ends = blob_classes[big], starts[big], ends[big]
    if len(blob_classes) == 0:
        return (*_whole(mask), background)
    volumes = np.prod(ends - starts, axis=1)

    def choose(candidates):
        if args["k_largest"] is not None:
            order = np.argsort(-volumes[candidates], kind="stable")
            candidates = candidates[order[: args["k_largest"]]]
        pick = candidates[generator.integers(0, candidates.size)]
        return starts[pick], ends[pick], int(blob_classes[pick])

    if args["ignore_class"]:
        return choose(np.arange(len(blob_classes)))
    present = np.unique(blob_classes)
    if classes is None:
        candidates, probabilities = present, None
    else:
        keep = [k for k, c in enumerate(classes) if c in present and (weights is None or weights[k] > 0)]
        if not keep:
            return (*_whole(mask), background)
        candidates = np.asarray([classes[k] for k in keep])
        if weights is not None:
            w = np.asarray([weights[k] for k in keep], np.float64)
            probabilities = w / w.sum()
        else:
            probabilities = None
    chosen = candidates[generator.choice(candidates.size, p=probabilities)]
    return choose(np.flatnonzero(blob_classes == chosen))


def _random_object_bbox(generator, arrays, args):
    start, end, label = _pick_object(generator, np.asarray(arrays[0]), args)
    start = start.astype(np.int32)
    end = end.astype(np.int32)
    fmt = args["format"]
    if fmt == "box":
        outputs = (np.concatenate([start, end]),)
    elif fmt == "start_end":
        outputs = (start, end)
    else:
        outputs = (start, end - start)
    if args["output_class"]:
        outputs += (np.array(label, np.int32),)
    return outputs if len(outputs) > 1 else outputs[0]


def _object_batch_kernel(inputs, sample_args, batch_size, ctx):
    # An empty batch has no arguments to tell the output count; extra empty outputs are harmless.
    count = len(_object_types(None, sample_args[0])) if batch_size else 3
    return _per_sample_batch(_random_object_bbox, count)(inputs, sample_args, batch_size, ctx)


RANDOM_OBJECT_BBOX = Operator(
    "random_object_bbox",
    inputs=[Input("input", doc="A mask of integer labels (any number of dimensions).")],
    args=[
        Arg(
            "background",
            "int",
            None,
            per_sample=True,
            doc="The background label: 0, or when ``classes`` holds 0, one less than its smallest class. "
            "It must not be one of ``classes``.",
        ),
        Arg(
            "cache_objects",
            "bool",
            False,
            doc="Remember the objects found in a mask (by a hash of its data) for masks seen again.",
        ),
        Arg(
            "class_weights",
            "float_list",
            None,
            per_sample=True,
            doc="Relative probabilities of the classes in ``classes``; without ``classes``, of the "
            "labels 0, 1, 2, ... other than the background (1, 2, ... by default).",
            type_doc="list of float",
        ),
        Arg(
            "classes",
            "int_list",
            None,
            per_sample=True,
            doc="The foreground labels; every label but the background by default.",
            type_doc="list of int",
        ),
        Arg(
            "foreground_prob",
            "float",
            1.0,
            per_sample=True,
            doc="Probability of choosing an object; otherwise the box is the whole input.",
        ),
        Arg(
            "format",
            "str",
            "anchor_shape",
            choices=_FORMATS,
            doc="'anchor_shape': outputs (anchor, shape); 'start_end': (start, one-past-end); "
            "'box': one output, start and end concatenated.",
        ),
        Arg(
            "ignore_class",
            "bool",
            False,
            doc="Choose among all objects equally instead of choosing a class first "
            "(excludes ``classes``, ``class_weights`` and ``output_class``).",
        ),
        Arg(
            "k_largest",
            "int",
            None,
            doc="Choose only among this many objects with the largest boxes (of the chosen class, "
            "or of all with ``ignore_class``).",
        ),
        Arg("output_class", "bool", False, doc="Add an output: the class of the chosen object (int32)."),
        Arg(
            "threshold",
            "int_list",
            None,
            per_sample=True,
            doc="Minimum box extent per dimension (one value: every dimension); smaller objects are ignored.",
            type_doc="list of int",
        ),
        RNG_ARG,
    ],
    prepare_args=_object_prepare,
    infer_types=_object_types,
    infer_shape=_object_shape,
    kernel=_tensor_kernel(_random_object_bbox),
    batch_kernel=_object_batch_kernel,
    module="ndd.segmentation",
    doc="The bounding box of a randomly chosen object of a label mask.\n\n"
    "With probability ``foreground_prob`` a class is drawn (by ``class_weights``, else uniformly, "
    "among the classes with objects) and then one of its objects, a blob of face-connected "
    "pixels of that label; otherwise, or when no object qualifies, the box is the whole input "
    "and its class the background. Outputs are int32; see ``format`` and ``output_class``.",
)


# -- select_masks -------------------------------------------------------------------

_SELECT = "ndd.segmentation.select_masks"


def _select_prepare(ins, args):
    ids, polygons, vertices = ins
    if ids._dtype is not int32:
        raise TypeError(f"{_SELECT}: 'mask_ids' must be int32, got {ids._dtype}")
    if polygons._dtype is not int32:
        raise TypeError(f"{_SELECT}: 'polygons' must be int32, got {polygons._dtype}")


def _select_types(ins, args):
    # The selected polygons and vertices are new data: no layout, as in the reference.
    return [(int32, ""), (ins[2]._dtype, "")]


def _select_shape(shapes, args):
    ids, polygons, vertices = shapes
    if len(ids) != 1:
        raise ValueError(f"{_SELECT}: 'mask_ids' must be 1-D, got shape {tuple(ids)}")
    if len(polygons) != 2 or polygons[1] != 3:
        raise ValueError(f"{_SELECT}: 'polygons' must have shape (N, 3), got {tuple(polygons)}")
    if len(vertices) != 2:
        raise ValueError(f"{_SELECT}: 'vertices' must be 2-D (vertices, coordinates), got {tuple(vertices)}")
    return None


def _select_kernel(arrays, args):
    ids, polygons, vertices = arrays
    try:
        new_polygons, rows = select_polygons(
            np.ascontiguousarray(ids), np.ascontiguousarray(polygons), len(vertices), args["reindex_masks"]
        )
    except SelectionError as error:
        if error.kind == "repeat":
            raise ValueError(
                f"{_SELECT}: 'mask_ids' must not repeat a mask, got {error.value} twice"
            ) from None
        if error.kind == "missing":
            raise ValueError(f"{_SELECT}: mask {error.value} of 'mask_ids' is not in 'polygons'") from None
        # Only the polygons selected are read, and checked (as in the reference).
        raise ValueError(
            f"{_SELECT}: 'polygons' must hold vertex ranges [start, end) within the {len(vertices)} vertices"
        ) from None
    return new_polygons, vertices.take(rows, axis=0)


SELECT_MASKS = Operator(
    "select_masks",
    inputs=[
        Input("mask_ids", doc="The masks to keep: int32, 1-D, without repeats."),
        Input("polygons", doc="int32 (N, 3): rows ``[mask_id, start, end)`` of vertex ranges."),
        Input("vertices", doc="The vertices, (V, D), of any type."),
    ],
    args=[
        Arg(
            "reindex_masks",
            "bool",
            False,
            doc="Number the kept masks 0, 1, ... in the order of ``mask_ids``.",
        )
    ],
    prepare_args=_select_prepare,
    infer_types=_select_types,
    infer_shape=_select_shape,
    kernel=_select_kernel,
    module="ndd.segmentation",
    doc="Keep the polygons of the given masks and the vertices they use.\n\n"
    "Returns ``(polygons, vertices)``: the polygons of the masks in ``mask_ids`` (in that order), "
    "with vertex ranges into the new, packed vertices.",
)


OPERATORS = [RANDOM_MASK_PIXEL, RANDOM_OBJECT_BBOX, SELECT_MASKS]
