"""Memory: what the system has left, and bulk object building without the cyclic collector's scans."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large result is built (restored on exit, also on error).

    Building millions of small containers that all stay alive (a class enumeration's best DAG per class,
    the report's class table) makes CPython's generational collector scan the growing heap again and
    again, and none of it is garbage. Reference counting still frees everything as usual; only cycles
    wait until the block ends. Measured (parkinsons BIC BF 20, 58,184 classes): the class report 36 → 21 s.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def free_memory() -> int | None:
    """Bytes of physical memory available now without swapping (Linux: MemAvailable, which counts the
    page cache the kernel can drop; elsewhere the free pages; None where the system does not say)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
