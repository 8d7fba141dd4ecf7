"""readers.Caffe and readers.Caffe2: outputs against the reference's goldens
(tests/golden/caffe_reference.json, from make_caffe_goldens.py), the label
types the reference cannot read, sharding, batching, errors and signatures."""

import inspect
import json
import multiprocessing
import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("lmdb")
pytest.importorskip("google.protobuf")

import caffe_dataset as cd  # noqa: E402

import ndd  # noqa: E402

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent.parent / "golden" / "caffe_reference.json").read_text(encoding="utf-8")
)


def described(sample, folder):
    """One sample's outputs in the goldens' form."""
    return [
        {
            "dtype": str(t.dtype),
            "shape": list(t.shape),
            "values": np.asarray(t).ravel().tolist(),
            "source_info": bytes(np.asarray(ndd.get_property(t, key="source_info")))
            .decode()
            .replace(folder, "<db>"),
        }
        for t in sample
    ]


def assert_epoch_matches(reader, folder, expected):
    got = [described(sample, folder) for sample in reader.next_epoch()]
    assert len(got) == len(expected)
    for got_sample, want_sample in zip(got, expected, strict=True):
        for got_out, want_out in zip(got_sample, want_sample, strict=True):
            # The reference attaches source_info to the image only; ndd to every output.
            if not want_out["source_info"]:
                got_out["source_info"] = ""
            assert got_out == want_out


def reference_parameters(name):
    return [(p["name"], p["kind"], p["required"]) for p in GOLDEN["signatures"][name]]


def parameters(cls):
    return [
        (p.name, p.kind.name, p.default is inspect.Parameter.empty)
        for p in inspect.signature(cls).parameters.values()
    ]


@pytest.fixture
def caffe_db(tmp_path):
    folder = str(tmp_path / "caffe_db")
    cd.write_caffe_db(folder)
    return folder


# -- Caffe ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Caffe", "Caffe2"])
def test_signature_matches_the_reference(name):
    assert parameters(getattr(ndd.readers, name)) == reference_parameters(name)


@pytest.mark.parametrize(
    "case, kwargs",
    [("default", {}), ("image_only", {"label_available": False}), ("label_only", {"image_available": False})],
)
def test_caffe_outputs_match_the_reference(caffe_db, case, kwargs):
    assert_epoch_matches(ndd.readers.Caffe(path=caffe_db, **kwargs), caffe_db, GOLDEN["caffe"][case])


def test_caffe_reads_in_key_order_the_datum_bytes_and_labels(caffe_db):
    by_key = dict(zip(cd.caffe_keys(7), cd.caffe_samples(), strict=True))
    expected = [by_key[key] for key in sorted(by_key)]
    got = list(ndd.readers.Caffe(path=caffe_db).next_epoch())
    assert [bytes(np.asarray(image)) for image, _ in got] == [s["data"] for s in expected]
    assert [np.asarray(label).tolist() for _, label in got] == [[s["label"]] for s in expected]
    image, label = got[0]
    assert image.dtype == ndd.uint8 and image.ndim == 1
    assert label.dtype == ndd.int32 and label.shape == (1,)


def test_caffe_datum_without_data_or_label_gives_empty_outputs(tmp_path):
    folder = str(tmp_path / "db")
    cd.write_lmdb(
        folder,
        [
            (b"a", cd.encode_datum(float_data=[1.5, 2.5], label=1)),
            (b"b", cd.encode_datum(data=b"xyz")),
            (b"c", b""),
        ],
    )
    assert_epoch_matches(ndd.readers.Caffe(path=folder), folder, GOLDEN["caffe"]["missing_fields"])


def test_caffe_shards_rotate_per_epoch_like_the_reference(caffe_db):
    reader = ndd.readers.Caffe(path=caffe_db, num_shards=3, shard_id=1, image_available=False)
    got = [[int(np.asarray(label)[0]) for (label,) in reader.next_epoch()] for _ in range(3)]
    assert got == GOLDEN["caffe_shards"]
    assert reader.get_metadata()["epoch_size"] == 7


def test_caffe_batches_are_ragged_images_and_dense_labels(caffe_db):
    pytest.importorskip("torch")  # the dense batches are read with .torch()
    images, labels = next(iter(ndd.readers.Caffe(path=caffe_db).next_epoch(batch_size=3)))
    assert images.batch_size == 3
    assert [t.shape for t in images.tensors] == [(18,), (18,), (54,)]
    assert np.asarray(labels.torch()).tolist() == [[3], [-2], [2]]


def test_caffe_reads_several_databases_one_after_the_other(tmp_path):
    first, second = str(tmp_path / "first"), str(tmp_path / "second")
    cd.write_lmdb(first, [(b"b", cd.encode_datum(label=2)), (b"a", cd.encode_datum(label=1))])
    cd.write_lmdb(second, [(b"a", cd.encode_datum(label=3))])
    reader = ndd.readers.Caffe(path=[first, second], image_available=False)
    got = [
        (int(np.asarray(label)[0]), ndd.get_property(label, key="source_info"))
        for (label,) in reader.next_epoch()
    ]
    assert [label for label, _ in got] == [1, 2, 3]
    sources = [bytes(np.asarray(info)).decode() for _, info in got]
    assert sources == [f"{first} at key a", f"{first} at key b", f"{second} at key a"]


def test_caffe_missing_or_non_lmdb_folder_raises_at_construction(tmp_path):
    with pytest.raises(
        FileNotFoundError, match=r"ndd.readers.Caffe: 'path' LMDB folder '.*nope' does not exist"
    ):
        ndd.readers.Caffe(path=str(tmp_path / "nope"))
    (tmp_path / "empty_folder").mkdir()
    with pytest.raises(
        ValueError, match=r"ndd.readers.Caffe: 'path' '.*empty_folder' is not a readable LMDB"
    ):
        ndd.readers.Caffe(path=str(tmp_path / "empty_folder"))
    cd.write_lmdb(tmp_path / "no_records", [])
    with pytest.raises(ValueError, match="the dataset is empty"):
        ndd.readers.Caffe(path=str(tmp_path / "no_records"))


def test_caffe_malformed_record_raises_naming_the_key_and_other_samples_still_come(tmp_path):
    folder = str(tmp_path / "db")
    cd.write_lmdb(
        folder,
        [(b"a", cd.encode_datum(label=1)), (b"b", b"\xff\xff\xff"), (b"c", cd.encode_datum(label=3))],
    )
    reader = ndd.readers.Caffe(path=folder, image_available=False)
    assert np.asarray(reader()).tolist() == [1]
    with pytest.raises(
        ValueError, match=r"ndd.readers.Caffe: record '.*db at key b' \(3 bytes\) is not a valid"
    ):
        reader()
    assert np.asarray(reader()).tolist() == [3]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"image_available": False, "label_available": False}, "would have no outputs"),
        ({"path": []}, "'path' must be a path or a non-empty list of paths"),
        ({"path": 3}, "'path' must be a path or a non-empty list of paths"),
    ],
)
def test_caffe_bad_arguments_raise_naming_them(caffe_db, kwargs, message):
    with pytest.raises(ValueError, match=message):
        ndd.readers.Caffe(**{"path": caffe_db, **kwargs})


def test_caffe_has_no_shuffle_after_epoch(caffe_db):
    with pytest.raises(TypeError, match="unexpected keyword argument 'shuffle_after_epoch'"):
        ndd.readers.Caffe(path=caffe_db, shuffle_after_epoch=True)


def test_missing_lmdb_package_is_named(caffe_db, monkeypatch):
    monkeypatch.setitem(sys.modules, "lmdb", None)
    with pytest.raises(ImportError, match="ndd.readers.Caffe needs the 'lmdb' package: pip install lmdb"):
        ndd.readers.Caffe(path=caffe_db)


def test_caffe_state_restores_the_position(caffe_db):
    reader = ndd.readers.Caffe(path=caffe_db, image_available=False, enable_checkpointing=True)
    reader()
    reader()
    restored = ndd.readers.Caffe(path=caffe_db, image_available=False)
    restored.set_state(reader.get_state())
    assert [np.asarray(restored()).tolist() for _ in range(3)] == [[2], [7], [5]]


# -- Caffe2 -----------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(cd.caffe2_cases()))
def test_caffe2_outputs_match_the_reference(tmp_path, case):
    kwargs, records = cd.caffe2_cases()[case]
    folder = str(tmp_path / "db")
    cd.write_caffe2_db(folder, records)
    assert_epoch_matches(ndd.readers.Caffe2(path=folder, **kwargs), folder, GOLDEN["caffe2"][case])


def caffe2_reader(tmp_path, records, **kwargs):
    folder = str(tmp_path / "db")
    cd.write_caffe2_db(folder, records)
    return ndd.readers.Caffe2(path=folder, **kwargs)


IMAGE = cd.encode_tensor(data_type=cd.STRING, string_data=[b"img"])


def ints(*values):
    return cd.encode_tensor(dims=[len(values)], data_type=cd.INT32, int32_data=list(values))


def floats(*values):
    return cd.encode_tensor(dims=[len(values)], data_type=cd.FLOAT, float_data=list(values))


@pytest.mark.parametrize("kind, dtype", [(ints, np.int32), (floats, np.float32)])
def test_caffe2_sparse_labels_become_a_multi_hot_vector(tmp_path, kind, dtype):
    # The reference fails on this label type (it sizes the output without a type).
    records = [cd.encode_tensor_protos([IMAGE, kind(1, 3)]), cd.encode_tensor_protos([IMAGE, kind()])]
    reader = caffe2_reader(tmp_path, records, label_type=cd.MULTI_LABEL_SPARSE, num_labels=5)
    labels = [np.asarray(label) for _, label in reader.next_epoch()]
    assert [label.dtype for label in labels] == [dtype, dtype]
    assert [label.tolist() for label in labels] == [[0, 1, 0, 1, 0], [0, 0, 0, 0, 0]]


def test_caffe2_weighted_sparse_labels_put_the_weights_at_the_indices(tmp_path):
    # The reference consumes only the indices tensor and then fails on the weights.
    records = [cd.encode_tensor_protos([IMAGE, ints(0, 2), floats(0.25, 0.75)])]
    reader = caffe2_reader(tmp_path, records, label_type=cd.MULTI_LABEL_WEIGHTED_SPARSE, num_labels=4)
    _, label = reader()
    assert label.dtype == ndd.float32
    assert np.asarray(label).tolist() == [0.25, 0, 0.75, 0]


def test_caffe2_without_image_or_label_drops_those_outputs(tmp_path):
    # The reference's dynamic mode fails on both layouts (it expects more outputs).
    reader = caffe2_reader(tmp_path, [cd.encode_tensor_protos([ints(4)])], image_available=False)
    label = reader()  # one output: returned alone, as in the reference
    assert np.asarray(label).tolist() == [4]
    reader = caffe2_reader(tmp_path / "b", [cd.encode_tensor_protos([IMAGE])], label_type=cd.NO_LABEL)
    image = reader()
    assert bytes(np.asarray(image)) == b"img"


@pytest.mark.parametrize(
    "record, kwargs, message",
    [
        ([IMAGE], {}, r"holds 1 tensors, expected 2 \(image, label\)"),
        ([IMAGE, ints(1), ints(2)], {}, r"holds 3 tensors, expected 2"),
        ([IMAGE, ints(1, 2)], {}, "a single label .* must hold one value, got 2"),
        ([IMAGE, ints(7)], {"label_type": cd.MULTI_LABEL_SPARSE, "num_labels": 5}, r"label index 7 is outside \[0, num_labels=5\)"),
        ([IMAGE, floats(0.5)], {"label_type": cd.MULTI_LABEL_SPARSE, "num_labels": 5}, "label indices must be whole numbers"),
        ([IMAGE, ints(0, 1), floats(0.5)], {"label_type": cd.MULTI_LABEL_WEIGHTED_SPARSE, "num_labels": 5}, "2 label indices but 1 label weights"),
        ([IMAGE, ints(1), ints(1, 2, 3)], {"bbox": True}, "the bbox tensor must hold 4 INT32 values"),
        ([IMAGE, ints(1), floats(1, 2, 3, 4)], {"bbox": True}, "the bbox tensor must hold 4 INT32 values; it is FLOAT"),
        ([floats(1.0), ints(1)], {}, "the image tensor is FLOAT; expected STRING"),
        ([cd.encode_tensor(data_type=cd.STRING), ints(1)], {}, r"the image tensor \(STRING\) holds no string"),
        ([cd.encode_tensor(dims=[2, 2, 1], data_type=cd.BYTE, byte_data=b"abcdef"), ints(1)], {}, r"the image holds 6 bytes, its dims \[2, 2, 1\] need 4"),
        ([cd.encode_tensor(dims=[6], data_type=cd.BYTE, byte_data=b"abcdef"), ints(1)], {}, r"a BYTE image needs dims \(H, W\) or \(H, W, C\), got \[6\]"),
        ([IMAGE, cd.encode_tensor(data_type=cd.BYTE, byte_data=b"x")], {}, "the label tensor is BYTE; expected FLOAT or INT32"),
        ([IMAGE, ints(1), cd.encode_tensor(data_type=10)], {"additional_inputs": 1}, "the additional input 0 tensor is INT64"),
    ],
)  # fmt: skip
def test_caffe2_bad_record_raises_naming_the_key_and_other_samples_still_come(
    tmp_path, record, kwargs, message
):
    good = cd.encode_tensor_protos(
        [IMAGE, ints(0, 1) if kwargs.get("label_type") == cd.MULTI_LABEL_WEIGHTED_SPARSE else ints(1)]
        + [floats(0.5, 0.5)] * (kwargs.get("label_type") == cd.MULTI_LABEL_WEIGHTED_SPARSE)
        + [ints(1)] * kwargs.get("additional_inputs", 0)
        + [ints(1, 2, 3, 4)] * kwargs.get("bbox", False)
    )
    reader = caffe2_reader(tmp_path, [good, cd.encode_tensor_protos(record), good], **kwargs)
    reader()
    with pytest.raises(ValueError, match=f"ndd.readers.Caffe2: record '.*db at key 0001': {message}"):
        reader()
    assert len(reader()) == len(reader._output_types())


def test_caffe2_malformed_protobuf_raises_naming_the_key(tmp_path):
    good = cd.encode_tensor_protos([IMAGE, ints(1)])
    reader = caffe2_reader(tmp_path, [b"\xff\xff", good])
    with pytest.raises(
        ValueError, match=r"record '.*db at key 0000' \(2 bytes\) is not a valid caffe2.TensorProtos"
    ):
        reader()
    assert np.asarray(reader()[1]).tolist() == [1]


def test_caffe2_output_types_come_from_the_first_record_and_must_agree(tmp_path):
    records = [cd.encode_tensor_protos([IMAGE, floats(0.5)]), cd.encode_tensor_protos([IMAGE, ints(2)])]
    reader = caffe2_reader(tmp_path, records)
    assert reader()[1].dtype == ndd.float32
    with pytest.raises(
        ValueError, match="the label of record '.*key 0001' is i32, but the first record's is f32"
    ):
        reader()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"label_type": 5}, "'label_type' must be 0 .* got 5"),
        ({"num_labels": 0}, "'num_labels' must be at least 1, got 0"),
        ({"additional_inputs": -1}, "'additional_inputs' must not be negative"),
        ({"image_available": False, "label_type": cd.NO_LABEL}, "would have no outputs"),
    ],
)
def test_caffe2_bad_arguments_raise_naming_them(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        caffe2_reader(tmp_path, [cd.encode_tensor_protos([IMAGE, ints(1)])], **kwargs)


def test_caffe2_shards_split_the_records(tmp_path):
    records = [cd.encode_tensor_protos([IMAGE, ints(i)]) for i in range(5)]
    shards = [
        [
            int(np.asarray(label)[0])
            for _, label in caffe2_reader(tmp_path / str(k), records, num_shards=2, shard_id=k).next_epoch()
        ]
        for k in range(2)
    ]
    assert shards == [[0, 1], [2, 3, 4]]


def _labels_in_child(reader, count, queue):
    queue.put([np.asarray(reader()).tolist() for _ in range(count)])


@pytest.mark.timeout(120)
def test_caffe_reader_used_before_fork_reads_on_in_the_child(caffe_db):
    # LMDB handles must not cross fork: the child opens the database again, also
    # when the parent's loading thread was inside a read at the fork (a few forks
    # make that likely).
    context = multiprocessing.get_context("fork")
    for _ in range(5):
        reader = ndd.readers.Caffe(path=caffe_db, image_available=False)
        assert np.asarray(reader()).tolist() == [3]
        queue = context.Queue()
        child = context.Process(target=_labels_in_child, args=(reader, 2, queue), daemon=True)
        child.start()
        try:
            assert queue.get(timeout=30) == [[-2], [2]]
            child.join(timeout=30)
            assert child.exitcode == 0
        finally:
            child.kill()  # a hung child must not hang the test run
        assert np.asarray(reader()).tolist() == [-2]


def test_a_new_reader_opens_a_database_a_dropped_one_was_closing(caffe_db):
    # The last reader of a database closes its LMDB environment without the GIL; a new
    # reader opening the database meanwhile was refused as "already open" (1 try in 10).
    for _ in range(40):
        reader = ndd.readers.Caffe(path=caffe_db)
        assert sum(1 for _ in reader.next_epoch()) == 7
        del reader


def test_readers_of_one_database_share_it_while_any_lives(caffe_db):
    first = ndd.readers.Caffe(path=caffe_db)
    second = ndd.readers.Caffe(path=caffe_db)
    assert sum(1 for _ in first.next_epoch()) == sum(1 for _ in second.next_epoch()) == 7
    del first
    assert sum(1 for _ in second.next_epoch()) == 7  # still open for the reader left


# -- damaged databases: liblmdb trusts its pages, and a bad one kills the process
# that reads it (an assertion's abort, a bus error) --------------------------------


def _damaged_copy(tmp_path, damage):
    good = tmp_path / "good"
    cd.write_caffe_db(good, cd.caffe_samples() * 30)
    data = bytearray((good / "data.mdb").read_bytes())
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "data.mdb").write_bytes(bytes(damage(data)))
    return bad, len(data)


@pytest.mark.parametrize("reader", [ndd.readers.Caffe, ndd.readers.Caffe2])
def test_a_truncated_database_is_refused_by_name(tmp_path, reader):
    bad, size = _damaged_copy(tmp_path, lambda data: data[: len(data) - 4096])
    with pytest.raises(
        ValueError,
        match=rf"readers\.Caffe2?: 'path' LMDB database '.*bad' is truncated: data\.mdb holds {size - 4096} "
        rf"bytes, its last page ends at byte {size}",
    ):
        reader(path=str(bad))


def _zero_last_page(data):
    data[-4096:] = bytes(4096)
    return data


def test_a_database_with_a_damaged_page_is_refused_without_killing_the_process(tmp_path):
    # The walk of the keys meets a zeroed leaf page: liblmdb's assertion aborts the probe,
    # not this process.
    bad, _ = _damaged_copy(tmp_path, _zero_last_page)
    with pytest.raises(
        ValueError, match=r"readers\.Caffe: 'path' LMDB database '.*bad' is damaged: walking its keys"
    ):
        ndd.readers.Caffe(path=str(bad))


def test_an_intact_database_is_probed_once_per_process(tmp_path, monkeypatch):
    from ndd.readers import caffe

    folder = tmp_path / "db"
    cd.write_caffe_db(folder)
    probes = []
    run = caffe.subprocess.run
    monkeypatch.setattr(caffe.subprocess, "run", lambda *a, **k: probes.append(a) or run(*a, **k))
    first = ndd.readers.Caffe(path=str(folder))
    del first
    ndd.readers.Caffe(path=str(folder))
    assert len(probes) == 1
