"""Small video datasets for the experimental.readers.Video tests and goldens.

The videos are written with PyAV (the ``av`` package, in both the test venv and
the reference venv of ``tests/golden/make_video_reader_goldens.py``), 25 frames
per second. Frame ``i`` of a VP9 video (lossless) is gray ``4 * i`` in its first
column, growing by 2 per column: ``frame_ids`` tells which frames a sequence
holds, whatever small rounding the colour conversion adds. Paths in the file
lists are relative to the dataset folder: run with it as the working directory.
"""

import os

import numpy as np

RATE = 25
HEIGHT, WIDTH = 24, 32

# path -> frames (lossless VP9)
VIDEOS = {
    "clips/v10.webm": 10,
    "clips/v7.webm": 7,
    "clips/v3.webm": 3,
    "clips/v1.webm": 1,
    "classes/a/x.webm": 5,
    "classes/a/y.webm": 4,
    "classes/b/z.webm": 6,
    # Left out of file_root=classes: a file directly in it, and one in a deeper folder.
    "classes/top.webm": 4,
    "classes/a/deep/w.webm": 3,
}
for _n in (4, 5, 6, 8, 9, 11, 12, 13):
    VIDEOS[f"counts/n{_n}.webm"] = _n
# Other codecs the reference's CPU decoder takes: path -> (codec, pixel format, frames).
OTHER_CODECS = {
    "codecs/vp8.webm": ("libvpx", "yuv420p", 9),
    "codecs/mjpeg.avi": ("mjpeg", "yuvj420p", 5),
}

FILE_LISTS = {
    "frames.txt": [
        "clips/v10.webm 3 2 7",
        "clips/v7.webm 1 -4 -1",
        "clips/v10.webm 4 2.5 7.5",
        "clips/v3.webm 0",
    ],
    "times.txt": [
        "clips/v10.webm 3 0.1 0.2",
        "clips/v10.webm 3 0.08 0.2",
        "clips/v10.webm 2 0.05 0.19",
        "clips/v7.webm 1",
    ],
    "past_the_end.txt": ["clips/v10.webm 3 2 20"],
    "times_past.txt": ["clips/v10.webm 1 0.3 5"],
    "only_start.txt": ["clips/v10.webm 5 -3"],
    "empty_range.txt": ["clips/v10.webm 3 5 5", "clips/v7.webm 1 6 2", "clips/v3.webm 2"],
}


def frame_pixels(index):
    """Frame ``index`` of a VP9 video: RGB, gray 4 * index + 2 * column."""
    row = (4 * index + 2 * np.arange(WIDTH)) % 256
    return np.repeat(np.broadcast_to(row, (HEIGHT, WIDTH))[:, :, None], 3, axis=2).astype(np.uint8)


def frame_ids(frames):
    """The frame numbers of decoded frames (F, H, W, 3) of a VP9 video (from their first
    column; a constant padding frame of 0 reads as 0)."""
    first_column = np.asarray(frames)[:, :, 0, :].astype(np.float64).mean(axis=(1, 2))
    return [int(v) for v in np.rint(first_column / 4)]


def write_video(path, frames, codec="libvpx-vp9", pix_fmt="yuv420p", colourful=False):
    import av

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with av.open(path, "w") as container:
        stream = container.add_stream(codec, rate=RATE)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, pix_fmt
        if codec == "libvpx-vp9":
            stream.options = {"lossless": "1"}
        for i in range(frames):
            pixels = frame_pixels(i)
            if colourful:
                pixels = pixels.copy()
                pixels[:, :, 1] = 255 - pixels[:, :, 1]
                pixels[: HEIGHT // 2, :, 2] = (37 * i) % 256
            for packet in stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def make_dataset(root):
    """Write every video, the file lists, an empty class folder and a file that is
    not a video under ``root``."""
    for path, frames in VIDEOS.items():
        write_video(os.path.join(root, path), frames)
    for path, (codec, pix_fmt, frames) in OTHER_CODECS.items():
        write_video(os.path.join(root, path), frames, codec, pix_fmt, colourful=True)
    os.makedirs(os.path.join(root, "classes", "c_empty"), exist_ok=True)
    with open(os.path.join(root, "clips", "junk.webm"), "wb") as fh:
        fh.write(np.random.default_rng(0).integers(0, 256, 500, dtype=np.uint8).tobytes())
    for name, lines in FILE_LISTS.items():
        with open(os.path.join(root, name), "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
