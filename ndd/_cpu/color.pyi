"""Per-pixel colour kernels without the GIL."""

import numpy as np

def color_matrix(source: np.ndarray, target: np.ndarray, coeffs: np.ndarray) -> None:
    """``target[p, i] = sum_j coeffs[3 i + j] * (source[p, j] - coeffs[12 + j]) + coeffs[9 + i]`` for
    ``(pixels, 3)`` contiguous arrays, both uint8 (rounded, saturated) or both float32; ``coeffs``
    float32 of 15."""

def equalize_frames(source: np.ndarray, target: np.ndarray) -> None:
    """Histogram-equalize each channel of each frame of contiguous ``(frames, pixels, channels)``
    uint8 data into ``target`` (OpenCV's equalizeHist)."""

def weighted_channels(source: np.ndarray, target: np.ndarray, weights: np.ndarray, offset: float) -> None:
    """``target[p, 0] = round(sum_j weights[j] * source[p, j] + offset)`` for uint8 ``(pixels, 3)``
    source and ``(pixels, 1)`` target; ``weights`` float32 of 3."""

def tile_histograms(image: np.ndarray, hist: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> None:
    """Add the 256-bin histogram of every tile to int64 ``hist`` ``(tiles_y, tiles_x, 256)``, of a
    uint8 image padded through the int64 index maps ``rows`` and ``cols`` (whole tiles)."""

def clip_tile_tables(hist: np.ndarray, tables: np.ndarray, limit: int, scale: float) -> None:
    """CLAHE's float32 tile tables ``(tiles, 256)`` from int64 histograms: clipped at ``limit``
    (0: none) with the excess redistributed, cumulated, scaled by ``scale`` and rounded."""

def blend_tile_tables(
    image: np.ndarray,
    target: np.ndarray,
    tables: np.ndarray,
    rows_above: np.ndarray,
    rows_below: np.ndarray,
    row_weights: np.ndarray,
    cols_left: np.ndarray,
    cols_right: np.ndarray,
    col_weights: np.ndarray,
) -> None:
    """CLAHE's bilinear blend of the float32 tile tables ``(tiles_y, tiles_x, 256)`` for every pixel
    of a uint8 image into ``target``; tile indices int64, weights float32."""

def rgb_to_lab8(
    source: np.ndarray,
    lightness: np.ndarray,
    chroma: np.ndarray,
    linear_table: np.ndarray,
    xyz_coeffs: np.ndarray,
    f_table: np.ndarray,
) -> None:
    """uint8 RGB ``(pixels, 3)`` to 8-bit Lab in OpenCV's fixed point, L into ``(pixels,)`` and
    (a, b) into ``(pixels, 2)``, from int32 tables: linear values (256), XYZ / white coefficients
    (9, 12 fractional bits) and f(t) (15 fractional bits)."""

def lab8_to_rgb(
    lightness: np.ndarray,
    chroma: np.ndarray,
    target: np.ndarray,
    lightness_table: np.ndarray,
    xz_table: np.ndarray,
    xz_offset: int,
    xyz_to_rgb: np.ndarray,
    srgb_table: np.ndarray,
) -> None:
    """8-bit Lab, L ``(pixels,)`` and (a, b) ``(pixels, 2)``, back to uint8 sRGB ``(pixels, 3)`` in
    OpenCV's fixed point, from int32 tables: Y and f(Y) of each L ((256, 2)), the inverse of f (at
    ``f + xz_offset``), XYZ / white to linear RGB (9, 12 fractional bits) and the sRGB code of
    linear / 4096 (4096)."""

def rgb_to_rgbx(source: np.ndarray, target: np.ndarray) -> None:
    """``target[p] = (*source[p], 255)`` for contiguous uint8 ``(pixels, 3)`` and ``(pixels, 4)``."""

def lookup_u8(source: np.ndarray, target: np.ndarray, table: np.ndarray) -> None:
    """``target[i] = table[source[i]]`` for contiguous 1-D uint8 ``source`` and a 256-entry
    ``table`` of the target's type (uint8, int16, int32 or float32)."""
