# cython: language_level=3, boundscheck=False, wraparound=False
"""Sparse filter banks for ``ndd.mel_filter_bank``, without the GIL: every frequency bin
feeds at most two neighbouring triangular filters, so the bank is applied bin by bin
(``2 * bins`` rows of multiply-adds) rather than as a dense matrix product.

The rows of each filter are added in the order of the bins, in float32, as the
reference adds them.
"""


def apply_band_weights(const float[:, ::1] spectrum, float[:, ::1] out, const long long[::1] bins,
                       const int[::1] lower, const float[::1] lower_weight,
                       const int[::1] upper, const float[::1] upper_weight):
    """``out[f] = sum of weight * spectrum[b]`` over the bins ``b`` of filter ``f``, rows of
    frequency-major data: bin ``bins[i]`` feeds filter ``lower[i]`` with ``lower_weight[i]``
    and filter ``upper[i]`` with ``upper_weight[i]`` (a filter outside ``out``: none)."""
    cdef Py_ssize_t count = bins.shape[0], columns = spectrum.shape[1], filters = out.shape[0]
    cdef Py_ssize_t i, t, b, f
    cdef float w
    if out.shape[1] != columns or lower.shape[0] != count or upper.shape[0] != count:
        raise ValueError("apply_band_weights: the spectrum, output and weights do not fit")
    if lower_weight.shape[0] != count or upper_weight.shape[0] != count:
        raise ValueError("apply_band_weights: the spectrum, output and weights do not fit")
    for i in range(count):
        if bins[i] < 0 or bins[i] >= spectrum.shape[0]:
            raise ValueError("apply_band_weights: a bin outside the spectrum")
    with nogil:
        for f in range(filters):
            for t in range(columns):
                out[f, t] = 0
        for i in range(count):
            b = bins[i]
            f = lower[i]
            if 0 <= f < filters:
                w = lower_weight[i]
                for t in range(columns):
                    out[f, t] = out[f, t] + w * spectrum[b, t]
            f = upper[i]
            if 0 <= f < filters:
                w = upper_weight[i]
                for t in range(columns):
                    out[f, t] = out[f, t] + w * spectrum[b, t]
