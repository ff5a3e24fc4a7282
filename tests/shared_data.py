"""Where the tests find recordings and the fixture home: the shared folder, else the samples.

The shared folder is ``$HUB_SHARED`` or ``../shared`` beside the repository, when it exists
(``audio/real``, ``audio/generated``, ``fixtures/home-en.toml``). On a bare clone it does not,
and every test falls back to what ships in the repository: ``samples/*.wav`` and
``hub/data/home-en.toml`` (the same home).
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"


def shared_dir() -> Path | None:
    """The shared folder, or None on a bare clone."""
    env = os.environ.get("HUB_SHARED")
    for candidate in ([Path(env)] if env else []) + [REPO.parent / "shared"]:
        if (candidate / "audio").is_dir():
            return candidate
    return None


SHARED = shared_dir()
"""The shared folder, or None (then the samples are used)."""

EDGE_VARIANTS = {"noise20dB"}
"""Fingerprint variants (:func:`hub.bench.fingerprint.variants`) that may miss on a bare clone:
there the commands are the hub's own Piper voice, with no room tone, and white noise at 20 dB
SNR over it was measured to miss ("close the Sliding Door"); a miss costs a recognizer run,
never a wrong command. The shared folder's recordings must find them."""


def home_toml() -> Path:
    """The fixture home: ``shared/fixtures/home-en.toml``, else the sample home."""
    if SHARED is not None and (SHARED / "fixtures" / "home-en.toml").is_file():
        return SHARED / "fixtures" / "home-en.toml"
    return REPO / "hub" / "data" / "home-en.toml"


def recordings(kind: str) -> list[Path]:
    """The ``real`` or ``generated`` recordings, sorted; on a bare clone, the samples of that kind.

    Sample kinds are listed in ``samples/ATTRIBUTION.md``; a sample is "real" when its name is
    in that file's real row.
    """
    if SHARED is not None:
        return sorted((SHARED / "audio" / kind).glob("*.wav"))
    return sorted(p for p in SAMPLES.glob("*.wav") if _sample_kind(p.name) == kind)


def _sample_kind(name: str) -> str:
    for line in (SAMPLES / "ATTRIBUTION.md").read_text(encoding="utf-8").splitlines():
        if f"`{name}`" in line:
            return "real" if "| real" in line else "generated"
    return "generated"


def recording(kind: str, stem: str) -> Path:
    """One recording by what was said: the shared one, else the sample of that name."""
    if SHARED is not None:
        return SHARED / "audio" / kind / f"{stem}.wav"
    return SAMPLES / f"{stem}.wav"


def available(kind: str, stems: list[str]) -> list[Path]:
    """The recordings among ``stems`` that exist here (all of them with the shared folder)."""
    return [p for p in (recording(kind, s) for s in stems) if p.is_file()]


def spoken(text: str) -> Path:
    """A recording of ``text``: the shared one (real, else generated) when there is one, else
    speech synthesized once with the hub's own Piper voice (kept in the temp folder)."""
    import subprocess
    import sys
    import tempfile

    if SHARED is not None:
        for kind in ("real", "generated"):
            path = SHARED / "audio" / kind / f"{text}.wav"
            if path.is_file():
                return path
    if (SAMPLES / f"{text}.wav").is_file():
        return SAMPLES / f"{text}.wav"
    from hub.tts.piper import NOISE_SEED  # renders of another seed (or none) are not reused

    out = Path(tempfile.gettempdir()) / f"hub-test-speech-{NOISE_SEED}" / f"{text}.wav"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        part = out.with_name(out.name + ".part.wav")
        subprocess.run(
            [sys.executable, "-m", "hub", "say", text, "--out", str(part)],
            check=True,
            capture_output=True,
            cwd=REPO,
        )
        part.replace(out)
    return out
