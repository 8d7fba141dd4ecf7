"""decoders.video on the CPU: ndd against the reference, in one run.

The data: a batch of 4 VP9 videos in WebM, 160x120, 30 frames at 25 fps, a key frame every 10
frames (a moving colour pattern, encoded by PyAV with one thread in each worker, so that both
get the same bytes). Cases: every frame; a window of ``sequence_length=8, stride=2`` from frame
7 (frames 7 to 21); the last 3 frames. Both implementations run in ``sync_cpu`` mode with
``set_num_threads(1)``.

Each implementation runs in its own worker process (ndd from this interpreter, the reference from its side
virtualenv); the driver interleaves them case by case, repeats, and prints the CPU milliseconds per call
(``time.process_time`` of calls until at least ``--min-seconds`` of CPU time, divided by the calls):
median [min-max] of the repeats, and the speed ratio ndd/ref (reference time over ndd time: above 1 ndd
is faster).

    python bench/video.py [--reference-python ~/dali-ref/bin/python] [--repeats 5]
"""

import argparse
import json
import os
import statistics
import sys
import time

from worker_process import WorkerProcess

BATCH_SIZE = 4
WIDTH, HEIGHT, FRAMES, GOP = 160, 120, 30, 10


def _video(seed):
    """A VP9 WebM video of a moving pattern, as uint8 bytes."""
    import io

    import av
    import numpy as np

    buffer = io.BytesIO()
    with av.open(buffer, "w", format="webm") as out:
        stream = out.add_stream("libvpx-vp9", rate=25)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.codec_context.gop_size = GOP
        stream.codec_context.thread_count = 1
        y, x = np.mgrid[:HEIGHT, :WIDTH]
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
    return {"videos": [_video(seed) for seed in range(BATCH_SIZE)]}


CASES = {
    "4 videos, all 30 frames": lambda ndd, d: lambda: ndd.decoders.video(ndd.batch(d["videos"])),
    "4 videos, 8 frames stride 2 from 7": lambda ndd, d: (
        lambda: ndd.decoders.video(ndd.batch(d["videos"]), start_frame=7, sequence_length=8, stride=2)
    ),
    "4 videos, last 3 frames": lambda ndd, d: (
        lambda: ndd.decoders.video(ndd.batch(d["videos"]), frames=[FRAMES - 3, FRAMES - 2, FRAMES - 1])
    ),
}


def _worker(impl):
    """Serve timing requests on stdin: one JSON line in, one JSON line out."""
    if impl == "ndd":
        import ndd
    else:
        import nvidia.dali.experimental.dynamic as ndd

    ndd.set_num_threads(1)
    data = make_inputs()
    calls, errors = {}, {}
    with ndd.EvalMode.sync_cpu:
        for name, make_call in CASES.items():
            try:
                call = make_call(ndd, data)
                call().evaluate()  # warm-up: operator instances, lazy imports
                calls[name] = call
            except Exception as error:  # reported in the table instead of stopping the other cases
                errors[name] = f"{type(error).__name__}: {' '.join(str(error).split())[:100]}"
    print(json.dumps({"ready": impl, "cases": sorted(calls), "errors": errors}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        call, calls_done = calls[req["case"]], 0
        with ndd.EvalMode.sync_cpu:
            start = time.process_time()
            while True:
                call().evaluate()
                calls_done += 1
                elapsed = time.process_time() - start
                if elapsed >= req["min_seconds"]:
                    break
        print(json.dumps({"ms": elapsed * 1e3 / calls_done}), flush=True)


class Worker(WorkerProcess):
    def __init__(self, python, impl):
        super().__init__(python, __file__, impl)
        self.cases, self.errors = set(self.ready["cases"]), self.ready["errors"]

    def time(self, case, min_seconds):
        """CPU milliseconds per call of ``case``."""
        return self.ask(case=case, min_seconds=min_seconds)["ms"]


def _cell(times):
    return f"{statistics.median(times):8.3f} [{min(times):.3f}-{max(times):.3f}]"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", choices=["ndd", "ref"], help=argparse.SUPPRESS)
    parser.add_argument(
        "--reference-python",
        default=os.path.expanduser("~/dali-ref/bin/python"),
        help="interpreter of the virtualenv where nvidia-dali and PyAV are installed",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--min-seconds", type=float, default=0.3, help="CPU seconds of calls per measurement, at least"
    )
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker)
        return
    if not os.path.exists(args.reference_python):
        sys.exit(
            f"reference interpreter {args.reference_python} not found; see bench/ops.py for how to install it"
        )
    workers = {"ndd": Worker(sys.executable, "ndd"), "ref": Worker(args.reference_python, "ref")}
    times = {case: {impl: [] for impl in workers} for case in CASES}
    for _ in range(args.repeats):
        for case in CASES:
            if all(case in w.cases for w in workers.values()):
                for impl, worker in workers.items():
                    times[case][impl].append(worker.time(case, args.min_seconds))
    for worker in workers.values():
        worker.close()

    print(
        f"CPU ms per call, 1 thread, sync_cpu: median [min-max] of {args.repeats} interleaved repeats; "
        f"a batch of {BATCH_SIZE} VP9 videos, {WIDTH}x{HEIGHT}, {FRAMES} frames, a key frame every {GOP}.\n"
        "ndd/ref is the speed ratio (reference ms / ndd ms): above 1 ndd is faster."
    )
    header = f"{'case':<36} {'ndd ms':>26} {'reference ms':>26} {'ndd/ref':>8}"
    print(header)
    print("-" * len(header))
    for case in CASES:
        if times[case]["ndd"] and times[case]["ref"]:
            ratio = statistics.median(times[case]["ref"]) / statistics.median(times[case]["ndd"])
            mark = "  <-- slower" if ratio < 1.0 else ""
            print(
                f"{case:<36} {_cell(times[case]['ndd']):>26} {_cell(times[case]['ref']):>26} {ratio:8.2f}{mark}"
            )
        else:
            for impl, label in (("ndd", "ndd"), ("ref", "reference")):
                if case in workers[impl].errors:
                    print(f"{case:<36} {label} fails: {workers[impl].errors[case]}")


if __name__ == "__main__":
    main()
