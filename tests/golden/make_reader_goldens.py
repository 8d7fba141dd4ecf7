"""Record the reference's File reader orders (epochs, shards, padding, calls).

Run with the reference's interpreter:
    $HOME/dali-ref/bin/python tests/golden/make_reader_goldens.py
Writes tests/golden/reader_orders.json: for each configuration, the sample
names (and labels) of every batch of several consecutive epochs.
"""

import json
import os
import sys
import tempfile

import numpy as np
import nvidia.dali.experimental.dynamic as ndd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "readers"))
from file_dataset import make_dataset, sample_name  # noqa: E402

CONFIGS = [
    {},
    {"pad_last_batch": True},
    {"stick_to_shard": True, "num_shards": 3, "shard_id": 1},
    {"num_shards": 3, "shard_id": 0},
    {"num_shards": 3, "shard_id": 1},
    {"num_shards": 3, "shard_id": 2},
    {"num_shards": 3, "shard_id": 0, "pad_last_batch": True},
    {"num_shards": 3, "shard_id": 2, "pad_last_batch": True},
    {"num_shards": 2, "shard_id": 1, "pad_last_batch": True, "stick_to_shard": True},
    {"num_shards": 4, "shard_id": 3, "stick_to_shard": True},
]
BATCH_SIZES = [None, 1, 2, 3, 5]
EPOCHS = 4


def batch_items(batch):
    data, label = batch
    return [[sample_name(np.asarray(data.select(i))), int(np.asarray(label.select(i))[0])]
            for i in range(data.batch_size)]


def run(root, config, batch_size):
    reader = ndd.readers.File(file_root=root, **config)
    epochs = []
    for _ in range(EPOCHS):
        if batch_size is None:
            epochs.append([[[sample_name(np.asarray(d)), int(np.asarray(l)[0])]]
                           for d, l in reader.next_epoch()])
        else:
            epochs.append([batch_items(b) for b in reader.next_epoch(batch_size=batch_size)])
    return {"config": config, "batch_size": batch_size, "epochs": epochs,
            "metadata": {k: int(v) for k, v in reader.get_metadata().items()}}


def run_break(root):
    """Leave an epoch after one batch and start the next one."""
    reader = ndd.readers.File(file_root=root)
    first = next(iter(reader.next_epoch(batch_size=3)))
    rest = [batch_items(b) for b in reader.next_epoch(batch_size=3)]
    return {"first": batch_items(first), "next_epoch": rest}


def run_calls(root):
    reader = ndd.readers.File(file_root=root)
    return [[sample_name(np.asarray(d)), int(np.asarray(l)[0])] for d, l in (reader() for _ in range(11))]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        root = make_dataset(os.path.join(tmp, "root"))
        cwd = os.getcwd()
        os.chdir(tmp)  # source_info is relative; keep paths short and stable
        try:
            cases = [run("root", c, bs) for c in CONFIGS for bs in BATCH_SIZES]
            out = {"cases": cases, "break": run_break("root"), "calls": run_calls("root")}
            reader = ndd.readers.File(file_root="root")
            d, _ = reader()
            out["source_info"] = bytes(np.asarray(ndd.get_property(d, key="source_info"))).decode()
        finally:
            os.chdir(cwd)
    with open(os.path.join(HERE, "reader_orders.json"), "w") as fh:
        json.dump(out, fh, indent=0)


if __name__ == "__main__":
    main()
