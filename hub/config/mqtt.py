"""Settings of the device links: ``[mqtt]`` and ``[homeassistant]`` (:mod:`hub.settings`)."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal

from pydantic import ConfigDict, Field
from pydantic.dataclasses import dataclass

_CONFIG = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)
"""As in :mod:`hub.settings`: unknown keys refused, no silent conversion."""


@dataclass(frozen=True, config=_CONFIG)
class MqttSettings:
    """Device actions over MQTT."""

    enabled: bool = True
    """Use the broker when ``host`` is set; false: actions change the in-process home only."""
    host: str = ""
    """Broker host; empty: no MQTT."""
    port: Annotated[int, Field(ge=1, le=65535)] = 1883
    """Broker port."""
    topic_prefix: str = "hub"
    """Commands go to ``<prefix>/<domain>/<object_id>/set``, states come from ``.../state``."""
    qos: Annotated[int, Field(ge=1, le=2)] = 1
    """MQTT QoS of commands (1 or 2: a command is done only when the broker acknowledged it)."""
    timeout_s: Annotated[float, Field(ge=0.01, le=120)] = 2.0
    """Longest wait for the TCP connection to the broker, seconds."""
    ack_wait_s: Annotated[float, Field(ge=0, le=60)] = 1.0
    """Longest a turn waits for the broker's PUBACK before saying the action is queued."""
    action_ttl_s: Annotated[float, Field(ge=1, le=604_800)] = 300.0
    """A command not acknowledged within this is dropped and the user told once."""
    client_id: str = ""
    """MQTT client id; empty: ``hub-<hostname>-<8 hex install id>``."""
    keepalive_s: Annotated[int, Field(ge=5, le=65535)] = 30
    """MQTT keep-alive, seconds."""
    backoff_max_s: Annotated[float, Field(ge=1, le=3600)] = 60.0
    """Longest wait between reconnection attempts (exponential backoff with jitter)."""
    probe_s: Annotated[float, Field(ge=0.1, le=3600)] = 30.0
    """The liveness probe (a message to itself) goes out this often; stale for two: rebuilt."""
    username: str = ""
    """Broker user name; empty: anonymous."""
    password: str = ""
    """Broker password."""
    tls: bool = False
    """Connect with TLS (the broker's certificate is verified)."""
    ca_file: str = ""
    """CA certificates (PEM) for TLS; empty: the system's."""
    cert_file: str = ""
    """Client certificate (PEM) for TLS; empty: none."""
    key_file: str = ""
    """Client key (PEM) for TLS; empty: none."""
    command_topics: dict[str, str] = field(default_factory=dict)
    """Entity name -> its own command topic (Zigbee2MQTT, Tasmota); others use the default."""
    state_topics: dict[str, str] = field(default_factory=dict)
    """Entity name -> its own state topic; others use ``<prefix>/<domain>/<object_id>/state``."""
    discovery_prefix: str = "homeassistant"
    """Home Assistant's MQTT discovery prefix (its birth message is ``<prefix>/status``)."""
    discovery: tuple[str, ...] = (
        "status",
        "last_transcript",
        "last_intent",
        "fallback_level",
        "mute",
        "wake_word",
    )
    """The hub's own entities announced to Home Assistant; a removed one is cleared."""
    birth_delay_max_s: Annotated[float, Field(ge=0, le=60)] = 5.0
    """After HA's birth message the configs go out once, after a random delay up to this."""
    dialect: Literal["hub", "zigbee2mqtt", "tasmota", "ha_json", "template"] = "hub"
    """Payload dialect of entities without their own ``[mqtt.devices.<name>]`` dialect."""
    bridges: dict[str, dict] = field(default_factory=dict)
    """Bridge name -> ``{dialect, base_topic?, full_topic?, prefixes?}`` shared by its devices
    (README, "Use with Zigbee2MQTT / Tasmota")."""
    devices: dict[str, dict] = field(default_factory=dict)
    """Entity name -> ``{dialect? or bridge?, device?, relay?, min_level?, mireds?, command_topic?,
    state_topic?, …}``: how that entity speaks MQTT (README)."""


@dataclass(frozen=True, config=_CONFIG)
class HomeAssistantSettings:
    """Home Assistant: the home imported from it, its entities acted on (WebSocket API)."""

    url: str = ""
    """Home Assistant's address, ``http://HOST:8123``; empty: no Home Assistant link."""
    token_file: str = ""
    """File holding a long-lived access token (one line); read at start."""
    token_env: str = "HUB_HA_TOKEN"
    """Environment variable holding the token when ``token_file`` is empty."""
    timeout_s: Annotated[float, Field(gt=0, le=120)] = 10.0
    """Longest wait for the WebSocket handshake and login, and for one answer, seconds."""
    action_ttl_s: Annotated[float, Field(ge=1, le=604_800)] = 300.0
    """A service call Home Assistant has not answered within this is dropped and the user told once.
    """
    entities: dict[str, dict] = field(default_factory=dict)
    """Entity name in ``[home]`` -> ``{entity_id, unique_id?, aliases?}``: the Home Assistant entity
    it is (written by ``hub home import``)."""
