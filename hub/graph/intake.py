"""The input nodes of a turn: ``fingerprint`` (text passes through; audio gets its acoustic
fingerprint and, when heard before, its transcript: L1) and ``cached_transcript`` (L1 when the
recognizer failed). A question asked in the previous turn is taken here, so only this turn
may answer it. The other nodes are in :mod:`hub.graph.nodes`.
"""

from __future__ import annotations

from hub.asr.numbers import has_number
from hub.graph.state import TurnContext, TurnState
from hub.store.recall import recall


def fingerprint(state: TurnState, ctx: TurnContext) -> dict:
    """Text input passes through; audio gets a fingerprint, and the cached transcript if any (L1).

    A question asked in the previous turn ("Do you want me to ...?") is taken here: only this
    turn may answer it, so silence or a failed recognition cancels it too.
    """
    taken = ctx.conversation.take_confirmation()
    if taken is not None and not isinstance(taken, (tuple, list)):
        taken = (taken,)  # one match asked about
    pending = {
        "pending": tuple(taken) if taken else None,
        "asked": ctx.conversation.take_slot(),
    }  # "Which area do you mean?"
    typed = state.get("text")
    if typed is not None:
        text = typed.strip()
        return {"transcript": text, "alternatives": [text], **pending}
    samples = ctx.samples
    if samples is None or len(samples) == 0 or state.get("silent"):
        return pending

    update = recall(  # a number: from the same audio only, never from a similar utterance
        ctx.store, ctx.fingerprint_key, ctx.settings.store, samples, lambda t: not has_number(t)
    )
    ctx.fingerprint = update.pop("fingerprint", None)  # arrays: the turn's, not the state's
    return {**update, **pending}


def cached_transcript(state: TurnState, ctx: TurnContext) -> dict:
    """L1 when ASR failed: the transcript of the most similar utterance heard before; one
    with a number is asked back (``unsure``): a similar utterance may have said another."""
    found = state.get("l1")
    if not found or not found.get("transcript"):
        return {}
    return {
        "transcript": found["transcript"],
        "alternatives": found["alternatives"] or [found["transcript"]],
        "cache_hit": True,
        "unsure": has_number(found["transcript"]),
        "fallback_level": max(state.get("fallback_level", 0), 1),
    }
