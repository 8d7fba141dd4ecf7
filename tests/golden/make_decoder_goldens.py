"""Record what the reference's CPU image decoders return for the images of
tests/ops/image_samples.py.

Run with the reference's interpreter (never with the project's own venv):
    $HOME/dali-ref/bin/python tests/golden/make_decoder_goldens.py
Writes tests/golden/decoder_cases.json and decoder_values.npz:

    {
      "reference_version": "2.4.0",
        "signatures": {"decoders.image": [[name, kind, required], ...], ...},
      "cases": [{"id", "op", "sample" | "samples", "kwargs", "expected"}]
    }

``op`` is "image", "image_crop", "image_slice", "peek_image_shape" or "numpy" (whose
``array`` names a recipe of ``image_samples.npy_recipe``, saved with numpy.save); ``sample`` names
an image of image_samples (``samples``: a batch of them); in ``kwargs`` the values of
``output_type``/``image_type`` are names of ``types.DALIImageType`` members,
``dtype`` names of ``types.DALIDataType`` members, and {"batch": [...]} is a per-sample
argument. ``positional`` holds the anchor and shape inputs of image_slice as
{"dtype", "values"}. ``expected`` is the key of the result in the npz file (in batch
mode, keys "<id>/<i>"), or "error" when the reference failed.

Some calls crash the reference's process (ANY_DATA of a gray JPEG); they are left out.
"""

import inspect
import json
import os
import sys

import numpy as np
import nvidia.dali as dali
import nvidia.dali.experimental.dynamic as ndd
from nvidia.dali import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ops"))
import image_samples  # noqa: E402

CASES = []
VALUES = {}

# Calls that abort the reference's process instead of raising.
CRASHING = {("jpeg_gray", "ANY_DATA")}
# BGR is RGB reversed; a few samples show it.
BGR_SAMPLES = ("jpeg_q75_420", "png_rgba", "png_gray", "jpeg_exif6")


def _convert(kwargs):
    out = {}
    for name, value in kwargs.items():
        if name in ("output_type", "image_type"):
            value = getattr(types, value)
        elif name == "dtype":
            value = getattr(types, value)
        elif isinstance(value, dict) and "batch" in value:
            value = ndd.batch([np.array(v, dtype=np.float32) for v in value["batch"]])
        out[name] = value
    return out


def record(op, sample, kwargs, positional=None):
    case_id = f"{op}/{len(CASES)}"
    batch = isinstance(sample, list)
    if batch:
        data = ndd.batch([image_samples.encoded(s) for s in sample])
    else:
        data = ndd.tensor(image_samples.encoded(sample))
    fn = ndd.peek_image_shape if op == "peek_image_shape" else getattr(ndd.decoders, op)
    inputs = [data]
    if positional:
        inputs += [np.array(p["values"], dtype=p["dtype"]) for p in positional]
    try:
        result = fn(*inputs, **_convert(kwargs))
        if batch:
            arrays = [np.asarray(x) for x in result]
        else:
            arrays = [np.asarray(result)]
        expected = case_id
        if batch:
            for i, a in enumerate(arrays):
                VALUES[f"{case_id}/{i}"] = a
        else:
            VALUES[case_id] = arrays[0]
    except Exception:
        expected = "error"
    case = {"id": case_id, "op": op, "kwargs": kwargs, "expected": expected}
    case["samples" if batch else "sample"] = sample
    if positional:
        case["positional"] = positional
    CASES.append(case)


SIGNED = [
    "decoders.image",
    "decoders.image_crop",
    "decoders.image_random_crop",
    "decoders.image_slice",
    "decoders.numpy",
    "decoders.inflate",
    "experimental.decoders.image",
    "experimental.decoders.image_crop",
    "experimental.decoders.image_random_crop",
    "experimental.decoders.image_slice",
    "peek_image_shape",
    "experimental.peek_image_shape",
    "io.file.read",
    "imread",
]


def signatures():
    """Parameters (name, kind, required) of the public functions in SIGNED."""
    out = {}
    for path in SIGNED:
        fn = ndd
        for part in path.split("."):
            fn = getattr(fn, part)
        out[path] = [
            [p.name, p.kind.name, p.default is inspect.Parameter.empty]
            for p in inspect.signature(fn).parameters.values()
        ]
    return out


# .npy decoding cases: (array recipe, kwargs). Each runs in a fresh process: the
# reference reuses one decoder per call signature and then refuses files of another
# element type than the first one it decoded.
NUMPY_CASES = [
    ("arange_i16_3x4", {}),
    ("arange_i16_3x4", {"dtype": "FLOAT"}),
    ("arange_f64_2x3_fortran", {}),
    ("scalar_u8", {}),
    ("bools", {}),
    ("arange_f32_2x3", {"dtype": "INT32"}),
    ("big_endian_i32", {}),
]


_NUMPY_CHILD = """
import io, sys, json, numpy as np
import nvidia.dali.experimental.dynamic as ndd
from nvidia.dali import types
sys.path.insert(0, {ops!r})
from image_samples import npy_recipe
buf = io.BytesIO()
np.save(buf, npy_recipe({name!r}))
kwargs = {{k: getattr(types, v) for k, v in {kwargs!r}.items()}}
try:
    out = np.asarray(ndd.decoders.numpy(ndd.tensor(np.frombuffer(buf.getvalue(), np.uint8)), **kwargs))
    np.save(sys.argv[1], out)
except Exception:
    pass
"""


def record_numpy_cases():
    import subprocess
    import tempfile

    for name, kwargs in NUMPY_CASES:
        case_id = f"numpy/{len(CASES)}"
        with tempfile.TemporaryDirectory() as tmp:
            target = os.path.join(tmp, "out.npy")
            ops = os.path.join(os.path.dirname(HERE), "ops")
            code = _NUMPY_CHILD.format(ops=ops, name=name, kwargs=kwargs)
            subprocess.run([sys.executable, "-c", code, target], check=True, capture_output=True)
            expected = "error"
            if os.path.exists(target):
                VALUES[case_id] = np.load(target)
                expected = case_id
        CASES.append({"id": case_id, "op": "numpy", "array": name, "kwargs": kwargs, "expected": expected})


def record_later_cases():
    """Cases recorded after the first set (on image_samples.LATER_SAMPLE_NAMES), kept last
    so that the earlier case ids stay."""
    for dtype in ("UINT8", "INT16", "INT32", "UINT32", "FLOAT"):
        record("image", "png_ramp", {"dtype": dtype})
    for dtype in ("INT32", "UINT32"):
        record("image", "png_ramp", {"dtype": dtype, "output_type": "YCbCr"})
    for dtype in ("UINT8", "UINT16", "FLOAT"):
        for output_type in ("RGB", "GRAY"):
            record("image", "png_gray_alpha16", {"dtype": dtype, "output_type": output_type})
    for name in ("tiff_exif3", "tiff_exif6"):
        for adjust in (True, False):
            record("image", name, {"adjust_orientation": adjust})
            record("peek_image_shape", name, {"adjust_orientation": adjust})
        record("image_crop", name, {"crop": [10, 7], "crop_pos_x": 0.2, "crop_pos_y": 0.9})
    for output_type in ("GRAY", "RGB", "YCbCr"):
        record("image", "jpeg_stripes_420", {"output_type": output_type})
    record("image_crop", "jpeg_stripes_420", {"crop": [8, 9], "output_type": "GRAY"})
    for image_type in ("RGB", "ANY_DATA"):
        record("image", "png_palette_trns", {"output_type": image_type})
        record("peek_image_shape", "png_palette_trns", {"image_type": image_type})
    for output_type in ("RGB", "GRAY"):
        record("image", "jpeg_cmyk", {"output_type": output_type})
    for axes in ([-1, -2], [-2, -1], [-2, -3], [2]):
        record("image_slice", "png_rgb", {"start": [2, 5], "shape": [4, 6], "axes": axes})
    for names in ("HW", "WC", "C"):
        record("image_slice", "png_rgb", {"start": [2, 5], "shape": [4, 6], "axis_names": names})


def main():
    names = image_samples.SAMPLE_NAMES
    for name in names:
        for output_type in ("RGB", "BGR", "GRAY", "YCbCr", "ANY_DATA"):
            if (name, output_type) in CRASHING or (output_type == "BGR" and name not in BGR_SAMPLES):
                continue
            record("image", name, {"output_type": output_type})
        for image_type in ("RGB", "GRAY", "ANY_DATA"):
            for adjust in (True, False):
                record("peek_image_shape", name, {"image_type": image_type, "adjust_orientation": adjust})
    for name in ("jpeg_q75_420", "png_rgb", "png_gray", "png_rgba", "png_gray16", "png_rgb16", "png_palette"):
        for dtype in ("UINT16", "FLOAT"):
            for output_type in ("RGB", "GRAY", "YCbCr", "ANY_DATA"):
                record("image", name, {"output_type": output_type, "dtype": dtype})
    for name in ("png_gray16", "png_rgb16"):
        for output_type in ("RGB", "ANY_DATA"):
            record("image", name, {"output_type": output_type, "dtype": "UINT8"})
    for name in ("png_rgb16_filters", "png_rgba16_filters"):
        record("image", name, {"output_type": "ANY_DATA", "dtype": "UINT16"})
    for orientation in image_samples.EXIF_ORIENTATIONS:
        record("image", f"jpeg_exif{orientation}", {"adjust_orientation": False})
        record("image", f"jpeg_exif{orientation}", {"output_type": "GRAY"})
    for name in ("jpeg_q75_420", "jpeg_q50_420", "jpeg_q90_422"):
        record("image", name, {"jpeg_fancy_upsampling": True})
        record("image", name, {"use_fast_idct": True})
    for dtype in ("INT8", "INT16", "INT32", "INT64", "UINT32", "UINT64", "FLOAT16", "FLOAT64", "BOOL"):
        record("image", "png_rgb", {"dtype": dtype})
    for dtype in ("INT16", "INT32", "YCbCr"):
        if dtype != "YCbCr":
            record("image", "png_gray16", {"dtype": dtype})
    record("image", "jpeg_q75_420", {"dtype": "INT16", "output_type": "YCbCr"})
    for dtype in (
        "INT8",
        "INT16",
        "INT32",
        "UINT8",
        "UINT16",
        "UINT32",
        "UINT64",
        "FLOAT16",
        "FLOAT",
        "FLOAT64",
        "BOOL",
    ):
        record("peek_image_shape", "png_rgb", {"dtype": dtype})

    crops = [
        {"crop": [10, 20]},
        {"crop": [10, 20], "crop_pos_x": 0.3, "crop_pos_y": 0.7},
        {"crop": [10, 20], "crop_pos_x": 0.25, "crop_pos_y": 0.1},
        {"crop": [10, 20], "crop_pos_x": 0.25, "crop_pos_y": 0.1, "rounding": "truncate"},
        {"crop": [9.6, 13.6]},
        {"crop_w": 13.6, "crop_h": 9.6, "crop_pos_x": 1.0, "crop_pos_y": 0.0},
        {"crop": [image_samples.HEIGHT, image_samples.WIDTH]},
        {"crop": [image_samples.HEIGHT + 1, 20]},
        {"crop": [10, 20], "output_type": "GRAY"},
        {"crop": [10, 20], "output_type": "YCbCr", "dtype": "FLOAT"},
    ]
    for name in ("jpeg_q75_420", "png_rgba", "jpeg_exif6", "jpeg_exif7", "png_gray"):
        for kwargs in crops:
            record("image_crop", name, kwargs)
    record(
        "image_crop",
        ["jpeg_q75_420", "png_rgb", "jpeg_exif8"],
        {"crop": {"batch": [[10, 20], [5, 7], [20, 10]]}, "crop_pos_x": {"batch": [[0.0], [0.5], [1.0]]}},
    )

    slices = [
        {"start": [2, 3], "end": [10, 12]},
        {"rel_start": [0.1, 0.2], "rel_shape": [0.5, 0.5]},
        {"rel_start": [0.1, 0.2], "rel_end": [0.85, 0.75]},
        {"start": [2, 3], "shape": [5, 6], "axes": [0, 1]},
        {"start": [2, 3], "shape": [5, 6], "axis_names": "HW"},
        {"start": [4], "end": [20]},
        {"start": [-2, 3], "end": [10, 12]},
        {"start": [40, 3], "end": [50, 12]},
        {"rel_start": [0.35, 0.35], "rel_end": [0.65, 0.95], "output_type": "GRAY"},
    ]
    for name in ("jpeg_q75_420", "png_rgb", "jpeg_exif5", "jpeg_exif3"):
        for kwargs in slices:
            record("image_slice", name, kwargs)
        record(
            "image_slice",
            name,
            {},
            positional=[
                {"dtype": "float32", "values": [0.1, 0.2]},
                {"dtype": "float32", "values": [0.5, 0.5]},
            ],
        )
        record(
            "image_slice",
            name,
            {},
            positional=[{"dtype": "int32", "values": [3, 4]}, {"dtype": "int32", "values": [5, 6]}],
        )
        record(
            "image_slice",
            name,
            {"normalized_anchor": False},
            positional=[{"dtype": "float32", "values": [3, 4]}, {"dtype": "float32", "values": [0.5, 0.25]}],
        )

    record_numpy_cases()
    record_later_cases()
    with open(os.path.join(HERE, "decoder_cases.json"), "w") as f:
        json.dump(
            {"reference_version": dali.__version__, "signatures": signatures(), "cases": CASES}, f, indent=1
        )
    np.savez_compressed(os.path.join(HERE, "decoder_values.npz"), **VALUES)
    print(len(CASES), "cases,", sum(c["expected"] == "error" for c in CASES), "errors")


if __name__ == "__main__":
    main()
