"""Run one node under the resilience layer: breaker, dynamic timeout, fault, classification.

A guarded node never raises. Its failure becomes state (``failed`` and a new ``errors``
entry) that the graph's conditional edges route: retry, next fallback level, or end. Its
deadline is the turn's (:class:`~hub.graph.state.TurnContext`, LangGraph's runtime context).
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from typing import Callable

from langgraph.runtime import Runtime

from hub.errors import HubError, InvalidOutputError
from hub.graph.state import TurnContext
from hub.resilience.faults import apply_fault
from hub.resilience.runner import call_with_timeout

log = logging.getLogger("hub.graph")

Body = Callable[..., dict]
"""A node's work: ``body(hub, state, cancel) -> state update``, or
``body(hub, state, cancel, turn)`` when it needs the turn's :class:`TurnContext`; raises
HubError on failure."""


def takes_turn(body: Callable[..., dict]) -> bool:
    """True when ``body`` has a ``turn`` parameter (it is given the turn's context)."""
    return "turn" in inspect.signature(body).parameters

BREAKER_OPEN = "breaker_open"
"""The ``kind`` of an error entry written when an open breaker skipped a node."""


def _timed(state: dict, node: str, start: float) -> dict:
    timings = dict(state.get("timings_ms") or {})
    timings[node] = round(timings.get(node, 0.0) + (time.monotonic() - start) * 1000, 1)
    return timings


def _failure(state: dict, node: str, err: dict) -> dict:
    log.warning("%s failed (%s): %s", node, err["kind"], err["message"])
    return {"failed": {"node": node, "kind": err["kind"]},
            "errors": list(state.get("errors") or []) + [err]}


def _attempt(hub, node: str, body: Body, state: dict, turn: TurnContext,
             cancel: threading.Event) -> dict:
    fault = hub.faults.get(node)
    args = (hub, state, cancel, turn) if takes_turn(body) else (hub, state, cancel)
    if apply_fault(fault, cancel) == "garbage":
        body(*args)
        raise InvalidOutputError(f"{node} returned garbage (injected)", node=node)
    return body(*args)


def guarded(node: str, body: Body, hub, *, engine: str | None = None,
            loads: str | None = None) -> Callable[[dict], dict]:
    """Wrap ``body`` as a LangGraph node named ``node``.

    Args:
        node: the node's name (timeouts, faults and the trace use it).
        body: the node's work.
        hub: the orchestrator (``breakers``, ``policy``, ``faults``, ``latency``).
        engine: the circuit breaker to use; None for nodes without one.
        loads: the engine (:class:`hub.core.engines.Engines` name) to build before the timed
            call, so a one-time load is paid from the turn's deadline, not the node's timeout.
    Returns:
        A function of the state (and LangGraph's runtime) returning the update, with
        ``attempts``, ``timings_ms``, ``failed`` and ``errors`` set.
    """

    def run(state: dict, runtime: Runtime[TurnContext]) -> dict:
        start = time.monotonic()
        attempts = dict(state.get("attempts") or {})
        attempts[node] = attempts.get(node, 0) + 1
        breaker = hub.breakers.get(engine) if engine else None
        if breaker is not None and not breaker.allow():
            err = {"node": node, "kind": BREAKER_OPEN,
                   "message": f"{breaker.describe()}; skipped"}
            update = _failure(state, node, err)
        else:
            update = _run_body(hub, node, body, state, runtime.context, breaker, loads)
            loaded = update.pop("_loaded_at", start)
            if node in LLM_NODES and loaded > start:  # a one-time load is not the LLM's budget
                loads_ms = dict(state.get("load_ms") or {})
                loads_ms[node] = loads_ms.get(node, 0.0) + (loaded - start) * 1000
                update["load_ms"] = loads_ms
        update["attempts"] = attempts
        update["timings_ms"] = _timed(state, node, start)
        if update.get("failed") is None:
            hub.latency.record(node, time.monotonic() - start)
        if breaker is not None:
            update["breakers"] = list(state.get("breakers") or []) + breaker.take_transitions()
        return update

    run.__name__ = f"node_{node}"
    return run


LLM_NODES = ("llm_intent", "llm_answer")


def _llm_budget_left(hub, state: dict) -> float:
    """Seconds left of ``[llm] budget_s`` after the LLM nodes' earlier runs in this turn."""
    timings, loads = state.get("timings_ms") or {}, state.get("load_ms") or {}
    spent = sum(timings.get(n, 0.0) - loads.get(n, 0.0) for n in LLM_NODES) / 1000
    return max(0.0, hub.settings.llm.budget_s - spent)


def _run_body(hub, node: str, body: Body, state: dict, turn: TurnContext, breaker,
              loads: str | None) -> dict:
    loaded_at = None
    try:
        if loads is not None:
            hub.engines.get(loads)
            loaded_at = time.monotonic()
        timeout = hub.policy.timeout(node, turn.deadline)
        if node in LLM_NODES:
            timeout = min(timeout, _llm_budget_left(hub, state))
        update = call_with_timeout(lambda cancel: _attempt(hub, node, body, state, turn, cancel),
                                   timeout, node=node)
    except HubError as exc:
        if exc.node is None:
            exc.node = node
        if breaker is not None:
            breaker.record_failure(exc.kind)
        failure = _failure(state, node, exc.as_trace())
        return {**failure, "_loaded_at": loaded_at} if loaded_at else failure
    if breaker is not None:
        breaker.record_success()
    update = dict(update or {})
    update["failed"] = None
    if loaded_at is not None:
        update["_loaded_at"] = loaded_at
    return update
