"""The contents of a COCO annotations file, parsed once into arrays, and their
saved ("preprocessed") form.

``Annotations`` holds every listed image (in file order) with its annotations (in
file order), before any of the reader's filters: the filters, the label mapping
and the output formats are applied by the reader, so that a saved index serves
readers with any arguments.

The preprocessed form is one ``.npz`` file (numpy arrays, loaded without pickle)
holding the same arrays; segmentations are kept as their JSON text and parsed
only when a sample's masks are read.
"""

import json
import os

import numpy as np

try:
    import orjson as _orjson
except ImportError:  # optional: the 'readers' extra
    _orjson = None

__all__ = [
    "Annotations",
    "describe_annotation",
    "load_annotations_file",
    "save_preprocessed",
    "load_preprocessed",
    "PREPROCESSED_NAME",
]

PREPROCESSED_NAME = "ndd_coco_annotations.npz"
_FORMAT = "ndd.readers.COCO preprocessed annotations, version 1"
# Files written by the reference implementation's own (binary) preprocessed format.
_REFERENCE_PREPROCESSED = ("boxes.dat", "labels.dat", "filenames.dat")

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


class Annotations:
    """Images and their annotations, in file order.

    Attributes
    ----------
    source : str
        The file they were read from (for messages).
    categories : list of int
        Category ids in file order.
    image_ids, widths, heights : numpy int64 arrays, one entry per image
        Sizes are -1 where the file does not give them.
    file_names : list of str
    starts : numpy int64 array
        The annotations of image ``i`` are rows ``starts[i]:starts[i + 1]``.
    boxes : float32 ``(A, 4)``; category_ids : int64 ``(A,)``; iscrowd : bool ``(A,)``;
    annotation_ids : int64 ``(A,)`` (-1 where the file gives none)
    segmentations : indexable by annotation row
        The annotation's segmentation as parsed JSON (None when absent).
    """

    __slots__ = (
        "source",
        "categories",
        "image_ids",
        "file_names",
        "widths",
        "heights",
        "starts",
        "boxes",
        "category_ids",
        "iscrowd",
        "annotation_ids",
        "segmentations",
    )

    def describe_annotation(self, row: int) -> str:
        """``annotation <id>`` (or its row when it has no id) for messages."""
        return describe_annotation(self.annotation_ids, row)


def describe_annotation(annotation_ids, row: int) -> str:
    """``annotation <id>`` (or its row when it has no id) for messages."""
    ann_id = int(annotation_ids[row])
    return f"annotation {ann_id}" if ann_id >= 0 else f"annotation #{row}"


class _JsonTexts:
    """Segmentations stored as JSON texts in one byte buffer, parsed on access."""

    __slots__ = ("_buffer", "_offsets")

    def __init__(self, buffer, offsets):
        self._buffer = buffer
        self._offsets = offsets

    def __len__(self):
        return len(self._offsets) - 1

    def __getitem__(self, row):
        start, stop = int(self._offsets[row]), int(self._offsets[row + 1])
        if start == stop:
            return None
        return json.loads(self._buffer[start:stop].tobytes())


# -- the annotations file -------------------------------------------------------


def _parse_json(raw):
    """The JSON document ``raw`` (bytes): by orjson when installed (the 'readers'
    extra; about 8 times faster on COCO's files), else by the standard library, which
    also reads what orjson refuses (NaN, huge integers) and says where a file is broken."""
    if _orjson is not None:
        try:
            return _orjson.loads(raw)
        except _orjson.JSONDecodeError:
            pass
    return json.loads(raw)


def load_annotations_file(path: str, qualname: str) -> Annotations:
    """Parse a COCO annotations file; errors name the reader, the file and the entry."""
    try:
        with open(path, "rb") as fh:
            data = _parse_json(fh.read())
    except FileNotFoundError:
        raise FileNotFoundError(f"{qualname}: 'annotations_file' '{path}' does not exist") from None
    except OSError as exc:
        raise type(exc)(
            f"{qualname}: cannot read 'annotations_file' '{path}': {exc.strerror or exc}"
        ) from None
    except ValueError as exc:  # JSONDecodeError, bad UTF-8
        raise ValueError(f"{qualname}: 'annotations_file' '{path}' is not valid JSON: {exc}") from None
    return _Parser(path, qualname).parse(data)


class _Parser:
    def __init__(self, path, qualname):
        self.path = path
        self.qualname = qualname

    def fail(self, what):
        raise ValueError(f"{self.qualname}: {what} in 'annotations_file' '{self.path}'")

    def section(self, data, key):
        value = data.get(key, [])
        if not isinstance(value, list):
            self.fail(f"'{key}' must be a list, got {type(value).__name__}")
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                self.fail(f"entry #{index} of '{key}' must be an object, got {type(item).__name__}")
        return value

    def integer(self, entry, key, where, *, required=True, default=None):
        value = entry.get(key)
        if value is None:
            if required:
                self.fail(f"{where} has no '{key}'")
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(f"{where}: '{key}' must be an integer, got {value!r}")
        if not _INT32_MIN <= value <= _INT32_MAX:
            self.fail(f"{where}: '{key}' {value} does not fit in int32")
        return value

    def parse(self, data):
        if not isinstance(data, dict):
            self.fail(f"the top level must be an object, got {type(data).__name__}")
        result = Annotations()
        result.source = self.path
        result.categories = self.categories(self.section(data, "categories"))
        images = self.section(data, "images")
        result.image_ids, result.file_names, result.widths, result.heights = self.images(images)
        self.annotations(self.section(data, "annotations"), result)
        return result

    def categories(self, entries):
        ids = [self.integer(c, "id", f"category #{i}") for i, c in enumerate(entries)]
        seen = set()
        for category_id in ids:
            if category_id in seen:
                self.fail(f"category id {category_id} is listed twice")
            seen.add(category_id)
        return ids

    def images(self, entries):
        ids, names, widths, heights = [], [], [], []
        seen = set()
        for index, image in enumerate(entries):
            where = f"image #{index}"
            image_id = self.integer(image, "id", where)
            if image_id in seen:
                self.fail(f"image id {image_id} is listed twice")
            seen.add(image_id)
            name = image.get("file_name")
            if not isinstance(name, str) or not name:
                self.fail(f"image {image_id} needs a 'file_name' string, got {name!r}")
            ids.append(image_id)
            names.append(name)
            widths.append(self.integer(image, "width", f"image {image_id}", required=False, default=-1))
            heights.append(self.integer(image, "height", f"image {image_id}", required=False, default=-1))
        return (
            np.array(ids, dtype=np.int64),
            names,
            np.array(widths, dtype=np.int64),
            np.array(heights, dtype=np.int64),
        )

    def annotations(self, entries, result):
        position = {int(image_id): i for i, image_id in enumerate(result.image_ids)}
        per_image = [[] for _ in position]
        for index, ann in enumerate(entries):
            image_id = ann.get("image_id")
            if type(image_id) is not int or not _INT32_MIN <= image_id <= _INT32_MAX:
                image_id = self.integer(ann, "image_id", _where(ann, index))  # raises, naming it
            image = position.get(image_id)
            if image is None:
                # Annotations of images that are not listed are left out, as the
                # reference does: subsets are often made by editing 'images' only.
                continue
            per_image[image].append(index)
        order = [index for rows in per_image for index in rows]
        counts = [len(rows) for rows in per_image]
        result.starts = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)
        boxes = np.zeros((len(order), 4), dtype=np.float32)
        category_ids = np.zeros(len(order), dtype=np.int64)
        iscrowd = np.zeros(len(order), dtype=bool)
        annotation_ids = np.full(len(order), -1, dtype=np.int64)
        segmentations = []
        box_rows = []
        for row, index in enumerate(order):
            ann = entries[index]
            ann_id = ann.get("id")
            if type(ann_id) is int and ann_id >= 0:
                annotation_ids[row] = ann_id
            bbox = ann.get("bbox")
            if type(bbox) is not list or len(bbox) != 4 or not all(type(v) in (int, float) for v in bbox):
                bbox = self.bbox(ann, _where(ann, index))  # raises, naming it
            box_rows.append(bbox)
            category = ann.get("category_id")
            if type(category) is not int or not _INT32_MIN <= category <= _INT32_MAX:
                category = self.integer(ann, "category_id", _where(ann, index))  # raises, naming it
            category_ids[row] = category
            crowd = ann.get("iscrowd", 0)
            if crowd in (0, 1) and type(crowd) in (int, bool):
                iscrowd[row] = bool(crowd)
            else:
                self.fail(f"{_where(ann, index)}: 'iscrowd' must be 0 or 1, got {crowd!r}")
            segmentation = ann.get("segmentation")
            if segmentation is not None and type(segmentation) not in (list, dict):
                self.fail(f"{_where(ann, index)}: 'segmentation' must be a list of polygons or an RLE object")
            segmentations.append(segmentation)
        if box_rows:
            boxes[:] = box_rows
        result.boxes = boxes
        result.category_ids = category_ids
        result.iscrowd = iscrowd
        result.annotation_ids = annotation_ids
        result.segmentations = segmentations

    def bbox(self, ann, where):
        bbox = ann.get("bbox")
        if (
            not isinstance(bbox, list)
            or len(bbox) != 4
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in bbox)
        ):
            self.fail(f"{where}: 'bbox' must be 4 numbers [x, y, width, height], got {bbox!r}")
        return bbox


def _where(ann, index):
    """How an error names an annotation: by its id, else by its position."""
    ann_id = ann.get("id")
    return f"annotation {ann_id!r}" if ann_id is not None else f"annotation #{index}"


# -- the preprocessed form --------------------------------------------------------


def _pack_texts(texts):
    encoded = [t.encode() for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def _unpack_texts(buffer, offsets):
    raw = buffer.tobytes()
    return [raw[offsets[i] : offsets[i + 1]].decode() for i in range(len(offsets) - 1)]


def save_preprocessed(annotations: Annotations, folder: str, qualname: str) -> str:
    """Write ``annotations`` to ``folder/ndd_coco_annotations.npz`` (creating the
    folder); return the file's path."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise type(exc)(
            f"{qualname}: cannot create 'save_preprocessed_annotations_dir' '{folder}': {exc.strerror or exc}"
        ) from None
    names, name_offsets = _pack_texts(annotations.file_names)
    texts = [
        "" if s is None else json.dumps(s, separators=(",", ":"))
        for s in (annotations.segmentations[i] for i in range(len(annotations.boxes)))
    ]
    segmentations, segmentation_offsets = _pack_texts(texts)
    path = os.path.join(folder, PREPROCESSED_NAME)
    try:
        with open(path, "wb") as fh:
            np.savez(
                fh,
                format=np.array(_FORMAT),
                source=np.array(os.path.abspath(annotations.source)),
                categories=np.array(annotations.categories, dtype=np.int64),
                image_ids=annotations.image_ids,
                file_names=names,
                file_name_offsets=name_offsets,
                widths=annotations.widths,
                heights=annotations.heights,
                starts=annotations.starts,
                boxes=annotations.boxes,
                category_ids=annotations.category_ids,
                iscrowd=annotations.iscrowd,
                annotation_ids=annotations.annotation_ids,
                segmentations=segmentations,
                segmentation_offsets=segmentation_offsets,
            )
    except OSError as exc:
        raise type(exc)(
            f"{qualname}: cannot write preprocessed annotations '{path}': {exc.strerror or exc}"
        ) from None
    return path


def load_preprocessed(folder: str, qualname: str) -> Annotations:
    """Read the annotations saved by ``save_preprocessed`` into ``folder``."""
    path = os.path.join(folder, PREPROCESSED_NAME)
    if not os.path.isfile(path):
        if os.path.isdir(folder) and any(
            os.path.isfile(os.path.join(folder, f)) for f in _REFERENCE_PREPROCESSED
        ):
            raise ValueError(
                f"{qualname}: 'preprocessed_annotations' folder '{folder}' holds annotations preprocessed by "
                f"DALI, whose binary format ndd does not read; give the JSON file as 'annotations_file' "
                f"(and save_preprocessed_annotations=True to write ndd's '{PREPROCESSED_NAME}')"
            )
        raise FileNotFoundError(
            f"{qualname}: 'preprocessed_annotations' folder '{folder}' has no '{PREPROCESSED_NAME}' "
            "(written by a COCO reader with save_preprocessed_annotations=True)"
        )
    try:
        with np.load(path, allow_pickle=False) as saved:
            arrays = {key: saved[key] for key in saved.files}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{qualname}: cannot read preprocessed annotations '{path}': {exc}") from None
    if "format" not in arrays or str(arrays["format"]) != _FORMAT:
        found = str(arrays["format"]) if "format" in arrays else "no format marker"
        raise ValueError(f"{qualname}: '{path}' is not in the expected format ({_FORMAT!r}), found {found!r}")
    result = Annotations()
    result.source = path
    result.categories = [int(c) for c in arrays["categories"]]
    result.image_ids = arrays["image_ids"]
    result.file_names = _unpack_texts(arrays["file_names"], arrays["file_name_offsets"])
    result.widths = arrays["widths"]
    result.heights = arrays["heights"]
    result.starts = arrays["starts"]
    result.boxes = arrays["boxes"]
    result.category_ids = arrays["category_ids"]
    result.iscrowd = arrays["iscrowd"]
    result.annotation_ids = arrays["annotation_ids"]
    result.segmentations = _JsonTexts(arrays["segmentations"], arrays["segmentation_offsets"])
    return result
