"""Kernel modules and launches: ndd/_cuda/modules.py (which image loads, once per
device) and ndd/_cuda/launch.pyx (argument packing by the manifest's parameter kinds).

On the recording FakeDriver: the module is the shipped image kernel_files chooses
for the device and driver, or an NVRTC compile when the driver refuses it; the
bytes each launch hands the driver are those of the arguments, by the kernel's
declared parameter kinds. The ``gpu``-marked tests run the kernels on a real GPU
and compare with numpy.
"""

import os
import pathlib
import re
import struct
import threading

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import load_build, needs_nvrtc, skip_unless_nvrtc_compiles_for  # noqa: E402

from ndd._cuda import context, driver, kernel_files, memory, modules, streams  # noqa: E402
from ndd._cuda.fake import FakeDriver  # noqa: E402
from ndd._cuda.launch import Signature, grid_for, launch  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUDA_ERROR = FakeDriver.CUresult
ELEMENTWISE_OPS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "minimum": np.minimum,
    "maximum": np.maximum,
}
ELEMENTWISE_TYPES = {"u8": np.uint8, "i16": np.int16, "i32": np.int32, "i64": np.int64}
ELEMENTWISE_TYPES.update({"f32": np.float32, "f64": np.float64})
# (struct format, lowest, highest) of each integer kind.
INTEGER_KINDS = {
    "i8": ("b", -(2**7), 2**7 - 1),
    "u8": ("B", 0, 2**8 - 1),
    "i16": ("h", -(2**15), 2**15 - 1),
    "u16": ("H", 0, 2**16 - 1),
    "i32": ("i", -(2**31), 2**31 - 1),
    "u32": ("I", 0, 2**32 - 1),
    "i64": ("q", -(2**63), 2**63 - 1),
    "u64": ("Q", 0, 2**64 - 1),
}
# One parameter of every kind, in an order that needs padding for natural alignment.
EVERY_KIND_SOURCE = b"""
extern "C" __global__ void every_kind(bool b, float* p, signed char i8, unsigned char u8, short i16,
                                      unsigned short u16, int i32, unsigned u32, long long i64,
                                      unsigned long long u64, float f32, double f64) {}
"""
EVERY_KIND = ["bool", "ptr", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64"]


@pytest.fixture
def shipped(built, tmp_path, monkeypatch):
    """ndd's kernels are the ones of ``built``; runtime compiles are cached in a fresh folder."""
    monkeypatch.setattr(kernel_files, "KERNELS_DIR", built)
    monkeypatch.setenv("NDD_KERNEL_CACHE", str(tmp_path / "cache"))
    return built


def _fake(**kwargs):
    return driver.use_fake(FakeDriver(**kwargs))


def _elf_sm(image):
    flags = int.from_bytes(image[48:52], "little")
    return (flags >> 8) & 0xFF if image[7] == 0x41 else flags & 0xFF


def _bits(fmt, value):
    """``value`` stored as ``fmt``, read back as the unsigned number the fake records."""
    data = struct.pack("<" + fmt, value)
    return int.from_bytes(data, "little")


# -- which image loads -----------------------------------------------------------------


@pytest.mark.parametrize(
    "capability, driver_version, image",
    [
        ((7, 0), 12000, "elementwise.sm_70.cubin"),
        ((7, 5), 12090, "elementwise.sm_70.cubin"),  # Turing runs sm_70 code
        ((8, 0), 12090, "elementwise.sm_80.cubin"),
        ((8, 6), 12000, "elementwise.sm_80.cubin"),
        ((8, 7), 12090, "elementwise.sm_80.cubin"),  # Orin runs sm_80 code
        ((8, 9), 12090, "elementwise.sm_80.cubin"),
        ((9, 0), 13000, "elementwise.sm_90.cubin"),
        ((10, 0), 13000, "elementwise.compute_90.ptx"),
        ((12, 0), 13000, "elementwise.compute_90.ptx"),
    ],
)
def test_the_shipped_image_for_the_device_and_driver_is_loaded(shipped, capability, driver_version, image):
    if (shipped / image).suffix == ".ptx":
        isa = kernel_files.ptx_header((shipped / image).read_bytes())[0]
        if kernel_files.PTX_ISA_MIN_DRIVER[isa] > driver_version:
            pytest.skip(f"this NVRTC writes PTX ISA {isa}, too new for driver {driver_version}")
    with _fake(compute_capability=capability, driver_version=driver_version) as fake:
        modules.get_function(0, "elementwise", "add_f32")
        assert list(fake.module_images.values()) == [(shipped / image).read_bytes()]
        assert fake.calls.count("cuDriverGetVersion") == 1


def _runtime_cubin_in_cache(cache):
    files = [path for path in cache.iterdir() if path.suffix != ".lock"]  # beside it: its build lock
    assert len(files) == 1 and files[0].suffix == ".cubin"
    return files[0].read_bytes()


@needs_nvrtc
def test_a_new_gpu_on_a_driver_older_than_the_ptx_gets_a_runtime_cubin_compiled_once(shipped, monkeypatch):
    skip_unless_nvrtc_compiles_for((10, 0))
    cache = pathlib.Path(os.environ["NDD_KERNEL_CACHE"])
    ptx_driver = min(
        image["min_driver"]
        for image in kernel_files.manifest()["modules"]["elementwise"]["images"]
        if image["kind"] == "ptx"
    )
    old_driver = ptx_driver - 10
    with _fake(compute_capability=(10, 0), driver_version=old_driver) as fake:
        modules.get_function(0, "elementwise", "add_f32")
        (loaded,) = fake.module_images.values()
        assert _elf_sm(loaded) == 100
        assert _runtime_cubin_in_cache(cache) == loaded

    def compile_source(*args, **kwargs):
        raise AssertionError("compiled again although the cache holds the CUBIN")

    monkeypatch.setattr(kernel_files, "compile_source", compile_source)
    with _fake(compute_capability=(10, 0), driver_version=old_driver) as fake:
        modules.get_function(0, "elementwise", "mul_i32")
        assert list(fake.module_images.values()) == [loaded]


@needs_nvrtc
def test_a_new_gpu_that_the_installed_nvrtc_predates_is_refused_by_name(shipped, monkeypatch):
    monkeypatch.setattr(kernel_files, "_supported_archs", lambda: [70, 75, 80, 86, 87, 89, 90])
    with _fake(compute_capability=(10, 0), driver_version=13000) as fake:
        fake.fail_next("cuModuleLoadData", CUDA_ERROR.CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
        with pytest.raises(
            RuntimeError,
            match=r"elementwise.add_f32 on device 0 \(compute capability 10.0, driver 13.0\): the driver "
            r"refused the shipped PTX .* NVRTC \d+\.\d+ cannot compile for sm_100: install a newer "
            r"nvidia-cuda-nvrtc-cu12",
        ):
            modules.get_function(0, "elementwise", "add_f32")


@needs_nvrtc
@pytest.mark.parametrize(
    "capability, refusal",
    [
        ((10, 0), CUDA_ERROR.CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
        ((8, 0), CUDA_ERROR.CUDA_ERROR_NO_BINARY_FOR_GPU),
        ((12, 0), CUDA_ERROR.CUDA_ERROR_INVALID_PTX),
    ],
)
def test_an_image_the_driver_refuses_is_replaced_by_a_runtime_compile(shipped, capability, refusal):
    skip_unless_nvrtc_compiles_for(capability)
    with _fake(compute_capability=capability, driver_version=13000) as fake:
        fake.fail_next("cuModuleLoadData", refusal)
        modules.get_function(0, "elementwise", "add_f32")
        assert fake.calls.count("cuModuleLoadData") == 2
        (loaded,) = fake.module_images.values()
        assert _elf_sm(loaded) == capability[0] * 10 + capability[1]


def test_other_load_failures_name_the_kernel_device_and_image(shipped):
    with _fake(compute_capability=(8, 6)) as fake:
        fake.fail_next("cuModuleLoadData", CUDA_ERROR.CUDA_ERROR_OUT_OF_MEMORY)
        message = (
            "kernel elementwise.sub_i16 on device 0 (compute capability 8.6, driver 12.9): "
            "loading the shipped CUBIN failed: CUDA_ERROR_OUT_OF_MEMORY"
        )
        with pytest.raises(driver.CudaError, match=re.escape(message)):
            modules.get_function(0, "elementwise", "sub_i16")
        assert fake.calls.count("cuModuleLoadData") == 1
        # Nothing was cached: the next call loads.
        modules.get_function(0, "elementwise", "sub_i16")
        assert fake.calls.count("cuModuleLoadData") == 2


def test_a_failed_runtime_compile_says_why_the_shipped_image_was_not_used(shipped, monkeypatch):
    def compile_at_runtime(module_name, capability, kernels_dir=None):
        raise RuntimeError("NVRTC is not installed")

    monkeypatch.setattr(kernel_files, "compile_at_runtime", compile_at_runtime)
    with _fake(compute_capability=(8, 0)) as fake:
        fake.fail_next("cuModuleLoadData", CUDA_ERROR.CUDA_ERROR_NO_BINARY_FOR_GPU)
        message = (
            "kernel elementwise.add_f32 on device 0 (compute capability 8.0, driver 12.9): the driver refused "
            "the shipped CUBIN (CUDA_ERROR_NO_BINARY_FOR_GPU), and compiling at runtime failed: NVRTC is not"
        )
        with pytest.raises(RuntimeError, match=re.escape(message)):
            modules.get_function(0, "elementwise", "add_f32")
    with _fake(compute_capability=(6, 1)):
        with pytest.raises(RuntimeError, match=re.escape("6.1, driver 12.9): no shipped image fits, and")):
            modules.get_function(0, "elementwise", "add_f32")


def test_an_unknown_module_is_named_with_the_shipped_ones(shipped):
    shipped_modules = sorted(kernel_files.manifest(shipped)["modules"])
    with _fake():
        with pytest.raises(
            KeyError, match=re.escape(f"no kernel module 'resize'; shipped: {shipped_modules}")
        ):
            modules.get_function(0, "resize", "resize_u8")


def test_an_unknown_kernel_is_named_with_the_module_s_kernels(shipped):
    kernels = sorted(kernel_files.manifest(shipped)["modules"]["elementwise"]["kernels"])
    with _fake():
        message = f"kernel module 'elementwise' has no kernel 'add_c64'; it has: {kernels}"
        with pytest.raises(KeyError, match=re.escape(message)):
            modules.get_function(0, "elementwise", "add_c64")


def test_the_kernel_carries_the_manifest_signature_and_is_cached(shipped):
    with _fake(devices=2):
        kernel = modules.get_function(1, "elementwise", "maximum_u8")
        assert (kernel.name, kernel.module, kernel.device_id) == ("maximum_u8", "elementwise", 1)
        assert kernel.signature.kinds == ("ptr", "ptr", "ptr", "u64")
        assert modules.get_function(1, "elementwise", "maximum_u8") is kernel
        assert modules.get_function(0, "elementwise", "maximum_u8") is not kernel


def test_the_module_is_loaded_once_per_device_by_racing_threads(shipped):
    with _fake(devices=2) as fake:
        load = fake.cuModuleLoadData
        entered = threading.Barrier(4)

        def slow_load(image):
            threading.Event().wait(0.05)  # let every thread reach the load
            return load(image)

        fake.cuModuleLoadData = slow_load
        results = {}

        def worker(index):
            entered.wait()
            device = index % 2
            results[index] = [
                modules.get_function(device, "elementwise", name) for name in ("add_f32", "sub_f32")
            ]

        threads = [threading.Thread(target=worker, args=(index,)) for index in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert fake.calls.count("cuModuleLoadData") == 2
        assert fake.calls.count("cuModuleGetFunction") == 4
        assert results[0] == results[2] and results[1] == results[3]
        assert {kernel.device_id for kernel in results[1]} == {1}


def test_another_driver_or_a_forked_child_loads_again(shipped):
    with _fake() as first:
        modules.get_function(0, "elementwise", "add_f32")
    with _fake() as second:
        kernel = modules.get_function(0, "elementwise", "add_f32")
        assert second.calls.count("cuModuleLoadData") == 1
        assert int(kernel.function) in second.functions
        context._fork_reset._after_fork_in_child()  # what a forked child runs
        modules.get_function(0, "elementwise", "add_f32")
        assert second.calls.count("cuModuleLoadData") == 2
    assert first.calls.count("cuModuleLoadData") == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_real_fork_drops_the_parents_modules(shipped):
    with _fake() as fake:
        modules.get_function(0, "elementwise", "add_f32")
        pid = os.fork()
        if pid == 0:  # the child: its own copy of the fake, and no cached module
            modules.get_function(0, "elementwise", "add_f32")
            os._exit(fake.calls.count("cuModuleLoadData"))
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 2


# -- argument packing --------------------------------------------------------------------


class _DeviceBufferLike:
    def __init__(self, ptr):
        self.ptr = ptr


class _CudaArray:
    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (ptr, False), "version": 3}


def test_every_manifest_kernel_gets_its_arguments_by_its_signature(shipped):
    kernels = {
        name: entry
        for name, entry in kernel_files.manifest()["modules"]["elementwise"]["kernels"].items()
        if entry["params"] == ["ptr", "ptr", "ptr", "u64"]
    }
    with _fake() as fake:
        for index, name in enumerate(sorted(kernels)):
            kernel = modules.get_function(0, "elementwise", name)
            a, b, out, n = 0x7F0000001000 + index, 0x7F0000002000, 0x7F0000003000, 2**40 + index
            kernel.launch(
                (7, 2), (128,), 0x55, _DeviceBufferLike(a), _CudaArray(b), FakeDriver.CUdeviceptr(out), n
            )
            launch_record = fake.launches[-1]
            assert launch_record.function == name
            assert launch_record.args == [a, b, out, n]
            assert launch_record.param_types == ["u64", "u64", "u64", "u64"]
            assert (launch_record.grid, launch_record.block, launch_record.stream) == (
                (7, 2, 1),
                (128, 1, 1),
                0x55,
            )
        assert len(fake.launches) == len(kernels) > 0


@pytest.fixture(scope="module")
def every_kind_ptx():
    """PTX of a kernel with a parameter of every kind, and the kinds ndd's build derives."""
    if kernel_files.nvrtc_version() is None:
        pytest.skip("NVRTC is not installed")
    ptx = kernel_files.compile_source(EVERY_KIND_SOURCE, "every_kind.cu", "compute_70")
    return ptx, load_build().kernel_signatures(EVERY_KIND_SOURCE, "every_kind.cu", ptx.decode())["every_kind"]


@pytest.fixture
def every_kind(every_kind_ptx):
    ptx, kinds = every_kind_ptx
    with _fake() as fake:
        fake.cuInit(0)
        module = driver.check(fake.cuModuleLoadData(ptx), "load")
        function = driver.check(fake.cuModuleGetFunction(module, b"every_kind"), "function")
        yield fake, function, Signature("every_kind", kinds)


def test_the_build_declares_every_kind_for_the_probe_kernel(every_kind_ptx):
    assert every_kind_ptx[1] == EVERY_KIND


@pytest.mark.parametrize("extreme", ["low", "high"])
def test_every_kind_is_packed_with_its_size_and_value(every_kind, extreme):
    fake, function, signature = every_kind
    pick = 1 if extreme == "low" else 2
    integers = {kind: bounds[pick] for kind, bounds in INTEGER_KINDS.items()}
    values = {"bool": extreme == "high", "ptr": 0x7F0000000040, "f32": -1.5e38, "f64": np.pi, **integers}
    if extreme == "low":
        values.update(f32=np.float32(1e-45), f64=-np.inf)
    launch(function, signature, 3, 64, None, [values[kind] for kind in EVERY_KIND])
    formats = {kind: fmt for kind, (fmt, _, _) in INTEGER_KINDS.items()}
    formats.update(bool="?", ptr="Q", f32="f", f64="d")
    expected = [_bits(formats[kind], values[kind]) for kind in EVERY_KIND]
    (recorded,) = fake.launches
    assert recorded.args == expected
    assert recorded.param_types == [
        "u8",
        "u64",
        "u8",
        "u8",
        "u16",
        "u16",
        "u32",
        "u32",
        "u64",
        "u64",
        "f32",
        "f64",
    ]
    assert (recorded.grid, recorded.block, recorded.stream, recorded.shared_bytes) == (
        (3, 1, 1),
        (64, 1, 1),
        0,
        0,
    )


def test_numpy_scalars_and_shared_memory_pass_through(every_kind):
    fake, function, signature = every_kind
    args = [np.bool_(True), np.uint64(64), np.int8(-3), np.uint8(200), np.int16(-300), np.uint16(60000)]
    args += [
        np.int32(-5),
        np.uint32(7),
        np.int64(-(2**40)),
        np.uint64(2**63),
        np.float32(0.1),
        np.float64(0.1),
    ]
    launch(function, signature, (1, 2, 3), (4, 5, 6), 9, args, shared_bytes=1024)
    (recorded,) = fake.launches
    assert recorded.args[:2] == [1, 64]
    assert recorded.args[10:] == [_bits("f", np.float32(0.1)), _bits("d", 0.1)]
    assert (recorded.grid, recorded.block, recorded.stream, recorded.shared_bytes) == (
        (1, 2, 3),
        (4, 5, 6),
        9,
        1024,
    )


def _valid_args():
    return [True, 0x1000, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0]


@pytest.mark.parametrize("kind", list(INTEGER_KINDS))
@pytest.mark.parametrize("side", ["below", "above"])
def test_an_integer_out_of_its_kinds_range_names_kernel_and_parameter(every_kind, kind, side):
    fake, function, signature = every_kind
    _, low, high = INTEGER_KINDS[kind]
    value = low - 1 if side == "below" else high + 1
    args = _valid_args()
    index = EVERY_KIND.index(kind)
    args[index] = value
    message = f"kernel every_kind: parameter {index} ({kind}): {value} is out of range [{low}, {high}]"
    with pytest.raises(OverflowError, match=re.escape(message)):
        launch(function, signature, 1, 1, None, args)
    assert fake.launches == []


@pytest.mark.parametrize(
    "kind, value, error, message",
    [
        ("ptr", 1.5, TypeError, "parameter 1 (ptr): expected a device address, got float 1.5"),
        ("ptr", True, TypeError, "parameter 1 (ptr): expected a device address, got bool True"),
        ("ptr", "0x10", TypeError, "parameter 1 (ptr): expected a device address (an int, an object with"),
        ("ptr", -8, OverflowError, "parameter 1 (ptr): address -0x8 is not a 64-bit address"),
        ("i32", 2.0, TypeError, "parameter 6 (i32): expected an integer, got float 2.0"),
        ("u64", np.float32(2), TypeError, "parameter 9 (u64): expected an integer, got float32 2.0"),
        ("i16", "3", TypeError, "parameter 4 (i16): expected an integer, got str"),
        ("bool", 2, TypeError, "parameter 0 (bool): expected a bool (or 0 or 1), got 2"),
        ("f32", "1.0", TypeError, "parameter 10 (f32): expected a real number, got str"),
        ("f32", 1e39, OverflowError, "parameter 10 (f32): 1e+39 does not fit in a float32"),
        ("f64", 10**400, OverflowError, "parameter 11 (f64): " + str(10**400) + " does not fit in a float64"),
    ],
)
def test_an_argument_of_the_wrong_type_names_kernel_and_parameter(every_kind, kind, value, error, message):
    fake, function, signature = every_kind
    args = _valid_args()
    args[EVERY_KIND.index(kind)] = value
    with pytest.raises(error, match=re.escape("kernel every_kind: " + message)):
        launch(function, signature, 1, 1, None, args)
    assert fake.launches == []


def test_zero_and_one_are_bools_and_none_is_a_null_pointer(every_kind):
    fake, function, signature = every_kind
    args = _valid_args()
    args[0], args[1] = 1, None
    launch(function, signature, 1, 1, None, args)
    assert fake.launches[0].args[:2] == [1, 0]


def test_a_wrong_argument_count_lists_the_signature(shipped):
    with _fake():
        kernel = modules.get_function(0, "elementwise", "add_f32")
        message = "kernel add_f32 takes 4 arguments (ptr, ptr, ptr, u64), got 3"
        with pytest.raises(TypeError, match=re.escape(message)):
            kernel.launch(1, 256, None, 0x1000, 0x2000, 0x3000)


@pytest.mark.parametrize(
    "grid, block, error, message",
    [
        (0, 256, ValueError, "grid (0,) must be positive 32-bit sizes"),
        ((1, 2, 3, 4), 256, ValueError, "grid must have 1 to 3 dimensions, got (1, 2, 3, 4)"),
        (1, (2**32,), ValueError, "block (4294967296,) must be positive 32-bit sizes"),
        (1.0, 256, TypeError, "grid (1.0,) must be integers"),
    ],
)
def test_bad_launch_shapes_name_the_kernel(shipped, grid, block, error, message):
    with _fake() as fake:
        kernel = modules.get_function(0, "elementwise", "add_f32")
        with pytest.raises(error, match=re.escape(f"kernel add_f32: {message}")):
            kernel.launch(grid, block, None, 0x1000, 0x2000, 0x3000, 4)
        assert fake.launches == []


def test_a_launch_the_driver_refuses_raises_naming_the_kernel(shipped):
    with _fake() as fake:
        kernel = modules.get_function(0, "elementwise", "add_f32")
        fake.fail_next("cuLaunchKernel", CUDA_ERROR.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
        with pytest.raises(
            driver.CudaError, match="launching kernel add_f32 failed: CUDA_ERROR_LAUNCH_OUT_OF_RES"
        ):
            kernel.launch(1, 1024, None, 0x1000, 0x2000, 0x3000, 4)


@pytest.mark.parametrize(
    "kinds, message",
    [
        (["ptr", "half"], "kernel k: parameter 1 has unknown kind 'half'"),
        (["u8"] * 129, "kernel k: 129 parameters, more than the 128 supported"),
    ],
)
def test_signatures_reject_unknown_kinds_and_too_many_parameters(kinds, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Signature("k", kinds)


@pytest.mark.parametrize(
    "n, kwargs, blocks",
    [
        (0, {}, 1),
        (1, {}, 1),
        (256, {}, 1),
        (257, {}, 2),
        (1000, {"block": 128}, 8),
        (10**9, {}, 65535),
        (10**6, {"max_blocks": 4 * 132}, 528),
    ],
)
def test_grid_for_covers_n_with_at_most_max_blocks(n, kwargs, blocks):
    assert grid_for(n, **kwargs) == blocks


def test_grid_for_rejects_negative_sizes():
    with pytest.raises(ValueError, match="grid_for: n must be non-negative, got -1"):
        grid_for(-1)


# -- on a real GPU -------------------------------------------------------------------------------


def _to_device(array, stream, device_id=0):
    buffer = memory.allocate(array.nbytes, stream, device_id)
    api = driver.api()
    driver.check(api.cuMemcpyHtoDAsync(buffer.ptr, array, array.nbytes, stream.handle), "HtoD")
    return buffer


@pytest.mark.parametrize("op", list(ELEMENTWISE_OPS))
@pytest.mark.parametrize("type_name", list(ELEMENTWISE_TYPES))
def test_gpu_elementwise_kernels_match_numpy(op, type_name, any_gpu):
    dtype = ELEMENTWISE_TYPES[type_name]
    rng = np.random.default_rng(5)
    n = 1_000_003  # not a multiple of the block: the grid-stride loop's tail
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        a = rng.integers(info.min // 2, info.max // 2, n, dtype=dtype, endpoint=True)
        b = rng.integers(info.min // 2, info.max // 2, n, dtype=dtype, endpoint=True)
    else:
        a, b = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    stream = streams.create(0)
    device_a, device_b = _to_device(a, stream), _to_device(b, stream)
    device_out = memory.allocate(a.nbytes, stream, 0)
    kernel = modules.get_function(0, "elementwise", f"{op}_{type_name}")
    kernel.launch(grid_for(n, max_blocks=64), 256, stream.handle, device_a, device_b, device_out, n)
    out = np.empty_like(a)
    driver.check(driver.api().cuMemcpyDtoHAsync(out, device_out.ptr, out.nbytes, stream.handle), "DtoH")
    driver.check(driver.api().cuStreamSynchronize(stream.handle), "synchronize")
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, ELEMENTWISE_OPS[op](a, b))


def test_gpu_add_f32_with_int_addresses_and_a_single_block(any_gpu):
    n = 100
    a, b = np.arange(n, dtype=np.float32), np.full(n, 0.5, np.float32)
    stream = streams.create(0)
    device_a, device_b = _to_device(a, stream), _to_device(b, stream)
    device_out = memory.allocate(a.nbytes, stream, 0)
    kernel = modules.get_function(0, "elementwise", "add_f32")
    kernel.launch(1, 32, stream.handle, device_a.ptr, device_b.ptr, device_out.ptr, n)
    out = np.empty_like(a)
    driver.check(driver.api().cuMemcpyDtoHAsync(out, device_out.ptr, out.nbytes, stream.handle), "DtoH")
    driver.check(driver.api().cuStreamSynchronize(stream.handle), "synchronize")
    np.testing.assert_array_equal(out, a + b)
