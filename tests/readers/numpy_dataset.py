"""Small ``.npy`` datasets, made the same way for the reference's goldens
(tests/golden/make_numpy_reader_goldens.py) and for ndd's tests."""

import os

import numpy as np

# Array name -> (element type, shape, Fortran order). The values are 1, 2, 3, ...
# so that every element tells where it came from and 0 never appears (it is the
# default fill value).
ARRAYS = {
    "v5": ("<i4", (5,), False),
    "v8": ("<i4", (8,), False),
    "v10": ("<i4", (10,), False),
    "v20": ("<i4", (20,), False),
    "cube": ("<i4", (5, 7, 6), False),
    "plane_f": ("<f4", (4, 5), True),
    "wide": ("<u2", (3, 9), False),
    "scalar": ("<f8", (), False),
}

# Element types the fill value is converted to (one single-element array each).
FILL_TYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "b1"]

# Files of the listing tree: the root's own files, sub-folders (one nested
# deeper, which the reader does not search), hidden names, names that sort
# before '.', a name in capitals and names the default filter skips.
LISTING_FILES = [
    "b.npy",
    "a.npy",
    ".h.npy",
    "C.NPY",
    "a.npy.bak",
    "notes.txt",
    "sub/c.npy",
    "sub/deep/e.npy",
    "+d/z.npy",
    "Zd/z.npy",
    ".hidden/h.npy",
]

# A file_list over the listing tree: an empty line is skipped.
LIST_TEXT = "sub/c.npy\n\nb.npy\n+d/z.npy\n"


def make_array(name: str) -> np.ndarray:
    dtype, shape, fortran = ARRAYS[name]
    values = np.arange(1, int(np.prod(shape)) + 1).astype(dtype).reshape(shape)
    return np.asfortranarray(values) if fortran else values


def write_arrays(folder: str) -> str:
    """Write every array of ``ARRAYS`` as ``<name>.npy`` and every fill type as
    ``fill_<type>.npy`` (one element, 1) into ``folder``."""
    os.makedirs(folder, exist_ok=True)
    for name in ARRAYS:
        _save(os.path.join(folder, f"{name}.npy"), make_array(name))
    for code in FILL_TYPES:
        _save(os.path.join(folder, f"fill_{code}.npy"), np.ones(1, code))
    return folder


def make_listing_tree(root: str) -> str:
    """Write ``LISTING_FILES`` under ``root``; file number k holds ``[k]``."""
    for k, relative in enumerate(LISTING_FILES):
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _save(path, np.array([k], np.int16))
    return root


def listing_index(relative: str) -> int:
    """The number of a listing file from the path the reader reports ('./a.npy' or 'sub/c.npy')."""
    return LISTING_FILES.index(relative[2:] if relative.startswith("./") else relative)


def _save(path, array):
    # Through a file object, so that names not ending in .npy are kept as given.
    with open(path, "wb") as fh:
        np.save(fh, array)
