"""Glue between the ``asr`` node and :mod:`hub.asr.second_pass` (kept small: the decision
logic lives in ``hub.asr``; only the collaborators are picked here)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from hub import names
from hub.asr.base import Transcript
from hub.asr.second_pass import needed, second_pass
from hub.errors import HubError
from hub.graph.state import TurnContext, TurnState
from hub.intents.reference import referred_matches
from hub.resilience.runner import call_with_timeout


def match_key(match):
    """What a rules match would do: intent, target entities and the other slots' values."""
    if match is None:
        return None
    rest = tuple(sorted((k, str(v)) for k, v in match.slots.items() if k not in ("name", "area")))
    return match.intent, tuple(sorted(match.entities)), rest


def interpreter(rules, conversation):
    """``interpret(text)`` for the second pass: what the rules would do for ``text`` in this
    conversation (:func:`match_key` of the strict match; for "turn it off", of the matches its
    "it" resolves to, :func:`hub.intents.reference.referred_matches`), None when nothing. A
    reference and the named command it stands for interpret alike, so a second pass that
    agrees on "turn it off" settles its doubt as it does for "turn off the kitchen light"."""

    def interpret(text: str):
        area = conversation.area
        match = rules.recognize(text, area)
        if match is not None:
            return match_key(match)
        referred = referred_matches(rules, conversation, text)
        if not referred:
            return None
        keys = tuple(match_key(m) for m in referred)
        return keys[0] if len(keys) == 1 else keys

    return interpret


MARGIN_S = 0.75
"""The second pass ends this long before the ``asr`` node's timeout would."""
REST_S = 2.5
"""Turn time kept for what follows the second pass on an *unsure* command (rules, act, the
answer's synthesis): a late second pass must not leave the turn without time to act on what
it heard, or on the grammar's own result (then asked back) when it is skipped."""
REST_REJECTED_S = 1.0
"""Turn time kept after the second pass on speech the grammar *rejected*: the rules and a
short answer. The grammar gave nothing to fall back on but "didn't catch" (rendered ahead of
time), so the second pass gets the rest of the turn; what needs more than this after it (an
LLM call) gets what is left and then the fallback ladder's answer, still within the deadline."""


SLACK_S = 0.5
"""The ``asr`` node's guard waits this long past a rejected second pass's end (the node's own
work after it: the fingerprint store)."""


def node_timeout(node: str, ctx: TurnContext, timeout: float) -> float:
    """The guard's timeout for ``node`` (``timeout``: the policy's). With the second pass on,
    the ``asr`` node may take the turn's time less :data:`REST_REJECTED_S` (plus
    :data:`SLACK_S`) when that is longer: a second pass on rejected speech is not cut at the
    grammar's timeout, while the grammar pass inside keeps that timeout
    (:func:`grammar_pass`). Any other node, or an ``asr`` node with an injected fault (it
    stands for the grammar engine being slow or hung, which the grammar's timeout bounds):
    ``timeout``."""
    if node != names.ASR or not ctx.settings.asr.second_pass or ctx.guards.faults.get(node):
        return timeout
    return max(timeout, min(ctx.deadline.left(), ctx.deadline.left() - REST_REJECTED_S + SLACK_S))


def grammar_pass(ctx: TurnContext, run: Callable[[threading.Event], Transcript]) -> Transcript:
    """``run(cancel)`` (the first, grammar pass) within the ``asr`` node's policy timeout (its
    base timeout scaled by load and latency, capped by the deadline), whatever the node's own
    (:func:`node_timeout`).

    Raises:
        TimeoutError_: the grammar pass did not end in time (node ``asr``).
    """
    return call_with_timeout(
        run, ctx.guards.policy.timeout(names.ASR, ctx.deadline), node=names.ASR
    )


def _node_end(state: TurnState, ctx: TurnContext, why: str | None) -> float:
    """Monotonic time by which the second pass must end: rejected speech, :data:`REST_REJECTED_S`
    before the turn's deadline (the ``asr`` node's guard allows it: :func:`node_timeout`); an
    unsure command, also before the ``asr`` node's policy timeout (counted from the turn's
    start: the fingerprint before it is quick) and :data:`REST_S` before the deadline."""
    now = ctx.clock.monotonic()
    if why == "rejected":
        return now + ctx.deadline.left() - REST_REJECTED_S
    node = state.get("started", now) + ctx.guards.policy.unbounded(names.ASR) - MARGIN_S
    return min(node, now + ctx.deadline.left() - REST_S)


def hear_again(
    state: TurnState, ctx: TurnContext, result: Transcript, cancel: threading.Event
) -> tuple[Transcript, dict]:
    """``(transcript, state update)`` after the second pass (unchanged when it is off, not
    needed, or its engine cannot be built; a failure is added to the turn's ``errors``).
    ``ctx``: the turn's :class:`hub.graph.state.TurnContext`."""
    settings = ctx.settings.asr
    why = needed(result)
    if not settings.second_pass or why is None or ctx.samples is None:
        return result, {}
    try:
        engine = ctx.engines.get(names.ASR2)
    except HubError as exc:
        return result, {"errors": [*(state.get("errors") or []), exc.as_trace()]}
    scorer = ctx.engines.asr()
    decision = second_pass(  # the rules are asked only once speech was heard (built lazily)
        result,
        ctx.samples,
        engine,
        interpret=lambda t: interpreter(ctx.engines.rules(), ctx.conversation)(t),
        scorer=scorer if hasattr(scorer, "doubts") else None,
        cancel=cancel,
        deadline=_node_end(state, ctx, why),
        min_speech_ms=settings.min_speech_ms,
        clock=ctx.clock.monotonic,
    )
    update: dict[str, object] = {"second_pass": decision.trace}
    if decision.error is not None:
        update["errors"] = [*(state.get("errors") or []), decision.error.as_trace()]
    return decision.transcript, update
