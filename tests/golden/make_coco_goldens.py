"""Regenerate ``coco_reference.json`` and ``coco_reference.npz`` from the REFERENCE
implementation of ``readers.COCO``.

Run with the reference interpreter (never with the project's own venv):

    $HOME/dali-ref/bin/python tests/golden/make_coco_goldens.py

The dataset comes from ``tests/readers/coco_dataset.py`` (the tests write the same
one). Only observed behaviour is recorded; nothing here is part of the package.

``coco_reference.json``::

    {
      "reference_version": "2.4.0",
      "signature": [{"name", "kind", "required"}],    # COCO.__init__ without self, _backend
      "configs": {
        name: {
          "args": {...},                              # coco_dataset.CONFIGS[name]
          "metadata": {...},                          # get_metadata()
          "layouts": ["", ...],                       # layout of each output ("" for none)
          "sources": ["a.png", ...],                  # source_info of each sample of one epoch
        }
      }
    }

``coco_reference.npz`` holds ``"<config>/<sample>/<output>"``: the outputs of each
sample of one epoch (``next_epoch(batch_size=1)``; the reference's sample mode fails
for this reader), except the encoded images, which the tests compare with the files.
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
sys.path.insert(0, os.path.join(HERE, "..", "readers"))

import coco_dataset  # noqa: E402


def _signature():
    return [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in inspect.signature(ndd.readers.COCO.__init__).parameters.values()
        if p.name not in ("self", "_backend")
    ]


def _source(tensor):
    return bytes(np.asarray(ndd.get_property(tensor, key="source_info"))).decode()


def _read_config(paths, args, arrays):
    reader = ndd.readers.COCO(**paths, **args)
    metadata = {k: int(v) for k, v in reader.get_metadata().items()}
    sources, layouts = [], None
    for index, batch in enumerate(reader.next_epoch(batch_size=1)):
        layouts = [b.layout or "" for b in batch]
        samples = [b.tensors[0] for b in batch]
        sources.append(_source(samples[0]))
        for k, sample in enumerate(samples[1:], start=1):
            arrays[f"{index}/{k}"] = np.asarray(sample)
    return {"args": args, "metadata": metadata, "layouts": layouts, "sources": sources}


def main():
    result = {"reference_version": dali.__version__, "signature": _signature(), "configs": {}}
    arrays = {}
    with tempfile.TemporaryDirectory() as root:
        paths = coco_dataset.write_dataset(root)
        for name, args in coco_dataset.CONFIGS.items():
            config_arrays = {}
            result["configs"][name] = _read_config(paths, args, config_arrays)
            arrays.update({f"{name}/{key}": value for key, value in config_arrays.items()})
    with open(os.path.join(HERE, "coco_reference.json"), "w") as fh:
        json.dump(result, fh, indent=1)
        fh.write("\n")
    np.savez_compressed(os.path.join(HERE, "coco_reference.npz"), **arrays)
    print(f"{len(result['configs'])} configurations, {len(arrays)} arrays")


if __name__ == "__main__":
    main()
