"""Retry by error class (design.md, "Retry by error class"; cases.md BC-16).

The graph owns retrying (library-internal retries are off) and keeps the attempt number in its
state, bounded by :data:`MAX_ATTEMPTS`, so a retry edge can never loop to LangGraph's recursion
limit. Retries happen immediately and spend the turn's deadline; they never extend it.

=================  ==============================================================
kind               policy
=================  ==============================================================
timeout            1 retry, immediately, on the LLM path only (:data:`TIMEOUT_RETRY_NODES`,
                   whose ``[llm] budget_s`` includes it); elsewhere a hung engine stays
                   hung, and its breaker and the ladder answer within the node's budget
transient          1 retry, immediately
invalid_output     1 retry; the caller asks again with a stricter prompt
fatal, bad_input   never
any kind           never for a side-effecting node without an idempotency key;
                   never with less than :data:`MIN_LEFT_S` of the deadline left
=================  ==============================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from hub.errors import KINDS
from hub.names import LLM_NODES
from hub.resilience.deadline import Deadline

MAX_ATTEMPTS = 2
"""Most attempts of one node in one turn (the first plus one retry); the graph keeps the
counter in its state and resets it per request (BC-16)."""

MIN_LEFT_S = 0.05
"""A retry needs at least this much of the deadline left (seconds); less cannot finish."""

RETRYABLE_KINDS = frozenset({"timeout", "transient", "invalid_output"})
"""Error kinds that may be retried."""

TIMEOUT_RETRY_NODES = frozenset(LLM_NODES)
"""The nodes whose timeout is retried (the LLM path)."""


@dataclass(frozen=True)
class RetryDecision:
    """Whether to retry a failed node, and why.

    Attributes:
        retry: True to run the node again now.
        reason: one line for the trace, naming the node and the rule that decided.
        stricter: True when the retry should use a stricter request (``invalid_output``).
    """

    retry: bool
    reason: str
    stricter: bool = False


def retry_decision(
    kind: str,
    attempt: int,
    node: str,
    deadline: Deadline,
    *,
    side_effect: bool,
    has_idempotency_key: bool,
) -> RetryDecision:
    """Decide whether ``node`` runs again after attempt number ``attempt`` (1 = the first)
    failed with error ``kind``.

    Raises:
        ValueError: ``kind`` is not one of :data:`hub.errors.KINDS`, or ``attempt`` < 1.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown error kind {kind!r}; expected one of {KINDS}")
    if attempt < 1:
        raise ValueError(f"attempt counts from 1, got {attempt!r}")
    if kind not in RETRYABLE_KINDS:
        return RetryDecision(False, f"{node}: {kind} is never retried")
    if side_effect and not has_idempotency_key:
        return RetryDecision(False, f"{node}: side effect without an idempotency key")
    if kind == "timeout" and node not in TIMEOUT_RETRY_NODES:
        return RetryDecision(False, f"{node}: a timeout is retried only on the LLM path")
    if attempt >= MAX_ATTEMPTS:
        return RetryDecision(False, f"{node}: {attempt} of {MAX_ATTEMPTS} attempts used")
    left = deadline.left()
    if left < MIN_LEFT_S:
        return RetryDecision(False, f"{node}: only {left * 1000:.0f} ms of the deadline left")
    stricter = kind == "invalid_output"
    how = "with a stricter request" if stricter else "immediately"
    return RetryDecision(True, f"{node}: retry {how} after {kind}", stricter)


def should_retry(
    kind: str,
    attempt: int,
    node: str,
    deadline: Deadline,
    *,
    side_effect: bool,
    has_idempotency_key: bool,
) -> bool:
    """True when ``node`` should run again; see :func:`retry_decision` for the rules."""
    return retry_decision(
        kind,
        attempt,
        node,
        deadline,
        side_effect=side_effect,
        has_idempotency_key=has_idempotency_key,
    ).retry
