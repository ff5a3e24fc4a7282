"""The LLM prompt in a real-sized home: only the entities a turn needs, a cached prefix that
stays the same, and a context overflow that is a classified error."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hub.errors import BadInputError
from hub.llm import prompts, retrieve
from hub.llm.model import N_CTX, check_fits
from hub.settings import load_settings

from homes import LARGE_HOMES

HOMES = LARGE_HOMES


@pytest.mark.parametrize("name", HOMES)
def test_large_home_prompt_names_only_what_the_turn_needs(name):
    home = HOMES[name]()
    assert retrieve.is_large(home)
    messages = prompts.classify_messages("turn on the kitchen light", prompts.DEFAULT_INTENTS, home)
    last = messages[-1]["content"]
    devices = last.split("\n")[0].removeprefix("Devices: ").split("; ")
    assert 0 < len(devices) <= retrieve.MAX_ENTITIES
    assert all("kitchen" in d.lower() or "light" in d.lower() for d in devices)
    assert "Devices:" not in messages[0]["content"]  # the system prefix holds no device list
    other = prompts.classify_messages("how far away is the moon", prompts.DEFAULT_INTENTS, home)
    assert other[:-1] == messages[:-1]  # same prefix: the prompt cache still works


@pytest.mark.parametrize("name", HOMES)
def test_large_home_answer_prompt_carries_only_retrieved_facts(name):
    home = HOMES[name]()
    messages = prompts.answer_messages("is the kitchen ceiling light 1 on", home)
    assert (
        len(messages[0]["content"]) < 600
        and messages[0] == prompts.answer_messages("tell me a joke", home)[0]
    )
    assert len(messages[1]["content"]) < 100 + 60 * retrieve.MAX_ENTITIES


def test_small_home_keeps_its_whole_description_in_the_prefix():
    home = load_settings(None).home
    assert not retrieve.is_large(home)
    messages = prompts.classify_messages("tell me a joke", prompts.DEFAULT_INTENTS, home)
    assert "Kitchen Light (light, Kitchen)" in messages[0]["content"]
    assert messages[-1]["content"] == "tell me a joke"


def test_context_overflow_is_a_classified_error():
    llm = SimpleNamespace(n_ctx=lambda: 2048)
    check_fits(llm, 2048, "classify")
    with pytest.raises(BadInputError, match="context overflow"):
        check_fits(llm, 2049, "classify")


@pytest.mark.models
@pytest.mark.parametrize("name", HOMES)
def test_large_home_prompts_fit_the_context_in_tokens(name):
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    from hub.llm.model import embedded_model_path, load_llama

    llm, home = load_llama(embedded_model_path(), 1), HOMES[name]()
    fmt = Jinja2ChatFormatter(llm.metadata["tokenizer.chat_template"], eos_token="", bos_token="")
    long = "turn off all the lights in the " + " and the ".join(a["name"] for a in home.areas)
    for text in ("turn on the kitchen light", "how far away is the moon", long[:400]):
        for messages in (
            prompts.classify_messages(text, prompts.DEFAULT_INTENTS, home, True),
            prompts.answer_messages(text, home),
        ):
            tokens = llm.tokenize(
                fmt(messages=messages).prompt.encode(), add_bos=True, special=True
            )
            assert len(tokens) + 80 <= N_CTX, (text, len(tokens))
