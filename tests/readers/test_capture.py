"""Capture mode: ``next_epoch(capture=True)``, ``ExternalSource.captured`` and
``ndd.capture.invariant`` take the reference's calls, with its rules, and give the
results of the plain loop (ndd runs the body as written on every iteration)."""

import numpy as np
import pytest
from file_dataset import make_dataset, sample_name

import ndd


@pytest.fixture
def root(tmp_path):
    return make_dataset(str(tmp_path / "root"))


def _epoch(reader, **kwargs):
    """Each batch of one epoch as (names, labels, byte sums): the loop body runs operators."""
    out = []
    for data, labels in reader.next_epoch(**kwargs):
        sums = ndd.reductions.sum(ndd.cast(data, dtype=ndd.int64)) * 2
        out.append(
            (
                [sample_name(np.asarray(x)) for x in data.tensors],
                np.asarray(ndd.as_tensor(labels)).ravel().tolist(),
                np.asarray(ndd.as_tensor(sums)).ravel().tolist(),
            )
        )
    return out


def test_a_captured_epoch_gives_the_batches_of_a_plain_one(root):
    plain = _epoch(ndd.readers.File(file_root=root, random_shuffle=True, seed=5), batch_size=3)
    captured = _epoch(
        ndd.readers.File(file_root=root, random_shuffle=True, seed=5), batch_size=3, capture=True
    )
    assert captured == plain and len(plain) == 3
    assert all(len(set(names)) == 3 for names, _, _ in plain)
    # The constructor's max_batch_size serves as the batch size, as in the reference.
    assert _epoch(ndd.readers.File(file_root=root, max_batch_size=3), capture=True) == _epoch(
        ndd.readers.File(file_root=root), batch_size=3
    )


def test_a_reader_goes_on_after_a_captured_epoch(root):
    """The reader stays one stream (an epoch of 7 in batches of 4 runs into the next)."""
    reader = ndd.readers.File(file_root=root)
    mixed = _epoch(reader, batch_size=4, capture=True) + _epoch(reader, batch_size=4)
    fresh = ndd.readers.File(file_root=root)
    assert mixed == _epoch(fresh, batch_size=4) + _epoch(fresh, batch_size=4)
    assert len(mixed) == 4


def test_capture_needs_a_batch_size_at_the_call(root):
    reader = ndd.readers.File(file_root=root)
    with pytest.raises(
        ValueError, match=r"ndd.readers.File.next_epoch: capture=True requires a non-None batch_size"
    ):
        reader.next_epoch(capture=True)


def test_capture_refuses_checkpointing(root):
    reader = ndd.readers.File(file_root=root, enable_checkpointing=True)
    with pytest.raises(NotImplementedError, match="checkpointing is not supported in capture mode"):
        reader.next_epoch(batch_size=2, capture=True)


def _items():
    for i in range(3):
        yield [np.full(2, 10 * i + k, np.int32) for k in range(2)]


def test_external_source_captured_yields_each_item_until_the_end():
    captured = [
        [np.asarray(s).tolist() for s in (batch * 2).tensors]
        for batch in ndd.ExternalSource(source=_items).captured(2)
    ]
    # Each item, a Tensor (a list of arrays is one), repeated over the batch, as a call does.
    assert captured == [[[[2 * (10 * i), 2 * (10 * i)], [2 * (10 * i + 1)] * 2]] * 2 for i in range(3)]
    pairs = list(ndd.ExternalSource(source=_items, num_outputs=2).captured(1))
    assert len(pairs) == 3 and all(isinstance(p, tuple) and len(p) == 2 for p in pairs)
    assert np.asarray(pairs[2][1].tensors[0]).tolist() == [21, 21]


def test_external_source_captured_pulls_in_the_given_context():
    ctx = ndd.EvalContext(num_threads=1)
    seen = []

    def source():
        seen.append(ndd.EvalContext.current() is ctx)
        if len(seen) > 2:
            raise StopIteration
        return np.arange(3)

    assert len(list(ndd.ExternalSource(source=source).captured(2, ctx=ctx))) == 2
    assert seen == [True, True, True]


def test_invariant_is_the_value_itself():
    value = [1.0, 2.0]
    assert ndd.capture.invariant(value) is value
    assert ndd.capture.invariant(3) + 1 == 4
