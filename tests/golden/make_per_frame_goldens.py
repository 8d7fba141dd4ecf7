"""Write per_frame_values.npz: the reference's results of the calls in per_frame_cases.py.

$HOME/dali-ref/bin/python tests/golden/make_per_frame_goldens.py
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nvidia.dali.experimental.dynamic as reference  # noqa: E402
from per_frame_cases import CASES, ERRORS  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def _arrays(result):
    result = result.evaluate()
    if isinstance(result.shape, list):  # a Batch
        return [np.asarray(sample) for sample in result], result.layout
    return [np.asarray(result)], result.layout


def main():
    values, layouts = {}, {}
    for name, call in CASES.items():
        arrays, layout = _arrays(call(reference))
        for i, array in enumerate(arrays):
            values[f"{name}/{i}"] = array
        layouts[name] = {"layout": layout or "", "samples": len(arrays)}
    errors = {}
    for name, (call, _) in ERRORS.items():
        try:
            call(reference).evaluate()
            errors[name] = None
        except Exception as exc:  # the reference's message, for the record
            errors[name] = str(exc).splitlines()[0][:300]
    np.savez_compressed(os.path.join(HERE, "per_frame_values.npz"), **values)
    with open(os.path.join(HERE, "per_frame_cases.json"), "w") as f:
        json.dump({"results": layouts, "errors": errors}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
