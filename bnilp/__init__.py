"""bnilp: exact Bayesian network structure learning with credible sets (see README).

``bnilp.learn(data, score="bic", bf=20)`` runs the whole job; the stages are modules of their own
(data, scores, parentsets, scorefile, ilp, mec, averaging, report).
"""

__version__ = "0.1.0"
__all__ = ["Knowledge", "LearnResult", "learn", "solve_table", "__version__"]


def __getattr__(name: str) -> object:
    if name in ("learn", "solve_table", "LearnResult"):
        return getattr(_import_whole("bnilp.pipeline"), name)
    if name == "Knowledge":
        return _import_whole("bnilp.knowledge").Knowledge
    raise AttributeError(f"module 'bnilp' has no attribute {name!r}")


def _import_whole(module: str) -> object:
    """``module`` imported with Ctrl-C held off until the import is over, then raised: the first ``bnilp.learn``
    imports the numerical stack (about a second), and an interrupt in the middle of it (a notebook's kernel
    interrupt) left NumPy, pandas or numba half imported — every later call failed ("module 'numba' has no
    attribute 'core'") until a restart (a review). Off the main thread, or where Python does not handle SIGINT,
    a plain import."""
    import importlib
    import signal
    import sys
    import threading

    if module in sys.modules or threading.current_thread() is not threading.main_thread():
        return importlib.import_module(module)
    held: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    if previous is None or previous in (signal.SIG_IGN, signal.SIG_DFL):
        return importlib.import_module(module)
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        imported = importlib.import_module(module)
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        raise KeyboardInterrupt
    return imported


def __dir__() -> list[str]:
    """The names :func:`__getattr__` gives beside the module's own: ``bnilp.<Tab>`` and ``help(bnilp)`` list
    ``learn`` (a review: tab completion offered none of them)."""
    return sorted({*globals(), *__all__, "LearnResult"})
