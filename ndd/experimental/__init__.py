"""``ndd.experimental``: operators the reference marks experimental, and the
deprecated ``experimental.decoders`` aliases. The functions are generated from
the operator schemas in ``ndd._ops``."""

from . import decoders

__all__: list = ["decoders"]
