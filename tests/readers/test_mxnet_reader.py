"""readers.MXNet: records against the reference's goldens
(tests/golden/mxnet_reference.json, from make_mxnet_goldens.py) and against the
recipe that wrote them, split records, sharding, batching, errors, signature."""

import inspect
import json
import os
import pathlib
import struct

import mxnet_dataset as md
import numpy as np
import pytest

import ndd

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent.parent / "golden" / "mxnet_reference.json").read_text(encoding="utf-8")
)


@pytest.fixture
def files(tmp_path):
    rec, idx = str(tmp_path / "data.rec"), str(tmp_path / "data.idx")
    offsets = md.write_recordio(rec, idx)
    return rec, idx, offsets


def described(reader, folder):
    samples = []
    for image, label in reader.next_epoch():
        info = bytes(np.asarray(ndd.get_property(image, key="source_info"))).decode()
        samples.append(
            {
                "image": np.asarray(image).tolist(),
                "label": np.asarray(label).tolist(),
                "label_dtype": str(label.dtype),
                "image_dtype": str(image.dtype),
                "source_info": info.replace(folder, "<dir>"),
            }
        )
    return samples


def write_index(path, lines):
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(f"{i}\t{offset}\n" for i, offset in lines)


def test_signature_matches_the_reference():
    got = [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in inspect.signature(ndd.readers.MXNet).parameters.values()
    ]
    assert got == GOLDEN["signature"]


def test_records_match_the_reference(files, tmp_path):
    rec, idx, _ = files
    assert described(ndd.readers.MXNet(path=rec, index_path=idx), str(tmp_path)) == GOLDEN["cases"]["default"]


def test_records_are_the_written_images_and_labels(files):
    rec, idx, _ = files
    got = [
        (bytes(np.asarray(image)), np.asarray(label))
        for image, label in ndd.readers.MXNet(path=rec, index_path=idx).next_epoch()
    ]
    expected = md.mxnet_samples()
    assert [image for image, _ in got] == [image for _, image in expected]
    for (_, label), (labels, _) in zip(got, expected, strict=True):
        assert label.dtype == np.float32 and label.tolist() == labels


def test_a_payload_holding_the_magic_number_is_split_and_joined_back(files):
    rec, idx, offsets = files
    data = pathlib.Path(rec).read_bytes()
    # Record 3 holds the magic number twice: it is stored as first, middle and last parts.
    flags = []
    position = offsets[3]
    while not flags or flags[-1] not in (0, 3):
        magic, word = struct.unpack_from("<II", data, position)
        assert magic == md.MAGIC
        flags.append(word >> 29)
        length = word & ((1 << 29) - 1)
        position += 8 + length + (-length % 4)
    assert flags == [1, 2, 3]
    image, _ = list(ndd.readers.MXNet(path=rec, index_path=idx).next_epoch())[3]
    assert bytes(np.asarray(image)) == md.mxnet_samples()[3][1]


@pytest.mark.parametrize(
    "case, order", [("index_out_of_order", (3, 0, 5, 1, 4, 2)), ("index_subset", (0, 2, 5))]
)
def test_records_are_read_in_offset_order_of_those_the_index_lists(files, tmp_path, case, order):
    rec, idx, offsets = files
    write_index(idx, [(i, offsets[i]) for i in order])
    assert described(ndd.readers.MXNet(path=rec, index_path=idx), str(tmp_path)) == GOLDEN["cases"][case]


def test_one_index_spans_several_files(tmp_path):
    paths, lines, start = [], [], 0
    for f in range(3):
        rec = str(tmp_path / f"part{f}.rec")
        samples = [([10.0 * f + i], md.image_bytes(10 * f + i, 5 + i)) for i in range(2 + f)]
        offsets = md.write_recordio(rec, str(tmp_path / f"part{f}.idx"), samples)
        lines += [(len(lines), start + offset) for offset in offsets]
        start += os.path.getsize(rec)
        paths.append(rec)
    idx = str(tmp_path / "all.idx")
    write_index(idx, lines)
    reader = ndd.readers.MXNet(path=paths, index_path=[idx])
    assert described(reader, str(tmp_path)) == GOLDEN["cases"]["several_files"]


def test_stored_labels_replace_the_header_label(tmp_path):
    rec, idx = str(tmp_path / "data.rec"), str(tmp_path / "data.idx")
    payload = struct.pack("<IfQQ", 2, 7.0, 0, 0) + struct.pack("<2f", 1.0, 2.0) + b"image"
    pathlib.Path(rec).write_bytes(md.frame(payload))
    write_index(idx, [(0, 0)])
    got = described(ndd.readers.MXNet(path=rec, index_path=idx), str(tmp_path))
    assert got == GOLDEN["cases"]["header_label_ignored"]


def test_shards_rotate_per_epoch_like_the_reference(files):
    rec, idx, _ = files
    reader = ndd.readers.MXNet(path=rec, index_path=idx, num_shards=4, shard_id=3)
    got = [[np.asarray(label).tolist()[0] for _, label in reader.next_epoch()] for _ in range(3)]
    assert got == GOLDEN["shards"]


def test_batches_hold_ragged_images_and_labels(files):
    rec, idx, _ = files
    images, labels = next(iter(ndd.readers.MXNet(path=rec, index_path=idx).next_epoch(batch_size=3)))
    assert [t.shape for t in images.tensors] == [(9,), (14,), (19,)]
    assert [np.asarray(t).tolist() for t in labels.tensors] == [[0.5], [1.0, -1.25, 3.0], [2.5]]


def test_missing_files_raise_at_construction(files, tmp_path):
    rec, idx, _ = files
    with pytest.raises(FileNotFoundError, match=r"ndd.readers.MXNet: cannot read RecordIO file '.*nope.rec'"):
        ndd.readers.MXNet(path=[rec, str(tmp_path / "nope.rec")], index_path=idx)
    with pytest.raises(FileNotFoundError, match=r"ndd.readers.MXNet: cannot read 'index_path' '.*nope.idx'"):
        ndd.readers.MXNet(path=rec, index_path=str(tmp_path / "nope.idx"))


@pytest.mark.parametrize(
    "index_text, error, message",
    [
        ("0\t0\nzero\t44\n", ValueError, "line 2 of index '.*data.idx' must be 'position offset', got 'zero\\\\t44'"),
        ("0\t0\n1\t384\n", ValueError, "line 2 of index '.*' gives offset 384, past the end of the RecordIO files \\(384 bytes\\)"),
        ("\n", ValueError, "the dataset is empty \\(the index '.*data.idx' lists no records\\)"),
        # A byte that is not UTF-8 made the listing fail with UnicodeDecodeError.
        ("0\t0\n1\t3\xb084\n", ValueError, "line 2 of index '.*data.idx' must be 'position offset'"),
    ],
)  # fmt: skip
def test_malformed_index_raises_at_construction(files, index_text, error, message):
    rec, idx, _ = files
    pathlib.Path(idx).write_bytes(index_text.encode("latin-1"))
    with pytest.raises(error, match=message):
        ndd.readers.MXNet(path=rec, index_path=idx)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"index_path": ["a.idx", "b.idx"]}, "'index_path' must name one index file, got 2"),
        ({"path": []}, "'path' must be a path or a non-empty list of paths"),
        ({"index_path": 1}, "'index_path' must be a path or a non-empty list of paths"),
    ],
)
def test_bad_arguments_raise_naming_them(files, kwargs, message):
    rec, idx, _ = files
    with pytest.raises(ValueError, match=message):
        ndd.readers.MXNet(**{"path": rec, "index_path": idx, **kwargs})


def corrupt(rec, offset, data):
    with open(rec, "r+b") as fh:
        fh.seek(offset)
        fh.write(data)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda rec, at: corrupt(rec, at, b"\0\0\0\0"), "wrong magic number 0x00000000 at byte 104"),
        (lambda rec, at: corrupt(rec, at + 4, struct.pack("<I", 2 << 29 | 40)), "the part at byte 104 continues a record"),
        (lambda rec, at: corrupt(rec, at + 4, struct.pack("<I", 8)), "the payload has 8 bytes, less than the 24-byte header"),
        (lambda rec, at: corrupt(rec, at + 8, struct.pack("<I", 100)), "the header announces 100 labels"),
        (lambda rec, at: corrupt(rec, at + 4, struct.pack("<I", 1000)), "truncated: the part at byte 104 needs 1000 bytes"),
    ],
)  # fmt: skip
def test_corrupted_record_raises_naming_it_and_other_samples_still_come(files, damage, message):
    rec, idx, offsets = files
    damage(rec, offsets[2])
    reader = ndd.readers.MXNet(path=rec, index_path=idx)
    reader()
    reader()
    with pytest.raises(ValueError, match=f"ndd.readers.MXNet: record '.*data.rec at index 104': {message}"):
        reader()
    assert np.asarray(reader()[1]).tolist() == [3.0, -1.25]


def test_a_file_cut_inside_a_record_header_raises(files):
    rec, idx, offsets = files
    with open(rec, "r+b") as fh:
        fh.truncate(offsets[5] + 4)
    reader = ndd.readers.MXNet(path=rec, index_path=idx)
    samples = [reader() for _ in range(5)]
    assert len(samples) == 5
    with pytest.raises(ValueError, match="the file ends inside the record header at byte 304"):
        reader()


def test_state_restores_the_position(files):
    rec, idx, _ = files
    reader = ndd.readers.MXNet(path=rec, index_path=idx, enable_checkpointing=True)
    for _ in range(4):
        reader()
    restored = ndd.readers.MXNet(path=rec, index_path=idx)
    restored.set_state(reader.get_state())
    assert [np.asarray(restored()[1]).tolist() for _ in range(2)] == [[4.5], [5.0, -1.25, 15.0]]
