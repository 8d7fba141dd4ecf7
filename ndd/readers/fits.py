"""``experimental.readers.Fits``: image HDUs of FITS files (astronomy images), decoded
on the CPU with astropy."""

import numpy as np

from .._optional import import_optional
from .._prepare.args import Arg, InvalidArgumentError
from .._types import NUMERIC_TYPES
from .._types import dtype as to_dtype
from ._base import Reader
from ._file_listing import FilteredFileListing

__all__ = ["Fits"]

_FLOAT_BITPIX = {-32: np.float32, -64: np.float64}
# Stored integer type of each integer BITPIX.
_INTEGER_BITPIX = {8: np.uint8, 16: np.int16, 32: np.int32, 64: np.int64}
# The types an integer image shifted by an integer BZERO comes out as: the first
# that holds every shifted value (cfitsio's "equivalent type"), else float64.
_SHIFTED_TYPES = (np.int8, np.int16, np.uint16, np.int32, np.uint32)
_UINT64_ZERO = 2**63


def _equivalent_dtype(bitpix: int, bscale: float, bzero: float) -> np.dtype:
    """The element type of an image of ``BITPIX`` scaled by ``BSCALE`` and ``BZERO``,
    as cfitsio reports it (``fits_get_img_equivtype``): the stored type when not
    scaled; an integer type when ``BSCALE`` is 1 and ``BZERO`` an integer (the FITS
    conventions for int8, uint16, uint32 and uint64 among them) whose range holds
    every shifted value; else float32 for 8- and 16-bit images, float64 for wider ones.
    Floating-point images keep their type."""
    if bitpix in _FLOAT_BITPIX:
        return np.dtype(_FLOAT_BITPIX[bitpix])
    stored = np.dtype(_INTEGER_BITPIX[bitpix])
    if bscale == 1 and bzero == 0:
        return stored
    if bscale == 1 and float(bzero).is_integer():
        if bitpix == 64 and bzero == _UINT64_ZERO:
            return np.dtype(np.uint64)
        info = np.iinfo(stored)
        low, high = info.min + int(bzero), info.max + int(bzero)
        for candidate in _SHIFTED_TYPES:
            limits = np.iinfo(candidate)
            if limits.min <= low and high <= limits.max:
                return np.dtype(candidate)
        return np.dtype(np.float64)
    return np.dtype(np.float32 if bitpix in (8, 16) else np.float64)


def _scale_image(raw: np.ndarray, bitpix: int, bscale: float, bzero: float) -> np.ndarray:
    """``raw * bscale + bzero`` in ``_equivalent_dtype``, a new native-order array:
    exact for integer results, computed in double precision for floating-point ones."""
    out = _equivalent_dtype(bitpix, bscale, bzero)
    if bscale == 1 and bzero == 0:
        return raw.astype(out)
    if out == np.uint64:
        # raw + 2**63 modulo 2**64: the sign bit flipped.
        return raw.astype(np.int64).view(np.uint64) ^ np.uint64(_UINT64_ZERO)
    if out.kind in "iu":
        return (raw.astype(np.int64) + int(bzero)).astype(out)
    return (raw.astype(np.float64) * bscale + bzero).astype(out)


def _astropy_fits(qualname):
    return import_optional(
        "astropy.io.fits", f"{qualname} needs the 'astropy' package to read FITS files", "fits"
    )


def _unreadable(qualname, path, exc):
    """The error of a file that astropy cannot open or read: an OSError naming the file."""
    kind = type(exc) if isinstance(exc, OSError) and type(exc).__module__ == "builtins" else OSError
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
    return kind(f"{qualname}: cannot read FITS file '{path}': {reason}")


class Fits(FilteredFileListing, Reader):
    """Read image HDUs (header and data units) of FITS files, decoded with astropy
    (``pip install 'ndd[fits]'``).

    The dataset is one of: ``file_root`` alone (its files, then the files of each
    of its immediate sub-folders, each folder in sorted name order, that match
    ``file_filter``), ``file_list`` (a text file of one path per line, relative
    to ``file_root`` or else to the list's folder), or ``files`` (paths relative
    to ``file_root`` when given).

    One output per entry of ``hdu_indices``, in that order: the data of that HDU of
    the file, counted from 1 as in cfitsio (1 is the primary HDU, 2 the first
    extension, the default). The HDU must be an image (a primary array, an IMAGE
    extension, or a tile-compressed image, RICE, GZIP, PLIO or HCOMPRESS, which is
    decompressed) with at least one axis. The array's shape is the numpy order of
    the axes, ``(NAXISn, ..., NAXIS2, NAXIS1)`` (the first FITS axis varies
    fastest), and its element type is cfitsio's equivalent type of the image
    (``BITPIX`` with ``BSCALE``/``BZERO`` applied, computed exactly): uint8,
    int16, int32, int64, float32 or float64 unscaled; with ``BSCALE`` 1 and an
    integer ``BZERO``, the first of int8, int16, uint16, int32, uint32 that holds
    every shifted value (so the int8, uint16 and uint32 conventions, ``BZERO``
    -128, 2**15 and 2**31, come out as those types; uint64 for ``BZERO`` 2**63 of
    a 64-bit image), else float64; with any other scaling, float32 for 8- and
    16-bit images and float64 for wider ones. ``BLANK`` pixels keep their value,
    as in the reference. Samples of a batch must agree, for each output, in number
    of dimensions and element type.

    As in the reference, ``dtypes`` is only checked (one supported numeric type
    per entry of ``hdu_indices``): the element types come from the files. The
    reader's position cannot be saved or restored (``get_state``/``set_state``
    raise), as the reference's Fits reader refuses checkpointing. The samples'
    ``source_info`` is the file's name as listed.
    """

    NAMESPACE = "ndd.experimental.readers"
    ARGS = (
        Arg(
            "dtypes",
            "any",
            None,
            doc="Accepted as in the reference, which checks it and does not use it: one numeric type "
            "per entry of ``hdu_indices``; the element types come from the files.",
            type_doc="DType or list of DType",
        ),
        Arg(
            "file_filter",
            "str",
            "*.fits",
            doc="Glob pattern (case-sensitive) of the file names under ``file_root``.",
        ),
        Arg("file_list", "str", None, doc="Text file listing one path per line."),
        Arg("file_root", "str", None, doc="Folder holding the files, or the root of relative paths."),
        Arg("files", "any", None, doc="Paths of the files to read.", type_doc="str or list of str"),
        Arg(
            "hdu_indices",
            "int_list",
            [2],
            doc="The HDUs to read, one output each, counted from 1 (the primary HDU); the default "
            "is the first extension.",
        ),
    )
    OUTPUTS = ("data",)
    # Tile-compressed images take a while to decompress: load a chunk's files in parallel.
    _parallel_loading = True

    def _validate_args(self, args):
        q = self._qualname
        self._validate_file_sources(args)
        indices = args["hdu_indices"]
        if not indices:
            raise InvalidArgumentError(f"{q}: 'hdu_indices' must list at least one HDU")
        for index in indices:
            if index < 1:
                raise InvalidArgumentError(
                    f"{q}: 'hdu_indices' counts HDUs from 1 (the primary HDU), got {index}"
                )
        self._check_dtypes(args["dtypes"], len(indices))
        self._fits = _astropy_fits(q)

    def _check_dtypes(self, dtypes, count):
        q = self._qualname
        if dtypes is None:
            return
        listed = list(dtypes) if isinstance(dtypes, (list, tuple)) else [dtypes]
        if len(listed) != count:
            raise InvalidArgumentError(
                f"{q}: 'dtypes' must give one type per entry of 'hdu_indices': got {len(listed)} for {count}"
            )
        for value in listed:
            try:
                converted = to_dtype(value)
            except (TypeError, ValueError, KeyError):
                raise InvalidArgumentError(f"{q}: 'dtypes' entry {value!r} is not a DType") from None
            if converted not in NUMERIC_TYPES:
                raise InvalidArgumentError(
                    f"{q}: 'dtypes' entry {converted} is not supported; use a numeric type "
                    f"({', '.join(str(t) for t in NUMERIC_TYPES)})"
                )

    # -- reading ------------------------------------------------------------------
    def _read(self, entry):
        path = entry[1]
        try:
            hdus = self._fits.open(
                path,
                memmap=not self._args["dont_use_mmap"],
                # Scaled as cfitsio does (_scale_image), not as astropy does.
                do_not_scale_image_data=True,
                lazy_load_hdus=True,
            )
        except Exception as exc:  # noqa: BLE001 - astropy's errors of a file it cannot open
            raise _unreadable(self._qualname, path, exc) from exc
        with hdus:
            return tuple(self._read_hdu(hdus, index, path) for index in self._args["hdu_indices"])

    def _read_hdu(self, hdus, index, path):
        q = self._qualname
        try:
            hdu = hdus[index - 1]
        except IndexError:
            raise IndexError(
                f"{q}: '{path}' has {len(hdus)} HDUs, no HDU {index} ('hdu_indices' counts from 1, "
                "the primary HDU)"
            ) from None
        except Exception as exc:  # noqa: BLE001 - a damaged header
            raise _unreadable(q, path, exc) from exc
        if not hdu.is_image or isinstance(hdu, self._fits.GroupsHDU):
            raise ValueError(
                f"{q}: HDU {index} of '{path}' is a {type(hdu).__name__}, not an image; only image HDUs "
                "can be read"
            )
        header = hdu.header
        if header.get("NAXIS", 0) == 0:
            raise ValueError(f"{q}: HDU {index} of '{path}' holds no image (NAXIS = 0)")
        try:
            raw = hdu.data
        except Exception as exc:  # noqa: BLE001 - damaged or truncated data
            raise _unreadable(q, path, exc) from exc
        return _scale_image(raw, header["BITPIX"], header.get("BSCALE", 1), header.get("BZERO", 0))

    def _num_outputs(self):
        return len(self._args["hdu_indices"])

    def _sample_types(self, arrays):
        return [(to_dtype(a.dtype), "") for a in arrays]

    def _batches(self, samples):
        first_source, first = samples[0][2], samples[0][1]
        for _, arrays, source in samples[1:]:
            for k, (array, expected) in enumerate(zip(arrays, first, strict=True)):
                if array.dtype != expected.dtype or array.ndim != expected.ndim:
                    raise ValueError(
                        f"{self._qualname}: the samples of a batch must have, for each output, one element "
                        f"type and number of dimensions: output {k} (HDU {self._args['hdu_indices'][k]}) "
                        f"of '{first_source}' is {expected.dtype} {expected.ndim}-D, of '{source}' "
                        f"{array.dtype} {array.ndim}-D"
                    )
        return super()._batches(samples)

    # -- state ----------------------------------------------------------------------
    def get_state(self, *, cuda_stream=None):
        """Refused: the reference's Fits reader does not support checkpointing."""
        raise RuntimeError(f"{self._qualname}: the Fits reader does not support checkpointing")

    def set_state(self, state) -> None:
        """Refused: the reference's Fits reader does not support checkpointing."""
        raise RuntimeError(f"{self._qualname}: the Fits reader does not support checkpointing")
