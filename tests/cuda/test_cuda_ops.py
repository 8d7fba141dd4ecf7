"""GPU operators end to end: elementwise arithmetic (+, -, *, ndd.math.min/max),
comparisons (bool outputs), the integer &, |, ^ and ``ndd.cast``
(ndd/_ops/gpu_elementwise.py) through the run phase of
ndd/_prepare/invocation.pyx.

On the recording FakeDriver the kernels do not run, so these tests check what is
queued: the kernel of each op and type, its grid, block and stream, the argument
values (device addresses of the operands and the output, element counts, scalar
bits), one launch per batch, the outputs' metadata, the EvalMode semantics and
the pool's bookkeeping. The tests taking ``any_gpu`` compare every op and type with
its CPU twin twice: with the kernels built for the CPU (ndd/_cuda/host_kernels.py)
and on a real GPU.
"""

import gc
import pathlib
import struct
import threading

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import install_fake  # noqa: E402

import ndd  # noqa: E402
from ndd._cuda import kernel_files  # noqa: E402
from ndd._cuda.driver import CudaError  # noqa: E402
from ndd._cuda.fake import FakeDriver  # noqa: E402
from ndd._cuda.launch import grid_for  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUDA_ERROR = FakeDriver.CUresult
TYPES = {
    "u8": np.uint8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "f32": np.float32,
    "f64": np.float64,
}
# kernel name -> (the operator as a function of two operands, numpy twin)
OPS = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "minimum": (ndd.math.min, np.minimum),
    "maximum": (ndd.math.max, np.maximum),
}
STRUCT_FORMATS = {"u8": "B", "i16": "h", "i32": "i", "i64": "q", "f32": "f", "f64": "d"}
# kernel name -> (the comparison as a function of two operands, numpy twin)
COMPARISONS = {
    "eq": (lambda a, b: a == b, np.equal),
    "neq": (lambda a, b: a != b, np.not_equal),
    "lt": (lambda a, b: a < b, np.less),
    "leq": (lambda a, b: a <= b, np.less_equal),
    "gt": (lambda a, b: a > b, np.greater),
    "geq": (lambda a, b: a >= b, np.greater_equal),
}
# kernel name -> the bitwise operator (integer kernels only)
BITWISE = {"bitand": lambda a, b: a & b, "bitor": lambda a, b: a | b, "bitxor": lambda a, b: a ^ b}
INTEGER_TYPES = {name: dtype for name, dtype in TYPES.items() if np.dtype(dtype).kind in "iu"}


def _install(fake_driver, built, monkeypatch):
    # The fake loads the images of the kernels built for the test session.
    monkeypatch.setattr(kernel_files, "KERNELS_DIR", built)
    yield from install_fake(fake_driver)


@pytest.fixture
def fake(built, monkeypatch):
    yield from _install(FakeDriver(devices=2), built, monkeypatch)


class ThreadRecordingDriver(FakeDriver):
    """Records the thread of each launch and the device current there; a launch
    waits for ``release`` (set by default)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.launch_threads = []
        self.launch_devices = []
        self.release = threading.Event()
        self.release.set()

    def cuLaunchKernel(self, *args):
        self.release.wait(10)
        self.launch_threads.append(threading.current_thread())
        self.launch_devices.append(self._current_device())
        return super().cuLaunchKernel(*args)


@pytest.fixture
def recording(built, monkeypatch):
    yield from _install(ThreadRecordingDriver(devices=2), built, monkeypatch)


def _values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 100, shape).astype(dtype)
    return (rng.standard_normal(shape) * 100).astype(dtype)


def _stream(device_id=0):
    return int(ndd.EvalContext.current().cuda_stream.handle) if device_id == 0 else None


def _launches(fake, prefix=""):
    return [launch for launch in fake.launches if launch.function.startswith(prefix)]


def _bits(type_name, value):
    return int.from_bytes(struct.pack("<" + STRUCT_FORMATS[type_name], value), "little")


# -- elementwise arithmetic on tensors -----------------------------------------------


def _binary_launch(fake, op, kernel, type_name):
    """``op`` on two 40x30 GPU tensors of ``type_name``: the operands, the result, its one
    launch (checked to be ``kernel``'s) and the element count."""
    dtype = TYPES[type_name]
    a = ndd.tensor(_values(dtype, (40, 30)), layout="HW").gpu()
    b = ndd.tensor(_values(dtype, (40, 30), 1), layout="HW").gpu()
    with ndd.EvalMode.sync_cpu:
        out = op(a, b)
    (launch,) = fake.launches
    assert launch.function == f"{kernel}_{type_name}"
    return a, b, out, launch, 40 * 30


@pytest.mark.parametrize("type_name", TYPES)
@pytest.mark.parametrize("kernel", OPS)
def test_tensor_op_launches_its_kernel_on_the_operands_and_output(fake, kernel, type_name):
    a, b, out, launch, n = _binary_launch(fake, OPS[kernel][0], kernel, type_name)
    assert launch.grid == (grid_for(n), 1, 1) and grid_for(n) == 5
    assert launch.block == (256, 1, 1)
    assert launch.stream == _stream()
    assert launch.args == [a._data.ptr, b._data.ptr, out.evaluate()._data.ptr, n]
    assert (out.shape, out.dtype, out.layout, out.device) == ((40, 30), a.dtype, "HW", ndd.Device("gpu", 0))
    assert out.evaluate()._data.stream.handle == _stream()


@pytest.mark.parametrize("type_name", TYPES)
def test_a_host_scalar_is_passed_by_value_on_either_side(fake, type_name):
    dtype = TYPES[type_name]
    x = ndd.tensor(_values(dtype, (7,))).gpu()
    three = ndd.tensor(np.array(3, dtype))  # a host 0-D tensor of the same type
    with ndd.EvalMode.sync_cpu:
        right = x - three
        left = three - x
    first, second = fake.launches
    assert first.function == f"sub_scalar_rhs_{type_name}"
    assert first.args == [x._data.ptr, _bits(type_name, 3), right.evaluate()._data.ptr, 7]
    assert second.function == f"sub_scalar_lhs_{type_name}"
    assert second.args == [_bits(type_name, 3), x._data.ptr, left.evaluate()._data.ptr, 7]
    assert right.dtype == left.dtype == x.dtype


def test_a_python_int_promotes_small_types_as_on_the_cpu(fake):
    x = ndd.tensor(np.ones(5, np.uint8)).gpu()
    with ndd.EvalMode.sync_cpu:
        out = x + 1
    cast, add = fake.launches
    assert out.dtype == (ndd.tensor(np.ones(5, np.uint8)) + 1).dtype == ndd.int32
    assert cast.function == "cast_u8_to_i32" and add.function == "add_scalar_rhs_i32"
    assert add.args == [cast.args[1], 1, out.evaluate()._data.ptr, 5]


def test_a_float_scalar_is_converted_to_the_result_type(fake):
    x = ndd.tensor(np.ones(4, np.float64)).gpu()
    with ndd.EvalMode.sync_cpu:
        out = x * 0.1
    (launch,) = fake.launches
    assert launch.function == "mul_scalar_rhs_f64"
    # The constant 0.1 is float32 (as on the CPU), converted to float64 for the kernel.
    assert launch.args[1] == _bits("f64", float(np.float32(0.1)))
    assert out.dtype == ndd.float64


def test_operands_of_another_type_are_cast_on_the_gpu_first(fake):
    a = ndd.tensor(np.arange(6, dtype=np.uint8)).gpu()
    b = ndd.tensor(np.ones(6, np.float32)).gpu()
    with ndd.EvalMode.sync_cpu:
        out = a + b
    cast, add = fake.launches
    assert cast.function == "cast_u8_to_f32" and cast.args[0] == a._data.ptr and cast.args[2] == 6
    assert add.function == "add_f32" and add.args == [cast.args[1], b._data.ptr, out.evaluate()._data.ptr, 6]
    assert out.dtype == ndd.float32


def test_broadcasting_that_only_adds_unit_dimensions_is_flat(fake):
    a = ndd.tensor(np.ones((1, 5), np.int32)).gpu()
    b = ndd.tensor(np.ones((5,), np.int32)).gpu()
    with ndd.EvalMode.sync_cpu:
        out = a + b
    assert out.shape == (1, 5) and fake.launches[0].args[3] == 5


def test_inputs_are_ordered_before_the_context_stream_and_used_there(fake):
    a = ndd.tensor(np.ones(8, np.float32)).gpu()
    b = ndd.tensor(np.ones(8, np.float32)).gpu()
    producer = a._data.stream.handle
    other = ndd.stream(device_id=0)
    with ndd.EvalContext(device_id=0, cuda_stream=other), ndd.EvalMode.sync_cpu:
        out = a + b
    (launch,) = fake.launches
    assert launch.stream == other.handle
    assert any(
        entry[0] == "wait" and fake.events[entry[1]][0] == producer for entry in fake.streams[other.handle]
    )
    assert a._data.owner.stream is other and b._data.owner.stream is other
    assert out.evaluate()._data.stream is other


def test_inputs_on_another_gpu_run_there(recording):
    with ndd.Device("gpu", 1):
        a = ndd.tensor(np.ones(8, np.int16)).gpu()
        b = ndd.tensor(np.ones(8, np.int16)).gpu()
    with ndd.EvalMode.sync_cpu:
        out = a * b
    assert out.device == ndd.Device("gpu", 1)
    assert recording.launch_devices == [1]
    with ndd.Device("gpu", 1):
        assert recording.launches[0].stream == int(ndd.EvalContext.current().cuda_stream.handle)


def test_inputs_on_two_gpus_are_refused(fake):
    a = ndd.tensor(np.ones(3, np.float32)).gpu(0)
    b = ndd.tensor(np.ones(3, np.float32)).gpu(1)
    with pytest.raises(ValueError, match=r"operator \+: the inputs are on different GPUs"):
        a + b


# -- batches ----------------------------------------------------------------------


@pytest.mark.parametrize("type_name", TYPES)
@pytest.mark.parametrize("kernel", OPS)
def test_a_ragged_batch_is_one_launch_over_its_allocation(fake, kernel, type_name):
    op = OPS[kernel][0]
    dtype = TYPES[type_name]
    shapes = [(3, 5), (1, 2), (0, 4), (6, 6)]
    a = ndd.batch([_values(dtype, s, i) for i, s in enumerate(shapes)], layout="HW").gpu()
    b = ndd.batch([_values(dtype, s, i + 9) for i, s in enumerate(shapes)], layout="HW").gpu()
    with ndd.EvalMode.sync_cpu:
        out = op(a, b)
        out.evaluate()
    (launch,) = fake.launches
    itemsize = np.dtype(dtype).itemsize
    n = a._gpu.offsets[-1] // itemsize + 36
    assert launch.function == f"{kernel}_{type_name}"
    assert launch.args == [a._gpu.data.ptr, b._gpu.data.ptr, out._gpu.data.ptr, n]
    assert launch.grid == (grid_for(n), 1, 1) and launch.block == (256, 1, 1)
    assert launch.stream == _stream()
    assert out._gpu.offsets == a._gpu.offsets and out.shape == shapes
    assert (out.dtype, out.layout, out.device) == (a.dtype, "HW", ndd.Device("gpu", 0))


def test_a_dense_batch_and_a_scalar_is_one_launch(fake):
    a = ndd.batch([np.ones((2, 3), np.float32)] * 5).gpu()
    with ndd.EvalMode.sync_cpu:
        out = ndd.math.max(a, 0.5)
        out.evaluate()
    (launch,) = fake.launches
    assert launch.function == "maximum_scalar_rhs_f32"
    assert launch.args == [a._gpu.data.ptr, _bits("f32", 0.5), out._gpu.data.ptr, 30]
    assert out._gpu.dense and out.shape == [(2, 3)] * 5


def test_batches_laid_out_differently_get_one_launch_per_sample(fake):
    whole = ndd.batch([np.full(4, i, np.int32) for i in range(3)]).gpu()
    a = whole.select([2, 0, 1])  # the same allocation, other offsets
    b = ndd.batch([np.ones(4, np.int32)] * 3).gpu()
    with ndd.EvalMode.sync_cpu:
        out = a + b
        out.evaluate()
    assert [launch.function for launch in fake.launches] == ["add_i32"] * 3
    for i, launch in enumerate(fake.launches):
        assert launch.args == [
            a._gpu.data.ptr + a._gpu.offsets[i],
            b._gpu.data.ptr + b._gpu.offsets[i],
            out._gpu.data.ptr + out._gpu.offsets[i],
            4,
        ]


# -- cast -------------------------------------------------------------------------


@pytest.mark.parametrize("target", TYPES)
@pytest.mark.parametrize("source", TYPES)
def test_cast_launches_the_kernel_of_its_type_pair(fake, source, target):
    x = ndd.tensor(_values(TYPES[source], (9, 2)), layout="HW").gpu()
    with ndd.EvalMode.sync_cpu:
        out = ndd.cast(x, dtype=TYPES[target])
    (launch,) = fake.launches
    assert launch.function == f"cast_{source}_to_{target}"
    assert launch.args == [x._data.ptr, out.evaluate()._data.ptr, 18]
    assert launch.stream == _stream() and launch.block == (256, 1, 1)
    assert (out.shape, out.dtype.name, out.layout, out.device) == ((9, 2), target, "HW", ndd.Device("gpu", 0))


def test_cast_of_a_ragged_batch_is_one_launch_keeping_element_offsets(fake):
    shapes = [(3,), (300,), (2,)]
    x = ndd.batch([np.ones(s, np.uint8) for s in shapes]).gpu()
    with ndd.EvalMode.sync_cpu:
        out = ndd.cast(x, dtype=ndd.float64)
        out.evaluate()
    (launch,) = fake.launches
    n = x._gpu.offsets[-1] + 2
    assert launch.function == "cast_u8_to_f64" and launch.args == [x._gpu.data.ptr, out._gpu.data.ptr, n]
    assert out._gpu.offsets == [8 * o for o in x._gpu.offsets] and out.shape == shapes


# -- comparisons and bitwise operators --------------------------------------------------


@pytest.mark.parametrize("type_name", TYPES)
@pytest.mark.parametrize("kernel", COMPARISONS)
def test_comparison_launches_its_kernel_into_a_bool_output(fake, kernel, type_name):
    a, b, out, launch, n = _binary_launch(fake, COMPARISONS[kernel][0], kernel, type_name)
    assert launch.grid == (grid_for(n), 1, 1) and launch.block == (256, 1, 1)
    assert launch.stream == _stream()
    assert launch.args == [a._data.ptr, b._data.ptr, out.evaluate()._data.ptr, n]
    assert (out.shape, out.dtype, out.layout, out.device) == ((40, 30), ndd.bool, "HW", ndd.Device("gpu", 0))
    assert out.evaluate()._data.dtype == np.bool_ and out.evaluate()._data.nbytes == n


@pytest.mark.parametrize("type_name", INTEGER_TYPES)
@pytest.mark.parametrize("kernel", BITWISE)
def test_bitwise_op_launches_its_integer_kernel(fake, kernel, type_name):
    dtype = TYPES[type_name]
    a = ndd.tensor(_values(dtype, (9, 7))).gpu()
    b = ndd.tensor(_values(dtype, (9, 7), 1)).gpu()
    with ndd.EvalMode.sync_cpu:
        out = BITWISE[kernel](a, b)
    (launch,) = fake.launches
    assert launch.function == f"{kernel}_{type_name}"
    assert launch.args == [a._data.ptr, b._data.ptr, out.evaluate()._data.ptr, 63]
    assert (out.shape, out.dtype) == ((9, 7), a.dtype)


@pytest.mark.parametrize("type_name", TYPES)
def test_a_host_scalar_is_compared_by_value_on_either_side(fake, type_name):
    dtype = TYPES[type_name]
    x = ndd.tensor(_values(dtype, (7,))).gpu()
    three = ndd.tensor(np.array(3, dtype))
    with ndd.EvalMode.sync_cpu:
        right = x < three
        left = three < x
    first, second = fake.launches
    assert first.function == f"lt_scalar_rhs_{type_name}"
    assert first.args == [x._data.ptr, _bits(type_name, 3), right.evaluate()._data.ptr, 7]
    assert second.function == f"lt_scalar_lhs_{type_name}"
    assert second.args == [_bits(type_name, 3), x._data.ptr, left.evaluate()._data.ptr, 7]
    assert right.dtype == left.dtype == ndd.bool


@pytest.mark.parametrize("type_name", INTEGER_TYPES)
def test_a_host_scalar_is_a_bitwise_operand_on_either_side(fake, type_name):
    dtype = TYPES[type_name]
    x = ndd.tensor(_values(dtype, (5,))).gpu()
    mask = ndd.tensor(np.array(12, dtype))
    with ndd.EvalMode.sync_cpu:
        right = x ^ mask
        left = mask | x
    first, second = fake.launches
    assert first.function == f"bitxor_scalar_rhs_{type_name}"
    assert first.args == [x._data.ptr, 12, right.evaluate()._data.ptr, 5]
    assert second.function == f"bitor_scalar_lhs_{type_name}"
    assert second.args == [12, x._data.ptr, left.evaluate()._data.ptr, 5]


@pytest.mark.parametrize(
    "left, right, compare_in",
    [
        (np.uint8, np.int16, "i16"),
        (np.int16, np.float32, "f32"),
        # numpy compares int32 or int64 with float32 in float64, exactly where float32 could not.
        (np.int32, np.float32, "f64"),
        (np.int64, np.float32, "f64"),
        (np.uint8, np.int64, "i64"),
    ],
)
def test_comparison_operands_are_cast_to_the_type_numpy_compares_in(fake, left, right, compare_in):
    assert np.result_type(left, right) == TYPES[compare_in]
    a = ndd.tensor(np.ones(6, left)).gpu()
    b = ndd.tensor(np.ones(6, right)).gpu()
    with ndd.EvalMode.sync_cpu:
        out = a <= b
    *casts, compare = fake.launches
    assert compare.function == f"leq_{compare_in}"
    names = {np.dtype(dtype): name for name, dtype in TYPES.items()}
    converted = {cast.args[0]: cast for cast in casts}
    for position, operand in enumerate((a, b)):
        source = names[operand._data.dtype]
        if source == compare_in:
            assert compare.args[position] == operand._data.ptr
        else:
            cast = converted[operand._data.ptr]
            assert cast.function == f"cast_{source}_to_{compare_in}"
            assert compare.args[position] == cast.args[1]
    assert compare.args[2:] == [out.evaluate()._data.ptr, 6] and out.dtype == ndd.bool


def test_a_python_int_compares_with_small_types_exactly(fake):
    x = ndd.tensor(np.ones(5, np.uint8)).gpu()
    with ndd.EvalMode.sync_cpu:
        out = x < 300
    cast, compare = fake.launches
    # 300 is an int32 constant (as on the CPU): the uint8 operand is widened, not 300 wrapped.
    assert cast.function == "cast_u8_to_i32" and compare.function == "lt_scalar_rhs_i32"
    assert compare.args == [cast.args[1], 300, out.evaluate()._data.ptr, 5]


@pytest.mark.parametrize("type_name", TYPES)
def test_a_ragged_batch_comparison_is_one_launch_with_bool_element_offsets(fake, type_name):
    dtype = TYPES[type_name]
    shapes = [(3, 5), (1, 2), (0, 4), (6, 6)]
    a = ndd.batch([_values(dtype, s, i) for i, s in enumerate(shapes)], layout="HW").gpu()
    b = ndd.batch([_values(dtype, s, i + 9) for i, s in enumerate(shapes)], layout="HW").gpu()
    with ndd.EvalMode.sync_cpu:
        out = a != b
        out.evaluate()
    (launch,) = fake.launches
    itemsize = np.dtype(dtype).itemsize
    n = a._gpu.offsets[-1] // itemsize + 36
    assert launch.function == f"neq_{type_name}"
    assert launch.args == [a._gpu.data.ptr, b._gpu.data.ptr, out._gpu.data.ptr, n]
    # One byte per bool: the output offsets are the inputs' element offsets.
    assert out._gpu.offsets == [o // itemsize for o in a._gpu.offsets]
    assert out._gpu.data.nbytes == n and out.shape == shapes
    assert (out.dtype, out.layout, out.device) == (ndd.bool, "HW", ndd.Device("gpu", 0))


def test_batches_laid_out_differently_compare_one_launch_per_sample_into_bools(fake):
    whole = ndd.batch([np.full(4, i, np.float64) for i in range(3)]).gpu()
    a = whole.select([2, 0, 1])
    b = ndd.batch([np.ones(4, np.float64)] * 3).gpu()
    with ndd.EvalMode.sync_cpu:
        out = a > b
        out.evaluate()
    assert [launch.function for launch in fake.launches] == ["gt_f64"] * 3
    offsets = out._gpu.offsets
    assert out.dtype == ndd.bool and all(
        after - before >= 4 for before, after in zip(offsets[:-1], offsets[1:], strict=True)
    )
    for i, launch in enumerate(fake.launches):
        assert launch.args == [
            a._gpu.data.ptr + a._gpu.offsets[i],
            b._gpu.data.ptr + b._gpu.offsets[i],
            out._gpu.data.ptr + offsets[i],
            4,
        ]


def test_a_host_batch_compared_with_a_gpu_batch_is_refused_naming_the_op(fake):
    out = ndd.batch([np.ones(3, np.int32)]).gpu() < ndd.batch([np.ones(3, np.int32)])
    with pytest.raises(
        NotImplementedError, match=r"operator < on the GPU: a host operand .*can only be a scalar"
    ):
        out.evaluate()
    assert fake.launches == []


# -- what the GPU path lacks -----------------------------------------------------------


def test_a_host_array_operand_fails_where_used_naming_the_op(fake):
    out = ndd.tensor(np.ones(3, np.float32)).gpu() + ndd.tensor(np.ones(3, np.float32))
    with pytest.raises(NotImplementedError, match=r"operator \+ .*can only be a scalar.*lacks it"):
        out.evaluate()
    assert fake.launches == []


# -- EvalMode semantics --------------------------------------------------------------


def test_eager_mode_launches_from_the_worker_thread_without_blocking_the_caller(recording):
    a = ndd.tensor(np.ones(16, np.float32)).gpu()
    b = ndd.tensor(np.ones(16, np.float32)).gpu()
    recording.release.clear()  # the launch waits until the caller has its result
    with ndd.EvalMode.eager:
        out = a + b
        returned = True
    assert returned and recording.launches == []
    recording.release.set()
    out.evaluate()
    worker = ndd.EvalContext.current().executor.thread
    assert recording.launch_threads == [worker] and worker is not threading.current_thread()
    assert recording.launch_devices == [0]  # the device was made current on the worker
    assert recording.launches[0].stream == _stream()


def test_sync_full_synchronises_the_stream_after_the_launch(fake):
    a = ndd.tensor(np.ones(16, np.int64)).gpu()
    with ndd.EvalMode.sync_full:
        a + a
    kinds = [entry[0] for entry in fake.streams[_stream()]]
    assert "synchronize" in kinds[kinds.index("launch") :]


def test_sync_cpu_does_not_synchronise(fake):
    a = ndd.tensor(np.ones(16, np.int64)).gpu()
    before = fake.calls.count("cuStreamSynchronize")
    with ndd.EvalMode.sync_cpu:
        a + a
    assert fake.calls.count("cuStreamSynchronize") == before


def test_a_failed_launch_surfaces_where_the_result_is_used(fake):
    a = ndd.tensor(np.ones(16, np.float32)).gpu()
    fake.fail_next("cuLaunchKernel", CUDA_ERROR.CUDA_ERROR_LAUNCH_FAILED)
    with ndd.EvalMode.eager:
        out = ndd.math.min(a, a)  # returns: the launch happens on the worker
    with pytest.raises(CudaError, match=r"ndd\.math\.min.*launching kernel minimum_f32.*LAUNCH_FAILED"):
        out.cpu()


def test_a_failed_launch_in_sync_mode_raises_at_the_call(fake):
    a = ndd.tensor(np.ones(16, np.float32)).gpu()
    fake.fail_next("cuLaunchKernel", CUDA_ERROR.CUDA_ERROR_LAUNCH_FAILED)
    with (
        ndd.EvalMode.sync_cpu,
        pytest.raises(CudaError, match=r"ndd\.cast: launching kernel cast_f32_to_i32"),
    ):
        ndd.cast(a, dtype=ndd.int32)


# -- memory --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [ndd.EvalMode.sync_cpu, ndd.EvalMode.eager], ids=["sync_cpu", "eager"])
def test_ten_thousand_small_ops_return_the_pool_to_its_starting_level(fake, mode):
    a = ndd.tensor(np.ones(4, np.float32)).gpu()
    b = ndd.batch([np.ones(3, np.int32), np.ones(5, np.int32)]).gpu()
    start = fake.pools[0].used
    with mode:
        for _ in range(5000):
            x = a + a
            y = ndd.cast(b, dtype=ndd.float32) * 2.0
        x.evaluate()
        y.evaluate()
        # The worker drops a task just after marking it done: one more (host) task
        # makes sure it has dropped the last GPU one before the count.
        (ndd.tensor(1) + 1).evaluate()
    assert len(fake.launches) == 15000
    del x, y
    gc.collect()
    assert fake.pools[0].used == start
    # Freed memory is reused: the pool never held more than a few iterations' worth.
    assert fake.pools[0].reserved_high - start < 64 * 1024


# -- on a GPU: values against the CPU twins ----------------------------------------------


def _gpu_values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values = (rng.standard_normal(shape) * 1000).astype(dtype)
    values.flat[:3] = [np.nan, np.inf, -np.inf][: values.size]
    return values


def _assert_same(gpu_result, cpu_result):
    assert gpu_result.dtype == cpu_result.dtype
    np.testing.assert_array_equal(np.asarray(gpu_result.cpu()), np.asarray(cpu_result))


def _assert_ragged_batches_same(op, dtype):
    """``op`` on two ragged GPU batches of ``dtype`` (an empty sample among them) gives
    what it gives on the CPU, sample by sample."""
    shapes = [(5, 7), (0, 3), (30, 10), (1, 1)]
    xs = [_gpu_values(dtype, s, 3 + i) for i, s in enumerate(shapes)]
    ys = [_gpu_values(dtype, s, 9 + i) for i, s in enumerate(shapes)]
    gpu = op(ndd.batch(xs).gpu(), ndd.batch(ys).gpu())
    cpu = op(ndd.batch(xs), ndd.batch(ys))
    for g, c in zip(gpu.cpu(), cpu, strict=True):
        _assert_same(g, c)


@pytest.mark.parametrize("type_name", TYPES)
@pytest.mark.parametrize("kernel", OPS)
def test_gpu_ops_match_the_cpu(kernel, type_name, any_gpu):
    op = OPS[kernel][0]
    dtype = TYPES[type_name]
    a, b = _gpu_values(dtype, (33, 65), 1), _gpu_values(dtype, (33, 65), 2)
    with np.errstate(all="ignore"):
        _assert_same(op(ndd.tensor(a).gpu(), ndd.tensor(b).gpu()), op(ndd.tensor(a), ndd.tensor(b)))
        _assert_same(op(ndd.tensor(a).gpu(), 7), op(ndd.tensor(a), 7))
        _assert_same(op(7, ndd.tensor(b).gpu()), op(7, ndd.tensor(b)))
        _assert_ragged_batches_same(op, dtype)


def test_gpu_promotion_matches_the_cpu(any_gpu):
    a, b = _gpu_values(np.uint8, (100,), 1), _gpu_values(np.float32, (100,), 2)
    _assert_same(ndd.tensor(a).gpu() * ndd.tensor(b).gpu(), ndd.tensor(a) * ndd.tensor(b))


@pytest.mark.parametrize("target", TYPES)
@pytest.mark.parametrize("source", TYPES)
def test_gpu_cast_matches_the_cpu(source, target, any_gpu):
    values = _gpu_values(TYPES[source], (1000,), 5)
    if values.dtype.kind == "f":
        edges = [0.5, -0.5, 1.5, 2.5, -2.5, 254.5, 255.5, -0.4, 2**31 - 1, 2**31, -(2**31) - 1, 1e300, -1e300]
        values[3 : 3 + len(edges)] = np.array(edges).astype(values.dtype)
    _assert_same(
        ndd.cast(ndd.tensor(values).gpu(), dtype=TYPES[target]),
        ndd.cast(ndd.tensor(values), dtype=TYPES[target]),
    )
    batch = [values[:10], values[10:500], values[500:]]
    gpu = ndd.cast(ndd.batch(batch).gpu(), dtype=TYPES[target])
    cpu = ndd.cast(ndd.batch(batch), dtype=TYPES[target])
    for g, c in zip(gpu.cpu(), cpu, strict=True):
        _assert_same(g, c)


@pytest.mark.parametrize("type_name", TYPES)
@pytest.mark.parametrize("kernel", COMPARISONS)
def test_gpu_comparisons_match_the_cpu(kernel, type_name, any_gpu):
    op = COMPARISONS[kernel][0]
    dtype = TYPES[type_name]
    a, b = _gpu_values(dtype, (33, 65), 1), _gpu_values(dtype, (33, 65), 2)
    b[::3] = a[::3]  # equal pairs too, NaN among them
    _assert_same(op(ndd.tensor(a).gpu(), ndd.tensor(b).gpu()), op(ndd.tensor(a), ndd.tensor(b)))
    _assert_same(op(ndd.tensor(a).gpu(), 7), op(ndd.tensor(a), 7))
    _assert_same(op(ndd.tensor(a).gpu(), 0.5), op(ndd.tensor(a), 0.5))
    _assert_same(op(ndd.tensor(a[0, 0]), ndd.tensor(b).gpu()), op(ndd.tensor(a[0, 0]), ndd.tensor(b)))
    _assert_ragged_batches_same(op, dtype)


@pytest.mark.parametrize(
    "left, right",
    [(np.uint8, np.int16), (np.int32, np.float32), (np.int64, np.float64), (np.int64, np.float32)],
)
@pytest.mark.parametrize("kernel", COMPARISONS)
def test_gpu_mixed_type_comparisons_match_the_cpu(kernel, left, right, any_gpu):
    op = COMPARISONS[kernel][0]
    a = _gpu_values(left, (500,), 1)
    b = _gpu_values(right, (500,), 2)
    # Values where comparing in float32 would be wrong: 2**24 + 1 against 2**24.
    if np.dtype(left).itemsize >= 4:
        a[:2] = [2**24 + 1, 2**62 + 1 if np.dtype(left).itemsize == 8 else 2**30 + 1]
        b[:2] = [2**24, 2**62 if np.dtype(left).itemsize == 8 else 2**30]
    _assert_same(op(ndd.tensor(a).gpu(), ndd.tensor(b).gpu()), op(ndd.tensor(a), ndd.tensor(b)))


@pytest.mark.parametrize("type_name", INTEGER_TYPES)
@pytest.mark.parametrize("kernel", BITWISE)
def test_gpu_bitwise_ops_match_the_cpu(kernel, type_name, any_gpu):
    op = BITWISE[kernel]
    dtype = TYPES[type_name]
    a, b = _gpu_values(dtype, (33, 65), 1), _gpu_values(dtype, (33, 65), 2)
    _assert_same(op(ndd.tensor(a).gpu(), ndd.tensor(b).gpu()), op(ndd.tensor(a), ndd.tensor(b)))
    mask = ndd.tensor(np.array(0x5A, dtype))
    _assert_same(op(ndd.tensor(a).gpu(), mask), op(ndd.tensor(a), mask))
    _assert_same(op(mask, ndd.tensor(b).gpu()), op(mask, ndd.tensor(b)))
    _assert_ragged_batches_same(op, dtype)
