"""The ``hub`` command line as a user runs it: exit codes, one-line errors, JSON lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import wave
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def hub(*args: str, stdin: str | None = None, env: dict | None = None, cwd=None):
    """Run ``python -m hub ARGS`` with a private store; returns the CompletedProcess."""
    full_env = {**os.environ, "HUB_CONFIG": "", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "hub", *args],
        input=stdin,
        text=True,
        capture_output=True,
        env=full_env,
        cwd=cwd or REPO,
        timeout=300,
        check=False,
    )


def lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def write_wav(path: Path, frames: bytes = b"", rate: int = 16000) -> Path:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(frames)
    return path


@pytest.mark.parametrize(
    "command", ["replay", "ask", "say", "run", "doctor", "models", "stats", "bench", "config"]
)
def test_every_command_has_help(command):
    result = hub(command, "--help")
    assert result.returncode == 0 and "usage: hub " + command in result.stdout


def test_ask_stdin_gives_one_json_line_per_utterance():
    result = hub(
        "ask", "--store", ":memory:", "-", stdin="turn on the kitchen light\n\nwhat time is it\n"
    )
    traces = lines(result.stdout)
    assert result.returncode == 0
    assert [t["intent"] for t in traces] == ["HassTurnOn", "HassGetCurrentTime"]


def test_ask_stdin_out_writes_each_answer_to_a_file_of_its_own(tmp_path):
    """``hub ask - --out DIR``: one wav per answer, numbered like its stdin line (a blank
    line keeps the numbering), none overwritten; one TEXT is ``DIR/ask.wav``."""
    said = "turn on the kitchen light\n\nwhat time is it\nturn off the kitchen light\n"
    result = hub("ask", "--store", ":memory:", "--no-llm", "--out", str(tmp_path), "-", stdin=said)
    assert result.returncode == 0, result.stderr
    audio = [t["audio"] for t in lines(result.stdout)]
    assert audio == [str(tmp_path / f"ask-{n:04d}.wav") for n in (1, 3, 4)]
    assert sorted(p.name for p in tmp_path.iterdir()) == [Path(a).name for a in audio]
    frames = []
    for path in audio:
        with wave.open(path) as w:
            frames.append(w.readframes(w.getnframes()))
    # three different answers, all kept (by content: two answers may have the same length)
    assert all(frames) and len(set(frames)) == 3
    one = hub("ask", "--store", ":memory:", "--no-llm", "--out", str(tmp_path), "hello")
    assert one.returncode == 0 and (tmp_path / "ask.wav").is_file()


def test_ask_stdin_skips_binary_and_overlong_lines_with_one_line_each():
    garbage = "\x00\x1b[2J\x07\x10" + "\x7f" * 5
    result = hub(
        "ask",
        "--store",
        ":memory:",
        "--no-llm",
        "-",
        stdin=f"{garbage}\nturn on the kitchen light\n{'lights ' * 300}\n",
    )
    assert [t["intent"] for t in lines(result.stdout)] == ["HassTurnOn"]
    assert result.returncode == 2
    errors = [x for x in result.stderr.splitlines() if x.startswith("hub: line")]
    assert errors[0].startswith("hub: line 1: not text") and "Traceback" not in result.stderr
    assert errors[1].startswith("hub: line 3: too long") and len(errors) == 2


def test_text_problem_takes_any_language_and_refuses_control_characters():
    from hub.intents.utterance import text_problem

    assert text_problem("allume la lumière de la cuisine") is None
    assert text_problem("turn on the kitchen light\t") is None
    assert text_problem("turn\x00on") is not None
    assert text_problem("bad \ufffd byte") is not None


def test_replay_reports_bad_files_and_goes_on(tmp_path):
    (tmp_path / "a_notwav.wav").write_bytes(b"ID3\x03\x00" + b"\x00" * 200)
    (tmp_path / "b_trunc.wav").write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt ")
    write_wav(tmp_path / "c_empty.wav")
    write_wav(tmp_path / "d_silence.wav", b"\x00\x00" * 16000 * 5)
    result = hub("replay", "--store", ":memory:", "--no-audio", str(tmp_path))
    traces = lines(result.stdout)
    assert result.returncode == 2
    assert [t["status"] for t in traces] == ["bad_input", "bad_input", "no_speech", "no_speech"]
    assert "Traceback" not in result.stderr
    assert f"hub: not a RIFF/WAVE file: {tmp_path / 'a_notwav.wav'}" in result.stderr
    assert f"hub: truncated/corrupt WAV header: {tmp_path / 'b_trunc.wav'}" in result.stderr
    assert all(t["response"] == "" and t["audio"] is None for t in traces)


def test_replay_missing_path_is_bad_input(tmp_path):
    result = hub("replay", "--store", ":memory:", str(tmp_path / "nope.wav"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert lines(result.stdout)[0]["status"] == "bad_input"


def test_bad_config_names_the_key(tmp_path):
    cfg = tmp_path / "hub.toml"
    cfg.write_text('[asr]\nnbest = "many"\n')
    result = hub("ask", "--config", str(cfg), "hello")
    assert result.returncode == 2
    assert result.stderr.strip().endswith("asr.nbest: expected an integer, got 'many'")
    cfg.write_text("[asr\n")
    result = hub("ask", "--config", str(cfg), "hello")
    assert result.returncode == 2 and "not valid TOML" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_inject_spec_is_one_line(tmp_path):
    result = hub("ask", "--store", ":memory:", "--inject", "asr=explode", "hi")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "asr=explode" in result.stderr


def test_config_from_env_is_used(tmp_path):
    cfg = tmp_path / "hub.toml"
    cfg.write_text(
        (REPO / "hub/data/home-en.toml").read_text()
        + '\n[store]\npath = "'
        + str(tmp_path / "s.db")
        + '"\n'
    )
    result = hub("ask", "turn on the kitchen light", env={"HUB_CONFIG": str(cfg)})
    assert result.returncode == 0 and (tmp_path / "s.db").exists()


def test_stats_reads_the_journal(tmp_path):
    db = str(tmp_path / "s.db")
    hub("ask", "--store", db, "turn on the kitchen light")
    hub("ask", "--store", db, "blah blah")
    result = hub("stats", "--store", db, "--json")
    summary = json.loads(result.stdout)
    assert summary["turns"] == 2 and summary["status"] == {"ok": 2}
    table = hub("stats", "--store", db, "--since", "7d").stdout
    assert "turns in the last 168 h: 2" in table and "status: ok 2" in table
    bad = hub("stats", "--store", db, "--since", "yesterday")
    assert bad.returncode == 2 and "24h or 7d" in bad.stderr


def test_ask_stdin_every_recording_name_gives_its_intent():
    """Issue 2: ``hub ask -`` fed the shared audio's file names as text (the table is
    hand-written)."""
    from intents.test_intents import TABLE

    result = hub("ask", "--store", ":memory:", "-", stdin="".join(row[0] + "\n" for row in TABLE))
    traces = lines(result.stdout)
    assert result.returncode == 0 and len(traces) == len(TABLE)
    for (text, intent, slots, _), trace in zip(TABLE, traces, strict=True):
        assert trace["transcript"] == text
        if intent is None:
            assert trace["intent"] is None, text
        else:
            assert (trace["intent"], trace["slots"]) == (intent, slots), text
