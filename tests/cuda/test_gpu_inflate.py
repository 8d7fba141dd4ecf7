"""decoders.inflate on the GPU (ndd/_ops/gpu_inflate.py), compared with the CPU.

On a real GPU (``any_gpu`` "device") nvCOMP decodes. The host run has no GPU for
nvCOMP, so a stand-in codec with the part of nvCOMP's Python API that ndd uses
(``as_arrays`` over a buffer and an offset table, ``Codec.decode(srcs, out=...)``,
``buffer_sizes``) inflates each item with the CPU's LZ4 decoder, reading and writing
the FakeDriver's device memory through the driver's copies. It proves what ndd
itself does: the chunks, their offsets in the input and output allocations, the
cleared output, the size check and the per-sample errors.
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from lz4_blocks import lz4_compress  # noqa: E402

import ndd  # noqa: E402
from ndd._cuda import context  # noqa: E402
from ndd._ops import gpu_inflate  # noqa: E402
from ndd._ops.decoders import inflate_lz4_block  # noqa: E402


class _Items:
    """nvcomp.BatchArray's stand-in: (device address, size) of each item."""

    def __init__(self, buffer, offsets, sizes):
        base = buffer.__cuda_array_interface__["data"][0]
        self.items = [(base + o, s) for o, s in zip(offsets, sizes, strict=True)]
        self.buffer_sizes = list(sizes)


class _StandInCodec:
    def decode(self, srcs, out):
        api = context.state().api
        written = []
        for (src, src_size), (dst, dst_size) in zip(srcs.items, out.items, strict=True):
            packed = np.empty(src_size, np.uint8)
            api.cuMemcpyDtoHAsync(packed.ctypes.data, src, src_size, 0)
            target = np.zeros(dst_size, np.uint8)
            written.append(inflate_lz4_block(packed, target))  # raises on bad data, as nvCOMP fails
            api.cuMemcpyHtoDAsync(dst, target.ctypes.data, written[-1], 0)
        result = _Items.__new__(_Items)
        result.buffer_sizes = written
        return result


class _StandInModule:
    @staticmethod
    def as_arrays(buffer, offsets, sizes, cuda_stream=0):
        return _Items(buffer, offsets, sizes)


@pytest.fixture
def inflating(any_gpu, monkeypatch):
    """nvCOMP on a GPU; the stand-in codec on the host run."""
    if any_gpu == "host":
        monkeypatch.setattr(gpu_inflate, "nvcomp", lambda: _StandInModule)
        monkeypatch.setattr(gpu_inflate, "make_codec", lambda device_id, stream: _StandInCodec())
    elif gpu_inflate.nvcomp() is None:
        pytest.skip("nvCOMP is not installed")
    monkeypatch.setattr(gpu_inflate, "_codecs", {})
    return any_gpu


def _same(gpu, cpu):
    assert gpu.device.device_type == "gpu"
    assert gpu.dtype == cpu.dtype and gpu.layout == cpu.layout
    gpu_host = gpu.cpu()
    pairs = zip(gpu_host, cpu, strict=True) if isinstance(cpu, ndd.Batch) else [(gpu_host, cpu)]
    for g, c in pairs:
        np.testing.assert_array_equal(np.asarray(g), np.asarray(c))


def _values(seed, count, dtype=np.uint8):
    rng = np.random.default_rng(seed)
    return (np.repeat(rng.integers(0, 50, count), 5) % 11).astype(dtype)


@pytest.mark.parametrize("on_gpu", [False, True], ids=["host-bytes", "gpu-bytes"])
@pytest.mark.parametrize("dtype", [ndd.uint8, ndd.int16, ndd.float32])
def test_a_batch_inflates_as_on_the_cpu(dtype, on_gpu, inflating):
    arrays = [_values(k, n, dtype.numpy) for k, n in enumerate((24, 40, 8))]
    shapes = [(6, 20), (10, 20), (8, 5)]
    packed = ndd.batch([lz4_compress(a.tobytes()) for a in arrays])
    shape = ndd.batch([np.array(s, np.int32) for s in shapes])
    source = packed.gpu() if on_gpu else packed
    _same(
        ndd.decoders.inflate(source, shape=shape, dtype=dtype, layout="HW", device="gpu"),
        ndd.decoders.inflate(packed, shape=shape, dtype=dtype, layout="HW"),
    )


def test_chunks_become_a_sequence_as_on_the_cpu(inflating):
    frames = [np.full((4, 5), k, np.uint8) + np.arange(5, dtype=np.uint8) for k in range(3)]
    packed = [lz4_compress(f.tobytes()) for f in frames]
    sample = ndd.tensor(np.concatenate(packed))
    sizes = [p.size for p in packed]
    for kwargs in ({"chunk_sizes": sizes}, {"chunk_offsets": np.cumsum([0] + sizes[:-1]).tolist()}):
        gpu = ndd.decoders.inflate(sample.gpu(), shape=[4, 5], layout="HW", device="gpu", **kwargs)
        _same(gpu, ndd.decoders.inflate(sample, shape=[4, 5], layout="HW", **kwargs))
        assert gpu.layout == "FHW"


def test_a_short_chunk_leaves_zeros_and_fails_the_size_check(inflating):
    packed = ndd.tensor(lz4_compress(bytes(range(40))))
    _same(
        ndd.decoders.inflate(packed, shape=[50], device="gpu"),
        ndd.decoders.inflate(packed, shape=[50]),
    )
    with pytest.raises(ValueError, match="inflates to 40 bytes"):
        ndd.decoders.inflate(packed, shape=[50], check_output_size=True, device="gpu").evaluate()


def test_a_corrupt_sample_is_named(inflating):
    good = lz4_compress(bytes(range(40)))
    data = ndd.batch([good, good[:-3], good])
    with pytest.raises(ValueError, match="ndd.decoders.inflate: sample 1"):
        ndd.decoders.inflate(data, shape=[40], device="gpu").evaluate()


def test_chunks_outside_the_sample_are_refused_naming_it(inflating):
    data = ndd.batch([lz4_compress(bytes(range(40)))] * 2)
    with pytest.raises(ValueError, match="sample 0: the chunk of 99 bytes"):
        ndd.decoders.inflate(data, shape=[40], chunk_sizes=[99], device="gpu").evaluate()
