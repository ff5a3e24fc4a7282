"""The llama.cpp adapter with the embedded SmolLM2-135M model (loaded once per session)."""

from __future__ import annotations

import json
import threading
import tomllib
from pathlib import Path

import pytest

import hub
from hub.errors import FatalError
from hub.llm import LlmEngine, make_llm
from hub.llm.model import embedded_model_path
from hub.llm.prompts import DEFAULT_INTENTS, SLOTS_BY_INTENT, home_names
from hub.settings import LlmSettings, settings_from_dict

HOME = settings_from_dict(
    tomllib.loads((Path(hub.__file__).parent / "data" / "home-en.toml").read_text())
).home


@pytest.fixture(scope="session")
def engine():
    return make_llm(LlmSettings(keep_loaded_s=-1), HOME, DEFAULT_INTENTS)  # tests poke _llm


def test_embedded_model_is_the_smollm2_gguf():
    path = embedded_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.is_file()


@pytest.mark.parametrize(
    "text", ["could you switch the kitchen light on for me", "unlock the front door"]
)
def test_classify_output_follows_the_schema(engine, text):
    assert isinstance(engine, LlmEngine) and engine.name == "llama.cpp"
    obj = json.loads(engine.classify(text))
    assert list(obj) == ["intent", "slots", "confidence"]
    assert obj["intent"] in (*DEFAULT_INTENTS, "answer", "none")
    assert set(obj["slots"]) <= set(SLOTS_BY_INTENT[obj["intent"]])
    names = home_names(HOME)
    assert obj["slots"].get("name", "Bed Light") in names.entity_names
    assert obj["slots"].get("area", "Kitchen") in names.area_names
    assert 0 <= obj["confidence"] <= 1


def test_saved_prefix_state_gives_the_same_output_after_another_prompt(engine):
    first = engine.classify("kill the office light")
    list(engine.answer("is the office light on?"))
    assert engine.classify("kill the office light") == first


def test_strict_prompt_also_gives_json(engine):
    obj = json.loads(engine.classify("what time is it", strict=True))
    assert obj["intent"] in (*DEFAULT_INTENTS, "answer", "none")


def test_answer_is_at_most_two_clean_sentences(engine):
    sentences = list(engine.answer("Why is the sky blue?"))
    assert 1 <= len(sentences) <= 2
    assert all(s.strip() and not set(s) & set("{}`") for s in sentences)


def test_cancel_stops_the_generation(engine):
    cancel, got, pieces = threading.Event(), [], threading.Event()
    llm = engine._llm
    original = llm.create_completion

    def spy(*args, **kwargs):
        for chunk in original(*args, **kwargs):
            pieces.set()
            yield chunk

    llm.create_completion = spy
    try:
        worker = threading.Thread(
            target=lambda: got.extend(engine.answer("Tell me a long story about a ship.", cancel))
        )
        worker.start()
        assert pieces.wait(30)
        cancel.set()
        worker.join(timeout=5)
        assert not worker.is_alive()
    finally:
        del llm.create_completion
    assert len(got) <= 1
    # the model is free again afterwards
    assert json.loads(engine.classify("next track on the tv"))["intent"]


def test_missing_model_is_fatal_and_names_the_path(tmp_path):
    path = tmp_path / "nope.gguf"
    with pytest.raises(FatalError) as info:
        make_llm(LlmSettings(model=str(path)), HOME, DEFAULT_INTENTS)
    assert str(path) in info.value.message


def test_corrupt_model_is_fatal_and_names_the_path(tmp_path):
    path = tmp_path / "bad.gguf"
    path.write_bytes(b"GGUF" + b"\x00garbage" * 100)
    with pytest.raises(FatalError) as info:
        make_llm(LlmSettings(model=str(path)), HOME, DEFAULT_INTENTS)
    assert str(path) in info.value.message


def test_confidence_is_the_intent_probability_and_sums_to_one(engine):
    from hub.llm import prompts

    raw = json.loads(engine.classify("kill the office light"))
    tokens = engine._tokens(
        prompts.classify_messages("kill the office light", DEFAULT_INTENTS, HOME)
    )
    candidates = (*DEFAULT_INTENTS, "answer", "none")
    probs = {c: engine._intent_probability(tokens, c) for c in candidates}
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-3)
    assert raw["confidence"] == round(probs[raw["intent"]], 3)


def test_llama_cpp_warnings_go_to_the_debug_log_not_stderr(capfd, caplog):
    """``hub replay`` printed llama.cpp's "n_ctx_seq (512) > n_ctx_train (0)" on every run
    (the tokenizer-only load; llama-cpp-python reads ggml's WARN as ERROR)."""
    import logging

    from hub.llm.model import load_llama

    capfd.readouterr()
    with caplog.at_level(logging.DEBUG, logger="hub.llm.llama_cpp"):
        vocab = load_llama(embedded_model_path(), vocab_only=True)
    assert vocab.tokenize(b"hello")
    err = capfd.readouterr().err
    assert "n_ctx_train" not in err and "llama" not in err.lower(), err
    native = [r for r in caplog.records if r.name == "hub.llm.llama_cpp"]
    assert any("n_ctx_train" in r.getMessage() for r in native)
    assert all(r.levelno == logging.DEBUG for r in native)
