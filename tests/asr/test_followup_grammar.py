"""Issue 18 item 3 by voice: the grammar holds the answers to the hub's own questions (an area,
"in the kitchen", an entity name) and the references ("turn it off", "make it brighter"), only
as far as the conversation logic reads them; spoken by Piper they are heard as said."""

from __future__ import annotations

import numpy as np
import pytest

from hub.asr import make_asr_engine
from hub.asr.coverage import FOLLOW_UPS, fsg_accepts
from hub.asr.vocab import build_vocab
from hub.home import Home
from hub.intents.followup import AREA, NAME, SlotQuestion, slot_value
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


ANSWERS = [
    "kitchen",
    "in the kitchen",
    "the office please",
    "office",
    "in the office please",
    "kitchen light",
    "the bed light",
    "the tv please",
]
REFERENCES = [
    "turn it off",
    "turn it on",
    "turn them off",
    "turn them on",
    "switch it off",
    "make it brighter",
    "make it dimmer",
    "set it to 50 percent",
    "set it to 100 percent",
    "lock it",
    "unlock it",
    "open it",
    "close it",
]


@pytest.mark.parametrize("text", ANSWERS + REFERENCES)
def test_follow_up_answers_and_references_are_in_the_grammar(fsg, text):
    assert fsg_accepts(fsg, text.split())


@pytest.mark.parametrize(
    "text",
    [
        "it",
        "them",
        "in the",
        "the",
        "please",
        "turn it",
        "kitchen please please",
        "in the kitchen kitchen",
        "make it on",
        "set it to percent",
        "turn it off please off",
        "in the garden",
        "turn it off and turn it on",
        "turn off it",
    ],
)
def test_fragments_and_other_places_are_not_in_the_grammar(fsg, text):
    assert not fsg_accepts(fsg, text.replace(" and ", " <and> ").split())


@pytest.mark.models
def test_what_the_grammar_keeps_is_read_by_the_conversation_logic(settings):
    """Every answer and reference the check keeps is a slot value or a command with a name in
    place of "it" (the checks the grammar build uses, run on the test's own list)."""
    rules = Rules(Home.from_settings(settings.home), IntentSettings(fuzzy=False))
    for text in ANSWERS:
        assert FOLLOW_UPS["_slot_answer"](rules, text), text
    for text in REFERENCES:
        assert FOLLOW_UPS["_reference"](rules, text), text
    assert not FOLLOW_UPS["_slot_answer"](rules, "garden")
    assert not FOLLOW_UPS["_reference"](rules, "what time is it")
    assert slot_value(rules.home, SlotQuestion(None, AREA), "in the kitchen") == "Kitchen"
    assert slot_value(rules.home, SlotQuestion(None, NAME), "the bed light") == "Bed Light"


@pytest.fixture(scope="module")
def engine(settings, vocab):
    return make_asr_engine(settings.asr, settings.home, cache_dir=vocab.directory.parents[1])


@pytest.mark.models
@pytest.mark.parametrize(
    "text",
    [
        "kitchen",
        "in the kitchen",
        "office",
        "the bed light",
        "turn it off",
        "turn it on",
        "turn them off",
        "make it brighter",
        "set it to 50 percent",
    ],
)
def test_spoken_answers_and_references_are_heard_as_said(engine, text):
    transcript = engine.transcribe(np.concatenate([silence(0.5), synth(text), silence(0.8)]))
    assert transcript.text == text and not transcript.rejected, transcript
