"""The input device check of ``hub doctor``: what ``hub run`` would open, without opening it.

:func:`probe_input` lists the input devices, picks the one ``[audio] input_device`` names the
way :func:`hub.audio.mic.open_mic` does, and asks PortAudio which of the settings ``hub run``
tries it accepts; a problem comes with a one-line fix.
"""

from __future__ import annotations

from dataclasses import dataclass

from hub.audio.mic import candidates, find_device, import_sounddevice, label
from hub.errors import DeviceUnavailableError
from hub.settings import AudioSettings


@dataclass(frozen=True)
class InputReport:
    """What ``hub run`` would open: for ``hub doctor``.

    Attributes:
        devices: every input device as ``"index: name (N ch, R Hz default)"``.
        chosen: the name of the device ``hub run`` would open, or None.
        accepted: ``"rate Hz/channels ch"`` settings the chosen device accepts, in the order
            ``hub run`` tries them.
        problem: what would make ``hub run`` fail, or None.
        fix: how to fix ``problem`` (one line), or None.
    """

    devices: list[str]
    chosen: str | None
    accepted: list[str]
    problem: str | None
    fix: str | None


def _accepted(sd, info: dict) -> list[str]:
    """The (rate, channels) candidates the device accepts, without opening a stream."""
    out = []
    for rate, channels in candidates(info):
        try:
            sd.check_input_settings(
                device=info["index"], samplerate=rate, channels=channels, dtype="int16"
            )
            out.append(f"{rate} Hz/{channels} ch")
        except (sd.PortAudioError, ValueError):
            continue
    return out


def _inputs(sd) -> tuple[object, list[dict]] | InputReport:
    """``(sounddevice, its input devices, each with its index)``; the report of why they
    cannot be listed instead when PortAudio or the sound server fails."""
    try:
        sd = sd if sd is not None else import_sounddevice()
        devices = [dict(d, index=d.get("index", i)) for i, d in enumerate(sd.query_devices())]
    except (DeviceUnavailableError, OSError) as exc:
        return InputReport(
            [],
            None,
            [],
            f"PortAudio unavailable: {exc}",
            "install libportaudio2 (Debian: apt install libportaudio2)",
        )
    except Exception as exc:
        return InputReport(
            [],
            None,
            [],
            f"cannot list audio devices: {exc}",
            "check the sound server is running (pactl info) or the ALSA card",
        )
    return sd, [d for d in devices if d.get("max_input_channels", 0) > 0]


def probe_input(settings: AudioSettings, *, sd=None) -> InputReport:
    """Check the input device ``hub run`` would open, once, without waiting or opening it.

    Args:
        settings: the ``[audio]`` settings (``input_device``).
        sd: the sounddevice module or a fake (tests).
    """
    name = settings.input_device
    found = _inputs(sd)
    if isinstance(found, InputReport):
        return found
    sd, inputs = found
    listed = [
        f"{d['index']}: {d['name']} ({d['max_input_channels']} ch, "
        f"{int(d.get('default_samplerate') or 0)} Hz default)"
        for d in inputs
    ]
    if not inputs:
        return InputReport(
            listed,
            None,
            [],
            "no audio input devices found",
            "plug in a microphone; with PulseAudio/PipeWire check `pactl info` "
            "and that hub runs in the sound server's user session (user unit)",
        )
    info = find_device(sd, name)
    if info is None:
        return InputReport(
            listed,
            None,
            [],
            f"no input device {label(name)}",
            "set [audio] input_device to a part of one of the names listed",
        )
    accepted = _accepted(sd, info)
    if not accepted:
        return InputReport(
            listed,
            info["name"],
            [],
            f"{info['name']!r} accepts none of "
            f"{', '.join(f'{r} Hz/{c} ch' for r, c in candidates(info))}",
            "pick its plughw: or pulse device so ALSA converts the format",
        )
    return InputReport(listed, info["name"], accepted, None, None)
