"""GPU data movement (ndd/_ops/gpu_layout.py, kernels/layout.cu): copy, the
reshaping views, transpose, slice, tensor subscripts, pad, cat, stack and
``broadcast_to``, each compared with its CPU twin (exact equality) on the kernels
built for the CPU and on a real GPU (``any_gpu``); what is launched is checked on
the recording FakeDriver (``fake``).
"""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import assert_same  # noqa: E402

import ndd  # noqa: E402
from ndd._cuda.device_array import DeviceArray  # noqa: E402
from ndd._ops import gpu_layout  # noqa: E402

DTYPES = [np.uint8, np.int16, np.float32, np.float64, np.bool_]


@pytest.fixture
def fake(fake_with_kernels):
    """The recording FakeDriver (kernels are not run) with the session's kernel build."""
    return fake_with_kernels


def _values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return np.asarray((rng.standard_normal(shape) * 1000).astype(dtype))


def _stream():
    return ndd.EvalContext.current().cuda_stream


# -- broadcast_to --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES + [np.float16, np.int64])
@pytest.mark.parametrize(
    "shape, target",
    [((3, 1), (3, 5)), ((1, 4), (6, 4)), ((4,), (2, 3, 4)), ((2, 1, 3), (2, 5, 3)), ((), (7,)), ((5,), (5,))],
)
def test_broadcast_to_equals_numpy(shape, target, dtype, any_gpu):
    values = _values(dtype, shape)
    array = DeviceArray.from_host(values, 0, _stream())
    out = gpu_layout.broadcast_to(array, target, _stream(), 0)
    assert out.shape == target and out.dtype == values.dtype
    np.testing.assert_array_equal(out.to_host(), np.broadcast_to(values, target))


def test_broadcast_to_refuses_incompatible_shapes(fake):
    array = DeviceArray.from_host(np.zeros((3, 2), np.float32), 0, _stream())
    with pytest.raises(ValueError, match=r"shape \(3, 2\) to \(3, 4\)"):
        gpu_layout.broadcast_to(array, (3, 4), _stream(), 0)


def test_broadcast_to_is_one_launch_of_the_widest_unit(fake):
    array = DeviceArray.from_host(np.zeros((1, 16), np.uint8), 0, _stream())
    out = gpu_layout.broadcast_to(array, (10, 16), _stream(), 0)
    (launch,) = fake.launches
    # 16 contiguous bytes read 10 times: one 16-byte unit per row.
    assert launch.function == "strided_copy_16"
    assert launch.args[1] == 1
    assert out.shape == (10, 16)


# -- ops against their CPU twins ------------------------------------------------------

# Ragged samples, an empty one among them.
RAGGED = [(4, 6, 3), (7, 5, 3), (0, 2, 3), (1, 9, 3)]


def _check(op, values, in_layout="", **kwargs):
    """``op`` on a GPU Tensor equals ``op`` on the CPU Tensor."""
    assert_same(
        op(ndd.tensor(values, layout=in_layout).gpu(), **kwargs),
        op(ndd.tensor(values, layout=in_layout), **kwargs),
    )


def _check_batch(op, samples, in_layout="", **kwargs):
    """``op`` on a GPU Batch equals ``op`` on the CPU Batch."""
    gpu = op(ndd.batch(samples, layout=in_layout).gpu(), **kwargs)
    cpu = op(ndd.batch(samples, layout=in_layout), **kwargs)
    assert_same(gpu, cpu)


@pytest.mark.parametrize("dtype", DTYPES)
def test_copy_matches_the_cpu(dtype, any_gpu):
    _check(ndd.copy, _values(dtype, (5, 7, 3)), "HWC")
    _check_batch(ndd.copy, [_values(dtype, s, i) for i, s in enumerate(RAGGED)], "HWC")
    _check_batch(ndd.copy, [_values(dtype, (4, 4), i) for i in range(3)])


def test_copy_is_new_memory(fake):
    x = ndd.tensor(np.arange(12, dtype=np.float32)).gpu()
    out = ndd.copy(x).evaluate()
    assert out._data.ptr != x._data.ptr


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_matches_the_cpu(dtype, any_gpu):
    values = _values(dtype, (6, 5, 3))
    _check(ndd.transpose, values, "HWC", perm=[2, 0, 1])
    _check(ndd.transpose, values, "HWC", perm=[1, 0, 2])
    _check(ndd.transpose, values, "HWC")
    _check(ndd.transpose, _values(dtype, (2, 3, 4, 5, 2)), perm=[4, 2, 0, 3, 1])
    samples = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    _check_batch(ndd.transpose, samples, "HWC", perm=[2, 0, 1])
    _check_batch(ndd.transpose, samples, "HWC", perm=[1, 0, 2], transpose_layout=False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tiled_transposes_match_the_cpu(dtype, any_gpu):
    # Both sides of the transposed plane are long enough for the tiled kernel;
    # extents that are not multiples of the tile leave partial tiles.
    _check(ndd.transpose, _values(dtype, (40, 50, 17)), "HWC", perm=[2, 0, 1])
    _check(ndd.transpose, _values(dtype, (17, 40, 50)), "CHW", perm=[1, 2, 0])
    _check(ndd.transpose, _values(dtype, (70, 33)), "HW")
    _check(ndd.transpose, _values(dtype, (3, 20, 5, 18)), perm=[0, 3, 2, 1])
    samples = [
        _values(dtype, s, i) for i, s in enumerate([(20, 30, 16), (33, 17, 16), (0, 4, 16), (64, 32, 16)])
    ]
    _check_batch(ndd.transpose, samples, "HWC", perm=[2, 0, 1])


def test_long_transposes_take_the_tiled_kernel(fake):
    samples = [np.zeros(s, np.float32) for s in [(20, 30, 16), (33, 17, 16), (0, 4, 16)]]
    with ndd.EvalMode.sync_cpu:
        ndd.transpose(ndd.batch(samples, layout="HWC").gpu(), perm=[2, 0, 1])
        ndd.transpose(ndd.batch(samples, layout="HWC").gpu(), perm=[1, 0, 2])
    tiled, rows = fake.launches
    assert tiled.function == "transpose_tiles_4" and tiled.block == (32, 8, 1) and tiled.grid[1] == 2
    # Swapping H and W moves whole 64-byte pixels: a strided copy of 16-byte units.
    assert rows.function == "strided_copy_16"


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.int64])
def test_reshaping_views_match_the_cpu(dtype, any_gpu):
    values = _values(dtype, (4, 6, 1))
    _check(ndd.reshape, values, "HWC", shape=[6, 4])
    _check(ndd.reshape, values, "HWC", shape=[-1, 2], layout="AB")
    _check(ndd.reshape, values, "HWC", rel_shape=[0.5, 2, 1])
    _check(ndd.squeeze, values, "HWC", axes=[2])
    _check(ndd.expand_dims, values, "HWC", axes=[0, 3], new_axis_names="FG")
    _check(ndd.reinterpret, values, "HWC", dtype=ndd.uint8)
    samples = [_values(dtype, s, i) for i, s in enumerate([(2, 6, 1), (4, 3, 1), (0, 3, 1)])]
    _check_batch(ndd.reshape, samples, "HWC", shape=[-1])
    _check_batch(ndd.squeeze, samples, "HWC", axis_names="C")
    _check_batch(ndd.expand_dims, samples, "HWC", axes=[1])
    _check_batch(ndd.reinterpret, samples, "HWC", dtype=ndd.uint8)


def test_reshape_takes_a_host_shape_per_sample(any_gpu):
    samples = [np.arange(12, dtype=np.int16).reshape(3, 4), np.arange(6, dtype=np.int16).reshape(2, 3)]
    shapes = ndd.batch([np.array([4, 3]), np.array([3, 2])])
    gpu = ndd.reshape(ndd.batch(samples).gpu(), shapes)
    cpu = ndd.reshape(ndd.batch(samples), shapes)
    assert_same(gpu, cpu)
    per_sample = ndd.batch([np.array([2, 6], np.int32), np.array([6, 1], np.int32)])
    assert_same(
        ndd.reshape(ndd.batch(samples).gpu(), shape=per_sample),
        ndd.reshape(ndd.batch(samples), shape=per_sample),
    )


def test_reshape_is_a_view_without_a_launch(fake):
    x = ndd.tensor(np.arange(24, dtype=np.float32).reshape(4, 6)).gpu()
    out = ndd.reshape(x, shape=[6, 4]).evaluate()
    assert not fake.launches
    assert out._data.ptr == x._data.ptr and out.shape == (6, 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_subscripts_match_the_cpu(dtype, any_gpu):
    values = _values(dtype, (7, 9, 3))
    x, gx = ndd.tensor(values, layout="HWC"), ndd.tensor(values, layout="HWC").gpu()
    for index in [
        (slice(1, 3), slice(None, None, 2), 1),
        (slice(None, None, -1),),
        (Ellipsis, slice(None, None, -1)),
        (slice(5, 0, -2), slice(8, None, -3), slice(None, None, -1)),
        (2,),
        (-1, -2, -3),
        (slice(3, 3),),
        (slice(None), 4),
    ]:
        assert_same(gx[index], x[index])
    samples = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    b, gb = ndd.batch(samples, layout="HWC"), ndd.batch(samples, layout="HWC").gpu()
    assert_same(gb.slice[:, ::-2, 1], b.slice[:, ::-2, 1])
    assert_same(gb.slice[..., ::-1], b.slice[..., ::-1])


def test_subscripts_with_per_sample_bounds_match_the_cpu(any_gpu):
    samples = [_values(np.float32, (6, 5), i) for i in range(3)]
    starts = ndd.batch([np.array(1), np.array(0), np.array(4)])
    stops = ndd.batch([np.array(3), np.array(6), np.array(5)])
    b, gb = ndd.batch(samples), ndd.batch(samples).gpu()
    assert_same(gb.slice[starts:stops, ::2], b.slice[starts:stops, ::2])
    assert_same(gb.slice[:, starts], b.slice[:, starts])


@pytest.mark.parametrize("dtype", DTYPES)
def test_slice_matches_the_cpu(dtype, any_gpu):
    values = _values(dtype, (8, 10, 3))
    _check(ndd.slice, values, "HWC", start=[2, 1], shape=[4, 5])
    _check(ndd.slice, values, "HWC", rel_start=[0.25, 0.1], rel_end=[0.75, 0.6])
    _check(ndd.slice, values, "HWC", start=[3], end=[6], axes=[0])
    _check(ndd.slice, values, "HWC", start=[-2, 7], shape=[6, 6], out_of_bounds_policy="pad")
    _check(
        ndd.slice, values, "HWC", start=[-2, 7], shape=[6, 6], out_of_bounds_policy="pad", fill_values=[7.9]
    )
    _check(
        ndd.slice,
        values,
        "HWC",
        start=[-2, 7],
        shape=[6, 6],
        out_of_bounds_policy="pad",
        fill_values=[1, 2, 300],
    )
    _check(ndd.slice, values, "HWC", start=[-2, 7], shape=[6, 6], out_of_bounds_policy="trim_to_shape")
    _check(
        ndd.slice, values, "HWC", start=[12, 12], shape=[2, 2], out_of_bounds_policy="pad", fill_values=[-1.5]
    )
    samples = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    _check_batch(ndd.slice, samples, "HWC", rel_start=[0.5, 0.2], rel_shape=[0.5, 0.5])
    _check_batch(
        ndd.slice, samples, "HWC", start=[-1, 1], shape=[3, 3], out_of_bounds_policy="pad", fill_values=[5]
    )


@pytest.mark.parametrize("policy", ["edge", "reflect", "reflect_101", "wrap"])
def test_slice_border_policies_match_the_cpu(policy, any_gpu):
    values = _values(np.int16, (5, 4, 3))
    _check(ndd.slice, values, "HWC", start=[-3, -2], shape=[9, 12], out_of_bounds_policy=policy)
    _check(
        ndd.slice, values, "HWC", start=[-1, 2], shape=[3, 3], out_of_bounds_policy=policy, dtype=ndd.float32
    )
    # Every sample has elements to repeat (an empty one is refused, as on the CPU).
    samples = [_values(np.uint8, s, i) for i, s in enumerate(RAGGED) if 0 not in s]
    _check_batch(ndd.slice, samples, "HWC", start=[-2, 1], shape=[6, 7], out_of_bounds_policy=policy)
    _check_batch(ndd.slice, samples, "HWC", start=[-20], shape=[50], axes=[1], out_of_bounds_policy=policy)


def test_slice_with_per_sample_and_input_windows_matches_the_cpu(any_gpu):
    samples = [_values(np.int16, s, i) for i, s in enumerate(RAGGED)]
    start = ndd.batch([np.array([0, 1]), np.array([2, 2]), np.array([0, 0]), np.array([-1, 3])])
    _check_batch(ndd.slice, samples, "HWC", start=start, shape=[2, 4], out_of_bounds_policy="pad")
    anchor = ndd.batch([np.array([0.1, 0.2], np.float32)] * 4)
    size = ndd.batch([np.array([0.5, 0.5], np.float32)] * 4)
    gpu = ndd.slice(ndd.batch(samples, layout="HWC").gpu(), anchor, size)
    cpu = ndd.slice(ndd.batch(samples, layout="HWC"), anchor, size)
    assert_same(gpu, cpu)
    x = _values(np.float64, (9, 9))
    assert_same(
        ndd.slice(ndd.tensor(x).gpu(), np.array([2, 3]), np.array([5, 4]), axes=[0, 1]),
        ndd.slice(ndd.tensor(x), np.array([2, 3]), np.array([5, 4]), axes=[0, 1]),
    )


def test_slice_along_the_outer_dimension_is_a_view(fake):
    x = ndd.tensor(np.zeros((8, 4, 3), np.uint8), layout="HWC").gpu()
    out = ndd.slice(x, start=[2], end=[5], axes=[0]).evaluate()
    assert not fake.launches
    assert out._data.ptr == x._data.ptr + 2 * 12 and out.shape == (3, 4, 3)


@pytest.mark.parametrize("target", [ndd.uint8, ndd.float16, ndd.float32])
@pytest.mark.parametrize(
    "dtype", DTYPES + [np.int8, np.uint16, np.uint32, np.int32, np.int64, np.uint64, np.float16]
)
def test_slice_with_a_type_conversion_matches_the_cpu(dtype, target, any_gpu):
    values = _values(dtype, (8, 10, 3))
    if values.dtype.kind == "f":
        edges = [np.nan, np.inf, -np.inf, 255.9, 256.0, -0.9, 0.5, 65519.0, 65520.0, -7e4, 2049.0, 6e-8]
        edges.append({2: 65504.0, 4: 3e38, 8: 1e300}[values.dtype.itemsize])
        values.flat[: len(edges)] = edges
    elif values.dtype.kind in "iu":
        info = np.iinfo(values.dtype)
        edges = [
            v
            for v in (2049, 4097, 65503, 65504, 65505, 65519, 65520, 70000, -70000)
            if info.min <= v <= info.max
        ]
        values.flat[: len(edges)] = edges
    _check(ndd.slice, values, "HWC", start=[0, 0], shape=[10, 4], dtype=target)
    _check(ndd.slice, values, "HWC", start=[2, 1], shape=[4, 5], dtype=target)
    _check(
        ndd.slice,
        values,
        "HWC",
        start=[-2, 7],
        shape=[6, 6],
        out_of_bounds_policy="pad",
        fill_values=[1, 2, 300],
        dtype=target,
    )
    samples = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    _check_batch(
        ndd.slice, samples, "HWC", start=[-1, 1], shape=[3, 3], out_of_bounds_policy="pad", dtype=target
    )
    _check_batch(ndd.slice, samples, "HWC", rel_start=[0.5, 0.2], rel_shape=[0.5, 0.5], dtype=target)


def test_slice_refuses_conversions_without_a_kernel(fake):
    pytest.importorskip("ml_dtypes")  # bfloat16 data, the one type without a converting copy
    bf16 = ndd.cast(ndd.tensor(np.zeros((8, 4, 3), np.float32), layout="HWC"), dtype=ndd.bfloat16).gpu()
    with pytest.raises(NotImplementedError, match="ndd.slice on the GPU: converting input of type"):
        ndd.slice(bf16, start=[2], end=[5], axes=[0], dtype=ndd.uint8)


def test_slice_refuses_gpu_window_inputs(fake):
    x = ndd.tensor(np.zeros((8, 4), np.uint8)).gpu()
    with pytest.raises(NotImplementedError, match="input 'anchor' on the GPU"):
        ndd.slice(x, ndd.tensor(np.array([1, 1])).gpu(), ndd.tensor(np.array([2, 2])))


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_matches_the_cpu(dtype, any_gpu):
    values = _values(dtype, (5, 7, 3))
    _check(ndd.pad, values, "HWC", shape=[8, 9, 3], fill_value=3.7)
    _check(ndd.pad, values, "HWC", axes=[1], shape=[12], fill_value=-1)
    _check(ndd.pad, values, "HWC", axis_names="H", align=[4])
    _check(ndd.pad, values, "HWC", shape=[2, 2, 2])
    samples = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    _check_batch(ndd.pad, samples, "HWC", fill_value=300)
    _check_batch(ndd.pad, samples, "HWC", axes=[0], align=[4])
    fill = ndd.batch([np.array(v, np.float32) for v in (1, 2, 3, 4)])
    _check_batch(ndd.pad, samples, "HWC", axis_names="W", fill_value=fill)


@pytest.mark.parametrize("shape", [(11,), (5, 7), (4, 5, 6), (3, 4, 5, 2), (2, 3, 4, 2, 3)])
def test_pads_and_strided_copies_of_every_rank_match_the_cpu(shape, any_gpu):
    """The kernels are compiled for segments of 1, 2 and 3 dimensions and for any
    count: padding every axis keeps every dimension, and so does reversing each
    axis's order."""
    values = _values(np.int16, shape)
    _check(ndd.pad, values, shape=[e + 2 for e in shape], fill_value=-5)
    _check(ndd.transpose, values, perm=list(range(len(shape)))[::-1])
    _check(
        ndd.slice, values, start=[1] * len(shape), shape=[e - 1 for e in shape], axes=list(range(len(shape)))
    )


def test_pad_with_per_sample_extents_matches_the_cpu(any_gpu):
    samples = [_values(np.int16, s, i) for i, s in enumerate(RAGGED)]
    shape = ndd.batch([np.array(e, np.int32) for e in ([5, 7], [8, 5], [1, 1], [3, 9])])
    _check_batch(ndd.pad, samples, "HWC", axes=[0, 1], shape=shape, fill_value=-7)
    axes = ndd.batch([np.array([d], np.int32) for d in (0, 1, 0, 2)])
    _check_batch(ndd.pad, samples, "HWC", axes=axes, shape=[10])


@pytest.mark.parametrize("dtype", DTYPES)
def test_cat_and_stack_match_the_cpu(dtype, any_gpu):
    a, b, c = _values(dtype, (4, 5, 3), 1), _values(dtype, (4, 2, 3), 2), _values(dtype, (4, 5, 3), 3)
    for op, inputs, kwargs in [
        (ndd.cat, (a, b), {"axis": 1}),
        (ndd.cat, (a, c, a), {"axis": 0}),
        (ndd.cat, (a, c), {"axis": -1}),
        (ndd.stack, (a, c), {}),
        (ndd.stack, (a, c, a), {"axis": 3}),
        (ndd.stack, (a, c), {"axis": 1, "axis_name": "N"}),
    ]:
        cpu = op(*[ndd.tensor(x, layout="HWC") for x in inputs], **kwargs)
        gpu = op(*[ndd.tensor(x, layout="HWC").gpu() for x in inputs], **kwargs)
        assert_same(gpu, cpu)
    first = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]
    second = [_values(dtype, s, 10 + i) for i, s in enumerate(RAGGED)]
    for op, kwargs in [(ndd.cat, {"axis": 2}), (ndd.cat, {"axis_name": "W"}), (ndd.stack, {"axis": 1})]:
        cpu = op(ndd.batch(first, layout="HWC"), ndd.batch(second, layout="HWC"), **kwargs)
        gpu = op(ndd.batch(first, layout="HWC").gpu(), ndd.batch(second, layout="HWC").gpu(), **kwargs)
        assert_same(gpu, cpu)


def test_a_gpu_tensor_joins_every_sample_of_a_batch(any_gpu):
    samples = [_values(np.float32, s, i) for i, s in enumerate([(2, 3), (4, 3), (0, 3)])]
    row = _values(np.float32, (1, 3), 9)
    gpu = ndd.cat(ndd.batch(samples).gpu(), ndd.tensor(row).gpu())
    assert_same(gpu, ndd.cat(ndd.batch(samples), ndd.tensor(row)))
    same = [_values(np.float32, (3,), i) for i in range(2)]
    gpu = ndd.stack(ndd.batch(same).gpu(), ndd.tensor(row[0]).gpu(), axis=1)
    assert_same(gpu, ndd.stack(ndd.batch(same), ndd.tensor(row[0]), axis=1))


@pytest.mark.parametrize("dtype", [np.uint8, np.float64])
def test_stacking_scalars_matches_the_cpu(dtype, any_gpu):
    values = [np.asarray(_values(dtype, (), k)) for k in range(3)]
    assert_same(
        ndd.stack(*[ndd.tensor(v).gpu() for v in values]), ndd.stack(*[ndd.tensor(v) for v in values])
    )


def test_data_with_too_many_dimensions_left_is_refused_naming_the_op(fake):
    x = ndd.tensor(np.zeros((2, 3, 2, 3, 2, 3, 2), np.uint8)).gpu()
    out = ndd.transpose(x)
    with pytest.raises(NotImplementedError, match="ndd.transpose on the GPU: data that keeps 7 dimensions"):
        out.evaluate()


def test_cat_of_many_inputs_matches_the_cpu(any_gpu):
    parts = [_values(np.int16, (2, k + 1), k) for k in range(11)]
    cpu = ndd.cat(*[ndd.tensor(p) for p in parts], axis=1)
    gpu = ndd.cat(*[ndd.tensor(p).gpu() for p in parts], axis=1)
    assert_same(gpu, cpu)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_chains_over_views_match_the_cpu(dtype, any_gpu):
    # The slice along H is a view (samples at offsets inside the input), which the
    # strided copies after it read from.
    samples = [_values(dtype, s, i) for i, s in enumerate(RAGGED)]

    def chain(batch):
        window = ndd.slice(batch, start=[1], end=[3], axes=[0], out_of_bounds_policy="trim_to_shape")
        moved = ndd.transpose(window, perm=[2, 0, 1])
        joined = ndd.cat(moved, ndd.copy(moved), axis=0)
        flipped = joined.slice[::-1, :, ::-1]
        return ndd.pad(ndd.reshape(flipped, shape=[-1]), fill_value=9)

    assert_same(chain(ndd.batch(samples, layout="HWC").gpu()), chain(ndd.batch(samples, layout="HWC")))


# -- launches --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "op, kwargs",
    [
        (ndd.transpose, {"perm": [2, 0, 1]}),
        (ndd.slice, {"start": [1, 1], "shape": [2, 2], "out_of_bounds_policy": "pad"}),
        (ndd.slice, {"start": [1, 1], "shape": [2, 2], "out_of_bounds_policy": "trim_to_shape"}),
        (ndd.pad, {"fill_value": 1}),
        (lambda x: x.slice[:, ::2], {}),
    ],
)
def test_a_ragged_batch_is_one_launch(fake, op, kwargs):
    samples = [np.zeros(s, np.float32) for s in RAGGED]
    x = ndd.batch(samples, layout="HWC").gpu()
    with ndd.EvalMode.sync_cpu:
        out = op(x, **kwargs)
    (launch,) = fake.launches
    assert launch.grid[1] == sum(1 for s in out.shape if 0 not in s)  # a segment per non-empty sample
    assert launch.stream == int(_stream().handle)
    assert out.batch_size == len(RAGGED)


def test_a_join_of_batches_is_one_launch(fake):
    samples = [np.zeros(s, np.uint8) for s in RAGGED]
    with ndd.EvalMode.sync_cpu:
        ndd.cat(ndd.batch(samples).gpu(), ndd.batch(samples).gpu(), ndd.batch(samples).gpu(), axis=1)
    (launch,) = fake.launches
    assert launch.function.startswith("strided_copy_")
    assert launch.grid[1] == 3 * 3


def test_ops_refuse_host_data_on_the_gpu(fake):
    with pytest.raises(NotImplementedError, match="ndd.transpose on the GPU: input 'input' in host memory"):
        ndd.transpose(ndd.tensor(np.zeros((2, 3))), device="gpu")


def test_permute_batch_reorders_the_samples_without_a_copy(any_gpu):
    samples = [_values(np.int16, s, i) for i, s in enumerate(RAGGED)]
    gpu = ndd.permute_batch(ndd.batch(samples, layout="HWC").gpu(), indices=[3, 0, 0, 2])
    assert_same(gpu, ndd.permute_batch(ndd.batch(samples, layout="HWC"), indices=[3, 0, 0, 2]))
    per_sample = ndd.batch([np.int64(i) for i in (1, 1, 3, 0)])
    assert_same(
        ndd.permute_batch(ndd.batch(samples, layout="HWC").gpu(), indices=per_sample),
        ndd.permute_batch(ndd.batch(samples, layout="HWC"), indices=per_sample),
    )


def test_permute_batch_and_per_frame_launch_nothing(fake):
    batch = ndd.batch([np.zeros((2, 3), np.float32), np.ones((4, 3), np.float32)]).gpu()
    picked = ndd.permute_batch(batch, indices=[1, 1]).evaluate()
    framed = ndd.per_frame(ndd.tensor(np.zeros((3, 2), np.float32)).gpu()).evaluate()
    assert not fake.launches
    assert picked._gpu.offsets == [batch._gpu.offsets[1]] * 2 and picked._gpu.data.ptr == batch._gpu.data.ptr
    assert framed.layout == "F*" and framed.device.device_type == "gpu"


@pytest.mark.parametrize("align", [1, 2, 4, 16])
def test_copy_windows_gathers_2d_windows_into_contiguous_bytes(align, any_gpu):
    # Windows of one padded image (rows `pitch` bytes apart) and of a contiguous one,
    # each copied to its own place in the output: what the GPU decoders do with
    # the images a codec gives. `align` makes every address, width and pitch a
    # multiple of it, so that the copy moves units that wide.
    stream = _stream()
    pitch = 96 * align
    padded = _values(np.uint8, (20, pitch), seed=1)
    dense = _values(np.uint8, (7, 10 * align), seed=2)
    source = DeviceArray.from_host(np.concatenate([padded.reshape(-1), dense.reshape(-1)]), 0, stream)
    dense_at = source.ptr + padded.size
    # (address, pitch, height, row bytes) and the expected bytes.
    windows = [
        (source.ptr + 3 * pitch + 5 * align, pitch, 6, 40 * align, padded[3:9, 5 * align : 45 * align]),
        (dense_at, 10 * align, 7, 10 * align, dense),
        (source.ptr, pitch, 0, 8 * align, padded[:0, : 8 * align]),  # empty: nothing copied
        (source.ptr + 19 * pitch, pitch, 1, pitch, padded[19:20]),
        (dense_at + 2 * 10 * align + 3 * align, 10 * align, 4, 5 * align, dense[2:6, 3 * align : 8 * align]),
    ]
    sizes = [w[4].size for w in windows]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    out = DeviceArray.from_host(np.full(sum(sizes) + 16, 0xEE, np.uint8), 0, stream)
    gpu_layout.copy_windows(
        [w[0] for w in windows],
        [w[1] for w in windows],
        [w[2] for w in windows],
        [w[3] for w in windows],
        [out.ptr + int(a) for a in starts],
        stream,
        0,
    )
    result = out.to_host()
    expected = np.concatenate([w[4].reshape(-1) for w in windows] + [np.full(16, 0xEE, np.uint8)])
    np.testing.assert_array_equal(result, expected)
