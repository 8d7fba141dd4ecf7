"""COCO segmentations as pixel masks: run-length encodings (RLE) decoded here,
polygons rasterised with pycocotools (the COCO project's own rasteriser, so that
edge pixels come out as in every other COCO tool).

A COCO RLE lists run lengths over the image in column-major order, starting with
a run of background. Its compressed text form writes each count in 5-bit groups,
least significant first, as characters from ``'0'`` (48): bit 0x20 of a character
says another group follows, bit 0x10 of the last group is the sign; from the
third count on, the text holds the difference to the count two places before.
"""

import numpy as np

__all__ = ["rle_counts_from_text", "rle_mask", "polygon_mask", "load_polygon_rasterizer"]


def load_polygon_rasterizer(qualname: str):
    """``pycocotools.mask``, or an ImportError saying what needs it."""
    try:
        from pycocotools import mask
    except ImportError as exc:
        raise ImportError(
            f"{qualname}: pixelwise_masks=True needs the 'pycocotools' package to rasterise polygons "
            "(pip install pycocotools, or install ndd with the 'readers' extra)"
        ) from exc
    return mask


def rle_counts_from_text(text) -> list:
    """The run lengths of a compressed COCO RLE string (str or bytes).

    Raises ValueError for a truncated or out-of-range text.
    """
    data = text.encode("ascii") if isinstance(text, str) else bytes(text)
    counts = []
    position = 0
    while position < len(data):
        value = 0
        shift = 0
        while True:
            if position >= len(data):
                raise ValueError("the compressed RLE text ends inside a count")
            group = data[position] - 48
            if not 0 <= group < 64:
                raise ValueError(f"character {chr(data[position])!r} is not part of a compressed RLE")
            position += 1
            value |= (group & 0x1F) << shift
            shift += 5
            if not group & 0x20:
                if group & 0x10:
                    value -= 1 << shift  # sign-extend from the last group
                break
        if len(counts) > 2:
            value += counts[-2]
        counts.append(value)
    return counts


def rle_mask(counts, height: int, width: int) -> np.ndarray:
    """A bool ``(height, width)`` mask from run lengths (background first,
    column-major). Runs that stop short of the image leave the rest background;
    negative runs or runs past the image raise ValueError."""
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    if counts.size and counts.min() < 0:
        raise ValueError("RLE run lengths must not be negative")
    total = int(counts.sum())
    if total > height * width:
        raise ValueError(f"the RLE runs cover {total} pixels, more than the {height}x{width} image")
    foreground = np.arange(counts.size) % 2 == 1
    flat = np.zeros(height * width, dtype=bool)
    flat[:total] = np.repeat(foreground, counts)
    return flat.reshape(width, height).T


def polygon_mask(rasterizer, polygons, height: int, width: int) -> np.ndarray:
    """A bool ``(height, width)`` mask: the union of ``polygons`` (float32
    ``(k, 2)`` vertex arrays). Polygons of fewer than three vertices cover no
    pixel in the COCO rasteriser and are left out."""
    # The float32 vertices, not the file's float64 numbers, are rasterised, as the
    # reference does; it shows at pixel edges.
    shapes = [p.reshape(-1) for p in polygons if len(p) >= 3]
    if not shapes:
        return np.zeros((height, width), dtype=bool)
    rles = rasterizer.frPyObjects(shapes, height, width)
    merged = rasterizer.merge(rles, intersect=False) if len(rles) > 1 else rles[0]
    return rle_mask(rle_counts_from_text(merged["counts"]), height, width)
