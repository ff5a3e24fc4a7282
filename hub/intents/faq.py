"""Canned answers, fallback level 3, and the placeholder text of level 4 (design.md,
"Fallback ladder").

The answers live in a local TOML file of ``[[faq]]`` tables, each with ``questions`` (the ways
people ask) and one ``answer``; ``hub/data/faq.toml`` ships, ``[resilience] faq`` names
another. A transcript is normalised (lower case, contractions expanded, punctuation and fillers
dropped) and compared with every question by rapidfuzz: the score is the larger of
``fuzz.ratio`` (edit distance, Indel) and ``fuzz.token_sort_ratio`` (the same on sorted words),
0-100. Scorers that reward a short text contained in a long one (``token_set_ratio``,
``WRatio``, ``partial_ratio``) are avoided: they score "what" against "what can you do" at 90+.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz import fuzz, process

from hub.errors import ConfigError
from hub.paths import DATA_DIR, read_user_text

PLACEHOLDER_TEXT = "Sorry, I can't do that right now."
"""Fallback level 4: spoken from audio rendered at start-up, so it plays even when TTS is down."""

DEFAULT_PATH = DATA_DIR / "faq.toml"
"""The question/answer file that ships."""

_CONTRACTIONS = {
    "what's": "what is",
    "who's": "who is",
    "how's": "how is",
    "where's": "where is",
    "it's": "it is",
    "that's": "that is",
    "you're": "you are",
    "i'm": "i am",
    "can't": "cannot",
    "don't": "do not",
    "doesn't": "does not",
    "i've": "i have",
    "what're": "what are",
    "how're": "how are",
    "'re": " are",
}
_FILLERS = frozenset({"please", "um", "uh", "er", "erm", "hmm"})
_WORD = re.compile(r"[a-z0-9']+")


def normalize(text: str) -> str:
    """Lower case, contractions expanded, words only (no punctuation), fillers dropped."""
    words = []
    for word in _WORD.findall(text.lower().replace("’", "'")):
        word = _CONTRACTIONS.get(word, word).replace("'", "")
        words.extend(w for w in word.split() if w not in _FILLERS)
    return " ".join(words)


def _score(a: str, b: str, **_kwargs) -> float:
    """Similarity 0-100 of two normalised texts: max of ratio and token_sort_ratio."""
    return max(fuzz.ratio(a, b), fuzz.token_sort_ratio(a, b))


@dataclass(frozen=True)
class FaqMatch:
    """The best canned answer for a text: the ``question`` matched, its ``answer``, ``score``."""

    question: str
    answer: str
    score: float


def _load_entries(path: Path) -> list[tuple[str, str]]:
    """``(normalised question, answer)`` pairs from a FAQ file; ConfigError names the path."""
    try:
        data = tomllib.loads(read_user_text(path))
    except OSError as exc:
        raise ConfigError(f"resilience.faq: cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"resilience.faq: {path} is not valid TOML: {exc}") from None
    entries = data.get("faq")
    if not isinstance(entries, list) or set(data) != {"faq"}:
        raise ConfigError(f"resilience.faq: {path} must hold only [[faq]] tables")
    pairs = []
    for i, entry in enumerate(entries):
        where = f"{path}: faq[{i}]"
        questions, answer = entry.get("questions"), entry.get("answer")
        if set(entry) != {"questions", "answer"}:
            raise ConfigError(f"resilience.faq: {where}: expected keys questions and answer")
        if not isinstance(answer, str) or not answer.strip():
            raise ConfigError(f"resilience.faq: {where}.answer: expected a non-empty string")
        if (
            not isinstance(questions, list)
            or not questions
            or not all(isinstance(q, str) and normalize(q) for q in questions)
        ):
            raise ConfigError(f"resilience.faq: {where}.questions: expected a list of strings")
        pairs.extend((normalize(q), answer.strip()) for q in questions)
    return pairs


UNDERSTANDING = ("rules", "llm_intent", "llm_answer")
"""The turn's nodes whose failure makes a curated answer a fallback (level 3)."""


def curated_level(errors) -> int:
    """The fallback level of a curated (FAQ) answer in a turn with these trace ``errors``:
    3 when a rules or LLM node failed (the answer stands in for them), else 0 (it is the
    answer; ``hub stats`` counts it as one)."""
    return (
        3
        if any(isinstance(e, dict) and e.get("node") in UNDERSTANDING for e in errors or ())
        else 0
    )


class Faq:
    """Canned answers from a question/answer TOML file, fuzzy matched.

    Args:
        path: the file; None: :data:`DEFAULT_PATH`.

    Raises:
        ConfigError: the file is unreadable, not TOML, or not a list of
            ``{questions = [str, ...], answer = str}`` tables.
    """

    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path else DEFAULT_PATH
        entries = _load_entries(self.path)
        self._questions = [q for q, _ in entries]
        self._answers = [a for _, a in entries]

    def match(self, text: str, min_score: float = 85) -> FaqMatch | None:
        """The best-scoring question at or above ``min_score`` (0-100) for ``text``, or None."""
        query = normalize(text)
        if not query:
            return None
        best = process.extractOne(query, self._questions, scorer=_score, score_cutoff=min_score)
        if best is None:
            return None
        question, score, index = best
        return FaqMatch(question, self._answers[index], float(score))

    def answer(self, text: str, min_score: float = 85) -> str | None:
        """The canned answer for ``text`` (a transcript), or None when nothing is close."""
        found = self.match(text, min_score)
        return found.answer if found else None
