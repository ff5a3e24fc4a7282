"""A fact intent never answers a question about another time, place or device (issue 7 item 4):
the rules' fact intents speak only of here and now and of the devices that were named."""

import pytest

from hub.facts.claims import made_up
from hub.graph.facts import NO_SUCH_DEVICE, NOT_HERE_AND_NOW
from hub.llm.markup import clean_answer
from tests.fakes import make_hub


@pytest.fixture(scope="module")
def hub():
    return make_hub(entry="ask")


@pytest.mark.parametrize(
    "question, honest",
    [
        ("what time is it in Tokyo", NOT_HERE_AND_NOW),
        ("how hot will it be next week", NOT_HERE_AND_NOW),
        ("how warm was it yesterday", NOT_HERE_AND_NOW),
        ("what time does the store close", NOT_HERE_AND_NOW),
        ("what's the date tomorrow", NOT_HERE_AND_NOW),
        ("how many days until new year", NOT_HERE_AND_NOW),
        ("what year was it ten years ago", NOT_HERE_AND_NOW),
        ("when does the sun set today", NOT_HERE_AND_NOW),
        ("tell me the temperature in the garage", NOT_HERE_AND_NOW),
        ("is the back door locked", NO_SUCH_DEVICE),
    ],
)
def test_fact_questions_beyond_the_source_get_an_honest_answer(hub, question, honest):
    trace = hub.turn_text(question)
    assert (trace["response"], trace["intent"]) == (honest, None)


@pytest.mark.parametrize(
    "question, intent",
    [
        ("what time is it", "HassGetCurrentTime"),
        ("is the Front Door locked", "HassGetState"),
        ("is the kitchen light on", "HassGetState"),
        ("what's the weather in New York", "HassGetWeather"),
        ("what's the temperature of the EcoBee", "HassClimateGetTemperature"),
        ("how many lights are on", "HassGetState"),  # "many lights": no device named "many"
        ("are some lights on", "HassGetState"),
    ],
)
def test_fact_questions_about_here_and_now_are_answered(hub, question, intent):
    trace = hub.turn_text(question)
    assert trace["intent"] == intent and trace["response"] not in (NOT_HERE_AND_NOW, NO_SUCH_DEVICE)


@pytest.mark.parametrize(
    "question, intent",
    [
        ("what day of the week is it", "HassGetCurrentDate"),
        ("which month is it", "HassGetCurrentDate"),
        ("what month are we in", "HassGetCurrentDate"),
        ("what's the temperature in the house", "HassClimateGetTemperature"),
    ],
)
def test_the_current_week_month_and_house_are_here_and_now(hub, question, intent):
    trace = hub.turn_text(question)
    assert trace["intent"] == intent and trace["response"] not in (NOT_HERE_AND_NOW, NO_SUCH_DEVICE)


@pytest.mark.parametrize(
    "answer",
    [
        "Done, the lights are now on.",
        "The door is unlocked.",
        "It is half past twelve.",
        "It is freezing outside right now.",
        "I have unlocked the front door for you.",
        "It's quarter to five.",
        "I turned the heating off.",
    ],
)
def test_llm_answers_that_claim_a_state_time_or_action_are_made_up(answer):
    assert made_up(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "Paris is the capital of France.",
        "The sky looks blue because of Rayleigh scattering.",
        "A knight rode out to meet the dragon.",
        "Light travels very fast.",
    ],
)
def test_ordinary_llm_answers_are_not_made_up(answer):
    assert not made_up(answer)


@pytest.mark.parametrize(
    "piece",
    [
        '"intent": "HassTurnOn", "slots": {"name": "Front Door"}} here.',
        "```json",
        'json {"a":1}',
        'Sure! {"intent": "HassTurnOn", "slots": {"name": "Front Door"',
    ],
)
def test_bc13_a_piece_of_json_cut_by_the_sentence_splitter_is_never_spoken(piece):
    assert not any(ch in clean_answer(piece) for ch in '{}`"') and "intent" not in clean_answer(
        piece
    )
