"""GPU kernel of ``jpeg_compression_distortion``, queued on ``kernels/jpeg_distortion.cu``.

The CPU encodes each frame with Pillow (libjpeg-turbo: baseline, 4:2:0, the
standard tables scaled by ``quality``, the integer DCT) and decodes it with
simplejpeg (libjpeg-turbo: the integer inverse DCT, fancy upsampling). Every lossy
step of that round trip is integer arithmetic, and the entropy coding between them
loses nothing, so the GPU takes the same steps without it and gives the CPU's
pixels to the bit: one launch codes the 16x16 units of every frame of the batch
into decoded Y, Cb and Cr planes (a temporary), a second upsamples the chroma and
converts each pixel back to RGB.

Here, on the host: a frame's descriptor rows, and per distinct quality the table
that libjpeg-turbo derives from it (``jcparam.c`` ``jpeg_set_quality`` with
``force_baseline``, as Pillow calls it, and the reciprocals ``jcdctmgr.c``
quantises with), uploaded per call.

Nothing here touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import numpy as np

from .gpu_segments import (
    GpuSamples,
    SampleOutputs,
    args_per_sample,
    cuda,
    launch_segments,
    require_gpu_input_of,
)

__all__ = ["MAX_DIMENSION", "GpuJpegDistortion", "quality_table", "quantization_table"]

MODULE = "jpeg_distortion"
# JPEG_MCUS, JPEG_THREADS, JPEG_CODE_ROW and JPEG_RGB_ROW of kernels/jpeg_distortion.cu.
_MCUS = 4
_CODE_THREADS = 256
_CODE_ROW = 7
_RGB_ROW = 4
_RGB_BLOCK = 256
# libjpeg's JPEG_MAX_DIMENSION: the CPU's encoder refuses larger frames.
MAX_DIMENSION = 65500

# jcparam.c std_luminance_quant_tbl and std_chrominance_quant_tbl (JPEG Annex K), in
# natural order.
_LUMINANCE = np.array(
    [
        [16, 11, 10, 16, 24, 40, 51, 61],
        [12, 12, 14, 19, 26, 58, 60, 55],
        [14, 13, 16, 24, 40, 57, 69, 56],
        [14, 17, 22, 29, 51, 87, 80, 62],
        [18, 22, 37, 56, 68, 109, 103, 77],
        [24, 35, 55, 64, 81, 104, 113, 92],
        [49, 64, 78, 87, 103, 121, 120, 101],
        [72, 92, 95, 98, 112, 100, 103, 99],
    ]
)
_CHROMINANCE = np.full((8, 8), 99)
_CHROMINANCE[:4, :4] = [[17, 18, 24, 47], [18, 21, 26, 66], [24, 26, 56, 99], [47, 66, 99, 99]]


def quantization_table(quality: int) -> np.ndarray:
    """The luminance and chrominance quantisation tables (2 x 64, natural order) that
    libjpeg builds for ``quality`` (1 to 100): ``jpeg_quality_scaling``'s percentage
    of the standard tables, rounded, at least 1 and, for baseline files, at most 255."""
    scale = 5000 // quality if quality < 50 else 200 - 2 * quality
    base = np.stack([_LUMINANCE.reshape(-1), _CHROMINANCE.reshape(-1)])
    return np.clip((base * scale + 50) // 100, 1, 255)


def quality_table(quality: int) -> np.ndarray:
    """The kernel's table of ``quality`` (int32): the quantisation values (luminance,
    then chrominance), then for eight times each (the forward DCT's scale) the
    reciprocal, correction and shift of ``jcdctmgr.c``'s ``compute_reciprocal``.
    ``((|x| + correction) * reciprocal) >> shift`` is ``|x| / divisor`` rounded half up
    for every coefficient the DCT gives."""
    values = quantization_table(quality).reshape(-1)
    reciprocals, corrections, shifts = [], [], []
    for divisor in (8 * values).tolist():
        shift = 16 + divisor.bit_length() - 1
        reciprocal, remainder = divmod(1 << shift, divisor)
        correction = divisor // 2
        if remainder == 0:
            # A power of two: the reciprocal one bit shorter, to fit 16 bits.
            reciprocal >>= 1
            shift -= 1
        elif remainder <= divisor // 2:
            correction += 1
        else:
            reciprocal += 1
        reciprocals.append(reciprocal)
        corrections.append(correction)
        shifts.append(shift)
    return np.concatenate([values, reciprocals, corrections, shifts]).astype(np.int32)


class GpuJpegDistortion:
    """The GPU kernel of ``jpeg_compression_distortion``: uint8 RGB images (HWC) or
    sequences (FHWC), every frame of a batch coded in one launch and converted back
    to RGB in a second. ``quality(args)`` is a sample's quality as the CPU takes it."""

    def __init__(self, op, quality):
        self.op = op
        self.quality = quality

    def check(self, ins, args):
        """Prepare phase: a uint8 input on the GPU."""
        require_gpu_input_of(self.op, ins[0], (np.dtype(np.uint8),))

    def _frames(self, shape):
        """(frames, height, width) of a sample, refused as the CPU's encoder refuses it."""
        frames, height, width = (1, *shape[:2]) if len(shape) == 3 else shape[:3]
        if frames and (height == 0 or width == 0):
            raise ValueError(f"{self.op.qualname}: cannot write empty image (a sample of shape {shape})")
        if height > MAX_DIMENSION or width > MAX_DIMENSION:
            raise ValueError(
                f"{self.op.qualname}: JPEG frames are at most {MAX_DIMENSION} pixels high and wide, "
                f"got a sample of shape {shape}"
            )
        return frames, height, width

    def __call__(self, inputs, args, batch_size, ctx):
        device_array = cuda()[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source = GpuSamples(inputs[0], batch_size)
        out = SampleOutputs(source.shapes, np.dtype(np.uint8), batch_size >= 0, device_id, stream)
        tables = {}
        code_rows, rgb_rows = [], []
        planes_size = max_units = max_pairs = 0
        for shape, in_offset, out_offset, sample_args in zip(
            source.shapes, source.offsets, out.offsets, args_per_sample(args, batch_size), strict=True
        ):
            frames, height, width = self._frames(shape)
            quality = self.quality(sample_args)
            table_offset = tables.setdefault(quality, len(tables)) * 4 * 128
            unit_columns = -(-width // 16)
            units = unit_columns * -(-height // 16)
            chroma_size = -(-height // 2) * -(-width // 2)
            for f in range(frames):
                at = f * height * width * 3
                code_rows += [in_offset + at, planes_size, height, width, table_offset, unit_columns, units]
                rgb_rows += [planes_size, out_offset + at, height, width]
                planes_size += height * width + 2 * chroma_size
            if frames:
                max_units = max(max_units, units)
                max_pairs = max(max_pairs, height * -(-width // 2))
        if not code_rows:
            return [out.result]
        planes = device_array.DeviceArray.empty((planes_size,), np.uint8, device_id, stream)
        table = device_array.DeviceArray.from_host(
            np.concatenate([quality_table(q) for q in tables]), device_id, stream
        )
        # One block per group of _MCUS units: as many "elements" as their threads.
        launch_segments(
            device_id,
            MODULE,
            "jpeg_distortion_code",
            _CODE_THREADS,
            stream,
            code_rows,
            _CODE_ROW,
            -(-max_units // _MCUS) * _CODE_THREADS,
            (source.ptr, planes.ptr),
            (table.ptr,),
        )
        launch_segments(
            device_id,
            MODULE,
            "jpeg_distortion_rgb",
            _RGB_BLOCK,
            stream,
            rgb_rows,
            _RGB_ROW,
            max_pairs,
            (planes.ptr, out.base.ptr),
        )
        return [out.result]
