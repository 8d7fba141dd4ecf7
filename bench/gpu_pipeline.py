"""Image pipelines on the GPU: ndd against the reference's dynamic mode and its
pipeline mode (the ceiling), in one run.

The training and validation pipelines of ``bench/cpu_pipeline.py`` (its dataset:
real-photo JPEGs of ImageNet-like sizes, built once), with ``device="gpu"``, in
batches of 256:

- ``training``: File -> decode on the GPU -> random_resized_crop(224) -> flip by a
  coin -> crop_mirror_normalize(float, CHW)
- ``validation``: File -> decode on the GPU -> resize(resize_shorter=256) ->
  crop_mirror_normalize(crop 224x224, float, CHW)

ndd and the reference's dynamic mode run the same code (eager mode, as many
threads as the machine has cores); each batch's output stays on the GPU as one
dense tensor (what a model takes), and each epoch ends with a copy of its last
batch to the host, which waits for all the work queued before it. The pipeline
mode runs ``fn.readers.file`` -> ``fn.decoders.image(device="mixed")`` -> the same
operators, with ``pipe.run()`` per batch. Each implementation runs in its own
worker process (ndd from this interpreter, the reference from its side
virtualenv); the driver interleaves them, repeats, and prints medians in images
per second, the spread (min-max) and the ratios. Targets: ndd at least 1.1x the
dynamic mode and 1.0x the pipeline mode.

    python bench/gpu_pipeline.py [--reference-python ~/dali-ref/bin/python] [--repeats 5]
    python bench/gpu_pipeline.py --smoke   # every ndd code path once on the FakeDriver
    python bench/gpu_pipeline.py --host-cost   # ndd's host time per batch, no GPU needed
    python bench/gpu_pipeline.py --gpu-times   # each operator's host and GPU time (ndd)

With ``--smoke`` no GPU is used: a handful of small images, decoded by nvImageCodec's
CPU codecs into the recording FakeDriver (no kernel runs), and no reference. It proves
that the script runs, nothing more; every figure is meaningless.

With ``--host-cost`` no GPU is used either: the operators after decoding run on a
GPU batch of images of ImageNet-like sizes, each of its own shape, on the recording
FakeDriver (their kernels are queued, not run), in ``sync_cpu`` mode on one thread.
What is timed is the host's share of a batch: argument checks, each sample's plan
(windows, filter tables), descriptor tables and launches. It bounds the images per
second one host thread can feed a GPU with.

``--gpu-times`` splits each operator's time on one batch (ndd, ``sync_cpu``) into
the host's (the call) and the GPU's: CUDA events around the operator's work, queued
behind a memset of 48 GiB that keeps the stream busy while the host queues it, so
that the events time the kernels alone. It ends with the host's time of a decode
with the caller's stream idle and behind the memset, ndd's and nvImageCodec's alone
on a stream of its own (new images, the previous ones reused, the previous ones
freed first): whether a decode waits for work queued on other streams. With
``--smoke`` it runs on the FakeDriver.
"""

import argparse
import json
import math
import mmap
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cpu_pipeline import MEAN, STD, make_data  # noqa: E402
from worker_process import WorkerProcess

BATCH_SIZE = 256
NUM_FILES = 2048
CASES = ["training", "validation"]
IMPLS = {"ndd": "ndd", "ref": "reference dynamic", "ref_pipeline": "reference pipeline"}
TARGETS = {"ref": 1.1, "ref_pipeline": 1.0}
SMOKE_LABEL = "SMOKE RUN on the recording FakeDriver: no kernel ran, every figure below is meaningless"


def _install_fake():
    """bench/gpu_ops.py's recording FakeDriver as the driver, and nvImageCodec's CPU codecs
    as the decoder."""
    import gpu_ops
    from nvidia import nvimgcodec

    from ndd._ops import gpu_decoding

    gpu_ops._install_fake()
    gpu_decoding.make_decoder = lambda device_id: nvimgcodec.Decoder(
        device_id=nvimgcodec.NVIMGCODEC_DEVICE_CPU_ONLY,
        backends=[nvimgcodec.Backend(nvimgcodec.BackendKind.CPU_ONLY)],
    )


def _dynamic_pipelines(ndd, root, batch_size, size):
    """Per case: a function running one epoch and returning the number of images (ndd or the reference)."""
    import numpy as np

    readers = {
        "training": ndd.readers.File(file_root=root, random_shuffle=True, seed=1),
        "validation": ndd.readers.File(file_root=root),
    }

    def training(encoded):
        images = ndd.decoders.image(encoded, device="gpu")
        cropped = ndd.random_resized_crop(images, size=[size, size])
        flipped = ndd.flip(cropped, horizontal=ndd.random.coin_flip(batch_size=encoded.batch_size))
        return ndd.crop_mirror_normalize(flipped, dtype=ndd.float32, output_layout="CHW", mean=MEAN, std=STD)

    def validation(encoded):
        images = ndd.decoders.image(encoded, device="gpu")
        resized = ndd.resize(images, resize_shorter=size * 8 // 7)
        return ndd.crop_mirror_normalize(
            resized, crop=[size, size], dtype=ndd.float32, output_layout="CHW", mean=MEAN, std=STD
        )

    steps = {"training": training, "validation": validation}

    def epoch_runner(case):
        def run_epoch():
            images, last = 0, None
            for encoded, _labels in readers[case].next_epoch(batch_size=batch_size):
                last = ndd.as_tensor(steps[case](encoded))
                last.evaluate()
                images += encoded.batch_size
            np.asarray(last.cpu())  # waits for every batch's work
            return images

        return run_epoch

    return {case: epoch_runner(case) for case in CASES}


STAGES = ["decode", "random_resized_crop", "flip", "crop_mirror_normalize", "resize"]
# nvImageCodec's batch decode called directly, without ndd around it (a stage of the
# ndd worker only): what of ndd's decode time is the codec's.
CODEC_STAGE = "nvImageCodec alone"
# The same, decoding into the images of its previous call (nvImageCodec reuses their buffers).
REUSING_STAGE = "  reusing its images"
# Other configurations of nvImageCodec's decoder for the same batch (a real GPU only):
# ``(backends as (kind, load hint), options)``, to choose ndd's from measurements.
CODEC_VARIANTS = {
    "  HW 0.65, then CUDA": ((("HW_GPU_ONLY", 0.65), ("GPU_ONLY", 1.0), ("CPU_ONLY", 1.0)), ""),
    "  CUDA only": ((("GPU_ONLY", 1.0), ("CPU_ONLY", 1.0)), ""),
    "  hybrid CPU+GPU": ((("HYBRID_CPU_GPU", 1.0), ("CPU_ONLY", 1.0)), ""),
    "  default, preallocated": (
        (),
        "nvjpeg_hw_decoder:preallocate_batch_size=256 nvjpeg_cuda_decoder:preallocate_buffers=1",
    ),
}


def _operator_calls(ndd, root, batch_size, size):
    """``(files, {stage: call})``: each operator of the pipelines on one batch of the
    dataset's first files (its inputs made once)."""
    import numpy as np

    files = sorted(os.path.join(d, f) for d, _, names in os.walk(root) for f in names)[:batch_size]
    encoded = ndd.batch([np.fromfile(f, np.uint8) for f in files])
    images = ndd.decoders.image(encoded, device="gpu")
    cropped = ndd.random_resized_crop(images, size=[size, size])
    calls = {
        "decode": lambda: ndd.decoders.image(encoded, device="gpu"),
        "random_resized_crop": lambda: ndd.random_resized_crop(images, size=[size, size]),
        "flip": lambda: ndd.flip(cropped, horizontal=ndd.random.coin_flip(batch_size=len(files))),
        "crop_mirror_normalize": lambda: ndd.crop_mirror_normalize(
            cropped, dtype=ndd.float32, output_layout="CHW", mean=MEAN, std=STD
        ),
        "resize": lambda: ndd.resize(images, resize_shorter=size * 8 // 7),
    }
    return files, calls


def _gpu_times(args):
    """Print each operator's host and GPU milliseconds per batch (ndd, one thread,
    sync_cpu). The GPU time is that of its work alone: CUDA events around it, behind a
    long memset that keeps the stream busy while the host queues the operator (a row
    says so when the host took longer than the memset)."""
    import numpy as np

    if args.smoke:
        _install_fake()
    import gpu_ops

    import ndd
    from ndd._cuda import driver
    from ndd._cuda.device_array import DeviceArray

    _, calls = _operator_calls(ndd, args.root, args.batch_size, args.size)
    stream = ndd.get_current_stream()
    handle = int(stream.handle)
    api = driver.api()
    hold_bytes = 2**20 if args.smoke else 48 * 2**30  # about 15 ms of an H200
    held = DeviceArray.empty((hold_bytes,), np.uint8, 0, stream)
    timer = gpu_ops.EventTimer(handle)

    def hold():
        driver.check(api.cuMemsetD8Async(held.ptr, 0, hold_bytes, handle), "holding the stream")

    if args.smoke:
        print(SMOKE_LABEL)
    with ndd.EvalMode.sync_cpu:
        holds = []
        for _ in range(3):
            stream.synchronize()
            timer.start()
            hold()
            holds.append(timer.stop())
        print(
            f"ms per batch of {args.batch_size}, median [min-max] of {args.repeats} (the hold: {min(holds):.1f} ms)"
        )
        print(f"{'operator':<22}{'host':>22}{'GPU':>22}")
        for stage, call in calls.items():
            call().evaluate()
            stream.synchronize()
            host, gpu = [], []
            for _ in range(args.repeats):
                stream.synchronize()
                hold()
                timer.start()
                start = time.perf_counter()
                call().evaluate()
                host.append((time.perf_counter() - start) * 1e3)
                gpu.append(timer.stop())
            late = "  (the host outlasted the hold: GPU includes host time)" if max(host) > min(holds) else ""
            print(f"{stage:<22}{_spread(host, 2):>22}{_spread(gpu, 2):>22}{late}")
        _decode_waits(ndd, calls["decode"], hold, stream, args)
    timer.close()
    if args.smoke:
        print(SMOKE_LABEL)


def _decode_waits(ndd, decode, hold, stream, args):
    """Whether a decode waits on the host for the work of other streams: the host's
    milliseconds of ndd's decode and of nvImageCodec's (on a stream of its own, new
    images, the previous ones reused, or the previous ones freed first), with the
    caller's stream idle, behind the memset, and behind a host function that sleeps
    as long (the stream busy without using the GPU: a decode slowed by the memset only
    shares the memory bandwidth with it, one slowed by the sleep waits for it)."""
    import ctypes

    import numpy as np

    from ndd._cuda import driver, streams
    from ndd._ops import gpu_decoding

    files = sorted(os.path.join(d, f) for d, _, names in os.walk(args.root) for f in names)[: args.batch_size]
    arrays = [np.fromfile(f, np.uint8) for f in files]
    decoder = gpu_decoding.make_decoder(0)
    own = streams.create(0)
    codec = gpu_decoding.nvimgcodec()
    kept = []

    def codec_call(reuse, free):
        previous = kept.pop() if kept else None
        if free:
            del previous
            previous = None
        images = decoder.decode(
            [codec.CodeStream(a) for a in arrays],
            images=previous if reuse else None,
            cuda_stream=int(own.handle),
        )
        kept.append(images)

    # The memset's length, measured: the sleep lasts as long.
    stream.synchronize()
    start = time.perf_counter()
    hold()
    stream.synchronize()
    seconds = time.perf_counter() - start
    holds = {"idle": lambda: None, "memset": hold}
    api = driver.api()
    if hasattr(api, "CUhostFn") and not args.smoke:
        sleeper = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda _: time.sleep(seconds))
        function = api.CUhostFn(ctypes.cast(sleeper, ctypes.c_void_p).value)

        def sleep_hold():
            driver.check(api.cuLaunchHostFunc(int(stream.handle), function, 0), "queueing a host function")

        holds["sleep"] = sleep_hold
    variants = {
        "ndd decoders.image": lambda: decode().evaluate(),
        "nvImageCodec, new images": lambda: codec_call(False, False),
        "  previous images reused": lambda: codec_call(True, False),
        "  previous images freed": lambda: codec_call(False, True),
    }
    print(
        f"\nhost ms of a decode (median of {args.repeats}), the caller's stream idle, behind the memset "
        f"and behind a host function sleeping {seconds * 1e3:.1f} ms"
    )
    print(f"{'decode':<28}" + "".join(f"{name:>10}" for name in holds))
    with ndd.EvalMode.sync_cpu:
        for name, call in variants.items():
            call()
            medians = []
            for held in holds.values():
                times = []
                for _ in range(args.repeats):
                    stream.synchronize()
                    streams.synchronize(own.handle)
                    held()
                    start = time.perf_counter()
                    call()
                    times.append((time.perf_counter() - start) * 1e3)
                medians.append(statistics.median(times))
            print(f"{name:<28}" + "".join(f"{m:>10.2f}" for m in medians))
    stream.synchronize()
    streams.synchronize(own.handle)


def _stage_runner(ndd, root, batch_size, size):
    """A function timing each operator of the pipelines alone, on one batch of the
    dataset's first files (ndd or the reference's dynamic mode): ``run(repeats)``
    gives ``{stage: [ms per call]}``. A call is timed from its start to the end of
    its GPU work (a copy of its last sample to the host waits for it)."""
    import numpy as np

    files, calls = _operator_calls(ndd, root, batch_size, size)

    def finish(result):
        np.asarray(result.select(len(files) - 1).cpu())

    stages = list(STAGES)
    if ndd.__name__ == "ndd":
        from nvidia import nvimgcodec

        from ndd._ops import gpu_decoding

        decoder = gpu_decoding.make_decoder(0)
        stream = ndd.get_current_stream()
        arrays = [np.fromfile(f, np.uint8) for f in files]

        def codec_alone():
            decoded = decoder.decode(
                [nvimgcodec.CodeStream(a) for a in arrays], cuda_stream=int(stream.handle)
            )
            return decoded

        calls[CODEC_STAGE] = codec_alone
        stages.append(CODEC_STAGE)
        reused = []

        def codec_reusing():
            # The images of its previous call decoded into again (their buffers reused).
            decoded = decoder.decode(
                [nvimgcodec.CodeStream(a) for a in arrays],
                images=reused[-1] if reused else None,
                cuda_stream=int(stream.handle),
            )
            reused[:] = [decoded]
            return decoded

        calls[REUSING_STAGE] = codec_reusing
        stages.append(REUSING_STAGE)
        on_gpu = gpu_decoding.make_decoder.__module__ == gpu_decoding.__name__  # not a smoke run's CPU codecs
        for name, (backends, options) in CODEC_VARIANTS.items() if on_gpu else ():
            try:
                variant = nvimgcodec.Decoder(
                    device_id=0,
                    backends=[
                        nvimgcodec.Backend(getattr(nvimgcodec.BackendKind, k), load_hint=h)
                        for k, h in backends
                    ]
                    or None,
                    options=options,
                )
            except Exception:  # a configuration this nvImageCodec refuses is left out
                continue

            def decode_with(variant=variant):
                return variant.decode(
                    [nvimgcodec.CodeStream(a) for a in arrays], cuda_stream=int(stream.handle)
                )

            calls[name] = decode_with
            stages.append(name)

        def finish(result, finish=finish):  # noqa: F811 (the codec's result is a list of images)
            if isinstance(result, list):
                stream.synchronize()
            else:
                finish(result)

    def run(repeats):
        times = {}
        for stage in stages:
            finish(calls[stage]())  # warm-up
            times[stage] = []
            for _ in range(repeats):
                start = time.perf_counter()
                finish(calls[stage]())
                times[stage].append((time.perf_counter() - start) * 1e3)
        return times

    return run


def _reference_pipelines(root, batch_size, size, threads, num_files):
    """The reference's pipeline mode: the same operators, ``pipe.run()`` per batch."""
    from nvidia.dali import fn, pipeline_def, types

    @pipeline_def(batch_size=batch_size, num_threads=threads, device_id=0)
    def training():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, seed=1)
        images = fn.decoders.image(jpegs, device="mixed")
        images = fn.random_resized_crop(images, size=[size, size])
        images = fn.flip(images, horizontal=fn.random.coin_flip())
        out = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=MEAN, std=STD)
        return out, labels

    @pipeline_def(batch_size=batch_size, num_threads=threads, device_id=0)
    def validation():
        jpegs, labels = fn.readers.file(file_root=root)
        images = fn.decoders.image(jpegs, device="mixed")
        images = fn.resize(images, resize_shorter=size * 8 // 7)
        out = fn.crop_mirror_normalize(
            images, crop=[size, size], dtype=types.FLOAT, output_layout="CHW", mean=MEAN, std=STD
        )
        return out, labels

    pipes = {"training": training(), "validation": validation()}
    for pipe in pipes.values():
        pipe.build()
    iterations = math.ceil(num_files / batch_size)

    def epoch_runner(case):
        def run_epoch():
            for _ in range(iterations):
                out, _labels = pipes[case].run()
            out.as_cpu()
            return iterations * batch_size

        return run_epoch

    return {case: epoch_runner(case) for case in CASES}


def _worker(impl, args):
    """Serve timing requests on stdin: one JSON line in, one JSON line out."""
    try:
        if impl == "ndd":
            if args.smoke:
                _install_fake()
            import ndd
        else:
            import nvidia.dali.experimental.dynamic as ndd
        ndd.set_num_threads(args.threads)
        if impl == "ref_pipeline":
            runners = _reference_pipelines(
                args.root, args.batch_size, args.size, args.threads, args.num_files
            )
        else:
            runners = _dynamic_pipelines(ndd, args.root, args.batch_size, args.size)
        for run_epoch in runners.values():
            run_epoch()  # warm-up: module loads, decoder and pool set-up
    except Exception as error:  # the reference without a GPU, or a broken install
        print(json.dumps({"error": f"{type(error).__name__}: {error}".splitlines()[0][:300]}), flush=True)
        return
    print(json.dumps({"ready": impl}), flush=True)
    stages = None
    for line in sys.stdin:
        request = json.loads(line)
        if "stages" in request:
            if stages is None:
                stages = _stage_runner(ndd, args.root, args.batch_size, args.size)
            print(json.dumps({"stages": stages(request["stages"])}), flush=True)
            continue
        start = time.perf_counter()
        images = sum(runners[request["case"]]() for _ in range(request["epochs"]))
        print(json.dumps({"images_per_s": images / (time.perf_counter() - start)}), flush=True)


class Worker(WorkerProcess):
    def __init__(self, python, impl, args):
        options = ["--root", args.root, "--batch-size", str(args.batch_size), "--size", str(args.size)]
        options += ["--threads", str(args.threads), "--num-files", str(args.num_files)]
        options += ["--smoke"] if args.smoke else []
        super().__init__(python, __file__, impl, *options, required=False)
        self.error = self.ready.get("error")

    def time(self, case, epochs):
        """Images per second over ``epochs`` epochs of ``case``."""
        return self.ask(case=case, epochs=epochs)["images_per_s"]

    def stages(self, repeats):
        """Each operator's time, measured ``repeats`` times."""
        return self.ask(stages=repeats)["stages"]


def _device_name():
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown GPU"


def _host_cost(args):
    """Print ndd's host milliseconds per batch of the post-decode operators of each
    pipeline, on the recording FakeDriver."""
    import numpy as np

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gpu_ops

    gpu_ops._install_fake()
    from ndd._cuda import fake

    # The fake's allocations as lazily mapped pages (it fills new ones with a stale
    # pattern, to catch unwritten outputs in tests): what is timed is ndd's host work,
    # not the fake's memory.
    fake._stale_bytes = lambda count: mmap.mmap(-1, max(count, 1))
    import ndd

    # Images of ImageNet-like sizes, each of its own shape (the plans' filter tables
    # grow with the sizes and the scales).
    rng = np.random.default_rng(0)
    shapes = [(int(rng.integers(300, 500)), int(rng.integers(300, 500)), 3) for _ in range(args.batch_size)]
    images = ndd.batch([np.zeros(s, np.uint8) for s in shapes], layout="HWC").gpu()
    size = args.size

    def training():
        cropped = ndd.random_resized_crop(images, size=[size, size])
        flipped = ndd.flip(cropped, horizontal=ndd.random.coin_flip(batch_size=args.batch_size))
        return ndd.crop_mirror_normalize(flipped, dtype=ndd.float32, output_layout="CHW", mean=MEAN, std=STD)

    def validation():
        resized = ndd.resize(images, resize_shorter=size * 8 // 7)
        return ndd.crop_mirror_normalize(
            resized, crop=[size, size], dtype=ndd.float32, output_layout="CHW", mean=MEAN, std=STD
        )

    print(
        f"ndd host time per batch of {args.batch_size} (after decoding; recording FakeDriver, sync_cpu, "
        f"one thread), ms: median [min-max] of {args.repeats * 5}"
    )
    for case, pipeline in (("training", training), ("validation", validation)):
        times = []
        with ndd.EvalMode.sync_cpu:
            ndd.as_tensor(pipeline()).evaluate()
            for _ in range(args.repeats * 5):
                start = time.perf_counter()
                ndd.as_tensor(pipeline()).evaluate()
                times.append((time.perf_counter() - start) * 1e3)
        median = statistics.median(times)
        print(
            f"{case:<11} {median:6.1f} [{min(times):.1f}-{max(times):.1f}] ms, "
            f"{median * 1e3 / args.batch_size:5.1f} us per image, at most {args.batch_size / median * 1e3:,.0f} images/s"
        )


def _spread(values, digits=0):
    return f"{statistics.median(values):7.{digits}f} [{min(values):.{digits}f}-{max(values):.{digits}f}]"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", choices=list(IMPLS), help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true", help="run the ndd pipelines once on the FakeDriver")
    parser.add_argument(
        "--host-cost", action="store_true", help="ndd's host time per batch after decoding, on the FakeDriver"
    )
    parser.add_argument(
        "--gpu-times",
        action="store_true",
        help="each operator's host and GPU time on one batch (ndd only; CUDA events)",
    )
    parser.add_argument(
        "--reference-python",
        default=os.path.expanduser("~/dali-ref/bin/python"),
        help="interpreter of the virtualenv where nvidia-dali is installed",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=1, help="full epochs per measurement")
    parser.add_argument("--num-files", type=int, default=NUM_FILES, help="JPEGs in the dataset")
    parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
    parser.add_argument("--size", type=int, default=224, help="output side of the crops")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--data", help="use (and keep) this folder for the dataset, building it when missing")
    parser.add_argument(
        "--stages",
        action="store_true",
        help="also time each operator alone on one batch (ndd and the dynamic mode)",
    )
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker, args)
        return
    if args.host_cost:
        _host_cost(args)
        return
    if args.smoke:
        args.repeats, args.num_files, args.batch_size, args.size = 1, 6, 4, 32
    root = args.data or os.path.join("/tmp", f"ndd-gpu-pipeline-{args.num_files}")
    if not os.path.isdir(root):
        make_data(root, args.num_files)
    args.root = root
    if args.gpu_times:
        _gpu_times(args)
        return

    workers = {"ndd": Worker(sys.executable, "ndd", args)}
    if workers["ndd"].error:
        sys.exit(f"the ndd worker failed: {workers['ndd'].error}")
    skipped = {}
    for impl in ("ref", "ref_pipeline"):
        if args.smoke:
            skipped[impl] = "not run in a smoke run"
        elif not os.path.exists(args.reference_python):
            skipped[impl] = f"reference interpreter {args.reference_python} not found"
        else:
            worker = Worker(args.reference_python, impl, args)
            if worker.error:
                skipped[impl] = f"cannot run: {worker.error}"
                worker.close()
            else:
                workers[impl] = worker
    results = {(impl, case): [] for impl in IMPLS for case in CASES}
    for _ in range(args.repeats):
        for case in CASES:
            for impl, worker in workers.items():
                results[impl, case].append(worker.time(case, args.epochs))
    stage_times = {}
    if args.stages:
        for impl in ("ndd", "ref"):
            if impl in workers:
                stage_times[impl] = workers[impl].stages(args.repeats * 3)
    for worker in workers.values():
        worker.close()

    if args.smoke:
        print(SMOKE_LABEL)
    print(
        f"{_device_name()}: images/s, median [min-max] of {args.repeats} repeats, batch {args.batch_size}, "
        f"{args.num_files} JPEGs, {args.threads} CPU threads"
    )
    header = f"{'pipeline':<11}" + "".join(f"{IMPLS[i]:>26}" for i in IMPLS)
    header += "".join(f"{'ndd/' + IMPLS[i].split()[-1] + ' (target)':>26}" for i in TARGETS)
    print(header)
    print("-" * len(header))
    for case in CASES:
        cells = [_spread(results[i, case]) if results[i, case] else "not run" for i in IMPLS]
        ratios = []
        for impl, target in TARGETS.items():
            if not results[impl, case]:
                ratios.append("-")
                continue
            ratio = statistics.median(results["ndd", case]) / statistics.median(results[impl, case])
            ratios.append(f"{ratio:.2f} ({'ok' if ratio >= target else 'below'} {target}x)")
        print(f"{case:<11}" + "".join(f"{c:>26}" for c in cells) + "".join(f"{r:>26}" for r in ratios))
    for impl, why in skipped.items():
        print(f"{IMPLS[impl]}: {why}")
    if stage_times:
        _print_stages(stage_times, args)
    if args.smoke:
        print(SMOKE_LABEL)


def _print_stages(stage_times, args):
    """Each operator alone: ms per call of a batch, median [min-max], and ndd/reference."""
    print()
    print(f"each operator alone, ms per batch of {args.batch_size}: median [min-max] of {args.repeats * 3}")
    impls = list(stage_times)
    header = f"{'operator':<22}" + "".join(f"{IMPLS[i]:>26}" for i in impls)
    header += f"{'ndd/reference time':>20}" if len(impls) > 1 else ""
    print(header)
    print("-" * len(header))
    for stage in stage_times[impls[0]]:
        cells = [stage_times[i][stage] for i in impls if stage in stage_times[i]]
        if len(cells) < len(impls):
            c = cells[0]
            print(f"{stage:<22}" + f"{statistics.median(c):10.2f} [{min(c):.2f}-{max(c):.2f}]".rjust(26))
            continue
        line = f"{stage:<22}" + "".join(
            f"{statistics.median(c):10.2f} [{min(c):.2f}-{max(c):.2f}]".rjust(26) for c in cells
        )
        if len(impls) > 1:
            line += f"{statistics.median(cells[0]) / statistics.median(cells[1]):20.2f}"
        print(line)


if __name__ == "__main__":
    main()
