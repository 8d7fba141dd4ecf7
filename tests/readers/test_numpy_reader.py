"""readers.Numpy: listing, exact values and element types, regions of interest
(against the reference's goldens), out-of-bounds policies, fill values, per-call
ROIs, sharding, and errors for bad files."""

import inspect
import json
import math
import os
import pathlib

import numpy as np
import pytest
from numpy_dataset import ARRAYS, LIST_TEXT, listing_index, make_array, make_listing_tree, write_arrays

import ndd
from ndd.readers import _npy_format

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent.parent / "golden" / "numpy_reader.json").read_text(encoding="utf-8")
)

# How a sample is read: through next_epoch (the ROI applied on the loading
# thread, from a memory map or from read() calls) or through calls (the ROI
# given to each call, cut out of the mapped file when the sample is taken).
STYLES = ["epoch_mmap", "epoch_read", "call"]


@pytest.fixture(scope="module")
def arrays(tmp_path_factory):
    # Shared by the tests of this module, which only read them.
    return write_arrays(str(tmp_path_factory.mktemp("arrays")))


@pytest.fixture
def tree(tmp_path):
    return make_listing_tree(str(tmp_path / "tree"))


def source(tensor):
    """The sample's ``source_info`` property: the path as listed."""
    return bytes(np.asarray(ndd.get_property(tensor, key="source_info"))).decode()


def expected_array(described):
    values = [float(v) if isinstance(v, str) else v for v in described["values"]]
    return np.array(values, dtype=described["dtype"]).reshape(described["shape"])


def assert_same(got, described):
    got = np.asarray(got)
    want = expected_array(described)
    assert got.dtype == want.dtype.newbyteorder("=")
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def read_one(path, style, args):
    """One sample of ``path`` read with the constructor arguments ``args``, in ``style``."""
    if style == "call":
        roi = {k: v for k, v in args.items() if k in ROI_NAMES}
        rest = {k: v for k, v in args.items() if k not in ROI_NAMES}
        return ndd.readers.Numpy(files=[path], **rest)(**roi)
    reader = ndd.readers.Numpy(files=[path], dont_use_mmap=style == "epoch_read", **args)
    (tensor,) = next(reader.next_epoch())
    return tensor


ROI_NAMES = {"roi_start", "rel_roi_start", "roi_end", "rel_roi_end", "roi_shape", "rel_roi_shape"}


# -- signature ----------------------------------------------------------------------


def parameters(function):
    return [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in inspect.signature(function).parameters.values()
        if p.name != "self"
    ]


def test_constructor_signature_matches_reference():
    assert parameters(ndd.readers.Numpy.__init__) == GOLDEN["signature"]


def test_call_signature_matches_reference():
    assert parameters(ndd.readers.Numpy.__call__) == GOLDEN["call_signature"]


def test_is_exported_from_readers():
    assert "Numpy" in ndd.readers.__all__
    assert ndd.readers.Numpy.__module__ == "ndd.readers.numpy_reader"


# -- listing --------------------------------------------------------------------------


@pytest.mark.parametrize("case", GOLDEN["listing"], ids=lambda c: json.dumps(c["args"]))
def test_listing_matches_reference(tree, tmp_path, case):
    args = dict(case["args"])
    if "file_list" in args:
        (tmp_path / args["file_list"]).write_text(LIST_TEXT)
        args["file_list"] = str(tmp_path / args["file_list"])
    if case["sources"] == "error":
        with pytest.raises(ValueError, match="ndd.readers.Numpy: the dataset is empty"):
            ndd.readers.Numpy(file_root=tree, **args)
        return
    reader = ndd.readers.Numpy(file_root=tree, **args)
    samples = [t for (t,) in reader.next_epoch()]
    assert [source(t) for t in samples] == case["sources"]
    # Each file holds its own number: the data is the listed file's.
    assert [int(np.asarray(t)[0]) for t in samples] == [listing_index(s) for s in case["sources"]]


def test_file_list_paths_are_relative_to_its_folder_without_file_root(tree):
    list_path = os.path.join(tree, "sub", "list.txt")
    with open(list_path, "w", encoding="utf-8") as fh:
        fh.write("c.npy\r\n\n../b.npy\n")  # a Windows line ending is not part of the path
    samples = [t for (t,) in ndd.readers.Numpy(file_list=list_path).next_epoch()]
    assert [source(t) for t in samples] == ["c.npy", "../b.npy"]
    assert [int(np.asarray(t)[0]) for t in samples] == [listing_index("sub/c.npy"), listing_index("b.npy")]


def test_absolute_files_ignore_file_root(tree, tmp_path):
    absolute = os.path.join(tree, "sub", "c.npy")
    reader = ndd.readers.Numpy(file_root=str(tmp_path), files=[absolute])
    (tensor,) = next(reader.next_epoch())
    assert source(tensor) == absolute
    assert int(np.asarray(tensor)[0]) == listing_index("sub/c.npy")


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({}, ValueError, "one of 'file_root', 'file_list' or 'files' is required"),
        ({"files": ["a.npy"], "file_list": "x.txt"}, ValueError, "'files' or 'file_list', not both"),
        ({"files": [1, 2]}, ValueError, "'files' must be a path or a list of paths"),
        (
            {"file_root": "/no/such/folder"},
            FileNotFoundError,
            "'file_root' folder '/no/such/folder' does not exist",
        ),
        (
            {"file_list": "/no/such/list.txt"},
            FileNotFoundError,
            "cannot read 'file_list' '/no/such/list.txt'",
        ),
        ({"files": []}, ValueError, r"the dataset is empty \('files' is empty\)"),
        (
            {"files": ["a.npy"], "out_of_bounds_policy": "clamp"},
            ValueError,
            "'out_of_bounds_policy' must be one of",
        ),
        ({"files": ["a.npy"], "use_o_direct": True}, ValueError, "'use_o_direct' needs dont_use_mmap=True"),
        ({"files": ["a.npy"], "roi_start": [1], "rel_roi_start": [0.5]}, ValueError, "mutually exclusive"),
        ({"files": ["a.npy"], "roi_end": [1], "roi_shape": [2]}, ValueError, "mutually exclusive"),
        ({"files": ["a.npy"], "roi_start": [1.5]}, ValueError, "'roi_start' must be a list of integers"),
    ],
)
def test_bad_arguments_raise_at_construction_naming_them(kwargs, error, message):
    with pytest.raises(error, match="ndd.readers.Numpy: .*" + message):
        ndd.readers.Numpy(**kwargs)


def test_gpu_device_is_refused_naming_it(arrays):
    # The reference reads on the GPU too; ndd has no GPU reading yet. Without a
    # GPU the device itself is refused first.
    with pytest.raises((ValueError, RuntimeError), match="gpu"):
        ndd.readers.Numpy(files=[os.path.join(arrays, "v5.npy")], device="gpu")


def test_lazy_init_lists_at_first_use(tmp_path):
    reader = ndd.readers.Numpy(file_root=str(tmp_path), lazy_init=True)
    np.save(tmp_path / "late.npy", np.arange(3))
    assert [source(t) for (t,) in reader.next_epoch()] == ["./late.npy"]


# -- values and element types ------------------------------------------------------------


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_values_element_type_and_shape_are_the_files(arrays, name, style):
    tensor = read_one(os.path.join(arrays, f"{name}.npy"), style, {})
    want = make_array(name)
    assert tensor.dtype == ndd.dtype(want.dtype)
    assert tensor.shape == want.shape
    assert tensor.layout in ("", None)
    got = np.asarray(tensor)
    np.testing.assert_array_equal(got, want)
    # Fortran-order files come out in C order, like every other array.
    assert got.flags.c_contiguous


@pytest.mark.parametrize("code, supported", sorted(GOLDEN["dtypes"].items()))
def test_element_types_read_as_by_reference(tmp_path, code, supported):
    arrays = {
        "object": np.array([1, "a"], dtype=object),
        "struct": np.zeros(3, dtype=[("a", "i4"), ("b", "f4")]),
    }
    array = arrays.get(code)
    if array is None:
        array = np.zeros((0, 3), np.float32) if code == "empty" else np.arange(6).astype(code).reshape(2, 3)
    path = str(tmp_path / "typed.npy")
    with open(path, "wb") as fh:
        np.save(fh, array, allow_pickle=True)
    reader = ndd.readers.Numpy(files=[path])
    if supported:
        got = np.asarray(reader())
        assert got.dtype == array.dtype
        np.testing.assert_array_equal(got, array)
    else:
        with pytest.raises(ValueError, match=f"ndd.readers.Numpy: '{path}' holds .* not supported"):
            reader()


def test_bool_and_every_numeric_type_map_to_the_ndd_types(tmp_path):
    for code in ["u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "f2", "f4", "f8", "b1"]:
        np.save(tmp_path / f"{code}.npy", np.ones(2, code))
    reader = ndd.readers.Numpy(file_root=str(tmp_path))
    types = {source(t): t.dtype for (t,) in reader.next_epoch()}
    assert types == {
        f"./{c}.npy": ndd.dtype(np.dtype(c))
        for c in ["b1", "f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]
    }


def test_samples_do_not_share_memory_with_the_file(tmp_path):
    path = os.path.join(write_arrays(str(tmp_path)), "v8.npy")
    header = _npy_format.read_npy_header(path, "test")
    kept = [np.asarray(read_one(path, style, {})) for style in STYLES]
    kept += [np.asarray(read_one(path, style, {"roi_start": [2]})) for style in STYLES]
    # Overwrite the data in place: a view of a memory map would change with it.
    with open(path, "r+b") as fh:
        fh.seek(header.data_offset)
        fh.write(np.full(8, -5, np.int32).tobytes())
    for array in kept:
        assert not isinstance(array, np.memmap)
        assert (array > 0).all()


def test_read_without_mmap_reads_only_the_rows_of_the_roi(arrays, monkeypatch):
    counts = []
    original = np.fromfile

    def counting_fromfile(fh, **kwargs):
        counts.append((os.path.basename(fh.name), kwargs["count"]))
        return original(fh, **kwargs)

    monkeypatch.setattr(_npy_format.np, "fromfile", counting_fromfile)
    path = os.path.join(arrays, "cube.npy")  # 5 x 7 x 6, C order: a row of axis 0 is 42 elements
    tensor = read_one(path, "epoch_read", {"roi_start": [1, 2, 1], "roi_end": [3, 5, 4]})
    np.testing.assert_array_equal(np.asarray(tensor), make_array("cube")[1:3, 2:5, 1:4])
    # (the loading thread reads the one file again and again, ahead of the consumer)
    assert {count for name, count in counts if name == "cube.npy"} == {2 * 42}
    path = os.path.join(arrays, "plane_f.npy")  # 4 x 5, Fortran order: axis 1 varies slowest
    tensor = read_one(
        path, "epoch_read", {"roi_start": [1, 3], "roi_end": [5, 6], "out_of_bounds_policy": "pad"}
    )
    want = np.zeros((4, 3), np.float32)
    want[:3, :2] = make_array("plane_f")[1:, 3:]
    np.testing.assert_array_equal(np.asarray(tensor), want)
    assert {count for name, count in counts if name == "plane_f.npy"} == {2 * 4}


def test_cached_headers_give_the_same_samples(arrays):
    files = [os.path.join(arrays, f"{n}.npy") for n in ("v5", "cube", "v5")]
    plain = ndd.readers.Numpy(files=files)
    cached = ndd.readers.Numpy(files=files, cache_header_information=True)
    for _ in range(2):
        for (a,), (b,) in zip(plain.next_epoch(), cached.next_epoch(), strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# -- regions of interest: the reference's goldens -------------------------------------------


def roi_id(case):
    return f"{case['array']}-" + ",".join(f"{k}={v}" for k, v in case["args"].items())


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("case", GOLDEN["roi"], ids=roi_id)
def test_roi_matches_reference(arrays, case, style):
    path = os.path.join(arrays, f"{case['array']}.npy")
    if case["expected"] == "error":
        # Bad arguments are refused at construction or at the call, a ROI that
        # does not fit the array when its sample is taken; always a ValueError.
        with pytest.raises(ValueError, match="ndd.readers.Numpy: "):
            read_one(path, style, case["args"])
        return
    assert_same(read_one(path, style, case["args"]), case["expected"])


def test_roi_errors_name_the_file_and_the_problem(arrays):
    path = os.path.join(arrays, "v8.npy")
    with pytest.raises(
        ValueError, match=rf"'{path}' \(shape \(8,\)\): the region of interest .* reaches outside"
    ):
        read_one(path, "epoch_mmap", {"roi_start": [6], "roi_end": [10]})
    with pytest.raises(ValueError, match="'roi_axes' value 1 is out of range for a 1-D array"):
        read_one(path, "call", {"roi_axes": [1], "roi_start": [2]})
    with pytest.raises(ValueError, match="'roi_start' has 2 values; expected 1 or 1"):
        read_one(path, "epoch_read", {"roi_start": [1, 2]})


@pytest.mark.parametrize("case", GOLDEN["fill"], ids=lambda c: f"{c['type']}-{c['fill_value']}")
def test_fill_value_conversion_matches_reference(arrays, case):
    path = os.path.join(arrays, f"fill_{case['type']}.npy")
    fill = float(case["fill_value"])
    got = read_one(
        path,
        "epoch_mmap",
        {"roi_start": [1], "roi_end": [2], "out_of_bounds_policy": "pad", "fill_value": fill},
    )
    assert_same(got, case["expected"])


@pytest.mark.parametrize("code", ["i1", "i4", "i8", "u1", "u8"])
def test_nan_fill_of_integers_is_zero(arrays, code):
    # The reference's result depends on the type and the processor (0, the
    # minimum, or 2**63); ndd uses 0 for all.
    path = os.path.join(arrays, f"fill_{code}.npy")
    got = read_one(
        path,
        "epoch_mmap",
        {"roi_start": [0], "roi_end": [2], "out_of_bounds_policy": "pad", "fill_value": math.nan},
    )
    np.testing.assert_array_equal(np.asarray(got), np.array([1, 0], code))


def test_roi_of_a_batch_from_next_epoch(arrays):
    files = [os.path.join(arrays, f"{n}.npy") for n in ("v5", "v10", "v20")]
    reader = ndd.readers.Numpy(3, files=files, rel_roi_start=[0.5], out_of_bounds_policy="pad")
    ((batch,),) = list(reader.next_epoch())
    assert [np.asarray(t).tolist() for t in batch] == [
        list(range(4, 6)),
        list(range(6, 11)),
        list(range(11, 21)),
    ]


# -- per-call regions of interest -------------------------------------------------------------


def as_roi_value(value):
    if isinstance(value, dict):
        kind = np.int32 if isinstance(value["batch"][0][0], int) else np.float32
        return ndd.as_batch([np.asarray(v, kind) for v in value["batch"]])
    return value


@pytest.mark.parametrize("scenario", GOLDEN["calls"], ids=lambda s: json.dumps(s["calls"][0]["roi"]))
def test_per_call_roi_matches_reference(arrays, scenario):
    files = [os.path.join(arrays, f"{name}.npy") for name in scenario["files"]]
    reader = ndd.readers.Numpy(scenario["max_batch_size"], files=files, **scenario["args"])
    for call in scenario["calls"]:
        roi = {k: as_roi_value(v) for k, v in call["roi"].items()}
        size = call.get("batch_size")
        if call["expected"] == "error":
            with pytest.raises(ValueError, match="cannot be given both to the constructor and to the call"):
                reader(batch_size=size, **roi)
            continue
        if size:
            batch = reader(batch_size=size, **roi)
            assert isinstance(batch, ndd.Batch) and batch.batch_size == size
            for tensor, described in zip(batch, call["expected"], strict=True):
                assert_same(tensor, described)
        else:
            tensor = reader(**roi)
            assert isinstance(tensor, ndd.Tensor)
            assert_same(tensor, call["expected"])


def test_one_call_value_is_used_for_every_axis(arrays):
    # The reference needs one value per axis in a call (unlike in the
    # constructor); ndd treats both alike.
    reader = ndd.readers.Numpy(files=[os.path.join(arrays, "cube.npy")])
    np.testing.assert_array_equal(np.asarray(reader(roi_start=[1])), make_array("cube")[1:, 1:, 1:])


def test_call_roi_accepts_tensors_and_arrays(arrays):
    reader = ndd.readers.Numpy(files=[os.path.join(arrays, "v8.npy")])
    assert np.asarray(reader(roi_start=ndd.tensor([2]), roi_end=np.array([4]))).tolist() == [3, 4]
    assert np.asarray(reader(rel_roi_start=np.float32(0.75))).tolist() == [7, 8]


def test_a_call_roi_that_does_not_fit_keeps_the_samples(arrays):
    files = [os.path.join(arrays, f"{n}.npy") for n in ("v10", "v5", "v8")]
    reader = ndd.readers.Numpy(2, files=files)
    with pytest.raises(ValueError, match=r"v5.npy' \(shape \(5,\)\): the region of interest"):
        reader(batch_size=2, roi_end=[7])
    batch = reader(batch_size=2, roi_end=[5])
    assert [np.asarray(t).tolist() for t in batch] == [[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]]
    assert [source(t) for t in batch.tensors] == files[:2]


def test_a_sample_the_constructor_roi_does_not_fit_is_skipped_in_calls(arrays):
    files = [os.path.join(arrays, f"{n}.npy") for n in ("v10", "v5", "v8", "v20")]
    reader = ndd.readers.Numpy(files=files, roi_end=[7])
    assert np.asarray(reader()).tolist() == list(range(1, 8))
    with pytest.raises(ValueError, match=r"v5.npy' \(shape \(5,\)\): the region of interest"):
        reader()
    assert [source(reader()) for _ in range(2)] == files[2:]
    # In a batch: the samples before and after the bad one are kept.
    reader = ndd.readers.Numpy(3, files=files[::-1], roi_end=[7])
    with pytest.raises(ValueError, match="v5.npy"):
        reader(batch_size=3)
    batch = reader(batch_size=3)
    assert [source(t) for t in batch.tensors] == [files[3], files[2], files[0]]
    assert [np.asarray(t).tolist() for t in batch] == [list(range(1, 8))] * 3


@pytest.mark.parametrize(
    "batch_size, roi, error, message",
    [
        (None, {"roi_start": ndd.as_batch([np.array([1]), np.array([2])])}, ValueError, "needs batch_size"),
        (
            2,
            {"roi_start": ndd.as_batch([np.array([1])] * 3)},
            ValueError,
            "'roi_start' has 3 samples; the call reads 2",
        ),
        (None, {"roi_start": [1], "rel_roi_start": [0.1]}, ValueError, "mutually exclusive"),
        (None, {"roi_start": "1"}, ValueError, "'roi_start' must be a list of numbers"),
    ],
)
def test_bad_call_arguments_raise_before_reading(arrays, batch_size, roi, error, message):
    reader = ndd.readers.Numpy(2, files=[os.path.join(arrays, f"{n}.npy") for n in ("v5", "v8")])
    with pytest.raises(error, match="ndd.readers.Numpy: .*" + message):
        reader(batch_size=batch_size, **roi)
    # Nothing was consumed.
    assert source(reader(batch_size=2).tensors[0]).endswith("v5.npy")


def test_call_rejects_arguments_that_are_not_per_sample(arrays):
    reader = ndd.readers.Numpy(files=[os.path.join(arrays, "v5.npy")])
    with pytest.raises(TypeError, match="fill_value"):
        reader(fill_value=3)


def test_samples_of_a_batch_must_share_element_type_and_dimensions(arrays):
    reader = ndd.readers.Numpy(2, files=[os.path.join(arrays, f"{n}.npy") for n in ("v5", "plane_f")])
    with pytest.raises(
        ValueError, match="one element type and number of dimensions: '.*v5.npy' is int32 1-D"
    ):
        reader(batch_size=2)
    reader = ndd.readers.Numpy(2, files=[os.path.join(arrays, f"{n}.npy") for n in ("v5", "cube")])
    with pytest.raises(ValueError, match="'.*cube.npy' is int32 3-D"):
        next(reader.next_epoch())


def test_next_epoch_takes_no_roi(arrays):
    reader = ndd.readers.Numpy(files=[os.path.join(arrays, "v5.npy")])
    with pytest.raises(TypeError, match="roi_start"):
        reader.next_epoch(roi_start=[1])


# -- sharding -----------------------------------------------------------------------------------


def test_shards_split_the_files_and_pad_the_last_batch(arrays):
    files = [os.path.join(arrays, f"{n}.npy") for n in ("v5", "v8", "v10", "v20", "cube")]
    seen = []
    for shard in range(2):
        reader = ndd.readers.Numpy(
            2, files=files, num_shards=2, shard_id=shard, pad_last_batch=True, roi_shape=[1], roi_axes=[0]
        )
        assert reader.get_metadata()["epoch_size"] == 5
        for (batch,) in reader.next_epoch():
            seen.append([source(t) for t in batch.tensors])
    # Shard 0 holds 2 files, shard 1 holds 3; both give 2 batches, padded with
    # the shard's last file.
    assert seen == [files[0:2], [files[1], files[1]], files[2:4], [files[4], files[4]]]


def test_restored_reader_continues_an_epoch_with_the_same_samples(arrays):
    files = [os.path.join(arrays, f"{n}.npy") for n in ("v5", "v8", "v10", "v20")]
    reader = ndd.readers.Numpy(files=files, roi_shape=[2], enable_checkpointing=True)
    epoch = reader.next_epoch()
    next(epoch), next(epoch)
    state = reader.get_state()
    rest = [np.asarray(t).tolist() for (t,) in epoch]
    restored = ndd.readers.Numpy(files=files, roi_shape=[2])
    restored.set_state(state)
    assert [np.asarray(t).tolist() for (t,) in restored.next_epoch()] == rest == [[1, 2]] * 2


def test_restored_reader_continues_the_calls(arrays):
    files = [os.path.join(arrays, f"{n}.npy") for n in ("v5", "v8", "v10")]
    reader = ndd.readers.Numpy(files=files, enable_checkpointing=True)
    reader(roi_end=[1])
    state = reader.get_state()
    restored = ndd.readers.Numpy(files=files)
    restored.set_state(state)
    got = [source(restored(roi_end=[2])) for _ in range(3)]
    assert got == [source(reader(roi_end=[2])) for _ in range(3)] == [files[1], files[2], files[0]]


# -- bad files ----------------------------------------------------------------------------------


def corrupt_files(folder):
    good = np.arange(10, dtype=np.int32)
    with open(os.path.join(folder, "good.npy"), "wb") as fh:
        np.save(fh, good)
    raw = pathlib.Path(folder, "good.npy").read_bytes()
    header_size = len(raw) - good.nbytes
    bad = {
        "truncated.npy": raw[:-8],
        "garbage.npy": b"hello, this is not an npy file" * 4,
        "empty.npy": b"",
        "header_only.npy": raw[:header_size],
        "bad_header.npy": raw[:10]
        + b"{'descr': <i4, 'shape': (10,)}".ljust(header_size - 10)
        + good.tobytes(),
        "version9.npy": raw[:6] + b"\x09\x00" + raw[8:],
    }
    for name, content in bad.items():
        pathlib.Path(folder, name).write_bytes(content)
    with open(os.path.join(folder, "object.npy"), "wb") as fh:
        np.save(fh, np.array([1, "a"], dtype=object), allow_pickle=True)
    with open(os.path.join(folder, "big_endian.npy"), "wb") as fh:
        np.save(fh, good.astype(">i4"))
    return {
        "truncated.npy": "is truncated: its header describes 40 bytes of data, the file holds 32",
        "garbage.npy": "is not a valid .npy file: it does not start with the .npy magic string",
        "empty.npy": "is not a valid .npy file",
        "header_only.npy": "is truncated: its header describes 40 bytes of data, the file holds 0",
        "bad_header.npy": r"is not a valid .npy file: the header is not a dict of \['descr', 'fortran_order', 'shape'\]",
        "version9.npy": "is not a valid .npy file: unknown format version 9.0",
        "object.npy": "holds elements of type object, which is not supported",
        "big_endian.npy": r"holds big-endian data \(>i4\), which is not supported",
    }


@pytest.mark.parametrize("style", STYLES)
def test_bad_files_raise_naming_them_and_other_samples_still_come(tmp_path, style):
    folder = str(tmp_path)
    problems = corrupt_files(folder)
    for name, message in problems.items():
        files = [os.path.join(folder, n) for n in ("good.npy", name, "good.npy")]
        reader = ndd.readers.Numpy(files=files, dont_use_mmap=style == "epoch_read")
        if style == "call":
            take = reader
        else:

            def take(reader=reader):
                return next(reader.next_epoch())[0]

        assert np.asarray(take()).tolist() == list(range(10))
        with pytest.raises(ValueError, match=f"ndd.readers.Numpy: '{files[1]}' {message}"):
            take()
        assert np.asarray(take()).tolist() == list(range(10))


def test_missing_file_raises_when_its_sample_is_taken(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(3))
    reader = ndd.readers.Numpy(files=[str(tmp_path / "gone.npy"), str(tmp_path / "a.npy")])
    with pytest.raises(FileNotFoundError, match="ndd.readers.Numpy: cannot read file '.*gone.npy'"):
        reader()
    assert np.asarray(reader()).tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    ("kwargs", "stick"), [({}, 0), ({"stick_to_shard": True}, 1), ({"shuffle_after_epoch": True}, 1)]
)
def test_metadata_reports_sticking_to_the_shard_as_the_reference_does(arrays, kwargs, stick):
    # The reference reports stick_to_shard 1 under shuffle_after_epoch, which keeps each
    # reader on its shard.
    files = [os.path.join(arrays, f"{n}.npy") for n in ("v5", "v8")]
    reader = ndd.readers.Numpy(files=files, **kwargs)
    assert reader.get_metadata()["stick_to_shard"] == stick
