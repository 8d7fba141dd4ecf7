"""readers.COCO: outputs of every argument combination against the reference's
goldens, preprocessed annotations, RLE decoding, sharding, and errors."""

import copy
import importlib.util
import inspect
import json
import os
import pathlib
import sys
import warnings

import numpy as np
import pytest
from coco_dataset import CONFIGS, annotations_json, write_dataset

import ndd
from ndd._prepare.args import InvalidArgumentError

GOLDEN_DIR = pathlib.Path(__file__).parent.parent / "golden"
GOLDEN = json.loads((GOLDEN_DIR / "coco_reference.json").read_text(encoding="utf-8"))
with np.load(GOLDEN_DIR / "coco_reference.npz") as _saved:
    ARRAYS = {key: _saved[key] for key in _saved.files}

OUTPUT_TYPES = {"uint8": ndd.uint8, "int32": ndd.int32, "float32": ndd.float32}
# Pixelwise masks are rasterised by pycocotools (the 'readers' extra).
needs_pycocotools = pytest.mark.skipif(
    importlib.util.find_spec("pycocotools") is None, reason="pixelwise masks need pycocotools"
)


def _configs(names):
    """``names`` as parameters, those of pixelwise masks marked with needs_pycocotools."""
    return [
        pytest.param(name, marks=needs_pycocotools) if CONFIGS[name].get("pixelwise_masks") else name
        for name in names
    ]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("coco")
    return write_dataset(str(root))


def coco(paths, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the deprecated arguments' warnings
        return ndd.readers.COCO(**{**paths, **kwargs})


def source_of(tensor):
    return bytes(np.asarray(ndd.get_property(tensor, key="source_info"))).decode()


def file_bytes(paths, name):
    return np.fromfile(os.path.join(paths["file_root"], name), np.uint8)


def expected_sample(config, index):
    outputs = len(GOLDEN["configs"][config]["layouts"])
    return [ARRAYS[f"{config}/{index}/{k}"] for k in range(1, outputs)]


def assert_sample(outputs, config, index, paths):
    """One sample (Tensors) equals the reference's: same image file, and every other
    output with the same dtype, shape and values."""
    golden = GOLDEN["configs"][config]
    assert len(outputs) == len(golden["layouts"])
    image = outputs[0]
    assert source_of(image) == golden["sources"][index]
    assert image.dtype == ndd.uint8
    assert np.array_equal(np.asarray(image), file_bytes(paths, golden["sources"][index]))
    for tensor, layout, expected in zip(
        outputs[1:], golden["layouts"][1:], expected_sample(config, index), strict=True
    ):
        got = np.asarray(tensor)
        assert tensor.dtype == OUTPUT_TYPES[expected.dtype.name]
        assert (tensor.layout or "") == layout
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert np.array_equal(got, expected)


# -- outputs against the reference -------------------------------------------------


@pytest.mark.parametrize("config", _configs(sorted(CONFIGS)))
def test_one_epoch_matches_the_reference(dataset, config):
    reader = coco(dataset, **CONFIGS[config])
    golden = GOLDEN["configs"][config]
    assert reader.get_metadata() == golden["metadata"]
    samples = list(reader.next_epoch())
    assert len(samples) == len(golden["sources"])
    for index, outputs in enumerate(samples):
        assert_sample(outputs, config, index, dataset)


@pytest.mark.parametrize("config", _configs(["all_outputs", "pixelwise_masks", "polygon_masks"]))
def test_batches_hold_the_reference_samples(dataset, config):
    reader = coco(dataset, **CONFIGS[config])
    count = len(GOLDEN["configs"][config]["sources"])
    batches = list(reader.next_epoch(batch_size=2))
    assert len(batches) == (count + 1) // 2
    index = 0
    for batch in batches:
        for i in range(batch[0].batch_size):
            assert_sample([b.select(i) for b in batch], config, index % count, dataset)
            index += 1


def test_output_layouts_and_types_without_masks(dataset):
    images, boxes, labels = ndd.readers.COCO(**dataset)()
    assert (images.dtype, boxes.dtype, labels.dtype) == (ndd.uint8, ndd.float32, ndd.int32)
    assert images.ndim == 1 and boxes.shape[1:] == (4,) and labels.ndim == 1


def test_signature_matches_the_reference():
    params = list(inspect.signature(ndd.readers.COCO).parameters.values())
    ours = [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in params
    ]
    assert ours == GOLDEN["signature"]


@pytest.mark.parametrize("parser", ["orjson", "json"])
def test_annotations_parse_alike_with_or_without_orjson(dataset, parser, monkeypatch):
    # orjson (the 'readers' extra) parses the file when installed; the standard
    # library otherwise, and for what orjson refuses (NaN here).
    from ndd.readers import _coco_annotations

    if parser == "json":
        monkeypatch.setattr(_coco_annotations, "_orjson", None)
    elif _coco_annotations._orjson is None:
        pytest.skip("orjson is not installed")
    path = dataset["annotations_file"]
    parsed = _coco_annotations.load_annotations_file(path, "q")
    expected = _coco_annotations._Parser(path, "q").parse(
        json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    )
    for field in ("image_ids", "starts", "boxes", "category_ids", "iscrowd", "annotation_ids"):
        np.testing.assert_array_equal(getattr(parsed, field), getattr(expected, field))
    assert parsed.file_names == expected.file_names and parsed.segmentations == expected.segmentations
    assert np.isnan(_coco_annotations._parse_json(b'{"a": NaN}')["a"])  # orjson refuses NaN: json reads it


def test_annotations_of_unlisted_images_are_ignored(dataset):
    # The dataset file holds an annotation of image 99, which 'images' does not list.
    listed = {image["id"] for image in annotations_json()["images"]}
    assert any(a["image_id"] not in listed for a in annotations_json()["annotations"])
    reader = ndd.readers.COCO(**dataset)
    assert reader.get_metadata()["epoch_size"] == len(listed)


def test_paths_may_be_path_objects(dataset):
    reader = ndd.readers.COCO(
        file_root=pathlib.Path(dataset["file_root"]),
        annotations_file=pathlib.Path(dataset["annotations_file"]),
        images=[pathlib.PurePosixPath("sub/c.png")],
    )
    assert source_of(reader()[0]) == "sub/c.png"


def test_deprecated_arguments_warn(dataset):
    with pytest.warns(DeprecationWarning, match="'save_img_ids' is deprecated; use 'image_ids'"):
        reader = ndd.readers.COCO(**dataset, save_img_ids=True)
    assert len(reader()) == 4
    with pytest.warns(DeprecationWarning, match="'masks' is deprecated"):
        ndd.readers.COCO(**dataset, masks=True)


def test_lazy_init_lists_the_dataset_at_first_use(tmp_path):
    paths = {"file_root": str(tmp_path / "images"), "annotations_file": str(tmp_path / "annotations.json")}
    reader = ndd.readers.COCO(**paths, lazy_init=True)
    write_dataset(str(tmp_path))
    assert source_of(reader()[0]) == GOLDEN["configs"]["default"]["sources"][0]


# -- sharding and state ------------------------------------------------------------


def test_shards_split_the_dataset(dataset):
    seen = []
    for shard in range(3):
        reader = ndd.readers.COCO(**dataset, num_shards=3, shard_id=shard, stick_to_shard=True)
        seen += [source_of(s[0]) for s in reader.next_epoch()]
    assert seen == GOLDEN["configs"]["default"]["sources"]


def test_state_resumes_the_stream(dataset):
    pytest.importorskip("torch")  # the dense batches are read with .torch()
    reader = ndd.readers.COCO(**dataset, enable_checkpointing=True, image_ids=True)
    epoch = reader.next_epoch(batch_size=2)
    next(epoch)
    state = reader.get_state()
    rest = [np.asarray(b[3].torch()).reshape(-1).tolist() for b in epoch]
    resumed = ndd.readers.COCO(**dataset, image_ids=True)
    resumed.set_state(state)
    again = [np.asarray(b[3].torch()).reshape(-1).tolist() for b in resumed.next_epoch(batch_size=2)]
    assert again == rest


# -- preprocessed annotations --------------------------------------------------------


@needs_pycocotools
def test_saved_annotations_serve_readers_with_any_arguments(dataset, tmp_path):
    folder = tmp_path / "saved"
    coco(dataset, save_preprocessed_annotations=True, save_preprocessed_annotations_dir=str(folder))
    assert (folder / "ndd_coco_annotations.npz").is_file()
    for config in ["default", "all_outputs", "pixelwise_masks_no_crowd", "images", "legacy_masks"]:
        reader = coco(
            {"file_root": dataset["file_root"]}, preprocessed_annotations=str(folder), **CONFIGS[config]
        )
        for index, outputs in enumerate(reader.next_epoch()):
            assert_sample(outputs, config, index, dataset)


def test_deprecated_preprocessing_aliases(dataset, tmp_path):
    folder = str(tmp_path / "meta")
    coco(dataset, dump_meta_files=True, dump_meta_files_path=folder)
    reader = coco({"file_root": dataset["file_root"]}, meta_files_path=folder, **CONFIGS["polygon_masks"])
    for index, outputs in enumerate(reader.next_epoch()):
        assert_sample(outputs, "polygon_masks", index, dataset)


def test_preprocessed_folder_without_the_index(dataset, tmp_path):
    with pytest.raises(
        FileNotFoundError, match=r"ndd.readers.COCO: 'preprocessed_annotations' folder .* has no"
    ):
        ndd.readers.COCO(file_root=dataset["file_root"], preprocessed_annotations=str(tmp_path))


def test_preprocessed_folder_of_the_reference_format_is_refused(dataset, tmp_path):
    (tmp_path / "boxes.dat").write_bytes(b"\0" * 16)
    with pytest.raises(ValueError, match="preprocessed by DALI, whose binary format ndd does not read"):
        ndd.readers.COCO(file_root=dataset["file_root"], preprocessed_annotations=str(tmp_path))


def test_preprocessed_file_of_another_format_is_refused(dataset, tmp_path):
    np.savez(tmp_path / "ndd_coco_annotations.npz", boxes=np.zeros((1, 4)))
    with pytest.raises(ValueError, match="is not in the expected format"):
        ndd.readers.COCO(file_root=dataset["file_root"], preprocessed_annotations=str(tmp_path))


# -- RLE decoding -------------------------------------------------------------------


def test_compressed_rle_decodes_what_pycocotools_encodes():
    mask_api = pytest.importorskip("pycocotools.mask")
    from ndd.readers._coco_masks import rle_counts_from_text, rle_mask

    rng = np.random.RandomState(7)
    for height, width, density in [
        (1, 1, 0.5),
        (7, 5, 0.5),
        (40, 300, 0.999),
        (64, 48, 0.02),
        (33, 200, 0.5),
    ]:
        mask = rng.uniform(size=(height, width)) < density
        if height == 40:
            mask[:, :100] = False  # long runs: counts of several characters
        encoded = mask_api.encode(np.asfortranarray(mask.astype(np.uint8)))
        counts = rle_counts_from_text(encoded["counts"])
        assert np.array_equal(rle_mask(counts, height, width), mask)


def test_short_rle_leaves_the_rest_background():
    from ndd.readers._coco_masks import rle_mask

    expected = np.zeros((3, 2), bool)
    expected[1:, 0] = True
    assert np.array_equal(rle_mask([1, 2], 3, 2), expected)


# -- errors ---------------------------------------------------------------------------


def write_annotations(tmp_path, data, name="annotations.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


@pytest.fixture
def edited(dataset, tmp_path):
    """Paths of the dataset with an edited copy of its annotations file."""

    def make(edit):
        data = copy.deepcopy(annotations_json())
        edit(data)
        return {"file_root": dataset["file_root"], "annotations_file": write_annotations(tmp_path, data)}

    return make


def test_missing_annotations_file(dataset, tmp_path):
    missing = str(tmp_path / "nope.json")
    with pytest.raises(
        FileNotFoundError, match=r"ndd.readers.COCO: 'annotations_file' '.*nope.json' does not exist"
    ):
        ndd.readers.COCO(file_root=dataset["file_root"], annotations_file=missing)


def test_malformed_json(dataset, tmp_path):
    path = write_annotations(tmp_path, '{"images": [')
    with pytest.raises(
        ValueError, match=r"ndd.readers.COCO: 'annotations_file' '.*annotations.json' is not valid JSON"
    ):
        ndd.readers.COCO(file_root=dataset["file_root"], annotations_file=path)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.update(images={}), "'images' must be a list"),
        (lambda d: d["images"][0].pop("file_name"), "image 5 needs a 'file_name' string"),
        (lambda d: d["images"][1].update(id=5), "image id 5 is listed twice"),
        (lambda d: d["categories"].append({"id": 3}), "category id 3 is listed twice"),
        (lambda d: d["annotations"][0].update(bbox=[1, 2, 3]), r"'bbox' must be 4 numbers"),
        (lambda d: d["annotations"][0].update(bbox=["1", 2, 3, 4]), r"'bbox' must be 4 numbers"),
        (lambda d: d["annotations"][0].pop("bbox"), r"'bbox' must be 4 numbers"),
        (lambda d: d["annotations"][0].update(category_id=1.0), "'category_id' must be an integer"),
        (lambda d: d["annotations"][0].update(iscrowd=2), "'iscrowd' must be 0 or 1"),
        (lambda d: d["annotations"][0].update(segmentation="x"), "'segmentation' must be a list of polygons"),
        (lambda d: d["annotations"][0].update(category_id=77), "has category_id 77, which 'categories' does"),
        (lambda d: d.pop("categories"), "which 'categories' does not list"),
    ],
)
def test_malformed_entries_name_the_file(edited, edit, message):
    paths = edited(edit)
    with pytest.raises(ValueError, match=message) as info:
        ndd.readers.COCO(**paths)
    assert "ndd.readers.COCO" in str(info.value)
    assert "annotations.json" in str(info.value)


def test_unknown_categories_are_labels_without_remapping(edited):
    def edit(data):
        data["annotations"][1]["category_id"] = 77  # the first box of image 2 (a.png)

    images, boxes, labels = ndd.readers.COCO(**edited(edit), avoid_class_remapping=True)()
    assert np.asarray(labels).tolist() == [77, 7]


def test_images_must_be_listed_in_the_annotations(dataset):
    with pytest.raises(ValueError, match=r"'images' names 1 file\(s\) .* does not list: 'nope.png'"):
        ndd.readers.COCO(**dataset, images=["a.png", "nope.png"])


def test_empty_selection(dataset):
    with pytest.raises(ValueError, match=r"dataset is empty \('images' is empty\)"):
        ndd.readers.COCO(**dataset, images=[])
    with pytest.raises(ValueError, match="has annotations left after filtering"):
        ndd.readers.COCO(**dataset, images=["empty.jpg", "tiny.png"], skip_empty=True)


def test_ratio_needs_the_image_size(edited):
    paths = edited(lambda d: d["images"][1].pop("width"))
    with pytest.raises(
        ValueError, match=r"image 2 \('a.png'\) .* needs a positive 'width' and 'height' for ratio"
    ):
        ndd.readers.COCO(**paths, ratio=True)
    ndd.readers.COCO(**paths)  # not needed otherwise


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"file_root": None}, "'file_root' is required"),
        ({"annotations_file": ""}, "give the annotations either as 'annotations_file' or"),
        ({"preprocessed_annotations": "x"}, "'preprocessed_annotations', not both"),
        ({"pixelwise_masks": True, "polygon_masks": True}, "mutually exclusive"),
        ({"pixelwise_masks": True, "masks": True}, "mutually exclusive"),
        ({"save_preprocessed_annotations": True}, "must be given together"),
        ({"save_preprocessed_annotations_dir": "x"}, "must be given together"),
        ({"image_ids": True, "save_img_ids": True}, "'save_img_ids' is a deprecated alias of 'image_ids'"),
        ({"images": [1]}, "'images' must be a file name or a list of them"),
        ({"annotations_file": 3}, "'annotations_file' must be a path"),
    ],
)
def test_argument_errors(dataset, kwargs, message):
    with pytest.raises(InvalidArgumentError) as info:
        coco(dataset, **kwargs)
    assert message in str(info.value) and "ndd.readers.COCO" in str(info.value)


def test_missing_file_root(dataset, tmp_path):
    with pytest.raises(FileNotFoundError, match="'file_root' folder .* does not exist"):
        ndd.readers.COCO(annotations_file=dataset["annotations_file"], file_root=str(tmp_path / "nope"))


def test_missing_image_fails_at_its_sample_only(edited):
    def edit(data):
        data["images"][0]["file_name"] = "missing.jpg"  # image 5, the fourth by id

    reader = ndd.readers.COCO(**edited(edit))
    sources = GOLDEN["configs"]["default"]["sources"]
    assert [source_of(reader()[0]) for _ in range(3)] == sources[:3]
    with pytest.raises(FileNotFoundError, match=r"ndd.readers.COCO: cannot read file '.*missing.jpg'"):
        reader()
    assert [source_of(reader()[0]) for _ in sources[4:]] == sources[4:]


@needs_pycocotools
@pytest.mark.parametrize("side", [70_000, 10**9])
def test_an_image_too_large_for_its_mask_fails_at_its_sample_only(edited, side):
    # pycocotools counts pixels in 32 bits: a damaged width and height made it write
    # past its buffer (the process crashed). Masks of such images are refused.
    def edit(data):
        data["images"][0].update(width=side, height=side)  # image 5 (b.jpg), the fourth by id

    reader = ndd.readers.COCO(**edited(edit), pixelwise_masks=True)
    sources = GOLDEN["configs"]["default"]["sources"]
    assert [source_of(reader()[0]) for _ in range(3)] == sources[:3]
    with pytest.raises(
        ValueError,
        match=rf"ndd.readers.COCO: .* of image 'b.jpg' .*: the image's size {side}x{side} .* too large",
    ):
        reader()
    assert [source_of(reader()[0]) for _ in sources[4:]] == sources[4:]


PAIRS = "a polygon must be a list of x, y coordinate pairs"
POLYGONS = {"polygon_masks": True}
PIXELWISE = {"pixelwise_masks": True}


def _pixelwise(segmentation, message):
    return pytest.param(segmentation, PIXELWISE, message, marks=needs_pycocotools)


@pytest.mark.parametrize(
    "segmentation, kwargs, message",
    [
        ([[1, 2, 3, 4, 5]], POLYGONS, PAIRS),
        ([["1", 2, 3, 4, 5, 6]], POLYGONS, PAIRS),
        ([1, 2, 3, 4, 5, 6], POLYGONS, PAIRS),
        _pixelwise([["a", 2, 3, 4, 5, 6]], PAIRS),
        _pixelwise([[0, 0, 1e39, 0, 0, 5]], "a polygon to rasterise must have finite float32 coordinates"),
        _pixelwise({"size": [5, 5], "counts": [25]}, "the RLE size [5, 5] is not the image's"),
        _pixelwise({"size": [12, 24], "counts": [300]}, "cover 300 pixels, more than the 12x24"),
        _pixelwise({"size": [12, 24], "counts": [1, -1]}, "must not be negative"),
        _pixelwise({"size": [12, 24], "counts": "0\x7f"}, "is not part of a compressed RLE"),
        _pixelwise({"size": [12, 24], "counts": "P"}, "ends inside a count"),
        _pixelwise({"size": [12, 24], "counts": [1.5]}, "'counts' must be a list of integers"),
    ],
)
def test_bad_segmentation_fails_at_its_sample(edited, segmentation, kwargs, message):
    def edit(data):
        data["annotations"][1]["segmentation"] = segmentation  # of a.png, the first image

    annotation_id = annotations_json()["annotations"][1]["id"]
    reader = ndd.readers.COCO(**edited(edit), **kwargs)
    with pytest.raises(ValueError) as info:
        reader()
    text = str(info.value)
    assert message in text
    assert f"ndd.readers.COCO: annotation {annotation_id} of image 'a.png' in '" in text
    assert "annotations.json" in text
    assert source_of(reader()[0]) == "edges.png"


def test_pixelwise_masks_need_pycocotools(dataset, monkeypatch):
    monkeypatch.setitem(sys.modules, "pycocotools", None)
    with pytest.raises(ImportError, match="pixelwise_masks=True needs the 'pycocotools' package"):
        ndd.readers.COCO(**dataset, pixelwise_masks=True)


def _mask_of(segmentation, edited):
    """The pixelwise mask of a.png with its second annotation's segmentation replaced."""

    def edit(data):
        data["annotations"][1]["segmentation"] = segmentation

    reader = ndd.readers.COCO(**edited(edit), pixelwise_masks=True)
    return np.asarray(reader()[-1])[..., 0]


@needs_pycocotools
def test_a_polygon_far_outside_the_image_covers_what_it_covers_inside(edited):
    # The COCO rasteriser walks every edge in fifths of a pixel: a vertex at 1e9 ran out of
    # memory, one at 1e30 crashed the process. Such polygons are clipped to a margin
    # around the image first; inside the image they cover the same pixels.
    # a.png is 24x12: polygons within 24 pixels of it are rasterised as they are.
    far = _mask_of([[0, 0, 1e9, 1e9, 0, 1e9]], edited)
    near = _mask_of([[0, 0, 30, 30, 0, 30]], edited)
    np.testing.assert_array_equal(far, near)
    huge = _mask_of([[-1e30, -1e30, 1e30, -1e30, 1e30, 1e30, -1e30, 1e30]], edited)
    whole = _mask_of([[-20, -20, 44, -20, 44, 32, -20, 32]], edited)
    np.testing.assert_array_equal(huge, whole)
    assert (near != whole).any()
