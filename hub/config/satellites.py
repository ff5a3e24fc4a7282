"""``[[satellites]]``: the Wyoming satellites the hub serves (``hub run``, ``hub serve``).

Each entry is one room: the hub connects to the satellite (a ``wyoming-satellite`` is a TCP
server) as its voice server, with a conversation of its own in the entry's area.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlparse

from pydantic import ConfigDict, Field, ValidationError
from pydantic.dataclasses import dataclass

from hub.config.errors import one_line
from hub.errors import ConfigError

_CONFIG = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)


@dataclass(frozen=True, config=_CONFIG)
class SatelliteSettings:
    """One Wyoming satellite the hub serves (``[[satellites]]``; none by default)."""

    uri: str
    """Where the satellite listens: ``tcp://HOST:PORT`` (``wyoming-satellite --uri``)."""
    name: Annotated[str, Field(min_length=1, max_length=64)]
    """Its name in logs and traces (unique)."""
    area: str = ""
    """The area it stands in: "turn on the lights" said to it means this area's lights."""


def _tcp(value) -> bool:
    """True when ``value`` is ``tcp://HOST:PORT``."""
    if not isinstance(value, str):
        return False
    parsed = urlparse(value)
    try:
        return parsed.scheme == "tcp" and bool(parsed.hostname) and parsed.port is not None
    except ValueError:
        return False


EXAMPLE = {"uri": "tcp://192.168.1.40:10700", "name": "kitchen-satellite", "area": "Kitchen"}
"""The entry `hub config example` shows (commented out: no satellites by default)."""


def satellites_from_toml(items, areas: set[str]) -> tuple[SatelliteSettings, ...]:
    """``[[satellites]]`` tables as settings.

    Raises:
        ConfigError: not an array of tables, a bad field, a duplicate name, or an area the
            home does not define (the message names ``satellites[i].key``).
    """
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ConfigError("satellites: expected an array of tables ([[satellites]])")
    out, names = [], set()
    for i, table in enumerate(items):
        if "uri" in table and not _tcp(table["uri"]):
            raise ConfigError(f"satellites[{i}].uri: {table['uri']!r} is not tcp://HOST:PORT")
        try:
            sat = SatelliteSettings(**table)
        except (ValidationError, TypeError) as exc:
            if isinstance(exc, TypeError):
                raise ConfigError(f"satellites[{i}]: needs uri and name") from None
            raise ConfigError(one_line(exc, f"satellites[{i}]", SatelliteSettings)) from None
        if sat.name in names:
            raise ConfigError(f"satellites[{i}].name: {sat.name!r} is used twice")
        if sat.area and areas and sat.area not in areas:
            raise ConfigError(f"satellites[{i}].area: no area {sat.area!r} in [home]")
        names.add(sat.name)
        out.append(sat)
    return tuple(out)
