"""Delivering a signal SCIP could not take when it came: the rule and its SCIP event handler.

SCIP takes an interrupt (``SCIPinterruptSolve``) and keeps it until it stops only from INITPRESOLVE to SOLVING
(:data:`INTERRUPTIBLE`; measured with PySCIPOpt 6: one given to a model in PROBLEM stage is cleared when
``SCIPsolve`` starts, and one given while SCIP initialises the solve is an error). The search's signal handler
(:func:`bnilp.ilp.search._signals_stop_the_search`) runs at the next callback into Python, which may come while
SCIP transforms the problem (a constraint handler's lock or init callback): there it can only note the signal, and
the whole phase ran before anyone looked at the note again — a 40-variable table of 240,000 parent sets, whose
transform takes seconds, ran on for minutes after a SIGTERM (a review). So every model the search solves carries
:class:`InterruptPending`, which looks at the note at each presolving round and at each node SCIP focuses, and
interrupts there."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyscipopt import SCIP_EVENTTYPE, SCIP_STAGE, Eventhdlr

#: the stages in which SCIP takes an interrupt and keeps it until it stops
INTERRUPTIBLE = frozenset({SCIP_STAGE.INITPRESOLVE, SCIP_STAGE.PRESOLVING, SCIP_STAGE.EXITPRESOLVE,
                           SCIP_STAGE.PRESOLVED, SCIP_STAGE.SOLVING})

#: the events at which a noted signal is delivered: each presolving round, each node focused (the root first)
_EVENTS = (SCIP_EVENTTYPE.PRESOLVEROUND, SCIP_EVENTTYPE.NODEFOCUSED)


def should_interrupt(pending: bool, stage: Any) -> bool:
    """Whether to interrupt SCIP now: a signal was noted (``pending``) and SCIP is in a stage that takes it."""
    return pending and stage in INTERRUPTIBLE


class InterruptPending(Eventhdlr):
    """SCIP adapter: at each presolving round and each focused node, interrupt the solve where ``pending()`` says a
    signal was noted (:func:`should_interrupt`)."""

    def __init__(self, pending: Callable[[], bool]) -> None:
        self.pending = pending

    def eventinit(self) -> None:
        for event in _EVENTS:
            self.model.catchEvent(event, self)

    def eventexit(self) -> None:
        for event in _EVENTS:
            self.model.dropEvent(event, self)

    def eventexec(self, event: Any) -> None:
        if should_interrupt(self.pending(), self.model.getStage()):
            self.model.interruptSolve()
