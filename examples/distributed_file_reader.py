"""Read one dataset from many processes with ``ndd.readers.File``, one shard per process.

Each process of a ``torch.distributed`` job (a "rank") creates the same reader
with ``num_shards=world_size`` and ``shard_id=rank``. With ``pad_last_batch``
every rank reads its own part of the dataset in every epoch, padded (by
repeating its last sample) to the size of the largest part and to whole
batches, so all ranks take the same number of steps per epoch even when the
dataset does not split evenly -- which collective operations of a training
step (gradient all-reduce) need. The ranks move to the next shard after every
epoch; with ``--shuffle-after-epoch`` they instead all draw the same new
permutation of the dataset each epoch and each reads its slice of it.

To show that this holds, every rank records the source path of each sample it
read (``ndd.get_property(batch, key="source_info")``) and rank 0 gathers the
records, prints per epoch how many batches and samples each rank read, and
checks that the shards are disjoint and cover the dataset exactly once.

One machine, four processes::

    torchrun --standalone --nproc_per_node=4 examples/distributed_file_reader.py --file-root /data/images

Two machines with eight processes each: run the same command on both, with
``HOST:PORT`` an address of the first machine that the second can reach and
``JOB`` any name shared by the two::

    torchrun --nnodes=2 --nproc_per_node=8 --rdzv-backend=c10d --rdzv-endpoint=HOST:PORT --rdzv-id=JOB \\
        examples/distributed_file_reader.py --file-root /shared/images --shuffle-after-epoch

``--file-root`` must hold the same files on every machine (a shared file
system or identical copies): each rank lists the dataset itself, and the
shards only line up if all ranks see the same list.
"""

import argparse
import collections
import json

import numpy as np
import torch.distributed as dist

import ndd


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file-root", required=True, help="folder of class folders, same on every rank")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument(
        "--file-filters",
        nargs="+",
        help="glob patterns of the files to read (default: ndd.readers.File's image and audio extensions)",
    )
    parser.add_argument(
        "--shuffle-after-epoch",
        action="store_true",
        help="read the dataset in a new random order every epoch (the same order on every rank)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of --shuffle-after-epoch, same on every rank"
    )
    parser.add_argument(
        "--report", help="rank 0 writes the gathered records and the checks to this JSON file"
    )
    return parser.parse_args()


def read_epochs(reader, epochs: int, batch_size: int) -> list[dict]:
    """Iterate ``epochs`` epochs; per epoch, the number of batches and the source
    path and label of every sample read (padding included)."""
    history = []
    for _ in range(epochs):
        batches, paths, labels = 0, [], []
        for data, label in reader.next_epoch(batch_size=batch_size):
            batches += 1
            # A training step would consume the batch here; ``label.torch()`` is
            # a (batch_size, 1) int32 torch tensor sharing the reader's memory.
            labels += label.torch().flatten().tolist()
            sources = ndd.get_property(data, key="source_info")
            paths += [bytes(np.asarray(source)).decode() for source in sources]
        history.append({"batches": batches, "paths": paths, "labels": labels})
    return history


def check_epoch(ranks: list[dict], dataset_size: int) -> dict:
    """Whether one epoch's shards (one record per rank) split the dataset evenly.

    Padding repeats a rank's last sample, so that path is the only one a rank
    may read more than once.
    """
    owners = collections.defaultdict(list)
    repeated_within_rank = []
    padding = []
    for rank, record in enumerate(ranks):
        counts = collections.Counter(record["paths"])
        last = record["paths"][-1]
        padding.append(counts[last] - 1)
        repeated_within_rank += [path for path, n in counts.items() if n > 1 and path != last]
        for path in counts:
            owners[path].append(rank)
    shared = sorted(path for path, holders in owners.items() if len(holders) > 1)
    batches = [record["batches"] for record in ranks]
    return {
        "batches": batches,
        "samples": [len(record["paths"]) for record in ranks],
        "padding": padding,
        "distinct_samples_read": len(owners),
        "dataset_size": dataset_size,
        "shared_between_ranks": shared,
        "repeated_within_rank": sorted(repeated_within_rank),
        "ok": len(owners) == dataset_size
        and not shared
        and not repeated_within_rank
        and len(set(batches)) == 1,
    }


def main():
    args = parse_args()
    # torchrun sets RANK, WORLD_SIZE and the rendezvous address in the environment.
    dist.init_process_group(backend="gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()

    reader = ndd.readers.File(
        file_root=args.file_root,
        file_filters=args.file_filters,
        num_shards=world_size,
        shard_id=rank,
        pad_last_batch=True,
        shuffle_after_epoch=args.shuffle_after_epoch,
        shuffle_after_epoch_seed=args.seed,
    )
    dataset_size = reader.get_metadata()["epoch_size"]
    history = read_epochs(reader, args.epochs, args.batch_size)

    gathered = [None] * world_size
    dist.all_gather_object(gathered, history)

    failed = False
    if rank == 0:
        print(
            f"{world_size} ranks, {dataset_size} samples, batch size {args.batch_size}, "
            f"shuffle_after_epoch={args.shuffle_after_epoch}"
        )
        report = {"world_size": world_size, "dataset_size": dataset_size, "batch_size": args.batch_size}
        report["epochs"] = []
        for epoch in range(args.epochs):
            ranks = [gathered[r][epoch] for r in range(world_size)]
            check = check_epoch(ranks, dataset_size)
            report["epochs"].append({"ranks": ranks, "check": check})
            print(
                f"epoch {epoch}: batches per rank {check['batches']}, samples per rank {check['samples']} "
                f"(padding {check['padding']}), {check['distinct_samples_read']}/{dataset_size} samples "
                f"read, {len(check['shared_between_ranks'])} read by more than one rank: "
                f"{'OK' if check['ok'] else 'FAILED'}"
            )
            failed |= not check["ok"]
        if args.report:
            with open(args.report, "w", encoding="utf-8") as fh:
                json.dump(report, fh)
    dist.destroy_process_group()
    if failed:
        raise SystemExit("the shards did not split the dataset evenly")


if __name__ == "__main__":
    main()
