"""``ndd.reductions``: reductions over axes of each sample (sum, mean, min, max,
mean_square, rms, std_dev, variance). The functions are generated from the
operator schemas in ``ndd._ops.reductions``."""

__all__: list = []
