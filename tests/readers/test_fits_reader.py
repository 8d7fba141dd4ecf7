"""experimental.readers.Fits: the image HDUs of FITS files written here with astropy,
compared with astropy's own reading; cfitsio's element types (BITPIX with BZERO/BSCALE)
and numpy axis order, tile-compressed images, the listing shared with readers.Numpy,
batches, errors naming the reader and the file or HDU, and checkpointing refused.

The reference cannot run its Fits reader without a CUDA driver (even on the CPU), so
the expected values come from astropy and the rules the reference documents."""

import os
import sys

import numpy as np
import pytest

import ndd
from ndd._prepare.args import InvalidArgumentError
from ndd.readers import fits as fits_module

fits = pytest.importorskip("astropy.io.fits")

Fits = ndd.experimental.readers.Fits

RNG = np.random.default_rng(7)
IMAGES = {
    "uint8": RNG.integers(0, 256, (5, 7), dtype=np.uint8),
    "int16": RNG.integers(-30000, 30000, (4, 6), dtype=np.int16),
    "int32": RNG.integers(-(2**31), 2**31 - 1, (3, 5), dtype=np.int32),
    "int64": RNG.integers(-(2**62), 2**62, (2, 3), dtype=np.int64),
    "float32": RNG.standard_normal((6, 4)).astype(np.float32),
    "float64": RNG.standard_normal((3, 2, 4)),
    # astropy writes these with the FITS conventions (BZERO -128, 2**15, 2**31, 2**63).
    "int8": RNG.integers(-128, 128, (4, 4), dtype=np.int8),
    "uint16": RNG.integers(0, 2**16, (3, 3), dtype=np.uint16),
    "uint32": RNG.integers(0, 2**32, (2, 5), dtype=np.uint32),
    "uint64": np.array([[0, 1, 2**63, 2**64 - 1]], dtype=np.uint64),
}


def write(path, *hdus):
    """A FITS file of an empty primary HDU followed by ``hdus``."""
    fits.HDUList([fits.PrimaryHDU(), *hdus]).writeto(path)
    return str(path)


def read_with_astropy(path, index):
    """HDU ``index`` (counted from 1) as astropy reads it."""
    with fits.open(path) as hdus:
        return np.array(hdus[index - 1].data)


def source(tensor):
    return bytes(np.asarray(ndd.get_property(tensor, key="source_info"))).decode()


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_an_image_extension_is_read_with_its_type_and_shape(tmp_path, name):
    path = write(tmp_path / "image.fits", fits.ImageHDU(IMAGES[name]))
    got = np.asarray(Fits(files=[path])())
    assert got.dtype == IMAGES[name].dtype
    np.testing.assert_array_equal(got, IMAGES[name])
    np.testing.assert_array_equal(got, read_with_astropy(path, 2))


def test_the_shape_is_the_numpy_order_of_the_axes(tmp_path):
    # NAXIS1 (the fastest axis) is the last numpy axis, as astropy and the reference give it.
    path = write(tmp_path / "cube.fits", fits.ImageHDU(np.arange(24, dtype=np.int16).reshape(2, 3, 4)))
    with fits.open(path) as hdus:
        header = hdus[1].header
        assert (header["NAXIS1"], header["NAXIS2"], header["NAXIS3"]) == (4, 3, 2)
    assert Fits(files=[path])().shape == (2, 3, 4)


def test_a_primary_image_is_hdu_1(tmp_path):
    path = str(tmp_path / "primary.fits")
    fits.PrimaryHDU(IMAGES["int16"]).writeto(path)
    np.testing.assert_array_equal(np.asarray(Fits(files=[path], hdu_indices=[1])()), IMAGES["int16"])


def test_each_listed_hdu_is_one_output_in_order(tmp_path):
    path = write(
        tmp_path / "many.fits",
        fits.ImageHDU(IMAGES["int16"]),
        fits.ImageHDU(IMAGES["float32"]),
        fits.ImageHDU(IMAGES["uint8"]),
    )
    reader = Fits(files=[path], hdu_indices=[4, 2, 3])
    outputs = next(iter(reader.next_epoch()))
    assert len(outputs) == 3
    for got, name in zip(outputs, ["uint8", "int16", "float32"], strict=True):
        np.testing.assert_array_equal(np.asarray(got), IMAGES[name])


def test_the_default_is_the_first_extension(tmp_path):
    path = write(tmp_path / "two.fits", fits.ImageHDU(IMAGES["int32"]), fits.ImageHDU(IMAGES["int16"]))
    np.testing.assert_array_equal(np.asarray(Fits(files=[path])()), IMAGES["int32"])


@pytest.mark.parametrize("compression", ["RICE_1", "GZIP_1", "GZIP_2", "PLIO_1", "HCOMPRESS_1"])
def test_a_tile_compressed_integer_image_is_decompressed_exactly(tmp_path, compression):
    image = RNG.integers(0, 4000, (16, 24), dtype=np.int32)
    path = write(tmp_path / "packed.fits", fits.CompImageHDU(image, compression_type=compression))
    got = np.asarray(Fits(files=[path])())
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, image)


def test_a_compressed_uint16_image_keeps_its_type(tmp_path):
    path = write(tmp_path / "packed.fits", fits.CompImageHDU(IMAGES["uint16"], compression_type="RICE_1"))
    got = np.asarray(Fits(files=[path])())
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(got, IMAGES["uint16"])


def test_a_quantized_float_image_is_read_as_astropy_reads_it(tmp_path):
    image = (RNG.random((20, 30)) * 100).astype(np.float32)
    path = write(tmp_path / "packed.fits", fits.CompImageHDU(image, compression_type="RICE_1"))
    got = np.asarray(Fits(files=[path])())
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, read_with_astropy(path, 2))


def scaled_hdu(raw, bscale, bzero):
    """An image HDU storing ``raw`` with BSCALE and BZERO in its header."""
    hdu = fits.ImageHDU(raw)
    hdu.header["BSCALE"] = bscale
    hdu.header["BZERO"] = bzero
    return hdu


def write_scaled(tmp_path, raw, bscale, bzero):
    path = write(tmp_path / "scaled.fits", scaled_hdu(raw, bscale, bzero))
    with fits.open(path, do_not_scale_image_data=True) as hdus:
        np.testing.assert_array_equal(hdus[1].data, raw)  # stored as given
    return path


@pytest.mark.parametrize(
    ("raw_type", "bscale", "bzero", "expected"),
    [
        # Non-integer scaling: float32 for 8- and 16-bit images, float64 for wider ones.
        (np.uint8, 0.5, 3.0, np.float32),
        (np.int16, 0.25, -1.5, np.float32),
        (np.int32, 0.5, 0.0, np.float64),
        (np.int16, 2.0, 0.0, np.float32),
        # An integer BZERO alone: the smallest integer type that holds the shifted range.
        (np.uint8, 1.0, -128.0, np.int8),
        (np.uint8, 1.0, 1000.0, np.int16),
        (np.int16, 1.0, 32768.0, np.uint16),
        (np.int16, 1.0, 10.0, np.int32),
        (np.int32, 1.0, 2.0**31, np.uint32),
        (np.int32, 1.0, 5.0, np.float64),
        # Floating-point images keep their type.
        (np.float32, 2.0, 1.0, np.float32),
    ],
)
def test_scaled_images_come_out_in_cfitsio_equivalent_type(tmp_path, raw_type, bscale, bzero, expected):
    info = np.iinfo(raw_type) if np.dtype(raw_type).kind in "iu" else None
    raw = (
        np.array([[info.min, 0, 1], [7, 100, info.max]], dtype=raw_type)
        if info
        else np.array([[-1.5, 0, 1], [7, 100, 3.25]], dtype=raw_type)
    )
    got = np.asarray(Fits(files=[write_scaled(tmp_path, raw, bscale, bzero)])())
    assert got.dtype == expected
    want = raw.astype(np.float64) * bscale + bzero
    if np.dtype(expected).kind in "iu":
        np.testing.assert_array_equal(got, raw.astype(np.int64) + int(bzero))
    else:
        np.testing.assert_array_equal(got, want.astype(expected))


def test_blank_pixels_keep_their_value(tmp_path):
    # As the reference (cfitsio without null checking), not NaN as astropy makes them.
    raw = np.array([[-32768, 5], [6, 7]], dtype=np.int16)
    hdu = scaled_hdu(raw, 0.5, 0.0)
    hdu.header["BLANK"] = -32768
    path = write(tmp_path / "blank.fits", hdu)
    np.testing.assert_array_equal(np.asarray(Fits(files=[path])()), [[-16384.0, 2.5], [3.0, 3.5]])


def test_the_dataset_is_listed_as_readers_numpy_lists_it(tmp_path):
    root = tmp_path / "root"
    (root / "b").mkdir(parents=True)
    (root / "a").mkdir()
    for name in ["root/z.fits", "root/a/x.fits", "root/b/y.fits", "root/a/skip.fit"]:
        write(tmp_path / name, fits.ImageHDU(IMAGES["uint8"]))
    reader = Fits(file_root=str(root))
    names = [source(sample[0]) for sample in reader.next_epoch()]
    assert names == ["./z.fits", "a/x.fits", "b/y.fits"]
    numpy_reader = ndd.readers.Numpy(file_root=str(root), file_filter="*.fits")
    assert [e[0] for e in numpy_reader._ensure_listed()] == names


def test_a_file_list_names_paths_relative_to_its_folder(tmp_path):
    write(tmp_path / "one.fits", fits.ImageHDU(IMAGES["int16"]))
    write(tmp_path / "two.fits", fits.ImageHDU(IMAGES["int32"]))
    (tmp_path / "list.txt").write_text("two.fits\none.fits\n")
    samples = list(Fits(file_list=str(tmp_path / "list.txt")).next_epoch())
    np.testing.assert_array_equal(np.asarray(samples[0][0]), IMAGES["int32"])
    np.testing.assert_array_equal(np.asarray(samples[1][0]), IMAGES["int16"])


def test_files_are_relative_to_file_root(tmp_path):
    write(tmp_path / "one.fits", fits.ImageHDU(IMAGES["int16"]))
    got = Fits(file_root=str(tmp_path), files=["one.fits"])()
    np.testing.assert_array_equal(np.asarray(got), IMAGES["int16"])
    assert source(got) == "one.fits"


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_a_batch_of_files_with_other_shapes(tmp_path, dont_use_mmap):
    paths = [write(tmp_path / f"{k}.fits", fits.ImageHDU(np.full((k + 1, 3), k, np.int16))) for k in range(3)]
    batch = Fits(files=paths, dont_use_mmap=dont_use_mmap)(batch_size=3)
    assert [np.asarray(s).shape for s in batch] == [(1, 3), (2, 3), (3, 3)]
    for k, sample in enumerate(batch):
        np.testing.assert_array_equal(np.asarray(sample), np.full((k + 1, 3), k, np.int16))


def test_a_batch_of_mixed_element_types_is_refused_naming_the_files(tmp_path):
    a = write(tmp_path / "a.fits", fits.ImageHDU(IMAGES["int16"]))
    b = write(tmp_path / "b.fits", fits.ImageHDU(IMAGES["float32"]))
    with pytest.raises(
        ValueError, match=r"Fits: .*one element type.*a\.fits' is int16 2-D, of '.*b\.fits' float32"
    ):
        Fits(files=[a, b])(batch_size=2)


def test_sharding_splits_the_files(tmp_path):
    paths = [write(tmp_path / f"{k}.fits", fits.ImageHDU(np.full((2, 2), k, np.uint8))) for k in range(4)]
    seen = [
        int(np.asarray(sample[0])[0, 0])
        for shard in range(2)
        for sample in Fits(files=paths, num_shards=2, shard_id=shard).next_epoch()
    ]
    assert seen == [0, 1, 2, 3]


def test_a_missing_hdu_raises_naming_the_file_and_the_hdu(tmp_path):
    path = write(tmp_path / "short.fits", fits.ImageHDU(IMAGES["uint8"]))
    with pytest.raises(IndexError, match=r"Fits: '.*short\.fits' has 2 HDUs, no HDU 3"):
        Fits(files=[path], hdu_indices=[3])()


def test_a_table_hdu_is_refused_naming_the_file_and_the_hdu(tmp_path):
    table = fits.BinTableHDU.from_columns([fits.Column(name="x", format="E", array=np.ones(3))])
    path = write(tmp_path / "table.fits", table)
    with pytest.raises(ValueError, match=r"Fits: HDU 2 of '.*table\.fits' is a BinTableHDU, not an image"):
        Fits(files=[path])()


def test_an_hdu_without_data_is_refused(tmp_path):
    path = write(tmp_path / "empty.fits", fits.ImageHDU(IMAGES["uint8"]))
    with pytest.raises(ValueError, match=r"Fits: HDU 1 of '.*empty\.fits' holds no image \(NAXIS = 0\)"):
        Fits(files=[path], hdu_indices=[1])()


def test_errors_are_runtime_errors_as_in_the_reference(tmp_path):
    path = write(tmp_path / "short.fits", fits.ImageHDU(IMAGES["uint8"]))
    with pytest.raises(RuntimeError):
        Fits(files=[path], hdu_indices=[5])()


def test_a_corrupt_file_raises_naming_it_and_the_reader_goes_on(tmp_path):
    good = write(tmp_path / "good.fits", fits.ImageHDU(IMAGES["int16"]))
    bad = tmp_path / "bad.fits"
    bad.write_bytes(b"this is not a FITS file" * 200)
    reader = Fits(files=[str(bad), good])
    with pytest.raises(OSError, match=r"Fits: cannot read FITS file '.*bad\.fits'"):
        reader()
    np.testing.assert_array_equal(np.asarray(reader()), IMAGES["int16"])


def test_a_missing_file_raises_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"Fits: cannot read FITS file '.*nowhere\.fits'"):
        Fits(files=[str(tmp_path / "nowhere.fits")])()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"hdu_indices": [0]}, r"'hdu_indices' counts HDUs from 1 \(the primary HDU\), got 0"),
        ({"hdu_indices": []}, r"'hdu_indices' must list at least one HDU"),
        ({"hdu_indices": [2, 3], "dtypes": [ndd.int16]}, r"'dtypes' must give one type per entry"),
        ({"dtypes": [ndd.bool]}, r"'dtypes' entry bool is not supported"),
        ({"dtypes": ["nonsense"]}, r"'dtypes' entry 'nonsense' is not a DType"),
        ({"file_list": "x.txt"}, r"give the files through 'files' or 'file_list', not both"),
    ],
)
def test_bad_arguments_raise_at_construction(args, message):
    with pytest.raises(InvalidArgumentError, match=r"^ndd\.experimental\.readers\.Fits: " + message):
        Fits(files=["x.fits"], **args)


def test_dtypes_are_checked_but_the_types_come_from_the_file(tmp_path):
    # As the reference, which validates dtypes and does not convert.
    path = write(tmp_path / "image.fits", fits.ImageHDU(IMAGES["int16"]))
    assert Fits(files=[path], dtypes=[ndd.float32])().dtype == ndd.int16


def test_checkpointing_is_refused_as_in_the_reference(tmp_path):
    path = write(tmp_path / "image.fits", fits.ImageHDU(IMAGES["int16"]))
    reader = Fits(files=[path], enable_checkpointing=True)
    reader()
    with pytest.raises(RuntimeError, match="Fits reader does not support checkpointing"):
        reader.get_state()
    with pytest.raises(RuntimeError, match="Fits reader does not support checkpointing"):
        Fits(files=[path]).set_state("anything")


def test_the_reader_is_in_the_experimental_namespace():
    assert Fits.qualname == "ndd.experimental.readers.Fits"
    assert Fits is fits_module.Fits


def test_without_astropy_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "astropy.io.fits", None)  # as if it were not installed
    with pytest.raises(
        ImportError, match=r"ndd\.experimental\.readers\.Fits needs .*pip install 'ndd\[fits\]'"
    ):
        Fits(files=[os.fspath(tmp_path / "x.fits")])
