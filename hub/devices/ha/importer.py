"""The home as Home Assistant knows it: areas, floors and the entities it exposes to voice
assistants, named by HA's rule (case BC-50).

- Only entities exposed to ``conversation`` (``homeassistant/expose_entity/list``); when the
  exposure cannot be read, HA's default-exposed domains instead (never everything).
- Name: the registry ``name`` (set by the user); else the device's name joined with the
  entity's own ``original_name`` (``has_entity_name``; the device's name alone when the entity
  has none); else the ``original_name``; else the state's ``friendly_name``. A name holding
  "None", "null" or the entity id is no name: the entity is skipped and counted (HA core
  PR #95485; entities restored at start-up have none yet).
- Area: the entity's, else its device's; floors come from the floor registry.
- Aliases go into the entity's table (``aliases``), for the rules, the grammar and the
  prompt. Two entities with one name in different areas keep that name (the spoken or the
  satellite's area tells them apart, as in Home Assistant; their keys in links are
  "<Area> <name>"); an entity renamed in HA keeps the hub name it had, through its
  ``unique_id``. An alias that also names another entity (or area) the area cannot tell
  apart from it is left out, with a WARNING, and counted (``aliases_left_out``): the exact
  name wins, and an alias two such entities share is left out of both (Home Assistant could
  act on neither by it), so the written ``[home]`` passes the config check.
Sources: HA core ``helpers/entity.py`` (``_friendly_name_internal``) and
``components/homeassistant/exposed_entities.py`` (``DEFAULT_EXPOSED_DOMAINS``).
"""

from __future__ import annotations

import asyncio
import logging

from hub.config.home import alias_clashes, entity_keys
from hub.devices.ha.client import HaError

log = logging.getLogger("hub.devices.ha")

DEFAULT_EXPOSED_DOMAINS = frozenset(
    {
        "climate",
        "cover",
        "fan",
        "humidifier",
        "light",
        "lock",
        "scene",
        "script",
        "switch",
        "todo",
        "vacuum",
        "water_heater",
    }
)
"""What HA exposes to Assist by default (its ``DEFAULT_EXPOSED_DOMAINS``)."""
COMMANDS = (
    "get_config",
    "get_states",
    "config/area_registry/list",
    "config/floor_registry/list",
    "config/device_registry/list",
    "config/entity_registry/list",
    "homeassistant/expose_entity/list",
)
"""The WebSocket commands an import reads."""


class NotRunning(Exception):
    """Home Assistant is not ``RUNNING`` yet (``get_config.state``): an import would be half."""


async def fetch(client, wait_s: float = 300.0) -> dict:
    """Every registry an import needs, read over ``client`` (:class:`HaClient`), once HA is
    ``RUNNING``: it waits for ``homeassistant_started`` at most ``wait_s`` (BC-41).

    Returns ``{command: result}``; a failing ``expose_entity/list`` is stored as None.
    Raises:
        NotRunning: HA did not finish starting within ``wait_s``.
    """
    config = await client.request("get_config")
    if (config or {}).get("state", "RUNNING") != "RUNNING":
        started = asyncio.Event()
        await client.subscribe(
            "subscribe_events", lambda _e: started.set(), event_type="homeassistant_started"
        )
        log.info("Home Assistant is %s; waiting for it to start", config.get("state"))
        try:
            await asyncio.wait_for(started.wait(), wait_s)
        except TimeoutError:
            raise NotRunning(f"Home Assistant is still {config.get('state')}") from None
    out: dict = {"get_config": config}
    for command in COMMANDS[1:]:
        try:
            out[command] = await client.request(command)
        except HaError as exc:
            if command not in ("homeassistant/expose_entity/list", "config/floor_registry/list"):
                raise
            log.warning("Home Assistant: %s failed (%s)", command, exc)
            out[command] = None
    return out


def _bad(name, entity_id: str) -> bool:
    """True for no name: empty, "None"/"null" in it, or a piece of an entity id (a ``.`` or
    ``_``, as in ``light.kitchen`` or ``kitchen_light``)."""
    text = str(name or "").strip()
    words = text.lower().split()
    return (
        not text
        or "none" in words
        or "null" in words
        or "." in text
        or "_" in text
        or text.lower() == entity_id.lower()
    )


def entity_name(entry: dict, device: dict | None, state: dict | None) -> str | None:
    """The entity's name by HA's rule (module doc), or None when it has no usable one."""
    entity_id = entry.get("entity_id", "")
    dev_name = (device or {}).get("name_by_user") or (device or {}).get("name")
    if dev_name and _bad(dev_name, entity_id):
        dev_name = None
    own = entry.get("original_name")
    candidates = [entry.get("name")]
    if entry.get("has_entity_name"):
        candidates.append(f"{dev_name} {own}" if dev_name and own else dev_name or None)
    candidates += [own, ((state or {}).get("attributes") or {}).get("friendly_name")]
    return next((str(c).strip() for c in candidates if c and not _bad(c, entity_id)), None)


def _features(domain: str, attributes: dict) -> list[str]:
    if domain != "light":
        return []
    modes = set(attributes.get("supported_color_modes") or ())
    out = ["brightness"] if modes - {"onoff"} else []
    if modes & {"hs", "rgb", "rgbw", "rgbww", "xy"}:
        out.append("color")
    if "color_temp" in modes:
        out.append("color_temp")
    return out


def _exposed(data: dict, states: dict) -> tuple[set[str], bool]:
    listing = data.get("homeassistant/expose_entity/list")
    if isinstance(listing, dict) and isinstance(listing.get("exposed_entities"), dict):
        return {
            eid
            for eid, opts in listing["exposed_entities"].items()
            if isinstance(opts, dict) and opts.get("conversation")
        }, True
    return {eid for eid in states if eid.split(".")[0] in DEFAULT_EXPOSED_DOMAINS}, False


def _places(data: dict) -> tuple[dict, dict, dict]:
    """``(floors by id, areas by id, devices by id)``."""
    floors = {
        f["floor_id"]: f
        for f in data.get("config/floor_registry/list") or []
        if isinstance(f, dict) and f.get("floor_id") and f.get("name")
    }
    areas = {
        a["area_id"]: a
        for a in data.get("config/area_registry/list") or []
        if isinstance(a, dict) and a.get("area_id") and a.get("name")
    }
    devices = {
        d["id"]: d
        for d in data.get("config/device_registry/list") or []
        if isinstance(d, dict) and d.get("id")
    }
    return floors, areas, devices


def build_home(data: dict, domains, previous: dict | None = None) -> tuple[dict, dict, dict]:
    """``([home] tables, links, summary)`` from :func:`fetch`'s result.

    Args:
        data: ``{command: result}``.
        domains: the domains the hub knows (others are skipped and counted).
        previous: ``{unique_id: hub name}`` of an earlier import (renames keep the name).
    Returns:
        ``{"floors": [...], "areas": [...], "entities": [...]}`` in ``[home]``'s shape;
        ``{hub key: {"entity_id", "unique_id"?}}`` (``[homeassistant]
        entities``); and the counts
        ``{"imported", "not_exposed", "nameless", "other_domain", "exposure_read",
        "aliases", "same_name_areas", "aliases_left_out"}`` (names shared by entities of
        different areas; aliases left out as they name another entity or area too).
    """
    floors, areas, devices = _places(data)
    states = {s["entity_id"]: s for s in data.get("get_states") or [] if isinstance(s, dict)}
    registry = {
        e["entity_id"]: e
        for e in data.get("config/entity_registry/list") or []
        if isinstance(e, dict) and e.get("entity_id")
    }
    exposed, exposure_read = _exposed(data, states)
    summary = {
        "imported": 0,
        "not_exposed": 0,
        "nameless": 0,
        "other_domain": 0,
        "exposure_read": exposure_read,
        "aliases": 0,
    }
    found = _found(states, registry, exposed, devices, areas, domains, previous, summary)
    pairs = _apart(found, summary)
    entities = [table for table, _ in pairs]
    used = {e["area"] for e in entities if e.get("area")}
    area_rows = _area_rows(areas, floors)
    summary["aliases_left_out"] = _drop_shared_aliases("areas", area_rows)
    summary["aliases_left_out"] += _drop_shared_aliases("entities", entities)
    summary["aliases"] = sum(len(e.get("aliases", ())) for e in entities)
    summary["imported"] = len(entities)
    log.info(
        "Home Assistant import: %d entities (%d not exposed, %d without a name, %d of "
        "other domains), %d areas with devices, %d names for the grammar",
        len(entities),
        summary["not_exposed"],
        summary["nameless"],
        summary["other_domain"],
        len(used),
        len(entities) + summary["aliases"],
    )
    home = {
        "floors": [{"name": f["name"]} for f in floors.values()],
        "areas": area_rows,
        "entities": entities,
    }
    links = {link.pop("key"): link for _, link in pairs}
    return home, links, summary


def _found(
    states: dict,
    registry: dict,
    exposed,
    devices: dict,
    areas: dict,
    domains,
    previous: dict | None,
    summary: dict,
) -> list[dict]:
    """The exposed entities of known domains that have a name, each as ``{"name", "domain",
    "area", "features", "entity_id", "unique_id", "aliases"}``; the ones skipped are counted
    in ``summary`` (``not_exposed``, ``other_domain``, ``nameless``)."""
    found = []
    for entity_id in sorted(set(states) | set(registry)):
        entry = registry.get(entity_id, {"entity_id": entity_id})
        if entity_id not in exposed or entry.get("disabled_by"):
            summary["not_exposed"] += 1
            continue
        domain = entity_id.split(".", 1)[0]
        if domain not in domains:
            summary["other_domain"] += 1
            continue
        device = devices.get(entry.get("device_id"))
        name = (previous or {}).get(entry.get("unique_id")) or entity_name(
            entry, device, states.get(entity_id)
        )
        if name is None:
            summary["nameless"] += 1
            continue
        area = areas.get(entry.get("area_id") or (device or {}).get("area_id"))
        attrs = (states.get(entity_id) or {}).get("attributes") or {}
        found.append(
            {
                "name": name,
                "domain": domain,
                "area": area["name"] if area else None,
                "features": _features(domain, attrs),
                "entity_id": entity_id,
                "unique_id": entry.get("unique_id"),
                "aliases": list(entry.get("aliases") or ()),
            }
        )
    return found


def _area_rows(areas: dict, floors: dict) -> list[dict]:
    """The ``[[home.areas]]`` tables: name, floor (when known) and aliases."""
    return [
        {
            "name": a["name"],
            **({"floor": floors[a["floor_id"]]["name"]} if a.get("floor_id") in floors else {}),
            **({"aliases": _aliases(a)} if _aliases(a) else {}),
        }
        for a in areas.values()
    ]


def _drop_shared_aliases(part: str, rows: list[dict]) -> int:
    """Leave out every alias that also names another area or entity of ``rows`` and cannot
    be told apart from it (:func:`hub.config.home.alias_clashes`: the exact name wins; an
    alias two entities of one area share is left out of both, as Home Assistant can act on
    neither by it); one WARNING each; returns how many were left out."""
    dropped = 0
    for holders in alias_clashes(part, rows):
        for i, j, text in holders:
            if j is None:
                continue
            row = rows[i]
            row["aliases"] = [a for a in row["aliases"] if a != text]
            if not row["aliases"]:
                del row["aliases"]
            dropped += 1
            others = ", ".join(repr(rows[k]["name"]) for k, _, _ in holders if k != i)
            log.warning(
                "Home Assistant alias %r of %r left out: it also names %s (the hub could not "
                "tell them apart)",
                text,
                row["name"],
                others,
            )
    return dropped


def _aliases(entry: dict) -> list[str]:
    """An entity's or area's usable aliases (HA's registry ``aliases``), once each."""
    return [
        a
        for a in dict.fromkeys(entry.get("aliases") or ())
        if isinstance(a, str) and not _bad(a, "")
    ]


def _apart(found: list[dict], summary: dict) -> list[tuple[dict, dict]]:
    """``[(home entity table, link)]``, links keyed by the hub's key
    (:func:`hub.config.home.entity_keys`). One name in two areas keeps the name (the area
    tells them apart when spoken, as in Home Assistant); the same name twice in one area, or
    without an area, cannot be told apart: the later ones are skipped and counted."""
    out, seen = [], set()
    for item in found:
        where = (item["name"].casefold(), (item["area"] or "").casefold())
        if where in seen or (item["name"].casefold(), "") in seen:
            summary["nameless"] += 1  # still ambiguous: no area to tell it apart
            continue
        seen.add(where)
        table = {"name": item["name"], "domain": item["domain"]}
        if item["area"]:
            table["area"] = item["area"]
        if item["features"]:
            table["features"] = item["features"]
        aliases = _aliases(item)
        if aliases:
            table["aliases"] = aliases
        link = {"entity_id": item["entity_id"]}
        if item["unique_id"]:
            link["unique_id"] = item["unique_id"]
        out.append((table, link))
    shared = sum(
        1
        for n in {t["name"].casefold() for t, _ in out}
        if sum(t["name"].casefold() == n for t, _ in out) > 1
    )
    summary["same_name_areas"] = shared
    keys = entity_keys([table for table, _ in out])
    return [(table, {**link, "key": key}) for (table, link), key in zip(out, keys, strict=True)]
