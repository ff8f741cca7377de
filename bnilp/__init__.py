"""bnilp: exact Bayesian network structure learning with credible sets (see README).

``bnilp.learn(data, score="bic", bf=20)`` runs the whole job; the stages are modules of their own
(data, scores, parentsets, scorefile, ilp, mec, averaging, report).
"""

__version__ = "0.1.0"
__all__ = ["Knowledge", "learn", "solve_table", "__version__"]


def __getattr__(name: str) -> object:
    if name in ("learn", "solve_table", "LearnResult"):
        from bnilp import pipeline

        return getattr(pipeline, name)
    if name == "Knowledge":
        from bnilp.knowledge import Knowledge

        return Knowledge
    raise AttributeError(f"module 'bnilp' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The names :func:`__getattr__` gives beside the module's own: ``bnilp.<Tab>`` and ``help(bnilp)`` list
    ``learn`` (a review: tab completion offered none of them)."""
    return sorted({*globals(), *__all__, "LearnResult"})
