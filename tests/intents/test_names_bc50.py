"""BC-50: the imported home's aliases and same-named entities, as Home Assistant uses them.

"turn on the big light" reaches the entity whose alias it is (typed and spoken: the alias is in
the PocketSphinx grammar and the Whisper prompt); two "Ceiling Light"s keep their name and are
told apart by the spoken area, else the satellite's, else "Which area do you mean?".
"""

from __future__ import annotations

import dataclasses

import pytest
from dialog_helpers import Clock, said

from hub.asr.vocab import _slot_values, build_vocab
from hub.asr.whisper_prompt import initial_prompt, names_in_prompt
from hub.core.hub import Hub
from hub.errors import ConfigError
from hub.home import Home
from hub.intents.rules import Rules
from hub.resilience.load import FixedProbe
from hub.settings import IntentSettings, settings_from_dict

from fakes import FakeAsr, FakeDevices, FakeTts, settings

HOME = {
    "areas": [
        {"name": "Kitchen"},
        {"name": "Office"},
        {"name": "Living Room", "aliases": ["Lounge"]},
    ],
    "entities": [
        {"name": "Kitchen Light", "domain": "light", "area": "Kitchen", "aliases": ["Big Light"]},
        {"name": "Ceiling Light", "domain": "light", "area": "Kitchen"},
        {"name": "Ceiling Light", "domain": "light", "area": "Office"},
        {
            "name": "Living Room TV",
            "domain": "media_player",
            "area": "Living Room",
            "aliases": ["Telly"],
        },
    ],
}


def _settings(**home):
    return settings_from_dict({"home": {**HOME, **home}})


def _rules(satellite_area: str = "") -> Rules:
    return Rules(
        Home.from_settings(_settings(satellite_area=satellite_area).home),
        IntentSettings(fuzzy=False),
    )


def _hub(satellite_area: str = ""):
    """The dialog hub (fake clock, devices, ASR) on this module's home."""
    cfg = settings()
    cfg = dataclasses.replace(cfg, home=_settings(satellite_area=satellite_area).home)
    clock, devices, asr = Clock(), FakeDevices(), FakeAsr("")
    factories = {"asr": lambda h: asr, "tts": lambda h: FakeTts(), "devices": lambda h: devices}
    hub = Hub(cfg, entry="ask", factories=factories, probe=FixedProbe(), speak=False, clock=clock)
    hub.test_clock, hub.fake_devices, hub.fake_asr = clock, devices, asr
    assert hub.home.entity("Office Ceiling Light") is not None
    return hub


@pytest.fixture(scope="module")
def rules():
    return _rules()


def test_bc50_an_alias_matches_its_entity(rules):
    match = rules.recognize("turn on the big light", "")
    assert match.intent == "HassTurnOn" and match.entities == ("Kitchen Light",)
    assert match.slots["name"] == "Kitchen Light"  # the alias's out value is the entity
    telly = rules.recognize("pause the telly", "")
    assert telly.intent == "HassMediaPause" and telly.entities == ("Living Room TV",)
    asked = rules.recognize("is the big light on", "")
    assert asked.intent == "HassGetState" and asked.entities == ("Kitchen Light",)


def test_bc50_an_area_alias_is_its_area(rules):
    match = rules.recognize("turn off the lights in the lounge", "")
    assert match.slots["area"] == "Living Room"
    assert rules.home.canonical_area("lounge") == "Living Room"


def test_bc50_same_names_are_kept_and_told_apart_by_the_spoken_area(rules):
    home = rules.home
    assert [e.spoken[0] for e in home.entities].count("Ceiling Light") == 2
    match = rules.recognize("turn on the ceiling light in the office", "")
    assert match.entities == ("Office Ceiling Light",)
    assert rules.recognize("turn on the ceiling light in the kitchen", "").entities == (
        "Kitchen Ceiling Light",
    )


def test_bc50_the_satellites_area_picks_the_same_named_one(rules):
    match = rules.recognize("turn on the ceiling light", "Office")
    assert match.entities == ("Office Ceiling Light",)
    assert rules.recognize("turn off the ceiling light", "Kitchen").entities == (
        "Kitchen Ceiling Light",
    )
    # from a room with no ceiling light: still ambiguous
    assert rules.recognize("turn on the ceiling light", "Living Room").entities == ()
    # a unique name still wins over the room's area
    assert rules.recognize("turn on the big light", "Office").entities == ("Kitchen Light",)


def test_bc50_no_area_asks_which_area_and_the_answer_picks_one():
    hub = _hub()
    asked = hub.turn_text("turn on the ceiling light")
    assert asked["response"] == "Which area do you mean?"
    assert hub.fake_devices.published == []
    done = hub.turn_text("the office")
    assert hub.fake_devices.published == [("Office Ceiling Light", "turn_on")], done
    assert hub.home.state("Office Ceiling Light") == "on"
    assert hub.home.state("Kitchen Ceiling Light") != "on"


def test_bc50_an_alias_by_voice_switches_the_entity():
    hub = _hub()
    done = said(hub, "turn on the big light")
    assert done["intent"] == "HassTurnOn"
    assert hub.fake_devices.published == [("Kitchen Light", "turn_on")]


def test_bc50_aliases_are_in_the_grammar_and_the_whisper_prompt(tmp_path):
    home = _settings().home
    names = [text for text, _ in _slot_values(home, ())["name"]]
    assert "big light" in names and "telly" in names
    assert names.count("ceiling light") == 2  # one value per entity, the same words
    vocab = build_vocab(home, tmp_path)
    assert "telly" in vocab.words
    grammar = (vocab.directory / "grammar.fsg").read_text()
    assert " telly" in grammar and " big" in grammar
    prompt = initial_prompt(home)
    assert "Big Light" in prompt and "Telly" in prompt
    assert "Lounge" in prompt and "lounge" in [t for t, _ in _slot_values(home, ())["area"]]
    assert names_in_prompt(home) == 3 + 3 + 3  # areas, distinct names, aliases


def test_bc50_same_names_need_an_area_each_and_a_distinct_one():
    with pytest.raises(ConfigError, match="same area"):
        _settings(
            entities=[
                {"name": "Ceiling Light", "domain": "light", "area": "Kitchen"},
                {"name": "ceiling light", "domain": "light", "area": "Kitchen"},
            ]
        )
    with pytest.raises(ConfigError, match="need an area each"):
        _settings(
            entities=[
                {"name": "Ceiling Light", "domain": "light", "area": "Kitchen"},
                {"name": "Ceiling Light", "domain": "light"},
            ]
        )
    with pytest.raises(ConfigError, match=r"aliases\[0\]"):
        _settings(entities=[{"name": "Lamp", "domain": "light", "aliases": [""]}])
