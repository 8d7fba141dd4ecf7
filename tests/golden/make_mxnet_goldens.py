"""Regenerate ``mxnet_reference.json`` from the REFERENCE implementation.

Run with the reference interpreter:

    $HOME/dali-ref/bin/python tests/golden/make_mxnet_goldens.py

The files come from ``tests/readers/mxnet_dataset.py``, the recipe the tests
use, so both sides read identical bytes. Only observed behaviour is recorded;
nothing here is part of the package.

Output (next to this script): ``mxnet_reference.json``

    {
      "reference_version": "2.4.0",
      "signature": [{"name", "kind", "required"}],  # MXNet.__init__ without self, _backend
      "cases": {case: [sample]},   # one epoch of each case below
      "shards": [[label, ...], ...]   # num_shards=4, shard_id=3: first labels, 3 epochs
    }

A sample is ``{"image": [bytes as ints], "label": [floats], "label_shape",
"source_info"}`` with the folder of the files replaced by ``<dir>``. Cases:
``default`` (write_recordio() as is), ``index_out_of_order`` (the index lines
permuted), ``index_subset`` (the index lists records 0, 2, 5 only),
``several_files`` (three .rec files, one index over their concatenation),
``header_label_ignored`` (flag 2 with a non-zero header label).
"""

import inspect
import json
import os
import pathlib
import struct
import sys
import tempfile

import numpy as np

import nvidia.dali as dali
import nvidia.dali.experimental.dynamic as ndd

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "readers"))
import mxnet_dataset  # noqa: E402


def signature(cls):
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in params
        if p.name != "_backend"
    ]


def epoch(reader, folder):
    samples = []
    for image, label in reader.next_epoch():
        info = bytes(np.asarray(ndd.get_property(image, key="source_info"))).decode()
        samples.append(
            {
                "image": np.asarray(image).tolist(),
                "label": np.asarray(label).tolist(),
                "label_dtype": str(label.dtype),
                "image_dtype": str(image.dtype),
                "source_info": info.replace(folder, "<dir>"),
            }
        )
    return samples


def write_index(path, lines):
    with open(path, "w") as fh:
        fh.writelines(f"{i}\t{offset}\n" for i, offset in lines)


def main():
    result = {"reference_version": dali.__version__, "signature": signature(ndd.readers.MXNet), "cases": {}}
    cases = result["cases"]
    with tempfile.TemporaryDirectory() as folder:
        rec, idx = os.path.join(folder, "data.rec"), os.path.join(folder, "data.idx")
        offsets = mxnet_dataset.write_recordio(rec, idx)
        cases["default"] = epoch(ndd.readers.MXNet(path=rec, index_path=idx), folder)
        reader = ndd.readers.MXNet(path=rec, index_path=idx, num_shards=4, shard_id=3)
        result["shards"] = [[np.asarray(label).tolist()[0] for _, label in reader.next_epoch()] for _ in range(3)]
        write_index(idx, [(i, offsets[i]) for i in (3, 0, 5, 1, 4, 2)])
        cases["index_out_of_order"] = epoch(ndd.readers.MXNet(path=rec, index_path=idx), folder)
        write_index(idx, [(i, offsets[i]) for i in (0, 2, 5)])
        cases["index_subset"] = epoch(ndd.readers.MXNet(path=rec, index_path=idx), folder)
    with tempfile.TemporaryDirectory() as folder:
        paths, lines, start = [], [], 0
        for f in range(3):
            rec = os.path.join(folder, f"part{f}.rec")
            samples = [([10.0 * f + i], mxnet_dataset.image_bytes(10 * f + i, 5 + i)) for i in range(2 + f)]
            offsets = mxnet_dataset.write_recordio(rec, os.path.join(folder, f"part{f}.idx"), samples)
            lines += [(len(lines), start + offset) for offset in offsets]
            start += os.path.getsize(rec)
            paths.append(rec)
        idx = os.path.join(folder, "all.idx")
        write_index(idx, lines)
        cases["several_files"] = epoch(ndd.readers.MXNet(path=paths, index_path=[idx]), folder)
    with tempfile.TemporaryDirectory() as folder:
        rec, idx = os.path.join(folder, "data.rec"), os.path.join(folder, "data.idx")
        payload = struct.pack("<IfQQ", 2, 7.0, 0, 0) + struct.pack("<2f", 1.0, 2.0) + b"image"
        with open(rec, "wb") as fh:
            fh.write(mxnet_dataset.frame(payload))
        write_index(idx, [(0, 0)])
        cases["header_label_ignored"] = epoch(ndd.readers.MXNet(path=rec, index_path=idx), folder)
    out = HERE / "mxnet_reference.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
