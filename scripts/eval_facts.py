"""Fact questions through the real graph (LLM on), typed and synthesized: the BENCHMARKS.md table.

    python scripts/eval_facts.py [--questions tests/data/fact_questions.toml] [--no-audio]
    python scripts/eval_facts.py --changing [--hub-root DIR] [--no-audio]

``--changing``: the questions of ``hub/bench/data/changing_questions.toml`` (facts that change
over time, and stable ones) typed through ``hub ask -``, and those marked ``audio = true``
spoken (Piper -> ``hub replay``: the home's grammar, then the open-vocabulary second pass),
judged by
:func:`hub.bench.changing.judge`; ``--hub-root`` runs another checkout's hub (the code before
a change, e.g. ``git archive main | tar -x -C /tmp/before``) with this one's questions and judge.

Typed: every question through ``hub ask -`` (one process per home, the bundled SmolLM2 on).
Voice: the questions marked ``audio = true`` synthesized with ``hub say`` (Piper) and run
through ``hub replay``. Each answer is judged by :func:`hub.bench.fact_judge.judge` against the
clock at the time of the answer and the home's states. Prints a markdown table and the rows
that were not right.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hub.bench import changing  # noqa: E402
from hub.bench.fact_judge import judge  # noqa: E402
from hub.home import Home  # noqa: E402
from hub.settings import load_settings  # noqa: E402

BARE_DROP = ("weather", "climate")


def write_configs(folder: Path) -> dict[str, Path]:
    """The sample home's config, and the "bare" one without weather, climate, humidity."""
    text = (ROOT / "hub" / "data" / "home-en.toml").read_text(encoding="utf-8")
    sample = folder / "sample.toml"
    sample.write_text(text, encoding="utf-8")
    blocks = text.split("[[home.entities]]")
    kept = [
        b
        for b in blocks[1:]
        if not any(f'domain = "{d}"' in b for d in BARE_DROP) and "Humidity" not in b
    ]
    bare = folder / "bare.toml"
    bare.write_text("[[home.entities]]".join([blocks[0], *kept]), encoding="utf-8")
    return {"sample": sample, "bare": bare}


HUB_ROOT = [ROOT]
"""The checkout whose hub the questions run through (``--hub-root``)."""


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HUB_ROOT[0]) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def ask_all(questions: list[str], config: Path) -> list[tuple[dict, datetime]]:
    """``hub ask -`` over ``questions``: (trace, time the line arrived) per question."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub", "ask", "--config", str(config), "--store", ":memory:", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=HUB_ROOT[0],
    )
    proc.stdin.write("".join(q + "\n" for q in questions))
    proc.stdin.close()
    out = [(json.loads(line), datetime.now()) for line in proc.stdout]
    proc.wait()
    return out


def replay_all(rows: list[dict], config: Path, folder: Path) -> list[tuple[dict, datetime]]:
    """Each question synthesized by ``hub say`` and run through ``hub replay``."""
    wavs = folder / "wavs"
    wavs.mkdir(exist_ok=True)
    for i, row in enumerate(rows):
        subprocess.run(
            [sys.executable, "-m", "hub", "say", row["q"], "--out", str(wavs / f"{i:02d}.wav")],
            check=True,
            env=_env(),
            cwd=HUB_ROOT[0],
            stdout=subprocess.DEVNULL,
        )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hub",
            "replay",
            "--config",
            str(config),
            "--store",
            ":memory:",
            "--no-audio",
            str(wavs),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=HUB_ROOT[0],
    )
    out = [(json.loads(line), datetime.now()) for line in proc.stdout]
    proc.wait()
    return out


def judged(rows, results, homes) -> list[tuple[dict, dict, str]]:
    return [
        (row, trace, judge(trace["response"], row, homes[row.get("home", "sample")], now))
        for row, (trace, now) in zip(rows, results, strict=True)
    ]


def table(name: str, results: list[tuple[dict, dict, str]]) -> str:
    n = len(results)
    count = {k: sum(1 for *_, v in results if v == k) for k in ("right", "made_up", "wrong")}
    return (
        f"| {name} | {n} | {count['right']} ({100 * count['right'] / n:.0f}%) | "
        f"{count['made_up']} | {count['wrong']} |"
    )


def changing_main(args) -> int:
    """The ``--changing`` table (see the module doc)."""
    rows = changing.rows()
    label = f"`{HUB_ROOT[0].name}`" if args.hub_root else "this checkout"
    with tempfile.TemporaryDirectory() as tmp:
        config = write_configs(Path(tmp))["sample"]
        typed = ask_all([r["q"] for r in rows], config)
        results = [
            (r, changing.judge(t["response"], r)) for r, (t, _) in zip(rows, typed, strict=True)
        ]
        spoken_rows = [r for r in rows if r.get("audio")]
        spoken = []
        if spoken_rows and not args.no_audio:
            heard = replay_all(spoken_rows, config, Path(tmp))  # grammar, then Whisper
            spoken = [
                (r, changing.judge(t["response"], r))
                for r, (t, _) in zip(spoken_rows, heard, strict=True)
            ]
            typed += heard
    print(changing.TABLE_HEAD)
    print("\n".join(changing.table(results, f"{label}, typed (`hub ask -`)")))
    if spoken:
        print("\n".join(changing.table(spoken, f"{label}, spoken (`hub replay`)")))
    everyone = [*rows, *(spoken_rows if spoken else [])]
    for row, (trace, _) in zip(everyone, typed, strict=True):
        verdict = changing.judge(trace["response"], row)
        if verdict in ("claim", "wrong", "out_of_date", "refused"):
            print(
                f"- {verdict}: {row['q']!r} heard {trace['transcript']!r} ({trace['source']}) -> "
                f"{trace['response']!r}",
                file=sys.stderr,
            )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", default=str(ROOT / "tests" / "data" / "fact_questions.toml"))
    ap.add_argument("--no-audio", action="store_true")
    ap.add_argument(
        "--open-asr",
        action="store_true",
        help="voice: recognize without the home's grammar ([asr] restrict = false)",
    )
    ap.add_argument("--no-typed", action="store_true", help="voice only")
    ap.add_argument("--changing", action="store_true", help="facts that change over time")
    ap.add_argument("--hub-root", help="run the hub of another checkout (--changing)")
    args = ap.parse_args()
    if args.hub_root:
        HUB_ROOT[0] = Path(args.hub_root).resolve()
    if args.changing:
        return changing_main(args)
    rows = tomllib.loads(Path(args.questions).read_text(encoding="utf-8"))["q"]
    with tempfile.TemporaryDirectory() as tmp:
        configs = write_configs(Path(tmp))
        homes = {k: Home.from_settings(load_settings(str(p)).home) for k, p in configs.items()}
        typed = []
        for variant, config in ({} if args.no_typed else configs).items():
            mine = [r for r in rows if r.get("home", "sample") == variant]
            typed += judged(mine, ask_all([r["q"] for r in mine], config), homes)
        spoken = []
        if not args.no_audio:
            mine = [r for r in rows if r.get("audio") and r.get("home", "sample") == "sample"]
            voice = configs["sample"]
            if args.open_asr:
                voice = Path(tmp) / "open.toml"
                voice.write_text(configs["sample"].read_text() + "\n[asr]\nrestrict = false\n")
            spoken = judged(mine, replay_all(mine, voice, Path(tmp)), homes)
    print("| input | questions | right | made up | wrong |\n|---|---|---|---|---|")
    if typed:
        print(table("typed (`hub ask -`, LLM on)", typed))
    if spoken:
        grammar = "open recognizer" if args.open_asr else "home grammar"
        print(table(f"voice (Piper -> `hub replay`, {grammar}, LLM on)", spoken))
    for how, results in (("typed", typed), ("voice", spoken)):
        for row, trace, verdict in results:
            if verdict != "right":
                print(
                    f"- {how} {verdict}: {row['q']!r} heard {trace['transcript']!r} -> "
                    f"{trace['response']!r}",
                    file=sys.stderr,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
