"""A training loop interrupted at any batch and restored from a checkpoint yields
exactly the batches (file names, labels) and random augmentation draws that an
uninterrupted run yields: the property is checked over interruption points,
reader configurations and batch sizes."""

import importlib.util

import numpy as np
import pytest
from file_dataset import make_dataset, sample_name
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ndd

EPOCHS = 3

CONFIGS = [
    {},
    {"random_shuffle": True, "initial_fill": 4, "seed": 3},
    {"shuffle_after_epoch": True},
    {"num_shards": 3, "shard_id": 1},
    {"num_shards": 2, "shard_id": 0, "pad_last_batch": True},
    {"num_shards": 3, "shard_id": 2, "stick_to_shard": True, "random_shuffle": True, "seed": 8},
    {"num_shards": 3, "shard_id": 1, "random_shuffle": True, "initial_fill": 2, "seed": 4},
    {"num_shards": 3, "shard_id": 0, "pad_last_batch": True, "random_shuffle": True, "seed": 6},
]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return make_dataset(str(tmp_path_factory.mktemp("resume") / "root"))


def train(root, config, batch_size, *, stop_at=None, saved=None):
    """Run the loop; with ``stop_at``, stop after that many batches and return the
    checkpoint text; with ``saved``, restore it first and run to the end."""
    reader = ndd.readers.File(file_root=root, **config)
    rng = ndd.random.RNG(seed=2024)
    checkpoint = ndd.checkpoint.Checkpoint()
    checkpoint.register(reader, "reader")
    checkpoint.register(rng, "augment")
    start_epoch = 0
    if saved is not None:
        text, start_epoch = saved
        checkpoint.deserialize(text)
        checkpoint.restore()
    record = []
    for epoch in range(start_epoch, EPOCHS):
        for data, label in reader.next_epoch(batch_size=batch_size):
            brightness = ndd.random.uniform(batch_size=batch_size, range=[0.5, 1.5], rng=rng)
            flip = ndd.random.coin_flip(batch_size=batch_size, rng=rng)
            record.append(
                (
                    epoch,
                    [sample_name(np.asarray(t)) for t in data.tensors],
                    np.asarray(label.torch()).ravel().tolist(),
                    np.asarray(brightness.torch()).tolist(),
                    np.asarray(flip.torch()).tolist(),
                )
            )
            if stop_at is not None and len(record) == stop_at:
                checkpoint.collect()
                return record, (checkpoint.serialize(), epoch)
    return record, None


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the batches are read with .torch()")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    config=st.sampled_from(CONFIGS),
    batch_size=st.sampled_from([1, 2, 3, 5]),
    stop_fraction=st.floats(0, 1, exclude_max=True),
    mode=st.sampled_from(["eager", "deferred", "sync_cpu"]),
)
def test_interrupted_loop_resumes_exactly(root, config, batch_size, stop_fraction, mode):
    with ndd.EvalMode[mode]:
        full, _ = train(root, config, batch_size)
        stop_at = 1 + int(stop_fraction * len(full))
        first, saved = train(root, config, batch_size, stop_at=stop_at)
        assert saved is not None
        rest, _ = train(root, config, batch_size, saved=saved)
    assert first + rest == full


def _names(reader, count, batch_size):
    """The sample names of the next ``count`` samples (whole batches of ``batch_size``;
    None: one sample at a time), across epochs."""
    names = []
    while len(names) < count:
        if batch_size is None:
            names += [sample_name(np.asarray(data)) for data, _ in reader.next_epoch()]
        else:
            for data, _ in reader.next_epoch(batch_size=batch_size):
                names += [sample_name(np.asarray(t)) for t in data.tensors]
    return names[:count]


@pytest.mark.parametrize("config", [c for c in CONFIGS if not c.get("pad_last_batch")], ids=str)
@pytest.mark.parametrize("new_batch_size", [3, None])
def test_a_state_restored_into_another_batch_size_continues_the_stream(root, config, new_batch_size):
    # As the reference: the stream goes on where it was, whatever the batch size now.
    stream = _names(ndd.readers.File(file_root=root, **config), 40, None)
    reader = ndd.readers.File(file_root=root, enable_checkpointing=True, **config)
    epoch = reader.next_epoch(batch_size=2)
    taken = [sample_name(np.asarray(t)) for t in next(epoch)[0].tensors]
    state = reader.get_state()
    restored = ndd.readers.File(file_root=root, **config)
    restored.set_state(state)
    assert taken + _names(restored, 24, new_batch_size) == stream[: len(taken) + 24]


def test_a_padded_state_needs_its_batch_size(root):
    config = {"num_shards": 2, "shard_id": 0, "pad_last_batch": True}
    reader = ndd.readers.File(file_root=root, enable_checkpointing=True, **config)
    next(reader.next_epoch(batch_size=2))
    restored = ndd.readers.File(file_root=root, **config)
    restored.set_state(reader.get_state())
    with pytest.raises(ValueError, match="with pad_last_batch, this reader must read batches of that size"):
        next(restored.next_epoch(batch_size=3))
