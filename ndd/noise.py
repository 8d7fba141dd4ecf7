"""``ndd.noise``: random noise added to images (gaussian, salt and pepper, shot).
The functions are generated from the operator schemas in ``ndd._ops``."""

__all__: list = []
