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
    polygons = [_within_reach(p, height, width) for p in polygons if len(p) >= 3]
    shapes = [p.reshape(-1) for p in polygons if len(p) >= 3]
    if not shapes:
        return np.zeros((height, width), dtype=bool)
    rles = rasterizer.frPyObjects(shapes, height, width)
    merged = rasterizer.merge(rles, intersect=False) if len(rles) > 1 else rles[0]
    return rle_mask(rle_counts_from_text(merged["counts"]), height, width)


def _within_reach(vertices, height: int, width: int) -> np.ndarray:
    """``vertices`` as the COCO rasteriser can take them. It walks every edge in steps of
    a fifth of a pixel, so a vertex far outside the image (1e9) exhausts the memory and
    one beyond int range (1e30) crashes it. A polygon reaching farther from the image
    than the image's size is clipped to that margin (Sutherland-Hodgman): the same
    region inside the image, with new vertices on the margin's edges. Others are
    returned as they are."""
    margin = max(height, width)
    low_x, low_y, high_x, high_y = -margin, -margin, width + margin, height + margin
    x, y = vertices[:, 0], vertices[:, 1]
    if x.min() >= low_x and x.max() <= high_x and y.min() >= low_y and y.max() <= high_y:
        return vertices
    points = vertices.astype(np.float64)
    for axis, bound, keep_below in (
        (0, low_x, False),
        (0, high_x, True),
        (1, low_y, False),
        (1, high_y, True),
    ):
        points = _clip_half_plane(points, axis, bound, keep_below)
        if len(points) == 0:
            break
    return points.astype(np.float32)


def _clip_half_plane(points, axis, bound, keep_below):
    """The polygon ``points`` cut to the side of ``coordinate[axis] = bound`` that is kept."""
    inside = points[:, axis] <= bound if keep_below else points[:, axis] >= bound
    out = []
    for i in range(len(points)):
        current, previous = points[i], points[i - 1]
        if inside[i] != inside[i - 1]:
            t = (bound - previous[axis]) / (current[axis] - previous[axis])
            crossing = previous + t * (current - previous)
            crossing[axis] = bound
            out.append(crossing)
        if inside[i]:
            out.append(current)
    return np.array(out, dtype=np.float64).reshape(-1, 2)
