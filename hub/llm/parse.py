"""Pure parsing and checking of a language model's intent output.

The model is asked for ``{"intent": ..., "slots": {...}, "confidence": ...}`` (see
:mod:`hub.llm.prompts`). Nothing it says is trusted: :func:`check_output` extracts the first
complete, balanced JSON object from the raw text (code fences and chatter around it are
ignored; cases BC-13), normalises key case, resolves intent and names case-insensitively to
their canonical spelling, and rejects anything not on the whitelist (BC-15). No I/O besides
logging; the same input always gives the same result.

Pinned rules (tests/test_llm_parse.py):

- no JSON object in the text at all -> :class:`~hub.errors.InvalidOutputError` (retry once);
- keys are matched case-insensitively (``"Intent"`` == ``"intent"``); slot aliases ``room`` ->
  ``area`` and ``entity``/``device``/``target`` -> ``name``; two keys that fold to one -> None;
- intent and names are matched case-insensitively and returned in canonical case;
- missing intent, ``"none"``, unknown intent, unknown entity or area, a list or object slot
  value, missing or non-numeric confidence -> ``None`` (not acted on), with the reason logged;
- a numeric confidence outside [0, 1] is clamped and downgraded to a confirmation question;
- confidence below ``min_confidence`` -> ``None``;
- sensitive entity, lock domain or an area-wide on/off with no domain -> ``needs_confirmation``.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field

from hub.errors import InvalidOutputError

log = logging.getLogger(__name__)

ANSWER = "answer"
"""Pseudo-intent: the utterance is a question for :meth:`LlmEngine.answer`."""
NONE = "none"
"""Pseudo-intent: the model says the utterance is nothing it can handle."""
SLOT_ALIASES = {"room": "area", "entity": "name", "device": "name", "target": "name"}
"""Slot names small models use instead of Home Assistant's."""
SENSITIVE_DOMAINS = frozenset({"lock", "alarm_control_panel"})
"""Domains whose every action from the LLM path needs a confirmation."""
ON_OFF_INTENTS = frozenset({"HassTurnOn", "HassTurnOff"})
"""Intents that act on every entity in an area when no name or domain narrows them."""


@dataclass(frozen=True)
class LlmIntent:
    """An intent the LLM proposed that passed every check.

    Attributes:
        intent: HA intent name from the whitelist, or ``"answer"`` for a question.
        slots: ``{"name": ..., "area": ..., ...}``; names canonical as in the home.
        confidence: the model's confidence, clamped to [0, 1].
        needs_confirmation: sensitive entity, lock-type action or clamped confidence: ask first.
        raw: the raw model output (logged).
    """

    intent: str
    slots: dict
    confidence: float
    needs_confirmation: bool
    raw: str


@dataclass(frozen=True)
class Rejection:
    """Why valid JSON is not acted on: ``reason`` is a code, ``message`` speakable text."""

    reason: str
    message: str
    value: str = ""


@dataclass(frozen=True)
class Vocabulary:
    """What the model may name: allowed intents and the home's entity and area names."""

    intents: Collection[str]
    entity_names: Collection[str]
    area_names: Collection[str]
    sensitive_names: Collection[str] = ()
    _index: dict = field(default_factory=dict, compare=False, repr=False)

    def canonical(self, kind: str, value: str) -> str | None:
        """The canonical spelling of ``value`` among ``kind`` (intents/entity_names/area_names)."""
        table = self._index.get(kind)
        if table is None:
            table = {_fold(v): v for v in getattr(self, kind)}
            self._index[kind] = table
        return table.get(_fold(value))


def _fold(text: str) -> str:
    """Case- and whitespace-insensitive key: ``" Front  door"`` -> ``"front door"``."""
    return " ".join(str(text).split()).casefold()


def iter_json_objects(text: str) -> Iterator[dict]:
    """Yield every balanced ``{...}`` in ``text`` that parses as a JSON object, in order.

    Braces inside JSON strings (with escapes) do not count. A ``{`` that does not start a
    valid object is skipped and the scan goes on from the next ``{``.
    """
    start = text.find("{")
    while start != -1:
        end = _balanced_end(text, start)
        if end is not None:
            try:
                value = json.loads(text[start:end])
            except ValueError:
                value = None
            if isinstance(value, dict):
                yield value
                start = text.find("{", end)
                continue
        start = text.find("{", start + 1)


def _balanced_end(text: str, start: int) -> int | None:
    """Index after the ``}`` that closes the ``{`` at ``start``, or None if it never closes."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def first_json_object(raw: str) -> dict:
    """The first complete JSON object in ``raw`` (fences and chatter around it ignored).

    Raises:
        InvalidOutputError: there is no JSON object in ``raw`` at all.
    """
    for obj in iter_json_objects(raw):
        return obj
    raise InvalidOutputError(f"no JSON object in model output: {raw[:80]!r}", node="llm_intent")


def _lower_keys(obj: Mapping, aliases: Mapping[str, str] | None = None) -> dict | None:
    """Keys folded to lower case (and aliased); None when two keys fold to the same one."""
    out: dict = {}
    for key, value in obj.items():
        k = str(key).strip().lower()
        k = (aliases or {}).get(k, k)
        if k in out:
            return None
        out[k] = value
    return out


def _confidence(value) -> tuple[float | None, bool]:
    """``(confidence, clamped)``; None when missing, non-numeric, NaN or a bool."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None, False
    clamped = min(1.0, max(0.0, float(value)))
    return clamped, clamped != value


def _check_slots(slots, vocab: Vocabulary) -> dict | Rejection:
    """Slots with canonical names, or the Rejection for the first bad one."""
    if not isinstance(slots, Mapping):
        return Rejection("bad_slots", "I didn't understand that.", repr(slots))
    folded = _lower_keys(slots, SLOT_ALIASES)
    if folded is None:
        return Rejection("ambiguous", "I didn't understand that.", "slots")
    out = {}
    for key, value in folded.items():
        if value is None:
            continue
        if isinstance(value, (list, dict)):
            return Rejection("list_slot", "Please name one thing at a time.", key)
        if key in ("name", "area"):
            kind = "entity_names" if key == "name" else "area_names"
            canon = vocab.canonical(kind, str(value))
            if canon is None:
                word = "device" if key == "name" else "room"
                return Rejection(
                    f"unknown_{key}", f"I don't know a {word} called {value}.", str(value)
                )
            value = canon
        elif isinstance(value, str):
            value = value.strip()
        out[key] = value
    return out


def _needs_confirmation(intent: str, slots: dict, sensitive: Collection[str]) -> bool:
    """True for a sensitive entity, a lock-type domain or intent, or an area-wide on/off."""
    folded = {_fold(n) for n in sensitive}
    if "name" in slots and _fold(slots["name"]) in folded:
        return True
    domain = str(slots.get("domain", "")).strip().lower()
    if domain in SENSITIVE_DOMAINS or "lock" in intent.lower():
        return True
    return intent in ON_OFF_INTENTS and "name" not in slots and not domain


def check_output(raw: str, vocab: Vocabulary, min_confidence: float) -> LlmIntent | Rejection:
    """Turn raw model text into an :class:`LlmIntent` or the :class:`Rejection` saying why not.

    Raises:
        InvalidOutputError: there is no JSON object in ``raw`` at all.
    """
    obj = _lower_keys(first_json_object(raw))
    if obj is None:
        return Rejection("ambiguous", "Sorry, I didn't understand that.")
    value = obj.get("intent")
    if not isinstance(value, str) or not value.strip():
        return Rejection("no_intent", "Sorry, I didn't understand that.")
    if _fold(value) == NONE:
        return Rejection("none", "Sorry, I can't help with that.")
    intent = ANSWER if _fold(value) == ANSWER else vocab.canonical("intents", value)
    if intent is None:
        return Rejection("unknown_intent", "Sorry, I can't do that.", value)
    slots = {} if intent == ANSWER else _check_slots(obj.get("slots", {}), vocab)
    if isinstance(slots, Rejection):
        return slots
    confidence, clamped = _confidence(obj.get("confidence"))
    if confidence is None:
        return Rejection(
            "bad_confidence", "Sorry, I'm not sure what you meant.", repr(obj.get("confidence"))
        )
    if confidence < min_confidence:
        return Rejection("low_confidence", "Sorry, I'm not sure what you meant.", str(confidence))
    confirm = clamped or _needs_confirmation(intent, slots, vocab.sensitive_names)
    return LlmIntent(intent, slots, confidence, confirm and intent != ANSWER, raw)


def parse_intent(
    raw: str,
    *,
    allowed_intents: Collection[str],
    entity_names: Collection[str],
    area_names: Collection[str],
    sensitive_names: Collection[str],
    min_confidence: float,
) -> LlmIntent | None:
    """Turn raw model text into an :class:`LlmIntent`, or None when it must not be acted on.

    ``"answer"`` is always allowed (the utterance is a question). See the module docstring
    for every rule; the reason for a None is logged together with ``raw``.

    Raises:
        InvalidOutputError: there is no JSON object in ``raw`` at all (retry, stricter prompt).
    """
    vocab = Vocabulary(allowed_intents, entity_names, area_names, sensitive_names)
    result = check_output(raw, vocab, min_confidence)
    if isinstance(result, Rejection):
        log.info("llm output not acted on (%s %s): %r", result.reason, result.value, raw)
        return None
    log.info(
        "llm intent %s %s conf=%.2f confirm=%s raw=%r",
        result.intent,
        result.slots,
        result.confidence,
        result.needs_confirmation,
        raw,
    )
    return result
