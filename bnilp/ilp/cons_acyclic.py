"""The acyclicity constraint handler (as GOBNILP's cons_dagcluster.c): integral points are checked
and enforced by cycle detection, fractional points separated by :mod:`bnilp.ilp.sepa_cluster`, and in
phase 2 every integral acyclic point is recorded and excluded by a global no-good."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from pyscipopt import SCIP_RESULT, Conshdlr, quicksum
from pyscipopt.scip import Variable

from bnilp.ilp import sepa_cluster, sepa_fourb, sepa_subip, settings
from bnilp.ilp.classbest import best_members_below, choice_table, member_index
from bnilp.ilp.families import _Data
from bnilp.ilp.settings import _INT_TOL
from bnilp.ilp.symmetry import TableSymmetry

_NO_SCORE = np.zeros(1)        # the recorded table only tells classes apart: every score the same


def _cyclic_components(data: _Data, chosen: np.ndarray) -> list[np.ndarray]:
    """Strongly connected components (size ≥ 2, as bool vectors) of the union of the chosen
    families' arrows; empty when that graph is a DAG."""
    src, dst, _ = data.arcs(chosen)
    return sepa_cluster.strong_components(data.n, src, dst)[0]


def _choice(data: _Data, vals: np.ndarray) -> tuple[np.ndarray, tuple[int, ...] | None]:
    """(families at 1, the parent choice if exactly one family per variable is at 1)."""
    chosen = np.flatnonzero(vals > _INT_TOL)
    counts = np.bincount(data.child[chosen], minlength=data.n)
    if data.n and np.all(counts == 1):
        return chosen, tuple(int(k) for k in chosen)
    return chosen, None


def add_lp_cut(model, name: str, vars_: list, coefs: list[float] | None, lhs: float | None, rhs: float | None,
               force: bool, pool: bool) -> None:
    """A global, removable LP row lhs ≤ Σ coefs·vars_ ≤ rhs (coefficients 1 when None; a variable listed twice
    adds up) as a cut of the current LP, and into SCIP's global cut pool when ``pool``."""
    row = model.createEmptyRowUnspec(name=name, lhs=lhs, rhs=rhs, local=False, removable=True)
    model.cacheRowExtensions(row)
    for v, c in zip(vars_, coefs if coefs is not None else [1.0] * len(vars_), strict=True):
        model.addVarToRow(row, v, c)
    model.flushRowExtensions(row)
    model.addCut(row, forcecut=force)
    if pool:
        model.addPoolCut(row)
    model.releaseRow(row)


class _Acyclicity(Conshdlr):
    """Acyclicity of the parent choice (phase 1) or collect-and-exclude enumeration (phase 2)."""

    def __init__(self, data: _Data, xvars: list, enumerate_mode: bool, stats: dict,
                 on_record: Callable[[tuple[int, ...]], None] | None = None,
                 tick: Callable[[], None] | None = None, classes: bool = False):
        self.data = data
        self.classes = classes
        self.indicator_vars: dict = {}             # adj/col variables (MEC_ROW_FORM "indicators"), set by _build
        self.indicators: dict | None = None         # their transformed counterparts
        self.indicator_index: tuple = ()
        #: the transformed indicators in key order, and the compiled row's positions of the keys (None: by keys)
        self.indicator_list: list = []
        self.indicator_positions: tuple[np.ndarray, np.ndarray] | None = None
        self.tick = tick
        self.xvars = xvars
        self.tvars: list | None = None
        self.enumerate_mode = enumerate_mode
        self.stats = stats
        self.on_record = on_record
        #: the recorded DAGs (NOGOODS "constraints", ENUMERATION "branch")
        self.recorded: set[tuple[int, ...]] = set()
        #: NOGOODS "lazy": one DAG per recorded class, or each recorded DAG, in a compact table
        #: (:func:`~bnilp.ilp.classbest.choice_table`, 4 bytes a variable; a long enumeration records millions)
        self.recorded_table = choice_table(data, classes)
        #: the (k-)cluster cuts added, (members, k) by key, for phase 2's model
        self.clusters: dict[tuple[bytes, int], tuple[np.ndarray, int]] = {}
        #: rows Σ_{k ∈ families} x_k = value taken on during the search (:meth:`restrict`)
        self.restrictions: list[tuple[np.ndarray, int]] = []
        #: phase 2: the table's symmetries, whose images of a recorded point are recorded with it
        #: (:meth:`_record_images`), and the credible threshold; set by :func:`bnilp.ilp.search._phase2_model`
        self.symmetry: TableSymmetry | None = None
        self.threshold = -math.inf
        #: a DAG met this far below :attr:`threshold` stands for a class wholly below it (score equivalence: its
        #: members score alike up to float noise, which the tie tolerance bounds), so its class is cut off whole
        #: (:meth:`_below_threshold`); within it only the DAG is. Infinite until the search sets it.
        self.class_margin = math.inf
        #: the look-ups of :func:`~bnilp.ilp.classbest.best_members_below`, built at its first use here
        self.member_index: tuple[dict, dict] | None = None
        if settings.NOGOODS not in settings.NOGOODS_MODES:
            raise ValueError(f"NOGOODS must be one of {settings.NOGOODS_MODES}, not {settings.NOGOODS!r}")
        if settings.KCLUSTER_MODE not in settings.KCLUSTER_MODES:
            raise ValueError(f"KCLUSTER_MODE must be one of {settings.KCLUSTER_MODES}, not {settings.KCLUSTER_MODE!r}")
        self.subip_mode = sepa_subip.subip_mode(data.n, enumerate_mode)
        stats["subip_mode"] = self.subip_mode

    def _indicators(self) -> None:
        """Transformed adj/col variables, once the model is being solved."""
        if self.indicators is None and self.indicator_vars:
            self.indicators = {k: self.model.getTransformedVar(v) for k, v in self.indicator_vars.items()}
            self.indicator_list = list(self.indicators.values())
            self.indicator_positions = self.data.indicator_positions(*self.indicator_index)

    def _tv(self) -> list:
        if self.tvars is None:
            self.tvars = [self.model.getTransformedVar(v) for v in self.xvars]
        return self.tvars

    def _lp_values(self) -> np.ndarray:
        return np.fromiter(map(Variable.getLPSol, self._tv()), dtype=float, count=self.data.K)

    def _sol_values(self, sol) -> np.ndarray:
        get = self.model.getSolVal
        return np.fromiter((get(sol, v) for v in self._tv()), dtype=float, count=self.data.K)

    def _add_cluster_row(self, cvec: np.ndarray, kind: str, k: int = 1) -> None:
        self._add_row(*self.data.cluster_row(cvec, k), kind)
        self.clusters.setdefault((cvec.tobytes(), k), (cvec.copy(), k))

    def _add_row(self, fams: np.ndarray, lhs: float | None, rhs: float | None, kind: str) -> None:
        """A global cut over family variables, into the LP and SCIP's global cut pool."""
        tv = self._tv()
        self._cut(f"{kind}{self.stats['cuts_total']}", [tv[k] for k in fams], None, lhs, rhs,
                  force=kind != "sepa", pool=True)
        self.stats["cuts"][kind] = self.stats["cuts"].get(kind, 0) + 1
        self.stats["cuts_total"] += 1

    def _cut(self, name: str, vars_: list, coefs: list[float] | None, lhs: float | None, rhs: float | None,
             force: bool, pool: bool) -> None:
        add_lp_cut(self.model, name, vars_, coefs, lhs, rhs, force, pool)

    def _add_cluster_cons(self, cvec: np.ndarray, kind: str) -> None:
        self.model.addCons(_cluster_expr(self._tv(), *self.data.cluster_row(cvec)),
                           name=f"clustercons{self.stats['cuts_total']}", removable=True)
        self.clusters.setdefault((cvec.tobytes(), 1), (cvec.copy(), 1))
        self.stats["cuts"][kind] = self.stats["cuts"].get(kind, 0) + 1
        self.stats["cuts_total"] += 1

    def restrict(self, fams: np.ndarray, value: int) -> None:
        """Keep the rest of the search to Σ_{k ∈ fams} x_k = ``value``, whatever nodes are open: the row is cut
        into the LP and SCIP's global cut pool wherever an LP point violates it, and an integral point that
        violates it is cut off before it is recorded — lazily, like the no-goods. So a running cube of
        :mod:`bnilp.ilp.cubes` gives up one side of a pair's adjacency to another worker: what it recorded
        before stays valid (recorded points are credible), what it records after lies on its own side."""
        self.restrictions.append((np.asarray(fams, dtype=np.int64), int(value)))

    def _cut_restrictions(self, vals: np.ndarray, lp: bool, tol: float) -> bool:
        """Add the rows of :meth:`restrict` that ``vals`` violates by more than ``tol``; whether any was."""
        bad = [(f, v) for f, v in self.restrictions if abs(float(vals[f].sum()) - v) > tol]
        for fams, value in bad:
            if lp:
                self._add_row(fams, float(value), float(value), "restrict")
            else:
                tv = self._tv()
                self.model.addCons(quicksum(tv[k] for k in fams.tolist()) == value, removable=True,
                                   name=f"restrict{self.stats['cuts_total']}")
                self.stats["cuts"]["restrict"] = self.stats["cuts"].get("restrict", 0) + 1
                self.stats["cuts_total"] += 1
        return bool(bad)

    def _note(self, choice: tuple[int, ...]) -> bool:
        """Record ``choice`` in :attr:`recorded_table` (its class: equal class words, :meth:`_Data.class_words`,
        iff Markov equivalent; or the DAG itself); whether it was new."""
        return bool(self.recorded_table.add_rows(np.asarray(choice, dtype=np.int64), _NO_SCORE)[0])

    @property
    def n_recorded(self) -> int:
        """How many DAGs (or classes) were recorded (one of the two stores is used, by the settings)."""
        return len(self.recorded) + len(self.recorded_table)

    def _nogood_terms(self, choice: tuple[int, ...], whole_class: bool | None = None
                      ) -> tuple[list, list[float], float | None, float | None]:
        """The no-good of ``choice`` over transformed variables: (variables, coefficients, lhs, rhs) — the
        DAG's Σ_i x(i, Π_i) ≤ n − 1, or (``whole_class``, default: in class enumeration) its class's row
        (:meth:`_Data.mec_row_indicators` / ``mec_row``)."""
        tv = self._tv()
        if not (self.classes if whole_class is None else whole_class):
            return [tv[k] for k in choice], [1.0] * len(choice), None, float(self.data.n - 1)
        self._indicators()
        if self.indicator_positions is not None:
            pos, coef, rhs = self.data.mec_row_positions(choice, self.indicator_positions)
            tl = self.indicator_list
            return [tl[i] for i in pos.tolist()], coef.tolist(), rhs, None
        if self.indicators is not None:
            terms, rhs = self.data.mec_row_indicators(choice, *self.indicator_index)
            tind = self.indicators
            return [tind[key] for key, _ in terms], [c for _, c in terms], rhs, None
        fams, coef, rhs = self.data.mec_row(choice)
        return [tv[k] for k in fams.tolist()], coef.tolist(), rhs, None

    def _nogood_built(self, t0: float, nonzeros: int) -> None:
        """Count a no-good's building time (since ``t0``) and nonzeros in ``stats``."""
        self.stats["nogood_seconds"] = self.stats.get("nogood_seconds", 0.0) + time.perf_counter() - t0
        self.stats["nogood_nonzeros"] = self.stats.get("nogood_nonzeros", 0) + nonzeros

    def _cut_nogood(self, choice: tuple[int, ...], lp: bool, whole_class: bool | None = None) -> dict:
        """Cut off the integral point ``choice`` by the no-good of its DAG or class: an LP row at an LP point
        (global, removable, and in SCIP's cut pool only with ``NOGOOD_POOL``), a removable constraint at a
        pseudo point (there is no LP to cut)."""
        t0 = time.perf_counter()
        vars_, coefs, lhs, rhs = self._nogood_terms(choice, whole_class)
        if lp:
            self._cut(f"nogood{self.stats['cuts_total']}", vars_, coefs, lhs, rhs, force=True,
                      pool=settings.NOGOOD_POOL)
        else:
            self.model.addCons(_nogood_cons(vars_, coefs, lhs, rhs), name=f"nogood_ps{self.stats['cuts_total']}",
                               removable=True)
        self.stats["cuts_total"] += 1
        self._nogood_built(t0, len(vars_))
        return {"result": SCIP_RESULT.SEPARATED if lp else SCIP_RESULT.CONSADDED}

    def _record_lazily(self, choice: tuple[int, ...], lp: bool) -> dict:
        """Phase 2 with ``NOGOODS = "lazy"``: an integral acyclic point whose DAG (or class) is recorded is cut
        off by that no-good; a new one is recorded first. The recorded DAGs or classes are a compiled hash
        table (:attr:`recorded_table`: family rows, classes told apart by their words), and no no-good is
        ever a constraint of the model: as constraints, SCIP's propagation and checks visit every one of
        them at every node — each class no-good holds every adjacency indicator — so each node cost grows
        with what was found."""
        below = self._below_threshold(choice)
        if below:
            result = self._cut_nogood(choice, lp, whole_class=below == "class")
            for image in self._record_images(choice):   # the lex rows may keep the search from an image's class
                self._cut_nogood(image, lp)
            return result
        kind = "nogood_recut"
        new = self._note(choice)
        if new:
            kind = "mec_nogood" if self.classes else "nogood"
            if self.on_record is not None:
                self.on_record(choice)
        self.stats["cuts"][kind] = self.stats["cuts"].get(kind, 0) + 1
        result = self._cut_nogood(choice, lp)
        if new:
            for image in self._record_images(choice):
                self._cut_nogood(image, lp)
        return result

    def _below_threshold(self, choice: tuple[int, ...]) -> str:
        """Class enumeration meets a DAG below OPT − ε (:attr:`threshold`; SCIP's objective limit is looser than
        the tie tolerance): it is no credible DAG, and its class is not recorded. Within :attr:`class_margin` of
        the threshold its class may hold credible members not met yet (scores that differ by float noise), so only
        the DAG is cut off ("dag"); further below, every member lies below too (a score-equivalent table), and the
        whole class is ("class") — else a class just below the threshold was met DAG by DAG, one node each
        (hailfinder100 BF 150: 90,419 such DAGs, and the set no longer complete in 10 minutes). "" above it."""
        if not self.classes:
            return ""
        gap = self.threshold - self.data.exact(choice)
        if not gap > 0:
            return ""
        kind = "below_threshold_class" if gap > self.class_margin else "below_threshold"
        self.stats["cuts"][kind] = self.stats["cuts"].get(kind, 0) + 1
        return "class" if kind == "below_threshold_class" else "dag"

    def _record_images(self, choice: tuple[int, ...]) -> list[tuple[int, ...]]:
        """Record the images of ``choice`` (just recorded, or met below the threshold) under :attr:`symmetry`
        (:mod:`bnilp.ilp.symmetry`) whose DAG or class is new and whose own exact score reaches :attr:`threshold`
        (it is ``choice``'s within the symmetry's slack, so an image of a DAG just below the threshold can be
        credible, and the lex-leader rows may keep the search from its class); return them, for their no-goods.
        Every image is
        recorded, inside this cube's region or not (the lex-leader rows keep the search from most of them,
        in every cube; the coordinator keeps one of a class found twice)."""
        if self.symmetry is None:
            return []
        out = []
        for image in self.symmetry.images(choice):
            score = self.data.exact(image)
            if score < self.threshold:
                if not self.classes or self.threshold - score > self.class_margin:
                    continue            # a DAG (or, further below than float noise, a whole class) below it
                member = self._credible_member(image, score)
                if member is None:
                    continue
                image = member
            if not self._note(image):
                continue
            self.stats["cuts"]["symmetry_image"] = self.stats["cuts"].get("symmetry_image", 0) + 1
            if self.on_record is not None:
                self.on_record(image)
            out.append(image)
        return out

    def _credible_member(self, image: tuple[int, ...], score: float) -> tuple[int, ...] | None:
        """A member of ``image``'s class that reaches :attr:`threshold` — the class's best admitted member
        (:func:`~bnilp.ilp.classbest.best_members_below`) — or None. On a nearly score-equivalent table the image
        DAG can lie a hair below the threshold while another member of its class lies above it, and the
        lex-leader rows keep the search from that class: it was never recorded and the set called complete
        (a review: 9 of 11 classes, two pairs of twins, members 2.5e-12 apart)."""
        if self.member_index is None:
            self.member_index = member_index(self.data)
        scores, rows = best_members_below(self.data, np.array([score]), np.array([image], dtype=np.int32),
                                          self.threshold, self.member_index)
        return tuple(int(k) for k in rows[0]) if scores[0] >= self.threshold else None

    def _record(self, choice: tuple[int, ...]) -> None:
        """Phase 2 with ``NOGOODS = "constraints"``: store the DAG and exclude it (or, with ``classes``, its
        whole MEC) by a global no-good, a linear constraint of the model."""
        below = self._below_threshold(choice)
        if below:
            self._cut_nogood(choice, False, whole_class=below == "class")
            return
        self.recorded.add(choice)
        t0 = time.perf_counter()
        vars_, coefs, lhs, rhs = self._nogood_terms(choice)
        kind = "mec_nogood" if self.classes else "nogood"
        self.model.addCons(_nogood_cons(vars_, coefs, lhs, rhs), name=f"{kind}{len(self.recorded)}",
                           initial=settings.MEC_ROWS_IN_LP if self.classes else settings.NOGOODS_IN_LP,
                           removable=False)
        self._nogood_built(t0, len(vars_))
        self.stats["cuts"][kind] = self.stats["cuts"].get(kind, 0) + 1
        if self.on_record is not None:
            self.on_record(choice)

    def _branch_or_record(self, choice: tuple[int, ...]) -> dict:
        """Phase 2 without no-goods (as SCIP's counting handler): an acyclic integral point whose
        families are all fixed to 1 at this node is the node's only point (the convexity rows fix
        every other family to 0): record it and cut the node off. Otherwise branch on a chosen family
        not yet fixed to 1 — the up child keeps the point, the down child excludes it — so each DAG is
        recorded at exactly one leaf and nothing is added to the LP."""
        tv = self._tv()
        for k in choice:
            if tv[k].getLbLocal() < 0.5:
                self.model.branchVar(tv[k])
                return {"result": SCIP_RESULT.BRANCHED}
        if choice not in self.recorded:
            self.recorded.add(choice)
            self.stats["cuts"]["leaf"] = self.stats["cuts"].get("leaf", 0) + 1
            if self.on_record is not None:
                self.on_record(choice)
        return {"result": SCIP_RESULT.CUTOFF}

    def _enforce(self, vals: np.ndarray, lp: bool, solinfeasible: bool) -> dict:
        t0 = time.perf_counter()
        try:
            chosen, choice = _choice(self.data, vals)
            comps = _cyclic_components(self.data, chosen)
            if comps:
                for cvec in comps:
                    if lp:
                        self._add_cluster_row(cvec, "enfolp")
                    else:
                        self._add_cluster_cons(cvec, "enfops")
                return {"result": SCIP_RESULT.SEPARATED if lp else SCIP_RESULT.CONSADDED}
            if not self.enumerate_mode:
                return {"result": SCIP_RESULT.FEASIBLE}
            if self.restrictions and self._cut_restrictions(vals, lp, 0.5):
                return {"result": SCIP_RESULT.SEPARATED if lp else SCIP_RESULT.CONSADDED}
            if solinfeasible:
                # a handler enforcing before this one found the point infeasible (SCIP goes on calling the
                # others): a pseudo-solution may break a row not in the LP, e.g. a required adjacency. It is
                # no DAG of the credible set, so it is not recorded; SCIP branches or cuts the node off.
                return {"result": SCIP_RESULT.INFEASIBLE}
            if choice is not None and settings.ENUMERATION == "branch" and not self.classes:
                return self._branch_or_record(choice)
            if choice is not None and settings.NOGOODS == "lazy":
                return self._record_lazily(choice, lp)
            if choice is None or choice in self.recorded:
                return {"result": SCIP_RESULT.INFEASIBLE}
            self._record(choice)
            return {"result": SCIP_RESULT.CONSADDED}
        finally:
            self.stats["python_enforce_seconds"] += time.perf_counter() - t0

    def consenfolp(self, constraints, nusefulconss, solinfeasible):
        return self._enforce(self._lp_values(), True, solinfeasible)

    def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
        return self._enforce(self._sol_values(None), False, solinfeasible)

    def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
        if self.enumerate_mode:
            return {"result": SCIP_RESULT.INFEASIBLE}
        chosen, _ = _choice(self.data, self._sol_values(solution))
        if _cyclic_components(self.data, chosen):
            return {"result": SCIP_RESULT.INFEASIBLE}
        return {"result": SCIP_RESULT.FEASIBLE}

    def conssepalp(self, constraints, nusefulconss):
        if self.tick is not None:
            self.tick()
        t0 = time.perf_counter()
        try:
            x = self._lp_values()
            if self.restrictions and self._cut_restrictions(x, True, 1e-6):
                return {"result": SCIP_RESULT.SEPARATED}
            if settings.SKIP_INTEGRAL_SEPA and np.all(np.minimum(x, 1.0 - x) < settings._SUPPORT_TOL):
                # an integral point: enforcement cuts its cycles off (or accepts / records it)
                self.stats["sepa_integral_skips"] = self.stats.get("sepa_integral_skips", 0) + 1
                return {"result": SCIP_RESULT.DIDNOTFIND}
            cuts = sepa_cluster._separate(self.data, x)
            t1 = time.perf_counter()
            self.stats["sepa_heuristic_seconds"] += t1 - t0
            for cvec in cuts:
                self._add_cluster_row(cvec, "sepa")
            mode = self.subip_mode
            if (mode == "always" or mode == "fallback" and not cuts) and self._subip_due():
                left = self.model.getParam("limits/time") - self.model.getSolvingTime()
                sub = sepa_subip.subip_clusters(self.data, x, time_limit=min(settings.SUBIP_TIME_LIMIT, left),
                                                stats=self.stats)
                self.stats["subip_calls"] += 1
                self.stats["subip_seconds"] += time.perf_counter() - t1
                known = {c.tobytes() for c in cuts}
                sub = [c for c in sub if c.tobytes() not in known]
                for cvec in sub:
                    self._add_cluster_row(cvec, "subip")
                cuts = cuts + sub
            if settings.KCLUSTER_MODE == "always" or settings.KCLUSTER_MODE == "fallback" and not cuts:
                cuts = cuts + self._separate_kclusters(x)
            if not cuts and settings.FOURB and self.data.n <= settings.FOURB_MAX_N:
                t2 = time.perf_counter()
                quads = sepa_fourb.fourb_cuts(self.data, x)
                for quad in quads:
                    self._add_row(sepa_fourb.fourb_families(self.data, *quad), None, 2.0, "fourb")
                self.stats["fourb_seconds"] = self.stats.get("fourb_seconds", 0.0) + time.perf_counter() - t2
                cuts = list(quads)
            self.stats["sepa_calls"] += 1
            return {"result": SCIP_RESULT.SEPARATED if cuts else SCIP_RESULT.DIDNOTFIND}
        finally:
            self.stats["python_sepa_seconds"] += time.perf_counter() - t0

    def _separate_kclusters(self, x: np.ndarray) -> list[np.ndarray]:
        """Violated k-cluster cuts, k = 2 … ``KCLUSTER_MAX_K``, added as rows (kind "kcluster")."""
        t0 = time.perf_counter()
        found: list[np.ndarray] = []
        for k in range(2, settings.KCLUSTER_MAX_K + 1):
            for cvec in sepa_cluster.kcluster_cuts(self.data, x, k, settings.KCLUSTER_MAX_CUTS):
                self._add_cluster_row(cvec, "kcluster", k)
                found.append(cvec)
        self.stats["kcluster_seconds"] = self.stats.get("kcluster_seconds", 0.0) + time.perf_counter() - t0
        return found

    def _subip_due(self) -> bool:
        """The sub-IP runs at depths 0, k, 2k, … (k = ``SUBIP_DEPTH_FREQ``)."""
        freq = settings.SUBIP_DEPTH_FREQ
        return freq > 0 and self.model.getDepth() % freq == 0

    def conslock(self, constraint, locktype, nlockspos, nlocksneg):
        vars_ = self.xvars if constraint is None or constraint.isOriginal() else self._tv()
        both = nlockspos + nlocksneg
        for v in vars_:
            self.model.addVarLocksType(v, locktype, both, both)


def _nogood_cons(vars_: list, coefs: list[float], lhs: float | None, rhs: float | None):
    """The no-good Σ coefs·vars_ ≥ lhs (a class's row) or ≤ rhs (a DAG's) as a linear constraint expression."""
    expr = quicksum(c * v for v, c in zip(vars_, coefs, strict=True))
    return expr >= lhs if lhs is not None else expr <= rhs


def _cluster_expr(vars_: list, fams: np.ndarray, lhs: float | None, rhs: float | None):
    expr = quicksum(vars_[k] for k in fams)
    return expr >= lhs if lhs is not None else expr <= rhs
