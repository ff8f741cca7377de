"""Bulk object building without the cyclic garbage collector's repeated scans."""

from __future__ import annotations

import gc
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
