"""Record reference outputs of the crop family (crop, crop_mirror_normalize, flip) and
the compositing operators (erase, paste, multi_paste, grid_mask, sequence_rearrange).

Run with the reference's Python (DALI 2.4.0):

    $HOME/dali-ref/bin/python tests/golden/make_crop_goldens.py

Writes ``crop_cases.json`` (one record per call: operator, input names, keyword
arguments, batch or not, and either the names of the expected output arrays or
``"error": true``) and ``crop_values.npz`` (the inputs and the expected outputs).
Keyword values are JSON: a per-sample value is ``{"per_sample": [...]}`` (a Batch
of float32, or int32 when ``"int": true``), a dtype is ``{"dtype": "float16"}``.
"""

import json
import pathlib
import sys

import numpy as np
import nvidia.dali.experimental.dynamic as ndd

HERE = pathlib.Path(__file__).parent


def _image(height, width, channels, seed):
    """A smooth gradient plus a little noise, as uint8."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([(y * 9 + x * 5 + 40 * c) % 256 for c in range(channels)], axis=-1)
    noise = rng.integers(0, 8, size=base.shape)
    return ((base + noise) % 256).astype(np.uint8)


def make_inputs():
    img = _image(20, 28, 3, 0)
    inputs = {
        "hwc": (img, "HWC"),
        "hwc_f32": ((img.astype(np.float32) * 1.25 - 40.0).astype(np.float32), "HWC"),
        "hwc_i16": ((img.astype(np.int16) * 3 - 200).astype(np.int16), "HWC"),
        "chw": (np.ascontiguousarray(img.transpose(2, 0, 1)), "CHW"),
        "fhwc": (np.stack([_image(12, 16, 3, s) for s in range(4)]), "FHWC"),
        "dhwc": (np.stack([_image(12, 16, 2, s + 10) for s in range(5)]), "DHWC"),
        "gray": (_image(20, 28, 1, 3), "HWC"),
        "hw": (_image(20, 28, 1, 4)[..., 0], "HW"),
        "nolayout": (_image(10, 12, 3, 5), ""),
    }
    batch = [_image(20, 28, 3, 6), _image(15, 31, 3, 7), _image(26, 18, 3, 8)]
    batches = {
        "batch": (batch, "HWC"),
        "batch_fhwc": ([_image(12, 16, 3, 20 + s)[None].repeat(3, 0) for s in range(2)], "FHWC"),
    }
    return inputs, batches


def _kwargs(raw):
    out = {}
    for key, value in raw.items():
        if isinstance(value, dict) and "per_sample" in value:
            dtype = np.int32 if value.get("int") else np.float32
            out[key] = ndd.batch([np.asarray(v, dtype=dtype) for v in value["per_sample"]])
        elif isinstance(value, dict) and "dtype" in value:
            out[key] = getattr(ndd, value["dtype"])
        else:
            out[key] = value
    return out


def crop_cases():
    cases = []
    add = lambda op, inp, **kw: cases.append((op, inp, kw))  # noqa: E731
    for pos in (0.0, 0.3, 0.5, 0.51, 1.0):
        add("crop", "hwc", crop=[7, 9], crop_pos_x=pos, crop_pos_y=1.0 - pos)
    for rounding in ("round", "truncate"):
        for size in (7.5, 8.5, 6.5, 7.49):
            add("crop", "hwc", crop=[size, size], rounding=rounding)
        for pos in (0.25, 0.5, 0.75):
            add(
                "crop",
                "hwc",
                crop=[25, 33],
                crop_pos_x=pos,
                crop_pos_y=pos,
                rounding=rounding,
                out_of_bounds_policy="pad",
            )
    add("crop", "hwc", crop_h=5, crop_w=6)
    add("crop", "hwc", crop_h=5)
    add("crop", "hwc")
    add("crop", "hwc", crop=[-3, 4])
    add("crop", "hwc", crop=[5])
    add("crop", "hwc", crop=[5, 5], crop_pos_x=1.5)
    add("crop", "hwc", crop=[5, 5], crop_w=3, crop_h=3)
    add("crop", "hwc", crop=[30, 9])
    add("crop", "hwc", crop=[30, 9], out_of_bounds_policy="pad")
    add("crop", "hwc", crop=[30, 40], out_of_bounds_policy="pad", fill_values=[1, 2, 3])
    add("crop", "hwc", crop=[30, 40], out_of_bounds_policy="pad", fill_values=[1, 2])
    add("crop", "hwc", crop=[30, 40], out_of_bounds_policy="trim_to_shape")
    add("crop", "hwc", crop=[30, 9], crop_pos_y=0.1, out_of_bounds_policy="trim_to_shape")
    add("crop", "hwc", crop=[6, 7], dtype={"dtype": "float32"})
    add("crop", "hwc", crop=[6, 7], dtype={"dtype": "float16"})
    add("crop", "hwc_f32", crop=[6, 7], dtype={"dtype": "uint8"})
    add(
        "crop",
        "hwc_f32",
        crop=[30, 7],
        dtype={"dtype": "uint8"},
        out_of_bounds_policy="pad",
        fill_values=[-5.5, 300.0, 7.7],
    )
    add("crop", "hwc_i16", crop=[6, 7])
    add("crop", "chw", crop=[6, 7], crop_pos_x=0.2)
    add("crop", "chw", crop=[26, 7], out_of_bounds_policy="pad", fill_values=[9, 8, 7])
    add("crop", "fhwc", crop=[5, 6])
    add("crop", "fhwc", crop=[2, 5, 6], crop_pos_z=0.9)
    add("crop", "fhwc", crop_d=3, crop_h=5, crop_w=6, crop_pos_z=0.2)
    add("crop", "dhwc", crop=[2, 5, 6], crop_pos_z=0.7, crop_pos_x=0.1)
    add("crop", "dhwc", crop=[7, 5, 6], out_of_bounds_policy="pad", fill_values=[3, 4])
    add("crop", "gray", crop=[4, 4], crop_pos_x=0.8)
    add("crop", "hw", crop=[4, 5])
    add("crop", "nolayout", crop=[4, 5])
    add(
        "crop",
        "batch",
        crop=[6, 8],
        crop_pos_x={"per_sample": [0.0, 0.5, 1.0]},
        crop_pos_y={"per_sample": [0.9, 0.2, 0.4]},
    )
    add("crop", "batch", crop={"per_sample": [[3, 4], [5, 6], [7, 2]]})
    add(
        "crop",
        "batch",
        crop_h={"per_sample": [3, 4, 30]},
        crop_w={"per_sample": [5, 6, 7]},
        out_of_bounds_policy="pad",
    )
    add("crop", "batch_fhwc", crop=[2, 4, 5], crop_pos_z={"per_sample": [0.0, 1.0]})

    norm = {"mean": [123.675, 116.28, 103.53], "std": [58.395, 57.12, 57.375]}
    cmn = "crop_mirror_normalize"
    add(cmn, "hwc")
    add(cmn, "hwc", **norm)
    add(cmn, "hwc", **norm, output_layout="HWC")
    add(cmn, "hwc", **norm, mirror=1, crop=[16, 20], crop_pos_x=0.2, crop_pos_y=0.7)
    add(cmn, "hwc", **norm, scale=0.7, shift=0.3)
    add(cmn, "hwc", mean=[128.0], std=[64.0], scale=64.0, shift=128.0, dtype={"dtype": "uint8"})
    add(cmn, "hwc", mean=[4.0, 100.0, 200.0], std=[2.0], dtype={"dtype": "int8"}, output_layout="HWC")
    add(cmn, "hwc", mean=[10.3], std=[2.7], dtype={"dtype": "uint8"}, mirror=1)
    add(cmn, "hwc", **norm, dtype={"dtype": "float16"})
    add(cmn, "hwc", mean=1.5, std=3.0)
    add(cmn, "hwc", mean=[1, 2], std=[1])
    add(cmn, "hwc", dtype={"dtype": "int16"})
    add(cmn, "hwc", output_layout="CWH")
    add(cmn, "hwc", output_layout="HWCX")
    add(cmn, "hwc", pad_output=True)
    add(cmn, "hwc", pad_output=True, output_layout="HWC", fill_values=[7, 8, 9, 10])
    add(
        cmn,
        "hwc",
        pad_output=True,
        output_layout="HWC",
        crop=[30, 9],
        out_of_bounds_policy="pad",
        fill_values=[1, 2, 3, 4],
        **norm,
    )
    add(
        cmn,
        "hwc",
        pad_output=True,
        output_layout="HWC",
        crop=[3, 9],
        out_of_bounds_policy="pad",
        fill_values=[5],
    )
    add(cmn, "hwc", pad_output=True, crop=[30, 9], out_of_bounds_policy="trim_to_shape", fill_values=[5])
    add(cmn, "hwc", pad_output=True, crop=[30, 9], out_of_bounds_policy="pad", fill_values=[1, 2, 3])
    add(
        cmn,
        "hwc",
        crop=[30, 40],
        out_of_bounds_policy="pad",
        fill_values=[1, 2, 3],
        mean=[1, 1, 1],
        std=[2, 2, 2],
        mirror=1,
    )
    add(
        cmn,
        "hwc",
        crop=[4, 34],
        out_of_bounds_policy="pad",
        mirror=1,
        fill_values=[7],
        dtype={"dtype": "uint8"},
        output_layout="HWC",
    )
    add(cmn, "hwc", crop=[30, 9])
    add(cmn, "hwc", crop=[5, 6], crop_pos_x=1.5)
    add(cmn, "hwc", crop=[7.5, 9.5], crop_pos_x=0.5, crop_pos_y=0.25, rounding="truncate", **norm)
    add(cmn, "hwc_f32", **norm, mirror=1)
    add(cmn, "hwc_i16", mean=[-3.0], std=[5.0], output_layout="HWC", crop=[10, 12])
    add(cmn, "chw", **norm, crop=[10, 12], mirror=1)
    add(cmn, "chw", **norm, crop=[10, 12], output_layout="HWC")
    add(cmn, "gray", mean=[100.0], std=[50.0], crop=[8, 8], mirror=1)
    add(cmn, "hw")
    add(cmn, "fhwc")
    add(cmn, "fhwc", output_layout="FCHW", crop=[5, 6], mirror=1, mean=[5.0], std=[3.0])
    add(cmn, "fhwc", output_layout="CFHW", crop=[2, 5, 6], crop_pos_z=1.0)
    add(cmn, "dhwc", output_layout="CDHW", crop=[3, 5, 6], mirror=1, mean=[1.0, 2.0], std=[3.0, 4.0])
    add(cmn, "dhwc", output_layout="DHWC", crop_d=2, crop_h=5, crop_w=6, crop_pos_z=0.0)
    add(cmn, "nolayout", crop=[4, 5])
    add(cmn, "batch", **norm, crop=[10, 12], mirror={"per_sample": [0, 1, 1], "int": True})
    add(
        cmn,
        "batch",
        crop=[10, 12],
        mean={"per_sample": [[1, 2, 3], [4, 5, 6], [7, 8, 9]]},
        std={"per_sample": [[2], [3], [4]]},
        crop_pos_x={"per_sample": [0.1, 0.5, 0.9]},
    )
    add(
        cmn,
        "batch",
        crop={"per_sample": [[10, 12], [5, 6], [30, 2]]},
        out_of_bounds_policy="pad",
        fill_values=[-1.0],
        output_layout="HWC",
        **norm,
    )
    add(cmn, "batch_fhwc", crop=[4, 5], output_layout="FCHW", mirror={"per_sample": [1, 0], "int": True})

    add("flip", "hwc")
    add("flip", "hwc", horizontal=0, vertical=1)
    add("flip", "hwc", horizontal=2, vertical=1)
    add("flip", "hwc", horizontal=0)
    add("flip", "hwc_f32", vertical=1)
    add("flip", "chw")
    add("flip", "chw", horizontal=0, vertical=1)
    add("flip", "fhwc", depthwise=1)
    add("flip", "fhwc", horizontal=0, vertical=1)
    add("flip", "dhwc", depthwise=1, horizontal=0)
    add("flip", "dhwc", depthwise=1, vertical=1)
    add("flip", "gray", vertical=1)
    add("flip", "hw")
    add("flip", "nolayout", vertical=1)
    add(
        "flip",
        "batch",
        horizontal={"per_sample": [0, 1, 1], "int": True},
        vertical={"per_sample": [1, 0, 1], "int": True},
    )
    return cases


def compose_cases():
    return []


def run(cases, inputs, batches, values, records):
    for op, inp, kw in cases:
        name = f"case{len(records)}"
        record = {"name": name, "op": op, "input": inp, "kwargs": kw, "batch": inp in batches}
        try:
            if inp in batches:
                samples, layout = batches[inp]
                x = ndd.batch(samples, layout=layout or None)
            else:
                arr, layout = inputs[inp]
                x = ndd.as_tensor(arr, layout=layout or None)
            fn = ndd
            for part in op.split("."):
                fn = getattr(fn, part)
            result = fn(x, **_kwargs(kw))
            if inp in batches:
                outs = [np.asarray(s) for s in result.tensors]
            else:
                outs = [np.asarray(result)]
            record["layout"] = result.layout or ""
            record["dtype"] = str(outs[0].dtype)
            record["outputs"] = []
            for i, out in enumerate(outs):
                key = f"{name}_{i}"
                values[key] = out
                record["outputs"].append(key)
        except Exception as e:  # noqa: BLE001 - the reference rejecting a call is what we record
            record["error"] = True
            record["message"] = str(e).splitlines()[0][:200]
        records.append(record)


def main():
    inputs, batches = make_inputs()
    values = {}
    for key, (arr, _) in inputs.items():
        values[f"input_{key}"] = arr
    for key, (samples, _) in batches.items():
        for i, s in enumerate(samples):
            values[f"input_{key}_{i}"] = s
    records = []
    run(crop_cases() + compose_cases(), inputs, batches, values, records)
    meta = {
        "inputs": {k: {"layout": lay} for k, (_, lay) in inputs.items()},
        "batches": {k: {"layout": lay, "size": len(s)} for k, (s, lay) in batches.items()},
        "cases": records,
    }
    (HERE / "crop_cases.json").write_text(json.dumps(meta, indent=1) + "\n")
    np.savez_compressed(HERE / "crop_values.npz", **values)
    errors = sum(1 for r in records if r.get("error"))
    print(f"{len(records)} cases ({errors} rejected by the reference)", file=sys.stderr)


if __name__ == "__main__":
    main()
