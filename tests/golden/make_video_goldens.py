"""Regenerate the goldens of decoders.video from the reference.

Run with the reference's interpreter (DALI 2.4.0, CPU, with PyAV installed):

    $HOME/dali-ref/bin/python tests/golden/make_video_goldens.py

Makes small WebM videos with PyAV (VP9 4:2:0 at an even and an odd size, VP9 4:4:4,
VP8; 32x24 or 33x25, 8 frames, a key frame every 3) and writes ``video_values.npz``
(each video's bytes under ``<name>`` and the reference's decoding of all its frames
under ``<name>_frames``) and ``video_cases.json`` (one record per call: video,
keyword arguments, and which frames came out: an index into ``<name>_frames``, or
-1 for a frame of ``fill_value``; or the error raised).

The calls go through the pipeline API (``fn.decoders.video``): the reference's
dynamic mode refuses every string ``pad_mode`` ("Cannot create type for unknown
format string"), and both run the same operator.
"""

import io
import json
import pathlib

import av
import numpy as np
import nvidia.dali.experimental.dynamic as dyn
from nvidia.dali import fn, pipeline_def, types

HERE = pathlib.Path(__file__).parent
FRAMES = 8


def make_video(codec, width, height, pix_fmt):
    """A moving colour pattern, encoded with one thread (deterministic)."""
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="webm") as container:
        stream = container.add_stream(codec, rate=25)
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        stream.codec_context.gop_size = 3
        stream.codec_context.thread_count = 1
        y, x = np.mgrid[:height, :width]
        for i in range(FRAMES):
            rgb = np.stack([(x * 7 + i * 13) % 256, (y * 11 + i * 5) % 256, ((x + y) * 3 + i * 29) % 256], -1)
            frame = av.VideoFrame.from_ndarray(rgb.astype(np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return np.frombuffer(buffer.getvalue(), np.uint8)


VIDEOS = {
    "vp9_even": ("libvpx-vp9", 32, 24, "yuv420p"),
    "vp9_odd": ("libvpx-vp9", 33, 25, "yuv420p"),
    "vp9_444": ("libvpx-vp9", 33, 25, "yuv444p"),
    "vp8_odd": ("libvpx", 33, 25, "yuv420p"),
}

CASES = [
    {},
    {"frames": [5, 0, 3, 3]},
    {"frames": [9, 1]},
    {"frames": [-1, 2]},
    {"frames": 4},
    {"frames": [9, 2], "fill_value": 9},
    {"frames": [9, 1], "pad_mode": "edge"},
    {"frames": [10, 2], "pad_mode": "reflect"},
    {"start_frame": 2},
    {"start_frame": 1, "end_frame": 7, "stride": 2},
    {"end_frame": 4},
    {"stride": 3},
    {"sequence_length": 3},
    {"sequence_length": 0},
    {"start_frame": 6, "sequence_length": 5},
    {"start_frame": 6, "end_frame": 12, "stride": 2},
    {"start_frame": -1},
    {"start_frame": 6, "sequence_length": 4, "fill_value": [1, 2, 3]},
    {"start_frame": 5, "sequence_length": 6, "pad_mode": "none"},
    {"start_frame": 2, "end_frame": 11, "pad_mode": "none"},
    {"start_frame": 5, "sequence_length": 6, "pad_mode": "edge"},
    {"start_frame": 5, "sequence_length": 6, "pad_mode": "repeat"},
    {"start_frame": -2, "sequence_length": 4, "pad_mode": "edge"},
    {"start_frame": 4, "sequence_length": 9, "pad_mode": "reflect_1001"},
    {"start_frame": 0, "sequence_length": 20, "pad_mode": "symmetric"},
    {"start_frame": 4, "sequence_length": 9, "pad_mode": "reflect_101"},
    {"start_frame": 0, "sequence_length": 20, "pad_mode": "reflect"},
    {"start_frame": -2, "sequence_length": 4, "pad_mode": "reflect"},
    {"start_frame": 6, "sequence_length": 4, "stride": 2, "pad_mode": "edge"},
    # errors
    {"frames": [1], "start_frame": 0},
    {"frames": [1], "stride": 2},
    {"sequence_length": 2, "end_frame": 3},
    {"start_frame": 8},
    {"end_frame": 0},
    {"start_frame": 3, "end_frame": 2},
    {"frames": [9, 1], "pad_mode": "none"},
    {"start_frame": -2, "sequence_length": 4, "pad_mode": "none"},
    {"sequence_length": 2, "fill_value": 300},
    {"sequence_length": 2, "fill_value": [1, 2]},
]


def decode(data, kwargs):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        encoded = fn.external_source(source=lambda: [data], batch=True, dtype=types.UINT8)
        return fn.decoders.video(encoded, device="cpu", **kwargs)

    p = pipe()
    p.build()
    return np.asarray(p.run()[0][0])


def reason(message):
    """The reference's own words from a pipeline error's text: the line after
    ``encountered:`` (or the assertion's message)."""
    if "failed:" in message:
        return message.split("failed:", 1)[1].split("\n")[0].strip()[:300]
    after = message.split("encountered:", 1)[-1].strip()
    return after.split("\n")[0][:300]


def which_frames(out, frames):
    ids = []
    for frame in out:
        same = [i for i in range(len(frames)) if np.array_equal(frame, frames[i])]
        if same:
            ids.append(same[0])
        elif (frame == frame[0, 0]).all():
            ids.append(-1)
        else:
            raise AssertionError("an output frame is neither a frame of the video nor a fill")
    return ids


def main():
    arrays, cases = {}, []
    for name, spec in VIDEOS.items():
        data = make_video(*spec)
        arrays[name] = data
        # The dynamic mode's decoding of every frame (the default arguments).
        frames = np.asarray(dyn.decoders.video(dyn.tensor(data)).evaluate())
        arrays[f"{name}_frames"] = frames
        assert frames.shape[0] == FRAMES
    data, frames = arrays["vp9_even"], arrays["vp9_even_frames"]
    for kwargs in CASES:
        record = {"video": "vp9_even", "kwargs": kwargs}
        try:
            out = decode(data, kwargs)
            record["frames"] = which_frames(out, frames)
            fills = [int(out[k, 0, 0, c]) for k, i in enumerate(record["frames"]) if i < 0 for c in range(3)]
            record["fill"] = fills[:3]
        except RuntimeError as exc:
            record["error"] = reason(str(exc))
        cases.append(record)
    with open(HERE / "video_cases.json", "w") as f:
        json.dump({"reference": "DALI 2.4.0 fn.decoders.video (CPU)", "cases": cases}, f, indent=1)
    np.savez_compressed(HERE / "video_values.npz", **arrays)


if __name__ == "__main__":
    main()
