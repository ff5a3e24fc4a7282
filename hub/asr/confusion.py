"""Never a wrong action from one misheard word: the acoustic margin of a command's reading.

A command whose reading differs from a grammar sentence only in a word that reverses or
changes the action ("turn on" / "turn off", "open" / "close", "lock" / "unlock", a number)
is acted on only when the audio clearly prefers it. Both sentences are force-aligned to the
segment's audio (PocketSphinx's alignment search) and their acoustic scores compared; a
margin below ``settings.confusion_margin`` marks the segment ``unsure`` and the turn asks
back ("Do you want me to turn on ...?", :func:`hub.graph.build._act_or_ask`) instead of
guessing. This is the classic two-hypothesis likelihood-ratio test
between competing word strings (a word posterior from the n-best, Wessel et al.,
"Confidence measures for large vocabulary continuous speech recognition", IEEE Trans.
Speech Audio Process. 2001), restricted to the words whose swap changes what the home does.

Competitors of a reading (:func:`competitors`): the reading with one word of a
:data:`SWAPS` pair replaced by its other member, the reading with one number replaced by a
number that sounds alike (:func:`hub.asr.numbers.number_rivals`: "15" / "50", "6" / "60"),
and n-best alternatives of the same length that differ from the reading only in such words
or in numbers, each kept only when the grammar holds it.

A reading whose number has a -teen/-ty partner the grammar holds ("15" / "50") is always
``unsure``: on the synthetic number set (BENCHMARKS.md, "Numbers said in commands") the
margins of right readings over their partner (-13 to +46) and of wrong ones (-23 to +9)
overlap, and Whisper tiny.en hears the hub's own voice's "seventy" as "17" too. The second
pass reads it again; it is done only when both recognizers agree and the alignment leans to
it (:data:`hub.asr.second_pass.NUMBER_MARGIN`), else asked back.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path

from hub.asr.coverage import fsg_accepts
from hub.asr.numbers import NUMBER_WORDS, number_rivals, teen_ty_swap

_LOG = logging.getLogger(__name__)

SWAPS = (
    ("on", "off"),
    ("open", "close"),
    ("lock", "unlock"),
    ("up", "down"),
    ("yes", "no"),
    ("pause", "unpause"),
    ("start", "stop"),
    ("raise", "lower"),
)
"""Word pairs whose swap turns a command into a different (often the opposite) action."""

NUMBERS = NUMBER_WORDS
"""Number words: a misheard number is a wrong brightness, volume or duration."""

MAX_COMPETITORS = 5
"""Competitors aligned per segment at most (each alignment costs about one decode / 5)."""


def _partner() -> dict[str, str]:
    pairs = {}
    for a, b in SWAPS:
        pairs[a], pairs[b] = b, a
    return pairs


_PARTNER = _partner()


def _critical(word: str) -> bool:
    return word in _PARTNER or word in NUMBERS or word.isdigit()


def competitors(
    text: str,
    alternatives: Iterable[str],
    accepts: Callable[[list[str]], bool],
    limit: int = MAX_COMPETITORS,
) -> list[str]:
    """Grammar sentences that differ from ``text`` only in action-changing words.

    Args:
        text: the segment's best reading (grammar words, space-separated).
        alternatives: its n-best readings; a trailing conjunction (``&``) is dropped.
        accepts: ``accepts(words) -> bool``, True when the grammar holds the word list.
        limit: most competitors returned.
    Returns:
        Up to ``limit`` distinct sentences other than ``text``: swaps first, then numbers
        that sound alike, then n-best alternatives.
    """
    words = text.split()
    found: list[str] = []
    for i, word in enumerate(words):
        if word in _PARTNER:
            found.append(" ".join([*words[:i], _PARTNER[word], *words[i + 1 :]]))
    found += number_rivals(text)
    for alt in alternatives:
        other = alt.removesuffix(" &").split()
        if (
            len(other) == len(words)
            and other != words
            and all(
                a == b or (_critical(a) and _critical(b)) for a, b in zip(words, other, strict=True)
            )
        ):
            found.append(" ".join(other))
    unique = [c for c in dict.fromkeys(found) if c != text]
    return [c for c in unique if accepts(c.split())][:limit]


def margin(score: Callable[[str], float | None], text: str, rivals: list[str]) -> float | None:
    """The smallest acoustic margin of ``text`` over ``rivals``.

    Args:
        score: ``score(sentence)`` -> the total acoustic log-likelihood of the sentence
            force-aligned to the segment (natural log x 1000, the units of
            :func:`hub.asr.pocketsphinx_engine.phone_loop_llr` times frames), None when it
            cannot be aligned.
        text: the reading; rivals: its competitors.
    Returns:
        ``score(text) - max(score(rival))``; None without a rival that aligned (or when
        ``text`` itself did not align).
    """
    own = score(text) if rivals else None
    if own is None:
        return None
    others = [s for s in map(score, rivals) if s is not None]
    return own - max(others) if others else None


EXTRA_MARGIN = {frozenset({"on", "off"}): 10.0}
"""Margin added to ``settings.confusion_margin`` when the rival differs by this pair: the
en-us model hears a weak "off" as "on" (the /f/), and on the synthetic calibration set right
"off" readings won by as little as wrong "on" ones (margins -13 to +29; see BENCHMARKS.md)."""


def extra_margin(text: str, rival: str) -> float:
    """:data:`EXTRA_MARGIN` for the words in which ``rival`` differs from ``text``."""
    pairs = list(zip(text.split(), rival.split(), strict=False))  # a rival may be longer
    changed = frozenset(a for a, b in pairs if a != b) | frozenset(b for a, b in pairs if a != b)
    return max((v for pair, v in EXTRA_MARGIN.items() if changed and changed <= pair), default=0.0)


def deletions(text: str) -> list[str]:
    """``text`` without each of its action-changing words (:data:`SWAPS` members, numbers).

    A grammar completes a partial sentence with its likeliest ending ("kitchen light" is read
    "kitchen light off"); when the reading without the word fits the audio as well, the word
    was not said, and the turn must not act on it. These rivals need not be grammar sentences:
    they are only aligned. One-word readings have no deletion.
    """
    words = text.split()
    if len(words) < 2:
        return []
    return [" ".join(words[:i] + words[i + 1 :]) for i, w in enumerate(words) if _critical(w)]


def unsure(
    score: Callable[[str], float | None], text: str, alternatives, accepts, threshold: float
) -> bool:
    """True when ``text`` should not be acted on: a competitor that changes the action
    (:func:`competitors`) scores within ``threshold`` (plus :func:`extra_margin`) of it, or
    above it, or when ``text`` itself cannot be aligned but a rival can, or when a
    competitor is ``text`` with a number swapped for its -teen/-ty partner (never cleared by
    the alignment alone: see the module doc). ``score(sentence)``: its acoustic score
    force-aligned to the segment (ln × 1000,
    :meth:`hub.asr.sphinx_decoder.SphinxDecoder.align`), None when it cannot be aligned."""
    rivals = competitors(text, alternatives, accepts) + deletions(text)
    if not rivals:
        return False
    if any(teen_ty_swap(text, rival) for rival in rivals):
        return True  # -teen/-ty: see the module doc
    own = score(text)
    if own is None:  # the reading cannot be forced onto the audio: unsure if a rival can
        return any(score(rival) is not None for rival in rivals)
    for rival in rivals:
        other = score(rival)
        _LOG.debug(
            "confusion margin of %r over %r: %s",
            text,
            rival,
            None if other is None else own - other,
        )
        if other is not None and own - other < threshold + extra_margin(text, rival):
            return True
    return False


OPEN_MESSAGE = ("remind me ",)
"""Beginnings of readings that carry a free-text message (a reminder's, issue 22). The grammar
holds only the built-in messages (``hub/asr/data/reminders_en.txt``) and fits any other one
onto the nearest, time included (measured: "remind me to book a table at 7 pm" heard as
"remind me to pick up the kids at 1 pm"), so such a reading is always ``unsure``: the
open-vocabulary second pass reads it again, and it is done only when both readings agree,
else asked back."""


def checked(engine, segment, score: Callable[[str], float | None]):
    """``segment`` (a :class:`hub.asr.base.Segment` of ``engine``'s grammar search), marked
    ``unsure`` when it is an accepted command that :func:`unsure` doubts; ``score`` aligns a
    sentence to the segment's audio.

    Questions (sentences without side effects) and rejected segments are returned as they
    are; so is everything when ``engine.settings.confusion_margin`` is None. A reading with a
    free-text message (:data:`OPEN_MESSAGE`) is always unsure.
    """
    threshold = getattr(engine.settings, "confusion_margin", None)
    if (
        threshold is None
        or engine.vocab is None
        or segment.rejected
        or not segment.text
        or engine.is_question(segment.text)
    ):
        return segment
    if segment.text.startswith(OPEN_MESSAGE):
        return dataclasses.replace(segment, unsure=True)
    grammar = grammar_text(engine.vocab.fsg_path)

    if unsure(
        score,
        segment.text,
        segment.alternatives,
        lambda words: fsg_accepts(grammar, words),
        threshold,
    ):
        return dataclasses.replace(segment, unsure=True)
    return segment


@lru_cache(maxsize=2)
def grammar_text(path: Path) -> str:
    """The FSG text at ``path`` (read once per vocabulary)."""
    return path.read_text(encoding="utf-8")
