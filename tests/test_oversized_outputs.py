"""Sizes too large for the memory are refused by name before anything is allocated:
a mistyped shape, window or tile count must not have the process killed."""

import numpy as np
import pytest

import ndd
from ndd._memory import physical_memory_bytes

HUGE = [10**6, 10**6]
OVERSIZED = r"more than half of this machine's memory"


def _evaluated(result):
    for r in result if isinstance(result, tuple) else (result,):
        r.evaluate()


@pytest.mark.parametrize(
    "call, op",
    [
        (lambda: ndd.zeros(shape=HUGE), "ndd.zeros"),
        (lambda: ndd.full(np.float32(1), shape=HUGE), "ndd.full"),
        (lambda: ndd.random.uniform(shape=HUGE), "ndd.random.uniform"),
        (lambda: ndd.random.normal(shape=[2**62, 2**62]), "ndd.random.normal"),
        (lambda: ndd.pad(np.zeros((4, 4), np.uint8), shape=HUGE), "ndd.pad"),
        (lambda: ndd.crop(np.zeros((4, 4, 3), np.uint8), crop=HUGE, out_of_bounds_policy="pad"), "ndd.crop"),
        (
            lambda: ndd.warp_affine(np.zeros((4, 4, 3), np.uint8), matrix=[1, 0, 0, 0, 1, 0], size=HUGE),
            "ndd.warp_affine",
        ),
        (lambda: ndd.one_hot(np.int32(3), num_classes=10**12), "ndd.one_hot"),
    ],
)
def test_an_output_too_large_is_refused_at_the_call(call, op):
    # Refused in the prepare phase: the call itself raises, nothing is scheduled.
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value).startswith(f"{op}: the output would be ")
    assert OVERSIZED in str(info.value)


def test_the_refusal_states_the_shape_type_and_size():
    with pytest.raises(
        ValueError, match=r"^ndd\.zeros: the output would be \(1000000, 1000000\) i32: 3\.64 TiB, "
    ):
        ndd.zeros(shape=HUGE)


def test_a_batch_counts_all_its_samples():
    # Each sample fits; the batch does not.
    half = physical_memory_bytes() // 2
    per_sample = half // 4 + 1
    with pytest.raises(ValueError, match=r"^ndd\.zeros: the output would be 4 samples of \(\d+,\) u8: "):
        ndd.zeros(shape=[per_sample], dtype=ndd.uint8, batch_size=4)


def test_a_ragged_batch_names_its_largest_sample():
    half = physical_memory_bytes() // 2
    shapes = ndd.Batch([np.array([2], np.int64), np.array([half + 1], np.int64)])
    with pytest.raises(ValueError, match=rf"the largest \({half + 1},\)"):
        ndd.zeros(shape=shapes, dtype=ndd.uint8)


def test_a_broadcast_too_large_is_refused():
    a = ndd.Tensor(np.zeros((10**6, 1), np.float32))
    b = ndd.Tensor(np.zeros((1, 10**6), np.float32))
    with pytest.raises(ValueError, match=r"the output would be \(1000000, 1000000\) f32: 3\.64 TiB"):
        a + b


def test_an_output_no_larger_than_its_inputs_is_not_refused():
    # Two inputs of 0.3 of the memory each joined: more than half of it, but data the
    # inputs already hold (nothing runs: deferred, never evaluated).
    part = physical_memory_bytes() * 3 // 10
    with ndd.EvalMode.deferred:
        a = ndd.zeros(shape=[part], dtype=ndd.uint8)
        b = ndd.zeros(shape=[part], dtype=ndd.uint8)
        joined = ndd.cat(a, b)
        assert joined.shape == (2 * part,)
        # Padded to the same size: more than the input holds.
        with pytest.raises(ValueError, match=OVERSIZED):
            ndd.pad(a, shape=[2 * part])


def test_outputs_that_fit_are_made():
    out = ndd.zeros(shape=[1000, 1000], dtype=ndd.uint8, batch_size=3)
    assert [np.asarray(s).shape for s in out] == [(1000, 1000)] * 3


def test_spectrogram_refuses_an_nfft_whose_transform_does_not_fit():
    with pytest.raises(ValueError, match=r"^ndd\.spectrogram: 'nfft' 1000000000 would need 30 GiB"):
        ndd.spectrogram(np.zeros(100, np.float32), nfft=10**9, window_length=10**9)


def test_spectrogram_of_long_transforms_is_computed_in_smaller_chunks(monkeypatch):
    from ndd._ops import spectral

    signal = np.random.default_rng(5).standard_normal(4000).astype(np.float32)
    whole = np.asarray(ndd.spectrogram(signal, nfft=256, window_length=200, window_step=50))
    # 256-point transforms, two windows per chunk (of 28 windows) instead of all of them.
    monkeypatch.setattr(spectral, "_CHUNK_VALUES", 600)
    chunked = np.asarray(ndd.spectrogram(signal, nfft=256, window_length=200, window_step=50))
    np.testing.assert_array_equal(chunked, whole)


def test_multi_paste_refuses_an_output_size_too_large():
    image = ndd.Batch([np.zeros((4, 4, 3), np.uint8)])
    with pytest.raises(
        ValueError, match=r"^ndd\.multi_paste: 'output_size' \[1000000, 1000000\] with 3 channels"
    ):
        _evaluated(ndd.multi_paste(image, in_ids=[0], output_size=HUGE))


def test_clahe_refuses_more_tiles_than_the_memory_holds():
    with pytest.raises(
        ValueError, match=r"^ndd\.clahe: 'tiles_x' 100000 by 'tiles_y' 100000 is 10000000000 tiles"
    ):
        ndd.clahe(np.zeros((8, 8, 3), np.uint8), tiles_x=10**5, tiles_y=10**5, clip_limit=1)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda x: ndd.experimental.median_blur(x, window_size=10**5 + 1),
            r"'window_size' \[100001\] would pad",
        ),
        (
            lambda x: ndd.experimental.dilate(x, mask_size=[10**9, 10**9]),
            r"'mask_size' \[1000000000, 1000000000\]",
        ),
        (lambda x: ndd.experimental.erode(x, mask_size=10**6), r"'mask_size' \[1000000\] would pad"),
    ],
)
def test_windows_whose_padding_does_not_fit_are_refused(call, match):
    image = ndd.Tensor(np.zeros((10, 10, 3), np.uint8), layout="HWC")
    with pytest.raises(ValueError, match=match + ".*" + OVERSIZED):
        _evaluated(call(image))


def test_pad_refuses_an_alignment_too_large():
    with pytest.raises(
        ValueError, match=r"^ndd\.pad: the padded sample would be \(1000000000, 1000000000, 3\)"
    ):
        _evaluated(ndd.pad(np.zeros((10, 10, 3), np.uint8), align=[10**9, 10**9, 1]))


@pytest.mark.parametrize("dtype, itemsize", [(None, 1), (ndd.float32, 4)])
def test_multi_paste_counts_its_canvas_in_the_output_type(monkeypatch, dtype, itemsize):
    # A uint8 canvas is counted as uint8: eight times float64's size would refuse
    # canvases between a sixteenth and half of the memory that fit.
    from ndd._ops import compose

    asked = []
    monkeypatch.setattr(compose, "exceeds_half_of_memory", lambda nbytes: asked.append(nbytes) or False)
    image = ndd.Batch([np.zeros((4, 4, 3), np.uint8)])
    _evaluated(ndd.multi_paste(image, in_ids=[0], output_size=[10, 20], dtype=dtype))
    assert asked == [10 * 20 * 3 * itemsize]
