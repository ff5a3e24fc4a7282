"""Turns from audio files: one file through the hub (as recorded, or fed at real speed into a
streaming recognizer), shared by ``hub replay`` and the benchmarks. The command-line side
(paths, store, settings from arguments) is :mod:`hub.cli.args`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from hub.audio import frames, load_wav, speech_present
from hub.errors import BadInputError, HubError
from hub.trace import bad_input_trace


def replay_file(
    hub, path: Path, out_dir: Path | None, realtime: bool, out_name: str | None = None
) -> dict:
    """One file through the hub: its trace (``bad_input`` when it cannot be read)."""
    out_name = out_name or f"{path.stem}.wav"
    try:
        audio = load_wav(path)
    except BadInputError as exc:
        print(f"hub: {exc.message}", file=sys.stderr)
        return bad_input_trace(str(path), exc.message)
    out = str(out_dir / out_name) if out_dir is not None else None
    if not speech_present(audio):
        print(f"hub: no speech in {path}", file=sys.stderr)
        return hub.turn_audio(audio.samples, file=str(path), out_path=out, silent=True)
    if realtime:
        return replay_realtime(hub, audio, str(path), out)
    return hub.turn_audio(audio.samples, file=str(path), out_path=out)


def replay_realtime(hub, audio, file: str, out: str | None) -> dict:
    """Feed ``audio`` at real speed into a streaming recognizer, then finish the turn.

    TTFA counts from the moment the last frame was fed, as with a microphone.
    """
    try:
        stream = hub.engines.asr().stream()
    except HubError:
        stream = None  # the asr node will fail over in the graph
    start = time.monotonic()
    fed = 0.0
    for frame in frames(audio, frame_ms=30):
        if stream is not None:
            stream.accept(frame)
        fed += len(frame) / 2 / audio.rate
        delay = start + fed - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return hub.turn_audio(
        audio.samples, file=file, out_path=out, asr_stream=stream, started=time.monotonic()
    )
