"""Homes for rules and action tests: the shared fixture home and BC-22's four rooms."""

from __future__ import annotations

import tomllib

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
    return Home.from_settings(HomeSettings(
        areas=tuple({"name": r} for r in rooms),
        entities=tuple({"name": f"{r} Light", "domain": "light", "area": r, "state": "on"}
                       for r in rooms),
        satellite_area=satellite_area))
