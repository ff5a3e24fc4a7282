"""The classify grammar of one turn: every name once (shared rules), and in a large home only
the names retrieved for the turn, so its size does not grow with the home."""

from __future__ import annotations

import re

import pytest

from hub.llm import prompts, retrieve
from hub.llm.grammar import KEEP, TurnGrammars
from hub.settings import load_settings

from homes import LARGE_HOMES as HOMES
from homes import big_home, ha_fixture_home


def names_in(gbnf: str, home) -> set[str]:
    """The home's entity names that occur as literals in ``gbnf``."""
    return {e["name"] for e in home.entities if f'"\\"{e["name"]}\\""' in gbnf}


def test_every_name_is_one_shared_rule_in_a_small_home():
    home = load_settings(None).home
    gbnf = TurnGrammars(prompts.DEFAULT_INTENTS, home).for_text("tell me a joke")
    assert names_in(gbnf, home) == {e["name"] for e in home.entities}
    assert gbnf.count('"\\"Kitchen Light\\""') == 1  # not once per intent branch


@pytest.mark.parametrize("name", HOMES)
def test_large_home_grammar_names_only_the_retrieved_entities(name):
    home = HOMES[name]()
    text = "turn on the kitchen light"
    gbnf = TurnGrammars(prompts.DEFAULT_INTENTS, home).for_text(text)
    retrieved = {e["name"] for e in retrieve.relevant(home, text)[0]}
    assert retrieved and names_in(gbnf, home) == retrieved
    shown = prompts.classify_messages(text, prompts.DEFAULT_INTENTS, home)[-1]["content"]
    assert all(n in shown for n in retrieved)  # the grammar allows what the prompt shows


def test_grammar_size_does_not_grow_with_the_home():
    sizes = {
        label: len(
            TurnGrammars(prompts.DEFAULT_INTENTS, make()).for_text("turn on the kitchen light")
        )
        for label, make in (("small", lambda: load_settings(None).home), *HOMES.items())
    }
    assert sizes["generated_500"] <= 1.2 * sizes["small"], sizes


def test_a_question_about_no_device_offers_no_name():
    home = big_home()
    gbnf = TurnGrammars(prompts.DEFAULT_INTENTS, home).for_text("how far away is the moon")
    assert names_in(gbnf, home) == set()
    assert not re.search(r'"\\"name\\""', gbnf)


def test_grammars_are_cached_per_set_of_names_and_bounded():
    grammars = TurnGrammars(prompts.DEFAULT_INTENTS, ha_fixture_home())
    first = grammars.for_text("turn on the kitchen light")
    assert grammars.for_text("please turn on the kitchen light") is first  # same names
    for area in [a["name"] for a in ha_fixture_home().areas][: KEEP + 2]:
        grammars.for_text(f"turn on the lights in the {area}")
    assert len(grammars._cache) <= KEEP


def test_domain_word_alone_does_not_pull_in_every_sensor():
    home = ha_fixture_home()
    entities, _ = retrieve.relevant(home, "what is the temperature in the office")
    names = [e["name"] for e in entities]
    assert "Office Thermostat" in names and "My Phone" not in names


def test_short_description_leaves_out_an_area_the_name_says():
    lamp = {"name": "Office Lamp 1", "domain": "light", "area": "Office"}
    assert prompts._describe(lamp, short=True) == "Office Lamp 1 (light)"
    assert prompts._describe({**lamp, "name": "Lamp"}, short=True) == "Lamp (light, Office)"
    assert prompts._describe(lamp) == "Office Lamp 1 (light, Office)"  # a small home's prefix
