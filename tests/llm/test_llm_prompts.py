"""Prompts and schema are built from the home's own names and the allowed intents."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import hub
from hub.llm.prompts import (
    DEFAULT_INTENTS,
    SLOTS_BY_INTENT,
    answer_messages,
    classify_messages,
    few_shot,
    home_names,
    intent_schema,
)
from hub.settings import HomeSettings, settings_from_dict

HOME = settings_from_dict(
    tomllib.loads((Path(hub.__file__).parent / "data" / "home-en.toml").read_text())
).home


def test_home_names():
    names = home_names(HOME)
    assert names.area_names == ("Kitchen", "Office")
    assert names.sensitive_names == ("Garage Door", "Front Door")
    assert len(names.entity_names) == 14 and "EcoBee" in names.entity_names
    assert names.domains[:3] == ("climate", "cover", "light")


def test_schema_lists_only_allowed_intents_and_home_names():
    schema = intent_schema(("HassTurnOn", "HassStartTimer"), home_names(HOME))
    branches = {
        b["properties"]["intent"]["const"]: b["properties"]["slots"]["properties"]
        for b in schema["oneOf"]
    }
    assert list(branches) == ["HassTurnOn", "HassStartTimer", "answer", "none"]
    assert set(branches["HassTurnOn"]) == {"name", "area", "domain"}
    assert branches["HassTurnOn"]["name"] == {"$ref": "#/$defs/name"}  # one rule, shared
    assert schema["$defs"]["name"]["enum"] == list(home_names(HOME).entity_names)
    assert schema["$defs"]["area"]["enum"] == ["Kitchen", "Office"]
    assert set(branches["HassStartTimer"]) == {
        "hours",
        "minutes",
        "seconds",
        "conversation_command",
    }
    assert branches["answer"] == {} and branches["none"] == {}


def test_every_default_intent_has_its_slots():
    assert set(DEFAULT_INTENTS) <= set(SLOTS_BY_INTENT)


def test_classify_messages_end_with_the_transcript_after_a_fixed_prefix():
    a = classify_messages(" kill the office light ", DEFAULT_INTENTS, HOME)
    b = classify_messages("next song", DEFAULT_INTENTS, HOME)
    assert a[:-1] == b[:-1]
    assert a[-1] == {"role": "user", "content": "kill the office light"}
    system = a[0]["content"]
    assert all(name in system for name in home_names(HOME).entity_names)
    assert "Kitchen Light (light, Kitchen)" in system


def test_few_shot_uses_the_homes_names_and_only_allowed_intents():
    shots = few_shot(("HassTurnOn", "HassListAddItem"), HOME)
    assert [s[1] for s in shots] == ["answer", "none", "HassListAddItem", "HassTurnOn"]
    assert shots[-1] == (
        "could you switch on the kitchen light",
        "HassTurnOn",
        {"name": "Kitchen Light"},
    )
    assert few_shot(("HassTurnOn",), HomeSettings()) == [
        ("what is the capital of france", "answer", {}),
        ("banana helicopter purple", "none", {}),
    ]


def test_strict_prompt_adds_the_json_only_rule():
    strict = classify_messages("x", DEFAULT_INTENTS, HOME, strict=True)[0]["content"]
    assert strict.endswith(
        "Reply with exactly one JSON object and nothing else: no prose, no code fence."
    )


def test_answer_prompt_carries_the_homes_facts():
    system = answer_messages("is it warm?", HOME)[0]["content"]
    assert "EcoBee: heat, current temperature 21.5." in system
    assert "Front Door: locked." in system
    json.dumps(answer_messages("x", HOME))  # JSON-able for the remote server
