"""readers.File: listing, outputs, epoch order (against the reference's goldens),
sharding, padding, shuffling, reading styles, state and errors."""

import base64
import collections
import json
import os
import pathlib
import threading
import time

import numpy as np
import pytest
from file_dataset import LAYOUT, file_content, make_dataset, sample_name

import ndd

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent.parent / "golden" / "reader_orders.json").read_text(encoding="utf-8")
)
LISTED = [
    (f"{folder}/{name}", label)
    for label, folder in enumerate(sorted(LAYOUT))
    for name in sorted(LAYOUT[folder])
    if not name.endswith(".txt")
]


@pytest.fixture
def root(tmp_path, monkeypatch):
    # The goldens hold paths relative to the working folder, as the reference reports them.
    monkeypatch.chdir(tmp_path)
    make_dataset(str(tmp_path / "root"))
    return "root"


def items(batch):
    data, label = batch
    return [
        [sample_name(np.asarray(data.select(i))), int(np.asarray(label.select(i))[0])]
        for i in range(data.batch_size)
    ]


def epoch_items(reader, batch_size):
    if batch_size is None:
        return [[[sample_name(np.asarray(d)), int(np.asarray(lbl)[0])]] for d, lbl in reader.next_epoch()]
    return [items(b) for b in reader.next_epoch(batch_size=batch_size)]


# -- listing and outputs ---------------------------------------------------------


def test_class_folders_are_listed_sorted_with_labels_and_filters(root):
    reader = ndd.readers.File(file_root=root)
    got = [(sample_name(np.asarray(d)), int(np.asarray(lbl)[0])) for d, lbl in reader.next_epoch()]
    assert got == LISTED


def test_outputs_are_the_file_bytes_and_an_int32_label_of_shape_1(root):
    data, label = ndd.readers.File(file_root=root)()
    assert data.dtype == ndd.uint8 and data.ndim == 1
    assert np.array_equal(np.asarray(data), np.frombuffer(file_content("cat", "c0.jpg"), np.uint8))
    assert label.dtype == ndd.int32 and label.shape == (1,)


def test_batches_of_ragged_files_and_dense_labels(root):
    pytest.importorskip("torch")  # the dense batches are read with .torch()
    data, label = next(iter(ndd.readers.File(file_root=root).next_epoch(batch_size=4)))
    assert data.batch_size == 4 and label.batch_size == 4
    expected = [np.frombuffer(file_content(*p.split("/")), np.uint8) for p, _ in LISTED[:4]]
    for i in range(4):
        assert np.array_equal(np.asarray(data.select(i)), expected[i])
    assert np.asarray(label.torch()).tolist() == [[0], [0], [0], [1]]


@pytest.mark.parametrize("size", [1000, 16 * 1024, 40000])
def test_batches_of_equal_files_small_and_large(tmp_path, size):
    pytest.importorskip("torch")  # the dense batches are read with .torch()
    # Small samples are copied into one array; from 16 KiB on they stay in the read
    # buffers. Either way the batch holds the files' bytes, and stacks into one array.
    rng = np.random.default_rng(size)
    contents = [rng.integers(0, 256, size, dtype=np.uint8) for _ in range(5)]
    for i, content in enumerate(contents):
        content.tofile(tmp_path / f"{i}.bin")
    files = [str(tmp_path / f"{i}.bin") for i in range(5)]
    reader = ndd.readers.File(files=files, labels=list(range(5)))
    data, label = next(iter(reader.next_epoch(batch_size=5)))
    for i in range(5):
        np.testing.assert_array_equal(np.asarray(data.select(i)), contents[i])
    np.testing.assert_array_equal(data.torch().numpy(), np.stack(contents))
    np.testing.assert_array_equal(ndd.cast(data, dtype=ndd.int16).torch().numpy(), np.stack(contents))
    assert label.torch().numpy().ravel().tolist() == [0, 1, 2, 3, 4]


def test_source_info_is_the_path_as_listed(root):
    data, _ = ndd.readers.File(file_root=root)()
    info = bytes(np.asarray(ndd.get_property(data, key="source_info"))).decode()
    assert info == GOLDEN["source_info"]
    batch, _ = next(iter(ndd.readers.File(file_root=root).next_epoch(batch_size=3)))
    infos = [bytes(np.asarray(t)).decode() for t in ndd.get_property(batch, key="source_info").tensors]
    assert infos == [p for p, _ in LISTED[:3]]


def test_case_sensitive_filter_and_dir_filters(root):
    upper = ndd.readers.File(file_root=root, case_sensitive_filter=True)
    names = [sample_name(np.asarray(d)) for d, _ in upper.next_epoch()]
    assert "cat/c1.JPG" not in names and len(names) == len(LISTED) - 1
    eels = ndd.readers.File(file_root=root, dir_filters=["e*"])
    assert [(sample_name(np.asarray(d)), int(np.asarray(lbl)[0])) for d, lbl in eels.next_epoch()] == [
        ("eel/e0.png", 0),
        ("eel/e1.webp", 0),
    ]
    pngs = ndd.readers.File(file_root=root, file_filters="*.png")
    assert [sample_name(np.asarray(d)) for d, _ in pngs.next_epoch()] == ["cat/c2.png", "eel/e0.png"]


def test_files_with_and_without_labels(root):
    files = ["dog/d2.bmp", "cat/c0.jpg"]
    default = ndd.readers.File(file_root=root, files=files)
    assert [int(np.asarray(lbl)[0]) for _, lbl in default.next_epoch()] == [0, 1]
    labelled = ndd.readers.File(file_root=root, files=files, labels=[7, 9])
    got = [(sample_name(np.asarray(d)), int(np.asarray(lbl)[0])) for d, lbl in labelled.next_epoch()]
    assert got == [("dog/d2.bmp", 7), ("cat/c0.jpg", 9)]


def test_file_list_relative_to_its_folder_or_to_file_root(root, tmp_path):
    (tmp_path / "root" / "list.txt").write_text("dog/d1.jpeg 5\n\neel/e0.png 3\n")
    for kwargs in ({"file_list": "root/list.txt"}, {"file_list": "root/list.txt", "file_root": root}):
        reader = ndd.readers.File(**kwargs)
        got = [(sample_name(np.asarray(d)), int(np.asarray(lbl)[0])) for d, lbl in reader.next_epoch()]
        assert got == [("dog/d1.jpeg", 5), ("eel/e0.png", 3)]


# -- order: the reference's goldens ------------------------------------------------


@pytest.mark.parametrize(
    "case", GOLDEN["cases"], ids=[f"{c['config']}-bs{c['batch_size']}" for c in GOLDEN["cases"]]
)
def test_epoch_order_matches_reference(root, case):
    reader = ndd.readers.File(file_root=root, **case["config"])
    got = [epoch_items(reader, case["batch_size"]) for _ in case["epochs"]]
    assert got == case["epochs"]
    assert reader.get_metadata() == case["metadata"]


def test_leaving_an_epoch_early_continues_the_stream(root):
    reader = ndd.readers.File(file_root=root)
    assert items(next(iter(reader.next_epoch(batch_size=3)))) == GOLDEN["break"]["first"]
    assert epoch_items(reader, 3) == GOLDEN["break"]["next_epoch"]


def test_calls_continue_the_stream(root):
    reader = ndd.readers.File(file_root=root)
    got = [[sample_name(np.asarray(d)), int(np.asarray(lbl)[0])] for d, lbl in (reader() for _ in range(11))]
    assert got == GOLDEN["calls"]


def test_call_with_batch_size_returns_batches(root):
    reader = ndd.readers.File(4, file_root=root)
    assert [n for n, _ in items(reader(batch_size=3))] == [p for p, _ in LISTED[:3]]
    assert [n for n, _ in items(reader(batch_size=3))] == [p for p, _ in LISTED[3:6]]


def test_max_batch_size_is_the_default_batch_size(root):
    reader = ndd.readers.File(3, file_root=root)
    assert [items(b) for b in reader.next_epoch()] == epoch_items(ndd.readers.File(file_root=root), 3)


# -- shuffling ---------------------------------------------------------------------


@pytest.mark.parametrize("initial_fill", [1, 3, 100])
def test_random_shuffle_epochs_are_permutations_and_seeded(root, initial_fill):
    def run(seed):
        reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=seed, initial_fill=initial_fill)
        return [[n for b in epoch_items(reader, 4) for n, _ in b] for _ in range(3)]

    first = run(5)
    for epoch in first:
        assert sorted(epoch) == sorted(p for p, _ in LISTED)
    assert first == run(5)
    if initial_fill > 1:
        assert first != run(6)
        assert first[0] != [p for p, _ in LISTED]


def test_shuffle_after_epoch_is_a_new_permutation_per_epoch_shared_by_shards(root):
    def shards(epoch_count):
        readers = [
            ndd.readers.File(
                file_root=root, shuffle_after_epoch=True, num_shards=2, shard_id=s, pad_last_batch=True
            )
            for s in range(2)
        ]
        return [[[n for b in epoch_items(r, 2) for n, _ in b] for r in readers] for _ in range(epoch_count)]

    epochs = shards(3)
    for shard0, shard1 in epochs:
        assert sorted(set(shard0) | set(shard1)) == sorted(p for p, _ in LISTED)
        assert not set(shard0) & set(shard1)
    assert epochs[0] != epochs[1]
    assert epochs == shards(3)


def _shard_sizes(num_shards):
    n = len(LISTED)
    return [(k + 1) * n // num_shards - k * n // num_shards for k in range(num_shards)]


@pytest.mark.parametrize("num_shards", [2, 3])
@pytest.mark.parametrize("batch_size", [2, 3])
@pytest.mark.parametrize("pad_last_batch", [False, True])
def test_random_shuffle_keeps_shards_disjoint_whatever_the_seeds(
    root, num_shards, batch_size, pad_last_batch
):
    # Every rank with its own seed: together their first epochs read each sample once
    # (the reference's shards, too, are slices of one order that no seed changes).
    firsts = []
    for shard, size in enumerate(_shard_sizes(num_shards)):
        reader = ndd.readers.File(
            file_root=root,
            random_shuffle=True,
            seed=10 + shard,
            num_shards=num_shards,
            shard_id=shard,
            pad_last_batch=pad_last_batch,
        )
        epoch = [n for b in epoch_items(reader, batch_size) for n, _ in b]
        firsts += epoch[:size]
        if pad_last_batch:
            # Padding repeats the last sample drawn, as in the reference.
            assert epoch[size:] == [epoch[size - 1]] * (len(epoch) - size)
    assert sorted(firsts) == sorted(p for p, _ in LISTED)


@pytest.mark.parametrize("shard_id", [0, 2])
@pytest.mark.parametrize("batch_size", [2, 4])
def test_random_shuffle_draws_within_one_shard_at_a_time(root, shard_id, batch_size):
    # The reader's stream runs through the shards in turn (shard_id, shard_id + 1, ...);
    # the shuffle buffer never mixes two of them, whatever the epochs' boundaries.
    # With initial_fill=1 there is no mixing: the fixed order, the same for any seed.
    def stream(seed, initial_fill):
        reader = ndd.readers.File(
            file_root=root,
            random_shuffle=True,
            seed=seed,
            initial_fill=initial_fill,
            num_shards=3,
            shard_id=shard_id,
        )
        return [n for _ in range(4) for b in epoch_items(reader, batch_size) for n, _ in b]

    fixed = stream(1, 1)
    assert fixed == stream(2, 1)
    shuffled = stream(3, 100)
    assert shuffled != fixed
    sizes = _shard_sizes(3)
    start, shard = 0, shard_id
    while start + sizes[shard] <= len(fixed):
        end = start + sizes[shard]
        assert sorted(shuffled[start:end]) == sorted(fixed[start:end])
        start, shard = end, (shard + 1) % 3


def test_random_shuffle_mixes_uniformly(root):
    """Each sample appears in each position of an epoch about equally often."""
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1, initial_fill=8)
    counts = collections.Counter()
    epochs = 400
    for _ in range(epochs):
        order = [n for b in epoch_items(reader, 8) for n, _ in b]
        counts[order[0]] += 1
    expected = epochs / len(LISTED)
    chi2 = sum((counts[p] - expected) ** 2 / expected for p, _ in LISTED)
    assert chi2 < 24.3  # 99.9th percentile of chi-square with 7 degrees of freedom


# -- reading styles and arguments ---------------------------------------------------


def test_mixing_styles_raises(root):
    reader = ndd.readers.File(file_root=root)
    next(iter(reader.next_epoch()))
    with pytest.raises(RuntimeError, match="Cannot mix"):
        reader()
    with pytest.raises(RuntimeError, match="Cannot mix"):
        next(iter(reader.next_epoch(batch_size=2)))


def test_batch_size_fixed_at_first_use(root):
    reader = ndd.readers.File(4, file_root=root)
    next(iter(reader.next_epoch(batch_size=3)))
    with pytest.raises(ValueError, match="batch_size 2 is different than the max_batch_size 3"):
        next(iter(reader.next_epoch(batch_size=2)))
    with pytest.raises(ValueError, match="larger than the reader's max_batch_size 4"):
        reader.next_epoch(batch_size=5)


def test_constructor_has_no_batch_size_keyword(root):
    with pytest.raises(TypeError, match="unexpected keyword argument 'batch_size'"):
        ndd.readers.File(file_root=root, batch_size=2)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"shard_id": 2, "num_shards": 2}, r"The shard_id=2 is invalid. Must be in range \[0..1\]"),
        ({"shard_id": -1}, r"The shard_id=-1 is invalid"),
        ({"num_shards": 0}, "'num_shards' must be at least 1"),
        ({"num_shards": 9}, "'num_shards'=9 is more than the 8 samples"),
        ({"random_shuffle": True, "shuffle_after_epoch": True}, "cannot both be True"),
        ({"files": ["a"], "file_list": "b"}, "not both"),
        ({"labels": [1]}, "'labels' needs 'files'"),
        ({"file_filters": 3}, "'file_filters' must be a glob pattern"),
        ({"initial_fill": "x"}, "'initial_fill' must be an integer"),
    ],
)
def test_bad_arguments_raise_naming_the_argument(root, kwargs, message):
    kwargs.setdefault("file_root", root)
    with pytest.raises((ValueError, TypeError), match=message):
        ndd.readers.File(**kwargs)


def test_labels_must_match_files(root):
    with pytest.raises(ValueError, match="Provided 2 labels for 1 files"):
        ndd.readers.File(files=["root/cat/c0.jpg"], labels=[1, 2])


def test_missing_folder_and_empty_dataset_raise_at_construction(tmp_path):
    with pytest.raises(FileNotFoundError, match="'file_root' folder '.*nope' does not exist"):
        ndd.readers.File(file_root=str(tmp_path / "nope"))
    (tmp_path / "empty" / "class").mkdir(parents=True)
    with pytest.raises(ValueError, match="the dataset is empty"):
        ndd.readers.File(file_root=str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="file_list"):
        ndd.readers.File(file_list=str(tmp_path / "missing.txt"))


def test_lazy_init_lists_at_first_use(tmp_path):
    reader = ndd.readers.File(file_root=str(tmp_path / "later"), lazy_init=True)
    make_dataset(str(tmp_path / "later"))
    assert len(list(reader.next_epoch())) == len(LISTED)


def test_unreadable_file_raises_naming_it_and_other_samples_still_come(root, tmp_path):
    os.remove(tmp_path / "root" / "dog" / "d0.jpg")  # listed below, but gone when read
    files = ["cat/c0.jpg", "cat/c1.JPG", "dog/d0.jpg", "dog/d1.jpeg", "eel/e0.png"]
    reader = ndd.readers.File(file_root=root, files=files)
    first = items(reader(batch_size=2))
    with pytest.raises(FileNotFoundError, match=r"ndd.readers.File: cannot read file '.*d0.jpg'"):
        reader(batch_size=2)
    # The bad sample is skipped; the good one taken with it in the failed batch is not lost.
    second = items(reader(batch_size=2))
    assert [n for n, _ in first + second] == ["cat/c0.jpg", "cat/c1.JPG", "dog/d1.jpeg", "eel/e0.png"]


@pytest.mark.parametrize("bad", ["x", "-3", "+3", "3.5", "0x10", "²", "2147483648"])
def test_malformed_file_list_line_names_the_line(root, tmp_path, bad):
    # As the reference refuses them, but for the label beyond int32, which it wraps.
    (tmp_path / "bad.txt").write_text(f"cat/c0.jpg 1\ncat/c1.JPG {bad}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2 of 'file_list'"):
        ndd.readers.File(file_list=str(tmp_path / "bad.txt"), file_root=root)


def test_file_list_labels_follow_any_run_of_spaces_and_tabs(root, tmp_path):
    # As the reference: the label is the digits after the last spaces or tabs; the path
    # keeps its own spaces; trailing whitespace (a Windows line end too) is not read.
    named = tmp_path / "root" / "cat" / "c 2.jpg"
    named.write_bytes((tmp_path / "root" / "cat" / "c0.jpg").read_bytes())
    text = "cat/c0.jpg  5\ncat/c1.JPG\t8\r\ncat/c 2.jpg \t 7 \t\ndog/d0.jpg   2147483647\n"
    (tmp_path / "list.txt").write_text(text)
    reader = ndd.readers.File(file_list=str(tmp_path / "list.txt"), file_root=root)
    got = [
        (bytes(np.asarray(ndd.get_property(d, key="source_info"))).decode(), int(np.asarray(lbl)[0]))
        for d, lbl in reader.next_epoch()
    ]
    assert got == [("cat/c0.jpg", 5), ("cat/c1.JPG", 8), ("cat/c 2.jpg", 7), ("dog/d0.jpg", 2**31 - 1)]


@pytest.mark.parametrize("label", [2**31, -(2**31) - 1])
def test_labels_beyond_int32_are_refused_naming_them(root, label):
    with pytest.raises(ValueError, match=f"ndd.readers.File: 'labels' value {label} does not fit"):
        ndd.readers.File(file_root=root, files=["cat/c0.jpg"], labels=[label])


# -- state ----------------------------------------------------------------------------


def test_get_state_needs_checkpointing(root):
    reader = ndd.readers.File(file_root=root)
    with pytest.raises(RuntimeError, match="enable_checkpointing"):
        reader.get_state()


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"random_shuffle": True, "initial_fill": 3},
        {"shuffle_after_epoch": True},
        {"num_shards": 3, "shard_id": 1},
        {"num_shards": 3, "shard_id": 2, "pad_last_batch": True},
    ],
)
@pytest.mark.parametrize("stop_after", [0, 1, 2, 4, 7])
def test_restored_reader_continues_exactly(root, config, stop_after):
    """A reader rebuilt from a state taken after any batch yields what the original
    would have: the rest of the interrupted epoch, then the following epochs."""

    def batches(reader, epochs):
        return [items(b) for _ in range(epochs) for b in reader.next_epoch(batch_size=3)]

    full = batches(ndd.readers.File(file_root=root, seed=11, enable_checkpointing=True, **config), 8)
    reader = ndd.readers.File(file_root=root, seed=11, enable_checkpointing=True, **config)
    taken = []
    while len(taken) < stop_after:
        for b in reader.next_epoch(batch_size=3):
            taken.append(items(b))
            if len(taken) == stop_after:
                break
    state = str(reader.get_state())
    restored = ndd.readers.File(file_root=root, seed=99, **config)
    restored.set_state(state)
    rest = []
    while len(taken) + len(rest) < len(full):
        rest += [items(b) for b in restored.next_epoch(batch_size=3)]
    assert (taken + rest)[: len(full)] == full


def test_state_round_trips_and_is_checked(root, tmp_path):
    reader = ndd.readers.File(file_root=root, enable_checkpointing=True)
    reader()
    state = reader.get_state()
    assert state == str(state) and repr(state) == f"ReaderState({str(state)!r})"
    assert hash(state) == hash(type(state)(str(state)))
    with pytest.raises(RuntimeError, match="before the reader is first used"):
        reader.set_state(state)
    other = ndd.readers.File(file_root=root, num_shards=2)
    with pytest.raises(ValueError, match="another dataset or sharding"):
        other.set_state(state)
    with pytest.raises(ValueError, match="not a reader state"):
        ndd.readers.File(file_root=root).set_state("garbage!")
    # Read in batches after one sample at a time: the stream goes on (as in the reference).
    batched = ndd.readers.File(file_root=root)
    batched.set_state(state)
    stream = items(ndd.readers.File(file_root=root)(batch_size=3))
    assert items(next(iter(batched.next_epoch(batch_size=2)))) == stream[1:3]


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda s: s.update(epoch="3"), "'epoch'"),
        (lambda s: s.update(returned=[10**6]), "'returned'"),
        (lambda s: s["order"].update(position=-4), "'order'"),
        (lambda s: s.update(in_epoch=1), "'in_epoch'"),
        (lambda s: s.update(batch_size=0), "'batch_size'"),
        (lambda s: s.pop("style"), "'style'"),
    ],
)
def test_a_damaged_state_is_refused_naming_what_is_wrong(root, shuffle, edit, field):
    # Fields of the wrong type or range (an edited checkpoint) failed at the first
    # read with a bare TypeError, KeyError or IndexError.
    reader = ndd.readers.File(file_root=root, enable_checkpointing=True, random_shuffle=shuffle)
    reader()
    state = json.loads(base64.b64decode(str(reader.get_state())))
    edit(state)
    damaged = base64.b64encode(json.dumps(state).encode()).decode()
    with pytest.raises(ValueError, match=rf"ndd.readers.File.set_state: the state is damaged: .*{field}"):
        ndd.readers.File(file_root=root, random_shuffle=shuffle).set_state(damaged)


# -- threads ----------------------------------------------------------------------------


def test_dropping_a_reader_stops_its_thread(root):
    reader = ndd.readers.File(file_root=root)
    reader()
    thread = reader._loader.thread
    del reader
    import gc

    gc.collect()
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_readers_in_several_threads_are_independent(root):
    results = {}

    def work(k):
        reader = ndd.readers.File(file_root=root)
        results[k] = [n for b in epoch_items(reader, 3) for n, _ in b]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == results[0] for r in results.values())


def test_reader_reads_ahead_while_the_consumer_works(root):
    """While the training step runs, the loading thread fills its queue with the
    next batches (prefetch_queue_depth + 1 of them), so the next step never
    waits for the disk when the disk is faster than the step."""
    reader = ndd.readers.File(file_root=root, prefetch_queue_depth=2)
    epoch = reader.next_epoch(batch_size=2)
    next(epoch)
    loader = reader._loader
    for _ in range(500):
        if loader.queue.full():
            break
        threading.Event().wait(0.01)
    assert loader.queue.qsize() == 3


def test_a_process_with_a_reader_mid_epoch_exits_promptly(root, tmp_path):
    """The loading thread is a daemon that never blocks forever: a script that
    leaves a reader with a full read-ahead queue still exits at once."""
    import subprocess
    import sys

    script = (
        "import ndd\n"
        f"reader = ndd.readers.File(file_root={str(tmp_path / 'root')!r}, prefetch_queue_depth=4)\n"
        "epoch = reader.next_epoch(batch_size=1)\n"
        "next(epoch)\n"
        "print('done', flush=True)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"


def test_one_path_is_a_list_of_one_file(root):
    # As the reference takes it.
    reader = ndd.readers.File(file_root=root, files="cat/c0.jpg", labels=4)
    assert [(sample_name(np.asarray(d)), int(np.asarray(lbl)[0])) for d, lbl in reader.next_epoch()] == [
        ("cat/c0.jpg", 4)
    ]
    with pytest.raises(ValueError, match="'files' must be a path or a list of paths"):
        ndd.readers.File(file_root=root, files=3)


def test_batch_sizes_beyond_int32_are_refused_at_once(root):
    # The reference's batch sizes are int32; a larger one would loop over the files for hours.
    with pytest.raises(ValueError, match="'max_batch_size' must be a positive int32, got 1099511627776"):
        ndd.readers.File(2**40, file_root=root)
    reader = ndd.readers.File(file_root=root)
    with pytest.raises(ValueError, match="'batch_size' must be a positive int32, got 2147483648"):
        next(iter(reader.next_epoch(batch_size=2**31)))


@pytest.mark.parametrize(
    "batch_size, stops, expected",
    [
        # From the reference (DALI 2.4.0): shard 0 of 3 holds 2 files, shards 1 and 2 hold 3.
        # An epoch left early, even after its last batch, keeps the shard of the next one.
        (
            None,
            [1, None, 2, None, None],
            [
                ["cat/c0.jpg"],
                ["cat/c1.JPG", "cat/c2.png"],
                ["dog/d0.jpg", "dog/d1.jpeg"],
                ["dog/d2.bmp", "eel/e0.png", "eel/e1.webp"],
                ["cat/c0.jpg", "cat/c1.JPG", "cat/c2.png"],
            ],
        ),
        (
            2,
            [1, None, 1, None, None],
            [
                [["cat/c0.jpg", "cat/c1.JPG"]],
                [["cat/c2.png", "dog/d0.jpg"]],
                [["dog/d1.jpeg", "dog/d2.bmp"]],
                [["eel/e0.png", "eel/e1.webp"], ["cat/c0.jpg", "cat/c1.JPG"]],
                [["cat/c2.png", "dog/d0.jpg"], ["dog/d1.jpeg", "dog/d2.bmp"]],
            ],
        ),
    ],
)
def test_only_epochs_run_to_their_end_move_to_the_next_shard(root, batch_size, stops, expected):
    reader = ndd.readers.File(file_root=root, num_shards=3, shard_id=0)
    got = []
    for stop in stops:
        epoch = []
        for item in reader.next_epoch(batch_size=batch_size):
            data = item[0]
            if batch_size:
                epoch.append([sample_name(np.asarray(data.select(k))) for k in range(data.batch_size)])
            else:
                epoch.append(sample_name(np.asarray(data)))
            if stop and len(epoch) == stop:
                break
        got.append(epoch)
    assert got == expected


@pytest.mark.parametrize(
    "shuffle, where",
    [(True, "next_index"), (True, "_next_run"), (False, "next_indices"), (False, "_next_run")],
)
def test_an_epoch_interrupted_midway_loses_no_sample(root, monkeypatch, shuffle, where):
    # A KeyboardInterrupt (or a signal handler's exception) inside next_epoch, in
    # the middle of a batch: the samples taken come first next time, and the reader
    # keeps its place in the stream (interrupted between taking a loaded sample and
    # advancing its order, it fell out of step with its loading thread and refused
    # every later call).
    def stream(reader, interrupt):
        epoch = reader.next_epoch(batch_size=3)
        data, _ = next(epoch)
        names = [sample_name(np.asarray(t)) for t in data.tensors]
        if interrupt:
            owner = reader if where == "_next_run" else reader._order
            original, calls = getattr(owner, where), []

            def interrupting(*args):
                calls.append(1)
                if len(calls) == 2:  # the second sample of the second batch
                    raise KeyboardInterrupt
                return original(*args)

            monkeypatch.setattr(owner, where, interrupting)
        while len(names) < 3 * len(LISTED):
            try:
                for data, _ in epoch:
                    names += [sample_name(np.asarray(t)) for t in data.tensors]
            except KeyboardInterrupt:
                pass
            epoch = reader.next_epoch(batch_size=3)
        return names[: 3 * len(LISTED)]

    def reader():
        return ndd.readers.File(file_root=root, random_shuffle=shuffle, seed=4, initial_fill=3)

    assert stream(reader(), interrupt=True) == stream(reader(), interrupt=False)


def test_one_reader_read_by_two_threads_at_once_says_so(root, monkeypatch):
    # A reader is one stream: two threads taking from it at once got epochs of
    # random lengths and lost samples. The second thread is refused, clearly.
    reader = ndd.readers.File(file_root=root)
    reader()  # set up; then hold the reader busy the way a slow read does
    inside, release = threading.Event(), threading.Event()
    original = reader._next_run

    def slow_next_run(limit):
        inside.set()
        release.wait(10)
        return original(limit)

    monkeypatch.setattr(reader, "_next_run", slow_next_run)
    first = threading.Thread(target=reader)
    first.start()
    assert inside.wait(10)
    with pytest.raises(RuntimeError, match=r"ndd.readers.File: the reader is being read by another thread"):
        reader()
    release.set()
    first.join()
    monkeypatch.undo()
    assert sample_name(np.asarray(reader()[0])) == LISTED[2][0]  # the third sample: none lost


def test_the_loading_thread_stops_at_exit_after_the_sample_at_hand(root, monkeypatch):
    # At the interpreter's exit the loading threads are stopped and joined before
    # finalization (a daemon thread still inside a library then could abort the
    # process); a thread in the middle of a chunk finishes only its current sample.
    from ndd.readers import _loader

    reader = ndd.readers.File(file_root=root)
    original, calls = reader._load_sample, []
    inside, gate = threading.Event(), threading.Event()

    def load(index):
        calls.append(index)
        if len(calls) == 17:  # the first sample of the second chunk (16 per chunk)
            inside.set()
            gate.wait(10)
        return original(index)

    monkeypatch.setattr(reader, "_load_sample", load)
    reader()
    assert inside.wait(10)
    thread = reader._loader.thread
    stopping = threading.Thread(target=_loader._stop_at_exit)
    stopping.start()
    while not reader._loader.stop_event.is_set():
        time.sleep(0.001)
    gate.set()
    stopping.join(10)
    assert not thread.is_alive()
    assert len(calls) == 17
