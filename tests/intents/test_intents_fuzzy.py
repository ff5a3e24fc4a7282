"""The fuzzy matcher (gazetteer-matcher) after strict rules, and several commands in one
sentence: what they accept, what they reject (never a guess), and the paraphrase gain."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hub.home import Home
from hub.intents.multi import split_commands
from hub.intents.rules import Rules
from hub.paths import DATA_DIR
from hub.settings import IntentSettings, load_settings

from intent_table import rules, run

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "text, intent, slots",
    [
        ("turn on the kitchen lite", "HassTurnOn", {"name": "Kitchen Light"}),
        ("kitchen lights on quick", "HassTurnOn", {"area": "Kitchen", "domain": "light"}),
        (
            "open the sliding door halfway",
            "HassSetPosition",
            {"name": "Sliding Door", "position": 50},
        ),
        (
            "tell me if the front door is locked",
            "HassGetState",
            {"name": "Front Door", "state": "locked"},
        ),
        ("tv volume 50", "HassSetVolume", {"name": "TV", "volume_level": 50}),
        (
            "lower the volume on the tv",
            "HassSetVolumeRelative",
            {"name": "TV", "volume_step": "down"},
        ),
    ],
)
def test_fuzzy_reads_what_strict_rules_miss(text, intent, slots):
    assert rules().recognize(text) is None
    (match,) = rules().recognize_more(text)
    assert (match.intent, match.source) == (intent, "fuzzy")
    assert {k: match.slots.get(k) for k in slots} == slots


@pytest.mark.parametrize(
    "text",
    [
        "banana helicopter purple",
        "make me a sandwich",
        "turn on the bedroom light",
        "subtract five minutes from my timer",  # an unknown verb: not read as "start a timer"
        "reduce the timer by one minute",
        "don't turn on the kitchen light",
    ],
)
def test_fuzzy_rejects_rather_than_guesses(text):
    assert rules().recognize(text) is None
    assert rules().recognize_more(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "turn off all the lights except the kitchen",
        "turn on every light but the office light",
        "switch off the lights other than the bed light",
    ],
)
def test_bc22_exclusions_are_never_read_as_a_plain_command(text):
    assert rules().recognize(text) is None
    assert rules().recognize_more(text) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "turn on the kitchen light and turn off the bed light",
            [("HassTurnOn", "Kitchen Light", "turn_on"), ("HassTurnOff", "Bed Light", "turn_off")],
        ),
        (
            "switch on the kitchen light, then set a timer for 5 minutes",
            [("HassTurnOn", "Kitchen Light", "turn_on"), ("HassStartTimer", "timer-1", "start")],
        ),
        (
            "pause the tv and then turn off the office light and lock the front door",
            [
                ("HassMediaPause", "TV", "media_pause"),
                ("HassTurnOff", "Office Light", "turn_off"),
                ("HassTurnOn", "Front Door", "lock"),
            ],
        ),
    ],
)
def test_several_commands_are_each_carried_out_in_order(text, expected):
    matches, outcomes, home = run(text)
    got = [
        (m.intent, o.actions[0]["entity"], o.actions[0]["service"])
        for m, o in zip(matches, outcomes, strict=True)
    ]
    assert got == expected
    assert home.state("Kitchen Light") == ("on" if "kitchen" in text else "off")


def test_a_sentence_that_matches_whole_is_never_cut():
    match = rules().recognize("add milk and eggs to the shopping list")
    assert (match.intent, match.slots["item"]) == ("HassListAddItem", "milk and eggs")
    assert split_commands("turn on the kitchen light and banana", rules().recognize) is None


def test_several_commands_through_hub_ask():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    text = "turn on the kitchen light and turn off the office light"
    proc = subprocess.run(
        [sys.executable, "-m", "hub", "ask", "--no-llm", "--json", text],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    trace = json.loads(proc.stdout.splitlines()[-1])
    assert trace["response"] == "Turned on the Kitchen Light. Turned off the Office Light."
    assert trace["intent"] == "HassTurnOn" and trace["source"] == "rules"
    assert [(c["intent"], c["entities"], c["result"]) for c in trace["commands"]] == [
        ("HassTurnOn", ["Kitchen Light"], "done"),
        ("HassTurnOff", ["Office Light"], "done"),
    ]


@functools.lru_cache(maxsize=1)
def _shipped_rules() -> Rules:
    """Rules over the shipped home, which the paraphrase files are written for."""
    home = Home.from_settings(load_settings(str(DATA_DIR / "home-en.toml")).home)
    return Rules(home, IntentSettings())


def _score(path: Path):
    """(cases, right by rules, right by rules + fuzzy, wrong actions) on one paraphrase file."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import score_paraphrases

    cases = tomllib.loads(path.read_text(encoding="utf-8"))["case"]
    counts = score_paraphrases.score(_shipped_rules(), cases, show=False)
    return counts["n"], counts["rules"], counts["fuzzy"], counts["wrong_fuzzy"]


def test_fuzzy_gain_on_our_paraphrases_without_wrong_actions():
    n, strict, fuzzy, wrong = _score(ROOT / "hub" / "bench" / "data" / "paraphrases_commands.toml")
    assert n >= 40
    assert (fuzzy - strict) / n >= 0.20
    assert wrong == 0


def test_fuzzy_never_loses_and_never_acts_wrongly_on_the_shared_paraphrases():
    n, strict, fuzzy, wrong = _score(ROOT / "hub" / "bench" / "data" / "paraphrases.toml")
    assert fuzzy > strict and wrong == 0


def test_a_fuzzy_match_is_traced_as_fuzzy_not_rules():
    from hub.core.hub import Hub
    from hub.settings import load_settings
    from hub.store.db import Store

    settings = load_settings(None)
    settings = dataclasses.replace(
        settings, llm=dataclasses.replace(settings.llm, intents_on=(), answers_on=())
    )
    hub = Hub(settings, entry="ask", store=Store(":memory:"), speak=False)
    trace = hub.turn_text("kitchen lite off")
    assert trace["intent"] == "HassTurnOff" and trace["source"] == "fuzzy", trace
    assert hub.turn_text("turn off the kitchen light")["source"] == "rules"
