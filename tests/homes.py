"""Homes for rules and action tests: the shared fixture home and BC-22's four rooms; large
homes for the LLM: Home Assistant's test-fixture home and a generated 500-entity one."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import yaml

from hub.home import Home
from hub.settings import HomeSettings, settings_from_dict

from shared_data import home_toml


def fixture_home(**changes) -> Home:
    """The home of shared/fixtures/home-en.toml, optionally with [home] fields changed."""
    data = tomllib.loads(home_toml().read_text(encoding="utf-8"))
    data["home"].update(changes)
    return Home.from_settings(settings_from_dict(data).home)


def four_rooms(satellite_area: str = "Bedroom") -> Home:
    """BC-22's home: kitchen, hallway, bedroom, living room, one light each, all on."""
    rooms = ("Kitchen", "Hallway", "Bedroom", "Living Room")
    return Home.from_settings(
        HomeSettings(
            areas=tuple({"name": r} for r in rooms),
            entities=tuple(
                {"name": f"{r} Light", "domain": "light", "area": r, "state": "on"} for r in rooms
            ),
            satellite_area=satellite_area,
        )
    )


ROOT = Path(__file__).resolve().parents[1]


def _scripts():
    """``scripts/`` importable (the home builders live there, beside their commands)."""
    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))


def ha_fixture_home() -> HomeSettings:
    """Home Assistant's English intent-test fixture home (``tests/data/ha_intents_en``), built
    as ``scripts/score_ha_tests.py`` builds it (137 fixture entities, 99 after the check)."""
    _scripts()
    import score_ha_tests

    fixtures = yaml.safe_load((ROOT / "tests/data/ha_intents_en/_fixtures.yaml").read_text())
    text = score_ha_tests.home_toml(score_ha_tests.home_from_fixtures(fixtures))
    return settings_from_dict(tomllib.loads(text)).home


def big_home(n: int = 500) -> HomeSettings:
    """A generated home of ``n`` entities (``scripts/make_big_home.py``)."""
    _scripts()
    import make_big_home

    return settings_from_dict(tomllib.loads(make_big_home.home_toml(n))).home


LARGE_HOMES = {"ha_fixture": ha_fixture_home, "generated_500": big_home}
"""The large homes by name (for ``pytest.mark.parametrize``)."""
