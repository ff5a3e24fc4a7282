"""``hub bench fingerprint``: does the acoustic fingerprint recognize a command said again?

Commands heard once (every other recording of ``shared/audio``) are stored; their variants
(speed 0.95 and 1.05 by resampling, gain -6 and +6 dB, white noise at 20 dB SNR) are looked
up with the loose threshold and must give the same transcript; the recordings never stored
(near pairs such as "turn on the TV" / "turn off TV" among them) must give no hit. Then the
store is filled to ``entries`` fingerprints and the lookup time is measured.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
import wave
from dataclasses import replace
from pathlib import Path

import numpy as np
import soxr

from hub.audio.format import RATE
from hub.core.hub import Hub
from hub.resilience.percentile import percentile
from hub.settings import Settings, StoreSettings
from hub.store import fingerprint as fpm
from hub.store.db import Store


def load_wav(path: str | Path) -> np.ndarray:
    """Float32 mono samples at 16 kHz (int16 scale) of a 16-bit PCM wav file.

    Raises:
        wave.Error, OSError: not a readable 16-bit wav.
    """
    with wave.open(str(path)) as w:
        if w.getsampwidth() != 2:
            raise wave.Error(f"{path}: not 16-bit PCM")
        x = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32)
        if w.getnchannels() > 1:
            x = x.reshape(-1, w.getnchannels()).mean(axis=1)
        rate = w.getframerate()
    return soxr.resample(x, rate, RATE).astype(np.float32) if rate != RATE else x


def variants(x: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Speed x0.95/x1.05 (soxr resampling: tempo and pitch together), gain -6/+6 dB (clipped
    to int16), white noise at 20 dB SNR (relative to the mean power of ``x``)."""
    out = {f"speed{s}": soxr.resample(x, RATE, RATE / s).astype(np.float32) for s in (0.95, 1.05)}
    for g in (-6, 6):
        out[f"gain{g:+d}dB"] = np.clip(x * 10 ** (g / 20), -32768, 32767)
    power = float(np.mean(x**2))
    out["noise20dB"] = x + rng.standard_normal(len(x)).astype(np.float32) * np.sqrt(power / 100)
    return out


def recordings(folders: list[Path]) -> list[Path]:
    """The wav files of ``folders`` (e.g. ``shared/audio/generated`` and ``.../real``), sorted
    per folder."""
    return [f for folder in folders for f in sorted(Path(folder).glob("*.wav"))]


def accuracy(store, files: list[Path], loose: float, rng) -> dict:
    """Store every other file; look up its variants and the others at the ``loose`` threshold.

    Returns hit/false counts, the 5th percentile of the variants' similarity to their own
    recording and the highest similarity of a never-heard one to any stored one."""
    heard, unheard = files[::2], files[1::2]
    stored = [fpm.compute(load_wav(f), query=False) for f in heard]
    for f, fp in zip(heard, stored, strict=True):
        store.put_fingerprint("bench", fp, f.stem)
    right = wrong = missed = 0
    true_sims, false_sims = [], []
    for f, own in zip(heard, stored, strict=True):
        for v in variants(load_wav(f), rng).values():
            query = fpm.compute(v)
            true_sims.append(fpm.similarity(query, own))
            found = store.find_fingerprint("bench", query, loose)
            right += found is not None and found[0] == f.stem
            wrong += found is not None and found[0] != f.stem
            missed += found is None
    false_hits = []
    for f in unheard:
        query = fpm.compute(load_wav(f))
        false_sims.append(max(fpm.similarities(query, stored)))
        found = store.find_fingerprint("bench", query, loose)
        if found:
            false_hits.append(f"{f.stem} -> {found[0]} ({found[2]:.2f})")
    return {
        "heard": len(heard),
        "variants": right + wrong + missed,
        "right": right,
        "wrong": wrong,
        "missed": missed,
        "unheard": len(unheard),
        "false_hits": false_hits,
        "variant_similarity_p5": float(np.percentile(true_sims, 5)) if true_sims else None,
        "unheard_similarity_max": max(false_sims, default=None),
    }


def lookup_times(store, files: list[Path], entries: int, loose: float, rng) -> dict:
    """Fill the store to ``entries`` fingerprints (random variants), then time 200 lookups of
    the recordings by their features (no digest: the acoustic path, LSH and DTW, every time)."""
    base = [load_wav(f) for f in files]
    n = 0
    while n < entries:
        x = base[n % len(base)]
        v = soxr_speed(x, rng.uniform(0.9, 1.1)) * 10 ** (rng.uniform(-6, 6) / 20)
        store.put_fingerprint("bench", fpm.compute(v, query=False), f"filler {n}")
        n += 1
    times, cpu, features = [], [], []
    for i in range(200):
        x = base[i % len(base)]
        t = time.perf_counter()
        fp = replace(fpm.compute(x), digest="")
        t1, c1 = time.perf_counter(), time.process_time()
        store.find_fingerprint("bench", fp, loose)
        times.append((time.perf_counter() - t1) * 1000)
        cpu.append((time.process_time() - c1) * 1000)
        features.append((t1 - t) * 1000)
    return {
        "entries": entries,
        "lookups": len(times),
        "p50_ms": percentile(times, 50),
        "p95_ms": percentile(times, 95),
        "cpu_p50_ms": percentile(cpu, 50),
        "cpu_p95_ms": percentile(cpu, 95),
        "features_p50_ms": percentile(features, 50),
        "features_p95_ms": percentile(features, 95),
    }


def soxr_speed(x: np.ndarray, factor: float) -> np.ndarray:
    """``x`` played ``factor`` times faster (resampled)."""
    return soxr.resample(x, RATE, RATE / factor).astype(np.float32)


def replay_ttfa(settings, path: Path, turns: int = 5) -> dict:
    """TTFA (ms) of ``turns`` replays of one file with the real engines and a fresh store: the
    first turn runs ASR and TTS, the later ones hit the fingerprint and answer-audio caches."""
    x = np.clip(load_wav(path), -32768, 32767).astype(np.int16)
    with tempfile.TemporaryDirectory() as tmp:
        hub = Hub(
            dataclasses.replace(
                settings, llm=dataclasses.replace(settings.llm, intents_on=(), answers_on=())
            ),
            entry="replay",
            store=Store(Path(tmp) / "ttfa.db"),
            speak=True,
        )
        traces = [hub.turn_audio(x, file=str(path)) for _ in range(turns)]
    ttfa = [t["timings_ms"]["ttfa"] for t in traces]
    return {
        "file": path.name,
        "first_ms": ttfa[0],
        "again_ms": ttfa[1:],
        "sources": [t["source"] for t in traces],
        "intent": traces[-1]["intent"],
        "last_timings_ms": traces[-1]["timings_ms"],
    }


def run(folders: list[Path], settings=None, entries: int = 10000, seed: int = 1) -> dict:
    """The whole suite on a temporary store; the figures as a dict."""
    settings = settings or Settings()
    cfg = StoreSettings(
        cache_mb=1000,
        fingerprint_strict=settings.store.fingerprint_strict,
        fingerprint_loose=settings.store.fingerprint_loose,
    )
    rng = np.random.default_rng(seed)
    files = recordings(folders)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "fp.db", cfg)
        out = {"accuracy": accuracy(store, files, cfg.fingerprint_loose, rng)}
        out["lookup"] = lookup_times(store, files, entries, cfg.fingerprint_loose, rng)
    out["ttfa"] = replay_ttfa(settings, files[0])
    out["thresholds"] = {"strict": cfg.fingerprint_strict, "loose": cfg.fingerprint_loose}
    return out


def report(r: dict) -> str:
    """The markdown section of :func:`run`'s figures."""
    a, lk, t = r["accuracy"], r["lookup"], r["ttfa"]
    n = a["variants"]
    return "\n".join(
        [
            "## Fingerprint",
            "",
            "Made by: `hub bench --suite fingerprint`",
            "",
            f"Thresholds: strict {r['thresholds']['strict']}, loose {r['thresholds']['loose']} "
            "(the L1 lookup when ASR failed uses the loose one).",
            "",
            "| what | result |",
            "|---|---|",
            f"| variants of {a['heard']} heard commands (speed 0.95/1.05, gain -6/+6 dB, noise "
            f"20 dB SNR) | {a['right']}/{n} right ({a['right'] / n:.0%}), {a['wrong']} wrong, "
            f"{a['missed']} missed |",
            f"| {a['unheard']} commands never heard | {len(a['false_hits'])} false hits "
            f"{', '.join(a['false_hits'])} |",
            f"| similarity: variants p5, never-heard max | {a['variant_similarity_p5']:.3f}, "
            f"{a['unheard_similarity_max']:.3f} |",
            f"| lookup with {lk['entries']} entries ({lk['lookups']} lookups, LSH + DTW) "
            f"| p50 {lk['p50_ms']:.1f} ms, p95 {lk['p95_ms']:.1f} ms (CPU time p50 "
            f"{lk['cpu_p50_ms']:.1f} ms, p95 {lk['cpu_p95_ms']:.1f} ms) |",
            f"| features of the utterance (MFCC, before the lookup) | "
            f"p50 {lk['features_p50_ms']:.1f} ms, p95 {lk['features_p95_ms']:.1f} ms |",
            f"| TTFA replaying `{t['file']}` (real engines) | first {t['first_ms']:.0f} ms, again "
            f"{', '.join(f'{v:.0f}' for v in t['again_ms'])} ms ({t['sources'][-1]}) |",
            "",
            f"Last replay's node times (ms): {json.dumps(t['last_timings_ms'])}",
            "",
        ]
    )


def bench_fingerprint(args, settings, folders) -> str:
    """The ``fingerprint`` suite of ``hub bench``."""
    return report(run(folders, settings))
