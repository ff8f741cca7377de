"""Memory and cores: what the system has left, a floor below which long work stops, returning freed memory to
the system, bulk object building without the cyclic collector's scans, and the cores this process may use."""

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
    page cache the kernel can drop; elsewhere psutil's ``available``, else the free pages; None where the system
    does not say) — and never more than the process's control group leaves it (:func:`cgroup_memory`: a
    container's or a batch job's memory limit, which kills the process long before the machine runs short)."""
    free = _machine_free()
    group = cgroup_memory()
    if group is not None:
        limit, used = group
        room = max(0, limit - used)
        free = room if free is None else min(free, room)
    return free


#: Linux's account of the machine's memory (MemAvailable)
MEMINFO = "/proc/meminfo"


def _machine_free() -> int | None:
    try:
        with open(MEMINFO) as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    psutil = _psutil()
    if psutil is not None:
        return int(psutil.virtual_memory().available)
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _psutil() -> Any:
    """psutil where there is no ``/proc`` (macOS, Windows: a dependency there, ``pyproject.toml``), else None:
    without it the free memory was unknown there and every memory guard was off (macOS has no
    ``SC_AVPHYS_PAGES``, Windows no ``sysconf``; found by a review)."""
    try:
        import psutil
    except ImportError:
        return None
    return psutil


def physical_memory() -> int:
    """Bytes of physical memory (0 where the system does not say), or the control group's limit if lower."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        psutil = _psutil()
        total = 0 if psutil is None else int(psutil.virtual_memory().total)
    group = cgroup_memory()
    return total if group is None else (min(total, group[0]) if total else group[0])


#: a control group's memory limit at or above this is no limit (cgroup v1 writes 2^63 rounded to a page)
_NO_LIMIT = 1 << 62


def cgroup_memory(proc_cgroup: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup") -> tuple[int, int] | None:
    """(limit, in use) in bytes of the memory control group this process belongs to, or None where it has no
    limit or the system does not say (not Linux, no cgroup file system mounted).

    cgroup v2 (the ``0::PATH`` line): ``memory.max`` (``max`` is no limit) and ``memory.current``; v1 (the
    ``N:memory:PATH`` line): ``memory.limit_in_bytes`` and ``memory.usage_in_bytes`` under ``root/memory``.
    In use excludes the inactive file cache (``memory.stat``'s ``inactive_file``, v1 ``total_inactive_file``),
    which the kernel reclaims before it kills anything — as ``docker stats`` counts it. The limit may sit on a
    group above the process's own (Slurm sets it on ``job_N``, the task runs in ``job_N/step_M/user/task_0``):
    every group from PATH up to the mount's root is read and the one leaving the least room counts. A container
    often sees its own group at the root of the mount, not at PATH: then the root alone is read."""
    try:
        with open(proc_cgroup) as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            found = _group_files(root, parts[2], "memory.max", "memory.current", "inactive_file")
        elif "memory" in parts[1].split(","):
            found = _group_files(os.path.join(root, "memory"), parts[2], "memory.limit_in_bytes",
                                 "memory.usage_in_bytes", "total_inactive_file")
        else:
            continue
        if found is not None:
            return found
    return None


def _group_files(base: str, path: str, limit_file: str, usage_file: str, cache_key: str) -> tuple[int, int] | None:
    """(limit, in use less the inactive file cache) of the group from ``path`` up to ``base`` that leaves the
    least room, or None (no limit anywhere, no files)."""
    parts = [p for p in path.strip("/").split("/") if p]
    own = os.path.join(base, *parts)
    folders = [os.path.join(base, *parts[:k]) for k in range(len(parts), -1, -1)] if os.path.isdir(own) else [base]
    best: tuple[int, int] | None = None
    for folder in folders:
        got = _one_group(folder, limit_file, usage_file, cache_key)
        if got is not None and (best is None or got[0] - got[1] < best[0] - best[1]):
            best = got
    return best


def _one_group(folder: str, limit_file: str, usage_file: str, cache_key: str) -> tuple[int, int] | None:
    try:
        with open(os.path.join(folder, limit_file)) as fh:
            text = fh.read().strip()
        if text == "max" or int(text) >= _NO_LIMIT:
            return None
        with open(os.path.join(folder, usage_file)) as fh:
            used = int(fh.read().strip())
    except (OSError, ValueError):
        return None
    cache = 0
    with contextlib.suppress(OSError, ValueError):
        with open(os.path.join(folder, "memory.stat")) as fh:
            for line in fh:
                key, _, value = line.partition(" ")
                if key == cache_key:
                    cache = int(value)
    return int(text), max(0, used - cache)


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


def worker_count(n_jobs: int) -> int:
    """Workers that ``n_jobs`` (``--jobs``, ≥ 1 or −1) gives on this machine: −1 is every usable core
    (:func:`usable_cores`), and more than those is capped to them. The work is CPU-bound, so workers past the
    cores only compete, and each process costs ~150–200 MB: ``--jobs 100000`` with a score evaluated in Python
    started hundreds of loky processes until the system's memory ran out. Results never depend on it."""
    cores = usable_cores()
    return cores if n_jobs == -1 else min(n_jobs, cores)


def usable_cores() -> int:
    """The cores this process may run on — what "one per core" (``--jobs -1``, the programme's threads) means:
    its CPU affinity (a cpuset, ``taskset``, a batch job's allocation), not the machine's count, which on a node
    where a job holds 4 of 64 cores would start 16 times too many workers and make the programme's time
    estimate, divided by its threads, 16 times too low."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):   # no affinity on this system (macOS, Windows)
        return max(1, os.cpu_count() or 1)
