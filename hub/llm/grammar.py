"""The classify grammar of one turn (llama.cpp GBNF from :func:`hub.llm.prompts.intent_schema`).

In a home described whole the grammar is the same on every turn and built once. In a large
home (:func:`hub.llm.retrieve.is_large`) its entity and area names are only those retrieved
for the turn (:func:`hub.llm.prompts.turn_names`): llama.cpp applies the grammar to every
token of the vocabulary at every step, and at a name's position each allowed name is one
parse stack, so a grammar holding 500 names makes every sampled token cost 500 times the
vocabulary; a whole-home grammar was also 425 KB of GBNF, parsed again by each generation.
The last few grammars are kept (:data:`KEEP`): a strict retry reuses its turn's. The object
ends after ``slots``: the engine writes the confidence from the logits
(:func:`hub.llm.confidence.with_confidence`).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Collection

from hub.llm import prompts
from hub.settings import HomeSettings

KEEP = 8
"""How many per-turn grammars are kept (least recently used dropped first)."""


class TurnGrammars:
    """The GBNF text of a turn's classify grammar, cached by the names it allows.

    Args:
        intents: the allowed intents (every grammar offers all of them).
        home: the home whose names the grammars use.
    """

    def __init__(self, intents: Collection[str], home: HomeSettings):
        self._intents, self._home = tuple(intents), home
        self._cache: OrderedDict[prompts.HomeNames, str] = OrderedDict()

    def for_text(self, text: str) -> str:
        """The GBNF grammar (root rule ``root``) of the turn whose user text is ``text``."""
        # lazy: llama_cpp (the LLM runtime) loads only when the LLM is used
        from llama_cpp.llama_grammar import json_schema_to_gbnf

        names = prompts.turn_names(self._home, text)
        gbnf = self._cache.get(names)
        if gbnf is None:
            schema = prompts.intent_schema(self._intents, names, confidence=False)
            gbnf = self._cache[names] = json_schema_to_gbnf(json.dumps(schema))
            while len(self._cache) > KEEP:
                self._cache.popitem(last=False)
        self._cache.move_to_end(names)
        return gbnf
