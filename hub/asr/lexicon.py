"""Pronunciations for the closed vocabulary: CMUdict, numbers spelled out, compound names.

Words come from the CMU Pronouncing Dictionary that ships in the ``pocketsphinx`` wheel
(``model/en-us/cmudict-en-us.dict``, ARPAbet phones). A number token ("75") is pronounced as
its English spelling (hassil's RBNF engine: "seventy-five"), so the recognizer outputs digits
the rules read directly. A word missing from CMUdict ("ecobee") is split into the fewest
dictionary words that spell it ("eco" + "bee"), the usual fallback when no G2P model ships.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from hassil.numbers import get_rbnf_engine

_NUMBER = re.compile(r"^\d+(\.\d+)?$")


def cmudict_path() -> Path:
    """Path of the CMUdict file inside the pocketsphinx wheel."""
    # lazy: pocketsphinx loads only with its engine
    from pocketsphinx import get_model_path

    return Path(get_model_path("en-us")) / "cmudict-en-us.dict"


@lru_cache(maxsize=2)
def load_cmudict(path: str | None = None) -> dict[str, tuple[str, ...]]:
    """word -> phone strings (all variants, ``"HH AH L OW"``), first variant first."""
    entries: dict[str, list[str]] = {}
    with open(path or cmudict_path(), encoding="utf-8") as lines:
        for line in lines:
            parts = line.split()
            if len(parts) < 2:
                continue
            word = re.sub(r"\(\d+\)$", "", parts[0])
            entries.setdefault(word, []).append(" ".join(parts[1:]))
    return {word: tuple(variants) for word, variants in entries.items()}


def spell_number(token: str, language: str = "en") -> str:
    """English words for a number token: ``"75"`` -> ``"seventy five"``."""
    text = (
        get_rbnf_engine(language).format_number(float(token) if "." in token else int(token)).text
    )
    return re.sub(r"[-,]", " ", text)


def pronounce(word: str, cmudict: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """Pronunciations of ``word`` (ARPAbet strings), with cot-caught merged variants
    (``AO`` also as ``AA``: "off" = AO F | AA F); empty when none can be made."""
    variants = _pronounce(word, cmudict)
    merged = tuple(v.replace("AO", "AA") for v in variants if "AO" in v.split())
    return tuple(dict.fromkeys(variants + merged))


def _pronounce(word: str, cmudict: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    if word in cmudict:
        return cmudict[word]
    if _NUMBER.match(word):
        return _join([_pronounce(part, cmudict) for part in spell_number(word).split()])
    parts = split_compound(word, cmudict)
    return _join([cmudict[part] for part in parts]) if parts else ()


def _join(variant_lists: list[tuple[str, ...]]) -> tuple[str, ...]:
    """Concatenate the first variant of every part (one pronunciation for a compound)."""
    if not variant_lists or any(not variants for variants in variant_lists):
        return ()
    return (" ".join(variants[0] for variants in variant_lists),)


def split_compound(word: str, cmudict: dict, min_part: int = 2) -> list[str] | None:
    """Fewest dictionary words (each >= ``min_part`` letters) that spell ``word``, or None.

    Dynamic programming over split points (minimum number of parts).
    """
    if not word.isalpha():
        return None
    best: list[list[str] | None] = [None] * (len(word) + 1)
    best[0] = []
    for end in range(1, len(word) + 1):
        for start in range(0, end - min_part + 1):
            head = best[start]
            part = word[start:end]
            shorter = head is not None and (best[end] is None or len(head) + 1 < len(best[end]))
            if shorter and part in cmudict:
                best[end] = head + [part]
    return best[len(word)]


def number_words_map(numbers: list[str]) -> dict[str, str]:
    """Spelled form -> digits (``"seventy five"`` -> ``"75"``), to turn words into digits."""
    return {spell_number(token): token for token in numbers}


def words_to_digits(text: str, spelled: dict[str, str]) -> str:
    """Replace spelled numbers in ``text`` by digits, longest match first."""
    words = text.split()
    out: list[str] = []
    i = 0
    longest = max((len(key.split()) for key in spelled), default=0)
    while i < len(words):
        for size in range(min(longest, len(words) - i), 0, -1):
            digits = spelled.get(" ".join(words[i : i + size]))
            if digits is not None:
                out.append(digits)
                i += size
                break
        else:
            out.append(words[i])
            i += 1
    return " ".join(out)
