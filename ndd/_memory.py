"""How much memory this process may use: sizes claimed by data or arguments (a damaged
header, a mistyped length) are checked against it before anything is allocated."""

import functools
import os

__all__ = ["exceeds_half_of_memory", "physical_memory_bytes"]

# Where a container's memory limit is read: cgroup v2, then cgroup v1. A file that
# says "max" (v2) or a number beyond the machine's memory (v1's "no limit") sets none.
CGROUP_LIMIT_FILES = (
    "/sys/fs/cgroup/memory.max",
    "/sys/fs/cgroup/memory/memory.limit_in_bytes",
)


def _machine_memory_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _cgroup_limit_bytes(paths=CGROUP_LIMIT_FILES):
    """The smallest memory limit the cgroup files in ``paths`` set (None where none
    does)."""
    limits = []
    for path in paths:
        try:
            with open(path, "rb") as f:
                text = f.read(64).strip()
        except OSError:
            continue
        if text.isdigit() and int(text) > 0:
            limits.append(int(text))
    return min(limits, default=None)


@functools.cache
def physical_memory_bytes():
    """The memory this process may use, in bytes: the machine's physical memory, or
    its container's limit where that is smaller (None where the system says
    neither)."""
    sizes = [size for size in (_machine_memory_bytes(), _cgroup_limit_bytes()) if size]
    return min(sizes, default=None)


def exceeds_half_of_memory(nbytes) -> bool:
    """Whether ``nbytes`` is more than half of the memory this process may use (False
    where the system does not say how much that is)."""
    memory = physical_memory_bytes()
    return memory is not None and nbytes > memory // 2
