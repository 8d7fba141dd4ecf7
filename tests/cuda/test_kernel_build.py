"""The kernel build scheme (kernels/build.py) and the loader's side of it
(ndd/_cuda/kernel_files.py), checked without a GPU: NVRTC needs none.

What the scheme promises: a CUBIN for each of sm_70, sm_80 and sm_90, PTX for compute_90 with the ISA of the NVRTC that built it, and a manifest
whose kernel signatures are those of the .cu sources. Loading on a driver is not
proven here.
"""

import concurrent.futures
import hashlib
import json
import locale
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import threading
import time

import pytest
from gpu_testing import load_build, needs_nvrtc  # noqa: E402

from ndd._cuda import kernel_files

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "kernels").glob("*.cu"))

SCHEME_CUBIN_SMS = [70, 80, 90]
SCHEME_PTX_TARGET = "sm_90"
# The PTX ISA each NVRTC 12.x writes, from the release history of the PTX ISA manual.
ISA_OF_NVRTC = {
    (12, 0): "8.0",
    (12, 1): "8.1",
    (12, 2): "8.2",
    (12, 3): "8.3",
    (12, 4): "8.4",
    (12, 5): "8.5",
    (12, 6): "8.5",
    (12, 8): "8.7",
    (12, 9): "8.8",
}
PTX_PARAM_SIZE = {"u8": 1, "u16": 2, "u32": 4, "f32": 4, "u64": 8, "f64": 8}
KIND_SIZE = {"ptr": 8, "bool": 1, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4}
KIND_SIZE.update({"i64": 8, "u64": 8, "f32": 4, "f64": 8})
ELEMENTWISE_TYPES = ["u8", "i16", "i32", "i64", "f32", "f64"]
INTEGER_TYPES = ["u8", "i16", "i32", "i64"]
# kernel name -> the types it has kernels for
ELEMENTWISE_OPS = {op: ELEMENTWISE_TYPES for op in ["add", "sub", "mul", "minimum", "maximum"]}
ELEMENTWISE_OPS.update({op: ELEMENTWISE_TYPES for op in ["eq", "neq", "lt", "leq", "gt", "geq"]})
ELEMENTWISE_OPS.update({op: INTEGER_TYPES for op in ["bitand", "bitor", "bitxor"]})
EM_CUDA = 190
ELFOSABI_CUDA = 0x33


@pytest.fixture(scope="module")
def build():
    return load_build()


@pytest.fixture(scope="module")
def built(build, tmp_path_factory):
    """``(folder, manifest)`` of one build of every kernel."""
    if kernel_files.nvrtc_version() is None:
        pytest.skip("NVRTC is not installed")
    folder = tmp_path_factory.mktemp("kernels")
    build.build_all(str(folder), cache_dir=build.module_cache_dir())
    return folder, json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def _images(manifest, kind):
    return [
        (name, image)
        for name, module in manifest["modules"].items()
        for image in module["images"]
        if image["kind"] == kind
    ]


def _ptx_entries(ptx):
    """``{kernel: [param size, ...]}`` from the ``.entry`` declarations of PTX text."""
    entries = {}
    for name, params in re.findall(r"\.entry\s+(\w+)\s*\(([^)]*)\)", ptx):
        entries[name] = [PTX_PARAM_SIZE[t] for t in re.findall(r"\.param\s+\.(\w+)", params)]
    return entries


# --- the build ---------------------------------------------------------------


@needs_nvrtc
def test_manifest_has_every_kernel_file_with_the_hash_of_its_source(built):
    folder, manifest = built
    assert sorted(manifest["modules"]) == [path.stem for path in SOURCES]
    for path in SOURCES:
        module = manifest["modules"][path.stem]
        shipped = load_build().shipped_source(str(path))
        assert module["sha256"] == hashlib.sha256(shipped).hexdigest()
        assert (folder / module["source"]).read_bytes() == shipped


def test_shipped_sources_paste_in_the_kernel_headers_once(tmp_path, monkeypatch):
    build = load_build()
    (tmp_path / "a.cuh").write_bytes(b"#pragma once\n#define A 1\n")
    (tmp_path / "b.cuh").write_bytes(b'#pragma once\n#include "a.cuh"\n#define B 2\n')
    (tmp_path / "k.cu").write_bytes(
        b'#include "b.cuh"\n  #include "a.cuh"\n#include <cstdio>\nint k = A + B;\n'
    )
    monkeypatch.setattr(build, "KERNEL_DIR", str(tmp_path))
    assert (
        build.shipped_source(str(tmp_path / "k.cu"))
        == b"#define A 1\n#define B 2\n\n#include <cstdio>\nint k = A + B;\n"
    )


@needs_nvrtc
def test_manifest_records_the_nvrtc_that_built_it(built):
    major, minor = kernel_files.nvrtc_version()
    assert built[1]["nvrtc_version"] == f"{major}.{minor}"


@needs_nvrtc
def test_cubins_are_shipped_for_sm70_to_sm90_and_are_cuda_elf_for_their_sm(built):
    folder, manifest = built
    nvrtc_major = kernel_files.nvrtc_version()[0]
    for name, module in manifest["modules"].items():
        cubins = [image for image in module["images"] if image["kind"] == "cubin"]
        assert [image["sm"] for image in cubins] == SCHEME_CUBIN_SMS, name
        for image in cubins:
            data = (folder / image["file"]).read_bytes()
            assert data[:4] == b"\x7fELF" and data[7] == ELFOSABI_CUDA
            assert int.from_bytes(data[18:20], "little") == EM_CUDA
            # The low byte of a CUDA ELF's e_flags is the SM it runs on.
            assert int.from_bytes(data[48:52], "little") & 0xFF == image["sm"]
            assert image["sha256"] == hashlib.sha256(data).hexdigest()
            assert image["min_driver"] == nvrtc_major * 1000


@needs_nvrtc
def test_shipped_ptx_targets_sm90_with_the_isa_of_the_building_nvrtc(built):
    folder, manifest = built
    nvrtc = kernel_files.nvrtc_version()
    expected_isa = ISA_OF_NVRTC[nvrtc]
    first_cuda_with_isa = min(version for version, isa in ISA_OF_NVRTC.items() if isa == expected_isa)
    ptx_images = _images(manifest, "ptx")
    assert sorted(name for name, _ in ptx_images) == sorted(manifest["modules"])
    for _, image in ptx_images:
        text = (folder / image["file"]).read_text(encoding="utf-8")
        assert re.search(r"^\.version (\S+)$", text, re.MULTILINE).group(1) == expected_isa
        assert re.search(r"^\.target (\S+)$", text, re.MULTILINE).group(1) == SCHEME_PTX_TARGET
        assert (image["ptx_version"], image["ptx_target"]) == (expected_isa, SCHEME_PTX_TARGET)
        assert image["min_driver"] == first_cuda_with_isa[0] * 1000 + first_cuda_with_isa[1] * 10


@needs_nvrtc
def test_manifest_signatures_match_the_ptx_entries(built):
    folder, manifest = built
    for name, image in _images(manifest, "ptx"):
        entries = _ptx_entries((folder / image["file"]).read_text(encoding="utf-8"))
        kernels = manifest["modules"][name]["kernels"]
        assert sorted(entries) == sorted(kernels)
        for kernel, sizes in entries.items():
            assert [KIND_SIZE[kind] for kind in kernels[kernel]["params"]] == sizes, kernel


@needs_nvrtc
def test_one_compile_for_an_sm_gives_its_cubin_and_the_ptx_of_its_compute_arch():
    source = b'extern "C" __global__ void twice(float* v, unsigned long long n) {\n'
    source += b"  for (unsigned long long i = threadIdx.x; i < n; i += blockDim.x) v[i] = v[i] + v[i];\n}\n"
    cubin, ptx = kernel_files.compile_images(source, "twice.cu", "sm_90")
    compute_ptx = kernel_files.compile_source(source, "twice.cu", "compute_90")
    assert cubin == kernel_files.compile_source(source, "twice.cu", "sm_90")
    assert cubin[:4] == b"\x7fELF" and b".entry twice(" in compute_ptx
    if kernel_files.nvrtc_version()[0] == 12:
        assert ptx == compute_ptx
    else:  # a later NVRTC may keep no PTX of a compile for a real architecture
        assert ptx in (None, compute_ptx)


@needs_nvrtc
def test_nvrtc_compiles_on_a_thread_of_its_own_and_leaves_the_callers_locale(monkeypatch):
    # NVRTC 12.1 leaves the thread that compiles in the "C" locale: Python then opens
    # text files there as ASCII (make test-oldest-libraries has NVRTC 12.1).
    from cuda.bindings import nvrtc

    threads = []
    real_compile = nvrtc.nvrtcCompileProgram
    monkeypatch.setattr(
        nvrtc,
        "nvrtcCompileProgram",
        lambda *args: threads.append(threading.get_ident()) or real_compile(*args),
    )
    encoding = locale.getpreferredencoding(False)
    ptx = kernel_files.compile_source(
        b'extern "C" __global__ void nothing() {}\n', "nothing.cu", "compute_90"
    )
    assert b".entry nothing(" in ptx
    assert locale.getpreferredencoding(False) == encoding
    assert threads and threading.get_ident() not in threads
    with pytest.raises(RuntimeError, match=r"NVRTC compile of broken.cu for compute_90 failed.*\n.*error"):
        kernel_files.compile_source(b"__global__ void broken( {}\n", "broken.cu", "compute_90")


@needs_nvrtc
def test_without_ptx_from_the_sm_90_compile_the_build_compiles_it_for_compute_90(
    build, tmp_path, monkeypatch
):
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    (kernels / "tiny.cu").write_text(
        'extern "C" __global__ void fill(float* out, float v) { out[threadIdx.x] = v; }\n'
    )
    monkeypatch.setattr(build, "KERNEL_DIR", str(kernels))
    real_compile_images = build.kernel_files.compile_images

    def compile_images(source, name, arch, *args, outputs=("cubin", "ptx"), **kwargs):
        images = real_compile_images(source, name, arch, *args, outputs=outputs, **kwargs)
        return [
            None if arch.startswith("sm_") and kind == "ptx" else image
            for kind, image in zip(outputs, images, strict=True)
        ]

    monkeypatch.setattr(build.kernel_files, "compile_images", compile_images)
    build.build_all(str(tmp_path / "out"))
    source = (tmp_path / "out" / "tiny.cu").read_bytes()
    shipped = (tmp_path / "out" / "tiny.compute_90.ptx").read_bytes()
    assert shipped == kernel_files.compile_source(source, "tiny.cu", "compute_90")
    assert b".entry fill(" in shipped


@needs_nvrtc
def test_the_shipped_ptx_is_what_a_compile_for_compute_90_gives(built):
    folder, manifest = built
    name = "transpose"
    image = next(image for image in manifest["modules"][name]["images"] if image["kind"] == "ptx")
    source = (folder / f"{name}.cu").read_bytes()
    assert (folder / image["file"]).read_bytes() == kernel_files.compile_source(
        source, f"{name}.cu", "compute_90"
    )


@needs_nvrtc
def test_every_cubin_holds_the_code_of_every_kernel(built):
    folder, manifest = built
    for name, image in _images(manifest, "cubin"):
        data = (folder / image["file"]).read_bytes()
        for kernel in manifest["modules"][name]["kernels"]:
            assert b".text." + kernel.encode() + b"\x00" in data, (image["file"], kernel)


@needs_nvrtc
def test_elementwise_kernels_take_pointers_scalars_and_an_element_count(built):
    kernels = built[1]["modules"]["elementwise"]["kernels"]
    expected = {}
    for op, types in ELEMENTWISE_OPS.items():
        for t in types:
            expected[f"{op}_{t}"] = {"params": ["ptr", "ptr", "ptr", "u64"]}
            expected[f"{op}_scalar_rhs_{t}"] = {"params": ["ptr", t, "ptr", "u64"]}
            expected[f"{op}_scalar_lhs_{t}"] = {"params": [t, "ptr", "ptr", "u64"]}
    for source in ELEMENTWISE_TYPES:
        for target in ELEMENTWISE_TYPES:
            expected[f"cast_{source}_to_{target}"] = {"params": ["ptr", "ptr", "u64"]}
    assert {name: kernels.get(name) for name in expected} == expected


PROBE_SOURCE = b"""
typedef unsigned short pixel_t;
#define KERNEL(NAME, T) \\
  extern "C" __global__ void NAME(const T* __restrict__ in, T* out, const int n, pixel_t p, \\
                                  double scale, char c, bool flag, signed char s, unsigned u, \\
                                  long long q, unsigned long long m, float f, short h) {}
KERNEL(scaled_f32, float)
template <typename T> __device__ T twice(T x) { return x + x; }
extern "C" __global__ void no_params() {}
"""


@needs_nvrtc
def test_signatures_come_through_macros_and_typedefs_from_the_compiler(build):
    ptx = kernel_files.compile_source(PROBE_SOURCE, "probe.cu", "compute_90").decode()
    # Plain char follows the host ABI: signed on x86-64, unsigned on ARM.
    char_kind = "i8" if platform.machine() in ("x86_64", "AMD64") else "u8"
    assert build.kernel_signatures(PROBE_SOURCE, "probe.cu", ptx) == {
        "no_params": [],
        "scaled_f32": [
            "ptr",
            "ptr",
            "i32",
            "u16",
            "f64",
            char_kind,
            "bool",
            "i8",
            "u32",
            "i64",
            "u64",
            "f32",
            "i16",
        ],
    }


@pytest.mark.parametrize(
    "source, message",
    [
        (b"__global__ void mangled(int* a) {}", 'declare it extern "C"'),
        (
            b'struct Pair { int a, b; };\nextern "C" __global__ void by_value(Pair p) {}',
            "parameter 0 of kernel by_value",
        ),
    ],
)
@needs_nvrtc
def test_kernels_ndd_cannot_launch_are_rejected(build, source, message):
    ptx = kernel_files.compile_source(source, "bad.cu", "compute_90").decode()
    with pytest.raises(ValueError, match=re.escape(message)):
        build.kernel_signatures(source, "bad.cu", ptx)


@needs_nvrtc
def test_rebuild_removes_images_an_earlier_build_left(build, tmp_path):
    (tmp_path / "elementwise.sm_60.cubin").write_bytes(b"old")
    build.build_all(str(tmp_path), cache_dir=build.module_cache_dir())
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    listed = {module["source"] for module in manifest["modules"].values()}
    listed |= {image["file"] for module in manifest["modules"].values() for image in module["images"]}
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(listed | {"manifest.json"})


@needs_nvrtc
def test_command_line_build_writes_the_manifest(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "kernels" / "build.py"), str(tmp_path)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert sorted(json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))["modules"]) == [
        p.stem for p in SOURCES
    ]


# --- choosing an image -------------------------------------------------------


@pytest.fixture
def shipped(tmp_path):
    """A kernels folder laid out as the scheme ships it, each image's bytes naming it."""
    images = [
        {"kind": "cubin", "sm": sm, "file": f"k.sm_{sm}.cubin", "min_driver": 12000}
        for sm in SCHEME_CUBIN_SMS
    ]
    images.append({"kind": "ptx", "sm": 90, "file": "k.compute_90.ptx", "min_driver": 12090})
    for image in images:
        (tmp_path / image["file"]).write_bytes(image["file"].encode())
    manifest = {"modules": {"k": {"source": "k.cu", "sha256": "0" * 64, "images": images, "kernels": {}}}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


@pytest.mark.parametrize(
    "capability, driver, expected",
    [
        ((7, 0), 12000, ("cubin", b"k.sm_70.cubin")),
        ((7, 2), 12000, ("cubin", b"k.sm_70.cubin")),  # Xavier runs sm_70 code
        ((7, 5), 12020, ("cubin", b"k.sm_70.cubin")),  # Turing runs sm_70 code
        ((8, 0), 12000, ("cubin", b"k.sm_80.cubin")),
        ((8, 6), 12000, ("cubin", b"k.sm_80.cubin")),
        ((8, 7), 12000, ("cubin", b"k.sm_80.cubin")),  # Orin: highest minor not above its own
        ((8, 9), 13000, ("cubin", b"k.sm_80.cubin")),
        ((9, 0), 12000, ("cubin", b"k.sm_90.cubin")),
        ((10, 0), 12090, ("ptx", b"k.compute_90.ptx")),
        ((12, 0), 13000, ("ptx", b"k.compute_90.ptx")),
        ((10, 0), 12080, None),  # the driver cannot JIT PTX newer than itself
        ((6, 1), 12090, None),  # below every CUBIN and the PTX target
        ((9, 0), 11080, None),  # a CUDA 11 driver loads no CUDA 12 image
    ],
)
def test_kernel_image_prefers_a_compatible_cubin_then_ptx(shipped, capability, driver, expected):
    assert kernel_files.kernel_image("k", capability, driver, kernels_dir=shipped) == expected


def test_kernel_image_of_an_unknown_module_names_the_shipped_ones(shipped):
    with pytest.raises(KeyError, match=r"no kernel module 'resize'; shipped: \['k'\]"):
        kernel_files.kernel_image("resize", (8, 0), 12000, kernels_dir=shipped)


def test_missing_manifest_says_how_to_get_kernels(tmp_path):
    with pytest.raises(RuntimeError, match=re.escape("pip install 'ndd[gpu]'")):
        kernel_files.manifest(tmp_path)


# --- runtime compilation and its cache ----------------------------------------


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("NDD_KERNEL_CACHE", str(folder))
    return folder


@needs_nvrtc
def test_runtime_compile_makes_a_cubin_for_the_exact_sm_and_caches_it(built, cache):
    folder, manifest = built
    image = kernel_files.compile_at_runtime("elementwise", (8, 7), kernels_dir=folder)
    assert image[:4] == b"\x7fELF" and int.from_bytes(image[48:52], "little") & 0xFF == 87
    expected = kernel_files.runtime_cache_path(
        "elementwise", manifest["modules"]["elementwise"]["sha256"], kernel_files.nvrtc_version(), (8, 7)
    )
    made = sorted(path.name for path in cache.iterdir())
    assert made == [expected.name, expected.name + ".lock"]  # no temporary file left
    assert expected.read_bytes() == image


@needs_nvrtc
def test_runtime_compile_reads_the_cache_instead_of_compiling_again(built, cache, monkeypatch):
    first = kernel_files.compile_at_runtime("elementwise", (7, 2), kernels_dir=built[0])

    def compile_source(*args, **kwargs):
        raise AssertionError("compiled although the cache holds the image")

    monkeypatch.setattr(kernel_files, "compile_source", compile_source)
    assert kernel_files.compile_at_runtime("elementwise", (7, 2), kernels_dir=built[0]) == first


@needs_nvrtc
def test_runtime_compile_waits_for_another_process_compiling_the_same_image(built, cache, monkeypatch):
    folder, manifest = built
    path = kernel_files.runtime_cache_path(
        "elementwise", manifest["modules"]["elementwise"]["sha256"], kernel_files.nvrtc_version(), (7, 5)
    )

    def compile_source(*args, **kwargs):
        raise AssertionError("compiled although another process was making the image")

    monkeypatch.setattr(kernel_files, "compile_source", compile_source)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with kernel_files.build_lock(path):  # a separate open file: it blocks a thread as a process
            waiting = pool.submit(kernel_files.compile_at_runtime, "elementwise", (7, 5), folder)
            time.sleep(0.5)  # the call now waits on the lock (or, unlocked, has compiled)
            path.write_bytes(b"made by the other process")
        assert waiting.result(timeout=60) == b"made by the other process"


def test_cache_key_changes_with_source_nvrtc_and_architecture(cache):
    base = ("m", "a" * 64, (12, 9), (8, 6))
    variants = [
        ("m", "b" * 64, (12, 9), (8, 6)),
        ("m", "a" * 64, (12, 8), (8, 6)),
        ("m", "a" * 64, (12, 9), (8, 9)),
    ]
    paths = {kernel_files.runtime_cache_path(*key) for key in [base, *variants]}
    assert len(paths) == 4
    assert all(path.parent == cache for path in paths)


def test_cache_defaults_to_the_user_cache_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("NDD_KERNEL_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    path = kernel_files.runtime_cache_path("m", "a" * 64, (12, 9), (8, 6))
    assert path.parent == tmp_path / ".cache" / "ndd" / "kernels"


@needs_nvrtc
def test_runtime_compile_refuses_a_source_that_differs_from_the_manifest(built, cache, tmp_path):
    folder = tmp_path / "kernels"
    shutil.copytree(built[0], folder)
    with open(folder / "elementwise.cu", "a", encoding="utf-8") as f:
        f.write("// edited\n")
    with pytest.raises(RuntimeError, match="does not match the sha256"):
        kernel_files.compile_at_runtime("elementwise", (8, 6), kernels_dir=folder)


@needs_nvrtc
def test_runtime_compile_for_an_architecture_nvrtc_lacks_says_so(built, cache):
    with pytest.raises(RuntimeError, match=r"cannot compile for sm_30"):
        kernel_files.compile_at_runtime("elementwise", (3, 0), kernels_dir=built[0])


@needs_nvrtc
def test_a_cached_build_compiles_each_kernel_file_once_per_source(build, tmp_path, monkeypatch):
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    source = kernels / "tiny.cu"
    source.write_text('extern "C" __global__ void fill(float* out, float v) { out[threadIdx.x] = v; }\n')
    monkeypatch.setattr(build, "KERNEL_DIR", str(kernels))
    compiled = []
    real_build_module = build._build_module
    monkeypatch.setattr(build, "_build_module", lambda *a: compiled.append(a[0]) or real_build_module(*a))
    cache = str(tmp_path / "cache")
    build.build_all(str(tmp_path / "first"), cache_dir=cache)
    build.build_all(str(tmp_path / "second"), cache_dir=cache)
    assert len(compiled) == 1
    first, second = (sorted(p.name for p in (tmp_path / d).iterdir()) for d in ("first", "second"))
    assert first == second and "manifest.json" in second
    assert (tmp_path / "first" / "tiny.sm_80.cubin").read_bytes() == (
        tmp_path / "second" / "tiny.sm_80.cubin"
    ).read_bytes()
    source.write_text(source.read_text(encoding="utf-8").replace("= v;", "= 2 * v;"))
    build.build_all(str(tmp_path / "third"), cache_dir=cache)
    assert len(compiled) == 2


# Builds tiny.cu into argv[2] through the cache argv[3], each compile slowed by a second
# and logged to argv[4]: two of these at once overlap in their compiles unless one waits.
_SLOW_BUILD = """
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("kernel_build", sys.argv[1])
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)
build.KERNEL_DIR = sys.argv[5]
real_build_module = build._build_module
def slow_build_module(*args):
    with open(sys.argv[4], "a") as log:
        log.write("compiled\\n")
    time.sleep(1.0)
    return real_build_module(*args)
build._build_module = slow_build_module
build.build_all(sys.argv[2], cache_dir=sys.argv[3])
"""


@needs_nvrtc
def test_processes_sharing_the_cache_compile_a_kernel_file_once(tmp_path):
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    (kernels / "tiny.cu").write_text(
        'extern "C" __global__ void fill(float* out, float v) { out[threadIdx.x] = v; }\n'
    )
    log = tmp_path / "compiles.log"
    builders = [
        subprocess.Popen(
            [sys.executable, "-c", _SLOW_BUILD, str(ROOT / "kernels" / "build.py"), str(tmp_path / out)]
            + [str(tmp_path / "cache"), str(log), str(kernels)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for out in ("first", "second")
    ]
    for builder in builders:
        assert builder.wait(timeout=120) == 0, builder.stderr.read()
    assert log.read_text(encoding="utf-8").splitlines() == ["compiled"]
    for out in ("first", "second"):
        assert (tmp_path / out / "tiny.sm_90.cubin").read_bytes()[:4] == b"\x7fELF"


def test_the_build_lock_makes_a_second_holder_wait_for_the_first(tmp_path):
    target, released = tmp_path / "entry", tmp_path / "released"
    waiter = (
        "import importlib.util, os, sys\n"
        "spec = importlib.util.spec_from_file_location('kf', sys.argv[1])\n"
        "kf = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(kf)\n"
        "print('ready', flush=True)\n"
        "with kf.build_lock(sys.argv[2]):\n"
        "    print(os.path.exists(sys.argv[3]))\n"
    )
    with kernel_files.build_lock(target):
        other = subprocess.Popen(
            [sys.executable, "-c", waiter, kernel_files.__file__, str(target), str(released)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert other.stdout.readline() == "ready\n"
        time.sleep(0.5)  # the other process now blocks in build_lock (or, unlocked, has passed it)
        released.touch()
    assert other.communicate(timeout=60)[0] == "True\n" and other.returncode == 0


@needs_nvrtc
def test_a_kernel_name_defined_in_two_files_fails_the_build(build, tmp_path, monkeypatch):
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    for stem in ("first", "second"):
        (kernels / f"{stem}.cu").write_text('extern "C" __global__ void fill(float* out) { out[0] = 1; }\n')
    monkeypatch.setattr(build, "KERNEL_DIR", str(kernels))
    with pytest.raises(RuntimeError, match="kernel fill is defined in both first.cu and second.cu"):
        build.build_all(str(tmp_path / "out"), cache_dir=str(tmp_path / "cache"))


# nvrtcGetSupportedArchs of NVRTC 13.0, which dropped the architectures before Turing.
NVRTC13_ARCHS = [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121]


@pytest.mark.parametrize(
    "supported, expected",
    [
        ([50, 52, 60, 61, 70, 72, 75, 80, 86, 89, 90, 100, 120], [70, 80, 90]),
        (NVRTC13_ARCHS, [75, 80, 90]),
        ([86, 89, 100], [86]),
        ([], []),
    ],
    ids=["nvrtc12", "nvrtc13", "ampere-only", "none"],
)
def test_cubin_architectures_follow_what_nvrtc_compiles(supported, expected):
    assert kernel_files.cubin_archs(supported) == expected


@needs_nvrtc
def test_a_build_with_an_nvrtc_without_volta_ships_turing_cubins(build, tmp_path, monkeypatch):
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    (kernels / "tiny.cu").write_text('extern "C" __global__ void fill(float* out, float v) { out[0] = v; }\n')
    monkeypatch.setattr(build, "KERNEL_DIR", str(kernels))
    # build.py loads its own copy of kernel_files (it runs without ndd installed).
    monkeypatch.setattr(build.kernel_files, "_supported_archs", lambda: NVRTC13_ARCHS)
    build.build_all(str(tmp_path / "out"), cache_dir=str(tmp_path / "cache"))
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    cubins = [image for image in manifest["modules"]["tiny"]["images"] if image["kind"] == "cubin"]
    assert [(image["sm"], image["file"]) for image in cubins] == [
        (75, "tiny.sm_75.cubin"),
        (80, "tiny.sm_80.cubin"),
        (90, "tiny.sm_90.cubin"),
    ]
    elf = (tmp_path / "out" / "tiny.sm_75.cubin").read_bytes()
    assert elf[:4] == b"\x7fELF" and int.from_bytes(elf[18:20], "little") == EM_CUDA
    # Turing and later load the sm_75 CUBIN; Volta compiles at run time (or says why not).
    shipped = tmp_path / "out"
    assert kernel_files.kernel_image("tiny", (7, 5), 13000, shipped) == ("cubin", elf)
    assert kernel_files.kernel_image("tiny", (7, 0), 13000, shipped) is None


@needs_nvrtc
def test_runtime_compile_for_a_gpu_older_than_nvrtc_supports_points_to_nvrtc_12(built, cache, monkeypatch):
    monkeypatch.setattr(kernel_files, "_supported_archs", lambda: NVRTC13_ARCHS)
    with pytest.raises(
        RuntimeError, match=r"cannot compile for sm_70: this GPU is older .* nvidia-cuda-nvrtc-cu12"
    ):
        kernel_files.compile_at_runtime("elementwise", (7, 0), kernels_dir=built[0])
