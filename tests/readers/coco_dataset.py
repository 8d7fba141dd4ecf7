"""A small COCO dataset built the same way by the golden script (run with the
reference interpreter) and by the tests, so that both read the same annotations.

Only the annotations matter for the goldens: the tests compare the image output
with the bytes of the files they wrote, so the encoded images may differ between
Pillow versions.

What the dataset exercises:

- categories listed out of id order, with gaps (12, 3, 7, 20, 1), and names whose
  sorted order differs from the list order;
- images listed out of id order, one in a sub-folder, one without annotations, one
  whose boxes are all under ``size_threshold``, one with crowd annotations only;
- annotations listed out of id order and interleaved between images, one of them
  for an image that is not listed;
- polygons (several per annotation, crowd ones too, empty and one- or two-vertex
  ones), uncompressed and compressed RLE (with counts needing several characters
  and negative differences), an annotation without ``segmentation``;
- overlapping masks of different labels;
- box sides at and around ``size_threshold`` (also ones that round to it in float32),
  zero and negative sides, a box outside its image;
- coordinates with many decimals (float32 rounding of boxes, ratios and polygon
  rasterisation near pixel boundaries).
"""

import json
import os

import numpy as np
from PIL import Image

__all__ = ["IMAGES", "CONFIGS", "annotations_json", "write_dataset", "reader_paths"]

# (id, file_name, width, height), in the order of the annotations file.
IMAGES = [
    (5, "b.jpg", 20, 16),
    (2, "a.png", 24, 12),
    (9, "sub/c.png", 10, 10),
    (4, "empty.jpg", 8, 8),
    (7, "tiny.png", 9, 9),
    (8, "crowd.png", 12, 12),
    (11, "overlap.png", 16, 16),
    (3, "edges.png", 20, 20),
    (6, "rle.png", 300, 40),
]

CATEGORIES = [12, 3, 7, 20, 1]

# Compressed RLE strings written by pycocotools.mask.encode (an independent encoder):
# a disk (16x16), a ring (16x16), a rectangle plus one pixel (10x10) and a 40x300
# mask whose counts take several characters each.
_DISK_RLE = "W15:2N2O00000001N2NZ2"
_RING_RLE = "U31=4MNG08OJ050M030K061H0923L="
_RECT_RLE = "?1`05D00000l0"
_WIDE_RLE = "Pm3en14_RN0kh5"


def _rect(x0, y0, x1, y1):
    return [x0, y0, x1, y0, x1, y1, x0, y1]


def _annotations():
    """The annotations in file order: (image id, category id, bbox, iscrowd, segmentation)."""
    anns = [
        (5, 7, [1.5, 2.25, 10.0, 8.0], 0, [[1.5, 2.25, 11.5, 2.25, 11.5, 10.25], _rect(2, 3, 4, 5)]),
        (2, 12, [3, 1, 15, 9], 0, [_rect(3, 1, 18, 10)]),
        (5, 3, [0, 0, 5, 6], 1, {"size": [16, 20], "counts": [80, 6, 10, 6, 10, 6, 202]}),
        (99, 3, [1, 1, 2, 2], 0, [_rect(1, 1, 3, 3)]),  # image 99 is not listed
        (2, 7, [20, 5, 10, 10], 0, [[20, 5, 23, 5, 23, 11]]),
        (9, 3, [1, 1, 0.05, 4], 0, [[1, 1, 1.05, 1, 1.05, 5]]),
        (9, 12, [2, 2, 6, 6], 0, {"size": [10, 10], "counts": _RECT_RLE}),
        (7, 3, [2, 2, 0.0999999, 5], 0, [[2, 2, 2.09, 2, 2.09, 7]]),
        (7, 3, [2, 2, 0, 0], 0, [[2, 2, 3, 2, 3, 3]]),
        (7, 20, [2, 2, -1, 5], 0, [[2, 2, 3, 2, 3, 3]]),
        (8, 7, [1, 1, 5, 5], 1, {"size": [12, 12], "counts": [13, 5, 7, 5, 7, 5, 7, 5, 7, 5, 76]}),
        (11, 7, [0, 0, 10, 10], 0, [_rect(0, 0, 10, 10)]),
        (11, 12, [5, 5, 10, 10], 0, [_rect(5, 5, 15, 15)]),
        (11, 1, [2, 8, 10, 6], 0, [_rect(2, 8, 12, 14)]),
        (11, 7, [8, 0, 8, 6], 0, [_rect(8, 0, 16, 6)]),
        (11, 3, [3, 3, 4, 9], 1, {"size": [16, 16], "counts": _DISK_RLE}),
        (11, 20, [12, 1, 3, 3], 0, {"size": [16, 16], "counts": _RING_RLE}),
        (6, 12, [100, 0, 200, 40], 0, {"size": [40, 300], "counts": _WIDE_RLE}),
        (6, 20, [1, 1, 30, 30], 1, [_rect(1, 1, 31, 31), _rect(40, 2, 60, 20)]),
        (3, 1, [1, 1, 0.1, 5], 0, [[], [3.3, 3.3]]),
        (3, 3, [1, 1, 5, 0.1], 0, [[5.5, 5.5, 9.7, 9.7]]),
        (3, 7, [1, 1, 0.09999999999, 5], 0, None),
        (3, 20, [1, 1, 0.1000000001, 5], 0, [[1, 1, 2, 1, 2, 2]]),
        (3, 12, [15, 15, 10, 10], 0, [_rect(15, 15, 25, 25)]),
    ]
    # Boxes and polygons with many decimals, some near the float32 and pixel
    # boundaries of the polygon rasteriser (which scales by 5 and rounds).
    rng = np.random.RandomState(3)
    near = [0.29999999999, 0.3000000001, 1.0999999999, 1.10000001, 2.4999999999, 2.50000000001, 3.69999999]
    for k in range(24):
        a, b = near[k % len(near)], near[(3 * k + 1) % len(near)]
        x0, y0 = 2 * (k % 5) + a, 2 * (k % 4) + b
        triangle = [x0, y0, x0 + 5.0 + b, y0 + 0.4999999999, x0 + 2.3000000001, y0 + 6.0999999999 - a]
        x, y = rng.uniform(0, 15, 2).round(7)
        w, h = rng.uniform(0.5, 9, 2).round(9)
        category = CATEGORIES[k % len(CATEGORIES)]
        anns.append((3, category, [float(x), float(y), float(w), float(h)], 0, [triangle]))
    return anns


def annotations_json():
    """The annotations file contents."""
    annotations = []
    ids = list(range(1, len(_annotations()) + 1))
    ids.reverse()  # annotation ids run against the file order
    for ann_id, (image_id, category, bbox, crowd, segmentation) in zip(ids, _annotations(), strict=True):
        ann = {
            "id": ann_id,
            "image_id": image_id,
            "category_id": category,
            "bbox": bbox,
            "iscrowd": crowd,
            "area": 1.0,
        }
        if segmentation is not None:
            ann["segmentation"] = segmentation
        annotations.append(ann)
    return {
        "info": {"description": "ndd COCO reader test set"},
        "images": [{"id": i, "file_name": f, "width": w, "height": h, "license": 1} for i, f, w, h in IMAGES],
        "annotations": annotations,
        "categories": [{"id": c, "name": f"c{c}", "supercategory": "thing"} for c in CATEGORIES],
    }


def write_dataset(root):
    """Write the images under ``root/images`` and ``root/annotations.json``."""
    rng = np.random.RandomState(0)
    for _, name, width, height in IMAGES:
        path = os.path.join(root, "images", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pixels = rng.randint(0, 256, (height, width, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(path)
    with open(os.path.join(root, "annotations.json"), "w", encoding="utf-8") as fh:
        json.dump(annotations_json(), fh)
    return reader_paths(root)


def reader_paths(root):
    """``file_root`` and ``annotations_file`` of the dataset written under ``root``."""
    return {
        "file_root": os.path.join(root, "images"),
        "annotations_file": os.path.join(root, "annotations.json"),
    }


# Reader arguments of each golden configuration (besides the paths).
CONFIGS = {
    "default": {},
    "ltrb": {"ltrb": True},
    "ratio": {"ratio": True},
    "ltrb_ratio": {"ltrb": True, "ratio": True},
    "polygon_masks": {"polygon_masks": True},
    "polygon_masks_ratio": {"polygon_masks": True, "ratio": True, "ltrb": True},
    "legacy_masks": {"masks": True},
    "pixelwise_masks": {"pixelwise_masks": True},
    "pixelwise_masks_no_remap": {"pixelwise_masks": True, "avoid_class_remapping": True},
    "pixelwise_masks_no_crowd": {"pixelwise_masks": True, "include_iscrowd": False, "size_threshold": 5.5},
    "image_ids": {"image_ids": True},
    "save_img_ids": {"save_img_ids": True},
    "no_iscrowd": {"include_iscrowd": False},
    "skip_empty": {"skip_empty": True},
    "no_iscrowd_skip_empty": {"include_iscrowd": False, "skip_empty": True, "image_ids": True},
    "size_threshold_5": {"size_threshold": 5.0},
    "size_threshold_0": {"size_threshold": 0.0},
    # Above float32(0.1) in float64, equal to it in float32: boxes of side 0.1 stay.
    "size_threshold_float32": {"size_threshold": 0.1000000015},
    "avoid_class_remapping": {"avoid_class_remapping": True},
    "images": {"images": ["sub/c.png", "a.png", "empty.jpg", "a.png"], "image_ids": True},
    "images_str": {"images": "crowd.png"},
    "images_skip_empty": {"images": ["empty.jpg", "a.png", "tiny.png", "b.jpg"], "skip_empty": True},
    "all_outputs": {
        "polygon_masks": True,
        "image_ids": True,
        "ltrb": True,
        "ratio": True,
        "skip_empty": True,
        "include_iscrowd": False,
        "avoid_class_remapping": True,
    },
    "shard_1_of_3": {"num_shards": 3, "shard_id": 1, "image_ids": True},
    "shard_2_of_4_padded": {"num_shards": 4, "shard_id": 2, "pad_last_batch": True, "image_ids": True},
}
