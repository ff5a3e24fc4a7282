"""``hub bench``: accuracy, latency, real-time factors and memory on recorded audio.

For each wav: the streamed pipeline (audio fed at real speed into the restricted recognizer,
then rules -> act -> respond -> tts, TTFA from the last frame fed to the first answer audio)
and, in the same run, the sequential baseline (whole file -> unrestricted recognizer -> rules
-> the whole answer synthesized). The expected intent of a file is what the rules give for
its name (the file name is the sentence said). Prints the report; with ``--write`` it also
updates its section of ``BENCHMARKS.md``, with the command that made it.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from hub.intents.score import OOV_RULE, expected
from hub.intents.score import correct as _correct
from hub.resilience.percentile import percentile


def bench_fingerprint(*args, **kwargs):
    """:func:`hub.bench.fingerprint.bench_fingerprint`, imported when that suite runs."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.bench.fingerprint import bench_fingerprint as run

    return run(*args, **kwargs)


def add_parsers(sub, *, common, inject, store) -> None:
    """Register ``bench``."""
    p = sub.add_parser(
        "bench",
        help="measure accuracy, latency, RTF and memory",
        description="Measure the pipeline on wav folders whose file names are "
        f"what was said ({OOV_RULE}); write the results to BENCHMARKS.md.",
    )
    common(p)
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="wav folders (default: $HUB_SHARED/audio/{generated,real}, else ../shared/audio/...)",
    )
    p.add_argument(
        "--fast",
        action="store_true",
        help="feed audio as fast as possible instead of at real speed",
    )
    p.add_argument("--limit", type=int, default=0, metavar="N", help="files per folder (0: all)")
    p.add_argument(
        "--suite",
        choices=("pipeline", "resilience", "soak", "llm", "mqtt", "fingerprint", "all"),
        default="pipeline",
        help="pipeline: accuracy, TTFA, RTF, memory (default); "
        "resilience: hung nodes and CPU stress; soak: 1,000 turns of random faults; "
        "llm: paraphrase accuracy, answer TTFA, hung LLM; mqtt: command rate, "
        "frozen and flapping broker; fingerprint: cache hits on variants, false "
        "hits, lookup time, replayed-file TTFA",
    )
    p.add_argument(
        "--write",
        action="store_true",
        help="also write the report into --output (without it: stdout only)",
    )
    p.add_argument(
        "--output",
        default="BENCHMARKS.md",
        metavar="FILE",
        help="the report file --write updates (default: BENCHMARKS.md)",
    )
    p.set_defaults(func=run_bench)


def default_paths() -> list[Path]:
    """The shared audio folders: ``$HUB_SHARED/audio/...`` or ``../shared/audio/...``; when
    neither exists, the repository's ``samples`` folder (from a checkout)."""
    base = Path(os.environ.get("HUB_SHARED") or Path.cwd().parent / "shared") / "audio"
    samples = Path(__file__).resolve().parents[2] / "samples"
    if not base.is_dir() and samples.is_dir():
        return [samples]
    return [base / "generated", base / "real"]


pct = percentile
"""The hub's one percentile helper (:func:`hub.resilience.percentile.percentile`)."""


def _baseline(hub, plain_asr, audio, rules) -> dict:
    """Whole file -> unrestricted ASR -> rules -> whole answer synthesized."""
    start = time.monotonic()
    text = plain_asr.transcribe(audio.samples).text
    asr_s = time.monotonic() - start
    match = rules.recognize(text)
    response = "Sorry, I couldn't understand that."
    if match is not None:
        response = hub.engines.actor().execute(match, idempotency_key=f"base-{start}").response
    t0 = time.monotonic()
    pcm = b"".join(c.pcm for c in hub.engines.tts().synthesize(response))
    tts_s = time.monotonic() - t0
    return {
        "ttfa_ms": (time.monotonic() - start) * 1000,
        "asr_s": asr_s,
        "intent": match.intent if match else None,
        "slots": dict(match.slots) if match else {},
        "tts_s": tts_s,
        "speech_s": len(pcm) / 2 / hub.engines.tts().rate,
    }


_RSS_WRAPPER = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _child_peak_rss_mb(folder: Path) -> float | None:
    """Peak RSS of ``hub replay`` (PocketSphinx + Piper) on ``folder``, in MB.

    Measured from a small wrapper process: a child forked from this (large) process would
    count this process's pages in its own peak before it execs.
    """
    cmd = [
        sys.executable,
        "-m",
        "hub",
        "replay",
        "--engine",
        "pocketsphinx",
        "--store",
        ":memory:",
        "--out",
        "/tmp/hub-bench-replies",
        str(folder),
    ]
    proc = subprocess.run(
        [sys.executable, "-c", _RSS_WRAPPER, *cmd], capture_output=True, text=True, check=False
    )
    try:
        code, kb = (int(x) for x in proc.stdout.split())
    except ValueError:
        return None
    return kb / 1024 if code in (0, 2) else None


def bench_folder(hub, plain_asr, folder: Path, args) -> dict:
    """Run every wav in ``folder`` both ways; return per-file rows."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.audio import load_wav
    from hub.core.replay import replay_file, replay_realtime

    rules = hub.engines.rules()
    rows = []
    files = sorted(folder.glob("*.wav"))[: args.limit or None]
    for i, path in enumerate(files, 1):
        audio = load_wav(path)
        want = expected(rules, path)
        if args.fast:
            trace = replay_file(hub, path, None, realtime=False)
        else:
            trace = replay_realtime(hub, audio, str(path), None)
        base = _baseline(hub, plain_asr, audio, rules)
        rows.append(
            {
                "file": path.name,
                "trace": trace,
                "base": base,
                "ok": _correct(trace, want),
                "base_ok": _correct({"intent": base["intent"], "slots": base["slots"]}, want),
                "duration_s": audio.duration_s,
            }
        )
        print(f"\r{folder.name}: {i}/{len(files)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return {"folder": folder, "rows": rows}


def _fmt(v, unit="") -> str:
    return "n/a" if v is None else f"{v:.0f}{unit}" if v >= 10 else f"{v:.2f}{unit}"


def report(results: list[dict], command: str, rss_mb: float | None, engine: str) -> str:
    """BENCHMARKS.md text for the results."""
    lines = [
        "# Benchmarks",
        "",
        f"Made by: `{command}`",
        "",
        f"Machine: {os.cpu_count()} cores; date {time.strftime('%Y-%m-%d')}; ASR engine: {engine}.",
        "",
    ]
    allrows = [x for r in results for x in r["rows"]]
    lines += _accuracy_lines(results) + _latency_lines(allrows) + _rtf_lines(allrows, rss_mb)
    misses = [
        f"- {r['folder'].name}/{x['file']}: heard {x['trace']['transcript']!r} -> "
        f"{x['trace']['intent']}"
        for r in results
        for x in r["rows"]
        if not x["ok"]
    ]
    if misses:
        lines += ["## Misses (streamed pipeline)", ""] + misses + [""]
    return "\n".join(lines)


def _accuracy_lines(results: list[dict]) -> list[str]:
    """The accuracy table: right intent and slots per audio folder, both pipelines."""
    lines = [
        "## Accuracy (right intent and slots; file name = what was said; oov_*: right when "
        "nothing is done)",
        "",
        "| audio | files | streamed, restricted ASR | sequential, unrestricted ASR |",
        "|---|---|---|---|",
    ]
    for r in results:
        rows = r["rows"]
        ok = sum(x["ok"] for x in rows)
        base = sum(x["base_ok"] for x in rows)
        lines.append(
            f"| {r['folder'].name} | {len(rows)} | {ok}/{len(rows)} "
            f"({100 * ok / max(1, len(rows)):.0f}%) | {base}/{len(rows)} "
            f"({100 * base / max(1, len(rows)):.0f}%) |"
        )
    return lines


def _latency_lines(allrows: list[dict]) -> list[str]:
    """The latency table (ms): TTFA of both pipelines and each node, p50 and p95."""
    lines = ["", "## Latency (ms)", "", "| measure | p50 | p95 |", "|---|---|---|"]
    ttfa = [x["trace"]["timings_ms"]["ttfa"] for x in allrows]
    base = [x["base"]["ttfa_ms"] for x in allrows]
    lines.append(f"| TTFA, streamed pipeline | {_fmt(pct(ttfa, 50))} | {_fmt(pct(ttfa, 95))} |")
    lines.append(f"| TTFA, sequential baseline | {_fmt(pct(base, 50))} | {_fmt(pct(base, 95))} |")
    nodes = sorted({n for x in allrows for n in x["trace"]["timings_ms"]} - {"ttfa", "total"})
    for n in nodes:
        vals = [x["trace"]["timings_ms"].get(n) for x in allrows]
        lines.append(f"| node {n} | {_fmt(pct(vals, 50))} | {_fmt(pct(vals, 95))} |")
    p50, b50 = pct(ttfa, 50), pct(base, 50)
    if p50 and b50:
        lines += [
            "",
            f"Streamed TTFA p50 / sequential TTFA p50 = {p50 / b50:.2f} (target <= 0.33).",
        ]
    return lines


def _rtf_lines(allrows: list[dict], rss_mb: float | None) -> list[str]:
    """Real-time factors of ASR and TTS, and peak memory."""
    asr_rtf = sum(x["base"]["asr_s"] for x in allrows) / max(
        1e-9, sum(x["duration_s"] for x in allrows)
    )
    tts_rtf = sum(x["base"]["tts_s"] for x in allrows) / max(
        1e-9, sum(x["base"]["speech_s"] for x in allrows)
    )
    return [
        "",
        "## Real-time factor and memory",
        "",
        f"- Unrestricted ASR RTF (compute / audio): {asr_rtf:.3f}",
        f"- TTS RTF (synthesis / speech): {tts_rtf:.3f}",
        f"- Peak RSS of `hub replay --engine pocketsphinx` with Piper: "
        f"{_fmt(rss_mb, ' MB')} (target <= 400 MB)",
        f"- Peak RSS of this bench process: "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB",
        "",
    ]


def update_section(path: Path, suite: str, text: str) -> None:
    """Replace the ``suite`` section of the report at ``path`` (other suites' sections stay)."""
    begin, end = f"<!-- suite:{suite} -->", f"<!-- /suite:{suite} -->"
    block = f"{begin}\n{text.strip()}\n{end}\n"
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\n"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        new = head + block + rest.split(end, 1)[1].lstrip("\n")
    else:
        new = old.rstrip("\n") + "\n\n" + block
    path.write_text(new, encoding="utf-8")


def _command() -> str:
    return ("hub " + " ".join(sys.argv[1:])).strip()


def bench_pipeline(args, settings, folders: list[Path]) -> str:
    """The pipeline suite's report section."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.asr import make_asr_engine
    from hub.core.hub import Hub
    from hub.store.db import Store

    hub = Hub(settings, entry="replay", store=Store(":memory:"), speak=True)
    plain = make_asr_engine(
        dataclasses.replace(settings.asr, restrict=False), settings.home, cache_dir=hub.cache_dir
    )
    hub.engines.warm(["asr", "rules", "tts", "actor"])
    results = [bench_folder(hub, plain, f, args) for f in folders]
    rss = _child_peak_rss_mb(folders[-1])
    text = report(results, _command(), rss, hub.engines.asr().name)
    return text.replace("# Benchmarks", "## Pipeline", 1).replace("\n## ", "\n### ")


def bench_resilience(args, settings, folders: list[Path]) -> str:
    """The resilience suite's report section (hung nodes, CPU stress)."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.audio import load_wav
    from hub.bench import resilience as br

    command_file = (
        next(iter(sorted(folders[0].glob("turn on*.wav"))), None)
        or sorted(folders[0].glob("*.wav"))[0]
    )
    lines = [
        "## Resilience",
        "",
        f"Made by: `{_command()}`",
        "",
        f"### One node hung (`{command_file.name}`, 20 turns each)",
        "",
    ]
    lines += br.hung(settings, load_wav(command_file))
    lines += ["", "### Both cores busy: dynamic vs fixed timeouts", ""]
    lines += br.stress(settings, folders[-1], args.limit)
    return "\n".join(lines)


def bench_soak(args, settings, folders: list[Path]) -> str:
    """The soak suite's report section."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.bench import resilience as br

    return "\n".join(["## Soak", "", f"Made by: `{_command()}`", ""] + br.soak(settings))


def bench_llm(args, settings, folders: list[Path]) -> str:
    """The LLM suite's report section."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.bench.llm import llm_suite

    return "\n".join(
        ["## Local LLM", "", f"Made by: `{_command()}`", ""] + llm_suite(settings, args.limit)
    )


def bench_mqtt(args, settings, folders: list[Path]) -> str:
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.bench.mqtt import bench_mqtt as run

    return run(args, settings, folders)


SUITES = {
    "pipeline": bench_pipeline,
    "resilience": bench_resilience,
    "soak": bench_soak,
    "llm": bench_llm,
    "mqtt": bench_mqtt,
    "fingerprint": bench_fingerprint,
}


def run_bench(args) -> int:
    """``hub bench``: 0 when it ran, 2 when a folder is missing."""
    # lazy: hub --help imports every command's module; this loads only when the command runs
    from hub.settings import load_settings

    folders = [Path(p) for p in args.paths] or default_paths()
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        print(f"hub: no such folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    settings = load_settings(args.config)
    names = list(SUITES) if args.suite == "all" else [args.suite]
    for name in names:
        text = SUITES[name](args, settings, folders)
        print(text)
        if args.write and args.output != "-":
            update_section(Path(args.output), name, text)
    return 0
