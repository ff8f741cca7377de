"""What a solve returns: :class:`Network`, :class:`SolveResult`, and the parent-map graph helper."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Parents = dict[str, frozenset[str]]


@dataclass
class Network:
    """A DAG: ``score`` is the fsum of its local scores; ``parents`` has every variable."""

    score: float
    parents: Parents


@dataclass
class ClassTail:
    """The credible classes past the network cap, when peeling listed every credible DAG and the cap kept
    only the best classes: each one's best DAG as its exact score and family choice (row i: one index into
    ``sets``/``children`` per variable), best first. Compact (a few bytes a class) so that edge posteriors
    can be averaged over every credible class, not only the listed ones (:func:`bnilp.mec.class_tail_mass`)."""

    scores: np.ndarray
    choices: np.ndarray
    #: the parent set and the child of each family index
    sets: Sequence[frozenset[str]]
    children: Sequence[str]

    def __len__(self) -> int:
        return len(self.scores)

    def __eq__(self, other: object) -> bool:
        """Equal scores, choices and families (the generated ``==`` compared arrays: "truth value … ambiguous")."""
        if not isinstance(other, ClassTail):
            return NotImplemented
        return (np.array_equal(self.scores, other.scores) and np.array_equal(self.choices, other.choices)
                and list(self.sets) == list(other.sets) and list(self.children) == list(other.children))

    def __repr__(self) -> str:
        return f"ClassTail({len(self)} classes)"

    def items(self, lo: int, hi: int) -> list[tuple[float, Parents]]:
        """Classes ``lo`` to ``hi`` − 1 as (score, parent map of the best DAG)."""
        sets, children = self.sets, self.children
        return [(float(s), {children[k]: sets[k] for k in row})
                for s, row in zip(self.scores[lo:hi].tolist(), self.choices[lo:hi].tolist(), strict=True)]


@dataclass
class SolveResult:
    """Outcome of :func:`solve`. ``networks`` are best first, each listed once, and all have
    score ≥ OPT − ε − 1e-9·max(1, |OPT|) (fsum scores; the tolerance only absorbs float noise)."""

    optimum: float | None
    bound: float
    gap: float
    status: str
    seconds: float
    epsilon: float
    complete: bool
    networks: list[Network]
    stats: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    enumerated: str = "dags"
    #: class enumeration past the cap (peeling, or ``count_past_cap``): the classes found but not in ``networks``
    unlisted: ClassTail | None = None

    def __repr__(self) -> str:
        """A summary (the generated repr printed every network: megabytes for a large credible set)."""
        return (f"SolveResult(status={self.status!r}, optimum={self.optimum!r}, gap={self.gap!r}, "
                f"epsilon={self.epsilon!r}, complete={self.complete}, enumerated={self.enumerated!r}, "
                f"networks={len(self.networks)}{'' if self.unlisted is None else f', unlisted={len(self.unlisted)}'})")

    @property
    def optimum_proven(self) -> bool:
        """Phase 1 closed the gap: ``optimum`` is OPT, so every listed network is credible (score ≥
        OPT − ε). False when a limit or a signal stopped phase 1: ``networks`` then holds the best DAG
        found so far, which need not be credible, nor need the other DAGs of its class."""
        return self.optimum is not None and self.gap == 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (non-finite floats become ``None``). The networks' parent lists are made once
        per distinct parent set and shared between networks — read them, do not change them in place (a class
        enumeration's 150,000 representatives on 57 variables hold 8.5 M parent sets, nearly all of them
        repeats)."""
        listed = _SortedSets()
        try:
            networks = [{"score": net.score, "parents": {v: listed[ps] for v, ps in net.parents.items()}}
                        for net in self.networks]
        except TypeError:                       # parent sets given as (unhashable) sets
            networks = [{"score": net.score, "parents": {v: sorted(ps) for v, ps in net.parents.items()}}
                        for net in self.networks]
        return {
            "optimum": _finite(self.optimum),
            "bound": _finite(self.bound),
            "gap": _finite(self.gap),
            "optimum_proven": self.optimum_proven,
            "status": self.status,
            "seconds": self.seconds,
            "epsilon": self.epsilon,
            "complete": self.complete,
            "n_networks": len(self.networks),
            "networks": networks,
            "stats": {k: _jsonable(v) for k, v in self.stats.items()},
            "message": self.message,
            "enumerate": self.enumerated,
        }


class _SortedSets(dict):
    """frozenset → its sorted list, made on first look-up."""

    def __missing__(self, key: frozenset[str]) -> list[str]:
        got = self[key] = sorted(key)
        return got


def _finite(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _finite(float(value))
    return value


