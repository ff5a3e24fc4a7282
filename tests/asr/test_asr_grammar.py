"""Voice safety in the grammar (issue 7 item 8, BC-21, BC-22): what the recognizer may hear is
what the rules understand, yes/no words and exclusions are heard as said, several commands
joined by "and" come out as segments, and out-of-grammar speech is answered, not silent.

Speech for the new phrases is synthesized here with the project's Piper voice."""

from __future__ import annotations

import os
import subprocess
import sys
import wave
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from hub.asr import make_asr_engine
from hub.asr.base import Segment, Transcript, combine
from hub.asr.coverage import FOLLOW_UPS, _probes, fsg_accepts
from hub.asr.templates import expand_patterns, template_data
from hub.asr.vocab import CONJUNCTION, _slot_values, build_vocab, load_items
from hub.facts import answers, topics
from hub.graph.confirmation import confirmation_answer
from hub.home import Home
from hub.intents import catalog
from hub.intents.rules import Rules
from hub.settings import IntentSettings, load_settings

from live_audio import silence, synth
from shared_data import home_toml

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def settings():
    return load_settings(str(home_toml()))


@pytest.fixture(scope="module")
def rules(settings):
    return Rules(Home.from_settings(settings.home), IntentSettings())


@pytest.fixture(scope="module")
def vocab(settings, tmp_path_factory):
    return build_vocab(settings.home, tmp_path_factory.mktemp("asr-cache"))


@pytest.fixture(scope="module")
def fsg(vocab) -> str:
    return vocab.fsg_path.read_text()


def heard(fsg: str, text: str) -> bool:
    return fsg_accepts(fsg, text.lower().split())


def test_every_grammar_sentence_is_understood_as_its_own_intent(settings, rules, fsg):
    """Walk the templates: each pattern the grammar keeps, filled with this home's values,
    is in the FSG and the rules give it the pattern's intent (exclusions: nothing)."""
    home = settings.home
    slots = _slot_values(home, load_items())
    usable = set(catalog.usable_in({e["domain"] for e in home.entities}))
    checked = 0
    for pattern in expand_patterns(template_data()):
        if pattern.intent not in usable and not pattern.intent.startswith("_"):
            continue
        texts = _probes(pattern, slots)
        in_grammar = [t for t in texts if heard(fsg, t)]
        if not in_grammar:
            continue  # dropped at generation (no rule understands it)
        checked += 1
        if pattern.intent == "_reply":
            assert confirmation_answer(in_grammar[0]) is not None, in_grammar[0]
            continue
        if pattern.intent in FOLLOW_UPS:  # a slot answer, a reference (issue 18)
            assert any(FOLLOW_UPS[pattern.intent](rules, t) for t in in_grammar), in_grammar
            continue
        if pattern.intent == "_fact" or pattern.intent in FACT_INTENTS:  # also via _fact
            assert any(answered_from_source(rules, t) for t in in_grammar), in_grammar[:2]
            continue
        want = None if pattern.intent == "_exclusion" else pattern.intent
        assert any((m.intent if (m := rules.recognize(t)) else None) == want for t in in_grammar), (
            pattern.intent,
            in_grammar[:2],
        )
    assert checked > 1000


FACT_INTENTS = {
    "HassGetCurrentTime",
    "HassGetCurrentDate",
    "HassGetWeather",
    "HassClimateGetTemperature",
    "HassGetState",
}


def answered_from_source(rules, text: str) -> bool:
    """The turn answers ``text`` from a fact source: a read-only rules match, else the fact
    step (clock, weather entity, ``[home]``, or an honest "I don't have ...")."""
    match = rules.recognize(text)
    if match is not None:
        return match.intent in FACT_INTENTS
    return answers.route(text, rules.home, datetime.now()) is not None


# Hand-written fact questions (not the benchmark's ten), each with the topic it asks.
FACT_QUESTIONS = [
    ("what year is it", "year"),
    ("which year are we in", "year"),
    ("what's the current year", "year"),
    ("how late is it", "time"),
    ("tell me the time please", "time"),
    ("do you know what time it is", "time"),
    ("what day is it today", "weekday"),
    ("what day of the week is it", "weekday"),
    ("what's today's date", "date"),
    ("what's today's date again", "date"),
    ("which date is it today", "date"),
    ("what month are we in", "month"),
    ("is it going to rain tomorrow", "forecast"),
    ("will it snow tonight", "forecast"),
    ("what's the forecast for the weekend", "forecast"),
    ("do i need an umbrella tomorrow", "forecast"),
    ("how humid is it outside", "humidity"),
    ("what's the humidity", "humidity"),
    ("how cold is it outside", "outdoor_temperature"),
    ("how warm is it inside", "indoor_temperature"),
    ("is it raining", "weather"),
    ("how is the weather outside", "weather"),
    ("did i leave the kitchen light on", "state"),
    ("is the bed light switched off", "state"),
    ("tell me if the sliding door is closed", "state"),
]


@pytest.mark.parametrize("text,topic", FACT_QUESTIONS)
def test_fact_questions_are_in_the_grammar_and_answered_from_their_source(fsg, rules, text, topic):
    assert heard(fsg, text)
    assert answered_from_source(rules, text)
    match = rules.recognize(text)
    assert (
        match is not None
        or topics.topic(text) == topic
        or (topic == "state" and answers.route(text, rules.home, datetime.now()).topic == "state")
    )


@pytest.mark.parametrize(
    "text",
    [
        "what year is the kitchen light",
        "how late is the tv",
        "is it going to rain the kitchen light",
        "did i leave the shopping list on",
        "what day is it and no",
    ],
)
def test_fact_words_around_other_things_are_not_in_the_grammar(fsg, text):
    assert not heard(fsg, text.replace(" and ", f" {CONJUNCTION} "))


NEW_SENTENCES = [
    "set a timer for zero minutes",
    "set a timer for a minute and a half",
    "set a 1 hour timer",
    "set a timer for 90 seconds",
    "set a timer for 2 and a half minutes",
    "set a timer",
    "nevermind",
    "never mind",
    "yes",
    "yeah",
    "sure",
    "do it",
    "no",
    "cancel",
    "stop",
    "turn off all the lights except the kitchen",
    "turn off all of the lights but the kitchen and the office",
    "turn on the kitchen light and turn off the bed light",
]


@pytest.mark.parametrize("text", NEW_SENTENCES)
def test_bc21_bc22_phrases_are_in_the_grammar(fsg, text):
    assert heard(fsg, text.replace(" and turn", f" {CONJUNCTION} turn"))


@pytest.mark.parametrize(
    "text",
    [
        "turn off all the lights in the kitchen except",
        "set a timer for 2 minutes and yes",
        "yes and no",
        "what time is it and turn on the kitchen light",
    ],
)
def test_what_the_rules_do_not_take_is_not_in_the_grammar(fsg, text):
    assert not heard(fsg, text.replace(" and ", f" {CONJUNCTION} "))


def test_bc22_exclusions_heard_as_said_are_refused_by_the_rules(rules):
    for text in (
        "turn off all the lights except the kitchen",
        "turn off all of the lights but the kitchen and the office",
    ):
        assert rules.recognize(text) is None


def test_conjunction_splits_into_one_segment_per_command():
    said = f"turn on the kitchen light {CONJUNCTION} turn off the bed light"
    transcript = combine([Segment(said, (said, said + f" {CONJUNCTION}"))], "x", 5)
    assert transcript.text == "turn on the kitchen light and turn off the bed light"
    assert transcript.alternatives == (transcript.text,)  # an unfinished "... and" is dropped
    assert transcript.segments == ("turn on the kitchen light", "turn off the bed light")


def test_speech_the_grammar_cannot_fit_is_rejected_not_silence():
    assert combine([Segment("", rejected=True)], "x", 5) == Transcript(
        "", (), rejected=True, engine="x", segments=()
    )
    assert not combine([Segment("")], "x", 5).rejected


# -- synthesized speech through the real recognizer ----------------------------------------
def synthesize(text: str, folder: Path) -> np.ndarray:
    """``text`` spoken by Piper (``hub say``), as 16 kHz int16 mono samples."""
    raw, out = folder / f"{text}.raw.wav", folder / f"{text}.wav"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run(
        [sys.executable, "-m", "hub", "say", text, "--out", str(raw)],
        check=True,
        capture_output=True,
        env=env,
        timeout=120,
    )
    subprocess.run(
        ["sox", "-R", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(out)],
        check=True,
        capture_output=True,
    )
    with wave.open(str(out)) as wav:
        return np.frombuffer(wav.readframes(wav.getnframes()), "<i2").copy()


@pytest.fixture(scope="module")
def engine(settings, vocab):
    return make_asr_engine(settings.asr, settings.home, cache_dir=vocab.directory.parents[1])


VOICE = [
    ("set a timer for zero minutes", ("HassStartTimer", {"seconds": 0, "duration_s": 0})),
    (
        "set a timer for a minute and a half",
        ("HassStartTimer", {"minutes": 1, "seconds": 30, "duration_s": 90}),
    ),
    ("set a one hour timer", ("HassStartTimer", {"hours": 1, "duration_s": 3600})),
    ("nevermind", ("HassNevermind", {})),
    ("turn off all the lights except the kitchen", None),
]


@pytest.mark.parametrize("text,want", VOICE)
def test_bc21_bc22_spoken_phrases(engine, rules, tmp_path, text, want):
    transcript = engine.transcribe(synthesize(text, tmp_path))
    match = rules.rank(transcript.alternatives)[1]
    assert (None if match is None else (match.intent, match.slots)) == want, transcript
    if want is None:  # heard as said, never as "... in the kitchen"
        assert "except" in transcript.text


@pytest.mark.parametrize(
    "text,answer", [("yes", True), ("do it", True), ("no", False), ("cancel", False)]
)
def test_spoken_yes_and_no(engine, tmp_path, text, answer):
    transcript = engine.transcribe(synthesize(text, tmp_path))
    assert confirmation_answer(transcript.text) is answer, transcript


REPLY_WORDS = [
    ("sure", True),
    ("yes", True),
    ("yeah", True),
    ("do it", True),
    ("no", False),
    ("cancel", False),
    ("never mind", False),
]


@pytest.mark.parametrize("text,answer", REPLY_WORDS)
def test_single_spoken_reply_words_with_the_deterministic_voice(engine, text, answer):
    """One reply word alone (Piper's "sure" spans 0.33 s, once dropped as a transient)."""
    transcript = engine.transcribe(np.concatenate([silence(0.5), synth(text), silence(0.8)]))
    assert confirmation_answer(transcript.text) is answer, transcript


SPOKEN_FACTS = [
    ("which year are we in", "year"),
    ("how late is it", "time"),
    ("what day is it", "weekday"),
    ("will it snow tonight", "forecast"),
    ("what's the humidity", "humidity"),
    ("how warm is it inside", "indoor_temperature"),
]


@pytest.mark.parametrize("text,topic", SPOKEN_FACTS)
def test_spoken_fact_questions_are_heard_and_routed(engine, rules, text, topic):
    transcript = engine.transcribe(np.concatenate([silence(0.5), synth(text), silence(0.8)]))
    heard_text, match = rules.rank(transcript.alternatives)
    got = match.intent if match else answers.route(heard_text, rules.home, datetime.now())
    assert got is not None and (match is not None or got.topic == topic), transcript


def test_silence_is_no_speech_not_a_rejection(engine):
    transcript = engine.transcribe(silence(2.0))
    assert transcript.text == "" and not transcript.rejected


def test_no_wide_beam_retry_after_a_heard_command(engine, monkeypatch):
    """Noise after a command is not decoded again with wide beams (it cost 4-16 s)."""

    def fail(*_):
        raise AssertionError("wide-beam retry after an accepted segment")

    monkeypatch.setattr(type(engine), "decode_wide", fail)
    noise = (np.random.default_rng(7).normal(0, 3000, 12800)).astype(np.int16)
    transcript = engine.transcribe(
        np.concatenate([silence(0.5), synth("cancel the timer"), silence(1.2), noise, silence(1.0)])
    )
    assert transcript.text.startswith("cancel"), transcript


def test_two_spoken_commands_are_both_recognized(engine, rules, tmp_path):
    transcript = engine.transcribe(
        synthesize("turn on the kitchen light and turn off the bed light", tmp_path)
    )
    got = [(m.intent, m.slots) for m in (rules.recognize(s) for s in transcript.segments)]
    assert got == [
        ("HassTurnOn", {"name": "Kitchen Light"}),
        ("HassTurnOff", {"name": "Bed Light"}),
    ], transcript


# -- delayed commands (hub.asr.delays) ----------------------------------------------------
DELAYED = [
    ("turn off the lights in 1 hour", "turn off the lights", {"hours": 1}),
    ("in 10 minutes turn on the kitchen light", "turn on the kitchen light", {"minutes": 10}),
    ("in 3 seconds turn on the kitchen light", "turn on the kitchen light", {"seconds": 3}),
    ("turn off the tv after 30 seconds", "turn off the tv", {"seconds": 30}),
    ("after 2 hours turn the bed light off", "turn the bed light off", {"hours": 2}),
]


@pytest.mark.parametrize("text,command,duration", DELAYED)
def test_delayed_commands_are_in_the_grammar_and_read_as_delayed(
    fsg, rules, text, command, duration
):
    assert heard(fsg, text)
    match = rules.recognize(text)
    assert match.intent == "HassStartTimer" and match.slots["conversation_command"] == command
    assert {k: match.slots[k] for k in duration} == duration


@pytest.mark.parametrize(
    "text",
    [
        "in 5 minutes",
        "set a timer for 5 minutes in 10 minutes",
        "what time is it in 5 minutes",
        "turn on the lights in 5",
        "in 5 minutes turn on the lights in 5 minutes",
        "turn on the kitchen light and turn off the bed light in 1 hour",
    ],
)
def test_delays_go_only_with_commands(fsg, text):
    assert not heard(fsg, text.replace(" and ", f" {CONJUNCTION} "))


def test_every_delay_phrasing_of_grammar_commands_is_read_as_that_delayed_command(
    settings, fsg, rules
):
    """Commands the grammar lets a delay follow (a sample), each with every phrasing."""
    import random

    from hub.asr import delays

    commands = [p for p in expand_patterns(template_data()) if p.intent in delays.DELAYABLE]
    slots = _slot_values(settings.home, load_items())
    texts = [t for p in commands for t in _probes(p, slots)[:1]]
    delayable = [t for t in texts if heard(fsg, t + " in 2 minutes")]
    assert len(delayable) > 50
    for text in random.Random(3).sample(delayable, 8):
        inner = rules.recognize(text).intent
        for word in delays.CONNECTORS:
            for unit in delays.UNITS:
                for said in (f"{text} {word} 7 {unit}", f"{word} 7 {unit} {text}"):
                    assert heard(fsg, said), said
                    match = rules.recognize(said)
                    assert match.intent == "HassStartTimer", said
                    assert rules.recognize(match.slots["conversation_command"]).intent == inner


SPOKEN_DELAYED = [
    ("in three seconds turn on the kitchen light", "turn on the kitchen light", 3),
    ("turn off the lights in one hour", "turn off the lights", 3600),
    ("in ten minutes turn on the kitchen light", "turn on the kitchen light", 600),
]


@pytest.mark.parametrize("text,command,seconds", SPOKEN_DELAYED)
def test_spoken_delayed_commands_give_the_delayed_command(engine, rules, text, command, seconds):
    """Once heard as "add 3 seconds to my timer": the grammar had no delayed commands."""
    transcript = engine.transcribe(np.concatenate([silence(0.5), synth(text), silence(0.8)]))
    match = rules.rank(transcript.alternatives)[1]
    assert match is not None and match.intent == "HassStartTimer", transcript
    assert (match.slots["conversation_command"], match.slots["duration_s"]) == (command, seconds), (
        transcript
    )


# -- side-effect-aware rejection (asr.reject_llr_question) ---------------------------------
def test_questions_may_pass_a_looser_threshold_than_commands(settings, vocab):
    """With a strict threshold nothing passes; a loose one for questions lets a spoken
    question through while the spoken command stays rejected, and the question's n-best
    holds only questions."""
    import dataclasses

    asr = dataclasses.replace(
        settings.asr, engine="pocketsphinx", reject_llr=50.0, reject_llr_question=-50.0
    )
    engine = make_asr_engine(asr, settings.home, cache_dir=vocab.directory.parents[1])
    question = engine.transcribe(
        np.concatenate([silence(0.5), synth("what time is it"), silence(0.8)])
    )
    command = engine.transcribe(
        np.concatenate([silence(0.5), synth("turn on the kitchen light"), silence(0.8)])
    )
    assert question.text == "what time is it" and not question.rejected, question
    assert all(engine.is_question(a) for a in question.alternatives)
    assert command.rejected and command.text == "", command
    assert not engine.is_question("turn on the kitchen light") and not engine.is_question("yes")
