"""Per-call cost of tiny operators, ndd against the reference, in one run.

A 4x4 uint8 tensor (and an 8-sample batch of them) goes through ``cast``,
``+ 1``, ``reshape`` and ``transpose`` in ``sync_cpu`` and in the default
(eager) mode. Each implementation runs in its own worker process (ndd from this
interpreter, the reference from its side virtualenv); the driver interleaves
them, repeats, and prints medians, the spread (min-max of the repeats) and the
ratio ndd/reference.

    python bench/dispatch.py [--reference-python ~/dali-ref/bin/python] [--repeats 7]

The time of one call is the time of a loop of N calls followed by one
``evaluate()`` of the last result, divided by N: in eager mode this is the
throughput of the pipeline, what a training loop sees.
"""

import argparse
import json
import os
import statistics
import sys
import time

from worker_process import WorkerProcess

CASES = ["cast", "add", "reshape", "transpose"]
KINDS = ["tensor", "batch"]
MODES = ["sync_cpu", "default"]


def _worker(impl):
    """Serve timing requests on stdin: one JSON line in, one JSON line out."""
    import numpy as np

    if impl == "ndd":
        import ndd
    else:
        import nvidia.dali.experimental.dynamic as ndd

    sample = np.arange(16, dtype=np.uint8).reshape(4, 4)
    inputs = {
        "tensor": ndd.tensor(sample),
        "batch": ndd.batch([sample + i for i in range(8)]),
    }
    calls = {
        "cast": lambda x: ndd.cast(x, dtype=ndd.float32),
        "add": lambda x: x + 1,
        "reshape": lambda x: ndd.reshape(x, shape=[16]),
        "transpose": lambda x: ndd.transpose(x, perm=[1, 0]),
    }
    modes = {"sync_cpu": ndd.EvalMode.sync_cpu, "default": ndd.EvalMode.default}
    print(json.dumps({"ready": impl}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        fn, x, n = calls[req["case"]], inputs[req["kind"]], req["n"]
        with modes[req["mode"]]:
            fn(x).evaluate()  # warm-up (operator instance caches, lazy imports)
            start = time.perf_counter()
            for _ in range(n):
                result = fn(x)
            result.evaluate()
            elapsed = time.perf_counter() - start
        print(json.dumps({"us": elapsed / n * 1e6}), flush=True)


class Worker(WorkerProcess):
    def __init__(self, python, impl):
        super().__init__(python, __file__, impl)

    def time(self, case, kind, mode, n):
        """Microseconds per call of ``n`` calls of ``case``."""
        return self.ask(case=case, kind=kind, mode=mode, n=n)["us"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", choices=["ndd", "ref"], help=argparse.SUPPRESS)
    parser.add_argument(
        "--reference-python",
        default=os.path.expanduser("~/dali-ref/bin/python"),
        help="interpreter of the virtualenv where nvidia-dali is installed",
    )
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--ndd-calls", type=int, default=2000, help="calls per timing loop for ndd")
    parser.add_argument("--ref-calls", type=int, default=200, help="calls per timing loop for the reference")
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker)
        return

    if not os.path.exists(args.reference_python):
        sys.exit(
            f"reference interpreter {args.reference_python} not found; install the reference in its own "
            "virtualenv: python3 -m venv ~/dali-ref && ~/dali-ref/bin/pip install nvidia-dali-cuda120==2.4.0 pillow"
        )
    ours = Worker(sys.executable, "ndd")
    ref = Worker(args.reference_python, "ref")
    times = {}
    for _ in range(args.repeats):
        for mode in MODES:
            for kind in KINDS:
                for case in CASES:
                    key = (mode, kind, case)
                    t_ours = ours.time(case, kind, mode, args.ndd_calls)
                    t_ref = ref.time(case, kind, mode, args.ref_calls)
                    times.setdefault(key, ([], []))
                    times[key][0].append(t_ours)
                    times[key][1].append(t_ref)
    ours.close()
    ref.close()

    print(f"per-call time in microseconds: median [min-max] of {args.repeats} interleaved repeats")
    header = f"{'mode':<9} {'input':<7} {'op':<10} {'ndd us':>22} {'reference us':>24} {'ndd/ref':>8}"
    print(header)
    print("-" * len(header))
    ratios = []
    for (mode, kind, case), (t_ours, t_ref) in times.items():
        m_ours, m_ref = statistics.median(t_ours), statistics.median(t_ref)
        ratio = m_ours / m_ref
        ratios.append(ratio)
        spread_ours = f"{m_ours:7.1f} [{min(t_ours):.1f}-{max(t_ours):.1f}]"
        spread_ref = f"{m_ref:7.1f} [{min(t_ref):.1f}-{max(t_ref):.1f}]"
        print(f"{mode:<9} {kind:<7} {case:<10} {spread_ours:>22} {spread_ref:>24} {ratio:8.3f}")
    print(f"worst ratio {max(ratios):.3f}, median ratio {statistics.median(ratios):.3f} (target: <= 0.1)")


if __name__ == "__main__":
    main()
