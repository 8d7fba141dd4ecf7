"""Arguments given frame by frame (ndd.per_frame), against the reference's results
of the same calls (tests/golden/per_frame_cases.py, make_per_frame_goldens.py)."""

import json
import os
import sys

import numpy as np
import pytest

import ndd

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden")
sys.path.insert(0, GOLDEN)
from per_frame_cases import CASES, ERRORS, VIDEO  # noqa: E402

with open(os.path.join(GOLDEN, "per_frame_cases.json"), encoding="utf-8") as _f:
    EXPECTED = json.load(_f)
VALUES = np.load(os.path.join(GOLDEN, "per_frame_values.npz"))
# Results computed in float32 in another order than the reference's: one step of an
# integer output, or float32 precision.
_TOLERANCE = {
    "warp_affine": 1,
    "coord_transform_mt": 1e-6,
    "coord_transform_m_t": 1e-6,
    "hsv": 1,
    "color_twist": 1,
    "warp_perspective": 1,
    "laplacian_scale": 1e-4,
    "laplacian_window": 1e-3,
}


def _arrays(result):
    if isinstance(result, ndd.Batch):
        return [np.asarray(sample) for sample in result]
    return [np.asarray(result)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_reference(name):
    result = CASES[name](ndd)
    arrays = _arrays(result)
    expected = EXPECTED["results"][name]
    assert len(arrays) == expected["samples"]
    if expected["layout"]:
        assert result.layout == expected["layout"]
    for i, array in enumerate(arrays):
        reference = VALUES[f"{name}/{i}"]
        assert array.shape == reference.shape
        assert array.dtype == reference.dtype
        np.testing.assert_allclose(
            array.astype(np.float64), reference.astype(np.float64), rtol=0, atol=_TOLERANCE.get(name, 0)
        )


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_reference_errors_are_errors_naming_the_operator(name):
    call, word = ERRORS[name]
    assert EXPECTED["errors"][name] is not None
    with pytest.raises(ValueError, match=word) as info:
        call(ndd)
    assert "ndd." in str(info.value)


def test_each_frame_is_the_operator_on_that_frame():
    sigmas = [0.8, 1.5, 3.0]
    video = ndd.as_tensor(VIDEO, layout="FHWC")
    out = np.asarray(ndd.gaussian_blur(video, sigma=ndd.per_frame(ndd.as_tensor(np.float32(sigmas)))))
    for f, sigma in enumerate(sigmas):
        frame = ndd.gaussian_blur(ndd.as_tensor(VIDEO[f], layout="HWC"), sigma=sigma)
        np.testing.assert_array_equal(out[f], np.asarray(frame))


def test_batches_of_sequences_take_per_sample_per_frame_values():
    videos = ndd.batch([VIDEO, VIDEO[:2]], layout="FHWC")
    gains = ndd.batch([np.float32([0.5, 1.0, 2.0]), np.float32([2.0])], layout="F")
    out = ndd.brightness(videos, brightness=gains)
    assert out.layout == "FHWC"
    first, second = (np.asarray(s) for s in out)
    for f, gain in enumerate([0.5, 1.0, 2.0]):
        np.testing.assert_array_equal(
            first[f], np.asarray(ndd.brightness(ndd.as_tensor(VIDEO[f], layout="HWC"), brightness=gain))
        )
    np.testing.assert_array_equal(
        second, np.asarray(ndd.brightness(ndd.as_tensor(VIDEO[:2], layout="FHWC"), brightness=2.0))
    )


def test_an_unmarked_argument_is_one_value_for_the_whole_sequence():
    video = ndd.as_tensor(VIDEO, layout="FHWC")
    marked = ndd.rotate(video, angle=ndd.per_frame(ndd.as_tensor(np.float32([30.0]))))
    plain = ndd.rotate(video, angle=30.0)
    np.testing.assert_array_equal(np.asarray(marked), np.asarray(plain))


@pytest.mark.parametrize("mode", [ndd.EvalMode.deferred, ndd.EvalMode.eager, ndd.EvalMode.sync_cpu])
def test_every_eval_mode_gives_the_same_sequence(mode):
    hues = [0.0, 60.0, 120.0]
    expected = np.stack(
        [np.asarray(ndd.hue(ndd.as_tensor(VIDEO[f], layout="HWC"), hue=h)) for f, h in enumerate(hues)]
    )
    with mode:
        # Not computed yet in the lazy modes.
        video = ndd.flip(ndd.as_tensor(VIDEO, layout="FHWC"), horizontal=0)
        out = ndd.hue(video, hue=ndd.per_frame(ndd.as_tensor(np.float32(hues))))
        result = np.asarray(out)
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda seq, pf: ndd.crop(seq, crop=[4, 4], crop_pos_x=pf([0.1, 0.2, 0.3])), "crop_pos_x"),
        (lambda seq, pf: ndd.flip(seq, horizontal=pf([1, 0, 1])), "horizontal"),
        (lambda seq, pf: ndd.flip(ndd.batch([seq]), vertical=ndd.batch([pf([1, 0, 1])])), "vertical"),
    ],
)
def test_an_argument_without_per_frame_values_is_refused_at_the_call(call, name):
    """Marked values for an argument that takes one value per sample: an error at the
    call that says so, not a failure to read the values later."""
    seq = ndd.as_tensor(np.zeros((3, 8, 8, 3), np.uint8), layout="FHWC")

    def pf(values):
        return ndd.per_frame(np.asarray(values, np.float32 if isinstance(values[0], float) else np.int32))

    with pytest.raises(ValueError, match=rf"ndd\.\w+: '{name}' cannot be given per frame \(ndd.per_frame\)"):
        call(seq, pf)


def test_sequences_without_frames_are_refused_naming_the_operator():
    # The reference refuses them too ("Samples with no frames are not allowed"); the
    # unfolding failed with "Element type must be specified if the list is empty".
    empty = ndd.batch([np.zeros((0, 4, 4, 3), np.uint8)] * 2, layout="FHWC")
    with pytest.raises(ValueError, match=r"ndd\.rotate: the sequences have no frames"):
        ndd.rotate(empty, angle=ndd.per_frame(ndd.batch([np.zeros(0, np.float32)] * 2)))


def test_inconsistent_batch_sizes_name_the_operator():
    video = ndd.batch([np.zeros((2, 4, 4, 3), np.uint8)] * 2, layout="FHWC")
    angles = ndd.per_frame(ndd.batch([np.float32([10, 20])] * 3))
    with pytest.raises(ValueError, match=r"ndd\.rotate: Inconsistent batch size: 2 != 3"):
        ndd.rotate(video, angle=angles)


def test_one_frame_of_values_for_an_image_that_is_not_a_sequence_is_its_value():
    # As the reference: a per-frame argument with a single frame applies to a plain image.
    image = np.arange(37 * 53 * 3, dtype=np.uint8).reshape(37, 53, 3)
    x = ndd.as_tensor(image, layout="HWC")
    one = ndd.per_frame(ndd.tensor(np.array([10.0], np.float32)))
    np.testing.assert_array_equal(
        np.asarray(ndd.rotate(x, angle=one, fill_value=0)),
        np.asarray(ndd.rotate(x, angle=10.0, fill_value=0)),
    )
    images = ndd.batch([image, image[:20]], layout="HWC")
    per_sample = ndd.per_frame(ndd.batch([np.array([2.0], np.float32), np.array([0.5], np.float32)]))
    got = [np.asarray(s) for s in ndd.brightness(images, brightness=per_sample)]
    expected = [
        ndd.brightness(ndd.as_tensor(s, layout="HWC"), brightness=v)
        for s, v in ((image, 2.0), (image[:20], 0.5))
    ]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, np.asarray(e))
    with pytest.raises(ValueError, match="ndd.rotate: 'angle' is given per frame .* must be a sequence"):
        ndd.rotate(x, angle=ndd.per_frame(ndd.tensor(np.array([10.0, 20.0], np.float32))))
