"""Operator definitions, one module per family. Each operator is declared once
as an ``Operator`` (schema + type/shape rules + kernels); ``registry`` turns the
declarations into the public functions."""
