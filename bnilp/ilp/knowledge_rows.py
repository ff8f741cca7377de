"""Background knowledge in the ILP (:mod:`bnilp.knowledge`): what the family filter cannot say.

Arrows (required, forbidden, tiers, forbidden adjacencies) never reach the model: the pipeline
keeps only the families that agree with them (:func:`bnilp.knowledge.restrict_table`), so a
required arrow a → b is "every family of b contains a" and a forbidden one "no family of b does".
What is left is written here, over the family variables x(v, Π), from :func:`add_knowledge`:

- a required adjacency a — b is one row  Σ_{Π∋a} x(b, Π) + Σ_{Π∋b} x(a, Π) ≥ 1  (the 2-cluster row
  makes the left side ≤ 1, so it is the arrow a → b or b → a);
- ancestor relations and conditional independences and dependences go through a constraint handler,
  :class:`_Ancestry`, enforced on integral points (the independences' and dependences' rows also separated
  at LP points, below), as the acyclicity handler enforces cycles
  (a formulation with ancestor indicator variables and transitivity rows, as GOBNILP-style models
  use, would also tighten the LP; the lazy form is exact, needs no new variables and leaves the
  other plugins untouched). For the
  integral parent choice with arrow graph A (cyclic or not):

  * forbid a ~> b, and A has a path a = v₀ → v₁ → … → v_m = b: every DAG with all m arrows has
    a ~> b, so  Σ_{i<m} Σ_{Π∋v_i} x(v_{i+1}, Π) ≤ m − 1  is valid and cuts A off;
  * require a ~> b, and b ∉ D = {a} ∪ reach_A(a): a path from a to b in a DAG must leave D by an
    arrow u → w with u ∈ D, w ∉ D, so  Σ_{w∉D} Σ_{Π∩D≠∅} x(w, Π) ≥ 1  is valid; A has no such arrow
    (D is closed under A's arrows), so it is cut off;
  * independent a, b | Z, and Z does not d-separate a and b in A: with E the arrows of one active
    trail and of its colliders' directed paths into Z (:func:`bnilp.graphs.d_connecting_arcs`), every
    DAG that holds all of E d-connects a and b given Z, so  Σ_{u→w ∈ E} Σ_{Π∋u} x(w, Π) ≤ |E| − 1
    is valid and cuts A off (a shortest trail: fewer arrows, a stronger row). A conditional independence
    holds in every subgraph of a DAG that satisfies it, and for a whole Markov equivalence class or for
    none, so the rest of the pipeline (pruning, classes) needs nothing more for it.
  * dependent a, b | Z, and Z d-separates a and b in A: let W = An_A({a, b} ∪ Z) (the nodes with a directed
    path in A into a, b or Z, those included), M the moral graph of A on W (A's arrows there undirected, and
    the parents of each node joined), R the nodes M − Z connects to a, and R̄ = W − R − Z (b is there: Z
    separates a and b in M exactly when it d-separates them — Lauritzen, Dawid, Larsen & Leimer 1990 for DAGs,
    Spirtes 1995 for directed graphs with cycles, as A may be; checked against Bayes-ball on random graphs).
    Every DAG G in which each v ∈ W takes parents inside W — from R ∪ Z for v ∈ R, from R̄ ∪ Z for v ∈ R̄, and
    for v ∈ Z not from both R and R̄ — also has Z separating a and b: its ancestral set of {a, b} ∪ Z stays in
    W, and its moral graph there has no edge between R and R̄ (no arrow between them, and no node with parents
    on both sides), so every path from a to b meets Z. So with B(v) the families of v that break this,
    Σ_{v∈W} Σ_{Π∈B(v)} x(v, Π) ≥ 1  is valid for every DAG that satisfies the dependence, and A puts 0 on it
    (R is a connected part of A's own moral graph; :func:`dependence_row`). It is at least as strong as
    the no-good over A's choices on W,  Σ_{v∈W} Σ_{Π⊆Pa_A(v)} x(v, Π) ≤ |W| − 1: a DAG with Pa_G(v) ⊆
    Pa_A(v) on W keeps A's sides. A dependence holds for a whole class or for none as an independence does, but
    in supergraphs rather than subgraphs: pruning is off for it (``bnilp.parentsets._knowledge_plan``). Up
    front, each of a and b must meet an arrow (:func:`touch_rows`: an isolated variable is d-separated from
    every other, given anything).

  The independences' and dependences' rows are
  also separated at fractional LP points (:meth:`_Ancestry.conssepalp`, ``settings.ANCESTRY_SEPAFREQ``):
  the same search over the families with x > ½ (at most one per child), a row added where the LP
  point violates it; every row holds for every DAG, so this only tightens the LP.

  Trails of two arrows are written into the model up front (:func:`short_trail_rows`, ``settings.
  INDEPENDENCE_SHORT_TRAILS``): for c ∉ Z ∪ {a, b} a trail a — c — b is active unless c is a collider,
  so in a DAG that satisfies the independence c is adjacent to at most one of a, b, or a → c ← b; that is

      Σ_{Π∩{a,b}≠∅} x(c, Π) + Σ_{Π∋c} x(a, Π) + Σ_{Π∋c} x(b, Π) ≤ 1

  (c's own parent set counts once whether it holds a, b or both: the collider is allowed, every other way
  of meeting both — a fork, a chain either way — makes 2); and for c ∈ Z the collider a → c ← b is the
  active trail, so the families of c holding both a and b are fixed to 0. The LP then sees the short
  trails the data want most (a common parent, a chain), which the lazy rows met one at a time.

  Finitely many such rows exist, so enforcement ends; the handler enforces before the acyclicity
  handler (:data:`ANCESTRY_ENFOPRIORITY` > ``ACYCLIC_ENFOPRIORITY``), so phase 2 records only DAGs
  that satisfy the knowledge (the acyclicity handler records a point only when no higher-priority
  handler found it infeasible: SCIP calls it after one did, with ``solinfeasible`` set).
"""

from __future__ import annotations

import numpy as np
from pyscipopt import SCIP_RESULT, Conshdlr, quicksum

from bnilp.graphs import d_connecting_arcs
from bnilp.ilp import settings
from bnilp.ilp.cons_acyclic import add_lp_cut
from bnilp.ilp.families import _Data
from bnilp.ilp.settings import _INT_TOL, ANCESTRY_CHECKPRIORITY, ANCESTRY_ENFOPRIORITY


def _index_pairs(data: _Data, pairs) -> list[tuple[int, int]]:
    index = {v: i for i, v in enumerate(data.names)}
    return [(index[a], index[b]) for a, b in pairs]


def needs_rows(data: _Data) -> bool:
    """Whether ``data.knowledge`` says anything the family table does not (so that a DAG of the table
    may still break it): required adjacencies, required or forbidden ancestors, conditional independences and
    dependences."""
    k = getattr(data, "knowledge", None)
    return k is not None and bool(k.required_adjacent or k.required_ancestors or k.forbidden_ancestors
                                  or k.independent or k.dependent)


def touch_rows(data: _Data, variables) -> list[np.ndarray]:
    """For each variable v of ``variables`` (the two sides of the dependences), the families that give v an
    arrow: v's own with a parent, and every other child's holding v — at least one is chosen, Σ x ≥ 1, in every
    DAG that satisfies a dependence of v (module doc)."""
    return [np.flatnonzero(((data.child == v) & data.pbool.any(axis=1)) | ((data.child != v) & data.pbool[:, v]))
            for v in sorted(set(variables))]


def _ancestral(parents: dict[int, list[int]], start) -> set[int]:
    """The nodes of ``parents`` (child → parent indices) with a directed path into ``start``, those included."""
    seen = set(start)
    stack = list(seen)
    while stack:
        for p in parents.get(stack.pop(), ()):
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


def dependence_row(data: _Data, parents: dict[int, list[int]], a: int, b: int, given: list[int]) -> list[int]:
    """The families of the row Σ x ≥ 1 that cuts off the parent choice ``parents`` (child → parent indices), in
    which ``given`` d-separates a and b, and holds for every DAG in which it does not (module doc): for each
    v ∈ W = An({a, b} ∪ Z), v's families that take a parent outside W, or join a's side R of the moral graph to
    the other side R̄ (a parent from the other side; for v ∈ Z, parents from both)."""
    z = set(given)
    w = _ancestral(parents, (a, b, *given))
    moral: dict[int, set[int]] = {v: set() for v in w}
    for v in w:
        ps = list(parents.get(v, ()))
        for i, p in enumerate(ps):
            moral[v].add(p)
            moral[p].add(v)
            for q in ps[i + 1:]:
                moral[p].add(q)
                moral[q].add(p)
    side = {a}
    stack = [a]
    while stack:
        for u in moral[stack.pop()]:
            if u not in side and u not in z:
                side.add(u)
                stack.append(u)
    if b in side:
        raise AssertionError("the moral graph joins a pair that Bayes-ball d-separates")
    masks = {name: np.zeros(data.n, dtype=bool) for name in ("inside", "mine", "other", "given")}
    for name, nodes in (("inside", w), ("mine", side), ("other", w - side - z), ("given", z)):
        masks[name][list(nodes)] = True
    rows: list[int] = []
    for v in sorted(w):
        lo, hi = int(data.start[v]), int(data.start[v + 1])
        pb = data.pbool[lo:hi]
        if v in z:          # Z's parents inside W, from one side at most
            bad = (pb & ~masks["inside"]).any(axis=1) | ((pb & masks["mine"]).any(axis=1)
                                                         & (pb & masks["other"]).any(axis=1))
        else:               # a side's parents from that side or Z
            bad = (pb & ~(masks["mine" if v in side else "other"] | masks["given"])).any(axis=1)
        rows += (lo + np.flatnonzero(bad)).tolist()
    return rows


def short_trail_rows(data: _Data, a: int, b: int, given: list[int]) -> tuple[list[np.ndarray], np.ndarray]:
    """The independence a ⟂ b | ``given``'s trails of two arrows (module doc): one row Σ x ≤ 1 over the
    families returned for each c ∉ given ∪ {a, b} that can meet both (rows that no two families can break are
    left out), and the families of each c ∈ given that hold both a and b, which no DAG satisfying it uses.
    Returns (rows, families to fix at 0), family indices of ``data``."""
    given_set = set(given)
    rows, fixed = [], []
    has_a, has_b = data.pbool[:, a], data.pbool[:, b]
    for c in range(data.n):
        if c in (a, b):
            continue
        own = data.child == c
        if c in given_set:
            fixed.append(np.flatnonzero(own & has_a & has_b))
            continue
        groups = [np.flatnonzero(own & (has_a | has_b)), np.flatnonzero((data.child == a) & data.pbool[:, c]),
                  np.flatnonzero((data.child == b) & data.pbool[:, c])]
        if sum(g.size > 0 for g in groups) >= 2:
            rows.append(np.concatenate(groups))
    return rows, np.concatenate(fixed) if fixed else np.zeros(0, dtype=np.intp)


def add_knowledge(model, xvars: list, data: _Data, stats: dict | None = None) -> None:
    """Rows for required adjacencies, the independences' trails of two arrows, the dependences' arrows at a and
    b and the ancestry handler, when ``data.knowledge`` needs them; the handler counts its rows in
    ``stats["cuts"]`` (``ancestry``, ``independence``, ``independence_sepa``, ``dependence``,
    ``dependence_sepa``), the model's short-trail rows and distinct fixed families are
    ``stats["independence_rows"]`` and ``stats["independence_fixed"]``, the dependences' rows written up front
    ``stats["dependence_rows"]``."""
    if not needs_rows(data):
        return
    k = data.knowledge
    for a, b in _index_pairs(data, k.required_adjacent):
        fams = [kk for kk in range(data.K) if (data.child[kk] == b and data.pbool[kk, a])
                or (data.child[kk] == a and data.pbool[kk, b])]
        model.addCons(quicksum(xvars[kk] for kk in fams) >= 1, name=f"adjacent_{a}_{b}")
    index = {v: i for i, v in enumerate(data.names)}
    apart = [(index[a], index[b], [index[v] for v in z]) for a, b, z in k.independent]
    if settings.INDEPENDENCE_SHORT_TRAILS:
        written, fixed_all = 0, set()
        for a, b, z in apart:
            rows, fixed = short_trail_rows(data, a, b, z)
            for r, fams in enumerate(rows):
                model.addCons(quicksum(xvars[kk] for kk in fams.tolist()) <= 1, name=f"trail2_{a}_{b}_{r}")
            for kk in fixed.tolist():
                model.chgVarUb(xvars[kk], 0.0)
            written += len(rows)
            fixed_all.update(fixed.tolist())
        if stats is not None:       # the model's own rows, as set_packing_rows (not cuts the search added)
            stats["independence_rows"], stats["independence_fixed"] = written, len(fixed_all)
    joined = [(index[a], index[b], [index[v] for v in z]) for a, b, z in k.dependent]
    if joined:
        touching = touch_rows(data, [v for a, b, _ in joined for v in (a, b)])
        for r, fams in enumerate(touching):
            model.addCons(quicksum(xvars[kk] for kk in fams.tolist()) >= 1, name=f"touch_{r}")
        if stats is not None:
            stats["dependence_rows"] = len(touching)
    if k.required_ancestors or k.forbidden_ancestors or k.independent or k.dependent:
        hdlr = _Ancestry(data, xvars, _index_pairs(data, k.required_ancestors),
                         _index_pairs(data, k.forbidden_ancestors), apart, stats, joined)
        # ancestor relations' rows stay lazy
        separated = settings.ANCESTRY_SEPAFREQ if k.independent or k.dependent else 0
        model.includeConshdlr(hdlr, "ancestry", "ancestor relations, conditional independences and dependences",
                              sepapriority=settings.ANCESTRY_SEPAPRIORITY, enfopriority=ANCESTRY_ENFOPRIORITY,
                              chckpriority=ANCESTRY_CHECKPRIORITY, sepafreq=separated or -1,
                              propfreq=-1, eagerfreq=-1, maxprerounds=0, needscons=True)
        cons = model.createCons(hdlr, "ancestry", initial=False, separate=bool(separated),
                                enforce=True, check=True,
                                propagate=False, local=False, modifiable=False, dynamic=False,
                                removable=False, stickingatnode=False)
        model.addPyCons(cons)


class _Ancestry(Conshdlr):
    """Required (``need``) and forbidden (``ban``) ancestor relations, as index pairs (a, b): a ~> b, and
    conditional independences (``apart``) and dependences (``joined``), as (a, b, given indices)."""

    def __init__(self, data: _Data, xvars: list, need: list[tuple[int, int]], ban: list[tuple[int, int]],
                 apart: list[tuple[int, int, list[int]]] = (), stats: dict | None = None,
                 joined: list[tuple[int, int, list[int]]] = ()):
        self.data, self.xvars, self.need, self.ban, self.apart = data, xvars, need, ban, list(apart)
        self.joined = list(joined)
        self.stats = {"cuts": {}} if stats is None else stats
        self.tvars: list | None = None
        self.cuts = 0

    def _tv(self) -> list:
        if self.tvars is None:
            self.tvars = [self.model.getTransformedVar(v) for v in self.xvars]
        return self.tvars

    def _values(self, sol) -> np.ndarray:
        get = self.model.getSolVal
        return np.fromiter((get(sol, v) for v in self._tv()), dtype=float, count=self.data.K)

    def _cuts(self, vals: np.ndarray, above: float = _INT_TOL,
              ancestry: bool = True) -> list[tuple[list[int], float | None, float | None, str]]:
        """Violated rows (families, lhs, rhs, kind) of the parent choice read from ``vals`` — the families with
        a value above ``above`` (module doc); at an LP point ``above`` = ½ reads at most one family per child,
        and every row stays valid (each holds for every DAG), but the point need not violate it. ``ancestry``:
        the ancestor relations' rows too (else the independences' and dependences' alone)."""
        d = self.data
        chosen = np.flatnonzero(vals > above)
        children: list[list[int]] = [[] for _ in range(d.n)]
        parents: dict[int, list[int]] = {v: [] for v in range(d.n)}
        for k in chosen:
            for p in np.flatnonzero(d.pbool[k]):
                children[int(p)].append(int(d.child[k]))
                parents[int(d.child[k])].append(int(p))
        out = []
        for a, b, z in self.apart:
            arcs = d_connecting_arcs(parents, a, b, z)
            if arcs is not None:
                fams = [k for u, w in arcs for k in range(d.start[w], d.start[w + 1]) if d.pbool[k, u]]
                out.append((fams, None, float(len(arcs) - 1), "independence"))
        for a, b, z in self.joined:
            if d_connecting_arcs(parents, a, b, z) is None:
                out.append((dependence_row(d, parents, a, b, z), 1.0, None, "dependence"))
        for a, b in (self.ban + self.need) if ancestry else ():
            prev = {a: -1}
            stack = [a]
            while stack:
                u = stack.pop()
                for w in children[u]:
                    if w not in prev:
                        prev[w] = u
                        stack.append(w)
            if (a, b) in self.ban and b in prev:
                path = [b]
                while path[-1] != a:
                    path.append(prev[path[-1]])
                path.reverse()
                fams = [k for u, w in zip(path, path[1:], strict=False)
                        for k in range(d.start[w], d.start[w + 1]) if d.pbool[k, u]]
                out.append((fams, None, float(len(path) - 2), "ancestry"))
            elif (a, b) in self.need and b not in prev:
                inside = np.zeros(d.n, dtype=bool)
                inside[list(prev)] = True
                fams = np.flatnonzero(~inside[d.child] & d.pbool[:, inside].any(axis=1)).tolist()
                out.append((fams, 1.0, None, "ancestry"))
        return out

    def _enforce(self, vals: np.ndarray) -> dict:
        cuts = self._cuts(vals)
        if not cuts:
            return {"result": SCIP_RESULT.FEASIBLE}
        tv = self._tv()
        for fams, lhs, rhs, kind in cuts:
            expr = quicksum(tv[k] for k in fams)
            self.model.addCons(expr >= lhs if lhs is not None else expr <= rhs, name=self._counted(kind),
                               removable=False)
        return {"result": SCIP_RESULT.CONSADDED}

    def _counted(self, kind: str) -> str:
        """Count one row of ``kind`` (``stats["cuts"]``, ``cuts_total``) and name it."""
        self.cuts += 1
        self.stats["cuts"][kind] = self.stats["cuts"].get(kind, 0) + 1
        self.stats["cuts_total"] = self.stats.get("cuts_total", 0) + 1
        return f"{kind}{self.cuts}"

    def _lp_values(self) -> np.ndarray:
        return np.fromiter((v.getLPSol() for v in self._tv()), dtype=float, count=self.data.K)

    def conssepalp(self, constraints, nusefulconss):
        """The independences' and dependences' rows violated by the LP point, read off the families with x > ½
        (module doc); a family listed twice in a row has coefficient 2."""
        vals = self._lp_values()
        found = False
        tv = self._tv()
        for fams, lhs, rhs, kind in self._cuts(vals, 0.5, ancestry=False):
            activity = float(vals[fams].sum())
            if (rhs is not None and activity > rhs + 1e-6) or (lhs is not None and activity < lhs - 1e-6):
                add_lp_cut(self.model, self._counted(f"{kind}_sepa"), [tv[k] for k in fams], None, lhs, rhs,
                           force=False, pool=True)
                found = True
        return {"result": SCIP_RESULT.SEPARATED if found else SCIP_RESULT.DIDNOTFIND}

    def consenfolp(self, constraints, nusefulconss, solinfeasible):
        return self._enforce(self._lp_values())

    def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
        return self._enforce(self._values(None))

    def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
        bad = self._cuts(self._values(solution))
        return {"result": SCIP_RESULT.INFEASIBLE if bad else SCIP_RESULT.FEASIBLE}

    def conslock(self, constraint, locktype, nlockspos, nlocksneg):
        vars_ = self.xvars if constraint is None or constraint.isOriginal() else self._tv()
        both = nlockspos + nlocksneg
        for v in vars_:
            self.model.addVarLocksType(v, locktype, both, both)
