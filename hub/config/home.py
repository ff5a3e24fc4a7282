"""Checks of ``[home]`` for meaning, beyond its types: what a person gets wrong when writing it.

Each check raises :class:`~hub.errors.ConfigError` with one line that starts with the key's
path: unknown keys of a floor, area or entity; empty names; an unknown domain (``"fna"``); a
state or feature that the domain does not have (``"lockd"``); two floors, areas or entities
with the same name (case and spaces ignored, as the rules match names); an alias that names
another entity or area too (:func:`alias_clashes`; entities of different areas may share one,
as a name); an area or floor that is referenced but not defined; a text where an attribute
holds a number (``current_temperature = "warm"``). Domains, states and features are data
(``hub/data/domains.toml``, after Home Assistant's entity integrations).
"""

from __future__ import annotations

import difflib
import functools
import tomllib

from hub.errors import ConfigError
from hub.paths import DATA_DIR

_ENTITY_KEYS = {
    "name",
    "domain",
    "area",
    "features",
    "state",
    "attributes",
    "sensitive",
    "confirm",
    "aliases",
}
_SHAPES = {"floors": {"name"}, "areas": {"name", "floor", "aliases"}, "entities": _ENTITY_KEYS}
_TYPES = {
    "domain": (str, "a string"),
    "area": (str, "a string"),
    "state": (str, "a string"),
    "features": (list, "a list"),
    "aliases": (list, "a list"),
    "attributes": (dict, "a table"),
    "sensitive": (bool, "true or false"),
    "confirm": (bool, "true or false"),
}


NUMERIC_ATTRIBUTES = (
    "current_temperature",
    "temperature",
    "target_temperature",
    "current_humidity",
    "humidity",
    "brightness",
    "brightness_pct",
    "color_temp_kelvin",
    "volume_level",
    "current_position",
    "current_tilt_position",
    "battery_level",
)
"""Entity attributes that hold a number (Home Assistant's state attributes of that name)."""


@functools.cache
def domains() -> dict[str, dict]:
    """``{domain: {"states": [...], "features": [...]}}`` from ``hub/data/domains.toml``."""
    with open(DATA_DIR / "domains.toml", "rb") as f:
        return tomllib.load(f)


def _norm(name: str) -> str:
    return " ".join(name.casefold().split())


def _hint(value: str, choices) -> str:
    close = difflib.get_close_matches(value, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_shape(part: str, i: int, item) -> None:
    path = f"home.{part}[{i}]"
    if not isinstance(item, dict):
        raise ConfigError(f"{path}: expected a table, got {item!r}")
    unknown = sorted(set(item) - _SHAPES[part])
    if unknown:
        raise ConfigError(f"{path}.{unknown[0]}: unknown key")
    if not isinstance(item.get("name"), str) or not item["name"].strip():
        raise ConfigError(f"{path}.name: expected a non-empty string")
    for key, (kind, what) in _TYPES.items():
        if key in item and (
            not isinstance(item[key], kind) or (kind is not bool and isinstance(item[key], bool))
        ):
            raise ConfigError(f"{path}.{key}: expected {what}, got {item[key]!r}")


def _check_unique(part: str, items) -> None:
    """Names are unique; entities may share one only in different areas (BC-50: the area
    tells "Ceiling Light" in the Kitchen from the Office one), and aliases are strings."""
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        key = _norm(item["name"])
        if part == "entities":
            key = _entity_key(i, item, items, seen)
        if key in seen:
            raise ConfigError(
                f"home.{part}[{i}].name: {item['name']!r} is already the name of "
                f"home.{part}[{seen[key]}]"
                + (" in the same area (give each its own area)" if part == "entities" else "")
            )
        seen[key] = i


def _entity_key(i: int, item: dict, items, seen: dict) -> str:
    """The uniqueness key of entity ``i``: its name, with its area when another entity has
    the same name (both need an area then); ConfigError on an alias that is no string."""
    for j, alias in enumerate(item.get("aliases", ())):
        if not isinstance(alias, str) or not alias.strip():
            raise ConfigError(f"home.entities[{i}].aliases[{j}]: expected a non-empty string")
    name = _norm(item["name"])
    shared = [k for k, other in enumerate(items) if _norm(other["name"]) == name]
    if len(shared) == 1:
        return name
    if not item.get("area"):
        raise ConfigError(
            f"home.entities[{i}].name: {item['name']!r} is already the name of "
            f"home.entities[{next(k for k in shared if k != i)}] (same-named entities need "
            "an area each)"
        )
    return f"{name}\x00{_norm(item['area'])}"


def _spoken(part: str, items) -> dict[str, list[tuple[int, int | None, str]]]:
    """Every name and alias of ``items`` (case and spaces ignored) -> ``[(index, alias index
    or None for the name, as written)]``, each item once per name; ConfigError on an alias
    that is no string."""
    found: dict[str, list[tuple[int, int | None, str]]] = {}
    for i, item in enumerate(items):
        aliases = item.get("aliases", ())
        for j, alias in enumerate(aliases):
            if not isinstance(alias, str) or not alias.strip():
                raise ConfigError(f"home.{part}[{i}].aliases[{j}]: expected a non-empty string")
        said: list[tuple[int | None, str]] = [(None, item["name"])]
        said += list(enumerate(aliases))
        for j, text in said:
            holders = found.setdefault(_norm(text), [])
            if all(k != i for k, _, _ in holders):
                holders.append((i, j, text))
    return found


def alias_clashes(part: str, items) -> list[list[tuple[int, int | None, str]]]:
    """The names that an alias makes ambiguous: groups of ``(index, alias index or None for
    the name, as written)`` of two or more ``items`` (``part`` ``"entities"`` or ``"areas"``)
    called alike, at least one by an alias. An alias names one entity (or area), as a name
    does; entities in different areas may share it, as they may share a name (BC-50): Home
    Assistant matches a name and an alias alike and tells such entities apart by area
    ("Which area?" when none is said or known). Groups of names only are not listed (their
    own check refuses them). ConfigError on an alias that is no string."""
    groups = []
    for holders in _spoken(part, items).values():
        if len(holders) < 2 or all(j is None for _, j, _ in holders):
            continue
        places = [items[i].get("area") for i, _, _ in holders] if part == "entities" else []
        if places and all(places) and len({_norm(a) for a in places}) == len(places):
            continue
        groups.append(holders)
    return groups


def _check_aliases(part: str, items) -> None:
    """ConfigError naming the first alias of :func:`alias_clashes` and the item it clashes
    with."""
    for holders in alias_clashes(part, items):
        i, j, text = next(h for h in holders if h[1] is not None)
        other = next(h for h in holders if h[0] != i)[0]
        why = (
            "a name shared by two areas cannot be told apart (drop the alias)"
            if part == "areas"
            else "a name shared by two devices is told apart only by their areas (give each "
            "its own area, or drop the alias)"
        )
        raise ConfigError(
            f"home.{part}[{i}].aliases[{j}]: {text!r} also names home.{part}[{other}] "
            f"({items[other]['name']!r}); {why}"
        )


def _check_entity(i: int, ent: dict, areas: set[str]) -> None:
    path = f"home.entities[{i}]"
    if "domain" not in ent:
        raise ConfigError(f'{path}.domain: missing (e.g. "light", "lock", "cover")')
    known = domains()
    spec = known.get(ent["domain"])
    if spec is None:
        raise ConfigError(
            f"{path}.domain: unknown domain {ent['domain']!r}{_hint(ent['domain'], known)}"
        )
    if "area" in ent and ent["area"] not in areas:
        raise ConfigError(f"{path}.area: no area named {ent['area']!r}{_hint(ent['area'], areas)}")
    state = ent.get("state")
    if state is not None and "*" not in spec["states"] and state not in spec["states"]:
        raise ConfigError(
            f"{path}.state: {state!r} is not a state of a {ent['domain']}; "
            f"states are {', '.join(spec['states'])}"
        )
    for key, value in ent.get("attributes", {}).items():
        if key in NUMERIC_ATTRIBUTES and (
            isinstance(value, bool) or not isinstance(value, (int, float))
        ):
            raise ConfigError(f"{path}.attributes.{key}: expected a number, got {value!r}")
    for j, feature in enumerate(ent.get("features", ())):
        if feature not in spec["features"]:
            allowed = ", ".join(spec["features"]) or "none"
            raise ConfigError(
                f"{path}.features[{j}]: {feature!r} is not a feature of a "
                f"{ent['domain']}; features are {allowed}"
            )


def entity_keys(tables) -> list[str]:
    """The hub's key of each ``[[home.entities]]`` table, in order: its ``name``, or
    "<area> <name>" when more than one table has that name (case ignored) and this one has an
    area ("Kitchen Ceiling Light" and "Office Ceiling Light" for two "Ceiling Light"s)."""
    counts: dict[str, int] = {}
    for table in tables:
        key = str(table["name"]).casefold()
        counts[key] = counts.get(key, 0) + 1
    return [
        f"{t['area']} {t['name']}"
        if counts[str(t["name"]).casefold()] > 1 and t.get("area")
        # only areas tell same-named entities apart
        else t["name"]
        for t in tables
    ]


def check_home(home) -> None:
    """Check a :class:`hub.settings.HomeSettings` for meaning; ConfigError on the first problem."""
    for part in _SHAPES:
        for i, item in enumerate(getattr(home, part)):
            _check_shape(part, i, item)
        _check_unique(part, getattr(home, part))
    floors = {f["name"] for f in home.floors}
    areas = {a["name"] for a in home.areas}
    for i, area in enumerate(home.areas):
        if "floor" in area and area["floor"] not in floors:
            raise ConfigError(
                f"home.areas[{i}].floor: no floor named {area['floor']!r}"
                f"{_hint(area['floor'], floors)}"
            )
    for i, ent in enumerate(home.entities):
        _check_entity(i, ent, areas)
    keys = [_norm(k) for k in entity_keys(home.entities)]
    for i, key in enumerate(keys):
        if key in keys[:i]:
            raise ConfigError(
                f"home.entities[{i}].name: {home.entities[i]['name']!r} in its area is also "
                f"called {entity_keys(home.entities)[i]!r} as home.entities[{keys.index(key)}]"
            )
    _check_aliases("areas", home.areas)
    _check_aliases("entities", home.entities)
    if home.satellite_area and home.satellite_area not in areas:
        raise ConfigError(f"home.satellite_area: no area named {home.satellite_area!r}")
    zone_name = getattr(home, "time_zone", "")
    if zone_name:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # lazy: only with a zone set

        try:
            ZoneInfo(zone_name)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(
                f"home.time_zone: no time zone {zone_name!r} (an IANA name like Europe/London)"
            ) from None
