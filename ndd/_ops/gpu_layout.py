"""GPU kernels of the data-movement operators: copy, the reshaping views (reshape,
reinterpret, squeeze, expand_dims), transpose, slice, tensor subscripts, pad, cat
and stack, plus ``broadcast_to`` for other GPU kernels.

Everything here is one of two moves, queued on ``kernels/layout.cu``:

* a strided copy: each output element is read from ``input + sum(index_d *
  stride_d)``, strides in elements and possibly 0 (broadcast) or negative
  (reversed steps); the output may be strided too (the inputs of cat and stack
  land in parts of one output);
* a padded copy: the same read where the input index lies inside the input,
  a fill value (one, or one per index along a dimension) elsewhere.

A strided copy that transposes long planes (the output's inner dimension read
with a stride, another one contiguous: HWC <-> CHW with many channels, matrix
transposes) goes through shared-memory tiles instead (``kernels/transpose.cu``),
so that its reads are coalesced as well as its writes.

A copy is made of *segments* (a sample, or one input of a join within a
sample), each a row of a small descriptor table uploaded to the device, so that
a whole ragged batch is one launch (``blockIdx.y`` picks the segment). Before
the upload, dimensions of extent 1 are dropped and dimensions that are
contiguous in both operands merged, and a copy moves the widest unit (1 to 16
bytes) that every segment's extents, strides and addresses allow; elements of
any dtype are raw bytes there.

Outputs that are contiguous windows of the input (a reshape, a slice along the
outermost dimension) are views of its memory, as on the CPU; nothing is copied.

The operators' semantics (shapes, bounds, fill values) stay in their own
modules, which hand the functions computing them to the classes here. Nothing
touches the driver at import: ``ndd._cuda`` is imported on first use.
"""

import functools
import itertools
import math

import numpy as np

from .gpu_segments import args_per_sample
from .gpu_types import SUFFIXES, suffixes

__all__ = [
    "MAX_DIMS",
    "MODULE",
    "GpuCopy",
    "GpuJoin",
    "GpuPad",
    "GpuPick",
    "GpuSlice",
    "GpuView",
    "GpuWindow",
    "broadcast_to",
    "c_strides",
    "copy_windows",
]

MODULE = "layout"
# Threads per block of every launch here.
BLOCK = 256
# LAYOUT_MAX_DIMS of kernels/layout.cu: dimensions a segment may keep after merging.
MAX_DIMS = 6
_COPY_WORDS = 5 + 3 * MAX_DIMS
# ITEM_WORDS of kernels/layout.cu: an item_copy row.
_ITEM_WORDS = 9
_PAD_WORDS = 6 + 4 * MAX_DIMS
# Element sizes with a kernel, widest first.
_UNITS = (16, 8, 4, 2, 1)
# Type names of the converting copies of kernels/layout.cu (ndd.slice's 'dtype'):
# the input types, and the output types.
_CONVERT_FROM = dict(SUFFIXES)
_CONVERT_TO = suffixes(np.uint8, np.float16, np.float32)
# Input pointers of one strided-copy launch (LAYOUT_MAX_INPUTS of kernels/layout.cu).
_MAX_INPUTS = 8
# Segments per launch along gridDim.y (the kernels loop over more).
_MAX_GRID_Y = 65535
# kernels/transpose.cu: tiles of TILE x TILE elements moved by TILE x TILE_ROWS threads,
# used where both sides of the tile are at least _MIN_TILE_SIDE long (shorter ones
# leave most of a tile idle, and the strided copy reads them well enough).
_TRANSPOSE_MODULE = "transpose"
_TILE = 32
_TILE_ROWS = 8
_MIN_TILE_SIDE = 16
_MAX_TILE_BLOCKS = 65535


@functools.cache
def _cuda():
    """The GPU runtime modules (imported on first GPU use, never by ``import ndd``)."""
    from .._cuda import context, device_array, driver, launch, modules

    return device_array, launch, modules, driver, context


def c_strides(shape) -> tuple:
    """Element strides of a C-contiguous array of ``shape``."""
    return _c_strides(tuple(shape))


@functools.lru_cache(maxsize=4096)
def _c_strides(shape):
    strides = []
    step = 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _unsupported(op, what):
    return NotImplementedError(f"{op.qualname} on the GPU: {what}; the GPU implementation lacks it")


def _upload(rows, stream, device_id):
    device_array = _cuda()[0]
    return device_array.DeviceArray.from_host(rows, device_id, stream)


def _launch(device_id, name, rows, count, max_n, stream, *pointers):
    """One launch of ``name`` over ``count`` segments of at most ``max_n`` elements."""
    _, launch, modules, _, _ = _cuda()
    kernel = modules.get_function(device_id, MODULE, name)
    grid = (launch.grid_for(max_n, BLOCK), min(count, _MAX_GRID_Y), 1)
    kernel.launch(grid, BLOCK, stream.handle, rows.ptr, count, *pointers)


# -- strided copies ----------------------------------------------------------------


class Segment:
    """One part of a strided copy: ``out[out_ptr + i . out_strides] = in[in_ptr + i .
    in_strides]`` for every index ``i`` within ``extents`` (addresses in bytes,
    strides in elements). ``source`` is the index of the input whose memory
    ``in_ptr`` lies in, among the bases given to ``strided_copy``."""

    __slots__ = ("source", "in_ptr", "out_ptr", "extents", "in_strides", "out_strides")

    def __init__(self, in_ptr, out_ptr, extents, in_strides, out_strides=None, source=0):
        self.source = source
        self.in_ptr = in_ptr
        self.out_ptr = out_ptr
        self.extents = tuple(extents)
        self.in_strides = tuple(in_strides)
        self.out_strides = c_strides(self.extents) if out_strides is None else tuple(out_strides)


def _merged(extents, in_strides, out_strides):
    """``[(extent, in_stride, out_stride)]`` without unit dimensions, each run of
    dimensions that steps evenly in both operands merged into one."""
    dims = []
    for e, si, so in zip(extents, in_strides, out_strides, strict=True):
        if e == 1:
            continue
        if dims:
            pe, psi, pso = dims[-1]
            if psi == si * e and pso == so * e:
                dims[-1] = (pe * e, si, so)
                continue
        dims.append((e, si, so))
    return dims


@functools.lru_cache(maxsize=1024)
def _byte_form(extents, in_strides, out_strides, itemsize):
    """A segment pattern's merged dimensions in bytes (the innermost one always a run
    of contiguous bytes, strides 1), and the widest unit they allow, whatever the
    pointers. Remembered: a batch's samples share a few patterns (every sample of a
    flip is one of two)."""
    dims = [(e, si * itemsize, so * itemsize) for e, si, so in _merged(extents, in_strides, out_strides)]
    if dims and dims[-1][1] == itemsize and dims[-1][2] == itemsize:
        e = dims.pop()[0]
        dims.append((e * itemsize, 1, 1))
    else:
        dims.append((itemsize, 1, 1))
    inner = dims[-1][0]
    widest = next(
        (
            unit
            for unit in _UNITS
            if inner % unit == 0 and all(si % unit == 0 and so % unit == 0 for _, si, so in dims[:-1])
        ),
        1,
    )
    return tuple(dims), widest


def _pointer_unit(address):
    """The widest unit ``address`` is aligned to (its lowest set bit, at most the widest)."""
    return min(address & -address, _UNITS[0]) if address else _UNITS[0]


@functools.lru_cache(maxsize=1024)
def _unit_form(dims, unit):
    """``(final dims, tile form, row template, element count)`` of byte ``dims``
    moved in units of ``unit`` bytes: the dimensions counted in units and merged
    again, ``_tile_form`` of them, and the strided-copy row without its source and
    offsets (None when too many dimensions are left)."""
    inner = dims[-1][0] // unit
    counted = [(e, si // unit, so // unit) for e, si, so in dims[:-1]]
    if inner > 1:
        counted.append((inner, 1, 1))
    final = tuple(_merged(*zip(*counted, strict=True))) if counted else ()
    if len(final) > MAX_DIMS:
        return final, None, None, 0
    row = np.zeros(_COPY_WORDS, np.int64)
    n = _copy_row(None, row, final, 0, 0, 0)
    return final, _tile_form(final), row, n


def strided_copy(op, segments, itemsize, out_base, in_bases, stream, device_id) -> None:
    """Queue the copies of ``segments`` (elements of ``itemsize`` bytes) into the
    allocation at ``out_base``, reading the inputs at ``in_bases`` (indexed by
    ``Segment.source``): one launch per 8 inputs.

    The kernels receive the bases as parameters and the segments as offsets from
    them (the host build of the kernels translates parameters only).

    Raises NotImplementedError naming ``op`` when a segment keeps more than
    MAX_DIMS dimensions after merging."""
    for first in range(0, len(in_bases), _MAX_INPUTS):
        bases = list(in_bases[first : first + _MAX_INPUTS])
        part = [s for s in segments if first <= s.source < first + len(bases)]
        _strided_copy(op, part, itemsize, out_base, bases, first, stream, device_id)


def _strided_copy(op, segments, itemsize, out_base, bases, first_source, stream, device_id):
    planned = []
    unit = _UNITS[0]
    for s in segments:
        if 0 in s.extents:
            continue
        dims, widest = _byte_form(s.extents, s.in_strides, s.out_strides, itemsize)
        unit = min(unit, widest, _pointer_unit(s.in_ptr), _pointer_unit(s.out_ptr))
        planned.append((s, dims))
    if not planned:
        return
    if unit < 4 and len(bases) == 1:
        items = [_item_form(dims) for _, dims in planned]
        if all(form is not None for form in items):
            _item_copy(planned, items, out_base, bases[0], stream, device_id)
            return
    forms = [_unit_form(dims, unit) for _, dims in planned]
    for final, _, row, _ in forms:
        if row is None:
            raise _unsupported(
                op,
                f"data that keeps {len(final)} dimensions after merging contiguous ones (at most {MAX_DIMS})",
            )
    if len(bases) == 1 and all(form[1] is not None for form in forms):
        _transpose_tiles(planned, [form[1] for form in forms], unit, out_base, bases[0], stream, device_id)
        return
    rows = np.array([form[2] for form in forms])
    sources = [s.source - first_source for s, _ in planned]
    rows[:, 2] = sources
    rows[:, 3] = [s.in_ptr - bases[k] for (s, _), k in zip(planned, sources, strict=True)]
    rows[:, 4] = [s.out_ptr - out_base for s, _ in planned]
    max_n = max(form[3] for form in forms)
    table = _upload(rows, stream, device_id)
    pointers = bases + [0] * (_MAX_INPUTS - len(bases))
    _launch(device_id, f"strided_copy_{unit}", table, len(planned), max_n, stream, out_base, *pointers)


def copy_windows(src, pitches, heights, row_bytes, out_addresses, stream, device_id) -> None:
    """Queue the copies of 2-D windows of bytes in device memory, each into contiguous
    bytes: window k has ``heights[k]`` rows of ``row_bytes[k]`` bytes, ``pitches[k]``
    bytes apart, from address ``src[k]``, and lands at ``out_addresses[k]`` (int64
    arrays, or sequences of ints). One launch per unit of copy (the widest that a
    window's addresses, rows and pitch allow: 16 bytes for most images, 1 for an odd
    width of three channels). The windows may lie in different allocations (decoded
    images): the kernel reads them as offsets from the lowest address, so the host
    build of the kernels, which translates the pointer parameters only, cannot run
    windows of several allocations."""
    src, pitches, heights, row_bytes, dst = (
        np.asarray(v, np.int64).reshape(-1) for v in (src, pitches, heights, row_bytes, out_addresses)
    )
    kept = (heights > 0) & (row_bytes > 0)
    if not kept.all():
        src, pitches, heights, row_bytes, dst = (v[kept] for v in (src, pitches, heights, row_bytes, dst))
    if not len(src):
        return
    # A window whose rows follow each other is one run of bytes.
    contiguous = (pitches == row_bytes) | (heights == 1)
    inner = np.where(contiguous, heights * row_bytes, row_bytes)
    bits = src | dst | inner | np.where(contiguous, 0, pitches)
    units = np.ones(len(src), np.int64)
    for unit in reversed(_UNITS[:-1]):  # 2, 4, 8, 16: the widest that divides them all
        units[bits % unit == 0] = unit
    for unit in np.unique(units):
        unit = int(unit)
        part = units == unit
        _copy_runs(
            src[part],
            dst[part],
            np.where(contiguous, 1, heights)[part],
            inner[part] // unit,
            np.where(contiguous, 0, pitches)[part] // unit,
            unit,
            stream,
            device_id,
        )


def _copy_runs(src, dst, outer, units, pitches, unit, stream, device_id):
    """One strided-copy launch of ``outer`` runs of ``units`` units, ``pitches`` units
    apart, from each ``src`` to contiguous units at each ``dst``."""
    out_base, in_base = int(dst.min()), int(src.min())
    rows = np.zeros((len(src), _COPY_WORDS), np.int64)
    rows[:, 5 : 5 + MAX_DIMS - 2] = 1
    rows[:, 0] = outer * units
    rows[:, 1] = 2
    rows[:, 3] = src - in_base
    rows[:, 4] = dst - out_base
    rows[:, 5 + MAX_DIMS - 2] = outer
    rows[:, 5 + MAX_DIMS - 1] = units
    rows[:, 5 + 2 * MAX_DIMS - 2] = pitches
    rows[:, 5 + 2 * MAX_DIMS - 1] = 1
    rows[:, 5 + 3 * MAX_DIMS - 2] = units
    rows[:, 5 + 3 * MAX_DIMS - 1] = 1
    table = _upload(rows, stream, device_id)
    pointers = [in_base] + [0] * (_MAX_INPUTS - 1)
    _launch(
        device_id, f"strided_copy_{unit}", table, len(src), int(rows[:, 0].max()), stream, out_base, *pointers
    )


def converting_copy(op, segments, in_dtype, out_dtype, out_base, in_base, stream, device_id) -> None:
    """Queue the copies of ``segments`` (strides in elements of their own type)
    converting each element from ``in_dtype`` to ``out_dtype`` as ``ndd.slice``'s
    'dtype' does, as one launch (``_CONVERT_FROM`` and ``_CONVERT_TO`` list the
    types)."""
    planned = [
        (s, _merged(s.extents, s.in_strides, s.out_strides))
        for s in segments
        if not any(e == 0 for e in s.extents)
    ]
    if not planned:
        return
    rows = np.zeros((len(planned), _COPY_WORDS), np.int64)
    max_n = 0
    for row, (s, dims) in zip(rows, planned, strict=True):
        max_n = max(max_n, _copy_row(op, row, dims, 0, s.in_ptr - in_base, s.out_ptr - out_base))
    table = _upload(rows, stream, device_id)
    name = f"convert_copy_{_CONVERT_FROM[in_dtype]}_to_{_CONVERT_TO[out_dtype]}"
    _launch(device_id, name, table, len(planned), max_n, stream, out_base, in_base)


def _copy_row(op, row, dims, source, in_offset, out_offset):
    """Fill a strided-copy row; return its element count."""
    if len(dims) > MAX_DIMS:
        raise _unsupported(
            op,
            f"data that keeps {len(dims)} dimensions after merging contiguous ones (at most {MAX_DIMS})",
        )
    if not dims:
        dims = [(1, 0, 0)]
    n = math.prod(e for e, _, _ in dims)
    first = MAX_DIMS - len(dims)
    row[:5] = n, len(dims), source, in_offset, out_offset
    for k, (e, si, so) in enumerate(dims, first):
        row[5 + k] = e
        row[5 + MAX_DIMS + k] = si
        row[5 + 2 * MAX_DIMS + k] = so
    row[5 : 5 + first] = 1
    return n


@functools.lru_cache(maxsize=1024)
def _item_form(dims):
    """``(output bytes, rows per plane, row bytes, item bytes, item stride, row stride,
    plane stride)`` (the words 0 and 3-8 of an item_copy row, strides in input bytes)
    when a copy's merged byte dimensions are planes of rows of items (runs of bytes) with
    a contiguous output, the items of a row possibly reversed; else None."""
    *outer, (item, _, _) = dims
    count, item_stride = 1, item
    if outer and outer[-1][2] == item:
        count, item_stride, _ = outer.pop()
    row_bytes = count * item
    lines = [(1, 0, row_bytes)] * (2 - len(outer)) + outer
    if len(lines) > 2:
        return None
    (planes, plane_stride, plane_out), (rows, row_stride, row_out) = lines
    if row_out != row_bytes or (planes > 1 and plane_out != rows * row_bytes):
        return None
    return (planes * rows * row_bytes, rows, row_bytes, item, item_stride, row_stride, plane_stride)


def _item_copy(planned, items, out_base, in_base, stream, device_id):
    """One launch of item_copy_<4 or 1> (kernels/layout.cu) over the segments (see
    ``_item_form``): output words of 4 bytes where every row and output allows."""
    rows = np.zeros((len(planned), _ITEM_WORDS), np.int64)
    rows[:, [0, 3, 4, 5, 6, 7, 8]] = items
    rows[:, 1] = [s.in_ptr - in_base for s, _ in planned]
    rows[:, 2] = [s.out_ptr - out_base for s, _ in planned]
    size = 4 if not ((rows[:, 4] | rows[:, 2] | out_base) % 4).any() else 1
    table = _upload(rows, stream, device_id)
    _launch(
        device_id,
        f"item_copy_{size}",
        table,
        len(planned),
        int(rows[:, 0].max()) // size,
        stream,
        out_base,
        in_base,
    )


def _tile_form(dims):
    """``(N, A, B, sN, sB, oN, oA)`` when a copy's merged dimensions (extent, in
    stride, out stride) are N transposes of A x B tiles: the output's innermost
    dimension (B) read with a stride, another dimension (A) read contiguously, both
    long enough for tiles to pay; else None."""
    if not 2 <= len(dims) <= 3:
        return None
    b_extent, b_in, b_out = dims[-1]
    if b_out != 1 or b_in == 1:
        return None
    rest = dims[:-1]
    a = next((k for k, (_, si, _) in enumerate(rest) if si == 1), None)
    if a is None:
        return None
    a_extent, _, a_out = rest[a]
    if min(a_extent, b_extent) < _MIN_TILE_SIDE:
        return None
    n_extent, n_in, n_out = rest[1 - a] if len(rest) == 2 else (1, 0, 0)
    return n_extent, a_extent, b_extent, n_in, b_in, n_out, a_out


def _transpose_tiles(planned, forms, unit, out_base, in_base, stream, device_id):
    """One launch of kernels/transpose.cu over the segments (see ``_tile_form``)."""
    rows = np.array(
        [
            (n, a, b, s.in_ptr - in_base, s.out_ptr - out_base, sn, sb, on, oa)
            for (s, _), (n, a, b, sn, sb, on, oa) in zip(planned, forms, strict=True)
        ],
        np.int64,
    )
    tiles = max(n * -(-a // _TILE) * -(-b // _TILE) for n, a, b, *_ in forms)
    table = _upload(rows, stream, device_id)
    _, _, modules, _, _ = _cuda()
    kernel = modules.get_function(device_id, _TRANSPOSE_MODULE, f"transpose_tiles_{unit}")
    grid = (min(tiles, _MAX_TILE_BLOCKS), min(len(planned), _MAX_GRID_Y), 1)
    kernel.launch(grid, (_TILE, _TILE_ROWS, 1), stream.handle, table.ptr, len(planned), out_base, in_base)


# -- padded copies -----------------------------------------------------------------


class PadSegment:
    """One C-contiguous output of ``extents`` at ``out_ptr`` whose index ``i`` reads
    the input element at ``starts + i`` (strides ``in_strides`` from ``in_ptr``, in
    elements) where that lies within ``in_extents``, else the fill value:
    ``fill[i[fill_dim]]``, or ``fill[0]`` when ``fill_dim`` is None. ``fill`` is a
    1-D numpy array of the output type."""

    __slots__ = ("in_ptr", "out_ptr", "extents", "starts", "in_extents", "in_strides", "fill", "fill_dim")

    def __init__(self, in_ptr, out_ptr, extents, starts, in_extents, in_strides, fill, fill_dim=None):
        self.in_ptr = in_ptr
        self.out_ptr = out_ptr
        self.extents = tuple(extents)
        self.starts = tuple(starts)
        self.in_extents = tuple(in_extents)
        self.in_strides = tuple(in_strides)
        self.fill = fill
        self.fill_dim = fill_dim


def _pad_dims(s, itemsize):
    """``(in_ptr, [(extent, start, in_extent, in_stride, is_fill_dim)])``: unit
    dimensions within the input dropped, a dimension merged into the one outside it
    where it reads its whole input extent contiguously."""
    in_ptr = s.in_ptr
    dims = []
    for d, (e, start, n, stride) in enumerate(
        zip(s.extents, s.starts, s.in_extents, s.in_strides, strict=True)
    ):
        if e == 1 and 0 <= start < n:
            in_ptr += start * stride * itemsize
            continue
        dims.append((e, start, n, stride, d == s.fill_dim))
    merged = []
    for dim in reversed(dims):
        e, start, n, stride, is_fill = dim
        if merged:
            ie, istart, in_, istride, ifill = merged[-1]
            if istart == 0 and ie == in_ and stride == istride * in_ and not is_fill and not ifill:
                merged[-1] = (e * ie, start * ie, n * in_, istride, False)
                continue
        merged.append(dim)
    return in_ptr, merged[::-1]


def padded_copy(op, segments, in_dtype, out_base, in_base, stream, device_id, out_dtype=None) -> None:
    """Queue the padded copies of ``segments`` from the input at ``in_base`` into the
    allocation at ``out_base`` as one launch, their fill values uploaded with it.

    Elements move as raw bytes (``in_dtype``'s size: 1, 2, 4, 8 or 16), or are
    converted to ``out_dtype`` as by ``converting_copy`` when it is given."""
    itemsize = in_dtype.itemsize
    planned = []
    for s in segments:
        if any(e == 0 for e in s.extents):
            continue
        in_ptr, dims = _pad_dims(s, itemsize)
        if len(dims) > MAX_DIMS:
            raise _unsupported(
                op,
                f"data that keeps {len(dims)} dimensions after merging contiguous ones (at most {MAX_DIMS})",
            )
        planned.append((s, in_ptr, dims))
    if not planned:
        return
    fills = [np.ascontiguousarray(s.fill).reshape(-1) for s, _, _ in planned]
    fill_offsets = np.cumsum([0] + [f.size for f in fills[:-1]])
    rows = np.zeros((len(planned), _PAD_WORDS), np.int64)
    max_n = 0
    for row, (s, in_ptr, dims), offset in zip(rows, planned, fill_offsets, strict=True):
        if not dims:
            dims = [(1, 0, 1, 0, False)]
        n = math.prod(d[0] for d in dims)
        max_n = max(max_n, n)
        first = MAX_DIMS - len(dims)
        fill_dim = next((first + k for k, d in enumerate(dims) if d[4]), -1)
        row[:6] = (
            n,
            len(dims),
            in_ptr - in_base,
            s.out_ptr - out_base,
            int(offset) * fills[0].itemsize,
            fill_dim,
        )
        for k, (e, start, extent, stride, _) in enumerate(dims, first):
            row[6 + k] = e
            row[6 + MAX_DIMS + k] = start
            row[6 + 2 * MAX_DIMS + k] = extent
            row[6 + 3 * MAX_DIMS + k] = stride
        row[6 : 6 + first] = 1
        row[6 + 2 * MAX_DIMS : 6 + 2 * MAX_DIMS + first] = 1
    # The rows and the fill values travel in one upload: the fill values start after
    # the rows, at a multiple of 16 bytes (a row is 240), so any element type is aligned.
    table = _upload(
        np.concatenate([rows.reshape(-1).view(np.uint8), np.concatenate(fills).view(np.uint8)]),
        stream,
        device_id,
    )
    if out_dtype is None:
        name = f"padded_copy_{itemsize}"
    else:
        name = f"convert_pad_{_CONVERT_FROM[in_dtype]}_to_{_CONVERT_TO[out_dtype]}"
    _launch(
        device_id,
        name,
        table,
        len(planned),
        max_n,
        stream,
        out_base,
        in_base,
        table.ptr + rows.nbytes,
    )


# -- operands and outputs ------------------------------------------------------------


def _samples(x):
    """``[(address, shape)]`` of the samples of a DeviceBatch, or of a DeviceArray (one)."""
    device_array = _cuda()[0]
    if isinstance(x, device_array.DeviceBatch):
        base = x.data.ptr
        return [(base + offset, tuple(shape)) for offset, shape in zip(x.offsets, x.shapes, strict=True)]
    return [(x.ptr, tuple(x.shape))]


def _base(x) -> int:
    """The address of the memory of a DeviceArray or of a DeviceBatch's samples."""
    data = getattr(x, "data", x)
    return data.ptr


def _allocate(shapes, dtype, batch_size, stream, device_id):
    """``(output, [address of each sample])``: a DeviceArray (``batch_size`` < 0,
    one shape) or a DeviceBatch in the usual layout."""
    device_array = _cuda()[0]
    if batch_size < 0:
        (shape,) = shapes
        out = device_array.DeviceArray.empty(shape, dtype, device_id, stream)
        return out, [out.ptr]
    dense = len(set(shapes)) <= 1
    offsets, total = device_array.DeviceBatch.layout(shapes, dtype.itemsize, dense)
    data = device_array.DeviceArray.empty((total,), np.uint8, device_id, stream)
    return device_array.DeviceBatch(data, offsets, list(shapes), dtype, dense), [
        data.ptr + o for o in offsets
    ]


def _view_of(x, sample_views, dtype, batch_size, stream):
    """Outputs sharing ``x``'s memory: ``sample_views`` are ``(byte offset from the
    sample's start, shape)`` per sample."""
    device_array = _cuda()[0]
    if batch_size < 0:
        ((offset, shape),) = sample_views
        return device_array.DeviceArray(
            x.owner, x.ptr + offset, shape, dtype, x.device_id, stream, x.offset + offset
        )
    offsets = [o + v for o, (v, _) in zip(x.offsets, sample_views, strict=True)]
    shapes = [tuple(shape) for _, shape in sample_views]
    step = math.prod(shapes[0]) * dtype.itemsize if shapes else 0
    dense = len(set(shapes)) <= 1 and offsets == [k * step for k in range(len(offsets))]
    data = device_array.DeviceArray(
        x.data.owner, x.data.ptr, x.data.shape, np.uint8, x.device_id, stream, x.data.offset
    )
    return device_array.DeviceBatch(data, offsets, shapes, dtype, dense)


def _is_run(offset_shape_strides):
    """Whether a window is one contiguous run of elements (so it can be a view)."""
    _, shape, strides = offset_shape_strides
    return _is_run_of(tuple(shape), tuple(strides))


@functools.lru_cache(maxsize=1024)
def _is_run_of(shape, strides):
    if any(e == 0 for e in shape):
        return True
    dims = _merged(shape, strides, c_strides(shape))
    return not dims or (len(dims) == 1 and dims[0][1] == 1)


def _gather(op, x, windows, batch_size, stream, device_id, dtype=None):
    """Outputs made of one window of ``x`` per sample: ``(element offset, shape,
    element strides)``. Views when every window is contiguous, else one launch."""
    dtype = x.dtype if dtype is None else dtype
    itemsize = dtype.itemsize
    if all(_is_run(w) for w in windows):
        # An empty window may start past the end of the input: it points at the sample instead.
        views = [(0 if 0 in s else o * itemsize, s) for o, s, _ in windows]
        return _view_of(x, views, dtype, batch_size, stream)
    out, addresses = _allocate([s for _, s, _ in windows], dtype, batch_size, stream, device_id)
    segments = [
        Segment(ptr + offset * itemsize, address, shape, strides)
        for (ptr, _), (offset, shape, strides), address in zip(_samples(x), windows, addresses, strict=True)
    ]
    strided_copy(op, segments, itemsize, _base(out), [_base(x)], stream, device_id)
    return out


class _BroadcastTo:
    qualname = "ndd broadcasting"


def broadcast_to(array, shape: tuple, stream, device_id: int):
    """A C-contiguous copy of ``array`` broadcast to ``shape`` as numpy broadcasts.

    Parameters
    ----------
    array : DeviceArray
        The data; its dimensions align with the last ones of ``shape`` and must
        equal them or be 1.
    shape : tuple of int
        The shape of the result.
    stream : Stream
        Where the copy is queued (``array`` must be ordered before it).
    device_id : int
        The device of ``array`` and of the result.

    Returns
    -------
    DeviceArray
        ``array`` itself when it already has ``shape``, else a new array written by
        one launch of the strided copy (broadcast dimensions read with stride 0).

    Raises
    ------
    ValueError
        When ``array`` does not broadcast to ``shape``.
    NotImplementedError
        When the broadcast keeps more than MAX_DIMS dimensions after merging.
    """
    shape = tuple(int(n) for n in shape)
    if tuple(array.shape) == shape:
        return array
    lead = len(shape) - array.ndim
    if lead < 0 or any(n not in (1, m) for n, m in zip(array.shape, shape[lead:], strict=True)):
        raise ValueError(f"cannot broadcast a GPU array of shape {tuple(array.shape)} to {shape}")
    own = c_strides(array.shape)
    strides = [0] * lead + [0 if n == 1 else s for n, s in zip(array.shape, own, strict=True)]
    device_array = _cuda()[0]
    out = device_array.DeviceArray.empty(shape, array.dtype, device_id, stream)
    segment = Segment(array.ptr, out.ptr, shape, strides)
    strided_copy(_BroadcastTo, [segment], array.dtype.itemsize, out.ptr, [array.ptr], stream, device_id)
    return out


# -- the operators -------------------------------------------------------------------


def _host_values(x, batch_size):
    """A host input (None, an array, or a list of sample arrays) as one entry per sample."""
    count = 1 if batch_size < 0 else batch_size
    if x is None or isinstance(x, np.ndarray):
        return [x] * count
    return list(x)


class _LayoutKernel:
    """What the GPU kernels here share: the operator they serve, its errors, and the
    prepare-phase check that the data inputs (``data_inputs``, all when None) are
    on the GPU and the other inputs in host memory (their values size the output)."""

    data_inputs = (0,)

    def __init__(self, op):
        self.op = op

    def _unsupported(self, what):
        return _unsupported(self.op, what)

    def check(self, ins, args):
        """Prepare phase: refuse inputs in the wrong memory (metadata only)."""
        data = range(len(ins)) if self.data_inputs is None else self.data_inputs
        for k, x in enumerate(ins):
            if x is None:
                continue
            on_gpu = x._device.device_type == "gpu"
            name = self.op.input_names[min(k, len(self.op.input_names) - 1)]
            if k in data and not on_gpu:
                raise self._unsupported(
                    f"input '{name}' in host memory; move it to the GPU with .gpu() first"
                )
            if k not in data and on_gpu:
                raise self._unsupported(
                    f"input '{name}' on the GPU (its values are needed on the host); pass it in host memory"
                )


class GpuCopy(_LayoutKernel):
    """The GPU kernel of ``ndd.copy``: a device-to-device copy of the whole data (a
    batch with gaps between its samples is packed by one strided-copy launch)."""

    def __call__(self, inputs, args, batch_size, ctx):
        x = inputs[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        if batch_size < 0:
            out, _ = _allocate([x.shape], x.dtype, batch_size, stream, device_id)
            _memcpy(out.ptr, x.ptr, x.nbytes, stream, device_id)
            return [out]
        shapes = [tuple(s) for s in x.shapes]
        out, addresses = _allocate(shapes, x.dtype, batch_size, stream, device_id)
        if x.dense:
            _memcpy(
                _base(out), _base(x), sum(math.prod(s) for s in shapes) * x.dtype.itemsize, stream, device_id
            )
            return [out]
        segments = [
            Segment(ptr, address, shape, c_strides(shape))
            for (ptr, shape), address in zip(_samples(x), addresses, strict=True)
        ]
        strided_copy(self.op, segments, x.dtype.itemsize, _base(out), [_base(x)], stream, device_id)
        return [out]


def _memcpy(dst, src, nbytes, stream, device_id):
    _, _, _, driver, context = _cuda()
    if nbytes:
        driver.check(
            context.state().api.cuMemcpyDtoDAsync(dst, src, nbytes, int(stream.handle)),
            f"copying {nbytes} bytes on device {device_id}",
        )


class GpuView(_LayoutKernel):
    """The GPU kernel of an operator whose output is its input's memory seen with
    another shape (and type): reshape, reinterpret, squeeze, expand_dims. Nothing
    is copied or launched.

    ``sample_shape(in_shape, shape_values, args)`` is a sample's output shape
    (``shape_values``: its optional shape input as a list, None without one);
    ``out_dtype(dtype, args)`` its numpy type, the input's when None."""

    def __init__(self, op, sample_shape, out_dtype=None):
        super().__init__(op)
        self.sample_shape = sample_shape
        self.out_dtype = out_dtype

    def __call__(self, inputs, args, batch_size, ctx):
        x = inputs[0]
        dtype = x.dtype if self.out_dtype is None else np.dtype(self.out_dtype(x.dtype, args))
        shape_input = inputs[1] if len(inputs) > 1 else None
        values = [
            None if v is None else v.reshape(-1).tolist() for v in _host_values(shape_input, batch_size)
        ]
        shapes = [
            tuple(self.sample_shape(shape, v, a))
            for (_, shape), v, a in zip(_samples(x), values, args_per_sample(args, batch_size), strict=True)
        ]
        return [_view_of(x, [(0, s) for s in shapes], dtype, batch_size, ctx.cuda_stream)]


class GpuWindow(_LayoutKernel):
    """The GPU kernel of an operator whose output is a strided window of its input:
    transpose, tensor subscripts. ``window(in_shape, args)`` gives a sample's
    ``(element offset, shape, element strides)``; contiguous windows are views, the
    others one strided-copy launch for the whole batch."""

    def __init__(self, op, window):
        super().__init__(op)
        self.window = window

    def __call__(self, inputs, args, batch_size, ctx):
        x = inputs[0]
        windows = [
            self.window(shape, a)
            for (_, shape), a in zip(_samples(x), args_per_sample(args, batch_size), strict=True)
        ]
        return [_gather(self.op, x, windows, batch_size, ctx.cuda_stream, ctx.device_id)]


def _check_pad_type(kernel, dtype):
    if dtype.itemsize not in _UNITS:
        raise kernel._unsupported(f"padding elements of {dtype.itemsize} bytes ({dtype})")


class GpuSlice(_LayoutKernel):
    """The GPU kernel of ``ndd.slice``: windows within the input are views or one
    strided copy; windows reaching outside it (``out_of_bounds_policy='pad'``) one
    padded copy for the whole batch; with a 'dtype' other than the input's, one
    converting copy (uint8 and float32 outputs).

    ``bounds(args, in_shape, anchor, shape)`` gives a sample's ``(start, end)`` per
    input dimension (anchor and shape are the host values of the optional inputs);
    ``fill(args, out_shape, dtype)`` the fill values (1-D, of ``dtype``) and the
    output dimension they are laid along (None for one value); ``border(args)``, when
    given, None, or under a policy that repeats the input's own elements (edge,
    reflect, wrap) a function of ``(start, end, extent)`` giving the input index each
    position of an axis reads: such windows are strided copies of their runs."""

    def __init__(self, op, bounds, fill, border=None):
        super().__init__(op)
        self.bounds = bounds
        self.fill = fill
        self.border = border

    def check(self, ins, args):
        super().check(ins, args)
        dtype, source = args["dtype"], ins[0]._dtype
        if dtype is None or dtype == source:
            return
        target = np.dtype(dtype.numpy)
        if target not in _CONVERT_TO:
            raise self._unsupported(
                f"converting to 'dtype' {dtype} (GPU conversions: to uint8, float16 or float32)"
            )
        if source.numpy is None or np.dtype(source.numpy) not in _CONVERT_FROM:
            raise self._unsupported(f"converting input of type {source} to 'dtype' {dtype}")

    def __call__(self, inputs, args, batch_size, ctx):
        x = inputs[0]
        # ndd.slice has optional anchor and shape inputs; crop has neither.
        anchor, shape_input = (list(inputs[1:]) + [None, None])[:2]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        target = x.dtype if args["dtype"] is None else np.dtype(args["dtype"].numpy)
        convert = target != x.dtype
        samples = _samples(x)
        sample_args = args_per_sample(args, batch_size)
        bounds = [
            self.bounds(a, shape, anc, shp)
            for (_, shape), a, anc, shp in zip(
                samples,
                sample_args,
                _host_values(anchor, batch_size),
                _host_values(shape_input, batch_size),
                strict=True,
            )
        ]
        inside = all(
            0 <= lo and hi <= n
            for (_, shape), b in zip(samples, bounds, strict=True)
            for (lo, hi), n in zip(b, shape, strict=True)
        )
        out_shapes = [tuple(hi - lo for lo, hi in b) for b in bounds]
        border = None if self.border is None else self.border(args)
        if not inside and border is not None:
            return [self._bordered(x, samples, bounds, out_shapes, border, target, batch_size, ctx)]
        if inside:
            windows = []
            for (_, shape), b, out_shape in zip(samples, bounds, out_shapes, strict=True):
                strides = c_strides(shape)
                offset = sum(lo * s for (lo, _), s in zip(b, strides, strict=True))
                windows.append((offset, out_shape, strides))
            if not convert:
                return [_gather(self.op, x, windows, batch_size, stream, device_id)]
            out, addresses = _allocate(out_shapes, target, batch_size, stream, device_id)
            segments = [
                Segment(ptr + offset * x.dtype.itemsize, address, shape, strides)
                for (ptr, _), (offset, shape, strides), address in zip(
                    samples, windows, addresses, strict=True
                )
            ]
            converting_copy(self.op, segments, x.dtype, target, _base(out), _base(x), stream, device_id)
            return [out]
        if not convert:
            _check_pad_type(self, x.dtype)
        out, addresses = _allocate(out_shapes, target, batch_size, stream, device_id)
        segments = []
        for (ptr, shape), b, out_shape, address, a in zip(
            samples, bounds, out_shapes, addresses, sample_args, strict=True
        ):
            fill, fill_dim = self.fill(a, out_shape, target)
            starts = [lo for lo, _ in b]
            segments.append(
                PadSegment(ptr, address, out_shape, starts, shape, c_strides(shape), fill, fill_dim)
            )
        padded_copy(
            self.op, segments, x.dtype, _base(out), _base(x), stream, device_id, target if convert else None
        )
        return [out]

    def _bordered(self, x, samples, bounds, out_shapes, border, target, batch_size, ctx):
        """The windows whose outside repeats the input: one strided copy per block of
        runs (steps of +1, -1 or 0 along each axis), as one launch for the batch."""
        stream, device_id = ctx.cuda_stream, ctx.device_id
        out, addresses = _allocate(out_shapes, target, batch_size, stream, device_id)
        segments = []
        for (ptr, shape), b, out_shape, address in zip(samples, bounds, out_shapes, addresses, strict=True):
            in_strides, out_strides = c_strides(shape), c_strides(out_shape)
            axes = [_runs(border(lo, hi, n)) for (lo, hi), n in zip(b, shape, strict=True)]
            for block in itertools.product(*axes):
                segments.append(
                    Segment(
                        ptr
                        + sum(r[1] * st for r, st in zip(block, in_strides, strict=True)) * x.dtype.itemsize,
                        address
                        + sum(r[0] * st for r, st in zip(block, out_strides, strict=True)) * target.itemsize,
                        [r[2] for r in block],
                        [r[3] * st for r, st in zip(block, in_strides, strict=True)],
                        out_strides,
                    )
                )
        if target == x.dtype:
            strided_copy(self.op, segments, target.itemsize, _base(out), [_base(x)], stream, device_id)
        else:
            converting_copy(self.op, segments, x.dtype, target, _base(out), _base(x), stream, device_id)
        return out


def _runs(indices):
    """``[(first position, first index, length, step)]``: ``indices`` cut into runs
    that step by -1, 0 or +1."""
    runs = []
    for position, index in enumerate(indices.tolist()):
        if runs:
            first, start, length, step = runs[-1]
            last = start + (length - 1) * step
            if length == 1 and abs(index - last) <= 1:
                runs[-1] = (first, start, 2, index - last)
                continue
            if length > 1 and index - last == step:
                runs[-1] = (first, start, length + 1, step)
                continue
        runs.append((position, index, 1, 0))
    return runs


class GpuPad(_LayoutKernel):
    """The GPU kernel of ``ndd.pad``: one padded copy for the whole batch (the
    input itself when no sample grows).

    ``padded_shape(in_shape, args, batch_max)`` gives a sample's output shape
    (``batch_max``: the largest extent of each dimension over the batch);
    ``fill(args, dtype)`` its fill value as a 1-element array of ``dtype``."""

    def __init__(self, op, padded_shape, fill):
        super().__init__(op)
        self.padded_shape = padded_shape
        self.fill = fill

    def __call__(self, inputs, args, batch_size, ctx):
        x = inputs[0]
        stream, device_id = ctx.cuda_stream, ctx.device_id
        samples = _samples(x)
        sample_args = args_per_sample(args, batch_size)
        shapes = [shape for _, shape in samples]
        batch_max = tuple(max(extents) for extents in zip(*shapes, strict=True)) if shapes else ()
        out_shapes = [
            tuple(self.padded_shape(s, a, batch_max)) for s, a in zip(shapes, sample_args, strict=True)
        ]
        if out_shapes == shapes:
            return [_view_of(x, [(0, s) for s in shapes], x.dtype, batch_size, stream)]
        _check_pad_type(self, x.dtype)
        out, addresses = _allocate(out_shapes, x.dtype, batch_size, stream, device_id)
        segments = [
            PadSegment(
                ptr, address, out_shape, [0] * len(shape), shape, c_strides(shape), self.fill(a, x.dtype)
            )
            for (ptr, shape), out_shape, address, a in zip(
                samples, out_shapes, addresses, sample_args, strict=True
            )
        ]
        padded_copy(self.op, segments, x.dtype, _base(out), _base(x), stream, device_id)
        return [out]


class GpuJoin(_LayoutKernel):
    """The GPU kernel of ``ndd.cat`` and ``ndd.stack``: every input of every sample
    is a segment of one strided-copy launch (per 8 inputs).

    ``place(shapes, args)`` gives, for the input shapes of one sample, the output
    shape and per input the element offset and element strides of its part of the
    output. A GPU Tensor among Batches joins every sample."""

    data_inputs = None

    def __init__(self, op, place):
        super().__init__(op)
        self.place = place

    def __call__(self, inputs, args, batch_size, ctx):
        stream, device_id = ctx.cuda_stream, ctx.device_id
        dtype = inputs[0].dtype
        count = 1 if batch_size < 0 else batch_size
        device_array = _cuda()[0]
        # A Tensor joins every sample of the Batches.
        per_input = [
            _samples(x) * (1 if isinstance(x, device_array.DeviceBatch) or batch_size < 0 else count)
            for x in inputs
        ]
        plans = [
            self.place([samples[i][1] for samples in per_input], a)
            for i, a in zip(range(count), args_per_sample(args, batch_size), strict=True)
        ]
        out, addresses = _allocate([shape for shape, _ in plans], dtype, batch_size, stream, device_id)
        itemsize = dtype.itemsize
        segments = []
        for i, ((_, places), address) in enumerate(zip(plans, addresses, strict=True)):
            for k, (samples, (offset, strides)) in enumerate(zip(per_input, places, strict=True)):
                ptr, shape = samples[i]
                segments.append(
                    Segment(ptr, address + offset * itemsize, shape, c_strides(shape), strides, k)
                )
        strided_copy(self.op, segments, itemsize, _base(out), [_base(x) for x in inputs], stream, device_id)
        return [out]


class GpuPick(_LayoutKernel):
    """The GPU kernel of ``permute_batch``: the output batch is the input's samples in
    another order (repeats allowed), sharing the input's memory; nothing is copied.
    ``order(args, batch_size)`` is the CPU's checked order (batch_size -1 in sample mode)."""

    def __init__(self, op, order):
        super().__init__(op)
        self.order = order

    def __call__(self, inputs, args, batch_size, ctx):
        x = inputs[0]
        order = self.order(args, batch_size)
        if batch_size < 0:
            return [x]
        device_array = _cuda()[0]
        if isinstance(x, device_array.DeviceBatch):
            return [x.pick(order)]
        # A Tensor given in batch mode is every sample: each output sample is a view of it.
        return [_view_of_tensor_samples(x, batch_size, ctx.cuda_stream)]


def _view_of_tensor_samples(x, count, stream):
    """A batch of ``count`` samples that are all the Tensor ``x`` (views, no copy)."""
    device_array = _cuda()[0]
    data = device_array.DeviceArray(x.owner, x.ptr, (x.nbytes,), np.uint8, x.device_id, stream, x.offset)
    return device_array.DeviceBatch(data, [0] * count, [tuple(x.shape)] * count, x.dtype, False)
