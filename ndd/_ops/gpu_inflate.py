"""``ndd.decoders.inflate`` on the GPU, through nvCOMP (``nvidia-nvcomp-cu12``).

LZ4 decompression is nvCOMP's job, so ndd writes no kernel for it: every chunk of
every sample of a call is one item of a single batched nvCOMP decode, queued on
the context's stream, that writes straight into the output's pool allocation (one
allocation for the batch; nvCOMP takes it as a buffer carved by an offset table).
The output is cleared first, as on the CPU, where a chunk that inflates to fewer
bytes than its output holds leaves zeros behind.

The chunks are found by the CPU's own function (``decoders._chunks``), so the
arguments mean the same and fail the same. Compressed bytes in host memory are
uploaded in one copy; bytes already on the GPU are read where they are. When the
batch fails to decode, each sample is decoded alone to name the one at fault, as
the CPU names it. With ``check_output_size``, the inflated sizes nvCOMP reports
are read back (a wait for the stream) and compared with the outputs' sizes.

Nothing here touches the driver or nvCOMP at import: both are imported on first use.
"""

import math
import threading

import numpy as np

from .gpu_segments import SampleOutputs, args_per_sample, cuda, unsupported

__all__ = ["GpuInflate", "make_codec", "nvcomp"]

_codecs = {}
_codecs_lock = threading.Lock()


def nvcomp():
    """nvCOMP's Python module, or None when it is not installed."""
    try:
        from nvidia import nvcomp as module
    except ImportError:
        return None
    return module


def make_codec(device_id, stream_handle):
    """An LZ4 codec for raw chunks (no nvCOMP container) on ``device_id`` that queues
    its work on the stream ``stream_handle``."""
    module = nvcomp()
    return module.Codec(
        algorithm="LZ4",
        bitstream_kind=module.BitstreamKind.RAW,
        device_id=device_id,
        cuda_stream=stream_handle,
    )


def _codec(device_id, stream_handle):
    """One codec per device, stream and thread (a codec runs one batch at a time)."""
    key = (device_id, stream_handle, threading.get_ident())
    with _codecs_lock:
        codec = _codecs.get(key)
        if codec is None:
            codec = _codecs[key] = make_codec(device_id, stream_handle)
        return codec


class GpuInflate:
    """The GPU kernel of ``decoders.inflate``. ``chunks(args, size)`` is the CPU's
    (offset, size) list of a sample's compressed chunks (None: the sample is one)."""

    def __init__(self, op, chunks):
        self.op = op
        self.chunks = chunks

    def check(self, ins, args):
        """Prepare phase: nvCOMP is installed."""
        if nvcomp() is None:
            raise unsupported(
                self.op, "nvCOMP is not installed (pip install 'ndd[gpu]' brings nvidia-nvcomp)"
            )

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        source, source_offsets, sizes = _device_source(inputs[0], batch_size, device_id, stream)
        sample_args = args_per_sample(args, batch_size)
        dtype = np.dtype(args["dtype"].numpy)
        shapes, in_chunks, out_bytes = [], [], []
        for i, (a, size) in enumerate(zip(sample_args, sizes, strict=True)):
            try:
                chunks = self.chunks(a, size)
            except ValueError as exc:
                raise ValueError(f"{self.op.qualname}: sample {i}: {exc}") from None
            shape = tuple(int(d) for d in a["shape"])
            in_chunks.append(chunks or [(0, size)])
            out_bytes.append(math.prod(shape) * dtype.itemsize)
            shapes.append(shape if chunks is None else (len(chunks),) + shape)
        out = SampleOutputs(shapes, dtype, batch_size >= 0, device_id, stream)
        out.base.clear()
        items = []  # (sample, chunk, source offset, source size, output byte offset, output size)
        for i, chunks in enumerate(in_chunks):
            start = out.offsets[i] * dtype.itemsize
            for k, (offset, length) in enumerate(chunks):
                if out_bytes[i] and length:
                    items.append(
                        (i, k, source_offsets[i] + offset, length, start + k * out_bytes[i], out_bytes[i])
                    )
        if items:
            self._decode(items, source, out, stream, device_id, args["check_output_size"])
        return [out.result]

    def _decode(self, items, source, out, stream, device_id, check_size):
        codec = nvcomp()
        handle = int(stream.handle)

        def decode(part):
            srcs = codec.as_arrays(source, [p[2] for p in part], [p[3] for p in part], cuda_stream=handle)
            outs = codec.as_arrays(out.base, [p[4] for p in part], [p[5] for p in part], cuda_stream=handle)
            return _codec(device_id, handle).decode(srcs, out=outs)

        try:
            decoded = decode(items)
        except Exception:  # nvCOMP fails the whole batch: find the sample at fault
            samples = sorted({item[0] for item in items})
            for i in samples:
                try:
                    decode([item for item in items if item[0] == i])
                except Exception as exc:
                    raise ValueError(
                        f"{self.op.qualname}: sample {i}: the LZ4 data cannot be inflated ({exc})"
                    ) from exc
            raise
        if check_size:
            for item, written in zip(items, decoded.buffer_sizes, strict=True):
                if written != item[5]:
                    raise ValueError(
                        f"{self.op.qualname}: sample {item[0]}, chunk {item[1]} inflates to {written} bytes, the "
                        f"output chunk holds {item[5]}"
                    )


def _device_source(data, batch_size, device_id, stream):
    """``(buffer, offsets, sizes)``: the compressed bytes on the GPU as one 1-D uint8
    DeviceArray, and each sample's byte offset in it and size. Host bytes are
    uploaded in one copy, GPU bytes taken where they are."""
    device_array = cuda()[0]
    count = 1 if batch_size < 0 else batch_size
    if isinstance(data, device_array.DeviceBatch):
        return data.data, list(data.offsets), [math.prod(s) for s in data.shapes]
    if isinstance(data, device_array.DeviceArray):
        # A Tensor given in batch mode is every sample.
        return data.view(0, (data.nbytes,), np.uint8), [0] * count, [data.nbytes] * count
    host = data if isinstance(data, list) else [data] * count
    host = [np.ascontiguousarray(s).reshape(-1) for s in host]
    uploaded = device_array.DeviceBatch.from_host(host, np.uint8, device_id)
    return uploaded.data, list(uploaded.offsets), [s.size for s in host]
