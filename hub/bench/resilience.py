"""``hub bench --suite resilience``: the resilience layer measured with the real engines.

- **hung**: each engine node hung in turn, 20 turns each on a recorded command: TTFA p100
  against the node's budget + 100 ms, and, once its breaker is open, against 1.2 x the healthy
  rules-path TTFA.
- **stress**: both cores kept busy by spinning processes while the audio is replayed twice,
  with dynamic timeouts and with fixed ones (load factor 1, no latency history): turns past
  the deadline and fallbacks for each.
- **soak**: turns with random faults; growth of threads, open files and RSS.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import random
import time
from pathlib import Path

from hub import names
from hub.audio import load_wav
from hub.core.hub import Hub
from hub.resilience.load import FixedProbe
from hub.resilience.percentile import percentile as pct
from hub.resilience.soak import process_counts
from hub.store.db import Store

HUNG_NODES = (names.ASR, names.RULES, names.ACT, names.TTS)
TIGHT_TIMEOUTS = {"asr": 0.35, "rules": 0.05, "act": 0.05, "tts": 0.25}
"""Base timeouts (s) for the stress run: about the unloaded p95 of each node here."""


_ENGINES: dict = {}
"""Engines loaded once and shared by every Hub the suite builds (no reloading, and no
garbage collection of dropped recognizers in the middle of a measured turn)."""


def _hub(settings, inject=(), probe=None):
    factories = {name: (lambda hub, e=engine: e) for name, engine in _ENGINES.items()}
    hub = Hub(
        settings,
        entry="replay",
        store=Store(":memory:"),
        speak=True,
        inject=inject,
        probe=probe,
        factories=factories,
    )
    hub.engines.warm(["asr", "rules", "tts", "actor", "devices"])
    for name in ("asr", "rules", "tts"):
        if hub.engines.loaded(name):
            _ENGINES.setdefault(name, hub.engines.get(name))
    return hub


def _turns(hub, audio, n: int) -> list[dict]:
    out = []
    for i in range(n):
        samples = audio.samples.copy()
        samples[i % len(samples)] ^= 1  # a new fingerprint each turn: no transcript cache
        out.append(hub.turn_audio(samples))
    return out


def hung(settings, audio, turns: int = 20) -> list[str]:
    """Report lines for the hung-node runs (load factor fixed at 1, so budgets are the bases)."""
    healthy = [
        t["timings_ms"]["ttfa"] for t in _turns(_hub(settings, probe=FixedProbe()), audio, 5)
    ]
    h50 = pct(healthy, 50)
    lines = [
        f"Healthy rules-path TTFA p50: {h50:.0f} ms (5 turns). The delay a hung node "
        "adds is the turn's TTFA minus the time the nodes before it took in that turn.",
        "",
        "| node hung | budget ms | TTFA p100, breaker closed | delay added p100 | "
        "limit (budget + 100) | TTFA p100, breaker open | limit (1.2 x healthy) | "
        "every turn spoke |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for node in HUNG_NODES:
        hub = _hub(settings, inject=[f"{node}=hang"], probe=FixedProbe())
        traces = _turns(hub, audio, turns)
        budget = settings.resilience.timeouts_s[node] * 1000
        closed = max(t["timings_ms"]["ttfa"] for t in traces[:3])
        delay = max(_delay(t, node) for t in traces[:3])
        opened = max(t["timings_ms"]["ttfa"] for t in traces[3:])
        spoke = all(t["timings_ms"]["ttfa"] is not None for t in traces)
        lines.append(
            f"| {node} | {budget:.0f} | {closed:.0f} | {delay:.0f} | "
            f"{budget + 100:.0f} | {opened:.0f} | {1.2 * h50:.0f} | {spoke} |"
        )
    return lines


ORDER = HUNG_NODES


def _delay(trace: dict, node: str) -> float:
    """TTFA minus the time the nodes before ``node`` took in this turn (ms)."""
    before = ORDER[: ORDER.index(node)]
    return trace["timings_ms"]["ttfa"] - sum(trace["timings_ms"].get(n, 0.0) for n in before)


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def stress(settings, folder: Path, limit: int) -> list[str]:
    """Replay under both cores busy, dynamic vs fixed timeouts."""
    files = sorted(folder.glob("*.wav"))[: limit or None]
    audios = [load_wav(f) for f in files]
    # Base timeouts set tight, at about each node's unloaded p95 on this machine, so that
    # load matters: fixed timeouts then trip where dynamic ones stretch.
    tight = dataclasses.replace(
        settings.resilience, timeouts_s={**settings.resilience.timeouts_s, **TIGHT_TIMEOUTS}
    )
    settings = dataclasses.replace(settings, resilience=tight)
    fixed = dataclasses.replace(
        settings, resilience=dataclasses.replace(tight, max_load_factor=1.0)
    )
    stop = multiprocessing.Event()
    spinners = [
        multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
        for _ in range(multiprocessing.cpu_count())
    ]
    for p in spinners:
        p.start()
    try:
        time.sleep(1.0)
        rows = {}
        for label, s, probe in (("dynamic", settings, None), ("fixed", fixed, FixedProbe())):
            hub = _hub(s, probe=probe)
            if label == "fixed":
                hub.latency.record = lambda node, seconds: None  # no latency history
            traces = [hub.turn_audio(a.samples) for a in audios]
            rows[label] = traces
    finally:
        stop.set()
        for p in spinners:
            p.join(5)
    deadline = settings.resilience.deadline_s * 1000
    lines = [
        f"{len(files)} files of {folder.name}, {len(spinners)} spinning processes, base "
        f"timeouts {TIGHT_TIMEOUTS} (s).",
        "",
        "| timeouts | turns | past the deadline | fallback turns | errors | total p50 ms | "
        "total p95 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, traces in rows.items():
        totals = [t["timings_ms"]["total"] for t in traces]
        lines.append(
            f"| {label} | {len(traces)} | {sum(x > deadline for x in totals)} | "
            f"{sum(t['fallback_level'] >= 2 for t in traces)} | "
            f"{sum(len(t['errors']) for t in traces)} | {pct(totals, 50):.0f} | "
            f"{pct(totals, 95):.0f} |"
        )
    return lines


SOAK_FAULTS = (
    "rules=hang",
    "rules=error",
    "rules=garbage",
    "rules=crash",
    "act=hang",
    "act=error",
    "act=garbage",
    "act=crash",
    "act=slow:80",
    "tts=hang",
    "tts=error",
    "tts=garbage",
    "tts=crash",
)


def soak_hubs(settings) -> dict:
    """One Hub per fault (and one healthy), text turns with speech, no LLM, short timeouts."""
    timeouts = {k: 0.05 for k in settings.resilience.timeouts_s}
    res = dataclasses.replace(
        settings.resilience, max_load_factor=1.0, timeouts_s={**timeouts, "tts": 1.0}
    )
    s = dataclasses.replace(
        settings,
        resilience=res,
        llm=dataclasses.replace(settings.llm, intents_on=(), answers_on=()),
    )
    store = Store(":memory:")
    hubs = {}
    for fault in (None, *SOAK_FAULTS):
        shared = {n: (lambda hub, e=e: e) for n, e in _ENGINES.items() if n in ("rules", "tts")}
        hubs[fault] = Hub(
            s,
            entry="ask",
            store=store,
            speak=True,
            factories=shared,
            inject=[fault] if fault else [],
        )
        hubs[fault].engines.warm(["rules", "tts", "actor", "devices"])
        for name in ("rules", "tts"):
            _ENGINES.setdefault(name, hubs[fault].engines.get(name))
    return hubs


def soak(settings, turns: int = 1000, seed: int = 7) -> list[str]:
    """Random faults, ``turns`` text turns; growth of threads, open files and RSS."""
    rng = random.Random(seed)
    hubs = soak_hubs(settings)
    keys = list(hubs)
    for hub in hubs.values():  # first turns load everything once
        hub.turn_text("turn on the kitchen light")
    time.sleep(0.2)
    before = process_counts()
    for _ in range(turns):
        hubs[rng.choice(keys)].turn_text(
            rng.choice(("turn on the kitchen light", "what time is it", "tell me about mars"))
        )
    time.sleep(0.2)
    after = process_counts()
    grow = (after["rss_bytes"] - before["rss_bytes"]) / 2**20
    return [
        f"{turns} turns, each with a random one of: none, {', '.join(SOAK_FAULTS)}.",
        "",
        f"- threads {before['threads']} -> {after['threads']}",
        f"- open files {before['fds']} -> {after['fds']}",
        f"- RSS growth {grow:.1f} MB (limit 10 MB)",
    ]
