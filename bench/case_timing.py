"""Benchmarks made of a table of cases, each one call timed on ndd and on the reference in
one run (``bench/audio.py``, ``bench/video.py``).

A script gives its cases, ``name -> function of (ndd, data) returning the call to time``,
where ``data`` is what its ``make_inputs()`` returns, and calls ``main``. Each
implementation runs in its own worker process (ndd from this interpreter, the reference
from its side virtualenv), the script run again with ``--worker``, in ``sync_cpu`` mode with
``set_num_threads(1)``; the driver interleaves them case by case, repeats, and prints the
CPU milliseconds per call (``time.process_time`` of calls until at least ``--min-seconds``
of CPU time, divided by the calls): median [min-max] of the repeats, and the speed ratio
ndd/ref (reference time over ndd time: above 1 ndd is faster).

With ``gpu=True`` (``bench/gpu_audio.py``) the calls run in ``sync_full`` mode, which
waits for the GPU after each one, and the time is the wall clock's. ``--smoke`` then
runs ndd alone, once per case, on the FakeDriver with the kernels built for the CPU: it
proves that the script runs, and its figures are meaningless.
"""

import argparse
import json
import os
import statistics
import sys
import time

from worker_process import WorkerProcess

__all__ = ["main"]


def _evaluate(result):
    for output in result if isinstance(result, (tuple, list)) else [result]:
        output.evaluate()


_fake_installed = []


def _install_fake_with_host_kernels():
    """The FakeDriver, running the kernels built for the CPU, as the driver of this process."""
    from ndd._cuda import driver
    from ndd._cuda.fake import FakeDriver
    from ndd._cuda.host_kernels import HostKernels

    installing = driver.use_fake(FakeDriver(host_kernels=HostKernels()))
    installing.__enter__()
    _fake_installed.append(installing)  # kept: collecting it would uninstall the fake


def _serve(impl, cases, make_inputs, gpu, smoke):
    """The worker: serve timing requests on stdin, one JSON line in, one JSON line out."""
    if smoke:
        _install_fake_with_host_kernels()
    if impl == "ndd":
        import ndd
    else:
        import nvidia.dali.experimental.dynamic as ndd

    mode = ndd.EvalMode.sync_full if gpu else ndd.EvalMode.sync_cpu
    clock = time.perf_counter if gpu else time.process_time
    ndd.set_num_threads(1)
    data = make_inputs()
    calls, errors = {}, {}
    with mode:
        for name, make_call in cases.items():
            try:
                call = make_call(ndd, data)
                _evaluate(call())  # warm-up: operator instances, lazy imports, caches
                calls[name] = call
            except Exception as error:  # reported in the table instead of stopping the other cases
                errors[name] = f"{type(error).__name__}: {' '.join(str(error).split())[:100]}"
    print(json.dumps({"ready": impl, "cases": sorted(calls), "errors": errors}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        call, calls_done = calls[req["case"]], 0
        with mode:
            start = clock()
            while True:
                _evaluate(call())
                calls_done += 1
                elapsed = clock() - start
                if elapsed >= req["min_seconds"]:
                    break
        print(json.dumps({"ms": elapsed * 1e3 / calls_done}), flush=True)


class _Worker(WorkerProcess):
    def __init__(self, python, script, impl, *extra_args):
        super().__init__(python, script, impl, *extra_args)
        self.cases, self.errors = set(self.ready["cases"]), self.ready["errors"]

    def time(self, case, min_seconds):
        """CPU milliseconds per call of ``case``."""
        return self.ask(case=case, min_seconds=min_seconds)["ms"]


def _cell(times):
    return f"{statistics.median(times):8.3f} [{min(times):.3f}-{max(times):.3f}]"


def main(script, doc, cases, make_inputs, data_line, *, min_seconds=0.2, gpu=False):
    """Run the benchmark of ``script`` (its ``__file__``; ``doc``, its docstring, gives the
    help): the worker when called with ``--worker``, else the driver, which prints the
    table after ``data_line`` (what the data is). ``gpu``: the cases run on a GPU (see
    the module docstring)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--worker", choices=["ndd", "ref"], help=argparse.SUPPRESS)
    parser.add_argument(
        "--reference-python",
        default=os.path.expanduser("~/dali-ref/bin/python"),
        help="interpreter of the virtualenv where nvidia-dali is installed",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--cases", help=f"comma-separated cases, or their first words (default: all of {', '.join(cases)})"
    )
    parser.add_argument(
        "--min-seconds",
        type=float,
        default=min_seconds,
        help="CPU seconds of calls per measurement, at least",
    )
    if gpu:
        parser.add_argument("--smoke", action="store_true", help="ndd alone on the FakeDriver: no GPU needed")
    args = parser.parse_args()
    smoke = gpu and args.smoke
    if args.worker:
        _serve(args.worker, cases, make_inputs, gpu, smoke)
        return

    chosen = list(cases)
    if args.cases:
        wanted = [name.strip() for name in args.cases.split(",") if name.strip()]
        chosen = [c for c in cases if c in wanted or c.split()[0] in wanted]
        if not chosen:
            sys.exit(f"no case matches {args.cases!r}; choose from {', '.join(cases)}")
    if smoke:
        _smoke(script, chosen)
        return
    workers = {"ndd": _Worker(sys.executable, script, "ndd")}
    if os.path.exists(args.reference_python):
        workers["ref"] = _Worker(args.reference_python, script, "ref")
    else:
        print(
            f"reference interpreter {args.reference_python} not found (see bench/ops.py for how to "
            "install it): ndd alone"
        )
    times = {case: {impl: [] for impl in workers} for case in chosen}
    for _ in range(args.repeats):
        for case in chosen:
            if all(case in w.cases for w in workers.values()):
                for impl, worker in workers.items():
                    times[case][impl].append(worker.time(case, args.min_seconds))
    for worker in workers.values():
        worker.close()

    how = "GPU ms per call (wall clock, sync_full)" if gpu else "CPU ms per call, 1 thread, sync_cpu"
    print(
        f"{how}: median [min-max] of {args.repeats} interleaved repeats; "
        f"{data_line}\nndd/ref is the speed ratio (reference ms / ndd ms): above 1 ndd is faster."
    )
    width = max(len(case) for case in chosen)
    header = f"{'case':<{width}} {'ndd ms':>26} {'reference ms':>26} {'ndd/ref':>8}"
    print(header)
    print("-" * len(header))
    for case in chosen:
        if "ref" not in workers and times[case]["ndd"]:
            print(f"{case:<{width}} {_cell(times[case]['ndd']):>26} {'not run':>26}")
        elif times[case]["ndd"] and times[case].get("ref"):
            ratio = statistics.median(times[case]["ref"]) / statistics.median(times[case]["ndd"])
            mark = "  <-- slower" if ratio < 1.0 else ""
            print(
                f"{case:<{width}} {_cell(times[case]['ndd']):>26} {_cell(times[case]['ref']):>26} "
                f"{ratio:8.2f}{mark}"
            )
        else:
            for impl, label in (("ndd", "ndd"), ("ref", "reference")):
                if impl in workers and case in workers[impl].errors:
                    print(f"{case:<{width}} {label} fails: {workers[impl].errors[case]}")


def _smoke(script, chosen):
    """Every case once by ndd on the FakeDriver (the kernels run on the CPU)."""
    worker = _Worker(sys.executable, script, "ndd", "--smoke")
    print("SMOKE RUN on the FakeDriver with the kernels built for the CPU: the figures are meaningless")
    for case in chosen:
        if case in worker.cases:
            print(f"{case}: ran ({worker.time(case, 0.0):.1f} ms)")
        else:
            print(f"{case}: fails: {worker.errors.get(case)}")
    worker.close()
