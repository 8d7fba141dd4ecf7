"""Compile every ``kernels/*.cu`` file to PTX with NVRTC.

NVRTC comes from the ``nvidia-cuda-nvrtc`` wheel through cuda-python's
``cuda.bindings.nvrtc`` and needs no GPU. Without it the step is skipped and ndd
runs CPU-only. Run directly (``python kernels/build.py OUTDIR``) to check that
every kernel compiles; it exits non-zero on a compile error.
"""

import glob
import os
import sys

KERNEL_DIR = os.path.dirname(os.path.abspath(__file__))
# PTX for this virtual architecture is JIT-compiled by the driver for any newer GPU.
ARCH = "compute_70"


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        return None
    try:
        err, _, _ = nvrtc.nvrtcVersion()
    except Exception:  # the NVRTC library itself is missing
        return None
    return nvrtc if err == nvrtc.nvrtcResult.NVRTC_SUCCESS else None


def _check(nvrtc, result, what, program=None):
    err = result[0]
    if err == nvrtc.nvrtcResult.NVRTC_SUCCESS:
        return result[1:] if len(result) > 2 else (result[1] if len(result) == 2 else None)
    log = ""
    if program is not None:
        _, size = nvrtc.nvrtcGetProgramLogSize(program)
        buf = b" " * size
        nvrtc.nvrtcGetProgramLog(program, buf)
        log = buf.decode(errors="replace")
    raise RuntimeError(f"NVRTC {what} failed ({err.name}):\n{log}")


def compile_to_ptx(nvrtc, source_path):
    """PTX text of one CUDA source file."""
    with open(source_path, "rb") as f:
        source = f.read()
    name = os.path.basename(source_path).encode()
    program = _check(nvrtc, nvrtc.nvrtcCreateProgram(source, name, 0, [], []), "create")
    try:
        options = [f"--gpu-architecture={ARCH}".encode(), b"--std=c++17", b"-default-device"]
        result = nvrtc.nvrtcCompileProgram(program, len(options), options)
        _check(nvrtc, result, f"compile of {source_path}", program)
        size = _check(nvrtc, nvrtc.nvrtcGetPTXSize(program), "PTX size")
        ptx = b" " * size
        _check(nvrtc, nvrtc.nvrtcGetPTX(program, ptx), "PTX")
        return ptx.rstrip(b"\x00").decode()
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def build_all(out_dir, quiet=True):
    """Compile every kernel into ``out_dir/<name>.ptx``; return the paths written
    (an empty list when NVRTC is not installed)."""
    nvrtc = _nvrtc()
    sources = sorted(glob.glob(os.path.join(KERNEL_DIR, "*.cu")))
    if nvrtc is None:
        if not quiet:
            print("ndd: NVRTC not importable, skipping the PTX build of kernels/ (CPU-only install)")
        return []
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for src in sources:
        ptx = compile_to_ptx(nvrtc, src)
        dst = os.path.join(out_dir, os.path.splitext(os.path.basename(src))[0] + ".ptx")
        with open(dst, "w") as f:
            f.write(ptx)
        written.append(dst)
        if not quiet:
            print(f"ndd: compiled {os.path.basename(src)} -> {dst}")
    return written


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(KERNEL_DIR, "..", "ndd", "_kernels")
    if _nvrtc() is None:
        sys.exit("NVRTC is not importable: pip install cuda-python nvidia-cuda-nvrtc-cu12")
    paths = build_all(out, quiet=False)
    print(f"{len(paths)} kernel file(s) compiled to PTX")
