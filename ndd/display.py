"""Pictures of image data: ``image_grid`` draws a Batch of images side by side as one
``PIL.Image``, and image Batches and Tensors show as pictures in Jupyter notebooks
(their ``_repr_png_`` and ``_repr_html_`` call ``repr_png`` and ``repr_html`` here).

Not part of the reference's API: import it as ``from ndd.display import image_grid``.
"""

import base64
import html
import math
from collections.abc import Sequence

import numpy as np
from PIL import Image

__all__ = ["image_grid", "repr_html", "repr_png"]

# Notebook pictures show at most this many samples of a batch (the caption says how many more).
MAX_SHOWN = 32
_IMAGE_LAYOUTS = ("HWC", "CHW", "HW")


def _layout_of(data):
    return getattr(data, "layout", None) or None


def _guess_layout(shape):
    """The layout of an image array without one: HW, HWC (1, 3 or 4 channels last) or CHW."""
    if len(shape) == 2:
        return "HW"
    if len(shape) == 3 and shape[-1] in (1, 3, 4):
        return "HWC"
    if len(shape) == 3 and shape[0] in (1, 3, 4):
        return "CHW"
    raise ValueError(
        f"ndd.display: cannot tell how an array of shape {tuple(shape)} is an image; pass layout="
    )


def _samples(images, layout):
    """(list of numpy images, the layout of one image) from a Batch, a Tensor, an array or a list."""
    from ._batch import Batch
    from ._tensor import Tensor

    if isinstance(images, Batch):
        return [np.asarray(t) for t in images.cpu().tensors], layout or _layout_of(images)
    if isinstance(images, (list, tuple)):
        return [np.asarray(i.cpu() if hasattr(i, "cpu") else i) for i in images], layout
    if isinstance(images, Tensor):
        layout = layout or _layout_of(images)
        images = images.cpu()
    array = np.asarray(images)
    if layout is not None and len(layout) == array.ndim - 1:
        return list(array), layout
    if layout is not None and len(layout) == array.ndim == 4 and layout[0] in "NF":
        return list(array), layout[1:]
    if layout is None and array.ndim == 4:
        return list(array), None
    return [array], layout


def _to_hwc(image, layout):
    layout = layout or _guess_layout(image.shape)
    if layout not in _IMAGE_LAYOUTS or len(layout) != image.ndim:
        raise ValueError(
            f"ndd.display: images must have layout HWC, CHW or HW, got {layout!r} for shape {image.shape}"
        )
    if layout == "CHW":
        image = image.transpose(1, 2, 0)
    elif layout == "HW":
        image = image[:, :, None]
    if image.shape[2] not in (1, 3, 4):
        raise ValueError(f"ndd.display: images must have 1, 3 or 4 channels, got {image.shape[2]}")
    return image


def _to_uint8(images, mean, std):
    """Pixel values 0-255: normalisation undone (and clipped) when ``mean``/``std`` are given;
    else float values in [0, 1] scaled by 255, values in [0, 255] kept, any other range
    stretched to 0-255."""
    if mean is not None or std is not None:
        mean = np.asarray(0.0 if mean is None else mean, np.float64)
        std = np.asarray(1.0 if std is None else std, np.float64)
        return [np.clip(np.rint(i.astype(np.float64) * std + mean), 0, 255).astype(np.uint8) for i in images]
    if all(i.dtype == np.uint8 for i in images):
        return images
    lo = min(float(np.min(i)) for i in images if i.size)
    hi = max(float(np.max(i)) for i in images if i.size)
    if np.issubdtype(images[0].dtype, np.floating) and lo >= 0 and hi <= 1:
        scale, offset = 255.0, 0.0
    elif lo >= 0 and hi <= 255:
        scale, offset = 1.0, 0.0
    else:
        scale, offset = 255.0 / max(hi - lo, 1e-12), lo
    return [
        np.clip(np.rint((i.astype(np.float64) - offset) * scale), 0, 255).astype(np.uint8) for i in images
    ]


def image_grid(
    images,
    *,
    columns: int | None = None,
    layout: str | None = None,
    mean: Sequence[float] | float | None = None,
    std: Sequence[float] | float | None = None,
    gap: int = 2,
    background: int = 255,
) -> Image.Image:
    """Draw images side by side, in rows, as one RGB picture.

    Parameters
    ----------
    images : Batch, Tensor, numpy array or sequence of arrays
        A Batch of images (any sizes: each cell is as large as the largest image, the image
        at its top left), one image, or an array with a leading sample dimension. GPU data is
        copied to the host.
    columns : int, optional
        Images per row; by default up to 8.
    layout : str, optional
        Layout of one image (``"HWC"``, ``"CHW"`` or ``"HW"``); by default the data's layout,
        or guessed from the shape (1, 3 or 4 channels last, else first).
    mean, std : float or sequence of float, optional
        Undo a normalisation ``(x - mean) / std`` (per channel) before drawing.
    gap : int
        Pixels between the images.
    background : int
        Grey level (0-255) of the gaps and of the empty parts of cells.

    Returns
    -------
    PIL.Image.Image
        The grid. Float pixel values in [0, 1] are scaled to 0-255, values in [0, 255] kept,
        and any other range is stretched to 0-255. Gray images are drawn in grey, the alpha
        channel of RGBA images is ignored.
    """
    samples, layout = _samples(images, layout)
    if not samples:
        raise ValueError("ndd.display.image_grid: there are no images to draw")
    pixels = _to_uint8([_to_hwc(s, layout) for s in samples], mean, std)
    pixels = [np.repeat(p, 3, axis=2) if p.shape[2] == 1 else p[:, :, :3] for p in pixels]
    count = len(pixels)
    columns = min(columns or 8, count)
    rows = math.ceil(count / columns)
    height = max(p.shape[0] for p in pixels)
    width = max(p.shape[1] for p in pixels)
    grid = np.full((rows * (height + gap) - gap, columns * (width + gap) - gap, 3), background, np.uint8)
    for index, image in enumerate(pixels):
        top, left = (index // columns) * (height + gap), (index % columns) * (width + gap)
        grid[top : top + image.shape[0], left : left + image.shape[1]] = image
    return Image.fromarray(grid)


def _is_image_data(data):
    """Whether a Batch or Tensor holds images that a picture can show: uint8 or float samples of
    layout HWC, CHW or HW (or none, and a shape that looks like one), none of them empty."""
    if data.dtype.name not in ("u8", "f16", "f32", "f64"):
        return False
    shapes = data.shape if isinstance(data.shape, list) else [data.shape]
    try:
        hwc = [_to_hwc(np.empty(shape, np.uint8), _layout_of(data)).shape for shape in shapes]
    except ValueError:
        return False
    return bool(hwc) and all(h > 0 and w > 0 for h, w, _ in hwc)


def _png_bytes(picture):
    import io

    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def repr_png(data):
    """PNG bytes of an image Batch (as a grid of its first ``MAX_SHOWN`` samples) or image
    Tensor, or None when the data is not images (notebooks then show the text)."""
    from ._batch import Batch

    if not _is_image_data(data):
        return None
    if isinstance(data, Batch) and data.batch_size > MAX_SHOWN:
        data = data.select(slice(0, MAX_SHOWN))
    return _png_bytes(image_grid(data))


def repr_html(data):
    """The picture of ``repr_png`` with a caption (sample count, dtype, layout, shapes)."""
    from ._batch import Batch

    png = repr_png(data)
    if png is None:
        return None
    if isinstance(data, Batch):
        more = f", the first {MAX_SHOWN} shown" if data.batch_size > MAX_SHOWN else ""
        shapes = data.shape
        sizes = str(shapes[0]) if len(set(shapes)) == 1 else f"{len(set(shapes))} sizes"
        caption = f"Batch of {data.batch_size} images{more}: {sizes}"
    else:
        caption = f"Tensor: {data.shape}"
    caption += f", {data.dtype}, layout {data.layout or 'none'}, {data.device}"
    encoded = base64.b64encode(png).decode()
    return (
        f'<figure style="margin: 0"><img src="data:image/png;base64,{encoded}" '
        f'style="image-rendering: pixelated" alt="{html.escape(caption)}">'
        f"<figcaption><small>{html.escape(caption)}</small></figcaption></figure>"
    )
