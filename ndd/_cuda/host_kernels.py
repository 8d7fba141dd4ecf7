"""ndd's CUDA kernels built for the CPU, so that the FakeDriver can run them.

A kernel file of ``kernels/`` is compiled by the host C++ compiler (``$CXX``, else
``g++``) with ``host_kernels.h``, which gives the CUDA device dialect a host meaning
(threadIdx, __syncthreads, __shared__, atomics, intrinsics), and ``host_launch.inc``,
which runs a launch's grid block by block. Kernels then compute on the host what they
compute on a GPU, up to the last bits of float functions whose host and device
implementations differ, so CI can compare every GPU operator with its CPU twin.

Threads run one after another, each to its end; a kernel file that contains
``__syncthreads``, ``__syncwarp`` or a warp shuffle runs each block's threads as
fibers instead, switching at every barrier. A launch runs to completion when it is
queued: what the FakeDriver proves about stream order stays its own business.

Built libraries are cached by the hash of what went into them, beside the runtime
NVRTC cache (``$NDD_KERNEL_CACHE``, else ``~/.cache/ndd/kernels``), in ``host/``.
"""

import ctypes
import hashlib
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import threading

from . import kernel_files

__all__ = ["HostKernels", "compiler"]

_HERE = pathlib.Path(__file__).resolve().parent
_HEADER = _HERE / "host_kernels.h"
_LAUNCHER = _HERE / "host_launch.inc"
# Source text that makes a kernel file need its threads run as fibers.
_BARRIERS = re.compile(rb"__syncthreads|__syncwarp|__shfl_")
_FLAGS = ["-std=c++17", "-O1", "-fPIC", "-w", "-fno-strict-aliasing"]
# Every typed access is checked for its alignment, as a GPU checks it (host_launch.inc
# handles the checks' calls itself, so the sanitizer's runtime is not linked).
_CHECKS = ["-fsanitize=alignment"]


def compiler() -> list[str] | None:
    """The host C++ compiler command (``$CXX`` or ``g++``), or None when there is none."""
    command = shlex.split(os.environ.get("CXX", "g++"))
    return command if command and shutil.which(command[0]) else None


class _Module:
    def __init__(self, library, fibers):
        self.library = library
        self.fibers = fibers
        self.calls = {}

    def call(self, kernel):
        if kernel not in self.calls:
            self.calls[kernel] = ctypes.cast(
                getattr(self.library, f"ndd_host_call_{kernel}"), ctypes.c_void_p
            ).value
        return self.calls[kernel]


class HostKernels:
    """The kernels of a built kernel folder (``manifest.json`` and the shipped
    sources), compiled for the host on first use of each module.

    Parameters
    ----------
    kernels_dir : path-like, optional
        The folder; ``kernel_files.KERNELS_DIR`` (the installed kernels) by default.
    """

    def __init__(self, kernels_dir: os.PathLike | None = None):
        self.kernels_dir = pathlib.Path(kernels_dir if kernels_dir is not None else kernel_files.KERNELS_DIR)
        self._modules = {}
        self._lock = threading.Lock()
        self._kernel_module = {}
        self._params = {}
        for module, entry in kernel_files.manifest(self.kernels_dir)["modules"].items():
            for kernel, declared in entry["kernels"].items():
                self._kernel_module[kernel] = module
                self._params[kernel] = declared["params"]

    def params(self, kernel: str) -> list[str]:
        """The parameter kinds of ``kernel`` (``"ptr"``, ``"u64"``, ``"f32"``, ...)."""
        return self._params[kernel]

    def launch(self, kernel, grid, block, shared_bytes, values):
        """Run ``kernel`` over ``grid`` x ``block`` with parameter ``values`` (one bytes
        object per parameter, pointers already host addresses)."""
        with self._lock:
            module = self._module(self._kernel_module[kernel])
            buffers = [ctypes.create_string_buffer(value, max(len(value), 8)) for value in values]
            pointers = (ctypes.c_void_p * max(len(buffers), 1))(*(ctypes.addressof(b) for b in buffers))
            status = module.library.ndd_host_launch(
                ctypes.c_void_p(module.call(kernel)),
                pointers,
                *grid,
                *block,
                shared_bytes,
                int(module.fibers),
            )
        if status == 1:
            raise RuntimeError(
                f"host kernel {kernel} reached __syncthreads, but its kernel file was not "
                "recognised as one that needs barriers"
            )
        if status == 2:
            alignment, line = ctypes.c_uint(), ctypes.c_uint()
            address = module.library.ndd_host_misaligned(ctypes.byref(alignment), ctypes.byref(line))
            source = self._kernel_module[kernel]
            raise RuntimeError(
                f"host kernel {kernel} made a misaligned access: address {address:#x} is not a multiple "
                f"of {alignment.value} (line {line.value} of {source}.cu as shipped); a GPU stops "
                "the kernel there with 'misaligned address'"
            )

    def _module(self, name):
        if name not in self._modules:
            entry = kernel_files.manifest(self.kernels_dir)["modules"][name]
            source = (self.kernels_dir / entry["source"]).read_bytes()
            fibers = _BARRIERS.search(source) is not None
            self._modules[name] = _Module(self._build(name, source, sorted(entry["kernels"])), fibers)
        return self._modules[name]

    def _build(self, name, source, kernels):
        command = compiler()
        if command is None:
            raise RuntimeError("no host C++ compiler (g++, or $CXX) to build kernels for the host")
        wrappers = "".join(
            f'extern "C" void ndd_host_call_{kernel}(void** p) {{ ndd_host_call(&{kernel}, p); }}\n'
            for kernel in kernels
        )
        unit = source + b"\n" + _LAUNCHER.read_bytes() + b"\n" + wrappers.encode()
        flags = " ".join(command + _FLAGS + _CHECKS)
        digest = hashlib.sha256(_HEADER.read_bytes() + unit + flags.encode()).hexdigest()
        path = kernel_files.cache_dir() / "host" / f"{name}-{digest[:20]}.so"
        with kernel_files.build_lock(path):
            if not path.exists():
                self._compile(path, name, unit, command)
        library = ctypes.CDLL(str(path))
        library.ndd_host_misaligned.restype = ctypes.c_ulonglong
        library.ndd_host_launch.restype = ctypes.c_int
        library.ndd_host_launch.argtypes = (
            [ctypes.c_void_p, ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_int]
        )
        return library

    @staticmethod
    def _compile(path, name, unit, command):
        source_path = path.with_suffix(".cpp")
        kernel_files.write_atomically(
            source_path, lambda temporary: pathlib.Path(temporary).write_bytes(unit)
        )

        def compile_to(temporary):
            objects = f"{temporary}.o"
            steps = [
                [*command, *_FLAGS, *_CHECKS, "-include", str(_HEADER), "-x", "c++", "-c"]
                + [str(source_path), "-o", objects],
                [*command, "-shared", objects, "-o", temporary],
            ]
            try:
                for step in steps:
                    result = subprocess.run(step, capture_output=True, text=True)
                    if result.returncode != 0:
                        raise RuntimeError(
                            f"host build of kernels/{name}.cu failed:\n{result.stderr[-4000:]}"
                        )
            finally:
                if os.path.exists(objects):
                    os.unlink(objects)

        kernel_files.write_atomically(path, compile_to)
