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
        "wide": (_image(12, 35, 1, 9), "HWC"),
        "hwc5": (_image(9, 11, 5, 10), "HWC"),
    }
    batch = [_image(20, 28, 3, 6), _image(15, 31, 3, 7), _image(26, 18, 3, 8)]
    same = [(np.arange(6 * 8 * 3).reshape(6, 8, 3) % 250 + 1 + 3 * i).astype(np.uint8) for i in range(3)]
    batches = {
        "batch_same": (same, "HWC"),
        "batch_same100": ([s + 100 for s in same], "HWC"),
        "batch_same_f32": ([(s.astype(np.float32) * 3 - 5.5) for s in same], "HWC"),
        "batch": (batch, "HWC"),
        "batch_fhwc": ([_image(12, 16, 3, 20 + s)[None].repeat(3, 0) for s in range(2)], "FHWC"),
    }
    return inputs, batches


def _kwargs(raw):
    out = {}
    for key, value in raw.items():
        if isinstance(value, dict) and "per_sample" in value:
            dtype = np.int32 if value.get("int") else np.bool_ if value.get("bool") else np.float32
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
    cases = []
    add = lambda op, inp, **kw: cases.append((op, inp, kw))  # noqa: E731
    add("erase", "hwc", anchor=[1, 2], shape=[2, 3])
    add("erase", "hwc", anchor=[1, 2, 14, 20], shape=[2, 3, 10, 10])
    add("erase", "hwc", anchor=[1, 2], shape=[2, 3], axis_names="WH")
    add("erase", "hwc", anchor=[1.4, 2.5], shape=[2.5, 3.5])
    add("erase", "hwc", anchor=[1.6, 2.4], shape=[1.5, 0.5])
    add("erase", "hwc", anchor=[-1.5, -0.5], shape=[3.2, 2.9])
    add("erase", "hwc", anchor=[0.2, 0.3], shape=[0.5, 0.4], normalized=True)
    add("erase", "hwc", anchor=[0.2, 0.3], shape=[2, 3], normalized_anchor=True)
    add("erase", "hwc", anchor=[2, 3], shape=[0.35, 0.45], normalized_shape=True)
    add("erase", "hwc", anchor=[3, 4], shape=[2, 3], centered_anchor=True)
    add("erase", "hwc", anchor=[3, 4], shape=[3, 3], centered_anchor=True)
    add("erase", "hwc", anchor=[0.5, 0.5], shape=[0.3, 0.3], centered_anchor=True, normalized=True)
    add("erase", "hwc", anchor=[1, 2], shape=[2, 3], fill_value=[7, 8, 9])
    add("erase", "hwc", anchor=[1, 2], shape=[2, 3], fill_value=300)
    add("erase", "hwc", anchor=[1, 2], shape=[2, 3], fill_value=-1.7)
    add("erase", "hwc", anchor=[1, 2], shape=[2, 3], fill_value=[7, 8])
    add("erase", "hwc", anchor=[1], shape=[1], axis_names="C")
    add("erase", "hwc", anchor=[1, 2, 0], shape=[2, 3, 2], axis_names="HWC")
    add("erase", "hwc", anchor=[1, 2], shape=[2, 3], axes=[0, 1])
    add("erase", "hwc", anchor=[15, 20], shape=[10, 10])
    add("erase", "hwc", anchor=[-1, -1], shape=[2, 3])
    add("erase", "hwc")
    add("erase", "hwc", shape=[2, 3])
    add("erase", "hwc", anchor=[1, 2, 3], shape=[2, 3])
    add("erase", "hwc_f32", anchor=[1, 2], shape=[2, 3], fill_value=-1.5)
    add("erase", "chw", anchor=[1, 2], shape=[2, 3], fill_value=[7, 8, 9])
    add("erase", "fhwc", anchor=[1, 2, 3], shape=[2, 3, 4], axis_names="FHW", fill_value=[1, 2, 3])
    add("erase", "nolayout", anchor=[1, 2], shape=[2, 3], axes=[0, 1])
    add(
        "erase",
        "batch",
        anchor={"per_sample": [[1, 2], [0, 0, 3, 3], [5, 5]]},
        shape={"per_sample": [[2, 3], [1, 1, 2, 2], [4, 4]]},
        fill_value={"per_sample": [[1], [2], [3]]},
    )

    for ratio, px, py in (
        (2.0, 0.5, 0.5),
        (1.5, 0.5, 0.5),
        (1.3, 0.0, 1.0),
        (1.7, 0.3, 0.6),
        (1.1, 0.5, 0.5),
        (1.25, 0.77, 0.23),
        (1.9, 1.0, 0.0),
        (2.5, 0.25, 0.75),
        (3.0, 0.77, 0.23),
    ):
        add("paste", "hwc", ratio=ratio, paste_x=px, paste_y=py, fill_value=[10, 20, 30])
    add("paste", "hwc", ratio=1.0, fill_value=[10, 20, 30], min_canvas_size=31)
    add("paste", "hwc", ratio=1.2, fill_value=[10, 20, 30], min_canvas_size=29.5)
    add("paste", "hwc", ratio=0.5, fill_value=[10, 20, 30])
    add("paste", "hwc", ratio=2, fill_value=[10])
    add("paste", "hwc", ratio=2, fill_value=[300, -1, 20])
    add("paste", "hwc", ratio=2, fill_value=[10, 20, 30], n_channels=4)
    add("paste", "gray", ratio=1.6, fill_value=[10], n_channels=1)
    add("paste", "hwc_f32", ratio=2, fill_value=[10, 20, 30])
    add("paste", "chw", ratio=2, fill_value=[10, 20, 30])
    add("paste", "nolayout", ratio=1.5, fill_value=[1, 2, 3])
    add(
        "paste",
        "batch",
        ratio={"per_sample": [1.5, 2.0, 1.2]},
        paste_x={"per_sample": [0.1, 0.5, 0.9]},
        paste_y={"per_sample": [0.9, 0.5, 0.0]},
        min_canvas_size={"per_sample": [0, 40, 0]},
        fill_value=[5, 6, 7],
    )

    add("grid_mask", "hwc")
    add("grid_mask", "hwc", tile=4)
    add("grid_mask", "hwc", tile=5, ratio=0.3)
    add("grid_mask", "hwc", tile=6, shift_x=2.5, shift_y=-1)
    for tile, ratio, angle, sx, sy in (
        (6, 0.5, 0.5, 0, 0),
        (7, 0.4, 1.1, 2.5, -3.2),
        (5, 0.6, -0.7, 1.3, 0.4),
        (10, 0.35, 2.0, 4, 7),
    ):
        add("grid_mask", "hwc", tile=tile, ratio=ratio, angle=angle, shift_x=sx, shift_y=sy)
    add("grid_mask", "hwc_f32", tile=6, ratio=0.7, angle=0.3)
    add("grid_mask", "chw", tile=6, angle=0.3)
    add("grid_mask", "fhwc", tile=5, angle=0.2)
    add("grid_mask", "gray", tile=4, ratio=0.25)
    add("grid_mask", "nolayout", tile=4)
    add("grid_mask", "hwc", tile=4, ratio=1.0)
    add("grid_mask", "hwc", tile=4, ratio=0.0)
    add(
        "grid_mask",
        "batch",
        tile={"per_sample": [4, 6, 9], "int": True},
        angle={"per_sample": [0.0, 0.4, -1.0]},
        ratio={"per_sample": [0.5, 0.3, 0.6]},
    )

    add("sequence_rearrange", "fhwc", new_order=[3, 0, 0, 1])
    add("sequence_rearrange", "fhwc", new_order=[2])
    add("sequence_rearrange", "fhwc", new_order=[4])
    add("sequence_rearrange", "fhwc", new_order=[-1])
    add("sequence_rearrange", "fhwc", new_order=[])
    add("sequence_rearrange", "chw", new_order=[1, 0])
    add("sequence_rearrange", "nolayout", new_order=[9, 0, 3])
    add("sequence_rearrange", "batch_fhwc", new_order={"per_sample": [[1, 2], [2, 2, 0, 1]], "int": True})

    add("per_frame", "hwc")
    add("per_frame", "hwc", replace=True)
    add("per_frame", "fhwc")
    add("per_frame", "nolayout")
    add("per_frame", "batch", replace=True)

    mp = "multi_paste"
    ids = lambda *v: {"per_sample": list(v), "int": True}  # noqa: E731
    rel = lambda *v: {"per_sample": list(v)}  # noqa: E731
    add(
        mp,
        "batch_same",
        in_ids=ids([0, 1], [2], [1]),
        in_anchors=ids([[0, 0], [2, 3]], [[1, 1]], [[0, 0]]),
        shapes=ids([[2, 2], [3, 3]], [[2, 2]], [[6, 8]]),
        out_anchors=ids([[0, 0], [3, 5]], [[0, 0]], [[0, 0]]),
        output_size=ids([6, 8], [6, 8], [6, 8]),
    )
    add(
        mp,
        "batch_same",
        in_anchors=ids([[0, 0]], [[1, 1]], [[0, 0]]),
        shapes=ids([[2, 2]], [[2, 2]], [[6, 8]]),
    )
    add(mp, "batch_same", in_ids=ids([0], [1], [2]))
    add(mp, "batch_same", in_ids=ids([0], [1], [2]), output_size=ids([3, 4], [7, 9], [6, 8]))
    add(
        mp,
        "batch_same",
        in_ids=ids([0], [1], [2]),
        shapes=ids([[2, 3]], [[2, 3]], [[2, 3]]),
        output_size=ids([3, 4], [7, 9], [6, 8]),
    )
    add(
        mp,
        "batch_same",
        in_ids=ids([0], [1], [2]),
        shapes=ids([[2, 3]], [[2, 3]], [[2, 3]]),
        output_size=[7, 9],
    )
    add(mp, "batch_same", in_ids=ids([1], [0], [2]), in_anchors=ids([[2, 3]], [[1, 1]], [[0, 0]]))
    add(
        mp,
        "batch_same",
        in_ids=ids([0], [1], [2]),
        in_anchors_rel=rel([[0.5, 0.5]], [[0.2, 0.3]], [[0, 0]]),
        shapes_rel=rel([[0.5, 0.5]], [[0.3, 0.3]], [[1, 1]]),
        out_anchors_rel=rel([[0.1, 0.2]], [[0.5, 0.5]], [[0, 0]]),
    )
    add(
        mp,
        "batch_same",
        in_ids=ids([0], [1], [2]),
        in_anchors_rel=rel([[0.1, 0.1]], [[0.25, 0.3]], [[0.5, 0.5]]),
        shapes_rel=rel([[0.45, 0.45]], [[0.55, 0.3]], [[0.4, 0.1]]),
    )
    add(
        mp,
        "batch_same",
        in_ids=ids([0, 1], [1], [2]),
        out_anchors=ids([[0, 0], [1, 1]], [[0, 0]], [[0, 0]]),
        shapes=ids([[3, 3], [3, 3]], [[1, 1]], [[1, 1]]),
    )
    add(mp, "batch_same", in_ids=ids([0], [1], [2]), out_anchors=ids([[5, 7]], [[0, 0]], [[0, 0]]))
    add(mp, "batch_same", in_ids=ids([0], [1], [2]), in_anchors=ids([[5, 7]], [[0, 0]], [[0, 0]]))
    add(mp, "batch_same", in_ids=ids([3], [1], [2]))
    add(mp, "batch_same", in_ids=ids([0], [1], [2]), in_anchors=ids([[0, 0, 0]], [[0, 0, 0]], [[0, 0, 0]]))
    add(
        mp,
        "batch_same",
        in_ids=ids([0], [1], [2]),
        in_anchors=ids([[0, 0]], [[0, 0]], [[0, 0]]),
        in_anchors_rel=rel([[0, 0]], [[0, 0]], [[0, 0]]),
    )
    add(mp, "batch_same", in_ids=[0, 1], shapes=[[2, 2], [1, 1]], out_anchors=[[0, 0], [4, 4]])
    add(mp, "batch_same", in_ids=ids([0], [1], [2]), dtype={"dtype": "float32"})
    add(
        mp,
        "batch_same_f32",
        in_ids=ids([0, 2], [1], [2]),
        dtype={"dtype": "uint8"},
        out_anchors=ids([[0, 0], [2, 2]], [[0, 0]], [[0, 0]]),
        shapes=ids([[3, 3], [2, 2]], [[6, 8]], [[1, 1]]),
    )
    add(
        mp,
        "batch_same+batch_same100",
        in_anchors=ids([[0, 0], [1, 1]], [[0, 0], [2, 2]], [[0, 0], [0, 0]]),
        shapes=ids([[2, 2], [2, 2]], [[1, 1], [1, 1]], [[1, 1], [1, 1]]),
        out_anchors=ids([[0, 0], [3, 3]], [[0, 0], [4, 4]], [[0, 0], [1, 1]]),
    )
    add(mp, "batch_same+batch_same100")
    add(mp, "batch_same")
    add(mp, "batch", in_ids=ids([1], [0], [2]))
    add(mp, "batch", in_ids=ids([1], [0], [2]), output_size=ids([20, 31], [20, 31], [30, 30]))
    add(mp, "batch_same+batch_same100", in_ids=ids([0], [1], [2]))
    # Recorded last so that the names of the cases above stay put.
    add(
        "crop_mirror_normalize",
        "hwc",
        crop=[30, 9],
        out_of_bounds_policy="pad",
        fill_values=[1, 2, 3],
        mean=[1],
        std=[2],
        output_layout="HWC",
    )
    return cases


def later_cases():
    """Cases recorded after the first set, kept last so that the earlier case names stay."""
    cases = []
    add = lambda op, inp, **kw: cases.append((op, inp, kw))  # noqa: E731
    cmn = "crop_mirror_normalize"
    # Window starts near halves: the position is single precision, the product double.
    for pos in (0.02, 0.06, 0.14, 0.7, 0.9):
        add("crop", "wide", crop=[10, 10], crop_pos_x=pos)
        add(cmn, "wide", crop=[10, 10], crop_pos_x=pos, output_layout="HWC")
    # The input's own type is an output type too.
    add("crop", "hwc_i16", crop=[5, 5], dtype={"dtype": "int16"})
    add("crop", "hwc_i16", crop=[5, 5], dtype={"dtype": "int32"})
    # pad_output pads the channels to a power of two.
    add(cmn, "gray", pad_output=True)
    add(cmn, "dhwc", pad_output=True)
    add(cmn, "hwc5", pad_output=True, mean=[10.0], std=[3.0])
    add(
        cmn,
        "hwc5",
        pad_output=True,
        output_layout="HWC",
        crop=[12, 9],
        out_of_bounds_policy="pad",
        fill_values=[1, 2, 3, 4, 5, 6, 7, 8],
    )
    add("paste", "hwc", ratio=3.0, fill_value=[0], paste_x=-0.01)
    add("paste", "hwc", ratio=3.0, fill_value=[0], paste_y=1.05)
    add("flip", "batch", horizontal={"per_sample": [True, False, True], "bool": True})
    # Without axis_names, erase works on every axis but C: F or D too.
    for inp in ("fhwc", "dhwc"):
        add("erase", inp, anchor=[1, 2, 3], shape=[2, 5, 4])
        add("erase", inp, anchor=[1, 2], shape=[2, 5])
        add("erase", inp, anchor=[1, 2], shape=[2, 5], axis_names="HW")
    return cases


def run(cases, inputs, batches, values, records):
    for op, inp, kw in cases:
        name = f"case{len(records)}"
        is_batch = inp.split("+")[0] in batches
        record = {"name": name, "op": op, "input": inp, "kwargs": kw, "batch": is_batch}
        try:
            xs = []
            for part in inp.split("+"):
                if part in batches:
                    samples, layout = batches[part]
                    xs.append(ndd.batch(samples, layout=layout or None))
                else:
                    arr, layout = inputs[part]
                    xs.append(ndd.as_tensor(arr, layout=layout or None))
            fn = ndd
            for part in op.split("."):
                fn = getattr(fn, part)
            result = fn(*xs, **_kwargs(kw))
            if is_batch:
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
    run(crop_cases() + compose_cases() + later_cases(), inputs, batches, values, records)
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
