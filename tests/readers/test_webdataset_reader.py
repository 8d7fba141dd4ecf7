"""readers.Webdataset: outputs against the reference's goldens
(tests/golden/webdataset_reference.json, from make_webdataset_goldens.py) with
and without index files, key and extension rules, missing components, dtypes,
sharding, source_info and errors."""

import inspect
import json
import pathlib
import re
import tarfile

import numpy as np
import pytest
import webdataset_dataset as wds

import ndd
from ndd._prepare.args import InvalidArgumentError
from ndd.readers.webdataset import split_name

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent.parent / "golden" / "webdataset_reference.json").read_text(
        encoding="utf-8"
    )
)
DTYPES = {"INT32": ndd.int32, "INT16": ndd.int16, "FLOAT16": ndd.float16, "UINT64": ndd.uint64}


@pytest.fixture
def shards(tmp_path):
    return wds.write_shards(str(tmp_path))


@pytest.fixture
def odd_tar(tmp_path):
    path = str(tmp_path / "odd.tar")
    wds.write_tar(path, wds.ODD_MEMBERS)
    return path


def output(tensor):
    """One output in the goldens' form."""
    array = np.asarray(tensor)
    if array.dtype == np.uint8:
        return bytes(array).decode("latin-1")
    return {"dtype": array.dtype.name, "values": array.tolist()}


def reader_args(args):
    args = dict(args)
    if "dtypes" in args:
        dts = args["dtypes"]
        args["dtypes"] = [DTYPES[d] for d in dts] if isinstance(dts, list) else DTYPES[dts]
    return args


def epoch(reader):
    return [[output(t) for t in sample] for sample in reader.next_epoch()]


def assert_samples_equal(got, expected):
    # Float outputs may hold NaN (bytes read as float16): compare as arrays.
    assert len(got) == len(expected)
    for got_sample, want_sample in zip(got, expected, strict=True):
        for g, w in zip(got_sample, want_sample, strict=True):
            if isinstance(w, dict):
                assert g["dtype"] == w["dtype"]
                np.testing.assert_array_equal(np.array(g["values"]), np.array(w["values"]))
            else:
                assert g == w


# -- API -------------------------------------------------------------------------------------


def test_signature_matches_the_reference():
    params = inspect.signature(ndd.readers.Webdataset).parameters.values()
    got = [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in params
    ]
    assert got == GOLDEN["signature"]
    assert "Webdataset" in ndd.readers.__all__


# -- outputs against the reference ---------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(GOLDEN["cases"]))
def test_outputs_match_the_reference(shards, case):
    entry = GOLDEN["cases"][case]
    paths, indices = shards
    r = ndd.readers.Webdataset(
        paths=paths, index_paths=indices if entry["index"] else None, **reader_args(entry["args"])
    )
    assert_samples_equal(epoch(r), entry["samples"])


@pytest.mark.parametrize("case", sorted(GOLDEN["odd"]))
def test_unusual_archive_entries_match_the_reference(odd_tar, case):
    entry = GOLDEN["odd"][case]
    assert epoch(ndd.readers.Webdataset(paths=odd_tar, **reader_args(entry["args"]))) == entry["samples"]


@pytest.mark.parametrize("shard", range(3))
def test_shards_match_the_reference(shards, shard):
    paths, indices = shards
    r = ndd.readers.Webdataset(paths=paths, index_paths=indices, ext="cls", num_shards=3, shard_id=shard)
    assert epoch(r) == GOLDEN["shards"][f"3/{shard}"]


def test_source_info_of_each_output_matches_the_reference(shards):
    paths, indices = shards
    folder = str(pathlib.Path(paths[0]).parent)
    r = ndd.readers.Webdataset(paths=paths, index_paths=indices, ext=["jpg", "cls"])

    def info(t):
        return bytes(np.asarray(ndd.get_property(t, key="source_info"))).decode().replace(folder, "<dir>")

    assert [[info(t) for t in sample] for sample in r.next_epoch()] == GOLDEN["source_info"]
    (batch_jpg, batch_cls) = next(ndd.readers.Webdataset(8, paths=paths, ext=["jpg", "cls"]).next_epoch())
    assert [info(batch_cls.select(i)) for i in range(8)] == [s[1] for s in GOLDEN["source_info"]]


def test_index_files_made_by_wds2idx_are_read(shards, tmp_path):
    paths, _ = shards
    indices = []
    for path in paths:
        index = tmp_path / (pathlib.Path(path).name + ".ref.idx")
        index.write_text(GOLDEN["wds2idx"][pathlib.Path(path).name])
        indices.append(str(index))
    r = ndd.readers.Webdataset(paths=paths, index_paths=indices, ext=["jpg", "cls"])
    assert epoch(r) == GOLDEN["cases"]["basic"]["samples"]


def test_version_1_1_index_without_names_is_read(shards, tmp_path):
    paths, indices = shards
    lines = pathlib.Path(indices[1]).read_text(encoding="utf-8").splitlines()
    triplets = [" ".join(t for i, t in enumerate(line.split()) if i % 4 != 3) for line in lines[1:]]
    index = tmp_path / "v11.idx"
    index.write_text("\n".join(["v1.1 3", *triplets]) + "\n")
    r = ndd.readers.Webdataset(paths=paths[1], index_paths=str(index), ext=["jpg", "cls"])
    assert epoch(r) == GOLDEN["cases"]["basic"]["samples"][5:]


# -- rules of ndd's own -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, key, ext",
    [
        ("a.jpg", "a", "jpg"),
        ("dir.x/s.seg.png", "dir.x/s", "seg.png"),
        ("noext", "noext", ""),
        ("trail.", "trail", ""),
        ("d/e/f.tar.gz", "d/e/f", "tar.gz"),
    ],
)
def test_key_is_the_name_up_to_the_first_dot_of_the_file_name(name, key, ext):
    assert split_name(name) == (key, ext)


def test_an_empty_alternative_matches_files_without_extension(odd_tar):
    # The reference matches "noext" only by its whole name; ndd gives it the empty extension.
    samples = epoch(ndd.readers.Webdataset(paths=odd_tar, ext=[";cls"]))
    assert samples == [["A-cls"], [""], ["N"], [""], [""], [""], [""], ["C2"]]


def test_hidden_files_in_folders_are_left_out(tmp_path):
    # The reference makes an empty sample of "folder/.x.jpg"; its documentation leaves hidden files out.
    path = str(tmp_path / "h.tar")
    wds.write_tar(path, [("a.jpg", b"A"), ("folder/.x.jpg", b"X"), ("b.jpg", b"B")])
    assert epoch(ndd.readers.Webdataset(paths=path, ext="jpg")) == [["A"], ["B"]]


def test_dtypes_reinterpret_the_bytes(shards):
    paths, indices = shards
    r = ndd.readers.Webdataset(paths=paths, index_paths=indices, ext=["cls"], dtypes=[ndd.int32])
    sample = next(r.next_epoch())[0]
    assert sample.dtype == ndd.int32
    np.testing.assert_array_equal(
        np.asarray(sample), np.frombuffer(wds.component_bytes("s000", "cls"), np.int32)
    )


def test_dtypes_accept_reference_style_enum_values(shards):
    paths, _ = shards
    r = ndd.readers.Webdataset(paths=paths, ext="cls", dtypes=ndd.types.DALIDataType.INT16)
    assert next(r.next_epoch())[0].dtype == ndd.int16


def test_batches_hold_each_output(shards):
    paths, indices = shards
    r = ndd.readers.Webdataset(3, paths=paths, index_paths=indices, ext=["jpg", "cls"])
    got = [[[output(b.select(i)) for i in range(b.batch_size)] for b in batch] for batch in r.next_epoch()]
    flat = [[out[i] for out in batch] for batch in got for i in range(3)]
    expected = GOLDEN["cases"]["basic"]["samples"]
    assert flat == expected + expected[:1]  # 8 samples in batches of 3: the last batch wraps around


def test_metadata_counts_samples_after_skipping(shards):
    paths, indices = shards
    r = ndd.readers.Webdataset(
        paths=paths, index_paths=indices, ext=["jpg", "cls"], missing_component_behavior="skip"
    )
    assert r.get_metadata()["epoch_size"] == len(GOLDEN["cases"]["skip"]["samples"]) == 4


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("use_index", [True, False])
def test_missing_component_with_error_behavior_names_the_sample(shards, use_index):
    assert GOLDEN["errors"]["missing_component_error"] == "error"
    paths, indices = shards
    where = r"index file '.*shard0.idx' line 4" if use_index else r"archive '.*shard0.tar'"
    with pytest.raises(ValueError, match=f"sample 's002' of {where} has no file with the extension 'jpg'"):
        ndd.readers.Webdataset(
            paths=paths,
            index_paths=indices if use_index else None,
            ext=["jpg"],
            missing_component_behavior="error",
        )


@pytest.mark.parametrize(
    "kwargs, message, golden",
    [
        ({"missing_component_behavior": "fill"}, "must be one of 'empty', 'skip', 'error'", "bad_behavior"),
        ({"dtypes": [ndd.int32]}, "one type per 'ext' entry: got 1 for 2", "dtype_count"),
        ({"ext": ["cls"], "dtypes": [ndd.bool]}, "not supported; use a numeric type", "bool_dtype"),
        ({"index_paths": "FIRST"}, "one index file per archive", "index_count"),
        ({"ext": []}, "'ext' must be a str or a non-empty list", None),
        ({"dtypes": ["no such type", ndd.uint8]}, "'dtypes' entry 'no such type' is not a DType", None),
    ],
)
def test_bad_arguments_raise_at_construction(shards, kwargs, message, golden):
    if golden is not None:
        assert GOLDEN["errors"][golden] == "error"
    paths, indices = shards
    args = {"paths": paths, "index_paths": indices, "ext": ["jpg", "cls"], **kwargs}
    if args["index_paths"] == "FIRST":
        args["index_paths"] = indices[:1]
    with pytest.raises(InvalidArgumentError, match=message):
        ndd.readers.Webdataset(**args)


def test_a_size_that_does_not_fit_the_dtype_names_the_file(shards):
    assert GOLDEN["errors"]["dtype_size"] == "error"
    paths, indices = shards
    with pytest.raises(
        ValueError, match=r"file 's000.json' of index file .* has 12 bytes, not a multiple of .* \(8\)"
    ):
        ndd.readers.Webdataset(paths=paths, index_paths=indices, ext=["json"], dtypes=[ndd.int64])


@pytest.mark.parametrize(
    "text, message",
    [
        ("v9.9 1\njpg 512 12 t000.JPG\n", "must start with 'v1.2 <number of samples>'"),
        ("", "must start with"),
        ("jpg 512 12 t000.JPG\n", "must start with"),
        ("v1.2 4\nJPG 512 12 t000.JPG\n", "declares 4 samples but lists 1"),
        ("v1.2 1\nJPG 512 12\n", "line 2 must hold groups of 'ext offset size name'"),
        ("v1.2 1\nJPG five 12 t000.JPG\n", "line 2: offset and size must be integers"),
        ("v1.2 1\nJPG 500 12 t000.JPG\n", "line 2: file 't000.JPG' at offset 500 .* does not lie in archive"),
        ("v1.2 1\nJPG 99840 12 t000.JPG\n", "at offset 99840 with 12 bytes does not lie in archive"),
        # A byte that is not UTF-8 made the listing fail with UnicodeDecodeError.
        ("v1.2 1\nJPG 5\xb012 12 t000.JPG\n", "line 2: offset and size must be integers"),
    ],
)
def test_a_malformed_index_is_refused_naming_it(shards, tmp_path, text, message):
    paths, _ = shards
    index = tmp_path / "bad.idx"
    index.write_bytes(text.encode("latin-1"))
    with pytest.raises(ValueError, match=f"ndd.readers.Webdataset: .*{message}"):
        ndd.readers.Webdataset(paths=paths[1], index_paths=str(index), ext="jpg")


def test_a_stale_index_fails_the_sample_it_misplaces(shards, tmp_path):
    paths, indices = shards
    lines = pathlib.Path(indices[1]).read_text(encoding="utf-8").splitlines()
    lines[1] = "JPG 512 30 t000.JPG cls 1536 12 t000.cls"  # the file has 12 bytes
    index = tmp_path / "stale.idx"
    index.write_text("\n".join(lines) + "\n")
    r = ndd.readers.Webdataset(paths=paths[1], index_paths=str(index), ext=["jpg;JPG"])
    with pytest.raises(
        ValueError, match=r"'.*shard1.tar', file 't000.JPG' at offset 512: the index says 30 bytes, .* 12"
    ):
        r()
    assert output(r()) == "t001|jpg|###"


def test_an_index_offset_not_at_a_file_fails_its_sample(shards, tmp_path):
    paths, indices = shards
    lines = pathlib.Path(indices[1]).read_text(encoding="utf-8").splitlines()
    lines[2] = "jpg 2048 12 t001.jpg"  # a data block, not the one after a header
    index = tmp_path / "moved.idx"
    index.write_text("\n".join(lines) + "\n")
    r = ndd.readers.Webdataset(paths=paths[1], index_paths=str(index), ext=["jpg"])
    assert output(r()) == ""
    with pytest.raises(ValueError, match="file 't001.jpg' at offset 2048: "):
        r()
    assert output(r()) == "t002|jpg|###"


@pytest.mark.parametrize("cut", [5000, 1000, 700])
def test_a_truncated_archive_is_refused_naming_it(shards, tmp_path, cut):
    paths, _ = shards
    path = tmp_path / "cut.tar"
    path.write_bytes(pathlib.Path(paths[0]).read_bytes()[:cut])
    with pytest.raises(ValueError, match="'.*cut.tar' is not a readable uncompressed tar archive"):
        ndd.readers.Webdataset(paths=str(path), ext="jpg")


def test_a_truncated_archive_with_its_index_is_refused(shards, tmp_path):
    paths, indices = shards
    path = tmp_path / "cut.tar"
    path.write_bytes(pathlib.Path(paths[0]).read_bytes()[:4000])
    with pytest.raises(ValueError, match="line 3: file 's001.cls' at offset 4608 .* does not lie in archive"):
        ndd.readers.Webdataset(paths=str(path), index_paths=indices[0], ext="jpg")


def test_compressed_and_foreign_files_are_refused(tmp_path):
    gz = tmp_path / "a.tar.gz"
    with tarfile.open(gz, "w:gz") as archive:
        wds.add_member(archive, "a.jpg", b"A")
    text = tmp_path / "b.tar"
    text.write_bytes(b"hello world" * 100)
    for path in (gz, text):
        with pytest.raises(
            ValueError, match=re.escape(f"'{path}' is not a readable uncompressed tar archive")
        ):
            ndd.readers.Webdataset(paths=str(path), ext="jpg")


def test_missing_files_are_named(shards, tmp_path):
    paths, indices = shards
    with pytest.raises(FileNotFoundError, match="archive '.*nope.tar' does not exist"):
        ndd.readers.Webdataset(paths=str(tmp_path / "nope.tar"), ext="jpg")
    with pytest.raises(FileNotFoundError, match="index file '.*nope.idx' does not exist"):
        ndd.readers.Webdataset(paths=paths[0], index_paths=str(tmp_path / "nope.idx"), ext="jpg")


def test_an_archive_without_samples_adds_none(shards, tmp_path):
    paths, _ = shards
    empty = str(tmp_path / "empty.tar")
    wds.write_tar(empty, [])
    r = ndd.readers.Webdataset(paths=[empty, paths[1]], ext="cls")
    assert epoch(r) == [["t000|cls|###"], [""], ["t002|cls|###"]]
    with pytest.raises(ValueError, match="the dataset is empty .*no samples in the archives"):
        ndd.readers.Webdataset(paths=empty, ext="cls")


@pytest.mark.parametrize("tar_format", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, "v7"])
def test_members_near_or_far_apart_and_old_headers_are_read(tmp_path, tar_format):
    # A sample's members are read in one go when they lie together, one by one when a
    # large member the reader skips lies between them; a v7 header (no "ustar" magic)
    # is recognised by its checksum.
    path = tmp_path / "a.tar"
    members = [
        ("a.bin", b"12345"),
        ("a.big", bytes(300_000)),
        ("a.cls", b"7"),
        ("b.bin", b"xy"),
        ("b.cls", b"3"),
    ]
    with tarfile.open(
        path, "w", format=tarfile.USTAR_FORMAT if tar_format == "v7" else tar_format
    ) as archive:
        for name, data in members:
            wds.add_member(archive, name, data)
    if tar_format == "v7":  # blank the magic of every header, and fix the checksums
        raw = bytearray(path.read_bytes())
        with tarfile.open(path) as archive:
            headers = [m.offset for m in archive.getmembers()]
        for at in headers:
            raw[at + 257 : at + 265] = bytes(8)
            raw[at + 148 : at + 156] = b" " * 8
            raw[at + 148 : at + 155] = b"%06o\0" % sum(raw[at : at + 512])
        path.write_bytes(raw)
    with tarfile.open(path) as archive:
        spans = [(m.name, m.offset_data, m.size) for m in archive.getmembers() if m.isreg()]
    wds.write_index(str(path) + ".idx", spans)
    reader = ndd.readers.Webdataset(paths=str(path), index_paths=str(path) + ".idx", ext=["bin", "cls"])
    samples = [[bytes(np.asarray(t)) for t in sample] for sample in reader.next_epoch()]
    assert samples == [[b"12345", b"7"], [b"xy", b"3"]]


def test_a_bad_sample_in_a_batch_read_at_once_fails_alone(tmp_path):
    # Neighbouring samples are read with one read; a sample whose header does not
    # match its index fails alone, the others keep their bytes and their order.
    path = str(tmp_path / "run.tar")
    payloads = [bytes([i]) * (10 + i) for i in range(10)]
    members = []
    for i, data in enumerate(payloads):
        members += [(f"s{i}.bin", data), (f"s{i}.cls", str(i).encode())]
    spans = wds.write_tar(path, members)
    name, offset, size = spans[10]  # s5.bin
    spans[10] = (name, offset, size - 1)
    wds.write_index(path + ".idx", spans)
    r = ndd.readers.Webdataset(paths=path, index_paths=path + ".idx", ext=["bin", "cls"])

    def batch():
        data, label = r(batch_size=4)
        return [(bytes(np.asarray(t)), int(bytes(np.asarray(c)))) for t, c in zip(data, label, strict=True)]

    expected = [(payloads[i], i) for i in range(10)]
    assert batch() == expected[0:4]
    with pytest.raises(
        ValueError, match=r"'.*run.tar', file 's5.bin' at offset \d+: the index says 14 bytes"
    ):
        r(batch_size=4)
    # The sample taken before the bad one comes first.
    assert batch() == [expected[4], *expected[6:9]]
    assert batch() == [expected[9], *expected[0:3]]
