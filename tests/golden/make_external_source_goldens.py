"""Record the REFERENCE's ``ExternalSource``: its signature and what it returns.

Run with the reference interpreter (never with the project's own venv):

    $HOME/dali-ref/bin/python tests/golden/make_external_source_goldens.py

Only observed behaviour is recorded; nothing here is part of the package.

Output: ``external_source.json`` next to this script::

    {
      "reference_version": "2.4.0",
      "signature": {"__init__": [param, ...], "__call__": [param, ...]},
      "prelude": "<Python source defining helpers the cases use>",
      "cases": [
        {
          "name": "<what the case shows>",
          "make": "<expression building the ExternalSource>",
          "calls": [{"batch_size": ...}, ...],   # keyword arguments of each call
          "results": [outcome, ...]              # one per call
        }
        | {"name": ..., "make": ..., "make_error": "<exception type name>"}
      ]
    }

``param`` is ``{"name", "kind", "required", "default"}`` (``default`` only when
not required; a JSON value). An ``outcome`` is one of

- ``{"stop": true}``: the call raised StopIteration;
- ``{"error": "<exception type name>", "message": "<str(exc)>"}``;
- a result: ``{"kind": "Tensor"|"Batch", "dtype": "i32", "layout": str|null,
  "shape": [...] (Tensor) or [[...], ...] (Batch, per sample), "values": nested list
  (Tensor) or a list of nested lists (Batch)}``, or a list of such results when
  ``num_outputs`` > 1.

The ``make`` expressions and the ``prelude`` are evaluated with ``np`` (numpy)
and ``ndd`` (the reference module here, ndd in the tests) in scope.
"""

import inspect
import json
import pathlib

import numpy as np
import nvidia.dali
import nvidia.dali.experimental.dynamic as ndd

OUT = pathlib.Path(__file__).parent / "external_source.json"

PRELUDE = '''
def count_to_three():
    for i in range(3):
        yield np.array([i], dtype=np.int32)


class StopsAfterTwo:
    """A callable that produces two items, then raises StopIteration."""

    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        if self.calls > 2:
            raise StopIteration
        return np.array([self.calls], dtype=np.int32)


A23 = np.arange(6, dtype=np.int32).reshape(2, 3)
ROUNDING = np.array([[1.7, -2.5, 300.2], [2.5, -0.5, 1e10]], dtype=np.float32)
THREE = [np.array([i], dtype=np.int32) for i in range(3)]
'''

# name, make expression, keyword arguments of each call (None: one plain call)
SEVEN_CALLS = [{}] * 7
CASES = [
    ("numpy array", "ndd.ExternalSource(lambda: A23)", None),
    ("numpy float64", "ndd.ExternalSource(lambda: np.array([0.25, -1.5]))", None),
    ("numpy bool", "ndd.ExternalSource(lambda: np.array([True, False]))", None),
    ("numpy uint16", "ndd.ExternalSource(lambda: np.array([7, 65535], dtype=np.uint16))", None),
    ("numpy 0-d", "ndd.ExternalSource(lambda: np.float64(2.5))", None),
    ("list of arrays is one Tensor", "ndd.ExternalSource(lambda: [A23, A23 + 10])", None),
    ("tuple of arrays with one output", "ndd.ExternalSource(lambda: (A23, A23 + 10))", None),
    ("nested int list", "ndd.ExternalSource(lambda: [[1, 2], [3, 4]])", None),
    ("nested float list", "ndd.ExternalSource(lambda: [[1.5, 2.0], [3.0, 4.0]])", None),
    ("python int", "ndd.ExternalSource(lambda: 5)", None),
    ("python float", "ndd.ExternalSource(lambda: 0.5)", None),
    ("python bool", "ndd.ExternalSource(lambda: True)", None),
    ("empty list", "ndd.ExternalSource(lambda: [])", None),
    ("list of tensors", "ndd.ExternalSource(lambda: [ndd.tensor([1, 2]), ndd.tensor([3, 4])])", None),
    ("ndd.tensor keeps its layout", 'ndd.ExternalSource(lambda: ndd.tensor(A23, layout="XY"))', None),
    (
        "layout argument replaces the item's",
        'ndd.ExternalSource(lambda: ndd.tensor(A23, layout="XY"), layout="HW")',
        None,
    ),
    ("ndd.batch is a Batch", "ndd.ExternalSource(lambda: ndd.batch([A23, A23 + 1]))", None),
    ("ragged ndd.batch", "ndd.ExternalSource(lambda: ndd.batch([[1, 2, 3], [4]]))", None),
    ("ndd.as_batch is a Batch", "ndd.ExternalSource(lambda: ndd.as_batch([A23, A23 + 1]))", None),
    ("batch layout", 'ndd.ExternalSource(lambda: ndd.batch([A23, A23]), layout="HW")', None),
    ("batch dtype", "ndd.ExternalSource(lambda: ndd.batch([ROUNDING]), dtype=ndd.int32)", None),
    ("batch_size broadcasts a tensor", "ndd.ExternalSource(lambda: A23)", [{"batch_size": 3}]),
    ("batch_size 0", "ndd.ExternalSource(lambda: A23)", [{"batch_size": 0}]),
    (
        "batch_size keeps the layout",
        'ndd.ExternalSource(lambda: ndd.tensor(A23, layout="XY"))',
        [{"batch_size": 2}],
    ),
    ("batch_size with dtype", "ndd.ExternalSource(lambda: ROUNDING, dtype=ndd.uint8)", [{"batch_size": 2}]),
    (
        "batch_size matching a Batch",
        "ndd.ExternalSource(lambda: ndd.batch([A23, A23]))",
        [{"batch_size": 2}],
    ),
    (
        "batch_size not matching a Batch",
        "ndd.ExternalSource(lambda: ndd.batch([A23, A23]))",
        [{"batch_size": 3}],
    ),
    ("dtype int32 rounds", "ndd.ExternalSource(lambda: ROUNDING, dtype=ndd.int32)", None),
    ("dtype uint8 saturates", "ndd.ExternalSource(lambda: ROUNDING, dtype=ndd.uint8)", None),
    ("dtype int8 saturates", "ndd.ExternalSource(lambda: ROUNDING, dtype=ndd.int8)", None),
    ("dtype as a string", 'ndd.ExternalSource(lambda: A23, dtype="f64")', None),
    ("dtype as a numpy type", "ndd.ExternalSource(lambda: A23, dtype=np.int16)", None),
    ("dtype as a list of one", "ndd.ExternalSource(lambda: A23, dtype=[ndd.float32])", None),
    ("layout as a list of one", 'ndd.ExternalSource(lambda: A23, layout=["HW"])', None),
    ("layout not matching the data", 'ndd.ExternalSource(lambda: A23, layout="HWC")', None),
    ("two outputs from a tuple", "ndd.ExternalSource(lambda: (A23, A23[0]), num_outputs=2)", None),
    ("two outputs from a list", "ndd.ExternalSource(lambda: [A23, 7], num_outputs=2)", None),
    ("two outputs from an array", "ndd.ExternalSource(lambda: np.stack([A23, A23]), num_outputs=2)", None),
    ("two outputs from three items", "ndd.ExternalSource(lambda: (A23, A23, A23), num_outputs=2)", None),
    ("two outputs from a single array", "ndd.ExternalSource(lambda: A23, num_outputs=2)", None),
    (
        "two outputs, layout per output",
        'ndd.ExternalSource(lambda: (A23, A23[0]), num_outputs=2, layout=["HW", "W"])',
        None,
    ),
    (
        "two outputs, one layout for both",
        'ndd.ExternalSource(lambda: (A23, A23), num_outputs=2, layout="HW")',
        None,
    ),
    (
        "two outputs, dtype per output",
        "ndd.ExternalSource(lambda: (ROUNDING, ROUNDING), num_outputs=2, dtype=(ndd.int32, None))",
        None,
    ),
    (
        "two outputs, Tensor and Batch",
        "ndd.ExternalSource(lambda: (A23, ndd.batch([A23])), num_outputs=2)",
        None,
    ),
    (
        "two outputs, Batch and Tensor",
        "ndd.ExternalSource(lambda: (ndd.batch([A23]), A23), num_outputs=2)",
        None,
    ),
    (
        "two outputs, Tensor and Batch with batch_size",
        "ndd.ExternalSource(lambda: (A23, ndd.batch([A23 + 1])), num_outputs=2)",
        [{"batch_size": 1}],
    ),
    (
        "two outputs, Batches of different sizes",
        "ndd.ExternalSource(lambda: (ndd.batch([A23]), ndd.batch([A23, A23])), num_outputs=2)",
        None,
    ),
    ('list, cycle="no"', 'ndd.ExternalSource(THREE, cycle="no")', SEVEN_CALLS),
    ("list, cycle=False", "ndd.ExternalSource(THREE, cycle=False)", SEVEN_CALLS),
    ("list, cycle=None", "ndd.ExternalSource(THREE)", SEVEN_CALLS),
    ('list, cycle="quiet"', 'ndd.ExternalSource(THREE, cycle="quiet")', SEVEN_CALLS),
    ("list, cycle=True", "ndd.ExternalSource(THREE, cycle=True)", SEVEN_CALLS),
    ('list, cycle="raise"', 'ndd.ExternalSource(THREE, cycle="raise")', SEVEN_CALLS),
    ('empty list, cycle="quiet"', 'ndd.ExternalSource([], cycle="quiet")', [{}] * 2),
    ("generator function", "ndd.ExternalSource(count_to_three)", SEVEN_CALLS),
    ('generator function, cycle="quiet"', 'ndd.ExternalSource(count_to_three, cycle="quiet")', SEVEN_CALLS),
    ('generator function, cycle="raise"', 'ndd.ExternalSource(count_to_three, cycle="raise")', SEVEN_CALLS),
    ("generator", "ndd.ExternalSource(count_to_three())", [{}] * 5),
    ("generator expression", "ndd.ExternalSource(x * 2 for x in THREE)", [{}] * 5),
    ('iterator, cycle="quiet"', 'ndd.ExternalSource(iter(THREE), cycle="quiet")', [{}] * 5),
    ('iterator, cycle="raise"', 'ndd.ExternalSource(iter(THREE), cycle="raise")', [{}] * 5),
    ("range", "ndd.ExternalSource(range(2))", [{}] * 3),
    ("callable raising StopIteration", "ndd.ExternalSource(StopsAfterTwo())", [{}] * 4),
    ("bound method", "ndd.ExternalSource(StopsAfterTwo().__call__)", [{}] * 3),
]

# name, make expression; the construction raises
MAKE_ERRORS = [
    ("cycle not a mode", 'ndd.ExternalSource(THREE, cycle="yes")'),
    ("cycle 1", "ndd.ExternalSource(THREE, cycle=1)"),
    ("cycle with a callable", 'ndd.ExternalSource(lambda: A23, cycle="quiet")'),
    ("cycle=False with a callable", "ndd.ExternalSource(lambda: A23, cycle=False)"),
    ("cycle through a generator", 'ndd.ExternalSource(count_to_three(), cycle="quiet")'),
    ("num_outputs 0", "ndd.ExternalSource(lambda: A23, num_outputs=0)"),
    ("num_outputs negative", "ndd.ExternalSource(lambda: A23, num_outputs=-2)"),
    ("callable with a parameter", "ndd.ExternalSource(lambda x: A23)"),
    ("callable with a default parameter", "ndd.ExternalSource(lambda x=1: A23)"),
    ("callable with *args", "ndd.ExternalSource(lambda *args: A23)"),
    ("callable with two parameters", "ndd.ExternalSource(lambda x, y: A23)"),
    ("source neither callable nor iterable", "ndd.ExternalSource(5)"),
    ("layout sequence too long", 'ndd.ExternalSource(lambda: A23, layout=["HW", "HW"])'),
    ("dtype sequence too short", "ndd.ExternalSource(lambda: (A23, A23), 2, dtype=[ndd.int32])"),
]


def _parameters(fn):
    params = []
    for p in inspect.signature(fn).parameters.values():
        entry = {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        if not entry["required"]:
            entry["default"] = p.default
        params.append(entry)
    return params


def _result(value):
    if isinstance(value, tuple):
        return [_result(v) for v in value]
    if isinstance(value, ndd.Batch):
        samples = [np.asarray(s) for s in value]
        return {
            "kind": "Batch",
            "dtype": str(value.dtype),
            "layout": value.layout,
            "shape": [list(s.shape) for s in samples],
            "values": [s.tolist() for s in samples],
        }
    arr = np.asarray(value)
    return {
        "kind": "Tensor",
        "dtype": str(value.dtype),
        "layout": value.layout,
        "shape": list(arr.shape),
        "values": arr.tolist(),
    }


def _outcome(source, kwargs):
    try:
        return _result(source(**kwargs))
    except StopIteration:
        return {"stop": True}
    except Exception as exc:  # recorded, whatever it is
        return {"error": type(exc).__name__, "message": str(exc)}


def main():
    namespace = {"np": np, "ndd": ndd}
    exec(PRELUDE, namespace)  # noqa: S102 - our own helper definitions
    cases = []
    for name, make, calls in CASES:
        calls = calls if calls is not None else [{}]
        source = eval(make, dict(namespace))  # noqa: S307 - our own case expressions
        results = [_outcome(source, kwargs) for kwargs in calls]
        cases.append({"name": name, "make": make, "calls": calls, "results": results})
    for name, make in MAKE_ERRORS:
        try:
            eval(make, dict(namespace))  # noqa: S307 - our own case expressions
        except Exception as exc:  # recorded, whatever it is
            cases.append({"name": name, "make": make, "make_error": type(exc).__name__})
        else:
            raise AssertionError(f"{name}: the reference accepted {make}")
    golden = {
        "reference_version": nvidia.dali.__version__,
        "signature": {
            "__init__": _parameters(ndd.ExternalSource),
            "__call__": _parameters(ndd.ExternalSource.__call__),
        },
        "prelude": PRELUDE,
        "cases": cases,
    }
    OUT.write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
