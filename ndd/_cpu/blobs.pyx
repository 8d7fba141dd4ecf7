# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Connected blobs of equal labels in an N-D mask (face connectivity).

A union-find over the pixels, in C order: every foreground pixel is joined with
its foreground predecessor along each axis when both hold the same label; a set
is always represented by its smallest pixel index, so blobs are numbered by their
first pixel. The loops run without the GIL.
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t


cdef inline int64_t _find(int64_t[::1] parent, int64_t i) noexcept nogil:
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


def connected_blobs(values, foreground):
    """The blobs of ``values`` (an N-D integer array) among its ``foreground``
    pixels (a bool array of the same shape).

    Returns ``(first_pixels, starts, ends)``: the flat index of each blob's first
    pixel in C order (its label is ``values.flat[first]``), and the start and
    one-past-end coordinates of its bounding box, as int64 rows.
    """
    shape = np.asarray(values.shape, np.int64)
    cdef Py_ssize_t ndim = values.ndim
    cdef const int64_t[::1] flat = np.ascontiguousarray(values, np.int64).reshape(-1)
    cdef const uint8_t[::1] fg = np.ascontiguousarray(foreground, np.uint8).reshape(-1)
    cdef Py_ssize_t n = flat.shape[0]
    cdef int64_t[::1] extent = shape
    cdef int64_t[::1] strides = np.ones(max(ndim, 1), np.int64)
    cdef Py_ssize_t axis
    for axis in range(ndim - 2, -1, -1):
        strides[axis] = strides[axis + 1] * extent[axis + 1]
    cdef int64_t[::1] parent = np.arange(n, dtype=np.int64)
    cdef int64_t[::1] coord = np.zeros(max(ndim, 1), np.int64)
    cdef int64_t[::1] blob_of_root = np.full(n, -1, np.int64)
    cdef Py_ssize_t i, count = 0
    cdef int64_t a, b, neighbor, blob
    with nogil:
        for i in range(n):
            if fg[i]:
                for axis in range(ndim):
                    if coord[axis] > 0:
                        neighbor = i - strides[axis]
                        if fg[neighbor] and flat[neighbor] == flat[i]:
                            a = _find(parent, i)
                            b = _find(parent, neighbor)
                            if a < b:
                                parent[b] = a
                            elif b < a:
                                parent[a] = b
            _advance(coord, extent, ndim)
        for i in range(n):
            if fg[i] and _find(parent, i) == i:
                blob_of_root[i] = count
                count += 1
    first = np.empty(count, np.int64)
    starts_array = np.full((count, ndim), np.iinfo(np.int64).max, np.int64)
    ends_array = np.full((count, ndim), -1, np.int64)
    cdef int64_t[::1] first_pixel = first
    cdef int64_t[:, ::1] starts = starts_array
    cdef int64_t[:, ::1] ends = ends_array
    coord[:] = 0
    with nogil:
        for i in range(n):
            if fg[i]:
                blob = blob_of_root[_find(parent, i)]
                if blob_of_root[i] == blob:
                    first_pixel[blob] = i
                for axis in range(ndim):
                    if coord[axis] < starts[blob, axis]:
                        starts[blob, axis] = coord[axis]
                    if coord[axis] + 1 > ends[blob, axis]:
                        ends[blob, axis] = coord[axis] + 1
            _advance(coord, extent, ndim)
    return first, starts_array, ends_array


cdef inline void _advance(int64_t[::1] coord, int64_t[::1] extent, Py_ssize_t ndim) noexcept nogil:
    """Step a C-order coordinate to the next pixel."""
    cdef Py_ssize_t axis = ndim - 1
    while axis >= 0:
        coord[axis] += 1
        if coord[axis] < extent[axis]:
            return
        coord[axis] = 0
        axis -= 1
