"""Run one node under the resilience layer: breaker, dynamic timeout, fault, classification.

A guarded node never raises. Its failure becomes state (``failed`` and a new ``errors``
entry) that the graph's conditional edges route: retry, next fallback level, or end. Its
deadline, breakers, timeout policy, faults and clock are the turn's
(:class:`~hub.graph.state.TurnContext`, LangGraph's runtime context).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from langgraph.runtime import Runtime

from hub.errors import HubError, InvalidOutputError
from hub.graph.hearing import node_timeout
from hub.graph.state import TurnContext, TurnState
from hub.names import LLM_NODES
from hub.resilience.faults import apply_fault
from hub.resilience.runner import call_with_timeout

log = logging.getLogger("hub.graph")

Body = Callable[[TurnState, TurnContext, threading.Event], dict]
"""A node's work: ``body(state, ctx, cancel) -> state update``; raises HubError on failure."""


class Node(Protocol):
    """A node as LangGraph calls it: the state, and its runtime (``runtime.context``: the
    turn's :class:`hub.graph.state.TurnContext`) by keyword; returns the state update."""

    def __call__(self, state: TurnState, *, runtime: Runtime[TurnContext]) -> dict: ...


BREAKER_OPEN = "breaker_open"
"""The ``kind`` of an error entry written when an open breaker skipped a node."""


def _timed(state: TurnState, node: str, ms: float) -> dict:
    timings = dict(state.get("timings_ms") or {})
    timings[node] = round(timings.get(node, 0.0) + ms, 1)
    return timings


def _failure(state: TurnState, node: str, err: dict) -> dict:
    log.warning("%s failed (%s): %s", node, err["kind"], err["message"])
    return {
        "failed": {"node": node, "kind": err["kind"]},
        "errors": list(state.get("errors") or []) + [err],
    }


def _attempt(
    node: str, body: Body, state: TurnState, ctx: TurnContext, cancel: threading.Event
) -> dict:
    fault = ctx.guards.faults.get(node)
    if apply_fault(fault, cancel) == "garbage":
        body(state, ctx, cancel)
        raise InvalidOutputError(f"{node} returned garbage (injected)", node=node)
    return body(state, ctx, cancel)


def guarded(node: str, body: Body, *, engine: str | None = None, loads: str | None = None) -> Node:
    """Wrap ``body`` as a LangGraph node named ``node``.

    Args:
        node: the node's name (:mod:`hub.names`; timeouts, faults and the trace use it).
        body: the node's work.
        engine: the circuit breaker to use; None for nodes without one.
        loads: the engine (:class:`hub.core.engines.Engines` name) to build before the timed
            call, so a one-time load is paid from the turn's deadline, not the node's timeout.
    Returns:
        A function of the state and LangGraph's runtime returning the update, with
        ``attempts``, ``timings_ms``, ``failed`` and ``errors`` set.
    """

    def run(state: TurnState, runtime: Runtime[TurnContext]) -> dict:
        ctx = runtime.context
        start = ctx.clock.monotonic()
        attempts = dict(state.get("attempts") or {})
        attempts[node] = attempts.get(node, 0) + 1
        breaker = ctx.guards.breakers.get(engine) if engine else None
        if breaker is not None and not breaker.allow():
            err = {"node": node, "kind": BREAKER_OPEN, "message": f"{breaker.describe()}; skipped"}
            update = _failure(state, node, err)
        else:
            update = _run_body(node, body, state, ctx, breaker, loads)
            loaded = update.pop("_loaded_at", start)
            if node in LLM_NODES and loaded > start:  # a one-time load is not the LLM's budget
                loads_ms = dict(state.get("load_ms") or {})
                loads_ms[node] = loads_ms.get(node, 0.0) + (loaded - start) * 1000
                update["load_ms"] = loads_ms
        update["attempts"] = attempts
        spent_s = ctx.clock.monotonic() - start
        update["timings_ms"] = _timed(state, node, spent_s * 1000)
        if update.get("failed") is None:
            ctx.guards.latency.record(node, spent_s)
        if breaker is not None:
            update["breakers"] = list(state.get("breakers") or []) + breaker.take_transitions()
        return update

    run.__name__ = f"node_{node}"
    return run


def _llm_budget_left(ctx: TurnContext, state: TurnState) -> float:
    """Seconds left of ``[llm] budget_s`` after the LLM nodes' earlier runs in this turn."""
    timings, loads = state.get("timings_ms") or {}, state.get("load_ms") or {}
    spent = sum(timings.get(n, 0.0) - loads.get(n, 0.0) for n in LLM_NODES) / 1000
    return max(0.0, ctx.settings.llm.budget_s - spent)


def _run_body(
    node: str, body: Body, state: TurnState, ctx: TurnContext, breaker, loads: str | None
) -> dict:
    loaded_at = None
    try:
        if loads is not None:
            ctx.engines.get(loads)
            loaded_at = ctx.clock.monotonic()
        timeout = node_timeout(node, ctx, ctx.guards.policy.timeout(node, ctx.deadline))
        if node in LLM_NODES:
            timeout = min(timeout, _llm_budget_left(ctx, state))
        update = call_with_timeout(
            lambda cancel: _attempt(node, body, state, ctx, cancel), timeout, node=node
        )
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
