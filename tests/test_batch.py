"""Batch creation, metadata, sample selection, slicing and conversions."""

import tracemalloc

import numpy as np
import pytest

import ndd

MIB = 1 << 20


def ragged():
    return [np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(4, dtype=np.int32).reshape(2, 2)]


def test_batch_of_ragged_samples():
    b = ndd.batch(ragged(), layout="HW")
    assert b.batch_size == 2
    assert b.shape == [(2, 3), (2, 2)]
    assert b.dtype == ndd.int32
    assert b.layout == "HW"
    assert b.ndim == 2
    assert b.device == ndd.Device("cpu")


def test_batch_copies_and_as_batch_shares():
    samples = ragged()
    copied, shared = ndd.batch(samples), ndd.as_batch(samples)
    samples[0][0, 0] = 99
    assert np.asarray(copied.select(0))[0, 0] == 0
    assert np.asarray(shared.select(0))[0, 0] == 99


@pytest.mark.parametrize(
    "sizes, as_one_array",
    [([MIB, MIB], False), ([MIB, MIB // 2], False), ([MIB, MIB], True)],
    ids=["uniform list", "ragged list", "one array"],
)
def test_a_batch_of_read_only_arrays_holds_one_writable_copy(sizes, as_one_array):
    # Encoded files read as np.frombuffer(bytes) are read-only; the batch copies them once.
    rng = np.random.default_rng(0)
    samples = [np.frombuffer(rng.bytes(size), np.uint8) for size in sizes]
    given = np.frombuffer(b"".join(map(bytes, samples)), np.uint8).reshape(2, -1) if as_one_array else samples
    tracemalloc.start()
    try:
        b = ndd.batch(given)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.25 * sum(sizes)
    for i, source in enumerate(given):
        out = np.asarray(b.select(i))
        np.testing.assert_array_equal(out, source)
        assert out.flags.writeable and not np.shares_memory(out, source)


def test_batch_from_one_array_splits_the_outer_dimension():
    b = ndd.batch(np.arange(12).reshape(3, 4))
    assert b.batch_size == 3 and b.shape == [(4,)] * 3
    np.testing.assert_array_equal(np.asarray(b.select(2)), [8, 9, 10, 11])


def test_batch_from_scalar_or_empty_list():
    with pytest.raises(ValueError, match="scalar"):
        ndd.batch(np.float32(1.0) * np.ones(()))
    with pytest.raises(ValueError, match="Element type must be specified"):
        ndd.batch([])
    empty = ndd.batch([], dtype=ndd.float32)
    assert empty.batch_size == 0 and empty.dtype == ndd.float32


def test_samples_must_share_ndim_and_are_converted_to_the_first_dtype():
    with pytest.raises(ValueError, match="same number of dimensions"):
        ndd.batch([np.zeros(2), np.zeros((2, 2))])
    b = ndd.batch([np.float32([1.5]), np.int32([2])])
    assert b.dtype == ndd.float32
    with pytest.raises(TypeError, match="None"):
        ndd.batch([np.zeros(2), None])


def test_batch_of_python_values():
    b = ndd.batch([[1, 2], [3]])
    assert b.dtype == ndd.int32 and b.shape == [(2,), (1,)]


def test_select_int_slice_list_and_ellipsis():
    b = ndd.batch([np.full(2, i) for i in range(5)])
    assert isinstance(b.select(1), ndd.Tensor)
    assert np.asarray(b.select(-1))[0] == 4
    sub = b.select(slice(1, 4, 2))
    assert isinstance(sub, ndd.Batch) and [np.asarray(t)[0] for t in sub] == [1, 3]
    assert [np.asarray(t)[0] for t in b.select([4, 0, 0])] == [4, 0, 0]
    assert b.select(...) is b
    with pytest.raises(IndexError):
        b.select(5)


def test_subscript_raises_pointing_at_select_and_slice():
    b = ndd.batch(ragged())
    with pytest.raises(TypeError, match=r"select.*slice"):
        b[0]


def test_tensors_proxy():
    b = ndd.batch([np.full(2, i) for i in range(4)])
    assert len(b.tensors) == 4
    assert np.asarray(b.tensors[2])[0] == 2
    assert [np.asarray(t)[0] for t in b.tensors[1:3]] == [1, 2]
    picked = b.tensors[[3, 1]].as_batch()
    assert [np.asarray(t)[0] for t in picked] == [3, 1]
    assert len(b.tensors.tolist()) == 4


def test_iteration_yields_tensors():
    b = ndd.batch(ragged())
    items = list(b)
    assert all(isinstance(t, ndd.Tensor) for t in items)
    for t, s in zip(items, ragged(), strict=True):
        np.testing.assert_array_equal(np.asarray(t), s)


def test_sample_wise_slice():
    b = ndd.batch([np.arange(12).reshape(3, 4), np.arange(8).reshape(2, 4)], layout="HW")
    first_col = b.slice[:, 0]
    assert first_col.layout == "H"
    np.testing.assert_array_equal(np.asarray(first_col.select(0)), [0, 4, 8])
    np.testing.assert_array_equal(np.asarray(first_col.select(1)), [0, 4])
    tail = b.slice[1:]
    assert tail.shape == [(2, 4), (1, 4)]


def test_sample_wise_slice_with_per_sample_bounds():
    b = ndd.batch([np.arange(5), np.arange(5)])
    out = b.slice[ndd.batch([0, 1]) : ndd.batch([2, 4])]
    np.testing.assert_array_equal(np.asarray(out.select(0)), [0, 1])
    np.testing.assert_array_equal(np.asarray(out.select(1)), [1, 2, 3])


def test_as_tensor_of_batch_stacks_and_pads():
    uniform = ndd.batch([np.ones((2, 2)), np.zeros((2, 2))])
    assert ndd.as_tensor(uniform).shape == (2, 2, 2)
    b = ndd.batch(ragged())
    with pytest.raises(ValueError, match="pad=True"):
        ndd.as_tensor(b)
    padded = np.asarray(ndd.as_tensor(b, pad=True))
    assert padded.shape == (2, 2, 3)
    np.testing.assert_array_equal(padded[1], [[0, 1, 0], [2, 3, 0]])


def test_torch_with_pad():
    torch = pytest.importorskip("torch")
    b = ndd.batch(ragged())
    with pytest.raises(ValueError):
        b.torch()
    t = b.torch(pad=True)
    assert tuple(t.shape) == (2, 2, 3) and t.dtype == torch.int32
    with pytest.raises(ValueError):
        b.torch(copy=False)


def test_broadcast():
    b = ndd.Batch.broadcast(ndd.tensor([1, 2]), 3)
    assert b.batch_size == 3 and b.shape == [(2,)] * 3


def test_repr_format():
    b = ndd.batch([np.array([1, 2, 3]), np.array([4, 5])], layout="W")
    assert repr(b) == (
        "Batch(\n"
        "    [[1 2 3],\n"
        "    [4 5]],\n"
        "    dtype=i64,\n"
        '    layout="W",\n'
        '    device="cpu",\n'
        "    num_samples=2,\n"
        "    shape=[(3,), (2,)])"
    )


def test_batch_is_unhashable_and_has_no_len():
    b = ndd.batch(ragged())
    with pytest.raises(TypeError):
        hash(b)
    with pytest.raises(TypeError):
        len(b)


def test_operators_between_batches_tensors_and_scalars():
    b = ndd.batch(ragged())
    out = b * 2 + ndd.tensor(1)
    for got, s in zip(out, ragged(), strict=True):
        np.testing.assert_array_equal(np.asarray(got), s * 2 + 1)
    pairwise = b - b
    assert all(not np.asarray(x).any() for x in pairwise)
    with pytest.raises(ValueError, match="Inconsistent batch size"):
        b + ndd.batch([np.zeros(1)])


def test_uniform_batches_are_stored_densely_and_samples_are_views():
    b = ndd.batch([np.full((2, 2), i, np.int16) for i in range(3)])
    dense = b._dense
    assert dense is not None and dense.shape == (3, 2, 2)
    assert np.shares_memory(np.asarray(b.select(1)), dense)
    out = ndd.cast(b, dtype=ndd.float32) * 2
    assert out.evaluate()._dense is not None  # whole-batch kernels keep the storage dense
    np.testing.assert_array_equal(np.asarray(out.select(2)), np.full((2, 2), 4.0))


def test_dense_batch_converts_to_torch_without_copy():
    pytest.importorskip("torch")
    b = ndd.batch([np.arange(3), np.arange(3) + 10])
    view = b.torch(copy=False)
    assert view.shape == (2, 3)
    assert np.shares_memory(view.numpy(), b._dense)


@pytest.mark.parametrize(
    "tensor_shape",
    [(3,), (2, 3), (1,), (), (4, 2, 3)],
)
def test_dense_and_per_sample_paths_agree_for_broadcast_operands(tensor_shape):
    samples = [np.arange(6, dtype=np.int32).reshape(2, 3) * (i + 1) for i in range(4)]
    t = np.arange(int(np.prod(tensor_shape)), dtype=np.int32).reshape(tensor_shape)
    out = ndd.batch(samples) + ndd.tensor(t)
    reflected = ndd.tensor(t) - ndd.batch(samples)
    for i, s in enumerate(samples):
        np.testing.assert_array_equal(np.asarray(out.select(i)), s + t)
        np.testing.assert_array_equal(np.asarray(reflected.select(i)), t - s)


def test_batches_of_different_sample_ndim_broadcast_per_sample():
    a = ndd.batch([np.arange(3), np.arange(3)])
    b = ndd.batch([np.ones((2, 3), np.int64), np.zeros((2, 3), np.int64)])
    out = a + b
    np.testing.assert_array_equal(np.asarray(out.select(0)), np.arange(3) + np.ones((2, 3)))
    np.testing.assert_array_equal(np.asarray(out.select(1)), np.broadcast_to(np.arange(3), (2, 3)))


def test_tensor_input_with_batch_size_is_repeated_per_sample():
    t = ndd.tensor(np.arange(6).reshape(2, 3))
    out = ndd.transpose(t, perm=[1, 0], batch_size=3)
    assert isinstance(out, ndd.Batch) and out.shape == [(3, 2)] * 3
    for s in out:
        np.testing.assert_array_equal(np.asarray(s), np.arange(6).reshape(2, 3).T)


def test_samples_of_a_batch_over_user_memory_stay_marked_as_user_memory():
    """Operators on user memory run at once, so that the caller may overwrite it;
    that must hold for samples selected from such a batch, not only the batch."""
    user = np.arange(6, dtype=np.int32).reshape(2, 3)
    with ndd.EvalMode.deferred:  # would postpone the operators if the memory were ndd's
        wrapped = ndd.as_batch(user)
        doubled = wrapped.select(0) * 2
        picked = ndd.reductions.sum(wrapped.select([1]))
        user[:] = -1
    np.testing.assert_array_equal(np.asarray(doubled), [0, 2, 4])
    assert int(np.asarray(picked.select(0))) == 12


def test_batches_of_ndd_results_are_not_marked_as_user_memory():
    computed = ndd.batch([np.arange(3)]) + 1
    assert not ndd.as_batch(computed)._external
    assert not ndd.as_batch([ndd.tensor([1]), ndd.tensor([2])])._external
    assert not ndd.Batch.broadcast(ndd.tensor([1, 2]), 3)._external
    assert ndd.as_batch([np.array([1])])._external


def test_broadcast_to_no_samples_gives_an_empty_batch_of_the_sample_type():
    b = ndd.Batch.broadcast(np.array([1, 2], np.int16), 0)
    assert b.batch_size == 0 and str(b.dtype) == "i16"
    b = ndd.Batch.broadcast(ndd.tensor([[1, 2]], layout="AB"), np.int64(2), dtype=ndd.float32)
    assert b.batch_size == 2 and str(b.dtype) == "f32" and b.layout == "AB"
    np.testing.assert_array_equal(np.asarray(b.select(1)), np.array([[1.0, 2.0]], np.float32))
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="Batch.broadcast: 'batch_size' must be a non-negative integer"):
            ndd.Batch.broadcast(np.array([1, 2]), bad)


@pytest.mark.parametrize(
    "call, dtype",
    [
        (lambda b: b + 1, "i32"),
        (lambda b: -b, "i32"),
        (lambda b: b < 1, "bool"),
        (lambda b: b + b, "i32"),
        (lambda b: b * ndd.tensor([1.5]), "f32"),
        (lambda b: ndd.math.sqrt(b), "f32"),
        (lambda b: ndd.math.clamp(b, 0, 1), "i32"),
        (lambda b: ndd.cast(b, dtype=ndd.uint8), "u8"),
        (lambda b: ndd.normalize(ndd.cast(b, dtype=ndd.float32)), "f32"),
        (lambda b: ndd.reductions.sum(b), "i64"),
    ],
)
@pytest.mark.parametrize("mode", ["eager", "sync_cpu", "deferred"])
def test_operators_on_an_empty_batch_give_an_empty_batch(call, dtype, mode):
    # The elementwise path read the first sample's shape and crashed the process.
    with getattr(ndd.EvalMode, mode):
        out = call(ndd.batch([], dtype=ndd.int32, layout="HW"))
        out.evaluate()
    assert out.batch_size == 0
    assert str(out.dtype) == dtype
    assert out.shape == []


def test_repr_lays_out_samples_and_summaries_as_the_reference():
    # The reference's text (DALI 2.4): samples apart by a blank line per dimension
    # beyond the first, two items at each end of a summarized array.
    batch = ndd.batch(
        [np.arange(6, dtype=np.int16).reshape(2, 3), np.arange(3, dtype=np.int16).reshape(1, 3)]
    )
    assert repr(batch) == (
        "Batch(\n    [[[0 1 2]\n     [3 4 5]],\n\n    [[0 1 2]]],\n    dtype=i16,\n"
        '    device="cpu",\n    num_samples=2,\n    shape=[(2, 3), (1, 3)])'
    )
    long = ndd.tensor(np.arange(2000, dtype=np.int32))
    assert repr(long).splitlines()[1] == "    [   0    1 ... 1998 1999],"


def test_copy_deepcopy_and_pickle_of_a_batch():
    import copy
    import pickle

    b = ndd.batch([np.ones((2, 2), np.float32), np.zeros((1, 3), np.float32)], layout="HW")
    for make in (copy.copy, copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x))):
        other = make(b)
        assert other is not b and other.dtype == ndd.float32 and other.layout == "HW"
        assert [np.asarray(s).tolist() for s in other.tensors] == [np.asarray(s).tolist() for s in b.tensors]
    assert not np.shares_memory(np.asarray(copy.deepcopy(b).select(0)), np.asarray(b.select(0)))


def test_samples_of_another_type_are_rounded_and_saturated_as_in_the_reference():
    b = ndd.batch([np.array([7], np.int32), np.array([1.5, 9.7, -2.5, 2.5], np.float32)])
    assert np.asarray(b.select(1)).tolist() == [2, 10, -3, 3]
    b = ndd.batch([np.array([7], np.uint8), np.array([300.7, -3.2], np.float32)])
    assert b.dtype == ndd.uint8 and np.asarray(b.select(1)).tolist() == [255, 0]


def test_as_batch_of_a_batch_is_the_batch():
    b = ndd.batch([[1], [2]])
    assert ndd.as_batch(b) is b
    assert ndd.as_batch(b, dtype=ndd.float32).dtype == ndd.float32


def test_broadcast_takes_an_integral_float_size():
    assert ndd.Batch.broadcast([1], 2.0).batch_size == 2
    with pytest.raises(ValueError, match="batch_size"):
        ndd.Batch.broadcast([1], 2.5)


def test_dir_lists_the_lazily_loaded_pytorch_module():
    assert "pytorch" in dir(ndd) and "tensor" in dir(ndd)


def test_a_batch_of_no_samples_keeps_their_number_of_dimensions():
    # As the reference: from the array it was made of, through operators' shape rules,
    # Batch.select and Batch.broadcast.
    empty = ndd.as_batch(np.zeros((0, 3, 2), np.float32))
    assert empty.ndim == 2 and empty.batch_size == 0
    assert ndd.batch(np.zeros((0, 3, 2), np.float32)).ndim == 2
    assert ndd.cast(empty, dtype=ndd.uint8).ndim == 2
    assert ndd.reductions.sum(empty, axes=[0]).ndim == 1
    assert ndd.transpose(empty, perm=[1, 0]).ndim == 2
    assert ndd.expand_dims(empty, axes=[0]).ndim == 3
    assert ndd.Batch.broadcast(np.zeros((2, 2)), 0).ndim == 2
    assert ndd.as_batch(np.zeros((3, 3, 2), np.float32)).select(slice(0, 0)).ndim == 2
    assert len(list(ndd.cast(empty, dtype=ndd.uint8))) == 0
    # With no samples and no array, nothing says: 0, as in the reference.
    assert ndd.batch([], dtype=ndd.float32).ndim == 0


def test_a_batch_of_no_samples_carries_their_shape_through_a_pipeline():
    # Elementwise operators, crops with windows, per_frame: each result knows its samples'
    # dimensions, so the next operator accepts it (transpose refused 'E0 + 1' before).
    empty = ndd.as_batch(np.zeros((0, 8, 8, 3), np.uint8))
    assert (empty + 1).ndim == 3 and (-empty).ndim == 3 and ndd.math.sqrt(empty).ndim == 3
    assert (empty + ndd.tensor(np.ones((8, 3), np.uint8))).ndim == 3
    chain = ndd.transpose(ndd.crop(empty + 1, crop=(4, 4)), perm=[2, 0, 1])
    assert chain.ndim == 3 and chain.batch_size == 0 and list(chain) == []
    squeezed = ndd.squeeze(ndd.as_batch(np.zeros((0, 8, 8, 1), np.uint8)) + 1, axes=[2])
    assert squeezed.ndim == 2
    marked = ndd.per_frame(ndd.as_batch(np.zeros((0, 10), np.float32)))
    assert (marked.ndim, marked.layout) == (1, "F")


def test_the_layout_of_a_batch_of_no_samples_is_checked_against_the_array():
    with pytest.raises(ValueError, match="layout 'HW' has 2, the data has 3"):
        ndd.batch(np.zeros((0, 8, 8, 3), np.uint8), layout="HW")
    assert ndd.batch(np.zeros((0, 8, 8, 3), np.uint8), layout="HWC").ndim == 3
    converted = ndd.batch(ndd.as_batch(np.zeros((0, 3, 2), np.float32)), dtype=ndd.uint8)
    assert (converted.ndim, converted.dtype) == (2, ndd.uint8)
