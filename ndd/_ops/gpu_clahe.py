"""GPU kernel of ``clahe``, queued on ``kernels/clahe.cu``.

The CPU's plan, the GPU's pixels. The operator's own module (``color.py``) gives
each sample's tiles with the function its CPU path uses (``_clahe_tiles``: the
padded extents, the clip limit in counts, the table scale) and the 8-bit Lab tables
that its Cython conversions take; the kernels then count, clip, accumulate and blend
with the CPU's integer and float32 operations in the CPU's order, so that the
results equal the CPU's to the bit.

A batch is two launches, whatever its shapes: ``clahe_tables`` runs a block per tile
of every plane (a channel of a sample, or the lightness of an RGB sample with
``luma_only``), from a descriptor row per plane, and writes the tiles' lookup tables
to a temporary buffer; ``clahe_apply`` then runs a thread per pixel of each sample
(a descriptor row per sample), blending the tables of the pixel's four nearest tile
centres for each of its planes. The lightness is never stored: the first pass
converts the pixels it counts to Lab, the second the pixels it writes, and back.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import numpy as np

from .gpu_segments import (
    GpuSamples,
    SampleOutputs,
    cuda,
    launch_blocks,
    launch_segments,
    require_gpu_input_of,
    unsupported,
)

__all__ = ["GpuClahe"]

MODULE = "clahe"
# CLAHE_BINS of kernels/clahe.cu: a clahe_tables block has a thread per bin.
_BINS = 256
_APPLY_BLOCK = 256
# CLAHE_SAMPLE_ROW of kernels/clahe.cu.
_SAMPLE_ROW = 10
# The histograms count in 32 bits.
_MAX_TILE_AREA = 1 << 32


def _float_bits(value):
    return int(np.float32(value).view(np.int32))


def _pack_lab_tables(rgb_to_lab, lab_to_rgb):
    """The Lab tables as kernels/clahe.cu reads them: one int32 array, a head of
    offsets (CLAHE_LAB_* order) then the tables."""
    linear, to_xyz, f = rgb_to_lab
    lightness, xz, xz_offset, to_rgb, srgb = lab_to_rgb
    tables = [linear, to_xyz, f, lightness, xz, to_rgb, srgb]
    starts = np.cumsum([len(tables)] + [np.size(t) for t in tables])[:-1]
    # The xz table is read at f(Y) plus a signed term: its head entry is its zero.
    head = starts + np.array([0, 0, 0, 0, xz_offset, 0, 0])
    return np.concatenate([head, *(np.asarray(t).reshape(-1) for t in tables)]).astype(np.int32)


class GpuClahe:
    """The GPU kernel of ``clahe``. ``tiles(height, width, tiles_x, tiles_y, clip_limit)``
    gives a plane's padded height and width, clip limit in counts and table scale;
    ``rgb_to_lab`` and ``lab_to_rgb`` are the tables the CPU's 8-bit Lab conversions
    take (``ndd._cpu.color.rgb_to_lab8`` and ``lab8_to_rgb``), in their order."""

    def __init__(self, op, tiles, rgb_to_lab, lab_to_rgb):
        self.op = op
        self.tiles = tiles
        self.lab_tables = _pack_lab_tables(rgb_to_lab, lab_to_rgb)

    def check(self, ins, args):
        """Prepare phase: a uint8 input on the GPU."""
        require_gpu_input_of(self.op, ins[0], (np.dtype(np.uint8),))

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        out = SampleOutputs(source.shapes, source.dtype, batch_size >= 0, device_id, stream)
        tiles_x, tiles_y = args["tiles_x"], args["tiles_y"]
        plane_tables = tiles_x * tiles_y * _BINS
        planes, samples, table_size, max_pixels, any_luma = [], [], 0, 0, False
        for shape, in_offset, out_offset in zip(source.shapes, source.offsets, out.offsets, strict=True):
            height, width, channels = shape
            if height == 0 or width == 0:
                continue
            padded_h, padded_w, limit, scale = self.tiles(height, width, tiles_x, tiles_y, args["clip_limit"])
            tile_h, tile_w = padded_h // tiles_y, padded_w // tiles_x
            if tile_h * tile_w >= _MAX_TILE_AREA:
                raise unsupported(self.op, f"tiles of 2**32 pixels or more (got {tile_h} x {tile_w})")
            luma = int(channels == 3 and bool(args["luma_only"]))
            any_luma = any_luma or bool(luma)
            samples += [
                in_offset,
                out_offset,
                height * width,
                height,
                width,
                channels,
                luma,
                table_size,
                _float_bits(np.float32(1.0) / np.float32(tile_h)),
                _float_bits(np.float32(1.0) / np.float32(tile_w)),
            ]
            max_pixels = max(max_pixels, height * width)
            for c in range(1 if luma else channels):
                planes += [in_offset + c, height, width, channels, tile_h, tile_w, table_size, limit]
                planes += [_float_bits(scale), luma]
                table_size += plane_tables
        if not samples:
            return [out.result]
        tables = device_array.DeviceArray.empty((table_size,), np.uint8, device_id, stream)
        plane_rows = device_array.DeviceArray.from_host(np.asarray(planes, np.int64), device_id, stream)
        lab_ptr = 0
        if any_luma:
            lab = device_array.DeviceArray.from_host(self.lab_tables, device_id, stream)
            lab_ptr = lab.ptr
        launch_blocks(
            device_id,
            MODULE,
            "clahe_tables",
            _BINS,
            stream,
            table_size // _BINS,
            (source.ptr, tables.ptr, plane_rows.ptr, lab_ptr),
            (tiles_x, tiles_y),
        )
        launch_segments(
            device_id,
            MODULE,
            "clahe_apply",
            _APPLY_BLOCK,
            stream,
            samples,
            _SAMPLE_ROW,
            max_pixels,
            (source.ptr, out.base.ptr, tables.ptr, lab_ptr),
            (tiles_x, tiles_y),
        )
        return [out.result]
