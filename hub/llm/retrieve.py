"""Which of the home's entities and areas one turn's prompt needs (a home of 500 entities
does not fit a 2048-token context, and a small model reads a short list better).

A small home (at most :data:`FULL_HOME_MAX` entities) is given whole, in the fixed prompt
prefix (cached once). A larger one is given per turn: the entities whose name words, area or
domain words occur in the transcript, scored and capped (:data:`MAX_ENTITIES`,
:data:`MAX_AREAS`); it goes after the cached prefix, so the prefix cache still works. This is
lexical retrieval (bag-of-words overlap, as in BM25's term matching, Robertson & Zaragoza
2009, without the corpus weights: names are short and unique).
"""

from __future__ import annotations

import re

FULL_HOME_MAX = 24
"""Homes with at most this many entities are described whole in the fixed prefix."""
MAX_ENTITIES = 10
"""Most entities retrieved for one turn."""
MAX_AREAS = 6
"""Most areas retrieved for one turn."""

KEEP_SHARE = 0.6
"""An entity is kept only when it scores at least this share of the best entity's score."""

DOMAIN_WORDS = {
    "light": {"light", "lamp", "bulb", "bright", "dim", "brightness"},
    "switch": {"switch", "plug", "socket", "outlet"},
    "fan": {"fan"},
    "cover": {"blind", "curtain", "shade", "shutter", "garage", "awning", "window"},
    "lock": {"lock", "locked", "unlock", "door"},
    "climate": {"temperature", "thermostat", "heating", "heat", "cool", "warm", "cold", "hvac"},
    "sensor": {"temperature", "humidity", "sensor", "level", "battery"},
    "binary_sensor": {"window", "door", "motion", "open", "closed", "leak"},
    "media_player": {"tv", "music", "speaker", "song", "volume", "play", "pause", "track"},
    "weather": {"weather", "rain", "sunny", "forecast", "outside"},
    "todo": {"list", "shopping", "todo"},
    "vacuum": {"vacuum", "clean"},
    "scene": {"scene", "mood"},
    "script": {"script", "run"},
    "valve": {"valve", "water"},
}
"""Words that point at a domain (singular forms; a trailing "s" is dropped first)."""


def _words(text: str) -> set[str]:
    out = set()
    for w in re.findall(r"[a-z0-9']+", text.lower()):
        out.add(w)
        if len(w) > 3 and w.endswith("s"):
            out.add(w[:-1])
    return out


def is_large(home) -> bool:
    """True when ``home`` is described per turn rather than whole."""
    return len(home.entities) > FULL_HOME_MAX


def relevant(
    home, text: str, max_entities: int = MAX_ENTITIES, max_areas: int = MAX_AREAS
) -> tuple[list[dict], list[str]]:
    """``(entities, area names)`` of ``home`` that ``text`` may be about, best first.

    Score of an entity: 3 per word of its name in the text (+5 when the whole name is),
    2 when its area is named, 1 when a word of its domain occurs. Entities scoring less than
    0.6 of the best score (:data:`KEEP_SHARE`) are left out: when a name or an area was said,
    the entities matched by a domain word alone ("temperature": every sensor) are noise that
    costs prompt tokens on every call (each is evaluated after the cached prefix). Areas are
    the named ones, then those of the entities kept.
    """
    said = _words(text)
    lowered = " ".join(re.findall(r"[a-z0-9']+", text.lower()))
    named_areas = [a["name"] for a in home.areas if _words(a["name"]) <= said]
    scored = []
    for i, entity in enumerate(home.entities):
        name = entity["name"]
        score = 3 * len(_words(name) & said) + (5 if name.lower() in lowered else 0)
        score += 2 if entity.get("area") in named_areas else 0
        score += 1 if DOMAIN_WORDS.get(entity["domain"], set()) & said else 0
        if score:
            scored.append((-score, i, entity))
    floor = KEEP_SHARE * max((-s[0] for s in scored), default=0)
    ranked = sorted((s for s in scored if -s[0] >= floor), key=lambda s: (s[0], s[1]))
    kept = [e for _, _, e in ranked][:max_entities]
    areas = list(dict.fromkeys(named_areas + [e["area"] for e in kept if e.get("area")]))
    return kept, areas[:max_areas]
