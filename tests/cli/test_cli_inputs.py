"""The breaker's input findings through the real ``hub`` process: each bad input is one clear
line on stderr with the documented exit code (README "Exit codes"), never a hang or a
traceback, and the other inputs are still handled.

1. a path that is not a regular file (``/dev/zero``, a FIFO, a folder holding one) was read
   without limit or hung ``hub replay``; the config, ``--expect`` and the other files a user
   names are refused the same way;
5. small ones: undecodable bytes on ``hub ask -``'s stdin, a UTF-8 byte-order mark before the
   config, ``hub stats --since -1h``, ``--score`` with ``--expect``, ``.pcm`` files left out of
   a folder's listing, and ``hub wyoming`` not saying "stopped by SIGTERM" as ``hub run`` does.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import wave
from pathlib import Path

import pytest

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
GUARD_S = 300.0
"""Longest a command may take (a guard against a hang, not a measurement)."""


def hub(*args: str, stdin: bytes | None = None, stdin_file=None) -> subprocess.CompletedProcess:
    """``python -m hub ARGS`` (the built-in config), ``stdin`` its input or ``stdin_file`` (an
    open file) its stdin; stdout and stderr as text."""
    result = subprocess.run(
        [sys.executable, "-m", "hub", *args],
        input=stdin,
        stdin=stdin_file,
        capture_output=True,
        env={**os.environ, "HUB_CONFIG": ""},
        cwd=ROOT,
        timeout=GUARD_S,
        check=False,
    )
    result.stdout = result.stdout.decode("utf-8", "replace")
    result.stderr = result.stderr.decode("utf-8", "replace")
    return result


def _silence(path: Path) -> Path:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"\0\0" * 8000)
    return path


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """One ``hub replay`` of ``/dev/zero``, a FIFO and a folder holding a FIFO, a link to
    ``/dev/zero``, a headerless ``.pcm`` capture and a silent WAV."""
    tmp = tmp_path_factory.mktemp("replay")
    fifo = tmp / "f.wav"
    os.mkfifo(fifo)
    folder = tmp / "clips"
    folder.mkdir()
    os.mkfifo(folder / "b_pipe.wav")
    (folder / "c_zero.wav").symlink_to("/dev/zero")
    (folder / "d_capture.pcm").write_bytes(b"\0\1" * 1000)
    _silence(folder / "a_quiet.wav")
    result = hub("replay", "--store", ":memory:", "--no-audio", "/dev/zero", str(fifo), str(folder))
    return result, tmp


def test_finding1_replay_refuses_what_is_not_a_regular_file_and_goes_on(replayed):
    result, tmp = replayed
    traces = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 2 and "Traceback" not in result.stderr
    by_file = {t["file"]: t["status"] for t in traces}
    assert by_file[str(tmp / "clips" / "a_quiet.wav")] == "no_speech"  # the others are handled
    for path in (
        "/dev/zero",
        tmp / "f.wav",
        tmp / "clips" / "b_pipe.wav",
        tmp / "clips/c_zero.wav",
    ):
        assert by_file[str(path)] == "bad_input"
        assert f"hub: not a regular file: {path}" in result.stderr.splitlines()


def test_finding5_a_folder_lists_pcm_captures_as_unsupported(replayed):
    result, tmp = replayed
    pcm = str(tmp / "clips" / "d_capture.pcm")
    [trace] = [json.loads(x) for x in result.stdout.splitlines() if json.loads(x)["file"] == pcm]
    assert trace["status"] == "bad_input"
    said = [x for x in result.stderr.splitlines() if pcm in x]
    assert said == [
        f"hub: unsupported: {pcm}: headerless PCM (its rate and sample format are not in the "
        "file); only WAV is read (convert it: sox -t raw -r RATE -e signed -b 16 -c 1 IN OUT.wav)"
    ]


def test_finding1_config_and_expect_that_are_no_regular_file_are_one_line(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for config in (str(fifo), "/dev/zero"):
        result = hub("config", "check", "--config", config)
        assert result.returncode == 2
        assert result.stderr.splitlines() == [
            f"hub: config: cannot read config {config}: not a regular file"
        ]
    wav = _silence(tmp_path / "a.wav")
    result = hub("replay", "--store", ":memory:", "--expect", str(fifo), str(wav))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"hub: --expect {fifo}: not a regular file"]


def test_finding5_ask_skips_a_line_of_undecodable_bytes_with_one_line():
    result = hub(
        "ask",
        "--store",
        ":memory:",
        "--no-llm",
        "-",
        stdin=b"\xff\xfe bad utf8\nturn on the kitchen light\n",
    )
    assert [json.loads(x)["intent"] for x in result.stdout.splitlines()] == ["HassTurnOn"]
    assert result.returncode == 2
    skipped = [x for x in result.stderr.splitlines() if x.startswith("hub: line")]
    assert skipped == ["hub: line 1: not text (2 control characters or undecodable bytes)"]


def test_finding5_config_with_a_utf8_byte_order_mark_is_read(tmp_path):
    config = tmp_path / "hub.toml"
    home = (ROOT / "hub" / "data" / "home-en.toml").read_bytes()
    config.write_bytes(b"\xef\xbb\xbf" + home)
    result = hub("config", "check", "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [f"hub: config: {config}: ok"]


def test_finding5_stats_since_says_what_it_takes():
    result = hub("stats", "--store", ":memory:", "--since", "-1h")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "hub stats: error: argument --since: expected an age: a positive number and a unit "
        "(s, m, h, d or w), e.g. 24h or 7d; got '-1h'"
    )


def test_finding5_replay_refuses_score_with_expect(tmp_path):
    result = hub("replay", "--score", "--expect", str(tmp_path / "x.tsv"), str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "hub replay: error: argument --expect: not allowed with argument --score"
    )


def _stopped_by_sigterm(argv: list[str], tmp_path: Path, config: str = "") -> str:
    """Start a daemon with a notify socket, SIGTERM it once it said READY=1; its stderr."""
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(GUARD_S)
    env = {**os.environ, "HUB_CONFIG": config, "NOTIFY_SOCKET": str(tmp_path / "notify")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub", *argv, "-v", "--store", ":memory:"],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while b"READY=1" not in notify.recv(4096).split(b"\n"):
            pass  # EXTEND_TIMEOUT_USEC, STATUS=loading models, ...
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=GUARD_S)
    finally:
        notify.close()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "Traceback" not in err
    return err


def test_finding5_hub_wyoming_and_hub_serve_say_stopped_by_sigterm_as_hub_run(tmp_path):
    wyoming = tmp_path / "wyoming"
    wyoming.mkdir()
    err = _stopped_by_sigterm(
        ["wyoming", "--uri", f"unix://{tmp_path / 'hub.sock'}", "--no-zeroconf", "--no-llm"],
        wyoming,
    )
    assert "hub: INFO hub.wyoming: stopped by SIGTERM" in err.splitlines()
    serve = tmp_path / "serve"
    serve.mkdir()
    config = serve / "hub.toml"
    home = (ROOT / "hub" / "data" / "home-en.toml").read_text(encoding="utf-8")
    satellite = '\n[[satellites]]\nname = "Hall"\nuri = "tcp://127.0.0.1:9"\narea = "Kitchen"\n'
    config.write_text(home + satellite, encoding="utf-8")
    err = _stopped_by_sigterm(["serve"], serve, str(config))
    assert "hub: INFO hub.satellites: stopped by SIGTERM" in err.splitlines()


def test_newuser_hub_ask_stdin_without_line_ends_is_refused_not_read_into_memory():
    """The new user's finding: ``hub ask - < /dev/zero`` grew 320 MB a second until the kernel
    killed it (a line was read whole before its length was checked). Now a line is kept only to
    its cap, a longer one is read on to its end in pieces, and an input with no line end in
    64 MiB stops: one line on stderr, exit 2."""
    with open("/dev/zero", "rb") as zero:
        done = hub("ask", "--no-llm", "--store", ":memory:", "-", stdin_file=zero)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "hub: line 1: no line end within 64 MiB: not lines of text (binary input); "
        "the rest of stdin is not read"
    ]
    lines = b"turn on the tv\n" + b"a" * 3_000_000 + b"\nturn off the tv\n"
    done = hub("ask", "--no-llm", "--store", ":memory:", "-", stdin=lines)
    assert done.returncode == 2
    assert [json.loads(x)["transcript"] for x in done.stdout.splitlines()] == [
        "turn on the tv",
        "turn off the tv",
    ]
    assert done.stderr.splitlines() == [
        "hub: line 2: too long (3000001 bytes; at most 1000 characters)"
    ]


def test_newuser_zigbee2mqtt_import_without_a_broker_names_the_key():
    """The new user's finding: with no ``[mqtt] host``, ``hub home import --from zigbee2mqtt``
    printed "internal error: ValueError: Invalid host." (paho's) and exited 1."""
    done = hub("home", "import", "--from", "zigbee2mqtt")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        'hub: config: mqtt.host: not set (the broker Zigbee2MQTT publishes to, e.g. "localhost")'
    ]
