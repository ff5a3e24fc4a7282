#!/usr/bin/env python3
"""Score the hub on Home Assistant's English intent test sentences *spoken* in its own voice.

Usage: ``python scripts/score_ha_spoken.py DIR [--limit N] [--seed S] [--config F]
[--cache DIR] [--all-tests] [--failures N] [--json]``

``DIR`` is the folder :mod:`score_ha_tests` reads (home-assistant/intents ``tests/en`` and its
``_fixtures.yaml``; a copy is ``tests/data/ha_intents_en``). The home is built from the fixtures
as there; the sentences are by default "this release's tests" (the ones plain hassil, Home
Assistant's own matcher, gets right with that home: ``--all-tests`` takes every sentence). A
seeded random sample of ``--limit`` of them (``--seed``: another seed is a held-back sample)
is synthesized with the hub's Piper voice (``[tts]`` of ``--config``; the wavs are kept in
``--cache`` by text), read back as ``hub replay`` reads a file (``hub.audio.load_wav``) and run
through one in-process :class:`hub.core.hub.Hub` exactly as ``hub replay --no-llm --no-audio``
runs a file (grammar pass -> second pass -> rules -> fuzzy), each sentence in its own
conversation whose area is the test's context area. ``--config`` supplies everything but
``[home]`` (e.g. ``[resilience]``); the default is the default config.

Scored: right intent (the trace's intent is the test's), right intent + slots (as
:mod:`score_ha_tests`), asked back ("Do you want me to ..."), heard as nothing. Prints the
totals, the count per kind of miss, and ``--failures N`` misses with what each pass heard.
Exit 0 when scored, 2 when DIR has no fixtures or no tests.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from score_ha_tests import (  # noqa: E402  (a script beside this one)
    hassil_results,
    home_from_fixtures,
    home_toml,
    load_cases,
    slots_right,
)


def pick(cases: list, home: dict, limit: int, seed: int, all_tests: bool) -> list:
    """``limit`` cases (all when 0), a seeded random sample of this release's tests (or of
    every test with ``all_tests``), in sample order."""
    if not all_tests:
        plain = hassil_results(home, cases)
        cases = [
            c
            for c, r in zip(cases, plain, strict=True)
            if r["intent"] == c[2] and slots_right(c[3], r["slots"])
        ]
    order = list(range(len(cases)))
    random.Random(seed).shuffle(order)
    return [cases[i] for i in (order[:limit] if limit else order)]


def synthesize(tts, text: str, cache: Path) -> Path:
    """The wav of ``text`` in the hub's voice (made once; named by a hash of the text)."""
    from hub.audio.wav import write_wav

    path = cache / (hashlib.sha1(text.encode("utf-8")).hexdigest()[:16] + ".wav")
    if not path.is_file():
        tmp = path.with_suffix(".part")
        write_wav(tts.synthesize(text), tmp, tts.rate)
        os.replace(tmp, path)
    return path


def make_hub(home: dict, config: Path | None, tmp: Path):
    """A replay :class:`hub.core.hub.Hub` for ``home`` (``config``'s other sections), rules
    only, text answers only, no store (``hub replay --no-llm --no-audio --store :memory:``)."""
    import dataclasses

    from hub.core.hub import Hub
    from hub.settings import load_settings
    from hub.store.db import open_store

    text = config.read_text(encoding="utf-8") if config else ""
    path = tmp / "hub.toml"
    path.write_text(_without_home(text) + "\n" + home_toml(home), encoding="utf-8")
    settings = load_settings(str(path))
    settings = dataclasses.replace(
        settings, llm=dataclasses.replace(settings.llm, intents_on=(), answers_on=())
    )
    hub = Hub(settings, entry="replay", store=open_store(":memory:", settings.store), speak=False)
    hub.engines.warm(["asr", "rules", "devices"])
    if settings.asr.second_pass:  # as hub replay does: the model is loaded before the first
        from hub.cli.replay import _preload_second_pass  # lazy: after the Hub's imports

        _preload_second_pass(hub)
    return hub, settings


def _without_home(text: str) -> str:
    """A config's text without its ``[home]`` tables (the fixtures' home replaces them)."""
    out, skip = [], False
    for line in text.splitlines():
        head = line.strip()
        if head.startswith("["):
            skip = head.strip("[]").split(".")[0].strip() == "home"
        if not skip:
            out.append(line)
    return "\n".join(out)


def kind(case, trace: dict) -> str:
    """The row a result counts in: right, slots, asked, nothing, wrong_intent."""
    if trace.get("intent") == case[2]:
        return "right" if slots_right(case[3], trace.get("slots") or {}) else "slots"
    if (trace.get("response") or "").startswith("Do you want me to"):
        return "asked"
    if trace.get("intent") is None:
        return "nothing"
    return "wrong_intent"


def run(cases: list, home: dict, args) -> list[dict]:
    """One trace per case (the file read back as ``hub replay`` does)."""
    from hub.audio import load_wav, speech_present
    from hub.tts.piper import make_tts

    cache = args.cache
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        hub, settings = make_hub(home, args.config, Path(tmp))
        tts = make_tts(settings.tts)
        traces = []
        for i, case in enumerate(cases):
            audio = load_wav(synthesize(tts, case[1], cache))
            conv = hub.conversation(f"ha-{i}", area=case[4] or None)
            trace = hub.turn_audio(
                audio.samples,
                file=case[1],
                conversation=conv,
                silent=not speech_present(audio),
            )
            traces.append(trace)
            if args.traces:
                with args.traces.open("a", encoding="utf-8") as out:
                    out.write(json.dumps({"case": case, **trace}, ensure_ascii=False) + "\n")
            if args.verbose:
                second = trace.get("second_pass") or {}
                print(
                    f"[{i + 1}/{len(cases)}] {kind(case, trace):12} {case[1]!r} -> "
                    f"{trace['transcript']!r} {trace['intent']} | {second.get('outcome')} "
                    f"{second.get('rejected_reason') or ''} | "
                    f"{' '.join(e['node'] + ':' + e['kind'] for e in trace['errors'])} | "
                    f"{trace['timings_ms'].get('total')} ms",
                    file=sys.stderr,
                )
    return traces


def report(cases: list, traces: list[dict], args) -> None:
    """Totals, miss kinds and ``--failures`` misses."""
    kinds = Counter(kind(c, t) for c, t in zip(cases, traces, strict=True))
    n = len(cases)
    intent = kinds["right"] + kinds["slots"]
    skipped = sum((t.get("second_pass") or {}).get("outcome") == "skipped" for t in traces)
    totals = {
        "sentences": n,
        "intent": intent,
        "intent_slots": kinds["right"],
        "kinds": dict(kinds),
        "second_pass_skipped": skipped,
    }
    if args.json:
        print(json.dumps(totals))
    print(
        f"spoken: {n} sentences  intent {intent}/{n} ({intent / n:.1%})  intent+slots "
        f"{kinds['right']}/{n} ({kinds['right'] / n:.1%})  asked back {kinds['asked']}  "
        f"heard as nothing {kinds['nothing']}  wrong intent {kinds['wrong_intent']}  "
        f"second pass skipped for time {skipped}"
    )
    shown = 0
    for case, trace in zip(cases, traces, strict=True):
        if kind(case, trace) == "right" or shown >= args.failures:
            continue
        shown += 1
        second = trace.get("second_pass") or {}
        print(
            f"MISS {kind(case, trace)} | {case[1]!r} -> {case[2]} {case[3]} | heard "
            f"{trace['transcript']!r} -> {trace['intent']} {trace['slots']} | second pass "
            f"{second.get('why')}/{second.get('outcome')} {second.get('text')!r} | "
            f"{trace['response'][:60]!r}"
        )


def main(argv: list[str] | None = None) -> int:
    """Sample, synthesize, replay, score."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--limit", type=int, default=200, help="sentences (0: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--config", type=Path, help="hub config for all but [home]")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "ha_spoken")
    parser.add_argument("--all-tests", action="store_true")
    parser.add_argument("--failures", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="one line per sentence")
    parser.add_argument("--traces", type=Path, help="append each trace (JSON line) to this file")
    args = parser.parse_args(argv)
    fixtures = args.folder / "_fixtures.yaml"
    cases = load_cases(args.folder) if args.folder.is_dir() else []
    if not fixtures.is_file() or not cases:
        print(f"score_ha_spoken: {args.folder}: no _fixtures.yaml or no tests", file=sys.stderr)
        return 2
    home = home_from_fixtures(yaml.safe_load(fixtures.read_text(encoding="utf-8")))
    cases = pick(cases, home, args.limit, args.seed, args.all_tests)
    start = time.monotonic()
    traces = run(cases, home, args)
    report(cases, traces, args)
    print(f"wall {time.monotonic() - start:.0f} s, load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
