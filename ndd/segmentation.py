"""``ndd.segmentation``: operators on segmentation masks and their objects. The
functions are generated from the operator schemas in ``ndd._ops``."""

__all__: list = []
