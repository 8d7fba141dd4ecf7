"""Regenerate ``caffe_reference.json`` from the REFERENCE implementation.

Run with the reference interpreter (it needs ``lmdb`` installed there):

    $HOME/dali-ref/bin/python tests/golden/make_caffe_goldens.py

The databases come from ``tests/readers/caffe_dataset.py``, the recipe the
tests use, so both sides read identical records. Only observed behaviour is
recorded; nothing here is part of the package.

Output (next to this script): ``caffe_reference.json``

    {
      "reference_version": "2.4.0",
      "signatures": {"Caffe": [{"name", "kind", "required"}], "Caffe2": [...]},
                                   # __init__ parameters without self and _backend
      "caffe": {case: [sample]},   # readers.Caffe over write_caffe_db(), one epoch
      "caffe2": {case: [sample]},  # readers.Caffe2 over each caffe2_cases() database
      "caffe_shards": [[label, ...], ...]   # num_shards=3, shard_id=1: labels of 3 epochs
    }

A sample is a list of outputs ``{"dtype", "shape", "values", "source_info"}``;
``values`` is the flattened content, ``source_info`` has the database folder
replaced by ``<db>``.
"""

import inspect
import json
import pathlib
import sys
import tempfile

import numpy as np

import nvidia.dali as dali
import nvidia.dali.experimental.dynamic as ndd

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "readers"))
import caffe_dataset  # noqa: E402


def signature(cls):
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in params
        if p.name != "_backend"
    ]


def output(tensor, folder):
    array = np.asarray(tensor)
    info = bytes(np.asarray(ndd.get_property(tensor, key="source_info"))).decode()
    return {
        "dtype": str(tensor.dtype),
        "shape": list(array.shape),
        "values": array.ravel().tolist(),
        "source_info": info.replace(folder, "<db>"),
    }


def epoch(reader, folder):
    return [[output(t, folder) for t in sample] for sample in reader.next_epoch()]


def main():
    result = {
        "reference_version": dali.__version__,
        "signatures": {name: signature(getattr(ndd.readers, name)) for name in ("Caffe", "Caffe2")},
        "caffe": {},
        "caffe2": {},
    }
    with tempfile.TemporaryDirectory() as folder:
        caffe_dataset.write_caffe_db(folder)
        for case, kwargs in {
            "default": {},
            "image_only": {"label_available": False},
            "label_only": {"image_available": False},
        }.items():
            result["caffe"][case] = epoch(ndd.readers.Caffe(path=folder, **kwargs), folder)
        reader = ndd.readers.Caffe(path=folder, num_shards=3, shard_id=1, image_available=False)
        result["caffe_shards"] = [
            [int(np.asarray(label)[0]) for (label,) in reader.next_epoch()] for _ in range(3)
        ]
    with tempfile.TemporaryDirectory() as folder:
        # Datums with fields left out, and an empty value (a Datum with no field set).
        caffe_dataset.write_lmdb(
            folder,
            [
                (b"a", caffe_dataset.encode_datum(float_data=[1.5, 2.5], label=1)),
                (b"b", caffe_dataset.encode_datum(data=b"xyz")),
                (b"c", b""),
            ],
        )
        result["caffe"]["missing_fields"] = epoch(ndd.readers.Caffe(path=folder), folder)
    for case, (kwargs, records) in caffe_dataset.caffe2_cases().items():
        with tempfile.TemporaryDirectory() as folder:
            caffe_dataset.write_caffe2_db(folder, records)
            result["caffe2"][case] = epoch(ndd.readers.Caffe2(path=folder, **kwargs), folder)
    out = HERE / "caffe_reference.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
