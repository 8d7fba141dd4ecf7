"""``ndd.pytorch``: ndd readers and operators as ``torchdata.nodes`` graphs.

``ndd.pytorch.nodes`` exists when ``torchdata`` can be imported
(``pip install 'ndd[torch]'``); without it this namespace is empty, as in the
reference.
"""

__all__ = []

try:
    import torchdata.nodes  # noqa: F401 - only to learn whether it is there
except ImportError:
    pass
else:
    from . import nodes  # noqa: F401 - the public submodule

    __all__ = ["nodes"]
