"""The intent catalog is the one list of intents: every other place reads it, and a test
fails when any of them names an intent the catalog lacks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from hub.act import HANDLERS, handler_of
from hub.act.responses import has_template
from hub.asr import vocab
from hub.intents import catalog, match, rules
from hub.llm import guard, parse, prompts

ROOT = Path(__file__).resolve().parents[2]
_NAME = re.compile(r"\bHass[A-Z][A-Za-z]+")


def test_catalog_api():
    names = catalog.names()
    assert "HassTurnOn" in names and len(catalog.intents()) == len(names)
    assert catalog.get("HassLightSet").domains == ("light",)
    with pytest.raises(KeyError):
        catalog.get("HassMakeCoffee")
    assert catalog.sensitive_capable("HassTurnOff") and catalog.sensitive_capable("HassSetPosition")
    assert not catalog.sensitive_capable("HassGetState")
    assert not catalog.sensitive_capable("HassMakeCoffee")
    assert catalog.has_side_effects("HassListAddItem")
    assert catalog.has_side_effects("HassStartTimer")
    assert not catalog.has_side_effects("HassGetCurrentTime")
    assert "HassVacuumStart" not in catalog.usable_in({"light"})
    assert "HassVacuumStart" in catalog.usable_in({"vacuum"})
    assert "HassGetCurrentTime" in catalog.usable_in(())


def test_catalog_covers_every_english_intent_of_home_assistant():
    from home_assistant_intents import get_intents

    assert set(get_intents("en")["intents"]) <= catalog.names()
    assert len(catalog.names()) >= 41


@pytest.mark.parametrize("spec", catalog.intents(), ids=lambda s: s.name)
def test_every_catalog_intent_has_a_handler_and_its_responses(spec):
    assert HANDLERS[spec.name] is handler_of(spec.handler)
    for key in spec.responses:
        assert has_template(spec.name, key), f"{spec.name}: no response {key!r}"
    assert spec.hint


def _named(values) -> set[str]:
    """Intent names among ``values`` (strings or keys)."""
    return {v for v in values if isinstance(v, str) and _NAME.fullmatch(v)}


def test_the_lists_built_from_the_catalog_name_only_catalog_intents():
    places = {
        "rules.SUPPORTED_INTENTS": rules.SUPPORTED_INTENTS,
        "match.INTENT_DOMAINS": match.INTENT_DOMAINS,
        "match.PREFERENCE_INTENTS": match.PREFERENCE_INTENTS,
        "match.TIMER_INTENTS": match.TIMER_INTENTS,
        "llm.prompts.DEFAULT_INTENTS": prompts.DEFAULT_INTENTS,
        "llm.prompts.INTENT_HINTS": prompts.INTENT_HINTS,
        "llm.prompts.SLOTS_BY_INTENT": prompts.SLOTS_BY_INTENT,
        "llm.guard.DEVICE_INTENTS": guard.DEVICE_INTENTS,
        "llm.parse.ON_OFF_INTENTS": parse.ON_OFF_INTENTS,
        "act.HANDLERS": HANDLERS,
    }
    for where, values in places.items():
        extra = _named(values) - catalog.names()
        assert not extra, f"{where} names intents the catalog lacks: {sorted(extra)}"
    assert catalog.names() == set(HANDLERS)
    llm_off = {n for n in catalog.names() if not catalog.get(n).llm}  # the rules' only (alarms)
    assert set(prompts.DEFAULT_INTENTS) == catalog.names() - llm_off
    assert llm_off == {
        "HubAlarmSet",
        "HubAlarmList",
        "HubAlarmCancel",
        "HubAlarmSnooze",
        "HubReminderSet",
    }
    assert not hasattr(vocab, "INTENT_DOMAINS")  # the grammar filters by catalog.usable_in


def test_no_source_or_data_file_names_an_intent_the_catalog_lacks():
    """Every ``Hass...`` name written anywhere in hub/ (code, sentences, prompts) is known."""
    unknown = {}
    for path in sorted((ROOT / "hub").rglob("*")):
        if path.suffix not in (".py", ".yaml", ".toml", ".json", ".txt") or not path.is_file():
            continue
        found = set(_NAME.findall(path.read_text(encoding="utf-8"))) - catalog.names()
        if found:
            unknown[str(path.relative_to(ROOT))] = sorted(found)
    assert not unknown, f"intents missing from the catalog: {unknown}"


def test_own_sentence_files_use_catalog_intents_and_slots():
    for path in sorted((ROOT / "hub" / "data" / "sentences").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for name in data.get("intents", {}):
            assert name in catalog.names(), f"{path.name}: {name}"


def test_drift_is_caught(monkeypatch):
    """The check above fails when a list gains an intent the catalog lacks."""
    monkeypatch.setattr(guard, "DEVICE_INTENTS", guard.DEVICE_INTENTS | {"HassMakeCoffee"})
    with pytest.raises(AssertionError, match="HassMakeCoffee"):
        test_the_lists_built_from_the_catalog_name_only_catalog_intents()


def test_an_action_whose_template_fails_still_says_it_was_done(monkeypatch):
    from hub.act import responses

    from intent_table import run

    monkeypatch.setattr(responses, "_compiled", lambda text: None)  # every template broken
    (_,), (outcome,), home = run("turn on the kitchen light")
    assert (outcome.response, home.state("Kitchen Light")) == ("Done", "on")
