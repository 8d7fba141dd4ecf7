# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Connected blobs of equal labels in an N-D mask (face connectivity).

A union-find over the pixels, in C order, by runs: the pixels of a row (the last
axis) of one label form a run, whose later pixels join its first at once. Along each
other axis a run joins its foreground predecessors of the same label, once per
stretch of pixels whose predecessors match (their predecessors are then one run of
the earlier row, already one set). A set is always represented by its smallest pixel
index, so blobs are numbered by their first pixel. The loops run without the GIL.
"""

import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t

ctypedef fused label_t:
    uint8_t
    int32_t
    int64_t


# The helpers take pointers: a memoryview passed to a function is reference-counted at
# each call.
cdef inline int64_t _find(int64_t *parent, int64_t i) noexcept nogil:
    cdef int64_t root = i
    cdef int64_t step
    while parent[root] != root:
        root = parent[root]
    # Path compression: point every pixel on the way straight at the root.
    while parent[i] != root:
        step = parent[i]
        parent[i] = root
        i = step
    return root


cdef inline void _union(int64_t *parent, int64_t i, int64_t j) noexcept nogil:
    cdef int64_t a = _find(parent, i), b = _find(parent, j)
    if a < b:
        parent[b] = a
    elif b < a:
        parent[a] = b


def connected_blobs(values, foreground):
    """The blobs of ``values`` (an N-D integer array) among its ``foreground``
    pixels (a bool array of the same shape).

    Returns ``(first_pixels, starts, ends)``: the flat index of each blob's first
    pixel in C order (its label is ``values.flat[first]``), and the start and
    one-past-end coordinates of its bounding box, as int64 rows.
    """
    values = np.asarray(values)
    if values.dtype not in (np.uint8, np.int32, np.int64):
        values = values.astype(np.int64)
    fg = np.ascontiguousarray(foreground, np.uint8).reshape(-1)
    flat = np.ascontiguousarray(values).reshape(-1)
    if flat.dtype == np.uint8:
        return _blobs[uint8_t](flat, fg, values.shape)
    if flat.dtype == np.int32:
        return _blobs[int32_t](flat, fg, values.shape)
    return _blobs[int64_t](flat, fg, values.shape)


cdef _blobs(const label_t[::1] flat, const uint8_t[::1] fg, tuple dims):
    cdef Py_ssize_t ndim = len(dims), n = flat.shape[0]
    cdef int64_t[::1] extent = np.asarray(dims if ndim else (1,), np.int64)
    cdef Py_ssize_t last = max(ndim - 1, 0)
    cdef int64_t row_length = extent[last]
    cdef int64_t[::1] strides = np.ones(max(ndim, 1), np.int64)
    cdef Py_ssize_t axis
    for axis in range(ndim - 2, -1, -1):
        strides[axis] = strides[axis + 1] * extent[axis + 1]
    cdef int64_t[::1] parent = np.arange(n, dtype=np.int64)
    # The coordinates of the current row (every axis but the last).
    cdef int64_t[::1] coord = np.zeros(max(ndim, 1), np.int64)
    cdef Py_ssize_t i, j, row, rows = n // row_length if row_length else 0, runs = 0
    cdef int64_t start, s, run_start = 0
    cdef bint joined, same
    with nogil:
        for row in range(rows):
            start = row * row_length
            # Runs along the row: each pixel joins the first of its run.
            for j in range(row_length):
                i = start + j
                if fg[i]:
                    if j > 0 and fg[i - 1] and flat[i - 1] == flat[i]:
                        parent[i] = run_start
                    else:
                        run_start = i
                        runs += 1
            # Predecessors along the other axes.
            for axis in range(last):
                if coord[axis] == 0:
                    continue
                s = strides[axis]
                joined = False
                for j in range(row_length):
                    i = start + j
                    same = fg[i] and fg[i - s] and flat[i - s] == flat[i]
                    if same and not (joined and fg[i - 1] and flat[i - 1] == flat[i]):
                        _union(&parent[0], i, i - s)
                    joined = same
            _advance(&coord[0], &extent[0], last)
    # A blob is first met at its first pixel, its set's root: blobs are numbered as they are met.
    # Each starts a run, so there are at most as many blobs as runs.
    cdef int64_t[::1] blob_of_root = np.empty(n, np.int64)
    first = np.empty(runs, np.int64)
    starts_array = np.full((runs, ndim), np.iinfo(np.int64).max, np.int64)
    ends_array = np.full((runs, ndim), -1, np.int64)
    cdef int64_t[::1] first_pixel = first
    cdef int64_t[:, ::1] starts = starts_array
    cdef int64_t[:, ::1] ends = ends_array
    cdef int64_t blob, root, run_end, count = 0
    coord[:] = 0
    with nogil:
        for row in range(rows):
            start = row * row_length
            j = 0
            while j < row_length:
                i = start + j
                if not fg[i]:
                    j += 1
                    continue
                # One run: [j, run_end) along the row.
                run_end = j + 1
                while run_end < row_length and fg[start + run_end] and flat[start + run_end] == flat[i]:
                    run_end += 1
                root = _find(&parent[0], i)
                if root == i:
                    blob_of_root[i] = count
                    first_pixel[count] = i
                    count += 1
                blob = blob_of_root[root]
                for axis in range(last):
                    if coord[axis] < starts[blob, axis]:
                        starts[blob, axis] = coord[axis]
                    if coord[axis] + 1 > ends[blob, axis]:
                        ends[blob, axis] = coord[axis] + 1
                if ndim:
                    if j < starts[blob, last]:
                        starts[blob, last] = j
                    if run_end > ends[blob, last]:
                        ends[blob, last] = run_end
                j = run_end
            _advance(&coord[0], &extent[0], last)
    return first[:count].copy(), starts_array[:count].copy(), ends_array[:count].copy()


cdef inline void _advance(int64_t *coord, const int64_t *extent, Py_ssize_t ndim) noexcept nogil:
    """Step the C-order coordinates of the first ``ndim`` axes to the next row."""
    cdef Py_ssize_t axis = ndim - 1
    while axis >= 0:
        coord[axis] += 1
        if coord[axis] < extent[axis]:
            return
        coord[axis] = 0
        axis -= 1
