# cython: language_level=3, boundscheck=False, wraparound=False
"""The short-term power of a signal for ``ndd.nonsilent_region``, without the GIL: the mean
square of every window of ``window`` consecutive samples.

The arithmetic is the reference's, so that the windows it calls silent are the ones we
call silent: samples of up to 16 bits are squared and summed exactly in int64; every other
type is squared and summed in float32, and the window slides by subtracting the square of
the sample that leaves, then adding the square of the one that enters. Such a running
float32 sum drifts (a loud passage leaves a residue that keeps the silence after it
above a low threshold), so it is summed afresh from the samples at window
``reset_interval - window + 1``, then every ``reset_interval`` windows (never when
``reset_interval`` is -1): the reference's positions, found by probing it. Each mean is
the sum times the float32 ``1 / window``.
"""

import numpy as np

from libc.stdint cimport int64_t

ctypedef signed char schar
ctypedef unsigned char uchar
ctypedef unsigned short ushort

ctypedef fused sample_t:
    float
    schar
    uchar
    short
    ushort
    int
    unsigned int
    long long
    unsigned long long


cdef void _exact_power(const sample_t *x, Py_ssize_t count, Py_ssize_t window, float scale,
                       float *out) noexcept nogil:
    cdef int64_t total = 0, v
    cdef Py_ssize_t i
    for i in range(window):
        v = <int64_t> x[i]
        total += v * v
    out[0] = <float> total * scale
    for i in range(1, count):
        v = <int64_t> x[i + window - 1]
        total += v * v
        v = <int64_t> x[i - 1]
        total -= v * v
        out[i] = <float> total * scale


cdef void _float_power(const sample_t *x, Py_ssize_t count, Py_ssize_t window, Py_ssize_t reset,
                       float scale, float *out) noexcept nogil:
    cdef float total, entering, leaving, v
    cdef Py_ssize_t start = 0, i, k, stop
    # The first run of windows is shorter: the reference counts the first window's samples.
    cdef Py_ssize_t run = max(1, reset - window + 1)
    while start < count:
        total = 0
        for k in range(window):
            v = <float> x[start + k]
            total = total + v * v
        out[start] = total * scale
        stop = min(start + run, count)
        for i in range(start + 1, stop):
            v = <float> x[i + window - 1]
            entering = v * v
            v = <float> x[i - 1]
            leaving = v * v
            total = (total - leaving) + entering
            out[i] = total * scale
        start = stop
        run = reset


def moving_mean_square(const sample_t[::1] values, Py_ssize_t window, Py_ssize_t reset_interval):
    """The float32 mean square of each of the ``len(values) - window + 1`` windows of
    ``window`` samples (``1 <= window <= len(values)``); the float32 running sum of types
    wider than 16 bits restarts at window ``reset_interval - window + 1``, then every
    ``reset_interval`` windows (-1: never)."""
    cdef Py_ssize_t n = values.shape[0]
    if window < 1 or window > n:
        raise ValueError("moving_mean_square: the window must hold 1 to len(values) samples")
    cdef Py_ssize_t count = n - window + 1
    # "Never" is one run over every window.
    cdef Py_ssize_t reset = count + window if reset_interval < 1 else reset_interval
    result = np.empty(count, np.float32)
    cdef float[::1] out = result
    cdef float scale = <float> 1.0 / <float> window
    # Squares of types of up to 16 bits are summed exactly.
    cdef bint exact = (sample_t is schar or sample_t is uchar or sample_t is short
                       or sample_t is ushort)
    with nogil:
        if exact:
            _exact_power(&values[0], count, window, scale, &out[0])
        else:
            _float_power(&values[0], count, window, reset, scale, &out[0])
    return result
