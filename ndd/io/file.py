"""``ndd.io.file``: reading whole files into uint8 tensors. The functions are
generated from the operator schemas in ``ndd._ops``."""

__all__: list = []
