"""MQTT topics and payloads of the home's entities: names, checks, state messages.

Commands go to ``<prefix>/<domain>/<object_id>/set`` and device state comes from
``<prefix>/<domain>/<object_id>/state``; ``object_id`` is the entity name through
``python-slugify`` with ``_`` as separator, as Home Assistant makes entity ids
(``"Kitchen Light"`` -> ``kitchen_light``). ``[mqtt] command_topics`` / ``state_topics`` map an
entity name to its own topic instead (Zigbee2MQTT, Tasmota).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hub.errors import BadInputError, ConfigError

MAX_STATE_BYTES = 64 * 1024
"""A state message longer than this is dropped (a device state is a few hundred bytes)."""

BARE_STATES = frozenset(
    {
        "on",
        "off",
        "open",
        "closed",
        "opening",
        "closing",
        "locked",
        "unlocked",
        "locking",
        "unlocking",
        "jammed",
        "playing",
        "paused",
        "idle",
        "standby",
        "unavailable",
        "unknown",
        "home",
        "not_home",
        "heat",
        "cool",
        "auto",
    }
)
"""Home Assistant state words; any case in a payload (``ON``) becomes this lower-case form."""


def slug(name: str) -> str:
    """An entity name as one topic level, Home Assistant style: ``"Café Lamp"`` -> ``cafe_lamp``.

    Uses ``slugify(name, separator="_")`` from ``python-slugify`` (what Home Assistant's
    ``homeassistant.util.slugify`` wraps).

    Raises:
        BadInputError: the name has no letter or digit.
    """
    # lazy: python-slugify and unidecode are not for hub --help (settings imports this)
    from slugify import slugify

    result = slugify(str(name), separator="_")
    if not result:
        raise BadInputError(
            f"entity name {name!r} has no letter or digit for an MQTT topic", node="act"
        )
    return result


def check_topic(path: str, topic: str) -> None:
    """Raise ConfigError (naming ``path``) unless ``topic`` can be published to.

    Publish topics must not hold the wildcards ``+`` or ``#``, be empty, start with ``$``, or
    have an empty level (``a//b``, a leading or trailing ``/``) — MQTT 5.0 §4.7.
    """
    if not topic:
        raise ConfigError(f"{path}: must not be empty")
    if "+" in topic or "#" in topic:
        raise ConfigError(f"{path}: {topic!r} has an MQTT wildcard (+ or #)")
    if topic.startswith("$"):
        raise ConfigError(f"{path}: {topic!r} starts with $ (reserved for the broker)")
    if any(not level for level in topic.split("/")):
        raise ConfigError(f"{path}: {topic!r} has an empty topic level")
    if "\x00" in topic or len(topic.encode("utf-8")) > 65535:
        raise ConfigError(f"{path}: {topic!r} is not a valid MQTT topic")


@dataclass(frozen=True)
class EntityTopics:
    """One entity's topics: where its commands go and where its state comes from."""

    name: str
    domain: str
    command: str
    state: str


def entity_topics(settings, entities) -> dict[str, EntityTopics]:
    """``{entity name: EntityTopics}`` for every entity, checked.

    Args:
        settings: :class:`hub.settings.MqttSettings` (``topic_prefix``, ``command_topics``,
            ``state_topics``).
        entities: ``(name, domain)`` pairs (the ``[home]`` entities).
    Raises:
        ConfigError: a bad topic part, a per-entity topic for an unknown entity, an entity name
            with no letter or digit, or two entities sharing a topic (both names in the line).
    """
    prefix = settings.topic_prefix
    check_topic("mqtt.topic_prefix", prefix)
    entities = list(entities)
    names = {name for name, _ in entities}
    for table in ("command_topics", "state_topics"):
        for name, topic in getattr(settings, table).items():
            if name not in names:
                raise ConfigError(f"mqtt.{table}.{name}: no entity named {name!r}")
            if not isinstance(topic, str):
                raise ConfigError(f"mqtt.{table}.{name}: expected a string, got {topic!r}")
            check_topic(f"mqtt.{table}.{name}", topic)
    out: dict[str, EntityTopics] = {}
    for name, domain in entities:
        try:
            base = f"{prefix}/{domain}/{slug(name)}"
        except BadInputError as exc:
            raise ConfigError(f"home.entities: {exc.message}") from None
        check_topic(f"home.entities.{name}.domain", domain)
        out[name] = EntityTopics(
            name,
            domain,
            settings.command_topics.get(name, f"{base}/set"),
            settings.state_topics.get(name, f"{base}/state"),
        )
    _check_collisions(out)
    return out


HUB_ENTITIES = ("status", "last_transcript", "last_intent", "fallback_level", "mute", "wake_word")
"""The hub's own entities that ``[mqtt] discovery`` may list (:mod:`hub.devices.discovery`)."""


def check_settings(settings, entities) -> None:
    """Check ``[mqtt]`` at start: the discovery prefix and names, and every entity topic.

    Args:
        settings: :class:`hub.settings.MqttSettings`.
        entities: ``(name, domain)`` pairs of ``[home]``.
    Raises:
        ConfigError: as :func:`entity_topics`, or a bad ``discovery_prefix`` /
            ``discovery`` (the dialects are checked by :func:`hub.settings` with
            :func:`hub.devices.dialects.build_devices`).
    """
    check_topic("mqtt.discovery_prefix", settings.discovery_prefix)
    for i, name in enumerate(settings.discovery):
        if name not in HUB_ENTITIES:
            raise ConfigError(
                f"mqtt.discovery[{i}]: unknown hub entity {name!r}; one of "
                f"{', '.join(HUB_ENTITIES)}"
            )
    entities = list(entities)
    entity_topics(settings, entities)


def _check_collisions(topics: dict[str, EntityTopics]) -> None:
    """Two entities on one topic would get each other's commands: fail with both names."""
    seen: dict[str, str] = {}
    for ent in topics.values():
        for topic in {ent.command, ent.state}:
            other = seen.get(topic)
            if other is not None and other != ent.name:
                raise ConfigError(
                    f"mqtt: entities {other!r} and {ent.name!r} share the topic "
                    f"{topic!r}; rename one or set mqtt.command_topics / "
                    f"mqtt.state_topics"
                )
            seen[topic] = ent.name


def command_payload(action: dict, expires_at: float) -> bytes:
    """The command body: UTF-8 JSON ``{"service", "data", "idempotency_key", "expires_at"}``.

    ``idempotency_key`` is the same on every re-send: a device must act once per key.
    ``expires_at`` (seconds since the epoch): a device must drop the command after it, because
    the hub has by then told the user it could not reach the device.
    """
    body = {
        "service": action["service"],
        "data": action.get("data") or {},
        "idempotency_key": action["idempotency_key"],
        "expires_at": round(expires_at, 3),
    }
    return json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8")


class StateError(ValueError):
    """A state message that cannot be used; the message says why (for one WARNING line)."""


def parse_state(payload: bytes) -> tuple[str, dict]:
    """``(state, attributes)`` from a device's state message.

    Accepted: a bare state (``ON``, ``off``, ``locked``, ``21.5``; HA state words are
    lower-cased) or a JSON object ``{"state": ..., "attributes": {...}}`` (``attributes``
    optional).

    Raises:
        StateError: longer than :data:`MAX_STATE_BYTES`, not UTF-8, empty, truncated or
            invalid JSON, or JSON of another shape.
    """
    if len(payload) > MAX_STATE_BYTES:
        raise StateError(f"payload of {len(payload)} bytes is over {MAX_STATE_BYTES}")
    try:
        text = payload.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise StateError(f"payload is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if not text:
        raise StateError("payload is empty")
    if text[0] in '{["':
        return _parse_json(text)
    if any(ord(c) < 32 for c in text) or len(text) > 255:
        raise StateError("bare state has control characters or is over 255 characters")
    return _norm(text), {}


def _parse_json(text: str) -> tuple[str, dict]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateError(f"invalid JSON ({exc.msg} at character {exc.pos})") from None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("state"), (str, int, float))
        or isinstance(data.get("state"), bool)
    ):
        raise StateError('JSON is not an object with a "state" string or number')
    attributes = data.get("attributes", {})
    if not isinstance(attributes, dict):
        raise StateError('JSON "attributes" is not an object')
    return _norm(str(data["state"])), attributes


def _norm(state: str) -> str:
    low = state.strip().lower()
    return low if low in BARE_STATES else state.strip()
