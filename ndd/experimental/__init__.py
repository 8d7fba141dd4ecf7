"""``ndd.experimental``: operators the reference marks experimental, and the
deprecated ``experimental.decoders`` aliases. The functions are generated from
the operator schemas in ``ndd._ops``; ``experimental.readers`` holds the
experimental reader classes."""

from . import decoders, readers

__all__: list = ["decoders", "readers"]
