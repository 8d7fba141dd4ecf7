"""ndd.pytorch.nodes: readers and operators as torchdata.nodes graphs feeding PyTorch."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import ndd

torch = pytest.importorskip("torch")
tn = pytest.importorskip("torchdata.nodes")
from ndd.pytorch import nodes  # noqa: E402 - needs torchdata

PHOTOS = sorted(str(p) for p in (pathlib.Path(ndd.__file__).parent / "_sample_data" / "photos").glob("*.jpg"))


@pytest.fixture
def dataset(tmp_path):
    """10 files in 2 class folders; file k holds the bytes [k, k, k] (k = 0..9)."""
    for k in range(10):
        folder = tmp_path / f"class{k % 2}"
        folder.mkdir(exist_ok=True)
        (folder / f"{k:02d}.jpg").write_bytes(bytes([k] * 3))
    return tmp_path


def _contents(item):
    """The first byte of each sample of a batch item (which file it came from)."""
    return [int(np.asarray(s)[0]) for s in item["data"]]


def test_reader_yields_dicts_of_the_epoch(dataset):
    node = nodes.Reader(ndd.readers.File, batch_size=4, file_root=str(dataset))
    items = list(tn.Loader(node))
    assert [i["data"].batch_size for i in items] == [4, 4, 4]
    assert all(set(i) == {"data", "label"} for i in items)
    files = [k for item in items for k in _contents(item)]
    labels = [int(np.asarray(lb)[0]) for item in items for lb in item["label"]]
    # sorted by class folder, then name; the last batch runs on into the next epoch
    expected = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9]
    assert files == (expected + expected)[:12]
    assert labels == [k % 2 for k in files]
    assert node.get_metadata()["epoch_size"] == 10


def test_each_loader_iteration_is_the_next_epoch(dataset):
    node = nodes.Reader(ndd.readers.File, batch_size=5, file_root=str(dataset), random_shuffle=True, seed=3)
    loader = tn.Loader(node)
    first = [k for item in loader for k in _contents(item)]
    second = [k for item in loader for k in _contents(item)]
    assert sorted(first) == sorted(second) == list(range(10))
    assert first != second  # reshuffled


def test_without_batch_size_the_reader_yields_samples(dataset):
    node = nodes.Reader(ndd.readers.File, batch_size=None, file_root=str(dataset))
    items = list(tn.Loader(node))
    assert len(items) == 10
    assert isinstance(items[0]["data"], ndd.Tensor)
    assert items[0]["data"].shape == (3,)


def test_output_names(dataset):
    node = nodes.Reader(ndd.readers.File, batch_size=2, file_root=str(dataset), output_names=("x", "y"))
    assert set(next(iter(tn.Loader(node)))) == {"x", "y"}
    with pytest.raises(ValueError, match=r"ndd.pytorch.nodes.Reader: 1 output name"):
        nodes.Reader(ndd.readers.File, batch_size=2, file_root=str(dataset), output_names=("x",))
    with pytest.raises(ValueError, match="repeats"):
        nodes.Reader(ndd.readers.File, batch_size=2, file_root=str(dataset), output_names=("x", "x"))
    with pytest.raises(TypeError, match="reader class"):
        nodes.Reader(ndd.decoders.image, batch_size=2)


def test_a_one_output_reader_needs_names(tmp_path):
    for k in range(3):
        np.save(tmp_path / f"{k}.npy", np.full((2, 2), k, np.int16))
    with pytest.raises(ValueError, match=r"Numpy has 1 output.*output_names"):
        nodes.Reader(ndd.readers.Numpy, batch_size=2, file_root=str(tmp_path))
    node = nodes.Reader(ndd.readers.Numpy, batch_size=3, file_root=str(tmp_path), output_names=["array"])
    (item,) = list(tn.Loader(node))
    np.testing.assert_array_equal(
        np.stack([np.asarray(s) for s in item["array"]]), np.repeat([0, 1, 2], 4).reshape(3, 2, 2)
    )


def test_dict_mapper_and_to_torch_make_the_training_batch():
    def augment(encoded):
        images = ndd.decoders.image(encoded)
        return ndd.crop_mirror_normalize(
            ndd.resize(images, size=(32, 48)), dtype=ndd.float32, mean=[10, 20, 30]
        )

    labels = list(range(len(PHOTOS)))
    source = nodes.Reader(ndd.readers.File, batch_size=4, files=PHOTOS, labels=labels)
    images, label = next(iter(tn.Loader(nodes.ToTorch(nodes.DictMapper(source, augment)))))
    assert isinstance(images, torch.Tensor) and images.dtype == torch.float32
    assert images.shape == (4, 3, 32, 48)
    assert label.flatten().tolist() == [0, 1, 2, 3]
    # the same operators called directly on the same files
    encoded = ndd.io.file.read(ndd.batch([np.frombuffer(f.encode(), np.uint8) for f in PHOTOS[:4]]))
    expected = np.asarray(augment(encoded).cpu().torch())
    np.testing.assert_array_equal(images.numpy(), expected)


def test_dict_mapper_maps_the_named_entry_only(dataset):
    source = nodes.Reader(ndd.readers.File, batch_size=2, file_root=str(dataset))
    mapped = nodes.DictMapper(source, lambda labels: labels + 10, key="label")
    item = next(iter(tn.Loader(mapped)))
    assert [int(np.asarray(s)[0]) for s in item["label"]] == [10, 10]
    assert _contents(item) == [0, 2]
    missing = nodes.DictMapper(
        nodes.Reader(ndd.readers.File, batch_size=2, file_root=str(dataset)), abs, key="x"
    )
    with pytest.raises(KeyError, match=r"DictMapper: the source's item has no entry 'x'"):
        next(iter(tn.Loader(missing)))
    with pytest.raises(TypeError, match="map_fn"):
        nodes.DictMapper(source, "not callable")
    with pytest.raises(TypeError, match="BaseNode"):
        nodes.DictMapper([1, 2], abs)


def test_to_torch_converts_in_dict_order_without_a_copy(dataset):
    source = nodes.Reader(ndd.readers.File, batch_size=2, file_root=str(dataset), output_names=("a", "b"))
    swapped = nodes.DictMapper(source, lambda a: a, key="a")
    a, b = next(iter(tn.Loader(nodes.ToTorch(swapped))))
    assert a.tolist() == [[0, 0, 0], [2, 2, 2]] and a.dtype == torch.uint8
    assert b.flatten().tolist() == [0, 0] and b.dtype == torch.int32


def test_to_torch_rejects_other_items(dataset):
    class Numbers(tn.BaseNode):
        def reset(self, initial_state=None):
            super().reset(initial_state)

        def next(self):
            return {"n": 1}

        def get_state(self):
            return {}

    with pytest.raises(TypeError, match=r"ToTorch: entry 'n' is a int"):
        next(iter(tn.Loader(nodes.ToTorch(Numbers()))))


def _epoch_contents(loader, count=None):
    out = []
    for item in loader:
        out.append(_contents(item))
        if len(out) == count:
            break  # before the loader takes another item
    return out


@pytest.mark.parametrize("prefetch", [False, True])
def test_a_loader_state_resumes_the_stream(dataset, prefetch):
    def make():
        reader = nodes.Reader(
            ndd.readers.File, batch_size=3, file_root=str(dataset), random_shuffle=True, seed=7
        )
        node = nodes.DictMapper(reader, lambda x: x, key="label")
        return tn.Loader(tn.Prefetcher(node, prefetch_factor=2) if prefetch else node)

    reference = make()
    whole = _epoch_contents(reference) + _epoch_contents(reference)

    loader = make()
    head = _epoch_contents(loader, count=2)
    state = loader.state_dict()
    resumed = make()
    resumed.load_state_dict(state)
    rest = _epoch_contents(resumed)
    nxt = _epoch_contents(resumed)
    assert head + rest == whole[: len(head) + len(rest)]
    assert len(head) + len(rest) == 4  # the interrupted epoch's batch count
    assert nxt == whole[4:8]


def test_a_state_without_the_reader_position_is_refused(dataset):
    node = nodes.Reader(ndd.readers.File, batch_size=3, file_root=str(dataset), enable_checkpointing=False)
    assert node.state_dict() == {}
    with pytest.raises(ValueError, match="enable_checkpointing=False"):
        node.reset({})


def test_parallel_mapper_runs_ndd_on_its_threads():
    def decode(item):
        return {"shape": ndd.decoders.image(item["data"]).shape, "label": item["label"]}

    source = nodes.Reader(ndd.readers.File, batch_size=2, files=PHOTOS, labels=list(range(len(PHOTOS))))
    mapped = tn.ParallelMapper(source, decode, num_workers=2, method="thread", in_order=True)
    shapes = [s for item in tn.Loader(mapped) for s in item["shape"]]
    from PIL import Image

    expected = [(h, w, 3) for w, h in (Image.open(p).size for p in PHOTOS)]
    assert [tuple(int(v) for v in np.asarray(s)) for s in shapes][: len(PHOTOS)] == expected


def test_ndd_pytorch_is_empty_without_torchdata():
    code = (
        "import sys; sys.modules['torchdata'] = None\n"
        "import ndd\n"
        "assert ndd.pytorch.__all__ == [] and not hasattr(ndd.pytorch, 'nodes')\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_import_ndd_does_not_import_torch():
    code = "import sys, ndd; assert 'torch' not in sys.modules and 'torchdata' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.gpu
def test_to_torch_puts_every_entry_on_the_gpu_of_the_gpu_entries():
    if not torch.cuda.is_available():
        pytest.skip("this torch build has no CUDA")
    source = nodes.Reader(ndd.readers.File, batch_size=3, files=PHOTOS)
    to_gpu = nodes.DictMapper(source, lambda e: ndd.resize(ndd.decoders.image(e), size=[16, 16]).gpu())
    images, labels = next(iter(tn.Loader(nodes.ToTorch(to_gpu))))
    assert images.is_cuda and labels.is_cuda and images.device == labels.device
    encoded = ndd.io.file.read(ndd.batch([np.frombuffer(f.encode(), np.uint8) for f in PHOTOS[:3]]))
    expected = np.asarray(ndd.resize(ndd.decoders.image(encoded), size=[16, 16]).torch())
    np.testing.assert_array_equal(images.cpu().numpy(), expected)
    assert labels.cpu().flatten().tolist() == [0, 1, 2]
