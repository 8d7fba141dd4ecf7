"""``ndd.experimental.decoders``: deprecated aliases of the ``ndd.decoders`` image
decoders, kept for code written against them."""

__all__: list = []
