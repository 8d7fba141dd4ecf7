"""readers.TFRecord and ndd.tfrecord: outputs against the reference's goldens
(tests/golden/tfrecord_reference.json, from make_tfrecord_goldens.py) and
against the values written, missing features, per-sample errors, index files,
sharding and batching."""

import inspect
import json
import pathlib
import re
import struct
import sys

import numpy as np
import pytest

pytest.importorskip("google.protobuf")

import tfrecord_dataset as tfds  # noqa: E402

import ndd  # noqa: E402
from ndd import tfrecord as tfrec  # noqa: E402
from ndd._prepare.args import InvalidArgumentError  # noqa: E402
from ndd.readers import tfrecord as tfrecord_module  # noqa: E402

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent.parent / "golden" / "tfrecord_reference.json").read_text(encoding="utf-8")
)
LABEL = {"label": tfrec.FixedLenFeature([], tfrec.int64, -1)}
RECORDS = [(name, i, e) for name, examples in tfds.EXAMPLES.items() for i, e in enumerate(examples)]


@pytest.fixture
def dataset(tmp_path):
    paths, indices = tfds.write_dataset(str(tmp_path))
    return paths, indices


def reader(dataset, features=None, *args, **kwargs):
    paths, indices = dataset
    features = tfds.feature_specs(tfrec) if features is None else features
    return ndd.readers.TFRecord(*args, path=paths, index_path=indices, features=features, **kwargs)


def described(tensor):
    array = np.asarray(tensor)
    return {"dtype": array.dtype.name, "shape": list(array.shape), "values": array.tolist()}


def outcomes(r, count):
    """``count`` samples taken one by one: the label, or the error message."""
    result = []
    for _ in range(count):
        try:
            result.append(int(np.asarray(r())))  # one feature: the call returns it bare
        except (ValueError, OSError) as exc:
            result.append(str(exc))
    return result


# -- API --------------------------------------------------------------------------------


def test_signature_matches_the_reference():
    params = inspect.signature(ndd.readers.TFRecord).parameters.values()
    got = [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in params
    ]
    assert got == GOLDEN["signature"]


def test_tfrecord_module_has_the_reference_names_and_type_values():
    public = {n for n in dir(tfrec) if not n.startswith("_")}
    assert set(GOLDEN["module_names"]) <= public
    assert {k: getattr(tfrec, k) for k in GOLDEN["dtype_values"]} == GOLDEN["dtype_values"]
    assert ndd.tfrecord is tfrec and "tfrecord" in ndd.__all__ and "TFRecord" in ndd.readers.__all__


def test_feature_specs_keep_shape_type_and_default():
    fixed = tfrec.FixedLenFeature([2, 3], tfrec.float32, 1)
    assert (fixed.shape, fixed.dtype, fixed.default_value, fixed.variable_length) == (
        (2, 3),
        tfrec.float32,
        1.0,
        False,
    )
    assert tfrec.FixedLenFeature((), tfrec.string, "x").default_value == b"x"
    assert tfrec.VarLenFeature(tfrec.int64, 0) == tfrec.VarLenFeature([], tfrec.int64, 0)
    assert tfrec.VarLenFeature([4], tfrec.float32, 0.0).shape == (4,)
    assert repr(tfrec.VarLenFeature([4], tfrec.float32, 0.0)) == "VarLenFeature([4], float32, 0.0)"


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda: tfrec.FixedLenFeature([], tfrec.int64, 1.5), TypeError),
        (lambda: tfrec.FixedLenFeature([], tfrec.float32, "1"), TypeError),
        (lambda: tfrec.FixedLenFeature([], tfrec.string, 0), TypeError),
        (lambda: tfrec.FixedLenFeature([], 7, 0), TypeError),
        (lambda: tfrec.FixedLenFeature([-1], tfrec.int64, 0), ValueError),
        (lambda: tfrec.FixedLenFeature("3", tfrec.int64, 0), TypeError),
        (lambda: tfrec.VarLenFeature(tfrec.int64), TypeError),
        (lambda: tfrec.VarLenFeature([2.5], tfrec.int64, 0), TypeError),
    ],
)
def test_bad_feature_specs_raise(make, error):
    with pytest.raises(error, match="ndd.tfrecord"):
        make()


# -- outputs ------------------------------------------------------------------------------


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_samples_match_the_reference(dataset, dont_use_mmap):
    r = reader(dataset, dont_use_mmap=dont_use_mmap)
    got = [{name: described(t) for name, t in s.items()} for s in r.next_epoch()]
    assert got == GOLDEN["samples"]
    # The outputs are the reader's own arrays, not views of the mapped file.
    sample = list(r.next_epoch())[0]
    assert all(np.asarray(t).flags.writeable for t in sample.values())


@pytest.mark.parametrize("position", range(len(RECORDS)))
def test_samples_hold_the_written_values(dataset, position):
    _, _, example = RECORDS[position]
    sample = list(reader(dataset).next_epoch())[position]
    assert list(sample) == list(tfds.feature_specs(tfrec))
    np.testing.assert_array_equal(np.asarray(sample["label"]), np.int64(example["label"][1][0]))
    assert sample["label"].shape == () and sample["label"].dtype == ndd.int64
    assert bytes(np.asarray(sample["image"])) == example["image"][1][0]
    assert sample["image"].dtype == ndd.uint8
    np.testing.assert_array_equal(
        np.asarray(sample["matrix"]), np.float32(example["matrix"][1]).reshape(2, 2), strict=True
    )
    np.testing.assert_array_equal(np.asarray(sample["tokens"]), np.int64(example["tokens"][1]), strict=True)
    pairs = np.float32(example["pairs"][1]).reshape(-1, 2)
    np.testing.assert_array_equal(np.asarray(sample["pairs"]), pairs, strict=True)


def test_missing_features_give_the_default_or_an_empty_output(dataset):
    # The reference returns uninitialised memory here; ndd fills in the
    # fixed-length default and gives variable-length features no elements.
    specs = tfds.missing_feature_specs(tfrec)
    samples = list(reader(dataset, {**LABEL, **specs}).next_epoch())
    for (_, _, example), sample in zip(RECORDS, samples, strict=True):
        weight = example["weight"][1] if "weight" in example else [7.5]
        np.testing.assert_array_equal(np.asarray(sample["weight"]), np.float32(weight), strict=True)
        np.testing.assert_array_equal(np.asarray(sample["absent"]), np.full((2, 2), 3, np.int64), strict=True)
        assert bytes(np.asarray(sample["absent_text"])) == b"none"
        np.testing.assert_array_equal(np.asarray(sample["absent_list"]), np.empty(0, np.int64), strict=True)
        np.testing.assert_array_equal(
            np.asarray(sample["absent_pairs"]), np.empty((0, 2), np.float32), strict=True
        )


def test_a_call_with_one_feature_returns_it_bare_as_the_reference(dataset):
    # Iterating an epoch still yields dicts.
    r = reader(dataset, LABEL, 2)
    sample = r()
    assert isinstance(sample, ndd.Tensor) and str(sample.dtype) == "i64"
    batch = reader(dataset, LABEL, 2)(batch_size=2)
    assert isinstance(batch, ndd.Batch) and batch.batch_size == 2
    first = next(iter(reader(dataset, LABEL, 2).next_epoch()))
    assert isinstance(first, dict) and list(first) == ["label"]
    assert int(np.asarray(sample)) == int(np.asarray(first["label"].select(0)))
    two = reader(dataset, {**LABEL, "name": tfrec.FixedLenFeature([], tfrec.string, "")}, 2)
    assert isinstance(two(), dict)


def test_batches_are_dicts_of_batches_matching_the_reference(dataset):
    features = {**LABEL, "name": tfrec.FixedLenFeature([], tfrec.string, "")}
    r = reader(dataset, features, 3)
    got = []
    for _ in range(2):
        for batch in r.next_epoch():
            assert isinstance(batch, dict) and all(isinstance(b, ndd.Batch) for b in batch.values())
            got.append(
                {k: [np.asarray(b.select(i)).tolist() for i in range(b.batch_size)] for k, b in batch.items()}
            )
    assert got == GOLDEN["batches"]


@pytest.mark.parametrize("shard", range(3))
def test_shards_match_the_reference(dataset, shard):
    r = reader(dataset, LABEL, num_shards=3, shard_id=shard)
    assert [int(np.asarray(s["label"])) for s in r.next_epoch()] == GOLDEN["shards"][f"3/{shard}"]


def test_shards_split_the_records_between_them(dataset):
    labels = [
        int(np.asarray(s["label"]))
        for shard in range(2)
        for s in reader(dataset, LABEL, num_shards=2, shard_id=shard, stick_to_shard=True).next_epoch()
    ]
    assert labels == [e["label"][1][0] for _, _, e in RECORDS]


def test_source_info_names_the_file_and_offset_like_the_reference(dataset):
    folder = str(pathlib.Path(dataset[0][0]).parent)
    got = [
        bytes(np.asarray(ndd.get_property(s["label"], key="source_info"))).decode().replace(folder, "<dir>")
        for s in reader(dataset, LABEL).next_epoch()
    ]
    assert got == GOLDEN["source_info"]


def test_metadata_counts_the_indexed_records(dataset):
    meta = reader(dataset, LABEL).get_metadata()
    assert meta["epoch_size"] == len(RECORDS) == 7


# -- index files ------------------------------------------------------------------------------


def test_create_index_writes_the_offsets_and_sizes_of_the_records(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    spans = tfds.write_tfrecord(path, [tfds.encode_example(e) for e in tfds.EXAMPLES["first.tfrecord"]])
    assert tfrec.create_index(path, tmp_path / "data.idx") == len(spans)
    assert (tmp_path / "data.idx").read_text(encoding="utf-8") == "".join(f"{o} {s}\n" for o, s in spans)


def test_create_index_rejects_a_truncated_file(tmp_path):
    path = tmp_path / "data.tfrecord"
    path.write_bytes(tfds.frame_record(b"abc") + tfds.frame_record(b"defg")[:-2])
    with pytest.raises(ValueError, match="ends inside the record at offset 19"):
        tfrec.create_index(path, tmp_path / "data.idx")


def test_an_index_lists_the_records_read(dataset, tmp_path):
    paths, indices = dataset
    lines = pathlib.Path(indices[0]).read_text(encoding="utf-8").splitlines()
    short = tmp_path / "short.idx"
    short.write_text(f"{lines[2]}\n\n{lines[0]}\n")
    r = ndd.readers.TFRecord(path=paths[:1], index_path=str(short), features=LABEL)
    assert [int(np.asarray(s["label"])) for s in r.next_epoch()] == [-1, -3]


@pytest.mark.parametrize(
    "text, message",
    # A byte that is not UTF-8 (0xb0) made the listing fail with UnicodeDecodeError.
    [
        ("12\n", "line 1 "),
        ("0 10\nzero 5\n", "line 2 "),
        ("-4 10\n", "line 1 "),
        ("0 10\n1\xb05 3\n", "line 2 "),
    ],
)
def test_a_malformed_index_is_refused_at_construction(dataset, tmp_path, text, message):
    index = tmp_path / "bad.idx"
    index.write_bytes(text.encode("latin-1"))
    with pytest.raises(
        ValueError, match=f"ndd.readers.TFRecord: {message}of index file .*bad.idx' must be 'offset size'"
    ):
        ndd.readers.TFRecord(path=dataset[0][:1], index_path=[str(index)], features=LABEL)


def test_missing_files_are_named(dataset, tmp_path):
    paths, indices = dataset
    with pytest.raises(FileNotFoundError, match="index file .*nope.idx' does not exist.*create_index"):
        ndd.readers.TFRecord(path=paths[:1], index_path=[str(tmp_path / "nope.idx")], features=LABEL)
    with pytest.raises(FileNotFoundError, match="TFRecord file .*nope.tfrecord' does not exist"):
        ndd.readers.TFRecord(path=[str(tmp_path / "nope.tfrecord")], index_path=indices[:1], features=LABEL)


# -- argument errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"index_path": "ONE"}, "one index file per TFRecord file"),
        ({"features": {}}, "'features' must be a non-empty dict"),
        ({"features": {"label": 3}}, "must be made by ndd.tfrecord"),
        ({"features": {1: LABEL["label"]}}, "keys must be feature names"),
        ({"features": {"words": tfrec.VarLenFeature(tfrec.string, "")}}, "not VarLenFeature"),
        (
            {"features": {"name": tfrec.FixedLenFeature([2], tfrec.string, "")}},
            r"shape must be \[\] or \[1\]",
        ),
        ({"use_o_direct": True}, "'use_o_direct' needs 'dont_use_mmap'=True"),
        ({"path": 5}, "'path' must be a path or a non-empty list"),
    ],
)
def test_bad_arguments_raise_at_construction(dataset, kwargs, message):
    paths, indices = dataset
    args = {"path": paths, "index_path": indices, "features": LABEL, **kwargs}
    if args["index_path"] == "ONE":
        args["index_path"] = indices[0]
    with pytest.raises(InvalidArgumentError, match=message):
        ndd.readers.TFRecord(**args)


def test_use_o_direct_with_dont_use_mmap_reads_normally(dataset):
    r = reader(dataset, LABEL, use_o_direct=True, dont_use_mmap=True)
    assert [int(np.asarray(s["label"])) for s in r.next_epoch()] == [e["label"][1][0] for _, _, e in RECORDS]


def test_missing_protobuf_is_reported_with_the_package_name(dataset, monkeypatch):
    tfrecord_module._message_classes.cache_clear()
    monkeypatch.setitem(sys.modules, "google.protobuf", None)
    try:
        with pytest.raises(ImportError, match="pip install protobuf"):
            reader(dataset, LABEL)
    finally:
        tfrecord_module._message_classes.cache_clear()


# -- per-sample errors ------------------------------------------------------------------------


def rewrite_first_file(dataset, tmp_path, edit, spans_edit=None):
    """A copy of the first file changed by ``edit(bytearray, spans)``, with its index."""
    paths, indices = dataset
    data = bytearray(pathlib.Path(paths[0]).read_bytes())
    spans = [
        tuple(map(int, line.split()))
        for line in pathlib.Path(indices[0]).read_text(encoding="utf-8").splitlines()
    ]
    data = edit(data, spans)
    path = tmp_path / "edited.tfrecord"
    path.write_bytes(bytes(data))
    tfds.write_index(str(path) + ".idx", spans if spans_edit is None else spans_edit(spans, len(data)))
    return [str(path)], [str(path) + ".idx"], spans


def flip(position):
    def edit(data, spans):
        offset = spans[1][0]
        data[offset + position(spans[1][1])] ^= 0xFF
        return data

    return edit


@pytest.mark.parametrize(
    "edit, spans_edit, message",
    [
        (flip(lambda size: 12), None, "corrupted record .*checksum of its data"),
        (flip(lambda size: size - 1), None, "corrupted record .*checksum of its data"),
        (flip(lambda size: 3), None, "corrupted record .*checksum of its length"),
        (
            lambda data, spans: (
                data[: spans[1][0]] + tfds.frame_record(b"\xff\xff\xff\xff") + data[sum(spans[1]) :]
            ),
            lambda spans, n: [
                spans[0],
                (spans[1][0], 20),
                *[(o - spans[1][1] + 20, s) for o, s in spans[2:]],
            ],
            "not a tf.train.Example",
        ),
        (
            lambda data, spans: data,
            lambda spans, n: [spans[0], (n + 100, 40), *spans[2:]],
            "points past the end",
        ),
        (
            lambda data, spans: data,
            lambda spans, n: [spans[0], (spans[1][0], spans[1][1] + 8), *spans[2:]],
            "the index says the record has",
        ),
    ],
    ids=["data", "data_crc", "length_crc", "protobuf", "past_end", "index_size"],
)
@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_a_bad_record_fails_its_sample_only(dataset, tmp_path, edit, spans_edit, message, dont_use_mmap):
    if "checksum" in message:
        # The reference does not check checksums (GOLDEN["errors"]["corrupted_crc_only"]).
        pytest.importorskip("google_crc32c")
    paths, indices, spans = rewrite_first_file(dataset, tmp_path, edit, spans_edit)
    r = ndd.readers.TFRecord(path=paths, index_path=indices, features=LABEL, dont_use_mmap=dont_use_mmap)
    got = outcomes(r, 4)
    assert got[0] == -3 and got[2:] == [-1, 0]
    assert isinstance(got[1], str)
    assert got[1].startswith(f"ndd.readers.TFRecord: '{paths[0]}', record at offset ")
    assert re.search(message, got[1]), got[1]


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_a_truncated_file_fails_the_cut_records_only(dataset, tmp_path, dont_use_mmap):
    paths, indices, spans = rewrite_first_file(
        dataset, tmp_path, lambda data, spans: data[: spans[2][0] + 10]
    )
    r = ndd.readers.TFRecord(path=paths, index_path=indices, features=LABEL, dont_use_mmap=dont_use_mmap)
    got = outcomes(r, 5)
    assert got[:2] == [-3, -2] and got[4] == -3
    assert f"record at offset {spans[2][0]}: the record is truncated" in got[2]
    assert f"record at offset {spans[3][0]}: the index points past the end" in got[3]


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            tfrec.FixedLenFeature([2], tfrec.int64, 0),
            r"feature 'shape' has 3 values, FixedLenFeature\(\[2\]\) needs 2",
        ),
        (tfrec.FixedLenFeature([4], tfrec.int64, 0), "has 3 values"),
        (tfrec.VarLenFeature([2], tfrec.int64, 0), r"3 values, not a multiple of partial_shape \[2\]"),
        (tfrec.FixedLenFeature([3], tfrec.float32, 0.0), "holds int64 values, its spec asks for float32"),
        (tfrec.FixedLenFeature([], tfrec.string, ""), "holds int64 values, its spec asks for string"),
    ],
)
def test_a_feature_that_does_not_fit_its_spec_fails_each_sample(dataset, spec, message):
    r = reader(dataset, {**LABEL, "shape": spec})
    for _ in RECORDS:
        with pytest.raises(ValueError, match=message) as info:
            r()
        assert re.match(r"ndd.readers.TFRecord: '.*\.tfrecord', record at offset \d+: ", str(info.value))


def test_a_string_feature_with_several_values_fails(tmp_path):
    path = str(tmp_path / "w.tfrecord")
    spans = tfds.write_tfrecord(path, [tfds.encode_example({"words": ("bytes", [b"a", b"b"])})])
    tfds.write_index(path + ".idx", spans)
    r = ndd.readers.TFRecord(
        path=path, index_path=path + ".idx", features={"words": tfrec.FixedLenFeature([], tfrec.string, "")}
    )
    with pytest.raises(ValueError, match="feature 'words' holds 2 strings, its spec reads one"):
        r()


def test_record_framing_is_little_endian_length_and_masked_crc():
    record = tfds.frame_record(b"xyz")
    assert struct.unpack_from("<Q", record)[0] == 3 and len(record) == 12 + 3 + 4
    # Known value: CRC-32C of "123456789" is 0xE3069283.
    assert tfds.crc32c(b"123456789") == 0xE3069283


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_a_bad_record_in_a_batch_read_at_once_fails_alone(tmp_path, dont_use_mmap):
    # Neighbouring records are read with one read; a record whose index entry is
    # wrong fails alone, the others keep their values and their order.
    path = str(tmp_path / "run.tfrecord")
    spans = tfds.write_tfrecord(path, [tfds.encode_example({"label": ("int64", [i])}) for i in range(10)])
    offset, size = spans[5]
    spans[5] = (offset, size + 1)
    tfds.write_index(path + ".idx", spans)
    r = ndd.readers.TFRecord(path=path, index_path=path + ".idx", features=LABEL, dont_use_mmap=dont_use_mmap)

    def batch():
        return np.asarray(ndd.as_tensor(r(batch_size=4))).tolist()

    assert batch() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match=rf"'.*run.tfrecord', record at offset {offset}: the index says"):
        r(batch_size=4)
    assert batch() == [4, 6, 7, 8]
    assert batch() == [9, 0, 1, 2]


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_an_empty_file_fails_each_indexed_record(tmp_path, dont_use_mmap):
    path = tmp_path / "empty.tfrecord"
    path.write_bytes(b"")
    tfds.write_index(str(path) + ".idx", [(0, 20), (20, 20)])
    r = ndd.readers.TFRecord(
        path=str(path), index_path=str(path) + ".idx", features=LABEL, dont_use_mmap=dont_use_mmap
    )
    for offset in (0, 20):
        with pytest.raises(ValueError, match=f"record at offset {offset}: the index points past the end"):
            r()
