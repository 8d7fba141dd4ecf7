"""A Tensor input of a call in batch mode (``batch_size=``, or beside Batch arguments)
is the same whole sample for every sample of the batch, as in the reference; it is
not split along its first axis."""

import numpy as np
import pytest

import ndd

_X = np.arange(60, dtype=np.float32).reshape(5, 4, 3)

_CALLS = {
    # Deterministic settings: each sample is the call on the Tensor alone.
    "noise.gaussian": lambda x, **kw: ndd.noise.gaussian(x, stddev=0.0, **kw),
    "noise.salt_and_pepper": lambda x, **kw: ndd.noise.salt_and_pepper(x, prob=0.0, **kw),
    "noise.shot": lambda x, **kw: ndd.noise.shot(x, factor=0.0, **kw),
    "normalize": lambda x, **kw: ndd.normalize(x, **kw),
    "normalize(batch=True)": lambda x, **kw: ndd.normalize(x, batch=True, **kw),
    "jitter": lambda x, **kw: ndd.jitter(x, fill_value=0.0, nDegree=1, rng=ndd.random.RNG(seed=1), **kw),
    "brightness": lambda x, **kw: ndd.brightness(x, brightness=2.0, **kw),
}


@pytest.mark.parametrize("name", sorted(_CALLS))
@pytest.mark.parametrize("batch_size", [2, 7])
def test_a_tensor_is_every_sample_of_the_batch(name, batch_size):
    x = ndd.tensor(_X, layout="HWC")
    alone = np.asarray(_CALLS[name](x))
    out = _CALLS[name](x, batch_size=batch_size)
    assert len(out.tensors) == batch_size
    for sample in out.tensors:
        np.testing.assert_array_equal(np.asarray(sample), alone)


def test_a_tensor_beside_a_batch_argument_is_every_sample():
    x = ndd.tensor(_X, layout="HWC")
    out = ndd.noise.gaussian(x, stddev=ndd.batch([np.float32(0.0)] * 3))
    assert [np.asarray(t).shape for t in out.tensors] == [(5, 4, 3)] * 3


def test_dump_image_writes_the_tensor_for_every_sample(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = ndd.tensor(np.zeros((4, 5, 3), np.uint8), layout="HWC")
    out = ndd.dump_image(x, batch_size=2)
    assert [np.asarray(t).shape for t in out.tensors] == [(4, 5, 3)] * 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0--0.ppm", "1--0.ppm"]
