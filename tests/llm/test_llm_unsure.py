"""An LLM answer the model was unsure of is withheld ("I'm not sure about that."), not spoken.

The gate (:func:`hub.llm.stream.withhold_unsure`, ``[llm] answer_min_logprob``) and its
input (the mean top-token log-probability of what the model generated) with the real model,
plus the prompt cache kept to its size (:mod:`hub.llm.prefix_cache`).
"""

from __future__ import annotations

import dataclasses
import os

import pytest

from hub.bench.answers import judge
from hub.errors import ConfigError
from hub.llm.prefix_cache import prune, read_state
from hub.llm.stream import UNSURE, withhold_unsure
from hub.settings import load_settings


def _gate(sentences, scores, minimum=-0.5):
    it = iter(scores)
    return list(withhold_unsure(sentences, lambda: next(it), minimum))


def test_sure_sentences_are_all_said():
    assert _gate(["One.", "Two."], [-0.1, -0.3]) == ["One.", "Two."]


def test_an_unsure_first_sentence_becomes_i_am_not_sure():
    assert _gate(["El Turco is the capital.", "More."], [-0.9, -0.1]) == [UNSURE]


def test_an_unsure_later_sentence_ends_the_answer_without_adding_anything():
    assert _gate(["Paris is the capital.", "It has 90 million people."], [-0.2, -0.8]) == [
        "Paris is the capital."
    ]


def test_the_gate_closes_its_source_when_it_stops():
    closed = []

    def source():
        try:
            yield "A."
            yield "B."
        finally:
            closed.append(True)

    assert _gate(source(), [-2.0]) == [UNSURE] and closed == [True]


def test_judge_tells_right_wrong_and_withheld():
    assert judge("The capital of Spain is Madrid.", "madrid") == "right"
    assert judge("El Turco, also known as the City of Turbo.", "madrid") == "wrong"
    assert judge(UNSURE, "madrid") == "withheld"
    assert judge("A spider has 18 legs.", "eight|8") == "wrong"  # whole words only


@pytest.fixture(scope="module")
def engines():
    from hub.llm import make_llm
    from hub.llm.prompts import DEFAULT_INTENTS

    settings = load_settings(None)
    made = {
        m: make_llm(
            dataclasses.replace(settings.llm, answer_min_logprob=m), settings.home, DEFAULT_INTENTS
        )
        for m in (-1e-9, -100.0)
    }
    yield made
    for engine in made.values():
        engine.close()


def test_the_real_model_s_sureness_decides_what_is_said(engines):
    """The gate reads the model's own token probabilities: a threshold no generation reaches
    withholds every answer, an open one withholds none. (Which questions the default keeps is
    measured in BENCHMARKS.md: the prompt holds the time of day, so single answers vary.)"""
    strict, open_ = engines[-1e-9], engines[-100.0]
    for question in ("what is the capital of Spain", "what is the capital of France"):
        assert list(strict.answer(question)) == [UNSURE]
        said = list(open_.answer(question))
        assert said and UNSURE not in said, said


def test_answer_min_logprob_is_validated(tmp_path):
    path = tmp_path / "hub.toml"
    path.write_text("[llm]\nanswer_min_logprob = 0.5\n")
    with pytest.raises(ConfigError, match=r"llm\.answer_min_logprob"):
        load_settings(str(path))


def test_the_prompt_cache_keeps_the_most_recently_used_states(tmp_path):
    files = [tmp_path / f"prefix-{i:02d}.state" for i in range(30)]
    for i, file in enumerate(files):
        file.write_bytes(b"x")
        os.utime(file, (1000 + i, 1000 + i))
    assert read_state(files[0]) == b"x"  # a read marks the oldest as just used
    assert prune(tmp_path, keep=24) == 6
    kept = {f.name for f in tmp_path.glob("prefix-*.state")}
    assert files[0].name in kept and len(kept) == 24
    assert not any(f.name in kept for f in files[1:7])
    assert read_state(tmp_path / "missing.state") is None
