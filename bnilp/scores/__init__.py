"""Local scores: ``make_score(name, data, **settings)`` builds any of them by name.

Scores: ``bic``, ``bdeu`` (discrete); ``cg``, ``cgd``, ``mvp``, ``mml`` (mixed data); ``bge`` (continuous).
"""

from __future__ import annotations

import importlib
import inspect
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
    "bge": "bnilp.scores.bge:BGe",
}

#: scores that take discrete data only: with them and no type options, integer-coded columns are discrete
#: (:func:`bnilp.data.load_data`'s ``integer_codes``), on the command line and in the Python API alike
DISCRETE_ONLY_SCORES = ("bic", "bdeu")
#: scores that take continuous data only: with them and no type options every column is read continuous
CONTINUOUS_ONLY_SCORES = ("bge",)


def make_score(name: str, data: Dataset, **settings: Any) -> LocalScore:
    """Instantiate score ``name`` on ``data``; ``settings`` go to its constructor. A setting the score does not
    take (``ess`` for BIC, a typo such as ``esss``) is an :class:`InputError` naming the score, the setting and
    the settings it takes."""
    if not isinstance(name, str):
        raise InputError(f"score must be a score name ({', '.join(REGISTRY)}), got {name!r}")
    key = name.lower()
    if key not in REGISTRY:
        raise InputError(f"unknown score {name!r} (choose from {', '.join(REGISTRY)})")
    module, cls_name = REGISTRY[key].split(":")
    cls = getattr(importlib.import_module(module), cls_name)
    takes = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "data")]
    unknown = [k for k in settings if k not in takes]
    if unknown:
        # its own settings: not the structure prior every score takes (``structure_prior`` in learn, where
        # ``prior`` is the averaging prior), nor a penalty discount it refuses (a review: both were listed)
        own = [p for p in takes if p != "prior" and (p != "penalty_discount" or cls.takes_penalty_discount)]
        raise InputError(f"score {key!r} takes no setting {', '.join(map(repr, unknown))} "
                         + (f"(its settings: {', '.join(own)})" if own else "(it has no settings of its own)"))
    return cls(data, **settings)


__all__ = ["CONTINUOUS_ONLY_SCORES", "DISCRETE_ONLY_SCORES", "REGISTRY", "LocalScore", "StructurePrior", "make_score"]
