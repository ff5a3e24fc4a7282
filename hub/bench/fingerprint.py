"""``hub bench fingerprint``: does the acoustic fingerprint recognize a command said again?

Commands heard once (every other recording of ``shared/audio``) are stored; their variants
(speed 0.95 and 1.05 by resampling, gain -6 and +6 dB, white noise at 20 dB SNR) are looked
up with the loose threshold and must give the same transcript; the recordings never stored
(near pairs such as "turn on the TV" / "turn off TV" among them) must give no hit. Then the
store is filled to ``entries`` fingerprints and the lookup time is measured.
"""

from __future__ import annotations

import time
import wave
from pathlib import Path

import numpy as np

RATE = 16000


def load_wav(path: str | Path) -> np.ndarray:
    """Float32 mono samples at 16 kHz (int16 scale) of a 16-bit PCM wav file.

    Raises:
        wave.Error, OSError: not a readable 16-bit wav.
    """
    import soxr

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
    import soxr

    out = {f"speed{s}": soxr.resample(x, RATE, RATE / s).astype(np.float32) for s in (0.95, 1.05)}
    for g in (-6, 6):
        out[f"gain{g:+d}dB"] = np.clip(x * 10 ** (g / 20), -32768, 32767)
    power = float(np.mean(x ** 2))
    out["noise20dB"] = x + rng.standard_normal(len(x)).astype(np.float32) * np.sqrt(power / 100)
    return out


def recordings(shared: Path) -> list[Path]:
    """The wav files of ``shared/audio/generated`` and ``shared/audio/real``, sorted."""
    return sorted((shared / "audio" / "generated").glob("*.wav")) + \
        sorted((shared / "audio" / "real").glob("*.wav"))


def accuracy(store, files: list[Path], loose: float, rng) -> dict:
    """Store every other file; look up its variants and the others. Returns hit/false counts."""
    from hub.store import fingerprint as fpm

    heard, unheard = files[::2], files[1::2]
    for f in heard:
        store.put_fingerprint("bench", fpm.compute(load_wav(f)), f.stem)
    right = wrong = missed = 0
    for f in heard:
        for v in variants(load_wav(f), rng).values():
            found = store.find_fingerprint("bench", fpm.compute(v), loose)
            right += bool(found and found[0] == f.stem)
            wrong += bool(found and found[0] != f.stem)
            missed += found is None
    false_hits = [f.stem for f in unheard
                  if store.find_fingerprint("bench", fpm.compute(load_wav(f)), loose)]
    return {"heard": len(heard), "variants": right + wrong + missed, "right": right,
            "wrong": wrong, "missed": missed, "unheard": len(unheard), "false_hits": false_hits}


def lookup_times(store, files: list[Path], entries: int, loose: float, rng) -> dict:
    """Fill the store to ``entries`` fingerprints (random variants), then time 200 lookups."""
    from hub.resilience.percentile import percentile
    from hub.store import fingerprint as fpm

    base = [load_wav(f) for f in files]
    n = 0
    while n < entries:
        x = base[n % len(base)]
        v = soxr_speed(x, rng.uniform(0.9, 1.1)) * 10 ** (rng.uniform(-6, 6) / 20)
        store.put_fingerprint("bench", fpm.compute(v), f"filler {n}")
        n += 1
    times = []
    for i in range(200):
        x = base[i % len(base)]
        t = time.perf_counter()
        store.find_fingerprint("bench", fpm.compute(x), loose)
        times.append((time.perf_counter() - t) * 1000)
    return {"entries": entries, "lookups": len(times), "p50_ms": percentile(times, 50),
            "p95_ms": percentile(times, 95)}


def soxr_speed(x: np.ndarray, factor: float) -> np.ndarray:
    """``x`` played ``factor`` times faster (resampled)."""
    import soxr

    return soxr.resample(x, RATE, RATE / factor).astype(np.float32)


def run(shared: Path, entries: int = 10000, seed: int = 1) -> dict:
    """The whole suite on a temporary store; the figures as a dict."""
    import tempfile

    from hub.settings import StoreSettings
    from hub.store.db import Store

    cfg = StoreSettings(cache_mb=1000)
    rng = np.random.default_rng(seed)
    files = recordings(shared)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "fp.db", cfg)
        out = {"accuracy": accuracy(store, files, cfg.fingerprint_loose, rng)}
        out["lookup"] = lookup_times(store, files, entries, cfg.fingerprint_loose, rng)
    return out
