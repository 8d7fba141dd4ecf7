"""Image pipelines on the CPU: ndd against the reference and the torchvision way, in one run.

Three pipelines over about 1,000 real-photo JPEGs of ImageNet-like sizes, in batches of 64, with 2 threads:

- ``training``: File -> decode -> random_resized_crop(224) -> flip by a coin -> crop_mirror_normalize(float, CHW)
- ``validation``: File -> decode -> resize(resize_shorter=256) -> crop_mirror_normalize(crop 224x224, float, CHW)
- ``decode``: File -> decode

The dataset is built once per run in a temporary folder (removed at the end): random crops, rescales, flips
and colour jitter of the bundled photographs (``ndd/_sample_data/photos``) with a little grain, re-encoded as
JPEG quality 90 at sizes such as 500x375, 375x500 and 500x333 (about 55 KiB each), in 10 class folders. It is
deterministic.

The ndd and reference pipelines run in the default (eager) mode with ``set_num_threads(2)``; the reader
shuffles. The torchvision way is ``ImageFolder`` + ``transforms.v2`` + ``DataLoader(num_workers=2,
persistent_workers=True)``, collating lists for the variable-size decode case. Every batch is handed over as
a consumer needs it: one dense numpy array for training and validation, the decoded images' shapes for
decode.

Each implementation runs in its own worker process (ndd from this interpreter, the reference from its side
virtualenv, torchvision from this interpreter); the driver interleaves them, repeats, and prints medians in
images per second, the spread (min-max of the repeats), the ratios and the targets; then the CPU milliseconds
each implementation spends per image (its threads and the DataLoader's worker processes), which tells their
costs apart even when other work shares the machine.

``--codec`` prints instead how far the decode case can go: the CPU milliseconds per image, on one thread, of
decoding every JPEG of the dataset with ndd's and the reference's ``decoders.image`` and with libjpeg-turbo
itself (through simplejpeg, OpenCV and Pillow), the fast IDCT and fast chroma upsampling included (they
change the pixels). reference/codec is the most a decoder built on that codec can be faster than the
reference, whatever it does around it.

``--profile`` prints instead where the time goes: the CPU milliseconds per image of each step of the training
and validation pipelines in ndd and in the reference (one thread, sync_cpu), then cProfile's top functions of
ndd's three pipelines.

    python bench/cpu_pipeline.py [--reference-python ~/dali-ref/bin/python] [--repeats 3] [--epochs 1]
    python bench/cpu_pipeline.py --profile
    python bench/cpu_pipeline.py --codec [--repeats 5]
    python bench/cpu_pipeline.py --data /tmp/jpegs   # build the dataset there once and keep it
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from worker_process import WorkerProcess

NUM_FILES = 1000
NUM_CLASSES = 10
BATCH_SIZE = 64
NUM_THREADS = 2
CASES = ["training", "validation", "decode"]
IMPLS = ["ndd", "ref", "torchvision"]
IMPL_NAMES = {"ndd": "ndd", "ref": "reference", "torchvision": "torchvision"}
# ndd/reference and ndd/torchvision throughput ratios the image issue asks for.
TARGET_VS_REF = {"training": 1.5, "validation": 1.3, "decode": 1.2}
TARGET_VS_TORCHVISION = {"training": 2.0, "validation": 2.0, "decode": 2.0}
# Operators each pipeline needs, as attribute paths under the module (reported when missing).
NEEDED_OPS = {
    "training": [
        "decoders.image",
        "random_resized_crop",
        "flip",
        "random.coin_flip",
        "crop_mirror_normalize",
    ],
    "validation": ["decoders.image", "resize", "crop_mirror_normalize"],
    "decode": ["decoders.image"],
}
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
# Width x height of the generated JPEGs, drawn uniformly: the common ImageNet shapes.
SIZES = [(500, 375), (375, 500), (500, 333), (333, 500), (500, 400), (400, 300), (500, 500), (640, 480)]
GRAIN_SIGMA = 4.0
PHOTOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ndd", "_sample_data", "photos")


def make_data(root, num_files=NUM_FILES):
    """Write the JPEG dataset under ``root`` (class folders) and return ``root``."""
    import numpy as np
    from PIL import Image, ImageEnhance

    photos = [
        Image.open(os.path.join(PHOTOS, name)).convert("RGB")
        for name in sorted(os.listdir(PHOTOS))
        if name.endswith(".jpg")
    ]
    rng = np.random.default_rng(0)
    for i in range(num_files):
        photo = photos[i % len(photos)]
        width, height = SIZES[int(rng.integers(len(SIZES)))]
        # Scale the photograph so that a width x height window fits, with up to 40% room to move it.
        scale = max(width / photo.width, height / photo.height) * float(rng.uniform(1.0, 1.4))
        scaled = photo.resize(
            (max(width, round(photo.width * scale)), max(height, round(photo.height * scale))),
            Image.BILINEAR,
        )
        left = int(rng.integers(scaled.width - width + 1))
        top = int(rng.integers(scaled.height - height + 1))
        image = scaled.crop((left, top, left + width, top + height))
        if rng.random() < 0.5:
            image = image.transpose(Image.FLIP_LEFT_RIGHT)
        image = ImageEnhance.Brightness(image).enhance(float(rng.uniform(0.7, 1.3)))
        image = ImageEnhance.Color(image).enhance(float(rng.uniform(0.6, 1.4)))
        image = ImageEnhance.Contrast(image).enhance(float(rng.uniform(0.8, 1.2)))
        # Grain (the same on every channel, like a sensor's) restores some of the fine detail the upscaling
        # smoothed away, so that the files are closer to camera JPEGs in size and decoding cost.
        grain = rng.normal(0.0, GRAIN_SIGMA, (height, width, 1))
        image = Image.fromarray(np.clip(np.asarray(image) + grain, 0, 255).astype(np.uint8))
        folder = os.path.join(root, f"class{i % NUM_CLASSES}")
        os.makedirs(folder, exist_ok=True)
        image.save(os.path.join(folder, f"{i:04d}.jpg"), quality=90)
    return root


def _missing_ops(module, case):
    missing = []
    for path in NEEDED_OPS[case]:
        obj = module
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                missing.append(path)
                break
    return missing


def _dali_pipelines(ndd, root):
    """Per case: a function running one epoch and returning the number of images (ndd or the reference)."""
    import numpy as np

    readers = {
        "training": ndd.readers.File(file_root=root, random_shuffle=True, seed=1),
        "validation": ndd.readers.File(file_root=root),
        "decode": ndd.readers.File(file_root=root),
    }

    def training(encoded):
        images = ndd.decoders.image(encoded)
        cropped = ndd.random_resized_crop(images, size=[224, 224])
        flipped = ndd.flip(cropped, horizontal=ndd.random.coin_flip(batch_size=encoded.batch_size))
        out = ndd.crop_mirror_normalize(flipped, dtype=ndd.float32, output_layout="CHW", mean=MEAN, std=STD)
        return np.asarray(ndd.as_tensor(out)).shape[0]

    def validation(encoded):
        images = ndd.decoders.image(encoded)
        resized = ndd.resize(images, resize_shorter=256)
        out = ndd.crop_mirror_normalize(
            resized, crop=[224, 224], dtype=ndd.float32, output_layout="CHW", mean=MEAN, std=STD
        )
        return np.asarray(ndd.as_tensor(out)).shape[0]

    def decode(encoded):
        images = ndd.decoders.image(encoded)
        images.evaluate()
        return len(images.shape)

    steps = {"training": training, "validation": validation, "decode": decode}

    def epoch_runner(case):
        def run_epoch():
            images = 0
            for encoded, _labels in readers[case].next_epoch(batch_size=BATCH_SIZE):
                images += steps[case](encoded)
            return images

        return run_epoch

    return {case: epoch_runner(case) for case in CASES}


def _import_torchvision():
    """Import torchvision; tolerate a build whose compiled ops do not load next to this torch (the CUDA
    wheel of torchvision beside torch+cpu): this pipeline uses only Pillow decoding and Python transforms."""
    import torch

    try:
        import torchvision
    except RuntimeError:
        # The failing import registers fake kernels for compiled ops that never loaded; skip those.
        for name in [name for name in sys.modules if name.startswith("torchvision")]:
            del sys.modules[name]
        register_fake = torch.library.register_fake
        torch.library.register_fake = lambda *args, **kwargs: lambda function: function
        try:
            import torchvision
        finally:
            torch.library.register_fake = register_fake
    return torchvision


def _torchvision_pipelines(root):
    import torch

    _import_torchvision()
    from torchvision import datasets
    from torchvision.transforms import v2

    torch.set_num_threads(1)
    normalize = [
        v2.ToImage(),
        v2.ToDtype(torch.float32, scale=True),
        v2.Normalize(mean=[m / 255 for m in MEAN], std=[s / 255 for s in STD]),
    ]
    transforms = {
        "training": v2.Compose([v2.RandomResizedCrop(224), v2.RandomHorizontalFlip(), *normalize]),
        "validation": v2.Compose([v2.Resize(256), v2.CenterCrop(224), *normalize]),
        "decode": v2.ToImage(),
    }

    def collate_list(samples):
        return [image for image, _ in samples], torch.tensor([label for _, label in samples])

    loaders = {
        case: torch.utils.data.DataLoader(
            datasets.ImageFolder(root, transform=transforms[case]),
            batch_size=BATCH_SIZE,
            shuffle=case == "training",
            num_workers=NUM_THREADS,
            persistent_workers=True,
            collate_fn=collate_list if case == "decode" else None,
        )
        for case in CASES
    }

    def epoch_runner(case):
        def run_epoch():
            images = 0
            for batch, _labels in loaders[case]:
                if case == "decode":
                    images += len([image.shape for image in batch])
                else:
                    images += batch.numpy().shape[0]
            return images

        return run_epoch

    return {case: epoch_runner(case) for case in CASES}


def _stage_breakdown(ndd, root):
    """CPU milliseconds per image of each step of the training and validation pipelines, on one thread in
    sync_cpu mode (one epoch after a warm-up one). CPU time of the process, not wall time: other work on
    the machine hardly changes it, and it is what bounds the throughput of a CPU-bound pipeline."""
    import numpy as np

    def training_steps(encoded):
        images = ndd.decoders.image(encoded)
        yield "decoders.image", images
        cropped = ndd.random_resized_crop(images, size=[224, 224])
        yield "random_resized_crop", cropped
        coin = ndd.random.coin_flip(batch_size=encoded.batch_size)
        flipped = ndd.flip(cropped, horizontal=coin)
        yield "coin_flip + flip", flipped
        out = ndd.crop_mirror_normalize(flipped, dtype=ndd.float32, output_layout="CHW", mean=MEAN, std=STD)
        yield "crop_mirror_normalize", out
        yield "as_tensor (stack)", np.asarray(ndd.as_tensor(out))

    def validation_steps(encoded):
        images = ndd.decoders.image(encoded)
        yield "decoders.image", images
        resized = ndd.resize(images, resize_shorter=256)
        yield "resize", resized
        out = ndd.crop_mirror_normalize(
            resized, crop=[224, 224], dtype=ndd.float32, output_layout="CHW", mean=MEAN, std=STD
        )
        yield "crop_mirror_normalize", out
        yield "as_tensor (stack)", np.asarray(ndd.as_tensor(out))

    breakdown = {}
    for case, steps in (("training", training_steps), ("validation", validation_steps)):
        if _missing_ops(ndd, case):
            continue
        reader = ndd.readers.File(file_root=root)
        with ndd.EvalMode.sync_cpu:
            for _epoch in ("warm-up", "measured"):
                times, images = {}, 0
                start = time.process_time()
                for encoded, _labels in reader.next_epoch(batch_size=BATCH_SIZE):
                    images += encoded.batch_size
                    times["reader"] = times.get("reader", 0.0) + time.process_time() - start
                    start = time.process_time()
                    for name, result in steps(encoded):
                        if hasattr(result, "evaluate"):
                            result.evaluate()
                        times[name] = times.get(name, 0.0) + time.process_time() - start
                        start = time.process_time()
        breakdown[case] = {name: seconds * 1e3 / images for name, seconds in times.items()}
    return breakdown


def _cpu_seconds():
    """CPU time of this process and of its live child processes (the DataLoader's workers), in seconds."""
    total = time.process_time()
    try:
        ticks = os.sysconf("SC_CLK_TCK")
        children = []
        for task in os.listdir(f"/proc/{os.getpid()}/task"):
            with open(f"/proc/{os.getpid()}/task/{task}/children", encoding="utf-8") as listing:
                children += listing.read().split()
        for pid in children:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime and stime
    except OSError:  # not Linux, or a child just ended: this process alone
        pass
    return total


def _codec_decoders(impl, files):
    """Name -> a function decoding every JPEG of ``files`` (numpy uint8 arrays of their bytes) on one
    thread. Each image is dropped once decoded, as a pipeline drops it once consumed."""
    if impl == "ref":
        import nvidia.dali.experimental.dynamic as dali

        dali.set_num_threads(1)
        return {"reference decoders.image": _batched_decoder(dali, files)}
    import io

    import numpy as np
    import simplejpeg
    from PIL import Image

    import ndd

    ndd.set_num_threads(1)

    def each(decode_one):
        def decode():
            for raw in files:
                decode_one(raw)

        return decode

    decoders = {
        "ndd decoders.image": _batched_decoder(ndd, files),
        "libjpeg-turbo (simplejpeg)": each(simplejpeg.decode_jpeg),
        "  with the fast IDCT": each(lambda raw: simplejpeg.decode_jpeg(raw, fastdct=True)),
        "  with fast upsampling": each(lambda raw: simplejpeg.decode_jpeg(raw, fastupsample=True)),
        "  with both": each(lambda raw: simplejpeg.decode_jpeg(raw, fastdct=True, fastupsample=True)),
        "libjpeg-turbo (Pillow)": each(lambda raw: np.asarray(Image.open(io.BytesIO(raw)).convert("RGB"))),
    }
    try:
        import cv2
    except ImportError:
        return decoders
    decoders["libjpeg-turbo (OpenCV)"] = each(lambda raw: cv2.imdecode(raw, cv2.IMREAD_COLOR))
    return decoders


def _batched_decoder(module, files):
    """Decoding with ``module.decoders.image``, batches of BATCH_SIZE made beforehand, each evaluated at
    once (sync_cpu)."""
    batches = [module.batch(files[first : first + BATCH_SIZE]) for first in range(0, len(files), BATCH_SIZE)]

    def decode():
        with module.EvalMode.sync_cpu:
            for encoded in batches:
                module.decoders.image(encoded).evaluate()

    return decode


def _codec_worker(impl, root):
    """Serve requests for the CPU milliseconds per image of one decoder over the whole dataset."""
    import numpy as np

    paths = sorted(os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names)
    files = []
    for path in paths:
        with open(path, "rb") as file:
            files.append(np.frombuffer(file.read(), np.uint8))
    decoders = _codec_decoders(impl, files)
    for decode in decoders.values():
        decode()  # warm-up
    print(json.dumps({"ready": impl, "decoders": list(decoders)}), flush=True)
    for line in sys.stdin:
        decode = decoders[json.loads(line)["decoder"]]
        start = time.process_time()
        decode()
        print(json.dumps({"cpu_ms": (time.process_time() - start) * 1e3 / len(files)}), flush=True)


def _print_codec(root, reference_python, repeats):
    """The decode case against libjpeg-turbo itself: CPU ms per image on one thread, interleaved repeats."""
    workers = [WorkerProcess(sys.executable, __file__, "ndd", "--root", root, "--codec")]
    if os.path.exists(reference_python):
        workers.append(WorkerProcess(reference_python, __file__, "ref", "--root", root, "--codec"))
    else:
        print(f"reference interpreter {reference_python} not found: no ratios")
    times = {name: [] for worker in workers for name in worker.ready["decoders"]}
    for _ in range(repeats):
        for worker in workers:
            for name in worker.ready["decoders"]:
                times[name].append(worker.ask(decoder=name)["cpu_ms"])
    for worker in workers:
        worker.close()
    reference = times.get("reference decoders.image")
    print(
        f"\nDecoding every JPEG once, CPU ms per image on one thread: median [min-max] of {repeats} interleaved "
        "repeats.\nreference/this: how many times faster than the reference this is (for a codec alone: the "
        "most a decoder built on it can be)."
    )
    print(f"{'decoder':<28} {'ms per image':>22} {'reference/this':>15}")
    for name, values in times.items():
        ratio = "-" if not reference else f"{statistics.median(reference) / statistics.median(values):.2f}"
        spread = f"{statistics.median(values):.3f} [{min(values):.3f}-{max(values):.3f}]"
        print(f"{name:<28} {spread:>22} {ratio:>15}")


def _worker(impl, root, profile):
    """Serve timing requests on stdin: one JSON line in, one JSON line out."""
    missing = {}
    if impl == "torchvision":
        runners = _torchvision_pipelines(root)
    else:
        if impl == "ndd":
            import ndd
        else:
            import nvidia.dali.experimental.dynamic as ndd
        ndd.set_num_threads(1 if profile else NUM_THREADS)
        missing = {case: _missing_ops(ndd, case) for case in CASES}
        missing = {case: ops for case, ops in missing.items() if ops}
        runners = {case: run for case, run in _dali_pipelines(ndd, root).items() if case not in missing}
    if profile == "stages":
        print(json.dumps(_stage_breakdown(ndd, root)), flush=True)
        return
    if profile:
        _profile(ndd, runners)
        return
    for case, run_epoch in list(runners.items()):
        try:
            run_epoch()  # warm-up: loading threads, worker processes, caches
        except Exception as error:  # reported in the table instead of stopping the other measurements
            del runners[case]
            missing[case] = [f"error: {type(error).__name__}: {str(error)[-80:]}"]
    print(json.dumps({"ready": impl, "cases": sorted(runners), "missing": missing}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        run_epoch = runners[req["case"]]
        images = 0
        start, start_cpu = time.perf_counter(), _cpu_seconds()
        for _ in range(req["epochs"]):
            images += run_epoch()
        elapsed, cpu = time.perf_counter() - start, _cpu_seconds() - start_cpu
        print(json.dumps({"images_per_s": images / elapsed, "cpu_ms": cpu * 1e3 / images}), flush=True)


def _profile(ndd, runners):
    """cProfile one epoch of each pipeline, on one thread in sync_cpu mode so that every kernel runs on the
    profiled thread (the reader's loading thread is not profiled)."""
    import cProfile
    import pstats

    for case, run_epoch in runners.items():
        run_epoch()  # warm-up
        profiler = cProfile.Profile()
        with ndd.EvalMode.sync_cpu:
            start = time.perf_counter()
            profiler.enable()
            images = run_epoch()
            profiler.disable()
            elapsed = time.perf_counter() - start
        print(f"\n=== ndd {case}: {images / elapsed:.0f} img/s on one thread under cProfile ===")
        stats = pstats.Stats(profiler, stream=sys.stdout)
        stats.sort_stats("tottime").print_stats(15)


def _print_stages(root, reference_python):
    """Where the time of each pipeline goes, step by step, in ndd and in the reference (CPU time)."""
    breakdowns = {}
    for impl, python in (("ndd", sys.executable), ("ref", reference_python)):
        if not os.path.exists(python):
            continue
        command = [python, os.path.abspath(__file__), "--worker", impl, "--root", root, "--stages"]
        done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
        breakdowns[impl] = json.loads(done.stdout.strip().splitlines()[-1])
    for case in ("training", "validation"):
        steps = [step for b in breakdowns.values() for step in b.get(case, {})]
        steps = list(dict.fromkeys(steps))
        if not steps:
            print(f"\n{case}: no step breakdown (operators missing)")
            continue
        print(f"\n{case}, CPU ms per image on one thread (sync_cpu), each step evaluated before the next:")
        print(f"  {'step':<24} {'ndd':>14} {'reference':>14}")
        for step in [*steps, "total"]:
            cells = []
            for impl in ("ndd", "ref"):
                times = breakdowns.get(impl, {}).get(case)
                if not times:
                    cells.append("-")
                    continue
                total = sum(times.values())
                ms = total if step == "total" else times.get(step)
                cells.append("-" if ms is None else f"{ms:.3f} ({ms / total:4.0%})")
            print(f"  {step:<24} {cells[0]:>14} {cells[1]:>14}")


class Worker(WorkerProcess):
    def __init__(self, python, impl, root):
        super().__init__(python, __file__, impl, "--root", root)
        self.cases, self.missing = set(self.ready["cases"]), self.ready["missing"]

    def time(self, case, epochs):
        """Images per second and CPU milliseconds per image of ``epochs`` epochs of ``case``."""
        result = self.ask(case=case, epochs=epochs)
        return result["images_per_s"], result["cpu_ms"]


def _cell(rates):
    if not rates:
        return ""
    return f"{statistics.median(rates):6.0f} [{min(rates):.0f}-{max(rates):.0f}]"


def _ratio(rates, ours, other, target):
    if not rates[ours] or not rates[other]:
        return "-"
    ratio = statistics.median(rates[ours]) / statistics.median(rates[other])
    # Truncated, not rounded: 1.496 shows as 1.49, below a 1.5x target.
    return f"{math.floor(ratio * 100) / 100:.2f} ({'ok' if ratio >= target else 'below'} {target}x)"


def _ms(value):
    return "-" if value is None else f"{value:.2f}"


def _cost_ratio(row, other):
    """How many times ndd's CPU cost per image ``other`` spends."""
    return "-" if row["ndd"] is None or row[other] is None else f"{row[other] / row['ndd']:.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", choices=IMPLS, help=argparse.SUPPRESS)
    parser.add_argument("--stages", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument(
        "--codec", action="store_true", help="time the decode case against libjpeg-turbo itself instead"
    )
    parser.add_argument(
        "--reference-python",
        default=os.path.expanduser("~/dali-ref/bin/python"),
        help="interpreter of the virtualenv where nvidia-dali is installed",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=1, help="full epochs per measurement")
    parser.add_argument("--num-files", type=int, default=NUM_FILES, help="JPEGs in the dataset")
    parser.add_argument(
        "--data", help="use (and keep) this folder for the dataset, building it only when it does not exist"
    )
    parser.add_argument(
        "--profile", action="store_true", help="profile ndd's pipelines instead (cProfile, top functions)"
    )
    args = parser.parse_args()
    if args.worker and args.codec:
        _codec_worker(args.worker, args.root)
        return
    if args.worker:
        _worker(args.worker, args.root, profile="stages" if args.stages else None)
        return

    data_dir = args.data or tempfile.mkdtemp(prefix="ndd-bench-cpu-pipeline-")
    try:
        start = time.perf_counter()
        if args.data and os.path.isdir(args.data):
            root = args.data
            print(f"dataset: the JPEGs already in {root}")
        else:
            root = make_data(data_dir, args.num_files)
            print(f"dataset: {args.num_files} JPEGs in {root} ({time.perf_counter() - start:.1f} s to build)")
        if args.codec:
            _print_codec(root, args.reference_python, args.repeats)
            return
        if args.profile:
            _print_stages(root, args.reference_python)
            _worker("ndd", root, profile="cprofile")
            return
        pythons = {"ndd": sys.executable, "ref": args.reference_python, "torchvision": sys.executable}
        workers = {}
        for impl in IMPLS:
            if impl == "ref" and not os.path.exists(args.reference_python):
                print(
                    f"reference interpreter {args.reference_python} not found (install the reference in its "
                    "own virtualenv: python3 -m venv ~/dali-ref && ~/dali-ref/bin/pip install "
                    "nvidia-dali-cuda120==2.4.0 pillow); measuring without it"
                )
                continue
            if impl == "torchvision":
                try:
                    _import_torchvision()
                except ImportError:
                    print("torchvision is not installed (pip install torchvision); measuring without it")
                    continue
            workers[impl] = Worker(pythons[impl], impl, root)
        rates = {case: {impl: [] for impl in IMPLS} for case in CASES}
        cpu_ms = {case: {impl: [] for impl in IMPLS} for case in CASES}
        for _ in range(args.repeats):
            for case in CASES:
                for impl, worker in workers.items():
                    if case in worker.cases:
                        rate, cpu = worker.time(case, args.epochs)
                        rates[case][impl].append(rate)
                        cpu_ms[case][impl].append(cpu)
        for worker in workers.values():
            worker.close()
    finally:
        if not args.data:
            shutil.rmtree(data_dir)

    print(
        f"\nimages/s, {NUM_THREADS} threads, batch {BATCH_SIZE}, {args.epochs} epoch(s) of {args.num_files} JPEGs "
        f"per measurement: median [min-max] of {args.repeats} interleaved repeats"
    )
    header = (
        f"{'pipeline':<11} {'ndd':>18} {'reference':>18} {'torchvision':>18} "
        f"{'ndd/ref (target)':>20} {'ndd/torchvision (target)':>26}"
    )
    print(header)
    print("-" * len(header))
    for case in CASES:
        row = rates[case]
        missing = workers["ndd"].missing.get(case) if "ndd" in workers else None
        if missing and missing[0].startswith("error: "):
            print(f"{case}: ndd failed: {missing[0]}")
            ndd_cell = "error"
        else:
            ndd_cell = f"missing: {', '.join(missing)}" if missing else _cell(row["ndd"])
        print(
            f"{case:<11} {ndd_cell:>18} {_cell(row['ref']):>18} {_cell(row['torchvision']):>18} "
            f"{_ratio(row, 'ndd', 'ref', TARGET_VS_REF[case]):>20} "
            f"{_ratio(row, 'ndd', 'torchvision', TARGET_VS_TORCHVISION[case]):>26}"
        )
    print(
        "\nCPU milliseconds per image (all threads, and the DataLoader's worker processes): median of the "
        "repeats; less is better.\nOn a machine busy with other work this shows what each implementation "
        "costs better than images/s does."
    )
    header = f"{'pipeline':<11} {'ndd':>10} {'reference':>10} {'torchvision':>12} {'ref/ndd':>8} {'torchvision/ndd':>16}"
    print(header)
    print("-" * len(header))
    for case in CASES:
        row = {impl: statistics.median(values) if values else None for impl, values in cpu_ms[case].items()}
        print(
            f"{case:<11} {_ms(row['ndd']):>10} {_ms(row['ref']):>10} {_ms(row['torchvision']):>12} "
            f"{_cost_ratio(row, 'ref'):>8} {_cost_ratio(row, 'torchvision'):>16}"
        )


if __name__ == "__main__":
    main()
