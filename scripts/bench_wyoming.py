"""Benchmark the hub's Wyoming server as a client measures it (issue 10, BENCHMARKS.md).

    .venv/bin/python scripts/bench_wyoming.py [--rounds N] [--clients N]

Starts the server in this process on 127.0.0.1 (engines loaded as ``hub wyoming`` does, no
LLM), makes "turn on the TV" with the hub's Piper voice, then measures with the ``wyoming``
client: (1) one client alone, then N clients at once, each doing what Home Assistant does for
one command: transcribe (audio sent as fast as possible in 1024-sample chunks) -> handle
("turn on the standing light") -> synthesize the answer; total latency p50/p95 per setting;
(2) time to first audio of streaming TTS (from ``synthesize-start`` sent to the first
``audio-chunk``) and of plain ``synthesize``; (3) ASR real-time factor: seconds from the first
audio chunk sent to the ``transcript``, over the audio's duration. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from hub.resilience.percentile import percentile

from wyoming_support import Server, free_port, make_server_hub, read_until, say

WAIT_S = 120.0
ANSWER = "Is the back door locked? Yes. The porch light is on."


async def transcribe(port: int, pcm: bytes) -> tuple[str, float]:
    async with AsyncTcpClient("127.0.0.1", port) as client:
        start = time.monotonic()
        await client.write_event(Transcribe(language="en").event())
        await client.write_event(AudioStart(rate=16000, width=2, channels=1).event())
        for i in range(0, len(pcm), 2048):
            await client.write_event(
                AudioChunk(rate=16000, width=2, channels=1, audio=pcm[i : i + 2048]).event()
            )
        await client.write_event(AudioStop().event())
        text = (await read_until(client, "transcript", WAIT_S))[-1].data["text"]
        return text, time.monotonic() - start


async def handle(port: int, cid: str) -> str:
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(
            Transcript(text="turn on the standing light", context={"conversation_id": cid}).event()
        )
        return (await read_until(client, "handled", WAIT_S))[-1].data["text"]


async def synthesize(port: int, text: str) -> float:
    """Seconds to the first audio chunk of a plain synthesize (reads to audio-stop)."""
    async with AsyncTcpClient("127.0.0.1", port) as client:
        start = time.monotonic()
        await client.write_event(Synthesize(text=text).event())
        first = None
        while True:
            event = await asyncio.wait_for(client.read_event(), WAIT_S)
            if event.type == "audio-chunk" and first is None:
                first = time.monotonic() - start
            if event.type == "audio-stop":
                return first


async def stream_ttfa(port: int) -> float:
    pieces = ["Is the ba", "ck door locked? Ye", "s. The porch li", "ght is on"]
    async with AsyncTcpClient("127.0.0.1", port) as client:
        start = time.monotonic()
        await client.write_event(SynthesizeStart().event())
        for piece in pieces:
            await client.write_event(SynthesizeChunk(text=piece).event())
        await read_until(client, "audio-chunk", WAIT_S)
        ttfa = time.monotonic() - start
        await client.write_event(Synthesize(text="".join(pieces)).event())
        await client.write_event(SynthesizeStop().event())
        await read_until(client, "synthesize-stopped", WAIT_S)
        return ttfa


async def command(port: int, pcm: bytes, cid: str) -> tuple[float, float]:
    """One Home Assistant command: total seconds and the ASR part."""
    start = time.monotonic()
    text, asr_s = await transcribe(port, pcm)
    assert text == "turn on the tv", text
    answer = await handle(port, cid)
    await synthesize(port, answer)
    return time.monotonic() - start, asr_s


def row(name: str, values: list[float], scale: float = 1000.0, unit: str = "ms") -> str:
    p50, p95 = percentile(values, 50), percentile(values, 95)
    digits = 0 if unit == "ms" else 2
    return (
        f"| {name} | {len(values)} | {p50 * scale:.{digits}f} {unit} "
        f"| {p95 * scale:.{digits}f} {unit} |"
    )


async def bench(port: int, pcm: bytes, rounds: int, clients: int) -> list[str]:
    audio_s = len(pcm) / 32000
    await command(port, pcm, "warmup")
    alone = [await command(port, pcm, f"alone-{i}") for i in range(rounds)]
    crowd = []
    for r in range(rounds):
        crowd += await asyncio.gather(*(command(port, pcm, f"c{r}-{i}") for i in range(clients)))
    plain = [await synthesize(port, ANSWER) for _ in range(rounds)]
    streamed = [await stream_ttfa(port) for _ in range(rounds)]
    rtf = [a for _, a in alone]
    return [
        "| measure | n | p50 | p95 |",
        "|---|---|---|---|",
        row("one client alone: transcribe + handle + synthesize", [t for t, _ in alone]),
        row(f"{clients} clients at once: transcribe + handle + synthesize", [t for t, _ in crowd]),
        row("streaming TTS time to first audio (synthesize-start -> first chunk)", streamed),
        row("plain synthesize time to first audio", plain),
        row(
            f"ASR real-time factor (first chunk -> transcript / {audio_s:.2f} s audio)",
            [a / audio_s for a in rtf],
            1.0,
            "x RTF",
        ),
        row(
            f"ASR real-time factor with {clients} clients at once",
            [a / audio_s for _, a in crowd],
            1.0,
            "x RTF",
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clients", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wav = say("turn on the TV", Path(tmp) / "tv.wav")
        with wave.open(str(wav)) as w:
            pcm = w.readframes(w.getnframes())
    srv = Server(make_server_hub(), free_port())
    try:
        lines = asyncio.run(bench(srv.port, pcm, args.rounds, args.clients))
    finally:
        srv.stop()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
