"""Readers and eager operators inside ``torch.utils.data.DataLoader`` worker
processes, started by fork and by spawn: each worker reads its own shard and
the union of what the workers deliver is the dataset, with the right values,
and nothing hangs."""

import math
import multiprocessing
import os

import numpy as np
import pytest

import ndd

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader, IterableDataset, get_worker_info  # noqa: E402

BATCH_SIZE = 4
NUM_WORKERS = 2
# 23 files in unequal classes: the two shards have 11 and 12 samples.
CLASS_SIZES = {"cat": 8, "dog": 7, "fox": 8}
# Seconds a DataLoader waits for a worker's batch before it raises instead of hanging.
WORKER_TIMEOUT = 30

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """The folder and, per file in listing order, (relative path, bytes, label)."""
    root = tmp_path_factory.mktemp("classes")
    files = []
    for label, name in enumerate(sorted(CLASS_SIZES)):
        (root / name).mkdir()
        for i in range(CLASS_SIZES[name]):
            content = bytes((label * 50 + i + k) % 256 for k in range(5 + 3 * i))
            (root / name / f"{i:02d}.jpg").write_bytes(content)
            files.append((f"{name}/{i:02d}.jpg", content, label))
    return str(root), files


def process(data, label):
    """A few eager operators (run by the asynchronous executor) on one batch, as
    numpy/torch data for the DataLoader to hand to the main process."""
    scaled_label = ndd.cast(label, dtype=ndd.float32) * 10 + 0.5
    widened = ndd.cast(data, dtype=ndd.int32) + 1
    return {
        "pid": os.getpid(),
        "paths": [bytes(np.asarray(s)).decode() for s in ndd.get_property(data, key="source_info")],
        "label": scaled_label.torch().flatten(),
        "data": [np.asarray(sample) for sample in widened],
    }


class ShardedFiles(IterableDataset):
    """One epoch of ``ndd.readers.File`` per worker, each worker reading the
    shard numbered by its worker id.

    Without ``readers`` every worker creates its reader; with ``readers`` (one
    per worker, made in the parent) a forked worker uses the one it inherited.
    """

    def __init__(self, root, readers=None):
        self.root = root
        self.readers = readers

    def __iter__(self):
        info = get_worker_info()
        if self.readers is not None:
            reader = self.readers[info.id]
        else:
            reader = ndd.readers.File(
                file_root=self.root, num_shards=info.num_workers, shard_id=info.id, pad_last_batch=True
            )
        for data, label in reader.next_epoch(batch_size=BATCH_SIZE):
            yield process(data, label)


def load(dataset, start_method):
    if start_method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"the {start_method} start method is not available here")
    loader = DataLoader(
        dataset,
        batch_size=None,
        num_workers=NUM_WORKERS,
        multiprocessing_context=start_method,
        timeout=WORKER_TIMEOUT,
    )
    return list(loader)


def shard(files, shard_id):
    n = len(files)
    return files[shard_id * n // NUM_WORKERS : (shard_id + 1) * n // NUM_WORKERS]


def check_values(batches, files):
    """Each delivered sample holds its file's bytes + 1 and its label * 10 + 0.5."""
    by_path = {path: (content, label) for path, content, label in files}
    for batch in batches:
        assert batch["label"].dtype == torch.float32
        for path, label, data in zip(batch["paths"], batch["label"].tolist(), batch["data"], strict=True):
            content, expected_label = by_path[path]
            assert label == expected_label * 10 + 0.5
            assert data.dtype == torch.int32
            np.testing.assert_array_equal(data.numpy(), np.frombuffer(content, np.uint8).astype(np.int32) + 1)


def paths_per_worker(batches):
    """Paths read, per worker process (in the order of the workers' pids' first batch)."""
    per_pid = {}
    for batch in batches:
        per_pid.setdefault(batch["pid"], []).extend(batch["paths"])
    assert os.getpid() not in per_pid, "a batch was read in the main process"
    return list(per_pid.values())


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_workers_create_their_readers_and_cover_the_dataset(dataset, start_method):
    root, files = dataset
    # Start the parent's executor thread first: a forked worker inherits it without its thread.
    ndd.cast(ndd.tensor(np.arange(3)), dtype=ndd.float32).evaluate()
    batches = load(ShardedFiles(root), start_method)
    check_values(batches, files)
    workers = paths_per_worker(batches)
    assert len(workers) == NUM_WORKERS
    padded_size = math.ceil(math.ceil(len(files) / NUM_WORKERS) / BATCH_SIZE) * BATCH_SIZE
    shards = [[path for path, _, _ in shard(files, k)] for k in range(NUM_WORKERS)]
    for paths in workers:
        # Each worker reads one whole shard, padded by repeating its last sample.
        own = shards[0] if paths[0] == shards[0][0] else shards[1]
        assert paths == own + [own[-1]] * (padded_size - len(own))
    assert sorted({path for paths in workers for path in paths}) == sorted(path for path, _, _ in files)


def stream(files, shard_id, start, count):
    """Samples ``start ... start + count - 1`` of a ``stick_to_shard`` reader's stream."""
    own = shard(files, shard_id)
    return [own[i % len(own)][0] for i in range(start, start + count)]


@pytest.mark.parametrize("used_before_fork", [False, True], ids=["fresh", "read_from_before_fork"])
def test_forked_workers_use_readers_made_in_the_parent(dataset, used_before_fork):
    root, files = dataset
    readers = [
        ndd.readers.File(
            file_root=root, num_shards=NUM_WORKERS, shard_id=k, stick_to_shard=True, prefetch_queue_depth=2
        )
        for k in range(NUM_WORKERS)
    ]
    taken = 0
    if used_before_fork:
        # The parent takes one batch of each reader (and runs operators on it); the
        # loading threads read further ahead, so at the fork their queues hold
        # samples that the workers must not skip.
        for k, reader in enumerate(readers):
            parent_batch = process(*next(iter(reader.next_epoch(batch_size=BATCH_SIZE))))
            assert parent_batch["paths"] == stream(files, k, 0, BATCH_SIZE)
        taken = BATCH_SIZE
    batches = load(ShardedFiles(root, readers), "fork")
    check_values(batches, files)
    workers = paths_per_worker(batches)
    assert len(workers) == NUM_WORKERS
    for paths in workers:
        # An epoch after a partly read one is a full epoch that continues the stream.
        shard_id = 0 if paths[0] == stream(files, 0, taken, 1)[0] else 1
        epoch_length = math.ceil(len(shard(files, shard_id)) / BATCH_SIZE) * BATCH_SIZE
        assert paths == stream(files, shard_id, taken, epoch_length)
    # The parent's readers are where the parent left them: the workers read copies.
    for k, reader in enumerate(readers):
        parent_batch = next(iter(reader.next_epoch(batch_size=BATCH_SIZE)))
        assert process(*parent_batch)["paths"] == stream(files, k, taken, BATCH_SIZE)


class RandomPerWorker(IterableDataset):
    """Uniform random batches drawn in each worker from an RNG seeded by the
    seed PyTorch gives that worker."""

    def __iter__(self):
        rng = ndd.random.RNG(seed=torch.initial_seed())
        for _ in range(3):
            values = ndd.random.uniform(batch_size=BATCH_SIZE, range=[2.0, 3.0], shape=[16], rng=rng)
            yield {"seed": torch.initial_seed(), "values": values.torch()}


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_random_operators_in_workers(start_method):
    if not hasattr(getattr(ndd, "random", None), "uniform"):
        pytest.skip("ndd.random.uniform is not available")
    batches = load(RandomPerWorker(), start_method)
    assert len(batches) == 3 * NUM_WORKERS
    seeds = {b["seed"] for b in batches}
    assert len(seeds) == NUM_WORKERS
    for seed in seeds:
        values = torch.cat([b["values"] for b in batches if b["seed"] == seed])
        assert values.shape == (3 * BATCH_SIZE, 16)
        assert values.min() >= 2.0 and values.max() < 3.0
        # The same seed in the main process draws the same values.
        rng = ndd.random.RNG(seed=seed)
        expected = [
            ndd.random.uniform(batch_size=BATCH_SIZE, range=[2.0, 3.0], shape=[16], rng=rng).torch()
            for _ in range(3)
        ]
        torch.testing.assert_close(values, torch.cat(expected), rtol=0, atol=0)
