"""Tensor creation, metadata, conversion protocols and indexing."""

import warnings

import numpy as np
import pytest

import ndd


def test_tensor_copies_and_as_tensor_shares():
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    copied = ndd.tensor(a)
    shared = ndd.as_tensor(a)
    a[0, 0] = 100
    assert np.asarray(copied)[0, 0] == 0
    assert np.asarray(shared)[0, 0] == 100
    assert copied.dtype == ndd.int16 and shared.shape == (2, 3)


def test_as_tensor_of_a_tensor_is_a_new_object_sharing_storage():
    t = ndd.tensor([1, 2, 3])
    u = ndd.as_tensor(t)
    assert u is not t
    assert np.shares_memory(np.asarray(u), np.asarray(t))


def test_read_only_arrays_are_copied():
    a = np.arange(4)
    a.setflags(write=False)
    t = ndd.as_tensor(a)
    assert np.asarray(t).flags.writeable


@pytest.mark.parametrize(
    "data, dtype, np_dtype",
    [
        (1, ndd.int32, np.int32),
        ([1, 2, 3], ndd.int32, np.int32),
        ([3_000_000_000], ndd.uint32, np.uint32),
        (2.5, ndd.float32, np.float32),
        ([[1.0, 2.0]], ndd.float32, np.float32),
        ([True, False], ndd.bool, np.bool_),
        (np.arange(3, dtype=np.int64), ndd.int64, np.int64),
        (np.ones(2, np.float64), ndd.float64, np.float64),
    ],
)
def test_dtype_inference(data, dtype, np_dtype):
    t = ndd.tensor(data)
    assert t.dtype == dtype
    np.testing.assert_array_equal(np.asarray(t), np.asarray(data).astype(np_dtype))


def test_integers_beyond_uint32_overflow():
    with pytest.raises(OverflowError):
        ndd.tensor([-1, 2**32])


def test_explicit_dtype_converts():
    t = ndd.tensor([1.7, 2.2], dtype=ndd.int32)
    assert t.dtype == ndd.int32
    assert ndd.tensor([1, 2], dtype="float64").dtype == ndd.float64
    assert ndd.tensor([1, 2], dtype=np.uint8).dtype == ndd.uint8


def test_layout_must_match_ndim():
    t = ndd.tensor(np.zeros((2, 3, 4)), layout="HWC")
    assert t.layout == "HWC"
    assert ndd.tensor(np.zeros(3)).layout is None
    with pytest.raises(ValueError, match="same number of dimensions"):
        ndd.tensor(np.zeros((2, 3)), layout="HWC")


def test_metadata_properties():
    t = ndd.tensor(np.zeros((2, 3), np.float64))
    assert (t.ndim, t.size, t.itemsize, t.nbytes) == (2, 6, 8, 48)
    assert t.device == ndd.Device("cpu")
    assert str(t.device) == "cpu"


def test_item_and_scalar_conversions():
    assert ndd.tensor(5).item() == 5
    assert ndd.tensor([[2.5]]).item() == 2.5
    with pytest.raises(ValueError, match="Tensor has 3 elements, expected 1"):
        ndd.tensor([1, 2, 3]).item()
    assert int(ndd.tensor(7)) == 7
    assert float(ndd.tensor(1.5)) == 1.5


def test_bool_follows_numpy_rather_than_always_true():
    assert not ndd.tensor(0)
    assert ndd.tensor([3])
    with pytest.raises(ValueError, match="ambiguous"):
        bool(ndd.tensor([1, 2]))


def test_len_and_iteration_over_the_first_dimension():
    t = ndd.tensor(np.arange(6).reshape(3, 2))
    assert len(t) == 3
    rows = [np.asarray(r) for r in t]
    np.testing.assert_array_equal(np.stack(rows), np.arange(6).reshape(3, 2))
    with pytest.raises(TypeError, match="0-d"):
        len(ndd.tensor(1))


def test_tensor_is_unhashable():
    with pytest.raises(TypeError):
        hash(ndd.tensor(1))


def test_array_protocol_and_dlpack():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = ndd.as_tensor(a)
    np.testing.assert_array_equal(np.asarray(t, dtype=np.int64), a.astype(np.int64))
    assert t.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(t), a)


def test_cuda_array_interface_is_absent_on_cpu():
    assert not hasattr(ndd.tensor([1]), "__cuda_array_interface__")


def test_repr_format():
    t = ndd.tensor(np.array([[1, 2, 3], [4, 5, 6]], np.int32), layout="HW")
    assert repr(t) == (
        "Tensor(\n"
        "    [[1 2 3]\n"
        "     [4 5 6]],\n"
        "    dtype=i32,\n"
        '    layout="HW",\n'
        '    device="cpu",\n'
        "    shape=(2, 3))"
    )


def test_cpu_is_identity_and_gpu_fails_clearly_without_gpu():
    t = ndd.tensor([1])
    assert t.cpu() is t
    assert t.to_device("cpu") is t
    copy = t.to_device("cpu", force_copy=True)
    assert copy is not t and not np.shares_memory(np.asarray(copy), np.asarray(t))


def test_gpu_without_gpu_raises_a_clear_error():
    from ndd._cuda import driver

    if driver.device_count() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        ndd.tensor([1]).gpu()


@pytest.mark.parametrize(
    "index",
    [
        1,
        -1,
        (0, 2),
        slice(1, None),
        slice(None, None, -1),
        (slice(None), 1),
        (Ellipsis, 0),
        (0, Ellipsis),
        (slice(0, 3, 2), slice(None, None, -2)),
    ],
)
def test_basic_indexing_matches_numpy(index):
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    t = ndd.tensor(a)
    np.testing.assert_array_equal(np.asarray(t[index]), a[index])
    assert t[index].shape == a[index].shape


def test_indexing_drops_layout_letters_of_indexed_dims():
    t = ndd.tensor(np.zeros((4, 5, 3)), layout="HWC")
    assert t[0].layout == "WC"
    assert t[:, :, 0].layout == "HW"
    assert t[1:3].layout == "HWC"


def test_full_slice_returns_the_same_tensor():
    t = ndd.tensor(np.zeros((2, 2)))
    assert t[:] is t
    assert t[...] is t


def test_index_with_a_scalar_tensor():
    t = ndd.tensor(np.arange(5))
    assert t[ndd.tensor(3)].item() == 3


def test_out_of_range_index_raises_at_the_call():
    t = ndd.tensor(np.arange(5))
    with pytest.raises(IndexError, match="out of range for axis 0 of length 5"):
        t[5]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0]


@pytest.mark.parametrize("bad", [None, [0, 1], np.array([True])])
def test_unsupported_indices(bad):
    with pytest.raises((TypeError, IndexError)):
        ndd.tensor(np.arange(5))[bad]


def test_torch_interop():
    torch = pytest.importorskip("torch")
    t = ndd.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    view = t.torch()
    assert view.shape == (2, 3) and view.dtype == torch.float32
    back = ndd.as_tensor(torch.arange(4))
    assert back.dtype == ndd.int64


_TORCH_TYPES = ["bool", "uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
_TORCH_TYPES += ["float16", "float32", "float64"]


@pytest.mark.parametrize("name", _TORCH_TYPES)
def test_every_type_goes_to_torch_and_back(name):
    # The lowest torch of the torch extra (2.3) has every ndd type but bfloat16: torch 2.1
    # had no unsigned types above 8 bits and exported no bool through DLPack.
    torch = pytest.importorskip("torch")
    values = (np.arange(12) * 37 % 11).reshape(3, 4).astype(name)
    for made in (ndd.as_tensor(values).torch(), ndd.as_batch([values, values]).torch()):
        assert made.dtype == getattr(torch, name)
        np.testing.assert_array_equal(made.numpy(), np.broadcast_to(values, made.shape))
    padded = ndd.as_batch([values, values[:1]]).torch(pad=True)
    assert padded.dtype == getattr(torch, name)
    np.testing.assert_array_equal(padded[1, 1:].numpy(), np.zeros((2, 4), name))
    back = ndd.as_tensor(torch.from_numpy(values.copy()))
    assert back.dtype == getattr(ndd, name)
    np.testing.assert_array_equal(np.asarray(back), values)
    both = ndd.as_batch([torch.from_numpy(values.copy())] * 2)
    np.testing.assert_array_equal(np.asarray(ndd.as_tensor(both)), np.stack([values, values]))


class _DLPackOnly:
    """An object exposing only the DLPack protocol."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class _ArrayInterfaceOnly:
    """An object exposing only ``__array_interface__``."""

    def __init__(self, array):
        self._array = array
        self.__array_interface__ = array.__array_interface__


def test_as_tensor_of_a_dlpack_producer_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ndd.as_tensor(_DLPackOnly(a))
    assert t.dtype == ndd.float32 and t.shape == (2, 3)
    assert np.shares_memory(np.asarray(t), a)


def test_as_tensor_of_an_array_interface_object_shares_memory():
    a = np.arange(4, dtype=np.uint16)
    t = ndd.as_tensor(_ArrayInterfaceOnly(a))
    assert t.dtype == ndd.uint16
    assert np.shares_memory(np.asarray(t), a)


def test_as_tensor_of_a_pillow_image():
    from PIL import Image

    pixels = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    t = ndd.as_tensor(Image.fromarray(pixels), layout="HWC")
    np.testing.assert_array_equal(np.asarray(t), pixels)
    assert t.layout == "HWC"


@pytest.mark.parametrize("bad", [np.array([1 + 2j]), np.array(["a"]), object(), "text"])
def test_unsupported_data_is_rejected_clearly(bad):
    with pytest.raises(TypeError):
        ndd.tensor(bad)


@pytest.mark.parametrize(
    "make, expected",
    [
        # Values from the reference (DALI 2.4.0): arrays given with dtype= convert with the
        # rules of cast (round half away from zero, saturate); Python lists truncate.
        (lambda: ndd.tensor(np.array([1.7, -2.5, 300.2]), dtype=ndd.uint8), [2, 0, 255]),
        (lambda: ndd.tensor(np.array([1.5, 2.5, -0.5]), dtype=ndd.int32), [2, 3, -1]),
        (lambda: ndd.tensor(np.array([300, -5]), dtype=ndd.uint8), [255, 0]),
        (lambda: ndd.as_tensor(np.array([1.7, 300.0]), dtype=ndd.uint8), [2, 255]),
        (lambda: ndd.batch([np.array([1.7, 300.0])], dtype=ndd.uint8).select(0), [2, 255]),
        (lambda: ndd.batch([np.array([1.7]), np.array([1.0, 2.0])], dtype=ndd.uint8).select(0), [2]),
        (lambda: ndd.tensor([1.7, 2.2], dtype=ndd.int32), [1, 2]),
    ],
)
def test_dtype_conversion_of_given_data_follows_the_reference(make, expected):
    assert np.asarray(make()).tolist() == expected


@pytest.mark.parametrize(
    "numpy_type, expected",
    # The reference keeps narrow numpy types in lists and narrows the 64-bit ones
    # (what Python numbers become) to int32/float32.
    [(np.uint8, "u8"), (np.float16, "f16"), (np.int16, "i16"), (np.int64, "i32"), (np.float64, "f32")],
)
def test_lists_of_numpy_values_keep_narrow_types(numpy_type, expected):
    arrays = [np.array([1, 2], numpy_type), np.array([3, 4], numpy_type)]
    assert str(ndd.as_tensor(arrays).dtype) == str(ndd.dtype(expected))
    assert str(ndd.as_tensor([numpy_type(1), numpy_type(2)]).dtype) == str(ndd.dtype(expected))


@pytest.mark.parametrize(
    "data, dtype, expected",
    [
        # Values from the reference (DALI 2.4.0): Python numbers are made of the requested type
        # directly, so 64-bit values need not fit int32 first; floats truncate.
        ([2**40, -3], "int64", [2**40, -3]),
        ([2**63], "uint64", [2**63]),
        ([255.9, -0.5], "uint8", [255, 0]),
        (7.9, "int16", 7),
        ([[True, False]], "int32", [[1, 0]]),
    ],
)
def test_python_numbers_are_made_of_the_requested_type(data, dtype, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy cast warnings leak
        t = ndd.tensor(data, dtype=dtype)
        b = ndd.batch([data], dtype=dtype)
    assert np.asarray(t).tolist() == expected
    assert str(t.dtype) == str(ndd.dtype(dtype))
    assert np.asarray(b.select(0)).tolist() == expected


@pytest.mark.parametrize(
    "data, dtype, error, message",
    [
        # The reference refuses these too; numpy would wrap them (300 -> 44) or give INT_MIN.
        ([300, 1], "uint8", OverflowError, "300 is out of the range of u8"),
        ([-1], "uint16", OverflowError, "-1 is out of the range of u16"),
        ([3e10], "int32", OverflowError, "30000000000 is out of the range of i32"),
        ([1.0, float("nan")], "int32", ValueError, "cannot convert nan to i32"),
        ([float("inf")], "int64", ValueError, "cannot convert inf to i64"),
        ([2**70], "int64", OverflowError, "out of the 64-bit range"),
    ],
)
def test_python_numbers_the_requested_type_cannot_hold_are_refused(data, dtype, error, message):
    with pytest.raises(error, match=message):
        ndd.tensor(data, dtype=dtype)
    with pytest.raises(error, match=message):
        ndd.batch([data], dtype=dtype)


def test_python_floats_beyond_float32_become_infinities_quietly():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.asarray(ndd.tensor([1e40, -1e40])).tolist() == [np.inf, -np.inf]
        assert np.asarray(ndd.tensor([1.5, 7e4], dtype=ndd.float16)).tolist() == [1.5, np.inf]


def test_a_list_holding_itself_is_refused_instead_of_looping():
    looped = []
    looped.append(looped)
    with pytest.raises(ValueError, match="deeper than 64 levels"):
        ndd.tensor(looped)


def test_slice_bounds_may_be_scalar_tensors():
    data = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    t = ndd.tensor(data)
    np.testing.assert_array_equal(np.asarray(t[ndd.tensor(0) : ndd.tensor(1)]), data[0:1])
    np.testing.assert_array_equal(np.asarray(t[:, ndd.tensor(1) :, :: ndd.tensor(2)]), data[:, 1:, ::2])
    np.testing.assert_array_equal(np.asarray(t[np.int64(1) :]), data[1:])
    b = ndd.batch([np.array([1, 2, 3]), np.array([4, 5, 6])])
    assert [np.asarray(s).tolist() for s in b.slice[ndd.tensor(1) :].tensors] == [[2, 3], [5, 6]]
    with pytest.raises(TypeError, match="a Tensor index must be a 0-D number"):
        t[ndd.tensor([1]) :]
    with pytest.raises(TypeError, match="slice bounds must be integers or None"):
        t[...:2]


# (index, row) pairs from the reference: a number given as data is rounded to the
# nearest integer, halves away from zero; a Python float is cut toward zero.
FLOAT_INDICES = [
    (ndd.tensor(np.float32(0.5)), 1),
    (ndd.tensor(np.float32(1.5)), 2),
    (ndd.tensor(np.float32(2.5)), 3),
    (ndd.tensor(np.float64(-0.5)), 5),
    (ndd.tensor(np.float32(-1.5)), 4),
    (ndd.tensor(np.float32(0.49)), 0),
    (ndd.tensor(np.float16(2.5)), 3),
    (ndd.tensor(True), 1),
    (np.float32(1.5), 2),
    (np.float64(-1.5), 4),
    (np.array(2.5), 3),
    (np.bool_(True), 1),
    (0.5, 0),
    (1.5, 1),
    (-0.5, 0),
    (-1.5, 5),
    (5.6, 5),
    (True, 1),
    (False, 0),
]


@pytest.mark.parametrize("index, row", FLOAT_INDICES, ids=[repr(i) for i, _ in FLOAT_INDICES])
def test_a_float_or_boolean_index_is_an_integer_as_in_the_reference(index, row):
    data = np.arange(12).reshape(6, 2)
    np.testing.assert_array_equal(np.asarray(ndd.tensor(data)[index]), data[row])
    b = ndd.batch([data, data + 100])
    assert [np.asarray(s).tolist() for s in b.slice[index]] == [
        data[row].tolist(),
        (data[row] + 100).tolist(),
    ]


def test_float_slice_bounds_and_per_sample_indices_are_rounded():
    data = np.arange(6) * 10
    t = ndd.tensor(data)
    np.testing.assert_array_equal(np.asarray(t[ndd.tensor(0.5) : ndd.tensor(3.5)]), data[1:4])
    np.testing.assert_array_equal(np.asarray(t[0.5:3.5]), data[0:3])
    b = ndd.batch([data, data])
    picked = b.slice[ndd.batch([np.float32(1.7), np.float32(-1.7)])]
    assert [np.asarray(s).item() for s in picked] == [20, 40]
    starts = b.slice[ndd.batch([np.float32(0.5), np.float32(1.5)]) :]
    assert [np.asarray(s).tolist() for s in starts] == [data[1:].tolist(), data[2:].tolist()]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_an_index_that_is_not_a_finite_number_is_refused(value):
    t = ndd.tensor(np.arange(6))
    for index in (value, ndd.tensor(np.float32(value)), np.float64(value)):
        with pytest.raises(IndexError, match=f"Tensor indexing: index {value} is not a finite number"):
            t[index]
    b = ndd.batch([np.arange(6), np.arange(6)])
    with pytest.raises(IndexError, match=f"Batch.slice: index {value} is not a finite number"):
        b.slice[ndd.batch([np.float32(0), np.float32(value)])]


@pytest.mark.parametrize(
    "samples, layout, expected",
    [
        ([np.zeros((2, 2), np.float32)] * 2, "HW", "NHW"),  # as the reference: N before the samples' layout
        ([np.float32(1)] * 2, None, "N"),
        ([np.zeros(2)] * 2, None, None),
    ],
)
def test_a_tensor_of_a_batch_has_the_samples_layout_behind_n(samples, layout, expected):
    b = ndd.batch(samples, layout=layout)
    assert ndd.tensor(b).layout == expected
    assert ndd.as_tensor(b).layout == expected
    assert ndd.tensor(b, layout="".join("ABC"[: b.ndim + 1]) or None).layout == ("ABC"[: b.ndim + 1] or None)


def test_data_of_a_type_ndd_lacks_is_refused_saying_what_to_do():
    with pytest.raises(TypeError, match=r"no ndd DType holds dtype\('complex64'\)"):
        ndd.tensor(np.ones(2, np.complex64))
    torch = pytest.importorskip("torch")
    for make in (ndd.tensor, ndd.as_tensor, lambda x: ndd.batch([x])):
        with pytest.raises(TypeError, match="a bfloat16 torch tensor cannot be read on the CPU: convert it"):
            make(torch.ones(2, dtype=torch.bfloat16))


def test_a_range_is_a_list_of_its_integers():
    # As in the reference: int32, like a list of Python ints.
    for make in (ndd.tensor, ndd.as_tensor):
        t = make(range(3))
        assert t.dtype == ndd.int32 and np.asarray(t).tolist() == [0, 1, 2]


def test_copy_deepcopy_and_pickle_of_a_tensor():
    import copy
    import pickle

    t = ndd.tensor(np.arange(6, dtype=np.uint8).reshape(2, 3), layout="HW")
    shallow = copy.copy(t)
    assert shallow is not t and np.shares_memory(np.asarray(shallow), np.asarray(t))
    deep = copy.deepcopy(t)
    assert not np.shares_memory(np.asarray(deep), np.asarray(t))
    loaded = pickle.loads(pickle.dumps(t))
    for other in (shallow, deep, loaded):
        assert other.dtype == ndd.uint8 and other.layout == "HW"
        np.testing.assert_array_equal(np.asarray(other), np.asarray(t))
    # A pending result copies as the result it will be.
    pending = ndd.flip(t, horizontal=1)
    np.testing.assert_array_equal(np.asarray(copy.copy(pending)), np.asarray(t)[:, ::-1])
    enum = pickle.loads(pickle.dumps(ndd.tensor(ndd.types.DALIImageType.BGR)))
    assert enum.dtype == ndd.ImageType and int(np.asarray(enum)) == 1


@pytest.mark.parametrize("version", [None, "2.1.0+cu121"])
def test_torch_conversions_name_what_to_install(monkeypatch, version):
    import sys
    import types

    if version is None:
        monkeypatch.setitem(sys.modules, "torch", None)  # not installed
        wanted = r"Tensor.torch\(\) needs PyTorch: pip install 'ndd\[torch\]'"
    else:
        monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(__version__=version))
        wanted = r"needs PyTorch 2.3 or newer, not 2.1.0\+cu121: pip install -U 'ndd\[torch\]'"
    with pytest.raises(RuntimeError, match=wanted):
        ndd.as_tensor(np.zeros(3)).torch()
    with pytest.raises(RuntimeError, match=wanted.replace("Tensor", "Batch")):
        ndd.as_batch([np.zeros(3)]).torch()
