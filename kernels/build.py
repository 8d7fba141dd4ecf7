"""Compile every ``kernels/*.cu`` file with NVRTC and write ``manifest.json``.

The scheme, documented in ``ndd/_cuda/kernel_files.py``: a CUBIN for each of
``kernel_files.cubin_archs()`` (sm_70, sm_80, sm_90; sm_75 for sm_70 with an NVRTC 13,
which no longer compiles for Volta), each loading on any driver of the CUDA major
version of the NVRTC used (ship a build made with NVRTC 12), plus PTX for
``compute_90`` for newer chips, which loads on drivers at least as new as the NVRTC
used here; the shipped source, for runtime compilation when neither fits.

The manifest records, per kernel file, its sha256, each image with its PTX ISA
``.version`` and ``.target`` and the oldest driver that loads it, and the parameter
kinds of every ``extern "C" __global__`` function. The kinds come from NVRTC itself
(a probe compiled after the source maps each parameter type to a kind with
templates), so macros and typedefs are seen through; they are checked against the
``.param`` sizes of the PTX ``.entry``.

NVRTC comes from the ``nvidia-cuda-nvrtc`` wheel through cuda-python's
``cuda.bindings.nvrtc`` and needs no GPU; without it the step is skipped and ndd runs
CPU-only. ``python kernels/build.py OUTDIR`` exits non-zero on a compile error.
"""

import concurrent.futures
import glob
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile

KERNEL_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(KERNEL_DIR)


def _load_kernel_files():
    # By path: setup.py runs this before ndd's extensions are built, so ndd cannot be imported.
    path = os.path.join(ROOT, "ndd", "_cuda", "kernel_files.py")
    spec = importlib.util.spec_from_file_location("ndd_kernel_files", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kernel_files = _load_kernel_files()

# Appended to a kernel file to make NVRTC report each kernel's parameter kinds as a
# byte array in the PTX: code i + 1 for PARAM_KINDS' i-th kind, 0 for any other type.
_PROBE_HEAD = """
namespace ndd_probe {{
template <typename T> struct kind {{ static constexpr unsigned char code = 0; }};
template <typename T> struct kind<T*> {{ static constexpr unsigned char code = {ptr}; }};
template <> struct kind<bool> {{ static constexpr unsigned char code = {bool}; }};
template <> struct kind<char> {{ static constexpr unsigned char code = (char)-1 < 0 ? {i8} : {u8}; }};
template <> struct kind<signed char> {{ static constexpr unsigned char code = {i8}; }};
template <> struct kind<unsigned char> {{ static constexpr unsigned char code = {u8}; }};
template <> struct kind<short> {{ static constexpr unsigned char code = {i16}; }};
template <> struct kind<unsigned short> {{ static constexpr unsigned char code = {u16}; }};
template <> struct kind<int> {{ static constexpr unsigned char code = {i32}; }};
template <> struct kind<unsigned int> {{ static constexpr unsigned char code = {u32}; }};
template <> struct kind<long> {{ static constexpr unsigned char code = sizeof(long) == 8 ? {i64} : {i32}; }};
template <> struct kind<unsigned long> {{
  static constexpr unsigned char code = sizeof(long) == 8 ? {u64} : {u32};
}};
template <> struct kind<long long> {{ static constexpr unsigned char code = {i64}; }};
template <> struct kind<unsigned long long> {{ static constexpr unsigned char code = {u64}; }};
template <> struct kind<float> {{ static constexpr unsigned char code = {f32}; }};
template <> struct kind<double> {{ static constexpr unsigned char code = {f64}; }};
template <typename F> struct signature;
template <typename... A> struct signature<void (*)(A...)> {{
  unsigned char codes[sizeof...(A) + 1] = {{kind<A>::code..., 255}};
}};
}}  // namespace ndd_probe
"""
_PROBE_KERNEL = 'extern "C" __device__ ndd_probe::signature<decltype(&{name})> ndd_probe_{name} = {{}};\n'
_PROBE_ARRAY = re.compile(r"\bndd_probe_([A-Za-z_$][\w$]*)\s*\[\d+\]\s*=\s*\{([^}]*)\}")


def _nvrtc():
    """cuda.bindings.nvrtc when NVRTC can be loaded, else None."""
    if kernel_files.nvrtc_version() is None:
        return None
    from cuda.bindings import nvrtc

    return nvrtc


def compile_to_ptx(nvrtc, source_path):
    """PTX text of one CUDA source file (its headers pasted in) for the shipped PTX architecture."""
    source = shipped_source(source_path)
    arch = f"compute_{kernel_files.PTX_ARCH}"
    return kernel_files.compile_source(source, os.path.basename(source_path), arch).decode()


def kernel_signatures(source, name, ptx):
    """``{kernel: [kind, ...]}`` of the kernels of one source whose PTX is ``ptx``,
    with NVRTC resolving the types; raises ValueError for a kernel ndd cannot launch."""
    entries = kernel_files.ptx_entries(ptx)
    for kernel in entries:
        if kernel.startswith("_Z"):
            raise ValueError(f'{name}: kernel {kernel} has a C++ mangled name; declare it extern "C"')
    kinds = list(kernel_files.PARAM_KINDS)
    head = _PROBE_HEAD.format(**{kind: index + 1 for index, kind in enumerate(kinds)})
    probes = head + "".join(_PROBE_KERNEL.format(name=kernel) for kernel in entries)
    # Only the probes' initial values are read: -G (no optimisation) gives them in a
    # fraction of an optimised compile's time (0.2 s instead of 12 s for warp.cu).
    arch = f"compute_{kernel_files.PTX_ARCH}"
    probe_ptx = kernel_files.compile_images(
        source, name, arch, probes.encode(), outputs=("ptx",), options=("-G",)
    )
    probe_ptx = probe_ptx[0].decode()
    signatures = {}
    for kernel, codes in _PROBE_ARRAY.findall(probe_ptx):
        values = [int(code) for code in codes.split(",")]
        params = values[: values.index(255)]
        for index, code in enumerate(params):
            if code == 0:
                raise ValueError(
                    f"{name}: parameter {index} of kernel {kernel} has a type ndd cannot pass "
                    f"(supported: pointers and {', '.join(kinds[1:])})"
                )
        signatures[kernel] = [kinds[code - 1] for code in params]
    for kernel, ptx_types in entries.items():
        expected = [kernel_files.PTX_PARAM_TYPE[kind] for kind in signatures[kernel]]
        if ptx_types != expected:
            raise ValueError(f"{name}: kernel {kernel} has PTX params {ptx_types}, kinds give {expected}")
    return {kernel: signatures[kernel] for kernel in sorted(entries)}


# `#include "file"` of a header in kernels/, pasted in by shipped_source.
_LOCAL_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]+"([\w.]+)"[ \t]*$', re.MULTILINE)


def shipped_source(source_path):
    """The kernel file at ``source_path`` with each ``#include "header"`` of kernels/
    replaced by the header's text (each header once), so that the source ndd ships
    for runtime compilation and for the host build needs no include path."""
    pasted = set()

    def paste(match):
        header = match.group(1).decode()
        if header in pasted:
            return b""
        pasted.add(header)
        with open(os.path.join(KERNEL_DIR, header), "rb") as f:
            text = re.sub(rb"^#pragma once[ \t]*\n", b"", f.read(), flags=re.MULTILINE)
        return _LOCAL_INCLUDE.sub(paste, text).rstrip(b"\n")

    with open(source_path, "rb") as f:
        return _LOCAL_INCLUDE.sub(paste, f.read())


def _build_module(source_path, out_dir):
    """Compile one kernel file into ``out_dir``; return its manifest entry."""
    source = shipped_source(source_path)
    name = os.path.basename(source_path)
    stem = os.path.splitext(name)[0]
    # A CUBIN loads on every driver of the CUDA major version that made it.
    cubin_min_driver = kernel_files.nvrtc_version()[0] * 1000
    cubin_archs = kernel_files.cubin_archs()
    # One compile per architecture: the PTX comes with the CUBIN of its own sm, which
    # saves a compile as long as the PTX's front end and optimiser.
    jobs = [
        (f"sm_{sm}", ("cubin", "ptx") if sm == kernel_files.PTX_ARCH else ("cubin",)) for sm in cubin_archs
    ]
    # NVRTC compiles separate programs concurrently (it releases the GIL).
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        results = list(
            pool.map(lambda job: kernel_files.compile_images(source, name, job[0], outputs=job[1]), jobs)
        )
    cubins = [images[0] for images in results]
    ptx = next((images[1] for images in results if len(images) == 2), None)
    if ptx is None:  # no sm_90 CUBIN built, or an NVRTC that keeps no PTX of it
        ptx = kernel_files.compile_source(source, name, f"compute_{kernel_files.PTX_ARCH}")
    images = []
    for sm, cubin in zip(cubin_archs, cubins, strict=True):
        image = _write_image(out_dir, f"{stem}.sm_{sm}.cubin", cubin, "cubin", sm)
        images.append(dict(image, min_driver=cubin_min_driver))
    isa, target = kernel_files.ptx_header(ptx)
    if isa not in kernel_files.PTX_ISA_MIN_DRIVER:
        raise RuntimeError(f"{name}: PTX ISA {isa[0]}.{isa[1]} is not in kernel_files.PTX_ISA_MIN_DRIVER")
    image = _write_image(out_dir, f"{stem}.compute_{kernel_files.PTX_ARCH}.ptx", ptx, "ptx", target)
    image.update(
        ptx_version=f"{isa[0]}.{isa[1]}",
        ptx_target=f"sm_{target}",
        min_driver=kernel_files.PTX_ISA_MIN_DRIVER[isa],
    )
    images.append(image)
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(source)
    kernels = kernel_signatures(source, name, ptx.decode())
    return {
        "source": name,
        "sha256": hashlib.sha256(source).hexdigest(),
        "images": images,
        "kernels": {kernel: {"params": params} for kernel, params in kernels.items()},
    }


def _write_image(out_dir, file_name, data, kind, sm):
    with open(os.path.join(out_dir, file_name), "wb") as f:
        f.write(data)
    arch = f"sm_{sm}" if kind == "cubin" else f"compute_{sm}"
    return {
        "kind": kind,
        "arch": arch,
        "sm": sm,
        "file": file_name,
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def _cached_module(source_path, out_dir, cache_dir):
    """``_build_module`` through ``cache_dir``: a kernel file whose shipped source, NVRTC
    and build code were compiled before is copied from there instead."""
    key = hashlib.sha256(shipped_source(source_path))
    key.update(repr(kernel_files.nvrtc_version()).encode())
    for code in (__file__, kernel_files.__file__):
        with open(code, "rb") as f:
            key.update(f.read())
    stem = os.path.splitext(os.path.basename(source_path))[0]
    folder = os.path.join(cache_dir, f"{stem}-{key.hexdigest()[:20]}")
    with kernel_files.build_lock(folder):
        if not os.path.exists(os.path.join(folder, "entry.json")):
            staging = tempfile.mkdtemp(dir=cache_dir)
            entry = _build_module(source_path, staging)
            with open(os.path.join(staging, "entry.json"), "w", encoding="utf-8") as f:
                json.dump(entry, f)
            try:
                os.rename(staging, folder)
            except OSError:  # another process cached it meanwhile (no lock without fcntl)
                shutil.rmtree(staging)
    with open(os.path.join(folder, "entry.json"), encoding="utf-8") as f:
        entry = json.load(f)
    for name in [image["file"] for image in entry["images"]] + [entry["source"]]:
        shutil.copyfile(os.path.join(folder, name), os.path.join(out_dir, name))
    return entry


def module_cache_dir():
    """Where compiled kernel files are kept for later builds (in ndd's kernel cache)."""
    return str(kernel_files.cache_dir() / "module-builds")


def build_all(out_dir, quiet=True, cache_dir=None):
    """Compile every kernel into ``out_dir`` with its ``manifest.json``; return the
    PTX paths written, one per kernel file (an empty list when NVRTC is not installed).

    Images and sources that an earlier build left in ``out_dir`` are removed first, so
    the folder (packaged as ``ndd/_kernels``) holds exactly what the manifest lists.
    With ``cache_dir``, each kernel file is compiled once per state of its source and
    of the build (the tests use this: only an edited file is compiled again). Kernel
    names are unique across the files (the host build of the kernels looks them up by
    name): a name defined twice is a RuntimeError.
    """
    if _nvrtc() is None:
        if not quiet:
            print("ndd: NVRTC not importable, skipping the build of kernels/ (CPU-only install)")
        return []
    sources = sorted(glob.glob(os.path.join(KERNEL_DIR, "*.cu")))
    os.makedirs(out_dir, exist_ok=True)
    for pattern in ("*.cubin", "*.ptx", "*.cu", kernel_files.MANIFEST_NAME):
        for stale in glob.glob(os.path.join(out_dir, pattern)):
            os.remove(stale)

    def build(source_path):
        if cache_dir is None:
            return _build_module(source_path, out_dir)
        return _cached_module(source_path, out_dir, cache_dir)

    # Files build side by side too: each file's images alone leave cores idle while
    # its slowest image finishes. The largest sources (a rough guess at the slowest
    # compiles) start first, so that none of them is left to finish alone at the end.
    sources.sort(key=lambda path: -len(shipped_source(path)))
    modules = {}
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for source_path, entry in zip(sources, pool.map(build, sources), strict=True):
            stem = os.path.splitext(os.path.basename(source_path))[0]
            modules[stem] = entry
            if not quiet:
                files = ", ".join(image["file"] for image in entry["images"])
                print(f"ndd: compiled {os.path.basename(source_path)} -> {files}")
    owners = {}
    for stem, entry in modules.items():
        for kernel in entry["kernels"]:
            if kernel in owners:
                raise RuntimeError(f"kernel {kernel} is defined in both {owners[kernel]}.cu and {stem}.cu")
            owners[kernel] = stem
    major, minor = kernel_files.nvrtc_version()
    manifest = {
        "nvrtc_version": f"{major}.{minor}",
        "compile_options": list(kernel_files.COMPILE_OPTIONS),
        "modules": modules,
    }
    with open(os.path.join(out_dir, kernel_files.MANIFEST_NAME), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return [
        os.path.join(out_dir, image["file"])
        for module in modules.values()
        for image in module["images"]
        if image["kind"] == "ptx"
    ]


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "ndd", "_kernels")
    if _nvrtc() is None:
        sys.exit("NVRTC is not importable: pip install cuda-python nvidia-cuda-nvrtc-cu12")
    paths = build_all(out, quiet=False, cache_dir=module_cache_dir())
    print(
        f"{len(paths)} kernel file(s) compiled; manifest in {os.path.join(out, kernel_files.MANIFEST_NAME)}"
    )
