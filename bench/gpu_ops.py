"""GPU operators: memory bandwidth against the device's copy bandwidth, and the
per-call dispatch cost against the reference's dynamic mode, in one run.

Bandwidth. The device's copy bandwidth is measured first: a device-to-device
``cuMemcpyDtoDAsync`` of a large buffer, timed with CUDA events on one stream.
Then each memory-bound ndd GPU operator runs on large inputs (``sync_cpu`` mode,
so its kernels are queued from this thread on the current stream, between the
same events). An operator's bandwidth is the bytes it reads and writes divided by
its time; the issue's target is at least 70% of the copy bandwidth. An operator
without a GPU kernel in this build is listed as such. The inputs have 256M elements
(1 GiB of float32 each) by default, so that a call's fixed host time (its
allocations and table uploads: 0.1-0.3 ms on an H200's host) stays small beside
its kernel; with 64M elements the transpose measured that host time more than its
kernel.

Dispatch. Many ``a + b`` calls on 16-element GPU tensors in the default (eager)
mode, then one evaluation and synchronisation of the last result, in ndd and in
the reference (from its side virtualenv), each in its own worker process,
interleaved and repeated; the target is ndd/reference <= 0.5.

    python bench/gpu_ops.py [--reference-python ~/dali-ref/bin/python] [--repeats 7]
    python bench/gpu_ops.py --smoke   # every code path once on the recording FakeDriver

With ``--smoke`` no GPU is used and every figure is meaningless: the fake driver
runs no kernels and answers 1 ms for every event pair. It proves that the script
runs, nothing more.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
from worker_process import WorkerProcess

TARGET_FRACTION = 0.7
TARGET_RATIO = 0.5
SMOKE_LABEL = "SMOKE RUN on the recording FakeDriver: no kernel ran, every figure below is meaningless"


_fake_installed = []


def _install_fake():
    """Make the recording FakeDriver the driver for the rest of the process."""
    from ndd._cuda import driver
    from ndd._cuda.fake import FakeDriver

    installing = driver.use_fake(FakeDriver())
    installing.__enter__()
    # Kept: collecting the context manager would close it and uninstall the fake.
    _fake_installed.append(installing)


# -- bandwidth -----------------------------------------------------------------------


class EventTimer:
    """Milliseconds of the work queued on ``stream`` between ``start()`` and ``stop()``,
    from a pair of timing-enabled CUDA events."""

    def __init__(self, stream):
        from ndd._cuda import driver

        self.api = driver.api()
        self.check = driver.check
        self.stream = stream
        self.begin = self.check(self.api.cuEventCreate(0), "cuEventCreate")
        self.end = self.check(self.api.cuEventCreate(0), "cuEventCreate")

    def start(self):
        self.check(self.api.cuEventRecord(self.begin, self.stream), "cuEventRecord")

    def stop(self):
        self.check(self.api.cuEventRecord(self.end, self.stream), "cuEventRecord")
        self.check(self.api.cuEventSynchronize(self.end), "cuEventSynchronize")
        return float(self.check(self.api.cuEventElapsedTime(self.begin, self.end), "cuEventElapsedTime"))

    def close(self):
        self.check(self.api.cuEventDestroy(self.begin), "cuEventDestroy")
        self.check(self.api.cuEventDestroy(self.end), "cuEventDestroy")


def copy_bandwidth(nbytes, repeats, calls):
    """GB/s of a device-to-device copy of ``nbytes`` (read + written), median of ``repeats``."""
    from ndd._cuda import driver, memory, streams

    owner = streams.create(0)
    src = memory.allocate(nbytes, owner, 0)
    dst = memory.allocate(nbytes, owner, 0)
    api = driver.api()
    timer = EventTimer(owner.handle)

    def copy():
        driver.check(api.cuMemcpyDtoDAsync(dst.ptr, src.ptr, nbytes, owner.handle), "cuMemcpyDtoDAsync")

    copy()  # warm-up
    samples = []
    for _ in range(repeats):
        timer.start()
        for _ in range(calls):
            copy()
        samples.append(2 * nbytes * calls / (timer.stop() * 1e-3) / 1e9)
    timer.close()
    src.close()
    dst.close()
    streams.synchronize(owner.handle)
    return samples


def gpu_kernel_status(name):
    """Whether the public operator ``name`` has a GPU kernel in ndd."""
    from ndd._ops import registry

    ops = {op.name: op for op in registry.all_operators()}
    return name in ops and ops[name].gpu_kernel is not None


def bandwidth_cases(n):
    """``(label, make inputs, call, bytes moved)`` of each memory-bound operator, or
    ``(label, None, None, reason)`` for one that cannot run on the GPU yet."""
    import ndd
    from ndd._ops import gpu_elementwise

    f32 = np.float32
    cases = []
    if np.dtype(np.float16) in gpu_elementwise.KERNEL_TYPES:
        cases.append(("cast f32->f16", 1, lambda x: ndd.cast(x, dtype=ndd.float16), n * (4 + 2)))
    else:
        cases.append(("cast f32->i32", 1, lambda x: ndd.cast(x, dtype=ndd.int32), n * (4 + 4)))
    cases.append(("a + b (f32)", 2, lambda x, y: x + y, n * 12))
    cases.append(("a * 2.0 (f32)", 1, lambda x: x * 2.0, n * 8))
    side = int(np.sqrt(n))
    if gpu_kernel_status("transpose"):
        cases.append(
            ("transpose 2D (f32)", "square", lambda x: ndd.transpose(x, perm=[1, 0]), side * side * 8)
        )
    else:
        cases.append(("transpose 2D (f32)", None, None, "no GPU kernel yet"))
    if gpu_kernel_status("pad"):
        # One row of padding on a square image: almost all of it is a copy.
        cases.append(
            (
                "pad 2D (f32)",
                "square",
                lambda x: ndd.pad(x, shape=[side + 1, side + 1]),
                (side * side + (side + 1) ** 2) * 4,
            )
        )
    else:
        cases.append(("pad 2D (f32)", None, None, "no GPU kernel yet"))
    rng = np.random.default_rng(0)
    flat = [rng.random(n, dtype=f32), rng.random(n, dtype=f32)]
    square = rng.random((side, side), dtype=f32)

    def inputs(kind):
        if kind == "square":
            return [ndd.tensor(square, device="gpu")]
        return [ndd.tensor(flat[i], device="gpu") for i in range(kind)]

    return [
        (label, None if kind is None else (lambda k=kind: inputs(k)), call, moved)
        for label, kind, call, moved in cases
    ]


def operator_bandwidth(cases, repeats, calls):
    """``{label: [GB/s of each repeat] or reason}``."""
    import ndd

    results = {}
    stream = ndd.get_current_stream()
    timer = EventTimer(stream.handle)
    for label, make_inputs, call, moved in cases:
        if make_inputs is None:
            results[label] = moved
            continue
        args = make_inputs()
        with ndd.EvalMode.sync_cpu:
            for arg in args:
                arg.evaluate()
            call(*args).evaluate()  # warm-up: module load, operator caches
            stream.synchronize()
            samples = []
            for _ in range(repeats):
                timer.start()
                for _ in range(calls):
                    result = call(*args)
                    result.evaluate()
                samples.append(moved * calls / (timer.stop() * 1e-3) / 1e9)
                del result
        results[label] = samples
        del args
    timer.close()
    stream.synchronize()
    return results


# -- dispatch --------------------------------------------------------------------------


def _worker(impl, smoke):
    """Serve timing requests on stdin: one JSON line in, one JSON line out."""
    try:
        if impl == "ndd":
            if smoke:
                _install_fake()
            import ndd
        else:
            import nvidia.dali.experimental.dynamic as ndd
        sample = np.arange(16, dtype=np.float32)
        a = ndd.tensor(sample, device="gpu")
        b = ndd.tensor(sample[::-1].copy(), device="gpu")
        (a + b).cpu().evaluate()
    except Exception as error:  # the reference without a GPU, or a broken install
        print(json.dumps({"error": f"{type(error).__name__}: {error}".splitlines()[0]}), flush=True)
        return
    print(json.dumps({"ready": impl}), flush=True)
    for line in sys.stdin:
        n = json.loads(line)["n"]
        with ndd.EvalMode.default:
            (a + b).cpu().evaluate()  # warm-up
            start = time.perf_counter()
            for _ in range(n):
                result = a + b
            # A copy to the host of the last result waits for all the work queued before it.
            result.cpu().evaluate()
            elapsed = time.perf_counter() - start
        print(json.dumps({"us": elapsed / n * 1e6}), flush=True)


class Worker(WorkerProcess):
    def __init__(self, python, impl, smoke):
        super().__init__(python, __file__, impl, *(["--smoke"] if smoke else []), required=False)
        self.error = self.ready.get("error")

    def time(self, n):
        """Microseconds per call of ``n`` calls."""
        return self.ask(n=n)["us"]


def dispatch_times(args):
    """``(ndd us, reference us or None, why the reference did not run)``."""
    ours = Worker(sys.executable, "ndd", args.smoke)
    if ours.error:
        ours.close()
        raise RuntimeError(f"the ndd worker failed: {ours.error}")
    ref, why = None, ""
    if not os.path.exists(args.reference_python):
        why = f"reference interpreter {args.reference_python} not found"
    else:
        ref = Worker(args.reference_python, "ref", args.smoke)
        if ref.error:
            why, ref = f"reference cannot run on the GPU: {ref.error}", ref.close()
    t_ours, t_ref = [], []
    for _ in range(args.repeats):
        t_ours.append(ours.time(args.calls))
        if ref is not None:
            t_ref.append(ref.time(args.calls))
    ours.close()
    if ref is not None:
        ref.close()
    return t_ours, t_ref or None, why


# -- report ----------------------------------------------------------------------------


def _spread(values, fmt):
    return f"{statistics.median(values):{fmt}} [{min(values):{fmt}}-{max(values):{fmt}}]"


def report(copy, ops, dispatch, args):
    if args.smoke:
        print(SMOKE_LABEL)
    print(f"bandwidth in GB/s (bytes read + written / time): median [min-max] of {args.repeats} repeats")
    header = f"{'operation':<20} {'GB/s':>26} {'of copy':>8} {'target':>7}"
    print(header)
    print("-" * len(header))
    copy_median = statistics.median(copy)
    print(f"{'copy DtoD':<20} {_spread(copy, '8.1f'):>26} {1.0:8.2f} {'':>7}")
    for label, samples in ops.items():
        if isinstance(samples, str):
            print(f"{label:<20} {samples:>26} {'-':>8} {'-':>7}")
            continue
        fraction = statistics.median(samples) / copy_median
        verdict = "met" if fraction >= TARGET_FRACTION else "MISSED"
        print(f"{label:<20} {_spread(samples, '8.1f'):>26} {fraction:8.2f} {verdict:>7}")
    print(f"(target: >= {TARGET_FRACTION:.0%} of the copy bandwidth)")
    print()
    t_ours, t_ref, why = dispatch
    print(f"dispatch: us per 'a + b' on a 16-element GPU tensor, eager mode, {args.calls} calls per loop")
    header = f"{'implementation':<20} {'us per call':>26} {'ndd/ref':>8} {'target':>7}"
    print(header)
    print("-" * len(header))
    print(f"{'ndd':<20} {_spread(t_ours, '8.2f'):>26}")
    if t_ref is None:
        print(f"{'reference':<20} {'not run':>26}  ({why})")
    else:
        ratio = statistics.median(t_ours) / statistics.median(t_ref)
        verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
        print(f"{'reference':<20} {_spread(t_ref, '8.2f'):>26} {ratio:8.3f} {verdict:>7}")
    print(f"(target: ndd/ref <= {TARGET_RATIO})")
    if args.smoke:
        print(SMOKE_LABEL)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", choices=["ndd", "ref"], help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true", help="run every code path once on the FakeDriver")
    parser.add_argument(
        "--reference-python",
        default=os.path.expanduser("~/dali-ref/bin/python"),
        help="interpreter of the virtualenv where nvidia-dali is installed",
    )
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--elements", type=int, default=256 << 20, help="elements of the bandwidth inputs")
    parser.add_argument("--bandwidth-calls", type=int, default=10, help="calls between two events")
    parser.add_argument("--calls", type=int, default=10_000, help="calls per dispatch timing loop")
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker, args.smoke)
        return
    if args.smoke:
        args.repeats, args.elements, args.bandwidth_calls, args.calls = 1, 1 << 12, 1, 10

    try:
        from ndd._cuda import driver
    except ImportError as error:
        sys.exit(f"bench/gpu_ops.py: the GPU runtime cannot be imported ({error})")
    if args.smoke:
        try:
            _install_fake()
        except ImportError as error:
            sys.exit(f"bench/gpu_ops.py --smoke needs cuda-python for the FakeDriver ({error})")
    try:
        driver.require_gpu("bench/gpu_ops.py")
    except driver.GpuUnavailableError as error:
        sys.exit(f"{error}\n(run with --smoke to check that the script works without a GPU)")

    nbytes = args.elements * 4
    copy = copy_bandwidth(nbytes, args.repeats, args.bandwidth_calls)
    ops = operator_bandwidth(bandwidth_cases(args.elements), args.repeats, args.bandwidth_calls)
    dispatch = dispatch_times(args)
    report(copy, ops, dispatch, args)


if __name__ == "__main__":
    main()
