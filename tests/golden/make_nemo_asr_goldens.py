"""Record the reference's NemoAsr reader: outputs, filtering, parts of files, orders.

Run with the reference's interpreter:
    $HOME/dali-ref/bin/python tests/golden/make_nemo_asr_goldens.py
Writes tests/golden/nemo_asr_reference.json. The dataset comes from
tests/readers/nemo_dataset.py (the recipe the tests use; stdlib ``wave``, so both
sides read identical bytes), written in a temporary folder that is the working
directory while reading (manifest paths are relative to it).

    {
      "reference_version": "2.4.0",
      "signature": [{"name", "kind", "required"}],   # NemoAsr.__init__ without self, _backend
      "samples": {case: {"kwargs", "samples": [sample]}},   # one epoch; a sample is {"text", "idx", "shape",
                                     #  "dtype", "rate", "head", "tail"} (head/tail: the
                                     #  first/last 8 values of the flattened audio)
      "filters": {case: {"kwargs", "texts", "idxs"} or {"kwargs", "error"}},
      "orders": [{"config", "batch_size", "epochs": [[[text, ...] per batch] per epoch]}]
    }
"""

import inspect
import json
import os
import sys
import tempfile

import numpy as np
import nvidia.dali as dali
import nvidia.dali.experimental.dynamic as ndd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "readers"))
import nemo_dataset as nd  # noqa: E402

SAMPLE_CASES = {
    "default": {"manifest_filepaths": "all.json"},
    "resampled_16k": {"manifest_filepaths": "all.json", "sample_rate": 16000},
    "resampled_11025_q10": {"manifest_filepaths": "all.json", "sample_rate": 11025, "quality": 10},
    "no_downmix": {"manifest_filepaths": "all.json", "downmix": False},
    "int16": {"manifest_filepaths": "all.json", "dtype": "int16", "downmix": False},
    "int32": {"manifest_filepaths": "all.json", "dtype": "int32"},
    "parts": {"manifest_filepaths": "parts.json", "downmix": False},
    "parts_resampled_8k": {"manifest_filepaths": "parts.json", "sample_rate": 8000},
    "parts_int16": {"manifest_filepaths": "parts.json", "dtype": "int16"},
}

FILTER_CASES = {
    "two_manifests": {"manifest_filepaths": ["first.json", "second.json"]},
    "min_duration": {"manifest_filepaths": ["first.json", "second.json"], "min_duration": 0.2},
    "max_duration": {"manifest_filepaths": ["first.json", "second.json"], "max_duration": 0.25},
    "min_and_max": {"manifest_filepaths": "all.json", "min_duration": 0.15, "max_duration": 0.3},
    "bound_equal_to_a_duration": {"manifest_filepaths": "all.json", "min_duration": 0.3, "max_duration": 0.3},
    "nothing_left": {"manifest_filepaths": "all.json", "min_duration": 0.5},
    "missing_durations_with_min": {"manifest_filepaths": "parts.json", "min_duration": 0.01},
    "missing_durations_with_max": {"manifest_filepaths": "parts.json", "max_duration": 0.1},
    "negative_bounds": {"manifest_filepaths": "all.json", "min_duration": -1.0, "max_duration": -1.0},
}

ORDER_CONFIGS = [
    {},
    {"pad_last_batch": True},
    {"num_shards": 3, "shard_id": 1},
    {"num_shards": 3, "shard_id": 2, "pad_last_batch": True},
    {"num_shards": 2, "shard_id": 1, "stick_to_shard": True},
    {"num_shards": 2, "shard_id": 0, "stick_to_shard": True, "pad_last_batch": True},
]
BATCH_SIZES = [None, 3]
EPOCHS = 3


def signature():
    params = list(inspect.signature(ndd.readers.NemoAsr.__init__).parameters.values())[1:]
    return [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in params
        if p.name != "_backend"
    ]


def kwargs_for(case):
    kwargs = dict(case)
    if "dtype" in kwargs:
        kwargs["dtype"] = getattr(ndd, kwargs["dtype"])
    return kwargs


def describe(audio, rate, text, idx):
    values = np.asarray(audio)
    flat = values.reshape(-1)
    number = (lambda v: int(v)) if values.dtype.kind == "i" else (lambda v: float(v))
    return {
        "text": bytes(np.asarray(text)).decode(),
        "idx": int(np.asarray(idx)[0]),
        "shape": list(values.shape),
        "dtype": str(values.dtype),
        "rate": float(np.asarray(rate)),
        "head": [number(v) for v in flat[:8]],
        "tail": [number(v) for v in flat[-8:]],
    }


def samples(case):
    reader = ndd.readers.NemoAsr(read_idxs=True, **kwargs_for(case))
    return [describe(*outputs) for outputs in reader.next_epoch()]


def filtered(case):
    result = {"kwargs": case}
    try:
        reader = ndd.readers.NemoAsr(read_idxs=True, **kwargs_for(case))
        outputs = list(reader.next_epoch())
    except RuntimeError as exc:
        result["error"] = str(exc).splitlines()[0]
        return result
    result["texts"] = [bytes(np.asarray(text)).decode() for _, _, text, _ in outputs]
    result["idxs"] = [int(np.asarray(idx)[0]) for *_, idx in outputs]
    return result


def texts_of(batch):
    return [bytes(np.asarray(batch.select(i))).decode() for i in range(batch.batch_size)]


def orders(config, batch_size):
    reader = ndd.readers.NemoAsr(manifest_filepaths="all.json", read_sample_rate=False, **config)
    epochs = []
    for _ in range(EPOCHS):
        if batch_size is None:
            epochs.append([[bytes(np.asarray(text)).decode()] for _, text in reader.next_epoch()])
        else:
            epochs.append([texts_of(text) for _, text in reader.next_epoch(batch_size=batch_size)])
    return {"config": config, "batch_size": batch_size, "epochs": epochs}


def main():
    out = {"reference_version": dali.__version__, "signature": signature()}
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        nd.make_dataset(folder)
        os.chdir(folder)
        try:
            out["samples"] = {
                name: {"kwargs": case, "samples": samples(case)} for name, case in SAMPLE_CASES.items()
            }
            out["filters"] = {name: filtered(case) for name, case in FILTER_CASES.items()}
            out["orders"] = [orders(c, bs) for c in ORDER_CONFIGS for bs in BATCH_SIZES]
        finally:
            os.chdir(cwd)
    path = os.path.join(HERE, "nemo_asr_reference.json")
    with open(path, "w") as fh:
        json.dump(out, fh, indent=None, separators=(",", ":"))
        fh.write("\n")
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
