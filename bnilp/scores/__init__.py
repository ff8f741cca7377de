"""Local scores: ``make_score(name, data, **settings)`` builds any of them by name.

Scores: ``bic``, ``bdeu`` (discrete); ``cg``, ``cgd``, ``mvp``, ``mml`` (mixed data).
"""

from __future__ import annotations

import importlib
from typing import Any

from bnilp.data import Dataset
from bnilp.errors import InputError
from bnilp.scores.base import LocalScore, StructurePrior

#: score name -> "module:class"; modules are imported on first use
REGISTRY = {
    "bic": "bnilp.scores.discrete:BIC",
    "bdeu": "bnilp.scores.discrete:BDeu",
    "cg": "bnilp.scores.cg:ConditionalGaussian",
    "cgd": "bnilp.scores.cg:ConditionalGaussianDiscretized",
    "mvp": "bnilp.scores.mvp:MixedVariablePolynomial",
    "mml": "bnilp.scores.mml:MinimumMessageLength",
}


def make_score(name: str, data: Dataset, **settings: Any) -> LocalScore:
    """Instantiate score ``name`` on ``data``; ``settings`` go to its constructor."""
    if not isinstance(name, str):
        raise InputError(f"score must be a score name ({', '.join(REGISTRY)}), got {name!r}")
    key = name.lower()
    if key not in REGISTRY:
        raise InputError(f"unknown score {name!r} (choose from {', '.join(REGISTRY)})")
    module, cls = REGISTRY[key].split(":")
    return getattr(importlib.import_module(module), cls)(data, **settings)


__all__ = ["REGISTRY", "LocalScore", "StructurePrior", "make_score"]
