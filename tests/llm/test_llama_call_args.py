"""Issue 23: every llama.cpp call carries stop sequences and a small ``max_tokens``. A fake
``Llama`` records the keyword arguments the engine calls ``create_completion`` with."""

from __future__ import annotations

import json

from hub.llm.llama import ANSWER_STOPS, CLASSIFY_MAX_TOKENS, LlamaEngine
from hub.llm.prompts import DEFAULT_INTENTS
from hub.settings import HomeSettings, LlmSettings


class FakeLlama:
    """Records each ``create_completion`` call; streams ``reply`` in two pieces."""

    metadata: dict = {}

    def __init__(self, reply: str):
        self.reply = reply
        self.calls: list[dict] = []

    def tokenize(self, data: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return list(data[:50])

    def create_completion(self, tokens, **kwargs):
        self.calls.append(kwargs)
        half = len(self.reply) // 2
        for i, text in enumerate((self.reply[:half], self.reply[half:])):
            yield {"choices": [{"text": text, "finish_reason": "stop" if i else None}]}

    def reset(self) -> None:
        pass

    def n_ctx(self) -> int:
        return 4096


def engine(reply: str, settings: LlmSettings | None = None) -> tuple[LlamaEngine, FakeLlama]:
    fake = FakeLlama(reply)
    eng = LlamaEngine(fake, settings or LlmSettings(), HomeSettings(), DEFAULT_INTENTS)
    eng._restore = lambda kind: None  # no KV state in a fake
    eng._intent_probability = lambda prompt, intent: 0.9
    return eng, fake


def test_an_answer_is_called_with_stop_sequences_and_the_configured_small_max_tokens():
    eng, fake = engine("The sun is a star. It is hot.")
    assert "".join(eng.answer("what is the sun")).startswith("The sun is a star.")
    [kwargs] = fake.calls
    assert kwargs["stop"] == list(ANSWER_STOPS) and "<|im_end|>" in kwargs["stop"]
    assert "\n\n" in kwargs["stop"]
    assert kwargs["max_tokens"] == LlmSettings().max_tokens <= 96
    assert kwargs["temperature"] == 0.0 and kwargs["stream"] is True


def test_max_tokens_follows_the_setting():
    eng, fake = engine("Yes.", LlmSettings(max_tokens=24))
    list(eng.answer("is it"))
    assert fake.calls[0]["max_tokens"] == 24


def test_classify_is_called_with_a_grammar_and_its_token_cap(monkeypatch):
    import hub.llm.llama as llama_mod

    eng, fake = engine("")
    calls = []

    def generate(llm, tokens, gbnf, max_tokens, stopped):
        calls.append((gbnf, max_tokens))
        return json.dumps({"intent": "HassTurnOn", "slots": {}}), "stop"

    monkeypatch.setattr(llama_mod, "generate_json", generate)
    out = json.loads(eng.classify("turn on the kitchen light"))
    assert out["intent"] == "HassTurnOn" and out["confidence"] == 0.9  # from the logits
    [(gbnf, max_tokens)] = calls
    assert max_tokens == CLASSIFY_MAX_TOKENS <= 96
    assert '"\\"HassTurnOn\\""' in gbnf and "root ::=" in gbnf
