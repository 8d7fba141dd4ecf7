"""``readers.Numpy``: NumPy ``.npy`` files, whole or a region of interest of each."""

from .._prepare.args import Arg, InvalidArgumentError
from .._prepare.storage import BatchBase, TensorBase, batch_samples, tensor_data
from .._types import dtype as to_dtype
from ._base import Reader
from ._file_listing import FilteredFileListing
from ._npy_format import map_npy_data, read_npy_data, read_npy_file, read_npy_header
from ._roi import POLICIES, ROI_ARGS, exclusive_roi_error, extract, roi_region

__all__ = ["Numpy"]

_ROI_DOC = " Constant when given here; per sample when given to the call instead (not both)."


class Numpy(FilteredFileListing, Reader):
    """Read NumPy ``.npy`` files, each whole or a region of interest (ROI) of it.

    The dataset is one of: ``file_root`` alone (its files, then the files of each
    of its immediate sub-folders, each folder in sorted name order, that match
    ``file_filter``), ``file_list`` (a text file of one path per line, relative
    to ``file_root`` or else to the list's folder), or ``files`` (paths relative
    to ``file_root`` when given).

    One output: the array, with the file's element type and shape (Fortran-order
    files come out in C order; big-endian files, structured and object arrays are
    refused). Files are memory-mapped, so a ROI reads only the part it needs
    (``dont_use_mmap`` reads only the rows spanning it); the result is always a
    copy, independent of the file.

    The ROI is given by a start (``roi_start`` or fractions of the extent,
    ``rel_roi_start``; default: 0) and an end (``roi_end``/``rel_roi_end``) or a
    shape (``roi_shape``/``rel_roi_shape``; default: to the end), one value per
    axis of ``roi_axes`` (default: all axes) or one value for all of them.
    Relative values are scaled and rounded half away from zero as the reference
    does. ``out_of_bounds_policy`` decides what a ROI reaching outside the array
    does: 'error', 'trim_to_shape' (keep the part inside) or 'pad' (fill the rest
    with ``fill_value``).

    The ROI arguments may be given to the constructor (the same ROI for every
    sample) or to each call (``reader(roi_start=...)``; with ``batch_size``, a
    Batch gives one value per sample and anything else applies to all), but a
    given argument not to both.
    """

    ARGS = (
        Arg(
            "cache_header_information",
            "bool",
            False,
            doc="Parse each file's header once and keep it (for datasets read many times).",
        ),
        Arg(
            "file_filter",
            "str",
            "*.npy",
            doc="Glob pattern (case-sensitive) of the file names under ``file_root``.",
        ),
        Arg("file_list", "str", None, doc="Text file listing one path per line."),
        Arg("file_root", "str", None, doc="Folder holding the files, or the root of relative paths."),
        Arg("files", "any", None, doc="Paths of the files to read.", type_doc="str or list of str"),
        Arg(
            "fill_value",
            "float",
            0.0,
            doc="Value of the padding of ``out_of_bounds_policy='pad'``.",
            nonfinite=True,
        ),
        Arg(
            "out_of_bounds_policy",
            "str",
            "error",
            doc="What a ROI reaching outside the array does: 'error', 'trim_to_shape' or 'pad'.",
        ),
        Arg("register_buffers", "bool", True, doc="Accepted for compatibility (GPU reading); has no effect."),
        Arg("rel_roi_end", "float_list", None, doc="End of the ROI as fractions of the extent." + _ROI_DOC),
        Arg(
            "rel_roi_shape", "float_list", None, doc="Shape of the ROI as fractions of the extent." + _ROI_DOC
        ),
        Arg(
            "rel_roi_start", "float_list", None, doc="Start of the ROI as fractions of the extent." + _ROI_DOC
        ),
        Arg("roi_axes", "int_list", [], doc="Axes the ROI values refer to, in order (default: all axes)."),
        Arg("roi_end", "int_list", None, doc="End of the ROI (exclusive), in elements." + _ROI_DOC),
        Arg("roi_shape", "int_list", None, doc="Shape of the ROI, in elements." + _ROI_DOC),
        Arg("roi_start", "int_list", None, doc="Start of the ROI, in elements." + _ROI_DOC),
        Arg(
            "use_o_direct",
            "bool",
            False,
            doc="Accepted for compatibility (needs ``dont_use_mmap``); ndd reads through the page cache.",
        ),
    )
    OUTPUTS = ("data",)

    def _validate_args(self, args):
        q = self._qualname
        self._validate_file_sources(args)
        policy = args["out_of_bounds_policy"]
        # The reference takes 'pad' in any letter case, the other policies in lower case only.
        if policy.lower() == "pad":
            policy = "pad"
        if policy not in POLICIES:
            raise InvalidArgumentError(
                f"{q}: 'out_of_bounds_policy' must be one of {list(POLICIES)}, got {policy!r}"
            )
        args["out_of_bounds_policy"] = policy
        if args["use_o_direct"] and not args["dont_use_mmap"]:
            raise InvalidArgumentError(f"{q}: 'use_o_direct' needs dont_use_mmap=True")
        # An empty list is no ROI value at all, as in the reference.
        self._roi = {name: args[name] for name in ROI_ARGS if args[name]}
        problem = exclusive_roi_error(self._roi)
        if problem:
            raise InvalidArgumentError(f"{q}: {problem}")
        self._headers = {} if args["cache_header_information"] else None
        # Parsed headers by their bytes (the files of a dataset mostly share one).
        self._raw_headers = {}

    # -- reading ------------------------------------------------------------------
    def _read(self, entry):
        path = entry[1]
        if self._style != "call" and not self._roi:
            # The whole array, copied out of the file anyway: one read, no map.
            return (read_npy_file(path, self._qualname, self._raw_headers),)
        header = self._header(path)
        if self._style == "call":
            # Each call may bring its own ROI: hand the whole array over (mapped,
            # so nothing is read yet unless dont_use_mmap) and cut the region out
            # when the sample is taken.
            return (self._whole(path, header),)
        return (self._load(path, header),)

    def _header(self, path):
        if self._headers is None:
            return read_npy_header(path, self._qualname)
        header = self._headers.get(path)
        if header is None:
            header = self._headers[path] = read_npy_header(path, self._qualname)
        return header

    def _whole(self, path, header):
        if self._args["dont_use_mmap"]:
            return read_npy_data(path, header, None, self._qualname)
        return map_npy_data(path, header, self._qualname)

    def _load(self, path, header):
        """The constructor's ROI of the file, read on the loading thread."""
        region = self._region(path, header.shape, self._roi)
        fill = self._args["fill_value"]
        origin = [0] * len(header.shape)
        if not self._args["dont_use_mmap"]:
            return extract(map_npy_data(path, header, self._qualname), origin, region, fill)
        if region is None or not header.shape:
            return extract(read_npy_data(path, header, None, self._qualname), origin, region, fill)
        # Read only the rows (along the file's slowest axis) the region spans.
        axis = header.slow_axis
        rows = (region.start[axis], region.stop[axis])
        origin[axis] = rows[0]
        return extract(read_npy_data(path, header, rows, self._qualname), origin, region, fill)

    def _region(self, path, shape, roi):
        if not roi:
            return None
        try:
            return roi_region(roi, self._args["roi_axes"], self._args["out_of_bounds_policy"], shape)
        except ValueError as exc:
            raise ValueError(f"{self._qualname}: '{path}' (shape {tuple(shape)}): {exc}") from None

    def _num_outputs(self):
        return 1

    def _sample_types(self, arrays):
        return [(to_dtype(arrays[0].dtype), "")]

    def _batches(self, samples):
        first = samples[0][1][0]
        for _, (array,), source in samples[1:]:
            if array.dtype != first.dtype or array.ndim != first.ndim:
                raise ValueError(
                    f"{self._qualname}: the samples of a batch must have one element type and number of "
                    f"dimensions: '{samples[0][2]}' is {first.dtype} {first.ndim}-D, '{source}' is "
                    f"{array.dtype} {array.ndim}-D"
                )
        return super()._batches(samples)

    # -- calling ------------------------------------------------------------------
    def __call__(
        self,
        *,
        batch_size=None,
        rel_roi_end=None,
        rel_roi_shape=None,
        rel_roi_start=None,
        roi_end=None,
        roi_shape=None,
        roi_start=None,
    ):
        """Read the next sample (a Tensor) or, with ``batch_size``, the next batch (a
        Batch) of the stream.

        Parameters
        ----------
        batch_size : int, optional
            Number of samples to read as one Batch (at most ``max_batch_size``).
        rel_roi_end, rel_roi_shape, rel_roi_start, roi_end, roi_shape, roi_start : optional
            The region of interest of this call (see the class description): a
            list of numbers, a Tensor, or with ``batch_size`` a Batch of one value
            per sample. An argument given to the constructor cannot be given here.

        Returns
        -------
        Tensor or Batch
        """
        given = {
            name: value
            for name, value in zip(
                ROI_ARGS,
                (roi_start, rel_roi_start, roi_end, rel_roi_end, roi_shape, rel_roi_shape),
                strict=True,
            )
            if value is not None
        }
        self._check_batch_size(batch_size)
        rois = self._call_rois(given, batch_size)
        samples = self._take_for_call(batch_size)
        cut = []
        for k, ((index, arrays, source), roi) in enumerate(zip(samples, rois, strict=True)):
            try:
                cut.append((index, (self._cut(index, arrays[0], roi),), source))
            except ValueError:
                # A ROI given to this call that does not fit: the call's samples
                # stay next in the stream, for a call with another ROI. The
                # constructor's ROI alone: the sample is skipped, like one that
                # cannot be read.
                self._put_back(samples if given else samples[:k] + samples[k + 1 :])
                raise
        if batch_size:
            return self._batches(cut)[0]
        return self._tensors(cut[0])[0]

    def _call_rois(self, given, batch_size):
        """The ROI (argument name -> values) of each sample of a call."""
        q = self._qualname
        both = sorted(set(given) & set(self._roi))
        if both:
            raise InvalidArgumentError(f"{q}: {both} cannot be given both to the constructor and to the call")
        problem = exclusive_roi_error(set(given) | set(self._roi))
        if problem:
            raise InvalidArgumentError(f"{q}: {problem}")
        count = batch_size or 1
        rois = [dict(self._roi) for _ in range(count)]
        for name, value in given.items():
            spec = next(s for s in self._arg_specs if s.name == name)
            if isinstance(value, BatchBase):
                if batch_size is None:
                    raise InvalidArgumentError(
                        f"{q}: '{name}' is a Batch (one value per sample), which needs batch_size"
                    )
                values = [spec.convert(self, v) for v in batch_samples(value)]
                if len(values) != count:
                    raise InvalidArgumentError(
                        f"{q}: '{name}' has {len(values)} samples; the call reads {count}"
                    )
            else:
                if isinstance(value, TensorBase):
                    value = tensor_data(value)
                values = [spec.convert(self, value)] * count
            for roi, v in zip(rois, values, strict=True):
                if v:
                    roi[name] = v
        return rois

    def _cut(self, index, array, roi):
        """The sample's final array: its ROI copied out of the whole (mapped) array."""
        region = self._region(self._entries[index][1], array.shape, roi)
        return extract(array, [0] * array.ndim, region, self._args["fill_value"])
