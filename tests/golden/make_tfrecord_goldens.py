"""Regenerate ``tfrecord_reference.json`` from the REFERENCE implementation.

Run with the reference interpreter (never with the project's own venv):

    $HOME/dali-ref/bin/python tests/golden/make_tfrecord_goldens.py

The TFRecord files are the ones of ``tests/readers/tfrecord_dataset.py``
(written into a temporary folder); only observed behaviour is recorded.

Output (next to this script): ``tfrecord_reference.json``

    {
      "reference_version": "2.4.0",
      "signature": [{"name", "kind", "required"}],  # TFRecord.__init__ less self, _backend
      "module_names": [...],                        # public names of nvidia.dali.tfrecord
      "dtype_values": {"int64": 0, ...},
      "samples": [{feature: {"dtype", "shape", "values"}}],  # one epoch, sample mode,
                                                    # features = feature_specs()
      "batches": [{feature: [values per sample]}],  # batch size 3, two epochs, label + name
      "shards": {"<num_shards>/<shard_id>": [labels]},  # first epoch of each shard
      "source_info": [...],                         # "<dir>" stands for the folder
      "errors": {name: {"taken": [labels read before the failure], "error": bool}}
    }

``values`` of a string feature are the bytes as a list of ints. Features that a
record lacks are not recorded: the reference returns uninitialised memory there.
"""

import inspect
import json
import os
import pathlib
import sys
import tempfile

import numpy as np

import nvidia.dali as dali
import nvidia.dali.experimental.dynamic as ndd
import nvidia.dali.tfrecord as tfrec
from nvidia.dali import fn, pipeline_def

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "readers"))

import tfrecord_dataset as dataset  # noqa: E402

LABEL = {"label": tfrec.FixedLenFeature([], tfrec.int64, -1)}


def _value(tensor):
    array = np.asarray(tensor)
    return {"dtype": array.dtype.name, "shape": list(array.shape), "values": array.tolist()}


def _signature():
    params = inspect.signature(ndd.readers.TFRecord.__init__).parameters.values()
    return [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in params
        if p.name not in ("self", "_backend")
    ]


def _source_info(paths, indices, folder):
    @pipeline_def(batch_size=7, num_threads=1, device_id=None)
    def pipe():
        out = fn.readers.tfrecord(path=paths, index_path=indices, features=LABEL)
        return fn.get_property(out["label"], key="source_info")

    p = pipe()
    p.build()
    (info,) = p.run()
    return [bytes(np.asarray(t)).decode().replace(folder, "<dir>") for t in info]


def _taken(paths, indices, features=LABEL):
    """Labels read in one epoch until the first failure, and whether one came."""
    taken = []
    try:
        reader = ndd.readers.TFRecord(path=paths, index_path=indices, features=features)
        for sample in reader.next_epoch():
            taken.append(int(np.asarray(sample["label"])) if "label" in sample else None)
    except Exception:  # noqa: BLE001 - any failure of the reference counts
        return {"taken": taken, "error": True}
    return {"taken": taken, "error": False}


def _errors(folder, paths, indices):
    first = pathlib.Path(paths[0]).read_bytes()
    spans = [tuple(map(int, line.split())) for line in pathlib.Path(indices[0]).read_text(encoding="utf-8").splitlines()]

    def write(name, data, index_spans=None):
        path = os.path.join(folder, name)
        pathlib.Path(path).write_bytes(data)
        index = path + ".idx"
        dataset.write_index(index, spans if index_spans is None else index_spans)
        return [path], [index]

    offset, size = spans[1]
    corrupted = bytearray(first)
    corrupted[offset + 12] ^= 0xFF  # first byte of the second record's data
    bad_crc = bytearray(first)
    bad_crc[offset + size - 1] ^= 0xFF
    malformed = first[:offset] + dataset.frame_record(b"\xff\xff\xff\xff") + first[offset + size :]
    malformed_spans = [spans[0], (offset, 20)]
    past_end = spans + [(len(first), 40)]
    return {
        "corrupted_data": _taken(*write("corrupted.tfrecord", bytes(corrupted))),
        "corrupted_crc_only": _taken(*write("crc.tfrecord", bytes(bad_crc))),
        "malformed_protobuf": _taken(*write("malformed.tfrecord", malformed, malformed_spans)),
        "index_past_end": _taken(*write("past.tfrecord", first, past_end)),
        "truncated": _taken(*write("truncated.tfrecord", first[: spans[2][0] + 10])),
        "too_many_values": _taken(
            paths[:1], indices[:1], {**LABEL, "shape": tfrec.FixedLenFeature([2], tfrec.int64, 0)}
        ),
        "partial_shape_mismatch": _taken(
            paths[:1], indices[:1], {**LABEL, "shape": tfrec.VarLenFeature([2], tfrec.int64, 0)}
        ),
        "missing_index": _taken(paths[:1], [os.path.join(folder, "nope.idx")]),
        "index_count": _taken(paths, indices[:1]),
    }


def main():
    with tempfile.TemporaryDirectory() as folder:
        paths, indices = dataset.write_dataset(folder)
        reader = ndd.readers.TFRecord(path=paths, index_path=indices, features=dataset.feature_specs(tfrec))
        samples = [{name: _value(t) for name, t in s.items()} for s in reader.next_epoch()]
        features = {"label": LABEL["label"], "name": tfrec.FixedLenFeature([], tfrec.string, "")}
        reader = ndd.readers.TFRecord(3, path=paths, index_path=indices, features=features)
        batches = []
        for _ in range(2):
            for batch in reader.next_epoch():
                batches.append({k: [np.asarray(t).tolist() for t in b] for k, b in batch.items()})
        shards = {}
        for shard in range(3):
            reader = ndd.readers.TFRecord(
                path=paths, index_path=indices, features=LABEL, num_shards=3, shard_id=shard
            )
            shards[f"3/{shard}"] = [int(np.asarray(s["label"])) for s in reader.next_epoch()]
        result = {
            "reference_version": dali.__version__,
            "signature": _signature(),
            "module_names": sorted(n for n in dir(tfrec) if not n.startswith("_")),
            "dtype_values": {"int64": tfrec.int64, "float32": tfrec.float32, "string": tfrec.string},
            "samples": samples,
            "batches": batches,
            "shards": shards,
            "source_info": _source_info(paths, indices, folder),
            "errors": _errors(folder, paths, indices),
        }
    out = HERE / "tfrecord_reference.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
