"""The one audio format inside the hub: what every engine takes and every turn carries.

int16 little-endian mono PCM at 16 kHz: what the microphone, wav files and Wyoming clients are
converted to (:mod:`hub.audio.pcm`), what the recognizers, the wake word, the fingerprint and
the echo gate read. Piper's own output rate is the voice's (``engine.rate``), not this one.
"""

from __future__ import annotations

RATE = 16000
"""Samples per second."""
WIDTH = 2
"""Bytes per sample (int16)."""
CHANNELS = 1
"""Mono."""
BYTES_PER_SECOND = RATE * WIDTH * CHANNELS
"""32000: bytes of one second of audio."""
