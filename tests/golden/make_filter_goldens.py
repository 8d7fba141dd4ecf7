"""Regenerate the goldens of gaussian_blur, laplacian and filter from the reference.

Run with the reference's interpreter (DALI 2.4.0 dynamic mode, CPU):

    $HOME/dali-ref/bin/python tests/golden/make_filter_goldens.py

Writes ``filter_cases.json`` (one record per call: operator, input names, keyword
arguments, whether it ran in batch mode, the name of the expected result or the
error raised) and ``filter_values.npz`` (the inputs and expected outputs by name).
Inputs are small smooth gradients with a little noise from a fixed seed.
"""

import json
import pathlib

import numpy as np
import nvidia.dali.experimental.dynamic as ndd

HERE = pathlib.Path(__file__).parent
rng = np.random.default_rng(0)
arrays = {}
cases = []


def gradient(shape, dtype, lo=0.0, hi=255.0):
    """A smooth ramp over every axis plus noise, in ``dtype``."""
    grids = np.meshgrid(*[np.linspace(0, 1, n) for n in shape], indexing="ij")
    ramp = sum(grids) / len(grids)
    ramp = np.sin(ramp * 7.0) * 0.5 + 0.5
    values = lo + (hi - lo) * ramp + rng.normal(0, (hi - lo) * 0.08, shape)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        values = np.clip(np.round(values), info.min, info.max)
    return values.astype(dtype)


def add_array(name, value):
    arrays[name] = np.array(value, order="C")  # 0-D stays 0-D
    return name


add_array("hwc_u8", gradient((20, 28, 3), np.uint8))
add_array("hw_u8", gradient((17, 23), np.uint8))
add_array("chw_u8", gradient((3, 18, 22), np.uint8))
add_array("fhwc_u8", gradient((3, 12, 16, 3), np.uint8))
add_array("dhwc_u8", gradient((6, 10, 12, 2), np.uint8))
add_array("cfhw_u8", gradient((2, 3, 12, 14), np.uint8))
add_array("hwc_f32", gradient((20, 28, 3), np.float32, -1.0, 1.0))
add_array("hwc_i16", gradient((20, 28, 3), np.int16, -300.0, 300.0))
add_array("hwc_u16", gradient((20, 28, 3), np.uint16, 0.0, 60000.0))
add_array("small_u8", gradient((9, 13, 3), np.uint8))
add_array("f3x3", rng.normal(0, 0.4, (3, 3)).astype(np.float32))
add_array("f5x3", rng.normal(0, 0.3, (5, 3)).astype(np.float32))
add_array("f4x6", rng.normal(0, 0.2, (4, 6)).astype(np.float32))
add_array("f_sharpen", np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32))
add_array("f_box", np.full((3, 3), 1 / 9, np.float32))

LAYOUTS = {
    "cfhw": "CFHW",
    "hwc": "HWC",
    "hw": "HW",
    "chw": "CHW",
    "fhwc": "FHWC",
    "dhwc": "DHWC",
    "small": "HWC",
}


def layout_of(name):
    if name.startswith("pf_"):  # per-frame filters and fill values (a leading F)
        return "FHW"[: arrays[name].ndim]
    return LAYOUTS[name.split("_")[0]] if not name.startswith("f") or name.startswith("fhwc") else ""


def build(spec):
    """A reference input from a spec: an array name (a Tensor), or a list of names (a Batch)."""
    if isinstance(spec, list):
        return ndd.batch([arrays[n] for n in spec], layout=layout_of(spec[0]))
    return ndd.tensor(arrays[spec], layout=layout_of(spec))


def build_kwarg(value):
    if isinstance(value, dict) and "batch" in value:
        return ndd.batch([np.asarray(v, dtype=value["dtype"]) for v in value["batch"]])
    if isinstance(value, str) and value.startswith("dtype:"):
        return getattr(ndd, value[len("dtype:") :])
    return value


def record(op, inputs, **kwargs):
    fn = ndd
    for part in op.split("."):
        fn = getattr(fn, part)
    case = {"op": op, "inputs": inputs, "kwargs": kwargs}
    try:
        result = fn(*[build(s) for s in inputs], **{k: build_kwarg(v) for k, v in kwargs.items()})
        if isinstance(result, ndd.Batch):
            outs = [np.asarray(s) for s in result]
            case["expected"] = [add_array(f"out{len(cases)}_{i}", o) for i, o in enumerate(outs)]
        else:
            case["expected"] = add_array(f"out{len(cases)}", np.asarray(result))
        case["layout"] = str(result.layout)
    except Exception as exc:  # noqa: BLE001 - the error itself is the golden
        # The reference reports run-phase errors as a RuntimeError whose cause says why.
        cause = exc.__cause__ or exc.__context__ or exc
        case["error"] = f"{type(exc).__name__}: {str(cause).splitlines()[0][:300]}"
    cases.append(case)


# gaussian_blur
for name in ["hwc_u8", "hw_u8", "chw_u8", "fhwc_u8", "hwc_f32", "hwc_i16", "hwc_u16"]:
    record("gaussian_blur", [name], sigma=1.0)
record("gaussian_blur", ["dhwc_u8"], sigma=[1.0, 1.5, 0.7])
record("gaussian_blur", ["dhwc_u8"], window_size=3)
record("gaussian_blur", ["cfhw_u8"], sigma=[0.8, 1.6])
record("gaussian_blur", ["hwc_u8"], sigma=[1.0, 2.0])
record("gaussian_blur", ["hwc_u8"], sigma=0.5)
record("gaussian_blur", ["hwc_u8"], sigma=3.0)
record("gaussian_blur", ["hwc_u8"], window_size=5)
record("gaussian_blur", ["hwc_u8"], window_size=[3, 7])
record("gaussian_blur", ["hwc_u8"], window_size=1)
record("gaussian_blur", ["hwc_u8"], sigma=1.5, window_size=5)
record("gaussian_blur", ["hwc_u8"], sigma=[0.7, 2.5], window_size=[9, 3])
record("gaussian_blur", ["hwc_u8"], sigma=1.0, dtype="dtype:float32")
record("gaussian_blur", ["small_u8"], sigma=4.0)
record("gaussian_blur", ["small_u8"], window_size=31)
record("gaussian_blur", [["hwc_u8", "small_u8"]], sigma={"batch": [[1.0], [2.0, 0.5]], "dtype": "float32"})
record("gaussian_blur", [["hwc_u8", "small_u8"]], window_size={"batch": [[3], [5, 7]], "dtype": "int32"})
record("gaussian_blur", ["hwc_u8"])
record("gaussian_blur", ["hwc_u8"], sigma=[1.0, 2.0, 3.0])
record("gaussian_blur", ["hwc_u8"], window_size=4)
record("gaussian_blur", ["hwc_u8"], sigma=-1.0)
record("gaussian_blur", ["hwc_u8"], sigma=1.0, dtype="dtype:int16")

# laplacian
for name in ["hwc_u8", "hw_u8", "chw_u8", "fhwc_u8", "hwc_f32", "hwc_i16", "hwc_u16", "dhwc_u8"]:
    record("laplacian", [name])
record("laplacian", ["hwc_u8"], dtype="dtype:float32")
record("laplacian", ["cfhw_u8"], window_size=5, dtype="dtype:float32")
record("filter", ["cfhw_u8", "f3x3"])
record("laplacian", ["hwc_f32"], window_size=5)
record("laplacian", ["hwc_f32"], window_size=[3, 7])
record("laplacian", ["hwc_f32"], window_size=5, smoothing_size=1)
record("laplacian", ["hwc_f32"], window_size=3, smoothing_size=[5, 3])
record("laplacian", ["hwc_f32"], window_size=7, normalized_kernel=True)
record("laplacian", ["hwc_u8"], window_size=5, normalized_kernel=True)
record("laplacian", ["hwc_f32"], scale=0.5)
record("laplacian", ["hwc_f32"], scale=[1.0, -2.0])
record("laplacian", ["hwc_i16"], window_size=5, scale=0.25)
record("laplacian", ["dhwc_u8"], window_size=3, dtype="dtype:float32")
record("laplacian", ["dhwc_u8"], window_size=[3, 5, 3], smoothing_size=[1, 3, 5], dtype="dtype:float32")
record("laplacian", ["small_u8"], window_size=23, normalized_kernel=True, dtype="dtype:float32")
record(
    "laplacian",
    [["hwc_f32", "hwc_f32"]],
    window_size={"batch": [[3], [5]], "dtype": "int32"},
    scale={"batch": [[1.0], [0.5, 2.0]], "dtype": "float32"},
)
record("laplacian", ["hwc_u8"], window_size=1)
record("laplacian", ["hwc_u8"], window_size=4)
record("laplacian", ["hwc_u8"], window_size=25)
record("laplacian", ["hwc_u8"], normalized_kernel=True, scale=2.0)
record("laplacian", ["hwc_u8"], scale=[1.0, 2.0, 3.0])
record("laplacian", ["hwc_u8"], dtype="dtype:int16")

# filter
for border in ["reflect_101", "reflect_1001", "wrap", "clamp", "constant"]:
    record("filter", ["hwc_u8", "f3x3"], border=border)
    record("filter", ["hwc_f32", "f5x3"], border=border)
record("filter", ["hwc_u8", "f_sharpen"])
record("filter", ["hwc_u8", "f_box"])
record("filter", ["hw_u8", "f4x6"])
record("filter", ["chw_u8", "f3x3"])
record("filter", ["fhwc_u8", "f5x3"])
record("filter", ["hwc_i16", "f3x3"])
record("filter", ["hwc_u16", "f_sharpen"])
record("filter", ["hwc_u8", "f3x3"], dtype="dtype:float32")
record("filter", ["hwc_u8", "f5x3"], mode="valid")
record("filter", ["hwc_u8", "f4x6"], mode="valid", dtype="dtype:float32")
record("filter", ["hwc_u8", "f4x6"])
record("filter", ["hwc_u8", "f3x3"], anchor=[0, 0])
record("filter", ["hwc_u8", "f5x3"], anchor=[4, 2], border="wrap")
record("filter", ["hwc_u8", "f4x6"], anchor=[1, 5], border="clamp")
record("filter", ["hwc_f32", "f3x3"], anchor=[0, 2], border="constant")
record("filter", [["hwc_u8", "small_u8"], ["f3x3", "f5x3"]])
record(
    "filter", [["hwc_u8", "small_u8"], ["f3x3", "f4x6"]], anchor={"batch": [[0, 0], [3, 1]], "dtype": "int32"}
)
record("filter", ["hwc_u8", "f3x3"], border="reflect")
record("filter", ["hwc_u8", "f3x3"], mode="full")
record("filter", ["hwc_u8", "f3x3"], anchor=[3, 0])
record("filter", ["hwc_u8", "f3x3"], dtype="dtype:int16")
record("filter", ["dhwc_u8", "f3x3"])


def record_fill(inputs_names, fill, fill_dtype, **kwargs):
    """filter with a fill_value input (the reference wants it in the input type)."""
    name = add_array(f"fill_{len(cases)}", np.array(fill, dtype=fill_dtype))
    LAYOUTS.setdefault(name.split("_")[0], "")
    record("filter", [*inputs_names, name], **kwargs)


LAYOUTS["fill"] = ""
add_array("pf_filters", rng.normal(0, 0.3, (3, 3, 3)).astype(np.float32))
add_array("pf_fill", np.array([0, 100, 250], np.uint8))
record("filter", ["fhwc_u8", "pf_filters"])
record("filter", ["fhwc_u8", "pf_filters"], mode="valid")
record("filter", ["fhwc_u8", "f3x3", "pf_fill"], border="constant")
record("filter", ["fhwc_u8", "pf_filters", "pf_fill"], border="constant", anchor=[0, 2])
record("filter", ["hwc_u8", "pf_filters"])
record_fill(["hwc_u8", "f3x3"], 200, np.uint8, border="constant")
record_fill(["hwc_u8", "f5x3"], 17, np.uint8, border="constant", anchor=[0, 1])
record_fill(["hwc_f32", "f3x3"], -0.75, np.float32, border="constant")
record_fill(["hwc_u8", "f3x3"], 200, np.uint8, border="reflect_101")

with open(HERE / "filter_cases.json", "w") as f:
    json.dump({"cases": cases}, f, indent=1)
np.savez_compressed(HERE / "filter_values.npz", **arrays)
print(len(cases), "cases;", sum("error" in c for c in cases), "errors")
for c in cases:
    if "error" in c:
        print(c["op"], c["inputs"], c["kwargs"], "->", c["error"][:200])
