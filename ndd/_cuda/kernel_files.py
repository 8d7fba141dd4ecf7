"""The compiled kernels shipped in ``ndd/_kernels``, and NVRTC compilation when none fits.

Pure Python: nothing here calls the CUDA driver. The loader asks :func:`kernel_image`
for the image of a kernel module that loads on the device and driver at hand, and
falls back to :func:`compile_at_runtime` when there is none.

The scheme (decided in issue 5; ``kernels/build.py`` produces it):

* A CUBIN for each of sm_70, sm_80 and sm_90, one per major compute capability. A
  CUBIN needs no JIT, so it loads on every driver of its CUDA major version, whichever
  12.x NVRTC made it (CUDA minor version compatibility), and it runs on devices of the
  same major compute capability with an equal or higher minor one: sm_70 code on 7.2
  and 7.5 (Xavier, Turing), sm_80 code on 8.6, 8.7 and 8.9 (Ampere consumer parts,
  Orin, Ada). Minor-version CUBINs (sm_75, sm_86, sm_89) would only retune the same
  code; they cost as much build time as the three together, which the CI's two cores
  feel (13 kernel files: 7.6 minutes for seven images each, 4.4 for four).
  An NVRTC that no longer compiles one of them gets the lowest architecture of the
  same major one that it does compile (:func:`cubin_archs`: NVRTC 13, which a CUDA 13
  torch brings along, starts at sm_75), so the build works with it too.
* PTX for compute_90, for chips newer than any CUBIN (Blackwell and later). NVRTC
  writes the PTX ISA of its own release and cannot lower it, and the driver JIT only
  accepts ISAs it knows, so this PTX loads only on a driver at least as new as the
  NVRTC that built it (ISA 8.8 from NVRTC 12.9 needs driver 12.9, r575+).
* Otherwise (an older driver on a newer chip, or a chip below sm_70):
  :func:`compile_at_runtime` compiles the shipped source with the installed NVRTC
  straight to a CUBIN for the device's exact architecture, which the minor version
  compatibility again lets any 12.x driver load; results are cached on disk.
"""

import concurrent.futures
import contextlib
import functools
import hashlib
import json
import os
import pathlib
import re
import tempfile

__all__ = [
    "CUBIN_ARCHS",
    "PARAM_KINDS",
    "PTX_ARCH",
    "PTX_PARAM_TYPE",
    "PTX_ISA_MIN_DRIVER",
    "build_lock",
    "cache_dir",
    "compile_at_runtime",
    "compile_images",
    "compile_source",
    "cubin_archs",
    "kernel_image",
    "manifest",
    "nvrtc_version",
    "ptx_entries",
    "ptx_header",
    "runtime_cache_path",
    "write_atomically",
]

KERNELS_DIR = pathlib.Path(__file__).resolve().parent.parent / "_kernels"
MANIFEST_NAME = "manifest.json"

CUBIN_ARCHS = (70, 80, 90)
PTX_ARCH = 90
COMPILE_OPTIONS = ("--std=c++17", "-default-device")

# Parameter kinds of a kernel, with their size in bytes: what argument packing needs.
# A pointer is 8 bytes: ndd runs on 64-bit hosts only, as CUDA 12 does.
PARAM_KINDS = {
    "ptr": 8,
    "bool": 1,
    "i8": 1,
    "u8": 1,
    "i16": 2,
    "u16": 2,
    "i32": 4,
    "u32": 4,
    "i64": 8,
    "u64": 8,
    "f32": 4,
    "f64": 8,
}

# The PTX .param type that carries each kind (NVRTC widens nothing, and signedness is
# not kept: int is .u32, long long .u64).
PTX_PARAM_TYPE = {
    "ptr": "u64",
    "bool": "u8",
    "i8": "u8",
    "u8": "u8",
    "i16": "u16",
    "u16": "u16",
    "i32": "u32",
    "u32": "u32",
    "i64": "u64",
    "u64": "u64",
    "f32": "f32",
    "f64": "f64",
}
_PTX_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(([^)]*)\)")
_PTX_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)")


def ptx_entries(ptx):
    """``{kernel: [ptx param type, ...]}`` of every ``.entry`` in PTX text."""
    return {name: _PTX_PARAM.findall(params) for name, params in _PTX_ENTRY.findall(ptx)}


# The first CUDA driver (as cuDriverGetVersion reports it) able to JIT each PTX ISA,
# from the release notes of the PTX ISA manual. NVRTC 12.6 still writes ISA 8.5.
PTX_ISA_MIN_DRIVER = {
    (8, 0): 12000,
    (8, 1): 12010,
    (8, 2): 12020,
    (8, 3): 12030,
    (8, 4): 12040,
    (8, 5): 12050,
    (8, 6): 12070,
    (8, 7): 12080,
    (8, 8): 12090,
    (9, 0): 13000,
}


def manifest(kernels_dir: os.PathLike | None = None) -> dict:
    """The build manifest of the shipped kernels.

    Parameters
    ----------
    kernels_dir
        Folder holding ``manifest.json`` and the images; ``ndd/_kernels`` by default.

    Returns
    -------
    dict
        ``{"nvrtc_version", "compile_options", "modules": {name: {"source", "sha256",
        "images": [...], "kernels": {kernel: {"params": [kind, ...]}}}}}``.

    Raises
    ------
    RuntimeError
        When ndd was built without NVRTC, so no kernels were compiled.
    """
    return _read_manifest(pathlib.Path(kernels_dir) if kernels_dir is not None else KERNELS_DIR)


@functools.cache
def _read_manifest(kernels_dir: pathlib.Path) -> dict:
    path = kernels_dir / MANIFEST_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RuntimeError(
            f"ndd has no compiled GPU kernels ({path} is missing): it was built without NVRTC. "
            "Reinstall with the gpu extra: pip install 'ndd[gpu]'"
        ) from None
    return json.loads(text)


def _module_entry(module_name: str, kernels_dir: pathlib.Path) -> dict:
    modules = _read_manifest(kernels_dir)["modules"]
    if module_name not in modules:
        raise KeyError(f"no kernel module {module_name!r}; shipped: {sorted(modules)}")
    return modules[module_name]


def kernel_image(
    module_name: str,
    compute_capability: tuple[int, int],
    driver_version: int,
    kernels_dir: os.PathLike | None = None,
) -> tuple[str, bytes] | None:
    """The shipped image of a kernel module that loads on this device and driver.

    Parameters
    ----------
    module_name
        Kernel file name without ``.cu`` (``"elementwise"``).
    compute_capability
        ``(major, minor)`` of the device.
    driver_version
        ``cuDriverGetVersion()`` (``12080`` for CUDA 12.8): PTX newer than the driver
        cannot be JIT-compiled by it.
    kernels_dir
        Folder of the shipped kernels; ``ndd/_kernels`` by default.

    Returns
    -------
    tuple of (str, bytes) or None
        ``("cubin", image)`` for the CUBIN of the same major architecture with the
        highest minor one not above the device's, else ``("ptx", text)`` when the
        device is at least the PTX target and the driver knows its ISA, else None:
        compile at runtime with :func:`compile_at_runtime`.
    """
    folder = pathlib.Path(kernels_dir) if kernels_dir is not None else KERNELS_DIR
    major, minor = compute_capability
    loadable = [
        image
        for image in _module_entry(module_name, folder)["images"]
        if image["min_driver"] <= driver_version
    ]
    cubins = [
        image
        for image in loadable
        if image["kind"] == "cubin" and image["sm"] // 10 == major and image["sm"] % 10 <= minor
    ]
    if cubins:
        best = max(cubins, key=lambda image: image["sm"])
        return "cubin", (folder / best["file"]).read_bytes()
    ptx = [image for image in loadable if image["kind"] == "ptx" and image["sm"] <= major * 10 + minor]
    if ptx:
        best = max(ptx, key=lambda image: image["sm"])
        return "ptx", (folder / best["file"]).read_bytes()
    return None


def cubin_archs(supported: list[int] | None = None) -> list[int]:
    """The architectures (``80`` for sm_80) to build the CUBINs for.

    Parameters
    ----------
    supported
        The architectures the compiler can target; the installed NVRTC's by default.

    Returns
    -------
    list of int
        Each of :data:`CUBIN_ARCHS` that ``supported`` has; for one it lacks, the lowest
        of the same major architecture above it (sm_75 for sm_70 with NVRTC 13); a major
        architecture ``supported`` has nothing of is left out.
    """
    if supported is None:
        supported = _supported_archs()
    archs = []
    for sm in CUBIN_ARCHS:
        same_major = [arch for arch in supported if arch // 10 == sm // 10 and arch >= sm]
        if same_major:
            archs.append(min(same_major))
    return archs


def nvrtc_version() -> tuple[int, int] | None:
    """``(major, minor)`` of the installed NVRTC, or None when it cannot be loaded."""
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        return None
    try:
        err, major, minor = nvrtc.nvrtcVersion()
    except Exception:  # cuda-python is there but the NVRTC library is not
        return None
    return (major, minor) if err == nvrtc.nvrtcResult.NVRTC_SUCCESS else None


def compile_source(source: bytes, name: str, arch: str, extra_source: bytes = b"") -> bytes:
    """Compile CUDA C++ with NVRTC: PTX text for ``compute_XY``, a CUBIN for ``sm_XY``.

    ``extra_source`` is appended to ``source``.
    Raises RuntimeError with the NVRTC log when the compile fails.
    """
    wanted = "cubin" if arch.startswith("sm_") else "ptx"
    return compile_images(source, name, arch, extra_source, outputs=(wanted,))[0]


def compile_images(
    source: bytes,
    name: str,
    arch: str,
    extra_source: bytes = b"",
    *,
    outputs: tuple[str, ...] = ("cubin", "ptx"),
    options: tuple[str, ...] = (),
) -> list[bytes]:
    """One NVRTC compile of ``source + extra_source`` for ``arch``, giving each of
    ``outputs`` ("cubin", only for ``sm_XY``, or "ptx") in that order.

    A compile for ``sm_XY`` yields the CUBIN and (NVRTC 12) the very PTX that
    ``compute_XY`` gives, so the build takes both from one compile; where NVRTC keeps
    no PTX of a compile for ``sm_XY``, that output is None. ``options`` are added to
    ``COMPILE_OPTIONS``. Raises RuntimeError with the NVRTC log when the compile fails.

    The compile runs on a thread of its own: NVRTC 12.1 leaves the thread that compiles
    in the "C" locale, where Python opens text files as ASCII.
    """
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ndd-nvrtc") as thread:
        return thread.submit(_compile, source + extra_source, name, arch, outputs, options).result()


def _compile(source, name, arch, outputs, options):
    """``compile_images`` on the calling thread."""
    from cuda.bindings import nvrtc

    def check(result, what, program=None):
        if result[0] == nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return result[1] if len(result) > 1 else None
        log = ""
        if program is not None:
            _, size = nvrtc.nvrtcGetProgramLogSize(program)
            buffer = b" " * size
            nvrtc.nvrtcGetProgramLog(program, buffer)
            log = buffer.rstrip(b"\x00").decode(errors="replace")
        raise RuntimeError(f"NVRTC {what} of {name} for {arch} failed ({result[0].name}):\n{log}")

    program = check(nvrtc.nvrtcCreateProgram(source, name.encode(), 0, [], []), "create")
    try:
        flags = [f"--gpu-architecture={arch}", *COMPILE_OPTIONS, *options]
        flags = [flag.encode() for flag in flags]
        check(nvrtc.nvrtcCompileProgram(program, len(flags), flags), "compile", program)
        images = []
        for output in outputs:
            if output == "cubin":
                size = check(nvrtc.nvrtcGetCUBINSize(program), "CUBIN size")
                image = b" " * size
                check(nvrtc.nvrtcGetCUBIN(program, image), "CUBIN")
                images.append(image)
            else:
                result = nvrtc.nvrtcGetPTXSize(program)
                if arch.startswith("sm_") and (
                    result[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS or result[1] <= 1
                ):
                    images.append(None)
                    continue
                image = b" " * check(result, "PTX size")
                check(nvrtc.nvrtcGetPTX(program, image), "PTX")
                images.append(image.rstrip(b"\x00"))
        return images
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def ptx_header(ptx: bytes) -> tuple[tuple[int, int], int]:
    """``((isa_major, isa_minor), sm)`` from the ``.version`` and ``.target`` lines of PTX."""
    text = ptx.decode(errors="replace")
    version = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", text, re.MULTILINE)
    target = re.search(r"^\s*\.target\s+sm_(\d+)", text, re.MULTILINE)
    if version is None or target is None:
        raise ValueError("PTX without a .version or .target line")
    return (int(version.group(1)), int(version.group(2))), int(target.group(1))


def cache_dir() -> pathlib.Path:
    """The folder of compiled kernels: ``$NDD_KERNEL_CACHE``, else ``~/.cache/ndd/kernels``."""
    configured = os.environ.get("NDD_KERNEL_CACHE")
    if configured:
        return pathlib.Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "ndd" / "kernels"


def runtime_cache_path(
    module_name: str, source_sha256: str, nvrtc: tuple[int, int], compute_capability: tuple[int, int]
) -> pathlib.Path:
    """Where the runtime CUBIN of a module is cached: keyed by source hash, NVRTC
    version and architecture (and the compile options, which change with ndd)."""
    options = hashlib.sha256(" ".join(COMPILE_OPTIONS).encode()).hexdigest()[:8]
    sm = compute_capability[0] * 10 + compute_capability[1]
    name = f"{module_name}-{source_sha256[:16]}-{options}-nvrtc{nvrtc[0]}.{nvrtc[1]}-sm_{sm}.cubin"
    return cache_dir() / name


def compile_at_runtime(
    module_name: str, compute_capability: tuple[int, int], kernels_dir: os.PathLike | None = None
) -> bytes:
    """A CUBIN of a shipped kernel module for the device's exact architecture.

    Compiled by the installed NVRTC from the shipped source, or read from the cache
    (``$NDD_KERNEL_CACHE``, else ``~/.cache/ndd/kernels``) when this source, NVRTC and
    architecture were compiled before. Processes sharing the cache compile each image
    once (the others wait for it), and never read a partial file.

    Raises
    ------
    RuntimeError
        When NVRTC is missing or does not know the architecture, or the shipped source
        differs from the one the manifest describes.
    """
    folder = pathlib.Path(kernels_dir) if kernels_dir is not None else KERNELS_DIR
    entry = _module_entry(module_name, folder)
    version = nvrtc_version()
    if version is None:
        raise RuntimeError(
            f"kernel module {module_name!r} must be compiled for this GPU, but NVRTC is not "
            "installed: pip install 'ndd[gpu]'"
        )
    path = runtime_cache_path(module_name, entry["sha256"], version, compute_capability)
    if path.exists():
        return path.read_bytes()
    with build_lock(path):  # another process may be compiling the same image: wait for it
        if path.exists():
            return path.read_bytes()
        return _compile_into_cache(path, version, compute_capability, folder, entry)


def _compile_into_cache(path, version, compute_capability, folder, entry) -> bytes:
    """Compile the manifest ``entry``'s source for ``compute_capability`` and write the
    CUBIN to ``path``; the caller holds the build lock of ``path``."""
    source = (folder / entry["source"]).read_bytes()
    if hashlib.sha256(source).hexdigest() != entry["sha256"]:
        raise RuntimeError(f"{folder / entry['source']} does not match the sha256 in {MANIFEST_NAME}")
    sm = compute_capability[0] * 10 + compute_capability[1]
    supported = _supported_archs()
    if sm not in supported:
        if supported and sm < min(supported):
            advice = "this GPU is older than it supports: use NVRTC 12 (pip install nvidia-cuda-nvrtc-cu12)"
        else:
            advice = "install a newer nvidia-cuda-nvrtc-cu12"
        raise RuntimeError(f"NVRTC {version[0]}.{version[1]} cannot compile for sm_{sm}: {advice}")
    image = compile_source(source, entry["source"], f"sm_{sm}")
    write_atomically(path, lambda temporary: pathlib.Path(temporary).write_bytes(image))
    return image


def write_atomically(path: pathlib.Path, write) -> None:
    """Make ``path`` by ``write(temporary_path)`` and a rename, so that processes
    sharing a cache folder never see a partial file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(descriptor)
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


@contextlib.contextmanager
def build_lock(path: pathlib.Path):
    """Hold an exclusive lock on ``<path>.lock`` while ``path`` is made, so that
    processes sharing a cache folder (pytest-xdist workers, parallel builds) make each
    entry once: the others wait, then find it made. Without ``fcntl`` (Windows) it does
    not lock, and each process may build the entry itself."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _supported_archs() -> list[int]:
    from cuda.bindings import nvrtc

    err, archs = nvrtc.nvrtcGetSupportedArchs()
    return list(archs) if err == nvrtc.nvrtcResult.NVRTC_SUCCESS else []
