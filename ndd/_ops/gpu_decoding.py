"""GPU decoding of the image decoders (``decoders.image``, ``image_crop``,
``image_random_crop``) through nvImageCodec.

A call decodes the whole batch with one ``Decoder.decode``: nvJPEG's hardware and
CUDA decoders where the GPU has them, nvImageCodec's CPU codecs (libjpeg-turbo,
libpng, libtiff, OpenJPEG, ...) for what the GPU cannot decode. It decodes on a
stream of the decoder's own, since nvImageCodec waits on the host for the stream
it is given; the context's stream then waits for the decode on the GPU.

nvImageCodec hands back one image per sample in memory it allocates (decoding into
a caller's buffer is not in its Python API), and a GPU batch is one allocation that
every kernel reads through per-sample offsets, so each decoded image is copied
once into the batch's allocation from ndd's pool: images in device memory in one
launch for the batch (``gpu_layout.copy_windows``), images a CPU codec left in
host memory one by one; the crop decoders copy only their window.

The decoded images stay alive until the copies that read them are done (an event
per call, checked at the next calls), since nvImageCodec may free their memory at
once when they are collected. Then they are the decoder's spares: its next batch
decodes into them, and nvImageCodec reuses their buffers.

Each result is mapped back to its sample: a sample the codecs cannot decode (None
in nvImageCodec's answer) becomes an ``ImageDecodeError`` naming the operator, the
sample and its file, as on the CPU, and the other samples are kept in the error's
``decoded``.

Nothing here touches the driver or nvImageCodec at import: both are imported on
first use.
"""

import collections
import threading

import numpy as np

from ..types import DALIImageType
from .gpu_layout import copy_windows
from .gpu_segments import SampleOutputs, args_per_sample, cuda, unsupported
from .image_codec import ImageDecodeError

__all__ = ["GpuImageDecoder", "make_decoder"]

# The output types decoded on the GPU, as nvImageCodec's (color spec, sample format) names.
# GRAY is the JPEG's luma plane, as the CPU decodes it (and the reference).
_FORMATS = {
    DALIImageType.RGB: ("SRGB", "I_RGB"),
    DALIImageType.BGR: ("SRGB", "I_BGR"),
    DALIImageType.GRAY: ("GRAY", "I_Y"),
    DALIImageType.ANY_DATA: ("UNCHANGED", "I_UNCHANGED"),
}

_decoders = {}
_decoders_lock = threading.Lock()
# (event, decoder, decoded images, other objects) of the calls whose copies may
# still be reading the images.
_in_flight = collections.deque()
# Per decoder (the object): images it decoded whose copies are done, for its next
# batch to decode into (nvImageCodec reuses their buffers instead of allocating new
# ones). A decoder keeps at most one batch's worth: as many as the last batch whose
# images it got back.
_spare = {}
# Per decoder: the stream it decodes on (its own, so that a call does not wait for
# the work queued on the caller's stream before it; see GpuImageDecoder.__call__).
_decode_streams = {}


def nvimgcodec():
    """nvImageCodec's Python module, or None when it is not installed."""
    try:
        from nvidia import nvimgcodec as module
    except ImportError:
        return None
    return module


def make_decoder(device_id):
    """A decoder on ``device_id`` with every backend nvImageCodec has (GPU ones first,
    the CPU codecs as the fallback)."""
    return nvimgcodec().Decoder(device_id=device_id)


def _decoder(device_id):
    """One decoder per device and thread (a decoder runs one batch at a time)."""
    key = (device_id, threading.get_ident())
    with _decoders_lock:
        decoder = _decoders.get(key)
        if decoder is None:
            decoder = _decoders[key] = make_decoder(device_id)
        return decoder


def _release_finished():
    """Hand the decoded images of the calls whose copies are done to their decoder's
    spares (dropping the rest of what those calls kept)."""
    with _decoders_lock:
        while _in_flight and _in_flight[0][0].query():
            _, decoder, images, _ = _in_flight.popleft()
            if decoder is None:
                continue
            spare = _spare.setdefault(decoder, [])
            spare.extend(images[: max(0, len(images) - len(spare))])


def _decode_stream(decoder, device_id):
    """The stream ``decoder`` decodes on (made on its first use)."""
    from .._cuda import streams

    with _decoders_lock:
        owner = _decode_streams.get(decoder)
        if owner is None:
            owner = _decode_streams[decoder] = streams.create(device_id)
        return owner


def _take_spare(decoder, count):
    """``count`` spare images of ``decoder`` to decode into, or None (too few)."""
    with _decoders_lock:
        spare = _spare.get(decoder)
        if count == 0 or not spare or len(spare) < count:
            return None
        taken = spare[-count:]
        del spare[-count:]
        return taken


def _layout_of(image, device_kind):
    """(pointer, row pitch in bytes, whether it is device memory, shape) of a decoded
    image (``device_kind``: nvImageCodec's ImageBufferKind.STRIDED_DEVICE)."""
    on_device = image.buffer_kind == device_kind
    interface = image.__cuda_array_interface__ if on_device else image.__array_interface__
    shape = tuple(interface["shape"])
    if len(shape) == 2:
        shape = shape + (1,)
    strides = interface.get("strides")
    pitch = strides[0] if strides else shape[1] * shape[2]
    return int(interface["data"][0]), int(pitch), on_device, shape


class GpuImageDecoder:
    """The GPU kernel of an image decoder. ``window(qualname, (H, W), data, args,
    index)`` gives the (y, x, h, w) window of the oriented image to keep (None: the
    whole image), as on the CPU; ``describe(args, index)`` names a sample in errors."""

    def __init__(self, op, window, describe, window_args=None):
        self.op = op
        self.window = window
        self.describe = describe
        # window_args(inputs, sample_args): the per-sample arguments with the values of
        # the operator's other inputs (image_slice's anchor and shape) that the window reads.
        self.window_args = window_args

    def check(self, ins, args):
        """Prepare phase: encoded bytes in host memory, and an output the GPU path gives."""
        if ins[0]._device.device_type == "gpu":
            raise unsupported(self.op, "encoded images in GPU memory; give the encoded bytes in host memory")
        for name, x in zip(self.op.input_names[1:], ins[1:], strict=False):
            if x is not None and x._device.device_type == "gpu":
                raise unsupported(self.op, f"input '{name}' on the GPU (its values are needed on the host)")
        if args["output_type"] not in _FORMATS:
            names = ", ".join(t.name for t in _FORMATS)
            raise unsupported(self.op, f"'output_type' {args['output_type'].name} (GPU: {names})")
        if args["dtype"].numpy != np.uint8:
            raise unsupported(self.op, f"'dtype' {args['dtype']} (GPU: uint8)")
        if nvimgcodec() is None:
            raise unsupported(
                self.op, "nvImageCodec is not installed (pip install 'ndd[gpu]' brings nvidia-nvimgcodec)"
            )

    def __call__(self, inputs, args, batch_size, ctx):
        codec = nvimgcodec()
        stream, device_id = ctx.cuda_stream, ctx.device_id
        data = inputs[0]
        count = 1 if batch_size < 0 else batch_size
        samples = data if isinstance(data, list) else [data] * count
        sample_args = args_per_sample(args, batch_size)
        if self.window_args is not None:
            sample_args = self.window_args(inputs, sample_args)
        color_spec, sample_format = _FORMATS[args["output_type"]]
        params = codec.DecodeParams(
            apply_exif_orientation=bool(args["adjust_orientation"]),
            color_spec=getattr(codec.ColorSpec, color_spec),
            sample_format=getattr(codec.SampleFormat, sample_format),
        )
        _release_finished()
        # A code stream reads the array it is made from (no copy), so the arrays are kept
        # with the decoded images until the copies out of those are done.
        streams, errors, encoded = [], {}, []
        code_stream = codec.CodeStream
        for i, sample in enumerate(samples):
            try:
                if not (
                    type(sample) is np.ndarray
                    and sample.dtype == np.uint8
                    and sample.ndim == 1
                    and sample.flags.c_contiguous
                ):
                    sample = np.ascontiguousarray(sample).reshape(-1).view(np.uint8)
                encoded.append(sample)
                streams.append(code_stream(sample))
            except Exception as exc:  # an unreadable header, reported per sample
                errors[i] = exc
                streams.append(None)
        readable = [i for i, s in enumerate(streams) if s is not None]
        images = [None] * count
        decoder = _decoder(device_id) if readable else None
        if readable:
            # nvImageCodec waits on the host for the stream it is given. The decoder's
            # own stream has nothing of the caller's queued on it, so the host goes on
            # while the GPU finishes the previous batch; the caller's stream then waits
            # (on the GPU) for the decoded images. The images a batch decodes into are
            # new, or spares whose copies were done.
            from .._cuda.streams import order_after

            decoding = _decode_stream(decoder, device_id)
            decoded = decoder.decode(
                [streams[i] for i in readable],
                images=_take_spare(decoder, len(readable)),
                params=params,
                cuda_stream=decoding.handle,
            )
            order_after(stream.handle, decoding.handle, device_id)
            for i, image in zip(readable, decoded, strict=True):
                images[i] = image
        index = (lambda i: None) if batch_size < 0 else (lambda i: i)
        # Each decoded image's layout, read once (its array interface is a new dict each time).
        device_kind = codec.ImageBufferKind.STRIDED_DEVICE
        layouts = [None if image is None else _layout_of(image, device_kind) for image in images]
        for i, image in enumerate(images):
            if image is None:
                errors.setdefault(i, RuntimeError("the codecs cannot decode it"))
        if self.window is None:
            windows = [None if layout is None else (0, 0, *layout[3][:2]) for layout in layouts]
        else:
            windows = [None] * count
            for i, layout in enumerate(layouts):
                if layout is None:
                    continue
                shape = layout[3]
                try:
                    windows[i] = self.window(
                        self.op.qualname, shape[:2], samples[i], sample_args[i], index(i)
                    )
                except Exception as exc:  # a window that does not fit, per sample
                    errors[i] = exc
                if windows[i] is None and i not in errors:
                    windows[i] = (0, 0, shape[0], shape[1])
        if errors:
            self._raise(
                errors, decoder, images, encoded, layouts, windows, sample_args, batch_size, device_id, stream
            )
        shapes = [(w[2], w[3], layout[3][2]) for layout, w in zip(layouts, windows, strict=True)]
        out = SampleOutputs(shapes, np.dtype(np.uint8), batch_size >= 0, device_id, stream)
        if all(layout[2] for layout in layouts):
            # Decoded into device memory (a GPU codec): every window in one launch.
            channels = [layout[3][2] for layout in layouts]
            copy_windows(
                [
                    layout[0] + w[0] * layout[1] + w[1] * c
                    for layout, w, c in zip(layouts, windows, channels, strict=True)
                ],
                [layout[1] for layout in layouts],
                [w[2] for w in windows],
                [w[3] * c for w, c in zip(windows, channels, strict=True)],
                [out.base.ptr + offset for offset in out.offsets],
                stream,
                device_id,
            )
        else:
            for layout, window, shape, offset in zip(layouts, windows, shapes, out.offsets, strict=True):
                _copy_window(layout, window, shape, out.base.ptr + offset, stream)
        _keep_until_copied(decoder, images, encoded, device_id, stream)
        return [out.result]

    def _raise(
        self, errors, decoder, images, encoded, layouts, windows, sample_args, batch_size, device_id, stream
    ):
        """The CPU's error for the failed samples, with the others decoded (in their
        own GPU arrays) in ``decoded``; ``images`` and ``encoded`` stay alive until
        the copies are done."""
        failed = sorted(errors)
        decoded = []
        for i, (layout, window) in enumerate(zip(layouts, windows, strict=True)):
            if i in errors:
                decoded.append(None)
                continue
            shape = (window[2], window[3], layout[3][2])
            out = SampleOutputs([shape], np.dtype(np.uint8), False, device_id, stream)
            _copy_window(layout, window, shape, out.base.ptr, stream)
            decoded.append(out.result)
        _keep_until_copied(decoder, images, encoded, device_id, stream)
        first = failed[0]
        where = self.describe(sample_args[first], None if batch_size < 0 else first)
        raise ImageDecodeError.for_batch(
            f"{self.op.qualname}: cannot decode{where}: {errors[first]}",
            decoded=decoded if batch_size >= 0 else None,
            failed=failed if batch_size >= 0 else (),
        ) from errors[first]


def _copy_window(layout, window, shape, dst, stream):
    """Queue the copy of the (y, x, h, w) ``window`` of a decoded image (its
    ``_layout_of``) into the contiguous ``shape`` at device address ``dst``."""
    _, _, _, driver, context = cuda()
    api = context.state().api
    ptr, pitch, on_device, full_shape = layout
    channels = full_shape[2]
    y, x, h, w = window
    if h == 0 or w == 0:
        return
    copy = api.CUDA_MEMCPY2D()
    copy.srcXInBytes = x * channels
    copy.srcY = y
    copy.srcPitch = pitch
    if on_device:
        copy.srcMemoryType = api.CUmemorytype.CU_MEMORYTYPE_DEVICE
        copy.srcDevice = ptr
    else:
        copy.srcMemoryType = api.CUmemorytype.CU_MEMORYTYPE_HOST
        copy.srcHost = ptr
    copy.dstMemoryType = api.CUmemorytype.CU_MEMORYTYPE_DEVICE
    copy.dstDevice = dst
    copy.dstXInBytes = 0
    copy.dstY = 0
    copy.dstPitch = w * channels
    copy.WidthInBytes = w * channels
    copy.Height = h
    driver.check(api.cuMemcpy2DAsync(copy, int(stream.handle)), f"copying a decoded {shape} image")


def _keep_until_copied(decoder, images, encoded, device_id, stream):
    """Keep the ``images`` that ``decoder`` decoded (its spares afterwards) and the
    ``encoded`` arrays the code streams read until the stream has copied them."""
    from .._cuda.streams import Event

    event = Event(device_id).record(stream.handle)
    _in_flight.append((event, decoder, [i for i in images if i is not None], encoded))
