"""Reader throughput, ndd against the reference, in one run.

``readers.File`` over 1,000 small files (1-4 KiB of random bytes in 10 class
folders), ``readers.Numpy`` over 1,000 small ``.npy`` files (64x64 float32),
``readers.TFRecord`` over one file of 1,000 small records (a 200-byte string
and an int64 label each) and ``readers.Webdataset`` over one tar of 1,000
samples (a 200-byte ``.bin`` and a ``.cls`` each), in batches of 64; the small
records show each reader's cost per sample. "TFRecord 20K" and "Webdataset 20K" read the
same kind of file with 20 KB payloads, where copying the bytes weighs. ``readers.NemoAsr`` reads a manifest of
128 one-second 16-bit WAV files at 22.05 kHz (a tone each), as they are ("NemoAsr")
and resampled to 16 kHz ("NemoAsr 16k"), and 128 four-second 16 kHz 16-bit FLAC files
("NemoAsr FLAC", LibriSpeech's kind). A measurement is several full
epochs of an already-started reader; every batch is touched the same way on
both sides (the labels as one numpy array and the sizes of the byte samples;
Numpy: the batch as one numpy array and its sum). The data is written once per
run to a temporary folder, removed at the end; the TFRecord and tar files and
their indexes by the tests' writers (``tests/readers``).

Each implementation runs in its own worker process (ndd from this interpreter,
the reference from its side virtualenv); the driver interleaves them, repeats,
and prints medians in samples per second, the spread (min-max of the repeats)
and the ratio ndd/reference (higher is better for ndd).

    python bench/readers.py [--reference-python ~/dali-ref/bin/python] [--repeats 5] [--epochs 20]
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from worker_process import WorkerProcess

NUM_FILES = 1000
NUM_CLASSES = 10
BATCH_SIZE = 64
CASES = [
    "File",
    "Numpy",
    "TFRecord",
    "Webdataset",
    "TFRecord 20K",
    "Webdataset 20K",
    "NemoAsr",
    "NemoAsr 16k",
    "NemoAsr FLAC",
]
NUM_CLIPS, CLIP_RATE = 128, 22050
RECORD_BYTES = 200
LARGE_RECORD_BYTES = 20_000
# The tests' TFRecord and tar writers (plain Python, for both interpreters).
TEST_READERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "readers")


def make_data(root):
    """Write the two datasets under ``root``; return their folders by case."""
    import numpy as np

    rng = np.random.default_rng(0)
    files_root = os.path.join(root, "files")
    for i in range(NUM_FILES):
        folder = os.path.join(files_root, f"class{i % NUM_CLASSES}")
        os.makedirs(folder, exist_ok=True)
        size = int(rng.integers(1024, 4097))
        rng.integers(0, 256, size, dtype=np.uint8).tofile(os.path.join(folder, f"{i:04d}.jpg"))
    numpy_root = os.path.join(root, "numpy")
    os.makedirs(numpy_root)
    for i in range(NUM_FILES):
        np.save(os.path.join(numpy_root, f"{i:04d}.npy"), rng.random((64, 64), dtype=np.float32))
    sys.path.insert(0, TEST_READERS)
    import tfrecord_dataset
    import webdataset_dataset

    records = {}
    for name, size in [("", RECORD_BYTES), (" 20K", LARGE_RECORD_BYTES)]:
        payloads = [rng.integers(0, 256, size, dtype=np.uint8).tobytes() for _ in range(NUM_FILES)]
        tfrecord = os.path.join(root, f"records{size}.tfrecord")
        examples = [
            tfrecord_dataset.encode_example({"data": ("bytes", [p]), "label": ("int64", [i % NUM_CLASSES])})
            for i, p in enumerate(payloads)
        ]
        tfrecord_dataset.write_index(tfrecord + ".idx", tfrecord_dataset.write_tfrecord(tfrecord, examples))
        tar = os.path.join(root, f"samples{size}.tar")
        members = []
        for i, p in enumerate(payloads):
            members += [(f"{i:04d}.bin", p), (f"{i:04d}.cls", str(i % NUM_CLASSES).encode())]
        webdataset_dataset.write_index(tar + ".idx", webdataset_dataset.write_tar(tar, members))
        records["TFRecord" + name], records["Webdataset" + name] = tfrecord, tar
    manifest = _write_clips(os.path.join(root, "speech"))
    flac_manifest = _write_flac_clips(os.path.join(root, "speech_flac"))
    return {
        "File": files_root,
        "Numpy": numpy_root,
        **records,
        "NemoAsr": manifest,
        "NemoAsr FLAC": flac_manifest,
    }


def _write_clips(folder):
    """One-second 16-bit WAV tones and their NeMo manifest (written with the standard
    library, the same bytes for both interpreters); returns the manifest's path."""
    import wave

    import numpy as np

    os.makedirs(folder)
    t = np.arange(CLIP_RATE) / CLIP_RATE
    lines = []
    for i in range(NUM_CLIPS):
        path = os.path.join(folder, f"{i:04d}.wav")
        with wave.open(path, "wb") as file:
            file.setnchannels(1)
            file.setsampwidth(2)
            file.setframerate(CLIP_RATE)
            file.writeframes((np.sin(2 * np.pi * (200 + 5 * i) * t) * 16000).astype("<i2").tobytes())
        lines.append(json.dumps({"audio_filepath": path, "duration": 1.0, "text": f"clip {i}"}))
    manifest = os.path.join(folder, "manifest.json")
    with open(manifest, "w", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")
    return manifest


def _write_flac_clips(folder):
    """Four-second 16 kHz 16-bit FLAC clips, a noisy tone each (LibriSpeech's kind of file),
    written with soundfile, and their NeMo manifest; returns the manifest's path."""
    import numpy as np
    import soundfile

    os.makedirs(folder)
    rate, seconds = 16000, 4
    t = np.arange(rate * seconds) / rate
    rng = np.random.default_rng(0)
    lines = []
    for i in range(NUM_CLIPS):
        path = os.path.join(folder, f"{i:04d}.flac")
        signal = 0.3 * np.sin(2 * np.pi * (200 + 5 * i) * t) + rng.normal(0, 0.02, t.size)
        soundfile.write(path, signal, rate, format="FLAC", subtype="PCM_16")
        lines.append(json.dumps({"audio_filepath": path, "duration": float(seconds), "text": f"clip {i}"}))
    manifest = os.path.join(folder, "manifest.json")
    with open(manifest, "w", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")
    return manifest


def _worker(impl, roots):
    """Serve timing requests on stdin: one JSON line in, one JSON line out."""
    import numpy as np

    if impl == "ndd":
        import ndd
        from ndd import tfrecord as tfrec
    else:
        import nvidia.dali.experimental.dynamic as ndd
        import nvidia.dali.tfrecord as tfrec

    def touch_file_batch(batch):
        data, label = batch
        labels = np.asarray(ndd.as_tensor(label))
        sizes = [shape[0] for shape in data.shape]
        return int(labels.sum()) + sum(sizes)

    def touch_numpy_batch(batch):
        (array,) = batch
        return float(np.asarray(ndd.as_tensor(array)).sum())

    def touch_audio_batch(batch):
        audio, rate, text = batch
        return sum(shape[0] for shape in audio.shape) + float(np.asarray(rate.select(0))) + len(text.shape)

    def touch_record_batch(batch):
        data, label = (batch["data"], batch["label"]) if isinstance(batch, dict) else batch
        return touch_file_batch((data, label))

    touch = {
        "File": touch_file_batch,
        "Numpy": touch_numpy_batch,
        "TFRecord": touch_record_batch,
        "Webdataset": touch_record_batch,
        "TFRecord 20K": touch_record_batch,
        "Webdataset 20K": touch_record_batch,
        "NemoAsr": touch_audio_batch,
        "NemoAsr 16k": touch_audio_batch,
        "NemoAsr FLAC": touch_audio_batch,
    }
    readers = {}
    if hasattr(ndd.readers, "File"):
        readers["File"] = ndd.readers.File(file_root=roots["File"])
    if hasattr(ndd.readers, "Numpy"):
        readers["Numpy"] = ndd.readers.Numpy(file_root=roots["Numpy"])
    if hasattr(ndd.readers, "TFRecord"):
        features = {
            "data": tfrec.FixedLenFeature((), tfrec.string, ""),
            "label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
        }
        for case in ("TFRecord", "TFRecord 20K"):
            path = roots[case]
            readers[case] = ndd.readers.TFRecord(path=path, index_path=path + ".idx", features=features)
    if hasattr(ndd.readers, "Webdataset"):
        for case in ("Webdataset", "Webdataset 20K"):
            path = roots[case]
            readers[case] = ndd.readers.Webdataset(paths=path, index_paths=path + ".idx", ext=["bin", "cls"])
    if hasattr(ndd.readers, "NemoAsr"):
        manifest = [roots["NemoAsr"]]
        readers["NemoAsr"] = ndd.readers.NemoAsr(manifest_filepaths=manifest)
        readers["NemoAsr 16k"] = ndd.readers.NemoAsr(manifest_filepaths=manifest, sample_rate=16000.0)
        readers["NemoAsr FLAC"] = ndd.readers.NemoAsr(manifest_filepaths=[roots["NemoAsr FLAC"]])
    for case, reader in readers.items():
        # Warm-up: the first epoch starts the loading thread and fills the caches.
        for batch in reader.next_epoch(batch_size=BATCH_SIZE):
            touch[case](batch)
    print(json.dumps({"ready": impl, "cases": sorted(readers)}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        reader, touch_batch = readers[req["case"]], touch[req["case"]]
        samples = 0
        start = time.perf_counter()
        for _ in range(req["epochs"]):
            for batch in reader.next_epoch(batch_size=BATCH_SIZE):
                touch_batch(batch)
                samples += BATCH_SIZE
        elapsed = time.perf_counter() - start
        print(json.dumps({"samples_per_s": samples / elapsed}), flush=True)


class Worker(WorkerProcess):
    def __init__(self, python, impl, roots):
        super().__init__(python, __file__, impl, "--roots", json.dumps(roots))
        self.cases = set(self.ready["cases"])

    def time(self, case, epochs):
        """Samples per second over ``epochs`` epochs of ``case``."""
        return self.ask(case=case, epochs=epochs)["samples_per_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", choices=["ndd", "ref"], help=argparse.SUPPRESS)
    parser.add_argument("--roots", help=argparse.SUPPRESS)
    parser.add_argument(
        "--reference-python",
        default=os.path.expanduser("~/dali-ref/bin/python"),
        help="interpreter of the virtualenv where nvidia-dali is installed",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=20, help="full epochs per measurement")
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker, json.loads(args.roots))
        return

    if not os.path.exists(args.reference_python):
        sys.exit(
            f"reference interpreter {args.reference_python} not found; install the reference in its own "
            "virtualenv: python3 -m venv ~/dali-ref && ~/dali-ref/bin/pip install nvidia-dali-cuda120==2.4.0 pillow"
        )
    data_dir = tempfile.mkdtemp(prefix="ndd-bench-readers-")
    try:
        roots = make_data(data_dir)
        ours = Worker(sys.executable, "ndd", roots)
        ref = Worker(args.reference_python, "ref", roots)
        cases = [case for case in CASES if case in ours.cases and case in ref.cases]
        rates = {case: ([], []) for case in cases}
        for _ in range(args.repeats):
            for case in cases:
                rates[case][0].append(ours.time(case, args.epochs))
                rates[case][1].append(ref.time(case, args.epochs))
        ours.close()
        ref.close()
    finally:
        shutil.rmtree(data_dir)

    print(
        f"samples/s over {args.epochs} epochs of {NUM_FILES} files or records ({NUM_CLIPS} for NemoAsr), "
        f"batch {BATCH_SIZE}: "
        f"median [min-max] of {args.repeats} interleaved repeats"
    )
    header = f"{'reader':<12} {'ndd samples/s':>26} {'reference samples/s':>26} {'ndd/ref':>8}"
    print(header)
    print("-" * len(header))
    for case in CASES:
        if case not in rates:
            missing = [name for name, w in (("ndd", ours), ("reference", ref)) if case not in w.cases]
            print(f"{case:<12} skipped: readers.{case} is missing in {' and '.join(missing)}")
            continue
        r_ours, r_ref = rates[case]
        m_ours, m_ref = statistics.median(r_ours), statistics.median(r_ref)
        spread_ours = f"{m_ours:9.0f} [{min(r_ours):.0f}-{max(r_ours):.0f}]"
        spread_ref = f"{m_ref:9.0f} [{min(r_ref):.0f}-{max(r_ref):.0f}]"
        print(f"{case:<12} {spread_ours:>26} {spread_ref:>26} {m_ours / m_ref:8.2f}")
    print("target: ndd/ref >= 1.0")


if __name__ == "__main__":
    main()
