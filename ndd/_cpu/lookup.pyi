"""Table lookups of ndd.lookup_table, without the GIL."""

import numpy as np

def lookup(keys: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = table[keys[i]]`` for 1-D integer ``keys`` in ``[0, len(table) - 1)``, else the last entry
    of ``table``; ``table`` and ``out`` are unsigned integers of the entries' size (their bits)."""
