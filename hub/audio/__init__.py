"""Audio input: any WAV (or explicit raw PCM) to 16 kHz mono int16 for ASR.

``load_wav`` parses RIFF chunks itself (:mod:`hub.audio.riff`), decodes 8/16/24/32-bit
integer and 32/64-bit float samples (:mod:`hub.audio.pcm`), downmixes and resamples with
soxr, and records every repair in ``Audio.warnings``. ``frames`` cuts the result for
streaming ASR; ``speech_present`` is the cheap no-speech check. Cases BC-01, BC-02, BC-04,
BC-05 of ``shared/cases.md``.
"""

from hub.audio.format import RATE
from hub.audio.frames import frame_levels, frames, speech_present
from hub.audio.load import Audio, load_wav, read_pcm
from hub.audio.pcm import downmix, to_mono_16k

__all__ = [
    "RATE",
    "Audio",
    "downmix",
    "frame_levels",
    "frames",
    "load_wav",
    "read_pcm",
    "speech_present",
    "to_mono_16k",
]
