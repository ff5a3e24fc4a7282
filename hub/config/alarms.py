"""The ``[alarms]`` section of the settings (:class:`hub.settings.Settings` ``.alarms``):
how alarms and reminders ring and when the hub trusts its clock (:mod:`hub.act.alarms`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field
from pydantic.dataclasses import dataclass

_CONFIG = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)


@dataclass(frozen=True, config=_CONFIG)
class AlarmSettings:
    """Alarms and reminders."""

    ring_s: Annotated[float, Field(ge=1, le=3600)] = 600.0
    """An alarm rings until stopped, at most this many seconds; then it is reported missed."""
    ring_every_s: Annotated[float, Field(ge=1, le=600)] = 8.0
    """Seconds from the start of one ring of an alarm to the start of the next."""
    grace_s: Annotated[float, Field(ge=0, le=86400)] = 300.0
    """An alarm or reminder due while the hub was off still rings if late by less than this
    (seconds); else it is reported missed."""
    snooze_min: Annotated[float, Field(ge=1, le=120)] = 10.0
    """"snooze" without a length snoozes the ringing alarm this many minutes."""
    clock_check: Literal["adjtimex", "timedatectl", "off"] = "adjtimex"
    """How the hub knows its clock is synchronized (clock-time alarms are refused until it is);
    "off" trusts the clock."""
