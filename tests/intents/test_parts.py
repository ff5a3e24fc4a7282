"""The breaker's findings at the rules' level: several commands read part by part
(:func:`hub.intents.multi.read_parts`), the fuzzy matcher's compound readings, contradictory
action words (:mod:`hub.intents.meaning`) and a condition read as a device name
(:class:`hub.act.honest.Misses`)."""

from __future__ import annotations

import pytest

from hub.act.honest import misses_of, parts_update
from hub.intents.match import IntentMatch
from hub.intents.meaning import MeaningLost, contradicted, ignored_meaning, unread_meaning
from hub.intents.multi import Missing, lead

from homes import fixture_home
from intent_table import rules


def _parts(text: str):
    engine = rules()
    return engine.recognize_parts(text, "", misses_of(engine.home).answer)


def _shape(parts) -> list[str]:
    """Each part as its intent, or ``missing: <error>``."""
    return [p.intent if isinstance(p, IntentMatch) else f"missing: {p.response}" for p in parts]


# -- 1. "A and B" read part by part ------------------------------------------------------------
@pytest.mark.parametrize(
    "text, shape",
    [
        (
            "turn on the office light and turn off the attic light",
            ["HassTurnOn", "missing: Sorry, I am not aware of any area called attic"],
        ),
        (
            "turn on the office light and then turn off the garden lights",
            ["HassTurnOn", "missing: Sorry, I am not aware of any area called garden"],
        ),
        (
            "turn on the kitchen light and the attic fan",
            ["HassTurnOn", "missing: Sorry, I am not aware of any area called attic"],
        ),
        (
            "turn off the kitchen light and unlock the back door",
            ["HassTurnOff", "missing: Sorry, I am not aware of any device called back door"],
        ),
        (
            "turn on the office light, turn off the attic light and turn on the kitchen light",
            [
                "HassTurnOn",
                "missing: Sorry, I am not aware of any area called attic",
                "HassTurnOn",
            ],
        ),
        (
            "turn on the kitchen light and the standing light",
            ["HassTurnOn", "HassTurnOn"],  # "the standing light" takes "turn on"
        ),
    ],
)
def test_finding_and_parts_are_read_one_by_one(text, shape):
    assert _shape(_parts(text)) == shape


@pytest.mark.parametrize(
    "text",
    [
        "turn on the kitchen light",  # no conjunction
        "add milk and eggs to the shopping list",  # one command (its own strict match)
        "set the bed light to red and 50 percent",  # "50 percent" is no command
        "turn on the office light and don't turn off the kitchen light",  # a negation
    ],
)
def test_finding_and_what_is_not_several_commands_is_not_read_part_by_part(text):
    parts = _parts(text)
    assert parts is None or not any(isinstance(p, Missing) for p in parts)
    assert parts_update(parts, text) is None


def test_finding_and_the_update_says_each_missing_part_and_that_nothing_was_done():
    parts = _parts("turn off the attic light and turn on the kitchen light and the cellar fan")
    update = parts_update(parts, "...")
    assert update["matches"] == [] and update["transcript"] == "..."
    assert update["response"] == (
        "Sorry, I am not aware of any area called attic. "
        "Sorry, I am not aware of any area called cellar. Nothing was done."
    )


@pytest.mark.parametrize(
    "part, words",
    [
        ("turn on the kitchen light", "turn on"),
        ("please switch off the tv", "please switch off"),
        ("open the garage door", "open"),
        ("the office light", ""),  # none of its own
        ("office lights", ""),  # no determiner: no telling
        ("set the timer for 5 minutes", "set"),
        ("add 2 to the list", ""),  # a number among them: no action words alone
        ("could you please turn on all the lights", ""),  # more than three words
    ],
)
def test_finding_and_a_part_s_action_words(part, words):
    assert lead(part) == words


# -- the fuzzy matcher's compound readings -----------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "turn on the office light and turn off the attic light",
        "turn on the office light and switch the attic light off",
        "turn on the kitchen light and the attic light",
        "turn on the kitchen light and the attic fan",
        "turn the tv on and the lights off",
    ],
)
def test_finding_and_a_later_command_never_borrows_an_earlier_target(text):
    fuzzy = rules().fuzzy
    assert fuzzy.load().interpret(text).accepted  # the matcher alone reads it ...
    assert fuzzy.frames(text) is None  # ... the hub does not take that reading


@pytest.mark.parametrize(
    "text, n",
    [
        ("turn on the bed light and set its brightness to 40%", 2),
        ("turn on the bed light and set it to 50 percent", 2),
        ("turn on the kitchen and office lights", 2),
        ("turn on the kitchen light and the office light", 2),
        ("turn on the office light and turn off the office light", 2),
    ],
)
def test_finding_and_compound_readings_that_name_their_own_targets_stay(text, n):
    frames = rules().fuzzy.frames(text)
    assert frames is not None and len(frames) == n


def test_finding_and_the_fixture_home_reads_the_same():
    from hub.intents.fuzzy import Fuzzy

    fuzzy = Fuzzy(fixture_home(), background=False)
    assert fuzzy.frames("turn on the office light and turn off the attic light") is None
    assert len(fuzzy.frames("turn on the kitchen light and the office light") or []) == 2


# -- 2. contradictory action words -------------------------------------------------------------
@pytest.mark.parametrize(
    "text, word",
    [
        ("turn on the kitchen light off", "on"),
        ("switch on the bed light off", "on"),
        ("turn off the office light on", "off"),
        ("open the garage door closed", "open"),
        ("lock the front door unlocked", "lock"),
        ("close the garage door open", "open"),
        ("pause the tv resume", "pause"),
        ("mute the tv unmute", "unmute"),
    ],
)
def test_finding_relaxed_a_left_out_word_whose_opposite_is_said_is_a_contradiction(text, word):
    found = rules().relaxed_reading(text)
    assert isinstance(found, MeaningLost), found
    assert found.word_class in ("contradiction", "place")
    tokens = text.split()
    assert contradicted(tokens, [tokens.index(word)]) == MeaningLost("contradiction", (word,))


@pytest.mark.parametrize(
    "text, left_out",
    [
        ("lower the volume on the tv", "on"),  # no "off" said: a preposition
        ("lock up the front door please", "up"),  # no "down" said
        ("turn on the kitchen light please", "please"),  # not an action word
    ],
)
def test_finding_relaxed_a_left_out_word_without_its_opposite_is_no_loss(text, left_out):
    tokens = text.split()
    assert ignored_meaning(tokens, [tokens.index(left_out)]) is None


def test_finding_relaxed_a_question_may_name_both_states():
    said = "is the garage door open or closed"
    assert unread_meaning(said, "HassGetState", {"name": "Garage Door"}, ("contradiction",)) is None
    found = unread_meaning(said, "HassTurnOn", {"name": "Garage Door"}, ("contradiction",))
    assert found is not None and found.word_class == "contradiction"


# -- 3. a condition (or a contradiction) read as a device name ---------------------------------
@pytest.mark.parametrize(
    "text, word_class",
    [
        ("turn on the light unless it's dark", "condition"),
        ("turn off the tv unless someone is watching", "condition"),
        ("turn on the lamp if it gets dark", "condition"),
        ("turn on the porch light tonight", "time"),
        ("turn on the kitchen light off", "contradiction"),
    ],
)
def test_finding_odd_a_wildcard_name_with_a_meaning_word_is_no_name(text, word_class):
    misses = misses_of(rules().home)
    assert misses.answer(text) is None
    lost = misses.lost(text)
    assert lost is not None and lost.word_class == word_class


@pytest.mark.parametrize(
    "text, answer",
    [
        ("unlock the back door", "Sorry, I am not aware of any device called back door"),
        ("turn on the upstairs light", "Sorry, I am not aware of any area called upstairs"),
    ],
)
def test_finding_odd_a_name_the_home_lacks_is_still_said(text, answer):
    misses = misses_of(rules().home)
    assert misses.answer(text) == answer and misses.lost(text) is None
