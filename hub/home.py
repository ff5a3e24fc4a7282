"""The home: a static description (areas, floors, entities) plus an in-process state store.

Built from ``[home]`` (:class:`hub.settings.HomeSettings`, the shape of
``shared/fixtures/home-en.toml``). Actions change this store; MQTT publishing comes later and
reads the same actions. Names are canonical as written in the config; lookups ignore case.

Target matching (:meth:`Home.match_targets`) follows Home Assistant's ``async_match_targets``
(homeassistant/helpers/intent.py) in a reduced form: a name must exist (and lie in the named
area or floor, when one is given); without a name, area/floor/domain/device class filter the
entities. Failures carry Home Assistant's error response key (``no_entity``,
``no_entity_in_area``, ``no_area``, ``no_domain_in_area``, ...).
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field

from hub.config.home import entity_keys
from hub.settings import HomeSettings

# Initial state of entities whose config gives none (Home Assistant's idle states).
_DEFAULT_STATE = {"script": "off", "scene": "unknown", "todo": "0", "timer": "idle"}


@dataclass(frozen=True)
class Entity:
    """One device or service of the home (static description).

    ``attributes`` are the configured initial attributes (``unit_of_measurement``,
    ``current_temperature``, ``device_class``, ...); live values are in :meth:`Home.attributes`.
    ``sensitive`` actions are asked back ("Do you want me to unlock the Front Door?") unless
    ``confirm`` is False (the entity opted out).

    ``name`` is the entity's key in the hub (states, links, answers): its configured name, or
    "<area> <name>" when two areas have an entity of that name
    (:func:`hub.config.home.entity_keys`).
    ``said`` is the configured name people say ("Ceiling Light"; "" when it is ``name``) and
    ``aliases`` the other names they may use ("Big Light"; Home Assistant's entity aliases).
    """

    name: str
    domain: str
    area: str | None = None
    features: tuple[str, ...] = ()
    sensitive: bool = False
    confirm: bool = True
    attributes: dict = field(default_factory=dict, hash=False, compare=False)
    said: str = ""
    aliases: tuple[str, ...] = ()

    @property
    def spoken(self) -> tuple[str, ...]:
        """Every name the entity is called by: its said name, then its aliases."""
        return (self.said or self.name, *self.aliases)

    @property
    def device_class(self) -> str | None:
        """The ``device_class`` attribute (cover: window, blind, garage, ...), if any."""
        return self.attributes.get("device_class")


@dataclass(frozen=True)
class TargetMatch:
    """Result of :meth:`Home.match_targets`.

    ``entities`` are canonical names; on failure it is empty and ``error`` is a Home Assistant
    error response key (or ``no_target`` when nothing at all was named), ``error_args`` fill
    the error template (``entity``, ``area``, ``floor``, ``domain``, ``device_class``).
    """

    entities: tuple[str, ...] = ()
    error: str | None = None
    error_args: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def ok(self) -> bool:
        """True when at least one entity matched."""
        return bool(self.entities)


def _entity_from_table(table: dict, key: str) -> Entity:
    """Build an :class:`Entity` from one ``[[home.entities]]`` table, keyed ``key``."""
    return Entity(
        name=key,
        said="" if key == table["name"] else table["name"],
        aliases=tuple(table.get("aliases", ())),
        domain=table["domain"],
        area=table.get("area"),
        features=tuple(table.get("features", ())),
        sensitive=bool(table.get("sensitive", False)),
        confirm=bool(table.get("confirm", True)),
        attributes=dict(table.get("attributes", {})),
    )


class Home:
    """Static description of the home plus its mutable state store (thread-safe).

    The store also says which entities have a command their device has not confirmed yet
    (:meth:`mark_unconfirmed`, set and cleared by the device backend): their state is the one
    the actor assumed, which answers must not state as a fact (issue 20).

    Args:
        entities: the home's entities.
        areas: area names. ``area_floors`` maps area name to floor name.
        floors: floor names.
        satellite_area: the area this hub stands in ("" when unknown).
        states: initial state per entity name (missing: the domain's idle state).
        area_aliases: area name -> its other names ("Lounge" for the Living Room).
    """

    def __init__(
        self,
        entities,
        areas=(),
        floors=(),
        area_floors=None,
        satellite_area="",
        states=None,
        area_aliases=None,
    ) -> None:
        self.entities: tuple[Entity, ...] = tuple(entities)
        self.areas: tuple[str, ...] = tuple(areas)
        self.floors: tuple[str, ...] = tuple(floors)
        self.area_floors: dict[str, str] = dict(area_floors or {})
        self.satellite_area: str = satellite_area
        self.area_aliases: dict[str, tuple[str, ...]] = {
            a: tuple(n) for a, n in (area_aliases or {}).items()
        }
        self._by_key = {e.name.casefold(): e for e in self.entities}
        self._by_said: dict[str, list[Entity]] = {}
        for e in self.entities:
            for said in dict.fromkeys(n.casefold() for n in e.spoken):
                self._by_said.setdefault(said, []).append(e)
        self._lock = threading.Lock()
        states = states or {}
        self._states = {
            e.name: str(states.get(e.name) or _DEFAULT_STATE.get(e.domain, "unknown"))
            for e in self.entities
        }
        self._attributes = {e.name: copy.deepcopy(e.attributes) for e in self.entities}
        self._unconfirmed: dict[str, dict] = {}  # entity name -> {"key", "verb"} (see mark)

    @classmethod
    def from_settings(cls, home: HomeSettings) -> Home:
        """Build the home from ``[home]`` settings (already checked by ``hub.settings``)."""
        keys = entity_keys(home.entities)
        entities = [_entity_from_table(t, k) for t, k in zip(home.entities, keys, strict=True)]
        states = {k: t["state"] for t, k in zip(home.entities, keys, strict=True) if "state" in t}
        return cls(
            entities,
            areas=[a["name"] for a in home.areas],
            floors=[f["name"] for f in home.floors],
            area_floors={a["name"]: a["floor"] for a in home.areas if "floor" in a},
            satellite_area=home.satellite_area,
            states=states,
            area_aliases={a["name"]: a["aliases"] for a in home.areas if a.get("aliases")},
        )

    @property
    def domains(self) -> frozenset[str]:
        """The domains of the home's entities."""
        return frozenset(e.domain for e in self.entities)

    def entity(self, name: str) -> Entity | None:
        """The entity keyed ``name`` (any case), else the first one called ``name`` (its said
        name or an alias), or None."""
        key = str(name).casefold()
        found = self._by_key.get(key)
        if found is None and self._by_said.get(key):
            found = self._by_said[key][0]
        return found

    def called(self, name: str) -> tuple[Entity, ...]:
        """Every entity keyed or called ``name`` (any case): one, or several in different
        areas that share it as a name or an alias ("Ceiling Light" in the Kitchen and in the
        Office; "Big Light", one's name and another's alias), as Home Assistant matches a
        name and an alias alike."""
        key = str(name).casefold()
        said = tuple(self._by_said.get(key, ()))
        if len(said) < 2 and key in self._by_key:
            return (self._by_key[key],)
        return said

    def shared(self, name: str) -> bool:
        """True when ``name`` (a name or an alias, any case) is said for several entities."""
        return len(self._by_said.get(str(name).casefold(), ())) > 1

    def canonical_area(self, name: str | None) -> str | None:
        """The area's name as configured (any case in; an alias gives its area), or None."""
        found = _canonical(self.areas, name)
        if found is None and name:
            key = str(name).casefold()
            found = next(
                (a for a, names in self.area_aliases.items() if key in map(str.casefold, names)),
                None,
            )
        return found

    def canonical_floor(self, name: str | None) -> str | None:
        """The floor's name as configured (any case in), or None when unknown."""
        return _canonical(self.floors, name)

    def state(self, entity_name: str) -> str | None:
        """Current state of the entity (``"on"``, ``"locked"``, ``"64"``), None if unknown."""
        entity = self.entity(entity_name)
        if entity is None:
            return None
        with self._lock:
            return self._states[entity.name]

    def attributes(self, entity_name: str) -> dict:
        """A copy of the entity's current attributes ({} if unknown)."""
        entity = self.entity(entity_name)
        if entity is None:
            return {}
        with self._lock:
            return copy.deepcopy(self._attributes[entity.name])

    def set_state(self, entity_name: str, state: str, **attributes) -> None:
        """Set the entity's state and merge ``attributes`` into its attributes.

        Raises:
            KeyError: no entity has that name.
        """
        entity = self.entity(entity_name)
        if entity is None:
            raise KeyError(entity_name)
        with self._lock:
            self._states[entity.name] = str(state)
            self._attributes[entity.name].update(copy.deepcopy(attributes))

    def mark_unconfirmed(self, entity_name: str, key: str, verb: str = "") -> None:
        """A command (idempotency key ``key``) went to the entity and its device has not
        confirmed it: the entity's state is assumed, not known, until :meth:`settle`. A newer
        command replaces an older one's mark.

        ``verb``: what the command asks of the device ("turn on"; "" when there is no word),
        said in answers ("I've asked the Kitchen Light to turn on; it hasn't confirmed yet.").

        Raises:
            KeyError: no entity has that name.
        """
        entity = self.entity(entity_name)
        if entity is None:
            raise KeyError(entity_name)
        with self._lock:
            self._unconfirmed[entity.name] = {"key": key, "verb": verb}

    def unconfirmed(self, entity_name: str) -> dict | None:
        """``{"key", "verb"}`` of the entity's unconfirmed command (:meth:`mark_unconfirmed`),
        or None: its state is a fact (as the device or the home last had it)."""
        entity = self.entity(entity_name)
        if entity is None:
            return None
        with self._lock:
            mark = self._unconfirmed.get(entity.name)
            return dict(mark) if mark is not None else None

    def settle(
        self,
        entity_name: str,
        key: str | None = None,
        state: str | None = None,
        attributes: dict | None = None,
    ) -> bool:
        """Clear the entity's unconfirmed mark (only when it is ``key``'s, if given) and, with
        ``state``, set its state and merge ``attributes``, in one step (a question never sees
        the mark gone and the assumed state still there). True when a mark was cleared; an
        unknown entity is ignored."""
        entity = self.entity(entity_name)
        if entity is None:
            return False
        with self._lock:
            mark = self._unconfirmed.get(entity.name)
            cleared = mark is not None and (key is None or mark["key"] == key)
            if cleared:
                del self._unconfirmed[entity.name]
            if state is not None:
                self._states[entity.name] = str(state)
                self._attributes[entity.name].update(copy.deepcopy(attributes or {}))
            return cleared

    def snapshot(self) -> dict:
        """All states: ``{entity name: {"state": str, "attributes": dict}}`` (a deep copy)."""
        with self._lock:
            return {
                name: {
                    "state": self._states[name],
                    "attributes": copy.deepcopy(self._attributes[name]),
                }
                for name in self._states
            }

    def match_targets(
        self, name=None, area=None, floor=None, domains=(), device_class=None, prefer_area=None
    ) -> TargetMatch:
        """Entities addressed by the given slots (Home Assistant's matching, reduced).

        Args:
            name: entity name or alias (any case). area / floor: names (any case).
            domains: allowed domains (empty: any). device_class: e.g. ``"window"``.
            prefer_area: the area the request came from (the satellite's): among same-named
                entities it picks the one there (Home Assistant's ``preferred_area_id``).
        """
        domains = tuple(domains)
        if area is not None and self.canonical_area(area) is None:
            return TargetMatch(error="no_area", error_args={"area": area})
        if floor is not None and self.canonical_floor(floor) is None:
            return TargetMatch(error="no_floor", error_args={"floor": floor})
        area, floor = self.canonical_area(area), self.canonical_floor(floor)
        if name:
            return self._match_name(name, area, floor, domains, self.canonical_area(prefer_area))
        if not (area or floor or domains or device_class):
            return TargetMatch(error="no_target")
        found = tuple(
            e.name for e in self.entities if self._fits(e, area, floor, domains, device_class)
        )
        if found:
            return TargetMatch(found)
        return _group_error(area, floor, domains, device_class)

    def _fits(self, entity, area, floor, domains, device_class) -> bool:
        """True when ``entity`` passes every given filter."""
        if area and entity.area != area:
            return False
        if floor and self.area_floors.get(entity.area or "") != floor:
            return False
        if domains and entity.domain not in domains:
            return False
        return not device_class or entity.device_class == device_class

    def _match_name(self, name, area, floor, domains, prefer_area=None) -> TargetMatch:
        """Match one named entity (its name or an alias), checking its area/floor/domain.

        Same-named entities are told apart by the spoken area or floor, else by
        ``prefer_area``; still several: ``need_area`` (the actor asks "Which area do you
        mean?", as Home Assistant asks for a duplicate name's area)."""
        called = [e for e in self.called(name) if not domains or e.domain in domains]
        if not called:
            return TargetMatch(error="no_entity", error_args={"entity": name})
        shown = called[0].said or called[0].name
        here = [e for e in called if not area or e.area == area]
        if not here:
            return TargetMatch(
                error="no_entity_in_area", error_args={"entity": shown, "area": area}
            )
        here = [e for e in here if not floor or self.area_floors.get(e.area or "") == floor]
        if not here:
            return TargetMatch(
                error="no_entity_in_floor", error_args={"entity": shown, "floor": floor}
            )
        if len(here) > 1 and prefer_area:
            here = [e for e in here if e.area == prefer_area] or here
        if len(here) > 1:
            return TargetMatch(
                error="need_area", error_args={"entity": shown, "domain": here[0].domain}
            )
        return TargetMatch((here[0].name,))


def _canonical(names, name) -> str | None:
    """The configured spelling of ``name`` among ``names`` (case-insensitive), or None."""
    if not name:
        return None
    key = str(name).casefold()
    return next((n for n in names if n.casefold() == key), None)


def _group_error(area, floor, domains, device_class) -> TargetMatch:
    """The Home Assistant error key for a group request that matched nothing."""
    args = {
        "area": area,
        "floor": floor,
        "domain": domains[0] if domains else "device",
        "device_class": device_class,
    }
    kind = "device_class" if device_class else "domain"
    where = "_in_area" if area else "_in_floor" if floor else ""
    return TargetMatch(error=f"no_{kind}{where}", error_args=args)
