"""``readers.COCO``: images with their boxes, labels and masks from a COCO
annotations file."""

import os
import warnings

import numpy as np

from .._memory import exceeds_half_of_memory
from .._prepare.args import Arg, InvalidArgumentError
from .._types import float32, int32, uint8
from ._base import Reader
from ._coco_annotations import (
    PREPROCESSED_NAME,
    describe_annotation,
    load_annotations_file,
    load_preprocessed,
    save_preprocessed,
)
from ._coco_masks import load_polygon_rasterizer, polygon_mask, rle_counts_from_text, rle_mask
from .file import read_file_bytes

__all__ = ["COCO"]

# Deprecated argument -> the argument it stands for.
_ALIASES = {
    "dump_meta_files": "save_preprocessed_annotations",
    "dump_meta_files_path": "save_preprocessed_annotations_dir",
    "meta_files_path": "preprocessed_annotations",
    "save_img_ids": "image_ids",
}
_PATH_ARGS = (
    "annotations_file",
    "file_root",
    "preprocessed_annotations",
    "save_preprocessed_annotations_dir",
)


def _path_arg(name, doc, default):
    return Arg(name, "any", default, doc=doc, type_doc="str or os.PathLike")


def _alias_arg(name, kind):
    return Arg(
        name,
        kind,
        None,
        doc=f"Deprecated alias of ``{_ALIASES[name]}``.",
        type_doc="str or os.PathLike" if kind == "any" else "",
    )


class _Sample:
    """One image of the dataset with its kept annotations (already filtered)."""

    __slots__ = ("file_name", "path", "image_id", "width", "height", "boxes", "labels", "rows")

    def __init__(self, file_name, path, image_id, width, height, boxes, labels, rows):
        self.file_name = file_name
        self.path = path
        self.image_id = image_id
        self.width = width
        self.height = height
        self.boxes = boxes
        self.labels = labels
        # Rows of the kept annotations in the Annotations arrays (for segmentations).
        self.rows = rows


class COCO(Reader):
    """Read a COCO detection/segmentation dataset: images with their boxes,
    labels and (optionally) masks.

    The dataset is the images of ``annotations_file`` (a COCO JSON file), sorted
    by image id, or those named by ``images`` (in that order, repeats kept); the
    image files are ``file_root/<file_name>``. Annotations are kept in file order;
    those marked ``iscrowd`` are left out when ``include_iscrowd=False``, those
    whose box width or height is below ``size_threshold`` (compared in float32)
    always; annotations of images the file does not list are ignored.

    Outputs, in this order:

    - the encoded image file (uint8, 1-D);
    - boxes (float32 ``(N, 4)``): ``[x, y, width, height]``, or ``[left, top,
      right, bottom]`` with ``ltrb``; divided by the image width/height with
      ``ratio`` (after the ``ltrb`` conversion, in float32);
    - labels (int32 ``(N,)``): the category's position in the file's
      ``categories`` list plus one (0 is left for background), or the category id
      itself with ``avoid_class_remapping``;
    - with ``polygon_masks``: ``polygons`` (int32 ``(P, 3)``, rows ``[box index,
      first vertex, end vertex)``) and ``vertices`` (float32 ``(V, 2)``, ``x, y``,
      relative with ``ratio``); RLE segmentations give no polygons. The
      deprecated ``masks`` gives the same outputs with vertex positions counted
      in coordinates (twice the vertex index);
    - with ``pixelwise_masks``: an int32 ``(H, W, 1)`` mask, layout ``HWC``, of
      the image size given in the file: each pixel holds the largest label whose
      segmentation (polygons or RLE) covers it, 0 elsewhere. Needs pycocotools;
    - with ``image_ids``: the image id (int32 ``(1,)``).

    Preprocessed annotations: ``save_preprocessed_annotations=True`` writes the
    parsed annotations file to ``save_preprocessed_annotations_dir/`` as
    ``ndd_coco_annotations.npz``; ``preprocessed_annotations=<folder>`` reads it
    instead of the JSON file (quicker for large files). The saved file holds all
    images and annotations before filtering, so the reading reader's
    ``images``, ``include_iscrowd``, ``size_threshold``, ``skip_empty``,
    ``avoid_class_remapping`` and output arguments apply as usual. DALI's own
    binary preprocessed files are not readable (a clear error says so).

    Unlike the reference, malformed entries of the annotations file, categories
    missing from ``categories`` (unless ``avoid_class_remapping``), ``images``
    names the file does not list, and segmentations that do not fit their image
    raise errors naming the file and entry instead of being read silently wrong.
    """

    ARGS = (
        _path_arg("annotations_file", "The COCO annotations (JSON) file.", ""),
        Arg(
            "avoid_class_remapping",
            "bool",
            False,
            doc="Use category ids as labels instead of numbering the categories 1, 2, ... in file order.",
        ),
        _alias_arg("dump_meta_files", "bool"),
        _alias_arg("dump_meta_files_path", "any"),
        _path_arg("file_root", "Folder the image file names are relative to (required).", None),
        Arg("image_ids", "bool", False, doc="Add an output with the image id."),
        Arg(
            "images",
            "any",
            None,
            doc="File names (as in the annotations file) of the images to read, in this order; "
            "all images, by id, when not given.",
            type_doc="str or list of str",
        ),
        Arg("include_iscrowd", "bool", True, doc="Keep annotations marked ``iscrowd``."),
        Arg(
            "ltrb", "bool", False, doc="Boxes as ``[left, top, right, bottom]`` instead of ``[x, y, w, h]``."
        ),
        Arg(
            "masks",
            "bool",
            None,
            doc="Deprecated: polygon outputs with vertex positions counted in coordinates; "
            "use ``polygon_masks``.",
        ),
        _alias_arg("meta_files_path", "any"),
        Arg("pixelwise_masks", "bool", False, doc="Add an int32 ``HWC`` mask of labels per image."),
        Arg("polygon_masks", "bool", False, doc="Add the ``polygons`` and ``vertices`` outputs."),
        _path_arg(
            "preprocessed_annotations",
            f"Folder holding ``{PREPROCESSED_NAME}`` saved by ``save_preprocessed_annotations``.",
            "",
        ),
        Arg("ratio", "bool", False, doc="Box and vertex coordinates relative to the image size."),
        _alias_arg("save_img_ids", "bool"),
        Arg(
            "save_preprocessed_annotations",
            "bool",
            False,
            doc="Save the parsed annotations to ``save_preprocessed_annotations_dir``.",
        ),
        _path_arg("save_preprocessed_annotations_dir", "Folder to save the parsed annotations to.", ""),
        Arg(
            "size_threshold",
            "float",
            0.1,
            doc="Leave out annotations whose box width or height is below this (pixels).",
        ),
        Arg("skip_empty", "bool", False, doc="Leave out images without (kept) annotations."),
    )
    OUTPUTS = ("images", "bboxes", "labels", "polygons", "vertices", "masks", "image_ids")

    # -- arguments --------------------------------------------------------------
    def _validate_args(self, args):
        q = self._qualname
        for name, target in _ALIASES.items():
            if args[name] is None:
                continue
            warnings.warn(f"{q}: '{name}' is deprecated; use '{target}'", DeprecationWarning, stacklevel=4)
            if args[target] != self._default(target):
                raise InvalidArgumentError(
                    f"{q}: '{name}' is a deprecated alias of '{target}'; give only '{target}'"
                )
            args[target] = args[name]
        for name in _PATH_ARGS:
            args[name] = self._path(name, args[name])
        if args["masks"] is not None:
            warnings.warn(
                f"{q}: 'masks' is deprecated; use 'polygon_masks', whose polygon rows count vertices instead of "
                "coordinates",
                DeprecationWarning,
                stacklevel=4,
            )
        self._legacy_polygons = bool(args["masks"])
        if args["pixelwise_masks"] and (args["polygon_masks"] or self._legacy_polygons):
            raise InvalidArgumentError(f"{q}: 'pixelwise_masks' and 'polygon_masks' are mutually exclusive")
        if args["file_root"] is None:
            raise InvalidArgumentError(f"{q}: 'file_root' is required (the folder of the image files)")
        if (args["annotations_file"] is None) == (args["preprocessed_annotations"] is None):
            raise InvalidArgumentError(
                f"{q}: give the annotations either as 'annotations_file' or as 'preprocessed_annotations'"
                + (", not both" if args["annotations_file"] is not None else "")
            )
        if args["save_preprocessed_annotations"] != (args["save_preprocessed_annotations_dir"] is not None):
            raise InvalidArgumentError(
                f"{q}: 'save_preprocessed_annotations' and 'save_preprocessed_annotations_dir' "
                "must be given together"
            )
        images = args["images"]
        if images is not None:
            if isinstance(images, (str, os.PathLike)):
                images = [images]
            if not isinstance(images, (list, tuple)) or not all(
                isinstance(i, (str, os.PathLike)) for i in images
            ):
                raise InvalidArgumentError(
                    f"{q}: 'images' must be a file name or a list of them, got {images!r}"
                )
            args["images"] = [os.fspath(i) for i in images]
        self._rasterizer = load_polygon_rasterizer(q) if args["pixelwise_masks"] else None

    def _default(self, name):
        return next(spec.converted_default for spec in self._arg_specs if spec.name == name)

    def _path(self, name, value):
        if value is None or value == "":
            return None
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str):
            raise InvalidArgumentError(f"{self._qualname}: '{name}' must be a path, got {value!r}")
        return value

    # -- the dataset -----------------------------------------------------------
    def _list_samples(self):
        a = self._args
        q = self._qualname
        if not os.path.isdir(a["file_root"]):
            raise FileNotFoundError(f"{q}: 'file_root' folder '{a['file_root']}' does not exist")
        if a["annotations_file"] is not None:
            annotations = load_annotations_file(a["annotations_file"], q)
        else:
            annotations = load_preprocessed(a["preprocessed_annotations"], q)
        if a["save_preprocessed_annotations"]:
            save_preprocessed(annotations, a["save_preprocessed_annotations_dir"], q)
        labels = self._labels(annotations)
        needs_size = a["ratio"] or a["pixelwise_masks"]
        samples = []
        for image in self._selected_images(annotations):
            sample = self._sample(annotations, labels, image)
            if needs_size and (sample.width <= 0 or sample.height <= 0):
                raise ValueError(
                    f"{q}: image {sample.image_id} ('{sample.file_name}') in '{annotations.source}' needs "
                    f"a positive 'width' and 'height' for "
                    f"{'ratio' if a['ratio'] else 'pixelwise_masks'}=True"
                )
            if a["skip_empty"] and len(sample.labels) == 0:
                continue
            samples.append(sample)
        # Segmentations are only kept when a mask output reads them.
        self._segmentations = (
            annotations.segmentations
            if a["polygon_masks"] or a["pixelwise_masks"] or self._legacy_polygons
            else None
        )
        self._annotation_ids = annotations.annotation_ids
        self._source = annotations.source
        return samples

    def _labels(self, annotations):
        """The label of every annotation row: the category's position in the file's
        list plus one, or the category id itself with ``avoid_class_remapping``."""
        ids = annotations.category_ids
        if self._args["avoid_class_remapping"]:
            return ids.astype(np.int32)
        position = {category: index + 1 for index, category in enumerate(annotations.categories)}
        labels = np.fromiter((position.get(c, 0) for c in ids.tolist()), dtype=np.int32, count=len(ids))
        unknown = np.flatnonzero(labels == 0)
        if unknown.size:
            row = int(unknown[0])
            raise ValueError(
                f"{self._qualname}: {annotations.describe_annotation(row)} in '{annotations.source}' has "
                f"category_id {int(ids[row])}, which 'categories' does not list (pass "
                "avoid_class_remapping=True to use category ids as labels)"
            )
        return labels

    def _selected_images(self, annotations):
        names = self._args["images"]
        if names is None:
            return np.argsort(annotations.image_ids, kind="stable")
        position = {name: i for i, name in enumerate(annotations.file_names)}
        unknown = [n for n in names if n not in position]
        if unknown:
            raise ValueError(
                f"{self._qualname}: 'images' names {len(unknown)} file(s) that '{annotations.source}' "
                f"does not list: {', '.join(repr(n) for n in unknown[:5])}"
                + (", ..." if len(unknown) > 5 else "")
            )
        return [position[n] for n in names]

    def _sample(self, annotations, labels, image):
        a = self._args
        start, stop = int(annotations.starts[image]), int(annotations.starts[image + 1])
        boxes = annotations.boxes[start:stop]
        # Compared in float32, as the reference does: a side written 0.09999999999
        # rounds to float32(0.1) and stays with the default threshold.
        threshold = np.float32(a["size_threshold"])
        keep = (boxes[:, 2] >= threshold) & (boxes[:, 3] >= threshold)
        if not a["include_iscrowd"]:
            keep &= ~annotations.iscrowd[start:stop]
        rows = start + np.flatnonzero(keep)
        name = annotations.file_names[image]
        return _Sample(
            name,
            os.path.join(a["file_root"], name),
            int(annotations.image_ids[image]),
            int(annotations.widths[image]),
            int(annotations.heights[image]),
            annotations.boxes[rows],
            labels[rows],
            rows,
        )

    def _dataset_description(self):
        a = self._args
        if a["images"] is not None and not a["images"]:
            return "'images' is empty"
        if a["skip_empty"]:
            return f"no image of '{self._source}' has annotations left after filtering (skip_empty=True)"
        return f"'{self._source}' lists no images"

    # -- reading ------------------------------------------------------------------
    def _read(self, sample):
        a = self._args
        outputs = [read_file_bytes(sample.path, self._qualname)]
        boxes = sample.boxes.copy()
        if a["ltrb"]:
            boxes[:, 2:] += boxes[:, :2]
        if a["ratio"]:
            boxes /= np.array([sample.width, sample.height] * 2, dtype=np.float32)
        outputs += [boxes, sample.labels.copy()]
        if a["polygon_masks"] or self._legacy_polygons:
            outputs += self._polygons(sample)
        elif a["pixelwise_masks"]:
            outputs.append(self._pixelwise_mask(sample))
        if a["image_ids"]:
            outputs.append(np.array([sample.image_id], dtype=np.int32))
        return tuple(outputs)

    def _segmentation_error(self, sample, row, what):
        return ValueError(
            f"{self._qualname}: {describe_annotation(self._annotation_ids, row)} of image '{sample.file_name}' "
            f"in '{self._source}': {what}"
        )

    def _polygon_list(self, sample, row):
        """The annotation's polygons as float32 ``(k, 2)`` arrays ([] for RLE or none)."""
        segmentation = self._segmentations[row]
        if not isinstance(segmentation, list):
            return []
        polygons = []
        for polygon in segmentation:
            if (
                not isinstance(polygon, list)
                or len(polygon) % 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in polygon)
            ):
                raise self._segmentation_error(
                    sample, row, f"a polygon must be a list of x, y coordinate pairs, got {polygon!r}"
                )
            with np.errstate(over="ignore"):  # beyond float32: infinite, refused where rasterised
                polygons.append(np.array(polygon, dtype=np.float32).reshape(-1, 2))
        return polygons

    def _polygons(self, sample):
        table, vertices = [], []
        count = 0
        for index, row in enumerate(sample.rows):
            for polygon in self._polygon_list(sample, row):
                table.append((index, count, count + len(polygon)))
                vertices.append(polygon)
                count += len(polygon)
        polygons = np.array(table, dtype=np.int32).reshape(-1, 3)
        if self._legacy_polygons:
            polygons[:, 1:] *= 2
        vertices = np.concatenate(vertices) if vertices else np.zeros((0, 2), dtype=np.float32)
        if self._args["ratio"]:
            vertices /= np.array([sample.width, sample.height], dtype=np.float32)
        return [polygons, vertices]

    def _region(self, sample, row):
        """The pixels the annotation's segmentation covers (bool HxW), or None."""
        height, width = sample.height, sample.width
        # The COCO rasteriser counts pixels in 32 bits (beyond, it wrote past its
        # buffer: the process crashed), and the int32 mask must fit in memory.
        if height * width >= 2**32 or exceeds_half_of_memory(4 * height * width):
            raise self._segmentation_error(
                sample, row, f"the image's size {width}x{height} (in the annotations) is too large for a mask"
            )
        segmentation = self._segmentations[row]
        if isinstance(segmentation, list):
            polygons = self._polygon_list(sample, row)
            if not all(np.isfinite(p).all() for p in polygons):
                raise self._segmentation_error(
                    sample,
                    row,
                    "a polygon to rasterise must have finite float32 coordinates, got NaN, an infinity or a "
                    "value beyond 3.4e38",
                )
            return polygon_mask(self._rasterizer, polygons, height, width)
        if not isinstance(segmentation, dict):
            return None
        size, counts = segmentation.get("size"), segmentation.get("counts")
        if size != [height, width]:
            raise self._segmentation_error(
                sample, row, f"the RLE size {size!r} is not the image's [height, width] [{height}, {width}]"
            )
        try:
            if isinstance(counts, str):
                counts = rle_counts_from_text(counts)
            elif not isinstance(counts, list) or not all(
                isinstance(c, int) and not isinstance(c, bool) for c in counts
            ):
                raise ValueError(f"RLE 'counts' must be a list of integers or a string, got {counts!r}")
            return rle_mask(counts, height, width)
        except ValueError as exc:
            raise self._segmentation_error(sample, row, str(exc)) from None

    def _pixelwise_mask(self, sample):
        covered = {}
        for label, row in zip(sample.labels.tolist(), sample.rows, strict=True):
            region = self._region(sample, row)
            if region is None:
                continue
            covered[label] = covered[label] | region if label in covered else region
        mask = np.zeros((sample.height, sample.width, 1), dtype=np.int32)
        # Larger labels are painted last, so they win where masks overlap.
        for label in sorted(covered):
            mask[covered[label], 0] = label
        return mask

    def _describe(self, sample):
        return sample.file_name

    def _output_types(self):
        a = self._args
        types = [(uint8, ""), (float32, ""), (int32, "")]
        if a["polygon_masks"] or self._legacy_polygons:
            types += [(int32, ""), (float32, "")]
        elif a["pixelwise_masks"]:
            types.append((int32, "HWC"))
        if a["image_ids"]:
            types.append((int32, ""))
        return types
