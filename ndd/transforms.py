"""``ndd.transforms``: 2-D and 3-D affine transform matrices (translation, scale,
rotation, shear, crop) and their composition. The functions are generated from
the operator schemas in ``ndd._ops``."""

__all__: list = []
