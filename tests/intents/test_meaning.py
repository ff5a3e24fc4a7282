"""Loose readings never act past a word that changes the meaning (:mod:`hub.intents.meaning`):
the relaxed rules (a word left out) and the fuzzy matcher (words left unexplained) refuse a
reading that leaves out a negation, an exception, a sign, a time or a condition, and still read
a sentence whose left-out words are fillers; words a full match uses keep working."""

from __future__ import annotations

import pytest

from hub.intents.match import IntentMatch
from hub.intents.meaning import (
    MeaningLost,
    ignored_meaning,
    negative_value,
    unread_meaning,
    word_classes,
)

from intent_table import rules

# (sentence, its class): each is read by a loose path when the guard is off (asserted below)
LOST = [
    ("don't turn on the kitchen light", "negation"),
    ("dont turn off the office light", "negation"),
    ("never unlock the front door", "negation"),
    ("please never open the garage door", "negation"),
    ("never close the sliding door", "negation"),
    ("no turn off the bed light", "negation"),
    ("do not open the garage door", "negation"),
    ("turn off all the lights except the kitchen", "exception"),
    ("turn off all the lights but not the kitchen", "exception"),
    ("switch off every light other than the office light", "exception"),
    ("set a timer for minus 5 minutes", "sign"),
    ("set a timer for negative 10 minutes", "sign"),
    ("turn on the kitchen light tomorrow", "time"),
    ("turn off the office light tonight", "time"),
    ("unlock the front door later", "time"),
    ("open the garage door tomorrow", "time"),
    ("lock the front door tonight", "time"),
    ("turn on the bed light afterwards", "time"),
    ("pause the tv later", "time"),
    ("turn on the kitchen light in the morning", "time"),
    ("turn on the kitchen light at 7 pm", "time"),
    ("switch on the standing light on monday", "time"),
    ("turn on the kitchen light when dark", "condition"),
    ("turn off the tv unless", "condition"),
    # found by the breaker: words that take the command back or turn it around
    ("turn on the kitchen light cancel", "retraction"),
    ("turn on the kitchen light scratch that", "retraction"),
    ("turn off the office light just kidding", "retraction"),
    ("turn on the kitchen light nope", "retraction"),
    ("open the garage door wait", "retraction"),
    ("turn the opposite of on the kitchen light", "retraction"),
    ("maybe turn on the kitchen light", "retraction"),
    # found by the breaker: a place the home lacks, left out, acted on elsewhere
    ("turn on the office light and turn off the lights in the garden", "place"),
]


def _loose_reading(text: str) -> bool:
    """True when a loose path reads ``text`` without the guard: one word left out gives a
    strict match, or the fuzzy matcher accepts a reading."""
    words, engine = text.split(), rules()
    dropped = any(engine.recognize(" ".join(words[:i] + words[i + 1 :])) for i in range(len(words)))
    result = engine.fuzzy.load().interpret(text)
    return dropped or bool(result.accepted and result.frames)


@pytest.mark.parametrize("text, word_class", LOST)
def test_a_loose_reading_that_leaves_out_meaning_is_not_taken(text, word_class):
    engine = rules()
    assert engine.recognize(text) is None
    assert engine.recognize_more(text) == []  # several commands, then the fuzzy matcher
    assert engine.recognize_fuzzy(text) is None  # the relaxed rules (L2)
    found = engine.relaxed_reading(text)
    if word_class != "exception":  # an exclusion is refused before any reading
        assert _loose_reading(text), "the row must be one a loose path reads"
    assert isinstance(found, MeaningLost), found
    assert found.word_class in {word_class, "negation", "exception"}


@pytest.mark.parametrize(
    "text, intent, slots",
    [
        ("um turn on the kitchen light", "HassTurnOn", {"name": "Kitchen Light"}),
        ("please turn on the kitchen light thanks", "HassTurnOn", {"name": "Kitchen Light"}),
        ("could you turn on the kitchen light", "HassTurnOn", {"name": "Kitchen Light"}),
        ("uh turn off the office light", "HassTurnOff", {"name": "Office Light"}),
        ("hey set a timer for 5 minutes", "HassStartTimer", {"minutes": 5}),
    ],
)
def test_filler_words_left_out_still_read_as_the_command(text, intent, slots):
    engine = rules()
    match = engine.recognize(text)
    if match is None:
        found = engine.relaxed_reading(text)
        match = found if isinstance(found, IntentMatch) else None
    if match is None:
        (match,) = engine.recognize_more(text)
    assert match.intent == intent
    assert {k: match.slots.get(k) for k in slots} == slots


@pytest.mark.parametrize(
    "text, intent",
    [
        ("set a timer for 5 minutes", "HassStartTimer"),
        ("turn on the kitchen light in 5 minutes", "HassStartTimer"),
        ("in 10 minutes turn off the office light", "HassStartTimer"),
        ("set an alarm for 7 am", "HubAlarmSet"),
    ],
)
def test_a_full_match_keeps_its_time_words(text, intent):
    match = rules().recognize(text)
    assert match is not None and match.intent == intent


def test_word_classes_tag_each_kind_of_meaning():
    text = "don't turn off all lights except the tv at 7 pm if minus"
    tokens = text.split(" ")
    got = dict(zip(tokens, word_classes(tokens), strict=True))
    assert got["don't"] == "negation" and got["except"] == "exception"
    assert got["at"] == got["7"] == got["pm"] == "time"
    assert got["if"] == "condition" and got["minus"] == "sign"
    assert got["turn"] is got["lights"] is got["the"] is None


@pytest.mark.parametrize(
    "text", ["tell me if the front door is locked", "when does the timer end", "please thanks"]
)
def test_questions_and_fillers_carry_no_meaning_class(text):
    assert set(word_classes(text.split())) == {None}


def test_only_the_words_a_reading_left_out_count():
    text = "set a timer for 5 minutes tomorrow"
    tokens = text.split(" ")
    assert ignored_meaning(tokens, [1]) is None  # "a"
    lost = ignored_meaning(tokens, [6])
    assert lost == MeaningLost("time", ("tomorrow",))
    assert ignored_meaning(tokens, [6], allowed=("time",)) is None


def test_a_negative_number_only_where_a_slot_takes_one():
    assert negative_value({"minutes": -5}) == MeaningLost("sign", ("minutes=-5",))
    assert negative_value({"temperature": -5, "minutes": 5}) is None


@pytest.mark.parametrize(
    "transcript, intent, slots, lost",
    [
        ("don't turn off the kitchen light", "HassTurnOff", {"name": "Kitchen Light"}, True),
        ("turn on do not disturb", "HassTurnOn", {"name": "Do Not Disturb"}, False),
        (
            "add don't forget to the list",
            "HassShoppingListAddItem",
            {"item": "don't forget"},
            False,
        ),
    ],
)
def test_llm_readings_keep_the_words_their_text_slots_carry(transcript, intent, slots, lost):
    found = unread_meaning(transcript, intent, slots, ("negation", "exception"))
    assert (found is not None) is lost


@pytest.mark.parametrize(
    "said", ["in 5 minutes turn off the kitchen light", "in a little while make everything dark"]
)
def test_llm_time_words_count_only_for_intents_that_take_no_time(said):
    timer = {"minutes": 5, "conversation_command": "turn off the kitchen light"}
    assert unread_meaning(said, "HassStartTimer", timer, ("time", "condition")) is None
    said = "turn off the kitchen light tomorrow"
    found = unread_meaning(said, "HassTurnOff", {"name": "Kitchen Light"}, ("time",))
    assert found == MeaningLost("time", ("tomorrow",), "HassTurnOff")
