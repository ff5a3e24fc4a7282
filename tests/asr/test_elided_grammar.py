"""The spoken path of two commands in one sentence whose second part has no verb (s12
finding 1): the grammar hears "turn the tv on and the lights off" (after "and" a conjoinable
command may come without its action words, :func:`hub.asr.vocab.elided`) and the rules read
what it heard with the verb carried over. Speech is synthesized with the project's Piper
voice (``hub say``, as in test_asr_grammar)."""

from __future__ import annotations

import numpy as np
import pytest

from hub.asr import make_asr_engine
from hub.asr.coverage import fsg_accepts
from hub.asr.vocab import CONJUNCTION, build_vocab, elided
from hub.home import Home
from hub.intents.rules import Rules
from hub.settings import IntentSettings, load_settings

from live_audio import silence, synth
from shared_data import home_toml


@pytest.fixture(scope="module")
def settings():
    return load_settings(str(home_toml()))


@pytest.fixture(scope="module")
def vocab(settings, tmp_path_factory):
    return build_vocab(settings.home, tmp_path_factory.mktemp("asr-cache"))


@pytest.fixture(scope="module")
def fsg(vocab) -> str:
    return vocab.fsg_path.read_text()


@pytest.fixture(scope="module")
def rules(settings):
    return Rules(Home.from_settings(settings.home), IntentSettings())


ELIDED = [
    (
        "turn the tv on and the lights off",
        [("HassTurnOn", {"name": "TV"}), ("HassTurnOff", {"domain": "light"})],
    ),
    (
        "turn on the kitchen light and the bed light",
        [("HassTurnOn", {"name": "Kitchen Light"}), ("HassTurnOn", {"name": "Bed Light"})],
    ),
    (
        "turn on the kitchen light and off the tv",
        [("HassTurnOn", {"name": "Kitchen Light"}), ("HassTurnOff", {"name": "TV"})],
    ),
]


def test_finding_elided_forms_of_a_pattern():
    assert elided("turn on the <slot_name>") == ["on the <slot_name>", "the <slot_name>"]
    assert elided("turn the lights off") == ["the lights off"]
    assert elided("the <slot_area> lights off") == []


@pytest.mark.parametrize(("text", "_"), ELIDED)
def test_finding_elided_verb_is_in_the_grammar_after_and(fsg, text, _):
    assert fsg_accepts(fsg, text.replace(" and ", f" {CONJUNCTION} ").split())


@pytest.mark.parametrize(
    "text",
    [
        "the lights off and the bed light",
        "yes and the bed light",
        # the Office sample was heard so with every elided form in the grammar
        "turn off all of the lights in the office and 5",
        "turn off all of the lights and the office to 5",
        "turn on the kitchen light and bed light",  # a bare name: noise fits it too easily
    ],
)
def test_finding_elided_verb_never_starts_a_sentence_or_follows_a_reply(fsg, text):
    assert not fsg_accepts(fsg, text.replace(" and ", f" {CONJUNCTION} ").split())


@pytest.mark.parametrize(("text", "expected"), ELIDED)
def test_finding_elided_verb_spoken_is_heard_and_read(settings, vocab, rules, text, expected):
    engine = make_asr_engine(settings.asr, settings.home, cache_dir=vocab.directory.parents[1])
    transcript = engine.transcribe(np.concatenate([silence(0.5), synth(text), silence(0.8)]))
    assert transcript.text == text, transcript
    got = [(m.intent, m.slots) for m in rules.recognize_more(transcript.text)]
    assert got == expected, transcript
