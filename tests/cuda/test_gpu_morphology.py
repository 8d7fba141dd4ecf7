"""GPU experimental.median_blur, dilate and erode (ndd/_ops/gpu_morphology.py,
kernels/morphology.cu), each compared with its CPU twin on the kernels built for the
CPU and on a real GPU (``any_gpu``).

Every comparison is exact, to the bit: the operators select values, and the GPU takes
the CPU's algorithm wherever the choice shows (which NaN comes out, the sign of a
zero), so the float samples are full of NaNs of both signs and zeros of both signs.
What is launched is checked on the recording FakeDriver (``fake_with_kernels``).
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import NUMERIC_TYPES, assert_same  # noqa: E402

import ndd  # noqa: E402

# The CPU pads an empty sample through a remainder by its extent of 0 (its result is
# right, and empty); numpy warns of it.
pytestmark = pytest.mark.filterwarnings("ignore:divide by zero encountered in remainder:RuntimeWarning")

# Every numeric type the CPU takes; median_blur takes no float16.
TYPES = NUMERIC_TYPES
MEDIAN_TYPES = [t for t in TYPES if t != np.float16]
# Shapes of a ragged HWC batch, one of them without pixels.
RAGGED = [(9, 12, 3), (14, 7, 3), (0, 5, 3), (5, 16, 3)]
BORDERS = ["constant", "replicate", "reflect", "reflect_101", "wrap"]
LAYOUTS = [
    ("HW", (11, 13)),
    ("HWC", (10, 12, 2)),
    ("CHW", (3, 9, 14)),
    ("FHWC", (3, 8, 9, 2)),
    ("FCHW", (2, 3, 7, 10)),
]
# Float values where the algorithm shows: NaNs and zeros of both signs, ties, infinities.
_FLOAT_CHOICES = [np.nan, -np.nan, 0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, 7.25, 0.0, -0.0]


def _values(dtype, shape, seed=0):
    """Integers spanning the type; floats mostly from a few values (NaNs, signed zeros,
    infinities), the rest spread widely."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values = (rng.standard_normal(shape) * 300).astype(dtype)
    chosen = rng.random(shape) < 0.6
    values[chosen] = np.asarray(_FLOAT_CHOICES, dtype)[rng.integers(0, len(_FLOAT_CHOICES), shape)][chosen]
    return values


def _check(op, values, layout, **kwargs):
    """``op`` on a GPU Tensor equals ``op`` on the CPU Tensor, bit for bit."""
    assert_same(
        op(ndd.tensor(values, layout=layout).gpu(), **kwargs),
        op(ndd.tensor(values, layout=layout), **kwargs),
        bits=True,
    )


def _check_batch(op, samples, layout, **kwargs):
    """``op`` on a GPU Batch equals ``op`` on the CPU Batch, bit for bit."""
    assert_same(
        op(ndd.batch(samples, layout=layout).gpu(), **kwargs),
        op(ndd.batch(samples, layout=layout), **kwargs),
        bits=True,
    )


def _ragged(dtype):
    return [_values(dtype, s, i) for i, s in enumerate(RAGGED)]


def _int_lists(*values):
    """A Batch of int32 lists: a per-sample argument."""
    return ndd.batch([np.array(v, np.int32) for v in values])


MORPHOLOGY = [ndd.experimental.dilate, ndd.experimental.erode]


# -- dilate, erode -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("op", MORPHOLOGY, ids=["dilate", "erode"])
def test_morphology_matches_the_cpu_for_every_type_and_border(op, dtype, any_gpu):
    samples = _ragged(dtype)
    for border in BORDERS:
        _check_batch(op, samples, "HWC", border_mode=border)
        # Without the empty sample: the CPU fails to pad it with some of these borders.
        _check_batch(
            op, samples[:2] + samples[3:], "HWC", border_mode=border, mask_size=[4, 2], anchor=[3, 0]
        )


@pytest.mark.parametrize("border", BORDERS)
@pytest.mark.parametrize("op", MORPHOLOGY, ids=["dilate", "erode"])
def test_morphology_matches_the_cpu_for_masks_anchors_and_iterations(op, border, any_gpu):
    for dtype in (np.uint8, np.float32):
        values = _values(dtype, (13, 17, 3), 1)
        for mask, anchor, iterations in (
            ([1, 1], [-1], 1),
            ([5, 3], [0, 2], 1),
            ([2, 6], [1, -1], 1),
            ([3], [-1], 2),
            ([3, 4], [2, 0], 3),
            ([1, 5], [0, 1], 4),
        ):
            _check(
                op, values, "HWC", mask_size=mask, anchor=anchor, iterations=iterations, border_mode=border
            )


@pytest.mark.parametrize("layout, shape", LAYOUTS)
@pytest.mark.parametrize("op", MORPHOLOGY, ids=["dilate", "erode"])
def test_morphology_matches_the_cpu_for_every_layout(op, layout, shape, any_gpu):
    for dtype in (np.int16, np.float64):
        _check(op, _values(dtype, shape, 2), layout, mask_size=[3, 5], border_mode="reflect_101")


@pytest.mark.parametrize("border", BORDERS)
def test_morphology_masks_larger_than_the_image_read_the_border_again(border, any_gpu):
    for dtype in (np.uint16, np.float16):
        _check(
            ndd.experimental.dilate, _values(dtype, (3, 2, 2), 3), "HWC", mask_size=[7, 9], border_mode=border
        )
        _check(ndd.experimental.erode, _values(dtype, (1, 1), 4), "HW", mask_size=5, iterations=2)


@pytest.mark.parametrize("op", MORPHOLOGY, ids=["dilate", "erode"])
def test_morphology_takes_per_sample_masks_and_anchors(op, any_gpu):
    samples = _ragged(np.float32)
    mask = _int_lists([3, 3], [5, 1], [2, 2], [1, 7])
    anchor = _int_lists([-1, -1], [4, 0], [0, 0], [0, 6])
    _check_batch(op, samples, "HWC", mask_size=mask, anchor=anchor, border_mode="wrap")
    _check_batch(op, samples, "HWC", mask_size=mask, iterations=2)


def test_morphology_takes_per_frame_masks(any_gpu):
    sequence = _values(np.uint8, (3, 9, 10, 2), 5)
    mask = ndd.per_frame(ndd.tensor(np.array([[3, 3], [5, 1], [1, 4]], np.int32)))
    _check(ndd.experimental.dilate, sequence, "FHWC", mask_size=mask, border_mode="reflect")
    _check(ndd.experimental.erode, sequence, "FHWC", mask_size=mask)


# -- median_blur ---------------------------------------------------------------------------------

# Windows of each kernel path: Paeth's 3x3 network, the networks in registers (up to 25
# values), and beyond them the bisection (integers) or, for floats, the CPU's network on
# wires in shared memory (7x7, 15x15) or in the scratch buffer (31x33), and its
# selection past 1024 values (33x33).
SMALL_WINDOWS = [[3, 3], [1, 1], [3, 1], [1, 9], [5, 5], [7, 3], [3, 5]]
LARGE_WINDOWS = [[7, 7], [15, 15], [9, 11], [31, 33], [33, 33]]


@pytest.mark.parametrize("dtype", MEDIAN_TYPES)
def test_median_blur_matches_the_cpu_for_every_type_and_small_window(dtype, any_gpu):
    samples = _ragged(dtype)
    for window in SMALL_WINDOWS:
        _check_batch(ndd.experimental.median_blur, samples, "HWC", window_size=window)


@pytest.mark.parametrize("dtype", MEDIAN_TYPES)
def test_median_blur_matches_the_cpu_for_every_type_and_large_window(dtype, any_gpu):
    values = _values(dtype, (9, 40, 1), 6)
    for window in LARGE_WINDOWS:
        _check(ndd.experimental.median_blur, values, "HWC", window_size=window)


@pytest.mark.parametrize("layout, shape", LAYOUTS)
def test_median_blur_matches_the_cpu_for_every_layout(layout, shape, any_gpu):
    for dtype in (np.uint8, np.float32):
        for window in ([3, 3], [5, 5], [7, 5]):
            _check(ndd.experimental.median_blur, _values(dtype, shape, 7), layout, window_size=window)


def test_median_blur_windows_larger_than_the_image_repeat_the_edges(any_gpu):
    for dtype in (np.int32, np.float64):
        _check(ndd.experimental.median_blur, _values(dtype, (2, 3, 2), 8), "HWC", window_size=[5, 7])
        _check(ndd.experimental.median_blur, _values(dtype, (1, 1), 9), "HW", window_size=[9, 9])


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64])
def test_median_blur_takes_per_sample_windows(dtype, any_gpu):
    # The samples take different paths in one launch: registers, the bisection or the
    # network on wires, and the selection.
    samples = _ragged(dtype)
    window = _int_lists([3, 3], [7, 9], [5], [33, 33])
    _check_batch(ndd.experimental.median_blur, samples, "HWC", window_size=window)
    _check_batch(
        ndd.experimental.median_blur, samples, "HWC", window_size=_int_lists([1, 5], [5, 5], [3], [7])
    )


# -- what is launched, what is refused ------------------------------------------------------------


def _launched(fake, call):
    fake.launches.clear()
    call().evaluate()
    return [(launch.function, launch.grid[1], launch.shared_bytes) for launch in fake.launches]


def _zeros_batch(dtype):
    return ndd.batch([np.zeros(s, dtype) for s in RAGGED], layout="HWC").gpu()


def test_each_pass_of_a_ragged_batch_is_one_launch(fake_with_kernels):
    # One descriptor row per sample with pixels; rows then columns for dilate and erode.
    x = _zeros_batch(np.uint8)
    assert (
        _launched(fake_with_kernels, lambda: ndd.experimental.dilate(x, iterations=3))
        == [("dilate_u8", 3, 0)] * 2
    )
    assert (
        _launched(fake_with_kernels, lambda: ndd.experimental.erode(x, mask_size=[1, 1]))
        == [("erode_u8", 3, 0)] * 2
    )
    assert _launched(fake_with_kernels, lambda: ndd.experimental.median_blur(x, window_size=9)) == [
        ("median_u8", 3, 0)
    ]


def test_median_wires_take_shared_memory_when_they_fit(fake_with_kernels):
    x = _zeros_batch(np.float32)

    def median(window):
        (launch,) = [
            launch
            for launch in _launched(
                fake_with_kernels, lambda: ndd.experimental.median_blur(x, window_size=window)
            )
        ]
        return launch

    # In registers: no wires.
    assert median([5, 5]) == ("median_f32", 3, 0)
    # 49 float32 wires per thread in shared memory; 1089 do not fit beside 31 other threads.
    assert median([7, 7])[2] > 0
    assert median([33, 33])[2] == 0


def test_an_input_in_host_memory_is_refused_on_the_gpu(fake_with_kernels):
    x = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")
    for op in (ndd.experimental.median_blur, ndd.experimental.dilate, ndd.experimental.erode):
        with pytest.raises(NotImplementedError, match=f"{op.__name__} on the GPU: an input in host memory"):
            op(x, device="gpu")
