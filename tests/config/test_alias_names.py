"""An alias names one entity (or area), as a name does (the breaker's finding: "Big Light",
Desk Lamp's alias and another light's name, passed the config check and "turn on the big
light" turned on the Desk Lamp). Home Assistant matches a name and an alias alike and tells
entities that share one apart by area (``async_match_targets``: DUPLICATE_NAME otherwise), so
the hub refuses a shared alias unless the areas tell its entities apart, and `hub home import`
leaves such an alias out."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hub.cli.home import home_toml
from hub.config.home import domains
from hub.devices.ha.importer import build_home
from hub.errors import ConfigError
from hub.home import Home
from hub.intents.rules import Rules
from hub.settings import IntentSettings, settings_from_dict

REPO = Path(__file__).resolve().parents[2]

ALIAS3 = """
[home]
[[home.entities]]
name = "Desk Lamp"
domain = "light"
aliases = ["Big Light"]
[[home.entities]]
name = "Big Light"
domain = "light"
"""


def _home(entities: str, areas: str = "") -> dict:
    return tomllib.loads("[home]\n" + areas + entities)


@pytest.mark.live
def test_alias_naming_another_entity_is_refused_by_config_check_in_one_line(tmp_path):
    cfg = tmp_path / "alias3.toml"
    cfg.write_text(ALIAS3, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "hub", "config", "check", "--config", str(cfg)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "HUB_CONFIG": ""},
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"hub: config: {cfg}: home.entities[0].aliases[0]: 'Big Light' also names "
        "home.entities[1] ('Big Light'); a name shared by two devices is told apart only by "
        "their areas (give each its own area, or drop the alias)"
    ]


@pytest.mark.parametrize(
    "entities",
    [
        # an alias equal to another's alias, case and spaces ignored
        '[[home.entities]]\nname = "A"\ndomain = "light"\naliases = ["Big Light"]\n'
        '[[home.entities]]\nname = "B"\ndomain = "switch"\naliases = ["big  light"]\n',
        # one in an area, the other in none: the area cannot tell them apart
        '[[home.entities]]\nname = "A"\ndomain = "light"\narea = "Kitchen"\n'
        'aliases = ["Big Light"]\n[[home.entities]]\nname = "Big Light"\ndomain = "light"\n',
        # both in the same area
        '[[home.entities]]\nname = "A"\ndomain = "light"\narea = "Kitchen"\n'
        'aliases = ["Big Light"]\n[[home.entities]]\nname = "Big Light"\ndomain = "lock"\n'
        'area = "Kitchen"\n',
    ],
)
def test_alias_shared_where_the_area_cannot_tell_is_refused(entities):
    areas = '[[home.areas]]\nname = "Kitchen"\n'
    with pytest.raises(ConfigError, match=r"^home\.entities\[0\]\.aliases\[0\]: .* also names"):
        settings_from_dict(_home(entities, areas))


def test_area_alias_naming_another_area_is_refused():
    areas = (
        '[[home.areas]]\nname = "Living Room"\naliases = ["Lounge"]\n'
        '[[home.areas]]\nname = "Lounge"\n'
    )
    with pytest.raises(ConfigError) as err:
        settings_from_dict(_home("", areas))
    assert err.value.message == (
        "home.areas[0].aliases[0]: 'Lounge' also names home.areas[1] ('Lounge'); a name "
        "shared by two areas cannot be told apart (drop the alias)"
    )


def test_alias_shared_by_entities_of_two_areas_is_told_apart_by_area():
    """As Home Assistant does: the spoken or the satellite's area picks the entity; with no
    area the hub asks which one (nothing acted on)."""
    areas = '[[home.areas]]\nname = "Office"\n[[home.areas]]\nname = "Kitchen"\n'
    entities = (
        '[[home.entities]]\nname = "Desk Lamp"\ndomain = "light"\narea = "Office"\n'
        'aliases = ["Big Light"]\n'
        '[[home.entities]]\nname = "Big Light"\ndomain = "light"\narea = "Kitchen"\n'
    )
    rules = Rules(
        Home.from_settings(settings_from_dict(_home(entities, areas)).home),
        IntentSettings(fuzzy=False),
    )
    assert rules.recognize("turn on the big light", "Office").entities == ("Desk Lamp",)
    assert rules.recognize("turn on the big light", "Kitchen").entities == ("Big Light",)
    said = rules.recognize("turn on the big light in the office", "Kitchen")
    assert said.entities == ("Desk Lamp",)
    nowhere = rules.recognize("turn on the big light", "")
    assert nowhere.intent == "HassTurnOn" and nowhere.entities == ()  # "Which area?"
    assert rules.recognize("turn on the desk lamp", "").entities == ("Desk Lamp",)


def _ha(entities: list[tuple[str, str, str | None, list[str]]], areas=()) -> dict:
    """What :func:`hub.devices.ha.importer.fetch` returns for ``(entity_id, name, area_id,
    aliases)`` rows, all exposed; ``areas`` are ``(area_id, name, aliases)``."""
    return {
        "get_states": [{"entity_id": e, "state": "off", "attributes": {}} for e, *_ in entities],
        "config/entity_registry/list": [
            {"entity_id": e, "name": n, "area_id": a, "aliases": al, "unique_id": e}
            for e, n, a, al in entities
        ],
        "config/area_registry/list": [
            {"area_id": a, "name": n, "floor_id": None, "aliases": al} for a, n, al in areas
        ],
        "config/floor_registry/list": [],
        "config/device_registry/list": [],
        "homeassistant/expose_entity/list": {
            "exposed_entities": {e: {"conversation": True} for e, *_ in entities}
        },
    }


def test_home_import_leaves_out_an_alias_that_names_another_entity(caplog):
    """The exact name wins; an alias two entities of one area share is left out of both; one
    shared by entities of two areas is kept; each one left out is a WARNING and counted."""
    data = _ha(
        [
            ("light.desk", "Desk Lamp", None, ["Big Light", "Reading Light"]),
            ("light.big", "Big Light", None, []),
            ("switch.fan", "Fan", "office", ["Breeze"]),
            ("switch.heater", "Heater", "office", ["Breeze"]),
            ("light.ceiling_k", "Ceiling", "kitchen", ["Top Light"]),
            ("light.ceiling_o", "Top Light", "office", []),
        ],
        areas=[("kitchen", "Kitchen", []), ("office", "Office", ["Den"]), ("den", "Den", [])],
    )
    home, links, summary = build_home(data, set(domains()))
    named = {e["name"]: e for e in home["entities"]}
    assert named["Desk Lamp"]["aliases"] == ["Reading Light"]
    assert "aliases" not in named["Fan"] and "aliases" not in named["Heater"]
    assert named["Ceiling"]["aliases"] == ["Top Light"]  # the areas tell them apart
    assert {"name": "Office"} in home["areas"]  # "Den" is another area's name
    assert summary["aliases_left_out"] == 4 and summary["aliases"] == 2
    left_out = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
    assert len(left_out) == 4
    assert any(
        "'Big Light' of 'Desk Lamp' left out: it also names 'Big Light'" in m for m in left_out
    )
    settings_from_dict(tomllib.loads(home_toml(home, links, "homeassistant.entities")))
