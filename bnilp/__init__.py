"""bnilp: exact Bayesian network structure learning with credible sets (see README).

``bnilp.learn(data, score="bic", bf=20)`` runs the whole job; the stages are modules of their own
(data, scores, parentsets, scorefile, ilp, mec, averaging, report).
"""

from typing import Any

__version__ = "0.1.0"
__all__ = ["Knowledge", "learn", "solve_table", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("learn", "solve_table", "LearnResult"):
        from bnilp import pipeline

        return getattr(pipeline, name)
    if name == "Knowledge":
        from bnilp.knowledge import Knowledge

        return Knowledge
    raise AttributeError(f"module 'bnilp' has no attribute {name!r}")
