"""Record the reference's ``normalize`` (format: see make_color_goldens.py).

    $HOME/dali-ref/bin/python tests/golden/make_normalize_goldens.py

Writes ``normalize_cases.json`` and ``normalize_values.npz`` beside this script.
"""

import json

import make_color_goldens as base
import numpy as np


def main():
    case = base.case
    rng = np.random.default_rng(10)
    f32 = (rng.normal(3.0, 2.0, (6, 7, 3))).astype(np.float32)
    u8 = rng.integers(0, 256, (6, 7, 3), dtype=np.uint8)
    i16 = rng.integers(-3000, 3000, (5, 4), dtype=np.int16)
    # A Python float mean/stddev fails in the reference's eager mode (its parameter
    # shape comes out empty), so the scalars are given as arrays of extent 1.
    one = np.ones((1, 1, 1))
    for x in (f32, u8):
        case("normalize", [x])
        case("normalize", [x], axes=[0, 1])
        case("normalize", [x], axis_names="C")
        case("normalize", [x], axis_names="HW", ddof=1, epsilon=0.5)
        case("normalize", [x], mean=one * 2, stddev=one * 4)
        case("normalize", [x], mean=one * 2, stddev=one * 4, epsilon=9.0)
        case("normalize", [x], mean=one * 100)
        case("normalize", [x], stddev=one * 3, scale=2.0, shift=1.0)
        case("normalize", [x], scale=64.0, shift=128.0, dtype="uint8")
        case("normalize", [x], scale=1000.0, dtype="int16")
        case("normalize", [x], mean=x.mean(axis=(0, 1), keepdims=True))
        case("normalize", [x], mean=x.mean(axis=2, keepdims=True), stddev=np.full((6, 7, 1), 2.0))
    case("normalize", [i16], layout="HW", scale=10.0, dtype="int32")
    case("normalize", [i16], layout="HW", axes=[1], dtype="int8", scale=50.0)
    case("normalize", [np.full((3, 4), 5, np.float32)], layout="HW", scale=2.0, shift=1.0)
    b = [f32, (f32[:4] * 2 + 1).astype(np.float32)]
    case("normalize", b, batch_mode=True)
    case("normalize", b, batch_mode=True, batch=True)
    case("normalize", b, batch_mode=True, batch=True, axes=[0, 1])
    case("normalize", b, batch_mode=True, batch=True, axis_names="HW", ddof=1)
    case(
        "normalize",
        b,
        batch_mode=True,
        mean={"per_sample": [np.full((1, 1, 3), 1.0), np.full((1, 1, 3), 2.0)]},
    )
    case(
        "normalize",
        b,
        batch_mode=True,
        stddev={"per_sample": [np.full((1, 1, 1), 2.0), np.full((1, 1, 1), 4.0)]},
    )
    # No degrees of freedom make the variance 0 (the output is (x - mean) / sqrt(epsilon));
    # a variance plus epsilon below 0 gives NaN; empty data gives empty data.
    for x in (f32, u8):
        case("normalize", [x], ddof=126, epsilon=0.25)
        case("normalize", [x], axes=[0, 1], ddof=50, epsilon=4.0)
        case("normalize", [x], epsilon=-1e9)
        case("normalize", [x], axes=[0, 1], epsilon=-1e9)
    case("normalize", [f32], epsilon=-0.01)
    case("normalize", [np.zeros((0, 3), np.float32)], layout="HW")
    case("normalize", [np.zeros((0, 3), np.uint8)], layout="HW", axes=[0])
    case("normalize", [f32, np.zeros((0, 7, 3), np.float32)], batch_mode=True)
    (base.HERE / "normalize_cases.json").write_text(json.dumps({"cases": base.CASES}, indent=0))
    np.savez_compressed(base.HERE / "normalize_values.npz", **base.ARRAYS)
    print(len(base.CASES), "cases")


if __name__ == "__main__":
    main()
