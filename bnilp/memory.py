"""Memory: what the system has left, a floor below which long work stops, returning freed memory to the
system, and bulk object building without the cyclic collector's scans."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


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


def physical_memory() -> int:
    """Bytes of physical memory (0 where the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def memory_floor(share: float, at_least: int) -> int:
    """Bytes of free memory below which a long task stops and says so (``share`` of the physical memory,
    at least ``at_least`` bytes), rather than the out-of-memory killer ending the process without a word."""
    return max(at_least, int(share * physical_memory()))


def return_freed_memory() -> None:
    """Give the C heap's free pages back to the system (glibc ``malloc_trim(0)``; elsewhere nothing).

    SCIP's search tree is freed with its model, but the C allocator keeps the pages for reuse, and Python's
    own small objects live in separately mapped arenas that cannot reuse them: after a class enumeration on
    hailfinder500 BF 3 (20,000 classes) 0.39 GB of the 0.51 GB the solve had grown stayed resident while the
    report was built."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim`` among the process's own symbols, or None (another C library, another system)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None


def keep_grown_loky_workers() -> None:
    """In a loky worker: do not restart it when its memory grew. loky takes a worker whose memory grew by
    300 MB after a task for a leak and restarts it; bnilp's workers grow by design (a scoring worker reads
    the run's score, ~0.7 GB at 10⁶ rows; a phase-2 worker's SCIP tree, ~20 KB a class found)."""
    with contextlib.suppress(ImportError, AttributeError):
        from joblib.externals.loky import process_executor

        process_executor._MAX_MEMORY_LEAK_SIZE = max(process_executor._MAX_MEMORY_LEAK_SIZE, 1 << 40)
