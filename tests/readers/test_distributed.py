"""Sharded reading across processes: examples/distributed_file_reader.py run by
torchrun with two ranks over a dataset that does not split evenly."""

import json
import math
import os
import socket
import subprocess
import sys

import pytest

import ndd
from ndd._optional import release

dist = pytest.importorskip("torch.distributed")
if not (dist.is_available() and dist.is_gloo_available()):
    pytest.skip("torch.distributed with the gloo backend is not available", allow_module_level=True)
if release(pytest.importorskip("torch").__version__) < (2, 5):
    # Its ProcessGroupGloo destructor waits forever for a worker thread now and then, after
    # every rank has read and reported (here: 4 runs of 30 with torch 2.3, 1 with 2.4, none
    # with 2.13), whether or not the ranks meet at a barrier first.
    pytest.skip("torch 2.3 and 2.4 hang in destroy_process_group now and then", allow_module_level=True)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "examples", "distributed_file_reader.py")

# 23 files in unequal class folders: 2 ranks get shards of 11 and 12 samples.
CLASS_SIZES = {"cat": 8, "dog": 7, "fox": 8}
WORLD_SIZE = 2
BATCH_SIZE = 5
EPOCHS = 3


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """The dataset folder and its files (relative paths, sorted as the reader lists them)."""
    root = tmp_path_factory.mktemp("classes")
    paths = []
    for name, count in CLASS_SIZES.items():
        (root / name).mkdir()
        for i in range(count):
            (root / name / f"{i:02d}.jpg").write_bytes(f"{name}{i}".encode())
            paths.append(f"{name}/{i:02d}.jpg")
    return root, paths


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_example(root, report, *extra):
    command = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={WORLD_SIZE}"]
    command += ["--master_addr=127.0.0.1", f"--master_port={free_port()}"]
    command += [EXAMPLE, "--file-root", str(root), "--batch-size", str(BATCH_SIZE), "--epochs", str(EPOCHS)]
    command += ["--report", str(report), *extra]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(report, encoding="utf-8") as fh:
        return json.load(fh), done.stdout


def without_padding(paths):
    """A rank's samples of one epoch, without the trailing repeats of its last sample."""
    end = len(paths)
    while end > 1 and paths[end - 2] == paths[-1]:
        end -= 1
    return paths[:end]


@pytest.mark.timeout(150)
@pytest.mark.parametrize("shuffle", [False, True], ids=["in_order", "shuffle_after_epoch"])
def test_ranks_split_every_epoch_evenly(dataset, tmp_path, shuffle):
    root, files = dataset
    report, stdout = run_example(
        root, tmp_path / "report.json", *(["--shuffle-after-epoch"] if shuffle else [])
    )
    num_samples = len(files)
    assert report["dataset_size"] == num_samples
    # Every rank reads ceil(N / ranks) samples, padded to whole batches.
    expected_batches = math.ceil(math.ceil(num_samples / WORLD_SIZE) / BATCH_SIZE)
    shard_sizes = [
        num_samples * (k + 1) // WORLD_SIZE - num_samples * k // WORLD_SIZE for k in range(WORLD_SIZE)
    ]
    labels_of = {path: sorted(CLASS_SIZES).index(path.split("/")[0]) for path in files}
    orders = []
    for epoch, record in enumerate(report["epochs"]):
        ranks = record["ranks"]
        assert [r["batches"] for r in ranks] == [expected_batches] * WORLD_SIZE
        read = []
        for rank, r in enumerate(ranks):
            assert len(r["paths"]) == expected_batches * BATCH_SIZE
            assert r["labels"] == [labels_of[p] for p in r["paths"]]
            own = without_padding(r["paths"])
            assert len(set(own)) == len(own), f"epoch {epoch} rank {rank} read a sample twice"
            # Shards rotate every epoch without shuffling; shuffled, each rank keeps its slice.
            shard = rank if shuffle else (rank + epoch) % WORLD_SIZE
            assert len(own) == shard_sizes[shard]
            if not shuffle:
                begin = num_samples * shard // WORLD_SIZE
                assert own == files[begin : begin + len(own)]
            read += own
        assert sorted(read) == files, f"epoch {epoch}: the shards do not cover the dataset exactly once"
        orders.append(read)
        assert record["check"]["ok"]
    if shuffle:
        # A new order every epoch, and not the listing order.
        assert all(order != files for order in orders)
        assert len({tuple(order) for order in orders}) == EPOCHS
    assert stdout.count(": OK") == EPOCHS


def test_shuffle_after_epoch_without_padding_moves_to_the_next_shard_like_the_reference(dataset):
    root, _ = dataset
    reader = ndd.readers.File(file_root=str(root), num_shards=2, shard_id=0, shuffle_after_epoch=True)
    lengths = [sum(1 for _ in reader.next_epoch()) for _ in range(4)]
    # The reference (DALI 2.4.0) on these 23 files: shard 0 (11 samples), then shard 1 (12), ...
    assert lengths == [11, 12, 11, 12]
