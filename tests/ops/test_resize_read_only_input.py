"""Resizing reads its input without writing it, so read-only input memory (a decoded window,
an image passed through unchanged, a read-only numpy array) resizes like any other."""

import numpy as np
import pytest

import ndd


@pytest.mark.parametrize("size", [[5, 7], [5, 12]], ids=["both-axes", "rows-only"])
def test_resize_of_read_only_data_equals_resize_of_a_writable_copy(size):
    data = np.arange(10 * 12 * 3, dtype=np.uint8).reshape(10, 12, 3)
    read_only = data.copy()
    read_only.flags.writeable = False
    with ndd.EvalMode.sync_cpu:
        expected = ndd.resize(ndd.tensor(data, layout="HWC"), size=size)
        got = ndd.resize(ndd.as_tensor(read_only, layout="HWC"), size=size)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def test_resize_after_a_flip_that_leaves_the_image_unchanged():
    images = ndd.batch([np.arange(8 * 6 * 3, dtype=np.uint8).reshape(8, 6, 3)] * 2, layout="HWC")
    unflipped = ndd.flip(images, horizontal=0)
    np.testing.assert_array_equal(
        np.asarray(ndd.resize(unflipped, size=[4, 3]).select(0)),
        np.asarray(ndd.resize(images, size=[4, 3]).select(0)),
    )
