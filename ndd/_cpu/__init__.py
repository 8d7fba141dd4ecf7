"""Compiled CPU kernels of the run phase: Cython loops that release the GIL, so
that the context's thread pool runs samples in parallel. One module per kernel
family; each ships a ``.pyi`` stub."""
