"""GPU creation and lookup operators (ndd/_ops/gpu_indexing.py, kernels/indexing.cu):
``full``, ``full_like``, ``zeros``, ``ones``, ``zeros_like``, ``ones_like``,
``one_hot``, ``lookup_table`` and ``element_extract``.

The tests taking ``any_gpu`` run each operator on the GPU and on the CPU and
require the same dtype, layout, shapes and values, exactly: with the kernels built
for the CPU (ndd/_cuda/host_kernels.py) and on a real GPU. The tests taking
``fake`` (kernels not run) check what a call queues: one launch per batch.
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import install_fake  # noqa: E402

import ndd  # noqa: E402
from ndd._cuda import kernel_files  # noqa: E402
from ndd._cuda.fake import FakeDriver  # noqa: E402

# Every element type the CPU operators create.
ALL_TYPES = {
    "bool": ndd.bool,
    "u8": ndd.uint8,
    "u16": ndd.uint16,
    "u32": ndd.uint32,
    "u64": ndd.uint64,
    "i8": ndd.int8,
    "i16": ndd.int16,
    "i32": ndd.int32,
    "i64": ndd.int64,
    "f16": ndd.float16,
    "f32": ndd.float32,
    "f64": ndd.float64,
}
NUMERIC_TYPES = {name: t for name, t in ALL_TYPES.items() if name != "bool"}
INTEGER_TYPES = {name: t for name, t in NUMERIC_TYPES.items() if name[0] in "ui"}
RAGGED_SHAPES = [(3, 4), (0, 4), (5, 1), (1, 1), (2, 7)]


@pytest.fixture
def fake(built, monkeypatch):
    """A FakeDriver recording launches (not running them) of the session's kernel build."""
    monkeypatch.setattr(kernel_files, "KERNELS_DIR", built)
    yield from install_fake(FakeDriver(devices=1))


def _numpy(dtype):
    return np.dtype(dtype.numpy)


def _values(dtype, shape, seed):
    """Values spread over the range of numpy ``dtype`` (NaN and infinities among floats)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values = (rng.standard_normal(shape) * 100).astype(dtype)
    values.flat[:3] = [np.nan, np.inf, -np.inf][: values.size]
    return values


def _labels(dtype, shape, seed, num_classes=5):
    """Labels around [0, num_classes): in range, negative, too large; fractions,
    NaN and infinities for floats."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    low = 0 if dtype.kind == "u" else -3
    labels = rng.integers(low, num_classes + 3, shape)
    if dtype.kind == "f":
        labels = labels + rng.choice([0.0, 0.25, 0.75, -0.5], shape)
        labels.flat[:4] = [np.nan, np.inf, -np.inf, -0.9][: labels.size]
    labels = labels.astype(dtype)
    if dtype.kind in "iu" and labels.size:
        labels.flat[0] = np.iinfo(dtype).max
    return labels


def _samples(result):
    """The samples of a Batch, or ``[result]`` for a Tensor, as host Tensors."""
    if isinstance(result, ndd.Batch):
        return list(result.cpu())
    return [result.cpu()]


def _assert_same(gpu, cpu):
    """GPU result(s) equal to CPU result(s): dtype, layout, device, shapes and values."""
    if isinstance(cpu, tuple):
        assert isinstance(gpu, tuple) and len(gpu) == len(cpu)
        for g, c in zip(gpu, cpu, strict=True):
            _assert_same(g, c)
        return
    assert gpu.device.device_type == "gpu"
    assert type(gpu) is type(cpu)
    assert gpu.dtype == cpu.dtype
    assert gpu.layout == cpu.layout
    gpu_samples, cpu_samples = _samples(gpu), _samples(cpu)
    assert len(gpu_samples) == len(cpu_samples)
    for g, c in zip(gpu_samples, cpu_samples, strict=True):
        g, c = np.asarray(g), np.asarray(c)
        assert g.shape == c.shape
        assert g.dtype == c.dtype
        np.testing.assert_array_equal(g, c)


def _gpu(x):
    return x.gpu() if isinstance(x, (ndd.Tensor, ndd.Batch)) else x


def _evaluate(result):
    for r in result if isinstance(result, tuple) else (result,):
        _samples(r)


def _assert_same_error(call, cpu_args, gpu_args):
    """``call`` raises the same error (type and message) on the GPU as on the CPU."""
    with pytest.raises(Exception) as on_cpu:  # noqa: PT011 - the CPU tells which one
        _evaluate(call(*cpu_args))
    with pytest.raises(type(on_cpu.value)) as on_gpu:
        _evaluate(call(*gpu_args))
    assert str(on_gpu.value) == str(on_cpu.value)


def _shape_batch(shapes):
    return ndd.batch([np.array(s, np.int64) for s in shapes])


# -- zeros, ones and their _like variants --------------------------------------------


@pytest.mark.parametrize("type_name", ALL_TYPES)
@pytest.mark.parametrize("op", [ndd.zeros, ndd.ones])
def test_zeros_and_ones_match_the_cpu(op, type_name, any_gpu):
    dtype = ALL_TYPES[type_name]
    for shape in [(), (0,), (3, 5), (2, 3, 4)]:
        _assert_same(op(shape=shape, dtype=dtype, device="gpu"), op(shape=shape, dtype=dtype))
    _assert_same(
        op(shape=(2, 3), dtype=dtype, layout="HW", batch_size=3, device="gpu"),
        op(shape=(2, 3), dtype=dtype, layout="HW", batch_size=3),
    )
    per_sample = [(2, 3), (0, 5), (4, 1)]
    _assert_same(
        op(shape=_shape_batch(per_sample), dtype=dtype, device="gpu"),
        op(shape=_shape_batch(per_sample), dtype=dtype),
    )


@pytest.mark.parametrize("type_name", ALL_TYPES)
@pytest.mark.parametrize("op", [ndd.zeros_like, ndd.ones_like])
def test_zeros_and_ones_like_match_the_cpu(op, type_name, any_gpu):
    dtype = _numpy(ALL_TYPES[type_name])
    like = ndd.tensor(_values(dtype, (3, 4), 1), layout="HW")
    batch = ndd.batch([_values(dtype, s, 2 + i) for i, s in enumerate(RAGGED_SHAPES)], layout="HW")
    for x in (like, batch):
        expected = op(x)
        _assert_same(op(x.gpu()), expected)
        # From an input on the host: only its shape and dtype are read.
        _assert_same(op(x, device="gpu"), expected)
        _assert_same(op(x.gpu(), dtype=ndd.float16), op(x, dtype=ndd.float16))


def test_zeros_clear_the_memory_without_a_kernel(fake):
    ndd.zeros(shape=(64, 3), dtype=ndd.float32, batch_size=4, device="gpu").evaluate()
    assert not fake.launches
    memsets = [e for entries in fake.streams.values() for e in entries if e[0] == "memset"]
    assert len(memsets) == 1
    assert memsets[0][2] == 4 * 64 * 3 * 4


def test_ones_of_a_ragged_batch_are_one_launch(fake):
    ndd.ones(shape=_shape_batch([(2, 3), (5, 1), (7, 7)]), dtype=ndd.int16, device="gpu").evaluate()
    assert [launch.function for launch in fake.launches] == ["fill_u16"]
    assert fake.launches[0].args[1] == 1


# -- full, full_like ---------------------------------------------------------------------


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_full_matches_the_cpu(type_name, any_gpu):
    dtype = _numpy(ALL_TYPES[type_name])
    scalar = _values(dtype, (), 1)
    row = _values(dtype, (4,), 2)
    column = _values(dtype, (3, 1), 3)
    for fill, shape in [(scalar, ()), (scalar, (3, 4)), (row, (3, 4)), (column, (3, 4)), (row, (2, 0, 4))]:
        expected = ndd.full(fill, shape=shape, layout="HWC"[: len(shape)] or None)
        _assert_same(ndd.full(fill, shape=shape, layout="HWC"[: len(shape)] or None, device="gpu"), expected)
        # A fill value on the GPU is read there.
        _assert_same(
            ndd.full(ndd.tensor(fill).gpu(), shape=shape, layout="HWC"[: len(shape)] or None), expected
        )


@pytest.mark.parametrize("type_name", ["bool", "u8", "i64", "f16", "f64"])
def test_full_of_a_batch_matches_the_cpu(type_name, any_gpu):
    dtype = _numpy(ALL_TYPES[type_name])
    shapes = _shape_batch([(2, 3), (0, 3), (4, 3)])
    rows = ndd.batch([_values(dtype, (3,), 10 + i) for i in range(3)])
    scalars = ndd.batch([_values(dtype, (), 20 + i) for i in range(3)])
    one_row = ndd.tensor(_values(dtype, (3,), 30))
    for fill in (rows, scalars, one_row):
        expected = ndd.full(fill, shape=shapes)
        _assert_same(ndd.full(fill, shape=shapes, device="gpu"), expected)
        _assert_same(ndd.full(fill.gpu(), shape=shapes), expected)
    _assert_same(
        ndd.full(one_row.gpu(), shape=(5, 3), batch_size=2), ndd.full(one_row, shape=(5, 3), batch_size=2)
    )


@pytest.mark.parametrize("like_type", ["bool", "u8", "i16", "u32", "i64", "f16", "f32", "f64"])
def test_full_like_converts_the_fill_as_the_cpu(like_type, any_gpu):
    like_dtype = _numpy(ALL_TYPES[like_type])
    like = ndd.tensor(_values(like_dtype, (3, 4), 1), layout="HW")
    batch = ndd.batch([_values(like_dtype, s, 2 + i) for i, s in enumerate(RAGGED_SHAPES)], layout="HW")
    fills = [
        np.float64(-2.5),
        np.array([0.5, 300.7, -1e10, np.nan], np.float32),
        np.array([[7], [-9], [1]], np.int64)[:1],
        np.array(True),
    ]
    for x in (like, batch):
        for fill in fills:
            if fill.shape == (4,) and x is batch:
                fill = fill[:1]
            expected = ndd.full_like(x, fill)
            _assert_same(ndd.full_like(x.gpu(), fill), expected)
            _assert_same(ndd.full_like(x, fill, device="gpu"), expected)


@pytest.mark.parametrize("fill_type", ALL_TYPES)
def test_full_like_converts_a_gpu_fill_as_the_cpu(fill_type, any_gpu):
    fill = _values(_numpy(ALL_TYPES[fill_type]), (4,), 5)
    for like_type in ALL_TYPES:
        like = ndd.tensor(_values(_numpy(ALL_TYPES[like_type]), (3, 4), 1))
        expected = ndd.full_like(like, fill)
        with np.errstate(all="ignore"):
            _assert_same(ndd.full_like(like.gpu(), ndd.tensor(fill).gpu()), expected)
    batch = ndd.batch([_values(np.float32, (2, 4), 7), _values(np.float32, (1, 4), 8)])
    fills = ndd.batch([fill, fill[::-1].copy()])
    _assert_same(ndd.full_like(batch.gpu(), fills.gpu()), ndd.full_like(batch, fills))


def test_full_of_a_ragged_batch_is_one_launch(fake):
    fills = ndd.batch([np.arange(3, dtype=np.float32), np.ones(3, np.float32), np.zeros(3, np.float32)])
    ndd.full(fills, shape=_shape_batch([(2, 3), (5, 3), (1, 3)]), device="gpu").evaluate()
    assert [launch.function for launch in fake.launches] == ["broadcast_u32"]
    assert fake.launches[0].grid[1] == 3


def test_full_refuses_what_the_cpu_refuses(any_gpu):
    row = np.arange(3, dtype=np.int32)
    _assert_same_error(lambda d: ndd.full(row, shape=(2, 4), device=d), ("cpu",), ("gpu",))
    _assert_same_error(lambda d: ndd.full(row, shape=(2, -3), device=d), ("cpu",), ("gpu",))
    _assert_same_error(lambda d: ndd.full(row, shape=(2, 3), layout="HWC", device=d), ("cpu",), ("gpu",))
    _assert_same_error(lambda d: ndd.zeros(shape=_shape_batch([(2, 3), (4,)]), device=d), ("cpu",), ("gpu",))
    like = ndd.tensor(np.zeros((2, 2), np.int32))
    _assert_same_error(lambda x: ndd.full_like(x, row), (like,), (like.gpu(),))


# -- one_hot ---------------------------------------------------------------------------


@pytest.mark.parametrize("label_type", NUMERIC_TYPES)
def test_one_hot_reads_every_label_type_as_the_cpu(label_type, any_gpu):
    dtype = _numpy(NUMERIC_TYPES[label_type])
    labels = ndd.tensor(_labels(dtype, (4, 6), 1))
    for axis in (-1, 0, 1, 2):
        _assert_same(
            ndd.one_hot(labels.gpu(), num_classes=5, axis=axis), ndd.one_hot(labels, num_classes=5, axis=axis)
        )
    batch = ndd.batch([_labels(dtype, s, 2 + i) for i, s in enumerate(RAGGED_SHAPES)])
    _assert_same(ndd.one_hot(batch.gpu(), num_classes=5, axis=1), ndd.one_hot(batch, num_classes=5, axis=1))


@pytest.mark.parametrize("out_type", NUMERIC_TYPES)
def test_one_hot_converts_on_and_off_values_as_the_cpu(out_type, any_gpu):
    dtype = NUMERIC_TYPES[out_type]
    labels = ndd.tensor(_labels(np.int32, (7,), 1))
    for on, off in [(1.0, 0.0), (-2.7, 300.5), (1e10, -1e10), (0.1, float("nan"))]:
        kwargs = dict(num_classes=6, dtype=dtype, on_value=on, off_value=off)
        _assert_same(ndd.one_hot(labels.gpu(), **kwargs), ndd.one_hot(labels, **kwargs))


def test_one_hot_of_scalar_labels_matches_the_cpu(any_gpu):
    scalars = ndd.batch([np.int64(2), np.int64(7), np.int64(0)])
    singles = ndd.batch([np.array([[1]]), np.array([[3]])])
    mixed = ndd.batch([np.array([1]), np.array([2, 0])])
    for batch in (scalars, singles, mixed):
        for axis in (-1, 0):
            kwargs = dict(num_classes=4, axis=axis)
            _assert_same(ndd.one_hot(batch.gpu(), **kwargs), ndd.one_hot(batch, **kwargs))
    for label in (np.int32(3), np.array([1], np.uint8), np.array([[2.5]], np.float32)):
        _assert_same(
            ndd.one_hot(ndd.tensor(label).gpu(), num_classes=4), ndd.one_hot(ndd.tensor(label), num_classes=4)
        )


def test_one_hot_names_the_new_axis_as_the_cpu(any_gpu):
    labels = ndd.tensor(_labels(np.int16, (3, 5), 1), layout="HW")
    for axis in (-1, 0, 1, 2):
        kwargs = dict(num_classes=5, axis=axis, axis_name="C")
        _assert_same(ndd.one_hot(labels.gpu(), **kwargs), ndd.one_hot(labels, **kwargs))
    batch = ndd.batch([np.array([3]), np.array([0])], layout="W")
    _assert_same(
        ndd.one_hot(batch.gpu(), num_classes=5, axis_name="C"),
        ndd.one_hot(batch, num_classes=5, axis_name="C"),
    )


def test_one_hot_of_edge_sizes_matches_the_cpu(any_gpu):
    labels = ndd.tensor(_labels(np.int32, (3, 2), 1))
    _assert_same(ndd.one_hot(labels.gpu(), num_classes=0), ndd.one_hot(labels, num_classes=0))
    empty = ndd.tensor(np.zeros((0, 3), np.int32))
    _assert_same(ndd.one_hot(empty.gpu(), num_classes=3, axis=1), ndd.one_hot(empty, num_classes=3, axis=1))
    # Float labels at the edge of num_classes compare in the labels' type, as numpy.
    halves = ndd.tensor(np.array([2047, 2048, 2049, 2050, 2051], np.float16))
    _assert_same(ndd.one_hot(halves.gpu(), num_classes=2049), ndd.one_hot(halves, num_classes=2049))
    # Beyond the float16 range num_classes compares as infinity.
    large = ndd.tensor(np.array([65504, 60000, 3, -1], np.float16))
    with np.errstate(over="ignore"):
        _assert_same(ndd.one_hot(large.gpu(), num_classes=70000), ndd.one_hot(large, num_classes=70000))


def test_one_hot_of_a_ragged_batch_is_one_launch(fake):
    batch = ndd.batch([np.zeros(s, np.int32) for s in RAGGED_SHAPES]).gpu()
    fake.launches.clear()
    ndd.one_hot(batch, num_classes=3, dtype=ndd.float16).evaluate()
    assert [launch.function for launch in fake.launches] == ["one_hot_i32_u16"]
    assert fake.launches[0].grid[1] == len(RAGGED_SHAPES)
    on, off = fake.launches[0].args[3:5]
    assert (on, off) == (0x3C00, 0)  # float16 1.0 and 0.0


def test_one_hot_refuses_what_the_cpu_refuses(any_gpu):
    labels = ndd.tensor(np.array([[1, 2]], np.int32), layout="HW")
    call = ndd.one_hot
    for kwargs in [
        dict(num_classes=3, axis=3),
        dict(num_classes=3, axis=-2),
        dict(num_classes=-1),
        dict(num_classes=3, axis_name="CD"),
        dict(num_classes=3, dtype=ndd.bool),
        dict(num_classes=ndd.batch([np.int32(3)])),
    ]:
        _assert_same_error(lambda x, k=kwargs: call(x, **k), (labels,), (labels.gpu(),))
    batch = ndd.batch([np.array([1, 2]), np.array([1])])
    _assert_same_error(lambda x: call(x, num_classes=3, axis=2), (batch,), (batch.gpu(),))


def test_one_hot_refuses_labels_in_host_memory(any_gpu):
    with pytest.raises(NotImplementedError, match=r"ndd\.one_hot on the GPU: an input in host memory"):
        ndd.one_hot(ndd.tensor([1, 2]), num_classes=3, device="gpu")


# -- lookup_table ------------------------------------------------------------------------


@pytest.mark.parametrize("key_type", INTEGER_TYPES)
def test_lookup_table_reads_every_key_type_as_the_cpu(key_type, any_gpu):
    dtype = _numpy(INTEGER_TYPES[key_type])
    keys = ndd.tensor(_labels(dtype, (5, 7), 1, num_classes=12))
    table = dict(keys=[0, 3, 5, 11, 3], values=[1.5, -2.0, 7.25, 100.0, 9.0], default_value=-1.0)
    _assert_same(ndd.lookup_table(keys.gpu(), **table), ndd.lookup_table(keys, **table))
    batch = ndd.batch([_labels(dtype, s, 2 + i, num_classes=12) for i, s in enumerate(RAGGED_SHAPES)])
    _assert_same(ndd.lookup_table(batch.gpu(), **table), ndd.lookup_table(batch, **table))


@pytest.mark.parametrize("out_type", ALL_TYPES)
def test_lookup_table_converts_values_as_the_cpu(out_type, any_gpu):
    dtype = ALL_TYPES[out_type]
    keys = ndd.tensor(np.arange(-2, 10, dtype=np.int32).reshape(3, 4), layout="HW")
    table = dict(keys=[0, 1, 2, 3, 4, 7], values=[0.5, -0.5, 2.5, 300.0, -1e20, 65504.7], default_value=-3.5)
    with np.errstate(all="ignore"):
        _assert_same(
            ndd.lookup_table(keys.gpu(), dtype=dtype, **table), ndd.lookup_table(keys, dtype=dtype, **table)
        )


def test_lookup_table_edge_tables_match_the_cpu(any_gpu):
    keys = ndd.tensor(np.array([0, 1, 65535, 65536, -1], np.int64))
    for table in [dict(), dict(keys=[65535], values=[4.0], default_value=2.0), dict(keys=[1], values=[3.0])]:
        _assert_same(ndd.lookup_table(keys.gpu(), **table), ndd.lookup_table(keys, **table))
    scalar = ndd.tensor(np.uint8(3))
    table = dict(keys=[3], values=[8.0])
    _assert_same(ndd.lookup_table(scalar.gpu(), **table), ndd.lookup_table(scalar, **table))
    with pytest.warns(DeprecationWarning):
        gpu = ndd.lookup_table(keys.gpu(), keys=[1], values=[2.0], output_dtype=ndd.int8)
    with pytest.warns(DeprecationWarning):
        cpu = ndd.lookup_table(keys, keys=[1], values=[2.0], output_dtype=ndd.int8)
    _assert_same(gpu, cpu)


def test_lookup_table_of_a_ragged_batch_is_one_launch(fake):
    batch = ndd.batch([np.zeros(s, np.uint16) for s in RAGGED_SHAPES]).gpu()
    fake.launches.clear()
    ndd.lookup_table(batch, keys=[1, 2], values=[3.0, 4.0], dtype=ndd.float64).evaluate()
    assert [launch.function for launch in fake.launches] == ["lookup_u16_u64"]
    assert fake.launches[0].grid[1] == len(RAGGED_SHAPES)
    assert fake.launches[0].args[4] == 3  # the default's index: after keys 0, 1, 2


def test_lookup_table_refuses_what_the_cpu_refuses(any_gpu):
    keys = ndd.tensor(np.array([1, 2], np.int32))
    for kwargs in [
        dict(keys=[1, 2], values=[1.0]),
        dict(keys=[70000], values=[1.0]),
        dict(keys=[-1], values=[1.0]),
        dict(keys=[1], values=[1.0], dtype=ndd.int8, output_dtype=ndd.int16),
    ]:
        _assert_same_error(lambda x, k=kwargs: ndd.lookup_table(x, **k), (keys,), (keys.gpu(),))
    floats = ndd.tensor(np.array([1.0], np.float32))
    _assert_same_error(lambda x: ndd.lookup_table(x), (floats,), (floats.gpu(),))


# -- element_extract --------------------------------------------------------------------


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_element_extract_matches_the_cpu(type_name, any_gpu):
    dtype = _numpy(ALL_TYPES[type_name])
    sequence = ndd.tensor(_values(dtype, (4, 3, 5), 1), layout="FHW")
    for element_map in ([0], [3, 1], [2, 2, 0]):
        _assert_same(
            ndd.element_extract(sequence.gpu(), element_map=element_map),
            ndd.element_extract(sequence, element_map=element_map),
        )
    shapes = [(3, 2, 5), (2, 0, 5), (5, 1, 1), (2, 3, 3)]
    batch = ndd.batch([_values(dtype, s, 2 + i) for i, s in enumerate(shapes)], layout="FHW")
    _assert_same(
        ndd.element_extract(batch.gpu(), element_map=[1, 0]), ndd.element_extract(batch, element_map=[1, 0])
    )
    uniform = ndd.batch([_values(dtype, (3, 2, 2), 9 + i) for i in range(3)])
    _assert_same(
        ndd.element_extract(uniform.gpu(), element_map=2), ndd.element_extract(uniform, element_map=2)
    )


def test_element_extract_of_a_ragged_batch_is_one_launch(fake):
    batch = ndd.batch([np.zeros(s, np.float32) for s in [(3, 2, 5), (2, 4, 5), (5, 1, 1)]]).gpu()
    fake.launches.clear()
    first, second = ndd.element_extract(batch, element_map=[1, 0])
    first.evaluate()
    second.evaluate()
    # One segment per output and sample, copied 4 bytes at a time (the 1x1 frames).
    assert [launch.function for launch in fake.launches] == ["copy_u32"]
    assert fake.launches[0].grid[1] == 6


def test_element_extract_refuses_what_the_cpu_refuses(any_gpu):
    sequence = ndd.tensor(np.zeros((3, 2), np.uint8), layout="FW")
    for kwargs in [dict(element_map=[3]), dict(element_map=[-1]), dict(element_map=[])]:
        _assert_same_error(lambda x, k=kwargs: ndd.element_extract(x, **k), (sequence,), (sequence.gpu(),))
    flat = ndd.tensor(np.zeros((3,), np.uint8))
    _assert_same_error(lambda x: ndd.element_extract(x, element_map=[0]), (flat,), (flat.gpu(),))
    wrong = ndd.tensor(np.zeros((3, 2), np.uint8), layout="HW")
    _assert_same_error(lambda x: ndd.element_extract(x, element_map=[0]), (wrong,), (wrong.gpu(),))
    batch = ndd.batch([np.zeros((3, 2)), np.zeros((1, 2))])
    _assert_same_error(lambda x: ndd.element_extract(x, element_map=[2]), (batch,), (batch.gpu(),))
