"""Sensitive actions are asked back on every path (rules, fuzzy rules, LLM; text and voice).

A match that would change a ``sensitive`` entity of ``[home]`` (one that did not opt out with
``confirm = false``) is not carried out: the hub asks "Do you want me to unlock the Front
Door?" and remembers the matches in the turn's :class:`~hub.core.conversation.Conversation`.
Only a yes as the *next* turn of the same conversation, within its confirmation window, does
them; "no", silence (a turn with no speech) or anything else cancels them.

Which intents change an entity is decided by name today (every intent but the read-only
ones below); the intent catalog will say so per intent.
"""

from __future__ import annotations

import re

from hub.act.alarm_intents import asked_back
from hub.graph.answers import CANCELLED, NOT_UNDERSTOOD, NOTHING_TO_CONFIRM
from hub.graph.state import TurnState
from hub.home import Home
from hub.intents.delay import in_words
from hub.intents.followup import bare_slot, slot_answer
from hub.intents.match import resolve_targets

READ_ONLY_INTENTS = frozenset(
    {
        "HassGetState",
        "HassGetWeather",
        "HassClimateGetTemperature",
        "HassGetCurrentTime",
        "HassGetCurrentDate",
        "HassTimerStatus",
        "HassNevermind",
    }
)
"""Intents that only read (their answers never change an entity)."""

YES_WORDS = frozenset(
    {
        "yes",
        "yeah",
        "yep",
        "yup",
        "sure",
        "ok",
        "okay",
        "confirm",
        "correct",
        "absolutely",
        "certainly",
        "affirmative",
        "right",
    }
)
"""Words that say yes on their own."""
NO_WORDS = frozenset(
    {"no", "nope", "nah", "cancel", "don't", "dont", "stop", "never", "nevermind", "negative"}
)
"""Words that say no on their own."""
FILLER_WORDS = frozenset(
    {
        "please",
        "do",
        "it",
        "that",
        "go",
        "ahead",
        "thanks",
        "thank",
        "you",
        "mind",
        "not",
        "i",
        "of",
        "course",
        "sir",
        "hub",
        "then",
    }
)
"""Words that may come with a yes or a no ("yes please", "no thanks", "do it", "never mind")."""
_PHRASES = {
    "do it": True,
    "go ahead": True,
    "please do": True,
    "of course": True,
    "never mind": False,
}


NOTHING_TO_CANCEL = "Okay."
"""The answer to a "no" (or "never mind") when no question is waiting: nothing is done."""


def confirmation_answer(text: str) -> bool | None:
    """True for a yes, False for a no, None for anything else (which is a new request).

    Every word must be a yes/no word or a filler word: "yes please", "do it", "sure" are
    yes; "no", "no thanks", "cancel that", "never mind", "don't" are no; "yes turn on the
    light" or "no yes" is neither.
    """
    said = " ".join(re.sub(r"[^a-z' ]", " ", text.lower()).split())
    words = set(said.split())
    if not words or not words <= YES_WORDS | NO_WORDS | FILLER_WORDS:
        return None
    has_yes = bool(words & YES_WORDS) or any(v and p in said for p, v in _PHRASES.items())
    has_no = bool(words & NO_WORDS) or "not" in words or "never mind" in said
    if has_no and not (words & YES_WORDS):
        return False
    if has_yes and not has_no:
        return True
    return None


def sensitive_targets(home, match) -> tuple[str, ...]:
    """The entities ``match`` would change that must be asked about first (maybe none).

    Args:
        home: the :class:`hub.home.Home`.
        match: an :class:`hub.intents.rules.IntentMatch` from any path.
    """
    if match.intent in READ_ONLY_INTENTS:
        return ()
    if match.command is not None:  # a delayed command: its command's targets (hub.intents.delay)
        return sensitive_targets(home, match.command)
    names = list(match.entities)
    try:
        found = resolve_targets(
            home, match.intent, dict(match.slots), match.response, match.context_slots
        )
        names += [n for n in found.entities if n not in names]
    except (KeyError, TypeError, ValueError):  # unresolvable slots: the named entities only
        pass
    out = []
    for name in names:
        entity = home.entity(name)
        if entity is not None and entity.sensitive and entity.confirm:
            out.append(entity.name)
    return tuple(out)


def needs_confirmation(home, matches, confirmed=()) -> bool:
    """True when any of ``matches`` would change an entity that must be asked about first.

    ``confirmed``: entity names already confirmed for this turn (a delayed command confirmed
    when it was set); only the other sensitive targets still need a yes.
    """
    return any(set(sensitive_targets(home, m)) - set(confirmed) for m in matches)


_VERBS = {
    ("lock", "HassTurnOn"): "lock",
    ("lock", "HassTurnOff"): "unlock",
    ("cover", "HassTurnOn"): "open",
    ("cover", "HassTurnOff"): "close",
    ("valve", "HassTurnOn"): "open",
    ("valve", "HassTurnOff"): "close",
    ("HassTurnOn", None): "turn on",
    ("HassTurnOff", None): "turn off",
    ("HassSetPosition", None): "move",
    ("HassLightSet", None): "change",
}

_VERB_INTENTS = frozenset(k[1] or k[0] for k in _VERBS) - {None}
"""Intents asked back as a verb on devices ("turn on the Bed Light"); any other intent is
asked back in the words it was heard in ("set a timer for 5 minutes")."""


def _numbers(slots) -> bool:
    """True when a slot holds a number (a brightness, position, volume, temperature): the
    question must say it ("set the kitchen light to 60 percent", not "change the Kitchen
    Light"), since a misheard number is what it asks about."""
    return any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in slots.values())


def _one_question(home, match, names: tuple[str, ...]) -> str:
    """``"unlock the Front Door"`` for one match."""
    slots = match.slots
    if match.command is not None:  # a delayed command: its command, then when
        return f"{_one_question(home, match.command, names)} in {in_words(slots)}"
    if slots.get("conversation_command"):
        return f"{slots['conversation_command']} in {in_words(slots)}"
    alarm = asked_back(match.intent, slots)  # an alarm or reminder: what it would set
    if alarm is not None:
        return alarm
    if match.text and (match.intent not in _VERB_INTENTS or _numbers(slots)):
        return match.text  # a timer, a list, a number: in the words heard, not "change the X"
    first = home.entity(names[0]) if names else None
    domain = first.domain if first is not None else slots.get("domain")
    verb = _VERBS.get((domain, match.intent)) or _VERBS.get((match.intent, None), "change")
    if names:
        return f"{verb} the " + " and the ".join(names)
    if slots.get("area"):
        return f"{verb} the {domain or 'device'}s in the {slots['area']}"
    return f"{verb} every {domain or 'device'}"


def question(home, matches) -> str:
    """ "Do you want me to unlock the Front Door?" for the matches that need a yes.

    Matches with no sensitive target (an LLM match asked back for another reason, such as
    an area-wide action) are described by their slots.
    """
    parts = []
    for match in matches:
        names = sensitive_targets(home, match) or tuple(match.entities)
        parts.append(_one_question(home, match, names))
    return "Do you want me to " + " and ".join(parts) + "?"


def question_answer(home: Home, state: TurnState) -> dict | None:
    """The turn's state update when its transcript answers the previous turn's question, else
    None (a new request).

    A slot question ("Which area do you mean?", :mod:`hub.intents.followup`) is answered by a
    slot value or cancelled by a no; a confirmation ("Do you want me to ...?") by a yes (its
    matches, ``confirmed``) or a no (:data:`CANCELLED`). A yes with no question waiting is
    :data:`NOTHING_TO_CONFIRM`. A bare area or entity name that answers no question
    (:func:`hub.intents.followup.bare_slot`) is no command: :data:`NOT_UNDERSTOOD`, nothing
    done, whatever a rule, the fuzzy matcher or the LLM would read into it.
    """
    said = state.get("transcript") or ""
    answer = confirmation_answer(said)
    answered = slot_answer(home, state.get("asked"), said, answer is False)
    if answered is not None:
        return answered
    pending = state.get("pending")
    if pending and answer is True:
        return {"matches": list(pending), "confirmed": True, "source": pending[0].source or "rules"}
    if pending and answer is False:
        return {"matches": [], "response": CANCELLED, "source": "rules"}
    if not pending and answer is True:
        return {"matches": [], "response": NOTHING_TO_CONFIRM, "source": "rules"}  # a stray yes
    if answer is None and bare_slot(home, said) is not None:  # BC-22: a name is no command
        return {"matches": [], "response": NOT_UNDERSTOOD, "source": "rules", "transcript": said}
    return None
