"""Facts only from their source: routing fact questions, the answer guard, and the checker."""

from __future__ import annotations

import tomllib
from datetime import datetime
from pathlib import Path

import pytest

from hub.bench.fact_judge import claims_false, judge
from hub.facts import answers, claims
from hub.home import Home
from hub.settings import load_settings

from fakes import FakeLlm, make_hub, settings

NOW = datetime(2026, 12, 1, 9, 41)  # a Tuesday
QUESTIONS = tomllib.loads(
    (Path(__file__).parents[1] / "data" / "fact_questions.toml").read_text(encoding="utf-8")
)["q"]


def sample_home() -> Home:
    return Home.from_settings(settings().home)


def bare_home() -> Home:
    home = settings().home
    ents = tuple(
        e
        for e in home.entities
        if e["domain"] not in ("weather", "climate") and "Humidity" not in e["name"]
    )
    return Home.from_settings(type(home)(entities=ents, areas=home.areas, floors=home.floors))


HOMES = {"sample": sample_home, "bare": bare_home}


def answer_of(fact, home) -> str:
    """What the hub says for a routed fact (an intent goes through the real actor)."""
    if fact.response:
        return fact.response
    from hub.act import Actor
    from hub.act.timers import Timers
    from hub.intents.match import IntentMatch

    match = IntentMatch(fact.intent, fact.slots, "", entities=(fact.slots.get("name"),))
    return Actor(home, Timers(), clock=NOW.timestamp).execute(match, "k").response


@pytest.mark.parametrize("row", QUESTIONS, ids=lambda r: f"{r['q']}-{r.get('home', '')}")
def test_every_fact_question_is_answered_from_its_source(row):
    home = HOMES[row.get("home", "sample")]()
    fact = answers.route(row["q"], home, NOW)
    assert fact is not None, row["q"]
    assert judge(answer_of(fact, home), row, home, NOW) == "right"


@pytest.mark.parametrize(
    "text",
    [
        "the quick brown fox",
        "turn on the kitchen light",
        "set a timer for five minutes",
        "what is the capital of france",
        "is the kitchen window open",
        "tell me a story about a dragon",
    ],
)
def test_other_utterances_are_not_fact_questions(text):
    assert answers.route(text, sample_home(), NOW) is None


@pytest.mark.parametrize(
    "answer",
    [
        "The year is 2018.",
        "Today's date is 2023-12-28.",
        "It's currently 12:30 PM in New York.",
        "No, it's going to be a sunny day.",
        "It is 21.5 degrees.",
        "It's Monday.",
        "The humidity is 40 percent.",
        "The kitchen light is on.",
        "It will rain in March.",
    ],
)
def test_made_up_flags_llm_fact_claims(answer):
    assert claims.made_up(answer, sample_home())


@pytest.mark.parametrize(
    "answer",
    [
        "Blue light scatters more in the air.",
        "Paris is the capital of France.",
        "Once upon a time a knight met a dragon.",
    ],
)
def test_made_up_lets_plain_answers_through(answer):
    assert not claims.made_up(answer, sample_home())


def test_llm_answer_claiming_a_fact_is_replaced_by_the_honest_answer():
    llm = FakeLlm(answer=("It will be sunny tomorrow.",))
    hub = make_hub(text="should I plan a picnic", llm=llm)  # no fact topic: reaches the LLM
    trace = hub.turn_text("should I plan a picnic")
    assert trace["source"] == "llm" and trace["response"] == answers.UNKNOWN
    assert "sunny" not in " ".join(hub.fake_tts.sentences)


def test_llm_answer_keeps_sentences_before_a_claimed_fact():
    llm = FakeLlm(answer=("Dragons are myths.", "It was 1066 when they vanished."))
    hub = make_hub(text="are dragons real", llm=llm)
    trace = hub.turn_text("are dragons real")
    assert trace["response"] == "Dragons are myths."


def test_bc_issue7_examples_through_the_graph():
    """The answers issue 7 found made up, now from the clock, the weather entity or honest."""
    llm = FakeLlm(answer=("The year is 2018.",))
    hub = make_hub(llm=llm)
    year = hub.turn_text("what year is it")
    assert str(datetime.now().year) in year["response"] and "2018" not in year["response"]
    rain = hub.turn_text("is it going to rain tomorrow")
    assert rain["response"].startswith(answers.NO_FORECAST)
    late = hub.turn_text("how late is it")
    assert late["intent"] == "HassGetCurrentTime" and "New York" not in late["response"]
    assert llm.calls == []  # none of them needed the model


# -- the checker itself --------------------------------------------------------------------------
ROW = {"q": "what year is it", "kind": "year"}


@pytest.mark.parametrize(
    "answer, row, verdict",
    [
        ("It's 2026.", ROW, "right"),
        ("The year is 2018.", ROW, "made_up"),
        ("Sorry, I couldn't understand that.", ROW, "wrong"),
        ("It's 9:41 AM.", {"kind": "time"}, "right"),
        ("It's 9:42 AM.", {"kind": "time"}, "right"),
        ("It's 12:30 PM.", {"kind": "time"}, "made_up"),
        ("Today is Tuesday, December 1st, 2026.", {"kind": "date"}, "right"),
        ("Today's date is 2023-12-28.", {"kind": "date"}, "made_up"),
        ("It's Monday.", {"kind": "weekday"}, "made_up"),
        ("I don't have a forecast. Right now it's sunny.", {"kind": "forecast"}, "right"),
        ("No, it's going to be a sunny day.", {"kind": "forecast"}, "made_up"),
        ("Yes.", {"kind": "forecast"}, "made_up"),
        ("Sunny", {"kind": "weather"}, "right"),
        ("It's raining.", {"kind": "weather"}, "made_up"),
        ("Outdoor humidity is 64 %", {"kind": "humidity"}, "right"),
        ("21.5 degrees", {"kind": "humidity"}, "wrong"),
        ("It's 40 percent.", {"kind": "humidity"}, "made_up"),
        ("21.5 degrees", {"kind": "indoor_temperature"}, "right"),
        ("Yes", {"kind": "state", "entity": "Front Door", "asked": "locked"}, "right"),
        ("No, unlocked", {"kind": "state", "entity": "Front Door", "asked": "locked"}, "made_up"),
        ("Front door is unlocked.", {"kind": "state", "entity": "Front Door"}, "made_up"),
        (
            "Kitchen light is off.",
            {"kind": "state", "entity": "Kitchen Light", "asked": "on"},
            "right",
        ),
    ],
)
def test_checker(answer, row, verdict):
    assert judge(answer, row, sample_home(), NOW) == verdict


def test_checker_bare_home_wants_honesty():
    home = bare_home()
    assert judge(answers.NO_HUMIDITY, {"kind": "humidity"}, home, NOW) == "right"
    assert judge("Outdoor humidity is 64 %", {"kind": "humidity"}, home, NOW) == "made_up"
    assert claims_false("It's 9:41 AM on Tuesday.", home, NOW) == []


@pytest.mark.parametrize(
    "question",
    [
        "what year did the titanic sink",
        "which year is a leap year",
        "what date is easter",
        "what is the date of the first day of spring",
        "what time is my meeting",
        "how hot is the coffee",
        "what's the temperature of the oven",
        "what is the temperature of the sun",
        "what is the weather like on mars",
        "what time is it in london",
        "what day is christmas",
    ],
)
def test_a_question_about_something_else_is_not_answered_from_the_clock_or_a_sensor(question):
    from datetime import datetime

    from hub.facts.answers import UNKNOWN, honest_answer
    from hub.facts.topics import foreign_words
    from hub.home import Home

    home = Home.from_settings(load_settings(None).home)
    assert foreign_words(question, home)
    assert honest_answer(question, home, datetime(2026, 12, 1, 17, 0)) == UNKNOWN


@pytest.mark.parametrize(
    "question, kind",
    [
        ("hey what time is it please", "time"),
        ("what's the temperature in the kitchen", "indoor_temperature"),
        ("is it cold outside", "outdoor_temperature"),
        ("got the time?", "time"),
        ("what's the weather gonna be like tomorrow afternoon", "forecast"),
    ],
)
def test_a_question_about_a_current_fact_is_still_answered_from_its_source(question, kind):
    from datetime import datetime

    from hub.facts.answers import route
    from hub.facts.topics import foreign_words
    from hub.home import Home

    home = Home.from_settings(load_settings(None).home)
    assert not foreign_words(question, home)
    assert route(question, home, datetime(2026, 12, 1, 17, 0)).topic == kind


def test_a_past_year_question_is_not_answered_with_this_year_through_the_turn():
    hub = make_hub()
    trace = hub.turn_text("what year did the titanic sink")
    assert "2026" not in trace["response"] and trace["intent"] is None, trace
    assert hub.turn_text("what year is it")["response"] == f"It's {datetime.now().year}."


@pytest.mark.parametrize(
    "question, honest",
    [
        (
            "what is the temperature of the garage door",
            "I don't have a temperature reading for the Garage Door.",
        ),
        (
            "what is the humidity of the kitchen light",
            "I don't have a humidity reading for the Kitchen Light.",
        ),
    ],
)
def test_a_measurement_of_a_device_that_does_not_measure_it_is_not_another_devices(
    question, honest
):
    trace = make_hub().turn_text(question)
    assert trace["response"] == honest and "21.5" not in trace["response"], trace
    assert (
        make_hub().turn_text("what's the temperature of the ecobee")["response"] == "21.5 degrees."
    )


def test_a_device_state_question_in_other_words_is_still_answered_from_the_home():
    trace = make_hub().turn_text("is the bed light switched off")
    assert trace["intent"] == "HassGetState" and trace["slots"]["name"] == "Bed Light", trace
