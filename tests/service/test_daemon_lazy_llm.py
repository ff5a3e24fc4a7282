"""``hub run`` with the LLM resident only while used (``[llm] keep_loaded_s``), as a process.

The daemon builds the prompt cache at start and frees the model; a question the rules miss
(sent as a Wyoming ``transcript`` to the daemon's own server, so the whole turn graph runs in
the daemon) loads it again and is answered by the LLM; ``keep_loaded_s`` later it is freed
again; a voice command the grammar-bound recognizer hears does not load it; SIGTERM then
ends the process cleanly (llama.cpp stopped before exit).
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import numpy as np

from daemon_live import Daemon, Feeder, server, write_config  # noqa: F401 (server: a fixture)
from fakes import wait_for
from live_audio import silence, synth
from wyoming_support import free_port

START_S = 300
"""Longest start-up accepted: the prompt cache is built cold (three prompt prefixes) on a busy
2-core machine."""


async def handle(port: int, text: str) -> tuple[str, str]:
    """Send ``text`` as a Wyoming transcript; the reply's type and text."""
    from wyoming.asr import Transcript
    from wyoming.client import AsyncTcpClient

    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Transcript(text=text).event())
        event = await asyncio.wait_for(client.read_event(), 60)
    return event.type, (event.data or {}).get("text", "")


def cold_llm_cache(root: Path) -> Path:
    """A cache folder without the LLM's prompt cache (built at start), sharing the others
    (the recognizer's grammar takes minutes to build)."""
    from hub.paths import cache_dir

    (root / "hub").mkdir(parents=True)
    for part in cache_dir().iterdir() if cache_dir().is_dir() else ():
        if part.name != "llm":
            (root / "hub" / part.name).symlink_to(part, target_is_directory=part.is_dir())
    return root


def count(daemon: Daemon, text: str) -> int:
    return sum(text in line for line in list(daemon.stderr))


def test_daemon_frees_the_llm_after_start_and_a_question_loads_it_again(server, tmp_path):
    port = free_port()
    config = write_config(
        tmp_path / "hub.toml",
        f'[llm]\nkeep_loaded_s = 2.0\n[wyoming]\nuri = "tcp://127.0.0.1:{port}"\n'
        "zeroconf = false\n",
    )
    daemon = Daemon(
        config,
        server,
        tmp_path / "hub.db",
        extra_env={"XDG_CACHE_HOME": str(cold_llm_cache(tmp_path / "cache"))},
    )
    feeder = None
    try:
        assert daemon.wait_log("state: listening", START_S), daemon.stderr[-20:]
        assert daemon.wait_log("llm released", 10), daemon.stderr[-20:]
        assert daemon.wait_log("wyoming server listening", 30), daemon.stderr[-20:]
        assert list((tmp_path / "cache" / "hub" / "llm").glob("prefix-*.state"))
        assert count(daemon, "llm loaded in") == 0
        kind, text = asyncio.run(handle(port, "what is the capital of France"))
        # the answer itself (or, on a very busy machine, the LLM's timeout) is not the point:
        # the question reached the LLM, which was loaded for it
        assert kind in ("handled", "not-handled") and text, (kind, text)
        assert count(daemon, "llm loaded in") == 1, "\n".join(daemon.stderr[-40:])
        # freed again keep_loaded_s after the turn (a timed-out generation first ends)
        assert wait_for(lambda: count(daemon, "llm released") == 2, 60), daemon.stderr[-20:]
        # a voice command (grammar-bound recognizer: the rules answer it) does not load it
        feeder = Feeder(server["HUB_TEST_MIC_FIFO"])
        feeder.say(
            np.concatenate(
                [synth("okay nabu"), silence(0.5), synth("turn on the kitchen light"), silence(1.5)]
            )
        )
        assert daemon.wait_log("utterance of", 60), daemon.stderr[-20:]
        listening = count(daemon, "state: listening")
        assert wait_for(lambda: count(daemon, "state: listening") > listening, 60), daemon.stderr[
            -20:
        ]  # the turn ended
        assert not wait_for(lambda: count(daemon, "llm loaded in") > 1, 5), daemon.stderr[-20:]
        code = daemon.stop(signal.SIGTERM)
    finally:
        daemon.stop(signal.SIGKILL)
        if feeder is not None:
            feeder.close()
    assert code == 0, daemon.stderr[-20:]
    text = "\n".join(daemon.stderr)
    for bad in ("Traceback", "terminate called", "Segmentation", "Fatal Python", "in time"):
        assert bad not in text, text[-3000:]
