"""``ndd.decoders``: decoding of encoded images and arrays. The functions are
generated from the operator schemas in ``ndd._ops``."""

__all__: list = []
