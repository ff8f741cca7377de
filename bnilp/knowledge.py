"""Background knowledge: required and forbidden arrows, adjacencies, ancestor relations, tiers and
conditional independences and dependences.

A :class:`Knowledge` restricts the DAGs the whole pipeline considers. With K the knowledge and
D(K) the DAGs that satisfy it, bnilp computes OPT_K = max_{G ∈ D(K)} s(G), the credible set
{G ∈ D(K): s(G) ≥ OPT_K − ε}, the class of a DAG G as {H ∈ D(K): H Markov equivalent to G}
(Meek 1995, "Causal inference and causal explanation with background knowledge") and the
posteriors over that set. Statements (each a constraint on a DAG G):

===============  =====================  ==============================================
file statement   field                  G satisfies it iff
===============  =====================  ==============================================
require a -> b   ``required``           a ∈ Pa_G(b)
forbid a -> b    ``forbidden``          a ∉ Pa_G(b)
require a -- b   ``required_adjacent``  a ∈ Pa_G(b) or b ∈ Pa_G(a)
forbid a -- b    ``forbidden_adjacent`` neither
require a ~> b   ``required_ancestors`` a directed path a → … → b exists
forbid a ~> b    ``forbidden_ancestors`` no directed path a → … → b
tier a, b, …     ``tiers``              no arrow from a later tier into an earlier one
tier! a, b, …    ``tiers`` + strict     … and no arrow between two variables of this tier
independent      ``independent``        Z d-separates a and b in G (Pearl 1988): every
a, b | Z                                trail between them is blocked given Z (Z: names
                                        separated by commas, or none: ``independent a, b``)
dependent        ``dependent``          Z does not d-separate a and b in G: some trail
a, b | Z                                between them is active given Z
===============  =====================  ==============================================

Tiers are listed in order (the first ``tier`` line is tier 1); a variable in no tier is
unconstrained by them. The file is plain text, one statement a line, ``#`` starts a comment.

Implied statements (:meth:`Knowledge.forbidden_arrows`): a forbidden adjacency forbids both arrows,
tiers forbid the backward (and, strict, the within-tier) arrows, ``forbid a ~> b`` forbids a → b
(an arrow is a path), ``require a ~> b`` forbids b → a (it would close a cycle) and ``independent a, b | Z``
forbids a → b and b → a (an arrow is an active trail whatever Z is). These are consequences, so filtering by
them loses no DAG of D(K).

A conditional independence holds for every DAG of a Markov equivalence class or for none (equivalent DAGs
have the same d-separations: Verma & Pearl 1990), so it removes whole classes and never changes a class's
members; and it holds in every subgraph of a DAG that satisfies it (an active trail of the subgraph is one of
the DAG: its arrows, colliders and the colliders' paths into Z are there), so pruning's swap of a parent set
for a subset keeps it — like the forbidding statements, it needs no scoring under it.

A conditional *dependence* (a and b d-connected given Z) likewise holds for a whole class or for none, but
it is the opposite of closed under subgraphs: it holds in every *supergraph* of a DAG that satisfies it (an
active trail keeps its colliders and non-colliders when arrows are added, and a collider only gains
descendants), so pruning's swap of a parent set for a subset may break it. Like a required ancestor
relation, it is scored with no pruning rule for any child (``bnilp.parentsets._knowledge_plan``), and the
search enforces it with rows over the families of the ancestral set of {a, b} ∪ Z
(:mod:`bnilp.ilp.knowledge_rows`).

Contradictions found by :meth:`Knowledge.validated` (one-line :class:`InputError`, naming the
statement's file and line): unknown variables, a self-loop, an independence of a variable from itself or
given itself (a dependence likewise), an independence every DAG with the required arrows (and, nothing
given, ancestor relations) breaks, a statement both independent and dependent, a dependence of a variable
every arrow at which is forbidden (it is isolated, so independent of everything) or, given nothing, of two
variables no variable can be an ancestor of, a variable in two tiers, an arrow both
required and (directly or by implication) forbidden, a required adjacency whose both arrows are
forbidden, a relation both required and forbidden, a required arrow or ancestor relation
against the tier order, and a cycle among required arrows and required ancestor relations.
Anything subtler that leaves D(K) empty is reported by the search ("no DAG satisfies the
background knowledge").
"""

from __future__ import annotations

import numbers
import os
import re
import unicodedata
from collections.abc import ItemsView, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from bnilp.errors import InputError, check_path, not_utf8
from bnilp.graphs import d_connecting_arcs, d_separated
from bnilp.inputs import read_input_text

Edge = tuple[str, str]
Parents = Mapping[str, Iterable[str]]
#: a conditional independence a ⟂ b | Z (or dependence, the ``dependent`` field): (a, b, Z)
Independence = tuple[str, str, tuple[str, ...]]
#: the fields of statements over two variables and a set given: file keyword (= field name) → what it says
SEPARATION_FIELDS = ("independent", "dependent")

#: (file keyword, operator) → Knowledge field
STATEMENTS: dict[tuple[str, str], str] = {
    ("require", "->"): "required",
    ("forbid", "->"): "forbidden",
    ("require", "--"): "required_adjacent",
    ("forbid", "--"): "forbidden_adjacent",
    ("require", "~>"): "required_ancestors",
    ("forbid", "~>"): "forbidden_ancestors",
}
_PAIR_FIELDS = tuple(STATEMENTS.values())
_OPERATOR = {f: op for (_, op), f in STATEMENTS.items()}
_KEYWORD = {f: kw for (kw, _), f in STATEMENTS.items()}
_PAIR_RE = re.compile(r"^(.+?)\s*(->|--|~>)\s*(.+)$")


def _statements_of(items: Any, what: str, kind: str) -> Iterable[Any]:
    """A field's statements: one string alone is one statement (its letters are none), None is none, and a value
    that is no list is an :class:`InputError` naming the field (``what``) and what it holds (``kind``)."""
    if isinstance(items, str):
        return [items]
    if items is not None and not isinstance(items, Iterable):
        raise InputError(f"knowledge: {what} must be a list of {kind}, got {type(items).__name__}")
    return () if items is None else items       # not ``items or ()``: a pandas Series has no truth value


def _pairs(items: Iterable[Sequence[str]] | str | None, what: str) -> tuple[Edge, ...]:
    """A field's pairs: a list of ``(a, b)`` or ``'a -> b'`` strings (one string alone is one statement: its
    letters are no pairs); anything else is an :class:`InputError` naming the field."""
    out = []
    for it in _statements_of(items, what, "pairs"):
        if isinstance(it, str):
            m = _PAIR_RE.match(it.strip())
            if not m:
                raise InputError(f"knowledge: {what}: expected 'a {_OPERATOR[what]} b', got {it!r}")
            if m.group(2) != _OPERATOR[what]:       # 'a ~> b' given as a required arrow: another statement
                raise InputError(f"knowledge: {what}: {it!r} uses '{m.group(2)}'; a {what} pair is written "
                                 f"'a {_OPERATOR[what]} b'")
            it = (m.group(1).strip(), m.group(3).strip())
        if not isinstance(it, Sequence) or len(it) != 2:
            raise InputError(f"knowledge: {what}: a pair is two names, got {it!r}")
        a, b = it
        out.append((str(a), str(b)))
    return tuple(dict.fromkeys(out))


def independence_text(a: str, b: str, given: Sequence[str], word: str = "independent") -> str:
    """An independence as a knowledge file writes it: ``independent a, b | c, d`` (``independent a, b``); a
    dependence with ``word`` ``"dependent"``."""
    return f"{word} {a}, {b}" + (f" | {', '.join(given)}" if given else "")


def _parse_independence(text: str) -> Independence | None:
    """``'a, b | c, d'`` (or ``'a, b'``) as (a, b, (c, d)); None when it is not of that form."""
    left, bar, right = text.partition("|")
    pair = [v.strip() for v in left.split(",")]
    given = [v.strip() for v in right.split(",")] if bar else []
    if len(pair) != 2 or not all(pair) or (bar and not all(given)) or "|" in right:
        return None
    return pair[0], pair[1], tuple(given)


def separation_key(a: str, b: str, given: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    """What an independence or dependence states, whatever the order of a and b and of the given names."""
    return frozenset((a, b)), frozenset(given)


def _independences(items: Iterable[Any] | str | None, what: str = "independent") -> tuple[Independence, ...]:
    """The ``independent`` (or ``dependent``: ``what``) field: a list of ``'a, b | c, d'`` strings or of ``(a, b)``
    / ``(a, b, [c, d])`` sequences (one string alone is one statement); anything else is an :class:`InputError`."""
    out = []
    for it in _statements_of(items, what, "statements"):
        if isinstance(it, str):
            parsed = _parse_independence(it)
            if parsed is None:
                raise InputError(f"knowledge: {what}: expected 'a, b | c, d' (or 'a, b': given nothing), "
                                 f"got {it!r}")
            it = parsed
        if isinstance(it, Sequence) and len(it) == 2:
            it = (*it, ())
        if not isinstance(it, Sequence) or len(it) != 3:
            raise InputError(f"knowledge: {what}: a statement is (a, b) or (a, b, [given names]), got {it!r}")
        a, b, given = it
        if isinstance(given, str):
            given = [v.strip() for v in given.split(",")] if given.strip() else []
            if not all(given):
                raise InputError(f"knowledge: {what}: an empty name among the given names of {it!r}")
        if not isinstance(given, Iterable):
            raise InputError(f"knowledge: {what}: the given names of {it!r} are not a list")
        given = [str(v) for v in given]
        twice = next((v for i, v in enumerate(given) if v in given[:i]), None)
        if twice is not None:       # a slip, as a name twice in a tier (a review: deduplicated silently)
            raise InputError(f"knowledge: {what}: {twice!r} is given twice in {it!r}")
        out.append((str(a), str(b), tuple(given)))
    once = {}                   # a, b | Z and b, a | Z (given in any order) are one statement: the first kept
    for a, b, z in out:
        once.setdefault(separation_key(a, b, z), (a, b, z))
    return tuple(once.values())


def _tier_numbers(values: object) -> bool:
    """Whether ``values`` is None or a collection of whole numbers (Python's or NumPy's, not ``bool``; a string is
    no list of numbers: "12" is not tiers 1 and 2)."""
    return values is None or (not isinstance(values, str) and isinstance(values, Iterable)
            and all(isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in values))


@dataclass(frozen=True)
class Knowledge:
    """Background knowledge over variable names (see the module doc for the meaning of each field).

    ``tiers``: a list of lists of names, earliest first; ``strict_tiers``: indices (from 0; a dict of the fields,
    :meth:`to_dict`'s form, numbers them from 1) of tiers with no arrows inside (``tier!`` in a file, ``!``
    before a tier in ``--tiers``). ``independent`` and ``dependent``: (a, b, given names) triples, or
    ``'a, b | c, d'`` strings.
    ``where`` maps a statement key ``(field, a, b)`` or ``("tier", name)`` to
    where it was written (``file:line``) for error messages; it does not take part in equality.

    Two knowledges are equal when they state the same: the order of the statements, a statement repeated and the
    order of the names in a tier do not count (they decide only which statement a message names first); the
    order of the tiers does.
    """

    required: tuple[Edge, ...] = ()
    forbidden: tuple[Edge, ...] = ()
    required_adjacent: tuple[Edge, ...] = ()
    forbidden_adjacent: tuple[Edge, ...] = ()
    required_ancestors: tuple[Edge, ...] = ()
    forbidden_ancestors: tuple[Edge, ...] = ()
    tiers: tuple[tuple[str, ...], ...] = ()
    strict_tiers: frozenset[int] = frozenset()
    independent: tuple[Independence, ...] = ()
    dependent: tuple[Independence, ...] = ()
    where: dict[tuple[str, ...], str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.where, Mapping):      # read as statement keys → their places (a bare int: TypeError)
            raise InputError(f"knowledge: where maps statements to where they were written (a dict), got "
                             f"{self.where!r}")
        for f in _PAIR_FIELDS:
            object.__setattr__(self, f, _pairs(getattr(self, f), f))
        for f in SEPARATION_FIELDS:
            object.__setattr__(self, f, _independences(getattr(self, f), f))
        given = () if self.tiers is None else self.tiers    # False or 0 is no list of tiers (it read as none)
        if isinstance(given, Iterable) and not isinstance(given, str):
            given = list(given)                 # once: a generator checked and then read was empty (a review)
        if not isinstance(given, list) or not all(isinstance(t, Iterable) and not isinstance(t, str) for t in given):
            # a string would be a tier of its characters
            raise InputError(f"knowledge: tiers is a list of lists of names, got {self.tiers!r}")
        if not _tier_numbers(self.strict_tiers):
            raise InputError(f"knowledge: strict_tiers is a set of tier indices (integers), got {self.strict_tiers!r}")
        tiers = tuple(tuple(str(v) for v in t) for t in given)
        # as a knowledge file and --tiers refuse them (a review: the API recorded a statement 'tier ' and took a
        # strict tier of no tiers as nothing)
        empty = next((k for k, t in enumerate(tiers) if not t), None)
        if empty is not None:
            raise InputError(f"knowledge: tier {empty + 1} of tiers is empty")
        object.__setattr__(self, "tiers", tiers)
        strict = () if self.strict_tiers is None else self.strict_tiers
        object.__setattr__(self, "strict_tiers", frozenset(int(i) for i in strict))
        for i in sorted(self.strict_tiers):     # here, not in validated: knowledge of strict tiers alone is empty()
            if not 0 <= i < len(tiers):
                raise InputError(f"knowledge: strict tier {i + 1} does not exist ({len(tiers)} tiers; "
                                 f"Knowledge(strict_tiers=...) counts tiers from 0 — index {i} here —, a dict from "
                                 "1, as Knowledge.to_dict writes them)")

    def _content(self) -> tuple:
        return (tuple(frozenset(getattr(self, f)) for f in _PAIR_FIELDS),
                tuple(frozenset(t) for t in self.tiers), self.strict_tiers,
                *(frozenset(separation_key(*t) for t in getattr(self, f))
                  for f in SEPARATION_FIELDS))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Knowledge):
            return NotImplemented
        return self._content() == other._content()

    def __hash__(self) -> int:
        return hash(self._content())

    # ---- derived relations ------------------------------------------------------------------
    def empty(self) -> bool:
        """No statement and no tier: the knowledge constrains nothing."""
        return not (any(getattr(self, f) for f in (*_PAIR_FIELDS, *SEPARATION_FIELDS)) or self.tiers)

    def _src(self, key: tuple[str, ...]) -> str:
        return self.where.get(key, "knowledge")

    def tier_of(self) -> dict[str, int]:
        """Each tiered variable → its tier's index (0 = earliest); untiered variables are absent."""
        return {v: i for i, t in enumerate(self.tiers) for v in t}

    def forbidden_arrows(self) -> Mapping[Edge, str]:
        """Every arrow a → b that no DAG of D(K) has, with the reason (statement and its place): a read-only
        :class:`ForbiddenArrows`, made once per Knowledge (it is immutable; :meth:`allows` asks it for every DAG
        of a class), the tiers' arrows decided on demand — a caller that cleared the dict it was once given made
        the same Knowledge allow the arrows it forbids in every later solve."""
        cached = self.__dict__.get("_forbidden_arrows")
        if cached is None:
            cached = self._derive_forbidden_arrows()
            object.__setattr__(self, "_forbidden_arrows", cached)
        return cached

    def _derive_forbidden_arrows(self) -> ForbiddenArrows:
        out: dict[Edge, str] = {}
        for a, b in self.forbidden:
            out.setdefault((a, b), f"forbid {a} -> {b} ({self._src(('forbidden', a, b))})")
        for a, b in self.forbidden_adjacent:
            src = self._src(("forbidden_adjacent", a, b))
            out.setdefault((a, b), f"forbid {a} -- {b} ({src})")
            out.setdefault((b, a), f"forbid {a} -- {b} ({src})")
        for a, b in self.forbidden_ancestors:
            out.setdefault((a, b), f"forbid {a} ~> {b} ({self._src(('forbidden_ancestors', a, b))})")
        for a, b in self.required_ancestors:
            out.setdefault((b, a), f"require {a} ~> {b} ({self._src(('required_ancestors', a, b))})")
        for a, b, z in self.independent:
            why = f"{independence_text(a, b, z)} ({self._src(('independent', a, b, *z))})"
            out.setdefault((a, b), why)
            out.setdefault((b, a), why)
        tier = self.tier_of()
        # each tier's place once, and of --tiers the flag alone: every arrow a tier forbids carries it, and n²/2
        # reasons quoting the whole --tiers value grew as n³ (9.2 GB at 1,000 variables in 10 tiers; a review)
        place = {v: "--tiers" if self._src(("tier", v)).startswith("--tiers ") else self._src(("tier", v))
                 for v in tier}
        return ForbiddenArrows(out, tier, self.strict_tiers, place)

    def required_parents(self) -> dict[str, frozenset[str]]:
        """R_v: the parents every DAG of D(K) gives v (from the required arrows)."""
        out: dict[str, set[str]] = {}
        for a, b in self.required:
            out.setdefault(b, set()).add(a)
        return {v: frozenset(p) for v, p in out.items()}

    def family_ok(self, child: str, parents: Iterable[str], forbidden: Mapping[Edge, str] | None = None,
                  required: Mapping[str, frozenset[str]] | None = None) -> bool:
        """Whether the family (child, parents) can occur in a DAG of D(K) as far as single arrows
        decide: no forbidden parent and every required parent present."""
        forbidden = self.forbidden_arrows() if forbidden is None else forbidden
        required = self.required_parents() if required is None else required
        ps = frozenset(parents)
        return required.get(child, frozenset()) <= ps and not any((p, child) in forbidden for p in ps)

    def allows(self, parents: Parents) -> bool:
        """Whether the DAG (a full parent map) satisfies every statement of K."""
        return not self.violations(parents, first=True)

    def violations(self, parents: Parents, first: bool = False) -> list[str]:
        """The statements the DAG ``parents`` breaks (all, or just the first with ``first``)."""
        pa = {v: frozenset(p) for v, p in parents.items()}
        out: list[str] = []

        def has(a: str, b: str) -> bool:
            return a in pa.get(b, ())

        forbidden = self.forbidden_arrows()
        for arrow in sorted(((p, c) for c, ps in pa.items() for p in ps if (p, c) in forbidden),
                            key=forbidden.order):
            out.append(forbidden[arrow])
            if first:
                return out
        for a, b in self.required:
            if not has(a, b):
                out.append(f"require {a} -> {b}")
        for a, b in self.required_adjacent:
            if not (has(a, b) or has(b, a)):
                out.append(f"require {a} -- {b}")
        if out and first:
            return out
        if self.required_ancestors or self.forbidden_ancestors:
            desc = descendants(pa)
            for a, b in self.required_ancestors:
                if b not in desc.get(a, ()):
                    out.append(f"require {a} ~> {b}")
            for a, b in self.forbidden_ancestors:
                if b in desc.get(a, ()):
                    out.append(f"forbid {a} ~> {b}")
        if out and first:
            return out
        for a, b, z in self.independent:
            if not d_separated(pa, a, b, z):
                out.append(independence_text(a, b, z))
        for a, b, z in self.dependent:
            if d_separated(pa, a, b, z):
                out.append(independence_text(a, b, z, "dependent"))
        return out[:1] if first else out

    # ---- validation ---------------------------------------------------------------------------
    def validated(self, variables: Sequence[str], dropped: Sequence[str] = ()) -> Knowledge:
        """Self, after checking names and the contradictions listed in the module doc. ``dropped``: the data's
        constant columns, left out of the network — a statement naming one says so (not "unknown")."""
        names = set(variables)

        def unknown(src: str, v: str, statement: str) -> InputError:
            why = "a constant column (one value), left out of the network:" if v in dropped else "unknown variable"
            return InputError(f"{src}: {why} {v!r} in {statement}")

        for f in _PAIR_FIELDS:
            for a, b in getattr(self, f):
                src = self._src((f, a, b))
                for v in (a, b):
                    if v not in names:
                        raise unknown(src, v, f"'{_KEYWORD[f]} {a} {_OPERATOR[f]} {b}'")
                if a == b:
                    raise InputError(f"{src}: '{_KEYWORD[f]} {a} {_OPERATOR[f]} {b}' relates a variable to itself")
        for f in SEPARATION_FIELDS:
            for a, b, z in getattr(self, f):
                src, text = self._src((f, a, b, *z)), independence_text(a, b, z, f)
                for v in (a, b, *z):
                    if v not in names:
                        raise unknown(src, v, f"'{text}'")
                if a == b:
                    raise InputError(f"{src}: '{text}' makes a variable {f} {'of' if f == 'independent' else 'on'} "
                                     "itself")
                if a in z or b in z:
                    raise InputError(f"{src}: '{text}' is given {a if a in z else b!r} itself: the tested variables "
                                     "are not among the given ones")
        seen: dict[str, int] = {}
        for i, t in enumerate(self.tiers):
            for v in t:
                src = self._src(("tier", v))
                if v not in names:
                    raise unknown(src, v, f"tier {i + 1}")
                if v in seen:       # twice in one tier too (a review: 'tier asia, asia' was taken and recorded)
                    raise InputError(f"{src}: {v!r} is in tier {seen[v] + 1} and tier {i + 1}" if seen[v] != i else
                                     f"{src}: {v!r} is named twice in tier {i + 1}")
                seen[v] = i
        forbidden = self.forbidden_arrows()
        for a, b in self.required:
            if (a, b) in forbidden:
                raise InputError(f"{self._src(('required', a, b))}: 'require {a} -> {b}' contradicts "
                                 f"{forbidden[(a, b)]}")
        for a, b in self.required_adjacent:
            if (a, b) in forbidden and (b, a) in forbidden:
                why = list(dict.fromkeys((forbidden[(a, b)], forbidden[(b, a)])))   # one statement may forbid both
                raise InputError(f"{self._src(('required_adjacent', a, b))}: 'require {a} -- {b}' contradicts "
                                 f"{' and '.join(why)}")
        for req, forb, op in (("required_adjacent", "forbidden_adjacent", "--"),
                              ("required_ancestors", "forbidden_ancestors", "~>")):
            banned = set(getattr(self, forb))
            if op == "--":
                banned |= {(b, a) for a, b in banned}
            for a, b in getattr(self, req):
                if (a, b) in banned:
                    raise InputError(f"{self._src((req, a, b))}: 'require {a} {op} {b}' is also forbidden")
        banned_paths = set(self.forbidden_ancestors)
        for a, b in self.required:
            if (a, b) in banned_paths:
                raise InputError(f"{self._src(('required', a, b))}: 'require {a} -> {b}' contradicts "
                                 f"'forbid {a} ~> {b}'")
        tier = self.tier_of()
        untiered = [v for v in names if v not in tier]      # a path through one of them breaks no tier
        for a, b in self.required_ancestors:
            if a in tier and b in tier and tier[a] > tier[b] and not untiered:
                raise InputError(f"{self._src(('required_ancestors', a, b))}: 'require {a} ~> {b}' goes against the "
                                 f"tiers ({a} is in tier {tier[a] + 1}, {b} in tier {tier[b] + 1}, and every "
                                 "variable is in a tier)")
        # a cycle among required arrows and required ancestor relations (both are directed paths):
        # added in the order they were written (``where`` records them so: a file's lines, then the flags as
        # given), the statement that closes one is named
        written = {key: k for k, key in enumerate(self.where)}
        stated = sorted(((self._src((f, a, b)), f, a, b) for f in ("required", "required_ancestors")
                         for a, b in getattr(self, f)), key=lambda t: written.get(t[1:], len(written)))
        paths: dict[str, set[str]] = {}
        for src, f, a, b in stated:
            if a in descendants({v: {u for u, ws in paths.items() if v in ws} for v in names}).get(b, ()):
                raise InputError(f"{src}: '{_KEYWORD[f]} {a} {_OPERATOR[f]} {b}' closes a directed cycle of "
                                 "required arrows/ancestor relations")
            paths.setdefault(a, set()).add(b)
        self._check_independences_against_requirements()
        self._check_dependences(names)
        return self

    def _check_dependences(self, names: set[str]) -> None:
        """A dependence stated as an independence too (the same a, b and Z), naming a variable every arrow at
        which is forbidden (isolated in every DAG of D(K), so d-separated from every other given anything), or,
        given nothing, whose two variables no variable can be an ancestor of (itself included), is an error: no
        DAG satisfies it, and the search could only find that out by cutting its DAGs one by one. Given nothing, a
        and b are d-connected exactly when they have a common ancestor (a trail without colliders); in a DAG of
        D(K) a path c → … → a uses allowed arrows only and ``forbid c ~> a`` is not stated, so where no c reaches
        both a and b that way, no DAG of D(K) satisfies the dependence."""
        if not self.dependent:
            return
        stated = {separation_key(*t): t for t in self.independent}
        forbidden = self.forbidden_arrows()
        banned_paths = set(self.forbidden_ancestors)

        def above(v: str) -> set[str]:         # v and the variables an allowed path may lead from into v
            seen, stack = {v}, [v]
            while stack:
                w = stack.pop()
                for u in names:
                    if u not in seen and (u, w) not in forbidden:
                        seen.add(u)
                        stack.append(u)
            return {v} | {u for u in seen if (u, v) not in banned_paths}

        for a, b, z in self.dependent:
            src, text = self._src(("dependent", a, b, *z)), independence_text(a, b, z, "dependent")
            other = stated.get(separation_key(a, b, z))
            if other is not None:
                raise InputError(f"{src}: '{text}' contradicts '{independence_text(*other)}' "
                                 f"({self._src(('independent', *other[:2], *other[2]))})")
            for v in (a, b):
                if all((u, v) in forbidden and (v, u) in forbidden for u in names if u != v):
                    raise InputError(f"{src}: '{text}' cannot hold: every arrow at {v} is forbidden, so {v} is "
                                     "d-separated from every variable in every network")
            if not z and not above(a) & above(b):
                raise InputError(f"{src}: '{text}' cannot hold: the forbidden arrows and ancestor relations (tiers "
                                 f"and independences among them) leave no variable that can be an ancestor of both "
                                 f"{a} and {b} (or one of them of the other), and given nothing only a common "
                                 "ancestor d-connects them")

    def _check_independences_against_requirements(self) -> None:
        """An independence that every DAG with the required arrows and ancestor relations breaks is an error: the
        required arrows alone d-connect a and b given Z, a collider of theirs counting as active where the required
        arrows and ancestor relations make it an ancestor of a member of Z (then so does every DAG of D(K) — an
        active trail of a subgraph is one of the graph, and such a collider is an ancestor of Z there), or, with
        nothing given, the required arrows and ancestor relations make a directed path between a and b or give
        them a common ancestor (a trail without colliders, open when nothing is given). The search could only find
        such a contradiction by cutting the paths one by one."""
        if not self.independent or not (self.required or self.required_ancestors):
            return
        arrows: dict[str, set[str]] = {}
        for a, b in self.required:
            arrows.setdefault(b, set()).add(a)
            arrows.setdefault(a, set())
        reach = descendants({v: {u for u, w in (*self.required, *self.required_ancestors) if w == v}
                             for e in (*self.required, *self.required_ancestors) for v in e})
        for a, b, z in self.independent:
            src, text = self._src(("independent", a, b, *z)), independence_text(a, b, z)
            above = {v for v, below in reach.items() if below & set(z)}     # ancestors of Z in every DAG of D(K)
            trail = d_connecting_arcs(arrows, a, b, z, above) if a in arrows and b in arrows else None
            if trail is not None:
                raise InputError(f"{src}: '{text}' contradicts the required arrows "
                                 f"{', '.join(f'{u} -> {w}' for u, w in trail)}"
                                 f"{' (and ancestor relations)' if self.required_ancestors else ''}: they make an "
                                 f"active trail between {a} and {b}{' given ' + ', '.join(z) if z else ''}")
            if z:
                continue
            common = sorted(c for c, below in reach.items() if a in below and b in below)
            if b in reach.get(a, ()) or a in reach.get(b, ()) or common:
                why = (f"{a} an ancestor of {b}" if b in reach.get(a, ()) else f"{b} an ancestor of {a}"
                       if a in reach.get(b, ()) else f"{common[0]} an ancestor of both")
                raise InputError(f"{src}: '{text}' contradicts the required arrows and ancestor relations: they make "
                                 f"{why}, an open trail between them when nothing is given")

    # ---- combining, (de)serialising -------------------------------------------------------------
    def merged(self, other: Knowledge | None) -> Knowledge:
        """Both sets of statements (tiers may come from one of them only)."""
        if other is None or other.empty():
            return self
        if self.empty():
            return other
        if self.tiers and other.tiers:
            raise InputError(f"{other._src(('tier', other.tiers[0][0]))}: tiers given twice (give them in one place)")
        kw: dict[str, Any] = {f: getattr(self, f) + getattr(other, f) for f in _PAIR_FIELDS}
        src = self if self.tiers else other
        where = {**self.where, **{k: w for k, w in other.where.items() if k not in self.where}}   # in written order
        return Knowledge(**kw, tiers=src.tiers, strict_tiers=src.strict_tiers,
                         independent=self.independent + other.independent,
                         dependent=self.dependent + other.dependent, where=where)

    def statements(self) -> list[str]:
        """K as the lines of a knowledge file (the sidecar and the JSON report record these)."""
        lines = [f"{_KEYWORD[f]} {a} {_OPERATOR[f]} {b}" for f in _PAIR_FIELDS for a, b in getattr(self, f)]
        lines += [("tier! " if i in self.strict_tiers else "tier ") + ", ".join(t) for i, t in enumerate(self.tiers)]
        lines += [independence_text(a, b, z, f) for f in SEPARATION_FIELDS for a, b, z in getattr(self, f)]
        return lines

    def to_dict(self) -> dict[str, Any]:
        """The knowledge as a dict of its non-empty fields (pairs as lists; ``strict_tiers`` numbered from 1),
        the form ``learn(knowledge=...)`` and :meth:`coerce` take back."""
        out: dict[str, Any] = {f: [list(e) for e in getattr(self, f)] for f in _PAIR_FIELDS if getattr(self, f)}
        if self.tiers:
            out["tiers"] = [list(t) for t in self.tiers]
            out["strict_tiers"] = sorted(i + 1 for i in self.strict_tiers)
        for f in SEPARATION_FIELDS:
            if getattr(self, f):
                out[f] = [[a, b, list(z)] for a, b, z in getattr(self, f)]
        out["statements"] = self.statements()
        return out

    @classmethod
    def coerce(cls, obj: Knowledge | Mapping[str, Any] | str | os.PathLike[str] | None) -> Knowledge | None:
        """A Knowledge from itself, a dict of its fields as :meth:`to_dict` writes them (``strict_tiers``
        numbered from 1, like the tiers of a knowledge file), or a knowledge file path (None stays None)."""
        if obj is None or isinstance(obj, Knowledge):
            return obj
        if isinstance(obj, Mapping):
            kw = {k: v for k, v in obj.items() if k != "statements"}
            unknown = sorted(set(kw) - {f.name for f in fields(cls)} - {"where"})
            if unknown:
                known = [f.name for f in fields(cls) if f.name != "where"]
                raise InputError(f"knowledge: unknown field {unknown[0]!r} (fields: {', '.join(known)})")
            if "strict_tiers" in kw:        # numbered from 1 here; checked before they are moved to indices
                if not _tier_numbers(kw["strict_tiers"]):
                    raise InputError(f"knowledge: strict_tiers is a list of tier numbers (integers from 1), got "
                                     f"{kw['strict_tiers']!r}")
                numbers_from_1 = () if kw["strict_tiers"] is None else kw["strict_tiers"]
                kw["strict_tiers"] = frozenset(int(i) - 1 for i in numbers_from_1)
            made = cls(**kw)
            if obj.get("statements") and not made.statements():     # lines alone: read as nothing (a review)
                raise InputError("knowledge: it has 'statements' but none of the fields that hold them (required, "
                                 "tiers, …): a dict is read by its fields; parse_knowledge reads statement lines")
            return made
        if not isinstance(obj, (str, os.PathLike)):          # an int would be opened as a file descriptor
            raise InputError(f"knowledge must be a Knowledge, a dict of its fields or a file path, got "
                             f"{type(obj).__name__}")
        return read_knowledge(obj)


def descendants(parents: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """Proper descendants of every node of the parent map (what a directed path reaches)."""
    children: dict[str, set[str]] = {v: set() for v in parents}
    for v, ps in parents.items():
        for p in ps:
            children.setdefault(p, set()).add(v)
    out: dict[str, set[str]] = {}
    for v in children:
        seen: set[str] = set()
        stack = list(children[v])
        while stack:
            x = stack.pop()
            if x not in seen:
                seen.add(x)
                stack.extend(children.get(x, ()))
        out[v] = seen
    return out


# ---- the file format and the command-line forms -----------------------------------------------------
def parse_knowledge(text: str, filename: str = "<knowledge>", *, comments: bool = True) -> Knowledge:
    """Parse a knowledge file (module doc); every error is one line ``file:line: what``. ``comments=False``
    (the command-line flags' values): ``#`` is part of a name, not the start of a comment."""
    kw: dict[str, list[Edge]] = {f: [] for f in _PAIR_FIELDS}
    separations: dict[str, list[Independence]] = {f: [] for f in SEPARATION_FIELDS}
    tiers: list[tuple[str, ...]] = []
    strict: set[int] = set()
    where: dict[tuple[str, ...], str] = {}
    # lines end at '\n' alone (a '\r' before it is stripped): str.splitlines also breaks at a form feed, a vertical
    # tab, U+0085 and U+2028, so text commented out after one became a statement and later lines were misnumbered
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = (raw.split("#", 1)[0] if comments else raw).strip()
        if not line:
            continue
        src = f"{filename}:{lineno}"
        # a NUL, an escape (category Cc): no name holds one, and it reached the terminal raw; a format character
        # (ZWNJ in Persian words, a soft hyphen: Cf) is part of a name, as in the data (isprintable refused those)
        odd = next((ch for ch in line if unicodedata.category(ch) == "Cc" and not ch.isspace()), None)
        if odd is not None:
            raise InputError(f"{src}: a control character {odd!r} in {line!r}")
        word, rest = (line.split(None, 1) + [""])[:2]       # the keyword ends at any whitespace (a tab too)
        rest = rest.strip()
        if word in ("tier", "tier!"):
            names = [v.strip() for v in rest.split(",")]
            if not rest or any(not v for v in names):
                raise InputError(f"{src}: expected '{word} a, b, ...' (comma-separated names), got {line!r}")
            for v in names:
                if ("tier", v) in where:
                    raise InputError(f"{src}: {v!r} is already in a tier ({where[('tier', v)]})")
            if word == "tier!":
                strict.add(len(tiers))
            tiers.append(tuple(names))
            for v in names:
                where.setdefault(("tier", v), src)
            continue
        if word in SEPARATION_FIELDS:
            parsed = _parse_independence(rest)
            if parsed is None:
                raise InputError(f"{src}: expected '{word} a, b | c, d' (or '{word} a, b': given nothing), "
                                 f"got {line!r}")
            twice = next((v for i, v in enumerate(parsed[2]) if v in parsed[2][:i]), None)
            if twice is not None:       # named here, where its line is known (Knowledge would say it without one)
                raise InputError(f"{src}: {twice!r} is given twice in {line!r}")
            separations[word].append(parsed)
            where.setdefault((word, parsed[0], parsed[1], *parsed[2]), src)
            continue
        if word not in ("require", "forbid"):
            raise InputError(f"{src}: unknown statement {word!r}: expected require, forbid, tier, tier!, "
                             "independent or dependent")
        m = _PAIR_RE.match(rest)
        if not m or not m.group(1).strip() or not m.group(3).strip() or _PAIR_RE.match(m.group(3)):
            raise InputError(f"{src}: expected '{word} a -> b', '{word} a -- b' or '{word} a ~> b', got {line!r}")
        a, op, b = m.group(1).strip(), m.group(2), m.group(3).strip()
        f = STATEMENTS[(word, op)]
        kw[f].append((a, b))
        where.setdefault((f, a, b), src)
    return Knowledge(**kw, tiers=tuple(tiers), strict_tiers=frozenset(strict),
                     **{f: tuple(v) for f, v in separations.items()}, where=where)


def read_knowledge(path: str | os.PathLike[str]) -> Knowledge:
    """The :class:`Knowledge` of a knowledge file (the format of the module docstring); a file that cannot be
    read or parsed is an :class:`InputError` naming its line."""
    path = check_path(path, "knowledge")
    try:
        # a byte-order mark (Windows editors) is not text; newline="": a lone '\r' stays in its line (whitespace,
        # as parse_knowledge reads it) — Python's universal newlines made it a line break, so text commented out
        # after one became a statement and later lines were misnumbered (a review)
        text = read_input_text(path, "utf-8-sig", universal_newlines=False)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the knowledge file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise not_utf8(path, exc, "the knowledge file", lone_cr_ends_a_line=False) from None
    return parse_knowledge(text, os.fspath(path))


def from_options(path: str | os.PathLike[str] | None = None, require: Iterable[str] = (),
                 forbid: Iterable[str] = (), tiers: str | None = None,
                 independent: Iterable[str] = (), dependent: Iterable[str] = ()) -> Knowledge | None:
    """The knowledge of ``--knowledge FILE``, ``--require 'a->b'`` (repeatable; ``a--b``, ``a~>b`` too),
    ``--forbid``, ``--tiers 'a,b;c;!d,e'`` (``!``: no arrows within that tier), ``--independent 'a,b|c,d'`` and
    ``--dependent 'a,b|c,d'`` (repeatable), combined. A flag's value is one statement (or the tiers): ``#`` in it
    is part of a name (only the file has comments), and a line break is an :class:`InputError`."""
    opts = Knowledge()
    flags = [("require", require), ("forbid", forbid), ("independent", independent), ("dependent", dependent)]
    for flag, values in flags + ([("tiers", [tiers])] if tiers else []):
        for value in values:
            if len(f"{value}x".splitlines()) > 1:
                raise InputError(f"--{flag} {value!r}: a line break in the value; give one statement per --{flag}"
                                 if flag != "tiers" else f"--tiers {value!r}: a line break in the value; tiers "
                                 "are separated by ';'")
    for flag, values in flags:
        for value in values:
            where = f"--{flag} {value!r}"
            try:
                one = parse_knowledge(f"{flag} {value}", where, comments=False)
            except InputError as exc:     # the file's forms ('independent a, b | c, d') in the flag's ('a, b | c, d'),
                text = str(exc).replace(f"{where}:1:", f"{where}:", 1)     # and the value as given
                head, sep, tail = text.partition(": expected '")
                form, got, _ = tail.partition(", got ")
                if sep and got:
                    form = form.removeprefix(f"{flag} ").replace(f"'{flag} ", "'")
                    text = f"{head}{sep}{form}{got}{value!r}"
                raise InputError(text) from None
            opts = opts.merged(Knowledge(**{f: getattr(one, f) for f in (*_PAIR_FIELDS, *SEPARATION_FIELDS)},
                                         where={k: f"--{flag} {value!r}" for k in one.where}))
    if tiers is not None:
        parts = [p.strip() for p in tiers.split(";")]
        for k, part in enumerate(parts, 1):
            names = part[1:] if part.startswith("!") else part
            if not names.strip():
                raise InputError(f"--tiers {tiers!r}: tier {k} is empty (tiers are separated by ';')")
            if any(not v.strip() for v in names.split(",")):
                raise InputError(f"--tiers {tiers!r}: tier {k} ({part!r}) has an empty name (names are separated by "
                                 "',')")
        text = "\n".join(("tier! " + p[1:].strip()) if p.startswith("!") else f"tier {p}" for p in parts)
        try:
            t = parse_knowledge(text, "--tiers", comments=False)
        except InputError as exc:   # its lines are made here ("--tiers:3", "tier a"): the flag's value is named
            detail = re.sub(r"--tiers:\d+(: )?", "", str(exc)).replace("()", "").strip()
            raise InputError(f"--tiers {tiers!r}: {detail}") from None
        for k in list(t.where):
            t.where[k] = f"--tiers {tiers!r}"
        opts = opts.merged(t)
    k = read_knowledge(path) if path is not None else None
    out = opts if k is None else k.merged(opts)
    return None if out.empty() else out


# ---- the score table under knowledge ----------------------------------------------------------------
def scored_with(table: Any, knowledge: Knowledge) -> bool:
    """Whether the table was scored under every *requiring* statement of K (arrows, adjacencies,
    ancestor relations, dependences): then its pruning kept, for each child, every set a DAG of D(K) may need —
    forbidding statements (and independences) survive pruning's subset swaps, and K holds the recorded forbidding
    ones whenever :func:`with_recorded` made it."""
    recorded = table.meta.get("knowledge")
    if not recorded:
        return False
    rec = Knowledge.coerce(recorded)

    return (all(set(getattr(knowledge, f)) <= set(getattr(rec, f))
                for f in ("required", "required_adjacent", "required_ancestors"))
            and {separation_key(*t) for t in knowledge.dependent} <= {separation_key(*t) for t in rec.dependent})


def with_recorded(table: Any, knowledge: Knowledge | None) -> Knowledge | None:
    """The knowledge a solve of ``table`` must apply: the user's plus the statements the table was
    scored under (its sidecar ``knowledge``) — forbidden parents were never scored and required ones
    are in every set, so solving without them would be wrong. Tiers may come from one side only, or
    be the same on both."""
    recorded = Knowledge.coerce(table.meta.get("knowledge")) if table.meta.get("knowledge") else None
    if recorded is None or recorded.empty():
        return knowledge
    if knowledge is None or knowledge.empty():
        return recorded
    if knowledge.tiers and recorded.tiers:
        def same(k: Knowledge) -> tuple[list[frozenset[str]], frozenset[int]]:     # names in a tier in any order
            return [frozenset(t) for t in k.tiers], k.strict_tiers

        if same(knowledge) != same(recorded):
            raise InputError("knowledge (--tiers, --knowledge): the score table was scored under other tiers, its "
                             f"sidecar says ({'; '.join(', '.join(t) for t in recorded.tiers)}); give the same tiers "
                             "or none")
        recorded = Knowledge(**{f: getattr(recorded, f) for f in (*_PAIR_FIELDS, *SEPARATION_FIELDS)})
    # the record first, named as such: a statement of the user's that contradicts it (a cycle) is the one named — the
    # record's, with no place of its own, was blamed as plain "knowledge" (a review). A statement the user gave too
    # (learn scores under the user's knowledge, so all of them) keeps the user's place: its flag or file line
    record = "the score table's record (its sidecar's knowledge)"
    where = {(f, a, b): record for f in _PAIR_FIELDS for a, b in getattr(recorded, f)
             if (a, b) not in getattr(knowledge, f)}
    for f in SEPARATION_FIELDS:                  # an (in)dependence is the same statement in any order of its names
        given = {separation_key(*t) for t in getattr(knowledge, f)}
        where.update({(f, a, b, *z): record for a, b, z in getattr(recorded, f)
                      if separation_key(a, b, z) not in given})
    sourced = replace(recorded, where=where)
    return sourced.merged(knowledge)


def pruning_note(table: Any, knowledge: Knowledge) -> str | None:
    """Why a table pruned without K may miss a credible DAG of D(K) (None when it cannot).

    Pruning swaps a set for a better subset; forbidding statements survive the swap, required ones
    (arrows, adjacencies, ancestor relations, dependences) may not (see ``bnilp.parentsets._knowledge_plan``)."""
    requires = (knowledge.required or knowledge.required_adjacent or knowledge.required_ancestors
                or knowledge.dependent)
    pruned = table.meta.get("prune", True) and table.meta.get("rules", ["R1"]) != []
    if not requires or not pruned or scored_with(table, knowledge):
        return None
    touched = ({b for _, b in knowledge.required} | {v for e in knowledge.required_adjacent for v in e}
               | (set(table.variables) if knowledge.required_ancestors or knowledge.dependent else set()))
    if touched <= set(table.meta.get("knowledge_unpruned") or ()):    # their walks kept every set: nothing lost
        return None
    return ("the score table was pruned without the knowledge's required arrows, adjacencies, ancestor "
            "relations or dependences: OPT and the credible set under the knowledge may use parent sets the "
            "pruning removed, so both may be wrong (score the data with the knowledge for an exact result: "
            "--knowledge, score_parent_sets(knowledge=...))")


class ForbiddenArrows(Mapping):
    """:meth:`Knowledge.forbidden_arrows`: arrow (a, b) → the reason no DAG of D(K) has a → b. The statements'
    arrows are held; the tiers' — a → b with a in a later tier than b, or both in one strict tier — are decided and
    worded on demand from each variable's tier, so the memory is O(n) where tiers forbid about n²/2 arrows (a
    dict of them took about 0.2 KB an arrow: 3.6 M arrows, some 0.8 GB, for 3,000 variables in five tiers).
    Iterated in the order the arrows were derived: the statements' (first stated first), then the tiers' by
    first variable, then second, in tier order — :meth:`order` gives each arrow's place in it. Immutable (a
    caller cannot make the same Knowledge allow what it forbids)."""

    def __init__(self, stated: dict[Edge, str], tier: dict[str, int], strict: frozenset[int],
                 place: dict[str, str]):
        self._stated, self._tier, self._strict, self._place = stated, tier, strict, place
        self._rank = {e: i for i, e in enumerate(stated)}
        self._pos = {v: i for i, v in enumerate(tier)}
        self._len: int | None = None

    def _by_tiers(self, a: Any, b: Any) -> bool:
        ta, tb = self._tier.get(a), self._tier.get(b)
        return ta is not None and tb is not None and a != b and (ta > tb or (ta == tb and ta in self._strict))

    def __contains__(self, arrow: object) -> bool:
        if arrow in self._stated:
            return True
        return isinstance(arrow, tuple) and len(arrow) == 2 and self._by_tiers(*arrow)   # ("ba" is no arrow)

    def __getitem__(self, arrow: Edge) -> str:
        why = self._stated.get(arrow)
        if why is not None:
            return why
        if arrow not in self:
            raise KeyError(arrow)
        return self._tier_reason(*arrow)

    def _tier_reason(self, a: str, b: str) -> str:
        """Why the tiers forbid a → b (they must)."""
        ta, tb = self._tier[a], self._tier[b]
        if ta > tb:
            return f"tiers: {a} (tier {ta + 1}) after {b} (tier {tb + 1}) ({self._place[a]})"
        return f"tier! {ta + 1}: no arrows within ({self._place[a]})"

    def _tier_arrows(self):
        """The tiers' arrows that no statement forbids as well, by first variable, then second, in tier order."""
        tier, stated = self._tier, self._stated
        for a in tier:
            for b in tier:
                if self._by_tiers(a, b) and (a, b) not in stated:
                    yield a, b

    def __iter__(self):
        yield from self._stated
        yield from self._tier_arrows()

    def items(self) -> ItemsView:
        return _ArrowsAndReasons(self)

    def _pairs(self):
        """(arrow, reason) in iteration order, without looking each arrow up again."""
        yield from self._stated.items()
        for a, b in self._tier_arrows():
            yield (a, b), self._tier_reason(a, b)

    def __len__(self) -> int:
        if self._len is None:
            sizes: dict[int, int] = {}
            for t in self._tier.values():
                sizes[t] = sizes.get(t, 0) + 1
            before = 0
            tiers = 0
            for t in sorted(sizes):
                tiers += sizes[t] * before + (sizes[t] * (sizes[t] - 1) if t in self._strict else 0)
                before += sizes[t]
            self._len = len(self._stated) + tiers - sum(self._by_tiers(a, b) for a, b in self._stated)
        return self._len

    # what the read-only dict view it replaced (a mappingproxy) offered besides a Mapping's methods
    def copy(self) -> dict[Edge, str]:
        return dict(self.items())

    def __or__(self, other: Any) -> dict[Edge, str]:
        return self.copy() | other if isinstance(other, Mapping) else NotImplemented

    def __ror__(self, other: Any) -> dict[Edge, str]:
        return dict(other) | self.copy() if isinstance(other, Mapping) else NotImplemented

    def __reversed__(self):
        return reversed(list(self))

    def __repr__(self) -> str:
        return f"ForbiddenArrows({self.copy()!r})"

    def order(self, arrow: Edge) -> tuple[int, ...]:
        """``arrow``'s place in the iteration order (it must be forbidden)."""
        if arrow in self._rank:
            return 0, self._rank[arrow]
        return 1, self._pos[arrow[0]], self._pos[arrow[1]]

    def __reduce__(self):
        return ForbiddenArrows, (self._stated, self._tier, self._strict, self._place)


class _ArrowsAndReasons(ItemsView):
    """:meth:`ForbiddenArrows.items`, iterated without looking each arrow up again."""

    def __iter__(self):
        return self._mapping._pairs()


def restrict_table(table: Any, knowledge: Knowledge) -> Any:
    """The table with only the families that agree with K's arrows (:meth:`Knowledge.family_ok`) and
    ``knowledge`` set, so that the search adds the rest (:mod:`bnilp.ilp.knowledge_rows`). A variable
    left with no family is a one-line :class:`InputError`."""
    from bnilp.scorefile import ScoreTable

    knowledge.validated(table.variables, table.meta.get("dropped_constant", ()))
    forbidden = knowledge.forbidden_arrows()
    required = knowledge.required_parents()
    families = {}
    for v in table.variables:
        families[v] = {ps: s for ps, s in table.families[v].items()
                       if knowledge.family_ok(v, ps, forbidden, required)}
        if table.families[v] and not families[v]:
            need = sorted(required.get(v, ()))
            raise InputError(f"knowledge: no candidate parent set of {v!r} agrees with the knowledge"
                             + (f" (it must contain {need}; palim {table.meta['palim']})"
                                if need and table.meta.get("palim") is not None else
                                f" (it must contain {need})" if need else ""))
    meta = dict(table.meta)
    meta["knowledge"] = knowledge.to_dict()
    return ScoreTable(list(table.variables), families, meta, knowledge=knowledge)
