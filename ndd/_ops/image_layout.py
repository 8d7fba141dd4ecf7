"""Where the frame, depth, spatial and channel axes of an image-like sample are.

Image operators accept layouts such as ``HWC``, ``CHW``, ``HW``, sequences
(``FHWC``, ``FCHW``) and volumes (``DHWC``, ``CDHW``). An input without a layout
gets the usual one for its number of dimensions (``HW``, ``HWC``, ``FHWC`` or
``DHWC`` as the operator says).
"""

from typing import NamedTuple

from .._prepare.args import InvalidArgumentError
from .._prepare.storage import empty_sample_shape

__all__ = ["ImageAxes", "image_axes", "known_ndim"]


class ImageAxes(NamedTuple):
    """Axis indices of one sample; None for an axis the layout does not have."""

    layout: str
    frame: int | None
    depth: int | None
    height: int
    width: int
    channel: int | None

    @property
    def spatial(self) -> tuple:
        """The spatial axes, outermost first (D, H, W or H, W)."""
        if self.depth is None:
            return (self.height, self.width)
        return (self.depth, self.height, self.width)


def image_axes(op, layout: str, ndim: int, *, four_dims: str = "FHWC", five_dims: str = "") -> ImageAxes:
    """The axes of a sample of ``ndim`` dimensions with ``layout`` for operator
    ``op``; ``four_dims`` and ``five_dims`` are the layouts assumed for 4-D and 5-D
    data without one (none for 5-D unless given).

    Raises InvalidArgumentError naming the operator when the layout has no H
    and W, repeats an axis, or does not match the number of dimensions.
    """
    if not layout:
        defaults = {2: "HW", 3: "HWC", 4: four_dims, 5: five_dims}
        layout = defaults.get(ndim, "")
        if not layout:
            raise InvalidArgumentError(
                f"{op.qualname}: cannot tell the image axes of {ndim}-D data without a layout "
                f"(expected 2-4 dimensions or a layout such as 'HWC')"
            )
    if len(layout) != ndim:
        raise InvalidArgumentError(
            f"{op.qualname}: the layout {layout!r} does not match the {ndim} dimensions of the input"
        )
    if "H" not in layout or "W" not in layout or len(set(layout)) != len(layout):
        raise InvalidArgumentError(
            f"{op.qualname}: expected an image layout with H and W (such as 'HWC' or 'CHW'), got {layout!r}"
        )
    return ImageAxes(
        layout,
        layout.find("F") if "F" in layout else None,
        layout.find("D") if "D" in layout else None,
        layout.index("H"),
        layout.index("W"),
        layout.find("C") if "C" in layout else None,
    )


def known_ndim(x) -> int | None:
    """The number of dimensions of an input (Tensor or Batch) when its metadata
    tells, else None."""
    shape = getattr(x, "_shape", None)
    if shape is not None:
        return len(shape)
    shapes = getattr(x, "_shapes", None)
    if shapes:
        return len(shapes[0])
    if shapes is not None:  # a Batch of no samples
        empty = empty_sample_shape(x)
        return None if empty is None else len(empty)
    return None
