"""BIC and BDeu for discrete children with discrete parents, from vectorised counts.

For child i with r_i states and parent set Π (q_Π = ∏_{j∈Π} r_j configurations, observed or not),
n_ijk = rows with parent configuration j and child state k, n_ij = Σ_k n_ijk:

- BIC  = LL − c·½·ln N·q_Π·(r_i − 1),  LL = Σ_jk n_ijk·ln(n_ijk / n_ij)      (c = penalty discount)
- BDeu = Σ_j [lnΓ(α/q_Π) − lnΓ(α/q_Π + n_ij)] + Σ_jk [lnΓ(α/(q_Π r_i) + n_ijk) − lnΓ(α/(q_Π r_i))]
  (Heckerman, Geiger & Chickering 1995; unobserved configurations contribute 0).

Counting: a parent configuration is the mixed-radix code Σ x_j·stride_j, built column by column
and re-coded to 0..q⁺−1 with ``np.unique`` whenever the radix product grows past a few times N,
so codes never overflow; counts are one ``np.bincount`` per family. Identical rows are merged
first (``np.unique`` over rows, counts as bincount weights): discrete data with large N usually has
far fewer distinct rows than rows, and the counts are the same integers (exact in float64).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import gammaln, xlogy

from bnilp.data import Dataset
from bnilp.errors import InputError
from bnilp.scores.base import LocalScore, StructurePrior


@dataclass(frozen=True)
class ParentConfig:
    """Configuration codes of a parent set on every row.

    ``codes`` in 0..size−1; ``counts`` = n_j of the observed configurations; ``nh`` = N·H(Π) =
    N·ln N − Σ_j n_j·ln n_j (empirical joint entropy of the parent set, scaled by N).
    """

    codes: np.ndarray
    size: int
    counts: np.ndarray
    nh: float

    @property
    def q_plus(self) -> int:
        return int(self.counts.size)


@dataclass(frozen=True)
class FamilyStats:
    """What the pruning rules need of one family: score, LL, q_Π (all), q⁺ (observed)."""

    score: float
    ll: float
    q: float
    q_plus: int


class DiscreteScore(LocalScore):
    """Shared counting for BIC and BDeu (every variable must be discrete)."""

    def __init__(self, data: Dataset, *, prior: StructurePrior | None = None, penalty_discount: float = 1.0):
        super().__init__(data, prior=prior, penalty_discount=penalty_discount)
        cont = [nm for nm, k in zip(data.names, data.kinds, strict=True) if k != "discrete"]
        if cont:
            raise InputError(f"{data.source}: score {self.name!r} needs discrete data, but "
                             f"{', '.join(cont[:5])} {'is' if len(cont) == 1 else 'are'} continuous "
                             "(use --score cg, cgd, mvp or mml, or --discrete COLS)")
        self.N = data.N
        rows, counts = np.unique(data.codes, axis=0, return_counts=True)
        if rows.shape[0] < 0.8 * self.N:
            self.columns = [np.ascontiguousarray(rows[:, j]) for j in range(data.n)]
            self.weights: np.ndarray | None = counts.astype(np.float64)
        else:
            self.columns = [np.ascontiguousarray(data.codes[:, j]) for j in range(data.n)]
            self.weights = None
        self.n_rows = self.columns[0].shape[0] if self.columns else 0
        self.arities = list(data.arities)
        self._recode_limit = max(4 * self.N, 1 << 16)
        self._config_cache: dict[tuple[int, ...], ParentConfig] = {}
        self._pre: dict[int, np.ndarray] = {}
        self._pre_child = -1
        self._nlogn = float(xlogy(self.N, self.N))

    def config(self, parents: tuple[int, ...]) -> ParentConfig:
        """Configuration codes of ``parents`` (a small cache serves the pruning walk's repeats)."""
        key = tuple(sorted(parents))
        hit = self._config_cache.get(key)
        if hit is not None:
            return hit
        codes = np.zeros(self.n_rows, dtype=np.int64)
        size = 1
        for p in key:
            codes = codes * self.arities[p] + self.columns[p]
            size *= self.arities[p]
            if size > self._recode_limit:
                uniq, codes = np.unique(codes, return_inverse=True)
                size = int(uniq.size)
        counts = np.bincount(codes, weights=self.weights, minlength=size)
        counts = counts[counts > 0]
        result = ParentConfig(codes, size, counts, self._nlogn - float(xlogy(counts, counts).sum()))
        if len(self._config_cache) > 256:
            self._config_cache.clear()
        self._config_cache[key] = result
        return result

    def extended_counts(self, child: int, base: tuple[int, ...], j: int) -> tuple[np.ndarray, int, float]:
        """(n_ijk over observed configurations, q⁺, N·H(Π)) for Π = base ∪ {j}, in one bincount.

        The pruning walk extends one base set by many j in a row: the base's codes come from the
        cache and the joint code is base·(r_j·r_i) + (x_j·r_i + x_i), the second term kept per (i, j).
        """
        config = self.config(base)
        r_c, r_j = self.arities[child], self.arities[j]
        size = config.size * r_j
        if size > self._recode_limit:
            full = self.config(base + (j,))
            nijk = self.joint_counts(child, full)
            return nijk, full.q_plus, full.nh
        if self._pre_child != child:
            self._pre.clear()
            self._pre_child = child
        pre = self._pre.get(j)
        if pre is None:
            pre = self._pre[j] = self.columns[j] * r_c + self.columns[child]
        table = np.bincount(config.codes * (r_j * r_c) + pre, weights=self.weights,
                            minlength=size * r_c).reshape(size, r_c)
        rows = table.sum(axis=1)
        seen = rows > 0
        nh = self._nlogn - float(xlogy(rows, rows).sum())
        return table[seen], int(seen.sum()), nh

    def stats_from_counts(self, child: int, parents: tuple[int, ...], nijk: np.ndarray, q_plus: int) -> FamilyStats:
        q = self.q_all(parents)
        ll = self.log_likelihood(nijk)
        score = self._score_from_counts(child, nijk, q, ll) + self.prior.log_prior(len(parents))
        return FamilyStats(score=score, ll=ll, q=q, q_plus=q_plus)

    def joint_counts(self, child: int, config: ParentConfig) -> np.ndarray:
        """n_ijk as a (q⁺, r_i) array over the observed parent configurations."""
        r = self.arities[child]
        table = np.bincount(config.codes * r + self.columns[child], weights=self.weights,
                            minlength=config.size * r)
        table = table.reshape(config.size, r)
        return table[table.sum(axis=1) > 0]

    def q_all(self, parents: tuple[int, ...]) -> float:
        """q_Π = ∏ r_j over all configurations (a float: it can be astronomically large)."""
        return float(math.prod(self.arities[p] for p in parents))

    def penalty_weight(self) -> float:
        """w = c·½·ln N of the BIC penalty."""
        return self.penalty_discount * 0.5 * math.log(self.N)

    def log_likelihood(self, nijk: np.ndarray) -> float:
        """LL = Σ n_ijk ln n_ijk − Σ n_ij ln n_ij (≤ 0)."""
        return float(xlogy(nijk, nijk).sum() - xlogy(nijk.sum(axis=1), nijk.sum(axis=1)).sum())

    def family_stats(self, child: int, parents: tuple[int, ...], config: ParentConfig | None = None) -> FamilyStats:
        config = config if config is not None else self.config(parents)
        nijk = self.joint_counts(child, config)
        q = self.q_all(parents)
        ll = self.log_likelihood(nijk)
        score = self._score_from_counts(child, nijk, q, ll) + self.prior.log_prior(len(parents))
        return FamilyStats(score=score, ll=ll, q=q, q_plus=config.q_plus)

    def raw(self, child: int, parents: tuple[int, ...]) -> float:
        config = self.config(parents)
        nijk = self.joint_counts(child, config)
        q = self.q_all(parents)
        return self._score_from_counts(child, nijk, q, None)

    def _score_from_counts(self, child: int, nijk: np.ndarray, q: float, ll: float | None) -> float:
        raise NotImplementedError


class BIC(DiscreteScore):
    """BIC = LL − c·½·ln N·q_Π·(r_i − 1) (Schwarz 1978; GOBNILP's convention)."""

    name = "bic"

    def _score_from_counts(self, child: int, nijk: np.ndarray, q: float, ll: float | None) -> float:
        if ll is None:
            ll = self.log_likelihood(nijk)
        return ll - self.penalty_weight() * q * (self.arities[child] - 1)

    def pruning_rules(self, child: int) -> frozenset[str]:
        if self.prior.kind != "none":
            return frozenset({"R1"})
        return frozenset({"R1", "R2", "R3", "R4"})

    def loglik_df(self, child: int, parents: tuple[int, ...]) -> tuple[float, float]:
        """(LL, q_Π·(r_i − 1))."""
        nijk = self.joint_counts(child, self.config(parents))
        return self.log_likelihood(nijk), self.q_all(parents) * (self.arities[child] - 1)


class BDeu(DiscreteScore):
    """BDeu log marginal likelihood with equivalent sample size α (default 1)."""

    name = "bdeu"

    def __init__(self, data: Dataset, *, ess: float = 1.0, prior: StructurePrior | None = None,
                 penalty_discount: float = 1.0):
        if not ess > 0:
            raise InputError(f"--ess must be > 0, got {ess}")
        super().__init__(data, prior=prior, penalty_discount=penalty_discount)
        self.ess = float(ess)

    def constructor_settings(self) -> dict[str, Any]:
        return {**super().constructor_settings(), "ess": self.ess}

    def _score_from_counts(self, child: int, nijk: np.ndarray, q: float, ll: float | None) -> float:
        a_j = self.ess / q
        a_jk = a_j / self.arities[child]
        nij = nijk.sum(axis=1)
        cells = nijk[nijk > 0]
        return float(nij.size * gammaln(a_j) - gammaln(a_j + nij).sum()
                     + gammaln(a_jk + cells).sum() - cells.size * gammaln(a_jk))

    def pruning_rules(self, child: int) -> frozenset[str]:
        if self.prior.kind != "none":
            return frozenset({"R1"})
        return frozenset({"R1", "R5", "R6"})

    def settings(self) -> dict:
        out = super().settings()
        out["ess"] = self.ess
        return out
