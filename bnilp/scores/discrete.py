"""BIC and BDeu for discrete children with discrete parents, from vectorised counts.

For child i with r_i states and parent set Π (q_Π = ∏_{j∈Π} r_j configurations, observed or not),
n_ijk = rows with parent configuration j and child state k, n_ij = Σ_k n_ijk:

- BIC  = LL − c·½·ln N·q_Π·(r_i − 1),  LL = Σ_jk n_ijk·ln(n_ijk / n_ij)      (c = penalty discount)
- BDeu = Σ_j [lnΓ(α/q_Π) − lnΓ(α/q_Π + n_ij)] + Σ_jk [lnΓ(α/(q_Π r_i) + n_ijk) − lnΓ(α/(q_Π r_i))]
  (Heckerman, Geiger & Chickering 1995; unobserved configurations contribute 0).

Scores of non-empty parent sets come from the compiled counts of :mod:`bnilp.scores.batch`
(:meth:`DiscreteScore.canonical_stats`), the same values the lattice walk computes, bit for bit. The
empty set and the CI tests' (LL, df) use the NumPy counts here: a parent configuration is the
mixed-radix code Σ x_j·stride_j, built column by column and re-coded to 0..q⁺−1 with ``np.unique``
whenever the radix product grows past a few times N, so codes never overflow; counts are one
``np.bincount`` per family. Identical rows are merged first (``np.unique`` over rows, counts as
bincount weights): discrete data with large N usually has far fewer distinct rows than rows, and the
counts are the same integers (exact in float64).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import xlogy

from bnilp.data import Dataset
from bnilp.errors import InputError
from bnilp.scores.base import DEFAULT_PENALTY_DISCOUNT, LocalScore, StructurePrior
from bnilp.scores.batch import CountContext, canonical_family_counts, log_rising_sum

#: BDeu's equivalent sample size unless given (``ess``, ``--ess``); also the Dirichlet's of ``bayes`` parameters
DEFAULT_ESS = 1.0


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
    nh: float = 0.0          # N·H(Π) (canonical_stats only)
    c_plus: int = 0          # non-empty cells (canonical_stats only)


class DiscreteScore(LocalScore):
    """Shared counting for BIC and BDeu (every variable must be discrete)."""

    def __init__(self, data: Dataset, *, prior: StructurePrior | None = None,
                 penalty_discount: float = DEFAULT_PENALTY_DISCOUNT):
        super().__init__(data, prior=prior, penalty_discount=penalty_discount)
        cont = [nm for nm, k in zip(data.names, data.kinds, strict=True) if k != "discrete"]
        if cont:
            raise InputError(f"{data.source}: score {self.name!r} needs discrete data, but "
                             f"{', '.join(cont[:5])}{f', … ({len(cont)} in all)' if len(cont) > 5 else ''} "
                             f"{'is' if len(cont) == 1 else 'are'} continuous "
                             "(use a score for mixed data, e.g. score='cg' / --score cg, or type the columns: "
                             "load_data(path, discrete=...) / --discrete COLS)")
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

    def count_context(self) -> CountContext:
        """This score's data in the batched counts' layout (built once, then kept)."""
        ctx = getattr(self, "_batch_context", None)
        if ctx is None:
            ctx = self._batch_context = CountContext.from_score(self)
        return ctx

    def canonical_stats(self, child: int, parents: tuple[int, ...]) -> FamilyStats:
        """The family's statistics as every route to its score computes them (the *canonical* values).

        For a non-empty set the compiled counts of :mod:`bnilp.scores.batch` with the
        lattice walk's decomposition (:func:`~bnilp.scores.batch.canonical_family_counts`), so the walk,
        :meth:`local` and the one-family reference walk give a family bit-identical scores; the empty set
        from its child's counts. ``score`` includes the structure prior (as :meth:`local`).
        """
        raw, ll, q, q_plus, nh, c_plus = self._canonical(child, tuple(sorted(parents)))
        return FamilyStats(raw + self.prior.log_prior(len(parents)), ll, q, q_plus, nh, c_plus)

    def _canonical(self, child: int, parents: tuple[int, ...]) -> tuple[float, float, float, int, float, int]:
        """(score without prior, LL, q_Π, q⁺, N·H(Π), c⁺) of :meth:`canonical_stats`."""
        if not parents:
            config = self.config(())
            nijk = self.joint_counts(child, config)
            ll = self.log_likelihood(nijk)
            return (self._score_from_counts(child, nijk, 1.0, ll), ll, 1.0, config.q_plus, config.nh,
                    int(np.count_nonzero(nijk)))
        fc, q_all = canonical_family_counts(self.count_context(), child, np.asarray([parents], dtype=np.int64),
                                            self._ess())
        ll, q = float(fc.ll[0]), float(q_all[0])
        raw = float(fc.bdeu[0]) if fc.bdeu is not None else self._penalised(child, ll, q)
        return raw, ll, q, int(fc.q_plus[0]), float(fc.nh[0]), int(fc.c_plus[0])

    def _ess(self) -> float | None:
        """BDeu's α for the batched counts (None: no BDeu sums)."""
        return None

    def _penalised(self, child: int, ll: float, q: float) -> float:
        """The score (no prior) from LL and q_Π, in the walk's floating-point order (BIC only)."""
        raise NotImplementedError

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

    def raw(self, child: int, parents: tuple[int, ...]) -> float:
        return self._canonical(child, tuple(sorted(parents)))[0]

    def _score_from_counts(self, child: int, nijk: np.ndarray, q: float, ll: float | None) -> float:
        raise NotImplementedError


class BIC(DiscreteScore):
    """BIC = LL − c·½·ln N·q_Π·(r_i − 1) (Schwarz 1978; GOBNILP's convention)."""

    name = "bic"

    def _score_from_counts(self, child: int, nijk: np.ndarray, q: float, ll: float | None) -> float:
        if ll is None:
            ll = self.log_likelihood(nijk)
        return ll - self.penalty_weight() * q * (self.arities[child] - 1)

    def _penalised(self, child: int, ll: float, q: float) -> float:
        return ll - self.penalty_weight() * q * (self.arities[child] - 1)

    def pruning_rules(self, child: int) -> frozenset[str]:
        """R1–R4; R3 only where every other column has two states or more (its bound needs q_Π″ ≥ 2·q_Π: a
        one-state column — CGd's binned view of a column whose bins collapse — leaves q and the score as they
        are, so Π ∪ {it} ties with Π, and R3 would prune it)."""
        if self.prior.kind != "none":
            return frozenset({"R1"})
        if any(r < 2 for j, r in enumerate(self.arities) if j != child):
            return frozenset({"R1", "R2", "R4"})
        return frozenset({"R1", "R2", "R3", "R4"})

    def loglik_df(self, child: int, parents: tuple[int, ...]) -> tuple[float, float]:
        """(LL, q_Π·(r_i − 1))."""
        nijk = self.joint_counts(child, self.config(parents))
        return self.log_likelihood(nijk), self.q_all(parents) * (self.arities[child] - 1)


#: the smallest BDeu equivalent sample size taken: α/(q·r) must stay a normal float for every family (q·r
#: can reach 1e60 on the Table 1 data; below this an ESS is no prior a user means)
MIN_ESS = 1e-100


class BDeu(DiscreteScore):
    """BDeu log marginal likelihood with equivalent sample size α (default 1)."""

    name = "bdeu"
    takes_penalty_discount = False

    def __init__(self, data: Dataset, *, ess: float = DEFAULT_ESS, prior: StructurePrior | None = None,
                 penalty_discount: float = DEFAULT_PENALTY_DISCOUNT):
        if isinstance(ess, bool) or not isinstance(ess, numbers.Real) or not (math.isfinite(ess) and ess >= MIN_ESS):
            why = (" (smaller, α/(q·r) underflows to 0 and the marginal likelihood is not defined)"
                   if isinstance(ess, numbers.Real) and not isinstance(ess, bool) and 0 < ess < MIN_ESS else "")
            raise InputError(f"ess (--ess) must be a finite number ≥ {MIN_ESS:g}, got {ess!r}{why}")
        if penalty_discount != DEFAULT_PENALTY_DISCOUNT:
            raise InputError(f"score 'bdeu' takes no penalty_discount (--penalty-discount) (got {penalty_discount}); "
                             "BDeu is a marginal likelihood with no BIC penalty to scale")
        super().__init__(data, prior=prior, penalty_discount=penalty_discount)
        self.ess = float(ess)

    def constructor_settings(self) -> dict[str, Any]:
        return {**super().constructor_settings(), "ess": self.ess}

    def _ess(self) -> float | None:
        return self.ess

    def _score_from_counts(self, child: int, nijk: np.ndarray, q: float, ll: float | None) -> float:
        a_j = self.ess / q
        a_jk = a_j / self.arities[child]
        nij = nijk.sum(axis=1)
        cells = nijk[nijk > 0]
        return float(log_rising_sum(a_jk, cells) - log_rising_sum(a_j, nij))

    def pruning_rules(self, child: int) -> frozenset[str]:
        if self.prior.kind != "none":
            return frozenset({"R1"})
        return frozenset({"R1", "R5", "R6"})

    def settings(self) -> dict:
        out = super().settings()
        out["ess"] = self.ess
        return out
