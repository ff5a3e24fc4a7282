"""Words that change what a sentence means: the one list the loose readings are checked with.

A strict hassil match uses every word said (Home Assistant's skip words aside). The loose
readings do not: the relaxed rules (fallback level 2) leave one word out, the fuzzy matcher
leaves words unexplained, and the LLM says nothing about which words it read. A reading that
leaves out a word of one of these classes is not what was said ("don't turn on the kitchen
light" read as "turn on the kitchen light"), so it is never acted on; the hub says it did not
understand. Only the words the reading left out count: "set a timer for 5 minutes" matched
whole by a timer sentence, or a delayed command ("turn on the light in 5 minutes"), keeps them.

:data:`WORD_CLASSES` maps a class to its phrases: regular expressions over the sentence's
normalized tokens (:func:`normalized`) joined by one space, each matching whole tokens:

- ``negation``: don't / do not / never / not / no / no longer (any ``n't``);
- ``cessation``: stop (... -ing), quit;
- ``exception``: except, but (not), other than, apart from, besides, excluding, without ...;
- ``sign``: minus, negative, a number written with a minus sign;
- ``time``: tomorrow, tonight, in the morning, at 7 pm, in 5 minutes, on Monday, later,
  after, until ... (time words a reading left out: it would act now);
- ``condition``: if, when, unless, as soon as, once ... ("tell me if the door is locked" is
  a question, not a condition);
- ``retraction``: cancel, scratch that, just kidding, nope, wait, never mind, the opposite,
  maybe, actually ...;
- ``place``: in the ..., at the ..., upstairs, downstairs (a place the reading did not read).

One more class is not a list of phrases: ``contradiction``, a left-out action or state word
whose opposite is said too (:data:`OPPOSITES`: "turn on the kitchen light off" read as "turn
the kitchen light off" by leaving out "on"). Two contradictory words are never resolved by
dropping one; a left-out word with no opposite said is no loss ("lower the volume on the tv").

Tokens are the reader's own (the relaxed rules' ``text.split()``, the fuzzy matcher's
tokens), so a token index means the same word to the reader and to this check.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from hub.intents import catalog

_NUMBER = (
    r"(?:\d[\d:.,]*|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|forty|fifty|half|quarter|a|an|a few|few|several|couple|a couple)"
)
_CLOCK = (
    r"(?:\d[\d:.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|noon|"
    r"midnight|half|quarter)"
)
_UNIT = r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)"
_DAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
# not "may" and "march": words of commands too
_MONTHS = r"(?:january|february|april|june|july|august|september|october|november|december)"

NEGATION = (
    r"\S+n't",
    r"(?:do|does|did|is|are|was|were|ca|wo|should|would|could|must|have|has|had|ai)nt",
    r"not",
    r"never",
    r"no",
    r"no longer",
    r"none",
    r"nothing",
    r"neither",
    r"nor",
    r"cannot",
)
"""Words that say a thing must not be done."""

CESSATION = (r"stop(?: \S+ing)?", r"quit", r"cease")
"""Words that say a thing must stop being done ("stop turning on the lights"): a reading that
leaves them out does the thing instead. Not checked on the LLM's readings, whose intent is
often the stopping itself (``HassMediaPause`` for "stop the music")."""

EXCEPTION = (
    r"except(?: for)?",
    r"excepting",
    r"excluding",
    r"exclude",
    r"but",
    r"besides",
    r"apart from",
    r"aside from",
    r"other than",
    r"save for",
    r"instead(?: of)?",
    r"rather than",
    r"without",
)
"""Words that leave something out of a group or put something else in its place."""

SIGN = (r"minus", r"negative", r"-\d\S*", r"below zero")
"""Words that make a number negative."""

TIME = (
    r"tomorrow",
    r"tonight",
    r"yesterday",
    r"later(?: on)?",
    r"soon",
    r"afterwards?",
    r"eventually",
    r"overnight",
    r"midnight",
    r"noon",
    r"midday",
    r"mornings?",
    r"afternoons?",
    r"evenings?",
    r"(?:at|by|every|each|last|this) night",
    r"dawn",
    r"dusk",
    r"sunrise",
    r"sunset",
    r"weekends?",
    r"(?:on |next |this |every )?" + _DAYS,
    r"(?:on |in )?" + _MONTHS,
    r"\d+(?:st|nd|rd|th)",
    r"(?:next|this|last) (?:week|month|year|time)",
    r"(?:in|after|for|within) (?:the next )?" + _NUMBER + r"(?: and a half)? " + _UNIT,
    r"(?:in|after|for) (?:a|an) (?:little |short |few )?(?:bit|while|moment|moments|jiffy)",
    _UNIT,
    r"(?:at|by|until|till|til|from|around|before|after) " + _CLOCK,
    r"(?:half|quarter) (?:past|to)",
    _CLOCK + r"(?: \S+)? (?:am|pm|a m|p m|o'clock|oclock)",
    r"\d+(?::\d+)?(?:am|pm)",
    r"o'clock",
    r"oclock",
    r"until",
    r"till",
    r"before",
    r"after",
)
"""Words that put an action at another time than now."""

CONDITION = (
    r"(?<!tell me )(?<!check )(?<!see )(?<!know )(?<!ask )(?<!wonder )(?:if|whether)",
    r"(?<!know )(?<!tell me )when(?! (?:does|do|did|is|are|was|were|will|can|should|would)\b)",
    r"whenever",
    r"unless",
    r"as soon as",
    r"as long as",
    r"in case",
    r"once",
    r"while",
    r"provided",
)
"""Words that make an action depend on something ("tell me if ..." and "when does ..." ask:
they are no condition)."""

RETRACTION = (
    r"cancel(?:l?ed)?",
    r"scratch that",
    r"(?:just )?(?:kidding|joking)",
    r"nope",
    r"wait",
    r"hold on",
    r"hang on",
    r"never ?mind",
    r"forget (?:it|that)",
    r"undo",
    r"opposite",
    r"reverse",
    r"maybe",
    r"perhaps",
    r"actually",
)
"""Words that take a command back, doubt it or turn it around ("turn on the kitchen light ...
scratch that", "the opposite of on"): a reading that leaves them out does what was withdrawn.
Not checked on the LLM's readings (``HassCancelTimer``'s "cancel")."""

PLACE = (r"(?:in|at|inside|outside) (?:the|my|our) \S+", r"upstairs", r"downstairs")
"""A place a reading left out ("turn off the lights in the garden" where the home has no
garden): the reading would act somewhere else than where it was asked (found by the breaker:
"turn on the office light and turn off the lights in the garden" read as two commands on the
office light). A place the home has is read, not left out."""

_OPPOSITE_PAIRS = (
    ({"on"}, {"off"}),
    ({"open", "opened"}, {"close", "closed", "shut"}),
    ({"lock", "locked"}, {"unlock", "unlocked"}),
    ({"up"}, {"down"}),
    (
        {"raise", "increase", "louder", "brighter", "brighten", "higher", "warmer"},
        {"lower", "decrease", "quieter", "dimmer", "dim", "darker", "softer", "cooler"},
    ),
    ({"mute"}, {"unmute"}),
    ({"pause"}, {"resume", "unpause"}),
    ({"next"}, {"previous"}),
)
OPPOSITES: Mapping[str, frozenset[str]] = {
    word: frozenset(other)
    for one, two in _OPPOSITE_PAIRS
    for a, other in ((one, two), (two, one))
    for word in a
}
"""Action and state word -> the words that say the opposite (normalized tokens)."""

CONTRADICTION = "contradiction"
"""The class of a left-out word whose opposite is said too (see the module)."""

WORD_CLASSES: Mapping[str, tuple[str, ...]] = {
    "negation": NEGATION,
    "cessation": CESSATION,
    "exception": EXCEPTION,
    "sign": SIGN,
    "time": TIME,
    "condition": CONDITION,
    "retraction": RETRACTION,
    "place": PLACE,
}
"""Class name -> its phrases (regular expressions over normalized tokens), in the order
checked: a word in two classes counts as the first."""

TIME_SLOTS = frozenset(
    {
        "hours",
        "minutes",
        "seconds",
        "duration_s",
        "start_hours",
        "start_minutes",
        "start_seconds",
        "alarm_hour",
        "alarm_minute",
        "alarm_period",
        "alarm_day",
        "alarm_repeat",
        "snooze_minutes",
        "conversation_command",
    }
)
"""Slots that carry a time: an intent with one of them takes time words (timers, alarms,
reminders, delayed commands)."""

NEGATIVE_OK = frozenset({"temperature", "brightness_step", "volume_step"})
"""Numeric slots a negative value is meaningful for (every other one is refused below 0)."""


_PATTERNS = {
    name: tuple(re.compile(r"(?<!\S)(?:" + phrase + r")(?!\S)") for phrase in phrases)
    for name, phrases in WORD_CLASSES.items()
}
"""Each phrase on its own (phrases overlap: "at 7" and "7 pm" in "at 7 pm")."""


@dataclass(frozen=True)
class MeaningLost:
    """A loose reading that left out words which change the meaning: not acted on.

    ``word_class`` is a key of :data:`WORD_CLASSES`; ``words`` the left-out words of it, as
    said; ``intent`` what the reading would have been.
    """

    word_class: str
    words: tuple[str, ...]
    intent: str = ""


def normalized(token: str) -> str:
    """``token`` as the phrases see it: lower case, straight apostrophes, no surrounding
    punctuation ("Light," -> "light", "p.m." -> "pm"); a leading minus of a number is kept."""
    text = token.casefold().replace("’", "'").replace("−", "-")
    text = re.sub(r"^[^\w'-]+|[^\w']+$", "", text)
    text = re.sub(r"^-(?!\d)", "", text)
    return text if re.fullmatch(r"-?\d[\d.,:]*", text) else text.replace(".", "")


def word_classes(tokens: Sequence[str]) -> list[str | None]:
    """The class of each token (None: no class): every token a phrase of a class covers."""
    words = [normalized(t) for t in tokens]
    starts, offset = [], 0
    for word in words:
        starts.append(offset)
        offset += len(word) + 1
    joined = " ".join(words)
    found: list[str | None] = [None] * len(words)
    for name, patterns in _PATTERNS.items():
        for m in (m for pattern in patterns for m in pattern.finditer(joined)):
            for i, start in enumerate(starts):
                inside = start < m.end() and start + len(words[i]) > m.start()
                if inside and words[i] and found[i] is None:
                    found[i] = name
    return found


def ignored_meaning(
    tokens: Sequence[str], ignored: Iterable[int], allowed: Collection[str] = ()
) -> MeaningLost | None:
    """The meaning a reading lost by leaving out the tokens ``ignored`` (indexes into
    ``tokens``), or None when none of them is in a class (fillers: "please", "thanks", "um").

    Args:
        tokens: the sentence's tokens, as the reader split it.
        ignored: indexes of the tokens the reading did not use.
        allowed: classes the reading carries anyway (not counted).
    """
    classes = word_classes(tokens)
    left_out = sorted(i for i in set(ignored) if 0 <= i < len(tokens))
    lost = [(classes[i], tokens[i]) for i in left_out]
    lost = [(c, w) for c, w in lost if c is not None and c not in allowed]
    if lost:
        first = lost[0][0]
        return MeaningLost(first, tuple(w for c, w in lost if c == first))
    if CONTRADICTION in allowed:
        return None
    return contradicted(tokens, left_out)


def tolerated(intents: Iterable[str]) -> tuple[str, ...]:
    """The classes a reading of ``intents`` may leave out anyway: ``contradiction`` when none
    of them changes anything (a question: "is the garage door open or closed")."""
    return () if any(catalog.has_side_effects(i) for i in intents) else (CONTRADICTION,)


def contradicted(tokens: Sequence[str], left_out: Iterable[int]) -> MeaningLost | None:
    """A ``contradiction`` when a token of ``left_out`` (indexes into ``tokens``) is an action
    or state word whose opposite (:data:`OPPOSITES`) is another token of the sentence; None
    otherwise."""
    words = [normalized(t) for t in tokens]
    for i in left_out:
        against = OPPOSITES.get(words[i], frozenset())
        if any(w in against for j, w in enumerate(words) if j != i):
            return MeaningLost(CONTRADICTION, (tokens[i],))
    return None


def negative_value(slots: Mapping[str, object]) -> MeaningLost | None:
    """A numeric slot below 0 that cannot be negative (a timer of "minus 5 minutes"), as a
    ``sign`` loss; None when every number is in range."""
    for key, value in slots.items():
        number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
        if number < 0 and key not in NEGATIVE_OK:
            return MeaningLost("sign", (f"{key}={value}",))
    return None


def takes_time(intent: str) -> bool:
    """True when ``intent`` has a slot of :data:`TIME_SLOTS` (its readings carry time words)."""
    return intent in catalog.names() and bool(TIME_SLOTS & set(catalog.slots_of(intent)))


def unread_meaning(
    transcript: str, intent: str, slots: Mapping[str, object], classes: Collection[str]
) -> MeaningLost | None:
    """For a reading that names no words (the LLM's): the first of ``classes`` found in
    ``transcript`` outside the words its text slots carry ("add don't forget to the list"
    keeps "don't" in ``item``); ``time`` counts only for an intent that does not
    :func:`takes_time`. None when nothing of them is left.
    """
    tokens = transcript.split()
    carried = _carried(tokens, [v for v in slots.values() if isinstance(v, str)])
    allowed = {*WORD_CLASSES, CONTRADICTION} - set(classes) | set(tolerated([intent]))
    if takes_time(intent):
        allowed.add("time")
    ignored = [i for i in range(len(tokens)) if i not in carried]
    lost = ignored_meaning(tokens, ignored, allowed)
    return None if lost is None else MeaningLost(lost.word_class, lost.words, intent)


def _carried(tokens: Sequence[str], values: Iterable[str]) -> set[int]:
    """Indexes of ``tokens`` inside an occurrence of one of ``values`` (word for word)."""
    words = [normalized(t) for t in tokens]
    carried: set[int] = set()
    for value in values:
        said = [w for w in (normalized(t) for t in value.split()) if w]
        n = len(said)
        for i in range(len(words) - n + 1 if n else 0):
            if words[i : i + n] == said:
                carried.update(range(i, i + n))
    return carried


def phrases_pattern(phrases: Iterable[str]) -> re.Pattern[str]:
    """A case-insensitive pattern finding any of ``phrases`` in raw text (word bounded), for
    the checks that look at a whole sentence before reading it."""
    return re.compile(r"\b(?:" + "|".join(phrases) + r")\b", re.IGNORECASE)
