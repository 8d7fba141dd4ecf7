"""The worker processes of the benchmarks that compare ndd with the reference.

Each implementation runs in a process of its own (ndd from this interpreter, the
reference from its side virtualenv, torchvision from its own): the benchmark script
run again with ``--worker IMPL``. A worker prints one JSON line when it is ready (what
it can run, or why it cannot), then answers each JSON line it reads with one JSON
line, until its input closes.
"""

import json
import os
import subprocess

__all__ = ["WorkerProcess"]


class WorkerProcess:
    """The worker ``script --worker impl *extra_args`` run by the interpreter ``python``.

    ``ready`` is the worker's first line, a dict. A worker that exits without one
    raises RuntimeError, or with ``required=False`` gives ``{"error": ...}`` as
    ``ready`` (for benchmarks that report a missing implementation in their table).
    """

    def __init__(self, python, script, impl, *extra_args, required=True):
        self.impl = impl
        command = [python, os.path.abspath(script), "--worker", impl, *extra_args]
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line and required:
            raise RuntimeError(f"{impl} worker failed to start ({python})")
        self.ready = json.loads(line) if line else {"error": f"the worker exited ({python})"}

    def ask(self, **request):
        """Send ``request`` (as one JSON line) and return the worker's answer."""
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait()
