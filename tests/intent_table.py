"""Table-style intent tests: a sentence people say -> intent, slots, response, action.

One home for every handler table: the shipped home (``hub/data/home-en.toml``) plus a fan, a
vacuum, a lawn mower and a second to-do list (``Chores``, holding "dishes" and "laundry").
The rules are built once
per session; every row gets a fresh home state, timers and actor, so rows never see each other.
"""

from __future__ import annotations

import functools
import tomllib
from datetime import UTC

from hub.act import Actor
from hub.act.timers import Timers
from hub.home import Home
from hub.intents.rules import Rules
from hub.paths import DATA_DIR
from hub.settings import IntentSettings, settings_from_dict

NOW = 1735733100.0
"""2025-01-01 12:05:00 UTC: the wall clock of every row."""

EXTRA = [
    {"name": "Ceiling Fan", "domain": "fan", "area": "Office", "state": "off"},
    {"name": "Rover", "domain": "vacuum", "area": "Kitchen", "state": "docked"},
    {"name": "Mowbie", "domain": "lawn_mower", "state": "docked"},
    {"name": "Chores", "domain": "todo", "attributes": {"items": ["dishes", "laundry"]}},
]


def table_home() -> Home:
    """A fresh home (fixture home + :data:`EXTRA`), all states as configured."""
    data = tomllib.loads((DATA_DIR / "home-en.toml").read_text(encoding="utf-8"))
    data["home"]["entities"] = [*data["home"]["entities"], *EXTRA]
    return Home.from_settings(settings_from_dict(data).home)


@functools.lru_cache(maxsize=1)
def rules() -> Rules:
    """The rules over :func:`table_home` (built once)."""
    return Rules(table_home(), IntentSettings())


def run(text: str, timers: Timers | None = None, states: dict | None = None):
    """``(matches, outcomes, home)`` for ``text`` on a fresh home.

    ``states``: ``{entity: state}`` or ``{entity: (state, {attribute: value})}`` set first.
    """
    home = table_home()
    for name, state in (states or {}).items():
        state, attrs = state if isinstance(state, tuple) else (state, {})
        home.set_state(name, state, **attrs)
    engine = rules()
    match = engine.recognize(text)
    matches = [match] if match else engine.recognize_more(text)
    actor = Actor(home, timers or Timers(clock=lambda: 0.0), clock=lambda: NOW, tz=UTC)
    outcomes = [actor.execute(m, f"row:{i}") for i, m in enumerate(matches)]
    return matches, outcomes, home


def check_row(
    text: str,
    intent: str,
    slots: dict,
    response: str,
    action=None,
    timers: Timers | None = None,
    states: dict | None = None,
):
    """Assert one table row: the intent, the slots it names, the response and the action.

    ``action``: ``(entity, service)`` of the first action, or None for no action at all.
    Returns the home after the turn (for state checks).
    """
    matches, outcomes, home = run(text, timers, states)
    assert matches, f"{text!r}: no match"
    assert matches[0].intent == intent, f"{text!r}: {matches[0].intent}"
    for key, value in slots.items():
        assert matches[0].slots.get(key) == value, f"{text!r}: {matches[0].slots}"
    assert outcomes[0].response == response, f"{text!r}: {outcomes[0].response!r}"
    actions = [(a["entity"], a["service"]) for a in outcomes[0].actions]
    assert (actions[0] if actions else None) == action, f"{text!r}: {actions}"
    return home
