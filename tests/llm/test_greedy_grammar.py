"""The classify generation that checks the grammar on the chosen token first
(:mod:`hub.llm.greedy`) writes what llama-cpp-python's grammar-then-greedy sampling writes."""

from __future__ import annotations

import json

import pytest

from hub.llm import make_llm, prompts
from hub.llm.greedy import generate_json
from hub.settings import load_settings

HOME = load_settings(None).home
TEXTS = ("dim the office light to 30 percent", "how far away is the moon", "put eggs on my list")


@pytest.fixture(scope="module")
def engine():
    eng = make_llm(load_settings(None).llm, HOME, prompts.DEFAULT_INTENTS)
    yield eng
    eng.close()


@pytest.mark.models
@pytest.mark.parametrize("text", TEXTS)
def test_grammar_first_greedy_equals_grammar_over_the_whole_vocabulary(engine, text):
    from llama_cpp import LlamaGrammar

    gbnf = engine._grammars.for_text(text)
    messages = prompts.classify_messages(text, engine._intents, HOME)
    with engine._res.use(5):
        tokens = engine._tokens(messages)
        engine._restore("classify")
        mine, finish = generate_json(engine._llm, tokens, gbnf, 80, lambda: False)
        theirs = engine._llm.create_completion(
            tokens, max_tokens=80, temperature=0.0, grammar=LlamaGrammar.from_string(gbnf)
        )["choices"][0]["text"]
    assert finish == "stop" and mine == theirs
    assert set(json.loads(mine)) == {"intent", "slots"}  # the confidence is not generated


@pytest.mark.models
def test_cancel_stops_at_the_next_token(engine):
    text = TEXTS[0]
    with engine._res.use(5):
        tokens = engine._tokens(prompts.classify_messages(text, engine._intents, HOME))
        engine._restore("classify")
        calls = []
        out, finish = generate_json(
            engine._llm,
            tokens,
            engine._grammars.for_text(text),
            80,
            lambda: len(calls) > 3 or calls.append(1),
        )
    assert finish == "cancel" and len(engine._llm.tokenize(out.encode(), add_bos=False)) == 4
