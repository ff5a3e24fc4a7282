"""Facts that change over time are never stated from the LLM (the tester's HIGH finding: "who
is the prime minister of the uk" -> "The Prime Minister of the United Kingdom is The Queen
Elizabeth II."): the question (:func:`hub.facts.changing.asks_changing`) and the answer
(:func:`hub.facts.changing.claims_changing`) are checked, on every path a turn takes."""

from __future__ import annotations

import dataclasses

import pytest

from hub.facts.changing import OUT_OF_DATE, asks_changing, claims_changing
from hub.facts.claims import made_up
from hub.wyoming.handle import handle_text

from fakes import FakeLlm, make_hub, speech

PM = "who is the prime minister of the uk"


@pytest.mark.parametrize(
    "question, kind",
    [
        (PM, "office"),
        ("who is the chancellor of germany", "office"),
        ("who's the president of the united states", "office"),
        ("tell me who the president of brazil is", "office"),
        ("how old is the president", "office"),
        ("who runs amazon", "office"),
        ("who is the head coach of the dallas cowboys", "office"),
        ("who is the current pope", "now"),
        ("what is the latest version of python", "now"),
        ("what's the newest iphone", "now"),
        ("when is the next presidential election", "now"),
        ("who won the last world cup", "now"),
        ("is the queen still alive", "now"),
        ("what movies are in theaters right now", "now"),
        ("who won the nobel peace prize this year", "now"),
        ("who is next in line to the throne", "now"),
        ("who won the super bowl", "winner"),
        ("who is the heavyweight boxing champion", "winner"),
        ("who holds the world record for the marathon", "record"),
        ("who is the richest person in the world", "record"),
        ("what's the tallest building in the world", "record"),
        ("what is the price of bitcoin", "market"),
        ("how much does a gallon of gas cost", "market"),
        ("what is the population of tokyo", "market"),
        ("what is the score of the lakers game", "market"),
        ("what's the unemployment rate", "market"),
        ("who is taylor swift dating", "person"),
    ],
)
def test_changing_facts_are_found_in_the_question(question, kind):
    assert asks_changing(question) == kind


@pytest.mark.parametrize(
    "question",
    [
        "what is the capital of france",
        "who wrote hamlet",
        "how many legs does a spider have",
        "who was the first president of the united states",  # an ordinal, a past tense
        "who was the king of england in 1600",  # a year
        "who won the world cup in 1966",
        "who was the last emperor of china",
        "who won world war two",  # no contest held again
        "what does a prime minister do",  # a definition
        "what is a stock",
        "what is inflation",
        "who elects the president",
        "what is electric current",  # the noun, not "the current ..."
        "what causes ocean currents",
        "what is the currency of japan",
        "what is the next prime after 7",  # an order, not a time
        "what is the next planet after earth",
        "who is the king of the jungle",  # an idiom, no office
        "who is the greek god of the sea",
        "how old is the universe",
        "",
    ],
)
def test_stable_facts_definitions_and_the_past_are_not_changing(question):
    assert asks_changing(question) is None


@pytest.mark.parametrize(
    "answer",
    [
        "The Prime Minister of the United Kingdom is The Queen Elizabeth II.",
        "The Chancellor of Germany is Angela Merkel.",
        "Joe Biden is the President of the United States.",
        "The Secretary General of the United Nations is Ban Ki-moon.",
        "The leader of North Korea is Kim Jong Un.",
        "The current CEO of Apple is Tim Cook.",
        "Currently, the tallest building is the Burj Khalifa.",
        "The latest version is Python 3.12.",
        "Tokyo has a population of about 14 million.",
        "Bitcoin is trading at $30,000.",
        "An iPhone costs about 999 dollars.",
        "Eliud Kipchoge holds the world record.",
        "Argentina are the reigning champions.",
        "Elon Musk is now the owner of Twitter.",
        "North Korea's leader, Kim Jong Un.",  # said by SmolLM2 with its gate off
        "The President of the United States is 46, a testament to ...",
        "The largest company in the world is Amazon.",
        "The score of the Lakers game is 21.",
    ],
)
def test_answers_that_state_a_changing_fact_are_made_up(answer):
    assert claims_changing(answer) and made_up(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "Paris is the capital of France.",
        "William Shakespeare wrote Hamlet.",
        "The first President of the United States was George Washington.",
        "The President of the United States is the head of state.",
        "A prime minister leads the government.",
        "The lion is the king of the jungle.",
        "There are 100 cents in a dollar.",
        "A kilogram is about 2.2 pounds.",
        "Electric current is the flow of electric charge.",
        "Poseidon is the Greek god of the sea.",
    ],
)
def test_stable_answers_are_not_changing_claims(answer):
    assert not claims_changing(answer)


class CountingLlm(FakeLlm):
    """A canned LLM that records the questions it was asked to answer."""

    def __init__(self, answer):
        super().__init__(answer=answer)
        self.asked: list[str] = []

    def answer(self, question, cancel=None):
        self.asked.append(question)
        yield from self.answer_sentences


STALE = ("The Prime Minister of the United Kingdom is The Queen Elizabeth II.",)


def test_finding_prime_minister_typed_is_out_of_date_and_the_model_is_not_asked():
    llm = CountingLlm(STALE)
    hub = make_hub(llm=llm, entry="ask")
    trace = hub.turn_text(PM)
    assert (trace["response"], trace["source"]) == (OUT_OF_DATE, "llm")
    assert llm.asked == [] and "Queen" not in " ".join(hub.fake_tts.sentences)


def test_finding_prime_minister_heard_by_the_recognizer_is_out_of_date():
    hub = make_hub(text=PM, llm=CountingLlm(STALE), entry="run")  # hub run / replay: audio
    trace = hub.turn_audio(speech())
    assert trace["transcript"] == PM and trace["response"] == OUT_OF_DATE


def test_finding_prime_minister_asked_through_wyoming_is_out_of_date():
    hub = make_hub(llm=CountingLlm(STALE), entry="run")  # hub wyoming's entry
    event = handle_text(hub, PM, None, "conversation-1")
    assert event.data["text"] == OUT_OF_DATE


def test_an_answer_volunteering_a_current_office_holder_is_not_said():
    llm = CountingLlm(("The Chancellor of Germany is Angela Merkel.",))
    hub = make_hub(llm=llm, entry="ask")
    trace = hub.turn_text("tell me something about germany")  # the question is stable
    assert llm.asked and trace["response"] == OUT_OF_DATE
    assert "Merkel" not in " ".join(hub.fake_tts.sentences)


def test_a_later_sentence_saying_currently_ends_the_answer():
    llm = CountingLlm(("Germany is a country in Europe.", "It is currently led by Olaf Scholz."))
    hub = make_hub(llm=llm, entry="ask")
    trace = hub.turn_text("tell me something about germany")
    assert trace["response"] == "Germany is a country in Europe."


def test_a_stable_question_is_still_answered_by_the_model():
    llm = CountingLlm(("Paris is the capital of France.",))
    hub = make_hub(llm=llm, entry="ask")
    trace = hub.turn_text("what is the capital of france")
    assert trace["response"] == "Paris is the capital of France." and llm.asked


def test_a_changing_question_misread_as_the_date_is_not_answered_from_the_clock():
    hub = make_hub(llm=CountingLlm(STALE), entry="ask")
    for question in ("what is the latest version of python", "what is the price of bitcoin"):
        trace = hub.turn_text(question)
        assert (trace["response"], trace["intent"]) == (OUT_OF_DATE, None), trace


def test_the_clock_and_the_home_still_answer_now_and_still():
    hub = make_hub(llm=CountingLlm(STALE), entry="ask")
    assert hub.turn_text("what time is it right now")["intent"] == "HassGetCurrentTime"
    assert hub.turn_text("is the kitchen light still on")["intent"] == "HassGetState"
    assert hub.turn_text("what is the current temperature")["response"] != OUT_OF_DATE


@pytest.mark.models
def test_the_real_model_names_stale_office_holders_and_the_hub_says_none():
    """SmolLM2 with its sureness gate off names someone for the tester's questions; every such
    sentence is a made-up claim, and through the graph (gate on) the hub says
    :data:`OUT_OF_DATE` for them while a stable question still reaches the model."""
    from hub.core.hub import Hub
    from hub.llm import make_llm
    from hub.llm.prompts import DEFAULT_INTENTS
    from hub.resilience.load import FixedProbe
    from hub.settings import load_settings

    from fakes import FakeTts, settings, unhurried

    base = load_settings(None)
    engine = make_llm(
        dataclasses.replace(base.llm, answer_min_logprob=-100.0), base.home, DEFAULT_INTENTS
    )
    try:
        for question in (PM, "who is the chancellor of germany"):
            said = list(engine.answer(question))
            assert said and all(made_up(s) for s in said), said
    finally:
        engine.close()
    hub = Hub(
        unhurried(settings(llm=True)),
        entry="ask",
        store=None,
        probe=FixedProbe(),
        factories={"tts": lambda h: FakeTts()},
    )
    assert hub.turn_text(PM)["response"] == OUT_OF_DATE
    stable = hub.turn_text("what is the capital of france")
    assert stable["source"] == "llm" and stable["response"] not in ("", OUT_OF_DATE)
