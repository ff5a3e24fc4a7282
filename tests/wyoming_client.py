"""A Wyoming test client built only on the ``wyoming`` package (any 1.7-1.10 release).

Run by the tests with the interpreter of each pinned version (``scripts/wyoming-clients.sh``):

    python tests/wyoming_client.py HOST PORT STEP [ARG]

STEP: info | asr WAV | asr_live WAV | tts TEXT | stream | handle TEXT | unknown | wake WAV.
Prints one JSON object. Every read has a timeout (READ_TIMEOUT_S), so a server that holds
an answer shows up as ``"error": "timeout ..."``. Standard library and ``wyoming`` only.
"""

import asyncio
import json
import sys
import time
import wave

import wyoming
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop
from wyoming.wake import Detect, Detection, NotDetected

READ_TIMEOUT_S = 20.0
SAMPLES_PER_CHUNK = 1024
STREAM_PIECES = ["Is the ba", "ck door locked? Ye", "s. The porch li", "ght is on"]


async def read(client, timeout=READ_TIMEOUT_S):
    event = await asyncio.wait_for(client.read_event(), timeout)
    if event is None:
        raise ConnectionError("server closed the connection")
    return event


async def send_wav(client, path):
    with wave.open(path, "rb") as w:
        rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
        await client.write_event(AudioStart(rate=rate, width=width, channels=channels).event())
        while True:
            frames = w.readframes(SAMPLES_PER_CHUNK)
            if not frames:
                break
            await client.write_event(
                AudioChunk(rate=rate, width=width, channels=channels, audio=frames).event()
            )
    await client.write_event(AudioStop().event())


async def info(client, _):
    await client.write_event(Describe().event())
    event = await read(client, timeout=1.0)  # issue 10: info within 1 s
    got = Info.from_event(event)
    return {
        "type": event.type,
        "asr": [p.name for p in got.asr if p.installed],
        "asr_languages": [m.languages for p in got.asr for m in p.models],
        "tts": [p.name for p in got.tts if p.installed],
        "voices": [v.name for p in got.tts for v in p.voices],
        "streaming": [p.supports_synthesize_streaming for p in got.tts],
        "wake": [m.name for p in got.wake for m in p.models],
        "handle": [p.name for p in got.handle if p.installed],
        "home_control": event.data["handle"][0].get("supports_home_control")
        if event.data.get("handle")
        else None,
    }


async def asr(client, path):
    await client.write_event(Transcribe(language="en").event())
    await send_wav(client, path)
    types = []
    while True:
        event = await read(client)
        types.append(event.type)
        if Transcript.is_type(event.type):
            return {"text": Transcript.from_event(event).text, "events": types}


async def collect_audio(client, until):
    """Events until one of type ``until``: counts, samples, format."""
    out = {"starts": 0, "stops": 0, "chunks": 0, "samples": 0, "formats": [], "order": []}
    while True:
        event = await read(client)
        out["order"].append(event.type)
        if AudioStart.is_type(event.type):
            out["starts"] += 1
            start = AudioStart.from_event(event)
            out["formats"].append([start.rate, start.width, start.channels])
        elif AudioChunk.is_type(event.type):
            chunk = AudioChunk.from_event(event)
            out["chunks"] += 1
            out["samples"] += len(chunk.audio) // (chunk.width * chunk.channels)
            out["formats"].append([chunk.rate, chunk.width, chunk.channels])
        elif AudioStop.is_type(event.type):
            out["stops"] += 1
        if event.type == until:
            out["formats"] = sorted({tuple(f) for f in out["formats"]})
            return out


async def tts(client, text):
    await client.write_event(Synthesize(text=text).event())
    result = await collect_audio(client, "audio-stop")
    rate = result["formats"][0][0] if result["formats"] else 0
    result["seconds"] = result["samples"] / rate if rate else 0.0
    return result


async def stream(client, _):
    """The BC-23 (c) sequence; waits for the first audio before sending synthesize-stop."""
    sent = time.monotonic()
    await client.write_event(SynthesizeStart().event())
    for piece in STREAM_PIECES:
        await client.write_event(SynthesizeChunk(text=piece).event())
    first = []
    while True:  # audio of the complete sentences must come before we say stop
        event = await read(client)
        first.append(event.type)
        if AudioChunk.is_type(event.type):
            break
    ttfa = time.monotonic() - sent
    await client.write_event(Synthesize(text="".join(STREAM_PIECES)).event())
    await client.write_event(SynthesizeStop().event())
    result = await collect_audio(client, "synthesize-stopped")
    result["starts"] += first.count("audio-start")
    result["chunks"] += 1
    result["ttfa_s"] = ttfa
    result["audio_before_stop"] = True
    result["last"] = result["order"][-1]
    return result


async def handle(client, text):
    await client.write_event(Transcript(text=text, context={"conversation_id": "test"}).event())
    event = await read(client)
    return {
        "type": event.type,
        "text": event.data.get("text"),
        "handled": Handled.is_type(event.type),
        "not_handled": NotHandled.is_type(event.type),
    }


async def unknown(client, _):
    await client.write_event(Event(type="frobnicate-start"))
    await client.write_event(Ping(text="still there").event())
    event = await read(client)
    return {"type": event.type, "pong": Pong.is_type(event.type), "text": event.data.get("text")}


async def wake(client, path):
    await client.write_event(Detect(names=["okay_nabu"]).event())
    await send_wav(client, path)
    event = await read(client)
    if Detection.is_type(event.type):
        found = Detection.from_event(event)
        return {"type": event.type, "name": found.name, "timestamp": found.timestamp}
    return {"type": event.type, "not_detected": NotDetected.is_type(event.type)}


def speech_end_s(path):
    """Seconds from the start of the 16-bit mono WAV ``path`` to the end of its last 10 ms
    frame louder than RMS 300 (the end of speech)."""
    import array
    import math

    with wave.open(path, "rb") as w:
        rate = w.getframerate()
        samples = array.array("h", w.readframes(w.getnframes()))
    size, end = rate // 100, 0
    for i in range(0, len(samples) - size + 1, size):
        frame = samples[i : i + size]
        if math.sqrt(sum(x * x for x in frame) / size) > 300:
            end = i + size
    return end / rate


async def asr_live(client, path):
    """Send ``path`` then 3 s of silence in real time, like a microphone, and never send
    ``audio-stop`` until the final ``transcript`` came: its text, the events before it and
    how long after the end of speech it came (s)."""
    await client.write_event(Transcribe(language="en").event())
    with wave.open(path, "rb") as w:
        rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
        audio = w.readframes(w.getnframes()) + bytes(width * channels * rate * 3)
    await client.write_event(AudioStart(rate=rate, width=width, channels=channels).event())
    step = SAMPLES_PER_CHUNK * width * channels
    start = time.monotonic()
    events, got = [], None

    async def reader():
        nonlocal got
        while True:
            event = await read(client)
            events.append(event.type)
            if Transcript.is_type(event.type):
                got = (time.monotonic(), Transcript.from_event(event).text)
                return

    task = asyncio.create_task(reader())
    for i in range(0, len(audio), step):
        if task.done():
            break
        await client.write_event(
            AudioChunk(rate=rate, width=width, channels=channels, audio=audio[i : i + step]).event()
        )
        await asyncio.sleep(
            max(0.0, start + (i + step) / (width * channels * rate) - time.monotonic())
        )
    before_stop = task.done()
    await client.write_event(AudioStop().event())
    await asyncio.wait_for(task, READ_TIMEOUT_S)
    return {
        "text": got[1],
        "events": events,
        "before_audio_stop": before_stop,
        "after_speech_s": got[0] - (start + speech_end_s(path)),
    }


STEPS = {
    "info": info,
    "asr": asr,
    "asr_live": asr_live,
    "tts": tts,
    "stream": stream,
    "handle": handle,
    "unknown": unknown,
    "wake": wake,
}


async def main(host, port, step, arg):
    async with AsyncTcpClient(host, int(port)) as client:
        try:
            result = await STEPS[step](client, arg)
        except TimeoutError:
            result = {"error": f"timeout after {READ_TIMEOUT_S} s"}
        except ConnectionError as exc:
            result = {"error": str(exc)}
    result["wyoming"] = getattr(wyoming, "__version__", None)
    return result


if __name__ == "__main__":
    host, port, step = sys.argv[1:4]
    print(json.dumps(asyncio.run(main(host, port, step, sys.argv[4] if len(sys.argv) > 4 else ""))))
