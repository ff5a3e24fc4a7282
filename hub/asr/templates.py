"""Sentence templates for the recognizer's closed vocabulary, expanded for one home.

Source of the templates: ``home_assistant_intents`` ``speech_to_phrase/<lang>.json`` (the
sentences of the speech-to-phrase project, a curated subset of Home Assistant's intents) plus
``data/sentences_<lang>.yaml`` (extra phrasings the rules also accept). Templates are hassil
syntax; they are expanded into *patterns*: token tuples where plain tokens are words and
``{...}`` tokens are placeholders for the home's names, areas, number ranges and open slots,
so the expansion stays small and numbers/names are filled in by grammar rules
(the Rhasspy / speech-to-phrase approach of a closed grammar built from the intents).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from importlib import resources

import yaml
from hassil import (
    Alternative,
    Intents,
    ListReference,
    Permutation,
    RangeSlotList,
    RuleReference,
    Sequence,
    TextChunk,
    TextSlotList,
    WildcardSlotList,
)
from home_assistant_intents import get_speech_to_phrase_intents

from hub.errors import FatalError

CANONICAL = {"whats": "what's", "todays": "today's", "one": "1"}
"""Spellings that sound alike, mapped to the one the grammar keeps (fewer homophones)."""

WILDCARD_KINDS = {"hub_reminder": "reminder"}
"""Wildcard lists whose placeholder is not ``{item}`` (shopping items): the reminder message
(``{reminder}``, filled from ``data/reminders_<lang>.txt``)."""

MAX_EXPANSIONS = 20000
"""Most patterns one sentence template may expand to (guards against combinatorial blow-up)."""


@dataclass(frozen=True)
class Pattern:
    """One expanded sentence: its intent and tokens (words or ``{kind:arg}`` placeholders)."""

    intent: str
    tokens: tuple[str, ...]


def template_data(language: str = "en") -> dict:
    """The merged hassil intents dict: speech_to_phrase templates + the hub's extra ones.

    Raises:
        FatalError: no speech_to_phrase templates for ``language``.
    """
    base = get_speech_to_phrase_intents(language)
    if base is None:
        raise FatalError(f"no speech_to_phrase templates for language {language!r}", node="asr")
    extra_file = resources.files("hub.asr") / "data" / f"sentences_{language}.yaml"
    extra = yaml.safe_load(extra_file.read_text(encoding="utf-8")) if extra_file.is_file() else {}
    return _merge(base, extra or {})


def load_items(language: str = "en", kind: str = "items") -> tuple[str, ...]:
    """The built-in open-slot words for ``language``: shopping-list items (``kind`` "items")
    or reminder messages ("reminders"); () when there is no such file."""
    path = resources.files("hub.asr") / "data" / f"{kind}_{language}.txt"
    if not path.is_file():
        return ()
    lines = path.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip().lower() for line in lines if line.strip() and line[0] != "#")


def _merge(base: dict, extra: dict) -> dict:
    """Merge hassil intent dicts: intent data blocks appended, lists and rules overlaid."""
    merged = {key: value for key, value in base.items()}
    merged["lists"] = {**base.get("lists", {}), **extra.get("lists", {})}
    merged["expansion_rules"] = {
        **base.get("expansion_rules", {}),
        **extra.get("expansion_rules", {}),
    }
    intents = {
        name: {"data": list(body.get("data", []))} for name, body in base.get("intents", {}).items()
    }
    for name, body in extra.get("intents", {}).items():
        intents.setdefault(name, {"data": []})["data"].extend(body.get("data", []))
    merged["intents"] = intents
    return merged


def expand_patterns(data: dict) -> list[Pattern]:
    """Expand every sentence template in ``data`` (hassil dict) into :class:`Pattern` s.

    Placeholders: ``{name:<domains>}`` (``+``-joined domains, empty for any),
    ``{area}``, ``{floor}``, ``{range:<start>:<stop>:<step>}``, ``{item}`` (wildcards;
    ``{reminder}`` for :data:`WILDCARD_KINDS`).
    Value lists (colors, states) are expanded inline. Patterns are deduplicated, in order.
    """
    intents = Intents.from_dict(data)
    seen: set[Pattern] = set()
    patterns: list[Pattern] = []
    for intent in intents.intents.values():
        for block in intent.data:
            expander = _Expander(intents, block)
            for sentence in block.sentences:
                for text in itertools.islice(expander.expand(sentence.expression), MAX_EXPANSIONS):
                    tokens = (CANONICAL.get(t, t) for t in text.lower().split())
                    pattern = Pattern(intent.name, tuple(tokens))
                    if pattern.tokens and pattern not in seen:
                        seen.add(pattern)
                        patterns.append(pattern)
    return patterns


class _Expander:
    """Expands hassil expressions of one intent data block into strings with placeholders."""

    def __init__(self, intents, block):
        self.intents = intents
        self.block = block
        domains = (block.requires_context or {}).get("domain") or []
        self.domains = "+".join(sorted([domains] if isinstance(domains, str) else domains))

    def expand(self, expr):
        """Yield every string ``expr`` can produce (words concatenated as hassil does)."""
        if isinstance(expr, TextChunk):
            yield expr.text
        elif isinstance(expr, Alternative):
            for item in expr.items:
                yield from self.expand(item)
            if expr.is_optional:
                yield ""
        elif isinstance(expr, Permutation):
            for perm in itertools.permutations(expr.items):
                yield from self._sequence([*perm], spaced=True)
        elif isinstance(expr, Sequence):
            yield from self._sequence(expr.items)
        elif isinstance(expr, RuleReference):
            rule = self.block.expansion_rules.get(
                expr.rule_name
            ) or self.intents.expansion_rules.get(expr.rule_name)
            if rule is not None:
                yield from self.expand(rule.expression)
        elif isinstance(expr, ListReference):
            yield from self._list(expr)

    def _sequence(self, items, spaced: bool = False):
        """Cartesian product of the items' expansions, concatenated."""
        if not items:
            yield ""
            return
        joiner = " " if spaced else ""
        for head in self.expand(items[0]):
            for tail in self._sequence(items[1:], spaced):
                yield head + joiner + tail

    def _list(self, ref):
        """A list reference: a placeholder, or its values' texts for small value lists."""
        slot_list = self.block.slot_lists.get(ref.list_name) or self.intents.slot_lists.get(
            ref.list_name
        )
        if ref.list_name in ("name", "area", "floor") or slot_list is None:
            arg = f":{self.domains}" if ref.list_name == "name" else ""
            yield f" {{{ref.list_name}{arg}}} "
        elif isinstance(slot_list, RangeSlotList):
            yield f" {{range:{slot_list.start}:{slot_list.stop}:{slot_list.step}}} "
        elif isinstance(slot_list, WildcardSlotList):
            yield f" {{{WILDCARD_KINDS.get(ref.list_name, 'item')}}} "
        elif isinstance(slot_list, TextSlotList):
            for value in slot_list.values:
                for text in self.expand(value.text_in):
                    yield f" {text} "
