# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""8-bit yuv420p frames to RGB, with the bytes of FFmpeg's swscale called as
``decoders.video`` calls it (bilinear, full horizontal chroma interpolation,
accurate rounding; libswscale 9), 4 to 16 times faster: swscale runs that
conversion in scalar C, 3.7 ns a pixel at 160x120 and 11.6 at 1280x720 on our
machines, against 0.7-0.9 here.

The steps, all in integers (C division, which truncates):

1. Each chroma row is scaled to the frame's width, from ``ceil(W / 2)`` samples:
   ``min(sum(sample * weight) >> 7, 32767)``, weights summing to ``1 << 14``
   (15-bit samples). Luma is not filtered.
2. Each output row blends two of those rows (weights summing to ``1 << 12``):
   ``U = (u0 * w0 + u1 * w1 - (128 << 19)) >> 10``.
3. ``T = ((Y << 9) - y_offset) * y_scale + (1 << 21)``; ``R = T + V * v_to_r``,
   ``G = T + V * v_to_g + U * u_to_g``, ``B = T + U * u_to_b``, summed modulo
   2**32 as swscale does (so limited-range Y = U = 255 gives B = 0), read as int32,
   ``>> 22`` and clamped to [0, 255].

The filters are swscale's bilinear ones for the frame's size and chroma siting
(``_filter`` follows its ``initFilter``); the matrix its ``yuv2rgb`` tables for
the frame's colorspace and range (``_matrix``). ``tests/ops/test_yuv_rgb.py``
compares every path with swscale through PyAV.
"""

import functools

import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t


cdef extern from "yuv_rgb.h" nogil:
    ctypedef struct ndd_yuv_tables:
        int width, height, chroma_width
        int two_taps
        const int32_t *tap_start
        const int32_t *tap_weights
        int taps
        const int32_t *pair_start
        const int32_t *weight0
        const int32_t *weight1
        int num_runs
        const int32_t *runs
        const int32_t *rows
        const int32_t *row_weights
        int32_t y_offset, y_scale, v_to_r, v_to_g, u_to_g, u_to_b
    int ndd_yuv_to_rgb(const ndd_yuv_tables *t, const uint8_t *y, Py_ssize_t y_stride,
                       const uint8_t *u, Py_ssize_t u_stride, const uint8_t *v, Py_ssize_t v_stride,
                       uint8_t *out, Py_ssize_t out_stride, int baseline)


# The chroma terms {crv, cbu, cgu, cgv} (16-bit fixed point) of the colorspaces
# (AVColorSpace values) swscale converts this way; it refuses the others.
_CHROMA_TERMS = {
    0: (104597, 132201, 25675, 53279),  # "RGB" on a YUV frame: swscale's first row, BT.601
    1: (117489, 138438, 13975, 34925),  # BT.709
    2: (104597, 132201, 25675, 53279),  # unspecified: BT.601
    4: (104448, 132798, 24759, 53109),  # FCC
    5: (104597, 132201, 25675, 53279),  # BT.470BG
    6: (104597, 132201, 25675, 53279),  # SMPTE 170M
    7: (117579, 136230, 16907, 35559),  # SMPTE 240M
    9: (110013, 140363, 12277, 42626),  # BT.2020 non-constant luminance
}
COLORSPACES = frozenset(_CHROMA_TERMS)
# AVColorRange: 0 (unspecified) and 1 are limited ("MPEG") range, 2 is full ("JPEG").
COLOR_RANGES = frozenset((0, 1, 2))
FULL_RANGE = 2

# AVChromaLocation -> the chroma sample's position (x, y) in 1/256 of a luma pixel;
# swscale takes "unspecified" (0) as the centre (2).
_CHROMA_POSITIONS = {
    0: (128, 128),
    1: (0, 128),
    2: (128, 128),
    3: (0, 0),
    4: (128, 0),
    5: (0, 256),
    6: (128, 256),
}
# One location per distinct position: the sitings a frame may have.
CHROMA_LOCATIONS = (0, 1, 3, 4, 5, 6)


cdef int64_t _rounded_div(int64_t a, int64_t b):
    """a / b rounded half away from zero (FFmpeg's ROUNDED_DIV)."""
    return (a + (b >> 1)) // b if a >= 0 else (a - (b >> 1)) // b


cdef int _round_to_int16(int64_t value):
    """value / 2**16 rounded, clamped to int16."""
    return <int>max(-32768, min(32767, (value + (1 << 15)) >> 16))


cdef int _source_position(int subsampling, int position):
    """The position swscale's filters take for samples at ``position`` (1/256 of a
    luma pixel, as chroma locations count; 0 for luma) of a plane subsampled by
    ``2**subsampling``."""
    return (position + 128) >> subsampling


def _filter(int step, int source_size, int size, int alignment, int one, int source_position,
            int position):
    """swscale's bilinear filter from ``source_size`` samples to ``size`` (``step``:
    the 16.16 fixed-point source step per output sample; ``alignment``: the filter
    length's multiple, 4 horizontally and 2 vertically on x86): ``(start, weights)``,
    output i being ``sum_j source[start[i] + j] * weights[i, j]`` with the weights of
    each output summing to ``one`` (0 for the taps past an edge)."""
    # The weights' fixed point: 2**54, less for downscaling, at least 2**46.
    cdef int64_t unit = (<int64_t>1) << 54
    cdef int ratio = source_size // size
    while ratio > 1:
        unit >>= 1
        ratio >>= 1
    unit = max(unit, (<int64_t>1) << 46)
    cdef int64_t at, distance, weight, cut, total, error, value, rounded
    cdef int i, j, k, first, length, wider, needed, shift, left
    start = np.zeros(size, np.int64)
    cdef int64_t[:] s = start
    cdef int64_t[:, :] w
    if abs(step - 0x10000) < 10 and source_position == position:
        # The same size: one tap.
        length = 1
        raw = np.full((size, 1), unit, np.int64)
        w = raw
        for i in range(size):
            s[i] = i
    else:
        # Bilinear: 3 taps upscaling, more to cover the source step downscaling.
        length = 3 if step <= (1 << 16) else 1 + (2 * source_size + size - 1) // size
        length = max(1, min(length, source_size - 2))
        raw = np.zeros((size, length), np.int64)
        w = raw
        at = ((<int64_t>position * step) >> 7) - ((<int64_t>source_position * 0x10000) >> 7)
        for i in range(size):
            first = <int>((at - (length - 2) * ((<int64_t>1) << 16)) // (1 << 17))
            s[i] = first
            for j in range(length):
                distance = abs(<int64_t>(first + j) * (1 << 17) - at) << 13
                if step > (1 << 16):
                    distance = distance * size // source_size
                weight = max(0, ((<int64_t>1) << 30) - distance)
                w[i, j] = weight * (unit >> 30)
            at += 2 * <int64_t>step
    # Taps of near-zero weight are dropped from the left; the length kept is the
    # longest any output needs.
    needed = 0
    for i in range(size - 1, -1, -1):
        wider = length
        cut = 0
        for _ in range(length):
            cut += abs(w[i, 0])
            if <double>cut > 0.002 * <double>unit or (i < size - 1 and s[i] >= s[i + 1]):
                break
            for k in range(1, length):
                w[i, k - 1] = w[i, k]
            w[i, length - 1] = 0
            s[i] += 1
        cut = 0
        for j in range(length - 1, 0, -1):
            cut += abs(w[i, j])
            if <double>cut > 0.002 * <double>unit:
                break
            wider -= 1
        needed = max(needed, wider)
    if needed == 1 and alignment == 2:  # x86 takes one vertical tap as it is
        alignment = 1
    kept = (needed + alignment - 1) & ~(alignment - 1)
    aligned = np.zeros((size, kept), np.int64)
    cdef int64_t[:, :] a = aligned
    for i in range(size):
        for j in range(min(kept, length)):
            a[i, j] = w[i, j]
    # Taps past an edge add their weight to the edge sample.
    for i in range(size):
        if s[i] < 0:
            for j in range(1, kept):
                left = max(j + <int>s[i], 0)
                a[i, left] += a[i, j]
                a[i, j] = 0
            s[i] = 0
        if s[i] + kept > source_size:
            shift = <int>s[i] + min(kept - source_size, 0)
            total = 0
            for j in range(kept - 1, -1, -1):
                if s[i] + j >= source_size:
                    total += a[i, j]
                    a[i, j] = 0
            for j in range(kept - 1, -1, -1):
                a[i, j] = 0 if j < shift else a[i, j - shift]
            s[i] -= shift
            a[i, source_size - 1 - s[i]] += total
    # Normalised to `one`, each tap's rounding error carried to the next.
    weights = np.zeros((size, kept), np.int32)
    cdef int32_t[:, :] out = weights
    for i in range(size):
        total = 0
        for j in range(kept):
            total += a[i, j]
        total = max(1, (total + one // 2) // one)
        error = 0
        for j in range(kept):
            value = a[i, j] + error
            rounded = _rounded_div(value, total)
            out[i, j] = <int32_t>rounded
            error = value - rounded * total
    return start.astype(np.int32), weights


def _matrix(int colorspace, int color_range):
    """(y_offset, y_scale, v_to_r, v_to_g, u_to_g, u_to_b) of swscale's tables for a
    colorspace and range (no brightness, contrast or saturation change)."""
    cdef int64_t crv, cbu, cgu, cgv, y_scale, y_offset
    crv, cbu, cgu, cgv = _CHROMA_TERMS[colorspace]
    cgu, cgv = -cgu, -cgv
    if color_range == FULL_RANGE:
        y_scale, y_offset = 1 << 16, 0
        # C division: the negative terms truncate toward zero.
        crv, cbu = crv * 224 // 255, cbu * 224 // 255
        cgu, cgv = -((-cgu) * 224 // 255), -((-cgv) * 224 // 255)
    else:
        y_scale, y_offset = (1 << 16) * 255 // 219, 16 << 16
    # Multiplied, not shifted: cgu and cgv are negative.
    return (
        _round_to_int16(y_offset * 512),
        _round_to_int16(y_scale * 8192),
        _round_to_int16(crv * 8192),
        _round_to_int16(cgv * 8192),
        _round_to_int16(cgu * 8192),
        _round_to_int16(cbu * 8192),
    )


def _runs(start, int width, int shortest=4):
    """(first x, pairs, source of the even x, source of the odd x) of the runs of at
    least ``shortest`` output pairs whose two-tap sources advance by one sample a pair."""
    runs = []
    cdef int x = 0, pairs
    while x + 1 < width:
        even, odd = int(start[x]), int(start[x + 1])
        pairs = 1
        while (
            x + 2 * pairs + 1 < width
            and start[x + 2 * pairs] == even + pairs
            and start[x + 2 * pairs + 1] == odd + pairs
        ):
            pairs += 1
        if pairs >= shortest:
            runs.append((x, pairs, even, odd))
            x += 2 * pairs
        else:
            x += 1
    return np.array(runs, np.int32).reshape(-1, 4)


class _Tables:
    """The filters of one frame size and chroma siting (see ``tables``)."""

    def __init__(self, int width, int height, int chroma_location):
        cdef int chroma_width = (width + 1) >> 1, chroma_height = (height + 1) >> 1
        x, y = _CHROMA_POSITIONS[chroma_location]
        self.chroma_width = chroma_width
        step = ((chroma_width << 16) + (width >> 1)) // width
        self.tap_start, self.tap_weights = _filter(
            step, chroma_width, width, 4, 1 << 14, _source_position(1, x), _source_position(0, 0)
        )
        self.pair_start, self.weight0, self.weight1 = self._pairs()
        self.runs = None if self.pair_start is None else _runs(self.pair_start, width)
        step = ((chroma_height << 16) + (height >> 1)) // height
        start, weights = _filter(
            step, chroma_height, height, 2, 1 << 12, _source_position(1, y), _source_position(0, 0)
        )
        if weights.shape[1] > 2 or np.any(weights.sum(axis=1) != 1 << 12):
            # Never for the sizes we tried (1 to 2,199): swscale would round such sums.
            raise ValueError(f"no two-row chroma blend for a frame of height {height}")
        self.rows = np.stack([start, start + (weights.shape[1] - 1)], axis=1).astype(np.int32)
        self.row_weights = np.zeros((height, 2), np.int32)
        self.row_weights[:, : weights.shape[1]] = weights

    def _pairs(self):
        """The horizontal filter as two adjacent taps per output (None where some
        output needs more)."""
        width = len(self.tap_start)
        if self.chroma_width < 2:
            return None, None, None
        start = np.zeros(width, np.int32)
        weight0 = np.zeros(width, np.int32)
        weight1 = np.zeros(width, np.int32)
        for x in range(width):
            used = np.flatnonzero(self.tap_weights[x])
            first = int(used[0]) if used.size else 0
            if used.size and int(used[used.size - 1]) - first > 1:
                return None, None, None
            source = int(self.tap_start[x]) + first
            w0 = int(self.tap_weights[x, first])
            w1 = int(self.tap_weights[x, first + 1]) if first + 1 < self.tap_weights.shape[1] else 0
            if source + 1 >= self.chroma_width:
                # The last sample as the second of a pair that starts one earlier.
                if w1:
                    return None, None, None
                source, w0, w1 = source - 1, 0, w0
            start[x], weight0[x], weight1[x] = source, w0, w1
        return start, weight0, weight1


@functools.lru_cache(maxsize=32)
def tables(int width, int height, int chroma_location):
    """The filters of frames of ``width`` x ``height`` with ``chroma_location`` (an
    AVChromaLocation); built once per size and siting (a millisecond or two)."""
    return _Tables(width, height, chroma_location)


def supported(int colorspace, int color_range):
    """Whether frames of this colorspace and range (AVColorSpace, AVColorRange) are
    converted here as swscale does."""
    return colorspace in COLORSPACES and color_range in COLOR_RANGES


def yuv420p_to_rgb(const uint8_t[:, :] y, const uint8_t[:, :] u, const uint8_t[:, :] v,
                   uint8_t[:, :, :] out, int colorspace, int color_range, int chroma_location,
                   bint baseline=False):
    """Convert a frame's planes (``y``: H x W; ``u``, ``v``: ceil(H/2) x ceil(W/2);
    rows contiguous, any row stride) into ``out`` (H x W x 3, pixels contiguous), for
    a frame of ``colorspace``, ``color_range`` and ``chroma_location`` (see
    ``supported``). ``baseline``: run the x86-64 baseline code even where AVX2 is
    there."""
    cdef int height = y.shape[0], width = y.shape[1]
    if height < 1 or width < 1:
        raise ValueError(f"yuv420p_to_rgb: the frame is empty ({height}x{width})")
    if not supported(colorspace, color_range) or chroma_location not in _CHROMA_POSITIONS:
        raise ValueError(
            f"yuv420p_to_rgb: colorspace {colorspace}, range {color_range}, chroma location "
            f"{chroma_location} are not converted here"
        )
    chroma = ((height + 1) >> 1, (width + 1) >> 1)
    if (u.shape[0], u.shape[1]) != chroma or (v.shape[0], v.shape[1]) != chroma:
        raise ValueError(
            f"yuv420p_to_rgb: the chroma planes must be {chroma}, got {(u.shape[0], u.shape[1])} and "
            f"{(v.shape[0], v.shape[1])}"
        )
    if (out.shape[0], out.shape[1], out.shape[2]) != (height, width, 3):
        raise ValueError(f"yuv420p_to_rgb: 'out' must be {(height, width, 3)}")
    rows_contiguous = y.strides[1] == 1 and u.strides[1] == 1 and v.strides[1] == 1
    if not rows_contiguous or out.strides[1] != 3 or out.strides[2] != 1:
        raise ValueError("yuv420p_to_rgb: rows of the planes and pixels of 'out' must be contiguous")
    t = tables(width, height, chroma_location)
    cdef ndd_yuv_tables c
    cdef int32_t[::1] tap_start = t.tap_start
    cdef int32_t[:, ::1] tap_weights = t.tap_weights
    cdef int32_t[::1] pair_start, weight0, weight1
    cdef int32_t[:, ::1] runs
    cdef int32_t[:, ::1] rows = t.rows
    cdef int32_t[:, ::1] row_weights = t.row_weights
    c.width, c.height, c.chroma_width = width, height, t.chroma_width
    c.tap_start = &tap_start[0]
    c.tap_weights = &tap_weights[0, 0]
    c.taps = tap_weights.shape[1]
    c.two_taps = t.pair_start is not None
    c.pair_start = c.weight0 = c.weight1 = c.runs = NULL
    c.num_runs = 0
    if c.two_taps:
        pair_start, weight0, weight1 = t.pair_start, t.weight0, t.weight1
        c.pair_start, c.weight0, c.weight1 = &pair_start[0], &weight0[0], &weight1[0]
        if t.runs.shape[0]:
            runs = t.runs
            c.runs = &runs[0, 0]
            c.num_runs = runs.shape[0]
    c.rows = &rows[0, 0]
    c.row_weights = &row_weights[0, 0]
    c.y_offset, c.y_scale, c.v_to_r, c.v_to_g, c.u_to_g, c.u_to_b = _matrix(colorspace, color_range)
    cdef int status
    with nogil:
        status = ndd_yuv_to_rgb(&c, &y[0, 0], y.strides[0], &u[0, 0], u.strides[0], &v[0, 0], v.strides[0],
                                &out[0, 0, 0], out.strides[0], baseline)
    if status < 0:
        raise MemoryError("yuv420p_to_rgb: no memory for a row buffer")
