"""Regenerate ``webdataset_reference.json`` from the REFERENCE implementation.

Run with the reference interpreter (never with the project's own venv):

    $HOME/dali-ref/bin/python tests/golden/make_webdataset_goldens.py

The archives are the ones of ``tests/readers/webdataset_dataset.py`` (written
into a temporary folder); only observed behaviour is recorded.

Output (next to this script): ``webdataset_reference.json``

    {
      "reference_version": "2.4.0",
      "signature": [{"name", "kind", "required"}],   # Webdataset.__init__ less self, _backend
      "wds2idx": {"shard0.tar": "<index text>", ...}, # the indices DALI's wds2idx writes
      "cases": {name: {"args": {...}, "index": bool, "samples": [[output, ...], ...]}},
      "odd": {name: {"args": {...}, "samples": [...]}},  # ODD_MEMBERS archive, no index
      "shards": {"<num_shards>/<shard_id>": [[output]]},  # first epoch of each shard
      "source_info": [[str per output] per sample],       # "<dir>" stands for the folder
      "errors": {name: "error" | "no error"}
    }

An output is written as its text (the bytes decoded as latin-1) for uint8, or
``{"dtype": "<numpy name>", "values": [...]}`` for other types. Every case
reads one epoch in sample mode.
"""

import inspect
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

import nvidia.dali as dali
import nvidia.dali.experimental.dynamic as ndd
import nvidia.dali.types as types
from nvidia.dali import fn, pipeline_def

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "readers"))

import webdataset_dataset as dataset  # noqa: E402

DTYPE_NAMES = {"INT32": "int32", "INT16": "int16", "FLOAT16": "float16", "UINT64": "uint64"}

CASES = {
    "basic": {"ext": ["jpg", "cls"]},
    "alternatives": {"ext": ["jpg;png", "cls"]},
    "two_part_extension": {"ext": ["seg.png", "cls"]},
    "case_insensitive": {"ext": ["jpg", "cls"], "case_sensitive_extensions": False},
    "case_insensitive_upper": {"ext": ["JPG;PNG", "CLS"], "case_sensitive_extensions": False},
    "skip": {"ext": ["jpg", "cls"], "missing_component_behavior": "skip"},
    "skip_upper": {"ext": ["jpg;png", "json"], "missing_component_behavior": "SKIP"},
    "empty": {"ext": ["json"], "missing_component_behavior": "empty"},
    "single_str": {"ext": "jpg;png"},
    "same_ext_twice": {"ext": ["cls", "cls"]},
    "trailing_separator": {"ext": ["jpg;png;"]},
    "int32": {"ext": ["cls", "jpg"], "dtypes": ["INT32", "INT32"]},
    "int16_float16": {"ext": ["cls", "json"], "dtypes": ["INT16", "FLOAT16"]},
    "single_dtype": {"ext": "cls", "dtypes": "INT32"},
}

ODD = {
    "jpg": {"ext": ["jpg"]},
    "jpg_or_cls": {"ext": ["jpg;cls", "cls;jpg"]},
    "multi_dot": {"ext": ["a.b.jpg"]},
}


def _dtype(name):
    return getattr(types, name)


def _reader_args(args):
    args = dict(args)
    if "dtypes" in args:
        dts = args["dtypes"]
        args["dtypes"] = [_dtype(d) for d in dts] if isinstance(dts, list) else _dtype(dts)
    return args


def _output(value):
    array = np.asarray(value)
    if array.dtype == np.uint8:
        return bytes(array).decode("latin-1")
    return {"dtype": array.dtype.name, "values": array.tolist()}


def _epoch(paths, index, args):
    reader = ndd.readers.Webdataset(paths=paths, index_paths=index, **_reader_args(args))
    return [[_output(v) for v in sample] for sample in reader.next_epoch()]


def _signature():
    params = inspect.signature(ndd.readers.Webdataset.__init__).parameters.values()
    return [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in params
        if p.name not in ("self", "_backend")
    ]


def _wds2idx(tar, index):
    subprocess.run(
        [sys.executable, "-c", "import sys, wds2idx; sys.argv[0] = 'wds2idx'; wds2idx.main()", tar, index],
        check=True,
        capture_output=True,
    )
    return pathlib.Path(index).read_text(encoding="utf-8")


def _source_info(paths, index, folder):
    @pipeline_def(batch_size=8, num_threads=1, device_id=None)
    def pipe():
        jpg, cls = fn.readers.webdataset(paths=paths, index_paths=index, ext=["jpg", "cls"])
        return fn.get_property(jpg, key="source_info"), fn.get_property(cls, key="source_info")

    p = pipe()
    p.build()
    jpg, cls = p.run()
    texts = [[bytes(np.asarray(t)).decode() for t in out] for out in (jpg, cls)]
    return [[t.replace(folder, "<dir>") for t in pair] for pair in zip(*texts)]


def _error(make):
    try:
        make()
    except Exception:  # noqa: BLE001 - any failure of the reference counts
        return "error"
    return "no error"


def main():
    with tempfile.TemporaryDirectory() as folder:
        paths, indices = dataset.write_shards(folder)
        odd = os.path.join(folder, "odd.tar")
        dataset.write_tar(odd, dataset.ODD_MEMBERS)
        result = {
            "reference_version": dali.__version__,
            "signature": _signature(),
            "wds2idx": {
                os.path.basename(p): _wds2idx(p, os.path.join(folder, os.path.basename(p) + ".ref.idx"))
                for p in paths
            },
            "cases": {},
            "odd": {},
            "shards": {},
        }
        for name, args in CASES.items():
            for use_index in (True, False):
                samples = _epoch(paths, indices if use_index else None, args)
                key = name if use_index else f"{name}/no_index"
                result["cases"][key] = {"args": args, "index": use_index, "samples": samples}
        for name, args in ODD.items():
            result["odd"][name] = {"args": args, "samples": _epoch([odd], None, args)}
        for shard in range(3):
            reader = ndd.readers.Webdataset(
                paths=paths, index_paths=indices, ext=["cls"], num_shards=3, shard_id=shard
            )
            result["shards"][f"3/{shard}"] = [[_output(v) for v in s] for s in reader.next_epoch()]
        result["source_info"] = _source_info(paths, indices, folder)

        def first(**kwargs):
            args = {"paths": paths, "index_paths": indices, "ext": ["jpg", "cls"], **kwargs}
            next(ndd.readers.Webdataset(**args).next_epoch())

        bad_index = os.path.join(folder, "bad.idx")
        pathlib.Path(bad_index).write_text("v9.9 1\njpg 512 12 x.jpg\n")
        result["errors"] = {
            "missing_component_error": _error(lambda: first(missing_component_behavior="error")),
            "missing_component_error_no_index": _error(
                lambda: first(index_paths=None, missing_component_behavior="error")
            ),
            "bad_behavior": _error(lambda: first(missing_component_behavior="fill")),
            "dtype_size": _error(lambda: first(ext=["json"], dtypes=[types.INT64])),
            "dtype_count": _error(lambda: first(dtypes=[types.INT32])),
            "bool_dtype": _error(lambda: first(ext=["cls"], dtypes=[types.BOOL])),
            "index_count": _error(lambda: first(index_paths=indices[:1])),
            "index_version": _error(lambda: first(paths=paths[:1], index_paths=[bad_index])),
        }
    out = HERE / "webdataset_reference.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
