"""How much memory the machine has: sizes claimed by data or arguments (a damaged
header, a mistyped length) are checked against it before anything is allocated."""

import functools
import os

__all__ = ["exceeds_half_of_memory", "physical_memory_bytes"]


@functools.cache
def physical_memory_bytes():
    """This machine's physical memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def exceeds_half_of_memory(nbytes) -> bool:
    """Whether ``nbytes`` is more than half of the machine's memory (False where the
    system does not say how much it has)."""
    memory = physical_memory_bytes()
    return memory is not None and nbytes > memory // 2
