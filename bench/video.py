"""decoders.video on the CPU: ndd against the reference, in one run.

The data: a batch of 4 VP9 videos in WebM, 160x120, 30 frames at 25 fps, a key frame every 10
frames (a moving colour pattern, encoded by PyAV with one thread in each worker, so that both
get the same bytes). Cases: every frame; a window of ``sequence_length=8, stride=2`` from frame
7 (frames 7 to 21); the last 3 frames; and every frame of one such video at 640x360, where
the colour conversion weighs more; and an epoch of ``experimental.readers.Video`` over that
video (one reader, kept from epoch to epoch: sequences of 8 frames, one every 8, batches of
2). Both
implementations run in ``sync_cpu`` mode with ``set_num_threads(1)``.

How the cases are timed and the table printed: ``bench/case_timing.py``. The reference's
virtualenv needs PyAV too (``pip install av``), to make the same videos.

    python bench/video.py [--reference-python ~/dali-ref/bin/python] [--repeats 5] [--cases ...]
"""

import case_timing

BATCH_SIZE = 4
WIDTH, HEIGHT, FRAMES, GOP = 160, 120, 30, 10
# One video of the same frames at a size where the colour conversion weighs more.
LARGE = (640, 360)


def _video(seed, width=WIDTH, height=HEIGHT):
    """A VP9 WebM video of a moving pattern, as uint8 bytes."""
    import io

    import av
    import numpy as np

    buffer = io.BytesIO()
    with av.open(buffer, "w", format="webm") as out:
        stream = out.add_stream("libvpx-vp9", rate=25)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.gop_size = GOP
        stream.codec_context.thread_count = 1
        y, x = np.mgrid[:height, :width]
        for i in range(FRAMES):
            rgb = np.stack(
                [
                    (x * 3 + i * 7 + seed) % 256,
                    (y * 5 + i * 3) % 256,
                    ((x + y) * 2 + i * 11 + 40 * seed) % 256,
                ],
                -1,
            )
            out.mux(stream.encode(av.VideoFrame.from_ndarray(rgb.astype(np.uint8), format="rgb24")))
        out.mux(stream.encode())
    return np.frombuffer(buffer.getvalue(), np.uint8)


def make_inputs():
    import os
    import tempfile

    large = _video(0, *LARGE)
    # The readers take files: the large video, written once per worker process.
    path = os.path.join(tempfile.mkdtemp(prefix="ndd-bench-video-"), "large.webm")
    large.tofile(path)
    return {"videos": [_video(seed) for seed in range(BATCH_SIZE)], "large": large, "path": path}


def _read_epoch(ndd, data):
    """An epoch of the reader of the large video (made on first use and kept, as a
    training loop keeps it): every sequence of 8 frames, one every 8, in batches of 2.
    Returns the last batch's frames (for the timer to evaluate)."""
    if "reader" not in data:
        data["reader"] = ndd.experimental.readers.Video(filenames=[data["path"]], sequence_length=8, step=8)
    last = list(data["reader"].next_epoch(batch_size=2))[-1]
    return last[0] if isinstance(last, tuple) else last


CASES = {
    "4 videos, all 30 frames": lambda ndd, d: lambda: ndd.decoders.video(ndd.batch(d["videos"])),
    "4 videos, 8 frames stride 2 from 7": lambda ndd, d: (
        lambda: ndd.decoders.video(ndd.batch(d["videos"]), start_frame=7, sequence_length=8, stride=2)
    ),
    "4 videos, last 3 frames": lambda ndd, d: (
        lambda: ndd.decoders.video(ndd.batch(d["videos"]), frames=[FRAMES - 3, FRAMES - 2, FRAMES - 1])
    ),
    f"1 video {LARGE[0]}x{LARGE[1]}, all 30 frames": lambda ndd, d: lambda: ndd.decoders.video(d["large"]),
    f"readers.Video epoch, {LARGE[0]}x{LARGE[1]}, sequences of 8": lambda ndd, d: lambda: _read_epoch(ndd, d),
}


if __name__ == "__main__":
    case_timing.main(
        __file__,
        __doc__,
        CASES,
        make_inputs,
        f"a batch of {BATCH_SIZE} VP9 videos, {WIDTH}x{HEIGHT}, {FRAMES} frames, a key frame every {GOP}.",
        min_seconds=0.3,
    )
