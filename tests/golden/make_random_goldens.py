"""Regenerate ``random_reference.json`` from the reference (ndd.random).

Run with the reference interpreter (DALI installed in a side virtualenv):

    $HOME/dali-ref/bin/python tests/golden/make_random_goldens.py

What it records (tests/test_random.py and tests/ops/test_random_ops.py read it):
  sequences     per seed: the first draws of RNG(seed) and the state string
                after 0, 1, ... of them
  advances      RNG(seed=7).advance(n): the state string and the next draws
  from_states   RNG(state=s): the next draws and the state string after each
                (counters about to wrap, phases 0-3)
  clones        an RNG cloned after some draws: the draws of both afterwards
  bad_states    set_state(value) that fails: the exception type
  op_draws      per random operator call: the state string of its RNG before
                and after the call, with rng() draws around it
  seeds         RNG(seed=x) for non-integer-literal seeds: the state string or error type
  metadata      operator calls: type, dtype, layout and shape(s) of the result,
                or the exception type (values are random: not recorded)
  signatures    inspect.signature of ndd.random's functions, RNG's methods,
                random_crop_generator
"""

import inspect
import json
import os

import numpy as np
import nvidia.dali.experimental.dynamic as ndd

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = ndd.random.RNG

SEEDS = [0, 1, 7, 1234, 2**32 - 1, 2**32, 2**63, 2**64 - 1, -1, -5, 2**64 + 5, 2**100 + 3,
         0x123456789ABCDEF0]
ADVANCES = [0, 1, 3, 4, 5, 11, 1000003, 2**40 + 3, 2**62 + 1, 2**63, 2**64 - 1]
STATES = [
    "Philox_0000000000000007_0000000000000000:FFFFFFFFFFFFFFFF_2",
    "Philox_0000000000000007_FFFFFFFFFFFFFFFF:FFFFFFFFFFFFFFFF_3",
    "Philox_0000000000000007_FFFFFFFFFFFFFFFF:FFFFFFFFFFFFFFFE_0",
    "Philox_00000000000004D2_0000000000000000:0000000000000001_2",
    "Philox_FEDCBA9876543210_0123456789ABCDEF:0011223344556677_1",
    "Philox_0000000000000000_0000000000000000:0000000000000000_3",
]
BAD_STATES = [
    "nonsense",
    "Philox_4D2_0:1_2",
    "Philox_00000000000004D2_0000000000000000:0000000000000001_4",
    "Philox_00000000000004D2_0000000000000000:0000000000000001_5",
    "philox_00000000000004d2_0000000000000000:0000000000000001_2",
    "",
    5,
    None,
    1.5,
]


def dtype_name(dt):
    for name in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64"]:
        if getattr(ndd, name) == dt:
            return name
    return str(dt)


def describe(result):
    if isinstance(result, tuple):
        return {"kind": "tuple", "items": [describe(r) for r in result]}
    if isinstance(result, ndd.Batch):
        shapes = [list(np.asarray(t).shape) for t in result]
        return {"kind": "batch", "dtype": dtype_name(result.dtype), "layout": result.layout,
                "batch_size": result.batch_size, "shapes": shapes}
    data = np.asarray(result)
    return {"kind": "tensor", "dtype": dtype_name(result.dtype), "layout": result.layout,
            "shape": list(data.shape)}


def outcome(fn):
    try:
        return {"ok": True, "value": describe(fn())}
    except Exception as exc:  # noqa: BLE001 - recording what the reference raises
        return {"ok": False, "error_type": type(exc).__name__}


def make_sequences():
    out = {}
    for seed in SEEDS:
        rng = RNG(seed=seed)
        states, draws = [], []
        for _ in range(10):
            states.append(str(rng.get_state()))
            draws.append(rng())
        states.append(str(rng.get_state()))
        out[str(seed)] = {"draws": draws, "states": states}
    return out


def make_advances():
    out = []
    for n in ADVANCES:
        rng = RNG(seed=7)
        rng.advance(n)
        state = str(rng.get_state())
        out.append({"n": n, "state": state, "next": [rng() for _ in range(5)]})
    # Several advances add up.
    rng = RNG(seed=7)
    rng.advance(3)
    rng()
    rng.advance(6)
    out.append({"n": [3, "draw", 6], "state": str(rng.get_state()), "next": [rng() for _ in range(5)]})
    return out


def make_from_states():
    out = []
    for s in STATES:
        rng = RNG(state=s)
        draws, states = [], []
        for _ in range(6):
            draws.append(rng())
            states.append(str(rng.get_state()))
        out.append({"state": s, "draws": draws, "states": states})
    return out


def make_clones():
    out = []
    for before in [0, 3, 4, 9]:
        rng = RNG(seed=99)
        for _ in range(before):
            rng()
        clone = rng.clone()
        out.append({"seed": 99, "before": before, "clone_repr": repr(clone),
                    "clone": [clone() for _ in range(6)], "original": [rng() for _ in range(6)]})
    return out


def make_bad_states():
    out = []
    for value in BAD_STATES:
        rng = RNG(seed=1)
        try:
            rng.set_state(value)
            out.append({"value": value, "error_type": None})
        except Exception as exc:  # noqa: BLE001
            out.append({"value": value, "error_type": type(exc).__name__})
    return out


def make_seeds():
    out = []
    for label, seed in [("True", True), ("np.uint32(5)", np.uint32(5)), ("1.5", 1.5), ("'12'", "12")]:
        try:
            out.append({"seed": label, "state": str(RNG(seed=seed).get_state())})
        except Exception as exc:  # noqa: BLE001
            out.append({"seed": label, "error_type": type(exc).__name__})
    return out


SHAPE_U8 = np.array([100, 200], np.int64)
OP_CALLS = {
    "uniform()": lambda r: ndd.random.uniform(rng=r),
    "uniform(batch_size=5, shape=[3])": lambda r: ndd.random.uniform(batch_size=5, shape=[3], rng=r),
    "normal(shape=[100])": lambda r: ndd.random.normal(shape=[100], rng=r),
    "coin_flip(batch_size=3)": lambda r: ndd.random.coin_flip(batch_size=3, rng=r),
    "beta()": lambda r: ndd.random.beta(rng=r),
    "choice(5, shape=[4])": lambda r: ndd.random.choice(5, shape=[4], rng=r),
    "batch_permutation(batch_size=4)": lambda r: ndd.batch_permutation(batch_size=4, rng=r),
    "random_crop_generator([100, 200])": lambda r: ndd.random_crop_generator(SHAPE_U8, rng=r),
    "random_crop_generator(batch of 3)": lambda r: ndd.random_crop_generator(
        ndd.as_batch([SHAPE_U8] * 3), rng=r),
}


def make_op_draws():
    out = []
    for name, call in OP_CALLS.items():
        rng = RNG(seed=2024)
        before = str(rng.get_state())
        first = rng()
        with ndd.EvalMode.deferred:
            result = call(rng)
            after = str(rng.get_state())
            second = rng()
        del result
        out.append({"call": name, "before": before, "first_draw": first, "after": after,
                    "second_draw": second})
    return out


def t(array, layout=None):
    return ndd.tensor(np.asarray(array), layout=layout)


def b(arrays, layout=None):
    return ndd.batch([np.asarray(a) for a in arrays], layout=layout)


# Calls whose result metadata (or error) is recorded; the expression is eval'ed with
# R (an RNG), np, ndd, t (tensor) and b (batch) in scope. tests/ops/test_random_ops.py
# evaluates the same expressions with ndd.
METADATA_CALLS = [
    "ndd.random.uniform(rng=R)",
    "ndd.random.uniform(batch_size=3, rng=R)",
    "ndd.random.uniform(shape=[2, 3], rng=R)",
    "ndd.random.uniform(shape=4, rng=R)",
    "ndd.random.uniform(shape=[0], rng=R)",
    "ndd.random.uniform(t(np.zeros((2, 5), np.uint8), 'HW'), rng=R)",
    "ndd.random.uniform(b([np.zeros(2), np.zeros(3)]), rng=R)",
    "ndd.random.uniform(t(np.zeros(3)), batch_size=2, rng=R)",
    "ndd.random.uniform(range=[5, 7], shape=[5], dtype=ndd.int32, rng=R)",
    "ndd.random.uniform(values=[1, 2.5, 7], shape=[8], rng=R)",
    "ndd.random.uniform(shape=[3], dtype=ndd.float64, rng=R)",
    "ndd.random.uniform(shape=[3], dtype=ndd.uint8, rng=R)",
    "ndd.random.uniform(shape=[3], dtype=ndd.int64, rng=R)",
    "ndd.random.uniform(range=b([np.float32([0, 1]), np.float32([10, 11])]), rng=R)",
    "ndd.random.uniform(shape=b([np.int32([1]), np.int32([2])]), rng=R)",
    "ndd.random.uniform(rng=np.random.default_rng(0))",
    "ndd.random.uniform(rng=lambda: 5)",
    "ndd.random.normal(rng=R)",
    "ndd.random.normal(shape=[3], mean=10, stddev=2, rng=R)",
    "ndd.random.normal(shape=[6], dtype=ndd.int32, rng=R)",
    "ndd.random.normal(shape=[6], dtype=ndd.float64, rng=R)",
    "ndd.random.normal(mean=b([np.float32(1), np.float32(100)]), rng=R)",
    "ndd.random.normal(mean=t(np.float32(7)), batch_size=2, rng=R)",
    "ndd.random.coin_flip(rng=R)",
    "ndd.random.coin_flip(batch_size=4, rng=R)",
    "ndd.random.coin_flip(shape=[4], dtype=ndd.uint8, rng=R)",
    "ndd.random.coin_flip(shape=[4], dtype=ndd.bool, rng=R)",
    "ndd.random.coin_flip(shape=[10], probability=0.9, rng=R)",
    "ndd.random.beta(rng=R)",
    "ndd.random.beta(shape=[4], alpha=2, beta=5, rng=R)",
    "ndd.random.beta(shape=[4], dtype=ndd.float64, rng=R)",
    "ndd.random.choice(5, rng=R)",
    "ndd.random.choice(5, shape=[10], rng=R)",
    "ndd.random.choice(np.int64(5), shape=[10], rng=R)",
    "ndd.random.choice(np.uint8(5), shape=[10], rng=R)",
    "ndd.random.choice([10, 20, 30], shape=[10], rng=R)",
    "ndd.random.choice(np.float32([1.5, 2.5]), shape=[10], rng=R)",
    "ndd.random.choice(np.bool_([True, False]), shape=[3], rng=R)",
    "ndd.random.choice(np.int32([[1, 2], [3, 4]]), shape=[3], rng=R)",
    "ndd.random.choice(np.int32([[1, 2], [3, 4]]), rng=R)",
    "ndd.random.choice(t(np.int32([[1, 2], [3, 4]]), 'AB'), shape=[3], rng=R)",
    "ndd.random.choice(t(np.int32([[1, 2], [3, 4]]), 'AB'), shape=[3, 2], rng=R)",
    "ndd.random.choice(t(np.int32([1, 2, 3]), 'X'), shape=[4], rng=R)",
    "ndd.random.choice(t(np.int32([1, 2]), 'A'), rng=R)",
    "ndd.random.choice(3, p=[0.1, 0.2, 0.7], shape=[10], rng=R)",
    "ndd.random.choice(4, np.zeros((2, 3)), rng=R)",
    "ndd.random.choice(3, b([np.zeros(2), np.zeros(3)]), rng=R)",
    "ndd.random.choice(b([np.int32(3), np.int32(100)]), shape=[4], rng=R)",
    "ndd.random.choice(b([np.int32([1, 2]), np.int32([7, 8, 9])]), shape=[4], rng=R)",
    "ndd.random.choice(5, batch_size=3, rng=R)",
    "ndd.random.choice(2, p=b([np.float32([1, 0]), np.float32([0, 1])]), rng=R)",
    "ndd.random_crop_generator(np.array([100, 200], np.int64), rng=R)",
    "ndd.random_crop_generator(np.array([100, 200], np.int32), rng=R)",
    "ndd.random_crop_generator(np.array([100, 200, 3], np.int64), rng=R)",
    "ndd.random_crop_generator(np.array([100, 200], np.uint8), rng=R)",
    "ndd.random_crop_generator(b([np.int64([100, 200]), np.int64([30, 40])]), rng=R)",
    "ndd.batch_permutation(batch_size=4, rng=R)",
]


def make_metadata():
    out = []
    for expr in METADATA_CALLS:
        scope = {"R": RNG(seed=5), "np": np, "ndd": ndd, "t": t, "b": b}
        out.append({"call": expr, "result": outcome(lambda expr=expr, scope=scope: eval(expr, scope))})  # noqa: S307
    return out


def signature(fn):
    sig = inspect.signature(fn)
    return [{"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
            for p in sig.parameters.values()]


def make_signatures():
    out = {}
    for name in ["uniform", "normal", "coin_flip", "beta", "choice", "get_default_rng", "set_seed"]:
        out[f"random.{name}"] = signature(getattr(ndd.random, name))
    out["random.RNG"] = signature(RNG)
    for method in ["advance", "clone", "get_state", "set_state", "__call__"]:
        out[f"random.RNG.{method}"] = signature(getattr(RNG, method))
    out["random_crop_generator"] = signature(ndd.random_crop_generator)
    out["batch_permutation"] = signature(ndd.batch_permutation)
    out["random.__all__"] = sorted(x for x in dir(ndd.random) if not x.startswith("_"))
    return out


def main():
    goldens = {
        "reference_version": __import__("nvidia.dali").dali.__version__,
        "sequences": make_sequences(),
        "advances": make_advances(),
        "from_states": make_from_states(),
        "clones": make_clones(),
        "bad_states": make_bad_states(),
        "seeds": make_seeds(),
        "op_draws": make_op_draws(),
        "metadata": make_metadata(),
        "signatures": make_signatures(),
    }
    with open(os.path.join(HERE, "random_reference.json"), "w") as fh:
        json.dump(goldens, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
