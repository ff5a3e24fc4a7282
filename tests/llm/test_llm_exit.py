"""BC-08/BC-10: an LLM path that cannot crash or repeat itself.

- an abandoned llama.cpp generation is stopped and joined before the process exits;
- a reply cut by the token limit is never acted on; an answer drops its unfinished sentence;
- answer speech runs outside the LLM's budget, and a sentence is never said twice.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hub.errors import InvalidOutputError, TransientError
from hub.llm import llama as llama_mod
from hub.llm import make_llm
from hub.llm.prompts import DEFAULT_INTENTS
from hub.settings import LlmSettings, load_settings

from fakes import FakeLlm, FakeTts, make_hub, speech

ROOT = Path(__file__).resolve().parents[2]
HOME = load_settings(None).home


@pytest.fixture(scope="module")
def engine():
    eng = make_llm(LlmSettings(max_tokens=12), HOME, DEFAULT_INTENTS)
    yield eng


def test_classify_cut_by_the_token_limit_is_invalid_output(engine, monkeypatch):
    monkeypatch.setattr(llama_mod, "CLASSIFY_MAX_TOKENS", 4)
    with pytest.raises(InvalidOutputError, match="token limit"):
        engine.classify("turn on the kitchen light")


def test_answer_cut_by_the_token_limit_drops_the_unfinished_sentence(engine):
    sentences = list(engine.answer("tell me a long story about a dragon and a knight"))
    assert all(s.rstrip()[-1] in ".!?" for s in sentences), sentences


def test_close_stops_a_running_generation_and_refuses_new_ones():
    eng = make_llm(LlmSettings(max_tokens=2000), HOME, DEFAULT_INTENTS)
    started, out = threading.Event(), []

    def run():
        for piece in eng._stream(
            [{"role": "user", "content": "count to 1000"}], "answer", None, max_tokens=2000
        ):
            started.set()
            out.append(piece)

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(30)
    assert eng.close(wait_s=30) is True  # the generation stopped at its next token
    worker.join(5)
    assert not worker.is_alive()
    with pytest.raises(TransientError):
        eng.classify("turn on the kitchen light")


def test_bc10_abandoned_generation_at_exit_does_not_abort_the_process(tmp_path):
    """``hub ask`` whose LLM answer times out mid-generation exits 0, 3 runs of 3."""
    config = tmp_path / "hub.toml"
    config.write_text(
        (ROOT / "hub" / "data" / "home-en.toml").read_text()
        + "\n[llm]\nbudget_s = 0.6\nmax_tokens = 400\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(3):
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "hub",
                "ask",
                "--config",
                str(config),
                "--store",
                ":memory:",
                "tell me a long story about a dragon",
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        assert "terminate called" not in run.stderr


class SlowAfterFirst:
    """An LLM stub whose answer says one sentence, then hangs until cancelled."""

    name = "slow"

    def __init__(self):
        self.calls = 0

    def classify(self, text, cancel=None, strict=False):
        return '{"intent": "answer", "slots": {}, "confidence": 0.9}'

    def answer(self, question, cancel=None):
        self.calls += 1
        yield "Once upon a time there was a dragon."
        while not (cancel and cancel.is_set()):
            time.sleep(0.01)


def test_bc10_timed_out_answer_keeps_what_was_said_and_never_repeats_it():
    llm = SlowAfterFirst()
    hub = make_hub(text="tell me a story", llm=llm)
    result = hub.answer_audio(speech())
    trace = result.trace
    assert trace["response"] == "Once upon a time there was a dragon."
    assert hub.fake_tts.sentences == ["Once upon a time there was a dragon"]
    assert llm.calls == 1 and result.pcm  # no retry that would say it again
    assert [e["kind"] for e in trace["errors"]] == ["timeout"]


class FailsAfterFirst(FakeLlm):
    """First answer: one sentence, then a transient failure; the retry writes it all."""

    def __init__(self):
        super().__init__()
        self.answers = 0

    def answer(self, question, cancel=None):
        self.answers += 1
        yield "Dragons breathe fire."
        if self.answers == 1:
            raise TransientError("llama.cpp failed", node="llm")
        yield "Knights wear armour."


def test_retry_continues_and_says_each_sentence_once():
    llm = FailsAfterFirst()
    hub = make_hub(text="tell me about dragons", llm=llm)
    result = hub.answer_audio(speech())
    assert llm.answers == 2
    assert result.trace["response"] == "Dragons breathe fire. Knights wear armour."
    assert hub.fake_tts.sentences == ["Dragons breathe fire", "Knights wear armour"]


def test_bc10_slow_synthesis_is_not_charged_to_the_llm_budget():
    class SlowTts(FakeTts):
        def synthesize(self, text, cancel=None):
            time.sleep(0.4)  # a busy CPU: each sentence takes long to synthesize
            yield from super().synthesize(text, cancel)

    llm = FakeLlm(answer=("First part.", "Second part."))
    hub = make_hub(text="why is the sky blue", llm=llm, tts=SlowTts())
    hub.settings = dataclasses.replace(
        hub.settings, llm=dataclasses.replace(hub.settings.llm, budget_s=0.5)
    )  # less than the synthesis of the two sentences
    trace = hub.turn_audio(speech())
    assert trace["errors"] == [] and trace["response"] == "First part. Second part."
