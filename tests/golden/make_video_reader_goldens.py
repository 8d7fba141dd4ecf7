"""Record the reference's experimental.readers.Video (CPU): which sequences each
configuration gives, their frames, labels, frame numbers and timestamps, errors.

Run with the reference's interpreter:
    $HOME/dali-ref/bin/python tests/golden/make_video_reader_goldens.py
Writes tests/golden/video_reader_reference.json. The dataset comes from
tests/readers/video_dataset.py (written with PyAV in a temporary folder, the working
directory while reading); a frame is recorded by its number (``frame_ids``), so the
goldens do not depend on the encoder's exact bytes.

    {
      "reference_version": "2.4.0",
      "cases": {case: {"kwargs", "outputs", "epoch_size", "samples": [sample]} or {"kwargs", "error"}},
                    # "outputs": the names of the outputs; a sample: {"frames": [frame
                    #  number, ...], "shape", "label", "frame_num", "timestamps"} (those present)
      "starts": [{"video", "kwargs", "none": [first frames] or null, "constant": [...]}],
                    # null: no sequence at all (the reference then refuses the dataset)
      "differences": {case: {"kwargs", "reference": [sample] or error}}
                    # what the reference does where ndd differs on purpose
    }
"""

import json
import os
import re
import sys
import tempfile
import warnings

import numpy as np
import nvidia.dali as dali
import nvidia.dali.experimental.dynamic as ndd
import nvidia.dali.types as types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "readers"))
import video_dataset as vd  # noqa: E402

V10, V7, V3, V1 = "clips/v10.webm", "clips/v7.webm", "clips/v3.webm", "clips/v1.webm"
SEQ = {"enable_frame_num": "sequence", "enable_timestamps": True}

CASES = {
    "whole_sequences": {"filenames": [V10], "sequence_length": 3},
    "step_2": {"filenames": [V10], "sequence_length": 3, "step": 2},
    "stride_2": {"filenames": [V10], "sequence_length": 3, "stride": 2, **SEQ},
    "stride_3_step_1": {"filenames": [V10], "sequence_length": 3, "stride": 3, "step": 1, **SEQ},
    "step_0_is_the_default": {"filenames": [V10], "sequence_length": 4, "step": 0},
    "constant": {"filenames": [V10], "sequence_length": 4, "pad_mode": "constant", "fill_value": [9], **SEQ},
    "constant_per_channel": {
        "filenames": [V3],
        "sequence_length": 5,
        "pad_mode": "constant",
        "fill_value": [1, 2, 3],
        **SEQ,
    },
    "edge": {"filenames": [V7], "sequence_length": 5, "pad_mode": "edge", **SEQ},
    "repeat": {"filenames": [V7], "sequence_length": 5, "pad_mode": "repeat", **SEQ},
    "reflect_101": {"filenames": [V10], "sequence_length": 4, "step": 3, "pad_mode": "reflect_101", **SEQ},
    "reflect": {"filenames": [V3], "sequence_length": 9, "pad_mode": "reflect", **SEQ},
    "reflect_1001": {"filenames": [V7], "sequence_length": 5, "pad_mode": "reflect_1001", **SEQ},
    "symmetric": {"filenames": [V3], "sequence_length": 9, "pad_mode": "symmetric", **SEQ},
    "padded_with_stride": {
        "filenames": [V10],
        "sequence_length": 4,
        "stride": 3,
        "step": 5,
        "pad_mode": "reflect",
        **SEQ,
    },
    "one_frame_video_padded": {"filenames": [V1], "sequence_length": 3, "pad_mode": "reflect", **SEQ},
    "labels_frame_num_timestamps": {
        "filenames": [V10, V3],
        "labels": [5, 7],
        "sequence_length": 3,
        "enable_frame_num": True,
        "enable_timestamps": True,
    },
    "one_label": {"filenames": V3, "labels": 4, "sequence_length": 2, "enable_frame_num": "scalar"},
    "frame_num_false": {"filenames": [V3], "sequence_length": 2, "enable_frame_num": False},
    "file_root": {"file_root": "classes", "sequence_length": 2, "enable_frame_num": "scalar"},
    "uniform_sample": {"filenames": [V10, V3, V1], "sequence_length": 4, "uniform_sample": True, **SEQ},
    "uniform_sample_ignores_stride": {
        "filenames": [V7],
        "sequence_length": 3,
        "uniform_sample": True,
        "stride": 5,
        "pad_mode": "constant",
        "enable_frame_num": "scalar",
    },
    "frames_list": {
        "file_list": "frames.txt",
        "file_list_format": "frames",
        "sequence_length": 4,
        "pad_mode": "constant",
        **SEQ,
    },
    "frames_list_all_down": {
        "file_list": "frames.txt",
        "file_list_format": "frames",
        "file_list_rounding": "all_down",
        "sequence_length": 4,
        "pad_mode": "constant",
        **SEQ,
    },
    "frames_list_not_include_end": {
        "file_list": "frames.txt",
        "file_list_format": "frames",
        "file_list_include_end": False,
        "sequence_length": 2,
        "enable_frame_num": "scalar",
    },
    "frames_list_reflect": {
        "file_list": "frames.txt",
        "file_list_format": "frames",
        "sequence_length": 4,
        "pad_mode": "reflect",
        **SEQ,
    },
    "frames_list_uniform": {
        "file_list": "frames.txt",
        "file_list_format": "frames",
        "sequence_length": 3,
        "uniform_sample": True,
        **SEQ,
    },
    "frames_list_past_the_end": {
        "file_list": "past_the_end.txt",
        "file_list_format": "frames",
        "sequence_length": 4,
        "pad_mode": "constant",
        **SEQ,
    },
    "empty_ranges_are_skipped": {
        "file_list": "empty_range.txt",
        "file_list_format": "frames",
        "sequence_length": 2,
        "enable_frame_num": "scalar",
    },
    "vp8": {"filenames": ["codecs/vp8.webm"], "sequence_length": 4, "enable_timestamps": True},
    "mjpeg": {"filenames": ["codecs/mjpeg.avi"], "sequence_length": 2, "enable_timestamps": True},
    "junk_is_skipped": {"filenames": ["clips/junk.webm", V3], "sequence_length": 2},
    "sharded": {
        "filenames": [V10, V7],
        "sequence_length": 2,
        "num_shards": 2,
        "shard_id": 1,
        "enable_frame_num": True,
    },
    # errors
    "no_whole_sequence": {"filenames": [V3], "sequence_length": 5},
    "labels_count": {"filenames": [V3, V7], "labels": [4], "sequence_length": 2},
    "two_sources": {"filenames": [V3], "file_root": "classes", "sequence_length": 2},
    "no_source": {"sequence_length": 2},
    "bad_pad_mode": {"filenames": [V3], "sequence_length": 2, "pad_mode": "wrap"},
    "fill_value_count": {
        "filenames": [V3],
        "sequence_length": 2,
        "pad_mode": "constant",
        "fill_value": [1, 2],
    },
    "fill_value_range": {
        "filenames": [V3],
        "sequence_length": 2,
        "pad_mode": "constant",
        "fill_value": [300],
    },
    "bad_frame_num": {"filenames": [V3], "sequence_length": 2, "enable_frame_num": "first"},
    "gray": {"filenames": [V3], "sequence_length": 2, "image_type": "GRAY"},
    "bad_list_format": {"file_list": "frames.txt", "file_list_format": "frame_index", "sequence_length": 2},
    "missing_file": {"filenames": ["clips/none.webm"], "sequence_length": 2},
}

for _rounding in ("start_down_end_up", "start_up_end_down", "all_up", "all_down"):
    CASES[f"times_list_{_rounding}"] = {
        "file_list": "times.txt",
        "file_list_rounding": _rounding,
        "sequence_length": 8,
        "pad_mode": "constant",
        **SEQ,
    }

# Where ndd differs on purpose (see the reader's docstring and the tests).
DIFFERENCES = {
    "only_start": {"file_list": "only_start.txt", "file_list_format": "frames", "sequence_length": 2, **SEQ},
    "past_the_end_not_include_end": {
        "file_list": "past_the_end.txt",
        "file_list_format": "frames",
        "file_list_include_end": False,
        "sequence_length": 4,
        "pad_mode": "constant",
        **SEQ,
    },
    "time_past_the_end": {"file_list": "times_past.txt", "sequence_length": 2, "enable_frame_num": True},
    "sequence_length_0": {"filenames": [V3], "sequence_length": 0},
    "ycbcr": {"filenames": [V3], "sequence_length": 2, "image_type": "YCbCr"},
}

# (stride, step, sequence_length) for the table of sequence starts.
START_CONFIGS = [(1, -1, 3), (2, -1, 3), (2, 1, 3), (3, 2, 2), (3, 5, 4), (1, 2, 3), (1, 5, 2), (2, 3, 4)]


def reference_kwargs(kwargs):
    kwargs = dict(kwargs)
    if "image_type" in kwargs:
        kwargs["image_type"] = getattr(types.DALIImageType, kwargs["image_type"])
    return kwargs


def outputs_of(kwargs):
    names = ["frames"]
    if "labels" in kwargs or "file_root" in kwargs or "file_list" in kwargs:
        names.append("label")
    if kwargs.get("enable_frame_num") not in (None, False, "none"):
        names.append("frame_num")
    if kwargs.get("enable_timestamps"):
        names.append("timestamps")
    return names


def epoch(kwargs):
    reader = ndd.experimental.readers.Video(**reference_kwargs(kwargs))
    names = outputs_of(kwargs)
    samples = []
    for sample in reader.next_epoch():
        record = {"frames": vd.frame_ids(np.asarray(sample[0])), "shape": list(np.asarray(sample[0]).shape)}
        for name, value in zip(names[1:], sample[1:], strict=True):
            record[name] = np.asarray(value).tolist()
        samples.append(record)
    return reader.get_metadata()["epoch_size"], samples


def record(kwargs):
    try:
        size, samples = epoch(kwargs)
    except Exception as exc:  # noqa: BLE001 - recorded as the case's result
        return {"kwargs": kwargs, "error": f"{type(exc).__name__}: {exc}"}
    return {"kwargs": kwargs, "outputs": outputs_of(kwargs), "epoch_size": size, "samples": samples}


def starts_table():
    table = []
    for n in sorted(v for p, v in vd.VIDEOS.items() if p.startswith("counts/")):
        for stride, step, length in START_CONFIGS:
            row = {
                "video": f"counts/n{n}.webm",
                "kwargs": {"stride": stride, "step": step, "sequence_length": length},
            }
            for pad in ("none", "constant"):
                kwargs = {
                    "filenames": [row["video"]],
                    "pad_mode": pad,
                    "enable_frame_num": True,
                    **row["kwargs"],
                }
                try:
                    _, samples = epoch(kwargs)
                    row[pad] = [s["frame_num"][0] for s in samples]
                except RuntimeError:
                    row[pad] = None
            table.append(row)
    return table


def main():
    out = {"reference_version": dali.__version__}
    with tempfile.TemporaryDirectory() as root:
        vd.make_dataset(root)
        cwd = os.getcwd()
        os.chdir(root)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out["cases"] = {name: record(kwargs) for name, kwargs in CASES.items()}
                out["starts"] = starts_table()
                out["differences"] = {name: record(kwargs) for name, kwargs in DIFFERENCES.items()}
        finally:
            os.chdir(cwd)
    path = os.path.join(HERE, "video_reader_reference.json")
    text = json.dumps(out, indent=1)
    # Lists of numbers and flat dicts on one line each.
    for flat in (r"\[\s+([^\[\]{}]*?)\s+\]", r"\{\s+([^{}]*?)\s+\}"):
        text = re.sub(flat, lambda m: m.group(0)[0] + " ".join(m.group(1).split()) + m.group(0)[-1], text)
    with open(path, "w") as fh:
        fh.write(text + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
